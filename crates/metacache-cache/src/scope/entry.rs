//! One table's resolution inside a scope: the held value, its schedule, the one refresh that may
//! run for it, and the rules that decide what a caller gets (§8.2).
//!
//! # Invariants
//! - At most one refresh per entry runs at a time; it runs as a detached task, so a caller that
//!   goes away does not abort it, and a panicking resolver ends it as a failure.
//! - Nothing is handed out at or after its expiry, nor with less remaining life than the caller
//!   asked for.
//! - A failed attempt is not repeated before its backoff has passed; a caller starts at most one
//!   attempt and waits for at most one, so no caller loops on a source that keeps failing or on
//!   credentials that arrive expired.
//! - The entry's bytes are charged to its scope's budget while it holds a value and released when
//!   the last holder of the entry (the scope's map, a lease, a running refresh) lets it go.

use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::{Arc, Weak};
use std::time::Duration;

use metacache_ledger::Budget;
use parking_lot::Mutex;
use tokio::sync::watch;

use super::window::{Lifetime, Schedule, backoff, millis};
use super::{Resolution, ScopeError, ScopeKey, Shared, SourceFailure};

/// What a caller is handed: the resolution and the times that matter to it.
#[derive(Debug, Clone)]
pub struct Handout {
    /// The resolution, credentials included.
    pub resolution: Arc<Resolution>,
    /// The credentials' expiry as vended (`None`: no credentials, or no valid expiry).
    pub expires_at_millis: Option<u64>,
    /// When it is handed out no longer without a refresh: for credentials without a valid
    /// expiry, their assumed end.
    pub valid_until_millis: Option<u64>,
    /// When the next refresh is due.
    pub refresh_at_millis: u64,
    /// The last refresh failed while this value was still valid (it is served until its expiry).
    pub refresh_failed: Option<SourceFailure>,
}

/// A value the entry holds.
#[derive(Debug)]
struct Held {
    resolution: Arc<Resolution>,
    schedule: Schedule,
    fetched_ms: u64,
}

#[derive(Debug, Default)]
struct State {
    current: Option<Held>,
    refreshing: bool,
    /// Failed attempts in a row.
    failures: u32,
    retry_at_ms: u64,
    last_failure: Option<SourceFailure>,
    /// Bytes charged to the budget for `current`.
    charged: u64,
}

/// One table of a scope.
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) key: ScopeKey,
    state: Mutex<State>,
    /// Bumped when an attempt ends, for the callers waiting on it.
    ended: Arc<watch::Sender<u64>>,
    pub(super) leases: AtomicUsize,
    pub(super) last_used_ms: AtomicU64,
    budget: Arc<Budget>,
}

impl Drop for Entry {
    fn drop(&mut self) {
        self.budget.release(self.state.get_mut().charged);
    }
}

impl Entry {
    pub(super) fn new(key: ScopeKey, budget: Arc<Budget>, now_ms: u64) -> Self {
        Self {
            key,
            state: Mutex::new(State::default()),
            ended: Arc::new(watch::Sender::new(0)),
            leases: AtomicUsize::new(0),
            last_used_ms: AtomicU64::new(now_ms),
            budget,
        }
    }

    /// The credential expiry (vended or assumed) of the held value, if it has credentials.
    pub(super) fn expiry_ms(&self) -> Option<u64> {
        let state = self.state.lock();
        let held = state.current.as_ref()?;
        (held.schedule.expires_at_ms != u64::MAX).then_some(held.schedule.expires_at_ms)
    }

    /// Bytes charged for the held value.
    pub(super) fn charged(&self) -> u64 {
        self.state.lock().charged
    }

    /// The resolution for a caller that needs `min_remaining_ms` of credential life, refreshing
    /// first when it must (see the module invariants). Waits for a running refresh at most
    /// `wait` (real time).
    pub(super) async fn get(
        self: &Arc<Self>,
        shared: &Arc<Shared>,
        min_remaining_ms: u64,
        wait: Duration,
    ) -> Result<Handout, ScopeError> {
        let deadline = tokio::time::Instant::now() + wait;
        let mut started = false;
        let mut waited = false;
        loop {
            let mut ended = self.ended.subscribe();
            {
                let now = shared.clock.wall_millis();
                let mut state = self.state.lock();
                let may_start = |state: &State, started: bool| {
                    !state.refreshing && now >= state.retry_at_ms && !started
                };
                // (usable, due, lifetime) of the held value.
                let view = state.current.as_ref().map(|held| {
                    let remaining = held.schedule.expires_at_ms.saturating_sub(now);
                    let usable = remaining > 0 && remaining >= min_remaining_ms;
                    let due = now >= held.schedule.refresh_at_ms || !usable;
                    let lifetime = held.schedule.expires_at_ms.saturating_sub(held.fetched_ms);
                    (usable, due, lifetime)
                });
                if let Some((usable, _, lifetime)) = view
                    && !usable
                    && min_remaining_ms > lifetime
                    && !state.refreshing
                {
                    // Asking for more life than this source's credentials ever have would
                    // refresh for nothing.
                    shared.count(|c| &c.refused);
                    return Err(ScopeError::LifetimeTooShort {
                        min_remaining_ms,
                        lifetime_ms: lifetime,
                    });
                }
                if view.is_none_or(|(_, due, _)| due) && may_start(&state, started) {
                    started = true;
                    self.start(&mut state, shared);
                }
                if let Some(held) = state.current.as_ref()
                    && view.is_some_and(|(usable, _, _)| usable)
                {
                    let ends = held.schedule.expires_at_ms;
                    let refresh_failed = (state.failures > 0)
                        .then(|| state.last_failure.clone())
                        .flatten();
                    return Ok(Handout {
                        resolution: Arc::clone(&held.resolution),
                        expires_at_millis: held.schedule.expiry_vended.then_some(ends),
                        valid_until_millis: (ends != u64::MAX).then_some(ends),
                        refresh_at_millis: held.schedule.refresh_at_ms,
                        refresh_failed,
                    });
                }
                if !state.refreshing {
                    // Nothing usable and nothing running: the last attempt failed (we are in
                    // its backoff, or it was ours), or ours ended with too short a life.
                    shared.count(|c| &c.refused);
                    return Err(match &state.last_failure {
                        Some(failure) if state.failures > 0 => ScopeError::Source {
                            failure: failure.clone(),
                            retry_at_millis: state.retry_at_ms,
                        },
                        _ => ScopeError::LifetimeTooShort {
                            min_remaining_ms,
                            lifetime_ms: state.current.as_ref().map_or(0, |h| {
                                h.schedule.expires_at_ms.saturating_sub(h.fetched_ms)
                            }),
                        },
                    });
                }
                if waited {
                    // We already saw one attempt end; another one is someone else's.
                    shared.count(|c| &c.refused);
                    return Err(ScopeError::StillRefreshing);
                }
            }
            shared.count(|c| &c.waits);
            match tokio::time::timeout_at(deadline, ended.changed()).await {
                Ok(_) => waited = true,
                Err(_) => {
                    shared.count(|c| &c.refused);
                    return Err(ScopeError::WaitTimedOut {
                        waited_ms: millis(wait),
                    });
                }
            }
        }
    }

    /// Starts the entry's one refresh as a detached task.
    fn start(self: &Arc<Self>, state: &mut State, shared: &Arc<Shared>) {
        state.refreshing = true;
        let previous = state.current.as_ref().map(|h| Arc::clone(&h.resolution));
        // The task does not keep the entry alive: an entry its scope let go of meanwhile takes
        // the outcome nowhere (and charges nothing).
        let entry = Arc::downgrade(self);
        let ended = Arc::clone(&self.ended);
        let task_shared = Arc::clone(shared);
        let fetch = (shared.resolver)(self.key.clone(), previous);
        shared.count(|c| &c.resolutions);
        let task = async move {
            // Ends the attempt as a failure if the resolver panics (the task unwinds).
            let mut guard = Attempt {
                entry,
                ended,
                shared: &task_shared,
                done: false,
            };
            let outcome = fetch.await;
            guard.finish(outcome);
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(task);
            }
            Err(_) => {
                // No runtime (an embedding engine calling from plain threads is not supported:
                // `access` is async): the attempt fails at once.
                state.refreshing = false;
                let failure = SourceFailure::new("no async runtime to run the refresh on");
                self.fail(state, shared, failure);
            }
        }
    }

    /// Records a failed attempt: backoff, counters, and the waiters woken.
    fn fail(&self, state: &mut State, shared: &Shared, failure: SourceFailure) {
        let now = shared.clock.wall_millis();
        state.failures = state.failures.saturating_add(1);
        state.retry_at_ms = now.saturating_add(millis(backoff(state.failures)));
        state.last_failure = Some(failure);
        shared.count(|c| &c.failures);
        tracing::debug!(
            table = %self.key,
            failures = state.failures,
            "a scoped refresh failed; retrying after its backoff"
        );
    }
}

/// One running attempt; finishing (or unwinding) ends it exactly once. Waiters are woken after
/// the attempt has let go of the entry.
struct Attempt<'a> {
    entry: Weak<Entry>,
    ended: Arc<watch::Sender<u64>>,
    shared: &'a Arc<Shared>,
    done: bool,
}

impl Attempt<'_> {
    fn finish(&mut self, outcome: Result<Resolution, crate::refresh::RefreshError>) {
        self.done = true;
        let Some(entry) = self.entry.upgrade() else {
            return;
        };
        let shared = self.shared;
        let now = shared.clock.wall_millis();
        let mut state = entry.state.lock();
        state.refreshing = false;
        let outcome = outcome.map_err(|error| {
            let mut failure = SourceFailure::from_error(error);
            // A source that echoes the credentials it vended before does not leak them here.
            if let Some(held) = &state.current {
                failure.scrub(&held.resolution.storage_options);
            }
            failure
        });
        let stored = outcome.and_then(|resolution| {
            let lifetime = Lifetime::of(
                resolution.has_credentials(),
                resolution.expires_at_millis,
                now,
            );
            let schedule = lifetime.schedule(now, &shared.window).ok_or_else(|| {
                SourceFailure::new("the source vended credentials that had already expired")
            })?;
            let bytes = resolution.charge();
            if bytes > state.charged {
                entry
                    .budget
                    .try_reserve(bytes - state.charged)
                    .map_err(|rejection| {
                        SourceFailure::new(format!(
                            "no room for the resolution in the memory quota ({:?} level full)",
                            rejection.level
                        ))
                    })?;
            } else {
                entry.budget.release(state.charged - bytes);
            }
            state.charged = bytes;
            Ok(Held {
                resolution: Arc::new(resolution),
                schedule,
                fetched_ms: now,
            })
        });
        match stored {
            Ok(held) => {
                if state.current.is_some() {
                    shared.count(|c| &c.refreshes);
                }
                state.current = Some(held);
                state.failures = 0;
                state.retry_at_ms = 0;
                state.last_failure = None;
            }
            Err(failure) => entry.fail(&mut state, shared, failure),
        }
        drop(state);
        drop(entry);
        self.ended.send_modify(|n| *n += 1);
    }
}

impl Drop for Attempt<'_> {
    fn drop(&mut self) {
        if !self.done
            && let Some(entry) = self.entry.upgrade()
        {
            let failure = SourceFailure::new("the resolver panicked");
            let mut state = entry.state.lock();
            state.refreshing = false;
            entry.fail(&mut state, self.shared, failure);
            drop(state);
            drop(entry);
            self.ended.send_modify(|n| *n += 1);
        }
    }
}
