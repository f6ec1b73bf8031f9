//! Admission through the ledger (§3): every reject reason, values returned when rejected,
//! replacement reserving max(old, new), accounting off without limits.

mod common;

use common::*;
use metacache_cache::Admission;
use metacache_ledger::{RejectKind, RejectReason};

#[tokio::test]
async fn admitted_values_are_charged_estimate_plus_overhead_at_every_level() {
    let node = node(Some(1 << 20));
    let catalog = catalog(&node, "c", Some(1 << 19));
    let group = group(&catalog, "hive.file", Some(1 << 18));
    let cache = cache::<Blob>(&node, &group, config("hive-file", Some(60), 100));
    load_blob(&cache, "a", 1000).await;
    for budget in [cache.budget(), &group, &catalog, node.governor.node()] {
        assert_eq!(budget.used(), charged("a", 1000));
    }
    let stats = cache.stats();
    assert_eq!(
        (stats.max_weight, stats.estimated_weight),
        (1 << 18, charged("a", 1000))
    );
}

#[tokio::test]
async fn every_reject_reason_is_recorded_and_the_value_still_returned() {
    let node = node(Some(10_000));
    let catalog = catalog(&node, "c", None);
    let blobs = cache::<Blob>(&node, &catalog, config("hive-file", Some(60), 100));

    let too_large = load_blob(&blobs, "huge", 20_000).await;
    assert_eq!(
        *too_large,
        Blob(20_000),
        "a rejected value is returned to the caller"
    );
    assert_eq!(
        blobs.stats().last_weight_reject_reason.as_deref(),
        Some("entry_too_large")
    );

    let zero = load_blob(&blobs, "empty", 0).await;
    assert_eq!(*zero, Blob(0));
    assert_eq!(
        blobs.stats().last_weight_reject_reason.as_deref(),
        Some("invalid_zero_estimate")
    );

    let opaque = cache::<Opaque>(&node, &catalog, config("adbc-table-schema", Some(60), 100));
    opaque
        .get_or_load("t".into(), || async { Ok::<_, std::io::Error>(Opaque) })
        .await
        .unwrap();
    assert_eq!(
        opaque.stats().last_weight_reject_reason.as_deref(),
        Some("incomplete_estimate:opaque_handle")
    );

    let exploding = cache::<Exploding>(&node, &catalog, config("doris-schema", Some(60), 100));
    assert_eq!(
        exploding.insert("t".into(), Exploding),
        Admission::Rejected(RejectReason::EstimatorFailure {
            detail: "estimator exploded".into()
        })
    );
    assert_eq!(
        exploding.stats().last_weight_reject_reason.as_deref(),
        Some("incomplete_estimate:estimator_failure:estimator exploded")
    );

    // Another cache of the catalog holds most of the node: this cache has nothing of its own
    // to displace, so the node refuses.
    let other = cache::<Blob>(&node, &catalog, config("hive-partition", Some(60), 100));
    load_blob(&other, "fits", 8_000).await;
    load_blob(&blobs, "no-room", 3_000).await;
    let stats = blobs.stats();
    assert_eq!(
        stats.last_weight_reject_reason.as_deref(),
        Some("budget_exceeded")
    );
    assert_eq!(stats.weight_reject_count, 3);
    assert_eq!(stats.estimated_weight, 0);
    assert!(
        blobs.get("no-room").is_none(),
        "rejected values are not retained"
    );
    assert!(blobs.get("huge").is_none());
    // The background worker may already have evicted "fits" to make room: either way, only
    // what is resident is charged.
    assert_eq!(node.governor.node().used(), other.budget().used());
    assert_eq!(other.resident_charge(), other.budget().used());
}

#[tokio::test]
async fn a_new_value_displaces_colder_values_of_its_own_cache() {
    let node = node(Some(10_000));
    let catalog = catalog(&node, "c", None);
    let blobs = cache::<Blob>(&node, &catalog, config("hive-file", Some(60), 100));
    load_blob(&blobs, "fits", 8_000).await;
    let admission = blobs.insert("newer".into(), Blob(3_000));
    assert_eq!(
        admission,
        Admission::Retained {
            charge: charged("newer", 3_000)
        }
    );
    assert!(blobs.get("newer").is_some(), "the new value is retained");
    assert!(blobs.get("fits").is_none(), "the colder value made room");
    let stats = blobs.stats();
    assert_eq!((stats.weight_reject_count, stats.eviction_count), (0, 1));
    assert_eq!(stats.evictions_by_cause, [1, 0, 0], "its own bound: size");
    assert_eq!(blobs.budget().used(), charged("newer", 3_000));
    assert_eq!(blobs.resident_charge(), blobs.budget().used());
}

#[tokio::test]
async fn a_refused_replacement_drops_the_old_value() {
    let node = node(Some(10_000));
    let catalog = catalog(&node, "c", None);
    let blobs = cache::<Blob>(&node, &catalog, config("hive-file", Some(60), 100));
    assert!(matches!(
        blobs.insert("k".into(), Blob(1_000)),
        Admission::Retained { .. }
    ));
    assert_eq!(
        blobs.insert("k".into(), Blob(20_000)),
        Admission::Rejected(RejectReason::EntryTooLarge)
    );
    assert!(
        blobs.get("k").is_none(),
        "the old value must not keep answering after a newer one was offered"
    );
    assert_eq!(blobs.budget().used(), 0);
    assert_eq!(blobs.stats().eviction_count, 1);
    assert_eq!(
        blobs.stats().weight_rejects_by_reason[RejectKind::EntryTooLarge.index()],
        1
    );
}

#[tokio::test]
async fn without_any_limit_nothing_is_rejected_by_weight() {
    let node = node(None);
    let catalog = catalog(&node, "c", None);
    let opaque = cache::<Opaque>(&node, &catalog, config("x", Some(60), 100));
    assert_eq!(
        opaque.insert("t".into(), Opaque),
        Admission::Retained {
            charge: charged("t", 64)
        }
    );
    let blobs = cache::<Blob>(&node, &catalog, config("y", Some(60), 100));
    assert_eq!(
        blobs.insert("z".into(), Blob(0)),
        Admission::Retained {
            charge: charged("z", 0)
        }
    );
    assert_eq!(blobs.stats().max_weight, -1);
    assert_eq!(blobs.stats().weight_reject_count, 0);
}

#[tokio::test]
async fn replacing_a_value_reserves_the_larger_of_old_and_new_not_the_sum() {
    // The limit leaves the 3 % of it that quick_cache keeps out of reach of one value.
    let node = node(Some(charged("k", 6_000) * 104 / 100));
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &catalog, config("hive-file", Some(60), 100));
    assert!(matches!(
        cache.insert("k".into(), Blob(5_000)),
        Admission::Retained { .. }
    ));
    // old + new would be 11,000 + 1,024 > limit; max(old, new) fits.
    assert_eq!(
        cache.insert("k".into(), Blob(6_000)),
        Admission::Retained {
            charge: charged("k", 6_000)
        }
    );
    assert_eq!(cache.budget().used(), charged("k", 6_000));
    assert_eq!(*cache.get("k").unwrap(), Blob(6_000));
    assert_eq!(
        cache.insert("k".into(), Blob(10)),
        Admission::Retained {
            charge: charged("k", 10)
        }
    );
    assert_eq!(cache.budget().used(), charged("k", 10));
    assert_eq!(cache.len(), 1);
}

#[tokio::test]
async fn a_disabled_cache_loads_every_time_and_retains_nothing() {
    for config in [
        config("a", Some(60), 100).with_enabled(false),
        config("b", Some(0), 100),
        config("c", Some(60), 0),
    ] {
        let node = node(None);
        let catalog = catalog(&node, "c", None);
        let cache = cache::<Blob>(&node, &catalog, config);
        for _ in 0..3 {
            load_blob(&cache, "k", 10).await;
        }
        assert_eq!(cache.insert("k".into(), Blob(1)), Admission::Disabled);
        let stats = cache.stats();
        assert!(!stats.effective_enabled);
        assert_eq!(
            (
                stats.request_count,
                stats.miss_count,
                stats.load_success_count
            ),
            (3, 3, 3)
        );
        assert_eq!((stats.estimated_size, stats.estimated_weight), (0, 0));
    }
}

#[tokio::test]
async fn capacity_evictions_release_their_bytes() {
    let node = node(None);
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &catalog, config("hive-partition", Some(60), 10));
    fill(&cache, "p", 50, 100).await;
    assert!(cache.len() <= 10);
    let stats = cache.stats();
    assert_eq!(stats.eviction_count, 50 - cache.len() as u64);
    assert_eq!(
        cache.budget().used(),
        cache.len() as u64 * fill_charge("p", 100)
    );
    assert_eq!(cache.resident_charge(), cache.budget().used());
}

#[tokio::test]
async fn dropping_a_cache_releases_everything_it_held() {
    let node = node(Some(1 << 20));
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &catalog, config("hive-file", Some(60), 100));
    fill(&cache, "f", 20, 100).await;
    assert_eq!(node.governor.node().used(), 20 * fill_charge("f", 100));
    drop(cache);
    assert_eq!(node.governor.node().used(), 0);
    assert_eq!(node.governor.live_caches(), 0);
}
