//! Catalog lifecycle through the manager: lazy caches, ALTER scopes, REFRESH, DROP, the
//! in-flight fence, shared entry budgets and the rules that leave caches out.

mod common;

use std::sync::Arc;

use common::*;
use metacache_cache::{Cached, ManagedCache};
use metacache_catalog::{CacheId, Catalog, CatalogStore, Error, TableKey};
use tokio::sync::Notify;

type Cache = ManagedCache<TableKey, Blob>;

const SCHEMA: CacheId<TableKey, Blob> = CacheId::new("default", "schema");
const TABLE: CacheId<TableKey, Blob> = CacheId::new("hive", "hive-table");
const FILE: CacheId<TableKey, Blob> = CacheId::new("hive", "hive-file");
const HUDI_TABLE: CacheId<TableKey, Blob> = CacheId::new("hudi", "hive-table");
const ICEBERG_TABLE: CacheId<TableKey, Blob> = CacheId::new("iceberg", "iceberg-table");
const MVCC_VIEW: CacheId<TableKey, Blob> = CacheId::new("iceberg", "iceberg.mvcc-partition-view");
const LIST_VIEW: CacheId<TableKey, Blob> = CacheId::new("iceberg", "iceberg.list-partitions-view");
const ALL: [CacheId<TableKey, Blob>; 5] = [SCHEMA, TABLE, FILE, HUDI_TABLE, ICEBERG_TABLE];

fn cache(catalog: &Catalog, id: CacheId<TableKey, Blob>) -> Cache {
    catalog
        .cache(&id)
        .expect("declared")
        .expect("not suppressed")
}

async fn load(cache: &Cache, db: &str, table: &str, bytes: u64) -> Cached<Blob> {
    cache
        .get_or_load(TableKey::new(db, table), || async move {
            Ok::<_, std::io::Error>(Blob(bytes))
        })
        .await
        .expect("load")
}

fn row(catalog: &Catalog, engine: &str, entry: &str) -> metacache_catalog::CacheRow {
    catalog
        .cache_rows()
        .into_iter()
        .find(|r| r.engine == engine && r.stats.entry_name == entry)
        .unwrap_or_else(|| panic!("row {engine}/{entry}"))
}

#[tokio::test]
async fn caches_are_built_on_first_use_and_listed_before() {
    let (manager, _) = manager();
    create(&manager, "hive_prod", &[("type", "hms")]).expect("created");
    let catalog = manager.catalog("hive_prod").expect("catalog");
    assert_eq!(catalog.built_caches(), 0);
    let rows = catalog.cache_rows();
    assert_eq!(
        rows.len(),
        1 + 6 + 4 + 8,
        "default, hive, hudi and iceberg (no comment cache)"
    );
    assert!(rows.iter().all(|r| !r.built && r.stats.request_count == 0));
    assert_eq!(
        row(&catalog, "hive", "hive-partition").stats.capacity,
        100_000
    );

    let file = cache(&catalog, FILE);
    load(&file, "db", "t", 1000).await;
    assert!(
        cache(&catalog, FILE)
            .get(&TableKey::new("db", "t"))
            .is_some(),
        "one instance per cache"
    );
    assert_eq!(catalog.built_caches(), 1);
    let stats = row(&catalog, "hive", "hive-file").stats;
    assert_eq!(
        (stats.miss_count, stats.hit_count, stats.estimated_weight),
        (1, 1, charge(1000))
    );
    assert_eq!(catalog.budget().used(), charge(1000));
    assert_eq!(manager.cache_rows().len(), rows.len());
}

/// (ALTER properties, which of ALL survive)
const ALTER_SCOPES: &[(Pairs, [bool; 5])] = &[
    (&[("meta.cache.max-weight", "1GB")], [false; 5]),
    (&[("schema.cache.ttl-second", "60")], [false; 5]),
    (
        &[("hive.metastore.uris", "thrift://other:9083")],
        [false; 5],
    ),
    (
        &[("meta.cache.hive.file.ttl-second", "60")],
        [true, false, false, false, true],
    ),
    (
        &[("file.meta.cache.ttl-second", "60")],
        [true, false, false, false, true],
    ),
    (
        &[("partition.cache.ttl-second", "60")],
        [true, false, false, false, true],
    ),
    (
        &[("meta.cache.hive.table.max-weight", "1GB")],
        [true, false, false, false, true],
    ),
    (
        &[("meta.cache.iceberg.table.capacity", "5")],
        [true, true, true, true, false],
    ),
    (
        &[("meta.cache.default.schema.ttl-second", "5")],
        [false, true, true, true, true],
    ),
    (
        &[("meta.cache.vector_index.segments.enable", "false")],
        [true; 5],
    ),
    (
        &[("hive.metastore.uris", "thrift://metastore:9083")],
        [true; 5],
    ),
];

#[tokio::test]
async fn alter_drops_exactly_the_caches_of_its_scope() {
    for (pairs, survives) in ALTER_SCOPES {
        let (manager, _) = manager();
        create(
            &manager,
            "c",
            &[
                ("type", "hms"),
                ("hive.metastore.uris", "thrift://metastore:9083"),
            ],
        )
        .expect("created");
        let catalog = manager.catalog("c").expect("c");
        let mut before = Vec::new();
        for id in ALL {
            let cache = cache(&catalog, id);
            load(&cache, "db", "t", 100).await;
            before.push(cache);
        }
        let held = before[1]
            .get(&TableKey::new("db", "t"))
            .expect("held by a query");
        let outcome = manager.alter_catalog("c", props(pairs)).expect("valid");
        assert_eq!(
            outcome.changed,
            survives != &[true; 5] || pairs[0].0.starts_with("meta.cache.vector"),
            "{pairs:?}"
        );
        for ((id, old), survived) in ALL.iter().zip(&before).zip(survives) {
            let now = cache(&catalog, *id);
            let what = format!("{pairs:?} {id:?}");
            assert_eq!(old.is_retired(), !survived, "{what}");
            if *survived {
                assert!(
                    now.get(&TableKey::new("db", "t")).is_some(),
                    "{what} keeps its values"
                );
                assert!(now.stats().request_count >= 2, "{what} keeps counting");
            } else {
                assert_eq!(
                    now.stats().request_count,
                    0,
                    "{what} rebuilt with counters from zero"
                );
                assert!(
                    now.get(&TableKey::new("db", "t")).is_none(),
                    "{what} starts empty"
                );
            }
        }
        assert_eq!(*held, Blob(100), "a caller keeps the value it holds");
        let kept = survives.iter().filter(|s| **s).count() as u64;
        assert_eq!(
            catalog.budget().used(),
            kept * charge(100),
            "{pairs:?}: dropped caches released"
        );
    }
}

#[tokio::test]
async fn altered_settings_apply_to_the_rebuilt_caches() {
    let (manager, _) = manager();
    create(&manager, "c", &[("type", "hms")]).expect("created");
    let catalog = manager.catalog("c").expect("c");
    load(&cache(&catalog, FILE), "db", "t", 10).await;
    manager
        .alter_catalog(
            "c",
            props(&[
                ("meta.cache.hive.file.ttl-second", "60"),
                ("meta.cache.hive.file.capacity", "7"),
                ("meta.cache.hive.file.max-weight", "64KB"),
            ]),
        )
        .expect("valid");
    let stats = row(&catalog, "hive", "hive-file").stats;
    assert_eq!(
        (stats.ttl_second, stats.capacity, stats.max_weight),
        (60, 7, 65_536)
    );
    let rebuilt = cache(&catalog, FILE);
    assert_eq!(rebuilt.config().capacity, 7);
    assert_eq!(rebuilt.stats().max_weight, 65_536);
    manager
        .alter_catalog("c", props(&[("meta.cache.hive.file.enable", "false")]))
        .expect("valid");
    let disabled = cache(&catalog, FILE);
    load(&disabled, "db", "t", 10).await;
    assert!(disabled.is_empty() && !disabled.stats().effective_enabled);
}

#[tokio::test]
async fn refresh_catalog_database_and_table() {
    let (manager, _) = manager();
    create(&manager, "c", &[("type", "hms")]).expect("created");
    let catalog = manager.catalog("c").expect("c");
    let table = cache(&catalog, TABLE);
    let file = cache(&catalog, FILE);
    for (db, t) in [("db1", "a"), ("db1", "b"), ("db2", "a")] {
        load(&table, db, t, 10).await;
        load(&file, db, t, 10).await;
    }
    assert_eq!(manager.refresh_table("c", "db1", "a").expect("refresh"), 2);
    assert!(table.get(&TableKey::new("db1", "a")).is_none());
    assert!(table.get(&TableKey::new("db1", "b")).is_some());
    assert_eq!(manager.refresh_database("c", "db1").expect("refresh"), 2);
    assert!(file.get(&TableKey::new("db2", "a")).is_some());
    assert_eq!(manager.refresh_catalog("c").expect("refresh"), 2);
    assert_eq!(catalog.budget().used(), 0);
    assert_eq!(
        table.stats().invalidate_count,
        3,
        "instances survive REFRESH, counters go on"
    );
    assert!(matches!(
        manager.refresh_catalog("nosuch"),
        Err(Error::UnknownCatalog { .. })
    ));
}

#[tokio::test]
async fn drop_releases_every_byte_and_fails_later_use() {
    let (manager, store) = manager();
    create(&manager, "a", &[("type", "hms")]).expect("created");
    create(&manager, "b", &[("type", "iceberg")]).expect("created");
    let a = manager.catalog("a").expect("a");
    let b = manager.catalog("b").expect("b");
    let file = cache(&a, FILE);
    let held = load(&file, "db", "t", 5000).await;
    let schema = cache(&a, SCHEMA);
    load(&schema, "db", "t", 100).await;
    let iceberg = cache(&b, ICEBERG_TABLE);
    load(&iceberg, "db", "t", 700).await;
    let node = manager.governor().node();
    // Each cache's quota advisor holds its own bytes in the node's ledger (reserved when its
    // queue is first drained: by the governor's advisor thread within 25 ms, or now).
    for advised in [&file, &schema, &iceberg] {
        advised.advise_now();
    }
    let advisors = file.advisor_bytes() + schema.advisor_bytes() + iceberg.advisor_bytes();
    assert!(iceberg.advisor_bytes() > 0);
    assert_eq!(
        node.used(),
        charge(5000) + charge(100) + charge(700) + advisors
    );
    assert!(manager.drop_catalog("a", false).expect("dropped").changed);
    assert_eq!(a.budget().used(), 0);
    assert_eq!(
        file.advisor_bytes(),
        0,
        "a retired cache's advisor holds nothing"
    );
    assert_eq!(
        node.used(),
        charge(700) + iceberg.advisor_bytes(),
        "only b's bytes remain"
    );
    assert!(matches!(a.cache(&FILE), Err(Error::CatalogDropped { .. })));
    assert!(a.cache_rows().is_empty());
    assert_eq!(*held, Blob(5000), "callers keep what they hold");
    load(&file, "db", "u", 1).await;
    assert!(file.is_empty(), "a handle kept past DROP never stores");
    assert!(matches!(
        manager.drop_catalog("a", false),
        Err(Error::UnknownCatalog { .. })
    ));
    assert!(!manager.drop_catalog("a", true).expect("IF EXISTS").changed);
    let names: Vec<String> = store
        .load()
        .expect("load")
        .catalogs
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(names, ["b"]);
}

/// Starts a load of `db.t` in `cache` that waits for the returned notify.
async fn load_in_flight(cache: &Cache) -> (tokio::task::JoinHandle<Cached<Blob>>, Arc<Notify>) {
    let release = Arc::new(Notify::new());
    let started = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let task = {
        let cache = cache.clone();
        let release = Arc::clone(&release);
        let started = Arc::clone(&started);
        tokio::spawn(async move {
            cache
                .get_or_load(TableKey::new("db", "t"), || async move {
                    started.store(true, std::sync::atomic::Ordering::SeqCst);
                    release.notified().await;
                    Ok::<_, std::io::Error>(Blob(4000))
                })
                .await
                .expect("load")
        })
    };
    // The source is being read: what it returns predates the operation that follows.
    while !started.load(std::sync::atomic::Ordering::SeqCst) {
        tokio::task::yield_now().await;
    }
    (task, release)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loads_in_flight_never_populate_after_alter_refresh_or_drop() {
    type Operation = fn(&metacache_catalog::CatalogManager);
    let operations: [(&str, Operation); 5] = [
        ("alter", |m| {
            m.alter_catalog("c", props(&[("meta.cache.hive.file.ttl-second", "60")]))
                .expect("alter");
        }),
        ("refresh catalog", |m| {
            m.refresh_catalog("c").expect("refresh");
        }),
        ("refresh table", |m| {
            m.refresh_table("c", "db", "t").expect("refresh");
        }),
        ("refresh database", |m| {
            m.refresh_database("c", "db").expect("refresh");
        }),
        ("drop", |m| {
            m.drop_catalog("c", false).expect("drop");
        }),
    ];
    for (what, operation) in operations {
        let (manager, _) = manager();
        create(&manager, "c", &[("type", "hms")]).expect("created");
        let catalog = manager.catalog("c").expect("c");
        let old = cache(&catalog, FILE);
        let (task, release) = load_in_flight(&old).await;
        operation(&manager);
        release.notify_one();
        assert_eq!(
            *task.await.expect("task"),
            Blob(4000),
            "{what}: the caller gets its value"
        );
        assert!(
            old.get(&TableKey::new("db", "t")).is_none(),
            "{what}: not in the old cache"
        );
        if let Ok(Some(new)) = catalog.cache(&FILE) {
            assert!(
                new.get(&TableKey::new("db", "t")).is_none(),
                "{what}: not in the new cache"
            );
        }
        assert_eq!(catalog.budget().used(), 0, "{what}: nothing charged");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refreshing_another_table_leaves_a_load_in_flight_alone() {
    let (manager, _) = manager();
    create(&manager, "c", &[("type", "hms")]).expect("created");
    let catalog = manager.catalog("c").expect("c");
    let file = cache(&catalog, FILE);
    let (task, release) = load_in_flight(&file).await;
    manager.refresh_table("c", "db", "other").expect("refresh");
    manager.refresh_database("c", "other_db").expect("refresh");
    release.notify_one();
    task.await.expect("task");
    assert!(
        file.get(&TableKey::new("db", "t")).is_some(),
        "db.t was loaded and cached"
    );
}

#[tokio::test]
async fn caches_of_one_entry_token_share_its_budget() {
    let (manager, _) = manager();
    let limit = 4 * charge(1000);
    let limit_text = limit.to_string();
    create(
        &manager,
        "ice",
        &[
            ("type", "iceberg"),
            (
                "meta.cache.iceberg.partition_view.max-weight",
                limit_text.as_str(),
            ),
        ],
    )
    .expect("created");
    let catalog = manager.catalog("ice").expect("ice");
    let mvcc = cache(&catalog, MVCC_VIEW);
    let list = cache(&catalog, LIST_VIEW);
    for t in ["a", "b", "c"] {
        load(&mvcc, "db", t, 1000).await;
    }
    load(&list, "db", "a", 1000).await;
    load(&list, "db", "b", 1000).await;
    let list_stats = list.stats();
    assert_eq!(
        list_stats.weight_reject_count, 1,
        "the fifth value does not fit the shared budget"
    );
    assert_eq!(
        list_stats.last_weight_reject_reason.as_deref(),
        Some("budget_exceeded")
    );
    assert_eq!(mvcc.stats().max_weight, limit as i64);
    assert_eq!(list_stats.max_weight, limit as i64);
    // Full, unless the reclamation the rejection asked for already ran (the background worker
    // may run before this line): it frees the deficit, one value, and a low-watermark margin
    // of the limit besides, which here takes a second value. (Accepting one value only failed
    // 3 to 4 runs in 30.)
    let used = catalog.budget().used();
    assert!(
        [limit, limit - charge(1000), limit - 2 * charge(1000)].contains(&used),
        "used {used} of {limit}"
    );
    let table = cache(&catalog, ICEBERG_TABLE);
    load(&table, "db", "big", 100_000).await;
    assert_eq!(table.len(), 1, "other entries are not bound by that limit");
}

#[tokio::test]
async fn rules_leave_caches_out_for_per_user_sessions() {
    let (manager, _) = manager();
    create(
        &manager,
        "rest",
        &[("type", "iceberg"), ("iceberg.rest.session", "user")],
    )
    .expect("created");
    let catalog = manager.catalog("rest").expect("rest");
    assert!(catalog.cache(&ICEBERG_TABLE).expect("declared").is_none());
    assert!(catalog.cache(&MVCC_VIEW).expect("declared").is_none());
    let entries: Vec<String> = catalog
        .cache_rows()
        .into_iter()
        .map(|r| r.stats.entry_name)
        .collect();
    assert_eq!(
        entries,
        [
            "schema",
            "iceberg-manifest",
            "iceberg-equality-delete-field-ids"
        ]
    );
    let unknown = catalog.cache(&CacheId::<TableKey, Blob>::new("iceberg", "nosuch"));
    assert!(matches!(unknown, Err(Error::UnknownCache { .. })));
    let other_engine = catalog.cache(&TABLE);
    assert!(
        matches!(other_engine, Err(Error::UnknownCache { .. })),
        "iceberg catalogs have no hive caches"
    );
}

#[tokio::test]
async fn a_cache_is_typed_by_its_first_use() {
    let (manager, _) = manager();
    create(&manager, "c", &[("type", "hms")]).expect("created");
    let catalog = manager.catalog("c").expect("c");
    cache(&catalog, FILE);
    let wrong = catalog.cache(&CacheId::<String, Blob>::new("hive", "hive-file"));
    assert!(matches!(wrong, Err(Error::CacheType { .. })));
}
