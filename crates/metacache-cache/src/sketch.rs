//! A concurrent count-min sketch of how often keys were asked for: the frequency history that
//! admission under pressure compares a candidate against the values it would displace
//! ([`crate::frequency`]).
//!
//! Each key owns four 4-bit counters inside one 64-bit word of the table (one per quarter of
//! the word, its position in the quarter chosen by two bits of the hash), so recording an
//! access is one compare-and-swap on one word, computed without a branch per counter, and the
//! estimate is the least of the four. Counters saturate at 15; every `10 × words` accesses all counters
//! are halved, so the sketch forgets what stopped being asked for (TinyLFU's aging). The sketch
//! keeps no count of its own (one shared counter would be a contended line on every hit): its
//! owner passes the accesses it already counts (hits + misses) to [`FrequencySketch::age_if_due`].
//!
//! # Invariants
//! - The table never grows after construction: its memory is `8 × words` bytes, sized by the
//!   caller from the residents it must tell apart (a quota advisor's miniature may fold it to
//!   half, [`FrequencySketch::fold`]; nothing makes it larger).
//! - Concurrent recording and halving may lose an increment of one word; the
//!   estimate stays within [0, 15] and an approximation of the truth, which is all admission
//!   needs.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// For each value of a hash's top byte, the lowest bit of each of the key's four counters:
/// one counter in each quarter of the word, two bits of the byte choosing which of its four.
const COUNTER_UNITS: [u64; 256] = {
    let mut units = [0u64; 256];
    let mut byte = 0;
    while byte < 256 {
        let mut quarter = 0;
        while quarter < 4 {
            let within = (byte >> (2 * quarter)) & 3;
            units[byte] |= 1 << (16 * quarter + 4 * within);
            quarter += 1;
        }
        byte += 1;
    }
    units
};
/// A counter's ceiling.
const MAX_COUNT: u64 = 15;
/// Every counter but its top bit, for halving a whole word in one shift.
const HALF_MASK: u64 = 0x7777_7777_7777_7777;
/// Recorded accesses per word between two halvings.
const SAMPLES_PER_WORD: u64 = 10;
/// The smallest and largest tables, in words.
const MIN_WORDS: usize = 64;
const MAX_WORDS: usize = 1 << 22;

pub(crate) struct FrequencySketch {
    table: Box<[AtomicU64]>,
    mask: usize,
    /// The owner's access count at the last halving.
    aged_at: AtomicU64,
}

impl FrequencySketch {
    /// A sketch that tells apart about `keys` distinct keys (one word per key, rounded up to a
    /// power of two within [64, 4 Mi] words).
    pub(crate) fn for_keys(keys: usize) -> Self {
        let words = Self::words_for(keys);
        Self {
            table: (0..words).map(|_| AtomicU64::new(0)).collect(),
            mask: words - 1,
            aged_at: AtomicU64::new(0),
        }
    }

    /// The words of a sketch for about `keys` distinct keys ([`FrequencySketch::for_keys`]).
    pub(crate) fn words_for(keys: usize) -> usize {
        keys.clamp(MIN_WORDS, MAX_WORDS).next_power_of_two()
    }

    /// Bytes the table holds.
    pub(crate) fn bytes(&self) -> usize {
        self.table.len() * std::mem::size_of::<AtomicU64>()
    }

    /// Words in the table.
    pub(crate) fn words(&self) -> usize {
        self.table.len()
    }

    /// Halves the table, unless it is at its smallest: each word of the lower half takes in
    /// its twin of the upper half, counter by counter, saturating. A key's word is the low bits
    /// of its hash and its counters' places the top byte, so the result is what a table half
    /// as large would have counted (before the next halving of the counts). For a history that
    /// must now tell apart half as many keys: a quota advisor's miniature whose sampling rate
    /// halved. Returns whether it halved.
    pub(crate) fn fold(&mut self) -> bool {
        let words = self.table.len();
        if words <= MIN_WORDS {
            return false;
        }
        let half = words / 2;
        let (low, high) = self.table.split_at_mut(half);
        let table: Box<[AtomicU64]> = low
            .iter_mut()
            .zip(high.iter_mut())
            .map(|(a, b)| AtomicU64::new(add_counters(*a.get_mut(), *b.get_mut())))
            .collect();
        self.table = table;
        self.mask = half - 1;
        true
    }

    /// The word of `hash` and the lowest bit of each of its four counters, as one mask.
    #[inline]
    fn slots(&self, hash: u64) -> Option<(&AtomicU64, u64)> {
        // The word from the low bits, the positions from the top byte: independent bits.
        let word = self.table.get((hash as usize) & self.mask)?;
        Some((word, COUNTER_UNITS[(hash >> 56) as usize]))
    }

    /// The estimated number of recorded accesses of the key hashed `hash` since it was last
    /// halved, at most 15.
    pub(crate) fn frequency(&self, hash: u64) -> u8 {
        let Some((word, units)) = self.slots(hash) else {
            return 0;
        };
        let value = word.load(Relaxed);
        (0..64)
            .step_by(4)
            .filter(|offset| units >> offset & 1 == 1)
            .map(|offset| ((value >> offset) & MAX_COUNT) as u8)
            .min()
            .unwrap_or(0)
    }

    /// Records one access of the key hashed `hash`: each of its four counters that is below
    /// 15 goes up by one, in one compare-and-swap of its word (no branch per counter).
    #[inline]
    pub(crate) fn record(&self, hash: u64) {
        let Some((word, units)) = self.slots(hash) else {
            return;
        };
        let mut current = word.load(Relaxed);
        loop {
            // The lowest bit of each counter of this key that is already 15.
            let saturated = current & (current >> 1) & (current >> 2) & (current >> 3) & units;
            let increment = units ^ saturated;
            if increment == 0 {
                return;
            }
            match word.compare_exchange_weak(current, current + increment, Relaxed, Relaxed) {
                Ok(_) => return,
                Err(actual) => current = actual,
            }
        }
    }

    /// Halves every counter if `10 × words` accesses happened since the last halving;
    /// `accesses` is the owner's running count of them. O(words), once per that many accesses.
    pub(crate) fn age_if_due(&self, accesses: u64) {
        let due = SAMPLES_PER_WORD * self.table.len() as u64;
        let aged_at = self.aged_at.load(Relaxed);
        if accesses.saturating_sub(aged_at) < due
            || self
                .aged_at
                .compare_exchange(aged_at, accesses, Relaxed, Relaxed)
                .is_err()
        {
            return;
        }
        for word in self.table.iter() {
            let _ = word.fetch_update(Relaxed, Relaxed, |w| Some((w >> 1) & HALF_MASK));
        }
    }
}

/// The sixteen 4-bit counters of two words added pairwise, each saturating at [`MAX_COUNT`].
fn add_counters(a: u64, b: u64) -> u64 {
    (0..64).step_by(4).fold(0, |sum, offset| {
        let count = ((a >> offset) & MAX_COUNT) + ((b >> offset) & MAX_COUNT);
        sum | count.min(MAX_COUNT) << offset
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SplitMix64's finaliser: a fixed, well-mixed hash (quick_cache's hasher is seeded per
    /// instance).
    fn hash(key: u64) -> u64 {
        let mut x = key.wrapping_add(0x9E37_79B9_7F4A_7C15);
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^ (x >> 31)
    }

    #[test]
    fn a_folded_table_counts_what_one_half_as_large_would_have() {
        let mut folded = FrequencySketch::for_keys(256);
        let half = FrequencySketch::for_keys(128);
        for key in 0..2_000u64 {
            // Keys below 50 are asked for up to 20 times: some counters saturate.
            for _ in 0..=(if key < 50 { key % 21 } else { key % 3 }) {
                folded.record(hash(key));
                half.record(hash(key));
            }
        }
        assert!(folded.fold());
        assert_eq!(folded.words(), 128);
        for key in 0..2_000u64 {
            assert_eq!(
                folded.frequency(hash(key)),
                half.frequency(hash(key)),
                "key {key}"
            );
        }
        let mut smallest = FrequencySketch::for_keys(1);
        assert!(!smallest.fold(), "{MIN_WORDS} words at the least");
        assert_eq!(smallest.words(), MIN_WORDS);
    }

    #[test]
    fn counts_up_to_fifteen() {
        let sketch = FrequencySketch::for_keys(1024);
        assert_eq!(sketch.frequency(hash(7)), 0);
        for expected in 1..=15 {
            sketch.record(hash(7));
            assert_eq!(sketch.frequency(hash(7)), expected);
        }
        sketch.record(hash(7));
        assert_eq!(sketch.frequency(hash(7)), 15, "saturates");
    }

    #[test]
    fn tells_frequent_keys_from_rare_ones_when_full() {
        // As many keys as words: a key's estimate is inflated only if every one of its four
        // counters collides with a more frequent key's.
        let keys = 4096u64;
        let sketch = FrequencySketch::for_keys(keys as usize);
        for round in 0..8 {
            for key in 0..keys {
                // Keys below 100 are asked for eight times, the rest once.
                if key < 100 || round == 0 {
                    sketch.record(hash(key));
                }
            }
        }
        let frequent = (0..100).filter(|&k| sketch.frequency(hash(k)) >= 8).count();
        let rare_inflated = (100..keys)
            .filter(|&k| sketch.frequency(hash(k)) > 2)
            .count();
        assert_eq!(frequent, 100);
        assert!(
            rare_inflated < (keys as usize) / 100,
            "{rare_inflated} rare keys look frequent"
        );
    }

    #[test]
    fn halves_after_ten_samples_per_word() {
        let sketch = FrequencySketch::for_keys(64);
        for _ in 0..12 {
            sketch.record(hash(1));
        }
        sketch.age_if_due(10 * 64 - 1);
        assert_eq!(sketch.frequency(hash(1)), 12, "not due yet");
        sketch.age_if_due(10 * 64);
        assert_eq!(sketch.frequency(hash(1)), 6);
        sketch.age_if_due(10 * 64 + 5);
        assert_eq!(
            sketch.frequency(hash(1)),
            6,
            "due again only 640 accesses later"
        );
    }

    #[test]
    fn bounded_by_its_table() {
        assert_eq!(FrequencySketch::for_keys(0).bytes(), 64 * 8);
        assert_eq!(FrequencySketch::for_keys(1000).bytes(), 1024 * 8);
        assert_eq!(FrequencySketch::for_keys(usize::MAX).bytes(), MAX_WORDS * 8);
    }
}
