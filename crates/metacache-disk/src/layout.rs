//! Where things live inside a tier's directory, and how a location names its block.
//!
//! ```text
//! <dir>/metacache-disk-v1/      one versioned root: a later format gets its own
//!   gate                        flock: shared for hits, exclusive for publication, eviction,
//!                               invalidation and recovery
//!   ledger                      the byte ledger every process shares (ledger.rs)
//!   stripes/<nnn>               flock per stripe of block ids: the miss of one block is loaded
//!                               by one process while the others wait
//!   tmp/<pid>-<n>               a block being written, before its atomic rename
//!   blocks/<ab>/<32 hex>        published blocks, named by the xxh3-128 of their location
//! ```
//!
//! # Invariants
//! - A block's file name depends on its location only, so a newer version of a location
//!   replaces the older one in place (a version's identity is checked from the block's
//!   header, never from its name).
//! - Nothing outside `metacache-disk-v1/` is read, written or removed.

use std::path::{Path, PathBuf};

use twox_hash::XxHash3_128;

/// The versioned root inside the configured directory.
pub const ROOT: &str = "metacache-disk-v1";

/// Stripes of block ids that miss locks are taken on.
pub const STRIPES: u64 = 1024;

/// The id of a location's block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlockId(u128);

impl BlockId {
    /// The id of `location`.
    pub fn of(location: &str) -> Self {
        Self(XxHash3_128::oneshot(location.as_bytes()))
    }

    fn hex(self) -> String {
        format!("{:032x}", self.0)
    }

    fn stripe(self) -> u64 {
        // The low bits: xxh3 mixes every bit of the input into them.
        u64::try_from(self.0 % u128::from(STRIPES)).unwrap_or(0)
    }
}

/// The paths of one tier directory.
#[derive(Debug, Clone)]
pub struct Layout {
    root: PathBuf,
}

impl Layout {
    /// The layout under the configured directory `dir`.
    pub fn new(dir: &Path) -> Self {
        Self {
            root: dir.join(ROOT),
        }
    }

    /// The versioned root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The gate lock file.
    pub fn gate(&self) -> PathBuf {
        self.root.join("gate")
    }

    /// The ledger file.
    pub fn ledger(&self) -> PathBuf {
        self.root.join("ledger")
    }

    /// The directory of published blocks.
    pub fn blocks(&self) -> PathBuf {
        self.root.join("blocks")
    }

    /// The file of block `id`.
    pub fn block(&self, id: BlockId) -> PathBuf {
        let hex = id.hex();
        self.blocks().join(&hex[..2]).join(hex)
    }

    /// The directory of blocks being written.
    pub fn tmp(&self) -> PathBuf {
        self.root.join("tmp")
    }

    /// The directory of stripe lock files.
    pub fn stripes(&self) -> PathBuf {
        self.root.join("stripes")
    }

    /// The stripe lock file of block `id`.
    pub fn stripe(&self, id: BlockId) -> PathBuf {
        self.stripes().join(format!("{:04}", id.stripe()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_location_always_names_the_same_block() {
        let layout = Layout::new(Path::new("/cache"));
        let a = BlockId::of("s3://b/wh/t/metadata/snap-1.avro");
        assert_eq!(a, BlockId::of("s3://b/wh/t/metadata/snap-1.avro"));
        assert_ne!(a, BlockId::of("s3://b/wh/t/metadata/snap-2.avro"));
        let path = layout.block(a);
        assert!(path.starts_with("/cache/metacache-disk-v1/blocks"));
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        assert_eq!(name.len(), 32);
        let parent = path.parent().and_then(|p| p.file_name());
        assert_eq!(parent.and_then(|p| p.to_str()), Some(&name[..2]));
        assert!(a.stripe() < STRIPES);
    }
}
