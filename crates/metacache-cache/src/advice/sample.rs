//! Fixed-size spatial sampling (SHARDS, Waldspurger et al., FAST 2015): a key is sampled when
//! the hash of the key is below a threshold, so a sampled key has every one of its requests in
//! the sample and reuse is preserved. The sample holds at most `limit` keys: when a new key
//! would exceed it, the keys with the largest hashes leave — a quarter of the limit
//! ([`SHED_SHARE`]) — and the threshold drops to the lowest of them. The rate is
//! `threshold / 2^64`.
//!
//! Why a quarter at once and not one key (which keeps the sample fullest): every drop of the
//! rate rescales every miniature, and quick_cache truncates a map's ghost capacity at each
//! rescale, so the ~13,000 one-key drops of a 4,096-key sample over 100,000 keys emptied the
//! miniatures' ghost histories and put the curve 0.02–0.07 under the exact one at mid sizes.
//! A quarter at a time drops the rate eleven times from 1 to 0.04; the sample then holds
//! between three quarters of its limit and all of it.
//!
//! Keys nobody requests any more leave: at each aging, a key whose aged requests fell below
//! [`IDLE_BELOW`] goes, so the sample is a sample of the keys in use and the rate stays where
//! their number puts it, whatever the keys that came and went before. A sample left under half
//! its limit so (its keys became fewer, or a limit lowered by a flood grew back) doubles its
//! rate at the aging, up to a half
//! ([`Sampler::raise`]): the keys it lets in start with their next request (their past is
//! missing, and half-lives wear that away), and the cache marks its values under the new
//! threshold sampled (`ManagedCache`'s side), since a value is marked at its load.
//!
//! Invariant: every tracked key's hash is below the threshold, and there are at most `limit`.

use std::collections::{BinaryHeap, HashMap};

/// What the sampler knows of one sampled key.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct SampledKey {
    /// The bytes its value was last charged (0: not known yet).
    pub(super) bytes: u64,
    /// Its requests and the times its value was invalidated, halved as the miniatures' counts
    /// age.
    pub(super) requests: f64,
    pub(super) invalidations: f64,
    /// Its requests that the cache itself hit (aged as the requests are).
    pub(super) hits: f64,
}

/// The sample: which keys, and at what rate.
pub(super) struct Sampler {
    threshold: u64,
    limit: usize,
    /// The limit it was built with: a limit lowered by a flood grows back to it.
    configured: usize,
    /// The most keys the advisor's share of the node's advisors' memory affords
    /// ([`Sampler::fit`]): a limit lowered by a flood grows back to this at most.
    ceiling: usize,
    keys: HashMap<u64, SampledKey>,
    /// The tracked hashes, largest first: the next to leave when the sample is full.
    order: BinaryHeap<u64>,
    /// Sum of the known bytes of the tracked keys.
    known_bytes: u64,
    /// Sum of the tracked keys' requests (aged as theirs are).
    requests: f64,
}

/// Bytes one tracked key costs: its map slot (hash, state, control byte, load-factor slack)
/// and its heap slot.
pub(super) const BYTES_PER_KEY: u64 = 64;

/// A key whose aged requests fall below this leaves the sample at the next aging: one request
/// seven half-lives ago (105 minutes at the default 15); a hundred, thirteen. Without it, a cache
/// whose keys turn over (a table's new partitions, a new snapshot's manifests) would fill its
/// sample with keys nobody asks for any more, and each new key would push the rate down: after
/// the keys had turned over three times, a quarter of the sample would be keys still in use.
pub(super) const IDLE_BELOW: f64 = 1.0 / 64.0;

/// A full sample sheds this share of its limit at once (a sample of fewer than 4 keys, the one
/// key over): 4 is a quarter.
pub(super) const SHED_SHARE: usize = 4;

impl Sampler {
    /// A sampler of at most `limit` keys, at rate 1 until it is full.
    pub(super) fn new(limit: usize) -> Self {
        Self {
            threshold: u64::MAX,
            limit: limit.max(1),
            configured: limit.max(1),
            ceiling: limit.max(1),
            keys: HashMap::new(),
            order: BinaryHeap::new(),
            known_bytes: 0,
            requests: 0.0,
        }
    }

    /// Keys with a hash below this are sampled.
    pub(super) fn threshold(&self) -> u64 {
        self.threshold
    }

    /// The sampling rate, in (0, 1].
    pub(super) fn rate(&self) -> f64 {
        if self.threshold == u64::MAX {
            1.0
        } else {
            self.threshold as f64 / 18_446_744_073_709_551_616.0
        }
    }

    /// Keys tracked now.
    pub(super) fn len(&self) -> usize {
        self.keys.len()
    }

    /// The most keys the sample holds.
    pub(super) fn limit(&self) -> usize {
        self.limit
    }

    /// Sum of the known bytes of the tracked keys.
    pub(super) fn known_bytes(&self) -> u64 {
        self.known_bytes
    }

    /// The mean requests of a tracked key (0 when none is).
    pub(super) fn mean_requests(&self) -> f64 {
        self.requests / self.keys.len().max(1) as f64
    }

    /// The tracked key of `hash`, if it is tracked.
    pub(super) fn get(&self, hash: u64) -> Option<SampledKey> {
        self.keys.get(&hash).copied()
    }

    /// Records what the value of a tracked key was charged.
    pub(super) fn set_bytes(&mut self, hash: u64, bytes: u64) {
        if let Some(key) = self.keys.get_mut(&hash) {
            self.known_bytes = self.known_bytes - key.bytes + bytes;
            key.bytes = bytes;
        }
    }

    /// Counts a request of a tracked key, and whether the cache hit it.
    pub(super) fn count(&mut self, hash: u64, hit: bool) {
        if let Some(key) = self.keys.get_mut(&hash) {
            key.requests += 1.0;
            key.hits += f64::from(u8::from(hit));
            self.requests += 1.0;
        }
    }

    /// Counts an invalidation of a tracked key's value.
    pub(super) fn invalidated(&mut self, hash: u64) {
        if let Some(key) = self.keys.get_mut(&hash) {
            key.invalidations += 1.0;
        }
    }

    /// Halves every key's counts, as the miniatures' counts age; the keys whose requests fall
    /// below [`IDLE_BELOW`] leave, and are returned (the threshold stays: a key under it that
    /// is requested again is tracked anew).
    pub(super) fn age(&mut self) -> Vec<u64> {
        let mut idle = Vec::new();
        let (mut freed, mut requests) = (0, 0.0);
        self.keys.retain(|&hash, key| {
            key.requests /= 2.0;
            key.invalidations /= 2.0;
            key.hits /= 2.0;
            let kept = key.requests >= IDLE_BELOW;
            if kept {
                requests += key.requests;
            } else {
                idle.push(hash);
                freed += key.bytes;
            }
            kept
        });
        self.known_bytes -= freed;
        self.requests = requests;
        if !idle.is_empty() {
            self.order = self.keys.keys().copied().collect();
            if self.keys.len() < self.keys.capacity() / 4 {
                self.keys.shrink_to_fit();
                self.order.shrink_to_fit();
            }
        }
        idle
    }

    /// The tracked keys.
    pub(super) fn keys(&self) -> impl Iterator<Item = (u64, SampledKey)> + '_ {
        self.keys.iter().map(|(&hash, &key)| (hash, key))
    }

    /// Tracks `hash` (below the threshold) if it is new. Returns the hashes that left the
    /// sample to keep it within its limit — possibly `hash` itself — with the threshold
    /// lowered below them: when the sample overflows, [`SHED_SHARE`] of its limit leaves.
    pub(super) fn track(&mut self, hash: u64) -> Vec<u64> {
        debug_assert!(hash < self.threshold);
        if self.keys.contains_key(&hash) {
            return Vec::new();
        }
        self.keys.insert(hash, SampledKey::default());
        self.order.push(hash);
        if self.keys.len() <= self.limit {
            return Vec::new();
        }
        self.drop_to(self.limit - self.limit / SHED_SHARE)
    }

    /// Doubles the rate of a sample that holds fewer than half its limit (its keys became
    /// fewer, the others going idle), up to a half: the sample binds still. Returns the rate
    /// before.
    pub(super) fn raise(&mut self) -> Option<f64> {
        const QUARTER: u64 = 1 << 62;
        if self.threshold > QUARTER || self.keys.len() >= self.limit / 2 {
            return None;
        }
        let before = self.rate();
        self.threshold *= 2;
        Some(before)
    }

    /// Doubles a limit that a flood lowered ([`Sampler::shrink`]), up to the one the sampler
    /// was built with, or the ceiling its memory set ([`Sampler::fit`]). The keys come in as
    /// the rate rises again ([`Sampler::raise`]).
    pub(super) fn regrow(&mut self) {
        self.limit = self.limit.saturating_mul(2).min(self.ceiling);
    }

    /// Lowers the sample to `keys` keys at most (at least 1) for its memory, dropping the
    /// largest hashes, and its storage with them; returns the hashes that left. Unlike a flood's
    /// [`Sampler::shrink`], the limit does not grow back past `keys` until
    /// [`Sampler::lift`] allows it.
    pub(super) fn fit(&mut self, keys: usize) -> Vec<u64> {
        self.ceiling = keys.max(1);
        let left = self.shrink(keys);
        self.keys.shrink_to_fit();
        self.order.shrink_to_fit();
        left
    }

    /// Lets a limit lowered for memory ([`Sampler::fit`]) grow back, at each aging, up to
    /// `keys` (never past the configured limit).
    pub(super) fn lift(&mut self, keys: usize) {
        self.ceiling = self.ceiling.max(keys).min(self.configured);
    }

    /// The most keys the sample may grow back to.
    pub(super) fn ceiling(&self) -> usize {
        self.ceiling
    }

    /// Lowers the most keys the sample holds to `keys` (at least 1), dropping the largest
    /// hashes; returns the hashes that left.
    pub(super) fn shrink(&mut self, keys: usize) -> Vec<u64> {
        self.limit = keys.max(1);
        self.drop_to(self.limit)
    }

    /// Drops the largest hashes until `keys` are left; returns them.
    fn drop_to(&mut self, keys: usize) -> Vec<u64> {
        let mut left = Vec::new();
        while self.keys.len() > keys {
            let Some(largest) = self.order.pop() else {
                break;
            };
            self.threshold = largest;
            if let Some(key) = self.keys.remove(&largest) {
                self.known_bytes -= key.bytes;
                self.requests = (self.requests - key.requests).max(0.0);
            }
            left.push(largest);
        }
        left
    }

    /// Bytes the sampler holds.
    pub(super) fn bytes(&self) -> u64 {
        (self.keys.capacity().max(self.order.capacity()) as u64) * BYTES_PER_KEY
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_sample_lowers_its_rate_by_dropping_the_largest_hashes() {
        let mut sampler = Sampler::new(3);
        for hash in [10, 40, 20] {
            assert!(sampler.track(hash).is_empty());
        }
        assert_eq!(sampler.rate(), 1.0);
        // Over the limit: one key at least leaves (a quarter of 3 rounds to none).
        assert_eq!(sampler.track(30), vec![40]);
        assert_eq!((sampler.threshold(), sampler.len()), (40, 3));
        // A key at or above the threshold is no longer offered; one below is, and evicts.
        assert_eq!(sampler.track(5), vec![30]);
        assert_eq!(sampler.threshold(), 30);
        assert!(sampler.rate() > 0.0 && sampler.rate() < 1e-17);
        assert_eq!(sampler.shrink(1), vec![20, 10]);
        assert_eq!((sampler.threshold(), sampler.limit()), (10, 1));
    }

    /// A full sample sheds a quarter of its limit at once, so that the rate drops a few times
    /// rather than at every new key; it then fills again up to its limit at that rate.
    #[test]
    fn a_full_sample_sheds_a_quarter_at_once() {
        let mut sampler = Sampler::new(8);
        for hash in 1..=8u64 {
            assert!(sampler.track(hash * 10).is_empty());
        }
        assert_eq!(sampler.track(5), vec![80, 70, 60]);
        assert_eq!(
            (sampler.threshold(), sampler.len(), sampler.limit()),
            (60, 6, 8)
        );
        assert!(sampler.track(55).is_empty() && sampler.track(45).is_empty());
        assert_eq!(
            (sampler.threshold(), sampler.len()),
            (60, 8),
            "the same rate"
        );
        assert_eq!(sampler.track(1), vec![55, 50, 45]);
        assert_eq!(sampler.threshold(), 45);
    }

    #[test]
    fn requests_and_invalidations_are_counted_and_age() {
        let mut sampler = Sampler::new(4);
        sampler.track(1);
        for i in 0..4 {
            sampler.count(1, i > 0);
        }
        sampler.invalidated(1);
        sampler.count(2, true);
        sampler.invalidated(2);
        sampler.age();
        let key = sampler.get(1).expect("tracked");
        assert_eq!((key.requests, key.invalidations), (2.0, 0.5));
        assert_eq!(key.hits, 1.5, "three hits of four requests, aged");
        assert!(sampler.get(2).is_none(), "an untracked key is not counted");
        assert_eq!(sampler.keys().count(), 1);
    }

    #[test]
    fn the_mean_requests_follow_the_tracked_keys() {
        let mut sampler = Sampler::new(2);
        assert_eq!(sampler.mean_requests(), 0.0);
        sampler.track(1);
        sampler.track(2);
        for _ in 0..6 {
            sampler.count(1, false);
        }
        sampler.count(2, false);
        sampler.count(3, false);
        assert_eq!(
            sampler.mean_requests(),
            3.5,
            "the untracked key is not counted"
        );
        sampler.age();
        assert_eq!(sampler.mean_requests(), 1.75);
        // Key 2 leaves (the largest hash): its half request goes with it.
        assert_eq!(sampler.track(0), vec![2]);
        assert_eq!(sampler.mean_requests(), 1.5);
    }

    #[test]
    fn known_bytes_follow_the_tracked_keys() {
        let mut sampler = Sampler::new(2);
        sampler.track(1);
        sampler.track(2);
        sampler.set_bytes(1, 100);
        sampler.set_bytes(2, 50);
        sampler.set_bytes(2, 70);
        assert_eq!(sampler.known_bytes(), 170);
        assert_eq!(sampler.track(0), vec![2]);
        assert_eq!(sampler.known_bytes(), 100);
        sampler.set_bytes(99, 5);
        assert_eq!(
            sampler.known_bytes(),
            100,
            "an untracked key changes nothing"
        );
    }

    /// A key nobody requests leaves at the aging that takes its count below [`IDLE_BELOW`],
    /// with its bytes and requests; the threshold stays, and the key is tracked anew if it
    /// comes back. Keys that keep coming and going no longer push the rate down.
    #[test]
    fn idle_keys_leave_and_the_rate_stays() {
        let mut sampler = Sampler::new(4);
        for hash in [10, 20, 30, 40] {
            sampler.track(hash);
            sampler.count(hash, false);
            sampler.set_bytes(hash, 100);
        }
        for _ in 0..8 {
            sampler.count(10, false);
        }
        // Full: a fifth key lowers the rate, a quarter of the limit leaving (the largest
        // hashes, the new key among them).
        assert_eq!(sampler.track(50), vec![50, 40]);
        let threshold = sampler.threshold();
        for aging in 1..=6 {
            assert!(
                sampler.age().is_empty(),
                "aging {aging}: 1/64 is not below 1/64"
            );
        }
        let mut left = sampler.age();
        left.sort_unstable();
        assert_eq!(left, vec![20, 30], "one request each: they leave; 10 stays");
        assert_eq!((sampler.len(), sampler.known_bytes()), (1, 100));
        assert!((sampler.mean_requests() - 9.0 / 128.0).abs() < 1e-12);
        assert_eq!(sampler.threshold(), threshold, "the rate stays");
        // New keys take their places without pushing the rate down.
        for hash in [21, 31, 35] {
            assert!(sampler.track(hash).is_empty(), "room for {hash}");
        }
        assert_eq!((sampler.threshold(), sampler.len()), (threshold, 4));
        assert_eq!(threshold, 40);
    }

    /// A sample whose keys became fewer — left under half its limit once the others went
    /// idle — doubles its rate, up to a half (it binds still); a fuller one keeps it.
    #[test]
    fn a_sample_left_under_half_its_limit_doubles_its_rate() {
        let mut sampler = Sampler::new(4);
        for hash in [10, 20, 30, 40, 50] {
            sampler.track(hash);
        }
        assert_eq!((sampler.threshold(), sampler.len()), (40, 3));
        assert_eq!(sampler.raise(), None, "3 keys of 4: not under half");
        for hash in [10, 20] {
            sampler.count(hash, false);
        }
        assert_eq!(sampler.age(), vec![30], "never requested: idle at once");
        assert_eq!(sampler.raise(), None, "2 keys of 4: not under half");
        for _ in 0..7 {
            sampler.age();
        }
        assert_eq!(sampler.len(), 0);
        let before = sampler.rate();
        assert_eq!(sampler.raise(), Some(before));
        assert_eq!(sampler.threshold(), 80);
        sampler.threshold = 1 << 62;
        assert!(sampler.raise().is_some());
        assert_eq!(sampler.rate(), 0.5);
        assert_eq!(sampler.raise(), None, "a half at most");
    }
}
