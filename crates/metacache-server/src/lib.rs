//! The front ends of metacache: the MySQL protocol and HTTP, over one [`SqlEngine`].
//!
//! # Components
//! - [`mysql`]: `opensrv-mysql` connections, one SQL session each.
//! - [`http`]: the axum router — `/api/v1/sql`, `/metrics`, `/healthz`, catalogs and engines
//!   as JSON, and the look-aside caches ([`lookaside`]).
//! - [`metrics`]: Prometheus exposition built from the statistics at scrape time.
//! - [`tls`]: optional TLS of both front ends; [`hangup`]: cancels the statement of a MySQL
//!   client that went away; [`slots`]: what a MySQL connection may hold, and for how long.
//! - [`serve`]: binds nothing itself; runs both listeners until `shutdown` resolves, then
//!   stops accepting, lets connections finish for a grace period and closes the rest.
//!
//! # Invariants
//! - A misbehaving client costs only its own connection or request.
//! - Errors reach clients as MySQL error packets or JSON with the same message and code.

pub mod dashboard;
pub mod error;
pub mod hangup;
pub mod http;
pub mod lookaside;
pub mod metadata;
pub mod metrics;
pub mod mysql;
pub mod prepared;
pub mod scopes;
pub mod slots;
pub mod tls;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use metacache_catalog::NodeConfig;
use metacache_sql::SqlEngine;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

/// How the front ends are set up.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// MySQL users and passwords; empty for loopback-only without passwords.
    pub users: Vec<(String, String)>,
    /// HTTP bearer token; `None` for loopback-only.
    pub http_token: Option<String>,
    /// Largest HTTP body.
    pub body_limit: usize,
    /// Most logged-in MySQL sessions (beyond them, only the admin reserve, `slots.rs`).
    pub max_connections: usize,
    /// How long a MySQL client may take to log in.
    pub handshake_timeout: Duration,
    /// How long a logged-in MySQL client may stay silent.
    pub idle_timeout: Duration,
    /// How long open connections may go on after shutdown starts.
    pub grace: Duration,
    /// TLS of both front ends; `None` for plain connections.
    pub tls: Option<Arc<tls::Tls>>,
}

impl ServerOptions {
    /// Options from the node configuration; fails on unusable TLS files.
    pub fn from_config(config: &NodeConfig) -> Result<Self, tls::TlsError> {
        Ok(Self {
            users: config.auth_users.clone(),
            http_token: Some(config.http_token.clone()).filter(|t| !t.is_empty()),
            body_limit: usize::try_from(config.http_body_limit).unwrap_or(usize::MAX),
            max_connections: usize::try_from(config.mysql_max_connections).unwrap_or(usize::MAX),
            handshake_timeout: Duration::from_secs(config.mysql_handshake_timeout_seconds),
            idle_timeout: Duration::from_secs(config.mysql_idle_timeout_seconds),
            grace: Duration::from_secs(config.shutdown_grace_seconds),
            tls: tls::Tls::load(
                &config.tls_cert_file,
                &config.tls_key_file,
                config.mysql_require_secure_transport,
            )?,
        })
    }
}

/// The two listeners, bound (port 0 picks a free port).
pub struct Listeners {
    mysql: TcpListener,
    http: TcpListener,
}

impl Listeners {
    /// Binds both addresses.
    pub async fn bind(mysql_addr: &str, http_addr: &str) -> std::io::Result<Self> {
        let mysql = TcpListener::bind(mysql_addr).await.map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("cannot listen for MySQL on {mysql_addr}: {e}"),
            )
        })?;
        let http = TcpListener::bind(http_addr).await.map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("cannot listen for HTTP on {http_addr}: {e}"),
            )
        })?;
        Ok(Self { mysql, http })
    }

    /// The MySQL address actually bound.
    pub fn mysql_addr(&self) -> std::io::Result<SocketAddr> {
        self.mysql.local_addr()
    }

    /// The HTTP address actually bound.
    pub fn http_addr(&self) -> std::io::Result<SocketAddr> {
        self.http.local_addr()
    }
}

/// Serves both front ends until `shutdown` resolves.
pub async fn serve(
    listeners: Listeners,
    engine: Arc<SqlEngine>,
    options: ServerOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    });
    scopes::spawn_sweeper(engine.sources());
    dashboard::spawn_history_sampler(Arc::clone(engine.manager()));
    let router = http::router(
        Arc::clone(&engine),
        options.http_token.clone(),
        options.body_limit,
    );
    let mut http_stop = stop_rx.clone();
    let stopped = async move {
        let _ = http_stop.wait_for(|stop| *stop).await;
    };
    let service = router.into_make_service_with_connect_info::<tls::Peer>();
    let http = match &options.tls {
        Some(tls) => {
            let listener = tls::TlsListener::new(listeners.http, Arc::clone(&tls.http))?;
            tokio::spawn(async move {
                axum::serve(listener, service)
                    .with_graceful_shutdown(stopped)
                    .await
            })
        }
        None => tokio::spawn(async move {
            axum::serve(listeners.http, service)
                .with_graceful_shutdown(stopped)
                .await
        }),
    };
    let front = mysql::MysqlFrontEnd::new(engine, options.users.clone(), options.tls.clone());
    serve_mysql(listeners.mysql, front, &options, stop_rx).await;
    match tokio::time::timeout(options.grace, http).await {
        Ok(Ok(result)) => result,
        Ok(Err(join)) => Err(std::io::Error::other(join.to_string())),
        Err(_) => {
            tracing::warn!("HTTP requests still running after the grace period were dropped");
            Ok(())
        }
    }
}

async fn serve_mysql(
    listener: TcpListener,
    front: Arc<mysql::MysqlFrontEnd>,
    options: &ServerOptions,
    mut stop: watch::Receiver<bool>,
) {
    let slots = Arc::new(slots::Slots::new(
        options.max_connections,
        options.handshake_timeout,
        options.idle_timeout,
    ));
    let mut connections = JoinSet::new();
    loop {
        let permit = tokio::select! {
            permit = slots.handshake() => match permit {
                Some(permit) => permit,
                None => break,
            },
            _ = stop.wait_for(|s| *s) => break,
        };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.wait_for(|s| *s) => break,
        };
        match accepted {
            Ok((stream, peer)) => {
                let front = Arc::clone(&front);
                let standing = slots::Standing::new(Arc::clone(&slots), permit);
                connections.spawn(async move {
                    front.serve(stream, peer, standing).await;
                });
            }
            Err(error) => {
                tracing::warn!("mysql accept failed: {error}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        while connections.try_join_next().is_some() {}
    }
    let drained = tokio::time::timeout(options.grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::info!(
            open = connections.len(),
            "closing MySQL connections still open after the grace period"
        );
        connections.shutdown().await;
    }
}
