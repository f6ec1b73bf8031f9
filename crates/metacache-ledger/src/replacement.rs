//! Replacing a retained value: while old and new both exist, the ledger holds `max(old, new)`,
//! never `old + new`; commit keeps `new`, rollback keeps `old`.

use std::sync::Arc;

use crate::{Budget, RejectReason, Rejection};

/// A pending replacement of a value charged `old` bytes by one charged `new` bytes. Dropping it
/// without [`Replacement::commit`] rolls it back.
#[derive(Debug)]
#[must_use = "a replacement rolls back when dropped"]
pub struct Replacement {
    budget: Arc<Budget>,
    old: u64,
    new: u64,
    settled: bool,
}

impl Budget {
    /// Starts replacing a value charged `old` bytes (already reserved here) by one of `new`
    /// bytes: reserves only the growth, `new - old`, if any.
    pub fn try_reserve_replacement(
        self: &Arc<Self>,
        old: u64,
        new: u64,
    ) -> Result<Replacement, Rejection> {
        if let Some((level, limit)) = self.effective_limit_with_level()
            && new > limit
        {
            return Err(Rejection {
                reason: RejectReason::EntryTooLarge,
                level,
                used: self.ancestor(level).map_or(0, Budget::used),
                limit,
                requested: new,
            });
        }
        self.try_reserve(new.saturating_sub(old))?;
        Ok(Replacement {
            budget: Arc::clone(self),
            old,
            new,
            settled: false,
        })
    }
}

impl Replacement {
    /// Bytes held for this replacement now, on top of nothing: `max(old, new)`.
    pub fn held(&self) -> u64 {
        self.old.max(self.new)
    }

    /// The new value is in place and the old one gone: keep `new` bytes.
    pub fn commit(mut self) {
        self.settled = true;
        self.budget.release(self.old.saturating_sub(self.new));
    }

    /// The old value stays: keep `old` bytes.
    pub fn rollback(mut self) {
        self.settle_back();
    }

    fn settle_back(&mut self) {
        if !self.settled {
            self.settled = true;
            self.budget.release(self.new.saturating_sub(self.old));
        }
    }
}

impl Drop for Replacement {
    fn drop(&mut self) {
        self.settle_back();
    }
}
