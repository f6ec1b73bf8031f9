//! `hive`: Hive Metastore objects, partitions and file listings of Hive catalogs.

use super::{DAY, entry, types};
use crate::{CacheDef, EngineDef, LegacyKey};

/// ENTRY_NAME of table objects.
pub const TABLE: &str = "hive-table";
/// ENTRY_NAME of partition name lists.
pub const PARTITION_NAMES: &str = "hive-partition-names";
/// ENTRY_NAME of partition objects.
pub const PARTITION: &str = "hive-partition";
/// ENTRY_NAME of column statistics.
pub const COLUMN_STATS: &str = "hive-column-stats";
/// ENTRY_NAME of file listings.
pub const FILE: &str = "hive-file";
/// ENTRY_NAME of partition-pruning structures.
pub const PARTITION_VIEW: &str = "hive-partition-view";

/// The catalog types with Hive caches.
pub const CATALOG_TYPES: [&str; 2] = ["hms", "hive"];

/// The metastore entries Hive and Hudi share: token, ENTRY_NAME, capacity, what is cached.
pub(super) const METASTORE_ENTRIES: [(&str, &str, u64, &str); 4] = [
    ("table", TABLE, 10_000, "table objects from the metastore"),
    (
        "partition_names",
        PARTITION_NAMES,
        10_000,
        "partition name lists of a table",
    ),
    (
        "partition",
        PARTITION,
        100_000,
        "partition objects with location and input format",
    ),
    (
        "column_stats",
        COLUMN_STATS,
        10_000,
        "column statistics from the metastore",
    ),
];

/// Legacy keys of the metastore entries.
pub(super) fn metastore_legacy() -> Vec<LegacyKey> {
    vec![
        LegacyKey::ttl("schema.cache.ttl-second", "table"),
        LegacyKey::ttl("partition.cache.ttl-second", "partition_names"),
    ]
}

/// The definition.
pub fn engine() -> EngineDef {
    let mut entries = Vec::new();
    let mut caches = Vec::new();
    let listing = [
        (
            "file",
            FILE,
            10_000,
            "file listings of a table or partition",
        ),
        (
            "partition_view",
            PARTITION_VIEW,
            1_000,
            "partition-pruning structures derived from partition names",
        ),
    ];
    for (token, name, capacity, what) in METASTORE_ENTRIES.into_iter().chain(listing) {
        entries.push(entry(token, true, DAY, capacity, what));
        caches.push(CacheDef::entry(name, token, what));
    }
    let mut legacy = metastore_legacy();
    legacy.push(LegacyKey::ttl("file.meta.cache.ttl-second", "file"));
    EngineDef {
        name: "hive".to_owned(),
        config_engine: None,
        catalog_types: types(&CATALOG_TYPES),
        entries,
        caches,
        legacy,
        rules: Vec::new(),
        description: "Hive tables: metastore objects, partitions and file listings".to_owned(),
    }
}
