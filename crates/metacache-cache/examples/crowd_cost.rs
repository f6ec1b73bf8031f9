//! What reading curves costs a node of many busy caches whose advisors' samples bind: each
//! curve at a size the heavy keys crowd rests on a simulation of that size
//! (`advice/crowd.rs`). `CACHES` caches on one manual clock serve skewed requests; every 15 s
//! of that clock (a `/metrics` scrape) each cache's curve is read. Prints the CPU time spent
//! reading curves and serving requests over the last `MEASURED` minutes (after `WARM`
//! minutes in which the heavy keys' table fills), and the mean curve.
//!
//! `cargo run --release -p metacache-cache --example crowd_cost -- [CACHES] [WARM] [MEASURED]`
//! (defaults 100 caches, 10 and 20 minutes).

#![allow(clippy::print_stdout)] // the figures are the output

#[path = "../tests/common/advice.rs"]
mod advice;

use std::time::{Duration, Instant};

use advice::{Payload, mix, replay_governor};
use metacache_cache::{AdvisorOptions, CacheConfig, ManagedCache};

/// Keys of each cache, requests a second each, and the sample's limit: the sample binds.
const KEYS: u64 = 5_000;
const PER_SECOND: u64 = 50;
const SAMPLE_KEYS: usize = 256;

fn main() {
    let args = advice::numeric_args();
    let caches = args.first().copied().unwrap_or(100);
    let warm = args.get(1).copied().unwrap_or(10);
    let measured = args.get(2).copied().unwrap_or(20);
    let (governor, manual) = replay_governor();
    let options = AdvisorOptions {
        sample_keys: SAMPLE_KEYS,
        ..AdvisorOptions::default()
    };
    let all: Vec<ManagedCache<u64, Payload>> = (0..caches)
        .map(|i| {
            let catalog = governor.catalog_budget(&format!("c{i}"), None);
            let config = CacheConfig::new("advised", None, 1_000_000).with_advisor(Some(options));
            ManagedCache::new(config, &governor, &catalog)
        })
        .collect();
    let (mut serving, mut reading) = (Duration::ZERO, Duration::ZERO);
    let (mut reads, mut draws) = (0u64, 0u64);
    let mut mean = Vec::new();
    for second in 0..(warm + measured) * 60 {
        let counted = second >= warm * 60;
        let started = Instant::now();
        for (c, cache) in all.iter().enumerate() {
            for _ in 0..PER_SECOND {
                draws += 1;
                let u = mix(draws ^ (c as u64) << 40) as f64 / u64::MAX as f64;
                // Skewed: the key of a uniform draw u is ⌊u⁴ × keys⌋.
                let key = (u.powi(4) * KEYS as f64) as u64;
                if cache.get(&key).is_none() {
                    cache.insert(key, Payload(1_000 + (mix(key) % 4_000) as u32));
                }
            }
        }
        if counted {
            serving += started.elapsed();
        }
        manual.advance(Duration::from_secs(1));
        if second % 15 == 14 {
            let started = Instant::now();
            for cache in &all {
                cache.advise_now();
                let advice = cache.advice().expect("an advisor");
                if counted && second + 1 == (warm + measured) * 60 {
                    mean.push(advice);
                }
            }
            if counted {
                reading += started.elapsed();
                reads += caches;
            }
        }
    }
    println!(
        "{caches} caches, {KEYS} keys and a sample of {SAMPLE_KEYS} each, {PER_SECOND} requests a second each; \
         over {measured} minutes after {warm}:\n  \
         reading {reads} curves (drains included) {reading:.2?}, {:.1?} a read; serving {serving:.2?}; \
         reading / serving {:.3}",
        reading / reads.max(1) as u32,
        reading.as_secs_f64() / serving.as_secs_f64().max(1e-9),
    );
    let points = mean.iter().map(|a| a.points.len()).min().unwrap_or(0);
    let curve: Vec<String> = (0..points)
        .map(|p| {
            let rate = mean.iter().map(|a| a.points[p].hit_rate).sum::<f64>() / mean.len() as f64;
            format!("{} {rate:.4}", advice::human(mean[0].points[p].cache_bytes))
        })
        .collect();
    println!("  mean curve: {}", curve.join(", "));
}
