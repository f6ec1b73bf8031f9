//! The quota ledger of metacache: how many bytes each level of the memory hierarchy may retain,
//! and how many it retains now.
//!
//! # Components
//! - [`Ledger`] owns the node budget and the queue of [`ReclaimRequest`]s.
//! - [`Budget`] is one level of the tree (node → catalog → entry group → entry). A managed cache
//!   reserves at its entry budget; the reservation climbs to the node.
//! - [`Replacement`] holds `max(old, new)` bytes while a cached value is being replaced.
//! - [`Rejection`] / [`RejectReason`] say why a value was not admitted, with the exact reason
//!   strings admins see in `LAST_WEIGHT_REJECT_REASON`.
//! - [`size`] parses and formats weights and percentages, and [`WeightError`] produces every
//!   validation message of the specification (§4), in this one place.
//!
//! # Invariants
//! - A reservation is all or nothing: [`Budget::try_reserve`] either adds the bytes at every level
//!   from the entry up to the node, or leaves every level as it was. While it runs, a reader may
//!   see the bytes at a lower level before they reach an upper one (each level is one atomic
//!   counter); it is never left half-applied.
//! - A reservation never makes a level exceed its limit. Only lowering a limit can leave a level
//!   above it, and that always files a [`ReclaimRequest`] naming the level.
//! - `used` never goes below zero: releasing more than is held saturates (and is a bug, asserted in
//!   debug builds).
//! - No I/O, no async, no locks on the reserve/release path: O(levels) atomic operations. The
//!   only lock guards the reclamation queue, which is touched on rejections and limit changes.

mod budget;
mod error;
mod reclaim;
mod reject;
mod replacement;
pub mod size;

pub use budget::{Budget, Ledger, Level};
pub use error::WeightError;
pub use reclaim::ReclaimRequest;
pub use reject::{RejectKind, RejectReason, Rejection};
pub use replacement::Replacement;

/// Bytes charged on top of every estimate, for the cache's own bookkeeping of a value
/// (key, slot, queue links). Fixed by the specification (§3).
pub const ACCOUNTING_OVERHEAD_BYTES: u64 = 512;
