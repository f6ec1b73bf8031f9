//! Size estimation of cached values: how many bytes a value keeps alive while it sits in a cache.
//!
//! # Components
//! - [`EstimateSize`]: implemented by every cached value type, either generically from
//!   `#[derive(mem_dbg::MemSize)]` through [`estimate_with_mem_dbg!`], or by hand for types whose
//!   shape is known (file listings, partition lists), using the helpers of [`Sizer`].
//! - [`Sizer`]: the running total, the visit budget, and the set of shared allocations already
//!   charged (so a shared `Arc` inside one value is charged once).
//! - [`estimate`]: runs an estimator, turning an exhausted budget into [`Estimate::Incomplete`]
//!   and a panic into [`Estimate::Failed`], never a crash.
//!
//! # What is counted
//! The bytes the allocator really hands out: the value's own inline size (it lives inside the
//! cache's slot), every heap allocation it owns at its *capacity* (not length) rounded up to the
//! allocator's size class ([`size_class`], through [`Sizer::add_allocation`] and the container
//! helpers), and each shared allocation once. The generic `mem_dbg` walk cannot see single
//! allocations and counts capacities unrounded; the value types of the caches use it only for
//! parts with few, large allocations. The cache adds the key and a fixed overhead on top.
//!
//! # Invariants
//! - An estimate is either complete, or says it is not and why: it never silently under-counts.
//! - Estimating never panics out of [`estimate`] and never allocates in proportion to the value
//!   beyond the set of shared pointers seen.

#[cfg(feature = "testing")]
pub mod counting;
mod layout;
mod sizer;
mod std_impls;

pub use layout::{btree_nodes, hash_table_bytes, size_class};
pub use sizer::{Estimate, EstimateSize, Sizer, estimate};

/// Visits an estimate may make before it is declared incomplete; large enough for a file listing
/// of a million entries, small enough to bound the time spent on a pathological value.
pub const DEFAULT_VISIT_BUDGET: u64 = 4_000_000;

#[doc(hidden)]
pub use mem_dbg as __mem_dbg;

/// Implements [`EstimateSize`] for types that derive (or implement) `mem_dbg::MemSize`: the
/// generic estimator, exact for std containers at their capacity, charging shared `Arc`s once.
///
/// ```
/// #[derive(mem_dbg::MemSize)]
/// struct Column { name: String, type_name: String }
/// metacache_estimate::estimate_with_mem_dbg!(Column);
/// ```
#[macro_export]
macro_rules! estimate_with_mem_dbg {
    ($($ty:ty),+ $(,)?) => {$(
        impl $crate::EstimateSize for $ty {
            fn estimate_size(&self, sizer: &mut $crate::Sizer) {
                sizer.add_mem_dbg(self);
            }
        }
    )+};
}
