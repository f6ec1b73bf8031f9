//! `SHOW DATABASES`, `SHOW TABLES`, `DESC` and `SHOW PARTITIONS` of external catalogs, answered
//! by the catalog's connector through its caches (so they count as hits and misses in the
//! statistics table, like an engine's planning would).

use metacache_catalog::node_config::like;
use metacache_sources::Sources;

use crate::output::{Output, Value};
use crate::{Error, Result};

/// A table of an external catalog, fully named.
pub(crate) struct TableRef<'a> {
    pub catalog: &'a str,
    pub database: &'a str,
    pub table: &'a str,
}

pub(crate) async fn show_databases(
    sources: &Sources,
    catalog: &str,
    pattern: Option<&str>,
) -> Result<Output> {
    let connector = sources.connector(catalog)?;
    let rows = connector
        .databases()
        .await?
        .into_iter()
        .filter(|d| pattern.is_none_or(|p| like(p, d)))
        .map(|d| vec![Value::from(d)])
        .collect();
    Ok(Output::text(&["Database"], rows))
}

pub(crate) async fn show_tables(
    sources: &Sources,
    catalog: &str,
    database: &str,
    full: bool,
    pattern: Option<&str>,
) -> Result<Output> {
    let connector = sources.connector(catalog)?;
    let rows = connector
        .tables(database)
        .await?
        .into_iter()
        .filter(|t| pattern.is_none_or(|p| like(p, t)))
        .map(|t| {
            let mut row = vec![Value::from(t)];
            if full {
                row.push("BASE TABLE".into());
            }
            row
        })
        .collect();
    let header = format!("Tables_in_{database}");
    let columns: Vec<&str> = if full {
        vec![header.as_str(), "Table_type"]
    } else {
        vec![header.as_str()]
    };
    Ok(Output::text(&columns, rows))
}

/// Columns as MySQL's `DESC` shows them; partition columns say so in `Extra`.
pub(crate) async fn describe(sources: &Sources, table: TableRef<'_>) -> Result<Output> {
    let connector = sources.connector(table.catalog)?;
    let schema = connector.schema(table.database, table.table).await?;
    let rows = schema
        .columns
        .iter()
        .map(|c| {
            let partition = schema.partition_keys.iter().any(|k| k == &c.name);
            vec![
                c.name.clone().into(),
                c.data_type.clone().into(),
                (if c.nullable { "Yes" } else { "No" }).into(),
                "".into(),
                Value::Null,
                (if partition { "PARTITION KEY" } else { "" }).into(),
            ]
        })
        .collect();
    Ok(Output::text(
        &["Field", "Type", "Null", "Key", "Default", "Extra"],
        rows,
    ))
}

/// One `Partition` column with `k1=v1/k2=v2` names, as Doris shows Hive partitions.
pub(crate) async fn show_partitions(
    sources: &Sources,
    table: TableRef<'_>,
    pattern: Option<&str>,
) -> Result<Output> {
    let connector = sources.connector(table.catalog)?;
    let rows = connector
        .partitions(table.database, table.table, &[])
        .await?
        .into_iter()
        .filter(|p| pattern.is_none_or(|pat| like(pat, &p.name)))
        .map(|p| vec![Value::from(p.name)])
        .collect();
    Ok(Output::text(&["Partition"], rows))
}

impl From<metacache_sources::Error> for Error {
    fn from(e: metacache_sources::Error) -> Self {
        use metacache_sources::Error as S;
        match e {
            S::Catalog(inner) => match std::sync::Arc::try_unwrap(inner) {
                Ok(inner) => Error::Catalog(inner),
                Err(shared) => Error::Source(S::Catalog(shared)),
            },
            S::NotFound {
                kind: "database",
                name,
                ..
            } => Error::UnknownDatabase { name },
            S::NotFound {
                kind: "table",
                name,
                ..
            } => Error::UnknownTable { name },
            other => Error::Source(other),
        }
    }
}
