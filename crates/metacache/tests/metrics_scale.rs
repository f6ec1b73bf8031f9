//! `/metrics` at deployment scale (issue 14): 1,000 catalogs of which 50 have been queried
//! export series for the caches that exist only — none for the 950 idle catalogs or for the
//! unbuilt caches of the active ones — and pass `promtool check metrics`.

mod common;

use common::*;

/// Series of one cache in use without failures, invalidations or rejections (docs/metrics.md).
const PER_CACHE: usize = 9;
/// Node-level series, whatever the catalogs (16, 11 of scan scopes and 2 of the quota
/// advisors).
const NODE_SERIES: usize = 29;
/// Series of the load-time histogram per kind of cache (engine and entry) that has loaded:
/// 16 buckets, `_sum`, `_count`.
const PER_KIND: usize = 18;
/// Curve points a cache or catalog of this test has at most: its working set is a few KiB.
const ADVICE_POINTS: usize = 8;

fn run_file(server: &Server, sql: &str) {
    let reply = server.mysql_stdin(&[], sql);
    assert!(reply.ok, "{}", reply.err);
}

#[test]
fn a_thousand_catalogs_with_fifty_in_use_export_only_what_exists() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    let warehouse = fixture_warehouse();
    let create: String = (0..1000)
        .map(|c| {
            format!(
                "CREATE CATALOG c{c:03} PROPERTIES (\"type\" = \"hms\", \"warehouse\" = \"{}\");\n",
                warehouse.display()
            )
        })
        .collect();
    run_file(&server, &create);
    let active: Vec<String> = (0..50).map(|c| format!("c{c:03}")).collect();
    let queries: String = active
        .iter()
        .map(|c| {
            format!("SHOW DATABASES FROM {c}; SHOW TABLES FROM {c}.sales; DESC {c}.sales.orders;\n")
        })
        .collect();
    run_file(&server, &queries);

    let (status, text) = server.http("GET", "/metrics", None, None);
    assert_eq!(status, 200);
    let series: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    let caches = series
        .iter()
        .filter(|l| l.starts_with("metacache_cache_estimated_weight_bytes{"))
        .count();
    assert!(
        caches >= 50,
        "the active catalogs' caches are exported: {caches}"
    );
    for line in series.iter().filter(|l| l.contains("catalog=\"")) {
        let catalog = line
            .split("catalog=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or_default();
        assert!(
            active.iter().any(|a| a == catalog),
            "a series of an idle catalog: {line}"
        );
    }
    let kinds = series
        .iter()
        .filter(|l| l.starts_with("metacache_entry_load_duration_seconds_count{"))
        .count();
    assert!(kinds >= 1, "the load-time histogram is exported");
    assert_eq!(
        series
            .iter()
            .filter(|l| l.starts_with("metacache_entry_load_duration_seconds"))
            .count(),
        PER_KIND * kinds
    );
    // The quota advisor's curves: one series per grid size (1 KiB doubling up to the working
    // set) of each cache and each catalog in use, so a few per cache here.
    let curves = series
        .iter()
        .filter(|l| l.contains("_advice_hit_ratio{"))
        .count();
    assert!(
        curves >= caches / 2,
        "the caches in use have curves: {curves}"
    );
    assert!(
        curves <= ADVICE_POINTS * (caches + active.len()),
        "{curves} curve series for {caches} caches"
    );
    let bound = PER_CACHE * caches + 2 * active.len() + NODE_SERIES + PER_KIND * kinds + curves;
    assert!(
        series.len() <= bound,
        "{} series for {caches} caches (bound {bound})",
        series.len()
    );
    eprintln!(
        "{} series, {} bytes for 1,000 catalogs with {caches} caches of {kinds} kinds in use",
        series.len(),
        text.len()
    );
    let idle_rows = server.query(
        "SELECT count(*) AS n FROM catalog_meta_cache_statistics WHERE catalog_name = 'c999'",
    );
    assert_ne!(
        idle_rows, "n\n0\n",
        "idle catalogs stay in the statistics table"
    );

    if let Err(complaints) = promtool_check(&text) {
        panic!("promtool: {complaints}");
    }

    // Coarser labels for large deployments, changed at runtime.
    let cache_series = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("metacache_cache_"))
            .map(str::to_owned)
            .collect()
    };
    server.query("ADMIN SET FRONTEND CONFIG ('metrics_cache_labels' = 'entry')");
    let (_, by_entry) = server.http("GET", "/metrics", None, None);
    let entry_series = cache_series(&by_entry);
    assert!(
        entry_series.iter().all(|l| !l.contains("catalog=")),
        "summed over catalogs: {entry_series:?}"
    );
    let entries = entry_series
        .iter()
        .filter(|l| l.starts_with("metacache_cache_estimated_weight_bytes{"))
        .count();
    assert!(
        entries >= 1 && entry_series.len() <= 8 * entries,
        "{entry_series:?}"
    );
    if let Err(complaints) = promtool_check(&by_entry) {
        panic!("promtool: {complaints}");
    }
    server.query("ADMIN SET FRONTEND CONFIG ('metrics_cache_labels' = 'catalog')");
    let (_, by_catalog) = server.http("GET", "/metrics", None, None);
    let catalog_series = cache_series(&by_catalog);
    assert!(
        catalog_series
            .iter()
            .all(|l| !l.contains("entry=") && l.contains("catalog=")),
        "summed per catalog: {catalog_series:?}"
    );
    assert!(catalog_series.len() <= 8 * active.len());
    if let Err(complaints) = promtool_check(&by_catalog) {
        panic!("promtool: {complaints}");
    }
    eprintln!(
        "per-cache families: cache {}, entry {}, catalog {} series",
        cache_series(&text).len(),
        entry_series.len(),
        catalog_series.len()
    );
    // A curve per cache only at the `cache` granularity; the catalogs' curves at every one.
    let has =
        |text: &str, family: &str| text.lines().any(|l| l.starts_with(&format!("{family}{{")));
    assert!(
        has(&text, "metacache_cache_advice_hit_ratio")
            && has(&text, "metacache_catalog_advice_hit_ratio"),
        "both curve families at the cache granularity"
    );
    for (granularity, coarse) in [("entry", &by_entry), ("catalog", &by_catalog)] {
        assert!(
            !coarse.contains("metacache_cache_advice_hit_ratio"),
            "no per-cache curve (not even its header) at the {granularity} granularity"
        );
        assert!(
            has(coarse, "metacache_catalog_advice_hit_ratio"),
            "the catalogs' curves stay at the {granularity} granularity"
        );
    }
    assert_eq!(
        server.fails("ADMIN SET FRONTEND CONFIG ('metrics_cache_labels' = 'table')"),
        "ERROR 1105 (HY000) at line 1: Invalid value for configuration key 'metrics_cache_labels': table (cache, entry or catalog)"
    );
}
