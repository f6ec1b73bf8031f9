//! Single flight: N concurrent misses of one key → one load, for success and for failure.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};

use common::*;
use metacache_cache::ManagedCache;

const CALLERS: usize = 1000;

/// How the loader of a stampede ends.
#[derive(Clone, Copy)]
enum Outcome {
    Value(u64),
    Failure(&'static str),
    Panic(&'static str),
}

/// Starts `CALLERS` concurrent `get_or_load`s of one key whose loader waits until every other
/// caller is waiting on it, then ends with `outcome`. Returns the results and the number of
/// loads.
async fn stampede(
    cache: &ManagedCache<String, Blob>,
    outcome: Outcome,
) -> (Vec<Result<u64, String>>, u64) {
    let loads = Arc::new(AtomicU64::new(0));
    let tasks: Vec<_> = (0..CALLERS)
        .map(|_| {
            let cache = cache.clone();
            let loads = Arc::clone(&loads);
            tokio::spawn(async move {
                let waiting = cache.clone();
                cache
                    .get_or_load("hot".to_owned(), || async move {
                        loads.fetch_add(1, SeqCst);
                        while waiting.waiters(&"hot".to_owned()) < CALLERS - 1 {
                            tokio::task::yield_now().await;
                        }
                        match outcome {
                            Outcome::Value(v) => Ok(Blob(v)),
                            Outcome::Failure(e) => Err(std::io::Error::other(e)),
                            Outcome::Panic(message) => panic!("{message}"),
                        }
                    })
                    .await
                    .map(|v| v.0)
                    .map_err(|e| e.to_string())
            })
        })
        .collect();
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.expect("task"));
    }
    (results, loads.load(SeqCst))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_concurrent_misses_load_once() {
    let node = node(None);
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &catalog, config("hive-table", Some(60), 100));
    let (results, loads) = stampede(&cache, Outcome::Value(42)).await;
    assert_eq!(loads, 1);
    assert!(results.iter().all(|r| r == &Ok(42)));
    let stats = cache.stats();
    assert_eq!(
        (
            stats.request_count,
            stats.miss_count,
            stats.load_success_count
        ),
        (1000, 1000, 1)
    );
    assert!(cache.get("hot").is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failed_load_reaches_every_waiter_once_and_is_not_cached() {
    let node = node(None);
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &catalog, config("hive-table", Some(60), 100));
    let (results, loads) = stampede(&cache, Outcome::Failure("metastore unreachable")).await;
    assert_eq!(
        loads, 1,
        "a failure is shared, not handed to the next waiter"
    );
    let expected = "loading a value of cache entry 'hive-table' failed: metastore unreachable";
    assert!(results.iter().all(|r| r == &Err(expected.to_owned())));
    let stats = cache.stats();
    assert_eq!((stats.load_failure_count, stats.load_success_count), (1, 0));
    assert_eq!(stats.last_error.as_deref(), Some("metastore unreachable"));
    assert!(stats.last_load_failure_millis.is_some());
    assert!(cache.get("hot").is_none(), "failures are not cached");
    assert_eq!(
        *load_blob(&cache, "hot", 7).await,
        Blob(7),
        "the next access retries"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiters_take_over_when_the_loading_caller_is_cancelled() {
    let node = node(None);
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &catalog, config("hive-table", Some(60), 100));
    let leader = {
        let cache = cache.clone();
        tokio::spawn(async move {
            cache
                .get_or_load("k".to_owned(), || {
                    std::future::pending::<Result<Blob, std::io::Error>>()
                })
                .await
        })
    };
    while cache.stats().miss_count < 1 {
        tokio::task::yield_now().await;
    }
    let follower = {
        let cache = cache.clone();
        tokio::spawn(async move { load_blob(&cache, "k", 5).await })
    };
    while cache.waiters(&"k".to_owned()) < 1 {
        tokio::task::yield_now().await;
    }
    leader.abort();
    assert_eq!(*follower.await.expect("follower"), Blob(5));
    assert_eq!(cache.stats().load_success_count, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_value_that_may_not_be_cached_reaches_every_waiter_and_is_not_stored() {
    let node = node(None);
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &catalog, config("lance-table-access", Some(60), 100));
    let loads = Arc::new(AtomicU64::new(0));
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let cache = cache.clone();
            let loads = Arc::clone(&loads);
            tokio::spawn(async move {
                let waiting = cache.clone();
                cache
                    .get_or_load_if(
                        "vended".to_owned(),
                        || async move {
                            loads.fetch_add(1, SeqCst);
                            while waiting.waiters(&"vended".to_owned()) < 15 {
                                tokio::task::yield_now().await;
                            }
                            Ok::<_, std::io::Error>(Blob(7))
                        },
                        |value| value.0 != 7,
                    )
                    .await
                    .map(|v| v.0)
                    .expect("load")
            })
        })
        .collect();
    for task in tasks {
        assert_eq!(task.await.expect("task"), 7);
    }
    assert_eq!(loads.load(SeqCst), 1, "one load for all waiters");
    assert!(cache.get("vended").is_none(), "never stored");
    assert_eq!(cache.budget().used(), 0);
    assert_eq!(
        cache.stats().weight_reject_count,
        0,
        "not a weight rejection"
    );
    // A cacheable value of another key is stored as usual.
    cache
        .get_or_load_if(
            "plain".to_owned(),
            || async { Ok::<_, std::io::Error>(Blob(8)) },
            |v| v.0 != 7,
        )
        .await
        .expect("load");
    assert!(cache.get("plain").is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_panicking_loader_fails_every_waiter_once_and_is_counted() {
    let node = node(Some(1 << 20));
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &catalog, config("hive-table", Some(60), 100));
    let (results, loads) = stampede(&cache, Outcome::Panic("index out of bounds")).await;
    assert_eq!(
        loads, 1,
        "the waiters do not run the panicking loader again"
    );
    let expected = "loading a value of cache entry 'hive-table' failed: \
                    the loader panicked: index out of bounds";
    assert!(
        results.iter().all(|r| r == &Err(expected.to_owned())),
        "{:?}",
        results.first()
    );
    let stats = cache.stats();
    assert_eq!((stats.load_failure_count, stats.load_success_count), (1, 0));
    assert_eq!(
        stats.last_error.as_deref(),
        Some("the loader panicked: index out of bounds")
    );
    assert_eq!(
        *load_blob(&cache, "hot", 7).await,
        Blob(7),
        "the cache goes on"
    );
}
