//! Where catalog definitions (and remote engines' definitions) live across restarts.
//!
//! The manager calls [`CatalogStore::commit`] before it reports a statement as done and before
//! it changes anything in memory, so an acknowledged statement survives a crash and a failed
//! commit changes nothing. A store is one node's ([`FileStore`], [`MemoryStore`]) or shared by a
//! cluster (the PostgreSQL store of `metacache-cluster`), which also carries the cluster-wide
//! events that change nothing durable ([`Change::Refresh`]) to every node.

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

/// One change: what one statement does.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", content = "change", rename_all = "snake_case")]
pub enum Change {
    /// CREATE CATALOG: a shared store refuses it when the name exists
    /// ([`StoreError::Exists`]), whichever node created it.
    CreateCatalog(CatalogDef),
    /// ALTER CATALOG: the whole new definition.
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
    /// REFRESH CATALOG / DATABASE / TABLE: nothing durable changes; a shared store carries it
    /// to every node.
    Refresh {
        /// The catalog.
        catalog: String,
        /// The database (`None`: the whole catalog).
        database: Option<String>,
        /// The table (`None`: the whole database or catalog).
        table: Option<String>,
    },
    /// A look-aside `DELETE`: nothing durable changes; a shared store carries it to every node.
    InvalidateKey {
        /// The catalog.
        catalog: String,
        /// The engine.
        engine: String,
        /// The cache's ENTRY_NAME.
        entry: String,
        /// The key.
        key: String,
    },
}

impl Change {
    /// Whether it changes nothing durable (an event other nodes must see, nothing to write).
    pub fn is_event_only(&self) -> bool {
        matches!(self, Change::Refresh { .. } | Change::InvalidateKey { .. })
    }

    /// The catalog it concerns, if one.
    pub fn catalog(&self) -> Option<&str> {
        match self {
            Change::CreateCatalog(def) | Change::PutCatalog(def) => Some(&def.name),
            Change::DeleteCatalog(name) => Some(name),
            Change::RenameCatalog { from, .. } => Some(from),
            Change::Refresh { catalog, .. } | Change::InvalidateKey { catalog, .. } => {
                Some(catalog)
            }
            Change::PutEngine(_) | Change::DeleteEngine(_) => None,
        }
    }
}

impl StoredState {
    /// Applies `change`, keeping both lists ordered by name.
    pub fn apply(&mut self, change: &Change) {
        match change {
            Change::CreateCatalog(def) | Change::PutCatalog(def) => {
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
            Change::Refresh { .. } | Change::InvalidateKey { .. } => {}
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
