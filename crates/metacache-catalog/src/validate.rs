//! Validation of catalog properties (§4, §6).
//!
//! A statement is checked in two steps: every submitted key on its own (strictly: unknown
//! `meta.cache.*` keys of known engines are refused), then the merged result as a whole (no
//! entry limit above the catalog limit). Properties read back from the store are checked the
//! same way but nothing is refused: problems become warnings and the value is ignored, so a
//! catalog written by another version still comes up.

use metacache_engines::{EngineRegistry, EntryKey, KEY_PREFIX, Setting, parse_count, parse_enable};
use metacache_ledger::WeightError;
use metacache_ledger::size::{
    CATALOG_MAX_WEIGHT_KEY, check_entry_within_catalog, parse_positive_weight,
};

use crate::events::{HMS_EVENTS_POLLING_INTERVAL_KEY, parse_polling_interval};
use crate::properties::TYPE_KEY;
use crate::{Error, Properties, Result};

/// A problem that was tolerated, for the log and the statement's warnings.
pub type Warning = String;

/// The catalog `type` of `properties`, lower-cased, checked against the registry.
pub fn catalog_type(registry: &EngineRegistry, properties: &Properties) -> Result<String> {
    let known = || {
        registry
            .catalog_types()
            .into_iter()
            .collect::<Vec<_>>()
            .join(", ")
    };
    let given = properties
        .get(TYPE_KEY)
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .ok_or_else(|| Error::MissingType { known: known() })?;
    if registry.catalog_types().contains(&given) {
        Ok(given)
    } else {
        Err(Error::UnknownType {
            catalog_type: given,
            known: known(),
        })
    }
}

/// Checks the properties a CREATE or ALTER statement submits, and the catalog's properties
/// after the statement (`merged`), for a catalog of `catalog_type`. Returns tolerated problems
/// (keys of unknown engines; on a type with no engine of its own, unknown entries of the
/// `default` engine, which Doris accepts there).
pub fn check_statement(
    registry: &EngineRegistry,
    catalog_type: &str,
    submitted: &Properties,
    merged: &Properties,
) -> Result<Vec<Warning>> {
    submitted.check_text()?;
    let lenient = only_default_engine(registry, catalog_type);
    let mut warnings = Vec::new();
    for key in submitted.keys() {
        let value = submitted.get(key).unwrap_or_default();
        if let Some(warning) = check_key(registry, key, value, lenient)? {
            warnings.push(warning);
        }
    }
    check_entry_limits(merged, Some(submitted))?;
    Ok(warnings)
}

/// Checks properties read from the store: never fails; every problem is a warning and the
/// value concerned is ignored by resolution.
pub fn check_stored(registry: &EngineRegistry, properties: &Properties) -> Vec<Warning> {
    let mut warnings = Vec::new();
    for key in properties.keys() {
        let value = properties.get(key).unwrap_or_default();
        match check_key(registry, key, value, false) {
            Ok(Some(warning)) => warnings.push(warning),
            Ok(None) => {}
            Err(error) => warnings.push(format!("{error} (stored property ignored)")),
        }
    }
    if let Err(error) = check_entry_limits(properties, None) {
        warnings.push(format!("{error} (stored property kept)"));
    }
    warnings
}

/// The catalog limit `meta.cache.max-weight`, if set to a valid value.
pub fn catalog_limit(properties: &Properties) -> Option<u64> {
    let value = properties.get(CATALOG_MAX_WEIGHT_KEY)?;
    parse_positive_weight(CATALOG_MAX_WEIGHT_KEY, value).ok()
}

/// The entry limit `meta.cache.<config_engine>.<token>.max-weight`, if set to a valid value.
pub fn entry_limit(properties: &Properties, config_engine: &str, token: &str) -> Option<u64> {
    let key = metacache_engines::entry_key(config_engine, token, Setting::MaxWeight);
    parse_positive_weight(&key, properties.get(&key)?).ok()
}

/// No entry limit above the catalog limit. With `submitted`, only pairs the statement touches
/// are checked, so a stored inconsistency (written by another version) does not block
/// unrelated statements.
fn check_entry_limits(properties: &Properties, submitted: Option<&Properties>) -> Result<()> {
    let catalog = catalog_limit(properties);
    let touched = |key: &str| {
        submitted.is_none_or(|s| s.get(key).is_some() || s.get(CATALOG_MAX_WEIGHT_KEY).is_some())
    };
    for key in properties.keys() {
        let is_weight =
            EntryKey::parse(key).is_some_and(|k| k.setting() == Some(Setting::MaxWeight));
        if !is_weight || !touched(key) {
            continue;
        }
        if let Ok(entry) = parse_positive_weight(key, properties.get(key).unwrap_or_default()) {
            check_entry_within_catalog(key, entry, catalog)?;
        }
    }
    Ok(())
}

/// Whether catalogs of `catalog_type` have the engine-independent caches only (Doris's `es`,
/// `trino-connector`, `lakesoul`).
fn only_default_engine(registry: &EngineRegistry, catalog_type: &str) -> bool {
    registry
        .for_catalog_type(catalog_type)
        .iter()
        .all(|e| e.name == metacache_engines::DEFAULT_ENGINE)
}

/// Checks one key on its own. `Ok(Some(_))` is a tolerated problem. `lenient`: an unknown
/// entry of the `default` engine is tolerated (see [`check_statement`]).
fn check_key(
    registry: &EngineRegistry,
    key: &str,
    value: &str,
    lenient: bool,
) -> Result<Option<Warning>> {
    if key == CATALOG_MAX_WEIGHT_KEY {
        parse_positive_weight(key, value)?;
        return Ok(None);
    }
    if key == HMS_EVENTS_POLLING_INTERVAL_KEY {
        parse_polling_interval(key, value)?;
        return Ok(None);
    }
    if crate::scopes::check(key, value)? {
        return Ok(None);
    }
    if key == crate::disk::DISK_ENABLE {
        parse_enable(key, value)?;
        return Ok(None);
    }
    if let Some(rest) = key.strip_prefix(KEY_PREFIX) {
        return match EntryKey::parse(key) {
            Some(entry_key)
                if lenient
                    && entry_key.engine == metacache_engines::DEFAULT_ENGINE
                    && !registry
                        .configured_by(entry_key.engine)
                        .iter()
                        .any(|e| e.entry(entry_key.entry).is_some()) =>
            {
                Ok(Some(format!(
                    "{key}: the default engine has no entry '{}'; the property is kept but has no effect",
                    entry_key.entry
                )))
            }
            Some(entry_key) => check_entry_key(registry, key, entry_key, value),
            None => Err(malformed(registry, key, rest)),
        };
    }
    let is_legacy = registry
        .all()
        .iter()
        .any(|e| e.legacy.iter().any(|l| l.key == key));
    if is_legacy {
        parse_count(key, value)?;
    }
    Ok(None)
}

/// A `meta.cache.` key that is not `meta.cache.<engine>.<entry>.<setting>`.
fn malformed(registry: &EngineRegistry, key: &str, rest: &str) -> Error {
    let engine = rest.split('.').next().unwrap_or_default();
    let known_engine = !registry.configured_by(engine).is_empty();
    if known_engine && key.ends_with(".max-weight") {
        return WeightError::UnknownProperty {
            key: key.to_owned(),
        }
        .into();
    }
    Error::UnknownProperty {
        key: key.to_owned(),
        hint: "; cache keys are meta.cache.max-weight and meta.cache.<engine>.<entry>.{enable,ttl-second,capacity,max-weight,auto-refresh,advisor}".to_owned(),
    }
}

fn check_entry_key(
    registry: &EngineRegistry,
    key: &str,
    parsed: EntryKey<'_>,
    value: &str,
) -> Result<Option<Warning>> {
    let engines = registry.configured_by(parsed.engine);
    if engines.is_empty() {
        if let Some(engine) = registry.get(parsed.engine) {
            return Err(Error::UnknownProperty {
                key: key.to_owned(),
                hint: format!(
                    "; {} caches are configured by meta.cache.{}.*",
                    engine.name,
                    engine.config_engine()
                ),
            });
        }
        return Ok(Some(format!(
            "{key}: no engine '{}' is registered; the property is kept but has no effect",
            parsed.engine
        )));
    }
    let unknown = |hint: String| Error::UnknownProperty {
        key: key.to_owned(),
        hint,
    };
    match parsed.setting() {
        Some(Setting::MaxWeight) => {
            if !engines.iter().any(|e| e.has_caches(parsed.entry)) {
                return Err(WeightError::UnknownProperty {
                    key: key.to_owned(),
                }
                .into());
            }
            parse_positive_weight(key, value)?;
        }
        Some(setting) => {
            if !engines.iter().any(|e| e.accepts(parsed.entry, setting)) {
                let mut tokens: Vec<&str> = engines
                    .iter()
                    .flat_map(|e| e.entries.iter())
                    .filter(|entry| {
                        setting == Setting::TtlSecond
                            || engines.iter().any(|e| e.has_caches(&entry.token))
                    })
                    .map(|entry| entry.token.as_str())
                    .collect();
                tokens.sort_unstable();
                tokens.dedup();
                return Err(unknown(format!(
                    "; {} entries of {} are {}",
                    setting.suffix(),
                    parsed.engine,
                    tokens.join(", ")
                )));
            }
            match setting {
                Setting::Enable | Setting::AutoRefresh | Setting::Advisor => {
                    parse_enable(key, value)?;
                }
                _ => {
                    parse_count(key, value)?;
                }
            }
        }
        None => {
            return Err(unknown(
                "; settings are enable, ttl-second, capacity, max-weight, auto-refresh and advisor"
                    .to_owned(),
            ));
        }
    }
    Ok(None)
}
