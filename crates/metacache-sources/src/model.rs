//! What connectors answer, whatever the source: schemas, partitions, file listings and
//! snapshots, in the shapes the SQL and HTTP front ends serialise.
//!
//! The value types that sit in caches ([`TableSchema`], [`FileListing`]) carry their own size
//! estimators, written by hand with `Sizer`'s helpers so that every allocation is charged at
//! the allocator's size class.

use mem_dbg::MemSize;
use metacache_cache::Cached;
use metacache_estimate::{EstimateSize, Sizer};
use serde::{Deserialize, Serialize};

/// A column of a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, MemSize)]
pub struct ColumnInfo {
    /// Its name.
    pub name: String,
    /// Its type as the source spells it (`bigint`, `string`, `decimal(10,2)`, `timestamptz`…).
    #[serde(rename = "type")]
    pub data_type: String,
    /// Whether it may hold NULL.
    #[serde(default = "yes")]
    pub nullable: bool,
    /// Its comment (`""` when none).
    #[serde(default)]
    pub comment: String,
}

fn yes() -> bool {
    true
}

/// The schema of a table: what `DESC` shows and a planner binds names against. The value of
/// the `default.schema` cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, MemSize)]
pub struct TableSchema {
    /// Data columns, then partition columns, in table order.
    pub columns: Vec<ColumnInfo>,
    /// Names of the partition columns, outermost first (a subset of `columns`).
    pub partition_keys: Vec<String>,
}

impl EstimateSize for TableSchema {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        add_columns(sizer, &self.columns);
        sizer.add_vec(&self.partition_keys, |s, k| s.add_string(k));
    }
}

/// Adds a list of columns: the vector, and each column's three strings.
pub(crate) fn add_columns(sizer: &mut Sizer, columns: &Vec<ColumnInfo>) {
    sizer.add_vec(columns, |s, c| {
        s.add_string(&c.name);
        s.add_string(&c.data_type);
        s.add_string(&c.comment);
    });
}

/// A table as a planner first sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TableInfo {
    /// Database.
    pub database: String,
    /// Name.
    pub table: String,
    /// Where its files live (`file:///…`, `s3://bucket/…`).
    pub location: String,
    /// File format of its data (`parquet`, `orc`, `csv`…).
    pub format: String,
    /// Its comment.
    pub comment: String,
    /// Partition columns, outermost first.
    pub partition_keys: Vec<String>,
}

/// One partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartitionInfo {
    /// Its name, `k1=v1/k2=v2` (values escaped as Hive escapes them).
    pub name: String,
    /// Its values, one per partition column, unescaped.
    pub values: Vec<String>,
    /// Where its files live, when the source has one place per partition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// What its live data files add up to, when the source records it (Iceberg manifests).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub totals: Option<PartitionTotals>,
}

/// File, row and byte counts of a partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PartitionTotals {
    /// Live data files.
    pub file_count: u64,
    /// Rows in them.
    pub record_count: u64,
    /// Bytes in them.
    pub total_bytes: u64,
}

/// One data file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, MemSize)]
pub struct DataFile {
    /// Its full location.
    pub path: String,
    /// Bytes.
    pub size: u64,
    /// Last modification, Unix milliseconds.
    pub modified_millis: i64,
}

/// The data files of one directory (a table or a partition): the value of the `hive-file`
/// cache. Hidden files (`_…`, `.…`) are not listed, as Hive and Spark skip them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, MemSize)]
pub struct FileListing {
    /// The files, sorted by path.
    pub files: Vec<DataFile>,
}

impl FileListing {
    /// Total bytes of the files.
    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }
}

/// Type-specific: one pass over the files, no hashing of shared pointers (a listing shares
/// nothing). Counts the vector at its capacity and each path's buffer at its capacity.
impl EstimateSize for FileListing {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        sizer.add_vec(&self.files, |s, file| s.add_string(&file.path));
    }
}

/// The files of one partition (or of the whole table when it has no partitions), as a planner
/// asks for them.
#[derive(Debug, Clone, Serialize)]
pub struct PartitionFiles {
    /// The partition, `None` for an unpartitioned table.
    pub partition: Option<String>,
    /// Its files.
    #[serde(serialize_with = "listing")]
    pub files: Cached<FileListing>,
}

impl PartitionFiles {
    /// Data files grouped by partition name (`""` for an unpartitioned table), in name order,
    /// each group sorted by path; the listings are built per request, so they are detached.
    pub fn from_groups(groups: std::collections::BTreeMap<String, Vec<DataFile>>) -> Vec<Self> {
        groups
            .into_iter()
            .map(|(partition, mut files)| {
                files.sort_by(|a, b| a.path.cmp(&b.path));
                PartitionFiles {
                    partition: (!partition.is_empty()).then_some(partition),
                    files: Cached::detached(FileListing { files }),
                }
            })
            .collect()
    }
}

/// The files themselves, without the listing's wrapper object.
fn listing<S: serde::Serializer>(files: &Cached<FileListing>, s: S) -> Result<S::Ok, S::Error> {
    files.files.serialize(s)
}

/// One snapshot of a table (table formats with snapshots: Iceberg, Paimon).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SnapshotInfo {
    /// Its id.
    pub id: i64,
    /// The snapshot it follows.
    pub parent_id: Option<i64>,
    /// When it was committed, Unix milliseconds.
    pub timestamp_millis: i64,
    /// What made it (`append`, `overwrite`, `delete`…).
    pub operation: String,
    /// Whether it is the table's current snapshot.
    pub current: bool,
}

/// A snapshot of a table: the key of the caches whose values belong to one snapshot (Iceberg
/// partitions and views, Paimon partition views).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SnapshotKey {
    /// Database.
    pub database: String,
    /// Table.
    pub table: String,
    /// Snapshot id (`-1` for a table without snapshots).
    pub snapshot_id: i64,
}

table_scoped_keys!(SnapshotKey);

/// Where a table is and how to open it (Lance table access, §8.1), as engines receive it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TableAccessInfo {
    /// The table's URI.
    pub uri: String,
    /// Options to open it with (configured or vended).
    pub storage_options: std::collections::BTreeMap<String, String>,
    /// Whether a resolution like this one is kept in the cache.
    pub cacheable: bool,
    /// Why not (`vended_storage_options`, `user_info`, `query`, `fragment`, `opaque`,
    /// `unparsable`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_cached_because: Option<String>,
}
