//! How far the node's advisors' share goes: `CACHES` busy caches on a node of `NODE_MIB`
//! (its advisors share a sixteenth of it), each serving skewed requests on one manual clock,
//! drained and shared every 25 ms of it as the governor's advisor thread does, for
//! `MINUTES`. Prints the advisors running and waiting, what they hold, and the caches' samples:
//! the more of the share each advisor's fixed parts (its queue's buffers) take, the smaller the
//! samples, or the more advisors wait.
//!
//! `cargo run --release -p metacache-cache --example advisor_share -- [CACHES] [NODE_MIB]
//! [KEYS] [MINUTES] [PER_DRAIN]` (defaults 600 caches of 2,000 keys, 512 MiB, 3 minutes, 2
//! requests a cache per drain: 80 a second). The values (100–163 bytes) must fit the node's
//! limit less the share, or reclamation stops advisors for good: keep `CACHES × KEYS × 130` B
//! under it.

#![allow(clippy::print_stdout)] // the figures are the output

#[path = "../tests/common/advice.rs"]
mod advice;

use std::time::Duration;

use advice::{Payload, mix};
use metacache_cache::{
    AdvisorOptions, CacheConfig, Clock, GovernorOptions, ManagedCache, MemoryGovernor,
};

fn main() {
    let args = advice::numeric_args();
    let caches = args.first().copied().unwrap_or(600);
    let node = args.get(1).copied().unwrap_or(512) << 20;
    let keys = args.get(2).copied().unwrap_or(2_000);
    let minutes = args.get(3).copied().unwrap_or(3);
    let per_drain = args.get(4).copied().unwrap_or(2);
    let (clock, manual) = Clock::manual();
    let governor = MemoryGovernor::with_options(GovernorOptions {
        node_limit: Some(node),
        clock,
        sweep_interval: Duration::from_secs(24 * 3600),
        drain_interval: None,
    });
    let all: Vec<ManagedCache<u64, Payload>> = (0..caches)
        .map(|i| {
            let catalog = governor.catalog_budget(&format!("c{i}"), None);
            let config = CacheConfig::new("advised", None, 1_000_000)
                .with_advisor(Some(AdvisorOptions::default()));
            ManagedCache::new(config, &governor, &catalog)
        })
        .collect();
    let mut draws = 0u64;
    let drains = minutes * 60 * 40;
    for _ in 0..drains {
        for (c, cache) in all.iter().enumerate() {
            for _ in 0..per_drain {
                draws += 1;
                let u = mix(draws ^ ((c as u64) << 40)) as f64 / u64::MAX as f64;
                // Skewed: the key of a uniform draw u is ⌊u³ × keys⌋.
                let key = (u.powi(3) * keys as f64) as u64;
                if cache.get(&key).is_none() {
                    cache.insert(key, Payload(100 + (mix(key) % 64) as u32));
                }
            }
        }
        manual.advance(Duration::from_millis(25));
        governor.advise_now();
    }
    if std::env::var_os("SHOW").is_some() {
        for cache in &all {
            if let Some(a) = cache.advice() {
                println!(
                    "keys {} limit {} rate {:.4} reserved {} points {} dropped {}",
                    a.sampled_keys,
                    a.sample_limit,
                    a.sampling_rate,
                    a.reserved_bytes,
                    a.points.len(),
                    a.dropped_events
                );
            }
        }
    }
    let share = governor.advisors_share();
    let advices: Vec<_> = all.iter().filter_map(ManagedCache::advice).collect();
    let with_curve = advices.iter().filter(|a| !a.points.is_empty()).count();
    let mut sampled: Vec<u64> = advices
        .iter()
        .filter(|a| !a.points.is_empty())
        .map(|a| a.sampled_keys)
        .collect();
    sampled.sort_unstable();
    let mean = sampled.iter().sum::<u64>() as f64 / sampled.len().max(1) as f64;
    let dropped: u64 = advices.iter().map(|a| a.dropped_events).sum();
    println!(
        "{caches} caches of {keys} keys on a {} MiB node, {per_drain} requests a cache per 25 ms, {minutes} minutes:\n  \
         advisors running {}, waiting {}, level {:?} B; they hold {} of {:?} B\n  \
         caches with a curve {with_curve}; sampled keys mean {mean:.0}, min {}, median {}, max {}; events dropped {dropped}",
        node >> 20,
        share.running,
        share.waiting,
        share.level,
        governor.advisors_budget().used(),
        governor.advisors_budget().limit(),
        sampled.first().copied().unwrap_or(0),
        sampled.get(sampled.len() / 2).copied().unwrap_or(0),
        sampled.last().copied().unwrap_or(0),
    );
}
