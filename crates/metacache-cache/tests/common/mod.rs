//! Values and set-ups shared by the cache tests.
#![allow(dead_code, missing_docs)]

pub mod advice;

use std::sync::Arc;
use std::time::Duration;

use metacache_cache::{
    CacheConfig, Clock, GovernorOptions, ManagedCache, ManualClock, MemoryGovernor,
};
use metacache_estimate::{EstimateSize, Sizer};
use metacache_ledger::{Budget, Level};

/// A value whose estimate is exactly its declared size (0 allowed, to test zero estimates).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob(pub u64);

impl EstimateSize for Blob {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add(self.0 as usize);
    }
}

/// A value its estimator cannot see into.
#[derive(Debug)]
pub struct Opaque;

impl EstimateSize for Opaque {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add(64);
        sizer.mark_incomplete("opaque_handle");
    }
}

/// A value whose estimator panics.
#[derive(Debug)]
pub struct Exploding;

impl EstimateSize for Exploding {
    fn estimate_size(&self, _: &mut Sizer) {
        panic!("estimator exploded");
    }
}

pub struct Node {
    pub governor: MemoryGovernor,
    pub clock: Arc<ManualClock>,
}

pub fn node(limit: Option<u64>) -> Node {
    let (clock, handle) = Clock::manual();
    let governor = MemoryGovernor::with_options(GovernorOptions {
        node_limit: limit,
        clock,
        sweep_interval: Duration::from_secs(3600),
        ..GovernorOptions::default()
    });
    Node {
        governor,
        clock: handle,
    }
}

pub fn config(name: &str, ttl_secs: Option<u64>, capacity: u64) -> CacheConfig {
    CacheConfig::new(name, ttl_secs.map(Duration::from_secs), capacity)
}

pub fn cache<V>(node: &Node, parent: &Arc<Budget>, config: CacheConfig) -> ManagedCache<String, V>
where
    V: EstimateSize + Send + Sync + 'static,
{
    ManagedCache::new(config, &node.governor, parent)
}

pub fn catalog(node: &Node, name: &str, limit: Option<u64>) -> Arc<Budget> {
    node.governor.catalog_budget(name, limit)
}

pub fn group(catalog: &Arc<Budget>, name: &str, limit: Option<u64>) -> Arc<Budget> {
    catalog.child(Level::EntryGroup, name, limit)
}

pub async fn load_blob(
    cache: &ManagedCache<String, Blob>,
    key: &str,
    size: u64,
) -> metacache_cache::Cached<Blob> {
    cache
        .get_or_load(key.to_owned(), || async move {
            Ok::<_, std::io::Error>(Blob(size))
        })
        .await
        .expect("load succeeds")
}

/// Charge of a blob of `size` bytes under `key`: the value's estimate, the key's (a `String`:
/// its header and its buffer) and the fixed overhead.
pub fn charged(key: &str, size: u64) -> u64 {
    // The key's buffer is charged at its allocator size class.
    size + (std::mem::size_of::<String>() + metacache_estimate::size_class(key.len())) as u64
        + metacache_ledger::ACCOUNTING_OVERHEAD_BYTES
}

/// The `i`-th key [`fill`] uses: `<prefix>000`, `<prefix>001`, … (all of one length, so all of
/// one charge).
pub fn key(prefix: &str, i: usize) -> String {
    format!("{prefix}{i:03}")
}

/// Charge of each blob [`fill`] loads.
pub fn fill_charge(prefix: &str, size: u64) -> u64 {
    charged(&key(prefix, 0), size)
}

/// Loads `count` blobs of `size` bytes under keys [`key`]`(prefix, 0..count)`.
pub async fn fill(cache: &ManagedCache<String, Blob>, prefix: &str, count: usize, size: u64) {
    for i in 0..count {
        load_blob(cache, &key(prefix, i), size).await;
    }
}
