//! Look-aside leases (SPEC §8.3, memcache's leases) driven by a manual clock: one lease per key,
//! waiters handed the holder's value, stale sets refused after an invalidation, expiry of a
//! crashed holder's lease, refresh leases for due values, and the bound on the lease table.

mod common;

use std::time::Duration;

use common::*;
use metacache_cache::{Admission, LeaseLookup, ManagedCache};

fn setup(capacity: u64, auto_refresh: bool) -> (Node, ManagedCache<String, Blob>) {
    let node = node(None);
    node.governor.set_lease_timeout(Duration::from_secs(10));
    let catalog = catalog(&node, "c", None);
    let cache = cache::<Blob>(
        &node,
        &catalog,
        config("remote-entry", Some(100), capacity).with_auto_refresh(auto_refresh),
    );
    (node, cache)
}

fn key(k: &str) -> String {
    k.to_owned()
}

fn leased(lookup: LeaseLookup<Blob>) -> u64 {
    match lookup {
        LeaseLookup::Leased(token) => token,
        LeaseLookup::Hit(..) => panic!("a hit, not a lease"),
        LeaseLookup::Held(_) => panic!("held by another caller"),
    }
}

#[tokio::test]
async fn one_caller_per_key_gets_the_lease_and_the_others_get_its_value() {
    let (_node, cache) = setup(100, false);
    let token = leased(cache.lease_get(&key("t")));
    let waiters: Vec<_> = (0..16)
        .map(|_| match cache.lease_get(&key("t")) {
            LeaseLookup::Held(Some(waiter)) => {
                let cache = cache.clone();
                tokio::spawn(async move {
                    cache
                        .lease_wait(waiter, Duration::from_secs(5))
                        .await
                        .map(|v| v.0)
                })
            }
            _ => panic!("the lease is held"),
        })
        .collect();
    assert!(matches!(
        cache.lease_put(key("t"), Blob(7), token),
        Admission::Retained { .. }
    ));
    for waiter in waiters {
        assert_eq!(waiter.await.expect("task"), Some(7));
    }
    assert!(matches!(cache.lease_get(&key("t")), LeaseLookup::Hit(v, None) if v.0 == 7));
    assert_eq!(cache.pending_leases(), 0);
    // A lease is good for one put.
    assert!(matches!(
        cache.lease_put(key("t"), Blob(8), token),
        Admission::Fenced
    ));
}

#[tokio::test]
async fn a_put_whose_lease_an_invalidation_made_stale_stores_nothing() {
    let (_node, cache) = setup(100, false);
    // Invalidation of the key.
    let token = leased(cache.lease_get(&key("t")));
    cache.invalidate(&key("t"));
    assert!(matches!(
        cache.lease_put(key("t"), Blob(1), token),
        Admission::Fenced
    ));
    assert!(cache.get("t").is_none());
    // Invalidation of every key (REFRESH CATALOG).
    let token = leased(cache.lease_get(&key("t")));
    cache.invalidate_all();
    assert!(matches!(
        cache.lease_put(key("t"), Blob(1), token),
        Admission::Fenced
    ));
    // Of a table's keys.
    let token = leased(cache.lease_get(&key("t")));
    cache.invalidate_keys_if(|k| k == "t");
    assert!(matches!(
        cache.lease_put(key("t"), Blob(1), token),
        Admission::Fenced
    ));
    assert!(cache.get("t").is_none());
    // A made-up token.
    leased(cache.lease_get(&key("u")));
    assert!(matches!(
        cache.lease_put(key("u"), Blob(1), 12345),
        Admission::Fenced
    ));
}

#[tokio::test]
async fn a_crashed_holder_blocks_its_key_only_until_the_lease_expires() {
    let (node, cache) = setup(100, false);
    let crashed = leased(cache.lease_get(&key("t")));
    node.clock.advance(Duration::from_secs(9));
    assert!(matches!(
        cache.lease_get(&key("t")),
        LeaseLookup::Held(Some(_))
    ));
    node.clock.advance(Duration::from_secs(1));
    let next = leased(cache.lease_get(&key("t")));
    assert_ne!(next, crashed);
    assert!(matches!(
        cache.lease_put(key("t"), Blob(1), crashed),
        Admission::Fenced
    ));
    assert!(matches!(
        cache.lease_put(key("t"), Blob(2), next),
        Admission::Retained { .. }
    ));
}

#[tokio::test]
async fn a_due_value_hands_one_refresh_lease() {
    let (node, cache) = setup(100, true);
    let token = leased(cache.lease_get(&key("t")));
    cache.lease_put(key("t"), Blob(1), token);
    node.clock.advance(Duration::from_secs(89));
    assert!(matches!(
        cache.lease_get(&key("t")),
        LeaseLookup::Hit(_, None)
    ));
    node.clock.advance(Duration::from_secs(1));
    let refresh = match cache.lease_get(&key("t")) {
        LeaseLookup::Hit(v, Some(token)) if v.0 == 1 => token,
        _ => panic!("the first read past the due point gets a refresh lease"),
    };
    assert!(matches!(
        cache.lease_get(&key("t")),
        LeaseLookup::Hit(_, None)
    ));
    assert!(matches!(
        cache.lease_put(key("t"), Blob(2), refresh),
        Admission::Retained { .. }
    ));
    // The refreshed value has its own TTL: a hit past the first value's hard TTL.
    node.clock.advance(Duration::from_secs(20));
    assert!(matches!(cache.lease_get(&key("t")), LeaseLookup::Hit(v, None) if v.0 == 2));
    let refreshed = cache.refresh_stats();
    assert_eq!((refreshed.started, refreshed.succeeded), (1, 1));
}

#[tokio::test]
async fn the_lease_table_is_bounded_by_the_capacity() {
    let (node, cache) = setup(2, false);
    leased(cache.lease_get(&key("a")));
    leased(cache.lease_get(&key("b")));
    assert!(matches!(
        cache.lease_get(&key("c")),
        LeaseLookup::Held(None)
    ));
    // Expired leases make room.
    node.clock.advance(Duration::from_secs(11));
    leased(cache.lease_get(&key("c")));
    assert!(cache.pending_leases() <= 2);
}
