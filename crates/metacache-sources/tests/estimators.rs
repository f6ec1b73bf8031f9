//! The estimators of the Hive value types against the allocator: each value is built the way
//! its loader builds it while a counting global allocator records the bytes this thread asks
//! for, and the estimate must be within ±5 % (SPEC §10).

use std::collections::BTreeMap;

use futures::TryStreamExt;
use metacache_estimate::counting::{Counting, assert_estimate_within};
use metacache_sources::hive::{
    ColumnStatistics, HivePartition, HiveTable, PartitionNames, PartitionView,
};
use metacache_sources::{ColumnInfo, FileListing, TableSchema, Warehouse};
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::path::Path;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const TOLERANCE: f64 = 0.05;

fn columns(n: usize) -> Vec<ColumnInfo> {
    (0..n)
        .map(|i| ColumnInfo {
            name: format!("column_{i}"),
            data_type: if i % 3 == 0 {
                "decimal(18,4)".into()
            } else {
                "string".into()
            },
            nullable: i % 2 == 0,
            comment: if i % 4 == 0 {
                format!("what column {i} holds")
            } else {
                String::new()
            },
        })
        .collect()
}

#[tokio::test]
async fn file_listing_of_10000_files() {
    // Real object metadata from a listing, multiplied to 10,000 entries outside the measurement.
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("part-00000-c000.snappy.parquet"), b"PAR1").expect("write");
    let store = LocalFileSystem::new_with_prefix(dir.path()).expect("store");
    let listed: Vec<_> = store.list(None).try_collect().await.expect("list");
    let template = listed.into_iter().next().expect("one object");
    let objects: Vec<_> = (0..10_000)
        .map(|i| {
            let mut o = template.clone();
            o.location = Path::from(format!(
                "sales.db/orders/dt=2024-01-01/part-{i:05}-c000.snappy.parquet"
            ));
            o.size = 1000 + i;
            o
        })
        .collect();
    let warehouse = Warehouse::open(
        "c",
        &metacache_catalog::Properties::from_pairs([(
            "warehouse",
            format!("file://{}", dir.path().display()),
        )]),
    )
    .expect("opens")
    .expect("warehouse");
    assert_estimate_within("FileListing (10,000 files)", TOLERANCE, || {
        FileListing::from_objects(&warehouse, &objects)
    });
    assert_estimate_within("FileListing (3 files)", TOLERANCE, || {
        FileListing::from_objects(&warehouse, &objects[..3])
    });
}

fn partition_names(days: usize, regions: usize) -> Vec<String> {
    let mut names = Vec::new();
    for d in 0..days {
        for r in 0..regions {
            names.push(format!(
                "dt=2024-{:02}-{:02}/region=r{r}",
                d / 28 + 1,
                d % 28 + 1
            ));
        }
    }
    names.shrink_to_fit();
    names
}

#[test]
fn partition_names_and_view() {
    assert_estimate_within("PartitionNames (2,000)", TOLERANCE, || {
        PartitionNames(partition_names(200, 10))
    });
    let names = partition_names(200, 10);
    let keys = vec!["dt".to_owned(), "region".to_owned()];
    assert_estimate_within("PartitionView (2,000 partitions)", TOLERANCE, || {
        PartitionView::build(&keys, &names)
    });
    let few = partition_names(2, 2);
    assert_estimate_within("PartitionView (4 partitions)", TOLERANCE, || {
        PartitionView::build(&keys, &few)
    });
}

#[test]
fn table_objects_and_schemas() {
    assert_estimate_within("HiveTable (60 columns)", TOLERANCE, || HiveTable {
        database: "sales".into(),
        name: "orders".into(),
        location: "sales.db/orders".into(),
        format: "parquet".into(),
        comment: "orders by day and region".into(),
        columns: columns(60),
        partition_keys: columns(2),
        properties: BTreeMap::from([
            ("transient_lastDdlTime".to_owned(), "1704067200".to_owned()),
            ("numFiles".to_owned(), "10000".to_owned()),
        ]),
    });
    assert_estimate_within("TableSchema (60 columns)", TOLERANCE, || TableSchema {
        columns: columns(62),
        partition_keys: vec!["dt".into(), "region".into()],
    });
    assert_estimate_within("HivePartition", TOLERANCE, || HivePartition {
        values: vec!["2024-01-01".into(), "eu".into()],
        location: "sales.db/orders/dt=2024-01-01/region=eu".into(),
    });
    assert_estimate_within("ColumnStatistics", TOLERANCE, || ColumnStatistics {
        ndv: Some(60),
        null_count: Some(0),
        min: Some("1".into()),
        max: Some("60".into()),
        avg_size: None,
        max_size: None,
    });
}

/// Iceberg values projected from the real files of the pyiceberg fixture.
#[cfg(feature = "iceberg")]
mod iceberg_values {
    use std::path::PathBuf;

    use iceberg::spec::{Manifest, TableMetadata};
    use metacache_estimate::counting::assert_estimate_within;
    use metacache_sources::iceberg::{IcebergTable, ManifestValue};

    use super::TOLERANCE;

    fn table_dir(table: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/iceberg/warehouse/shop")
            .join(table)
            .join("metadata")
    }

    fn files(table: &str, suffix: &str) -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = std::fs::read_dir(table_dir(table))
            .expect("metadata dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.to_string_lossy().ends_with(suffix))
            .collect();
        found.sort();
        found
    }

    #[test]
    fn table_metadata_projection() {
        for table in ["trips", "customers"] {
            let newest = files(table, ".metadata.json")
                .pop()
                .expect("a metadata file");
            let bytes = std::fs::read(&newest).expect("read");
            let metadata: TableMetadata = serde_json::from_slice(&bytes).expect("parse");
            let location = newest.display().to_string();
            assert_estimate_within(&format!("IcebergTable ({table})"), TOLERANCE, || {
                IcebergTable::from_metadata(location.clone(), &metadata)
            });
        }
    }

    #[test]
    fn manifest_projection() {
        let manifests: Vec<PathBuf> = ["trips", "customers"]
            .iter()
            .flat_map(|t| files(t, "-m0.avro").into_iter().chain(files(t, "-m1.avro")))
            .collect();
        assert!(manifests.len() >= 5);
        for path in manifests {
            let bytes = std::fs::read(&path).expect("read");
            let manifest = Manifest::parse_avro(&bytes).expect("parse");
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            assert_estimate_within(&format!("ManifestValue ({name})"), TOLERANCE, || {
                ManifestValue::from_manifest(&manifest)
            });
        }
    }
}

#[cfg(feature = "postgres")]
#[test]
fn adbc_name_lists() {
    use metacache_sources::adbc::NameList;
    assert_estimate_within("NameList (500 tables)", TOLERANCE, || {
        let mut names: Vec<String> = (0..500).map(|i| format!("table_{i:04}")).collect();
        names.shrink_to_fit();
        NameList(names)
    });
}

#[cfg(feature = "paimon")]
mod paimon {
    use std::path::{Path, PathBuf};

    use metacache_estimate::counting::assert_estimate_within;
    use metacache_sources::paimon::{
        LatestSnapshot, ManifestEntry, PaimonPartitionView, PaimonSchema, SchemaFile, SnapshotFile,
        parse_json, read_manifest,
    };

    use super::TOLERANCE;

    fn table(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/paimon/warehouse/shop.db")
            .join(name)
    }

    fn schema(table_name: &str, id: i64) -> (Vec<u8>, String) {
        let path = table(table_name).join(format!("schema/schema-{id}"));
        (
            std::fs::read(&path).expect("schema"),
            path.display().to_string(),
        )
    }

    #[test]
    fn schemas_and_snapshots_of_the_fixture() {
        for (t, id) in [("events", 0), ("events", 1), ("users", 0), ("metrics", 0)] {
            let (bytes, location) = schema(t, id);
            let file: SchemaFile = parse_json(&bytes, &location).expect("parse");
            assert_estimate_within(&format!("PaimonSchema ({t}/{id})"), TOLERANCE, || {
                PaimonSchema::from_file(file.clone())
            });
        }
        let path = table("events").join("snapshot/snapshot-5");
        let bytes = std::fs::read(&path).expect("snapshot");
        let file: SnapshotFile = parse_json(&bytes, "snapshot-5").expect("parse");
        assert_estimate_within("LatestSnapshot", TOLERANCE, || {
            LatestSnapshot(Some(file.clone().into()))
        });
    }

    /// A serialized one-field BinaryRow holding a string of at most 7 bytes (inline).
    fn short_string_row(value: &str) -> Vec<u8> {
        let mut row = vec![0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0];
        let mut slot = [0u8; 8];
        slot[..value.len()].copy_from_slice(value.as_bytes());
        slot[7] = 0x80 | value.len() as u8;
        row.extend_from_slice(&slot);
        row
    }

    #[test]
    fn partition_views_of_the_fixture_and_of_2000_partitions() {
        let (bytes, location) = schema("events", 1);
        let events = PaimonSchema::from_file(parse_json(&bytes, &location).expect("parse"));
        let mut entries: Vec<ManifestEntry> = Vec::new();
        for manifest in std::fs::read_dir(table("events").join("manifest")).expect("dir") {
            let path = manifest.expect("entry").path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            if name
                .as_deref()
                .is_some_and(|n| !n.starts_with("manifest-list"))
            {
                let bytes = std::fs::read(&path).expect("manifest");
                entries.extend(read_manifest(&bytes, "manifest").expect("parse"));
            }
        }
        entries.retain(|e| !e.delete);
        assert!(entries.len() >= 5);
        assert_estimate_within("PaimonPartitionView (fixture)", TOLERANCE, || {
            PaimonPartitionView::build(&events, &entries).expect("view")
        });

        let mut schema = events.clone();
        schema.partition_keys = vec!["dt".to_owned()];
        let many: Vec<ManifestEntry> = (0..2_000)
            .map(|i| ManifestEntry {
                delete: false,
                partition: short_string_row(&format!("d{i:04}")),
                bucket: 0,
                file_name: format!("data-{i}.parquet"),
                file_size: 1_000,
                row_count: 10,
                creation_millis: Some(i),
                external_path: None,
            })
            .collect();
        assert_estimate_within("PaimonPartitionView (2,000 partitions)", TOLERANCE, || {
            PaimonPartitionView::build(&schema, &many).expect("view")
        });
    }
}

#[cfg(feature = "lance")]
#[test]
fn lance_table_access() {
    use metacache_sources::lance::TableAccess;
    assert_estimate_within("TableAccess (no options)", TOLERANCE, || TableAccess {
        uri: "file:///data/lance/namespace/items.lance".to_owned(),
        storage_options: BTreeMap::new(),
        vended: false,
    });
    assert_estimate_within("TableAccess (4 options)", TOLERANCE, || {
        let storage_options: BTreeMap<String, String> = [
            ("region", "eu-west-1"),
            ("endpoint", "http://127.0.0.1:8333"),
            ("allow_http", "true"),
            ("virtual_hosted_style_request", "false"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        TableAccess {
            uri: "s3://bucket/warehouse/f806e8c1_sales$orders".to_owned(),
            storage_options,
            vended: false,
        }
    });
}
