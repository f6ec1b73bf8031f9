//! Refresh-ahead (SPEC §8.3): what a cache needs to reload a value before it expires without a
//! caller — its stored [`Refresher`], the node-wide bound on background refreshes
//! ([`RefreshLimiter`]) and the counters that say what refreshing saved.
//!
//! The rules, as `ManagedCache` applies them (module `managed::refresh`):
//! - With hard TTL `T`, a value is *due* from `T − min(10 % of T, 30 s)` after its load.
//! - A read of a due value serves it and starts at most one background refresh per cached
//!   value (a value replaced by a refresh is a new value, so "per key generation").
//! - A refresh over the node-wide bound is skipped (counted), never queued.
//! - At hard TTL a caller joins the refresh in flight instead of loading again (a load saved).
//! - A refresh whose source says "unchanged" ([`Refreshed::Unchanged`]) renews the deadline of
//!   the value it was given without reloading it.
//! - A failed refresh changes nothing (the old value serves until its hard TTL; callers then
//!   load in the foreground); a refresh that started before an invalidation never stores.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::time::Duration;

use crate::Cached;

/// What a refresh found.
pub enum Refreshed<V> {
    /// A new value, to replace the old one.
    Changed(V),
    /// The source's cheapest change check says the old value is still current: its deadline is
    /// renewed, nothing is reloaded.
    Unchanged,
}

/// An error of a refresh, as of any load.
pub type RefreshError = Box<dyn std::error::Error + Send + Sync>;
/// The future a [`Refresher`] returns.
pub type RefreshFuture<V> =
    Pin<Box<dyn Future<Output = Result<Refreshed<V>, RefreshError>> + Send + 'static>>;
/// Reloads the value of a key without a caller: given the key and the value cached now, the
/// new value or [`Refreshed::Unchanged`]. Registered once per cache by its source.
pub type Refresher<K, V> = Arc<dyn Fn(K, Cached<V>) -> RefreshFuture<V> + Send + Sync>;

/// Builds a [`Refresher`] from an async closure.
pub fn refresher<K, V, F, Fut>(f: F) -> Refresher<K, V>
where
    F: Fn(K, Cached<V>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Refreshed<V>, RefreshError>> + Send + 'static,
{
    Arc::new(move |key, old| Box::pin(f(key, old)))
}

/// The longest refresh-ahead margin: a value is due 30 s before its hard TTL at most.
pub const MAX_MARGIN: Duration = Duration::from_secs(30);

/// How long before its hard TTL a value is due for refresh: `min(10 % of ttl, 30 s)`.
pub fn margin(ttl: Duration) -> Duration {
    (ttl / 10).min(MAX_MARGIN)
}

/// The default of `external_meta_cache_refresh_max_concurrency` (Trino's refresh pool).
pub const DEFAULT_MAX_CONCURRENCY: usize = 10;

/// The node-wide bound on background refreshes running at once.
#[derive(Debug)]
pub struct RefreshLimiter {
    max: AtomicUsize,
    running: AtomicUsize,
}

impl Default for RefreshLimiter {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_CONCURRENCY)
    }
}

impl RefreshLimiter {
    /// A bound of `max` refreshes at once (`0`: none run).
    pub fn new(max: usize) -> Self {
        Self {
            max: AtomicUsize::new(max),
            running: AtomicUsize::new(0),
        }
    }

    /// Changes the bound; refreshes running above a lowered bound finish.
    pub fn set_max(&self, max: usize) {
        self.max.store(max, SeqCst);
    }

    /// The bound now.
    pub fn max(&self) -> usize {
        self.max.load(SeqCst)
    }

    /// Refreshes running now.
    pub fn running(&self) -> usize {
        self.running.load(SeqCst)
    }

    /// A slot for one refresh, or `None` when the bound is reached.
    pub(crate) fn try_acquire(self: &Arc<Self>) -> Option<RefreshPermit> {
        let max = self.max.load(SeqCst);
        self.running
            .fetch_update(SeqCst, SeqCst, |n| (n < max).then_some(n + 1))
            .ok()
            .map(|_| RefreshPermit(Arc::clone(self)))
    }
}

/// One running refresh; its slot goes back when dropped (also when the task panics or is
/// aborted).
pub(crate) struct RefreshPermit(Arc<RefreshLimiter>);

impl Drop for RefreshPermit {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, SeqCst);
    }
}

/// Refresh counters of one cache instance.
#[derive(Debug, Default)]
pub(crate) struct RefreshCounters {
    pub(crate) started: AtomicU64,
    pub(crate) succeeded: AtomicU64,
    pub(crate) unchanged: AtomicU64,
    pub(crate) failed: AtomicU64,
    pub(crate) skipped: AtomicU64,
    pub(crate) saved: AtomicU64,
}

impl RefreshCounters {
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, SeqCst);
    }

    pub(crate) fn snapshot(&self) -> RefreshStats {
        RefreshStats {
            started: self.started.load(SeqCst),
            succeeded: self.succeeded.load(SeqCst),
            unchanged: self.unchanged.load(SeqCst),
            failed: self.failed.load(SeqCst),
            skipped: self.skipped.load(SeqCst),
            loads_saved: self.saved.load(SeqCst),
        }
    }
}

/// What refreshing did in one cache instance (`information_schema.catalog_meta_cache_refresh`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RefreshStats {
    /// Background refreshes started.
    pub started: u64,
    /// Refreshes that stored a new value.
    pub succeeded: u64,
    /// Refreshes whose source said the value was unchanged: its deadline was renewed.
    pub unchanged: u64,
    /// Refreshes that failed (the old value kept serving until its hard TTL).
    pub failed: u64,
    /// Refreshes not started because the node-wide bound was reached, or no runtime or
    /// refresher was there to run them.
    pub skipped: u64,
    /// Callers at the hard TTL answered by a refresh instead of a load of their own.
    pub loads_saved: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_margin_is_a_tenth_of_the_ttl_at_most_thirty_seconds() {
        assert_eq!(margin(Duration::from_secs(100)), Duration::from_secs(10));
        assert_eq!(margin(Duration::from_secs(86_400)), MAX_MARGIN);
        assert_eq!(margin(Duration::from_secs(5)), Duration::from_millis(500));
    }

    #[test]
    fn the_bound_is_never_exceeded_and_slots_come_back() {
        let limiter = Arc::new(RefreshLimiter::new(2));
        let a = limiter.try_acquire();
        let b = limiter.try_acquire();
        assert!(a.is_some() && b.is_some());
        assert!(limiter.try_acquire().is_none());
        drop(a);
        assert_eq!(limiter.running(), 1);
        assert!(limiter.try_acquire().is_some());
        limiter.set_max(0);
        assert!(limiter.try_acquire().is_none());
    }
}
