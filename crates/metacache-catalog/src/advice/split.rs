//! The best split of a size among a catalog's caches, and the catalog point any allocation of
//! its bytes gives: what the caches' curves predict there, with the sampled requests and the
//! confidence of the knots it rests on.

use metacache_cache::{Advice, AdvicePoint};

use super::{Knot, active};

/// Where one cache stands in an allocation: its bytes, its hit rate there, and the knot of its
/// curve at or below them (`None` below its first).
pub(super) type Standing = (u64, f64, Option<Knot>);

/// The best split of each size among a catalog's caches, for sizes asked in ascending order.
/// Each cache starts with nothing; the move to a later point of a cache with the most hits per
/// byte is taken while it fits, and the last move that does not fit is taken in part (its hit
/// rate interpolated in bytes) — a fractional knapsack, which is optimal where curves are
/// concave, and moves that skip a flat stretch of a curve let it see past the steps small
/// caches' curves have.
///
/// Which move is best never depends on the size, only on where the caches stand: the moves
/// are one sequence, and a size takes the part of it that fits. So the sizes of a curve share
/// one walk along it, and each cache's best move is found again only when that cache moved —
/// a catalog's whole curve costs about what one size did (`/metrics` and the advice table
/// build every catalog's curve on each read: docs/benchmarks.md, "`/metrics`").
pub(super) struct Greedy<'a> {
    caches: &'a [&'a Advice],
    curves: &'a [Vec<Knot>],
    /// Where each cache stands after the moves taken whole.
    now: Vec<Standing>,
    /// Each cache's first knot not passed yet.
    next: Vec<usize>,
    /// Each cache's best move from where it stands (knot index, hits per byte), if any.
    best: Vec<Option<(usize, f64)>>,
    /// Bytes of the moves taken whole.
    used: u64,
}

impl<'a> Greedy<'a> {
    pub(super) fn new(caches: &'a [&'a Advice], curves: &'a [Vec<Knot>]) -> Self {
        let mut greedy = Self {
            caches,
            curves,
            now: vec![(0, 0.0, None); caches.len()],
            next: vec![0; caches.len()],
            best: vec![None; caches.len()],
            used: 0,
        };
        for i in 0..caches.len() {
            greedy.best[i] = greedy.best_move(i);
        }
        greedy
    }

    /// Cache `i`'s move with the most hits per byte from where it stands (the first such knot).
    fn best_move(&self, i: usize) -> Option<(usize, f64)> {
        let (bytes, rate, _) = self.now[i];
        let requests = self.caches[i].requests_per_minute;
        let mut best: Option<(usize, f64)> = None;
        for (j, knot) in self.curves[i].iter().enumerate().skip(self.next[i]) {
            if knot.bytes <= bytes || knot.rate <= rate {
                continue;
            }
            let gain = (knot.rate - rate) * requests / (knot.bytes - bytes) as f64;
            if best.is_none_or(|(_, g)| gain > g) {
                best = Some((j, gain));
            }
        }
        best
    }

    /// The best split of `size` bytes: where each cache stands (at least the size of any
    /// earlier call; a smaller one is answered as that).
    pub(super) fn split(&mut self, size: u64) -> Vec<Standing> {
        loop {
            // The best move of all: the first cache's, among equal gains.
            let mut chosen: Option<(usize, usize, f64)> = None;
            for (i, best) in self.best.iter().enumerate() {
                if let Some((j, gain)) = *best
                    && chosen.is_none_or(|(_, _, g)| gain > g)
                {
                    chosen = Some((i, j, gain));
                }
            }
            let Some((i, j, _)) = chosen else {
                return self.now.clone();
            };
            let knot = self.curves[i][j];
            let (bytes, rate, below) = self.now[i];
            let room = size.saturating_sub(self.used);
            if knot.bytes - bytes > room {
                let mut now = self.now.clone();
                let share = room as f64 / (knot.bytes - bytes) as f64;
                now[i] = (bytes + room, rate + (knot.rate - rate) * share, below);
                return now;
            }
            self.used += knot.bytes - bytes;
            self.now[i] = (knot.bytes, knot.rate, Some(knot));
            self.next[i] = j + 1;
            self.best[i] = self.best_move(i);
        }
    }
}

/// The catalog's point at `size` bytes allocated as `standings` says (one per cache, in the
/// order of `caches`), counting `requests` beyond the `cached` ones that miss at every size.
pub(super) fn point(
    caches: &[&Advice],
    standings: &[Standing],
    size: u64,
    cached: f64,
    requests: f64,
) -> AdvicePoint {
    let mut hits = 0.0;
    let mut sampled = 0;
    // The uncached requests (`requests` beyond the `cached` ones) miss whatever the size:
    // certain.
    let mut confidence = (requests - cached).max(0.0) / requests;
    for (advice, &(_, rate, knot)) in caches.iter().zip(standings) {
        if !active(advice) {
            continue;
        }
        let weight = advice.requests_per_minute / requests;
        hits += rate * advice.requests_per_minute;
        match knot {
            Some(knot) => {
                sampled += knot.sampled;
                confidence += knot.confidence * weight;
            }
            // No point reached: nearly every request misses, which is near certain.
            None => confidence += weight,
        }
    }
    let hit_rate = (hits / requests).clamp(0.0, 1.0);
    AdvicePoint {
        cache_bytes: size,
        hit_rate,
        loads_per_minute: requests - hits,
        sampled_requests: sampled,
        confidence: confidence.clamp(0.0, 1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advice::knots;

    /// A cache of `requests` a minute whose curve rises by `steps` (bytes, hit rate added).
    fn advice(requests: f64, steps: &[(u64, f64)]) -> Advice {
        let (mut bytes, mut rate) = (0, 0.0);
        let curve: Vec<(u64, f64)> = steps
            .iter()
            .map(|&(more, gain)| {
                bytes += more;
                rate = f64::min(rate + gain, 1.0);
                (bytes, rate)
            })
            .collect();
        crate::advice::advice_of(requests, &curve)
    }

    #[test]
    fn one_walk_along_the_sizes_splits_each_as_a_walk_of_its_own() {
        // Curves with flat stretches, steps and equal gains, in a fixed pseudo-random mix.
        let mut next = crate::advice::pseudo_random(0x9E37_79B9_7F4A_7C15_u64);
        let caches: Vec<Advice> = (0..12)
            .map(|_| {
                let steps: Vec<(u64, f64)> = (0..1 + next(10))
                    .map(|_| (1 + next(5000), next(4) as f64 * 0.05))
                    .collect();
                advice(1.0 + next(100) as f64, &steps)
            })
            .collect();
        let refs: Vec<&Advice> = caches.iter().collect();
        let curves: Vec<Vec<Knot>> = caches.iter().map(knots).collect();
        let mut walk = Greedy::new(&refs, &curves);
        let mut last = 0.0;
        for size in (0..40).map(|i| i * 1500) {
            let together = walk.split(size);
            let alone = Greedy::new(&refs, &curves).split(size);
            assert_eq!(format!("{together:?}"), format!("{alone:?}"), "{size}");
            let used: u64 = together.iter().map(|s| s.0).sum();
            assert!(used <= size, "{size}: {used} placed");
            let hits: f64 = together
                .iter()
                .zip(&caches)
                .map(|(s, a)| s.1 * a.requests_per_minute)
                .sum();
            assert!(hits >= last - 1e-9, "{size}: {hits} < {last}");
            last = hits;
        }
    }
}
