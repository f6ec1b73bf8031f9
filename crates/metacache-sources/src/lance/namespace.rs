//! Lance namespaces: where a catalog's tables are and how to open them.
//!
//! - [`DirectoryNamespace`]: a directory (local or S3) whose root namespace holds tables as
//!   `<root>/<table>.lance` — the layout Lance's directory namespace lists. metacache shows the
//!   root namespace as database `default`. (Child namespaces of a directory namespace live in
//!   its `__manifest` Lance table; read them through the REST namespace API.)
//! - [`RestNamespace`]: the Lance REST namespace API (`GET /v1/namespace/{id}/list`,
//!   `GET /v1/namespace/{id}/table/list`, `POST /v1/table/{id}/describe`), as served by
//!   pylance's `RestAdapter`, SeaweedFS or a Lance namespace service.

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde::Deserialize;

use super::access::TableAccess;
use crate::hive::subdirectories;
use crate::warehouse::Warehouse;
use crate::{Error, Result};

/// The database name of a directory namespace's root.
pub const ROOT_DATABASE: &str = "default";

/// What the connector asks a namespace.
#[async_trait]
pub trait Namespace: Send + Sync + std::fmt::Debug {
    /// Child namespaces (databases), sorted.
    async fn databases(&self) -> Result<Vec<String>>;
    /// Tables of a namespace, sorted; `None` when the namespace does not exist.
    async fn tables(&self, database: &str) -> Result<Option<Vec<String>>>;
    /// describeTable: the table's URI and access options.
    async fn describe(&self, database: &str, table: &str) -> Result<TableAccess>;
}

/// A directory namespace read by listing.
pub struct DirectoryNamespace {
    catalog: String,
    root: Warehouse,
    /// The catalog's `storage.*` properties (prefix removed): the access options of every
    /// table.
    options: BTreeMap<String, String>,
}

/// Storage options show by key, secret values masked (issue 12).
impl std::fmt::Debug for DirectoryNamespace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use metacache_cache::redact::{MASK, is_secret_name, redact};
        let options: BTreeMap<&str, std::borrow::Cow<'_, str>> = self
            .options
            .iter()
            .map(|(k, v)| {
                let shown = if is_secret_name(k) {
                    std::borrow::Cow::Borrowed(MASK)
                } else {
                    redact(v)
                };
                (k.as_str(), shown)
            })
            .collect();
        f.debug_struct("DirectoryNamespace")
            .field("catalog", &self.catalog)
            .field("root", &self.root)
            .field("options", &options)
            .finish()
    }
}

impl DirectoryNamespace {
    /// The namespace rooted at `root`.
    pub fn new(catalog: &str, root: Warehouse, options: BTreeMap<String, String>) -> Self {
        Self {
            catalog: catalog.to_owned(),
            root,
            options,
        }
    }

    fn not_found(&self, kind: &'static str, name: String) -> Error {
        Error::not_found(&self.catalog, kind, name)
    }
}

#[async_trait]
impl Namespace for DirectoryNamespace {
    async fn databases(&self) -> Result<Vec<String>> {
        Ok(vec![ROOT_DATABASE.to_owned()])
    }

    async fn tables(&self, database: &str) -> Result<Option<Vec<String>>> {
        if database != ROOT_DATABASE {
            return Ok(None);
        }
        let root = self.root.path("");
        let mut tables: Vec<String> = subdirectories(&self.root, &root)
            .await?
            .into_iter()
            .filter_map(|d| d.strip_suffix(".lance").map(str::to_owned))
            .filter(|t| !t.is_empty())
            .collect();
        tables.sort();
        Ok(Some(tables))
    }

    async fn describe(&self, database: &str, table: &str) -> Result<TableAccess> {
        if database != ROOT_DATABASE {
            return Err(self.not_found("database", database.to_owned()));
        }
        // A dataset has at least one version file under _versions/.
        let dir = self.root.path(&format!("{table}.lance/_versions"));
        let listed = self
            .root
            .store()
            .list_with_delimiter(Some(&dir))
            .await
            .map_err(|e| Error::store(self.root.display(&dir), e))?;
        if listed.objects.is_empty() {
            return Err(self.not_found("table", format!("{database}.{table}")));
        }
        Ok(TableAccess {
            uri: self
                .root
                .display(&self.root.path(&format!("{table}.lance"))),
            storage_options: self.options.clone(),
            vended: false,
        })
    }
}

/// A REST namespace.
pub struct RestNamespace {
    catalog: String,
    client: reqwest::Client,
    uri: String,
    token: Option<String>,
    delimiter: String,
}

/// The token never shows (issue 12).
impl std::fmt::Debug for RestNamespace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use metacache_cache::redact::{MASK, redact};
        f.debug_struct("RestNamespace")
            .field("catalog", &self.catalog)
            .field("uri", &redact(&self.uri))
            .field("token", &self.token.as_ref().map(|_| MASK))
            .field("delimiter", &self.delimiter)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct NamespacesResponse {
    namespaces: Vec<String>,
}

#[derive(Deserialize)]
struct TablesResponse {
    tables: Vec<String>,
}

#[derive(Deserialize)]
struct DescribeResponse {
    location: Option<String>,
    #[serde(default)]
    storage_options: Option<BTreeMap<String, String>>,
}

#[derive(Deserialize)]
struct ErrorResponse {
    #[serde(default)]
    code: Option<i64>,
}

/// Lance namespace error codes that mean "no such namespace" and "no such table".
const NAMESPACE_NOT_FOUND: i64 = 1;
const TABLE_NOT_FOUND: i64 = 4;

impl RestNamespace {
    /// The namespace service at `uri` (`http://host:port`), with an optional bearer token and
    /// the id delimiter (`$` by default).
    pub fn new(catalog: &str, uri: &str, token: Option<String>, delimiter: Option<String>) -> Self {
        Self {
            catalog: catalog.to_owned(),
            // A namespace that stops answering fails the load instead of holding it forever.
            client: crate::network::http_client(),
            uri: uri.trim_end_matches('/').to_owned(),
            token,
            delimiter: delimiter.unwrap_or_else(|| "$".to_owned()),
        }
    }

    /// An id as a path segment: parts joined by the delimiter, percent-encoded.
    fn id(&self, parts: &[&str]) -> String {
        let joined = if parts.is_empty() {
            self.delimiter.clone()
        } else {
            parts.join(&self.delimiter)
        };
        url::form_urlencoded::byte_serialize(joined.as_bytes())
            .collect::<String>()
            .replace('+', "%20")
    }

    /// Sends a request; `Ok(Err(code))` for an error answer with a Lance error code.
    async fn send<T: serde::de::DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
        what: &str,
    ) -> Result<std::result::Result<T, Option<i64>>> {
        let request = match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        };
        let failed = |reason: String| Error::Connection {
            catalog: self.catalog.clone(),
            reason: format!("Lance namespace {what}: {reason}"),
        };
        let response = request
            .send()
            .await
            .map_err(|e| failed(crate::network::describe(&e)))?;
        let status = response.status();
        let body = response
            .bytes()
            .await
            .map_err(|e| failed(crate::network::describe(&e)))?;
        if status.is_success() {
            return serde_json::from_slice(&body)
                .map(Ok)
                .map_err(|e| Error::Invalid {
                    location: format!("{}/v1 ({what})", self.uri),
                    reason: e.to_string(),
                });
        }
        let code = serde_json::from_slice::<ErrorResponse>(&body)
            .ok()
            .and_then(|e| e.code);
        if code.is_some() && status.is_client_error() {
            return Ok(Err(code));
        }
        Err(failed(format!("HTTP {status}")))
    }
}

#[async_trait]
impl Namespace for RestNamespace {
    async fn databases(&self) -> Result<Vec<String>> {
        let url = format!("{}/v1/namespace/{}/list", self.uri, self.id(&[]));
        let listed: std::result::Result<NamespacesResponse, _> =
            self.send(self.client.get(url), "list namespaces").await?;
        let mut names = listed.map(|r| r.namespaces).unwrap_or_default();
        names.sort();
        Ok(names)
    }

    async fn tables(&self, database: &str) -> Result<Option<Vec<String>>> {
        let url = format!(
            "{}/v1/namespace/{}/table/list",
            self.uri,
            self.id(&[database])
        );
        match self
            .send::<TablesResponse>(self.client.get(url), "list tables")
            .await?
        {
            Ok(mut r) => {
                r.tables.sort();
                Ok(Some(r.tables))
            }
            Err(Some(NAMESPACE_NOT_FOUND)) => Ok(None),
            Err(code) => Err(Error::Connection {
                catalog: self.catalog.clone(),
                reason: format!("Lance namespace list tables: error code {code:?}"),
            }),
        }
    }

    async fn describe(&self, database: &str, table: &str) -> Result<TableAccess> {
        let url = format!(
            "{}/v1/table/{}/describe",
            self.uri,
            self.id(&[database, table])
        );
        let request = self
            .client
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body("{}");
        match self
            .send::<DescribeResponse>(request, "describe table")
            .await?
        {
            Ok(r) => {
                let uri = r.location.ok_or_else(|| Error::Invalid {
                    location: format!("{}/v1 (describe {database}.{table})", self.uri),
                    reason: "no location".to_owned(),
                })?;
                let storage_options = r.storage_options.unwrap_or_default();
                Ok(TableAccess {
                    uri,
                    vended: !storage_options.is_empty(),
                    storage_options,
                })
            }
            Err(Some(TABLE_NOT_FOUND)) => Err(Error::not_found(
                &self.catalog,
                "table",
                format!("{database}.{table}"),
            )),
            Err(Some(NAMESPACE_NOT_FOUND)) => {
                Err(Error::not_found(&self.catalog, "database", database))
            }
            Err(code) => Err(Error::Connection {
                catalog: self.catalog.clone(),
                reason: format!("Lance namespace describe table: error code {code:?}"),
            }),
        }
    }
}
