//! What the Iceberg caches hold: compact projections of the table metadata and manifests —
//! what planning and `SHOW`/`DESC` need, not the whole parsed objects — with estimators
//! written for their shapes (checked within ±5 % of the allocator in `tests/estimators.rs`).
//!
//! | cache (ENTRY_NAME) | key | value |
//! |---|---|---|
//! | `iceberg-table` | `TableKey` | [`IcebergTable`] |
//! | `iceberg-latest-snapshot` | `TableKey` | [`LatestSnapshot`] |
//! | `iceberg-format` | `TableKey` | [`TableFormat`] |
//! | `iceberg-comment` | `TableKey` | [`TableComment`] |
//! | `iceberg-manifest` | [`ManifestKey`] | [`ManifestValue`] |
//! | `iceberg-partition` | [`SnapshotKey`](crate::SnapshotKey) | [`SnapshotPartitions`] |
//! | `iceberg.list-partitions-view` | [`SnapshotKey`](crate::SnapshotKey) | [`PartitionNameList`] |
//! | `iceberg.mvcc-partition-view` | [`SnapshotKey`](crate::SnapshotKey) | [`MvccPartitionView`] |
//! | `iceberg-equality-delete-field-ids` | [`SnapshotKey`](crate::SnapshotKey) | [`EqualityDeleteIds`] |

use std::collections::BTreeMap;

use mem_dbg::MemSize;
use metacache_estimate::{EstimateSize, Sizer};
use serde::Serialize;

use crate::ColumnInfo;

fn add_map(s: &mut Sizer, map: &BTreeMap<String, String>) {
    // A BTreeMap's nodes are not reachable from outside; the generic walk knows their layout.
    s.add_heap_mem_dbg(map);
}

/// A partition field of a spec.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, MemSize)]
pub struct PartitionFieldInfo {
    /// Its name (`pickup_day`).
    pub name: String,
    /// Its transform (`identity`, `day`, `bucket[16]`…).
    pub transform: String,
    /// The column it is derived from.
    pub source_column: String,
}

/// A partition spec.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, MemSize)]
pub struct SpecInfo {
    /// Its id.
    pub spec_id: i32,
    /// Its fields.
    pub fields: Vec<PartitionFieldInfo>,
}

/// A snapshot as the table metadata records it.
#[derive(Debug, Clone, PartialEq, Eq, MemSize)]
pub struct SnapshotEntry {
    /// Id.
    pub id: i64,
    /// Parent id.
    pub parent_id: Option<i64>,
    /// Commit time, Unix milliseconds.
    pub timestamp_millis: i64,
    /// `append`, `overwrite`, `delete`, `replace`.
    pub operation: String,
    /// Location of its manifest list.
    pub manifest_list: String,
}

/// An Iceberg table: the parts of its current metadata file that planning and `DESC` use.
#[derive(Debug, Clone, PartialEq, Eq, MemSize)]
pub struct IcebergTable {
    /// The metadata file this was read from.
    pub metadata_location: String,
    /// The table's location.
    pub location: String,
    /// 1, 2 or 3.
    pub format_version: u8,
    /// The current snapshot, if any.
    pub current_snapshot_id: Option<i64>,
    /// Columns of the current schema (nested types rendered as text).
    pub columns: Vec<ColumnInfo>,
    /// The default spec's id.
    pub default_spec_id: i32,
    /// Every partition spec (older specs still describe older files).
    pub specs: Vec<SpecInfo>,
    /// Snapshots, oldest first.
    pub snapshots: Vec<SnapshotEntry>,
    /// Table properties.
    pub properties: BTreeMap<String, String>,
}

impl IcebergTable {
    /// The default spec.
    pub fn default_spec(&self) -> Option<&SpecInfo> {
        self.specs
            .iter()
            .find(|s| s.spec_id == self.default_spec_id)
    }

    /// The current snapshot.
    pub fn current_snapshot(&self) -> Option<&SnapshotEntry> {
        let id = self.current_snapshot_id?;
        self.snapshots.iter().find(|s| s.id == id)
    }

    /// `comment` property.
    pub fn comment(&self) -> &str {
        self.properties.get("comment").map_or("", String::as_str)
    }

    /// Data file format of new files (`write.format.default`, default parquet).
    pub fn file_format(&self) -> &str {
        self.properties
            .get("write.format.default")
            .map_or("parquet", String::as_str)
    }
}

fn add_column(s: &mut Sizer, c: &ColumnInfo) {
    s.add_string(&c.name);
    s.add_string(&c.data_type);
    s.add_string(&c.comment);
}

fn add_spec(s: &mut Sizer, spec: &SpecInfo) {
    s.add_vec(&spec.fields, |s, f| {
        s.add_string(&f.name);
        s.add_string(&f.transform);
        s.add_string(&f.source_column);
    });
}

impl EstimateSize for IcebergTable {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        sizer.add_string(&self.metadata_location);
        sizer.add_string(&self.location);
        sizer.add_vec(&self.columns, add_column);
        sizer.add_vec(&self.specs, add_spec);
        sizer.add_vec(&self.snapshots, |s, snap| {
            s.add_string(&snap.operation);
            s.add_string(&snap.manifest_list);
        });
        add_map(sizer, &self.properties);
    }
}

/// The latest snapshot of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LatestSnapshot {
    /// Its id; `None` for a table without data.
    pub snapshot_id: Option<i64>,
    /// When it was committed.
    pub timestamp_millis: Option<i64>,
}

impl EstimateSize for LatestSnapshot {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
    }
}

/// A table's comment (`iceberg-comment`, REST catalogs with vended credentials only, where the
/// table object itself is not shared).
#[derive(Debug, Clone, PartialEq, Eq, MemSize)]
pub struct TableComment(pub String);

impl EstimateSize for TableComment {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        sizer.add_string(&self.0);
    }
}

/// Format version and data file format of a table.
#[derive(Debug, Clone, PartialEq, Eq, MemSize)]
pub struct TableFormat {
    /// 1, 2 or 3.
    pub format_version: u8,
    /// `parquet`, `orc`, `avro`.
    pub file_format: String,
}

impl EstimateSize for TableFormat {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        sizer.add_string(&self.file_format);
    }
}

/// One file of a manifest.
#[derive(Debug, Clone, PartialEq, Eq, MemSize)]
pub struct ManifestEntryInfo {
    /// Whether the entry is live (added or existing, not deleted).
    pub alive: bool,
    /// 0 data, 1 position deletes, 2 equality deletes.
    pub content: u8,
    /// Location of the file.
    pub path: String,
    /// Bytes.
    pub size: u64,
    /// Rows.
    pub record_count: u64,
    /// Its partition as a path (`pickup_day=2024-01-01`), `""` when unpartitioned.
    pub partition: String,
    /// Partition values, as text (`None` for NULL).
    pub partition_values: Vec<Option<String>>,
    /// Field ids of an equality delete file.
    pub equality_ids: Vec<i32>,
    /// The snapshot that added it.
    pub snapshot_id: Option<i64>,
}

/// A parsed manifest.
#[derive(Debug, Clone, PartialEq, Eq, Default, MemSize)]
pub struct ManifestValue {
    /// Its spec.
    pub spec_id: i32,
    /// Its entries.
    pub entries: Vec<ManifestEntryInfo>,
}

impl EstimateSize for ManifestValue {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        sizer.add_vec(&self.entries, |s, e| {
            s.add_string(&e.path);
            s.add_string(&e.partition);
            s.add_vec(&e.partition_values, |s, v| {
                if let Some(v) = v {
                    s.add_string(v);
                }
            });
            s.add_vec(&e.equality_ids, |_, _| {});
        });
    }
}

/// One partition of a snapshot, with what its live data files add up to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, MemSize)]
pub struct IcebergPartition {
    /// `field=value/…`.
    pub name: String,
    /// Values, as text (`None` for NULL).
    pub values: Vec<Option<String>>,
    /// The spec of its files.
    pub spec_id: i32,
    /// Live data files.
    pub file_count: u64,
    /// Rows in them.
    pub record_count: u64,
    /// Bytes in them.
    pub total_bytes: u64,
    /// The newest snapshot that added a file to it.
    pub last_updated_snapshot_id: Option<i64>,
}

/// A manifest named by a snapshot's manifest list.
#[derive(Debug, Clone, PartialEq, Eq, MemSize)]
pub struct ManifestRef {
    /// Its location.
    pub path: String,
    /// Whether it lists data files (else delete files).
    pub data: bool,
}

/// The partitions of one snapshot (`iceberg-partition`), and the manifests they were read from,
/// so planning a snapshot reads its manifest list once.
#[derive(Debug, Clone, PartialEq, Eq, Default, MemSize)]
pub struct SnapshotPartitions {
    /// Sorted by name.
    pub partitions: Vec<IcebergPartition>,
    /// The snapshot's manifests, in manifest-list order.
    pub manifests: Vec<ManifestRef>,
}

impl EstimateSize for SnapshotPartitions {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        sizer.add_vec(&self.manifests, |s, m| s.add_string(&m.path));
        sizer.add_vec(&self.partitions, |s, p| {
            s.add_string(&p.name);
            s.add_vec(&p.values, |s, v| {
                if let Some(v) = v {
                    s.add_string(v);
                }
            });
        });
    }
}

/// Partition names of a snapshot, sorted (`iceberg.list-partitions-view`).
#[derive(Debug, Clone, PartialEq, Eq, Default, MemSize)]
pub struct PartitionNameList(pub Vec<String>);

impl EstimateSize for PartitionNameList {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        sizer.add_vec(&self.0, |s, n| s.add_string(n));
    }
}

/// For each partition of a snapshot, the snapshot that last changed it — what a materialized
/// view's refresh compares (`iceberg.mvcc-partition-view`).
#[derive(Debug, Clone, PartialEq, Eq, Default, MemSize)]
pub struct MvccPartitionView(pub Vec<(String, Option<i64>)>);

impl EstimateSize for MvccPartitionView {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        sizer.add_vec(&self.0, |s, (n, _)| s.add_string(n));
    }
}

/// Field ids used by the equality delete files of a snapshot, sorted and unique.
#[derive(Debug, Clone, PartialEq, Eq, Default, MemSize)]
pub struct EqualityDeleteIds(pub Vec<i32>);

impl EstimateSize for EqualityDeleteIds {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        sizer.add(self.0.capacity() * size_of::<i32>());
    }
}

/// A manifest of a table.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ManifestKey {
    /// Database.
    pub database: String,
    /// Table.
    pub table: String,
    /// The manifest's location.
    pub path: String,
}

table_scoped_keys!(ManifestKey { path });
