//! The node's connectors, one per catalog with a source, built on first use from the catalog's
//! properties and rebuilt when those change.
//!
//! # Invariants
//! - A connector is used only with the catalog instance and properties it was built from: a
//!   dropped and re-created catalog, or an ALTER of any property, builds a new one.
//! - Building never keeps a secret outside the catalog's own properties.

use std::collections::HashMap;
use std::sync::Arc;

use metacache_catalog::{Catalog, CatalogManager, Properties};
use parking_lot::Mutex;

use crate::connector::Connector;
use crate::hive::HiveConnector;
use crate::warehouse::Warehouse;
use crate::{Error, Result};

struct Built {
    catalog: Arc<Catalog>,
    properties: Properties,
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
    /// The connectors of `manager`'s catalogs.
    pub fn new(manager: Arc<CatalogManager>) -> Arc<Self> {
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
        let mut built = self.built.lock();
        if let Some(b) = built.get(catalog)
            && Arc::ptr_eq(&b.catalog, &current)
            && b.properties == properties
        {
            return Ok(Arc::clone(&b.connector));
        }
        built.retain(|_, b| !b.catalog.is_dropped());
        let connector = build(&current, &properties)?;
        built.insert(
            catalog.to_owned(),
            Built {
                catalog: current,
                properties,
                connector: Arc::clone(&connector),
            },
        );
        Ok(connector)
    }
}

fn build(catalog: &Arc<Catalog>, properties: &Properties) -> Result<Arc<dyn Connector>> {
    let name = catalog.name();
    let catalog_type = catalog.def().catalog_type();
    match catalog_type.as_str() {
        "hms" | "hive" => {
            if properties.get("hive.metastore.uris").is_some()
                && properties.get(crate::WAREHOUSE).is_none()
            {
                return Err(Error::Connection {
                    catalog: name.to_owned(),
                    reason: "a Thrift Hive Metastore ('hive.metastore.uris') is not supported yet; set 'warehouse' to read a Hive-style warehouse with its file metastore".to_owned(),
                });
            }
            let warehouse = Warehouse::open(name, properties)?.ok_or_else(|| Error::NoSource {
                catalog: name.to_owned(),
            })?;
            Ok(Arc::new(HiveConnector::new(Arc::clone(catalog), warehouse)))
        }
        other => Err(Error::Unsupported {
            what: format!("Reading metadata of catalog '{name}' (type '{other}')"),
            connector: "metacache",
        }),
    }
}
