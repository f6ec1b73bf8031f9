//! The byte ledger every process of a node shares: one small file, read and written whole
//! (one `pwrite` of less than a page) under the exclusive gate, and read for its fences under
//! the shared gate.
//!
//! ```text
//! magic "MCDL" | crc u32 | format u32 | dirty u32 | capacity u64 | used u64 | blocks u64 |
//! generation u64 | evictions u64 | fences [u64; 256]
//! ```
//!
//! # Invariants
//! - `used` and `blocks` are the sum of the lengths and the count of the files under
//!   `blocks/` whenever `dirty` is 0; an exclusive operation sets `dirty` before it touches
//!   `blocks/` and clears it with the new totals, so a process killed in between leaves
//!   `dirty` set and the next exclusive holder recounts (the only scan of `blocks/`, besides
//!   eviction's).
//! - `generation` only grows. A scope's fence is the generation of its last invalidation; a
//!   block stamped with a lower generation than its scope's fence is never served.
//! - A ledger that is missing or does not check out cannot vouch for any fence: the blocks
//!   are removed before a new ledger is written.

use std::fs::File;
use std::os::unix::fs::FileExt;

use crate::block::{u32_at, u64_at};

const MAGIC: &[u8; 4] = b"MCDL";
const FORMAT: u32 = 1;
/// Fence slots; scopes share a slot by hash (a shared slot only fences more).
pub const FENCES: usize = 256;
const FIXED: usize = 4 + 4 + 4 + 4 + 8 * 5;
/// The ledger's length on disk.
pub const LEN: usize = FIXED + 8 * FENCES;

/// The ledger's contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ledger {
    /// An exclusive operation started and did not finish.
    pub dirty: bool,
    /// Bytes the published blocks may take.
    pub capacity: u64,
    /// Bytes they take (file lengths).
    pub used: u64,
    /// How many there are.
    pub blocks: u64,
    /// The last generation handed out.
    pub generation: u64,
    /// Blocks evicted by every process since the ledger was created.
    pub evictions: u64,
    /// Each slot's fence.
    pub fences: Box<[u64; FENCES]>,
}

impl Ledger {
    /// An empty ledger of `capacity` bytes.
    pub fn new(capacity: u64) -> Self {
        Self {
            dirty: false,
            capacity,
            used: 0,
            blocks: 0,
            generation: 1,
            evictions: 0,
            fences: Box::new([0; FENCES]),
        }
    }

    /// The bytes on disk.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(LEN);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&FORMAT.to_le_bytes());
        out.extend_from_slice(&u32::from(self.dirty).to_le_bytes());
        for n in [
            self.capacity,
            self.used,
            self.blocks,
            self.generation,
            self.evictions,
        ] {
            out.extend_from_slice(&n.to_le_bytes());
        }
        for fence in self.fences.iter() {
            out.extend_from_slice(&fence.to_le_bytes());
        }
        let crc = crc32fast::hash(&out[8..]);
        out[4..8].copy_from_slice(&crc.to_le_bytes());
        out
    }

    /// A ledger read back; `None` when it does not check out.
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        if !Self::checks_out(bytes) {
            return None;
        }
        let mut fences = Box::new([0u64; FENCES]);
        for (i, fence) in fences.iter_mut().enumerate() {
            *fence = u64_at(bytes, FIXED + 8 * i);
        }
        Some(Self {
            dirty: u32_at(bytes, 12) != 0,
            capacity: u64_at(bytes, 16),
            used: u64_at(bytes, 24),
            blocks: u64_at(bytes, 32),
            generation: u64_at(bytes, 40),
            evictions: u64_at(bytes, 48),
            fences,
        })
    }

    /// Whether `bytes` are a whole ledger of this format with a matching CRC.
    fn checks_out(bytes: &[u8]) -> bool {
        bytes.len() == LEN
            && &bytes[..4] == MAGIC
            && u32_at(bytes, 8) == FORMAT
            && crc32fast::hash(&bytes[8..]) == u32_at(bytes, 4)
    }

    /// The ledger in `file`; `Ok(None)` when it is empty or does not check out.
    pub fn read(file: &File) -> std::io::Result<Option<Self>> {
        let mut bytes = vec![0u8; LEN];
        match file.read_exact_at(&mut bytes, 0) {
            Ok(()) => Ok(Self::decode(&bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Writes the ledger into `file` (one write of [`LEN`] bytes).
    pub fn write(&self, file: &File) -> std::io::Result<()> {
        file.write_all_at(&self.encode(), 0)
    }

    /// What a hit needs — the current generation and the fence of `slot` — read into a stack
    /// buffer and checked like [`Ledger::read`], without decoding the rest; `Ok(None)` when the
    /// ledger does not check out.
    pub fn read_fence(file: &File, slot: usize) -> std::io::Result<Option<(u64, u64)>> {
        let mut bytes = [0u8; LEN];
        match file.read_exact_at(&mut bytes, 0) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e),
        }
        if !Self::checks_out(&bytes) {
            return Ok(None);
        }
        Ok(Some((
            u64_at(&bytes, 40),
            u64_at(&bytes, FIXED + 8 * (slot % FENCES)),
        )))
    }

    /// The capacity, used bytes and block count, read alone.
    pub fn read_totals(file: &File) -> std::io::Result<(u64, u64, u64)> {
        let mut bytes = [0u8; 24];
        file.read_exact_at(&mut bytes, 16)?;
        Ok((u64_at(&bytes, 0), u64_at(&bytes, 8), u64_at(&bytes, 16)))
    }
}

/// The fence slot of `scope`.
pub fn slot(scope: &str) -> usize {
    (twox_hash::XxHash3_128::oneshot(scope.as_bytes()) % FENCES as u128) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ledger_round_trips_and_a_damaged_one_is_refused() {
        let mut ledger = Ledger::new(1 << 30);
        ledger.used = 12345;
        ledger.blocks = 7;
        ledger.generation = 9;
        ledger.evictions = 3;
        ledger.dirty = true;
        ledger.fences[slot("lake")] = 9;
        let bytes = ledger.encode();
        assert_eq!(bytes.len(), LEN);
        const { assert!(LEN < 4096, "one write of less than a page") };
        assert_eq!(Ledger::decode(&bytes), Some(ledger.clone()));
        for at in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[at] ^= 1;
            assert_eq!(Ledger::decode(&flipped), None, "flipped byte {at}");
        }
        assert_eq!(Ledger::decode(&bytes[..LEN - 1]), None);

        let file = tempfile::tempfile().expect("file");
        assert_eq!(Ledger::read(&file).expect("read"), None);
        ledger.write(&file).expect("write");
        assert_eq!(Ledger::read(&file).expect("read"), Some(ledger.clone()));
        assert_eq!(
            Ledger::read_fence(&file, slot("lake")).expect("fence"),
            Some((9, 9))
        );
        assert_eq!(
            Ledger::read_totals(&file).expect("totals"),
            (1 << 30, 12345, 7)
        );
    }
}
