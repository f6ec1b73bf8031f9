//! `GET /metrics`: the counters and state of the statistics table as Prometheus series —
//! for the caches that exist (built; unbuilt caches are statistics-table rows only), labelled
//! per cache or summed per entry or per catalog (`metrics_cache_labels`), without ratio gauges
//! (PromQL computes them over a window, docs/metrics.md) and with each cache's settings as
//! labels of one `metacache_cache_info` series, evictions by cause and rejections by reason as
//! labels of bounded sets, load times as a histogram per engine and entry — plus node and
//! catalog gauges, named by Prometheus conventions (`_total` counters, base units `_seconds` /
//! `_bytes`).
//!
//! Families are built from a snapshot at scrape time, so there is no second set of counters to
//! keep in step with the caches. The per-cache families (9 series for a typical cache, `cache`)
//! and the quota advisor's curves (`advice`) are written straight into the output (`text`
//! spells the format); the few node and catalog families go through the `prometheus` crate's
//! encoder.

mod advice;
mod cache;
mod text;

use std::sync::Arc;

use metacache_catalog::{CacheRow, CatalogManager};
use prometheus::proto::{Counter, Gauge, LabelPair, Metric, MetricFamily, MetricType};
use prometheus::{Encoder, TextEncoder};

pub use cache::Granularity;

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

/// Refresh-ahead: per cache of `rows` (the scrape's one snapshot) with `auto-refresh` on (few:
/// on by default only for Iceberg tables), and the node's bound.
fn refresh_families(rows: &[CacheRow], manager: &CatalogManager) -> Vec<MetricFamily> {
    let mut refreshes = family(
        "metacache_cache_refreshes_total",
        "Background refreshes of auto-refresh caches, by outcome: started, succeeded (stored a new value), unchanged (deadline renewed), failed, skipped (node bound reached).",
        true,
    );
    let mut saved = family(
        "metacache_cache_refresh_loads_saved_total",
        "Callers at the hard TTL answered by a refresh instead of a load of their own.",
        true,
    );
    for row in rows {
        if !row.stats.auto_refresh {
            continue;
        }
        let r = row.stats.refresh;
        let labels = || {
            vec![
                label("catalog", &row.catalog),
                label("engine", &row.engine),
                label("entry", &row.stats.entry_name),
            ]
        };
        for (outcome, n) in [
            ("started", r.started),
            ("succeeded", r.succeeded),
            ("unchanged", r.unchanged),
            ("failed", r.failed),
            ("skipped", r.skipped),
        ] {
            let mut l = labels();
            l.push(label("outcome", outcome));
            refreshes.mut_metric().push(sample(l, n as f64, true));
        }
        saved
            .mut_metric()
            .push(sample(labels(), r.loads_saved as f64, true));
    }
    let limiter = manager.governor().refresh_limiter();
    vec![
        refreshes,
        saved,
        single(
            "metacache_refresh_running",
            "Background refreshes running now on the node.",
            false,
            limiter.running() as f64,
        ),
        single(
            "metacache_refresh_max_concurrency",
            "external_meta_cache_refresh_max_concurrency: the most background refreshes at once.",
            false,
            limiter.max() as f64,
        ),
    ]
}

/// The node-shared disk tier (§8.4), when `external_meta_cache_disk_dir` names one: the
/// directory's totals (every process sharing it) and this process's counters.
fn disk_families(manager: &CatalogManager) -> Vec<MetricFamily> {
    let Some(s) = manager.disk_stats() else {
        return Vec::new();
    };
    let mut reads = family(
        "metacache_disk_reads_total",
        "Reads of immutable files through the disk tier, by result: hit (a block checked out), coalesced (served from a block another process or task loaded meanwhile), miss (read from the source).",
        true,
    );
    for (result, n) in [
        ("hit", s.hits),
        ("coalesced", s.coalesced),
        ("miss", s.misses),
    ] {
        reads
            .mut_metric()
            .push(sample(vec![label("result", result)], n as f64, true));
    }
    let mut out = vec![
        single(
            "metacache_disk_up",
            "1 when the disk tier's directory is in use, 0 when every read goes to its source (see catalog_meta_cache_disk.STATUS).",
            false,
            if s.unavailable.is_none() { 1.0 } else { 0.0 },
        ),
        reads,
    ];
    for (name, help, value) in [
        (
            "metacache_disk_capacity_bytes",
            "external_meta_cache_disk_max_weight: bytes the blocks of every process sharing the directory may take.",
            s.capacity,
        ),
        (
            "metacache_disk_used_bytes",
            "Bytes the disk tier's blocks take (every process sharing the directory).",
            s.used,
        ),
        (
            "metacache_disk_blocks",
            "Blocks in the disk tier (every process sharing the directory).",
            s.blocks,
        ),
    ] {
        if let Some(v) = value {
            out.push(single(name, help, false, v as f64));
        }
    }
    for (name, help, value) in [
        (
            "metacache_disk_published_total",
            "Blocks this process published to the disk tier.",
            s.published,
        ),
        (
            "metacache_disk_evictions_total",
            "Blocks this process evicted to keep the disk tier within its capacity.",
            s.evictions,
        ),
        (
            "metacache_disk_corrupt_dropped_total",
            "Torn or corrupt blocks found, dropped and read again from the source.",
            s.corrupt_dropped,
        ),
        (
            "metacache_disk_fenced_total",
            "Blocks not served, or loads not published, because a REFRESH or DROP fenced their catalog.",
            s.fenced,
        ),
        (
            "metacache_disk_too_large_total",
            "Files read through without being kept: larger than an eighth of the capacity.",
            s.too_large,
        ),
        (
            "metacache_disk_lock_timeouts_total",
            "Waits for the disk tier's locks that ran out (the read went to the source).",
            s.lock_timeouts,
        ),
        (
            "metacache_disk_errors_total",
            "Disk errors of the disk tier; each read concerned went to the source.",
            s.errors,
        ),
    ] {
        out.push(single(name, help, true, value as f64));
    }
    out
}

/// Scan scopes (§8.2), node-wide: scope ids are not labels (unbounded, and a capability).
fn scope_families(manager: &CatalogManager) -> Vec<MetricFamily> {
    let scopes = manager.scopes();
    let s = scopes.stats();
    let mut ended = family(
        "metacache_scopes_ended_total",
        "Scan scopes ended, by reason: closed (DELETE, or their catalog dropped or renamed) or expired (idle past their timeout).",
        true,
    );
    for (reason, n) in [("closed", s.closed), ("expired", s.expired)] {
        ended
            .mut_metric()
            .push(sample(vec![label("reason", reason)], n as f64, true));
    }
    vec![
        single(
            "metacache_scopes_open",
            "Scan scopes open now.",
            false,
            s.open as f64,
        ),
        single(
            "metacache_scopes_max",
            "external_meta_cache_scope_max_count: the most scan scopes open at once.",
            false,
            scopes.limits().0 as f64,
        ),
        single(
            "metacache_scopes_opened_total",
            "Scan scopes opened.",
            true,
            s.opened as f64,
        ),
        ended,
        single(
            "metacache_scope_accesses_total",
            "Table accesses asked of scan scopes.",
            true,
            s.accesses as f64,
        ),
        single(
            "metacache_scope_source_calls_total",
            "Calls from scan scopes to sources (first resolutions and credential refreshes, failed ones included).",
            true,
            s.resolutions as f64,
        ),
        single(
            "metacache_scope_source_call_failures_total",
            "Calls from scan scopes to sources that failed (retried after a backoff).",
            true,
            s.failures as f64,
        ),
        single(
            "metacache_scope_credential_refreshes_total",
            "Resolutions of scan scopes replaced by a successful refresh.",
            true,
            s.refreshes as f64,
        ),
        single(
            "metacache_scope_waits_total",
            "Accesses that waited for a running refresh.",
            true,
            s.waits as f64,
        ),
        single(
            "metacache_scope_refused_total",
            "Accesses answered with an error: nothing with the asked remaining life could be handed out.",
            true,
            s.refused as f64,
        ),
    ]
}

/// The change feeds of catalogs that poll their source (`catalog_meta_cache_events`).
fn source_event_families(
    catalogs: &[std::sync::Arc<metacache_catalog::Catalog>],
) -> Vec<MetricFamily> {
    let mut events = family(
        "metacache_source_events_total",
        "Source events read, by outcome: applied (invalidated what they name) or ignored (nothing cached depends on them).",
        true,
    );
    let mut resets = family(
        "metacache_source_event_resets_total",
        "Times every cache of a catalog was dropped and its cursor reset, by reason: gap or unapplied.",
        true,
    );
    let mut invalidations = family(
        "metacache_source_event_invalidations_total",
        "Tables and partitions invalidated by source events, by scope.",
        true,
    );
    let mut polls = family(
        "metacache_source_event_polls_total",
        "Polls of a source's change feed.",
        true,
    );
    let mut failures = family(
        "metacache_source_event_poll_failures_total",
        "Polls of a source's change feed that failed.",
        true,
    );
    let mut lag = family(
        "metacache_source_event_lag_events",
        "Events the source had at the last poll that are not applied yet.",
        false,
    );
    let mut last_poll = family(
        "metacache_source_event_last_poll_timestamp_seconds",
        "When a catalog's change feed was last polled (Unix time).",
        false,
    );
    for catalog in catalogs {
        let s = catalog.events().snapshot();
        if !s.running && s.polls == 0 {
            continue;
        }
        let name = catalog.name();
        let with = |key: &str, value: &str| vec![label("catalog", &name), label(key, value)];
        let only = || vec![label("catalog", &name)];
        for (outcome, n) in [("applied", s.applied), ("ignored", s.ignored)] {
            events
                .mut_metric()
                .push(sample(with("outcome", outcome), n as f64, true));
        }
        for (reason, n) in [("gap", s.gap_resets), ("unapplied", s.unapplied_resets)] {
            resets
                .mut_metric()
                .push(sample(with("reason", reason), n as f64, true));
        }
        for (scope, n) in [
            ("table", s.tables_invalidated),
            ("partition", s.partitions_invalidated),
        ] {
            invalidations
                .mut_metric()
                .push(sample(with("scope", scope), n as f64, true));
        }
        polls
            .mut_metric()
            .push(sample(only(), s.polls as f64, true));
        failures
            .mut_metric()
            .push(sample(only(), s.poll_failures as f64, true));
        lag.mut_metric().push(sample(only(), s.lag() as f64, false));
        if let Some(millis) = s.last_poll_millis {
            last_poll
                .mut_metric()
                .push(sample(only(), millis as f64 / 1000.0, false));
        }
    }
    vec![
        events,
        resets,
        invalidations,
        polls,
        failures,
        lag,
        last_poll,
    ]
}

/// The exposition text of every metric now (the advisor's curves as built after the scrape
/// before: `CatalogManager::advice_rows_ahead`).
pub fn render(manager: &Arc<CatalogManager>) -> String {
    // Caches that exist: an idle catalog's unbuilt caches are rows of the statistics table
    // (Doris's semantics) but no series (issue 14: 1,000 idle catalogs were 380,000 series).
    let rows = manager.built_cache_rows();
    let granularity = manager.metrics_cache_labels();
    let granularity = Granularity::parse(&granularity).unwrap_or(Granularity::Cache);
    let mut text = String::with_capacity(rows.len() * cache::FAMILIES * 96 + 4096);
    // Read off the snapshot before the caches' families consume it.
    let refresh = refresh_families(&rows, manager);
    cache::render_caches(rows, granularity, &mut text);
    advice::render_advice(manager, granularity, &mut text);
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
        let labels = || vec![label("catalog", &catalog.name())];
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
    families.extend(source_event_families(&catalogs));
    families.extend(refresh);
    families.extend(scope_families(manager));
    families.extend(disk_families(manager));
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
