//! The HTTP front end (axum): SQL, metrics, health, catalogs and engines as JSON, and the
//! look-aside caches.
//!
//! Every route but `/healthz` needs `Authorization: Bearer <http_token>` when a token is
//! configured; with none, only loopback clients are served. Bodies above `http_body_limit` get
//! 413 before they are read in full.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, Query, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use metacache_catalog::{Catalog, CatalogManager, CreateCatalog, Properties};
use metacache_engines::EngineDef;
use metacache_sql::{Output, SqlEngine};
use serde::Deserialize;
use serde_json::{Value as Json_, json};

use subtle::ConstantTimeEq;

use crate::error::ApiError;
use crate::tls::Peer;
use crate::{lookaside, metadata, metrics};

/// What the handlers share.
#[derive(Clone)]
pub struct HttpState {
    engine: Arc<SqlEngine>,
    token: Option<Arc<str>>,
}

/// The router, ready to serve with `ConnectInfo<Peer>` (with or without TLS).
pub fn router(engine: Arc<SqlEngine>, token: Option<String>, body_limit: usize) -> Router {
    let state = HttpState {
        engine: Arc::clone(&engine),
        token: token.filter(|t| !t.is_empty()).map(Arc::from),
    };
    let manager = Arc::clone(engine.manager());
    let caches = Router::new()
        .route(
            "/api/v1/catalogs/{catalog}/caches/{engine}/{entry}/{*key}",
            get(lookaside::get)
                .put(lookaside::put)
                .delete(lookaside::delete),
        )
        .with_state(manager);
    let metadata = metadata::routes(Arc::clone(engine.sources()));
    let scopes = crate::scopes::routes(Arc::clone(engine.sources()));
    let api = Router::new()
        .route("/metrics", get(metrics_text))
        .route("/api/v1/sql", post(sql))
        .route("/api/v1/catalogs", get(list_catalogs).post(create_catalog))
        .route(
            "/api/v1/catalogs/{catalog}",
            get(show_catalog).patch(alter_catalog).delete(drop_catalog),
        )
        .route("/api/v1/catalogs/{catalog}/refresh", post(refresh_catalog))
        .route("/api/v1/catalogs/{catalog}/advice", get(catalog_advice))
        .route("/api/v1/cluster/rows/{table}", get(local_rows))
        .route("/api/v1/engines", get(list_engines))
        .route(
            "/api/v1/engines/{engine}",
            put(define_engine).get(show_engine).delete(remove_engine),
        )
        .with_state(state.clone())
        .merge(caches)
        .merge(metadata)
        .merge(scopes)
        .layer(middleware::from_fn_with_state(state, authorize));
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/", get(crate::dashboard::page))
        .merge(api)
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(axum::Extension(crate::lookaside::BodyLimit(body_limit)))
        .layer(middleware::from_fn(crate::error::json_errors))
}

async fn authorize(
    State(state): State<HttpState>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    request: Request,
    next: Next,
) -> Response {
    let allowed = match &state.token {
        Some(token) => request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .is_some_and(|given| bool::from(given.as_bytes().ct_eq(token.as_bytes()))),
        None => peer.ip().is_loopback(),
    };
    if allowed {
        return next.run(request).await;
    }
    let (status, message) = match state.token {
        Some(_) => (
            StatusCode::UNAUTHORIZED,
            "A valid 'Authorization: Bearer <token>' header is required",
        ),
        None => (
            StatusCode::FORBIDDEN,
            "Only loopback clients are served when no http_token is configured",
        ),
    };
    let mut response = ApiError::new(status, message).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
    }
    response
}

async fn metrics_text(State(state): State<HttpState>) -> Response {
    let manager = Arc::clone(state.engine.manager());
    let text = tokio::task::spawn_blocking(move || metrics::render(&manager))
        .await
        .unwrap_or_default();
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

async fn sql(State(state): State<HttpState>, body: Bytes) -> Result<Response, ApiError> {
    let text = std::str::from_utf8(&body)
        .map_err(|_| ApiError::new(StatusCode::BAD_REQUEST, "The statement must be UTF-8 text"))?;
    let mut session = state.engine.session("http", 0)?;
    let output = session.execute(text).await?;
    Ok(match output {
        // Serialised straight from the rows (no intermediate JSON tree); warnings of a result
        // set (a peer of a cluster that did not answer) only when any.
        Output::Rows { columns, rows } => Json(RowsAnswer {
            columns: &columns,
            rows: &rows,
            warnings: session.warnings(),
        })
        .into_response(),
        Output::Done { affected, warnings } => {
            Json(json!({"affected": affected, "warnings": warnings})).into_response()
        }
    })
}

/// A result set as `/api/v1/sql` answers it.
#[derive(serde::Serialize)]
struct RowsAnswer<'a> {
    columns: &'a [metacache_sql::Column],
    rows: &'a [Vec<metacache_sql::Value>],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    warnings: &'a [String],
}

/// `?catalog=<name>`: that catalog's rows only; `?columns=A,B`: those columns only.
#[derive(serde::Deserialize)]
struct RowsQuery {
    catalog: Option<String>,
    columns: Option<String>,
}

/// This node's own rows of a system table, for the other nodes of a cluster (their
/// `catalog_meta_cache_statistics` and `catalog_meta_cache_nodes` show every node): an Arrow
/// IPC stream when the request accepts one (what nodes ask for), JSON otherwise.
async fn local_rows(
    State(state): State<HttpState>,
    Path(table): Path<String>,
    Query(only): Query<RowsQuery>,
    headers: axum::http::HeaderMap,
) -> Result<Response, ApiError> {
    use metacache_sql::system::peers::{ARROW_STREAM, LocalRowsError, encode_arrow};
    let arrow = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.contains(ARROW_STREAM));
    let engine = Arc::clone(&state.engine);
    let answer = tokio::task::spawn_blocking(move || {
        let columns: Option<Vec<&str>> = only
            .columns
            .as_deref()
            .map(|c| c.split(',').map(str::trim).collect());
        let batch = engine.local_batch(&table, only.catalog.as_deref(), columns.as_deref())?;
        if arrow {
            let bytes = encode_arrow(&batch).map_err(|e| LocalRowsError::Batch(e.to_string()))?;
            Ok(([(header::CONTENT_TYPE, ARROW_STREAM)], bytes).into_response())
        } else {
            let rows = metacache_sql::query::batch_rows(&batch)
                .map_err(|e| LocalRowsError::Batch(e.to_string()))?;
            Ok(Json(json!({"node": engine.fe_host(), "rows": rows})).into_response())
        }
    })
    .await
    .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    answer.map_err(|e: LocalRowsError| {
        let status = match e {
            LocalRowsError::NoSuchTable => StatusCode::NOT_FOUND,
            LocalRowsError::NoSuchColumn { .. } => StatusCode::BAD_REQUEST,
            LocalRowsError::Batch(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, e.to_string())
    })
}

fn catalog_json(catalog: &Catalog) -> Json_ {
    let def = catalog.def();
    json!({
        "name": def.name,
        "id": def.id,
        "type": def.catalog_type(),
        "comment": def.comment,
        "properties": def.properties.masked(),
        "created_at": time(def.created_at_millis),
        "updated_at": time(def.updated_at_millis),
        "max_weight": catalog.budget().effective_limit().map_or(-1, |l| i64::try_from(l).unwrap_or(i64::MAX)),
        "estimated_weight": catalog.budget().used(),
    })
}

fn time(millis: u64) -> Json_ {
    match metacache_sql::system::format_millis(Some(millis)) {
        metacache_sql::Value::Text(t) => Json_::String(t),
        _ => Json_::Null,
    }
}

/// Runs a catalog operation on a blocking thread (the store writes to disk, or commits to a
/// cluster's PostgreSQL).
pub(crate) async fn blocking<T: Send + 'static>(
    manager: &Arc<CatalogManager>,
    f: impl FnOnce(&CatalogManager) -> metacache_catalog::Result<T> + Send + 'static,
) -> Result<T, ApiError> {
    let manager = Arc::clone(manager);
    tokio::task::spawn_blocking(move || f(&manager))
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .map_err(ApiError::from)
}

async fn list_catalogs(State(state): State<HttpState>) -> Json<Json_> {
    let catalogs: Vec<Json_> = state
        .engine
        .manager()
        .catalogs()
        .iter()
        .map(|c| catalog_json(c))
        .collect();
    Json(json!({"catalogs": catalogs}))
}

async fn show_catalog(
    State(state): State<HttpState>,
    Path(name): Path<String>,
) -> Result<Json<Json_>, ApiError> {
    Ok(Json(catalog_json(&*state.engine.manager().catalog(&name)?)))
}

/// The quota advisor's curves of one catalog on this node: each cache's (with the property
/// that sets its limit) and the catalog's own (its caches under one limit), as the dashboard's
/// what-if control reads them.
async fn catalog_advice(
    State(state): State<HttpState>,
    Path(name): Path<String>,
) -> Result<Json<Json_>, ApiError> {
    let catalog = state.engine.manager().catalog(&name)?;
    let rows = tokio::task::spawn_blocking(move || catalog.advice_rows())
        .await
        .unwrap_or_default();
    let cache_rows: Vec<&metacache_catalog::AdviceRow> =
        rows.iter().filter(|r| r.entry_name.is_some()).collect();
    // On the catalog's points (what one shared limit of that size does): the bytes each cache
    // gets in the best split of that size, and the hit rate of that split.
    let split = |shares: &[u64]| -> Vec<Json_> {
        shares
            .iter()
            .zip(&cache_rows)
            .map(|(bytes, c)| {
                json!({
                    "engine": c.engine,
                    "entry_name": c.entry_name,
                    "property": c.property,
                    "bytes": bytes,
                })
            })
            .collect()
    };
    let curve = |row: &metacache_catalog::AdviceRow| {
        let a = &row.advice;
        let points: Vec<Json_> = a
            .points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut point = json!({
                    "cache_bytes": p.cache_bytes,
                    "hit_rate": p.hit_rate,
                    "loads_per_minute": p.loads_per_minute,
                    "sampled_requests": p.sampled_requests,
                    "confidence": p.confidence,
                });
                if let Some(best) = row.split.get(i) {
                    point["split"] = Json_::Array(split(&best.shares));
                    point["split_hit_rate"] = json!(best.hit_rate);
                }
                point
            })
            .collect();
        json!({
            "engine": row.engine,
            "entry_name": row.entry_name,
            "property": row.property,
            "limit": row.limit,
            "points": points,
            "sampled_keys": a.sampled_keys,
            "sample_limit": a.sample_limit,
            "sampling_rate": a.sampling_rate,
            "working_set_bytes": a.working_set_bytes,
            "requests_per_minute": a.requests_per_minute,
            "reserved_bytes": a.reserved_bytes,
            "dropped_events": a.dropped_events,
            "half_life_seconds": a.half_life.as_secs_f64(),
        })
    };
    let caches: Vec<Json_> = rows
        .iter()
        .filter(|r| r.entry_name.is_some())
        .map(curve)
        .collect();
    let catalog = rows.iter().find(|r| r.entry_name.is_none()).map(curve);
    Ok(Json(json!({
        "name": name,
        "fe_host": state.engine.fe_host(),
        "caches": caches,
        "catalog": catalog,
    })))
}

#[derive(Deserialize)]
struct CreateBody {
    name: String,
    #[serde(default)]
    comment: String,
    #[serde(default)]
    properties: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    if_not_exists: bool,
}

fn json_body<T: serde::de::DeserializeOwned>(body: &Bytes) -> Result<T, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, format!("Invalid JSON body: {e}")))
}

async fn create_catalog(State(state): State<HttpState>, body: Bytes) -> Result<Response, ApiError> {
    let body: CreateBody = json_body(&body)?;
    let name = body.name.clone();
    let statement = CreateCatalog {
        name: body.name,
        if_not_exists: body.if_not_exists,
        comment: body.comment,
        properties: Properties::from_pairs(body.properties),
    };
    let manager = state.engine.manager();
    let outcome = blocking(manager, move |m| m.create_catalog(statement)).await?;
    let status = if outcome.changed {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let catalog = manager.catalog(&name)?;
    Ok((
        status,
        Json(json!({"catalog": catalog_json(&catalog), "warnings": outcome.warnings})),
    )
        .into_response())
}

#[derive(Deserialize)]
struct AlterBody {
    properties: std::collections::BTreeMap<String, String>,
}

async fn alter_catalog(
    State(state): State<HttpState>,
    Path(name): Path<String>,
    body: Bytes,
) -> Result<Json<Json_>, ApiError> {
    let body: AlterBody = json_body(&body)?;
    let manager = state.engine.manager();
    let target = name.clone();
    let outcome = blocking(manager, move |m| {
        m.alter_catalog(&target, Properties::from_pairs(body.properties))
    })
    .await?;
    let dropped: Vec<String> = if outcome.dropped.all {
        vec!["*".to_owned()]
    } else {
        outcome.dropped.config_engines.iter().cloned().collect()
    };
    Ok(Json(json!({
        "catalog": catalog_json(&*manager.catalog(&name)?),
        "changed": outcome.changed,
        "dropped_caches_of": dropped,
        "warnings": outcome.warnings,
    })))
}

async fn drop_catalog(
    State(state): State<HttpState>,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    blocking(state.engine.manager(), move |m| {
        m.drop_catalog(&name, false)
    })
    .await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn refresh_catalog(
    State(state): State<HttpState>,
    Path(name): Path<String>,
) -> Result<Json<Json_>, ApiError> {
    let removed = blocking(state.engine.manager(), move |m| m.refresh_catalog(&name)).await?;
    Ok(Json(json!({"removed": removed})))
}

async fn list_engines(State(state): State<HttpState>) -> Json<Json_> {
    let registry = state.engine.manager().registry();
    let engines: Vec<Json_> = registry
        .all()
        .iter()
        .map(|e| json!({"name": e.name, "builtin": registry.is_builtin(&e.name), "definition": &**e}))
        .collect();
    Json(json!({"engines": engines}))
}

async fn show_engine(
    State(state): State<HttpState>,
    Path(name): Path<String>,
) -> Result<Json<Json_>, ApiError> {
    let engine = state
        .engine
        .manager()
        .registry()
        .get(&name)
        .ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, format!("Unknown engine '{name}'")))?;
    Ok(Json(json!(&*engine)))
}

async fn define_engine(
    State(state): State<HttpState>,
    Path(name): Path<String>,
    body: Bytes,
) -> Result<Json<Json_>, ApiError> {
    let mut value: Json_ = json_body(&body)?;
    match value.get("name").and_then(Json_::as_str) {
        Some(given) if given != name => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("The body names engine '{given}', the path '{name}'"),
            ));
        }
        Some(_) => {}
        None => {
            if let Some(object) = value.as_object_mut() {
                object.insert("name".to_owned(), Json_::String(name.clone()));
            }
        }
    }
    let definition: EngineDef = serde_json::from_value(value).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("Invalid engine definition: {e}"),
        )
    })?;
    let engine = blocking(state.engine.manager(), move |m| m.define_engine(definition)).await?;
    Ok(Json(json!(&*engine)))
}

async fn remove_engine(
    State(state): State<HttpState>,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    let target = name.clone();
    if blocking(state.engine.manager(), move |m| m.remove_engine(&target)).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("Unknown engine '{name}'"),
        ))
    }
}
