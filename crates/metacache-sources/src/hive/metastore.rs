//! Where Hive table definitions come from. [`Metastore`] is the loader's view of a metastore;
//! [`FileMetastore`] keeps the definitions in the warehouse itself, one JSON file per table,
//! so a warehouse is self-describing and needs no server; `thrift.rs` implements the same
//! trait for a Hive Metastore server.
//!
//! # Layout (documented in `docs/sources.md`)
//! ```text
//! <warehouse>/<db>.db/                      a database
//! <warehouse>/<db>.db/<table>/_table.json   its definition (format below)
//! <warehouse>/<db>.db/<table>/_column_stats.json   optional: column → statistics
//! <warehouse>/<db>.db/<table>/k1=v1/k2=v2/  a partition; data files inside
//! ```
//! `_table.json`: `{"columns": [{"name", "type", "comment"?, "nullable"?}], "partition_keys":
//! [same], "format"?: "parquet", "comment"?: "", "properties"?: {…}}`; unknown fields are an
//! error, so a misspelt key does not go unnoticed.

use std::collections::{BTreeMap, HashMap};

use async_trait::async_trait;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use serde::Deserialize;

use super::names::split_component;
use super::values::{ColumnStatistics, HiveTable, PartitionNames};
use crate::error::tables_of_known_database;
use crate::warehouse::Warehouse;
use crate::{ColumnInfo, Error, Result};

/// The file holding a table's definition.
pub const TABLE_FILE: &str = "_table.json";
/// The optional file holding a table's column statistics.
pub const STATS_FILE: &str = "_column_stats.json";
/// Directory listings a walk keeps in flight at once.
pub(crate) const LIST_CONCURRENCY: usize = 16;

/// What the Hive loaders ask a metastore.
#[async_trait]
pub trait Metastore: Send + Sync {
    /// Database names, sorted.
    async fn databases(&self) -> Result<Vec<String>>;
    /// Table names of `database`, sorted.
    async fn tables(&self, database: &str) -> Result<Vec<String>>;
    /// The definition of `database.table`.
    async fn table(&self, database: &str, table: &str) -> Result<HiveTable>;
    /// The partition names of `table`, sorted.
    async fn partition_names(&self, table: &HiveTable) -> Result<PartitionNames>;
    /// The directory of partition `name` of `table`, relative to the warehouse root: where the
    /// metastore recorded it (a metastore may place partitions anywhere), by default the
    /// table's directory and the name.
    async fn partition_location(&self, table: &HiveTable, name: &str) -> Result<String> {
        Ok(format!("{}/{name}", table.location))
    }
    /// Statistics of the `columns` of `table` that have them (a metastore may answer more).
    async fn column_stats(
        &self,
        table: &HiveTable,
        columns: &[String],
    ) -> Result<HashMap<String, ColumnStatistics>>;
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TableFile {
    columns: Vec<ColumnInfo>,
    #[serde(default)]
    partition_keys: Vec<ColumnInfo>,
    #[serde(default = "parquet")]
    format: String,
    #[serde(default)]
    comment: String,
    #[serde(default)]
    properties: BTreeMap<String, String>,
}

fn parquet() -> String {
    "parquet".to_owned()
}

/// A metastore kept as files in the warehouse.
#[derive(Debug, Clone)]
pub struct FileMetastore {
    warehouse: Warehouse,
    catalog: String,
}

impl FileMetastore {
    /// The metastore of `warehouse`, for catalog `catalog` (named in errors).
    pub fn new(catalog: &str, warehouse: Warehouse) -> Self {
        Self {
            warehouse,
            catalog: catalog.to_owned(),
        }
    }
}

/// The visible subdirectories of `dir` (their last path part), sorted.
pub(crate) async fn subdirectories(warehouse: &Warehouse, dir: &Path) -> Result<Vec<String>> {
    let prefix = (!dir.as_ref().is_empty()).then_some(dir);
    let listed = warehouse
        .store()
        .list_with_delimiter(prefix)
        .await
        .map_err(|e| Error::store(warehouse.display(dir), e))?;
    let mut names: Vec<String> = listed
        .common_prefixes
        .iter()
        .filter_map(|p| p.filename().map(str::to_owned))
        .filter(|name| !is_hidden(name))
        .collect();
    names.sort();
    Ok(names)
}

/// The databases of a warehouse laid out as `<db>.db/<table>/` (Hive's file metastore, Paimon's
/// filesystem catalog), sorted.
pub(crate) async fn database_dirs(warehouse: &Warehouse) -> Result<Vec<String>> {
    let root = warehouse.path("");
    Ok(subdirectories(warehouse, &root)
        .await?
        .into_iter()
        .filter_map(|d| d.strip_suffix(".db").map(str::to_owned))
        .filter(|d| !d.is_empty())
        .collect())
}

/// The tables of `database` in such a warehouse, sorted; an unknown database is an error.
pub(crate) async fn table_dirs(
    warehouse: &Warehouse,
    catalog: &str,
    database: &str,
) -> Result<Vec<String>> {
    let dir = warehouse.path(&format!("{database}.db"));
    let tables = subdirectories(warehouse, &dir).await?;
    tables_of_known_database(tables, catalog, database, database_dirs(warehouse)).await
}

/// Hive and Spark skip files and directories starting with `_` or `.`.
pub(crate) fn is_hidden(name: &str) -> bool {
    name.starts_with('_') || name.starts_with('.')
}

#[async_trait]
impl Metastore for FileMetastore {
    async fn databases(&self) -> Result<Vec<String>> {
        database_dirs(&self.warehouse).await
    }

    async fn tables(&self, database: &str) -> Result<Vec<String>> {
        table_dirs(&self.warehouse, &self.catalog, database).await
    }

    async fn table(&self, database: &str, table: &str) -> Result<HiveTable> {
        let location = format!("{database}.db/{table}");
        let path = self.warehouse.path(&format!("{location}/{TABLE_FILE}"));
        let Some(bytes) = self.warehouse.read(&path).await? else {
            return Err(Error::not_found(
                &self.catalog,
                "table",
                format!("{database}.{table}"),
            ));
        };
        let file: TableFile = serde_json::from_slice(&bytes).map_err(|e| Error::Invalid {
            location: self.warehouse.display(&path),
            reason: e.to_string(),
        })?;
        Ok(HiveTable {
            database: database.to_owned(),
            name: table.to_owned(),
            location,
            format: file.format,
            comment: file.comment,
            columns: file.columns,
            partition_keys: file.partition_keys,
            properties: file.properties,
        })
    }

    async fn partition_names(&self, table: &HiveTable) -> Result<PartitionNames> {
        let keys: Vec<&str> = table
            .partition_keys
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        if keys.is_empty() {
            return Ok(PartitionNames::default());
        }
        // One level per partition column; each level lists its directories concurrently.
        let mut level: Vec<String> = vec![String::new()];
        for key in &keys {
            let warehouse = &self.warehouse;
            let listings = futures::stream::iter(std::mem::take(&mut level).into_iter().map(
                |prefix| async move {
                    let dir = warehouse.path(&format!("{}/{prefix}", table.location));
                    let children = subdirectories(warehouse, &dir).await?;
                    Ok::<_, Error>(
                        children
                            .into_iter()
                            .filter(|child| {
                                split_component(child)
                                    .is_some_and(|(k, _)| k.eq_ignore_ascii_case(key))
                            })
                            .map(|child| {
                                if prefix.is_empty() {
                                    child
                                } else {
                                    format!("{prefix}/{child}")
                                }
                            })
                            .collect::<Vec<_>>(),
                    )
                },
            ))
            .buffer_unordered(LIST_CONCURRENCY)
            .try_collect::<Vec<_>>()
            .await?;
            level = listings.into_iter().flatten().collect();
        }
        level.sort();
        level.shrink_to_fit();
        Ok(PartitionNames(level))
    }

    async fn column_stats(
        &self,
        table: &HiveTable,
        _columns: &[String],
    ) -> Result<HashMap<String, ColumnStatistics>> {
        let path = self
            .warehouse
            .path(&format!("{}/{STATS_FILE}", table.location));
        let Some(bytes) = self.warehouse.read(&path).await? else {
            return Ok(HashMap::new());
        };
        serde_json::from_slice(&bytes).map_err(|e| Error::Invalid {
            location: self.warehouse.display(&path),
            reason: e.to_string(),
        })
    }
}
