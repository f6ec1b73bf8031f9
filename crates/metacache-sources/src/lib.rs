//! Connectors: real metadata sources read through a catalog's governed caches.
//!
//! # Components
//! - [`Sources`]: the node's connectors, one per catalog, built from its properties.
//! - [`Connector`]: what front ends and planners ask a catalog — databases, tables, schema,
//!   partitions, files, snapshots.
//! - [`hive`]: Hive-style warehouses on the local file system or S3 ([`Warehouse`]), with a
//!   file metastore; feeds the six `hive` caches and `default.schema`.
//! - `iceberg` (feature `iceberg`): Iceberg tables of SQL (SQLite), directory and REST
//!   catalogs; metadata and manifests parsed by the `iceberg` crate, read through
//!   `object_store`; feeds every `iceberg` cache and `default.schema`.
//! - `paimon` (feature `paimon`): Paimon tables on the local file system or S3, their JSON
//!   and Avro files read directly; feeds the three `paimon` caches and `default.schema`.
//! - `lance` (feature `lance`): Lance tables resolved through a directory or REST namespace;
//!   credential-free resolutions kept in `lance-table-access` (§8.1).
//! - [`model`]: the answers, and the estimators of the values cached for them.
//!
//! # Invariants
//! - Every answer comes through the catalog's cache of its entry (counted, single-flight,
//!   admitted by the ledger) or, where a rule leaves a cache out, is loaded detached.
//! - A connector never outlives its catalog's properties ([`Sources`] rebuilds it).

/// Implements `MetaKey` for key structs with `database` and `table` fields, so `REFRESH TABLE`
/// and `REFRESH DATABASE` reach their values.
macro_rules! table_scoped_keys {
    ($($key:ty $({ $($text:ident),* })?),+ $(,)?) => {$(
        impl metacache_catalog::MetaKey for $key {
            fn database(&self) -> Option<&str> {
                Some(&self.database)
            }
            fn table(&self) -> Option<&str> {
                Some(&self.table)
            }
        }
        /// A key is charged with its value: its inline size and its strings' buffers.
        impl metacache_estimate::EstimateSize for $key {
            fn estimate_size(&self, sizer: &mut metacache_estimate::Sizer) {
                sizer.add_inline(self);
                sizer.add_string(&self.database);
                sizer.add_string(&self.table);
                $($(sizer.add_string(&self.$text);)*)?
            }
        }
    )+};
}

#[cfg(feature = "postgres")]
pub mod adbc;
mod connector;
mod error;
pub mod hive;
#[cfg(feature = "iceberg")]
pub mod iceberg;
#[cfg(feature = "lance")]
pub mod lance;
pub mod model;
pub mod network;
#[cfg(feature = "paimon")]
pub mod paimon;
mod scoped;
mod sources;
mod warehouse;

pub use connector::{Connector, PartitionFilter};
pub use error::{Error, Result};
pub use model::{
    ColumnInfo, DataFile, FileListing, PartitionFiles, PartitionInfo, PartitionTotals,
    SnapshotInfo, SnapshotKey, TableAccessInfo, TableInfo, TableSchema,
};
pub use scoped::{
    OpenScopeError, ScopeRequest, carries_credentials, vended_expiry, vended_resolution,
};
pub use sources::Sources;

/// Statistics of a table's columns, by column name (those that have any).
pub type ColumnStatisticsMap = std::collections::BTreeMap<String, hive::ColumnStatistics>;
pub use warehouse::{DiskRead, REWRITE_FROM, WAREHOUSE, Warehouse};
