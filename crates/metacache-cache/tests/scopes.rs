//! Scan scopes (§8.2) on a manual clock: sharing and isolation, the refresh window at several
//! lifetimes, `min_remaining`, failed refreshes with backoff and no spin, idle expiry under a
//! lease, bounds, memory charges, and a 3-hour scan of 32 tasks over 15-minute credentials.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::time::Duration;

use metacache_cache::scope::{
    Resolution, Scope, ScopeError, ScopeOptions, ScopedAccess, Scopes, resolver,
};
use metacache_cache::{Clock, ManualClock, MemoryGovernor};
use metacache_ledger::Budget;

const SECOND: u64 = 1000;
const MINUTE: u64 = 60 * SECOND;
const HOUR: u64 = 60 * MINUTE;

/// A source that vends credentials living `lifetime_ms` (0: none), counting its calls; each
/// call's credentials name the call, so tests see which one they got.
struct Source {
    clock: Clock,
    lifetime_ms: AtomicU64,
    calls: AtomicU64,
    failing: AtomicBool,
    expired: AtomicBool,
    no_expiry: AtomicBool,
}

impl Source {
    fn new(clock: &Clock, lifetime_ms: u64) -> Arc<Self> {
        Arc::new(Self {
            clock: clock.clone(),
            lifetime_ms: AtomicU64::new(lifetime_ms),
            calls: AtomicU64::new(0),
            failing: AtomicBool::new(false),
            expired: AtomicBool::new(false),
            no_expiry: AtomicBool::new(false),
        })
    }

    fn calls(&self) -> u64 {
        self.calls.load(SeqCst)
    }

    fn options(self: &Arc<Self>, catalog: &str, budget: Arc<Budget>) -> ScopeOptions {
        let source = Arc::clone(self);
        ScopeOptions {
            catalog: catalog.to_owned(),
            label: "test".to_owned(),
            idle_timeout: Some(Duration::from_secs(600)),
            window: Default::default(),
            budget,
            resolver: resolver(move |key, _previous| {
                let source = Arc::clone(&source);
                async move {
                    let call = source.calls.fetch_add(1, SeqCst) + 1;
                    if source.failing.load(SeqCst) {
                        return Err("upstream said 503 for key SECRET1 (?token=hunter2)".into());
                    }
                    let now = source.clock.wall_millis();
                    let lifetime = source.lifetime_ms.load(SeqCst);
                    let mut options = BTreeMap::new();
                    if lifetime > 0 {
                        options.insert("access_key_id".to_owned(), format!("AK{call}"));
                        options.insert("secret_access_key".to_owned(), format!("SECRET{call}"));
                    }
                    let expires = if source.expired.load(SeqCst) {
                        Some(now - 1)
                    } else if source.no_expiry.load(SeqCst) {
                        None
                    } else {
                        (lifetime > 0).then_some(now + lifetime)
                    };
                    Ok(Resolution {
                        location: format!("s3://bucket/{key}"),
                        metadata_location: None,
                        storage_options: options,
                        vended: lifetime > 0,
                        expires_at_millis: expires,
                    })
                }
            }),
        }
    }
}

struct Fixture {
    clock: Clock,
    manual: Arc<ManualClock>,
    scopes: Scopes,
    budget: Arc<Budget>,
    _governor: MemoryGovernor,
}

fn fixture() -> Fixture {
    let (clock, manual) = Clock::manual();
    let governor = MemoryGovernor::new(None);
    let budget = governor.catalog_budget("c", None);
    Fixture {
        scopes: Scopes::new(clock.clone()),
        clock,
        manual,
        budget,
        _governor: governor,
    }
}

impl Fixture {
    /// A scope of catalog `c` over a source vending credentials that live `lifetime_ms`.
    fn scope(&self, lifetime_ms: u64) -> (Arc<Source>, Arc<Scope>) {
        let source = Source::new(&self.clock, lifetime_ms);
        let scope = self
            .scopes
            .open(source.options("c", Arc::clone(&self.budget)))
            .expect("open");
        (source, scope)
    }

    fn advance(&self, ms: u64) {
        self.manual.advance(Duration::from_millis(ms));
    }
}

/// Table `db.t` of `scope`, with any remaining life.
async fn any_life(scope: &Arc<Scope>) -> Result<ScopedAccess, ScopeError> {
    scope.access("db", "t", Duration::ZERO).await
}

fn key_of(access: &ScopedAccess) -> String {
    access.handout.resolution.storage_options["access_key_id"].clone()
}

/// Waits (real time, bounded) until the source has been called `n` times and the attempt has
/// ended, by asking the scope until it hands out call `n`'s credentials.
async fn refreshed_to(scope: &Arc<Scope>, n: u64) {
    let want = format!("AK{n}");
    for _ in 0..5000 {
        if let Ok(access) = any_life(scope).await
            && key_of(&access) == want
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("the scope never handed out {want}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_of_a_scope_share_one_resolution_and_other_scopes_do_not_see_it() {
    let f = fixture();
    let source = Source::new(&f.clock, 15 * MINUTE);
    let a = f
        .scopes
        .open(source.options("c", Arc::clone(&f.budget)))
        .expect("open a");
    let b = f
        .scopes
        .open(source.options("c", Arc::clone(&f.budget)))
        .expect("open b");
    assert_ne!(a.id(), b.id());
    let tasks: Vec<_> = (0..32)
        .map(|_| {
            let a = Arc::clone(&a);
            tokio::spawn(async move { any_life(&a).await })
        })
        .collect();
    for task in tasks {
        let access = task.await.expect("task").expect("access");
        assert_eq!(
            key_of(&access),
            "AK1",
            "every task of scope a shares the first fetch"
        );
    }
    assert_eq!(source.calls(), 1, "32 tasks, one call to the source");
    let other = any_life(&b).await.expect("b");
    assert_eq!(key_of(&other), "AK2", "scope b fetches its own");
    assert_eq!(source.calls(), 2);
    let again = any_life(&a).await.expect("a again");
    assert_eq!(key_of(&again), "AK1", "scope a does not see b's");
    // The handout carries what callers need to plan their own use.
    let expiry = again.handout.expires_at_millis.expect("vended expiry");
    assert_eq!(expiry, f.clock.wall_millis() + 15 * MINUTE);
    assert_eq!(again.handout.refresh_at_millis, expiry - MINUTE);
    let info = f.scopes.get(a.id()).expect("open").info();
    assert_eq!((info.entries, info.resolutions), (1, 1));
    assert_eq!(info.earliest_expiry_millis, Some(expiry));
    assert!(
        info.bytes > 0 && f.budget.used() >= info.bytes,
        "charged to the catalog"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_refresh_a_tenth_of_their_life_before_expiry_within_one_second_and_a_minute() {
    // (lifetime, expected window)
    for (lifetime, window) in [
        (5 * SECOND, SECOND),
        (15 * MINUTE, MINUTE),
        (12 * HOUR, MINUTE),
    ] {
        let f = fixture();
        let source = Source::new(&f.clock, lifetime);
        let scope = f
            .scopes
            .open(source.options("c", Arc::clone(&f.budget)))
            .expect("open");
        let first = any_life(&scope).await.expect("first");
        assert_eq!(key_of(&first), "AK1");
        let refresh_at = first.handout.refresh_at_millis;
        assert_eq!(
            refresh_at,
            first.handout.expires_at_millis.expect("expiry") - window,
            "lifetime {lifetime} ms"
        );
        drop(first);
        // Just before the window: served as is, no call.
        f.advance(lifetime - window - 1);
        for _ in 0..10 {
            let access = any_life(&scope).await.expect("before");
            assert_eq!(key_of(&access), "AK1");
        }
        assert_eq!(
            source.calls(),
            1,
            "lifetime {lifetime} ms: nothing before the window"
        );
        // In the window: the old credential is still served while one refresh runs.
        f.advance(1);
        let during = any_life(&scope).await.expect("in window");
        assert!(key_of(&during) == "AK1" || key_of(&during) == "AK2");
        refreshed_to(&scope, 2).await;
        assert_eq!(source.calls(), 2, "lifetime {lifetime} ms: one refresh");
        let next = any_life(&scope).await.expect("after");
        assert_eq!(
            next.handout.expires_at_millis,
            Some(f.clock.wall_millis() + lifetime),
            "the refreshed credential lives a whole lifetime from now"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_credential_with_less_life_than_asked_is_never_handed_out() {
    let f = fixture();
    let (source, scope) = f.scope(15 * MINUTE);
    any_life(&scope).await.expect("first");
    // 10 minutes in, 5 minutes left: the window (60 s) is not reached.
    f.advance(10 * MINUTE);
    let relaxed = scope
        .access("db", "t", Duration::from_secs(4 * 60))
        .await
        .expect("4 min asked, 5 left");
    assert_eq!(key_of(&relaxed), "AK1");
    assert_eq!(source.calls(), 1);
    // 6 minutes asked: the caller waits for a refresh and gets a credential with 15 min.
    let strict = scope
        .access("db", "t", Duration::from_secs(6 * 60))
        .await
        .expect("6 min asked");
    assert_eq!(key_of(&strict), "AK2");
    let remaining = strict.handout.expires_at_millis.expect("expiry") - f.clock.wall_millis();
    assert!(remaining >= 6 * MINUTE, "{remaining} ms left");
    assert_eq!(source.calls(), 2);
    // More than the source's credentials ever live: a clear error, and no call.
    let error = scope
        .access("db", "t", Duration::from_secs(20 * 60))
        .await
        .expect_err("20 min asked of 15-min credentials");
    assert!(
        matches!(
            error,
            ScopeError::LifetimeTooShort {
                min_remaining_ms: 1_200_000,
                lifetime_ms: 900_000
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("min_remaining_ms"), "{error}");
    assert_eq!(
        source.calls(),
        2,
        "an impossible request does not reach the source"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_refreshes_back_off_keep_serving_a_valid_credential_and_never_spin() {
    let f = fixture();
    let (source, scope) = f.scope(15 * MINUTE);
    any_life(&scope).await.expect("first");
    source.failing.store(true, SeqCst);
    f.advance(14 * MINUTE); // in the window
    any_life(&scope).await.expect("old served");
    // The attempt ends; then the old credential is served and says its refresh failed.
    let mut flagged = None;
    for _ in 0..5000 {
        let access = any_life(&scope).await.expect("old");
        if let Some(failed) = access.handout.refresh_failed.clone() {
            flagged = Some((key_of(&access), failed));
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let (key, failure) = flagged.expect("the failure is reported");
    assert_eq!(key, "AK1", "the still-valid credential keeps serving");
    assert!(failure.message().contains("503"), "{failure}");
    assert!(
        !failure.message().contains("hunter2") && !failure.message().contains("SECRET1"),
        "secrets masked: {failure}"
    );
    assert_eq!(source.calls(), 2);
    // A thousand callers inside the backoff (1 s) make no call.
    for _ in 0..1000 {
        any_life(&scope).await.expect("old");
    }
    assert_eq!(source.calls(), 2, "no call inside the backoff");
    // Attempts double their spacing: 1, 2, 4, 8, 16, 32 s between calls.
    let mut calls_at = Vec::new();
    for _ in 0..60 {
        f.advance(SECOND);
        let before = source.calls();
        let _ = any_life(&scope).await;
        wait_calls_settle().await;
        if source.calls() > before {
            calls_at.push(source.calls());
        }
    }
    assert!(
        calls_at.len() <= 7,
        "60 s of callers with a failing source made {} calls, not one per second",
        calls_at.len()
    );
    // Past the expiry: an error that says when the next attempt is, no call until then.
    f.advance(2 * MINUTE);
    let _ = any_life(&scope).await; // starts one attempt
    wait_calls_settle().await;
    let calls = source.calls();
    for _ in 0..1000 {
        let error = any_life(&scope).await.expect_err("expired, source failing");
        let ScopeError::Source {
            retry_at_millis, ..
        } = &error
        else {
            panic!("{error:?}");
        };
        assert!(*retry_at_millis > f.clock.wall_millis());
        assert!(
            !error.to_string().contains("hunter2") && !error.to_string().contains("SECRET1"),
            "{error}"
        );
    }
    assert_eq!(source.calls(), calls, "expired credentials cause no spin");
    // The source recovers: after the backoff, one call brings a fresh credential.
    source.failing.store(false, SeqCst);
    f.advance(MINUTE);
    let back = any_life(&scope).await.expect("recovered");
    assert!(back.handout.refresh_failed.is_none());
    assert_eq!(source.calls(), calls + 1);
}

/// Lets a started attempt end (the resolver is instant; its task needs a turn).
async fn wait_calls_settle() {
    for _ in 0..50 {
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_that_arrive_expired_are_refused_with_backoff() {
    let f = fixture();
    let source = Source::new(&f.clock, 15 * MINUTE);
    source.expired.store(true, SeqCst);
    let scope = f
        .scopes
        .open(source.options("c", Arc::clone(&f.budget)))
        .expect("open");
    let error = any_life(&scope).await.expect_err("expired on arrival");
    assert!(error.to_string().contains("already expired"), "{error}");
    for _ in 0..100 {
        any_life(&scope).await.expect_err("still");
    }
    assert_eq!(source.calls(), 1, "no loop on expired credentials");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolutions_without_credentials_live_five_minutes_and_without_expiry_one() {
    let f = fixture();
    let plain = Source::new(&f.clock, 0);
    let scope = f
        .scopes
        .open(plain.options("c", Arc::clone(&f.budget)))
        .expect("open");
    let first = scope
        .access("db", "t", Duration::from_secs(3600))
        .await
        .expect("no credentials: any remaining life is met");
    assert_eq!(first.handout.expires_at_millis, None);
    assert_eq!(
        first.handout.refresh_at_millis,
        f.clock.wall_millis() + 5 * MINUTE
    );
    drop(first);
    f.advance(5 * MINUTE - 1);
    any_life(&scope).await.expect("hit");
    assert_eq!(plain.calls(), 1);
    f.advance(1);
    any_life(&scope).await.expect("due");
    wait_calls_settle().await;
    assert_eq!(plain.calls(), 2, "refetched after 5 minutes");

    let unknown = Source::new(&f.clock, 15 * MINUTE);
    unknown.no_expiry.store(true, SeqCst);
    let scope = f
        .scopes
        .open(unknown.options("c", Arc::clone(&f.budget)))
        .expect("open");
    let first = any_life(&scope).await.expect("first");
    assert_eq!(
        first.handout.expires_at_millis, None,
        "no vended expiry to report"
    );
    assert_eq!(
        first.handout.valid_until_millis,
        Some(f.clock.wall_millis() + MINUTE),
        "assumed to end a minute after the fetch"
    );
    drop(first);
    let error = scope
        .access("db", "t", Duration::from_secs(90))
        .await
        .expect_err("90 s asked of a 1-minute assumption");
    assert!(matches!(
        error,
        ScopeError::LifetimeTooShort {
            lifetime_ms: 60_000,
            ..
        }
    ));
    f.advance(MINUTE);
    let next = any_life(&scope).await.expect("after a minute");
    assert_eq!(
        key_of(&next),
        "AK2",
        "never handed out past the assumed end"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scope_does_not_expire_or_close_under_a_lease() {
    let f = fixture();
    let source = Source::new(&f.clock, 15 * MINUTE);
    let mut options = source.options("c", Arc::clone(&f.budget));
    options.idle_timeout = Some(Duration::from_secs(10));
    let scope = f.scopes.open(options).expect("open");
    let id = scope.id().to_owned();
    let lease = any_life(&scope).await.expect("leased");
    f.advance(HOUR);
    assert_eq!(f.scopes.sweep(), 0, "a leased scope is not idle");
    assert_eq!(f.scopes.get(&id).expect("still open").info().leases, 1);
    drop(lease);
    f.advance(9 * SECOND);
    assert_eq!(f.scopes.sweep(), 0, "idle for 9 of 10 s");
    f.advance(SECOND);
    assert_eq!(f.scopes.sweep(), 1, "idle for 10 s");
    assert!(matches!(f.scopes.get(&id), Err(ScopeError::NotFound)));
    assert!(matches!(any_life(&scope).await, Err(ScopeError::NotFound)));
    assert_eq!(f.budget.used(), 0, "its entries released their bytes");

    // Closing a scope while a task holds a lease: the task keeps its resolution (and its
    // charge) until it lets go; new access is refused.
    let scope = f
        .scopes
        .open(source.options("c", Arc::clone(&f.budget)))
        .expect("open");
    let held = any_life(&scope).await.expect("held");
    let info = f.scopes.close(scope.id()).expect("close");
    assert_eq!(info.leases, 1);
    assert!(f.budget.used() > 0, "the leased entry is alive");
    assert!(
        held.handout
            .resolution
            .storage_options
            .contains_key("secret_access_key")
    );
    assert!(matches!(any_life(&scope).await, Err(ScopeError::NotFound)));
    drop(held);
    assert_eq!(f.budget.used(), 0, "released with the last lease");
    let stats = f.scopes.stats();
    assert_eq!((stats.open, stats.closed, stats.expired), (0, 1, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scopes_and_entries_are_bounded() {
    let f = fixture();
    f.scopes.set_limits(2, 2, Duration::from_secs(10));
    let source = Source::new(&f.clock, 15 * MINUTE);
    let scope = f
        .scopes
        .open(source.options("c", Arc::clone(&f.budget)))
        .expect("1");
    f.scopes
        .open(source.options("c", Arc::clone(&f.budget)))
        .expect("2");
    let error = f
        .scopes
        .open(source.options("c", Arc::clone(&f.budget)))
        .expect_err("3rd");
    assert!(matches!(error, ScopeError::TooManyScopes { limit: 2 }));
    assert!(
        error
            .to_string()
            .contains("external_meta_cache_scope_max_count")
    );
    // Two tables leased: a third is refused; with one let go, it replaces the coldest.
    let one = scope
        .access("db", "one", Duration::ZERO)
        .await
        .expect("one");
    let two = scope
        .access("db", "two", Duration::ZERO)
        .await
        .expect("two");
    let error = scope
        .access("db", "three", Duration::ZERO)
        .await
        .expect_err("full, all leased");
    assert!(
        matches!(error, ScopeError::TooManyEntries { limit: 2 }),
        "{error:?}"
    );
    drop(one);
    scope
        .access("db", "three", Duration::ZERO)
        .await
        .expect("three");
    let names: Vec<String> = {
        let info = scope.info();
        assert_eq!(info.entries, 2);
        vec![info.scope_id]
    };
    assert_eq!(names.len(), 1);
    drop(two);
    // Bad options are refused and open nothing.
    let mut bad = source.options("c", Arc::clone(&f.budget));
    bad.idle_timeout = Some(Duration::from_millis(10));
    assert!(matches!(
        f.scopes.open(bad),
        Err(ScopeError::InvalidOption {
            option: "idle_timeout_ms",
            ..
        })
    ));
    let mut bad = source.options("c", Arc::clone(&f.budget));
    bad.label = "a\nb".to_owned();
    assert!(matches!(
        f.scopes.open(bad),
        Err(ScopeError::InvalidOption {
            option: "label",
            ..
        })
    ));
    assert_eq!(f.scopes.stats().open, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolutions_are_charged_to_the_catalog_and_refused_when_it_is_full() {
    let f = fixture();
    let governor = MemoryGovernor::new(None);
    let tight = governor.catalog_budget("tight", Some(600));
    let source = Source::new(&f.clock, 15 * MINUTE);
    let scope = f
        .scopes
        .open(source.options("tight", Arc::clone(&tight)))
        .expect("open");
    let error = any_life(&scope)
        .await
        .expect_err("a 600-byte quota cannot hold it");
    assert!(error.to_string().contains("memory quota"), "{error}");
    assert_eq!(tight.used(), 0, "nothing charged");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_source_ends_the_attempt_as_a_failure() {
    let f = fixture();
    let scope = f
        .scopes
        .open(ScopeOptions {
            catalog: "c".to_owned(),
            label: String::new(),
            idle_timeout: None,
            window: Default::default(),
            budget: Arc::clone(&f.budget),
            resolver: resolver(|_key, _previous| async move {
                if true {
                    panic!("resolver bug");
                }
                Err("unreachable".into())
            }),
        })
        .expect("open");
    let error = any_life(&scope).await.expect_err("panicked");
    assert!(error.to_string().contains("panicked"), "{error}");
}

/// 3 hours of scan time over 15-minute credentials, 32 tasks each asking every 10 s
/// (simulated) for a credential with at least `min_remaining` left: (handouts, source calls,
/// least remaining life handed out). Every handout is checked against `min_remaining`.
async fn long_scan(min_remaining: u64) -> (u64, u64, u64) {
    let f = fixture();
    let (source, scope) = f.scope(15 * MINUTE);
    let mut handed = 0u64;
    let mut least = u64::MAX;
    let step = 10 * SECOND;
    for _ in 0..3 * HOUR / step {
        let tasks: Vec<_> = (0..32)
            .map(|_| {
                let scope = Arc::clone(&scope);
                tokio::spawn(async move {
                    scope
                        .access("db", "t", Duration::from_millis(min_remaining))
                        .await
                        .map(|a| a.handout.expires_at_millis)
                })
            })
            .collect();
        for task in tasks {
            let expires = task.await.expect("task").expect("access").expect("expiry");
            let left = expires - f.clock.wall_millis();
            assert!(left >= min_remaining.max(1), "a task got {left} ms");
            least = least.min(left);
            handed += 1;
        }
        f.advance(step);
    }
    (handed, source.calls(), least)
}

/// The long scan: no task ever gets less life than it asks; the source is asked about
/// once per credential lifetime (less the window or the asked life), never once per task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_hour_scan_of_32_tasks_over_15_minute_credentials() {
    for min_remaining in [0, 2 * MINUTE, 5 * MINUTE] {
        let (handed, calls, least) = long_scan(min_remaining).await;
        // A credential serves until max(window = 60 s, asked life) before its end.
        let serves = 15 * MINUTE - (MINUTE).max(min_remaining);
        let expected = (3 * HOUR).div_ceil(serves);
        assert!(
            calls <= expected + 1,
            "min {min_remaining} ms: {calls} calls for {handed} handouts (expected about {expected})"
        );
        eprintln!(
            "long scan, min_remaining {} s: {handed} handouts to 32 tasks over 3 h, {calls} source \
             calls (expected {expected}; one per {} s of scan), least remaining life handed out {} s",
            min_remaining / SECOND,
            3 * HOUR / calls / SECOND,
            least / SECOND
        );
    }
}
