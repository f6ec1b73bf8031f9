//! `iceberg`: table metadata, partitions, manifests and derived views of Iceberg tables.

use super::{DAY, entry, refreshed_ahead, types};
use crate::{CacheDef, EngineDef, PropertyMap, Rule, TtlDefault};

/// ENTRY_NAME of loaded table metadata.
pub const TABLE: &str = "iceberg-table";
/// ENTRY_NAME of the raw partitions of a snapshot.
pub const PARTITION: &str = "iceberg-partition";
/// ENTRY_NAME of parsed manifests.
pub const MANIFEST: &str = "iceberg-manifest";
/// ENTRY_NAME of the MVCC partition view.
pub const MVCC_PARTITION_VIEW: &str = "iceberg.mvcc-partition-view";
/// ENTRY_NAME of the list-partitions view.
pub const LIST_PARTITIONS_VIEW: &str = "iceberg.list-partitions-view";
/// ENTRY_NAME of the latest snapshot id.
pub const LATEST_SNAPSHOT: &str = "iceberg-latest-snapshot";
/// ENTRY_NAME of the inferred file format.
pub const FORMAT: &str = "iceberg-format";
/// ENTRY_NAME of table comments (REST catalogs with vended credentials only).
pub const COMMENT: &str = "iceberg-comment";
/// ENTRY_NAME of the equality-delete field ids of a snapshot.
pub const EQUALITY_DELETE_FIELD_IDS: &str = "iceberg-equality-delete-field-ids";

/// Per-user REST sessions: `iceberg.rest.session=user`.
pub const REST_SESSION_KEY: &str = "iceberg.rest.session";
/// The catalog flavour: `iceberg.catalog.type=rest`.
pub const CATALOG_TYPE_KEY: &str = "iceberg.catalog.type";
/// Vended credentials of a REST catalog.
pub const VENDED_CREDENTIALS_KEY: &str = "iceberg.rest.vended-credentials-enabled";

fn is(properties: &PropertyMap, key: &str, value: &str) -> bool {
    properties
        .get(key)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case(value))
}

fn per_user_session(properties: &PropertyMap) -> bool {
    is(properties, REST_SESSION_KEY, "user")
}

fn rest_with_vended_credentials(properties: &PropertyMap) -> bool {
    is(properties, CATALOG_TYPE_KEY, "rest") && is(properties, VENDED_CREDENTIALS_KEY, "true")
}

/// The definition.
pub fn engine() -> EngineDef {
    let tokenless = |name, what| CacheDef::tokenless(name, Some("table"), DAY, 1_000, what);
    EngineDef {
        name: "iceberg".to_owned(),
        config_engine: None,
        catalog_types: types(&["iceberg", "hms", "hive"]),
        entries: vec![
            // Refreshed ahead by default: its change check is one catalog lookup of the
            // current metadata location; an unchanged one renews the value without a read.
            refreshed_ahead(entry("table", true, DAY, 1_000, "loaded table metadata")),
            entry(
                "partition",
                true,
                TtlDefault::SameAs("table".to_owned()),
                1_000,
                "raw partitions of a snapshot",
            ),
            entry(
                "manifest",
                false,
                TtlDefault::Never,
                100_000,
                "parsed manifests, used by scan planning when enabled",
            ),
            entry(
                "partition_view",
                true,
                DAY,
                1_000,
                "two derived partition projections sharing one budget",
            ),
        ],
        caches: vec![
            CacheDef::entry(TABLE, "table", "loaded table metadata"),
            CacheDef::entry(PARTITION, "partition", "raw partitions of a snapshot"),
            CacheDef::entry(MANIFEST, "manifest", "parsed manifest contents"),
            CacheDef::entry(
                MVCC_PARTITION_VIEW,
                "partition_view",
                "partition view for MVCC snapshots",
            ),
            CacheDef::entry(
                LIST_PARTITIONS_VIEW,
                "partition_view",
                "partition view for SHOW PARTITIONS",
            ),
            tokenless(LATEST_SNAPSHOT, "latest snapshot id of a table"),
            tokenless(FORMAT, "inferred file format of a table"),
            tokenless(COMMENT, "table comments"),
            tokenless(
                EQUALITY_DELETE_FIELD_IDS,
                "equality-delete field ids of a snapshot",
            ),
        ],
        legacy: Vec::new(),
        rules: vec![
            Rule {
                description: "iceberg.rest.session=user: a shared cache would bypass per-user authorization",
                applies: per_user_session,
                suppresses: &[
                    TABLE,
                    PARTITION,
                    MVCC_PARTITION_VIEW,
                    LIST_PARTITIONS_VIEW,
                    LATEST_SNAPSHOT,
                    FORMAT,
                ],
            },
            Rule {
                description: "REST catalog with vended credentials: table metadata carries credentials",
                applies: rest_with_vended_credentials,
                suppresses: &[TABLE],
            },
            Rule {
                description: "table comments are cached only for REST catalogs with vended credentials",
                applies: |p| !rest_with_vended_credentials(p),
                suppresses: &[COMMENT],
            },
        ],
        description: "Iceberg tables: metadata, partitions, manifests and partition views"
            .to_owned(),
    }
}
