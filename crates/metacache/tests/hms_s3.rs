//! An HMS catalog whose tables and partitions the metastore records on S3 (issue 16): the data
//! files on SeaweedFS, the locations `s3://lake/wh/…` in a real Hive Metastore, and metacache
//! listing the partitions there through `object_store`'s S3 client.
//!
//! Spark cannot write to S3 here (hadoop-aws is in no registry this project uses), so the
//! fixture is written locally through the metastore's Thrift API, its files are uploaded to
//! SeaweedFS, and the table and partitions are moved there with `alter_table` /
//! `alter_partitions`, as `ALTER TABLE … SET LOCATION` after a copy does.

mod common;
#[path = "../../metacache-sources/tests/common/seaweed.rs"]
#[allow(dead_code)]
mod seaweed;

use common::hms::{Metastore, metastore_jars};
use common::*;
use seaweed::Seaweed;

#[test]
fn partitions_recorded_on_s3_are_listed_there() {
    let Some(jars) = metastore_jars() else { return };
    let Some(s3) = Seaweed::start(&["lake"]) else {
        return;
    };
    let (tmp, data) = data_dir();
    let metastore = Metastore::start(&jars, tmp.path());
    let local = tmp.path().join("warehouse");
    metastore.fill(&local, 3);
    assert!(upload(&s3.s3_endpoint, "lake", "wh", &local) >= 4);
    metastore.relocate("sales", "orders", &local, "s3://lake/wh");
    metastore.relocate("sales", "customers", &local, "s3://lake/wh");
    // The local copies go: whatever metacache lists now comes from S3.
    std::fs::remove_dir_all(&local).expect("remove the local files");

    let server = Server::start(&data, &[]);
    server.query(&format!(
        "CREATE CATALOG lake PROPERTIES ('type'='hms', 'hive.metastore.uris'='{}', \
         'warehouse'='s3://lake/wh', 's3.endpoint'='{}')",
        metastore.uri(),
        s3.s3_endpoint
    ));
    assert_eq!(
        server.query("SHOW PARTITIONS FROM lake.sales.orders"),
        "Partition\ndt=2024-01-01\ndt=2024-01-02\ndt=2024-01-03\n"
    );
    let (status, body) = server.http(
        "GET",
        "/api/v1/catalogs/lake/databases/sales/tables/orders/files?dt=2024-01-02",
        None,
        None,
    );
    assert_eq!(status, 200, "{body}");
    let files: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(files["file_count"], 1, "{body}");
    let path = files["partitions"][0]["files"][0]["path"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(
        path, "s3://lake/wh/sales.db/orders/dt=2024-01-02/part-00000.parquet",
        "{body}"
    );
    assert_eq!(files["partitions"][0]["files"][0]["size"], 101, "{body}");
    let (status, body) = server.http(
        "GET",
        "/api/v1/catalogs/lake/databases/sales/tables/customers/files",
        None,
        None,
    );
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("s3://lake/wh/sales.db/customers/part-00000.parquet"),
        "{body}"
    );
    // A location outside the catalog's warehouse is an error that says so, not a read elsewhere.
    server.query(&format!(
        "CREATE CATALOG elsewhere PROPERTIES ('type'='hms', 'hive.metastore.uris'='{}', \
         'warehouse'='s3://lake/other', 's3.endpoint'='{}')",
        metastore.uri(),
        s3.s3_endpoint
    ));
    let error = server.fails("DESC elsewhere.sales.orders");
    assert!(
        error.contains("outside the catalog's 'warehouse'"),
        "{error}"
    );
}
