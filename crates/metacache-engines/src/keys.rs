//! The grammar of cache property keys: `meta.cache.<engine>.<entry>.<setting>`.

use crate::Setting;

/// Every cache property key starts with this.
pub const KEY_PREFIX: &str = "meta.cache.";

/// A key of the form `meta.cache.<engine>.<entry>.<suffix>`, split. The suffix is kept as
/// text so that a misspelled setting can be reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryKey<'a> {
    /// `<engine>`.
    pub engine: &'a str,
    /// `<entry>`.
    pub entry: &'a str,
    /// The last component (`enable`, `ttl-second`, `capacity`, `max-weight`, or a typo).
    pub suffix: &'a str,
}

impl<'a> EntryKey<'a> {
    /// Splits `key`; `None` when it is not of the form above (e.g. `meta.cache.max-weight`).
    pub fn parse(key: &'a str) -> Option<Self> {
        let rest = key.strip_prefix(KEY_PREFIX)?;
        let (engine, rest) = rest.split_once('.')?;
        let (entry, suffix) = rest.rsplit_once('.')?;
        if engine.is_empty() || entry.is_empty() || suffix.is_empty() || entry.contains('.') {
            return None;
        }
        Some(Self {
            engine,
            entry,
            suffix,
        })
    }

    /// The setting the suffix names, if it names one.
    pub fn setting(&self) -> Option<Setting> {
        Setting::from_suffix(self.suffix)
    }
}

/// `meta.cache.<engine>.<entry>.<setting>`.
pub fn entry_key(engine: &str, entry: &str, setting: Setting) -> String {
    format!("{KEY_PREFIX}{engine}.{entry}.{}", setting.suffix())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_engine_entry_and_setting() {
        let key = EntryKey::parse("meta.cache.hive.partition_names.ttl-second").expect("key");
        assert_eq!(
            (key.engine, key.entry, key.setting()),
            ("hive", "partition_names", Some(Setting::TtlSecond))
        );
        assert_eq!(
            entry_key("hive", "partition_names", Setting::TtlSecond),
            "meta.cache.hive.partition_names.ttl-second"
        );
        let typo = EntryKey::parse("meta.cache.hive.file.ttl").expect("key");
        assert_eq!(typo.setting(), None);
    }

    #[test]
    fn other_keys_are_not_entry_keys() {
        for key in [
            "meta.cache.max-weight",
            "meta.cache.hive.max-weight",
            "meta.cache..file.enable",
            "meta.cache.hive.a.b.enable",
            "schema.cache.ttl-second",
            "type",
        ] {
            assert_eq!(EntryKey::parse(key), None, "{key}");
        }
    }
}
