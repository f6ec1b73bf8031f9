//! Three real nodes on one private PostgreSQL (issue 19): DDL on one node visible on the
//! others, REFRESH TABLE dropping a table's entries on every node, concurrent CREATE of one
//! name from three nodes, PostgreSQL stopped and restarted, a node SIGKILLed and restarted.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::postgres::Postgres;
use common::{Server, data_dir, fixture_warehouse};

const ENGINE: &str = r#"{
    "catalog_types": ["feature_store"],
    "entries": [{"token": "features", "defaults": {"enable": true, "ttl": {"seconds": 300}, "capacity": 100}}],
    "caches": [{"entry_name": "fs-features", "source": {"entry": "features"}}]
}"#;
const LOOKASIDE: &str = "/api/v1/catalogs/fs/caches/feature_store/fs-features";

/// Waits (at most 10 s) until `check` holds; fails with `what` and the last value seen.
fn eventually(what: &str, mut check: impl FnMut() -> (bool, String)) {
    let started = Instant::now();
    loop {
        let (ok, seen) = check();
        if ok {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{what}: not within 10 s; last seen:\n{seen}"
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

fn node(pg: &Postgres, name: &str) -> (tempfile::TempDir, Server) {
    let (dir, data) = data_dir();
    let url = pg.url();
    let server = Server::start(
        &data,
        &[("METACACHE_STORE", &url), ("METACACHE_FE_HOST", name)],
    );
    (dir, server)
}

const NODE_NAMES: &str =
    "SELECT FE_HOST FROM information_schema.catalog_meta_cache_nodes ORDER BY FE_HOST";

/// The FE_HOSTs of `catalog_meta_cache_nodes` on `server`.
fn node_names(server: &Server) -> String {
    server.query(NODE_NAMES)
}

/// Sends SIGSTOP or SIGCONT to process `pid`.
fn signal(name: &str, pid: &u32) {
    let sent = Command::new("kill")
        .args([format!("-{name}"), pid.to_string()])
        .status()
        .expect("kill");
    assert!(sent.success(), "kill -{name} {pid}");
}

fn catalogs(server: &Server) -> String {
    server.query("SHOW CATALOGS")
}

/// INVALIDATE_COUNT of `hive-partition-values`-like rows of `catalog` summed on `server`.
fn invalidations(server: &Server, catalog: &str) -> u64 {
    let out = server.query(&format!(
        "SELECT COALESCE(SUM(INVALIDATE_COUNT), 0) FROM information_schema.catalog_meta_cache_statistics WHERE CATALOG_NAME = '{catalog}'"
    ));
    out.lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn three_nodes_share_catalogs_and_refreshes_through_postgresql() {
    let Some(pg) = Postgres::start() else {
        return;
    };
    let (_d1, n1) = node(&pg, "n1");
    let (_d2, n2) = node(&pg, "n2");
    let (d3, n3) = node(&pg, "n3");
    let warehouse = fixture_warehouse();

    // CREATE on n1 appears on n2 and n3.
    n1.query(&format!(
        "CREATE CATALOG lake PROPERTIES ('type' = 'hms', 'warehouse' = '{}')",
        warehouse.display()
    ));
    for other in [&n2, &n3] {
        eventually("CREATE propagates", || {
            let seen = catalogs(other);
            (seen.contains("lake"), seen)
        });
    }
    // ALTER on n2 appears on n1 and n3.
    n2.query("ALTER CATALOG lake SET PROPERTIES ('meta.cache.max-weight' = '64MB')");
    for other in [&n1, &n3] {
        eventually("ALTER propagates", || {
            let seen = other.query("SHOW CREATE CATALOG lake");
            (seen.contains("64MB"), seen)
        });
    }
    // Every node caches the table; REFRESH TABLE on n1 drops its entries everywhere.
    for server in [&n1, &n2, &n3] {
        let (status, body) = server.http(
            "GET",
            "/api/v1/catalogs/lake/databases/sales/tables/orders/partitions",
            None,
            None,
        );
        assert_eq!(status, 200, "{body}");
    }
    let before: Vec<u64> = [&n2, &n3]
        .iter()
        .map(|s| invalidations(s, "lake"))
        .collect();
    n1.query("REFRESH TABLE lake.sales.orders");
    for (server, before) in [&n2, &n3].iter().zip(before) {
        eventually("REFRESH TABLE propagates", || {
            let now = invalidations(server, "lake");
            (
                now > before,
                format!("INVALIDATE_COUNT {now}, was {before}"),
            )
        });
    }

    // A remote engine defined on n1 exists on every node; a look-aside DELETE on n1 removes
    // the key on every node.
    n1.define_engine("feature_store", ENGINE);
    for other in [&n2, &n3] {
        eventually("the engine propagates", || {
            let (status, body) = other.http("GET", "/api/v1/engines/feature_store", None, None);
            (status == 200, body)
        });
    }
    n1.query("CREATE CATALOG fs PROPERTIES ('type' = 'feature_store')");
    for server in [&n1, &n2, &n3] {
        eventually("the look-aside catalog propagates", || {
            let seen = catalogs(server);
            (seen.contains("fs"), seen)
        });
        let (status, body) = server.http("PUT", &format!("{LOOKASIDE}/user-1"), Some(b"v1"), None);
        assert_eq!(status, 200, "{body}");
    }
    let (status, body) = n1.http("DELETE", &format!("{LOOKASIDE}/user-1"), None, None);
    assert_eq!(status, 200, "{body}");
    for other in [&n2, &n3] {
        eventually("the look-aside DELETE propagates", || {
            let (status, body) = other.http("GET", &format!("{LOOKASIDE}/user-1"), None, None);
            (status == 404, format!("{status} {body}"))
        });
    }

    // The statistics of every node, on any node, FE_HOST naming each.
    for server in [&n1, &n2, &n3] {
        eventually("every node's rows", || {
            let seen = server.query(
                "SELECT DISTINCT FE_HOST FROM information_schema.catalog_meta_cache_statistics \
                 WHERE CATALOG_NAME = 'lake' ORDER BY FE_HOST",
            );
            (seen == "FE_HOST\nn1\nn2\nn3\n", seen)
        });
        assert_eq!(node_names(server), "FE_HOST\nn1\nn2\nn3\n");
    }
    // Peers send only the columns read (none for a count: one column travels, dropped here),
    // and the cluster-wide rows are each node's own rows, FE_HOST naming them.
    let local = |server: &Server, columns: &str| {
        let (status, body) = server.http(
            "GET",
            &format!(
                "/api/v1/cluster/rows/catalog_meta_cache_statistics?catalog=lake&columns={columns}"
            ),
            None,
            None,
        );
        assert_eq!(status, 200, "{body}");
        let answer: serde_json::Value = serde_json::from_str(&body).expect("JSON");
        answer["rows"].as_array().cloned().unwrap_or_default()
    };
    let own: Vec<Vec<serde_json::Value>> = [&n1, &n2, &n3]
        .iter()
        .map(|server| local(server, "FE_HOST,ENTRY_NAME,HIT_COUNT"))
        .flat_map(|rows| {
            rows.into_iter()
                .map(|r| r.as_array().cloned().unwrap_or_default())
        })
        .collect();
    assert!(own.iter().all(|r| r.len() == 3), "{own:?}");
    let count = n2.query(
        "SELECT COUNT(*) AS n FROM information_schema.catalog_meta_cache_statistics \
         WHERE CATALOG_NAME = 'lake'",
    );
    assert_eq!(count, format!("n\n{}\n", own.len()));
    let by_node = n2.query(
        "SELECT FE_HOST, COUNT(ENTRY_NAME) AS n FROM information_schema.catalog_meta_cache_statistics \
         WHERE CATALOG_NAME = 'lake' GROUP BY FE_HOST ORDER BY FE_HOST",
    );
    let per_node = own.len() / 3;
    assert_eq!(
        by_node,
        format!("FE_HOST\tn\nn1\t{per_node}\nn2\t{per_node}\nn3\t{per_node}\n")
    );
    let (status, body) = n1.http(
        "GET",
        "/api/v1/cluster/rows/catalog_meta_cache_statistics?columns=FE_HOST,NO_SUCH_COLUMN",
        None,
        None,
    );
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("NO_SUCH_COLUMN"), "{body}");
    // What nodes ask each other for: an Arrow IPC stream.
    let response = ureq::get(format!(
        "{}/api/v1/cluster/rows/catalog_meta_cache_nodes?columns=FE_HOST",
        n1.http
    ))
    .header("Accept", "application/vnd.apache.arrow.stream")
    .call()
    .expect("Arrow answer");
    assert_eq!(
        response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("application/vnd.apache.arrow.stream")
    );
    // A peer that does not answer is a warning, not an error: the others' rows come back.
    let stopped = n3.pid();
    signal("STOP", &stopped);
    let (status, body) = n1.http("POST", "/api/v1/sql", Some(NODE_NAMES.as_bytes()), None);
    signal("CONT", &stopped);
    assert_eq!(status, 200, "{body}");
    let answer: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(
        answer["rows"],
        serde_json::json!([["n1"], ["n2"]]),
        "{body}"
    );
    let warning = answer["warnings"][0].as_str().unwrap_or_default();
    assert!(
        warning.contains("n3") && warning.contains("no answer"),
        "{body}"
    );

    // Three nodes create one name at once: exactly one wins.
    let nodes = [&n1, &n2, &n3];
    let results: Vec<(bool, String)> = std::thread::scope(|s| {
        let handles: Vec<_> = nodes
            .iter()
            .map(|server| {
                let warehouse = warehouse.display().to_string();
                s.spawn(move || {
                    let reply = server.mysql(&format!(
                        "CREATE CATALOG race PROPERTIES ('type' = 'hms', 'warehouse' = '{warehouse}')"
                    ));
                    (reply.ok, reply.err)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect()
    });
    assert_eq!(
        results.iter().filter(|(ok, _)| *ok).count(),
        1,
        "{results:?}"
    );
    for (_, err) in results.iter().filter(|(ok, _)| !*ok) {
        assert!(
            err.contains("already exists") || err.contains("exists"),
            "{err}"
        );
    }
    for server in [&n1, &n2, &n3] {
        eventually("the winner is everywhere", || {
            let seen = catalogs(server);
            (seen.contains("race"), seen)
        });
    }

    // PostgreSQL stops: DDL fails with a clear error and changes nothing; reads go on.
    pg.pause();
    let error =
        n1.fails("CREATE CATALOG offline PROPERTIES ('type' = 'hms', 'warehouse' = '/tmp')");
    assert!(error.contains("unreachable"), "{error}");
    assert!(!catalogs(&n1).contains("offline"));
    let (status, body) = n2.http(
        "GET",
        "/api/v1/catalogs/lake/databases/sales/tables/orders/partitions",
        None,
        None,
    );
    assert_eq!(status, 200, "reads serve from the caches: {body}");
    pg.resume();
    // The store reconnects; changes made after flow again.
    eventually("DDL works again after PostgreSQL is back", || {
        let reply = n1.mysql("DROP CATALOG race");
        (reply.ok, reply.err)
    });
    for server in [&n2, &n3] {
        eventually("the DROP after the outage propagates", || {
            let seen = catalogs(server);
            (!seen.contains("race"), seen)
        });
    }

    // n3 is SIGKILLed; a change made while it is down is there when it restarts.
    n3.kill9();
    n2.query("ALTER CATALOG lake SET PROPERTIES ('meta.cache.max-weight' = '32MB')");
    // Without heartbeats it drops out of the others' tables after cluster_node_timeout_ms.
    n1.query("ADMIN SET FRONTEND CONFIG ('cluster_node_timeout_ms' = '1000')");
    eventually("a dead node drops out", || {
        let seen = node_names(&n1);
        (seen == "FE_HOST\nn1\nn2\n", seen)
    });
    let url = pg.url();
    let n3 = Server::start(
        &d3.path().join("data"),
        &[("METACACHE_STORE", &url), ("METACACHE_FE_HOST", "n3")],
    );
    let shown = n3.query("SHOW CREATE CATALOG lake");
    assert!(shown.contains("32MB"), "{shown}");
    assert!(!catalogs(&n3).contains("race"));
    // And it follows again.
    n1.query("CREATE CATALOG after_restart PROPERTIES ('type' = 'hms', 'warehouse' = '/tmp')");
    eventually("n3 follows after its restart", || {
        let seen = catalogs(&n3);
        (seen.contains("after_restart"), seen)
    });

    // A node that missed events that are gone (pruned) resynchronises from the tables.
    let frozen = n3.pid();
    signal("STOP", &frozen);
    n1.query("CREATE CATALOG while_frozen PROPERTIES ('type' = 'hms', 'warehouse' = '/tmp')");
    pg.sql("DELETE FROM metacache_events");
    signal("CONT", &frozen);
    eventually("n3 resynchronises after a gap", || {
        let seen = catalogs(&n3);
        (seen.contains("while_frozen"), seen)
    });
    assert!(
        n3.log_text().contains("resynchronised"),
        "the resync is logged"
    );

    // A node SIGKILLed in the middle of a stream of ALTERs leaves every other node, and a
    // node started afterwards, with one and the same definition.
    let (_d4, n4) = node(&pg, "n4");
    let (http4, port4) = (n4.http.clone(), n4.mysql_port);
    let writer = std::thread::spawn(move || {
        let mut done = 0;
        for i in 0..200 {
            let ok = Command::new(common::mysql_client())
                .args([
                    "-h",
                    "127.0.0.1",
                    "-P",
                    &port4.to_string(),
                    "-u",
                    "root",
                    "-e",
                ])
                .arg(format!(
                    "ALTER CATALOG lake SET PROPERTIES ('meta.cache.max-weight' = '{}MB')",
                    100 + i
                ))
                .output()
                .is_ok_and(|o| o.status.success());
            if !ok {
                break;
            }
            done += 1;
        }
        done
    });
    std::thread::sleep(Duration::from_millis(400));
    n4.kill9();
    let done = writer.join().expect("writer");
    assert!(done > 0, "some ALTERs ran on {http4} before the kill");
    let settled = |server: &Server| server.query("SHOW CREATE CATALOG lake");
    eventually("n1, n2 and n3 agree after the kill", || {
        let (a, b, c) = (settled(&n1), settled(&n2), settled(&n3));
        (a == b && b == c, format!("{a}\n{b}\n{c}"))
    });
    let (_d5, n5) = node(&pg, "n5");
    assert_eq!(
        settled(&n5),
        settled(&n1),
        "a new node loads the same state"
    );
}
