//! The cluster's tables in PostgreSQL, created and migrated by the binary: each migration runs
//! once, in its own transaction, under an advisory lock (several nodes starting at once migrate
//! once), and is recorded in `metacache_schema`.
//!
//! | table | holds |
//! |---|---|
//! | `metacache_revision` | one row: the last revision handed out (gapless: taken under a row lock in the committing transaction) |
//! | `metacache_catalogs` | `name` → the catalog's definition (JSON) and the revision that wrote it |
//! | `metacache_engines` | `name` → a remote engine's definition (JSON) and its revision |
//! | `metacache_events` | `revision` → the change (JSON), the node and instance that made it, when |
//! | `metacache_nodes` | `node` → its HTTP and MySQL addresses, instance, last heartbeat |

use tokio_postgres::Client;

/// The migrations, in order; never edit one that shipped, add the next.
const MIGRATIONS: &[&str] = &[
    // 1: the tables.
    "CREATE TABLE metacache_revision (id INT PRIMARY KEY CHECK (id = 1), revision BIGINT NOT NULL);
     INSERT INTO metacache_revision VALUES (1, 0);
     CREATE TABLE metacache_catalogs (name TEXT PRIMARY KEY, def JSONB NOT NULL, revision BIGINT NOT NULL);
     CREATE TABLE metacache_engines (name TEXT PRIMARY KEY, def JSONB NOT NULL, revision BIGINT NOT NULL);
     CREATE TABLE metacache_events (revision BIGINT PRIMARY KEY, change JSONB NOT NULL,
         node TEXT NOT NULL, instance BIGINT NOT NULL, at TIMESTAMPTZ NOT NULL DEFAULT now());
     CREATE TABLE metacache_nodes (node TEXT PRIMARY KEY, instance BIGINT NOT NULL,
         http TEXT NOT NULL, mysql TEXT NOT NULL, started_at TIMESTAMPTZ NOT NULL,
         heartbeat_at TIMESTAMPTZ NOT NULL);",
];

/// An arbitrary key for `pg_advisory_xact_lock`: the migrations of one database run one at a time.
const MIGRATION_LOCK: i64 = 0x6d65_7461_6361_6368;

/// Creates or migrates the schema; returns the version it is at.
pub async fn migrate(client: &mut Client) -> Result<usize, tokio_postgres::Error> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS metacache_schema (version INT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
    )
    .await?;
    let done: i32 = tx
        .query_one(
            "SELECT COALESCE(max(version), 0) FROM metacache_schema",
            &[],
        )
        .await?
        .get(0);
    let done = usize::try_from(done).unwrap_or(0);
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(done) {
        tx.batch_execute(sql).await?;
        let version = i32::try_from(i + 1).unwrap_or(i32::MAX);
        tx.execute(
            "INSERT INTO metacache_schema (version) VALUES ($1)",
            &[&version],
        )
        .await?;
        tracing::info!(version, "cluster store migrated");
    }
    tx.commit().await?;
    Ok(MIGRATIONS.len())
}
