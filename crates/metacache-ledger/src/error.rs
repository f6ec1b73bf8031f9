//! The validation messages of weight settings (§4), produced here and nowhere else.

/// A weight setting that cannot be accepted. The [`Display`](std::fmt::Display) text of each
/// variant is fixed by the specification: admins' scripts match on it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WeightError {
    /// The value is not a size (or, at node level, a percentage) at all.
    #[error("Invalid cache weight for '{key}': {value}")]
    Invalid {
        /// The property or configuration key.
        key: String,
        /// The value as the user wrote it.
        value: String,
    },
    /// A catalog or entry limit of zero.
    #[error("{key} must be positive")]
    NotPositive {
        /// The property key.
        key: String,
    },
    /// An entry limit above the catalog limit of the same catalog.
    #[error("{key} can not exceed meta.cache.max-weight")]
    ExceedsCatalogLimit {
        /// The entry's `max-weight` key.
        key: String,
    },
    /// A `max-weight` key of a known engine whose entry token does not accept one.
    #[error("Unknown metadata cache weight property: {key}")]
    UnknownProperty {
        /// The rejected key.
        key: String,
    },
}
