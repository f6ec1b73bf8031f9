//! The Lance connector: resolves a table to its URI and access options through a Lance
//! namespace, and keeps the credential-free resolutions in `lance-table-access` (§8.1).
//!
//! # Properties
//! - `lance.namespace.type`: `dir` (default) or `rest`.
//! - `dir`: `warehouse` (the namespace root: `file:///…`, an absolute path or `s3://…`, with
//!   the `s3.*` properties), `storage.<option>` (access options handed out with every table).
//! - `rest`: `uri` (`http(s)://host:port`), `lance.namespace.token` (bearer, masked),
//!   `lance.namespace.delimiter` (`$`).
//!
//! # Invariants
//! - A resolution is stored only if [`TableAccess::cacheability`] allows it; one that carries
//!   credentials reaches the callers of its load and nothing else.
//! - Values live at most the TTL from their load (`meta.cache.lance.table_access.ttl-second`,
//!   legacy `lance.table_access_cache_ttl_seconds`, default 60 s; reads do not extend it; `0`
//!   disables), at most 10,000 per catalog client generation (the capacity ceiling).
//! - REFRESH TABLE / DATABASE, REFRESH CATALOG, ALTER CATALOG and a namespace that the source no
//!   longer has retire the values concerned and fence their loads in flight; evictions in other
//!   caches of the catalog do not touch them.
//! - [`LanceConnector::current_table_access`] never reads or writes the cache.

mod access;
mod namespace;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use metacache_cache::{Cached, ManagedCache};
use metacache_catalog::{CacheId, Catalog, Properties, TableKey};
use metacache_engines::builtin::lance;

pub use access::{TableAccess, Uncacheable, classify_uri};
pub use namespace::{DirectoryNamespace, Namespace, ROOT_DATABASE, RestNamespace};

use crate::connector::{Connector, PartitionFilter};
use crate::warehouse::Warehouse;
use crate::{
    Error, PartitionFiles, PartitionInfo, Result, TableAccessInfo, TableInfo, TableSchema,
};

/// `lance-table-access`.
pub const TABLE_ACCESS: CacheId<TableKey, TableAccess> = CacheId::new("lance", lance::TABLE_ACCESS);
/// The property choosing the namespace implementation.
pub const NAMESPACE_TYPE: &str = "lance.namespace.type";

/// A Lance catalog's connector.
#[derive(Debug)]
pub struct LanceConnector {
    catalog: Arc<Catalog>,
    namespace: Arc<dyn Namespace>,
    describes: AtomicU64,
}

impl LanceConnector {
    /// The connector of a `lance` catalog (see the module docs for its properties).
    pub fn open(catalog: Arc<Catalog>, properties: &Properties) -> Result<Self> {
        let name = catalog.name().to_string();
        let get = |key: &str| properties.get(key).map(str::trim).filter(|v| !v.is_empty());
        let invalid = |reason: String| Error::Connection {
            catalog: name.clone(),
            reason,
        };
        let kind = get(NAMESPACE_TYPE).unwrap_or("dir").to_ascii_lowercase();
        let namespace: Arc<dyn Namespace> = match kind.as_str() {
            "dir" | "directory" => {
                let root = Warehouse::open(&name, properties)?.ok_or_else(|| Error::NoSource {
                    catalog: name.clone(),
                })?;
                let options = properties
                    .map()
                    .iter()
                    .filter_map(|(k, v)| {
                        Some((k.strip_prefix("storage.")?.to_owned(), v.to_owned()))
                    })
                    .collect();
                Arc::new(DirectoryNamespace::new(&name, root, options))
            }
            "rest" => {
                let uri =
                    get("uri").ok_or_else(|| invalid("a REST namespace needs 'uri'".to_owned()))?;
                if !(uri.starts_with("http://") || uri.starts_with("https://")) {
                    return Err(invalid(format!(
                        "'uri' must be an http(s) URL, not '{uri}'"
                    )));
                }
                Arc::new(RestNamespace::new(
                    &name,
                    uri,
                    get("lance.namespace.token").map(str::to_owned),
                    get("lance.namespace.delimiter").map(str::to_owned),
                ))
            }
            other => {
                return Err(invalid(format!(
                    "'{NAMESPACE_TYPE}' = '{other}': use dir or rest"
                )));
            }
        };
        register_refresher(&catalog, &namespace);
        Ok(Self {
            catalog,
            namespace,
            describes: AtomicU64::new(0),
        })
    }

    /// describeTable calls made so far (each cache miss, each uncacheable or bypassing read).
    pub fn describe_calls(&self) -> u64 {
        self.describes.load(Ordering::Relaxed)
    }

    fn cache(&self) -> Result<Option<ManagedCache<TableKey, TableAccess>>> {
        Ok(self.catalog.cache(&TABLE_ACCESS)?)
    }

    /// Retires the resolutions of the namespaces `gone` says are gone, fencing their loads.
    fn retire_namespaces(&self, gone: impl Fn(&str) -> bool) -> Result<()> {
        if let Some(cache) = self.cache()? {
            cache.invalidate_keys_if(|k| gone(&k.database));
        }
        Ok(())
    }

    async fn describe(&self, database: &str, table: &str) -> Result<TableAccess> {
        self.describes.fetch_add(1, Ordering::Relaxed);
        let described = self.namespace.describe(database, table).await;
        if let Err(Error::NotFound {
            kind: "database", ..
        }) = &described
        {
            self.retire_namespaces(|d| d == database)?;
        }
        described
    }

    /// The table's resolution, from `lance-table-access` when it holds a fresh one; a miss
    /// asks the namespace (one request for concurrent misses) and keeps the answer only if it
    /// carries no credentials.
    pub async fn table_access(&self, database: &str, table: &str) -> Result<Cached<TableAccess>> {
        match self.cache()? {
            Some(cache) => Ok(cache
                .get_or_load_if(
                    TableKey::new(database, table),
                    || self.describe(database, table),
                    |access| access.cacheability().is_ok(),
                )
                .await?),
            None => Ok(Cached::detached(self.describe(database, table).await?)),
        }
    }

    /// The table's resolution asked of the namespace now, bypassing the cache (for callers
    /// that must see the current target).
    pub async fn current_table_access(&self, database: &str, table: &str) -> Result<TableAccess> {
        self.describe(database, table).await
    }
}

/// Registers how a table's resolution is reloaded without a caller (refresh-ahead, when an admin
/// turns `meta.cache.lance.table_access.auto-refresh` on: describing the table is the check, so
/// it is off by default). An unchanged resolution is renewed; one that now carries credentials
/// is never kept (§8.1): the refresh fails and the value serves until its TTL.
fn register_refresher(catalog: &Catalog, namespace: &Arc<dyn Namespace>) {
    use metacache_cache::{Refreshed, refresher};
    let ns = Arc::clone(namespace);
    catalog.set_refresher(
        &TABLE_ACCESS,
        refresher(move |key: TableKey, old: Cached<TableAccess>| {
            let ns = Arc::clone(&ns);
            async move {
                let access = ns.describe(&key.database, &key.table).await?;
                if let Err(reason) = access.cacheability() {
                    return Err(format!("the resolution is not kept: {}", reason.as_str()).into());
                }
                Ok(if access == *old {
                    Refreshed::Unchanged
                } else {
                    Refreshed::Changed(access)
                })
            }
        }),
    );
}

fn info(access: &TableAccess) -> TableAccessInfo {
    let why = access.cacheability().err();
    TableAccessInfo {
        uri: access.uri.clone(),
        storage_options: access.storage_options.clone(),
        cacheable: why.is_none(),
        not_cached_because: why.map(|w| w.as_str().to_owned()),
    }
}

#[async_trait]
impl Connector for LanceConnector {
    fn kind(&self) -> &'static str {
        "lance"
    }

    async fn databases(&self) -> Result<Vec<String>> {
        let names = self.namespace.databases().await?;
        // A namespace the source no longer has takes its resolutions with it.
        self.retire_namespaces(|d| names.binary_search_by(|n| n.as_str().cmp(d)).is_err())?;
        Ok(names)
    }

    async fn tables(&self, database: &str) -> Result<Vec<String>> {
        let listed = match self.namespace.tables(database).await? {
            // REST namespaces list an unknown namespace as empty: ask which exist.
            Some(tables) if tables.is_empty() => {
                let known = self.namespace.databases().await?;
                known.iter().any(|d| d == database).then_some(tables)
            }
            other => other,
        };
        match listed {
            Some(tables) => Ok(tables),
            None => {
                self.retire_namespaces(|d| d == database)?;
                Err(Error::not_found(&self.catalog.name(), "database", database))
            }
        }
    }

    async fn table(&self, database: &str, table: &str) -> Result<TableInfo> {
        let access = self.table_access(database, table).await?;
        Ok(TableInfo {
            database: database.to_owned(),
            table: table.to_owned(),
            location: access.uri.clone(),
            format: "lance".to_owned(),
            comment: String::new(),
            partition_keys: Vec::new(),
        })
    }

    async fn schema(&self, database: &str, table: &str) -> Result<Cached<TableSchema>> {
        let _ = (database, table);
        Err(Error::Unsupported {
            what: "Reading the schema of a Lance dataset".to_owned(),
            connector: "lance",
        })
    }

    async fn partitions(
        &self,
        database: &str,
        table: &str,
        _filter: &PartitionFilter,
    ) -> Result<Vec<PartitionInfo>> {
        // Lance tables are not partitioned; an unknown table is still an error.
        self.table_access(database, table).await?;
        Ok(Vec::new())
    }

    async fn files(
        &self,
        database: &str,
        table: &str,
        _filter: &PartitionFilter,
    ) -> Result<Vec<PartitionFiles>> {
        let _ = (database, table);
        Err(Error::Unsupported {
            what: "Listing the fragments of a Lance dataset".to_owned(),
            connector: "lance",
        })
    }

    /// The namespace's describe, every time: a scope keeps what it returns (vended
    /// `storage_options` and their `expires_at_millis` included) for its own tasks only.
    async fn scoped_access(
        &self,
        database: &str,
        table: &str,
        _previous: Option<Arc<metacache_cache::scope::Resolution>>,
    ) -> Result<metacache_cache::scope::Resolution> {
        let access = self.describe(database, table).await?;
        let mut resolution =
            crate::scoped::vended_resolution(access.uri, None, access.storage_options);
        // Configured (not vended) options are not credentials that expire.
        if !access.vended {
            resolution.vended = false;
            resolution.expires_at_millis = None;
        }
        Ok(resolution)
    }

    async fn table_access(
        &self,
        database: &str,
        table: &str,
        current: bool,
    ) -> Result<TableAccessInfo> {
        if current {
            return Ok(info(&self.current_table_access(database, table).await?));
        }
        Ok(info(
            &*LanceConnector::table_access(self, database, table).await?,
        ))
    }
}
