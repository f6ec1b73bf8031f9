//! Every property rule and message of §4 and §6, through CREATE and ALTER CATALOG; a refused
//! statement changes nothing, in memory or in the store.

mod common;

use common::*;
use metacache_catalog::{CatalogStore, CreateCatalog};

/// (properties of CREATE CATALOG besides `type`="hms", the exact error message)
const CREATE_ERRORS: &[(Pairs, &str)] = &[
    (
        &[("meta.cache.max-weight", "")],
        "Invalid cache weight for 'meta.cache.max-weight': ",
    ),
    (
        &[("meta.cache.max-weight", "1.5GB")],
        "Invalid cache weight for 'meta.cache.max-weight': 1.5GB",
    ),
    (
        &[("meta.cache.max-weight", "-1")],
        "Invalid cache weight for 'meta.cache.max-weight': -1",
    ),
    (
        &[("meta.cache.max-weight", "8EB")],
        "Invalid cache weight for 'meta.cache.max-weight': 8EB",
    ),
    (
        &[("meta.cache.max-weight", "1PB000")],
        "Invalid cache weight for 'meta.cache.max-weight': 1PB000",
    ),
    (
        &[("meta.cache.max-weight", "8192PB")],
        "Invalid cache weight for 'meta.cache.max-weight': 8192PB",
    ),
    (
        &[("meta.cache.max-weight", "10%")],
        "Invalid cache weight for 'meta.cache.max-weight': 10%",
    ),
    (
        &[("meta.cache.max-weight", "0")],
        "meta.cache.max-weight must be positive",
    ),
    (
        &[("meta.cache.max-weight", "0GB")],
        "meta.cache.max-weight must be positive",
    ),
    (
        &[("meta.cache.hive.file.max-weight", "0")],
        "meta.cache.hive.file.max-weight must be positive",
    ),
    (
        &[("meta.cache.hive.file.max-weight", "abc")],
        "Invalid cache weight for 'meta.cache.hive.file.max-weight': abc",
    ),
    (
        &[
            ("meta.cache.max-weight", "1GB"),
            ("meta.cache.hive.file.max-weight", "2GB"),
        ],
        "meta.cache.hive.file.max-weight can not exceed meta.cache.max-weight",
    ),
    (
        &[
            ("meta.cache.max-weight", "1023MB"),
            ("meta.cache.iceberg.partition_view.max-weight", "1GB"),
        ],
        "meta.cache.iceberg.partition_view.max-weight can not exceed meta.cache.max-weight",
    ),
    (
        &[("meta.cache.hive.nosuch.max-weight", "1GB")],
        "Unknown metadata cache weight property: meta.cache.hive.nosuch.max-weight",
    ),
    (
        &[("meta.cache.paimon.table.max-weight", "1GB")],
        "Unknown metadata cache weight property: meta.cache.paimon.table.max-weight",
    ),
    (
        &[("meta.cache.hive.max-weight", "1GB")],
        "Unknown metadata cache weight property: meta.cache.hive.max-weight",
    ),
    (
        &[("meta.cache.default.table.max-weight", "1GB")],
        "Unknown metadata cache weight property: meta.cache.default.table.max-weight",
    ),
    (
        &[("meta.cache.hive.file.ttl", "60")],
        "Unknown metadata cache property: meta.cache.hive.file.ttl; settings are enable, ttl-second, capacity, max-weight, auto-refresh and advisor",
    ),
    (
        &[("meta.cache.hive.fle.ttl-second", "60")],
        "Unknown metadata cache property: meta.cache.hive.fle.ttl-second; ttl-second entries of hive are column_stats, file, partition, partition_names, partition_view, table",
    ),
    (
        &[("meta.cache.paimon.table.enable", "true")],
        "Unknown metadata cache property: meta.cache.paimon.table.enable; enable entries of paimon are partition_view",
    ),
    (
        &[("meta.cache.hudi.table.ttl-second", "60")],
        "Unknown metadata cache property: meta.cache.hudi.table.ttl-second; hudi caches are configured by meta.cache.hive.*",
    ),
    (
        &[("meta.cache.maxweight", "1GB")],
        "Unknown metadata cache property: meta.cache.maxweight; cache keys are meta.cache.max-weight and meta.cache.<engine>.<entry>.{enable,ttl-second,capacity,max-weight,auto-refresh,advisor}",
    ),
    (
        &[("meta.cache.hive.file.enable", "yes")],
        "Invalid value for 'meta.cache.hive.file.enable': yes (expected true or false)",
    ),
    (
        &[("meta.cache.hive.file.ttl-second", "-2")],
        "Invalid value for 'meta.cache.hive.file.ttl-second': -2 (expected an integer, -1 for the default)",
    ),
    (
        &[("meta.cache.hive.file.capacity", "many")],
        "Invalid value for 'meta.cache.hive.file.capacity': many (expected an integer, -1 for the default)",
    ),
    (
        &[("file.meta.cache.ttl-second", "soon")],
        "Invalid value for 'file.meta.cache.ttl-second': soon (expected an integer, -1 for the default)",
    ),
    (
        &[("schema.cache.ttl-second", "1.5")],
        "Invalid value for 'schema.cache.ttl-second': 1.5 (expected an integer, -1 for the default)",
    ),
    (
        &[("lance.table_access_cache_ttl_seconds", "x")],
        "Invalid value for 'lance.table_access_cache_ttl_seconds': x (expected an integer, -1 for the default)",
    ),
];

/// Properties CREATE CATALOG accepts (besides `type`="hms").
const CREATE_OK: &[Pairs] = &[
    &[],
    &[
        ("meta.cache.max-weight", "4GB"),
        ("meta.cache.hive.file.max-weight", "2GB"),
        ("meta.cache.hive.partition_view.max-weight", "1GB"),
    ],
    &[
        ("meta.cache.max-weight", " 4 gb "),
        ("meta.cache.hive.file.max-weight", "4096MB"),
    ],
    &[
        ("meta.cache.max-weight", "1073741824"),
        ("meta.cache.hive.file.max-weight", "1GB"),
    ],
    &[
        ("meta.cache.iceberg.manifest.enable", "TRUE"),
        ("meta.cache.iceberg.manifest.max-weight", "1GB"),
    ],
    &[("meta.cache.paimon.table.ttl-second", "60")],
    &[
        ("meta.cache.hive.file.ttl-second", "-1"),
        ("meta.cache.hive.file.capacity", "0"),
    ],
    &[
        ("schema.cache.ttl-second", "0"),
        ("partition.cache.ttl-second", "30"),
        ("file.meta.cache.ttl-second", "30"),
    ],
    &[
        ("hive.metastore.uris", "thrift://127.0.0.1:9083"),
        ("password", "hunter2"),
    ],
];

#[test]
fn create_catalog_refuses_each_invalid_property_with_its_message() {
    let (manager, store) = manager();
    for (pairs, expected) in CREATE_ERRORS {
        let mut all = vec![("type", "hms")];
        all.extend_from_slice(pairs);
        let error = create(&manager, "c", &all).expect_err(expected);
        assert_eq!(error.to_string(), *expected, "{pairs:?}");
        assert!(manager.catalog("c").is_err(), "{pairs:?} created nothing");
        assert!(
            store.load().expect("load").catalogs.is_empty(),
            "{pairs:?} stored nothing"
        );
    }
}

#[test]
fn create_catalog_accepts_valid_properties() {
    let (manager, store) = manager();
    for (i, pairs) in CREATE_OK.iter().enumerate() {
        let mut all = vec![("type", "hms")];
        all.extend_from_slice(pairs);
        let name = format!("c{i}");
        let outcome = create(&manager, &name, &all).unwrap_or_else(|e| panic!("{pairs:?}: {e}"));
        assert!(outcome.changed && outcome.warnings.is_empty(), "{pairs:?}");
        assert_eq!(
            manager.catalog(&name).expect("exists").def().properties,
            props(&all)
        );
    }
    assert_eq!(store.load().expect("load").catalogs.len(), CREATE_OK.len());
}

#[test]
fn keys_of_unknown_engines_are_kept_with_a_warning() {
    let (manager, _) = manager();
    let outcome = create(
        &manager,
        "c",
        &[
            ("type", "hms"),
            ("meta.cache.vector_index.segments.max-weight", "1GB"),
        ],
    )
    .expect("tolerated");
    assert_eq!(outcome.warnings.len(), 1);
    assert!(
        outcome.warnings[0].contains("no engine 'vector_index'"),
        "{:?}",
        outcome.warnings
    );
}

#[test]
fn the_catalog_type_is_required_and_known() {
    let (manager, _) = manager();
    let missing = create(&manager, "c", &[]).expect_err("no type").to_string();
    assert!(missing.starts_with("Missing 'type' property"), "{missing}");
    assert_eq!(
        create(&manager, "c", &[("type", "oracle")])
            .expect_err("unknown")
            .to_string(),
        "Unknown catalog type 'oracle'; known types: adbc, doris, es, hive, hms, hudi, iceberg, jdbc, lakesoul, lance, max_compute, paimon, trino-connector"
    );
    create(&manager, "c", &[("type", " Iceberg ")]).expect("types are case-insensitive");
    assert_eq!(
        manager.catalog("c").expect("c").engines(),
        ["default", "iceberg"]
    );
}

#[test]
fn catalog_names_are_identifiers() {
    let (manager, _) = manager();
    let long = "a".repeat(65);
    for (name, reason) in [
        ("", "a name is required"),
        ("1abc", "names start with a letter or '_'"),
        ("a b", "names are letters, digits, '_' and '-'"),
        ("a.b", "names are letters, digits, '_' and '-'"),
        ("Internal", "the name is reserved for the built-in catalog"),
        (long.as_str(), "names are at most 64 characters"),
    ] {
        let error = create(&manager, name, &[("type", "hms")])
            .expect_err(name)
            .to_string();
        assert!(error.ends_with(reason), "{name}: {error}");
    }
    create(&manager, "hive_prod-2", &[("type", "hms")]).expect("valid name");
}

#[test]
fn duplicate_names_and_if_not_exists() {
    let (manager, _) = manager();
    create(&manager, "c", &[("type", "hms"), ("k", "first")]).expect("created");
    assert_eq!(
        create(&manager, "c", &[("type", "hms")])
            .expect_err("exists")
            .to_string(),
        "Catalog 'c' already exists"
    );
    let outcome = manager
        .create_catalog(CreateCatalog {
            name: "c".to_owned(),
            if_not_exists: true,
            properties: props(&[("type", "iceberg"), ("k", "second")]),
            ..CreateCatalog::default()
        })
        .expect("IF NOT EXISTS");
    assert!(!outcome.changed);
    assert_eq!(
        manager.catalog("c").expect("c").def().properties.get("k"),
        Some("first")
    );
}

#[test]
fn alter_checks_the_merged_properties_and_changes_nothing_on_error() {
    let (manager, store) = manager();
    create(
        &manager,
        "c",
        &[
            ("type", "hms"),
            ("meta.cache.max-weight", "4GB"),
            ("meta.cache.hive.file.max-weight", "2GB"),
        ],
    )
    .expect("created");
    let before = manager.catalog("c").expect("c").def();
    let cases: &[(Pairs, &str)] = &[
        (
            &[("meta.cache.max-weight", "1GB")],
            "meta.cache.hive.file.max-weight can not exceed meta.cache.max-weight",
        ),
        (
            &[("meta.cache.hive.partition_view.max-weight", "8GB")],
            "meta.cache.hive.partition_view.max-weight can not exceed meta.cache.max-weight",
        ),
        (
            &[
                ("meta.cache.hive.file.ttl-second", "60"),
                ("meta.cache.max-weight", "0"),
            ],
            "meta.cache.max-weight must be positive",
        ),
        (
            &[("type", "iceberg")],
            "Can not change the type of catalog 'c' from 'hms' to 'iceberg'",
        ),
        (
            &[("meta.cache.hive.nosuch.max-weight", "1GB")],
            "Unknown metadata cache weight property: meta.cache.hive.nosuch.max-weight",
        ),
    ];
    for (pairs, expected) in cases {
        let error = manager
            .alter_catalog("c", props(pairs))
            .expect_err(expected);
        assert_eq!(error.to_string(), *expected);
        assert_eq!(
            manager.catalog("c").expect("c").def(),
            before,
            "{pairs:?} changed nothing"
        );
        assert_eq!(store.load().expect("load").catalogs, vec![before.clone()]);
    }
    assert_eq!(
        manager
            .alter_catalog("nosuch", props(&[("a", "b")]))
            .expect_err("unknown")
            .to_string(),
        "Unknown catalog 'nosuch'"
    );
    manager
        .alter_catalog("c", props(&[("meta.cache.max-weight", "2GB")]))
        .expect("equal to the entry limit is allowed");
}

#[test]
fn unknown_weight_keys_already_stored_are_tolerated() {
    use metacache_catalog::{CatalogDef, Change, MemoryStore, NodeConfig};
    use std::sync::Arc;
    let store = Arc::new(MemoryStore::new());
    let def = CatalogDef {
        id: 0,
        name: "old".to_owned(),
        comment: String::new(),
        properties: props(&[
            ("type", "hms"),
            ("meta.cache.hive.retired_entry.max-weight", "1GB"),
            ("meta.cache.max-weight", "oops"),
        ]),
        created_at_millis: 1,
        updated_at_millis: 1,
    };
    store.commit(&Change::PutCatalog(def)).expect("stored");
    let manager = manager_on(store, NodeConfig::default());
    let warnings = manager.load_warnings().join("\n");
    assert!(
        warnings.contains(
            "Unknown metadata cache weight property: meta.cache.hive.retired_entry.max-weight"
        ),
        "{warnings}"
    );
    assert!(
        warnings.contains("Invalid cache weight for 'meta.cache.max-weight': oops"),
        "{warnings}"
    );
    let catalog = manager.catalog("old").expect("still comes up");
    assert_eq!(
        catalog.budget().limit(),
        None,
        "the invalid stored limit is ignored"
    );
    // A later statement that does not touch the stored key goes through.
    manager
        .alter_catalog("old", props(&[("meta.cache.hive.file.ttl-second", "60")]))
        .expect("tolerated in later statements");
    // The same key in a statement is refused.
    assert!(
        manager
            .alter_catalog(
                "old",
                props(&[("meta.cache.hive.retired_entry.max-weight", "2GB")])
            )
            .is_err()
    );
}

#[test]
fn errors_never_echo_secret_values() {
    let (manager, _) = manager();
    let long_secret = "s".repeat(70_000);
    let error = create(
        &manager,
        "c",
        &[("type", "hms"), ("password", long_secret.as_str())],
    )
    .expect_err("too long")
    .to_string();
    assert!(!error.contains("sss"), "{error}");
    create(&manager, "c", &[("type", "hms"), ("password", "hunter2")]).expect("created");
    let shown = format!("{:?}", manager.catalog("c").expect("c"));
    assert!(
        !shown.contains("hunter2") && shown.contains("*XXX"),
        "{shown}"
    );
}
