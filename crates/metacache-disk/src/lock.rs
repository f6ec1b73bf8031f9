//! File locks (`flock` through the standard library): each acquisition has its own open file
//! description, so threads of one process exclude each other exactly as processes do, and the
//! kernel releases a lock when its process dies.
//!
//! # Invariants
//! - No wait is unbounded: a caller gives up after its deadline and falls back to the source.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// Open handles of one lock file, reused so that a hit does not open the file again.
#[derive(Debug)]
pub struct LockFile {
    path: PathBuf,
    pool: Mutex<Vec<File>>,
}

/// A held lock; released (and its handle pooled) on drop.
#[derive(Debug)]
pub struct Held<'a> {
    file: Option<File>,
    owner: &'a LockFile,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if let Some(file) = self.file.take()
            && file.unlock().is_ok()
        {
            let mut pool = self.owner.pool.lock();
            if pool.len() < 64 {
                pool.push(file);
            }
        }
    }
}

impl LockFile {
    /// The lock file at `path` (created when missing and the directory is writable).
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let file = open(path)?;
        Ok(Self {
            path: path.to_path_buf(),
            pool: Mutex::new(vec![file]),
        })
    }

    fn handle(&self) -> std::io::Result<File> {
        match self.pool.lock().pop() {
            Some(file) => Ok(file),
            None => open(&self.path),
        }
    }

    /// The lock if it is free now (`Ok(None)` when another holder has it).
    pub fn try_acquire(&self, exclusive: bool) -> std::io::Result<Option<Held<'_>>> {
        let file = self.handle()?;
        let tried = if exclusive {
            file.try_lock()
        } else {
            file.try_lock_shared()
        };
        match tried {
            Ok(()) => Ok(Some(Held {
                file: Some(file),
                owner: self,
            })),
            Err(TryLockError::WouldBlock) => {
                self.pool.lock().push(file);
                Ok(None)
            }
            Err(TryLockError::Error(e)) => Err(e),
        }
    }

    /// The lock, waiting (this thread sleeps) at most `wait`; `Ok(None)` when it stayed taken.
    pub fn acquire(&self, exclusive: bool, wait: Duration) -> std::io::Result<Option<Held<'_>>> {
        let deadline = Instant::now() + wait;
        let mut pause = Duration::from_micros(200);
        loop {
            if let Some(held) = self.try_acquire(exclusive)? {
                return Ok(Some(held));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            std::thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(Duration::from_millis(10));
        }
    }
}

/// A stripe lock, held while one process loads a block the others wait for.
#[derive(Debug)]
pub struct Stripe {
    _file: File,
}

/// The exclusive lock of the stripe file at `path` if it is free now.
pub fn try_stripe(path: &Path) -> std::io::Result<Option<Stripe>> {
    let file = open(path)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(Stripe { _file: file })),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

fn open(path: &Path) -> std::io::Result<File> {
    match OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
    {
        Ok(file) => Ok(file),
        // A read-only directory: locks still work on a read-only handle.
        Err(_) => File::open(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_of_one_process_exclude_each_other() {
        let dir = tempfile::tempdir().expect("dir");
        let gate = LockFile::open(&dir.path().join("gate")).expect("gate");
        let shared_a = gate.try_acquire(false).expect("lock").expect("free");
        let shared_b = gate
            .try_acquire(false)
            .expect("lock")
            .expect("shared twice");
        assert!(
            gate.try_acquire(true).expect("lock").is_none(),
            "held shared"
        );
        drop((shared_a, shared_b));
        let exclusive = gate.try_acquire(true).expect("lock").expect("free again");
        assert!(gate.try_acquire(false).expect("lock").is_none());
        let started = Instant::now();
        assert!(
            gate.acquire(false, Duration::from_millis(30))
                .expect("lock")
                .is_none()
        );
        assert!(started.elapsed() >= Duration::from_millis(30));
        drop(exclusive);
        assert!(
            gate.acquire(true, Duration::from_millis(30))
                .expect("lock")
                .is_some()
        );

        let stripe = dir.path().join("stripe");
        let held = try_stripe(&stripe).expect("stripe").expect("free");
        assert!(try_stripe(&stripe).expect("stripe").is_none());
        drop(held);
        assert!(try_stripe(&stripe).expect("stripe").is_some());
    }
}
