//! Refresh-ahead in a managed cache (SPEC §8.3; the rules are in [`crate::refresh`]).
//!
//! # Invariants
//! - At most one background refresh per cached value: the value's own flag is claimed by the
//!   first read past its due point; only a renewal (unchanged) or a refresh that could not
//!   start gives it back.
//! - A refresh is a flight of its key: a caller that finds the value expired joins it instead of
//!   loading, and a load already in flight makes the refresh unnecessary.
//! - A refresh stores under the same rules as a load: the generation it read before loading and
//!   its own fence decide; a refresh that started before an invalidation never stores.
//! - A refresh runs on its own task, holding a slot of the node-wide bound until it ends
//!   (panics of the refresher are contained as load errors), whatever becomes of the read that
//!   started it.

use std::hash::Hash;
use std::sync::atomic::Ordering::SeqCst;

use metacache_estimate::EstimateSize;

use super::{Inner, ManagedCache};
use crate::refresh::{RefreshCounters, RefreshPermit, RefreshStats, Refreshed, Refresher};
use crate::slot::NEVER;
use crate::{Admission, Cached};

impl<K, V> ManagedCache<K, V>
where
    K: Hash + Eq + Clone + EstimateSize + Send + Sync + 'static,
    V: EstimateSize + Send + Sync + 'static,
{
    /// Registers how a value of this cache is reloaded without a caller. Refresh-ahead runs only
    /// for caches whose entry has `auto-refresh` on and a TTL after write.
    pub fn set_refresher(&self, refresher: Refresher<K, V>) {
        *self.inner.refresher.write() = Some(refresher);
    }

    /// Whether reads of this cache start refreshes (auto-refresh on, a TTL after write).
    pub fn refreshes_ahead(&self) -> bool {
        self.inner.margin_nanos != 0
    }

    /// What refresh-ahead did in this cache.
    pub fn refresh_stats(&self) -> RefreshStats {
        self.inner.refresh.snapshot()
    }

    /// A hit on `hit`: starts its background refresh if it is due and none was started.
    #[inline]
    pub(super) fn after_hit(&self, key: &K, hit: &Cached<V>) {
        if self.inner.is_due(hit) && hit.try_start_refresh() {
            self.start_refresh(key.clone(), hit.clone());
        }
    }

    fn start_refresh(&self, key: K, old: Cached<V>) {
        let inner = &*self.inner;
        let counters = &inner.refresh;
        // Without a refresher the value is never refreshed: counted once, not on every read.
        let Some(refresher) = inner.refresher.read().clone() else {
            return RefreshCounters::bump(&counters.skipped);
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return RefreshCounters::bump(&counters.skipped);
        };
        // Over the bound: skipped, not queued; a later read may try again.
        let Some(permit) = inner.limiter.try_acquire() else {
            RefreshCounters::bump(&counters.skipped);
            return old.end_refresh();
        };
        RefreshCounters::bump(&counters.started);
        let this = self.clone();
        runtime.spawn(async move {
            this.run_refresh(key, old, refresher, permit).await;
        });
    }

    /// Runs one refresh holding `permit`, its slot under the node's bound. The slot goes back
    /// before the outcome is counted, so that whoever sees the outcome finds the slot free (a
    /// panicking refresher's slot goes back as the task unwinds: `RefreshPermit`).
    async fn run_refresh(
        &self,
        key: K,
        old: Cached<V>,
        refresher: Refresher<K, V>,
        permit: RefreshPermit,
    ) {
        let inner = &*self.inner;
        let counters = &inner.refresh;
        // Taken before the source is asked: an invalidation from now on fences this refresh.
        let generation = inner.generation.load(SeqCst);
        let Some(leader) = inner.flights.lead_refresh(&key) else {
            // A caller's load of this key is in flight: its value will be fresh.
            drop(permit);
            return old.end_refresh();
        };
        let refreshed = inner
            .timed_load(|| refresher(key.clone(), old.clone()))
            .await;
        let outcome = match refreshed {
            Ok(Refreshed::Changed(value)) => {
                let (cached, admission) =
                    inner.admit(key, value, generation, || leader.is_fenced());
                leader.complete(Ok(cached));
                matches!(admission, Admission::Retained { .. }).then_some(&counters.succeeded)
            }
            Ok(Refreshed::Unchanged) => {
                // Not renewed (invalidated meanwhile): callers waiting on it start over.
                let renewed = inner.renew(key, &old, generation, || leader.is_fenced());
                if renewed {
                    leader.complete(Ok(old));
                }
                renewed.then_some(&counters.unchanged)
            }
            // The old value serves until its hard TTL; callers then load in the foreground
            // (the leader is dropped without an outcome, so anyone waiting starts over).
            Err(_) => Some(&counters.failed),
        };
        drop(permit);
        if let Some(counter) = outcome {
            RefreshCounters::bump(counter);
        }
    }
}

impl<K, V> Inner<K, V>
where
    K: Hash + Eq + Clone + EstimateSize + Send + Sync + 'static,
    V: EstimateSize + Send + Sync + 'static,
{
    /// Whether `value` is past its due point: refresh-ahead is on, it expires, and less than the
    /// margin is left.
    pub(super) fn is_due(&self, value: &Cached<V>) -> bool {
        let deadline = value.deadline();
        self.margin_nanos != 0
            && deadline != NEVER
            && self.clock.now_nanos() >= deadline.saturating_sub(self.margin_nanos)
    }

    /// A refresh found `old` unchanged: its deadline starts again, and it may be refreshed again
    /// at its next due point. If its hard TTL took it out of the map meanwhile, it goes back in
    /// through admission. `false` if an invalidation fenced the refresh.
    fn renew(&self, key: K, old: &Cached<V>, generation: u64, fenced: impl Fn() -> bool) -> bool {
        let deadline = self.deadline_from(self.clock.now_nanos());
        {
            let _fence = self.fence.read();
            if self.generation.load(SeqCst) != generation || self.retired.load(SeqCst) || fenced() {
                return false;
            }
            if self.map.get(&key).is_some_and(|v| v.ptr_eq(old)) {
                old.set_deadline(deadline);
                old.end_refresh();
                return true;
            }
        }
        old.set_deadline(deadline);
        old.end_refresh();
        let (_, admission) = self.admit_cached(key, old.clone(), generation, fenced);
        !matches!(admission, Admission::Fenced)
    }
}
