//! The node's allow-lists of locations and hosts (issue 12): a catalog admin cannot point the
//! node outside them, through SQL or HTTP, and a catalog stored before they were narrowed
//! stays (its quotas can change) but reads nothing outside them.

mod common;

use common::*;

#[test]
fn catalogs_outside_the_allow_lists_are_refused_and_change_nothing() {
    let (tmp, data) = data_dir();
    let lake = tmp.path().join("lake");
    std::fs::create_dir_all(lake.join("wh")).expect("lake");
    let lake = lake.to_str().expect("utf-8 path");
    let server = Server::start(
        &data,
        &[
            ("METACACHE_SOURCE_ALLOWED_LOCATIONS", lake),
            (
                "METACACHE_SOURCE_ALLOWED_HOSTS",
                "127.0.0.1, *.corp.example",
            ),
        ],
    );
    let shown = server.query("ADMIN SHOW FRONTEND CONFIG LIKE 'source_allowed_%'");
    assert!(shown.contains("127.0.0.1,*.corp.example"), "{shown}");
    assert_eq!(
        server.fails(r#"CREATE CATALOG etc PROPERTIES ("type" = "hms", "warehouse" = "/etc")"#),
        "ERROR 1105 (HY000) at line 1: Catalog 'etc': 'warehouse' = '/etc' is outside source_allowed_locations, the node's allow-list; the node's operator can add it to the configuration file"
    );
    let climbing = format!("{lake}/wh/../../..");
    let error = server.fails(&format!(
        r#"CREATE CATALOG up PROPERTIES ("type" = "hms", "warehouse" = "{climbing}")"#
    ));
    assert!(error.contains("source_allowed_locations"), "{error}");
    // The cloud's instance-metadata service, and a password that must not be echoed.
    let error = server.fails(
        r#"CREATE CATALOG imds PROPERTIES ("type" = "iceberg", "iceberg.catalog.type" = "rest", "uri" = "http://169.254.169.254/latest")"#,
    );
    assert!(error.contains("source_allowed_hosts"), "{error}");
    let error = server.fails(
        r#"CREATE CATALOG pg PROPERTIES ("type" = "jdbc", "jdbc_url" = "jdbc:postgresql://admin:hunter2@db.example.com:5432/app")"#,
    );
    assert!(error.contains("source_allowed_hosts"), "{error}");
    assert!(!error.contains("hunter2"), "{error}");
    assert_eq!(
        server.query("SHOW CATALOGS").lines().count(),
        2,
        "only the header and internal: nothing was created"
    );
    // Inside the lists: accepted.
    server.query(&format!(
        r#"CREATE CATALOG ok PROPERTIES ("type" = "hms", "warehouse" = "file://{lake}/wh")"#
    ));
    server.query(
        r#"CREATE CATALOG rest PROPERTIES ("type" = "iceberg", "iceberg.catalog.type" = "rest", "uri" = "https://rest.corp.example/api", "warehouse" = "prod")"#,
    );
    // ALTER is checked the same way, and a refused ALTER changes nothing.
    let error = server.fails(r#"ALTER CATALOG ok SET PROPERTIES ("warehouse" = "/var/lib")"#);
    assert!(error.contains("source_allowed_locations"), "{error}");
    let shown = server.query("SHOW CREATE CATALOG ok");
    assert!(shown.contains(&format!("file://{lake}/wh")), "{shown}");
    // HTTP answers the same refusal as 403 JSON.
    let body = br#"{"name": "h", "properties": {"type": "hms", "warehouse": "/root"}}"#;
    let (status, text) = server.http("POST", "/api/v1/catalogs", Some(body), None);
    assert_eq!(status, 403, "{text}");
    let json: serde_json::Value = serde_json::from_str(&text).expect("JSON error");
    assert!(
        json["error"]["message"].as_str().is_some_and(
            |m| m.contains("'warehouse' = '/root' is outside source_allowed_locations")
        ),
        "{text}"
    );
}

#[test]
fn a_catalog_stored_before_the_lists_narrowed_stays_but_reads_nothing_outside() {
    let (tmp, data) = data_dir();
    let old = tmp.path().join("old-lake");
    std::fs::create_dir_all(old.join("sales.db")).expect("warehouse");
    let old = old.to_str().expect("utf-8 path");
    {
        let server = Server::start(&data, &[]);
        server.query(&format!(
            r#"CREATE CATALOG legacy PROPERTIES ("type" = "hms", "warehouse" = "{old}")"#
        ));
        assert!(server.query("SHOW DATABASES FROM legacy").contains("sales"));
    }
    let elsewhere = tmp.path().join("new-lake");
    let server = Server::start(
        &data,
        &[(
            "METACACHE_SOURCE_ALLOWED_LOCATIONS",
            elsewhere.to_str().expect("utf-8 path"),
        )],
    );
    assert!(server.query("SHOW CATALOGS").contains("legacy"), "not lost");
    let error = server.fails("SHOW DATABASES FROM legacy");
    assert!(
        error.contains(&format!(
            "'warehouse' = '{old}' is outside source_allowed_locations"
        )),
        "{error}"
    );
    // Its quotas can still change (the statement sets no location).
    server.query(r#"ALTER CATALOG legacy SET PROPERTIES ("meta.cache.max-weight" = "64MB")"#);
}

#[test]
fn a_bad_allow_list_stops_the_start_with_the_rule_at_fault() {
    let (_tmp, data) = data_dir();
    let stderr = start_refused(
        &data,
        &[("METACACHE_SOURCE_ALLOWED_HOSTS", "10.0.0.0/8, db host")],
    );
    assert!(
        stderr.contains(
            "Invalid value for configuration key 'source_allowed_hosts': 'db host' is not a host"
        ),
        "{stderr}"
    );
}
