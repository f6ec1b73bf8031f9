//! Refresh-ahead through the real binary (issue 17): an Iceberg table (pyiceberg's files, the
//! warehouse directory catalog) whose `iceberg-table` entry refreshes ahead by default, with a
//! 10 s TTL so the due point (1 s before) comes within the test. Reads past the due point are
//! hits; the refresh renews an unchanged table without reading it and replaces a changed one,
//! and no reader ever waits for a load after the first.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::*;

/// Copies the directory tree `from` to `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let path = entry.expect("entry").path();
        let target = to.join(path.file_name().expect("name"));
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).expect("copy");
        }
    }
}

fn refresh_column(server: &Server, column: &str) -> u64 {
    let out = server.query(&format!(
        "SELECT {column} FROM information_schema.catalog_meta_cache_refresh \
         WHERE catalog_name = 'ice' AND entry_name = 'iceberg-table'"
    ));
    out.lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("no refresh row: {out}"))
}

fn wait_for(limit: Duration, what: &str, mut check: impl FnMut() -> bool) {
    let started = Instant::now();
    while !check() {
        assert!(started.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn current_snapshot(server: &Server) -> serde_json::Value {
    let (status, body) = server.http(
        "GET",
        "/api/v1/catalogs/ice/databases/shop/tables/trips/snapshots",
        None,
        None,
    );
    assert_eq!(status, 200, "{body}");
    let snapshots: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    snapshots["snapshots"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["current"] == true))
        .cloned()
        .unwrap_or_default()
}

#[test]
fn an_iceberg_table_is_refreshed_ahead_of_its_ttl() {
    let (tmp, data) = data_dir();
    let warehouse = tmp.path().join("iceberg");
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/iceberg/warehouse"),
        &warehouse,
    );
    // The table as it was one commit ago: its newest metadata file is held back.
    let metadata = warehouse.join("shop/trips/metadata");
    let mut versions: Vec<_> = std::fs::read_dir(&metadata)
        .expect("metadata dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".metadata.json"))
        .collect();
    versions.sort();
    let newest = versions.pop().expect("metadata files");
    let held = tmp.path().join("held.metadata.json");
    std::fs::rename(&newest, &held).expect("hold back");

    let server = Server::start(&data, &[]);
    server.query(&format!(
        "CREATE CATALOG ice PROPERTIES ('type'='iceberg', 'iceberg.catalog.type'='hadoop', \
         'warehouse'='{}', 'location.rewrite-from'='file:///tmp/metacache-iceberg-fixture', \
         'meta.cache.iceberg.table.ttl-second'='10')",
        warehouse.display()
    ));
    let row = server.query(
        "SELECT AUTO_REFRESH, REFRESH_MARGIN_SECOND FROM information_schema.catalog_meta_cache_refresh \
         WHERE catalog_name = 'ice' AND entry_name = 'iceberg-table'",
    );
    assert!(
        row.ends_with("1\t1\n"),
        "on by default, due 1 s before a 10 s TTL: {row}"
    );
    let before = current_snapshot(&server);
    let loaded = Instant::now();

    // Past the due point (9 s) and before the hard TTL: a hit, and one refresh, which finds
    // the same metadata file and renews the value without reading it.
    std::thread::sleep(Duration::from_millis(9_300).saturating_sub(loaded.elapsed()));
    assert_eq!(current_snapshot(&server), before);
    wait_for(Duration::from_secs(10), "the unchanged refresh", || {
        refresh_column(&server, "REFRESH_UNCHANGED_COUNT") == 1
    });
    let renewed = Instant::now();

    // The commit lands; the next due point picks it up in the background.
    std::fs::rename(&held, &newest).expect("commit");
    std::thread::sleep(Duration::from_millis(9_300).saturating_sub(renewed.elapsed()));
    current_snapshot(&server);
    wait_for(
        Duration::from_secs(10),
        "the refresh that finds the commit",
        || refresh_column(&server, "REFRESH_SUCCESS_COUNT") == 1,
    );
    let after = current_snapshot(&server);
    assert_ne!(after["id"], before["id"], "{before} → {after}");

    // Nobody waited for a load after the first: one miss, three source loads (the load, the
    // unchanged check, the refresh that read the new file).
    let stats = server.cache_row("ice", "iceberg-table", "miss_count, load_success_count");
    assert_eq!(stats, ["1", "3"], "{stats:?}");
    assert_eq!(refresh_column(&server, "REFRESH_FAILURE_COUNT"), 0);
    let (_, metrics) = server.http("GET", "/metrics", None, None);
    assert!(
        metrics.contains(
            "metacache_cache_refreshes_total{catalog=\"ice\",engine=\"iceberg\",entry=\"iceberg-table\",outcome=\"unchanged\"} 1"
        ),
        "{metrics}"
    );
    assert!(
        metrics.contains("metacache_refresh_max_concurrency 10"),
        "{metrics}"
    );
}

#[test]
fn the_refresh_bound_is_a_live_node_key() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    server.query("ADMIN SET FRONTEND CONFIG ('external_meta_cache_refresh_max_concurrency' = '3')");
    let (_, metrics) = server.http("GET", "/metrics", None, None);
    assert!(
        metrics.contains("metacache_refresh_max_concurrency 3"),
        "{metrics}"
    );
    let error = server.fails(
        "ADMIN SET FRONTEND CONFIG ('external_meta_cache_refresh_max_concurrency' = 'many')",
    );
    assert!(
        error.contains("external_meta_cache_refresh_max_concurrency"),
        "{error}"
    );
    // A misspelt setting value is refused like enable's.
    let error = server.fails(
        "CREATE CATALOG c PROPERTIES ('type'='iceberg', 'meta.cache.iceberg.table.auto-refresh'='yes')",
    );
    assert!(
        error.contains("meta.cache.iceberg.table.auto-refresh"),
        "{error}"
    );
    server.query(
        "CREATE CATALOG c PROPERTIES ('type'='iceberg', 'meta.cache.iceberg.table.auto-refresh'='false')",
    );
    assert!(
        server
            .query("SHOW CREATE CATALOG c")
            .contains("meta.cache.iceberg.table.auto-refresh")
    );
    let row = server.cache_row("c", "iceberg-table", "auto_refresh");
    assert_eq!(row, ["0"]);
}

#[test]
fn a_paimon_tables_latest_snapshot_is_checked_ahead_by_listing() {
    let (_tmp, data) = data_dir();
    let warehouse =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/paimon/warehouse");
    let server = Server::start(&data, &[]);
    // TTL 4 s: due 0.4 s before it; `paimon.table` configures the latest-snapshot cache.
    server.query(&format!(
        "CREATE CATALOG pm PROPERTIES ('type' = 'paimon', 'warehouse' = 'file://{}', \
         'meta.cache.paimon.table.ttl-second' = '4')",
        warehouse.display()
    ));
    let partitions = || server.query("SHOW PARTITIONS FROM pm.shop.events");
    let loaded = Instant::now();
    let first = partitions();
    std::thread::sleep(Duration::from_millis(3_700).saturating_sub(loaded.elapsed()));
    assert_eq!(partitions(), first);
    let unchanged = || {
        let out = server.query(
            "SELECT REFRESH_UNCHANGED_COUNT FROM information_schema.catalog_meta_cache_refresh \
             WHERE catalog_name = 'pm' AND entry_name = 'paimon-latest-snapshot'",
        );
        out.lines().nth(1).unwrap_or_default().trim().to_owned()
    };
    wait_for(
        Duration::from_secs(10),
        "the listing finds the same snapshot",
        || unchanged() == "1",
    );
    // Past the first hard TTL, still the first load: no reader waited.
    std::thread::sleep(Duration::from_millis(4_500).saturating_sub(loaded.elapsed()));
    assert_eq!(partitions(), first);
    let stats = server.cache_row("pm", "paimon-latest-snapshot", "miss_count");
    assert_eq!(stats, ["1"], "{stats:?}");
}
