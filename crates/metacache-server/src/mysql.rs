//! The MySQL protocol front end (`opensrv-mysql`): one task and one SQL session per connection.
//!
//! Authentication: with users configured, `mysql_native_password` against their passwords;
//! with none, any user name without a password, from loopback addresses only. A client that
//! sends garbage or hangs up mid-packet ends its own connection and nothing else.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use async_trait::async_trait;
use metacache_sql::{ColumnType as SqlType, Output, Session, SqlEngine, Value};
use opensrv_mysql::{
    AsyncMysqlIntermediary, AsyncMysqlShim, Column, ColumnFlags, ColumnType, ErrorKind, InitWriter,
    IntermediaryOptions, OkResponse, ParamParser, QueryResultWriter, StatementMetaWriter,
};
use parking_lot::Mutex;
use rand::RngExt;
use tokio::io::AsyncWrite;
use tokio::net::TcpStream;

use subtle::ConstantTimeEq;

use crate::hangup::Hangup;
use crate::prepared::{BindError, Statements};
use crate::slots::{GuardedReader, Standing};
use crate::tls::Tls;

/// What every connection shares.
pub struct MysqlFrontEnd {
    engine: Arc<SqlEngine>,
    users: Vec<(String, String)>,
    tls: Option<Arc<Tls>>,
    next_id: AtomicU32,
}

impl MysqlFrontEnd {
    /// A front end over `engine`, with `users` (`user`, `password`; empty for loopback only),
    /// offering TLS when `tls` is set (`tls.rs`).
    pub fn new(
        engine: Arc<SqlEngine>,
        users: Vec<(String, String)>,
        tls: Option<Arc<Tls>>,
    ) -> Arc<Self> {
        Arc::new(Self {
            engine,
            users,
            tls,
            next_id: AtomicU32::new(1),
        })
    }

    /// Serves one connection until the client leaves, breaks the protocol or keeps the server
    /// waiting too long (`standing`'s limits, `slots.rs`).
    pub async fn serve(
        self: &Arc<Self>,
        stream: TcpStream,
        peer: SocketAddr,
        standing: Arc<Standing>,
    ) {
        let _ = stream.set_nodelay(true);
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let hangup = Arc::new(Hangup::watch(&stream));
        let mut connection = Connection {
            front: Arc::clone(self),
            peer,
            id,
            salt: salt(),
            user: Mutex::new(String::new()),
            session: None,
            standing: Arc::clone(&standing),
            hangup,
            secure: false,
            insecure: AtomicBool::new(false),
            statements: Statements::default(),
        };
        let (reader, mut writer) = stream.into_split();
        let reader = GuardedReader::new(reader, standing);
        let ended = match &self.tls {
            None => AsyncMysqlIntermediary::run_on(connection, reader, writer).await,
            Some(tls) => {
                let config = Some(Arc::clone(&tls.mysql));
                match AsyncMysqlIntermediary::init_before_ssl(
                    &mut connection,
                    reader,
                    &mut writer,
                    &config,
                )
                .await
                {
                    Ok((true, init)) => {
                        connection.secure = true;
                        let config = Arc::clone(&tls.mysql);
                        let options = IntermediaryOptions::default();
                        opensrv_mysql::secure_run_with_options(
                            connection, writer, options, config, init,
                        )
                        .await
                    }
                    Ok((false, init)) => {
                        let options = IntermediaryOptions::default();
                        opensrv_mysql::plain_run_with_options(connection, writer, options, init)
                            .await
                    }
                    Err(error) => Err(error),
                }
            }
        };
        if let Err(error) = ended {
            tracing::debug!(%peer, connection = id, "mysql connection ended: {error}");
        }
    }
}

/// 20 random printable bytes for `mysql_native_password` (never NUL or `$`).
fn salt() -> [u8; 20] {
    let mut rng = rand::rng();
    std::array::from_fn(|_| rng.random_range(b'0'..=b'z'))
}

struct Connection {
    front: Arc<MysqlFrontEnd>,
    peer: SocketAddr,
    id: u32,
    salt: [u8; 20],
    user: Mutex<String>,
    session: Option<Session>,
    standing: Arc<Standing>,
    /// Cancels the running statement when the client hangs up (`hangup.rs`).
    hangup: Arc<Hangup>,
    /// Whether the client switched to TLS.
    secure: bool,
    /// Logged in without TLS where `mysql_require_secure_transport` asks for it: refused at
    /// its first packet after the login.
    insecure: AtomicBool,
    /// Its prepared statements (`prepared.rs`).
    statements: Statements,
}

impl Connection {
    /// Why the connection may not run statements, if it may not: no session slot was left for
    /// it, or it logged in without TLS where TLS is required.
    fn refusal(&self) -> Option<(ErrorKind, String)> {
        if let Some(refusal) = self.standing.refusal() {
            return Some((ErrorKind::ER_CON_COUNT_ERROR, refusal));
        }
        self.insecure.load(Ordering::Relaxed).then(|| {
            (
                ErrorKind::ER_ACCESS_DENIED_ERROR,
                "Connections using insecure transport are prohibited while mysql_require_secure_transport = true; connect with TLS (mysql --ssl)".to_owned(),
            )
        })
    }

    fn session(&mut self) -> Result<&mut Session, metacache_sql::Error> {
        if self.session.is_none() {
            let user = self.user.lock().clone();
            self.session = Some(self.front.engine.session(&user, self.id)?);
        }
        self.session
            .as_mut()
            .ok_or_else(|| metacache_sql::Error::Internal {
                detail: "no session".to_owned(),
            })
    }
}

/// A result column as the protocol describes it.
fn column(c: &metacache_sql::Column) -> Column {
    Column {
        table: String::new(),
        column: c.name.clone(),
        coltype: mysql_type(c.column_type),
        colflags: ColumnFlags::empty(),
    }
}

fn mysql_type(ty: SqlType) -> ColumnType {
    match ty {
        SqlType::String => ColumnType::MYSQL_TYPE_VAR_STRING,
        SqlType::Bigint => ColumnType::MYSQL_TYPE_LONGLONG,
        SqlType::Double => ColumnType::MYSQL_TYPE_DOUBLE,
        SqlType::Boolean => ColumnType::MYSQL_TYPE_TINY,
    }
}

async fn write_output<W: AsyncWrite + Send + Unpin>(
    output: Output,
    results: QueryResultWriter<'_, W>,
) -> io::Result<()> {
    match output {
        Output::Done { affected, warnings } => {
            results
                .completed(OkResponse {
                    affected_rows: affected,
                    warnings: u16::try_from(warnings.len()).unwrap_or(u16::MAX),
                    ..OkResponse::default()
                })
                .await
        }
        Output::Rows { columns, rows } => {
            let columns: Vec<Column> = columns.iter().map(column).collect();
            let mut writer = results.start(&columns).await?;
            for row in rows {
                for value in row {
                    match value {
                        Value::Null => writer.write_col(None::<i64>)?,
                        Value::Int(i) => writer.write_col(i)?,
                        Value::Double(d) => writer.write_col(d)?,
                        Value::Bool(b) => writer.write_col(i8::from(b))?,
                        Value::Text(s) => writer.write_col(s.as_str())?,
                    }
                }
                writer.end_row().await?;
            }
            writer.finish().await
        }
    }
}

#[async_trait]
impl<W: AsyncWrite + Send + Unpin> AsyncMysqlShim<W> for Connection {
    type Error = io::Error;

    fn version(&self) -> String {
        format!(
            "{}-metacache-{}",
            metacache_sql::variables::SERVER_VERSION,
            env!("CARGO_PKG_VERSION")
        )
    }

    fn connect_id(&self) -> u32 {
        self.id
    }

    fn salt(&self) -> [u8; 20] {
        self.salt
    }

    async fn authenticate(
        &self,
        _plugin: &str,
        username: &[u8],
        salt: &[u8],
        auth_data: &[u8],
    ) -> bool {
        let user = String::from_utf8_lossy(username).into_owned();
        let allowed = if self.front.users.is_empty() {
            self.peer.ip().is_loopback()
        } else {
            self.front.users.iter().any(|(name, password)| {
                *name == user
                    && mysql_common::scramble::scramble_native(salt, password.as_bytes())
                        .is_some_and(|expected| bool::from(expected.as_slice().ct_eq(auth_data)))
            })
        };
        if allowed {
            if !self.secure && self.front.tls.as_ref().is_some_and(|t| t.require_mysql) {
                // Refused at its first packet; until then it keeps only its handshake slot and
                // the login timeout, never a session slot.
                tracing::warn!(peer = %self.peer, user, "mysql login without TLS refused");
                self.insecure.store(true, Ordering::Relaxed);
            } else {
                self.standing.logged_in(&user);
            }
            *self.user.lock() = user;
        } else {
            tracing::warn!(peer = %self.peer, user, "mysql login refused");
        }
        allowed
    }

    async fn on_prepare<'a>(
        &'a mut self,
        query: &'a str,
        info: StatementMetaWriter<'a, W>,
    ) -> io::Result<()> {
        if let Some((kind, refusal)) = self.refusal() {
            info.error(kind, refusal.as_bytes()).await?;
            return Err(io::Error::other("connection refused after login"));
        }
        let (id, prepared) = match self.statements.prepare(query) {
            Ok(prepared) => prepared,
            Err(error) => {
                return info
                    .error(bind_error_kind(&error), error.to_string().as_bytes())
                    .await;
            }
        };
        // The result's columns, as MySQL sends them at prepare time; a statement that does
        // not plan (an unknown table) fails here, as in MySQL.
        let planned = match self.session() {
            Ok(session) => session.result_columns(&prepared.with_nulls()).await,
            Err(error) => Err(error),
        };
        let columns = match planned {
            Ok(columns) => columns.iter().map(column).collect::<Vec<_>>(),
            Err(error) => {
                self.statements.close(id);
                return info
                    .error(error_kind(error.mysql_code()), error.to_string().as_bytes())
                    .await;
            }
        };
        let params: Vec<Column> = (0..prepared.params)
            .map(|_| Column {
                table: String::new(),
                column: "?".to_owned(),
                coltype: ColumnType::MYSQL_TYPE_VAR_STRING,
                colflags: ColumnFlags::empty(),
            })
            .collect();
        info.reply(id, &params, &columns).await
    }

    async fn on_execute<'a>(
        &'a mut self,
        id: u32,
        params: ParamParser<'a>,
        results: QueryResultWriter<'a, W>,
    ) -> io::Result<()> {
        let Some(prepared) = self.statements.get(id).cloned() else {
            let message =
                format!("Unknown prepared statement handler ({id}) given to mysqld_stmt_execute");
            return results
                .error(ErrorKind::ER_UNKNOWN_STMT_HANDLER, message.as_bytes())
                .await;
        };
        let values: Vec<_> = params.into_iter().map(|p| p.value.into_inner()).collect();
        match prepared.bind(&values) {
            Ok(sql) => self.answer(&sql, results).await,
            Err(error) => {
                results
                    .error(bind_error_kind(&error), error.to_string().as_bytes())
                    .await
            }
        }
    }

    async fn on_close<'a>(&'a mut self, stmt: u32)
    where
        W: 'async_trait,
    {
        self.statements.close(stmt);
    }

    async fn on_query<'a>(
        &'a mut self,
        sql: &'a str,
        results: QueryResultWriter<'a, W>,
    ) -> io::Result<()> {
        self.answer(sql, results).await
    }

    async fn on_init<'a>(
        &'a mut self,
        database: &'a str,
        writer: InitWriter<'a, W>,
    ) -> io::Result<()> {
        if let Some((kind, refusal)) = self.refusal() {
            writer.error(kind, refusal.as_bytes()).await?;
            return Err(io::Error::other("connection refused after login"));
        }
        // An empty name is no database, as in MySQL (Node's mysql2 and the pure-Python
        // mysql-connector send one with CLIENT_CONNECT_WITH_DB set).
        if database.is_empty() {
            return writer.ok().await;
        }
        // `catalog.database` (what `mysql -D c.db` and the client's own `use c.db` send) names
        // a database of a catalog, as in Doris.
        let quote = |name: &str| format!("`{}`", name.replace('`', "``"));
        let statement = match database.split_once('.') {
            Some((catalog, db)) => format!("USE {}.{}", quote(catalog), quote(db)),
            None => format!("USE {}", quote(database)),
        };
        let outcome = match self.session() {
            Ok(session) => session.execute(&statement).await,
            Err(error) => Err(error),
        };
        match outcome {
            Ok(_) => writer.ok().await,
            Err(error) => {
                writer
                    .error(error_kind(error.mysql_code()), error.to_string().as_bytes())
                    .await
            }
        }
    }
}

impl Connection {
    /// Runs one statement (a text query, or a bound prepared one) and answers it: rows, OK or
    /// the error. A client that hangs up meanwhile has the statement cancelled.
    async fn answer<W: AsyncWrite + Send + Unpin>(
        &mut self,
        sql: &str,
        results: QueryResultWriter<'_, W>,
    ) -> io::Result<()> {
        if let Some((kind, refusal)) = self.refusal() {
            results.error(kind, refusal.as_bytes()).await?;
            return Err(io::Error::other("connection refused after login"));
        }
        let hangup = Arc::clone(&self.hangup);
        let id = self.id;
        let outcome = match self.session() {
            // Dropping the statement's future cancels it: its plan's tasks stop and its
            // memory reservation is given back.
            Ok(session) => tokio::select! {
                biased;
                outcome = session.execute(sql) => outcome,
                () = hangup.closed() => {
                    tracing::info!(connection = id, "client hung up; its running statement was cancelled");
                    return Err(io::Error::new(
                        io::ErrorKind::ConnectionAborted,
                        "client hung up during a statement",
                    ));
                }
            },
            Err(error) => Err(error),
        };
        match outcome {
            Ok(output) => write_output(output, results).await,
            Err(error) => {
                tracing::debug!(connection = self.id, "statement failed: {error}");
                results
                    .error(error_kind(error.mysql_code()), error.to_string().as_bytes())
                    .await
            }
        }
    }
}

/// The MySQL error a prepare or bind failure answers.
fn bind_error_kind(error: &BindError) -> ErrorKind {
    match error {
        BindError::Syntax { .. } => ErrorKind::ER_PARSE_ERROR,
        BindError::Arity { .. } | BindError::Value { .. } => ErrorKind::ER_WRONG_ARGUMENTS,
        BindError::TooMany => ErrorKind::ER_MAX_PREPARED_STMT_COUNT_REACHED,
        BindError::TooLarge { .. } => ErrorKind::ER_OUT_OF_RESOURCES,
    }
}

/// The MySQL error codes statements answer with (`metacache_sql::Error::mysql_code`).
const ERROR_CODES: &[u16] = &[
    1007, 1046, 1049, 1054, 1064, 1105, 1146, 1193, 1235, 1238, 1317,
];

/// `code` as opensrv's error kind; opensrv panics on a code it does not know (it knows MySQL
/// 5.x's), so a code outside the checked list answers `ER_UNKNOWN_ERROR` instead of dropping
/// the connection.
fn error_kind(code: u16) -> ErrorKind {
    if ERROR_CODES.contains(&code) {
        ErrorKind::from(code)
    } else {
        ErrorKind::ER_UNKNOWN_ERROR
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_code_we_answer_is_known_to_opensrv() {
        for &code in ERROR_CODES {
            assert_eq!(error_kind(code) as u16, code);
        }
        assert_eq!(error_kind(3024) as u16, 1105, "unknown codes do not panic");
    }
}
