//! Single flight: concurrent misses of one key share one load, and its outcome (value *or*
//! error) reaches every waiter.
//!
//! quick_cache's own placeholder hands a failed load to the next waiter, so N callers on a failing
//! source would load N times; this map publishes failures too. A leader that is dropped before it
//! finishes (its request was cancelled) closes its channel, and the waiters start over: one of
//! them becomes the next leader.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, RandomState};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};

use parking_lot::Mutex;
use tokio::sync::watch;

use crate::{Cached, Error};

/// The outcome of one load, as every waiter sees it.
pub(crate) type Outcome<V> = Result<Cached<V>, Error>;
type Channel<V> = watch::Receiver<Option<Outcome<V>>>;

/// One load in flight: its channel, and whether an invalidation of its key happened since it
/// started (then its value answers its callers but is never stored).
pub(crate) struct Flight<V> {
    sender: watch::Sender<Option<Outcome<V>>>,
    fenced: AtomicBool,
    /// A background refresh (refresh-ahead), not a caller's load.
    refresh: bool,
}

type Sender<V> = Arc<Flight<V>>;

const SHARDS: usize = 16;

pub(crate) struct Flights<K, V> {
    shards: [Mutex<HashMap<K, Sender<V>>>; SHARDS],
    hasher: RandomState,
}

/// Whether the caller loads or waits.
pub(crate) enum Role<'a, K: Hash + Eq + Clone, V> {
    Leader(Leader<'a, K, V>),
    /// Waits on a load in flight; `true` when that load is a background refresh.
    Follower(Channel<V>, bool),
}

/// The one caller that loads; publishing its outcome (or being dropped) ends the flight.
pub(crate) struct Leader<'a, K: Hash + Eq + Clone, V> {
    flights: &'a Flights<K, V>,
    key: Option<K>,
    sender: Sender<V>,
}

impl<K: Hash + Eq + Clone, V> Flights<K, V> {
    pub(crate) fn new() -> Self {
        Self {
            shards: std::array::from_fn(|_| Mutex::new(HashMap::new())),
            hasher: RandomState::new(),
        }
    }

    fn shard(&self, key: &K) -> &Mutex<HashMap<K, Sender<V>>> {
        &self.shards[self.hasher.hash_one(key) as usize % SHARDS]
    }

    /// Joins the flight of `key`, or starts one.
    pub(crate) fn join(&self, key: &K) -> Role<'_, K, V> {
        let mut shard = self.shard(key).lock();
        if let Some(flight) = shard.get(key) {
            return Role::Follower(flight.sender.subscribe(), flight.refresh);
        }
        Role::Leader(self.start(&mut shard, key, false))
    }

    /// Starts a background refresh's flight of `key`; `None` when a load of it is in flight
    /// already (its value will be fresh).
    pub(crate) fn lead_refresh(&self, key: &K) -> Option<Leader<'_, K, V>> {
        let mut shard = self.shard(key).lock();
        if shard.contains_key(key) {
            return None;
        }
        Some(self.start(&mut shard, key, true))
    }

    fn start(&self, shard: &mut HashMap<K, Sender<V>>, key: &K, refresh: bool) -> Leader<'_, K, V> {
        let sender = Arc::new(Flight {
            sender: watch::channel(None).0,
            fenced: AtomicBool::new(false),
            refresh,
        });
        shard.insert(key.clone(), Arc::clone(&sender));
        Leader {
            flights: self,
            key: Some(key.clone()),
            sender,
        }
    }

    /// Callers waiting on the load of `key` now, leader excluded.
    pub(crate) fn waiters(&self, key: &K) -> usize {
        self.shard(key)
            .lock()
            .get(key)
            .map_or(0, |s| s.sender.receiver_count())
    }

    /// Fences the load of `key` in flight, if any, and takes it out of the map: its value still
    /// answers the callers that joined it before, but a caller arriving after the invalidation
    /// starts a load of its own instead of joining one that began before it.
    pub(crate) fn fence(&self, key: &K) {
        if let Some(flight) = self.shard(key).lock().remove(key) {
            flight.fenced.store(true, SeqCst);
        }
    }

    /// [`Flights::fence`] for every load in flight whose key matches.
    pub(crate) fn fence_if(&self, predicate: impl Fn(&K) -> bool) {
        for shard in &self.shards {
            shard.lock().retain(|key, flight| {
                let fenced = predicate(key);
                if fenced {
                    flight.fenced.store(true, SeqCst);
                }
                !fenced
            });
        }
    }
}

impl<K: Hash + Eq + Clone, V> Leader<'_, K, V> {
    /// Publishes the outcome to every waiter and ends the flight.
    pub(crate) fn complete(mut self, outcome: Outcome<V>) {
        self.sender.sender.send_replace(Some(outcome));
        self.finish();
    }

    /// Whether its key was invalidated since the flight started.
    pub(crate) fn is_fenced(&self) -> bool {
        self.sender.fenced.load(SeqCst)
    }

    /// Removes the flight from the map; once the leader's handle is gone too, the channel closes
    /// and waiters that got no outcome start over.
    fn finish(&mut self) {
        if let Some(key) = self.key.take() {
            let mut shard = self.flights.shard(&key).lock();
            if shard
                .get(&key)
                .is_some_and(|s| Arc::ptr_eq(s, &self.sender))
            {
                shard.remove(&key);
            }
        }
    }
}

impl<K: Hash + Eq + Clone, V> Drop for Leader<'_, K, V> {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Waits for the leader's outcome; `None` if the leader gave up without one.
pub(crate) async fn wait<V>(mut channel: Channel<V>) -> Option<Outcome<V>> {
    match channel.wait_for(Option::is_some).await {
        Ok(outcome) => outcome.clone(),
        Err(_) => None,
    }
}
