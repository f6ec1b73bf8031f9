//! Helpers shared by the connector tests: a catalog manager with 16 GiB of node memory, the
//! committed fixture warehouse (copied when a test changes it), and statistics lookups.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use metacache_cache::{CacheStats, Clock};
use metacache_catalog::memory::{MemorySource, NodeMemory};
use metacache_catalog::{CatalogManager, CreateCatalog, ManagerOptions, MemoryStore, Properties};
use metacache_sources::Sources;

/// The committed Hive-style warehouse written by `tests/fixtures/hive/make_warehouse.py`.
pub fn fixture_warehouse() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/hive/warehouse")
}

/// A copy of the fixture warehouse in a temporary directory, for tests that change it.
pub fn warehouse_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_dir(&fixture_warehouse(), dir.path());
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read fixture dir") {
        let entry = entry.expect("dir entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy fixture file");
        }
    }
}

/// A manager on an in-memory store with 16 GiB of node memory, and its connectors.
pub fn sources() -> Arc<Sources> {
    let mut options = ManagerOptions::new(Arc::new(MemoryStore::new()));
    options.clock = Clock::System;
    options.node_memory = Some(NodeMemory {
        bytes: 16 << 30,
        source: MemorySource::Physical,
    });
    Sources::new(Arc::new(CatalogManager::open(options).expect("manager")))
}

/// CREATE CATALOG `name` with `properties` (`type` included).
pub fn create<K: Into<String>, V: Into<String>>(
    sources: &Sources,
    name: &str,
    properties: impl IntoIterator<Item = (K, V)>,
) {
    sources
        .manager()
        .create_catalog(CreateCatalog {
            name: name.to_owned(),
            if_not_exists: false,
            comment: String::new(),
            properties: Properties::from_pairs(properties),
        })
        .expect("create catalog");
}

/// CREATE CATALOG `name` of type hms over `warehouse`, with extra properties.
pub fn create_hive(sources: &Sources, name: &str, warehouse: &str, extra: &[(&str, &str)]) {
    let mut pairs = vec![("type", "hms"), ("warehouse", warehouse)];
    pairs.extend_from_slice(extra);
    create(sources, name, pairs);
}

/// The statistics of `entry_name` in `catalog`.
pub fn stats(sources: &Sources, catalog: &str, entry_name: &str) -> CacheStats {
    sources
        .manager()
        .catalog(catalog)
        .expect("catalog")
        .cache_rows()
        .into_iter()
        .find(|r| r.stats.entry_name == entry_name)
        .unwrap_or_else(|| panic!("no row for {entry_name}"))
        .stats
}

/// `file://` URL of a directory.
pub fn url(dir: &Path) -> String {
    format!("file://{}", dir.display())
}

/// The committed Iceberg warehouse written by `tests/fixtures/iceberg/make_warehouse.py`.
pub fn iceberg_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/iceberg/warehouse")
}

/// Where pyiceberg wrote the fixture: the prefix its recorded locations start with.
pub const ICEBERG_WRITTEN_AT: &str = "file:///tmp/metacache-iceberg-fixture";

/// CREATE CATALOG `name` of type iceberg over `warehouse` (a SQL catalog in its `catalog.db`
/// when `sql`, else found by directory), with extra properties.
pub fn create_iceberg(
    sources: &Sources,
    name: &str,
    warehouse: &Path,
    sql: bool,
    extra: &[(&str, &str)],
) {
    let mut pairs: Vec<(String, String)> = vec![
        ("type".into(), "iceberg".into()),
        ("warehouse".into(), url(warehouse)),
        ("location.rewrite-from".into(), ICEBERG_WRITTEN_AT.into()),
    ];
    if sql {
        pairs.push(("iceberg.catalog.type".into(), "jdbc".into()));
        pairs.push((
            "uri".into(),
            format!("sqlite://{}", warehouse.join("catalog.db").display()),
        ));
    }
    pairs.extend(
        extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    create(sources, name, pairs);
}

/// A copy of the Iceberg fixture in a temporary directory.
pub fn iceberg_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_dir(&iceberg_fixture(), dir.path());
    dir
}

/// An unsigned S3 client of `bucket` at `endpoint` (SeaweedFS on loopback).
#[cfg(feature = "s3")]
pub fn bucket_store(endpoint: &str, bucket: &str) -> Arc<dyn object_store::ObjectStore> {
    Arc::new(
        object_store::aws::AmazonS3Builder::new()
            .with_bucket_name(bucket)
            .with_region("us-east-1")
            .with_endpoint(endpoint)
            .with_allow_http(true)
            .with_skip_signature(true)
            .build()
            .expect("s3 client"),
    )
}

/// Copies the directory `from` to `<prefix>/` of the bucket behind `s3`, keeping object names
/// byte for byte; returns how many objects it copied.
pub async fn upload(s3: &dyn object_store::ObjectStore, from: &Path, prefix: &str) -> usize {
    use futures::TryStreamExt;
    use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
    let local = object_store::local::LocalFileSystem::new_with_prefix(from).expect("fixture");
    let objects: Vec<_> = local.list(None).try_collect().await.expect("list fixture");
    for object in &objects {
        let bytes = local
            .get(&object.location)
            .await
            .expect("get")
            .bytes()
            .await
            .expect("bytes");
        let target =
            object_store::path::Path::parse(format!("{prefix}/{}", object.location)).expect("path");
        s3.put(&target, PutPayload::from(bytes)).await.expect("put");
    }
    objects.len()
}
