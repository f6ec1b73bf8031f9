//! The other nodes' rows of the tables that show every node, fetched over HTTP
//! (`GET /api/v1/cluster/rows/{table}?columns=…` on each live peer, at once, with this node's
//! bearer token — a cluster shares one `http_token`), as Arrow IPC streams. A peer that does not
//! answer within [`PEER_TIMEOUT`], answers more than [`PEER_ANSWER_MAX`] bytes, or answers
//! something else, is a warning of the statement.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use metacache_cluster::PgStore;
use metacache_sql::system::peers::{ARROW_STREAM, PeerAsk, PeerRows, Peers, decode_arrow};

/// How long one peer may take to answer.
pub const PEER_TIMEOUT: Duration = Duration::from_secs(2);

/// The most bytes one peer's answer may have (about a million statistics rows).
pub const PEER_ANSWER_MAX: usize = 256 << 20;
/// Peers of a node of a cluster.
pub struct ClusterPeers {
    store: Arc<PgStore>,
    client: reqwest::Client,
    token: Option<String>,
}

impl ClusterPeers {
    /// The peers `store` knows of, asked with `token` (the node's `http_token`, if any).
    pub fn new(store: Arc<PgStore>, token: Option<String>) -> Self {
        Self {
            store,
            client: reqwest::Client::builder()
                .timeout(PEER_TIMEOUT)
                .build()
                .unwrap_or_default(),
            token: token.filter(|t| !t.is_empty()),
        }
    }
}

#[async_trait]
impl Peers for ClusterPeers {
    async fn rows(&self, ask: &PeerAsk<'_>) -> PeerRows {
        let table = ask.table;
        let columns = ask.columns.join(",");
        let asks = self.store.members().into_iter().map(|member| {
            let mut request = self
                .client
                .get(format!(
                    "http://{}/api/v1/cluster/rows/{table}",
                    member.http
                ))
                .header(reqwest::header::ACCEPT, ARROW_STREAM)
                .query(&[("columns", columns.as_str())]);
            if let Some(catalog) = ask.catalog {
                request = request.query(&[("catalog", catalog)]);
            }
            if let Some(token) = &self.token {
                request = request.bearer_auth(token);
            }
            async move {
                let answer = async {
                    let mut response = request
                        .send()
                        .await
                        .map_err(|e| failure(&e, "unreachable"))?;
                    let status = response.status();
                    if !status.is_success() {
                        return Err(format!("answered {status}"));
                    }
                    let too_big = || format!("answered more than {PEER_ANSWER_MAX} bytes");
                    let declared = response.content_length().unwrap_or(0);
                    if declared > PEER_ANSWER_MAX as u64 {
                        return Err(too_big());
                    }
                    let mut body = Vec::with_capacity(usize::try_from(declared).unwrap_or(0));
                    while let Some(chunk) = response
                        .chunk()
                        .await
                        .map_err(|e| failure(&e, "broke off its answer"))?
                    {
                        if body.len() + chunk.len() > PEER_ANSWER_MAX {
                            return Err(too_big());
                        }
                        body.extend_from_slice(&chunk);
                    }
                    decode_arrow(&body, &ask.schema).map_err(|e| e.to_string())
                }
                .await;
                (member, answer)
            }
        });
        let mut out = PeerRows::default();
        for (member, answer) in futures::future::join_all(asks).await {
            match answer {
                Ok(batches) => out.batches.extend(batches),
                Err(why) => out.warnings.push(format!(
                    "node {} ({}) is missing from {table}: {why}",
                    member.node, member.http
                )),
            }
        }
        out
    }
}

/// Why a request to a peer failed: its timeout, else `otherwise`.
fn failure(error: &reqwest::Error, otherwise: &str) -> String {
    if error.is_timeout() {
        format!("no answer within {} ms", PEER_TIMEOUT.as_millis())
    } else {
        otherwise.to_owned()
    }
}
