//! The byte luck's factor applied to the miniatures ([`super::super::luck`]): which sizes take
//! it, and resizing them when it moves.
//!
//! Invariant: a miniature's capacity is its size times [`State::mini_rate`] of its size.

use super::super::luck::Weighed;
use super::State;

/// A miniature takes the byte luck's factor from this many values held (at the sample's mean
/// charge).
const LUCK_VALUES: f64 = 256.0;

impl State {
    /// The rate the miniature of `size` scales its capacity by: the sample's, times the byte
    /// luck's factor where the miniature holds [`LUCK_VALUES`] values or more (a smaller one's
    /// error is made of other things, and each resize rounds its ghost capacity down).
    pub(super) fn mini_rate(&self, size: u64) -> f64 {
        let rate = self.sampler.rate();
        let factor = self.luck.factor();
        if factor != 1.0 && size as f64 * rate >= LUCK_VALUES * self.mean_bytes() {
            rate * factor
        } else {
            rate
        }
    }

    /// Settles the byte luck's factor from the sampled keys the miniatures hold (not those
    /// counted apart); when it moved, the miniatures it applies to are resized. Returns whether
    /// it moved.
    pub(super) fn settle_luck(&mut self) -> bool {
        let binds = self.binds();
        let mut sampled = Weighed::default();
        for (hash, key) in self.sampler.keys() {
            if !(binds && self.heavy.is_heavy(hash)) {
                sampled.add(key.bytes, key.hits);
            }
        }
        let heavy = self.heavy.reported_bytes();
        let moved = self.luck.settle(&sampled, self.sampler.rate(), heavy);
        if moved {
            self.rescale_minis(1.0);
        }
        moved
    }

    /// Resizes every miniature but the unbounded one to its [`State::mini_rate`], its counts
    /// scaled by `scale`.
    pub(super) fn rescale_minis(&mut self, scale: f64) {
        for i in 0..self.minis.len() {
            let rate = self.mini_rate(self.minis[i].size());
            self.minis[i].rescale(rate, scale);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::AdvisorOptions;
    use super::super::super::heavy::Report;
    use super::super::super::mini::Policy;
    use super::super::{Served, State};
    use super::LUCK_VALUES;
    use crate::slot::{HEAVY_REPORT, NEVER};

    const KEYS: u64 = 10_000;

    /// The key numbered `i`: hashes spread evenly, so the sample is the lowest-numbered keys.
    fn hash(i: u64) -> u64 {
        (i + 1) * (u64::MAX / (KEYS + 1))
    }

    /// The lowest-numbered keys (those the sample keeps, and some more) weigh 10 % more.
    fn charge(i: u64) -> u64 {
        if i < 1_024 { 1_100 } else { 1_000 }
    }

    /// Keys read in turn, every one as often as the next, one hit in 64 reported as the cache
    /// reports them: the sampled keys weigh about 9 % more than the rate says, and the larger
    /// miniatures, and only they, hold that much less of them.
    #[test]
    fn evenly_read_keys_heavier_in_the_sample_shrink_the_larger_miniatures() {
        let policy = Policy {
            count_capacity: 1 << 30,
            ttl_nanos: NEVER,
            after_access: false,
            margin_nanos: 0,
        };
        let options = AdvisorOptions {
            sample_keys: 1_024,
            smallest: 1 << 10,
            ..AdvisorOptions::default()
        };
        let mut state = State::new(policy, options, 0, u64::MAX);
        let served = Served::default();
        let (mut now, mut hits) = (0u64, 0u64);
        for round in 0..30 {
            for i in 0..KEYS {
                now += 1_000_000;
                if round == 0 {
                    state.request(hash(i), 0, now, served);
                    state.learn(hash(i), charge(i), now);
                    continue;
                }
                state.request(hash(i), charge(i), now, served);
                hits += 1;
                if hits.is_multiple_of(HEAVY_REPORT) {
                    let report = Report {
                        selects: (hits / HEAVY_REPORT).is_multiple_of(2),
                    };
                    state.heavy(hash(i), charge(i), report, now, served);
                }
            }
        }
        let rate = state.sampler.rate();
        assert!(rate < 0.2, "the sample binds: rate {rate}");
        let sampled: f64 = state.sampler.keys().map(|(_, key)| key.bytes as f64).sum();
        let all: f64 = (0..KEYS).map(|i| charge(i) as f64).sum();
        let expected = sampled / rate / all;
        let factor = state.luck.factor();
        assert!(
            (factor - expected).abs() < 0.02,
            "factor {factor}, the sample's byte luck {expected}"
        );
        assert!(factor > 1.05, "{factor}");
        let mean = state.mean_bytes();
        let (mut taken, mut left) = (0, 0);
        for mini in &state.minis {
            let at = |rate: f64| ((mini.size() as f64 * rate).round() as u64).max(1);
            if mini.size() as f64 * rate >= LUCK_VALUES * mean {
                assert_eq!(mini.capacity(), at(rate * factor), "{} bytes", mini.size());
                taken += 1;
            } else {
                assert_eq!(mini.capacity(), at(rate), "{} bytes", mini.size());
                left += 1;
            }
        }
        assert!(
            taken >= 2 && left >= 2,
            "{taken} sizes took it, {left} did not"
        );
    }
}
