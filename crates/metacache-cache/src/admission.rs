//! Admission of a loaded value (§3): estimate, overhead, entry limit, reservation — and what a
//! rejection leaves behind (counter, reason, rate-limited warning).

use std::sync::atomic::Ordering::Relaxed;

use metacache_estimate::{Estimate, EstimateSize, estimate};
use metacache_ledger::{ACCOUNTING_OVERHEAD_BYTES, Budget, Level, RejectReason, Rejection};

use crate::counters::CacheCounters;

/// What happened to a value after it was loaded or put.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    /// Retained, charged `charge` bytes in the ledger.
    Retained {
        /// Estimate plus the fixed accounting overhead.
        charge: u64,
    },
    /// Not retained: the reason is also recorded in the statistics.
    Rejected(RejectReason),
    /// Not retained because the cache is disabled (`enable=false`, `ttl-second=0` or
    /// `capacity=0`).
    Disabled,
    /// Not retained because the cache was invalidated while the value was loading.
    Fenced,
    /// Not retained because the cache is full and making room would have displaced values
    /// asked for at least as often (frequency admission), or because the eviction that made
    /// room took the value itself (a key readmitted from quick_cache's ghost history enters
    /// the hot ring before the evictions for it). Counted as an eviction.
    Declined,
    /// Not retained because a concurrent operation (a newer value of the same key, or another
    /// insertion's eviction) took its place in the moment between storing and charging it.
    Superseded,
}

/// Minimum time between two rejection warnings of one cache.
pub(crate) const WARNING_INTERVAL_MILLIS: u64 = 60_000;

/// The bytes to reserve for `value` stored under `key`, or why it cannot be retained: the
/// value's estimate, plus the key's (its own copy lives in the map, up to 4 KiB for look-aside
/// keys), plus the fixed accounting overhead.
///
/// With no limit at any level (accounting off, §3) nothing is refused by weight: the value is
/// still charged what could be counted, so that `ESTIMATED_WEIGHT` is informative and a node
/// limit set later at runtime finds the bytes already accounted.
pub(crate) fn charge_for<K: EstimateSize, V: EstimateSize>(
    key: &K,
    value: &V,
    budget: &Budget,
    visit_budget: u64,
) -> Result<u64, Rejection> {
    let governed = budget.effective_limit_with_level();
    let (bytes, refusal) = match estimate(value, visit_budget) {
        Estimate::Complete(0) => (0, Some(RejectReason::InvalidZeroEstimate)),
        Estimate::Complete(bytes) => (bytes, None),
        Estimate::Incomplete { partial, detail } => {
            (partial, Some(RejectReason::IncompleteEstimate { detail }))
        }
        Estimate::Failed { detail } => (0, Some(RejectReason::EstimatorFailure { detail })),
    };
    match (refusal, governed) {
        (Some(reason), Some((level, limit))) => Err(Rejection {
            reason,
            level,
            used: budget.ancestor(level).map_or(0, Budget::used),
            limit,
            requested: bytes,
        }),
        _ => Ok(bytes
            .saturating_add(key_bytes(key, visit_budget))
            .saturating_add(ACCOUNTING_OVERHEAD_BYTES)),
    }
}

/// What a key keeps alive: its inline size and its heap parts. A key's estimate never refuses
/// a value; what could be counted is charged.
pub(crate) fn key_bytes<K: EstimateSize>(key: &K, visit_budget: u64) -> u64 {
    match estimate(key, visit_budget) {
        Estimate::Complete(bytes) | Estimate::Incomplete { partial: bytes, .. } => bytes,
        Estimate::Failed { .. } => std::mem::size_of::<K>() as u64,
    }
}

/// The warning logged when a cache rejects a value by weight (§3, exact text).
pub fn rejection_warning(entry_name: &str, reason: &RejectReason, used: u64, max: u64) -> String {
    format!(
        "Metadata cache entry '{entry_name}' rejected a value by weight: reason={reason}, used={used}, max={max}"
    )
}

/// Records a rejection in the counters and logs it, at most once per
/// [`WARNING_INTERVAL_MILLIS`] per cache.
pub(crate) fn record_rejection(
    counters: &CacheCounters,
    entry_name: &str,
    budget: &Budget,
    rejection: &Rejection,
    now_millis: u64,
) {
    CacheCounters::add(&counters.weight_rejects[rejection.reason.kind().index()], 1);
    *counters.last_reject_reason.lock() = Some(rejection.reason.to_string());
    let last = counters.last_warning_millis.load(Relaxed);
    let due = last == 0 || now_millis.saturating_sub(last) >= WARNING_INTERVAL_MILLIS;
    if due
        && counters
            .last_warning_millis
            .compare_exchange(last, now_millis.max(1), Relaxed, Relaxed)
            .is_ok()
    {
        let catalog = budget.ancestor(Level::Catalog).map_or("", Budget::name);
        tracing::warn!(
            catalog,
            level = %rejection.level,
            "{}",
            rejection_warning(entry_name, &rejection.reason, rejection.used, rejection.limit)
        );
    }
}

#[cfg(test)]
mod tests {
    use metacache_estimate::Sizer;
    use metacache_ledger::Ledger;

    use super::*;

    struct Bytes(u64);
    impl EstimateSize for Bytes {
        fn estimate_size(&self, sizer: &mut Sizer) {
            sizer.add(self.0 as usize);
        }
    }
    struct Opaque;
    impl EstimateSize for Opaque {
        fn estimate_size(&self, sizer: &mut Sizer) {
            sizer.add(100);
            sizer.mark_incomplete("opaque_handle");
        }
    }
    struct Broken;
    impl EstimateSize for Broken {
        fn estimate_size(&self, _: &mut Sizer) {
            panic!("index out of bounds");
        }
    }

    #[test]
    fn governed_admission_follows_the_spec_steps() {
        let ledger = Ledger::new(Some(10_000));
        let node = ledger.node();
        let cases: Vec<(&str, Result<u64, String>)> = vec![
            (
                "complete",
                charge_for(&0u64, &Bytes(100), node, 10).map_err(|r| r.reason.to_string()),
            ),
            (
                "zero",
                charge_for(&0u64, &Bytes(0), node, 10).map_err(|r| r.reason.to_string()),
            ),
            (
                "incomplete",
                charge_for(&0u64, &Opaque, node, 10).map_err(|r| r.reason.to_string()),
            ),
            (
                "panic",
                charge_for(&0u64, &Broken, node, 10).map_err(|r| r.reason.to_string()),
            ),
            (
                "saturating",
                charge_for(&0u64, &Bytes(u64::MAX), node, 10).map_err(|r| r.reason.to_string()),
            ),
        ];
        let expected: Vec<(&str, Result<u64, String>)> = vec![
            ("complete", Ok(620)),
            ("zero", Err("invalid_zero_estimate".into())),
            (
                "incomplete",
                Err("incomplete_estimate:opaque_handle".into()),
            ),
            (
                "panic",
                Err("incomplete_estimate:estimator_failure:index out of bounds".into()),
            ),
            ("saturating", Ok(u64::MAX)),
        ];
        assert_eq!(cases, expected);
    }

    #[test]
    fn ungoverned_admission_refuses_nothing_but_still_charges() {
        let ledger = Ledger::new(None);
        assert_eq!(charge_for(&0u64, &Bytes(0), ledger.node(), 10), Ok(520));
        assert_eq!(charge_for(&0u64, &Opaque, ledger.node(), 10), Ok(620));
        assert_eq!(charge_for(&0u64, &Broken, ledger.node(), 10), Ok(520));
    }

    #[test]
    fn warning_text_is_exact() {
        assert_eq!(
            rejection_warning("hive-file", &RejectReason::BudgetExceeded, 1024, 2048),
            "Metadata cache entry 'hive-file' rejected a value by weight: reason=budget_exceeded, used=1024, max=2048"
        );
    }

    #[test]
    fn warnings_are_rate_limited_per_cache() {
        let ledger = Ledger::new(Some(1));
        let counters = CacheCounters::default();
        let rejection = Rejection {
            reason: RejectReason::EntryTooLarge,
            level: Level::Node,
            used: 0,
            limit: 1,
            requested: 600,
        };
        let mut logged = Vec::new();
        for now in [1_000, 2_000, 60_999, 61_000, 61_001, 130_000] {
            let before = counters.last_warning_millis.load(Relaxed);
            record_rejection(&counters, "x", ledger.node(), &rejection, now);
            if counters.last_warning_millis.load(Relaxed) != before {
                logged.push(now);
            }
        }
        assert_eq!(logged, vec![1_000, 61_000, 130_000]);
        assert_eq!(
            CacheCounters::read_all(&counters.weight_rejects),
            [0, 6, 0, 0, 0],
            "counted under entry_too_large"
        );
        assert_eq!(
            counters.last_reject_reason.lock().as_deref(),
            Some("entry_too_large")
        );
    }
}
