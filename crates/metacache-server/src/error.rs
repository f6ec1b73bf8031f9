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
        CatalogError::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
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
