//! Where an Iceberg catalog finds its tables' current metadata files.
//!
//! - [`SqliteCatalog`]: the SQL catalog layout (`iceberg_tables` with `catalog_name`,
//!   `table_namespace`, `table_name`, `metadata_location`) in a SQLite file, as pyiceberg's
//!   `SqlCatalog` and Iceberg's JDBC catalog write it. Opened read-only, per question, on a
//!   blocking thread.
//! - [`DirectoryCatalog`]: tables found in the warehouse itself, `<namespace>/<table>/metadata/`,
//!   the newest metadata file chosen by `version-hint.text` or by the highest version number.

use std::path::PathBuf;

use async_trait::async_trait;
use metacache_cache::scope::Resolution;
use object_store::ObjectStoreExt as _;

use crate::error::tables_of_known_database;
use crate::hive::subdirectories;
use crate::warehouse::Warehouse;
use crate::{Error, Result};

/// What the Iceberg loaders ask a catalog.
#[async_trait]
pub trait TableCatalog: Send + Sync {
    /// Namespaces, sorted.
    async fn namespaces(&self) -> Result<Vec<String>>;
    /// Tables of `namespace`, sorted.
    async fn tables(&self, namespace: &str) -> Result<Vec<String>>;
    /// The location of the table's current metadata file.
    async fn metadata_location(&self, namespace: &str, table: &str) -> Result<String>;

    /// A table's resolution for a scan scope: the metadata file the scan started on (kept from
    /// `previous`) and the table's location. Catalogs that vend credentials override it.
    async fn scoped_access(
        &self,
        namespace: &str,
        table: &str,
        previous: Option<&Resolution>,
    ) -> Result<Resolution> {
        let metadata_location = match previous.and_then(|p| p.metadata_location.clone()) {
            Some(pinned) => pinned,
            None => self.metadata_location(namespace, table).await?,
        };
        Ok(Resolution {
            location: table_location(&metadata_location),
            metadata_location: Some(metadata_location),
            storage_options: Default::default(),
            vended: false,
            expires_at_millis: None,
        })
    }
}

/// The table's location from its metadata file's (`<table>/metadata/<file>.json`).
pub(crate) fn table_location(metadata_location: &str) -> String {
    match metadata_location.rsplit_once("/metadata/") {
        Some((table, _)) => table.to_owned(),
        None => metadata_location
            .rsplit_once('/')
            .map_or(metadata_location, |(dir, _)| dir)
            .to_owned(),
    }
}

/// A SQL catalog in a SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteCatalog {
    path: PathBuf,
    /// Rows of this `catalog_name` only; all rows when `None`.
    catalog_name: Option<String>,
    catalog: String,
}

impl SqliteCatalog {
    /// The catalog in `path`.
    pub fn new(catalog: &str, path: PathBuf, catalog_name: Option<String>) -> Self {
        Self {
            path,
            catalog_name,
            catalog: catalog.to_owned(),
        }
    }

    async fn query(&self, sql: &'static str, args: Vec<String>) -> Result<Vec<String>> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.query_blocking(sql, &args))
            .await
            .map_err(|e| Error::Invalid {
                location: self.path.display().to_string(),
                reason: e.to_string(),
            })?
    }

    fn query_blocking(&self, sql: &str, args: &[String]) -> Result<Vec<String>> {
        use rusqlite::{Connection, OpenFlags};
        let invalid = |e: rusqlite::Error| Error::Invalid {
            location: self.path.display().to_string(),
            reason: e.to_string(),
        };
        let connection = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(invalid)?;
        let mut statement = connection.prepare(sql).map_err(invalid)?;
        let filter = self.catalog_name.clone().unwrap_or_default();
        let mut params: Vec<&dyn rusqlite::ToSql> = vec![&filter];
        params.extend(args.iter().map(|a| a as &dyn rusqlite::ToSql));
        let rows = statement
            .query_map(params.as_slice(), |row| row.get::<_, String>(0))
            .map_err(invalid)?;
        rows.collect::<std::result::Result<Vec<_>, _>>()
            .map_err(invalid)
    }
}

/// `?1` is the catalog name filter (`''` = every catalog).
const NAMESPACES: &str = "SELECT DISTINCT table_namespace FROM iceberg_tables \
     WHERE (?1 = '' OR catalog_name = ?1) ORDER BY table_namespace";
const TABLES: &str = "SELECT table_name FROM iceberg_tables \
     WHERE (?1 = '' OR catalog_name = ?1) AND table_namespace = ?2 ORDER BY table_name";
const METADATA: &str = "SELECT metadata_location FROM iceberg_tables \
     WHERE (?1 = '' OR catalog_name = ?1) AND table_namespace = ?2 AND table_name = ?3";

#[async_trait]
impl TableCatalog for SqliteCatalog {
    async fn namespaces(&self) -> Result<Vec<String>> {
        self.query(NAMESPACES, Vec::new()).await
    }

    async fn tables(&self, namespace: &str) -> Result<Vec<String>> {
        let tables = self.query(TABLES, vec![namespace.to_owned()]).await?;
        tables_of_known_database(tables, &self.catalog, namespace, self.namespaces()).await
    }

    async fn metadata_location(&self, namespace: &str, table: &str) -> Result<String> {
        let found = self
            .query(METADATA, vec![namespace.to_owned(), table.to_owned()])
            .await?;
        found
            .into_iter()
            .next()
            .ok_or_else(|| Error::not_found(&self.catalog, "table", format!("{namespace}.{table}")))
    }
}

/// Tables found by their directories in the warehouse.
#[derive(Debug, Clone)]
pub struct DirectoryCatalog {
    warehouse: Warehouse,
    catalog: String,
}

impl DirectoryCatalog {
    /// The tables under `warehouse`.
    pub fn new(catalog: &str, warehouse: Warehouse) -> Self {
        Self {
            warehouse,
            catalog: catalog.to_owned(),
        }
    }
}

/// The version of a metadata file name: `v12.metadata.json` → 12, `00012-<uuid>.metadata.json`
/// → 12.
fn metadata_version(name: &str) -> Option<u64> {
    let stem = name.strip_suffix(".metadata.json")?;
    let stem = stem.strip_prefix('v').unwrap_or(stem);
    let digits = stem.split('-').next()?;
    digits.parse().ok()
}

#[async_trait]
impl TableCatalog for DirectoryCatalog {
    async fn namespaces(&self) -> Result<Vec<String>> {
        subdirectories(&self.warehouse, &self.warehouse.path("")).await
    }

    async fn tables(&self, namespace: &str) -> Result<Vec<String>> {
        let tables = subdirectories(&self.warehouse, &self.warehouse.path(namespace)).await?;
        tables_of_known_database(tables, &self.catalog, namespace, self.namespaces()).await
    }

    async fn metadata_location(&self, namespace: &str, table: &str) -> Result<String> {
        let dir = self
            .warehouse
            .path(&format!("{namespace}/{table}/metadata"));
        let store = self.warehouse.store();
        let hint = self
            .warehouse
            .path(&format!("{namespace}/{table}/metadata/version-hint.text"));
        if let Ok(found) = store.get(&hint).await
            && let Ok(bytes) = found.bytes().await
            && let Ok(version) = std::str::from_utf8(&bytes)
                .unwrap_or("")
                .trim()
                .parse::<u64>()
        {
            let file = self.warehouse.path(&format!(
                "{namespace}/{table}/metadata/v{version}.metadata.json"
            ));
            return Ok(self.warehouse.display(&file));
        }
        let listed = store
            .list_with_delimiter(Some(&dir))
            .await
            .map_err(|e| Error::store(self.warehouse.display(&dir), e))?;
        listed
            .objects
            .iter()
            .filter_map(|o| Some((metadata_version(o.location.filename()?)?, &o.location)))
            .max_by_key(|(version, _)| *version)
            .map(|(_, path)| self.warehouse.display(path))
            .ok_or_else(|| Error::not_found(&self.catalog, "table", format!("{namespace}.{table}")))
    }
}

#[cfg(test)]
mod tests {
    use super::metadata_version;

    #[test]
    fn metadata_versions_of_both_naming_schemes() {
        assert_eq!(metadata_version("v3.metadata.json"), Some(3));
        assert_eq!(
            metadata_version("00012-5532a676-57ff-41d3-aff5-f689cbed3da7.metadata.json"),
            Some(12)
        );
        assert_eq!(metadata_version("snap-1-0-x.avro"), None);
        assert_eq!(metadata_version("version-hint.text"), None);
    }
}
