//! The node-shared disk tier end to end (issue 20): planning an Iceberg table (metadata file,
//! manifest list, manifests) and a Paimon table (snapshot, schema, manifest list, manifests)
//! whose files are on a real S3-compatible server (SeaweedFS on loopback), in three states:
//!
//! - cold: a fresh node (new catalog manager, empty memory caches) without a disk tier — every
//!   file from S3;
//! - disk-warm: a fresh node whose disk tier already holds the files (what a restarted service,
//!   or a second process on the machine, sees);
//! - memory-warm: the same node planning again, every value in its memory caches.
//!
//! Skipped when `weed` is not installed. Run with `make bench-disk-planning`.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/common/seaweed.rs"]
#[allow(dead_code)]
mod seaweed;

use std::path::Path;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use metacache_sources::Sources;

/// A fresh node over the bucket, with the disk tier in `disk` when given.
fn node(endpoint: &str, disk: Option<&Path>) -> Arc<Sources> {
    let sources = common::sources();
    if let Some(dir) = disk {
        let manager = sources.manager();
        manager
            .set_config("external_meta_cache_disk_dir", &dir.display().to_string())
            .expect("disk dir");
        manager
            .set_config("external_meta_cache_disk_max_weight", "1GB")
            .expect("disk capacity");
    }
    common::create(
        &sources,
        "ice",
        [
            ("type", "iceberg".to_owned()),
            ("warehouse", "s3://bench/ice".to_owned()),
            (
                "location.rewrite-from",
                common::ICEBERG_WRITTEN_AT.to_owned(),
            ),
            ("s3.endpoint", endpoint.to_owned()),
            ("meta.cache.iceberg.manifest.enable", "true".to_owned()),
        ],
    );
    common::create(
        &sources,
        "pm",
        [
            ("type", "paimon".to_owned()),
            ("warehouse", "s3://bench/pm".to_owned()),
            ("s3.endpoint", endpoint.to_owned()),
        ],
    );
    sources
}

async fn plan(sources: &Sources, catalog: &str) {
    let (database, table) = if catalog == "ice" {
        ("shop", "trips")
    } else {
        ("shop", "events")
    };
    let connector = sources.connector(catalog).expect("connector");
    connector.schema(database, table).await.expect("schema");
    let files = connector.files(database, table, &[]).await.expect("files");
    assert!(!files.is_empty());
}

fn bench(c: &mut Criterion) {
    let Some(server) = seaweed::Seaweed::start(&["bench"]) else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let s3 = common::bucket_store(&server.s3_endpoint, "bench");
    let paimon =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/paimon/warehouse");
    rt.block_on(async {
        common::upload(s3.as_ref(), &common::iceberg_fixture(), "ice").await;
        common::upload(s3.as_ref(), &paimon, "pm").await;
    });
    let disk = tempfile::tempdir().expect("disk dir");
    let endpoint = server.s3_endpoint.clone();
    for (catalog, name) in [("ice", "iceberg"), ("pm", "paimon")] {
        // Fill the disk tier once.
        rt.block_on(plan(&node(&endpoint, Some(disk.path())), catalog));
        let mut group = c.benchmark_group(format!("disk_tier/{name}_planning_on_s3"));
        group.bench_function("cold (fresh node, no disk tier)", |b| {
            b.iter_batched(
                || node(&endpoint, None),
                |sources| rt.block_on(plan(&sources, catalog)),
                BatchSize::PerIteration,
            )
        });
        group.bench_function("disk-warm (fresh node)", |b| {
            b.iter_batched(
                || node(&endpoint, Some(disk.path())),
                |sources| {
                    rt.block_on(plan(&sources, catalog));
                    let stats = sources.manager().disk_stats().expect("a disk tier");
                    assert_eq!(stats.misses, 0, "every file from disk: {stats:?}");
                },
                BatchSize::PerIteration,
            )
        });
        let warm = node(&endpoint, Some(disk.path()));
        rt.block_on(plan(&warm, catalog));
        group.bench_function("memory-warm", |b| {
            b.iter(|| rt.block_on(plan(&warm, catalog)))
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
