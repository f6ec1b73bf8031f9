//! Invalidation of a key, of a predicate and of everything; each fences loads in flight.

mod common;

use std::sync::Arc;

use common::*;
use tokio::sync::Notify;

#[tokio::test]
async fn invalidation_removes_and_releases() {
    let node = node(None);
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &catalog, config("hive-partition", Some(60), 100));
    for key in ["db1.t1", "db1.t2", "db2.t1", "db2.t2"] {
        load_blob(&cache, key, 100).await;
    }
    assert!(cache.invalidate("db1.t1"));
    assert!(!cache.invalidate("db1.t1"));
    assert_eq!(cache.invalidate_if(|key, _| key.starts_with("db2.")), 2);
    assert_eq!(cache.len(), 1);
    assert_eq!(cache.budget().used(), charge(100));
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
    let release = Arc::new(Notify::new());
    let loading = {
        let cache = cache.clone();
        let release = Arc::clone(&release);
        tokio::spawn(async move {
            cache
                .get_or_load("t".to_owned(), || async move {
                    release.notified().await;
                    Ok::<_, std::io::Error>(Blob(1))
                })
                .await
        })
    };
    while cache.stats().miss_count < 1 {
        tokio::task::yield_now().await;
    }
    invalidate(&cache);
    release.notify_one();
    let value = loading.await.expect("task").expect("load");
    assert_eq!(*value, Blob(1), "the caller still gets the value it loaded");
    assert!(
        cache.get("t").is_none(),
        "a load from before the invalidation never populates the cache"
    );
    assert_eq!(cache.budget().used(), 0);
    assert_eq!(
        *load_blob(&cache, "t", 2).await,
        Blob(2),
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
        c.invalidate("t");
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
async fn a_retired_cache_releases_everything_and_never_stores_again() {
    let node = node(None);
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &catalog, config("hive-table", Some(60), 100));
    let held = load_blob(&cache, "kept-by-caller", 10).await;
    let release = Arc::new(Notify::new());
    let loading = {
        let cache = cache.clone();
        let release = Arc::clone(&release);
        tokio::spawn(async move {
            cache
                .get_or_load("t".to_owned(), || async move {
                    release.notified().await;
                    Ok::<_, std::io::Error>(Blob(1))
                })
                .await
        })
    };
    while cache.stats().miss_count < 2 {
        tokio::task::yield_now().await;
    }
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
