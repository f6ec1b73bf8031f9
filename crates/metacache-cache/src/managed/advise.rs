//! A managed cache's side of the quota advisor (`crate::advice`): what a hit, a miss and a
//! load tell it, and the curve, its memory and its drain as the cache's API offers them.
//!
//! The hit path reaches this module only for a sampled key or one in
//! [`HEAVY_REPORT`](crate::slot::HEAVY_REPORT) of a thread's hits (`counters::heavy_tick`);
//! nothing here runs the simulation, which the governor's advisor thread does.

use std::hash::Hash;

use metacache_estimate::EstimateSize;
use quick_cache::Equivalent;

use super::{Inner, ManagedCache};
use crate::Cached;
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
        let limit = inner.accounting.budget.effective_limit();
        Some(advisor.advice(inner.served(), limit, inner.clock.now_nanos()))
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
        }
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
            advisor.invalidate(advisor.hash(key), self.clock.now_nanos(), false);
        }
    }

    /// A held value is being invalidated, for the advisor. Only the values held reach it this
    /// way: a sampled key that a larger size would hold but this cache does not stays in those
    /// sizes (the predicate is over keys the advisor does not keep; docs/advisor.md, "Limits").
    pub(super) fn advise_invalidated_value(&self, value: &Cached<V>) {
        if let Some(advisor) = &self.advisor {
            let hash = value.advisor_hash();
            if hash != NO_HASH {
                advisor.invalidate(hash, self.clock.now_nanos(), true);
            }
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
                advisor.learn(hash, charge, self.clock.now_nanos());
            }
        }
    }
}
