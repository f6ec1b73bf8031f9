//! How a curve point is predicted from the state: the heavy keys that fit (or, at the
//! crowded sizes, what the simulation found them to do), the miniatures for the rest at the
//! bytes and count slots the heavy keys leave, and the pinning to the measured hit ratio.

use super::super::crowd::{CrowdJob, Crowded, Drawn, Population, Sampled, crowded};
use super::super::heavy::{Counted, Fitting, fitting};
use super::super::mini::{HOT_ALLOCATION, Miniature};
use super::super::nanos;
use super::{CROWD_KEPT, CROWDED, Served, State};

impl State {
    /// The predicted hit ratio at `size` bytes (`None`: unlimited) over `requests` requests:
    /// the heavy keys (`heavy`, by hits) that fit, and the miniatures' ratio for the rest at the
    /// bytes and count slots the heavy keys leave. The miniatures bound every size by the
    /// cache's whole count capacity, so the slots the heavy keys take are given to the rest as
    /// bytes: no more than the slots left hold at the sample's mean value (a cache allowed `k`
    /// values behaves much as one whose bytes hold `k`). An invalidated heavy key loses the
    /// hits the cold ring at this size would cost it: the cache serves `per_nano` requests a
    /// nanosecond, a key its share of them ([`super::super::heavy`]).
    /// At a crowded size the simulation's outcome stands for the heavy keys that fit
    /// ([`super::super::crowd`]): it counts what invalidations and contests cost them.
    pub(super) fn predict(
        &self,
        size: Option<u64>,
        heavy: &[Counted],
        requests: f64,
        per_nano: f64,
    ) -> f64 {
        if let Some(crowded) = size.and_then(|size| crowded(&self.crowd, size)) {
            let fit = Fitting {
                hits: requests_of(heavy) * crowded.hit_ratio,
                weight: crowded.bytes as u64,
                values: crowded.values.round() as u64,
            };
            return self.predict_with(size, heavy, requests, fit, Some(crowded));
        }
        let without_loss = self.predict_losing(size, heavy, requests, |_| 0.0);
        let cold_life = match size {
            Some(size) if per_nano > 0.0 && heavy.iter().any(|k| k.invalidations > 0.0) => {
                self.cold_life(size, 1.0 - without_loss, per_nano)
            }
            _ => None,
        };
        let Some(life) = cold_life else {
            return without_loss;
        };
        self.predict_losing(size, heavy, requests, |key: &Counted| {
            let per_nano = (key.hits + key.misses) / requests * per_nano;
            key.invalidations * (-per_nano * life).exp()
        })
    }

    /// How long a newcomer stays unread in the cold ring of a cache of `size` bytes whose miss
    /// ratio is `misses` and which serves `per_nano` requests a nanosecond, in nanoseconds:
    /// the ring's bytes over the bytes stored a nanosecond. `None` when that size holds the
    /// working set and evicts nothing.
    fn cold_life(&self, size: u64, misses: f64, per_nano: f64) -> Option<f64> {
        if size >= self.working_set() {
            return None;
        }
        let weight = self
            .mean_bytes()
            .max(size.div_ceil(self.policy.count_capacity.max(1)) as f64);
        let stored = misses * per_nano * weight;
        (stored > 0.0).then(|| size as f64 * (1.0 - HOT_ALLOCATION) / stored)
    }

    /// The mean known charge of a sampled key's value.
    pub(super) fn mean_bytes(&self) -> f64 {
        self.sampler.known_bytes() as f64 / self.sampler.len().max(1) as f64
    }

    /// [`State::predict`] with a heavy key losing `lost` of its hits.
    fn predict_losing(
        &self,
        size: Option<u64>,
        heavy: &[Counted],
        requests: f64,
        lost: impl Fn(&Counted) -> f64,
    ) -> f64 {
        let fit = fitting(heavy, size, self.policy.count_capacity, lost);
        self.predict_with(size, heavy, requests, fit, None)
    }

    /// The cache's requests a minute, between the older of the two marks and `now`.
    pub(super) fn requests_per_minute(&self, served: Served, now: u64) -> f64 {
        let (since, before) = self.marks[0];
        let elapsed = now.saturating_sub(since);
        if elapsed > 0 {
            served.requests.saturating_sub(before) as f64 * 60e9 / elapsed as f64
        } else {
            0.0
        }
    }

    /// The cache's recent requests and hits, aged.
    pub(super) fn totals(&self, served: Served) -> (f64, f64) {
        let window = served.since(self.aging_mark);
        (self.aged[0] + window[0], self.aged[1] + window[1])
    }

    /// The heavy keys the curve counts apart (none while every key is sampled).
    pub(super) fn counted_heavy(&self) -> Vec<Counted> {
        if self.binds() {
            self.heavy.by_hits()
        } else {
            Vec::new()
        }
    }

    /// What to simulate for the crowded sizes, unless their last simulation was found to stand
    /// less than [`CROWD_KEPT`] ago or stands now ([`Drawn::stands`]). The caller runs it
    /// outside the advisor's lock and hands the outcome to [`State::set_crowd`].
    pub(in crate::advice) fn crowd_job(&mut self, served: Served, now: u64) -> Option<CrowdJob> {
        if self
            .crowd_checked
            .is_some_and(|at| now.saturating_sub(at) < nanos(CROWD_KEPT))
        {
            return None;
        }
        self.tick(now, served);
        self.crowd_checked = Some(now);
        let heavy = self.counted_heavy();
        let heavy_bytes: u64 = heavy.iter().map(|k| k.charge).sum();
        let below = heavy_bytes.saturating_mul(CROWDED);
        let sizes: Vec<u64> = self
            .minis
            .iter()
            .map(Miniature::size)
            .take_while(|&size| size < below)
            .collect();
        if heavy.is_empty() || sizes.is_empty() {
            if !self.crowd.is_empty() {
                self.changed();
                self.crowd.clear();
            }
            return None;
        }
        let rate = self.sampler.rate();
        let simulated = self.crowd.iter().map(|&(size, _)| size);
        if !self.crowd.is_empty()
            && simulated.eq(sizes.iter().copied())
            && self
                .crowd_drawn
                .stands(now, served.requests, self.totals(served).0, rate, &heavy)
        {
            return None;
        }
        self.crowd_drawn = Drawn::new(now, served.requests, rate, &heavy);
        let per_nano = self.requests_per_minute(served, now) / 60e9;
        let requests = self.totals(served).0.max(1.0);
        let rest: Vec<Sampled> = self
            .sampler
            .keys()
            .filter(|(hash, _)| !self.heavy.is_heavy(*hash))
            .map(|(hash, key)| Sampled {
                hash,
                charge: key.bytes,
                requests: key.requests,
                invalidations: key.invalidations,
            })
            .collect();
        let population = Population::new(&heavy, &rest, rate, requests, self.clears);
        if population.is_empty() {
            if !self.crowd.is_empty() {
                self.changed();
                self.crowd.clear();
            }
            return None;
        }
        Some(CrowdJob {
            population,
            sizes,
            policy: self.policy,
            step_nanos: if per_nano > 0.0 {
                (1.0 / per_nano).min(u64::MAX as f64) as u64
            } else {
                1_000_000
            },
            sweep_nanos: nanos(self.options.sweep_interval),
        })
    }

    /// The outcome of a [`CrowdJob`].
    pub(in crate::advice) fn set_crowd(&mut self, crowd: Vec<(u64, Crowded)>) {
        self.changed();
        self.crowd = crowd;
    }

    /// The hit ratio at `size` with the heavy keys taking `fit` (their hits, bytes and count
    /// slots), and, at a crowded size, the rest's hit ratio among them (`crowded`).
    fn predict_with(
        &self,
        size: Option<u64>,
        heavy: &[Counted],
        requests: f64,
        fit: Fitting,
        crowded: Option<Crowded>,
    ) -> f64 {
        let count = self.policy.count_capacity;
        let mean = self.mean_bytes();
        let by_count = (fit.values > 0 && mean > 0.0)
            .then(|| (count.saturating_sub(fit.values) as f64 * mean).min(u64::MAX as f64) as u64);
        let rest = match size {
            Some(size) => Some(
                size.saturating_sub(fit.weight)
                    .min(by_count.unwrap_or(u64::MAX)),
            ),
            None => by_count,
        };
        let mut rest_ratio = match rest {
            Some(0) => 0.0,
            rest => self.ratio_at(rest),
        };
        if let (Some(crowded), Some(size)) = (crowded, size) {
            // Where the heavy keys fill the size, the rest lives in what they leave for a
            // while, contesting them: the simulation's rest. Where they fill little of it,
            // the rest has its bytes for good: the miniatures' (which see its reuse, TTLs and
            // invalidations as they came, not drawn at random).
            let share = (crowded.bytes / size.max(1) as f64).clamp(0.0, 1.0);
            rest_ratio = share * crowded.rest_hit_ratio + (1.0 - share) * rest_ratio;
        }
        let rest_requests = (requests - requests_of(heavy)).max(0.0);
        ((fit.hits + rest_ratio * rest_requests) / requests).clamp(0.0, 1.0)
    }

    /// The miniatures' hit ratio at `limit` bytes (`None`: unlimited), interpolated between
    /// the sizes around it on the doubling grid.
    fn ratio_at(&self, limit: Option<u64>) -> f64 {
        let Some(limit) = limit else {
            return self.unbounded.hit_ratio();
        };
        let Some(above) = self.minis.iter().position(|m| m.size() >= limit) else {
            return self.unbounded.hit_ratio();
        };
        let high = &self.minis[above];
        let Some(low) = above.checked_sub(1).map(|i| &self.minis[i]) else {
            // Below the grid: from nothing at 0 bytes to the smallest size's ratio.
            return high.hit_ratio() * (limit as f64 / high.size() as f64).min(1.0);
        };
        let at = ((limit as f64).log2() - (low.size() as f64).log2()).clamp(0.0, 1.0);
        low.hit_ratio() + (high.hit_ratio() - low.hit_ratio()) * at
    }
}

/// The heavy keys' requests: their hits and misses (a size that loses hits to the cold ring
/// turns them into misses).
fn requests_of(heavy: &[Counted]) -> f64 {
    heavy.iter().map(|k| k.hits + k.misses).sum()
}

/// The cache's measured hit ratio at its own limit, against the prediction there. Much of a
/// sample's error is common to neighbouring sizes (which keys fell in the sample), so the curve
/// is scaled to pass through the measured point: below the limit the hit ratios are scaled
/// (0 bytes still hit nothing), above it the miss ratios are.
pub(super) struct Anchor {
    pub(super) limit: Option<u64>,
    pub(super) measured: f64,
    pub(super) predicted: f64,
}

impl Anchor {
    pub(super) fn correct(&self, size: u64, predicted: f64) -> f64 {
        let below = self.limit.is_none_or(|limit| size <= limit);
        let corrected = if below {
            if self.predicted > 0.0 {
                predicted * self.measured / self.predicted
            } else {
                predicted
            }
        } else if self.predicted < 1.0 {
            1.0 - (1.0 - predicted) * (1.0 - self.measured) / (1.0 - self.predicted)
        } else {
            predicted
        };
        corrected.clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::super::heavy::Report;
    use super::super::super::mini::Policy;
    use super::super::super::{AdvisorOptions, DEFAULT_HALF_LIFE};
    use super::*;
    use crate::slot::NEVER;

    /// A busy cache whose sample binds, read every 15 s for 40 minutes: under steady
    /// requests its crowded sizes are simulated a few times, never more than [`LONGEST`]
    /// apart (before, once a minute); when other keys turn hot, within a few reads.
    #[test]
    fn a_steady_cache_simulates_its_crowded_sizes_seldom_and_a_moved_one_again() {
        use super::super::super::crowd::LONGEST;
        let policy = Policy {
            count_capacity: 10_000,
            ttl_nanos: NEVER,
            after_access: false,
            margin_nanos: 0,
        };
        let options = AdvisorOptions {
            sample_keys: 64,
            ..AdvisorOptions::default()
        };
        let second = 1_000_000_000u64;
        let mut state = State::new(policy, options, 0, nanos(DEFAULT_HALF_LIFE));
        let mut random = super::super::draws(0x2545_F491_4F6C_DD1D);
        let hash = |key: u64| (key + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let charge = |key: u64| 1_000 + key % 1_000;
        let (mut now, mut served) = (1u64, Served::default());
        let mut next_read = 15 * second;
        let mut simulated = Vec::new();
        let minutes = 40;
        let turned = 30 * 60 * second;
        // 100 requests a second over 2,000 keys, Zipf-like; from minute 30 the hottest keys
        // are others.
        while now < minutes * 60 * second {
            let draw = random(1 << 20) as f64 / (1u64 << 20) as f64;
            let mut key = (draw.powi(4) * 2_000.0) as u64;
            if now >= turned {
                key = (key + 1_000) % 2_000;
            }
            let h = hash(key);
            let hit = random(4) > 0;
            served.requests += 1;
            served.hits += u64::from(hit);
            state.request(h, if hit { charge(key) } else { 0 }, now, served);
            if !hit {
                state.learn(h, charge(key), now);
            }
            if random(10) == 0 {
                let selects = random(2) == 0;
                state.heavy(h, charge(key), Report { selects }, now, served);
            }
            now += 10_000_000;
            if now >= next_read {
                next_read += 15 * second;
                if let Some(job) = state.crowd_job(served, now) {
                    assert!(!job.sizes.is_empty());
                    state.set_crowd(job.run());
                    simulated.push((now, state.crowd_drawn.heavy.clone()));
                }
                let _ = state.curve(served, None, now);
            }
        }
        let before: Vec<_> = simulated.iter().filter(|(at, _)| *at < turned).collect();
        assert!(before.len() >= 2, "the heavy keys crowd: {simulated:?}");
        for pair in before.windows(2) {
            assert!(
                pair[1].0 - pair[0].0 <= nanos(LONGEST) + nanos(Duration::from_secs(75)),
                "simulations {} s apart",
                (pair[1].0 - pair[0].0) / second
            );
        }
        // Once the heavy keys settled (the table fills over the first minutes), 20 minutes
        // of steady requests: read a minute apart, 20 simulations.
        let settled = before
            .iter()
            .filter(|(at, _)| *at >= 10 * 60 * second)
            .count();
        assert!(
            settled <= 8,
            "{settled} simulations in 20 minutes of steady requests"
        );
        let old = &before.last().expect("before the turn").1;
        let moved = simulated
            .iter()
            .find(|(at, heavy)| {
                *at >= turned && heavy.iter().any(|h| old.binary_search(h).is_err())
            })
            .expect("the new heavy keys simulated");
        assert!(
            moved.0 - turned <= 5 * 60 * second,
            "the new heavy keys simulated {} s after the turn",
            (moved.0 - turned) / second
        );
    }
}
