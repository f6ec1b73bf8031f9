//! A catalog's change feed from its source: the setting that turns it on and the counters every
//! front end shows (`information_schema.catalog_meta_cache_events`, `metacache_source_event*`).
//!
//! The poller itself belongs to the source (the Hive Metastore's notification log is read by
//! `metacache-sources`); this module owns what outlives one poller: the counters live with the
//! [`Catalog`](crate::Catalog), so an ALTER that rebuilds the connector keeps them, and the
//! front ends read them without knowing any source.
//!
//! # Invariants
//! - Counters only grow; the cursor only moves forward, except when a reset sets it to the
//!   source's current position (the reset is counted).
//! - `LAST_ERROR` carries no property value: sources redact before recording.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use parking_lot::Mutex;

use crate::{Error, Properties, Result};

/// The catalog property that turns on polling of the Hive Metastore's notification log, in
/// milliseconds (Doris's name); absent or `0`: off.
pub const HMS_EVENTS_POLLING_INTERVAL_KEY: &str = "hms_events_polling_interval_ms";
/// The shortest polling interval accepted.
pub const MIN_POLLING_INTERVAL_MS: u64 = 100;
/// The longest polling interval accepted (a day).
pub const MAX_POLLING_INTERVAL_MS: u64 = 86_400_000;

/// The polling interval `value` of `key` asks for: `None` for off (`0`), an error for anything
/// but an integer in `0` or [`MIN_POLLING_INTERVAL_MS`]..=[`MAX_POLLING_INTERVAL_MS`].
pub fn parse_polling_interval(key: &str, value: &str) -> Result<Option<Duration>> {
    let invalid = || Error::InvalidPollingInterval {
        key: key.to_owned(),
        value: value.to_owned(),
        min: MIN_POLLING_INTERVAL_MS,
        max: MAX_POLLING_INTERVAL_MS,
    };
    match value.trim().parse::<u64>().map_err(|_| invalid())? {
        0 => Ok(None),
        millis @ MIN_POLLING_INTERVAL_MS..=MAX_POLLING_INTERVAL_MS => {
            Ok(Some(Duration::from_millis(millis)))
        }
        _ => Err(invalid()),
    }
}

/// The polling interval a catalog's properties set; `None` when off or invalid (a stored
/// invalid value was already reported as a warning when the catalog was loaded).
pub fn polling_interval(properties: &Properties) -> Option<Duration> {
    let value = properties.get(HMS_EVENTS_POLLING_INTERVAL_KEY)?;
    parse_polling_interval(HMS_EVENTS_POLLING_INTERVAL_KEY, value)
        .ok()
        .flatten()
}

/// Why a poller dropped every cache of its catalog and moved its cursor to the source's
/// current position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetReason {
    /// Events between the cursor and the first event returned are gone (the source cleaned
    /// its log), or the source's position went backwards.
    Gap,
    /// An event whose effect could not be bounded (unknown type, unreadable message).
    Unapplied,
}

/// The counters of a catalog's change feed.
#[derive(Debug, Default)]
pub struct SourceEvents {
    running: AtomicBool,
    /// The last poll failed.
    failing: AtomicBool,
    /// The last event applied (the cursor); 0 before the first poll.
    cursor: AtomicU64,
    /// The source's newest event at the last successful poll.
    source_position: AtomicU64,
    polls: AtomicU64,
    poll_failures: AtomicU64,
    received: AtomicU64,
    applied: AtomicU64,
    ignored: AtomicU64,
    tables_invalidated: AtomicU64,
    partitions_invalidated: AtomicU64,
    gap_resets: AtomicU64,
    unapplied_resets: AtomicU64,
    last_poll_millis: AtomicU64,
    last_event_millis: AtomicU64,
    last_error: Mutex<Option<String>>,
}

/// A copy of the counters, for a row or a scrape.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceEventsSnapshot {
    /// A poller runs now (the connector was built and polling is on).
    pub running: bool,
    /// The last poll failed.
    pub failing: bool,
    /// LAST_EVENT_ID.
    pub cursor: u64,
    /// SOURCE_EVENT_ID.
    pub source_position: u64,
    /// POLL_COUNT.
    pub polls: u64,
    /// POLL_FAILURE_COUNT.
    pub poll_failures: u64,
    /// EVENTS_RECEIVED.
    pub received: u64,
    /// EVENTS_APPLIED.
    pub applied: u64,
    /// EVENTS_IGNORED.
    pub ignored: u64,
    /// TABLES_INVALIDATED.
    pub tables_invalidated: u64,
    /// PARTITIONS_INVALIDATED.
    pub partitions_invalidated: u64,
    /// GAP_RESETS.
    pub gap_resets: u64,
    /// UNAPPLIED_RESETS.
    pub unapplied_resets: u64,
    /// LAST_POLL_TIME, wall-clock milliseconds.
    pub last_poll_millis: Option<u64>,
    /// LAST_EVENT_TIME: when the last applied event happened at the source (its own clock).
    pub last_event_millis: Option<u64>,
    /// LAST_ERROR.
    pub last_error: Option<String>,
}

impl SourceEventsSnapshot {
    /// Events the source has that the poller has not applied yet (as of the last poll).
    pub fn lag(&self) -> u64 {
        self.source_position.saturating_sub(self.cursor)
    }
}

fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn some(v: u64) -> Option<u64> {
    (v > 0).then_some(v)
}

impl SourceEvents {
    /// A poller started (`true`) or stopped.
    pub fn set_running(&self, running: bool) {
        self.running.store(running, Relaxed);
    }

    /// The cursor: the last event applied.
    pub fn cursor(&self) -> u64 {
        self.cursor.load(Relaxed)
    }

    /// A poll answered: the source's newest event is `position` (`LAST_ERROR` keeps the last
    /// problem).
    pub fn polled(&self, position: u64) {
        self.polls.fetch_add(1, Relaxed);
        self.source_position.fetch_max(position, Relaxed);
        self.last_poll_millis.store(now_millis(), Relaxed);
        self.failing.store(false, Relaxed);
    }

    /// A poll failed with `error` (already redacted).
    pub fn poll_failed(&self, error: String) {
        self.polls.fetch_add(1, Relaxed);
        self.poll_failures.fetch_add(1, Relaxed);
        self.failing.store(true, Relaxed);
        self.last_poll_millis.store(now_millis(), Relaxed);
        *self.last_error.lock() = Some(error);
    }

    /// The poller starts reading after `position` (its first poll, or a reset).
    pub fn start_at(&self, position: u64) {
        self.cursor.store(position, Relaxed);
        self.source_position.store(position, Relaxed);
    }

    /// Event `id`, which happened at `event_millis` at the source, was applied (`ignored`:
    /// nothing cached depends on it), invalidating `tables` tables and `partitions` partitions.
    pub fn applied(&self, id: u64, event_millis: u64, ignored: bool, tables: u64, partitions: u64) {
        self.received.fetch_add(1, Relaxed);
        if ignored {
            self.ignored.fetch_add(1, Relaxed);
        } else {
            self.applied.fetch_add(1, Relaxed);
        }
        self.tables_invalidated.fetch_add(tables, Relaxed);
        self.partitions_invalidated.fetch_add(partitions, Relaxed);
        self.cursor.fetch_max(id, Relaxed);
        self.source_position.fetch_max(id, Relaxed);
        if event_millis > 0 {
            self.last_event_millis.store(event_millis, Relaxed);
        }
    }

    /// Every cache of the catalog was dropped for `reason`; the cursor moves to `position`.
    pub fn reset(&self, reason: ResetReason, position: u64, error: String) {
        match reason {
            ResetReason::Gap => self.gap_resets.fetch_add(1, Relaxed),
            ResetReason::Unapplied => {
                self.received.fetch_add(1, Relaxed);
                self.unapplied_resets.fetch_add(1, Relaxed)
            }
        };
        self.cursor.store(position, Relaxed);
        self.source_position.fetch_max(position, Relaxed);
        *self.last_error.lock() = Some(error);
    }

    /// The counters now.
    pub fn snapshot(&self) -> SourceEventsSnapshot {
        SourceEventsSnapshot {
            running: self.running.load(Relaxed),
            failing: self.failing.load(Relaxed),
            cursor: self.cursor.load(Relaxed),
            source_position: self.source_position.load(Relaxed),
            polls: self.polls.load(Relaxed),
            poll_failures: self.poll_failures.load(Relaxed),
            received: self.received.load(Relaxed),
            applied: self.applied.load(Relaxed),
            ignored: self.ignored.load(Relaxed),
            tables_invalidated: self.tables_invalidated.load(Relaxed),
            partitions_invalidated: self.partitions_invalidated.load(Relaxed),
            gap_resets: self.gap_resets.load(Relaxed),
            unapplied_resets: self.unapplied_resets.load(Relaxed),
            last_poll_millis: some(self.last_poll_millis.load(Relaxed)),
            last_event_millis: some(self.last_event_millis.load(Relaxed)),
            last_error: self.last_error.lock().clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_are_zero_or_within_bounds() {
        let key = HMS_EVENTS_POLLING_INTERVAL_KEY;
        assert_eq!(parse_polling_interval(key, "0").ok(), Some(None));
        assert_eq!(
            parse_polling_interval(key, " 1000 ").ok(),
            Some(Some(Duration::from_secs(1)))
        );
        for bad in ["99", "-1", "1s", "", "86400001"] {
            let error = parse_polling_interval(key, bad)
                .err()
                .map(|e| e.to_string());
            assert!(
                error
                    .as_deref()
                    .is_some_and(|e| e.contains("hms_events_polling_interval_ms")),
                "{bad:?}: {error:?}"
            );
        }
    }

    #[test]
    fn a_reset_moves_the_cursor_and_is_counted() {
        let events = SourceEvents::default();
        events.start_at(10);
        events.applied(11, 5, false, 1, 0);
        events.applied(12, 6, true, 0, 0);
        assert_eq!(events.cursor(), 12);
        events.reset(ResetReason::Gap, 40, "gap".to_owned());
        let s = events.snapshot();
        assert_eq!((s.cursor, s.received, s.applied, s.ignored), (40, 2, 1, 1));
        assert_eq!((s.gap_resets, s.unapplied_resets), (1, 0));
        assert_eq!(s.last_error.as_deref(), Some("gap"));
        events.poll_failed("unreachable".to_owned());
        assert!(events.snapshot().failing);
        events.polled(45);
        let s = events.snapshot();
        assert_eq!((s.lag(), s.failing, s.polls), (5, false, 2));
        // LAST_ERROR keeps the last problem, as the statistics table's does.
        assert_eq!(s.last_error.as_deref(), Some("unreachable"));
    }
}
