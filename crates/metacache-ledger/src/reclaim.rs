//! Reclamation requests: a level that is (or would be) over its limit asks for bytes to be freed
//! under it. Requests for the same level merge, keeping the largest; one worker drains them.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use crate::{Budget, Level};

/// A request to free room under one level of the hierarchy.
#[derive(Debug, Clone)]
pub struct ReclaimRequest {
    scope: Arc<Budget>,
    needed: u64,
    origin: Option<Arc<Budget>>,
}

impl ReclaimRequest {
    pub(crate) fn new(scope: Arc<Budget>, needed: u64, origin: Option<Arc<Budget>>) -> Self {
        Self {
            scope,
            needed,
            origin,
        }
    }

    /// The level that is short (an entry, entry group, catalog or the node).
    pub fn scope(&self) -> &Arc<Budget> {
        &self.scope
    }

    /// Which kind of level is short.
    pub fn level(&self) -> Level {
        self.scope.level()
    }

    /// Free room the requester needed under the scope's limit (0 when a limit was lowered and
    /// the level only has to come back under it).
    pub fn needed(&self) -> u64 {
        self.needed
    }

    /// The entry budget whose admission failed, if the request came from one; reclamation looks
    /// at that entry's catalog first.
    pub fn origin(&self) -> Option<&Arc<Budget>> {
        self.origin.as_ref()
    }

    /// Bytes to evict under the scope now so that `needed` bytes fit under its limit; 0 when
    /// they already fit or the scope no longer has a limit.
    pub fn deficit(&self) -> u64 {
        match self.scope.limit() {
            None => 0,
            Some(limit) => self
                .scope
                .used()
                .saturating_add(self.needed)
                .saturating_sub(limit),
        }
    }
}

#[derive(Default)]
struct QueueState {
    requests: Vec<ReclaimRequest>,
    closed: bool,
}

/// The merged queue of pending requests, shared by every budget of one ledger.
#[derive(Default)]
pub(crate) struct ReclaimQueue {
    state: Mutex<QueueState>,
    ready: Condvar,
}

impl ReclaimQueue {
    fn lock(&self) -> MutexGuard<'_, QueueState> {
        // The queue holds plain data; a panic elsewhere cannot leave it inconsistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds a request, merging it with a pending one for the same scope (largest wins).
    pub(crate) fn push(&self, request: ReclaimRequest) {
        let mut state = self.lock();
        if state.closed {
            return;
        }
        match state
            .requests
            .iter_mut()
            .find(|r| Arc::ptr_eq(&r.scope, &request.scope))
        {
            Some(pending) if pending.needed >= request.needed => {}
            Some(pending) => *pending = request,
            None => state.requests.push(request),
        }
        drop(state);
        self.ready.notify_one();
    }

    /// Waits up to `timeout` until a request is pending; returns whether one is.
    pub(crate) fn wait_ready(&self, timeout: Duration) -> bool {
        let state = self.lock();
        let state = self
            .ready
            .wait_timeout_while(state, timeout, |s| s.requests.is_empty() && !s.closed)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
        !state.requests.is_empty()
    }

    /// Takes the request with the largest need, if any.
    pub(crate) fn pop(&self) -> Option<ReclaimRequest> {
        let mut state = self.lock();
        let largest = state
            .requests
            .iter()
            .enumerate()
            .max_by_key(|(_, r)| r.needed)
            .map(|(i, _)| i)?;
        Some(state.requests.swap_remove(largest))
    }

    pub(crate) fn snapshot(&self) -> Vec<ReclaimRequest> {
        let mut requests = self.lock().requests.clone();
        requests.sort_by_key(|r| std::cmp::Reverse(r.needed));
        requests
    }

    pub(crate) fn close(&self) {
        let mut state = self.lock();
        state.closed = true;
        state.requests.clear();
        drop(state);
        self.ready.notify_all();
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.lock().closed
    }
}
