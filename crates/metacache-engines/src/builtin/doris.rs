//! `doris`: schemas and backend lists of remote Doris clusters.

use super::{DAY, entry, types};
use crate::{CacheDef, EngineDef};

/// ENTRY_NAME of table schemas.
pub const SCHEMA: &str = "doris-schema";
/// ENTRY_NAME of backend lists.
pub const BACKENDS: &str = "doris-backends";

/// The definition. The defaults are ours (Doris documents none): a day, 10,000 values.
pub fn engine() -> EngineDef {
    EngineDef {
        name: "doris".to_owned(),
        config_engine: None,
        catalog_types: types(&["doris"]),
        entries: vec![
            entry(
                "schema",
                true,
                DAY,
                10_000,
                "table schemas of the remote cluster",
            ),
            entry(
                "backends",
                true,
                DAY,
                10_000,
                "backend lists of the remote cluster",
            ),
        ],
        caches: vec![
            CacheDef::entry(SCHEMA, "schema", "table schemas of the remote cluster"),
            CacheDef::entry(BACKENDS, "backends", "backend lists of the remote cluster"),
        ],
        legacy: Vec::new(),
        rules: Vec::new(),
        description: "remote Doris clusters: schemas and backends".to_owned(),
    }
}
