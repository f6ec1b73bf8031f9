//! The engines that ship with metacache, one module each. Adding an engine is a module here and
//! one line in [`all`].

pub mod adbc;
pub mod default;
pub mod doris;
pub mod hive;
pub mod hudi;
pub mod iceberg;
pub mod lance;
pub mod max_compute;
pub mod paimon;

use metacache_cache::Expiry;

use crate::{EngineDef, EntryDef, EntryDefaults, TtlDefault};

/// Every built-in engine definition.
pub fn all() -> Vec<EngineDef> {
    vec![
        default::engine(),
        hive::engine(),
        hudi::engine(),
        iceberg::engine(),
        paimon::engine(),
        max_compute::engine(),
        adbc::engine(),
        doris::engine(),
        lance::engine(),
    ]
}

/// An entry token with the given defaults, expiring after write.
fn entry(token: &str, enable: bool, ttl: TtlDefault, capacity: u64, description: &str) -> EntryDef {
    EntryDef {
        token: token.to_owned(),
        defaults: EntryDefaults {
            enable,
            ttl,
            capacity,
            max_capacity: None,
            auto_refresh: false,
        },
        expiry: Expiry::AfterWrite,
        description: description.to_owned(),
    }
}

/// `entry` with `auto-refresh` on by default (sources with a cheap change check, §8.3).
fn refreshed_ahead(mut entry: EntryDef) -> EntryDef {
    entry.defaults.auto_refresh = true;
    entry
}

/// One day, the TTL of most entries.
const DAY: TtlDefault = TtlDefault::Seconds(86_400);

/// `types` as owned strings.
fn types(types: &[&str]) -> Vec<String> {
    types.iter().map(|t| (*t).to_owned()).collect()
}
