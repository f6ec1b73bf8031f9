//! Errors of SQL statements. Front ends turn them into MySQL error packets or JSON; each
//! variant knows its MySQL error code and SQLSTATE.

/// Why a statement failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The text does not parse; the message says what was expected and where.
    #[error("{message}")]
    Parse {
        /// The parser's message, with line and column.
        message: String,
    },
    /// A statement metacache does not run.
    #[error(
        "Unsupported statement: {what}. metacache runs CREATE/ALTER/DROP/SHOW/REFRESH CATALOG, ADMIN SET/SHOW FRONTEND CONFIG, SHOW and read-only SELECT"
    )]
    Unsupported {
        /// The statement's first words.
        what: String,
    },
    /// More than one statement in one request.
    #[error("One statement at a time, please: found {count}")]
    MultipleStatements {
        /// How many.
        count: usize,
    },
    /// An empty request.
    #[error("Empty statement")]
    Empty,
    /// A statement that needs a current database, with none selected.
    #[error("No database selected: {hint}")]
    NoDatabase {
        /// How to name one.
        hint: String,
    },
    /// A database other than `information_schema`.
    #[error("Unknown database '{name}'")]
    UnknownDatabase {
        /// The name.
        name: String,
    },
    /// A column no table of the query has.
    #[error("Unknown column '{name}' in 'field list'")]
    UnknownColumn {
        /// The column as written.
        name: String,
    },
    /// A table `information_schema` does not have.
    #[error("Table '{name}' doesn't exist")]
    UnknownTable {
        /// `schema.table`.
        name: String,
    },
    /// A catalog statement failed (validation messages of §4 included, verbatim).
    #[error(transparent)]
    Catalog(#[from] metacache_catalog::Error),
    /// A catalog's metadata source failed or refused.
    #[error(transparent)]
    Source(metacache_sources::Error),
    /// The query engine refused or failed the SELECT.
    #[error("{message}")]
    Query {
        /// DataFusion's message, without its internal prefixes.
        message: String,
    },
    /// A read-only statement ran longer than `query_timeout_seconds`.
    #[error(
        "Query execution was interrupted, maximum statement execution time exceeded ({seconds} s, query_timeout_seconds)"
    )]
    QueryTimeout {
        /// The limit.
        seconds: u64,
    },
    /// A blocking task of a statement did not finish (the server is shutting down).
    #[error("Internal error: {detail}")]
    Internal {
        /// What went wrong.
        detail: String,
    },
}

impl Error {
    /// The MySQL error number (`ER_*`) that describes this error best.
    pub fn mysql_code(&self) -> u16 {
        match self {
            Error::Parse { .. } | Error::Empty | Error::MultipleStatements { .. } => 1064, // ER_PARSE_ERROR
            Error::Unsupported { .. } => 1235, // ER_NOT_SUPPORTED_YET
            Error::NoDatabase { .. } => 1046,  // ER_NO_DB_ERROR (SQLSTATE 3D000)
            Error::UnknownDatabase { .. } => 1049, // ER_BAD_DB_ERROR
            Error::UnknownColumn { .. } => 1054, // ER_BAD_FIELD_ERROR
            Error::UnknownTable { .. } => 1146, // ER_NO_SUCH_TABLE
            Error::Catalog(metacache_catalog::Error::UnknownCatalog { .. }) => 1049,
            Error::Catalog(metacache_catalog::Error::CatalogExists { .. }) => 1007, // ER_DB_CREATE_EXISTS
            Error::Catalog(metacache_catalog::Error::UnknownConfig { .. }) => 1193, // ER_UNKNOWN_SYSTEM_VARIABLE
            Error::Catalog(metacache_catalog::Error::ConfigNotMutable { .. }) => 1238, // ER_INCORRECT_GLOBAL_LOCAL_VAR
            Error::Catalog(metacache_catalog::Error::Store(_)) => 1105,
            Error::Catalog(_) => 1105, // ER_UNKNOWN_ERROR, as Doris answers analysis errors
            Error::Source(metacache_sources::Error::Unsupported { .. }) => 1235,
            Error::Source(_) => 1105,
            Error::Query { .. } => 1105,
            Error::QueryTimeout { .. } => 1317, // ER_QUERY_INTERRUPTED
            Error::Internal { .. } => 1105,
        }
    }

    /// Whether the client sent something wrong (as opposed to a failure on our side); the HTTP
    /// front end answers 400 for these and 500 for the others.
    pub fn is_client_error(&self) -> bool {
        use metacache_sources::Error as S;
        !matches!(
            self,
            Error::Internal { .. }
                | Error::Catalog(metacache_catalog::Error::Store(_))
                | Error::Source(S::Store { .. } | S::Invalid { .. } | S::Load(_))
        )
    }
}

/// Results of this crate.
pub type Result<T> = std::result::Result<T, Error>;
