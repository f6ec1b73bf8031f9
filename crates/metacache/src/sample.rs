//! The sample catalogs of a first start: the committed fixtures of `tests/fixtures/` embedded in
//! the binary and copied into the data directory — `sample` over a small Hive-style warehouse
//! and `sample_iceberg` over Iceberg tables written by pyiceberg (a SQLite SQL catalog) — so a
//! newcomer's first `SHOW PARTITIONS` reads real metadata.
//!
//! Created once per data directory: only when `<data_dir>/sample-warehouse` does not exist yet
//! and the store holds no catalog. Dropping them is therefore permanent.

use std::path::Path;

use anyhow::Context;
use include_dir::{Dir, include_dir};
use metacache_catalog::{CatalogManager, CreateCatalog, Properties};

static WAREHOUSE: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../tests/fixtures/hive/warehouse");
static ICEBERG: Dir<'_> =
    include_dir!("$CARGO_MANIFEST_DIR/../../tests/fixtures/iceberg/warehouse");
/// Where pyiceberg wrote the Iceberg fixture (`tests/fixtures/iceberg/make_warehouse.py`).
const ICEBERG_WRITTEN_AT: &str = "file:///tmp/metacache-iceberg-fixture";

/// The Hive catalog's name.
pub const NAME: &str = "sample";
/// The Iceberg catalog's name.
pub const ICEBERG_NAME: &str = "sample_iceberg";

/// Creates the sample catalog if this is the first start of `data_dir`; returns whether it did.
pub fn create_on_first_start(manager: &CatalogManager, data_dir: &Path) -> anyhow::Result<bool> {
    let target = data_dir.join("sample-warehouse");
    if target.exists() || !manager.catalogs().is_empty() {
        return Ok(false);
    }
    let staging = data_dir.join(".sample-warehouse.tmp");
    if staging.exists() {
        std::fs::remove_dir_all(&staging)
            .with_context(|| format!("removing {}", staging.display()))?;
    }
    let (hive, iceberg) = (staging.join("hive"), staging.join("iceberg"));
    for dir in [&hive, &iceberg] {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    WAREHOUSE
        .extract(&hive)
        .with_context(|| format!("writing the sample warehouse to {}", hive.display()))?;
    ICEBERG
        .extract(&iceberg)
        .with_context(|| format!("writing the sample warehouse to {}", iceberg.display()))?;
    std::fs::rename(&staging, &target)
        .with_context(|| format!("moving the sample warehouse to {}", target.display()))?;
    let location = std::fs::canonicalize(&target)
        .with_context(|| format!("resolving {}", target.display()))?;
    manager.create_catalog(CreateCatalog {
        name: NAME.to_owned(),
        if_not_exists: true,
        comment: "sample Hive-style warehouse bundled with metacache".to_owned(),
        properties: Properties::from_pairs([
            ("type", "hms".to_owned()),
            (
                "warehouse",
                format!("file://{}", location.join("hive").display()),
            ),
        ]),
    })?;
    let iceberg = location.join("iceberg");
    manager.create_catalog(CreateCatalog {
        name: ICEBERG_NAME.to_owned(),
        if_not_exists: true,
        comment: "sample Iceberg tables bundled with metacache".to_owned(),
        properties: Properties::from_pairs([
            ("type", "iceberg".to_owned()),
            ("iceberg.catalog.type", "jdbc".to_owned()),
            (
                "uri",
                format!("sqlite://{}", iceberg.join("catalog.db").display()),
            ),
            ("warehouse", format!("file://{}", iceberg.display())),
            ("location.rewrite-from", ICEBERG_WRITTEN_AT.to_owned()),
        ]),
    })?;
    Ok(true)
}
