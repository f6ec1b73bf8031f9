//! A jdbc catalog over the real PostgreSQL on loopback, through the real binary and the real
//! mysql client: SHOW/DESC answered through the adbc caches, the password masked.

mod common;

use common::{Server, data_dir};

#[test]
fn a_jdbc_catalog_reads_postgresql_through_sql() {
    let ready = std::process::Command::new("pg_isready")
        .args(["-h", "127.0.0.1", "-p", "5432", "-q"])
        .status()
        .is_ok_and(|s| s.success());
    if !ready {
        eprintln!("SKIPPED: no PostgreSQL at 127.0.0.1:5432; run scripts/test-deps.sh");
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
