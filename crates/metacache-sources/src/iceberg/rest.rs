//! Tables of an Iceberg REST catalog: the catalog names namespaces, tables and each table's
//! current metadata file; metacache reads that file (and the manifests) itself, from S3.
//!
//! Only the read side of the REST API is used: `GET /v1/config`, `GET /v1/{prefix}/namespaces`,
//! `GET /v1/{prefix}/namespaces/{ns}/tables`, `GET /v1/{prefix}/namespaces/{ns}/tables/{t}`,
//! and for scan scopes (§8.2) the same with `X-Iceberg-Access-Delegation: vended-credentials`
//! and `GET …/tables/{t}/credentials` (renewal; a server without it is asked `loadTable` again,
//! and remembered as such).
//! Written on `reqwest` (already in the tree through `object_store`) rather than on
//! `iceberg-catalog-rest`, whose catalog insists on building a `FileIO` for every table while all
//! our reads go through `object_store`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use metacache_cache::scope::Resolution;
use reqwest::StatusCode;
use serde::Deserialize;
use tokio::sync::OnceCell;

use super::tables::TableCatalog;
use crate::error::tables_of_known_database;
use crate::{Error, Result};

/// An Iceberg REST catalog.
pub struct RestCatalog {
    /// The server has no `/credentials` endpoint (404, 405 or 501 while `loadTable` worked):
    /// renew through `loadTable`.
    no_credentials_endpoint: AtomicBool,
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

/// `loadTable` with vended credentials: the table's `config` and `storage-credentials`.
#[derive(Deserialize)]
struct VendedTableResponse {
    #[serde(rename = "metadata-location")]
    metadata_location: Option<String>,
    #[serde(default)]
    metadata: Option<TableMetadataLocation>,
    #[serde(default)]
    config: BTreeMap<String, String>,
    #[serde(default, rename = "storage-credentials")]
    storage_credentials: Vec<StorageCredential>,
}

#[derive(Deserialize)]
struct TableMetadataLocation {
    location: Option<String>,
}

#[derive(Deserialize)]
struct StorageCredential {
    prefix: String,
    #[serde(default)]
    config: BTreeMap<String, String>,
}

/// `GET …/credentials`.
#[derive(Deserialize)]
struct CredentialsResponse {
    #[serde(default, rename = "storage-credentials")]
    storage_credentials: Vec<StorageCredential>,
}

/// The credential of the most specific prefix of `location` (REST spec: the longest).
fn credential_for(
    location: &str,
    credentials: Vec<StorageCredential>,
) -> Option<StorageCredential> {
    credentials
        .into_iter()
        .filter(|c| location.starts_with(c.prefix.as_str()))
        .max_by_key(|c| c.prefix.len())
}

impl RestCatalog {
    /// The catalog at `uri` (`http://host:port`, without `/v1`), for the REST warehouse
    /// `warehouse`, authenticating with a bearer `token` when given.
    pub fn new(catalog: &str, uri: &str, warehouse: Option<String>, token: Option<String>) -> Self {
        Self {
            no_credentials_endpoint: AtomicBool::new(false),
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
        self.get_vended(path, not_found, false).await
    }

    /// `get`, asking for vended credentials when `vended`.
    async fn get_vended<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        not_found: impl FnOnce() -> Error,
        vended: bool,
    ) -> Result<T> {
        let url = format!("{}{path}", self.uri);
        let mut request = self.client.get(&url);
        if vended {
            request = request.header("X-Iceberg-Access-Delegation", "vended-credentials");
        }
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

    /// `/v1{prefix}/namespaces/{ns}/tables/{t}`.
    async fn table_path(&self, namespace: &str, table: &str) -> Result<String> {
        let prefix = self.prefix().await?;
        Ok(format!(
            "/v1{prefix}/namespaces/{}/tables/{}",
            namespace_path(namespace),
            namespace_path(table)
        ))
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

/// Whether a REST error says the route is not implemented (405, 501).
fn unimplemented(error: &Error) -> bool {
    matches!(error, Error::Invalid { reason, .. }
        if reason.starts_with("405") || reason.starts_with("501"))
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

    async fn scoped_access(
        &self,
        namespace: &str,
        table: &str,
        previous: Option<&Resolution>,
    ) -> Result<Resolution> {
        let path = self.table_path(namespace, table).await?;
        let name = || format!("{namespace}.{table}");
        // Renewal: only the credentials, the scan keeps its metadata file and location.
        let mut endpoint_missing = false;
        if let Some(previous) = previous.filter(|p| p.vended)
            && !self.no_credentials_endpoint.load(Ordering::Relaxed)
        {
            let renewed: Result<CredentialsResponse> = self
                .get(&format!("{path}/credentials"), || {
                    Error::not_found(&self.catalog, "table", name())
                })
                .await;
            match renewed {
                Ok(renewed) => {
                    let mut options: BTreeMap<String, String> = previous
                        .storage_options
                        .iter()
                        .filter(|(k, _)| !crate::scoped::is_credential_key(k))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    let credential =
                        credential_for(&previous.location, renewed.storage_credentials)
                            .ok_or_else(|| Error::Invalid {
                                location: format!("{}{path}/credentials", self.uri),
                                reason: format!(
                                    "no storage credential covers {}",
                                    previous.location
                                ),
                            })?;
                    options.extend(credential.config);
                    return Ok(crate::scoped::vended_resolution(
                        previous.location.clone(),
                        previous.metadata_location.clone(),
                        options,
                    ));
                }
                // A server without the endpoint answers 404, 405 or 501: ask loadTable (and,
                // if that works, do so from now on). Anything else is this attempt's failure.
                Err(error) if error.is_not_found() || unimplemented(&error) => {
                    endpoint_missing = true;
                }
                Err(error) => return Err(error),
            }
        }
        let loaded: VendedTableResponse = self
            .get_vended(
                &path,
                || Error::not_found(&self.catalog, "table", name()),
                true,
            )
            .await?;
        if endpoint_missing {
            tracing::debug!(
                catalog = %self.catalog,
                "no /credentials endpoint; renewing through loadTable"
            );
            self.no_credentials_endpoint.store(true, Ordering::Relaxed);
        }
        let metadata_location = match previous.and_then(|p| p.metadata_location.clone()) {
            Some(pinned) => pinned,
            None => loaded.metadata_location.ok_or_else(|| Error::Invalid {
                location: format!("{}{path}", self.uri),
                reason: "the catalog returned no metadata-location".to_owned(),
            })?,
        };
        let location = match previous {
            Some(previous) => previous.location.clone(),
            None => loaded
                .metadata
                .and_then(|m| m.location)
                .unwrap_or_else(|| super::tables::table_location(&metadata_location)),
        };
        let mut options = loaded.config;
        if let Some(credential) = credential_for(&location, loaded.storage_credentials) {
            options.extend(credential.config);
        }
        Ok(crate::scoped::vended_resolution(
            location,
            Some(metadata_location),
            options,
        ))
    }

    async fn metadata_location(&self, namespace: &str, table: &str) -> Result<String> {
        let path = self.table_path(namespace, table).await?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn credential(prefix: &str) -> StorageCredential {
        StorageCredential {
            prefix: prefix.to_owned(),
            config: BTreeMap::from([("s3.access-key-id".to_owned(), prefix.to_owned())]),
        }
    }

    #[test]
    fn the_longest_matching_prefix_wins() {
        let all = || {
            vec![
                credential("s3://bucket/"),
                credential("s3://bucket/wh/shop/"),
                credential("s3://other/"),
            ]
        };
        let chosen = credential_for("s3://bucket/wh/shop/trips", all()).expect("a match");
        assert_eq!(chosen.prefix, "s3://bucket/wh/shop/");
        let chosen = credential_for("s3://bucket/wh/sales/t", all()).expect("a match");
        assert_eq!(chosen.prefix, "s3://bucket/");
        assert!(credential_for("gs://elsewhere/t", all()).is_none());
    }

    #[test]
    fn only_405_and_501_mean_the_route_is_missing() {
        let invalid = |reason: &str| Error::Invalid {
            location: "x".to_owned(),
            reason: reason.to_owned(),
        };
        assert!(unimplemented(&invalid("405 Method Not Allowed: ")));
        assert!(unimplemented(&invalid("501 Not Implemented: ")));
        assert!(!unimplemented(&invalid("503 Service Unavailable: down")));
    }
}
