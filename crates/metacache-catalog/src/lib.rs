//! Catalogs: what CREATE / ALTER / DROP / REFRESH CATALOG do, where catalogs are kept, and the
//! node configuration.
//!
//! # Components
//! - [`CatalogManager`]: the node's catalogs and the statements on them (validate → commit →
//!   apply, one at a time), and `ADMIN SET/SHOW FRONTEND CONFIG`.
//! - [`Catalog`]: one catalog; its caches are built on first use ([`Catalog::cache`]) from its
//!   engines' definitions and its [`Properties`], under its catalog budget.
//! - [`validate`]: the property rules and messages of §4 and §6.
//! - [`CatalogStore`]: durable definitions; [`FileStore`] (one file, atomic replace) is the
//!   embedded default, [`MemoryStore`] for embedding without persistence.
//! - [`events`]: the switch and counters of a catalog's change feed from its source (the Hive
//!   Metastore's notification log), kept with the catalog.
//! - [`reach`]: the node's allow-lists of locations and hosts catalogs may make it read.
//! - [`NodeConfig`]: defaults → TOML file → `METACACHE_*` environment; [`memory`] finds the
//!   node memory budget that percentages refer to.
//!
//! # Invariants
//! - A statement with any invalid property changes nothing, in memory or in the store.
//! - An acknowledged statement is in the store.
//! - No catalog is created or altered to name a location or host outside the node's
//!   allow-lists ([`reach`]).
//! - Secret property values leave the process only as `*XXX` ([`Properties::masked`]).
//! - Caches dropped by ALTER or DROP are retired: their bytes go back at once and loads in
//!   flight never store into them or into their replacements.

mod advice;
mod catalog;
pub mod disk;
mod error;
pub mod events;
mod handle;
pub mod history;
mod key;
mod manager;
pub mod memory;
pub mod node_config;
mod properties;
pub mod reach;
pub mod scopes;
pub mod store;
pub mod validate;

pub use advice::{AdviceRow, SplitPoint};
pub use catalog::{AlterScope, CacheRow, Catalog, CatalogDef};
pub use error::{Error, Result, StoreError};
pub use events::{ResetReason, SourceEvents, SourceEventsSnapshot};
pub use key::{CacheId, DatabaseKey, MetaKey, TableKey};
pub use manager::{
    ADVICE_AHEAD_MAX_AGE, Applied, CatalogManager, ConfigRow, CreateCatalog, ManagerOptions,
    Outcome,
};
pub use node_config::NodeConfig;
pub use properties::{MASK, Properties, TYPE_KEY, is_secret_key};
pub use reach::Reach;
pub use store::{CatalogStore, Change, FileStore, MemoryStore, StoredState};
