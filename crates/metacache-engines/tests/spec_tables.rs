//! The tables of SPEC §6, checked against the registry: every engine, entry, ENTRY_NAME,
//! default, legacy key and rule. A wrong default in an engine module fails here.

use std::collections::BTreeMap;
use std::time::Duration;

use metacache_cache::Expiry;
use metacache_engines::{EngineRegistry, PropertyMap, Setting, resolve};

const DAY: Option<u64> = Some(86_400);

/// One row of the §6 table.
type SpecRow<'a> = (
    &'a str,
    &'a str,
    Option<&'a str>,
    &'a str,
    bool,
    Option<u64>,
    u64,
    bool,
);
/// One legacy-key case.
type LegacyCase<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str, &'a str, u64);

/// (catalog type, engine, token, ENTRY_NAME, enable, TTL seconds (None = never), capacity,
/// expire after access)
const SPEC: &[SpecRow] = &[
    (
        "hms",
        "default",
        Some("schema"),
        "schema",
        true,
        DAY,
        10_000,
        true,
    ),
    (
        "hms",
        "hive",
        Some("table"),
        "hive-table",
        true,
        DAY,
        10_000,
        false,
    ),
    (
        "hms",
        "hive",
        Some("partition_names"),
        "hive-partition-names",
        true,
        DAY,
        10_000,
        false,
    ),
    (
        "hms",
        "hive",
        Some("partition"),
        "hive-partition",
        true,
        DAY,
        100_000,
        false,
    ),
    (
        "hms",
        "hive",
        Some("column_stats"),
        "hive-column-stats",
        true,
        DAY,
        10_000,
        false,
    ),
    (
        "hms",
        "hive",
        Some("file"),
        "hive-file",
        true,
        DAY,
        10_000,
        false,
    ),
    (
        "hms",
        "hive",
        Some("partition_view"),
        "hive-partition-view",
        true,
        DAY,
        1_000,
        false,
    ),
    (
        "hms",
        "hudi",
        Some("table"),
        "hive-table",
        true,
        DAY,
        10_000,
        false,
    ),
    (
        "hms",
        "hudi",
        Some("partition_names"),
        "hive-partition-names",
        true,
        DAY,
        10_000,
        false,
    ),
    (
        "hms",
        "hudi",
        Some("partition"),
        "hive-partition",
        true,
        DAY,
        100_000,
        false,
    ),
    (
        "hms",
        "hudi",
        Some("column_stats"),
        "hive-column-stats",
        true,
        DAY,
        10_000,
        false,
    ),
    (
        "iceberg",
        "iceberg",
        Some("table"),
        "iceberg-table",
        true,
        DAY,
        1_000,
        false,
    ),
    (
        "iceberg",
        "iceberg",
        Some("partition"),
        "iceberg-partition",
        true,
        DAY,
        1_000,
        false,
    ),
    (
        "iceberg",
        "iceberg",
        Some("manifest"),
        "iceberg-manifest",
        false,
        None,
        100_000,
        false,
    ),
    (
        "iceberg",
        "iceberg",
        Some("partition_view"),
        "iceberg.mvcc-partition-view",
        true,
        DAY,
        1_000,
        false,
    ),
    (
        "iceberg",
        "iceberg",
        Some("partition_view"),
        "iceberg.list-partitions-view",
        true,
        DAY,
        1_000,
        false,
    ),
    (
        "iceberg",
        "iceberg",
        None,
        "iceberg-latest-snapshot",
        true,
        DAY,
        1_000,
        false,
    ),
    (
        "iceberg",
        "iceberg",
        None,
        "iceberg-format",
        true,
        DAY,
        1_000,
        false,
    ),
    (
        "iceberg",
        "iceberg",
        None,
        "iceberg-equality-delete-field-ids",
        true,
        DAY,
        1_000,
        false,
    ),
    (
        "paimon",
        "paimon",
        Some("partition_view"),
        "paimon.partition-view",
        true,
        DAY,
        1_000,
        false,
    ),
    (
        "paimon",
        "paimon",
        None,
        "paimon-schema-at",
        true,
        None,
        10_000,
        false,
    ),
    (
        "paimon",
        "paimon",
        None,
        "paimon-latest-snapshot",
        true,
        DAY,
        1_000,
        false,
    ),
    (
        "max_compute",
        "max_compute",
        Some("partition"),
        "max-compute-partition",
        true,
        Some(600),
        10_000,
        false,
    ),
    (
        "jdbc",
        "adbc",
        Some("metadata"),
        "adbc-namespaces",
        true,
        Some(600),
        1_000,
        false,
    ),
    (
        "jdbc",
        "adbc",
        Some("metadata"),
        "adbc-table-names",
        true,
        Some(600),
        1_000,
        false,
    ),
    (
        "jdbc",
        "adbc",
        Some("metadata"),
        "adbc-table-schema",
        true,
        Some(600),
        1_000,
        false,
    ),
    (
        "doris",
        "doris",
        Some("schema"),
        "doris-schema",
        true,
        DAY,
        10_000,
        false,
    ),
    (
        "doris",
        "doris",
        Some("backends"),
        "doris-backends",
        true,
        DAY,
        10_000,
        false,
    ),
    (
        "lance",
        "lance",
        Some("table_access"),
        "lance-table-access",
        true,
        Some(60),
        10_000,
        false,
    ),
];

fn props(pairs: &[(&str, &str)]) -> PropertyMap {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// (engine, ENTRY_NAME) → resolved config, for a catalog of `catalog_type`.
fn resolved(
    registry: &EngineRegistry,
    catalog_type: &str,
    properties: &PropertyMap,
) -> BTreeMap<(String, String), metacache_engines::ResolvedCache> {
    registry
        .for_catalog_type(catalog_type)
        .iter()
        .flat_map(|engine| {
            resolve(engine, properties)
                .into_iter()
                .map(|c| ((engine.name.clone(), c.def.entry_name.clone()), c))
        })
        .collect()
}

#[test]
fn every_default_of_the_spec_is_what_the_registry_resolves() {
    let registry = EngineRegistry::builtin();
    for &(catalog_type, engine, token, name, enable, ttl, capacity, after_access) in SPEC {
        let caches = resolved(&registry, catalog_type, &PropertyMap::new());
        let cache = caches
            .get(&(engine.to_owned(), name.to_owned()))
            .unwrap_or_else(|| panic!("{catalog_type} catalogs have {engine}/{name}"));
        let what = format!("{engine}/{name}");
        assert_eq!(cache.def.token(), token, "{what} token");
        assert_eq!(cache.config.enabled, enable, "{what} enable");
        assert_eq!(cache.config.ttl, ttl.map(Duration::from_secs), "{what} ttl");
        assert_eq!(cache.config.capacity, capacity, "{what} capacity");
        let expiry = if after_access {
            Expiry::AfterAccess
        } else {
            Expiry::AfterWrite
        };
        assert_eq!(cache.config.expiry, expiry, "{what} expiry");
        assert_eq!(&*cache.config.entry_name, name);
    }
}

#[test]
fn the_registry_declares_nothing_the_spec_does_not_list() {
    let registry = EngineRegistry::builtin();
    let mut declared: Vec<(String, String)> = registry
        .all()
        .iter()
        .flat_map(|e| {
            e.caches
                .iter()
                .map(|c| (e.name.clone(), c.entry_name.clone()))
        })
        .collect();
    // Created only for REST catalogs with vended credentials, so not in the default table.
    declared.retain(|(_, name)| name != "iceberg-comment");
    let mut listed: Vec<(String, String)> = SPEC
        .iter()
        .map(|r| (r.1.to_owned(), r.3.to_owned()))
        .collect();
    declared.sort();
    listed.sort();
    listed.dedup();
    assert_eq!(declared, listed);
}

#[test]
fn catalog_types_choose_the_engines() {
    let registry = EngineRegistry::builtin();
    let names = |t: &str| -> Vec<String> {
        registry
            .for_catalog_type(t)
            .iter()
            .map(|e| e.name.clone())
            .collect()
    };
    assert_eq!(names("hms"), ["default", "hive", "hudi", "iceberg"]);
    assert_eq!(names("HIVE"), ["default", "hive", "hudi", "iceberg"]);
    assert_eq!(names("iceberg"), ["default", "iceberg"]);
    assert_eq!(names("paimon"), ["default", "paimon"]);
    assert_eq!(names("jdbc"), ["default", "adbc"]);
    assert_eq!(names("lance"), ["default", "lance"]);
    assert_eq!(names("hudi"), ["default", "hudi"]);
    assert_eq!(names("nosuch"), ["default"]);
}

/// (catalog type, properties, engine, ENTRY_NAME, expected TTL seconds)
const LEGACY: &[LegacyCase] = &[
    (
        "iceberg",
        &[("schema.cache.ttl-second", "30")],
        "default",
        "schema",
        30,
    ),
    (
        "hms",
        &[("schema.cache.ttl-second", "30")],
        "default",
        "schema",
        30,
    ),
    (
        "hms",
        &[("schema.cache.ttl-second", "30")],
        "hive",
        "hive-table",
        30,
    ),
    (
        "hms",
        &[("schema.cache.ttl-second", "30")],
        "hudi",
        "hive-table",
        30,
    ),
    (
        "hms",
        &[("partition.cache.ttl-second", "40")],
        "hive",
        "hive-partition-names",
        40,
    ),
    (
        "hms",
        &[("partition.cache.ttl-second", "40")],
        "hudi",
        "hive-partition-names",
        40,
    ),
    (
        "hms",
        &[("file.meta.cache.ttl-second", "50")],
        "hive",
        "hive-file",
        50,
    ),
    (
        "lance",
        &[("lance.table_access_cache_ttl_seconds", "5")],
        "lance",
        "lance-table-access",
        5,
    ),
    (
        "lance",
        &[("lance.table_access_cache_ttl_seconds", "0")],
        "lance",
        "lance-table-access",
        0,
    ),
    // The unified key wins over the legacy one.
    (
        "hms",
        &[
            ("file.meta.cache.ttl-second", "50"),
            ("meta.cache.hive.file.ttl-second", "7"),
        ],
        "hive",
        "hive-file",
        7,
    ),
    // -1 means the default, which the legacy key then gives.
    (
        "hms",
        &[
            ("file.meta.cache.ttl-second", "50"),
            ("meta.cache.hive.file.ttl-second", "-1"),
        ],
        "hive",
        "hive-file",
        50,
    ),
    // Hudi caches read the hive keys.
    (
        "hms",
        &[("meta.cache.hive.table.ttl-second", "9")],
        "hudi",
        "hive-table",
        9,
    ),
    // iceberg.partition follows iceberg.table unless set.
    (
        "iceberg",
        &[("meta.cache.iceberg.table.ttl-second", "11")],
        "iceberg",
        "iceberg-partition",
        11,
    ),
    (
        "iceberg",
        &[("meta.cache.iceberg.table.ttl-second", "11")],
        "iceberg",
        "iceberg-latest-snapshot",
        11,
    ),
    (
        "iceberg",
        &[("meta.cache.iceberg.table.ttl-second", "11")],
        "iceberg",
        "iceberg-equality-delete-field-ids",
        11,
    ),
    (
        "iceberg",
        &[
            ("meta.cache.iceberg.table.ttl-second", "11"),
            ("meta.cache.iceberg.partition.ttl-second", "12"),
        ],
        "iceberg",
        "iceberg-partition",
        12,
    ),
    (
        "paimon",
        &[("meta.cache.paimon.table.ttl-second", "13")],
        "paimon",
        "paimon-latest-snapshot",
        13,
    ),
];

#[test]
fn legacy_keys_and_ttl_references_map_as_documented() {
    let registry = EngineRegistry::builtin();
    for &(catalog_type, pairs, engine, name, ttl) in LEGACY {
        let caches = resolved(&registry, catalog_type, &props(pairs));
        let cache = &caches[&(engine.to_owned(), name.to_owned())];
        assert_eq!(
            cache.config.ttl,
            Some(Duration::from_secs(ttl)),
            "{pairs:?} → {engine}/{name}"
        );
    }
}

#[test]
fn legacy_keys_of_other_engines_do_not_apply() {
    let registry = EngineRegistry::builtin();
    // partition.cache.ttl-second is a hive key: an iceberg catalog ignores it.
    let caches = resolved(
        &registry,
        "iceberg",
        &props(&[("partition.cache.ttl-second", "1")]),
    );
    assert!(
        caches
            .values()
            .all(|c| c.config.ttl != Some(Duration::from_secs(1)))
    );
}

#[test]
fn settings_override_defaults_and_disable() {
    let registry = EngineRegistry::builtin();
    let caches = resolved(
        &registry,
        "iceberg",
        &props(&[
            ("meta.cache.iceberg.manifest.enable", "TRUE"),
            ("meta.cache.iceberg.manifest.capacity", "5"),
            ("meta.cache.iceberg.partition_view.capacity", "0"),
        ]),
    );
    let manifest = &caches[&("iceberg".to_owned(), "iceberg-manifest".to_owned())];
    assert!(manifest.config.enabled && manifest.config.effectively_enabled());
    assert_eq!(manifest.config.capacity, 5);
    for view in [
        "iceberg.mvcc-partition-view",
        "iceberg.list-partitions-view",
    ] {
        let cache = &caches[&("iceberg".to_owned(), view.to_owned())];
        assert!(
            !cache.config.effectively_enabled(),
            "{view} shares the token's capacity 0"
        );
    }
}

#[test]
fn iceberg_rules_leave_caches_out() {
    let registry = EngineRegistry::builtin();
    let names = |pairs: &[(&str, &str)]| -> Vec<String> {
        let mut names: Vec<String> = resolved(&registry, "iceberg", &props(pairs))
            .into_keys()
            .filter(|(engine, _)| engine == "iceberg")
            .map(|(_, name)| name)
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        names(&[("iceberg.rest.session", "user")]),
        ["iceberg-equality-delete-field-ids", "iceberg-manifest"]
    );
    let vended = [
        ("iceberg.catalog.type", "rest"),
        ("iceberg.rest.vended-credentials-enabled", "true"),
    ];
    let with_vended = names(&vended);
    assert!(with_vended.contains(&"iceberg-comment".to_owned()));
    assert!(!with_vended.contains(&"iceberg-table".to_owned()));
    let plain = names(&[]);
    assert!(!plain.contains(&"iceberg-comment".to_owned()));
    assert!(plain.contains(&"iceberg-table".to_owned()));
}

#[test]
fn which_settings_each_token_accepts() {
    let registry = EngineRegistry::builtin();
    let paimon = registry.get("paimon").expect("paimon");
    assert!(paimon.accepts("table", Setting::TtlSecond));
    assert!(
        !paimon.accepts("table", Setting::MaxWeight),
        "no cache of its own"
    );
    assert!(paimon.accepts("partition_view", Setting::MaxWeight));
    let hive = registry.get("hive").expect("hive");
    assert!(!hive.accepts("nosuch", Setting::Enable));
    for setting in Setting::ALL {
        assert!(hive.accepts("file", setting));
    }
    let configured: Vec<String> = registry
        .configured_by("hive")
        .iter()
        .map(|e| e.name.clone())
        .collect();
    assert_eq!(configured, ["hive", "hudi"]);
}

#[test]
fn auto_refresh_is_on_only_where_the_definition_turns_it_on() {
    let registry = EngineRegistry::builtin();
    let defaults = resolved(&registry, "hms", &props(&[]));
    let on: Vec<&(String, String)> = defaults
        .iter()
        .filter(|(_, c)| c.config.auto_refresh)
        .map(|(k, _)| k)
        .collect();
    assert_eq!(
        on,
        [&("iceberg".to_owned(), "iceberg-table".to_owned())],
        "only the Iceberg table, whose change check is one catalog lookup"
    );
    let set = resolved(
        &registry,
        "hms",
        &props(&[
            ("meta.cache.iceberg.table.auto-refresh", "false"),
            ("meta.cache.hive.file.auto-refresh", "TRUE"),
        ]),
    );
    assert!(
        !set[&("iceberg".to_owned(), "iceberg-table".to_owned())]
            .config
            .auto_refresh
    );
    assert!(
        set[&("hive".to_owned(), "hive-file".to_owned())]
            .config
            .auto_refresh
    );
    // hudi is configured by meta.cache.hive.*: its caches follow the hive keys.
    let hudi = resolved(
        &registry,
        "hms",
        &props(&[("meta.cache.hive.table.auto-refresh", "true")]),
    );
    assert!(
        hudi[&("hudi".to_owned(), "hive-table".to_owned())]
            .config
            .auto_refresh
    );
    // A token without a cache of its own configures its tokenless followers.
    let paimon = resolved(&registry, "paimon", &props(&[]));
    let latest = ("paimon".to_owned(), "paimon-latest-snapshot".to_owned());
    assert!(paimon[&latest].config.auto_refresh);
    let off = resolved(
        &registry,
        "paimon",
        &props(&[("meta.cache.paimon.table.auto-refresh", "false")]),
    );
    assert!(!off[&latest].config.auto_refresh);
    let p = registry.get("paimon").expect("paimon");
    assert!(p.accepts("table", Setting::AutoRefresh));
    assert!(!p.accepts("table", Setting::Capacity));
}

#[test]
fn the_advisor_is_on_unless_an_entry_turns_it_off() {
    let registry = EngineRegistry::builtin();
    let defaults = resolved(&registry, "hms", &props(&[]));
    assert!(
        defaults.values().all(|c| c.config.advisor.is_some()),
        "on for every cache by default"
    );
    let off = resolved(
        &registry,
        "hms",
        &props(&[("meta.cache.hive.file.advisor", "False")]),
    );
    for ((engine, entry), cache) in &off {
        let expected_off = entry == "hive-file";
        assert_eq!(
            cache.config.advisor.is_none(),
            expected_off,
            "{engine} {entry}"
        );
    }
    // hudi is configured by meta.cache.hive.*: its caches follow the hive keys.
    let hudi = resolved(
        &registry,
        "hms",
        &props(&[("meta.cache.hive.table.advisor", "false")]),
    );
    assert!(
        hudi[&("hudi".to_owned(), "hive-table".to_owned())]
            .config
            .advisor
            .is_none()
    );
    // A token without a cache of its own configures its tokenless followers.
    let latest = ("paimon".to_owned(), "paimon-latest-snapshot".to_owned());
    assert!(
        resolved(&registry, "paimon", &props(&[]))[&latest]
            .config
            .advisor
            .is_some()
    );
    let paimon = resolved(
        &registry,
        "paimon",
        &props(&[("meta.cache.paimon.table.advisor", "false")]),
    );
    assert!(paimon[&latest].config.advisor.is_none());
    let p = registry.get("paimon").expect("paimon");
    assert!(p.accepts("table", Setting::Advisor));
}
