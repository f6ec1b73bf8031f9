//! A paimon catalog over the committed pypaimon warehouse, through the real binary, the real
//! mysql client and HTTP: SHOW/DESC/SHOW PARTITIONS through the paimon caches, single flight
//! across concurrent planners, REFRESH TABLE, and a quota rejection with its reason.

mod common;

use std::path::{Path, PathBuf};
use std::thread;

use common::{Server, data_dir};
use serde_json::Value;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/paimon/warehouse")
}

/// `(requests, hits, misses, loads, weight, rejects, reason)` of `entry` in catalog `pm`.
fn stats(server: &Server, entry: &str) -> Vec<String> {
    server.cache_row(
        "pm",
        entry,
        "request_count, hit_count, miss_count, load_success_count, estimated_weight, \
         weight_reject_count, last_weight_reject_reason",
    )
}

fn create(server: &Server, warehouse: &Path, extra: &str) {
    server.query(&format!(
        "CREATE CATALOG pm PROPERTIES ('type' = 'paimon', 'warehouse' = 'file://{}'{extra})",
        warehouse.display()
    ));
}

#[test]
fn sql_answers_through_the_paimon_caches() {
    let (_dir, data) = data_dir();
    let server = Server::start(&data, &[]);
    create(&server, &fixture(), "");
    assert_eq!(server.query("SHOW DATABASES FROM pm"), "Database\nshop\n");
    let tables = server.query("SHOW TABLES FROM pm.shop");
    assert_eq!(
        tables,
        "Tables_in_shop\nevents\nlevels\nmetrics\nnotes\nreadings\nticks\nticks_iso\nusers\n"
    );
    let desc = server.query("DESC pm.shop.events");
    assert!(desc.contains("\nchannel\tstring\tYes\t"), "{desc}");
    assert!(desc.contains("\ndt\tstring\tYes\t"), "{desc}");
    for _ in 0..2 {
        let partitions = server.query("SHOW PARTITIONS FROM pm.shop.events");
        assert_eq!(
            partitions,
            "Partition\ndt=2024-01-01\ndt=2024-01-02\ndt=2024-01-03\ndt=2024-01-04\n"
        );
    }
    let view = stats(&server, "paimon.partition-view");
    assert_eq!((view[1].as_str(), view[2].as_str()), ("1", "1"), "{view:?}");
    assert!(view[4].parse::<u64>().is_ok_and(|w| w > 0), "{view:?}");
    assert_eq!(stats(&server, "paimon-schema-at")[3], "1");
    assert_eq!(
        server.fails("DESC pm.shop.nope"),
        "ERROR 1146 (42S02) at line 1: Table 'shop.nope' doesn't exist"
    );
}

#[test]
fn concurrent_planners_share_one_load_and_refresh_shows_a_new_commit() {
    let (_dir, data) = data_dir();
    let copy = tempfile::tempdir().expect("temp dir");
    let warehouse = copy.path().join("paimon");
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .arg(fixture())
        .arg(&warehouse)
        .status()
        .expect("cp");
    assert!(copied.success());
    let server = Server::start(&data, &[]);
    create(&server, &warehouse, "");
    let path = "/api/v1/catalogs/pm/databases/shop/tables/events/partitions";
    thread::scope(|scope| {
        let planners: Vec<_> = (0..16)
            .map(|_| scope.spawn(|| server.http("GET", path, None, None)))
            .collect();
        for planner in planners {
            let (status, body) = planner.join().expect("planner");
            assert_eq!(status, 200, "{body}");
            let json: Value = serde_json::from_str(&body).expect("json");
            assert_eq!(
                json["partitions"].as_array().map(Vec::len),
                Some(4),
                "{body}"
            );
        }
    });
    let view = stats(&server, "paimon.partition-view");
    assert_eq!(view[0], "16", "{view:?}");
    assert_eq!(view[3], "1", "one load for 16 planners: {view:?}");

    let (status, body) = server.http(
        "GET",
        "/api/v1/catalogs/pm/databases/shop/tables/events/files?dt=2024-01-02",
        None,
        None,
    );
    assert_eq!(status, 200, "{body}");
    let files: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(files["file_count"], 1, "{body}");

    // A commit lands: cached until REFRESH TABLE.
    let snapshots = warehouse.join("shop.db/events/snapshot");
    let five = std::fs::read_to_string(snapshots.join("snapshot-5")).expect("read");
    let six = five
        .replacen("\"id\" : 5", "\"id\" : 6", 1)
        .replacen("\"id\": 5", "\"id\": 6", 1);
    std::fs::write(snapshots.join("snapshot-6"), six).expect("write");
    let current = |server: &Server| {
        let (_, body) = server.http(
            "GET",
            "/api/v1/catalogs/pm/databases/shop/tables/events/snapshots",
            None,
            None,
        );
        let json: Value = serde_json::from_str(&body).expect("json");
        json["snapshots"]
            .as_array()
            .and_then(|s| s.iter().find(|s| s["current"] == true))
            .map(|s| s["id"].clone())
    };
    assert_eq!(current(&server), Some(Value::from(5)));
    server.query("REFRESH TABLE pm.shop.events");
    assert_eq!(current(&server), Some(Value::from(6)));
}

#[test]
fn a_partition_view_over_its_quota_is_rejected_with_its_reason() {
    let (_dir, data) = data_dir();
    let server = Server::start(&data, &[]);
    create(
        &server,
        &fixture(),
        ", 'meta.cache.paimon.partition_view.max-weight' = '600B'",
    );
    for _ in 0..2 {
        let partitions = server.query("SHOW PARTITIONS FROM pm.shop.events");
        assert_eq!(
            partitions.lines().count(),
            5,
            "the answer is whole: {partitions}"
        );
    }
    let view = stats(&server, "paimon.partition-view");
    assert_eq!(view[3], "2", "not retained, so loaded again: {view:?}");
    assert_eq!(view[5], "2", "{view:?}");
    assert_eq!(view[6], "entry_too_large");
}
