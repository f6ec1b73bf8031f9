//! No read that starts after an invalidation returns a value loaded before it (seed 000's rule),
//! under random concurrent loads, reads and invalidations of every kind.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;

use common::*;
use metacache_cache::ManagedCache;
use metacache_estimate::{EstimateSize, Sizer};
use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};

const KEYS: usize = 4;
const TASKS: usize = 8;
const STEPS: usize = 3000;

/// The version of a key's metadata a load read from the source.
#[derive(Debug)]
struct Versioned(u64);

impl EstimateSize for Versioned {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
    }
}

/// The external source (a version per key) and, per key, the version that every read starting
/// now must see at least: the source's version when the last refresh of the key completed.
struct World {
    cache: ManagedCache<String, Versioned>,
    source: [AtomicU64; KEYS],
    floor: [AtomicU64; KEYS],
}

async fn read(world: &World, k: usize, rng: &mut StdRng) {
    let floor = world.floor[k].load(SeqCst);
    let yields = rng.random_range(0..4);
    let version = if rng.random_bool(0.3) {
        match world.cache.get(&format!("k{k}")) {
            Some(v) => v.0,
            None => return,
        }
    } else {
        let loaded = world
            .cache
            .get_or_load(format!("k{k}"), || async move {
                let version = world.source[k].load(SeqCst);
                // The load takes a while: refreshes can complete during it.
                for _ in 0..yields {
                    tokio::task::yield_now().await;
                }
                Ok::<_, std::io::Error>(Versioned(version))
            })
            .await
            .expect("loads do not fail");
        loaded.0
    };
    assert!(
        version >= floor,
        "k{k}: read version {version}, but a refresh to {floor} completed before the read began"
    );
}

/// The external change, then the refresh that makes it visible.
fn refresh(world: &World, k: usize, rng: &mut StdRng) {
    let version = world.source[k].fetch_add(1, SeqCst) + 1;
    let key = format!("k{k}");
    match rng.random_range(0..4) {
        0 => {
            world.cache.invalidate(&key);
        }
        1 => {
            world
                .cache
                .invalidate_keys_if(|candidate| *candidate == key);
        }
        2 => {
            world.cache.invalidate_if(|candidate, _| *candidate == key);
        }
        _ => {
            world.cache.invalidate_all();
        }
    }
    world.floor[k].fetch_max(version, SeqCst);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_read_after_a_refresh_returns_a_value_loaded_before_it() {
    let seed: u64 = std::env::var("METACACHE_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::rng().next_u64());
    eprintln!("seed {seed} (rerun with METACACHE_FUZZ_SEED={seed})");
    let node = node(None);
    let catalog = catalog(&node, "c", None);
    let world = Arc::new(World {
        cache: cache(&node, &catalog, config("hive-table", Some(3600), 100)),
        source: std::array::from_fn(|_| AtomicU64::new(0)),
        floor: std::array::from_fn(|_| AtomicU64::new(0)),
    });
    let tasks: Vec<_> = (0..TASKS)
        .map(|t| {
            let world = Arc::clone(&world);
            tokio::spawn(async move {
                let mut rng = StdRng::seed_from_u64(seed.wrapping_add(t as u64));
                for _ in 0..STEPS {
                    let k = rng.random_range(0..KEYS);
                    if rng.random_bool(0.1) {
                        refresh(&world, k, &mut rng);
                    } else {
                        read(&world, k, &mut rng).await;
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        tokio::time::timeout(Duration::from_secs(120), task)
            .await
            .expect("a task stalled")
            .expect("a read returned pre-refresh data (see the panic above)");
    }
}
