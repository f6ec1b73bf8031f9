//! What catalogs need to know about cache keys and how engines name a typed cache.

use std::fmt;
use std::hash::Hash;
use std::marker::PhantomData;

use metacache_estimate::{EstimateSize, Sizer};

/// A key of a catalog's cache. `REFRESH DATABASE db` removes the values whose key is in `db`;
/// `REFRESH TABLE db.t` those of `db.t`; `REFRESH CATALOG` all of them.
///
/// Keys are charged with their values ([`EstimateSize`]): the map keeps its own copy.
pub trait MetaKey: Hash + Eq + Clone + EstimateSize + Send + Sync + 'static {
    /// The database the value belongs to, if any.
    fn database(&self) -> Option<&str> {
        None
    }

    /// The table the value belongs to (within [`MetaKey::database`]), if any.
    fn table(&self) -> Option<&str> {
        None
    }

    /// The key a text names, for keys that are text (look-aside keys): what a replicated
    /// look-aside `DELETE` removes on the other nodes of a cluster.
    fn from_text(_text: &str) -> Option<Self> {
        None
    }
}

/// Keys without a database: only `REFRESH CATALOG` removes them (look-aside caches).
impl MetaKey for String {
    fn from_text(text: &str) -> Option<Self> {
        Some(text.to_owned())
    }
}

/// A database of a catalog.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DatabaseKey(pub String);

impl EstimateSize for DatabaseKey {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        sizer.add_string(&self.0);
    }
}

impl MetaKey for DatabaseKey {
    fn database(&self) -> Option<&str> {
        Some(&self.0)
    }
}

/// A table of a catalog.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableKey {
    /// Its database.
    pub database: String,
    /// Its name.
    pub table: String,
}

impl TableKey {
    /// `database.table`.
    pub fn new(database: impl Into<String>, table: impl Into<String>) -> Self {
        Self {
            database: database.into(),
            table: table.into(),
        }
    }
}

impl EstimateSize for TableKey {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        sizer.add_string(&self.database);
        sizer.add_string(&self.table);
    }
}

impl MetaKey for TableKey {
    fn database(&self) -> Option<&str> {
        Some(&self.database)
    }

    fn table(&self) -> Option<&str> {
        Some(&self.table)
    }
}

/// A typed name of one cache: its engine, its ENTRY_NAME, and the key and value types it
/// holds. Engines declare one `const` per cache, so the types cannot be mixed up.
pub struct CacheId<K, V> {
    /// ENGINE_NAME.
    pub engine: &'static str,
    /// ENTRY_NAME.
    pub entry_name: &'static str,
    types: PhantomData<fn() -> (K, V)>,
}

impl<K, V> CacheId<K, V> {
    /// The cache `entry_name` of `engine`.
    pub const fn new(engine: &'static str, entry_name: &'static str) -> Self {
        Self {
            engine,
            entry_name,
            types: PhantomData,
        }
    }
}

impl<K, V> Clone for CacheId<K, V> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K, V> Copy for CacheId<K, V> {}

impl<K, V> fmt::Debug for CacheId<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.engine, self.entry_name)
    }
}
