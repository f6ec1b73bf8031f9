//! `information_schema.catalog_meta_cache_history`: the last hour of every cache's counters on
//! this node — one row per cache and sample (`external_meta_cache_history_interval_seconds`,
//! a minute by default; 360 samples at most): what happened in the interval that ended at
//! `SAMPLE_TIME` (requests, hits, loads, evictions by cause, rejections by reason) and the bytes
//! held at its end. The statistics table shows totals since a cache was built; this one shows
//! how they moved, without scraping anything.

use metacache_cache::EvictionCause;
use metacache_ledger::RejectKind;

use super::{SystemContext, format_millis, int};
use crate::output::{ColumnType, Value};

use ColumnType::{Bigint as I, String as S};

/// The columns, in order.
pub const HISTORY: &[(&str, ColumnType)] = &[
    ("FE_HOST", S),
    ("SAMPLE_TIME", S),
    ("SAMPLE_MILLIS", I),
    ("INTERVAL_MILLIS", I),
    ("CATALOG_NAME", S),
    ("ENGINE_NAME", S),
    ("ENTRY_NAME", S),
    ("REQUEST_COUNT", I),
    ("HIT_COUNT", I),
    ("LOAD_COUNT", I),
    ("EVICTION_SIZE_COUNT", I),
    ("EVICTION_EXPIRED_COUNT", I),
    ("EVICTION_RECLAIMED_COUNT", I),
    ("REJECT_BUDGET_EXCEEDED_COUNT", I),
    ("REJECT_ENTRY_TOO_LARGE_COUNT", I),
    ("REJECT_INCOMPLETE_ESTIMATE_COUNT", I),
    ("ESTIMATED_WEIGHT", I),
    ("MAX_WEIGHT", I),
];

/// The rows.
pub fn history_rows(context: &SystemContext) -> Vec<Vec<Value>> {
    let evicted = |p: &metacache_catalog::history::HistoryPoint, cause: EvictionCause| {
        int(p.evictions[cause.index()])
    };
    let rejected = |p: &metacache_catalog::history::HistoryPoint, kinds: &[RejectKind]| {
        int(kinds.iter().map(|k| p.rejects[k.index()]).sum())
    };
    let mut rows = Vec::new();
    for series in context.manager.history().rows() {
        for p in &series.points {
            rows.push(vec![
                context.fe_host.as_ref().into(),
                format_millis(Some(p.at_millis)),
                int(p.at_millis),
                int(p.interval_millis),
                series.catalog.as_str().into(),
                series.engine.as_str().into(),
                series.entry_name.as_str().into(),
                int(p.requests),
                int(p.hits),
                int(p.loads),
                evicted(p, EvictionCause::Size),
                evicted(p, EvictionCause::Expired),
                evicted(p, EvictionCause::Reclaimed),
                rejected(p, &[RejectKind::BudgetExceeded]),
                rejected(p, &[RejectKind::EntryTooLarge]),
                rejected(
                    p,
                    &[
                        RejectKind::IncompleteEstimate,
                        RejectKind::EstimatorFailure,
                        RejectKind::InvalidZeroEstimate,
                    ],
                ),
                int(p.weight),
                Value::from(p.max_weight),
            ]);
        }
    }
    rows
}
