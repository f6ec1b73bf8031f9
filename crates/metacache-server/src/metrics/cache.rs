//! The per-cache families of `/metrics`: counters and state per cache (or summed per entry or
//! per catalog, [`Granularity`]), each cache's settings as labels of one `metacache_cache_info`
//! series, and the load-time histogram per engine and entry. Written straight into the output
//! with each cache's label set formatted once.

use metacache_cache::{CacheStats, EvictionCause, LoadTimes};
use metacache_catalog::CacheRow;
use metacache_ledger::RejectKind;

use super::text::{Sample, escape, push_header, push_sample, push_value};

/// A sample's extra label (`cause`, `reason`) beyond the cache's own, if any.
type Extra = Option<(&'static str, &'static str)>;

/// One per-cache series family: `samples` hands each of a cache's samples to `emit`.
struct CacheMetric {
    name: &'static str,
    help: &'static str,
    counter: bool,
    samples: fn(&CacheStats, &mut dyn FnMut(Extra, Sample)),
}

/// A count that is exported only once it is not zero: rare events (failures, invalidations,
/// rejections) cost no series on the caches where they never happen.
fn sparse(v: u64, extra: Extra, emit: &mut dyn FnMut(Extra, Sample)) {
    if v > 0 {
        emit(extra, Sample::Count(v));
    }
}

/// The per-cache families (issue 14): counters and state, no ratios (PromQL computes them over a
/// window from the counters, docs/metrics.md) and no family per static setting (they are labels
/// of `metacache_cache_info`). An active cache without failures, invalidations, rejections or
/// evictions other than by size has 9 series.
pub(super) const FAMILIES: usize = CACHE_METRICS.len();

const CACHE_METRICS: &[CacheMetric] = &[
    CacheMetric {
        name: "metacache_cache_hits_total",
        help: "Lookups answered from the cache (HIT_COUNT).",
        counter: true,
        samples: |s, emit| emit(None, Sample::Count(s.hit_count)),
    },
    CacheMetric {
        name: "metacache_cache_misses_total",
        help: "Lookups that loaded (MISS_COUNT); requests are hits + misses.",
        counter: true,
        samples: |s, emit| emit(None, Sample::Count(s.miss_count)),
    },
    CacheMetric {
        name: "metacache_cache_load_successes_total",
        help: "Loads that succeeded (LOAD_SUCCESS_COUNT).",
        counter: true,
        samples: |s, emit| emit(None, Sample::Count(s.load_success_count)),
    },
    CacheMetric {
        name: "metacache_cache_load_failures_total",
        help: "Loads that failed (LOAD_FAILURE_COUNT); absent until one fails.",
        counter: true,
        samples: |s, emit| sparse(s.load_failure_count, None, emit),
    },
    CacheMetric {
        name: "metacache_cache_load_duration_seconds_total",
        help: "Time spent loading, successes and failures (TOTAL_LOAD_TIME_MS).",
        counter: true,
        samples: |s, emit| emit(None, Sample::Real(s.total_load_time_nanos as f64 / 1e9)),
    },
    CacheMetric {
        name: "metacache_cache_evictions_total",
        help: "Evictions (EVICTION_COUNT) by cause: size (the cache's own bounds), expired (TTL), reclaimed (the catalog or node was full); expired and reclaimed are absent until the first.",
        counter: true,
        samples: |s, emit| {
            for cause in EvictionCause::ALL {
                let count = s.evictions_by_cause[cause.index()];
                if count > 0 || cause == EvictionCause::Size {
                    emit(Some(("cause", cause.label())), Sample::Count(count));
                }
            }
        },
    },
    CacheMetric {
        name: "metacache_cache_invalidations_total",
        help: "Explicit removals (INVALIDATE_COUNT); absent until the first.",
        counter: true,
        samples: |s, emit| sparse(s.invalidate_count, None, emit),
    },
    CacheMetric {
        name: "metacache_cache_weight_rejects_total",
        help: "Admissions refused by weight (WEIGHT_REJECT_COUNT) by reason; each reason absent until its first.",
        counter: true,
        samples: |s, emit| {
            for kind in RejectKind::ALL {
                let count = s.weight_rejects_by_reason[kind.index()];
                sparse(count, Some(("reason", kind.label())), emit);
            }
        },
    },
    CacheMetric {
        name: "metacache_cache_entries",
        help: "Values retained now (ESTIMATED_SIZE).",
        counter: false,
        samples: |s, emit| emit(None, Sample::Count(s.estimated_size)),
    },
    CacheMetric {
        name: "metacache_cache_estimated_weight_bytes",
        help: "Bytes reserved now (ESTIMATED_WEIGHT).",
        counter: false,
        samples: |s, emit| emit(None, Sample::Count(s.estimated_weight)),
    },
    CacheMetric {
        name: MAX_WEIGHT,
        help: "Effective byte limit, -1 when none applies (MAX_WEIGHT).",
        counter: false,
        samples: |s, emit| emit(None, Sample::Signed(s.max_weight)),
    },
    CacheMetric {
        name: "metacache_cache_last_load_failure_timestamp_seconds",
        help: "Unix time of the last failed load (LAST_LOAD_FAILURE_TIME); absent until one fails.",
        counter: false,
        samples: |s, emit| {
            if let Some(millis) = s.last_load_failure_millis {
                emit(None, Sample::Real(millis as f64 / 1000.0));
            }
        },
    },
];

/// The per-cache limit: a summed series leaves it out (a limit belongs to one cache).
const MAX_WEIGHT: &str = "metacache_cache_max_weight_bytes";

/// The load-time histogram, labelled `engine` and `entry` whatever the granularity: 18 series
/// per kind of cache that has loaded, a constant of the definitions rather than of the catalogs.
const LOAD_HISTOGRAM: &str = "metacache_entry_load_duration_seconds";

/// `metacache_cache_info`: the static settings of each cache as labels, value 1.
const INFO: &str = "metacache_cache_info";

/// How finely the per-cache families are labelled (node key `metrics_cache_labels`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Granularity {
    /// `catalog`, `engine`, `entry`: one set of series per cache in use (the default).
    Cache,
    /// `engine`, `entry`: summed over the catalogs.
    Entry,
    /// `catalog`: summed over the catalog's caches.
    Catalog,
}

impl Granularity {
    /// The key's value; `None` for another word.
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "cache" => Some(Self::Cache),
            "entry" => Some(Self::Entry),
            "catalog" => Some(Self::Catalog),
            _ => None,
        }
    }
}

/// Adds `other`'s counts and bytes into `into` (an aggregated series' stats).
fn add(into: &mut CacheStats, other: &CacheStats) {
    into.estimated_size += other.estimated_size;
    into.hit_count += other.hit_count;
    into.miss_count += other.miss_count;
    into.load_success_count += other.load_success_count;
    into.load_failure_count += other.load_failure_count;
    into.total_load_time_ms += other.total_load_time_ms;
    into.total_load_time_nanos += other.total_load_time_nanos;
    into.eviction_count += other.eviction_count;
    for (sum, count) in into
        .evictions_by_cause
        .iter_mut()
        .zip(other.evictions_by_cause)
    {
        *sum += count;
    }
    for (sum, count) in into
        .weight_rejects_by_reason
        .iter_mut()
        .zip(other.weight_rejects_by_reason)
    {
        *sum += count;
    }
    into.load_times.add(&other.load_times);
    into.invalidate_count += other.invalidate_count;
    into.estimated_weight += other.estimated_weight;
    into.weight_reject_count += other.weight_reject_count;
    into.last_load_failure_millis = into
        .last_load_failure_millis
        .max(other.last_load_failure_millis);
}

/// The rows as labelled series groups: each group's label set (without the closing brace) and
/// its stats, one group per cache or summed at a coarser granularity.
fn groups(rows: Vec<CacheRow>, granularity: Granularity) -> Vec<(String, CacheStats)> {
    let quoted = |name: &str, value: &str, out: &mut String| {
        out.push_str(name);
        out.push_str("=\"");
        escape(value, out);
        out.push('"');
    };
    let mut groups: Vec<(String, CacheStats)> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for row in rows {
        let mut l = String::with_capacity(
            24 + row.catalog.len() + row.engine.len() + row.stats.entry_name.len(),
        );
        l.push('{');
        match granularity {
            Granularity::Cache => {
                quoted("catalog", &row.catalog, &mut l);
                l.push(',');
                quoted("engine", &row.engine, &mut l);
                l.push(',');
                quoted("entry", &row.stats.entry_name, &mut l);
                groups.push((l, row.stats));
                continue;
            }
            Granularity::Entry => {
                quoted("engine", &row.engine, &mut l);
                l.push(',');
                quoted("entry", &row.stats.entry_name, &mut l);
            }
            Granularity::Catalog => quoted("catalog", &row.catalog, &mut l),
        }
        match index.get(&l) {
            Some(&at) => add(&mut groups[at].1, &row.stats),
            None => {
                index.insert(l.clone(), groups.len());
                groups.push((l, row.stats));
            }
        }
    }
    groups
}

/// `metacache_entry_load_duration_seconds`: the caches' load times summed per engine and entry,
/// for the kinds of cache that have loaded.
fn render_load_histogram(rows: &[CacheRow], out: &mut String) {
    let mut kinds: std::collections::BTreeMap<(&str, &str), (LoadTimes, u64)> =
        std::collections::BTreeMap::new();
    for row in rows.iter().filter(|r| r.stats.load_times.total() > 0) {
        let (times, nanos) = kinds
            .entry((row.engine.as_str(), row.stats.entry_name.as_str()))
            .or_default();
        times.add(&row.stats.load_times);
        *nanos += row.stats.total_load_time_nanos;
    }
    if kinds.is_empty() {
        return;
    }
    push_header(
        LOAD_HISTOGRAM,
        "Time of each load, successful or not, summed over the catalogs' caches of one engine and entry.",
        "histogram",
        out,
    );
    for ((engine, entry), (times, nanos)) in &kinds {
        let mut labels = String::from("{engine=\"");
        escape(engine, &mut labels);
        labels.push_str("\",entry=\"");
        escape(entry, &mut labels);
        labels.push('"');
        for (bound, count) in times.cumulative() {
            out.push_str(LOAD_HISTOGRAM);
            out.push_str("_bucket");
            out.push_str(&labels);
            out.push_str(",le=\"");
            push_value(bound, out);
            out.push_str("\"} ");
            out.push_str(itoa::Buffer::new().format(count));
            out.push('\n');
        }
        for (suffix, sample) in [
            ("_sum", Sample::Real(*nanos as f64 / 1e9)),
            ("_count", Sample::Count(times.total())),
        ] {
            out.push_str(LOAD_HISTOGRAM);
            out.push_str(suffix);
            out.push_str(&labels);
            out.push_str("} ");
            push_sample(sample, out);
            out.push('\n');
        }
    }
}

/// The per-cache families, written directly: per cache, or summed (`granularity`), where the
/// limit and the settings (`metacache_cache_info`) are left out — they belong to one cache.
pub(super) fn render_caches(rows: Vec<CacheRow>, granularity: Granularity, out: &mut String) {
    render_load_histogram(&rows, out);
    let groups = groups(rows, granularity);
    let per_cache = granularity == Granularity::Cache;
    let mut lines = String::new();
    for metric in CACHE_METRICS {
        if !per_cache && metric.name == MAX_WEIGHT {
            continue;
        }
        lines.clear();
        for (labels, stats) in &groups {
            (metric.samples)(stats, &mut |extra, sample| {
                lines.push_str(metric.name);
                lines.push_str(labels);
                if let Some((name, value)) = extra {
                    lines.push(',');
                    lines.push_str(name);
                    lines.push_str("=\"");
                    lines.push_str(value);
                    lines.push('"');
                }
                lines.push_str("} ");
                push_sample(sample, &mut lines);
                lines.push('\n');
            });
        }
        if lines.is_empty() {
            continue;
        }
        let kind = if metric.counter { "counter" } else { "gauge" };
        push_header(metric.name, metric.help, kind, out);
        out.push_str(&lines);
    }
    if groups.is_empty() || !per_cache {
        return;
    }
    push_header(
        INFO,
        "Settings of each cache: ttl_seconds (-1 never), capacity, enabled (the enable setting), effective_enabled, auto_refresh.",
        "gauge",
        out,
    );
    for (labels, s) in &groups {
        out.push_str(INFO);
        out.push_str(labels);
        out.push_str(",ttl_seconds=\"");
        out.push_str(itoa::Buffer::new().format(s.ttl_second));
        out.push_str("\",capacity=\"");
        out.push_str(itoa::Buffer::new().format(s.capacity));
        for (name, value) in [
            ("enabled", s.config_enabled),
            ("effective_enabled", s.effective_enabled),
            ("auto_refresh", s.auto_refresh),
        ] {
            out.push_str("\",");
            out.push_str(name);
            out.push_str("=\"");
            out.push_str(if value { "true" } else { "false" });
        }
        out.push_str("\"} 1\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(catalog: &str, entry: &str) -> CacheRow {
        let config = metacache_cache::CacheConfig::new(entry, None, 100);
        CacheRow {
            catalog: catalog.to_owned(),
            engine: "hive".to_owned(),
            built: true,
            stats: CacheStats::idle(&config, 1024),
        }
    }

    #[test]
    fn causes_and_reasons_are_labels_and_load_times_a_histogram_per_kind() {
        let mut quiet = row("a", "hive-file");
        quiet.stats.load_times.counts[2] = 1;
        quiet.stats.total_load_time_nanos = 2_000_000;
        let mut busy = row("b", "hive-file");
        busy.stats.evictions_by_cause = [3, 0, 2];
        busy.stats.weight_rejects_by_reason[RejectKind::EntryTooLarge.index()] = 4;
        busy.stats.load_times.counts[15] = 1;
        busy.stats.total_load_time_nanos = 40_000_000_000;
        let mut out = String::new();
        render_caches(vec![quiet, busy], Granularity::Cache, &mut out);
        let lines: Vec<&str> = out.lines().filter(|l| !l.starts_with('#')).collect();
        for expected in [
            "metacache_cache_evictions_total{catalog=\"a\",engine=\"hive\",entry=\"hive-file\",cause=\"size\"} 0",
            "metacache_cache_evictions_total{catalog=\"b\",engine=\"hive\",entry=\"hive-file\",cause=\"size\"} 3",
            "metacache_cache_evictions_total{catalog=\"b\",engine=\"hive\",entry=\"hive-file\",cause=\"reclaimed\"} 2",
            "metacache_cache_weight_rejects_total{catalog=\"b\",engine=\"hive\",entry=\"hive-file\",reason=\"entry_too_large\"} 4",
            "metacache_entry_load_duration_seconds_bucket{engine=\"hive\",entry=\"hive-file\",le=\"0.0025\"} 1",
            "metacache_entry_load_duration_seconds_bucket{engine=\"hive\",entry=\"hive-file\",le=\"30\"} 1",
            "metacache_entry_load_duration_seconds_bucket{engine=\"hive\",entry=\"hive-file\",le=\"+Inf\"} 2",
            "metacache_entry_load_duration_seconds_sum{engine=\"hive\",entry=\"hive-file\"} 40.002",
            "metacache_entry_load_duration_seconds_count{engine=\"hive\",entry=\"hive-file\"} 2",
        ] {
            assert!(lines.contains(&expected), "{expected}\nin\n{out}");
        }
        assert!(
            !out.contains("cause=\"expired\"") && !out.contains("reason=\"budget_exceeded\""),
            "causes and reasons that never happened cost no series"
        );
        assert_eq!(
            lines
                .iter()
                .filter(|l| l.starts_with("metacache_entry_load_duration_seconds"))
                .count(),
            18,
            "one histogram for the two catalogs' caches of one kind"
        );
    }
}
