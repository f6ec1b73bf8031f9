//! `hudi`: the metastore caches of Hudi tables. They report under `hudi` but are configured by
//! the `meta.cache.hive.*` keys of the four metastore entries (and share no budget with the
//! Hive caches: each engine has its own entry budgets, with the same limits).

use super::hive::{CATALOG_TYPES, METASTORE_ENTRIES, metastore_legacy};
use super::{DAY, entry};
use crate::{CacheDef, EngineDef};

/// The definition.
pub fn engine() -> EngineDef {
    let mut entries = Vec::new();
    let mut caches = Vec::new();
    for (token, name, capacity, what) in METASTORE_ENTRIES {
        entries.push(entry(token, true, DAY, capacity, what));
        caches.push(CacheDef::entry(name, token, what));
    }
    let mut catalog_types: Vec<String> = CATALOG_TYPES.iter().map(|t| (*t).to_owned()).collect();
    catalog_types.push("hudi".to_owned());
    EngineDef {
        name: "hudi".to_owned(),
        config_engine: Some("hive".to_owned()),
        catalog_types,
        entries,
        caches,
        legacy: metastore_legacy(),
        rules: Vec::new(),
        description: "Hudi tables: metastore caches configured by meta.cache.hive.*".to_owned(),
    }
}
