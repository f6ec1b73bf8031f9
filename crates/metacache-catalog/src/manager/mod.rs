//! The catalog manager: the node's catalogs, the statements that change them, and the node
//! configuration that changes at runtime.
//!
//! # Invariants
//! - Statements run one at a time (the `ddl` lock): validate, commit to the store, then change
//!   memory. A statement that fails validation or whose commit fails changes nothing.
//! - What the store holds is what the node serves: every acknowledged statement is durable
//!   before it is acknowledged.
//! - The methods block on the store's disk writes; async callers use `spawn_blocking`.

use std::collections::BTreeMap;
use std::sync::Arc;

use metacache_cache::scope::Scopes;
use metacache_cache::{Clock, GovernorOptions, MemoryGovernor};
use metacache_engines::{EngineDef, EngineRegistry};
use metacache_ledger::size::NodeWeight;
use parking_lot::{Mutex, RwLock};

use crate::catalog::{AlterScope, CacheRow, Catalog};
use crate::memory::{MemorySource, NodeMemory};
use crate::node_config::{EXTERNAL_META_CACHE_MAX_WEIGHT, KEYS, NodeConfig, config_key, like};
use crate::store::{CatalogStore, Change};

mod ahead;
mod ddl;
mod replica;

pub use ahead::ADVICE_AHEAD_MAX_AGE;

use crate::validate::{self, Warning};
use crate::{Error, Properties, Result};
pub use replica::Applied;

/// Names no catalog may take.
pub const RESERVED_NAMES: [&str; 1] = ["internal"];
/// Longest catalog name.
pub const MAX_NAME_LEN: usize = 64;
/// The legacy key whose change drops every cache of a catalog (§6).
const SCHEMA_TTL_LEGACY_KEY: &str = "schema.cache.ttl-second";

/// What the manager is built from.
pub struct ManagerOptions {
    /// The engines.
    pub registry: Arc<EngineRegistry>,
    /// Where catalogs are kept.
    pub store: Arc<dyn CatalogStore>,
    /// The node configuration at start.
    pub config: NodeConfig,
    /// Time for the caches (a manual clock in tests).
    pub clock: Clock,
    /// The node memory budget; detected when `None` (and `detect_memory`) unless the
    /// configuration sets `node_memory_budget`.
    pub node_memory: Option<NodeMemory>,
    /// Whether to detect the node memory when `node_memory` is `None` (tests turn it off to
    /// see the behaviour of a platform where detection fails).
    pub detect_memory: bool,
}

impl ManagerOptions {
    /// Built-in engines, default configuration, system clock, detected memory.
    pub fn new(store: Arc<dyn CatalogStore>) -> Self {
        Self {
            registry: Arc::new(EngineRegistry::builtin()),
            store,
            config: NodeConfig::default(),
            clock: Clock::System,
            node_memory: None,
            detect_memory: true,
        }
    }
}

/// CREATE CATALOG.
#[derive(Debug, Clone, Default)]
pub struct CreateCatalog {
    /// The name.
    pub name: String,
    /// `IF NOT EXISTS`.
    pub if_not_exists: bool,
    /// `COMMENT '…'`.
    pub comment: String,
    /// `PROPERTIES (…)`.
    pub properties: Properties,
}

/// What a statement did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Whether anything changed (`false` for IF [NOT] EXISTS that found nothing to do).
    pub changed: bool,
    /// The caches an ALTER dropped.
    pub dropped: AlterScope,
    /// Problems that were tolerated (properties of unknown engines).
    pub warnings: Vec<Warning>,
}

/// One row of `ADMIN SHOW FRONTEND CONFIG`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigRow {
    /// Key.
    pub key: String,
    /// Value.
    pub value: String,
    /// Type.
    pub value_type: String,
    /// IsMutable.
    pub mutable: bool,
    /// Comment.
    pub comment: String,
}

struct NodeState {
    config: NodeConfig,
    memory: Option<NodeMemory>,
}

impl NodeState {
    fn memory(&self) -> Option<NodeMemory> {
        match self.config.node_memory_budget {
            Some(bytes) => Some(NodeMemory {
                bytes,
                source: MemorySource::Configured,
            }),
            None => self.memory,
        }
    }

    /// The node limit in bytes (`None`: no node quota).
    fn limit(&self) -> Result<Option<u64>> {
        let weight = &self.config.external_meta_cache_max_weight;
        match (weight, self.memory()) {
            (NodeWeight::Percent(_), None) => Err(Error::NodeMemoryUnknown {
                key: EXTERNAL_META_CACHE_MAX_WEIGHT.to_owned(),
                value: weight.to_string(),
            }),
            (weight, memory) => Ok(weight.resolve(memory.map_or(0, |m| m.bytes))),
        }
    }
}

/// The node's catalogs.
pub struct CatalogManager {
    registry: Arc<EngineRegistry>,
    store: Arc<dyn CatalogStore>,
    governor: Arc<MemoryGovernor>,
    /// The node's scan scopes (§8.2).
    scopes: Arc<Scopes>,
    /// The node's disk tier (§8.4), when configured.
    disk: crate::disk::NodeDisk,
    /// The last hour of every cache's counters (the dashboard, `catalog_meta_cache_history`).
    history: crate::history::History,
    catalogs: RwLock<BTreeMap<String, Arc<Catalog>>>,
    node: Mutex<NodeState>,
    /// Serialises statements: validate → commit → apply.
    ddl: Mutex<()>,
    /// Problems found in the store at open, for the log and the admin.
    load_warnings: Vec<String>,
    /// The advisor's rows `/metrics` reads, built ahead ([`ahead`]).
    ahead: ahead::Ahead,
}

impl CatalogManager {
    /// Opens the manager: resolves the node limit, loads engines and catalogs from the store.
    /// Stored catalogs with problems still come up (the problems are logged and kept in
    /// [`CatalogManager::load_warnings`]); only an unreadable store is an error.
    pub fn open(options: ManagerOptions) -> Result<Self> {
        let memory = match options.node_memory {
            Some(memory) => Some(memory),
            None if options.detect_memory => crate::memory::detect(),
            None => None,
        };
        let node = NodeState {
            config: options.config,
            memory,
        };
        let limit = node.limit()?;
        let governor = Arc::new(MemoryGovernor::with_options(GovernorOptions {
            node_limit: limit,
            clock: options.clock,
            ..GovernorOptions::default()
        }));
        apply_to_governor(&governor, &node.config);
        let scopes = Arc::new(Scopes::new(governor.clock().clone()));
        apply_scope_limits(&scopes, &node.config);
        let disk = crate::disk::NodeDisk::default();
        disk.apply(&node.config);
        let stored = options.store.load()?;
        let mut load_warnings = Vec::new();
        for engine in stored.engines {
            let name = engine.name.clone();
            if let Err(error) = options.registry.register(engine) {
                load_warnings.push(format!("engine '{name}': {error} (definition ignored)"));
            }
        }
        let mut catalogs = BTreeMap::new();
        let mut defs = stored.catalogs;
        crate::catalog::assign_ids(&mut defs);
        for def in defs {
            for warning in validate::check_stored(&options.registry, &def.properties) {
                load_warnings.push(format!("catalog '{}': {warning}", def.name));
            }
            if let Err(error) = validate::catalog_type(&options.registry, &def.properties) {
                load_warnings.push(format!(
                    "catalog '{}': {error}; only its schema cache is available",
                    def.name
                ));
            }
            let catalog = Catalog::new(def, &options.registry, Arc::clone(&governor));
            catalogs.insert(catalog.name().to_string(), Arc::new(catalog));
        }
        for warning in &load_warnings {
            tracing::warn!("{warning}");
        }
        tracing::info!(
            store = %options.store.describe(),
            catalogs = catalogs.len(),
            node_limit = ?limit,
            "catalogs loaded"
        );
        Ok(Self {
            registry: options.registry,
            store: options.store,
            governor,
            scopes,
            disk,
            history: crate::history::History::default(),
            catalogs: RwLock::new(catalogs),
            node: Mutex::new(node),
            ddl: Mutex::new(()),
            load_warnings,
            ahead: ahead::Ahead::default(),
        })
    }

    /// Problems found in the store when it was opened.
    pub fn load_warnings(&self) -> &[String] {
        &self.load_warnings
    }

    /// The engines.
    pub fn registry(&self) -> &Arc<EngineRegistry> {
        &self.registry
    }

    /// The node's scan scopes (§8.2).
    pub fn scopes(&self) -> &Arc<Scopes> {
        &self.scopes
    }

    /// The last hour of every cache's counters; [`CatalogManager::sample_history`] adds to it.
    pub fn history(&self) -> &crate::history::History {
        &self.history
    }

    /// Takes a sample of every built cache's counters for the history (the server does, every
    /// `external_meta_cache_history_interval_seconds`).
    pub fn sample_history(&self, now_millis: u64) {
        self.history.sample(&self.built_cache_rows(), now_millis);
    }

    /// The node's disk tier (§8.4); `None` without one.
    pub fn disk(&self) -> Option<metacache_disk::DiskTier> {
        self.disk.opened()
    }

    /// The disk tier's statistics, when one is configured.
    pub fn disk_stats(&self) -> Option<metacache_disk::DiskStats> {
        self.disk().map(|t| t.stats())
    }

    /// Fences `catalog`'s blocks on the disk tier (REFRESH, DROP; also when replicated).
    pub(crate) fn fence_disk(&self, catalog: &str) {
        self.disk.fence(catalog);
    }

    /// The memory governor of this node's caches.
    pub fn governor(&self) -> &Arc<MemoryGovernor> {
        &self.governor
    }

    /// Where catalogs are stored.
    pub fn store_description(&self) -> String {
        self.store.describe()
    }

    /// The catalog `name`.
    pub fn catalog(&self, name: &str) -> Result<Arc<Catalog>> {
        self.catalogs
            .read()
            .get(name)
            .cloned()
            .ok_or_else(|| Error::UnknownCatalog {
                name: name.to_owned(),
            })
    }

    /// Every catalog, by name.
    pub fn catalogs(&self) -> Vec<Arc<Catalog>> {
        self.catalogs.read().values().cloned().collect()
    }

    /// Every row of the statistics table on this node (without FE_HOST).
    pub fn cache_rows(&self) -> Vec<CacheRow> {
        self.catalogs()
            .iter()
            .flat_map(|c| c.cache_rows())
            .collect()
    }

    /// The quota advisor's rows of every catalog on this node (see [`Catalog::advice_rows`]).
    pub fn advice_rows(&self) -> Vec<crate::AdviceRow> {
        self.catalogs()
            .iter()
            .flat_map(|c| c.advice_rows())
            .collect()
    }

    /// The rows of the caches that exist on this node (see [`Catalog::built_cache_rows`]).
    pub fn built_cache_rows(&self) -> Vec<CacheRow> {
        self.catalogs()
            .iter()
            .flat_map(|c| c.built_cache_rows())
            .collect()
    }

    /// REFRESH CATALOG: returns how many values were removed (on this node; a shared store
    /// carries the refresh to every node).
    pub fn refresh_catalog(&self, name: &str) -> Result<u64> {
        let catalog = self.catalog(name)?;
        self.publish_refresh(name, None, None)?;
        self.fence_disk(name);
        Ok(catalog.refresh())
    }

    /// REFRESH DATABASE.
    pub fn refresh_database(&self, catalog: &str, database: &str) -> Result<u64> {
        let handle = self.catalog(catalog)?;
        self.publish_refresh(catalog, Some(database), None)?;
        self.fence_disk(catalog);
        Ok(handle.refresh_database(database))
    }

    /// REFRESH TABLE.
    pub fn refresh_table(&self, catalog: &str, database: &str, table: &str) -> Result<u64> {
        let handle = self.catalog(catalog)?;
        self.publish_refresh(catalog, Some(database), Some(table))?;
        self.fence_disk(catalog);
        Ok(handle.refresh_table(database, table))
    }

    /// A look-aside `DELETE` of `key` in cache (`engine`, `entry`) of `catalog`, handed to the
    /// store first (the other nodes of a cluster remove it too); then `remove` removes it here.
    pub fn publish_invalidation<T>(
        &self,
        catalog: &str,
        engine: &str,
        entry: &str,
        key: &str,
        remove: impl FnOnce() -> T,
    ) -> Result<T> {
        self.store
            .commit(&Change::InvalidateKey {
                catalog: catalog.to_owned(),
                engine: engine.to_owned(),
                entry: entry.to_owned(),
                key: key.to_owned(),
            })
            .map_err(Error::from_store)?;
        Ok(remove())
    }

    /// Hands a refresh to the store (a no-op for a node's own store).
    fn publish_refresh(
        &self,
        catalog: &str,
        database: Option<&str>,
        table: Option<&str>,
    ) -> Result<()> {
        self.store
            .commit(&Change::Refresh {
                catalog: catalog.to_owned(),
                database: database.map(str::to_owned),
                table: table.map(str::to_owned),
            })
            .map_err(Error::from_store)
    }

    /// Defines or redefines a remote engine (stored like catalogs); catalogs of its types
    /// rebuild its caches from the new definition.
    pub fn define_engine(&self, engine: EngineDef) -> Result<Arc<EngineDef>> {
        let _ddl = self.ddl.lock();
        if self.registry.is_builtin(&engine.name) {
            return Err(metacache_engines::Error::BuiltinEngine {
                engine: engine.name,
            }
            .into());
        }
        metacache_engines::registry::validate(&engine)?;
        self.store
            .commit(&Change::PutEngine(engine.clone()))
            .map_err(Error::from_store)?;
        let engine = self.registry.register(engine)?;
        for catalog in self.catalogs() {
            catalog.reload_engines(&self.registry, &engine.name);
        }
        Ok(engine)
    }

    /// Removes a remote engine; returns whether it existed.
    pub fn remove_engine(&self, name: &str) -> Result<bool> {
        let _ddl = self.ddl.lock();
        if self.registry.is_builtin(name) {
            return Err(metacache_engines::Error::BuiltinEngine {
                engine: name.to_owned(),
            }
            .into());
        }
        if self.registry.get(name).is_none() {
            return Ok(false);
        }
        self.store
            .commit(&Change::DeleteEngine(name.to_owned()))
            .map_err(Error::from_store)?;
        self.registry.unregister(name)?;
        for catalog in self.catalogs() {
            catalog.reload_engines(&self.registry, name);
        }
        Ok(true)
    }

    /// ADMIN SET FRONTEND CONFIG: changes a mutable key now. Lowering the node limit reclaims
    /// before this returns. Returns the rows of the key after the change.
    pub fn set_config(&self, key: &str, value: &str) -> Result<Vec<ConfigRow>> {
        let key = key.trim().to_ascii_lowercase();
        let def = config_key(&key)?;
        if !def.mutable {
            return Err(Error::ConfigNotMutable { key });
        }
        {
            let mut node = self.node.lock();
            let mut next = NodeState {
                config: node.config.clone(),
                memory: node.memory,
            };
            next.config.set(&key, value)?;
            let limit = next.limit()?;
            *node = next;
            self.governor.set_node_limit(limit);
            apply_to_governor(&self.governor, &node.config);
            apply_scope_limits(&self.scopes, &node.config);
            tracing::info!(key = %key, value, limit = ?limit, "frontend config changed");
        }
        self.governor.reclaim_now();
        self.disk.apply(&self.node_config());
        Ok(self.show_config(Some(&format!("{key}%"))))
    }

    /// The node configuration as it is now.
    pub fn node_config(&self) -> NodeConfig {
        self.node.lock().config.clone()
    }

    /// `external_meta_cache_history_interval_seconds` as it is now (it changes at runtime).
    pub fn history_interval_seconds(&self) -> u64 {
        self.node
            .lock()
            .config
            .external_meta_cache_history_interval_seconds
    }

    /// `metrics_cache_labels` as it is now (it changes at runtime).
    pub fn metrics_cache_labels(&self) -> String {
        self.node.lock().config.metrics_cache_labels.clone()
    }

    /// `external_meta_cache_lease_timeout_ms` as it is now (it changes at runtime).
    pub fn lease_timeout(&self) -> std::time::Duration {
        lease_timeout(&self.node.lock().config)
    }

    /// `query_timeout_seconds` as it is now (it changes at runtime).
    pub fn query_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.node.lock().config.query_timeout_seconds)
    }

    /// The node memory budget percentages refer to, and where it came from; `None` when it is
    /// neither configured nor detectable.
    pub fn node_memory(&self) -> Option<NodeMemory> {
        self.node.lock().memory()
    }

    /// ADMIN SHOW FRONTEND CONFIG [LIKE pattern]: every key, plus the resolved
    /// `node_memory_budget_bytes` and `external_meta_cache_max_weight_bytes`.
    pub fn show_config(&self, pattern: Option<&str>) -> Vec<ConfigRow> {
        let node = self.node.lock();
        let mut rows: Vec<ConfigRow> = KEYS
            .iter()
            .map(|k| ConfigRow {
                key: k.key.to_owned(),
                value: match node.config.get(k.key).unwrap_or_default() {
                    v if k.secret && !v.is_empty() => crate::MASK.to_owned(),
                    v => v,
                },
                value_type: k.value_type.to_owned(),
                mutable: k.mutable,
                comment: k.comment.to_owned(),
            })
            .collect();
        let memory = node.memory();
        rows.push(ConfigRow {
            key: "node_memory_budget_bytes".to_owned(),
            value: memory.map_or_else(|| "unknown".to_owned(), |m| m.bytes.to_string()),
            value_type: "bytes".to_owned(),
            mutable: false,
            comment: memory.map_or_else(
                || "could not be determined".to_owned(),
                |m| format!("resolved from the {}", m.source),
            ),
        });
        rows.push(ConfigRow {
            key: "external_meta_cache_max_weight_bytes".to_owned(),
            value: self.governor.node().limit().unwrap_or(0).to_string(),
            value_type: "bytes".to_owned(),
            mutable: false,
            comment: "the node limit in effect, in bytes; 0 means no node quota".to_owned(),
        });
        rows.retain(|row| pattern.is_none_or(|p| like(p, &row.key)));
        rows
    }
}

/// `external_meta_cache_refresh_max_concurrency` as the limiter takes it.
fn refresh_bound(config: &NodeConfig) -> usize {
    usize::try_from(config.external_meta_cache_refresh_max_concurrency).unwrap_or(usize::MAX)
}

/// The node keys the governor applies to every cache: the bound on background refreshes, the
/// lease timeout, the quota advisors' half-life.
fn apply_to_governor(governor: &MemoryGovernor, config: &NodeConfig) {
    governor.refresh_limiter().set_max(refresh_bound(config));
    governor.set_lease_timeout(lease_timeout(config));
    governor.set_advisor_half_life(std::time::Duration::from_secs(
        config.external_meta_cache_advisor_half_life_seconds,
    ));
}

/// `external_meta_cache_scope_max_count`, `external_meta_cache_scope_max_entries`, and the lease
/// timeout as the longest wait for a scope's refresh.
fn apply_scope_limits(scopes: &Scopes, config: &NodeConfig) {
    scopes.set_limits(
        usize::try_from(config.external_meta_cache_scope_max_count).unwrap_or(usize::MAX),
        usize::try_from(config.external_meta_cache_scope_max_entries).unwrap_or(usize::MAX),
        lease_timeout(config),
    );
}

/// `external_meta_cache_lease_timeout_ms` as a duration.
fn lease_timeout(config: &NodeConfig) -> std::time::Duration {
    std::time::Duration::from_millis(config.external_meta_cache_lease_timeout_ms)
}
