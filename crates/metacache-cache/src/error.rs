//! Errors of the cache core.

use std::sync::Arc;

/// A boxed error from a loader, shared by every caller that waited on the load.
pub type SourceError = Arc<dyn std::error::Error + Send + Sync + 'static>;

/// What can go wrong in a managed cache.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// The loader failed. Every caller waiting on the same load receives the same error; nothing
    /// is cached, and the next access loads again.
    #[error("loading a value of cache entry '{entry}' failed: {source}")]
    Load {
        /// ENTRY_NAME of the cache.
        entry: Arc<str>,
        /// The loader's error.
        #[source]
        source: SourceError,
    },
}

/// Result of the cache core.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The loader's error, for downcasting to the engine's own error type.
    pub fn source_error(&self) -> &SourceError {
        match self {
            Self::Load { source, .. } => source,
        }
    }
}
