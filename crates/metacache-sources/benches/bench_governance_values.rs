//! Governance with the connectors' own values: node limit L, a working set of 10 × L of Hive
//! file listings (10–400 files each) or Hive partitions (a few hundred bytes each, so the per-value
//! and per-key costs dominate), loaded through `get_or_load` by 4 concurrent tasks in uniformly
//! random order (values are evicted and loaded again: churn). The process runs the service's
//! allocator (jemalloc, same options) and reports its RSS above the baseline as a multiple of L.
//! Each shape runs in its own process, so that one's peak cannot hide in another's.
//!
//! `cargo bench -p metacache-sources --bench bench_governance_values`

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use metacache_cache::{CacheConfig, GovernorOptions, ManagedCache, MemoryGovernor};
use metacache_estimate::{DEFAULT_VISIT_BUDGET, Estimate, EstimateSize, estimate};
use metacache_sources::hive::{HivePartition, LocationKey, PartitionKey};
use metacache_sources::{DataFile, FileListing};

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// The service's options.
#[allow(non_upper_case_globals)]
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static malloc_conf: &[u8] = metacache_catalog::memory::JEMALLOC_CONF;

const LIMIT: u64 = 64 << 20;
const TASKS: u64 = 4;
const MODE: &str = "METACACHE_GOVERNANCE_SHAPE";

fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn listing(key: u64) -> FileListing {
    let files = 10 + (key.wrapping_mul(0x9E37_79B9) % 391) as usize;
    FileListing {
        files: (0..files)
            .map(|i| DataFile {
                path: format!(
                    "s3://warehouse/sales.db/orders/dt=2024-{:02}-{:02}/part-{i:05}-{key:08x}-c000.snappy.parquet",
                    key % 12 + 1,
                    key % 28 + 1
                ),
                size: 1000 + i as u64,
                modified_millis: 1_704_067_200_000 + i as i64,
            })
            .collect(),
    }
}

fn listing_key(key: u64) -> LocationKey {
    LocationKey {
        database: "sales".into(),
        table: "orders".into(),
        location: format!(
            "sales.db/orders/dt=2024-{:02}-{:02}/bucket={key}",
            key % 12 + 1,
            key % 28 + 1
        ),
    }
}

fn partition(key: u64) -> HivePartition {
    HivePartition {
        values: vec![
            format!("2024-{:02}-{:02}", key % 12 + 1, key % 28 + 1),
            format!("r{key}"),
        ],
        location: format!(
            "sales.db/orders/dt=2024-{:02}-{:02}/region=r{key}",
            key % 12 + 1,
            key % 28 + 1
        ),
    }
}

fn partition_key(key: u64) -> PartitionKey {
    PartitionKey {
        database: "sales".into(),
        table: "orders".into(),
        name: format!(
            "dt=2024-{:02}-{:02}/region=r{key}",
            key % 12 + 1,
            key % 28 + 1
        ),
    }
}

fn charge<K: EstimateSize, V: EstimateSize>(key: &K, value: &V) -> u64 {
    let bytes = |e| match e {
        Estimate::Complete(b) | Estimate::Incomplete { partial: b, .. } => b,
        Estimate::Failed { .. } => 0,
    };
    bytes(estimate(key, DEFAULT_VISIT_BUDGET)) + bytes(estimate(value, DEFAULT_VISIT_BUDGET)) + 512
}

fn run<K, V>(key_of: fn(u64) -> K, value_of: fn(u64) -> V)
where
    K: std::hash::Hash + Eq + Clone + Send + Sync + EstimateSize + 'static,
    V: EstimateSize + Send + Sync + 'static,
{
    // Keys whose charges total 10 × L, measured on a sample.
    let sample: u64 = (0..1000)
        .map(|k| charge(&key_of(k), &value_of(k)))
        .sum::<u64>()
        / 1000;
    let keys = 10 * LIMIT / sample.max(1);
    let accesses = 5 * keys;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("runtime");
    let governor = MemoryGovernor::with_options(GovernorOptions {
        node_limit: Some(LIMIT),
        sweep_interval: Duration::from_secs(60),
        ..GovernorOptions::default()
    });
    let catalog = governor.catalog_budget("bench", None);
    let config = CacheConfig::new("hive-file", Some(Duration::from_secs(86_400)), 10_000_000);
    let cache: Arc<ManagedCache<K, V>> = Arc::new(ManagedCache::new(config, &governor, &catalog));
    std::thread::sleep(Duration::from_millis(500));
    let baseline = status_kib("VmRSS:") << 10;
    let peak_reserved = runtime.block_on(async {
        let tasks: Vec<_> = (0..TASKS)
            .map(|task| {
                let cache = Arc::clone(&cache);
                let node = Arc::clone(governor.node());
                tokio::spawn(async move {
                    let mut seed =
                        0x2545_F491_4F6C_DD1D ^ (task + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    let mut peak = 0;
                    for _ in 0..accesses / TASKS {
                        let k = xorshift(&mut seed) % keys;
                        let value = cache
                            .get_or_load(key_of(k), || async move {
                                Ok::<_, std::io::Error>(value_of(k))
                            })
                            .await
                            .expect("load");
                        std::hint::black_box(&value);
                        peak = peak.max(node.used());
                    }
                    peak
                })
            })
            .collect();
        let mut peak = 0;
        for task in tasks {
            peak = peak.max(task.await.unwrap_or(0));
        }
        peak
    });
    let stats = cache.stats();
    let peak = status_kib("VmHWM:") << 10;
    println!(
        "peak_above_baseline {}\nvalues {}\npeak_reserved {peak_reserved}\nkeys {keys}\nrejected {}\nloads {}",
        peak.saturating_sub(baseline),
        cache.len(),
        stats.weight_reject_count,
        stats.load_success_count,
    );
}

fn field(output: &str, name: &str) -> u64 {
    output
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

fn main() {
    match std::env::var(MODE).as_deref() {
        Ok("file listings") => return run(listing_key, listing),
        Ok("partitions") => return run(partition_key, partition),
        _ => {}
    }
    let Ok(exe) = std::env::current_exe() else {
        eprintln!("cannot find the bench executable");
        return;
    };
    eprintln!(
        "governance with connector values: node limit L = {} MiB, working set 10 × L, {TASKS} tasks, jemalloc",
        LIMIT >> 20
    );
    for shape in ["file listings", "partitions"] {
        let started = Instant::now();
        let output = match Command::new(&exe).env(MODE, shape).output() {
            Ok(o) => String::from_utf8_lossy(&o.stdout).into_owned(),
            Err(e) => {
                eprintln!("{shape}: cannot run: {e}");
                continue;
            }
        };
        let peak = field(&output, "peak_above_baseline");
        let loads = field(&output, "loads").max(1);
        eprintln!(
            "{shape:>14}: peak RSS above baseline {:>4} MiB = {:.3} × L; keys {}; values at end {}; \
             peak reserved {:.3} × L; rejected {:.2} % of loads; {:.1} s",
            peak >> 20,
            peak as f64 / LIMIT as f64,
            field(&output, "keys"),
            field(&output, "values"),
            field(&output, "peak_reserved") as f64 / LIMIT as f64,
            100.0 * field(&output, "rejected") as f64 / loads as f64,
            started.elapsed().as_secs_f64()
        );
    }
}
