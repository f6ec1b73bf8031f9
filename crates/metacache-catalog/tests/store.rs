//! The durable catalog store: restarts, locking, damaged files, leftovers, permissions, and
//! statements whose commit fails.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::*;
use metacache_catalog::store::{Change, StoredState};
use metacache_catalog::{CatalogStore, FileStore, MemoryStore, NodeConfig, StoreError};

fn open(dir: &std::path::Path) -> metacache_catalog::CatalogManager {
    manager_on(
        Arc::new(FileStore::open(dir).expect("store opens")),
        NodeConfig::default(),
    )
}

#[test]
fn catalogs_and_their_properties_come_back_after_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let before = {
        let manager = open(dir.path());
        create(
            &manager,
            "hive_prod",
            &[
                ("type", "hms"),
                ("password", "hunter2"),
                ("meta.cache.max-weight", "4GB"),
            ],
        )
        .expect("created");
        create(&manager, "ice", &[("type", "iceberg")]).expect("created");
        create(&manager, "gone", &[("type", "paimon")]).expect("created");
        manager
            .alter_catalog(
                "hive_prod",
                props(&[("meta.cache.hive.file.max-weight", "1GB")]),
            )
            .expect("altered");
        manager.drop_catalog("gone", false).expect("dropped");
        manager
            .catalogs()
            .iter()
            .map(|c| c.def())
            .collect::<Vec<_>>()
    };
    let manager = open(dir.path());
    let after: Vec<_> = manager.catalogs().iter().map(|c| c.def()).collect();
    assert_eq!(after, before);
    let hive = manager.catalog("hive_prod").expect("back");
    assert_eq!(
        hive.def().properties.get("password"),
        Some("hunter2"),
        "secrets are stored"
    );
    assert_eq!(hive.budget().limit(), Some(4 << 30), "limits apply again");
    assert!(manager.load_warnings().is_empty());
}

#[test]
fn one_process_per_data_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let _first = FileStore::open(dir.path()).expect("first");
    match FileStore::open(dir.path()) {
        Err(StoreError::Locked { path }) => assert!(path.ends_with("metacache.lock")),
        other => panic!("expected Locked, got {other:?}"),
    }
}

#[test]
fn a_damaged_file_is_reported_and_left_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("catalogs.json");
    for (content, expected) in [
        ("{\"format\": 1, \"catalogs\": [", "is unreadable"),
        ("{\"catalogs\": []}", "no \"format\" field"),
        (
            "{\"format\": 7}",
            "has format 7; this version reads format 1",
        ),
        (
            "{\"format\": 1, \"catalogs\": [{\"name\": 3}]}",
            "is unreadable",
        ),
    ] {
        std::fs::write(&path, content).expect("write");
        let error = FileStore::open(dir.path()).expect_err(content).to_string();
        assert!(
            error.contains(expected) && error.contains("catalogs.json"),
            "{content}: {error}"
        );
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            content,
            "untouched"
        );
    }
}

#[test]
fn leftovers_of_interrupted_commits_are_removed() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let manager = open(dir.path());
        create(&manager, "c", &[("type", "hms")]).expect("created");
    }
    let leftover = dir.path().join(".catalogs.json.abc123");
    std::fs::write(&leftover, "{\"format\": 1, \"catalogs\": [{\"torn").expect("write");
    let manager = open(dir.path());
    assert!(!leftover.exists());
    assert_eq!(manager.catalogs().len(), 1);
}

#[cfg(unix)]
#[test]
fn the_store_file_is_private_to_its_owner() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let manager = open(dir.path());
    create(&manager, "c", &[("type", "jdbc"), ("password", "hunter2")]).expect("created");
    let mode = std::fs::metadata(dir.path().join("catalogs.json"))
        .expect("meta")
        .permissions()
        .mode();
    assert_eq!(mode & 0o077, 0, "mode {mode:o}");
}

/// A store whose commits fail on demand, to see that a failed commit changes nothing.
struct Flaky {
    inner: MemoryStore,
    fail: AtomicBool,
}

impl CatalogStore for Flaky {
    fn load(&self) -> Result<StoredState, StoreError> {
        self.inner.load()
    }

    fn commit(&self, change: &Change) -> Result<(), StoreError> {
        if self.fail.load(Ordering::SeqCst) {
            return Err(StoreError::Io {
                op: "write",
                path: "catalogs.json".into(),
                source: std::io::Error::other("disk full"),
            });
        }
        self.inner.commit(change)
    }

    fn describe(&self) -> String {
        "flaky".into()
    }
}

#[test]
fn a_failed_commit_changes_nothing_in_memory() {
    let store = Arc::new(Flaky {
        inner: MemoryStore::new(),
        fail: AtomicBool::new(false),
    });
    let manager = manager_on(store.clone(), NodeConfig::default());
    create(
        &manager,
        "c",
        &[("type", "hms"), ("meta.cache.max-weight", "4GB")],
    )
    .expect("created");
    let before = manager.catalog("c").expect("c").def();
    store.fail.store(true, Ordering::SeqCst);
    let error = create(&manager, "d", &[("type", "hms")])
        .expect_err("commit fails")
        .to_string();
    assert_eq!(error, "Catalog store write catalogs.json failed: disk full");
    assert!(manager.catalog("d").is_err());
    assert!(
        manager
            .alter_catalog("c", props(&[("meta.cache.max-weight", "1GB")]))
            .is_err()
    );
    assert!(manager.drop_catalog("c", false).is_err());
    let catalog = manager.catalog("c").expect("still there");
    assert_eq!(catalog.def(), before);
    assert_eq!(catalog.budget().limit(), Some(4 << 30));
}
