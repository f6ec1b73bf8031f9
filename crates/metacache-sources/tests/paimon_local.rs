//! The Paimon connector over the committed pypaimon fixture (tests/fixtures/paimon): schemas
//! at a snapshot, the latest snapshot, the partition view from manifests (an overwrite's
//! deletes applied, integer and NULL partition values), files, and the `paimon.cache-enabled`
//! rule for the connector's own manifest cache.

mod common;

use std::path::{Path, PathBuf};

use common::{create, sources, stats, url};
use metacache_engines::builtin::paimon as def;
use metacache_sources::paimon::PaimonConnector;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/paimon/warehouse")
}

fn create_paimon(
    sources: &metacache_sources::Sources,
    name: &str,
    dir: &Path,
    extra: &[(&str, &str)],
) {
    let warehouse = url(dir);
    let mut pairs = vec![("type", "paimon"), ("warehouse", warehouse.as_str())];
    pairs.extend_from_slice(extra);
    create(sources, name, pairs);
}

fn copy_fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(format!("{}/.", fixture().display()))
        .arg(dir.path())
        .status()
        .expect("cp");
    assert!(status.success());
    dir
}

/// Every listed file is on disk where the listing says, with the listed size.
fn assert_files_on_disk(groups: &[metacache_sources::PartitionFiles]) {
    for file in groups.iter().flat_map(|g| g.files.files.iter()) {
        let path = file.path.trim_start_matches("file://");
        let on_disk = std::fs::metadata(path)
            .unwrap_or_else(|e| panic!("{path} is not where Paimon wrote it: {e}"));
        assert_eq!(on_disk.len(), file.size, "{path}");
        assert!(file.modified_millis > 0, "{path}");
    }
}

#[tokio::test]
async fn databases_tables_and_schemas_of_append_and_primary_key_tables() {
    let sources = sources();
    create_paimon(&sources, "pm", &fixture(), &[]);
    let c = sources.connector("pm").expect("connector");
    assert_eq!(c.kind(), "paimon");
    assert_eq!(c.databases().await.expect("dbs"), ["shop"]);
    assert_eq!(
        c.tables("shop").await.expect("tables"),
        [
            "events",
            "levels",
            "metrics",
            "notes",
            "readings",
            "ticks",
            "ticks_iso",
            "users"
        ]
    );

    // events gained a column after four commits: the latest snapshot's schema has it.
    let schema = c.schema("shop", "events").await.expect("schema");
    let columns: Vec<(&str, &str, bool)> = schema
        .columns
        .iter()
        .map(|c| (c.name.as_str(), c.data_type.as_str(), c.nullable))
        .collect();
    assert_eq!(
        columns,
        [
            ("id", "bigint", true),
            ("dt", "string", true),
            ("amount", "double", true),
            ("channel", "string", true)
        ]
    );
    assert_eq!(schema.partition_keys, ["dt"]);
    let info = c.table("shop", "events").await.expect("table");
    assert_eq!(info.comment, "click events");
    assert_eq!(info.format, "parquet");
    assert!(
        info.location.ends_with("/paimon/warehouse/shop.db/events"),
        "{}",
        info.location
    );

    let pk = c.schema("shop", "users").await.expect("users");
    assert!(!pk.columns[0].nullable, "primary-key column is NOT NULL");
    let connector = PaimonConnector::open(
        sources.manager().catalog("pm").expect("catalog"),
        &sources
            .manager()
            .catalog("pm")
            .expect("catalog")
            .def()
            .properties,
        None,
    )
    .expect("open");
    let (latest, users) = connector.current("shop", "users").await.expect("current");
    assert_eq!(users.primary_keys, ["id", "region"]);
    assert_eq!(users.options.get("bucket").map(String::as_str), Some("2"));
    assert_eq!(latest.0.as_ref().map(|s| s.id), Some(2));

    // The schema of the first snapshot of events is the old one (paimon-schema-at).
    let old = connector
        .schema_at("shop", "events", 0)
        .await
        .expect("schema 0");
    assert_eq!(old.columns.len(), 3);

    let e = c.schema("shop", "nope").await.expect_err("unknown table");
    assert_eq!(e.to_string(), "Unknown table 'shop.nope' in catalog 'pm'");
    assert!(
        c.tables("nope")
            .await
            .expect_err("unknown db")
            .is_not_found()
    );
}

#[tokio::test]
async fn partitions_come_from_the_manifests_with_deletes_applied() {
    let sources = sources();
    create_paimon(&sources, "pm", &fixture(), &[]);
    let c = sources.connector("pm").expect("connector");
    let partitions = c
        .partitions("shop", "events", &[])
        .await
        .expect("partitions");
    let seen: Vec<(&str, u64, u64)> = partitions
        .iter()
        .map(|p| {
            let t = p.totals.expect("totals");
            (p.name.as_str(), t.file_count, t.record_count)
        })
        .collect();
    // Snapshot 4 overwrote dt=2024-01-02: its one-row file is deleted, a two-row file added.
    assert_eq!(
        seen,
        [
            ("dt=2024-01-01", 2, 3),
            ("dt=2024-01-02", 1, 2),
            ("dt=2024-01-03", 1, 1),
            ("dt=2024-01-04", 1, 1)
        ]
    );
    let total: u64 = partitions
        .iter()
        .map(|p| p.totals.map_or(0, |t| t.record_count))
        .sum();
    assert_eq!(total, 7, "the latest snapshot's totalRecordCount");

    let metrics = c.partitions("shop", "metrics", &[]).await.expect("metrics");
    let names: Vec<&str> = metrics.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "year=2023/host=a",
            "year=2024/host=__DEFAULT_PARTITION__",
            "year=2024/host=a"
        ]
    );
    // Each name is the directory pypaimon wrote the files into.
    for p in &metrics {
        let dir = p
            .location
            .as_deref()
            .expect("location")
            .trim_start_matches("file://");
        assert!(Path::new(dir).is_dir(), "{dir}");
    }
    let filter = [("year".to_owned(), vec!["2024".to_owned()])];
    assert_eq!(
        c.partitions("shop", "metrics", &filter)
            .await
            .expect("pruned")
            .len(),
        2
    );
    let nulls = [("host".to_owned(), vec!["__DEFAULT_PARTITION__".to_owned()])];
    assert_eq!(
        c.partitions("shop", "metrics", &nulls)
            .await
            .expect("null")
            .len(),
        1
    );

    // Warm: the view is a hit; the latest snapshot and schema too.
    c.partitions("shop", "events", &[]).await.expect("again");
    let view = stats(&sources, "pm", def::PARTITION_VIEW);
    // Misses: events, metrics; hits: the two pruned metrics requests and events again.
    assert_eq!((view.hit_count, view.miss_count), (3, 2), "{view:?}");
    assert!(view.estimated_weight > 0);
    let latest = stats(&sources, "pm", def::LATEST_SNAPSHOT);
    assert!(latest.hit_count >= 1, "{latest:?}");
    assert_eq!(
        stats(&sources, "pm", def::SCHEMA_AT).miss_count,
        2,
        "one per table"
    );
}

#[tokio::test]
async fn files_are_the_live_data_files_of_the_latest_snapshot() {
    let sources = sources();
    create_paimon(&sources, "pm", &fixture(), &[]);
    let c = sources.connector("pm").expect("connector");
    let groups = c.files("shop", "events", &[]).await.expect("files");
    let counts: Vec<(Option<&str>, usize)> = groups
        .iter()
        .map(|g| (g.partition.as_deref(), g.files.files.len()))
        .collect();
    assert_eq!(
        counts,
        [
            (Some("dt=2024-01-01"), 2),
            (Some("dt=2024-01-02"), 1),
            (Some("dt=2024-01-03"), 1),
            (Some("dt=2024-01-04"), 1)
        ]
    );
    assert_files_on_disk(&groups);
    let pk = c
        .files(
            "shop",
            "users",
            &[("region".to_owned(), vec!["eu".to_owned()])],
        )
        .await;
    let pk = pk.expect("users");
    assert_eq!(pk.len(), 1);
    let buckets: Vec<bool> = pk[0]
        .files
        .files
        .iter()
        .map(|f| f.path.contains("/region=eu/bucket-"))
        .collect();
    assert_eq!(buckets, [true, true, true]);
    let unpartitioned = c.files("shop", "notes", &[]).await.expect("notes");
    assert_eq!(unpartitioned.len(), 1);
    assert_eq!(unpartitioned[0].partition, None);
    assert!(
        unpartitioned[0].files.files[0]
            .path
            .contains("/notes/bucket-0/")
    );

    let snapshots = c.snapshots("shop", "events").await.expect("snapshots");
    let kinds: Vec<&str> = snapshots.iter().map(|s| s.operation.as_str()).collect();
    assert_eq!(kinds, ["append", "append", "append", "overwrite", "append"]);
    assert!(snapshots[4].current && !snapshots[3].current);
    assert_eq!(snapshots[4].parent_id, Some(4));
}

#[tokio::test]
async fn date_and_decimal_partitions_name_the_directories_paimon_wrote() {
    let sources = sources();
    create_paimon(&sources, "pm", &fixture(), &[]);
    let c = sources.connector("pm").expect("connector");
    let partitions = c.partitions("shop", "readings", &[]).await.expect("p");
    let named: Vec<(&str, Vec<&str>)> = partitions
        .iter()
        .map(|p| {
            (
                p.name.as_str(),
                p.values.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    // Paimon's default legacy names: a DATE is its day number (1969-12-31 is -1), a decimal
    // keeps its scale.
    assert_eq!(
        named,
        [
            ("day=-1/band=12.50", vec!["-1", "12.50"]),
            ("day=19723/band=-0.75", vec!["19723", "-0.75"]),
            ("day=19723/band=12.50", vec!["19723", "12.50"]),
        ]
    );
    let groups = c.files("shop", "readings", &[]).await.expect("files");
    assert_eq!(groups.len(), 3);
    assert_files_on_disk(&groups);
    let filter = [("day".to_owned(), vec!["19723".to_owned()])];
    assert_eq!(
        c.partitions("shop", "readings", &filter)
            .await
            .expect("pruned")
            .len(),
        2
    );
}

#[tokio::test]
async fn timestamp_and_floating_partitions_name_the_directories_paimon_wrote() {
    let sources = sources();
    create_paimon(&sources, "pm", &fixture(), &[]);
    let c = sources.connector("pm").expect("connector");
    // Java's Double/Float.toString; legacy timestamp names (Java's LocalDateTime text),
    // TIMESTAMP(6) in the variable-length layout and TIMESTAMP(3) in the compact one; then
    // `partition.legacy-name=false`.
    let expected: [(&str, &[&str]); 3] = [
        (
            "levels",
            &[
                "level=1.0/ratio=0.5",
                "level=1.0E10/ratio=0.1",
                "level=1.5E-5/ratio=-2.0",
            ],
        ),
        (
            "ticks",
            &[
                "at=2024-01-01T12%3A00%3A30.123/at_ms=2024-01-01T12%3A00",
                "at=2024-01-01T12%3A00%3A30.123456/at_ms=2024-01-01T12%3A00%3A00.005",
                "at=2024-01-01T12%3A00/at_ms=2024-01-01T12%3A00",
            ],
        ),
        (
            "ticks_iso",
            &[
                "day=2024-01-01/at=2024-01-01 12%3A00%3A00.000",
                "day=2024-01-01/at=2024-01-01 12%3A00%3A30.123",
            ],
        ),
    ];
    for (table, names) in expected {
        let partitions = c.partitions("shop", table, &[]).await.expect("p");
        let got: Vec<&str> = partitions.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(got, names, "{table}");
        assert_files_on_disk(&c.files("shop", table, &[]).await.expect("files"));
    }
    let values = &c.partitions("shop", "ticks", &[]).await.expect("p")[1].values;
    let filter = [("level".to_owned(), vec!["1.0E10".to_owned()])];
    assert_eq!(
        c.partitions("shop", "levels", &filter)
            .await
            .expect("pruned")
            .len(),
        1
    );
    assert_eq!(
        values,
        &["2024-01-01T12:00:30.123456", "2024-01-01T12:00:00.005"]
    );
}

#[tokio::test]
async fn refresh_table_shows_a_new_commit() {
    let dir = copy_fixture();
    let sources = sources();
    create_paimon(&sources, "pm", dir.path(), &[]);
    let c = sources.connector("pm").expect("connector");
    assert_eq!(
        c.partitions("shop", "notes", &[]).await.expect("p").len(),
        1
    );
    let before = c.files("shop", "notes", &[]).await.expect("files");
    assert_eq!(before[0].files.files.len(), 1);

    // A new commit appears as snapshot-2 (a copy of snapshot-1 under the next id, which
    // lists the same manifests): cached, the latest snapshot is still 1.
    let table = dir.path().join("shop.db/notes/snapshot");
    let one = std::fs::read_to_string(table.join("snapshot-1")).expect("snapshot-1");
    std::fs::write(
        table.join("snapshot-2"),
        one.replace("\"id\" : 1", "\"id\" : 2")
            .replace("\"id\": 1", "\"id\": 2"),
    )
    .expect("snapshot-2");
    let cached = c.snapshots("shop", "notes").await.expect("snapshots");
    assert_eq!(
        cached
            .iter()
            .filter(|s| s.current)
            .map(|s| s.id)
            .collect::<Vec<_>>(),
        [1]
    );
    sources
        .manager()
        .refresh_table("pm", "shop", "notes")
        .expect("refresh");
    let fresh = c.snapshots("shop", "notes").await.expect("snapshots");
    assert_eq!(
        fresh
            .iter()
            .filter(|s| s.current)
            .map(|s| s.id)
            .collect::<Vec<_>>(),
        [2]
    );
}

#[tokio::test]
async fn the_manifest_cache_follows_the_paimon_cache_enabled_rule() {
    async fn manifest_reads(sources: &metacache_sources::Sources, catalog: &str) -> (u64, u64) {
        let manager = sources.manager();
        let cat = manager.catalog(catalog).expect("catalog");
        let connector =
            PaimonConnector::open(cat.clone(), &cat.def().properties, None).expect("open");
        use metacache_sources::Connector;
        connector.files("shop", "events", &[]).await.expect("files");
        let first = connector.manifest_cache().reads();
        connector.files("shop", "events", &[]).await.expect("files");
        (first, connector.manifest_cache().reads() - first)
    }
    let sources = sources();
    // No node or catalog limit: the connector keeps parsed manifests (like Paimon's SDK).
    create_paimon(&sources, "free", &fixture(), &[]);
    let (cold, warm) = manifest_reads(&sources, "free").await;
    assert!(
        cold >= 5,
        "every manifest of the snapshot is read once: {cold}"
    );
    assert_eq!(warm, 0, "the second planning reads no manifest");

    // A catalog limit applies: a second, unaccounted cache would undermine it, so it is off.
    create_paimon(
        &sources,
        "governed",
        &fixture(),
        &[("meta.cache.max-weight", "64MB")],
    );
    let (cold, warm) = manifest_reads(&sources, "governed").await;
    assert_eq!(warm, cold, "every planning reads the manifests again");

    // An explicit paimon.cache-enabled takes precedence, either way.
    create_paimon(
        &sources,
        "forced",
        &fixture(),
        &[
            ("meta.cache.max-weight", "64MB"),
            ("paimon.cache-enabled", "true"),
        ],
    );
    assert_eq!(manifest_reads(&sources, "forced").await.1, 0);
    create_paimon(
        &sources,
        "refused",
        &fixture(),
        &[("paimon.cache-enabled", "false")],
    );
    let (cold, warm) = manifest_reads(&sources, "refused").await;
    assert_eq!(warm, cold);

    // A node limit set at run time turns the default off at once.
    sources
        .manager()
        .set_config("external_meta_cache_max_weight", "1GB")
        .expect("node limit");
    let (cold, warm) = manifest_reads(&sources, "free").await;
    assert_eq!(warm, cold);

    create_paimon(
        &sources,
        "bad",
        &fixture(),
        &[("paimon.cache-enabled", "yes")],
    );
    let Err(e) = sources.connector("bad") else {
        panic!("not a boolean");
    };
    assert_eq!(
        e.to_string(),
        "Invalid connection property of catalog 'bad': 'paimon.cache-enabled' must be true or false, not 'yes'"
    );
}
