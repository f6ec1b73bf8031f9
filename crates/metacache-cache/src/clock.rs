//! Time for TTLs and statistics, injectable so that tests move time instead of sleeping.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The source of time of a cache: the system's, or a [`ManualClock`] that tests advance.
#[derive(Debug, Clone, Default)]
pub enum Clock {
    /// Coarse monotonic time (advanced every 10 ms by a ticker thread, one atomic load to read:
    /// TTLs are seconds, and the hit path reads the clock) and the system wall clock.
    #[default]
    System,
    /// Time that moves only when told to.
    Manual(Arc<ManualClock>),
}

impl Clock {
    /// A manual clock starting at an arbitrary instant, and its handle.
    pub fn manual() -> (Self, Arc<ManualClock>) {
        let clock = Arc::new(ManualClock::default());
        (Self::Manual(Arc::clone(&clock)), clock)
    }

    /// Monotonic nanoseconds since an arbitrary origin.
    #[inline]
    pub fn now_nanos(&self) -> u64 {
        match self {
            Self::System => coarse_monotonic_nanos(),
            Self::Manual(clock) => clock.nanos.load(Relaxed),
        }
    }

    /// Nanoseconds with full resolution, for measuring load times (manual clocks: same as
    /// [`Clock::now_nanos`]).
    pub fn precise_nanos(&self) -> u64 {
        match self {
            Self::System => precise_monotonic_nanos(),
            Self::Manual(clock) => clock.nanos.load(Relaxed),
        }
    }

    /// Wall-clock milliseconds since the Unix epoch, for "last load" columns.
    pub fn wall_millis(&self) -> u64 {
        match self {
            Self::System => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            Self::Manual(clock) => clock.wall_start_millis + clock.nanos.load(Relaxed) / 1_000_000,
        }
    }
}

/// A clock for tests: starts at 1 second past its origin on 2026-12-01 and moves by
/// [`ManualClock::advance`].
#[derive(Debug)]
pub struct ManualClock {
    nanos: AtomicU64,
    wall_start_millis: u64,
}

impl Default for ManualClock {
    fn default() -> Self {
        Self {
            nanos: AtomicU64::new(1_000_000_000),
            wall_start_millis: 1_764_547_200_000,
        }
    }
}

impl ManualClock {
    /// Moves time forward.
    pub fn advance(&self, by: Duration) {
        self.nanos.fetch_add(nanos(by), Relaxed);
    }
}

/// `duration` in nanoseconds, saturating at `u64::MAX` (the slots' `NEVER`).
pub(crate) fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

/// How often the process-wide coarse clock advances. TTLs are whole seconds; 10 ms of staleness
/// is far below what any TTL can observe.
const TICK: std::time::Duration = std::time::Duration::from_millis(10);

/// The coarse time, published by one ticker thread; 0 until the ticker has started.
static COARSE_NOW: AtomicU64 = AtomicU64::new(0);

/// Reading the system clock costs 20–100 ns on virtual machines (more than a cache hit); the hit
/// path instead reads one atomic that a ticker thread advances every [`TICK`].
#[inline]
fn coarse_monotonic_nanos() -> u64 {
    let now = COARSE_NOW.load(Relaxed);
    if now != 0 {
        return now;
    }
    start_ticker();
    // Read what the ticker published, not a fresh precise time: a precise reading here would be
    // ahead of the coarse value the next call returns, and time would seem to go backwards.
    match COARSE_NOW.load(Relaxed) {
        0 => precise_monotonic_nanos(),
        now => now,
    }
}

#[cold]
fn start_ticker() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        COARSE_NOW.store(precise_monotonic_nanos(), Relaxed);
        let ticker = std::thread::Builder::new()
            .name("metacache-clock".into())
            .spawn(|| {
                loop {
                    std::thread::sleep(TICK);
                    COARSE_NOW.store(precise_monotonic_nanos(), Relaxed);
                }
            });
        if let Err(error) = ticker {
            // Without a ticker, every read falls back to the precise clock.
            COARSE_NOW.store(0, Relaxed);
            tracing::warn!(
                "cannot start the clock ticker, reading the system clock instead: {error}"
            );
        }
    });
}

/// Nanoseconds since the first call, never 0.
fn precise_monotonic_nanos() -> u64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    let origin = *ORIGIN.get_or_init(Instant::now);
    u64::try_from(origin.elapsed().as_nanos())
        .unwrap_or(u64::MAX)
        .saturating_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_advanced() {
        let (clock, handle) = Clock::manual();
        let (t0, w0) = (clock.now_nanos(), clock.wall_millis());
        assert_eq!(clock.now_nanos(), t0);
        handle.advance(Duration::from_secs(2));
        assert_eq!(clock.now_nanos() - t0, 2_000_000_000);
        assert_eq!(clock.wall_millis() - w0, 2_000);
    }

    #[test]
    fn system_clock_is_monotonic() {
        let clock = Clock::System;
        let a = clock.now_nanos();
        let b = clock.now_nanos();
        assert!(b >= a);
        assert!(clock.wall_millis() > 1_700_000_000_000);
    }

    #[test]
    fn system_clock_advances_with_the_ticker() {
        let clock = Clock::System;
        let start = clock.now_nanos();
        std::thread::sleep(TICK * 5);
        let later = clock.now_nanos();
        assert!(later > start, "the coarse clock must tick");
        assert!(clock.precise_nanos() >= later);
    }
}
