//! The quota advisor against the real cache: on Zipf, TTL, count-bound, scan and loop traces,
//! the curve predicted from one sampled run is compared with exact replays of the real cache at
//! every curve point; and the advisor's memory is bounded, charged and released.

mod common;

use std::time::Duration;

use common::advice::{Case, Churn, Payload, cases, compare, errors, replay, value_bytes, zipf};
use metacache_cache::{
    AdvisorOptions, CacheConfig, GovernorOptions, MAX_QUEUE_EVENTS, ManagedCache, MemoryGovernor,
    QUEUE_EVENTS,
};

fn options() -> AdvisorOptions {
    AdvisorOptions {
        sample_keys: 4096,
        half_life: Some(Duration::from_secs(1 << 30)),
        // The grid of the accuracy table (docs/benchmarks.md): from 16 KiB, where values of
        // 1–16 KiB start to fit; below it every size predicts (and has) almost no hits.
        smallest: 16 << 10,
        ..AdvisorOptions::default()
    }
}

/// Every trace of the accuracy table at a fifth of its scale (20,000 keys, the sample a fifth
/// of them), the advised cache unlimited and then under a binding limit: the predicted hit ratio
/// against the real cache's at every point (at least 8 per trace).
#[test]
fn predicted_curves_follow_exact_replays_of_the_real_cache() {
    let mut all = Vec::new();
    for limit in [None, Some(8 << 20)] {
        for case in cases(20_000, 200_000) {
            let (compared, advice) = compare(&case, options(), limit, 2, 1);
            assert!(
                compared.len() >= 8,
                "{}: {} points",
                case.name,
                compared.len()
            );
            assert!(
                advice.sampling_rate < 1.0,
                "{}: the sample must bind",
                case.name
            );
            let (mae, max) = errors(&compared);
            eprintln!(
                "{} (limit {limit:?}): MAE {mae:.4}, max {max:.4}, rate {:.3}",
                case.name, advice.sampling_rate
            );
            assert!(mae <= 0.03 && max <= 0.10, "{}: {compared:#?}", case.name);
            for pair in compared.windows(2) {
                assert!(pair[1].bytes == 2 * pair[0].bytes, "a doubling grid");
            }
            all.extend(compared);
        }
    }
    let (mae, max) = errors(&all);
    eprintln!("all {} points: MAE {mae:.4}, max {max:.4}", all.len());
    assert!(
        mae <= 0.015,
        "mean absolute error {mae:.4} over every point"
    );
    // The scan through a hot set at this scale (its sample at half the keys) is the largest,
    // 0.074–0.081 in five runs: of 2,000 equally hot keys, the ones whose reports came out high
    // by luck are taken out of the miniatures as heavy, and "fit first" models them less well
    // than the policy does (docs/benchmarks.md, "Quota advisor accuracy").
    assert!(max <= 0.10, "largest error {max:.4}");
}

/// A cache sampled at a high rate (8,192 keys of 20,000, about 0.42): some sampled keys become
/// heavy while the trace runs, and what they put into the miniatures' counts until then must
/// leave with them — the table of heavy keys counts their hits from the start. Left in, those
/// hits raised the rest's hit ratio and every middle size read high: over these two traces the
/// predictions' mean signed error was +0.016 to +0.019 in five runs (each point's up to +0.055);
/// with them taken out, +0.003 to +0.009 in seven (docs/benchmarks.md, "A sampled cache through
/// the binary").
#[test]
fn a_key_counted_apart_takes_its_earlier_requests_with_it() {
    let mut all = Vec::new();
    for case in cases(20_000, 200_000) {
        if case.name != "Zipf 1.0" && case.name != "Zipf 1.0, TTL 120 s" {
            continue;
        }
        let (compared, rate) = sampled_at_8192(&case, &case.name);
        assert!(rate > 0.3 && rate < 0.6, "{}: rate {rate}", case.name);
        all.extend(compared);
    }
    let (mae, _) = errors(&all);
    let bias = bias(&all);
    assert!(
        bias <= 0.012 && mae <= 0.013,
        "the curve reads high: bias {bias:+.4}, MAE {mae:.4}: {all:#?}"
    );
}

/// A sample that starts to bind loses the keys of the largest hashes, a quarter of the
/// heaviest among them at a rate of 0.75; counted apart from then on, sampled or not, they take
/// what they put into the miniatures' counts with them. Left there (scaled with the rest's),
/// they raised the rest's ratio: on Zipf 1.2 the curve read 0.02–0.05 high from 1 MiB to 8 MiB.
/// Five traces, for a mean signed error that one draw of the heavy keys' reports does not
/// decide: ten runs measured −0.0019 to +0.0008 (MAE ≤ 0.0076), and +0.0019 to +0.0104 on the
/// code before, eight of those ten over the bound (docs/benchmarks.md).
#[test]
fn heavy_keys_that_leave_as_the_sample_binds_take_their_hits_with_them() {
    let mut all = Vec::new();
    for seed in [4, 41, 42, 43, 44] {
        let case = Case::new("Zipf 1.2", zipf(1.2, 20_000, 200_000, seed));
        let (compared, rate) = sampled_at_8192(&case, &format!("Zipf 1.2, seed {seed}"));
        assert!(rate > 0.5, "rate {rate}");
        all.extend(compared);
    }
    let (mae, _) = errors(&all);
    let bias = bias(&all);
    eprintln!("bias {bias:+.4}, MAE {mae:.4}");
    assert!(
        bias <= 0.003 && mae <= 0.01,
        "the curve reads high: bias {bias:+.4}, MAE {mae:.4}: {all:#?}"
    );
}

/// `case` advised from a sample of 8,192 keys (unlimited), against one exact replay a size,
/// printed as `label` with its signed and absolute errors: the compared points and the rate.
fn sampled_at_8192(case: &Case, label: &str) -> (Vec<common::advice::Compared>, f64) {
    let options = AdvisorOptions {
        sample_keys: 8192,
        ..options()
    };
    let (compared, advice) = compare(case, options, None, 2, 1);
    let (mae, max) = errors(&compared);
    eprintln!(
        "{label}: bias {:+.4}, MAE {mae:.4}, max {max:.4}, rate {:.3}",
        bias(&compared),
        advice.sampling_rate
    );
    (compared, advice.sampling_rate)
}

/// The mean of the predictions' signed errors against the replays' mean.
fn bias(compared: &[common::advice::Compared]) -> f64 {
    let sum: f64 = compared.iter().map(|c| c.predicted - c.exact).sum();
    sum / compared.len().max(1) as f64
}

/// Without sampling (every key in the sample) the miniatures are the real policy: the curve
/// matches exact replays almost exactly, TTLs and count capacity included. "Exact" is a range:
/// the real cache hashes with random seeds, and at 16 KiB (two values of this trace) eight
/// replays of Zipf 1.2 hit 0.255–0.300; one replay against one prediction differed by 0.0315
/// once (CI). So each point is replayed four times and the prediction is measured from the
/// range of those replays.
#[test]
fn with_every_key_sampled_the_curve_is_the_real_cache() {
    for case in cases(3_000, 30_000) {
        assert_exact(&case, None, 4);
    }
}

/// A cold start: a one-pass scan of 6,000 keys fills the cache, then a loop over 200 others.
/// The real cache lets the loop in at any size that holds it because a key seen before enters
/// its cold ring referenced (`frequency.rs`, "A newcomer seen before"); without that rule in
/// the miniatures the curve read up to 0.57 below the cache's (MAE 0.09): sizes that hold the
/// loop predicted almost none of its hits.
#[test]
fn a_cache_filled_by_a_scan_is_predicted_as_it_recovers() {
    let mut trace: Vec<u64> = (0..6_000).map(|key| key + (1 << 32)).collect();
    for _ in 0..50 {
        trace.extend(0..200);
    }
    assert_exact(&Case::new("a scan, then a loop", trace), None, 2);
}

/// With every key sampled, the curve of `case` (from a cache advised at `advised_limit`) must
/// be the real cache's: MAE ≤ 0.005 and no point further than 0.03 from the range of
/// `replays` replays of its size.
fn assert_exact(case: &Case, advised_limit: Option<u64>, replays: usize) {
    let options = AdvisorOptions {
        sample_keys: 1 << 20,
        ..options()
    };
    let (compared, advice) = compare(case, options, advised_limit, 2, replays);
    assert_eq!(advice.sampling_rate, 1.0);
    let (mae, max) = errors(&compared);
    eprintln!("{}: MAE {mae:.4}, max {max:.4}", case.name);
    assert!(
        mae <= 0.005 && max <= 0.03,
        "{}: MAE {mae}, max {max}: {compared:#?}",
        case.name
    );
}

/// REFRESH statements under a binding limit: a predicate over keys removes the values the
/// cache holds, and the advisor's miniatures must drop the matching values that only the
/// larger sizes hold (the cache keeps the sampled keys to test the predicate on). Every key
/// sampled, the cache advised at an eighth of the working set, so the curve must be the real
/// cache's above that size as well as below.
#[test]
fn refreshes_under_a_binding_limit_reach_values_only_larger_sizes_hold() {
    let accesses = 30_000;
    let case = Case::new(
        "Zipf 0.8, a table in 16 refreshed 60 times, advised at 3 MiB",
        common::advice::zipf(0.8, 3_000, accesses, 14),
    )
    .with_churn(Churn::Table {
        every: accesses / 60,
        tables: 16,
    });
    assert_exact(&case, Some(3 << 20), 3);
}

/// Loads that run at once (a file listing loads a table's partitions together) store their
/// values when they end, after the look-ups of the others: a value stored at its miss would
/// evict values the next look-ups still find in the real cache. Every key sampled, so the
/// curve must be the real cache's.
#[test]
fn values_loaded_at_once_are_stored_when_their_loads_end() {
    let traces = [
        ("Zipf 0.8", common::advice::zipf(0.8, 3_000, 30_000, 11)),
        ("Zipf 1.0", common::advice::zipf(1.0, 3_000, 30_000, 12)),
        ("loop", common::advice::looping(1_000 * 9 * 1024, 30)),
        (
            "listings of 16 partitions, Zipf 1.0 over 200 tables",
            common::advice::zipf(1.0, 200, 2_000, 13)
                .into_iter()
                .flat_map(|table| (0..16).map(move |partition| table * 16 + partition))
                .collect(),
        ),
    ];
    for (name, trace) in traces {
        let case = Case::new(format!("{name}, 16 loads at once"), trace).with_overlap(16);
        assert_exact(&case, None, 2);
    }
}

/// The sample never holds more keys than configured, its memory is reserved in the node's
/// ledger while the cache lives and released with it, and a cache with the advisor off has none.
#[test]
fn the_advisor_is_bounded_charged_and_released() {
    let governor = MemoryGovernor::with_options(GovernorOptions::default());
    let catalog = governor.catalog_budget("c", None);
    let small = AdvisorOptions {
        sample_keys: 256,
        ..options()
    };
    let config = CacheConfig::new("advised", None, 1_000_000).with_advisor(Some(small));
    let cache: ManagedCache<u64, Payload> = ManagedCache::new(config, &governor, &catalog);
    for key in 0..50_000u64 {
        if key % 128 == 0 {
            cache.advise_now();
        }
        if cache.get(&key).is_none() {
            cache.insert(key, Payload(value_bytes(key)));
        }
    }
    let advice = cache.advice().expect("on");
    assert_eq!(advice.dropped_events, 0, "drained in time");
    // A full sample sheds a quarter at once: between 192 and 256 keys.
    assert!(
        (192..=256).contains(&advice.sampled_keys),
        "{} keys",
        advice.sampled_keys
    );
    assert!(advice.sampling_rate < 0.01, "rate {}", advice.sampling_rate);
    assert!(advice.reserved_bytes > 0);
    assert!(
        advice.reserved_bytes < 1 << 20,
        "{} bytes for 256 keys",
        advice.reserved_bytes
    );
    let node = governor.node().used();
    let values = catalog.used();
    assert_eq!(
        node,
        values + advice.reserved_bytes,
        "the node holds the values and the advisor; the catalog only the values"
    );
    assert_eq!(governor.advisors_budget().used(), advice.reserved_bytes);
    drop(cache);
    assert_eq!(governor.node().used(), 0, "released with the cache");

    let off = CacheConfig::new("plain", None, 1_000);
    let plain: ManagedCache<u64, Payload> = ManagedCache::new(off, &governor, &catalog);
    plain.insert(1, Payload(10));
    assert!(plain.advice().is_none());
    let disabled = CacheConfig::new("disabled", None, 1_000)
        .with_enabled(false)
        .with_advisor(Some(options()));
    let disabled: ManagedCache<u64, Payload> = ManagedCache::new(disabled, &governor, &catalog);
    assert!(disabled.advice().is_none(), "a cache that keeps nothing");
}

/// Loads per minute follow the measured request rate; a curve without requests is empty.
#[test]
fn loads_per_minute_are_the_predicted_misses_at_the_request_rate() {
    let case = Case::new("uniform", (0..6_000u64).map(|i| i % 300).collect());
    let (_, advice) = replay(&case, None, Some(options()));
    let advice = advice.expect("on");
    // 6,000 requests over 6 s of trace time: 60,000 per minute.
    assert!(
        (advice.requests_per_minute - 60_000.0).abs() < 1_000.0,
        "{}",
        advice.requests_per_minute
    );
    let last = advice.points.last().expect("points");
    assert!(last.hit_rate > 0.9, "{last:?}");
    let expected = (1.0 - last.hit_rate) * advice.requests_per_minute;
    assert!((last.loads_per_minute - expected).abs() < 1e-6);
    assert!(last.confidence > 0.5, "{last:?}");

    let empty = Case::new("none", Vec::new());
    let (_, advice) = replay(&empty, None, Some(options()));
    assert!(advice.expect("on").points.is_empty());
}

/// A cache advised with `options` under a node whose clock stands still (the test drains
/// the advisor itself), and its governor.
fn still_cache(
    name: &str,
    options: AdvisorOptions,
) -> (MemoryGovernor, ManagedCache<u64, Payload>) {
    let (clock, _) = metacache_cache::Clock::manual();
    let governor = MemoryGovernor::with_options(GovernorOptions {
        clock,
        // The test drains (`advise_now`) between its bursts.
        drain_interval: None,
        ..GovernorOptions::default()
    });
    let catalog = governor.catalog_budget("c", None);
    let config = CacheConfig::new(name, None, 1_000_000).with_advisor(Some(options));
    let cache = ManagedCache::new(config, &governor, &catalog);
    (governor, cache)
}

/// The governor's advisor thread drains every advisor on its own: with nobody reading the
/// curve, the queued requests reach the simulation (whose memory is then charged). Without the
/// thread, a queue filled between two reads of the curve and lost the rest.
#[test]
fn the_advisor_thread_drains_without_a_reader() {
    let governor = MemoryGovernor::with_options(GovernorOptions::default());
    let catalog = governor.catalog_budget("c", None);
    let config = CacheConfig::new("drained", None, 1_000_000).with_advisor(Some(options()));
    let cache: ManagedCache<u64, Payload> = ManagedCache::new(config, &governor, &catalog);
    assert_eq!(cache.advisor_bytes(), 0, "nothing drained yet");
    for key in 0..100u64 {
        cache.insert(key, Payload(value_bytes(key)));
        assert!(cache.get(&key).is_some());
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while cache.advisor_bytes() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the advisor thread did not drain the queue within 10 s"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // Rounds of more requests than one queue holds, each given time to drain: nothing lost.
    for _ in 0..4 {
        for i in 0..(QUEUE_EVENTS as u64 / 2) {
            assert!(cache.get(&(i % 100)).is_some());
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while cache.advisor_pending() > 0 {
            assert!(std::time::Instant::now() < deadline, "not drained in 10 s");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    let advice = cache.advice().expect("on");
    assert_eq!(advice.dropped_events, 0, "{advice:?}");
    assert_eq!(advice.sampled_keys, 100, "{advice:?}");
}

/// Requests faster than the advisor drains overflow its bounded queue: the events that do not
/// fit are dropped and counted, and the sample shrinks (the rate drops) so that what remains
/// is a smaller sample of whole keys, never keys with requests missing.
#[test]
fn an_advisor_that_cannot_keep_up_samples_fewer_keys() {
    let (_governor, cache) = still_cache("flooded", options());
    // Warm: 2,000 keys, drained as the advisor thread would.
    for key in 0..2_000u64 {
        if key % 128 == 0 {
            cache.advise_now();
        }
        cache.insert(key, Payload(value_bytes(key)));
    }
    let before = cache.advice().expect("on");
    assert_eq!((before.dropped_events, before.sampling_rate), (0, 1.0));
    // Bursts of 10,000 hits between drains, more than the queue holds even at its largest: the
    // queue grows from QUEUE_EVENTS to MAX_QUEUE_EVENTS first (four doublings), then one burst
    // at its largest is forgiven, and the second in a row sheds keys.
    let burst = || {
        for i in 0..10_000u64 {
            assert!(cache.get(&(i % 2_000)).is_some());
        }
        cache.advise_now();
    };
    let doublings = (MAX_QUEUE_EVENTS / QUEUE_EVENTS).ilog2();
    for _ in 0..doublings + 1 {
        burst();
    }
    let grown = cache.advice().expect("on");
    assert_eq!(grown.sampling_rate, 1.0, "{grown:?}");
    burst();
    let after = cache.advice().expect("on");
    assert!(after.dropped_events > 10_000, "{after:?}");
    assert!(after.sample_limit < before.sample_limit, "{after:?}");
    assert!(after.sampling_rate < 1.0, "{after:?}");
    assert!(
        after.sampled_keys <= after.sample_limit && after.sampled_keys >= 64,
        "{after:?}"
    );
}

/// A burst larger than the queue (a drain that came late) costs events once: the queue grows,
/// the same burst later loses nothing, and no key leaves the sample for it.
#[test]
fn a_late_drain_grows_the_queue_instead_of_shedding_keys() {
    let (_governor, cache) = still_cache("late", options());
    for key in 0..100u64 {
        cache.insert(key, Payload(value_bytes(key)));
    }
    cache.advise_now();
    let before = cache.advice().expect("on").reserved_bytes;
    let burst = || {
        for i in 0..(QUEUE_EVENTS as u64 * 3 / 2) {
            assert!(cache.get(&(i % 100)).is_some());
        }
        cache.advise_now();
    };
    burst();
    let first = cache.advice().expect("on");
    assert!(
        first.dropped_events > 0,
        "the first burst overflows: {first:?}"
    );
    assert!(first.reserved_bytes > before, "the larger queue is charged");
    for _ in 0..3 {
        burst();
    }
    let later = cache.advice().expect("on");
    assert_eq!(later.dropped_events, first.dropped_events, "{later:?}");
    assert_eq!((later.sampling_rate, later.sampled_keys), (1.0, 100));
}

/// One hot key in a binding sample, hit far faster than the queue drains: its flood fills the
/// queue once, its reports (queued apart) make it heavy at that drain, and from then on its hits
/// are not queued (the simulation ignores a heavy key's requests) — so the sample does not shed
/// the other keys for it.
#[test]
fn a_hot_sampled_key_does_not_shrink_the_sample() {
    let small = AdvisorOptions {
        sample_keys: 256,
        ..options()
    };
    let (_governor, cache) = still_cache("hot", small);
    for key in 0..20_000u64 {
        if key % 128 == 0 {
            cache.advise_now();
        }
        cache.insert(key, Payload(value_bytes(key)));
        assert!(cache.get(&key).is_some());
    }
    cache.advise_now();
    let before = cache.advice().expect("on");
    assert!(before.sampling_rate < 1.0, "the sample binds: {before:?}");
    let hot = (0..20_000u64)
        .find(|k| cache.advisor_samples(k))
        .expect("a sampled key");
    // Twenty bursts of 20,000 hits of the hot key (the queue holds 512 events) and a few
    // others, drained after each.
    for round in 0..20u64 {
        for i in 0..20_000u64 {
            assert!(cache.get(&hot).is_some());
            if i % 100 == 0 {
                assert!(cache.get(&((round * 200 + i / 100) % 20_000)).is_some());
            }
        }
        cache.advise_now();
    }
    let after = cache.advice().expect("on");
    assert!(
        cache.advisor_samples(&hot),
        "the hot key stays in the sample"
    );
    assert_eq!(
        (after.sample_limit, after.sampled_keys),
        (before.sample_limit, before.sampled_keys),
        "nothing shed: {after:?}"
    );
    assert!(
        after.dropped_events < 20_000,
        "only the first burst overflowed: {after:?}"
    );
}
