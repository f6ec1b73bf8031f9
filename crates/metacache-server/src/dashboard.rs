//! The built-in dashboard: `GET /` serves one page bundled in the binary (HTML, CSS and
//! JavaScript of our own, no third-party code, nothing fetched at run time), which reads the
//! same HTTP API other clients use (`POST /api/v1/sql` over the `information_schema` tables)
//! with the same token rules; and the sampler that keeps the last hour of every cache's
//! counters for it (`catalog_meta_cache_history`).
//!
//! The page itself carries no data, so it is served without a token; every request it makes
//! needs one when `http_token` is set (the page asks for it and keeps it in the tab's
//! `sessionStorage`).

use std::sync::Arc;
use std::time::Duration;

use axum::http::header;
use axum::response::{IntoResponse, Response};
use metacache_catalog::CatalogManager;

/// The page.
const PAGE: &str = include_str!("dashboard/index.html");

/// `GET /`.
pub async fn page() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
                 connect-src 'self'; img-src 'self' data:",
            ),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        PAGE,
    )
        .into_response()
}

/// Samples every cache's counters every `external_meta_cache_history_interval_seconds`. The
/// key is read again every second, so `ADMIN SET FRONTEND CONFIG` applies within a second.
pub fn spawn_history_sampler(manager: Arc<CatalogManager>) {
    tokio::spawn(async move {
        let mut last = tokio::time::Instant::now();
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let interval = manager.history_interval_seconds().max(1);
            if last.elapsed() < Duration::from_secs(interval) {
                continue;
            }
            last = tokio::time::Instant::now();
            let manager = Arc::clone(&manager);
            let sampled =
                tokio::task::spawn_blocking(move || manager.sample_history(wall_millis())).await;
            if let Err(error) = sampled {
                tracing::warn!(%error, "the history sample failed");
            }
        }
    });
}

fn wall_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
