//! Helpers shared by the catalog tests.
#![allow(dead_code)]

use std::sync::Arc;

use metacache_cache::Clock;
use metacache_catalog::memory::{MemorySource, NodeMemory};
use metacache_catalog::{
    CatalogManager, CatalogStore, CreateCatalog, ManagerOptions, MemoryStore, NodeConfig,
    Properties,
};
use metacache_estimate::{EstimateSize, Sizer};

/// A cached value whose estimate is exactly `.0` bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob(pub u64);

impl EstimateSize for Blob {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add(usize::try_from(self.0).unwrap_or(usize::MAX));
    }
}

/// What a value of `bytes` is charged under a [`SHORT_TABLE_KEY`].
pub fn charge(bytes: u64) -> u64 {
    bytes + SHORT_TABLE_KEY + metacache_ledger::ACCOUNTING_OVERHEAD_BYTES
}

/// The charge of a `TableKey` whose names are at most 8 bytes: two `String` headers and two
/// buffers in jemalloc's 8-byte class. Every key of these tests is one.
pub const SHORT_TABLE_KEY: u64 = 48 + 8 + 8;

/// 16 GiB, the node memory of these tests.
pub const NODE_MEMORY: u64 = 16 << 30;

/// A manager on `store` with 16 GiB of node memory.
pub fn manager_on(store: Arc<dyn CatalogStore>, config: NodeConfig) -> CatalogManager {
    let mut options = ManagerOptions::new(store);
    options.config = config;
    options.clock = Clock::System;
    options.node_memory = Some(NodeMemory {
        bytes: NODE_MEMORY,
        source: MemorySource::Physical,
    });
    CatalogManager::open(options).expect("manager opens")
}

/// A manager on a fresh in-memory store, and the store.
pub fn manager() -> (CatalogManager, Arc<MemoryStore>) {
    let store = Arc::new(MemoryStore::new());
    (manager_on(store.clone(), NodeConfig::default()), store)
}

/// Property pairs of a statement.
pub type Pairs<'a> = &'a [(&'a str, &'a str)];

/// Properties from pairs.
pub fn props(pairs: &[(&str, &str)]) -> Properties {
    Properties::from_pairs(pairs.iter().copied())
}

/// CREATE CATALOG `name` with `pairs`.
pub fn create(
    manager: &CatalogManager,
    name: &str,
    pairs: &[(&str, &str)],
) -> metacache_catalog::Result<metacache_catalog::Outcome> {
    manager.create_catalog(CreateCatalog {
        name: name.to_owned(),
        if_not_exists: false,
        comment: String::new(),
        properties: props(pairs),
    })
}
