//! `adbc`: namespaces, table names and table schemas of ADBC/JDBC sources, three caches that
//! share the `adbc.metadata` budget.

use super::{entry, types};
use crate::{CacheDef, EngineDef, TtlDefault};

/// ENTRY_NAME of namespace lists.
pub const NAMESPACES: &str = "adbc-namespaces";
/// ENTRY_NAME of table name lists.
pub const TABLE_NAMES: &str = "adbc-table-names";
/// ENTRY_NAME of table schemas.
pub const TABLE_SCHEMA: &str = "adbc-table-schema";

/// The definition.
pub fn engine() -> EngineDef {
    EngineDef {
        name: "adbc".to_owned(),
        config_engine: None,
        catalog_types: types(&["jdbc", "adbc"]),
        entries: vec![entry(
            "metadata",
            true,
            TtlDefault::Seconds(600),
            1_000,
            "namespaces, table names and schemas",
        )],
        caches: vec![
            CacheDef::entry(NAMESPACES, "metadata", "namespaces of the source"),
            CacheDef::entry(TABLE_NAMES, "metadata", "table names of a namespace"),
            CacheDef::entry(TABLE_SCHEMA, "metadata", "schema of a table"),
        ],
        legacy: Vec::new(),
        rules: Vec::new(),
        description: "ADBC/JDBC sources: namespaces, table names and schemas".to_owned(),
    }
}
