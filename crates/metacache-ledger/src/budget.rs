//! The budget tree: one [`Budget`] per level, each an atomic counter of reserved bytes under an
//! optional limit, chained to its parent up to the node budget owned by the [`Ledger`].

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::SeqCst};
use std::time::Duration;

use crate::reclaim::{ReclaimQueue, ReclaimRequest};
use crate::{RejectReason, Rejection};

/// Stored in [`Budget::limit`] when no limit applies at that level.
const NO_LIMIT: i64 = -1;

/// A level of the memory hierarchy, from the smallest scope to the largest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    /// One physical cache.
    Entry,
    /// The caches that share one `meta.cache.<engine>.<entry>` token, and so one entry budget.
    EntryGroup,
    /// All caches of one catalog (`meta.cache.max-weight`).
    Catalog,
    /// All caches of the node (`external_meta_cache_max_weight`).
    Node,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Entry => "entry",
            Self::EntryGroup => "entry group",
            Self::Catalog => "catalog",
            Self::Node => "node",
        })
    }
}

/// The root of a budget tree: owns the node budget and the reclamation queue that every budget
/// of the tree files into.
pub struct Ledger {
    node: Arc<Budget>,
    queue: Arc<ReclaimQueue>,
}

impl Ledger {
    /// A ledger whose node budget has `node_limit` bytes (`None`: no node quota).
    pub fn new(node_limit: Option<u64>) -> Self {
        let queue = Arc::new(ReclaimQueue::default());
        let node = Arc::new(Budget::new(
            Level::Node,
            "node".to_owned(),
            node_limit,
            None,
            Arc::clone(&queue),
        ));
        Self { node, queue }
    }

    /// The node budget, parent of every catalog budget.
    pub fn node(&self) -> &Arc<Budget> {
        &self.node
    }

    /// Waits up to `timeout` until a reclamation request is pending; returns whether one is.
    /// Returns at once after [`Ledger::close`].
    pub fn wait_for_reclaim_request(&self, timeout: Duration) -> bool {
        self.queue.wait_ready(timeout)
    }

    /// Takes the pending reclamation request with the largest need, without waiting.
    pub fn next_reclaim_request(&self) -> Option<ReclaimRequest> {
        self.queue.pop()
    }

    /// The requests waiting now, without blocking (merged, largest first).
    pub fn pending_reclaim_requests(&self) -> Vec<ReclaimRequest> {
        self.queue.snapshot()
    }

    /// Wakes every waiter of [`Ledger::wait_reclaim_request`] and makes later waits return at once.
    pub fn close(&self) {
        self.queue.close();
    }

    /// Whether [`Ledger::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.queue.is_closed()
    }
}

impl fmt::Debug for Ledger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ledger").field("node", &self.node).finish()
    }
}

/// One level of the hierarchy: the bytes reserved under it and its own limit.
///
/// A budget's `used` includes everything reserved by its descendants; a reservation at an entry
/// budget is visible at every ancestor.
pub struct Budget {
    level: Level,
    name: String,
    limit: AtomicI64,
    used: AtomicU64,
    parent: Option<Arc<Budget>>,
    queue: Arc<ReclaimQueue>,
}

impl Budget {
    fn new(
        level: Level,
        name: String,
        limit: Option<u64>,
        parent: Option<Arc<Budget>>,
        queue: Arc<ReclaimQueue>,
    ) -> Self {
        Self {
            level,
            name,
            limit: AtomicI64::new(encode_limit(limit)),
            used: AtomicU64::new(0),
            parent,
            queue,
        }
    }

    /// A new budget below this one. `level` must be below this budget's level.
    pub fn child(
        self: &Arc<Self>,
        level: Level,
        name: impl Into<String>,
        limit: Option<u64>,
    ) -> Arc<Budget> {
        debug_assert!(
            level < self.level,
            "a child budget must sit below its parent"
        );
        Arc::new(Budget::new(
            level,
            name.into(),
            limit,
            Some(Arc::clone(self)),
            Arc::clone(&self.queue),
        ))
    }

    /// This budget's level.
    pub fn level(&self) -> Level {
        self.level
    }

    /// The name given at creation (catalog name, entry token, ENTRY_NAME), for diagnostics.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The budget one level up, if any.
    pub fn parent(&self) -> Option<&Arc<Budget>> {
        self.parent.as_ref()
    }

    /// This level's own limit in bytes; `None` when the level has none.
    pub fn limit(&self) -> Option<u64> {
        decode_limit(self.limit.load(SeqCst))
    }

    /// Bytes reserved under this level now, descendants included.
    pub fn used(&self) -> u64 {
        self.used.load(SeqCst)
    }

    /// The smallest limit from this level up to the node, with the level that sets it.
    pub fn effective_limit_with_level(&self) -> Option<(Level, u64)> {
        self.chain()
            .filter_map(|b| b.limit().map(|l| (b.level, l)))
            .min_by_key(|&(_, l)| l)
    }

    /// The smallest limit from this level up to the node (`None`: no limit applies, and the
    /// statistics table shows `-1`).
    pub fn effective_limit(&self) -> Option<u64> {
        self.effective_limit_with_level().map(|(_, l)| l)
    }

    /// This budget, then each ancestor up to the node.
    pub fn chain(&self) -> impl Iterator<Item = &Budget> {
        std::iter::successors(Some(self), |b| b.parent.as_deref())
    }

    /// The ancestor (or self) at `level`, if the chain has one.
    pub fn ancestor(&self, level: Level) -> Option<&Budget> {
        self.chain().find(|b| b.level == level)
    }

    /// Whether `scope` is this budget or one of its ancestors.
    pub fn is_within(&self, scope: &Budget) -> bool {
        self.chain().any(|b| std::ptr::eq(b, scope))
    }

    /// Changes this level's limit at runtime. Lowering it below the current use files a
    /// reclamation request for this level; the use itself is untouched until values are evicted.
    pub fn set_limit(self: &Arc<Self>, limit: Option<u64>) {
        let encoded = encode_limit(limit);
        self.limit.store(encoded, SeqCst);
        // Read `used` after publishing the limit: a concurrent reservation either sees the new
        // limit in its re-check, or its bytes are seen here. Both are SeqCst, so one of the two
        // always happens (see `try_reserve`).
        if encoded != NO_LIMIT && self.used.load(SeqCst) > encoded as u64 {
            self.queue
                .push(ReclaimRequest::new(Arc::clone(self), 0, None));
        }
    }

    /// Files a reclamation request for each level from here up to the node that holds more
    /// than its limit now.
    ///
    /// For bytes reserved before a limit was lowered and made resident only after the
    /// reclamation that lowering filed had run: that reclamation could not evict them (they were
    /// not in any cache yet) and nothing else would ask again. Caches call this after making a
    /// reservation resident; it costs two loads per level when nothing is over.
    pub fn reclaim_if_over_limit(self: &Arc<Self>) {
        let mut level = Some(self);
        while let Some(budget) = level {
            if let Some(limit) = budget.limit()
                && budget.used() > limit
            {
                budget
                    .queue
                    .push(ReclaimRequest::new(Arc::clone(budget), 0, None));
            }
            level = budget.parent.as_ref();
        }
    }

    /// Reserves `bytes` at this level and every ancestor, all or nothing.
    ///
    /// Refuses with [`RejectReason::EntryTooLarge`] when `bytes` exceeds the effective limit, and
    /// with [`RejectReason::BudgetExceeded`] when some level cannot hold them now; the latter also
    /// files a reclamation request for that level, asking it to make room for `bytes`.
    pub fn try_reserve(self: &Arc<Self>, bytes: u64) -> Result<(), Rejection> {
        if bytes == 0 {
            return Ok(());
        }
        if let Some((level, limit)) = self.effective_limit_with_level()
            && bytes > limit
        {
            let used = self.ancestor(level).map_or(0, Budget::used);
            return Err(Rejection {
                reason: RejectReason::EntryTooLarge,
                level,
                used,
                limit,
                requested: bytes,
            });
        }
        let mut added = 0usize;
        let mut refused = None;
        for budget in self.chain() {
            match budget.add_within_limit(bytes) {
                Ok(()) => added += 1,
                Err((used, limit)) => {
                    refused = Some((budget, used, limit));
                    break;
                }
            }
        }
        if refused.is_none() {
            // A limit lowered after our compare-and-swap read it: give the bytes back.
            refused = self.chain().find_map(|b| {
                let limit = decode_limit(b.limit.load(SeqCst))?;
                let used = b.used.load(SeqCst);
                (used > limit).then_some((b, used - bytes, limit))
            });
        }
        let Some((budget, used, limit)) = refused else {
            return Ok(());
        };
        self.chain().take(added).for_each(|b| {
            b.sub(bytes);
        });
        let scope = self.arc_of(budget);
        self.queue
            .push(ReclaimRequest::new(scope, bytes, Some(Arc::clone(self))));
        Err(Rejection {
            reason: RejectReason::BudgetExceeded,
            level: budget.level,
            used,
            limit,
            requested: bytes,
        })
    }

    /// Returns `bytes` at this level and every ancestor. Releasing more than is held saturates at
    /// zero (a bug, asserted in debug builds).
    pub fn release(&self, bytes: u64) {
        if bytes == 0 {
            return;
        }
        // Every level is released, whichever of them underflows.
        let underflows = self.chain().filter(|b| b.sub(bytes)).count();
        debug_assert!(
            underflows == 0,
            "released {bytes} bytes more than '{}' holds",
            self.name
        );
    }

    fn add_within_limit(&self, bytes: u64) -> Result<(), (u64, u64)> {
        let mut current = self.used.load(SeqCst);
        loop {
            let limit = decode_limit(self.limit.load(SeqCst));
            let next = current.saturating_add(bytes);
            if let Some(limit) = limit
                && next > limit
            {
                return Err((current, limit));
            }
            match self
                .used
                .compare_exchange_weak(current, next, SeqCst, SeqCst)
            {
                Ok(_) => return Ok(()),
                Err(actual) => current = actual,
            }
        }
    }

    /// Subtracts `bytes`, saturating at zero; returns whether it had to saturate.
    fn sub(&self, bytes: u64) -> bool {
        let previous = self
            .used
            .fetch_update(SeqCst, SeqCst, |u| Some(u.saturating_sub(bytes)))
            .unwrap_or_else(|u| u);
        previous < bytes
    }

    /// The `Arc` of `budget`, which is `self` or one of its ancestors.
    fn arc_of(self: &Arc<Self>, budget: &Budget) -> Arc<Budget> {
        let mut current = self;
        loop {
            if std::ptr::eq(current.as_ref(), budget) {
                return Arc::clone(current);
            }
            match &current.parent {
                Some(parent) => current = parent,
                None => return Arc::clone(self),
            }
        }
    }
}

impl Drop for Budget {
    /// A budget that goes away should hold nothing: bytes still reserved are a leak of its
    /// owner. In a debug build (every test) that fails loudly; in a release build the bytes are
    /// given back to the ancestors, so a leak never shrinks the quota of what is left.
    fn drop(&mut self) {
        let left = *self.used.get_mut();
        if left > 0
            && let Some(parent) = &self.parent
        {
            parent.release(left);
        }
        debug_assert!(
            left == 0 || std::thread::panicking(),
            "{} budget '{}' dropped holding {left} bytes: its owner leaked them",
            self.level,
            self.name
        );
    }
}

impl fmt::Debug for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Budget")
            .field("level", &self.level)
            .field("name", &self.name)
            .field("limit", &self.limit())
            .field("used", &self.used())
            .finish()
    }
}

fn encode_limit(limit: Option<u64>) -> i64 {
    match limit {
        None => NO_LIMIT,
        Some(l) => i64::try_from(l).unwrap_or(i64::MAX),
    }
}

fn decode_limit(raw: i64) -> Option<u64> {
    u64::try_from(raw).ok()
}

#[cfg(test)]
mod tests;
