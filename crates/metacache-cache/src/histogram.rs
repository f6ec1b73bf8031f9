//! Load times by bucket: the `metacache_entry_load_duration_seconds` histogram, so that a p99
//! load time is a PromQL query.
//!
//! Each cache keeps one non-cumulative count per bucket (and one above the last bound); only
//! loads touch them, never the hit path. The bounds are chosen for metadata sources: a local
//! directory walk answers in well under a millisecond, a metastore or REST catalog in tens of
//! milliseconds, a cold object store listing in seconds, a struggling metastore in tens.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Upper bounds of the buckets, in seconds (the histogram's `le` labels, `+Inf` after them).
pub const LOAD_BUCKET_BOUNDS_SECONDS: [f64; 15] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// The bounds in nanoseconds, exact (each bound is a whole number of nanoseconds).
const BOUNDS_NANOS: [u64; 15] = [
    500_000,
    1_000_000,
    2_500_000,
    5_000_000,
    10_000_000,
    25_000_000,
    50_000_000,
    100_000_000,
    250_000_000,
    500_000_000,
    1_000_000_000,
    2_500_000_000,
    5_000_000_000,
    10_000_000_000,
    30_000_000_000,
];

/// Buckets including the one above the last bound.
const SLOTS: usize = BOUNDS_NANOS.len() + 1;

/// The live counts of one cache.
#[derive(Default)]
pub(crate) struct LoadHistogram {
    counts: [AtomicU64; SLOTS],
}

impl LoadHistogram {
    /// Counts one load that took `nanos`.
    pub(crate) fn record(&self, nanos: u64) {
        let slot = BOUNDS_NANOS.partition_point(|&bound| bound < nanos);
        self.counts[slot].fetch_add(1, Relaxed);
    }

    pub(crate) fn snapshot(&self) -> LoadTimes {
        LoadTimes {
            counts: std::array::from_fn(|i| self.counts[i].load(Relaxed)),
        }
    }
}

/// Loads (successful or not) by duration: how many fell in each bucket, not cumulative; the
/// last count is of loads slower than the last bound.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadTimes {
    /// One count per bucket of [`LOAD_BUCKET_BOUNDS_SECONDS`], then the loads above it.
    pub counts: [u64; SLOTS],
}

impl LoadTimes {
    /// Loads counted in every bucket.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Adds `other`'s counts (a histogram summed over caches).
    pub fn add(&mut self, other: &Self) {
        for (mine, theirs) in self.counts.iter_mut().zip(other.counts) {
            *mine += theirs;
        }
    }

    /// `(upper bound, loads at or below it)` per bucket, as the text format's `le` series want
    /// them; the last bound is `+Inf` with every load.
    pub fn cumulative(&self) -> impl Iterator<Item = (f64, u64)> + '_ {
        let bounds = LOAD_BUCKET_BOUNDS_SECONDS
            .iter()
            .copied()
            .chain(std::iter::once(f64::INFINITY));
        bounds.zip(self.counts.iter().scan(0u64, |sum, &count| {
            *sum += count;
            Some(*sum)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_in_nanoseconds_match_the_seconds() {
        for (seconds, nanos) in LOAD_BUCKET_BOUNDS_SECONDS.iter().zip(BOUNDS_NANOS) {
            assert_eq!((seconds * 1e9).round() as u64, nanos);
        }
        assert!(BOUNDS_NANOS.is_sorted());
    }

    #[test]
    fn a_load_lands_in_the_first_bucket_whose_bound_it_does_not_exceed() {
        let histogram = LoadHistogram::default();
        for nanos in [
            0,
            500_000,
            500_001,
            1_000_000,
            29_000_000_000,
            31_000_000_000,
        ] {
            histogram.record(nanos);
        }
        let times = histogram.snapshot();
        assert_eq!(times.counts[0], 2, "0 and exactly 0.5 ms are le=0.0005");
        assert_eq!(times.counts[1], 2);
        assert_eq!(times.counts[14], 1);
        assert_eq!(times.counts[15], 1, "above 30 s is only in +Inf");
        let cumulative: Vec<(f64, u64)> = times.cumulative().collect();
        assert_eq!(cumulative.len(), 16);
        assert_eq!(cumulative[1], (0.001, 4));
        assert_eq!(cumulative[15], (f64::INFINITY, 6));
        assert!(cumulative.windows(2).all(|w| w[0].1 <= w[1].1));
        let mut sum = LoadTimes::default();
        sum.add(&times);
        sum.add(&times);
        assert_eq!(sum.total(), 12);
    }
}
