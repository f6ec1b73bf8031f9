use std::sync::Arc;
use std::time::Duration;

use super::*;

struct Tree {
    ledger: Ledger,
    catalog: Arc<Budget>,
    group: Arc<Budget>,
    entry: Arc<Budget>,
}

fn tree(node: Option<u64>, catalog: Option<u64>, group: Option<u64>, entry: Option<u64>) -> Tree {
    let ledger = Ledger::new(node);
    let catalog = ledger.node().child(Level::Catalog, "c", catalog);
    let group = catalog.child(Level::EntryGroup, "hive.file", group);
    let entry = group.child(Level::Entry, "hive-file", entry);
    Tree {
        ledger,
        catalog,
        group,
        entry,
    }
}

/// What a test reserved at the entry goes back before the tree is dropped: a budget dropped
/// holding bytes is a leak, which fails a debug build.
impl Drop for Tree {
    fn drop(&mut self) {
        self.entry.release(self.entry.used());
    }
}

fn uses(t: &Tree) -> [u64; 4] {
    [
        t.entry.used(),
        t.group.used(),
        t.catalog.used(),
        t.ledger.node().used(),
    ]
}

#[test]
fn effective_limit_is_the_smallest_limit_above() {
    let cases = [
        ((None, None, None, None), None),
        ((Some(100), None, None, None), Some((Level::Node, 100))),
        ((None, Some(50), None, None), Some((Level::Catalog, 50))),
        ((None, None, Some(30), None), Some((Level::EntryGroup, 30))),
        (
            (Some(100), Some(50), Some(30), None),
            Some((Level::EntryGroup, 30)),
        ),
        (
            (Some(10), Some(50), Some(30), None),
            Some((Level::Node, 10)),
        ),
        (
            (Some(100), Some(50), Some(30), Some(5)),
            Some((Level::Entry, 5)),
        ),
    ];
    for ((n, c, g, e), expected) in cases {
        let t = tree(n, c, g, e);
        assert_eq!(
            t.entry.effective_limit_with_level(),
            expected,
            "{n:?} {c:?} {g:?} {e:?}"
        );
    }
}

#[test]
fn reservation_reaches_every_level_and_release_returns_it() {
    let t = tree(Some(1000), Some(500), Some(300), None);
    t.entry.try_reserve(120).unwrap();
    assert_eq!(uses(&t), [120; 4]);
    t.entry.release(120);
    assert_eq!(uses(&t), [0; 4]);
}

#[test]
fn refusal_names_the_short_level_and_changes_nothing() {
    // (limits, already reserved by a sibling at catalog level, request, refusing level)
    let cases = [
        ((Some(100), None, None), 60, 50, Level::Node),
        ((None, Some(100), None), 60, 50, Level::Catalog),
        ((None, None, Some(100)), 0, 101, Level::EntryGroup),
    ];
    for ((n, c, g), sibling, request, level) in cases {
        let t = tree(n, c, g, None);
        let other = t.catalog.child(Level::Entry, "other", None);
        other.try_reserve(sibling).unwrap();
        let before = uses(&t);
        let err = t.entry.try_reserve(request).unwrap_err();
        if level == Level::EntryGroup {
            assert_eq!(err.reason, RejectReason::EntryTooLarge);
        } else {
            assert_eq!(err.reason, RejectReason::BudgetExceeded);
            assert_eq!((err.used, err.limit), (sibling, 100));
        }
        assert_eq!(err.level, level);
        assert_eq!(
            uses(&t),
            before,
            "a refused reservation must change nothing"
        );
        other.release(sibling);
    }
}

#[test]
fn too_large_for_the_effective_limit_is_entry_too_large() {
    let t = tree(Some(1000), Some(400), None, None);
    let err = t.entry.try_reserve(401).unwrap_err();
    assert_eq!(err.reason, RejectReason::EntryTooLarge);
    assert_eq!(
        (err.level, err.limit, err.requested),
        (Level::Catalog, 400, 401)
    );
    assert!(
        t.ledger.pending_reclaim_requests().is_empty(),
        "nothing to reclaim for a value that can never fit"
    );
    t.entry.try_reserve(400).unwrap();
}

#[test]
fn budget_exceeded_files_a_reclaim_request_for_the_short_level() {
    let t = tree(None, Some(100), None, None);
    t.entry.try_reserve(80).unwrap();
    t.entry.try_reserve(30).unwrap_err();
    t.entry.try_reserve(50).unwrap_err();
    let pending = t.ledger.pending_reclaim_requests();
    assert_eq!(pending.len(), 1, "requests for one level merge");
    let request = &pending[0];
    assert_eq!(request.level(), Level::Catalog);
    assert_eq!(request.needed(), 50, "the largest request wins");
    assert_eq!(request.deficit(), 30);
    assert!(Arc::ptr_eq(request.origin().unwrap(), &t.entry));
}

#[test]
fn no_limit_anywhere_accepts_everything() {
    let t = tree(None, None, None, None);
    t.entry.try_reserve(u64::MAX / 2).unwrap();
    assert_eq!(t.entry.effective_limit(), None);
}

#[test]
fn lowering_a_limit_below_use_asks_for_reclamation() {
    let t = tree(Some(1000), None, None, None);
    t.entry.try_reserve(600).unwrap();
    t.ledger.node().set_limit(Some(400));
    assert_eq!(
        t.ledger.node().used(),
        600,
        "lowering never drops bytes by itself"
    );
    assert!(t.ledger.wait_for_reclaim_request(Duration::from_millis(10)));
    let request = t.ledger.next_reclaim_request().unwrap();
    assert_eq!(request.level(), Level::Node);
    assert_eq!(request.needed(), 0);
    assert_eq!(request.deficit(), 200);
    let err = t.entry.try_reserve(1).unwrap_err();
    assert_eq!(err.reason, RejectReason::BudgetExceeded);
    t.entry.release(600);
    t.ledger.node().set_limit(None);
    t.entry.try_reserve(5000).unwrap();
}

#[test]
fn limits_change_at_every_level() {
    let t = tree(None, None, None, None);
    for budget in [&t.entry, &t.group, &t.catalog, t.ledger.node()] {
        budget.set_limit(Some(10));
        assert_eq!(t.entry.effective_limit(), Some(10));
        assert_eq!(t.entry.try_reserve(11).unwrap_err().level, budget.level());
        budget.set_limit(None);
        assert_eq!(t.entry.effective_limit(), None);
    }
}

#[test]
fn release_beyond_use_saturates_in_release_builds() {
    let t = tree(None, None, None, None);
    t.entry.try_reserve(10).unwrap();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| t.entry.release(20)));
    assert_eq!(result.is_err(), cfg!(debug_assertions));
    assert_eq!(uses(&t), [0; 4]);
}

#[test]
fn replacement_holds_the_larger_of_old_and_new() {
    let t = tree(Some(1000), None, None, None);
    t.entry.try_reserve(100).unwrap();
    let grow = t.entry.try_reserve_replacement(100, 300).unwrap();
    assert_eq!((grow.held(), t.entry.used()), (300, 300));
    grow.commit();
    assert_eq!(t.entry.used(), 300);

    let shrink = t.entry.try_reserve_replacement(300, 50).unwrap();
    assert_eq!(t.entry.used(), 300, "max(old, new) until commit");
    shrink.commit();
    assert_eq!(t.entry.used(), 50);

    let rolled = t.entry.try_reserve_replacement(50, 400).unwrap();
    assert_eq!(t.entry.used(), 400);
    rolled.rollback();
    assert_eq!(t.entry.used(), 50);

    drop(t.entry.try_reserve_replacement(50, 70).unwrap());
    assert_eq!(t.entry.used(), 50, "dropping a replacement rolls it back");
}

#[test]
fn replacement_that_cannot_grow_is_refused() {
    let t = tree(Some(500), None, None, None);
    t.entry.try_reserve(400).unwrap();
    assert_eq!(
        t.entry
            .try_reserve_replacement(400, 501)
            .unwrap_err()
            .reason,
        RejectReason::EntryTooLarge
    );
    let other = t.catalog.child(Level::Entry, "x", None);
    other.try_reserve(50).unwrap();
    assert_eq!(
        t.entry
            .try_reserve_replacement(400, 460)
            .unwrap_err()
            .reason,
        RejectReason::BudgetExceeded
    );
    assert_eq!(t.ledger.node().used(), 450);
    other.release(50);
}

#[test]
fn a_dropped_budget_gives_back_what_it_held_and_a_debug_build_fails_loudly() {
    let t = tree(Some(1000), None, None, None);
    let extra = t.group.child(Level::Entry, "extra", None);
    extra.try_reserve(70).unwrap();
    let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(extra)));
    assert_eq!(
        dropped.is_err(),
        cfg!(debug_assertions),
        "a leak panics in debug builds only"
    );
    assert_eq!(t.ledger.node().used(), 0, "the bytes go back either way");
    assert_eq!(t.group.used(), 0);
}

#[test]
fn close_wakes_waiters_and_drops_requests() {
    let t = tree(Some(10), None, None, None);
    t.entry.try_reserve(11).unwrap_err();
    t.ledger.close();
    assert!(t.ledger.is_closed());
    assert!(!t.ledger.wait_for_reclaim_request(Duration::from_secs(5)));
    assert!(t.ledger.next_reclaim_request().is_none());
}

#[test]
fn concurrent_reservations_never_exceed_any_limit() {
    use rand::{RngExt, SeedableRng};
    let t = Arc::new(tree(Some(10_000), Some(6_000), Some(4_000), None));
    let entries: Vec<_> = (0..4)
        .map(|i| t.group.child(Level::Entry, format!("e{i}"), None))
        .chain((0..4).map(|i| t.catalog.child(Level::Entry, format!("f{i}"), None)))
        .collect();
    let threads: Vec<_> = entries
        .into_iter()
        .enumerate()
        .map(|(i, entry)| {
            let t = Arc::clone(&t);
            std::thread::spawn(move || {
                let mut rng = rand::rngs::StdRng::seed_from_u64(i as u64);
                let mut held = Vec::new();
                for _ in 0..20_000 {
                    if rng.random_bool(0.55) {
                        let bytes = rng.random_range(1..800);
                        if entry.try_reserve(bytes).is_ok() {
                            held.push(bytes);
                        }
                    } else if let Some(bytes) = held.pop() {
                        entry.release(bytes);
                    }
                    assert!(t.group.used() <= 4_000);
                    assert!(t.catalog.used() <= 6_000);
                    assert!(t.ledger.node().used() <= 10_000);
                }
                assert_eq!(entry.used(), held.iter().sum::<u64>());
                held.into_iter().for_each(|b| entry.release(b));
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    assert_eq!(t.ledger.node().used(), 0);
}

#[test]
fn a_level_over_its_limit_asks_again_once_its_bytes_are_resident() {
    let t = tree(Some(10_000), None, None, None);
    // Reserved, then the catalog limit is lowered below it: one request, which the reclaimer
    // takes while the bytes are not in any cache yet and so cannot free them.
    t.entry.try_reserve(600).expect("fits");
    t.catalog.set_limit(Some(100));
    let first = t.ledger.next_reclaim_request().expect("the lowering asked");
    assert_eq!(first.deficit(), 500);
    drop(first);
    assert!(t.ledger.next_reclaim_request().is_none());
    // Once resident, the cache asks again for the level still over its limit, and only it.
    t.entry.reclaim_if_over_limit();
    let again: Vec<String> = t
        .ledger
        .pending_reclaim_requests()
        .iter()
        .map(|r| format!("{} {}", r.scope().name(), r.deficit()))
        .collect();
    assert_eq!(again, ["c 500"]);
    // Nothing over: nothing asked.
    t.catalog.set_limit(None);
    while t.ledger.next_reclaim_request().is_some() {}
    t.entry.reclaim_if_over_limit();
    assert!(t.ledger.pending_reclaim_requests().is_empty());
}
