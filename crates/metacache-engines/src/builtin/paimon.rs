//! `paimon`: partition views, schemas and snapshots of Paimon tables.

use super::{DAY, entry, refreshed_ahead, types};
use crate::{CacheDef, EngineDef, TtlDefault};

/// ENTRY_NAME of partition projections.
pub const PARTITION_VIEW: &str = "paimon.partition-view";
/// ENTRY_NAME of the schema of a table at a snapshot.
pub const SCHEMA_AT: &str = "paimon-schema-at";
/// ENTRY_NAME of the latest snapshot id.
pub const LATEST_SNAPSHOT: &str = "paimon-latest-snapshot";

/// The definition.
pub fn engine() -> EngineDef {
    EngineDef {
        name: "paimon".to_owned(),
        config_engine: None,
        catalog_types: types(&["paimon"]),
        entries: vec![
            entry(
                "partition_view",
                true,
                DAY,
                1_000,
                "partition projections of a snapshot",
            ),
            // No cache of its own: its ttl-second and auto-refresh are read by the
            // latest-snapshot cache, which refreshes ahead by default (its change check is one
            // listing of the snapshot directory).
            refreshed_ahead(entry(
                "table",
                true,
                DAY,
                1_000,
                "TTL and auto-refresh of table-level lookups (latest snapshot)",
            )),
        ],
        caches: vec![
            CacheDef::entry(
                PARTITION_VIEW,
                "partition_view",
                "partition projections of a snapshot",
            ),
            CacheDef::tokenless(
                SCHEMA_AT,
                None,
                TtlDefault::Never,
                10_000,
                "schema of a table at a snapshot",
            ),
            CacheDef::tokenless(
                LATEST_SNAPSHOT,
                Some("table"),
                DAY,
                1_000,
                "latest snapshot id of a table",
            ),
        ],
        legacy: Vec::new(),
        rules: Vec::new(),
        description: "Paimon tables: partition views, schemas and snapshots".to_owned(),
    }
}
