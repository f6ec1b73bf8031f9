//! `lance`: resolutions of Lance tables to their URI and access options (credential-free ones
//! only, §8.1).

use super::{entry, types};
use crate::{CacheDef, EngineDef, LegacyKey, TtlDefault};

/// ENTRY_NAME of table-access resolutions.
pub const TABLE_ACCESS: &str = "lance-table-access";

/// The most resolutions a catalog client generation keeps (§8.1): also the ceiling of
/// `meta.cache.lance.table_access.capacity`.
pub const TABLE_ACCESS_MAX: u64 = 10_000;

/// The definition.
pub fn engine() -> EngineDef {
    EngineDef {
        name: "lance".to_owned(),
        config_engine: None,
        catalog_types: types(&["lance"]),
        entries: vec![{
            let mut table_access = entry(
                "table_access",
                true,
                TtlDefault::Seconds(60),
                TABLE_ACCESS_MAX,
                "table URI and access options",
            );
            table_access.defaults.max_capacity = Some(TABLE_ACCESS_MAX);
            table_access
        }],
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
