//! A retained value with what the cache knows about it: the bytes it is charged and when it
//! expires.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed, Ordering::SeqCst};

/// Deadline of values that never expire.
pub(crate) const NEVER: u64 = u64::MAX;

pub(crate) struct Slot<V> {
    value: V,
    /// Bytes reserved in the ledger for this value while the cache holds it; taken (set to 0)
    /// exactly once, by whoever removes it from the cache.
    charge: AtomicU64,
    /// Monotonic nanoseconds at which the value expires, [`NEVER`] if it does not.
    deadline: AtomicU64,
    /// What the value weighs in its cache's map (see `scale.rs`): set before it is stored and
    /// changed only under its shard's lock, as quick_cache re-reads it on every eviction.
    weight: AtomicU64,
    /// Whether the value was put back after a newcomer lost a frequency contest to it: it is
    /// contested again when it is next displaced, from whichever ring (`frequency.rs`).
    defended: AtomicBool,
    /// Whether a background refresh of this value was started (refresh-ahead: one per value).
    refreshing: AtomicBool,
    /// The quota advisor's hash of the value's key ([`NO_HASH`] without an advisor) and
    /// whether the key is in its sample. A hit only reads them (a hit writes nothing into the
    /// value but its reference count): it reaches the advisor for a sampled key and for one in
    /// [`HEAVY_REPORT`] hits of the thread (`counters::heavy_tick`).
    hash: AtomicU64,
    sampled: AtomicBool,
}

/// One hit in this many reports its value to the advisor's table of heavy keys, standing for
/// this many hits.
pub(crate) const HEAVY_REPORT: u64 = 64;

/// [`Slot::hash`] of a value of a cache without an advisor.
pub(crate) const NO_HASH: u64 = u64::MAX;

/// A value handed out by a managed cache. Cloning is one reference-count increment; the value
/// stays alive for as long as a caller holds it, even after the cache has let go of it.
pub struct Cached<V>(Arc<Slot<V>>);

impl<V> Cached<V> {
    pub(crate) fn new(value: V, deadline: u64) -> Self {
        Self(Arc::new(Slot {
            value,
            charge: AtomicU64::new(0),
            deadline: AtomicU64::new(deadline),
            weight: AtomicU64::new(1),
            defended: AtomicBool::new(false),
            refreshing: AtomicBool::new(false),
            hash: AtomicU64::new(NO_HASH),
            sampled: AtomicBool::new(false),
        }))
    }

    /// A value that no cache holds (a cache a rule leaves out, a load that bypasses caching):
    /// charged nothing, never expiring, with the same API as a cached one.
    pub fn detached(value: V) -> Self {
        Self::new(value, NEVER)
    }

    /// Bytes this value is charged in the ledger while cached (0 if it was not retained, or has
    /// been evicted since).
    pub fn charge(&self) -> u64 {
        self.0.charge.load(SeqCst)
    }

    pub(crate) fn set_charge(&self, bytes: u64) {
        self.0.charge.store(bytes, SeqCst);
    }

    /// Takes the charge for release; only the first caller gets it.
    pub(crate) fn take_charge(&self) -> u64 {
        self.0.charge.swap(0, SeqCst)
    }

    #[inline]
    pub(crate) fn weight(&self) -> u64 {
        self.0.weight.load(Relaxed)
    }

    pub(crate) fn set_weight(&self, weight: u64) {
        self.0.weight.store(weight, Relaxed);
    }

    #[inline]
    pub(crate) fn deadline(&self) -> u64 {
        self.0.deadline.load(Relaxed)
    }

    pub(crate) fn set_deadline(&self, deadline: u64) {
        self.0.deadline.store(deadline, Relaxed);
    }

    #[inline]
    pub(crate) fn defended(&self) -> bool {
        self.0.defended.load(Relaxed)
    }

    pub(crate) fn set_defended(&self) {
        self.0.defended.store(true, Relaxed);
    }

    /// The advisor's hash of the key, [`NO_HASH`] if none.
    pub(crate) fn advisor_hash(&self) -> u64 {
        self.0.hash.load(Relaxed)
    }

    /// Whether the advisor samples the key.
    #[inline]
    pub(crate) fn sampled(&self) -> bool {
        self.0.sampled.load(Relaxed)
    }

    pub(crate) fn set_advisor_hash(&self, hash: u64, sampled: bool) {
        self.0.hash.store(hash, Relaxed);
        self.0.sampled.store(sampled, Relaxed);
    }

    /// The key left the advisor's sample.
    pub(crate) fn set_unsampled(&self) {
        self.0.sampled.store(false, Relaxed);
    }

    /// The advisor's sample grew to take in the key (its rate rose).
    pub(crate) fn set_sampled(&self) {
        self.0.sampled.store(true, Relaxed);
    }

    /// Claims this value's one background refresh; `false` if one was claimed already.
    pub(crate) fn try_start_refresh(&self) -> bool {
        !self.0.refreshing.swap(true, SeqCst)
    }

    /// Allows another refresh of this value (its deadline was renewed, or none could start).
    pub(crate) fn end_refresh(&self) {
        self.0.refreshing.store(false, SeqCst);
    }

    /// Whether both handles are the same cached value.
    pub fn ptr_eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl<V> Clone for Cached<V> {
    #[inline]
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<V> Deref for Cached<V> {
    type Target = V;

    #[inline]
    fn deref(&self) -> &V {
        &self.0.value
    }
}

impl<V: fmt::Debug> fmt::Debug for Cached<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.value.fmt(f)
    }
}
