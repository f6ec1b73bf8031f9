//! Where a catalog may make this node read (issue 12): the node's allow-lists of locations
//! (`source_allowed_locations`) and hosts (`source_allowed_hosts`).
//!
//! Whoever can create a catalog can otherwise point the node at any directory it can read, any
//! bucket, and any host it can reach (the cloud's instance-metadata service included). The two
//! lists are node keys set by the operator (file or environment, never by SQL): a catalog
//! admin cannot widen them.
//!
//! | rule | locations | hosts |
//! |---|---|---|
//! | `*` | anything | any host, except link-local addresses (169.254.0.0/16, fe80::/10) unless listed by address |
//! | a path `/srv/lake` (or `file:///srv/lake`) | that directory and below, whole components | |
//! | `s3://bucket`, `s3://bucket/prefix` | that bucket, or that prefix and below | |
//! | `name`, `*.example.com` | | the name exactly, or any name under the domain |
//! | `10.0.0.0/8`, `192.0.2.7`, `::1` | | addresses, written as addresses |
//! | `…:port` (`[v6]:port`) | | that port only |
//!
//! # Invariants
//! - Checks are on what the catalog names, as written: a location with a `..` component is
//!   refused under any rule but `*`; a host name is not resolved (list names, not `*`, where
//!   the DNS is not the operator's).
//! - The same check runs when a catalog is created or altered (the statement is refused and
//!   nothing changes) and when its connector is built (a catalog stored before the lists were
//!   narrowed comes up, but reads nothing outside them).
//! - Refusals never carry a URL's password: values are redacted before they are kept.

use std::fmt;
use std::net::IpAddr;

use ipnet::IpNet;

use crate::{Error, Properties, Result};

/// The node key of the location allow-list.
pub const ALLOWED_LOCATIONS_KEY: &str = "source_allowed_locations";
/// The node key of the host allow-list.
pub const ALLOWED_HOSTS_KEY: &str = "source_allowed_hosts";

/// Properties whose value names a location or a host the catalog's connector reaches.
const REACHED: &[&str] = &[
    "warehouse",
    "uri",
    "jdbc_url",
    "s3.endpoint",
    "hive.metastore.uris",
    "location.rewrite-to",
];

/// The locations catalogs may read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedLocations(Vec<LocationRule>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum LocationRule {
    Any,
    /// An absolute directory, without a trailing `/`.
    Local(String),
    /// A bucket and a prefix (no leading or trailing `/`; empty for the whole bucket).
    Bucket {
        bucket: String,
        prefix: String,
    },
}

/// The hosts catalogs may connect to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedHosts(Vec<HostRule>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct HostRule {
    host: HostPattern,
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    /// Any host but link-local addresses.
    Any,
    /// A name, lower-cased.
    Name(String),
    /// `*.domain`: the domain's sub-names (stored as `.domain`).
    Suffix(String),
    /// Addresses.
    Net(IpNet),
}

impl Default for AllowedLocations {
    fn default() -> Self {
        Self(vec![LocationRule::Any])
    }
}

impl Default for AllowedHosts {
    fn default() -> Self {
        Self(vec![HostRule {
            host: HostPattern::Any,
            port: None,
        }])
    }
}

/// A location in the form rules and checks share.
enum Place<'a> {
    Local(String),
    Bucket { bucket: &'a str, key: &'a str },
}

/// `location` as a place, or why it is not one.
fn place(location: &str) -> std::result::Result<Place<'_>, &'static str> {
    if let Some(rest) = location.strip_prefix("s3://") {
        let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err("names no bucket");
        }
        if key.split('/').any(|part| part == "..") {
            return Err("has a '..' component");
        }
        return Ok(Place::Bucket {
            bucket,
            key: key.trim_matches('/'),
        });
    }
    let path = location
        .strip_prefix("file://")
        .or_else(|| location.strip_prefix("jdbc:sqlite:"))
        .or_else(|| location.strip_prefix("sqlite://"))
        .unwrap_or(location);
    if !path.starts_with('/') {
        return Err("is not an absolute path, file:// or s3:// location");
    }
    if path.split('/').any(|part| part == "..") {
        return Err("has a '..' component");
    }
    let normal: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    Ok(Place::Local(format!("/{}", normal.join("/"))))
}

/// Whether `path` is `dir` or below it, by whole components.
fn below(path: &str, dir: &str) -> bool {
    dir == "/"
        || path == dir
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

impl AllowedLocations {
    /// Parses a comma-separated list (see the module docs); `None` names the bad rule.
    pub fn parse(value: &str) -> std::result::Result<Self, String> {
        let mut rules = Vec::new();
        for rule in value.split(',').map(str::trim).filter(|r| !r.is_empty()) {
            if rule == "*" {
                rules.push(LocationRule::Any);
                continue;
            }
            match place(rule) {
                Ok(Place::Local(dir)) => rules.push(LocationRule::Local(dir)),
                Ok(Place::Bucket { bucket, key }) => rules.push(LocationRule::Bucket {
                    bucket: bucket.to_owned(),
                    prefix: key.to_owned(),
                }),
                Err(why) => return Err(format!("'{rule}' {why}")),
            }
        }
        if rules.is_empty() {
            return Err("the list is empty (use '*' for any location)".to_owned());
        }
        Ok(Self(rules))
    }

    /// Whether `location` may be read.
    pub fn allows(&self, location: &str) -> bool {
        let place = place(location);
        self.0.iter().any(|rule| match (rule, &place) {
            (LocationRule::Any, _) => true,
            (LocationRule::Local(dir), Ok(Place::Local(path))) => below(path, dir),
            (LocationRule::Bucket { bucket, prefix }, Ok(Place::Bucket { bucket: b, key })) => {
                bucket == b
                    && (prefix.is_empty() || below(&format!("/{key}"), &format!("/{prefix}")))
            }
            _ => false,
        })
    }
}

impl fmt::Display for AllowedLocations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rules: Vec<String> = self
            .0
            .iter()
            .map(|rule| match rule {
                LocationRule::Any => "*".to_owned(),
                LocationRule::Local(dir) => dir.clone(),
                LocationRule::Bucket { bucket, prefix } if prefix.is_empty() => {
                    format!("s3://{bucket}")
                }
                LocationRule::Bucket { bucket, prefix } => format!("s3://{bucket}/{prefix}"),
            })
            .collect();
        f.write_str(&rules.join(","))
    }
}

/// `text` as a host and an optional port: `name`, `name:port`, `v4:port`, `[v6]:port`, `v6`.
fn host_port(text: &str) -> std::result::Result<(&str, Option<u16>), ()> {
    let port = |p: &str| p.parse::<u16>().map_err(|_| ());
    if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or(())?;
        return match after.strip_prefix(':') {
            Some(p) => Ok((host, Some(port(p)?))),
            None if after.is_empty() => Ok((host, None)),
            None => Err(()),
        };
    }
    match text.rsplit_once(':') {
        // More than one colon and no brackets: an IPv6 address without a port.
        Some((host, _)) if host.contains(':') => Ok((text, None)),
        Some((host, p)) => Ok((host, Some(port(p)?))),
        None => Ok((text, None)),
    }
}

fn link_local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map_or((v6.segments()[0] & 0xffc0) == 0xfe80, |v4| {
                v4.is_link_local()
            }),
    }
}

impl AllowedHosts {
    /// Parses a comma-separated list (see the module docs); the error names the bad rule.
    pub fn parse(value: &str) -> std::result::Result<Self, String> {
        let mut rules = Vec::new();
        for rule in value.split(',').map(str::trim).filter(|r| !r.is_empty()) {
            let bad = || {
                format!(
                    "'{rule}' is not a host, *.domain, address or network, with an optional :port"
                )
            };
            let (host, port) = host_port(rule).map_err(|()| bad())?;
            let host = host.to_ascii_lowercase();
            let pattern = if host == "*" {
                HostPattern::Any
            } else if let Some(domain) = host.strip_prefix("*.") {
                if domain.is_empty() || domain.contains('*') {
                    return Err(bad());
                }
                HostPattern::Suffix(format!(".{domain}"))
            } else if let Ok(net) = host.parse::<IpNet>() {
                HostPattern::Net(net.trunc())
            } else if let Ok(ip) = host.parse::<IpAddr>() {
                HostPattern::Net(IpNet::from(ip))
            } else if !host.is_empty()
                && host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_')
            {
                HostPattern::Name(host)
            } else {
                return Err(bad());
            };
            rules.push(HostRule {
                host: pattern,
                port,
            });
        }
        if rules.is_empty() {
            return Err("the list is empty (use '*' for any host)".to_owned());
        }
        Ok(Self(rules))
    }

    /// Whether `host` (a name or an address, IPv6 with or without brackets) may be reached on
    /// `port`.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        let ip = host.parse::<IpAddr>().ok();
        self.0.iter().any(|rule| {
            rule.port.is_none_or(|p| p == port)
                && match &rule.host {
                    HostPattern::Any => !ip.is_some_and(link_local),
                    HostPattern::Name(name) => *name == host,
                    HostPattern::Suffix(domain) => host.ends_with(domain.as_str()),
                    HostPattern::Net(net) => ip.is_some_and(|ip| net.contains(&ip)),
                }
        })
    }
}

impl fmt::Display for AllowedHosts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rules: Vec<String> = self
            .0
            .iter()
            .map(|rule| {
                let host = match &rule.host {
                    HostPattern::Any => "*".to_owned(),
                    HostPattern::Name(name) => name.clone(),
                    HostPattern::Suffix(domain) => format!("*{domain}"),
                    HostPattern::Net(net) if net.prefix_len() == net.max_prefix_len() => {
                        net.addr().to_string()
                    }
                    HostPattern::Net(net) => net.to_string(),
                };
                match (rule.port, &rule.host) {
                    (None, _) => host,
                    (Some(p), HostPattern::Net(IpNet::V6(_))) => format!("[{host}]:{p}"),
                    (Some(p), _) => format!("{host}:{p}"),
                }
            })
            .collect();
        f.write_str(&rules.join(","))
    }
}

/// Both allow-lists of a node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reach {
    /// `source_allowed_locations`.
    pub locations: AllowedLocations,
    /// `source_allowed_hosts`.
    pub hosts: AllowedHosts,
}

/// What a URL-like property value reaches.
enum Target<'a> {
    Location(&'a str),
    Host { host: &'a str, port: u16 },
}

/// The location or host `value` names, by its scheme; `None` for a value that is neither (a
/// REST catalog's warehouse *name*, say).
fn target(value: &str) -> Option<Target<'_>> {
    let value = value.trim();
    if value.starts_with('/')
        || value.starts_with("file://")
        || value.starts_with("s3://")
        || value.starts_with("jdbc:sqlite:")
        || value.starts_with("sqlite://")
    {
        return Some(Target::Location(value));
    }
    const SCHEMES: &[(&str, u16)] = &[
        ("http://", 80),
        ("https://", 443),
        ("jdbc:postgresql://", 5432),
        ("postgresql://", 5432),
        ("postgres://", 5432),
        ("thrift://", 9083),
    ];
    let (rest, default_port) = SCHEMES
        .iter()
        .find_map(|(scheme, port)| Some((value.strip_prefix(scheme)?, *port)))?;
    let authority = rest.split(['/', '?', ';', '#']).next().unwrap_or(rest);
    let address = authority.rsplit('@').next().unwrap_or(authority);
    let (host, port) = host_port(address).ok()?;
    Some(Target::Host {
        host,
        port: port.unwrap_or(default_port),
    })
}

impl Reach {
    /// Checks every property of `properties` that names a location or host.
    pub fn check_properties(&self, catalog: &str, properties: &Properties) -> Result<()> {
        for &key in REACHED {
            let Some(value) = properties.get(key) else {
                continue;
            };
            // `hive.metastore.uris` lists several.
            for value in value.split(',').map(str::trim).filter(|v| !v.is_empty()) {
                match target(value) {
                    Some(Target::Location(location)) => {
                        self.check_location(catalog, key, location)?;
                    }
                    Some(Target::Host { host, port }) => {
                        self.check_host(catalog, key, value, host, port)?;
                    }
                    // A bare endpoint (`s3.endpoint` = `host:port`) is reached over https.
                    None if key == "s3.endpoint" => {
                        let (host, port) = host_port(value).unwrap_or((value, None));
                        self.check_host(catalog, key, value, host, port.unwrap_or(443))?;
                    }
                    None => {}
                }
            }
        }
        Ok(())
    }

    /// Checks one location (`property` names where it came from, for the message).
    pub fn check_location(&self, catalog: &str, property: &str, location: &str) -> Result<()> {
        if self.locations.allows(location) {
            return Ok(());
        }
        Err(Error::NotAllowed {
            catalog: catalog.to_owned(),
            property: property.to_owned(),
            value: metacache_cache::redact::redact(location).into_owned(),
            node_key: ALLOWED_LOCATIONS_KEY,
        })
    }

    /// Checks one host; `value` is the property value it came from (redacted in the error).
    pub fn check_host(
        &self,
        catalog: &str,
        property: &str,
        value: &str,
        host: &str,
        port: u16,
    ) -> Result<()> {
        if self.hosts.allows(host, port) {
            return Ok(());
        }
        Err(Error::NotAllowed {
            catalog: catalog.to_owned(),
            property: property.to_owned(),
            value: metacache_cache::redact::redact(value).into_owned(),
            node_key: ALLOWED_HOSTS_KEY,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn locations(list: &str) -> AllowedLocations {
        AllowedLocations::parse(list).expect("a valid list")
    }

    fn hosts(list: &str) -> AllowedHosts {
        AllowedHosts::parse(list).expect("a valid list")
    }

    #[test]
    fn locations_match_whole_components_and_refuse_climbing_out() {
        let allowed = locations("/srv/lake, s3://bucket/wh");
        assert!(allowed.allows("/srv/lake"));
        assert!(allowed.allows("file:///srv/lake/db/t"));
        assert!(allowed.allows("/srv//lake/./db"));
        assert!(!allowed.allows("/srv/lakehouse"), "not a component of it");
        assert!(!allowed.allows("/srv/lake/../etc"), "climbs out");
        assert!(!allowed.allows("srv/lake"), "relative");
        assert!(allowed.allows("s3://bucket/wh/db.db/t/metadata/v1.json"));
        assert!(allowed.allows("s3://bucket/wh"));
        assert!(!allowed.allows("s3://bucket/whx"));
        assert!(
            !allowed.allows("s3://bucket"),
            "the bucket above the prefix"
        );
        assert!(!allowed.allows("s3://other/wh"));
        assert!(allowed.allows("jdbc:sqlite:/srv/lake/catalog.db"));
        assert!(locations("s3://bucket").allows("s3://bucket/any/key"));
        assert!(locations("*").allows("/etc"));
        assert!(locations("/").allows("/etc"));
        assert_eq!(
            locations("file:///srv/lake/, s3://b/p/").to_string(),
            "/srv/lake,s3://b/p"
        );
        assert!(AllowedLocations::parse("").is_err());
        assert!(AllowedLocations::parse("lake").is_err());
        assert!(AllowedLocations::parse("s3://").is_err());
    }

    #[test]
    fn hosts_match_names_domains_networks_and_ports() {
        let allowed = hosts("pg.internal:5432, *.corp.example, 10.0.0.0/8, [::1]:8181");
        assert!(allowed.allows("PG.internal", 5432));
        assert!(!allowed.allows("pg.internal", 5433));
        assert!(allowed.allows("rest.corp.example", 443));
        assert!(
            !allowed.allows("corp.example", 443),
            "the domain itself is not under it"
        );
        assert!(!allowed.allows("evilcorp.example", 443));
        assert!(allowed.allows("10.1.2.3", 80));
        assert!(!allowed.allows("11.1.2.3", 80));
        assert!(allowed.allows("[::1]", 8181));
        assert!(!allowed.allows("::1", 8182));
        assert_eq!(
            allowed.to_string(),
            "pg.internal:5432,*.corp.example,10.0.0.0/8,[::1]:8181"
        );
        assert!(AllowedHosts::parse("a b").is_err());
        assert!(AllowedHosts::parse("host:port").is_err());
        assert!(AllowedHosts::parse("*.").is_err());
    }

    #[test]
    fn any_host_leaves_out_the_instance_metadata_service_unless_listed() {
        let any = AllowedHosts::default();
        assert!(any.allows("127.0.0.1", 5432));
        assert!(any.allows("metadata.example", 80));
        assert!(!any.allows("169.254.169.254", 80));
        assert!(!any.allows("fe80::1", 80));
        assert!(!any.allows("::ffff:169.254.169.254", 80));
        assert!(hosts("*, 169.254.169.254").allows("169.254.169.254", 80));
    }

    #[test]
    fn properties_are_checked_by_what_they_name() {
        let reach = Reach {
            locations: locations("/srv/lake"),
            hosts: hosts("127.0.0.1"),
        };
        let props = |pairs: &[(&str, &str)]| {
            let mut p = Properties::default();
            for (k, v) in pairs {
                p.insert(*k, *v);
            }
            p
        };
        assert!(
            reach
                .check_properties(
                    "c",
                    &props(&[
                        ("warehouse", "/srv/lake/wh"),
                        ("uri", "http://127.0.0.1:8181/api")
                    ])
                )
                .is_ok()
        );
        let refused = reach
            .check_properties("c", &props(&[("warehouse", "/etc")]))
            .expect_err("outside the list");
        assert_eq!(
            refused.to_string(),
            "Catalog 'c': 'warehouse' = '/etc' is outside source_allowed_locations, the node's allow-list; the node's operator can add it to the configuration file"
        );
        let refused = reach
            .check_properties(
                "c",
                &props(&[(
                    "jdbc_url",
                    "jdbc:postgresql://admin:hunter2@db.example:5432/x",
                )]),
            )
            .expect_err("outside the list")
            .to_string();
        assert!(refused.contains("source_allowed_hosts"), "{refused}");
        assert!(!refused.contains("hunter2"), "{refused}");
        assert!(
            reach
                .check_properties("c", &props(&[("s3.endpoint", "minio:9000")]))
                .is_err()
        );
        assert!(
            reach
                .check_properties("c", &props(&[("warehouse", "my_rest_warehouse")]))
                .is_ok(),
            "a REST warehouse name is not a location"
        );
        assert!(
            reach
                .check_properties(
                    "c",
                    &props(&[(
                        "hive.metastore.uris",
                        "thrift://127.0.0.1:9083,thrift://10.0.0.1:9083"
                    )])
                )
                .is_err(),
            "every URI of the list"
        );
    }
}
