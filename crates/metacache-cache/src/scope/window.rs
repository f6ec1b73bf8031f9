//! The time rules of scoped resolutions (§8.2): when a vended credential is refreshed, how long
//! a resolution without credentials or without a valid expiry lives, and how failed refreshes
//! back off. Pure arithmetic on milliseconds, so every rule is tested without a clock.

use std::time::Duration;

/// How long a resolution that carries no credentials lives in a scope.
pub const NO_CREDENTIALS_TTL: Duration = Duration::from_secs(5 * 60);
/// How long credentials without a valid expiry live in a scope.
pub const NO_EXPIRY_TTL: Duration = Duration::from_secs(60);
/// The first wait after a failed refresh; it doubles with each failure in a row.
pub const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// The longest wait between refresh attempts of one entry.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// How early a credential is refreshed: `percent` of its lifetime, bounded to `[min, max]`.
/// The default is seed 001's: 10 % bounded to [1 s, 60 s].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefreshWindow {
    /// Share of the credential's lifetime, 0 to 100.
    pub percent: u32,
    /// The smallest window.
    pub min: Duration,
    /// The largest window.
    pub max: Duration,
}

impl Default for RefreshWindow {
    fn default() -> Self {
        Self {
            percent: 10,
            min: Duration::from_secs(1),
            max: Duration::from_secs(60),
        }
    }
}

impl RefreshWindow {
    /// The window, in milliseconds, of a credential that lives `lifetime_ms` from when it was
    /// vended; never more than the lifetime itself.
    pub fn window_ms(&self, lifetime_ms: u64) -> u64 {
        let share = lifetime_ms.saturating_mul(u64::from(self.percent.min(100))) / 100;
        let min = millis(self.min);
        let max = millis(self.max).max(min);
        share.clamp(min, max).min(lifetime_ms)
    }
}

/// When a resolution stops being handed out without a refresh, and when it expires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// From this instant (wall ms) a refresh is due.
    pub refresh_at_ms: u64,
    /// The credential's end: nothing is handed out at or after it (`u64::MAX` without
    /// credentials).
    pub expires_at_ms: u64,
    /// Whether the expiry was vended (`false`: assumed, [`NO_EXPIRY_TTL`] from the fetch).
    pub expiry_vended: bool,
}

/// What a fetched resolution's expiry means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifetime {
    /// No credentials: lives [`NO_CREDENTIALS_TTL`], never "expires" for `min_remaining_ms`.
    NoCredentials,
    /// Credentials with a vended expiry still in the future.
    Expires(u64),
    /// Credentials without an expiry, or with one that does not parse.
    Unknown,
    /// Credentials whose vended expiry had already passed when they arrived.
    AlreadyExpired(u64),
}

impl Lifetime {
    /// Classifies a resolution fetched at `fetched_ms`.
    pub fn of(has_credentials: bool, expires_at_ms: Option<u64>, fetched_ms: u64) -> Self {
        match (has_credentials, expires_at_ms) {
            (false, _) => Self::NoCredentials,
            (true, None) => Self::Unknown,
            (true, Some(at)) if at <= fetched_ms => Self::AlreadyExpired(at),
            (true, Some(at)) => Self::Expires(at),
        }
    }

    /// The schedule of a resolution fetched at `fetched_ms` (`None` for one that arrived
    /// expired: it is never handed out).
    pub fn schedule(self, fetched_ms: u64, window: &RefreshWindow) -> Option<Schedule> {
        match self {
            Self::NoCredentials => Some(Schedule {
                refresh_at_ms: fetched_ms.saturating_add(millis(NO_CREDENTIALS_TTL)),
                expires_at_ms: u64::MAX,
                expiry_vended: false,
            }),
            Self::Unknown => {
                let end = fetched_ms.saturating_add(millis(NO_EXPIRY_TTL));
                Some(Schedule {
                    refresh_at_ms: end,
                    expires_at_ms: end,
                    expiry_vended: false,
                })
            }
            Self::Expires(at) => Some(Schedule {
                refresh_at_ms: at - window.window_ms(at - fetched_ms),
                expires_at_ms: at,
                expiry_vended: true,
            }),
            Self::AlreadyExpired(_) => None,
        }
    }
}

/// How long to wait before the next attempt after `failures` failed refreshes in a row.
pub fn backoff(failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    FIRST_BACKOFF
        .saturating_mul(1 << doublings)
        .min(MAX_BACKOFF)
}

/// A duration in whole milliseconds.
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: u64 = 1000;
    const MINUTE: u64 = 60 * SECOND;
    const HOUR: u64 = 60 * MINUTE;

    #[test]
    fn the_window_is_a_tenth_of_the_lifetime_within_one_second_and_a_minute() {
        let w = RefreshWindow::default();
        // 5 s: a tenth is 0.5 s, raised to the 1 s floor.
        assert_eq!(w.window_ms(5 * SECOND), SECOND);
        // 15 min: a tenth is 90 s, capped at 60 s.
        assert_eq!(w.window_ms(15 * MINUTE), MINUTE);
        // 12 h: capped at 60 s.
        assert_eq!(w.window_ms(12 * HOUR), MINUTE);
        // 3 min: a tenth, 18 s, inside the bounds.
        assert_eq!(w.window_ms(3 * MINUTE), 18 * SECOND);
        // Shorter than the floor: the whole lifetime, never more.
        assert_eq!(w.window_ms(400), 400);
    }

    #[test]
    fn a_catalog_may_widen_the_window() {
        let w = RefreshWindow {
            percent: 25,
            min: Duration::from_secs(5),
            max: Duration::from_secs(300),
        };
        assert_eq!(w.window_ms(15 * MINUTE), 225 * SECOND);
        assert_eq!(w.window_ms(12 * HOUR), 300 * SECOND);
        assert_eq!(w.window_ms(10 * SECOND), 5 * SECOND);
        // A maximum below the minimum acts as the minimum.
        let odd = RefreshWindow {
            percent: 10,
            min: Duration::from_secs(10),
            max: Duration::from_secs(1),
        };
        assert_eq!(odd.window_ms(HOUR), 10 * SECOND);
    }

    #[test]
    fn schedules_follow_the_kind_of_resolution() {
        let w = RefreshWindow::default();
        let t = 1_000_000;
        let plain = Lifetime::of(false, None, t).schedule(t, &w);
        assert_eq!(
            plain,
            Some(Schedule {
                refresh_at_ms: t + 5 * MINUTE,
                expires_at_ms: u64::MAX,
                expiry_vended: false
            })
        );
        let unknown = Lifetime::of(true, None, t).schedule(t, &w);
        assert_eq!(
            unknown,
            Some(Schedule {
                refresh_at_ms: t + MINUTE,
                expires_at_ms: t + MINUTE,
                expiry_vended: false
            })
        );
        let fifteen = Lifetime::of(true, Some(t + 15 * MINUTE), t).schedule(t, &w);
        assert_eq!(
            fifteen,
            Some(Schedule {
                refresh_at_ms: t + 14 * MINUTE,
                expires_at_ms: t + 15 * MINUTE,
                expiry_vended: true
            })
        );
        assert_eq!(Lifetime::of(true, Some(t), t).schedule(t, &w), None);
        assert_eq!(Lifetime::of(true, Some(t - 1), t).schedule(t, &w), None);
    }

    #[test]
    fn backoff_doubles_from_one_second_to_a_minute() {
        let seconds: Vec<u64> = (1..=9).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(seconds, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(backoff(0).as_secs(), 1);
        assert_eq!(backoff(u32::MAX).as_secs(), 60);
    }
}
