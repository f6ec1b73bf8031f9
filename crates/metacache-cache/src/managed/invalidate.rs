//! A managed cache's invalidations: one key, the keys or values a predicate matches, every
//! value (REFRESH TABLE / DATABASE / CATALOG, metastore events, look-aside `DELETE`).
//!
//! # Invariants
//! - Each fences the loads in flight it concerns before it removes anything: a load that began
//!   before an invalidation never stores its (possibly stale) value after it.
//! - Every removed value's charge is released and counted as an invalidation.
//! - The quota advisor hears of every invalidation of a key it watches, held by the cache or
//!   not where the cache can tell (a key, or a predicate over keys: the sampled keys are kept,
//!   `advise::AdvisedKeys`); a predicate over values reaches held values only.

use std::cell::{Cell, RefCell};
use std::hash::Hash;
use std::sync::atomic::Ordering::SeqCst;

use metacache_estimate::EstimateSize;

use super::{Inner, ManagedCache};
use crate::Cached;
use crate::counters::CacheCounters;

impl<K, V> ManagedCache<K, V>
where
    K: Hash + Eq + Clone + EstimateSize + Send + Sync + 'static,
    V: EstimateSize + Send + Sync + 'static,
{
    /// Removes `key`; a load of `key` in flight no longer populates the cache (loads of other
    /// keys are not affected). Returns whether a value was removed.
    pub fn invalidate(&self, key: &K) -> bool {
        let inner = &*self.inner;
        {
            let _fence = inner.fence.write();
            inner.flights.fence(key);
            inner.leases.fence(key);
        }
        inner.advise_invalidated(key);
        match inner.map.remove(key) {
            Some((_, value)) => {
                inner.release_invalidated(&value);
                true
            }
            None => false,
        }
    }

    /// Removes every value for which `predicate` holds; loads in flight no longer populate the
    /// cache. Returns how many values were removed.
    pub fn invalidate_if(&self, predicate: impl Fn(&K, &V) -> bool) -> u64 {
        self.inner.new_generation();
        let mut watched = Vec::new();
        let removed = self.inner.remove_where(predicate, Some(&mut watched));
        self.inner.advise_invalidated_matching(&mut watched);
        removed
    }

    /// Removes every value whose key matches; loads of matching keys in flight no longer
    /// populate the cache, loads of other keys are not affected (REFRESH TABLE / DATABASE).
    /// Returns how many values were removed.
    pub fn invalidate_keys_if(&self, predicate: impl Fn(&K) -> bool) -> u64 {
        let inner = &*self.inner;
        {
            let _fence = inner.fence.write();
            inner.flights.fence_if(&predicate);
            inner.leases.fence_if(&predicate);
        }
        // The sampled keys first, held or not: a larger size may hold what this cache does not.
        let mut watched = inner.advised_keys_matching(&predicate);
        let removed = inner.remove_where(|key, _| predicate(key), Some(&mut watched));
        inner.advise_invalidated_matching(&mut watched);
        removed
    }

    /// Removes every value; loads in flight no longer populate the cache.
    pub fn invalidate_all(&self) -> u64 {
        self.inner.new_generation();
        self.inner.advise_cleared();
        self.inner.remove_where(|_, _| true, None)
    }
}

impl<K, V> Inner<K, V>
where
    K: Hash + Eq + Clone + EstimateSize + Send + Sync + 'static,
    V: EstimateSize + Send + Sync + 'static,
{
    /// Fences every load in flight (their values are not stored, and later callers do not join
    /// them) and every load that read the generation before now.
    pub(super) fn new_generation(&self) {
        let _fence = self.fence.write();
        self.generation.fetch_add(1, SeqCst);
        self.flights.fence_if(|_| true);
        self.leases.fence_if(|_| true);
    }

    /// Removes and releases every value for which `predicate` holds, counting invalidations;
    /// adds to `watched` the sampling hash of each removed value the advisor watches.
    pub(super) fn remove_where(
        &self,
        predicate: impl Fn(&K, &V) -> bool,
        watched: Option<&mut Vec<u64>>,
    ) -> u64 {
        let removed = Cell::new(0u64);
        let watched = watched.map(RefCell::new);
        self.map.retain(|key, value| {
            if !predicate(key, value) {
                return true;
            }
            if let Some(watched) = &watched {
                self.watch_invalidated(value, &mut watched.borrow_mut());
            }
            self.release_invalidated(value);
            removed.set(removed.get() + 1);
            false
        });
        removed.get()
    }

    pub(super) fn release_invalidated(&self, value: &Cached<V>) {
        self.accounting.budget.release(value.take_charge());
        CacheCounters::add(&self.accounting.counters.invalidations, 1);
    }
}
