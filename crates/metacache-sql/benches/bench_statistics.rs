//! The statistics table over 100 catalogs × 20 caches (2,000 rows): a `SELECT *`, the
//! troubleshooting aggregate, and, as the peer measured in the same run, the snapshot alone
//! (reading every cache's counters and building the Arrow batch) — the floor any SQL path pays.
//!
//! Besides criterion's means, prints p50/p99 over 300 runs of each, since the target (§10) is a
//! p99.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use metacache_cache::ManagedCache;
use metacache_catalog::memory::{MemorySource, NodeMemory};
use metacache_catalog::{
    CatalogManager, CreateCatalog, ManagerOptions, MemoryStore, Properties, TableKey,
};
use metacache_estimate::{EstimateSize, Sizer};
use metacache_sql::system::{SystemContext, system_table};
use metacache_sql::{Session, SqlEngine};

struct Blob(usize);

impl EstimateSize for Blob {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add(self.0);
    }
}

const CATALOGS: usize = 100;
const CACHES: usize = 19; // plus the default schema cache = 20 per catalog

fn engine_json() -> String {
    let caches: Vec<String> = (0..CACHES)
        .map(|i| format!(r#"{{"entry_name": "bench-{i}", "source": {{"entry": "e{i}"}}}}"#))
        .collect();
    let entries: Vec<String> = (0..CACHES)
        .map(|i| format!(r#"{{"token": "e{i}", "defaults": {{"enable": true, "ttl": {{"seconds": 3600}}, "capacity": 1000}}}}"#))
        .collect();
    format!(
        r#"{{"name": "bench", "catalog_types": ["bench"], "entries": [{}], "caches": [{}]}}"#,
        entries.join(","),
        caches.join(",")
    )
}

/// 100 catalogs with 20 built caches each, every cache with some hits, misses and bytes.
pub fn node(runtime: &tokio::runtime::Runtime) -> Arc<CatalogManager> {
    let mut options = ManagerOptions::new(Arc::new(MemoryStore::new()));
    options.node_memory = Some(NodeMemory {
        bytes: 16 << 30,
        source: MemorySource::Configured,
    });
    let manager = Arc::new(CatalogManager::open(options).expect("manager"));
    manager
        .define_engine(serde_json::from_str(&engine_json()).expect("engine json"))
        .expect("engine");
    for c in 0..CATALOGS {
        let name = format!("catalog_{c:03}");
        manager
            .create_catalog(CreateCatalog {
                name: name.clone(),
                properties: Properties::from_pairs([
                    ("type", "bench"),
                    ("meta.cache.max-weight", "1GB"),
                ]),
                ..CreateCatalog::default()
            })
            .expect("catalog");
        let catalog = manager.catalog(&name).expect("catalog");
        let mut names: Vec<(&str, String)> = (0..CACHES)
            .map(|i| ("bench", format!("bench-{i}")))
            .collect();
        names.push(("default", "schema".to_owned()));
        for (engine, entry) in names {
            let cache: ManagedCache<TableKey, Blob> = catalog
                .cache_by_name(engine, &entry)
                .expect("declared")
                .expect("built");
            runtime.block_on(async {
                for t in 0..5 {
                    let key = TableKey::new("db", format!("t{t}"));
                    cache
                        .get_or_load(key.clone(), || async {
                            Ok::<_, std::io::Error>(Blob(1000))
                        })
                        .await
                        .expect("load");
                    cache.get(&key);
                }
            });
        }
    }
    manager
}

const SELECT_ALL: &str = "SELECT * FROM information_schema.catalog_meta_cache_statistics";
const AGGREGATE: &str = "SELECT fe_host, catalog_name, SUM(estimated_weight) AS estimated_weight, SUM(weight_reject_count) AS weight_reject_count \
     FROM information_schema.catalog_meta_cache_statistics WHERE max_weight >= 0 GROUP BY fe_host, catalog_name ORDER BY estimated_weight DESC";

fn percentiles(mut f: impl FnMut()) -> (Duration, Duration) {
    let mut samples: Vec<Duration> = (0..300)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    samples.sort();
    (samples[150], samples[297])
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let manager = node(&runtime);
    let engine = SqlEngine::new(Arc::clone(&manager), "bench");
    let mut session: Session = engine.session("bench", 1).expect("session");
    let context = SystemContext::local(Arc::clone(&manager), "bench");
    let table = system_table("catalog_meta_cache_statistics").expect("table");
    assert_eq!(table.rows(&context).len(), CATALOGS * (CACHES + 1));

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("statistics_100x20");
    group.bench_function("snapshot_only (peer)", |b| {
        b.iter(|| table.batch(&context).expect("batch"))
    });
    group.bench_function("select_star", |b| {
        b.iter(|| {
            runtime
                .block_on(session.execute(SELECT_ALL))
                .expect("query")
        })
    });
    group.bench_function("group_by_catalog", |b| {
        b.iter(|| runtime.block_on(session.execute(AGGREGATE)).expect("query"))
    });
    group.finish();
    criterion.final_summary();

    let (snap50, snap99) = percentiles(|| {
        table.batch(&context).expect("batch");
    });
    let (all50, all99) = percentiles(|| {
        runtime
            .block_on(session.execute(SELECT_ALL))
            .expect("query");
    });
    let (agg50, agg99) = percentiles(|| {
        runtime.block_on(session.execute(AGGREGATE)).expect("query");
    });
    eprintln!(
        "statistics over {} rows (300 runs each):",
        CATALOGS * (CACHES + 1)
    );
    eprintln!("  snapshot only (peer)  p50 {snap50:>10.2?}  p99 {snap99:>10.2?}");
    eprintln!(
        "  SELECT *              p50 {all50:>10.2?}  p99 {all99:>10.2?}  = {:.1}× the snapshot at p50",
        all50.as_secs_f64() / snap50.as_secs_f64()
    );
    eprintln!(
        "  GROUP BY catalog      p50 {agg50:>10.2?}  p99 {agg99:>10.2?}  = {:.1}× the snapshot at p50",
        agg50.as_secs_f64() / snap50.as_secs_f64()
    );
}
