//! MySQL's expression semantics where DataFusion's differ and drivers or BI tools notice
//! (issue 13): arithmetic that answers NULL instead of failing, and the functions the drivers'
//! own metadata queries call.
//!
//! - `a / b` is division of doubles (MySQL's `/` never truncates: `1/2` is 0.5), NULL when `b`
//!   is 0; `a DIV b` truncates toward zero, NULL when `b` is 0; `a % b` (`MOD`) is NULL when `b`
//!   is 0. Rewritten while planning ([`MySqlArithmetic`]), so no operator ever divides by zero.
//! - `IF(cond, a, b)`, `LOCATE(substr, str[, pos])`, `UCASE`, `LCASE`, and `SUBSTRING` /
//!   `SUBSTR` / `MID` as MySQL answers them: an empty string for a length below 1 or a position
//!   of 0, a negative position counting from the end (Connector/J's `getColumns` takes
//!   `SUBSTRING(t, LOCATE('(', t) + 1, …)` of types without parentheses; DataFusion fails
//!   those). (`IFNULL`, `INSTR`, `CONCAT_WS`, `COALESCE`, `NULLIF` are DataFusion's own.)
//!
//! # Invariants
//! - Every function here works on arrays of any length and on NULLs as MySQL does: `IF` takes
//!   NULL as false, `LOCATE` answers NULL for a NULL argument and 0 when not found.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Int64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::compute::kernels::zip::zip;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{DFSchema, Result as DfResult, ScalarValue, plan_err};
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawBinaryExpr};
use datafusion::logical_expr::type_coercion::binary::comparison_coercion;
use datafusion::logical_expr::{
    Cast, ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::prelude::{SessionContext, lit, nullif};
use datafusion::sql::sqlparser::ast::BinaryOperator;

/// Plans `/`, `DIV` and `%` with MySQL's answers (see the module docs).
#[derive(Debug)]
pub struct MySqlArithmetic;

fn double(expr: Expr) -> Expr {
    Expr::Cast(Cast::new(Box::new(expr), DataType::Float64))
}

impl ExprPlanner for MySqlArithmetic {
    fn plan_binary_op(
        &self,
        expr: RawBinaryExpr,
        _schema: &DFSchema,
    ) -> DfResult<PlannerResult<RawBinaryExpr>> {
        let RawBinaryExpr { op, left, right } = expr;
        let planned = match op {
            BinaryOperator::Divide => double(left) / nullif(double(right), lit(0.0)),
            BinaryOperator::MyIntegerDivide => Expr::Cast(Cast::new(
                Box::new(double(left) / nullif(double(right), lit(0.0))),
                DataType::Int64,
            )),
            BinaryOperator::Modulo => {
                let zero = lit(ScalarValue::new_zero(&DataType::Int64)?);
                left % nullif(right, zero)
            }
            op => return Ok(PlannerResult::Original(RawBinaryExpr { op, left, right })),
        };
        Ok(PlannerResult::Planned(planned))
    }

    fn plan_substring(&self, args: Vec<Expr>) -> DfResult<PlannerResult<Vec<Expr>>> {
        Ok(PlannerResult::Planned(Expr::ScalarFunction(
            datafusion::logical_expr::expr::ScalarFunction::new_udf(
                Arc::new(ScalarUDF::new_from_impl(Substring::new())),
                args,
            ),
        )))
    }
}

/// The expression planners of a context with [`MySqlArithmetic`] first (before DataFusion's,
/// which would plan `SUBSTRING(…)` with its own function).
pub fn planners(defaults: &[Arc<dyn ExprPlanner>]) -> Vec<Arc<dyn ExprPlanner>> {
    let mut planners: Vec<Arc<dyn ExprPlanner>> = vec![Arc::new(MySqlArithmetic)];
    planners.extend(defaults.iter().cloned());
    planners
}

/// Rewrites what DataFusion's planner does not take in MySQL's syntax: `CAST(x AS SIGNED
/// [INTEGER])` becomes `BIGINT`, `UNSIGNED [INTEGER]` `BIGINT UNSIGNED`, and `CONVERT(x, t)`
/// a cast (MariaDB Connector/J's `getColumns` converts this way).
pub fn rewrite_statement(statement: &mut datafusion::sql::parser::Statement) {
    use datafusion::sql::sqlparser::ast::{
        DataType as SqlType, Expr as SqlExpr, visit_expressions_mut,
    };
    let datafusion::sql::parser::Statement::Statement(inner) = statement else {
        return;
    };
    let mysql_integer = |data_type: &mut SqlType| match data_type {
        SqlType::Signed | SqlType::SignedInteger => *data_type = SqlType::BigInt(None),
        SqlType::Unsigned | SqlType::UnsignedInteger => {
            *data_type = SqlType::BigIntUnsigned(None);
        }
        _ => {}
    };
    let _ = visit_expressions_mut(inner.as_mut(), |expr| {
        match expr {
            SqlExpr::Cast { data_type, .. } => mysql_integer(data_type),
            // CONVERT(x, type) is CAST(x AS type); CONVERT(x USING charset) is x (all text
            // here is UTF-8).
            SqlExpr::Convert {
                is_try: false,
                expr: value,
                data_type,
                ..
            } => {
                let value = std::mem::replace(
                    value.as_mut(),
                    SqlExpr::value(datafusion::sql::sqlparser::ast::Value::Null),
                );
                *expr = match data_type.take() {
                    Some(mut target) => {
                        mysql_integer(&mut target);
                        SqlExpr::Cast {
                            kind: datafusion::sql::sqlparser::ast::CastKind::Cast,
                            expr: Box::new(value),
                            data_type: target,
                            array: false,
                            format: None,
                        }
                    }
                    None => value,
                };
            }
            _ => {}
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
}

/// Registers the functions of this module (and MySQL's names for DataFusion's own) in `ctx`;
/// its state must have been built with [`planners`].
pub fn install(ctx: &SessionContext) {
    let upper = datafusion::functions::string::upper();
    let lower = datafusion::functions::string::lower();
    for udf in [
        ScalarUDF::new_from_impl(If::new()),
        ScalarUDF::new_from_impl(Locate::new()),
        ScalarUDF::new_from_impl(Substring::new()).with_aliases(["substring", "mid"]),
        upper.as_ref().clone().with_aliases(["ucase"]),
        lower.as_ref().clone().with_aliases(["lcase"]),
    ] {
        ctx.register_udf(udf);
    }
}

/// `IF(cond, a, b)`: `a` where `cond` is true, else `b` (NULL counts as false).
#[derive(Debug, PartialEq, Eq, Hash)]
struct If {
    signature: Signature,
}

impl If {
    fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for If {
    fn name(&self) -> &str {
        "if"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> DfResult<Vec<DataType>> {
        let [_, a, b] = arg_types else {
            return plan_err!("IF takes three arguments: IF(condition, then, else)");
        };
        let common = comparison_coercion(a, b).unwrap_or(DataType::Utf8);
        Ok(vec![DataType::Boolean, common.clone(), common])
    }

    fn return_type(&self, arg_types: &[DataType]) -> DfResult<DataType> {
        Ok(arg_types.get(1).cloned().unwrap_or(DataType::Null))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let rows = args.number_rows;
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let [cond, then, otherwise] = arrays.as_slice() else {
            return plan_err!("IF takes three arguments");
        };
        let cond = cast(cond, &DataType::Boolean)?;
        let cond = cond.as_boolean();
        // NULL is false: a true value only where the condition is set and true.
        let mask =
            BooleanArray::from_iter((0..rows).map(|i| Some(cond.is_valid(i) && cond.value(i))));
        Ok(ColumnarValue::Array(zip(&mask, then, otherwise)?))
    }
}

/// `LOCATE(substr, str[, pos])`: the 1-based character position of `substr` in `str` at or
/// after `pos`, 0 when it is not there.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Locate {
    signature: Signature,
}

impl Locate {
    fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

fn locate(substr: &str, text: &str, from: i64) -> i64 {
    if from < 1 {
        return 0;
    }
    let start = usize::try_from(from - 1).unwrap_or(usize::MAX);
    let Some((offset, _)) = text
        .char_indices()
        .nth(start)
        .or_else(|| (start == text.chars().count()).then_some((text.len(), ' ')))
    else {
        return 0;
    };
    text[offset..].find(substr).map_or(0, |byte| {
        let chars = text[..offset + byte].chars().count();
        i64::try_from(chars).map_or(0, |c| c + 1)
    })
}

impl ScalarUDFImpl for Locate {
    fn name(&self) -> &str {
        "locate"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> DfResult<Vec<DataType>> {
        match arg_types.len() {
            2 => Ok(vec![DataType::Utf8, DataType::Utf8]),
            3 => Ok(vec![DataType::Utf8, DataType::Utf8, DataType::Int64]),
            _ => plan_err!("LOCATE takes LOCATE(substr, str) or LOCATE(substr, str, pos)"),
        }
    }

    fn return_type(&self, _arg_types: &[DataType]) -> DfResult<DataType> {
        Ok(DataType::Int64)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let substr = arrays[0].as_string::<i32>();
        let text = arrays[1].as_string::<i32>();
        let from = arrays
            .get(2)
            .map(|a| a.as_primitive::<datafusion::arrow::datatypes::Int64Type>());
        let answer: Int64Array = (0..args.number_rows)
            .map(|i| {
                let from = match from {
                    Some(f) if f.is_null(i) => return None,
                    Some(f) => f.value(i),
                    None => 1,
                };
                (substr.is_valid(i) && text.is_valid(i))
                    .then(|| locate(substr.value(i), text.value(i), from))
            })
            .collect();
        Ok(ColumnarValue::Array(Arc::new(answer) as ArrayRef))
    }
}

/// MySQL's `SUBSTRING(str, pos[, len])` over characters.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Substring {
    signature: Signature,
}

impl Substring {
    fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

fn substring(text: &str, pos: i64, len: Option<i64>) -> &str {
    let chars = i64::try_from(text.chars().count()).unwrap_or(i64::MAX);
    let start = match pos {
        0 => return "",
        p if p > 0 => p - 1,
        p => chars + p,
    };
    if start < 0 || start >= chars || len.is_some_and(|l| l < 1) {
        return "";
    }
    let byte = |n: i64| {
        usize::try_from(n)
            .ok()
            .and_then(|n| text.char_indices().nth(n))
            .map_or(text.len(), |(b, _)| b)
    };
    let from = byte(start);
    let to = len.map_or(text.len(), |l| byte(start.saturating_add(l)));
    &text[from..to]
}

impl ScalarUDFImpl for Substring {
    fn name(&self) -> &str {
        "substr"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> DfResult<Vec<DataType>> {
        match arg_types.len() {
            2 => Ok(vec![DataType::Utf8, DataType::Int64]),
            3 => Ok(vec![DataType::Utf8, DataType::Int64, DataType::Int64]),
            _ => plan_err!("SUBSTRING takes SUBSTRING(str, pos) or SUBSTRING(str, pos, len)"),
        }
    }

    fn return_type(&self, _arg_types: &[DataType]) -> DfResult<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        use datafusion::arrow::datatypes::Int64Type;
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let text = arrays[0].as_string::<i32>();
        let pos = arrays[1].as_primitive::<Int64Type>();
        let len = arrays.get(2).map(|a| a.as_primitive::<Int64Type>());
        let answer: datafusion::arrow::array::StringArray = (0..args.number_rows)
            .map(|i| {
                if text.is_null(i) || pos.is_null(i) || len.is_some_and(|l| l.is_null(i)) {
                    return None;
                }
                Some(substring(
                    text.value(i),
                    pos.value(i),
                    len.map(|l| l.value(i)),
                ))
            })
            .collect();
        Ok(ColumnarValue::Array(Arc::new(answer) as ArrayRef))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substring_answers_as_mysql_does() {
        assert_eq!(substring("varchar(10)", 9, Some(2)), "10");
        assert_eq!(substring("double", 1, Some(-1)), "");
        assert_eq!(substring("double", 0, None), "");
        assert_eq!(substring("double", -3, None), "ble");
        assert_eq!(substring("double", -9, None), "");
        assert_eq!(substring("dé€x", 2, Some(2)), "é€");
        assert_eq!(substring("abc", 2, Some(i64::MAX)), "bc");
        assert_eq!(substring("abc", 4, None), "");
    }

    #[test]
    fn locate_counts_characters_from_one() {
        assert_eq!(locate("b", "abc", 1), 2);
        assert_eq!(locate("bar", "foobarbar", 5), 7);
        assert_eq!(locate("x", "abc", 1), 0);
        assert_eq!(locate("", "abc", 1), 1);
        assert_eq!(locate("é", "aéé", 3), 3);
        assert_eq!(locate("a", "abc", 0), 0);
        assert_eq!(locate("a", "abc", 9), 0);
    }

    #[tokio::test]
    async fn mysql_arithmetic_and_functions() {
        let mut config = datafusion::prelude::SessionConfig::new();
        config.options_mut().sql_parser.dialect = datafusion::config::Dialect::MySQL;
        let state = datafusion::execution::SessionStateBuilder::new()
            .with_config(config)
            .with_default_features()
            .build();
        let planners = planners(state.expr_planners());
        let state = datafusion::execution::SessionStateBuilder::new_from_existing(state)
            .with_expr_planners(planners)
            .build();
        let ctx = SessionContext::new_with_state(state);
        install(&ctx);
        let batches = ctx
            .sql(
                "SELECT 1/0 AS a, 1/2 AS b, 7 DIV 2 AS c, 5 % 0 AS d, 5 % 3 AS e, \
                 IF(1 > 0, 'y', 'n') AS f, IF(NULL, 1, 2) AS g, UCASE('a') AS h, \
                 LOCATE('b', 'abc') AS i, IFNULL(NULL, 3) AS j, \
                 SUBSTRING('double', LOCATE('(', 'double') + 1, -1) AS k",
            )
            .await
            .expect("plans")
            .collect()
            .await
            .expect("runs");
        let batch = &batches[0];
        let text = |i: usize| {
            datafusion::arrow::util::display::array_value_to_string(batch.column(i), 0)
                .expect("display")
        };
        assert!(batch.column(0).is_null(0), "1/0 is NULL");
        assert_eq!(text(1), "0.5");
        assert_eq!(text(2), "3");
        assert!(batch.column(3).is_null(0), "5 % 0 is NULL");
        assert_eq!(text(4), "2");
        assert_eq!(text(5), "y");
        assert_eq!(text(6), "2");
        assert_eq!(text(7), "A");
        assert_eq!(text(8), "2");
        assert_eq!(text(9), "3");
        assert_eq!(text(10), "");
    }
}
