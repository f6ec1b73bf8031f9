//! Read-only queries on DataFusion: a session context over `information_schema`, a guard that
//! lets only queries through (no DDL, DML or `SET`), result conversion, and column headers as
//! MySQL shows them.
//!
//! Bounded: every context of the node shares one memory pool (`query_memory_limit`) that both
//! DataFusion's operators and the results reserve from — a result is converted batch by batch
//! and its bytes are reserved as it grows, and stay reserved until the session's next statement
//! (after the front end has sent it). The surface has no row generators: DataFusion's table
//! functions (`range`, `generate_series`) are not registered, and neither are the string
//! functions that build a value of any length from a small one (`repeat`, `lpad`, `rpad`),
//! which could allocate gigabytes in a single row before any pool sees it.
//!
//! Headers: Arrow field names are lower case (DataFusion normalises unquoted identifiers), so
//! headers are taken from the query text instead: a wildcard shows the canonical upper-case
//! column names, a column shows as written, an alias as written, an expression as its text.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{
    DataType, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type,
    UInt16Type, UInt32Type, UInt64Type,
};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::catalog::{CatalogProvider, MemoryCatalogProvider};
use datafusion::common::SchemaError;
use datafusion::error::DataFusionError;
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::memory_pool::{
    GreedyMemoryPool, MemoryConsumer, MemoryPool, MemoryReservation,
};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::{SQLOptions, SessionConfig, SessionContext};
use datafusion::sql::parser::{DFParser, Statement as DfStatement};
use datafusion::sql::sqlparser::ast::{Expr, SelectItem, SetExpr, Statement as AstStatement};
use datafusion::sql::sqlparser::dialect::MySqlDialect;
use datafusion::variable::VarType;
use futures::StreamExt;

use crate::output::{Column, ColumnType, Output, Value};
use crate::system::{
    INFORMATION_SCHEMA, INTERNAL_CATALOG, InformationSchema, SystemContext, canonical_column,
};
use crate::variables::SystemVariables;
use crate::yielding::YieldEverywhere;
use crate::{Error, Result};

/// Scalar functions not offered: each builds a value of a length the query chooses, in one
/// allocation no memory pool sees.
const UNBOUNDED_FUNCTIONS: &[&str] = &["repeat", "lpad", "rpad"];

/// The node's query memory pool: `limit` bytes for all queries together.
pub fn memory_pool(limit: u64) -> Arc<dyn MemoryPool> {
    Arc::new(GreedyMemoryPool::new(
        usize::try_from(limit).unwrap_or(usize::MAX),
    ))
}

/// A DataFusion context whose default schema is our `information_schema`, reserving from
/// `pool`.
pub fn new_context(system: SystemContext, pool: Arc<dyn MemoryPool>) -> Result<SessionContext> {
    let mut config = SessionConfig::new()
        .with_default_catalog_and_schema(INTERNAL_CATALOG, INFORMATION_SCHEMA)
        .with_create_default_catalog_and_schema(false)
        .with_information_schema(false)
        .with_target_partitions(1);
    config.options_mut().sql_parser.dialect = datafusion::config::Dialect::MySQL;
    let runtime = RuntimeEnvBuilder::new()
        .with_memory_pool(pool)
        .build_arc()
        .map_err(query_error)?;
    let state = SessionStateBuilder::new()
        .with_config(config)
        .with_runtime_env(runtime)
        .with_default_features()
        .with_table_functions(HashMap::new())
        .with_physical_optimizer_rule(Arc::new(YieldEverywhere))
        .build();
    let planners = crate::mysql_compat::planners(state.expr_planners());
    let state = SessionStateBuilder::new_from_existing(state)
        .with_expr_planners(planners)
        .build();
    let ctx = SessionContext::new_with_state(state);
    crate::mysql_compat::install(&ctx);
    for name in UNBOUNDED_FUNCTIONS {
        ctx.deregister_udf(name);
    }
    let catalog = MemoryCatalogProvider::new();
    catalog
        .register_schema(INFORMATION_SCHEMA, Arc::new(InformationSchema::new(system)))
        .map_err(query_error)?;
    ctx.register_catalog(INTERNAL_CATALOG, Arc::new(catalog));
    ctx.register_variable(VarType::System, Arc::new(SystemVariables));
    Ok(ctx)
}

/// DataFusion's message without its internal prefixes (`Error during planning: `, …).
pub fn query_error(error: DataFusionError) -> Error {
    let error = error.find_root();
    if let DataFusionError::SchemaError(schema_error, _) = error
        && let SchemaError::FieldNotFound { field, .. } = schema_error.as_ref()
    {
        return Error::UnknownColumn {
            name: field.name().to_owned(),
        };
    }
    if let DataFusionError::Plan(m) = error
        && let Some(name) = m
            .strip_prefix("table '")
            .and_then(|r| r.strip_suffix("' not found"))
    {
        let name = name
            .strip_prefix(&format!("{INTERNAL_CATALOG}."))
            .unwrap_or(name);
        return Error::UnknownTable {
            name: name.to_owned(),
        };
    }
    let message = match error {
        DataFusionError::Plan(m) | DataFusionError::NotImplemented(m) if !m.is_empty() => m.clone(),
        DataFusionError::SchemaError(e, _) => e.to_string(),
        DataFusionError::SQL(e, _) => format!("Syntax error: {e}"),
        DataFusionError::ResourcesExhausted(m) => format!(
            "The query needs more memory than the node's queries may hold together \
             (query_memory_limit): {m}"
        ),
        other => other.to_string(),
    };
    let message = message
        .strip_prefix("sql parser error: ")
        .map(|m| format!("Syntax error: {m}"))
        .unwrap_or(message);
    Error::Query { message }
}

/// Plans a read-only query: its plan and the headers of its columns.
async fn plan(ctx: &SessionContext, sql: &str) -> Result<(LogicalPlan, Headers)> {
    let mut statements =
        DFParser::parse_sql_with_dialect(sql, &MySqlDialect {}).map_err(|e| Error::Parse {
            message: format!(
                "Syntax error: {}",
                e.to_string().trim_start_matches("sql parser error: ")
            ),
        })?;
    let statement = match (statements.pop_front(), statements.len()) {
        (Some(statement), 0) => statement,
        (None, _) => return Err(Error::Empty),
        (Some(_), more) => return Err(Error::MultipleStatements { count: more + 1 }),
    };
    let headers = Headers::of(&statement);
    // MySQL column names are case-insensitive even when quoted; DataFusion's quoted identifiers
    // are not, and every name here is lower case: plan the text with backquoted names lowered
    // (`FE_HOST` as SQLAlchemy writes it finds `fe_host`). Headers come from the text as sent.
    let mut statement = match lower_quoted_identifiers(sql) {
        Some(lowered) => DFParser::parse_sql_with_dialect(&lowered, &MySqlDialect {})
            .ok()
            .and_then(|mut s| s.pop_front())
            .unwrap_or(statement),
        None => statement,
    };
    crate::mysql_compat::rewrite_statement(&mut statement);
    let plan = ctx
        .state()
        .statement_to_plan(statement)
        .await
        .map_err(query_error)?;
    SQLOptions::new()
        .with_allow_ddl(false)
        .with_allow_dml(false)
        .with_allow_statements(false)
        .verify_plan(&plan)
        .map_err(|_| Error::Unsupported {
            what: "statements that change data".to_owned(),
        })?;
    Ok((plan, headers))
}

/// The columns a read-only query would answer, without running it (for a prepared
/// statement's metadata).
pub async fn columns(ctx: &SessionContext, sql: &str) -> Result<Vec<Column>> {
    let (plan, headers) = plan(ctx, sql).await?;
    let schema = plan.schema().as_arrow().clone();
    let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    Ok(headers
        .resolve(&names)
        .into_iter()
        .zip(schema.fields())
        .map(|(name, field)| Column::new(name, column_type(field.data_type())))
        .collect())
}

/// Runs a read-only query. The reservation holds the result's bytes in the node's query pool;
/// dropping it gives them back.
pub async fn run(ctx: &SessionContext, sql: &str) -> Result<(Output, MemoryReservation)> {
    let (plan, headers) = plan(ctx, sql).await?;
    let frame = ctx.execute_logical_plan(plan).await.map_err(query_error)?;
    let schema = frame.schema().as_arrow().clone();
    let mut stream = frame.execute_stream().await.map_err(query_error)?;
    let reservation = MemoryConsumer::new("query result").register(&ctx.runtime_env().memory_pool);
    let mut rows = Vec::new();
    while let Some(batch) = stream.next().await {
        let batch = batch.map_err(query_error)?;
        // The batch's own bytes first (it is alive while it is converted), then what the
        // converted rows hold.
        let arrow = batch.get_array_memory_size();
        reservation.try_grow(arrow).map_err(query_error)?;
        let converted = batch_rows(&batch)?;
        drop(batch);
        reservation.shrink(arrow);
        reservation
            .try_grow(converted.iter().map(|row| row_bytes(row)).sum())
            .map_err(query_error)?;
        rows.extend(converted);
    }
    let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let columns = headers
        .resolve(&names)
        .into_iter()
        .zip(schema.fields())
        .map(|(name, field)| Column::new(name, column_type(field.data_type())))
        .collect();
    Ok((Output::Rows { columns, rows }, reservation))
}

/// `sql` with every backquoted identifier lower-cased; `None` when it has none.
fn lower_quoted_identifiers(sql: &str) -> Option<String> {
    use crate::statement::tokens::{Token, raw};
    // Raw tokens: the rest of the text, string escapes included, comes back as written.
    let mut tokens = raw(sql).ok()?;
    let mut changed = false;
    for token in &mut tokens {
        if let Token::Word(word) = token
            && word.quote_style == Some('`')
            && word.value.chars().any(char::is_uppercase)
        {
            word.value = word.value.to_lowercase();
            changed = true;
        }
    }
    changed.then(|| tokens.iter().map(ToString::to_string).collect())
}

/// Bytes a converted row holds.
fn row_bytes(row: &[Value]) -> usize {
    std::mem::size_of::<Vec<Value>>()
        + row
            .iter()
            .map(|value| {
                std::mem::size_of::<Value>()
                    + match value {
                        Value::Text(text) => text.capacity(),
                        _ => 0,
                    }
            })
            .sum::<usize>()
}

fn column_type(ty: &DataType) -> ColumnType {
    match ty {
        DataType::Boolean => ColumnType::Boolean,
        t if t.is_integer() => ColumnType::Bigint,
        DataType::Float16 | DataType::Float32 | DataType::Float64 => ColumnType::Double,
        _ => ColumnType::String,
    }
}

/// A batch as rows of cells.
pub fn batch_rows(batch: &RecordBatch) -> Result<Vec<Vec<Value>>> {
    let options = FormatOptions::default();
    let mut columns: Vec<Vec<Value>> = Vec::with_capacity(batch.num_columns());
    for array in batch.columns() {
        columns.push(values(array.as_ref(), &options)?);
    }
    Ok((0..batch.num_rows())
        .map(|r| {
            columns
                .iter_mut()
                .map(|c| std::mem::replace(&mut c[r], Value::Null))
                .collect()
        })
        .collect())
}

fn values(array: &dyn Array, options: &FormatOptions) -> Result<Vec<Value>> {
    macro_rules! ints {
        ($t:ty) => {
            array
                .as_primitive::<$t>()
                .iter()
                .map(|v| {
                    v.map_or(Value::Null, |v| {
                        Value::Int(i64::try_from(v).unwrap_or(i64::MAX))
                    })
                })
                .collect()
        };
    }
    let n = array.len();
    Ok(match array.data_type() {
        DataType::Null => vec![Value::Null; n],
        DataType::Boolean => array
            .as_boolean()
            .iter()
            .map(|v| v.map_or(Value::Null, Value::Bool))
            .collect(),
        DataType::Int8 => ints!(Int8Type),
        DataType::Int16 => ints!(Int16Type),
        DataType::Int32 => ints!(Int32Type),
        DataType::Int64 => ints!(Int64Type),
        DataType::UInt8 => ints!(UInt8Type),
        DataType::UInt16 => ints!(UInt16Type),
        DataType::UInt32 => ints!(UInt32Type),
        DataType::UInt64 => ints!(UInt64Type),
        DataType::Float32 => array
            .as_primitive::<Float32Type>()
            .iter()
            .map(|v| v.map_or(Value::Null, |v| Value::Double(f64::from(v))))
            .collect(),
        DataType::Float64 => array
            .as_primitive::<Float64Type>()
            .iter()
            .map(|v| v.map_or(Value::Null, Value::Double))
            .collect(),
        DataType::Utf8 => array
            .as_string::<i32>()
            .iter()
            .map(|v| v.map_or(Value::Null, |v| Value::Text(v.to_owned())))
            .collect(),
        DataType::Utf8View => array
            .as_string_view()
            .iter()
            .map(|v| v.map_or(Value::Null, |v| Value::Text(v.to_owned())))
            .collect(),
        _ => {
            let formatter =
                ArrayFormatter::try_new(array, options).map_err(|e| query_error(e.into()))?;
            (0..n)
                .map(|i| {
                    if array.is_null(i) {
                        Value::Null
                    } else {
                        Value::Text(formatter.value(i).to_string())
                    }
                })
                .collect()
        }
    })
}

/// What the top-level projection of a query says about its headers.
enum Header {
    Wildcard,
    Named(String),
}

struct Headers(Option<Vec<Header>>);

impl Headers {
    fn of(statement: &DfStatement) -> Self {
        let DfStatement::Statement(statement) = statement else {
            return Self(None);
        };
        let AstStatement::Query(query) = statement.as_ref() else {
            return Self(None);
        };
        let SetExpr::Select(select) = query.body.as_ref() else {
            return Self(None);
        };
        let items = select
            .projection
            .iter()
            .map(|item| match item {
                SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => Header::Wildcard,
                SelectItem::ExprWithAlias { alias, .. } => Header::Named(alias.value.clone()),
                SelectItem::UnnamedExpr(Expr::Identifier(ident)) => {
                    Header::Named(ident.value.clone())
                }
                SelectItem::UnnamedExpr(Expr::CompoundIdentifier(parts)) => {
                    Header::Named(parts.last().map(|p| p.value.clone()).unwrap_or_default())
                }
                SelectItem::UnnamedExpr(expr) => Header::Named(expr.to_string()),
                other => Header::Named(other.to_string()),
            })
            .collect();
        Self(Some(items))
    }

    /// One header per output field.
    fn resolve(&self, fields: &[String]) -> Vec<String> {
        let canonical = |f: &String| canonical_column(f).map_or_else(|| f.clone(), str::to_owned);
        let Some(items) = &self.0 else {
            return fields.iter().map(canonical).collect();
        };
        let wildcards = items
            .iter()
            .filter(|i| matches!(i, Header::Wildcard))
            .count();
        let named = items.len() - wildcards;
        if wildcards > 1 || fields.len() < named || (wildcards == 0 && fields.len() != named) {
            return fields.iter().map(canonical).collect();
        }
        let expanded = fields.len() - named;
        let mut out = Vec::with_capacity(fields.len());
        let mut field = fields.iter();
        for item in items {
            match item {
                Header::Wildcard => out.extend(field.by_ref().take(expanded).map(canonical)),
                Header::Named(name) => {
                    field.next();
                    out.push(name.clone());
                }
            }
        }
        out
    }
}
