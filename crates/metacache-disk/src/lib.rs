//! The node-shared disk tier (SPEC §8.4): immutable metadata files — Iceberg metadata files,
//! manifest lists and manifests, Paimon snapshots, schemas and manifests — kept on a local
//! disk for every process of the node (the service and the engines that embed metacache), so
//! a restart or a second process reads them from disk instead of the object store.
//!
//! One directory, one quota: every process shares the blocks, the byte ledger and the locks.
//!
//! - **Locks** ([`lock`]): `flock` on `gate` — shared for hits, exclusive for publication,
//!   eviction, invalidation and recovery — and per stripe of block ids for loads, so N
//!   processes missing one block make one source read. The kernel releases a dead process's
//!   locks; every wait has a deadline.
//! - **Blocks** ([`block`]): one file per object, written to `tmp/`, then renamed into place;
//!   a CRC covers the header, the identity and the bytes, so a torn or damaged block is never
//!   served (it is dropped, counted, and read again).
//! - **Ledger** ([`ledger`]): capacity, used bytes, block count, generations and fences in one
//!   checksummed file under 4 KiB; a `dirty` flag marks an exclusive operation in progress, so
//!   the next holder recounts after a crash. A clean start reads it and scans nothing.
//! - **Eviction** (`maintain.rs`): batched, oldest recency stamp first, down to 90 % of the
//!   capacity, before a publication that would not fit.
//! - **Generation fence**: [`DiskTier::invalidate`] (REFRESH, DROP of a catalog) raises its
//!   scope's fence; blocks loaded before it are never served again, and a load that started
//!   before it is not published.
//! - **Fail-open**: any disk error falls back to the source and is counted in [`DiskStats`].
//!
//! # Invariants
//! - Only objects whose bytes never change under one location (plus the size or version the
//!   caller knows) may go through [`DiskTier::read_through`]; mutable files (version hints,
//!   `LATEST`) must not.
//! - Same user, local file system: `flock` does not coordinate across NFS clients.

pub mod block;
pub mod layout;
pub mod ledger;
pub mod lock;
mod maintain;
pub mod testing;
mod tier;

use std::path::PathBuf;
use std::time::Duration;

pub use maintain::LOW_WATER;
pub use tier::{BlockKey, DiskStats, DiskTier, MAX_BLOCK_FRACTION, Options};

/// Why an operation on the tier did not happen (the read path never returns these: it falls
/// back to the source).
#[derive(Debug, thiserror::Error)]
pub enum DiskError {
    /// A file operation failed.
    #[error("could not {op} {path}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// To which file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// Another process held the gate for longer than the wait.
    #[error("{path} stayed locked for {waited:?}")]
    LockTimeout {
        /// The lock file.
        path: PathBuf,
        /// How long this process waited.
        waited: Duration,
    },
    /// The tier could not be opened.
    #[error("the disk tier is not in use: {reason}")]
    Unavailable {
        /// Why.
        reason: String,
    },
}

/// The size of the file system holding `dir` (what a percentage capacity refers to).
pub fn filesystem_bytes(dir: &std::path::Path) -> std::io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let mut probe = dir.to_path_buf();
    // The directory may not exist yet: ask about its nearest existing ancestor.
    while !probe.exists() {
        if !probe.pop() {
            break;
        }
    }
    let path = std::ffi::CString::new(probe.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::other("the path holds a NUL byte"))?;
    let mut stat: libc::statvfs = unsafe_zeroed();
    // SAFETY: `path` is a valid NUL-terminated string and `stat` a valid out-pointer.
    let rc = unsafe { libc::statvfs(path.as_ptr(), &mut stat) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // The field types differ between platforms (u32 on some).
    #[allow(clippy::useless_conversion)]
    Ok(u64::from(stat.f_blocks).saturating_mul(u64::from(stat.f_frsize)))
}

fn unsafe_zeroed() -> libc::statvfs {
    // SAFETY: statvfs is a plain C struct of integers, for which all zeroes is a valid value.
    unsafe { std::mem::zeroed() }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_file_system_has_a_size_even_below_a_directory_not_made_yet() {
        let dir = tempfile::tempdir().expect("dir");
        let size = super::filesystem_bytes(&dir.path().join("not/yet")).expect("statvfs");
        assert!(size > 0);
    }
}
