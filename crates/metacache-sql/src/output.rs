//! What a statement returns, independent of the protocol that carries it.

use serde::Serialize;

/// The type of a result column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum ColumnType {
    /// Text.
    String,
    /// 64-bit signed integer.
    Bigint,
    /// 64-bit float.
    Double,
    /// `true` / `false` (MySQL shows 1 / 0).
    Boolean,
}

/// A result column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Column {
    /// Its header.
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub column_type: ColumnType,
}

impl Column {
    /// A column.
    pub fn new(name: impl Into<String>, column_type: ColumnType) -> Self {
        Self {
            name: name.into(),
            column_type,
        }
    }
}

/// One cell.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// Integer.
    Int(i64),
    /// Float.
    Double(f64),
    /// Boolean.
    Bool(bool),
    /// Text.
    Text(String),
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Text(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Text(s)
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}

/// A statement's result.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// A result set.
    Rows {
        /// Columns.
        columns: Vec<Column>,
        /// Rows, each as long as `columns`.
        rows: Vec<Vec<Value>>,
    },
    /// A statement without a result set.
    Done {
        /// Rows (or catalogs, or cache values) affected.
        affected: u64,
        /// Warnings to show (`SHOW WARNINGS`).
        warnings: Vec<String>,
    },
}

impl Output {
    /// `Done` with nothing affected and no warning.
    pub fn ok() -> Self {
        Output::Done {
            affected: 0,
            warnings: Vec::new(),
        }
    }

    /// A result set of text columns.
    pub fn text(columns: &[&str], rows: Vec<Vec<Value>>) -> Self {
        Output::Rows {
            columns: columns
                .iter()
                .map(|c| Column::new(*c, ColumnType::String))
                .collect(),
            rows,
        }
    }
}
