//! The registry of engines: the built-in ones, and those remote engines define at runtime.
//!
//! Readers get `Arc<EngineDef>` snapshots; a redefinition replaces the `Arc`, so a catalog
//! that resolved its caches from the old definition keeps a consistent view until it rebuilds.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use parking_lot::RwLock;

use crate::{ANY_CATALOG_TYPE, CacheSource, EngineDef, Error, Result, TtlDefault, builtin};

/// The engines known to a node.
#[derive(Debug, Default)]
pub struct EngineRegistry {
    engines: RwLock<BTreeMap<String, Arc<EngineDef>>>,
    builtin: BTreeSet<String>,
}

impl EngineRegistry {
    /// A registry of the built-in engines (`default`, `hive`, `hudi`, `iceberg`, `paimon`,
    /// `max_compute`, `adbc`, `doris`, `lance`).
    pub fn builtin() -> Self {
        let mut engines = BTreeMap::new();
        for engine in builtin::all() {
            engines.insert(engine.name.clone(), Arc::new(engine));
        }
        Self {
            builtin: engines.keys().cloned().collect(),
            engines: RwLock::new(engines),
        }
    }

    /// Adds or replaces a runtime-defined engine, after checking that the definition holds
    /// together. Built-in engines can not be replaced.
    pub fn register(&self, engine: EngineDef) -> Result<Arc<EngineDef>> {
        if self.builtin.contains(&engine.name) {
            return Err(Error::BuiltinEngine {
                engine: engine.name,
            });
        }
        validate(&engine)?;
        let engine = Arc::new(engine);
        self.engines
            .write()
            .insert(engine.name.clone(), Arc::clone(&engine));
        Ok(engine)
    }

    /// Removes a runtime-defined engine; returns whether it existed.
    pub fn unregister(&self, name: &str) -> Result<bool> {
        if self.builtin.contains(name) {
            return Err(Error::BuiltinEngine {
                engine: name.to_owned(),
            });
        }
        Ok(self.engines.write().remove(name).is_some())
    }

    /// Whether `name` is a built-in engine.
    pub fn is_builtin(&self, name: &str) -> bool {
        self.builtin.contains(name)
    }

    /// The engine named `name`.
    pub fn get(&self, name: &str) -> Option<Arc<EngineDef>> {
        self.engines.read().get(name).cloned()
    }

    /// Every engine, by name.
    pub fn all(&self) -> Vec<Arc<EngineDef>> {
        self.engines.read().values().cloned().collect()
    }

    /// The engines configured by `meta.cache.<config_engine>.*` (`hive` → hive and hudi).
    pub fn configured_by(&self, config_engine: &str) -> Vec<Arc<EngineDef>> {
        self.engines
            .read()
            .values()
            .filter(|e| e.config_engine() == config_engine)
            .cloned()
            .collect()
    }

    /// The engines whose caches catalogs of `catalog_type` have, `default` first.
    pub fn for_catalog_type(&self, catalog_type: &str) -> Vec<Arc<EngineDef>> {
        let mut engines: Vec<_> = self
            .engines
            .read()
            .values()
            .filter(|e| e.serves(catalog_type))
            .cloned()
            .collect();
        engines.sort_by_key(|e| {
            (
                !e.catalog_types.iter().any(|t| t == ANY_CATALOG_TYPE),
                e.name.clone(),
            )
        });
        engines
    }

    /// Every catalog `type` some engine serves.
    pub fn catalog_types(&self) -> BTreeSet<String> {
        self.engines
            .read()
            .values()
            .flat_map(|e| e.catalog_types.iter())
            .filter(|t| *t != ANY_CATALOG_TYPE)
            .map(|t| t.to_ascii_lowercase())
            .collect()
    }
}

fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// Checks that names are well-formed and unique and that every reference points at a
/// declared entry token.
pub fn validate(engine: &EngineDef) -> Result<()> {
    let fail = |reason: String| {
        Err(Error::InvalidDefinition {
            engine: engine.name.clone(),
            reason,
        })
    };
    if !is_token(&engine.name) {
        return fail("the engine name must be lower-case letters, digits and '_'".into());
    }
    if !is_token(engine.config_engine()) {
        return fail("config_engine must be lower-case letters, digits and '_'".into());
    }
    if engine.catalog_types.is_empty() {
        return fail("catalog_types is empty".into());
    }
    let mut tokens = BTreeSet::new();
    for entry in &engine.entries {
        if !is_token(&entry.token) {
            return fail(format!(
                "entry token '{}' is not lower-case letters, digits and '_'",
                entry.token
            ));
        }
        if !tokens.insert(entry.token.as_str()) {
            return fail(format!("entry token '{}' is declared twice", entry.token));
        }
    }
    let known = |token: &str| tokens.contains(token);
    for entry in &engine.entries {
        if let TtlDefault::SameAs(other) = &entry.defaults.ttl {
            if !known(other) {
                return fail(format!(
                    "entry '{}' takes its TTL from unknown entry '{other}'",
                    entry.token
                ));
            }
            if same_as_cycle(engine, &entry.token) {
                return fail(format!(
                    "the TTL of entry '{}' refers back to itself",
                    entry.token
                ));
            }
        }
    }
    if engine.caches.is_empty() {
        return fail("it declares no cache".into());
    }
    let mut names = BTreeSet::new();
    for cache in &engine.caches {
        let name = &cache.entry_name;
        if name.is_empty()
            || name.len() > 128
            || name.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            return fail(format!(
                "ENTRY_NAME '{name}' must be 1 to 128 characters without blanks"
            ));
        }
        if !names.insert(name.as_str()) {
            return fail(format!("ENTRY_NAME '{name}' is declared twice"));
        }
        let referenced = match &cache.source {
            CacheSource::Entry(token) => Some(token),
            CacheSource::Tokenless { ttl_from, .. } => ttl_from.as_ref(),
        };
        if let Some(token) = referenced.filter(|t| !known(t)) {
            return fail(format!("cache '{name}' refers to unknown entry '{token}'"));
        }
    }
    for legacy in &engine.legacy {
        if !known(&legacy.entry) || legacy.key.starts_with(crate::KEY_PREFIX) {
            return fail(format!(
                "legacy key '{}' must map to a declared entry",
                legacy.key
            ));
        }
    }
    Ok(())
}

fn same_as_cycle(engine: &EngineDef, start: &str) -> bool {
    let mut current = start;
    for _ in 0..=engine.entries.len() {
        match engine.entry(current).map(|e| &e.defaults.ttl) {
            Some(TtlDefault::SameAs(next)) if next == start => return true,
            Some(TtlDefault::SameAs(next)) => current = next,
            _ => return false,
        }
    }
    true
}
