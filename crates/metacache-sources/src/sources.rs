//! The node's connectors, one per catalog with a source, built on first use from the catalog's
//! properties and rebuilt when those change.
//!
//! # Invariants
//! - A connector is used only with the catalog instance, name and properties it was built from:
//!   a dropped and re-created catalog, a renamed one, or an ALTER of any property builds a new
//!   one.
//! - Building never keeps a secret outside the catalog's own properties.

use std::collections::HashMap;
use std::sync::Arc;

use metacache_catalog::{Catalog, CatalogManager, Properties};
use parking_lot::Mutex;

use crate::connector::Connector;
use crate::hive::HiveConnector;
use crate::warehouse::{DiskRead, Warehouse};
use crate::{Error, Result};

struct Built {
    catalog: Arc<Catalog>,
    properties: Properties,
    /// The disk tier's directory the connector reads through (a change rebuilds it).
    disk_dir: Option<std::path::PathBuf>,
    connector: Arc<dyn Connector>,
}

/// The connectors of a node's catalogs.
pub struct Sources {
    manager: Arc<CatalogManager>,
    built: Mutex<HashMap<String, Built>>,
}

impl std::fmt::Debug for Sources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sources")
            .field("connectors", &self.built.lock().len())
            .finish()
    }
}

impl Sources {
    /// The connectors of `manager`'s catalogs, with the network timeouts of its node
    /// configuration ([`crate::network`]).
    pub fn new(manager: Arc<CatalogManager>) -> Arc<Self> {
        let config = manager.node_config();
        crate::network::configure(crate::network::NetworkTimeouts {
            connect: std::time::Duration::from_secs(config.source_connect_timeout_seconds),
            request: std::time::Duration::from_secs(config.source_request_timeout_seconds),
        });
        Arc::new(Self {
            manager,
            built: Mutex::new(HashMap::new()),
        })
    }

    /// The catalog manager.
    pub fn manager(&self) -> &Arc<CatalogManager> {
        &self.manager
    }

    /// The connector of `catalog`.
    pub fn connector(&self, catalog: &str) -> Result<Arc<dyn Connector>> {
        let current = self.manager.catalog(catalog)?;
        let properties = current.def().properties;
        let tier = self
            .manager
            .disk()
            .filter(|_| metacache_catalog::disk::enabled(&properties));
        let mut built = self.built.lock();
        if let Some(b) = built.get(catalog)
            && Arc::ptr_eq(&b.catalog, &current)
            && b.properties == properties
            && b.disk_dir.as_deref() == tier.as_ref().map(|t| t.dir())
        {
            return Ok(Arc::clone(&b.connector));
        }
        // Dropped catalogs' connectors, and those kept under a name the catalog no longer has
        // (RENAME), go.
        built.retain(|name, b| !b.catalog.is_dropped() && *b.catalog.name() == **name);
        // A catalog stored before the node's allow-lists were narrowed reads nothing outside them.
        let reach = self.manager.node_config().reach();
        reach.check_properties(catalog, &properties)?;
        let disk_dir = tier.as_ref().map(|t| t.dir().to_path_buf());
        let disk = tier.map(|tier| DiskRead::new(tier, catalog));
        let connector = build(&current, &properties, reach, disk)?;
        built.insert(
            catalog.to_owned(),
            Built {
                catalog: current,
                properties,
                disk_dir,
                connector: Arc::clone(&connector),
            },
        );
        Ok(connector)
    }
}

#[cfg_attr(not(feature = "iceberg"), allow(unused_variables))]
fn build(
    catalog: &Arc<Catalog>,
    properties: &Properties,
    reach: metacache_catalog::Reach,
    disk: Option<DiskRead>,
) -> Result<Arc<dyn Connector>> {
    let owned_name = catalog.name();
    let name: &str = &owned_name;
    let catalog_type = catalog.def().catalog_type();
    match catalog_type.as_str() {
        "hms" | "hive" => {
            if let Some(uris) = properties.get("hive.metastore.uris") {
                return hive_metastore(catalog, name, uris, properties, reach);
            }
            let warehouse = Warehouse::open(name, properties)?.ok_or_else(|| Error::NoSource {
                catalog: name.to_owned(),
            })?;
            Ok(Arc::new(HiveConnector::new(Arc::clone(catalog), warehouse)))
        }
        #[cfg(feature = "iceberg")]
        "iceberg" => iceberg(catalog, properties, reach, disk),
        #[cfg(feature = "lance")]
        "lance" => Ok(Arc::new(crate::lance::LanceConnector::open(
            Arc::clone(catalog),
            properties,
        )?)),
        #[cfg(feature = "paimon")]
        "paimon" => Ok(Arc::new(crate::paimon::PaimonConnector::open(
            Arc::clone(catalog),
            properties,
            disk,
        )?)),
        #[cfg(feature = "postgres")]
        "jdbc" | "adbc" => Ok(Arc::new(crate::adbc::PostgresConnector::open(
            Arc::clone(catalog),
            properties,
        )?)),
        other => Err(Error::NoConnector {
            catalog: name.to_owned(),
            catalog_type: other.to_owned(),
        }),
    }
}

/// A Hive catalog whose metastore is a Thrift Hive Metastore: table and partition locations
/// are read through `warehouse` when set (a directory or `s3://bucket/prefix` holding them),
/// else through the local file system.
#[cfg(feature = "hms")]
fn hive_metastore(
    catalog: &Arc<Catalog>,
    name: &str,
    uris: &str,
    properties: &Properties,
    reach: metacache_catalog::Reach,
) -> Result<Arc<dyn Connector>> {
    let warehouse = match Warehouse::open(name, properties)? {
        Some(warehouse) => warehouse,
        None => local_root(),
    };
    let metastore =
        crate::hive::thrift::ThriftMetastore::open(name, uris, warehouse.clone(), reach)?;
    Ok(Arc::new(crate::hive::hms::HmsConnector::new(
        Arc::clone(catalog),
        warehouse,
        Arc::new(metastore),
        metacache_catalog::events::polling_interval(properties),
    )))
}

/// The whole local file system, for metastores that record absolute locations.
#[cfg(feature = "hms")]
fn local_root() -> Warehouse {
    Warehouse::from_store(
        Arc::new(object_store::local::LocalFileSystem::new()),
        object_store::path::Path::default(),
        "file://",
    )
}

#[cfg(not(feature = "hms"))]
fn hive_metastore(
    catalog: &Arc<Catalog>,
    name: &str,
    _uris: &str,
    _properties: &Properties,
    _reach: metacache_catalog::Reach,
) -> Result<Arc<dyn Connector>> {
    let _ = catalog;
    Err(Error::Connection {
        catalog: name.to_owned(),
        reason: "this build has no Hive Metastore client (cargo feature 'hms')".to_owned(),
    })
}

/// `iceberg.catalog.type`: `hadoop` (tables found in the warehouse; the default), `jdbc`/`sql`
/// (a SQLite SQL catalog named by `uri`) or `rest` (a REST catalog at `uri`).
#[cfg(feature = "iceberg")]
fn iceberg(
    catalog: &Arc<Catalog>,
    properties: &Properties,
    reach: metacache_catalog::Reach,
    disk: Option<DiskRead>,
) -> Result<Arc<dyn Connector>> {
    use crate::iceberg::{
        DirectoryCatalog, IcebergConnector, RestCatalog, SqliteCatalog, Storage, TableCatalog,
    };
    let owned_name = catalog.name();
    let name: &str = &owned_name;
    let invalid = |reason: String| Error::Connection {
        catalog: name.to_owned(),
        reason,
    };
    let kind = properties
        .get(metacache_engines::builtin::iceberg::CATALOG_TYPE_KEY)
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_else(|| "hadoop".to_owned());
    let get = |key: &str| properties.get(key).map(str::trim).filter(|v| !v.is_empty());
    if kind == "rest" {
        let uri = get("uri").ok_or_else(|| invalid("a REST catalog needs 'uri'".to_owned()))?;
        if !(uri.starts_with("http://") || uri.starts_with("https://")) {
            return Err(invalid(format!(
                "'uri' must be an http(s) URL, not '{uri}'"
            )));
        }
        let token = get("iceberg.rest.oauth2.token").or_else(|| get("token"));
        let tables = RestCatalog::new(
            name,
            uri,
            get(crate::WAREHOUSE).map(str::to_owned),
            token.map(str::to_owned),
        );
        let storage = Storage::Buckets {
            catalog: name.to_owned(),
            properties: properties.clone(),
            reach,
            opened: parking_lot::Mutex::new(std::collections::HashMap::new()),
            disk,
        };
        return Ok(Arc::new(IcebergConnector::new(
            Arc::clone(catalog),
            storage,
            Box::new(tables),
        )));
    }
    let warehouse = match Warehouse::open(name, properties)? {
        Some(warehouse) => warehouse,
        // A metastore records absolute locations: without 'warehouse', the local file system.
        #[cfg(feature = "hms")]
        None if kind == "hms" => local_root(),
        None => {
            return Err(Error::NoSource {
                catalog: name.to_owned(),
            });
        }
    };
    let tables: Box<dyn TableCatalog> = match kind.as_str() {
        "hadoop" => Box::new(DirectoryCatalog::new(name, warehouse.clone())),
        "jdbc" | "sql" => {
            let uri = properties.get("uri").map(str::trim).unwrap_or_default();
            let path = uri
                .strip_prefix("sqlite:///")
                .map(|p| format!("/{p}"))
                .or_else(|| uri.strip_prefix("jdbc:sqlite:").map(str::to_owned))
                .or_else(|| uri.starts_with('/').then(|| uri.to_owned()))
                .ok_or_else(|| {
                    invalid(format!(
                        "'uri' must name a SQLite catalog file (sqlite:///abs/catalog.db, jdbc:sqlite:/abs/catalog.db), not '{uri}'"
                    ))
                })?;
            if !std::path::Path::new(&path).is_file() {
                return Err(invalid(format!(
                    "the SQL catalog file '{path}' does not exist"
                )));
            }
            let catalog_name = properties
                .get("iceberg.catalog.name")
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty());
            Box::new(SqliteCatalog::new(name, path.into(), catalog_name))
        }
        #[cfg(feature = "hms")]
        "hms" => {
            let uris = get(crate::hive::thrift::URIS).ok_or_else(|| {
                invalid("an Iceberg catalog of type hms needs 'hive.metastore.uris'".to_owned())
            })?;
            let metastore =
                crate::hive::thrift::ThriftMetastore::open(name, uris, warehouse.clone(), reach)?;
            Box::new(crate::hive::hms::IcebergTables(Arc::new(metastore)))
        }
        other => {
            return Err(invalid(format!(
                "'iceberg.catalog.type' = '{other}': use hadoop, jdbc, hms or rest"
            )));
        }
    };
    Ok(Arc::new(IcebergConnector::new(
        Arc::clone(catalog),
        // Only the storage reads through the disk: the table catalog reads mutable files
        // (version hints) and listings from the same warehouse.
        Storage::Warehouse(warehouse.with_disk(disk)),
        tables,
    )))
}
