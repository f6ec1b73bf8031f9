//! Precise invalidation from the Hive Metastore's notification log: a per-catalog poller
//! (`hms_events_polling_interval_ms`) reads the events after its cursor and removes exactly the
//! cached values they make stale.
//!
//! # What an event removes
//! | event | removed |
//! |---|---|
//! | `ADD_PARTITION`, `DROP_PARTITION` | the table's partition names and partition view; the named partitions and their file listings |
//! | `ALTER_PARTITION` | the named partition and its file listing |
//! | `INSERT` | the file listings of the named partition, else of the table |
//! | `CREATE_TABLE`, `ALTER_TABLE`, `DROP_TABLE` | every value of the table (and of its new name after a rename) |
//! | `UPDATE_TABLE_COLUMN_STAT`, `DELETE_TABLE_COLUMN_STAT` | the table's column statistics |
//! | `CREATE_DATABASE`, `ALTER_DATABASE`, `DROP_DATABASE` | every value of the database |
//! | functions, indexes, constraints, transactions, partition column statistics | nothing (ignored: no cache holds them) |
//! | any other type | every value of the catalog; the cursor moves to the metastore's newest event |
//!
//! A partition event whose message cannot be read (another message format) removes every value
//! of its table instead: still exact for the rest of the catalog.
//!
//! # Invariants
//! - Events are applied in id order, each once; the cursor moves past an event only after it
//!   was applied.
//! - A gap (the first event after the cursor is not the next id: the metastore cleaned its log,
//!   or its position went backwards) drops every cache of the catalog and moves the cursor to
//!   the metastore's newest event: nothing stale survives an event that was never seen.
//! - Invalidation fences loads in flight (a load that started before it never stores).
//! - On start the cursor is the metastore's newest event and the catalog's caches are dropped
//!   once, so a load that raced the first cursor read cannot keep a value an event already
//!   changed.
//! - The poller stops when its connector goes (ALTER of the catalog's properties, DROP) or the
//!   catalog is dropped; a poll that fails is counted and retried at the next tick.

use std::collections::BTreeMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use hive_metastore::{NotificationEvent, NotificationEventRequest};
use metacache_catalog::{CacheId, Catalog, MetaKey, ResetReason, SourceEvents, TableKey};
use metacache_engines::builtin::hive;
use metacache_estimate::EstimateSize;
use volo_thrift::ClientError;

use super::thrift::{Call, ThriftMetastore};
use super::values::{LocationKey, PartitionKey};
use super::{ColumnKey, ColumnStatistics, HivePartition, PARTITION_VIEW, PartitionNames};
use crate::{Error, Result};

/// Events asked for in one `get_next_notification` call.
const BATCH: i32 = 1000;
/// Batches read in one poll at most; the rest waits for the next tick.
const MAX_BATCHES_PER_POLL: usize = 10;
/// The engines whose caches hold metastore partition names, partitions and column statistics.
const METASTORE_ENGINES: [&str; 2] = ["hive", "hudi"];

/// A running poller; stopped when dropped.
#[derive(Debug)]
pub struct EventPoller {
    task: tokio::task::JoinHandle<()>,
    events: Arc<SourceEvents>,
}

impl Drop for EventPoller {
    fn drop(&mut self) {
        self.task.abort();
        self.events.set_running(false);
    }
}

impl EventPoller {
    /// Starts polling `metastore` every `interval` for `catalog`; `None` outside a Tokio
    /// runtime (a connector built by a synchronous embedding), which is logged.
    pub fn start(
        catalog: &Arc<Catalog>,
        metastore: Arc<ThriftMetastore>,
        interval: Duration,
    ) -> Option<Self> {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(catalog = %catalog.name(), "no async runtime: metastore events are not polled");
            return None;
        };
        let events = Arc::clone(catalog.events());
        events.set_running(true);
        let weak = Arc::downgrade(catalog);
        let task = runtime.spawn(run(weak, metastore, interval));
        Some(Self { task, events })
    }
}

async fn run(catalog: Weak<Catalog>, metastore: Arc<ThriftMetastore>, interval: Duration) {
    let mut started = false;
    loop {
        let Some(current) = catalog.upgrade().filter(|c| !c.is_dropped()) else {
            return;
        };
        let events = Arc::clone(current.events());
        if started {
            poll(&current, &metastore, &events).await;
        } else {
            match metastore.current_event_id().await {
                Ok(position) => {
                    events.start_at(position);
                    events.polled(position);
                    current.refresh();
                    started = true;
                    tracing::info!(catalog = %current.name(), position, "polling metastore events");
                }
                Err(error) => events.poll_failed(error.to_string()),
            }
        }
        drop(current);
        tokio::time::sleep(interval).await;
    }
}

/// One poll: the metastore's newest event, then every event after the cursor up to it.
async fn poll(catalog: &Catalog, metastore: &ThriftMetastore, events: &SourceEvents) {
    let position = match metastore.current_event_id().await {
        Ok(position) => position,
        Err(error) => return events.poll_failed(error.to_string()),
    };
    if position < events.cursor() {
        let why = format!(
            "the metastore's newest event {position} is older than the cursor {}",
            events.cursor()
        );
        return reset(catalog, events, ResetReason::Gap, position, why);
    }
    for _ in 0..MAX_BATCHES_PER_POLL {
        let cursor = events.cursor();
        if cursor >= position {
            break;
        }
        let batch = match metastore.next_events(cursor).await {
            Ok(batch) => batch,
            Err(error) => return events.poll_failed(error.to_string()),
        };
        if batch.is_empty() {
            let why = format!("no event after {cursor}, though the metastore is at {position}");
            return reset(catalog, events, ResetReason::Gap, position, why);
        }
        let mut expected = cursor + 1;
        for event in &batch {
            let id = u64::try_from(event.event_id).unwrap_or(0);
            if id != expected {
                let why = format!("event {expected} is gone from the log (the next is {id})");
                return reset(catalog, events, ResetReason::Gap, position.max(id), why);
            }
            let kind = event.event_type.as_str();
            match effect(event) {
                Effect::Unknown => {
                    let why = format!("event {id} of type '{kind}' cannot be applied");
                    return reset(
                        catalog,
                        events,
                        ResetReason::Unapplied,
                        position.max(id),
                        why,
                    );
                }
                effect => {
                    let ignored = matches!(effect, Effect::Nothing);
                    let (tables, partitions) = apply(catalog, &effect);
                    let millis = u64::try_from(event.event_time).unwrap_or(0) * 1000;
                    events.applied(id, millis, ignored, tables, partitions);
                    tracing::debug!(catalog = %catalog.name(), id, kind, tables, partitions, "metastore event applied");
                }
            }
            expected = id + 1;
        }
    }
    events.polled(position);
}

fn reset(
    catalog: &Catalog,
    events: &SourceEvents,
    reason: ResetReason,
    position: u64,
    why: String,
) {
    let dropped = catalog.refresh();
    tracing::warn!(catalog = %catalog.name(), ?reason, position, dropped, "{why}; every cache of the catalog was dropped");
    events.reset(reason, position, why);
    events.polled(position);
}

/// Partition values by partition column, as an event names a partition.
type Values = BTreeMap<String, String>;

/// What an event makes stale.
#[derive(Debug, PartialEq)]
enum Effect {
    /// Nothing cached depends on it.
    Nothing,
    /// Every value of a database.
    Database(String),
    /// Every value of these tables.
    Tables(Vec<TableKey>),
    /// Partitions added or dropped: the table's name list and view, and these partitions.
    PartitionSet(TableKey, Vec<Values>),
    /// Partitions changed in place: these partitions and their listings.
    PartitionObjects(TableKey, Vec<Values>),
    /// Data written: the listings of these partitions, or of the whole table when empty.
    Files(TableKey, Vec<Values>),
    /// The table's column statistics.
    ColumnStats(TableKey),
    /// An event whose effect cannot be bounded.
    Unknown,
}

/// What `event` makes stale, from its type, names and (for partitions) its JSON message.
fn effect(event: &NotificationEvent) -> Effect {
    let database = event.db_name.as_deref().unwrap_or_default().to_owned();
    let table = event.table_name.as_deref().unwrap_or_default().to_owned();
    let key = || TableKey::new(database.clone(), table.clone());
    let message = || serde_json::from_str::<serde_json::Value>(&event.message).ok();
    // A partition event without a readable message: the whole table, still exact elsewhere.
    let partitions = |field: &str, then: fn(TableKey, Vec<Values>) -> Effect| match message()
        .and_then(|m| partition_values(m.get(field)?))
    {
        Some(values) => then(key(), values),
        None => Effect::Tables(vec![key()]),
    };
    match event.event_type.as_str() {
        "ADD_PARTITION" | "DROP_PARTITION" if !table.is_empty() => {
            partitions("partitions", Effect::PartitionSet)
        }
        "ALTER_PARTITION" if !table.is_empty() => {
            match message().and_then(|m| values_of(m.get("keyValues")?)) {
                Some(values) => Effect::PartitionObjects(key(), vec![values]),
                None => Effect::Tables(vec![key()]),
            }
        }
        "INSERT" if !table.is_empty() => {
            let values = message()
                .and_then(|m| values_of(m.get("partKeyVals")?))
                .filter(|v| !v.is_empty());
            Effect::Files(key(), values.into_iter().collect())
        }
        "CREATE_TABLE" | "DROP_TABLE" if !table.is_empty() => Effect::Tables(vec![key()]),
        "ALTER_TABLE" if !table.is_empty() => {
            let mut tables = vec![key()];
            if let Some(renamed) = message().and_then(|m| renamed_to(&m))
                && renamed != tables[0]
            {
                tables.push(renamed);
            }
            Effect::Tables(tables)
        }
        "UPDATE_TABLE_COLUMN_STAT" | "DELETE_TABLE_COLUMN_STAT" if !table.is_empty() => {
            Effect::ColumnStats(key())
        }
        "CREATE_DATABASE" | "ALTER_DATABASE" | "DROP_DATABASE" if !database.is_empty() => {
            Effect::Database(database)
        }
        "CREATE_FUNCTION"
        | "DROP_FUNCTION"
        | "CREATE_INDEX"
        | "DROP_INDEX"
        | "ALTER_INDEX"
        | "OPEN_TXN"
        | "COMMIT_TXN"
        | "ABORT_TXN"
        | "ALLOC_WRITE_ID"
        | "ACID_WRITE"
        | "BATCH_ACID_WRITE"
        | "UPDATE_PARTITION_COLUMN_STAT"
        | "DELETE_PARTITION_COLUMN_STAT"
        | "ADD_PRIMARYKEY"
        | "ADD_FOREIGNKEY"
        | "ADD_UNIQUECONSTRAINT"
        | "ADD_NOTNULLCONSTRAINT"
        | "ADD_DEFAULTCONSTRAINT"
        | "ADD_CHECKCONSTRAINT"
        | "DROP_CONSTRAINT"
        | "CREATE_ISCHEMA"
        | "ALTER_ISCHEMA"
        | "DROP_ISCHEMA"
        | "ADD_SCHEMA_VERSION"
        | "ALTER_SCHEMA_VERSION"
        | "DROP_SCHEMA_VERSION"
        | "CREATE_CATALOG"
        | "ALTER_CATALOG"
        | "DROP_CATALOG"
        | "COMMIT_COMPACTION"
        | "RELOAD"
        | "OPEN_TXN_BATCH" => Effect::Nothing,
        _ => Effect::Unknown,
    }
}

/// `[{"k1": "v1", "k2": "v2"}, …]`.
fn partition_values(list: &serde_json::Value) -> Option<Vec<Values>> {
    list.as_array()?.iter().map(values_of).collect()
}

/// `{"k1": "v1", …}`, keys lower-cased as Hive stores them.
fn values_of(map: &serde_json::Value) -> Option<Values> {
    map.as_object()?
        .iter()
        .map(|(k, v)| Some((k.to_ascii_lowercase(), v.as_str()?.to_owned())))
        .collect()
}

/// The table an `ALTER_TABLE` leaves behind, from `tableObjAfterJson` (Thrift's JSON protocol:
/// field 1 is the table name, field 2 its database).
fn renamed_to(message: &serde_json::Value) -> Option<TableKey> {
    let after: serde_json::Value =
        serde_json::from_str(message.get("tableObjAfterJson")?.as_str()?).ok()?;
    let field = |id: &str| after.get(id)?.get("str")?.as_str().map(str::to_owned);
    Some(TableKey::new(field("2")?, field("1")?))
}

/// Whether partition `name` (`k1=v1/k2=v2`, escaped) has exactly the values of `wanted`.
fn name_matches(name: &str, wanted: &Values) -> bool {
    let mut count = 0;
    for component in name.split('/') {
        let Some((key, value)) = super::names::split_component(component) else {
            return false;
        };
        if wanted.get(&key.to_ascii_lowercase()) != Some(&value) {
            return false;
        }
        count += 1;
    }
    count == wanted.len()
}

/// Whether a directory ends with the partition directories of `wanted`.
fn location_matches(location: &str, wanted: &Values) -> bool {
    let components: Vec<&str> = location.trim_end_matches('/').split('/').collect();
    let Some(start) = components.len().checked_sub(wanted.len()) else {
        return false;
    };
    !wanted.is_empty() && name_matches(&components[start..].join("/"), wanted)
}

/// Removes, from cache `id` of `catalog` if it is built, the values of `table` (names compare
/// without case, as the metastore folds them) for which `also` holds.
fn drop_values<K, V>(
    catalog: &Catalog,
    id: &CacheId<K, V>,
    table: &TableKey,
    also: impl Fn(&K) -> bool,
) where
    K: MetaKey,
    V: EstimateSize + Send + Sync + 'static,
{
    if let Some(cache) = catalog.built_cache(id) {
        cache.invalidate_keys_if(|k| {
            k.database()
                .is_some_and(|d| d.eq_ignore_ascii_case(&table.database))
                && k.table()
                    .is_some_and(|t| t.eq_ignore_ascii_case(&table.table))
                && also(k)
        });
    }
}

/// Removes what `effect` makes stale from `catalog`'s caches: (tables, partitions) counted.
fn apply(catalog: &Catalog, effect: &Effect) -> (u64, u64) {
    match effect {
        Effect::Nothing | Effect::Unknown => (0, 0),
        Effect::Database(database) => {
            catalog.refresh_database(database);
            (0, 0)
        }
        Effect::Tables(tables) => {
            for t in tables {
                catalog.refresh_table(&t.database, &t.table);
            }
            (tables.len() as u64, 0)
        }
        Effect::PartitionSet(table, values) => {
            for engine in METASTORE_ENGINES {
                drop_values(
                    catalog,
                    &CacheId::<TableKey, PartitionNames>::new(engine, hive::PARTITION_NAMES),
                    table,
                    |_| true,
                );
            }
            drop_values(catalog, &PARTITION_VIEW, table, |_| true);
            partition_objects(catalog, table, values);
            (0, values.len() as u64)
        }
        Effect::PartitionObjects(table, values) => {
            partition_objects(catalog, table, values);
            (0, values.len() as u64)
        }
        Effect::Files(table, values) => {
            listings(catalog, table, values);
            (0, values.len() as u64)
        }
        Effect::ColumnStats(table) => {
            for engine in METASTORE_ENGINES {
                drop_values(
                    catalog,
                    &CacheId::<ColumnKey, ColumnStatistics>::new(engine, hive::COLUMN_STATS),
                    table,
                    |_| true,
                );
            }
            (1, 0)
        }
    }
}

/// The partitions of `values` and their listings.
fn partition_objects(catalog: &Catalog, table: &TableKey, values: &[Values]) {
    for engine in METASTORE_ENGINES {
        drop_values(
            catalog,
            &CacheId::<PartitionKey, HivePartition>::new(engine, hive::PARTITION),
            table,
            |k| values.iter().any(|v| name_matches(&k.name, v)),
        );
    }
    listings(catalog, table, values);
}

/// The file listings of the partitions of `values`, or every listing of the table.
fn listings(catalog: &Catalog, table: &TableKey, values: &[Values]) {
    drop_values(catalog, &super::FILE, table, |k: &LocationKey| {
        values.is_empty() || values.iter().any(|v| location_matches(&k.location, v))
    });
}

impl ThriftMetastore {
    /// The id of the newest event in the metastore's notification log.
    pub async fn current_event_id(&self) -> Result<u64> {
        let id = self
            .call("get_current_notificationEventId", |c| async move {
                notification(c.get_current_notification_event_id().await)
            })
            .await?
            .map_err(|e| self.refused("the newest notification event", e))?;
        Ok(u64::try_from(id.event_id).unwrap_or(0))
    }

    /// Up to [`BATCH`] events after `cursor`, in id order.
    pub async fn next_events(&self, cursor: u64) -> Result<Vec<NotificationEvent>> {
        let last_event = i64::try_from(cursor).unwrap_or(i64::MAX);
        let mut events = self
            .call("get_next_notification", |c| async move {
                let request = NotificationEventRequest {
                    last_event,
                    max_events: Some(BATCH),
                };
                notification(c.get_next_notification(request).await)
            })
            .await?
            .map_err(|e| self.refused("notification events", e))?
            .events;
        events.sort_by_key(|e| e.event_id);
        Ok(events)
    }

    fn refused(&self, what: &str, reason: String) -> Error {
        Error::Connection {
            catalog: self.catalog().to_owned(),
            reason: format!("the Hive Metastore refused to give {what}: {reason}"),
        }
    }
}

/// A notification call's outcome: an application error (an unknown method on an old metastore,
/// a server-side failure) is the metastore's answer; a transport error moves to the next URI.
fn notification<T>(
    result: std::result::Result<T, ClientError>,
) -> Call<std::result::Result<T, String>> {
    match result {
        Ok(value) => Call::Answer(Ok(value)),
        Err(ClientError::Application(e)) => Call::Answer(Err(e.to_string())),
        Err(error) => Call::Unreachable(error.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pilota::FastStr;

    fn event(kind: &str, db: &str, table: &str, message: &str) -> NotificationEvent {
        NotificationEvent {
            event_id: 1,
            event_time: 0,
            event_type: FastStr::new(kind),
            db_name: Some(FastStr::new(db)),
            table_name: (!table.is_empty()).then(|| FastStr::new(table)),
            message: FastStr::new(message),
            message_format: Some(FastStr::from_static_str("json-0.2")),
        }
    }

    fn values(pairs: &[(&str, &str)]) -> Values {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn partition_events_name_their_partitions() {
        // As Hive 2.3's JSONMessageFactory writes them.
        let added = r#"{"server":"","servicePrincipal":"","db":"sales","table":"orders","tableType":"MANAGED_TABLE","timestamp":1700000000,"partitions":[{"dt":"2024-01-03","region":"eu"}],"partitionListJson":[]}"#;
        let key = TableKey::new("sales", "orders");
        assert_eq!(
            effect(&event("ADD_PARTITION", "sales", "orders", added)),
            Effect::PartitionSet(
                key.clone(),
                vec![values(&[("dt", "2024-01-03"), ("region", "eu")])]
            )
        );
        let altered = r#"{"db":"sales","table":"orders","keyValues":{"dt":"2024-01-03"}}"#;
        assert_eq!(
            effect(&event("ALTER_PARTITION", "sales", "orders", altered)),
            Effect::PartitionObjects(key.clone(), vec![values(&[("dt", "2024-01-03")])])
        );
        // Unreadable (a gzip message of Hive 4): the whole table.
        assert_eq!(
            effect(&event("DROP_PARTITION", "sales", "orders", "H4sIAAAA")),
            Effect::Tables(vec![key])
        );
    }

    #[test]
    fn table_events_and_renames() {
        let after = r#"{"1":{"str":"orders_2024"},"2":{"str":"sales"}}"#;
        let message = serde_json::json!({ "tableObjAfterJson": after }).to_string();
        assert_eq!(
            effect(&event("ALTER_TABLE", "sales", "orders", &message)),
            Effect::Tables(vec![
                TableKey::new("sales", "orders"),
                TableKey::new("sales", "orders_2024")
            ])
        );
        assert_eq!(
            effect(&event("DROP_DATABASE", "web", "", "{}")),
            Effect::Database("web".to_owned())
        );
        assert_eq!(
            effect(&event("CREATE_FUNCTION", "web", "", "{}")),
            Effect::Nothing
        );
        assert_eq!(
            effect(&event("SOMETHING_NEW", "web", "t", "{}")),
            Effect::Unknown
        );
        // A table event that names no table cannot be bounded.
        assert_eq!(
            effect(&event("DROP_TABLE", "web", "", "{}")),
            Effect::Unknown
        );
    }

    #[test]
    fn partitions_match_by_values_in_any_order_and_escaping() {
        let wanted = values(&[("dt", "2024-01-03"), ("path", "a/b")]);
        assert!(name_matches("dt=2024-01-03/path=a%2Fb", &wanted));
        assert!(!name_matches("dt=2024-01-03", &wanted));
        assert!(!name_matches("dt=2024-01-04/path=a%2Fb", &wanted));
        assert!(location_matches(
            "sales.db/orders/dt=2024-01-03/path=a%2Fb",
            &wanted
        ));
        assert!(!location_matches("sales.db/orders", &wanted));
        assert!(!location_matches("x", &Values::new()));
    }
}
