//! The [`Sizer`] that estimators write into, and [`estimate`], which runs one safely.

use std::any::Any;
use std::collections::{BTreeMap, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use mem_dbg::{MemSize, SizeFlags};

use crate::{btree_nodes, hash_table_bytes, size_class};

/// Flags for the generic estimator: allocated capacity, shared pointers followed once.
const MEM_DBG_FLAGS: SizeFlags = SizeFlags::CAPACITY.union(SizeFlags::FOLLOW_RCS);

/// Detail of [`Estimate::Incomplete`] when the visit budget ran out.
pub const VISIT_BUDGET_EXHAUSTED: &str = "visit_budget_exhausted";

/// The result of estimating one value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Estimate {
    /// Every allocation of the value was counted.
    Complete(u64),
    /// The estimator stopped before the end (budget exhausted, part it cannot see into).
    Incomplete {
        /// Bytes counted before stopping: a lower bound.
        partial: u64,
        /// Why it stopped, e.g. [`VISIT_BUDGET_EXHAUSTED`].
        detail: String,
    },
    /// The estimator reported an error or panicked.
    Failed {
        /// The error text or panic message.
        detail: String,
    },
}

/// A value whose retained size can be estimated.
///
/// Implementations add the value's inline size and everything it owns on the heap to `sizer`,
/// call [`Sizer::visit`] as they walk collections, and stop when it returns `false`.
pub trait EstimateSize {
    /// Adds this value's bytes to `sizer`.
    fn estimate_size(&self, sizer: &mut Sizer);
}

/// The running state of one estimate.
#[derive(Debug)]
pub struct Sizer {
    bytes: u64,
    visits_left: u64,
    /// Shared allocations already charged, by address, with their size. Shared with mem_dbg, so
    /// an `Arc` reached both by a hand-written estimator and by the generic one counts once.
    shared: mem_dbg::HashMap<usize, usize>,
    incomplete: Option<String>,
    failed: Option<String>,
}

impl Sizer {
    /// A sizer that allows `visit_budget` visits.
    pub fn new(visit_budget: u64) -> Self {
        Self {
            bytes: 0,
            visits_left: visit_budget,
            shared: mem_dbg::HashMap::new(),
            incomplete: None,
            failed: None,
        }
    }

    /// Adds `bytes` to the total.
    pub fn add(&mut self, bytes: usize) {
        self.bytes = self.bytes.saturating_add(bytes as u64);
    }

    /// Adds one heap allocation of `bytes` requested bytes, at the size the allocator really
    /// gives it ([`size_class`]).
    pub fn add_allocation(&mut self, bytes: usize) {
        self.add(size_class(bytes));
    }

    /// Adds the inline size of `value` (what it occupies where it is stored).
    pub fn add_inline<T: ?Sized>(&mut self, value: &T) {
        self.add(size_of_val(value));
    }

    /// Charges `count` visits. Returns `false`, and marks the estimate incomplete, once the
    /// budget is spent; the estimator should stop walking then.
    pub fn visit(&mut self, count: u64) -> bool {
        if self.is_stopped() {
            return false;
        }
        match self.visits_left.checked_sub(count) {
            Some(left) => {
                self.visits_left = left;
                true
            }
            None => {
                self.visits_left = 0;
                self.mark_incomplete(VISIT_BUDGET_EXHAUSTED);
                false
            }
        }
    }

    /// Whether the estimate already stopped (incomplete or failed).
    pub fn is_stopped(&self) -> bool {
        self.incomplete.is_some() || self.failed.is_some()
    }

    /// Declares the estimate incomplete, e.g. on a part the estimator cannot see into.
    pub fn mark_incomplete(&mut self, detail: impl Into<String>) {
        self.incomplete.get_or_insert_with(|| detail.into());
    }

    /// Declares the estimator failed.
    pub fn fail(&mut self, detail: impl Into<String>) {
        self.failed.get_or_insert_with(|| detail.into());
    }

    /// Adds a whole value (inline and heap) by the generic `mem_dbg` walk.
    pub fn add_mem_dbg<T: MemSize>(&mut self, value: &T) {
        if let Some(bytes) = self.walk_mem_dbg(value) {
            self.add(bytes);
        }
    }

    /// Adds only the heap part of a field whose inline size its parent already counted.
    pub fn add_heap_mem_dbg<T: MemSize>(&mut self, value: &T) {
        if let Some(bytes) = self.walk_mem_dbg(value) {
            self.add(bytes.saturating_sub(size_of::<T>()));
        }
    }

    fn walk_mem_dbg<T: MemSize>(&mut self, value: &T) -> Option<usize> {
        if !self.visit(1) {
            return None;
        }
        let known = self.shared.len();
        let bytes = value.mem_size_rec(MEM_DBG_FLAGS, &mut self.shared);
        self.visit((self.shared.len() - known) as u64);
        Some(bytes)
    }

    /// Adds the heap buffer of a string (its capacity).
    pub fn add_string(&mut self, text: &String) {
        self.add_allocation(text.capacity());
    }

    /// Adds the buffer of a vector at its capacity, then each element's heap part through
    /// `each`, one visit per element.
    pub fn add_vec<T>(&mut self, items: &Vec<T>, mut each: impl FnMut(&mut Sizer, &T)) {
        self.add_allocation(items.capacity().saturating_mul(size_of::<T>()));
        for item in items {
            if !self.visit(1) {
                return;
            }
            each(self, item);
        }
    }

    /// Adds the table of a hash map at its capacity, then each entry's heap parts through
    /// `each`, one visit per entry.
    pub fn add_hash_map<K, V, S>(
        &mut self,
        map: &HashMap<K, V, S>,
        mut each: impl FnMut(&mut Sizer, &K, &V),
    ) {
        self.add_allocation(hash_table_bytes(
            map.capacity(),
            size_of::<(K, V)>(),
            align_of::<(K, V)>(),
        ));
        for (key, value) in map {
            if !self.visit(1) {
                return;
            }
            each(self, key, value);
        }
    }

    /// Adds the nodes of a B-tree map (see [`btree_nodes`]), each at its size class, then each
    /// entry's heap parts through `each`, one visit per entry.
    pub fn add_btree_map<K, V>(
        &mut self,
        map: &BTreeMap<K, V>,
        mut each: impl FnMut(&mut Sizer, &K, &V),
    ) {
        for (count, bytes) in btree_nodes::<K, V>(map.len()) {
            self.add(count.saturating_mul(size_class(bytes)));
        }
        for (key, value) in map {
            if !self.visit(1) {
                return;
            }
            each(self, key, value);
        }
    }

    /// Adds a map of strings to strings (properties, options): its nodes and every key's and
    /// value's buffer.
    pub fn add_string_map(&mut self, map: &BTreeMap<String, String>) {
        self.add_btree_map(map, |s, k, v| {
            s.add_string(k);
            s.add_string(v);
        });
    }

    /// Adds the allocation behind an `Arc` (counts and value) and, through `inner`, the heap
    /// parts of the value, unless this allocation was already charged in this estimate.
    pub fn add_arc<T>(&mut self, shared: &Arc<T>, inner: impl FnOnce(&mut Sizer, &T)) {
        let address = Arc::as_ptr(shared) as usize;
        if self.shared.contains_key(&address) {
            return;
        }
        self.shared.insert(address, 0);
        let before = self.bytes;
        inner(self, shared);
        let heap = self.bytes.saturating_sub(before);
        self.bytes = before;
        let header = 2 * size_of::<usize>();
        let total = size_class(header + size_of::<T>())
            .saturating_add(usize::try_from(heap).unwrap_or(usize::MAX));
        self.shared.insert(address, total);
    }

    fn finish(self) -> Estimate {
        let shared: u64 = self.shared.values().map(|&b| b as u64).sum();
        let bytes = self.bytes.saturating_add(shared);
        match (self.failed, self.incomplete) {
            (Some(detail), _) => Estimate::Failed { detail },
            (None, Some(detail)) => Estimate::Incomplete {
                partial: bytes,
                detail,
            },
            (None, None) => Estimate::Complete(bytes),
        }
    }
}

/// Estimates `value` with a budget of `visit_budget` visits. A panicking estimator yields
/// [`Estimate::Failed`] with the panic message; nothing escapes.
pub fn estimate<T: EstimateSize + ?Sized>(value: &T, visit_budget: u64) -> Estimate {
    let run = catch_unwind(AssertUnwindSafe(|| {
        let mut sizer = Sizer::new(visit_budget);
        value.estimate_size(&mut sizer);
        sizer.finish()
    }));
    run.unwrap_or_else(|payload| Estimate::Failed {
        detail: panic_message(payload.as_ref()),
    })
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "panic".to_owned()
    }
}

#[cfg(test)]
mod tests;
