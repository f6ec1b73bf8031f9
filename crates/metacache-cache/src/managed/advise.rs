//! A managed cache's side of the quota advisor (`crate::advice`): what a hit, a miss and a
//! load tell it, and the curve, its memory and its drain as the cache's API offers them.
//!
//! The hit path reaches this module only for a sampled key or one in
//! [`HEAVY_REPORT`](crate::slot::HEAVY_REPORT) of a thread's hits (`counters::heavy_tick`);
//! nothing here runs the simulation, which the governor's advisor thread does.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;

use metacache_estimate::EstimateSize;
use parking_lot::Mutex;
use quick_cache::Equivalent;

use super::{Inner, ManagedCache};
use crate::Cached;
use crate::admission::key_bytes;
use crate::advice::{Advice, Advisor, Served};
use crate::counters::{CacheCounters, heavy_report, heavy_tick};
use crate::slot::NO_HASH;

impl<K, V> ManagedCache<K, V>
where
    K: Hash + Eq + Clone + EstimateSize + Send + Sync + 'static,
    V: EstimateSize + Send + Sync + 'static,
{
    /// The quota advisor's miss-ratio curve (`None` when the advisor is off or the cache
    /// retains nothing).
    pub fn advice(&self) -> Option<Advice> {
        let inner = &*self.inner;
        let advisor = inner.advisor.as_ref()?;
        // What the map may fill: under a node limit, less the advisors' share of it.
        let limit = inner.share.values_limit(&inner.accounting.budget);
        let advice = advisor.advice(inner.served(), limit, inner.clock.now_nanos());
        inner.mark_newly_sampled();
        Some(advice)
    }

    /// Runs the quota advisor's queued events through its simulation now (the governor's
    /// advisor thread does it every [`crate::advice::DRAIN_INTERVAL`]; a caller replaying
    /// requests faster than that drains itself so that the queue never overflows).
    pub fn advise_now(&self) {
        self.inner.drain_advisor();
    }

    /// Events queued for the quota advisor's simulation, not drained yet (0 without one).
    pub fn advisor_pending(&self) -> usize {
        self.inner.advisor.as_ref().map_or(0, Advisor::pending)
    }

    /// Bytes the quota advisor holds in the node's ledger (0 without an advisor).
    pub fn advisor_bytes(&self) -> u64 {
        self.inner.advisor.as_ref().map_or(0, Advisor::reserved)
    }

    /// Caps the bytes the quota advisor may hold, lowering its sample now if it holds more;
    /// returns the bytes it holds after (0 without an advisor). The governor's advisor thread
    /// sets the cap to the node's fair share after every drain, so a cap set here lasts until
    /// then: for a governor without the thread (replays, experiments).
    pub fn cap_advisor(&self, bytes: u64) -> u64 {
        crate::governor::Reclaimable::cap_advisor(&*self.inner, bytes)
    }

    /// Whether the quota advisor samples `key` now (false without an advisor).
    pub fn advisor_samples<Q>(&self, key: &Q) -> bool
    where
        Q: Hash + Equivalent<K> + ?Sized,
    {
        let advisor = self.inner.advisor.as_ref();
        advisor.is_some_and(|a| a.samples(a.hash(key)))
    }
}

impl<K, V> Inner<K, V>
where
    K: Hash + Eq + Clone + EstimateSize + Send + Sync + 'static,
    V: EstimateSize + Send + Sync + 'static,
{
    /// The hit numbered `count` on its thread, which the advisor must hear of: a sampled
    /// key's, or one in [`HEAVY_REPORT`](crate::slot::HEAVY_REPORT) of the thread's hits, which
    /// reports its value to the table of heavy keys (kept out of line: most hits are neither).
    #[cold]
    #[inline(never)]
    pub(super) fn advise_hit(&self, value: &Cached<V>, count: u64) {
        let Some(advisor) = &self.advisor else {
            return;
        };
        let hash = value.advisor_hash();
        if hash == NO_HASH {
            return;
        }
        let now = self.clock.now_nanos();
        if value.sampled() {
            if advisor.samples(hash) {
                advisor.record(hash, value.charge(), now);
            } else {
                // The sample's rate dropped below this key: its hits are not looked at again.
                value.set_unsampled();
            }
        }
        if heavy_tick(count) {
            advisor.report_heavy(hash, value.charge(), now, heavy_report(count));
        }
    }

    /// Runs the advisor's queued events through its simulation.
    pub(super) fn drain_advisor(&self) {
        if let Some(advisor) = &self.advisor {
            advisor.drain(|| self.served());
            self.mark_newly_sampled();
        }
    }

    /// Marks sampled the held values whose keys the advisor's sample took in since the last
    /// call (its rate rose: `advice::sample`): a value is marked at its load, and a hit of an
    /// unmarked one never reaches the advisor. One walk of the map per rise, which comes at most
    /// once per half-life.
    fn mark_newly_sampled(&self) {
        let Some(advisor) = &self.advisor else {
            return;
        };
        let threshold = advisor.threshold();
        let before = self.marked.0.swap(threshold, Relaxed);
        if threshold < before {
            // The rate fell (a flood, the advisor's share, a stop): the keys kept for
            // predicate invalidations that it no longer reaches go, with their bytes.
            self.advised_keys.forget_unsampled(advisor);
        }
        if threshold <= before {
            return;
        }
        self.map.retain(|_, value| {
            let hash = value.advisor_hash();
            if hash != NO_HASH && (before..threshold).contains(&hash) {
                value.set_sampled();
            }
            true
        });
    }

    /// Requests and hits so far.
    fn served(&self) -> Served {
        let counters = &self.accounting.counters;
        let hits = counters.hits.get();
        Served {
            requests: hits + CacheCounters::read(&counters.misses),
            hits,
        }
    }

    /// A miss, for the advisor (before the load: the value's charge is not known yet).
    #[inline(never)]
    pub(super) fn advise_miss<Q>(&self, key: &Q)
    where
        Q: Hash + Equivalent<K> + ?Sized,
    {
        if let Some(advisor) = &self.advisor {
            advisor.record_miss(advisor.hash(key), self.clock.now_nanos());
        }
    }

    /// The value of `key` is being invalidated (held or not), for the advisor: no size of its
    /// simulation holds it any more.
    pub(super) fn advise_invalidated<Q>(&self, key: &Q)
    where
        Q: Hash + Equivalent<K> + ?Sized,
    {
        if let Some(advisor) = &self.advisor {
            advisor.invalidate(advisor.hash(key), self.clock.now_nanos());
        }
    }

    /// The sampling hashes of the sampled keys the cache loaded that `predicate` matches,
    /// whether the cache still holds their values or not.
    pub(super) fn advised_keys_matching(&self, predicate: impl Fn(&K) -> bool) -> Vec<u64> {
        match &self.advisor {
            Some(advisor) => self.advised_keys.matching(advisor, predicate),
            None => Vec::new(),
        }
    }

    /// Adds the sampling hash of `value`, which a predicate is invalidating, to `watched` if the
    /// advisor watches its key (a value the cache loaded before the advisor hashed it has
    /// none; the advisor never saw its key).
    pub(super) fn watch_invalidated(&self, value: &Cached<V>, watched: &mut Vec<u64>) {
        if let Some(advisor) = &self.advisor {
            let hash = value.advisor_hash();
            if hash != NO_HASH && advisor.watches(hash) {
                watched.push(hash);
            }
        }
    }

    /// A predicate invalidated the keys of `watched` (held or not), for the advisor: no size
    /// of its simulation holds them any more. Applied at once, after a drain.
    pub(super) fn advise_invalidated_matching(&self, watched: &mut Vec<u64>) {
        if let Some(advisor) = &self.advisor {
            advisor.invalidate_matching(watched, || self.served());
        }
    }

    /// Every value is being invalidated, for the advisor.
    pub(super) fn advise_cleared(&self) {
        if let Some(advisor) = &self.advisor {
            advisor.clear(self.clock.now_nanos());
        }
    }

    /// A loaded value charged `charge` (or refused at that charge), for the advisor: the
    /// miniatures that missed its key store it, and a sampled value is marked as such.
    pub(super) fn advise_load(&self, key: &K, value: &Cached<V>, charge: u64) {
        if let Some(advisor) = &self.advisor {
            let hash = advisor.hash(key);
            let sampled = advisor.samples(hash);
            value.set_advisor_hash(hash, sampled);
            if sampled {
                self.advised_keys
                    .remember(advisor, hash, key, self.config.visit_budget);
                advisor.learn(hash, charge, self.clock.now_nanos());
            }
        }
    }
}

/// The advisor's threshold up to which a cache's held values are marked sampled
/// ([`Inner::mark_newly_sampled`]).
pub(super) struct Marked(AtomicU64);

impl Default for Marked {
    fn default() -> Self {
        // The sample starts at rate 1, and values are marked at their loads.
        Self(AtomicU64::new(u64::MAX))
    }
}

/// The keys of the sampled values a cache loaded, by sampling hash: a predicate over keys
/// (`invalidate_keys_if`) is tested on them, so that the advisor's miniatures drop a matching
/// value that a larger size holds though this cache evicted it (the advisor itself keeps hashes
/// only). At most [`KEPT_PER_SAMPLED_KEY`] times the sample's limit; their bytes are charged
/// with the advisor's. When the table is full, the keys the sample's rate no longer reaches
/// leave, and if that frees nothing (a cache whose keys turn over keeps its rate, its idle keys
/// leaving the sample) the quarter loaded longest ago: a key loaded long ago and still read is
/// held by the cache, where a predicate finds it without the table. A stopped advisor's keys
/// leave at the next predicate invalidation (or with the cache).
pub(super) struct AdvisedKeys<K> {
    limit: usize,
    table: Mutex<KeyTable<K>>,
}

/// Keys kept per key of the sample's limit: a key is kept from its first load, and the sample
/// sheds keys a quarter at a time.
const KEPT_PER_SAMPLED_KEY: usize = 2;

struct KeyTable<K> {
    /// By sampling hash: the key, its bytes, and the number of its load (the table's count).
    keys: HashMap<u64, (K, u64, u64)>,
    bytes: u64,
    loads: u64,
}

impl<K: Hash + Eq + Clone + EstimateSize> AdvisedKeys<K> {
    /// A table for an advisor whose sample holds at most `sample_keys` keys (none without an
    /// advisor).
    pub(super) fn new(sample_keys: usize) -> Self {
        Self {
            limit: sample_keys.saturating_mul(KEPT_PER_SAMPLED_KEY),
            table: Mutex::new(KeyTable {
                keys: HashMap::new(),
                bytes: 0,
                loads: 0,
            }),
        }
    }

    /// Keeps `key` (of sampling hash `hash`, sampled now); a full table makes room first (the
    /// keys no longer sampled, else the quarter loaded longest ago).
    fn remember(&self, advisor: &Advisor, hash: u64, key: &K, visit_budget: u64) {
        let mut table = self.table.lock();
        if table.keys.contains_key(&hash) {
            return;
        }
        if table.keys.len() >= self.limit {
            table.retain(|hash, _| advisor.samples(hash));
        }
        if table.keys.len() >= self.limit && !table.keys.is_empty() {
            let mut loads: Vec<u64> = table.keys.values().map(|(_, _, load)| *load).collect();
            let quarter = (self.limit / 4).max(1);
            let (_, &mut newest_gone, _) = loads.select_nth_unstable(quarter - 1);
            table.retain(|_, load| load > newest_gone);
        }
        if table.keys.len() < self.limit {
            let bytes = key_bytes(key, visit_budget) + KEY_ENTRY_BYTES;
            table.loads += 1;
            let load = table.loads;
            table.keys.insert(hash, (key.clone(), bytes, load));
            table.bytes += bytes;
        }
        advisor.hold_outside(table.bytes);
    }

    /// Lets go of the keys the sample no longer reaches (its rate fell).
    fn forget_unsampled(&self, advisor: &Advisor) {
        let mut table = self.table.lock();
        table.retain(|hash, _| advisor.samples(hash));
        advisor.hold_outside(table.bytes);
    }

    /// The hashes of the keys kept, still sampled, that `predicate` matches. A stopped
    /// advisor's table is emptied (nothing is sampled any more).
    fn matching(&self, advisor: &Advisor, predicate: impl Fn(&K) -> bool) -> Vec<u64> {
        let mut table = self.table.lock();
        if advisor.is_retired() {
            table.retain(|_, _| false);
            return Vec::new();
        }
        let keys = table.keys.iter();
        keys.filter(|&(&hash, (key, _, _))| advisor.samples(hash) && predicate(key))
            .map(|(&hash, _)| hash)
            .collect()
    }
}

impl<K> KeyTable<K> {
    /// Keeps the keys for which `keep(hash, load)` holds.
    fn retain(&mut self, keep: impl Fn(u64, u64) -> bool) {
        let mut freed = 0;
        self.keys.retain(|&hash, (_, bytes, load)| {
            let kept = keep(hash, *load);
            if !kept {
                freed += *bytes;
            }
            kept
        });
        self.bytes -= freed;
        if self.keys.len() < self.keys.capacity() / 4 {
            self.keys.shrink_to_fit();
        }
    }
}

/// Bytes of a kept key besides its own estimate: its hash, its bytes and the map's slot.
const KEY_ENTRY_BYTES: u64 = 32;

#[cfg(test)]
mod tests {
    use metacache_ledger::Ledger;

    use super::*;
    use crate::advice::test_advisor as advisor;

    #[test]
    fn kept_keys_are_bounded_matched_and_charged() {
        let ledger = Ledger::new(None);
        let advisor = advisor(&ledger);
        let keys = AdvisedKeys::<u64>::new(4);
        for key in 0..20u64 {
            keys.remember(&advisor, advisor.hash(&key), &key, 1 << 20);
        }
        let table = keys.table.lock();
        // Every key stays sampled (the test advisor samples all): each time the table is
        // full, the quarter loaded longest ago leaves, so the newest loads are kept.
        assert_eq!(table.keys.len(), 8, "twice the sample's limit");
        let bytes: u64 = table.keys.values().map(|(_, bytes, _)| bytes).sum();
        assert_eq!(table.bytes, bytes);
        assert_eq!(advisor.outside(), bytes, "held for the next charge");
        drop(table);
        let even = keys.matching(&advisor, |key| key % 2 == 0);
        assert_eq!(even.len(), 4, "{even:?}");
        assert!(
            even.iter()
                .all(|hash| { (12..20u64).any(|key| key % 2 == 0 && advisor.hash(&key) == *hash) })
        );
        advisor.retire();
        assert!(keys.matching(&advisor, |_| true).is_empty());
        assert_eq!(
            keys.table.lock().keys.len(),
            0,
            "a stopped advisor's keys go"
        );
    }
}
