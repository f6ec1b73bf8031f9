//! The last hour of each cache's counters, sampled in memory: what the statistics table shows
//! now, at every `external_meta_cache_history_interval_seconds` — requests, hits, loads,
//! evictions by cause, rejections by reason, bytes held and the limit — for the dashboard and
//! `information_schema.catalog_meta_cache_history`.
//!
//! Bounded: at most [`MAX_POINTS`] samples per cache (an hour at the default minute) and
//! [`MAX_SERIES`] caches (the least recently active leave first). A sample stores what changed
//! since the one before (a cache rebuilt by ALTER starts its counters over: its first sample
//! after that counts from zero).

use std::collections::{HashMap, VecDeque};

use metacache_cache::{CacheStats, EvictionCause};
use metacache_ledger::RejectKind;
use parking_lot::Mutex;

use crate::CacheRow;

/// Caches with samples kept at most.
pub const MAX_SERIES: usize = 4096;

/// Samples kept per cache.
pub const MAX_POINTS: usize = 360;

/// One cache's counters at one moment: cumulative, as the statistics table shows them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Totals {
    requests: u64,
    hits: u64,
    loads: u64,
    evictions: [u64; EvictionCause::ALL.len()],
    rejects: [u64; RejectKind::ALL.len()],
}

impl Totals {
    fn of(stats: &CacheStats) -> Self {
        Self {
            requests: stats.request_count,
            hits: stats.hit_count,
            loads: stats.load_success_count + stats.load_failure_count,
            evictions: stats.evictions_by_cause,
            rejects: stats.weight_rejects_by_reason,
        }
    }

    /// What changed since `before`; everything when a counter went back (the cache was
    /// rebuilt and counts from zero).
    fn since(&self, before: &Totals) -> Totals {
        let went_back = self.requests < before.requests
            || self.loads < before.loads
            || self
                .evictions
                .iter()
                .zip(before.evictions)
                .any(|(a, b)| *a < b)
            || self.rejects.iter().zip(before.rejects).any(|(a, b)| *a < b);
        if went_back {
            return *self;
        }
        Totals {
            requests: self.requests - before.requests,
            hits: self.hits.saturating_sub(before.hits),
            loads: self.loads - before.loads,
            evictions: std::array::from_fn(|i| self.evictions[i] - before.evictions[i]),
            rejects: std::array::from_fn(|i| self.rejects[i] - before.rejects[i]),
        }
    }
}

/// One sample of one cache: the interval's counts and the bytes at its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryPoint {
    /// When the interval ended (milliseconds since the epoch).
    pub at_millis: u64,
    /// Its length in milliseconds.
    pub interval_millis: u64,
    /// Requests (hits and misses) in the interval.
    pub requests: u64,
    /// Hits in the interval.
    pub hits: u64,
    /// Loads from the source (successes and failures) in the interval.
    pub loads: u64,
    /// Evictions in the interval, by cause ([`EvictionCause::index`]).
    pub evictions: [u64; EvictionCause::ALL.len()],
    /// Admissions refused in the interval, by reason ([`RejectKind::index`]).
    pub rejects: [u64; RejectKind::ALL.len()],
    /// ESTIMATED_WEIGHT at its end.
    pub weight: u64,
    /// MAX_WEIGHT at its end (-1: no limit).
    pub max_weight: i64,
}

/// The samples of one cache, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryRow {
    /// CATALOG_NAME.
    pub catalog: String,
    /// ENGINE_NAME.
    pub engine: String,
    /// ENTRY_NAME.
    pub entry_name: String,
    /// The samples.
    pub points: Vec<HistoryPoint>,
}

struct Series {
    last: Totals,
    last_millis: u64,
    /// When the cache last had requests (for choosing which series leave first).
    active_millis: u64,
    points: VecDeque<HistoryPoint>,
}

/// The node's history of every built cache.
#[derive(Default)]
pub struct History {
    series: Mutex<HashMap<(String, String, String), Series>>,
}

impl History {
    /// Takes a sample of `rows` (the built caches' statistics) at `now_millis`. A cache seen for
    /// the first time only sets its starting point.
    pub fn sample(&self, rows: &[CacheRow], now_millis: u64) {
        let mut series = self.series.lock();
        for row in rows {
            let key = (
                row.catalog.clone(),
                row.engine.clone(),
                row.stats.entry_name.clone(),
            );
            let totals = Totals::of(&row.stats);
            let Some(s) = series.get_mut(&key) else {
                series.insert(
                    key,
                    Series {
                        last: totals,
                        last_millis: now_millis,
                        active_millis: now_millis,
                        points: VecDeque::new(),
                    },
                );
                continue;
            };
            let delta = totals.since(&s.last);
            if delta.requests > 0 {
                s.active_millis = now_millis;
            }
            if s.points.len() == MAX_POINTS {
                s.points.pop_front();
            }
            s.points.push_back(HistoryPoint {
                at_millis: now_millis,
                interval_millis: now_millis.saturating_sub(s.last_millis),
                requests: delta.requests,
                hits: delta.hits,
                loads: delta.loads,
                evictions: delta.evictions,
                rejects: delta.rejects,
                weight: row.stats.estimated_weight,
                max_weight: row.stats.max_weight,
            });
            s.last = totals;
            s.last_millis = now_millis;
        }
        // Caches that are gone (dropped, rebuilt under another name) stop being sampled; they
        // leave once their samples are an hour old, or first when there are too many.
        let horizon = now_millis.saturating_sub(3_600_000);
        series.retain(|_, s| s.last_millis >= horizon);
        while series.len() > MAX_SERIES {
            let Some(oldest) = series
                .iter()
                .min_by_key(|(_, s)| s.active_millis)
                .map(|(key, _)| key.clone())
            else {
                break;
            };
            series.remove(&oldest);
        }
    }

    /// Every cache's samples, by catalog, engine and entry.
    pub fn rows(&self) -> Vec<HistoryRow> {
        let series = self.series.lock();
        let mut rows: Vec<HistoryRow> = series
            .iter()
            .map(|((catalog, engine, entry_name), s)| HistoryRow {
                catalog: catalog.clone(),
                engine: engine.clone(),
                entry_name: entry_name.clone(),
                points: s.points.iter().copied().collect(),
            })
            .collect();
        rows.sort_by(|a, b| {
            (&a.catalog, &a.engine, &a.entry_name).cmp(&(&b.catalog, &b.engine, &b.entry_name))
        });
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(catalog: &str, requests: u64, hits: u64, weight: u64) -> CacheRow {
        let mut stats = CacheStats::idle(
            &metacache_cache::CacheConfig::new("hive-file", None, 10),
            1000,
        );
        stats.request_count = requests;
        stats.hit_count = hits;
        stats.miss_count = requests - hits;
        stats.load_success_count = requests - hits;
        stats.estimated_weight = weight;
        CacheRow {
            catalog: catalog.into(),
            engine: "hive".into(),
            built: true,
            stats,
        }
    }

    #[test]
    fn samples_hold_what_changed_in_each_interval() {
        let history = History::default();
        history.sample(&[row("c", 10, 5, 100)], 1_000);
        history.sample(&[row("c", 30, 20, 300)], 61_000);
        history.sample(&[row("c", 30, 20, 300)], 121_000);
        // Rebuilt by ALTER: its counters start over.
        history.sample(&[row("c", 4, 1, 50)], 181_000);
        let rows = history.rows();
        assert_eq!(rows.len(), 1);
        let points = &rows[0].points;
        let counts: Vec<(u64, u64, u64, u64)> = points
            .iter()
            .map(|p| (p.requests, p.hits, p.loads, p.weight))
            .collect();
        assert_eq!(
            counts,
            vec![(20, 15, 5, 300), (0, 0, 0, 300), (4, 1, 3, 50)]
        );
        assert_eq!(points[0].interval_millis, 60_000);
    }

    #[test]
    fn series_and_points_are_bounded() {
        let history = History::default();
        for i in 0..(MAX_POINTS as u64 + 10) {
            history.sample(&[row("c", i, 0, 0)], i * 1000);
        }
        assert_eq!(history.rows()[0].points.len(), MAX_POINTS);
        // A cache gone for an hour leaves.
        history.sample(&[row("d", 0, 0, 0)], 10_000_000);
        let rows = history.rows();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].catalog, "d");
    }
}
