//! The quota advisor's accuracy: for each trace, the advice (one run, sampled) against exact
//! replays of the real cache at every point of the curve. Prints a Markdown table.
//!
//! `cargo run --release -p metacache-cache --example advice_accuracy -- [KEYS] [ACCESSES]
//! [SAMPLE_KEYS] [LIMIT_MIB]` (defaults 100,000 keys, 1,000,000 requests, 4,096 sampled keys,
//! and the advised cache unlimited; with `LIMIT_MIB` it runs under that byte limit, as a cache
//! whose quota binds, and its curve is pinned there). With `REPLAYS=N` each size is replayed
//! `N` times and the error is the distance from the replays' range (the real cache hashes with
//! random seeds); the table then shows `predicted/lowest–highest`. `ONLY=text` runs the traces
//! whose name contains it; with `ADVICE_TIMING=1` each read of a curve prints what it took;
//! with `ADVICE_REPORT_SHIFT=random` (or a number) the advised run's hit numbers are shifted, so
//! that runs draw different heavy-key reports (otherwise every run of a trace draws the same).
//! With `READ_EVERY=S` the curve is also read every `S` seconds of trace time as the trace
//! runs (as a `/metrics` scrape reads it), so that what the advisor keeps between reads (the
//! crowded sizes' simulation) is what the last read uses.

#![allow(clippy::print_stdout)] // the table is the output

#[path = "../tests/common/advice.rs"]
mod advice;

use std::time::Duration;

use advice::{compare, errors};
use metacache_cache::AdvisorOptions;

fn main() {
    let args = advice::numeric_args();
    let keys = args.first().copied().unwrap_or(100_000);
    let accesses = args.get(1).copied().unwrap_or(1_000_000) as usize;
    let sample_keys = args.get(2).copied().unwrap_or(4096) as usize;
    let limit = args.get(3).copied().filter(|&m| m > 0).map(|m| m << 20);
    let options = AdvisorOptions {
        sample_keys,
        half_life: Some(Duration::from_secs(1 << 30)),
        // The grid of the accuracy table (docs/benchmarks.md): from 16 KiB, where values of
        // 1–16 KiB start to fit; below it every size predicts (and has) almost no hits.
        smallest: 16 << 10,
        ..AdvisorOptions::default()
    };
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let replays: usize = std::env::var("REPLAYS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    println!(
        "{keys} keys, {accesses} requests, sample of {sample_keys} keys, advised cache limited to {}\n\n\
         | trace | points | sampling rate | advisor memory | MAE | max error | sizes (predicted / exact) |\n|---|---|---|---|---|---|---|",
        limit.map_or("nothing".to_string(), advice::human)
    );
    let read_every = std::env::var("READ_EVERY")
        .ok()
        .and_then(|s| s.parse().ok())
        .map(Duration::from_secs);
    let mut all = Vec::new();
    let only = std::env::var("ONLY").unwrap_or_default();
    let aged = [
        advice::aged_case(keys),
        advice::turnover_case(keys),
        advice::shrinking_case(keys),
    ];
    for case in advice::cases(keys, accesses).into_iter().chain(aged) {
        if !case.name.contains(only.as_str()) {
            continue;
        }
        let started = std::time::Instant::now();
        let (compared, advice) = match read_every {
            Some(every) => {
                let options = AdvisorOptions {
                    half_life: case.half_life.or(options.half_life),
                    ..options
                };
                let every = (every.as_nanos() / case.step.as_nanos().max(1)).max(1) as usize;
                let (_, advice) = advice::replay_with(&case, limit, Some(options), |i, cache| {
                    if i % every == every - 1 {
                        let _ = cache.advice();
                    }
                });
                let advice = advice.expect("the advisor is on");
                (
                    advice::compare_advice(&case, &advice, threads, replays),
                    advice,
                )
            }
            None => compare(&case, options, limit, threads, replays),
        };
        let (mae, max) = errors(&compared);
        let detail: Vec<String> = compared
            .iter()
            .map(|c| {
                let exact = if replays > 1 {
                    format!("{:.3}–{:.3}", c.low, c.high)
                } else {
                    format!("{:.3}", c.exact)
                };
                format!(
                    "{}: {:.3}/{exact}{}",
                    advice::human(c.bytes),
                    c.predicted,
                    if std::env::var_os("SHOW_CONFIDENCE").is_some() {
                        format!(" ({:.2})", c.confidence)
                    } else {
                        String::new()
                    }
                )
            })
            .collect();
        println!(
            "| {} | {} | {:.4} | {} KiB | {:.4} | {:.4} | {} |",
            case.name,
            compared.len(),
            advice.sampling_rate,
            advice.reserved_bytes >> 10,
            mae,
            max,
            detail.join(", ")
        );
        eprintln!("{}: {:.1} s", case.name, started.elapsed().as_secs_f64());
        all.extend(compared);
    }
    let (mae, max) = errors(&all);
    println!("\nAll {} points: MAE {mae:.4}, max {max:.4}", all.len());
    let confident: Vec<_> = all
        .iter()
        .copied()
        .filter(|c| c.confidence >= 0.5)
        .collect();
    let (mae, max) = errors(&confident);
    println!(
        "The {} points of confidence >= 0.5: MAE {mae:.4}, max {max:.4}",
        confident.len()
    );
}
