//! A table-access resolution (the table's URI and the options to open it with) and the rule
//! that says whether it may be cached (§8.1): only when it carries no credentials.
//!
//! # The rule
//! A resolution is cached only if **all** hold:
//! - the namespace vended no storage options (a vended option set is a credential with a
//!   lifetime the cache cannot see the end of, even when `expires_at_millis` is given: a scan
//!   that starts near the end would fail half-way);
//! - the URI parses, as a URL or as an absolute path;
//! - it is not opaque (`scheme:data` without `//`, such as `mailto:`);
//! - it has no userinfo (`user:secret@`, also a bare `@` in the authority);
//! - it has no query (`?X-Amz-Signature=…`, SAS tokens) and no fragment.

use std::collections::BTreeMap;

use mem_dbg::MemSize;
use metacache_estimate::{EstimateSize, Sizer};
use serde::Serialize;

/// Where a table is and how to open it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, MemSize)]
pub struct TableAccess {
    /// The table's URI (`file:///…/t.lance`, `s3://bucket/…`, or an absolute path).
    pub uri: String,
    /// Options to open it with: the catalog's configured storage options, or those the
    /// namespace vended.
    pub storage_options: BTreeMap<String, String>,
    /// Whether `storage_options` were vended by the namespace (then never cached).
    pub vended: bool,
}

impl EstimateSize for TableAccess {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        sizer.add_string(&self.uri);
        sizer.add_string_map(&self.storage_options);
    }
}

/// Why a resolution is not cached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uncacheable {
    /// The namespace vended storage options.
    VendedStorageOptions,
    /// The URI has userinfo.
    UserInfo,
    /// The URI has a query.
    Query,
    /// The URI has a fragment.
    Fragment,
    /// The URI is opaque.
    Opaque,
    /// The URI does not parse.
    Unparsable,
}

impl Uncacheable {
    /// The reason as engines see it (`not_cached_because`).
    pub fn as_str(self) -> &'static str {
        match self {
            Uncacheable::VendedStorageOptions => "vended_storage_options",
            Uncacheable::UserInfo => "user_info",
            Uncacheable::Query => "query",
            Uncacheable::Fragment => "fragment",
            Uncacheable::Opaque => "opaque",
            Uncacheable::Unparsable => "unparsable",
        }
    }
}

impl TableAccess {
    /// `Ok` if the resolution may be cached, else why not.
    pub fn cacheability(&self) -> Result<(), Uncacheable> {
        if self.vended && !self.storage_options.is_empty() {
            return Err(Uncacheable::VendedStorageOptions);
        }
        classify_uri(&self.uri)
    }
}

/// The URI part of the rule.
pub fn classify_uri(uri: &str) -> Result<(), Uncacheable> {
    match url::Url::parse(uri) {
        Ok(url) => {
            if url.cannot_be_a_base() {
                return Err(Uncacheable::Opaque);
            }
            let authority = uri
                .split_once("://")
                .map(|(_, rest)| rest.split(['/', '?', '#']).next().unwrap_or(""));
            if !url.username().is_empty()
                || url.password().is_some()
                || authority.is_some_and(|a| a.contains('@'))
            {
                return Err(Uncacheable::UserInfo);
            }
            if url.query().is_some() {
                return Err(Uncacheable::Query);
            }
            if url.fragment().is_some() {
                return Err(Uncacheable::Fragment);
            }
            Ok(())
        }
        // A plain absolute path (what a directory namespace may answer).
        Err(url::ParseError::RelativeUrlWithoutBase) if uri.starts_with('/') => {
            if uri.contains('?') {
                Err(Uncacheable::Query)
            } else if uri.contains('#') {
                Err(Uncacheable::Fragment)
            } else {
                Ok(())
            }
        }
        Err(_) => Err(Uncacheable::Unparsable),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(uri: &str, options: &[(&str, &str)], vended: bool) -> TableAccess {
        TableAccess {
            uri: uri.to_owned(),
            storage_options: options
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            vended,
        }
    }

    #[test]
    fn plain_locations_are_cacheable() {
        for uri in [
            "file:///data/ns/items.lance",
            "/data/ns/items.lance",
            "s3://bucket/ns/f806e8c1_sales$orders",
            "gs://bucket/t.lance",
        ] {
            assert_eq!(access(uri, &[], false).cacheability(), Ok(()), "{uri}");
        }
        // Configured (not vended) options do not make it uncacheable.
        let configured = access("s3://b/t.lance", &[("region", "eu-west-1")], false);
        assert_eq!(configured.cacheability(), Ok(()));
        // A vending namespace that vended nothing this time.
        assert_eq!(access("s3://b/t.lance", &[], true).cacheability(), Ok(()));
    }

    #[test]
    fn vended_storage_options_are_never_cached_even_with_an_expiry() {
        let with_expiry = access(
            "s3://b/t.lance",
            &[
                ("access_key_id", "AK"),
                ("expires_at_millis", "99999999999999"),
            ],
            true,
        );
        assert_eq!(
            with_expiry.cacheability(),
            Err(Uncacheable::VendedStorageOptions)
        );
        let without = access("s3://b/t.lance", &[("session_token", "t")], true);
        assert_eq!(
            without.cacheability(),
            Err(Uncacheable::VendedStorageOptions)
        );
    }

    #[test]
    fn credential_bearing_or_unclassified_uris_are_never_cached() {
        let cases = [
            ("s3://AKIA:secret@bucket/t.lance", Uncacheable::UserInfo),
            ("https://user@host/t.lance", Uncacheable::UserInfo),
            ("az://account@container/t.lance", Uncacheable::UserInfo),
            ("s3://b/t.lance?X-Amz-Signature=abc", Uncacheable::Query),
            (
                "https://acct.blob.core.windows.net/c/t.lance?sv=2024&sig=x",
                Uncacheable::Query,
            ),
            ("s3://b/t.lance?", Uncacheable::Query),
            ("/data/t.lance?sig=1", Uncacheable::Query),
            ("file:///data/t.lance#token", Uncacheable::Fragment),
            ("/data/t.lance#x", Uncacheable::Fragment),
            ("mailto:someone@example.com", Uncacheable::Opaque),
            ("urn:lance:t", Uncacheable::Opaque),
            ("http://[::1", Uncacheable::Unparsable),
            ("relative/t.lance", Uncacheable::Unparsable),
            ("", Uncacheable::Unparsable),
        ];
        for (uri, why) in cases {
            assert_eq!(access(uri, &[], false).cacheability(), Err(why), "{uri}");
        }
    }
}
