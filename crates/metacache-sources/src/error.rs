//! Errors of the connectors. Each says which catalog, object or location it concerns; none
//! carries a property value (secrets stay out of messages).

use std::sync::Arc;

/// Result of the connectors.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong reading a source.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// The catalog layer refused (unknown or dropped catalog, …).
    #[error(transparent)]
    Catalog(Arc<metacache_catalog::Error>),
    /// The catalog has no source to read from.
    #[error(
        "Catalog '{catalog}' has no metadata source: set 'warehouse' (a file:// path or an s3:// location) to read a Hive-style warehouse"
    )]
    NoSource {
        /// The catalog.
        catalog: String,
    },
    /// A catalog type metacache keeps definitions and caches for but reads no metadata from
    /// (Doris's `es`, `trino-connector`, `lakesoul`, and types without a connector here).
    #[error(
        "Catalog '{catalog}' (type '{catalog_type}') has no metadata connector in metacache: its caches serve embedded engines and the look-aside API"
    )]
    NoConnector {
        /// The catalog.
        catalog: String,
        /// Its type.
        catalog_type: String,
    },
    /// The catalog's connection properties are wrong.
    #[error("Invalid connection property of catalog '{catalog}': {reason}")]
    Connection {
        /// The catalog.
        catalog: String,
        /// What is wrong.
        reason: String,
    },
    /// The object does not exist.
    #[error("Unknown {kind} '{name}' in catalog '{catalog}'")]
    NotFound {
        /// `database`, `table`, `partition`, `column`.
        kind: &'static str,
        /// Its (dotted) name.
        name: String,
        /// The catalog.
        catalog: String,
    },
    /// The source answered with something that is not valid metadata.
    #[error("Invalid metadata at {location}: {reason}")]
    Invalid {
        /// The file or object.
        location: String,
        /// What is wrong.
        reason: String,
    },
    /// The object store failed.
    #[error("Reading {location} failed: {source}")]
    Store {
        /// The file, directory or prefix.
        location: String,
        /// The store's error.
        #[source]
        source: Arc<object_store::Error>,
    },
    /// A load through a cache failed (the loader's error is inside).
    #[error(transparent)]
    Load(metacache_cache::Error),
    /// The connector has no such metadata (`snapshots` of a Hive table, …).
    #[error("{what} is not supported by {connector} catalogs")]
    Unsupported {
        /// What was asked.
        what: String,
        /// The connector kind.
        connector: &'static str,
    },
}

impl From<metacache_catalog::Error> for Error {
    fn from(e: metacache_catalog::Error) -> Self {
        Error::Catalog(Arc::new(e))
    }
}

/// A failed load hands back the connector's own error when it was one of ours that says
/// "no such object" (the caller wants "Unknown table …", not a cache message around it).
impl From<metacache_cache::Error> for Error {
    fn from(e: metacache_cache::Error) -> Self {
        match e.source_error().downcast_ref::<Error>() {
            Some(inner) if inner.is_not_found() => inner.clone(),
            _ => Error::Load(e),
        }
    }
}

impl Error {
    /// "Unknown `kind` `name` in catalog `catalog`".
    pub(crate) fn not_found(catalog: &str, kind: &'static str, name: impl Into<String>) -> Self {
        Error::NotFound {
            kind,
            name: name.into(),
            catalog: catalog.to_owned(),
        }
    }

    /// A store error at `location`.
    pub(crate) fn store(location: impl Into<String>, source: object_store::Error) -> Self {
        Error::Store {
            location: location.into(),
            source: Arc::new(source),
        }
    }

    /// Whether the error means "no such object" (so front ends answer 404 / 1146 / 1049),
    /// looking through cache load errors.
    pub fn is_not_found(&self) -> bool {
        match self {
            Error::NotFound { .. } => true,
            Error::Catalog(e) => matches!(**e, metacache_catalog::Error::UnknownCatalog { .. }),
            Error::Load(e) => e
                .source_error()
                .downcast_ref::<Error>()
                .is_some_and(Error::is_not_found),
            _ => false,
        }
    }
}

/// The tables listed for `database`, unless the list is empty because there is no such
/// database (sources list a missing directory or namespace as empty): then "Unknown database".
pub(crate) async fn tables_of_known_database(
    tables: Vec<String>,
    catalog: &str,
    database: &str,
    databases: impl std::future::Future<Output = Result<Vec<String>>>,
) -> Result<Vec<String>> {
    if tables.is_empty() && !databases.await?.iter().any(|d| d == database) {
        return Err(Error::not_found(catalog, "database", database));
    }
    Ok(tables)
}
