//! The node configuration: a flat set of keys read from defaults, then a TOML file, then
//! `METACACHE_<KEY>` environment variables (command-line flags of the binary come last).
//! Keys marked mutable change at runtime through `ADMIN SET FRONTEND CONFIG`.
//!
//! Runtime changes live in memory only, as in Doris: the file stays the source of truth for the
//! next start, and `ADMIN SHOW FRONTEND CONFIG` shows what is in effect now.

use std::path::{Path, PathBuf};

use metacache_ledger::size::{NodeWeight, format_exact, parse_node_weight, parse_size};

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
        }
    }
}

/// A configuration key: its name, how it reads and writes, whether it changes at runtime.
pub struct ConfigKey {
    /// The key.
    pub key: &'static str,
    /// Its type, as `ADMIN SHOW FRONTEND CONFIG` reports it.
    pub value_type: &'static str,
    /// Whether `ADMIN SET FRONTEND CONFIG` may change it.
    pub mutable: bool,
    /// What it does.
    pub comment: &'static str,
    /// Whether its value is a secret (shown as `*XXX` when set).
    pub secret: bool,
    get: fn(&NodeConfig) -> String,
    set: fn(&mut NodeConfig, &str) -> Result<()>,
}

/// Every key, in documentation order.
pub const KEYS: &[ConfigKey] = &[
    ConfigKey {
        key: EXTERNAL_META_CACHE_MAX_WEIGHT,
        value_type: "size|percent",
        mutable: true,
        comment: "node-wide limit of all managed metadata caches: 0 (none), a size like 8GB, or a percentage of the node memory budget",
        secret: false,
        get: |c| c.external_meta_cache_max_weight.to_string(),
        set: |c, v| {
            c.external_meta_cache_max_weight =
                parse_node_weight(EXTERNAL_META_CACHE_MAX_WEIGHT, v)?;
            Ok(())
        },
    },
    ConfigKey {
        key: NODE_MEMORY_BUDGET,
        value_type: "size|auto",
        mutable: false,
        comment: "memory that percentages refer to: auto (cgroup limit, else physical RAM) or a size",
        secret: false,
        get: |c| {
            c.node_memory_budget
                .map_or_else(|| "auto".to_owned(), format_exact)
        },
        set: |c, v| {
            c.node_memory_budget = match v.trim() {
                a if a.eq_ignore_ascii_case("auto") => None,
                size => Some(parse_size(size).filter(|&b| b > 0).ok_or_else(|| {
                    invalid(NODE_MEMORY_BUDGET, v, "auto or a positive size like 16GB")
                })?),
            };
            Ok(())
        },
    },
    ConfigKey {
        key: "data_dir",
        value_type: "path",
        mutable: false,
        comment: "directory of the catalog store (catalogs.json)",
        secret: false,
        get: |c| c.data_dir.display().to_string(),
        set: |c, v| {
            if v.trim().is_empty() {
                return Err(invalid("data_dir", v, "a directory path"));
            }
            c.data_dir = PathBuf::from(v.trim());
            Ok(())
        },
    },
    ConfigKey {
        key: "mysql_addr",
        value_type: "host:port",
        mutable: false,
        comment: "address of the MySQL protocol listener",
        secret: false,
        get: |c| c.mysql_addr.clone(),
        set: |c, v| {
            c.mysql_addr = socket_addr("mysql_addr", v)?;
            Ok(())
        },
    },
    ConfigKey {
        key: "http_addr",
        value_type: "host:port",
        mutable: false,
        comment: "address of the HTTP listener (SQL, metrics, look-aside API)",
        secret: false,
        get: |c| c.http_addr.clone(),
        set: |c, v| {
            c.http_addr = socket_addr("http_addr", v)?;
            Ok(())
        },
    },
    ConfigKey {
        key: "fe_host",
        value_type: "string",
        mutable: false,
        comment: "this node's name in the FE_HOST column; empty for the host name",
        secret: false,
        get: |c| c.fe_host.clone(),
        set: |c, v| {
            c.fe_host = v.trim().to_owned();
            Ok(())
        },
    },
    ConfigKey {
        key: "auth_users",
        value_type: "user:password,...",
        mutable: false,
        comment: "MySQL users and their passwords; empty lets any user in from loopback only",
        secret: true,
        get: |c| {
            c.auth_users
                .iter()
                .map(|(u, p)| format!("{u}:{p}"))
                .collect::<Vec<_>>()
                .join(",")
        },
        set: |c, v| {
            c.auth_users = parse_users(v)?;
            Ok(())
        },
    },
    ConfigKey {
        key: "http_token",
        value_type: "string",
        mutable: false,
        comment: "bearer token required by every HTTP endpoint but /healthz; empty lets loopback clients only",
        secret: true,
        get: |c| c.http_token.clone(),
        set: |c, v| {
            c.http_token = v.trim().to_owned();
            Ok(())
        },
    },
    ConfigKey {
        key: "http_body_limit",
        value_type: "size",
        mutable: false,
        comment: "largest HTTP request body (SQL text, look-aside values)",
        secret: false,
        get: |c| format_exact(c.http_body_limit),
        set: |c, v| {
            c.http_body_limit = parse_size(v)
                .filter(|&b| b > 0)
                .ok_or_else(|| invalid("http_body_limit", v, "a positive size like 16MB"))?;
            Ok(())
        },
    },
    ConfigKey {
        key: "query_memory_limit",
        value_type: "size",
        mutable: false,
        comment: "memory all SQL queries of the node may hold together, results included; a query that needs more fails",
        secret: false,
        get: |c| format_exact(c.query_memory_limit),
        set: |c, v| {
            c.query_memory_limit = parse_size(v)
                .filter(|&b| b >= 1 << 20)
                .ok_or_else(|| invalid("query_memory_limit", v, "a size of at least 1MB"))?;
            Ok(())
        },
    },
    ConfigKey {
        key: "query_timeout_seconds",
        value_type: "integer",
        mutable: true,
        comment: "longest a read-only statement (SELECT, SHOW, DESCRIBE) may run, in seconds",
        secret: false,
        get: |c| c.query_timeout_seconds.to_string(),
        set: |c, v| {
            c.query_timeout_seconds = whole_number(v, 1, 86_400).ok_or_else(|| {
                invalid(
                    "query_timeout_seconds",
                    v,
                    "a whole number of seconds, 1 to 86400",
                )
            })?;
            Ok(())
        },
    },
    ConfigKey {
        key: "shutdown_grace_seconds",
        value_type: "integer",
        mutable: false,
        comment: "on SIGTERM/SIGINT, how long open connections and requests may finish before they are cancelled and the process exits",
        secret: false,
        get: |c| c.shutdown_grace_seconds.to_string(),
        set: |c, v| {
            c.shutdown_grace_seconds = whole_number(v, 0, 3600).ok_or_else(|| {
                invalid(
                    "shutdown_grace_seconds",
                    v,
                    "a whole number of seconds, 0 to 3600",
                )
            })?;
            Ok(())
        },
    },
    ConfigKey {
        key: "mysql_max_connections",
        value_type: "integer",
        mutable: false,
        comment: "logged-in MySQL sessions at once; 4 more are kept for the users root and admin",
        secret: false,
        get: |c| c.mysql_max_connections.to_string(),
        set: |c, v| {
            c.mysql_max_connections = whole_number(v, 1, 100_000).ok_or_else(|| {
                invalid("mysql_max_connections", v, "a whole number, 1 to 100000")
            })?;
            Ok(())
        },
    },
    ConfigKey {
        key: "mysql_handshake_timeout_seconds",
        value_type: "integer",
        mutable: false,
        comment: "seconds a MySQL client may take to log in before it is dropped",
        secret: false,
        get: |c| c.mysql_handshake_timeout_seconds.to_string(),
        set: |c, v| {
            c.mysql_handshake_timeout_seconds = whole_number(v, 1, 3600).ok_or_else(|| {
                invalid(
                    "mysql_handshake_timeout_seconds",
                    v,
                    "a whole number of seconds, 1 to 3600",
                )
            })?;
            Ok(())
        },
    },
    ConfigKey {
        key: "mysql_idle_timeout_seconds",
        value_type: "integer",
        mutable: false,
        comment: "seconds a logged-in MySQL client may send nothing before it is closed (MySQL's wait_timeout)",
        secret: false,
        get: |c| c.mysql_idle_timeout_seconds.to_string(),
        set: |c, v| {
            c.mysql_idle_timeout_seconds = whole_number(v, 1, 31_536_000).ok_or_else(|| {
                invalid(
                    "mysql_idle_timeout_seconds",
                    v,
                    "a whole number of seconds, 1 to 31536000",
                )
            })?;
            Ok(())
        },
    },
    ConfigKey {
        key: "source_connect_timeout_seconds",
        value_type: "integer",
        mutable: false,
        comment: "seconds a network metadata source (REST catalog or namespace, PostgreSQL, S3) may take to connect",
        secret: false,
        get: |c| c.source_connect_timeout_seconds.to_string(),
        set: |c, v| {
            c.source_connect_timeout_seconds = whole_number(v, 1, 3600).ok_or_else(|| {
                invalid(
                    "source_connect_timeout_seconds",
                    v,
                    "a whole number of seconds, 1 to 3600",
                )
            })?;
            Ok(())
        },
    },
    ConfigKey {
        key: "source_request_timeout_seconds",
        value_type: "integer",
        mutable: false,
        comment: "seconds a network metadata source may take to answer one request; then the load fails for every caller waiting on it",
        secret: false,
        get: |c| c.source_request_timeout_seconds.to_string(),
        set: |c, v| {
            c.source_request_timeout_seconds = whole_number(v, 1, 3600).ok_or_else(|| {
                invalid(
                    "source_request_timeout_seconds",
                    v,
                    "a whole number of seconds, 1 to 3600",
                )
            })?;
            Ok(())
        },
    },
    ConfigKey {
        key: "sample_catalog",
        value_type: "boolean",
        mutable: false,
        comment: "on the first start of an empty data_dir, create catalog 'sample' over a bundled sample warehouse",
        secret: false,
        get: |c| c.sample_catalog.to_string(),
        set: |c, v| {
            c.sample_catalog = match v.trim().to_ascii_lowercase().as_str() {
                "true" => true,
                "false" => false,
                _ => return Err(invalid("sample_catalog", v, "true or false")),
            };
            Ok(())
        },
    },
];

/// A whole number within `min..=max`.
fn whole_number(value: &str, min: u64, max: u64) -> Option<u64> {
    value
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|n| (min..=max).contains(n))
}

/// `user:password,user:password`; every user needs a non-empty password.
fn parse_users(value: &str) -> Result<Vec<(String, String)>> {
    let mut users = Vec::new();
    for entry in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (user, password) = entry.split_once(':').unwrap_or((entry, ""));
        if user.trim().is_empty() || password.is_empty() {
            // The value holds passwords: never echo it.
            return Err(invalid(
                "auth_users",
                "(hidden)",
                "user:password pairs separated by commas, each with a non-empty password",
            ));
        }
        users.push((user.trim().to_owned(), password.to_owned()));
    }
    Ok(users)
}

fn invalid(key: &str, value: &str, expected: &'static str) -> Error {
    Error::InvalidConfig {
        key: key.to_owned(),
        value: value.to_owned(),
        expected,
    }
}

fn socket_addr(key: &str, value: &str) -> Result<String> {
    let value = value.trim();
    let port_ok = value
        .rsplit_once(':')
        .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
    if port_ok {
        Ok(value.to_owned())
    } else {
        Err(invalid(key, value, "host:port, port 0 to pick a free one"))
    }
}

/// The key named `key` (exact, lower-case).
pub fn config_key(key: &str) -> Result<&'static ConfigKey> {
    KEYS.iter()
        .find(|k| k.key == key)
        .ok_or_else(|| Error::UnknownConfig {
            key: key.to_owned(),
        })
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
