//! The queue between a cache's request path and its advisor's simulation: what happened, in the
//! order it happened, bounded.
//!
//! # Invariants
//! - `events` never holds more than `room` events, `reports` more than [`REPORT_EVENTS`]; what
//!   does not fit is dropped and counted in `dropped` (a report is dropped uncounted: reports
//!   are a sample already).
//! - A `Clear` is never dropped: the events queued before it are, when the queue is full.
//! - Only the advisor changes `room`: a drain (grown after an overflow, lowered after a quiet
//!   minute), a fit of its sample to its memory, a stop or a restart (which empty the queue);
//!   past the first room it stays within [`LEAST_QUEUE_EVENTS`] and
//!   [`super::MAX_QUEUE_EVENTS`].

use std::time::Duration;

use super::{QUEUE_EVENTS, REPORT_EVENTS, Report};

/// Events a queue holds at the least. A queue whose drains all stayed within an eighth of its
/// room for [`QUEUE_REVIEW`] has its room lowered to four times its busiest drain, down to this:
/// a quiet cache's two buffers hold 2 KiB, not the 32 KiB of a first room — which at two
/// thousand caches was 60 MB of the advisors' share. A restarted advisor starts here.
pub(super) const LEAST_QUEUE_EVENTS: usize = 32;

/// How long a queue's drains are watched before its room is lowered (the cache's clock).
pub(super) const QUEUE_REVIEW: Duration = Duration::from_secs(60);

/// What happened, queued for the simulation.
#[derive(Debug, Clone, Copy)]
pub(super) enum Event {
    /// A request of a sampled key; `charge` 0 when not known yet (a miss).
    Request { hash: u64, charge: u64, now: u64 },
    /// A sampled key's value was loaded and charged `charge`.
    Load { hash: u64, charge: u64, now: u64 },
    /// A hit that stands for [`crate::slot::HEAVY_REPORT`] hits of its value.
    Hits {
        hash: u64,
        charge: u64,
        now: u64,
        report: Report,
    },
    /// A key was invalidated (held or not, with its ghost: quick_cache's `remove`). A
    /// predicate's invalidations are not queued: they are applied at once, after a drain
    /// (`Advisor::invalidate_matching`).
    Invalidate { hash: u64, now: u64 },
    /// Every value was invalidated (REFRESH CATALOG).
    Clear { now: u64 },
}

impl Event {
    pub(super) fn now(&self) -> u64 {
        match *self {
            Event::Request { now, .. }
            | Event::Load { now, .. }
            | Event::Hits { now, .. }
            | Event::Invalidate { now, .. }
            | Event::Clear { now } => now,
        }
    }
}

pub(super) struct Queue {
    /// Events held between two drains at most ([`QUEUE_EVENTS`] at first, then
    /// [`LEAST_QUEUE_EVENTS`] to [`super::MAX_QUEUE_EVENTS`]).
    pub(super) room: usize,
    pub(super) events: Vec<Event>,
    /// Heavy-key reports ([`REPORT_EVENTS`] at most).
    pub(super) reports: Vec<Event>,
    /// Events dropped because the queue was full, since the last drain.
    pub(super) dropped: u64,
    /// Heavy-key reports dropped (the report queue was full): a sample already, but the
    /// sample's byte luck ([`super::luck`]) must know its sums were short.
    pub(super) reports_dropped: u64,
}

impl Default for Queue {
    fn default() -> Self {
        Self::with_room(QUEUE_EVENTS)
    }
}

impl Queue {
    /// An empty queue with room for `room` events (its buffers are allocated at the first).
    pub(super) fn with_room(room: usize) -> Self {
        Self {
            room,
            events: Vec::new(),
            reports: Vec::new(),
            dropped: 0,
            reports_dropped: 0,
        }
    }

    /// Queues `event`, or counts it dropped when the queue is full. Buffers are allocated at
    /// the first event (a cache that is never read holds none).
    pub(super) fn push(&mut self, event: Event) {
        if let Event::Hits { .. } = event {
            if self.reports.len() < REPORT_EVENTS {
                if self.reports.capacity() == 0 {
                    self.reports.reserve_exact(REPORT_EVENTS);
                }
                self.reports.push(event);
            } else {
                self.reports_dropped += 1;
            }
            return;
        }
        if self.events.len() < self.room {
            self.reserve();
            self.events.push(event);
        } else {
            self.dropped += 1;
        }
    }

    /// Queues a `Clear` at `now`; a full queue drops what it holds instead (those events could
    /// only have changed which values the clear removes, and their counts).
    pub(super) fn push_clear(&mut self, now: u64) {
        if self.events.len() >= self.room {
            self.dropped += self.events.len() as u64;
            self.events.clear();
        }
        self.reserve();
        self.events.push(Event::Clear { now });
    }

    /// Events and reports queued.
    pub(super) fn len(&self) -> usize {
        self.events.len() + self.reports.len()
    }

    fn reserve(&mut self) {
        if self.events.capacity() == 0 {
            self.events.reserve_exact(self.room);
        }
    }
}
