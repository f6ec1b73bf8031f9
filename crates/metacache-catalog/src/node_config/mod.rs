//! The node configuration: a flat set of keys read from defaults, then a TOML file, then
//! `METACACHE_<KEY>` environment variables (command-line flags of the binary come last).
//! Keys marked mutable change at runtime through `ADMIN SET FRONTEND CONFIG`.
//!
//! Runtime changes live in memory only, as in Doris: the file stays the source of truth for the
//! next start, and `ADMIN SHOW FRONTEND CONFIG` shows what is in effect now.

use std::path::{Path, PathBuf};

mod keys;
mod parse;

use metacache_ledger::size::NodeWeight;

pub use keys::{ConfigKey, KEYS, config_key};

use crate::reach::{AllowedHosts, AllowedLocations};
use crate::{Error, Result};

/// The node-wide limit of all managed caches.
pub const EXTERNAL_META_CACHE_MAX_WEIGHT: &str = "external_meta_cache_max_weight";
/// The memory percentages refer to.
pub const NODE_MEMORY_BUDGET: &str = "node_memory_budget";
/// Prefix of environment overrides.
pub const ENV_PREFIX: &str = "METACACHE_";

/// The node's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeConfig {
    /// `external_meta_cache_max_weight`: `0` (no node quota), a size, or a percentage of the
    /// node memory budget.
    pub external_meta_cache_max_weight: NodeWeight,
    /// `node_memory_budget`: `None` to detect (cgroup limit, else physical RAM).
    pub node_memory_budget: Option<u64>,
    /// `data_dir`: where the catalog store lives.
    pub data_dir: PathBuf,
    /// `mysql_addr`: the MySQL protocol listener.
    pub mysql_addr: String,
    /// `http_addr`: the HTTP listener.
    pub http_addr: String,
    /// `fe_host`: this node's name in `FE_HOST`; empty for the host name.
    pub fe_host: String,
    /// `store`: empty for the file store in `data_dir`, or a `postgres://` URL shared by a
    /// cluster (a secret: it may carry a password).
    pub store: String,
    /// `advertise_http`: where other nodes reach this node's HTTP API; empty for the bound
    /// address.
    pub advertise_http: String,
    /// `cluster_node_timeout_ms`: how long a node of a cluster stays live without a heartbeat.
    pub cluster_node_timeout_ms: u64,
    /// `auth_users`: MySQL users and passwords; empty lets only loopback clients in.
    pub auth_users: Vec<(String, String)>,
    /// `http_token`: the bearer token HTTP clients must send; empty lets only loopback in.
    pub http_token: String,
    /// `http_body_limit`: the largest HTTP request body, in bytes.
    pub http_body_limit: u64,
    /// `sample_catalog`: on the first start of an empty `data_dir`, create catalog `sample`
    /// over the bundled sample warehouse.
    pub sample_catalog: bool,
    /// `query_memory_limit`: memory all SQL queries of the node may hold together (operators
    /// and results), in bytes.
    pub query_memory_limit: u64,
    /// `query_timeout_seconds`: longest a read-only statement may run.
    pub query_timeout_seconds: u64,
    /// `shutdown_grace_seconds`: how long open connections may go on once a stop is asked.
    pub shutdown_grace_seconds: u64,
    /// `mysql_max_connections`: logged-in MySQL sessions (plus a reserve for the admins).
    pub mysql_max_connections: u64,
    /// `mysql_handshake_timeout_seconds`: how long a MySQL client may take to log in.
    pub mysql_handshake_timeout_seconds: u64,
    /// `mysql_idle_timeout_seconds`: how long a logged-in MySQL client may stay silent.
    pub mysql_idle_timeout_seconds: u64,
    /// `source_connect_timeout_seconds`: how long a network source may take to connect.
    pub source_connect_timeout_seconds: u64,
    /// `source_request_timeout_seconds`: how long a network source may take to answer.
    pub source_request_timeout_seconds: u64,
    /// `source_allowed_locations`: directories and buckets catalogs may read ([`crate::reach`]).
    pub source_allowed_locations: AllowedLocations,
    /// `source_allowed_hosts`: hosts catalogs may connect to ([`crate::reach`]).
    pub source_allowed_hosts: AllowedHosts,
    /// `tls_cert_file`: PEM certificate chain of both front ends; empty for no TLS.
    pub tls_cert_file: String,
    /// `tls_key_file`: PEM private key of `tls_cert_file`.
    pub tls_key_file: String,
    /// `mysql_require_secure_transport`: refuse MySQL clients that do not switch to TLS.
    pub mysql_require_secure_transport: bool,
    /// `metrics_cache_labels`: `cache`, `entry` or `catalog` — how finely `/metrics` labels
    /// the per-cache families.
    pub metrics_cache_labels: String,
    /// `external_meta_cache_refresh_max_concurrency`: background refreshes (refresh-ahead) that
    /// may run at once on the node; more are skipped, not queued.
    pub external_meta_cache_refresh_max_concurrency: u64,
    /// `external_meta_cache_lease_timeout_ms`: how long a look-aside lease lasts before another
    /// caller may take the key's lease (a crashed holder blocks its key no longer).
    pub external_meta_cache_lease_timeout_ms: u64,
    /// `external_meta_cache_advisor_half_life_seconds`: how long the quota advisors' counts
    /// take to halve.
    pub external_meta_cache_advisor_half_life_seconds: u64,
    /// `external_meta_cache_history_interval_seconds`: how often every cache's counters are
    /// sampled for the history (the dashboard, `catalog_meta_cache_history`).
    pub external_meta_cache_history_interval_seconds: u64,
    /// `external_meta_cache_scope_max_count`: scan scopes open at once on the node.
    pub external_meta_cache_scope_max_count: u64,
    /// `external_meta_cache_scope_max_entries`: tables one scan scope holds.
    pub external_meta_cache_scope_max_entries: u64,
    /// `external_meta_cache_disk_dir`: the node-shared disk tier's directory; empty for none.
    pub external_meta_cache_disk_dir: String,
    /// `external_meta_cache_disk_max_weight`: what the disk tier's blocks may take, a size or a
    /// percentage of the file system holding the directory.
    pub external_meta_cache_disk_max_weight: NodeWeight,
}

impl Default for NodeConfig {
    fn default() -> Self {
        Self {
            external_meta_cache_max_weight: NodeWeight::Unlimited,
            node_memory_budget: None,
            data_dir: PathBuf::from("./data"),
            mysql_addr: "127.0.0.1:9030".to_owned(),
            http_addr: "127.0.0.1:8030".to_owned(),
            fe_host: String::new(),
            store: String::new(),
            advertise_http: String::new(),
            cluster_node_timeout_ms: 10_000,
            auth_users: Vec::new(),
            http_token: String::new(),
            http_body_limit: 16 << 20,
            sample_catalog: true,
            query_memory_limit: 256 << 20,
            query_timeout_seconds: 60,
            shutdown_grace_seconds: 5,
            mysql_max_connections: 1024,
            mysql_handshake_timeout_seconds: 10,
            mysql_idle_timeout_seconds: 28_800,
            source_connect_timeout_seconds: 10,
            source_request_timeout_seconds: 60,
            source_allowed_locations: AllowedLocations::default(),
            source_allowed_hosts: AllowedHosts::default(),
            tls_cert_file: String::new(),
            tls_key_file: String::new(),
            mysql_require_secure_transport: false,
            metrics_cache_labels: "cache".to_owned(),
            external_meta_cache_refresh_max_concurrency: 10,
            external_meta_cache_lease_timeout_ms: 10_000,
            external_meta_cache_advisor_half_life_seconds: 900,
            external_meta_cache_history_interval_seconds: 60,
            external_meta_cache_scope_max_count: 1024,
            external_meta_cache_scope_max_entries: 1024,
            external_meta_cache_disk_dir: String::new(),
            external_meta_cache_disk_max_weight: NodeWeight::Percent(
                metacache_ledger::size::Percent::whole(10),
            ),
        }
    }
}

impl NodeConfig {
    /// Defaults, then `file` (if any), then the `METACACHE_<KEY>` variables among `env`.
    pub fn load(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self> {
        let mut config = Self::default();
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|e| Error::ConfigFile {
                path: path.to_path_buf(),
                detail: e.to_string(),
            })?;
            config.apply_toml(&text, path)?;
        }
        config.apply_env(env)?;
        Ok(config)
    }

    /// Applies the keys of a TOML document.
    pub fn apply_toml(&mut self, text: &str, origin: &Path) -> Result<()> {
        let file_error = |detail: String| Error::ConfigFile {
            path: origin.to_path_buf(),
            detail,
        };
        let table: toml::Table = toml::from_str(text).map_err(|e| file_error(e.to_string()))?;
        let mut next = self.clone();
        for (key, value) in table {
            let text = match value {
                toml::Value::String(s) => s,
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Boolean(b) => b.to_string(),
                other => {
                    return Err(file_error(format!(
                        "'{key}' must be a string or an integer, not {}",
                        other.type_str()
                    )));
                }
            };
            next.set(&key, &text)
                .map_err(|e| file_error(e.to_string()))?;
        }
        *self = next;
        Ok(())
    }

    /// Applies `METACACHE_<KEY>` variables; other variables are ignored.
    pub fn apply_env(&mut self, env: impl IntoIterator<Item = (String, String)>) -> Result<()> {
        let mut next = self.clone();
        for (name, value) in env {
            let Some(key) = name.strip_prefix(ENV_PREFIX) else {
                continue;
            };
            let key = key.to_ascii_lowercase();
            if let Some(def) = KEYS.iter().find(|k| k.key == key) {
                (def.set)(&mut next, &value)?;
            }
        }
        *self = next;
        Ok(())
    }

    /// Sets any key (at startup; runtime changes go through the manager, which refuses the
    /// keys that are not mutable).
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        (config_key(key)?.set)(self, value)
    }

    /// The node's allow-lists of locations and hosts.
    pub fn reach(&self) -> crate::Reach {
        crate::Reach {
            locations: self.source_allowed_locations.clone(),
            hosts: self.source_allowed_hosts.clone(),
        }
    }

    /// The value of `key` as it would be written in the file.
    pub fn get(&self, key: &str) -> Result<String> {
        Ok((config_key(key)?.get)(self))
    }
}

/// A `LIKE` pattern match: `%` any run, `_` one character, `\` escapes; case-insensitive.
pub fn like(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.to_lowercase().chars().collect();
    let t: Vec<char> = text.to_lowercase().chars().collect();
    // matches[j]: whether the pattern so far matches t[..j].
    let mut matches = vec![false; t.len() + 1];
    matches[0] = true;
    let mut i = 0;
    while i < p.len() {
        let (token, literal) = match p[i] {
            '\\' if i + 1 < p.len() => {
                i += 1;
                (p[i], true)
            }
            c => (c, false),
        };
        i += 1;
        if token == '%' && !literal {
            for j in 1..=t.len() {
                matches[j] = matches[j] || matches[j - 1];
            }
            continue;
        }
        for j in (1..=t.len()).rev() {
            matches[j] = matches[j - 1] && ((token == '_' && !literal) || t[j - 1] == token);
        }
        matches[0] = false;
    }
    matches[t.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_matches_sql_patterns() {
        assert!(like("%max_weight%", "external_meta_cache_max_weight"));
        assert!(like("EXTERNAL%", "external_meta_cache_max_weight"));
        assert!(like("data_dir", "data_dir"));
        assert!(like("data_di_", "data_dir"));
        assert!(!like("data_di", "data_dir"));
        assert!(like("%", ""));
        assert!(!like("_", ""));
        assert!(like("a\\_b", "a_b"));
        assert!(!like("a\\_b", "axb"));
        assert!(like("%dir", "data_dir"));
    }

    #[test]
    fn file_then_environment() {
        let mut config = NodeConfig::default();
        config
            .apply_toml(
                "external_meta_cache_max_weight = \"10%\"\nmysql_addr = \"0.0.0.0:9030\"\n",
                Path::new("m.toml"),
            )
            .expect("valid");
        config
            .apply_env([
                (
                    "METACACHE_EXTERNAL_META_CACHE_MAX_WEIGHT".to_owned(),
                    "8GB".to_owned(),
                ),
                ("METACACHE_FUZZ_SEED".to_owned(), "ignored".to_owned()),
                ("PATH".to_owned(), "/bin".to_owned()),
            ])
            .expect("valid");
        assert_eq!(
            config.get(EXTERNAL_META_CACHE_MAX_WEIGHT).expect("key"),
            "8GB"
        );
        assert_eq!(config.mysql_addr, "0.0.0.0:9030");
    }

    #[test]
    fn bad_files_name_the_file_and_the_key() {
        let mut config = NodeConfig::default();
        let cases = [
            ("nosuch = 1", "Unknown configuration key 'nosuch'"),
            (
                "external_meta_cache_max_weight = \"0%\"",
                "Invalid cache weight for 'external_meta_cache_max_weight': 0%",
            ),
            (
                "external_meta_cache_max_weight = [1]",
                "must be a string or an integer",
            ),
            (
                "mysql_addr = \"nohost\"",
                "Invalid value for configuration key 'mysql_addr'",
            ),
            ("node_memory_budget = \"0\"", "auto or a positive size"),
            ("= broken", "m.toml"),
        ];
        for (text, expected) in cases {
            let error = config
                .apply_toml(text, Path::new("m.toml"))
                .expect_err(text)
                .to_string();
            assert!(
                error.contains(expected) && error.contains("m.toml"),
                "{text}: {error}"
            );
        }
        assert_eq!(config, NodeConfig::default(), "failed loads leave defaults");
    }
}
