//! The hit-path workload shared by `benches/bench_hit.rs` and `examples/hit_instructions.rs`:
//! the value type and the key order, so times and instruction counts describe the same lookups.

use std::time::Duration;

use metacache_cache::{CacheConfig, ManagedCache, MemoryGovernor};
use metacache_estimate::{EstimateSize, Sizer};

/// Values per cache.
pub const ITEMS: u64 = 100_000;

/// A 64-byte value.
pub struct Value(pub [u64; 8]);

impl EstimateSize for Value {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
    }
}

/// Keys in a fixed pseudo-random order, so every implementation sees the same accesses.
pub fn keys() -> Vec<u64> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..1 << 16)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % ITEMS
        })
        .collect()
}

/// A governed cache under a binding node limit (about an eighth of the values fit), read and
/// filled in the order of [`keys`] until values promoted to its hot ring displace hot ones, so
/// its frequency sketch exists and every hit records into it; with `1 << 16` lookups of
/// resident keys. The governor is returned to keep the budgets alive.
#[allow(dead_code)] // not every includer measures a cache under pressure
pub fn pressured() -> (MemoryGovernor, ManagedCache<u64, Value>, Vec<u64>) {
    let governor = MemoryGovernor::new(Some(ITEMS * 600 / 8));
    let catalog = governor.catalog_budget("bench", None);
    let cache: ManagedCache<u64, Value> = ManagedCache::new(
        CacheConfig::new(
            "hive-partition",
            Some(Duration::from_secs(86_400)),
            ITEMS * 2,
        ),
        &governor,
        &catalog,
    );
    for _ in 0..4 {
        for k in keys() {
            if cache.get(&k).is_none() {
                cache.insert(k, Value([k; 8]));
            }
        }
    }
    assert!(cache.history_bytes() > 0, "the cache is under pressure");
    let resident: Vec<u64> = keys()
        .into_iter()
        .filter(|k| cache.get(k).is_some())
        .collect();
    let lookups = resident.iter().copied().cycle().take(1 << 16).collect();
    (governor, cache, lookups)
}
