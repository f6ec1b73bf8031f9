//! How errors become HTTP answers: a status code and `{"error": {"code", "message"}}`, where
//! `code` is the MySQL error number the MySQL front end would send.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use metacache_catalog::Error as CatalogError;
use serde_json::json;

/// An HTTP error answer.
#[derive(Debug)]
pub struct ApiError {
    /// Status.
    pub status: StatusCode,
    /// MySQL error number.
    pub code: u16,
    /// Message (never a secret value).
    pub message: String,
}

impl ApiError {
    /// An error with `status`.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            code: 1105,
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = Json(json!({"error": {"code": self.code, "message": self.message}}));
        (self.status, body).into_response()
    }
}

fn catalog_status(error: &CatalogError) -> StatusCode {
    match error {
        CatalogError::UnknownCatalog { .. }
        | CatalogError::UnknownCache { .. }
        | CatalogError::CatalogDropped { .. } => StatusCode::NOT_FOUND,
        CatalogError::CatalogExists { .. } | CatalogError::CacheType { .. } => StatusCode::CONFLICT,
        CatalogError::Store(metacache_catalog::StoreError::Unavailable { .. }) => {
            StatusCode::SERVICE_UNAVAILABLE
        }
        CatalogError::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
        CatalogError::NotAllowed { .. } => StatusCode::FORBIDDEN,
        _ => StatusCode::BAD_REQUEST,
    }
}

impl From<metacache_sql::Error> for ApiError {
    fn from(error: metacache_sql::Error) -> Self {
        let status = match &error {
            metacache_sql::Error::Catalog(e) => catalog_status(e),
            e if e.is_client_error() => StatusCode::BAD_REQUEST,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Self {
            status,
            code: error.mysql_code(),
            message: error.to_string(),
        }
    }
}

impl From<CatalogError> for ApiError {
    fn from(error: CatalogError) -> Self {
        metacache_sql::Error::from(error).into()
    }
}

/// Longest request URI served (a look-aside key of 4 KiB, percent-encoded, fits three times).
pub const MAX_URI_BYTES: usize = 16 << 10;

/// The outermost layer: every error answer is the JSON shape, whoever produced it — axum's
/// extractors and body limit (plain text), an unknown route or method (empty), or a URI over
/// [`MAX_URI_BYTES`] (refused here before routing). Hyper itself refuses URIs over 65,534 bytes
/// before any of this runs, with an empty `414`.
pub async fn json_errors(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if request.uri().to_string().len() > MAX_URI_BYTES {
        return ApiError::new(
            StatusCode::URI_TOO_LONG,
            format!("The request URI is longer than {MAX_URI_BYTES} bytes"),
        )
        .into_response();
    }
    let response = next.run(request).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (_, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 4096).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text).trim().to_owned();
    let message = if text.is_empty() {
        match status {
            StatusCode::NOT_FOUND => "No such route; see docs/http.md".to_owned(),
            StatusCode::METHOD_NOT_ALLOWED => {
                "This route does not take that method; see docs/http.md".to_owned()
            }
            other => other
                .canonical_reason()
                .unwrap_or("Request failed")
                .to_owned(),
        }
    } else {
        text
    };
    ApiError::new(status, message).into_response()
}
