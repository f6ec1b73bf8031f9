//! The `SHOW` statements MySQL drivers and BI tools send that are not about catalogs (issue 13):
//! `SHOW STATUS`, `SHOW PROCESSLIST`, `SHOW COLLATION`, `SHOW CHARACTER SET`, `SHOW ENGINES`,
//! `SHOW INDEX`, `SHOW TABLE STATUS` and `SHOW CREATE TABLE`, each with MySQL's columns, and
//! `DESC` of a system table. Results are minimal but true: one character set and its
//! collations, no indexes, the caller's own connection.

use metacache_catalog::node_config::like;

use crate::output::{ColumnType, Output, Value};
use crate::system::{INFORMATION_SCHEMA, sql_type, system_table};
use crate::{Error, Result};

/// What `TABLE_TYPE` and `SHOW FULL TABLES` say of every table here. MySQL calls its own
/// `information_schema` tables `SYSTEM VIEW`, but JDBC's `getTables(…, {"TABLE", "VIEW"})`
/// and SQLAlchemy's `get_table_names()` leave those out, and these tables are what users of
/// metacache browse.
pub const TABLE_TYPE: &str = "BASE TABLE";

/// The rows whose first column matches the `LIKE` pattern, if there is one.
pub(crate) fn filtered(rows: Vec<Vec<Value>>, pattern: Option<&str>) -> Vec<Vec<Value>> {
    filtered_by(rows, 0, pattern)
}

/// [`filtered`] on the name in column `column`.
pub(crate) fn filtered_by(
    rows: Vec<Vec<Value>>,
    column: usize,
    pattern: Option<&str>,
) -> Vec<Vec<Value>> {
    rows.into_iter()
        .filter(|r| {
            pattern
                .is_none_or(|p| matches!(r.get(column), Some(Value::Text(name)) if like(p, name)))
        })
        .collect()
}

/// `SHOW [GLOBAL|SESSION] STATUS [LIKE …]`.
pub fn status(uptime_seconds: u64, pattern: Option<&str>) -> Output {
    let uptime = i64::try_from(uptime_seconds).unwrap_or(i64::MAX);
    let rows = vec![
        vec!["Uptime".into(), uptime.to_string().into()],
        vec!["Ssl_cipher".into(), "".into()],
    ];
    Output::text(&["Variable_name", "Value"], filtered(rows, pattern))
}

/// `SHOW [FULL] PROCESSLIST`: the caller's own connection (connections are not shared across
/// sessions).
pub fn processlist(id: u32, user: &str, database: &str) -> Output {
    let db = if database.is_empty() {
        Value::Null
    } else {
        database.into()
    };
    Output::text(
        &[
            "Id", "User", "Host", "db", "Command", "Time", "State", "Info",
        ],
        vec![vec![
            Value::Int(i64::from(id)),
            user.into(),
            "".into(),
            db,
            "Query".into(),
            Value::Int(0),
            "".into(),
            "SHOW PROCESSLIST".into(),
        ]],
    )
}

/// `SHOW COLLATION [LIKE …]`.
pub fn collations(pattern: Option<&str>) -> Output {
    let row = |name: &str, charset: &str, id: i64, default: &str| {
        vec![
            name.into(),
            charset.into(),
            Value::Int(id),
            default.into(),
            "Yes".into(),
            Value::Int(1),
        ]
    };
    let rows = vec![
        row("utf8mb4_0900_bin", "utf8mb4", 309, "Yes"),
        row("utf8mb4_general_ci", "utf8mb4", 45, ""),
        row("utf8mb4_bin", "utf8mb4", 46, ""),
        row("utf8_general_ci", "utf8", 33, "Yes"),
        row("binary", "binary", 63, "Yes"),
    ];
    Output::text(
        &[
            "Collation",
            "Charset",
            "Id",
            "Default",
            "Compiled",
            "Sortlen",
        ],
        filtered(rows, pattern),
    )
}

/// `SHOW CHARACTER SET [LIKE …]` / `SHOW CHARSET`.
pub fn charsets(pattern: Option<&str>) -> Output {
    let row = |name: &str, description: &str, collation: &str, max: i64| {
        vec![
            name.into(),
            description.into(),
            collation.into(),
            Value::Int(max),
        ]
    };
    let rows = vec![
        row("utf8mb4", "UTF-8 Unicode", "utf8mb4_0900_bin", 4),
        row("utf8", "UTF-8 Unicode", "utf8_general_ci", 3),
        row("binary", "Binary pseudo charset", "binary", 1),
    ];
    Output::text(
        &["Charset", "Description", "Default collation", "Maxlen"],
        filtered(rows, pattern),
    )
}

/// `SHOW [STORAGE] ENGINES`.
pub fn engines() -> Output {
    Output::text(
        &[
            "Engine",
            "Support",
            "Comment",
            "Transactions",
            "XA",
            "Savepoints",
        ],
        vec![vec![
            "metacache".into(),
            "DEFAULT".into(),
            "read-only views of cached catalog metadata".into(),
            "NO".into(),
            "NO".into(),
            "NO".into(),
        ]],
    )
}

/// `SHOW INDEX FROM t`: tables here have no indexes.
pub fn indexes() -> Output {
    Output::text(
        &[
            "Table",
            "Non_unique",
            "Key_name",
            "Seq_in_index",
            "Column_name",
            "Collation",
            "Cardinality",
            "Sub_part",
            "Packed",
            "Null",
            "Index_type",
            "Comment",
            "Index_comment",
        ],
        Vec::new(),
    )
}

/// `SHOW TABLE STATUS`: one row per (name, comment).
pub fn table_status(tables: &[(String, String)], pattern: Option<&str>) -> Output {
    let rows = tables
        .iter()
        .map(|(name, comment)| {
            let mut row: Vec<Value> = vec![
                name.as_str().into(),
                "metacache".into(),
                Value::Int(10),
                "Dynamic".into(),
            ];
            row.extend(std::iter::repeat_n(Value::Null, 10));
            row.extend([
                "utf8mb4_0900_bin".into(),
                Value::Null,
                "".into(),
                comment.as_str().into(),
            ]);
            row
        })
        .collect();
    Output::text(
        &[
            "Name",
            "Engine",
            "Version",
            "Row_format",
            "Rows",
            "Avg_row_length",
            "Data_length",
            "Max_data_length",
            "Index_length",
            "Data_free",
            "Auto_increment",
            "Create_time",
            "Update_time",
            "Check_time",
            "Collation",
            "Checksum",
            "Create_options",
            "Comment",
        ],
        filtered(rows, pattern),
    )
}

/// A column of `SHOW CREATE TABLE`.
pub struct ColumnDef {
    /// Name.
    pub name: String,
    /// Type as the source spells it (`bigint`, `varchar(65533)`, `decimal(10,2)`).
    pub data_type: String,
    /// Whether NULL is allowed.
    pub nullable: bool,
}

fn quote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// `SHOW CREATE TABLE`: MySQL's layout (what SQLAlchemy's MySQL dialect reflects from).
pub fn create_table(table: &str, columns: &[ColumnDef], comment: &str) -> Output {
    let lines: Vec<String> = columns
        .iter()
        .map(|c| {
            let null = if c.nullable { "NULL" } else { "NOT NULL" };
            format!("  {} {} {null}", quote(&c.name), mysql_type(&c.data_type))
        })
        .collect();
    let mut text = format!(
        "CREATE TABLE {} (\n{}\n) ENGINE=metacache DEFAULT CHARSET=utf8mb4",
        quote(table),
        lines.join(",\n")
    );
    if !comment.is_empty() {
        text.push_str(&format!(" COMMENT='{}'", comment.replace('\'', "''")));
    }
    Output::text(
        &["Table", "Create Table"],
        vec![vec![table.into(), text.into()]],
    )
}

/// A source's type name (Hive, Iceberg, Paimon, Lance, PostgreSQL spellings) as the MySQL type
/// that holds its values, for `SHOW CREATE TABLE` (tools parse it with MySQL's grammar).
fn mysql_type(source: &str) -> String {
    let lower = source.trim().to_ascii_lowercase();
    let base = lower.split(['(', '<']).next().unwrap_or_default().trim();
    let mapped = match base {
        "string" | "text" | "character varying" | "json" | "jsonb" | "uuid" | "large_string"
        | "utf8" => "text",
        "varchar" | "char" | "character" | "decimal" | "numeric" => return lower,
        "tinyint" | "int8" => "tinyint(4)",
        "smallint" | "int16" | "int2" => "smallint(6)",
        "int" | "integer" | "int32" | "int4" => "int(11)",
        "bigint" | "long" | "int64" | "bigint(20)" => "bigint(20)",
        "float" | "float32" | "real" => "float",
        "double" | "float64" | "double precision" => "double",
        "boolean" | "bool" => "tinyint(1)",
        "date" | "date32" => "date",
        "timestamp" | "timestamp_ntz" | "timestamptz" | "timestamp_ltz" | "datetime" => {
            "datetime(6)"
        }
        "time" => "time(6)",
        "binary" | "bytea" | "fixed" | "large_binary" => "blob",
        "array" | "list" | "map" | "struct" | "row" => "json",
        _ if lower.starts_with("timestamp") => "datetime(6)",
        _ => "text",
    };
    mapped.to_owned()
}

/// The columns of a system table, for `DESC` and `SHOW CREATE TABLE`.
pub fn system_columns(database: &str, table: &str) -> Result<(String, Vec<ColumnDef>)> {
    let unknown = || Error::UnknownTable {
        name: format!("{database}.{table}"),
    };
    if !database.eq_ignore_ascii_case(INFORMATION_SCHEMA) {
        return Err(unknown());
    }
    let table = system_table(table).ok_or_else(unknown)?;
    let columns = table
        .columns
        .iter()
        .map(|(name, ty): &(&str, ColumnType)| ColumnDef {
            name: (*name).to_owned(),
            data_type: sql_type(*ty).1.to_owned(),
            nullable: true,
        })
        .collect();
    Ok((table.comment.to_owned(), columns))
}

/// `DESC` of a system table.
pub fn describe_system(database: &str, table: &str) -> Result<Output> {
    let (_, columns) = system_columns(database, table)?;
    let rows = columns
        .into_iter()
        .map(|c| {
            vec![
                c.name.into(),
                c.data_type.into(),
                "Yes".into(),
                "".into(),
                Value::Null,
                "".into(),
            ]
        })
        .collect();
    Ok(Output::text(
        &["Field", "Type", "Null", "Key", "Default", "Extra"],
        rows,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_types_become_mysql_types() {
        assert_eq!(mysql_type("string"), "text");
        assert_eq!(mysql_type("decimal(10,2)"), "decimal(10,2)");
        assert_eq!(mysql_type("bigint"), "bigint(20)");
        assert_eq!(mysql_type("array<int>"), "json");
        assert_eq!(mysql_type("timestamp with time zone"), "datetime(6)");
        assert_eq!(mysql_type("varchar(65533)"), "varchar(65533)");
        assert_eq!(mysql_type("boolean"), "tinyint(1)");
        assert_eq!(mysql_type("something new"), "text");
    }
}
