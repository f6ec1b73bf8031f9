//! Governance run: with a node limit L and a working set of 10 × L, how far above its baseline
//! does the process RSS go? Compared with an ungoverned, count-bounded cache (quick_cache holding
//! up to the entry's default 10,000 values) on the same workload. Each variant runs in its own
//! process, so that one's peak cannot hide in the other's.
//!
//! `cargo bench -p metacache-cache --bench bench_governance`

use std::process::Command;
use std::time::{Duration, Instant};

use metacache_cache::{CacheConfig, GovernorOptions, ManagedCache, MemoryGovernor};
use metacache_estimate::{EstimateSize, Sizer};

const LIMIT: u64 = 64 << 20;
const WORKING_SET_BYTES: u64 = 10 * LIMIT;
const MEAN_VALUE: u64 = 32 << 10;
const KEYS: u64 = WORKING_SET_BYTES / MEAN_VALUE;
const ACCESSES: u64 = 10 * KEYS;
const UNGOVERNED_CAPACITY: usize = 10_000;
const MODE: &str = "METACACHE_GOVERNANCE_MODE";

/// A metadata blob of real, touched heap memory.
struct Payload(Vec<u8>);

impl EstimateSize for Payload {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        sizer.add(self.0.capacity());
    }
}

fn payload(key: u64) -> Payload {
    // 8..56 KiB, mean 32 KiB, fixed per key.
    let size = (8 << 10) + (key.wrapping_mul(0x9E37_79B9) % (48 << 10));
    Payload(vec![key as u8; size as usize])
}

fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn access_order() -> impl Iterator<Item = u64> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    (0..ACCESSES).map(move |_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % KEYS
    })
}

fn run_governed() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let governor = MemoryGovernor::with_options(GovernorOptions {
        node_limit: Some(LIMIT),
        sweep_interval: Duration::from_secs(60),
        ..GovernorOptions::default()
    });
    let catalog = governor.catalog_budget("bench", None);
    let config = CacheConfig::new("hive-file", Some(Duration::from_secs(86_400)), 1_000_000);
    let cache: ManagedCache<u64, Payload> = ManagedCache::new(config, &governor, &catalog);
    let baseline = status_kib("VmRSS:") << 10;
    let mut peak_reserved = 0;
    runtime.block_on(async {
        for key in access_order() {
            let value = cache
                .get_or_load(key, || async move { Ok::<_, std::io::Error>(payload(key)) })
                .await
                .expect("load");
            std::hint::black_box(value.0.len());
            peak_reserved = peak_reserved.max(governor.node().used());
        }
    });
    report(baseline, cache.len() as u64, peak_reserved);
}

fn run_ungoverned() {
    let cache: quick_cache::sync::Cache<u64, std::sync::Arc<Payload>> =
        quick_cache::sync::Cache::new(UNGOVERNED_CAPACITY);
    let baseline = status_kib("VmRSS:") << 10;
    for key in access_order() {
        let value = match cache.get(&key) {
            Some(v) => v,
            None => {
                let v = std::sync::Arc::new(payload(key));
                cache.insert(key, v.clone());
                v
            }
        };
        std::hint::black_box(value.0.len());
    }
    report(baseline, cache.len() as u64, 0);
}

fn report(baseline: u64, values: u64, peak_reserved: u64) {
    let peak = status_kib("VmHWM:") << 10;
    // The parent process reads these lines.
    let mut out = std::io::stdout().lock();
    let _ = std::io::Write::write_fmt(
        &mut out,
        format_args!(
            "peak_above_baseline {}\nvalues {values}\npeak_reserved {peak_reserved}\n",
            peak.saturating_sub(baseline)
        ),
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
        Ok("governed") => return run_governed(),
        Ok("ungoverned") => return run_ungoverned(),
        _ => {}
    }
    let Ok(exe) = std::env::current_exe() else {
        eprintln!("cannot find the bench executable");
        return;
    };
    eprintln!(
        "governance: node limit L = {} MiB, working set 10 × L over {KEYS} keys, {ACCESSES} accesses",
        LIMIT >> 20
    );
    for mode in ["governed", "ungoverned"] {
        let started = Instant::now();
        let output = match Command::new(&exe).env(MODE, mode).output() {
            Ok(o) => String::from_utf8_lossy(&o.stdout).into_owned(),
            Err(e) => {
                eprintln!("{mode}: cannot run: {e}");
                continue;
            }
        };
        let peak = field(&output, "peak_above_baseline");
        eprintln!(
            "{mode:>10}: peak RSS above baseline {:>5} MiB = {:.2} × L; values retained at end {}; peak reserved {} MiB; {:.1} s",
            peak >> 20,
            peak as f64 / LIMIT as f64,
            field(&output, "values"),
            field(&output, "peak_reserved") >> 20,
            started.elapsed().as_secs_f64()
        );
    }
}
