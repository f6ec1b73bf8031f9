//! What the Paimon caches hold, with estimators written for their shapes (checked against the
//! allocator in `tests/estimators.rs`).
//!
//! | cache (ENTRY_NAME) | key | value |
//! |---|---|---|
//! | `paimon-schema-at` | [`SchemaKey`] | [`PaimonSchema`] (schema files never change: no expiry) |
//! | `paimon-latest-snapshot` | `TableKey` | [`LatestSnapshot`] |
//! | `paimon.partition-view` | [`SnapshotKey`](crate::SnapshotKey) | [`PaimonPartitionView`] |

use std::collections::BTreeMap;

use mem_dbg::MemSize;
use metacache_estimate::{EstimateSize, Sizer};
use serde::Serialize;

use super::format::SnapshotFile;
use crate::ColumnInfo;

/// A table's schema at one schema id.
#[derive(Debug, Clone, PartialEq, Eq, MemSize)]
pub struct PaimonSchema {
    /// Its id.
    pub id: i64,
    /// Columns in table order (partition columns where the table has them).
    pub columns: Vec<ColumnInfo>,
    /// Partition columns, outermost first.
    pub partition_keys: Vec<String>,
    /// Primary-key columns; empty for append-only tables.
    pub primary_keys: Vec<String>,
    /// Table options.
    pub options: BTreeMap<String, String>,
    /// The table comment (`""` when none).
    pub comment: String,
}

impl PaimonSchema {
    /// The types of the partition columns, in partition order, as `decode_partition` takes
    /// them.
    pub fn partition_types(&self) -> Vec<String> {
        self.partition_keys
            .iter()
            .map(|key| {
                self.columns
                    .iter()
                    .find(|c| &c.name == key)
                    .map_or_else(|| "string".to_owned(), |c| c.data_type.clone())
            })
            .collect()
    }

    /// Whether partition directories use Paimon's legacy names (`partition.legacy-name`, true
    /// unless the table says otherwise): a DATE is then its day number.
    pub fn legacy_partition_names(&self) -> bool {
        self.options
            .get("partition.legacy-name")
            .is_none_or(|v| !v.trim().eq_ignore_ascii_case("false"))
    }
}

impl EstimateSize for PaimonSchema {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        sizer.add_vec(&self.columns, |s, c| {
            s.add_string(&c.name);
            s.add_string(&c.data_type);
            s.add_string(&c.comment);
        });
        sizer.add_vec(&self.partition_keys, |s, k| s.add_string(k));
        sizer.add_vec(&self.primary_keys, |s, k| s.add_string(k));
        sizer.add_string_map(&self.options);
        sizer.add_string(&self.comment);
    }
}

/// The newest snapshot of a table, `None` for a table nothing was committed to yet.
#[derive(Debug, Clone, PartialEq, Eq, MemSize)]
pub struct LatestSnapshot(pub Option<Snapshot>);

/// What a snapshot file says, less the writer's bookkeeping.
#[derive(Debug, Clone, PartialEq, Eq, MemSize)]
pub struct Snapshot {
    /// Its id.
    pub id: i64,
    /// The schema of the table at this snapshot.
    pub schema_id: i64,
    /// Manifest list of the files before the commit.
    pub base_manifest_list: String,
    /// Manifest list of the commit's changes.
    pub delta_manifest_list: String,
    /// Rows after the commit.
    pub total_record_count: Option<i64>,
    /// `APPEND`, `COMPACT`, `OVERWRITE`…
    pub commit_kind: String,
    /// Commit time, Unix milliseconds.
    pub time_millis: i64,
}

impl From<SnapshotFile> for Snapshot {
    fn from(file: SnapshotFile) -> Self {
        Self {
            id: file.id,
            schema_id: file.schema_id,
            base_manifest_list: file.base_manifest_list,
            delta_manifest_list: file.delta_manifest_list,
            total_record_count: file.total_record_count,
            commit_kind: file.commit_kind,
            time_millis: file.time_millis,
        }
    }
}

impl EstimateSize for LatestSnapshot {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        if let Some(s) = &self.0 {
            sizer.add_string(&s.base_manifest_list);
            sizer.add_string(&s.delta_manifest_list);
            sizer.add_string(&s.commit_kind);
        }
    }
}

/// One partition of a snapshot: its live data files' totals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, MemSize)]
pub struct PaimonPartition {
    /// `k1=v1/k2=v2`, values escaped as Paimon names partition directories.
    pub name: String,
    /// Values as text, `None` for NULL.
    pub values: Vec<Option<String>>,
    /// Live data files.
    pub file_count: u64,
    /// Rows in them (before primary-key merging).
    pub record_count: u64,
    /// Bytes in them.
    pub total_bytes: u64,
    /// The newest creation time of its files, Unix milliseconds.
    pub last_file_creation_millis: Option<i64>,
}

/// The partitions of one snapshot, sorted by name (`paimon.partition-view`).
#[derive(Debug, Clone, PartialEq, Eq, Default, MemSize)]
pub struct PaimonPartitionView(pub Vec<PaimonPartition>);

impl EstimateSize for PaimonPartitionView {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        sizer.add_vec(&self.0, |s, p| {
            s.add_string(&p.name);
            s.add_vec(&p.values, |s, v| {
                if let Some(v) = v {
                    s.add_string(v);
                }
            });
        });
    }
}

/// One schema of a table.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SchemaKey {
    /// Database.
    pub database: String,
    /// Table.
    pub table: String,
    /// Schema id.
    pub schema_id: i64,
}

table_scoped_keys!(SchemaKey);
