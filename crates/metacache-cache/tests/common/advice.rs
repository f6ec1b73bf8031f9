//! Traces and replays that check the quota advisor against the real cache: a trace is run once
//! through a cache with the advisor on, and once per curve point through a real cache whose
//! byte limit is that point; the predicted and the measured hit ratios are compared.
//! Shared by `tests/advice.rs` and `examples/advice_accuracy.rs` (the table in
//! docs/benchmarks.md).
#![allow(dead_code, missing_docs)]

use std::sync::Arc;
use std::time::Duration;

use metacache_cache::{
    Advice, AdvisorOptions, CacheConfig, Clock, Expiry, GovernorOptions, ManagedCache, ManualClock,
    MemoryGovernor,
};
use metacache_estimate::{EstimateSize, Sizer};

/// A value that weighs `bytes` without allocating them.
pub struct Payload(pub u32);

impl EstimateSize for Payload {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add(self.0 as usize);
    }
}

pub fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// 1–16 KiB, fixed per key.
pub fn value_bytes(key: u64) -> u32 {
    (1024 + mix(key ^ 0xA5A5) % (15 * 1024 + 1)) as u32
}

/// How a trace's values weigh, fixed per key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sizes {
    /// 1–16 KiB, evenly spread ([`value_bytes`]).
    Even,
    /// 256 B–16 KiB, log-uniform: as many values of 256–512 B as of 8–16 KiB, as a catalog's
    /// small rows (a table's schema, a partition's name) and large ones (a file listing) mix.
    LogUniform,
}

impl Sizes {
    pub fn bytes(self, key: u64) -> u32 {
        match self {
            Sizes::Even => value_bytes(key),
            Sizes::LogUniform => log_uniform(key ^ 0x5A5A),
        }
    }
}

/// 256 B–16 KiB, log-uniform over `seed` (as `scripts/advice-lookaside.sh` sends).
pub fn log_uniform(seed: u64) -> u32 {
    let unit = (mix(seed) >> 11) as f64 / (1u64 << 53) as f64;
    (256.0 * 64f64.powf(unit)) as u32
}

/// What the ledger charges a value of `key` (value, `u64` key, fixed overhead).
pub fn charged(key: u64) -> u64 {
    u64::from(value_bytes(key)) + metacache_ledger::ACCOUNTING_OVERHEAD_BYTES + 8
}

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Keys from a Zipf distribution of exponent `alpha` over `keys` keys, ranks permuted.
pub fn zipf(alpha: f64, keys: u64, accesses: usize, seed: u64) -> Vec<u64> {
    let ranks = zipf_ranks(alpha, keys, accesses, seed).into_iter();
    ranks.map(|rank| mix(rank ^ seed) % (keys * 16)).collect()
}

/// Keys from a Zipf distribution of exponent `alpha` over `keys` ranks whose keys change over
/// time: each rank's key is replaced by a new one every `accesses / lives` requests, at a moment
/// of its own, as a table's new partitions and a new snapshot's files take the place of the
/// old. Over the trace about `keys × (lives + 1)` keys are requested, `keys` at any moment.
pub fn turnover(alpha: f64, keys: u64, accesses: usize, lives: usize, seed: u64) -> Vec<u64> {
    let life = (accesses / lives.max(1)).max(1) as u64;
    let ranks = zipf_ranks(alpha, keys, accesses, seed);
    let keyed = ranks.into_iter().enumerate().map(|(i, rank)| {
        let generation = (i as u64 + mix(rank ^ !seed) % life) / life;
        mix(rank ^ seed ^ (generation << 40))
    });
    keyed.collect()
}

/// Ranks (0: the most requested) drawn from a Zipf distribution of exponent `alpha`.
fn zipf_ranks(alpha: f64, keys: u64, accesses: usize, seed: u64) -> Vec<u64> {
    let mut cdf = Vec::with_capacity(keys as usize);
    let mut total = 0.0;
    for rank in 1..=keys {
        total += 1.0 / (rank as f64).powf(alpha);
        cdf.push(total);
    }
    let mut rng = Rng(seed);
    (0..accesses)
        .map(|_| {
            let u = rng.unit() * total;
            cdf.partition_point(|&c| c < u) as u64
        })
        .collect()
}

/// Distinct keys from `first` until their charges add up to `bytes`.
pub fn keys_totalling(first: u64, bytes: u64) -> Vec<u64> {
    let mut keys = Vec::new();
    let (mut sum, mut key) = (0, first);
    while sum < bytes {
        sum += charged(key);
        keys.push(key);
        key += 1;
    }
    keys
}

/// A hot set of `hot_bytes` read at random, a one-pass scan of `scan_bytes` of new keys in the
/// middle of it, then the hot set again.
pub fn scan(hot_bytes: u64, scan_bytes: u64, reads: usize) -> Vec<u64> {
    let hot = keys_totalling(0, hot_bytes);
    let cold = keys_totalling(1 << 32, scan_bytes);
    let mut rng = Rng(7);
    let mut phase = |n: usize| -> Vec<u64> {
        (0..n)
            .map(|_| hot[(rng.next() % hot.len() as u64) as usize])
            .collect()
    };
    let mut trace = phase(reads / 2);
    trace.extend(&cold);
    trace.extend(phase(reads / 2));
    trace
}

/// A loop over keys adding up to `bytes`, `rounds` times.
pub fn looping(bytes: u64, rounds: usize) -> Vec<u64> {
    let keys = keys_totalling(0, bytes);
    (0..rounds).flat_map(|_| keys.iter().copied()).collect()
}

/// Values invalidated while a trace runs, as REFRESH statements and a metastore's events do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Churn {
    None,
    /// Every `every` requests, one key drawn from the trace (so as often as it is requested)
    /// is invalidated, present or not (a metastore event, a look-aside `DELETE`).
    Key {
        every: usize,
    },
    /// Every `every` requests, the values of one of `tables` tables (a key's table is its hash
    /// modulo `tables`) are invalidated (REFRESH TABLE).
    Table {
        every: usize,
        tables: u64,
    },
    /// Every `every` requests, every value (REFRESH CATALOG).
    All {
        every: usize,
    },
}

impl Churn {
    /// Invalidates what is due before the request numbered `i` of `trace`.
    pub fn apply(self, cache: &ManagedCache<u64, Payload>, trace: &[u64], i: usize) {
        let due = |every: usize| i > 0 && every > 0 && i.is_multiple_of(every);
        match self {
            Churn::None => {}
            Churn::Key { .. } => {
                if let Some(key) = self.victim(trace, i) {
                    cache.invalidate(&key);
                }
            }
            Churn::Table { every, tables } if due(every) => {
                let table = mix(i as u64 ^ 0x55) % tables;
                cache.invalidate_keys_if(|&key| mix(key ^ 0x77) % tables == table);
            }
            Churn::All { every } if due(every) => {
                cache.invalidate_all();
            }
            _ => {}
        }
    }

    /// The key `Churn::Key` invalidates before the request numbered `i` of `trace`, if one is
    /// due (drawn from the trace, so as often as it is requested).
    pub fn victim(self, trace: &[u64], i: usize) -> Option<u64> {
        match self {
            Churn::Key { every } if i > 0 && every > 0 && i.is_multiple_of(every) => {
                Some(trace[(mix(i as u64) % trace.len() as u64) as usize])
            }
            _ => None,
        }
    }
}

/// One trace and the cache it runs in.
pub struct Case {
    pub name: String,
    pub trace: Vec<u64>,
    /// Time between requests.
    pub step: Duration,
    /// How the values weigh.
    pub sizes: Sizes,
    pub ttl: Option<Duration>,
    pub expiry: Expiry,
    pub capacity: u64,
    pub churn: Churn,
    /// The advisor's half-life for this trace (`None`: the caller's options): a trace whose
    /// keys turn over is advised on its recent requests, as a running cache is.
    pub half_life: Option<Duration>,
    /// The real cache's hit ratio is measured from this request on (the trace's steady state).
    pub measured_from: usize,
    /// Requests whose loads run at once: each batch of this many requests looks its keys up,
    /// then the values missed are loaded in the batch's order (a file listing loads a table's
    /// partitions so). 1: each miss is loaded before the next request.
    pub overlap: usize,
}

impl Case {
    pub fn new(name: impl Into<String>, trace: Vec<u64>) -> Self {
        Self {
            name: name.into(),
            trace,
            step: Duration::from_millis(1),
            sizes: Sizes::Even,
            ttl: None,
            expiry: Expiry::AfterWrite,
            capacity: 10_000_000,
            churn: Churn::None,
            half_life: None,
            measured_from: 0,
            overlap: 1,
        }
    }

    /// Advised with counts halving every `half_life` requests (in trace time), against the
    /// real cache's hit ratio over the last two half-lives (the recent curve a running cache's
    /// advisor gives).
    pub fn recent(mut self, half_life: usize) -> Self {
        let half_life = half_life.max(1);
        self.half_life = Some(self.step * half_life as u32);
        self.measured_from = self.trace.len().saturating_sub(2 * half_life);
        self
    }

    pub fn with_sizes(mut self, sizes: Sizes) -> Self {
        self.sizes = sizes;
        self
    }

    pub fn with_overlap(mut self, overlap: usize) -> Self {
        self.overlap = overlap.max(1);
        self
    }

    pub fn with_churn(mut self, churn: Churn) -> Self {
        self.churn = churn;
        self
    }

    pub fn with_ttl(mut self, ttl: Duration, expiry: Expiry) -> Self {
        self.ttl = Some(ttl);
        self.expiry = expiry;
        self
    }

    pub fn with_capacity(mut self, capacity: u64) -> Self {
        self.capacity = capacity;
        self
    }

    fn config(&self, advisor: Option<AdvisorOptions>) -> CacheConfig {
        CacheConfig::new("advised", self.ttl, self.capacity)
            .with_expiry(self.expiry)
            .with_advisor(advisor)
    }
}

/// How often the replays sweep expired values, in trace time (the governor's default).
pub const SWEEP: Duration = Duration::from_secs(30);

/// A governor on a manual clock for a replay: no node limit, no sweep and no advisor thread of
/// its own (the replay sweeps and drains at its own pace, in trace time).
pub fn replay_governor() -> (MemoryGovernor, Arc<ManualClock>) {
    let (clock, manual) = Clock::manual();
    let governor = MemoryGovernor::with_options(GovernorOptions {
        node_limit: None,
        clock,
        sweep_interval: Duration::from_secs(24 * 3600),
        drain_interval: None,
    });
    (governor, manual)
}

/// Runs `case` through a cache whose byte limit is `limit` (`None`: unlimited) as
/// get-or-insert; returns the hit ratio and, with `advisor`, the advice at the end.
pub fn replay(
    case: &Case,
    limit: Option<u64>,
    advisor: Option<AdvisorOptions>,
) -> (f64, Option<Advice>) {
    replay_with(case, limit, advisor, |_, _| {})
}

/// [`replay`], calling `before(i, cache)` before the `i`th request.
pub fn replay_with(
    case: &Case,
    limit: Option<u64>,
    advisor: Option<AdvisorOptions>,
    mut before: impl FnMut(usize, &ManagedCache<u64, Payload>),
) -> (f64, Option<Advice>) {
    let (governor, manual) = replay_governor();
    let catalog = governor.catalog_budget("c", limit);
    let cache: ManagedCache<u64, Payload> =
        ManagedCache::new(case.config(advisor), &governor, &catalog);
    let mut hits = 0u64;
    let mut since_sweep = Duration::ZERO;
    // An invalidation between a look-up and its `insert` would not fence the look-aside
    // insert as it fences a load: overlapping loads are replayed without churn.
    assert!(
        case.overlap == 1 || case.churn == Churn::None,
        "{}",
        case.name
    );
    if advisor.is_some() {
        shift_reports(&cache);
    }
    let mut loading = Vec::with_capacity(case.overlap);
    for (i, &key) in case.trace.iter().enumerate() {
        before(i, &cache);
        if i % 128 == 0 {
            // What the governor's advisor thread does every 25 ms, at this replay's pace.
            cache.advise_now();
        }
        manual.advance(case.step);
        since_sweep += case.step;
        if since_sweep >= SWEEP {
            governor.purge_expired_now();
            since_sweep = Duration::ZERO;
        }
        case.churn.apply(&cache, &case.trace, i);
        if cache.get(&key).is_some() {
            hits += u64::from(i >= case.measured_from);
        } else if !loading.contains(&key) {
            // A second miss of a key being loaded waits for that load.
            loading.push(key);
        }
        if (i + 1) % case.overlap == 0 || i + 1 == case.trace.len() {
            for key in loading.drain(..) {
                cache.insert(key, Payload(case.sizes.bytes(key)));
            }
        }
    }
    let measured = case.trace.len().saturating_sub(case.measured_from);
    let ratio = hits as f64 / measured.max(1) as f64;
    let reading = std::time::Instant::now();
    let advice = cache.advice();
    if advisor.is_some() && std::env::var_os("ADVICE_TIMING").is_some() {
        // What reading the curve costs (the crowded sizes' simulation included): the
        // `advice_accuracy` example's cost column, docs/benchmarks.md.
        eprintln!("{}: curve read in {:?}", case.name, reading.elapsed());
    }
    (ratio, advice)
}

/// A key no trace requests.
const SHIFT_KEY: u64 = u64::MAX;

/// With `ADVICE_REPORT_SHIFT` set (a number, or `random`), hits of a key no trace requests
/// before the trace: 0–63 of them, which shifts the hit numbers and so which hits report to the
/// heavy keys' table. An unlimited advised cache's hits are otherwise the same in every run, and
/// so are its reports: the runs would repeat one draw of the heavy keys' counts. The shift's
/// own hits are at most one report and 63 requests of a million.
fn shift_reports(cache: &ManagedCache<u64, Payload>) {
    let Ok(shift) = std::env::var("ADVICE_REPORT_SHIFT") else {
        return;
    };
    let hits = match shift.parse::<u64>() {
        Ok(n) => n % 64,
        Err(_) => rand::Rng::next_u64(&mut rand::rng()) % 64,
    };
    eprintln!("hit numbers shifted by {hits}");
    cache.insert(SHIFT_KEY, Payload(value_bytes(SHIFT_KEY)));
    for _ in 0..hits {
        let _ = cache.get(&SHIFT_KEY);
    }
}

/// One compared point: the prediction against the real cache's hit ratios in one or more
/// replays (their mean, and the lowest and highest).
#[derive(Debug, Clone, Copy)]
pub struct Compared {
    pub bytes: u64,
    pub predicted: f64,
    pub exact: f64,
    pub low: f64,
    pub high: f64,
    pub confidence: f64,
}

impl Compared {
    /// How far the prediction is from the real cache's outcomes: 0 inside their range. The
    /// real cache is not deterministic (its frequency sketch and its shards hash with random
    /// seeds), and a cache of a few values lands anywhere in a range several hundredths wide.
    pub fn error(&self) -> f64 {
        (self.low - self.predicted)
            .max(self.predicted - self.high)
            .max(0.0)
    }
}

/// The advice of `case` (from a cache limited to `advised_limit`) against `replays` exact
/// replays at every curve point, the replays spread over `threads`.
pub fn compare(
    case: &Case,
    options: AdvisorOptions,
    advised_limit: Option<u64>,
    threads: usize,
    replays: usize,
) -> (Vec<Compared>, Advice) {
    let options = AdvisorOptions {
        half_life: case.half_life.or(options.half_life),
        ..options
    };
    let (_, advice) = replay(case, advised_limit, Some(options));
    let advice = advice.expect("the advisor is on");
    (compare_advice(case, &advice, threads, replays), advice)
}

/// `advice` of `case` against `replays` exact replays at every curve point, spread over
/// `threads`.
pub fn compare_advice(
    case: &Case,
    advice: &Advice,
    threads: usize,
    replays: usize,
) -> Vec<Compared> {
    let points = Arc::new(advice.points.clone());
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let results = Arc::new(parking_lot::Mutex::new(Vec::new()));
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            let (points, next, results) = (points.clone(), next.clone(), results.clone());
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(point) = points.get(i) else { break };
                    let exact: Vec<f64> = (0..replays.max(1))
                        .map(|_| replay(case, Some(point.cache_bytes), None).0)
                        .collect();
                    results.lock().push(Compared {
                        bytes: point.cache_bytes,
                        predicted: point.hit_rate,
                        exact: exact.iter().sum::<f64>() / exact.len() as f64,
                        low: exact.iter().copied().fold(f64::INFINITY, f64::min),
                        high: exact.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                        confidence: point.confidence,
                    });
                }
            });
        }
    });
    let mut compared = std::mem::take(&mut *results.lock());
    compared.sort_by_key(|c| c.bytes);
    compared
}

/// Mean and largest error ([`Compared::error`]; with one replay, the absolute error).
pub fn errors(compared: &[Compared]) -> (f64, f64) {
    let errors: Vec<f64> = compared.iter().map(Compared::error).collect();
    let mean = errors.iter().sum::<f64>() / errors.len().max(1) as f64;
    (mean, errors.iter().copied().fold(0.0, f64::max))
}

/// The traces of the accuracy table over about `keys` keys and `accesses` requests: Zipf
/// α 0.6–1.2, keys read evenly with sizes spread 64-fold, with and without TTLs (after write
/// and after access), a binding count capacity, a scan through a hot set, and a loop.
pub fn cases(keys: u64, accesses: usize) -> Vec<Case> {
    let mean_charge = 9 * 1024;
    let hot = keys / 10 * mean_charge;
    let loop_keys = keys_totalling(0, keys / 3 * mean_charge).len().max(1);
    vec![
        Case::new("Zipf 0.6", zipf(0.6, keys, accesses, 1)),
        Case::new("Zipf 0.8", zipf(0.8, keys, accesses, 2)),
        Case::new("Zipf 1.0", zipf(1.0, keys, accesses, 3)),
        Case::new("Zipf 1.2", zipf(1.2, keys, accesses, 4)),
        Case::new(
            "evenly read, 256 B–16 KiB log-uniform",
            zipf(0.0, keys, accesses, 14),
        )
        .with_sizes(Sizes::LogUniform),
        Case::new("Zipf 1.0, TTL 120 s", zipf(1.0, keys, accesses, 5))
            .with_ttl(Duration::from_secs(120), Expiry::AfterWrite),
        Case::new(
            "Zipf 0.8, TTL 60 s after access",
            zipf(0.8, keys, accesses, 6),
        )
        .with_ttl(Duration::from_secs(60), Expiry::AfterAccess),
        Case::new("Zipf 0.9, capacity keys/20", zipf(0.9, keys, accesses, 7))
            .with_capacity((keys / 20).max(1)),
        Case::new("scan through a hot set", scan(hot, 3 * hot, accesses)),
        Case::new(
            "loop",
            looping(keys / 3 * mean_charge, (accesses / loop_keys).max(2)),
        )
        .with_ttl(Duration::from_secs(3600), Expiry::AfterWrite),
        Case::new(
            "Zipf 1.0, a key invalidated every 10 requests",
            zipf(1.0, keys, accesses, 8),
        )
        .with_churn(Churn::Key { every: 10 }),
        Case::new(
            "Zipf 0.8, a table in 64 refreshed 100 times",
            zipf(0.8, keys, accesses, 9),
        )
        .with_churn(Churn::Table {
            every: accesses / 100,
            tables: 64,
        }),
        Case::new(
            "Zipf 1.0, every value invalidated 4 times",
            zipf(1.0, keys, accesses, 10),
        )
        .with_churn(Churn::All {
            every: accesses / 4,
        }),
    ]
}

/// A trace whose keys turn over, advised on its recent requests: Zipf α 0.8 over `keys` ranks
/// and `40 × keys` requests, each rank's key replaced every quarter of the trace (five times as
/// many keys as are in use at once), counts halving every `keys` requests (so each key is in
/// use for ten half-lives), the real cache measured over the last two half-lives (a large
/// cache fills with keys no longer in use for most of the trace: its hit ratio over the second
/// half is not its recent one).
pub fn turnover_case(keys: u64) -> Case {
    let requests = 40 * keys as usize;
    Case::new(
        "Zipf 0.8, keys replaced every quarter",
        turnover(0.8, keys, requests, 4, 12),
    )
    .recent(keys as usize)
}

/// The same trace without the turnover: Zipf α 0.8 over `keys` keys and `40 × keys` requests,
/// advised with counts halving every `keys` requests, the real cache measured over the last
/// two half-lives. Counts that age are what a running cache's advisor has: the accuracy table's
/// other traces never age.
pub fn aged_case(keys: u64) -> Case {
    let requests = 40 * keys as usize;
    Case::new(
        "Zipf 0.8, counts halving every 1/40",
        zipf(0.8, keys, requests, 13),
    )
    .recent(keys as usize)
}

/// A cache whose keys became far fewer: Zipf α 0.8 over `keys` keys for `10 × keys` requests,
/// then over `keys / 25` other keys for `30 × keys` more, counts halving every `keys / 2.5`
/// requests (the second part is 75 half-lives), the real cache measured over the last two.
pub fn shrinking_case(keys: u64) -> Case {
    let (before, after) = (10 * keys as usize, 30 * keys as usize);
    let mut trace = zipf(0.8, keys, before, 21);
    trace.extend(
        zipf(0.8, (keys / 25).max(1), after, 22)
            .iter()
            .map(|key| key | 1 << 40),
    );
    Case::new("Zipf 0.8, keys fewer by 25 times", trace).recent(keys as usize * 2 / 5)
}

/// The bytes the cache is charged for the distinct keys of `trace`.
pub fn bytes_of_keys(trace: &[u64]) -> u64 {
    let keys: std::collections::HashSet<u64> = trace.iter().copied().collect();
    keys.into_iter().map(charged).sum()
}

/// The numbers an example was given on its command line (`1_000_000` as `1000000`; what is
/// not a number is skipped).
pub fn numeric_args() -> Vec<u64> {
    std::env::args()
        .skip(1)
        .filter_map(|a| a.replace('_', "").parse().ok())
        .collect()
}

/// `bytes` in KiB, MiB or GiB.
pub fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{}G", b >> 30),
        b if b >= 1 << 20 => format!("{}M", b >> 20),
        b => format!("{}K", b >> 10),
    }
}
