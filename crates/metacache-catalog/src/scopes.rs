//! The catalog properties of scan scopes (§8.2): how early a scope refreshes the credentials its
//! catalog vends. Each key is checked on its own when a statement submits it; a stored value
//! that no longer parses is ignored (the default applies) and was reported when loaded.
//!
//! | key | default | range |
//! |---|---|---|
//! | `scope.refresh-window.percent` | 10 | 0 to 100 (share of the credential's lifetime) |
//! | `scope.refresh-window.min-ms` | 1000 | 0 to 3600000 |
//! | `scope.refresh-window.max-ms` | 60000 | 0 to 86400000 (below `min-ms`, `min-ms` wins) |

use std::time::Duration;

use metacache_cache::scope::RefreshWindow;

use crate::{Error, Properties, Result};

/// Share of a credential's lifetime refreshed ahead.
pub const WINDOW_PERCENT_KEY: &str = "scope.refresh-window.percent";
/// The smallest window, in milliseconds.
pub const WINDOW_MIN_KEY: &str = "scope.refresh-window.min-ms";
/// The largest window, in milliseconds.
pub const WINDOW_MAX_KEY: &str = "scope.refresh-window.max-ms";

/// (key, largest value, what it takes) of every scope key.
const KEYS: [(&str, u64, &str); 3] = [
    (WINDOW_PERCENT_KEY, 100, "a whole percentage, 0 to 100"),
    (WINDOW_MIN_KEY, 3_600_000, "milliseconds, 0 to 3600000"),
    (WINDOW_MAX_KEY, 86_400_000, "milliseconds, 0 to 86400000"),
];

/// Checks `value` if `key` is a scope key: `Ok(true)` when it is one and valid, `Ok(false)`
/// when it is not a scope key.
pub fn check(key: &str, value: &str) -> Result<bool> {
    let Some((key, max, expected)) = KEYS.iter().find(|(k, _, _)| *k == key) else {
        return Ok(false);
    };
    parse(value, *max).ok_or_else(|| Error::InvalidScopeSetting {
        key: (*key).to_owned(),
        value: value.to_owned(),
        expected,
    })?;
    Ok(true)
}

fn parse(value: &str, max: u64) -> Option<u64> {
    value.trim().parse::<u64>().ok().filter(|v| *v <= max)
}

/// The refresh window a catalog's properties set (defaults for absent or invalid values).
pub fn refresh_window(properties: &Properties) -> RefreshWindow {
    let default = RefreshWindow::default();
    let get = |key: &str, max: u64| properties.get(key).and_then(|v| parse(v, max));
    RefreshWindow {
        percent: get(WINDOW_PERCENT_KEY, 100)
            .and_then(|p| u32::try_from(p).ok())
            .unwrap_or(default.percent),
        min: get(WINDOW_MIN_KEY, 3_600_000).map_or(default.min, Duration::from_millis),
        max: get(WINDOW_MAX_KEY, 86_400_000).map_or(default.max, Duration::from_millis),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_checked_and_read() {
        assert!(matches!(check("warehouse", "x"), Ok(false)));
        assert!(matches!(check(WINDOW_PERCENT_KEY, " 25 "), Ok(true)));
        for (key, bad) in [
            (WINDOW_PERCENT_KEY, "101"),
            (WINDOW_PERCENT_KEY, "ten"),
            (WINDOW_MIN_KEY, "-1"),
            (WINDOW_MAX_KEY, "1e9"),
        ] {
            let error = check(key, bad).expect_err(bad).to_string();
            assert!(error.contains(key) && error.contains(bad), "{error}");
        }
        let properties = Properties::from_pairs([
            (WINDOW_PERCENT_KEY, "25"),
            (WINDOW_MAX_KEY, "300000"),
            (WINDOW_MIN_KEY, "oops"),
        ]);
        let window = refresh_window(&properties);
        assert_eq!(window.percent, 25);
        assert_eq!(window.max, Duration::from_secs(300));
        assert_eq!(
            window.min,
            RefreshWindow::default().min,
            "invalid stored: default"
        );
        assert_eq!(
            refresh_window(&Properties::default()),
            RefreshWindow::default()
        );
    }
}
