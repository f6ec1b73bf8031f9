//! Errors of catalog statements, the catalog store and the node configuration.
//!
//! The messages of weight settings are the ledger's [`WeightError`] (fixed by the spec); the
//! others are ours. No message ever carries the value of a secret property.

use std::path::PathBuf;

use metacache_ledger::WeightError;

/// Why a statement, a store operation or a configuration change was refused.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A weight setting the spec has a message for.
    #[error(transparent)]
    Weight(#[from] WeightError),
    /// An `enable`, `ttl-second` or `capacity` value, or an engine definition.
    #[error(transparent)]
    Engine(#[from] metacache_engines::Error),
    /// A `meta.cache.*` key that no engine reads.
    #[error("Unknown metadata cache property: {key}{hint}")]
    UnknownProperty {
        /// The key.
        key: String,
        /// A suggestion, starting with `; `, or empty.
        hint: String,
    },
    /// A polling interval that is not `0` or a number of milliseconds within bounds.
    #[error(
        "Invalid value for property '{key}': '{value}' (milliseconds: 0 turns polling off, else {min} to {max})"
    )]
    InvalidPollingInterval {
        /// The key.
        key: String,
        /// The value given.
        value: String,
        /// The shortest interval.
        min: u64,
        /// The longest interval.
        max: u64,
    },
    /// A scope setting (`scope.refresh-window.*`) out of range.
    #[error("Invalid value for property '{key}': '{value}' ({expected})")]
    InvalidScopeSetting {
        /// The key.
        key: String,
        /// The value given.
        value: String,
        /// What it takes.
        expected: &'static str,
    },
    /// A property key or value that is not acceptable text.
    #[error("Invalid property {what}: {reason}")]
    InvalidProperty {
        /// `key '<key>'`, or `key` when the key itself is unprintable.
        what: String,
        /// Why.
        reason: String,
    },
    /// CREATE CATALOG without `type`.
    #[error(
        "Missing 'type' property: CREATE CATALOG needs PROPERTIES (\"type\" = \"<type>\"), one of {known}"
    )]
    MissingType {
        /// The known types, comma-separated.
        known: String,
    },
    /// A `type` no engine serves.
    #[error("Unknown catalog type '{catalog_type}'; known types: {known}")]
    UnknownType {
        /// The type given.
        catalog_type: String,
        /// The known types, comma-separated.
        known: String,
    },
    /// ALTER CATALOG that changes `type`.
    #[error("Can not change the type of catalog '{catalog}' from '{from}' to '{to}'")]
    TypeChange {
        /// The catalog.
        catalog: String,
        /// Its type.
        from: String,
        /// The type asked for.
        to: String,
    },
    /// A catalog name that is not an identifier, or is reserved.
    #[error("Invalid catalog name '{name}': {reason}")]
    InvalidName {
        /// The name given (control characters escaped).
        name: String,
        /// Why.
        reason: &'static str,
    },
    /// CREATE CATALOG of a name in use.
    #[error("Catalog '{name}' already exists")]
    CatalogExists {
        /// The name.
        name: String,
    },
    /// A location or host outside the node's allow-lists (`reach.rs`).
    #[error(
        "Catalog '{catalog}': '{property}' = '{value}' is outside {node_key}, the node's allow-list; the node's operator can add it to the configuration file"
    )]
    NotAllowed {
        /// The catalog.
        catalog: String,
        /// The property, or what named the location (`table metadata`).
        property: String,
        /// The location or URL, with any password masked.
        value: String,
        /// `source_allowed_locations` or `source_allowed_hosts`.
        node_key: &'static str,
    },
    /// A statement on a catalog that does not exist.
    #[error("Unknown catalog '{name}'")]
    UnknownCatalog {
        /// The name.
        name: String,
    },
    /// Use of a catalog handle after DROP CATALOG.
    #[error("Catalog '{name}' was dropped")]
    CatalogDropped {
        /// The name.
        name: String,
    },
    /// A cache its catalog does not declare.
    #[error("Catalog '{catalog}' has no cache '{entry_name}' of engine '{engine}'")]
    UnknownCache {
        /// The catalog.
        catalog: String,
        /// The engine.
        engine: String,
        /// The ENTRY_NAME.
        entry_name: String,
    },
    /// A cache asked for with key or value types other than those it was built with.
    #[error("Cache '{entry_name}' of engine '{engine}' was built with other key or value types")]
    CacheType {
        /// The engine.
        engine: String,
        /// The ENTRY_NAME.
        entry_name: String,
    },
    /// The durable store failed; nothing was changed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A node configuration key that does not exist.
    #[error("Unknown configuration key '{key}'")]
    UnknownConfig {
        /// The key.
        key: String,
    },
    /// A node configuration key that only a restart changes.
    #[error(
        "Configuration key '{key}' can not be changed at runtime; set it in the config file and restart"
    )]
    ConfigNotMutable {
        /// The key.
        key: String,
    },
    /// A node configuration value that does not parse.
    #[error("Invalid value for configuration key '{key}': {value} ({expected})")]
    InvalidConfig {
        /// The key.
        key: String,
        /// The value given.
        value: String,
        /// What is accepted.
        expected: &'static str,
    },
    /// An allow-list configuration value with a rule that does not parse.
    #[error("Invalid value for configuration key '{key}': {reason}")]
    InvalidConfigList {
        /// The key.
        key: &'static str,
        /// The rule at fault and why (it quotes the rule).
        reason: String,
    },
    /// The configuration file could not be read or is not TOML.
    #[error("Cannot read configuration file {path}: {detail}")]
    ConfigFile {
        /// The file.
        path: PathBuf,
        /// What went wrong (includes the line for syntax errors).
        detail: String,
    },
    /// A percentage node limit on a machine whose memory could not be determined.
    #[error(
        "Cannot resolve '{key}' = {value}: the node memory budget is unknown; set node_memory_budget"
    )]
    NodeMemoryUnknown {
        /// The key.
        key: String,
        /// The percentage.
        value: String,
    },
}

/// Failures of a [`CatalogStore`](crate::CatalogStore).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file system operation failed.
    #[error("Catalog store {op} {path} failed: {source}")]
    Io {
        /// What was being done (`read`, `write`, `lock`, …).
        op: &'static str,
        /// On which path.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Another process holds the store.
    #[error("Catalog store {path} is in use by another process")]
    Locked {
        /// The lock file.
        path: PathBuf,
    },
    /// The stored document does not parse. The file is left untouched for the admin.
    #[error("Catalog store {path} is unreadable: {detail}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// The stored document was written by a newer version.
    #[error("Catalog store {path} has format {found}; this version reads format {supported}")]
    UnsupportedFormat {
        /// The file.
        path: PathBuf,
        /// Its format number.
        found: u64,
        /// Ours.
        supported: u64,
    },
    /// A shared store cannot be reached (or failed mid-commit): nothing was changed anywhere.
    #[error("Catalog store {store} is unreachable: {reason}; nothing was changed")]
    Unavailable {
        /// The store (`postgres://user@host:port/db`, without a password).
        store: String,
        /// What failed.
        reason: String,
    },
    /// A shared store already holds a catalog of that name (another node created it).
    #[error("Catalog '{catalog}' already exists in the catalog store")]
    Exists {
        /// The name.
        catalog: String,
    },
    /// Another node changed the catalog after this node last saw it: the statement would
    /// overwrite that change, so it is refused (run it again once the change has arrived).
    #[error(
        "Catalog '{catalog}' was changed on another node meanwhile; nothing was changed, run the statement again"
    )]
    Conflict {
        /// The name.
        catalog: String,
    },
    /// A shared store no longer holds the catalog (another node dropped or renamed it).
    #[error("Catalog '{catalog}' no longer exists in the catalog store")]
    Gone {
        /// The name.
        catalog: String,
    },
}

impl Error {
    /// A store error as the statement's error: a catalog that exists or is gone elsewhere is
    /// the same error as on one node.
    pub(crate) fn from_store(error: StoreError) -> Self {
        match error {
            StoreError::Exists { catalog } => Error::CatalogExists { name: catalog },
            StoreError::Gone { catalog } => Error::UnknownCatalog { name: catalog },
            other => Error::Store(other),
        }
    }
}

/// Results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
