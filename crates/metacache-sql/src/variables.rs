//! The system variables and session functions MySQL clients and BI tools ask for on connect
//! (`@@version_comment`, `@@max_allowed_packet`, `DATABASE()`, …), served through DataFusion's
//! variable and UDF hooks so that any SELECT may use them.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::error::DataFusionError;
use datafusion::logical_expr::{ColumnarValue, Volatility, create_udf};
use datafusion::prelude::SessionContext;
use datafusion::scalar::ScalarValue;
use datafusion::variable::VarProvider;

/// The server version clients see (Doris's, so tools that check it behave as with Doris).
pub const SERVER_VERSION: &str = "5.7.99";

/// `@@version_comment`.
pub fn version_comment() -> String {
    format!("metacache {}", env!("CARGO_PKG_VERSION"))
}

/// A variable's value.
#[derive(Debug, Clone)]
enum Var {
    Text(String),
    Int(i64),
}

/// Known variables, lower-case, in `SHOW VARIABLES` order.
fn variables() -> Vec<(&'static str, Var)> {
    use Var::{Int, Text};
    vec![
        ("auto_increment_increment", Int(1)),
        ("autocommit", Int(1)),
        ("character_set_client", Text("utf8mb4".into())),
        ("character_set_connection", Text("utf8mb4".into())),
        ("character_set_database", Text("utf8mb4".into())),
        ("character_set_filesystem", Text("binary".into())),
        ("character_set_results", Text("utf8mb4".into())),
        ("character_set_server", Text("utf8mb4".into())),
        ("character_set_system", Text("utf8".into())),
        ("collation_connection", Text("utf8mb4_0900_bin".into())),
        ("collation_database", Text("utf8mb4_0900_bin".into())),
        ("collation_server", Text("utf8mb4_0900_bin".into())),
        ("default_storage_engine", Text("metacache".into())),
        ("explicit_defaults_for_timestamp", Int(1)),
        ("init_connect", Text(String::new())),
        ("interactive_timeout", Int(3600)),
        ("license", Text("Apache-2.0".into())),
        ("lower_case_file_system", Text("OFF".into())),
        ("lower_case_table_names", Int(0)),
        ("max_allowed_packet", Int(16 << 20)),
        ("net_buffer_length", Int(16384)),
        ("net_read_timeout", Int(30)),
        ("net_write_timeout", Int(600)),
        ("performance_schema", Int(0)),
        ("query_cache_size", Int(0)),
        ("query_cache_type", Text("OFF".into())),
        ("sql_auto_is_null", Int(0)),
        ("sql_mode", Text("ONLY_FULL_GROUP_BY".into())),
        ("sql_quote_show_create", Int(1)),
        ("sql_safe_updates", Int(0)),
        ("sql_select_limit", Int(i64::MAX)),
        ("system_time_zone", Text("UTC".into())),
        ("time_zone", Text("UTC".into())),
        ("transaction_isolation", Text("REPEATABLE-READ".into())),
        ("transaction_read_only", Int(0)),
        ("tx_isolation", Text("REPEATABLE-READ".into())),
        ("tx_read_only", Int(0)),
        ("version", Text(SERVER_VERSION.into())),
        ("version_comment", Text(version_comment())),
        (
            "version_compile_machine",
            Text(std::env::consts::ARCH.into()),
        ),
        ("version_compile_os", Text(std::env::consts::OS.into())),
        ("wait_timeout", Int(28800)),
    ]
}

/// `SHOW VARIABLES` rows: name and value as text.
pub fn show_variables() -> Vec<(String, String)> {
    variables()
        .into_iter()
        .map(|(name, v)| {
            let value = match v {
                Var::Text(s) => s,
                Var::Int(i) => i.to_string(),
            };
            (name.to_owned(), value)
        })
        .collect()
}

/// `@@name`, `@@session.name`, `@@global.name` → `name`.
fn variable_name(parts: &[String]) -> String {
    parts
        .last()
        .map(|p| p.trim_start_matches("@@").to_ascii_lowercase())
        .unwrap_or_default()
}

fn lookup(parts: &[String]) -> Option<Var> {
    let name = variable_name(parts);
    variables()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v)
}

/// System variables for DataFusion.
#[derive(Debug)]
pub struct SystemVariables;

impl VarProvider for SystemVariables {
    fn get_value(&self, var_names: Vec<String>) -> Result<ScalarValue, DataFusionError> {
        match lookup(&var_names) {
            Some(Var::Text(s)) => Ok(ScalarValue::Utf8(Some(s))),
            Some(Var::Int(i)) => Ok(ScalarValue::Int64(Some(i))),
            None => Err(DataFusionError::Plan(format!(
                "Unknown system variable '{}'",
                variable_name(&var_names)
            ))),
        }
    }

    fn get_type(&self, var_names: &[String]) -> Option<DataType> {
        // Unknown variables get a type too, so that planning reaches `get_value` and its message.
        match lookup(var_names) {
            Some(Var::Int(_)) => Some(DataType::Int64),
            _ => Some(DataType::Utf8),
        }
    }
}

/// Registers the session functions: `database()`, `schema()`, `user()`, `current_user()`,
/// `connection_id()`, `version()`.
pub fn register_session_functions(
    ctx: &SessionContext,
    database: &str,
    user: &str,
    connection_id: u32,
) {
    let text = |name: &str, value: Option<String>| {
        create_udf(
            name,
            vec![],
            DataType::Utf8,
            Volatility::Stable,
            Arc::new(move |_: &[ColumnarValue]| {
                Ok(ColumnarValue::Scalar(ScalarValue::Utf8(value.clone())))
            }),
        )
    };
    let account = format!("{user}@%");
    // With no database selected, MySQL answers NULL.
    let database = Some(database.to_owned()).filter(|d| !d.is_empty());
    ctx.register_udf(text("database", database.clone()));
    ctx.register_udf(text("schema", database));
    ctx.register_udf(text("user", Some(account.clone())));
    ctx.register_udf(text("current_user", Some(account)));
    ctx.register_udf(text(
        "version",
        Some(format!(
            "{SERVER_VERSION}-metacache-{}",
            env!("CARGO_PKG_VERSION")
        )),
    ));
    ctx.register_udf(create_udf(
        "connection_id",
        vec![],
        DataType::Int64,
        Volatility::Stable,
        Arc::new(move |_: &[ColumnarValue]| {
            Ok(ColumnarValue::Scalar(ScalarValue::Int64(Some(i64::from(
                connection_id,
            )))))
        }),
    ));
}
