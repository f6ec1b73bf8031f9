//! The sample catalogs of a first start: the committed fixtures of `tests/fixtures/` embedded in
//! the binary and copied into the data directory — `sample` over a small Hive-style warehouse,
//! `sample_iceberg` over Iceberg tables written by pyiceberg (a SQLite SQL catalog),
//! `sample_paimon` over Paimon tables written by pypaimon and `sample_lance` over a Lance
//! directory namespace written by pylance — so a newcomer's first `SHOW PARTITIONS` reads real
//! metadata.
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
static PAIMON: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../tests/fixtures/paimon/warehouse");
static LANCE: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../tests/fixtures/lance/namespace");
/// Where pyiceberg wrote the Iceberg fixture (`tests/fixtures/iceberg/make_warehouse.py`).
const ICEBERG_WRITTEN_AT: &str = "file:///tmp/metacache-iceberg-fixture";

/// The Hive catalog's name.
pub const NAME: &str = "sample";
/// The Iceberg catalog's name.
pub const ICEBERG_NAME: &str = "sample_iceberg";
/// The Paimon catalog's name.
pub const PAIMON_NAME: &str = "sample_paimon";
/// The Lance catalog's name.
pub const LANCE_NAME: &str = "sample_lance";

/// The bundled fixtures: directory under `sample-warehouse/`, contents.
const FIXTURES: [(&str, &Dir<'_>); 4] = [
    ("hive", &WAREHOUSE),
    ("iceberg", &ICEBERG),
    ("paimon", &PAIMON),
    ("lance", &LANCE),
];

/// A catalog to create: name, comment, properties.
type SampleCatalog<'a> = (&'a str, &'a str, Vec<(&'a str, String)>);

/// Creates the sample catalogs if this is the first start of `data_dir`; returns whether it
/// did.
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
    for (name, contents) in FIXTURES {
        let dir = staging.join(name);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        contents
            .extract(&dir)
            .with_context(|| format!("writing the sample warehouse to {}", dir.display()))?;
    }
    std::fs::rename(&staging, &target)
        .with_context(|| format!("moving the sample warehouse to {}", target.display()))?;
    let location = std::fs::canonicalize(&target)
        .with_context(|| format!("resolving {}", target.display()))?;
    let url = |dir: &str| format!("file://{}", location.join(dir).display());
    let iceberg = location.join("iceberg");
    let catalogs: [SampleCatalog<'_>; 4] = [
        (
            NAME,
            "sample Hive-style warehouse bundled with metacache",
            vec![("type", "hms".to_owned()), ("warehouse", url("hive"))],
        ),
        (
            ICEBERG_NAME,
            "sample Iceberg tables bundled with metacache",
            vec![
                ("type", "iceberg".to_owned()),
                ("iceberg.catalog.type", "jdbc".to_owned()),
                (
                    "uri",
                    format!("sqlite://{}", iceberg.join("catalog.db").display()),
                ),
                ("warehouse", url("iceberg")),
                ("location.rewrite-from", ICEBERG_WRITTEN_AT.to_owned()),
            ],
        ),
        (
            PAIMON_NAME,
            "sample Paimon tables bundled with metacache",
            vec![("type", "paimon".to_owned()), ("warehouse", url("paimon"))],
        ),
        (
            LANCE_NAME,
            "sample Lance directory namespace bundled with metacache",
            vec![("type", "lance".to_owned()), ("warehouse", url("lance"))],
        ),
    ];
    for (name, comment, properties) in catalogs {
        manager.create_catalog(CreateCatalog {
            name: name.to_owned(),
            if_not_exists: true,
            comment: comment.to_owned(),
            properties: Properties::from_pairs(properties),
        })?;
    }
    Ok(true)
}
