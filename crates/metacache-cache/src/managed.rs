//! One managed cache: a `quick_cache` of [`Cached`] values, with TTL, single-flight loads,
//! admission through the ledger, generation-fenced invalidation and the statistics counters.
//!
//! # Invariants
//! - Every value resident in the map holds exactly its `charge` in the cache's entry budget;
//!   whoever removes it from the map (eviction hook, expiry, invalidation, replacement, drop)
//!   takes the charge and releases it. So the entry budget's `used` is the sum of the charges of
//!   the resident values, at every moment outside those few instructions.
//! - A load that started before an invalidation never populates the map: the generation is
//!   checked and the value stored under the read side of `fence`, while invalidation bumps the
//!   generation under its write side and sweeps afterwards.
//! - The hit path takes no lock of ours: one map read, one deadline check (a coarse clock read
//!   only for values that expire), one striped counter bump.

use std::future::Future;
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Weak};

use metacache_estimate::EstimateSize;
use metacache_ledger::{Budget, Level, Rejection};
use parking_lot::RwLock;
use quick_cache::sync::{Cache, EntryAction, EntryResult};
use quick_cache::{DefaultHashBuilder, Equivalent, Lifecycle, OptionsBuilder};

use crate::admission::{Admission, charge_for, record_rejection};
use crate::counters::CacheCounters;
use crate::flight::{self, Flights, Role};
use crate::scale::{Scale, SlotWeighter};
use crate::slot::NEVER;
use crate::{
    CacheConfig, CacheStats, Cached, Clock, Error, Expiry, MemoryGovernor, Reclaimable, Result,
};

/// The budget and counters, shared with the eviction hook that lives inside the map.
struct Accounting {
    budget: Arc<Budget>,
    counters: CacheCounters,
    /// Bytes released by capacity evictions, for reclamation to measure its progress.
    evicted_bytes: AtomicU64,
}

impl Accounting {
    fn release_evicted(&self, charge: u64) {
        self.budget.release(charge);
        CacheCounters::add(&self.counters.evictions, 1);
        CacheCounters::add(&self.evicted_bytes, charge);
    }
}

/// Releases the charge of every value quick_cache evicts (capacity or reclamation).
struct EvictionHook(Arc<Accounting>);

impl Clone for EvictionHook {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<K, V> Lifecycle<K, Cached<V>> for EvictionHook {
    type RequestState = ();

    fn on_evict(&self, _: &mut (), _key: K, value: Cached<V>) {
        self.0.release_evicted(value.take_charge());
    }
}

type Map<K, V> = Cache<K, Cached<V>, SlotWeighter, DefaultHashBuilder, EvictionHook>;

struct Inner<K: Hash + Eq + Clone, V> {
    config: CacheConfig,
    enabled: bool,
    ttl_nanos: u64,
    map: Map<K, V>,
    /// How the map weighs values now; changes when the node limit does.
    scale: parking_lot::Mutex<Scale>,
    /// No resident value expires before this (a lower bound): the sweep skips the cache until
    /// then, so expiry costs nothing while nothing has expired.
    earliest_deadline: AtomicU64,
    accounting: Arc<Accounting>,
    clock: Clock,
    generation: AtomicU64,
    /// Set once by [`ManagedCache::retire`]; a retired cache never stores again.
    retired: AtomicBool,
    fence: RwLock<()>,
    flights: Flights<K, V>,
}

/// A memory-governed cache of `V` by `K`. Cheap to clone (one `Arc`); clones share everything.
pub struct ManagedCache<K: Hash + Eq + Clone, V> {
    inner: Arc<Inner<K, V>>,
}

impl<K: Hash + Eq + Clone, V> Clone for ManagedCache<K, V> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<K, V> ManagedCache<K, V>
where
    K: Hash + Eq + Clone + EstimateSize + Send + Sync + 'static,
    V: EstimateSize + Send + Sync + 'static,
{
    /// Builds a cache with an entry budget under `parent` (an entry group, or a catalog for
    /// caches without an entry token), registered with `governor` for reclamation.
    pub fn new(config: CacheConfig, governor: &MemoryGovernor, parent: &Arc<Budget>) -> Self {
        let budget = parent.child(Level::Entry, config.entry_name.as_ref(), None);
        let accounting = Arc::new(Accounting {
            budget,
            counters: CacheCounters::default(),
            evicted_bytes: AtomicU64::new(0),
        });
        let scale = Scale::new(accounting.budget.effective_limit(), config.capacity);
        let map = new_map(
            &scale,
            config.capacity,
            EvictionHook(Arc::clone(&accounting)),
        );
        let inner = Arc::new(Inner {
            enabled: config.effectively_enabled(),
            ttl_nanos: config
                .ttl
                .map_or(NEVER, |t| u64::try_from(t.as_nanos()).unwrap_or(NEVER)),
            config,
            map,
            scale: parking_lot::Mutex::new(scale),
            earliest_deadline: AtomicU64::new(NEVER),
            accounting,
            clock: governor.clock().clone(),
            generation: AtomicU64::new(0),
            retired: AtomicBool::new(false),
            fence: RwLock::new(()),
            flights: Flights::new(),
        });
        let weak: Weak<Inner<K, V>> = Arc::downgrade(&inner);
        governor.register(weak);
        Self { inner }
    }

    /// The cached value of `key`, counting a hit or a miss; `None` on a miss.
    #[inline]
    pub fn get<Q>(&self, key: &Q) -> Option<Cached<V>>
    where
        Q: Hash + Equivalent<K> + ?Sized,
    {
        let found = self.inner.lookup(key);
        match &found {
            Some(_) => self.inner.accounting.counters.hits.increment(),
            None => CacheCounters::add(&self.inner.accounting.counters.misses, 1),
        }
        found
    }

    /// The cached value of `key`, or the value `load` produces, admitted through the ledger.
    ///
    /// Concurrent misses of one key run one `load`; its value or error reaches every caller. A
    /// value that is not admitted (rejected, disabled cache, invalidated meanwhile) is still
    /// returned. A failed load is not cached.
    pub async fn get_or_load<F, Fut, E>(&self, key: K, load: F) -> Result<Cached<V>>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = std::result::Result<V, E>>,
        E: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        self.get_or_load_if(key, load, |_| true).await
    }

    /// [`ManagedCache::get_or_load`], but a loaded value for which `cacheable` is false is
    /// handed to this call and to the calls waiting on the same load, and never stored (a
    /// resolution carrying credentials, §8.1). It is not a weight rejection: nothing is counted
    /// against the ledger.
    pub async fn get_or_load_if<F, Fut, E>(
        &self,
        key: K,
        load: F,
        cacheable: impl FnOnce(&V) -> bool,
    ) -> Result<Cached<V>>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = std::result::Result<V, E>>,
        E: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let inner = &*self.inner;
        let counters = &inner.accounting.counters;
        // Taken before anything else: an invalidation after this point fences this call's load.
        let generation = inner.generation.load(SeqCst);
        if let Some(hit) = inner.lookup(&key) {
            counters.hits.increment();
            return Ok(hit);
        }
        CacheCounters::add(&counters.misses, 1);
        if !inner.enabled || inner.retired.load(SeqCst) {
            return inner.load_uncached(load).await;
        }
        let leader = loop {
            match inner.flights.join(&key) {
                Role::Leader(leader) => break leader,
                Role::Follower(channel) => {
                    if let Some(outcome) = flight::wait(channel).await {
                        return outcome;
                    }
                    // The leader was cancelled: start over, perhaps as the next leader.
                }
            }
        };
        // A previous flight may have stored the value between our miss and our lead.
        if let Some(hit) = inner.lookup(&key) {
            leader.complete(Ok(hit.clone()));
            return Ok(hit);
        }
        let outcome = match inner.timed_load(load).await {
            Ok(value) if !cacheable(&value) => Ok(Cached::new(value, NEVER)),
            Ok(value) => Ok(inner.admit(key, value, generation, || leader.is_fenced()).0),
            Err(error) => Err(error),
        };
        leader.complete(outcome.clone());
        outcome
    }

    /// Offers `value` for `key` as if it had just been loaded (the look-aside API): admitted
    /// through the ledger, replacing any value of `key`.
    pub fn insert(&self, key: K, value: V) -> Admission {
        let generation = self.inner.generation.load(SeqCst);
        self.inner.admit(key, value, generation, || false).1
    }

    /// Removes `key`; a load of `key` in flight no longer populates the cache (loads of other
    /// keys are not affected). Returns whether a value was removed.
    pub fn invalidate(&self, key: &K) -> bool {
        {
            let _fence = self.inner.fence.write();
            self.inner.flights.fence(key);
        }
        match self.inner.map.remove(key) {
            Some((_, value)) => {
                self.inner.release_invalidated(&value);
                true
            }
            None => false,
        }
    }

    /// Removes every value for which `predicate` holds; loads in flight no longer populate the
    /// cache. Returns how many values were removed.
    pub fn invalidate_if(&self, predicate: impl Fn(&K, &V) -> bool) -> u64 {
        self.inner.new_generation();
        self.inner.remove_where(predicate)
    }

    /// Removes every value whose key matches; loads of matching keys in flight no longer
    /// populate the cache, loads of other keys are not affected (REFRESH TABLE / DATABASE).
    /// Returns how many values were removed.
    pub fn invalidate_keys_if(&self, predicate: impl Fn(&K) -> bool) -> u64 {
        {
            let _fence = self.inner.fence.write();
            self.inner.flights.fence_if(&predicate);
        }
        self.inner.remove_where(|key, _| predicate(key))
    }

    /// Removes every value; loads in flight no longer populate the cache.
    pub fn invalidate_all(&self) -> u64 {
        self.invalidate_if(|_, _| true)
    }

    /// Takes the cache out of service for good (its catalog was altered or dropped): every value
    /// is released now, and neither the loads in flight nor any later call stores again. Clones
    /// held elsewhere keep working as a disabled cache, and the values callers hold stay valid.
    pub fn retire(&self) -> u64 {
        self.inner.retired.store(true, SeqCst);
        self.invalidate_all()
    }

    /// Whether [`ManagedCache::retire`] was called.
    pub fn is_retired(&self) -> bool {
        self.inner.retired.load(SeqCst)
    }

    /// Callers waiting now on the in-flight load of `key`, the loading caller excluded.
    pub fn waiters(&self, key: &K) -> usize {
        self.inner.flights.waiters(key)
    }

    /// The statistics of this cache instance.
    pub fn stats(&self) -> CacheStats {
        self.inner.stats()
    }

    /// The settings this cache was built with.
    pub fn config(&self) -> &CacheConfig {
        &self.inner.config
    }

    /// The cache's entry budget (its `used` is `ESTIMATED_WEIGHT`).
    pub fn budget(&self) -> &Arc<Budget> {
        &self.inner.accounting.budget
    }

    /// Values retained now.
    pub fn len(&self) -> usize {
        self.inner.map.len()
    }

    /// Whether no value is retained.
    pub fn is_empty(&self) -> bool {
        self.inner.map.is_empty()
    }

    /// Sum of the charges of the values retained now (equals the entry budget's `used` when no
    /// operation is in progress; exposed for invariant checks).
    pub fn resident_charge(&self) -> u64 {
        self.inner.map.iter().map(|(_, v)| v.charge()).sum()
    }
}

impl<K, V> Inner<K, V>
where
    K: Hash + Eq + Clone + EstimateSize + Send + Sync + 'static,
    V: EstimateSize + Send + Sync + 'static,
{
    /// The fresh value of `key`, if any; drops it if it expired. Counts nothing but evictions.
    #[inline]
    fn lookup<Q>(&self, key: &Q) -> Option<Cached<V>>
    where
        Q: Hash + Equivalent<K> + ?Sized,
    {
        let value = self.map.get(key)?;
        let deadline = value.deadline();
        if deadline != NEVER {
            let now = self.clock.now_nanos();
            if now >= deadline {
                self.expire(key, &value);
                return None;
            }
            if self.config.expiry == Expiry::AfterAccess {
                value.set_deadline(now.saturating_add(self.ttl_nanos));
            }
        }
        Some(value)
    }

    fn expire<Q>(&self, key: &Q, value: &Cached<V>)
    where
        Q: Hash + Equivalent<K> + ?Sized,
    {
        if let Some((_, removed)) = self.map.remove_if(key, |v| v.ptr_eq(value)) {
            self.accounting.budget.release(removed.take_charge());
            CacheCounters::add(&self.accounting.counters.evictions, 1);
        }
    }

    fn deadline_from(&self, now: u64) -> u64 {
        if self.ttl_nanos == NEVER {
            NEVER
        } else {
            now.saturating_add(self.ttl_nanos)
        }
    }

    async fn timed_load<F, Fut, E>(&self, load: F) -> Result<V>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = std::result::Result<V, E>>,
        E: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let counters = &self.accounting.counters;
        let started = self.clock.precise_nanos();
        let result = load().await;
        let elapsed = self.clock.precise_nanos().saturating_sub(started);
        CacheCounters::add(&counters.load_nanos, elapsed);
        let now = self.clock.wall_millis().max(1);
        match result {
            Ok(value) => {
                CacheCounters::add(&counters.load_successes, 1);
                counters.last_success_millis.store(now, SeqCst);
                Ok(value)
            }
            Err(error) => {
                CacheCounters::add(&counters.load_failures, 1);
                counters.last_failure_millis.store(now, SeqCst);
                let source: Box<dyn std::error::Error + Send + Sync> = error.into();
                *counters.last_error.lock() = Some(source.to_string());
                Err(Error::Load {
                    entry: Arc::clone(&self.config.entry_name),
                    source: Arc::from(source),
                })
            }
        }
    }

    async fn load_uncached<F, Fut, E>(&self, load: F) -> Result<Cached<V>>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = std::result::Result<V, E>>,
        E: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let value = self.timed_load(load).await?;
        Ok(Cached::new(value, NEVER))
    }

    /// Admission (§3) of a value loaded under `generation`; `fenced` says whether its own key
    /// was invalidated since the load started.
    fn admit(
        &self,
        key: K,
        value: V,
        generation: u64,
        fenced: impl Fn() -> bool,
    ) -> (Cached<V>, Admission) {
        let value = Cached::new(value, self.deadline_from(self.clock.now_nanos()));
        if !self.enabled {
            return (value, Admission::Disabled);
        }
        let budget = &self.accounting.budget;
        let charge = match charge_for(&key, &*value, budget, self.config.visit_budget) {
            Ok(charge) => charge,
            Err(rejection) => return self.rejected(value, rejection),
        };
        let _fence = self.fence.read();
        if self.generation.load(SeqCst) != generation || self.retired.load(SeqCst) || fenced() {
            return (value, Admission::Fenced);
        }
        match self.store(key, &value, charge) {
            Ok(()) => (value, Admission::Retained { charge }),
            Err(rejection) => self.rejected(value, rejection),
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

    /// Puts `value` in the map charged `charge` bytes. An existing value of `key` is replaced
    /// in place under a replacement reservation (`max(old, new)` until committed) when the
    /// ledger has room for it; otherwise it is let go and `value` stored as a new one.
    fn store(&self, key: K, value: &Cached<V>, charge: u64) -> std::result::Result<(), Rejection> {
        let budget = &self.accounting.budget;
        let scale = *self.scale.lock();
        let weight = scale.weight(charge);
        let heaviest = scale.max_weight(self.map.num_shards());
        if weight > heaviest {
            // quick_cache would drop it silently: a value that no shard of the map can hold.
            return Err(self.too_large(charge, heaviest));
        }
        value.set_weight(weight);
        // A new key goes straight to `insert`: `entry` on a missing key would turn its ghost
        // (quick_cache's memory of a recent eviction, which readmits it as hot) into a
        // placeholder and lose it.
        if self.map.peek(&key).is_none() {
            return self.store_new(key, value, charge);
        }
        let entry = self.map.entry(&key, None, |_, existing| {
            match budget.try_reserve_replacement(existing.charge(), charge) {
                Ok(replacement) => {
                    value.set_charge(charge);
                    let old = std::mem::replace(existing, value.clone());
                    old.take_charge();
                    replacement.commit();
                    EntryAction::Retain(())
                }
                Err(_) => EntryAction::Remove,
            }
        });
        match entry {
            EntryResult::Retained(()) => {
                self.stored(value);
                return Ok(());
            }
            // The placeholder goes: `insert` below is what evicts to make room.
            EntryResult::Vacant(placeholder) => drop(placeholder),
            EntryResult::Removed(_, old) | EntryResult::Replaced(_, old) => {
                // No room for both at once: the old value goes first, then `value` competes
                // for room as a new one.
                budget.release(old.take_charge());
            }
            EntryResult::Timeout => return Ok(()),
        }
        self.store_new(key, value, charge)
    }

    /// Inserts `value` first, so that quick_cache's policy evicts colder values of this cache
    /// to make room for it (the eviction hook returns their bytes), then reserves its charge.
    /// Until the reservation it is resident uncharged (charge 0), which keeps the ledger equal
    /// to the sum of the residents' charges; if a shared level (group, catalog, node) still
    /// has no room, because other caches hold it, the value leaves again and the refusal files
    /// a reclamation request.
    fn store_new(
        &self,
        key: K,
        value: &Cached<V>,
        charge: u64,
    ) -> std::result::Result<(), Rejection> {
        let budget = &self.accounting.budget;
        // quick_cache evicts before it links a new key (a value stored through a placeholder
        // would be linked first, and could be its own victim).
        self.map.insert(key.clone(), value.clone());
        match budget.try_reserve(charge) {
            Ok(()) => {
                value.set_charge(charge);
                if !self.holds(&key, value) {
                    // Evicted or replaced before its charge was set: whoever removed it took
                    // nothing, so the charge is released here (the swap makes it exactly once).
                    budget.release(value.take_charge());
                    return Ok(());
                }
                self.stored(value);
                Ok(())
            }
            Err(rejection) => {
                self.map.remove_if(&key, |v| v.ptr_eq(value));
                Err(rejection)
            }
        }
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
            reason: metacache_ledger::RejectReason::EntryTooLarge,
            level,
            used: budget.ancestor(level).map_or(0, Budget::used),
            limit,
            requested: charge,
        }
    }

    fn new_generation(&self) {
        let _fence = self.fence.write();
        self.generation.fetch_add(1, SeqCst);
    }

    /// Removes and releases every value for which `predicate` holds, counting invalidations.
    fn remove_where(&self, predicate: impl Fn(&K, &V) -> bool) -> u64 {
        let removed = AtomicU64::new(0);
        self.map.retain(|key, value| {
            if predicate(key, value) {
                self.release_invalidated(value);
                removed.fetch_add(1, SeqCst);
                false
            } else {
                true
            }
        });
        removed.into_inner()
    }

    fn release_invalidated(&self, value: &Cached<V>) {
        self.accounting.budget.release(value.take_charge());
        CacheCounters::add(&self.accounting.counters.invalidations, 1);
    }

    fn stats(&self) -> CacheStats {
        let c = &self.accounting.counters;
        let hits = c.hits.get();
        let misses = CacheCounters::read(&c.misses);
        let millis = |m: &AtomicU64| Some(m.load(SeqCst)).filter(|&m| m > 0);
        let load_nanos = CacheCounters::read(&c.load_nanos);
        CacheStats {
            entry_name: self.config.entry_name.to_string(),
            effective_enabled: self.enabled,
            config_enabled: self.config.enabled,
            auto_refresh: self.config.auto_refresh,
            ttl_second: self.config.ttl_second(),
            capacity: self.config.capacity,
            estimated_size: self.map.len() as u64,
            request_count: hits + misses,
            hit_count: hits,
            miss_count: misses,
            load_success_count: CacheCounters::read(&c.load_successes),
            load_failure_count: CacheCounters::read(&c.load_failures),
            total_load_time_ms: load_nanos / 1_000_000,
            total_load_time_nanos: load_nanos,
            eviction_count: CacheCounters::read(&c.evictions),
            invalidate_count: CacheCounters::read(&c.invalidations),
            last_load_success_millis: millis(&c.last_success_millis),
            last_load_failure_millis: millis(&c.last_failure_millis),
            last_error: c.last_error.lock().clone(),
            max_weight: self
                .accounting
                .budget
                .effective_limit()
                .map_or(-1, |l| i64::try_from(l).unwrap_or(i64::MAX)),
            estimated_weight: self.accounting.budget.used(),
            weight_reject_count: CacheCounters::read(&c.weight_rejects),
            last_weight_reject_reason: c.last_reject_reason.lock().clone(),
        }
    }
}

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
            CacheCounters::add(&self.accounting.counters.evictions, 1);
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
        freed
    }

    fn rescale(&self) {
        let scale = Scale::new(
            self.accounting.budget.effective_limit(),
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

/// A map of `scale`: quick_cache's options for its capacity, shards and ghost history.
fn new_map<K: Hash + Eq + Clone, V>(scale: &Scale, count: u64, hook: EvictionHook) -> Map<K, V> {
    let options = OptionsBuilder::new()
        .shards(scale.shards())
        .estimated_items_capacity(scale.estimated_items(count))
        .weight_capacity(scale.capacity)
        .build();
    match options {
        Ok(options) => {
            Cache::with_options(options, SlotWeighter, DefaultHashBuilder::default(), hook)
        }
        // Only invalid hot/ghost shares fail to build, and none are set here.
        Err(_) => Cache::with(
            scale.estimated_items(count),
            scale.capacity,
            SlotWeighter,
            DefaultHashBuilder::default(),
            hook,
        ),
    }
}

impl<K: Hash + Eq + Clone, V> Drop for Inner<K, V> {
    fn drop(&mut self) {
        let budget = &self.accounting.budget;
        self.map.retain(|_, value| {
            budget.release(value.take_charge());
            false
        });
    }
}
