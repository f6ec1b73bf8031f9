//! Errors of engine definitions and of cache setting values.

/// What can be wrong with a definition or a setting value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// An `enable` value that is neither `true` nor `false`.
    #[error("Invalid value for '{key}': {value} (expected true or false)")]
    InvalidBool {
        /// The property key.
        key: String,
        /// The value given.
        value: String,
    },
    /// A `ttl-second` or `capacity` value that is not an integer of at least `-1`.
    #[error("Invalid value for '{key}': {value} (expected an integer, -1 for the default)")]
    InvalidInteger {
        /// The property key.
        key: String,
        /// The value given.
        value: String,
    },
    /// An engine definition that does not hold together.
    #[error("Invalid definition of engine '{engine}': {reason}")]
    InvalidDefinition {
        /// The engine's name.
        engine: String,
        /// What is wrong.
        reason: String,
    },
    /// An attempt to replace a built-in engine.
    #[error("Engine '{engine}' is built in and can not be redefined")]
    BuiltinEngine {
        /// The engine's name.
        engine: String,
    },
}

/// Results of this crate.
pub type Result<T> = std::result::Result<T, Error>;
