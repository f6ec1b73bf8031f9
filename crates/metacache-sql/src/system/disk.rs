//! `information_schema.catalog_meta_cache_disk`: the node-shared disk tier (§8.4) — one row per
//! node that has one: its directory, the directory's capacity, used bytes and blocks (every
//! process sharing it), and this process's reads (hits, misses, coalesced), evictions, dropped
//! corrupt blocks and disk errors. No row without `external_meta_cache_disk_dir`.

use super::{SystemContext, int};
use crate::output::{ColumnType, Value};

use ColumnType::{Bigint as I, String as S};

/// The columns, in order.
pub const DISK: &[(&str, ColumnType)] = &[
    ("FE_HOST", S),
    ("DIRECTORY", S),
    ("CAPACITY", I),
    ("USED", I),
    ("BLOCKS", I),
    ("HITS", I),
    ("MISSES", I),
    ("COALESCED", I),
    ("EVICTIONS", I),
    ("CORRUPT_DROPPED", I),
    ("ERRORS", I),
    ("PUBLISHED", I),
    ("FENCED", I),
    ("TOO_LARGE", I),
    ("LOCK_TIMEOUTS", I),
    ("STATUS", S),
];

/// The rows.
pub fn disk_rows(context: &SystemContext) -> Vec<Vec<Value>> {
    let Some(s) = context.manager.disk_stats() else {
        return Vec::new();
    };
    let opt = |v: Option<u64>| v.map_or(Value::Null, int);
    vec![vec![
        context.fe_host.as_ref().into(),
        s.dir.display().to_string().into(),
        opt(s.capacity),
        opt(s.used),
        opt(s.blocks),
        int(s.hits),
        int(s.misses),
        int(s.coalesced),
        int(s.evictions),
        int(s.corrupt_dropped),
        int(s.errors),
        int(s.published),
        int(s.fenced),
        int(s.too_large),
        int(s.lock_timeouts),
        match &s.unavailable {
            None => "ok".into(),
            Some(why) => format!("unavailable: {why}").into(),
        },
    ]]
}
