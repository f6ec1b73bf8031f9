//! The `information_schema` tables MySQL drivers and BI tools read when they browse (issue 13),
//! with MySQL 5.7's columns in MySQL's order: `tables`, `columns` and `schemata` describe the
//! system tables; `statistics`, `key_column_usage`, `table_constraints`,
//! `referential_constraints`, `views` and `routines` are empty (system tables have no keys,
//! views or routines) but exist, so the drivers' metadata queries answer instead of failing.

use super::{INFORMATION_SCHEMA, INTERNAL_CATALOG, SYSTEM_TABLES, SystemContext};
use crate::output::{ColumnType, Value};

use ColumnType::{Bigint as I, String as S};

/// `information_schema.tables`.
pub const TABLES: &[(&str, ColumnType)] = &[
    ("TABLE_CATALOG", S),
    ("TABLE_SCHEMA", S),
    ("TABLE_NAME", S),
    ("TABLE_TYPE", S),
    ("ENGINE", S),
    ("VERSION", I),
    ("ROW_FORMAT", S),
    ("TABLE_ROWS", I),
    ("AVG_ROW_LENGTH", I),
    ("DATA_LENGTH", I),
    ("MAX_DATA_LENGTH", I),
    ("INDEX_LENGTH", I),
    ("DATA_FREE", I),
    ("AUTO_INCREMENT", I),
    ("CREATE_TIME", S),
    ("UPDATE_TIME", S),
    ("CHECK_TIME", S),
    ("TABLE_COLLATION", S),
    ("CHECKSUM", I),
    ("CREATE_OPTIONS", S),
    ("TABLE_COMMENT", S),
];

/// `information_schema.columns`.
pub const COLUMNS: &[(&str, ColumnType)] = &[
    ("TABLE_CATALOG", S),
    ("TABLE_SCHEMA", S),
    ("TABLE_NAME", S),
    ("COLUMN_NAME", S),
    ("ORDINAL_POSITION", I),
    ("COLUMN_DEFAULT", S),
    ("IS_NULLABLE", S),
    ("DATA_TYPE", S),
    ("CHARACTER_MAXIMUM_LENGTH", I),
    ("CHARACTER_OCTET_LENGTH", I),
    ("NUMERIC_PRECISION", I),
    ("NUMERIC_SCALE", I),
    ("DATETIME_PRECISION", I),
    ("CHARACTER_SET_NAME", S),
    ("COLLATION_NAME", S),
    ("COLUMN_TYPE", S),
    ("COLUMN_KEY", S),
    ("EXTRA", S),
    ("PRIVILEGES", S),
    ("COLUMN_COMMENT", S),
    ("GENERATION_EXPRESSION", S),
];

/// `information_schema.schemata`.
pub const SCHEMATA: &[(&str, ColumnType)] = &[
    ("CATALOG_NAME", S),
    ("SCHEMA_NAME", S),
    ("DEFAULT_CHARACTER_SET_NAME", S),
    ("DEFAULT_COLLATION_NAME", S),
    ("SQL_PATH", S),
];

/// `information_schema.statistics` (indexes).
pub const STATISTICS: &[(&str, ColumnType)] = &[
    ("TABLE_CATALOG", S),
    ("TABLE_SCHEMA", S),
    ("TABLE_NAME", S),
    ("NON_UNIQUE", I),
    ("INDEX_SCHEMA", S),
    ("INDEX_NAME", S),
    ("SEQ_IN_INDEX", I),
    ("COLUMN_NAME", S),
    ("COLLATION", S),
    ("CARDINALITY", I),
    ("SUB_PART", I),
    ("PACKED", S),
    ("NULLABLE", S),
    ("INDEX_TYPE", S),
    ("COMMENT", S),
    ("INDEX_COMMENT", S),
];

/// `information_schema.key_column_usage`.
pub const KEY_COLUMN_USAGE: &[(&str, ColumnType)] = &[
    ("CONSTRAINT_CATALOG", S),
    ("CONSTRAINT_SCHEMA", S),
    ("CONSTRAINT_NAME", S),
    ("TABLE_CATALOG", S),
    ("TABLE_SCHEMA", S),
    ("TABLE_NAME", S),
    ("COLUMN_NAME", S),
    ("ORDINAL_POSITION", I),
    ("POSITION_IN_UNIQUE_CONSTRAINT", I),
    ("REFERENCED_TABLE_SCHEMA", S),
    ("REFERENCED_TABLE_NAME", S),
    ("REFERENCED_COLUMN_NAME", S),
];

/// `information_schema.table_constraints`.
pub const TABLE_CONSTRAINTS: &[(&str, ColumnType)] = &[
    ("CONSTRAINT_CATALOG", S),
    ("CONSTRAINT_SCHEMA", S),
    ("CONSTRAINT_NAME", S),
    ("TABLE_SCHEMA", S),
    ("TABLE_NAME", S),
    ("CONSTRAINT_TYPE", S),
];

/// `information_schema.referential_constraints`.
pub const REFERENTIAL_CONSTRAINTS: &[(&str, ColumnType)] = &[
    ("CONSTRAINT_CATALOG", S),
    ("CONSTRAINT_SCHEMA", S),
    ("CONSTRAINT_NAME", S),
    ("UNIQUE_CONSTRAINT_CATALOG", S),
    ("UNIQUE_CONSTRAINT_SCHEMA", S),
    ("UNIQUE_CONSTRAINT_NAME", S),
    ("MATCH_OPTION", S),
    ("UPDATE_RULE", S),
    ("DELETE_RULE", S),
    ("TABLE_NAME", S),
    ("REFERENCED_TABLE_NAME", S),
];

/// `information_schema.views`.
pub const VIEWS: &[(&str, ColumnType)] = &[
    ("TABLE_CATALOG", S),
    ("TABLE_SCHEMA", S),
    ("TABLE_NAME", S),
    ("VIEW_DEFINITION", S),
    ("CHECK_OPTION", S),
    ("IS_UPDATABLE", S),
    ("DEFINER", S),
    ("SECURITY_TYPE", S),
    ("CHARACTER_SET_CLIENT", S),
    ("COLLATION_CONNECTION", S),
];

/// `information_schema.routines`.
pub const ROUTINES: &[(&str, ColumnType)] = &[
    ("SPECIFIC_NAME", S),
    ("ROUTINE_CATALOG", S),
    ("ROUTINE_SCHEMA", S),
    ("ROUTINE_NAME", S),
    ("ROUTINE_TYPE", S),
    ("DATA_TYPE", S),
    ("CHARACTER_MAXIMUM_LENGTH", I),
    ("CHARACTER_OCTET_LENGTH", I),
    ("NUMERIC_PRECISION", I),
    ("NUMERIC_SCALE", I),
    ("DATETIME_PRECISION", I),
    ("CHARACTER_SET_NAME", S),
    ("COLLATION_NAME", S),
    ("DTD_IDENTIFIER", S),
    ("ROUTINE_BODY", S),
    ("ROUTINE_DEFINITION", S),
    ("EXTERNAL_NAME", S),
    ("EXTERNAL_LANGUAGE", S),
    ("PARAMETER_STYLE", S),
    ("IS_DETERMINISTIC", S),
    ("SQL_DATA_ACCESS", S),
    ("SQL_PATH", S),
    ("SECURITY_TYPE", S),
    ("CREATED", S),
    ("LAST_ALTERED", S),
    ("SQL_MODE", S),
    ("ROUTINE_COMMENT", S),
    ("DEFINER", S),
    ("CHARACTER_SET_CLIENT", S),
    ("COLLATION_CONNECTION", S),
    ("DATABASE_COLLATION", S),
];

/// The character set and collation of every text column.
pub const CHARSET: &str = "utf8mb4";
/// The collation `collation_*` variables name.
pub const COLLATION: &str = "utf8mb4_0900_bin";

/// Longest text value a system column can hold, as `varchar(N)` says.
const TEXT_LENGTH: i64 = 65533;

/// No rows.
pub fn no_rows(_: &SystemContext) -> Vec<Vec<Value>> {
    Vec::new()
}

pub(super) fn table_rows(_: &SystemContext) -> Vec<Vec<Value>> {
    SYSTEM_TABLES
        .iter()
        .map(|t| {
            vec![
                INTERNAL_CATALOG.into(),
                INFORMATION_SCHEMA.into(),
                t.name.into(),
                crate::mysql_show::TABLE_TYPE.into(),
                "SYSTEM".into(),
                Value::Int(10),
                "Dynamic".into(),
                Value::Null,
                Value::Int(0),
                Value::Int(0),
                Value::Int(0),
                Value::Int(0),
                Value::Int(0),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                COLLATION.into(),
                Value::Null,
                "".into(),
                t.comment.into(),
            ]
        })
        .collect()
}

pub(super) fn column_rows(_: &SystemContext) -> Vec<Vec<Value>> {
    SYSTEM_TABLES
        .iter()
        .flat_map(|t| {
            t.columns.iter().enumerate().map(move |(i, (name, ty))| {
                let (data_type, column_type) = sql_type(*ty);
                let text = *ty == ColumnType::String;
                let (precision, scale) = match ty {
                    ColumnType::Bigint => (Value::Int(19), Value::Int(0)),
                    ColumnType::Double => (Value::Int(22), Value::Null),
                    ColumnType::Boolean => (Value::Int(1), Value::Int(0)),
                    ColumnType::String => (Value::Null, Value::Null),
                };
                let when_text = |v: Value| if text { v } else { Value::Null };
                vec![
                    INTERNAL_CATALOG.into(),
                    INFORMATION_SCHEMA.into(),
                    t.name.into(),
                    (*name).into(),
                    Value::Int(i as i64 + 1),
                    Value::Null,
                    "YES".into(),
                    data_type.into(),
                    when_text(Value::Int(TEXT_LENGTH)),
                    when_text(Value::Int(TEXT_LENGTH * 4)),
                    precision,
                    scale,
                    Value::Null,
                    when_text(CHARSET.into()),
                    when_text(COLLATION.into()),
                    column_type.into(),
                    "".into(),
                    "".into(),
                    "select".into(),
                    "".into(),
                    "".into(),
                ]
            })
        })
        .collect()
}

/// `DATA_TYPE` and `COLUMN_TYPE` of a column type.
pub fn sql_type(ty: ColumnType) -> (&'static str, &'static str) {
    match ty {
        ColumnType::String => ("varchar", "varchar(65533)"),
        ColumnType::Bigint => ("bigint", "bigint(20)"),
        ColumnType::Double => ("double", "double"),
        ColumnType::Boolean => ("tinyint", "tinyint(1)"),
    }
}

pub(super) fn schema_rows(_: &SystemContext) -> Vec<Vec<Value>> {
    vec![vec![
        INTERNAL_CATALOG.into(),
        INFORMATION_SCHEMA.into(),
        CHARSET.into(),
        COLLATION.into(),
        Value::Null,
    ]]
}
