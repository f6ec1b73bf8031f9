//! What the hot sampled keys put into each miniature's counts, so that a key that becomes heavy
//! takes its own requests out of them when it leaves.
//!
//! Why: a heavy key is counted apart ([`super::heavy`]) and leaves the miniatures, whose ratio
//! then stands for the rest of the keys. But until it became heavy, its requests were counted
//! there, mostly as hits (a hot key is held at almost every size). Left in, they raise the
//! rest's ratio, while the table of heavy keys counts the same hits again. One sampled key in
//! `1/rate` is such a key, so the curve read high in proportion to the sampling rate (through
//! the binary, 0.04–0.056 at 20,000 keys sampled at 0.23: docs/benchmarks.md, "A sampled cache
//! through the binary"). Taking out a guess (every request a hit, or hits where the key is
//! held) was wrong at small sizes, where a hot key is contested and does not always hit; so
//! each miniature's own hits of the key are kept.
//!
//! When the sample starts to bind, every heavy key leaves the miniatures so, those that leave
//! the sample at that moment included: they are counted apart in full from then on.
//!
//! Which keys: a sampled key from its [`TRACE_FROM`]-times-the-mean'th request (a key becomes
//! heavy at [`super::heavy::HEAVIER_THAN_MEAN`] times the mean, so most of its requests are
//! traced), dropped when it falls under half that or leaves the sample. At most
//! `sample / TRACE_FROM × 2` keys can be that far above the mean, each `4 × (sizes + 2)` bytes.
//!
//! Invariant: a trace's counts are in the miniatures' scale — aged and rescaled with them.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

/// A sampled key is traced from this many times the mean requests of a sampled key.
pub(super) const TRACE_FROM: f64 = 8.0;

/// One key's share of the miniatures' counts since its trace began.
#[derive(Debug, Clone, Default)]
pub(super) struct Trace {
    /// Its requests (each miniature counts every request of a key it simulates).
    requests: f32,
    /// Its hits in each miniature of the grid, smallest first.
    hits: Vec<f32>,
    /// Its hits in the unbounded miniature.
    unbounded: f32,
}

impl Trace {
    /// One request's outcome at the grid's size `size` (smallest first).
    pub(super) fn count(&mut self, size: usize, hit: bool) {
        if let Some(count) = self.hits.get_mut(size) {
            *count += f32::from(u8::from(hit));
        }
    }

    /// The outcome in the unbounded miniature, which every request reaches last: the request
    /// is counted with it.
    pub(super) fn count_unbounded(&mut self, hit: bool) {
        self.unbounded += f32::from(u8::from(hit));
        self.requests += 1.0;
    }
}

/// A key's share of one miniature's counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Share {
    pub(super) hits: f64,
    pub(super) misses: f64,
}

/// The traced keys.
#[derive(Default)]
pub(super) struct Traces {
    keys: HashMap<u64, Trace>,
}

/// Bytes of a trace besides its counts: the map slot and the vector's header.
const BYTES_PER_TRACE: u64 = 56;

impl Traces {
    /// The trace of the key of `hash`: the one it has, else a new one over a grid of `sizes`
    /// (nothing counted yet) if `start`, else none.
    pub(super) fn get_or_start(
        &mut self,
        hash: u64,
        start: bool,
        sizes: usize,
    ) -> Option<&mut Trace> {
        match self.keys.entry(hash) {
            Entry::Occupied(trace) => Some(trace.into_mut()),
            Entry::Vacant(slot) if start => Some(slot.insert(Trace {
                hits: vec![0.0; sizes],
                ..Trace::default()
            })),
            Entry::Vacant(_) => None,
        }
    }

    /// Stops tracing the key of `hash`; returns its share of each size's counts, smallest
    /// first, then the unbounded miniature's.
    pub(super) fn take(&mut self, hash: u64) -> Option<Vec<Share>> {
        let trace = self.keys.remove(&hash)?;
        let requests = f64::from(trace.requests);
        let share = |hits: f32| Share {
            hits: f64::from(hits),
            misses: (requests - f64::from(hits)).max(0.0),
        };
        let mut shares: Vec<Share> = trace.hits.iter().map(|&hits| share(hits)).collect();
        shares.push(share(trace.unbounded));
        Some(shares)
    }

    /// Stops tracing the keys for which `keep` is false.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(u64) -> bool) {
        self.keys.retain(|&hash, _| keep(hash));
    }

    /// A size was added at the top of the grid, starting as a copy of the unbounded
    /// miniature: so do the traces.
    pub(super) fn grew(&mut self) {
        for trace in self.keys.values_mut() {
            trace.hits.push(trace.unbounded);
        }
    }

    /// Scales every count, as the miniatures' counts are when the rate drops or they age.
    pub(super) fn scale(&mut self, by: f64) {
        let by = by as f32;
        for trace in self.keys.values_mut() {
            trace.requests *= by;
            trace.unbounded *= by;
            for hits in &mut trace.hits {
                *hits *= by;
            }
        }
    }

    /// Bytes the traces hold.
    pub(super) fn bytes(&self) -> u64 {
        self.keys
            .values()
            .map(|t| BYTES_PER_TRACE + 4 * (t.hits.capacity() as u64 + 2))
            .sum()
    }

    /// Keys traced now.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.keys.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request of the key of `hash`, as the state counts it: its outcome at each size and
    /// in the unbounded miniature (nothing if the key is not traced).
    fn record(traces: &mut Traces, hash: u64, hits: &[bool], unbounded: bool) {
        if let Some(trace) = traces.get_or_start(hash, false, 0) {
            for (size, &hit) in hits.iter().enumerate() {
                trace.count(size, hit);
            }
            trace.count_unbounded(unbounded);
        }
    }

    #[test]
    fn a_trace_returns_each_sizes_hits_and_misses() {
        let mut traces = Traces::default();
        record(&mut traces, 1, &[true, true], true);
        traces.get_or_start(1, true, 2);
        record(&mut traces, 1, &[false, false], false);
        record(&mut traces, 1, &[false, true], true);
        traces.grew();
        record(&mut traces, 1, &[true, true, true], true);
        assert_eq!(
            traces.take(1),
            Some(vec![
                Share {
                    hits: 1.0,
                    misses: 2.0
                },
                Share {
                    hits: 2.0,
                    misses: 1.0
                },
                // Copied from the unbounded miniature when the size was added.
                Share {
                    hits: 2.0,
                    misses: 1.0
                },
                Share {
                    hits: 2.0,
                    misses: 1.0
                },
            ])
        );
        assert_eq!(traces.take(1), None, "taken once");
    }

    #[test]
    fn counts_scale_and_keys_go() {
        let mut traces = Traces::default();
        traces.get_or_start(1, true, 1);
        traces.get_or_start(2, true, 1);
        record(&mut traces, 1, &[true], true);
        record(&mut traces, 1, &[true], true);
        traces.scale(0.5);
        traces.retain(|hash| hash == 1);
        assert_eq!(traces.len(), 1);
        assert_eq!(
            traces.take(1),
            Some(vec![
                Share {
                    hits: 1.0,
                    misses: 0.0
                };
                2
            ])
        );
    }
}
