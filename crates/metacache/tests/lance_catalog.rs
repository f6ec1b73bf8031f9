//! A lance catalog over a copy of the committed pylance directory namespace, through the real
//! binary, the mysql client and HTTP: table access served from `lance-table-access`, one load
//! for concurrent engines, REFRESH TABLE, the bypass path, and a quota rejection's reason.

mod common;

use std::path::Path;
use std::thread;

use common::{Server, data_dir};
use serde_json::Value;

/// `(requests, hits, misses, loads, size, rejects, reason)` of `lance-table-access` in `ln`.
fn stats(server: &Server) -> Vec<String> {
    server.cache_row(
        "ln",
        "lance-table-access",
        "request_count, hit_count, miss_count, load_success_count, estimated_size, \
         weight_reject_count, last_weight_reject_reason",
    )
}

fn namespace_copy() -> tempfile::TempDir {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/lance/namespace");
    let dir = tempfile::tempdir().expect("temp dir");
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(format!("{}/.", fixture.display()))
        .arg(dir.path())
        .status()
        .expect("cp");
    assert!(status.success());
    dir
}

const ACCESS: &str = "/api/v1/catalogs/ln/databases/default/tables/items/access";

#[test]
fn engines_resolve_lance_tables_through_the_cache() {
    let root = namespace_copy();
    let (_dir, data) = data_dir();
    let server = Server::start(&data, &[]);
    server.query(&format!(
        "CREATE CATALOG ln PROPERTIES ('type' = 'lance', 'warehouse' = 'file://{}')",
        root.path().display()
    ));
    assert_eq!(
        server.query("SHOW DATABASES FROM ln"),
        "Database\ndefault\n"
    );
    assert_eq!(
        server.query("SHOW TABLES FROM ln.default"),
        "Tables_in_default\nitems\n"
    );

    thread::scope(|scope| {
        let engines: Vec<_> = (0..16)
            .map(|_| scope.spawn(|| server.http("GET", ACCESS, None, None)))
            .collect();
        for engine in engines {
            let (status, body) = engine.join().expect("engine");
            assert_eq!(status, 200, "{body}");
            let access: Value = serde_json::from_str(&body).expect("json");
            assert!(
                access["uri"]
                    .as_str()
                    .is_some_and(|u| u.ends_with("/items.lance")),
                "{body}"
            );
            assert_eq!(access["cacheable"], true);
        }
    });
    let s = stats(&server);
    assert_eq!(
        (s[0].as_str(), s[3].as_str(), s[4].as_str()),
        ("16", "1", "1"),
        "{s:?}"
    );

    // The bypass path asks the namespace and leaves the statistics alone.
    let (status, _) = server.http("GET", &format!("{ACCESS}?current=true"), None, None);
    assert_eq!(status, 200);
    assert_eq!(stats(&server)[0], "16");

    server.query("REFRESH TABLE ln.default.items");
    assert_eq!(stats(&server)[4], "0", "retired by REFRESH TABLE");
    server.http("GET", ACCESS, None, None);
    assert_eq!(stats(&server)[3], "2");

    let (status, body) = server.http(
        "GET",
        "/api/v1/catalogs/ln/databases/default/tables/nope/access",
        None,
        None,
    );
    assert_eq!(status, 404, "{body}");
}

#[test]
fn a_quota_too_small_shows_its_reason_and_engines_still_get_the_answer() {
    let root = namespace_copy();
    let (_dir, data) = data_dir();
    let server = Server::start(&data, &[]);
    server.query(&format!(
        "CREATE CATALOG ln PROPERTIES ('type' = 'lance', 'warehouse' = 'file://{}', \
         'meta.cache.lance.table_access.max-weight' = '100B')",
        root.path().display()
    ));
    for _ in 0..2 {
        let (status, body) = server.http("GET", ACCESS, None, None);
        assert_eq!(status, 200, "{body}");
    }
    let s = stats(&server);
    assert_eq!(
        (s[3].as_str(), s[5].as_str(), s[6].as_str()),
        ("2", "2", "entry_too_large"),
        "{s:?}"
    );
}

#[test]
fn with_auto_refresh_a_resolution_is_renewed_ahead_of_its_ttl() {
    let root = namespace_copy();
    let (_dir, data) = data_dir();
    let server = Server::start(&data, &[]);
    // TTL 3 s: due 0.3 s before it.
    server.query(&format!(
        "CREATE CATALOG ln PROPERTIES ('type' = 'lance', 'warehouse' = 'file://{}', \
         'meta.cache.lance.table_access.ttl-second' = '3', \
         'meta.cache.lance.table_access.auto-refresh' = 'true')",
        root.path().display()
    ));
    let loaded = std::time::Instant::now();
    assert_eq!(server.http("GET", ACCESS, None, None).0, 200);
    thread::sleep(std::time::Duration::from_millis(2_800).saturating_sub(loaded.elapsed()));
    assert_eq!(server.http("GET", ACCESS, None, None).0, 200);
    let renewed = || {
        let out = server.query(
            "SELECT REFRESH_UNCHANGED_COUNT FROM information_schema.catalog_meta_cache_refresh \
             WHERE catalog_name = 'ln' AND entry_name = 'lance-table-access'",
        );
        out.lines().nth(1).unwrap_or_default().trim() == "1"
    };
    let started = std::time::Instant::now();
    while !renewed() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "the unchanged resolution was not renewed"
        );
        thread::sleep(std::time::Duration::from_millis(50));
    }
    // Past the first TTL: still the first load's value, no reader waited.
    thread::sleep(std::time::Duration::from_millis(3_300).saturating_sub(loaded.elapsed()));
    assert_eq!(server.http("GET", ACCESS, None, None).0, 200);
    let s = stats(&server);
    assert_eq!(
        (s[2].as_str(), s[3].as_str()),
        ("1", "2"),
        "one miss; a load and a check: {s:?}"
    );
}
