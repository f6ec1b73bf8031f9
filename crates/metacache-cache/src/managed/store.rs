//! The store path of a managed cache: admission of a loaded value through the ledger (§3),
//! insertion that lets quick_cache evict colder values of the cache for it, and the frequency
//! contest when it displaced hot ones (`crate::frequency`).
//!
//! Invariants: a value is resident uncharged (charge 0) only between its insertion and its
//! reservation, and displaced values are held out of the map, uncharged, only while a contest
//! is decided; both under the fence's read side. Under pressure the whole of a store (a new
//! key's insertion, contest and reservation; a replacement) holds the cache's `storing` lock
//! alone (its write side; stores of a cache not under pressure yet share its read side, so the
//! first store alone waits for them): the budget has room for a newcomer exactly when the map
//! made room for it, never short by another store's victims or by a value charged after its
//! eviction, no store finds the room another's contest is about to give back, and no
//! replacement meets a newcomer not charged yet. A value's charge is only ever taken
//! (swapped for 0), never read and then cleared: whoever takes it releases it. Whoever makes
//! charged bytes evictable again (a value stored, victims put back) checks the levels above
//! for a limit lowered meanwhile: reclamation cannot evict what is not in the map.
//!
//! Without that lock, four threads storing into a cache held at an eighth of an evenly read
//! set refused a fifth of their stores as `budget_exceeded` (the victims of another store's
//! contest were still charged), each refusal reclaimed 1/32 of the limit, and the newcomers let
//! into the room so freed held the hit ratio at 0.18 where one thread gets 0.245
//! (docs/benchmarks.md, "Concurrent stores under a binding limit").

use std::hash::Hash;
use std::sync::atomic::Ordering::SeqCst;

use metacache_estimate::EstimateSize;
use metacache_ledger::{Budget, Level, RejectReason, Rejection};
use quick_cache::sync::{EntryAction, EntryResult};

use super::{Inner, Stored};
use crate::admission::{Admission, charge_for, record_rejection};
use crate::counters::CacheCounters;
use crate::frequency::Displaced;
use crate::slot::NEVER;
use crate::{Cached, EvictionCause};

impl<K, V> Inner<K, V>
where
    K: Hash + Eq + Clone + EstimateSize + Send + Sync + 'static,
    V: EstimateSize + Send + Sync + 'static,
{
    /// Admission (§3) of a value loaded under `generation`; `fenced` says whether its own key
    /// was invalidated since the load started.
    pub(super) fn admit(
        &self,
        key: K,
        value: V,
        generation: u64,
        fenced: impl Fn() -> bool,
    ) -> (Cached<V>, Admission) {
        let value = Cached::new(value, self.deadline_from(self.clock.now_nanos()));
        self.admit_cached(key, value, generation, fenced)
    }

    /// [`Inner::admit`] of a value already wrapped (with its deadline): a value a refresh
    /// found unchanged after its hard TTL took it out of the map goes back in this way.
    pub(super) fn admit_cached(
        &self,
        key: K,
        value: Cached<V>,
        generation: u64,
        fenced: impl Fn() -> bool,
    ) -> (Cached<V>, Admission) {
        if !self.enabled {
            return (value, Admission::Disabled);
        }
        let budget = &self.accounting.budget;
        let charge = match charge_for(&key, &*value, budget, self.config.visit_budget) {
            Ok(charge) => {
                self.advise_load(&key, &value, charge);
                charge
            }
            Err(rejection) => {
                self.advise_load(&key, &value, rejection.requested);
                self.drop_superseded(&key);
                return self.rejected(value, rejection);
            }
        };
        let _fence = self.fence.read();
        if self.generation.load(SeqCst) != generation || self.retired.load(SeqCst) || fenced() {
            return (value, Admission::Fenced);
        }
        match self.store(key, &value, charge) {
            Ok(Stored::Retained) => (value, Admission::Retained { charge }),
            Ok(Stored::Declined) => (value, Admission::Declined),
            Ok(Stored::Superseded) => (value, Admission::Superseded),
            Err(rejection) => self.rejected(value, rejection),
        }
    }

    /// Removes the value `key` holds, if any, because a newer value of it was offered and not
    /// kept: the old one must not keep answering (Doris drops it too). Counted as an eviction.
    fn drop_superseded(&self, key: &K) {
        if let Some((_, old)) = self.map.remove(key) {
            self.accounting.release_evicted(old.take_charge());
        }
    }

    fn rejected(&self, value: Cached<V>, rejection: Rejection) -> (Cached<V>, Admission) {
        let now = self.clock.now_nanos() / 1_000_000;
        record_rejection(
            &self.accounting.counters,
            &self.config.entry_name,
            &self.accounting.budget,
            &rejection,
            now,
        );
        (value, Admission::Rejected(rejection.reason))
    }

    /// Puts `value` in the map charged `charge` bytes, holding `storing` as the cache's
    /// pressure asks ([`Inner::store_held`]).
    ///
    /// Before the history exists nothing is contested: stores of a cache filling up run side by
    /// side (the shared side of `storing`). After, each store runs alone — a replacement too:
    /// the value it replaces may be another store's newcomer, not charged yet, whose charge and
    /// this one's would both be counted for one resident until that store found its value gone.
    /// The first store alone waits for those that began before the history existed: one of
    /// them, preempted between its reservation and setting its value's charge on a loaded
    /// machine, had its value evicted meanwhile and kept its charge in the ledger until it ran
    /// again, and each store alone in between found the ledger short of the room the map had
    /// made for it (`stores_from_several_threads_are_decided_as_one_at_a_time`, 1 run in about
    /// 250 under load: 1 to 84 refusals, each reclaiming 1/32 of the limit). Stores side by
    /// side can still meet that among themselves as the history starts: one refused then tries
    /// once more alone, once the others are done.
    fn store(
        &self,
        key: K,
        value: &Cached<V>,
        charge: u64,
    ) -> std::result::Result<Stored, Rejection> {
        if self.frequency.words() > 0 {
            let _alone = self.storing.write();
            return self.store_held(key, value, charge);
        }
        let shared = self.storing.read();
        match self.store_held(key.clone(), value, charge) {
            // The history started meanwhile: another store side by side may hold a charge
            // its evicted value no longer has. (Before, a refusal is a shared level's: other
            // caches hold its room.)
            Err(rejection)
                if rejection.reason == RejectReason::BudgetExceeded
                    && self.frequency.words() > 0 =>
            {
                drop(shared);
                let _alone = self.storing.write();
                self.store_held(key, value, charge)
            }
            stored => stored,
        }
    }

    /// [`Inner::store`] under `storing`. An existing value of `key` is replaced in place under
    /// a replacement reservation (`max(old, new)` until committed) when the ledger has room for
    /// it; otherwise it is let go and `value` stored as a new one.
    fn store_held(
        &self,
        key: K,
        value: &Cached<V>,
        charge: u64,
    ) -> std::result::Result<Stored, Rejection> {
        let budget = &self.accounting.budget;
        let scale = *self.scale.lock();
        let weight = scale.weight(charge);
        let heaviest = scale.max_weight(self.map.num_shards());
        if weight > heaviest {
            // quick_cache would drop it silently: a value that no shard of the map can hold.
            self.drop_superseded(&key);
            return Err(self.too_large(charge, heaviest));
        }
        value.set_weight(weight);
        // A new key goes straight to `insert`: `entry` on a missing key would turn its ghost
        // (quick_cache's memory of a recent eviction, which readmits it as hot) into a
        // placeholder and lose it.
        if self.map.peek(&key).is_none() {
            return self.store_new(key, value, charge);
        }
        // The old value's charge is taken, not read: a newcomer resident uncharged (another
        // store between its insertion and its reservation) may be charged at any moment, and
        // a charge set between a read and a take would be taken here and never released; now
        // it is set before (and taken here) or after (and released by that store, which finds
        // its value gone).
        let mut taken = 0;
        let entry = self.map.entry(&key, None, |_, existing| {
            let old = existing.take_charge();
            match budget.try_reserve_replacement(old, charge) {
                Ok(replacement) => {
                    value.set_charge(charge);
                    *existing = value.clone();
                    replacement.commit();
                    EntryAction::Retain(())
                }
                Err(_) => {
                    taken = old;
                    EntryAction::Remove
                }
            }
        });
        match entry {
            EntryResult::Retained(()) => {
                self.stored(value);
                return Ok(Stored::Retained);
            }
            // The placeholder goes: `insert` below is what evicts to make room.
            EntryResult::Vacant(placeholder) => drop(placeholder),
            EntryResult::Removed(_, old) | EntryResult::Replaced(_, old) => {
                // No room for both at once: the old value goes first, then `value` competes
                // for room as a new one.
                budget.release(taken + old.take_charge());
            }
            // Unreachable without a timeout; if it were reached, `value` was not stored.
            EntryResult::Timeout => return Ok(Stored::Superseded),
        }
        self.store_new(key, value, charge)
    }

    /// Inserts `value` first, so that quick_cache's policy evicts colder values of this cache
    /// to make room for it (the eviction hook returns their bytes), then reserves its charge.
    /// If it displaced hot values that were asked for at least as often, it leaves and they
    /// return ([`crate::frequency`]). Until the reservation it is resident uncharged (charge
    /// 0), which keeps the ledger equal to the sum of the residents' charges; if a shared level
    /// (group, catalog, node) still has no room, because other caches hold it, the value leaves
    /// again and the refusal files a reclamation request. The caller holds `storing`
    /// ([`Inner::store`]).
    fn store_new(
        &self,
        key: K,
        value: &Cached<V>,
        charge: u64,
    ) -> std::result::Result<Stored, Rejection> {
        let budget = &self.accounting.budget;
        // Taken before this request is recorded ([`crate::frequency`]).
        let seen = self.frequency.seen(&key);
        // quick_cache evicts before it links a key it does not know (a value stored through a
        // placeholder would be linked first, and could be its own victim); a key it remembers
        // (a ghost) is linked first, and can be (see `contest`).
        let mut displaced = Displaced::collecting();
        self.map
            .insert_with_lifecycle(key.clone(), value.clone(), &mut displaced);
        let outcome = if displaced.hot.is_empty() {
            Ok(())
        } else {
            self.contest(&key, value, displaced.hot)
        };
        if displaced.evicted {
            // Under pressure: the history starts here, if the contest did not start it (the
            // first contest admits: there is no history to decide it yet).
            self.frequency.start(self.map.len());
        }
        self.frequency.record(&key);
        if let Err(lost) = outcome {
            return Ok(lost);
        }
        if seen {
            // A key asked for before enters the cold ring referenced, as if read once more:
            // at the ring's hand it moves to the hot ring (through a contest) instead of
            // leaving — see "A newcomer seen before" in [`crate::frequency`].
            let _ = self.map.get(&key);
        }
        match budget.try_reserve(charge) {
            Ok(()) => {
                value.set_charge(charge);
                if !self.holds(&key, value) {
                    // Evicted or replaced before its charge was set: whoever removed it took
                    // nothing, so the charge is released here (the swap makes it exactly once),
                    // and the caller learns that it is not cached.
                    budget.release(value.take_charge());
                    return Ok(Stored::Superseded);
                }
                self.stored(value);
                Ok(Stored::Retained)
            }
            Err(rejection) => {
                if self.map.remove_if(&key, |v| v.ptr_eq(value)).is_none() {
                    // Replaced meanwhile by a newer value of its key, whose charge is what
                    // the budget lacked (a replacement before the history exists does not
                    // wait for this store): not cached, and nothing was refused.
                    return Ok(Stored::Superseded);
                }
                Err(rejection)
            }
        }
    }

    /// Decides whether `value`, just inserted under `key`, stays although it displaced the hot
    /// values `displaced` (out of the map, their charges released, each with what it held).
    /// The winner's side stays: either the displaced values are counted as evictions (`Ok`), or
    /// `value` leaves (counted as an eviction, as a candidate refused by TinyLFU is:
    /// [`Stored::Declined`]) and they are put back, each reserving its charge again — as they
    /// are if `value` left the map before the decision ([`Stored::Superseded`]).
    fn contest(
        &self,
        key: &K,
        value: &Cached<V>,
        displaced: Vec<(K, Cached<V>, u64)>,
    ) -> Result<(), Stored> {
        let counters = &self.accounting.counters;
        let accesses = counters.hits.get() + CacheCounters::read(&counters.misses);
        let victims = displaced.iter().map(|(victim, _, _)| victim);
        let admitted = self
            .frequency
            .admits(key, victims, self.map.len(), accesses);
        let lost = if displaced.iter().any(|(_, victim, _)| victim.ptr_eq(value)) {
            // Its own victim: a key readmitted from its ghost is linked into the hot ring
            // before quick_cache evicts for it, and the ring's hand can reach it there. The
            // policy did not keep it; the values that left before it go back (it is counted
            // as an eviction with them).
            Stored::Declined
        } else if !self.holds(key, value) {
            // Gone already (reclaimed, expired, or replaced by a newer value of its key
            // meanwhile): the room made for it goes back to its victims.
            Stored::Superseded
        } else if admitted {
            for (_, _, charge) in displaced {
                self.accounting.count_evicted(charge);
            }
            return Ok(());
        } else {
            if self.map.remove_if(key, |v| v.ptr_eq(value)).is_some() {
                counters.evicted(EvictionCause::Size);
            }
            Stored::Declined
        };
        let budget = &self.accounting.budget;
        for (victim_key, victim, charge) in displaced {
            // A key stored again meanwhile keeps its newer value.
            if &victim_key == key || self.map.peek(&victim_key).is_some() {
                self.accounting.count_evicted(charge);
                continue;
            }
            victim.set_defended();
            self.map.insert(victim_key.clone(), victim.clone());
            // It fits in this cache's own bounds (it left to make room for `value`, which is
            // gone); a shared level may have lent the room to another cache meanwhile.
            match budget.try_reserve(charge) {
                Ok(()) => {
                    victim.set_charge(charge);
                    if !self.holds(&victim_key, &victim) {
                        budget.release(victim.take_charge());
                    }
                }
                Err(_) => {
                    // Unless something evicted it meanwhile (the hook counted that).
                    if self
                        .map
                        .remove_if(&victim_key, |v| v.ptr_eq(&victim))
                        .is_some()
                    {
                        self.accounting.count_evicted(charge);
                    }
                }
            }
        }
        // A limit lowered while they were out of the map asked for reclamation that could not
        // evict them (a pass that frees nothing gives up): ask again now that they are back.
        budget.reclaim_if_over_limit();
        Err(lost)
    }

    /// Whether `value` itself (not a later value of the same key) is resident under `key`.
    fn holds(&self, key: &K, value: &Cached<V>) -> bool {
        self.map.peek(key).is_some_and(|v| v.ptr_eq(value))
    }

    /// Book-keeping after `value` became resident with its charge.
    fn stored(&self, value: &Cached<V>) {
        let deadline = value.deadline();
        if deadline != NEVER {
            self.earliest_deadline.fetch_min(deadline, SeqCst);
        }
        // A limit lowered between the reservation and now asked for reclamation while
        // these bytes were not evictable yet; ask again now that they are.
        self.accounting.budget.reclaim_if_over_limit();
    }

    fn too_large(&self, charge: u64, heaviest: u64) -> Rejection {
        let budget = &self.accounting.budget;
        let (level, limit) = budget
            .effective_limit_with_level()
            .unwrap_or((Level::Entry, heaviest));
        Rejection {
            reason: RejectReason::EntryTooLarge,
            level,
            used: budget.ancestor(level).map_or(0, Budget::used),
            limit,
            requested: charge,
        }
    }
}
