//! The PostgreSQL store on a private PostgreSQL: CREATE races, lost-update refusal, gapless
//! revisions, an outage and the reconnect after it, and no password in what it shows.

#[path = "../../metacache/tests/common/postgres.rs"]
mod postgres;

use metacache_catalog::store::{CatalogStore, Change};
use metacache_catalog::{CatalogDef, Properties, StoreError};
use metacache_cluster::PgStore;

/// A port nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn def(name: &str, weight: &str) -> CatalogDef {
    CatalogDef {
        id: 1,
        name: name.to_owned(),
        comment: String::new(),
        properties: Properties::from_pairs([("type", "hms"), ("meta.cache.max-weight", weight)]),
        created_at_millis: 1,
        updated_at_millis: 1,
    }
}

#[test]
fn commits_are_ordered_exclusive_and_refused_cleanly() {
    let Some(pg) = postgres::Postgres::start() else {
        return;
    };
    let url = pg.url();
    let a = PgStore::open(&url, "a").expect("a opens (and migrates)");
    let b = PgStore::open(&url, "b").expect("b opens (migrated already)");
    a.load().expect("a loads");
    b.load().expect("b loads");

    // One name, two creators: the second is refused, whoever it is.
    a.commit(&Change::CreateCatalog(def("x", "1GB")))
        .expect("a creates");
    let refused = b
        .commit(&Change::CreateCatalog(def("x", "2GB")))
        .expect_err("b cannot create it too");
    assert!(
        matches!(refused, StoreError::Exists { ref catalog } if catalog == "x"),
        "{refused}"
    );

    // b saw x at its first revision; a alters it; b's ALTER from the old state is refused.
    assert_eq!(b.load().expect("b reloads").catalogs, vec![def("x", "1GB")]);
    a.commit(&Change::PutCatalog(def("x", "3GB")))
        .expect("a alters");
    let conflict = b
        .commit(&Change::PutCatalog(def("x", "4GB")))
        .expect_err("b's view is stale");
    assert!(
        matches!(conflict, StoreError::Conflict { .. }),
        "{conflict}"
    );
    assert!(
        conflict.to_string().contains("run the statement again"),
        "{conflict}"
    );
    // Once it has seen a's change, b's ALTER goes through.
    assert_eq!(b.load().expect("b reloads").catalogs, vec![def("x", "3GB")]);
    b.commit(&Change::PutCatalog(def("x", "4GB")))
        .expect("b alters");
    // REFRESH is an event only; DROP of a catalog another node altered is fine.
    a.commit(&Change::Refresh {
        catalog: "x".to_owned(),
        database: None,
        table: None,
    })
    .expect("refresh");

    // Refused commits took no revision: the events are 1, 2, … without a gap.
    let seen: Vec<i64> = pg
        .sql("SELECT revision FROM metacache_events ORDER BY revision")
        .lines()
        .map(|l| l.trim().parse().expect("a revision"))
        .collect();
    assert_eq!(seen, (1..=seen.len() as i64).collect::<Vec<_>>(), "gapless");
    assert_eq!(seen.len(), 4, "create, alter, alter, refresh");

    // PostgreSQL down: a clear error, nothing changed; back up: the store reconnects.
    pg.pause();
    let down = a
        .commit(&Change::DeleteCatalog("x".to_owned()))
        .expect_err("no database");
    assert!(matches!(down, StoreError::Unavailable { .. }), "{down}");
    assert!(down.to_string().contains("nothing was changed"), "{down}");
    pg.resume();
    a.load().expect("a reconnects");
    a.commit(&Change::DeleteCatalog("x".to_owned()))
        .expect("a drops after the outage");
    assert!(b.load().expect("b").catalogs.is_empty());

    // A password in the URL is never shown.
    let with_password = url.replace("postgres@", "postgres:hunter2@");
    let c = PgStore::open(&with_password, "c").expect("trust auth ignores it");
    assert!(!c.describe().contains("hunter2"), "{}", c.describe());
}
