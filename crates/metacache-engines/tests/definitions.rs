//! Runtime-defined engines: registration checks and the JSON form remote engines send.

use metacache_engines::{EngineDef, EngineRegistry, Error, registry::validate};

fn remote(json: &str) -> EngineDef {
    serde_json::from_str(json).expect("definition json")
}

const FEATURES: &str = r#"{
    "name": "feature_store",
    "catalog_types": ["feature_store"],
    "entries": [
        {"token": "features", "defaults": {"enable": true, "ttl": {"seconds": 300}, "capacity": 500}},
        {"token": "vectors", "defaults": {"enable": true, "ttl": {"same_as": "features"}, "capacity": 50},
         "expiry": "after_access"}
    ],
    "caches": [
        {"entry_name": "fs-features", "source": {"entry": "features"}},
        {"entry_name": "fs-vectors", "source": {"entry": "vectors"}},
        {"entry_name": "fs-version", "source": {"tokenless": {"ttl_from": "features", "ttl": "never", "capacity": 10}}}
    ],
    "legacy": [{"key": "features.ttl", "entry": "features", "setting": "ttl-second"}]
}"#;

#[test]
fn a_remote_engine_registers_from_json_and_serves_its_catalog_type() {
    let registry = EngineRegistry::builtin();
    let engine = registry.register(remote(FEATURES)).expect("valid");
    assert_eq!(engine.caches.len(), 3);
    let engines: Vec<String> = registry
        .for_catalog_type("feature_store")
        .iter()
        .map(|e| e.name.clone())
        .collect();
    assert_eq!(engines, ["default", "feature_store"]);
    let round_trip: EngineDef =
        serde_json::from_str(&serde_json::to_string(&*engine).expect("json")).expect("back");
    assert_eq!(round_trip.caches, engine.caches);
    assert!(registry.unregister("feature_store").expect("not builtin"));
    assert!(registry.get("feature_store").is_none());
}

#[test]
fn builtin_engines_can_not_be_redefined() {
    let registry = EngineRegistry::builtin();
    let mut hive = remote(FEATURES);
    hive.name = "hive".to_owned();
    assert_eq!(
        registry.register(hive).map(|_| ()),
        Err(Error::BuiltinEngine {
            engine: "hive".to_owned()
        })
    );
    assert!(registry.unregister("iceberg").is_err());
}

#[test]
fn malformed_definitions_are_refused_with_the_reason() {
    let cases: &[(&str, &str, &str)] = &[
        (
            r#""name": "feature_store""#,
            r#""name": "Feature Store""#,
            "lower-case",
        ),
        (
            r#""catalog_types": ["feature_store"]"#,
            r#""catalog_types": []"#,
            "catalog_types is empty",
        ),
        (
            r#""entry_name": "fs-vectors""#,
            r#""entry_name": "fs-features""#,
            "declared twice",
        ),
        (
            r#"{"entry": "vectors"}"#,
            r#"{"entry": "nosuch"}"#,
            "unknown entry 'nosuch'",
        ),
        (
            r#""ttl_from": "features""#,
            r#""ttl_from": "gone""#,
            "unknown entry 'gone'",
        ),
        (
            r#"{"same_as": "features"}"#,
            r#"{"same_as": "vectors"}"#,
            "refers back to itself",
        ),
        (
            r#""key": "features.ttl""#,
            r#""key": "meta.cache.x.y.ttl-second""#,
            "legacy key",
        ),
        (
            r#""entry_name": "fs-version""#,
            r#""entry_name": "fs version""#,
            "without blanks",
        ),
    ];
    for (from, to, reason) in cases {
        let json = FEATURES.replacen(from, to, 1);
        assert_ne!(json, FEATURES, "{from} must be in the sample");
        let error = validate(&remote(&json)).expect_err(reason).to_string();
        assert!(error.contains(reason), "{error} should mention {reason}");
        assert!(
            error.starts_with("Invalid definition of engine '"),
            "{error}"
        );
    }
}
