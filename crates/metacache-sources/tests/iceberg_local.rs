//! The Iceberg connector over the committed pyiceberg fixture: a SQL catalog (SQLite) and the
//! same warehouse found by directory; schemas, snapshots, partitions (with partition evolution)
//! and files through the caches; a new snapshot visible after REFRESH TABLE.

mod common;

use common::{create_iceberg, iceberg_copy, iceberg_fixture, sources, stats};
use metacache_engines::builtin::iceberg as def;
use metacache_sources::iceberg::{IcebergConnector, Storage};

#[tokio::test]
async fn the_sql_catalog_lists_and_describes_tables() {
    let sources = sources();
    create_iceberg(&sources, "ice", &iceberg_fixture(), true, &[]);
    let c = sources.connector("ice").expect("connector");
    assert_eq!(c.databases().await.expect("ns"), ["shop"]);
    assert_eq!(
        c.tables("shop").await.expect("tables"),
        ["customers", "trips"]
    );
    let schema = c.schema("shop", "trips").await.expect("schema");
    let columns: Vec<(&str, &str, bool)> = schema
        .columns
        .iter()
        .map(|c| (c.name.as_str(), c.data_type.as_str(), c.nullable))
        .collect();
    assert_eq!(
        columns,
        [
            ("trip_id", "long", false),
            ("pickup", "date", true),
            ("city", "string", true),
            ("fare", "double", true),
            ("tip", "double", true)
        ]
    );
    assert_eq!(schema.columns[4].comment, "added later");
    assert_eq!(schema.partition_keys, ["pickup"]);
    let info = c.table("shop", "trips").await.expect("table");
    assert_eq!(info.comment, "taxi trips by day");
    assert_eq!(info.format, "parquet");
    assert_eq!(info.partition_keys, ["pickup_day"]);
    assert!(
        info.location.ends_with("/iceberg/warehouse/shop/trips"),
        "{}",
        info.location
    );
    let e = c.schema("shop", "nope").await.expect_err("unknown");
    assert_eq!(e.to_string(), "Unknown table 'shop.nope' in catalog 'ice'");
    let e = c.tables("nope").await.expect_err("unknown namespace");
    assert!(e.is_not_found(), "{e}");
}

#[tokio::test]
async fn snapshots_partitions_and_files_of_the_current_snapshot() {
    let sources = sources();
    create_iceberg(&sources, "ice", &iceberg_fixture(), true, &[]);
    let c = sources.connector("ice").expect("connector");
    let snapshots = c.snapshots("shop", "trips").await.expect("snapshots");
    assert!(snapshots.len() >= 5, "{snapshots:?}");
    let operations: Vec<&str> = snapshots.iter().map(|s| s.operation.as_str()).collect();
    assert_eq!(operations[..3], ["append", "append", "append"]);
    assert!(
        operations.contains(&"overwrite") || operations.contains(&"delete"),
        "{operations:?}"
    );
    assert_eq!(snapshots.iter().filter(|s| s.current).count(), 1);
    assert!(snapshots.last().is_some_and(|s| s.current));

    let partitions = c
        .partitions("shop", "trips", &[])
        .await
        .expect("partitions");
    let names: Vec<&str> = partitions.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "pickup_day=2024-01-01",
            "pickup_day=2024-01-02",
            "pickup_day=2024-01-03",
            "pickup_day=2024-01-04"
        ]
    );
    assert_eq!(partitions[3].values, ["2024-01-04"]);
    // The fixture deleted every Paris trip: 3 Berlin rows a day, then 2 Rome rows on the 4th.
    let rows: Vec<u64> = partitions
        .iter()
        .map(|p| {
            p.totals
                .expect("iceberg partitions carry totals")
                .record_count
        })
        .collect();
    assert_eq!(rows, [3, 3, 3, 2]);
    let files = c.files("shop", "trips", &[]).await.expect("files");
    assert_eq!(files.len(), 4);
    let all: Vec<_> = files.iter().flat_map(|g| g.files.files.iter()).collect();
    assert!(
        all.iter().all(|f| f
            .path
            .contains("/iceberg/warehouse/shop/trips/data/pickup_day=")
            && f.path.ends_with(".parquet")
            && f.size > 0),
        "{all:?}"
    );
    for f in &all {
        let local = f.path.strip_prefix("file://").expect("local");
        assert!(std::path::Path::new(local).is_file(), "{local} exists");
    }
    let day = c
        .files(
            "shop",
            "trips",
            &[("pickup_day".into(), vec!["2024-01-04".into()])],
        )
        .await
        .expect("one day");
    assert_eq!(day.len(), 1);
    assert_eq!(day[0].partition.as_deref(), Some("pickup_day=2024-01-04"));

    // Partition evolution: files of the unpartitioned spec, then by country.
    let customers = c
        .partitions("shop", "customers", &[])
        .await
        .expect("customers");
    let names: Vec<&str> = customers.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["", "country=FR", "country=IT"]);
    let groups = c
        .files("shop", "customers", &[])
        .await
        .expect("customer files");
    assert_eq!(groups[0].partition, None);
    assert_eq!(groups.len(), 3);
}

fn iceberg_connector(sources: &metacache_sources::Sources, name: &str) -> IcebergConnector {
    let catalog = sources.manager().catalog(name).expect("catalog");
    let props = catalog.def().properties;
    let warehouse = metacache_sources::Warehouse::open(name, &props)
        .expect("opens")
        .expect("warehouse");
    let uri = props
        .get("uri")
        .expect("uri")
        .trim_start_matches("sqlite://")
        .to_owned();
    let tables = metacache_sources::iceberg::SqliteCatalog::new(name, uri.into(), None);
    IcebergConnector::new(catalog, Storage::Warehouse(warehouse), Box::new(tables))
}

#[tokio::test]
async fn every_iceberg_cache_is_fed_and_counted() {
    let sources = sources();
    create_iceberg(&sources, "ice", &iceberg_fixture(), true, &[]);
    let c = sources.connector("ice").expect("connector");
    for _ in 0..2 {
        c.partitions("shop", "trips", &[])
            .await
            .expect("partitions");
        c.files("shop", "trips", &[]).await.expect("files");
    }
    let table = stats(&sources, "ice", def::TABLE);
    assert_eq!(table.load_success_count, 1);
    assert!(
        table.hit_count >= 3 && table.estimated_weight > 0,
        "{table:?}"
    );
    let partition = stats(&sources, "ice", def::PARTITION);
    assert_eq!(partition.load_success_count, 1);
    assert!(partition.hit_count >= 1, "{partition:?}");
    let list = stats(&sources, "ice", def::LIST_PARTITIONS_VIEW);
    assert_eq!((list.load_success_count, list.hit_count), (1, 1));
    // Manifests are not kept while meta.cache.iceberg.manifest.enable is false (the default).
    let manifest = stats(&sources, "ice", def::MANIFEST);
    assert!(!manifest.effective_enabled);
    assert!(
        manifest.miss_count >= 4 && manifest.estimated_size == 0,
        "{manifest:?}"
    );

    let hooks = iceberg_connector(&sources, "ice");
    let latest = hooks
        .latest_snapshot("shop", "trips")
        .await
        .expect("latest");
    let snapshots = hooks.snapshot_partitions("shop", "trips").await.expect("p");
    assert!(latest.snapshot_id.is_some() && !snapshots.partitions.is_empty());
    let format = hooks.format("shop", "trips").await.expect("format");
    assert_eq!(
        (format.format_version, format.file_format.as_str()),
        (2, "parquet")
    );
    let mvcc = hooks.mvcc_view("shop", "trips").await.expect("mvcc");
    assert_eq!(mvcc.0.len(), 4);
    assert!(mvcc.0.iter().all(|(_, snapshot)| snapshot.is_some()));
    let eq = hooks
        .equality_delete_field_ids("shop", "trips")
        .await
        .expect("eq ids");
    assert!(
        eq.0.is_empty(),
        "pyiceberg deletes by rewriting files: {eq:?}"
    );
    for entry in [
        def::LATEST_SNAPSHOT,
        def::FORMAT,
        def::MVCC_PARTITION_VIEW,
        def::EQUALITY_DELETE_FIELD_IDS,
    ] {
        let s = stats(&sources, "ice", entry);
        assert_eq!(s.load_success_count, 1, "{entry}: {s:?}");
        assert_eq!(s.estimated_size, 1, "{entry}: {s:?}");
    }
}

#[tokio::test]
async fn enabled_manifest_cache_makes_warm_planning_read_no_manifest() {
    let sources = sources();
    create_iceberg(
        &sources,
        "ice",
        &iceberg_fixture(),
        true,
        &[("meta.cache.iceberg.manifest.enable", "true")],
    );
    let c = sources.connector("ice").expect("connector");
    c.files("shop", "trips", &[]).await.expect("cold");
    let cold = stats(&sources, "ice", def::MANIFEST);
    assert!(
        cold.effective_enabled && cold.load_success_count > 0,
        "{cold:?}"
    );
    c.files("shop", "trips", &[]).await.expect("warm");
    let warm = stats(&sources, "ice", def::MANIFEST);
    assert_eq!(warm.load_success_count, cold.load_success_count);
    assert_eq!(
        warm.hit_count - cold.hit_count,
        cold.load_success_count,
        "every manifest a hit"
    );
    assert!(warm.estimated_weight > 0);
}

#[tokio::test]
async fn the_directory_catalog_finds_the_newest_metadata() {
    let sources = sources();
    create_iceberg(&sources, "sql", &iceberg_fixture(), true, &[]);
    create_iceberg(&sources, "dir", &iceberg_fixture(), false, &[]);
    let by_sql = sources.connector("sql").expect("sql");
    let by_dir = sources.connector("dir").expect("dir");
    assert_eq!(by_dir.databases().await.expect("ns"), ["shop"]);
    assert_eq!(
        by_dir.tables("shop").await.expect("t"),
        ["customers", "trips"]
    );
    for table in ["trips", "customers"] {
        assert_eq!(
            by_dir
                .snapshots("shop", table)
                .await
                .expect("dir snapshots"),
            by_sql
                .snapshots("shop", table)
                .await
                .expect("sql snapshots"),
        );
    }
}

#[tokio::test]
async fn a_commit_is_visible_after_refresh_table() {
    let copy = iceberg_copy();
    let db = copy.path().join("catalog.db");
    let sql = |statement: &str| {
        let connection = rusqlite::Connection::open(&db).expect("open");
        connection.execute(statement, []).expect("update")
    };
    // Point the catalog at the previous metadata version, as before the last commit.
    let current: String = rusqlite::Connection::open(&db)
        .expect("open")
        .query_row(
            "SELECT metadata_location FROM iceberg_tables WHERE table_name = 'trips'",
            [],
            |r| r.get(0),
        )
        .expect("row");
    sql(
        "UPDATE iceberg_tables SET metadata_location = previous_metadata_location WHERE table_name = 'trips'",
    );
    let sources = sources();
    create_iceberg(&sources, "ice", copy.path(), true, &[]);
    let c = sources.connector("ice").expect("connector");
    let before = c.snapshots("shop", "trips").await.expect("before");
    let partitions_before = c.partitions("shop", "trips", &[]).await.expect("p");

    // The commit: the catalog's pointer moves to the new metadata file.
    sql(&format!(
        "UPDATE iceberg_tables SET metadata_location = '{current}' WHERE table_name = 'trips'"
    ));
    assert_eq!(c.snapshots("shop", "trips").await.expect("cached"), before);
    sources
        .manager()
        .refresh_table("ice", "shop", "trips")
        .expect("refresh");
    let after = c.snapshots("shop", "trips").await.expect("after");
    assert_eq!(after.len(), before.len() + 1);
    let partitions_after = c.partitions("shop", "trips", &[]).await.expect("p");
    assert_eq!(
        partitions_after.len(),
        partitions_before.len() + 1,
        "the new day appears"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_planners_share_one_load_per_value() {
    let sources = sources();
    create_iceberg(
        &sources,
        "ice",
        &iceberg_fixture(),
        true,
        &[("meta.cache.iceberg.manifest.enable", "true")],
    );
    let c = sources.connector("ice").expect("connector");
    let planners: Vec<_> = (0..48)
        .map(|_| {
            let c = std::sync::Arc::clone(&c);
            tokio::spawn(async move {
                c.partitions("shop", "trips", &[])
                    .await
                    .expect("partitions");
                c.files("shop", "trips", &[]).await.expect("files")
            })
        })
        .collect();
    for planner in planners {
        assert_eq!(planner.await.expect("joined").len(), 4);
    }
    assert_eq!(stats(&sources, "ice", def::TABLE).load_success_count, 1);
    assert_eq!(stats(&sources, "ice", def::PARTITION).load_success_count, 1);
    let manifests = stats(&sources, "ice", def::MANIFEST);
    assert_eq!(
        manifests.load_success_count, manifests.estimated_size,
        "each manifest once"
    );
    assert!(
        manifests.hit_count >= 47 * manifests.load_success_count / 2,
        "{manifests:?}"
    );
}

#[tokio::test]
async fn table_metadata_over_its_budget_is_served_with_the_reason() {
    let sources = sources();
    create_iceberg(
        &sources,
        "ice",
        &iceberg_fixture(),
        true,
        &[("meta.cache.iceberg.table.max-weight", "1KB")],
    );
    let c = sources.connector("ice").expect("connector");
    for _ in 0..2 {
        assert_eq!(
            c.schema("shop", "trips")
                .await
                .expect("schema")
                .columns
                .len(),
            5
        );
        assert!(c.snapshots("shop", "trips").await.expect("snapshots").len() >= 5);
    }
    let table = stats(&sources, "ice", def::TABLE);
    assert!(table.weight_reject_count >= 2, "{table:?}");
    assert_eq!(
        table.last_weight_reject_reason.as_deref(),
        Some("entry_too_large")
    );
    assert_eq!(table.estimated_size, 0);
}
