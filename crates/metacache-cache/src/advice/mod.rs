//! The quota advisor: for one managed cache, the hit ratio it would have at other byte limits
//! — a miss-ratio curve — from a bounded sample of its requests.
//!
//! # How
//! - **Spatial sampling** ([`sample`]): a key is in the sample when its hash is below a
//!   threshold, so every request of a sampled key is seen. The sample holds at most
//!   [`AdvisorOptions::sample_keys`] keys; the threshold drops as it fills (fixed-size SHARDS).
//! - **Miniature simulations** ([`mini`]): the cache's own policy — not an LRU stack — run on
//!   the sampled requests at each size of a geometric grid, with the capacity scaled by the
//!   sampling rate. The real cache is CLOCK-PRO with ghosts, frequency admission, byte weights
//!   with a count floor and TTLs; an LRU curve would predict another cache.
//! - **TTL-aware**: the miniatures expire values as the cache does (after write or after access,
//!   renewed by refresh-ahead, swept periodically), so a size beyond what live values need
//!   predicts no more hits.
//! - **Recent**: the counts halve every half-life: [`AdvisorOptions::half_life`], else the
//!   node's ([`crate::MemoryGovernor::set_advisor_half_life`]), read at each drain so that a
//!   change applies to running caches from their last aging.
//!
//! - **Heavy keys counted apart** ([`heavy`]): one hit in 64 of each thread's hits reports its
//!   value, and the keys reported most are counted apart from the sample, whose error they
//!   would dominate (one half of the reports picks them, the other counts them). A sampled
//!   key that becomes heavy takes out of the miniatures' counts what it put there ([`trace`]).
//! - **Pinned** to the hit ratio the cache measures at its own limit.
//! - **Invalidations** are events too: a value invalidated is gone at every size, and a
//!   `Clear` (every value invalidated) is never lost to a full queue. A predicate's
//!   invalidations (any number of keys at once) are applied after a drain, not queued.
//!
//! # Cost
//! A hit costs the advisor one load (is the key sampled?) and a test of its thread's hit number;
//! it writes nothing into the value. A hit of a sampled key, a report, a miss and a load push an
//! event into a bounded queue ([`QUEUE_EVENTS`]; reports into their own, [`REPORT_EVENTS`]).
//! The simulation runs off the request path: the governor's advisor thread drains every queue
//! every [`DRAIN_INTERVAL`] (and reading the curve drains first). A queue that fills drops
//! events, and the next drain doubles its room, up to [`MAX_QUEUE_EVENTS`]: a drain that came
//! late (a busy machine, a burst of requests) loses nothing the next time. A queue that
//! overflows at its largest, two drains in a row, lowers the sampling rate until the advisor
//! keeps up — it sheds keys, never a key's requests — unless one key floods it: that key is
//! made heavy, and the hits of the hottest heavy sampled keys are not queued ([`MUTED_KEYS`]).
//! Memory — queue, sample, miniatures, heavy keys, traces, and the sampled keys the cache keeps
//! for predicate invalidations ([`Advisor::hold_outside`]) — is bounded by the sample size and
//! charged to the node's ledger (not the catalog's: the cache's map sizes itself by the
//! catalog's limits). The node's advisors share their level of the ledger: the governor caps
//! each at a fair level ([`crate::advisors_level`]) and an advisor above its cap lowers its
//! sample — keeping the smallest hashes, as shedding does — and moves its miniatures into maps
//! sized for what is left ([`Advisor::set_cap`]). A refused reservation lowers the sample to
//! what is reserved already; if even the least sample does not fit, the advisor stops, holding
//! nothing, until the governor restarts it ([`Advisor::restart`]). A node still short after
//! every value was reclaimed stops it for good.
//!
//! # Invariants
//! - Every key the miniatures hold is in the sample (see [`state`]).
//! - `reserved` bytes are held in the advisor's budget and released when it retires, stops
//!   for its memory or drops; after a drain they cover what it holds, within a CHUNK of it
//!   (none beyond it above its cap).

mod crowd;
mod drain;
mod heavy;
mod luck;
mod mini;
mod queue;
mod sample;
mod state;
mod trace;

use std::hash::{BuildHasher, Hash};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

use metacache_ledger::Budget;
use parking_lot::Mutex;
use quick_cache::DefaultHashBuilder;

pub(crate) use heavy::Report;
pub(crate) use mini::Policy;
use queue::{Event, Queue};
pub(crate) use state::Served;
use state::State;

use crate::clock::nanos;
use crate::slot::NEVER;

/// How an advisor samples and forgets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdvisorOptions {
    /// The most keys in the sample (fixed-size SHARDS).
    pub sample_keys: usize,
    /// Counts halve after this long, so the curve describes recent requests; `None` follows
    /// the node's half-life ([`crate::MemoryGovernor::set_advisor_half_life`], node key
    /// `external_meta_cache_advisor_half_life_seconds`, [`DEFAULT_HALF_LIFE`] by default).
    pub half_life: Option<Duration>,
    /// How often the miniatures drop expired values (the governor's sweep interval).
    pub sweep_interval: Duration,
    /// The smallest size of the grid, in bytes; each next size doubles it.
    pub smallest: u64,
}

impl Default for AdvisorOptions {
    fn default() -> Self {
        Self {
            sample_keys: 4096,
            half_life: None,
            sweep_interval: Duration::from_secs(30),
            smallest: 1 << 10,
        }
    }
}

/// One point of a miss-ratio curve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdvicePoint {
    /// The byte limit of the cache.
    pub cache_bytes: u64,
    /// The predicted ratio of hits to requests at that limit.
    pub hit_rate: f64,
    /// The predicted loads per minute at the current request rate.
    pub loads_per_minute: f64,
    /// The sampled requests the prediction rests on (after aging).
    pub sampled_requests: u64,
    /// 0–1: 1 minus the estimated standard error of `hit_rate` over 0.05, scaled down below
    /// 100 sampled requests and below 32 sampled values resident at this size.
    pub confidence: f64,
}

/// A cache's miss-ratio curve and what it rests on.
#[derive(Debug, Clone, PartialEq)]
pub struct Advice {
    /// Ascending sizes of a doubling grid, up to the first at least the working set.
    pub points: Vec<AdvicePoint>,
    /// Keys in the sample now.
    pub sampled_keys: u64,
    /// The most keys the sample holds: lower than configured after a flood the advisor could
    /// not keep up with, doubling back at each half-life without one.
    pub sample_limit: u64,
    /// The sampling rate, in (0, 1].
    pub sampling_rate: f64,
    /// Estimated bytes of every key's value (the sample's known bytes over the rate).
    pub working_set_bytes: u64,
    /// Requests per minute of the cache, over the last one to two minutes.
    pub requests_per_minute: f64,
    /// Bytes the advisor holds in the ledger.
    pub reserved_bytes: u64,
    /// Events dropped because the advisor's queue was full (each time, the queue grew or the
    /// sample shrank).
    pub dropped_events: u64,
    /// How long the counts take to halve: the curve describes the requests of the last few
    /// half-lives.
    pub half_life: Duration,
}

/// The half-life of the counts of a node's advisors unless set otherwise.
pub const DEFAULT_HALF_LIFE: Duration = Duration::from_secs(15 * 60);

/// Events a queue holds between two drains at first; more are dropped, and the queue grows.
pub const QUEUE_EVENTS: usize = 512;

/// Events a queue holds between two drains at the most: an overflow at this size lowers the
/// rate. 8,192 events are 256 KiB (twice: the drained buffer is kept for the next drain),
/// charged like the rest of the advisor.
pub const MAX_QUEUE_EVENTS: usize = 16 * QUEUE_EVENTS;

/// Heavy-key reports a queue holds between two drains, apart from the other events: a flood of
/// requests of one key (which fills the queue) must not starve the reports that make it heavy
/// and so stop the flood ([`MUTED_KEYS`]). More are dropped, which sheds nothing: reports are a
/// sample already.
const REPORT_EVENTS: usize = 128;

/// Heavy sampled keys whose hits are not queued: once the sample binds, the simulation ignores a
/// heavy key's requests (the table of heavy keys counts it), so queueing each hit of a hot
/// sampled key would only fill the queue and make the sample shed other keys.
const MUTED_KEYS: usize = 16;

/// Words of the filter of heavy keys' hashes the invalidation path reads (8,192 bits: with the
/// table's 1,024 keys at most, one invalidation of another key in eight is queued needlessly).
const HEAVY_FILTER_WORDS: usize = 128;

/// The fewest keys shedding leaves in a sample.
const MIN_SAMPLE_KEYS: usize = 64;

/// How often the governor's advisor thread drains every advisor's queue.
pub const DRAIN_INTERVAL: Duration = Duration::from_millis(25);

/// Bytes reserved at a time, so that the ledger is not touched on every drain.
const CHUNK: u64 = 16 << 10;

/// Bytes of the advisor itself besides its queue, sample and miniatures (its filter of heavy
/// keys included).
const FIXED_BYTES: u64 = 512 + 8 * HEAVY_FILTER_WORDS as u64;

/// The simulation and its reservation, behind the advisor's lock.
struct Simulation {
    state: State,
    /// Bytes held in the budget.
    reserved: u64,
    /// The queue's other buffers: swapped with the queue's at each drain.
    spare: Vec<Event>,
    spare_reports: Vec<Event>,
    /// Events dropped in all (reported by the advice).
    dropped: u64,
    /// Whether the last drain found the queue overflowed at its largest: the sample shrinks
    /// only when two drains in a row do, so that a burst (a cache built and read at once,
    /// before its first drain set the rate) does not shrink it for good.
    overflowed: bool,
    /// The most events one drain took since `review_at` was set, and when the queue's room is
    /// reviewed next (`None`: at the next drain, a window starts; [`queue::QUEUE_REVIEW`]).
    busiest: usize,
    review_at: Option<u64>,
}

/// One cache's advisor.
pub(crate) struct Advisor {
    /// Set when the advisor stops: nothing is queued any more, nothing is held.
    retired: AtomicBool,
    /// Set when it stopped because the ledger refused its memory: the governor restarts it
    /// ([`Advisor::restart`]) once the node's advisors have room for its share.
    starved: AtomicBool,
    /// What it held, its sample lowered as far as it goes, when the ledger refused it: the
    /// governor restarts it only for a share of at least this much (or it would stop again at
    /// once).
    needs: AtomicU64,
    /// The most bytes the governor lets it hold: its share of the node's advisors' memory
    /// (`u64::MAX` while that share does not bind). Above it, the sample is lowered.
    cap: AtomicU64,
    options: AdvisorOptions,
    hasher: DefaultHashBuilder,
    /// The sample's threshold, readable without a lock.
    threshold: AtomicU64,
    /// Hashes of the hottest heavy sampled keys ([`MUTED_KEYS`]; `u64::MAX` for none, a hash
    /// no sample holds), set at each drain: their hits are not queued.
    muted: [AtomicU64; MUTED_KEYS],
    /// How many of `muted` are set (the hit path looks at no more).
    muted_len: AtomicUsize,
    /// A filter of the hashes of the table of heavy keys, set at each drain: a miss or an
    /// invalidation of a key not sampled is queued only if the key may be in the table
    /// ([`heavy`] counts their misses and invalidations).
    heavy_filter: [AtomicU64; HEAVY_FILTER_WORDS],
    /// Bytes the cache holds on the advisor's behalf ([`Advisor::hold_outside`]).
    outside: AtomicU64,
    budget: Arc<Budget>,
    /// The counts' half-life in nanoseconds: the options', else the node's (shared, changes at
    /// runtime), read at each drain.
    half_life: Arc<AtomicU64>,
    queue: Mutex<Queue>,
    simulation: Mutex<Simulation>,
}

impl Advisor {
    /// An advisor for a cache of `policy`, charged to `budget`, starting at `now`; its counts
    /// halve every `options.half_life`, else every `node_half_life` nanoseconds as it is at
    /// each drain.
    pub(crate) fn new(
        policy: Policy,
        options: AdvisorOptions,
        budget: Arc<Budget>,
        now: u64,
        node_half_life: &Arc<AtomicU64>,
    ) -> Self {
        let half_life = match options.half_life {
            Some(fixed) => Arc::new(AtomicU64::new(nanos(fixed))),
            None => Arc::clone(node_half_life),
        };
        Self {
            retired: AtomicBool::new(false),
            starved: AtomicBool::new(false),
            needs: AtomicU64::new(0),
            cap: AtomicU64::new(u64::MAX),
            options,
            hasher: DefaultHashBuilder::default(),
            threshold: AtomicU64::new(u64::MAX),
            muted: std::array::from_fn(|_| AtomicU64::new(u64::MAX)),
            muted_len: AtomicUsize::new(0),
            heavy_filter: std::array::from_fn(|_| AtomicU64::new(0)),
            outside: AtomicU64::new(0),
            budget,
            simulation: Mutex::new(Simulation {
                state: State::new(policy, options, now, half_life.load(Relaxed)),
                reserved: 0,
                spare: Vec::new(),
                spare_reports: Vec::new(),
                dropped: 0,
                overflowed: false,
                busiest: 0,
                review_at: None,
            }),
            half_life,
            queue: Mutex::new(Queue::default()),
        }
    }

    /// The sampling hash of `key`.
    #[inline]
    pub(crate) fn hash<Q: Hash + ?Sized>(&self, key: &Q) -> u64 {
        self.hasher.hash_one(key)
    }

    /// Whether a key of this hash is sampled now.
    #[inline]
    pub(crate) fn samples(&self, hash: u64) -> bool {
        hash < self.threshold.load(Relaxed)
    }

    /// Keys with a hash below this are sampled now.
    pub(crate) fn threshold(&self) -> u64 {
        self.threshold.load(Relaxed)
    }

    /// A request of the key of `hash` at `now`; `charge` is what its value is charged, 0 when
    /// not known (a miss, before its load). Not queued for a key the simulation ignores as
    /// heavy ([`MUTED_KEYS`]).
    pub(crate) fn record(&self, hash: u64, charge: u64, now: u64) {
        let muted = &self.muted[..self.muted_len.load(Relaxed).min(MUTED_KEYS)];
        if self.samples(hash) && !muted.iter().any(|m| m.load(Relaxed) == hash) {
            self.push(Event::Request { hash, charge, now });
        }
    }

    /// A miss of the key of `hash` at `now`: queued for a sampled key (its value is loaded
    /// next) and for a key of the table of heavy keys, which counts its misses.
    pub(crate) fn record_miss(&self, hash: u64, now: u64) {
        if self.watches(hash) {
            self.push(Event::Request {
                hash,
                charge: 0,
                now,
            });
        }
    }

    /// Whether the key of `hash` may be in the table of heavy keys (false positives: one in
    /// eight at most).
    fn maybe_heavy(&self, hash: u64) -> bool {
        let (word, bit) = heavy_filter_bit(hash);
        self.heavy_filter[word].load(Relaxed) & bit != 0
    }

    /// The value of the key of `hash` was loaded and charged `charge` at `now`.
    pub(crate) fn learn(&self, hash: u64, charge: u64, now: u64) {
        if charge != 0 && self.samples(hash) {
            self.push(Event::Load { hash, charge, now });
        }
    }

    /// A hit of the value of the key of `hash`, charged `charge`, that stands for
    /// [`crate::slot::HEAVY_REPORT`] of its hits.
    pub(crate) fn report_heavy(&self, hash: u64, charge: u64, now: u64, report: Report) {
        if !self.retired.load(Relaxed) {
            self.push(Event::Hits {
                hash,
                charge,
                now,
                report,
            });
        }
    }

    /// The key of `hash` was invalidated at `now`, whether the cache held its value or not
    /// (and its ghost with it): the miniatures drop it at every size, as the cache did at its
    /// own.
    pub(crate) fn invalidate(&self, hash: u64, now: u64) {
        if self.watches(hash) {
            self.push(Event::Invalidate { hash, now });
        }
    }

    /// Whether the advisor needs to hear of a miss or an invalidation of the key of `hash`: a
    /// sampled key, or one that may be in the table of heavy keys.
    pub(crate) fn watches(&self, hash: u64) -> bool {
        self.samples(hash) || self.maybe_heavy(hash)
    }

    /// A predicate invalidated the keys of `hashes` (held or not; their ghosts stay, as
    /// quick_cache's `retain` keeps them): the queue is drained first, then every size drops
    /// them at once. Applied, not queued: a `REFRESH DATABASE` may match every sampled key,
    /// which no queue should have to hold. `hashes` is left empty.
    pub(crate) fn invalidate_matching(
        &self,
        hashes: &mut Vec<u64>,
        served: impl FnOnce() -> Served,
    ) {
        if hashes.is_empty() || self.retired.load(Relaxed) {
            hashes.clear();
            return;
        }
        hashes.sort_unstable();
        hashes.dedup();
        let mut simulation = self.simulation.lock();
        self.drain_locked(&mut simulation, served);
        for hash in hashes.drain(..) {
            simulation.state.invalidate(hash, true);
        }
    }

    /// Bytes the cache holds on the advisor's behalf (the keys it keeps for predicate
    /// invalidations), charged with the advisor's own at the next drain.
    pub(crate) fn hold_outside(&self, bytes: u64) {
        self.outside.store(bytes, Relaxed);
    }

    #[cfg(test)]
    pub(crate) fn outside(&self) -> u64 {
        self.outside.load(Relaxed)
    }

    /// Every value was invalidated at `now`: the miniatures drop every value. Never lost to a
    /// full queue: the events queued before it are dropped instead (they could only have
    /// changed which values the clear removes, and their counts), which grows the queue.
    pub(crate) fn clear(&self, now: u64) {
        if !self.retired.load(Relaxed) {
            self.queue.lock().push_clear(now);
        }
    }

    fn push(&self, event: Event) {
        self.queue.lock().push(event);
    }

    /// The curve at `now` (after draining the queue), for a cache that has served `served` in
    /// all and whose byte limit is `limit` now.
    pub(crate) fn advice(&self, served: Served, limit: Option<u64>, now: u64) -> Advice {
        self.drain(|| served);
        // The crowded sizes are simulated outside the lock: drains go on meanwhile.
        let job = if self.retired.load(Relaxed) {
            None
        } else {
            self.simulation.lock().state.crowd_job(served, now)
        };
        let crowd = job.map(|job| job.run());
        let mut simulation = self.simulation.lock();
        if let Some(crowd) = crowd {
            simulation.state.set_crowd(crowd);
        }
        let mut advice = simulation.state.curve(served, limit, now);
        // The curve kept for the next read is held too (a stopped advisor holds nothing).
        if !self.retired.load(Relaxed) {
            self.charge(&mut simulation);
        }
        advice.reserved_bytes = simulation.reserved;
        advice.dropped_events = simulation.dropped;
        if self.retired.load(Relaxed) {
            advice.points.clear();
        }
        advice
    }

    /// Events queued and not drained yet.
    pub(crate) fn pending(&self) -> usize {
        self.queue.lock().len()
    }

    /// Bytes held in the ledger now.
    pub(crate) fn reserved(&self) -> u64 {
        self.simulation.lock().reserved
    }

    /// Whether the advisor stopped ([`Advisor::retire`], or a refused reservation).
    pub(crate) fn is_retired(&self) -> bool {
        self.retired.load(Relaxed)
    }

    /// Whether it stopped for a refused reservation and waits for the governor to restart it.
    pub(crate) fn is_starved(&self) -> bool {
        self.starved.load(Relaxed)
    }

    /// Whether it takes part in the node's share of advisors' memory: running, or waiting for
    /// room (it runs again as soon as the share affords it) — not stopped for good.
    pub(crate) fn in_share(&self) -> bool {
        !self.is_retired() || self.is_starved()
    }

    /// The least it held when it stopped for a refused reservation (0 if it never did).
    pub(crate) fn needs(&self) -> u64 {
        self.needs.load(Relaxed)
    }

    /// Stops the advisor for good (its cache left service, or the node needs its bytes):
    /// the simulation goes and its bytes are released. Returns the bytes released.
    pub(crate) fn retire(&self) -> u64 {
        let mut simulation = self.simulation.lock();
        self.starved.store(false, Relaxed);
        self.stop(&mut simulation)
    }

    /// Sets the most bytes the advisor may hold (its share of the node's advisors' memory),
    /// and lowers its sample at once if it holds more: an idle cache's advisor drains nothing,
    /// and would otherwise keep its bytes. Returns the bytes it holds in the ledger after.
    pub(crate) fn set_cap(&self, cap: u64) -> u64 {
        self.cap.store(cap, Relaxed);
        let mut simulation = self.simulation.lock();
        if !self.retired.load(Relaxed) && simulation.reserved > cap {
            self.charge(&mut simulation);
        }
        simulation.reserved
    }

    /// Starts an advisor stopped for its memory again, from an empty sample at `now` (what it
    /// knew went when it stopped). Nothing for one running or stopped for good.
    pub(crate) fn restart(&self, now: u64) {
        let mut simulation = self.simulation.lock();
        if !self.starved.swap(false, Relaxed) {
            return;
        }
        let policy = simulation.state.policy();
        let half_life = self.half_life.load(Relaxed);
        simulation.state = State::new(policy, self.options, now, half_life);
        simulation.overflowed = false;
        simulation.review_at = None;
        *self.queue.lock() = Queue::with_room(queue::LEAST_QUEUE_EVENTS);
        self.muted_len.store(0, Relaxed);
        for word in &self.heavy_filter {
            word.store(0, Relaxed);
        }
        self.threshold.store(u64::MAX, Relaxed);
        self.retired.store(false, Relaxed);
        self.charge(&mut simulation);
    }

    fn stop(&self, simulation: &mut Simulation) -> u64 {
        self.retired.store(true, Relaxed);
        self.threshold.store(0, Relaxed);
        *self.queue.lock() = Queue::default();
        simulation.spare = Vec::new();
        simulation.spare_reports = Vec::new();
        let options = AdvisorOptions {
            sample_keys: 1,
            ..AdvisorOptions::default()
        };
        simulation.state = State::new(simulation.state.policy(), options, 0, NEVER);
        let released = std::mem::take(&mut simulation.reserved);
        self.budget.release(released);
        released
    }
}

impl Drop for Advisor {
    fn drop(&mut self) {
        self.budget.release(self.simulation.get_mut().reserved);
    }
}

/// The word and the bit of `hash` in the filter of heavy keys.
fn heavy_filter_bit(hash: u64) -> (usize, u64) {
    let mixed = (hash ^ (hash >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 51;
    (
        (mixed >> 6) as usize % HEAVY_FILTER_WORDS,
        1 << (mixed & 63),
    )
}

/// An advisor for unit tests: a cache of a million values that never expire, charged to
/// `ledger`'s node.
#[cfg(test)]
pub(crate) fn test_advisor(ledger: &metacache_ledger::Ledger) -> Advisor {
    let policy = Policy {
        count_capacity: 1_000_000,
        ttl_nanos: NEVER,
        after_access: false,
        margin_nanos: 0,
    };
    let half_life = Arc::new(AtomicU64::new(nanos(DEFAULT_HALF_LIFE)));
    Advisor::new(
        policy,
        AdvisorOptions::default(),
        ledger.node().clone(),
        0,
        &half_life,
    )
}

#[cfg(test)]
mod tests {
    use metacache_ledger::Ledger;

    use super::test_advisor as advisor;
    use super::*;

    #[test]
    fn a_clear_is_never_lost_to_a_full_queue() {
        let ledger = Ledger::new(None);
        let advisor = advisor(&ledger);
        for key in 0..QUEUE_EVENTS as u64 + 10 {
            advisor.record(key, 100, key);
        }
        assert_eq!(advisor.pending(), QUEUE_EVENTS, "the queue is full");
        advisor.clear(1_000);
        // What came before the clear went (counted dropped); the clear is queued.
        let queue = advisor.queue.lock();
        assert!(matches!(queue.events[..], [Event::Clear { now: 1_000 }]));
        assert_eq!(queue.dropped, QUEUE_EVENTS as u64 + 10);
    }

    #[test]
    fn invalidations_of_keys_neither_sampled_nor_heavy_are_not_queued() {
        let ledger = Ledger::new(None);
        let advisor = advisor(&ledger);
        advisor.threshold.store(1 << 40, Relaxed);
        advisor.invalidate(7, 1);
        advisor.invalidate(u64::MAX - 7, 1);
        assert_eq!(advisor.pending(), 1, "the sampled key's only");
        let (word, bit) = heavy_filter_bit(u64::MAX - 7);
        advisor.heavy_filter[word].store(bit, Relaxed);
        advisor.invalidate(u64::MAX - 7, 2);
        advisor.record_miss(u64::MAX - 7, 2);
        assert_eq!(
            advisor.pending(),
            3,
            "a key of the heavy table: its invalidation and miss"
        );
    }
}
