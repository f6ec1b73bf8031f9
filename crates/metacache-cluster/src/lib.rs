//! Several metacache nodes on one PostgreSQL (SPEC §9): the shared catalog store
//! ([`PgStore`]), the follower that applies other nodes' changes in revision order
//! ([`follow`]), and membership by heartbeat rows.
//!
//! What is shared: catalog definitions, remote engine definitions and cluster-wide events
//! (ALTER, DROP, RENAME, REFRESH …), each written in one transaction with a gapless revision.
//! What is per node: its caches and their contents, its node configuration and limits, its
//! scan scopes. docs/cluster.md has the guarantees and their limits.

pub mod follow;
mod schema;
mod store;

pub use follow::Advertised;
pub use store::{EVENTS_KEPT, Member, PgStore};

/// Why the cluster could not start.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The store URL does not parse.
    #[error("invalid cluster store URL: {reason} (expected postgres://user@host:port/database)")]
    InvalidUrl {
        /// What is wrong.
        reason: String,
    },
    /// The store's thread or runtime could not start.
    #[error("the cluster store could not start: {reason}")]
    Runtime {
        /// What failed.
        reason: String,
    },
    /// The database refused or could not be reached.
    #[error(transparent)]
    Store(Box<metacache_catalog::StoreError>),
}
