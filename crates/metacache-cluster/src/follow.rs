//! The follower: applies the changes other nodes commit, in revision order.
//!
//! One connection `LISTEN`s on `metacache_events`; a notification (its payload is only a
//! revision), a reconnect, or a periodic poll each read every event after the last applied
//! revision, in order, and apply it ([`CatalogManager::apply_replicated`]). A node's own events
//! are skipped (it applied them when it committed); an event older than the revision a catalog
//! already has here is skipped (its newer state is in memory). If the events after the last
//! applied revision were pruned (a node far behind), the node resynchronises from the tables and
//! drops every cache ([`CatalogManager::resync`]). The same connection writes the node's
//! heartbeat row.
//!
//! # Invariants
//! - Events are applied in revision order, each once per instance.
//! - A lost connection loses nothing: the next connection reads from the last applied revision.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures::StreamExt;
use metacache_catalog::CatalogManager;
use metacache_catalog::store::{CatalogStore, Change};
use tokio::sync::watch;
use tokio_postgres::AsyncMessage;

use crate::store::{Member, PgStore, Shared, change_names};

/// How often the follower reads events without a notification, and heartbeats.
pub const POLL: Duration = Duration::from_millis(1000);

/// What this node tells the others about itself.
#[derive(Debug, Clone)]
pub struct Advertised {
    /// Where peers reach its HTTP API.
    pub http: String,
    /// Its MySQL address.
    pub mysql: String,
}

/// Follows the store until the process ends (on a multi-thread runtime: a resync blocks its
/// worker for the reload).
pub fn spawn(store: &Arc<PgStore>, manager: Arc<CatalogManager>, advertised: Advertised) {
    let store = Arc::clone(store);
    tokio::spawn(async move {
        let mut backoff = Duration::from_millis(200);
        loop {
            match follow(&store, &manager, &advertised).await {
                Ok(()) => backoff = Duration::from_millis(200),
                Err(error) => {
                    tracing::warn!(store = %store.shared.described, %error, "cluster store follower lost its connection; reconnecting");
                }
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(5));
        }
    });
}

/// One connection's life: listen, catch up, apply what is notified, heartbeat.
async fn follow(
    store: &PgStore,
    manager: &Arc<CatalogManager>,
    advertised: &Advertised,
) -> Result<(), tokio_postgres::Error> {
    let shared = &store.shared;
    let (client, mut connection) = shared.config.connect(tokio_postgres::NoTls).await?;
    let (notified_tx, mut notified) = watch::channel(0u64);
    let (closed_tx, mut closed) = watch::channel(false);
    tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = messages.next().await {
            match message {
                Ok(AsyncMessage::Notification(_)) => notified_tx.send_modify(|n| *n += 1),
                Ok(_) => {}
                Err(error) => {
                    tracing::debug!(%error, "cluster store listener connection failed");
                    break;
                }
            }
        }
        let _ = closed_tx.send(true);
    });
    client.batch_execute("LISTEN metacache_events").await?;
    heartbeat(&client, shared, advertised).await?;
    members(&client, shared, manager).await?;
    catch_up(&client, store, manager).await?;
    let mut tick = tokio::time::interval(POLL);
    loop {
        tokio::select! {
            changed = notified.changed() => {
                if changed.is_err() {
                    return Ok(());
                }
            }
            _ = tick.tick() => {
                heartbeat(&client, shared, advertised).await?;
                members(&client, shared, manager).await?;
            }
            _ = closed.changed() => return Ok(()),
        }
        catch_up(&client, store, manager).await?;
    }
}

async fn heartbeat(
    client: &tokio_postgres::Client,
    shared: &Shared,
    advertised: &Advertised,
) -> Result<(), tokio_postgres::Error> {
    client
        .execute(
            "INSERT INTO metacache_nodes (node, instance, http, mysql, started_at, heartbeat_at)
             VALUES ($1, $2, $3, $4, now(), now())
             ON CONFLICT (node) DO UPDATE SET instance = EXCLUDED.instance, http = EXCLUDED.http,
                 mysql = EXCLUDED.mysql, heartbeat_at = now(),
                 started_at = CASE WHEN metacache_nodes.instance = EXCLUDED.instance
                     THEN metacache_nodes.started_at ELSE now() END",
            &[
                &shared.node,
                &shared.instance,
                &advertised.http,
                &advertised.mysql,
            ],
        )
        .await?;
    Ok(())
}

/// The other nodes that heartbeated within `cluster_node_timeout_ms`.
async fn members(
    client: &tokio_postgres::Client,
    shared: &Shared,
    manager: &CatalogManager,
) -> Result<(), tokio_postgres::Error> {
    let timeout_ms =
        i64::try_from(manager.node_config().cluster_node_timeout_ms).unwrap_or(i64::MAX);
    let rows = client
        .query(
            "SELECT node, http FROM metacache_nodes
             WHERE heartbeat_at > now() - make_interval(secs => $1::float8 / 1000) AND node <> $2
             ORDER BY node",
            &[&(timeout_ms as f64), &shared.node],
        )
        .await?;
    *shared.members.lock() = rows
        .iter()
        .map(|r| Member {
            node: r.get(0),
            http: r.get(1),
        })
        .collect();
    Ok(())
}

/// Applies every event after the last applied revision, in order.
async fn catch_up(
    client: &tokio_postgres::Client,
    store: &PgStore,
    manager: &Arc<CatalogManager>,
) -> Result<(), tokio_postgres::Error> {
    let shared = &store.shared;
    loop {
        let after = shared.applied.load(Ordering::SeqCst);
        // One statement, one snapshot: the head revision and the events after ours agree (two
        // statements could see a commit land in between and take it for a gap).
        let rows = client
            .query(
                "SELECT h.revision, e.revision, e.change, e.instance
                 FROM metacache_revision h
                 LEFT JOIN LATERAL (SELECT revision, change, instance FROM metacache_events
                     WHERE revision > $1 ORDER BY revision LIMIT 1000) e ON true
                 ORDER BY e.revision",
                &[&after],
            )
            .await?;
        let head: i64 = rows.first().map_or(after, |r| r.get(0));
        let events: Vec<_> = rows
            .iter()
            .filter(|r| r.get::<_, Option<i64>>(1).is_some())
            .collect();
        let first = events.first().map(|r| r.get::<_, i64>(1));
        if first.is_some_and(|first| first != after + 1) || (first.is_none() && head > after) {
            // The events after ours were pruned: start again from the tables.
            tokio::task::block_in_place(|| resync(store, manager));
            continue;
        }
        if events.is_empty() {
            return Ok(());
        }
        for row in events {
            let revision: i64 = row.get(1);
            let instance: i64 = row.get(3);
            if instance != shared.instance {
                match serde_json::from_value::<Change>(row.get(2)) {
                    Ok(change) => apply(shared, manager, &change, revision),
                    Err(error) => {
                        tracing::warn!(revision, %error, "a cluster event does not parse (written by a newer version?); skipped");
                    }
                }
            }
            shared.applied.store(revision, Ordering::SeqCst);
        }
    }
}

fn apply(shared: &Shared, manager: &CatalogManager, change: &Change, revision: i64) {
    let names = change_names(Some(change));
    {
        let revisions = shared.revisions.lock();
        // A catalog this node changed (or saw changed) after this event keeps its newer state.
        if names
            .iter()
            .any(|n| revisions.get(n).is_some_and(|r| *r > revision))
        {
            tracing::debug!(
                revision,
                "cluster event older than the catalog's state here; skipped"
            );
            return;
        }
    }
    let applied = manager.apply_replicated(change);
    let mut revisions = shared.revisions.lock();
    for name in names {
        revisions.insert(name, revision);
    }
    tracing::debug!(
        revision,
        changed = applied.changed,
        invalidated = applied.invalidated,
        "cluster event applied"
    );
}

fn resync(store: &PgStore, manager: &CatalogManager) {
    match store.load() {
        Ok(state) => {
            manager.resync(&state);
        }
        Err(error) => tracing::warn!(%error, "cluster store resync failed; retrying"),
    }
}
