//! The shape of an engine's cache definitions: its configurable `<entry>` tokens, its physical
//! caches, its legacy keys and the rules that leave caches out for some catalogs.
//!
//! Definitions are plain data so that a remote engine can send its own as JSON
//! (`PUT /api/v1/engines/{engine}`); only [`Rule`]s, which are code, are built-in only.

use std::collections::BTreeMap;

use metacache_cache::Expiry;
use serde::{Deserialize, Serialize};

/// The engine whose `schema` entry every catalog has.
pub const DEFAULT_ENGINE: &str = "default";

/// A catalog `type` that every engine listing it applies to (the `default` engine).
pub const ANY_CATALOG_TYPE: &str = "*";

/// A catalog's properties, by key.
pub type PropertyMap = BTreeMap<String, String>;

/// The default TTL of an entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TtlDefault {
    /// Values live this many seconds.
    Seconds(u64),
    /// Values never expire.
    Never,
    /// The resolved TTL of another entry token of the same engine (`iceberg.partition` follows
    /// `iceberg.table`).
    SameAs(String),
}

/// One of the four settings of an entry: `meta.cache.<engine>.<entry>.<setting>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Setting {
    /// `enable`: `true` or `false`.
    #[serde(rename = "enable")]
    Enable,
    /// `ttl-second`: seconds, `0` disables, `-1` means the default.
    #[serde(rename = "ttl-second")]
    TtlSecond,
    /// `capacity`: values, `0` disables.
    #[serde(rename = "capacity")]
    Capacity,
    /// `max-weight`: a positive size.
    #[serde(rename = "max-weight")]
    MaxWeight,
    /// `auto-refresh`: `true` or `false` (refresh-ahead, §8.3).
    #[serde(rename = "auto-refresh")]
    AutoRefresh,
    /// `advisor`: `true` (the default) or `false`, the quota advisor of the entry's caches
    /// (§8.5).
    #[serde(rename = "advisor")]
    Advisor,
}

impl Setting {
    /// Every setting, in key order of the docs.
    pub const ALL: [Setting; 6] = [
        Setting::Enable,
        Setting::TtlSecond,
        Setting::Capacity,
        Setting::MaxWeight,
        Setting::AutoRefresh,
        Setting::Advisor,
    ];

    /// The key suffix.
    pub fn suffix(self) -> &'static str {
        match self {
            Setting::Enable => "enable",
            Setting::TtlSecond => "ttl-second",
            Setting::Capacity => "capacity",
            Setting::MaxWeight => "max-weight",
            Setting::AutoRefresh => "auto-refresh",
            Setting::Advisor => "advisor",
        }
    }

    /// The setting a key suffix names.
    pub fn from_suffix(suffix: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.suffix() == suffix)
    }
}

/// Defaults of an entry token: enable / TTL / capacity (§6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryDefaults {
    /// `enable`.
    pub enable: bool,
    /// `ttl-second`.
    pub ttl: TtlDefault,
    /// `capacity`.
    pub capacity: u64,
    /// The most a `capacity` property may raise it to (`lance.table_access`: 10,000 per
    /// catalog client generation, §8.1); larger values are clamped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_capacity: Option<u64>,
    /// `auto-refresh`: whether values are refreshed before they expire (§8.3). On only for
    /// entries whose source has a cheap change check; absent in a remote definition: off.
    #[serde(default)]
    pub auto_refresh: bool,
}

/// A configurable `<entry>` token of an engine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryDef {
    /// The `<entry>` token of `meta.cache.<engine>.<entry>.*`.
    pub token: String,
    /// Its defaults.
    pub defaults: EntryDefaults,
    /// When the TTL of its caches starts counting.
    #[serde(default, with = "expiry_serde")]
    pub expiry: Expiry,
    /// What it caches, for the docs and `--help`.
    #[serde(default)]
    pub description: String,
}

/// Where a physical cache takes its settings and its budget from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheSource {
    /// From an entry token: its settings, and its entry budget (shared by every cache of the
    /// token).
    Entry(String),
    /// No entry token: only the catalog and node limits apply; fixed capacity, and the TTL of
    /// `ttl_from` (an entry token of the engine) or `ttl` when there is none.
    Tokenless {
        /// The entry token whose `ttl-second` this cache follows.
        #[serde(default)]
        ttl_from: Option<String>,
        /// The TTL when `ttl_from` is absent.
        ttl: TtlDefault,
        /// The capacity.
        capacity: u64,
    },
}

/// One physical cache: one row of the statistics table per catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheDef {
    /// The ENTRY_NAME.
    pub entry_name: String,
    /// Where its settings come from.
    pub source: CacheSource,
    /// What it caches, for the docs.
    #[serde(default)]
    pub description: String,
}

impl CacheDef {
    /// A cache configured by `token`.
    pub fn entry(entry_name: &str, token: &str, description: &str) -> Self {
        Self {
            entry_name: entry_name.to_owned(),
            source: CacheSource::Entry(token.to_owned()),
            description: description.to_owned(),
        }
    }

    /// A cache with no token.
    pub fn tokenless(
        entry_name: &str,
        ttl_from: Option<&str>,
        ttl: TtlDefault,
        capacity: u64,
        description: &str,
    ) -> Self {
        Self {
            entry_name: entry_name.to_owned(),
            source: CacheSource::Tokenless {
                ttl_from: ttl_from.map(str::to_owned),
                ttl,
                capacity,
            },
            description: description.to_owned(),
        }
    }

    /// The entry token, if the cache has one.
    pub fn token(&self) -> Option<&str> {
        match &self.source {
            CacheSource::Entry(token) => Some(token),
            CacheSource::Tokenless { .. } => None,
        }
    }
}

/// A legacy catalog property that sets one setting of one entry when the unified key is absent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LegacyKey {
    /// The legacy property key, e.g. `file.meta.cache.ttl-second`.
    pub key: String,
    /// The entry token it sets.
    pub entry: String,
    /// The setting it sets.
    pub setting: Setting,
}

impl LegacyKey {
    /// A legacy key for the `ttl-second` of `entry`.
    pub fn ttl(key: &str, entry: &str) -> Self {
        Self {
            key: key.to_owned(),
            entry: entry.to_owned(),
            setting: Setting::TtlSecond,
        }
    }
}

/// A built-in rule that leaves some caches out of a catalog, for its properties.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// Why, for logs and docs.
    pub description: &'static str,
    /// Whether the rule applies to a catalog with these properties.
    pub applies: fn(&PropertyMap) -> bool,
    /// The ENTRY_NAMEs it leaves out.
    pub suppresses: &'static [&'static str],
}

/// Everything an engine declares about its caches.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EngineDef {
    /// ENGINE_NAME: the name caches report under.
    pub name: String,
    /// The `<engine>` token of its properties, when it differs from `name` (Hudi catalogs are
    /// configured by `meta.cache.hive.*`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_engine: Option<String>,
    /// The catalog `type`s whose catalogs have this engine's caches ([`ANY_CATALOG_TYPE`] for
    /// all).
    pub catalog_types: Vec<String>,
    /// The configurable entry tokens.
    #[serde(default)]
    pub entries: Vec<EntryDef>,
    /// The physical caches.
    pub caches: Vec<CacheDef>,
    /// Legacy keys.
    #[serde(default)]
    pub legacy: Vec<LegacyKey>,
    /// Built-in rules (never sent over the wire).
    #[serde(skip)]
    pub rules: Vec<Rule>,
    /// What the engine is, for the docs.
    #[serde(default)]
    pub description: String,
}

impl EngineDef {
    /// The `<engine>` token of this engine's properties.
    pub fn config_engine(&self) -> &str {
        self.config_engine.as_deref().unwrap_or(&self.name)
    }

    /// The entry `token`, if declared.
    pub fn entry(&self, token: &str) -> Option<&EntryDef> {
        self.entries.iter().find(|e| e.token == token)
    }

    /// The cache named `entry_name`, if declared.
    pub fn cache(&self, entry_name: &str) -> Option<&CacheDef> {
        self.caches.iter().find(|c| c.entry_name == entry_name)
    }

    /// Whether some cache is configured by `token`: such tokens accept every setting, including
    /// `max-weight`; the others (`paimon.table`) only set a TTL that token-less caches follow.
    pub fn has_caches(&self, token: &str) -> bool {
        self.caches.iter().any(|c| c.token() == Some(token))
    }

    /// Whether `meta.cache.<engine>.<token>.<setting>` is a setting this engine reads.
    pub fn accepts(&self, token: &str, setting: Setting) -> bool {
        self.entry(token).is_some()
            && (setting == Setting::TtlSecond
                || self.has_caches(token)
                || (matches!(setting, Setting::AutoRefresh | Setting::Advisor)
                    && self.configures_tokenless(token)))
    }

    /// Whether `token` has no cache of its own but configures caches without a token (their TTL
    /// and, then, their `auto-refresh` and `advisor`): `paimon.table` for
    /// `paimon-latest-snapshot`.
    pub fn configures_tokenless(&self, token: &str) -> bool {
        !self.has_caches(token)
            && self.caches.iter().any(|c| {
                matches!(&c.source, CacheSource::Tokenless { ttl_from: Some(t), .. } if t == token)
            })
    }

    /// Whether catalogs of `catalog_type` have this engine's caches.
    pub fn serves(&self, catalog_type: &str) -> bool {
        self.catalog_types
            .iter()
            .any(|t| t == ANY_CATALOG_TYPE || t.eq_ignore_ascii_case(catalog_type))
    }

    /// The caches a catalog with `properties` gets: every declared cache that no rule leaves
    /// out.
    pub fn caches_for<'a>(&'a self, properties: &PropertyMap) -> Vec<&'a CacheDef> {
        let suppressed: Vec<&str> = self
            .rules
            .iter()
            .filter(|rule| (rule.applies)(properties))
            .flat_map(|rule| rule.suppresses.iter().copied())
            .collect();
        self.caches
            .iter()
            .filter(|c| !suppressed.contains(&c.entry_name.as_str()))
            .collect()
    }
}

mod expiry_serde {
    use metacache_cache::Expiry;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(expiry: &Expiry, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match expiry {
            Expiry::AfterWrite => "after_write",
            Expiry::AfterAccess => "after_access",
        })
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Expiry, D::Error> {
        match String::deserialize(d)?.as_str() {
            "after_write" => Ok(Expiry::AfterWrite),
            "after_access" => Ok(Expiry::AfterAccess),
            other => Err(serde::de::Error::unknown_variant(
                other,
                &["after_write", "after_access"],
            )),
        }
    }
}
