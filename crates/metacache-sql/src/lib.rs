//! SQL of metacache: the statements admins type, parsed with `sqlparser`, and read-only
//! `SELECT`s run by DataFusion over the system tables.
//!
//! # Components
//! - [`statement`]: our statements (CREATE/ALTER/DROP/SHOW/REFRESH CATALOG, ADMIN SET/SHOW
//!   FRONTEND CONFIG, SHOW, DESC, USE, SET) and the routing of queries to DataFusion.
//! - [`SqlEngine`] / [`Session`]: one per node / one per connection; runs a statement into an
//!   [`Output`] that any front end can encode.
//! - [`system`]: `information_schema` — `catalog_meta_cache_statistics` (the 28 columns of §7,
//!   in order), `catalog_meta_cache_nodes`, `catalogs`, `tables`, `columns`, `schemata` — as a
//!   DataFusion schema whose tables are snapshots taken when a query plans.
//! - [`query`]: the DataFusion side: a guard that admits only queries, a per-query memory
//!   limit, and MySQL-style headers; [`mysql_compat`]: MySQL's arithmetic (`1/0` is NULL) and
//!   the functions drivers' metadata queries call (`IF`, `LOCATE`, `UCASE`, …).
//!
//! # Invariants
//! - SELECT never changes anything: DDL, DML and `SET` plans are refused before execution.
//! - The messages of §4 reach clients verbatim (they are the catalog crate's).
//! - Catalog statements run on blocking threads: their disk writes never stall the reactor.

mod error;
mod metadata;
pub mod mysql_compat;
mod mysql_show;
mod output;
pub mod query;
mod session;
pub mod statement;
pub mod system;
pub mod variables;
mod yielding;

pub use error::{Error, Result};
pub use output::{Column, ColumnType, Output, Value};
pub use session::{Session, SqlEngine};
