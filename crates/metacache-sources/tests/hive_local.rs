//! The Hive connector over the committed fixture warehouse on the local file system: what it
//! answers, and that the answers come through the catalog's caches (cold load, warm hit,
//! single flight, REFRESH TABLE, weight rejection).

mod common;

use std::sync::Arc;

use common::{create_hive, fixture_warehouse, sources, stats, url, warehouse_copy};
use metacache_engines::builtin::hive;
use metacache_sources::Error;

fn filter(pairs: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
    pairs
        .iter()
        .map(|(k, vs)| {
            (
                (*k).to_owned(),
                vs.iter().map(|v| (*v).to_owned()).collect(),
            )
        })
        .collect()
}

#[tokio::test]
async fn lists_databases_tables_and_schema() {
    let sources = sources();
    create_hive(&sources, "wh", &url(&fixture_warehouse()), &[]);
    let c = sources.connector("wh").expect("connector");
    assert_eq!(c.databases().await.expect("dbs"), ["sales", "web"]);
    assert_eq!(
        c.tables("sales").await.expect("tables"),
        ["customers", "orders"]
    );
    let schema = c.schema("sales", "orders").await.expect("schema");
    let columns: Vec<(&str, &str)> = schema
        .columns
        .iter()
        .map(|c| (c.name.as_str(), c.data_type.as_str()))
        .collect();
    assert_eq!(
        columns,
        [
            ("order_id", "bigint"),
            ("customer_id", "bigint"),
            ("amount", "decimal(10,2)"),
            ("status", "string"),
            ("dt", "string"),
            ("region", "string")
        ]
    );
    assert!(!schema.columns[0].nullable);
    assert_eq!(schema.partition_keys, ["dt", "region"]);
    let info = c.table("sales", "orders").await.expect("table");
    assert_eq!(info.format, "parquet");
    assert_eq!(info.comment, "orders by day and region");
    assert!(
        info.location.ends_with("/warehouse/sales.db/orders"),
        "{}",
        info.location
    );
}

#[tokio::test]
async fn unknown_objects_and_missing_sources_are_clear_errors() {
    let sources = sources();
    create_hive(&sources, "wh", &url(&fixture_warehouse()), &[]);
    let c = sources.connector("wh").expect("connector");
    let e = c.schema("sales", "nope").await.expect_err("unknown table");
    assert!(e.is_not_found(), "{e}");
    assert_eq!(e.to_string(), "Unknown table 'sales.nope' in catalog 'wh'");
    let e = c.tables("nope").await.expect_err("unknown database");
    assert_eq!(e.to_string(), "Unknown database 'nope' in catalog 'wh'");
    // A failed load is not cached: the table's schema loads fine right after.
    assert!(c.schema("sales", "orders").await.is_ok());

    create_hive(&sources, "bare", "", &[]);
    let e = sources.connector("bare").err().expect("no source");
    assert!(matches!(e, Error::NoSource { .. }), "{e}");
    create_hive(&sources, "relative", "some/dir", &[]);
    let e = sources.connector("relative").err().expect("relative path");
    assert!(e.to_string().contains("file:///absolute/path"), "{e}");
    create_hive(&sources, "missing", "file:///no/such/warehouse/dir", &[]);
    assert!(sources.connector("missing").is_err());
}

#[tokio::test]
async fn partitions_are_parsed_and_pruned_through_the_view() {
    let sources = sources();
    create_hive(&sources, "wh", &url(&fixture_warehouse()), &[]);
    let c = sources.connector("wh").expect("connector");
    let all = c
        .partitions("sales", "orders", &[])
        .await
        .expect("partitions");
    let names: Vec<&str> = all.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "dt=2024-01-01/region=eu",
            "dt=2024-01-01/region=us",
            "dt=2024-01-02/region=eu",
            "dt=2024-01-02/region=us",
            "dt=2024-01-03/region=eu",
            "dt=2024-01-03/region=us"
        ]
    );
    assert_eq!(all[0].values, ["2024-01-01", "eu"]);
    let pruned = c
        .partitions(
            "sales",
            "orders",
            &filter(&[
                ("region", &["eu"]),
                ("dt", &["2024-01-01", "2024-01-03", "1999-01-01"]),
            ]),
        )
        .await
        .expect("pruned");
    let names: Vec<&str> = pruned.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["dt=2024-01-01/region=eu", "dt=2024-01-03/region=eu"]
    );
    let none = c
        .partitions("sales", "orders", &filter(&[("no_such_column", &["x"])]))
        .await
        .expect("unknown column selects nothing");
    assert!(none.is_empty());

    // Hive-escaped values come back unescaped; the NULL partition keeps its marker.
    let events = c.partitions("web", "events", &[]).await.expect("events");
    let values: Vec<&str> = events.iter().map(|p| p.values[0].as_str()).collect();
    assert_eq!(
        values,
        [
            "2024-01-01 10:00",
            "2024-01-01 11:00",
            "__HIVE_DEFAULT_PARTITION__"
        ]
    );
    assert_eq!(events[0].name, "hour=2024-01-01 10%3A00");
    assert!(
        c.partitions("sales", "customers", &[])
            .await
            .expect("none")
            .is_empty()
    );
}

#[tokio::test]
async fn files_skip_hidden_ones_and_follow_the_filter() {
    let sources = sources();
    create_hive(&sources, "wh", &url(&fixture_warehouse()), &[]);
    let c = sources.connector("wh").expect("connector");
    let groups = c.files("sales", "orders", &[]).await.expect("files");
    assert_eq!(groups.len(), 6);
    let files: Vec<_> = groups.iter().flat_map(|g| g.files.files.iter()).collect();
    assert_eq!(files.len(), 12, "_SUCCESS markers are not data files");
    assert!(
        files
            .iter()
            .all(|f| f.path.ends_with(".parquet") && f.size > 0)
    );
    assert!(files[0].path.starts_with("file:///"), "{}", files[0].path);
    let day = c
        .files("sales", "orders", &filter(&[("dt", &["2024-01-02"])]))
        .await
        .expect("one day");
    assert_eq!(day.len(), 2);
    assert_eq!(day[0].partition.as_deref(), Some("dt=2024-01-02/region=eu"));

    let customers = c
        .files("sales", "customers", &[])
        .await
        .expect("unpartitioned");
    assert_eq!(customers.len(), 1);
    assert_eq!(customers[0].partition, None);
    assert_eq!(customers[0].files.files.len(), 2);
    let events = c.files("web", "events", &[]).await.expect("events");
    assert!(
        events.iter().all(|g| g.files.files.len() == 1),
        ".crc files are hidden: {events:?}"
    );
}

#[tokio::test]
async fn column_statistics_come_from_the_statistics_file() {
    let sources = sources();
    create_hive(&sources, "wh", &url(&fixture_warehouse()), &[]);
    let hive = hive_connector(&sources);
    let stats = hive
        .column_stats("sales", "orders", "order_id")
        .await
        .expect("stats")
        .expect("order_id has statistics");
    assert_eq!(stats.ndv, Some(60));
    assert_eq!(stats.min.as_deref(), Some("1"));
    assert_eq!(stats.max.as_deref(), Some("60"));
    assert!(
        hive.column_stats("sales", "orders", "customer_id")
            .await
            .expect("no stats")
            .is_none()
    );
    assert!(
        hive.column_stats("sales", "customers", "name")
            .await
            .expect("no file")
            .is_none()
    );
    let e = hive
        .column_stats("sales", "orders", "nope")
        .await
        .expect_err("unknown column");
    assert!(e.is_not_found());
}

fn hive_connector(sources: &metacache_sources::Sources) -> metacache_sources::hive::HiveConnector {
    let catalog = sources.manager().catalog("wh").expect("catalog");
    let warehouse = metacache_sources::Warehouse::open("wh", &catalog.def().properties)
        .expect("opens")
        .expect("has a warehouse");
    metacache_sources::hive::HiveConnector::new(catalog, warehouse)
}

#[tokio::test]
async fn cold_loads_then_warm_hits_show_in_the_statistics() {
    let sources = sources();
    create_hive(&sources, "wh", &url(&fixture_warehouse()), &[]);
    let c = sources.connector("wh").expect("connector");
    let cold = c.files("sales", "orders", &[]).await.expect("cold");
    let file = stats(&sources, "wh", hive::FILE);
    assert_eq!((file.miss_count, file.hit_count), (6, 0));
    assert_eq!(file.load_success_count, 6);
    assert_eq!(file.estimated_size, 6);
    assert!(file.estimated_weight > 0);
    let warm = c.files("sales", "orders", &[]).await.expect("warm");
    let file = stats(&sources, "wh", hive::FILE);
    assert_eq!((file.miss_count, file.hit_count), (6, 6));
    assert_eq!(file.load_success_count, 6);
    assert!(
        cold.iter()
            .zip(&warm)
            .all(|(a, b)| a.files.ptr_eq(&b.files)),
        "warm answers are the cached values themselves"
    );
    for entry in [hive::TABLE, hive::PARTITION_VIEW, hive::PARTITION] {
        let s = stats(&sources, "wh", entry);
        assert!(s.hit_count > 0, "{entry}: {s:?}");
        assert!(s.estimated_weight > 0, "{entry}: {s:?}");
    }
    // The names feed the view once; planners then ask the view.
    let names = stats(&sources, "wh", hive::PARTITION_NAMES);
    assert_eq!((names.load_success_count, names.estimated_size), (1, 1));
    let view = stats(&sources, "wh", hive::PARTITION_VIEW);
    assert_eq!(view.load_success_count, 1);
    // The catalog budget holds what its caches hold.
    let catalog = sources.manager().catalog("wh").expect("catalog");
    let held: u64 = catalog
        .cache_rows()
        .iter()
        .map(|r| r.stats.estimated_weight)
        .sum();
    assert_eq!(catalog.budget().used(), held);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_planners_share_one_load_per_value() {
    let sources = sources();
    create_hive(&sources, "wh", &url(&fixture_warehouse()), &[]);
    let c = sources.connector("wh").expect("connector");
    let planners: Vec<_> = (0..64)
        .map(|_| {
            let c = Arc::clone(&c);
            tokio::spawn(async move { c.files("sales", "orders", &[]).await })
        })
        .collect();
    for planner in planners {
        let groups = planner.await.expect("joined").expect("files");
        assert_eq!(groups.len(), 6);
    }
    assert_eq!(stats(&sources, "wh", hive::FILE).load_success_count, 6);
    assert_eq!(stats(&sources, "wh", hive::TABLE).load_success_count, 1);
    assert_eq!(
        stats(&sources, "wh", hive::PARTITION_NAMES).load_success_count,
        1
    );
    assert_eq!(
        stats(&sources, "wh", hive::PARTITION_VIEW).load_success_count,
        1
    );
}

#[tokio::test]
async fn refresh_table_makes_a_new_partition_and_file_visible() {
    let copy = warehouse_copy();
    let sources = sources();
    create_hive(&sources, "wh", &url(copy.path()), &[]);
    let c = sources.connector("wh").expect("connector");
    assert_eq!(
        c.partitions("sales", "orders", &[]).await.expect("p").len(),
        6
    );
    let customers = c.files("sales", "customers", &[]).await.expect("f");
    assert_eq!(customers[0].files.files.len(), 2);

    let orders = copy.path().join("sales.db/orders");
    std::fs::create_dir_all(orders.join("dt=2024-01-04/region=eu")).expect("mkdir");
    std::fs::write(
        orders.join("dt=2024-01-04/region=eu/part-0.parquet"),
        b"PAR1",
    )
    .expect("w");
    std::fs::write(
        copy.path().join("sales.db/customers/part-00002.parquet"),
        b"PAR1",
    )
    .expect("write");
    // Cached: not visible yet.
    assert_eq!(
        c.partitions("sales", "orders", &[]).await.expect("p").len(),
        6
    );
    assert_eq!(
        c.files("sales", "customers", &[]).await.expect("f")[0]
            .files
            .files
            .len(),
        2
    );

    let removed = sources
        .manager()
        .refresh_table("wh", "sales", "orders")
        .expect("refresh");
    assert!(removed > 0);
    let partitions = c.partitions("sales", "orders", &[]).await.expect("p");
    assert_eq!(partitions.len(), 7);
    assert_eq!(partitions[6].name, "dt=2024-01-04/region=eu");
    // Only the refreshed table: customers is still the cached listing.
    assert_eq!(
        c.files("sales", "customers", &[]).await.expect("f")[0]
            .files
            .files
            .len(),
        2
    );
    sources
        .manager()
        .refresh_database("wh", "sales")
        .expect("refresh db");
    assert_eq!(
        c.files("sales", "customers", &[]).await.expect("f")[0]
            .files
            .files
            .len(),
        3
    );
}

#[tokio::test]
async fn a_listing_over_its_budget_is_served_but_not_kept_and_says_why() {
    let sources = sources();
    create_hive(
        &sources,
        "wh",
        &url(&fixture_warehouse()),
        &[("meta.cache.hive.file.max-weight", "600B")],
    );
    let c = sources.connector("wh").expect("connector");
    for _ in 0..2 {
        let groups = c
            .files("sales", "orders", &[])
            .await
            .expect("served anyway");
        assert_eq!(
            groups.iter().map(|g| g.files.files.len()).sum::<usize>(),
            12
        );
    }
    let file = stats(&sources, "wh", hive::FILE);
    assert!(file.weight_reject_count > 0, "{file:?}");
    let reason = file.last_weight_reject_reason.clone().expect("a reason");
    assert_eq!(reason, "entry_too_large");
    assert!(file.estimated_weight <= 600, "{file:?}");
    assert!(
        file.load_success_count > 6,
        "rejected listings load again: {file:?}"
    );
}

#[tokio::test]
async fn alter_of_the_warehouse_builds_a_new_connector() {
    let copy = warehouse_copy();
    let sources = sources();
    create_hive(&sources, "wh", &url(&fixture_warehouse()), &[]);
    let first = sources.connector("wh").expect("connector");
    assert!(Arc::ptr_eq(&first, &sources.connector("wh").expect("same")));
    std::fs::remove_dir_all(copy.path().join("web.db")).expect("rm");
    sources
        .manager()
        .alter_catalog(
            "wh",
            metacache_catalog::Properties::from_pairs([("warehouse", url(copy.path()))]),
        )
        .expect("alter");
    let second = sources.connector("wh").expect("rebuilt");
    assert!(!Arc::ptr_eq(&first, &second));
    assert_eq!(second.databases().await.expect("dbs"), ["sales"]);
}
