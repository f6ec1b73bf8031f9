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
