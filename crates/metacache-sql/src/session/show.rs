//! The `SHOW` statements of a session that answer from the node's state: catalogs, their
//! definitions, the configuration, databases and tables of `information_schema`, warnings,
//! and MySQL's `SHOW CREATE TABLE` / `SHOW TABLE STATUS`.

use metacache_catalog::node_config::like;

use super::{Session, escape, no_database};
use crate::metadata::{self, TableRef};
use crate::output::{Column, ColumnType, Output, Value};
use crate::statement::Statement;
use crate::system::{
    INFORMATION_SCHEMA, INTERNAL_CATALOG, SYSTEM_TABLES, format_millis, system_table,
};
use crate::{Error, Result, mysql_show};

impl Session {
    /// `SHOW CREATE TABLE`: system tables from their declaration, catalog tables from their
    /// schema (`DESC`).
    pub(super) async fn show_create_table(&self, name: &[String]) -> Result<Output> {
        let (catalog, database, table) = self.table_name(name)?;
        if catalog == INTERNAL_CATALOG {
            let (comment, columns) = mysql_show::system_columns(&database, &table)?;
            let table = system_table(&table).map_or(table.as_str(), |t| t.name);
            return Ok(mysql_show::create_table(table, &columns, &comment));
        }
        let described = metadata::describe(
            self.sources(),
            TableRef {
                catalog: &catalog,
                database: &database,
                table: &table,
            },
        )
        .await?;
        let Output::Rows { rows, .. } = described else {
            return Err(Error::Internal {
                detail: "DESC answered no rows".to_owned(),
            });
        };
        let text = |v: Option<&Value>| match v {
            Some(Value::Text(s)) => s.clone(),
            _ => String::new(),
        };
        let columns: Vec<mysql_show::ColumnDef> = rows
            .iter()
            .map(|r| mysql_show::ColumnDef {
                name: text(r.first()),
                data_type: text(r.get(1)),
                nullable: text(r.get(2)) != "No",
            })
            .collect();
        Ok(mysql_show::create_table(&table, &columns, ""))
    }

    /// `SHOW TABLE STATUS`: the tables `SHOW TABLES` lists, with MySQL's columns.
    pub(super) async fn show_table_status(
        &mut self,
        database: Option<Vec<String>>,
        pattern: Option<&str>,
    ) -> Result<Output> {
        let listed = Box::pin(self.run(
            Statement::ShowTables {
                full: false,
                database,
                like: None,
            },
            "",
        ))
        .await?;
        let Output::Rows { rows, .. } = listed else {
            return Ok(mysql_show::table_status(&[], pattern));
        };
        let tables: Vec<(String, String)> = rows
            .iter()
            .filter_map(|r| match r.first() {
                Some(Value::Text(name)) => {
                    let comment = system_table(name).map_or("", |t| t.comment);
                    Some((name.clone(), comment.to_owned()))
                }
                _ => None,
            })
            .collect();
        Ok(mysql_show::table_status(&tables, pattern))
    }

    /// `SHOW CATALOGS` in Doris's shape: `CatalogId, CatalogName, Type, IsCurrent, CreateTime,
    /// LastUpdateTime, Comment`, sorted by name, `IsCurrent` `yes` or empty.
    pub(super) fn show_catalogs(&self, pattern: Option<&str>) -> Output {
        let current = |name: &str| Value::from(if name == self.catalog { "yes" } else { "" });
        let mut rows = vec![vec![
            Value::Int(0),
            INTERNAL_CATALOG.into(),
            "internal".into(),
            current(INTERNAL_CATALOG),
            "UNRECORDED".into(),
            Value::Null,
            "the built-in catalog of system tables".into(),
        ]];
        for catalog in self.manager().catalogs() {
            let def = catalog.def();
            rows.push(vec![
                Value::Int(i64::try_from(def.id).unwrap_or(i64::MAX)),
                def.name.clone().into(),
                def.catalog_type().into(),
                current(&def.name),
                format_millis(Some(def.created_at_millis)),
                format_seconds(def.updated_at_millis),
                if def.comment.is_empty() {
                    Value::Null
                } else {
                    def.comment.clone().into()
                },
            ]);
        }
        rows.sort_by(|a, b| text_of(&a[1]).cmp(text_of(&b[1])));
        let rows = mysql_show::filtered_by(rows, 1, pattern);
        Output::Rows {
            columns: vec![
                Column::new("CatalogId", ColumnType::Bigint),
                Column::new("CatalogName", ColumnType::String),
                Column::new("Type", ColumnType::String),
                Column::new("IsCurrent", ColumnType::String),
                Column::new("CreateTime", ColumnType::String),
                Column::new("LastUpdateTime", ColumnType::String),
                Column::new("Comment", ColumnType::String),
            ],
            rows,
        }
    }

    /// `SHOW CATALOG c` (Doris): its properties as `Key`/`Value` rows, keys in descending
    /// order, secrets masked.
    pub(super) fn show_catalog(&self, name: &str) -> Result<Output> {
        let def = self.manager().catalog(name)?.def();
        let rows = def
            .properties
            .masked()
            .into_iter()
            .rev()
            .map(|(k, v)| vec![Value::from(k), Value::from(v.into_owned())])
            .collect();
        Ok(Output::text(&["Key", "Value"], rows))
    }

    /// `SHOW CREATE CATALOG c` byte for byte as Doris writes it: a leading newline, the
    /// `COMMENT` line when there is one, the properties in descending key order, secrets
    /// masked. Quotes and backslashes in names and values are escaped (Doris leaves them, which
    /// makes text that does not parse).
    pub(super) fn show_create_catalog(&self, name: &str) -> Result<Output> {
        let def = self.manager().catalog(name)?.def();
        let mut text = format!("\nCREATE CATALOG `{}`", def.name.replace('`', "``"));
        if !def.comment.is_empty() {
            text.push_str(&format!("\nCOMMENT \"{}\"\n", escape(&def.comment)));
        }
        text.push_str(" PROPERTIES (\n");
        let pairs: Vec<String> = def
            .properties
            .masked()
            .into_iter()
            .rev()
            .map(|(k, v)| format!("\"{}\" = \"{}\"", escape(k), escape(&v)))
            .collect();
        text.push_str(&pairs.join(",\n"));
        text.push_str("\n);");
        Ok(Output::text(
            &["Catalog", "CreateCatalog"],
            vec![vec![def.name.into(), text.into()]],
        ))
    }

    pub(super) fn show_config(&self, pattern: Option<&str>) -> Output {
        let rows = self
            .manager()
            .show_config(pattern)
            .into_iter()
            .map(|r| {
                vec![
                    r.key.into(),
                    r.value.into(),
                    r.value_type.into(),
                    (if r.mutable { "true" } else { "false" }).into(),
                    "false".into(),
                    r.comment.into(),
                ]
            })
            .collect();
        Output::text(
            &["Key", "Value", "Type", "IsMutable", "MasterOnly", "Comment"],
            rows,
        )
    }

    pub(super) fn show_databases(&self, pattern: Option<&str>) -> Result<Output> {
        let rows = [INFORMATION_SCHEMA]
            .iter()
            .filter(|d| pattern.is_none_or(|p| like(p, d)))
            .map(|d| vec![Value::from(*d)])
            .collect();
        Ok(Output::text(&["Database"], rows))
    }

    pub(super) fn show_tables(
        &self,
        full: bool,
        database: String,
        pattern: Option<&str>,
    ) -> Result<Output> {
        if database.is_empty() {
            return Err(no_database(
                "SHOW TABLES FROM information_schema, or USE information_schema first",
            ));
        }
        if !database.eq_ignore_ascii_case(INFORMATION_SCHEMA) {
            return Err(Error::UnknownDatabase { name: database });
        }
        let header = format!("Tables_in_{INFORMATION_SCHEMA}");
        let rows = SYSTEM_TABLES
            .iter()
            .filter(|t| pattern.is_none_or(|p| like(p, t.name)))
            .map(|t| {
                let mut row = vec![Value::from(t.name)];
                if full {
                    row.push(mysql_show::TABLE_TYPE.into());
                }
                row
            })
            .collect();
        let columns: Vec<&str> = if full {
            vec![header.as_str(), "Table_type"]
        } else {
            vec![header.as_str()]
        };
        Ok(Output::text(&columns, rows))
    }

    pub(super) fn show_warnings(&self) -> Output {
        let rows = self
            .warnings
            .iter()
            .map(|w| vec![Value::from("Warning"), Value::Int(1105), w.clone().into()])
            .collect();
        Output::Rows {
            columns: vec![
                Column::new("Level", ColumnType::String),
                Column::new("Code", ColumnType::Bigint),
                Column::new("Message", ColumnType::String),
            ],
            rows,
        }
    }
}

/// A text value's text (`""` for other values), for sorting rows.
fn text_of(value: &Value) -> &str {
    match value {
        Value::Text(text) => text,
        _ => "",
    }
}

/// Wall-clock milliseconds as `yyyy-MM-dd HH:mm:ss` (Doris's `LastUpdateTime`).
fn format_seconds(millis: u64) -> Value {
    match format_millis(Some(millis)) {
        Value::Text(text) => Value::Text(text.split('.').next().unwrap_or_default().to_owned()),
        other => other,
    }
}
