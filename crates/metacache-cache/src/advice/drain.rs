//! Draining an advisor's queue into its simulation, off the request path: the events in the
//! order of their times, a flooding key made heavy, a queue that overflowed grown (or, at its
//! largest, the sample shed), the lock-free views the hit path reads (threshold, muted keys,
//! filter of heavy keys) refreshed, and the memory charged.
//!
//! # Invariants
//! - The simulation's clock only moves forward: the request and report queues, each in order,
//!   are merged by time.
//! - After a drain the reservation covers what the advisor holds, or the advisor stopped.

use std::sync::atomic::Ordering::Relaxed;

use super::queue::Event;
use super::{
    Advisor, CHUNK, FIXED_BYTES, HEAVY_FILTER_WORDS, MAX_QUEUE_EVENTS, MIN_SAMPLE_KEYS, MUTED_KEYS,
    REPORT_EVENTS, Served, Simulation, heavy_filter_bit,
};

impl Advisor {
    /// Runs the queued events through the simulation; `served` reads the cache's totals. A
    /// queue that overflowed grows; one that overflowed at its largest lowers the sample to
    /// what the advisor kept up with.
    pub(crate) fn drain(&self, served: impl FnOnce() -> Served) {
        self.drain_locked(&mut self.simulation.lock(), served);
    }

    pub(super) fn drain_locked(
        &self,
        simulation: &mut Simulation,
        served: impl FnOnce() -> Served,
    ) {
        if self.retired.load(Relaxed) {
            return;
        }
        let (dropped, reports_dropped, room) = {
            let mut queue = self.queue.lock();
            if queue.events.is_empty()
                && queue.reports.is_empty()
                && queue.dropped == 0
                && queue.reports_dropped == 0
            {
                return;
            }
            std::mem::swap(&mut queue.events, &mut simulation.spare);
            std::mem::swap(&mut queue.reports, &mut simulation.spare_reports);
            (
                std::mem::take(&mut queue.dropped),
                std::mem::take(&mut queue.reports_dropped),
                queue.room,
            )
        };
        let served = served();
        let state = &mut simulation.state;
        state.set_half_life(self.half_life.load(Relaxed));
        let processed = simulation.spare.len();
        if dropped > 0 || reports_dropped > 0 {
            state.luck.lost();
        }
        if dropped > 0 {
            // An overflow: a key behind an eighth of the queue floods it — heavy from now on,
            // so that its hits stop being queued ([`MUTED_KEYS`]) before the queue grows or the
            // sample sheds keys.
            let mut counts: std::collections::HashMap<u64, (usize, u64)> = Default::default();
            for event in &simulation.spare {
                if let Event::Request { hash, charge, .. } = *event {
                    let count = counts.entry(hash).or_default();
                    count.0 += 1;
                    count.1 = count.1.max(charge);
                }
            }
            for (hash, (count, charge)) in counts {
                if count >= processed / 8 {
                    state.flood(hash, charge);
                }
            }
        }
        // The two queues in the order of their times (each is in order), as the simulation's
        // clock only moves forward.
        {
            let mut reports = simulation.spare_reports.drain(..).peekable();
            let mut requests = simulation.spare.drain(..).peekable();
            let events = std::iter::from_fn(|| match (reports.peek(), requests.peek()) {
                (Some(r), Some(q)) if r.now() <= q.now() => reports.next(),
                (Some(_), None) => reports.next(),
                _ => requests.next(),
            });
            for event in events {
                match event {
                    Event::Request { hash, charge, now } => {
                        state.request(hash, charge, now, served);
                    }
                    Event::Load { hash, charge, now } => state.learn(hash, charge, now),
                    Event::Hits {
                        hash,
                        charge,
                        now,
                        report,
                    } => state.heavy(hash, charge, report, now, served),
                    Event::Invalidate { hash, .. } => state.invalidate(hash, false),
                    Event::Clear { .. } => state.clear(),
                }
            }
        }
        simulation.dropped += dropped;
        let largest = room >= MAX_QUEUE_EVENTS;
        if dropped > 0 && !largest {
            // Room first: the drain may only have come late. The queue's buffers grow as they
            // fill, charged below.
            self.queue.lock().room = (room * 2).min(MAX_QUEUE_EVENTS);
        } else if dropped > 0 && simulation.overflowed {
            // Keep the share of the sample the queue had room for, with a margin, and at
            // least a quarter of it per drain.
            let kept = processed as f64 / (processed as f64 + dropped as f64);
            let keys = (state.sampler.len() as f64 * (kept * 0.8).max(0.25)) as usize;
            state.shed(keys.max(MIN_SAMPLE_KEYS));
        }
        simulation.overflowed = dropped > 0 && largest;
        state.update_promote();
        self.threshold.store(state.sampler.threshold(), Relaxed);
        let muted = state.heavy_sampled(MUTED_KEYS);
        // None muted while the list changes (a hit queued then is simulated, or ignored as
        // heavy: no harm either way).
        self.muted_len.store(0, Relaxed);
        for (i, slot) in self.muted.iter().enumerate() {
            slot.store(muted.get(i).copied().unwrap_or(u64::MAX), Relaxed);
        }
        self.muted_len.store(muted.len(), Relaxed);
        let mut filter = [0u64; HEAVY_FILTER_WORDS];
        for hash in state.heavy_keys() {
            let (word, bit) = heavy_filter_bit(hash);
            filter[word] |= bit;
        }
        for (slot, word) in self.heavy_filter.iter().zip(filter) {
            slot.store(word, Relaxed);
        }
        self.charge(simulation);
    }

    /// Keeps the reservation at or above what the advisor holds. A refusal stops the advisor
    /// for good (its memory would otherwise be held outside the ledger).
    pub(super) fn charge(&self, simulation: &mut Simulation) {
        let room = self.queue.lock().room;
        let queues = 2 * (room + REPORT_EVENTS) * std::mem::size_of::<Event>();
        let held =
            FIXED_BYTES + queues as u64 + simulation.state.bytes() + self.outside.load(Relaxed);
        if held <= simulation.reserved {
            return;
        }
        let more = (held - simulation.reserved).div_ceil(CHUNK) * CHUNK;
        match self.budget.try_reserve(more) {
            Ok(()) => simulation.reserved += more,
            Err(_) => {
                tracing::info!(
                    bytes = held,
                    "the ledger refused the quota advisor's memory; it stops for this cache"
                );
                self.stop(simulation);
            }
        }
    }
}
