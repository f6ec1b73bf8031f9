//! How far a spatial sample alone puts a miss-ratio curve from the truth, with no simulator
//! error: the real cache run on the requests of a hash-sampled share of the keys, at the byte
//! and count limits scaled by that share (the miniature a perfect simulator would be), against
//! the real cache on every request at the full limits. Several hash seeds show the spread of
//! *which keys* the sample holds. Prints a Markdown table (docs/benchmarks.md, "Quota advisor
//! accuracy").
//!
//! `cargo run --release -p metacache-cache --example sampling_spread -- [RATE] [ALPHA] [SEEDS]
//! [TOP]` (defaults 0.042, the rate of a 4,096-key sample of the 100,000-key Zipf 0.6 trace;
//! 0.6; 8; 0). With `TOP` the most requested `TOP` keys leave both traces: what the sample of
//! the rest is worth once the hottest keys are counted apart (as the advisor's heavy keys are).
//! `KEYS`, `ACCESSES` and `SEED` set the trace (defaults 100,000, 1,000,000, 1), `FROM` and
//! `TO` the sizes as powers of two (defaults 20 and 29: 1 MiB–512 MiB).

#![allow(clippy::print_stdout)] // the table is the output

#[path = "../tests/common/advice.rs"]
mod advice;

use std::time::Duration;

use advice::{Case, mix, replay, zipf};

fn main() {
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let rate = args.first().copied().unwrap_or(0.042).clamp(1e-6, 1.0);
    let alpha = args.get(1).copied().unwrap_or(0.6);
    let seeds = args.get(2).copied().unwrap_or(8.0).max(1.0) as u64;
    let top = args.get(3).copied().unwrap_or(0.0).max(0.0) as usize;
    let env = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.replace('_', "").parse().ok())
            .unwrap_or(default)
    };
    let (keys, accesses) = (env("KEYS", 100_000), env("ACCESSES", 1_000_000));
    let mut trace = zipf(alpha, keys, accesses as usize, env("SEED", 1));
    if top > 0 {
        let mut counts = std::collections::HashMap::<u64, u64>::new();
        for &key in &trace {
            *counts.entry(key).or_default() += 1;
        }
        let mut hottest: Vec<(u64, u64)> = counts.into_iter().collect();
        hottest.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
        let hottest: std::collections::HashSet<u64> =
            hottest.iter().take(top).map(|(key, _)| *key).collect();
        trace.retain(|key| !hottest.contains(key));
    }
    let full = Case::new("full", trace.clone());
    let threshold = (rate * u64::MAX as f64) as u64;
    let samples: Vec<Case> = (0..seeds)
        .map(|seed| {
            let salt = mix(seed ^ 0x5EED);
            let sampled: Vec<u64> = trace
                .iter()
                .copied()
                .filter(|&key| mix(key ^ salt) < threshold)
                .collect();
            let mut sample = Case::new("sample", sampled);
            sample.capacity = ((full.capacity as f64 * rate) as u64).max(1);
            // The sampled requests keep their times: one every `1 / rate` steps on average.
            sample.step = Duration::from_nanos((full.step.as_nanos() as f64 / rate) as u64);
            sample
        })
        .collect();
    println!(
        "Zipf {alpha}, {keys} keys, {accesses} requests less those of the {top} hottest keys; the \
         real cache on {seeds} spatial samples at rate {rate} (scaled limits), minus the real \
         cache on every request\n"
    );
    println!("| size | exact | lowest | highest | every seed |\n|---|---|---|---|---|");
    for shift in env("FROM", 20)..=env("TO", 29) {
        let size = 1u64 << shift;
        let exact = replay(&full, Some(size), None).0;
        let scaled = ((size as f64 * rate) as u64).max(1);
        let errors: Vec<f64> = samples
            .iter()
            .map(|sample| replay(sample, Some(scaled), None).0 - exact)
            .collect();
        let low = errors.iter().copied().fold(f64::INFINITY, f64::min);
        let high = errors.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let each: Vec<String> = errors.iter().map(|e| format!("{e:+.3}")).collect();
        println!(
            "| {} | {exact:.3} | {low:+.3} | {high:+.3} | {} |",
            advice::human(size),
            each.join(" ")
        );
    }
}
