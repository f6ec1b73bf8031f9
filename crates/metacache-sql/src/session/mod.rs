//! A SQL session: what one MySQL connection or one HTTP request runs statements in — the
//! current catalog and database, the last statement's warnings, and a DataFusion context.

use std::sync::Arc;

use datafusion::execution::memory_pool::{MemoryPool, MemoryReservation};
use datafusion::prelude::SessionContext;
use metacache_catalog::node_config::like;
use metacache_catalog::{CatalogManager, CreateCatalog, Properties};
use metacache_sources::Sources;

use crate::metadata::{self, TableRef};
use crate::output::{Column, Output};
use crate::statement::{Statement, parse};
use crate::system::{INFORMATION_SCHEMA, INTERNAL_CATALOG, SystemContext};
use crate::variables::{register_session_functions, show_variables};
use crate::{Error, Result, mysql_show, query};

mod show;

/// Runs statements for any number of sessions.
pub struct SqlEngine {
    system: SystemContext,
    /// When the engine started (`SHOW STATUS`'s `Uptime`).
    started: std::time::Instant,
    sources: Arc<Sources>,
    /// The node's query memory (`query_memory_limit`), shared by every session.
    pool: Arc<dyn MemoryPool>,
}

impl SqlEngine {
    /// An engine over `manager`, reporting `fe_host` as this node's name.
    pub fn new(manager: Arc<CatalogManager>, fe_host: &str) -> Arc<Self> {
        Self::with_peers(manager, fe_host, None)
    }

    /// An engine of a node of a cluster: the tables that show every node ask `peers` too.
    pub fn with_peers(
        manager: Arc<CatalogManager>,
        fe_host: &str,
        peers: Option<Arc<dyn crate::system::peers::Peers>>,
    ) -> Arc<Self> {
        let mut system = SystemContext::local(Arc::clone(&manager), fe_host);
        system.peers = peers;
        Arc::new(Self {
            started: std::time::Instant::now(),
            pool: query::memory_pool(manager.node_config().query_memory_limit),
            sources: Sources::new(manager),
            system,
        })
    }

    /// This node's own rows of system table `name` (what a peer asks for), of `catalog` only
    /// when given (tables with a `CATALOG_NAME` column), as one batch of the named `columns`
    /// (every column when `None`).
    pub fn local_batch(
        &self,
        name: &str,
        catalog: Option<&str>,
        columns: Option<&[&str]>,
    ) -> std::result::Result<
        datafusion::arrow::record_batch::RecordBatch,
        crate::system::peers::LocalRowsError,
    > {
        use crate::system::peers::LocalRowsError;
        let table = crate::system::system_table(name).ok_or(LocalRowsError::NoSuchTable)?;
        let projection = columns
            .map(|columns| {
                columns
                    .iter()
                    .map(|c| {
                        table
                            .column_index(c)
                            .ok_or_else(|| LocalRowsError::NoSuchColumn {
                                table: table.name,
                                column: (*c).to_owned(),
                            })
                    })
                    .collect::<std::result::Result<Vec<_>, _>>()
            })
            .transpose()?;
        let local = SystemContext::local(Arc::clone(&self.system.manager), &self.system.fe_host);
        table
            .batch_projected(&table.rows_of(&local, catalog), projection.as_deref())
            .map_err(|e| LocalRowsError::Batch(e.to_string()))
    }

    /// The catalogs' metadata sources.
    pub fn sources(&self) -> &Arc<Sources> {
        &self.sources
    }

    /// The catalogs.
    pub fn manager(&self) -> &Arc<CatalogManager> {
        &self.system.manager
    }

    /// `FE_HOST`.
    pub fn fe_host(&self) -> &str {
        &self.system.fe_host
    }

    /// A new session for `user`.
    pub fn session(self: &Arc<Self>, user: &str, connection_id: u32) -> Result<Session> {
        let mut system = self.system.clone();
        system.notes = Arc::default();
        let notes = Arc::clone(&system.notes);
        let ctx = query::new_context(system, Arc::clone(&self.pool))?;
        let session = Session {
            notes,
            engine: Arc::clone(self),
            ctx,
            user: user.to_owned(),
            connection_id,
            catalog: INTERNAL_CATALOG.to_owned(),
            database: String::new(),
            last_database: std::collections::HashMap::new(),
            warnings: Vec::new(),
            result: None,
        };
        session.refresh_functions();
        Ok(session)
    }
}

/// One client's state.
pub struct Session {
    engine: Arc<SqlEngine>,
    ctx: SessionContext,
    user: String,
    connection_id: u32,
    catalog: String,
    database: String,
    /// The database last used in each catalog, restored by `SWITCH` (as Doris does).
    last_database: std::collections::HashMap<String, String>,
    warnings: Vec<String>,
    /// Warnings the system tables leave for the statement being run (peers that did not answer).
    notes: Arc<parking_lot::Mutex<Vec<String>>>,
    /// The last query result's bytes in the node's query pool, held until the next statement
    /// (the front end sends the result in between).
    result: Option<MemoryReservation>,
}

impl Session {
    /// The warnings of the last statement (`SHOW WARNINGS`): a result set's too, such as a peer
    /// of a cluster that did not answer.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The current database (`""` before `USE`).
    pub fn database(&self) -> &str {
        &self.database
    }

    /// Runs one statement.
    /// Read-only statements (SELECT, SHOW, DESCRIBE) are cut off after `query_timeout_seconds`;
    /// dropping them cancels their work (DataFusion's tasks, loads of which they were the only
    /// caller).
    pub async fn execute(&mut self, sql: &str) -> Result<Output> {
        self.result = None;
        self.notes.lock().clear();
        let statement = parse(sql)?;
        if statement == Statement::ShowWarnings {
            return Ok(self.show_warnings());
        }
        let result = if statement.reads_only() {
            let limit = self.engine.manager().query_timeout();
            tokio::time::timeout(limit, self.run(statement, sql))
                .await
                .unwrap_or(Err(Error::QueryTimeout {
                    seconds: limit.as_secs(),
                }))
        } else {
            self.run(statement, sql).await
        };
        self.warnings = match &result {
            Ok(Output::Done { warnings, .. }) => warnings.clone(),
            _ => Vec::new(),
        };
        self.warnings.extend(self.notes.lock().drain(..));
        result
    }

    /// The columns `sql` would answer, without running it: a query's from its plan, other
    /// statements none (their results carry their own columns). For a prepared statement's
    /// metadata; `sql` has its parameters bound (as NULL).
    pub async fn result_columns(&mut self, sql: &str) -> Result<Vec<Column>> {
        match parse(sql)? {
            Statement::Query(_) => query::columns(&self.ctx, sql).await,
            _ => Ok(Vec::new()),
        }
    }

    fn manager(&self) -> Arc<CatalogManager> {
        Arc::clone(self.engine.manager())
    }

    async fn run(&mut self, statement: Statement, sql: &str) -> Result<Output> {
        match statement {
            Statement::CreateCatalog {
                name,
                if_not_exists,
                comment,
                properties,
            } => {
                let create = CreateCatalog {
                    name,
                    if_not_exists,
                    comment,
                    properties: Properties::from_pairs(properties),
                };
                blocking(self.manager(), move |m| m.create_catalog(create).map(done)).await
            }
            Statement::AlterCatalog { name, properties } => {
                let properties = Properties::from_pairs(properties);
                blocking(self.manager(), move |m| {
                    m.alter_catalog(&name, properties).map(done)
                })
                .await
            }
            Statement::AlterCatalogComment { name, comment } => {
                blocking(self.manager(), move |m| {
                    m.alter_catalog_comment(&name, &comment).map(done)
                })
                .await
            }
            Statement::RenameCatalog { name, new_name } => {
                let (from, to) = (name.clone(), new_name.clone());
                let output = blocking(self.manager(), move |m| {
                    m.rename_catalog(&name, &new_name).map(done)
                })
                .await?;
                // This session follows the catalog; others name it anew.
                if self.catalog == from {
                    self.catalog = to.clone();
                }
                if let Some(database) = self.last_database.remove(&from) {
                    self.last_database.insert(to, database);
                }
                Ok(output)
            }
            Statement::DropCatalog { name, if_exists } => {
                blocking(self.manager(), move |m| {
                    m.drop_catalog(&name, if_exists).map(done)
                })
                .await
            }
            Statement::ShowCatalogs { like: pattern } => Ok(self.show_catalogs(pattern.as_deref())),
            Statement::ShowCatalog { name } => self.show_catalog(&name),
            Statement::ShowCreateCatalog { name } => self.show_create_catalog(&name),
            // `invalid_cache = false` (Doris) refreshes only the database and table lists, which
            // metacache reads from the source every time: nothing to remove, but the catalog
            // must exist.
            Statement::RefreshCatalog {
                name,
                invalid_cache: false,
            } => {
                self.manager().catalog(&name)?;
                Ok(affected(0))
            }
            Statement::RefreshCatalog { name, .. } => {
                Ok(affected(self.manager().refresh_catalog(&name)?))
            }
            Statement::RefreshDatabase {
                catalog,
                database,
                invalid_cache,
            } => {
                let catalog = self.external_catalog(catalog)?;
                if !invalid_cache {
                    self.manager().catalog(&catalog)?;
                    return Ok(affected(0));
                }
                Ok(affected(
                    self.manager().refresh_database(&catalog, &database)?,
                ))
            }
            Statement::RefreshTable {
                catalog,
                database,
                table,
            } => {
                let catalog = self.external_catalog(catalog)?;
                let database = match database {
                    Some(d) => d,
                    None if !self.database.is_empty() && self.catalog != INTERNAL_CATALOG => {
                        self.database.clone()
                    }
                    None => return Err(no_database("REFRESH TABLE [[catalog.]database.]table")),
                };
                Ok(affected(
                    self.manager().refresh_table(&catalog, &database, &table)?,
                ))
            }
            Statement::AdminSetConfig { pairs } => {
                let [(key, value)] = <[_; 1]>::try_from(pairs).map_err(|pairs| Error::Parse {
                    message: format!(
                        "ADMIN SET FRONTEND CONFIG takes one key at a time, not {}",
                        pairs.len()
                    ),
                })?;
                blocking(self.manager(), move |m| {
                    m.set_config(&key, &value).map(|_| Output::ok())
                })
                .await
            }
            Statement::AdminShowConfig { like: pattern } => {
                Ok(self.show_config(pattern.as_deref()))
            }
            Statement::ShowDatabases {
                catalog,
                like: pattern,
            } => {
                let catalog = catalog.unwrap_or_else(|| self.catalog.clone());
                if catalog == INTERNAL_CATALOG {
                    return self.show_databases(pattern.as_deref());
                }
                metadata::show_databases(self.sources(), &catalog, pattern.as_deref()).await
            }
            Statement::ShowTables {
                full,
                database,
                like: pattern,
            } => {
                let (catalog, database) = match database.as_deref() {
                    None => (self.catalog.clone(), self.database.clone()),
                    Some([database]) => (self.catalog.clone(), database.clone()),
                    Some([catalog, database]) => (catalog.clone(), database.clone()),
                    Some(_) => {
                        return Err(Error::Parse {
                            message: "SHOW TABLES FROM takes [catalog.]database".to_owned(),
                        });
                    }
                };
                if catalog == INTERNAL_CATALOG {
                    return self.show_tables(full, database, pattern.as_deref());
                }
                if database.is_empty() {
                    return Err(no_database(
                        "SHOW TABLES FROM <catalog>.<database>, or USE <catalog>.<database> first",
                    ));
                }
                metadata::show_tables(
                    self.sources(),
                    &catalog,
                    &database,
                    full,
                    pattern.as_deref(),
                )
                .await
            }
            Statement::ShowPartitions {
                name,
                like: pattern,
            } => {
                let (catalog, database, table) = self.table_name(&name)?;
                if catalog == INTERNAL_CATALOG {
                    return Err(Error::Unsupported {
                        what: format!(
                            "SHOW PARTITIONS of {database}.{table}: name a table of an external catalog"
                        ),
                    });
                }
                let table = TableRef {
                    catalog: &catalog,
                    database: &database,
                    table: &table,
                };
                metadata::show_partitions(self.sources(), table, pattern.as_deref()).await
            }
            Statement::ShowVariables { like: pattern } => {
                Ok(show_variables_output(pattern.as_deref()))
            }
            Statement::ShowWarnings => Ok(self.show_warnings()),
            Statement::ShowStatus { like: pattern } => Ok(mysql_show::status(
                self.engine.started.elapsed().as_secs(),
                pattern.as_deref(),
            )),
            Statement::ShowProcesslist => Ok(mysql_show::processlist(
                self.connection_id,
                &self.user,
                &self.database,
            )),
            Statement::ShowCollation { like: pattern } => {
                Ok(mysql_show::collations(pattern.as_deref()))
            }
            Statement::ShowCharset { like: pattern } => {
                Ok(mysql_show::charsets(pattern.as_deref()))
            }
            Statement::ShowEngines => Ok(mysql_show::engines()),
            Statement::ShowCreateTable { name } => self.show_create_table(&name).await,
            Statement::ShowIndex { name } => {
                // The table must exist; it has no indexes.
                self.show_create_table(&name).await?;
                Ok(mysql_show::indexes())
            }
            Statement::ShowTableStatus {
                database,
                like: pattern,
            } => self.show_table_status(database, pattern.as_deref()).await,
            Statement::Describe { name } => {
                let (catalog, database, table) = self.table_name(&name)?;
                if catalog == INTERNAL_CATALOG {
                    return mysql_show::describe_system(&database, &table);
                }
                let table = TableRef {
                    catalog: &catalog,
                    database: &database,
                    table: &table,
                };
                metadata::describe(self.sources(), table).await
            }
            Statement::Use { catalog, database } => self.use_database(catalog, database),
            Statement::Switch { catalog } => {
                if catalog != INTERNAL_CATALOG {
                    self.manager().catalog(&catalog)?;
                }
                self.database = self
                    .last_database
                    .get(&catalog)
                    .cloned()
                    .unwrap_or_default();
                self.catalog = catalog;
                self.refresh_functions();
                Ok(Output::ok())
            }
            Statement::Ignored => Ok(Output::ok()),
            Statement::Query(_) => {
                let (output, reservation) = query::run(&self.ctx, sql).await?;
                self.result = Some(reservation);
                Ok(output)
            }
        }
    }

    fn sources(&self) -> &Sources {
        self.engine.sources()
    }

    /// `[[catalog.]database.]table` completed from the session: (catalog, database, table).
    fn table_name(&self, name: &[String]) -> Result<(String, String, String)> {
        let (catalog, database, table) = match name {
            [table] => (self.catalog.clone(), self.database.clone(), table.clone()),
            [database, table] => (self.catalog.clone(), database.clone(), table.clone()),
            [catalog, database, table] => (catalog.clone(), database.clone(), table.clone()),
            _ => {
                return Err(Error::Parse {
                    message: format!("'{}' is not [[catalog.]database.]table", name.join(".")),
                });
            }
        };
        let database = if database.is_empty() && catalog == INTERNAL_CATALOG {
            INFORMATION_SCHEMA.to_owned()
        } else if database.is_empty() {
            return Err(no_database(
                "name the table as <catalog>.<database>.<table>, or USE <catalog>.<database> first",
            ));
        } else {
            database
        };
        Ok((catalog, database, table))
    }

    fn refresh_functions(&self) {
        register_session_functions(&self.ctx, &self.database, &self.user, self.connection_id);
    }

    /// The catalog a REFRESH names, or the session's; never the internal one.
    fn external_catalog(&self, catalog: Option<String>) -> Result<String> {
        match catalog {
            Some(c) => Ok(c),
            None if self.catalog != INTERNAL_CATALOG => Ok(self.catalog.clone()),
            None => Err(no_database(
                "REFRESH DATABASE <catalog>.<database>, or SWITCH <catalog> first",
            )),
        }
    }

    fn use_database(&mut self, catalog: Option<String>, database: String) -> Result<Output> {
        let catalog = catalog.unwrap_or_else(|| self.catalog.clone());
        if catalog == INTERNAL_CATALOG {
            if !database.eq_ignore_ascii_case(INFORMATION_SCHEMA) {
                return Err(Error::UnknownDatabase { name: database });
            }
            self.database = INFORMATION_SCHEMA.to_owned();
        } else {
            self.manager().catalog(&catalog)?;
            self.database = database;
        }
        self.last_database
            .insert(catalog.clone(), self.database.clone());
        self.catalog = catalog;
        self.refresh_functions();
        Ok(Output::ok())
    }
}

fn no_database(hint: &str) -> Error {
    Error::NoDatabase {
        hint: hint.to_owned(),
    }
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

fn done(outcome: metacache_catalog::Outcome) -> Output {
    Output::Done {
        affected: u64::from(outcome.changed),
        warnings: outcome.warnings,
    }
}

fn affected(count: u64) -> Output {
    Output::Done {
        affected: count,
        warnings: Vec::new(),
    }
}

/// Runs a catalog statement off the async threads (it waits for the store's disk writes).
async fn blocking<F>(manager: Arc<CatalogManager>, f: F) -> Result<Output>
where
    F: FnOnce(&CatalogManager) -> metacache_catalog::Result<Output> + Send + 'static,
{
    tokio::task::spawn_blocking(move || f(&manager))
        .await
        .map_err(|e| Error::Internal {
            detail: e.to_string(),
        })?
        .map_err(Error::from)
}

fn show_variables_output(pattern: Option<&str>) -> Output {
    let rows = show_variables()
        .into_iter()
        .filter(|(name, _)| pattern.is_none_or(|p| like(p, name)))
        .map(|(name, value)| vec![name.into(), value.into()])
        .collect();
    Output::text(&["Variable_name", "Value"], rows)
}
