//! Caches of any key and value type behind one object-safe interface, so that a catalog can
//! list, refresh and retire them without knowing their types.

use std::any::Any;

use metacache_cache::{CacheStats, ManagedCache};
use metacache_estimate::EstimateSize;

use crate::MetaKey;

/// What a catalog does with a cache it built.
pub(crate) trait CacheHandle: Send + Sync {
    fn stats(&self) -> CacheStats;
    fn retire(&self);
    fn invalidate_all(&self) -> u64;
    fn invalidate_database(&self, database: &str) -> u64;
    fn invalidate_table(&self, database: &str, table: &str) -> u64;
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

    fn retire(&self) {
        ManagedCache::retire(self);
    }

    fn invalidate_all(&self) -> u64 {
        ManagedCache::invalidate_all(self)
    }

    fn invalidate_database(&self, database: &str) -> u64 {
        self.invalidate_keys_if(|key| key.database() == Some(database))
    }

    fn invalidate_table(&self, database: &str, table: &str) -> u64 {
        self.invalidate_keys_if(|key| {
            key.database() == Some(database) && key.table() == Some(table)
        })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
