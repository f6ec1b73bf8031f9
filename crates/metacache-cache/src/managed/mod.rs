//! One managed cache: a `quick_cache` of [`Cached`] values, with TTL, single-flight loads,
//! admission through the ledger, generation-fenced invalidation and the statistics counters.
//!
//! # Invariants
//! - Every value resident in the map holds exactly its `charge` in the cache's entry budget;
//!   whoever removes it from the map (eviction hook, expiry, invalidation, replacement, drop)
//!   takes the charge and releases it — the hot values a newcomer displaced too, though they
//!   are only held out of the map until its frequency contest decides, and reserve their
//!   charge again if they are put back (`store.rs`). So the entry budget's `used` is the sum of
//!   the charges of the resident values, at every moment outside those few instructions; a
//!   value between its insertion and its reservation is resident uncharged.
//! - Under pressure (once the frequency history exists) stores take `storing` alone from
//!   insertion to reservation (a replacement too), so the policy decides each newcomer as it
//!   would one at a time; stores of a cache not under pressure yet share it, and the first store
//!   alone waits for them. Hits, invalidations and reclamation do not wait for it.
//! - A load that started before an invalidation never populates the map: the generation is
//!   checked and the value stored under the read side of `fence`, while invalidation bumps the
//!   generation under its write side and sweeps afterwards.
//! - The hit path takes no lock of ours: one map read, one deadline check (a coarse clock read
//!   only for values that expire), one striped counter bump. With `auto-refresh`, one more
//!   comparison; the read that claims a due value's refresh (once per value) reads the stored
//!   refresher under its lock and spawns the refresh (`refresh.rs`). Leases (`lease.rs`) live
//!   in a table of their own, locked only by misses and puts of the look-aside API.

mod accounting;
mod advise;
mod invalidate;
mod lease;
pub use lease::{DEFAULT_LEASE_TIMEOUT, LeaseLookup, LeaseToken, LeaseWaiter};
mod reclaim;
mod refresh;
mod store;

use std::future::Future;
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Weak};

use metacache_estimate::EstimateSize;
use metacache_ledger::{Budget, Level};
use parking_lot::RwLock;
use quick_cache::sync::Cache;
use quick_cache::{DefaultHashBuilder, Equivalent, OptionsBuilder};

use crate::admission::Admission;
use crate::advice::{Advisor, Policy};
use crate::contain::contained;
use crate::counters::{CacheCounters, heavy_tick};
use crate::flight::{self, Flights, Role};
use crate::frequency::FrequencyAdmission;
use crate::governor::NodeShare;
use crate::scale::{Scale, SlotWeighter};
use crate::slot::NEVER;
use crate::{
    CacheConfig, CacheStats, Cached, Clock, Error, EvictionCause, Expiry, MemoryGovernor, Result,
};
use accounting::{Accounting, EvictionHook, Map};

/// What became of a value offered to the map without a weight rejection.
enum Stored {
    Retained,
    /// Refused by frequency (it would have displaced values asked for at least as often), or
    /// by quick_cache's policy (its own insertion evicted it).
    Declined,
    /// Stored, but evicted or replaced by a concurrent operation before it was charged.
    Superseded,
}

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
    /// Access history for admission under pressure.
    frequency: FrequencyAdmission,
    /// Held alone (written) by a store while the cache is under pressure (once the history
    /// exists), from its insertion (or replacement) to its reservation, shared (read) before:
    /// two stores' contests never interleave, a replacement never meets another store's
    /// newcomer before it is charged, and no store that began before the history overlaps one
    /// after (`store`).
    storing: parking_lot::RwLock<()>,
    /// What the node leaves the values of its caches (the map's capacity follows it).
    share: Arc<NodeShare>,
    /// Refresh-ahead: how long before its hard TTL a value is due (0: refresh-ahead is off),
    /// the stored refresher, the node's bound and this cache's counters.
    margin_nanos: u64,
    refresher: RwLock<Option<crate::Refresher<K, V>>>,
    limiter: Arc<crate::RefreshLimiter>,
    refresh: crate::refresh::RefreshCounters,
    /// Look-aside leases, and how long one lasts (the node's `external_meta_cache_lease_timeout_ms`).
    leases: lease::Leases<K, V>,
    lease_timeout: Arc<AtomicU64>,
    /// The quota advisor (`crate::advice`), when the cache retains values and it is on.
    advisor: Option<Advisor>,
    /// The keys of the sampled values loaded, for predicate invalidations (empty without an
    /// advisor).
    advised_keys: advise::AdvisedKeys<K>,
    /// The advisor's threshold up to which the held values are marked sampled.
    marked: advise::Marked,
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
            reclaiming: AtomicUsize::new(0),
        });
        let margin_nanos = match config.ttl {
            Some(ttl) if config.auto_refresh && config.expiry == Expiry::AfterWrite => {
                u64::try_from(crate::refresh::margin(ttl).as_nanos()).unwrap_or(0)
            }
            _ => 0,
        };
        let advisor = config
            .advisor
            .filter(|_| config.effectively_enabled())
            .map(|options| {
                let policy = Policy {
                    count_capacity: config.capacity,
                    ttl_nanos: config.ttl.map_or(NEVER, crate::clock::nanos),
                    after_access: config.expiry == Expiry::AfterAccess,
                    margin_nanos,
                };
                // Charged under the node's advisors level, not the cache's catalog: the map
                // sizes itself by the catalog's and entry's limits, and bytes the advisor held
                // under them would leave the map believing in room the ledger refuses (of the
                // node's limit, the map leaves the advisors' share: `NodeShare`).
                let name = format!("{}#advisor", config.entry_name);
                let budget = governor.advisors_budget().child(Level::Entry, name, None);
                Advisor::new(
                    policy,
                    options,
                    budget,
                    governor.clock().now_nanos(),
                    governor.advisor_half_life(),
                )
            });
        if advisor.is_some() {
            governor.start_advising();
        }
        let share = Arc::clone(governor.share());
        let scale = Scale::new(share.values_limit(&accounting.budget), config.capacity);
        let map = new_map(
            &scale,
            config.capacity,
            EvictionHook(Arc::clone(&accounting)),
        );
        let sample_keys = advisor
            .as_ref()
            .and(config.advisor)
            .map_or(0, |o| o.sample_keys);
        let advised_keys = advise::AdvisedKeys::new(sample_keys);
        let inner = Arc::new(Inner {
            advisor,
            advised_keys,
            marked: advise::Marked::default(),
            margin_nanos,
            refresher: RwLock::new(None),
            limiter: Arc::clone(governor.refresh_limiter()),
            refresh: crate::refresh::RefreshCounters::default(),
            leases: lease::Leases::new(),
            lease_timeout: Arc::clone(governor.lease_timeout()),
            enabled: config.effectively_enabled(),
            ttl_nanos: config.ttl.map_or(NEVER, crate::clock::nanos),
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
            frequency: FrequencyAdmission::default(),
            storing: parking_lot::RwLock::new(()),
            share,
        });
        let weak: Weak<Inner<K, V>> = Arc::downgrade(&inner);
        governor.register(weak);
        Self { inner }
    }

    /// The cached value of `key`, counting a hit or a miss; `None` on a miss.
    #[inline(always)]
    pub fn get<Q>(&self, key: &Q) -> Option<Cached<V>>
    where
        Q: Hash + Equivalent<K> + ?Sized,
    {
        let found = self.inner.lookup(key);
        if found.is_none() {
            CacheCounters::add(&self.inner.accounting.counters.misses, 1);
            self.inner.advise_miss(key);
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
            if inner.margin_nanos != 0 {
                self.after_hit(&key, &hit);
            }
            return Ok(hit);
        }
        CacheCounters::add(&counters.misses, 1);
        inner.advise_miss(&key);
        if !inner.enabled || inner.retired.load(SeqCst) {
            return inner.load_uncached(load).await;
        }
        let leader = loop {
            match inner.flights.join(&key) {
                Role::Leader(leader) => break leader,
                Role::Follower(channel, refresh) => {
                    if let Some(outcome) = flight::wait(channel).await {
                        if refresh && outcome.is_ok() {
                            crate::refresh::RefreshCounters::bump(&inner.refresh.saved);
                        }
                        return outcome;
                    }
                    // The leader was cancelled: start over, perhaps as the next leader.
                }
            }
        };
        // A previous flight may have stored the value between our miss and our lead.
        if let Some(hit) = inner.find(&key) {
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

    /// Takes the cache out of service for good (its catalog was altered or dropped): every value
    /// is released now, and neither the loads in flight nor any later call stores again. Clones
    /// held elsewhere keep working as a disabled cache, and the values callers hold stay valid.
    pub fn retire(&self) -> u64 {
        self.inner.retired.store(true, SeqCst);
        if let Some(advisor) = &self.inner.advisor {
            advisor.retire();
        }
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

    /// Bytes of the access history kept for admission under pressure (0 until the cache first
    /// had to choose between a newcomer and hot values; then a fixed table, at most 64 bytes
    /// per resident at that moment).
    pub fn history_bytes(&self) -> usize {
        self.inner.frequency.bytes()
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
    /// The fresh value of `key`, if any, recording the access in the frequency history; drops
    /// the value if it expired. Counts nothing but evictions. Always inlined: as a call of its
    /// own it would cost the hit path a fifth more instructions (callgrind).
    #[inline(always)]
    fn lookup<Q>(&self, key: &Q) -> Option<Cached<V>>
    where
        Q: Hash + Equivalent<K> + ?Sized,
    {
        let found = self.find(key);
        if let Some(value) = &found {
            self.frequency.record(key);
            let count = self.accounting.counters.hits.increment();
            if value.sampled() | heavy_tick(count) {
                self.advise_hit(value, count);
            }
        }
        found
    }

    /// [`Inner::lookup`] without recording an access (a second look by the same caller).
    #[inline(always)]
    fn find<Q>(&self, key: &Q) -> Option<Cached<V>>
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
            self.accounting.counters.evicted(EvictionCause::Expired);
        }
    }

    fn deadline_from(&self, now: u64) -> u64 {
        if self.ttl_nanos == NEVER {
            NEVER
        } else {
            now.saturating_add(self.ttl_nanos)
        }
    }

    async fn timed_load<T, F, Fut, E>(&self, load: F) -> Result<T>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = std::result::Result<T, E>>,
        E: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let counters = &self.accounting.counters;
        let started = self.clock.precise_nanos();
        let result = contained(load).await;
        let elapsed = self.clock.precise_nanos().saturating_sub(started);
        CacheCounters::add(&counters.load_nanos, elapsed);
        counters.load_times.record(elapsed);
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
                let source = error;
                *counters.last_error.lock() =
                    Some(crate::redact::redact(&source.to_string()).into_owned());
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

    fn stats(&self) -> CacheStats {
        let c = &self.accounting.counters;
        let hits = c.hits.get();
        let misses = CacheCounters::read(&c.misses);
        let millis = |m: &AtomicU64| Some(m.load(SeqCst)).filter(|&m| m > 0);
        let load_nanos = CacheCounters::read(&c.load_nanos);
        let evictions = CacheCounters::read_all(&c.evictions);
        let rejects = CacheCounters::read_all(&c.weight_rejects);
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
            eviction_count: evictions.iter().sum(),
            evictions_by_cause: evictions,
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
            weight_reject_count: rejects.iter().sum(),
            weight_rejects_by_reason: rejects,
            load_times: c.load_times.snapshot(),
            last_weight_reject_reason: c.last_reject_reason.lock().clone(),
            refresh: self.refresh.snapshot(),
        }
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
