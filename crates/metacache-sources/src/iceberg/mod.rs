//! The Iceberg connector: tables of a SQL catalog (SQLite) or a warehouse directory, their
//! metadata and manifests read with the `iceberg` crate's parsers over `object_store` (local
//! file system or S3), through the `iceberg` caches and `default.schema`.
//!
//! # How a question becomes loads
//! - schema, table → `schema` ← `iceberg-table` ← catalog lookup + one metadata JSON read
//! - snapshots → `iceberg-table`; latest snapshot → `iceberg-latest-snapshot`; format →
//!   `iceberg-format`
//! - partitions → `iceberg.list-partitions-view` / `iceberg-partition` of the current snapshot
//!   ← the manifest list, then each data manifest through `iceberg-manifest` (which loads
//!   every time while `meta.cache.iceberg.manifest.enable` is false, its default)
//! - files → the snapshot's manifests as `iceberg-partition` recorded them (its manifest list
//!   is read once per snapshot), then each manifest through `iceberg-manifest`
//! - equality delete field ids → `iceberg-equality-delete-field-ids` ← delete manifests
//!
//! # Files
//! `tables.rs` and `rest.rs` find a table's current metadata file (SQL, directory, metastore
//! and REST catalogs); `storage.rs` reads files where the catalog's storage says; `project.rs`
//! turns parsed metadata and manifests into the cached values of `values.rs`.
//!
//! `iceberg-table` refreshes ahead by default (§8.3): its refresher registered here asks the
//! catalog for the current metadata location and renews an unchanged table without reading it.
//!
//! # Invariants
//! - Values are keyed by table (and snapshot or manifest), so `REFRESH TABLE` drops them all; a
//!   snapshot's derived values never change, so a new snapshot is a new key, never stale data.
//! - Locations recorded in metadata are resolved inside the warehouse (after
//!   `location.rewrite-from`); one outside it is an error, not a read elsewhere.

mod project;
mod rest;
mod storage;
mod tables;
mod values;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use async_trait::async_trait;
use futures::{StreamExt, TryStreamExt};
use iceberg::spec::{
    DataContentType, FormatVersion, Manifest, ManifestContentType, ManifestList, Struct,
    TableMetadata,
};
use metacache_cache::{Cached, Refreshed};
use metacache_catalog::{CacheId, Catalog, Properties, TableKey};
use metacache_engines::builtin::{default, iceberg as def};
use metacache_estimate::EstimateSize;
use object_store::ObjectStoreExt as _;
use parking_lot::Mutex;

use project::aggregate_partitions;
pub use rest::RestCatalog;
pub use storage::Storage;
use storage::read_table;
pub use tables::{DirectoryCatalog, SqliteCatalog, TableCatalog};
pub use values::{
    EqualityDeleteIds, IcebergPartition, IcebergTable, LatestSnapshot, ManifestEntryInfo,
    ManifestKey, ManifestRef, ManifestValue, MvccPartitionView, PartitionFieldInfo,
    PartitionNameList, SnapshotEntry, SnapshotPartitions, SpecInfo, TableComment, TableFormat,
};

use crate::connector::{Connector, PartitionFilter, through};
use crate::warehouse::Warehouse;
use crate::{
    ColumnInfo, DataFile, Error, PartitionFiles, PartitionInfo, PartitionTotals, Result,
    SnapshotInfo, SnapshotKey, TableInfo, TableSchema,
};

const ENGINE: &str = "iceberg";
/// `default.schema`.
pub const SCHEMA: CacheId<TableKey, TableSchema> =
    CacheId::new(metacache_engines::DEFAULT_ENGINE, default::SCHEMA);
/// `iceberg-table`.
pub const TABLE: CacheId<TableKey, IcebergTable> = CacheId::new(ENGINE, def::TABLE);
/// `iceberg-latest-snapshot`.
pub const LATEST_SNAPSHOT: CacheId<TableKey, LatestSnapshot> =
    CacheId::new(ENGINE, def::LATEST_SNAPSHOT);
/// `iceberg-format`.
pub const FORMAT: CacheId<TableKey, TableFormat> = CacheId::new(ENGINE, def::FORMAT);
/// `iceberg-comment` (built only for REST catalogs with vended credentials).
pub const COMMENT: CacheId<TableKey, TableComment> = CacheId::new(ENGINE, def::COMMENT);
/// `iceberg-manifest`.
pub const MANIFEST: CacheId<ManifestKey, ManifestValue> = CacheId::new(ENGINE, def::MANIFEST);
/// `iceberg-partition`.
pub const PARTITION: CacheId<SnapshotKey, SnapshotPartitions> =
    CacheId::new(ENGINE, def::PARTITION);
/// `iceberg.list-partitions-view`.
pub const LIST_PARTITIONS_VIEW: CacheId<SnapshotKey, PartitionNameList> =
    CacheId::new(ENGINE, def::LIST_PARTITIONS_VIEW);
/// `iceberg.mvcc-partition-view`.
pub const MVCC_PARTITION_VIEW: CacheId<SnapshotKey, MvccPartitionView> =
    CacheId::new(ENGINE, def::MVCC_PARTITION_VIEW);
/// `iceberg-equality-delete-field-ids`.
pub const EQUALITY_DELETE_FIELD_IDS: CacheId<SnapshotKey, EqualityDeleteIds> =
    CacheId::new(ENGINE, def::EQUALITY_DELETE_FIELD_IDS);

/// Manifests read at once on a miss.
const MANIFEST_CONCURRENCY: usize = 16;

/// The property naming where `location.rewrite-from` now lives, for REST catalogs (whose
/// `warehouse` is a name, not a location).
pub const REWRITE_TO: &str = "location.rewrite-to";

/// An Iceberg catalog's connector.
pub struct IcebergConnector {
    catalog: Arc<Catalog>,
    storage: Arc<Storage>,
    tables: Arc<dyn TableCatalog>,
}

impl std::fmt::Debug for IcebergConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IcebergConnector")
            .field("catalog", &self.catalog.name())
            .field("storage", &self.storage)
            .finish_non_exhaustive()
    }
}

impl IcebergConnector {
    /// A connector reading `storage`, whose tables `tables` lists. Registers the refresher of
    /// `iceberg-table`, whose change check is the table's current metadata location (one
    /// catalog lookup): an unchanged location renews the cached table without reading it.
    pub fn new(catalog: Arc<Catalog>, storage: Storage, tables: Box<dyn TableCatalog>) -> Self {
        let storage = Arc::new(storage);
        let tables: Arc<dyn TableCatalog> = Arc::from(tables);
        let (s, t) = (Arc::clone(&storage), Arc::clone(&tables));
        catalog.set_refresher(
            &TABLE,
            metacache_cache::refresher(move |key: TableKey, old: Cached<IcebergTable>| {
                let (storage, tables) = (Arc::clone(&s), Arc::clone(&t));
                async move {
                    let location = tables.metadata_location(&key.database, &key.table).await?;
                    if location == old.metadata_location {
                        return Ok(Refreshed::Unchanged);
                    }
                    Ok(Refreshed::Changed(read_table(&storage, location).await?))
                }
            }),
        );
        Self {
            catalog,
            storage,
            tables,
        }
    }

    /// Reads a file named by its recorded location.
    async fn read(&self, location: &str) -> Result<bytes::Bytes> {
        self.storage.read(location).await
    }

    /// Where a recorded location is now, for users and planners.
    fn locate(&self, location: &str) -> String {
        let Ok((warehouse, rewritten)) = self.storage.for_location(location) else {
            return location.to_owned();
        };
        warehouse
            .resolve(&rewritten)
            .map_or(rewritten, |p| warehouse.display(&p))
    }

    /// The table (`iceberg-table`).
    pub async fn iceberg_table(&self, database: &str, table: &str) -> Result<Cached<IcebergTable>> {
        through(
            &self.catalog,
            &TABLE,
            TableKey::new(database, table),
            || async {
                let location = self.tables.metadata_location(database, table).await?;
                read_table(&self.storage, location).await
            },
        )
        .await
    }

    /// The latest snapshot (`iceberg-latest-snapshot`).
    pub async fn latest_snapshot(
        &self,
        database: &str,
        table: &str,
    ) -> Result<Cached<LatestSnapshot>> {
        through(
            &self.catalog,
            &LATEST_SNAPSHOT,
            TableKey::new(database, table),
            || async {
                let t = self.iceberg_table(database, table).await?;
                Ok(LatestSnapshot {
                    snapshot_id: t.current_snapshot_id,
                    timestamp_millis: t.current_snapshot().map(|s| s.timestamp_millis),
                })
            },
        )
        .await
    }

    /// Format version and file format (`iceberg-format`).
    pub async fn format(&self, database: &str, table: &str) -> Result<Cached<TableFormat>> {
        through(
            &self.catalog,
            &FORMAT,
            TableKey::new(database, table),
            || async {
                let t = self.iceberg_table(database, table).await?;
                Ok(TableFormat {
                    format_version: t.format_version,
                    file_format: t.file_format().to_owned(),
                })
            },
        )
        .await
    }

    /// The table's comment (`iceberg-comment` where the rules build it, else read through the
    /// table).
    pub async fn comment(&self, database: &str, table: &str) -> Result<Cached<TableComment>> {
        through(
            &self.catalog,
            &COMMENT,
            TableKey::new(database, table),
            || async {
                let t = self.iceberg_table(database, table).await?;
                Ok(TableComment(t.comment().to_owned()))
            },
        )
        .await
    }

    /// One parsed manifest (`iceberg-manifest`).
    pub async fn manifest(
        &self,
        database: &str,
        table: &str,
        path: &str,
    ) -> Result<Cached<ManifestValue>> {
        let key = ManifestKey {
            database: database.to_owned(),
            table: table.to_owned(),
            path: path.to_owned(),
        };
        through(&self.catalog, &MANIFEST, key, || async {
            let bytes = self.read(path).await?;
            let manifest = Manifest::parse_avro(&bytes).map_err(|e| Error::Invalid {
                location: path.to_owned(),
                reason: e.to_string(),
            })?;
            Ok(ManifestValue::from_manifest(&manifest))
        })
        .await
    }

    /// The manifests of the current snapshot, from its manifest list.
    async fn manifest_refs(&self, table: &IcebergTable) -> Result<Vec<ManifestRef>> {
        let Some(snapshot) = table.current_snapshot() else {
            return Ok(Vec::new());
        };
        let bytes = self.read(&snapshot.manifest_list).await?;
        let version = match table.format_version {
            1 => FormatVersion::V1,
            2 => FormatVersion::V2,
            _ => FormatVersion::V3,
        };
        let list =
            ManifestList::parse_with_version(&bytes, version).map_err(|e| Error::Invalid {
                location: snapshot.manifest_list.clone(),
                reason: e.to_string(),
            })?;
        let mut refs: Vec<ManifestRef> = list
            .entries()
            .iter()
            .map(|m| ManifestRef {
                path: m.manifest_path.clone(),
                data: m.content == ManifestContentType::Data,
            })
            .collect();
        refs.shrink_to_fit();
        Ok(refs)
    }

    /// The manifests among `refs` whose content is (not) data, parsed.
    async fn manifests(
        &self,
        database: &str,
        table: &str,
        refs: &[ManifestRef],
        data: bool,
    ) -> Result<Vec<Cached<ManifestValue>>> {
        let paths: Vec<String> = refs
            .iter()
            .filter(|m| m.data == data)
            .map(|m| m.path.clone())
            .collect();
        futures::stream::iter(
            paths
                .into_iter()
                .map(|path| async move { self.manifest(database, table, &path).await }),
        )
        .buffered(MANIFEST_CONCURRENCY)
        .try_collect()
        .await
    }

    fn snapshot_key(database: &str, table: &str, t: &IcebergTable) -> SnapshotKey {
        SnapshotKey {
            database: database.to_owned(),
            table: table.to_owned(),
            snapshot_id: t.current_snapshot_id.unwrap_or(-1),
        }
    }

    /// The partitions of the current snapshot (`iceberg-partition`).
    pub async fn snapshot_partitions(
        &self,
        database: &str,
        table: &str,
    ) -> Result<Cached<SnapshotPartitions>> {
        let t = self.iceberg_table(database, table).await?;
        self.partitions_of(database, table, &t).await
    }

    /// [`IcebergConnector::snapshot_partitions`] of a table already in hand.
    async fn partitions_of(
        &self,
        database: &str,
        table: &str,
        t: &IcebergTable,
    ) -> Result<Cached<SnapshotPartitions>> {
        let key = Self::snapshot_key(database, table, t);
        through(&self.catalog, &PARTITION, key, || async {
            let refs = self.manifest_refs(t).await?;
            let manifests = self.manifests(database, table, &refs, true).await?;
            let mut partitions = aggregate_partitions(&manifests);
            partitions.manifests = refs;
            Ok(partitions)
        })
        .await
    }

    /// A value of cache `id` derived from the current snapshot's partitions (the two views).
    async fn derived<V>(
        &self,
        id: &CacheId<SnapshotKey, V>,
        database: &str,
        table: &str,
        t: &IcebergTable,
        derive: impl FnOnce(&SnapshotPartitions) -> V,
    ) -> Result<Cached<V>>
    where
        V: EstimateSize + Send + Sync + 'static,
    {
        let key = Self::snapshot_key(database, table, t);
        through(&self.catalog, id, key, || async {
            Ok(derive(&*self.partitions_of(database, table, t).await?))
        })
        .await
    }

    /// Partition names of the current snapshot (`iceberg.list-partitions-view`).
    pub async fn partition_names(
        &self,
        database: &str,
        table: &str,
    ) -> Result<Cached<PartitionNameList>> {
        let t = self.iceberg_table(database, table).await?;
        self.names_of(database, table, &t).await
    }

    async fn names_of(
        &self,
        database: &str,
        table: &str,
        t: &IcebergTable,
    ) -> Result<Cached<PartitionNameList>> {
        self.derived(&LIST_PARTITIONS_VIEW, database, table, t, |p| {
            let mut names: Vec<String> = p.partitions.iter().map(|p| p.name.clone()).collect();
            names.shrink_to_fit();
            PartitionNameList(names)
        })
        .await
    }

    /// For each partition, the snapshot that last changed it (`iceberg.mvcc-partition-view`).
    pub async fn mvcc_view(
        &self,
        database: &str,
        table: &str,
    ) -> Result<Cached<MvccPartitionView>> {
        let t = self.iceberg_table(database, table).await?;
        self.derived(&MVCC_PARTITION_VIEW, database, table, &t, |p| {
            let mut view: Vec<(String, Option<i64>)> = p
                .partitions
                .iter()
                .map(|p| (p.name.clone(), p.last_updated_snapshot_id))
                .collect();
            view.shrink_to_fit();
            MvccPartitionView(view)
        })
        .await
    }

    /// Field ids of the current snapshot's equality deletes
    /// (`iceberg-equality-delete-field-ids`).
    pub async fn equality_delete_field_ids(
        &self,
        database: &str,
        table: &str,
    ) -> Result<Cached<EqualityDeleteIds>> {
        let t = self.iceberg_table(database, table).await?;
        through(
            &self.catalog,
            &EQUALITY_DELETE_FIELD_IDS,
            Self::snapshot_key(database, table, &t),
            || async {
                let snapshot = self.partitions_of(database, table, &t).await?;
                let manifests = self
                    .manifests(database, table, &snapshot.manifests, false)
                    .await?;
                let mut ids: Vec<i32> = manifests
                    .iter()
                    .flat_map(|m| m.entries.iter())
                    .filter(|e| e.alive && e.content == 2)
                    .flat_map(|e| e.equality_ids.iter().copied())
                    .collect();
                ids.sort_unstable();
                ids.dedup();
                ids.shrink_to_fit();
                Ok(EqualityDeleteIds(ids))
            },
        )
        .await
    }
}

fn selects(filter: &PartitionFilter, spec: Option<&SpecInfo>, values: &[Option<String>]) -> bool {
    filter.iter().all(|(column, wanted)| {
        let Some(spec) = spec else { return false };
        let Some(index) = spec
            .fields
            .iter()
            .position(|f| f.name.eq_ignore_ascii_case(column))
        else {
            return false;
        };
        let value = values
            .get(index)
            .cloned()
            .flatten()
            .unwrap_or_else(|| "null".to_owned());
        wanted.contains(&value)
    })
}

#[async_trait]
impl Connector for IcebergConnector {
    fn kind(&self) -> &'static str {
        "iceberg"
    }

    /// REST catalogs vend credentials (`X-Iceberg-Access-Delegation`) and renew them through
    /// the `/credentials` endpoint; other catalogs answer the location and the metadata file,
    /// which the scope keeps for the scan.
    async fn scoped_access(
        &self,
        database: &str,
        table: &str,
        previous: Option<Arc<metacache_cache::scope::Resolution>>,
    ) -> Result<metacache_cache::scope::Resolution> {
        self.tables
            .scoped_access(database, table, previous.as_deref())
            .await
    }

    async fn databases(&self) -> Result<Vec<String>> {
        self.tables.namespaces().await
    }

    async fn tables(&self, database: &str) -> Result<Vec<String>> {
        self.tables.tables(database).await
    }

    async fn table(&self, database: &str, table: &str) -> Result<TableInfo> {
        let t = self.iceberg_table(database, table).await?;
        let format = self.format(database, table).await?;
        let comment = self.comment(database, table).await?;
        Ok(TableInfo {
            database: database.to_owned(),
            table: table.to_owned(),
            location: self.locate(&t.location),
            format: format.file_format.clone(),
            comment: comment.0.clone(),
            partition_keys: t
                .default_spec()
                .map(|s| s.fields.iter().map(|f| f.name.clone()).collect())
                .unwrap_or_default(),
        })
    }

    async fn schema(&self, database: &str, table: &str) -> Result<Cached<TableSchema>> {
        through(
            &self.catalog,
            &SCHEMA,
            TableKey::new(database, table),
            || async {
                let t = self.iceberg_table(database, table).await?;
                let mut keys: Vec<String> = Vec::new();
                for f in t
                    .default_spec()
                    .map(|s| s.fields.as_slice())
                    .unwrap_or_default()
                {
                    if !keys.contains(&f.source_column) {
                        keys.push(f.source_column.clone());
                    }
                }
                Ok(TableSchema {
                    columns: t.columns.clone(),
                    partition_keys: keys,
                })
            },
        )
        .await
    }

    async fn partitions(
        &self,
        database: &str,
        table: &str,
        filter: &PartitionFilter,
    ) -> Result<Vec<PartitionInfo>> {
        let t = self.iceberg_table(database, table).await?;
        let names = self.names_of(database, table, &t).await?;
        let partitions = self.partitions_of(database, table, &t).await?;
        Ok(names
            .0
            .iter()
            .filter_map(|name| {
                // Both are sorted by name: a binary search, not a scan, per partition.
                let all = &partitions.partitions;
                let found = all.binary_search_by(|p| p.name.as_str().cmp(name));
                found.ok().map(|i| &all[i])
            })
            .filter(|p| {
                let spec = t.specs.iter().find(|s| s.spec_id == p.spec_id);
                selects(filter, spec, &p.values)
            })
            .map(|p| PartitionInfo {
                name: p.name.clone(),
                values: p
                    .values
                    .iter()
                    .map(|v| v.clone().unwrap_or_else(|| "null".to_owned()))
                    .collect(),
                location: None,
                totals: Some(PartitionTotals {
                    file_count: p.file_count,
                    record_count: p.record_count,
                    total_bytes: p.total_bytes,
                }),
            })
            .collect())
    }

    async fn files(
        &self,
        database: &str,
        table: &str,
        filter: &PartitionFilter,
    ) -> Result<Vec<PartitionFiles>> {
        let t = self.iceberg_table(database, table).await?;
        let snapshot = self.partitions_of(database, table, &t).await?;
        let manifests = self
            .manifests(database, table, &snapshot.manifests, true)
            .await?;
        let committed = |snapshot: Option<i64>| {
            snapshot
                .and_then(|id| t.snapshots.iter().find(|s| s.id == id))
                .map_or(0, |s| s.timestamp_millis)
        };
        let mut groups: BTreeMap<String, Vec<DataFile>> = BTreeMap::new();
        for manifest in &manifests {
            let spec = t.specs.iter().find(|s| s.spec_id == manifest.spec_id);
            for e in manifest
                .entries
                .iter()
                .filter(|e| e.alive && e.content == 0)
            {
                if !selects(filter, spec, &e.partition_values) {
                    continue;
                }
                groups
                    .entry(e.partition.clone())
                    .or_default()
                    .push(DataFile {
                        path: self.locate(&e.path),
                        size: e.size,
                        modified_millis: committed(e.snapshot_id),
                    });
            }
        }
        Ok(PartitionFiles::from_groups(groups))
    }

    async fn snapshots(&self, database: &str, table: &str) -> Result<Vec<SnapshotInfo>> {
        let t = self.iceberg_table(database, table).await?;
        Ok(t.snapshots
            .iter()
            .map(|s| SnapshotInfo {
                id: s.id,
                parent_id: s.parent_id,
                timestamp_millis: s.timestamp_millis,
                operation: s.operation.clone(),
                current: Some(s.id) == t.current_snapshot_id,
            })
            .collect())
    }
}
