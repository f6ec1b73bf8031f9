//! The cache core of metacache: managed caches whose retained bytes are governed by the quota
//! ledger.
//!
//! # Components
//! - [`ManagedCache`]: one physical cache (`enable`, `ttl-second`, `capacity`, byte budget) on
//!   `quick_cache`, with single-flight loads, admission (§3), generation-fenced invalidation and
//!   the counters of the statistics table ([`CacheStats`]).
//! - [`MemoryGovernor`]: the node's [`Ledger`](metacache_ledger::Ledger), the registry of live
//!   caches and the single reclamation worker.
//! - [`Clock`]: system or manual time, so tests move time instead of sleeping.
//! - [`refresh`]: refresh-ahead (§8.3): stored refreshers, the node-wide bound, counters.
//!
//! # The path of a miss
//! `get_or_load` misses → joins or leads the key's flight → the leader loads → estimate + 512 B →
//! entry limit → inserted, quick_cache evicting colder values of the cache for it; if it
//! displaced hot values asked for more often it leaves again and they return (`frequency.rs`) →
//! atomic reservation at entry, group, catalog, node → stored (if no invalidation happened
//! meanwhile) → the outcome is published to every waiter. A refused reservation files a
//! reclamation request; the worker evicts the coldest values of the short scope.
//!
//! # Invariants
//! See [`ManagedCache`]'s module: the entry budget holds exactly the charges of resident values;
//! no level exceeds its limit through admission; invalidation fences loads in flight.

mod admission;
mod advice;
mod clock;
mod config;
mod contain;
mod counters;
mod error;
mod flight;
mod frequency;
mod governor;
mod histogram;
mod managed;
pub mod redact;
pub mod refresh;
mod scale;
pub mod scope;
mod sketch;
mod slot;
mod stats;

pub use admission::{Admission, rejection_warning};
pub use advice::{
    Advice, AdvicePoint, AdvisorOptions, DEFAULT_HALF_LIFE, DRAIN_INTERVAL, MAX_QUEUE_EVENTS,
    QUEUE_EVENTS,
};
pub use clock::{Clock, ManualClock};
pub use config::{CacheConfig, Expiry};
pub use contain::LoaderPanicked;
pub use error::{Error, Result, SourceError};
pub use governor::{
    AdvisorClaim, AdvisorsShare, GovernorOptions, MemoryGovernor, ReclaimStats, Reclaimable,
    advisors_level, advisors_limit,
};
pub use histogram::{LOAD_BUCKET_BOUNDS_SECONDS, LoadTimes};
pub use managed::{DEFAULT_LEASE_TIMEOUT, LeaseLookup, LeaseToken, LeaseWaiter, ManagedCache};
pub use refresh::{RefreshLimiter, RefreshStats, Refreshed, Refresher, refresher};
pub use slot::Cached;
pub use stats::{CacheStats, EvictionCause};
