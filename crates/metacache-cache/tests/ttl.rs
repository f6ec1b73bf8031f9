//! TTL after write and after access, driven by a manual clock: no test sleeps.

mod common;

use std::time::Duration;

use common::*;
use metacache_cache::{EvictionCause, Expiry};

#[tokio::test]
async fn values_expire_after_write_and_reads_do_not_extend_them() {
    let node = node(None);
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &catalog, config("hive-table", Some(10), 100));
    load_blob(&cache, "t", 10).await;
    node.clock.advance(Duration::from_secs(6));
    assert!(cache.get("t").is_some());
    node.clock.advance(Duration::from_secs(4));
    assert!(
        cache.get("t").is_none(),
        "10 s after the load, even though read at 6 s"
    );
    let stats = cache.stats();
    assert_eq!(
        (stats.hit_count, stats.miss_count, stats.eviction_count),
        (1, 2, 1)
    );
    assert_eq!(stats.estimated_weight, 0, "expiry releases the charge");
    assert_eq!(stats.estimated_size, 0);
    assert_eq!(stats.evictions_by_cause, [0, 1, 0], "counted as expired");
    assert_eq!(
        (stats.load_success_count, stats.load_times.total()),
        (1, 1),
        "the load is in the histogram (the second miss was a lookup, not a load)"
    );
}

#[tokio::test]
async fn after_access_entries_live_while_read() {
    let node = node(None);
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(
        &node,
        &catalog,
        config("schema", Some(10), 100).with_expiry(Expiry::AfterAccess),
    );
    load_blob(&cache, "t", 10).await;
    for _ in 0..5 {
        node.clock.advance(Duration::from_secs(9));
        assert!(cache.get("t").is_some());
    }
    node.clock.advance(Duration::from_secs(10));
    assert!(cache.get("t").is_none());
}

#[tokio::test]
async fn entries_without_ttl_never_expire() {
    let node = node(None);
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &catalog, config("iceberg-manifest", None, 100));
    load_blob(&cache, "m", 10).await;
    node.clock.advance(Duration::from_secs(10 * 365 * 86_400));
    assert!(cache.get("m").is_some());
    assert_eq!(cache.stats().ttl_second, -1);
}

#[tokio::test]
async fn an_expired_value_is_reloaded() {
    let node = node(None);
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &catalog, config("hive-file", Some(60), 100));
    load_blob(&cache, "f", 10).await;
    node.clock.advance(Duration::from_secs(61));
    let fresh = load_blob(&cache, "f", 20).await;
    assert_eq!(*fresh, Blob(20));
    assert_eq!(cache.stats().load_success_count, 2);
    assert_eq!(cache.budget().used(), charged("f", 20));
}

#[tokio::test]
async fn the_sweep_releases_expired_values_nobody_reads() {
    let node = node(None);
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &catalog, config("hive-file", Some(60), 100));
    fill(&cache, "k", 10, 100).await;
    node.clock.advance(Duration::from_secs(30));
    assert_eq!(node.governor.purge_expired_now(), 0);
    node.clock.advance(Duration::from_secs(30));
    assert_eq!(
        node.governor.purge_expired_now(),
        10 * fill_charge("k", 100)
    );
    assert_eq!(cache.budget().used(), 0);
    assert_eq!(cache.stats().eviction_count, 10);
    assert_eq!(
        cache.stats().evictions_by_cause[EvictionCause::Expired.index()],
        10
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_values_are_swept_while_reclamation_requests_keep_coming() {
    use metacache_cache::{Clock, GovernorOptions, MemoryGovernor};
    let (clock, time) = Clock::manual();
    let governor = MemoryGovernor::with_options(GovernorOptions {
        node_limit: Some(1 << 20),
        clock,
        sweep_interval: Duration::from_millis(50),
        ..GovernorOptions::default()
    });
    let catalog = governor.catalog_budget("c", None);
    let expiring = metacache_cache::ManagedCache::<String, Blob>::new(
        config("hive-table", Some(60), 100),
        &governor,
        &catalog,
    );
    expiring.insert("t".into(), Blob(1000));
    assert!(expiring.budget().used() > 0);
    time.advance(Duration::from_secs(61));
    // A level that keeps refusing: every refusal files a reclamation request.
    let short = catalog.child(metacache_ledger::Level::Entry, "short", Some(1000));
    short.try_reserve(600).expect("fits");
    let started = std::time::Instant::now();
    while expiring.budget().used() > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the expired value kept its bytes under steady pressure"
        );
        // Faster than the sweep interval: the worker always finds a request waiting.
        short
            .try_reserve(600)
            .expect_err("the level is full: budget_exceeded files a request");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    short.release(600);
}
