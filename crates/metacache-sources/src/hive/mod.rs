//! The Hive connector: Hive-style warehouses (a metastore, `k=v` partition directories, data
//! files) read through the six `hive` caches and the `default.schema` cache of a catalog.
//!
//! # How a question becomes loads
//! - schema → `schema` ← `hive-table` ← metastore
//! - partitions → `hive-partition-view` ← `hive-partition-names` ← metastore directory walk;
//!   each selected partition → `hive-partition` (its values and location)
//! - files → partitions as above, then `hive-file` per partition directory ← one listing
//! - column statistics → `hive-column-stats` per column ← the table's statistics file
//!
//! Database and table name lists are not cached (§6 has no entry for them): each `SHOW` asks
//! the metastore, one listing each.
//!
//! # Invariants
//! - Every value reaches a caller through the catalog's cache of its entry, or, when a rule
//!   leaves that cache out, is loaded and handed out detached (charged nothing).
//! - Keys carry database and table, so `REFRESH TABLE` removes every value of the table and
//!   fences its loads in flight.

#[cfg(feature = "hms")]
mod convert;
#[cfg(feature = "hms")]
pub mod events;
#[cfg(feature = "hms")]
pub mod hms;
mod metastore;
pub mod names;
#[cfg(feature = "hms")]
pub mod thrift;
mod values;

use std::sync::Arc;

use async_trait::async_trait;
use futures::{StreamExt, TryStreamExt};
use metacache_cache::Cached;
use metacache_catalog::{CacheId, Catalog, TableKey};
use metacache_engines::builtin::{default, hive};
use object_store::ObjectStore as _;

pub use metastore::{FileMetastore, Metastore, STATS_FILE, TABLE_FILE};
// The directory walks other connectors share (Paimon, Iceberg directory catalogs, Lance).
#[cfg(any(feature = "iceberg", feature = "lance"))]
pub(crate) use metastore::subdirectories;
#[cfg(feature = "paimon")]
pub(crate) use metastore::{database_dirs, table_dirs};
pub use values::{
    ColumnKey, ColumnStatistics, HivePartition, HiveTable, LocationKey, PartitionKey,
    PartitionNames, PartitionView,
};

use crate::connector::{Connector, PartitionFilter, through};
use crate::warehouse::Warehouse;
use crate::{
    DataFile, Error, FileListing, PartitionFiles, PartitionInfo, Result, TableInfo, TableSchema,
};

/// `default.schema`.
pub const SCHEMA: CacheId<TableKey, TableSchema> =
    CacheId::new(metacache_engines::DEFAULT_ENGINE, default::SCHEMA);
/// `hive-table`.
pub const TABLE: CacheId<TableKey, HiveTable> = CacheId::new("hive", hive::TABLE);
/// `hive-partition-names`.
pub const PARTITION_NAMES: CacheId<TableKey, PartitionNames> =
    CacheId::new("hive", hive::PARTITION_NAMES);
/// `hive-partition`.
pub const PARTITION: CacheId<PartitionKey, HivePartition> = CacheId::new("hive", hive::PARTITION);
/// `hive-column-stats`.
pub const COLUMN_STATS: CacheId<ColumnKey, ColumnStatistics> =
    CacheId::new("hive", hive::COLUMN_STATS);
/// `hive-file`.
pub const FILE: CacheId<LocationKey, FileListing> = CacheId::new("hive", hive::FILE);
/// `hive-partition-view`.
pub const PARTITION_VIEW: CacheId<TableKey, PartitionView> =
    CacheId::new("hive", hive::PARTITION_VIEW);

/// File listings a planning request keeps in flight at once.
const FILE_CONCURRENCY: usize = 16;
/// Partition objects a planning request resolves at once: a Thrift metastore answers the
/// lookups in flight together with one `get_partitions_by_names` call.
const PARTITION_CONCURRENCY: usize = 256;

/// A Hive catalog's connector.
pub struct HiveConnector {
    catalog: Arc<Catalog>,
    warehouse: Warehouse,
    metastore: Arc<dyn Metastore>,
    /// The engine whose caches hold partition names, partitions and column statistics: `hive`,
    /// or `hudi` for the Hudi tables of a metastore (table objects, file listings and partition
    /// views are always `hive`'s: the table object is what tells a table's kind, and `hudi`
    /// has no entries for the other two).
    engine: &'static str,
}

impl std::fmt::Debug for HiveConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HiveConnector")
            .field("catalog", &self.catalog.name())
            .field("warehouse", &self.warehouse)
            .finish_non_exhaustive()
    }
}

impl HiveConnector {
    /// A connector over `warehouse` with its file metastore.
    pub fn new(catalog: Arc<Catalog>, warehouse: Warehouse) -> Self {
        let metastore = Arc::new(FileMetastore::new(&catalog.name(), warehouse.clone()));
        Self::with_metastore(catalog, warehouse, metastore)
    }

    /// A connector with another metastore.
    pub fn with_metastore(
        catalog: Arc<Catalog>,
        warehouse: Warehouse,
        metastore: Arc<dyn Metastore>,
    ) -> Self {
        register_refreshers(&catalog, &metastore, &warehouse, "hive");
        Self {
            catalog,
            warehouse,
            metastore,
            engine: "hive",
        }
    }

    /// The same connector keeping partition names, partitions and column statistics in the
    /// caches of `engine` (`hudi`).
    pub fn for_engine(&self, engine: &'static str) -> Self {
        register_refreshers(&self.catalog, &self.metastore, &self.warehouse, engine);
        Self {
            catalog: Arc::clone(&self.catalog),
            warehouse: self.warehouse.clone(),
            metastore: Arc::clone(&self.metastore),
            engine,
        }
    }

    /// The catalog.
    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    /// The warehouse locations are read through.
    pub fn warehouse(&self) -> &Warehouse {
        &self.warehouse
    }

    /// The table object (`hive-table`).
    pub async fn hive_table(&self, database: &str, table: &str) -> Result<Cached<HiveTable>> {
        through(
            &self.catalog,
            &TABLE,
            TableKey::new(database, table),
            || self.metastore.table(database, table),
        )
        .await
    }

    /// The partition names (`hive-partition-names`).
    pub async fn partition_names(
        &self,
        database: &str,
        table: &str,
    ) -> Result<Cached<PartitionNames>> {
        let hive_table = self.hive_table(database, table).await?;
        through(
            &self.catalog,
            &CacheId::new(self.engine, hive::PARTITION_NAMES),
            TableKey::new(database, table),
            || self.metastore.partition_names(&hive_table),
        )
        .await
    }

    /// The partition-pruning view (`hive-partition-view`).
    pub async fn partition_view(
        &self,
        database: &str,
        table: &str,
    ) -> Result<Cached<PartitionView>> {
        through(
            &self.catalog,
            &PARTITION_VIEW,
            TableKey::new(database, table),
            || async {
                let hive_table = self.hive_table(database, table).await?;
                let names = self.partition_names(database, table).await?;
                let keys: Vec<String> = hive_table
                    .partition_keys
                    .iter()
                    .map(|c| c.name.clone())
                    .collect();
                Ok(PartitionView::build(&keys, &names.0))
            },
        )
        .await
    }

    /// One partition object (`hive-partition`).
    pub async fn partition(
        &self,
        hive_table: &HiveTable,
        name: &str,
    ) -> Result<Cached<HivePartition>> {
        let key = PartitionKey {
            database: hive_table.database.clone(),
            table: hive_table.name.clone(),
            name: name.to_owned(),
        };
        let id = CacheId::new(self.engine, hive::PARTITION);
        through(&self.catalog, &id, key, || async {
            let keys: Vec<String> = hive_table
                .partition_keys
                .iter()
                .map(|c| c.name.clone())
                .collect();
            let values = names::parse(name, &keys).ok_or_else(|| {
                let partition = format!("{}.{}/{name}", hive_table.database, hive_table.name);
                Error::not_found(&self.catalog.name(), "partition", partition)
            })?;
            Ok(HivePartition {
                values,
                location: self.metastore.partition_location(hive_table, name).await?,
            })
        })
        .await
    }

    /// The statistics of one column (`hive-column-stats`); `None` if the source has none.
    pub async fn column_stats(
        &self,
        database: &str,
        table: &str,
        column: &str,
    ) -> Result<Option<Cached<ColumnStatistics>>> {
        let hive_table = self.hive_table(database, table).await?;
        let known = hive_table
            .columns
            .iter()
            .chain(&hive_table.partition_keys)
            .any(|c| c.name == column);
        if !known {
            let name = format!("{database}.{table}.{column}");
            return Err(Error::not_found(&self.catalog.name(), "column", name));
        }
        let key = ColumnKey {
            database: database.to_owned(),
            table: table.to_owned(),
            column: column.to_owned(),
        };
        let id = CacheId::new(self.engine, hive::COLUMN_STATS);
        let loaded = through(&self.catalog, &id, key, || async {
            let mut all = self
                .metastore
                .column_stats(&hive_table, &[column.to_owned()])
                .await?;
            Ok(all.remove(column).unwrap_or_default())
        })
        .await?;
        Ok((*loaded != ColumnStatistics::default()).then_some(loaded))
    }

    /// The files of one directory (`hive-file`).
    pub async fn listing(
        &self,
        database: &str,
        table: &str,
        location: &str,
    ) -> Result<Cached<FileListing>> {
        let key = LocationKey {
            database: database.to_owned(),
            table: table.to_owned(),
            location: location.to_owned(),
        };
        through(&self.catalog, &FILE, key, || {
            list_files(&self.warehouse, location)
        })
        .await
    }

    /// The selected partitions, in name order.
    async fn selected_partitions(
        &self,
        hive_table: &HiveTable,
        filter: &PartitionFilter,
    ) -> Result<Vec<(String, Cached<HivePartition>)>> {
        let view = self
            .partition_view(&hive_table.database, &hive_table.name)
            .await?;
        let ids = view.prune(filter);
        futures::stream::iter(ids.into_iter().filter_map(|id| {
            let (name, _) = view.partitions.get(id as usize)?;
            Some(async move {
                let partition = self.partition(hive_table, name).await?;
                Ok::<_, Error>((name.clone(), partition))
            })
        }))
        .buffered(PARTITION_CONCURRENCY)
        .try_collect()
        .await
    }
}

/// Registers how `catalog`'s Hive values are reloaded without a caller (refresh-ahead, when
/// an admin turns `auto-refresh` on for them: the metastore has no cheap change check, so it is
/// off by default): table objects and file listings (`hive` only), partition names (`engine`).
fn register_refreshers(
    catalog: &Catalog,
    metastore: &Arc<dyn Metastore>,
    warehouse: &Warehouse,
    engine: &'static str,
) {
    use metacache_cache::{Refreshed, refresher};
    if engine == "hive" {
        let m = Arc::clone(metastore);
        catalog.set_refresher(
            &TABLE,
            refresher(move |key: TableKey, _old| {
                let m = Arc::clone(&m);
                async move {
                    let table = m.table(&key.database, &key.table).await?;
                    Ok(Refreshed::Changed(table))
                }
            }),
        );
        let w = warehouse.clone();
        catalog.set_refresher(
            &FILE,
            refresher(move |key: LocationKey, _old| {
                let w = w.clone();
                async move { Ok(Refreshed::Changed(list_files(&w, &key.location).await?)) }
            }),
        );
    }
    let m = Arc::clone(metastore);
    catalog.set_refresher(
        &CacheId::new(engine, hive::PARTITION_NAMES),
        refresher(move |key: TableKey, _old| {
            let m = Arc::clone(&m);
            async move {
                let table = m.table(&key.database, &key.table).await?;
                Ok(Refreshed::Changed(m.partition_names(&table).await?))
            }
        }),
    );
}

/// Lists the visible data files directly in `location` (relative to the warehouse root).
pub async fn list_files(warehouse: &Warehouse, location: &str) -> Result<FileListing> {
    let dir = warehouse.path(location);
    let listed = warehouse
        .store()
        .list_with_delimiter(Some(&dir))
        .await
        .map_err(|e| Error::store(warehouse.display(&dir), e))?;
    Ok(FileListing::from_objects(warehouse, &listed.objects))
}

impl FileListing {
    /// The visible files among `objects`, sorted by path, with full locations.
    pub fn from_objects(warehouse: &Warehouse, objects: &[object_store::ObjectMeta]) -> Self {
        let mut files: Vec<DataFile> = objects
            .iter()
            .filter(|o| !o.location.filename().is_some_and(metastore::is_hidden))
            .map(|o| DataFile {
                path: warehouse.display(&o.location),
                size: o.size,
                modified_millis: o.last_modified.timestamp_millis(),
            })
            .collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        files.shrink_to_fit();
        Self { files }
    }
}

fn schema_of(table: &HiveTable) -> TableSchema {
    TableSchema {
        columns: table
            .columns
            .iter()
            .chain(&table.partition_keys)
            .cloned()
            .collect(),
        partition_keys: table
            .partition_keys
            .iter()
            .map(|c| c.name.clone())
            .collect(),
    }
}

#[async_trait]
impl Connector for HiveConnector {
    fn kind(&self) -> &'static str {
        "hive"
    }

    async fn databases(&self) -> Result<Vec<String>> {
        self.metastore.databases().await
    }

    async fn tables(&self, database: &str) -> Result<Vec<String>> {
        self.metastore.tables(database).await
    }

    async fn table(&self, database: &str, table: &str) -> Result<TableInfo> {
        let t = self.hive_table(database, table).await?;
        Ok(TableInfo {
            database: t.database.clone(),
            table: t.name.clone(),
            location: self.warehouse.display(&self.warehouse.path(&t.location)),
            format: t.format.clone(),
            comment: t.comment.clone(),
            partition_keys: t.partition_keys.iter().map(|c| c.name.clone()).collect(),
        })
    }

    async fn schema(&self, database: &str, table: &str) -> Result<Cached<TableSchema>> {
        through(
            &self.catalog,
            &SCHEMA,
            TableKey::new(database, table),
            || async { Ok(schema_of(&*self.hive_table(database, table).await?)) },
        )
        .await
    }

    async fn partitions(
        &self,
        database: &str,
        table: &str,
        filter: &PartitionFilter,
    ) -> Result<Vec<PartitionInfo>> {
        let hive_table = self.hive_table(database, table).await?;
        let selected = self.selected_partitions(&hive_table, filter).await?;
        Ok(selected
            .into_iter()
            .map(|(name, p)| PartitionInfo {
                name,
                values: p.values.clone(),
                location: Some(self.warehouse.display(&self.warehouse.path(&p.location))),
                totals: None,
            })
            .collect())
    }

    async fn column_statistics(
        &self,
        database: &str,
        table: &str,
    ) -> Result<crate::ColumnStatisticsMap> {
        let hive_table = self.hive_table(database, table).await?;
        let mut all = crate::ColumnStatisticsMap::new();
        for column in &hive_table.columns {
            if let Some(statistics) = self.column_stats(database, table, &column.name).await? {
                all.insert(column.name.clone(), (*statistics).clone());
            }
        }
        Ok(all)
    }

    async fn files(
        &self,
        database: &str,
        table: &str,
        filter: &PartitionFilter,
    ) -> Result<Vec<PartitionFiles>> {
        let hive_table = self.hive_table(database, table).await?;
        if hive_table.partition_keys.is_empty() {
            let files = self.listing(database, table, &hive_table.location).await?;
            return Ok(vec![PartitionFiles {
                partition: None,
                files,
            }]);
        }
        let selected = self.selected_partitions(&hive_table, filter).await?;
        futures::stream::iter(selected.into_iter().map(|(name, p)| async move {
            let files = self.listing(database, table, &p.location).await?;
            Ok::<_, Error>(PartitionFiles {
                partition: Some(name),
                files,
            })
        }))
        .buffered(FILE_CONCURRENCY)
        .try_collect()
        .await
    }
}
