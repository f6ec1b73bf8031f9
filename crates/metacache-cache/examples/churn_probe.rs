//! What invalidations cost the hottest keys in the real cache: a Zipf 1.0 trace over 100,000 keys
//! with one key invalidated every `EVERY` requests (drawn as requests are), replayed through a
//! real `ManagedCache` under `LIMIT_MIB`; for the `TOP` most requested keys it prints their
//! misses beyond one per invalidation (and one first miss), against what the quota advisor's
//! cold-ring model predicts for them (`advice/heavy.rs`): `e^(−λT)` per invalidation, `T` the
//! time the cold ring (3 % of the bytes) keeps a newcomer at the measured miss ratio.
//!
//! `cargo run --release -p metacache-cache --example churn_probe -- [LIMIT_MIB] [TOP] [EVERY]`
//! (defaults 8, 376, 10). Meaningful while the `TOP` keys all fit the limit.

#![allow(clippy::print_stdout)] // the report is the output

#[path = "../tests/common/advice.rs"]
mod advice;

use std::collections::HashMap;
use std::time::Duration;

use advice::{Churn, Payload, replay_governor, value_bytes, zipf};
use metacache_cache::{CacheConfig, ManagedCache};

/// Requests, misses and invalidations of one key.
#[derive(Default, Clone, Copy)]
struct Counts {
    requests: u64,
    misses: u64,
    invalidations: u64,
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let limit_mib = args.first().copied().unwrap_or(8);
    let top = args.get(1).copied().unwrap_or(376) as usize;
    let every = args.get(2).copied().unwrap_or(10).max(1) as usize;
    let trace = zipf(1.0, 100_000, 1_000_000, 8);
    let (governor, manual) = replay_governor();
    let catalog = governor.catalog_budget("c", Some(limit_mib << 20));
    let config = CacheConfig::new("probe", None, 10_000_000).with_advisor(None);
    let cache: ManagedCache<u64, Payload> = ManagedCache::new(config, &governor, &catalog);
    let mut counts: HashMap<u64, Counts> = HashMap::new();
    let mut misses = 0u64;
    let churn = Churn::Key { every };
    for (i, &key) in trace.iter().enumerate() {
        manual.advance(Duration::from_millis(1));
        if let Some(victim) = churn.victim(&trace, i) {
            counts.entry(victim).or_default().invalidations += 1;
        }
        churn.apply(&cache, &trace, i);
        let entry = counts.entry(key).or_default();
        entry.requests += 1;
        if cache.get(&key).is_none() {
            entry.misses += 1;
            misses += 1;
            cache.insert(key, Payload(value_bytes(key)));
        }
    }
    let mut keys: Vec<Counts> = counts.into_values().collect();
    keys.sort_by_key(|key| std::cmp::Reverse(key.requests));
    let miss_ratio = misses as f64 / trace.len() as f64;
    let mean_charge = 9.0 * 1024.0;
    // In requests: the ring's bytes over the bytes stored per request.
    let life = (limit_mib << 20) as f64 * 0.03 / (miss_ratio * mean_charge);
    println!(
        "limit {limit_mib} MiB, miss ratio {miss_ratio:.3}, a newcomer kept {life:.1} requests"
    );
    let (mut extra, mut predicted) = (0i64, 0.0);
    for (rank, key) in keys.iter().take(top).enumerate() {
        let beyond = key.misses as i64 - key.invalidations as i64 - 1;
        extra += beyond;
        let per_request = key.requests as f64 / trace.len() as f64;
        predicted += key.invalidations as f64 * (-per_request * life).exp();
        if rank < 4 || rank % 100 == 0 {
            println!(
                "rank {rank}: {} requests, {} misses, {} invalidations, {beyond} misses beyond",
                key.requests, key.misses, key.invalidations
            );
        }
    }
    println!(
        "the {top} hottest keys: {extra} misses beyond one per invalidation, {predicted:.0} predicted"
    );
}
