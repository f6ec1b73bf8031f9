//! Reclamation of a managed cache, as the governor's worker asks for it: expired values,
//! the coldest values by quick_cache's own policy, and re-weighing when the node limit changes.

use std::hash::Hash;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};

use metacache_estimate::EstimateSize;
use metacache_ledger::{Budget, Level};
use quick_cache::sync::EntryAction;

use super::Inner;
use crate::advice::Advisor;
use crate::governor::AdvisorClaim;
use crate::scale::Scale;
use crate::slot::NEVER;
use crate::{EvictionCause, Reclaimable};

impl<K, V> Reclaimable for Inner<K, V>
where
    K: Hash + Eq + Clone + EstimateSize + Send + Sync + 'static,
    V: EstimateSize + Send + Sync + 'static,
{
    fn budget(&self) -> &Arc<Budget> {
        &self.accounting.budget
    }

    fn purge_expired(&self) -> u64 {
        let now = self.clock.now_nanos();
        if self.ttl_nanos == NEVER || now < self.earliest_deadline.load(SeqCst) {
            return 0;
        }
        // Survivors (and values stored meanwhile) lower the bound again.
        self.earliest_deadline.store(NEVER, SeqCst);
        let freed = AtomicU64::new(0);
        self.map.retain(|_, value| {
            let deadline = value.deadline();
            if deadline > now {
                self.earliest_deadline.fetch_min(deadline, SeqCst);
                return true;
            }
            let charge = value.take_charge();
            self.accounting.budget.release(charge);
            self.accounting.counters.evicted(EvictionCause::Expired);
            freed.fetch_add(charge, SeqCst);
            false
        });
        freed.into_inner()
    }

    fn evict_coldest(&self, bytes: u64) -> u64 {
        let capacity = self.map.capacity();
        let by_bytes = self.scale.lock().by_bytes();
        let mut freed = 0;
        let mut at_least = 1u64;
        let _reclaiming = Reclaiming::enter(&self.accounting.reclaiming);
        // Each round lowers quick_cache's capacity so that its own policy evicts the coldest
        // values (the hook releases them), costing what it evicts; rounds that free nothing
        // (uneven shards) ask for twice as much. Lowering the capacity trims the ghost history
        // in proportion, so a round never asks for more than it needs.
        for _ in 0..64 {
            let len = self.map.len() as u64;
            if freed >= bytes || len == 0 {
                break;
            }
            let target = if by_bytes {
                let weight = self.map.weight();
                weight.saturating_sub((bytes - freed).max(at_least))
            } else {
                let average = (self.accounting.budget.used() / len).max(1);
                len - (bytes - freed).div_ceil(average).max(at_least).min(len)
            };
            let before = self.accounting.evicted_bytes.load(SeqCst);
            self.map.set_capacity(target);
            let released = self.accounting.evicted_bytes.load(SeqCst) - before;
            freed += released;
            if released == 0 {
                at_least = at_least.saturating_mul(2);
            }
        }
        self.map.set_capacity(capacity);
        // The node is still short after every value went: the quota advisor's memory goes
        // too (for good; it is only worth its bytes while values fit).
        if freed < bytes
            && let Some(advisor) = &self.advisor
            && self
                .accounting
                .budget
                .ancestor(Level::Node)
                .and_then(|node| node.limit().map(|l| node.used() + (bytes - freed) > l))
                .unwrap_or(false)
        {
            freed += advisor.retire();
        }
        freed
    }

    fn overhead_bytes(&self) -> u64 {
        self.advisor.as_ref().map_or(0, Advisor::reserved)
    }

    fn advise(&self) {
        self.drain_advisor();
    }

    fn advising(&self) -> bool {
        self.advisor.as_ref().is_some_and(Advisor::in_share)
    }

    fn advisor_claim(&self) -> Option<AdvisorClaim> {
        let advisor = self.advisor.as_ref().filter(|a| a.in_share())?;
        Some(AdvisorClaim {
            reserved: advisor.reserved(),
            starved: advisor.is_starved(),
            needs: advisor.needs(),
        })
    }

    fn cap_advisor(&self, cap: u64) -> u64 {
        self.advisor.as_ref().map_or(0, |a| a.set_cap(cap))
    }

    fn restart_advisor(&self) {
        if let Some(advisor) = &self.advisor {
            advisor.restart(self.clock.now_nanos());
        }
    }

    fn rescale(&self) {
        let scale = Scale::new(
            self.share.values_limit(&self.accounting.budget),
            self.config.capacity,
        );
        {
            let mut current = self.scale.lock();
            if *current == scale {
                return;
            }
            *current = scale;
        }
        // Every resident is re-weighed under its shard's lock (quick_cache recomputes the
        // shard's weight after the callback), then the capacity follows, evicting if needed.
        let keys: Vec<K> = self.map.iter().map(|(key, _)| key).collect();
        for key in keys {
            self.map.entry(&key, None, |_, value| {
                value.set_weight(scale.weight(value.charge()));
                EntryAction::Retain(())
            });
        }
        self.map.set_capacity(scale.capacity);
    }
}

/// Marks a reclamation round for the eviction hook while it lives, panic or not.
struct Reclaiming<'a>(&'a AtomicUsize);

impl<'a> Reclaiming<'a> {
    fn enter(rounds: &'a AtomicUsize) -> Self {
        rounds.fetch_add(1, SeqCst);
        Self(rounds)
    }
}

impl Drop for Reclaiming<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}
