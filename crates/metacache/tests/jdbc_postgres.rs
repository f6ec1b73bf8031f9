//! A jdbc catalog over the real PostgreSQL on loopback, through the real binary, the real mysql
//! client and HTTP: SHOW/DESC answered through the adbc caches, the password masked, one query
//! for concurrent planners, REFRESH TABLE, and a quota rejection's reason.

mod common;

use common::{Server, data_dir};

/// Whether a PostgreSQL answers on 127.0.0.1:5432; says why the test skips otherwise.
fn postgres_ready() -> bool {
    let ready = std::process::Command::new("pg_isready")
        .args(["-h", "127.0.0.1", "-p", "5432", "-q"])
        .status()
        .is_ok_and(|s| s.success());
    if !ready {
        eprintln!("SKIPPED: no PostgreSQL at 127.0.0.1:5432; run scripts/test-deps.sh");
    }
    ready
}

#[test]
fn a_jdbc_catalog_reads_postgresql_through_sql() {
    if !postgres_ready() {
        return;
    }
    let (_dir, data) = data_dir();
    let server = Server::start(&data, &[]);
    server.query(
        "CREATE CATALOG pg PROPERTIES ('type' = 'jdbc', \
         'jdbc_url' = 'jdbc:postgresql://127.0.0.1:5432/postgres', \
         'user' = 'postgres', 'password' = 'unused-with-trust')",
    );
    assert!(
        server
            .query("SHOW DATABASES FROM pg")
            .contains("\npublic\n")
    );
    let desc = server.query("DESC pg.information_schema.schemata");
    assert!(desc.contains("\nschema_name\tname\tYes\t"), "{desc}");
    assert_eq!(
        server.fails("DESC pg.public.mc_no_such_table"),
        "ERROR 1146 (42S02) at line 1: Table 'public.mc_no_such_table' doesn't exist"
    );
    let create = server.query("SHOW CREATE CATALOG pg");
    assert!(
        create.contains("*XXX") && !create.contains("unused-with-trust"),
        "{create}"
    );
    let stats = server.query(
        "SELECT entry_name, load_success_count FROM information_schema.catalog_meta_cache_statistics \
         WHERE catalog_name = 'pg' AND engine_name = 'adbc'",
    );
    assert!(stats.contains("adbc-namespaces\t1"), "{stats}");
}

/// Runs SQL as `postgres` through the real psql client.
fn psql(sql: &str) {
    let status = std::process::Command::new("psql")
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            "5432",
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-q",
            "-c",
            sql,
        ])
        .env("PGOPTIONS", "-c client_min_messages=warning")
        .stdout(std::process::Stdio::null())
        .status()
        .expect("psql runs");
    assert!(status.success(), "psql: {sql}");
}

/// `(requests, hits, misses, loads, rejects, reason)` of `entry` in catalog `pg`.
fn adbc_stats(server: &Server, entry: &str) -> Vec<String> {
    server.cache_row(
        "pg",
        entry,
        "request_count, hit_count, miss_count, load_success_count, weight_reject_count, \
         last_weight_reject_reason",
    )
}

#[test]
fn concurrent_planners_share_one_query_refresh_shows_a_new_column_and_a_small_quota_says_why() {
    if !postgres_ready() {
        return;
    }
    let schema = format!("mc_e2e_{}", std::process::id());
    psql(&format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}; \
         CREATE TABLE {schema}.orders (id bigint PRIMARY KEY, amount numeric(10,2));"
    ));
    let (_dir, data) = data_dir();
    let server = Server::start(&data, &[]);
    server.query(
        "CREATE CATALOG pg PROPERTIES ('type' = 'jdbc', \
         'jdbc_url' = 'jdbc:postgresql://127.0.0.1:5432/postgres', 'user' = 'postgres')",
    );
    let path = format!("/api/v1/catalogs/pg/databases/{schema}/tables/orders/schema");
    std::thread::scope(|scope| {
        let planners: Vec<_> = (0..16)
            .map(|_| scope.spawn(|| server.http("GET", &path, None, None)))
            .collect();
        for planner in planners {
            let (status, body) = planner.join().expect("planner");
            assert_eq!(status, 200, "{body}");
            assert!(body.contains("\"amount\""), "{body}");
        }
    });
    let s = adbc_stats(&server, "adbc-table-schema");
    assert_eq!(
        (s[0].as_str(), s[3].as_str()),
        ("16", "1"),
        "one query for 16: {s:?}"
    );

    psql(&format!(
        "ALTER TABLE {schema}.orders ADD COLUMN placed timestamptz"
    ));
    let desc = server.query(&format!("DESC pg.{schema}.orders"));
    assert!(!desc.contains("placed"), "cached until refreshed: {desc}");
    server.query(&format!("REFRESH TABLE pg.{schema}.orders"));
    let desc = server.query(&format!("DESC pg.{schema}.orders"));
    assert!(
        desc.contains("\nplaced\ttimestamp with time zone\tYes\t"),
        "{desc}"
    );

    server
        .query("ALTER CATALOG pg SET PROPERTIES ('meta.cache.adbc.metadata.max-weight' = '100B')");
    for _ in 0..2 {
        let (status, body) = server.http("GET", &path, None, None);
        assert_eq!(status, 200, "the answer is still whole: {body}");
        assert!(body.contains("\"placed\""), "{body}");
    }
    let s = adbc_stats(&server, "adbc-table-schema");
    assert_eq!(
        (s[3].as_str(), s[4].as_str(), s[5].as_str()),
        ("2", "2", "entry_too_large"),
        "{s:?}"
    );
    psql(&format!("DROP SCHEMA {schema} CASCADE"));
}

/// One column of catalog `pg`'s `adbc-table-schema` row of `catalog_meta_cache_refresh`.
fn refreshes(server: &Server, column: &str) -> u64 {
    let out = server.query(&format!(
        "SELECT {column} FROM information_schema.catalog_meta_cache_refresh \
         WHERE catalog_name = 'pg' AND entry_name = 'adbc-table-schema'"
    ));
    out.lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("no refresh row: {out}"))
}

#[test]
fn with_auto_refresh_a_new_column_arrives_in_the_background() {
    if !postgres_ready() {
        return;
    }
    let schema = format!("mc_refresh_{}", std::process::id());
    psql(&format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}; \
         CREATE TABLE {schema}.orders (id bigint PRIMARY KEY);"
    ));
    let (_dir, data) = data_dir();
    let server = Server::start(&data, &[]);
    // TTL 4 s: due 0.4 s before it.
    server.query(
        "CREATE CATALOG pg PROPERTIES ('type' = 'jdbc', \
         'jdbc_url' = 'jdbc:postgresql://127.0.0.1:5432/postgres', 'user' = 'postgres', \
         'meta.cache.adbc.metadata.ttl-second' = '4', 'meta.cache.adbc.metadata.auto-refresh' = 'true')",
    );
    let desc = || server.query(&format!("DESC pg.{schema}.orders"));
    let loaded = std::time::Instant::now();
    assert!(!desc().contains("placed"));
    psql(&format!(
        "ALTER TABLE {schema}.orders ADD COLUMN placed timestamptz"
    ));
    std::thread::sleep(std::time::Duration::from_millis(3_700).saturating_sub(loaded.elapsed()));
    assert!(
        !desc().contains("placed"),
        "the cached schema serves while due"
    );
    let started = std::time::Instant::now();
    while refreshes(&server, "REFRESH_SUCCESS_COUNT") < 1 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "the refresh did not store"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(desc().contains("\nplaced\ttimestamp with time zone\tYes\t"));
    let s = adbc_stats(&server, "adbc-table-schema");
    assert_eq!(s[2], "1", "only the first read missed: {s:?}");
    psql(&format!("DROP SCHEMA {schema} CASCADE"));
}
