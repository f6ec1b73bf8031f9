//! Admission cost: estimating a file listing and reserving/releasing its bytes in the ledger,
//! against loading the same listing from the local file system, per listing size.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use metacache_estimate::{DEFAULT_VISIT_BUDGET, EstimateSize, Sizer, estimate};
use metacache_ledger::{Ledger, Level};

struct FileStatus {
    path: String,
    length: u64,
    modification_time: u64,
}

struct FileListing {
    files: Vec<FileStatus>,
}

impl EstimateSize for FileListing {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        sizer.add_vec(&self.files, |s, f| s.add_string(&f.path));
    }
}

/// Lists `dir` as a Hive file-listing loader would: names, lengths, modification times.
fn load(dir: &Path) -> FileListing {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        let modification_time = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_millis() as u64);
        files.push(FileStatus {
            path: entry.path().to_string_lossy().into_owned(),
            length: meta.len(),
            modification_time,
        });
    }
    FileListing { files }
}

fn partition_dir(files: usize) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("metacache-bench-admission-{files}"));
    if std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0) != files {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create bench directory");
        for i in 0..files {
            std::fs::write(
                dir.join(format!("part-{i:05}-c000.snappy.parquet")),
                b"PAR1",
            )
            .expect("write");
        }
    }
    dir
}

fn admission(c: &mut Criterion) {
    let ledger = Ledger::new(Some(1 << 40));
    let catalog = ledger.node().child(Level::Catalog, "bench", Some(1 << 39));
    let entry = catalog.child(Level::Entry, "hive-file", None);
    let mut group = c.benchmark_group("admission");
    for files in [10usize, 100, 1000, 10_000] {
        let dir = partition_dir(files);
        let listing = load(&dir);
        assert_eq!(listing.files.len(), files);
        black_box(
            listing
                .files
                .iter()
                .map(|f| f.length + f.modification_time)
                .sum::<u64>(),
        );
        group.bench_function(BenchmarkId::new("load_local_listing", files), |b| {
            b.iter(|| black_box(load(&dir)))
        });
        group.bench_function(BenchmarkId::new("estimate", files), |b| {
            b.iter(|| black_box(estimate(&listing, DEFAULT_VISIT_BUDGET)))
        });
        group.bench_function(BenchmarkId::new("reserve_release", files), |b| {
            b.iter(|| {
                entry.try_reserve(black_box(4096)).expect("fits");
                entry.release(4096);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, admission);
criterion_main!(benches);
