//! The node-shared disk tier through the real binary (issue 20): Iceberg and Paimon planning
//! metadata read once from the warehouses, then — in a new process with cold memory — from
//! disk; REFRESH fences a catalog's blocks; a catalog can opt out; the capacity is a live node
//! key; `information_schema.catalog_meta_cache_disk` and `/metrics` show it.

mod common;

use std::path::{Path, PathBuf};

use common::{Server, data_dir, promtool_check};

fn fixture(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(kind)
        .join("warehouse")
}

const DISK: &str = "SELECT DIRECTORY, CAPACITY, USED, BLOCKS, HITS, MISSES, COALESCED, \
                    EVICTIONS, CORRUPT_DROPPED, ERRORS, PUBLISHED, FENCED, STATUS \
                    FROM information_schema.catalog_meta_cache_disk";

/// The disk row as column → value.
fn disk(server: &Server) -> std::collections::HashMap<String, String> {
    let out = server.query(DISK);
    let mut lines = out.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split('\t').collect();
    let row: Vec<&str> = lines
        .next()
        .unwrap_or_else(|| panic!("no disk row: {out}"))
        .split('\t')
        .collect();
    header
        .into_iter()
        .zip(row)
        .map(|(h, v)| (h.to_owned(), v.to_owned()))
        .collect()
}

fn num(row: &std::collections::HashMap<String, String>, column: &str) -> u64 {
    row.get(column)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{column} in {row:?}"))
}

/// Plans both tables: Iceberg metadata, manifest list and manifests; Paimon snapshot, schema,
/// manifest list and manifests.
fn plan(server: &Server, catalogs: &[&str]) {
    for catalog in catalogs {
        let (db, table) = if catalog.starts_with("ice") {
            ("shop", "trips")
        } else {
            ("shop", "users")
        };
        for what in ["files", "snapshots"] {
            let (status, body) = server.http(
                "GET",
                &format!("/api/v1/catalogs/{catalog}/databases/{db}/tables/{table}/{what}"),
                None,
                None,
            );
            assert_eq!(status, 200, "{catalog} {what}: {body}");
        }
    }
}

fn create_catalogs(server: &Server) {
    server.query(&format!(
        "CREATE CATALOG ice PROPERTIES ('type'='iceberg', 'iceberg.catalog.type'='hadoop', \
         'warehouse'='{}', 'location.rewrite-from'='file:///tmp/metacache-iceberg-fixture')",
        fixture("iceberg").display()
    ));
    server.query(&format!(
        "CREATE CATALOG pm PROPERTIES ('type'='paimon', 'warehouse'='file://{}')",
        fixture("paimon").display()
    ));
}

#[test]
fn planning_metadata_is_read_from_disk_by_a_new_process() {
    let (tmp, data) = data_dir();
    let dir = tmp.path().join("disk");
    let dir_text = dir.display().to_string();
    let env = [
        ("METACACHE_EXTERNAL_META_CACHE_DISK_DIR", dir_text.as_str()),
        ("METACACHE_EXTERNAL_META_CACHE_DISK_MAX_WEIGHT", "64MB"),
    ];
    let server = Server::start(&data, &env);
    create_catalogs(&server);
    plan(&server, &["ice", "pm"]);
    let first = disk(&server);
    assert_eq!(first["DIRECTORY"], dir_text);
    assert_eq!(num(&first, "CAPACITY"), 64 << 20);
    assert_eq!(first["STATUS"], "ok");
    assert!(num(&first, "MISSES") >= 4, "{first:?}");
    assert_eq!(num(&first, "PUBLISHED"), num(&first, "MISSES"), "{first:?}");
    // Files read twice (the manifest list of both routes) are disk hits already.
    assert_eq!(num(&first, "ERRORS"), 0);
    assert_eq!(num(&first, "BLOCKS"), num(&first, "PUBLISHED"));
    assert!(num(&first, "USED") > 0);
    server.stop();

    // A new process: its memory caches are empty, its files come from disk.
    let server = Server::start(&data, &env);
    plan(&server, &["ice", "pm"]);
    let second = disk(&server);
    assert_eq!(num(&second, "MISSES"), 0, "{second:?}");
    assert_eq!(
        num(&second, "HITS"),
        num(&first, "HITS") + num(&first, "MISSES"),
        "the same reads, all from disk: {second:?}"
    );
    assert_eq!(num(&second, "BLOCKS"), num(&first, "BLOCKS"));

    // REFRESH fences the catalog's blocks: read from the warehouse again, then kept again.
    server.query("REFRESH CATALOG ice");
    plan(&server, &["ice"]);
    let third = disk(&server);
    assert!(num(&third, "FENCED") > 0, "{third:?}");
    assert_eq!(num(&third, "MISSES"), num(&third, "FENCED"), "{third:?}");
    assert_eq!(num(&third, "PUBLISHED"), num(&third, "MISSES"), "{third:?}");

    // The same on /metrics, which promtool accepts.
    let (status, metrics) = server.http("GET", "/metrics", None, None);
    assert_eq!(status, 200);
    assert!(
        metrics.contains(&format!(
            "metacache_disk_reads_total{{result=\"hit\"}} {}",
            num(&third, "HITS")
        )),
        "{metrics}"
    );
    assert!(metrics.contains("metacache_disk_up 1"), "{metrics}");
    assert!(metrics.contains(&format!("metacache_disk_capacity_bytes {}", 64u64 << 20)));
    promtool_check(&metrics).expect("promtool");

    // A catalog that opts out never touches the disk.
    let before = disk(&server);
    server.query(&format!(
        "CREATE CATALOG ice_off PROPERTIES ('type'='iceberg', 'iceberg.catalog.type'='hadoop', \
         'warehouse'='{}', 'location.rewrite-from'='file:///tmp/metacache-iceberg-fixture', \
         'meta.cache.disk.enable'='false')",
        fixture("iceberg").display()
    ));
    plan(&server, &["ice_off"]);
    let after = disk(&server);
    for column in ["HITS", "MISSES", "COALESCED", "PUBLISHED"] {
        assert_eq!(after[column], before[column], "{column}");
    }
    let error =
        server.fails("ALTER CATALOG ice_off SET PROPERTIES ('meta.cache.disk.enable'='maybe')");
    assert!(error.contains("meta.cache.disk.enable"), "{error}");

    // The capacity is live: a smaller one evicts down to it.
    server.query("ADMIN SET FRONTEND CONFIG ('external_meta_cache_disk_max_weight' = '1KB')");
    let started = std::time::Instant::now();
    loop {
        let row = disk(&server);
        if num(&row, "CAPACITY") == 1024 && num(&row, "USED") <= 1024 {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "not evicted down to 1 KiB: {row:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let error =
        server.fails("ADMIN SET FRONTEND CONFIG ('external_meta_cache_disk_max_weight' = '0')");
    assert!(
        error.contains("external_meta_cache_disk_max_weight"),
        "{error}"
    );
}

#[test]
fn without_a_directory_there_is_no_disk_row_and_an_unusable_one_fails_open() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    assert!(server.query(DISK).lines().count() <= 1, "no row");
    let (_, metrics) = server.http("GET", "/metrics", None, None);
    assert!(!metrics.contains("metacache_disk_"), "no disk series");
    server.stop();

    // A directory that cannot be made: reads go to the warehouses, counted, and said why.
    let server = Server::start(
        &data,
        &[(
            "METACACHE_EXTERNAL_META_CACHE_DISK_DIR",
            "/proc/metacache-disk",
        )],
    );
    create_catalogs(&server);
    plan(&server, &["ice", "pm"]);
    let row = disk(&server);
    assert!(row["STATUS"].starts_with("unavailable: "), "{row:?}");
    assert!(num(&row, "ERRORS") >= 4, "{row:?}");
    assert_eq!(num(&row, "HITS") + num(&row, "MISSES"), 0);
    let (_, metrics) = server.http("GET", "/metrics", None, None);
    assert!(metrics.contains("metacache_disk_up 0"), "{metrics}");
}
