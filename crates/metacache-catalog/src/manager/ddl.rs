//! The statements that change catalogs: CREATE, ALTER (properties, comment, name) and DROP.
//! Each validates, commits one change to the store, then changes memory (module invariants of
//! [`super`]).

use std::sync::Arc;

use metacache_engines::{EntryKey, KEY_PREFIX};
use metacache_ledger::size::CATALOG_MAX_WEIGHT_KEY;

use super::{
    CatalogManager, CreateCatalog, MAX_NAME_LEN, Outcome, RESERVED_NAMES, SCHEMA_TTL_LEGACY_KEY,
};
use crate::catalog::{AlterScope, Catalog, CatalogDef};
use crate::store::Change;
use crate::validate;
use crate::{Error, Properties, Result};

impl CatalogManager {
    /// CREATE CATALOG.
    pub fn create_catalog(&self, statement: CreateCatalog) -> Result<Outcome> {
        let _ddl = self.ddl.lock();
        check_name(&statement.name)?;
        if self.catalogs.read().contains_key(&statement.name) {
            if statement.if_not_exists {
                return Ok(Outcome::default());
            }
            return Err(Error::CatalogExists {
                name: statement.name,
            });
        }
        let catalog_type = validate::catalog_type(&self.registry, &statement.properties)?;
        let warnings = validate::check_statement(
            &self.registry,
            &catalog_type,
            &statement.properties,
            &statement.properties,
        )?;
        self.node
            .lock()
            .config
            .reach()
            .check_properties(&statement.name, &statement.properties)?;
        let now = self.governor.clock().wall_millis();
        let id = crate::catalog::next_id(self.catalogs.read().values().map(|c| c.def().id), now);
        let def = CatalogDef {
            id,
            name: statement.name,
            comment: statement.comment,
            properties: statement.properties,
            created_at_millis: now,
            updated_at_millis: now,
        };
        self.store
            .commit(&Change::CreateCatalog(def.clone()))
            .map_err(Error::from_store)?;
        let catalog = Arc::new(Catalog::new(
            def,
            &self.registry,
            Arc::clone(&self.governor),
        ));
        tracing::info!(catalog = &*catalog.name(), engines = ?catalog.engines(), "catalog created");
        self.catalogs
            .write()
            .insert(catalog.name().to_string(), catalog);
        Ok(Outcome {
            changed: true,
            dropped: AlterScope::default(),
            warnings,
        })
    }

    /// ALTER CATALOG … SET PROPERTIES: validates, stores, then drops the caches the change
    /// affects (§6); they rebuild on next use with the new settings.
    pub fn alter_catalog(&self, name: &str, properties: Properties) -> Result<Outcome> {
        let _ddl = self.ddl.lock();
        let catalog = self.catalog(name)?;
        let old = catalog.def();
        let merged = old.properties.merged(&properties);
        if let Some(to) = properties.get(crate::properties::TYPE_KEY) {
            let to = to.trim().to_ascii_lowercase();
            if to != old.catalog_type() {
                return Err(Error::TypeChange {
                    catalog: name.to_owned(),
                    from: old.catalog_type(),
                    to,
                });
            }
        }
        let warnings =
            validate::check_statement(&self.registry, &old.catalog_type(), &properties, &merged)?;
        // What the statement sets; a stored value outside narrowed lists is refused when the
        // connector is built, and does not block changing the catalog's quotas.
        self.node
            .lock()
            .config
            .reach()
            .check_properties(name, &properties)?;
        let scope = self.alter_scope(&old.properties.changed_keys(&merged));
        if scope.is_empty() && merged == old.properties {
            return Ok(Outcome {
                changed: false,
                dropped: scope,
                warnings,
            });
        }
        let def = CatalogDef {
            properties: merged,
            updated_at_millis: self.governor.clock().wall_millis(),
            ..old
        };
        self.store
            .commit(&Change::PutCatalog(def.clone()))
            .map_err(Error::from_store)?;
        catalog.apply_alter(def, &scope);
        tracing::info!(catalog = name, all = scope.all, engines = ?scope.config_engines, "catalog altered; caches dropped");
        Ok(Outcome {
            changed: true,
            dropped: scope,
            warnings,
        })
    }

    /// Which caches a change of `changed` keys drops: every cache for the catalog limit, the
    /// legacy schema TTL and connection properties; one engine's for its keys.
    pub(super) fn alter_scope(&self, changed: &[&str]) -> AlterScope {
        let mut scope = AlterScope::default();
        for &key in changed {
            if key == CATALOG_MAX_WEIGHT_KEY || key == SCHEMA_TTL_LEGACY_KEY {
                scope.all = true;
            } else if let Some(entry_key) = EntryKey::parse(key) {
                scope.config_engines.insert(entry_key.engine.to_owned());
            } else if key.starts_with(KEY_PREFIX) {
                // Validation refuses malformed cache keys; nothing reads them.
            } else {
                let legacy_of: Vec<String> = self
                    .registry
                    .all()
                    .iter()
                    .filter(|e| e.legacy.iter().any(|l| l.key == key))
                    .map(|e| e.config_engine().to_owned())
                    .collect();
                if legacy_of.is_empty() {
                    // A connection property: what is cached may now come from another source.
                    scope.all = true;
                }
                scope.config_engines.extend(legacy_of);
            }
        }
        if scope.all {
            scope.config_engines.clear();
        }
        scope
    }

    /// DROP CATALOG: stores the removal, then releases every byte the catalog's caches held.
    pub fn drop_catalog(&self, name: &str, if_exists: bool) -> Result<Outcome> {
        let _ddl = self.ddl.lock();
        let catalog = match self.catalog(name) {
            Ok(catalog) => catalog,
            Err(_) if if_exists => return Ok(Outcome::default()),
            Err(error) => return Err(error),
        };
        self.store
            .commit(&Change::DeleteCatalog(name.to_owned()))
            .map_err(Error::from_store)?;
        self.catalogs.write().remove(name);
        catalog.apply_drop();
        self.fence_disk(name);
        let scopes = self.scopes().close_catalog(name);
        tracing::info!(catalog = name, scopes, "catalog dropped");
        Ok(Outcome {
            changed: true,
            ..Outcome::default()
        })
    }

    /// ALTER CATALOG … RENAME: the catalog keeps its caches, budget, counters and settings
    /// under `new_name` (the statistics table and `/metrics` show them there from now on).
    pub fn rename_catalog(&self, name: &str, new_name: &str) -> Result<Outcome> {
        let _ddl = self.ddl.lock();
        let catalog = self.catalog(name)?;
        check_name(new_name)?;
        if new_name == name {
            return Ok(Outcome::default());
        }
        if self.catalogs.read().contains_key(new_name) {
            return Err(Error::CatalogExists {
                name: new_name.to_owned(),
            });
        }
        let old = catalog.def();
        let def = CatalogDef {
            name: new_name.to_owned(),
            updated_at_millis: self.governor.clock().wall_millis(),
            ..old
        };
        self.store
            .commit(&Change::RenameCatalog {
                from: name.to_owned(),
                def: def.clone(),
            })
            .map_err(Error::from_store)?;
        {
            let mut catalogs = self.catalogs.write();
            catalogs.remove(name);
            catalog.apply_rename(def);
            catalogs.insert(new_name.to_owned(), Arc::clone(&catalog));
        }
        // Scopes name their catalog; a scan does not follow a rename.
        let scopes = self.scopes().close_catalog(name);
        tracing::info!(catalog = new_name, from = name, scopes, "catalog renamed");
        Ok(Outcome {
            changed: true,
            ..Outcome::default()
        })
    }

    /// ALTER CATALOG … MODIFY COMMENT: nothing cached changes.
    pub fn alter_catalog_comment(&self, name: &str, comment: &str) -> Result<Outcome> {
        let _ddl = self.ddl.lock();
        let catalog = self.catalog(name)?;
        let old = catalog.def();
        if old.comment == comment {
            return Ok(Outcome::default());
        }
        let def = CatalogDef {
            comment: comment.to_owned(),
            updated_at_millis: self.governor.clock().wall_millis(),
            ..old
        };
        self.store
            .commit(&Change::PutCatalog(def.clone()))
            .map_err(Error::from_store)?;
        catalog.apply_comment(def);
        Ok(Outcome {
            changed: true,
            ..Outcome::default()
        })
    }
}

pub(super) fn check_name(name: &str) -> Result<()> {
    let invalid = |reason| Error::InvalidName {
        name: name.escape_debug().to_string(),
        reason,
    };
    let mut chars = name.chars();
    match chars.next() {
        None => return Err(invalid("a name is required")),
        Some(c) if !(c.is_ascii_alphabetic() || c == '_') => {
            return Err(invalid("names start with a letter or '_'"));
        }
        _ => {}
    }
    if name.len() > MAX_NAME_LEN {
        return Err(invalid("names are at most 64 characters"));
    }
    if !chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Err(invalid("names are letters, digits, '_' and '-'"));
    }
    if RESERVED_NAMES.iter().any(|r| r.eq_ignore_ascii_case(name)) {
        return Err(invalid("the name is reserved for the built-in catalog"));
    }
    Ok(())
}
