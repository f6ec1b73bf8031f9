//! Hit ratio under a byte budget: the governed cache (one cache under a node limit) against
//! `moka` (W-TinyLFU) and `quick_cache` (CLOCK-PRO), both weighted by the same bytes the ledger
//! charges and given the same capacity, on the same traces, in the same run.
//!
//! Traces over 100,000 keys whose values are 1–16 KiB (fixed per key): Zipf α ∈ {0.6, 0.8, 1.0}
//! × budget ∈ {1 %, 5 %, 20 %} of the working set; a hot set (half the budget) read before and
//! after a one-pass scan of twice the budget; a loop over 1.2 × the budget; and two cold starts,
//! a one-pass scan of twice the budget into the empty cache followed by a hot set (read
//! uniformly) or a loop over half the budget that the scan never read; and every key read
//! evenly, where nearly every request misses and nearly every insert contests. Every access is a
//! get-or-insert (look-aside): a miss inserts the value. Each trace runs from one thread, and
//! the Zipf 0.8 and even ones from four too (each thread every fourth request, so that stores
//! race as a node's concurrent misses do). Prints one table, the ratio to the best peer per
//! row, the governed cache's `budget_exceeded` refusals per insert, and its replay's wall time
//! over moka's (a look-up and, after a miss, an insert, with no load between them: the store
//! path's cost laid bare, which a real miss hides behind its load).
//!
//! `cargo bench -p metacache-cache --bench bench_hits [filter]`

#![allow(clippy::print_stdout)] // the table is the output

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use metacache_cache::{Admission, CacheConfig, GovernorOptions, ManagedCache, MemoryGovernor};
use metacache_estimate::{EstimateSize, Sizer};
use metacache_ledger::RejectReason;

const KEYS: u64 = 100_000;
const ZIPF_ACCESSES: usize = 1_000_000;

/// A value that weighs `bytes` without allocating them: hit ratios do not depend on the memory
/// really being there, and the peers see the same weights.
struct Payload {
    bytes: u32,
}

impl EstimateSize for Payload {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add(self.bytes as usize);
    }
}

fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// 1–16 KiB, fixed per key.
fn value_bytes(key: u64) -> u32 {
    (1024 + mix(key) % (15 * 1024 + 1)) as u32
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Keys drawn from a Zipf distribution of exponent `alpha` over [`KEYS`] keys; the rank order
/// is a fixed permutation of the keys, so popularity does not follow the key's number.
fn zipf_trace(alpha: f64, accesses: usize, seed: u64) -> Vec<u64> {
    let mut cdf = Vec::with_capacity(KEYS as usize);
    let mut total = 0.0;
    for rank in 1..=KEYS {
        total += 1.0 / (rank as f64).powf(alpha);
        cdf.push(total);
    }
    let mut rng = Rng(seed);
    (0..accesses)
        .map(|_| {
            let u = rng.unit() * total;
            let rank = cdf.partition_point(|&c| c < u) as u64;
            mix(rank ^ 0x5555) % KEYS
        })
        .collect()
}

/// Distinct keys, in order from `first`, until their values add up to `bytes`.
fn keys_totalling(first: u64, bytes: u64) -> Vec<u64> {
    let mut keys = Vec::new();
    let mut sum = 0;
    let mut key = first;
    while sum < bytes {
        sum += charged(key);
        keys.push(key);
        key += 1;
    }
    keys
}

/// A hot set of half the budget, read uniformly; a one-pass scan of twice the budget over keys
/// never read before; the hot set again.
fn scan_trace(budget: u64) -> Vec<u64> {
    let hot = keys_totalling(0, budget / 2);
    let scan = keys_totalling(hot.len() as u64, 2 * budget);
    let mut rng = Rng(7);
    let mut hot_phase = |n: usize| -> Vec<u64> {
        (0..n)
            .map(|_| hot[(rng.next() % hot.len() as u64) as usize])
            .collect()
    };
    let reads = 20 * hot.len();
    let mut trace = hot_phase(reads);
    trace.extend(&scan);
    trace.extend(hot_phase(reads));
    trace
}

/// A cache filled by a one-pass scan of twice the budget (a cold start that lists a large
/// table first), then a hot set of half the budget read uniformly — keys the scan never read.
fn cold_scan_trace(budget: u64) -> Vec<u64> {
    let scan = keys_totalling(0, 2 * budget);
    let hot = keys_totalling(scan.len() as u64, budget / 2);
    let mut rng = Rng(11);
    let mut trace = scan;
    trace.extend((0..20 * hot.len()).map(|_| hot[(rng.next() % hot.len() as u64) as usize]));
    trace
}

/// The same cold start, then a loop over keys adding up to half the budget, ten times.
fn cold_loop_trace(budget: u64) -> Vec<u64> {
    let scan = keys_totalling(0, 2 * budget);
    let hot = keys_totalling(scan.len() as u64, budget / 2);
    let mut trace = scan;
    trace.extend((0..10).flat_map(|_| hot.iter().copied()));
    trace
}

/// Every key, read evenly.
fn even_trace(accesses: usize) -> Vec<u64> {
    let mut rng = Rng(13);
    (0..accesses).map(|_| rng.next() % KEYS).collect()
}

/// A loop over keys adding up to 1.2 × the budget, ten times.
fn loop_trace(budget: u64) -> Vec<u64> {
    let keys = keys_totalling(0, budget + budget / 5);
    (0..10).flat_map(|_| keys.iter().copied()).collect()
}

/// Bytes the ledger charges a value of `key`, and the weight both peers get for it. Checked
/// against the governed cache's own charge before every run.
fn charged(key: u64) -> u64 {
    u64::from(value_bytes(key)) + metacache_ledger::ACCOUNTING_OVERHEAD_BYTES + KEY_BYTES
}

/// What a `u64` key is charged.
const KEY_BYTES: u64 = std::mem::size_of::<u64>() as u64;

#[derive(Default, Clone, Copy)]
struct Outcome {
    hits: u64,
    accesses: u64,
    inserts: u64,
    budget_exceeded: u64,
    /// Wall time of the replay.
    took: Duration,
}

impl Outcome {
    fn ratio(&self) -> f64 {
        self.hits as f64 / self.accesses.max(1) as f64
    }
}

fn run_governed(trace: &[u64], budget: u64, threads: usize) -> Outcome {
    let governor = MemoryGovernor::with_options(GovernorOptions {
        node_limit: Some(budget),
        sweep_interval: Duration::from_secs(3600),
        ..GovernorOptions::default()
    });
    let catalog = governor.catalog_budget("bench", None);
    let config = CacheConfig::new("remote-entry", None, 10_000_000);
    let cache: ManagedCache<u64, Payload> = ManagedCache::new(config, &governor, &catalog);
    let refused = AtomicU64::new(0);
    let mut outcome = replay(
        trace,
        threads,
        |key| cache.get(&key).is_some(),
        |key| match cache.insert(
            key,
            Payload {
                bytes: value_bytes(key),
            },
        ) {
            Admission::Retained { charge } => {
                assert_eq!(
                    charge,
                    charged(key),
                    "the peers must weigh what the ledger charges"
                )
            }
            Admission::Rejected(RejectReason::BudgetExceeded) => {
                refused.fetch_add(1, Relaxed);
            }
            _ => {}
        },
    );
    outcome.budget_exceeded = refused.into_inner();
    governor.reclaim_now();
    assert!(governor.node().used() <= budget, "over the node limit");
    outcome
}

fn run_moka(trace: &[u64], budget: u64, threads: usize) -> Outcome {
    let cache: moka::sync::Cache<u64, u32> = moka::sync::Cache::builder()
        .max_capacity(budget)
        .weigher(|key: &u64, _: &u32| u32::try_from(charged(*key)).unwrap_or(u32::MAX))
        .build();
    replay(
        trace,
        threads,
        |key| cache.get(&key).is_some(),
        |key| cache.insert(key, value_bytes(key)),
    )
}

/// Runs `trace` as get-or-insert against a cache from `threads` threads, each taking every
/// `threads`-th request: `get` answers whether `key` hit, `insert` stores its value after a
/// miss.
fn replay(
    trace: &[u64],
    threads: usize,
    get: impl Fn(u64) -> bool + Sync,
    insert: impl Fn(u64) + Sync,
) -> Outcome {
    let hits = AtomicU64::new(0);
    let inserts = AtomicU64::new(0);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for thread in 0..threads {
            let (get, insert, hits, inserts) = (&get, &insert, &hits, &inserts);
            scope.spawn(move || {
                for &key in trace.iter().skip(thread).step_by(threads) {
                    if get(key) {
                        hits.fetch_add(1, Relaxed);
                    } else {
                        inserts.fetch_add(1, Relaxed);
                        insert(key);
                    }
                }
            });
        }
    });
    Outcome {
        hits: hits.into_inner(),
        accesses: trace.len() as u64,
        inserts: inserts.into_inner(),
        budget_exceeded: 0,
        took: started.elapsed(),
    }
}

#[derive(Clone)]
struct ChargeWeighter;

impl quick_cache::Weighter<u64, u32> for ChargeWeighter {
    fn weight(&self, key: &u64, _: &u32) -> u64 {
        charged(*key)
    }
}

fn run_quick_cache(trace: &[u64], budget: u64, mean: u64, threads: usize) -> Outcome {
    let cache = quick_cache::sync::Cache::with_weighter(
        usize::try_from(budget / mean).unwrap_or(usize::MAX),
        budget,
        ChargeWeighter,
    );
    replay(
        trace,
        threads,
        |key| cache.get(&key).is_some(),
        |key| cache.insert(key, value_bytes(key)),
    )
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument selects rows by name.
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let working_set: u64 = (0..KEYS).map(charged).sum();
    let mean = working_set / KEYS;
    let mut rows: Vec<(String, Vec<u64>, u64, usize)> = Vec::new();
    for alpha in [0.6, 0.8, 1.0] {
        let trace = zipf_trace(alpha, ZIPF_ACCESSES, (alpha * 1000.0) as u64);
        for percent in [1, 5, 20] {
            let budget = working_set * percent / 100;
            for threads in [1, 4] {
                if threads > 1 && alpha != 0.8 {
                    continue;
                }
                rows.push((
                    format!("zipf {alpha:.1}, {percent:>2} %"),
                    trace.clone(),
                    budget,
                    threads,
                ));
            }
        }
    }
    let even = even_trace(ZIPF_ACCESSES);
    for percent in [5, 20] {
        for threads in [1, 4] {
            let budget = working_set * percent / 100;
            rows.push((
                format!("even, {percent:>2} %"),
                even.clone(),
                budget,
                threads,
            ));
        }
    }
    for percent in [1, 5] {
        let budget = working_set * percent / 100;
        rows.push((
            format!("scan 2x, {percent:>2} %"),
            scan_trace(budget),
            budget,
            1,
        ));
        rows.push((
            format!("loop 1.2x, {percent:>2} %"),
            loop_trace(budget),
            budget,
            1,
        ));
        rows.push((
            format!("cold scan, {percent:>2} %"),
            cold_scan_trace(budget),
            budget,
            1,
        ));
        rows.push((
            format!("cold loop, {percent:>2} %"),
            cold_loop_trace(budget),
            budget,
            1,
        ));
    }
    println!(
        "working set {} MiB over {KEYS} keys, mean charge {mean} B",
        working_set >> 20
    );
    println!(
        "{:<16} {:>7} {:>9} {:>9} {:>9} {:>11} {:>15} {:>14}",
        "trace",
        "threads",
        "governed",
        "moka",
        "quick",
        "vs best",
        "budget_exceeded",
        "time vs moka"
    );
    let mut worst = f64::INFINITY;
    for (name, trace, budget, threads) in rows {
        if filter.as_ref().is_some_and(|f| !name.contains(f.as_str())) {
            continue;
        }
        let governed = run_governed(&trace, budget, threads);
        let moka = run_moka(&trace, budget, threads);
        let quick = run_quick_cache(&trace, budget, mean, threads);
        let best = moka.ratio().max(quick.ratio());
        let versus = if best > 0.0 {
            governed.ratio() / best
        } else if governed.ratio() > 0.0 {
            f64::INFINITY
        } else {
            1.0
        };
        worst = worst.min(versus);
        println!(
            "{name:<16} {threads:>7} {:>9.4} {:>9.4} {:>9.4} {:>10.3}x {:>14.2}% {:>13.2}x",
            governed.ratio(),
            moka.ratio(),
            quick.ratio(),
            versus,
            100.0 * governed.budget_exceeded as f64 / governed.inserts.max(1) as f64,
            governed.took.as_secs_f64() / moka.took.as_secs_f64().max(1e-9),
        );
    }
    println!("worst governed / best peer: {worst:.3}x");
}
