//! Where catalog definitions (and remote engines' definitions) live across restarts.
//!
//! The manager calls [`CatalogStore::commit`] before it reports a statement as done and before
//! it changes anything in memory, so an acknowledged statement survives a crash and a failed
//! commit changes nothing. A store is one node's today; a shared PostgreSQL store for several
//! nodes implements the same trait later.

mod file;
mod memory;

pub use file::FileStore;
pub use memory::MemoryStore;

use metacache_engines::EngineDef;
use serde::{Deserialize, Serialize};

use crate::{CatalogDef, StoreError};

/// Everything a store holds.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StoredState {
    /// Catalog definitions, by name.
    #[serde(default)]
    pub catalogs: Vec<CatalogDef>,
    /// Runtime-defined engines, by name.
    #[serde(default)]
    pub engines: Vec<EngineDef>,
}

/// One durable change: what one statement does.
#[derive(Debug, Clone)]
pub enum Change {
    /// CREATE or ALTER CATALOG: the whole new definition.
    PutCatalog(CatalogDef),
    /// DROP CATALOG.
    DeleteCatalog(String),
    /// ALTER CATALOG … RENAME: the definition under its new name replaces the one under
    /// `from`, in one commit (never both, never neither).
    RenameCatalog {
        /// The name before.
        from: String,
        /// The definition, `name` the new one.
        def: CatalogDef,
    },
    /// A remote engine defined or redefined.
    PutEngine(EngineDef),
    /// A remote engine removed.
    DeleteEngine(String),
}

impl StoredState {
    /// Applies `change`, keeping both lists ordered by name.
    pub fn apply(&mut self, change: &Change) {
        match change {
            Change::PutCatalog(def) => {
                self.catalogs.retain(|c| c.name != def.name);
                self.catalogs.push(def.clone());
                self.catalogs.sort_by(|a, b| a.name.cmp(&b.name));
            }
            Change::DeleteCatalog(name) => self.catalogs.retain(|c| &c.name != name),
            Change::RenameCatalog { from, def } => {
                self.catalogs
                    .retain(|c| &c.name != from && c.name != def.name);
                self.catalogs.push(def.clone());
                self.catalogs.sort_by(|a, b| a.name.cmp(&b.name));
            }
            Change::PutEngine(def) => {
                self.engines.retain(|e| e.name != def.name);
                self.engines.push(def.clone());
                self.engines.sort_by(|a, b| a.name.cmp(&b.name));
            }
            Change::DeleteEngine(name) => self.engines.retain(|e| &e.name != name),
        }
    }
}

/// A durable home for catalog definitions.
pub trait CatalogStore: Send + Sync {
    /// Everything stored, as of the last successful commit.
    fn load(&self) -> Result<StoredState, StoreError>;

    /// Makes `change` durable. When this returns `Ok`, a crash does not lose it; when it
    /// returns `Err`, the stored state is the one before.
    fn commit(&self, change: &Change) -> Result<(), StoreError>;

    /// Where the store is, for logs (`file:/var/lib/metacache/catalogs.json`).
    fn describe(&self) -> String;
}
