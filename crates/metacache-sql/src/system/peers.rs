//! Rows of other nodes of a cluster for the tables that show every node
//! (`catalog_meta_cache_statistics`, `catalog_meta_cache_nodes`): a [`Peers`] implementation
//! (the binary's, over HTTP) answers them; a peer that does not answer in time becomes a warning
//! of the statement, never its error.

use async_trait::async_trait;

use crate::output::{ColumnType, Value};

/// Other nodes' rows of a system table.
#[derive(Debug, Default)]
pub struct PeerRows {
    /// Their rows, as the table's columns (FE_HOST naming each node).
    pub rows: Vec<Vec<Value>>,
    /// One line per peer that did not answer, or answered something unreadable.
    pub warnings: Vec<String>,
}

/// Where rows of other nodes come from.
#[async_trait]
pub trait Peers: Send + Sync {
    /// The rows of `table` on every other live node (of `catalog` only, when given).
    async fn rows(
        &self,
        table: &'static str,
        columns: &'static [(&'static str, ColumnType)],
        catalog: Option<&str>,
    ) -> PeerRows;
}

/// A cell of a peer's JSON answer, as the column's type (`None` when it does not fit).
pub fn value_from_json(ty: ColumnType, json: &serde_json::Value) -> Option<Value> {
    Some(match (ty, json) {
        (_, serde_json::Value::Null) => Value::Null,
        (ColumnType::Bigint, serde_json::Value::Number(n)) => Value::Int(n.as_i64()?),
        (ColumnType::Double, serde_json::Value::Number(n)) => Value::Double(n.as_f64()?),
        (ColumnType::Boolean, serde_json::Value::Bool(b)) => Value::Bool(*b),
        (ColumnType::String, serde_json::Value::String(s)) => Value::Text(s.clone()),
        _ => return None,
    })
}

/// A peer's answer (`{"rows": [[…], …]}`) as rows of `columns`.
pub fn rows_from_json(
    columns: &[(&str, ColumnType)],
    answer: &serde_json::Value,
) -> Option<Vec<Vec<Value>>> {
    answer
        .get("rows")?
        .as_array()?
        .iter()
        .map(|row| {
            let cells = row.as_array()?;
            if cells.len() != columns.len() {
                return None;
            }
            columns
                .iter()
                .zip(cells)
                .map(|((_, ty), cell)| value_from_json(*ty, cell))
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_through_json() {
        let columns = [
            ("FE_HOST", ColumnType::String),
            ("N", ColumnType::Bigint),
            ("R", ColumnType::Double),
            ("B", ColumnType::Boolean),
        ];
        let rows = vec![vec![
            Value::from("n2"),
            Value::Int(7),
            Value::Double(0.5),
            Value::Bool(true),
        ]];
        let json = serde_json::json!({ "rows": rows });
        assert_eq!(rows_from_json(&columns, &json), Some(rows));
        let wrong = serde_json::json!({ "rows": [["n2", "x", 0.5, true]] });
        assert_eq!(rows_from_json(&columns, &wrong), None);
        let short = serde_json::json!({ "rows": [["n2"]] });
        assert_eq!(rows_from_json(&columns, &short), None);
    }
}
