//! A Paimon table's files as the connector and its refresher read them: the table directory,
//! `<prefix><id>` listings (snapshots, schemas), and the newest snapshot.
//!
//! `paimon-latest-snapshot` refreshes ahead by default (§8.3): its change check is one listing
//! of the snapshot directory; the same newest id renews the cached snapshot without reading it.

use std::sync::Arc;

use metacache_cache::{Cached, Refreshed, refresher};
use metacache_catalog::{Catalog, TableKey};

use super::format::{self, SnapshotFile};
use super::{LATEST_SNAPSHOT, LatestSnapshot};
use crate::warehouse::Warehouse;
use crate::{Error, Result};

/// The directory of `database.table`, relative to the warehouse root.
pub(super) fn table_dir(database: &str, table: &str) -> String {
    format!("{database}.db/{table}")
}

/// The bytes of `relative`, `None` if it does not exist. Every file Paimon's reads name here
/// (snapshots, schemas, manifest lists, manifests) is written once and never changed, so it
/// goes through the node's disk tier when there is one.
pub(super) async fn read(warehouse: &Warehouse, relative: &str) -> Result<Option<bytes::Bytes>> {
    warehouse
        .read_immutable_path(&warehouse.path(relative))
        .await
}

/// The bytes of `relative` and its location; a missing file is an error.
pub(super) async fn read_required(
    warehouse: &Warehouse,
    relative: &str,
) -> Result<(bytes::Bytes, String)> {
    let location = warehouse.display(&warehouse.path(relative));
    match read(warehouse, relative).await? {
        Some(bytes) => Ok((bytes, location)),
        None => Err(Error::Invalid {
            location,
            reason: "the file is missing".to_owned(),
        }),
    }
}

/// The ids of the `<prefix><id>` files of a table directory, ascending.
pub(super) async fn ids(warehouse: &Warehouse, dir: &str, prefix: &str) -> Result<Vec<i64>> {
    let path = warehouse.path(dir);
    let listed = warehouse
        .store()
        .list_with_delimiter(Some(&path))
        .await
        .map_err(|e| Error::store(warehouse.display(&path), e))?;
    let mut ids: Vec<i64> = listed
        .objects
        .iter()
        .filter_map(|o| o.location.filename()?.strip_prefix(prefix)?.parse().ok())
        .collect();
    ids.sort_unstable();
    Ok(ids)
}

/// The newest snapshot of `database.table` (an unknown table is an error). With `known`, the
/// id of a snapshot read before: `Ok(None)` when it is still the newest (nothing is read).
pub(super) async fn newest_snapshot(
    warehouse: &Warehouse,
    catalog: &str,
    database: &str,
    table: &str,
    known: Option<i64>,
) -> Result<Option<LatestSnapshot>> {
    let dir = table_dir(database, table);
    let Some(&id) = ids(warehouse, &format!("{dir}/snapshot"), "snapshot-")
        .await?
        .last()
    else {
        if ids(warehouse, &format!("{dir}/schema"), "schema-")
            .await?
            .is_empty()
        {
            let name = format!("{database}.{table}");
            return Err(Error::not_found(catalog, "table", name));
        }
        return Ok(Some(LatestSnapshot(None)));
    };
    if known == Some(id) {
        return Ok(None);
    }
    let (bytes, location) =
        read_required(warehouse, &format!("{dir}/snapshot/snapshot-{id}")).await?;
    let file: SnapshotFile = format::parse_json(&bytes, &location)?;
    Ok(Some(LatestSnapshot(Some(file.into()))))
}

/// [`newest_snapshot`] without a known id: always an answer.
pub(super) async fn latest_snapshot(
    warehouse: &Warehouse,
    catalog: &str,
    database: &str,
    table: &str,
    known: Option<i64>,
) -> Result<LatestSnapshot> {
    Ok(newest_snapshot(warehouse, catalog, database, table, known)
        .await?
        .unwrap_or(LatestSnapshot(None)))
}

/// Registers the refresher of `paimon-latest-snapshot`: a listing of the snapshot directory,
/// and the snapshot file only when a newer one is there.
pub(super) fn register_refresher(catalog: &Catalog, warehouse: &Warehouse) {
    let (w, name) = (warehouse.clone(), catalog.name());
    catalog.set_refresher(
        &LATEST_SNAPSHOT,
        refresher(move |key: TableKey, old: Cached<LatestSnapshot>| {
            let (w, name) = (w.clone(), Arc::clone(&name));
            async move {
                let known = old.0.as_ref().map(|s| s.id);
                Ok(
                    match newest_snapshot(&w, &name, &key.database, &key.table, known).await? {
                        Some(latest) => Refreshed::Changed(latest),
                        None => Refreshed::Unchanged,
                    },
                )
            }
        }),
    );
}
