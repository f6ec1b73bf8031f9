//! The other nodes' rows of the tables that show every node, fetched over HTTP
//! (`GET /api/v1/cluster/rows/{table}` on each live peer, at once, with this node's bearer
//! token — a cluster shares one `http_token`). A peer that does not answer within
//! [`PEER_TIMEOUT`], or answers something else, is a warning of the statement.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use metacache_cluster::PgStore;
use metacache_sql::ColumnType;
use metacache_sql::system::peers::{PeerRows, Peers, rows_from_json};

/// How long one peer may take to answer.
pub const PEER_TIMEOUT: Duration = Duration::from_secs(2);

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
    async fn rows(
        &self,
        table: &'static str,
        columns: &'static [(&'static str, ColumnType)],
        catalog: Option<&str>,
    ) -> PeerRows {
        let asks = self.store.members().into_iter().map(|member| {
            let mut request = self.client.get(format!(
                "http://{}/api/v1/cluster/rows/{table}",
                member.http
            ));
            if let Some(catalog) = catalog {
                request = request.query(&[("catalog", catalog)]);
            }
            if let Some(token) = &self.token {
                request = request.bearer_auth(token);
            }
            async move {
                let answer = async {
                    let response = request.send().await.map_err(|e| {
                        if e.is_timeout() {
                            format!("no answer within {} ms", PEER_TIMEOUT.as_millis())
                        } else {
                            "unreachable".to_owned()
                        }
                    })?;
                    let status = response.status();
                    if !status.is_success() {
                        return Err(format!("answered {status}"));
                    }
                    let json: serde_json::Value = response
                        .json()
                        .await
                        .map_err(|_| "answered something that is not JSON".to_owned())?;
                    rows_from_json(columns, &json).ok_or_else(|| {
                        "answered rows of another shape (another version?)".to_owned()
                    })
                }
                .await;
                (member, answer)
            }
        });
        let mut out = PeerRows::default();
        for (member, answer) in futures::future::join_all(asks).await {
            match answer {
                Ok(rows) => out.rows.extend(rows),
                Err(why) => out.warnings.push(format!(
                    "node {} ({}) is missing from {table}: {why}",
                    member.node, member.http
                )),
            }
        }
        out
    }
}
