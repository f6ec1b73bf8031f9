//! Catalog metadata as JSON for engines in any language: databases, tables, schema,
//! partitions, files, snapshots and column statistics, answered by the catalog's connector through its caches.
//!
//! | route | answer |
//! |---|---|
//! | `GET …/{c}/databases` | `{"databases": [..]}` |
//! | `GET …/{c}/databases/{db}/tables` | `{"tables": [..]}` |
//! | `GET …/{c}/databases/{db}/tables/{t}` | location, format, comment, partition keys |
//! | `GET …/tables/{t}/schema` | `{"columns": [{name, type, nullable, comment}], "partition_keys": [..]}` |
//! | `GET …/tables/{t}/partitions?k=v&k=v2` | `{"partitions": [{name, values, location}]}` |
//! | `GET …/tables/{t}/files?k=v` | `{"partitions": [{partition, files: [{path, size, modified_millis}]}], "file_count", "total_bytes"}` |
//! | `GET …/tables/{t}/snapshots` | `{"snapshots": [..]}` |
//! | `GET …/tables/{t}/column-stats` | `{"columns": {name: {ndv, null_count, min, max, avg_size, max_size}}}` (columns with statistics; Hive and HMS catalogs) |
//! | `GET …/tables/{t}/access[?current=true]` | `{uri, storage_options, cacheable, not_cached_because?}` (Lance; `current` bypasses the cache) |
//! | `POST …/tables/{t}/refresh` | `{"invalidated": n}` (as `REFRESH TABLE`) |
//!
//! Query parameters of `partitions` and `files` select partitions: each named partition
//! column must have one of the given values (repeat a key for several values).

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use metacache_sources::{Error as SourceError, Sources};
use serde_json::json;

use crate::error::ApiError;

const TABLE: &str = "/api/v1/catalogs/{catalog}/databases/{database}/tables/{table}";

/// The metadata routes.
pub fn routes(sources: Arc<Sources>) -> Router {
    Router::new()
        .route("/api/v1/catalogs/{catalog}/databases", get(databases))
        .route(
            "/api/v1/catalogs/{catalog}/databases/{database}/tables",
            get(tables),
        )
        .route(TABLE, get(table))
        .route(&format!("{TABLE}/schema"), get(schema))
        .route(&format!("{TABLE}/partitions"), get(partitions))
        .route(&format!("{TABLE}/files"), get(files))
        .route(&format!("{TABLE}/snapshots"), get(snapshots))
        .route(&format!("{TABLE}/column-stats"), get(column_stats))
        .route(&format!("{TABLE}/access"), get(access))
        .route(&format!("{TABLE}/refresh"), post(refresh))
        .with_state(sources)
}

type Sources_ = State<Arc<Sources>>;
type TablePath = Path<(String, String, String)>;

impl From<SourceError> for ApiError {
    fn from(error: SourceError) -> Self {
        let status = match &error {
            e if e.is_not_found() => StatusCode::NOT_FOUND,
            SourceError::NotFound { .. } => StatusCode::NOT_FOUND,
            SourceError::NoSource { .. }
            | SourceError::NoConnector { .. }
            | SourceError::Connection { .. }
            | SourceError::Unsupported { .. } => StatusCode::BAD_REQUEST,
            SourceError::Store { .. } | SourceError::Invalid { .. } | SourceError::Load(_) => {
                StatusCode::BAD_GATEWAY
            }
            SourceError::Catalog(_) => StatusCode::BAD_REQUEST,
        };
        let sql = metacache_sql::Error::from(error);
        Self {
            status,
            code: sql.mysql_code(),
            message: sql.to_string(),
        }
    }
}

/// Groups `k=v` query pairs into the partition filter, keeping first-seen column order.
fn filter(pairs: Vec<(String, String)>) -> Vec<(String, Vec<String>)> {
    let mut grouped: Vec<(String, Vec<String>)> = Vec::new();
    for (key, value) in pairs {
        match grouped.iter_mut().find(|(k, _)| *k == key) {
            Some((_, values)) => values.push(value),
            None => grouped.push((key, vec![value])),
        }
    }
    grouped
}

async fn databases(
    State(sources): Sources_,
    Path(catalog): Path<String>,
) -> Result<Response, ApiError> {
    let databases = sources.connector(&catalog)?.databases().await?;
    Ok(Json(json!({ "databases": databases })).into_response())
}

async fn tables(
    State(sources): Sources_,
    Path((catalog, database)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let tables = sources.connector(&catalog)?.tables(&database).await?;
    Ok(Json(json!({ "tables": tables })).into_response())
}

async fn table(
    State(sources): Sources_,
    Path((catalog, database, table)): TablePath,
) -> Result<Response, ApiError> {
    let info = sources
        .connector(&catalog)?
        .table(&database, &table)
        .await?;
    Ok(Json(info).into_response())
}

async fn schema(
    State(sources): Sources_,
    Path((catalog, database, table)): TablePath,
) -> Result<Response, ApiError> {
    let schema = sources
        .connector(&catalog)?
        .schema(&database, &table)
        .await?;
    Ok(Json(&*schema).into_response())
}

async fn column_stats(
    State(sources): Sources_,
    Path((catalog, database, table)): TablePath,
) -> Result<Response, ApiError> {
    let columns = sources
        .connector(&catalog)?
        .column_statistics(&database, &table)
        .await?;
    Ok(Json(json!({ "columns": columns })).into_response())
}

async fn partitions(
    State(sources): Sources_,
    Path((catalog, database, table)): TablePath,
    Query(pairs): Query<Vec<(String, String)>>,
) -> Result<Response, ApiError> {
    let partitions = sources
        .connector(&catalog)?
        .partitions(&database, &table, &filter(pairs))
        .await?;
    Ok(Json(json!({ "partitions": partitions })).into_response())
}

async fn files(
    State(sources): Sources_,
    Path((catalog, database, table)): TablePath,
    Query(pairs): Query<Vec<(String, String)>>,
) -> Result<Response, ApiError> {
    let groups = sources
        .connector(&catalog)?
        .files(&database, &table, &filter(pairs))
        .await?;
    let file_count: usize = groups.iter().map(|g| g.files.files.len()).sum();
    let total_bytes: u64 = groups.iter().map(|g| g.files.total_bytes()).sum();
    Ok(Json(json!({
        "partitions": groups,
        "file_count": file_count,
        "total_bytes": total_bytes,
    }))
    .into_response())
}

async fn snapshots(
    State(sources): Sources_,
    Path((catalog, database, table)): TablePath,
) -> Result<Response, ApiError> {
    let snapshots = sources
        .connector(&catalog)?
        .snapshots(&database, &table)
        .await?;
    Ok(Json(json!({ "snapshots": snapshots })).into_response())
}

#[derive(serde::Deserialize)]
struct AccessQuery {
    #[serde(default)]
    current: bool,
}

async fn access(
    State(sources): Sources_,
    Path((catalog, database, table)): TablePath,
    Query(query): Query<AccessQuery>,
) -> Result<Response, ApiError> {
    let access = sources
        .connector(&catalog)?
        .table_access(&database, &table, query.current)
        .await?;
    Ok(Json(access).into_response())
}

async fn refresh(
    State(sources): Sources_,
    Path((catalog, database, table)): TablePath,
) -> Result<Response, ApiError> {
    // A cluster's store commits the refresh: off the async workers.
    let invalidated = crate::http::blocking(sources.manager(), move |m| {
        m.refresh_table(&catalog, &database, &table)
    })
    .await?;
    Ok(Json(json!({ "invalidated": invalidated })).into_response())
}
