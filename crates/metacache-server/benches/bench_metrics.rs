//! `/metrics` over 100 catalogs × 20 caches (22 families × 2,000 series + node and catalog
//! gauges), against the peer measured in the same run: the `prometheus` crate's own registry
//! of `IntCounterVec`/`GaugeVec` holding the same series, gathered and encoded — what a service
//! that mirrors its counters into the registry pays per scrape.
//!
//! Besides criterion's means, prints p50/p99 over 300 renders (§10's target is a p99); 3 renders
//! when `cargo test` runs the bench as a test.
//!
//! A second node has the same caches with curves: each cache holds [`ADVISED_KEYS`] values of
//! mixed sizes and has served skewed requests, so the node has 100 catalogs' advice rows (their
//! caches' curves and the catalog's shared-limit model and split at every size) — idle between
//! scrapes (each cache's curve is kept from the last read), then busy (every cache serves
//! requests between two scrapes, so every curve is read anew). A render writes the rows built
//! ahead after the render before it (`CatalogManager::advice_rows_ahead`); each timed render
//! waits first until that build is kept, as a scrape seconds after the last would find it.
//! Building the rows (`advice_rows`, off the scrape's path now) is timed on its own.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion};
use metacache_cache::ManagedCache;
use metacache_catalog::memory::{MemorySource, NodeMemory};
use metacache_catalog::{CatalogManager, CreateCatalog, ManagerOptions, MemoryStore, Properties};
use metacache_server::lookaside::Blob;
use prometheus::{Encoder, GaugeVec, IntCounterVec, Opts, Registry, TextEncoder};

const CATALOGS: usize = 100;
const CACHES: usize = 19;
/// Keys per cache on the advised node.
const ADVISED_KEYS: u64 = 300;
/// Requests per cache on the advised node (skewed towards low key numbers).
const ADVISED_REQUESTS: u64 = 3_000;
/// Requests per cache of the advised node between two scrapes, for the busy node's figures.
const BUSY_REQUESTS: u64 = 10;

/// A node of 100 catalogs × 19 caches; each cache holds one value, or with `advised`
/// [`ADVISED_KEYS`] values of 100 B to 2 KB after [`ADVISED_REQUESTS`] skewed requests.
fn node(advised: bool) -> Arc<CatalogManager> {
    let mut options = ManagerOptions::new(Arc::new(MemoryStore::new()));
    options.node_memory = Some(NodeMemory {
        bytes: 16 << 30,
        source: MemorySource::Configured,
    });
    let manager = Arc::new(CatalogManager::open(options).expect("manager"));
    let caches: Vec<String> = (0..CACHES)
        .map(|i| format!(r#"{{"entry_name": "bench-{i}", "source": {{"entry": "e{i}"}}}}"#))
        .collect();
    let entries: Vec<String> = (0..CACHES)
        .map(|i| format!(r#"{{"token": "e{i}", "defaults": {{"enable": true, "ttl": {{"seconds": 3600}}, "capacity": 1000}}}}"#))
        .collect();
    let json = format!(
        r#"{{"name": "bench", "catalog_types": ["bench"], "entries": [{}], "caches": [{}]}}"#,
        entries.join(","),
        caches.join(",")
    );
    manager
        .define_engine(serde_json::from_str(&json).expect("json"))
        .expect("engine");
    for c in 0..CATALOGS {
        let name = format!("catalog_{c:03}");
        manager
            .create_catalog(CreateCatalog {
                name: name.clone(),
                properties: Properties::from_pairs([("type", "bench")]),
                ..CreateCatalog::default()
            })
            .expect("catalog");
        let catalog = manager.catalog(&name).expect("catalog");
        for i in 0..CACHES {
            let cache: ManagedCache<String, Blob> = catalog
                .cache_by_name("bench", &format!("bench-{i}"))
                .expect("declared")
                .expect("built");
            cache.insert("k".to_owned(), Blob(vec![0u8; 100].into()));
            cache.get("k");
            if advised {
                skewed_requests(&cache, (c * CACHES + i) as u64);
            }
        }
    }
    manager
}

/// [`ADVISED_REQUESTS`] requests over [`ADVISED_KEYS`] keys, key `n` about as often as
/// `1/(n+1)` (the cube of a uniform draw), loading each miss with a value of a size fixed by
/// its key; then the advisor drains, and its curve is read once (as a first scrape would).
fn skewed_requests(cache: &ManagedCache<String, Blob>, seed: u64) {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for _ in 0..ADVISED_REQUESTS {
        // xorshift64*
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let uniform =
            (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64;
        let n = ((uniform * uniform * uniform) * ADVISED_KEYS as f64) as u64;
        let key = format!("key-{n}");
        if cache.get(key.as_str()).is_none() {
            let size = 100 + (n * 2_654_435_761 % 1_900) as usize;
            cache.insert(key, Blob(vec![0u8; size].into()));
        }
    }
    cache.advise_now();
    cache.advice();
}

/// The peer: the same series in a `prometheus::Registry`.
fn registry_peer(manager: &CatalogManager) -> Registry {
    let registry = Registry::new();
    let labels = ["catalog", "engine", "entry"];
    let rows = manager.cache_rows();
    for f in 0..22 {
        if f % 2 == 0 {
            let vec = IntCounterVec::new(
                Opts::new(format!("peer_counter_{f}_total"), "peer"),
                &labels,
            )
            .expect("vec");
            for row in &rows {
                vec.with_label_values(&[
                    row.catalog.as_str(),
                    row.engine.as_str(),
                    row.stats.entry_name.as_str(),
                ])
                .inc_by(row.stats.request_count);
            }
            registry.register(Box::new(vec)).expect("register");
        } else {
            let vec = GaugeVec::new(Opts::new(format!("peer_gauge_{f}_bytes"), "peer"), &labels)
                .expect("vec");
            for row in &rows {
                vec.with_label_values(&[
                    row.catalog.as_str(),
                    row.engine.as_str(),
                    row.stats.entry_name.as_str(),
                ])
                .set(row.stats.estimated_weight as f64);
            }
            registry.register(Box::new(vec)).expect("register");
        }
    }
    registry
}

fn encode(registry: &Registry) -> Vec<u8> {
    let mut out = Vec::new();
    TextEncoder::new()
        .encode(&registry.gather(), &mut out)
        .expect("encode");
    out
}

/// Runs of each timed case: 300 when benchmarking; a few when `cargo test` runs the bench as a
/// test (criterion's test mode: no `--bench` argument), where a debug build would spend minutes.
fn runs() -> usize {
    if std::env::args().any(|a| a == "--bench") {
        300
    } else {
        3
    }
}

/// p50 and p99 of [`runs`] runs of `f`.
fn percentiles(f: impl FnMut()) -> (Duration, Duration) {
    percentiles_after(|| {}, f)
}

/// p50 and p99 of [`runs`] runs of `f`, each after an untimed run of `before`.
fn percentiles_after(mut before: impl FnMut(), mut f: impl FnMut()) -> (Duration, Duration) {
    let mut samples: Vec<Duration> = (0..runs())
        .map(|_| {
            before();
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    samples.sort();
    let at = |per_cent: usize| samples[(samples.len() * per_cent / 100).min(samples.len() - 1)];
    (at(50), at(99))
}

/// Waits until the advice rows built ahead after the last render are kept, as they are
/// between two scrapes seconds apart (the render itself answers from them).
fn settle(manager: &CatalogManager) {
    assert!(
        manager.wait_advice_ahead(Duration::from_secs(600)),
        "the advice rows took over ten minutes to build"
    );
}

/// Between two scrapes every cache of the advised node serves [`BUSY_REQUESTS`] requests of its
/// keys and its advisor drains: no curve read before stands (the hard case of a kept curve).
fn serve_between_scrapes(caches: &[ManagedCache<String, Blob>], round: u64) {
    for (n, cache) in caches.iter().enumerate() {
        for i in 0..BUSY_REQUESTS {
            let key = (round * 31 + n as u64 * 7 + i * 13) % ADVISED_KEYS;
            cache.get(format!("key-{key}").as_str());
        }
        cache.advise_now();
    }
}

fn main() {
    let manager = node(false);
    let advised = node(true);
    let peer = registry_peer(&manager);
    let text = metacache_server::metrics::render(&manager);
    let series = text.lines().filter(|l| !l.starts_with('#')).count();
    let peer_series = String::from_utf8_lossy(&encode(&peer))
        .lines()
        .filter(|l| !l.starts_with('#'))
        .count();

    let caches: Vec<ManagedCache<String, Blob>> = (0..CATALOGS)
        .flat_map(|c| {
            let catalog = advised
                .catalog(&format!("catalog_{c:03}"))
                .expect("catalog");
            (0..CACHES)
                .map(|i| {
                    catalog
                        .cache_by_name("bench", &format!("bench-{i}"))
                        .expect("declared")
                        .expect("built")
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let mut round = 0;

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("metrics_100x20");
    group.bench_function("prometheus_registry_gather_encode (peer)", |b| {
        b.iter(|| encode(&peer))
    });
    group.bench_function("metacache_render", |b| {
        b.iter_batched(
            || settle(&manager),
            |()| metacache_server::metrics::render(&manager),
            BatchSize::PerIteration,
        )
    });
    // The part of a render that reads the caches; the rest is writing text.
    group.bench_function("metacache_snapshot_only", |b| {
        b.iter(|| manager.cache_rows())
    });
    group.bench_function("metacache_render_advised", |b| {
        b.iter_batched(
            || settle(&advised),
            |()| metacache_server::metrics::render(&advised),
            BatchSize::PerIteration,
        )
    });
    group.bench_function("metacache_advice_rows_advised", |b| {
        b.iter(|| advised.advice_rows())
    });
    // Each render after every cache served requests (untimed): no kept curve stands.
    group.bench_function("metacache_render_advised_busy", |b| {
        b.iter_batched(
            || {
                round += 1;
                serve_between_scrapes(&caches, round);
                settle(&advised);
            },
            |()| metacache_server::metrics::render(&advised),
            BatchSize::PerIteration,
        )
    });
    group.finish();
    criterion.final_summary();

    let (peer50, peer99) = percentiles(|| {
        encode(&peer);
    });
    let (ours50, ours99) = percentiles_after(
        || settle(&manager),
        || {
            metacache_server::metrics::render(&manager);
        },
    );
    let (snap50, snap99) = percentiles(|| {
        manager.cache_rows();
    });
    let (plain_rows50, plain_rows99) = percentiles(|| {
        manager.advice_rows();
    });
    eprintln!(
        "/metrics: {series} series (peer registry: {peer_series}), {} renders each:",
        runs()
    );
    eprintln!("  prometheus registry (peer)  p50 {peer50:>10.2?}  p99 {peer99:>10.2?}");
    eprintln!(
        "  metacache render            p50 {ours50:>10.2?}  p99 {ours99:>10.2?}  = {:.2}× the peer per series at p50",
        (ours50.as_secs_f64() / series as f64) / (peer50.as_secs_f64() / peer_series as f64)
    );
    eprintln!("    of which the snapshot     p50 {snap50:>10.2?}  p99 {snap99:>10.2?}");
    eprintln!("    advice rows (built ahead) p50 {plain_rows50:>10.2?}  p99 {plain_rows99:>10.2?}");

    // A build right after the node's first reads of every curve: a cache whose sample binds
    // reuses the simulation of the sizes its heavy keys crowd (kept a minute) from them.
    let first = Instant::now();
    advised.advice_rows();
    let first_build = first.elapsed();
    let text = metacache_server::metrics::render(&advised);
    let series = text.lines().filter(|l| !l.starts_with('#')).count();
    let rows = advised.advice_rows();
    let catalog_points: usize = rows
        .iter()
        .filter(|r| r.entry_name.is_none())
        .map(|r| r.advice.points.len())
        .sum();
    let cache_points: usize = rows
        .iter()
        .filter(|r| r.entry_name.is_some())
        .map(|r| r.advice.points.len())
        .sum();
    let (adv50, adv99) = percentiles_after(
        || settle(&advised),
        || {
            metacache_server::metrics::render(&advised);
        },
    );
    let (rows50, rows99) = percentiles(|| {
        advised.advice_rows();
    });
    eprintln!(
        "advised node: {series} series, {} advice rows ({cache_points} cache points, {catalog_points} catalog points), {} renders each:",
        rows.len(),
        runs()
    );
    let advisors = advised.governor().advisors_budget();
    let with_curve = rows.iter().filter(|r| r.entry_name.is_some()).count();
    eprintln!(
        "  {with_curve} of {} caches have a curve; the advisors hold {} of {:?} bytes; rows rebuilt after the first reads in {first_build:.2?}",
        caches.len(),
        advisors.used(),
        advisors.limit()
    );
    eprintln!("  metacache render            p50 {adv50:>10.2?}  p99 {adv99:>10.2?}");
    eprintln!("    advice rows (built ahead) p50 {rows50:>10.2?}  p99 {rows99:>10.2?}");

    let (busy50, busy99) = percentiles_after(
        || {
            round += 1;
            serve_between_scrapes(&caches, round);
            settle(&advised);
        },
        || {
            metacache_server::metrics::render(&advised);
        },
    );
    eprintln!("  busy: {BUSY_REQUESTS} requests a cache between scrapes (no kept curve stands):");
    eprintln!("  metacache render            p50 {busy50:>10.2?}  p99 {busy99:>10.2?}");
}
