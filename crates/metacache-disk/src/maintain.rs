//! Everything that changes a tier's directory, each under the exclusive gate: opening (and
//! recovering), publication, batched eviction, invalidation, capacity changes and dropping a
//! corrupt block.
//!
//! # Invariants
//! - Before an operation touches `blocks/` it writes the ledger with `dirty` set; it clears
//!   `dirty` in the same write that records the new totals. Whoever takes the gate next and
//!   finds `dirty` set recounts `blocks/` first (a process died in between).
//! - A block file appears only by `rename` of a fully written temporary file, so a reader sees
//!   the old block, the new one, or none.
//! - After publication the blocks never take more than the capacity: eviction runs first,
//!   down to [`LOW_WATER`] of the capacity, oldest modification time (the hit path's recency
//!   stamp) first. Temporary files being written are outside the ledger: at most one per load
//!   in flight, each at most capacity / 8.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime};

use crate::DiskError;
use crate::block::{self, Identity};
use crate::layout::{BlockId, Layout};
use crate::ledger::Ledger;
use crate::lock::{Held, LockFile};
use crate::testing::{Point, pause_here};
use crate::tier::{Inner, MAX_BLOCK_FRACTION, Opened, Options};

/// Eviction frees down to this share of the capacity (percent), so that it runs once per
/// tenth of the capacity published rather than on every publication.
pub const LOW_WATER: u64 = 90;

/// How long opening waits for the gate (another process may be recovering).
const OPEN_WAIT: Duration = Duration::from_secs(10);

/// Temporary files older than this belong to a process that died while writing them.
const TMP_ABANDONED: Duration = Duration::from_secs(60);

fn io<'a>(op: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> DiskError + 'a {
    move |source| DiskError::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}

/// Opens (creating, recovering) the directory of `layout`; the reason when it cannot be used.
pub(crate) fn open(layout: &Layout, options: &Options) -> Result<Opened, String> {
    let created = [layout.blocks(), layout.tmp(), layout.stripes()]
        .iter()
        .try_for_each(fs::create_dir_all);
    let gate = LockFile::open(&layout.gate()).map_err(|e| {
        format!(
            "cannot open {}: {e}{}",
            layout.gate().display(),
            created
                .as_ref()
                .err()
                .map(|c| format!(" ({c})"))
                .unwrap_or_default()
        )
    })?;
    let path = layout.ledger();
    let ledger = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .or_else(|_| File::open(&path))
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let opened = Opened { gate, ledger };
    let Some(held) = opened
        .gate
        .acquire(true, OPEN_WAIT)
        .map_err(|e| format!("cannot lock {}: {e}", layout.gate().display()))?
    else {
        return Err(format!(
            "{} stayed locked for {} s",
            layout.gate().display(),
            OPEN_WAIT.as_secs()
        ));
    };
    let mut current = load_or_recover(layout, &opened.ledger, options.capacity)
        .map_err(|e| format!("cannot recover the ledger: {e}"))?;
    sweep_tmp(layout);
    if current.capacity != options.capacity {
        tracing::info!(
            dir = %layout.root().display(),
            from = current.capacity,
            to = options.capacity,
            "disk tier capacity changed"
        );
        current.capacity = options.capacity;
        fit(layout, &opened.ledger, &mut current, 0, false)
            .map_err(|e| format!("cannot apply the capacity: {e}"))?;
    }
    drop(held);
    Ok(opened)
}

/// The ledger under the exclusive gate, recovered first when a process died mid-operation or
/// it is missing or damaged.
fn load_or_recover(layout: &Layout, file: &File, capacity: u64) -> Result<Ledger, DiskError> {
    let ledger_path = layout.ledger();
    match Ledger::read(file).map_err(io("read", &ledger_path))? {
        Some(ledger) if !ledger.dirty => Ok(ledger),
        Some(mut ledger) => {
            tracing::info!(dir = %layout.root().display(), "disk tier: a process stopped mid-operation; recounting the blocks");
            recount(layout, &mut ledger)?;
            ledger.dirty = false;
            ledger.write(file).map_err(io("write", &ledger_path))?;
            Ok(ledger)
        }
        None => {
            // Nothing vouches for any block's generation: start empty.
            let existed = fs::metadata(&ledger_path).is_ok_and(|m| m.len() > 0);
            if existed {
                tracing::warn!(dir = %layout.root().display(), "disk tier: the ledger does not check out; dropping every block");
            }
            let blocks = layout.blocks();
            if blocks.exists() {
                fs::remove_dir_all(&blocks).map_err(io("remove", &blocks))?;
            }
            fs::create_dir_all(&blocks).map_err(io("create", &blocks))?;
            let ledger = Ledger::new(capacity);
            ledger.write(file).map_err(io("write", &ledger_path))?;
            Ok(ledger)
        }
    }
}

/// Every published block: path, length, modification time.
fn scan(layout: &Layout) -> Result<Vec<(PathBuf, u64, SystemTime)>, DiskError> {
    let root = layout.blocks();
    let mut out = Vec::new();
    for shard in fs::read_dir(&root).map_err(io("list", &root))? {
        let shard = shard.map_err(io("list", &root))?.path();
        let Ok(entries) = fs::read_dir(&shard) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if let Ok(meta) = entry.metadata()
                && meta.is_file()
            {
                out.push((
                    path,
                    meta.len(),
                    meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                ));
            }
        }
    }
    Ok(out)
}

/// Sets the totals from what `blocks/` holds.
fn recount(layout: &Layout, ledger: &mut Ledger) -> Result<(), DiskError> {
    let blocks = scan(layout)?;
    ledger.used = blocks.iter().map(|(_, len, _)| len).sum();
    ledger.blocks = blocks.len() as u64;
    Ok(())
}

/// Removes temporary files nobody is writing any more.
fn sweep_tmp(layout: &Layout) {
    let Ok(entries) = fs::read_dir(layout.tmp()) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|age| age > TMP_ABANDONED);
        if old {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Evicts (oldest first) until `incoming` more bytes fit, down to [`LOW_WATER`]; writes the
/// ledger with the new totals (still dirty when `keep_dirty`, for a caller that goes on).
/// Returns how many blocks went.
fn fit(
    layout: &Layout,
    file: &File,
    ledger: &mut Ledger,
    incoming: u64,
    keep_dirty: bool,
) -> Result<u64, DiskError> {
    let ledger_path = layout.ledger();
    if ledger.used.saturating_add(incoming) <= ledger.capacity {
        return Ok(0);
    }
    ledger.dirty = true;
    ledger.write(file).map_err(io("write", &ledger_path))?;
    pause_here(Point::Evicting);
    let mut blocks = scan(layout)?;
    blocks.sort_by_key(|(_, _, modified)| *modified);
    let mut used: u64 = blocks.iter().map(|(_, len, _)| len).sum();
    let mut count = blocks.len() as u64;
    let target = (ledger.capacity / 100 * LOW_WATER).saturating_sub(incoming);
    let mut evicted = 0;
    for (path, len, _) in &blocks {
        if used <= target {
            break;
        }
        match fs::remove_file(path) {
            Ok(()) => {
                used -= len;
                count -= 1;
                evicted += 1;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                used -= len;
                count -= 1;
            }
            Err(e) => return Err(io("remove", path)(e)),
        }
    }
    ledger.used = used;
    ledger.blocks = count;
    ledger.evictions += evicted;
    ledger.dirty = keep_dirty;
    ledger.write(file).map_err(io("write", &ledger_path))?;
    Ok(evicted)
}

impl Inner {
    fn opened(&self) -> Result<&Opened, DiskError> {
        self.open.as_ref().map_err(|why| DiskError::Unavailable {
            reason: why.clone(),
        })
    }

    /// The exclusive gate, or a timeout error.
    fn exclusive<'a>(&self, opened: &'a Opened) -> Result<Held<'a>, DiskError> {
        let wait = self.options.lock().lock_wait;
        let gate = self.layout.gate();
        match opened.gate.acquire(true, wait).map_err(io("lock", &gate))? {
            Some(held) => Ok(held),
            None => {
                self.counters.lock_timeouts.fetch_add(1, Ordering::Relaxed);
                Err(DiskError::LockTimeout {
                    path: gate,
                    waited: wait,
                })
            }
        }
    }

    /// Publishes `payload` as the block of `id`, unless a fence of `slot` came after
    /// `generation` (the generation the load started under).
    pub(crate) fn publish(
        &self,
        id: BlockId,
        identity: &Identity,
        slot: usize,
        generation: u64,
        payload: &[u8],
    ) -> Result<(), DiskError> {
        let opened = self.opened()?;
        let encoded = block::encode(generation, identity, payload);
        let len = encoded.len() as u64;
        if len > self.options.lock().capacity / MAX_BLOCK_FRACTION {
            self.counters.too_large.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        let seq = self.tmp_seq.fetch_add(1, Ordering::Relaxed);
        let tmp = self
            .layout
            .tmp()
            .join(format!("{}-{seq}", std::process::id()));
        let written = File::create(&tmp)
            .and_then(|mut f| f.write_all(&encoded))
            .map_err(io("write", &tmp));
        if let Err(e) = written {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
        let outcome = self.publish_locked(opened, id, slot, generation, &tmp, len);
        if outcome.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        outcome
    }

    fn publish_locked(
        &self,
        opened: &Opened,
        id: BlockId,
        slot: usize,
        generation: u64,
        tmp: &Path,
        len: u64,
    ) -> Result<(), DiskError> {
        let _held = self.exclusive(opened)?;
        let ledger_path = self.layout.ledger();
        let mut ledger =
            load_or_recover(&self.layout, &opened.ledger, self.options.lock().capacity)?;
        if ledger.fences[slot] > generation {
            self.counters.fenced.fetch_add(1, Ordering::Relaxed);
            let _ = fs::remove_file(tmp);
            return Ok(());
        }
        if len > ledger.capacity / MAX_BLOCK_FRACTION {
            self.counters.too_large.fetch_add(1, Ordering::Relaxed);
            let _ = fs::remove_file(tmp);
            return Ok(());
        }
        let path = self.layout.block(id);
        // A block replaced in place frees its own bytes.
        let replaced = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let evicted = fit(
            &self.layout,
            &opened.ledger,
            &mut ledger,
            len.saturating_sub(replaced),
            true,
        )?;
        self.counters
            .evictions
            .fetch_add(evicted, Ordering::Relaxed);
        if !ledger.dirty {
            ledger.dirty = true;
            ledger
                .write(&opened.ledger)
                .map_err(io("write", &ledger_path))?;
        }
        pause_here(Point::Publishing);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(io("create", parent))?;
        }
        // `fit` may have evicted the block being replaced: count what is there now.
        let replaced_now = fs::metadata(&path).map(|m| m.len()).ok();
        fs::rename(tmp, &path).map_err(io("rename", &path))?;
        ledger.used = ledger.used - replaced_now.unwrap_or(0).min(ledger.used) + len;
        ledger.blocks = ledger.blocks - u64::from(replaced_now.is_some()).min(ledger.blocks) + 1;
        ledger.dirty = false;
        ledger
            .write(&opened.ledger)
            .map_err(io("write", &ledger_path))?;
        self.counters.published.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Raises the fence of `slot` to a new generation.
    pub(crate) fn invalidate(&self, slot: usize) -> Result<(), DiskError> {
        let opened = self.opened()?;
        let _held = self.exclusive(opened)?;
        let mut ledger =
            load_or_recover(&self.layout, &opened.ledger, self.options.lock().capacity)?;
        ledger.generation += 1;
        ledger.fences[slot] = ledger.generation;
        let path = self.layout.ledger();
        ledger.write(&opened.ledger).map_err(io("write", &path))
    }

    /// Sets the directory's capacity and evicts down to it.
    pub(crate) fn set_capacity(&self, capacity: u64) -> Result<(), DiskError> {
        let opened = self.opened()?;
        let _held = self.exclusive(opened)?;
        let mut ledger =
            load_or_recover(&self.layout, &opened.ledger, self.options.lock().capacity)?;
        ledger.capacity = capacity;
        let evicted = fit(&self.layout, &opened.ledger, &mut ledger, 0, false)?;
        self.counters
            .evictions
            .fetch_add(evicted, Ordering::Relaxed);
        let path = self.layout.ledger();
        ledger.write(&opened.ledger).map_err(io("write", &path))
    }

    /// Removes the corrupt block at `path` if it is still the file (inode) that was read, and
    /// recounts the blocks.
    pub(crate) fn drop_corrupt(&self, path: &Path, inode: u64) {
        let dropped = (|| -> Result<(), DiskError> {
            let opened = self.opened()?;
            let _held = self.exclusive(opened)?;
            let Ok(meta) = fs::metadata(path) else {
                return Ok(());
            };
            if meta.ino() != inode {
                return Ok(());
            }
            let mut ledger =
                load_or_recover(&self.layout, &opened.ledger, self.options.lock().capacity)?;
            let ledger_path = self.layout.ledger();
            ledger.dirty = true;
            ledger
                .write(&opened.ledger)
                .map_err(io("write", &ledger_path))?;
            fs::remove_file(path).map_err(io("remove", path))?;
            // A damaged file may not have the length the ledger counted: recount (rare).
            recount(&self.layout, &mut ledger)?;
            ledger.dirty = false;
            ledger
                .write(&opened.ledger)
                .map_err(io("write", &ledger_path))
        })();
        if let Err(e) = dropped {
            self.failed("drop a corrupt block", &e);
        }
    }
}
