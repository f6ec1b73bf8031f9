//! Cold against warm Lance table-access resolution (§8.1): a directory namespace on the local
//! file system and pylance's REST namespace server on loopback (skipped when Python cannot
//! import pylance).
//!
//! cold: `current_table_access` (describeTable every time, what a catalog without the cache
//! does); warm: `table_access` answered from `lance-table-access`. Run with
//! `make bench-lance`; the ratios are what docs/benchmarks.md reports.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/common/lance_rest.rs"]
#[allow(dead_code)]
mod lance_rest;

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use metacache_sources::lance::LanceConnector;

fn connector(sources: &metacache_sources::Sources, name: &str) -> LanceConnector {
    let c = sources.manager().catalog(name).expect("catalog");
    LanceConnector::open(Arc::clone(&c), &c.def().properties).expect("open")
}

fn compare(
    c: &mut Criterion,
    rt: &tokio::runtime::Runtime,
    label: &str,
    lance: &LanceConnector,
    db: &str,
    table: &str,
) {
    let mut group = c.benchmark_group(format!("lance_access_{label}"));
    group.bench_function("cold_describe", |b| {
        b.iter(|| {
            rt.block_on(lance.current_table_access(db, table))
                .expect("cold")
        });
    });
    rt.block_on(lance.table_access(db, table)).expect("warm up");
    group.bench_function("warm_cached", |b| {
        b.iter(|| rt.block_on(lance.table_access(db, table)).expect("warm"));
    });
    group.finish();
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let sources = common::sources();
    let root = lance_rest::namespace_copy();
    common::create(
        &sources,
        "dir",
        [
            ("type", "lance".to_owned()),
            ("warehouse", common::url(root.path())),
        ],
    );
    compare(
        c,
        &rt,
        "directory",
        &connector(&sources, "dir"),
        "default",
        "items",
    );

    let Some(server) = lance_rest::LanceRest::start(&[]) else {
        return;
    };
    common::create(
        &sources,
        "rest",
        [
            ("type", "lance"),
            ("lance.namespace.type", "rest"),
            ("uri", server.uri.as_str()),
        ],
    );
    compare(
        c,
        &rt,
        "rest",
        &connector(&sources, "rest"),
        "sales",
        "orders",
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
