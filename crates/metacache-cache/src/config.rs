//! What one managed cache is told: its name, whether it is on, how long values live, how many
//! it may hold.

use std::sync::Arc;
use std::time::Duration;

/// When a value's TTL starts counting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Expiry {
    /// From the load; reads do not extend it (the default, bounding staleness).
    #[default]
    AfterWrite,
    /// From the last read (the `default.schema` entry).
    AfterAccess,
}

/// The settings of one managed cache (`meta.cache.<engine>.<entry>.{enable,ttl-second,capacity}`
/// after defaults and legacy keys are applied; the byte limit lives in the ledger).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheConfig {
    /// The ENTRY_NAME shown in the statistics table and in warnings.
    pub entry_name: Arc<str>,
    /// `enable`.
    pub enabled: bool,
    /// `ttl-second`; `None` when values never expire.
    pub ttl: Option<Duration>,
    /// When the TTL starts counting.
    pub expiry: Expiry,
    /// `capacity`: the most values retained.
    pub capacity: u64,
    /// Whether refresh-ahead is on for this entry (reported as `AUTO_REFRESH`).
    pub auto_refresh: bool,
    /// Visits an estimate may make before it counts as incomplete.
    pub visit_budget: u64,
    /// The quota advisor's settings; `None` (the default of [`CacheConfig::new`]) turns it off
    /// (`crate::advice`). Catalogs turn it on for their caches unless the entry's `advisor`
    /// setting is `false`.
    pub advisor: Option<crate::AdvisorOptions>,
}

impl CacheConfig {
    /// An enabled cache named `entry_name` that holds up to `capacity` values for `ttl`.
    pub fn new(entry_name: impl Into<Arc<str>>, ttl: Option<Duration>, capacity: u64) -> Self {
        Self {
            entry_name: entry_name.into(),
            enabled: true,
            ttl,
            expiry: Expiry::AfterWrite,
            capacity,
            auto_refresh: false,
            visit_budget: metacache_estimate::DEFAULT_VISIT_BUDGET,
            advisor: None,
        }
    }

    /// Sets `enable`.
    pub fn with_enabled(mut self, enabled: bool) -> Self {
        self.enabled = enabled;
        self
    }

    /// Sets when the TTL starts counting.
    pub fn with_expiry(mut self, expiry: Expiry) -> Self {
        self.expiry = expiry;
        self
    }

    /// Sets `auto-refresh` (refresh-ahead, §8.3).
    pub fn with_auto_refresh(mut self, auto_refresh: bool) -> Self {
        self.auto_refresh = auto_refresh;
        self
    }

    /// Sets the quota advisor's options; `None` turns it off.
    pub fn with_advisor(mut self, advisor: Option<crate::AdvisorOptions>) -> Self {
        self.advisor = advisor;
        self
    }

    /// Sets the estimator's visit budget.
    pub fn with_visit_budget(mut self, visit_budget: u64) -> Self {
        self.visit_budget = visit_budget;
        self
    }

    /// Whether the cache retains anything: enabled, with a TTL other than zero and a capacity
    /// other than zero (`EFFECTIVE_ENABLED`).
    pub fn effectively_enabled(&self) -> bool {
        self.enabled && self.ttl != Some(Duration::ZERO) && self.capacity > 0
    }

    /// `TTL_SECOND` as shown in the statistics table: `-1` when values never expire.
    pub fn ttl_second(&self) -> i64 {
        self.ttl
            .map_or(-1, |t| i64::try_from(t.as_secs()).unwrap_or(i64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_ttl_zero_capacity_or_disabled_turn_the_cache_off() {
        let on = CacheConfig::new("hive-file", Some(Duration::from_secs(86_400)), 10_000);
        assert!(on.effectively_enabled());
        assert!(!on.clone().with_enabled(false).effectively_enabled());
        assert!(!CacheConfig::new("x", Some(Duration::ZERO), 10).effectively_enabled());
        assert!(!CacheConfig::new("x", None, 0).effectively_enabled());
        assert!(CacheConfig::new("x", None, 1).effectively_enabled());
        assert_eq!(CacheConfig::new("x", None, 1).ttl_second(), -1);
        assert_eq!(on.ttl_second(), 86_400);
    }
}
