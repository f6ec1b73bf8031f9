//! Scan scopes over HTTP (§8.2), for engines in any language.
//!
//! | route | answer |
//! |---|---|
//! | `POST /api/v1/scopes` `{"catalog", "idle_timeout_ms"?, "label"?}` | `201 {"scope_id", "expires_at_millis", …}` |
//! | `GET /api/v1/scopes` | `{"scopes": [..]}` (counts and times, never credentials) |
//! | `GET /api/v1/scopes/{id}` | one scope as listed |
//! | `DELETE /api/v1/scopes/{id}` | the scope as it was when closed |
//! | `GET /api/v1/scopes/{id}/catalogs/{c}/databases/{d}/tables/{t}/access[?min_remaining_ms=N]` | the resolution, credentials included |
//!
//! An access holds a lease on the scope for the request's duration: the scope does not expire
//! under it. Credentials leave the process only in the body of an access answer; errors carry
//! no credential (`ScopeError` masks what a source echoes). Statuses: unknown scope 404, a
//! scope of another catalog 400, bounds 429, a source failure 502/503 with `Retry-After`, a
//! `min_remaining_ms` the source's credentials cannot meet 422.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use metacache_cache::scope::{ScopeError, ScopeInfo, ScopedAccess};
use metacache_sources::{OpenScopeError, ScopeRequest, Sources};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::ApiError;

/// The scope routes.
pub fn routes(sources: Arc<Sources>) -> Router {
    Router::new()
        .route("/api/v1/scopes", post(open).get(list))
        .route("/api/v1/scopes/{id}", get(show).delete(close))
        .route(
            "/api/v1/scopes/{id}/catalogs/{catalog}/databases/{database}/tables/{table}/access",
            get(access),
        )
        .with_state(sources)
}

/// Sweeps idle scopes every second until the process ends (their bytes return to the budget
/// even when nobody asks).
pub fn spawn_sweeper(sources: &Arc<Sources>) {
    let scopes = Arc::clone(sources.manager().scopes());
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let expired = scopes.sweep();
            if expired > 0 {
                tracing::debug!(expired, "idle scopes expired");
            }
        }
    });
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OpenBody {
    catalog: String,
    #[serde(default)]
    idle_timeout_ms: Option<u64>,
    #[serde(default)]
    label: Option<String>,
}

async fn open(State(sources): State<Arc<Sources>>, body: axum::body::Bytes) -> Response {
    let body: OpenBody = match serde_json::from_slice(&body) {
        Ok(body) => body,
        Err(e) => {
            return ApiError::new(
                StatusCode::BAD_REQUEST,
                format!(
                    "a scope is opened with {{\"catalog\": …, \"idle_timeout_ms\"?: …, \"label\"?: …}}: {e}"
                ),
            )
            .into_response();
        }
    };
    let request = ScopeRequest {
        label: body.label.unwrap_or_default(),
        idle_timeout: body.idle_timeout_ms.map(Duration::from_millis),
    };
    match sources.open_scope(&body.catalog, request) {
        Ok(scope) => {
            let info = scope.info();
            (StatusCode::CREATED, Json(scope_json(&info))).into_response()
        }
        Err(OpenScopeError::Source(e)) => ApiError::from(e).into_response(),
        Err(OpenScopeError::Scope(e)) => scope_error(&e),
    }
}

async fn list(State(sources): State<Arc<Sources>>) -> Response {
    let scopes: Vec<Value> = sources
        .manager()
        .scopes()
        .list()
        .iter()
        .map(scope_json)
        .collect();
    Json(json!({ "scopes": scopes })).into_response()
}

async fn show(State(sources): State<Arc<Sources>>, Path(id): Path<String>) -> Response {
    match sources.manager().scopes().get(&id) {
        Ok(scope) => Json(scope_json(&scope.info())).into_response(),
        Err(e) => scope_error(&e),
    }
}

async fn close(State(sources): State<Arc<Sources>>, Path(id): Path<String>) -> Response {
    match sources.manager().scopes().close(&id) {
        Ok(info) => Json(scope_json(&info)).into_response(),
        Err(e) => scope_error(&e),
    }
}

#[derive(Deserialize)]
struct AccessQuery {
    #[serde(default)]
    min_remaining_ms: Option<u64>,
}

async fn access(
    State(sources): State<Arc<Sources>>,
    Path((id, catalog, database, table)): Path<(String, String, String, String)>,
    query: Result<Query<AccessQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(query)) = query else {
        return ApiError::new(
            StatusCode::BAD_REQUEST,
            "min_remaining_ms takes a whole number of milliseconds",
        )
        .into_response();
    };
    let scope = match sources.manager().scopes().get(&id) {
        Ok(scope) => scope,
        Err(e) => return scope_error(&e),
    };
    if scope.catalog() != catalog {
        return ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "the scope was opened for catalog '{}', not '{catalog}'",
                scope.catalog()
            ),
        )
        .into_response();
    }
    let min_remaining = Duration::from_millis(query.min_remaining_ms.unwrap_or(0));
    match scope.access(&database, &table, min_remaining).await {
        Ok(access) => {
            let mut response = Json(access_json(&access)).into_response();
            // Credentials: never stored by a proxy or a browser.
            response
                .headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response
        }
        Err(e) => scope_error(&e),
    }
}

/// A scope as `GET /api/v1/scopes` lists it.
fn scope_json(info: &ScopeInfo) -> Value {
    json!({
        "scope_id": info.scope_id,
        "catalog": info.catalog,
        "label": info.label,
        "entries": info.entries,
        "leases": info.leases,
        "earliest_credential_expiry_millis": info.earliest_expiry_millis,
        "bytes": info.bytes,
        "accesses": info.accesses,
        "resolutions": info.resolutions,
        "refreshes": info.refreshes,
        "refresh_failures": info.refresh_failures,
        "refused": info.refused,
        "created_millis": info.created_millis,
        "last_used_millis": info.last_used_millis,
        "idle_timeout_ms": info.idle_timeout_ms,
        "expires_at_millis": info.expires_at_millis,
    })
}

/// An access answer: the resolution with its credentials, and the times that matter.
fn access_json(access: &ScopedAccess) -> Value {
    let handout = &access.handout;
    let resolution = &handout.resolution;
    json!({
        "location": resolution.location,
        "metadata_location": resolution.metadata_location,
        "storage_options": resolution.storage_options,
        "vended": resolution.vended,
        "expires_at_millis": handout.expires_at_millis,
        "valid_until_millis": handout.valid_until_millis,
        "refresh_at_millis": handout.refresh_at_millis,
        "refresh_failed": handout.refresh_failed.as_ref().map(|f| f.message()),
        "scope_expires_at_millis": access.scope_expires_at_millis,
    })
}

/// A scope error as an HTTP answer.
fn scope_error(error: &ScopeError) -> Response {
    let status = match error {
        ScopeError::NotFound => StatusCode::NOT_FOUND,
        ScopeError::TooManyScopes { .. } | ScopeError::TooManyEntries { .. } => {
            StatusCode::TOO_MANY_REQUESTS
        }
        ScopeError::InvalidOption { .. } => StatusCode::BAD_REQUEST,
        ScopeError::LifetimeTooShort { .. } => StatusCode::UNPROCESSABLE_ENTITY,
        ScopeError::WaitTimedOut { .. } | ScopeError::StillRefreshing => {
            StatusCode::SERVICE_UNAVAILABLE
        }
        ScopeError::Source { .. } => {
            match error
                .source_error()
                .and_then(|e| e.downcast_ref::<metacache_sources::Error>())
            {
                Some(e) if e.is_not_found() => StatusCode::NOT_FOUND,
                Some(metacache_sources::Error::Unsupported { .. }) => StatusCode::BAD_REQUEST,
                Some(_) => StatusCode::BAD_GATEWAY,
                None => StatusCode::SERVICE_UNAVAILABLE,
            }
        }
    };
    let mut response = ApiError::new(status, error.to_string()).into_response();
    if let ScopeError::Source {
        retry_at_millis, ..
    } = error
    {
        let now = metacache_cache::Clock::System.wall_millis();
        let seconds = retry_at_millis.saturating_sub(now).div_ceil(1000).max(1);
        if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
    }
    response
}
