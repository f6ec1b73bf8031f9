//! Lance table access (§8.1) against real namespaces: the committed pylance directory
//! namespace read by listing, and pylance's REST namespace server on loopback. Each credential
//! and lifecycle rule has a test here that fails if the rule is removed (the URI rules also in
//! `src/lance/access.rs`).

mod common;
#[path = "common/lance_rest.rs"]
mod lance_rest;

use std::sync::Arc;
use std::time::Duration;

use common::{create, stats, url};
use lance_rest::{LanceRest, namespace_copy};
use metacache_cache::Clock;
use metacache_catalog::memory::{MemorySource, NodeMemory};
use metacache_catalog::{CatalogManager, ManagerOptions, MemoryStore, TableKey};
use metacache_engines::builtin::lance::TABLE_ACCESS as ENTRY;
use metacache_sources::lance::{LanceConnector, TABLE_ACCESS};
use metacache_sources::{Connector, Sources};

/// Connectors over a manager whose clock the test moves.
fn manual_sources() -> (Arc<Sources>, Arc<metacache_cache::ManualClock>) {
    let (clock, hand) = Clock::manual();
    let mut options = ManagerOptions::new(Arc::new(MemoryStore::new()));
    options.clock = clock;
    options.node_memory = Some(NodeMemory {
        bytes: 16 << 30,
        source: MemorySource::Physical,
    });
    let manager = CatalogManager::open(options).expect("manager");
    (Sources::new(Arc::new(manager)), hand)
}

fn connector(sources: &Sources, catalog: &str) -> LanceConnector {
    let c = sources.manager().catalog(catalog).expect("catalog");
    LanceConnector::open(Arc::clone(&c), &c.def().properties).expect("open")
}

fn create_dir(sources: &Sources, name: &str, root: &std::path::Path, extra: &[(&str, &str)]) {
    let root = url(root);
    let mut pairs = vec![("type", "lance"), ("warehouse", root.as_str())];
    pairs.extend_from_slice(extra);
    create(sources, name, pairs);
}

fn create_rest(sources: &Sources, name: &str, server: &LanceRest) {
    create(
        sources,
        name,
        [
            ("type", "lance"),
            ("lance.namespace.type", "rest"),
            ("uri", server.uri.as_str()),
        ],
    );
}

#[tokio::test]
async fn a_directory_namespace_resolves_once_then_from_the_cache_until_refresh() {
    let root = namespace_copy();
    let (sources, _) = manual_sources();
    create_dir(
        &sources,
        "ln",
        root.path(),
        &[("storage.region", "eu-west-1")],
    );
    let c = connector(&sources, "ln");
    assert_eq!(c.databases().await.expect("dbs"), ["default"]);
    assert_eq!(c.tables("default").await.expect("tables"), ["items"]);

    let first = c.table_access("default", "items").await.expect("cold");
    assert!(first.uri.ends_with("/items.lance"), "{}", first.uri);
    assert!(first.uri.starts_with("file://"));
    assert_eq!(
        first.storage_options.get("region").map(String::as_str),
        Some("eu-west-1")
    );
    c.table_access("default", "items").await.expect("warm");
    assert_eq!(c.describe_calls(), 1, "the second read is a hit");
    let s = stats(&sources, "ln", ENTRY);
    assert_eq!((s.hit_count, s.miss_count, s.estimated_size), (1, 1, 1));
    assert_eq!(s.ttl_second, 60, "default TTL");
    assert_eq!(s.capacity, 10_000, "default capacity");

    // Unrelated invalidations keep it: another table, another namespace.
    let manager = sources.manager();
    manager
        .refresh_table("ln", "default", "other")
        .expect("refresh");
    manager
        .refresh_database("ln", "elsewhere")
        .expect("refresh");
    c.table_access("default", "items")
        .await
        .expect("still cached");
    assert_eq!(c.describe_calls(), 1);

    // Explicit refreshes retire it.
    for (i, refresh) in ["table", "database", "catalog"].into_iter().enumerate() {
        match refresh {
            "table" => manager.refresh_table("ln", "default", "items").map(|_| ()),
            "database" => manager.refresh_database("ln", "default").map(|_| ()),
            _ => manager.refresh_catalog("ln").map(|_| ()),
        }
        .expect("refresh");
        c.table_access("default", "items").await.expect("reload");
        assert_eq!(c.describe_calls(), 2 + i as u64, "after REFRESH {refresh}");
    }

    // The bypass path always asks the namespace and leaves the cache alone.
    let current = c
        .current_table_access("default", "items")
        .await
        .expect("current");
    assert_eq!(current.uri, first.uri);
    assert_eq!(c.describe_calls(), 5);
    let before = stats(&sources, "ln", ENTRY).request_count;
    assert_eq!(stats(&sources, "ln", ENTRY).request_count, before);

    let e = c
        .table_access("default", "nope")
        .await
        .expect_err("unknown");
    assert!(e.is_not_found(), "{e}");
    assert!(
        c.tables("sales")
            .await
            .expect_err("no such namespace")
            .is_not_found()
    );
}

#[tokio::test]
async fn reads_do_not_extend_the_ttl_and_zero_disables() {
    let root = namespace_copy();
    let (sources, hand) = manual_sources();
    create_dir(
        &sources,
        "ln",
        root.path(),
        &[("meta.cache.lance.table_access.ttl-second", "10")],
    );
    let c = connector(&sources, "ln");
    c.table_access("default", "items").await.expect("cold");
    for _ in 0..3 {
        hand.advance(Duration::from_secs(3));
        c.table_access("default", "items").await.expect("hit");
    }
    assert_eq!(c.describe_calls(), 1, "9 s after the load: still fresh");
    hand.advance(Duration::from_secs(2));
    c.table_access("default", "items").await.expect("expired");
    assert_eq!(
        c.describe_calls(),
        2,
        "11 s after the load it expired, although it was read 2 s ago"
    );

    for (name, key) in [
        ("off", "meta.cache.lance.table_access.ttl-second"),
        ("legacy", "lance.table_access_cache_ttl_seconds"),
    ] {
        create_dir(&sources, name, root.path(), &[(key, "0")]);
        let c = connector(&sources, name);
        for _ in 0..3 {
            c.table_access("default", "items").await.expect("read");
        }
        assert_eq!(c.describe_calls(), 3, "{key} = 0 resolves on every read");
        assert_eq!(stats(&sources, name, ENTRY).estimated_size, 0);
    }
}

#[tokio::test]
async fn at_most_ten_thousand_resolutions_per_catalog_client_generation() {
    let root = namespace_copy();
    let (sources, _) = manual_sources();
    create_dir(
        &sources,
        "big",
        root.path(),
        &[("meta.cache.lance.table_access.capacity", "50000")],
    );
    assert_eq!(
        stats(&sources, "big", ENTRY).capacity,
        10_000,
        "clamped to the ceiling"
    );
    create_dir(
        &sources,
        "small",
        root.path(),
        &[("meta.cache.lance.table_access.capacity", "50")],
    );
    assert_eq!(stats(&sources, "small", ENTRY).capacity, 50);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_load_in_flight_during_a_refresh_does_not_populate_the_cache() {
    let root = namespace_copy();
    let (sources, _) = manual_sources();
    create_dir(&sources, "ln", root.path(), &[]);
    let c = Arc::new(connector(&sources, "ln"));
    let cache = sources
        .manager()
        .catalog("ln")
        .expect("catalog")
        .cache(&TABLE_ACCESS)
        .expect("cache")
        .expect("enabled");
    let release = Arc::new(tokio::sync::Notify::new());
    let started = Arc::new(tokio::sync::Notify::new());
    let load = {
        let (cache, c, release, started) = (
            cache.clone(),
            Arc::clone(&c),
            Arc::clone(&release),
            Arc::clone(&started),
        );
        tokio::spawn(async move {
            cache
                .get_or_load_if(
                    TableKey::new("default", "items"),
                    || async move {
                        started.notify_one();
                        release.notified().await;
                        c.current_table_access("default", "items").await
                    },
                    |a| a.cacheability().is_ok(),
                )
                .await
        })
    };
    started.notified().await;
    sources
        .manager()
        .refresh_table("ln", "default", "items")
        .expect("refresh");
    release.notify_one();
    assert!(
        load.await.expect("task").is_ok(),
        "the caller still gets its answer"
    );
    assert!(
        cache.get(&TableKey::new("default", "items")).is_none(),
        "but it is not kept"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rest_namespace_resolves_once_for_concurrent_readers_and_caches_plain_answers() {
    let Some(server) = LanceRest::start(&[]) else {
        return;
    };
    let (sources, _) = manual_sources();
    create_rest(&sources, "lr", &server);
    let c = Arc::new(connector(&sources, "lr"));
    assert_eq!(c.databases().await.expect("namespaces"), ["sales"]);
    assert_eq!(
        c.tables("sales").await.expect("tables"),
        ["customers", "orders"]
    );
    let readers: Vec<_> = (0..16)
        .map(|_| {
            let c = Arc::clone(&c);
            tokio::spawn(async move {
                c.table_access("sales", "orders")
                    .await
                    .map(|a| a.uri.clone())
            })
        })
        .collect();
    for reader in readers {
        let uri = reader.await.expect("task").expect("access");
        assert!(uri.contains("_sales$orders"), "{uri}");
    }
    assert_eq!(c.describe_calls(), 1, "one describeTable for 16 readers");
    let info = Connector::table_access(&*c, "sales", "orders", false)
        .await
        .expect("info");
    assert!(info.cacheable && info.not_cached_because.is_none());
    assert_eq!(c.describe_calls(), 1);
    let e = c
        .table_access("sales", "nope")
        .await
        .expect_err("unknown table");
    assert_eq!(e.to_string(), "Unknown table 'sales.nope' in catalog 'lr'");
    assert!(
        c.tables("nope")
            .await
            .expect_err("unknown namespace")
            .is_not_found()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vended_storage_options_are_resolved_on_every_read_even_with_an_expiry() {
    let Some(server) = LanceRest::start(&[
        ("access_key_id", "AKIAVENDED"),
        ("secret_access_key", "s3cr3t"),
    ]) else {
        return;
    };
    let (sources, _) = manual_sources();
    create_rest(&sources, "lv", &server);
    let c = connector(&sources, "lv");
    for _ in 0..3 {
        let access = c.table_access("sales", "orders").await.expect("access");
        assert_eq!(
            access
                .storage_options
                .get("access_key_id")
                .map(String::as_str),
            Some("AKIAVENDED")
        );
        assert!(
            access.storage_options.contains_key("expires_at_millis"),
            "{access:?}"
        );
    }
    assert_eq!(c.describe_calls(), 3, "never served from the cache");
    let s = stats(&sources, "lv", ENTRY);
    assert_eq!(
        (s.estimated_size, s.estimated_weight),
        (0, 0),
        "nothing retained"
    );
    assert_eq!(s.weight_reject_count, 0, "not a weight rejection");
    let info = Connector::table_access(&c, "sales", "orders", false)
        .await
        .expect("info");
    assert!(!info.cacheable);
    assert_eq!(
        info.not_cached_because.as_deref(),
        Some("vended_storage_options")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_the_source_no_longer_has_takes_its_resolutions_with_it() {
    let Some(server) = LanceRest::start(&[]) else {
        return;
    };
    let (sources, _) = manual_sources();
    create_rest(&sources, "lr", &server);
    let c = connector(&sources, "lr");
    c.table_access("sales", "orders").await.expect("cold");
    c.table_access("sales", "orders").await.expect("warm");
    assert_eq!(c.describe_calls(), 1);
    // The namespace is removed at the source (its directory tables dropped, then it).
    let http = reqwest::Client::new();
    for path in [
        "/v1/table/sales%24orders/drop",
        "/v1/table/sales%24customers/drop",
        "/v1/namespace/sales/drop",
    ] {
        let r = http
            .post(format!("{}{path}", server.uri))
            .header("Content-Type", "application/json")
            .body("{}")
            .send()
            .await
            .expect("drop");
        assert!(r.status().is_success(), "{path}: {}", r.status());
    }
    assert!(c.databases().await.expect("namespaces").is_empty());
    let gone = c
        .table_access("sales", "orders")
        .await
        .expect_err("retired with its namespace");
    assert!(gone.is_not_found(), "{gone}");
    assert_eq!(c.describe_calls(), 2);
}
