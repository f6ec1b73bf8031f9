//! The ADBC/JDBC-style connector, over PostgreSQL: namespaces (schemas), table names and table
//! schemas from `information_schema`, through the three `adbc` caches that share the
//! `adbc.metadata` budget.
//!
//! | question | cache (ENTRY_NAME) | key | loads on a miss |
//! |---|---|---|---|
//! | `SHOW DATABASES` | `adbc-namespaces` | `""` (the catalog) | one query on `information_schema.schemata` |
//! | `SHOW TABLES` | `adbc-table-names` | `DatabaseKey` | one query on `information_schema.tables` |
//! | `DESC` | `adbc-table-schema` | `TableKey` | one query on `information_schema.columns` |
//!
//! # Invariants
//! - Each load opens its own connection (loads are what the caches spare; a pool would hold
//!   connections for nothing between them) and closes it when done.
//! - The password reaches only `tokio_postgres::Config`; errors never carry it.

use std::sync::Arc;

use async_trait::async_trait;
use mem_dbg::MemSize;
use metacache_cache::Cached;
use metacache_catalog::{CacheId, Catalog, DatabaseKey, Properties, TableKey};
use metacache_engines::builtin::adbc as def;
use metacache_estimate::{EstimateSize, Sizer};
use tokio_postgres::NoTls;

use crate::connector::{Connector, PartitionFilter, through};
use crate::error::tables_of_known_database;
use crate::{ColumnInfo, Error, PartitionFiles, PartitionInfo, Result, TableInfo, TableSchema};

/// A sorted list of names.
#[derive(Debug, Clone, PartialEq, Eq, Default, MemSize)]
pub struct NameList(pub Vec<String>);

impl EstimateSize for NameList {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        sizer.add_vec(&self.0, |s, n| s.add_string(n));
    }
}

/// `adbc-namespaces`.
pub const NAMESPACES: CacheId<String, NameList> = CacheId::new("adbc", def::NAMESPACES);
/// `adbc-table-names`.
pub const TABLE_NAMES: CacheId<DatabaseKey, NameList> = CacheId::new("adbc", def::TABLE_NAMES);
/// `adbc-table-schema`.
pub const TABLE_SCHEMA: CacheId<TableKey, TableSchema> = CacheId::new("adbc", def::TABLE_SCHEMA);

const SCHEMATA: &str = "SELECT schema_name::text FROM information_schema.schemata \
     WHERE schema_name NOT IN ('pg_catalog', 'information_schema') \
     AND schema_name NOT LIKE 'pg\\_toast%' AND schema_name NOT LIKE 'pg\\_temp\\_%' \
     ORDER BY 1";
const TABLES: &str = "SELECT table_name::text FROM information_schema.tables \
     WHERE table_schema = $1 ORDER BY 1";
const COLUMNS: &str = "SELECT column_name::text, data_type::text, is_nullable::text, \
     coalesce(col_description(format('%I.%I', table_schema, table_name)::regclass, ordinal_position::int), '') \
     FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 \
     ORDER BY ordinal_position";

/// A jdbc/adbc catalog over PostgreSQL.
pub struct PostgresConnector {
    catalog: Arc<Catalog>,
    server: Arc<Postgres>,
}

/// The server of a jdbc/adbc catalog and the questions it is asked, shared with the refreshers
/// of the catalog's caches (which run without a connector at hand).
struct Postgres {
    /// The catalog's name, for messages.
    catalog: String,
    config: tokio_postgres::Config,
    /// `host:port/db`, for messages (never the user or password).
    target: String,
}

impl std::fmt::Debug for PostgresConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresConnector")
            .field("catalog", &self.catalog.name())
            .field("target", &self.server.target)
            .finish_non_exhaustive()
    }
}

impl PostgresConnector {
    /// The connector of `catalog` from its properties: `jdbc_url`
    /// (`jdbc:postgresql://host:port/db`) or `uri` (`postgresql://host:port/db`), `user`,
    /// `password`.
    pub fn open(catalog: Arc<Catalog>, properties: &Properties) -> Result<Self> {
        let name = catalog.name().to_string();
        let invalid = |reason: String| Error::Connection {
            catalog: name.clone(),
            reason,
        };
        let get = |key: &str| properties.get(key).map(str::trim).filter(|v| !v.is_empty());
        let url = get("jdbc_url").or_else(|| get("uri")).ok_or_else(|| {
            invalid("set 'jdbc_url' (jdbc:postgresql://host:port/database)".to_owned())
        })?;
        let rest = url
            .strip_prefix("jdbc:postgresql://")
            .or_else(|| url.strip_prefix("postgresql://"))
            .or_else(|| url.strip_prefix("postgres://"))
            .ok_or_else(|| invalid("'jdbc_url' must start with jdbc:postgresql://".to_owned()))?;
        let (address, database) = rest.split_once('/').unwrap_or((rest, "postgres"));
        let database = database.split(['?', ';']).next().unwrap_or("postgres");
        let address = address.rsplit('@').next().unwrap_or(address);
        let (host, port) = match address.rsplit_once(':') {
            Some((host, port)) => (
                host,
                port.parse::<u16>()
                    .map_err(|_| invalid(format!("'jdbc_url' has a bad port '{port}'")))?,
            ),
            None => (address, 5432),
        };
        if host.is_empty() {
            return Err(invalid("'jdbc_url' names no host".to_owned()));
        }
        let mut config = tokio_postgres::Config::new();
        config
            .host(host)
            .port(port)
            .dbname(database)
            .user(get("user").unwrap_or("postgres"))
            .application_name("metacache")
            .connect_timeout(crate::network::timeouts().connect);
        if let Some(password) = get("password") {
            config.password(password);
        }
        let server = Arc::new(Postgres {
            catalog: name.clone(),
            target: format!("{host}:{port}/{database}"),
            config,
        });
        register_refreshers(&catalog, &server);
        Ok(Self { catalog, server })
    }

    /// The namespaces (`adbc-namespaces`).
    pub async fn namespaces(&self) -> Result<Cached<NameList>> {
        let server = &self.server;
        through(&self.catalog, &NAMESPACES, String::new(), || {
            server.namespaces()
        })
        .await
    }
}

/// Registers how each cache of the catalog is reloaded without a caller (refresh-ahead, when an
/// admin turns `meta.cache.adbc.metadata.auto-refresh` on: the query is the check, so it is off
/// by default).
fn register_refreshers(catalog: &Catalog, server: &Arc<Postgres>) {
    use metacache_cache::{Refreshed, refresher};
    let s = Arc::clone(server);
    catalog.set_refresher(
        &NAMESPACES,
        refresher(move |_key: String, _old| {
            let s = Arc::clone(&s);
            async move { Ok(Refreshed::Changed(s.namespaces().await?)) }
        }),
    );
    let s = Arc::clone(server);
    catalog.set_refresher(
        &TABLE_NAMES,
        refresher(move |key: DatabaseKey, _old| {
            let s = Arc::clone(&s);
            async move { Ok(Refreshed::Changed(s.table_names(&key.0).await?)) }
        }),
    );
    let s = Arc::clone(server);
    catalog.set_refresher(
        &TABLE_SCHEMA,
        refresher(move |key: TableKey, _old| {
            let s = Arc::clone(&s);
            async move {
                Ok(Refreshed::Changed(
                    s.columns(&key.database, &key.table).await?,
                ))
            }
        }),
    );
}

impl Postgres {
    async fn query(&self, sql: &str, params: &[&str]) -> Result<Vec<tokio_postgres::Row>> {
        let failed = |e: tokio_postgres::Error| Error::Invalid {
            location: format!("postgresql://{}", self.target),
            reason: e.to_string(),
        };
        let (client, connection) = self.config.connect(NoTls).await.map_err(failed)?;
        let driver = tokio::spawn(connection);
        let params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = params
            .iter()
            .map(|p| p as &(dyn tokio_postgres::types::ToSql + Sync))
            .collect();
        let limit = crate::network::timeouts().request;
        let rows = match tokio::time::timeout(limit, client.query(sql, &params)).await {
            Ok(rows) => rows.map_err(failed),
            Err(_) => Err(Error::Invalid {
                location: format!("postgresql://{}", self.target),
                reason: format!(
                    "no answer within {} s (source_request_timeout_seconds)",
                    limit.as_secs()
                ),
            }),
        };
        drop(client);
        let _ = driver.await;
        rows
    }

    fn text(row: &tokio_postgres::Row, index: usize) -> String {
        row.try_get::<_, Option<String>>(index)
            .ok()
            .flatten()
            .unwrap_or_default()
    }

    async fn namespaces(&self) -> Result<NameList> {
        let rows = self.query(SCHEMATA, &[]).await?;
        Ok(NameList(rows.iter().map(|r| Self::text(r, 0)).collect()))
    }

    /// The tables of `database`; an unknown database is an error, not an empty list.
    async fn table_names(&self, database: &str) -> Result<NameList> {
        let rows = self.query(TABLES, &[database]).await?;
        let names: Vec<String> = rows.iter().map(|r| Self::text(r, 0)).collect();
        let names = tables_of_known_database(names, &self.catalog, database, async {
            Ok(self.namespaces().await?.0)
        })
        .await?;
        Ok(NameList(names))
    }

    async fn columns(&self, database: &str, table: &str) -> Result<TableSchema> {
        let rows = self.query(COLUMNS, &[database, table]).await?;
        if rows.is_empty() {
            let name = format!("{database}.{table}");
            return Err(Error::not_found(&self.catalog, "table", name));
        }
        let mut columns: Vec<ColumnInfo> = rows
            .iter()
            .map(|r| ColumnInfo {
                name: Self::text(r, 0),
                data_type: Self::text(r, 1),
                nullable: Self::text(r, 2) == "YES",
                comment: Self::text(r, 3),
            })
            .collect();
        columns.shrink_to_fit();
        Ok(TableSchema {
            columns,
            partition_keys: Vec::new(),
        })
    }
}

#[async_trait]
impl Connector for PostgresConnector {
    fn kind(&self) -> &'static str {
        "jdbc"
    }

    async fn databases(&self) -> Result<Vec<String>> {
        Ok(self.namespaces().await?.0.clone())
    }

    async fn tables(&self, database: &str) -> Result<Vec<String>> {
        let key = DatabaseKey(database.to_owned());
        let server = &self.server;
        let names = through(&self.catalog, &TABLE_NAMES, key, || {
            server.table_names(database)
        })
        .await?;
        Ok(names.0.clone())
    }

    async fn table(&self, database: &str, table: &str) -> Result<TableInfo> {
        self.schema(database, table).await?;
        Ok(TableInfo {
            database: database.to_owned(),
            table: table.to_owned(),
            location: format!("postgresql://{}", self.server.target),
            format: "postgresql".to_owned(),
            comment: String::new(),
            partition_keys: Vec::new(),
        })
    }

    async fn schema(&self, database: &str, table: &str) -> Result<Cached<TableSchema>> {
        let server = &self.server;
        through(
            &self.catalog,
            &TABLE_SCHEMA,
            TableKey::new(database, table),
            || server.columns(database, table),
        )
        .await
    }

    async fn partitions(
        &self,
        _database: &str,
        _table: &str,
        _filter: &PartitionFilter,
    ) -> Result<Vec<PartitionInfo>> {
        Ok(Vec::new())
    }

    async fn files(
        &self,
        _database: &str,
        _table: &str,
        _filter: &PartitionFilter,
    ) -> Result<Vec<PartitionFiles>> {
        Err(Error::Unsupported {
            what: "Data files".to_owned(),
            connector: "jdbc",
        })
    }
}
