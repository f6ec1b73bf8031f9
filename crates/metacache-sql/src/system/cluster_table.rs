//! A table that shows every node of a cluster ([`super::peers`]) as a DataFusion provider that
//! fetches at scan time, so a query naming one catalog (`CATALOG_NAME = 'c'`, also inside an
//! `AND`) asks the peers for that catalog's rows only. The filter is applied again by
//! DataFusion (pushdown is `Inexact`): asking for less is an optimisation, never a semantics.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::datasource::{MemTable, TableType};
use datafusion::error::DataFusionError;
use datafusion::logical_expr::{BinaryExpr, Expr, Operator, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::scalar::ScalarValue;

use super::peers::PeerAsk;
use super::{SystemContext, SystemTable};

/// `information_schema.<table>` over every live node.
#[derive(Clone)]
pub struct ClusterTable {
    table: &'static SystemTable,
    context: SystemContext,
}

impl std::fmt::Debug for ClusterTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterTable")
            .field("table", &self.table.name)
            .finish_non_exhaustive()
    }
}

impl ClusterTable {
    /// The provider of `table` (a `cluster_wide` one) in `context`.
    pub fn new(table: &'static SystemTable, context: SystemContext) -> Self {
        Self { table, context }
    }
}

/// The catalog a filter pins, if it is `catalog_name = '<literal>'` (either side).
fn pinned_catalog(expr: &Expr) -> Option<String> {
    let Expr::BinaryExpr(BinaryExpr { left, op, right }) = expr else {
        return None;
    };
    match op {
        Operator::And => pinned_catalog(left).or_else(|| pinned_catalog(right)),
        Operator::Eq => {
            let literal = |e: &Expr| match e {
                Expr::Literal(
                    ScalarValue::Utf8(Some(s))
                    | ScalarValue::LargeUtf8(Some(s))
                    | ScalarValue::Utf8View(Some(s)),
                    _,
                ) => Some(s.clone()),
                _ => None,
            };
            let is_column = |e: &Expr| matches!(e, Expr::Column(c) if c.name.eq_ignore_ascii_case("catalog_name"));
            if is_column(left) {
                literal(right)
            } else if is_column(right) {
                literal(left)
            } else {
                None
            }
        }
        _ => None,
    }
}

#[async_trait]
impl TableProvider for ClusterTable {
    fn schema(&self) -> datafusion::arrow::datatypes::SchemaRef {
        self.table.schema()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>, DataFusionError> {
        Ok(filters
            .iter()
            .map(|f| {
                if pinned_catalog(f).is_some() {
                    TableProviderFilterPushDown::Inexact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>, DataFusionError> {
        // DataFusion applies the filter again (`Inexact`): the pinned catalog only saves work.
        let catalog = filters.iter().find_map(pinned_catalog);
        let projection: Vec<usize> = projection
            .cloned()
            .unwrap_or_else(|| (0..self.table.columns.len()).collect());
        let projection = projection.as_slice();
        let rows = self.table.rows_of(&self.context, catalog.as_deref());
        let mut batches = vec![self.table.batch_projected(&rows, Some(projection))?];
        drop(rows);
        if let Some(peers) = &self.context.peers {
            // Peers send the columns read (at least one: a count of rows reads none).
            let asked: Vec<usize> = if projection.is_empty() {
                vec![0]
            } else {
                projection.to_vec()
            };
            let ask = PeerAsk {
                table: self.table.name,
                columns: asked.iter().map(|&i| self.table.columns[i].0).collect(),
                schema: Arc::new(self.table.schema().project(&asked)?),
                catalog: catalog.as_deref(),
            };
            let answer = peers.rows(&ask).await;
            self.context.notes.lock().extend(answer.warnings);
            for batch in answer.batches {
                batches.push(if projection.is_empty() {
                    batch.project(&[])?
                } else {
                    batch
                });
            }
        }
        let schema = Arc::new(self.table.schema().project(projection)?);
        let memory = MemTable::try_new(schema, vec![batches])?;
        memory.scan(state, None, &[], limit).await
    }
}

#[cfg(test)]
mod tests {
    use datafusion::prelude::{col, lit};

    use super::pinned_catalog;

    #[test]
    fn a_catalog_equality_is_pushed_to_the_peers() {
        assert_eq!(
            pinned_catalog(&col("catalog_name").eq(lit("lake"))),
            Some("lake".to_owned())
        );
        assert_eq!(
            pinned_catalog(&lit("lake").eq(col("catalog_name"))),
            Some("lake".to_owned())
        );
        let both = col("hit_count")
            .gt(lit(1))
            .and(col("catalog_name").eq(lit("lake")));
        assert_eq!(pinned_catalog(&both), Some("lake".to_owned()));
        assert_eq!(pinned_catalog(&col("catalog_name").like(lit("la%"))), None);
        let either = col("catalog_name")
            .eq(lit("a"))
            .or(col("catalog_name").eq(lit("b")));
        assert_eq!(pinned_catalog(&either), None, "OR keeps every catalog");
        assert_eq!(pinned_catalog(&col("engine_name").eq(lit("hive"))), None);
    }
}
