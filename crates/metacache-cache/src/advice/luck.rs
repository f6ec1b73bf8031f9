//! The sample's byte luck: how much more, or less, the sampled keys weigh than the sampling
//! rate says, among the keys the cache hits — and the factor the miniatures' capacities take
//! from it.
//!
//! A miniature of size `B` holds `B × rate` bytes of sampled values. A hash picks the sampled
//! keys without looking at their values, so when the hot ones happen to be larger than the
//! cache's on average (or more of them fell in the sample), the miniature holds a smaller share
//! of them than the cache of `B` bytes holds of its own. Where every key is requested about as
//! often as the next — a hot set read at random, a loop — the hit ratio follows that share, and
//! the curve's steep step moves with it: measured on the scan through a hot set (100,000 keys,
//! a 4 % sample), a sample whose hot keys weighed 5 % more than the rate says read 0.035 low at
//! the step, one whose weighed 3 % less, 0.019 high.
//!
//! The estimate needs the cache's own figure, which the heavy-key reports give: one hit in 64
//! of any key, picked by the thread's hit number, reports its value and its charge — a sample
//! of the hits that does not depend on the key. The sampled keys' hits times their charges,
//! over the rate, against the reports' charges times 64: their ratio is the luck, among hits.
//! Heavy keys are left out of both (the miniatures do not hold them).
//!
//! A hit-weighted figure says how the bytes held at size `B` differ only where hits are spread
//! evenly over the keys; where a few keys take most of them (Zipf), it is their luck, and says
//! little of the many keys the middle sizes hold (measured: on Zipf 0.8 its sign and the
//! curve's error were unrelated). The factor is therefore `1 + w × (luck − 1)` with `w` the
//! sampled keys' Kish ratio of hits, `(Σ h)² / (n × Σ h²)`: the regression coefficient of the
//! whole sample's byte luck on the hit-weighted one when charges do not depend on popularity —
//! 1 for a hot set read evenly, about 0.1 for a Zipf sample.
//!
//! # Invariants
//! - The factor is 1 while every key is sampled, until [`MIN_REPORTS`] reports are counted,
//!   and it stays within [`LOWEST`]–[`HIGHEST`].
//! - It moves by [`STEP`] at least: each move resizes miniatures, and quick_cache rounds a
//!   resized map's ghost capacity down.
//! - After a drain that dropped events or reports its sums are not trusted until the next
//!   aging: the factor keeps its value until then.

/// Reports counted (aged) before the factor moves from 1: about 2 % standard error on the
/// cache's figure for values of 1–16 KiB.
pub(super) const MIN_REPORTS: f64 = 4096.0;

/// The factor's bounds: a luck past them is more likely a fault of the estimate than the
/// sample's.
pub(super) const LOWEST: f64 = 0.8;
pub(super) const HIGHEST: f64 = 1.25;

/// The least relative move of the factor.
pub(super) const STEP: f64 = 0.005;

/// The cache's side of the estimate, and the factor applied.
#[derive(Debug)]
pub(super) struct Luck {
    /// Σ charge × hits over the reports whose charge is known (each report for
    /// [`crate::slot::HEAVY_REPORT`] hits), aged.
    reported: f64,
    /// Reports counted, aged.
    reports: f64,
    /// A drain dropped events or reports since the last aging.
    lost: bool,
    factor: f64,
}

/// The sampled keys' side: their hits, weighed by charge and by themselves.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(super) struct Weighed {
    /// Σ charge × hits.
    pub(super) bytes: f64,
    /// Σ hits.
    pub(super) hits: f64,
    /// Σ hits².
    pub(super) squares: f64,
    /// Keys with hits.
    pub(super) keys: f64,
}

impl Weighed {
    /// Adds a key charged `charge` that the cache hit `hits` times (no-op for a key without
    /// hits or whose charge is not known).
    pub(super) fn add(&mut self, charge: u64, hits: f64) {
        if charge == 0 || hits <= 0.0 {
            return;
        }
        self.bytes += charge as f64 * hits;
        self.hits += hits;
        self.squares += hits * hits;
        self.keys += 1.0;
    }

    /// How much the hit-weighted luck says of the bytes held: Kish's `(Σ h)² / (n × Σ h²)`.
    fn weight(&self) -> f64 {
        if self.squares > 0.0 && self.keys > 0.0 {
            (self.hits * self.hits / (self.keys * self.squares)).clamp(0.0, 1.0)
        } else {
            0.0
        }
    }
}

impl Luck {
    pub(super) fn new() -> Self {
        Self {
            reported: 0.0,
            reports: 0.0,
            lost: false,
            factor: 1.0,
        }
    }

    /// A heavy-key report of a value charged `charge` (0: not known, not counted).
    pub(super) fn report(&mut self, charge: u64) {
        if charge != 0 {
            self.reported += charge as f64 * crate::slot::HEAVY_REPORT as f64;
            self.reports += 1.0;
        }
    }

    /// Halves the sums, as every count ages; a loss before it weighs half now and no longer
    /// stops the factor.
    pub(super) fn age(&mut self) {
        self.reported /= 2.0;
        self.reports /= 2.0;
        self.lost = false;
    }

    /// A drain dropped events or reports: the two sides no longer count the same hits.
    pub(super) fn lost(&mut self) {
        self.lost = true;
    }

    /// The factor the miniatures' capacities are multiplied by.
    pub(super) fn factor(&self) -> f64 {
        self.factor
    }

    /// Moves the factor to what `sampled` (the sampled keys not counted apart, sampled at
    /// `rate`) says against the reports, less the heavy keys' reported bytes `heavy`. Returns
    /// whether it moved.
    pub(super) fn settle(&mut self, sampled: &Weighed, rate: f64, heavy: f64) -> bool {
        if rate >= 1.0 {
            // Every key sampled: the miniatures are the cache.
            let moved = self.factor != 1.0;
            self.factor = 1.0;
            return moved;
        }
        let cache = self.reported - heavy;
        if self.lost || self.reports < MIN_REPORTS || cache <= 0.0 || sampled.bytes <= 0.0 {
            return false;
        }
        let luck = sampled.bytes / rate / cache;
        let target = (1.0 + sampled.weight() * (luck - 1.0)).clamp(LOWEST, HIGHEST);
        if (target / self.factor - 1.0).abs() < STEP {
            return false;
        }
        self.factor = target;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: f64 = crate::slot::HEAVY_REPORT as f64;

    /// `keys` keys of `charge` bytes hit `hits` times each.
    fn even(keys: usize, charge: u64, hits: f64) -> Weighed {
        let mut weighed = Weighed::default();
        for _ in 0..keys {
            weighed.add(charge, hits);
        }
        weighed
    }

    fn reported(reports: usize, charge: u64) -> Luck {
        let mut luck = Luck::new();
        for _ in 0..reports {
            luck.report(charge);
        }
        luck
    }

    #[test]
    fn evenly_hit_keys_that_weigh_more_than_the_rate_says_shrink_the_miniatures() {
        // 10,000 keys of 9,000 bytes, each hit 100 times: 15,625 reports. The sample at 10 %
        // holds 1,000 of them, charged 9,450 bytes each: 5 % more bytes than the rate says.
        let mut luck = reported(15_625, 9_000);
        let sampled = even(1_000, 9_450, 100.0);
        assert!(luck.settle(&sampled, 0.1, 0.0));
        assert!((luck.factor() - 1.05).abs() < 1e-9, "{}", luck.factor());
    }

    #[test]
    fn a_few_hot_keys_taking_most_hits_say_little_of_the_bytes() {
        // Two keys of a hundred take most of the hits: Kish's ratio is small, and so is the
        // move, whatever the hot keys weigh.
        let mut sampled = Weighed::default();
        sampled.add(16_000, 10_000.0);
        sampled.add(16_000, 10_000.0);
        for _ in 0..98 {
            sampled.add(1_000, 10.0);
        }
        let weight = sampled.weight();
        assert!(weight < 0.03, "{weight}");
        let mut luck = reported(5_000, 1_000);
        let cache = 5_000.0 * REPORT * 1_000.0;
        let raw = sampled.bytes / 0.5 / cache;
        assert!(raw > 1.5, "the hit-weighted luck alone is {raw}");
        luck.settle(&sampled, 0.5, 0.0);
        assert!(luck.factor() < 1.0 + weight * (raw - 1.0) + 1e-9);
        assert!(luck.factor() <= HIGHEST);
    }

    #[test]
    fn the_factor_waits_for_enough_reports_and_for_a_binding_sample() {
        let sampled = even(1_000, 9_450, 100.0);
        let mut few = reported(MIN_REPORTS as usize - 1, 9_000);
        assert!(!few.settle(&sampled, 0.1, 0.0));
        assert_eq!(few.factor(), 1.0);
        // Every key sampled: the miniatures are the cache.
        let mut all = reported(20_000, 9_000);
        assert!(!all.settle(&sampled, 1.0, 0.0));
        assert_eq!(all.factor(), 1.0);
    }

    #[test]
    fn heavy_keys_leave_the_cache_side_and_a_loss_holds_the_factor_until_the_next_aging() {
        // Half the reported bytes are a heavy key's: without them the sample is exact.
        let mut luck = reported(20_000, 9_000);
        let half = 10_000.0 * REPORT * 9_000.0;
        let sampled = even(1_000, 9_000, 10_000.0 * REPORT / 1_000.0 * 0.1);
        assert!(!luck.settle(&sampled, 0.1, half), "exact: no move");
        assert_eq!(luck.factor(), 1.0);
        luck.lost();
        assert!(!luck.settle(&sampled, 0.1, 0.0), "lost: held");
        luck.age();
        // Aged: both sides halve; the sampled side here did not, so it reads twice the cache's,
        // bounded.
        assert!(luck.settle(&sampled, 0.1, half / 2.0));
        assert_eq!(luck.factor(), HIGHEST);
    }

    #[test]
    fn small_moves_are_ignored() {
        let mut luck = reported(15_625, 9_000);
        assert!(luck.settle(&even(1_000, 9_450, 100.0), 0.1, 0.0));
        assert!(
            !luck.settle(&even(1_000, 9_470, 100.0), 0.1, 0.0),
            "0.2 % moves nothing"
        );
        assert!(
            luck.settle(&even(1_000, 9_540, 100.0), 0.1, 0.0),
            "1 % does"
        );
    }
}
