//! The Paimon connector: Paimon tables of a filesystem catalog (a warehouse directory on the
//! local file system or S3) read through the three `paimon` caches and `default.schema`.
//!
//! # How a question becomes loads
//! - schema → `schema` ← `paimon-schema-at` (schema id of the latest snapshot) ← `schema-<id>`
//! - latest snapshot → `paimon-latest-snapshot` ← one listing of `snapshot/`, one read
//! - partitions → `paimon.partition-view` (per snapshot) ← manifest lists and manifests
//! - files → the snapshot's manifests, merged (adds less deletes); manifests come from the
//!   connector's own manifest cache when the `paimon.cache-enabled` rule allows ([`sdk`]),
//!   else from the store
//!
//! Database and table name lists are listings, not cached (§6 has no entry for them).
//!
//! # Invariants
//! - Every cached value reaches a caller through the catalog's cache of its entry.
//! - Keys carry database and table, so `REFRESH TABLE` removes the table's latest snapshot,
//!   schemas and partition views, and fences their loads in flight.
//! - A partition view belongs to one snapshot id: a new commit is a new key, never a stale
//!   view of the old one.

mod files;
mod format;
pub mod sdk;
mod values;

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use async_trait::async_trait;
use futures::{StreamExt, TryStreamExt};
use metacache_cache::Cached;
use metacache_catalog::{CacheId, Catalog, Properties, TableKey};
use metacache_engines::builtin::{default, paimon};

pub use format::{
    ManifestEntry, SchemaFile, SnapshotFile, decode_partition, parse_json, read_manifest,
    read_manifest_list,
};
pub use values::{
    LatestSnapshot, PaimonPartition, PaimonPartitionView, PaimonSchema, SchemaKey, Snapshot,
};

use crate::connector::{Connector, PartitionFilter, through};
use crate::hive::{database_dirs, names, table_dirs};
use crate::warehouse::Warehouse;
use crate::{
    ColumnInfo, DataFile, Error, PartitionFiles, PartitionInfo, PartitionTotals, Result,
    SnapshotInfo, SnapshotKey, TableInfo, TableSchema,
};
use sdk::ManifestCache;

/// `default.schema`.
pub const SCHEMA: CacheId<TableKey, TableSchema> =
    CacheId::new(metacache_engines::DEFAULT_ENGINE, default::SCHEMA);
/// `paimon-schema-at`.
pub const SCHEMA_AT: CacheId<SchemaKey, PaimonSchema> = CacheId::new("paimon", paimon::SCHEMA_AT);
/// `paimon-latest-snapshot`.
pub const LATEST_SNAPSHOT: CacheId<TableKey, LatestSnapshot> =
    CacheId::new("paimon", paimon::LATEST_SNAPSHOT);
/// `paimon.partition-view`.
pub const PARTITION_VIEW: CacheId<SnapshotKey, PaimonPartitionView> =
    CacheId::new("paimon", paimon::PARTITION_VIEW);

/// The directory name Paimon gives a NULL partition value unless the table's
/// `partition.default-name` option says otherwise.
pub const DEFAULT_PARTITION: &str = "__DEFAULT_PARTITION__";
/// Manifests a request reads at once.
const READ_CONCURRENCY: usize = 16;

/// A Paimon catalog's connector.
pub struct PaimonConnector {
    catalog: Arc<Catalog>,
    warehouse: Warehouse,
    manifests: ManifestCache,
}

impl std::fmt::Debug for PaimonConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PaimonConnector")
            .field("catalog", &self.catalog.name())
            .field("warehouse", &self.warehouse)
            .field("manifests", &self.manifests)
            .finish()
    }
}

impl PaimonConnector {
    /// The connector of a `paimon` catalog: `warehouse` (file://, an absolute path or s3://),
    /// the `s3.*` properties, and `paimon.cache-enabled`.
    pub fn open(
        catalog: Arc<Catalog>,
        properties: &Properties,
        disk: Option<crate::warehouse::DiskRead>,
    ) -> Result<Self> {
        let name = catalog.name().to_string();
        let explicit = sdk::explicit(properties.get(sdk::CACHE_ENABLED)).map_err(|reason| {
            Error::Connection {
                catalog: name.clone(),
                reason,
            }
        })?;
        let warehouse = Warehouse::open(&name, properties)?
            .ok_or(Error::NoSource { catalog: name })?
            .with_disk(disk);
        let manifests = ManifestCache::new(explicit, Arc::clone(catalog.budget()));
        files::register_refresher(&catalog, &warehouse);
        Ok(Self {
            catalog,
            warehouse,
            manifests,
        })
    }

    /// The connector's own manifest cache (the `paimon.cache-enabled` rule).
    pub fn manifest_cache(&self) -> &ManifestCache {
        &self.manifests
    }

    fn table_dir(database: &str, table: &str) -> String {
        files::table_dir(database, table)
    }

    async fn read(&self, relative: &str) -> Result<Option<bytes::Bytes>> {
        files::read(&self.warehouse, relative).await
    }

    async fn read_required(&self, relative: &str) -> Result<(bytes::Bytes, String)> {
        files::read_required(&self.warehouse, relative).await
    }

    /// The ids of the `<prefix><id>` files of a table directory, ascending.
    async fn ids(&self, dir: &str, prefix: &str) -> Result<Vec<i64>> {
        files::ids(&self.warehouse, dir, prefix).await
    }

    /// The newest snapshot (`paimon-latest-snapshot`); an unknown table is an error.
    pub async fn latest_snapshot(
        &self,
        database: &str,
        table: &str,
    ) -> Result<Cached<LatestSnapshot>> {
        let key = TableKey::new(database, table);
        let name = self.catalog.name();
        through(&self.catalog, &LATEST_SNAPSHOT, key, || {
            files::latest_snapshot(&self.warehouse, &name, database, table, None)
        })
        .await
    }

    /// The schema with id `schema_id` (`paimon-schema-at`).
    pub async fn schema_at(
        &self,
        database: &str,
        table: &str,
        schema_id: i64,
    ) -> Result<Cached<PaimonSchema>> {
        let key = SchemaKey {
            database: database.to_owned(),
            table: table.to_owned(),
            schema_id,
        };
        through(&self.catalog, &SCHEMA_AT, key, || async {
            let dir = Self::table_dir(database, table);
            let (bytes, location) = self
                .read_required(&format!("{dir}/schema/schema-{schema_id}"))
                .await?;
            let file: SchemaFile = format::parse_json(&bytes, &location)?;
            Ok(PaimonSchema::from_file(file))
        })
        .await
    }

    /// The latest snapshot and the schema the table has at it (the newest schema when nothing
    /// was committed yet).
    pub async fn current(
        &self,
        database: &str,
        table: &str,
    ) -> Result<(Cached<LatestSnapshot>, Cached<PaimonSchema>)> {
        let latest = self.latest_snapshot(database, table).await?;
        let schema_id = match &latest.0 {
            Some(snapshot) => snapshot.schema_id,
            None => {
                let dir = format!("{}/schema", Self::table_dir(database, table));
                let ids = self.ids(&dir, "schema-").await?;
                ids.last().copied().unwrap_or(0)
            }
        };
        let schema = self.schema_at(database, table, schema_id).await?;
        Ok((latest, schema))
    }

    /// The partitions of the latest snapshot (`paimon.partition-view`), with that snapshot and
    /// schema.
    pub async fn partition_view(
        &self,
        database: &str,
        table: &str,
    ) -> Result<(
        Cached<LatestSnapshot>,
        Cached<PaimonSchema>,
        Cached<PaimonPartitionView>,
    )> {
        let (latest, schema) = self.current(database, table).await?;
        let key = SnapshotKey {
            database: database.to_owned(),
            table: table.to_owned(),
            snapshot_id: latest.0.as_ref().map_or(-1, |s| s.id),
        };
        let view = through(&self.catalog, &PARTITION_VIEW, key, || async {
            let Some(snapshot) = &latest.0 else {
                return Ok(PaimonPartitionView::default());
            };
            let files = self.live_files(database, table, snapshot).await?;
            PaimonPartitionView::build(&schema, &files)
        })
        .await?;
        Ok((latest, schema, view))
    }

    /// The data files alive at `snapshot`: every manifest of its base and delta lists, adds
    /// less deletes, in commit order.
    async fn live_files(
        &self,
        database: &str,
        table: &str,
        snapshot: &Snapshot,
    ) -> Result<Vec<ManifestEntry>> {
        let dir = format!("{}/manifest", Self::table_dir(database, table));
        let mut manifests = Vec::new();
        for list in [&snapshot.base_manifest_list, &snapshot.delta_manifest_list] {
            let (bytes, location) = self.read_required(&format!("{dir}/{list}")).await?;
            manifests.extend(format::read_manifest_list(&bytes, &location)?);
        }
        let read: Vec<Arc<Vec<ManifestEntry>>> = futures::stream::iter(
            manifests
                .into_iter()
                .map(|name| self.manifest(format!("{dir}/{name}"))),
        )
        .buffered(READ_CONCURRENCY)
        .try_collect()
        .await?;
        let mut live: BTreeMap<(Vec<u8>, i32, String), ManifestEntry> = BTreeMap::new();
        for entry in read.iter().flat_map(|m| m.iter()) {
            let id = (
                entry.partition.clone(),
                entry.bucket,
                entry.file_name.clone(),
            );
            if entry.delete {
                live.remove(&id);
            } else {
                live.insert(id, entry.clone());
            }
        }
        Ok(live.into_values().collect())
    }

    /// One manifest: from the connector's manifest cache when it is active, else read.
    async fn manifest(&self, relative: String) -> Result<Arc<Vec<ManifestEntry>>> {
        if let Some(hit) = self.manifests.get(&relative) {
            return Ok(hit);
        }
        let (bytes, location) = self.read_required(&relative).await?;
        let entries = Arc::new(format::read_manifest(&bytes, &location)?);
        self.manifests.read(relative, Arc::clone(&entries));
        Ok(entries)
    }

    fn locate(
        &self,
        database: &str,
        table: &str,
        partition: &str,
        entry: &ManifestEntry,
    ) -> String {
        if let Some(external) = &entry.external_path {
            return external.clone();
        }
        let dir = Self::table_dir(database, table);
        let relative = if partition.is_empty() {
            format!("{dir}/bucket-{}/{}", entry.bucket, entry.file_name)
        } else {
            format!(
                "{dir}/{partition}/bucket-{}/{}",
                entry.bucket, entry.file_name
            )
        };
        self.warehouse.display(&self.warehouse.path(&relative))
    }
}

impl PaimonSchema {
    /// The projection of a schema file.
    pub fn from_file(file: SchemaFile) -> PaimonSchema {
        let columns = file
            .fields
            .iter()
            .map(|f| {
                let (data_type, nullable) = f.type_and_nullability();
                ColumnInfo {
                    name: f.name.clone(),
                    data_type,
                    nullable,
                    comment: f.description.clone().unwrap_or_default(),
                }
            })
            .collect();
        PaimonSchema {
            id: file.id,
            columns,
            partition_keys: file.partition_keys,
            primary_keys: file.primary_keys,
            options: file.options,
            comment: file.comment.unwrap_or_default(),
        }
    }
}

/// The partition directory name of `values`: `k=v/…`, escaped as Hive and Paimon escape them,
/// NULL as the table's default partition name.
fn partition_name(schema: &PaimonSchema, values: &[Option<String>]) -> String {
    let default_name = schema
        .options
        .get("partition.default-name")
        .map_or(DEFAULT_PARTITION, String::as_str);
    schema
        .partition_keys
        .iter()
        .zip(values)
        .map(|(key, value)| {
            let value = value
                .as_deref()
                .map_or_else(|| default_name.to_owned(), names::escape);
            format!("{key}={value}")
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Decodes each distinct partition row of a snapshot's files once: row → (name, values).
struct PartitionRows<'a> {
    schema: &'a PaimonSchema,
    types: Vec<String>,
    legacy_names: bool,
    seen: HashMap<&'a [u8], (String, Vec<Option<String>>)>,
}

impl<'a> PartitionRows<'a> {
    fn new(schema: &'a PaimonSchema) -> Self {
        Self {
            schema,
            types: schema.partition_types(),
            legacy_names: schema.legacy_partition_names(),
            seen: HashMap::new(),
        }
    }

    /// The partition name and values of `entry`'s file.
    fn of(&mut self, entry: &'a ManifestEntry) -> Result<&(String, Vec<Option<String>>)> {
        match self.seen.entry(entry.partition.as_slice()) {
            Entry::Occupied(found) => Ok(found.into_mut()),
            Entry::Vacant(slot) => {
                let values = decode_partition(&entry.partition, &self.types, self.legacy_names)
                    .map_err(|reason| Error::Invalid {
                        location: format!("partition of {}", entry.file_name),
                        reason,
                    })?;
                Ok(slot.insert((partition_name(self.schema, &values), values)))
            }
        }
    }
}

impl PaimonPartitionView {
    /// Groups the live files of a snapshot by partition: totals per partition, sorted by name.
    pub fn build(schema: &PaimonSchema, files: &[ManifestEntry]) -> Result<PaimonPartitionView> {
        let mut rows = PartitionRows::new(schema);
        let mut by_row: BTreeMap<&[u8], PaimonPartition> = BTreeMap::new();
        for entry in files {
            let (name, values) = rows.of(entry)?;
            let p = by_row
                .entry(entry.partition.as_slice())
                .or_insert_with(|| PaimonPartition {
                    name: name.clone(),
                    values: values.clone(),
                    file_count: 0,
                    record_count: 0,
                    total_bytes: 0,
                    last_file_creation_millis: None,
                });
            p.file_count += 1;
            p.record_count += entry.row_count;
            p.total_bytes += entry.file_size;
            p.last_file_creation_millis = p.last_file_creation_millis.max(entry.creation_millis);
        }
        let mut partitions: Vec<PaimonPartition> = by_row.into_values().collect();
        partitions.sort_by(|a, b| a.name.cmp(&b.name));
        partitions.shrink_to_fit();
        Ok(PaimonPartitionView(partitions))
    }
}

/// Whether a partition passes the filter; NULL matches the default partition name.
fn selects(filter: &PartitionFilter, schema: &PaimonSchema, values: &[Option<String>]) -> bool {
    filter.iter().all(|(column, wanted)| {
        let Some(index) = schema
            .partition_keys
            .iter()
            .position(|k| k.eq_ignore_ascii_case(column))
        else {
            return false;
        };
        let value = values
            .get(index)
            .cloned()
            .flatten()
            .unwrap_or_else(|| DEFAULT_PARTITION.to_owned());
        wanted.contains(&value)
    })
}

#[async_trait]
impl Connector for PaimonConnector {
    fn kind(&self) -> &'static str {
        "paimon"
    }

    async fn databases(&self) -> Result<Vec<String>> {
        database_dirs(&self.warehouse).await
    }

    async fn tables(&self, database: &str) -> Result<Vec<String>> {
        table_dirs(&self.warehouse, &self.catalog.name(), database).await
    }

    async fn table(&self, database: &str, table: &str) -> Result<TableInfo> {
        let (_, schema) = self.current(database, table).await?;
        let dir = Self::table_dir(database, table);
        Ok(TableInfo {
            database: database.to_owned(),
            table: table.to_owned(),
            location: self.warehouse.display(&self.warehouse.path(&dir)),
            format: schema
                .options
                .get("file.format")
                .cloned()
                .unwrap_or_else(|| "parquet".to_owned()),
            comment: schema.comment.clone(),
            partition_keys: schema.partition_keys.clone(),
        })
    }

    async fn schema(&self, database: &str, table: &str) -> Result<Cached<TableSchema>> {
        through(
            &self.catalog,
            &SCHEMA,
            TableKey::new(database, table),
            || async {
                let (_, schema) = self.current(database, table).await?;
                Ok(TableSchema {
                    columns: schema.columns.clone(),
                    partition_keys: schema.partition_keys.clone(),
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
        let (_, schema, view) = self.partition_view(database, table).await?;
        let dir = Self::table_dir(database, table);
        Ok(view
            .0
            .iter()
            .filter(|p| selects(filter, &schema, &p.values))
            .map(|p| PartitionInfo {
                name: p.name.clone(),
                values: p
                    .values
                    .iter()
                    .map(|v| v.clone().unwrap_or_else(|| DEFAULT_PARTITION.to_owned()))
                    .collect(),
                location: Some(
                    self.warehouse
                        .display(&self.warehouse.path(&format!("{dir}/{}", p.name))),
                ),
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
        let (latest, schema) = self.current(database, table).await?;
        let Some(snapshot) = &latest.0 else {
            return Ok(Vec::new());
        };
        let live = self.live_files(database, table, snapshot).await?;
        let mut rows = PartitionRows::new(&schema);
        let mut groups: BTreeMap<String, Vec<DataFile>> = BTreeMap::new();
        for entry in &live {
            let (partition, values) = rows.of(entry)?;
            if !selects(filter, &schema, values) {
                continue;
            }
            let file = DataFile {
                path: self.locate(database, table, partition, entry),
                size: entry.file_size,
                modified_millis: entry.creation_millis.unwrap_or(snapshot.time_millis),
            };
            groups.entry(partition.clone()).or_default().push(file);
        }
        Ok(PartitionFiles::from_groups(groups))
    }

    async fn snapshots(&self, database: &str, table: &str) -> Result<Vec<SnapshotInfo>> {
        let latest = self.latest_snapshot(database, table).await?;
        let dir = format!("{}/snapshot", Self::table_dir(database, table));
        let ids = self.ids(&dir, "snapshot-").await?;
        let dir = &dir;
        let files: Vec<SnapshotFile> = futures::stream::iter(ids.into_iter().map(|id| {
            async move {
                // Snapshots expire: one gone since the listing is skipped, not an error.
                let Some(bytes) = self.read(&format!("{dir}/snapshot-{id}")).await? else {
                    return Ok(None);
                };
                let location = format!("{dir}/snapshot-{id}");
                format::parse_json::<SnapshotFile>(&bytes, &location).map(Some)
            }
        }))
        .buffered(READ_CONCURRENCY)
        .try_filter_map(|f| async move { Ok(f) })
        .try_collect()
        .await?;
        let current = latest.0.as_ref().map(|s| s.id);
        let mut previous = None;
        Ok(files
            .into_iter()
            .map(|f| {
                let info = SnapshotInfo {
                    id: f.id,
                    parent_id: previous,
                    timestamp_millis: f.time_millis,
                    operation: f.commit_kind.to_ascii_lowercase(),
                    current: Some(f.id) == current,
                };
                previous = Some(f.id);
                info
            })
            .collect())
    }
}
