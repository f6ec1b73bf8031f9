//! Hit path: a governed `ManagedCache::get` against raw `quick_cache` and `moka` holding the same
//! values, on 1 and 2 threads, in the same run; a governed cache under a binding limit, whose
//! hits also record into its frequency sketch; and every thread hitting one hot key (group
//! `hot_key`), where whatever a hit writes into the value's memory moves between the cores.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
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

    let mut group = c.benchmark_group("hit");
    for threads in [1usize, 2] {
        group.bench_function(BenchmarkId::new("metacache_governed", threads), |b| {
            b.iter_custom(|iters| {
                parallel(threads, iters, &keys, &|k| {
                    black_box(governed.get(&k).map(|v| v.0[0]));
                })
            })
        });
        group.bench_function(
            BenchmarkId::new("metacache_governed_no_ttl", threads),
            |b| {
                b.iter_custom(|iters| {
                    parallel(threads, iters, &keys, &|k| {
                        black_box(governed_no_ttl.get(&k).map(|v| v.0[0]));
                    })
                })
            },
        );
        group.bench_function(
            BenchmarkId::new("metacache_governed_advised", threads),
            |b| {
                b.iter_custom(|iters| {
                    parallel(threads, iters, &keys, &|k| {
                        black_box(advised.get(&k).map(|v| v.0[0]));
                    })
                })
            },
        );
        group.bench_function(
            BenchmarkId::new("metacache_governed_pressure", threads),
            |b| {
                b.iter_custom(|iters| {
                    parallel(threads, iters, &pressured_keys, &|k| {
                        black_box(pressured.get(&k).map(|v| v.0[0]));
                    })
                })
            },
        );
        group.bench_function(BenchmarkId::new("quick_cache_raw", threads), |b| {
            b.iter_custom(|iters| {
                parallel(threads, iters, &keys, &|k| {
                    black_box(raw.get(&k).map(|v| v.0[0]));
                })
            })
        });
        group.bench_function(BenchmarkId::new("moka_sync", threads), |b| {
            b.iter_custom(|iters| {
                parallel(threads, iters, &keys, &|k| {
                    black_box(moka.get(&k).map(|v| v.0[0]));
                })
            })
        });
    }
    group.finish();

    // One key on every thread: the hit's reference-count increment and whatever else it
    // writes into the value bounce between the cores.
    let hot = [keys[0]];
    let mut group = c.benchmark_group("hot_key");
    for threads in [1usize, 2, 4] {
        group.bench_function(BenchmarkId::new("metacache_governed", threads), |b| {
            b.iter_custom(|iters| {
                parallel(threads, iters, &hot, &|k| {
                    black_box(governed.get(&k).map(|v| v.0[0]));
                })
            })
        });
        group.bench_function(
            BenchmarkId::new("metacache_governed_advised", threads),
            |b| {
                b.iter_custom(|iters| {
                    parallel(threads, iters, &hot, &|k| {
                        black_box(advised.get(&k).map(|v| v.0[0]));
                    })
                })
            },
        );
        group.bench_function(BenchmarkId::new("quick_cache_raw", threads), |b| {
            b.iter_custom(|iters| {
                parallel(threads, iters, &hot, &|k| {
                    black_box(raw.get(&k).map(|v| v.0[0]));
                })
            })
        });
        group.bench_function(BenchmarkId::new("moka_sync", threads), |b| {
            b.iter_custom(|iters| {
                parallel(threads, iters, &hot, &|k| {
                    black_box(moka.get(&k).map(|v| v.0[0]));
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, hit_path);
criterion_main!(benches);
