//! The node configuration at runtime: ADMIN SET / SHOW FRONTEND CONFIG through the manager.

mod common;

use std::sync::Arc;

use common::*;
use metacache_cache::ManagedCache;
use metacache_catalog::{CacheId, MemoryStore, NodeConfig, TableKey};

const FILE: CacheId<TableKey, Blob> = CacheId::new("hive", "hive-file");

fn value(manager: &metacache_catalog::CatalogManager, key: &str) -> String {
    manager
        .show_config(Some(key))
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("{key}"))
        .value
}

#[test]
fn percentages_resolve_against_the_node_memory_budget() {
    let mut config = NodeConfig::default();
    config
        .set("external_meta_cache_max_weight", "12.5%")
        .expect("valid");
    let manager = manager_on(Arc::new(MemoryStore::new()), config);
    assert_eq!(manager.governor().node().limit(), Some(NODE_MEMORY / 8));
    assert_eq!(value(&manager, "external_meta_cache_max_weight"), "12.5%");
    assert_eq!(
        value(&manager, "external_meta_cache_max_weight_bytes"),
        (NODE_MEMORY / 8).to_string()
    );
    assert_eq!(
        value(&manager, "node_memory_budget_bytes"),
        NODE_MEMORY.to_string()
    );

    let mut config = NodeConfig::default();
    config
        .set("external_meta_cache_max_weight", "10%")
        .expect("valid");
    config.set("node_memory_budget", "1GB").expect("valid");
    let manager = manager_on(Arc::new(MemoryStore::new()), config);
    assert_eq!(manager.governor().node().limit(), Some((1u64 << 30) / 10));
    let memory_row = &manager.show_config(Some("node_memory_budget_bytes"))[0];
    assert_eq!(memory_row.comment, "resolved from the node_memory_budget");
}

#[test]
fn the_detected_budget_is_this_machine_s() {
    let mut options = metacache_catalog::ManagerOptions::new(Arc::new(MemoryStore::new()));
    options
        .config
        .set("external_meta_cache_max_weight", "50%")
        .expect("valid");
    let manager = metacache_catalog::CatalogManager::open(options).expect("opens");
    let detected = metacache_catalog::memory::detect().expect("detectable here");
    assert_eq!(manager.governor().node().limit(), Some(detected.bytes / 2));
    let row = &manager.show_config(Some("node_memory_budget_bytes"))[0];
    assert_eq!(row.value, detected.bytes.to_string());
    assert!(
        row.comment == "resolved from the physical RAM"
            || row.comment == "resolved from the cgroup memory limit",
        "{}",
        row.comment
    );
}

#[tokio::test]
async fn lowering_the_node_limit_at_runtime_reclaims_before_returning() {
    let (manager, _) = manager();
    create(&manager, "c", &[("type", "hms")]).expect("created");
    let catalog = manager.catalog("c").expect("c");
    let file: ManagedCache<TableKey, Blob> = catalog.cache(&FILE).expect("ok").expect("built");
    for t in 0..20 {
        // `format!`, not `to_string()`: an integer's `to_string` reserves 11 bytes (a 16-byte
        // allocation), and the key is charged what it really allocates.
        file.get_or_load(TableKey::new("db", format!("t{t}")), || async {
            Ok::<_, std::io::Error>(Blob(1000))
        })
        .await
        .expect("load");
    }
    file.advise_now();
    assert_eq!(
        manager.governor().node().used(),
        20 * charge(1000) + file.advisor_bytes(),
        "the values and the quota advisor"
    );
    let limit = 5 * charge(1000);
    let rows = manager
        .set_config("EXTERNAL_META_CACHE_MAX_WEIGHT", &limit.to_string())
        .expect("mutable");
    assert_eq!(rows[0].value, limit.to_string());
    assert!(
        manager.governor().node().used() <= limit,
        "reclaimed before returning: {} > {limit} (advisor {})",
        manager.governor().node().used(),
        file.advisor_bytes()
    );
    assert_eq!(file.stats().max_weight, limit as i64);
    assert_eq!(
        value(&manager, "external_meta_cache_max_weight_bytes"),
        limit.to_string()
    );
    manager
        .set_config("external_meta_cache_max_weight", "0")
        .expect("0 removes the node quota");
    assert_eq!(manager.governor().node().limit(), None);
    assert_eq!(file.stats().max_weight, -1);
}

#[test]
fn runtime_changes_are_checked() {
    let (manager, _) = manager();
    let before = manager.show_config(None);
    let cases: [(&str, &str, &str); 5] = [
        (
            "external_meta_cache_max_weight",
            "0%",
            "Invalid cache weight for 'external_meta_cache_max_weight': 0%",
        ),
        (
            "external_meta_cache_max_weight",
            "101%",
            "Invalid cache weight for 'external_meta_cache_max_weight': 101%",
        ),
        (
            "external_meta_cache_max_weight",
            "-1",
            "Invalid cache weight for 'external_meta_cache_max_weight': -1",
        ),
        (
            "data_dir",
            "/tmp",
            "Configuration key 'data_dir' can not be changed at runtime; set it in the config file and restart",
        ),
        ("nosuch", "1", "Unknown configuration key 'nosuch'"),
    ];
    for (key, v, expected) in cases {
        assert_eq!(
            manager.set_config(key, v).expect_err(key).to_string(),
            expected
        );
    }
    assert_eq!(
        manager.show_config(None),
        before,
        "refused changes change nothing"
    );
}

#[test]
fn show_config_lists_every_key_and_filters_like_sql() {
    let (manager, _) = manager();
    let keys: Vec<String> = manager
        .show_config(None)
        .into_iter()
        .map(|r| r.key)
        .collect();
    assert_eq!(
        keys,
        [
            "external_meta_cache_max_weight",
            "node_memory_budget",
            "data_dir",
            "mysql_addr",
            "http_addr",
            "fe_host",
            "store",
            "advertise_http",
            "cluster_node_timeout_ms",
            "auth_users",
            "http_token",
            "http_body_limit",
            "query_memory_limit",
            "query_timeout_seconds",
            "shutdown_grace_seconds",
            "mysql_max_connections",
            "mysql_handshake_timeout_seconds",
            "mysql_idle_timeout_seconds",
            "source_connect_timeout_seconds",
            "source_request_timeout_seconds",
            "source_allowed_locations",
            "source_allowed_hosts",
            "tls_cert_file",
            "tls_key_file",
            "mysql_require_secure_transport",
            "metrics_cache_labels",
            "external_meta_cache_refresh_max_concurrency",
            "external_meta_cache_lease_timeout_ms",
            "external_meta_cache_advisor_half_life_seconds",
            "external_meta_cache_history_interval_seconds",
            "external_meta_cache_scope_max_count",
            "external_meta_cache_scope_max_entries",
            "external_meta_cache_disk_dir",
            "external_meta_cache_disk_max_weight",
            "sample_catalog",
            "node_memory_budget_bytes",
            "external_meta_cache_max_weight_bytes"
        ]
    );
    let like: Vec<String> = manager
        .show_config(Some("%ADDR"))
        .into_iter()
        .map(|r| r.key)
        .collect();
    assert_eq!(like, ["mysql_addr", "http_addr"]);
    let mutable: Vec<String> = manager
        .show_config(None)
        .into_iter()
        .filter(|r| r.mutable)
        .map(|r| r.key)
        .collect();
    assert_eq!(
        mutable,
        [
            "external_meta_cache_max_weight",
            "cluster_node_timeout_ms",
            "query_timeout_seconds",
            "metrics_cache_labels",
            "external_meta_cache_refresh_max_concurrency",
            "external_meta_cache_lease_timeout_ms",
            "external_meta_cache_advisor_half_life_seconds",
            "external_meta_cache_history_interval_seconds",
            "external_meta_cache_scope_max_count",
            "external_meta_cache_scope_max_entries",
            "external_meta_cache_disk_dir",
            "external_meta_cache_disk_max_weight"
        ]
    );
}

#[test]
fn a_percentage_without_a_known_memory_budget_is_refused() {
    let options = || {
        let mut options = metacache_catalog::ManagerOptions::new(Arc::new(MemoryStore::new()));
        options.detect_memory = false;
        options
    };
    let expected = "Cannot resolve 'external_meta_cache_max_weight' = 10%: the node memory budget is unknown; set node_memory_budget";
    let mut percent = options();
    percent
        .config
        .set("external_meta_cache_max_weight", "10%")
        .expect("valid syntax");
    let error = metacache_catalog::CatalogManager::open(percent)
        .err()
        .expect("refused at start");
    assert_eq!(error.to_string(), expected);

    let manager =
        metacache_catalog::CatalogManager::open(options()).expect("no percentage, no need");
    assert_eq!(
        manager
            .set_config("external_meta_cache_max_weight", "10%")
            .expect_err("refused")
            .to_string(),
        expected
    );
    assert_eq!(manager.governor().node().limit(), None, "unchanged");
    manager
        .set_config("external_meta_cache_max_weight", "1GB")
        .expect("sizes need no budget");
    assert_eq!(value(&manager, "node_memory_budget_bytes"), "unknown");

    let mut configured = options();
    configured
        .config
        .set("external_meta_cache_max_weight", "10%")
        .expect("valid");
    configured
        .config
        .set("node_memory_budget", "10GB")
        .expect("valid");
    let manager = metacache_catalog::CatalogManager::open(configured).expect("budget given");
    assert_eq!(manager.governor().node().limit(), Some(1 << 30));
}

#[tokio::test]
async fn remote_engines_are_stored_and_serve_their_catalog_type() {
    let store = Arc::new(MemoryStore::new());
    let manager = manager_on(store.clone(), NodeConfig::default());
    let definition: metacache_engines::EngineDef = serde_json_from(
        r#"{"name": "feature_store", "catalog_types": ["feature_store"],
            "entries": [{"token": "features", "defaults": {"enable": true, "ttl": {"seconds": 300}, "capacity": 500}}],
            "caches": [{"entry_name": "fs-features", "source": {"entry": "features"}}]}"#,
    );
    manager.define_engine(definition.clone()).expect("defined");
    create(
        &manager,
        "fs",
        &[
            ("type", "feature_store"),
            ("meta.cache.feature_store.features.max-weight", "1MB"),
        ],
    )
    .expect("its properties are known now");
    let catalog = manager.catalog("fs").expect("fs");
    let cache: ManagedCache<String, Blob> = catalog
        .cache_by_name("feature_store", "fs-features")
        .expect("declared")
        .expect("built");
    cache
        .get_or_load("k".to_owned(), || async {
            Ok::<_, std::io::Error>(Blob(10))
        })
        .await
        .expect("load");
    assert_eq!(cache.stats().max_weight, 1 << 20);

    // A restart brings the engine back before the catalogs that need it.
    drop(manager);
    let manager = manager_on(store, NodeConfig::default());
    assert!(
        manager.load_warnings().is_empty(),
        "{:?}",
        manager.load_warnings()
    );
    let engines = manager.catalog("fs").expect("fs").engines();
    assert_eq!(engines, ["default", "feature_store"]);
    assert!(
        manager
            .define_engine({
                let mut hive = definition;
                hive.name = "hive".into();
                hive
            })
            .is_err()
    );
    assert!(manager.remove_engine("feature_store").expect("removed"));
    assert_eq!(manager.catalog("fs").expect("fs").engines(), ["default"]);
}

fn serde_json_from(text: &str) -> metacache_engines::EngineDef {
    serde_json::from_str(text).expect("json")
}

#[test]
fn secrets_in_the_config_are_masked_and_never_echoed() {
    let mut config = NodeConfig::default();
    config
        .set("auth_users", "root:hunter2, alice:pw")
        .expect("valid");
    config.set("http_token", "s3cr3t").expect("valid");
    assert_eq!(
        config.auth_users,
        [
            ("root".to_owned(), "hunter2".to_owned()),
            ("alice".to_owned(), "pw".to_owned())
        ]
    );
    let error = config
        .set("auth_users", "root:hunter2,bob")
        .expect_err("bob has no password")
        .to_string();
    assert!(!error.contains("hunter2"), "{error}");
    let manager = manager_on(Arc::new(MemoryStore::new()), config);
    for row in manager.show_config(Some("%t%")) {
        if row.key == "auth_users" || row.key == "http_token" {
            assert_eq!(row.value, "*XXX");
        }
    }
}

#[test]
fn the_example_config_documents_every_key_with_its_default() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let example = root.join("config/metacache.example.toml");
    let loaded = NodeConfig::load(Some(&example), Vec::new()).expect("the example loads");
    assert_eq!(
        loaded,
        NodeConfig::default(),
        "the example shows the defaults"
    );
    let text = std::fs::read_to_string(&example).expect("read");
    let reference = std::fs::read_to_string(root.join("docs/configuration.md")).expect("read");
    for key in metacache_catalog::node_config::KEYS {
        assert!(
            text.contains(&format!("\n{} = ", key.key)),
            "{} in the example",
            key.key
        );
        assert!(
            reference.contains(&format!("`{}`", key.key)),
            "{} in the reference",
            key.key
        );
    }
}

#[test]
fn the_reference_documents_every_entry_and_legacy_key() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let reference = std::fs::read_to_string(root.join("docs/configuration.md")).expect("read");
    for engine in metacache_engines::EngineRegistry::builtin().all() {
        for cache in &engine.caches {
            assert!(
                reference.contains(&format!("`{}`", cache.entry_name)),
                "{}",
                cache.entry_name
            );
        }
        for entry in &engine.entries {
            let row = format!("| `{}` | `{}` |", engine.config_engine(), entry.token);
            let ttl_only = format!("meta.cache.{}.{}", engine.name, entry.token);
            assert!(
                reference.contains(&row) || reference.contains(&ttl_only),
                "{row}"
            );
        }
        for legacy in &engine.legacy {
            assert!(
                reference.contains(&format!("`{}`", legacy.key)),
                "{}",
                legacy.key
            );
        }
    }
}

/// `/metrics` reads the quota advisor's rows built ahead: the first read builds them; a read
/// after more requests answers from the rows kept and starts building the next, which the
/// read after it answers from; rows older than `ADVICE_AHEAD_MAX_AGE` are built at the read.
#[test]
fn the_advice_rows_of_a_scrape_are_built_ahead_of_it() {
    use metacache_catalog::ADVICE_AHEAD_MAX_AGE;
    use metacache_catalog::memory::{MemorySource, NodeMemory};
    use std::time::Duration;

    let (clock, time) = metacache_cache::Clock::manual();
    let mut options = metacache_catalog::ManagerOptions::new(Arc::new(MemoryStore::new()));
    options.clock = clock;
    options.node_memory = Some(NodeMemory {
        bytes: NODE_MEMORY,
        source: MemorySource::Physical,
    });
    let manager = Arc::new(metacache_catalog::CatalogManager::open(options).expect("opens"));
    manager
        .define_engine(serde_json_from(
            r#"{"name": "feature_store", "catalog_types": ["feature_store"],
                "entries": [{"token": "features", "defaults": {"enable": true, "ttl": {"seconds": 3600}, "capacity": 500}}],
                "caches": [{"entry_name": "fs-features", "source": {"entry": "features"}}]}"#,
        ))
        .expect("defined");
    create(&manager, "fs", &[("type", "feature_store")]).expect("created");
    let cache: ManagedCache<String, Blob> = manager
        .catalog("fs")
        .expect("fs")
        .cache_by_name("feature_store", "fs-features")
        .expect("declared")
        .expect("built");
    // `n` requests over `keys` keys of 1 KB each over 20 seconds (a rate the catalog's row
    // weighs its caches by), then the advisor drains.
    let serve = |n: u64, keys: u64| {
        for i in 0..n {
            let key = format!("k{}", (i * 7) % keys);
            if cache.get(key.as_str()).is_none() {
                cache.insert(key, Blob(1000));
            }
        }
        time.advance(Duration::from_secs(20));
        cache.advise_now();
    };
    let settle = || {
        assert!(
            manager.wait_advice_ahead(Duration::from_secs(30)),
            "the rows built ahead were not kept within 30 s"
        );
    };

    serve(400, 40);
    let first = manager.advice_rows_ahead();
    assert!(
        first.iter().any(|r| r.entry_name.is_none()),
        "the catalog's row: {first:?}"
    );
    assert_eq!(*first, manager.advice_rows(), "the first read builds them");
    assert!(!manager.advice_ahead_building(), "and builds no more");

    serve(2_000, 400);
    let now = manager.advice_rows();
    assert_ne!(now, *first, "the requests move the curves");
    let second = manager.advice_rows_ahead();
    assert!(
        Arc::ptr_eq(&second, &first),
        "a read answers from the rows kept"
    );
    settle();
    let third = manager.advice_rows_ahead();
    assert_eq!(
        *third, now,
        "the next read answers from the rows built after the last"
    );
    settle();

    time.advance(ADVICE_AHEAD_MAX_AGE + Duration::from_secs(1));
    serve(2_000, 4_000);
    let fourth = manager.advice_rows_ahead();
    assert_eq!(
        *fourth,
        manager.advice_rows(),
        "rows older than {ADVICE_AHEAD_MAX_AGE:?} are built at the read"
    );
    assert_ne!(*fourth, *third);
}
