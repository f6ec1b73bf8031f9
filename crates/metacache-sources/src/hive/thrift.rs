//! A Hive Metastore reached over Thrift (`hive.metastore.uris`), behind the same [`Metastore`]
//! trait as the file metastore, so every Hive cache and route works unchanged.
//!
//! The client is `hive_metastore` (Volo Thrift, buffered transport, binary protocol), the one
//! the Rust Iceberg HMS catalog uses; it speaks the calls Hive 2.3 through 4 share
//! (`get_all_databases`, `get_all_tables`, `get_table`, `get_partition_names`,
//! `get_partitions_by_names`, `get_partition_by_name`, `get_table_statistics_req`; the
//! notification log calls are in `events.rs`).
//!
//! Partition lookups of one table that are in flight together are answered by one
//! `get_partitions_by_names` call (a DataLoader-style batch: the first lookup gathers the
//! others for a few scheduler turns); each partition is still loaded through its own cache key,
//! so single flight and invalidation fences work per partition as for any load.
//!
//! # Invariants
//! - Every call has the node's request timeout (`source_request_timeout_seconds`); a metastore
//!   that stops answering fails the call, never hangs it.
//! - URIs are tried in order from the one that answered last: a refused connection, a reset or
//!   a timeout moves on to the next (failover); an answer of the metastore (a Hive exception
//!   such as `NoSuchObjectException`) does not.
//! - Locations the metastore records are read only inside the catalog's warehouse root
//!   (`warehouse`, else the local file system) and inside the node's `source_allowed_locations`.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

use async_trait::async_trait;
use hive_metastore::{ThriftHiveMetastoreClient, ThriftHiveMetastoreClientBuilder};
use metacache_catalog::Reach;
use pilota::FastStr;
use volo_thrift::MaybeException;

use super::convert::{
    column, column_statistics, format_of, location_of, normalize, spark_statistics, strings,
};
use super::metastore::Metastore;
use super::values::{ColumnStatistics, HiveTable, PartitionNames};
use crate::warehouse::Warehouse;
use crate::{Error, Result};

/// The property naming the metastores.
pub const URIS: &str = "hive.metastore.uris";
/// Partitions asked for in one `get_partitions_by_names` call.
const PARTITION_BATCH: usize = 1000;
/// Scheduler turns a batch's first lookup waits for concurrent lookups of the same table to join.
const BATCH_WAIT_YIELDS: usize = 4;

/// Partition lookups waiting for their table's batch: name and where to send its location.
type Waiting = Vec<(String, tokio::sync::oneshot::Sender<Result<String>>)>;

/// A batch being gathered; removed from the pending lookups when taken or dropped.
struct Gathering<'a> {
    pending: &'a parking_lot::Mutex<HashMap<(String, String), Waiting>>,
    key: Option<(String, String)>,
}

impl Gathering<'_> {
    fn take(mut self) -> Waiting {
        let key = self.key.take();
        key.and_then(|k| self.pending.lock().remove(&k))
            .unwrap_or_default()
    }
}

impl Drop for Gathering<'_> {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            self.pending.lock().remove(&key);
        }
    }
}

/// One metastore URI and its client.
struct Endpoint {
    uri: String,
    client: ThriftHiveMetastoreClient,
}

/// A Hive Metastore over Thrift.
pub struct ThriftMetastore {
    catalog: String,
    endpoints: Vec<Endpoint>,
    /// The endpoint that answered last.
    current: AtomicUsize,
    timeout: Duration,
    warehouse: Warehouse,
    reach: Reach,
    /// Partition lookups gathered per table (database, table) into one metastore call.
    pending: parking_lot::Mutex<HashMap<(String, String), Waiting>>,
}

impl std::fmt::Debug for ThriftMetastore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThriftMetastore")
            .field("catalog", &self.catalog)
            .field(
                "uris",
                &self.endpoints.iter().map(|e| &e.uri).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// What a call did: the metastore's answer, or a failure of this endpoint.
pub(super) enum Call<T> {
    Answer(T),
    Unreachable(String),
}

impl ThriftMetastore {
    /// The metastores of `uris` (`thrift://host:port`, comma-separated) for `catalog`, reading
    /// locations through `warehouse`.
    pub fn open(catalog: &str, uris: &str, warehouse: Warehouse, reach: Reach) -> Result<Self> {
        let timeouts = crate::network::timeouts();
        let invalid = |reason: String| Error::Connection {
            catalog: catalog.to_owned(),
            reason,
        };
        let mut endpoints = Vec::new();
        for uri in uris.split(',').map(str::trim).filter(|u| !u.is_empty()) {
            let address = uri.strip_prefix("thrift://").ok_or_else(|| {
                invalid(format!(
                    "'{URIS}' lists '{}', not a thrift://host:port URI",
                    metacache_cache::redact::redact(uri)
                ))
            })?;
            let socket = resolve(address).ok_or_else(|| {
                invalid(format!(
                    "'{URIS}': cannot resolve '{}' to an address",
                    metacache_cache::redact::redact(address)
                ))
            })?;
            let client = ThriftHiveMetastoreClientBuilder::new("metacache")
                .address(socket)
                .connect_timeout(Some(timeouts.connect))
                .make_codec(volo_thrift::codec::default::DefaultMakeCodec::buffered())
                .build();
            endpoints.push(Endpoint {
                uri: uri.to_owned(),
                client,
            });
        }
        if endpoints.is_empty() {
            return Err(invalid(format!("'{URIS}' lists no metastore")));
        }
        Ok(Self {
            catalog: catalog.to_owned(),
            endpoints,
            current: AtomicUsize::new(0),
            timeout: timeouts.request,
            warehouse,
            reach,
            pending: parking_lot::Mutex::new(HashMap::new()),
        })
    }

    /// Runs `call` against the endpoints, from the current one, until one answers.
    pub(super) async fn call<T, F, Fut>(&self, what: &str, call: F) -> Result<T>
    where
        F: Fn(ThriftHiveMetastoreClient) -> Fut,
        Fut: std::future::Future<Output = Call<T>>,
    {
        let start = self.current.load(Relaxed);
        let mut failures = Vec::new();
        for step in 0..self.endpoints.len() {
            let index = (start + step) % self.endpoints.len();
            let endpoint = &self.endpoints[index];
            let outcome = tokio::time::timeout(self.timeout, call(endpoint.client.clone())).await;
            match outcome {
                Ok(Call::Answer(value)) => {
                    self.current.store(index, Relaxed);
                    return Ok(value);
                }
                Ok(Call::Unreachable(reason)) => {
                    failures.push(format!("{}: {reason}", endpoint.uri));
                }
                Err(_) => failures.push(format!(
                    "{}: no answer within {} s",
                    endpoint.uri,
                    self.timeout.as_secs()
                )),
            }
            tracing::warn!(catalog = %self.catalog, uri = %endpoint.uri, what, "metastore call failed; trying the next URI");
        }
        Err(Error::Connection {
            catalog: self.catalog.clone(),
            reason: metacache_cache::redact::redact(&format!(
                "no Hive Metastore of '{URIS}' answered {what}: {}",
                failures.join("; ")
            ))
            .into_owned(),
        })
    }

    /// The catalog's name.
    pub(super) fn catalog(&self) -> &str {
        &self.catalog
    }

    /// The store-relative directory of a location the metastore recorded.
    fn relative(&self, location: &str, what: &str) -> Result<String> {
        let location = normalize(location);
        self.reach
            .check_location(&self.catalog, what, &location)
            .map_err(|e| Error::Catalog(std::sync::Arc::new(e)))?;
        self.warehouse
            .relative(&location)
            .ok_or_else(|| Error::Connection {
                catalog: self.catalog.clone(),
                reason: format!(
                    "{what} is at '{}', outside the catalog's 'warehouse' ({}); set 'warehouse' to a root that holds it",
                    metacache_cache::redact::redact(&location),
                    self.warehouse.display(&self.warehouse.path(""))
                ),
            })
    }
}

/// `host:port` to a socket address (the first the resolver gives).
fn resolve(address: &str) -> Option<SocketAddr> {
    use std::net::ToSocketAddrs;
    address.to_socket_addrs().ok()?.next()
}

/// The answer of one Thrift call: the metastore's value, its exception (the message), or a
/// transport failure.
fn answer<T, E: std::fmt::Debug, C: std::fmt::Display>(
    result: std::result::Result<MaybeException<T, E>, C>,
) -> Call<std::result::Result<T, String>> {
    match result {
        Ok(MaybeException::Ok(value)) => Call::Answer(Ok(value)),
        Ok(MaybeException::Exception(exception)) => Call::Answer(Err(format!("{exception:?}"))),
        Err(error) => Call::Unreachable(error.to_string()),
    }
}

#[async_trait]
impl Metastore for ThriftMetastore {
    async fn databases(&self) -> Result<Vec<String>> {
        let mut names = self
            .call("get_all_databases", |c| async move {
                answer(c.get_all_databases().await)
            })
            .await?
            .map(strings)
            .map_err(|e| self.failed("databases", e))?;
        names.sort();
        Ok(names)
    }

    async fn tables(&self, database: &str) -> Result<Vec<String>> {
        let db = FastStr::new(database);
        let found = self
            .call("get_database", |c| {
                let db = db.clone();
                async move { answer(c.get_database(db).await) }
            })
            .await?;
        if found.is_err() {
            return Err(Error::not_found(&self.catalog, "database", database));
        }
        let mut names = self
            .call("get_all_tables", |c| {
                let db = db.clone();
                async move { answer(c.get_all_tables(db).await) }
            })
            .await?
            .map(strings)
            .map_err(|e| self.failed("tables", e))?;
        names.sort();
        Ok(names)
    }

    async fn table(&self, database: &str, table: &str) -> Result<HiveTable> {
        let (db, tbl) = (FastStr::new(database), FastStr::new(table));
        let found = self
            .call("get_table", |c| {
                let (db, tbl) = (db.clone(), tbl.clone());
                async move { answer(c.get_table(db, tbl).await) }
            })
            .await?
            .map_err(|_| Error::not_found(&self.catalog, "table", format!("{database}.{table}")))?;
        let sd = found.sd.unwrap_or_default();
        let location = sd.location.as_deref().unwrap_or_default();
        let location = self.relative(location, &format!("table {database}.{table}"))?;
        let properties: std::collections::BTreeMap<String, String> = found
            .parameters
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Ok(HiveTable {
            database: database.to_owned(),
            name: table.to_owned(),
            location,
            format: format_of(sd.input_format.as_deref().unwrap_or_default()),
            comment: properties.get("comment").cloned().unwrap_or_default(),
            columns: sd.cols.unwrap_or_default().iter().map(column).collect(),
            partition_keys: found
                .partition_keys
                .unwrap_or_default()
                .iter()
                .map(column)
                .collect(),
            properties,
        })
    }

    async fn partition_names(&self, table: &HiveTable) -> Result<PartitionNames> {
        if table.partition_keys.is_empty() {
            return Ok(PartitionNames::default());
        }
        let (db, tbl) = (FastStr::new(&table.database), FastStr::new(&table.name));
        let mut names = self
            .call("get_partition_names", |c| {
                let (db, tbl) = (db.clone(), tbl.clone());
                async move { answer(c.get_partition_names(db, tbl, -1).await) }
            })
            .await?
            .map(strings)
            .map_err(|e| self.failed("partition names", e))?;
        names.sort();
        Ok(PartitionNames(names))
    }

    async fn partition_location(&self, table: &HiveTable, name: &str) -> Result<String> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let table_key = (table.database.clone(), table.name.clone());
        let leader = {
            let mut pending = self.pending.lock();
            let batch = pending.entry(table_key.clone()).or_default();
            batch.push((name.to_owned(), tx));
            batch.len() == 1
        };
        if leader {
            // Should this lookup be cancelled while it gathers, the batch goes with it: the
            // others' channels close and they look themselves up alone (never wait forever).
            let gathering = Gathering {
                pending: &self.pending,
                key: Some(table_key),
            };
            // Let the other partition lookups of this planning request join the batch.
            for _ in 0..BATCH_WAIT_YIELDS {
                tokio::task::yield_now().await;
            }
            let mut batch = gathering.take();
            while !batch.is_empty() {
                let rest = batch.split_off(batch.len().min(PARTITION_BATCH));
                self.fetch_locations(table, std::mem::replace(&mut batch, rest))
                    .await;
            }
        }
        match rx.await {
            Ok(answer) => answer,
            // The leader was cancelled before answering: look this one up alone.
            Err(_) => self.fetch_one(table, name).await,
        }
    }

    async fn column_stats(
        &self,
        table: &HiveTable,
        columns: &[String],
    ) -> Result<HashMap<String, ColumnStatistics>> {
        let request = hive_metastore::TableStatsRequest {
            db_name: FastStr::new(&table.database),
            tbl_name: FastStr::new(&table.name),
            col_names: columns.iter().map(FastStr::new).collect(),
        };
        let answered = self
            .call("get_table_statistics_req", |c| {
                let request = request.clone();
                async move { answer(c.get_table_statistics_req(request).await) }
            })
            .await?;
        // Columns without statistics are left out of the answer; a table without any is a
        // NoSuchObjectException: nothing to keep either way.
        let mut found: HashMap<String, ColumnStatistics> = answered
            .map(|r| r.table_stats)
            .unwrap_or_default()
            .iter()
            .map(|o| (o.col_name.to_string(), column_statistics(&o.stats_data)))
            .collect();
        // Spark's ANALYZE TABLE … FOR COLUMNS keeps them in table parameters instead.
        for column in columns {
            if !found.contains_key(column)
                && let Some(statistics) = spark_statistics(table, column)
            {
                found.insert(column.clone(), statistics);
            }
        }
        Ok(found)
    }
}

impl ThriftMetastore {
    /// Answers every lookup of `batch` with one `get_partitions_by_names` call: each partition's
    /// location, not-found for names the metastore does not have, or the call's error.
    async fn fetch_locations(&self, table: &HiveTable, batch: Waiting) {
        let (db, tbl) = (FastStr::new(&table.database), FastStr::new(&table.name));
        let names: Vec<FastStr> = batch.iter().map(|(n, _)| FastStr::new(n)).collect();
        let fetched = self
            .call("get_partitions_by_names", |c| {
                let (db, tbl, names) = (db.clone(), tbl.clone(), names.clone());
                async move { answer(c.get_partitions_by_names(db, tbl, names).await) }
            })
            .await;
        let keys: Vec<String> = table
            .partition_keys
            .iter()
            .map(|c| c.name.clone())
            .collect();
        let partitions =
            match fetched.and_then(|answer| answer.map_err(|e| self.failed("partitions", e))) {
                Ok(partitions) => partitions,
                Err(error) => {
                    for (_, tx) in batch {
                        let _ = tx.send(Err(error.clone()));
                    }
                    return;
                }
            };
        let by_values: HashMap<Vec<String>, String> = partitions
            .into_iter()
            .map(|mut p| (strings(p.values.take().unwrap_or_default()), location_of(p)))
            .collect();
        for (name, tx) in batch {
            let answer = match super::names::parse(&name, &keys).and_then(|v| by_values.get(&v)) {
                Some(location) => self.partition_dir(table, &name, location),
                None => Err(self.no_partition(table, &name)),
            };
            let _ = tx.send(answer);
        }
    }

    /// One partition's location by itself (`get_partition_by_name`).
    async fn fetch_one(&self, table: &HiveTable, name: &str) -> Result<String> {
        let (db, tbl, part) = (
            FastStr::new(&table.database),
            FastStr::new(&table.name),
            FastStr::new(name),
        );
        let partition = self
            .call("get_partition_by_name", |c| {
                let (db, tbl, part) = (db.clone(), tbl.clone(), part.clone());
                async move { answer(c.get_partition_by_name(db, tbl, part).await) }
            })
            .await?
            .map_err(|_| self.no_partition(table, name))?;
        let location = location_of(partition);
        self.partition_dir(table, name, &location)
    }

    /// The store-relative directory of partition `name` recorded at `location` (the table's
    /// directory and the name when the metastore recorded none).
    fn partition_dir(&self, table: &HiveTable, name: &str, location: &str) -> Result<String> {
        if location.is_empty() {
            return Ok(format!("{}/{name}", table.location));
        }
        self.relative(
            location,
            &format!("partition {}.{}/{name}", table.database, table.name),
        )
    }

    fn no_partition(&self, table: &HiveTable, name: &str) -> Error {
        Error::not_found(
            &self.catalog,
            "partition",
            format!("{}.{}/{name}", table.database, table.name),
        )
    }

    /// A call the metastore refused with an exception.
    fn failed(&self, what: &str, exception: String) -> Error {
        Error::Connection {
            catalog: self.catalog.clone(),
            reason: format!("the Hive Metastore refused to list {what}: {exception}"),
        }
    }
}
