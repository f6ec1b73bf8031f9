//! Draining an advisor's queue into its simulation, off the request path: the events in the
//! order of their times, a flooding key made heavy, a queue that overflowed grown (or, at its
//! largest, the sample shed) and one that stayed far from full lowered, the lock-free views the
//! hit path reads (threshold, muted keys, filter of heavy keys) refreshed, and the memory
//! charged.
//!
//! # Invariants
//! - The simulation's clock only moves forward: the request and report queues, each in order,
//!   are merged by time.
//! - After a drain the reservation covers what the advisor holds, or the advisor stopped.

use std::sync::atomic::Ordering::Relaxed;

use super::queue::{Event, LEAST_QUEUE_EVENTS, QUEUE_REVIEW};
use super::{
    Advisor, CHUNK, FIXED_BYTES, HEAVY_FILTER_WORDS, MAX_QUEUE_EVENTS, MIN_SAMPLE_KEYS, MUTED_KEYS,
    REPORT_EVENTS, Served, Simulation, heavy_filter_bit,
};
use crate::clock::nanos;

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
        // The cache's clock at the last event drained (each queue is in order).
        let latest = [&simulation.spare, &simulation.spare_reports]
            .iter()
            .filter_map(|queue| queue.last().map(Event::now))
            .max();
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
        if dropped > 0 {
            simulation.review_at = None;
        } else if let Some(now) = latest {
            self.review_queue(simulation, processed, room, now);
        }
        let state = &mut simulation.state;
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

    /// Keeps the reservation at or above what the advisor holds, and within a CHUNK of it.
    /// Above its cap (its share of the node's advisors' memory), the sample is lowered first
    /// ([`Advisor::fit`]); well under it, a sample lowered before may grow back. A refused
    /// reservation lowers the sample to what is reserved already, and if even that does not
    /// fit, stops the advisor until the governor restarts it (its memory would otherwise be
    /// held outside the ledger).
    pub(super) fn charge(&self, simulation: &mut Simulation) {
        let mut held = self.held(simulation);
        let cap = self.cap.load(Relaxed);
        if held > cap {
            held = self.fit(simulation, cap, held);
        } else if held <= cap / 2 {
            let ceiling = simulation.state.ceiling();
            simulation.state.lift(ceiling.saturating_mul(2));
        }
        // Held up to a CHUNK beyond what is needed, so that a reservation hovering at a CHUNK's
        // edge does not go back and forth — none beyond it above the cap.
        let wanted = held.div_ceil(CHUNK) * CHUNK;
        let slack = if simulation.reserved > cap { 0 } else { CHUNK };
        if simulation.reserved > wanted + slack {
            self.budget.release(simulation.reserved - wanted);
            simulation.reserved = wanted;
        }
        if held <= simulation.reserved {
            return;
        }
        match self.budget.try_reserve(wanted - simulation.reserved) {
            Ok(()) => simulation.reserved = wanted,
            Err(_) => {
                let reserved = simulation.reserved;
                let least = self.fit(simulation, reserved, held);
                if least > reserved {
                    tracing::info!(
                        bytes = least,
                        "the ledger refused the quota advisor's memory; it waits for room"
                    );
                    self.needs.store(self.least(simulation), Relaxed);
                    self.starved.store(true, Relaxed);
                    self.stop(simulation);
                }
            }
        }
    }

    /// What the advisor holds now: itself, its queues' buffers, its simulation and the keys
    /// the cache keeps for it.
    fn held(&self, simulation: &Simulation) -> u64 {
        let room = self.queue.lock().room;
        FIXED_BYTES + queue_bytes(room) + simulation.state.bytes() + self.outside.load(Relaxed)
    }

    /// What the advisor would hold restarted with its sample as it is: itself, queues at
    /// their least and its simulation (the keys the cache keeps for it go as it stops).
    fn least(&self, simulation: &Simulation) -> u64 {
        FIXED_BYTES + queue_bytes(LEAST_QUEUE_EVENTS) + simulation.state.bytes()
    }

    /// Lowers the sample so that the advisor holds at most `target` of its `held` bytes, or
    /// to [`MIN_SAMPLE_KEYS`]; returns what it holds after. One cut: the simulation's bytes
    /// are cut in proportion to what the target leaves them beside the parts that do not
    /// shrink with the sample (itself, its queues, the kept keys), aiming at 7/8 of the target
    /// so that a share falling a little at a time does not cut it at every drain. Each cut
    /// rebuilds the miniatures' maps, so an advisor that cannot fit (its fixed parts alone
    /// above the target) goes to the least sample at once rather than a key at a time.
    fn fit(&self, simulation: &mut Simulation, target: u64, held: u64) -> u64 {
        let keys = simulation.state.sampler.len();
        if held <= target || keys <= MIN_SAMPLE_KEYS {
            return held;
        }
        let rate = simulation.state.sampler.rate();
        let simulated = simulation.state.bytes();
        let fixed = held.saturating_sub(simulated);
        let room = (target - target / 8).saturating_sub(fixed);
        let share = room as f64 / simulated.max(1) as f64;
        let fitting = ((keys as f64 * share) as usize).clamp(MIN_SAMPLE_KEYS, keys - 1);
        simulation.state.fit(fitting);
        self.threshold
            .store(simulation.state.sampler.threshold(), Relaxed);
        let lowered = simulation.state.sampler.rate() / rate;
        if lowered < 1.0 {
            self.shrink_queue(simulation, lowered);
        }
        self.held(simulation)
    }

    /// The sample's rate fell to `lowered` times what it was (a fit): fewer events come
    /// between two drains, and the queue's room — grown for the events at the old rate — is
    /// lowered in proportion (a power of two, at least [`LEAST_QUEUE_EVENTS`]). A queue that
    /// overflows again grows again.
    fn shrink_queue(&self, simulation: &mut Simulation, lowered: f64) {
        let room = self.queue.lock().room;
        let needed = (room as f64 * lowered).ceil() as usize;
        self.lower_room(simulation, needed.next_power_of_two());
    }

    /// A drain of `processed` events that lost none, the last at `now`, from a queue of
    /// `room`: once the drains of [`QUEUE_REVIEW`] all took at most an eighth of the room, the
    /// room is lowered to four times the busiest (a power of two). A cache whose requests
    /// slowed gives back the buffers its busy hours grew; one that turns busy again drops
    /// events at a drain or two while the room doubles back (counted in `dropped_events`).
    fn review_queue(&self, simulation: &mut Simulation, processed: usize, room: usize, now: u64) {
        simulation.busiest = simulation.busiest.max(processed);
        match simulation.review_at {
            Some(at) if now < at => {}
            Some(_) => {
                let busiest = std::mem::take(&mut simulation.busiest);
                simulation.review_at = Some(now.saturating_add(nanos(QUEUE_REVIEW)));
                if busiest.saturating_mul(8) <= room {
                    self.lower_room(simulation, (busiest.max(1) * 4).next_power_of_two());
                }
            }
            None => {
                simulation.busiest = processed;
                simulation.review_at = Some(now.saturating_add(nanos(QUEUE_REVIEW)));
            }
        }
    }

    /// Lowers the queue's room to `room` (at least [`LEAST_QUEUE_EVENTS`]) unless it holds
    /// more events already; the spare buffer is given back, to be allocated at the new room.
    fn lower_room(&self, simulation: &mut Simulation, room: usize) {
        let mut queue = self.queue.lock();
        let room = room.max(LEAST_QUEUE_EVENTS);
        if room >= queue.room || queue.events.len() > room {
            return;
        }
        queue.room = room;
        queue.events.shrink_to(room);
        simulation.spare = Vec::new();
    }
}

/// Bytes of an advisor's queue buffers at `room` events: the queue's and the drained ones kept
/// for the next drain, each with the reports' own.
fn queue_bytes(room: usize) -> u64 {
    (2 * (room + REPORT_EVENTS) * std::mem::size_of::<Event>()) as u64
}

#[cfg(test)]
mod tests {
    use metacache_ledger::Ledger;

    use super::super::{QUEUE_EVENTS, test_advisor};
    use super::*;

    /// A quiet cache's queue gives back the room a first burst or busy hours grew: after a
    /// minute of drains of a few events, its room is four times the busiest (at least
    /// [`LEAST_QUEUE_EVENTS`]) and the reservation falls by the buffers. Turning busy again
    /// costs events at a drain or two while the room doubles back, then none.
    #[test]
    fn a_quiet_queue_lowers_its_room_and_a_busy_one_grows_back() {
        let ledger = Ledger::new(None);
        let advisor = test_advisor(&ledger);
        let second = 1_000_000_000u64;
        let served = Served::default;
        let room = || advisor.queue.lock().room;
        let mut now = 1;
        // A first burst fills the first room.
        for key in 0..400u64 {
            advisor.record(key, 100, now);
        }
        advisor.drain(served);
        let busy = advisor.reserved();
        assert_eq!(room(), QUEUE_EVENTS);
        // Three minutes of three events every 25 ms (120 a second): the first minute's review
        // still sees the burst; the second's lowers the room.
        for drain in 0..7_200u64 {
            for i in 0..3 {
                advisor.record((drain * 3 + i) % 400, 100, now);
            }
            now += second / 40;
            advisor.drain(served);
        }
        assert_eq!(
            room(),
            LEAST_QUEUE_EVENTS,
            "four times 3 events, at least the least"
        );
        let quiet = advisor.reserved();
        let buffers = queue_bytes(QUEUE_EVENTS) - queue_bytes(LEAST_QUEUE_EVENTS);
        assert!(
            quiet + buffers <= busy + CHUNK,
            "the buffers are given back: {busy} B then {quiet} B"
        );
        assert!(advisor.simulation.lock().spare.capacity() <= LEAST_QUEUE_EVENTS);
        // Busy again: 200 events a drain.
        let mut lost = Vec::new();
        for _ in 0..8 {
            for key in 0..200u64 {
                advisor.record(key, 100, now);
            }
            now += second / 40;
            advisor.drain(served);
            lost.push(advisor.simulation.lock().dropped);
        }
        assert!(lost[0] > 0, "the first busy drain overflows the quiet room");
        assert_eq!(room(), 256, "doubled back to the first room above 200");
        assert_eq!(
            lost[7], lost[3],
            "none lost once the room is back: {lost:?}"
        );
        assert!(!advisor.is_retired());
    }
}
