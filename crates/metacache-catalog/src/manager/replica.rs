//! Changes made on other nodes of a cluster, applied to this node's memory without committing
//! them again: the store already holds them (module invariants of [`super`]).
//!
//! # Invariants
//! - A replicated change is applied under the same statement lock as local statements, so a
//!   node never interleaves the two.
//! - Applying is idempotent: a catalog definition that equals the one held changes nothing, a
//!   drop of a missing catalog is a no-op; replaying a change never fails a node.
//! - [`CatalogManager::resync`] makes memory equal to a full stored state and drops every cache
//!   of every catalog it keeps (a node that missed changes cannot know which values they
//!   concerned).

use std::sync::Arc;

use super::CatalogManager;
use crate::catalog::{AlterScope, Catalog, CatalogDef};
use crate::store::{Change, StoredState};

/// What applying a replicated change did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Applied {
    /// Whether memory changed.
    pub changed: bool,
    /// Cached values removed (refreshes, and caches an ALTER dropped are not counted).
    pub invalidated: u64,
}

impl CatalogManager {
    /// Applies a change another node committed to the shared store.
    pub fn apply_replicated(&self, change: &Change) -> Applied {
        let _ddl = self.ddl.lock();
        self.apply_unlocked(change)
    }

    fn apply_unlocked(&self, change: &Change) -> Applied {
        let changed = |changed| Applied {
            changed,
            invalidated: 0,
        };
        match change {
            Change::CreateCatalog(def) | Change::PutCatalog(def) => changed(self.put_def(def)),
            Change::DeleteCatalog(name) => {
                let Some(catalog) = self.catalogs.write().remove(name) else {
                    return changed(false);
                };
                catalog.apply_drop();
                self.fence_disk(name);
                self.scopes().close_catalog(name);
                tracing::info!(catalog = %name, "catalog dropped (replicated)");
                changed(true)
            }
            Change::RenameCatalog { from, def } => {
                let mut catalogs = self.catalogs.write();
                let Some(catalog) = catalogs.remove(from) else {
                    drop(catalogs);
                    return changed(self.put_def(def));
                };
                catalog.apply_rename(def.clone());
                catalogs.insert(def.name.clone(), catalog);
                drop(catalogs);
                self.scopes().close_catalog(from);
                tracing::info!(catalog = %def.name, from = %from, "catalog renamed (replicated)");
                changed(true)
            }
            Change::PutEngine(engine) => match self.registry.register(engine.clone()) {
                Ok(engine) => {
                    for catalog in self.catalogs() {
                        catalog.reload_engines(&self.registry, &engine.name);
                    }
                    changed(true)
                }
                Err(error) => {
                    tracing::warn!(engine = %engine.name, %error, "a replicated engine definition was not applied");
                    changed(false)
                }
            },
            Change::DeleteEngine(name) => {
                if self.registry.get(name).is_none() || self.registry.unregister(name).is_err() {
                    return changed(false);
                }
                for catalog in self.catalogs() {
                    catalog.reload_engines(&self.registry, name);
                }
                changed(true)
            }
            Change::InvalidateKey {
                catalog,
                engine,
                entry,
                key,
            } => {
                let removed = self
                    .catalog(catalog)
                    .is_ok_and(|c| c.invalidate_key(engine, entry, key));
                Applied {
                    changed: removed,
                    invalidated: u64::from(removed),
                }
            }
            Change::Refresh {
                catalog,
                database,
                table,
            } => {
                let Ok(handle) = self.catalog(catalog) else {
                    return changed(false);
                };
                self.fence_disk(catalog);
                let invalidated = match (database, table) {
                    (Some(d), Some(t)) => handle.refresh_table(d, t),
                    (Some(d), None) => handle.refresh_database(d),
                    _ => handle.refresh(),
                };
                Applied {
                    changed: true,
                    invalidated,
                }
            }
        }
    }

    /// A catalog definition from the store: created, or altered with the caches its changed
    /// keys concern dropped; `false` when it equals the one held.
    fn put_def(&self, def: &CatalogDef) -> bool {
        let existing = self.catalogs.read().get(&def.name).cloned();
        match existing {
            Some(catalog) => {
                let old = catalog.def();
                if old == *def {
                    return false;
                }
                let scope = self.alter_scope(&old.properties.changed_keys(&def.properties));
                catalog.apply_alter(def.clone(), &scope);
                tracing::info!(catalog = %def.name, "catalog altered (replicated)");
            }
            None => {
                let catalog = Arc::new(Catalog::new(
                    def.clone(),
                    &self.registry,
                    Arc::clone(&self.governor),
                ));
                self.catalogs.write().insert(def.name.clone(), catalog);
                tracing::info!(catalog = %def.name, "catalog created (replicated)");
            }
        }
        true
    }

    /// Makes memory equal to `state` (after missed changes): engines and catalogs defined as
    /// stored, others removed, and every cache of every remaining catalog dropped.
    pub fn resync(&self, state: &StoredState) -> u64 {
        let _ddl = self.ddl.lock();
        for engine in &state.engines {
            self.apply_unlocked(&Change::PutEngine(engine.clone()));
        }
        let stored: std::collections::BTreeSet<&str> =
            state.catalogs.iter().map(|c| c.name.as_str()).collect();
        for name in self
            .catalogs
            .read()
            .keys()
            .filter(|n| !stored.contains(n.as_str()))
            .cloned()
            .collect::<Vec<_>>()
        {
            self.apply_unlocked(&Change::DeleteCatalog(name));
        }
        let mut invalidated = 0;
        for def in &state.catalogs {
            self.put_def(def);
            if let Ok(catalog) = self.catalog(&def.name) {
                catalog.apply_alter(
                    catalog.def(),
                    &AlterScope {
                        all: true,
                        ..AlterScope::default()
                    },
                );
                invalidated += 1;
            }
        }
        tracing::warn!(
            catalogs = invalidated,
            "resynchronised with the catalog store; every cache was dropped"
        );
        invalidated
    }
}
