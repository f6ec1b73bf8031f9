//! How the state forgets: every half-life the counts halve — the miniatures', the heavy keys',
//! the sample's (whose idle keys leave it, whose limit, if a flood lowered it and a half-life
//! passed without another, doubles back, and whose rate may rise again), the traces', the
//! cache's aged totals. The half-life may change while the cache runs (the node's key); the
//! next aging is then one new half-life after the last one.
//!
//! Invariants: agings happen in order of the simulation's clock, each one half-life after the
//! one before; a clock that jumped (a cache idle for days, a half-life made short) ages at most
//! [`MAX_AGINGS`] times at once — by then every count is below any that matters — and skips the
//! rest.

use super::{Served, State};

/// The most agings one request performs: after this many halvings a count of 2^63 requests
/// is below one.
const MAX_AGINGS: u64 = 64;

impl State {
    /// Sets the half-life, in nanoseconds (at least 1): a change moves the next aging to one
    /// new half-life after the last aging.
    pub(in super::super) fn set_half_life(&mut self, half_life: u64) {
        let half_life = half_life.max(1);
        if half_life != self.half_life {
            self.changed();
            let last = self.next_age.saturating_sub(self.half_life);
            self.next_age = last.saturating_add(half_life);
            self.half_life = half_life;
        }
    }

    /// Ages the counts for every half-life that ended by `now` (at most [`MAX_AGINGS`]);
    /// `served` are the cache's totals now.
    /// Returns whether it aged.
    pub(super) fn age_until(&mut self, now: u64, served: Served) -> bool {
        if now < self.next_age {
            return false;
        }
        let since = served.since(self.aging_mark);
        self.aged[0] += since[0];
        self.aged[1] += since[1];
        self.aging_mark = served;
        let due = (now - self.next_age) / self.half_life + 1;
        if due > MAX_AGINGS {
            self.next_age = self
                .next_age
                .saturating_add((due - MAX_AGINGS).saturating_mul(self.half_life));
        }
        while now >= self.next_age {
            for mini in self.all() {
                mini.age();
            }
            self.heavy.age();
            self.luck.age();
            let idle = self.sampler.age();
            self.left_idle(&idle);
            if !std::mem::take(&mut self.shed_since_aging) {
                self.sampler.regrow();
            }
            if let Some(before) = self.sampler.raise() {
                self.rescaled(before);
            }
            self.traces.scale(0.5);
            self.clears /= 2.0;
            self.aged = self.aged.map(|count| count / 2.0);
            self.next_age = self.next_age.saturating_add(self.half_life);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::AdvisorOptions;
    use super::super::super::mini::Policy;
    use super::*;
    use crate::slot::NEVER;

    fn state(half_life: u64) -> State {
        let policy = Policy {
            count_capacity: 1_000,
            ttl_nanos: NEVER,
            after_access: false,
            margin_nanos: 0,
        };
        State::new(policy, AdvisorOptions::default(), 0, half_life)
    }

    fn requests(state: &State, hash: u64) -> f64 {
        state.sampler.get(hash).map_or(0.0, |key| key.requests)
    }

    #[test]
    fn a_new_half_life_counts_from_the_last_aging() {
        let served = Served::default();
        let mut state = state(1_000);
        for now in [1, 2, 3, 4] {
            state.request(7, 100, now, served);
        }
        state.set_half_life(10);
        assert_eq!(state.next_age, 10, "one new half-life after the start");
        state.request(7, 100, 25, served);
        // Aged at 10 and 20: 4 / 4 + 1.
        assert!(
            (requests(&state, 7) - 2.0).abs() < 1e-9,
            "{}",
            requests(&state, 7)
        );
        assert_eq!(state.next_age, 30);
        state.set_half_life(1_000);
        assert_eq!(
            state.next_age, 1_020,
            "one new half-life after the last aging, 20"
        );
    }

    #[test]
    fn a_limit_lowered_by_a_flood_grows_back_after_a_half_life_without_one() {
        let served = Served::default();
        let mut state = state(10);
        let configured = state.sampler.limit();
        state.shed(100);
        assert_eq!(state.sampler.limit(), 100);
        state.request(1, 100, 10, served);
        assert_eq!(
            state.sampler.limit(),
            100,
            "shed in the half-life that ended"
        );
        state.request(1, 100, 20, served);
        assert_eq!(state.sampler.limit(), 200, "a half-life without a flood");
        state.shed(150);
        state.request(1, 100, 30, served);
        assert_eq!(state.sampler.limit(), 150, "shed again: it waits");
        state.request(1, 100, 1_000, served);
        assert_eq!(state.sampler.limit(), configured, "back, and no further");
    }

    #[test]
    fn a_clock_that_jumped_ages_a_bounded_number_of_times() {
        let served = Served::default();
        let mut state = state(1);
        for _ in 0..100 {
            state.request(7, 100, 0, served);
        }
        // A trillion half-lives later: 64 agings, not a trillion (the test would not end).
        let now = 1_000_000_000_000;
        state.request(9, 100, now, served);
        assert_eq!(
            state.next_age,
            now + 1,
            "the next aging is the first after now"
        );
        assert_eq!(requests(&state, 7), 0.0, "the idle key left the sample");
        assert!((requests(&state, 9) - 1.0).abs() < 1e-9);
    }
}
