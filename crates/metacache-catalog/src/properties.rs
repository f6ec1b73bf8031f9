//! A catalog's properties, and which of them are secrets.
//!
//! Secrets are stored (the store file is readable by its owner only) but every way of showing
//! properties — listings, `Debug`, log lines, errors — goes through [`Properties::masked`] or
//! never includes values at all.

use std::collections::BTreeMap;
use std::fmt;

use metacache_engines::PropertyMap;
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

pub use metacache_cache::redact::MASK;

/// The property that names a catalog's type.
pub const TYPE_KEY: &str = "type";

/// Longest property key accepted.
pub const MAX_KEY_LEN: usize = 256;
/// Longest property value accepted.
pub const MAX_VALUE_LEN: usize = 64 * 1024;

/// Whether the value of `key` is a secret (by name: `password`, `passwd`, `secret`, `token`,
/// credentials, private, access and account keys; `metacache_cache::redact::is_secret_name`).
pub fn is_secret_key(key: &str) -> bool {
    metacache_cache::redact::is_secret_name(key)
}

/// A catalog's properties, ordered by key.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Properties(PropertyMap);

impl Properties {
    /// Properties from pairs; a later pair wins over an earlier one with the same key.
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Self(
            pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }

    /// The map, for engines' resolution.
    pub fn map(&self) -> &PropertyMap {
        &self.0
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// Sets `key`, returning the previous value.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<String>) -> Option<String> {
        self.0.insert(key.into(), value.into())
    }

    /// The keys.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// Number of properties.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// These properties with `other`'s set over them (ALTER CATALOG … SET PROPERTIES).
    pub fn merged(&self, other: &Properties) -> Properties {
        let mut merged = self.0.clone();
        merged.extend(other.0.iter().map(|(k, v)| (k.clone(), v.clone())));
        Self(merged)
    }

    /// The keys whose value differs between `self` and `other` (added, changed or removed).
    pub fn changed_keys<'a>(&'a self, other: &'a Properties) -> Vec<&'a str> {
        let mut keys: Vec<&str> = self
            .0
            .iter()
            .filter(|(k, v)| other.0.get(*k) != Some(*v))
            .map(|(k, _)| k.as_str())
            .chain(
                other
                    .0
                    .keys()
                    .map(String::as_str)
                    .filter(|k| !self.0.contains_key(*k)),
            )
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// Every property, secrets shown as [`MASK`]: the only way values leave the process. A
    /// secret key's whole value is masked; in any other value, the password of a URL
    /// (`user:…@`) and secret URL parameters (`?password=…`) are.
    pub fn masked(&self) -> BTreeMap<&str, std::borrow::Cow<'_, str>> {
        self.0
            .iter()
            .map(|(k, v)| {
                let shown = if is_secret_key(k) {
                    std::borrow::Cow::Borrowed(MASK)
                } else {
                    metacache_cache::redact::redact(v)
                };
                (k.as_str(), shown)
            })
            .collect()
    }

    /// Checks that keys and values are printable text of reasonable length. Messages name the
    /// key, never the value.
    pub fn check_text(&self) -> Result<()> {
        for (key, value) in &self.0 {
            let printable = |s: &str| !s.chars().any(|c| c.is_control() && c != '\t');
            if key.trim().is_empty() {
                return Err(invalid("key", "a key is empty"));
            }
            if key.len() > MAX_KEY_LEN || !printable(key) {
                return Err(invalid(
                    "key",
                    &format!("keys are at most {MAX_KEY_LEN} bytes of printable text"),
                ));
            }
            if value.len() > MAX_VALUE_LEN || value.contains('\0') {
                return Err(invalid(
                    &format!("key '{key}'"),
                    &format!("values are at most {MAX_VALUE_LEN} bytes without NUL"),
                ));
            }
        }
        Ok(())
    }
}

fn invalid(what: &str, reason: &str) -> Error {
    Error::InvalidProperty {
        what: what.to_owned(),
        reason: reason.to_owned(),
    }
}

impl fmt::Debug for Properties {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.masked()).finish()
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for Properties {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Self::from_pairs(iter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_keys_are_recognised() {
        for key in [
            "password",
            "jdbc.password",
            "s3.secret_key",
            "AWS_SECRET_ACCESS_KEY",
            "s3.access_key",
            "oss.accessKey",
            "fs.s3a.access.key",
            "iceberg.rest.oauth2.token",
            "iceberg.rest.oauth2.credential",
            "gcs.private_key",
            "hive.metastore.sasl.Password",
        ] {
            assert!(is_secret_key(key), "{key}");
        }
        for key in [
            "type",
            "uri",
            "user",
            "s3.endpoint",
            "meta.cache.max-weight",
            "warehouse",
        ] {
            assert!(!is_secret_key(key), "{key}");
        }
    }

    #[test]
    fn debug_and_masked_never_show_secrets() {
        let p = Properties::from_pairs([("password", "hunter2"), ("user", "alice")]);
        let debug = format!("{p:?}");
        assert!(!debug.contains("hunter2"), "{debug}");
        assert!(debug.contains(MASK) && debug.contains("alice"));
        assert_eq!(p.masked()["password"], MASK);
        assert_eq!(p.get("password"), Some("hunter2"), "stored as given");
    }

    #[test]
    fn merge_and_changed_keys() {
        let old = Properties::from_pairs([("a", "1"), ("b", "2")]);
        let set = Properties::from_pairs([("b", "2"), ("c", "3")]);
        let merged = old.merged(&set);
        assert_eq!(merged.len(), 3);
        assert_eq!(old.changed_keys(&merged), ["c"]);
        let set = Properties::from_pairs([("a", "9")]);
        assert_eq!(old.changed_keys(&old.merged(&set)), ["a"]);
    }

    #[test]
    fn unprintable_or_oversized_text_is_refused_without_echoing_values() {
        let long = "x".repeat(MAX_VALUE_LEN + 1);
        let bad = Properties::from_pairs([("password", long.as_str())]);
        let message = bad.check_text().expect_err("too long").to_string();
        assert!(message.contains("key 'password'") && !message.contains("xxxx"));
        assert!(
            Properties::from_pairs([("a\nb", "v")])
                .check_text()
                .is_err()
        );
        assert!(Properties::from_pairs([(" ", "v")]).check_text().is_err());
        assert!(Properties::from_pairs([("k", "v\0")]).check_text().is_err());
        assert!(
            Properties::from_pairs([("k", "tab\tok")])
                .check_text()
                .is_ok()
        );
    }
}
