//! What the quota advisor says per catalog: each built cache's miss-ratio curve, the property
//! that sets its limit, and the catalog's own curve — its caches sharing one limit.
//!
//! The catalog's points answer what `meta.cache.max-weight` alone does: its caches competing
//! for one limit through reclamation, each held to its own limit if it has one — modelled with
//! a residence time common to them ([`shared`]). Each point also carries the best split of its size among
//! the caches (greedy on hits per byte over each cache's grid up to its working set, the last
//! step taken in part: near-optimal for the concave curves caches have) and what that split
//! predicts: the most a catalog's bytes can do, reached by giving each cache its share as its
//! own limit. A bare limit reaches it once it holds a good part of every cache's working set,
//! and falls short below (measured on the sample catalogs in docs/benchmarks.md).

use std::sync::Arc;

use metacache_cache::{Advice, AdvicePoint};
use metacache_ledger::size::CATALOG_MAX_WEIGHT_KEY;

use crate::Catalog;

mod shared;
mod split;

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
    /// On a cache's row, the smallest limit set below its catalog (its entry's own, or its
    /// group's), if any: the catalog's rows count the cache as holding at most that much.
    pub own_limit: Option<u64>,
    /// The curve and what it rests on.
    pub advice: Advice,
    /// On the catalog's row: for each point of its curve, the best split of that size among
    /// the cache rows before it; empty on a cache's row.
    pub split: Vec<SplitPoint>,
}

impl Catalog {
    /// The advice of each built cache whose advisor has seen requests, then the catalog's row
    /// (its caches under one shared limit), if any cache has one.
    pub fn advice_rows(&self) -> Vec<AdviceRow> {
        let catalog = self.name().to_string();
        let mut rows = Vec::new();
        // Requests (since each cache was built) of the caches without an advisor (a disabled
        // cache), which miss at every size, and the handles of those with a curve: their
        // requests are counted only if there are such misses to scale (a statistics snapshot
        // per cache, about a tenth of a `/metrics` render of 2,000 one-value caches in a
        // profile; the bench's run-to-run noise is larger).
        let mut unadvised = 0u64;
        let mut curved = Vec::new();
        for (engine, entry_name, property, handle) in self.built_handles() {
            let advice = handle.advice();
            if advice.is_none() {
                unadvised += handle.stats().request_count;
            }
            let Some(advice) = advice.filter(|a| !a.points.is_empty()) else {
                continue;
            };
            curved.push(Arc::clone(&handle));
            rows.push(AdviceRow {
                catalog: catalog.clone(),
                engine,
                entry_name: Some(entry_name),
                property,
                limit: handle.limit(),
                own_limit: handle.own_limit(),
                advice,
                split: Vec::new(),
            });
        }
        let curves: Vec<&Advice> = rows.iter().map(|r| &r.advice).collect();
        let own_limits: Vec<Option<u64>> = rows.iter().map(|r| r.own_limit).collect();
        // The uncached requests at the advised caches' rate per request.
        let advised_per_minute: f64 = curves.iter().map(|a| a.requests_per_minute).sum();
        let advised: u64 = if unadvised > 0 {
            curved.iter().map(|h| h.stats().request_count).sum()
        } else {
            0
        };
        let uncached_per_minute = if advised > 0 {
            unadvised as f64 * advised_per_minute / advised as f64
        } else {
            0.0
        };
        let (points, split): (Vec<AdvicePoint>, Vec<SplitPoint>) =
            combine(&curves, &own_limits, uncached_per_minute)
                .into_iter()
                .map(|p| (p.shared, p.split))
                .unzip();
        if !points.is_empty() {
            let sum = |f: fn(&Advice) -> u64| curves.iter().map(|a| f(a)).sum::<u64>();
            let advice = Advice {
                points,
                sampled_keys: sum(|a| a.sampled_keys),
                sample_limit: sum(|a| a.sample_limit),
                sampling_rate: curves.iter().map(|a| a.sampling_rate).fold(1.0, f64::min),
                working_set_bytes: sum(|a| a.working_set_bytes),
                requests_per_minute: advised_per_minute + uncached_per_minute,
                reserved_bytes: sum(|a| a.reserved_bytes),
                dropped_events: sum(|a| a.dropped_events),
                // The node's, unless a cache set its own: the longest any of them remembers.
                half_life: curves.iter().map(|a| a.half_life).max().unwrap_or_default(),
            };
            rows.push(AdviceRow {
                catalog,
                engine: String::new(),
                entry_name: None,
                property: CATALOG_MAX_WEIGHT_KEY.to_string(),
                limit: self.budget().effective_limit(),
                own_limit: None,
                advice,
                split,
            });
        }
        rows
    }
}

/// One point of a catalog's curve: what one shared limit of its size does (each cache held to
/// its own limit, if it has one), and what its best split among the caches does.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CatalogPoint {
    pub(crate) shared: AdvicePoint,
    pub(crate) split: SplitPoint,
}

/// The best split of a catalog curve's size among its caches: a limit for each.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitPoint {
    /// The hit rate the caches' curves predict when each holds its share.
    pub hit_rate: f64,
    /// The bytes each cache row before the catalog's gets, in their order.
    pub shares: Vec<u64>,
}

/// The catalog's curve from its caches' curves: at each doubling size up to the sum of their
/// working sets, the hit rate of one shared limit of that size ([`shared`]; each cache holding
/// at most its `own_limits`, in the order of `caches`) and of its best split among them (which
/// sets every cache's limit), counting `uncached_per_minute` more requests that miss at every
/// size (those of its caches that cache nothing: a disabled one has no curve, and its requests
/// are loads all the same).
pub(crate) fn combine(
    caches: &[&Advice],
    own_limits: &[Option<u64>],
    uncached_per_minute: f64,
) -> Vec<CatalogPoint> {
    let cached: f64 = caches
        .iter()
        .filter(|a| active(a))
        .map(|a| a.requests_per_minute)
        .sum();
    let requests = cached + uncached_per_minute.max(0.0);
    let Some(smallest) = caches
        .iter()
        .filter(|a| active(a))
        .filter_map(|a| a.points.first())
        .map(|p| p.cache_bytes)
        .min()
    else {
        return Vec::new();
    };
    let curves: Vec<Vec<Knot>> = caches
        .iter()
        .map(|a| if active(a) { knots(a) } else { Vec::new() })
        .collect();
    let occupants: Vec<shared::Occupant<'_>> = caches
        .iter()
        .zip(&curves)
        .enumerate()
        .map(|(i, (advice, knots))| shared::Occupant {
            knots,
            most: own_limits
                .get(i)
                .copied()
                .flatten()
                .map_or(f64::INFINITY, |l| l as f64),
            requests: if active(advice) {
                advice.requests_per_minute
            } else {
                0.0
            },
            value_bytes: value_bytes(advice),
        })
        .collect();
    let total: u64 = curves
        .iter()
        .filter_map(|k| k.last().map(|k| k.bytes))
        .sum();
    let mut points = Vec::new();
    let mut greedy = split::Greedy::new(caches, &curves);
    let mut residence = shared::Residence::default();
    let mut size = smallest;
    loop {
        let best = greedy.split(size);
        let held = residence.shares(&occupants, size);
        let standings: Vec<split::Standing> = occupants
            .iter()
            .zip(&held)
            .map(|(occupant, &bytes)| {
                let below = occupant
                    .knots
                    .iter()
                    .rev()
                    .find(|k| k.bytes as f64 <= bytes);
                (bytes as u64, occupant.rate(bytes), below.copied())
            })
            .collect();
        points.push(CatalogPoint {
            shared: split::point(caches, &standings, size, cached, requests),
            split: SplitPoint {
                hit_rate: split::point(caches, &best, size, cached, requests).hit_rate,
                shares: best.iter().map(|s| s.0).collect(),
            },
        });
        if size >= total {
            break;
        }
        size = size.saturating_mul(2);
    }
    points
}

/// The mean bytes of one of `advice`'s values: its working set over the keys it estimates
/// (the sampled ones over the rate); one value of the working set's bytes if none is sampled.
fn value_bytes(advice: &Advice) -> f64 {
    let keys = advice.sampled_keys as f64 / advice.sampling_rate.max(f64::MIN_POSITIVE);
    (advice.working_set_bytes as f64 / keys.max(1.0)).max(1.0)
}

/// Whether a cache's curve takes part in the split: it has points and requests.
fn active(advice: &Advice) -> bool {
    !advice.points.is_empty() && advice.requests_per_minute > 0.0
}

/// A point of one cache's curve as the split sees it.
#[derive(Debug, Clone, Copy)]
struct Knot {
    bytes: u64,
    rate: f64,
    sampled: u64,
    confidence: f64,
}

/// The points of `advice` the split may stop at: its grid below its working set, then the
/// working set itself at the curve's last hit rate (it holds every value there, so the grid's
/// next doubling would only waste bytes a shared limit gives to the other caches).
fn knots(advice: &Advice) -> Vec<Knot> {
    let knot = |p: &AdvicePoint, bytes: u64| Knot {
        bytes,
        rate: p.hit_rate,
        sampled: p.sampled_requests,
        confidence: p.confidence,
    };
    let working_set = advice.working_set_bytes;
    let mut knots: Vec<Knot> = advice
        .points
        .iter()
        .take_while(|p| working_set == 0 || p.cache_bytes < working_set)
        .map(|p| knot(p, p.cache_bytes))
        .collect();
    if knots.len() < advice.points.len()
        && let Some(last) = advice.points.last()
    {
        knots.push(knot(last, working_set));
    }
    knots
}

/// A fixed sequence of pseudo-random numbers (xorshift) for the tests' random curves: each
/// call answers one below its argument.
#[cfg(test)]
fn pseudo_random(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |modulo| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % modulo
    }
}

/// A cache's advice for the tests: `rate` requests a minute, the curve's (bytes, hit rate)
/// points, each resting on 100 sampled requests, its working set at the last point.
#[cfg(test)]
fn advice_of(rate: f64, curve: &[(u64, f64)]) -> Advice {
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
        half_life: metacache_cache::DEFAULT_HALF_LIFE,
    }
}

#[cfg(test)]
mod tests {
    use super::advice_of as advice;
    use super::*;

    /// The best split's hit rate and shares at each point.
    fn best(points: &[CatalogPoint]) -> (Vec<f64>, Vec<Vec<u64>>) {
        points
            .iter()
            .map(|p| (p.split.hit_rate, p.split.shares.clone()))
            .unzip()
    }

    #[test]
    fn bytes_go_where_they_serve_the_most_requests() {
        // A busy cache that saturates early and a quiet one that keeps gaining.
        let busy = advice(1000.0, &[(100, 0.5), (200, 0.9), (400, 0.95)]);
        let quiet = advice(10.0, &[(100, 0.1), (200, 0.2), (400, 0.4), (800, 0.8)]);
        let points = combine(&[&busy, &quiet], &[], 0.0);
        let sizes: Vec<u64> = points.iter().map(|p| p.shared.cache_bytes).collect();
        assert_eq!(sizes, vec![100, 200, 400, 800, 1600]);
        let (rates, split) = best(&points);
        // 200 bytes: both to the busy cache (0.9 × 1000) beats 100 each.
        assert!((rates[1] - 900.0 / 1010.0).abs() < 1e-9);
        assert_eq!(split[1], vec![200, 0]);
        // 1,600 bytes hold both working sets, shared or split.
        let all = (0.95 * 1000.0 + 0.8 * 10.0) / 1010.0;
        assert!((rates[4] - all).abs() < 1e-9);
        assert!((points[4].shared.hit_rate - all).abs() < 1e-6);
        assert!((points[4].shared.loads_per_minute - (1010.0 - 958.0)).abs() < 1e-6);
        for pair in rates.windows(2) {
            assert!(pair[1] >= pair[0]);
        }
    }

    #[test]
    fn a_cache_needs_its_working_set_not_the_next_doubling() {
        // Working sets of 600 and 300 bytes on grids that reach 1,024 and 512.
        let mut a = advice(100.0, &[(128, 0.2), (256, 0.4), (512, 0.8), (1024, 0.9)]);
        a.working_set_bytes = 600;
        let mut b = advice(100.0, &[(128, 0.5), (256, 0.8), (512, 0.9)]);
        b.working_set_bytes = 300;
        let points = combine(&[&a, &b], &[], 0.0);
        let sizes: Vec<u64> = points.iter().map(|p| p.shared.cache_bytes).collect();
        assert_eq!(sizes, vec![128, 256, 512, 1024], "up to 900 bytes");
        let (rates, split) = best(&points);
        // 1,024 bytes hold both working sets (900 bytes), not their grids' 1,536.
        assert!((rates[3] - 0.9).abs() < 1e-9, "{points:?}");
        assert!((points[3].shared.hit_rate - 0.9).abs() < 1e-6, "{points:?}");
        // 512 bytes: b's whole working set (300 bytes, 0.9) serves more per byte than any
        // move of a; a gets 128 bytes (0.2) and 84 of the 128 to its next point (0.4).
        let expected = (0.9 + 0.2 + 0.2 * 84.0 / 128.0) / 2.0;
        assert_eq!(split[2], vec![212, 300], "the split adds up to the size");
        assert_eq!(split[3], vec![600, 300]);
        assert!(
            (rates[2] - expected).abs() < 1e-9,
            "{} against {expected}",
            rates[2]
        );
        for pair in rates.windows(2) {
            assert!(pair[1] >= pair[0]);
        }
    }

    #[test]
    fn a_bare_limit_is_shared_by_residence_not_by_gain() {
        // The same two caches as above: a busy one that saturates early, a quiet one with
        // large values. Under a bare limit the quiet cache's loads keep taking room (a tenth
        // of the requests, but each load as large as ten of the busy cache's): the shared
        // rate lies below the best split's wherever the split leaves it out, and nears it
        // where the limit holds both working sets.
        let mut busy = advice(1000.0, &[(100, 0.5), (200, 0.9), (400, 0.95)]);
        busy.sampled_keys = 40;
        let mut quiet = advice(10.0, &[(100, 0.1), (200, 0.2), (400, 0.4), (800, 0.8)]);
        quiet.sampled_keys = 8;
        let points = combine(&[&busy, &quiet], &[], 0.0);
        let (rates, _) = best(&points);
        for (point, split) in points.iter().zip(&rates) {
            let shared = point.shared.hit_rate;
            assert!(shared <= split + 1e-9, "{point:?}");
            assert!(shared > 0.0, "{point:?}");
            let loads = 1010.0 * (1.0 - shared);
            assert!((point.shared.loads_per_minute - loads).abs() < 1e-6);
        }
        assert!(points[1].shared.hit_rate < rates[1] - 0.01, "{points:?}");
        for pair in points.windows(2) {
            assert!(pair[1].shared.hit_rate >= pair[0].shared.hit_rate - 1e-9);
        }
    }

    #[test]
    fn a_cache_with_a_limit_of_its_own_holds_no_more_under_a_shared_one() {
        let busy = advice(1000.0, &[(100, 0.5), (200, 0.9), (400, 0.95)]);
        let quiet = advice(10.0, &[(100, 0.1), (200, 0.2), (400, 0.4), (800, 0.8)]);
        let points = combine(&[&busy, &quiet], &[Some(100), None], 0.0);
        // 1,600 bytes hold both working sets, but the busy cache holds 100 bytes at most; the
        // split sets every cache's limit, so it is not bound by that.
        let last = points.last().expect("points");
        let capped = (0.5 * 1000.0 + 0.8 * 10.0) / 1010.0;
        assert!((last.shared.hit_rate - capped).abs() < 1e-6, "{last:?}");
        let all = (0.95 * 1000.0 + 0.8 * 10.0) / 1010.0;
        assert!((last.split.hit_rate - all).abs() < 1e-9, "{last:?}");
    }

    #[test]
    fn requests_of_caches_that_cache_nothing_miss_at_every_size() {
        let cached = advice(30.0, &[(100, 0.5), (200, 1.0)]);
        let points = combine(&[&cached], &[], 10.0);
        assert_eq!(points.len(), 2);
        let (rates, _) = best(&points);
        assert!((rates[1] - 0.75).abs() < 1e-9, "{points:?}");
        assert!(
            (points[1].shared.hit_rate - 0.75).abs() < 1e-6,
            "{points:?}"
        );
        assert!((points[1].shared.loads_per_minute - 10.0).abs() < 1e-6);
        assert!((rates[0] - 0.375).abs() < 1e-9);
        // One cache alone holds the limit whole, shared or split: its own curve.
        assert!(
            (points[0].shared.hit_rate - 0.375).abs() < 1e-6,
            "{points:?}"
        );
    }

    #[test]
    fn caches_without_requests_are_left_out() {
        let idle = advice(0.0, &[(100, 0.0)]);
        assert!(combine(&[&idle], &[], 0.0).is_empty());
        assert!(combine(&[], &[], 5.0).is_empty());
    }
}
