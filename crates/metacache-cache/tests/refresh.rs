//! Refresh-ahead (SPEC §8.3) driven by a manual clock: the due point, one refresh per value,
//! the node-wide bound, failures, invalidation during a refresh, the hard TTL joining a
//! refresh, and renewal when the source says "unchanged". No test sleeps on the cache's clock;
//! waits for the background task have a timeout and say what they waited for.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;

use common::*;
use metacache_cache::{ManagedCache, RefreshStats, Refreshed, refresher};
use tokio::sync::Semaphore;

/// TTL 100 s: due 10 s before, at 90 s.
const TTL: u64 = 100;

struct Setup {
    node: Node,
    cache: ManagedCache<String, Blob>,
    /// Refreshes the refresher was called for.
    calls: Arc<AtomicU64>,
    /// Each refresh takes one permit before it answers.
    gate: Arc<Semaphore>,
}

enum Answer {
    /// A new value of this size.
    Changed(u64),
    Unchanged,
    Fails,
}

fn setup(answer: Answer, open: bool) -> Setup {
    let node = node(None);
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(
        &node,
        &catalog,
        config("hive-table", Some(TTL), 100).with_auto_refresh(true),
    );
    let calls = Arc::new(AtomicU64::new(0));
    let gate = Arc::new(Semaphore::new(if open { 1_000 } else { 0 }));
    let (c, g) = (Arc::clone(&calls), Arc::clone(&gate));
    let answer = Arc::new(answer);
    cache.set_refresher(refresher(move |_key: String, _old| {
        let (c, g, answer) = (Arc::clone(&c), Arc::clone(&g), Arc::clone(&answer));
        async move {
            c.fetch_add(1, SeqCst);
            g.acquire().await.expect("gate").forget();
            match *answer {
                Answer::Changed(size) => Ok(Refreshed::Changed(Blob(size))),
                Answer::Unchanged => Ok(Refreshed::Unchanged),
                Answer::Fails => Err("the metastore is down".into()),
            }
        }
    }));
    Setup {
        node,
        cache,
        calls,
        gate,
    }
}

/// Waits (real time, at most 5 s) until the refresh counters satisfy `done`.
async fn settle(
    cache: &ManagedCache<String, Blob>,
    what: &str,
    done: impl Fn(RefreshStats) -> bool,
) {
    let waited = tokio::time::timeout(Duration::from_secs(5), async {
        while !done(cache.refresh_stats()) {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "{what}: {:?}", cache.refresh_stats());
}

/// Waits (real time, at most 5 s) until the refresher was called `n` times: its flight exists.
async fn wait_for_calls(calls: &AtomicU64, n: u64) {
    let waited = tokio::time::timeout(Duration::from_secs(5), async {
        while calls.load(SeqCst) < n {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "the refresher was not called {n} times");
}

async fn read(cache: &ManagedCache<String, Blob>, key: &str) -> u64 {
    let loaded = cache
        .get_or_load(key.to_owned(), || async {
            Ok::<_, std::io::Error>(Blob(999))
        })
        .await
        .expect("read");
    loaded.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_past_the_due_point_serves_the_value_and_refreshes_it_once() {
    let s = setup(Answer::Changed(2), true);
    load_blob(&s.cache, "t", 1).await;
    s.node.clock.advance(Duration::from_secs(89));
    assert_eq!(read(&s.cache, "t").await, 1);
    assert_eq!(s.cache.refresh_stats().started, 0, "not due before 90 s");
    s.node.clock.advance(Duration::from_secs(1));
    // Every read in the window serves the cached value; one refresh starts.
    for _ in 0..5 {
        assert!([1, 2].contains(&read(&s.cache, "t").await));
    }
    settle(&s.cache, "the refresh stores", |r| r.succeeded == 1).await;
    assert_eq!(s.calls.load(SeqCst), 1, "one refresh per value");
    assert_eq!(read(&s.cache, "t").await, 2, "the refreshed value");
    // The refreshed value has its own TTL from the refresh: a hit at the old hard TTL.
    s.node.clock.advance(Duration::from_secs(15));
    assert_eq!(s.cache.get("t").map(|v| v.0), Some(2));
    let stats = s.cache.stats();
    assert_eq!(stats.load_success_count, 2, "the load and the refresh");
    assert_eq!(
        stats.miss_count, 1,
        "only the first load missed: no reader waited for a reload"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refreshes_over_the_node_bound_are_skipped_not_queued() {
    let s = setup(Answer::Changed(2), false);
    s.node.governor.refresh_limiter().set_max(1);
    load_blob(&s.cache, "a", 1).await;
    load_blob(&s.cache, "b", 1).await;
    s.node.clock.advance(Duration::from_secs(95));
    read(&s.cache, "a").await;
    read(&s.cache, "b").await;
    let r = s.cache.refresh_stats();
    assert_eq!((r.started, r.skipped), (1, 1), "{r:?}");
    assert_eq!(s.node.governor.refresh_limiter().running(), 1);
    // The skipped one may try again once a slot is free.
    s.gate.add_permits(10);
    settle(&s.cache, "the first refresh ends", |r| r.succeeded == 1).await;
    read(&s.cache, "b").await;
    settle(&s.cache, "the second refresh ends", |r| r.succeeded == 2).await;
    assert_eq!(s.node.governor.refresh_limiter().running(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_refresh_keeps_the_value_until_the_hard_ttl() {
    let s = setup(Answer::Fails, true);
    load_blob(&s.cache, "t", 1).await;
    s.node.clock.advance(Duration::from_secs(91));
    assert_eq!(read(&s.cache, "t").await, 1);
    settle(&s.cache, "the refresh fails", |r| r.failed == 1).await;
    assert_eq!(read(&s.cache, "t").await, 1, "the old value still serves");
    assert_eq!(
        s.calls.load(SeqCst),
        1,
        "no second refresh of the same value"
    );
    // At the hard TTL the caller loads in the foreground.
    s.node.clock.advance(Duration::from_secs(9));
    assert_eq!(read(&s.cache, "t").await, 999);
    assert!(
        s.cache
            .stats()
            .last_error
            .is_some_and(|e| e.contains("metastore is down"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refresh_that_started_before_an_invalidation_never_stores() {
    let s = setup(Answer::Changed(2), false);
    load_blob(&s.cache, "t", 1).await;
    s.node.clock.advance(Duration::from_secs(95));
    read(&s.cache, "t").await;
    settle(&s.cache, "the refresh runs", |r| r.started == 1).await;
    wait_for_calls(&s.calls, 1).await;
    assert!(s.cache.invalidate(&"t".to_owned()));
    s.gate.add_permits(1);
    // The refresh answers but stores nothing; the next read loads.
    let done = tokio::time::timeout(Duration::from_secs(5), async {
        while s.node.governor.refresh_limiter().running() > 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await;
    assert!(done.is_ok(), "the refresh ends");
    assert_eq!(s.cache.refresh_stats().succeeded, 0);
    assert!(
        s.cache.get("t").is_none(),
        "nothing stored after the invalidation"
    );
    assert_eq!(read(&s.cache, "t").await, 999);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_at_the_hard_ttl_joins_the_refresh_instead_of_loading() {
    let s = setup(Answer::Changed(2), false);
    load_blob(&s.cache, "t", 1).await;
    s.node.clock.advance(Duration::from_secs(95));
    read(&s.cache, "t").await;
    settle(&s.cache, "the refresh runs", |r| r.started == 1).await;
    wait_for_calls(&s.calls, 1).await;
    s.node.clock.advance(Duration::from_secs(5));
    let loads = Arc::new(AtomicU64::new(0));
    let callers: Vec<_> = (0..8)
        .map(|_| {
            let (cache, loads) = (s.cache.clone(), Arc::clone(&loads));
            tokio::spawn(async move {
                cache
                    .get_or_load("t".to_owned(), || async move {
                        loads.fetch_add(1, SeqCst);
                        Ok::<_, std::io::Error>(Blob(999))
                    })
                    .await
                    .map(|v| v.0)
            })
        })
        .collect();
    // Let the callers find the value expired and join the refresh's flight.
    let joined = tokio::time::timeout(Duration::from_secs(5), async {
        while s.cache.waiters(&"t".to_owned()) < 8 {
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert!(joined.is_ok(), "8 callers wait on the refresh");
    s.gate.add_permits(1);
    for caller in callers {
        assert_eq!(caller.await.expect("task").expect("value"), 2);
    }
    assert_eq!(loads.load(SeqCst), 0, "no caller loaded");
    assert_eq!(s.cache.refresh_stats().loads_saved, 8);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unchanged_answer_renews_the_deadline_without_reloading() {
    let s = setup(Answer::Unchanged, true);
    let first = load_blob(&s.cache, "t", 1).await;
    s.node.clock.advance(Duration::from_secs(92));
    read(&s.cache, "t").await;
    settle(&s.cache, "the refresh renews", |r| r.unchanged == 1).await;
    // Past the first hard TTL: the same value, still cached.
    s.node.clock.advance(Duration::from_secs(50));
    let again = s.cache.get("t").expect("renewed");
    assert!(again.ptr_eq(&first), "the same value, not a reload");
    // Renewed values are refreshed again at their next due point.
    s.node.clock.advance(Duration::from_secs(45));
    read(&s.cache, "t").await;
    settle(&s.cache, "the second renewal", |r| r.unchanged == 2).await;
    assert_eq!(
        s.cache.stats().load_success_count,
        3,
        "one load, two checks"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_auto_refresh_nothing_refreshes() {
    let node = node(None);
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &catalog, config("hive-table", Some(TTL), 100));
    cache.set_refresher(refresher(|_k: String, _old| async {
        Ok::<_, metacache_cache::refresh::RefreshError>(Refreshed::Changed(Blob(2)))
    }));
    assert!(!cache.refreshes_ahead());
    load_blob(&cache, "t", 1).await;
    node.clock.advance(Duration::from_secs(95));
    assert_eq!(read(&cache, "t").await, 1);
    assert_eq!(cache.refresh_stats(), RefreshStats::default());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refresher_that_panics_is_a_failed_refresh_and_gives_its_slot_back() {
    let node = node(None);
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(
        &node,
        &catalog,
        config("hive-table", Some(TTL), 100).with_auto_refresh(true),
    );
    cache.set_refresher(refresher(|_k: String, _old| async {
        if true {
            panic!("a bug in the connector");
        }
        Ok::<_, metacache_cache::refresh::RefreshError>(Refreshed::Unchanged)
    }));
    load_blob(&cache, "t", 1).await;
    node.clock.advance(Duration::from_secs(95));
    assert_eq!(read(&cache, "t").await, 1);
    settle(&cache, "the panic is a failure", |r| r.failed == 1).await;
    assert_eq!(node.governor.refresh_limiter().running(), 0);
    assert_eq!(read(&cache, "t").await, 1, "the value still serves");
}
