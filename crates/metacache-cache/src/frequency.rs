//! Frequency-aware admission in front of quick_cache's policy (TinyLFU's idea, on CLOCK-PRO).
//!
//! quick_cache admits every new key into its cold ring, a small window where a value that is
//! not asked for again soon is the first to go, and readmits a key it remembers (a ghost) as
//! hot. What it lacks is a long memory: a loop slightly larger than the cache, or a stream of
//! keys each seen twice, keeps pushing hot values out for keys that are no more popular. So
//! when a new value displaces **hot** values, the displaced values are held back
//! ([`Displaced`]) and the candidate's frequency is compared with theirs in a count-min sketch
//! of every access ([`FrequencySketch`]): the candidate stays only if it was asked for more
//! often than all of them together — a large value must be worth the several small ones it
//! displaces (or, when it is frequent, by a 1-in-128 chance, so that no pattern of requests can
//! lock a set of values in); otherwise it leaves and they return. A value that won a contest is
//! marked, and contested again when it is next displaced, even from the cold ring: it was put
//! back wherever quick_cache had room, and must not then go without a contest.
//!
//! The candidate's own frequency is taken *before* the request that brought it (its access is
//! recorded after the contest): a victim's history also ends before this request, and with
//! equal histories the resident stays. This is what keeps a fixed part of a loop resident
//! instead of cycling all of it out.
//! Values displaced from the cold ring are let go as before: the window admits newcomers
//! freely, the contest is for the hot ring.
//!
//! # A newcomer seen before
//! quick_cache lets a new key into the hot ring only by a read while it is in the cold ring
//! (3 % of the bytes) or by a return while it is remembered as a ghost (half as many keys as
//! the map expects values, one per 16 KiB of limit). While the cache fills, every new value
//! goes straight to the hot ring, and leaves it only for a value that comes in by those two
//! doors. A cache filled by a one-pass scan (a cold start that lists a large table first),
//! then asked for keys that come back further apart than those doors reach — a loop or a
//! uniform set of values smaller than 16 KiB, more of them than the cold ring holds — kept the
//! scan's values for good and hit nothing (1 KiB values under 512 KiB: hit ratio 0 for a
//! 200-key loop that fits twice over; `bench_hits` "cold loop": 0.88× the best peer). So a
//! key the history has seen before enters the cold ring referenced, as if read once more: at
//! the ring's hand it is promoted instead of evicted, and the hot values it displaces are
//! contested as any are. A key seen for the first time (a scan's) enters as before. This is
//! TinyLFU's doorkeeper on CLOCK-PRO's door; it raised every Zipf row of `bench_hits` too
//! (up to 8 % more hits at a 1 % budget).
//!
//! The sketch exists only once the cache has had to evict (a cache that fits its budget never
//! pays for it), sized by the residents at that moment: four 8-byte words per
//! resident, rounded up to a power of two — at most 64 bytes per resident, within the 512
//! bytes of fixed overhead the ledger charges every value (§3), so it needs no charge of its
//! own. It does not grow afterwards (a limit raised later leaves it smaller than ideal, which
//! costs accuracy, not memory).

use std::hash::{BuildHasher, Hash};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use quick_cache::DefaultHashBuilder;

use crate::Cached;
use crate::sketch::FrequencySketch;

/// Below this estimate a candidate that is not more frequent than its victims is never
/// admitted by chance: chance only breaks ties among frequent keys.
const CHANCE_FLOOR: u8 = 6;

/// Sketch words per resident when the history starts (one per resident lost up to 5 % of the
/// hits of a 1 % budget in `bench_hits`: the keys a small cache must tell apart are mostly not
/// resident).
const WORDS_PER_RESIDENT: usize = 4;

/// The hot values one insertion displaced, held back until the contest is decided, each with
/// the charge it held (released when it left the map: the ledger counts what the map holds,
/// and a victim put back reserves its charge again). The default (what quick_cache's own calls
/// use) holds nothing back: the eviction hook releases every value at once, as an eviction.
pub(crate) struct Displaced<K, V> {
    collect: bool,
    /// Whether the insertion evicted anything (a cache under pressure keeps a history).
    pub(crate) evicted: bool,
    pub(crate) hot: Vec<(K, Cached<V>, u64)>,
}

impl<K, V> Default for Displaced<K, V> {
    fn default() -> Self {
        Self {
            collect: false,
            evicted: false,
            hot: Vec::new(),
        }
    }
}

impl<K, V> Displaced<K, V> {
    /// A request state that holds displaced hot values back.
    pub(crate) fn collecting() -> Self {
        Self {
            collect: true,
            evicted: false,
            hot: Vec::new(),
        }
    }

    /// Takes a displaced value that is contested (a hot one, or one that won a contest
    /// before) and answers the charge it held, for the caller to release now without counting
    /// an eviction yet; or gives the value back, to be released as an eviction now.
    pub(crate) fn hold(&mut self, key: K, value: Cached<V>, hot: bool) -> Result<u64, Cached<V>> {
        self.evicted = true;
        if self.collect && (hot || value.defended()) {
            let charge = value.take_charge();
            self.hot.push((key, value, charge));
            Ok(charge)
        } else {
            Err(value)
        }
    }
}

/// One cache's access history and admission rule.
pub(crate) struct FrequencyAdmission {
    hasher: DefaultHashBuilder,
    sketch: OnceLock<FrequencySketch>,
    /// State of the generator behind the 1-in-128 chance.
    chance: AtomicU64,
}

impl Default for FrequencyAdmission {
    fn default() -> Self {
        Self {
            hasher: DefaultHashBuilder::default(),
            sketch: OnceLock::new(),
            chance: AtomicU64::new(0x9E37_79B9_7F4A_7C15),
        }
    }
}

impl FrequencyAdmission {
    /// Records an access of `key`; one load and branch until the first contest.
    #[inline]
    pub(crate) fn record<Q: Hash + ?Sized>(&self, key: &Q) {
        if let Some(sketch) = self.sketch.get() {
            self.record_in(sketch, key);
        }
    }

    /// Kept out of line so that the hit path of a cache without pressure stays small enough
    /// to be inlined into its callers.
    #[inline(never)]
    fn record_in<Q: Hash + ?Sized>(&self, sketch: &FrequencySketch, key: &Q) {
        sketch.record(self.hasher.hash_one(key));
    }

    /// Starts the history, sized for `residents` ([`FrequencyAdmission::words_for`]), unless
    /// it exists.
    pub(crate) fn start(&self, residents: usize) {
        if self.sketch.get().is_none() {
            let _ = self.sketch.set(FrequencySketch::for_keys(
                residents.saturating_mul(WORDS_PER_RESIDENT),
            ));
        }
    }

    /// The words of the history a cache of `residents` values starts:
    /// [`WORDS_PER_RESIDENT`] each, rounded up to a power of two within the sketch's bounds.
    pub(crate) fn words_for(residents: usize) -> usize {
        FrequencySketch::words_for(residents.saturating_mul(WORDS_PER_RESIDENT))
    }

    /// Words of the sketch, once it exists (0 before).
    pub(crate) fn words(&self) -> usize {
        self.sketch.get().map_or(0, FrequencySketch::words)
    }

    /// Whether `key` was asked for before (as far as the history tells; `false` without one).
    pub(crate) fn seen<Q: Hash + ?Sized>(&self, key: &Q) -> bool {
        self.sketch
            .get()
            .is_some_and(|sketch| sketch.frequency(self.hasher.hash_one(key)) > 0)
    }

    /// Whether `candidate`, whose insertion displaced the values of `victims`, stays.
    /// `residents` sizes the sketch at the first contest (which admits: there is no history
    /// yet): four words per resident, as one per resident lost up to 5 % of the hits of a
    /// 1 % budget in `bench_hits` (the keys a small cache must tell apart are mostly not
    /// resident). `accesses` is the cache's running count of hits and misses, for aging.
    pub(crate) fn admits<'a, K: Hash + 'a>(
        &self,
        candidate: &K,
        victims: impl Iterator<Item = &'a K>,
        residents: usize,
        accesses: u64,
    ) -> bool {
        let Some(sketch) = self.sketch.get() else {
            self.start(residents);
            return true;
        };
        sketch.age_if_due(accesses);
        let frequency = sketch.frequency(self.hasher.hash_one(candidate));
        let strongest: u32 = victims
            .map(|victim| u32::from(sketch.frequency(self.hasher.hash_one(victim))))
            .sum();
        u32::from(frequency) > strongest || (frequency >= CHANCE_FLOOR && self.one_in_128())
    }

    /// Bytes of the sketch, once it exists.
    pub(crate) fn bytes(&self) -> usize {
        self.sketch.get().map_or(0, FrequencySketch::bytes)
    }

    /// Halves the sketch's table while it has twice `words` or more (and more than its
    /// smallest): a quota advisor's miniature keeps its history its sample's share of the
    /// real cache's as the sampling rate drops. Returns the words it has (0 without one).
    pub(crate) fn fold_to(&mut self, words: f64) -> usize {
        let Some(sketch) = self.sketch.get_mut() else {
            return 0;
        };
        while sketch.words() as f64 >= 2.0 * words && sketch.fold() {}
        sketch.words()
    }

    fn one_in_128(&self) -> bool {
        // SplitMix64 over a shared state: contests are on the miss path, and a lost update
        // only repeats a draw.
        let state = self
            .chance
            .fetch_add(0x9E37_79B9_7F4A_7C15, Relaxed)
            .wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut x = state;
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (x ^ (x >> 31)) & 127 == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_contest_admits_and_starts_the_history() {
        let admission = FrequencyAdmission::default();
        admission.record(&1u64);
        assert_eq!(admission.bytes(), 0, "no sketch before pressure");
        assert!(admission.admits(&1u64, [2u64].iter(), 1000, 0));
        assert_eq!(admission.bytes(), 4096 * 8, "four words per resident");
    }

    #[test]
    fn a_key_is_seen_once_the_history_started_and_recorded_it() {
        let admission = FrequencyAdmission::default();
        admission.record(&1u64);
        assert!(!admission.seen(&1u64), "no history before pressure");
        admission.start(1000);
        assert_eq!(admission.bytes(), 4096 * 8, "four words per resident");
        assert!(!admission.seen(&1u64), "recorded before the history began");
        admission.record(&1u64);
        assert!(admission.seen(&1u64));
        assert!(!admission.seen(&2u64));
        admission.start(1);
        assert_eq!(admission.bytes(), 4096 * 8, "started once");
    }

    #[test]
    fn a_candidate_must_be_asked_for_more_often_than_its_victims_together() {
        let admission = FrequencyAdmission::default();
        assert!(admission.admits(&0u64, std::iter::empty(), 1000, 0));
        for _ in 0..3 {
            admission.record(&1u64);
            admission.record(&2u64);
        }
        admission.record(&3u64);
        assert!(
            !admission.admits(&1u64, [2u64].iter(), 1000, 0),
            "a tie keeps the victim"
        );
        admission.record(&1u64);
        assert!(admission.admits(&1u64, [2u64].iter(), 1000, 0));
        assert!(!admission.admits(&1u64, [3u64, 2, 1].iter(), 1000, 0));
        assert!(!admission.admits(&3u64, [2u64].iter(), 1000, 0));
        // 4 against 1 + 3: the victims together are worth as much.
        assert!(!admission.admits(&1u64, [3u64, 2].iter(), 1000, 0));
        assert!(admission.admits(&1u64, [3u64].iter(), 1000, 0));
    }

    #[test]
    fn frequent_ties_are_broken_by_chance_rarely() {
        let admission = FrequencyAdmission::default();
        assert!(admission.admits(&0u64, std::iter::empty(), 1000, 0));
        for _ in 0..10 {
            admission.record(&1u64);
            admission.record(&2u64);
        }
        let admitted = (0..12_800)
            .filter(|_| admission.admits(&1u64, [2u64].iter(), 1000, 0))
            .count();
        assert!((50..=150).contains(&admitted), "{admitted} of 12,800");
    }

    #[test]
    fn only_collecting_requests_hold_values_back_and_hand_over_their_charges() {
        let mut default: Displaced<u64, u8> = Displaced::default();
        assert!(default.hold(1, Cached::new(1, u64::MAX), true).is_err());
        let mut collecting: Displaced<u64, u8> = Displaced::collecting();
        let hot = Cached::new(1, u64::MAX);
        hot.set_charge(600);
        assert_eq!(
            collecting.hold(1, hot.clone(), true).ok(),
            Some(600),
            "held: its charge is released by the caller"
        );
        assert_eq!(hot.charge(), 0, "taken once");
        let cold = Cached::new(2, u64::MAX);
        cold.set_charge(700);
        assert!(
            collecting.hold(2, cold.clone(), false).is_err(),
            "cold: let go"
        );
        assert_eq!(cold.charge(), 700, "released by the eviction hook");
        cold.set_defended();
        assert_eq!(
            collecting.hold(2, cold, false).ok(),
            Some(700),
            "defended: contested"
        );
        assert_eq!(collecting.hot.len(), 2);
        assert_eq!(
            collecting.hot[1].2, 700,
            "the charge kept to be reserved again"
        );
    }
}
