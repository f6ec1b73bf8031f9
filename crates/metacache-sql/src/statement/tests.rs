use super::*;

fn ok(sql: &str) -> Statement {
    parse(sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn err(sql: &str) -> String {
    parse(sql).expect_err(sql).to_string()
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn create_catalog_in_every_quoting() {
    let expected = Statement::CreateCatalog {
        name: "hive_prod".into(),
        if_not_exists: true,
        comment: "prod metastore".into(),
        properties: pairs(&[("type", "hms"), ("meta.cache.max-weight", "4GB")]),
    };
    for sql in [
        "CREATE CATALOG IF NOT EXISTS hive_prod COMMENT 'prod metastore' PROPERTIES (\"type\" = \"hms\", \"meta.cache.max-weight\" = \"4GB\")",
        "create catalog if not exists `hive_prod` comment \"prod metastore\" properties ('type'='hms','meta.cache.max-weight'='4GB');",
        "  Create Catalog If Not Exists hive_prod Comment 'prod metastore'\n PROPERTIES (\n  'type' = 'hms',\n  'meta.cache.max-weight' = '4GB'\n) ;; ",
    ] {
        assert_eq!(ok(sql), expected, "{sql}");
    }
    assert_eq!(
        ok("CREATE CATALOG c PROPERTIES ('capacity' = 10)"),
        Statement::CreateCatalog {
            name: "c".into(),
            if_not_exists: false,
            comment: String::new(),
            properties: pairs(&[("capacity", "10")]),
        }
    );
}

#[test]
fn the_other_catalog_statements() {
    assert_eq!(
        ok("ALTER CATALOG `c` SET PROPERTIES (\"meta.cache.hive.file.ttl-second\" = \"60\")"),
        Statement::AlterCatalog {
            name: "c".into(),
            properties: pairs(&[("meta.cache.hive.file.ttl-second", "60")]),
        }
    );
    assert_eq!(
        ok("drop catalog if exists c"),
        Statement::DropCatalog {
            name: "c".into(),
            if_exists: true
        }
    );
    assert_eq!(
        ok("SHOW CATALOGS LIKE 'hive%'"),
        Statement::ShowCatalogs {
            like: Some("hive%".into())
        }
    );
    assert_eq!(
        ok("show create catalog c"),
        Statement::ShowCreateCatalog { name: "c".into() }
    );
    assert_eq!(
        ok("REFRESH CATALOG c"),
        Statement::RefreshCatalog {
            name: "c".into(),
            invalid_cache: true
        }
    );
    assert_eq!(
        ok("REFRESH CATALOG c PROPERTIES(\"invalid_cache\" = \"false\");"),
        Statement::RefreshCatalog {
            name: "c".into(),
            invalid_cache: false
        }
    );
    assert_eq!(
        ok("REFRESH DATABASE c.db"),
        Statement::RefreshDatabase {
            catalog: Some("c".into()),
            database: "db".into(),
            invalid_cache: true
        }
    );
    assert_eq!(
        ok("REFRESH DATABASE db PROPERTIES ('invalid_cache' = 'TRUE')"),
        Statement::RefreshDatabase {
            catalog: None,
            database: "db".into(),
            invalid_cache: true
        }
    );
    assert_eq!(
        ok("ALTER CATALOG c MODIFY COMMENT \"alter_comment\";"),
        Statement::AlterCatalogComment {
            name: "c".into(),
            comment: "alter_comment".into()
        }
    );
    assert_eq!(
        ok("alter catalog c rename `hms`"),
        Statement::RenameCatalog {
            name: "c".into(),
            new_name: "hms".into()
        }
    );
    assert_eq!(
        ok("SHOW CATALOG c"),
        Statement::ShowCatalog { name: "c".into() }
    );
    for bad in [
        "REFRESH CATALOG c PROPERTIES ('invalid_cache' = 'yes')",
        "REFRESH CATALOG c PROPERTIES ('invalidate' = 'true')",
        "ALTER CATALOG c MODIFY PROPERTIES ('a' = 'b')",
        "ALTER CATALOG c RENAME",
        "ALTER CATALOG c DROP",
    ] {
        assert!(parse(bad).is_err(), "{bad}");
    }
    assert_eq!(
        ok("REFRESH TABLE c.db.t"),
        Statement::RefreshTable {
            catalog: Some("c".into()),
            database: Some("db".into()),
            table: "t".into()
        }
    );
    assert_eq!(
        ok("refresh table t"),
        Statement::RefreshTable {
            catalog: None,
            database: None,
            table: "t".into()
        }
    );
    assert_eq!(
        ok("ADMIN SET FRONTEND CONFIG (\"external_meta_cache_max_weight\" = \"10%\")"),
        Statement::AdminSetConfig {
            pairs: pairs(&[("external_meta_cache_max_weight", "10%")])
        }
    );
    assert_eq!(
        ok("admin show frontend config like '%weight%'"),
        Statement::AdminShowConfig {
            like: Some("%weight%".into())
        }
    );
}

#[test]
fn client_statements() {
    assert_eq!(
        ok("SELECT @@version_comment LIMIT 1"),
        Statement::Query("SELECT @@version_comment LIMIT 1".into())
    );
    assert_eq!(ok("select 1;"), Statement::Query("select 1".into()));
    assert_eq!(ok("(select 1)"), Statement::Query("(select 1)".into()));
    assert_eq!(ok("SET NAMES utf8mb4"), Statement::Ignored);
    assert_eq!(ok("set autocommit=1"), Statement::Ignored);
    assert_eq!(
        ok("USE information_schema"),
        Statement::Use {
            catalog: None,
            database: "information_schema".into()
        }
    );
    assert_eq!(
        ok("use c.db"),
        Statement::Use {
            catalog: Some("c".into()),
            database: "db".into()
        }
    );
    assert_eq!(
        ok("SHOW DATABASES"),
        Statement::ShowDatabases {
            catalog: None,
            like: None
        }
    );
    assert_eq!(
        ok("SHOW DATABASES FROM hive LIKE 's%'"),
        Statement::ShowDatabases {
            catalog: Some("hive".into()),
            like: Some("s%".into())
        }
    );
    assert_eq!(
        ok("show tables from hive.sales"),
        Statement::ShowTables {
            full: false,
            database: Some(vec!["hive".into(), "sales".into()]),
            like: None
        }
    );
    assert_eq!(
        ok("SHOW PARTITIONS FROM hive.sales.`orders` LIKE 'dt=2024%'"),
        Statement::ShowPartitions {
            name: vec!["hive".into(), "sales".into(), "orders".into()],
            like: Some("dt=2024%".into())
        }
    );
    assert!(parse("SHOW PARTITIONS orders").is_err());
    assert_eq!(
        ok("SHOW FULL TABLES FROM information_schema LIKE 'c%'"),
        Statement::ShowTables {
            full: true,
            database: Some(vec!["information_schema".into()]),
            like: Some("c%".into())
        }
    );
    assert_eq!(
        ok("SHOW SESSION VARIABLES LIKE 'version%'"),
        Statement::ShowVariables {
            like: Some("version%".into())
        }
    );
    assert_eq!(ok("show warnings"), Statement::ShowWarnings);
    assert_eq!(
        ok("DESC information_schema.catalogs"),
        Statement::Describe {
            name: vec!["information_schema".into(), "catalogs".into()]
        }
    );
    assert_eq!(
        ok("SHOW COLUMNS FROM catalogs FROM information_schema"),
        Statement::Describe {
            name: vec!["information_schema".into(), "catalogs".into()]
        }
    );
    assert_eq!(
        ok("SWITCH hive"),
        Statement::Switch {
            catalog: "hive".into()
        }
    );
}

#[test]
fn errors_say_what_was_expected_and_where() {
    assert_eq!(
        err("CREATE TABLE t (a int)"),
        "Syntax error: Expected: CATALOG, found: TABLE at Line: 1, Column: 8"
    );
    assert_eq!(
        err("ALTER CATALOG c PROPERTIES ('a'='b')"),
        "Syntax error: Expected: SET PROPERTIES, MODIFY COMMENT or RENAME, found: PROPERTIES at Line: 1, Column: 17"
    );
    assert_eq!(
        err("CREATE CATALOG c PROPERTIES ('a' 'b')"),
        "Syntax error: Expected: =, found: 'b' at Line: 1, Column: 34"
    );
    assert_eq!(
        err("CREATE CATALOG c PROPERTIES ('a'='b'"),
        "Syntax error: Expected: ,, found: EOF"
    );
    assert_eq!(
        err("DROP CATALOG c extra"),
        "Syntax error: Expected: end of statement, found: extra at Line: 1, Column: 16"
    );
    assert_eq!(
        err("CREATE CATALOG c COMMENT 'unterminated"),
        "Syntax error: Unterminated string literal at Line: 1, Column: 26"
    );
    assert_eq!(
        err("FROB"),
        "Syntax error: Expected: CREATE, ALTER, DROP, SHOW or REFRESH CATALOG, ADMIN, SHOW, DESC, USE, SET or SELECT, found: FROB at Line: 1, Column: 1"
    );
    assert_eq!(err("  ;; "), "Empty statement");
    assert_eq!(
        err("select 1; select 2"),
        "One statement at a time, please: found 2"
    );
    assert_eq!(
        err("SHOW GRANTS"),
        "Syntax error: Expected: CATALOGS, CATALOG, CREATE CATALOG, CREATE TABLE, DATABASES, TABLES, PARTITIONS, COLUMNS, VARIABLES, STATUS, PROCESSLIST, INDEX, TABLE STATUS, COLLATION, CHARACTER SET, ENGINES or WARNINGS, found: GRANTS at Line: 1, Column: 6"
    );
    assert_eq!(
        parse("SHOW FULL PROCESSLIST").ok(),
        Some(Statement::ShowProcesslist)
    );
    assert_eq!(
        parse("SHOW CHARACTER SET LIKE 'utf8%'").ok(),
        Some(Statement::ShowCharset {
            like: Some("utf8%".to_owned())
        })
    );
    assert_eq!(
        parse("SHOW KEYS FROM t FROM information_schema").ok(),
        Some(Statement::ShowIndex {
            name: vec!["information_schema".to_owned(), "t".to_owned()]
        })
    );
    assert_eq!(
        parse("show create table c.db.t").ok(),
        Some(Statement::ShowCreateTable {
            name: vec!["c".to_owned(), "db".to_owned(), "t".to_owned()]
        })
    );
}
