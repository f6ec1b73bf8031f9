//! Disk hits of one process on the same blocks: metacache's disk tier (shared gate, ledger
//! fence, open + read + CRC of the block file); foyer's hybrid cache on its block engine with a
//! memory tier too small to hold a value (so every `get` is served from its device), and the
//! same engine's `storage().load` alone (no memory tier); and a raw `std::fs::read` of the
//! tier's block files (no lock, no checksum: the floor).
//!
//! ```sh
//! cargo bench -p metacache-disk --features foyer-bench --bench hits
//! ```

use std::hint::black_box;
use std::path::PathBuf;

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use foyer::{
    BlockEngineConfig, DeviceBuilder, FsDeviceBuilder, HybridCache, HybridCacheBuilder,
    HybridCachePolicy, PsyncIoEngineConfig,
};
use metacache_disk::layout::{BlockId, Layout};
use metacache_disk::{BlockKey, DiskTier, Options};

const COUNT: usize = 2_000;
const SIZE: usize = 16 * 1024;

fn payload(i: usize) -> Vec<u8> {
    (0..SIZE).map(|b| (i + b) as u8).collect()
}

fn location(i: usize) -> String {
    format!("s3://bench/t/metadata/{i:06}.avro")
}

fn hits(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("dir");

    // metacache: publish every block, then read them back.
    let tier = DiskTier::open(
        &dir.path().join("metacache"),
        Options::with_capacity(1 << 30),
    );
    runtime.block_on(async {
        for i in 0..COUNT {
            let bytes = Bytes::from(payload(i));
            tier.read_through(BlockKey::new(&location(i)), "bench", || async {
                Ok::<_, ()>(bytes)
            })
            .await
            .expect("publish");
        }
    });
    assert_eq!(tier.stats().blocks, Some(COUNT as u64));

    // foyer: the same values written to its device, its memory tier 1 KiB.
    let foyer: HybridCache<String, Vec<u8>> = runtime.block_on(async {
        let device = FsDeviceBuilder::new(dir.path().join("foyer"))
            .with_capacity(1 << 30)
            .build()
            .expect("device");
        let cache = HybridCacheBuilder::new()
            .with_policy(HybridCachePolicy::WriteOnInsertion)
            .memory(1024)
            .with_weighter(|_: &String, v: &Vec<u8>| v.len())
            .storage()
            .with_io_engine_config(PsyncIoEngineConfig::new())
            .with_engine_config(BlockEngineConfig::new(device))
            .build()
            .await
            .expect("foyer");
        // foyer drops writes its submit queue cannot take: insert, wait, and insert again
        // whatever is not there, until every value is on its device.
        for _ in 0..20 {
            let mut missing = 0;
            for i in 0..COUNT {
                if cache.get(&location(i)).await.ok().flatten().is_none() {
                    missing += 1;
                    cache.insert(location(i), payload(i));
                    if missing % 8 == 0 {
                        cache.storage().wait().await;
                    }
                }
            }
            cache.storage().wait().await;
            if missing == 0 {
                return cache;
            }
        }
        panic!("foyer did not keep every value");
    });

    let layout = Layout::new(&dir.path().join("metacache"));
    let files: Vec<PathBuf> = (0..COUNT)
        .map(|i| layout.block(BlockId::of(&location(i))))
        .collect();
    let locations: Vec<String> = (0..COUNT).map(location).collect();

    let mut group = c.benchmark_group("disk hit, 16 KiB, 2000 blocks");
    group.throughput(Throughput::Elements(1));
    let mut i = 0usize;
    let mut next = move || {
        i = (i + 7919) % COUNT;
        i
    };
    group.bench_function("metacache disk tier", |b| {
        b.iter(|| {
            let n = next();
            runtime.block_on(async {
                let bytes = tier
                    .read_through(BlockKey::new(&locations[n]), "bench", || async {
                        Err::<Bytes, ()>(())
                    })
                    .await
                    .expect("a hit");
                black_box(bytes.len())
            })
        });
    });
    group.bench_function("foyer hybrid get, disk hit", |b| {
        b.iter(|| {
            let n = next();
            runtime.block_on(async {
                let entry = foyer.get(&locations[n]).await.expect("get").expect("a hit");
                black_box(entry.value().len())
            })
        });
    });
    group.bench_function("foyer block engine, store load only", |b| {
        b.iter(|| {
            let n = next();
            runtime.block_on(async {
                match foyer.storage().load(&locations[n]).await.expect("load") {
                    foyer::Load::Entry { value, .. } => black_box(value.len()),
                    foyer::Load::Piece { piece, .. } => black_box(piece.value().len()),
                    _ => panic!("a disk hit"),
                }
            })
        });
    });
    group.bench_function("raw file read (floor)", |b| {
        b.iter(|| {
            let n = next();
            runtime.block_on(async { black_box(std::fs::read(&files[n]).expect("read").len()) })
        });
    });
    group.finish();
    let stats = tier.stats();
    assert_eq!(
        stats.misses, COUNT as u64,
        "the set-up's publications only: every measured read was a disk hit"
    );
    assert_eq!(stats.errors, 0);
}

criterion_group!(benches, hits);
criterion_main!(benches);
