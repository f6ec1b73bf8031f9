//! Every node configuration key: its name, type, whether it changes at runtime, how its value
//! is parsed and shown. Parsing refuses a bad value with the key, the value (never a secret's)
//! and what was expected, and changes nothing.

use std::path::PathBuf;

use metacache_ledger::size::{NodeWeight, format_exact, parse_node_weight, parse_size};

use super::parse::{boolean, invalid, parse_users, socket_addr, whole_number};
use super::{EXTERNAL_META_CACHE_MAX_WEIGHT, NODE_MEMORY_BUDGET, NodeConfig};
use crate::reach::{ALLOWED_HOSTS_KEY, ALLOWED_LOCATIONS_KEY, AllowedHosts, AllowedLocations};
use crate::{Error, Result};

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
    pub(super) get: fn(&NodeConfig) -> String,
    pub(super) set: fn(&mut NodeConfig, &str) -> Result<()>,
}

/// The node-wide bound on background refreshes.
pub const REFRESH_MAX_CONCURRENCY: &str = "external_meta_cache_refresh_max_concurrency";

/// How long a look-aside lease lasts.
pub const LEASE_TIMEOUT: &str = "external_meta_cache_lease_timeout_ms";

/// How long the counts of the quota advisors take to halve.
pub const ADVISOR_HALF_LIFE: &str = "external_meta_cache_advisor_half_life_seconds";

/// How often the history samples every cache's counters.
pub const HISTORY_INTERVAL: &str = "external_meta_cache_history_interval_seconds";

/// The bound on open scan scopes.
pub const MAX_SCOPES: &str = "external_meta_cache_scope_max_count";

/// The bound on tables per scan scope.
pub const SCOPE_MAX_ENTRIES: &str = "external_meta_cache_scope_max_entries";

/// The node-shared disk tier's directory.
pub const DISK_DIR: &str = "external_meta_cache_disk_dir";

/// What the disk tier's blocks may take.
pub const DISK_MAX_WEIGHT: &str = "external_meta_cache_disk_max_weight";

/// How long a node of a cluster stays live without a heartbeat.
pub const CLUSTER_NODE_TIMEOUT: &str = "cluster_node_timeout_ms";

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
        key: "store",
        value_type: "string",
        mutable: false,
        comment: "where catalogs are stored: empty for the file in data_dir, or postgres://user@host:port/db shared by a cluster (docs/cluster.md)",
        secret: true,
        get: |c| c.store.clone(),
        set: |c, v| {
            let v = v.trim();
            if !(v.is_empty() || v.starts_with("postgres://") || v.starts_with("postgresql://")) {
                return Err(invalid(
                    "store",
                    "(not shown)",
                    "empty, or postgres://user@host:port/database",
                ));
            }
            c.store = v.to_owned();
            Ok(())
        },
    },
    ConfigKey {
        key: "advertise_http",
        value_type: "string",
        mutable: false,
        comment: "the address other nodes of a cluster reach this node's HTTP API at (host:port); empty for the bound address",
        secret: false,
        get: |c| c.advertise_http.clone(),
        set: |c, v| {
            c.advertise_http = v.trim().to_owned();
            Ok(())
        },
    },
    ConfigKey {
        key: CLUSTER_NODE_TIMEOUT,
        value_type: "integer",
        mutable: true,
        comment: "milliseconds without a heartbeat after which a node of a cluster no longer counts as live (its rows leave the statistics of the other nodes), 1000 to 3600000",
        secret: false,
        get: |c| c.cluster_node_timeout_ms.to_string(),
        set: |c, v| {
            c.cluster_node_timeout_ms = whole_number(v, 1000, 3_600_000)
                .ok_or_else(|| invalid(CLUSTER_NODE_TIMEOUT, v, "milliseconds, 1000 to 3600000"))?;
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
        key: ALLOWED_LOCATIONS_KEY,
        value_type: "list",
        mutable: false,
        comment: "directories (/srv/lake) and buckets (s3://bucket/prefix) catalogs may read, comma-separated; * for any",
        secret: false,
        get: |c| c.source_allowed_locations.to_string(),
        set: |c, v| {
            c.source_allowed_locations =
                AllowedLocations::parse(v).map_err(|reason| Error::InvalidConfigList {
                    key: ALLOWED_LOCATIONS_KEY,
                    reason,
                })?;
            Ok(())
        },
    },
    ConfigKey {
        key: ALLOWED_HOSTS_KEY,
        value_type: "list",
        mutable: false,
        comment: "hosts catalogs may connect to: names, *.domain, addresses, networks, each with an optional :port; * for any but link-local addresses",
        secret: false,
        get: |c| c.source_allowed_hosts.to_string(),
        set: |c, v| {
            c.source_allowed_hosts =
                AllowedHosts::parse(v).map_err(|reason| Error::InvalidConfigList {
                    key: ALLOWED_HOSTS_KEY,
                    reason,
                })?;
            Ok(())
        },
    },
    ConfigKey {
        key: "tls_cert_file",
        value_type: "path",
        mutable: false,
        comment: "PEM certificate chain for TLS on both front ends (HTTPS, and MySQL's SSL); empty for none",
        secret: false,
        get: |c| c.tls_cert_file.clone(),
        set: |c, v| {
            c.tls_cert_file = v.trim().to_owned();
            Ok(())
        },
    },
    ConfigKey {
        key: "tls_key_file",
        value_type: "path",
        mutable: false,
        comment: "PEM private key of tls_cert_file (PKCS#8, PKCS#1 or SEC1)",
        secret: false,
        get: |c| c.tls_key_file.clone(),
        set: |c, v| {
            c.tls_key_file = v.trim().to_owned();
            Ok(())
        },
    },
    ConfigKey {
        key: "mysql_require_secure_transport",
        value_type: "boolean",
        mutable: false,
        comment: "with TLS set up, refuse MySQL clients that log in without it (MySQL's require_secure_transport)",
        secret: false,
        get: |c| c.mysql_require_secure_transport.to_string(),
        set: |c, v| {
            c.mysql_require_secure_transport = boolean("mysql_require_secure_transport", v)?;
            Ok(())
        },
    },
    ConfigKey {
        key: "metrics_cache_labels",
        value_type: "string",
        mutable: true,
        comment: "labels of /metrics' per-cache families: cache (catalog, engine, entry), entry (engine, entry; summed over catalogs) or catalog (summed over its caches)",
        secret: false,
        get: |c| c.metrics_cache_labels.clone(),
        set: |c, v| {
            let v = v.trim().to_ascii_lowercase();
            if !["cache", "entry", "catalog"].contains(&v.as_str()) {
                return Err(invalid(
                    "metrics_cache_labels",
                    &v,
                    "cache, entry or catalog",
                ));
            }
            c.metrics_cache_labels = v;
            Ok(())
        },
    },
    ConfigKey {
        key: REFRESH_MAX_CONCURRENCY,
        value_type: "integer",
        mutable: true,
        comment: "background refreshes (refresh-ahead, auto-refresh entries) that may run at once on the node, 0 to 1024; more are skipped, not queued",
        secret: false,
        get: |c| c.external_meta_cache_refresh_max_concurrency.to_string(),
        set: |c, v| {
            c.external_meta_cache_refresh_max_concurrency = whole_number(v, 0, 1024)
                .ok_or_else(|| invalid(REFRESH_MAX_CONCURRENCY, v, "a whole number, 0 to 1024"))?;
            Ok(())
        },
    },
    ConfigKey {
        key: LEASE_TIMEOUT,
        value_type: "integer",
        mutable: true,
        comment: "milliseconds a look-aside lease lasts (100 to 3600000); then another caller may take the key's lease and the old holder's PUT is refused",
        secret: false,
        get: |c| c.external_meta_cache_lease_timeout_ms.to_string(),
        set: |c, v| {
            c.external_meta_cache_lease_timeout_ms = whole_number(v, 100, 3_600_000)
                .ok_or_else(|| invalid(LEASE_TIMEOUT, v, "milliseconds, 100 to 3600000"))?;
            Ok(())
        },
    },
    ConfigKey {
        key: ADVISOR_HALF_LIFE,
        value_type: "integer",
        mutable: true,
        comment: "seconds over which the quota advisors' counts halve, 1 to 604800 (a week): the advice describes the requests of the last few half-lives; a change applies to running caches from their last halving",
        secret: false,
        get: |c| c.external_meta_cache_advisor_half_life_seconds.to_string(),
        set: |c, v| {
            c.external_meta_cache_advisor_half_life_seconds = whole_number(v, 1, 604_800)
                .ok_or_else(|| invalid(ADVISOR_HALF_LIFE, v, "seconds, 1 to 604800"))?;
            Ok(())
        },
    },
    ConfigKey {
        key: HISTORY_INTERVAL,
        value_type: "integer",
        mutable: true,
        comment: "seconds between two samples of every cache's counters for the history (the dashboard, catalog_meta_cache_history), 1 to 3600; 360 samples are kept per cache",
        secret: false,
        get: |c| c.external_meta_cache_history_interval_seconds.to_string(),
        set: |c, v| {
            c.external_meta_cache_history_interval_seconds = whole_number(v, 1, 3600)
                .ok_or_else(|| invalid(HISTORY_INTERVAL, v, "seconds, 1 to 3600"))?;
            Ok(())
        },
    },
    ConfigKey {
        key: MAX_SCOPES,
        value_type: "integer",
        mutable: true,
        comment: "scan scopes (POST /api/v1/scopes) open at once on the node, 0 to 1000000; more are refused until one closes or expires",
        secret: false,
        get: |c| c.external_meta_cache_scope_max_count.to_string(),
        set: |c, v| {
            c.external_meta_cache_scope_max_count = whole_number(v, 0, 1_000_000)
                .ok_or_else(|| invalid(MAX_SCOPES, v, "a whole number, 0 to 1000000"))?;
            Ok(())
        },
    },
    ConfigKey {
        key: SCOPE_MAX_ENTRIES,
        value_type: "integer",
        mutable: true,
        comment: "tables one scan scope holds, 1 to 1000000; a new one replaces the least recently used table no task holds",
        secret: false,
        get: |c| c.external_meta_cache_scope_max_entries.to_string(),
        set: |c, v| {
            c.external_meta_cache_scope_max_entries = whole_number(v, 1, 1_000_000)
                .ok_or_else(|| invalid(SCOPE_MAX_ENTRIES, v, "a whole number, 1 to 1000000"))?;
            Ok(())
        },
    },
    ConfigKey {
        key: DISK_DIR,
        value_type: "path",
        mutable: true,
        comment: "directory of the node-shared disk tier of immutable metadata files (shared with engines that embed metacache); empty for none",
        secret: false,
        get: |c| c.external_meta_cache_disk_dir.clone(),
        set: |c, v| {
            let v = v.trim();
            if !(v.is_empty() || v.starts_with('/')) {
                return Err(invalid(DISK_DIR, v, "an absolute path, or empty for none"));
            }
            c.external_meta_cache_disk_dir = v.to_owned();
            Ok(())
        },
    },
    ConfigKey {
        key: DISK_MAX_WEIGHT,
        value_type: "size|percent",
        mutable: true,
        comment: "bytes the disk tier's blocks may take (every process sharing the directory): a size like 20GB, or a percentage of the file system holding it",
        secret: false,
        get: |c| c.external_meta_cache_disk_max_weight.to_string(),
        set: |c, v| {
            let expected = "a size like 20GB, or a percentage of the file system like 10%";
            c.external_meta_cache_disk_max_weight = match parse_node_weight(DISK_MAX_WEIGHT, v) {
                Ok(NodeWeight::Unlimited) | Err(_) => {
                    return Err(invalid(DISK_MAX_WEIGHT, v, expected));
                }
                Ok(weight) => weight,
            };
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
            c.sample_catalog = boolean("sample_catalog", v)?;
            Ok(())
        },
    },
];

/// The key named `key` (exact, lower-case).
pub fn config_key(key: &str) -> Result<&'static ConfigKey> {
    KEYS.iter()
        .find(|k| k.key == key)
        .ok_or_else(|| Error::UnknownConfig {
            key: key.to_owned(),
        })
}
