//! Look-aside leases over HTTP (issue 17): one lease per key across clients, `?wait=` handing
//! the holder's value to every waiter (64 concurrent clients, one upstream load), a stale set
//! refused after `DELETE`, an expired lease replaced, and a refresh lease for a due value of an
//! auto-refresh entry.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;

use common::*;

const ENGINE: &str = r#"{
    "catalog_types": ["feature_store"],
    "entries": [{"token": "features", "defaults": {"enable": true, "ttl": {"seconds": 300}, "capacity": 100, "auto_refresh": true}}],
    "caches": [{"entry_name": "fs-features", "source": {"entry": "features"}}]
}"#;

const BASE: &str = "/api/v1/catalogs/fs/caches/feature_store/fs-features";

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

/// `GET` → (status, lease header, body).
fn get(server: &Server, path: &str) -> (u16, Option<String>, String) {
    let mut response = agent()
        .get(&format!("{}{path}", server.http))
        .call()
        .expect("GET");
    let lease = response
        .headers()
        .get("metacache-lease")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let status = response.status().as_u16();
    let body = response.body_mut().read_to_string().unwrap_or_default();
    (status, lease, body)
}

/// `PUT` with a lease → (status, body).
fn put(server: &Server, key: &str, value: &str, lease: Option<&str>) -> (u16, String) {
    let mut request = agent().put(&format!("{}{BASE}/{key}", server.http));
    if let Some(lease) = lease {
        request = request.header("Metacache-Lease", lease);
    }
    let mut response = request.send(value.as_bytes()).expect("PUT");
    let status = response.status().as_u16();
    (
        status,
        response.body_mut().read_to_string().unwrap_or_default(),
    )
}

fn setup() -> (tempfile::TempDir, Server) {
    let (tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    server.define_engine("feature_store", ENGINE);
    server.query("CREATE CATALOG fs PROPERTIES ('type'='feature_store')");
    (tmp, server)
}

#[test]
fn sixty_four_clients_missing_one_key_make_one_upstream_load() {
    let (_tmp, server) = setup();
    let server = Arc::new(server);
    let loads = Arc::new(AtomicU64::new(0));
    let clients: Vec<_> = (0..64)
        .map(|_| {
            let (server, loads) = (Arc::clone(&server), Arc::clone(&loads));
            std::thread::spawn(move || {
                let (status, lease, body) = get(&server, &format!("{BASE}/user:42?wait=10000"));
                if let Some(lease) = lease {
                    // The holder "loads from upstream", slowly, and puts with its lease.
                    assert_eq!(status, 404);
                    loads.fetch_add(1, SeqCst);
                    std::thread::sleep(Duration::from_millis(300));
                    let (status, body) = put(&server, "user:42", "v1", Some(&lease));
                    assert_eq!(status, 200, "{body}");
                    assert!(body.contains("\"retained\":true"), "{body}");
                    return "v1".to_owned();
                }
                assert_eq!(status, 200, "a waiter gets the holder's value: {body}");
                body
            })
        })
        .collect();
    for client in clients {
        assert_eq!(client.join().expect("client"), "v1");
    }
    assert_eq!(loads.load(SeqCst), 1, "one upstream load for 64 clients");
}

#[test]
fn a_put_with_a_lease_made_stale_by_delete_stores_nothing() {
    let (_tmp, server) = setup();
    let (status, lease, _) = get(&server, &format!("{BASE}/k"));
    assert_eq!(status, 404);
    let lease = lease.expect("the first miss gets the lease");
    let (_, second, _) = get(&server, &format!("{BASE}/k"));
    assert_eq!(second, None, "one lease per key");
    // Someone changes the source and invalidates the key; the old load's PUT comes late.
    server.http("DELETE", &format!("{BASE}/k"), None, None);
    let (status, body) = put(&server, "k", "stale", Some(&lease));
    assert_eq!(status, 200);
    assert_eq!(body, r#"{"reason":"invalidated","retained":false}"#);
    assert_eq!(get(&server, &format!("{BASE}/k")).0, 404, "nothing stored");
    // A lease that is not a number is a bad request; a PUT without one stores as before.
    assert_eq!(put(&server, "k", "x", Some("not-a-token")).0, 400);
    let (_, body) = put(&server, "k", "fresh", None);
    assert!(body.contains("\"retained\":true"), "{body}");
}

#[test]
fn an_expired_lease_is_replaced_and_its_put_refused() {
    let (_tmp, server) = setup();
    server.query("ADMIN SET FRONTEND CONFIG ('external_meta_cache_lease_timeout_ms' = '200')");
    let (_, crashed, _) = get(&server, &format!("{BASE}/k"));
    let crashed = crashed.expect("lease");
    std::thread::sleep(Duration::from_millis(400));
    let (_, next, _) = get(&server, &format!("{BASE}/k"));
    let next = next.expect("a new lease after the old one expired");
    assert_ne!(next, crashed);
    assert!(
        put(&server, "k", "old", Some(&crashed))
            .1
            .contains("invalidated")
    );
    assert!(
        put(&server, "k", "new", Some(&next))
            .1
            .contains("\"retained\":true")
    );
    assert_eq!(get(&server, &format!("{BASE}/k")).2, "new");
}

#[test]
fn a_due_value_comes_with_one_refresh_lease() {
    let (_tmp, server) = setup();
    // TTL 2 s: due 0.2 s before it.
    server.query(
        "ALTER CATALOG fs SET PROPERTIES ('meta.cache.feature_store.features.ttl-second' = '2')",
    );
    let (_, lease, _) = get(&server, &format!("{BASE}/k"));
    put(&server, "k", "v1", lease.as_deref());
    std::thread::sleep(Duration::from_millis(1_850));
    let (status, refresh, body) = get(&server, &format!("{BASE}/k"));
    assert_eq!((status, body.as_str()), (200, "v1"));
    let refresh = refresh.expect("a refresh lease with the due value");
    let (_, other, _) = get(&server, &format!("{BASE}/k"));
    assert_eq!(other, None, "one refresh lease per value");
    assert!(
        put(&server, "k", "v2", Some(&refresh))
            .1
            .contains("\"retained\":true")
    );
    assert_eq!(get(&server, &format!("{BASE}/k")).2, "v2");
    let row = server.query(
        "SELECT REFRESH_STARTED_COUNT, REFRESH_SUCCESS_COUNT FROM information_schema.catalog_meta_cache_refresh \
         WHERE catalog_name = 'fs'",
    );
    assert!(row.ends_with("1\t1\n"), "{row}");
}
