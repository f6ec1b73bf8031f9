//! `GET /metrics`: the counters and state of the statistics table as Prometheus series —
//! for the caches that exist (built; unbuilt caches are statistics-table rows only), labelled
//! per cache or summed per entry or per catalog (`metrics_cache_labels`), without ratio gauges
//! (PromQL computes them over a window, docs/metrics.md) and with each cache's settings as
//! labels of one `metacache_cache_info` series — plus node and catalog gauges, named by
//! Prometheus conventions (`_total` counters, base units `_seconds` / `_bytes`).
//!
//! Families are built from a snapshot at scrape time, so there is no second set of counters to
//! keep in step with the caches. The per-cache families (9 series for a typical cache) are written
//! straight into the output with each cache's label set formatted once, and counts as integers
//! (no `f64` round trip); the few node and catalog families go through the `prometheus` crate's
//! encoder.

use metacache_cache::CacheStats;
use metacache_catalog::CatalogManager;
use prometheus::proto::{Counter, Gauge, LabelPair, Metric, MetricFamily, MetricType};
use prometheus::{Encoder, TextEncoder};

/// One per-cache series family.
struct CacheMetric {
    name: &'static str,
    help: &'static str,
    counter: bool,
    value: fn(&CacheStats) -> Option<Sample>,
}

/// A sample value. Counts stay integers end to end: they print exactly (beyond 2^53 too) and
/// several times faster than through `f64` formatting, which matters at 40,000 series a scrape.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Sample {
    Count(u64),
    Signed(i64),
    Real(f64),
}

fn n(v: u64) -> Option<Sample> {
    Some(Sample::Count(v))
}

fn real(v: f64) -> Option<Sample> {
    Some(Sample::Real(v))
}

/// A count that is exported only once it is not zero: rare events (failures, invalidations,
/// rejections) cost no series on the caches where they never happen.
fn sparse(v: u64) -> Option<Sample> {
    (v > 0).then_some(Sample::Count(v))
}

/// The per-cache families (issue 14): counters and state, no ratios (PromQL computes them over a
/// window from the counters, docs/metrics.md) and no family per static setting (they are labels
/// of `metacache_cache_info`). An active cache without failures, invalidations or rejections has
/// 9 series.
const CACHE_METRICS: &[CacheMetric] = &[
    CacheMetric {
        name: "metacache_cache_hits_total",
        help: "Lookups answered from the cache (HIT_COUNT).",
        counter: true,
        value: |s| n(s.hit_count),
    },
    CacheMetric {
        name: "metacache_cache_misses_total",
        help: "Lookups that loaded (MISS_COUNT); requests are hits + misses.",
        counter: true,
        value: |s| n(s.miss_count),
    },
    CacheMetric {
        name: "metacache_cache_load_successes_total",
        help: "Loads that succeeded (LOAD_SUCCESS_COUNT).",
        counter: true,
        value: |s| n(s.load_success_count),
    },
    CacheMetric {
        name: "metacache_cache_load_failures_total",
        help: "Loads that failed (LOAD_FAILURE_COUNT); absent until one fails.",
        counter: true,
        value: |s| sparse(s.load_failure_count),
    },
    CacheMetric {
        name: "metacache_cache_load_duration_seconds_total",
        help: "Time spent loading (TOTAL_LOAD_TIME_MS).",
        counter: true,
        value: |s| real(s.total_load_time_ms as f64 / 1000.0),
    },
    CacheMetric {
        name: "metacache_cache_evictions_total",
        help: "Capacity, weight and TTL evictions (EVICTION_COUNT).",
        counter: true,
        value: |s| n(s.eviction_count),
    },
    CacheMetric {
        name: "metacache_cache_invalidations_total",
        help: "Explicit removals (INVALIDATE_COUNT); absent until the first.",
        counter: true,
        value: |s| sparse(s.invalidate_count),
    },
    CacheMetric {
        name: "metacache_cache_weight_rejects_total",
        help: "Admissions refused by weight (WEIGHT_REJECT_COUNT); absent until the first.",
        counter: true,
        value: |s| sparse(s.weight_reject_count),
    },
    CacheMetric {
        name: "metacache_cache_entries",
        help: "Values retained now (ESTIMATED_SIZE).",
        counter: false,
        value: |s| n(s.estimated_size),
    },
    CacheMetric {
        name: "metacache_cache_estimated_weight_bytes",
        help: "Bytes reserved now (ESTIMATED_WEIGHT).",
        counter: false,
        value: |s| n(s.estimated_weight),
    },
    CacheMetric {
        name: "metacache_cache_max_weight_bytes",
        help: "Effective byte limit, -1 when none applies (MAX_WEIGHT).",
        counter: false,
        value: |s| Some(Sample::Signed(s.max_weight)),
    },
    CacheMetric {
        name: "metacache_cache_last_load_failure_timestamp_seconds",
        help: "Unix time of the last failed load (LAST_LOAD_FAILURE_TIME); absent until one fails.",
        counter: false,
        value: |s| {
            s.last_load_failure_millis
                .and_then(|m| real(m as f64 / 1000.0))
        },
    },
];

/// `metacache_cache_info`: the static settings of each cache as labels, value 1.
const INFO: &str = "metacache_cache_info";

fn label(name: &str, value: &str) -> LabelPair {
    let mut pair = LabelPair::default();
    pair.set_name(name.to_owned());
    pair.set_value(value.to_owned());
    pair
}

fn family(name: &str, help: &str, counter: bool) -> MetricFamily {
    let mut family = MetricFamily::default();
    family.set_name(name.to_owned());
    family.set_help(help.to_owned());
    family.set_field_type(if counter {
        MetricType::COUNTER
    } else {
        MetricType::GAUGE
    });
    family
}

fn sample(labels: Vec<LabelPair>, value: f64, counter: bool) -> Metric {
    let mut metric = Metric::default();
    metric.set_label(labels);
    if counter {
        let mut c = Counter::default();
        c.set_value(value);
        metric.set_counter(c);
    } else {
        let mut g = Gauge::default();
        g.set_value(value);
        metric.set_gauge(g);
    }
    metric
}

fn single(name: &str, help: &str, counter: bool, value: f64) -> MetricFamily {
    let mut f = family(name, help, counter);
    f.mut_metric().push(sample(Vec::new(), value, counter));
    f
}

fn limit(bytes: Option<u64>) -> f64 {
    bytes.map_or(-1.0, |b| b as f64)
}

/// A label value or help text escaped for the text format.
fn escape(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// A sample value as the text format spells it.
fn push_sample(sample: Sample, out: &mut String) {
    match sample {
        Sample::Count(v) => out.push_str(itoa::Buffer::new().format(v)),
        Sample::Signed(v) => out.push_str(itoa::Buffer::new().format(v)),
        Sample::Real(v) => push_value(v, out),
    }
}

/// A floating-point sample value as the text format spells it.
fn push_value(value: f64, out: &mut String) {
    use std::fmt::Write;
    // Ratios of 0 and 1 and whole seconds are common: print them as `{}` would, without the
    // shortest-float search (exact below 2^53; `-0` keeps its sign through `{}`).
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if value.fract() == 0.0 && value.abs() < EXACT && !(value == 0.0 && value.is_sign_negative()) {
        out.push_str(itoa::Buffer::new().format(value as i64));
    } else if value.is_nan() {
        out.push_str("NaN");
    } else if value.is_infinite() {
        out.push_str(if value > 0.0 { "+Inf" } else { "-Inf" });
    } else {
        let _ = write!(out, "{value}");
    }
}

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
    into.eviction_count += other.eviction_count;
    into.invalidate_count += other.invalidate_count;
    into.estimated_weight += other.estimated_weight;
    into.weight_reject_count += other.weight_reject_count;
    into.last_load_failure_millis = into
        .last_load_failure_millis
        .max(other.last_load_failure_millis);
}

/// The rows as labelled series groups: each group's label set (without the closing brace) and
/// its stats, one group per cache or summed at a coarser granularity.
fn groups(
    rows: Vec<metacache_catalog::CacheRow>,
    granularity: Granularity,
) -> Vec<(String, CacheStats)> {
    let quoted = |name: &str, value: &str, out: &mut String| {
        out.push_str(name);
        out.push_str("=\"");
        escape(value, out);
        out.push('"');
    };
    let mut groups: Vec<(String, CacheStats)> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for row in rows {
        let mut l = String::from("{");
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

/// The per-cache families, written directly: per cache, or summed (`granularity`), where the
/// limit and the settings (`metacache_cache_info`) are left out — they belong to one cache.
fn render_caches(
    rows: Vec<metacache_catalog::CacheRow>,
    granularity: Granularity,
    out: &mut String,
) {
    let groups = groups(rows, granularity);
    let per_cache = granularity == Granularity::Cache;
    for metric in CACHE_METRICS {
        if !per_cache && metric.name == "metacache_cache_max_weight_bytes" {
            continue;
        }
        if !groups
            .iter()
            .any(|(_, stats)| (metric.value)(stats).is_some())
        {
            continue;
        }
        out.push_str("# HELP ");
        out.push_str(metric.name);
        out.push(' ');
        escape(metric.help, out);
        out.push_str("\n# TYPE ");
        out.push_str(metric.name);
        out.push_str(if metric.counter {
            " counter\n"
        } else {
            " gauge\n"
        });
        for (labels, stats) in &groups {
            if let Some(sample) = (metric.value)(stats) {
                out.push_str(metric.name);
                out.push_str(labels);
                out.push_str("} ");
                push_sample(sample, out);
                out.push('\n');
            }
        }
    }
    if groups.is_empty() || !per_cache {
        return;
    }
    out.push_str("# HELP ");
    out.push_str(INFO);
    out.push_str(" Settings of each cache: ttl_seconds (-1 never), capacity, enabled (the enable setting), effective_enabled, auto_refresh.\n# TYPE ");
    out.push_str(INFO);
    out.push_str(" gauge\n");
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

/// The exposition text of every metric now.
pub fn render(manager: &CatalogManager) -> String {
    // Caches that exist: an idle catalog's unbuilt caches are rows of the statistics table
    // (Doris's semantics) but no series (issue 14: 1,000 idle catalogs were 380,000 series).
    let rows = manager.built_cache_rows();
    let granularity = manager.metrics_cache_labels();
    let granularity = Granularity::parse(&granularity).unwrap_or(Granularity::Cache);
    let mut text = String::with_capacity(rows.len() * CACHE_METRICS.len() * 96 + 4096);
    render_caches(rows, granularity, &mut text);
    let mut families: Vec<MetricFamily> = Vec::new();
    let mut catalog_limit = family(
        "metacache_catalog_max_weight_bytes",
        "Effective byte limit of a catalog, -1 when none applies.",
        false,
    );
    let mut catalog_used = family(
        "metacache_catalog_estimated_weight_bytes",
        "Bytes a catalog's caches reserve now.",
        false,
    );
    let catalogs = manager.catalogs();
    // Catalogs with a cache that exists; `metacache_catalogs` counts them all.
    for catalog in catalogs.iter().filter(|c| c.built_caches() > 0) {
        let labels = || vec![label("catalog", catalog.name())];
        catalog_limit.mut_metric().push(sample(
            labels(),
            limit(catalog.budget().effective_limit()),
            false,
        ));
        catalog_used
            .mut_metric()
            .push(sample(labels(), catalog.budget().used() as f64, false));
    }
    families.push(catalog_limit);
    families.push(catalog_used);
    let governor = manager.governor();
    let node = governor.node();
    let reclaim = governor.reclaim_stats();
    families.push(single(
        "metacache_node_max_weight_bytes",
        "The node limit of all caches (external_meta_cache_max_weight), -1 when none.",
        false,
        limit(node.limit()),
    ));
    families.push(single(
        "metacache_node_estimated_weight_bytes",
        "Bytes all caches of the node reserve now.",
        false,
        node.used() as f64,
    ));
    if let Some(memory) = manager.node_memory().map(|m| m.bytes as f64) {
        families.push(single(
            "metacache_node_memory_budget_bytes",
            "The memory percentages of the node limit refer to.",
            false,
            memory,
        ));
    }
    if let Some(rss) = metacache_catalog::memory::process_rss_bytes() {
        families.push(single(
            "metacache_process_resident_memory_bytes",
            "Resident set size of the process.",
            false,
            rss as f64,
        ));
    }
    if let Some(allocator) = metacache_catalog::memory::allocator_stats() {
        families.push(single(
            "metacache_allocator_allocated_bytes",
            "Bytes in live allocations at their real sizes, as the allocator reports them.",
            false,
            allocator.allocated as f64,
        ));
        families.push(single(
            "metacache_allocator_resident_bytes",
            "Physical memory the allocator holds: live, fragmented and not yet returned.",
            false,
            allocator.resident as f64,
        ));
        families.push(single(
            "metacache_allocator_fragmentation_ratio",
            "Allocator resident bytes per allocated byte now.",
            false,
            allocator.fragmentation(),
        ));
        families.push(single(
            "metacache_node_reserved_to_allocated_ratio",
            "Bytes the ledger reserves per byte the allocator has allocated now.",
            false,
            allocator.reserved_ratio(node.used()),
        ));
    }
    families.push(single(
        "metacache_catalogs",
        "Catalogs defined on the node.",
        false,
        catalogs.len() as f64,
    ));
    families.push(single(
        "metacache_reclaim_requests_total",
        "Reclamation requests handled.",
        true,
        reclaim.requests as f64,
    ));
    families.push(single(
        "metacache_reclaimed_bytes_total",
        "Bytes freed by reclamation.",
        true,
        reclaim.freed_bytes as f64,
    ));
    families.retain(|f| !f.get_metric().is_empty());
    let mut out = Vec::new();
    if let Err(error) = TextEncoder::new().encode(&families, &mut out) {
        tracing::error!("cannot encode metrics: {error}");
    }
    text.push_str(&String::from_utf8_lossy(&out));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_values_are_spelled_as_the_text_format_wants() {
        let mut out = String::new();
        escape("a\"b\\c\nd", &mut out);
        assert_eq!(out, "a\\\"b\\\\c\\nd");
        let spelled: Vec<String> = [
            0.0,
            1_073_741_824.0,
            0.5,
            -1.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ]
        .into_iter()
        .map(|v| {
            let mut s = String::new();
            push_value(v, &mut s);
            s
        })
        .collect();
        assert_eq!(
            spelled,
            ["0", "1073741824", "0.5", "-1", "+Inf", "-Inf", "NaN"]
        );
    }

    #[test]
    fn whole_floats_print_as_the_standard_formatter_prints_them() {
        for v in [
            0.0,
            -0.0,
            1.0,
            -7.0,
            1e15,
            9_007_199_254_740_991.0,
            9_007_199_254_740_992.0,
            1e300,
            1_764_730_000.125,
            1e-7,
        ] {
            let mut s = String::new();
            push_value(v, &mut s);
            assert_eq!(s, format!("{v}"), "{v:?}");
        }
    }

    #[test]
    fn counts_print_exactly_beyond_the_floats_integers() {
        let mut s = String::new();
        for sample in [
            Sample::Count(u64::MAX),
            Sample::Signed(-1),
            Sample::Count(9_007_199_254_740_993),
        ] {
            push_sample(sample, &mut s);
            s.push(' ');
        }
        assert_eq!(s, "18446744073709551615 -1 9007199254740993 ");
    }
}
