//! Instructions per hit, for a repeatable comparison of the governed hit path with raw
//! `quick_cache` (wall-clock benches on a shared 2-core machine move by 2× between runs).
//!
//! Each mode fills its cache with the values of `bench_hit` and then runs `LOOKUPS` hits in one
//! function that callgrind is told to count alone:
//!
//! ```sh
//! cargo build --release -p metacache-cache --example hit_instructions
//! for mode in raw governed governed_no_ttl governed_advised governed_full moka; do
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect='*lookups_*' \
//!     target/release/examples/hit_instructions $mode 2>&1 | grep -E 'Collected|hits'
//! done
//! ```
//! The `Collected` count divided by `LOOKUPS` is the instructions of one hit. `governed_full`
//! is a cache under a binding limit, where every hit also records into the frequency sketch;
//! `governed_advised` has the quota advisor on (its default sample of 4,096 keys: 4 % of the
//! 100,000 values sampled, and one in 64 of the thread's hits reporting its value).

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use metacache_cache::{AdvisorOptions, CacheConfig, ManagedCache, MemoryGovernor};

#[path = "../benches/common/hit_workload.rs"]
mod workload;

use workload::{ITEMS, Value, keys};

const LOOKUPS: usize = 1_000_000;

#[inline(never)]
fn lookups_governed(cache: &ManagedCache<u64, Value>, keys: &[u64]) -> u64 {
    let mut found = 0;
    for i in 0..LOOKUPS {
        let key = keys[i & (keys.len() - 1)];
        found += black_box(cache.get(&key).map_or(0, |v| v.0[0] & 1));
    }
    found
}

#[inline(never)]
fn lookups_raw(cache: &quick_cache::sync::Cache<u64, Arc<Value>>, keys: &[u64]) -> u64 {
    let mut found = 0;
    for i in 0..LOOKUPS {
        let key = keys[i & (keys.len() - 1)];
        found += black_box(cache.get(&key).map_or(0, |v| v.0[0] & 1));
    }
    found
}

fn governed(ttl: Option<Duration>, advisor: Option<AdvisorOptions>) -> u64 {
    let governor = MemoryGovernor::new(Some(1 << 30));
    let catalog = governor.catalog_budget("bench", Some(1 << 29));
    let cache: ManagedCache<u64, Value> = ManagedCache::new(
        CacheConfig::new("hive-partition", ttl, ITEMS * 2).with_advisor(advisor),
        &governor,
        &catalog,
    );
    for k in 0..ITEMS {
        cache.insert(k, Value([k; 8]));
    }
    assert_eq!(cache.len() as u64, ITEMS, "every value admitted");
    // One pass over the keys, draining the advisor as its thread would at a modest request
    // rate, sets its sample (4,096 of the 100,000 keys); the counted lookups then see the
    // steady state.
    for (i, key) in keys().iter().enumerate() {
        if i % 128 == 0 {
            cache.advise_now();
        }
        black_box(cache.get(key));
    }
    cache.advise_now();
    lookups_governed(&cache, &keys())
}

/// The governed cache under a binding limit; lookups of resident keys only.
fn governed_full() -> u64 {
    let (_governor, cache, lookups) = workload::pressured();
    lookups_governed(&cache, &lookups)
}

#[inline(never)]
fn lookups_moka(cache: &moka::sync::Cache<u64, Arc<Value>>, keys: &[u64]) -> u64 {
    let mut found = 0;
    for i in 0..LOOKUPS {
        let key = keys[i & (keys.len() - 1)];
        found += black_box(cache.get(&key).map_or(0, |v| v.0[0] & 1));
    }
    found
}

/// moka (W-TinyLFU), whose every hit is recorded for its frequency sketch, as the governed
/// cache's are under pressure.
fn moka() -> u64 {
    let cache = moka::sync::Cache::new(ITEMS * 2);
    for k in 0..ITEMS {
        cache.insert(k, Arc::new(Value([k; 8])));
    }
    lookups_moka(&cache, &keys())
}

fn raw() -> u64 {
    let cache = quick_cache::sync::Cache::new(ITEMS as usize * 2);
    for k in 0..ITEMS {
        cache.insert(k, Arc::new(Value([k; 8])));
    }
    lookups_raw(&cache, &keys())
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let odd = match mode.as_str() {
        "raw" => raw(),
        "governed" => governed(Some(Duration::from_secs(86_400)), None),
        "governed_no_ttl" => governed(None, None),
        "governed_advised" => governed(
            Some(Duration::from_secs(86_400)),
            Some(AdvisorOptions::default()),
        ),
        "governed_full" => governed_full(),
        "moka" => moka(),
        other => {
            eprintln!(
                "usage: hit_instructions raw|governed|governed_no_ttl|governed_advised|governed_full|moka (not {other:?})"
            );
            std::process::exit(2);
        }
    };
    // Every lookup must hit: the odd values are half of them, give or take the key order.
    eprintln!("{mode}: {LOOKUPS} hits, {odd} odd values");
}
