//! What the Hive caches hold, with their keys and estimators.
//!
//! | cache (ENTRY_NAME) | key | value | estimator |
//! |---|---|---|---|
//! | `hive-table` | [`TableKey`] | [`HiveTable`] | by hand |
//! | `hive-partition-names` | [`TableKey`] | [`PartitionNames`] | by hand |
//! | `hive-partition` | [`PartitionKey`] | [`HivePartition`] | by hand |
//! | `hive-column-stats` | [`ColumnKey`] | [`ColumnStatistics`] | by hand |
//! | `hive-file` | [`LocationKey`] | [`FileListing`](crate::FileListing) | by hand |
//! | `hive-partition-view` | [`TableKey`] | [`PartitionView`] | by hand |
//!
//! Every key names its database and table, so `REFRESH TABLE` and `REFRESH DATABASE` reach
//! every value of the table.

use std::collections::BTreeMap;

use mem_dbg::MemSize;
use metacache_estimate::{EstimateSize, Sizer};
use serde::{Deserialize, Serialize};

use crate::ColumnInfo;
use crate::model::add_columns;

/// A table as the metastore describes it.
#[derive(Debug, Clone, PartialEq, Eq, MemSize)]
pub struct HiveTable {
    /// Database.
    pub database: String,
    /// Name.
    pub name: String,
    /// Its directory, relative to the warehouse root.
    pub location: String,
    /// File format of the data (`parquet`, `orc`, `textfile`…).
    pub format: String,
    /// Comment.
    pub comment: String,
    /// Data columns.
    pub columns: Vec<ColumnInfo>,
    /// Partition columns, outermost first.
    pub partition_keys: Vec<ColumnInfo>,
    /// Table properties.
    pub properties: BTreeMap<String, String>,
}

impl EstimateSize for HiveTable {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        for text in [
            &self.database,
            &self.name,
            &self.location,
            &self.format,
            &self.comment,
        ] {
            sizer.add_string(text);
        }
        add_columns(sizer, &self.columns);
        add_columns(sizer, &self.partition_keys);
        sizer.add_string_map(&self.properties);
    }
}

/// The partition names of a table (`k1=v1/k2=v2`), sorted.
#[derive(Debug, Clone, PartialEq, Eq, Default, MemSize)]
pub struct PartitionNames(pub Vec<String>);

impl EstimateSize for PartitionNames {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        sizer.add_vec(&self.0, |s, name| s.add_string(name));
    }
}

/// One partition object.
#[derive(Debug, Clone, PartialEq, Eq, MemSize)]
pub struct HivePartition {
    /// Values, one per partition column, unescaped.
    pub values: Vec<String>,
    /// Its directory, relative to the warehouse root.
    pub location: String,
}

impl EstimateSize for HivePartition {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        sizer.add_vec(&self.values, |s, v| s.add_string(v));
        sizer.add_string(&self.location);
    }
}

/// Statistics of one column, as `ANALYZE` would record them. Every field is optional: a
/// source gives what it has.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, MemSize)]
#[serde(deny_unknown_fields)]
pub struct ColumnStatistics {
    /// Distinct values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ndv: Option<u64>,
    /// NULL values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub null_count: Option<u64>,
    /// Smallest value, as text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<String>,
    /// Largest value, as text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<String>,
    /// Average size in bytes (strings, binaries).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avg_size: Option<f64>,
    /// Largest size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_size: Option<u64>,
}

impl EstimateSize for ColumnStatistics {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        for text in [&self.min, &self.max].into_iter().flatten() {
            sizer.add_string(text);
        }
    }
}

/// The partition-pruning view of a table: partitions numbered once, and for each partition
/// column its distinct values with the partitions that hold them, sorted, so a predicate on a
/// column is a binary search and a conjunction an intersection of sorted id lists.
#[derive(Debug, Clone, PartialEq, Eq, Default, MemSize)]
pub struct PartitionView {
    /// Partition column names, outermost first.
    pub keys: Vec<String>,
    /// Partitions by id: name and values.
    pub partitions: Vec<(String, Vec<String>)>,
    /// Per partition column: distinct value → ids of the partitions with it (ascending).
    pub by_value: Vec<Vec<(String, Vec<u32>)>>,
}

impl PartitionView {
    /// Builds the view from partition names (`k1=v1/k2=v2`, in any order) and the table's
    /// partition columns. Names that do not match the columns are skipped.
    pub fn build(keys: &[String], names: &[String]) -> Self {
        let mut partitions = Vec::with_capacity(names.len());
        let mut maps: Vec<BTreeMap<&str, Vec<u32>>> = vec![BTreeMap::new(); keys.len()];
        let mut parsed = Vec::with_capacity(names.len());
        for name in names {
            if let Some(values) = super::names::parse(name, keys) {
                parsed.push((name.clone(), values));
            }
        }
        for (id, (name, values)) in parsed.iter().enumerate() {
            let id = u32::try_from(id).unwrap_or(u32::MAX);
            for (map, value) in maps.iter_mut().zip(values) {
                map.entry(value.as_str()).or_default().push(id);
            }
            partitions.push((name.clone(), values.clone()));
        }
        let by_value = maps
            .into_iter()
            .map(|map| {
                let mut column: Vec<(String, Vec<u32>)> = map
                    .into_iter()
                    .map(|(value, mut ids)| {
                        ids.shrink_to_fit();
                        (value.to_owned(), ids)
                    })
                    .collect();
                column.shrink_to_fit();
                column
            })
            .collect();
        Self {
            keys: keys.to_vec(),
            partitions,
            by_value,
        }
    }

    /// Ids of the partitions whose value of each filtered column is one of the listed values
    /// (a conjunction of `IN` lists). Unknown columns match nothing.
    pub fn prune(&self, filter: &[(String, Vec<String>)]) -> Vec<u32> {
        let mut selected: Option<Vec<u32>> = None;
        for (column, wanted) in filter {
            let Some(index) = self
                .keys
                .iter()
                .position(|k| k.eq_ignore_ascii_case(column))
            else {
                return Vec::new();
            };
            let values = &self.by_value[index];
            let mut ids: Vec<u32> = wanted
                .iter()
                .filter_map(|v| {
                    values
                        .binary_search_by(|(value, _)| value.as_str().cmp(v))
                        .ok()
                        .map(|i| &values[i].1)
                })
                .flatten()
                .copied()
                .collect();
            ids.sort_unstable();
            ids.dedup();
            selected = Some(match selected {
                None => ids,
                Some(previous) => intersect(&previous, &ids),
            });
        }
        selected.unwrap_or_else(|| (0..self.partitions.len()).map(|i| i as u32).collect())
    }
}

fn intersect(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

/// Type-specific: walks the vectors at their capacities; no shared pointers to track.
impl EstimateSize for PartitionView {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        sizer.add_vec(&self.keys, |s, key| s.add_string(key));
        sizer.add_vec(&self.partitions, |s, (name, values)| {
            s.add_string(name);
            s.add_vec(values, |s, v| s.add_string(v));
        });
        sizer.add_vec(&self.by_value, |s, column| {
            s.add_vec(column, |s, (value, ids)| {
                s.add_string(value);
                s.add(ids.capacity() * size_of::<u32>());
            });
        });
    }
}

/// A partition of a table.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PartitionKey {
    /// Database.
    pub database: String,
    /// Table.
    pub table: String,
    /// Partition name, `k1=v1/k2=v2`.
    pub name: String,
}

/// A column of a table.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ColumnKey {
    /// Database.
    pub database: String,
    /// Table.
    pub table: String,
    /// Column.
    pub column: String,
}

/// A directory of a table (the table's own, or a partition's).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LocationKey {
    /// Database.
    pub database: String,
    /// Table.
    pub table: String,
    /// The directory, relative to the warehouse root.
    pub location: String,
}

table_scoped_keys!(
    PartitionKey { name },
    ColumnKey { column },
    LocationKey { location },
);
