//! Apache Doris's own regression suites about catalog DDL, restated step by step against the
//! binary (issue 15). Each test names the suite it restates (`regression-test/suites/…` in the
//! Doris repository); where Doris asserts that an error message *contains* a text, so does the
//! test. Steps that need a live Hive Metastore or Elasticsearch only define catalogs here, as
//! in the suites (metacache keeps definitions and quotas without contacting the source).

mod common;

use common::*;

/// The `CreateCatalog` text of `SHOW CREATE CATALOG c`, exactly (through the HTTP SQL API, so no
/// client reformats it).
fn show_create(server: &Server, catalog: &str) -> String {
    let sql = format!("SHOW CREATE CATALOG {catalog}");
    let (status, body) = server.http("POST", "/api/v1/sql", Some(sql.as_bytes()), None);
    assert_eq!(status, 200, "{body}");
    let json: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    let rows = json["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 1, "one row: {body}");
    rows[0][1].as_str().expect("text").to_owned()
}

/// Doris's `test { sql …; exception "…" }`: the statement fails and its message contains
/// `expected`.
fn fails_with(server: &Server, sql: &str, expected: &str) {
    let error = server.fails(sql);
    assert!(
        error.contains(expected),
        "{sql}\n  got: {error}\n  expected: {expected}"
    );
}

/// external_table_p0/test_catalog_ddl.groovy (group p0, external), every step.
#[test]
fn test_catalog_ddl() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    let catalog1 = "test_ddl_ctr1";
    server.query(&format!("drop catalog if exists {catalog1};"));
    server.query(&format!(
        "create catalog if not exists {catalog1} comment 'create_comment' properties(
            \"type\"=\"es\",
            \"hosts\"=\"http://10.10.10.10:8888\",
            \"nodes_discovery\"=\"false\",
            \"enable_keyword_sniff\"=\"true\"
        );"
    ));
    assert!(show_create(&server, catalog1).contains("COMMENT \"create_comment\""));

    // A "comment" property does not change the comment.
    server.query(&format!(
        "ALTER CATALOG {catalog1} SET PROPERTIES (\"comment\" = \"prop_comment\");"
    ));
    assert!(show_create(&server, catalog1).contains("COMMENT \"create_comment\""));

    server.query(&format!(
        "ALTER CATALOG {catalog1} MODIFY COMMENT \"alter_comment\";"
    ));
    assert!(show_create(&server, catalog1).contains("COMMENT \"alter_comment\""));
    server.query(&format!("drop catalog {catalog1}"));

    let weighted = "test_ddl_weighted_meta_cache";
    server.query(&format!("drop catalog if exists {weighted}"));
    server.query(&format!(
        "create catalog {weighted} properties(
            \"type\" = \"hms\",
            \"hive.metastore.uris\" = \"thrift://127.0.0.1:9083\",
            \"meta.cache.max-weight\" = \"128MB\",
            \"meta.cache.hive.file.max-weight\" = \"64MB\"
        )"
    ));
    let text = show_create(&server, weighted);
    assert!(
        text.contains("\"meta.cache.max-weight\" = \"128MB\""),
        "{text}"
    );
    assert!(
        text.contains("\"meta.cache.hive.file.max-weight\" = \"64MB\""),
        "{text}"
    );

    server.query(&format!(
        "alter catalog {weighted} set properties(
            \"meta.cache.max-weight\" = \"96MB\",
            \"meta.cache.hive.file.max-weight\" = \"48MB\"
        )"
    ));
    let text = show_create(&server, weighted);
    assert!(
        text.contains("\"meta.cache.max-weight\" = \"96MB\""),
        "{text}"
    );
    assert!(
        text.contains("\"meta.cache.hive.file.max-weight\" = \"48MB\""),
        "{text}"
    );

    fails_with(
        &server,
        &format!(
            "alter catalog {weighted} set properties(\"meta.cache.default.schema.max-weight\" = \"invalid\")"
        ),
        "Invalid cache weight for 'meta.cache.default.schema.max-weight': invalid",
    );
    fails_with(
        &server,
        &format!(
            "alter catalog {weighted} set properties(\"meta.cache.iceberg.partiton.max-weight\" = \"64MB\")"
        ),
        "Unknown metadata cache weight property: meta.cache.iceberg.partiton.max-weight",
    );
    server.query(&format!("drop catalog {weighted}"));

    fails_with(
        &server,
        &format!(
            "create catalog {weighted} properties(\"type\" = \"hms\", \"hive.metastore.uris\" = \"thrift://127.0.0.1:9083\", \"meta.cache.max-weight\" = \"64MB\", \"meta.cache.hive.file.max-weight\" = \"128MB\")"
        ),
        "meta.cache.hive.file.max-weight can not exceed meta.cache.max-weight",
    );
    fails_with(
        &server,
        &format!(
            "create catalog {weighted} properties(\"type\" = \"hms\", \"hive.metastore.uris\" = \"thrift://127.0.0.1:9083\", \"meta.cache.max-weight\" = \"10%\")"
        ),
        "Invalid cache weight for 'meta.cache.max-weight': 10%",
    );
    fails_with(
        &server,
        &format!(
            "create catalog {weighted} properties(\"type\" = \"es\", \"hosts\" = \"http://10.10.10.10:8888\", \"meta.cache.max-weight\" = \"invalid\")"
        ),
        "Invalid cache weight for 'meta.cache.max-weight': invalid",
    );

    // Newly submitted unknown entries must not silently disable the requested memory limit.
    server.query("drop catalog if exists test_ddl_future_hive_cache");
    fails_with(
        &server,
        "create catalog test_ddl_future_hive_cache properties(\"type\" = \"hms\", \"hive.metastore.uris\" = \"thrift://127.0.0.1:9083\", \"meta.cache.hive.future_entry.max-weight\" = \"64MB\")",
        "Unknown metadata cache weight property: meta.cache.hive.future_entry.max-weight",
    );
    fails_with(
        &server,
        &format!(
            "create catalog {weighted} properties(\"type\" = \"hms\", \"hive.metastore.uris\" = \"thrift://127.0.0.1:9083\", \"meta.cache.iceberg.manifest.max-weight\" = \"invalid\")"
        ),
        "Invalid cache weight for 'meta.cache.iceberg.manifest.max-weight': invalid",
    );

    server.query("drop catalog if exists test_ddl_future_core_cache");
    server.query(
        "create catalog test_ddl_future_core_cache properties(\"type\" = \"es\", \"hosts\" = \"http://10.10.10.10:8888\", \"meta.cache.default.future_entry.max-weight\" = \"64MB\")",
    );
    server.query(
        "alter catalog test_ddl_future_core_cache set properties(\"comment\" = \"updated\")",
    );
    // None of the refused statements left anything behind.
    let names = server.query("SHOW CATALOGS");
    assert!(!names.contains(weighted), "{names}");
    assert!(!names.contains("test_ddl_future_hive_cache"), "{names}");
}

/// The catalog rename steps of external_table_p0/hive/test_hive_other.groovy ("remember last
/// used database after switch / rename catalog") and the SHOW CATALOGS checks of
/// external_table_p0/jdbc/test_mysql_jdbc_catalog.groovy (`result[i][1]` is the name).
#[test]
fn rename_keeps_caches_statistics_and_the_last_database() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    let warehouse = fixture_warehouse();
    server.query(&format!(
        "CREATE CATALOG hive_c COMMENT 'lake' PROPERTIES ('type'='hms', 'warehouse'='{}', 'meta.cache.max-weight'='64MB')",
        warehouse.display()
    ));
    let before = server.query("SHOW CATALOGS LIKE 'hive_c'");
    let id = before
        .lines()
        .nth(1)
        .and_then(|row| row.split('\t').next())
        .expect("a row")
        .to_owned();

    // switch, use, query; then switch away and rename.
    let renamed = server.mysql_stdin(
        &[],
        "switch hive_c; use sales; DESC orders; switch internal; \
         drop catalog if exists hms; alter catalog hive_c rename hms; \
         switch hms; SELECT DATABASE() AS db; SHOW TABLES;",
    );
    assert!(renamed.ok, "{}", renamed.err);
    assert!(
        renamed.out.contains("db\nsales\n"),
        "SWITCH restores the database last used in the catalog, across the rename: {}",
        renamed.out
    );
    assert!(renamed.out.contains("orders"), "{}", renamed.out);

    let catalogs = server.query("SHOW CATALOGS");
    let rows: Vec<Vec<&str>> = catalogs.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(
        rows[0],
        [
            "CatalogId",
            "CatalogName",
            "Type",
            "IsCurrent",
            "CreateTime",
            "LastUpdateTime",
            "Comment"
        ]
    );
    assert!(rows.iter().all(|r| r[1] != "hive_c"), "{catalogs}");
    let hms = rows.iter().find(|r| r[1] == "hms").expect("renamed");
    assert_eq!((hms[0], hms[2], hms[6]), (id.as_str(), "hms", "lake"));

    // The caches, their counters and the catalog budget moved with the name.
    let row = server.cache_row("hms", "schema", "request_count, estimated_size");
    assert_ne!(row[0], "0", "the DESC before the rename is still counted");
    assert_ne!(row[1], "0", "its value is still cached");
    assert_eq!(
        server.query(
            "SELECT count(*) AS n FROM catalog_meta_cache_statistics WHERE catalog_name = 'hive_c'"
        ),
        "n\n0\n"
    );
    let (_, metrics) = server.http("GET", "/metrics", None, None);
    assert!(
        metrics.contains("metacache_catalog_max_weight_bytes{catalog=\"hms\"} 67108864"),
        "{metrics}"
    );

    // Refused renames change nothing.
    server.query("CREATE CATALOG other PROPERTIES ('type'='es')");
    assert!(
        server
            .fails("ALTER CATALOG hms RENAME other")
            .contains("'other'"),
        "an existing name"
    );
    assert!(
        server
            .fails("ALTER CATALOG hms RENAME internal")
            .contains("reserved")
    );
    assert!(
        server
            .fails("ALTER CATALOG nosuch RENAME x")
            .contains("nosuch")
    );

    // Durable: after a restart the catalog is there under its new name, same id and comment.
    drop(server);
    let server = Server::start(&data, &[]);
    let catalogs = server.query("SHOW CATALOGS LIKE 'hms'");
    let row: Vec<&str> = catalogs.lines().nth(1).expect("row").split('\t').collect();
    assert_eq!((row[0], row[1], row[6]), (id.as_str(), "hms", "lake"));
    assert!(
        server
            .query("SHOW CATALOGS LIKE 'hive_c'")
            .lines()
            .nth(1)
            .is_none()
    );
}

/// SHOW CREATE CATALOG in Doris's exact shape, SHOW CATALOG's key/value rows, and REFRESH
/// CATALOG's `invalid_cache` property (Doris's SQL reference for SHOW CREATE CATALOG, SHOW
/// CATALOGS and REFRESH; `CatalogMgr.showCreateCatalog` writes the text).
#[test]
fn show_create_show_catalog_and_refresh_properties_as_doris_writes_them() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    let warehouse = fixture_warehouse();
    server.query(&format!(
        "CREATE CATALOG h COMMENT 'lake' PROPERTIES ('type'='hms', 'warehouse'='{}', 'meta.cache.max-weight'='64MB', 's3.secret_key'='hunter2')",
        warehouse.display()
    ));
    assert_eq!(
        show_create(&server, "h"),
        format!(
            "\nCREATE CATALOG `h`\nCOMMENT \"lake\"\n PROPERTIES (\n\"warehouse\" = \"{}\",\n\"type\" = \"hms\",\n\"s3.secret_key\" = \"*XXX\",\n\"meta.cache.max-weight\" = \"64MB\"\n);",
            warehouse.display()
        )
    );
    server.query("CREATE CATALOG e PROPERTIES ('type'='es', 'hosts'='http://10.10.10.10:8888')");
    assert_eq!(
        show_create(&server, "e"),
        "\nCREATE CATALOG `e` PROPERTIES (\n\"type\" = \"es\",\n\"hosts\" = \"http://10.10.10.10:8888\"\n);"
    );
    assert_eq!(
        server.query("SHOW CATALOG h"),
        format!(
            "Key\tValue\nwarehouse\t{}\ntype\thms\ns3.secret_key\t*XXX\nmeta.cache.max-weight\t64MB\n",
            warehouse.display()
        )
    );
    assert!(server.fails("SHOW CATALOG nosuch").contains("nosuch"));

    // invalid_cache = false keeps the cached values; true (the default) empties the caches.
    server.query("DESC h.sales.orders");
    let cached = |server: &Server| server.cache_row("h", "schema", "estimated_size")[0].clone();
    assert_eq!(cached(&server), "1");
    server.query("REFRESH CATALOG h PROPERTIES(\"invalid_cache\" = \"false\")");
    assert_eq!(cached(&server), "1");
    server.query("REFRESH DATABASE h.sales PROPERTIES(\"invalid_cache\" = \"false\")");
    assert_eq!(cached(&server), "1");
    server.query("REFRESH CATALOG h PROPERTIES(\"invalid_cache\" = \"true\")");
    assert_eq!(cached(&server), "0");
    assert!(
        server
            .fails("REFRESH CATALOG h PROPERTIES(\"invalid_cache\" = \"maybe\")")
            .contains("'invalid_cache' is true or false")
    );

    // Engine-less Doris types have the engine-independent caches only, and say what they lack.
    let rows = server.query(
        "SELECT engine_name, entry_name FROM catalog_meta_cache_statistics WHERE catalog_name = 'e'",
    );
    assert_eq!(rows, "engine_name\tentry_name\ndefault\tschema\n");
    for catalog_type in ["trino-connector", "lakesoul"] {
        server.query(&format!(
            "CREATE CATALOG t_{} PROPERTIES ('type'='{catalog_type}')",
            catalog_type.replace('-', "_")
        ));
    }
    assert!(server.fails("SHOW DATABASES FROM e").contains("type 'es'"));
    assert!(
        server
            .fails("CREATE CATALOG x PROPERTIES ('type'='test')")
            .contains("Unknown catalog type 'test'")
    );
}
