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

impl RejectReason {
    /// The reason without its detail: a bounded set, fit for a metric label.
    pub fn kind(&self) -> RejectKind {
        match self {
            Self::BudgetExceeded => RejectKind::BudgetExceeded,
            Self::EntryTooLarge => RejectKind::EntryTooLarge,
            Self::IncompleteEstimate { .. } => RejectKind::IncompleteEstimate,
            Self::EstimatorFailure { .. } => RejectKind::EstimatorFailure,
            Self::InvalidZeroEstimate => RejectKind::InvalidZeroEstimate,
        }
    }
}

/// [`RejectReason`] without its free-text detail, for counting rejections by reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RejectKind {
    /// [`RejectReason::BudgetExceeded`].
    BudgetExceeded,
    /// [`RejectReason::EntryTooLarge`].
    EntryTooLarge,
    /// [`RejectReason::IncompleteEstimate`].
    IncompleteEstimate,
    /// [`RejectReason::EstimatorFailure`].
    EstimatorFailure,
    /// [`RejectReason::InvalidZeroEstimate`].
    InvalidZeroEstimate,
}

impl RejectKind {
    /// Every kind, in the order of [`RejectKind::index`].
    pub const ALL: [Self; 5] = [
        Self::BudgetExceeded,
        Self::EntryTooLarge,
        Self::IncompleteEstimate,
        Self::EstimatorFailure,
        Self::InvalidZeroEstimate,
    ];

    /// Position in [`RejectKind::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The label value: the reason string's first part (`estimator_failure` for the estimator
    /// failures that the reason string files under `incomplete_estimate:`).
    pub fn label(self) -> &'static str {
        match self {
            Self::BudgetExceeded => "budget_exceeded",
            Self::EntryTooLarge => "entry_too_large",
            Self::IncompleteEstimate => "incomplete_estimate",
            Self::EstimatorFailure => "estimator_failure",
            Self::InvalidZeroEstimate => "invalid_zero_estimate",
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
    fn kinds_index_their_position_and_label_the_reason_prefix() {
        for (i, kind) in RejectKind::ALL.into_iter().enumerate() {
            assert_eq!(kind.index(), i);
        }
        let reason = RejectReason::IncompleteEstimate {
            detail: "visit_budget_exhausted".into(),
        };
        assert!(reason.to_string().starts_with(reason.kind().label()));
        assert_eq!(
            RejectReason::BudgetExceeded.kind().label(),
            "budget_exceeded"
        );
    }

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
