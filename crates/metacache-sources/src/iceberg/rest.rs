//! Tables of an Iceberg REST catalog: the catalog names namespaces, tables and each table's
//! current metadata file; metacache reads that file (and the manifests) itself, from S3.
//!
//! Only the read side of the REST API is used: `GET /v1/config`, `GET /v1/{prefix}/namespaces`,
//! `GET /v1/{prefix}/namespaces/{ns}/tables`, `GET /v1/{prefix}/namespaces/{ns}/tables/{t}`.
//! Written on `reqwest` (already in the tree through `object_store`) rather than on
//! `iceberg-catalog-rest`, whose catalog insists on building a `FileIO` for every table while all
//! our reads go through `object_store`.

use async_trait::async_trait;
use reqwest::StatusCode;
use serde::Deserialize;
use tokio::sync::OnceCell;

use super::tables::TableCatalog;
use crate::error::tables_of_known_database;
use crate::{Error, Result};

/// An Iceberg REST catalog.
pub struct RestCatalog {
    client: reqwest::Client,
    uri: String,
    warehouse: Option<String>,
    token: Option<String>,
    catalog: String,
    /// `overrides.prefix` of `GET /v1/config`, fetched once.
    prefix: OnceCell<String>,
}

/// The token never shows (issue 12: secrets stay out of logs and panics).
impl std::fmt::Debug for RestCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use metacache_cache::redact::{MASK, redact};
        f.debug_struct("RestCatalog")
            .field("catalog", &self.catalog)
            .field("uri", &redact(&self.uri))
            .field("warehouse", &self.warehouse)
            .field("token", &self.token.as_ref().map(|_| MASK))
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct ConfigResponse {
    #[serde(default)]
    overrides: std::collections::HashMap<String, String>,
    #[serde(default)]
    defaults: std::collections::HashMap<String, String>,
}

#[derive(Deserialize)]
struct NamespacesResponse {
    namespaces: Vec<Vec<String>>,
}

#[derive(Deserialize)]
struct Identifier {
    name: String,
}

#[derive(Deserialize)]
struct TablesResponse {
    identifiers: Vec<Identifier>,
}

#[derive(Deserialize)]
struct LoadTableResponse {
    #[serde(rename = "metadata-location")]
    metadata_location: Option<String>,
}

impl RestCatalog {
    /// The catalog at `uri` (`http://host:port`, without `/v1`), for the REST warehouse
    /// `warehouse`, authenticating with a bearer `token` when given.
    pub fn new(catalog: &str, uri: &str, warehouse: Option<String>, token: Option<String>) -> Self {
        Self {
            client: crate::network::http_client(),
            uri: uri.trim_end_matches('/').to_owned(),
            warehouse,
            token,
            catalog: catalog.to_owned(),
            prefix: OnceCell::new(),
        }
    }

    async fn get<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        not_found: impl FnOnce() -> Error,
    ) -> Result<T> {
        let url = format!("{}{path}", self.uri);
        let mut request = self.client.get(&url);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(warehouse) = self.warehouse.as_deref().filter(|_| path == "/v1/config") {
            request = request.query(&[("warehouse", warehouse)]);
        }
        let failed = |reason: String| Error::Invalid {
            location: url.clone(),
            reason,
        };
        let response = request
            .send()
            .await
            .map_err(|e| failed(crate::network::describe(&e)))?;
        match response.status() {
            StatusCode::NOT_FOUND => Err(not_found()),
            status if !status.is_success() => {
                let body = response.text().await.unwrap_or_default();
                Err(failed(format!(
                    "{status}: {}",
                    body.chars().take(120).collect::<String>()
                )))
            }
            _ => response
                .json()
                .await
                .map_err(|e| failed(crate::network::describe(&e))),
        }
    }

    async fn prefix(&self) -> Result<&str> {
        self.prefix
            .get_or_try_init(|| async {
                let config: ConfigResponse = self
                    .get("/v1/config", || Error::Connection {
                        catalog: self.catalog.clone(),
                        reason: format!(
                            "{} has no /v1/config: is 'uri' an Iceberg REST catalog?",
                            self.uri
                        ),
                    })
                    .await?;
                Ok(config
                    .overrides
                    .get("prefix")
                    .or_else(|| config.defaults.get("prefix"))
                    .map(|p| format!("/{}", p.trim_matches('/')))
                    .unwrap_or_default())
            })
            .await
            .map(String::as_str)
    }
}

/// A namespace in a URL path: its levels joined by the unit separator (REST spec).
fn namespace_path(namespace: &str) -> String {
    namespace
        .split('.')
        .map(|level| {
            level
                .bytes()
                .map(|b| match b {
                    b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'~' => {
                        (b as char).to_string()
                    }
                    _ => format!("%{b:02X}"),
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("%1F")
}

#[async_trait]
impl TableCatalog for RestCatalog {
    async fn namespaces(&self) -> Result<Vec<String>> {
        let prefix = self.prefix().await?;
        let listed: NamespacesResponse = self
            .get(&format!("/v1{prefix}/namespaces"), || {
                Error::not_found(&self.catalog, "catalog", self.uri.clone())
            })
            .await?;
        let mut names: Vec<String> = listed.namespaces.into_iter().map(|n| n.join(".")).collect();
        names.sort();
        Ok(names)
    }

    async fn tables(&self, namespace: &str) -> Result<Vec<String>> {
        let prefix = self.prefix().await?;
        let path = format!(
            "/v1{prefix}/namespaces/{}/tables",
            namespace_path(namespace)
        );
        let listed: TablesResponse = self
            .get(&path, || {
                Error::not_found(&self.catalog, "database", namespace.to_owned())
            })
            .await?;
        let mut names: Vec<String> = listed.identifiers.into_iter().map(|i| i.name).collect();
        names.sort();
        // Some servers answer an unknown namespace with an empty list instead of 404.
        tables_of_known_database(names, &self.catalog, namespace, self.namespaces()).await
    }

    async fn metadata_location(&self, namespace: &str, table: &str) -> Result<String> {
        let prefix = self.prefix().await?;
        let path = format!(
            "/v1{prefix}/namespaces/{}/tables/{}",
            namespace_path(namespace),
            namespace_path(table)
        );
        let name = || format!("{namespace}.{table}");
        let loaded: LoadTableResponse = self
            .get(&path, || Error::not_found(&self.catalog, "table", name()))
            .await?;
        loaded.metadata_location.ok_or_else(|| Error::Invalid {
            location: format!("{}{path}", self.uri),
            reason: "the catalog returned no metadata-location".to_owned(),
        })
    }
}
