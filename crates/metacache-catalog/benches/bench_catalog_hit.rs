//! What going through a catalog costs on a hit: `catalog.cache(&ID)?.get(key)` (read lock, find
//! the cache among the catalog's, downcast, clone the handle) against the peer measured in the
//! same run, `get` on a `ManagedCache` handle the engine kept.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use metacache_cache::ManagedCache;
use metacache_catalog::memory::{MemorySource, NodeMemory};
use metacache_catalog::{
    CacheId, CatalogManager, CreateCatalog, ManagerOptions, MemoryStore, Properties, TableKey,
};
use metacache_estimate::{EstimateSize, Sizer};

struct Blob;

impl EstimateSize for Blob {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add(100);
    }
}

const FILE: CacheId<TableKey, Blob> = CacheId::new("hive", "hive-file");

fn bench(c: &mut Criterion) {
    let mut options = ManagerOptions::new(Arc::new(MemoryStore::new()));
    options.node_memory = Some(NodeMemory {
        bytes: 16 << 30,
        source: MemorySource::Configured,
    });
    let manager = CatalogManager::open(options).expect("manager");
    manager
        .create_catalog(CreateCatalog {
            name: "c".into(),
            properties: Properties::from_pairs([("type", "hms")]),
            ..CreateCatalog::default()
        })
        .expect("catalog");
    let catalog = manager.catalog("c").expect("catalog");
    // Build every cache of the catalog first, so the lookup scans a full list.
    for (engine, entry) in [
        ("default", "schema"),
        ("hive", "hive-table"),
        ("hive", "hive-partition"),
        ("hive", "hive-partition-names"),
        ("hive", "hive-column-stats"),
        ("hive", "hive-partition-view"),
    ] {
        let _: Option<ManagedCache<TableKey, Blob>> =
            catalog.cache_by_name(engine, entry).expect("declared");
    }
    let cache = catalog.cache(&FILE).expect("declared").expect("built");
    let key = TableKey::new("db", "t");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    runtime
        .block_on(cache.get_or_load(key.clone(), || async { Ok::<_, std::io::Error>(Blob) }))
        .expect("load");

    let mut group = c.benchmark_group("catalog_hit");
    group.bench_function("kept ManagedCache handle (peer)", |b| {
        b.iter(|| black_box(cache.get(black_box(&key))))
    });
    group.bench_function("catalog.cache(&ID)?.get()", |b| {
        b.iter(|| {
            let cache = catalog.cache(black_box(&FILE)).expect("ok").expect("built");
            black_box(cache.get(black_box(&key)))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
