//! Why a value was not admitted: the reason strings of the specification (§3), produced here only.

use std::fmt;

use crate::Level;

/// The reason a loaded value was not retained. Its [`Display`](fmt::Display) form is the exact
/// string shown in `LAST_WEIGHT_REJECT_REASON` and in the rejection warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RejectReason {
    /// A level (entry, entry group, catalog or node) cannot hold the value now.
    BudgetExceeded,
    /// The value alone is larger than the effective limit of its entry.
    EntryTooLarge,
    /// The estimator could not size the value reliably (visit budget exhausted, opaque part).
    IncompleteEstimate {
        /// What stopped the estimate, e.g. `visit_budget_exhausted`.
        detail: String,
    },
    /// The estimator panicked or returned an error.
    EstimatorFailure {
        /// The panic message or error text.
        detail: String,
    },
    /// The estimator returned zero bytes.
    InvalidZeroEstimate,
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BudgetExceeded => f.write_str("budget_exceeded"),
            Self::EntryTooLarge => f.write_str("entry_too_large"),
            Self::IncompleteEstimate { detail } => write!(f, "incomplete_estimate:{detail}"),
            Self::EstimatorFailure { detail } => {
                write!(f, "incomplete_estimate:estimator_failure:{detail}")
            }
            Self::InvalidZeroEstimate => f.write_str("invalid_zero_estimate"),
        }
    }
}

/// A refused reservation: the reason, and the level that refused with its use and limit at that
/// moment (the `used=` and `max=` of the rejection warning).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// Why the value was refused.
    pub reason: RejectReason,
    /// The level that refused. For [`RejectReason::EntryTooLarge`], the level whose limit is the
    /// effective one.
    pub level: Level,
    /// Bytes the refusing level held when it refused.
    pub used: u64,
    /// The refusing level's limit in bytes.
    pub limit: u64,
    /// Bytes that were asked for.
    pub requested: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_render_exactly_as_the_spec_names_them() {
        let cases = [
            (RejectReason::BudgetExceeded, "budget_exceeded"),
            (RejectReason::EntryTooLarge, "entry_too_large"),
            (
                RejectReason::IncompleteEstimate {
                    detail: "visit_budget_exhausted".into(),
                },
                "incomplete_estimate:visit_budget_exhausted",
            ),
            (
                RejectReason::EstimatorFailure {
                    detail: "boom".into(),
                },
                "incomplete_estimate:estimator_failure:boom",
            ),
            (RejectReason::InvalidZeroEstimate, "invalid_zero_estimate"),
        ];
        for (reason, text) in cases {
            assert_eq!(reason.to_string(), text);
        }
    }
}
