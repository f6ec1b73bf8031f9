//! The memory governor of a node: the ledger, the registry of live caches, and the one
//! background worker that reclaims memory when a level is short.
//!
//! Reclamation order (§3): only caches under the short level are asked; among them, caches of
//! the requester's catalog first, then the largest reservations first. Each candidate evicts its
//! coldest values (quick_cache's policy chooses them) until the deficit is freed; after a refused
//! admission, until a low watermark 1/32 of the level's limit below it. Expired values go in the
//! worker's periodic sweep, which skips caches where nothing has expired yet.
//!
//! A second thread drains every cache's quota advisor every drain interval and then shares
//! the advisors' level of the node among them ([`advisors`]).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use metacache_ledger::{Budget, Ledger, Level, ReclaimRequest};
use parking_lot::Mutex;

use crate::Clock;

mod advisors;

pub(crate) use advisors::NodeShare;
pub use advisors::{AdvisorClaim, AdvisorsShare, advisors_level, advisors_limit};

/// A cache the governor can ask to free memory.
pub trait Reclaimable: Send + Sync {
    /// The cache's entry budget.
    fn budget(&self) -> &Arc<Budget>;
    /// Drops expired values; returns the bytes released.
    fn purge_expired(&self) -> u64;
    /// Evicts the coldest values until `bytes` are released or the cache is empty; returns the
    /// bytes released. Costs what it evicts, not the size of the cache.
    fn evict_coldest(&self, bytes: u64) -> u64;
    /// Re-reads the limits above the cache after one of them changed at runtime (the node's).
    fn rescale(&self);
    /// Bytes the cache holds in the node's ledger besides its values (its quota advisor's),
    /// which [`Reclaimable::evict_coldest`] releases when the node is still short after every
    /// value went.
    fn overhead_bytes(&self) -> u64 {
        0
    }
    /// Runs the quota advisor's queued events (the governor's advisor thread, every
    /// [`crate::advice::DRAIN_INTERVAL`]). Required: a cache whose advisor is never drained
    /// would lose every event past its queue between two reads of its curve.
    fn advise(&self);
    /// Whether the cache's quota advisor runs (it has one, not stopped): while none of the
    /// node's does, its caches' maps take the whole node limit ([`NodeShare`]).
    fn advising(&self) -> bool {
        false
    }
    /// What the cache's quota advisor holds of the node's advisors' memory (`None` without
    /// one, or one stopped for good).
    fn advisor_claim(&self) -> Option<AdvisorClaim> {
        None
    }
    /// Sets the most bytes the cache's quota advisor may hold (its share of the advisors'
    /// memory), lowering its sample now if it holds more; returns the bytes it holds after.
    fn cap_advisor(&self, _cap: u64) -> u64 {
        0
    }
    /// Starts again the cache's quota advisor that stopped for a refused reservation.
    fn restart_advisor(&self) {}
}

/// Settings of a [`MemoryGovernor`].
#[derive(Debug, Clone)]
pub struct GovernorOptions {
    /// Node limit in bytes (`external_meta_cache_max_weight` resolved); `None`: no node quota.
    pub node_limit: Option<u64>,
    /// Time source for every cache of the node.
    pub clock: Clock,
    /// How often the worker drops expired values when it has nothing else to do.
    pub sweep_interval: Duration,
    /// How often the advisor thread drains every cache's quota advisor (default
    /// [`crate::advice::DRAIN_INTERVAL`]); `None`: no thread, the caller drains
    /// (`ManagedCache::advise_now`), as a replay at its own pace does.
    pub drain_interval: Option<Duration>,
}

impl Default for GovernorOptions {
    fn default() -> Self {
        Self {
            node_limit: None,
            clock: Clock::System,
            sweep_interval: Duration::from_secs(30),
            drain_interval: Some(crate::advice::DRAIN_INTERVAL),
        }
    }
}

/// Counters of the reclamation worker.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReclaimStats {
    /// Requests processed.
    pub requests: u64,
    /// Bytes released by reclamation (expired and evicted values).
    pub freed_bytes: u64,
}

struct Shared {
    ledger: Ledger,
    /// Where every cache's quota advisor is charged (a level under the node whose limit is a
    /// share of the node's, [`advisors_limit`], so that advisors never take more than that), and
    /// what that leaves the caches' values.
    share: Arc<NodeShare>,
    clock: Clock,
    caches: Mutex<Vec<Weak<dyn Reclaimable>>>,
    /// Serialises reclamation: the worker and [`MemoryGovernor::reclaim_now`] never run at once.
    running: Mutex<()>,
    requests: AtomicU64,
    freed: AtomicU64,
    /// The node-wide bound on background refreshes (`external_meta_cache_refresh_max_concurrency`).
    refresh_limiter: Arc<crate::RefreshLimiter>,
    /// How long a look-aside lease lasts, in nanoseconds (`external_meta_cache_lease_timeout_ms`).
    lease_timeout: Arc<AtomicU64>,
    /// The half-life of the counts of the node's quota advisors, in nanoseconds
    /// (`external_meta_cache_advisor_half_life_seconds`).
    advisor_half_life: Arc<AtomicU64>,
}

/// Owns the node's [`Ledger`] and its reclamation worker thread. Dropping it stops the worker;
/// caches built on it keep working (without reclamation).
pub struct MemoryGovernor {
    shared: Arc<Shared>,
    worker: Option<JoinHandle<()>>,
    /// Runs the caches' quota advisors off the request path (`crate::advice`).
    advisor: Option<JoinHandle<()>>,
}

impl MemoryGovernor {
    /// A governor with a node limit of `node_limit` bytes and default options.
    pub fn new(node_limit: Option<u64>) -> Self {
        Self::with_options(GovernorOptions {
            node_limit,
            ..GovernorOptions::default()
        })
    }

    /// A governor with the given options; starts the worker thread.
    pub fn with_options(options: GovernorOptions) -> Self {
        let ledger = Ledger::new(options.node_limit);
        let shared = Arc::new(Shared {
            share: Arc::new(NodeShare::new(
                ledger.node(),
                advisors_limit(options.node_limit),
            )),
            ledger,
            clock: options.clock,
            caches: Mutex::new(Vec::new()),
            running: Mutex::new(()),
            requests: AtomicU64::new(0),
            freed: AtomicU64::new(0),
            refresh_limiter: Arc::default(),
            lease_timeout: Arc::new(AtomicU64::new(crate::clock::nanos(
                crate::DEFAULT_LEASE_TIMEOUT,
            ))),
            advisor_half_life: Arc::new(AtomicU64::new(crate::clock::nanos(
                crate::advice::DEFAULT_HALF_LIFE,
            ))),
        });
        let worker_shared = Arc::clone(&shared);
        let sweep = options.sweep_interval;
        let worker = std::thread::Builder::new()
            .name("metacache-reclaim".into())
            .spawn(move || worker_shared.run(sweep))
            .map_err(|e| tracing::error!("cannot start the reclamation worker: {e}"))
            .ok();
        let advisor = options.drain_interval.and_then(|interval| {
            let advisor_shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("metacache-advisor".into())
                .spawn(move || advisor_shared.advise(interval))
                .map_err(|e| tracing::error!("cannot start the quota advisor thread: {e}"))
                .ok()
        });
        Self {
            shared,
            worker,
            advisor,
        }
    }

    /// The node's ledger.
    pub fn ledger(&self) -> &Ledger {
        &self.shared.ledger
    }

    /// The node budget.
    pub fn node(&self) -> &Arc<Budget> {
        self.shared.ledger.node()
    }

    /// The time source shared by this node's caches.
    pub fn clock(&self) -> &Clock {
        &self.shared.clock
    }

    /// How long a look-aside lease lasts before another caller may take the key's lease.
    pub fn set_lease_timeout(&self, timeout: Duration) {
        self.shared.lease_timeout.store(
            crate::clock::nanos(timeout),
            std::sync::atomic::Ordering::SeqCst,
        );
    }

    /// How long the counts of the node's quota advisors take to halve (those whose options set
    /// none): running advisors take it at their next drain, and age next one new half-life
    /// after their last aging. At least a nanosecond.
    pub fn set_advisor_half_life(&self, half_life: Duration) {
        self.shared.advisor_half_life.store(
            crate::clock::nanos(half_life).max(1),
            std::sync::atomic::Ordering::Relaxed,
        );
    }

    /// The advisors' half-life in nanoseconds, shared with every advisor of the node.
    pub(crate) fn advisor_half_life(&self) -> &Arc<AtomicU64> {
        &self.shared.advisor_half_life
    }

    /// The lease timeout in nanoseconds, shared with every cache of the node.
    pub(crate) fn lease_timeout(&self) -> &Arc<AtomicU64> {
        &self.shared.lease_timeout
    }

    /// The node-wide bound on background refreshes every cache of the node shares.
    pub fn refresh_limiter(&self) -> &Arc<crate::RefreshLimiter> {
        &self.shared.refresh_limiter
    }

    /// Changes the node limit at runtime; lowering it below use triggers reclamation. Every
    /// cache re-weighs its values for the new limit (see [`Reclaimable::rescale`]).
    pub fn set_node_limit(&self, limit: Option<u64>) {
        self.node().set_limit(limit);
        self.shared
            .share
            .advisors
            .set_limit(Some(advisors_limit(limit)));
        for cache in self.shared.live() {
            cache.rescale();
        }
    }

    /// How the node's quota advisors shared their memory at the advisor thread's last round
    /// (or the last [`MemoryGovernor::advise_now`]).
    pub fn advisors_share(&self) -> AdvisorsShare {
        self.shared.share.last()
    }

    /// The level every quota advisor of the node is charged under ([`advisors_limit`]).
    pub fn advisors_budget(&self) -> &Arc<Budget> {
        &self.shared.share.advisors
    }

    /// What the node leaves its caches' values ([`NodeShare`]).
    pub(crate) fn share(&self) -> &Arc<NodeShare> {
        &self.shared.share
    }

    /// A cache with a quota advisor is being built: from the first, every cache of the node
    /// leaves the advisors' share of the node limit out of its map ([`NodeShare`]), and those
    /// built before are rescaled.
    pub(crate) fn start_advising(&self) {
        if !self.shared.share.advising.swap(true, SeqCst) {
            for cache in self.shared.live() {
                cache.rescale();
            }
        }
    }

    /// A new catalog budget under the node.
    pub fn catalog_budget(&self, name: &str, limit: Option<u64>) -> Arc<Budget> {
        self.node().child(Level::Catalog, name, limit)
    }

    pub(crate) fn register(&self, cache: Weak<dyn Reclaimable>) {
        let mut caches = self.shared.caches.lock();
        caches.retain(|c| c.strong_count() > 0);
        caches.push(cache);
    }

    /// Processes the pending reclamation requests now (at most 1,024, so it returns even while
    /// requests keep arriving), in the calling thread (serialised with the worker). For tests and admin commands that must see the effect before they return.
    pub fn reclaim_now(&self) {
        self.shared.drain();
    }

    /// Drops expired values of every cache now (and takes back the quota advisors' share of
    /// the node for the caches' maps if none of them runs any more, as the worker's sweeps do).
    pub fn purge_expired_now(&self) -> u64 {
        self.shared.sweep()
    }

    /// Drains every cache's quota advisor and shares the advisors' memory among them now, in
    /// the calling thread: what the advisor thread does every drain interval, for a governor
    /// without one (`drain_interval: None`) and for tests.
    pub fn advise_now(&self) {
        self.shared.advise_once();
    }

    /// What the worker has done so far.
    pub fn reclaim_stats(&self) -> ReclaimStats {
        ReclaimStats {
            requests: self.shared.requests.load(Relaxed),
            freed_bytes: self.shared.freed.load(Relaxed),
        }
    }

    /// Caches alive now.
    pub fn live_caches(&self) -> usize {
        self.shared.live().len()
    }
}

impl Drop for MemoryGovernor {
    fn drop(&mut self) {
        self.shared.ledger.close();
        if let Some(worker) = self.worker.take()
            && worker.join().is_err()
        {
            tracing::error!("the reclamation worker panicked");
        }
        if let Some(advisor) = self.advisor.take() {
            advisor.thread().unpark();
            if advisor.join().is_err() {
                tracing::error!("the quota advisor thread panicked");
            }
        }
    }
}

/// Runs one pass of the reclamation worker; a pass that panics (a defect: the requests it had
/// taken are dropped, and their admissions were refused already) is logged and the worker goes
/// on, so that one defect does not end reclamation for the node's lifetime.
fn contained(pass: &'static str, run: impl FnOnce()) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).is_err() {
        tracing::error!(
            pass,
            "a pass of the reclamation worker panicked; the worker goes on"
        );
    }
}

/// Requests one drain handles at most before it returns.
const DRAIN_BATCH: usize = 1024;

/// Share of a level's limit that reclamation after a refused admission leaves free beyond the
/// refused value: 1/32 (about 3 %).
const LOW_WATERMARK_DIVISOR: u64 = 32;

/// Room to free beyond the deficit: for a refused admission, 1/32 of the short level's limit;
/// for a lowered limit, none (the level only has to come back under it).
fn low_watermark_room(request: &ReclaimRequest) -> u64 {
    match request.scope().limit() {
        Some(limit) if request.needed() > 0 => limit / LOW_WATERMARK_DIVISOR,
        _ => 0,
    }
}

impl Shared {
    /// Handles requests as they come, and sweeps expired values every `sweep_interval` whether
    /// requests keep coming or not: under steady pressure expired values must still give their
    /// bytes back (until issue 12 the sweep waited for 30 s without any request).
    fn run(&self, sweep_interval: Duration) {
        let mut next_sweep = std::time::Instant::now() + sweep_interval;
        while !self.ledger.is_closed() {
            let wait = next_sweep.saturating_duration_since(std::time::Instant::now());
            if self.ledger.wait_for_reclaim_request(wait) {
                contained("reclamation", || self.drain());
            }
            if !self.ledger.is_closed() && std::time::Instant::now() >= next_sweep {
                contained("expiry sweep", || {
                    self.sweep();
                });
                next_sweep = std::time::Instant::now() + sweep_interval;
            }
        }
    }

    /// Handles the pending requests, at most [`DRAIN_BATCH`] of them: a caller (the worker, or
    /// `reclaim_now`) returns even while requests keep arriving. Requests are only taken off
    /// the queue under `running`, so no request is being handled elsewhere meanwhile.
    fn drain(&self) {
        let _running = self.running.lock();
        for _ in 0..DRAIN_BATCH {
            let Some(request) = self.ledger.next_reclaim_request() else {
                return;
            };
            self.handle(&request);
        }
    }

    fn live(&self) -> Vec<Arc<dyn Reclaimable>> {
        self.caches
            .lock()
            .iter()
            .filter_map(Weak::upgrade)
            .collect()
    }

    /// Drops every cache's expired values, and settles the advisors' share
    /// ([`Shared::settle_share`]; for a governor without an advisor thread, only here).
    fn sweep(&self) -> u64 {
        let _running = self.running.lock();
        let live = self.live();
        let freed: u64 = live.iter().map(|c| c.purge_expired()).sum();
        self.freed.fetch_add(freed, Relaxed);
        self.settle_share(&live);
        freed
    }

    fn handle(&self, request: &ReclaimRequest) {
        self.requests.fetch_add(1, Relaxed);
        // A refused admission frees down to a low watermark, not to the exact deficit, so that
        // the admissions after it find room instead of being refused one by one.
        let mut target = request.deficit() + low_watermark_room(request);
        // A pass can fall short while caches change under it (values admitted or removed
        // meanwhile): passes repeat while they free bytes.
        for _ in 0..4 {
            if target == 0 {
                return;
            }
            let freed = self.reclaim_pass(request, target);
            if freed == 0 {
                return;
            }
            target = request.deficit().max(target.saturating_sub(freed));
        }
    }

    /// One pass over the caches of the request's scope: the coldest values of the caches of the
    /// requesting catalog, then of the largest. Returns the bytes freed.
    fn reclaim_pass(&self, request: &ReclaimRequest, deficit: u64) -> u64 {
        let scope = request.scope();
        let origin_catalog = request
            .origin()
            .and_then(|o| o.ancestor(Level::Catalog))
            .map(|c| c as *const Budget);
        let mut candidates: Vec<_> = self
            .live()
            .into_iter()
            .filter(|c| {
                c.budget().is_within(scope) && (c.budget().used() > 0 || c.overhead_bytes() > 0)
            })
            .collect();
        // Each key is read once: the bytes a cache holds change while the pass sorts (values
        // stored and evicted meanwhile), and a sort whose keys move under it is no total order
        // — the standard sort panics on that (it killed this worker with a few hundred caches
        // busy).
        candidates.sort_by_cached_key(|c| {
            let same_catalog = c
                .budget()
                .ancestor(Level::Catalog)
                .is_some_and(|cat| Some(cat as *const Budget) == origin_catalog);
            (!same_catalog, std::cmp::Reverse(c.budget().used()))
        });
        // Expired values are left to the periodic sweep (and to the lookups that find them):
        // a pass costs what it evicts, never a scan of every cache under the scope.
        let mut freed = 0;
        for cache in &candidates {
            if freed >= deficit {
                break;
            }
            freed += cache.evict_coldest(deficit - freed);
        }
        self.freed.fetch_add(freed, Relaxed);
        tracing::debug!(
            level = %request.level(),
            scope = scope.name(),
            deficit,
            freed,
            "reclaimed metadata cache memory"
        );
        freed
    }
}
