//! Refresh-ahead under a read-heavy load across TTL boundaries (issue 17), against real sources:
//! a Hive-style warehouse on SeaweedFS S3 (skipped without `weed`) and an Iceberg table
//! (pyiceberg's files, SQL catalog, local file system).
//!
//! For each source, three runs of the same load — 4 readers asking for the table's planning
//! metadata in a loop for `SECONDS` — on a catalog whose refreshable entries have a TTL of
//! `TTL` seconds:
//! - `warm`: TTLs of a day (every read a hit): the reference p99;
//! - `off`: `auto-refresh` = false: each TTL expiry makes some reader wait for the reload;
//! - `on`: `auto-refresh` = true: reloads happen in the background.
//!
//! Prints p50 / p99 / p99.9 / max per run, p99 against the warm p99, and the source loads the run
//! made (extrapolated per hour). `cargo bench -p metacache-sources --bench bench_refresh`;
//! `BENCH_REFRESH_SECONDS` changes the run length.
#![allow(clippy::print_stdout)] // the table is the output

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/common/seaweed.rs"]
#[allow(dead_code)]
mod seaweed;

use std::sync::Arc;
use std::time::{Duration, Instant};

use metacache_sources::{Connector, Sources};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

const READERS: usize = 4;
const TTL: &str = "2";

const TABLE_JSON: &str = r#"{"columns": [{"name": "id", "type": "bigint"}],
 "partition_keys": [{"name": "dt", "type": "string"}], "format": "parquet"}"#;

struct Run {
    label: String,
    latencies: Vec<Duration>,
    loads: u64,
    seconds: f64,
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(index).copied().unwrap_or_default()
}

/// `READERS` tasks calling `read` in a loop for `seconds`; every latency.
fn load(
    rt: &tokio::runtime::Runtime,
    connector: Arc<dyn Connector>,
    iceberg: bool,
    seconds: u64,
) -> Vec<Duration> {
    rt.block_on(async {
        let deadline = Instant::now() + Duration::from_secs(seconds);
        let tasks: Vec<_> = (0..READERS)
            .map(|_| {
                let connector = Arc::clone(&connector);
                tokio::spawn(async move {
                    let mut latencies = Vec::new();
                    while Instant::now() < deadline {
                        let started = Instant::now();
                        if iceberg {
                            connector.table("shop", "trips").await.expect("table");
                        } else {
                            connector.files("big", "events", &[]).await.expect("files");
                        }
                        latencies.push(started.elapsed());
                        // A query engine's pace: many reads a second, not a spin.
                        tokio::time::sleep(Duration::from_millis(2)).await;
                    }
                    latencies
                })
            })
            .collect();
        let mut all = Vec::new();
        for task in tasks {
            all.extend(task.await.expect("reader"));
        }
        all
    })
}

fn loads_of(sources: &Sources, catalog: &str, entries: &[&str]) -> u64 {
    entries
        .iter()
        .map(|e| common::stats(sources, catalog, e).load_success_count)
        .sum()
}

fn report(source: &str, runs: &[Run]) {
    let sorted = |run: &Run| {
        let mut sorted = run.latencies.clone();
        sorted.sort();
        sorted
    };
    let warm = runs
        .iter()
        .find(|r| r.label == "warm")
        .map(sorted)
        .unwrap_or_default();
    let (warm99, warm999) = (percentile(&warm, 0.99), percentile(&warm, 0.999));
    println!(
        "\n{source}: {READERS} readers, TTL {TTL} s, {} s per run",
        runs[0].seconds
    );
    println!(
        "{:<6} {:>9} {:>10} {:>10} {:>10} {:>10} {:>9} {:>11} {:>11}",
        "run", "reads", "p50", "p99", "p99.9", "max", "p99/warm", "p99.9/warm", "loads/hour"
    );
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);
    for run in runs {
        let sorted = sorted(run);
        let (p99, p999) = (percentile(&sorted, 0.99), percentile(&sorted, 0.999));
        println!(
            "{:<6} {:>9} {:>10.3?} {:>10.3?} {:>10.3?} {:>10.3?} {:>8.2}x {:>10.2}x {:>11.0}",
            run.label,
            sorted.len(),
            percentile(&sorted, 0.5),
            p99,
            p999,
            sorted.last().copied().unwrap_or_default(),
            ratio(p99, warm99),
            ratio(p999, warm999),
            run.loads as f64 * 3600.0 / run.seconds,
        );
    }
}

/// Creates catalog `name` over the source with extra properties.
type Create<'a> = &'a dyn Fn(&Sources, &str, &[(&str, &str)]);

/// The three runs of one source, each on a catalog of its own.
fn runs(
    rt: &tokio::runtime::Runtime,
    seconds: u64,
    iceberg: bool,
    create: Create<'_>,
    entries: &[&str],
) -> Vec<Run> {
    let settings: Vec<String> = if iceberg {
        vec!["meta.cache.iceberg.table".to_owned()]
    } else {
        ["table", "partition_names", "file"]
            .iter()
            .map(|t| format!("meta.cache.hive.{t}"))
            .collect()
    };
    let mut out = Vec::new();
    for (label, ttl, refresh) in [
        ("warm", "86400", "false"),
        ("off", TTL, "false"),
        ("on", TTL, "true"),
    ] {
        let sources = common::sources();
        let keys: Vec<(String, &str)> = settings
            .iter()
            .flat_map(|s| {
                [
                    (format!("{s}.ttl-second"), ttl),
                    (format!("{s}.auto-refresh"), refresh),
                ]
            })
            .collect();
        let pairs: Vec<(&str, &str)> = keys.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        create(&sources, label, &pairs);
        let connector = sources.connector(label).expect("connector");
        // Warm up: everything loaded once, outside the measurement.
        load(rt, Arc::clone(&connector), iceberg, 1);
        let before = loads_of(&sources, label, entries);
        let latencies = load(rt, connector, iceberg, seconds);
        out.push(Run {
            label: label.to_owned(),
            latencies,
            loads: loads_of(&sources, label, entries) - before,
            seconds: seconds as f64,
        });
    }
    out
}

fn main() {
    // `cargo bench` passes --bench; under `cargo test` (make test) this is a 1 s smoke run.
    let benching = std::env::args().any(|a| a == "--bench");
    let seconds: u64 = std::env::var("BENCH_REFRESH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if benching { 12 } else { 1 });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");

    let fixture = common::iceberg_copy();
    let iceberg = runs(
        &rt,
        seconds,
        true,
        &|sources, name, extra| common::create_iceberg(sources, name, fixture.path(), true, extra),
        &["iceberg-table"],
    );
    report("Iceberg table (SQL catalog, local file system)", &iceberg);

    let Some(server) = seaweed::Seaweed::start(&["bench"]) else {
        return;
    };
    let s3: Arc<dyn ObjectStore> = common::bucket_store(&server.s3_endpoint, "bench");
    rt.block_on(async {
        let mut objects = vec![(
            "big.db/events/_table.json".to_owned(),
            TABLE_JSON.as_bytes(),
        )];
        for p in 0..10 {
            for f in 0..10 {
                objects.push((
                    format!("big.db/events/dt=2024-01-{:02}/part-{f:05}.parquet", p + 1),
                    &b"PAR1"[..],
                ));
            }
        }
        for (key, bytes) in objects {
            s3.put(
                &Path::parse(format!("wh/{key}")).expect("path"),
                PutPayload::from_static(bytes),
            )
            .await
            .expect("put");
        }
    });
    let endpoint = server.s3_endpoint.clone();
    let hive = runs(
        &rt,
        seconds,
        false,
        &|sources, name, extra| {
            let mut pairs = vec![("s3.endpoint", endpoint.as_str())];
            pairs.extend_from_slice(extra);
            common::create_hive(sources, name, "s3://bench/wh", &pairs);
        },
        &["hive-table", "hive-partition-names", "hive-file"],
    );
    report(
        "Hive-style table, 10 partitions x 10 files (SeaweedFS S3)",
        &hive,
    );
}
