//! Leases for look-aside callers (memcache's leases, Nishtala et al., NSDI 2013; SPEC §8.3):
//! single flight across processes and no stale sets.
//!
//! - A miss hands a lease (a token) to one caller per key; the others get none and may wait for
//!   the value the holder puts ([`ManagedCache::lease_wait`]).
//! - A hit on a value due for refresh (auto-refresh entries) hands a refresh lease to one caller
//!   per value; that caller reloads and puts with it.
//! - A put with a lease stores only while the lease is valid: an invalidation of its key (or of
//!   everything) since it was handed out, a newer lease after it expired, or an unknown token,
//!   and the put is refused as [`Admission::Fenced`] — the stale set a late writer would make.
//!
//! # Invariants
//! - At most one valid lease per key; the table holds at most the cache's capacity of leases.
//! - A lease expires `lease_timeout` after it was handed out (node key
//!   `external_meta_cache_lease_timeout_ms`), so a holder that crashed blocks its key no longer.
//! - Invalidation removes the leases it covers under the fence's write side, so a put that
//!   checks its lease under the read side never stores across an invalidation.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, RandomState};
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;

use metacache_estimate::EstimateSize;
use tokio::sync::watch;

use super::{Inner, ManagedCache};
use crate::counters::CacheCounters;
use crate::{Admission, Cached};

/// A lease handed out, as the caller sees it.
pub type LeaseToken = u64;

/// What a leased lookup found.
pub enum LeaseLookup<V> {
    /// A value; with a refresh lease when it is due for refresh and this caller is the one to
    /// reload it.
    Hit(Cached<V>, Option<LeaseToken>),
    /// No value, and this caller holds the key's lease: it should load and put with it.
    Leased(LeaseToken),
    /// No value; another caller holds the lease (or no lease could be handed out): the value it
    /// puts can be awaited with [`ManagedCache::lease_wait`].
    Held(Option<LeaseWaiter<V>>),
}

/// A caller waiting for the value of a lease's holder.
pub struct LeaseWaiter<V>(watch::Receiver<Option<Cached<V>>>);

pub(crate) struct Lease<V> {
    token: LeaseToken,
    /// A refresh lease (handed out with a due value), counted with the refreshes.
    refresh: bool,
    generation: u64,
    expires: u64,
    /// Callers waiting for the value put with this lease.
    sender: watch::Sender<Option<Cached<V>>>,
}

/// The leases of one cache.
pub(crate) struct Leases<K, V> {
    table: parking_lot::Mutex<HashMap<K, Lease<V>>>,
}

impl<K: Hash + Eq + Clone, V> Leases<K, V> {
    pub(crate) fn new() -> Self {
        Self {
            table: parking_lot::Mutex::new(HashMap::new()),
        }
    }

    /// Removes the lease of `key`: its holder's put will be refused, its waiters wake up empty.
    pub(crate) fn fence(&self, key: &K) {
        self.table.lock().remove(key);
    }

    /// [`Leases::fence`] for every key that matches.
    pub(crate) fn fence_if(&self, predicate: impl Fn(&K) -> bool) {
        self.table.lock().retain(|key, _| !predicate(key));
    }

    /// Leases handed out and not yet used, fenced or replaced.
    pub(crate) fn len(&self) -> usize {
        self.table.lock().len()
    }
}

/// A token nobody can guess from the ones before it.
fn new_token() -> LeaseToken {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    static KEYS: LazyLock<RandomState> = LazyLock::new(RandomState::new);
    KEYS.hash_one(NEXT.fetch_add(1, SeqCst)) | 1
}

/// The default of `external_meta_cache_lease_timeout_ms`.
pub const DEFAULT_LEASE_TIMEOUT: Duration = Duration::from_secs(10);

impl<K, V> ManagedCache<K, V>
where
    K: Hash + Eq + Clone + EstimateSize + Send + Sync + 'static,
    V: EstimateSize + Send + Sync + 'static,
{
    /// [`ManagedCache::get`] for a look-aside caller, with leases: counts a hit or a miss.
    pub fn lease_get(&self, key: &K) -> LeaseLookup<V> {
        let inner = &*self.inner;
        if let Some(hit) = inner.lookup(key) {
            let lease = self.refresh_lease(key, &hit);
            return LeaseLookup::Hit(hit, lease);
        }
        CacheCounters::add(&inner.accounting.counters.misses, 1);
        inner.advise_miss(key);
        if !inner.enabled || inner.retired.load(SeqCst) {
            return LeaseLookup::Held(None);
        }
        let now = inner.clock.now_nanos();
        let mut table = inner.leases.table.lock();
        if let Some(lease) = table.get(key)
            && lease.expires > now
        {
            return LeaseLookup::Held(Some(LeaseWaiter(lease.sender.subscribe())));
        }
        if table.len() as u64 >= inner.config.capacity && !table.contains_key(key) {
            table.retain(|_, l| l.expires > now);
            if table.len() as u64 >= inner.config.capacity {
                return LeaseLookup::Held(None);
            }
        }
        let token = new_token();
        table.insert(key.clone(), inner.new_lease(token, now, false));
        LeaseLookup::Leased(token)
    }

    /// The refresh lease of a hit due for refresh, to one caller per value.
    fn refresh_lease(&self, key: &K, hit: &Cached<V>) -> Option<LeaseToken> {
        let inner = &*self.inner;
        if !inner.is_due(hit) {
            return None;
        }
        let now = inner.clock.now_nanos();
        let mut table = inner.leases.table.lock();
        if table.contains_key(key) || !hit.try_start_refresh() {
            return None;
        }
        let token = new_token();
        table.insert(key.clone(), inner.new_lease(token, now, true));
        crate::refresh::RefreshCounters::bump(&inner.refresh.started);
        Some(token)
    }

    /// Offers `value` for `key` as the holder of `lease`: stored (through admission, like any
    /// value) only while the lease is valid, else refused as [`Admission::Fenced`]. Callers
    /// waiting on the lease get the value the holder put, kept or not (unless it was fenced:
    /// they wake up empty).
    pub fn lease_put(&self, key: K, value: V, lease: LeaseToken) -> Admission {
        let inner = &*self.inner;
        let now = inner.clock.now_nanos();
        let generation = match inner.leases.table.lock().get(&key) {
            Some(l) if l.token == lease && l.expires > now => l.generation,
            _ => return Admission::Fenced,
        };
        // Checked again under the fence's read side, where admission stores: an invalidation
        // removes the lease under the write side, so it is either seen here or after the store.
        let valid = || {
            inner
                .leases
                .table
                .lock()
                .get(&key)
                .is_some_and(|l| l.token == lease)
        };
        let (cached, admission) = inner.admit(key.clone(), value, generation, || !valid());
        let taken = {
            let mut table = inner.leases.table.lock();
            match table.get(&key) {
                Some(l) if l.token == lease => table.remove(&key),
                _ => None,
            }
        };
        if let Some(taken) = taken
            && !matches!(admission, Admission::Fenced)
        {
            if taken.refresh && matches!(admission, Admission::Retained { .. }) {
                crate::refresh::RefreshCounters::bump(&inner.refresh.succeeded);
            }
            taken.sender.send_replace(Some(cached));
        }
        admission
    }

    /// Waits up to `limit` for the value the holder of the lease `waiter` came from puts;
    /// `None` if it put nothing in time (or its lease was fenced or expired).
    pub async fn lease_wait(&self, waiter: LeaseWaiter<V>, limit: Duration) -> Option<Cached<V>> {
        let mut channel = waiter.0;
        match tokio::time::timeout(limit, channel.wait_for(Option::is_some)).await {
            Ok(Ok(value)) => value.clone(),
            _ => None,
        }
    }

    /// Leases handed out and still pending.
    pub fn pending_leases(&self) -> usize {
        self.inner.leases.len()
    }
}

impl<K, V> Inner<K, V>
where
    K: Hash + Eq + Clone + EstimateSize + Send + Sync + 'static,
    V: EstimateSize + Send + Sync + 'static,
{
    fn new_lease(&self, token: LeaseToken, now: u64, refresh: bool) -> Lease<V> {
        Lease {
            token,
            refresh,
            generation: self.generation.load(SeqCst),
            expires: now.saturating_add(self.lease_timeout.load(SeqCst)),
            sender: watch::channel(None).0,
        }
    }
}
