//! The quota advisor's series: each catalog's predicted hit ratio at every size of its grid
//! (`bytes` label; the series of docs/grafana-dashboard.json's curve panels) and, at the `cache`
//! granularity of `metrics_cache_labels` only, each cache's — a deployment that sums its series
//! per entry or per catalog to keep them few does not get a curve per cache back — and what the
//! node's advisors hold and how they share it (the fair level, advisors running and waiting).
//!
//! The rows are built ahead of the scrape (`metacache_catalog`'s `manager/ahead.rs`): each
//! series lags its scrape by one scrape interval (at most two minutes), and a scrape costs the
//! writing of the rows, not their building.
//!
//! Written straight into the output as the per-cache families are: a node of 100 catalogs with
//! curves has some 15,000 points, and a `prometheus` protobuf message per point (four label
//! strings each) cost more than building the curves (docs/benchmarks.md, "`/metrics`").

use std::sync::Arc;

use metacache_catalog::{AdviceRow, CatalogManager};

use super::cache::Granularity;
use super::text::{Sample, escape, push_header, push_sample, push_value};

const CACHE_CURVE: &str = "metacache_cache_advice_hit_ratio";
const CATALOG_CURVE: &str = "metacache_catalog_advice_hit_ratio";

/// Appends the advisor's families to `out`; a curve family without a point is left out.
/// The rows are those built ahead (`CatalogManager::advice_rows_ahead`): a scrape answers from
/// the rows built after the one before it, and starts building the next.
pub(super) fn render_advice(
    manager: &Arc<CatalogManager>,
    granularity: Granularity,
    out: &mut String,
) {
    // A catalog without a built cache has no rows.
    let rows = manager.advice_rows_ahead();
    let (mut cache_rows, catalog_rows): (Vec<&AdviceRow>, Vec<&AdviceRow>) =
        rows.iter().partition(|r| r.entry_name.is_some());
    if granularity != Granularity::Cache {
        cache_rows.clear();
    }
    // Room for every line written at once (a line is some 100 bytes), so that the text, already
    // megabytes long, is not copied over as it grows.
    let points: usize = cache_rows
        .iter()
        .chain(&catalog_rows)
        .map(|r| r.advice.points.len())
        .sum();
    out.reserve(points * 112 + 1024);
    push_curves(
        CACHE_CURVE,
        "The quota advisor's predicted hit ratio of a cache at a byte limit (label bytes), over recent requests (catalog_meta_cache_advice).",
        &cache_rows,
        out,
    );
    push_curves(
        CATALOG_CURVE,
        "The quota advisor's predicted hit ratio of a catalog's caches sharing one byte limit, meta.cache.max-weight alone (label bytes).",
        &catalog_rows,
        out,
    );
    let advisors = manager.governor().advisors_budget();
    let limit = advisors.limit().map_or(Sample::Signed(-1), Sample::Count);
    let share = manager.governor().advisors_share();
    let level = share.level.map_or(Sample::Signed(-1), Sample::Count);
    for (name, help, sample) in [
        (
            "metacache_advisor_reserved_bytes",
            "Bytes the quota advisors of the node's caches hold, charged to the node.",
            Sample::Count(advisors.used()),
        ),
        (
            "metacache_advisor_max_weight_bytes",
            "The most the node's quota advisors may hold together (a sixteenth of the node limit, at most 256 MiB).",
            limit,
        ),
        (
            "metacache_advisor_share_bytes",
            "The most each quota advisor may hold now, its fair share of what they may hold together (-1 while they all fit); one above it samples fewer keys.",
            level,
        ),
    ] {
        push_header(name, help, "gauge", out);
        out.push_str(name);
        out.push(' ');
        push_sample(sample, out);
        out.push('\n');
    }
    push_header(
        "metacache_advisors",
        "Quota advisors of the node: running, or stopped for their memory and waiting for room (state).",
        "gauge",
        out,
    );
    for (state, count) in [("running", share.running), ("waiting", share.waiting)] {
        out.push_str("metacache_advisors{state=\"");
        out.push_str(state);
        out.push_str("\"} ");
        push_sample(Sample::Count(count as u64), out);
        out.push('\n');
    }
}

/// The family `name` of a point per size of each row's curve, if any row has one.
fn push_curves(name: &str, help: &str, rows: &[&AdviceRow], out: &mut String) {
    if rows.iter().all(|r| r.advice.points.is_empty()) {
        return;
    }
    push_header(name, help, "gauge", out);
    let mut labels = String::new();
    for row in rows {
        // The labels up to `bytes`, spelled once per row.
        labels.clear();
        labels.push_str("{catalog=\"");
        escape(&row.catalog, &mut labels);
        if let Some(entry) = &row.entry_name {
            labels.push_str("\",engine=\"");
            escape(&row.engine, &mut labels);
            labels.push_str("\",entry=\"");
            escape(entry, &mut labels);
        }
        labels.push_str("\",bytes=\"");
        for point in &row.advice.points {
            out.push_str(name);
            out.push_str(&labels);
            out.push_str(itoa::Buffer::new().format(point.cache_bytes));
            out.push_str("\"} ");
            push_value(point.hit_rate, out);
            out.push('\n');
        }
    }
}
