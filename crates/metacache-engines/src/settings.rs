//! From a catalog's properties to the settings of each of its caches: unified keys first, then
//! legacy keys, then the entry's defaults.
//!
//! Resolution never fails: statements are validated before they are stored, and a value that
//! is invalid anyway (a store written by another version) falls back to the default. Size
//! values (`max-weight`) are parsed by the catalog layer, which owns their messages.

use std::time::Duration;

use metacache_cache::{AdvisorOptions, CacheConfig, Expiry};

use crate::keys::entry_key;
use crate::{CacheDef, CacheSource, EngineDef, Error, PropertyMap, Result, Setting, TtlDefault};

/// Parses an `enable` value: `true` or `false`, any case, blanks trimmed.
pub fn parse_enable(key: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(Error::InvalidBool {
            key: key.to_owned(),
            value: value.to_owned(),
        }),
    }
}

/// Parses a `ttl-second` or `capacity` value: a non-negative integer, or `-1` for the entry
/// default (`None`).
pub fn parse_count(key: &str, value: &str) -> Result<Option<u64>> {
    let invalid = || Error::InvalidInteger {
        key: key.to_owned(),
        value: value.to_owned(),
    };
    match value.trim().parse::<i64>().map_err(|_| invalid())? {
        -1 => Ok(None),
        n => u64::try_from(n).map(Some).map_err(|_| invalid()),
    }
}

/// The settings of one physical cache of a catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedCache {
    /// Its definition.
    pub def: CacheDef,
    /// `enable`, TTL, capacity and expiry after keys, legacy keys and defaults.
    pub config: CacheConfig,
}

/// Resolves the settings of every cache of `engine` that a catalog with `properties` has.
pub fn resolve(engine: &EngineDef, properties: &PropertyMap) -> Vec<ResolvedCache> {
    let resolver = Resolver { engine, properties };
    engine
        .caches_for(properties)
        .into_iter()
        .map(|def| ResolvedCache {
            config: resolver.config(def),
            def: def.clone(),
        })
        .collect()
}

struct Resolver<'a> {
    engine: &'a EngineDef,
    properties: &'a PropertyMap,
}

impl Resolver<'_> {
    fn config(&self, def: &CacheDef) -> CacheConfig {
        match &def.source {
            CacheSource::Entry(token) => {
                let entry = self.engine.entry(token);
                let (enable, capacity, expiry, auto_refresh) =
                    entry.map_or((true, 0, Expiry::AfterWrite, false), |e| {
                        (
                            e.defaults.enable,
                            e.defaults.capacity,
                            e.expiry,
                            e.defaults.auto_refresh,
                        )
                    });
                let ceiling = entry
                    .and_then(|e| e.defaults.max_capacity)
                    .unwrap_or(u64::MAX);
                let enable = self.flag(token, Setting::Enable).unwrap_or(enable);
                let auto_refresh = self
                    .flag(token, Setting::AutoRefresh)
                    .unwrap_or(auto_refresh);
                let capacity = self
                    .count(token, Setting::Capacity)
                    .unwrap_or(capacity)
                    .min(ceiling);
                CacheConfig::new(def.entry_name.as_str(), self.ttl(token, 0), capacity)
                    .with_enabled(enable)
                    .with_expiry(expiry)
                    .with_auto_refresh(auto_refresh)
                    .with_advisor(self.advisor(Some(token)))
            }
            CacheSource::Tokenless {
                ttl_from,
                ttl,
                capacity,
            } => {
                let ttl = match ttl_from {
                    Some(token) => self.ttl(token, 0),
                    None => self.default_ttl(ttl, 0),
                };
                // A token with no cache of its own configures its followers' auto-refresh too
                // (the followers of a token that has a cache, as Iceberg's table, do not
                // refresh: their token's refresher is not theirs).
                let auto_refresh = ttl_from
                    .as_deref()
                    .filter(|t| self.engine.configures_tokenless(t))
                    .is_some_and(|t| self.auto_refresh(t));
                CacheConfig::new(def.entry_name.as_str(), ttl, *capacity)
                    .with_auto_refresh(auto_refresh)
                    .with_advisor(self.advisor(ttl_from.as_deref()))
            }
        }
    }

    /// The values that set `setting` of `token`, strongest first: the unified key, then the
    /// legacy keys that map to it; each with the key it came from, for messages.
    fn values(&self, token: &str, setting: Setting) -> impl Iterator<Item = (String, &str)> {
        let key = entry_key(self.engine.config_engine(), token, setting);
        let unified = self.properties.get(&key).map(|v| (key, v.as_str()));
        let legacy = self
            .engine
            .legacy
            .iter()
            .filter(move |l| l.entry == token && l.setting == setting)
            .filter_map(|l| Some((l.key.clone(), self.properties.get(&l.key)?.as_str())));
        unified.into_iter().chain(legacy)
    }

    /// A `true`/`false` setting of `token`: the strongest value that parses (`None`: none set).
    fn flag(&self, token: &str, setting: Setting) -> Option<bool> {
        self.values(token, setting)
            .find_map(|(key, v)| parse_enable(&key, v).ok())
    }

    /// The quota advisor of a cache configured by `token` (`None`: a cache without one): on
    /// unless `advisor` of the token says `false`.
    fn advisor(&self, token: Option<&str>) -> Option<AdvisorOptions> {
        let on = token.is_none_or(|token| self.flag(token, Setting::Advisor).unwrap_or(true));
        on.then(AdvisorOptions::default)
    }

    /// `auto-refresh` of `token`: the property, else the entry's default.
    fn auto_refresh(&self, token: &str) -> bool {
        self.flag(token, Setting::AutoRefresh).unwrap_or_else(|| {
            self.engine
                .entry(token)
                .is_some_and(|e| e.defaults.auto_refresh)
        })
    }

    /// The first value of `setting` that is set to something other than "the default".
    fn count(&self, token: &str, setting: Setting) -> Option<u64> {
        self.values(token, setting)
            .find_map(|(key, v)| parse_count(&key, v).ok().flatten())
    }

    /// The TTL of `token`; `depth` bounds `SameAs` chains of a malformed definition.
    fn ttl(&self, token: &str, depth: usize) -> Option<Duration> {
        if let Some(seconds) = self.count(token, Setting::TtlSecond) {
            return Some(Duration::from_secs(seconds));
        }
        match self.engine.entry(token) {
            Some(entry) => self.default_ttl(&entry.defaults.ttl, depth),
            None => None,
        }
    }

    fn default_ttl(&self, ttl: &TtlDefault, depth: usize) -> Option<Duration> {
        match ttl {
            TtlDefault::Seconds(seconds) => Some(Duration::from_secs(*seconds)),
            TtlDefault::Never => None,
            TtlDefault::SameAs(_) if depth > 8 => None,
            TtlDefault::SameAs(other) => self.ttl(other, depth + 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enable_and_counts_parse_strictly() {
        assert_eq!(parse_enable("k", " TRUE "), Ok(true));
        assert_eq!(parse_enable("k", "false"), Ok(false));
        assert_eq!(
            parse_enable("k", "yes").map_err(|e| e.to_string()),
            Err("Invalid value for 'k': yes (expected true or false)".to_owned())
        );
        assert_eq!(parse_count("k", "0"), Ok(Some(0)));
        assert_eq!(parse_count("k", " 600 "), Ok(Some(600)));
        assert_eq!(parse_count("k", "-1"), Ok(None));
        for bad in ["-2", "1.5", "", "ten", "99999999999999999999"] {
            assert!(parse_count("k", bad).is_err(), "{bad}");
        }
    }
}
