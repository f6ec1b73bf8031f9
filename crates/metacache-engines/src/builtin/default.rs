//! `default`: the column schema of external tables, for every catalog type — and the only
//! engine of Doris's `es`, `trino-connector` and `lakesoul` catalogs.

use metacache_cache::Expiry;

use super::{DAY, entry, types};
use crate::{ANY_CATALOG_TYPE, CacheDef, EngineDef, LegacyKey};

/// ENTRY_NAME of the schema cache.
pub const SCHEMA: &str = "schema";

/// The definition.
pub fn engine() -> EngineDef {
    let mut schema = entry(
        "schema",
        true,
        DAY,
        10_000,
        "column schema of external tables",
    );
    // The one entry whose TTL is extended by reads, as in Doris.
    schema.expiry = Expiry::AfterAccess;
    EngineDef {
        name: crate::DEFAULT_ENGINE.to_owned(),
        config_engine: None,
        // Every catalog has this engine; these Doris catalog types have no other (metacache
        // keeps their definitions and quotas, and reads no metadata from them).
        catalog_types: types(&[ANY_CATALOG_TYPE, "es", "trino-connector", "lakesoul"]),
        entries: vec![schema],
        caches: vec![CacheDef::entry(
            SCHEMA,
            "schema",
            "column schema of a table",
        )],
        legacy: vec![LegacyKey::ttl("schema.cache.ttl-second", "schema")],
        rules: Vec::new(),
        description: "table schemas of every catalog".to_owned(),
    }
}
