//! `max_compute`: partition listings of MaxCompute tables.

use super::{entry, types};
use crate::{CacheDef, EngineDef, TtlDefault};

/// ENTRY_NAME of partition listings.
pub const PARTITION: &str = "max-compute-partition";

/// The definition.
pub fn engine() -> EngineDef {
    EngineDef {
        name: "max_compute".to_owned(),
        config_engine: None,
        catalog_types: types(&["max_compute"]),
        entries: vec![entry(
            "partition",
            true,
            TtlDefault::Seconds(600),
            10_000,
            "partition listings of a table",
        )],
        caches: vec![CacheDef::entry(
            PARTITION,
            "partition",
            "partition listings of a table",
        )],
        legacy: Vec::new(),
        rules: Vec::new(),
        description: "MaxCompute tables: partition listings".to_owned(),
    }
}
