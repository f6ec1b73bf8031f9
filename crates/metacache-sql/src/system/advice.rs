//! `information_schema.catalog_meta_cache_advice`: the quota advisor's miss-ratio curves — one
//! row per node, catalog, cache and size of a doubling grid up to the cache's working set: the
//! predicted hit rate and loads per minute at that byte limit, the sampled requests behind the
//! prediction and its confidence. Each catalog also has rows of its own (ENGINE_NAME and
//! ENTRY_NAME NULL): its caches sharing one limit. Only caches that have served requests since
//! they were built have rows.
//!
//! `SELECT MIN(CACHE_BYTES) FROM … WHERE ENTRY_NAME = 'hive-file' AND PREDICTED_HIT_RATE >= 0.95`
//! is the byte limit that entry needs for a 95 % hit rate.

use super::{SystemContext, int};
use crate::output::{ColumnType, Value};

use ColumnType::{Bigint as I, Double as D, String as S};

/// The columns, in order.
pub const ADVICE: &[(&str, ColumnType)] = &[
    ("FE_HOST", S),
    ("CATALOG_NAME", S),
    ("ENGINE_NAME", S),
    ("ENTRY_NAME", S),
    ("CACHE_BYTES", I),
    ("PREDICTED_HIT_RATE", D),
    ("PREDICTED_LOADS_PER_MINUTE", D),
    ("SAMPLED_REQUESTS", I),
    ("CONFIDENCE", D),
];

/// The rows.
pub fn advice_rows(context: &SystemContext) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for row in context.manager.advice_rows() {
        let engine: Value = match row.entry_name {
            Some(_) => row.engine.as_str().into(),
            None => Value::Null,
        };
        let entry: Value = row.entry_name.as_deref().map_or(Value::Null, Into::into);
        for point in &row.advice.points {
            rows.push(vec![
                context.fe_host.as_ref().into(),
                row.catalog.as_str().into(),
                engine.clone(),
                entry.clone(),
                int(point.cache_bytes),
                Value::Double(point.hit_rate),
                Value::Double(point.loads_per_minute),
                int(point.sampled_requests),
                Value::Double(point.confidence),
            ]);
        }
    }
    rows
}
