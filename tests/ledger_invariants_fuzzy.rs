//! Randomised concurrent test of the ledger invariants through real managed caches.
//!
//! Each round, every task performs one random operation at the same time as the others — get,
//! load, failing load, put, invalidate (key, predicate, all), change a limit at any level, drop and
//! rebuild a cache. Between rounds, with every task parked at a barrier, the checker verifies:
//! - after reclamation, no level holds more than its limit;
//! - each cache's entry budget equals the sum of the charges of its resident values, and each
//!   catalog and the node equal the sum of what is below them.
//!
//! At the end, with every cache dropped, that nothing is left reserved anywhere.

use std::sync::Arc;
use std::time::Duration;

use metacache_cache::{CacheConfig, ManagedCache, MemoryGovernor};
use metacache_ledger::{Budget, Level};
use metacache_tests::Blob;
use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};
use slots::Slots;
use tokio::sync::Barrier;

const TASKS: usize = 12;
const ROUNDS: usize = 1500;
const CATALOGS: usize = 3;
const CACHES_PER_CATALOG: usize = 4;

/// The caches of the test, replaceable (dropped and rebuilt) while tasks use clones of them.
mod slots {
    use std::sync::{Mutex, PoisonError};

    pub struct Slots<T>(Mutex<Vec<T>>);

    impl<T: Clone> Slots<T> {
        pub fn new(items: Vec<T>) -> Self {
            Self(Mutex::new(items))
        }
        pub fn get(&self, i: usize) -> T {
            self.0.lock().unwrap_or_else(PoisonError::into_inner)[i].clone()
        }
        pub fn replace(&self, i: usize, item: T) -> T {
            std::mem::replace(
                &mut self.0.lock().unwrap_or_else(PoisonError::into_inner)[i],
                item,
            )
        }
        pub fn all(&self) -> Vec<T> {
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
        }
        pub fn clear(&self) {
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clear();
        }
    }
}

struct World {
    governor: MemoryGovernor,
    catalogs: Vec<Arc<Budget>>,
    groups: Vec<Arc<Budget>>,
    caches: Slots<ManagedCache<String, Blob>>,
}

impl World {
    fn new() -> Self {
        let governor = MemoryGovernor::new(Some(400_000));
        let catalogs: Vec<_> = (0..CATALOGS)
            .map(|i| governor.catalog_budget(&format!("c{i}"), Some(200_000)))
            .collect();
        let groups: Vec<_> = catalogs
            .iter()
            .map(|c| c.child(Level::EntryGroup, "shared", Some(80_000)))
            .collect();
        let caches = (0..CATALOGS * CACHES_PER_CATALOG)
            .map(|i| build(&governor, &catalogs, &groups, i))
            .collect();
        Self {
            governor,
            catalogs,
            groups,
            caches: Slots::new(caches),
        }
    }

    fn rebuild(&self, i: usize) {
        let old = self
            .caches
            .replace(i, build(&self.governor, &self.catalogs, &self.groups, i));
        drop(old);
    }

    fn budgets(&self) -> Vec<Arc<Budget>> {
        let mut all = vec![Arc::clone(self.governor.node())];
        all.extend(self.catalogs.iter().cloned());
        all.extend(self.groups.iter().cloned());
        all.extend(self.caches.all().iter().map(|c| Arc::clone(c.budget())));
        all
    }
}

/// Cache `i`: the first two of each catalog share the catalog's entry group.
fn build(
    governor: &MemoryGovernor,
    catalogs: &[Arc<Budget>],
    groups: &[Arc<Budget>],
    i: usize,
) -> ManagedCache<String, Blob> {
    let catalog = i / CACHES_PER_CATALOG;
    let parent = if i % CACHES_PER_CATALOG < 2 {
        &groups[catalog]
    } else {
        &catalogs[catalog]
    };
    let config = CacheConfig::new(format!("cache-{i}"), Some(Duration::from_secs(3600)), 64);
    ManagedCache::new(config, governor, parent)
}

async fn step(world: &World, rng: &mut StdRng) {
    let i = rng.random_range(0..CATALOGS * CACHES_PER_CATALOG);
    let cache = world.caches.get(i);
    let key = format!("k{}", rng.random_range(0..40));
    let size = rng.random_range(0..30_000u64);
    match rng.random_range(0..100) {
        0..30 => {
            cache.get(&key);
        }
        30..60 => {
            let fail = rng.random_bool(0.2);
            // A caller that joins another's load gets that load's outcome, so the result is
            // not necessarily this loader's.
            let _ = cache
                .get_or_load(key, || async move {
                    tokio::task::yield_now().await;
                    if fail {
                        Err(std::io::Error::other("source down"))
                    } else {
                        Ok(Blob(size))
                    }
                })
                .await;
        }
        60..70 => {
            cache.insert(key, Blob(size));
        }
        70..75 => {
            cache.invalidate(&key);
        }
        75..78 => {
            let modulo = rng.random_range(2..5u64);
            cache.invalidate_if(|_, v| v.0 % modulo == 0);
        }
        78..80 => {
            cache.invalidate_all();
        }
        80..95 => {
            let budgets = world.budgets();
            let budget = &budgets[rng.random_range(0..budgets.len())];
            let limit = rng
                .random_bool(0.8)
                .then(|| rng.random_range(1_000..500_000u64));
            budget.set_limit(limit);
        }
        _ => world.rebuild(i),
    }
}

/// Checks the invariants after a round; returns how many caches had had to contest hot values
/// by frequency (so the test is known to cover that path).
fn check(world: &World, round: usize) -> usize {
    world.governor.reclaim_now();
    for budget in world.budgets() {
        if let Some(limit) = budget.limit() {
            assert!(
                budget.used() <= limit,
                "round {round}: {} '{}' holds {} over its limit {limit}",
                budget.level(),
                budget.name(),
                budget.used()
            );
        }
    }
    let caches = world.caches.all();
    for cache in &caches {
        assert_eq!(
            cache.resident_charge(),
            cache.budget().used(),
            "round {round}: '{}' budget differs from its resident values",
            cache.config().entry_name
        );
    }
    for (c, catalog) in world.catalogs.iter().enumerate() {
        let below: u64 = caches[c * CACHES_PER_CATALOG..(c + 1) * CACHES_PER_CATALOG]
            .iter()
            .map(|cache| cache.budget().used())
            .sum();
        assert_eq!(catalog.used(), below, "round {round}: catalog c{c}");
        let in_group: u64 = caches[c * CACHES_PER_CATALOG..c * CACHES_PER_CATALOG + 2]
            .iter()
            .map(|cache| cache.budget().used())
            .sum();
        assert_eq!(
            world.groups[c].used(),
            in_group,
            "round {round}: group of c{c}"
        );
    }
    let catalogs: u64 = world.catalogs.iter().map(|c| c.used()).sum();
    assert_eq!(
        world.governor.node().used(),
        catalogs,
        "round {round}: node"
    );
    caches.iter().filter(|c| c.history_bytes() > 0).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ledger_invariants_hold_under_random_concurrent_operations() {
    let seed: u64 = std::env::var("METACACHE_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::rng().next_u64());
    eprintln!("seed {seed} (rerun with METACACHE_FUZZ_SEED={seed})");
    let world = Arc::new(World::new());
    let start = Arc::new(Barrier::new(TASKS + 1));
    let done = Arc::new(Barrier::new(TASKS + 1));
    let tasks: Vec<_> = (0..TASKS)
        .map(|t| {
            let (world, start, done) = (Arc::clone(&world), Arc::clone(&start), Arc::clone(&done));
            tokio::spawn(async move {
                let mut rng = StdRng::seed_from_u64(seed.wrapping_add(t as u64));
                for _ in 0..ROUNDS {
                    start.wait().await;
                    step(&world, &mut rng).await;
                    done.wait().await;
                }
            })
        })
        .collect();
    // A task that panics never reaches the barrier again: fail instead of hanging.
    let patience = Duration::from_secs(120);
    let mut contested = 0;
    for round in 0..ROUNDS {
        tokio::time::timeout(patience, start.wait())
            .await
            .expect("tasks stalled");
        tokio::time::timeout(patience, done.wait())
            .await
            .expect("a task panicked or stalled");
        contested += check(&world, round);
    }
    assert!(
        contested > 0,
        "no cache ever contested hot values by frequency"
    );
    for task in tasks {
        task.await.expect("task");
    }
    world.caches.clear();
    // The governor's advisor thread holds each cache for the length of its drain (it upgrades
    // the weak references it keeps): a cache goes when that pass ends.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while world.governor.live_caches() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "{} caches still alive 10 s after the last reference went",
            world.governor.live_caches()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    for budget in world.budgets() {
        assert_eq!(
            budget.used(),
            0,
            "{} '{}' leaked",
            budget.level(),
            budget.name()
        );
    }
}
