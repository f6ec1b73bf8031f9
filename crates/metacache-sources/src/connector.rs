//! The questions a planner asks a catalog, answered through the catalog's caches.

use std::future::Future;

use async_trait::async_trait;
use metacache_cache::Cached;
use metacache_catalog::{CacheId, Catalog, MetaKey};
use metacache_estimate::EstimateSize;

use crate::{
    Error, PartitionFiles, PartitionInfo, Result, SnapshotInfo, TableAccessInfo, TableInfo,
    TableSchema,
};

/// Partition predicates: for each listed column, the values a partition may have (a
/// conjunction of `IN` lists). Empty selects every partition.
pub type PartitionFilter = [(String, Vec<String>)];

/// One catalog's metadata source. Implementations load through the catalog's caches, so every
/// answer is counted, governed and shown in the statistics table.
#[async_trait]
pub trait Connector: Send + Sync {
    /// The kind of source (`hive`, `iceberg`…), for messages.
    fn kind(&self) -> &'static str;

    /// Database names, sorted.
    async fn databases(&self) -> Result<Vec<String>>;

    /// Table names of `database`, sorted.
    async fn tables(&self, database: &str) -> Result<Vec<String>>;

    /// What a planner first needs of a table.
    async fn table(&self, database: &str, table: &str) -> Result<TableInfo>;

    /// The schema of a table.
    async fn schema(&self, database: &str, table: &str) -> Result<Cached<TableSchema>>;

    /// The partitions of a table that pass `filter`, sorted by name.
    async fn partitions(
        &self,
        database: &str,
        table: &str,
        filter: &PartitionFilter,
    ) -> Result<Vec<PartitionInfo>>;

    /// The data files of the partitions that pass `filter` (of the table, if unpartitioned):
    /// the planning metadata of a scan.
    async fn files(
        &self,
        database: &str,
        table: &str,
        filter: &PartitionFilter,
    ) -> Result<Vec<PartitionFiles>>;

    /// Where a table is and how to open it (Lance). `current` bypasses the cache, for callers
    /// that must see the current target.
    async fn table_access(
        &self,
        database: &str,
        table: &str,
        current: bool,
    ) -> Result<TableAccessInfo> {
        let _ = (database, table, current);
        Err(Error::Unsupported {
            what: "Table access resolution".to_owned(),
            connector: self.kind(),
        })
    }

    /// A table's resolution for a scan scope (§8.2): its location and the options to open it
    /// with, credentials the source vends included (never cached node-wide). `previous` is what
    /// the scope holds: a source may renew only its credentials and keep the rest (Iceberg keeps
    /// the metadata file the scan started on).
    async fn scoped_access(
        &self,
        database: &str,
        table: &str,
        previous: Option<std::sync::Arc<metacache_cache::scope::Resolution>>,
    ) -> Result<metacache_cache::scope::Resolution> {
        let _ = (database, table, previous);
        Err(crate::scoped::unsupported(self.kind()))
    }

    /// The statistics of a table's columns that have them (`ANALYZE … FOR COLUMNS`).
    async fn column_statistics(
        &self,
        database: &str,
        table: &str,
    ) -> Result<crate::ColumnStatisticsMap> {
        let _ = (database, table);
        Err(Error::Unsupported {
            what: "Column statistics".to_owned(),
            connector: self.kind(),
        })
    }

    /// The snapshots of a table, oldest first.
    async fn snapshots(&self, database: &str, table: &str) -> Result<Vec<SnapshotInfo>> {
        let _ = (database, table);
        Err(Error::Unsupported {
            what: "Snapshots".to_owned(),
            connector: self.kind(),
        })
    }
}

/// Loads `key` through the catalog's cache `id` (single flight, admission, statistics), or
/// detached when a rule of the engine leaves that cache out for this catalog.
pub(crate) async fn through<K, V, F, Fut>(
    catalog: &Catalog,
    id: &CacheId<K, V>,
    key: K,
    load: F,
) -> Result<Cached<V>>
where
    K: MetaKey,
    V: EstimateSize + Send + Sync + 'static,
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<V>>,
{
    match catalog.cache(id)? {
        Some(cache) => Ok(cache.get_or_load(key, load).await?),
        None => Ok(Cached::detached(load().await?)),
    }
}
