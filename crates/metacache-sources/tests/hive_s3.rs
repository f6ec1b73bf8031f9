//! The Hive connector against a real S3-compatible server (SeaweedFS on loopback): the fixture
//! warehouse uploaded to a bucket reads the same as on the local file system, through the same
//! caches; REFRESH TABLE shows a new object; a missing bucket is a clear error.

mod common;
#[path = "common/seaweed.rs"]
mod seaweed;

use std::sync::Arc;

use common::{create_hive, fixture_warehouse, sources, stats};
use futures::TryStreamExt;
use metacache_engines::builtin::hive;
use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use seaweed::Seaweed;

fn bucket_store(server: &Seaweed, bucket: &str) -> Arc<dyn ObjectStore> {
    Arc::new(
        AmazonS3Builder::new()
            .with_bucket_name(bucket)
            .with_region("us-east-1")
            .with_endpoint(&server.s3_endpoint)
            .with_allow_http(true)
            .with_skip_signature(true)
            .build()
            .expect("s3 client"),
    )
}

/// Copies the fixture warehouse to `s3://hive/<prefix>/`, keeping object names byte for byte.
async fn upload_fixture(s3: &dyn ObjectStore, prefix: &str) -> usize {
    let local = LocalFileSystem::new_with_prefix(fixture_warehouse()).expect("fixture");
    let objects: Vec<_> = local.list(None).try_collect().await.expect("list fixture");
    for object in &objects {
        let bytes = local
            .get(&object.location)
            .await
            .expect("get")
            .bytes()
            .await
            .expect("bytes");
        let target = Path::parse(format!("{prefix}/{}", object.location)).expect("path");
        s3.put(&target, PutPayload::from(bytes)).await.expect("put");
    }
    objects.len()
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
