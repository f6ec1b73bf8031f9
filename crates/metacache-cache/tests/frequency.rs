//! Frequency-aware admission under a binding budget: a loop slightly larger than the cache keeps
//! a fixed part resident (where quick_cache alone cycles it out), a declined value is reported
//! and counted without disturbing the ledger, the history costs nothing until the cache is
//! under pressure, a cache filled by a scan takes in the keys asked for next, and stores from
//! several threads are decided as they would be one at a time, replacing one another's
//! newcomers without losing a charge.

mod common;

use common::advice::{log_uniform, mix};
use common::*;
use metacache_cache::{Admission, ManagedCache};

/// Values per key, large enough that quick_cache's ghost history (sized from the limit at one
/// value per 8 KiB) spans the loop, as in `bench_hits`.
const SIZE: u64 = 8192;
/// Values the limit holds.
const FIT: u64 = 200;
/// Keys in the loop: 1.2 × what fits.
const LOOP: usize = 240;
const PASSES: usize = 10;

struct Run {
    /// Hits in the last half of the passes.
    late_hits: usize,
    declined: usize,
}

/// Get-or-insert over the loop, `PASSES` times, checking the ledger after every pass.
fn run_governed(cache: &ManagedCache<String, Blob>, limit: u64) -> Run {
    let mut run = Run {
        late_hits: 0,
        declined: 0,
    };
    for pass in 0..PASSES {
        for i in 0..LOOP {
            let key = key("k", i);
            if cache.get(&key).is_some() {
                if pass >= PASSES / 2 {
                    run.late_hits += 1;
                }
                continue;
            }
            match cache.insert(key.clone(), Blob(SIZE)) {
                Admission::Retained { .. } => {}
                Admission::Declined => {
                    run.declined += 1;
                    assert!(
                        cache.get(&key).is_none(),
                        "a declined value is not resident"
                    );
                }
                other => panic!("pass {pass}, {key}: {other:?}"),
            }
        }
        assert!(
            cache.budget().used() <= limit,
            "pass {pass}: over the limit"
        );
        assert_eq!(
            cache.resident_charge(),
            cache.budget().used(),
            "pass {pass}: the ledger differs from the residents"
        );
    }
    run
}

#[derive(Clone)]
struct Charge;

impl quick_cache::Weighter<String, ()> for Charge {
    fn weight(&self, key: &String, _: &()) -> u64 {
        charged(key, SIZE)
    }
}

/// The same loop on raw quick_cache weighted by the same charges, with the same capacity.
fn run_quick_cache(limit: u64) -> usize {
    let cache = quick_cache::sync::Cache::with_weighter(FIT as usize, limit, Charge);
    let mut late_hits = 0;
    for pass in 0..PASSES {
        for i in 0..LOOP {
            let key = key("k", i);
            if cache.get(&key).is_some() {
                if pass >= PASSES / 2 {
                    late_hits += 1;
                }
            } else {
                cache.insert(key, ());
            }
        }
    }
    late_hits
}

#[tokio::test]
async fn a_loop_larger_than_the_cache_keeps_a_fixed_part_resident() {
    let limit = FIT * fill_charge("k", SIZE);
    let node = node(Some(limit));
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &catalog, config("remote-entry", None, 100_000));
    let governed = run_governed(&cache, limit);
    let raw = run_quick_cache(limit);
    let accesses = LOOP * (PASSES - PASSES / 2);
    eprintln!(
        "late hits: governed {} ({} declined), quick_cache {raw}, of {accesses}",
        governed.late_hits, governed.declined
    );
    // A fixed set of what fits hits 200 / 240 = 0.83 of the accesses (quick_cache alone:
    // 0.69–0.79 by its hasher's seed, in 300 runs).
    assert!(
        governed.late_hits * 100 >= accesses * 80,
        "governed hits {} of {accesses}",
        governed.late_hits
    );
    assert!(
        governed.late_hits >= raw,
        "governed {} below quick_cache {raw}",
        governed.late_hits
    );
    assert!(governed.declined > 0);
    assert!(
        cache.stats().eviction_count >= governed.declined as u64,
        "a declined value counts as an eviction"
    );
}

#[tokio::test]
async fn the_history_costs_nothing_until_the_cache_is_under_pressure() {
    let limit = FIT * fill_charge("k", SIZE);
    let node = node(Some(limit));
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &catalog, config("remote-entry", None, 100_000));
    // Everything fits: nothing is ever contested.
    for _ in 0..3 {
        for i in 0..(FIT as usize / 2) {
            let key = key("k", i);
            if cache.get(&key).is_none() {
                cache.insert(key, Blob(SIZE));
            }
        }
    }
    assert_eq!(cache.history_bytes(), 0);
    run_governed(&cache, limit);
    let bytes = cache.history_bytes();
    assert!(bytes > 0, "the loop put the cache under pressure");
    assert!(
        bytes as u64 <= 64 * FIT,
        "{bytes} bytes of history for at most {FIT} residents"
    );
}

/// A cold start: the cache is filled by a one-pass scan (values of 1 KiB, eight times the
/// limit), then asked for a loop of keys the scan never read, half what the limit holds. Every
/// scanned value entered the hot ring while the cache filled; the loop's keys come back further
/// apart than the cold ring and the ghost history reach (one ghost per 16 KiB of limit), so
/// before a key seen before entered referenced they never reached the hot ring, and the loop
/// hit nothing, pass after pass, while the scan's values stayed.
#[tokio::test]
async fn a_cache_filled_by_a_scan_takes_in_the_keys_asked_for_next() {
    const SMALL: u64 = 1024;
    let fit = 400;
    let limit = fit * fill_charge("k", SMALL);
    let node = node(Some(limit));
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &catalog, config("remote-entry", None, 100_000));
    for i in 0..(8 * fit as usize) {
        let key = key("scan", i);
        assert!(cache.get(&key).is_none(), "each scanned key is new");
        cache.insert(key, Blob(SMALL));
    }
    let loop_keys = fit as usize / 2;
    let mut hits_by_pass = Vec::new();
    for _ in 0..10 {
        let mut hits = 0;
        for i in 0..loop_keys {
            let key = key("k", i);
            if cache.get(&key).is_some() {
                hits += 1;
            } else {
                cache.insert(key, Blob(SMALL));
            }
        }
        hits_by_pass.push(hits);
        assert!(cache.budget().used() <= limit, "over the limit");
    }
    eprintln!("hits of {loop_keys} by pass: {hits_by_pass:?}");
    let late: usize = hits_by_pass[5..].iter().sum();
    assert!(
        late * 100 >= 5 * loop_keys * 95,
        "the loop fits twice over, yet hit {late} of {} in its last five passes: {hits_by_pass:?}",
        5 * loop_keys
    );
}

/// Values of 256 B – 16 KiB, log-uniform by key (as `scripts/advice-lookaside.sh` sends).
fn spread_size(i: usize) -> u64 {
    u64::from(log_uniform(i as u64 ^ 0x51ED))
}

/// Get-or-insert of an evenly read trace from `threads` threads (each every `threads`-th
/// request) into a fresh cache limited to `limit`, checking at the end that its ledger is its
/// residents' charges and within the limit: its hit ratio and its budget refusals.
fn run_even(trace: &[usize], limit: u64, threads: usize) -> (f64, u64) {
    let node = node(Some(limit));
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(&node, &catalog, config("e", None, 10_000_000));
    let hits = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for thread in 0..threads {
            let (cache, hits) = (&cache, &hits);
            scope.spawn(move || {
                for &i in trace.iter().skip(thread).step_by(threads) {
                    let key = key("k", i);
                    if cache.get(&key).is_some() {
                        hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    } else {
                        cache.insert(key, Blob(spread_size(i)));
                    }
                }
            });
        }
    });
    // What reclamation was asked for is done before the ledger is compared with the residents.
    node.governor.reclaim_now();
    assert!(cache.budget().used() <= limit, "over the limit");
    assert_eq!(
        cache.resident_charge(),
        cache.budget().used(),
        "the ledger differs from the residents"
    );
    let ratio = hits.into_inner() as f64 / trace.len() as f64;
    (ratio, cache.stats().weight_reject_count)
}

/// Four threads storing into a cache held at an eighth of an evenly read set: nearly every
/// request misses and stores, nearly every store displaces hot values and contests them. A
/// contest's victims used to stay charged while out of the map, so another thread's store found
/// the budget short of the room the map had made for it: a fifth of the stores were refused as
/// `budget_exceeded`, each refusal reclaimed 1/32 of the limit, and the newcomers let into that
/// room uncontested held the hit ratio at 0.73 of one thread's (0.18 against 0.245 with the
/// look-aside script's 30,000 keys).
#[test]
fn stores_from_several_threads_are_decided_as_one_at_a_time() {
    const KEYS: usize = 6_000;
    let trace: Vec<usize> = (0..120_000u64)
        .map(|i| (mix(i ^ 0xE7E2) % KEYS as u64) as usize)
        .collect();
    let working_set: u64 = (0..KEYS)
        .map(|i| charged(&key("k", i), spread_size(i)))
        .sum();
    let limit = working_set / 8;
    let (alone, alone_refused) = run_even(&trace, limit, 1);
    let (together, refused) = run_even(&trace, limit, 4);
    eprintln!(
        "hit ratio: one thread {alone:.4} ({alone_refused} refused), four {together:.4} \
         ({refused} refused)"
    );
    assert_eq!(alone_refused, 0);
    assert_eq!(
        refused, 0,
        "stores refused for room the map had made for them"
    );
    assert!(alone > 0.1, "the cache holds a share of the set: {alone}");
    assert!(
        together >= 0.9 * alone,
        "four threads hit {together:.4}, one {alone:.4}"
    );
}

/// Threads storing the same few keys at once, under pressure: a store often finds the key
/// already resident as another store's newcomer, inserted and not charged yet, and replaces
/// it. The replacement read that value's charge and cleared it later: a charge set in between
/// was cleared and never released, and the ledger kept a value's bytes that no resident held
/// (seen as a flaky failure of the test above, 7 runs in 30). Every round ends with the ledger
/// equal to the residents' charges.
#[test]
fn replacing_a_newcomer_not_charged_yet_leaks_nothing() {
    const KEYS: u64 = 48;
    let working_set: u64 = (0..KEYS as usize)
        .map(|i| charged(&key("k", i), spread_size(i)))
        .sum();
    for round in 0..20u64 {
        let node = node(Some(working_set / 3));
        let catalog = catalog(&node, "c", None);
        let cache = cache::<Blob>(&node, &catalog, config("e", None, 10_000_000));
        std::thread::scope(|scope| {
            for thread in 0..4u64 {
                let cache = &cache;
                scope.spawn(move || {
                    for i in 0..3_000u64 {
                        let k = (mix(i ^ thread << 32 ^ round << 40) % KEYS) as usize;
                        cache.insert(key("k", k), Blob(spread_size(k)));
                    }
                });
            }
        });
        node.governor.reclaim_now();
        assert_eq!(
            cache.resident_charge(),
            cache.budget().used(),
            "round {round}: the ledger differs from the residents"
        );
    }
}
