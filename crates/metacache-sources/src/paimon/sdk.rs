//! The connector's own cache of parsed manifests: what Paimon's `CachingCatalog` keeps in the
//! SDK. Manifest files never change once written (a new commit writes new ones), so a new
//! snapshot re-reads only the manifests it added.
//!
//! This memory is **not governed**: it is not charged to any budget and does not show in the
//! statistics table. So, as the `paimon.cache-enabled` rule says, it is off by default while a
//! node or catalog memory limit applies to the catalog (a second, unaccounted cache would
//! undermine the limit), on by default otherwise; an explicit `paimon.cache-enabled` property
//! decides either way.
//!
//! # Invariants
//! - Whether the cache is used is decided at each read, so a node limit set or removed at run
//!   time (`ADMIN SET FRONTEND CONFIG`) takes effect at once; while it is off it holds nothing.
//! - Bounded: at most [`MAX_ENTRIES`] manifest entries in all.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use metacache_ledger::Budget;
use quick_cache::Weighter;
use quick_cache::sync::Cache;

use super::format::ManifestEntry;

/// The property that turns the connector's manifest cache on or off explicitly.
pub const CACHE_ENABLED: &str = "paimon.cache-enabled";
/// The most manifest entries (data files) the cache holds, over all manifests.
pub const MAX_ENTRIES: u64 = 200_000;

#[derive(Clone)]
struct EntriesWeighter;

impl Weighter<String, Arc<Vec<ManifestEntry>>> for EntriesWeighter {
    fn weight(&self, _key: &String, value: &Arc<Vec<ManifestEntry>>) -> u64 {
        value.len() as u64 + 1
    }
}

/// Parsed manifests by location, used only when the rule allows.
pub struct ManifestCache {
    explicit: Option<bool>,
    catalog_budget: Arc<Budget>,
    cache: Cache<String, Arc<Vec<ManifestEntry>>, EntriesWeighter>,
    reads: AtomicU64,
}

impl std::fmt::Debug for ManifestCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManifestCache")
            .field("explicit", &self.explicit)
            .field("active", &self.active())
            .field("manifests", &self.cache.len())
            .finish()
    }
}

impl ManifestCache {
    /// The cache of a catalog whose budget is `catalog_budget`; `explicit` is the parsed
    /// `paimon.cache-enabled` property, if set.
    pub fn new(explicit: Option<bool>, catalog_budget: Arc<Budget>) -> Self {
        Self {
            explicit,
            catalog_budget,
            cache: Cache::with_weighter(4_096, MAX_ENTRIES, EntriesWeighter),
            reads: AtomicU64::new(0),
        }
    }

    /// Whether the cache is used now: the explicit property, else "no node or catalog memory
    /// limit applies".
    pub fn active(&self) -> bool {
        self.explicit
            .unwrap_or_else(|| self.catalog_budget.effective_limit().is_none())
    }

    /// The cached entries of `location`, when the cache is active.
    pub fn get(&self, location: &str) -> Option<Arc<Vec<ManifestEntry>>> {
        if !self.active() {
            self.cache.clear();
            return None;
        }
        self.cache.get(location)
    }

    /// Records a manifest read from the store, and keeps it when the cache is active.
    pub fn read(&self, location: String, entries: Arc<Vec<ManifestEntry>>) {
        self.reads.fetch_add(1, Ordering::Relaxed);
        if self.active() {
            self.cache.insert(location, entries);
        }
    }

    /// Manifests read from the store so far (a hit reads none).
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }

    /// Manifests held now.
    pub fn len(&self) -> usize {
        self.cache.len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.cache.is_empty()
    }
}

/// Parses `paimon.cache-enabled`: `true` or `false` (any case), `None` when unset.
pub fn explicit(value: Option<&str>) -> Result<Option<bool>, String> {
    match value.map(str::trim) {
        None => Ok(None),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(Some(true)),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(Some(false)),
        Some(other) => Err(format!(
            "'{CACHE_ENABLED}' must be true or false, not '{other}'"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use metacache_ledger::{Ledger, Level};

    fn entries(n: usize) -> Arc<Vec<ManifestEntry>> {
        Arc::new(
            (0..n)
                .map(|i| ManifestEntry {
                    delete: false,
                    partition: Vec::new(),
                    bucket: 0,
                    file_name: format!("data-{i}.parquet"),
                    file_size: 1,
                    row_count: 1,
                    creation_millis: None,
                    external_path: None,
                })
                .collect(),
        )
    }

    #[test]
    fn off_by_default_under_a_limit_on_without_one_and_explicit_wins() {
        let ledger = Ledger::new(None);
        let node = Arc::clone(ledger.node());
        let catalog = node.child(Level::Catalog, "c", None);
        let by_default = ManifestCache::new(None, Arc::clone(&catalog));
        assert!(by_default.active(), "no limit anywhere: on");
        by_default.read("m1".to_owned(), entries(2));
        assert_eq!(by_default.len(), 1);

        catalog.set_limit(Some(1 << 20));
        assert!(!by_default.active(), "a catalog limit applies: off");
        assert!(by_default.get("m1").is_none());
        assert!(by_default.is_empty(), "turning off releases what it held");
        catalog.set_limit(None);
        node.set_limit(Some(1 << 30));
        assert!(!by_default.active(), "a node limit applies: off");

        let forced = ManifestCache::new(Some(true), Arc::clone(&catalog));
        assert!(forced.active(), "explicit true wins over the limit");
        node.set_limit(None);
        let refused = ManifestCache::new(Some(false), catalog);
        assert!(!refused.active(), "explicit false wins without a limit");
    }

    #[test]
    fn the_property_is_a_boolean() {
        assert_eq!(explicit(None), Ok(None));
        assert_eq!(explicit(Some(" TRUE ")), Ok(Some(true)));
        assert_eq!(explicit(Some("false")), Ok(Some(false)));
        assert!(explicit(Some("yes")).is_err());
    }
}
