//! Scan scopes over the node's sources (§8.2): opening a scope for a catalog, and what a
//! source's vended credentials say about their expiry.
//!
//! A scope resolves its tables through [`crate::Connector::scoped_access`] of the catalog's connector
//! as it is at each call (an ALTER of the catalog applies to the next refresh); its entries are
//! charged to the catalog's budget and refreshed with the catalog's
//! `scope.refresh-window.*` setting ([`metacache_catalog::scopes`]).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use metacache_cache::scope::{Resolution, Scope, ScopeError, ScopeOptions, resolver};

use crate::{Error, Sources};

/// Why a scope did not open.
#[derive(Debug, thiserror::Error)]
pub enum OpenScopeError {
    /// The catalog is unknown or its source cannot be reached.
    #[error(transparent)]
    Source(#[from] Error),
    /// The scope options or the node's bounds refused it.
    #[error(transparent)]
    Scope(#[from] ScopeError),
}

/// What a scope is opened with.
#[derive(Debug, Clone, Default)]
pub struct ScopeRequest {
    /// A free-form label shown in `catalog_meta_cache_scopes`.
    pub label: String,
    /// How long the scope lives unused (`None`: 5 minutes).
    pub idle_timeout: Option<Duration>,
}

impl Sources {
    /// Opens a scope over `catalog` (which must exist and have a source).
    pub fn open_scope(
        self: &Arc<Self>,
        catalog: &str,
        request: ScopeRequest,
    ) -> Result<Arc<Scope>, OpenScopeError> {
        let handle = self.manager().catalog(catalog).map_err(Error::from)?;
        // Fails now, not at the first task, when the catalog has no usable source.
        self.connector(catalog)?;
        let properties = handle.def().properties;
        let sources = Arc::clone(self);
        let name = catalog.to_owned();
        let scope = self.manager().scopes().open(ScopeOptions {
            catalog: catalog.to_owned(),
            label: request.label,
            idle_timeout: request.idle_timeout,
            window: metacache_catalog::scopes::refresh_window(&properties),
            budget: Arc::clone(handle.budget()),
            resolver: resolver(move |key, previous| {
                let sources = Arc::clone(&sources);
                let name = name.clone();
                async move {
                    let connector = sources.connector(&name)?;
                    Ok(connector
                        .scoped_access(&key.database, &key.table, previous)
                        .await?)
                }
            }),
        })?;
        Ok(scope)
    }
}

/// Keys that carry a vended credential's expiry, as Unix milliseconds: Lance's
/// `expires_at_millis`, Iceberg's `s3.session-token-expires-at-ms`,
/// `adls.sas-token-expires-at-ms.<account>`, `gcs.oauth2.token-expires-at`, and
/// `expiration-time`.
fn is_expiry_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    key == "expires_at_millis"
        || key == "expiration-time"
        || key.contains("expires-at-ms")
        || key.ends_with("token-expires-at")
}

/// The earliest expiry among `options`' expiry keys; `None` when there is none or one does not
/// parse as Unix milliseconds (the scope then assumes a minute).
pub fn vended_expiry(options: &BTreeMap<String, String>) -> Option<u64> {
    let mut earliest: Option<u64> = None;
    for value in options
        .iter()
        .filter(|(k, _)| is_expiry_key(k))
        .map(|(_, v)| v)
    {
        let at = value.trim().parse::<u64>().ok()?;
        earliest = Some(earliest.map_or(at, |e| e.min(at)));
    }
    earliest
}

/// Whether an option is part of a vended credential: a secret or its expiry (what a renewal
/// replaces).
pub(crate) fn is_credential_key(key: &str) -> bool {
    metacache_cache::redact::is_secret_name(key) || is_expiry_key(key)
}

/// Whether `options` carry a credential (a secret-named key that is not an expiry).
pub fn carries_credentials(options: &BTreeMap<String, String>) -> bool {
    options
        .keys()
        .any(|k| metacache_cache::redact::is_secret_name(k) && !is_expiry_key(k))
}

/// A resolution from `location` and `options` as a source vended them.
pub fn vended_resolution(
    location: String,
    metadata_location: Option<String>,
    storage_options: BTreeMap<String, String>,
) -> Resolution {
    let vended = carries_credentials(&storage_options);
    Resolution {
        expires_at_millis: if vended {
            vended_expiry(&storage_options)
        } else {
            None
        },
        location,
        metadata_location,
        storage_options,
        vended,
    }
}

/// The default of [`crate::Connector::scoped_access`].
pub(crate) fn unsupported(connector: &'static str) -> Error {
    Error::Unsupported {
        what: "Scan scopes".to_owned(),
        connector,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn expiries_of_lance_and_iceberg_are_read() {
        let lance = options(&[
            ("aws_access_key_id", "AK"),
            ("aws_secret_access_key", "SK"),
            ("expires_at_millis", "1800000000000"),
        ]);
        assert_eq!(vended_expiry(&lance), Some(1_800_000_000_000));
        assert!(carries_credentials(&lance));
        let iceberg = options(&[
            ("s3.access-key-id", "AK"),
            ("s3.secret-access-key", "SK"),
            ("s3.session-token", "T"),
            ("s3.session-token-expires-at-ms", "1800000000000"),
            (
                "adls.sas-token-expires-at-ms.acct.dfs.core.windows.net",
                "1700000000000",
            ),
        ]);
        assert_eq!(
            vended_expiry(&iceberg),
            Some(1_700_000_000_000),
            "the earliest"
        );
        let bad = options(&[
            ("s3.secret-access-key", "SK"),
            ("expires_at_millis", "soon"),
        ]);
        assert_eq!(
            vended_expiry(&bad),
            None,
            "an unparsable expiry is no expiry"
        );
        let plain = options(&[("region", "eu"), ("s3.endpoint", "http://x")]);
        assert!(!carries_credentials(&plain));
        let only_expiry = options(&[("expires_at_millis", "1")]);
        assert!(!carries_credentials(&only_expiry));
    }
}
