//! Cold against warm planning metadata — the partitions and file listing of a 10,000-file
//! Hive-style table (100 partitions × 100 files) — on the local file system and on a real
//! S3-compatible server (SeaweedFS on loopback, skipped when `weed` is not installed).
//!
//! cold: `REFRESH TABLE`, then plan (table object, partition walk, view, 100 listings);
//! warm: plan again with every value cached. Also an Iceberg table's metadata and manifests,
//! cold against warm. Run with `make bench-planning`; the ratios are what
//! docs/benchmarks.md reports.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/common/seaweed.rs"]
#[allow(dead_code)]
mod seaweed;

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use metacache_sources::{Connector, Sources};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

const PARTITIONS: usize = 100;
const FILES_PER_PARTITION: usize = 100;

const TABLE_JSON: &str = r#"{"columns": [{"name": "id", "type": "bigint"}, {"name": "v", "type": "string"}],
 "partition_keys": [{"name": "dt", "type": "string"}], "format": "parquet"}"#;

/// Every object of the table: relative key and content.
fn table_objects() -> Vec<(String, &'static [u8])> {
    let mut objects = vec![(
        "big.db/events/_table.json".to_owned(),
        TABLE_JSON.as_bytes(),
    )];
    for p in 0..PARTITIONS {
        for f in 0..FILES_PER_PARTITION {
            objects.push((
                format!(
                    "big.db/events/dt=2024-{:02}-{:02}/part-{f:05}-c000.parquet",
                    p / 28 + 1,
                    p % 28 + 1
                ),
                b"PAR1",
            ));
        }
    }
    objects
}

async fn plan(connector: &dyn Connector) -> usize {
    let groups = connector.files("big", "events", &[]).await.expect("files");
    let files: usize = groups.iter().map(|g| g.files.files.len()).sum();
    assert_eq!(files, PARTITIONS * FILES_PER_PARTITION);
    files
}

fn compare(
    c: &mut Criterion,
    rt: &tokio::runtime::Runtime,
    label: &str,
    sources: &Sources,
    catalog: &str,
) {
    let connector = sources.connector(catalog).expect("connector");
    let manager = Arc::clone(sources.manager());
    let mut group = c.benchmark_group(format!("planning_10k_files/{label}"));
    group.sample_size(20);
    group.bench_function("cold", |b| {
        b.iter(|| {
            manager
                .refresh_table(catalog, "big", "events")
                .expect("refresh");
            rt.block_on(plan(connector.as_ref()))
        })
    });
    rt.block_on(plan(connector.as_ref()));
    group.sample_size(100);
    group.bench_function("warm", |b| b.iter(|| rt.block_on(plan(connector.as_ref()))));
    group.finish();
}

/// Iceberg: the table's metadata and every manifest of its current snapshot (the pyiceberg
/// fixture, manifest cache enabled), cold after `REFRESH TABLE` against warm.
fn iceberg(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    let sources = common::sources();
    common::create_iceberg(
        &sources,
        "ice",
        &common::iceberg_fixture(),
        true,
        &[("meta.cache.iceberg.manifest.enable", "true")],
    );
    let connector = sources.connector("ice").expect("connector");
    let load = || async {
        connector.schema("shop", "trips").await.expect("schema");
        let files = connector.files("shop", "trips", &[]).await.expect("files");
        assert!(!files.is_empty());
    };
    let manager = Arc::clone(sources.manager());
    let mut group = c.benchmark_group("iceberg_table_and_manifests/local_fs");
    group.bench_function("cold", |b| {
        b.iter(|| {
            manager
                .refresh_table("ice", "shop", "trips")
                .expect("refresh");
            rt.block_on(load())
        })
    });
    rt.block_on(load());
    group.bench_function("warm", |b| b.iter(|| rt.block_on(load())));
    group.finish();
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");

    iceberg(c, &rt);

    let dir = tempfile::tempdir().expect("temp dir");
    for (key, bytes) in table_objects() {
        let path = dir.path().join(&key);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, bytes).expect("write");
    }
    let local = common::sources();
    common::create_hive(&local, "local", &common::url(dir.path()), &[]);
    compare(c, &rt, "local_fs", &local, "local");

    let Some(server) = seaweed::Seaweed::start(&["bench"]) else {
        return;
    };
    let s3: Arc<dyn ObjectStore> = common::bucket_store(&server.s3_endpoint, "bench");
    rt.block_on(async {
        use futures::StreamExt;
        futures::stream::iter(table_objects().into_iter().map(|(key, bytes)| {
            let s3 = Arc::clone(&s3);
            async move {
                let path = Path::parse(format!("wh/{key}")).expect("path");
                s3.put(&path, PutPayload::from_static(bytes))
                    .await
                    .expect("put");
            }
        }))
        .buffer_unordered(32)
        .collect::<Vec<()>>()
        .await;
    });
    let remote = common::sources();
    let endpoint = [("s3.endpoint", server.s3_endpoint.as_str())];
    common::create_hive(&remote, "s3", "s3://bench/wh", &endpoint);
    compare(c, &rt, "s3_seaweedfs", &remote, "s3");
}

criterion_group!(benches, bench);
criterion_main!(benches);
