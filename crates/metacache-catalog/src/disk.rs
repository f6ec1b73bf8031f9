//! The node's disk tier ([`metacache_disk`]), opened from `external_meta_cache_disk_dir` and
//! `external_meta_cache_disk_max_weight` when the node starts and kept in step with them by
//! each change of the configuration: a new directory opens a new tier (readers pick it up at
//! their next connector build), a new capacity is applied to the directory on a thread of its
//! own (eviction may scan it). Readers never look at the configuration.
//!
//! # Invariants
//! - No tier when the directory is empty; a directory that cannot be used gives a tier that
//!   reads every object from its source and says why (`unavailable`), never an error.

use metacache_disk::{DiskTier, Options};
use metacache_ledger::size::NodeWeight;
use parking_lot::Mutex;
use std::path::PathBuf;

use crate::node_config::NodeConfig;

/// Catalog property: `false` keeps the catalog's files off the node's disk tier.
pub const DISK_ENABLE: &str = "meta.cache.disk.enable";

struct Open {
    dir: PathBuf,
    capacity: u64,
    tier: DiskTier,
}

/// The tier the node configuration names, if any.
#[derive(Default)]
pub struct NodeDisk {
    open: Mutex<Option<Open>>,
}

impl std::fmt::Debug for NodeDisk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeDisk").finish_non_exhaustive()
    }
}

/// The capacity `weight` means for the file system of `dir`.
fn capacity(weight: NodeWeight, dir: &std::path::Path) -> u64 {
    match weight {
        NodeWeight::Bytes(bytes) => bytes,
        NodeWeight::Percent(p) => metacache_disk::filesystem_bytes(dir).map_or(0, |fs| p.of(fs)),
        NodeWeight::Unlimited => u64::MAX,
    }
}

impl NodeDisk {
    /// Opens, re-sizes or closes the tier as `config` describes it: at start and after each
    /// change of the node configuration, so that readers only take the tier that is open.
    pub fn apply(&self, config: &NodeConfig) {
        let dir = config.external_meta_cache_disk_dir.trim();
        let mut open = self.open.lock();
        if dir.is_empty() {
            *open = None;
            return;
        }
        let dir = PathBuf::from(dir);
        let capacity = capacity(config.external_meta_cache_disk_max_weight, &dir);
        match open.as_mut() {
            Some(o) if o.dir == dir => {
                if o.capacity != capacity {
                    o.capacity = capacity;
                    let tier = o.tier.clone();
                    std::thread::spawn(move || {
                        if let Err(e) = tier.set_capacity(capacity) {
                            tracing::warn!(error = %e, "the disk tier's capacity was not changed");
                        }
                    });
                }
            }
            _ => {
                let tier = DiskTier::open(&dir, Options::with_capacity(capacity));
                *open = Some(Open {
                    dir,
                    capacity,
                    tier,
                });
            }
        }
    }

    /// The open tier, if the configuration names one.
    pub fn opened(&self) -> Option<DiskTier> {
        self.open.lock().as_ref().map(|o| o.tier.clone())
    }

    /// Fences `catalog`'s blocks (REFRESH, DROP): a failure is logged, the statement goes on
    /// (the memory caches were refreshed).
    pub fn fence(&self, catalog: &str) {
        if let Some(tier) = self.opened()
            && let Err(e) = tier.invalidate(catalog)
        {
            tracing::warn!(catalog, error = %e, "the disk tier could not fence the catalog's blocks");
        }
    }
}

/// Whether `properties` let the catalog use the disk tier (validated as a boolean when set).
pub fn enabled(properties: &crate::Properties) -> bool {
    properties
        .get(DISK_ENABLE)
        .is_none_or(|v| metacache_engines::parse_enable(DISK_ENABLE, v).unwrap_or(true))
}
