//! Estimator accuracy against the allocator: every shape here is built while a counting global
//! allocator records the bytes this thread is given, and the estimate must be within ±5 %.
//! Hand-written estimators (helpers of `Sizer`) are held against the bytes really allocated,
//! each request at jemalloc's size class; the generic `mem_dbg` walk, which cannot see single
//! allocations, against the bytes requested.

use std::collections::HashMap;
use std::sync::Arc;

use mem_dbg::MemSize;
use metacache_estimate::counting::{
    Counting, assert_estimate_within, assert_generic_estimate_within,
};
use metacache_estimate::{EstimateSize, Sizer, estimate_with_mem_dbg};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn assert_within_5_percent<T: EstimateSize>(name: &str, build: impl FnOnce() -> T) {
    assert_estimate_within(name, 0.05, build);
}

fn assert_generic_within_5_percent<T: EstimateSize>(name: &str, build: impl FnOnce() -> T) {
    assert_generic_estimate_within(name, 0.05, build);
}

// Realistic metadata shapes.

#[derive(MemSize, Clone)]
struct Column {
    name: String,
    type_name: String,
    comment: Option<String>,
}

#[derive(MemSize)]
struct TableSchema {
    columns: Vec<Column>,
    properties: HashMap<String, String>,
}
estimate_with_mem_dbg!(TableSchema);

#[derive(MemSize)]
struct Partition {
    values: Vec<String>,
    location: String,
    input_format: String,
    parameters: HashMap<String, String>,
    schema: Arc<TableSchema>,
}

#[derive(MemSize)]
struct PartitionList {
    partitions: Vec<Partition>,
}
estimate_with_mem_dbg!(PartitionList);

#[allow(dead_code)] // length and time are there for their size, as in a real listing
struct FileStatus {
    path: String,
    length: u64,
    modification_time: i64,
    block_offsets: Vec<u64>,
}

/// A hand-written estimator of the shape type-specific ones take.
struct FileListing {
    directory: String,
    files: Vec<FileStatus>,
}

impl EstimateSize for FileListing {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        sizer.add_string(&self.directory);
        sizer.add_vec(&self.files, |s, f| {
            s.add_string(&f.path);
            s.add_vec(&f.block_offsets, |_, _| {});
        });
    }
}

#[derive(MemSize)]
struct NamespaceIndex {
    tables: HashMap<String, Vec<String>>,
}
estimate_with_mem_dbg!(NamespaceIndex);

fn schema(columns: usize) -> TableSchema {
    TableSchema {
        columns: (0..columns)
            .map(|i| Column {
                name: format!("column_{i}"),
                type_name: if i % 3 == 0 {
                    "bigint".into()
                } else {
                    "varchar(255)".into()
                },
                comment: (i % 2 == 0).then(|| format!("comment for column {i}")),
            })
            .collect(),
        properties: (0..8)
            .map(|i| (format!("prop.{i}"), format!("value-{i}")))
            .collect(),
    }
}

#[test]
fn table_schema_nested_structs_and_hash_map() {
    assert_generic_within_5_percent("table schema (40 columns)", || schema(40));
}

#[test]
fn partitions_sharing_one_schema_arc() {
    assert_generic_within_5_percent("2,000 partitions sharing an Arc schema", || {
        let shared = Arc::new(schema(30));
        PartitionList {
            partitions: (0..2000)
                .map(|i| Partition {
                    values: vec![
                        format!("2026-{:02}-{:02}", i % 12 + 1, i % 28 + 1),
                        format!("{}", i % 24),
                    ],
                    location: format!(
                        "s3://warehouse/db/sales/dt=2026-{:02}/hour={}",
                        i % 12,
                        i % 24
                    ),
                    input_format: "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
                        .into(),
                    parameters: [("numFiles".to_owned(), i.to_string())]
                        .into_iter()
                        .collect(),
                    schema: Arc::clone(&shared),
                })
                .collect(),
        }
    });
}

#[test]
fn file_listing_with_type_specific_estimator() {
    assert_within_5_percent("file listing (10,000 files)", || FileListing {
        directory: "s3://warehouse/db/events/dt=2026-12-01".into(),
        files: (0..10_000)
            .map(|i| FileStatus {
                path: format!(
                    "s3://warehouse/db/events/dt=2026-12-01/part-{i:05}-c000.snappy.parquet"
                ),
                length: 128 << 20,
                modification_time: 1_764_000_000_000 + i,
                block_offsets: (0..(i % 4) as u64).map(|b| b << 27).collect(),
            })
            .collect(),
    });
}

#[test]
fn hash_map_of_string_vectors() {
    assert_generic_within_5_percent("namespace index (200 × 25 tables)", || NamespaceIndex {
        tables: (0..200)
            .map(|ns| {
                (
                    format!("namespace_{ns}"),
                    (0..25).map(|t| format!("table_{ns}_{t}")).collect(),
                )
            })
            .collect(),
    });
}
