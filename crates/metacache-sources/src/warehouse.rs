//! Where a catalog's files live: the `warehouse` property opened as an `object_store`.
//!
//! | property | meaning |
//! |---|---|
//! | `warehouse` | `file:///abs/dir`, an absolute path, or `s3://bucket[/prefix]` |
//! | `s3.endpoint` | S3-compatible endpoint (`http://127.0.0.1:8333`); plain `http` is allowed when given |
//! | `s3.region` | region (default `us-east-1`) |
//! | `s3.access_key`, `s3.secret_key`, `s3.session_token` | credentials (secret: masked everywhere); without them, unsigned requests |
//! | `s3.use_environment_credentials` | `true` lends the node's own `AWS_*` environment (keys, profile) to this catalog; never without it (issue 12) |
//! | `use_path_style` | `true` (default) for `endpoint/bucket/key` requests, `false` for virtual-hosted buckets |
//! | `location.rewrite-from` | a location prefix recorded in table metadata that now lives at `warehouse` (a copied warehouse, a fixture) |
//!
//! # Invariants
//! - Paths handed to the store are relative to the warehouse root; [`Warehouse::display`]
//!   turns them back into full locations for users.
//! - Opening never logs or returns a property value of a secret key.

use std::sync::Arc;

use metacache_catalog::Properties;
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::path::Path;

use crate::{Error, Result};

/// The property naming the warehouse root.
pub const WAREHOUSE: &str = "warehouse";
/// The property naming a recorded location prefix that [`WAREHOUSE`] replaces.
pub const REWRITE_FROM: &str = "location.rewrite-from";

/// A catalog's warehouse: an object store and the root inside it.
#[derive(Clone)]
pub struct Warehouse {
    store: Arc<dyn ObjectStore>,
    root: Path,
    /// `file:///dir` or `s3://bucket`, without a trailing `/`.
    base: String,
    /// `location.rewrite-from`, without a trailing `/`.
    rewrite_from: Option<String>,
    /// The node's disk tier, for files that never change ([`Warehouse::read_immutable`]).
    disk: Option<DiskRead>,
}

/// The disk tier a catalog's immutable files are read through, and the catalog's name (what
/// REFRESH and DROP fence).
#[derive(Clone, Debug)]
pub struct DiskRead {
    tier: metacache_disk::DiskTier,
    scope: Arc<str>,
}

impl DiskRead {
    /// `tier` for the files of catalog `catalog`.
    pub fn new(tier: metacache_disk::DiskTier, catalog: &str) -> Self {
        Self {
            tier,
            scope: Arc::from(catalog),
        }
    }
}

impl std::fmt::Debug for Warehouse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Warehouse")
            .field("base", &self.base)
            .field("root", &self.root.as_ref())
            .finish_non_exhaustive()
    }
}

impl Warehouse {
    /// Opens the warehouse of `catalog` from its properties; `Ok(None)` when it has none.
    pub fn open(catalog: &str, properties: &Properties) -> Result<Option<Self>> {
        let Some(location) = properties
            .get(WAREHOUSE)
            .map(str::trim)
            .filter(|s| !s.is_empty())
        else {
            return Ok(None);
        };
        let invalid = |reason: String| Error::Connection {
            catalog: catalog.to_owned(),
            reason,
        };
        if let Some(rest) = location.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() {
                return Err(invalid(format!(
                    "'{WAREHOUSE}' = '{location}' names no bucket"
                )));
            }
            let store = s3(bucket, properties).map_err(invalid)?;
            return Ok(Some(Self {
                store,
                root: Path::from(prefix),
                base: format!("s3://{bucket}"),
                rewrite_from: rewrite_from(properties),
                disk: None,
            }));
        }
        let dir = location.strip_prefix("file://").unwrap_or(location);
        if !dir.starts_with('/') {
            return Err(invalid(format!(
                "'{WAREHOUSE}' must be file:///absolute/path, /absolute/path or s3://bucket/prefix, not '{location}'"
            )));
        }
        let store = LocalFileSystem::new_with_prefix(dir)
            .map_err(|e| invalid(format!("'{WAREHOUSE}' = '{location}': {e}")))?;
        Ok(Some(Self {
            store: Arc::new(store),
            root: Path::default(),
            base: format!("file://{}", dir.trim_end_matches('/')),
            rewrite_from: rewrite_from(properties),
            disk: None,
        }))
    }

    /// A warehouse over any store (tests, embedding with an in-memory store).
    pub fn from_store(store: Arc<dyn ObjectStore>, root: Path, base: impl Into<String>) -> Self {
        Self {
            store,
            root,
            base: base.into(),
            rewrite_from: None,
            disk: None,
        }
    }

    /// The store path of an absolute location recorded in metadata (`file:///…`, `/…`,
    /// `s3://bucket/…`), after `location.rewrite-from`; `None` if it lies outside the
    /// warehouse's store.
    pub fn resolve(&self, location: &str) -> Option<Path> {
        // `/dir` and Hadoop's `file:/dir` are `file:///dir`.
        let location = match (location.strip_prefix('/'), location.strip_prefix("file:")) {
            (Some(_), _) if !location.starts_with("//") => format!("file://{location}"),
            (_, Some(rest)) if rest.starts_with('/') && !rest.starts_with("//") => {
                format!("file://{rest}")
            }
            _ => location.to_owned(),
        };
        let location = match &self.rewrite_from {
            Some(from) if location.starts_with(from.as_str()) => {
                format!("{}{}", self.url(), &location[from.len()..])
            }
            _ => location,
        };
        let rest = location.strip_prefix(self.base.as_str())?;
        if !(rest.is_empty() || rest.starts_with('/')) {
            return None;
        }
        let path = Path::parse(rest.trim_start_matches('/')).ok()?;
        (self.root.as_ref().is_empty() || path.prefix_matches(&self.root)).then_some(path)
    }

    /// The warehouse's own location: `base` plus the root.
    fn url(&self) -> String {
        self.display(&self.root)
    }

    /// An absolute location inside the warehouse as a path relative to its root (what
    /// [`Warehouse::path`] takes back); `None` outside it.
    pub fn relative(&self, location: &str) -> Option<String> {
        let path = self.resolve(location)?;
        let root = self.root.as_ref();
        let rest = path.as_ref().strip_prefix(root).unwrap_or(path.as_ref());
        Some(rest.trim_start_matches('/').to_owned())
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// `relative` (`/`-separated, in the store's own spelling, as listings return names) below
    /// the root, as a store path. Parts are not re-encoded, so a directory name read from a
    /// listing (`hour=10%3A00`) finds the same directory again.
    pub fn path(&self, relative: &str) -> Path {
        let parts = self
            .root
            .as_ref()
            .split('/')
            .chain(relative.split('/'))
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("/");
        Path::parse(&parts).unwrap_or_else(|_| Path::from(parts.as_str()))
    }

    /// The same warehouse reading its immutable files through `disk` (none: straight from
    /// the store).
    pub fn with_disk(mut self, disk: Option<DiskRead>) -> Self {
        self.disk = disk;
        self
    }

    /// The bytes of a file that never changes under its name (Iceberg metadata files, manifest
    /// lists and manifests; Paimon snapshots, schemas and manifests), through the node's disk
    /// tier when the warehouse has one: `load` reads it from the store on a miss. `size`: the
    /// length the referring metadata records, when it does.
    pub async fn read_immutable<E, F, Fut>(
        &self,
        location: &str,
        size: Option<u64>,
        load: F,
    ) -> std::result::Result<bytes::Bytes, E>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = std::result::Result<bytes::Bytes, E>>,
    {
        match &self.disk {
            Some(disk) => {
                let key = metacache_disk::BlockKey {
                    location,
                    size,
                    version: None,
                };
                disk.tier.read_through(key, &disk.scope, load).await
            }
            None => load().await,
        }
    }

    /// [`Warehouse::read`] of a file that never changes under its name, through the disk tier.
    pub async fn read_immutable_path(&self, path: &Path) -> Result<Option<bytes::Bytes>> {
        enum Missed {
            Missing,
            Failed(Error),
        }
        let location = self.display(path);
        let read = self
            .read_immutable(&location, None, || async {
                match self.read(path).await {
                    Ok(Some(bytes)) => Ok(bytes),
                    Ok(None) => Err(Missed::Missing),
                    Err(e) => Err(Missed::Failed(e)),
                }
            })
            .await;
        match read {
            Ok(bytes) => Ok(Some(bytes)),
            Err(Missed::Missing) => Ok(None),
            Err(Missed::Failed(e)) => Err(e),
        }
    }

    /// The bytes of the object at `path`; `None` if there is none.
    pub async fn read(&self, path: &Path) -> Result<Option<bytes::Bytes>> {
        use object_store::ObjectStoreExt as _;
        match self.store.get(path).await {
            Ok(found) => found
                .bytes()
                .await
                .map(Some)
                .map_err(|e| Error::store(self.display(path), e)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(Error::store(self.display(path), e)),
        }
    }

    /// The full location of a store path, for users (`file:///wh/db.db/t`, `s3://b/wh/db.db/t`).
    pub fn display(&self, path: &Path) -> String {
        if path.as_ref().is_empty() {
            self.base.clone()
        } else {
            format!("{}/{}", self.base, path.as_ref())
        }
    }
}

fn rewrite_from(properties: &Properties) -> Option<String> {
    properties
        .get(REWRITE_FROM)
        .map(|v| v.trim().trim_end_matches('/').to_owned())
        .filter(|v| !v.is_empty())
}

#[cfg(feature = "s3")]
fn s3(bucket: &str, properties: &Properties) -> std::result::Result<Arc<dyn ObjectStore>, String> {
    use object_store::aws::AmazonS3Builder;
    let get = |key: &str| properties.get(key).map(str::trim).filter(|v| !v.is_empty());
    let source = credential_source(
        get("s3.access_key").is_some(),
        get("s3.secret_key").is_some(),
        get(USE_ENVIRONMENT_CREDENTIALS),
    )?;
    // The node's AWS_* environment only for a catalog that asked for it.
    let builder = if source == CredentialSource::Environment {
        AmazonS3Builder::from_env()
    } else {
        AmazonS3Builder::new()
    };
    let mut builder = builder
        .with_bucket_name(bucket)
        .with_client_options(crate::network::object_store_options());
    builder = builder.with_region(get("s3.region").unwrap_or("us-east-1"));
    if let Some(endpoint) = get("s3.endpoint") {
        let endpoint = if endpoint.contains("://") {
            endpoint.to_owned()
        } else {
            format!("https://{endpoint}")
        };
        builder = builder
            .with_allow_http(endpoint.starts_with("http://"))
            .with_endpoint(endpoint);
    }
    match (source, get("s3.access_key"), get("s3.secret_key")) {
        (CredentialSource::Catalog, Some(access), Some(secret)) => {
            builder = builder
                .with_access_key_id(access)
                .with_secret_access_key(secret);
            if let Some(token) = get("s3.session_token") {
                builder = builder.with_token(token);
            }
        }
        (CredentialSource::Unsigned, _, _) => builder = builder.with_skip_signature(true),
        _ => {}
    }
    let path_style = match get("use_path_style")
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("true") => true,
        Some("false") => false,
        Some(_) => return Err("'use_path_style' must be true or false".to_owned()),
    };
    builder = builder.with_virtual_hosted_style_request(!path_style);
    // The builder's messages name options, never their values.
    let store = builder.build().map_err(|e| format!("S3 store: {e}"))?;
    Ok(Arc::new(store))
}

/// The property that lends the node's `AWS_*` environment to a catalog.
#[cfg(feature = "s3")]
const USE_ENVIRONMENT_CREDENTIALS: &str = "s3.use_environment_credentials";

/// Where a catalog's S3 requests get their credentials.
#[cfg(feature = "s3")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CredentialSource {
    /// `s3.access_key` and `s3.secret_key` of the catalog.
    Catalog,
    /// The node's `AWS_*` environment: only with `s3.use_environment_credentials = true`.
    Environment,
    /// None: unsigned requests (public buckets, open S3-compatible servers).
    Unsigned,
}

#[cfg(feature = "s3")]
fn credential_source(
    access_key: bool,
    secret_key: bool,
    use_environment: Option<&str>,
) -> std::result::Result<CredentialSource, String> {
    let use_environment = match use_environment.map(str::to_ascii_lowercase).as_deref() {
        None | Some("false") => false,
        Some("true") => true,
        Some(_) => {
            return Err(format!(
                "'{USE_ENVIRONMENT_CREDENTIALS}' must be true or false"
            ));
        }
    };
    match (access_key, secret_key, use_environment) {
        (true, true, false) => Ok(CredentialSource::Catalog),
        (false, false, true) => Ok(CredentialSource::Environment),
        (false, false, false) => Ok(CredentialSource::Unsigned),
        (true, true, true) => Err(format!(
            "set 's3.access_key' and 's3.secret_key', or '{USE_ENVIRONMENT_CREDENTIALS}', not both"
        )),
        _ => Err("set both 's3.access_key' and 's3.secret_key', or neither".to_owned()),
    }
}

#[cfg(all(test, feature = "s3"))]
mod credential_tests {
    use super::*;

    #[test]
    fn the_node_environment_is_lent_only_to_a_catalog_that_asks() {
        assert_eq!(
            credential_source(false, false, None),
            Ok(CredentialSource::Unsigned)
        );
        assert_eq!(
            credential_source(false, false, Some("false")),
            Ok(CredentialSource::Unsigned)
        );
        assert_eq!(
            credential_source(false, false, Some("TRUE")),
            Ok(CredentialSource::Environment)
        );
        assert_eq!(
            credential_source(true, true, None),
            Ok(CredentialSource::Catalog)
        );
        assert!(credential_source(true, false, None).is_err());
        assert!(credential_source(true, true, Some("true")).is_err());
        assert!(credential_source(false, false, Some("yes")).is_err());
    }
}

#[cfg(not(feature = "s3"))]
fn s3(_: &str, _: &Properties) -> std::result::Result<Arc<dyn ObjectStore>, String> {
    Err("this build has no S3 support (cargo feature `s3` of metacache-sources)".to_owned())
}

#[cfg(test)]
mod location_tests {
    use super::*;

    #[test]
    fn locations_are_relative_to_the_root_and_hadoop_spellings_resolve() {
        let store = Arc::new(object_store::memory::InMemory::new());
        let w = Warehouse::from_store(store, Path::from("wh"), "s3://lake");
        assert_eq!(
            w.relative("s3://lake/wh/sales.db/orders/dt=1").as_deref(),
            Some("sales.db/orders/dt=1")
        );
        assert_eq!(w.relative("s3://lake/wh").as_deref(), Some(""));
        assert_eq!(w.relative("s3://lake/other/t"), None);
        assert_eq!(w.relative("s3://lake/wh2/t"), None);
        let local = Warehouse::from_store(
            Arc::new(object_store::memory::InMemory::new()),
            Path::default(),
            "file://",
        );
        assert_eq!(
            local.relative("file:/tmp/w/t").as_deref(),
            Some("tmp/w/t"),
            "Hadoop's file:/dir"
        );
    }
}
