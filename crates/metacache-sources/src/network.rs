//! Connect and request timeouts of every network source, in one place (issue 12): the Iceberg
//! REST catalog, Lance REST namespaces, PostgreSQL (ADBC/JDBC) and S3-compatible object stores.
//! A source that stops answering fails its load (every waiter gets the error) instead of
//! holding it, and the waiters, forever.
//!
//! The node keys `source_connect_timeout_seconds` and `source_request_timeout_seconds` are read
//! when the node's [`crate::Sources`] is made ([`configure`]); connectors built afterwards use
//! them. Without a configuration (library use, tests) the defaults apply: 10 s and 60 s.

use std::time::Duration;

use parking_lot::RwLock;

/// How long a source may take to connect, and to answer one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetworkTimeouts {
    /// TCP (and TLS) connection set-up.
    pub connect: Duration,
    /// One request, from sending it to the last byte of its answer.
    pub request: Duration,
}

/// The timeouts before [`configure`]: 10 s to connect, 60 s per request.
const DEFAULT: NetworkTimeouts = NetworkTimeouts {
    connect: Duration::from_secs(10),
    request: Duration::from_secs(60),
};

impl Default for NetworkTimeouts {
    fn default() -> Self {
        DEFAULT
    }
}

static TIMEOUTS: RwLock<NetworkTimeouts> = RwLock::new(DEFAULT);

/// Sets the timeouts of connectors built from now on.
pub fn configure(timeouts: NetworkTimeouts) {
    *TIMEOUTS.write() = timeouts;
}

/// The timeouts in force.
pub fn timeouts() -> NetworkTimeouts {
    *TIMEOUTS.read()
}

/// An HTTP client with the timeouts in force.
#[cfg(any(feature = "iceberg", feature = "lance"))]
pub(crate) fn http_client() -> reqwest::Client {
    let t = timeouts();
    reqwest::Client::builder()
        .connect_timeout(t.connect)
        .timeout(t.request)
        .build()
        .unwrap_or_default()
}

/// `object_store` client options with the timeouts in force.
#[cfg(feature = "s3")]
pub(crate) fn object_store_options() -> object_store::ClientOptions {
    let t = timeouts();
    object_store::ClientOptions::new()
        .with_connect_timeout(t.connect)
        .with_timeout(t.request)
}

/// A client error as a load failure's reason: a timeout says which limit it hit; other errors
/// give their innermost cause (reqwest's own text only repeats the URL).
#[cfg(any(feature = "iceberg", feature = "lance"))]
pub(crate) fn describe(error: &reqwest::Error) -> String {
    let t = timeouts();
    if error.is_timeout() {
        return format!(
            "no answer within {} s (source_request_timeout_seconds)",
            t.request.as_secs()
        );
    }
    let mut cause: &dyn std::error::Error = error;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    if error.is_connect() {
        format!(
            "cannot connect (source_connect_timeout_seconds = {}): {cause}",
            t.connect.as_secs()
        )
    } else {
        cause.to_string()
    }
}
