//! The look-aside cache API for engines in other languages: values are opaque bytes, charged
//! what they keep allocated plus the accounting overhead, admitted through the same ledger as
//! every other cache value.
//!
//! A request body may be a slice of hyper's larger receive buffer; retaining it would pin that
//! buffer while the ledger saw only the slice, and collecting a body into a growing buffer
//! holds up to twice its size while it arrives. A `PUT` reads the body straight into one
//! allocation of its declared length (`read_exact`), or copies it once into an exact one
//! ([`Blob::copied`]), so the charge is what the process really holds and a request in flight
//! holds its value once.
//!
//! `GET` answers the bytes or 404; `PUT` answers whether the value was retained and, if not,
//! why (`budget_exceeded`, `entry_too_large`, …); `DELETE` removes the key and fences loads of
//! the cache in flight.
//!
//! # Leases (SPEC §8.3)
//! - A `GET` that misses hands `Metacache-Lease: <token>` to one caller per key; the caller
//!   loads and `PUT`s with the same header. Other callers get 404 without a token, or, with
//!   `?wait=<ms>`, wait up to that long (at most the lease timeout) for the value the holder
//!   puts: single flight across processes.
//! - A `GET` that hits a value due for refresh (an `auto-refresh` entry) returns it with a
//!   refresh lease to one caller per value.
//! - A `PUT` with a lease that an invalidation (`DELETE`, `REFRESH`, `ALTER`), a newer lease or
//!   its expiry (`external_meta_cache_lease_timeout_ms`) made stale stores nothing:
//!   `{"retained": false, "reason": "invalidated"}`. A `PUT` without a lease stores as before.
//! - Waiting callers are bounded node-wide ([`MAX_WAITERS`]); over it, a caller gets its 404
//!   at once.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use std::time::Duration;

use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use metacache_cache::{Admission, LeaseLookup, LeaseToken, ManagedCache};
use metacache_catalog::CatalogManager;
use metacache_estimate::{EstimateSize, Sizer};
use serde_json::json;

use crate::error::ApiError;

/// A value of a look-aside cache.
#[derive(Debug, Clone)]
pub struct Blob(pub Bytes);

impl Blob {
    /// A value owning an exact-sized copy of `bytes` (never a view into a larger buffer).
    pub fn copied(bytes: &[u8]) -> Self {
        Self(Bytes::copy_from_slice(bytes))
    }
}

/// The header `Bytes` allocates when an exact-sized buffer is first shared (by a `GET`).
const SHARED_HEADER: usize = 24;

impl EstimateSize for Blob {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        if !self.0.is_empty() {
            sizer.add_allocation(self.0.len());
            sizer.add_allocation(SHARED_HEADER);
        }
    }
}

/// Longest key accepted.
pub const MAX_KEY_LEN: usize = 4096;
/// The lease header of `GET` answers and `PUT` requests.
pub const LEASE_HEADER: &str = "metacache-lease";
/// Callers of the node that may wait (`?wait=`) for a lease holder's value at once.
pub const MAX_WAITERS: usize = 1024;

static WAITERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// One of the [`MAX_WAITERS`] slots; given back when dropped.
struct WaitSlot;

impl WaitSlot {
    fn take() -> Option<Self> {
        use std::sync::atomic::Ordering::SeqCst;
        WAITERS
            .fetch_update(SeqCst, SeqCst, |n| (n < MAX_WAITERS).then_some(n + 1))
            .ok()
            .map(|_| WaitSlot)
    }
}

impl Drop for WaitSlot {
    fn drop(&mut self) {
        WAITERS.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// `?wait=<ms>` of a `GET`.
#[derive(Debug, serde::Deserialize)]
pub struct GetQuery {
    /// Milliseconds to wait for the lease holder's value.
    #[serde(default)]
    wait: Option<u64>,
}

type Target = (String, String, String, String);

fn cache(
    manager: &CatalogManager,
    (catalog, engine, entry, key): &Target,
) -> Result<ManagedCache<String, Blob>, ApiError> {
    if key.is_empty() || key.len() > MAX_KEY_LEN {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("Keys are 1 to {MAX_KEY_LEN} bytes"),
        ));
    }
    // Built-in engines' caches hold typed values their connectors load; a look-aside value
    // would build one with the wrong types and break the catalog's own queries (issue 12).
    if manager.registry().is_builtin(engine) {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "Cache '{entry}' belongs to the built-in engine '{engine}', which loads it itself; the look-aside API serves the caches of remote engines (PUT /api/v1/engines/<name>)"
            ),
        ));
    }
    manager
        .catalog(catalog)?
        .cache_by_name::<String, Blob>(engine, entry)?
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                format!("Cache '{entry}' of engine '{engine}' is not created for catalog '{catalog}' (a rule of the engine leaves it out)"),
            )
        })
}

/// `response` with the `Metacache-Lease` header of `lease`, if any.
fn with_lease(mut response: Response, lease: Option<LeaseToken>) -> Response {
    if let Some(token) = lease {
        response
            .headers_mut()
            .insert(LEASE_HEADER, HeaderValue::from(token));
    }
    response
}

/// `GET …/{key}[?wait=<ms>]`.
pub async fn get(
    State(manager): State<Arc<CatalogManager>>,
    Path(target): Path<Target>,
    Query(query): Query<GetQuery>,
) -> Result<Response, ApiError> {
    let cache = cache(&manager, &target)?;
    let found = |value: &Blob, lease: Option<LeaseToken>| {
        let response = (
            [(header::CONTENT_TYPE, "application/octet-stream")],
            value.0.clone(),
        );
        with_lease(response.into_response(), lease)
    };
    let missing = |lease: Option<LeaseToken>| {
        let error = ApiError::new(
            StatusCode::NOT_FOUND,
            format!("No value for key '{}'", target.3),
        );
        with_lease(error.into_response(), lease)
    };
    match cache.lease_get(&target.3) {
        LeaseLookup::Hit(value, refresh) => Ok(found(&value, refresh)),
        LeaseLookup::Leased(token) => Ok(missing(Some(token))),
        LeaseLookup::Held(Some(waiter)) if query.wait.is_some_and(|w| w > 0) => {
            let Some(_slot) = WaitSlot::take() else {
                return Ok(missing(None));
            };
            let limit = Duration::from_millis(query.wait.unwrap_or(0)).min(manager.lease_timeout());
            match cache.lease_wait(waiter, limit).await {
                Some(value) => Ok(found(&value, None)),
                None => Ok(missing(None)),
            }
        }
        LeaseLookup::Held(_) => Ok(missing(None)),
    }
}

/// Reads a request body into one allocation of exactly its length when the client declares it
/// (`Content-Length`), so the value costs its size once: no growing buffer, no second copy.
/// The body limit (`http_body_limit`) still applies.
async fn read_exact(request: Request) -> Result<Blob, ApiError> {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "The value is larger than http_body_limit",
        )
    };
    let limit = request
        .extensions()
        .get::<BodyLimit>()
        .map_or(usize::MAX, |l| l.0);
    if declared.is_some_and(|d| d > limit) {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(declared.unwrap_or(0));
    let mut stream = request.into_body().into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "The request body could not be read",
            )
        })?;
        if bytes.len() + chunk.len() > limit {
            return Err(too_large());
        }
        bytes.extend_from_slice(&chunk);
    }
    if bytes.len() == bytes.capacity() {
        Ok(Blob(Bytes::from(bytes)))
    } else {
        // No or a wrong length was declared: one exact copy.
        Ok(Blob::copied(&bytes))
    }
}

/// The router's body limit, seen by handlers that read bodies themselves.
#[derive(Debug, Clone, Copy)]
pub struct BodyLimit(pub usize);

/// `PUT …/{key}` with the value as the body.
pub async fn put(
    State(manager): State<Arc<CatalogManager>>,
    Path(target): Path<Target>,
    request: Request,
) -> Result<Response, ApiError> {
    let cache = cache(&manager, &target)?;
    let lease = match request.headers().get(LEASE_HEADER) {
        None => None,
        Some(v) => Some(
            v.to_str()
                .ok()
                .and_then(|t| t.trim().parse::<LeaseToken>().ok())
                .ok_or_else(|| {
                    ApiError::new(
                        StatusCode::BAD_REQUEST,
                        "Metacache-Lease must be the token a GET answered",
                    )
                })?,
        ),
    };
    let value = read_exact(request).await?;
    let (catalog, engine, entry, key) = target;
    let admission = match lease {
        Some(token) => cache.lease_put(key, value, token),
        None => cache.insert(key, value),
    };
    let body = match admission {
        Admission::Retained { charge } => json!({"retained": true, "charge": charge}),
        Admission::Rejected(reason) => json!({"retained": false, "reason": reason.to_string()}),
        Admission::Disabled => json!({"retained": false, "reason": "disabled"}),
        Admission::Fenced => json!({"retained": false, "reason": "invalidated"}),
        Admission::Declined => {
            json!({"retained": false, "reason": "less_frequent_than_residents"})
        }
        Admission::Superseded => json!({"retained": false, "reason": "superseded"}),
    };
    tracing::trace!(catalog, engine, entry, "look-aside put");
    Ok(Json(body).into_response())
}

/// `DELETE …/{key}`.
pub async fn delete(
    State(manager): State<Arc<CatalogManager>>,
    Path(target): Path<Target>,
) -> Result<Response, ApiError> {
    let cache = cache(&manager, &target)?;
    // In a cluster the store carries the DELETE to every node first (a blocking commit).
    let removed = crate::http::blocking(&manager, move |m| {
        let (catalog, engine, entry, key) = &target;
        m.publish_invalidation(catalog, engine, entry, key, || cache.invalidate(key))
    })
    .await?;
    Ok(Json(json!({"removed": removed})).into_response())
}
