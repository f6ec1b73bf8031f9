//! The connectors against a real S3-compatible server (SeaweedFS on loopback): the fixture
//! warehouses uploaded to a bucket read the same as on the local file system, through the same
//! caches; REFRESH TABLE shows a new object; a missing bucket is a clear error.

mod common;
#[path = "common/seaweed.rs"]
mod seaweed;

use std::sync::Arc;

use common::{
    ICEBERG_WRITTEN_AT, create_hive, fixture_warehouse, iceberg_fixture, sources, stats, upload,
};
use metacache_engines::builtin::hive;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use seaweed::Seaweed;

fn bucket_store(server: &Seaweed, bucket: &str) -> Arc<dyn ObjectStore> {
    common::bucket_store(&server.s3_endpoint, bucket)
}

/// Copies the fixture warehouse to `s3://hive/<prefix>/`, keeping object names byte for byte.
async fn upload_fixture(s3: &dyn ObjectStore, prefix: &str) -> usize {
    upload(s3, &fixture_warehouse(), prefix).await
}

fn s3_props(server: &Seaweed) -> Vec<(&'static str, String)> {
    vec![
        ("s3.endpoint", server.s3_endpoint.clone()),
        ("s3.region", "us-east-1".to_owned()),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warehouse_on_s3_reads_like_the_local_one() {
    let Some(server) = Seaweed::start(&["hive"]) else {
        return;
    };
    let s3 = bucket_store(&server, "hive");
    assert!(upload_fixture(s3.as_ref(), "wh").await > 20);

    let sources = sources();
    let props = s3_props(&server);
    let extra: Vec<(&str, &str)> = props.iter().map(|(k, v)| (*k, v.as_str())).collect();
    create_hive(&sources, "lake", "s3://hive/wh", &extra);
    let c = sources.connector("lake").expect("connector");
    assert_eq!(c.databases().await.expect("dbs"), ["sales", "web"]);
    assert_eq!(
        c.tables("sales").await.expect("tables"),
        ["customers", "orders"]
    );
    assert_eq!(
        c.schema("sales", "orders")
            .await
            .expect("schema")
            .columns
            .len(),
        6
    );
    let partitions = c
        .partitions("sales", "orders", &[])
        .await
        .expect("partitions");
    assert_eq!(partitions.len(), 6);
    assert_eq!(
        partitions[0].location.as_deref(),
        Some("s3://hive/wh/sales.db/orders/dt=2024-01-01/region=eu")
    );
    let events = c.partitions("web", "events", &[]).await.expect("events");
    assert_eq!(events[0].values, ["2024-01-01 10:00"]);
    let files = c.files("sales", "orders", &[]).await.expect("files");
    let paths: Vec<&str> = files
        .iter()
        .flat_map(|g| g.files.files.iter().map(|f| f.path.as_str()))
        .collect();
    assert_eq!(paths.len(), 12, "{paths:?}");
    assert!(paths[0].starts_with("s3://hive/wh/sales.db/orders/dt=2024-01-01/region=eu/part-"));
    let event_files = c.files("web", "events", &[]).await.expect("event files");
    assert!(
        event_files.iter().all(|g| g.files.files.len() == 1),
        "{event_files:?}"
    );

    // Warm: the second planning request is answered from the caches.
    c.files("sales", "orders", &[]).await.expect("warm");
    let file = stats(&sources, "lake", hive::FILE);
    // 6 orders partitions (loaded once, then hit) and 3 events partitions.
    assert_eq!((file.load_success_count, file.hit_count), (9, 6));

    // A new object is visible after REFRESH TABLE, not before.
    let new =
        Path::parse("wh/sales.db/orders/dt=2024-01-01/region=eu/part-00002-c000.zstd.parquet")
            .expect("path");
    s3.put(&new, PutPayload::from_static(b"PAR1"))
        .await
        .expect("put");
    let count = |groups: &[metacache_sources::PartitionFiles]| {
        groups.iter().map(|g| g.files.files.len()).sum::<usize>()
    };
    assert_eq!(
        count(&c.files("sales", "orders", &[]).await.expect("cached")),
        12
    );
    sources
        .manager()
        .refresh_table("lake", "sales", "orders")
        .expect("refresh");
    assert_eq!(
        count(&c.files("sales", "orders", &[]).await.expect("fresh")),
        13
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_bucket_is_a_clear_error_and_is_not_cached() {
    let Some(server) = Seaweed::start(&["hive"]) else {
        return;
    };
    let sources = sources();
    let props = s3_props(&server);
    let extra: Vec<(&str, &str)> = props.iter().map(|(k, v)| (*k, v.as_str())).collect();
    create_hive(&sources, "lake", "s3://no-such-bucket/wh", &extra);
    let c = sources.connector("lake").expect("connector");
    let error = c.databases().await.expect_err("no bucket");
    let message = error.to_string();
    assert!(
        message.starts_with("Reading s3://no-such-bucket/wh failed"),
        "{message}"
    );
    assert!(c.schema("sales", "orders").await.is_err());
    let table = stats(&sources, "lake", hive::TABLE);
    assert_eq!((table.load_failure_count, table.estimated_size), (1, 0));
    assert!(table.last_error.is_some());
}

#[cfg(feature = "iceberg")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn iceberg_tables_on_s3_read_like_the_local_ones() {
    let Some(server) = Seaweed::start(&["hive"]) else {
        return;
    };
    let s3 = bucket_store(&server, "hive");
    upload(s3.as_ref(), &iceberg_fixture(), "ice").await;
    let sources = sources();
    common::create(
        &sources,
        "lake",
        [
            ("type", "iceberg".to_owned()),
            ("warehouse", "s3://hive/ice".to_owned()),
            ("location.rewrite-from", ICEBERG_WRITTEN_AT.to_owned()),
            ("s3.endpoint", server.s3_endpoint.clone()),
        ],
    );
    let c = sources.connector("lake").expect("connector");
    assert_eq!(c.databases().await.expect("ns"), ["shop"]);
    assert_eq!(
        c.tables("shop").await.expect("tables"),
        ["customers", "trips"]
    );
    assert_eq!(
        c.partitions("shop", "trips", &[])
            .await
            .expect("partitions")
            .len(),
        4
    );
    let files = c.files("shop", "trips", &[]).await.expect("files");
    let first = &files[0].files.files[0].path;
    assert!(
        first.starts_with("s3://hive/ice/shop/trips/data/pickup_day=2024-01-01/"),
        "{first}"
    );
    assert!(c.snapshots("shop", "trips").await.expect("snapshots").len() >= 5);
}

/// The newest metadata file of a fixture table, relative to the fixture root.
#[cfg(feature = "iceberg")]
fn newest_metadata(table: &str) -> String {
    let dir = iceberg_fixture().join("shop").join(table).join("metadata");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("metadata dir")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".metadata.json"))
        .collect();
    names.sort();
    format!(
        "shop/{table}/metadata/{}",
        names.pop().expect("a metadata file")
    )
}

#[cfg(feature = "iceberg")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn iceberg_rest_catalog_names_tables_whose_files_are_read_from_s3() {
    let Some(server) = Seaweed::start(&["hive"]) else {
        return;
    };
    // As a migration would: create the namespace, copy the tables' files into the REST
    // catalog's table bucket, register each table by its newest metadata file.
    let rest = server.iceberg_endpoint.clone();
    let post = move |path: String, body: String| {
        let rest = rest.clone();
        tokio::task::spawn_blocking(move || {
            let response = ureq::post(&format!("{rest}/v1/warehouse{path}"))
                .header("content-type", "application/json")
                .send(body)
                .expect("REST call");
            assert!(
                response.status().is_success(),
                "{path}: {}",
                response.status()
            );
        })
    };
    post("/namespaces".into(), r#"{"namespace": ["shop"]}"#.into())
        .await
        .expect("namespace");
    let s3 = bucket_store(&server, "warehouse");
    upload(s3.as_ref(), &iceberg_fixture().join("shop"), "shop").await;
    for table in ["trips", "customers"] {
        let body = format!(
            r#"{{"name": "{table}", "metadata-location": "s3://warehouse/{}"}}"#,
            newest_metadata(table)
        );
        post("/namespaces/shop/register".into(), body)
            .await
            .expect("register");
    }

    let sources = sources();
    common::create(
        &sources,
        "rest",
        [
            ("type", "iceberg".to_owned()),
            ("iceberg.catalog.type", "rest".to_owned()),
            ("uri", server.iceberg_endpoint.clone()),
            ("warehouse", "warehouse".to_owned()),
            ("s3.endpoint", server.s3_endpoint.clone()),
            ("location.rewrite-from", ICEBERG_WRITTEN_AT.to_owned()),
            ("location.rewrite-to", "s3://warehouse".to_owned()),
        ],
    );
    let c = sources.connector("rest").expect("connector");
    assert_eq!(c.databases().await.expect("ns"), ["shop"]);
    assert_eq!(
        c.tables("shop").await.expect("tables"),
        ["customers", "trips"]
    );
    assert_eq!(
        c.schema("shop", "trips")
            .await
            .expect("schema")
            .columns
            .len(),
        5
    );
    assert_eq!(
        c.partitions("shop", "trips", &[]).await.expect("p").len(),
        4
    );
    let files = c.files("shop", "trips", &[]).await.expect("files");
    let first = &files[0].files.files[0].path;
    assert!(
        first.starts_with("s3://warehouse/shop/trips/data/"),
        "{first}"
    );
    let info = c.table("shop", "trips").await.expect("table");
    assert_eq!(info.location, "s3://warehouse/shop/trips");
    let e = c.schema("shop", "nope").await.expect_err("unknown");
    assert!(e.is_not_found(), "{e}");
    let e = c.tables("nope").await.expect_err("unknown namespace");
    assert!(e.is_not_found(), "{e}");

    // With vended credentials the table object is not shared between users (no
    // iceberg-table cache), and the comment gets its own cache.
    let mut props = sources
        .manager()
        .catalog("rest")
        .expect("catalog")
        .def()
        .properties;
    props.insert("iceberg.rest.vended-credentials-enabled", "true");
    let pairs: Vec<(String, String)> = props
        .map()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    common::create(&sources, "vended", pairs);
    let vended = sources.connector("vended").expect("connector");
    for _ in 0..2 {
        let info = vended.table("shop", "trips").await.expect("table");
        assert_eq!(info.comment, "taxi trips by day");
    }
    let comment = stats(
        &sources,
        "vended",
        metacache_engines::builtin::iceberg::COMMENT,
    );
    assert_eq!((comment.load_success_count, comment.hit_count), (1, 1));
    let rows = sources
        .manager()
        .catalog("vended")
        .expect("catalog")
        .cache_rows();
    assert!(
        !rows
            .iter()
            .any(|r| r.stats.entry_name == metacache_engines::builtin::iceberg::TABLE),
        "no shared table cache with vended credentials"
    );
}

#[cfg(feature = "paimon")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paimon_tables_on_s3_read_like_the_local_ones() {
    let Some(server) = Seaweed::start(&["hive"]) else {
        return;
    };
    let s3 = bucket_store(&server, "hive");
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/paimon/warehouse");
    assert!(upload(s3.as_ref(), &fixture, "pm").await > 40);

    let sources = sources();
    let mut props: Vec<(&str, String)> = s3_props(&server);
    props.push(("type", "paimon".to_owned()));
    props.push(("warehouse", "s3://hive/pm".to_owned()));
    common::create(&sources, "pm", props);
    let c = sources.connector("pm").expect("connector");
    assert_eq!(c.tables("shop").await.expect("tables").len(), 8);
    let partitions = c
        .partitions("shop", "events", &[])
        .await
        .expect("partitions");
    let names: Vec<&str> = partitions.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "dt=2024-01-01",
            "dt=2024-01-02",
            "dt=2024-01-03",
            "dt=2024-01-04"
        ]
    );
    let files = c.files("shop", "events", &[]).await.expect("files");
    let first = &files[0].files.files[0];
    assert!(
        first
            .path
            .starts_with("s3://hive/pm/shop.db/events/dt=2024-01-01/bucket-0/data-"),
        "{}",
        first.path
    );
    c.partitions("shop", "events", &[]).await.expect("warm");
    let view = stats(
        &sources,
        "pm",
        metacache_engines::builtin::paimon::PARTITION_VIEW,
    );
    assert_eq!((view.miss_count, view.hit_count), (1, 1));
}
