//! The disk tier across real processes (the `metacache-disk-probe` binary, 1–4 at once on
//! one directory): coalesced misses, SIGKILL during publication and eviction, the capacity
//! under concurrent publishers, corrupt blocks, the generation fence, and fail-open on a full
//! or read-only file system.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PROBE: &str = env!("CARGO_BIN_EXE_metacache-disk-probe");

fn probe(dir: &Path, capacity: u64, args: &[&str]) -> Command {
    let mut command = Command::new(PROBE);
    command
        .arg(dir)
        .arg(capacity.to_string())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Runs a probe to its end; its final `stats` line as a map.
fn run(dir: &Path, capacity: u64, args: &[&str]) -> HashMap<String, String> {
    let out = probe(dir, capacity, args).output().expect("probe runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "probe {args:?} failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stats_of(&stdout)
}

fn stats_of(stdout: &str) -> HashMap<String, String> {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("stats "))
        .unwrap_or_else(|| panic!("no stats line in {stdout}"));
    line.split_whitespace()
        .skip(1)
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

fn num(stats: &HashMap<String, String>, key: &str) -> u64 {
    stats
        .get(key)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{key} in {stats:?}"))
}

/// The block files on disk: (count, bytes).
fn on_disk(dir: &Path) -> (u64, u64) {
    let blocks = dir.join("metacache-disk-v1").join("blocks");
    let mut count = 0;
    let mut bytes = 0;
    for shard in std::fs::read_dir(&blocks).expect("blocks").flatten() {
        for file in std::fs::read_dir(shard.path()).expect("shard").flatten() {
            // A block evicted between the listing and this look is simply gone.
            if let Ok(meta) = file.metadata() {
                count += 1;
                bytes += meta.len();
            }
        }
    }
    (count, bytes)
}

/// Starts a probe that pauses at `point`; returns once it says so.
fn paused(dir: &Path, capacity: u64, point: &str, args: &[&str]) -> Child {
    let mut full = vec!["--pause", point];
    full.extend_from_slice(args);
    let mut child = probe(dir, capacity, &full).spawn().expect("probe starts");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.starts_with("paused at") {
                let _ = tx.send(());
            }
        }
    });
    if rx.recv_timeout(Duration::from_secs(30)).is_err() {
        let _ = child.kill();
        panic!("the probe never reached {point}");
    }
    child
}

fn kill9(mut child: Child) {
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
}

const MIB: u64 = 1 << 20;

#[test]
fn four_processes_missing_one_block_make_one_source_read() {
    let dir = tempfile::tempdir().expect("dir");
    let source = dir.path().join("snap-1.avro");
    std::fs::write(&source, vec![7u8; 20_000]).expect("source");
    let source = source.to_string_lossy().into_owned();
    let cache = dir.path().join("cache");
    let location = "s3://wh/db/t/metadata/snap-1.avro";
    let children: Vec<Child> = (0..4)
        .map(|_| {
            probe(&cache, 64 * MIB, &["read", location, &source, "500"])
                .spawn()
                .expect("probe starts")
        })
        .collect();
    let mut totals: HashMap<&str, u64> = HashMap::new();
    for child in children {
        let out = child.wait_with_output().expect("probe ends");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("read 20000 bytes"), "{stdout}");
        let stats = stats_of(&stdout);
        for key in ["hits", "misses", "coalesced", "errors"] {
            *totals.entry(key).or_default() += num(&stats, key);
        }
    }
    let loads = std::fs::read_to_string(format!("{source}.loads")).expect("loads");
    assert_eq!(loads.lines().count(), 1, "one source read: {loads}");
    assert_eq!(totals["misses"], 1, "{totals:?}");
    assert_eq!(totals["hits"] + totals["coalesced"], 3, "{totals:?}");
    assert!(totals["coalesced"] >= 1, "{totals:?}");
    assert_eq!(totals["errors"], 0, "{totals:?}");

    // A fifth process, later: a plain hit, no read.
    let stats = run(&cache, 64 * MIB, &["read", location, &source]);
    assert_eq!((num(&stats, "hits"), num(&stats, "misses")), (1, 0));
    assert_eq!(num(&stats, "blocks"), 1);
    let loads = std::fs::read_to_string(format!("{source}.loads")).expect("loads");
    assert_eq!(loads.lines().count(), 1);
}

#[test]
fn sigkill_during_publication_leaves_exact_accounting_and_no_bad_block() {
    let dir = tempfile::tempdir().expect("dir");
    let cache = dir.path().join("cache");
    run(&cache, 64 * MIB, &["fill", "s3://wh/a", "20", "3000"]);
    let child = paused(
        &cache,
        64 * MIB,
        "publishing",
        &["fill", "s3://wh/b", "5", "3000"],
    );
    kill9(child);
    // The next process recovers the dirty ledger: its totals are what is on disk.
    let stats = run(&cache, 64 * MIB, &["reread", "s3://wh/a", "20", "3000"]);
    let (count, bytes) = on_disk(&cache);
    assert_eq!((num(&stats, "blocks"), num(&stats, "used")), (count, bytes));
    assert_eq!(count, 20, "the block being published never appeared");
    assert_eq!((num(&stats, "hits"), num(&stats, "corrupt")), (20, 0));
    // And the interrupted objects load and publish normally.
    let stats = run(&cache, 64 * MIB, &["fill", "s3://wh/b", "5", "3000"]);
    assert_eq!(num(&stats, "published"), 5);
    let (count, bytes) = on_disk(&cache);
    assert_eq!((num(&stats, "blocks"), num(&stats, "used")), (count, bytes));
}

#[test]
fn sigkill_during_eviction_leaves_exact_accounting_within_capacity() {
    let dir = tempfile::tempdir().expect("dir");
    let cache = dir.path().join("cache");
    let capacity = 64 * 1024;
    let stats = run(&cache, capacity, &["fill", "s3://wh/a", "15", "4000"]);
    assert_eq!(num(&stats, "evictions"), 0);
    let child = paused(
        &cache,
        capacity,
        "evicting",
        &["fill", "s3://wh/b", "10", "4000"],
    );
    kill9(child);
    let stats = run(&cache, capacity, &["stats"]);
    let (count, bytes) = on_disk(&cache);
    assert_eq!((num(&stats, "blocks"), num(&stats, "used")), (count, bytes));
    assert!(bytes <= capacity);
    let stats = run(&cache, capacity, &["fill", "s3://wh/b", "10", "4000"]);
    assert!(num(&stats, "evictions") > 0, "{stats:?}");
    let (count, bytes) = on_disk(&cache);
    assert_eq!((num(&stats, "blocks"), num(&stats, "used")), (count, bytes));
    assert!(bytes <= capacity, "{bytes} > {capacity}");
}

#[test]
fn four_publishing_processes_never_take_the_directory_past_its_capacity() {
    let dir = tempfile::tempdir().expect("dir");
    let cache = dir.path().join("cache");
    let capacity = 200_000;
    // Create the directory first, so the sampler below can start at once.
    run(&cache, capacity, &["stats"]);
    let children: Vec<Child> = (0..4)
        .map(|p| {
            let prefix = format!("s3://wh/p{p}");
            probe(&cache, capacity, &["fill", &prefix, "150", "3000"])
                .spawn()
                .expect("probe starts")
        })
        .collect();
    let mut peak = 0;
    let mut samples = 0;
    let started = Instant::now();
    let mut children: Vec<Option<Child>> = children.into_iter().map(Some).collect();
    while children.iter().any(Option::is_some) {
        assert!(started.elapsed() < Duration::from_secs(120), "fillers hang");
        // Counted under the gate's shared lock, as a reader would: a walk of the directories
        // while a publication and an eviction interleave could see a block that was evicted
        // and the one published after it (it did, once, on a loaded machine).
        let gate = std::fs::File::open(cache.join("metacache-disk-v1").join("gate")).expect("gate");
        gate.lock_shared().expect("shared gate");
        let (_, bytes) = on_disk(&cache);
        gate.unlock().expect("unlock");
        peak = peak.max(bytes);
        samples += 1;
        for slot in &mut children {
            if let Some(child) = slot
                && child.try_wait().expect("wait").is_some()
            {
                let child = slot.take().expect("child");
                let out = child.wait_with_output().expect("output");
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(samples > 3, "sampled while they ran");
    assert!(
        peak <= capacity,
        "published blocks took {peak} > {capacity}"
    );
    let stats = run(&cache, capacity, &["stats"]);
    let (count, bytes) = on_disk(&cache);
    assert_eq!((num(&stats, "blocks"), num(&stats, "used")), (count, bytes));
    assert!(bytes <= capacity);
}

#[test]
fn a_corrupt_block_is_dropped_and_read_again() {
    let dir = tempfile::tempdir().expect("dir");
    let cache = dir.path().join("cache");
    run(&cache, 64 * MIB, &["fill", "s3://wh/c", "3", "5000"]);
    let blocks: Vec<PathBuf> = std::fs::read_dir(cache.join("metacache-disk-v1/blocks"))
        .expect("blocks")
        .flatten()
        .flat_map(|shard| std::fs::read_dir(shard.path()).expect("shard").flatten())
        .map(|f| f.path())
        .collect();
    assert_eq!(blocks.len(), 3);
    // One flipped byte in a payload, one truncated file.
    let mut bytes = std::fs::read(&blocks[0]).expect("block");
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&blocks[0], bytes).expect("write");
    let bytes = std::fs::read(&blocks[1]).expect("block");
    std::fs::write(&blocks[1], &bytes[..bytes.len() / 2]).expect("write");
    // `reread` checks every object's bytes.
    let stats = run(&cache, 64 * MIB, &["reread", "s3://wh/c", "3", "5000"]);
    assert_eq!(num(&stats, "corrupt"), 2, "{stats:?}");
    assert_eq!((num(&stats, "hits"), num(&stats, "misses")), (1, 2));
    let (count, used) = on_disk(&cache);
    assert_eq!((num(&stats, "blocks"), num(&stats, "used")), (count, used));
    let stats = run(&cache, 64 * MIB, &["reread", "s3://wh/c", "3", "5000"]);
    assert_eq!((num(&stats, "hits"), num(&stats, "corrupt")), (3, 0));
}

#[test]
fn invalidating_a_scope_fences_its_blocks_only() {
    let dir = tempfile::tempdir().expect("dir");
    let cache = dir.path().join("cache");
    run(
        &cache,
        64 * MIB,
        &["--scope", "lake", "fill", "s3://wh/lake", "4", "2000"],
    );
    run(
        &cache,
        64 * MIB,
        &["--scope", "sea", "fill", "s3://wh/sea", "4", "2000"],
    );
    run(&cache, 64 * MIB, &["--scope", "lake", "invalidate"]);
    let lake = run(
        &cache,
        64 * MIB,
        &["--scope", "lake", "reread", "s3://wh/lake", "4", "2000"],
    );
    assert_eq!(
        (num(&lake, "hits"), num(&lake, "misses")),
        (0, 4),
        "{lake:?}"
    );
    assert_eq!(num(&lake, "fenced"), 4);
    assert_eq!(num(&lake, "published"), 4, "reloaded blocks are kept again");
    let sea = run(
        &cache,
        64 * MIB,
        &["--scope", "sea", "reread", "s3://wh/sea", "4", "2000"],
    );
    assert_eq!((num(&sea, "hits"), num(&sea, "misses")), (4, 0), "{sea:?}");
    let lake = run(
        &cache,
        64 * MIB,
        &["--scope", "lake", "reread", "s3://wh/lake", "4", "2000"],
    );
    assert_eq!(num(&lake, "hits"), 4, "{lake:?}");
    let (count, used) = on_disk(&cache);
    assert_eq!((num(&lake, "blocks"), num(&lake, "used")), (count, used));
}

/// A small file system of our own (root: a tmpfs), so that "full" and "read-only" are real.
struct SmallFs {
    dir: tempfile::TempDir,
}

impl SmallFs {
    fn mount(size: &str) -> Option<Self> {
        let dir = tempfile::tempdir().expect("dir");
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(Self { dir })
    }

    fn read_only(&self) {
        let ok = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(self.dir.path())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "remount read-only");
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

#[test]
fn a_full_or_read_only_file_system_fails_open_with_counts() {
    let Some(fs) = SmallFs::mount("256k") else {
        // Without the right to mount (not root), a directory we may not write is the
        // read-only case; there is no full file system to make.
        let dir = tempfile::tempdir().expect("dir");
        let cache = dir.path().join("cache");
        run(&cache, 64 * MIB, &["fill", "s3://wh/r", "3", "2000"]);
        let mut perms = std::fs::metadata(&cache).expect("meta").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o555);
        std::fs::set_permissions(&cache, perms).expect("chmod");
        let stats = run(&cache, 64 * MIB, &["reread", "s3://wh/r", "3", "2000"]);
        assert_eq!(num(&stats, "hits"), 3, "{stats:?}");
        return;
    };
    let cache = fs.dir.path().join("cache");
    // Full: 64 objects of 8 KB into 256 KiB (the tier believes it has 64 MiB). Every read
    // still returns the right bytes (`fill` checks them); what did not fit is counted.
    let stats = run(&cache, 64 * MIB, &["fill", "s3://wh/full", "64", "8000"]);
    assert!(num(&stats, "errors") > 0, "{stats:?}");
    assert!(num(&stats, "published") > 0, "{stats:?}");
    assert_eq!(num(&stats, "misses"), 64);
    let (count, used) = on_disk(&cache);
    assert_eq!((num(&stats, "blocks"), num(&stats, "used")), (count, used));
    // Read-only: hits still come from disk, new objects from the source, both counted.
    fs.read_only();
    let published = num(&stats, "published");
    let stats = run(&cache, 64 * MIB, &["reread", "s3://wh/full", "64", "8000"]);
    assert_eq!(num(&stats, "hits"), published, "{stats:?}");
    assert_eq!(num(&stats, "misses"), 64 - published);
    assert!(num(&stats, "errors") >= 64 - published, "{stats:?}");
}
