//! Caches of any key and value type behind one object-safe interface, so that a catalog can
//! list, refresh and retire them without knowing their types.

use std::any::Any;

use metacache_cache::{Advice, CacheStats, ManagedCache};
use metacache_estimate::EstimateSize;
use metacache_ledger::{Budget, Level};

use crate::MetaKey;

/// What a catalog does with a cache it built.
pub(crate) trait CacheHandle: Send + Sync {
    fn stats(&self) -> CacheStats;
    /// The quota advisor's curve, if the advisor is on.
    fn advice(&self) -> Option<Advice>;
    /// The byte limit that applies now (the smallest of entry, group, catalog and node).
    fn limit(&self) -> Option<u64>;
    /// The smallest limit set below the catalog (the entry's own, or its group's): the most
    /// the cache holds whatever the catalog's limit.
    fn own_limit(&self) -> Option<u64>;
    fn retire(&self);
    fn invalidate_all(&self) -> u64;
    fn invalidate_database(&self, database: &str) -> u64;
    fn invalidate_table(&self, database: &str, table: &str) -> u64;
    /// Removes the value of a text key ([`MetaKey::from_text`]); `false` for other key types.
    fn invalidate_text(&self, key: &str) -> bool;
    fn as_any(&self) -> &dyn Any;
}

impl<K, V> CacheHandle for ManagedCache<K, V>
where
    K: MetaKey,
    V: EstimateSize + Send + Sync + 'static,
{
    fn stats(&self) -> CacheStats {
        ManagedCache::stats(self)
    }

    fn advice(&self) -> Option<Advice> {
        ManagedCache::advice(self)
    }

    fn limit(&self) -> Option<u64> {
        self.budget().effective_limit()
    }

    fn own_limit(&self) -> Option<u64> {
        let budget = self.budget();
        [Level::Entry, Level::EntryGroup]
            .into_iter()
            .filter_map(|level| budget.ancestor(level).and_then(Budget::limit))
            .min()
    }

    fn retire(&self) {
        ManagedCache::retire(self);
    }

    fn invalidate_all(&self) -> u64 {
        ManagedCache::invalidate_all(self)
    }

    // Names compare without case: metastores fold them (Hive keeps lower case), so a value
    // loaded as `Sales.Orders` is the table an event or a REFRESH names `sales.orders`.
    fn invalidate_database(&self, database: &str) -> u64 {
        self.invalidate_keys_if(|key| {
            key.database()
                .is_some_and(|d| d.eq_ignore_ascii_case(database))
        })
    }

    fn invalidate_table(&self, database: &str, table: &str) -> u64 {
        self.invalidate_keys_if(|key| {
            key.database()
                .is_some_and(|d| d.eq_ignore_ascii_case(database))
                && key.table().is_some_and(|t| t.eq_ignore_ascii_case(table))
        })
    }

    fn invalidate_text(&self, key: &str) -> bool {
        K::from_text(key).is_some_and(|key| ManagedCache::invalidate(self, &key))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
