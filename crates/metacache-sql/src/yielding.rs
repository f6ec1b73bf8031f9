//! Every operator of a query yields to the runtime: a physical optimizer rule that wraps each
//! node of the plan in DataFusion's `CooperativeExec`, so each batch any operator produces
//! spends a unit of the task's Tokio budget.
//!
//! DataFusion's own rule only wraps leaves and exchanges. A cross join turns one input batch
//! into thousands of output batches without touching a leaf, and an aggregate above it then
//! loops without ever returning `Pending`: the query's task never yields, so neither the time
//! limit nor a stopping server could cancel it (it ran for minutes in the test of issue 12).
//! With every node cooperative, the task yields at least every 128 batches, and dropping its
//! future cancels it there.

use std::sync::Arc;

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::config::ConfigOptions;
use datafusion::error::Result;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::coop::CooperativeExec;

/// Wraps every node that is not already cooperative-wrapped.
#[derive(Debug, Default)]
pub(crate) struct YieldEverywhere;

impl PhysicalOptimizerRule for YieldEverywhere {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| {
            if node.is::<CooperativeExec>() {
                return Ok(Transformed::no(node));
            }
            let wrapped: Arc<dyn ExecutionPlan> = Arc::new(CooperativeExec::new(node));
            Ok(Transformed::yes(wrapped))
        })
        .map(|transformed| transformed.data)
    }

    fn name(&self) -> &str {
        "yield_everywhere"
    }

    fn schema_check(&self) -> bool {
        true
    }
}
