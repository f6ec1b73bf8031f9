//! How a cache's map weighs its values, so that quick_cache's own policy (CLOCK-PRO with ghost
//! history) chooses what a byte budget evicts.
//!
//! With a byte limit `L` over the cache (the smallest limit of its entry, group, catalog and node)
//! and a count capacity `C`, the map's weight capacity is `L` and a value weighs
//! `max(charge, ⌈L / C⌉)`: the weights of the residents fit in `L` only if their charges do
//! *and* there are at most `C` of them, so whichever limit binds first evicts (§5). Without any
//! byte limit the map counts values (weight 1, capacity `C`), as quick_cache does unweighted.
//!
//! A value's weight is fixed when it is stored and changes only under its shard's lock (when
//! the node limit changes at runtime, [`Scale`] is recomputed and every resident re-weighed), as
//! quick_cache requires of a weighter.

use quick_cache::Weighter;

use crate::Cached;

/// Bytes of limit per shard below which fewer shards are used: a value heavier than ~97 % of a
/// shard cannot be held, so shards are only split while each keeps room for large values.
const MIN_SHARD_BYTES: u64 = 32 << 20;

/// Bytes of limit per value quick_cache is told to expect under a byte limit (its ghost
/// history is half the expected values); the miniatures of the quota advisor size theirs so.
pub(crate) const BYTES_PER_EXPECTED_VALUE: u64 = 8192;

/// quick_cache's default share of a shard that its hot ring may fill; the heaviest value a
/// shard admits.
const HOT_ALLOCATION: f64 = 0.97;

/// How one map weighs values: by bytes under a limit, by count without one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Scale {
    /// The map's weight capacity: the byte limit, or the count capacity.
    pub(crate) capacity: u64,
    /// The least weight of a value under a byte limit (`⌈L / C⌉`); 0 when counting.
    quantum: u64,
}

impl Scale {
    /// The scale of a cache with byte limit `limit` (if any applies) and count `capacity`.
    pub(crate) fn new(limit: Option<u64>, capacity: u64) -> Self {
        let capacity = capacity.max(1);
        match limit {
            Some(limit) => Self {
                capacity: limit.max(1),
                quantum: limit.div_ceil(capacity).max(1),
            },
            None => Self {
                capacity,
                quantum: 0,
            },
        }
    }

    /// Whether values are weighed by bytes.
    pub(crate) fn by_bytes(&self) -> bool {
        self.quantum != 0
    }

    /// The weight of a value charged `charge` bytes.
    pub(crate) fn weight(&self, charge: u64) -> u64 {
        if self.by_bytes() {
            charge.max(self.quantum)
        } else {
            1
        }
    }

    /// How many shards a map of this scale gets: quick_cache's default (four per core) when
    /// counting; under a byte limit, no more than leave each shard [`MIN_SHARD_BYTES`].
    pub(crate) fn shards(&self) -> usize {
        let default = std::thread::available_parallelism().map_or(4, |n| n.get() * 4);
        let wanted = if self.by_bytes() {
            usize::try_from(self.capacity / MIN_SHARD_BYTES)
                .unwrap_or(usize::MAX)
                .clamp(1, default)
        } else {
            default
        };
        // Rounded down to a power of two (quick_cache rounds up).
        1 << (usize::BITS - 1 - wanted.leading_zeros())
    }

    /// The number of values quick_cache should expect; its ghost history is half of it. Under a
    /// byte limit, one value per 8 KiB of limit (at most `C`): the residents when values are
    /// ~8 KiB, more ghosts than residents when they are larger (one per 4 KiB cost 2–4 % of
    /// Zipf hits in `bench_hits`).
    pub(crate) fn estimated_items(&self, count_capacity: u64) -> usize {
        let items = if self.by_bytes() {
            (self.capacity / BYTES_PER_EXPECTED_VALUE).clamp(1, count_capacity.max(1))
        } else {
            self.capacity
        };
        usize::try_from(items).unwrap_or(usize::MAX)
    }

    /// The heaviest value one shard of `shards` admits (quick_cache drops heavier ones).
    pub(crate) fn max_weight(&self, shards: usize) -> u64 {
        let per_shard = self.capacity.div_ceil(shards.max(1) as u64);
        ((per_shard as f64 * HOT_ALLOCATION) as u64).max(1)
    }
}

/// Reads the weight fixed in each value's slot.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SlotWeighter;

impl<K, V> Weighter<K, Cached<V>> for SlotWeighter {
    #[inline]
    fn weight(&self, _: &K, value: &Cached<V>) -> u64 {
        value.weight()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_without_a_byte_limit() {
        let scale = Scale::new(None, 1000);
        assert!(!scale.by_bytes());
        assert_eq!((scale.capacity, scale.weight(1 << 20)), (1000, 1));
    }

    #[test]
    fn weighs_by_bytes_with_a_floor_that_enforces_the_count() {
        // 1 MiB over at most 100 values: a value weighs at least 10,486 bytes.
        let scale = Scale::new(Some(1 << 20), 100);
        assert_eq!(scale.capacity, 1 << 20);
        assert_eq!(scale.weight(600), 10_486);
        assert_eq!(scale.weight(50_000), 50_000);
        // 101 values of the floor weight do not fit: the count binds.
        assert!(101 * scale.weight(1) > scale.capacity);
        assert!(100 * scale.weight(1) <= scale.capacity + 100);
    }

    #[test]
    fn shards_keep_room_for_large_values() {
        assert_eq!(Scale::new(Some(10 << 20), 1000).shards(), 1);
        assert_eq!(Scale::new(Some(64 << 20), 1000).shards(), 2);
        let big = Scale::new(Some(1 << 40), 1000);
        assert!(big.max_weight(big.shards()) >= (MIN_SHARD_BYTES as f64 * 0.96) as u64);
        assert!(Scale::new(Some(3 << 20), 10).max_weight(1) >= 3 * 1000 * 1000);
    }
}
