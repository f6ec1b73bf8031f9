//! TLS of both front ends (issue 12): HTTPS on the HTTP port, and MySQL's in-protocol switch
//! to TLS (`CLIENT_SSL`) on the MySQL port, from one PEM certificate chain and key
//! (`tls_cert_file`, `tls_key_file`).
//!
//! Two rustls releases serve them: HTTPS uses the one the rest of the tree (reqwest) already
//! brings; the MySQL side uses the release `opensrv-mysql` takes. Both run on `ring` and read
//! the same PEM files. Without the two keys, both front ends stay plain, as before.
//!
//! - HTTP with TLS serves HTTPS only. Handshakes run concurrently, at most
//!   [`HANDSHAKE_SLOTS`] at once, each within [`HANDSHAKE_TIMEOUT`]: a client that stalls in
//!   its handshake holds one slot, for that long, and never the accept loop.
//! - MySQL with TLS offers it to every client; with `mysql_require_secure_transport` a client
//!   that logs in without it is answered `1045` at its first statement and closed (MySQL's
//!   `require_secure_transport`; MySQL's own code, 3159, is unknown to the protocol library).
//!
//! # Invariants
//! - A bad certificate or key stops the start with a message naming the file, never its bytes.
//! - A failed handshake costs only its own connection.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::serve::Listener;
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// HTTPS handshakes in progress at once.
pub const HANDSHAKE_SLOTS: usize = 128;
/// Longest an HTTPS handshake may take.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Why TLS could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// One of the two file keys without the other.
    #[error("TLS needs both tls_cert_file and tls_key_file, or neither")]
    Incomplete,
    /// `mysql_require_secure_transport` without a certificate.
    #[error("mysql_require_secure_transport = true needs tls_cert_file and tls_key_file")]
    RequireWithoutTls,
    /// A file that cannot be read or holds no PEM item of the kind.
    #[error("TLS: {key} = '{path}': {detail}")]
    File {
        /// `tls_cert_file` or `tls_key_file`.
        key: &'static str,
        /// The path.
        path: String,
        /// What went wrong (the parser's message; never the file's bytes).
        detail: String,
    },
    /// rustls refused the pair (a key that does not match the certificate, an unsupported key).
    #[error("TLS: the certificate and key do not make a server configuration: {detail}")]
    Config {
        /// rustls' message.
        detail: String,
    },
}

/// The server configurations of both front ends.
pub struct Tls {
    /// HTTPS.
    pub http: Arc<tokio_rustls::rustls::ServerConfig>,
    /// MySQL's switch to TLS.
    pub mysql: Arc<tokio_rustls_mysql::rustls::ServerConfig>,
    /// Refuse MySQL clients that do not switch.
    pub require_mysql: bool,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls")
            .field("require_mysql", &self.require_mysql)
            .finish_non_exhaustive()
    }
}

impl Tls {
    /// TLS from the node keys: `None` when neither file is set.
    pub fn load(
        cert_file: &str,
        key_file: &str,
        require_mysql: bool,
    ) -> Result<Option<Arc<Self>>, TlsError> {
        match (cert_file.is_empty(), key_file.is_empty()) {
            (true, true) if require_mysql => return Err(TlsError::RequireWithoutTls),
            (true, true) => return Ok(None),
            (false, false) => {}
            _ => return Err(TlsError::Incomplete),
        }
        let file_error = |key: &'static str, path: &str, detail: String| TlsError::File {
            key,
            path: path.to_owned(),
            detail,
        };
        let certs: Vec<CertificateDer<'static>> =
            CertificateDer::pem_file_iter(Path::new(cert_file))
                .and_then(|items| items.collect::<Result<_, _>>())
                .map_err(|e| file_error("tls_cert_file", cert_file, e.to_string()))?;
        if certs.is_empty() {
            return Err(file_error(
                "tls_cert_file",
                cert_file,
                "no CERTIFICATE in the file".to_owned(),
            ));
        }
        let key = PrivateKeyDer::from_pem_file(Path::new(key_file))
            .map_err(|e| file_error("tls_key_file", key_file, e.to_string()))?;
        let config_error = |e: &dyn std::fmt::Display| TlsError::Config {
            detail: e.to_string(),
        };
        let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
        let mut http = tokio_rustls::rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| config_error(&e))?
            .with_no_client_auth()
            .with_single_cert(certs.clone(), key.clone_key())
            .map_err(|e| config_error(&e))?;
        http.alpn_protocols = vec![b"http/1.1".to_vec()];
        let mysql = tokio_rustls_mysql::rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(|e| config_error(&e))?;
        Ok(Some(Arc::new(Self {
            http: Arc::new(http),
            mysql: Arc::new(mysql),
            require_mysql,
        })))
    }
}

/// The HTTP listener with TLS: accepts TCP connections and hands axum those whose handshake
/// succeeded.
pub struct TlsListener {
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
    accepting: tokio::task::JoinHandle<()>,
}

impl TlsListener {
    /// Starts accepting on `listener` with `config`.
    pub fn new(
        listener: TcpListener,
        config: Arc<tokio_rustls::rustls::ServerConfig>,
    ) -> std::io::Result<Self> {
        let local = listener.local_addr()?;
        let (sender, ready) = mpsc::channel(HANDSHAKE_SLOTS);
        let acceptor = TlsAcceptor::from(config);
        let slots = Arc::new(Semaphore::new(HANDSHAKE_SLOTS));
        let accepting = tokio::spawn(async move {
            loop {
                let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
                    return;
                };
                let (stream, peer) = match listener.accept().await {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        tracing::warn!("https accept failed: {error}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let (acceptor, sender) = (acceptor.clone(), sender.clone());
                tokio::spawn(async move {
                    let handshake =
                        tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await;
                    drop(slot);
                    match handshake {
                        Ok(Ok(tls)) => {
                            let _ = sender.send((tls, peer)).await;
                        }
                        Ok(Err(error)) => {
                            tracing::debug!(%peer, "https handshake failed: {error}");
                        }
                        Err(_) => tracing::debug!(%peer, "https handshake timed out"),
                    }
                });
            }
        });
        Ok(Self {
            ready,
            local,
            accepting,
        })
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

impl Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(ready) => ready,
            // The accept task ended (its listener failed for good): serve nothing more.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}

/// The peer of an HTTP connection, with or without TLS (what the authorisation middleware
/// checks for loopback).
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub SocketAddr);

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, TcpListener>> for Peer {
    fn connect_info(stream: axum::serve::IncomingStream<'_, TcpListener>) -> Self {
        Self(*stream.remote_addr())
    }
}

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, TlsListener>> for Peer {
    fn connect_info(stream: axum::serve::IncomingStream<'_, TlsListener>) -> Self {
        Self(*stream.remote_addr())
    }
}
