//! Reclamation (§3): the short scope, same catalog first, largest first, coldest values first.

mod common;

use std::time::Duration;

use common::*;
use metacache_cache::ManagedCache;

#[tokio::test]
async fn a_catalog_shortfall_evicts_within_that_catalog_only() {
    let node = node(None);
    let small = catalog(&node, "small", Some(10 * charged("f0", 100)));
    let other = catalog(&node, "other", None);
    let parts = cache::<Blob>(&node, &small, config("hive-partition", Some(600), 1000));
    let files = cache::<Blob>(&node, &small, config("hive-file", Some(600), 1000));
    let bystander = cache::<Blob>(&node, &other, config("hive-file", Some(600), 1000));
    for i in 0..10 {
        load_blob(&parts, &format!("f{i}"), 100).await;
        load_blob(&bystander, &format!("f{i}"), 100).await;
    }
    // `files` holds nothing it could displace: the catalog, full of partitions, refuses.
    load_blob(&files, "one-more", 300).await;
    assert_eq!(
        files.stats().last_weight_reject_reason.as_deref(),
        Some("budget_exceeded")
    );
    node.governor.reclaim_now();
    assert!(
        small.used() + charged("one-more", 300) <= small.limit().unwrap(),
        "room was made for the value"
    );
    assert!(parts.len() < 10, "the catalog's other cache gave room");
    assert_eq!(
        parts.stats().evictions_by_cause,
        [0, 0, 10 - parts.len() as u64],
        "evicted for a neighbour: counted as reclaimed"
    );
    assert_eq!(
        bystander.len(),
        10,
        "another catalog is never asked for a catalog shortfall"
    );
    load_blob(&files, "one-more", 300).await;
    assert!(files.get("one-more").is_some());
    assert_eq!(files.resident_charge(), files.budget().used());
    assert_eq!(parts.resident_charge(), parts.budget().used());
}

#[tokio::test]
async fn a_node_shortfall_asks_the_requesting_catalog_first_then_the_largest() {
    let node = node(Some(30 * fill_charge("k", 100)));
    let a = catalog(&node, "a", None);
    let b = catalog(&node, "b", None);
    let c = catalog(&node, "c", None);
    let in_a = cache::<Blob>(&node, &a, config("hive-file", Some(600), 1000));
    let in_b = cache::<Blob>(&node, &b, config("hive-file", Some(600), 1000));
    let in_c = cache::<Blob>(&node, &c, config("hive-file", Some(600), 1000));
    fill(&in_a, "k", 5, 100).await;
    fill(&in_b, "k", 15, 100).await;
    fill(&in_c, "k", 10, 100).await;
    // Needs 7 values' worth: catalog a (the requester) gives its 5, then b, the largest.
    load_blob(&in_a, "big", 7 * fill_charge("k", 100) - charged("big", 0)).await;
    node.governor.reclaim_now();
    assert_eq!(in_a.len(), 0);
    assert!(in_b.len() < 15);
    assert_eq!(in_c.len(), 10, "the smaller catalog is untouched");
    load_blob(&in_a, "big", 7 * fill_charge("k", 100) - charged("big", 0)).await;
    assert!(in_a.get("big").is_some());
}

#[tokio::test]
async fn an_entry_group_shortfall_stays_inside_the_group() {
    let node = node(None);
    let cat = catalog(&node, "c", None);
    let views = group(&cat, "iceberg.partition_view", Some(4 * charged("k0", 100)));
    let mvcc = cache::<Blob>(
        &node,
        &views,
        config("iceberg.mvcc-partition-view", Some(600), 100),
    );
    let list = cache::<Blob>(
        &node,
        &views,
        config("iceberg.list-partitions-view", Some(600), 100),
    );
    let table = cache::<Blob>(&node, &cat, config("iceberg-table", Some(600), 100));
    for i in 0..2 {
        load_blob(&mvcc, &format!("k{i}"), 100).await;
        load_blob(&list, &format!("k{i}"), 100).await;
        load_blob(&table, &format!("k{i}"), 100).await;
    }
    load_blob(&mvcc, "k9", 100).await;
    assert_eq!(
        mvcc.stats().weight_reject_count,
        1,
        "the two views share one budget"
    );
    node.governor.reclaim_now();
    assert_eq!(table.len(), 2);
    assert!(mvcc.len() + list.len() < 4);
}

#[tokio::test]
async fn lowering_the_node_limit_brings_use_back_under_it() {
    let node = node(None);
    let cat = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &cat, config("hive-file", Some(600), 1000));
    fill(&cache, "k", 100, 1000).await;
    let half = 50 * fill_charge("k", 1000);
    node.governor.set_node_limit(Some(half));
    node.governor.reclaim_now();
    assert!(node.governor.node().used() <= half);
    assert_eq!(cache.resident_charge(), cache.budget().used());
    assert_eq!(cache.stats().max_weight, half as i64);
    assert_eq!(cache.stats().eviction_count, 100 - cache.len() as u64);
    assert!(cache.stats().eviction_count >= 50);
    // Re-scaling to the new limit evicts by size; the background worker, which may reach the
    // node's shortfall first, by reclamation. Nothing expired.
    let [size, expired, reclaimed] = cache.stats().evictions_by_cause;
    assert_eq!(
        (size + reclaimed, expired),
        (cache.stats().eviction_count, 0)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_background_worker_reclaims_without_being_asked() {
    let node = node(None);
    let cat = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &cat, config("hive-file", Some(600), 1000));
    fill(&cache, "k", 100, 1000).await;
    node.governor
        .set_node_limit(Some(10 * fill_charge("k", 1000)));
    // Bounded wait for the worker thread (not a TTL): 10 s at most.
    for _ in 0..1000 {
        if node.governor.node().used() <= 10 * fill_charge("k", 1000) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(node.governor.node().used() <= 10 * fill_charge("k", 1000));
}

/// The advisors' share of the node is left out of the caches' maps only while an advisor runs:
/// once the last one went with its cache, the maps take the whole node limit again (it cost a
/// sixteenth of the node for nothing), and a cache built with an advisor later leaves it again.
#[tokio::test]
async fn the_advisors_share_returns_to_the_maps_when_the_last_advisor_goes() {
    let limit = 4 << 20;
    let node = node(Some(limit));
    let room = limit - metacache_cache::advisors_limit(Some(limit));
    let plain = cache::<Blob>(
        &node,
        &catalog(&node, "plain", None),
        config("blobs", None, 1_000_000).with_advisor(None),
    );
    let advised_options = Some(metacache_cache::AdvisorOptions {
        sample_keys: 256,
        ..metacache_cache::AdvisorOptions::default()
    });
    let advised_catalog = catalog(&node, "advised", None);
    let advised = cache::<Blob>(
        &node,
        &advised_catalog,
        config("advised", None, 1_000).with_advisor(advised_options),
    );
    let fill = |round: u64| {
        for i in 0..(2 * limit / 1024) {
            plain.insert(format!("r{round}-{i:05}"), Blob(1024));
        }
        node.governor.reclaim_now();
        plain.budget().used()
    };
    let used = fill(0);
    assert!(
        used <= room,
        "the advisors' share is left: {used} of {room}"
    );

    // The governor's advisor thread may hold the cache a moment longer (it drains every
    // advisor with the live caches in hand): the share goes at the first settling after that.
    let live = node.governor.live_caches();
    drop(advised);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while node.governor.live_caches() >= live {
        assert!(
            std::time::Instant::now() < deadline,
            "the dropped cache is still alive after 10 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    node.governor.purge_expired_now();
    let used = fill(1);
    assert!(
        used > room && used <= limit,
        "the whole node again: {used}, room {room}, limit {limit}"
    );

    let _again = cache::<Blob>(
        &node,
        &advised_catalog,
        config("advised", None, 1_000).with_advisor(advised_options),
    );
    // A round of the advisor thread that took its list of caches before this one was built
    // may take the share back once more; the next round gives it again (docs/ARCHITECTURE.md,
    // "a build racing that is corrected a drain later").
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let used = fill(2);
        if used <= room {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "left again: {used} of {room}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A cache bound by the node limit with its quota advisor on: the advisor's bytes are charged
/// under the node too, so a map that counted the whole node limit as its own filled it and the
/// node then refused its stores for room the map believed it had, each refusal reclaiming 1/32
/// of the limit — reclamation, not the policy, chose what stayed. The map leaves the advisors'
/// share of the node instead.
#[tokio::test]
async fn under_a_node_limit_a_cache_leaves_the_advisors_their_share() {
    let limit = 4 << 20;
    let node = node(Some(limit));
    let catalog = catalog(&node, "advised", None);
    let share = metacache_cache::advisors_limit(Some(limit));
    // A sample small enough for the advisors' share of a 4 MiB node (256 KiB).
    let advisor = Some(metacache_cache::AdvisorOptions {
        sample_keys: 256,
        ..metacache_cache::AdvisorOptions::default()
    });
    let cache = cache::<Blob>(
        &node,
        &catalog,
        config("blobs", None, 1_000_000).with_advisor(advisor),
    );
    // Put-only, every key as rare as the next: what a look-aside writer with key churn sends.
    let keys = 4 * limit / 1024;
    let mut seed = 0x2545_F491_4F6C_DD1D_u64;
    for i in 0..(10 * keys) {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        cache.insert(format!("k{:06}", seed % keys), Blob(1024));
        if i % 128 == 0 {
            cache.advise_now();
        }
    }
    node.governor.reclaim_now();
    let stats = cache.stats();
    assert!(
        cache.advisor_bytes() > 0,
        "the advisor holds bytes under the node"
    );
    assert_eq!(stats.weight_reject_count, 0, "stores refused: {stats:?}");
    let reclaimed = metacache_cache::EvictionCause::Reclaimed.index();
    assert_eq!(
        stats.evictions_by_cause[reclaimed], 0,
        "reclamation chose what stayed: {stats:?}"
    );
    let room = limit - share;
    let used = cache.budget().used();
    assert!(
        used <= room,
        "the values fill what the advisors leave: {used} of {room}"
    );
    assert!(used > room * 9 / 10, "and all of it: {used} of {room}");
}

/// Values stored in hundreds of caches from two threads while the worker's passes sort those
/// caches by the bytes they hold: every pass sees the bytes move under it, and the worker
/// outlives them all. (The sort read each cache's bytes at every comparison; the standard
/// sort found that no total order and panicked, which ended the worker: reclamation stopped
/// for the node, every admission past the limit refused from then on.)
#[test]
fn the_worker_outlives_caches_changing_while_it_sorts_them() {
    let node = node(Some(1 << 20));
    let catalogs: Vec<_> = (0..4)
        .map(|c| catalog(&node, &format!("c{c}"), None))
        .collect();
    let caches: Vec<ManagedCache<String, Blob>> = (0..400)
        .map(|i| cache(&node, &catalogs[i % 4], config("hive-file", None, 1_000)))
        .collect();
    std::thread::scope(|s| {
        for writer in 0..2u64 {
            let caches = &caches;
            s.spawn(move || {
                let mut x = writer.wrapping_add(0x9E37_79B9_7F4A_7C15);
                for i in 0..60_000u64 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let cache = &caches[(x % caches.len() as u64) as usize];
                    cache.insert(format!("w{writer}-{i}"), Blob(200 + x % 400));
                }
            });
        }
    });
    assert!(
        node.governor.reclaim_stats().requests > 0,
        "the node's limit bound: passes ran"
    );
    // The worker still answers: a value refused now is made room for by the worker alone.
    let before = node.governor.reclaim_stats().requests;
    let started = std::time::Instant::now();
    let mut i = 0u64;
    while node.governor.reclaim_stats().requests == before {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the reclamation worker handled no request in 20 s: it is gone"
        );
        caches[0].insert(format!("after-{i}"), Blob(50_000));
        i += 1;
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(node.governor.node().used() <= 1 << 20);
}
