//! One catalog at runtime: its definition, its catalog budget, and its caches, built on first
//! use from its engines' definitions and its properties.
//!
//! # Invariants
//! - A cache is built at most once per catalog state: the check and the build happen under the
//!   state's write lock, and caches are found by (engine, ENTRY_NAME).
//! - A cache leaves the catalog only by being retired (ALTER of its scope, DROP): its bytes go
//!   back at once, loads in flight never store into it, and a rebuilt cache is a new instance
//!   with counters from zero. Callers keep the values they hold.
//! - After DROP every access fails with [`Error::CatalogDropped`] and the catalog budget holds
//!   nothing.

use std::any::Any;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use metacache_cache::{CacheStats, ManagedCache, MemoryGovernor, Refresher};
use metacache_engines::{
    CacheSource, EngineDef, EngineRegistry, KEY_PREFIX, ResolvedCache, Setting, resolve,
};
use metacache_estimate::EstimateSize;
use metacache_ledger::size::CATALOG_MAX_WEIGHT_KEY;
use metacache_ledger::{Budget, Level};
use parking_lot::RwLock;
use serde::{Deserialize, Serialize};

use crate::events::SourceEvents;
use crate::handle::CacheHandle;
use crate::properties::TYPE_KEY;
use crate::validate::{catalog_limit, entry_limit};
use crate::{CacheId, Error, MetaKey, Properties, Result};

/// A catalog as stored: what CREATE and ALTER CATALOG define.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogDef {
    /// Its name.
    pub name: String,
    /// `CatalogId` of SHOW CATALOGS: unique on the node, kept across RENAME.
    /// Stores written before ids existed have none (0); they are given one when loaded
    /// ([`assign_ids`]), the same one at every start.
    #[serde(default)]
    pub id: u64,
    /// `COMMENT '…'` of CREATE CATALOG.
    #[serde(default)]
    pub comment: String,
    /// Its properties, `type` included.
    pub properties: Properties,
    /// Wall-clock milliseconds of CREATE.
    #[serde(default)]
    pub created_at_millis: u64,
    /// Wall-clock milliseconds of the last CREATE or ALTER.
    #[serde(default)]
    pub updated_at_millis: u64,
}

impl CatalogDef {
    /// The `type` property, lower-cased.
    pub fn catalog_type(&self) -> String {
        self.properties
            .get(TYPE_KEY)
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase()
    }
}

/// Gives every definition without an id one: its creation time in milliseconds, or the next
/// free number after it, in name order. Deterministic for a stored set, and never one a stored
/// id holds; ids given at CREATE are above all of these (`next_id`), so a later start derives
/// the same ids again.
pub fn assign_ids(defs: &mut [CatalogDef]) {
    let mut taken: BTreeSet<u64> = defs.iter().map(|d| d.id).filter(|&id| id > 0).collect();
    for def in defs.iter_mut().filter(|d| d.id == 0) {
        let mut id = def.created_at_millis.max(1);
        while taken.contains(&id) {
            id += 1;
        }
        taken.insert(id);
        def.id = id;
    }
}

/// The id of a catalog created at `now_millis` next to catalogs with `ids`: above every one of
/// them and at least the time, so a dropped catalog's id comes back only if it was the newest
/// and another is created within the same millisecond.
pub fn next_id(ids: impl Iterator<Item = u64>, now_millis: u64) -> u64 {
    ids.max().map_or(0, |m| m + 1).max(now_millis.max(1))
}

/// Which caches an ALTER drops.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AlterScope {
    /// Every cache of the catalog.
    pub all: bool,
    /// The caches of engines configured by these `<engine>` tokens.
    pub config_engines: BTreeSet<String>,
}

impl AlterScope {
    /// Whether the ALTER drops nothing.
    pub fn is_empty(&self) -> bool {
        !self.all && self.config_engines.is_empty()
    }

    fn covers(&self, engine: &EngineDef) -> bool {
        self.all || self.config_engines.contains(engine.config_engine())
    }
}

/// One row of the statistics table, without the node column.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheRow {
    /// CATALOG_NAME.
    pub catalog: String,
    /// ENGINE_NAME.
    pub engine: String,
    /// Whether the cache has been built (an unbuilt one shows its settings and zeros).
    pub built: bool,
    /// The cache's columns.
    pub stats: CacheStats,
}

struct Built {
    engine: String,
    entry_name: String,
    /// `None`: a rule of the engine leaves this cache out for this catalog.
    handle: Option<Arc<dyn CacheHandle>>,
}

struct Group {
    engine: String,
    token: String,
    budget: Arc<Budget>,
}

/// A cache the catalog has, resolved once per definition (not per lookup or per statistics row).
struct Planned {
    engine: Arc<EngineDef>,
    cache: ResolvedCache,
    /// The entry token's `max-weight`, if set.
    entry_limit: Option<u64>,
}

struct State {
    def: CatalogDef,
    dropped: bool,
    engines: Vec<Arc<EngineDef>>,
    /// Every cache the catalog has (rule-suppressed ones excluded), in row order.
    planned: Vec<Planned>,
    built: Vec<Built>,
    groups: Vec<Group>,
    /// How the values of a cache are refreshed without a caller (`Refresher<K, V>`), by
    /// (engine, ENTRY_NAME): set on the cache when it is built, and kept for its rebuilds.
    refreshers: HashMap<(String, String), Arc<dyn Any + Send + Sync>>,
}

fn plan(engines: &[Arc<EngineDef>], properties: &Properties) -> Vec<Planned> {
    engines
        .iter()
        .flat_map(|engine| {
            resolve(engine, properties.map())
                .into_iter()
                .map(move |cache| Planned {
                    entry_limit: cache
                        .def
                        .token()
                        .and_then(|token| entry_limit(properties, engine.config_engine(), token)),
                    engine: Arc::clone(engine),
                    cache,
                })
        })
        .collect()
}

/// A catalog and its caches. Shared as `Arc<Catalog>`; ALTER changes it in place.
pub struct Catalog {
    /// Its name now: `ALTER CATALOG … RENAME` changes it in place, caches and budget kept.
    name: RwLock<Arc<str>>,
    budget: Arc<Budget>,
    governor: Arc<MemoryGovernor>,
    state: RwLock<State>,
    /// Counters of the change feed from its source, kept across ALTERs.
    events: Arc<SourceEvents>,
}

impl Catalog {
    pub(crate) fn new(
        def: CatalogDef,
        registry: &EngineRegistry,
        governor: Arc<MemoryGovernor>,
    ) -> Self {
        let budget = governor.catalog_budget(&def.name, catalog_limit(&def.properties));
        let engines = registry.for_catalog_type(&def.catalog_type());
        let planned = plan(&engines, &def.properties);
        Self {
            name: RwLock::new(Arc::from(def.name.as_str())),
            budget,
            governor,
            events: Arc::default(),
            state: RwLock::new(State {
                def,
                dropped: false,
                engines,
                planned,
                built: Vec::new(),
                groups: Vec::new(),
                refreshers: HashMap::new(),
            }),
        }
    }

    /// The counters of its change feed from the source.
    pub fn events(&self) -> &Arc<SourceEvents> {
        &self.events
    }

    /// Its name.
    pub fn name(&self) -> Arc<str> {
        Arc::clone(&self.name.read())
    }

    /// Its definition now.
    pub fn def(&self) -> CatalogDef {
        self.state.read().def.clone()
    }

    /// Its catalog budget (`used` = bytes its caches hold).
    pub fn budget(&self) -> &Arc<Budget> {
        &self.budget
    }

    /// Whether it was dropped.
    pub fn is_dropped(&self) -> bool {
        self.state.read().dropped
    }

    /// The names of its engines.
    pub fn engines(&self) -> Vec<String> {
        self.state
            .read()
            .engines
            .iter()
            .map(|e| e.name.clone())
            .collect()
    }

    /// Caches built so far (rule-suppressed ones excluded).
    pub fn built_caches(&self) -> usize {
        self.state
            .read()
            .built
            .iter()
            .filter(|b| b.handle.is_some())
            .count()
    }

    /// The cache `id`, built on first use. `Ok(None)` when a rule of the engine leaves it out
    /// for this catalog (the caller loads without caching).
    pub fn cache<K, V>(&self, id: &CacheId<K, V>) -> Result<Option<ManagedCache<K, V>>>
    where
        K: MetaKey,
        V: EstimateSize + Send + Sync + 'static,
    {
        self.cache_by_name(id.engine, id.entry_name)
    }

    /// Registers how the values of cache `id` are reloaded without a caller (refresh-ahead,
    /// §8.3): set on the cache now if it is built, and on every later build of it (after an
    /// ALTER). A source registers once, when its connector is built.
    pub fn set_refresher<K, V>(&self, id: &CacheId<K, V>, refresher: Refresher<K, V>)
    where
        K: MetaKey,
        V: EstimateSize + Send + Sync + 'static,
    {
        let mut state = self.state.write();
        if let Ok(Some(Some(cache))) = self.lookup::<K, V>(&state, id.engine, id.entry_name) {
            cache.set_refresher(Arc::clone(&refresher));
        }
        state.refreshers.insert(
            (id.engine.to_owned(), id.entry_name.to_owned()),
            Arc::new(refresher),
        );
    }

    /// The cache `id` if it has been built, without building it: for invalidations, which have
    /// nothing to remove from a cache that does not exist yet.
    pub fn built_cache<K, V>(&self, id: &CacheId<K, V>) -> Option<ManagedCache<K, V>>
    where
        K: MetaKey,
        V: EstimateSize + Send + Sync + 'static,
    {
        let state = self.state.read();
        self.lookup::<K, V>(&state, id.engine, id.entry_name)
            .ok()
            .flatten()
            .flatten()
    }

    /// [`Catalog::cache`] by run-time names (look-aside caches of remote engines).
    pub fn cache_by_name<K, V>(
        &self,
        engine: &str,
        entry_name: &str,
    ) -> Result<Option<ManagedCache<K, V>>>
    where
        K: MetaKey,
        V: EstimateSize + Send + Sync + 'static,
    {
        {
            let state = self.state.read();
            if let Some(found) = self.lookup::<K, V>(&state, engine, entry_name)? {
                return Ok(found);
            }
        }
        let mut state = self.state.write();
        if let Some(found) = self.lookup::<K, V>(&state, engine, entry_name)? {
            return Ok(found);
        }
        let unknown = || Error::UnknownCache {
            catalog: self.name().to_string(),
            engine: engine.to_owned(),
            entry_name: entry_name.to_owned(),
        };
        let engine_def = state
            .engines
            .iter()
            .find(|e| e.name == engine)
            .cloned()
            .ok_or_else(unknown)?;
        engine_def.cache(entry_name).ok_or_else(unknown)?;
        let resolved = state
            .planned
            .iter()
            .find(|p| p.engine.name == engine && p.cache.def.entry_name == entry_name)
            .map(|p| (p.cache.clone(), p.entry_limit));
        let Some((resolved, limit)) = resolved else {
            state.built.push(Built {
                engine: engine.to_owned(),
                entry_name: entry_name.to_owned(),
                handle: None,
            });
            return Ok(None);
        };
        let parent = self.parent_budget(&mut state, &engine_def, &resolved, limit);
        let cache = ManagedCache::<K, V>::new(resolved.config, &self.governor, &parent);
        let refresher = state
            .refreshers
            .get(&(engine.to_owned(), entry_name.to_owned()))
            .and_then(|r| r.downcast_ref::<Refresher<K, V>>());
        if let Some(refresher) = refresher {
            cache.set_refresher(Arc::clone(refresher));
        }
        state.built.push(Built {
            engine: engine.to_owned(),
            entry_name: entry_name.to_owned(),
            handle: Some(Arc::new(cache.clone())),
        });
        Ok(Some(cache))
    }

    /// Finds a built cache: `Ok(Some(_))` when built (or suppressed), `Ok(None)` when not yet.
    #[allow(clippy::type_complexity)]
    fn lookup<K, V>(
        &self,
        state: &State,
        engine: &str,
        entry_name: &str,
    ) -> Result<Option<Option<ManagedCache<K, V>>>>
    where
        K: MetaKey,
        V: EstimateSize + Send + Sync + 'static,
    {
        if state.dropped {
            return Err(Error::CatalogDropped {
                name: self.name().to_string(),
            });
        }
        let Some(built) = state
            .built
            .iter()
            .find(|b| b.engine == engine && b.entry_name == entry_name)
        else {
            return Ok(None);
        };
        let Some(handle) = &built.handle else {
            return Ok(Some(None));
        };
        match handle.as_any().downcast_ref::<ManagedCache<K, V>>() {
            Some(cache) => Ok(Some(Some(cache.clone()))),
            None => Err(Error::CacheType {
                engine: engine.to_owned(),
                entry_name: entry_name.to_owned(),
            }),
        }
    }

    /// The budget a new cache hangs under: its entry token's group budget (created with the
    /// token's `max-weight`), or the catalog budget for token-less caches.
    fn parent_budget(
        &self,
        state: &mut State,
        engine: &EngineDef,
        resolved: &ResolvedCache,
        limit: Option<u64>,
    ) -> Arc<Budget> {
        let Some(token) = resolved.def.token() else {
            return Arc::clone(&self.budget);
        };
        if let Some(group) = state
            .groups
            .iter()
            .find(|g| g.engine == engine.name && g.token == token)
        {
            return Arc::clone(&group.budget);
        }
        let name = format!("{}.{token}", engine.name);
        let budget = self.budget.child(Level::EntryGroup, &name, limit);
        state.groups.push(Group {
            engine: engine.name.clone(),
            token: token.to_owned(),
            budget: Arc::clone(&budget),
        });
        budget
    }

    /// One row per cache the catalog has or would build, in engine then declaration order.
    pub fn cache_rows(&self) -> Vec<CacheRow> {
        self.rows(false)
    }

    /// The rows of the caches that exist (built, so holding counters and bytes): what
    /// `/metrics` exports, without the idle settings of the others.
    pub fn built_cache_rows(&self) -> Vec<CacheRow> {
        self.rows(true)
    }

    fn rows(&self, built_only: bool) -> Vec<CacheRow> {
        let state = self.state.read();
        if state.dropped {
            return Vec::new();
        }
        let mut rows = Vec::with_capacity(state.planned.len());
        let catalog = self.name().to_string();
        for planned in &state.planned {
            let (engine, entry_name) = (&planned.engine.name, &planned.cache.def.entry_name);
            let built = state
                .built
                .iter()
                .find(|b| &b.engine == engine && &b.entry_name == entry_name);
            let stats = match built.and_then(|b| b.handle.as_ref()) {
                Some(handle) => handle.stats(),
                None if built_only => continue,
                None => CacheStats::idle(&planned.cache.config, self.idle_max_weight(planned)),
            };
            rows.push(CacheRow {
                catalog: catalog.clone(),
                engine: engine.clone(),
                built: built.is_some(),
                stats,
            });
        }
        rows
    }

    /// The caches built now, each with its engine, its ENTRY_NAME and the property that sets
    /// its byte limit (its entry's `max-weight` when the entry takes one, else the catalog's).
    pub(crate) fn built_handles(&self) -> Vec<(String, String, String, Arc<dyn CacheHandle>)> {
        let state = self.state.read();
        if state.dropped {
            return Vec::new();
        }
        let mut caches = Vec::new();
        for planned in &state.planned {
            let (engine, entry_name) = (&planned.engine.name, &planned.cache.def.entry_name);
            let handle = state
                .built
                .iter()
                .find(|b| &b.engine == engine && &b.entry_name == entry_name)
                .and_then(|b| b.handle.clone());
            let Some(handle) = handle else { continue };
            let property = match &planned.cache.def.source {
                CacheSource::Entry(token) if planned.engine.accepts(token, Setting::MaxWeight) => {
                    format!(
                        "{KEY_PREFIX}{}.{token}.{}",
                        planned.engine.config_engine(),
                        Setting::MaxWeight.suffix()
                    )
                }
                _ => CATALOG_MAX_WEIGHT_KEY.to_string(),
            };
            caches.push((engine.clone(), entry_name.clone(), property, handle));
        }
        caches
    }

    /// MAX_WEIGHT of a cache not built yet: the smallest limit that would apply.
    fn idle_max_weight(&self, planned: &Planned) -> i64 {
        let limit = [planned.entry_limit, self.budget.effective_limit()]
            .into_iter()
            .flatten()
            .min();
        limit.map_or(-1, |l| i64::try_from(l).unwrap_or(i64::MAX))
    }

    /// REFRESH CATALOG: every value of every cache goes; loads in flight do not store.
    pub fn refresh(&self) -> u64 {
        self.each_handle(|h| h.invalidate_all())
    }

    /// REFRESH DATABASE: the values of `database`.
    pub fn refresh_database(&self, database: &str) -> u64 {
        self.each_handle(|h| h.invalidate_database(database))
    }

    /// REFRESH TABLE: the values of `database.table`.
    pub fn refresh_table(&self, database: &str, table: &str) -> u64 {
        self.each_handle(|h| h.invalidate_table(database, table))
    }

    /// Removes the value of text key `key` from cache (`engine`, `entry_name`), if that cache
    /// is built (a look-aside DELETE made on another node of a cluster).
    pub fn invalidate_key(&self, engine: &str, entry_name: &str, key: &str) -> bool {
        let state = self.state.read();
        state
            .built
            .iter()
            .filter(|b| b.engine == engine && b.entry_name == entry_name)
            .filter_map(|b| b.handle.as_deref())
            .any(|h| h.invalidate_text(key))
    }

    fn each_handle(&self, f: impl Fn(&dyn CacheHandle) -> u64) -> u64 {
        let state = self.state.read();
        state
            .built
            .iter()
            .filter_map(|b| b.handle.as_deref())
            .map(f)
            .sum()
    }

    /// Applies an ALTER: retires the caches in `scope`, takes the new definition and limits.
    pub(crate) fn apply_alter(&self, def: CatalogDef, scope: &AlterScope) {
        let mut state = self.state.write();
        let engines = state.engines.clone();
        let covered = |name: &str| engines.iter().any(|e| e.name == name && scope.covers(e));
        state.built.retain(|b| {
            if !covered(&b.engine) {
                return true;
            }
            if let Some(handle) = &b.handle {
                handle.retire();
            }
            false
        });
        state.groups.retain(|g| !covered(&g.engine));
        self.budget.set_limit(catalog_limit(&def.properties));
        state.planned = plan(&state.engines, &def.properties);
        state.def = def;
    }

    /// Applies a RENAME: the same caches, budget and counters under the name `def` carries.
    pub(crate) fn apply_rename(&self, def: CatalogDef) {
        let mut state = self.state.write();
        *self.name.write() = Arc::from(def.name.as_str());
        state.def = def;
    }

    /// Applies a new COMMENT: nothing cached changes.
    pub(crate) fn apply_comment(&self, def: CatalogDef) {
        self.state.write().def = def;
    }

    /// Applies a DROP: retires every cache; the catalog budget ends empty.
    pub(crate) fn apply_drop(&self) {
        let mut state = self.state.write();
        state.dropped = true;
        for built in state.built.drain(..) {
            if let Some(handle) = built.handle {
                handle.retire();
            }
        }
        state.groups.clear();
    }

    /// Re-reads the engine `name` from `registry` (a remote engine was redefined or removed):
    /// its caches are retired and rebuilt from the new definition on next use.
    pub(crate) fn reload_engines(&self, registry: &EngineRegistry, name: &str) {
        let mut state = self.state.write();
        let engines = registry.for_catalog_type(&state.def.catalog_type());
        state.built.retain(|b| {
            if b.engine != name {
                return true;
            }
            if let Some(handle) = &b.handle {
                handle.retire();
            }
            false
        });
        state.groups.retain(|g| g.engine != name);
        state.planned = plan(&engines, &state.def.properties);
        state.engines = engines;
    }
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("name", &self.name())
            .field("def", &self.state.read().def)
            .finish_non_exhaustive()
    }
}
