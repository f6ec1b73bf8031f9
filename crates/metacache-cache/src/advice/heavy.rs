//! The heaviest keys, counted exactly instead of sampled.
//!
//! A spatial sample's error is dominated by the few hottest keys: in a Zipf trace the hottest
//! key alone can be a tenth of all requests, and whether its hash fell under the threshold moves
//! the whole curve. So every value reports its hits every [`crate::slot::HEAVY_REPORT`]th hit,
//! and the keys reported most are kept here with their hits and their charge (a space-saving
//! table of bounded size: a new key replaces the least-counted one only when that one has
//! fewer hits than the report). These keys leave the miniatures, which then model only the
//! rest; at a size `B` the prediction counts the heavy keys that fit in `B` hottest first
//! (they are the values any policy keeps) and the miniatures' rest at `B` minus their bytes.
//!
//! Reports come in steps of 64 hits, so only keys reported at least [`PROMOTE_HITS`] times
//! count as heavy (and each is credited half a step for the hits since its last report): for a
//! key with fewer hits the step would be a large error, and such a key is left to the sample.
//!
//! Invariant: at most `limit` keys; counts age with the miniatures' counts.

use std::collections::HashMap;

#[derive(Debug, Clone, Copy)]
struct HeavyKey {
    hits: f64,
    charge: u64,
}

/// The table of heavy keys.
pub(super) struct Heavy {
    keys: HashMap<u64, HeavyKey>,
    limit: usize,
}

/// Hits from which a key of the table is heavy.
const PROMOTE_HITS: f64 = 256.0;

/// Bytes one heavy key costs in the table.
const BYTES_PER_KEY: u64 = 48;

impl Heavy {
    pub(super) fn new(limit: usize) -> Self {
        Self {
            keys: HashMap::new(),
            limit: limit.max(1),
        }
    }

    /// Whether the key of `hash` is heavy: counted here, not in the miniatures.
    pub(super) fn is_heavy(&self, hash: u64) -> bool {
        self.keys.get(&hash).is_some_and(|k| k.hits >= PROMOTE_HITS)
    }

    /// The hashes of the heavy keys.
    pub(super) fn heavy_keys(&self) -> Vec<u64> {
        let heavy = self.keys.iter().filter(|(_, k)| k.hits >= PROMOTE_HITS);
        heavy.map(|(hash, _)| *hash).collect()
    }

    /// `hits` more hits of the key of `hash`, charged `charge` (0: unknown). Returns whether the
    /// key became heavy now.
    pub(super) fn report(&mut self, hash: u64, charge: u64, hits: f64) -> bool {
        if let Some(key) = self.keys.get_mut(&hash) {
            let was = key.hits >= PROMOTE_HITS;
            key.hits += hits;
            if charge != 0 {
                key.charge = charge;
            }
            return !was && key.hits >= PROMOTE_HITS;
        }
        let mut counted = hits;
        if self.keys.len() >= self.limit {
            let least = self
                .keys
                .iter()
                .min_by(|a, b| a.1.hits.total_cmp(&b.1.hits))
                .map(|(hash, key)| (*hash, key.hits));
            match least {
                Some((least, least_hits)) if least_hits < hits => {
                    self.keys.remove(&least);
                    // Space-saving: the newcomer may have had the hits of the one it replaces.
                    counted += least_hits / 2.0;
                }
                _ => return false,
            }
        }
        self.keys.insert(
            hash,
            HeavyKey {
                hits: counted,
                charge,
            },
        );
        counted >= PROMOTE_HITS
    }

    /// Halves the counts; keys left with less than one hit go.
    pub(super) fn age(&mut self) {
        self.keys.retain(|_, key| {
            key.hits /= 2.0;
            key.hits >= 1.0
        });
    }

    /// The heavy keys by hits, most first: (hits, charge), each credited half a report step
    /// for the hits since its last report.
    pub(super) fn by_hits(&self, step: f64) -> Vec<(f64, u64)> {
        let mut keys: Vec<(f64, u64)> = self
            .keys
            .values()
            .filter(|k| k.hits >= PROMOTE_HITS)
            .map(|k| (k.hits + step / 2.0, k.charge))
            .collect();
        keys.sort_by(|a, b| b.0.total_cmp(&a.0));
        keys
    }

    /// Bytes the table holds.
    pub(super) fn bytes(&self) -> u64 {
        self.keys.capacity() as u64 * BYTES_PER_KEY
    }
}

/// Of `keys` (by hits, most first), the hits and bytes of those that fit in `size` bytes,
/// hottest first (a key that does not fit is skipped, a smaller one after it may).
pub(super) fn fitting(keys: &[(f64, u64)], size: u64) -> (f64, u64) {
    let room = (size as f64 * 0.97) as u64;
    let (mut hits, mut bytes) = (0.0, 0u64);
    for &(key_hits, charge) in keys {
        if bytes + charge <= room {
            hits += key_hits;
            bytes += charge;
        }
    }
    (hits, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_table_keeps_the_most_reported_keys() {
        let mut heavy = Heavy::new(2);
        assert!(!heavy.report(1, 100, 64.0), "not heavy yet");
        assert!(!heavy.report(2, 100, 64.0));
        assert!(heavy.report(1, 100, 448.0), "512 hits: heavy");
        assert!(!heavy.report(1, 100, 64.0), "heavy already");
        assert!(!heavy.report(3, 100, 64.0), "no fewer hits than the least");
        heavy.age();
        assert!(!heavy.report(3, 100, 1024.0) || heavy.is_heavy(3));
        assert!(heavy.is_heavy(3), "replaced key 2 (32 hits)");
        assert!(!heavy.is_heavy(2));
        assert_eq!(
            heavy.by_hits(64.0).len(),
            1 + usize::from(heavy.is_heavy(1))
        );
    }

    #[test]
    fn the_hottest_keys_that_fit_count() {
        let keys = [(100.0, 600), (50.0, 600), (10.0, 100)];
        assert_eq!(fitting(&keys, 1000), (110.0, 700));
        assert_eq!(fitting(&keys, 2000), (160.0, 1300));
        assert_eq!(fitting(&keys, 10), (0.0, 0));
    }
}
