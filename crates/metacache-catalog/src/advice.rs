//! What the quota advisor says per catalog: each built cache's miss-ratio curve, the property
//! that sets its limit, and the catalog's own curve — its caches sharing one limit.
//!
//! The catalog curve splits each size among the caches the way that serves the most requests
//! (greedy on hits per byte over each cache's doubling grid: near-optimal for the concave curves
//! caches have), which is the best a shared limit can do; reclamation, which evicts the coldest
//! values of the largest caches, approaches it.

use metacache_cache::{Advice, AdvicePoint};
use metacache_ledger::size::CATALOG_MAX_WEIGHT_KEY;

use crate::Catalog;

/// One cache's advice, or the catalog's (`entry_name` `None`).
#[derive(Debug, Clone, PartialEq)]
pub struct AdviceRow {
    /// CATALOG_NAME.
    pub catalog: String,
    /// ENGINE_NAME (empty on the catalog's row).
    pub engine: String,
    /// ENTRY_NAME; `None` on the catalog's row.
    pub entry_name: Option<String>,
    /// The property that sets this cache's byte limit: its entry's `max-weight`, or the
    /// catalog's `meta.cache.max-weight` for a cache without an entry of its own and for the
    /// catalog's row.
    pub property: String,
    /// The byte limit that applies now (the smallest of entry, catalog and node), if any.
    pub limit: Option<u64>,
    /// The curve and what it rests on.
    pub advice: Advice,
}

impl Catalog {
    /// The advice of each built cache whose advisor has seen requests, then the catalog's row
    /// (its caches under one shared limit), if any cache has one.
    pub fn advice_rows(&self) -> Vec<AdviceRow> {
        let catalog = self.name().to_string();
        let mut rows = Vec::new();
        for (engine, entry_name, property, handle) in self.built_handles() {
            let Some(advice) = handle.advice().filter(|a| !a.points.is_empty()) else {
                continue;
            };
            rows.push(AdviceRow {
                catalog: catalog.clone(),
                engine,
                entry_name: Some(entry_name),
                property,
                limit: handle.limit(),
                advice,
            });
        }
        let curves: Vec<&Advice> = rows.iter().map(|r| &r.advice).collect();
        let points = combine(&curves);
        if !points.is_empty() {
            let sum = |f: fn(&Advice) -> u64| curves.iter().map(|a| f(a)).sum::<u64>();
            let advice = Advice {
                points,
                sampled_keys: sum(|a| a.sampled_keys),
                sample_limit: sum(|a| a.sample_limit),
                sampling_rate: curves.iter().map(|a| a.sampling_rate).fold(1.0, f64::min),
                working_set_bytes: sum(|a| a.working_set_bytes),
                requests_per_minute: curves.iter().map(|a| a.requests_per_minute).sum(),
                reserved_bytes: sum(|a| a.reserved_bytes),
                dropped_events: sum(|a| a.dropped_events),
            };
            rows.push(AdviceRow {
                catalog,
                engine: String::new(),
                entry_name: None,
                property: CATALOG_MAX_WEIGHT_KEY.to_string(),
                limit: self.budget().effective_limit(),
                advice,
            });
        }
        rows
    }
}

/// The catalog's curve from its caches' curves: at each doubling size up to the sum of their
/// working sets, the hit rate when that many bytes are split among them for the most hits.
pub(crate) fn combine(caches: &[&Advice]) -> Vec<AdvicePoint> {
    let caches: Vec<&Advice> = caches
        .iter()
        .copied()
        .filter(|a| !a.points.is_empty() && a.requests_per_minute > 0.0)
        .collect();
    let requests: f64 = caches.iter().map(|a| a.requests_per_minute).sum();
    let Some(smallest) = caches
        .iter()
        .filter_map(|a| a.points.first())
        .map(|p| p.cache_bytes)
        .min()
    else {
        return Vec::new();
    };
    if requests <= 0.0 {
        return Vec::new();
    }
    let total: u64 = caches
        .iter()
        .filter_map(|a| a.points.last())
        .map(|p| p.cache_bytes)
        .sum();
    let mut points = Vec::new();
    let mut size = smallest;
    loop {
        points.push(split(&caches, size, requests));
        if size >= total {
            break;
        }
        size = size.saturating_mul(2);
    }
    points
}

/// The best split of `size` bytes: each cache starts with nothing; the step to a cache's next
/// grid point with the most hits per byte that still fits is taken until none fits.
fn split(caches: &[&Advice], size: u64, requests: f64) -> AdvicePoint {
    // At each cache: the index of its current point (None: no bytes yet).
    let mut at: Vec<Option<usize>> = vec![None; caches.len()];
    let mut used = 0u64;
    loop {
        let mut best: Option<(usize, f64, u64)> = None;
        for (i, advice) in caches.iter().enumerate() {
            let next = at[i].map_or(0, |p| p + 1);
            let Some(point) = advice.points.get(next) else {
                continue;
            };
            let (bytes_now, rate_now) = at[i].map_or((0, 0.0), |p| {
                (advice.points[p].cache_bytes, advice.points[p].hit_rate)
            });
            let more = point.cache_bytes - bytes_now;
            if used + more > size {
                continue;
            }
            let gain = (point.hit_rate - rate_now) * advice.requests_per_minute / more as f64;
            if best.is_none_or(|(_, g, _)| gain > g) {
                best = Some((i, gain, more));
            }
        }
        let Some((i, _, more)) = best else { break };
        at[i] = Some(at[i].map_or(0, |p| p + 1));
        used += more;
    }
    let mut hits = 0.0;
    let mut sampled = 0;
    let mut confidence = 0.0;
    for (i, advice) in caches.iter().enumerate() {
        let weight = advice.requests_per_minute / requests;
        match at[i].map(|p| &advice.points[p]) {
            Some(point) => {
                hits += point.hit_rate * advice.requests_per_minute;
                sampled += point.sampled_requests;
                confidence += point.confidence * weight;
            }
            // Nothing cached: every request misses, which is certain.
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

    fn advice(rate: f64, curve: &[(u64, f64)]) -> Advice {
        Advice {
            points: curve
                .iter()
                .map(|&(cache_bytes, hit_rate)| AdvicePoint {
                    cache_bytes,
                    hit_rate,
                    loads_per_minute: (1.0 - hit_rate) * rate,
                    sampled_requests: 100,
                    confidence: 1.0,
                })
                .collect(),
            sampled_keys: 10,
            sample_limit: 4096,
            sampling_rate: 1.0,
            working_set_bytes: curve.last().map_or(0, |p| p.0),
            requests_per_minute: rate,
            reserved_bytes: 0,
            dropped_events: 0,
        }
    }

    #[test]
    fn bytes_go_where_they_serve_the_most_requests() {
        // A busy cache that saturates early and a quiet one that keeps gaining.
        let busy = advice(1000.0, &[(100, 0.5), (200, 0.9), (400, 0.95)]);
        let quiet = advice(10.0, &[(100, 0.1), (200, 0.2), (400, 0.4), (800, 0.8)]);
        let points = combine(&[&busy, &quiet]);
        let sizes: Vec<u64> = points.iter().map(|p| p.cache_bytes).collect();
        assert_eq!(sizes, vec![100, 200, 400, 800, 1600]);
        // 200 bytes: both to the busy cache (0.9 × 1000) beats 100 each.
        assert!((points[1].hit_rate - 900.0 / 1010.0).abs() < 1e-9);
        // 1,600 bytes hold both working sets.
        let all = (0.95 * 1000.0 + 0.8 * 10.0) / 1010.0;
        assert!((points[4].hit_rate - all).abs() < 1e-9);
        assert!((points[4].loads_per_minute - (1010.0 - 958.0)).abs() < 1e-9);
        for pair in points.windows(2) {
            assert!(pair[1].hit_rate >= pair[0].hit_rate);
        }
    }

    #[test]
    fn caches_without_requests_are_left_out() {
        let idle = advice(0.0, &[(100, 0.0)]);
        assert!(combine(&[&idle]).is_empty());
        assert!(combine(&[]).is_empty());
    }
}
