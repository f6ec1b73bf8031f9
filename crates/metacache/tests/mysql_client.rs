//! Every statement through the real `mysql` client against the real binary, with the spec's
//! messages as MySQL error packets.

mod common;

use common::*;

#[test]
fn a_newcomer_s_session() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    assert_eq!(
        server.query("SELECT @@version_comment LIMIT 1"),
        format!(
            "@@version_comment\nmetacache {}\n",
            env!("CARGO_PKG_VERSION")
        )
    );
    server.query(
        "CREATE CATALOG hive_prod COMMENT 'production metastore' PROPERTIES (\
         'type' = 'hms', 'hive.metastore.uris' = 'thrift://127.0.0.1:9083', 'password' = 'hunter2', 'meta.cache.max-weight' = '4GB')",
    );
    server.query("ALTER CATALOG hive_prod SET PROPERTIES ('meta.cache.hive.file.max-weight' = '1GB', 'meta.cache.hive.file.ttl-second' = '600')");
    let rows = server.query(
        "SELECT engine_name, entry_name, ttl_second, max_weight FROM information_schema.catalog_meta_cache_statistics \
         WHERE catalog_name = 'hive_prod' AND engine_name = 'hive' AND entry_name IN ('hive-file', 'hive-table') ORDER BY entry_name",
    );
    assert_eq!(
        rows,
        "engine_name\tentry_name\tttl_second\tmax_weight\nhive\thive-file\t600\t1073741824\nhive\thive-table\t86400\t4294967296\n"
    );
    let catalogs = server.query("SHOW CATALOGS");
    assert!(
        catalogs.starts_with(
            "CatalogId\tCatalogName\tType\tIsCurrent\tCreateTime\tLastUpdateTime\tComment\n"
        ),
        "{catalogs}"
    );
    assert!(catalogs.contains("\thive_prod\thms\t\t"), "{catalogs}");
    let create = server.query("SHOW CREATE CATALOG hive_prod");
    assert!(
        create.contains("\"password\" = \"*XXX\"") && !create.contains("hunter2"),
        "{create}"
    );
    assert!(
        !server.log_text().contains("hunter2"),
        "secrets never reach the log"
    );
}

/// (statement, the client's error line)
const ERRORS: &[(&str, &str)] = &[
    (
        "CREATE CATALOG c PROPERTIES ('type'='hms', 'meta.cache.max-weight'='1.5GB')",
        "ERROR 1105 (HY000) at line 1: Invalid cache weight for 'meta.cache.max-weight': 1.5GB",
    ),
    (
        "CREATE CATALOG c PROPERTIES ('type'='hms', 'meta.cache.max-weight'='0')",
        "ERROR 1105 (HY000) at line 1: meta.cache.max-weight must be positive",
    ),
    (
        "CREATE CATALOG c PROPERTIES ('type'='hms', 'meta.cache.hive.file.max-weight'='0')",
        "ERROR 1105 (HY000) at line 1: meta.cache.hive.file.max-weight must be positive",
    ),
    (
        "CREATE CATALOG c PROPERTIES ('type'='hms', 'meta.cache.max-weight'='1GB', 'meta.cache.hive.file.max-weight'='2GB')",
        "ERROR 1105 (HY000) at line 1: meta.cache.hive.file.max-weight can not exceed meta.cache.max-weight",
    ),
    (
        "CREATE CATALOG c PROPERTIES ('type'='hms', 'meta.cache.hive.foo.max-weight'='1GB')",
        "ERROR 1105 (HY000) at line 1: Unknown metadata cache weight property: meta.cache.hive.foo.max-weight",
    ),
    (
        "CREATE CATALOG c PROPERTIES ('meta.cache.max-weight'='1GB')",
        "ERROR 1105 (HY000) at line 1: Missing 'type' property: CREATE CATALOG needs PROPERTIES (\"type\" = \"<type>\"), one of adbc, doris, es, hive, hms, hudi, iceberg, jdbc, lakesoul, lance, max_compute, paimon, trino-connector",
    ),
    (
        "CREATE CATALOG existing PROPERTIES ('type'='hms')",
        "ERROR 1007 (HY000) at line 1: Catalog 'existing' already exists",
    ),
    (
        "ALTER CATALOG nosuch SET PROPERTIES ('a'='b')",
        "ERROR 1049 (42000) at line 1: Unknown catalog 'nosuch'",
    ),
    (
        "ALTER CATALOG existing SET PROPERTIES ('type'='iceberg')",
        "ERROR 1105 (HY000) at line 1: Can not change the type of catalog 'existing' from 'hms' to 'iceberg'",
    ),
    (
        "DROP CATALOG nosuch",
        "ERROR 1049 (42000) at line 1: Unknown catalog 'nosuch'",
    ),
    (
        "REFRESH CATALOG nosuch",
        "ERROR 1049 (42000) at line 1: Unknown catalog 'nosuch'",
    ),
    (
        "SHOW CREATE CATALOG nosuch",
        "ERROR 1049 (42000) at line 1: Unknown catalog 'nosuch'",
    ),
    (
        "ADMIN SET FRONTEND CONFIG ('external_meta_cache_max_weight' = '0%')",
        "ERROR 1105 (HY000) at line 1: Invalid cache weight for 'external_meta_cache_max_weight': 0%",
    ),
    (
        "ADMIN SET FRONTEND CONFIG ('data_dir' = '/tmp')",
        "ERROR 1238 (HY000) at line 1: Configuration key 'data_dir' can not be changed at runtime; set it in the config file and restart",
    ),
    (
        "ADMIN SET FRONTEND CONFIG ('nosuch' = '1')",
        "ERROR 1193 (HY000) at line 1: Unknown configuration key 'nosuch'",
    ),
    (
        "CREATE TABLE t (a INT)",
        "ERROR 1064 (42000) at line 1: Syntax error: Expected: CATALOG, found: TABLE at Line: 1, Column: 8",
    ),
    (
        "ALTER CATALOG existing PROPERTIES ('a'='b')",
        "ERROR 1064 (42000) at line 1: Syntax error: Expected: SET PROPERTIES, MODIFY COMMENT or RENAME, found: PROPERTIES at Line: 1, Column: 24",
    ),
    (
        "SELECT nosuch FROM catalog_meta_cache_statistics",
        "ERROR 1054 (42S22) at line 1: Unknown column 'nosuch' in 'field list'",
    ),
    (
        "SELECT * FROM nosuch",
        "ERROR 1146 (42S02) at line 1: Table 'information_schema.nosuch' doesn't exist",
    ),
    (
        "USE nosuch",
        "ERROR 1049 (42000) at line 1: Unknown database 'nosuch'",
    ),
];

#[test]
fn every_error_path_answers_a_mysql_error_with_our_message() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    server
        .query("CREATE CATALOG existing PROPERTIES ('type'='hms', 'meta.cache.max-weight'='4GB')");
    for (sql, expected) in ERRORS {
        assert_eq!(server.fails(sql), *expected, "{sql}");
    }
    assert_eq!(
        server.query("SELECT count(*) AS n FROM catalogs"),
        "n\n1\n",
        "failed statements changed nothing"
    );
}

#[test]
fn every_statement_kind() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    server.query("CREATE CATALOG IF NOT EXISTS c PROPERTIES (\"type\" = \"iceberg\")");
    server.query("CREATE CATALOG IF NOT EXISTS c PROPERTIES (\"type\" = \"hms\")");
    assert_eq!(
        server.query("SELECT catalog_type FROM information_schema.catalogs"),
        "catalog_type\niceberg\n"
    );
    server.query("REFRESH CATALOG c");
    server.query("REFRESH DATABASE c.db");
    server.query("REFRESH TABLE c.db.t");
    server.query("SWITCH c; REFRESH DATABASE db; USE c.db; REFRESH TABLE t");
    server.query("ADMIN SET FRONTEND CONFIG (\"external_meta_cache_max_weight\" = \"1GB\")");
    assert_eq!(
        server.query("ADMIN SHOW FRONTEND CONFIG LIKE 'external_meta_cache_max_weight%'"),
        "Key\tValue\tType\tIsMutable\tMasterOnly\tComment\n\
         external_meta_cache_max_weight\t1GB\tsize|percent\ttrue\tfalse\tnode-wide limit of all managed metadata caches: 0 (none), a size like 8GB, or a percentage of the node memory budget\n\
         external_meta_cache_max_weight_bytes\t1073741824\tbytes\tfalse\tfalse\tthe node limit in effect, in bytes; 0 means no node quota\n"
    );
    assert_eq!(
        server.query("SELECT DISTINCT max_weight FROM catalog_meta_cache_statistics"),
        "max_weight\n1073741824\n"
    );
    assert_eq!(
        server.query("SHOW DATABASES"),
        "Database\ninformation_schema\n"
    );
    let tables = server.query("USE information_schema; SHOW TABLES");
    assert!(tables.contains("catalog_meta_cache_statistics"), "{tables}");
    assert!(
        server
            .query("DESC information_schema.catalog_meta_cache_statistics")
            .contains("LAST_WEIGHT_REJECT_REASON\tvarchar(65533)\tYes")
    );
    assert!(
        server
            .query("SHOW VARIABLES LIKE 'version%'")
            .contains("version_comment\tmetacache")
    );
    assert_eq!(
        server.query("SELECT 1 AS one; SET NAMES utf8mb4; SELECT DATABASE() AS db"),
        "one\n1\ndb\nNULL\n",
        "no database selected: NULL, as in MySQL"
    );
    let headers = server.query("SELECT * FROM catalog_meta_cache_statistics LIMIT 1");
    let first = headers.lines().next().unwrap_or_default();
    assert_eq!(first.split('\t').count(), 28);
    assert!(
        first.starts_with("FE_HOST\tCATALOG_NAME\tENGINE_NAME\tENTRY_NAME\tEFFECTIVE_ENABLED"),
        "{first}"
    );
    server.query("DROP CATALOG c");
    server.query("DROP CATALOG IF EXISTS c");
    assert_eq!(
        server.query("SELECT count(*) AS n FROM catalog_meta_cache_statistics"),
        "n\n0\n"
    );
}

#[test]
fn the_troubleshooting_queries_run_as_printed() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    server
        .query("CREATE CATALOG hive_prod PROPERTIES ('type'='hms', 'meta.cache.max-weight'='4GB')");
    server.query("ADMIN SET FRONTEND CONFIG ('external_meta_cache_max_weight' = '8GB')");
    let page = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/troubleshooting.md"
    ))
    .expect("the page");
    let blocks: Vec<&str> = page
        .split("```sql\n")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .collect();
    assert!(blocks.len() >= 6, "{} blocks", blocks.len());
    for sql in blocks {
        // `query` fails the test if the statement fails; an empty result is fine.
        server.query(sql);
    }
    let catalogs = server.query(
        "SELECT fe_host, catalog_name, SUM(estimated_weight) AS estimated_weight, SUM(weight_reject_count) AS weight_reject_count \
         FROM information_schema.catalog_meta_cache_statistics WHERE max_weight >= 0 GROUP BY fe_host, catalog_name ORDER BY estimated_weight DESC",
    );
    assert!(catalogs.contains("\thive_prod\t0\t0"), "{catalogs}");
}

#[test]
fn users_and_passwords_from_the_config() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[("METACACHE_AUTH_USERS", "admin:s3cret")]);
    let denied = server.mysql_as(&["-u", "admin"], "SELECT 1");
    // opensrv-mysql answers a failed login with ER_ACCESS_DENIED_NO_PASSWORD_ERROR (1698).
    assert!(
        !denied.ok && denied.err.contains("Authenticate failed"),
        "{}",
        denied.err
    );
    let wrong = server.mysql_as(&["-u", "admin", "-pwrong"], "SELECT 1");
    assert!(
        !wrong.ok && wrong.err.contains("Authenticate failed"),
        "{}",
        wrong.err
    );
    let stranger = server.mysql_as(&["-u", "root"], "SELECT 1");
    assert!(!stranger.ok, "unknown users are refused");
    let ok = server.mysql_as(&["-u", "admin", "-ps3cret"], "SELECT 1 AS one");
    assert!(ok.ok, "{}", ok.err);
    assert_eq!(ok.out, "one\n1\n");
    let config = server.mysql_as(
        &["-u", "admin", "-ps3cret"],
        "ADMIN SHOW FRONTEND CONFIG LIKE 'auth_users'",
    );
    assert!(config.out.contains("auth_users\t*XXX"), "{}", config.out);
}

#[test]
fn many_clients_at_once() {
    let (_tmp, data) = data_dir();
    let server = std::sync::Arc::new(Server::start(&data, &[]));
    server.query("CREATE CATALOG c PROPERTIES ('type'='hms')");
    let clients: Vec<_> = (0..32)
        .map(|i| {
            let server = std::sync::Arc::clone(&server);
            std::thread::spawn(move || {
                if i % 4 == 0 {
                    server.query(&format!("ALTER CATALOG c SET PROPERTIES ('meta.cache.hive.file.ttl-second' = '{}')", 60 + i));
                }
                server.query("SELECT count(*) AS n FROM catalog_meta_cache_statistics WHERE catalog_name = 'c'")
            })
        })
        .collect();
    for client in clients {
        assert_eq!(client.join().expect("client"), "n\n19\n");
    }
}
