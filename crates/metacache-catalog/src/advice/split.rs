//! The best split of a size among a catalog's caches, and the catalog point any allocation of
//! its bytes gives: what the caches' curves predict there, with the sampled requests and the
//! confidence of the knots it rests on.

use metacache_cache::{Advice, AdvicePoint};

use super::{Knot, active};

/// Where one cache stands in an allocation: its bytes, its hit rate there, and the knot of its
/// curve at or below them (`None` below its first).
pub(super) type Standing = (u64, f64, Option<Knot>);

/// The best split of `size` bytes: each cache starts with nothing; the move to a later point
/// of a cache with the most hits per byte is taken while it fits, and the last move that does
/// not fit is taken in part (its hit rate interpolated in bytes) — a fractional knapsack, which
/// is optimal where curves are concave, and moves that skip a flat stretch of a curve let it
/// see past the steps small caches' curves have.
pub(super) fn split(caches: &[&Advice], curves: &[Vec<Knot>], size: u64) -> Vec<Standing> {
    // Each cache's next knot, and where it is now.
    let mut next = vec![0usize; caches.len()];
    let mut now: Vec<Standing> = vec![(0, 0.0, None); caches.len()];
    let mut used = 0u64;
    loop {
        let mut best: Option<(usize, usize, f64)> = None;
        for (i, advice) in caches.iter().enumerate() {
            let (bytes, rate, _) = now[i];
            for (j, knot) in curves[i].iter().enumerate().skip(next[i]) {
                if knot.bytes <= bytes || knot.rate <= rate {
                    continue;
                }
                let gain =
                    (knot.rate - rate) * advice.requests_per_minute / (knot.bytes - bytes) as f64;
                if best.is_none_or(|(_, _, g)| gain > g) {
                    best = Some((i, j, gain));
                }
            }
        }
        let Some((i, j, _)) = best else { break };
        let knot = curves[i][j];
        let (bytes, rate, _) = now[i];
        let room = size - used;
        if knot.bytes - bytes <= room {
            used += knot.bytes - bytes;
            now[i] = (knot.bytes, knot.rate, Some(knot));
            next[i] = j + 1;
        } else {
            let share = room as f64 / (knot.bytes - bytes) as f64;
            now[i] = (bytes + room, rate + (knot.rate - rate) * share, now[i].2);
            break;
        }
    }
    now
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
