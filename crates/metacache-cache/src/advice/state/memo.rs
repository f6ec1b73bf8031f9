//! The last curve read, kept for the next read while nothing it was read from changed: a
//! node's idle caches (most of a large node between two scrapes) are not walked again on each
//! `/metrics` scrape, advice query or dashboard refresh.
//!
//! Invariants: every change to the state that a curve reads bumps [`State::version`] — the
//! state's mutators each call [`State::changed`], and a tick (sweep, aging, byte luck) that
//! changed something does too. A kept curve answers only for the same version, the same cache
//! totals and limit, and — when its prediction used the request rate (an invalidated heavy key's
//! cold life) — the same rate; what depends on the rate alone (requests and loads a minute) is
//! recomputed. So a kept curve reads exactly what a fresh one would.

use super::super::{Advice, AdvicePoint};
use super::{Served, State};

/// A curve and what it was read from.
pub(super) struct Memo {
    version: u64,
    served: Served,
    limit: Option<u64>,
    /// The request rate's bits, if the prediction depended on it.
    rate: Option<u64>,
    advice: Advice,
}

impl Memo {
    /// Bytes it holds.
    pub(super) fn bytes(&self) -> u64 {
        let points = self.advice.points.capacity() * std::mem::size_of::<AdvicePoint>();
        (std::mem::size_of::<Self>() + points) as u64
    }
}

impl State {
    /// Something a curve reads changed: a kept curve no longer answers.
    pub(super) fn changed(&mut self) {
        self.version = self.version.wrapping_add(1);
    }

    /// The kept curve, if it answers for these inputs, with `requests_per_minute` (and the
    /// loads it makes) brought to now.
    pub(super) fn kept_curve(
        &self,
        served: Served,
        limit: Option<u64>,
        requests_per_minute: f64,
    ) -> Option<Advice> {
        let memo = self.memo.as_ref()?;
        let answers = memo.version == self.version
            && memo.served == served
            && memo.limit == limit
            && memo
                .rate
                .is_none_or(|bits| bits == requests_per_minute.to_bits());
        if !answers {
            return None;
        }
        let mut advice = memo.advice.clone();
        advice.requests_per_minute = requests_per_minute;
        for point in &mut advice.points {
            point.loads_per_minute = (1.0 - point.hit_rate) * requests_per_minute;
        }
        Some(advice)
    }

    /// Keeps `advice`, read from these inputs (`rate`: whether its prediction used
    /// `requests_per_minute`).
    pub(super) fn keep_curve(
        &mut self,
        served: Served,
        limit: Option<u64>,
        requests_per_minute: f64,
        rate: bool,
        advice: &Advice,
    ) {
        self.memo = Some(Memo {
            version: self.version,
            served,
            limit,
            rate: rate.then(|| requests_per_minute.to_bits()),
            advice: advice.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::AdvisorOptions;
    use super::super::super::heavy::Report;
    use super::super::super::mini::Policy;
    use super::*;
    use std::time::Duration;

    /// Random requests, loads, heavy reports, invalidations, clears and clock jumps (past
    /// sweeps, agings and luck settlings), with a curve read now and then at one of a few
    /// limits: each read, kept or not, equals a curve read from scratch at that moment, and a
    /// read with nothing changed since the last is answered from the kept curve.
    #[test]
    fn a_kept_curve_reads_as_a_fresh_one() {
        let policy = Policy {
            count_capacity: 10_000,
            ttl_nanos: 40_000_000_000,
            after_access: false,
            margin_nanos: 0,
        };
        let options = AdvisorOptions {
            sample_keys: 64,
            sweep_interval: Duration::from_secs(30),
            ..AdvisorOptions::default()
        };
        let second = 1_000_000_000u64;
        let mut state = State::new(policy, options, 0, 600 * second);
        let mut random = super::super::draws(0x2545_F491_4F6C_DD1D);
        // Hashes spread over the space: the sample of 64 binds over 2,000 keys.
        let hash = |key: u64| (key + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let charge = |key: u64| 100 + key % 900;
        let (mut now, mut served) = (1u64, Served::default());
        let (mut reads, mut kept) = (0, 0);
        let (mut limit, mut last) = (None, 0);
        for step in 0..60_000u64 {
            // A Zipf-like key: low numbers far more often.
            let draw = random(1 << 20) as f64 / (1u64 << 20) as f64;
            let key = (draw.powi(4) * 2_000.0) as u64;
            match random(100) {
                0..=79 => {
                    let hit = random(3) > 0;
                    served.requests += 1;
                    served.hits += u64::from(hit);
                    let h = hash(key);
                    last = key;
                    state.request(h, if hit { charge(key) } else { 0 }, now, served);
                    if !hit {
                        state.learn(h, charge(key), now);
                    }
                }
                80..=89 => state.heavy(
                    hash(key),
                    charge(key),
                    Report {
                        selects: step % 2 == 0,
                    },
                    now,
                    served,
                ),
                // The key requested last: held at some sizes, if sampled.
                90..=94 => state.invalidate(hash(last), random(2) == 0),
                95 if random(50) == 0 => state.clear(),
                96 => state.update_promote(),
                _ => {}
            }
            now += match random(1_000) {
                0 => 700 * second,
                1..=10 => 20 * second,
                _ => random(2_000_000),
            };
            // A read now and then (so that many follow a single change), at one of a few limits;
            // every 97th is read again at once, and once more when the clock moved on.
            if random(4) == 0 || step % 97 == 0 {
                if random(10) == 0 {
                    limit = [None, Some(64 << 10), Some(1 << 20)][random(3) as usize];
                }
                for read in 0..if step % 97 == 0 { 3 } else { 1 } {
                    // As the advisor reads: the crowded sizes first, then the curve.
                    if let Some(job) = state.crowd_job(served, now) {
                        state.set_crowd(job.run());
                    }
                    let rate = state.requests_per_minute(served, now);
                    let was_kept = state.kept_curve(served, limit, rate).is_some();
                    if read == 1 {
                        assert!(was_kept, "step {step}: nothing changed, yet not kept");
                    }
                    kept += usize::from(was_kept);
                    let curve = state.curve(served, limit, now);
                    state.memo = None;
                    let fresh = state.curve(served, limit, now);
                    assert_eq!(curve, fresh, "step {step}: a kept curve went stale");
                    reads += 1;
                    if read == 1 {
                        // Past the byte luck's settling, a sweep, or an aging.
                        now += [1, 31, 601][random(3) as usize] * second;
                    }
                }
            }
        }
        assert!(
            kept > 500,
            "{kept} of {reads} reads answered from the kept curve"
        );
    }
}
