//! The node's quota advisors share a sixteenth of the node limit: when their caches' samples
//! would take more, every advisor is capped at one fair level and lowers its sample to fit it,
//! so that every busy cache keeps a curve; an advisor refused its memory waits, holding
//! nothing, and runs again once the level affords it. The governor's advisor thread is off in
//! these tests: each round drains and shares by `MemoryGovernor::advise_now`.

mod common;

use common::advice::{
    Payload, cases, compare_advice, errors, mix, replay, replay_with, value_bytes,
};
use metacache_cache::{AdvisorOptions, CacheConfig, GovernorOptions, ManagedCache, MemoryGovernor};

type Cache = ManagedCache<u64, Payload>;

/// A governor under `node_limit` whose advisors are drained and shared by the test.
fn governor(node_limit: u64) -> MemoryGovernor {
    MemoryGovernor::with_options(GovernorOptions {
        node_limit: Some(node_limit),
        drain_interval: None,
        ..GovernorOptions::default()
    })
}

fn advised(governor: &MemoryGovernor, name: &str) -> Cache {
    let catalog = governor.catalog_budget(name, None);
    let config = CacheConfig::new("advised", None, 1_000_000).with_advisor(Some(AdvisorOptions {
        sample_keys: 4096,
        ..AdvisorOptions::default()
    }));
    ManagedCache::new(config, governor, &catalog)
}

/// `requests` look-aside requests of `keys` keys (skewed: the key of a uniform draw u in
/// [0, 1) is ⌊u² × keys⌋), values of 100–107 bytes so that the node's values never bind.
fn serve(cache: &Cache, keys: u64, requests: u64, seed: u64) {
    for i in 0..requests {
        // The splitmix64 output of the draw's number.
        let draw =
            mix((seed << 32 | i).wrapping_add(0x9E37_79B9_7F4A_7C15)) as f64 / u64::MAX as f64;
        let key = (draw * draw * keys as f64) as u64;
        if cache.get(&key).is_none() {
            cache.insert(key, Payload(100 + value_bytes(key) % 8));
        }
    }
}

/// Twelve busy caches whose full samples would take about 2 MiB each, on a node whose
/// advisors may hold 4 MiB: each keeps a curve from a smaller sample, near one fair level,
/// and together they stay within the share. Without the sharing, the first two advisors took
/// it all and the others stopped for good.
#[test]
fn every_busy_cache_keeps_a_curve_within_the_advisors_share() {
    let governor = governor(64 << 20);
    let limit = governor.advisors_budget().limit().expect("a share");
    assert_eq!(limit, 4 << 20);
    let caches: Vec<Cache> = (0..12)
        .map(|i| advised(&governor, &format!("c{i}")))
        .collect();
    for round in 0..40u64 {
        for (i, cache) in caches.iter().enumerate() {
            serve(cache, 3_000, 500, round * 100 + i as u64);
        }
        governor.advise_now();
        assert!(
            governor.advisors_budget().used() <= limit,
            "round {round}: {} of {limit}",
            governor.advisors_budget().used()
        );
    }
    for (i, cache) in caches.iter().enumerate() {
        let advice = cache.advice().expect("on");
        assert!(
            !advice.points.is_empty(),
            "cache {i} has no curve: {advice:?}"
        );
        assert!(
            advice.sampled_keys < 2_000 && advice.sampled_keys >= 64,
            "cache {i}: a smaller sample, {} keys",
            advice.sampled_keys
        );
    }
    // After the reads (a read drains, and charges what it drained).
    let held: Vec<u64> = caches.iter().map(ManagedCache::advisor_bytes).collect();
    // Alike caches hold alike shares: none was left with a sliver, and none holds more than
    // the fair level while it binds (it binds no more once they fit beside each other).
    let (least, most) = (held.iter().min(), held.iter().max());
    let (Some(&least), Some(&most)) = (least, most) else {
        panic!("no caches")
    };
    assert!(least >= limit / 12 / 2, "held {held:?} of {limit}");
    let total: u64 = held.iter().sum();
    assert_eq!(total, governor.advisors_budget().used());
    let share = governor.advisors_share();
    assert_eq!((share.running, share.waiting), (12, 0), "{share:?}");
    if let Some(level) = share.level {
        assert!(most <= level + (16 << 10), "{held:?} against {share:?}");
    }
}

/// A share too small for even the least sample (a 512 KiB node: 32 KiB for every advisor, less
/// than the least sample's ~45 KiB) stops the advisor, holding nothing, and it is not
/// restarted into the same refusal; its cache goes on.
#[test]
fn an_advisor_refused_even_its_least_waits_holding_nothing() {
    let governor = governor(512 << 10);
    assert_eq!(governor.advisors_budget().limit(), Some(32 << 10));
    let cache = advised(&governor, "c");
    for round in 0..20 {
        serve(&cache, 5_000, 1_000, round);
        cache.advise_now();
        governor.advise_now();
    }
    let advice = cache.advice().expect("on");
    assert!(advice.points.is_empty(), "{advice:?}");
    assert_eq!(
        (advice.reserved_bytes, governor.advisors_budget().used()),
        (0, 0)
    );
    assert!(cache.len() > 100, "the cache itself goes on");
}

/// Advisors drained by their caches alone (no share ran: each grows until the ledger refuses
/// it) leave the ones built last refused, holding nothing and with no curve — what a node
/// did before the share. The next shares cap the others at a fair level and restart the
/// waiting ones, which build curves of their own.
#[test]
fn advisors_waiting_for_room_run_again_at_the_next_shares() {
    let governor = governor(16 << 20);
    let limit = governor.advisors_budget().limit().expect("a share");
    assert_eq!(limit, 1 << 20);
    let caches: Vec<Cache> = (0..8)
        .map(|i| advised(&governor, &format!("c{i}")))
        .collect();
    for round in 0..10u64 {
        for (i, cache) in caches.iter().enumerate() {
            serve(cache, 3_000, 1_000, round * 100 + i as u64);
            cache.advise_now();
        }
    }
    let waiting: Vec<usize> = (0..caches.len())
        .filter(|&i| caches[i].advisor_bytes() == 0)
        .collect();
    assert!(
        !waiting.is_empty(),
        "none was refused: the test shows nothing"
    );
    for &i in &waiting {
        assert!(caches[i].advice().expect("on").points.is_empty());
    }
    governor.advise_now();
    let share = governor.advisors_share();
    assert_eq!(share.running + share.waiting, caches.len(), "{share:?}");
    assert!(share.level.is_some(), "{share:?}");

    for round in 10..30u64 {
        governor.advise_now();
        for (i, cache) in caches.iter().enumerate() {
            serve(cache, 3_000, 500, round * 100 + i as u64);
        }
    }
    governor.advise_now();
    for (i, cache) in caches.iter().enumerate() {
        let advice = cache.advice().expect("on");
        assert!(!advice.points.is_empty(), "cache {i}: {advice:?}");
        assert!(cache.advisor_bytes() > 0, "cache {i}");
    }
    assert!(governor.advisors_budget().used() <= limit);
    let share = governor.advisors_share();
    assert_eq!(
        (share.running, share.waiting),
        (caches.len(), 0),
        "{share:?}"
    );
}

/// A sample lowered for memory halfway through a trace (the share binding as more caches
/// come) predicts about as well as one configured that small from the start: the keys it keeps
/// keep their history, and the miniatures moved into smaller maps keep their counts (only
/// their ghosts and hot marks go). Zipf 0.8 and 1.0 at a fifth of the accuracy table's scale,
/// each against one exact replay per point.
#[test]
fn a_sample_lowered_for_memory_predicts_as_one_configured_that_small() {
    let options = AdvisorOptions {
        sample_keys: 4096,
        half_life: Some(std::time::Duration::from_secs(1 << 30)),
        smallest: 16 << 10,
        ..AdvisorOptions::default()
    };
    for case in cases(20_000, 200_000)
        .into_iter()
        .filter(|c| c.name == "Zipf 0.8" || c.name == "Zipf 1.0")
    {
        let half = case.trace.len() / 2;
        let (_, capped) = replay_with(&case, None, Some(options), |i, cache| {
            if i == half {
                let held = cache.advisor_bytes();
                cache.cap_advisor(held / 4);
            }
        });
        let capped = capped.expect("on");
        let small = AdvisorOptions {
            sample_keys: capped.sample_limit as usize,
            ..options
        };
        let (_, configured) = replay(&case, None, Some(small));
        let configured = configured.expect("on");
        let (capped_mae, capped_max) = errors(&compare_advice(&case, &capped, 2, 1));
        let (small_mae, small_max) = errors(&compare_advice(&case, &configured, 2, 1));
        eprintln!(
            "{}: lowered to {} keys ({} bytes): MAE {capped_mae:.4} max {capped_max:.4}; \
             configured {} keys ({} bytes): MAE {small_mae:.4} max {small_max:.4}",
            case.name,
            capped.sampled_keys,
            capped.reserved_bytes,
            configured.sampled_keys,
            configured.reserved_bytes,
        );
        assert!(capped.sampled_keys < 2_000, "{capped:?}");
        assert!(
            capped_mae <= small_mae + 0.01 && capped_max <= small_max + 0.03,
            "{}: lowered MAE {capped_mae:.4} max {capped_max:.4} against configured MAE \
             {small_mae:.4} max {small_max:.4}",
            case.name
        );
    }
}
