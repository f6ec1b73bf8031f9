//! The encoding of one block file: a fixed header, the location and version it holds, and the
//! object's bytes, all under one CRC-32 (crc32fast).
//!
//! ```text
//! magic "MCDB" | crc u32 | format u32 | generation u64 | payload length u64 |
//! location length u32 | version length u32 | location | version | payload
//! ```
//! All integers little-endian. The CRC covers everything after its own field.
//!
//! # Invariants
//! - [`decode`] accepts a file only when its length is exactly what the header says and the
//!   CRC matches: a torn or overwritten block is never served.

use bytes::Bytes;

const MAGIC: &[u8; 4] = b"MCDB";
const FORMAT: u32 = 1;
/// Bytes before the location.
pub const HEADER: usize = 4 + 4 + 8 + 8 + 4 + 4 + 4;

/// What a block holds besides the bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The object's full location.
    pub location: String,
    /// Its version (an ETag or object version), when the reader knew one.
    pub version: Option<String>,
}

/// A decoded block.
#[derive(Debug)]
pub struct Block {
    /// The generation it was loaded under (see the ledger's fences).
    pub generation: u64,
    /// What it holds.
    pub identity: Identity,
    /// The object's bytes.
    pub payload: Bytes,
}

/// Why a block file was not accepted.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Corrupt {
    /// Shorter than its header, or lengths that do not add up to the file's.
    #[error("the block is truncated or its lengths do not add up")]
    Length,
    /// Not a block of this format.
    #[error("the block has another magic or format")]
    Format,
    /// The checksum does not match.
    #[error("the block's checksum does not match")]
    Checksum,
}

/// The file of a block holding `payload` for `identity`.
pub fn encode(generation: u64, identity: &Identity, payload: &[u8]) -> Vec<u8> {
    let version = identity.version.as_deref().unwrap_or("");
    let mut out =
        Vec::with_capacity(HEADER + identity.location.len() + version.len() + payload.len());
    out.extend_from_slice(MAGIC);
    let crc_at = out.len();
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&generation.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&len32(identity.location.len()).to_le_bytes());
    out.extend_from_slice(&len32(version.len()).to_le_bytes());
    out.extend_from_slice(identity.location.as_bytes());
    out.extend_from_slice(version.as_bytes());
    out.extend_from_slice(payload);
    let crc = crc32fast::hash(&out[crc_at + 4..]);
    out[crc_at..crc_at + 4].copy_from_slice(&crc.to_le_bytes());
    out
}

fn len32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// A block file's bytes, checked.
pub fn decode(file: Bytes) -> Result<Block, Corrupt> {
    if file.len() < HEADER {
        return Err(Corrupt::Length);
    }
    if &file[..4] != MAGIC || u32_at(&file, 8) != FORMAT {
        return Err(Corrupt::Format);
    }
    let crc = u32_at(&file, 4);
    let generation = u64_at(&file, 12);
    let payload_len = usize::try_from(u64_at(&file, 20)).map_err(|_| Corrupt::Length)?;
    let location_len = u32_at(&file, 28) as usize;
    let version_len = u32_at(&file, 32) as usize;
    let total = HEADER
        .checked_add(location_len)
        .and_then(|n| n.checked_add(version_len))
        .and_then(|n| n.checked_add(payload_len))
        .ok_or(Corrupt::Length)?;
    if total != file.len() {
        return Err(Corrupt::Length);
    }
    if crc32fast::hash(&file[8..]) != crc {
        return Err(Corrupt::Checksum);
    }
    let text = |from: usize, len: usize| {
        std::str::from_utf8(&file[from..from + len])
            .map(str::to_owned)
            .map_err(|_| Corrupt::Format)
    };
    let location = text(HEADER, location_len)?;
    let version = text(HEADER + location_len, version_len)?;
    let start = HEADER + location_len + version_len;
    Ok(Block {
        generation,
        identity: Identity {
            location,
            version: (!version.is_empty()).then_some(version),
        },
        payload: file.slice(start..),
    })
}

/// The little-endian `u32` at `at` (the caller checked the length).
pub(crate) fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(word)
}

/// The little-endian `u64` at `at` (the caller checked the length).
pub(crate) fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity() -> Identity {
        Identity {
            location: "s3://b/t/metadata/00001-x.metadata.json".to_owned(),
            version: Some("\"etag-1\"".to_owned()),
        }
    }

    #[test]
    fn a_block_round_trips() {
        let file = encode(7, &identity(), b"{\"format-version\": 2}");
        let block = decode(Bytes::from(file)).expect("decodes");
        assert_eq!(block.generation, 7);
        assert_eq!(block.identity, identity());
        assert_eq!(&block.payload[..], b"{\"format-version\": 2}");
        let no_version = Identity {
            version: None,
            ..identity()
        };
        let block = decode(Bytes::from(encode(1, &no_version, b""))).expect("decodes");
        assert_eq!(block.identity, no_version);
        assert!(block.payload.is_empty());
    }

    #[test]
    fn every_torn_or_flipped_block_is_refused() {
        let file = encode(3, &identity(), &[42u8; 300]);
        for cut in 0..file.len() {
            assert!(
                decode(Bytes::copy_from_slice(&file[..cut])).is_err(),
                "cut at {cut}"
            );
        }
        for at in 0..file.len() {
            let mut flipped = file.clone();
            flipped[at] ^= 0x10;
            assert!(decode(Bytes::from(flipped)).is_err(), "flipped byte {at}");
        }
        let mut longer = file.clone();
        longer.push(0);
        assert_eq!(decode(Bytes::from(longer)).err(), Some(Corrupt::Length));
    }
}
