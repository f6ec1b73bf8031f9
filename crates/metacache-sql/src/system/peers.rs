//! Rows of other nodes of a cluster for the tables that show every node
//! (`catalog_meta_cache_statistics`, `catalog_meta_cache_nodes`): a [`Peers`] implementation
//! (the binary's, over HTTP) answers them; a peer that does not answer in time becomes a warning
//! of the statement, never its error.
//!
//! Between nodes the rows travel as an Arrow IPC stream ([`ARROW_STREAM`]) of the columns the
//! query reads only ([`PeerAsk::columns`]): a peer's batch goes into the query as it arrives,
//! with no per-cell conversion on either side. An answer is accepted only when its schema is
//! exactly the one asked for (names and types), so a node of another version is a warning, never
//! wrong rows.

use async_trait::async_trait;
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::ipc::reader::StreamReader;
use datafusion::arrow::ipc::writer::StreamWriter;
use datafusion::arrow::record_batch::RecordBatch;

/// The media type of a peer's rows between nodes (`Accept` and `Content-Type`).
pub const ARROW_STREAM: &str = "application/vnd.apache.arrow.stream";

/// Other nodes' rows of a system table.
#[derive(Debug, Default)]
pub struct PeerRows {
    /// Their rows, in the schema asked for (FE_HOST naming each node, when asked for).
    pub batches: Vec<RecordBatch>,
    /// One line per peer that did not answer, or answered something unreadable.
    pub warnings: Vec<String>,
}

/// What a query asks every peer for.
#[derive(Debug, Clone)]
pub struct PeerAsk<'a> {
    /// The system table.
    pub table: &'static str,
    /// The table's columns to send, in this order (never empty).
    pub columns: Vec<&'static str>,
    /// The schema the answer must have: those columns' fields.
    pub schema: SchemaRef,
    /// Only this catalog's rows, when given.
    pub catalog: Option<&'a str>,
}

/// Where rows of other nodes come from.
#[async_trait]
pub trait Peers: Send + Sync {
    /// The rows `ask` describes, from every other live node.
    async fn rows(&self, ask: &PeerAsk<'_>) -> PeerRows;
}

/// Why a node cannot answer a peer's request for its rows.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LocalRowsError {
    /// No system table of that name.
    #[error("no such system table")]
    NoSuchTable,
    /// The table has no column of that name.
    #[error("system table {table} has no column {column}")]
    NoSuchColumn {
        /// The table.
        table: &'static str,
        /// The column asked for.
        column: String,
    },
    /// The rows could not be put into a batch.
    #[error("could not build the rows: {0}")]
    Batch(String),
}

/// `batch` as an Arrow IPC stream.
pub fn encode_arrow(batch: &RecordBatch) -> Result<Vec<u8>, ArrowError> {
    let mut out = Vec::with_capacity(batch.get_array_memory_size() + 1024);
    let mut writer = StreamWriter::try_new(&mut out, &batch.schema())?;
    writer.write(batch)?;
    writer.finish()?;
    drop(writer);
    Ok(out)
}

/// Why a peer's Arrow answer was not taken.
#[derive(Debug, thiserror::Error)]
pub enum PeerAnswerError {
    /// Not a readable Arrow IPC stream.
    #[error("answered something that is not an Arrow stream")]
    Unreadable,
    /// Readable, but other columns than asked for.
    #[error("answered rows of another shape (another version?)")]
    Shape,
}

/// A peer's Arrow IPC stream as batches of exactly `expected` (field names and types).
pub fn decode_arrow(bytes: &[u8], expected: &Schema) -> Result<Vec<RecordBatch>, PeerAnswerError> {
    let reader = StreamReader::try_new(std::io::Cursor::new(bytes), None)
        .map_err(|_| PeerAnswerError::Unreadable)?;
    let same = {
        let schema = reader.schema();
        schema.fields().len() == expected.fields().len()
            && schema
                .fields()
                .iter()
                .zip(expected.fields())
                .all(|(a, b)| a.name() == b.name() && a.data_type() == b.data_type())
    };
    if !same {
        return Err(PeerAnswerError::Shape);
    }
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| PeerAnswerError::Unreadable)?;
    // The batches take the expected schema (nullability and metadata are the asker's).
    let schema = std::sync::Arc::new(expected.clone());
    batches
        .into_iter()
        .map(|b| {
            RecordBatch::try_new(std::sync::Arc::clone(&schema), b.columns().to_vec())
                .map_err(|_| PeerAnswerError::Shape)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{ColumnType, Value};
    use crate::system::system_table;

    #[test]
    fn batches_round_trip_through_arrow_and_another_shape_is_refused() {
        let table = system_table("catalog_meta_cache_statistics").expect("table");
        let rows = vec![
            table
                .columns
                .iter()
                .map(|(_, ty)| match ty {
                    ColumnType::String => Value::from("x"),
                    ColumnType::Bigint => Value::Int(3),
                    ColumnType::Double => Value::Double(0.25),
                    ColumnType::Boolean => Value::Bool(true),
                })
                .collect::<Vec<_>>(),
        ];
        let projection = [0, 3, 5];
        let batch = table
            .batch_projected(&rows, Some(&projection))
            .expect("batch");
        let bytes = encode_arrow(&batch).expect("encode");
        let expected = table.schema().project(&projection).expect("project");
        let back = decode_arrow(&bytes, &expected).expect("decode");
        assert_eq!(back, vec![batch]);

        let other = table.schema().project(&[0, 3]).expect("project");
        assert!(matches!(
            decode_arrow(&bytes, &other),
            Err(PeerAnswerError::Shape)
        ));
        assert!(matches!(
            decode_arrow(b"{\"rows\": []}", &expected),
            Err(PeerAnswerError::Unreadable)
        ));
        assert!(matches!(
            decode_arrow(&bytes[..bytes.len() / 2], &expected),
            Err(PeerAnswerError::Unreadable)
        ));
    }
}
