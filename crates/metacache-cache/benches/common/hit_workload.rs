//! The hit-path workload shared by `benches/bench_hit.rs` and `examples/hit_instructions.rs`:
//! the value type and the key order, so times and instruction counts describe the same lookups.

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
