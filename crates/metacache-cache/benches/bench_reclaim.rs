//! Reclamation cost against the number of resident values: a cache holds N values and fills the
//! node limit; another cache's admission is refused (`budget_exceeded`) and files a request; the
//! time until that request is handled (values evicted, bytes released) is measured for N from
//! 10,000 to 1,000,000. The request frees a fixed share of the limit (the low watermark,
//! `limit / 32`), so the values freed grow with N; what must stay flat is the time *per value
//! freed*, and the periodic expiry sweep over caches none of whose values is due must cost
//! nothing per value.
//!
//! `cargo bench -p metacache-cache --bench bench_reclaim`

#![allow(clippy::print_stdout)] // the table is the output

use std::time::{Duration, Instant};

use metacache_cache::{Admission, CacheConfig, GovernorOptions, ManagedCache, MemoryGovernor};
use metacache_estimate::{EstimateSize, Sizer};

/// 64 bytes of weight, nothing allocated: the map's own cost is what scales with N.
struct Payload;

impl EstimateSize for Payload {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add(64);
    }
}

const ROUNDS: usize = 5;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn run(residents: u64) -> (Duration, u64, Duration) {
    // u64 key (8) + 64 + 512 of overhead.
    let charge = 8 + 64 + 512;
    let governor = MemoryGovernor::with_options(GovernorOptions {
        node_limit: Some(residents * charge),
        sweep_interval: Duration::from_secs(3600),
        ..GovernorOptions::default()
    });
    let catalog = governor.catalog_budget("bench", None);
    let ttl = Some(Duration::from_secs(86_400));
    let big: ManagedCache<u64, Payload> = ManagedCache::new(
        CacheConfig::new("hive-file", ttl, 10_000_000),
        &governor,
        &catalog,
    );
    let small: ManagedCache<u64, Payload> = ManagedCache::new(
        CacheConfig::new("hive-partition", ttl, 10_000_000),
        &governor,
        &catalog,
    );
    let mut next = 0;
    let mut reclaims = Vec::new();
    let mut freed_values = 0;
    let mut sweeps = Vec::new();
    for _ in 0..ROUNDS {
        // Fill the node again with the big cache's values.
        while governor.node().used() + charge <= residents * charge {
            big.insert(next, Payload);
            next += 1;
        }
        let before = big.len() as u64;
        let started = Instant::now();
        let refused = small.insert(u64::MAX - next, Payload);
        governor.reclaim_now();
        reclaims.push(started.elapsed());
        assert!(
            !matches!(refused, Admission::Retained { .. }),
            "the node was full: the small cache's value is refused and reclaimed for"
        );
        freed_values = before.saturating_sub(big.len() as u64);
        let started = Instant::now();
        governor.purge_expired_now();
        sweeps.push(started.elapsed());
    }
    (median(reclaims), freed_values, median(sweeps))
}

fn main() {
    println!(
        "| resident values | values freed | reclamation | per value freed | expiry sweep (none due) |"
    );
    println!("|---|---|---|---|---|");
    for residents in [10_000, 100_000, 1_000_000] {
        let (reclaim, freed, sweep) = run(residents);
        println!(
            "| {residents} | {freed} | {:.2} ms | {:.0} ns | {:.1} µs |",
            reclaim.as_secs_f64() * 1e3,
            reclaim.as_nanos() as f64 / freed.max(1) as f64,
            sweep.as_secs_f64() * 1e6,
        );
    }
}
