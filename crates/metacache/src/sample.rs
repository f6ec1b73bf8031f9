//! The sample catalog of a first start: a small Hive-style warehouse (the committed fixture of
//! `tests/fixtures/hive/`) embedded in the binary, copied into the data directory, and a
//! catalog `sample` over it — so a newcomer's first `SHOW PARTITIONS` reads real metadata.
//!
//! Created once per data directory: only when `<data_dir>/sample-warehouse` does not exist yet
//! and the store holds no catalog. Dropping the catalog is therefore permanent.

use std::path::Path;

use anyhow::Context;
use include_dir::{Dir, include_dir};
use metacache_catalog::{CatalogManager, CreateCatalog, Properties};

static WAREHOUSE: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../tests/fixtures/hive/warehouse");

/// The catalog's name.
pub const NAME: &str = "sample";

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
    std::fs::create_dir_all(&staging).with_context(|| format!("creating {}", staging.display()))?;
    WAREHOUSE
        .extract(&staging)
        .with_context(|| format!("writing the sample warehouse to {}", staging.display()))?;
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
            ("warehouse", format!("file://{}", location.display())),
        ]),
    })?;
    Ok(true)
}
