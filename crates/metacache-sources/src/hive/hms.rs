//! The connector of a catalog whose metastore is a Hive Metastore server: every table of the
//! metastore answered by the reader of its kind, as Doris does for HMS catalogs.
//!
//! - Hive tables: the Hive loaders over the Thrift metastore, in the `hive` caches.
//! - Hudi tables (a Hudi input format, or `spark.sql.sources.provider=hudi`): the same loaders,
//!   with partition names, partitions and column statistics in the `hudi` caches (configured by
//!   `meta.cache.hive.*`, §6); table objects, file listings and partition views stay in `hive`'s.
//! - Iceberg tables (`table_type=ICEBERG`): the Iceberg connector, its current metadata file
//!   named by the table's `metadata_location` parameter, in the `iceberg` caches.
//!
//! The kind of a table is read from its table object (`hive-table`), the first value any
//! question about the table loads, so dispatching costs no metastore call of its own.
//!
//! With `hms_events_polling_interval_ms` set, the connector owns the catalog's
//! [`EventPoller`]; it stops when the connector goes (ALTER of a property, DROP).

use std::sync::Arc;

use async_trait::async_trait;
use metacache_cache::Cached;
use metacache_catalog::Catalog;

use super::events::EventPoller;
use super::thrift::ThriftMetastore;
use super::{HiveConnector, HiveTable};
use crate::connector::{Connector, PartitionFilter};
use crate::warehouse::Warehouse;
use crate::{PartitionFiles, PartitionInfo, Result, SnapshotInfo, TableInfo, TableSchema};

/// What reads a table of the metastore.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableKind {
    /// A Hive table.
    Hive,
    /// A Hudi table synced to the metastore.
    Hudi,
    /// An Iceberg table registered in the metastore.
    Iceberg,
}

impl TableKind {
    /// The kind of `table`, from its parameters and input format.
    pub fn of(table: &HiveTable) -> Self {
        let parameter = |key: &str| {
            table
                .properties
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(key))
                .map(|(_, v)| v.as_str())
        };
        if parameter("table_type").is_some_and(|v| v.eq_ignore_ascii_case("ICEBERG")) {
            TableKind::Iceberg
        } else if table.format == "hudi"
            || parameter("spark.sql.sources.provider")
                .is_some_and(|v| v.eq_ignore_ascii_case("hudi"))
        {
            TableKind::Hudi
        } else {
            TableKind::Hive
        }
    }
}

/// An HMS catalog's connector.
pub struct HmsConnector {
    hive: HiveConnector,
    hudi: HiveConnector,
    #[cfg(feature = "iceberg")]
    iceberg: crate::iceberg::IcebergConnector,
    _poller: Option<EventPoller>,
}

impl std::fmt::Debug for HmsConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HmsConnector")
            .field("hive", &self.hive)
            .field("polling", &self._poller.is_some())
            .finish_non_exhaustive()
    }
}

impl HmsConnector {
    /// The connector of `catalog` over `metastore`, reading locations through `warehouse`;
    /// polls the metastore's notification log every `polling` when set.
    pub fn new(
        catalog: Arc<Catalog>,
        warehouse: Warehouse,
        metastore: Arc<ThriftMetastore>,
        polling: Option<std::time::Duration>,
    ) -> Self {
        let poller =
            polling.and_then(|every| EventPoller::start(&catalog, Arc::clone(&metastore), every));
        #[cfg(feature = "iceberg")]
        let iceberg = crate::iceberg::IcebergConnector::new(
            Arc::clone(&catalog),
            crate::iceberg::Storage::Warehouse(warehouse.clone()),
            Box::new(IcebergTables(Arc::clone(&metastore))),
        );
        let hive = HiveConnector::with_metastore(catalog, warehouse, metastore);
        Self {
            hudi: hive.for_engine("hudi"),
            hive,
            #[cfg(feature = "iceberg")]
            iceberg,
            _poller: poller,
        }
    }

    /// The reader of `database.table`.
    async fn reader(&self, database: &str, table: &str) -> Result<&dyn Connector> {
        let object = self.hive.hive_table(database, table).await?;
        Ok(match TableKind::of(&object) {
            TableKind::Hive => &self.hive,
            TableKind::Hudi => &self.hudi,
            #[cfg(feature = "iceberg")]
            TableKind::Iceberg => &self.iceberg,
            #[cfg(not(feature = "iceberg"))]
            TableKind::Iceberg => {
                return Err(crate::Error::Unsupported {
                    what: format!("Iceberg table {database}.{table}"),
                    connector: "hms (this build has no 'iceberg' feature)",
                });
            }
        })
    }
}

#[async_trait]
impl Connector for HmsConnector {
    fn kind(&self) -> &'static str {
        "hms"
    }

    async fn databases(&self) -> Result<Vec<String>> {
        self.hive.databases().await
    }

    async fn tables(&self, database: &str) -> Result<Vec<String>> {
        self.hive.tables(database).await
    }

    async fn table(&self, database: &str, table: &str) -> Result<TableInfo> {
        self.reader(database, table)
            .await?
            .table(database, table)
            .await
    }

    async fn schema(&self, database: &str, table: &str) -> Result<Cached<TableSchema>> {
        self.reader(database, table)
            .await?
            .schema(database, table)
            .await
    }

    async fn partitions(
        &self,
        database: &str,
        table: &str,
        filter: &PartitionFilter,
    ) -> Result<Vec<PartitionInfo>> {
        self.reader(database, table)
            .await?
            .partitions(database, table, filter)
            .await
    }

    async fn files(
        &self,
        database: &str,
        table: &str,
        filter: &PartitionFilter,
    ) -> Result<Vec<PartitionFiles>> {
        self.reader(database, table)
            .await?
            .files(database, table, filter)
            .await
    }

    async fn snapshots(&self, database: &str, table: &str) -> Result<Vec<SnapshotInfo>> {
        self.reader(database, table)
            .await?
            .snapshots(database, table)
            .await
    }

    async fn column_statistics(
        &self,
        database: &str,
        table: &str,
    ) -> Result<crate::ColumnStatisticsMap> {
        self.reader(database, table)
            .await?
            .column_statistics(database, table)
            .await
    }
}

/// The Iceberg tables of a metastore: `metadata_location` of each table object (HMS catalogs,
/// and Iceberg catalogs with `iceberg.catalog.type=hms`).
#[cfg(feature = "iceberg")]
pub struct IcebergTables(pub Arc<ThriftMetastore>);

#[cfg(feature = "iceberg")]
#[async_trait]
impl crate::iceberg::TableCatalog for IcebergTables {
    async fn namespaces(&self) -> Result<Vec<String>> {
        use super::Metastore as _;
        self.0.databases().await
    }

    async fn tables(&self, namespace: &str) -> Result<Vec<String>> {
        use super::Metastore as _;
        self.0.tables(namespace).await
    }

    async fn metadata_location(&self, namespace: &str, table: &str) -> Result<String> {
        use super::Metastore as _;
        let object = self.0.table(namespace, table).await?;
        object
            .properties
            .get("metadata_location")
            .filter(|_| TableKind::of(&object) == TableKind::Iceberg)
            .cloned()
            .ok_or_else(|| crate::Error::Invalid {
                location: format!("{namespace}.{table}"),
                reason: "the metastore's table has no 'metadata_location' of an Iceberg table"
                    .to_owned(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(format: &str, properties: &[(&str, &str)]) -> HiveTable {
        HiveTable {
            database: "d".to_owned(),
            name: "t".to_owned(),
            location: "d.db/t".to_owned(),
            format: format.to_owned(),
            comment: String::new(),
            columns: Vec::new(),
            partition_keys: Vec::new(),
            properties: properties
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        }
    }

    #[test]
    fn tables_are_read_by_their_kind() {
        assert_eq!(TableKind::of(&table("parquet", &[])), TableKind::Hive);
        assert_eq!(
            TableKind::of(&table("parquet", &[("table_type", "ICEBERG")])),
            TableKind::Iceberg
        );
        assert_eq!(TableKind::of(&table("hudi", &[])), TableKind::Hudi);
        assert_eq!(
            TableKind::of(&table("parquet", &[("spark.sql.sources.provider", "hudi")])),
            TableKind::Hudi
        );
    }
}
