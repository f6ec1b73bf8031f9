//! Where an Iceberg catalog's files are read from: one warehouse, or the S3 buckets its
//! metadata names (REST catalogs), each location checked against the node's allow-lists and
//! `location.rewrite-from` applied before it is read.

use super::*;

/// Where the files of a catalog's tables are read from.
pub enum Storage {
    /// One warehouse holds every table (SQL and directory catalogs).
    Warehouse(Warehouse),
    /// Each S3 bucket that metadata names is opened on first use with the catalog's `s3.*`
    /// properties (REST catalogs, whose `warehouse` is a name, not a location).
    Buckets {
        /// The catalog, for errors.
        catalog: String,
        /// Its properties (`s3.*`, `location.rewrite-from`).
        properties: Properties,
        /// The node's allow-lists: every location metadata names is checked against them.
        reach: metacache_catalog::Reach,
        /// Buckets opened so far.
        opened: Mutex<HashMap<String, Warehouse>>,
        /// The node's disk tier, for the buckets' immutable files.
        disk: Option<crate::warehouse::DiskRead>,
    },
}

impl Storage {
    /// The warehouse that holds `location`, and the location to resolve in it.
    pub(super) fn for_location(&self, location: &str) -> Result<(Warehouse, String)> {
        match self {
            Storage::Warehouse(w) => Ok((w.clone(), location.to_owned())),
            Storage::Buckets {
                catalog,
                properties,
                reach,
                opened,
                disk,
            } => {
                let get = |key: &str| properties.get(key).map(|v| v.trim().trim_end_matches('/'));
                let location = match (get(crate::REWRITE_FROM), get(REWRITE_TO)) {
                    (Some(from), Some(to)) if !from.is_empty() && location.starts_with(from) => {
                        format!("{to}{}", &location[from.len()..])
                    }
                    _ => location.to_owned(),
                };
                reach.check_location(catalog, "table metadata", &location)?;
                let bucket = location
                    .strip_prefix("s3://")
                    .and_then(|rest| rest.split('/').next())
                    .filter(|b| !b.is_empty())
                    .ok_or_else(|| Error::Invalid {
                        location: location.clone(),
                        reason: "a REST catalog's files must be on S3 (s3://bucket/…)".to_owned(),
                    })?;
                let mut opened = opened.lock();
                if let Some(w) = opened.get(bucket) {
                    return Ok((w.clone(), location));
                }
                let mut props = properties.clone();
                props.insert(crate::WAREHOUSE, format!("s3://{bucket}"));
                props.insert(crate::REWRITE_FROM, "");
                let w = Warehouse::open(catalog, &props)?
                    .ok_or_else(|| Error::NoSource {
                        catalog: catalog.clone(),
                    })?
                    .with_disk(disk.clone());
                opened.insert(bucket.to_owned(), w.clone());
                Ok((w, location))
            }
        }
    }
}

impl Storage {
    /// Reads a file named by its recorded location.
    pub(super) async fn read(&self, location: &str) -> Result<bytes::Bytes> {
        let (warehouse, rewritten) = self.for_location(location)?;
        let path = warehouse
            .resolve(&rewritten)
            .ok_or_else(|| Error::Invalid {
                location: location.to_owned(),
                reason:
                    "the location is outside the catalog's warehouse (see 'location.rewrite-from')"
                        .to_owned(),
            })?;
        let display = warehouse.display(&path);
        // Every file Iceberg's reads name here (metadata files, manifest lists, manifests) is
        // written once under a fresh name: the disk tier may keep it.
        warehouse
            .read_immutable(&display, None, || async {
                let found = warehouse
                    .store()
                    .get(&path)
                    .await
                    .map_err(|e| Error::store(&display, e))?;
                found.bytes().await.map_err(|e| Error::store(&display, e))
            })
            .await
    }
}

/// The table whose current metadata file is at `location`, read and projected.
pub(super) async fn read_table(storage: &Storage, location: String) -> Result<IcebergTable> {
    let bytes = storage.read(&location).await?;
    let metadata: TableMetadata = serde_json::from_slice(&bytes).map_err(|e| Error::Invalid {
        location: location.clone(),
        reason: e.to_string(),
    })?;
    Ok(IcebergTable::from_metadata(location, &metadata))
}

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Storage::Warehouse(w) => w.fmt(f),
            Storage::Buckets { opened, .. } => f
                .debug_struct("Buckets")
                .field("opened", &opened.lock().keys().collect::<Vec<_>>())
                .finish(),
        }
    }
}
