//! A managed cache's accounting: its entry budget and counters, and the eviction hook inside its
//! map that releases what quick_cache evicts (or, for a frequency contest's hot victims, hands
//! their charges over: `Displaced`).
//!
//! Invariant: whoever takes a value's charge (`Cached::take_charge`, once) releases it; a value
//! evicted is counted once, as `Size` or, while reclamation runs, as `Reclaimed`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};

use metacache_ledger::Budget;
use quick_cache::sync::Cache;
use quick_cache::{DefaultHashBuilder, Lifecycle};

use crate::counters::CacheCounters;
use crate::frequency::Displaced;
use crate::scale::SlotWeighter;
use crate::{Cached, EvictionCause};

/// The budget and counters, shared with the eviction hook that lives inside the map.
pub(super) struct Accounting {
    pub(super) budget: Arc<Budget>,
    pub(super) counters: CacheCounters,
    /// Bytes released by capacity evictions, for reclamation to measure its progress.
    pub(super) evicted_bytes: AtomicU64,
    /// Reclamation rounds under way: evictions meanwhile are counted as `reclaimed` (one that
    /// the cache's own bounds caused at that very moment is counted there too).
    pub(super) reclaiming: AtomicUsize,
}

impl Accounting {
    pub(super) fn release_evicted(&self, charge: u64) {
        self.budget.release(charge);
        self.count_evicted(charge);
    }

    /// Counts the eviction of a value whose `charge` was released when it left the map (a
    /// contest's victim, [`Displaced`]).
    pub(super) fn count_evicted(&self, charge: u64) {
        let cause = if self.reclaiming.load(SeqCst) > 0 {
            EvictionCause::Reclaimed
        } else {
            EvictionCause::Size
        };
        self.counters.evicted(cause);
        CacheCounters::add(&self.evicted_bytes, charge);
    }
}

/// Releases the charge of every value quick_cache evicts (capacity or reclamation).
pub(super) struct EvictionHook(pub(super) Arc<Accounting>);

impl Clone for EvictionHook {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<K, V> Lifecycle<K, Cached<V>> for EvictionHook {
    type RequestState = Displaced<K, V>;

    fn on_evict(&self, _: &mut Displaced<K, V>, _key: K, value: Cached<V>) {
        self.0.release_evicted(value.take_charge());
    }

    /// A hot value (or one that won a contest before) displaced by an insertion that contests
    /// it is held back until the contest is decided ([`crate::frequency`]), its charge released
    /// now; any other is released now as an eviction.
    fn on_evict_hot(&self, state: &mut Displaced<K, V>, key: K, value: Cached<V>) {
        match state.hold(key, value, true) {
            Ok(charge) => self.0.budget.release(charge),
            Err(value) => self.0.release_evicted(value.take_charge()),
        }
    }

    fn on_evict_cold(&self, state: &mut Displaced<K, V>, key: K, value: Cached<V>) {
        match state.hold(key, value, false) {
            Ok(charge) => self.0.budget.release(charge),
            Err(value) => self.0.release_evicted(value.take_charge()),
        }
    }
}

pub(super) type Map<K, V> = Cache<K, Cached<V>, SlotWeighter, DefaultHashBuilder, EvictionHook>;
