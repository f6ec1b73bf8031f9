//! Invalidation of a key, of a predicate and of everything; each fences loads in flight.

mod common;

use std::sync::Arc;

use common::*;
use tokio::sync::Notify;

type Loading = tokio::task::JoinHandle<metacache_cache::Result<metacache_cache::Cached<Blob>>>;

/// Starts a load of "t" that yields `Blob(1)` once the returned notify fires, and returns once
/// the source is being read: whatever it returns predates what the test does next.
async fn held_load(cache: &metacache_cache::ManagedCache<String, Blob>) -> (Loading, Arc<Notify>) {
    let release = Arc::new(Notify::new());
    let started = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let loading = {
        let cache = cache.clone();
        let release = Arc::clone(&release);
        let started = Arc::clone(&started);
        tokio::spawn(async move {
            cache
                .get_or_load("t".to_owned(), || async move {
                    started.store(true, std::sync::atomic::Ordering::SeqCst);
                    release.notified().await;
                    Ok::<_, std::io::Error>(Blob(1))
                })
                .await
        })
    };
    while !started.load(std::sync::atomic::Ordering::SeqCst) {
        tokio::task::yield_now().await;
    }
    (loading, release)
}

#[tokio::test]
async fn invalidation_removes_and_releases() {
    let node = node(None);
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &catalog, config("hive-partition", Some(60), 100));
    for key in ["db1.t1", "db1.t2", "db2.t1", "db2.t2"] {
        load_blob(&cache, key, 100).await;
    }
    assert!(cache.invalidate(&"db1.t1".to_owned()));
    assert!(!cache.invalidate(&"db1.t1".to_owned()));
    assert_eq!(cache.invalidate_if(|key, _| key.starts_with("db2.")), 2);
    assert_eq!(cache.len(), 1);
    assert_eq!(cache.budget().used(), charged("db1.t2", 100));
    assert_eq!(cache.invalidate_all(), 1);
    let stats = cache.stats();
    assert_eq!(
        (
            stats.invalidate_count,
            stats.eviction_count,
            stats.estimated_weight
        ),
        (4, 0, 0)
    );
}

async fn fenced_by(invalidate: impl FnOnce(&metacache_cache::ManagedCache<String, Blob>)) {
    let node = node(None);
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &catalog, config("hive-table", Some(60), 100));
    let (loading, release) = held_load(&cache).await;
    invalidate(&cache);
    // A caller arriving after the invalidation must not join the load that began before it
    // (it would get pre-invalidation data): it loads on its own, while the old load is held.
    let after = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        load_blob(&cache, "t", 2),
    )
    .await
    .expect("a caller after the invalidation waited for the load from before it");
    assert_eq!(*after, Blob(2));
    release.notify_one();
    let value = loading.await.expect("task").expect("load");
    assert_eq!(*value, Blob(1), "the caller still gets the value it loaded");
    assert_eq!(
        cache.get("t").map(|v| v.0),
        Some(2),
        "a load from before the invalidation never populates the cache"
    );
    assert_eq!(cache.budget().used(), charged("t", 2));
    cache.invalidate(&"t".to_owned());
    assert_eq!(
        *load_blob(&cache, "t", 3).await,
        Blob(3),
        "the next load is cached again"
    );
    assert!(cache.get("t").is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loads_in_flight_do_not_populate_after_invalidate_all() {
    fenced_by(|c| {
        c.invalidate_all();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loads_in_flight_do_not_populate_after_invalidating_their_key() {
    fenced_by(|c| {
        c.invalidate(&"t".to_owned());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loads_in_flight_do_not_populate_after_a_predicate_invalidation() {
    fenced_by(|c| {
        c.invalidate_if(|k, _| k == "t");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loads_in_flight_do_not_populate_after_a_key_predicate_invalidation() {
    fenced_by(|c| {
        c.invalidate_keys_if(|k| k == "t");
    })
    .await;
}

/// Invalidating other keys leaves a load in flight alone: it is cached when it lands.
async fn not_fenced_by(invalidate: impl FnOnce(&metacache_cache::ManagedCache<String, Blob>)) {
    let node = node(None);
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &catalog, config("hive-table", Some(60), 100));
    load_blob(&cache, "other", 5).await;
    let (loading, release) = held_load(&cache).await;
    invalidate(&cache);
    release.notify_one();
    loading.await.expect("task").expect("load");
    assert!(
        cache.get("t").is_some(),
        "an unrelated invalidation does not fence the load"
    );
    assert!(cache.get("other").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalidating_another_key_does_not_fence_a_load() {
    not_fenced_by(|c| {
        assert!(c.invalidate(&"other".to_owned()));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_predicate_for_other_keys_does_not_fence_a_load() {
    not_fenced_by(|c| {
        assert_eq!(c.invalidate_keys_if(|k| k == "other"), 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retired_cache_releases_everything_and_never_stores_again() {
    let node = node(None);
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &catalog, config("hive-table", Some(60), 100));
    let held = load_blob(&cache, "kept-by-caller", 10).await;
    let (loading, release) = held_load(&cache).await;
    assert_eq!(cache.retire(), 1);
    assert!(cache.is_retired());
    assert_eq!(catalog.used(), 0, "every byte goes back at once");
    release.notify_one();
    assert_eq!(*loading.await.expect("task").expect("load"), Blob(1));
    assert_eq!(*held, Blob(10), "values callers hold stay valid");
    assert_eq!(*load_blob(&cache, "later", 3).await, Blob(3));
    assert!(
        matches!(
            cache.insert("put".to_owned(), Blob(4)),
            metacache_cache::Admission::Fenced
        ),
        "the look-aside path is fenced too"
    );
    assert!(cache.is_empty());
    assert_eq!(catalog.used(), 0);
}
