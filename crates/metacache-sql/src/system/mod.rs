//! The system tables of `information_schema`, built from the node's live state each time a
//! query plans: `catalog_meta_cache_statistics` (§7, 28 columns), `catalog_meta_cache_nodes`,
//! `catalog_meta_cache_refresh` (refresh-ahead), `catalog_meta_cache_events` (change feeds
//! from sources), `catalog_meta_cache_scopes` (scan scopes, [`scopes`]),
//! `catalog_meta_cache_disk` (the disk tier, [`disk`]), `catalog_meta_cache_advice` (the quota
//! advisor's curves, [`advice`]), `catalog_meta_cache_history` (the last hour of every cache's
//! counters, [`history`]), `catalogs`, and the MySQL tables tools
//! browse ([`mysql`]: `tables`, `columns`, `schemata`, and empty `statistics`,
//! `key_column_usage`, `table_constraints`, `referential_constraints`, `views`, `routines`),
//! plus `DUAL`.
//!
//! Every table is declared once as (name, columns) and produces rows of [`Value`]s; one
//! function turns those into Arrow. Arrow field names are the lower-case column names (what
//! DataFusion's identifier normalisation produces); headers are restored to the canonical
//! upper-case names by the query layer.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::{
    ArrayRef, BooleanBuilder, Float64Builder, Int64Builder, RecordBatch, StringBuilder,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::{SchemaProvider, TableProvider};
use datafusion::datasource::MemTable;
use datafusion::error::DataFusionError;
use metacache_cache::CacheStats;
use metacache_catalog::{CacheRow, CatalogManager};

use crate::output::{ColumnType, Value};

mod advice;
mod cluster_table;
mod disk;
mod history;
mod mysql;
pub mod peers;
mod scopes;

pub use mysql::sql_type;

/// The only database.
pub const INFORMATION_SCHEMA: &str = "information_schema";
/// The catalog name system tables live in (Doris's name for its own catalog).
pub const INTERNAL_CATALOG: &str = "internal";

use ColumnType::{Bigint as I, Boolean as B, Double as D, String as S};

/// The statistics table's columns, in order (§7, exact).
pub const STATISTICS: &[(&str, ColumnType)] = &[
    ("FE_HOST", S),
    ("CATALOG_NAME", S),
    ("ENGINE_NAME", S),
    ("ENTRY_NAME", S),
    ("EFFECTIVE_ENABLED", B),
    ("CONFIG_ENABLED", B),
    ("AUTO_REFRESH", B),
    ("TTL_SECOND", I),
    ("CAPACITY", I),
    ("ESTIMATED_SIZE", I),
    ("REQUEST_COUNT", I),
    ("HIT_COUNT", I),
    ("MISS_COUNT", I),
    ("HIT_RATE", D),
    ("LOAD_SUCCESS_COUNT", I),
    ("LOAD_FAILURE_COUNT", I),
    ("TOTAL_LOAD_TIME_MS", I),
    ("AVG_LOAD_PENALTY_MS", D),
    ("EVICTION_COUNT", I),
    ("EVICTION_RATE", D),
    ("INVALIDATE_COUNT", I),
    ("LAST_LOAD_SUCCESS_TIME", S),
    ("LAST_LOAD_FAILURE_TIME", S),
    ("LAST_ERROR", S),
    ("MAX_WEIGHT", I),
    ("ESTIMATED_WEIGHT", I),
    ("WEIGHT_REJECT_COUNT", I),
    ("LAST_WEIGHT_REJECT_REASON", S),
];

const NODES: &[(&str, ColumnType)] = &[
    ("FE_HOST", S),
    ("MAX_WEIGHT", I),
    ("ESTIMATED_WEIGHT", I),
    ("NODE_MEMORY_BYTES", I),
    ("PROCESS_RSS_BYTES", I),
    ("CATALOG_COUNT", I),
    ("CACHE_COUNT", I),
    ("RECLAIM_REQUEST_COUNT", I),
    ("RECLAIMED_BYTES", I),
    ("ALLOCATED_BYTES", I),
    ("ALLOCATOR_RESIDENT_BYTES", I),
    ("FRAGMENTATION", D),
    ("RESERVED_TO_ALLOCATED", D),
];

const REFRESH: &[(&str, ColumnType)] = &[
    ("FE_HOST", S),
    ("CATALOG_NAME", S),
    ("ENGINE_NAME", S),
    ("ENTRY_NAME", S),
    ("AUTO_REFRESH", B),
    ("TTL_SECOND", I),
    ("REFRESH_MARGIN_SECOND", D),
    ("REFRESH_STARTED_COUNT", I),
    ("REFRESH_SUCCESS_COUNT", I),
    ("REFRESH_UNCHANGED_COUNT", I),
    ("REFRESH_FAILURE_COUNT", I),
    ("REFRESH_SKIPPED_COUNT", I),
    ("LOADS_SAVED_COUNT", I),
];

const EVENTS: &[(&str, ColumnType)] = &[
    ("FE_HOST", S),
    ("CATALOG_NAME", S),
    ("SOURCE", S),
    ("POLL_INTERVAL_MS", I),
    ("STATE", S),
    ("LAST_EVENT_ID", I),
    ("SOURCE_EVENT_ID", I),
    ("LAG_EVENTS", I),
    ("EVENTS_RECEIVED", I),
    ("EVENTS_APPLIED", I),
    ("EVENTS_IGNORED", I),
    ("TABLES_INVALIDATED", I),
    ("PARTITIONS_INVALIDATED", I),
    ("GAP_RESETS", I),
    ("UNAPPLIED_RESETS", I),
    ("POLL_COUNT", I),
    ("POLL_FAILURE_COUNT", I),
    ("LAST_POLL_TIME", S),
    ("LAST_EVENT_TIME", S),
    ("LAST_ERROR", S),
];

const CATALOGS: &[(&str, ColumnType)] = &[
    ("FE_HOST", S),
    ("CATALOG_NAME", S),
    ("CATALOG_TYPE", S),
    ("COMMENT", S),
    ("CREATE_TIME", S),
    ("UPDATE_TIME", S),
    ("MAX_WEIGHT", I),
    ("ESTIMATED_WEIGHT", I),
    ("CACHE_COUNT", I),
];

/// A system table: its name, columns and what it says.
pub struct SystemTable {
    /// Name in `information_schema`.
    pub name: &'static str,
    /// Columns in order.
    pub columns: &'static [(&'static str, ColumnType)],
    /// For `TABLE_COMMENT`.
    pub comment: &'static str,
    rows: fn(&SystemContext) -> Vec<Vec<Value>>,
    /// In a cluster, also the rows of every other live node ([`peers`]).
    pub cluster_wide: bool,
}

/// Every system table.
pub const SYSTEM_TABLES: &[SystemTable] = &[
    SystemTable {
        name: "catalog_meta_cache_statistics",
        columns: STATISTICS,
        comment: "one row per node, catalog, engine and cache: settings, counters and weights",
        rows: statistics_rows,
        cluster_wide: true,
    },
    SystemTable {
        name: "catalog_meta_cache_nodes",
        columns: NODES,
        comment: "one row per node: node limit, reserved bytes, memory budget, process RSS, reclamation, allocator",
        rows: node_rows,
        cluster_wide: true,
    },
    SystemTable {
        name: "catalog_meta_cache_refresh",
        columns: REFRESH,
        comment: "one row per node, catalog, engine and cache: refresh-ahead (auto-refresh) started, stored, renewed unchanged, failed, skipped, and loads it saved",
        rows: refresh_rows,
        cluster_wide: false,
    },
    SystemTable {
        name: "catalog_meta_cache_events",
        columns: EVENTS,
        comment: "one row per catalog with a change feed (hms_events_polling_interval_ms): cursor, events applied and ignored, invalidations, resets, polls",
        rows: event_rows,
        cluster_wide: false,
    },
    SystemTable {
        name: "catalog_meta_cache_disk",
        columns: disk::DISK,
        comment: "the node-shared disk tier of immutable metadata files (external_meta_cache_disk_dir): directory, capacity, used bytes and blocks of every process sharing it; this process's hits, misses, coalesced reads, evictions, corrupt blocks dropped, disk errors",
        rows: disk::disk_rows,
        cluster_wide: true,
    },
    SystemTable {
        name: "catalog_meta_cache_advice",
        columns: advice::ADVICE,
        comment: "the quota advisor: per node, catalog and cache (and per catalog, its caches sharing one limit), the predicted hit rate and loads per minute at each byte limit of a doubling grid up to the working set, with the sampled requests behind it and a confidence",
        rows: advice::advice_rows,
        cluster_wide: true,
    },
    SystemTable {
        name: "catalog_meta_cache_history",
        columns: history::HISTORY,
        comment: "the last hour of every cache's counters on this node, one row per cache and sample (external_meta_cache_history_interval_seconds): requests, hits, loads, evictions by cause and rejections by reason in the interval, bytes held and the limit at its end",
        rows: history::history_rows,
        cluster_wide: false,
    },
    SystemTable {
        name: "catalog_meta_cache_scopes",
        columns: scopes::SCOPES,
        comment: "one row per open scan scope (POST /api/v1/scopes): catalog, label, tables, leases, earliest credential expiry, source calls, refreshes and failures, times",
        rows: scopes::scope_rows,
        cluster_wide: false,
    },
    SystemTable {
        name: "catalogs",
        columns: CATALOGS,
        comment: "one row per catalog: type, comment, limit and reserved bytes",
        rows: catalog_rows,
        cluster_wide: false,
    },
    SystemTable {
        name: "columns",
        columns: mysql::COLUMNS,
        comment: "columns of the system tables (MySQL's columns)",
        rows: mysql::column_rows,
        cluster_wide: false,
    },
    SystemTable {
        name: "schemata",
        columns: mysql::SCHEMATA,
        comment: "databases",
        rows: mysql::schema_rows,
        cluster_wide: false,
    },
    SystemTable {
        name: "tables",
        columns: mysql::TABLES,
        comment: "the system tables (MySQL's columns)",
        rows: mysql::table_rows,
        cluster_wide: false,
    },
    SystemTable {
        name: "statistics",
        columns: mysql::STATISTICS,
        comment: "indexes: none (MySQL's columns, for tools that browse keys)",
        rows: mysql::no_rows,
        cluster_wide: false,
    },
    SystemTable {
        name: "key_column_usage",
        columns: mysql::KEY_COLUMN_USAGE,
        comment: "key columns: none (MySQL's columns)",
        rows: mysql::no_rows,
        cluster_wide: false,
    },
    SystemTable {
        name: "table_constraints",
        columns: mysql::TABLE_CONSTRAINTS,
        comment: "constraints: none (MySQL's columns)",
        rows: mysql::no_rows,
        cluster_wide: false,
    },
    SystemTable {
        name: "referential_constraints",
        columns: mysql::REFERENTIAL_CONSTRAINTS,
        comment: "foreign keys: none (MySQL's columns)",
        rows: mysql::no_rows,
        cluster_wide: false,
    },
    SystemTable {
        name: "views",
        columns: mysql::VIEWS,
        comment: "views: none (MySQL's columns)",
        rows: mysql::no_rows,
        cluster_wide: false,
    },
    SystemTable {
        name: "routines",
        columns: mysql::ROUTINES,
        comment: "stored routines: none (MySQL's columns)",
        rows: mysql::no_rows,
        cluster_wide: false,
    },
];

/// The system table named `name`, case-insensitively.
pub fn system_table(name: &str) -> Option<&'static SystemTable> {
    SYSTEM_TABLES
        .iter()
        .find(|t| t.name.eq_ignore_ascii_case(name))
}

/// The canonical (upper-case) name of a system column, from any case.
pub fn canonical_column(name: &str) -> Option<&'static str> {
    SYSTEM_TABLES
        .iter()
        .flat_map(|t| t.columns.iter())
        .map(|(c, _)| *c)
        .find(|c| c.eq_ignore_ascii_case(name))
}

/// What system tables read.
#[derive(Clone)]
pub struct SystemContext {
    /// The catalogs.
    pub manager: Arc<CatalogManager>,
    /// `FE_HOST`.
    pub fe_host: Arc<str>,
    /// The other nodes of a cluster (`None` on a single node).
    pub peers: Option<Arc<dyn peers::Peers>>,
    /// Warnings of the statement being run (peers that did not answer), for its session.
    pub notes: Arc<parking_lot::Mutex<Vec<String>>>,
}

impl SystemContext {
    /// A context of one node.
    pub fn local(manager: Arc<CatalogManager>, fe_host: &str) -> Self {
        Self {
            manager,
            fe_host: Arc::from(fe_host),
            peers: None,
            notes: Arc::default(),
        }
    }
}

impl SystemTable {
    /// The Arrow schema (lower-case field names).
    pub fn schema(&self) -> SchemaRef {
        Arc::new(Schema::new(
            self.columns
                .iter()
                .map(|(name, ty)| Field::new(name.to_ascii_lowercase(), arrow_type(*ty), true))
                .collect::<Vec<_>>(),
        ))
    }

    /// The rows now.
    pub fn rows(&self, context: &SystemContext) -> Vec<Vec<Value>> {
        (self.rows)(context)
    }

    /// The rows now, of `catalog` only when given and the table has a `CATALOG_NAME` column
    /// (what a peer of a cluster is asked for, and what a pushed-down filter keeps).
    pub fn rows_of(&self, context: &SystemContext, catalog: Option<&str>) -> Vec<Vec<Value>> {
        let mut rows = self.rows(context);
        let column = self.columns.iter().position(|(c, _)| *c == "CATALOG_NAME");
        if let (Some(catalog), Some(i)) = (catalog, column) {
            rows.retain(|row| matches!(row.get(i), Some(Value::Text(t)) if t == catalog));
        }
        rows
    }

    /// The rows now, as one Arrow batch.
    pub fn batch(&self, context: &SystemContext) -> Result<RecordBatch, DataFusionError> {
        self.batch_of(self.rows(context))
    }

    /// `rows` as one Arrow batch.
    pub fn batch_of(&self, rows: Vec<Vec<Value>>) -> Result<RecordBatch, DataFusionError> {
        self.batch_projected(&rows, None)
    }

    /// `rows` as one Arrow batch of the columns `projection` names (every column when `None`;
    /// none at all, keeping the row count, when empty).
    pub fn batch_projected(
        &self,
        rows: &[Vec<Value>],
        projection: Option<&[usize]>,
    ) -> Result<RecordBatch, DataFusionError> {
        let all: Vec<usize>;
        let indices = match projection {
            Some(p) => p,
            None => {
                all = (0..self.columns.len()).collect();
                &all
            }
        };
        let arrays = indices
            .iter()
            .map(|&i| {
                let (_, ty) = self.columns.get(i).ok_or_else(|| {
                    DataFusionError::Internal(format!("{} has no column {i}", self.name))
                })?;
                Ok(column_array(
                    *ty,
                    rows.iter().map(|r| r.get(i).unwrap_or(&Value::Null)),
                ))
            })
            .collect::<Result<Vec<ArrayRef>, DataFusionError>>()?;
        let schema = Arc::new(self.schema().project(indices)?);
        let options =
            datafusion::arrow::array::RecordBatchOptions::new().with_row_count(Some(rows.len()));
        Ok(RecordBatch::try_new_with_options(schema, arrays, &options)?)
    }

    /// The position of column `name` (any case).
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|(c, _)| c.eq_ignore_ascii_case(name))
    }
}

fn arrow_type(ty: ColumnType) -> DataType {
    match ty {
        ColumnType::String => DataType::Utf8,
        ColumnType::Bigint => DataType::Int64,
        ColumnType::Double => DataType::Float64,
        ColumnType::Boolean => DataType::Boolean,
    }
}

fn column_array<'a>(ty: ColumnType, values: impl Iterator<Item = &'a Value>) -> ArrayRef {
    match ty {
        ColumnType::String => {
            let mut b = StringBuilder::new();
            for v in values {
                match v {
                    Value::Text(s) => b.append_value(s),
                    Value::Null => b.append_null(),
                    other => b.append_value(format!("{other:?}")),
                }
            }
            Arc::new(b.finish())
        }
        ColumnType::Bigint => {
            let mut b = Int64Builder::new();
            for v in values {
                b.append_option(match v {
                    Value::Int(i) => Some(*i),
                    _ => None,
                });
            }
            Arc::new(b.finish())
        }
        ColumnType::Double => {
            let mut b = Float64Builder::new();
            for v in values {
                b.append_option(match v {
                    Value::Double(d) => Some(*d),
                    _ => None,
                });
            }
            Arc::new(b.finish())
        }
        ColumnType::Boolean => {
            let mut b = BooleanBuilder::new();
            for v in values {
                b.append_option(match v {
                    Value::Bool(x) => Some(*x),
                    _ => None,
                });
            }
            Arc::new(b.finish())
        }
    }
}

fn int(v: u64) -> Value {
    Value::Int(i64::try_from(v).unwrap_or(i64::MAX))
}

/// Wall-clock milliseconds as `YYYY-MM-DD HH:MM:SS.mmm` (UTC); empty when never.
pub fn format_millis(millis: Option<u64>) -> Value {
    let text = millis
        .and_then(|m| i64::try_from(m).ok())
        .and_then(datafusion::arrow::temporal_conversions::timestamp_ms_to_datetime)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S%.3f").to_string())
        .unwrap_or_default();
    Value::Text(text)
}

/// One statistics row.
pub fn statistics_row(fe_host: &str, row: &CacheRow) -> Vec<Value> {
    let s: &CacheStats = &row.stats;
    vec![
        fe_host.into(),
        row.catalog.clone().into(),
        row.engine.clone().into(),
        s.entry_name.clone().into(),
        s.effective_enabled.into(),
        s.config_enabled.into(),
        s.auto_refresh.into(),
        Value::Int(s.ttl_second),
        int(s.capacity),
        int(s.estimated_size),
        int(s.request_count),
        int(s.hit_count),
        int(s.miss_count),
        Value::Double(s.hit_rate()),
        int(s.load_success_count),
        int(s.load_failure_count),
        int(s.total_load_time_ms),
        Value::Double(s.avg_load_penalty_ms()),
        int(s.eviction_count),
        Value::Double(s.eviction_rate()),
        int(s.invalidate_count),
        format_millis(s.last_load_success_millis),
        format_millis(s.last_load_failure_millis),
        s.last_error.clone().unwrap_or_default().into(),
        Value::Int(s.max_weight),
        int(s.estimated_weight),
        int(s.weight_reject_count),
        s.last_weight_reject_reason
            .clone()
            .unwrap_or_default()
            .into(),
    ]
}

fn statistics_rows(context: &SystemContext) -> Vec<Vec<Value>> {
    context
        .manager
        .cache_rows()
        .iter()
        .map(|row| statistics_row(&context.fe_host, row))
        .collect()
}

fn limit(bytes: Option<u64>) -> Value {
    bytes.map_or(Value::Int(-1), int)
}

fn node_rows(context: &SystemContext) -> Vec<Vec<Value>> {
    let governor = context.manager.governor();
    let node = governor.node();
    let memory = context.manager.node_memory().map(|m| m.bytes);
    let catalogs = context.manager.catalogs();
    let caches: usize = catalogs.iter().map(|c| c.built_caches()).sum();
    let reclaim = governor.reclaim_stats();
    let mut row = vec![
        context.fe_host.as_ref().into(),
        limit(node.limit()),
        int(node.used()),
        memory.map_or(Value::Null, int),
        metacache_catalog::memory::process_rss_bytes().map_or(Value::Null, int),
        int(catalogs.len() as u64),
        int(caches as u64),
        int(reclaim.requests),
        int(reclaim.freed_bytes),
    ];
    // NULL where the process's allocator reports nothing (an embedding with another one).
    let allocator = metacache_catalog::memory::allocator_stats();
    row.extend(match allocator {
        Some(a) => [
            int(a.allocated),
            int(a.resident),
            Value::Double(a.fragmentation()),
            Value::Double(a.reserved_ratio(node.used())),
        ],
        None => [Value::Null, Value::Null, Value::Null, Value::Null],
    });
    vec![row]
}

fn refresh_rows(context: &SystemContext) -> Vec<Vec<Value>> {
    context
        .manager
        .cache_rows()
        .iter()
        .map(|row| {
            let s = &row.stats;
            let r = &s.refresh;
            // The due point: min(10 % of the TTL, 30 s) before it; 0 when nothing refreshes.
            let margin = match (s.auto_refresh, u64::try_from(s.ttl_second)) {
                (true, Ok(ttl)) if ttl > 0 => {
                    metacache_cache::refresh::margin(std::time::Duration::from_secs(ttl))
                        .as_secs_f64()
                }
                _ => 0.0,
            };
            vec![
                context.fe_host.as_ref().into(),
                row.catalog.clone().into(),
                row.engine.clone().into(),
                s.entry_name.clone().into(),
                s.auto_refresh.into(),
                Value::Int(s.ttl_second),
                Value::Double(margin),
                int(r.started),
                int(r.succeeded),
                int(r.unchanged),
                int(r.failed),
                int(r.skipped),
                int(r.loads_saved),
            ]
        })
        .collect()
}

fn event_rows(context: &SystemContext) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for catalog in context.manager.catalogs() {
        let interval = metacache_catalog::events::polling_interval(&catalog.def().properties);
        let s = catalog.events().snapshot();
        if interval.is_none() && !s.running && s.polls == 0 {
            continue;
        }
        let state = match (interval, s.running) {
            (None, _) => "off",
            (Some(_), false) => "idle",
            (Some(_), true) if s.failing => "failing",
            (Some(_), true) => "polling",
        };
        rows.push(vec![
            context.fe_host.as_ref().into(),
            catalog.name().to_string().into(),
            "hms".into(),
            interval.map_or(Value::Int(0), |d| {
                Value::Int(i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            }),
            state.into(),
            int(s.cursor),
            int(s.source_position),
            int(s.lag()),
            int(s.received),
            int(s.applied),
            int(s.ignored),
            int(s.tables_invalidated),
            int(s.partitions_invalidated),
            int(s.gap_resets),
            int(s.unapplied_resets),
            int(s.polls),
            int(s.poll_failures),
            format_millis(s.last_poll_millis),
            format_millis(s.last_event_millis),
            s.last_error.clone().unwrap_or_default().into(),
        ]);
    }
    rows
}

fn catalog_rows(context: &SystemContext) -> Vec<Vec<Value>> {
    context
        .manager
        .catalogs()
        .iter()
        .map(|catalog| {
            let def = catalog.def();
            vec![
                context.fe_host.as_ref().into(),
                def.name.clone().into(),
                def.catalog_type().into(),
                def.comment.clone().into(),
                format_millis(Some(def.created_at_millis)),
                format_millis(Some(def.updated_at_millis)),
                limit(catalog.budget().effective_limit()),
                int(catalog.budget().used()),
                int(catalog.built_caches() as u64),
            ]
        })
        .collect()
}

/// MySQL's one-row table without columns (`SELECT 1 FROM DUAL`); not listed among the tables.
const DUAL: &str = "dual";

fn dual() -> Result<Arc<dyn TableProvider>, DataFusionError> {
    let schema = Arc::new(Schema::empty());
    let options = datafusion::arrow::array::RecordBatchOptions::new().with_row_count(Some(1));
    let batch = RecordBatch::try_new_with_options(Arc::clone(&schema), vec![], &options)?;
    Ok(Arc::new(MemTable::try_new(schema, vec![vec![batch]])?))
}

/// `information_schema` for DataFusion: each table is a fresh snapshot when a query plans.
#[derive(Clone)]
pub struct InformationSchema {
    context: SystemContext,
}

impl InformationSchema {
    /// The schema over `context`.
    pub fn new(context: SystemContext) -> Self {
        Self { context }
    }
}

impl std::fmt::Debug for InformationSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InformationSchema")
    }
}

#[async_trait]
impl SchemaProvider for InformationSchema {
    fn table_names(&self) -> Vec<String> {
        SYSTEM_TABLES.iter().map(|t| t.name.to_owned()).collect()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>, DataFusionError> {
        if name.eq_ignore_ascii_case(DUAL) {
            return Ok(Some(dual()?));
        }
        let Some(table) = system_table(name) else {
            return Ok(None);
        };
        if table.cluster_wide && self.context.peers.is_some() {
            return Ok(Some(Arc::new(cluster_table::ClusterTable::new(
                table,
                self.context.clone(),
            ))));
        }
        let batch = table.batch(&self.context)?;
        let provider = MemTable::try_new(table.schema(), vec![vec![batch]])?;
        Ok(Some(Arc::new(provider)))
    }

    fn table_exist(&self, name: &str) -> bool {
        system_table(name).is_some() || name.eq_ignore_ascii_case(DUAL)
    }
}
