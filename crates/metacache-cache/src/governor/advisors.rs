//! The advisors' share of the node: the quota advisors of every cache are charged under the
//! node in a level of their own (`#advisors`, [`advisors_limit`]), and this module decides what
//! that share leaves the caches' values ([`NodeShare`]) and how the advisors split it among
//! themselves ([`advisors_level`], run by the governor's advisor thread after each drain).
//!
//! # Invariants
//! - While any advisor runs (or waits for room), no cache's map counts the share as room for
//!   values.
//! - Running advisors are capped at one max-min fair level of the share less its headroom:
//!   an advisor holding less than the level keeps what it holds; the others lower their
//!   samples to fit it. An advisor refused its memory waits, holding nothing, and is restarted
//!   when the level affords what it needed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed, Ordering::SeqCst};
use std::time::Duration;

use metacache_ledger::{Budget, Level};

use super::{Reclaimable, Shared};

/// What one cache's quota advisor holds of the node's advisors' memory ([`advisors_level`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdvisorClaim {
    /// Bytes it holds in the ledger.
    pub reserved: u64,
    /// It stopped because the ledger refused its memory, and waits for room.
    pub starved: bool,
    /// For one waiting: what it held, its sample as small as it goes, when it was refused —
    /// it is restarted only for a share of at least this.
    pub needs: u64,
}

/// What a node limit leaves the caches' values. Quota advisors are charged under the node, in a
/// level of their own that holds at most [`advisors_limit`]; a map that took the node's whole
/// limit as its capacity would fill it, and the node's ledger would then refuse its stores for
/// room the map believes it has (each refusal reclaiming 1/32 of the limit: under a binding node
/// limit, reclamation rather than the policy chose what stayed — docs/benchmarks.md, "Memory
/// under a binding limit"). So while any advisor runs on the node, a map counts the node's
/// limit less the advisors' share; a node without advisors lends its caches the whole limit.
pub(crate) struct NodeShare {
    pub(super) advisors: Arc<Budget>,
    /// Set when a cache with an advisor is built; cleared by the governor's threads once no
    /// live cache's advisor runs (all dropped or stopped), and set again by them if one is
    /// found running ([`Shared::settle_share`]). Each change rescales the live caches' maps.
    pub(super) advising: AtomicBool,
    /// What the last share found ([`AdvisorsShare`]); the level `u64::MAX` when none bound.
    pub(super) level: AtomicU64,
    pub(super) running: AtomicUsize,
    pub(super) waiting: AtomicUsize,
}

/// How the node's advisors shared their memory at the advisor thread's last round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdvisorsShare {
    /// The most each advisor may hold ([`advisors_level`]); `None` while they all fit.
    pub level: Option<u64>,
    /// Advisors running.
    pub running: usize,
    /// Advisors stopped for their memory, waiting for room.
    pub waiting: usize,
}

impl NodeShare {
    /// A share of `limit` bytes for the node's advisors under `node`.
    pub(super) fn new(node: &Arc<Budget>, limit: u64) -> Self {
        Self {
            advisors: Arc::clone(node).child(Level::Catalog, "#advisors", Some(limit)),
            advising: AtomicBool::new(false),
            level: AtomicU64::new(u64::MAX),
            running: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
        }
    }

    /// How the advisors shared their memory at the last round.
    pub(super) fn last(&self) -> AdvisorsShare {
        let level = self.level.load(Relaxed);
        AdvisorsShare {
            level: (level != u64::MAX).then_some(level),
            running: self.running.load(Relaxed),
            waiting: self.waiting.load(Relaxed),
        }
    }

    /// The limit a cache's values may fill under `budget`: the least limit of its chain, the
    /// node's counted less the advisors' share once any advisor runs (`None`: no limit).
    pub(crate) fn values_limit(&self, budget: &Budget) -> Option<u64> {
        let limit = budget.effective_limit();
        if !self.advising.load(SeqCst) {
            return limit;
        }
        let node = budget.ancestor(Level::Node).and_then(Budget::limit);
        let share = self.advisors.limit().unwrap_or(0);
        // The node's limit is one of those `limit` is the least of.
        let left = node.map(|node| node.saturating_sub(share).max(1));
        limit.map(|limit| left.map_or(limit, |left| limit.min(left)))
    }
}

/// The most the node's quota advisors may hold together: a sixteenth of the node limit, at
/// most 256 MiB (256 MiB without a node limit), shared out by [`advisors_level`].
pub fn advisors_limit(node_limit: Option<u64>) -> u64 {
    const MOST: u64 = 256 << 20;
    node_limit.map_or(MOST, |limit| (limit / 16).min(MOST))
}

/// The advisors are shared out so that together they hold at most their limit less this
/// fraction of it (1/8): the room left takes what they add between two shares.
const ADVISORS_HEADROOM: u64 = 8;

/// The max-min fair share of `target` bytes among advisors holding `claims` (water-filling):
/// the level such that advisors holding less keep what they hold and each of the others —
/// and each advisor waiting for room that a share of the level would take — may hold the
/// level. A waiting advisor that needs more than the level leaves the others its share.
/// `None` when every running advisor fits as it is and none that could run waits.
pub fn advisors_level(claims: &[AdvisorClaim], target: u64) -> Option<u64> {
    let mut held: Vec<u64> = claims
        .iter()
        .filter(|claim| !claim.starved)
        .map(|claim| claim.reserved)
        .collect();
    held.sort_unstable();
    let mut needs: Vec<u64> = claims
        .iter()
        .filter(|claim| claim.starved)
        .map(|claim| claim.needs)
        .collect();
    needs.sort_unstable();
    // Those waiting that the level affords; the level falls as more of them count, so the
    // neediest leave until the rest fit it.
    let mut waiting = needs.len();
    loop {
        let level = water_level(&held, waiting as u64, target);
        match level {
            Some(level) if waiting > 0 && needs[waiting - 1] > level => waiting -= 1,
            _ => return level,
        }
    }
}

/// The level of `target` among advisors holding `held` (ascending) and `waiting` more that
/// would each take the level.
fn water_level(held: &[u64], waiting: u64, target: u64) -> Option<u64> {
    let mut left = target;
    let mut sharing = held.len() as u64 + waiting;
    for &reserved in held {
        let level = left / sharing;
        if reserved > level {
            return Some(level);
        }
        left -= reserved;
        sharing -= 1;
    }
    (waiting > 0).then(|| left / waiting)
}

impl Shared {
    /// Drains every cache's quota advisor every `interval` until the governor is dropped.
    pub(super) fn advise(&self, interval: Duration) {
        while !self.ledger.is_closed() {
            std::thread::park_timeout(interval);
            if self.ledger.is_closed() {
                break;
            }
            self.advise_once();
        }
    }

    /// One round of the advisor thread: every advisor drained, their memory shared out, and
    /// the caches' maps told whether any advisor runs.
    pub(super) fn advise_once(&self) {
        let live = self.live();
        for cache in &live {
            cache.advise();
        }
        self.share_advisors(&live);
        self.settle_share(&live);
    }

    /// Shares the advisors' memory among `live` caches' advisors (max-min fair,
    /// [`advisors_level`]): each running advisor is capped at the level, and those stopped for
    /// their memory are restarted while the level fits beside what the others hold. So a node
    /// with more busy caches than its advisors' share affords full samples gets a curve for
    /// every cache, each from a smaller sample, not full curves for the caches built first.
    fn share_advisors(&self, live: &[Arc<dyn Reclaimable>]) {
        let (caches, claims): (Vec<usize>, Vec<AdvisorClaim>) = live
            .iter()
            .enumerate()
            .filter_map(|(i, cache)| cache.advisor_claim().map(|claim| (i, claim)))
            .unzip();
        let waiting = claims.iter().filter(|claim| claim.starved).count();
        self.share.waiting.store(waiting, Relaxed);
        self.share.running.store(claims.len() - waiting, Relaxed);
        self.share.level.store(u64::MAX, Relaxed);
        let Some(limit) = self.share.advisors.limit() else {
            return;
        };
        if claims.is_empty() {
            return;
        }
        let target = limit - limit / ADVISORS_HEADROOM;
        let level = advisors_level(&claims, target);
        let cap = level.unwrap_or(u64::MAX);
        self.share.level.store(cap, Relaxed);
        let mut held = 0u64;
        for (&i, claim) in caches.iter().zip(&claims) {
            if !claim.starved {
                held += live[i].cap_advisor(cap);
            }
        }
        // A waiting advisor the level affords starts again if what it needs fits beside what
        // the others hold now (they were just capped at the level, which counts it).
        for (&i, claim) in caches.iter().zip(&claims) {
            if claim.starved && claim.needs <= cap && held.saturating_add(claim.needs) <= target {
                live[i].restart_advisor();
                held += live[i].cap_advisor(cap).max(claim.needs);
            }
        }
    }

    /// Whether `live` caches' maps leave the advisors their share follows whether any of their
    /// advisors runs: the share is taken back once the last one stopped or went with its cache
    /// (it would cost the node's caches a sixteenth of the limit for nothing), and restored if
    /// one is found running (a cache built with an advisor just as the share was taken back).
    /// A change rescales every live cache.
    pub(super) fn settle_share(&self, live: &[Arc<dyn Reclaimable>]) {
        let advising = live.iter().any(|cache| cache.advising());
        if self.share.advising.swap(advising, SeqCst) != advising {
            for cache in live {
                cache.rescale();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use metacache_ledger::Ledger;

    use super::*;

    fn share(ledger: &Ledger, node_limit: Option<u64>) -> NodeShare {
        NodeShare::new(ledger.node(), advisors_limit(node_limit))
    }

    #[test]
    fn the_node_leaves_its_advisors_their_share_once_one_runs() {
        let ledger = Ledger::new(Some(64 << 20));
        let share = share(&ledger, Some(64 << 20));
        let catalog = Arc::clone(ledger.node()).child(Level::Catalog, "c", None);
        let entry = catalog.child(Level::Entry, "e", None);
        assert_eq!(share.values_limit(&entry), Some(64 << 20), "no advisor yet");
        share.advising.store(true, SeqCst);
        assert_eq!(
            share.values_limit(&entry),
            Some(60 << 20),
            "less a sixteenth"
        );
        let small = Arc::clone(ledger.node()).child(Level::Catalog, "s", Some(8 << 20));
        let entry = small.child(Level::Entry, "e", None);
        assert_eq!(
            share.values_limit(&entry),
            Some(8 << 20),
            "a tighter catalog binds"
        );
    }

    #[test]
    fn without_a_node_limit_there_is_no_share_to_leave() {
        let ledger = Ledger::new(None);
        let share = share(&ledger, None);
        share.advising.store(true, SeqCst);
        let catalog = Arc::clone(ledger.node()).child(Level::Catalog, "c", Some(1 << 20));
        assert_eq!(share.values_limit(ledger.node()), None);
        assert_eq!(share.values_limit(&catalog), Some(1 << 20));
    }

    fn running(reserved: u64) -> AdvisorClaim {
        AdvisorClaim {
            reserved,
            starved: false,
            needs: 0,
        }
    }

    fn waiting(needs: u64) -> AdvisorClaim {
        AdvisorClaim {
            reserved: 0,
            starved: true,
            needs,
        }
    }

    #[test]
    fn the_level_binds_only_when_the_advisors_do_not_fit() {
        assert_eq!(advisors_level(&[], 100), None);
        assert_eq!(advisors_level(&[running(30), running(60)], 100), None);
        // 100 among three: 10 stays, the two others share 90.
        let claims = [running(10), running(80), running(50)];
        assert_eq!(advisors_level(&claims, 100), Some(45));
        // Equal holders split it evenly.
        assert_eq!(advisors_level(&[running(90); 4], 100), Some(25));
    }

    #[test]
    fn a_waiting_advisor_takes_a_share_it_can_run_in() {
        // Room for it: the level it would take is left beside the others.
        assert_eq!(advisors_level(&[running(30), waiting(20)], 100), Some(70));
        assert_eq!(advisors_level(&[running(90), waiting(20)], 100), Some(50));
        // One that needs more than any share leaves the others the whole target.
        assert_eq!(advisors_level(&[running(90), waiting(60)], 100), None);
        assert_eq!(
            advisors_level(&[running(90), running(90), waiting(40), waiting(10)], 100),
            Some(33),
            "the neediest leaves; three share it"
        );
    }
}
