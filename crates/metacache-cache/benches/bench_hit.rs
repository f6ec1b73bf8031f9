//! Hit path: a governed `ManagedCache::get` against raw `quick_cache` and `moka` holding the same
//! values, on 1 and 2 threads, in the same run; a governed cache under a binding limit, whose
//! hits also record into its frequency sketch; and every thread hitting one hot key (group
//! `hot_key`), where whatever a hit writes into the value's memory moves between the cores.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, criterion_group, criterion_main};
use metacache_cache::{AdvisorOptions, CacheConfig, ManagedCache, MemoryGovernor};

#[path = "common/hit_workload.rs"]
mod workload;

use workload::{ITEMS, Value, keys};

/// Runs `iters` lookups on each of `threads` threads; returns the wall time.
fn parallel(threads: usize, iters: u64, keys: &[u64], lookup: &(impl Fn(u64) + Sync)) -> Duration {
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            s.spawn(move || {
                let offset = t * 7919;
                for i in 0..iters as usize {
                    lookup(keys[(i + offset) & (keys.len() - 1)]);
                }
            });
        }
    });
    start.elapsed()
}

/// One benchmark of `group`: `lookup` over `keys` on `threads` threads.
fn bench(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    threads: usize,
    keys: &[u64],
    lookup: &(impl Fn(u64) + Sync),
) {
    group.bench_function(BenchmarkId::new(name, threads), |b| {
        b.iter_custom(|iters| parallel(threads, iters, keys, lookup))
    });
}

fn hit_path(c: &mut Criterion) {
    let keys = keys();
    let governor = MemoryGovernor::new(Some(1 << 30));
    let catalog = governor.catalog_budget("bench", Some(1 << 29));
    let config = CacheConfig::new(
        "hive-partition",
        Some(Duration::from_secs(86_400)),
        ITEMS * 2,
    );
    let governed: ManagedCache<u64, Value> = ManagedCache::new(config, &governor, &catalog);
    let no_ttl_config = CacheConfig::new("iceberg-manifest", None, ITEMS * 2);
    let governed_no_ttl: ManagedCache<u64, Value> =
        ManagedCache::new(no_ttl_config, &governor, &catalog);
    // The same cache with the quota advisor on (its thread drains the queue every 25 ms).
    let advised_config = CacheConfig::new(
        "hive-partition",
        Some(Duration::from_secs(86_400)),
        ITEMS * 2,
    )
    .with_advisor(Some(AdvisorOptions::default()));
    let advised: ManagedCache<u64, Value> = ManagedCache::new(advised_config, &governor, &catalog);
    let raw: quick_cache::sync::Cache<u64, Arc<Value>> =
        quick_cache::sync::Cache::new(ITEMS as usize * 2);
    let moka: moka::sync::Cache<u64, Arc<Value>> = moka::sync::Cache::new(ITEMS * 2);
    for k in 0..ITEMS {
        governed.insert(k, Value([k; 8]));
        governed_no_ttl.insert(k, Value([k; 8]));
        advised.insert(k, Value([k; 8]));
        raw.insert(k, Arc::new(Value([k; 8])));
        moka.insert(k, Arc::new(Value([k; 8])));
    }
    moka.run_pending_tasks();
    // One pass of requests sets the advisor's sample (4,096 of the keys), drained as its
    // thread would at a modest rate; the timed hits then see the steady state.
    for (i, k) in keys.iter().enumerate() {
        if i % 128 == 0 {
            advised.advise_now();
        }
        black_box(advised.get(k));
    }
    advised.advise_now();
    assert_eq!(governed.len() as u64, ITEMS, "every value admitted");

    let (_pressured_governor, pressured, pressured_keys) = workload::pressured();

    let governed_get = |k: u64| {
        black_box(governed.get(&k).map(|v| v.0[0]));
    };
    let no_ttl_get = |k: u64| {
        black_box(governed_no_ttl.get(&k).map(|v| v.0[0]));
    };
    let advised_get = |k: u64| {
        black_box(advised.get(&k).map(|v| v.0[0]));
    };
    let pressured_get = |k: u64| {
        black_box(pressured.get(&k).map(|v| v.0[0]));
    };
    let raw_get = |k: u64| {
        black_box(raw.get(&k).map(|v| v.0[0]));
    };
    let moka_get = |k: u64| {
        black_box(moka.get(&k).map(|v| v.0[0]));
    };

    let mut group = c.benchmark_group("hit");
    for threads in [1usize, 2] {
        let g = &mut group;
        bench(g, "metacache_governed", threads, &keys, &governed_get);
        bench(g, "metacache_governed_no_ttl", threads, &keys, &no_ttl_get);
        bench(
            g,
            "metacache_governed_advised",
            threads,
            &keys,
            &advised_get,
        );
        let pressured_keys = &pressured_keys;
        bench(
            g,
            "metacache_governed_pressure",
            threads,
            pressured_keys,
            &pressured_get,
        );
        bench(g, "quick_cache_raw", threads, &keys, &raw_get);
        bench(g, "moka_sync", threads, &keys, &moka_get);
    }
    group.finish();

    // One key on every thread: the hit's reference-count increment and whatever else it
    // writes into the value bounce between the cores.
    let hot = [keys[0]];
    let mut group = c.benchmark_group("hot_key");
    for threads in [1usize, 2, 4] {
        let g = &mut group;
        bench(g, "metacache_governed", threads, &hot, &governed_get);
        bench(g, "metacache_governed_advised", threads, &hot, &advised_get);
        bench(g, "quick_cache_raw", threads, &hot, &raw_get);
        bench(g, "moka_sync", threads, &hot, &moka_get);
    }
    group.finish();
}

criterion_group!(benches, hit_path);
criterion_main!(benches);
