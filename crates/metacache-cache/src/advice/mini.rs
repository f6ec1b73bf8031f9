//! One miniature simulation (Waldspurger et al., "Cache Modeling and Optimization using
//! Miniature Simulations", ATC 2017): the cache's own policy, run on the sampled keys only, with
//! its byte capacity scaled by the sampling rate. Its hit ratio on the sampled requests
//! estimates the real cache's at the full size.
//!
//! "The cache's own policy" is what a managed cache does, step for step: quick_cache's
//! CLOCK-PRO with its ghost history (the same shard code, one shard), the weight floor that
//! makes the count capacity bind (`crate::scale`), the frequency contest when a newcomer
//! displaces hot values and a newcomer seen before entering referenced (`crate::frequency`,
//! the same [`FrequencyAdmission`], started at the first eviction), values
//! expiring after write or after access, the periodic sweep of expired values, and values
//! refreshed ahead of their TTL when refresh-ahead is on. Values are charged what the real
//! cache charged the same key; a value that the real cache at the full size could not hold is
//! never held.
//!
//! Invariant: the map holds only keys under the sample's threshold (sampled keys, and keys
//! that left the sample idle, held until evicted), and its capacity is `size × rate`.

use std::cell::Cell;

use quick_cache::unsync::Cache;
use quick_cache::{DefaultHashBuilder, Lifecycle, OptionsBuilder, Weighter};

use crate::frequency::FrequencyAdmission;
use crate::scale::BYTES_PER_EXPECTED_VALUE;
use crate::slot::NEVER;

/// quick_cache's share of a shard its hot ring may fill: the heaviest value a shard holds; the
/// rest is the cold ring newcomers enter.
pub(super) const HOT_ALLOCATION: f64 = 0.97;

/// How the simulated cache is configured, shared by every miniature of one advisor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Policy {
    /// The count capacity (`capacity`).
    pub(crate) count_capacity: u64,
    /// The TTL in nanoseconds; [`NEVER`] when values never expire.
    pub(crate) ttl_nanos: u64,
    /// Whether a read renews the TTL (`Expiry::AfterAccess`).
    pub(crate) after_access: bool,
    /// Refresh-ahead: how long before its TTL a value read is renewed (0: off).
    pub(crate) margin_nanos: u64,
}

/// A simulated resident: its weight, when it expires, whether it won a contest.
#[derive(Clone)]
struct MiniValue {
    charge: u64,
    weight: u64,
    deadline: Cell<u64>,
    defended: Cell<bool>,
}

#[derive(Clone, Copy)]
struct MiniWeighter;

impl Weighter<u64, MiniValue> for MiniWeighter {
    fn weight(&self, _: &u64, value: &MiniValue) -> u64 {
        value.weight
    }
}

/// Holds back the hot (or once defended) values an insertion displaces, as the real cache's
/// eviction hook does for a contest.
#[derive(Clone, Copy)]
struct HoldDisplaced;

/// The values one insertion displaced that are contested, and whether it evicted any.
#[derive(Default)]
struct Displaced {
    held: Vec<(u64, MiniValue)>,
    evicted: bool,
}

impl Lifecycle<u64, MiniValue> for HoldDisplaced {
    type RequestState = Displaced;

    fn on_evict_hot(&self, state: &mut Displaced, key: u64, value: MiniValue) {
        state.evicted = true;
        state.held.push((key, value));
    }

    fn on_evict_cold(&self, state: &mut Displaced, key: u64, value: MiniValue) {
        state.evicted = true;
        if value.defended.get() {
            state.held.push((key, value));
        }
    }
}

type Map = Cache<u64, MiniValue, MiniWeighter, DefaultHashBuilder, HoldDisplaced>;

/// The policy at one size, on the sampled keys.
pub(super) struct Miniature {
    /// The real size this miniature stands for, in bytes.
    size: u64,
    /// The least weight of a value (`⌈size / capacity⌉`, as `Scale` weighs).
    quantum: u64,
    map: Map,
    frequency: FrequencyAdmission,
    /// The sampling rate, while the frequency history does not exist; the rate it was
    /// started at, once it does.
    history_rate: f64,
    /// The words of the real cache's sketch, once the history exists: `4 × residents / rate`
    /// at its start, rounded to a power of two, as the real cache sizes its own at its first
    /// eviction. The real sketch does not change with the sample's rate; the miniature's is
    /// kept its share of it ([`Miniature::rescale`]).
    real_words: f64,
    /// Sampled requests count this much in the history's aging, once it exists: the real
    /// sketch halves every ten requests per word; the miniature's, of `words` words for a
    /// `rate` share of the requests, counts each sampled request `words / (rate ×
    /// real_words)` so that it halves after the same share of the real requests.
    aging: Option<f64>,
    /// Sampled requests seen, each counted at the aging of its time: the clock the sketch's
    /// halvings follow (as the real cache counts its own requests).
    clock: f64,
    /// Sampled requests that hit and missed, halved as they age.
    pub(super) hits: f64,
    pub(super) misses: f64,
    /// No resident expires before this.
    earliest_deadline: u64,
}

impl Miniature {
    /// A miniature of the cache at `size` bytes, for keys sampled at `rate`. Its ghost history
    /// is sized as the real cache's map at `size` sizes its own (half the values it expects),
    /// scaled by the rate — not bounded by the keys sampled so far: a size added while the
    /// sample was still filling kept a ghost history up to four times too short ever after, and
    /// with it fewer values recognised on their return (Zipf 0.6, 64–256 MiB: 0.02–0.07 under
    /// the exact curve). quick_cache allocates nothing for it up front.
    pub(super) fn new(size: u64, rate: f64, policy: &Policy) -> Self {
        Self::expecting(size, rate, policy, f64::INFINITY)
    }

    /// The cache itself at `size` bytes (rate 1), for a run that stores at most `values`
    /// values: its map is sized for no more (`super::crowd`).
    pub(super) fn full_scale(size: u64, policy: &Policy, values: usize) -> Self {
        Self::expecting(size, 1.0, policy, values as f64)
    }

    fn expecting(size: u64, rate: f64, policy: &Policy, most: f64) -> Self {
        let capacity = scaled(size, rate);
        let expected = expected_values(capacity, rate, policy, most);
        Self {
            size,
            quantum: size.div_ceil(policy.count_capacity.max(1)).max(1),
            map: new_map(capacity, expected),
            frequency: FrequencyAdmission::default(),
            history_rate: rate,
            real_words: 0.0,
            aging: None,
            clock: 0.0,
            hits: 0.0,
            misses: 0.0,
            earliest_deadline: NEVER,
        }
    }

    /// The real size this miniature stands for.
    /// The byte capacity it simulates: its size times the rate it was last scaled by.
    #[cfg(test)]
    pub(super) fn capacity(&self) -> u64 {
        self.map.capacity()
    }

    pub(super) fn size(&self) -> u64 {
        self.size
    }

    /// A request of `key` at `now`. `charge` is what its value is charged (0 when not known
    /// yet: a miss then waits for [`Miniature::learn`] to store it). Returns whether it hit.
    pub(super) fn access(&mut self, key: u64, charge: u64, now: u64, policy: &Policy) -> bool {
        self.clock += self.aging.unwrap_or(1.0);
        if self.find(key, now, policy) {
            self.frequency.record(&key);
            self.hits += 1.0;
            return true;
        }
        self.misses += 1.0;
        if charge != 0 {
            self.store(key, charge, now, policy);
        }
        false
    }

    /// The value of `key` was loaded, charged `charge`: stored if this miniature missed it.
    pub(super) fn learn(&mut self, key: u64, charge: u64, now: u64, policy: &Policy) {
        if self.map.peek(&key).is_none() {
            self.store(key, charge, now, policy);
        }
    }

    fn find(&mut self, key: u64, now: u64, policy: &Policy) -> bool {
        let Some(value) = self.map.get(&key) else {
            return false;
        };
        let deadline = value.deadline.get();
        if deadline == NEVER {
            return true;
        }
        if now >= deadline {
            self.map.remove(&key);
            return false;
        }
        if policy.after_access || now.saturating_add(policy.margin_nanos) >= deadline {
            // Read renews it; or refresh-ahead reloads it before it expires.
            value.deadline.set(now.saturating_add(policy.ttl_nanos));
        }
        true
    }

    /// The real cache's store of a new value: insert (quick_cache evicts for it), then the
    /// frequency contest if it displaced hot values.
    fn store(&mut self, key: u64, charge: u64, now: u64, policy: &Policy) {
        let capacity = self.map.capacity();
        if charge as f64 > self.size as f64 * HOT_ALLOCATION {
            return; // refused at the full size as well
        }
        // A value the full-size cache holds but the scaled one could not is held at the most
        // the scaled shard takes (with few sampled values at a small size, a sampling artefact).
        let heaviest = ((capacity as f64 * HOT_ALLOCATION) as u64).max(1);
        let weight = charge.max(self.quantum).min(heaviest);
        let deadline = if policy.ttl_nanos == NEVER {
            NEVER
        } else {
            now.saturating_add(policy.ttl_nanos)
        };
        self.earliest_deadline = self.earliest_deadline.min(deadline);
        let value = MiniValue {
            charge,
            weight,
            deadline: Cell::new(deadline),
            defended: Cell::new(false),
        };
        let seen = self.frequency.seen(&key);
        let mut displaced = Displaced::default();
        self.map.insert_with_lifecycle(key, value, &mut displaced);
        let admitted = displaced.held.is_empty() || self.contest(key, displaced.held);
        if displaced.evicted {
            self.frequency.start(self.map.len());
            self.started(self.map.len());
        }
        self.frequency.record(&key);
        if admitted && seen {
            let _ = self.map.get(&key);
        }
    }

    /// Scales the history's aging once it exists (started with `residents` values held).
    fn started(&mut self, residents: usize) {
        let words = self.frequency.words();
        if self.aging.is_none() && words > 0 {
            let real = (residents as f64 / self.history_rate).ceil() as usize;
            self.real_words = FrequencyAdmission::words_for(real) as f64;
            self.aging = Some(words as f64 / (self.history_rate * self.real_words));
        }
    }

    /// Whether `key`, whose insertion displaced `displaced`, stays.
    fn contest(&mut self, key: u64, displaced: Vec<(u64, MiniValue)>) -> bool {
        let victims = displaced.iter().map(|(victim, _)| victim);
        let accesses = self.clock as u64;
        let residents = self.map.len();
        let admitted = self.frequency.admits(&key, victims, residents, accesses);
        self.started(residents);
        if admitted || self.map.remove(&key).is_none() {
            return true;
        }
        for (victim, value) in displaced {
            if victim != key && self.map.peek(&victim).is_none() {
                value.defended.set(true);
                self.map.insert(victim, value);
            }
        }
        false
    }

    /// Removes the values expired at `now`, as the governor's periodic sweep does; returns
    /// whether any went.
    pub(super) fn sweep(&mut self, now: u64) -> bool {
        if now < self.earliest_deadline {
            return false;
        }
        let before = self.map.len();
        let earliest = Cell::new(NEVER);
        self.map.retain(|_, value| {
            let deadline = value.deadline.get();
            if deadline > now {
                earliest.set(earliest.get().min(deadline));
            }
            deadline > now
        });
        self.earliest_deadline = earliest.get();
        self.map.len() != before
    }

    /// Whether a value of `key` is held (expired or not).
    pub(super) fn holds(&self, key: u64) -> bool {
        self.map.peek(&key).is_some()
    }

    /// The key left the sample, or it was invalidated (as `remove` does it: its ghost goes too).
    pub(super) fn forget(&mut self, key: u64) {
        self.map.remove(&key);
    }

    /// Keeps the values of the keys `keep` accepts (as `retain` does it: ghosts stay). For the
    /// values of idle keys that left the sample (`super::sample::IDLE_BELOW`), kept until they
    /// are evicted, once they are no longer wanted.
    pub(super) fn keep(&mut self, keep: impl Fn(u64) -> bool) {
        self.map.retain(|&key, _| keep(key));
    }

    /// The key's held value was invalidated by a predicate (as `retain` does it: a ghost
    /// stays, and a key returning after its value was evicted is still recognised).
    pub(super) fn invalidate_held(&mut self, key: u64) {
        self.map.remove_if(&key, |_| true);
    }

    /// Every value was invalidated: removed as the cache removes them (`retain`, which leaves
    /// the ghost history as it is).
    pub(super) fn clear(&mut self) {
        self.map.retain(|_, _| false);
        self.earliest_deadline = NEVER;
    }

    /// The sampling rate changed to `rate`: the capacity follows (evicting as needed when it
    /// dropped), and the counts so far are scaled by `counts` (the new rate over the old).
    ///
    /// A rate that dropped keeps the frequency history: the real cache's is the same
    /// whatever the sample, so the miniature's is folded to the words its share of it calls
    /// for (halved while it has twice as many or more: [`FrequencyAdmission::fold_to`]) and
    /// ages on the real one's schedule. Starting it afresh at each halving of the rate, as
    /// before, left the miniatures without a history for a while after each of the drops of a
    /// sample filling up. A rate that rose to more than twice what the table was sized for
    /// (keys left idle, the sample grew back) starts it afresh at the next eviction, sized for
    /// the residents then: a table cannot grow, and one a quarter of its share or less
    /// mistook the newly sampled keys for frequent ones (the trace whose keys become 25 times
    /// fewer, kept small: MAE 0.029 in a run where the restart gave 0.0075).
    pub(super) fn rescale(&mut self, rate: f64, counts: f64) {
        self.map.set_capacity(scaled(self.size, rate));
        let share = rate * self.real_words;
        if self.aging.is_none() || self.frequency.words() as f64 * 2.0 < share {
            self.frequency = FrequencyAdmission::default();
            self.history_rate = rate;
            self.real_words = 0.0;
            self.aging = None;
        } else {
            let words = self.frequency.fold_to(share) as f64;
            self.aging = Some(words / share);
        }
        self.hits *= counts;
        self.misses *= counts;
    }

    /// Halves the counts, so that old requests weigh less than new ones.
    pub(super) fn age(&mut self) {
        self.hits /= 2.0;
        self.misses /= 2.0;
    }

    /// Sampled requests counted (after aging).
    pub(super) fn requests(&self) -> f64 {
        self.hits + self.misses
    }

    /// The predicted hit ratio at this size.
    pub(super) fn hit_ratio(&self) -> f64 {
        let requests = self.requests();
        if requests > 0.0 {
            self.hits / requests
        } else {
            0.0
        }
    }

    /// Sampled values resident.
    pub(super) fn len(&self) -> usize {
        self.map.len()
    }

    /// Bytes this miniature holds: its map and its frequency sketch.
    pub(super) fn bytes(&self) -> u64 {
        (self.map.memory_used().total() + self.frequency.bytes()) as u64
    }

    /// Takes a key's share out of the counts: it left the miniatures to be counted apart.
    pub(super) fn discount(&mut self, share: super::trace::Share) {
        self.hits = (self.hits - share.hits).max(0.0);
        self.misses = (self.misses - share.misses).max(0.0);
    }

    /// Gives back the storage of values that left when the sample was lowered for the
    /// advisor's memory (quick_cache's map keeps its allocation as values go), by moving the
    /// residents into a new map, in the order the old one lists them, with a ghost history
    /// sized for the sampling `rate` now (as [`Miniature::new`] sizes it). The counts, the
    /// frequency history and the capacity stay; the ghosts and which residents were hot do
    /// not (the residents start cold, as values do after a rescaling).
    pub(super) fn compact(&mut self, rate: f64, policy: &Policy) {
        let capacity = self.map.capacity();
        let expected = expected_values(capacity, rate, policy, f64::INFINITY);
        let old = std::mem::replace(&mut self.map, new_map(capacity, expected));
        for (key, value) in old.iter() {
            let mut displaced = Displaced::default();
            self.map
                .insert_with_lifecycle(*key, value.clone(), &mut displaced);
        }
    }

    /// Copies the residents of `larger` and its counts, so that a size added later starts
    /// warm. `larger` is the advisor's unbounded miniature: what it holds, a cache of at least
    /// the working set holds too.
    pub(super) fn fill_from(&mut self, larger: &Miniature) {
        for (key, value) in larger.map.iter() {
            let mut displaced = Displaced::default();
            let deadline = value.deadline.get();
            self.map.insert_with_lifecycle(
                *key,
                MiniValue {
                    charge: value.charge,
                    weight: value.charge.max(self.quantum),
                    deadline: Cell::new(deadline),
                    defended: Cell::new(false),
                },
                &mut displaced,
            );
            self.earliest_deadline = self.earliest_deadline.min(deadline);
        }
        self.hits = larger.hits;
        self.misses = larger.misses;
        self.clock = larger.clock;
    }
}

/// The values a miniature of `capacity` scaled bytes at `rate` expects to hold (at most
/// `most`): what sizes its ghost history, as the real cache's map sizes its own.
fn expected_values(capacity: u64, rate: f64, policy: &Policy, most: f64) -> usize {
    let count = (policy.count_capacity as f64 * rate).max(1.0);
    (capacity as f64 / BYTES_PER_EXPECTED_VALUE as f64)
        .min(most)
        .clamp(1.0, count) as usize
}

/// A miniature's map of `capacity` weight, sized for `expected` values.
fn new_map(capacity: u64, expected: usize) -> Map {
    let options = OptionsBuilder::new()
        .estimated_items_capacity(expected)
        .weight_capacity(capacity)
        .build();
    match options {
        Ok(options) => Map::with_options(
            options,
            MiniWeighter,
            DefaultHashBuilder::default(),
            HoldDisplaced,
        ),
        Err(_) => Map::with(
            expected,
            capacity,
            MiniWeighter,
            DefaultHashBuilder::default(),
            HoldDisplaced,
        ),
    }
}

/// The scaled byte capacity of `size` at `rate` (at least 1).
fn scaled(size: u64, rate: f64) -> u64 {
    ((size as f64 * rate).round() as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> Policy {
        Policy {
            count_capacity: 1_000_000,
            ttl_nanos: NEVER,
            after_access: false,
            margin_nanos: 0,
        }
    }

    #[test]
    fn a_miniature_at_rate_one_is_the_cache_itself() {
        let p = policy();
        let mut mini = Miniature::new(10_000, 1.0, &p);
        assert!(!mini.access(1, 1000, 0, &p));
        assert!(mini.access(1, 1000, 1, &p));
        // Twenty 1,000-byte values do not fit in 10,000 bytes: a loop over them misses.
        for round in 0..3 {
            for key in 100..120 {
                mini.access(key, 1000, round, &p);
            }
        }
        assert!(mini.len() <= 10);
        assert!(mini.hit_ratio() < 0.5);
    }

    #[test]
    fn an_invalidated_value_misses_at_its_next_request() {
        let p = policy();
        let mut mini = Miniature::new(1 << 20, 1.0, &p);
        for key in 1..=3 {
            mini.access(key, 100, 0, &p);
        }
        mini.forget(2);
        assert!(mini.access(1, 100, 1, &p));
        assert!(!mini.access(2, 100, 1, &p), "invalidated");
        mini.clear();
        assert_eq!(mini.len(), 0);
        assert!(!mini.access(1, 100, 2, &p), "every value invalidated");
        assert!(mini.access(1, 100, 3, &p), "stored again");
    }

    #[test]
    fn values_expire_and_the_sweep_frees_them() {
        let p = Policy {
            ttl_nanos: 100,
            ..policy()
        };
        let mut mini = Miniature::new(1 << 20, 1.0, &p);
        mini.access(1, 600, 0, &p);
        assert!(mini.access(1, 600, 50, &p), "fresh");
        assert!(!mini.access(1, 600, 100, &p), "expired after write");
        mini.access(2, 600, 100, &p);
        mini.sweep(250);
        assert_eq!(mini.len(), 0);
    }

    #[test]
    fn a_value_too_large_for_the_full_size_is_never_held() {
        let p = policy();
        let mut mini = Miniature::new(1000, 1.0, &p);
        mini.access(1, 5000, 0, &p);
        assert!(!mini.access(1, 5000, 1, &p));
        assert_eq!(mini.len(), 0);
    }

    #[test]
    fn the_frequency_history_outlives_a_drop_of_the_rate_folded_to_its_share() {
        let p = policy();
        let mut mini = Miniature::new(100_000, 1.0, &p);
        // 100-byte values, five times as many as fit: the history starts at the first
        // eviction, sized as the real cache's (the miniature is the cache at rate 1).
        for key in 0..5_000u64 {
            mini.access(key, 100, 0, &p);
        }
        for _ in 0..5 {
            mini.access(7, 100, 1, &p);
        }
        let words = mini.frequency.words();
        assert!(words >= 1024, "{words} words");
        assert_eq!(mini.aging, Some(1.0));
        mini.rescale(0.25, 0.25);
        assert_eq!(mini.frequency.words(), words / 4, "folded to its share");
        assert_eq!(
            mini.aging,
            Some(1.0),
            "halving on the real cache's schedule"
        );
        assert!(mini.frequency.seen(&7u64), "the history kept");
        // A rate that rises cannot grow the table: its requests count less instead, up to
        // twice the share it was sized for; past that the history starts afresh.
        mini.rescale(0.5, 2.0);
        assert_eq!(mini.frequency.words(), words / 4);
        assert_eq!(mini.aging, Some(0.5));
        mini.rescale(1.0, 2.0);
        assert_eq!(mini.frequency.bytes(), 0, "restarted");
        assert_eq!(mini.aging, None);
        for key in 10_000..15_000u64 {
            mini.access(key, 100, 2, &p);
        }
        assert_eq!(
            mini.frequency.words(),
            words,
            "sized for the residents again"
        );
    }

    #[test]
    fn an_unknown_charge_is_stored_when_it_is_learned() {
        let p = policy();
        let mut mini = Miniature::new(1 << 20, 1.0, &p);
        assert!(!mini.access(7, 0, 0, &p));
        assert_eq!(mini.len(), 0);
        mini.learn(7, 700, 0, &p);
        assert!(mini.access(7, 0, 1, &p));
    }
}
