//! How the values of node configuration keys are read: booleans, bounded whole numbers, user
//! lists, addresses — each refusal names the key, the value (never a secret's) and what was
//! expected.

use crate::{Error, Result};

/// `true` or `false`, in any case.
pub(super) fn boolean(key: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(invalid(key, value, "true or false")),
    }
}

/// A whole number within `min..=max`.
pub(super) fn whole_number(value: &str, min: u64, max: u64) -> Option<u64> {
    value
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|n| (min..=max).contains(n))
}

/// `user:password,user:password`; every user needs a non-empty password.
pub(super) fn parse_users(value: &str) -> Result<Vec<(String, String)>> {
    let mut users = Vec::new();
    for entry in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (user, password) = entry.split_once(':').unwrap_or((entry, ""));
        if user.trim().is_empty() || password.is_empty() {
            // The value holds passwords: never echo it.
            return Err(invalid(
                "auth_users",
                "(hidden)",
                "user:password pairs separated by commas, each with a non-empty password",
            ));
        }
        users.push((user.trim().to_owned(), password.to_owned()));
    }
    Ok(users)
}

pub(super) fn invalid(key: &str, value: &str, expected: &'static str) -> Error {
    Error::InvalidConfig {
        key: key.to_owned(),
        value: value.to_owned(),
        expected,
    }
}

pub(super) fn socket_addr(key: &str, value: &str) -> Result<String> {
    let value = value.trim();
    let port_ok = value
        .rsplit_once(':')
        .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
    if port_ok {
        Ok(value.to_owned())
    } else {
        Err(invalid(key, value, "host:port, port 0 to pick a free one"))
    }
}
