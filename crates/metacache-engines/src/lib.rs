//! Engine cache definitions: what each engine caches, under which ENTRY_NAMEs, with which
//! defaults, and how a catalog's properties configure it.
//!
//! # Components
//! - [`EngineDef`] and its parts ([`EntryDef`], [`CacheDef`], [`LegacyKey`], [`Rule`]): an
//!   engine's declaration. Built-in engines live in [`builtin`], one module each.
//! - [`EngineRegistry`]: the engines of a node, built-in and runtime-defined.
//! - [`keys`]: the grammar of `meta.cache.<engine>.<entry>.<setting>`.
//! - [`settings`]: from properties to each cache's [`CacheConfig`](metacache_cache::CacheConfig):
//!   unified key, else legacy key, else default.
//!
//! # Invariants
//! - A registered definition is valid ([`registry::validate`]): unique tokens and ENTRY_NAMEs,
//!   every reference resolves, no TTL cycle.
//! - Caches that share an entry token share one entry budget (the catalog layer builds it).

pub mod builtin;
mod def;
mod error;
pub mod keys;
pub mod registry;
pub mod settings;

pub use def::{
    ANY_CATALOG_TYPE, CacheDef, CacheSource, DEFAULT_ENGINE, EngineDef, EntryDef, EntryDefaults,
    LegacyKey, PropertyMap, Rule, Setting, TtlDefault,
};
pub use error::{Error, Result};
pub use keys::{EntryKey, KEY_PREFIX, entry_key};
pub use registry::EngineRegistry;
pub use settings::{ResolvedCache, parse_count, parse_enable, resolve};
