//! jdbc/adbc catalogs against a real PostgreSQL on loopback (127.0.0.1:5432, or
//! `METACACHE_PG_HOST`/`METACACHE_PG_PORT`; `scripts/test-deps.sh` installs and starts one where
//! none runs): namespaces, table names and schemas through the three `adbc` caches, cold and
//! warm, REFRESH, unknown objects, and the password never in a message.

mod common;

use common::{sources, stats};
use metacache_catalog::Properties;
use metacache_engines::builtin::adbc;
use tokio_postgres::NoTls;

fn target() -> (String, u16) {
    let host = std::env::var("METACACHE_PG_HOST").unwrap_or_else(|_| "127.0.0.1".to_owned());
    let port = std::env::var("METACACHE_PG_PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(5432);
    (host, port)
}

/// A client as `postgres` on database `postgres`; `None` (with the reason printed) when no
/// server answers.
async fn admin() -> Option<tokio_postgres::Client> {
    let (host, port) = target();
    let url = format!("host={host} port={port} user=postgres dbname=postgres");
    match tokio_postgres::connect(&url, NoTls).await {
        Ok((client, connection)) => {
            tokio::spawn(connection);
            Some(client)
        }
        Err(e) => {
            eprintln!(
                "SKIPPED: no PostgreSQL at {host}:{port} ({e}); run scripts/test-deps.sh to install and start one"
            );
            None
        }
    }
}

fn create_jdbc(sources: &metacache_sources::Sources, name: &str, password: &str) {
    let (host, port) = target();
    common::create(
        sources,
        name,
        [
            ("type", "jdbc".to_owned()),
            (
                "jdbc_url",
                format!("jdbc:postgresql://{host}:{port}/postgres"),
            ),
            ("user", "postgres".to_owned()),
            ("password", password.to_owned()),
        ],
    );
}

#[tokio::test]
async fn namespaces_tables_and_schemas_come_through_the_adbc_caches() {
    let Some(admin) = admin().await else {
        return;
    };
    let schema = format!("mc_test_{}", std::process::id());
    admin
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema};
             CREATE TABLE {schema}.orders (id bigint PRIMARY KEY, customer text NOT NULL,
                                           amount numeric(10,2), placed timestamptz);
             COMMENT ON COLUMN {schema}.orders.amount IS 'in euros';
             CREATE TABLE {schema}.customers (id bigint, name text);"
        ))
        .await
        .expect("set up");

    let sources = sources();
    create_jdbc(&sources, "pg", "not-a-real-secret");
    let c = sources.connector("pg").expect("connector");
    let namespaces = c.databases().await.expect("namespaces");
    assert!(namespaces.contains(&schema), "{namespaces:?}");
    assert!(
        !namespaces
            .iter()
            .any(|n| n == "pg_catalog" || n == "information_schema")
    );
    assert_eq!(
        c.tables(&schema).await.expect("tables"),
        ["customers", "orders"]
    );
    let described = c.schema(&schema, "orders").await.expect("schema");
    let columns: Vec<(&str, &str, bool, &str)> = described
        .columns
        .iter()
        .map(|c| {
            (
                c.name.as_str(),
                c.data_type.as_str(),
                c.nullable,
                c.comment.as_str(),
            )
        })
        .collect();
    assert_eq!(
        columns,
        [
            ("id", "bigint", false, ""),
            ("customer", "text", false, ""),
            ("amount", "numeric", true, "in euros"),
            ("placed", "timestamp with time zone", true, "")
        ]
    );
    // Warm: the same answers from the caches.
    c.databases().await.expect("warm");
    c.tables(&schema).await.expect("warm");
    c.schema(&schema, "orders").await.expect("warm");
    for entry in [adbc::NAMESPACES, adbc::TABLE_NAMES, adbc::TABLE_SCHEMA] {
        let s = stats(&sources, "pg", entry);
        assert_eq!(
            (s.load_success_count, s.hit_count),
            (1, 1),
            "{entry}: {s:?}"
        );
        assert!(s.estimated_weight > 0, "{entry}");
    }

    // A new table shows after REFRESH DATABASE, not before.
    admin
        .batch_execute(&format!("CREATE TABLE {schema}.returns (id bigint)"))
        .await
        .expect("create table");
    assert_eq!(c.tables(&schema).await.expect("cached").len(), 2);
    sources
        .manager()
        .refresh_database("pg", &schema)
        .expect("refresh");
    assert_eq!(
        c.tables(&schema).await.expect("fresh"),
        ["customers", "orders", "returns"]
    );

    let e = c.schema(&schema, "nope").await.expect_err("unknown table");
    assert!(e.is_not_found(), "{e}");
    let e = c
        .tables("mc_no_such_schema")
        .await
        .expect_err("unknown namespace");
    assert!(e.is_not_found(), "{e}");
    admin
        .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .await
        .expect("clean up");
}

#[tokio::test]
async fn connection_errors_never_show_the_password() {
    let sources = sources();
    common::create(
        &sources,
        "down",
        [
            ("type", "jdbc"),
            ("jdbc_url", "jdbc:postgresql://127.0.0.1:1/postgres"),
            ("user", "someone"),
            ("password", "hunter2-secret"),
        ],
    );
    let c = sources.connector("down").expect("connector");
    let e = c.databases().await.expect_err("nothing listens on port 1");
    let message = e.to_string();
    assert!(
        message.contains("postgresql://127.0.0.1:1/postgres"),
        "{message}"
    );
    assert!(!message.contains("hunter2"), "{message}");
    let row = stats(&sources, "down", adbc::NAMESPACES);
    assert_eq!(row.load_failure_count, 1);
    assert!(!row.last_error.unwrap_or_default().contains("hunter2"));
    let def = sources.manager().catalog("down").expect("catalog").def();
    assert_eq!(
        def.properties
            .masked()
            .get("password")
            .map(|v| v.to_string())
            .as_deref(),
        Some("*XXX")
    );

    for (url, expected) in [
        ("mysql://h/db", "must start with jdbc:postgresql://"),
        ("jdbc:postgresql://h:port/db", "bad port"),
    ] {
        sources
            .manager()
            .alter_catalog("down", Properties::from_pairs([("jdbc_url", url)]))
            .expect("alter");
        let e = sources.connector("down").err().expect("invalid url");
        assert!(e.to_string().contains(expected), "{e}");
    }
}
