//! Counters behind the statistics table, cheap where the hit path touches them.
//!
//! The hit counter is striped: each thread that counts owns one cache-line-sized stripe while it
//! lives and bumps it with a plain load and store (no locked instruction, no line shared between
//! cores). Threads beyond the stripes share one atomic overflow counter. Readers sum the stripes;
//! a read may miss increments in flight, never loses them.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Mutex, PoisonError};

use metacache_ledger::RejectKind;
use parking_lot::Mutex as PlMutex;

use crate::advice::Report;
use crate::histogram::LoadHistogram;
use crate::slot::HEAVY_REPORT;
use crate::stats::EvictionCause;

const STRIPES: usize = 16;
const _: () = assert!(STRIPES.is_power_of_two());

#[repr(align(64))]
#[derive(Default)]
struct Stripe(AtomicU64);

/// A counter that many threads bump concurrently without contending.
pub(crate) struct StripedCounter {
    stripes: [Stripe; STRIPES],
    overflow: AtomicU64,
}

impl Default for StripedCounter {
    fn default() -> Self {
        Self {
            stripes: std::array::from_fn(|_| Stripe::default()),
            overflow: AtomicU64::new(0),
        }
    }
}

impl StripedCounter {
    /// Adds one; returns the count of the stripe (or the overflow) it went to, which the hit
    /// path uses as this thread's running hit number (see [`heavy_tick`]).
    #[inline]
    pub(crate) fn increment(&self) -> u64 {
        match thread_stripe() {
            Some(i) => {
                // Indices are below STRIPES by construction; the mask (STRIPES is a power of
                // two) lets the compiler drop the bounds check from the hit path.
                let stripe = &self.stripes[i & (STRIPES - 1)].0;
                // Only this thread writes this stripe while it owns the index.
                let count = stripe.load(Relaxed).wrapping_add(1);
                stripe.store(count, Relaxed);
                count
            }
            None => self.overflow.fetch_add(1, Relaxed).wrapping_add(1),
        }
    }

    pub(crate) fn get(&self) -> u64 {
        self.stripes
            .iter()
            .map(|s| s.0.load(Relaxed))
            .chain(std::iter::once(self.overflow.load(Relaxed)))
            .sum()
    }
}

/// Whether the hit numbered `count` by [`StripedCounter::increment`] is one of the one in
/// [`HEAVY_REPORT`] that report their value to the quota advisor's table of heavy keys.
///
/// The test multiplies by the golden ratio (Fibonacci hashing) and takes the top bits: the hit
/// numbers of one key, `p, p + L, p + 2L, …` for a loop over `L` keys, spread evenly over the
/// hashed range for any `L`, so every key is reported once per [`HEAVY_REPORT`] of its hits on
/// average — where `count % HEAVY_REPORT == 0` would report one key of a loop of 64 on every
/// pass and the others never.
#[inline]
pub(crate) fn heavy_tick(count: u64) -> bool {
    const _: () = assert!(HEAVY_REPORT == 1 << 6);
    fibonacci(count) >> (64 - 6) == 0
}

/// Of the hits [`heavy_tick`] picks, whether the one numbered `count` is in the selecting half
/// of the sample (`advice::heavy`): the next bit of the same hash, independent of the key.
pub(crate) fn heavy_report(count: u64) -> Report {
    Report {
        selects: fibonacci(count) >> (64 - 7) & 1 == 0,
    }
}

#[inline]
fn fibonacci(count: u64) -> u64 {
    count.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Stripe indices of threads that exited, for reuse: keeps indices dense so a pool of worker
/// threads always owns stripes.
static FREE_STRIPES: Mutex<Vec<usize>> = Mutex::new(Vec::new());
static NEXT_STRIPE: AtomicUsize = AtomicUsize::new(0);

/// Not yet assigned.
const UNASSIGNED: usize = usize::MAX;
/// Assigned nothing: all stripes are owned by live threads; this thread uses the overflow.
const OVERFLOW: usize = usize::MAX - 1;

/// Gives the stripe back when its thread exits.
struct StripeOwner(usize);

impl Drop for StripeOwner {
    fn drop(&mut self) {
        STRIPE.with(|s| s.set(OVERFLOW));
        release_stripe(self.0);
    }
}

/// Returns a stripe index to the pool for the next thread.
fn release_stripe(index: usize) {
    FREE_STRIPES
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(index);
}

thread_local! {
    /// The hot path reads only this constant-initialised cell (no lazy-init or destructor check).
    static STRIPE: Cell<usize> = const { Cell::new(UNASSIGNED) };
    /// Registered once per thread that got a stripe, to return it on exit.
    static OWNER: std::cell::RefCell<Option<StripeOwner>> = const { std::cell::RefCell::new(None) };
}

#[inline]
fn thread_stripe() -> Option<usize> {
    match STRIPE.with(Cell::get) {
        UNASSIGNED => assign_stripe(),
        OVERFLOW => None,
        index => Some(index),
    }
}

#[cold]
fn assign_stripe() -> Option<usize> {
    let reused = FREE_STRIPES
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .pop();
    let index = reused.or_else(|| {
        let next = NEXT_STRIPE.fetch_add(1, Relaxed);
        (next < STRIPES).then_some(next)
    });
    // If the owner cannot be registered (thread exiting), never take the stripe.
    let registered = index.is_some_and(|i| {
        OWNER
            .try_with(|o| *o.borrow_mut() = Some(StripeOwner(i)))
            .is_ok()
    });
    match (index, registered) {
        (Some(i), true) => {
            STRIPE.with(|s| s.set(i));
            Some(i)
        }
        (Some(i), false) => {
            release_stripe(i);
            None
        }
        (None, _) => {
            STRIPE.with(|s| s.set(OVERFLOW));
            None
        }
    }
}

/// Every counter of one cache instance. They start at zero with the instance, as the statistics
/// table documents.
#[derive(Default)]
pub(crate) struct CacheCounters {
    pub(crate) hits: StripedCounter,
    pub(crate) misses: AtomicU64,
    pub(crate) load_successes: AtomicU64,
    pub(crate) load_failures: AtomicU64,
    pub(crate) load_nanos: AtomicU64,
    pub(crate) load_times: LoadHistogram,
    /// By [`EvictionCause::index`].
    pub(crate) evictions: [AtomicU64; EvictionCause::ALL.len()],
    pub(crate) invalidations: AtomicU64,
    /// By [`RejectKind::index`].
    pub(crate) weight_rejects: [AtomicU64; RejectKind::ALL.len()],
    /// Wall-clock milliseconds of the last successful load, 0 for none.
    pub(crate) last_success_millis: AtomicU64,
    /// Wall-clock milliseconds of the last failed load, 0 for none.
    pub(crate) last_failure_millis: AtomicU64,
    /// Monotonic milliseconds of the last rejection warning logged, for rate limiting.
    pub(crate) last_warning_millis: AtomicU64,
    pub(crate) last_error: PlMutex<Option<String>>,
    pub(crate) last_reject_reason: PlMutex<Option<String>>,
}

impl CacheCounters {
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Relaxed);
    }

    pub(crate) fn read(counter: &AtomicU64) -> u64 {
        counter.load(Relaxed)
    }

    /// Counts one eviction for `cause`.
    pub(crate) fn evicted(&self, cause: EvictionCause) {
        Self::add(&self.evictions[cause.index()], 1);
    }

    pub(crate) fn read_all<const N: usize>(counters: &[AtomicU64; N]) -> [u64; N] {
        std::array::from_fn(|i| Self::read(&counters[i]))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn striped_counter_counts_every_increment_across_threads() {
        let counter = Arc::new(StripedCounter::default());
        let threads: Vec<_> = (0..40)
            .map(|_| {
                let counter = Arc::clone(&counter);
                std::thread::spawn(move || {
                    (0..10_000).for_each(|_| {
                        counter.increment();
                    })
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(counter.get(), 400_000);
    }

    #[test]
    fn increment_returns_the_running_count_of_the_thread() {
        let counter = StripedCounter::default();
        assert_eq!(counter.increment(), 1);
        assert_eq!(counter.increment(), 2);
    }

    /// One hit in 64 reports, half of them selecting — and evenly over the keys of a loop of any
    /// length, where a plain `count % 64` would report one key of a loop of 64 on every pass.
    #[test]
    fn heavy_ticks_spread_evenly_over_the_keys_of_a_loop() {
        for keys in [1u64, 2, 3, 32, 63, 64, 65, 100, 128, 1000] {
            let passes = 64 * 200;
            let mut reports = vec![[0u32; 2]; keys as usize];
            for count in 1..=keys * passes {
                if heavy_tick(count) {
                    let half = usize::from(heavy_report(count).selects);
                    reports[((count - 1) % keys) as usize][half] += 1;
                }
            }
            for (key, halves) in reports.iter().enumerate() {
                let total = f64::from(halves[0] + halves[1]);
                assert!(
                    (total - 200.0).abs() <= 40.0,
                    "loop of {keys}: key {key} reported {total} times in {passes} hits"
                );
                assert!(
                    (f64::from(halves[1]) - total / 2.0).abs() <= 0.25 * total,
                    "loop of {keys}: key {key} halves {halves:?}"
                );
            }
        }
    }
}
