//! A point-in-time view of one cache: the columns of `catalog_meta_cache_statistics` that the
//! cache itself knows (the front end adds FE_HOST, CATALOG_NAME and ENGINE_NAME).

use metacache_ledger::RejectKind;

use crate::histogram::LoadTimes;

/// Why a value left a cache without being invalidated: the `cause` label of evictions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EvictionCause {
    /// The cache's own bounds: its capacity or byte limit (a value the frequency filter refused
    /// to admit over hotter ones counts here too, as in Caffeine).
    Size,
    /// Its TTL passed.
    Expired,
    /// Reclamation freed it because the catalog or node above the cache was full.
    Reclaimed,
}

impl EvictionCause {
    /// Every cause, in the order of [`EvictionCause::index`].
    pub const ALL: [Self; 3] = [Self::Size, Self::Expired, Self::Reclaimed];

    /// Position in [`EvictionCause::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            Self::Size => "size",
            Self::Expired => "expired",
            Self::Reclaimed => "reclaimed",
        }
    }
}

/// Statistics of one managed cache instance. Counters are cumulative since the instance was built.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheStats {
    /// ENTRY_NAME.
    pub entry_name: String,
    /// EFFECTIVE_ENABLED: enabled, TTL not zero, capacity not zero.
    pub effective_enabled: bool,
    /// CONFIG_ENABLED: the `enable` setting.
    pub config_enabled: bool,
    /// AUTO_REFRESH.
    pub auto_refresh: bool,
    /// TTL_SECOND; `-1` when values never expire.
    pub ttl_second: i64,
    /// CAPACITY (values).
    pub capacity: u64,
    /// ESTIMATED_SIZE: values retained now.
    pub estimated_size: u64,
    /// REQUEST_COUNT = hits + misses.
    pub request_count: u64,
    /// HIT_COUNT.
    pub hit_count: u64,
    /// MISS_COUNT (a disabled cache counts every access as a miss).
    pub miss_count: u64,
    /// LOAD_SUCCESS_COUNT.
    pub load_success_count: u64,
    /// LOAD_FAILURE_COUNT.
    pub load_failure_count: u64,
    /// TOTAL_LOAD_TIME_MS.
    pub total_load_time_ms: u64,
    /// EVICTION_COUNT: capacity, weight (reclamation) and TTL evictions.
    pub eviction_count: u64,
    /// EVICTION_COUNT by cause, indexed by [`EvictionCause::index`].
    pub evictions_by_cause: [u64; EvictionCause::ALL.len()],
    /// INVALIDATE_COUNT: explicit removals.
    pub invalidate_count: u64,
    /// LAST_LOAD_SUCCESS_TIME, wall-clock milliseconds since the epoch.
    pub last_load_success_millis: Option<u64>,
    /// LAST_LOAD_FAILURE_TIME, wall-clock milliseconds since the epoch.
    pub last_load_failure_millis: Option<u64>,
    /// LAST_ERROR.
    pub last_error: Option<String>,
    /// MAX_WEIGHT: effective byte limit, `-1` when none applies.
    pub max_weight: i64,
    /// ESTIMATED_WEIGHT: bytes reserved now.
    pub estimated_weight: u64,
    /// WEIGHT_REJECT_COUNT.
    pub weight_reject_count: u64,
    /// WEIGHT_REJECT_COUNT by reason, indexed by [`RejectKind::index`].
    pub weight_rejects_by_reason: [u64; RejectKind::ALL.len()],
    /// Loads (successes and failures) by duration.
    pub load_times: LoadTimes,
    /// LAST_WEIGHT_REJECT_REASON.
    pub last_weight_reject_reason: Option<String>,
    /// TOTAL_LOAD_TIME_MS in nanoseconds: the exact sum behind the histogram's `_sum`.
    pub total_load_time_nanos: u64,
    /// What refresh-ahead did (`catalog_meta_cache_refresh`; not a column of the statistics
    /// table).
    pub refresh: crate::RefreshStats,
}

impl CacheStats {
    /// The row of a cache that is configured but not built yet (caches are built on first
    /// use): its settings, a `max_weight` computed by the caller, and zero counters.
    pub fn idle(config: &crate::CacheConfig, max_weight: i64) -> Self {
        Self {
            entry_name: config.entry_name.to_string(),
            effective_enabled: config.effectively_enabled(),
            config_enabled: config.enabled,
            auto_refresh: config.auto_refresh,
            ttl_second: config.ttl_second(),
            capacity: config.capacity,
            estimated_size: 0,
            request_count: 0,
            hit_count: 0,
            miss_count: 0,
            load_success_count: 0,
            load_failure_count: 0,
            total_load_time_ms: 0,
            eviction_count: 0,
            evictions_by_cause: [0; EvictionCause::ALL.len()],
            invalidate_count: 0,
            last_load_success_millis: None,
            last_load_failure_millis: None,
            last_error: None,
            max_weight,
            estimated_weight: 0,
            weight_reject_count: 0,
            weight_rejects_by_reason: [0; RejectKind::ALL.len()],
            load_times: LoadTimes::default(),
            last_weight_reject_reason: None,
            total_load_time_nanos: 0,
            refresh: crate::RefreshStats::default(),
        }
    }

    /// HIT_RATE: hits / requests, 0 with no requests.
    pub fn hit_rate(&self) -> f64 {
        ratio(self.hit_count, self.request_count)
    }

    /// EVICTION_RATE: evictions / requests, 0 with no requests.
    pub fn eviction_rate(&self) -> f64 {
        ratio(self.eviction_count, self.request_count)
    }

    /// AVG_LOAD_PENALTY_MS: mean time of a load, successful or not, 0 with no loads.
    pub fn avg_load_penalty_ms(&self) -> f64 {
        let loads = self.load_success_count + self.load_failure_count;
        if loads == 0 {
            0.0
        } else {
            self.total_load_time_nanos as f64 / 1e6 / loads as f64
        }
    }
}

fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}
