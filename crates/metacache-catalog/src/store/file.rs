//! The embedded default store: one JSON file in the data directory, replaced atomically.
//!
//! A commit writes the whole new document to a temporary file in the same directory, flushes
//! it to disk, renames it over `catalogs.json` and flushes the directory. Rename is atomic, so
//! after a crash at any point the file holds either the old or the new document, never a mix;
//! a leftover temporary file is deleted at the next open. The document is small (definitions
//! only), so rewriting it per statement costs microseconds next to the fsyncs.
//!
//! The file holds secrets, so it is created readable by its owner only. A lock file keeps a
//! second process from using the same directory.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use super::{CatalogStore, Change, StoredState};
use crate::StoreError;

/// The document's name in the data directory.
pub const FILE_NAME: &str = "catalogs.json";
/// The lock file's name in the data directory.
pub const LOCK_NAME: &str = "metacache.lock";
/// The format this version writes and reads.
pub const FORMAT: u64 = 1;

const TEMP_PREFIX: &str = ".catalogs.json.";

#[derive(Serialize, Deserialize)]
struct Document {
    format: u64,
    #[serde(flatten)]
    state: StoredState,
}

/// A [`CatalogStore`] in one local file.
#[derive(Debug)]
pub struct FileStore {
    dir: PathBuf,
    path: PathBuf,
    state: Mutex<StoredState>,
    /// Held open for the store's lifetime: the OS releases the lock if the process dies.
    _lock: File,
}

impl FileStore {
    /// Opens (creating if needed) the store in `dir`, taking its lock and reading its file.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, StoreError> {
        let dir = dir.as_ref().to_path_buf();
        fs::create_dir_all(&dir).map_err(io("create", &dir))?;
        let lock_path = dir.join(LOCK_NAME);
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io("open", &lock_path))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                return Err(StoreError::Locked { path: lock_path });
            }
            Err(fs::TryLockError::Error(e)) => return Err(io("lock", &lock_path)(e)),
        }
        remove_leftovers(&dir);
        let path = dir.join(FILE_NAME);
        let state = read(&path)?;
        Ok(Self {
            dir,
            path,
            state: Mutex::new(state),
            _lock: lock,
        })
    }

    /// The document's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn write(&self, state: &StoredState) -> Result<(), StoreError> {
        let document = Document {
            format: FORMAT,
            state: state.clone(),
        };
        let mut bytes = serde_json::to_vec_pretty(&document).map_err(|e| StoreError::Corrupt {
            path: self.path.clone(),
            detail: format!("cannot encode: {e}"),
        })?;
        bytes.push(b'\n');
        let mut temp = tempfile::Builder::new()
            .prefix(TEMP_PREFIX)
            .tempfile_in(&self.dir)
            .map_err(io("create a temporary file in", &self.dir))?;
        temp.write_all(&bytes).map_err(io("write", temp.path()))?;
        temp.as_file().sync_all().map_err(io("sync", temp.path()))?;
        temp.persist(&self.path)
            .map_err(|e| io("replace", &self.path)(e.error))?;
        sync_dir(&self.dir)
    }
}

impl CatalogStore for FileStore {
    fn load(&self) -> Result<StoredState, StoreError> {
        Ok(self.state.lock().clone())
    }

    fn commit(&self, change: &Change) -> Result<(), StoreError> {
        if change.is_event_only() {
            return Ok(());
        }
        let mut state = self.state.lock();
        let mut next = state.clone();
        next.apply(change);
        self.write(&next)?;
        *state = next;
        Ok(())
    }

    fn describe(&self) -> String {
        format!("file:{}", self.path.display())
    }
}

fn io(op: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + use<> {
    let path = path.to_path_buf();
    move |source| StoreError::Io { op, path, source }
}

fn read(path: &Path) -> Result<StoredState, StoreError> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(StoredState::default()),
        Err(e) => return Err(io("read", path)(e)),
    };
    let corrupt = |detail: String| StoreError::Corrupt {
        path: path.to_path_buf(),
        detail,
    };
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| corrupt(e.to_string()))?;
    let found = value.get("format").and_then(serde_json::Value::as_u64);
    match found {
        Some(FORMAT) => {}
        Some(found) => {
            return Err(StoreError::UnsupportedFormat {
                path: path.to_path_buf(),
                found,
                supported: FORMAT,
            });
        }
        None => return Err(corrupt("no \"format\" field".to_owned())),
    }
    let document: Document = serde_json::from_value(value).map_err(|e| corrupt(e.to_string()))?;
    Ok(document.state)
}

/// Deletes temporary files of commits a crash interrupted (they were never renamed, so they
/// hold nothing the store acknowledged).
fn remove_leftovers(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
            let path = entry.path();
            if let Err(e) = fs::remove_file(&path) {
                tracing::warn!("cannot remove {}: {e}", path.display());
            }
        }
    }
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io("sync", dir))
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> Result<(), StoreError> {
    Ok(())
}
