//! What an advisor knows, behind its lock: the sample, the miniatures at each size of the grid,
//! the heavy keys, the cache's aged totals — and how a request, a load and a heavy key's report
//! change them, and how a curve is read from them.
//!
//! Invariants: every key the miniatures hold is under the threshold and not heavy (once the
//! sample binds) — in the sample, or idle and left to be evicted (the unbounded miniature, at
//! most twice the sample's limit of them) — and their counts hold no traced request of a heavy
//! key; the miniatures' capacities are their sizes times the current rate (times the byte
//! luck's factor at the sizes that take it, [`super::luck`]); the grid's largest
//! size is at least twice the estimated working set (or [`LARGEST`]).

use std::collections::HashSet;
use std::time::Duration;

use super::crowd::{Crowded, Drawn};
use super::heavy::{HEAVIER_THAN_MEAN, Heavy, Report};
use super::luck::Luck;
use super::mini::{Miniature, Policy};
use super::sample::Sampler;
use super::trace::{TRACE_FROM, Traces};
use super::{Advice, AdvicePoint, AdvisorOptions, nanos};

mod age;
mod luck;
mod memo;
mod predict;

use predict::Anchor;

/// Sizes below this many times the heavy keys' bytes are crowded by them: their hit ratio
/// there is simulated ([`super::crowd`]).
const CROWDED: u64 = 4;

/// How often the byte luck's factor is settled, in nanoseconds (a walk of the sample).
const LUCK_EVERY: u64 = 1_000_000_000;

/// How long a simulation of the crowded sizes stands whatever moved: a curve read more often
/// (a scrape of `/metrics` every 15 s, the dashboard) reuses it. Past it the simulation stands
/// while little moved ([`super::crowd::Drawn::stands`]). The heavy keys' counts age over 15
/// minutes.
const CROWD_KEPT: Duration = Duration::from_secs(60);

/// The unbounded miniature keeps the values of idle keys that left the sample until it holds
/// this many values per key of the sample's limit.
const UNBOUNDED_PER_SAMPLED_KEY: usize = 2;

/// The largest size of the grid (1 TiB).
pub(super) const LARGEST: u64 = 1 << 40;

/// A predicted hit ratio's standard error at which [`AdvicePoint::confidence`] is 0.
const ERROR_AT_ZERO_CONFIDENCE: f64 = 0.05;

/// Sampled requests at a point below which its confidence is scaled down.
const REQUESTS_FOR_CONFIDENCE: f64 = 100.0;

/// Sampled values resident in a size's miniature below which its confidence is scaled down
/// (unless every key is sampled: then the miniature is the cache).
const VALUES_FOR_CONFIDENCE: f64 = 32.0;

/// A cache's totals: requests (hits and misses) and hits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Served {
    pub(crate) requests: u64,
    pub(crate) hits: u64,
}

impl Served {
    /// Requests and hits since `mark`.
    fn since(self, mark: Served) -> [f64; 2] {
        [
            self.requests.saturating_sub(mark.requests) as f64,
            self.hits.saturating_sub(mark.hits) as f64,
        ]
    }
}

pub(super) struct State {
    options: AdvisorOptions,
    pub(super) sampler: Sampler,
    policy: Policy,
    /// Ascending sizes, each twice the one before.
    minis: Vec<Miniature>,
    /// The largest size ([`LARGEST`]): never evicts for bytes. A size added to the grid when
    /// the working set grows starts as a copy of it.
    unbounded: Miniature,
    /// The heaviest keys, counted exactly and left out of the miniatures once the sample binds.
    heavy: Heavy,
    /// Sampled keys that missed and whose load has not ended yet.
    pending: HashSet<u64>,
    next_sweep: u64,
    /// When the counts halve next, and how often ([`age`]).
    next_age: u64,
    half_life: u64,
    /// Whether the sample was shed (a flood) since the last aging: its limit grows back at an
    /// aging only after a half-life without one.
    shed_since_aging: bool,
    /// The cache's request count at two recent moments, for its request rate.
    marks: [(u64, u64); 2],
    /// The cache's requests and hits (sampled or not) before the last aging, aged as the
    /// miniatures' counts are, and the cache's totals at that moment.
    aged: [f64; 2],
    aging_mark: Served,
    /// What the heavy keys do at the crowded sizes ([`super::crowd`]), what that simulation
    /// was drawn from, and when it was last found to stand.
    crowd: Vec<(u64, Crowded)>,
    crowd_drawn: Drawn,
    crowd_checked: Option<u64>,
    /// Times every value was invalidated (REFRESH CATALOG), aged as the counts are.
    clears: f64,
    /// The hot sampled keys' shares of the miniatures' counts ([`super::trace`]), traced from
    /// `trace_from` sampled requests.
    traces: Traces,
    trace_from: f64,
    /// The sampled keys' byte luck among hits, and the factor the larger miniatures'
    /// capacities take from it ([`super::luck`]); settled at most once a second, from
    /// `luck_at`.
    pub(super) luck: Luck,
    luck_at: u64,
    /// Bumped by every change a curve reads ([`memo`]).
    version: u64,
    /// The last curve read, and what it was read from.
    memo: Option<memo::Memo>,
}

impl State {
    /// The state of an advisor started at `now` whose counts halve every `half_life`
    /// nanoseconds (at least 1).
    pub(super) fn new(policy: Policy, options: AdvisorOptions, now: u64, half_life: u64) -> Self {
        let half_life = half_life.max(1);
        Self {
            sampler: Sampler::new(options.sample_keys),
            // It never evicts for bytes, so its ghost history stays empty.
            unbounded: Miniature::new(LARGEST, 1.0, &policy),
            heavy: Heavy::new((options.sample_keys / 4).max(64)),
            policy,
            minis: Vec::new(),
            pending: HashSet::new(),
            next_sweep: now.saturating_add(nanos(options.sweep_interval)),
            next_age: now.saturating_add(half_life),
            half_life,
            shed_since_aging: false,
            marks: [(now, 0), (now, 0)],
            aged: [0.0; 2],
            aging_mark: Served::default(),
            crowd: Vec::new(),
            crowd_drawn: Drawn::default(),
            crowd_checked: None,
            clears: 0.0,
            traces: Traces::default(),
            trace_from: TRACE_FROM,
            luck: Luck::new(),
            luck_at: now,
            version: 0,
            memo: None,
            options,
        }
    }

    /// A request of the key of `hash` (below the threshold when it was made) at `now`;
    /// `charge` is what its value is charged, 0 when not known yet (a miss, before its load).
    pub(super) fn request(&mut self, hash: u64, charge: u64, now: u64, served: Served) {
        self.changed();
        // Aged first: a request after an aging counts whole, and the threshold it is tested
        // against is the one that aging left (a rate that rose samples more keys).
        self.age_until(now, served);
        if charge == 0 {
            // A miss: a heavy key's requests are its hits and these.
            self.heavy.missed(hash);
        }
        if hash >= self.sampler.threshold()
            || (self.binds() && self.heavy.is_heavy(hash))
            || !self.track(hash)
        {
            return;
        }
        if charge == 0 {
            // A miss: the miniatures that miss too store the value when its load ends, as the
            // cache does. Stored now, a value would evict others before the loads begun ahead
            // of it end (a file listing loads a table's partitions at once), which the cache
            // does not do.
            self.pending.insert(hash);
        } else if self.sampler.get(hash).is_some_and(|k| k.bytes != charge) {
            self.sampler.set_bytes(hash, charge);
        }
        self.sampler.count(hash, charge != 0);
        self.grow();
        self.tick(now, served);
        let policy = self.policy;
        let hot = self
            .sampler
            .get(hash)
            .is_some_and(|key| key.requests >= self.trace_from);
        let mut trace = self.traces.get_or_start(hash, hot, self.minis.len());
        for (size, mini) in self.minis.iter_mut().enumerate() {
            let hit = mini.access(hash, charge, now, &policy);
            if let Some(trace) = trace.as_deref_mut() {
                trace.count(size, hit);
            }
        }
        let hit = self.unbounded.access(hash, charge, now, &policy);
        if let Some(trace) = trace {
            trace.count_unbounded(hit);
        }
    }

    /// The value of the key of `hash` was loaded and charged `charge` at `now`.
    pub(super) fn learn(&mut self, hash: u64, charge: u64, now: u64) {
        self.changed();
        if charge == 0 || self.sampler.get(hash).is_none() {
            return;
        }
        self.sampler.set_bytes(hash, charge);
        if self.pending.remove(&hash) {
            let policy = self.policy;
            for mini in self.all() {
                mini.learn(hash, charge, now, &policy);
            }
        }
        self.grow();
    }

    /// A report of hits of the key of `hash`, charged `charge`: a key that becomes heavy
    /// leaves the miniatures.
    pub(super) fn heavy(
        &mut self,
        hash: u64,
        charge: u64,
        report: Report,
        now: u64,
        served: Served,
    ) {
        self.changed();
        self.tick(now, served);
        self.luck.report(charge);
        if self.heavy.report(hash, charge, report) && self.binds() {
            self.counted_apart(&[hash]);
        }
    }

    /// The value of the key of `hash` was invalidated: no size holds it, and a load in flight
    /// for it does not store it (the cache fences such a load). With `held`, the key's ghost
    /// stays where there is one (the cache removed a held value by predicate).
    pub(super) fn invalidate(&mut self, hash: u64, held: bool) {
        self.changed();
        self.heavy.invalidated(hash);
        self.sampler.invalidated(hash);
        if held {
            for mini in self.all() {
                mini.invalidate_held(hash);
            }
            self.pending.remove(&hash);
        } else {
            self.forget(&[hash]);
        }
    }

    /// Every value was invalidated: no size holds any (the counts and the frequency histories
    /// stay, as the cache's do).
    pub(super) fn clear(&mut self) {
        self.changed();
        self.clears += 1.0;
        for mini in self.all() {
            mini.clear();
        }
        self.pending.clear();
    }

    /// The key of `hash` flooded the queue: heavy at once (while the sample binds; otherwise the
    /// miniatures must see all of its requests, and the sample sheds keys until it binds).
    pub(super) fn flood(&mut self, hash: u64, charge: u64) {
        self.changed();
        if self.binds() && self.heavy.promote(hash, charge) {
            self.counted_apart(&[hash]);
        }
    }

    /// Up to `n` heavy keys in the sample, hottest first, whose requests the simulation ignores
    /// (none while every key is sampled: the miniatures then hold the heavy keys too).
    pub(super) fn heavy_sampled(&self, n: usize) -> Vec<u64> {
        if !self.binds() {
            return Vec::new();
        }
        let threshold = self.sampler.threshold();
        let mut keys = self.heavy.hottest();
        keys.retain(|&hash| hash < threshold);
        keys.truncate(n);
        keys
    }

    /// The hashes of the keys in the table of heavy keys, whose misses and invalidations it
    /// counts (none while every key is sampled: the miniatures then hold them, and the curve
    /// does not count them apart).
    pub(super) fn heavy_keys(&self) -> Vec<u64> {
        if self.binds() {
            self.heavy.tracked()
        } else {
            Vec::new()
        }
    }

    /// Lowers the sample to `keys` keys at most (the advisor could not keep up with its
    /// requests); returns the new threshold.
    pub(super) fn shed(&mut self, keys: usize) -> u64 {
        self.changed();
        self.shed_since_aging = true;
        let before = self.sampler.rate();
        let left = self.sampler.shrink(keys);
        self.left(&left, before);
        self.sampler.threshold()
    }

    /// Lowers the sample to `keys` keys at most for the advisor's memory (its share of the
    /// node's advisors' bytes), and gives back the storage of what left: the miniatures move
    /// their residents into maps sized for them. The limit grows back only as far as
    /// [`State::lift`] allows.
    pub(super) fn fit(&mut self, keys: usize) {
        self.changed();
        let before = self.sampler.rate();
        let left = self.sampler.fit(keys);
        self.left(&left, before);
        let rate = self.sampler.rate();
        let policy = self.policy;
        for mini in self.all() {
            mini.compact(rate, &policy);
        }
    }

    /// Lets a sample lowered for memory ([`State::fit`]) grow back to `keys` at the next
    /// agings.
    pub(super) fn lift(&mut self, keys: usize) {
        self.sampler.lift(keys);
    }

    /// The most keys the sample may grow back to (its configured limit, or less after
    /// [`State::fit`]).
    pub(super) fn ceiling(&self) -> usize {
        self.sampler.ceiling()
    }

    /// The policy the miniatures simulate.
    pub(super) fn policy(&self) -> Policy {
        self.policy
    }

    /// Whether the sample binds (not every key is sampled): the heavy keys are then counted
    /// apart from the miniatures.
    fn binds(&self) -> bool {
        self.sampler.rate() < 1.0
    }

    /// Tracks `hash` in the sample; `false` if it left at once (the sample is full of smaller
    /// hashes).
    fn track(&mut self, hash: u64) -> bool {
        let before = self.sampler.rate();
        let left = self.sampler.track(hash);
        if left.is_empty() {
            return true;
        }
        self.left(&left, before);
        !left.contains(&hash)
    }

    /// The keys `left` the sample, whose rate was `before`: the miniatures forget them and
    /// shrink to the new rate.
    fn left(&mut self, left: &[u64], before: f64) {
        if left.is_empty() {
            return;
        }
        self.forget(left);
        if before == 1.0 {
            // The sample binds from now on: the heavy keys leave the miniatures (while every
            // key was sampled, the miniatures were exact and needed no heavy keys), with what
            // their traces say they put into the counts — those that left the sample too:
            // counted apart in full from now on, sampled or not, they would otherwise keep a
            // part of their hits in the rest's ratio (the rescaling below stands for the keys
            // that left by the average sampled key, and a heavy key is far from it). Left in,
            // at a rate of 0.75 the curve read up to 0.05 high (docs/benchmarks.md).
            let heavy = self.heavy.hottest();
            self.counted_apart(&heavy);
        }
        // The keys that left are the largest hashes: every key still sampled is below the
        // threshold.
        let threshold = self.sampler.threshold();
        self.traces.retain(|hash| hash < threshold);
        for mini in self.all() {
            // Keys that left the sample idle earlier, their values still held, go too.
            mini.keep(|key| key < threshold);
        }
        self.rescaled(before);
    }

    /// The keys of `idle` left the sample, requested too little of late
    /// ([`super::sample::IDLE_BELOW`]). The miniatures keep their values until they evict them
    /// or the values expire, as the cache keeps a value nobody reads: a key requested again is
    /// tracked anew and finds its value where it is. The unbounded miniature evicts nothing for
    /// bytes, so it would keep every value the sample ever had: once it holds more than twice
    /// the sample's limit, the values of keys no longer in the sample leave it.
    fn left_idle(&mut self, idle: &[u64]) {
        if idle.is_empty() {
            return;
        }
        for key in idle {
            self.pending.remove(key);
        }
        let sampler = &self.sampler;
        self.traces.retain(|hash| sampler.get(hash).is_some());
        if self.unbounded.len() > UNBOUNDED_PER_SAMPLED_KEY * sampler.limit() {
            self.unbounded.keep(|hash| sampler.get(hash).is_some());
        }
    }

    /// The sample's rate changed from `before` (dropped as keys left, or rose: the keys let
    /// in are new to the miniatures, their first requests miss): the miniatures follow the new
    /// rate, and the counts so far are scaled to it, so that each period weighs what its
    /// requests were (fixed-size SHARDS).
    fn rescaled(&mut self, before: f64) {
        let rate = self.sampler.rate();
        let scale = rate / before;
        self.unbounded.rescale(rate, scale);
        self.rescale_minis(scale);
        self.traces.scale(scale);
    }

    /// The keys of `heavy` are counted apart from now on: they leave the miniatures, with what
    /// their traces say they put into the miniatures' counts.
    fn counted_apart(&mut self, heavy: &[u64]) {
        for &hash in heavy {
            if let Some(shares) = self.traces.take(hash) {
                for (mini, share) in self.all().zip(shares) {
                    mini.discount(share);
                }
            }
        }
        self.forget(heavy);
    }

    fn forget(&mut self, keys: &[u64]) {
        for mini in self.all() {
            for &key in keys {
                mini.forget(key);
            }
        }
        for key in keys {
            self.pending.remove(key);
        }
    }

    /// Sets how hot a key must be to count as heavy: [`HEAVIER_THAN_MEAN`] times a sampled
    /// key's mean requests (at the least the table's own floor). A key that becomes heavy by it
    /// leaves the miniatures, as one promoted by a report does.
    pub(super) fn update_promote(&mut self) {
        self.changed();
        let mean = self.unbounded.requests() / self.sampler.len().max(1) as f64;
        let newly = self.heavy.set_promote(HEAVIER_THAN_MEAN * mean);
        if self.binds() && !newly.is_empty() {
            self.counted_apart(&newly);
        }
        // Hot keys are traced from TRACE_FROM times the mean sampled requests, and stop under
        // half of it (or when they leave the sample).
        self.trace_from = TRACE_FROM * self.sampler.mean_requests();
        let sampler = &self.sampler;
        let keep = self.trace_from / 2.0;
        self.traces
            .retain(|hash| sampler.get(hash).is_some_and(|key| key.requests >= keep));
    }

    /// Ages the counts, sweeps expired values and settles the byte luck when their time has
    /// come; returns whether that changed what a curve reads (and if so, says so: [`memo`]).
    fn tick(&mut self, now: u64, served: Served) -> bool {
        let mut changed = false;
        if now >= self.luck_at {
            self.luck_at = now.saturating_add(LUCK_EVERY);
            changed |= self.settle_luck();
        }
        if now >= self.next_sweep {
            for mini in self.all() {
                changed |= mini.sweep(now);
            }
            self.next_sweep = now.saturating_add(nanos(self.options.sweep_interval));
        }
        changed |= self.age_until(now, served);
        if changed {
            self.changed();
        }
        changed
    }

    /// Adds sizes until the largest is at least twice the working set; a new size starts as a
    /// copy of the unbounded one.
    fn grow(&mut self) {
        let working_set = self.working_set();
        loop {
            let next = match self.minis.last() {
                None => self.options.smallest.max(1),
                Some(largest) if largest.size() / 2 < working_set && largest.size() < LARGEST => {
                    largest.size() * 2
                }
                Some(_) => break,
            };
            let mut mini = Miniature::new(next, self.mini_rate(next), &self.policy);
            mini.fill_from(&self.unbounded);
            self.minis.push(mini);
            self.traces.grew();
        }
    }

    /// Bytes held by the sample, the miniatures, the heavy keys and the kept curve.
    pub(super) fn bytes(&self) -> u64 {
        self.memo.as_ref().map_or(0, memo::Memo::bytes)
            + self.sampler.bytes()
            + self.unbounded.bytes()
            + self.heavy.bytes()
            + self.crowd_drawn.bytes()
            + self.traces.bytes()
            + self.minis.iter().map(Miniature::bytes).sum::<u64>()
    }

    /// The estimated bytes of every key's value: the sample's over the rate.
    fn working_set(&self) -> u64 {
        (self.sampler.known_bytes() as f64 / self.sampler.rate()).min(u64::MAX as f64) as u64
    }

    /// The curve at `now`, for a cache that has served `served` in all and whose byte limit is
    /// `limit` now, pinned to the cache's measured hit ratio at that limit ([`Anchor`]).
    /// A curve read before from the same state, totals and limit is kept and answered again
    /// ([`memo`]).
    pub(super) fn curve(&mut self, served: Served, limit: Option<u64>, now: u64) -> Advice {
        self.tick(now, served);
        // A new minute's mark first, so that every read at one moment sees one rate.
        let last = self.marks[1].0;
        if now.saturating_sub(last) >= 60_000_000_000 {
            self.marks = [self.marks[1], (now, served.requests)];
        }
        let requests_per_minute = self.requests_per_minute(served, now);
        if let Some(kept) = self.kept_curve(served, limit, requests_per_minute) {
            return kept;
        }
        let rate = self.sampler.rate();
        let (requests, hits) = self.totals(served);
        let heavy = self.counted_heavy();
        // The request rate enters the prediction only through an invalidated heavy key.
        let uses_rate = heavy.iter().any(|k| k.invalidations > 0.0);
        let per_nano = requests_per_minute / 60e9;
        let anchor = Anchor {
            limit,
            measured: if requests > 0.0 { hits / requests } else { 0.0 },
            predicted: self.predict(limit, &heavy, requests.max(1.0), per_nano),
        };
        let working_set = self.working_set();
        let keys = self.effective_keys();
        let mut points = Vec::new();
        if requests > 0.0 {
            for mini in &self.minis {
                let predicted = self.predict(Some(mini.size()), &heavy, requests, per_nano);
                let hit_rate = anchor.correct(mini.size(), predicted);
                let error = if keys > 0.0 {
                    (hit_rate * (1.0 - hit_rate) * (1.0 - rate) / keys).sqrt()
                } else {
                    1.0
                };
                // A size whose miniature holds few sampled values is a few keys' luck.
                let resident = if self.binds() {
                    (mini.len() as f64 / VALUES_FOR_CONFIDENCE).min(1.0)
                } else {
                    1.0
                };
                let confidence = (1.0 - error / ERROR_AT_ZERO_CONFIDENCE).clamp(0.0, 1.0)
                    * (mini.requests() / REQUESTS_FOR_CONFIDENCE).min(1.0)
                    * resident;
                points.push(AdvicePoint {
                    cache_bytes: mini.size(),
                    hit_rate,
                    loads_per_minute: (1.0 - hit_rate) * requests_per_minute,
                    sampled_requests: mini.requests().round() as u64,
                    confidence,
                });
                if mini.size() >= working_set {
                    break;
                }
            }
        }
        let advice = Advice {
            points,
            sampled_keys: self.sampler.len() as u64,
            sample_limit: self.sampler.limit() as u64,
            sampling_rate: rate,
            working_set_bytes: working_set,
            requests_per_minute,
            reserved_bytes: 0,
            dropped_events: 0,
            half_life: Duration::from_nanos(self.half_life),
        };
        self.keep_curve(served, limit, requests_per_minute, uses_rate, &advice);
        advice
    }

    /// How many keys the sample is worth to a hit ratio: the sampled keys not counted apart,
    /// weighed by their requests — `(Σ r)² / Σ r²` (Kish's effective sample size of a ratio
    /// whose clusters, the keys, are of unequal size). Four thousand Zipf-popular keys decide a
    /// hit ratio about as precisely as a few hundred equally popular ones: counted as 4,000,
    /// the standard error behind `CONFIDENCE` was exceeded by half the errors measured against
    /// exact replays and four times over by one in ten (docs/benchmarks.md, "How sure a point
    /// is").
    fn effective_keys(&self) -> f64 {
        let binds = self.binds();
        let (sum, squares) = self
            .sampler
            .keys()
            .filter(|&(hash, _)| !(binds && self.heavy.is_heavy(hash)))
            .fold((0.0, 0.0), |(sum, squares), (_, key)| {
                (sum + key.requests, squares + key.requests * key.requests)
            });
        if squares > 0.0 {
            sum * sum / squares
        } else {
            0.0
        }
    }

    /// Every miniature, the unbounded one last.
    fn all(&mut self) -> impl Iterator<Item = &mut Miniature> {
        self.minis
            .iter_mut()
            .chain(std::iter::once(&mut self.unbounded))
    }
}

/// Pseudo-random draws below a modulus (xorshift64), for the state's tests.
#[cfg(test)]
pub(super) fn draws(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |modulo: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % modulo
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slot::NEVER;

    fn state() -> State {
        let policy = Policy {
            count_capacity: 1_000,
            ttl_nanos: NEVER,
            after_access: false,
            margin_nanos: 0,
        };
        State::new(policy, AdvisorOptions::default(), 0, u64::MAX)
    }

    /// Keys of equal popularity count one each; a sample that one key dominates is worth
    /// little more than that key.
    #[test]
    fn the_sample_is_worth_its_keys_weighed_by_their_requests() {
        let served = Served::default();
        let mut even = state();
        for hash in 1..=4 {
            even.request(hash, 100, 1, served);
        }
        assert!((even.effective_keys() - 4.0).abs() < 1e-9);
        let mut skewed = state();
        for hash in 1..=4 {
            skewed.request(hash, 100, 1, served);
        }
        for _ in 0..9 {
            skewed.request(1, 100, 2, served);
        }
        // (10 + 1 + 1 + 1)² / (100 + 1 + 1 + 1)
        assert!((skewed.effective_keys() - 169.0 / 103.0).abs() < 1e-9);
        assert_eq!(
            state().effective_keys(),
            0.0,
            "no requests: nothing to rest on"
        );
    }
}
