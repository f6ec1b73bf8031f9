//! `lance`: resolutions of Lance tables to their URI and access options (credential-free ones
//! only, §8.1).

use super::{entry, types};
use crate::{CacheDef, EngineDef, LegacyKey, TtlDefault};

/// ENTRY_NAME of table-access resolutions.
pub const TABLE_ACCESS: &str = "lance-table-access";

/// The definition.
pub fn engine() -> EngineDef {
    EngineDef {
        name: "lance".to_owned(),
        config_engine: None,
        catalog_types: types(&["lance"]),
        entries: vec![entry(
            "table_access",
            true,
            TtlDefault::Seconds(60),
            10_000,
            "table URI and access options",
        )],
        caches: vec![CacheDef::entry(
            TABLE_ACCESS,
            "table_access",
            "credential-free table resolutions",
        )],
        legacy: vec![LegacyKey::ttl(
            "lance.table_access_cache_ttl_seconds",
            "table_access",
        )],
        rules: Vec::new(),
        description: "Lance tables: credential-free table-access resolutions".to_owned(),
    }
}
