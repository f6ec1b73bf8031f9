//! [`DiskTier`]: the read path (hits under the shared gate, misses coalesced per stripe across
//! processes) and the tier's counters. What changes the directory is in `maintain.rs`.
//!
//! # Invariants
//! - Fail-open: whatever goes wrong on disk, the caller gets the source's bytes (or the
//!   source's own error), and the failure is counted.
//! - A hit is served only from a block whose checksum, location, version, size and generation
//!   all check out.
//! - No wait is unbounded: a read waits at most `hit_wait` for each exclusive operation it
//!   finds holding the gate, a miss at most `miss_wait` for another process's load of the
//!   same stripe.
//! - Every read that calls its source counts as a miss (or an error, when the disk failed).

use std::future::Future;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use parking_lot::Mutex;

use crate::block::{self, Identity};
use crate::layout::{BlockId, Layout};
use crate::ledger::{self, Ledger};
use crate::lock::{self, LockFile};

/// What a reader knows of the object it asks for. The location is the identity; a size or a
/// version (ETag, object version) that the referring metadata records narrows it: a block of
/// another size or version is not served (and is replaced by the fresh read).
#[derive(Debug, Clone, Copy)]
pub struct BlockKey<'a> {
    /// The object's full location (`s3://bucket/…`, `file:///…`).
    pub location: &'a str,
    /// Its length, when the referring metadata records it.
    pub size: Option<u64>,
    /// Its version, when known.
    pub version: Option<&'a str>,
}

impl<'a> BlockKey<'a> {
    /// A key of `location` alone (the file is immutable by its format's rules).
    pub fn new(location: &'a str) -> Self {
        Self {
            location,
            size: None,
            version: None,
        }
    }

    /// The same key with the length the referring metadata records.
    pub fn with_size(self, size: u64) -> Self {
        Self {
            size: Some(size),
            ..self
        }
    }
}

/// How a tier behaves besides its capacity.
#[derive(Debug, Clone)]
pub struct Options {
    /// Bytes the published blocks may take (all processes together).
    pub capacity: u64,
    /// How long an exclusive operation (publication, eviction, invalidation) waits for the gate.
    pub lock_wait: Duration,
    /// How long a hit waits for an exclusive operation to finish before reading the source.
    pub hit_wait: Duration,
    /// How long a miss waits for another process's load of the same stripe.
    pub miss_wait: Duration,
}

impl Options {
    /// Defaults with `capacity` bytes.
    pub fn with_capacity(capacity: u64) -> Self {
        Self {
            capacity,
            lock_wait: Duration::from_secs(2),
            hit_wait: Duration::from_millis(50),
            miss_wait: Duration::from_secs(10),
        }
    }
}

/// A block at most this fraction of the capacity is kept (a larger one is read through).
pub const MAX_BLOCK_FRACTION: u64 = 8;

/// This process's counters.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub hits: AtomicU64,
    pub misses: AtomicU64,
    pub coalesced: AtomicU64,
    pub published: AtomicU64,
    pub evictions: AtomicU64,
    pub corrupt: AtomicU64,
    pub fenced: AtomicU64,
    pub too_large: AtomicU64,
    pub lock_timeouts: AtomicU64,
    pub errors: AtomicU64,
}

/// A snapshot of a tier: the directory's totals (every process's) and this process's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiskStats {
    /// The configured directory.
    pub dir: PathBuf,
    /// Bytes the blocks may take (the ledger's; `None` when unreadable).
    pub capacity: Option<u64>,
    /// Bytes they take.
    pub used: Option<u64>,
    /// How many there are.
    pub blocks: Option<u64>,
    /// Reads served from a block.
    pub hits: u64,
    /// Reads this process loaded from the source.
    pub misses: u64,
    /// Reads served from a block another process (or task) loaded while this one waited.
    pub coalesced: u64,
    /// Blocks this process published.
    pub published: u64,
    /// Blocks this process evicted.
    pub evictions: u64,
    /// Blocks found torn or corrupt, dropped and read again.
    pub corrupt_dropped: u64,
    /// Blocks not served or not published because a refresh fenced them.
    pub fenced: u64,
    /// Objects too large to keep (above capacity / 8).
    pub too_large: u64,
    /// Gate or stripe waits that ran out.
    pub lock_timeouts: u64,
    /// Disk errors (each fell back to the source).
    pub errors: u64,
    /// Why the tier is not in use, when it is not.
    pub unavailable: Option<String>,
}

/// The node-shared disk tier of one directory, as this process sees it. Cheap to clone.
#[derive(Clone)]
pub struct DiskTier {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for DiskTier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiskTier")
            .field("dir", &self.inner.dir)
            .finish_non_exhaustive()
    }
}

pub(crate) struct Inner {
    pub dir: PathBuf,
    pub layout: Layout,
    pub options: Mutex<Options>,
    /// Open: the gate and the ledger. `None` with the reason when the tier cannot be used.
    pub open: Result<Opened, String>,
    pub counters: Counters,
    pub tmp_seq: AtomicU64,
}

pub(crate) struct Opened {
    pub gate: LockFile,
    pub ledger: std::fs::File,
}

enum Step {
    Hit(Bytes),
    /// No block that checks out; `fenced` when there is one, older than its scope's fence.
    Miss {
        generation: u64,
        fenced: bool,
    },
    Busy,
}

impl DiskTier {
    /// The tier in `dir`, created when missing. Never fails: a directory that cannot be used
    /// gives a tier that reads every object from its source and says why in
    /// [`DiskStats::unavailable`].
    pub fn open(dir: &Path, options: Options) -> Self {
        let layout = Layout::new(dir);
        let inner = Arc::new(Inner {
            dir: dir.to_path_buf(),
            open: crate::maintain::open(&layout, &options),
            layout,
            options: Mutex::new(options),
            counters: Counters::default(),
            tmp_seq: AtomicU64::new(0),
        });
        if let Err(why) = &inner.open {
            tracing::warn!(dir = %dir.display(), %why, "the disk tier is not in use; every read goes to its source");
        }
        Self { inner }
    }

    /// The configured directory.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// The bytes of the object `key` names: from its block when one checks out, otherwise
    /// from `load` (called at most once), kept for every process of the node afterwards.
    /// `scope` (a catalog's name) is what [`DiskTier::invalidate`] fences.
    ///
    /// Only immutable objects belong here: a location whose bytes can change without its size
    /// or version changing would be served stale. Runs on a tokio runtime with its time driver
    /// (waits sleep on it; a publication runs on its blocking pool).
    pub async fn read_through<E, F, Fut>(
        &self,
        key: BlockKey<'_>,
        scope: &str,
        load: F,
    ) -> Result<Bytes, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Bytes, E>>,
    {
        let counters = &self.inner.counters;
        let Ok(opened) = &self.inner.open else {
            // Counted: the node is reading its sources for want of its disk.
            counters.errors.fetch_add(1, Ordering::Relaxed);
            return load().await;
        };
        let id = BlockId::of(key.location);
        let slot = ledger::slot(scope);
        let (hit_wait, miss_wait) = {
            let options = self.inner.options.lock();
            (options.hit_wait, options.miss_wait)
        };
        let started = Instant::now();
        let mut waited = false;
        let mut stripe = None;
        let mut pause = Duration::from_millis(1);
        let mut fenced_counted = false;
        // When the current stretch of finding the gate taken began: `hit_wait` bounds each
        // stretch, not the whole read (a waiter that waited for another process's load finds
        // the gate taken while that process publishes, and must not give up at once).
        let mut busy_since: Option<Instant> = None;
        let generation = loop {
            let step = self.inner.try_hit(opened, id, &key, slot);
            if !matches!(step, Ok(Step::Busy)) {
                busy_since = None;
            }
            if let Ok(Step::Miss { fenced: true, .. }) = step
                && !fenced_counted
            {
                fenced_counted = true;
                counters.fenced.fetch_add(1, Ordering::Relaxed);
            }
            match step {
                Ok(Step::Hit(bytes)) => {
                    let counter = if waited {
                        &counters.coalesced
                    } else {
                        &counters.hits
                    };
                    counter.fetch_add(1, Ordering::Relaxed);
                    return Ok(bytes);
                }
                Ok(Step::Busy)
                    if busy_since.get_or_insert_with(Instant::now).elapsed() < hit_wait =>
                {
                    tokio::time::sleep(Duration::from_micros(500)).await;
                }
                Ok(Step::Busy) => {
                    counters.lock_timeouts.fetch_add(1, Ordering::Relaxed);
                    counters.misses.fetch_add(1, Ordering::Relaxed);
                    return load().await;
                }
                Ok(Step::Miss { generation, .. }) if stripe.is_some() => break generation,
                Ok(Step::Miss { .. }) => match lock::try_stripe(&self.inner.layout.stripe(id)) {
                    // Look again under the stripe: a block may have been published meanwhile.
                    Ok(Some(held)) => stripe = Some(held),
                    Ok(None) if started.elapsed() < miss_wait => {
                        waited = true;
                        tokio::time::sleep(pause).await;
                        pause = (pause * 2).min(Duration::from_millis(20));
                    }
                    Ok(None) => {
                        counters.lock_timeouts.fetch_add(1, Ordering::Relaxed);
                        counters.misses.fetch_add(1, Ordering::Relaxed);
                        return load().await;
                    }
                    Err(e) => {
                        self.inner.failed("lock a stripe", &e);
                        return load().await;
                    }
                },
                Err(e) => {
                    self.inner.failed("read a block", &e);
                    return load().await;
                }
            }
        };
        counters.misses.fetch_add(1, Ordering::Relaxed);
        let bytes = load().await?;
        if key.size.is_some_and(|size| size != bytes.len() as u64) {
            // The object is not what its metadata says: serve it, keep nothing.
            return Ok(bytes);
        }
        let inner = Arc::clone(&self.inner);
        let identity = Identity {
            location: key.location.to_owned(),
            version: key.version.map(str::to_owned),
        };
        let payload = bytes.clone();
        // The stripe stays held until the block is published (or refused): waiters then hit.
        let published = tokio::task::spawn_blocking(move || {
            let outcome = inner.publish(id, &identity, slot, generation, &payload);
            drop(stripe);
            if let Err(e) = outcome {
                inner.failed("publish a block", &e);
            }
        })
        .await;
        if published.is_err() {
            counters.errors.fetch_add(1, Ordering::Relaxed);
        }
        Ok(bytes)
    }

    /// Fences `scope`: blocks it published before are never served again (REFRESH, DROP).
    /// Blocking: call it off the async workers.
    pub fn invalidate(&self, scope: &str) -> Result<(), crate::DiskError> {
        self.inner.invalidate(ledger::slot(scope))
    }

    /// Changes the capacity of the directory (every process's), evicting at once when the
    /// blocks take more. Blocking.
    pub fn set_capacity(&self, capacity: u64) -> Result<(), crate::DiskError> {
        self.inner.options.lock().capacity = capacity;
        self.inner.set_capacity(capacity)
    }

    /// The totals of the directory and this process's counters. Blocking (briefly).
    pub fn stats(&self) -> DiskStats {
        let c = &self.inner.counters;
        let load = |n: &AtomicU64| n.load(Ordering::Relaxed);
        let mut stats = DiskStats {
            dir: self.inner.dir.clone(),
            hits: load(&c.hits),
            misses: load(&c.misses),
            coalesced: load(&c.coalesced),
            published: load(&c.published),
            evictions: load(&c.evictions),
            corrupt_dropped: load(&c.corrupt),
            fenced: load(&c.fenced),
            too_large: load(&c.too_large),
            lock_timeouts: load(&c.lock_timeouts),
            errors: load(&c.errors),
            ..DiskStats::default()
        };
        match &self.inner.open {
            Ok(opened) => {
                if let Ok(Some(_held)) = opened.gate.acquire(false, Duration::from_millis(50))
                    && let Ok((capacity, used, blocks)) = Ledger::read_totals(&opened.ledger)
                {
                    stats.capacity = Some(capacity);
                    stats.used = Some(used);
                    stats.blocks = Some(blocks);
                }
            }
            Err(why) => stats.unavailable = Some(why.clone()),
        }
        stats
    }
}

impl Inner {
    /// Counts and logs a disk error the read path fell back from.
    pub(crate) fn failed(&self, what: &str, error: &dyn std::fmt::Display) {
        self.counters.errors.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(dir = %self.dir.display(), %error, "disk tier: could not {what}; read from the source");
    }

    fn try_hit(
        &self,
        opened: &Opened,
        id: BlockId,
        key: &BlockKey<'_>,
        slot: usize,
    ) -> std::io::Result<Step> {
        let Some(held) = opened.gate.try_acquire(false)? else {
            return Ok(Step::Busy);
        };
        let Some((generation, fence)) = Ledger::read_fence(&opened.ledger, slot)? else {
            return Err(std::io::Error::other("the ledger does not check out"));
        };
        let miss = Step::Miss {
            generation,
            fenced: false,
        };
        let path = self.layout.block(id);
        let mut file = match std::fs::File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(miss),
            Err(e) => return Err(e),
        };
        let meta = file.metadata()?;
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        file.read_to_end(&mut bytes)?;
        drop(held);
        let block = match block::decode(Bytes::from(bytes)) {
            Ok(block) => block,
            Err(_) => {
                self.counters.corrupt.fetch_add(1, Ordering::Relaxed);
                self.drop_corrupt(&path, meta.ino());
                return Ok(miss);
            }
        };
        let fits = block.identity.location == key.location
            && key
                .size
                .is_none_or(|size| size == block.payload.len() as u64)
            && key
                .version
                .is_none_or(|v| block.identity.version.as_deref() == Some(v));
        if !fits {
            return Ok(miss);
        }
        if block.generation < fence {
            return Ok(Step::Miss {
                generation,
                fenced: true,
            });
        }
        // Recency for eviction, at most once a second per block.
        let now = SystemTime::now();
        let stale = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_none_or(|age| age > Duration::from_secs(1));
        if stale {
            let _ = file.set_modified(now);
        }
        Ok(Step::Hit(block.payload))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    /// A reader that waited for another loader's stripe longer than `hit_wait` finds the gate
    /// taken while that loader publishes: it waits for the block (the stretch of finding the
    /// gate taken is what `hit_wait` bounds) instead of reading its source at once. CI once
    /// saw four processes make two source reads this way.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_waiter_that_finds_the_loader_publishing_waits_for_its_block() {
        let dir = tempfile::tempdir().expect("dir");
        let mut options = Options::with_capacity(1 << 20);
        options.hit_wait = Duration::from_millis(300);
        let tier = DiskTier::open(dir.path(), options);
        let location = "s3://wh/db/t/metadata/snap-1.avro";
        let id = BlockId::of(location);
        // Another process is loading the object: it holds the stripe.
        let stripe = lock::try_stripe(&tier.inner.layout.stripe(id))
            .expect("stripe")
            .expect("free");
        let loads = Arc::new(AtomicUsize::new(0));
        let reader = tokio::spawn({
            let (tier, loads) = (tier.clone(), Arc::clone(&loads));
            async move {
                tier.read_through(BlockKey::new(location), "s", || async move {
                    loads.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, std::convert::Infallible>(Bytes::from_static(b"from the source"))
                })
                .await
            }
        });
        // Past the reader's `hit_wait`, the loader publishes: the gate is exclusive for 100 ms
        // (the reader polls at least every 20 ms), then the block is there.
        tokio::time::sleep(Duration::from_millis(600)).await;
        let inner = Arc::clone(&tier.inner);
        tokio::task::spawn_blocking(move || {
            let Ok(opened) = &inner.open else {
                panic!("the tier did not open");
            };
            let slot = ledger::slot("s");
            let (generation, _) = Ledger::read_fence(&opened.ledger, slot)
                .expect("ledger")
                .expect("valid");
            let held = opened
                .gate
                .acquire(true, Duration::from_secs(5))
                .expect("gate")
                .expect("free");
            std::thread::sleep(Duration::from_millis(100));
            drop(held);
            let identity = Identity {
                location: location.to_owned(),
                version: None,
            };
            inner.publish(id, &identity, slot, generation, b"published")
        })
        .await
        .expect("joined")
        .expect("published");
        drop(stripe);
        let bytes = tokio::time::timeout(Duration::from_secs(30), reader)
            .await
            .expect("the reader ends within 30 s")
            .expect("joined")
            .expect("read");
        assert_eq!(
            loads.load(Ordering::SeqCst),
            0,
            "the waiter read its source"
        );
        assert_eq!(&bytes[..], b"published");
        let stats = tier.stats();
        assert_eq!(
            (stats.coalesced, stats.misses, stats.lock_timeouts),
            (1, 0, 0),
            "{stats:?}"
        );
    }
}
