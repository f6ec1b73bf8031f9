//! What one bare shared limit does: a catalog's caches under its `meta.cache.max-weight` alone,
//! each filling (up to its own limit, if it has one) until reclamation takes back the bytes the
//! others need.
//!
//! Modelled with a residence time common to the caches (in the spirit of Che's approximation
//! for a shared LRU): a value stays about as long in one cache as in another once the limit
//! binds, since reclamation takes the coldest values of the largest caches first. By Little's
//! law, a cache that loads `L` values a minute, of `b` bytes on average, holds `L × b × T` bytes
//! if each stays `T` minutes; and its loads depend on what it holds, through its own curve:
//! `L = requests × (1 − h(bytes))`. For a given `T` each cache's bytes are the root of
//! `s = T × requests × (1 − h(s)) × b` (at most its working set); `T` is then the residence time
//! whose bytes add up to the limit.
//!
//! Measured against bare shared limits replayed on the sample catalogs, this reads much nearer
//! than the best split (which a bare limit does not reach at small sizes): docs/benchmarks.md,
//! "Quota advisor on the sample catalogs".

use super::Knot;

/// One cache as the model sees it.
pub(super) struct Occupant<'a> {
    /// Its curve's knots, ascending, the last at its working set.
    pub(super) knots: &'a [Knot],
    /// The most it may hold: its own limit (its entry's or group's), infinite without one.
    pub(super) most: f64,
    /// Requests per minute.
    pub(super) requests: f64,
    /// Mean bytes of a value (each load adds one).
    pub(super) value_bytes: f64,
}

impl Occupant<'_> {
    /// The most it can hold: its working set, or its own limit if smaller.
    fn ceiling(&self) -> f64 {
        self.knots
            .last()
            .map_or(0.0, |k| k.bytes as f64)
            .min(self.most)
    }

    /// Hit rate at `bytes`: linear in bytes between knots, from no hits at no bytes; the last
    /// knot's rate past the working set. Never lower than at fewer bytes (a dip of a sampled
    /// curve is noise, and would give the root below two answers).
    pub(super) fn rate(&self, bytes: f64) -> f64 {
        let (mut below_bytes, mut below_rate) = (0.0, 0.0);
        for knot in self.knots {
            let (at, rate) = (knot.bytes as f64, knot.rate.max(below_rate));
            if bytes <= at {
                if at <= below_bytes {
                    return rate;
                }
                return below_rate
                    + (rate - below_rate) * (bytes - below_bytes) / (at - below_bytes);
            }
            (below_bytes, below_rate) = (at, rate);
        }
        below_rate
    }

    /// Bytes held when a value stays `residence` minutes: the root of
    /// `s = residence × requests × (1 − rate(s)) × value_bytes`, found on the segment of the
    /// curve where the right side stops exceeding the left (both sides are linear there), or
    /// the working set if it never does; at most its own limit.
    pub(super) fn held(&self, residence: f64) -> f64 {
        self.root(residence).min(self.most)
    }

    fn root(&self, residence: f64) -> f64 {
        let c = residence * self.requests * self.value_bytes;
        if c <= 0.0 {
            return 0.0;
        }
        let (mut below_bytes, mut below_rate) = (0.0, 0.0);
        for knot in self.knots {
            let (at, rate) = (knot.bytes as f64, knot.rate.max(below_rate));
            if at > below_bytes && at >= c * (1.0 - rate) {
                let slope = (rate - below_rate) / (at - below_bytes);
                let root = c * (1.0 - below_rate + slope * below_bytes) / (1.0 + c * slope);
                return root.clamp(below_bytes, at);
            }
            (below_bytes, below_rate) = (at.max(below_bytes), rate);
        }
        below_bytes
    }
}

/// The residence time of the last size solved: the next, larger size's is longer, so its
/// search starts there ([`Residence::shares`] for a curve's sizes in ascending order).
#[derive(Debug, Default)]
pub(super) struct Residence {
    last: f64,
}

impl Residence {
    /// The bytes each cache holds under one limit of `size` bytes: each cache's
    /// [`Occupant::held`] at the residence time whose bytes add up to `size` (the most each can
    /// hold, if they fit). The search starts from the residence time of the last size asked (a
    /// smaller size's is a lower bound; a larger one's is ignored).
    pub(super) fn shares(&mut self, caches: &[Occupant<'_>], size: u64) -> Vec<f64> {
        if size == 0 {
            return vec![0.0; caches.len()];
        }
        let size = size as f64;
        let held =
            |residence: f64| -> Vec<f64> { caches.iter().map(|c| c.held(residence)).collect() };
        let total = |residence: f64| caches.iter().map(|c| c.held(residence)).sum::<f64>();
        let all: f64 = caches.iter().map(Occupant::ceiling).sum();
        if size >= all {
            return caches.iter().map(Occupant::ceiling).collect();
        }
        // The residence time is found in its logarithm (times span many orders of magnitude):
        // a bracket — from the last size's time, which held less, or else from a minute, in
        // steps of 16× — then regula falsi with the Illinois rule (the end kept twice in a row
        // has its excess halved), which nears the root superlinearly where bisection gained a
        // bit a step: about 12 evaluations a size, bracket included, where bisection to the
        // same precision took over 30 (each walks every cache's curve; docs/benchmarks.md,
        // "`/metrics`"). A curve that reaches a hit rate of 1 at its working set nears it
        // without reaching it, hence the bound on the steps.
        let excess = |residence: f64| total(residence) - size;
        let (mut short, mut long) = if self.last > 0.0 && excess(self.last) < 0.0 {
            (self.last, self.last * 16.0)
        } else {
            (1.0 / 16.0, 1.0)
        };
        let mut long_excess = excess(long);
        for _ in 0..64 {
            if long_excess >= 0.0 {
                break;
            }
            (short, long) = (long, long * 16.0);
            long_excess = excess(long);
        }
        let mut short_excess = excess(short);
        for _ in 0..64 {
            if short_excess < 0.0 {
                break;
            }
            (short, long, long_excess) = (short / 16.0, short, short_excess);
            short_excess = excess(short);
        }
        // The ends in the logarithm, and the excess the falsi line is drawn through at each:
        // the true one, or a fraction of it under the Illinois rule.
        let (mut low, mut high) = (short.ln(), long.ln());
        let (mut low_line, mut high_line) = (short_excess, long_excess);
        let mut high_excess = long_excess;
        let mut high_kept = None;
        let close = size * 1e-12;
        for _ in 0..100 {
            if high_excess <= close || high - low <= 1e-9 {
                break;
            }
            // Where the line between the ends crosses zero, if strictly inside; else halfway.
            let mut x = (low * high_line - high * low_line) / (high_line - low_line);
            if !(x > low && x < high) {
                x = (low + high) / 2.0;
            }
            let at = excess(x.exp());
            if at.abs() <= close {
                high = x;
                break;
            }
            if at < 0.0 {
                (low, low_line) = (x, at);
                if high_kept == Some(true) {
                    high_line /= 2.0;
                }
                high_kept = Some(true);
            } else {
                (high, high_line, high_excess) = (x, at, at);
                if high_kept == Some(false) {
                    low_line /= 2.0;
                }
                high_kept = Some(false);
            }
        }
        long = high.exp();
        self.last = long;
        held(long)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shares of `size` found from scratch.
    fn shares(caches: &[Occupant<'_>], size: u64) -> Vec<f64> {
        Residence::default().shares(caches, size)
    }

    fn knots(points: &[(u64, f64)]) -> Vec<Knot> {
        points
            .iter()
            .map(|&(bytes, rate)| Knot {
                bytes,
                rate,
                sampled: 0,
                confidence: 1.0,
            })
            .collect()
    }

    /// A cache of `curve`, `requests` a minute of values of `value_bytes`, unlimited on its own.
    fn cache(curve: &[Knot], requests: f64, value_bytes: f64) -> Occupant<'_> {
        Occupant {
            knots: curve,
            most: f64::INFINITY,
            requests,
            value_bytes,
        }
    }

    #[test]
    fn a_cache_holds_its_loads_times_their_stay() {
        // Half the requests hit at 1,000 bytes, all at 2,000.
        let curve = knots(&[(1000, 0.5), (2000, 1.0)]);
        let cache = cache(&curve, 10.0, 100.0);
        assert_eq!(cache.rate(500.0), 0.25);
        assert_eq!(cache.rate(1500.0), 0.75);
        assert_eq!(cache.rate(5000.0), 1.0);
        // At residence 1: s = 1,000 × (1 − s / 2,000) → s = 666.7, where h = 1/3, and
        // 10 × (2/3) loads a minute of 100 bytes staying a minute hold 666.7 bytes.
        let s = cache.held(1.0);
        assert!((s - 2000.0 / 3.0).abs() < 1e-6, "{s}");
        assert_eq!(cache.held(0.0), 0.0);
        // Longer stays hold more, never past the working set.
        assert!(cache.held(10.0) > s);
        assert!(cache.held(1e12) <= 2000.0);
    }

    #[test]
    fn a_dip_of_a_sampled_curve_is_read_flat() {
        let curve = knots(&[(100, 0.6), (200, 0.5), (400, 0.9)]);
        let cache = cache(&curve, 1.0, 1.0);
        assert_eq!(cache.rate(150.0), 0.6);
        let mut last = 0.0;
        for residence in [1.0, 10.0, 100.0, 250.0, 300.0, 1000.0, 1e6] {
            let held = cache.held(residence);
            assert!(held >= last, "{residence}: {held} < {last}");
            last = held;
        }
    }

    #[test]
    fn the_busier_cache_takes_more_of_a_shared_limit() {
        // Two caches with the same curve; one asked for four times as often.
        let curve = knots(&[(1000, 0.5), (2000, 0.9), (4000, 1.0)]);
        let busy = cache(&curve, 40.0, 10.0);
        let quiet = cache(&curve, 10.0, 10.0);
        let caches = [busy, quiet];
        let split = shares(&caches, 3000);
        assert!(
            (split.iter().sum::<f64>() - 3000.0).abs() < 1e-3,
            "{split:?}"
        );
        assert!(split[0] > split[1], "{split:?}");
        // Enough for both working sets: each holds its own.
        assert_eq!(shares(&caches, 9000), vec![4000.0, 4000.0]);
        assert_eq!(shares(&caches, 0), vec![0.0, 0.0]);
    }

    #[test]
    fn a_cache_limited_on_its_own_leaves_the_rest_to_the_others() {
        let curve = knots(&[(1000, 0.5), (2000, 0.9), (4000, 1.0)]);
        let limited = Occupant {
            most: 1000.0,
            ..cache(&curve, 40.0, 10.0)
        };
        let other = cache(&curve, 10.0, 10.0);
        let caches = [limited, other];
        let split = shares(&caches, 3000);
        assert_eq!(split[0], 1000.0, "{split:?}");
        assert!((split[1] - 2000.0).abs() < 1e-3, "{split:?}");
        // More than both can hold: each holds its most.
        assert_eq!(shares(&caches, 9000), vec![1000.0, 4000.0]);
    }

    #[test]
    fn the_residence_found_fills_the_limit_size_after_size() {
        // Curves of every shape (steps, flat stretches, rates of 1) in a fixed pseudo-random
        // mix; sizes ascending, each solved both from the last size's time and from scratch.
        let mut next = crate::advice::pseudo_random(0x2545_F491_4F6C_DD1D_u64);
        let curves: Vec<Vec<Knot>> = (0..15)
            .map(|_| {
                let (mut bytes, mut rate) = (0, 0.0);
                let steps: Vec<(u64, f64)> = (0..1 + next(12))
                    .map(|_| {
                        bytes += 1 + next(20_000);
                        rate = f64::min(rate + next(5) as f64 * 0.06, 1.0);
                        (bytes, rate)
                    })
                    .collect();
                knots(&steps)
            })
            .collect();
        let caches: Vec<Occupant<'_>> = curves
            .iter()
            .map(|c| cache(c, 1.0 + next(1000) as f64, 10.0 + next(2000) as f64))
            .collect();
        let all: f64 = caches.iter().map(Occupant::ceiling).sum();
        let mut warm = Residence::default();
        let mut last = vec![0.0; caches.len()];
        let mut size = 64;
        while (size as f64) < all * 2.0 {
            let held = warm.shares(&caches, size);
            let sum: f64 = held.iter().sum();
            let fill = (size as f64).min(all);
            assert!((sum - fill).abs() <= fill * 1e-6, "{size}: {sum} of {fill}");
            for (i, (now, before)) in held.iter().zip(&last).enumerate() {
                assert!(*now >= before - fill * 1e-6, "{size}: cache {i} fell");
            }
            let cold = shares(&caches, size);
            for (a, b) in held.iter().zip(&cold) {
                assert!(
                    (a - b).abs() <= fill * 1e-6,
                    "{size}: {held:?} against {cold:?}"
                );
            }
            last = held;
            size = size * 3 / 2;
        }
    }
}
