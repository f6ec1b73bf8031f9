//! The shared catalog store on PostgreSQL: [`CatalogStore`] for a node of a cluster.
//!
//! Every commit is one transaction: take the next revision (a row lock on
//! `metacache_revision`, so revisions are gapless and in commit order), write the definition
//! (`INSERT` for CREATE, so two nodes creating one name cannot both win), append the change to
//! `metacache_events`, and `pg_notify('metacache_events', '<revision>')` — the payload is only
//! the revision; followers read the change from the table. A failed or unreachable database
//! fails the statement with [`StoreError::Unavailable`] and nothing changes anywhere.
//!
//! The store's calls are synchronous (the manager commits on blocking threads): they run on a
//! thread of their own with a one-thread runtime, which keeps one connection and reconnects
//! when it broke.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use metacache_catalog::store::{CatalogStore, Change, StoredState};
use metacache_catalog::{CatalogDef, StoreError};
use parking_lot::Mutex;
use tokio_postgres::{Client, NoTls};

use crate::{Error, schema};

/// How long one store call may take, connecting included.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// Events kept for followers that reconnect; older ones are pruned (a node further behind
/// resynchronises from the tables).
pub const EVENTS_KEPT: i64 = 100_000;

/// What the store and the follower of one node share.
#[derive(Debug)]
pub(crate) struct Shared {
    pub config: tokio_postgres::Config,
    /// `postgres://user@host:port/db`, never the password.
    pub described: String,
    /// `FE_HOST` of this node.
    pub node: String,
    /// This process (a node restarted under its name is another instance).
    pub instance: i64,
    /// The revision of the last change applied or committed, per catalog.
    pub revisions: Mutex<HashMap<String, i64>>,
    /// Revisions up to this one are in memory (loaded, committed here or applied).
    pub applied: AtomicI64,
    /// The other live nodes, as of the last heartbeat.
    pub members: Mutex<Vec<Member>>,
}

/// A live node of the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Its `FE_HOST`.
    pub node: String,
    /// Where its HTTP API is.
    pub http: String,
}

type Job = Box<dyn FnOnce(&tokio::runtime::Runtime, &mut Option<Client>) + Send>;

/// The PostgreSQL store.
pub struct PgStore {
    pub(crate) shared: Arc<Shared>,
    jobs: Mutex<std::sync::mpsc::Sender<Job>>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("store", &self.shared.described)
            .finish_non_exhaustive()
    }
}

/// `postgres://user@host:port/db` of `config`, without its password.
pub(crate) fn describe(config: &tokio_postgres::Config) -> String {
    let host = config
        .get_hosts()
        .first()
        .map(|h| match h {
            tokio_postgres::config::Host::Tcp(h) => h.clone(),
            #[cfg(unix)]
            tokio_postgres::config::Host::Unix(p) => p.display().to_string(),
        })
        .unwrap_or_default();
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!(
        "postgres://{}@{host}:{port}/{}",
        config.get_user().unwrap_or(""),
        config.get_dbname().unwrap_or("")
    )
}

/// Connects, driving the connection on the current runtime.
pub(crate) async fn connect(
    config: &tokio_postgres::Config,
) -> Result<Client, tokio_postgres::Error> {
    let (client, connection) = config.connect(NoTls).await?;
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::debug!(%error, "cluster store connection ended");
        }
    });
    Ok(client)
}

impl PgStore {
    /// Opens the store at `url` (`postgres://user[:password]@host:port/db`) for node `node`:
    /// connects, creates or migrates the schema. Fails when the database cannot be reached.
    pub fn open(url: &str, node: &str) -> Result<Self, Error> {
        let config: tokio_postgres::Config =
            url.parse()
                .map_err(|e: tokio_postgres::Error| Error::InvalidUrl {
                    reason: e.to_string(),
                })?;
        let mut config = config;
        config.connect_timeout(Duration::from_secs(5));
        if config.get_application_name().is_none() {
            config.application_name("metacache");
        }
        let shared = Arc::new(Shared {
            described: describe(&config),
            config,
            node: node.to_owned(),
            instance: rand::random::<i64>() & i64::MAX,
            revisions: Mutex::new(HashMap::new()),
            applied: AtomicI64::new(0),
            members: Mutex::new(Vec::new()),
        });
        let (tx, rx) = std::sync::mpsc::channel::<Job>();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Runtime {
                reason: e.to_string(),
            })?;
        std::thread::Builder::new()
            .name("metacache-store".to_owned())
            .spawn(move || {
                let mut client: Option<Client> = None;
                while let Ok(job) = rx.recv() {
                    job(&runtime, &mut client);
                }
            })
            .map_err(|e| Error::Runtime {
                reason: e.to_string(),
            })?;
        let store = Self {
            shared,
            jobs: Mutex::new(tx),
        };
        store
            .call(|client| Box::pin(async move { schema::migrate(client).await.map(|_| ()) }))
            .map_err(|e| Error::Store(Box::new(e)))?;
        Ok(store)
    }

    /// Runs `f` with a connected client on the store's thread, within [`CALL_TIMEOUT`].
    fn call<T: Send + 'static>(
        &self,
        f: impl for<'c> FnOnce(
            &'c mut Client,
        ) -> std::pin::Pin<
            Box<dyn Future<Output = Result<T, tokio_postgres::Error>> + Send + 'c>,
        > + Send
        + 'static,
    ) -> Result<T, StoreError> {
        let (reply, answer) = std::sync::mpsc::channel();
        let shared = Arc::clone(&self.shared);
        let job: Job = Box::new(move |runtime, slot| {
            let outcome = runtime.block_on(async {
                tokio::time::timeout(CALL_TIMEOUT, async {
                    // A connection the server ended (a restart) is noticed only on use: a
                    // round trip first, so the change itself is sent once, on a live one.
                    let alive = match slot.as_ref() {
                        Some(client) if !client.is_closed() => {
                            client.batch_execute("SELECT 1").await.is_ok()
                        }
                        _ => false,
                    };
                    if !alive {
                        *slot = Some(connect(&shared.config).await?);
                    }
                    let Some(client) = slot.as_mut() else {
                        unreachable!("connected above")
                    };
                    f(client).await
                })
                .await
            });
            let outcome = match outcome {
                Ok(Ok(value)) => Ok(value),
                Ok(Err(error)) => {
                    if slot.as_ref().is_some_and(Client::is_closed) {
                        *slot = None;
                    }
                    Err(error)
                }
                Err(_) => {
                    *slot = None;
                    return drop(reply.send(Err(Failure::Timeout)));
                }
            };
            let _ = reply.send(outcome.map_err(Failure::Postgres));
        });
        let unavailable = |reason: String| StoreError::Unavailable {
            store: self.shared.described.clone(),
            reason,
        };
        self.jobs
            .lock()
            .send(job)
            .map_err(|_| unavailable("the store's thread has stopped".to_owned()))?;
        match answer.recv() {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(Failure::Timeout)) => Err(unavailable(format!(
                "no answer within {} s",
                CALL_TIMEOUT.as_secs()
            ))),
            Ok(Err(Failure::Postgres(error))) => Err(classify(&self.shared.described, &error)),
            Err(_) => Err(unavailable("the store's thread has stopped".to_owned())),
        }
    }

    /// The `FE_HOST` this node stores under.
    pub fn node(&self) -> &str {
        &self.shared.node
    }

    /// The other nodes that heartbeated within `cluster_node_timeout_ms`, as of this node's
    /// last heartbeat.
    pub fn members(&self) -> Vec<Member> {
        self.shared.members.lock().clone()
    }
}

enum Failure {
    Timeout,
    Postgres(tokio_postgres::Error),
}

/// A PostgreSQL error as a store error (the unique violation of a CREATE is the caller's).
fn classify(store: &str, error: &tokio_postgres::Error) -> StoreError {
    StoreError::Unavailable {
        store: store.to_owned(),
        reason: error
            .as_db_error()
            .map_or_else(|| error.to_string(), |db| db.message().to_owned()),
    }
}

/// Why a commit did not happen, decided inside its transaction.
#[derive(Debug)]
enum Refused {
    Exists(String),
    Gone(String),
    Conflict(String),
}

impl CatalogStore for PgStore {
    fn load(&self) -> Result<StoredState, StoreError> {
        let (state, revision) = self.call(|client| {
            Box::pin(async move {
                let tx = client
                    .build_transaction()
                    .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
                    .read_only(true)
                    .start()
                    .await?;
                let revision: i64 = tx
                    .query_one("SELECT revision FROM metacache_revision", &[])
                    .await?
                    .get(0);
                let mut state = StoredState::default();
                let mut revisions = Vec::new();
                for row in tx
                    .query("SELECT name, def, revision FROM metacache_catalogs ORDER BY name", &[])
                    .await?
                {
                    let name: String = row.get(0);
                    let def: serde_json::Value = row.get(1);
                    match serde_json::from_value::<CatalogDef>(def) {
                        Ok(def) => {
                            revisions.push((name, row.get::<_, i64>(2)));
                            state.catalogs.push(def);
                        }
                        Err(error) => {
                            tracing::warn!(catalog = %name, %error, "a stored catalog definition does not parse; ignored");
                        }
                    }
                }
                for row in tx
                    .query("SELECT name, def FROM metacache_engines ORDER BY name", &[])
                    .await?
                {
                    let name: String = row.get(0);
                    match serde_json::from_value(row.get::<_, serde_json::Value>(1)) {
                        Ok(engine) => state.engines.push(engine),
                        Err(error) => {
                            tracing::warn!(engine = %name, %error, "a stored engine definition does not parse; ignored");
                        }
                    }
                }
                tx.commit().await?;
                Ok(((state, revisions), revision))
            })
        })?;
        let (state, revisions) = state;
        *self.shared.revisions.lock() = revisions.into_iter().collect();
        self.shared.applied.store(revision, Ordering::SeqCst);
        Ok(state)
    }

    fn commit(&self, change: &Change) -> Result<(), StoreError> {
        let json = serde_json::to_value(change).map_err(|e| StoreError::Unavailable {
            store: self.shared.described.clone(),
            reason: format!("the change does not serialise: {e}"),
        })?;
        let names = change_names(Some(change));
        // The revision this node last saw of the catalog an ALTER or RENAME rewrites: the row
        // must still be at it (no lost update of another node's change).
        let expected = change
            .catalog()
            .and_then(|name| self.shared.revisions.lock().get(name).copied());
        let change = change.clone();
        let node = self.shared.node.clone();
        let instance = self.shared.instance;
        let outcome = self.call(move |client| {
            Box::pin(async move {
                let tx = client.transaction().await?;
                let revision: i64 = tx
                    .query_one(
                        "UPDATE metacache_revision SET revision = revision + 1 RETURNING revision",
                        &[],
                    )
                    .await?
                    .get(0);
                if let Err(refused) = write(&tx, &change, revision, expected).await? {
                    tx.rollback().await?;
                    return Ok(Err(refused));
                }
                tx.execute(
                    "INSERT INTO metacache_events (revision, change, node, instance) VALUES ($1, $2, $3, $4)",
                    &[&revision, &json, &node, &instance],
                )
                .await?;
                if revision % 1000 == 0 {
                    tx.execute(
                        "DELETE FROM metacache_events WHERE revision <= $1",
                        &[&(revision - EVENTS_KEPT)],
                    )
                    .await?;
                }
                tx.execute("SELECT pg_notify('metacache_events', $1)", &[&revision.to_string()])
                    .await?;
                tx.commit().await?;
                Ok(Ok(revision))
            })
        })?;
        match outcome {
            Ok(revision) => {
                self.note_committed(names, revision);
                Ok(())
            }
            Err(Refused::Exists(catalog)) => Err(StoreError::Exists { catalog }),
            Err(Refused::Gone(catalog)) => Err(StoreError::Gone { catalog }),
            Err(Refused::Conflict(catalog)) => Err(StoreError::Conflict { catalog }),
        }
    }

    fn describe(&self) -> String {
        self.shared.described.clone()
    }
}

/// The catalog names a change sets the revision of.
pub(crate) fn change_names(change: Option<&Change>) -> Vec<String> {
    match change {
        Some(Change::RenameCatalog { from, def }) => vec![from.clone(), def.name.clone()],
        Some(Change::Refresh { .. } | Change::InvalidateKey { .. }) | None => Vec::new(),
        Some(other) => other.catalog().map(str::to_owned).into_iter().collect(),
    }
}

impl PgStore {
    fn note_committed(&self, names: Vec<String>, revision: i64) {
        let mut revisions = self.shared.revisions.lock();
        for name in names {
            revisions.insert(name, revision);
        }
    }
}

fn def_json(def: &CatalogDef) -> serde_json::Value {
    serde_json::to_value(def).unwrap_or(serde_json::Value::Null)
}

/// A new catalog row; refused when the name is taken (by any node).
async fn insert_catalog(
    tx: &tokio_postgres::Transaction<'_>,
    def: &CatalogDef,
    revision: i64,
) -> Result<Result<(), Refused>, tokio_postgres::Error> {
    let inserted = tx
        .execute(
            "INSERT INTO metacache_catalogs (name, def, revision) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
            &[&def.name, &def_json(def), &revision],
        )
        .await?;
    Ok(if inserted == 0 {
        Err(Refused::Exists(def.name.clone()))
    } else {
        Ok(())
    })
}

/// The table writes of `change` at `revision`; `Ok(Err(_))` when the change is refused.
async fn write(
    tx: &tokio_postgres::Transaction<'_>,
    change: &Change,
    revision: i64,
    expected: Option<i64>,
) -> Result<Result<(), Refused>, tokio_postgres::Error> {
    // An ALTER or RENAME of a row another node rewrote since this node saw it is refused.
    if let (
        Change::PutCatalog(CatalogDef { name, .. }) | Change::RenameCatalog { from: name, .. },
        Some(expected),
    ) = (change, expected)
    {
        let row = tx
            .query_opt(
                "SELECT revision FROM metacache_catalogs WHERE name = $1 FOR UPDATE",
                &[name],
            )
            .await?;
        match row.map(|r| r.get::<_, i64>(0)) {
            None => return Ok(Err(Refused::Gone(name.clone()))),
            Some(stored) if stored != expected => {
                return Ok(Err(Refused::Conflict(name.clone())));
            }
            Some(_) => {}
        }
    }
    match change {
        Change::CreateCatalog(def) => return insert_catalog(tx, def, revision).await,
        Change::PutCatalog(def) => {
            let updated = tx
                .execute(
                    "UPDATE metacache_catalogs SET def = $2, revision = $3 WHERE name = $1",
                    &[&def.name, &def_json(def), &revision],
                )
                .await?;
            if updated == 0 {
                return Ok(Err(Refused::Gone(def.name.clone())));
            }
        }
        Change::DeleteCatalog(name) => {
            tx.execute("DELETE FROM metacache_catalogs WHERE name = $1", &[name])
                .await?;
        }
        Change::RenameCatalog { from, def } => {
            let moved = tx
                .execute("DELETE FROM metacache_catalogs WHERE name = $1", &[from])
                .await?;
            if moved == 0 {
                return Ok(Err(Refused::Gone(from.clone())));
            }
            return insert_catalog(tx, def, revision).await;
        }
        Change::PutEngine(engine) => {
            let json = serde_json::to_value(engine).unwrap_or(serde_json::Value::Null);
            tx.execute(
                "INSERT INTO metacache_engines (name, def, revision) VALUES ($1, $2, $3) ON CONFLICT (name) DO UPDATE SET def = EXCLUDED.def, revision = EXCLUDED.revision",
                &[&engine.name, &json, &revision],
            )
            .await?;
        }
        Change::DeleteEngine(name) => {
            tx.execute("DELETE FROM metacache_engines WHERE name = $1", &[name])
                .await?;
        }
        Change::Refresh { .. } | Change::InvalidateKey { .. } => {}
    }
    Ok(Ok(()))
}
