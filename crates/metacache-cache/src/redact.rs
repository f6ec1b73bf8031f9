//! Secrets out of text that leaves the process: property values (`SHOW CREATE CATALOG`, the
//! HTTP catalog API) and the error text kept as `LAST_ERROR`. Keys are judged by name
//! ([`is_secret_name`]); values are scanned for the two places a secret hides in a URL: the
//! password of `scheme://user:password@host`, and a query or connection parameter with a
//! secret name (`?password=…`, `&sig=…`, `;pwd=…`). Each is replaced by [`MASK`].

use std::borrow::Cow;

/// What a secret is shown as (the Doris convention).
pub const MASK: &str = "*XXX";

/// Whether a property key or URL parameter names a secret: it contains `password`, `passwd`,
/// `pwd` (as a whole name), `secret`, `token`, `credential`, a private key, an access key or an
/// account key (`fs.azure.account.key.*`), or is a signature (`sig`, `signature`), in any case.
pub fn is_secret_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    const WORDS: [&str; 15] = [
        "password",
        "passwd",
        "secret",
        "token",
        "credential",
        "private_key",
        "private-key",
        "privatekey",
        "access_key",
        "access-key",
        "accesskey",
        "access.key",
        "account.key",
        "account_key",
        "accountkey",
    ];
    WORDS.iter().any(|w| name.contains(w)) || matches!(name.as_str(), "pwd" | "sig" | "signature")
}

/// `text` with the passwords of URLs and the values of secret parameters masked.
pub fn redact(text: &str) -> Cow<'_, str> {
    let userinfo = mask_userinfo(text);
    if let Cow::Owned(masked) = mask_parameters(&userinfo) {
        return Cow::Owned(masked);
    }
    userinfo
}

/// `scheme://user:password@host` → `scheme://user:*XXX@host`, for every URL in `text`.
fn mask_userinfo(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let authority_end = tail
            .find(|c: char| {
                matches!(c, '/' | '?' | '#') || c.is_whitespace() || c == '\'' || c == '"'
            })
            .unwrap_or(tail.len());
        let authority = &tail[..authority_end];
        match (authority.rfind('@'), authority.find(':')) {
            (Some(at_sign), Some(colon)) if colon < at_sign => {
                out.push_str(&authority[..=colon]);
                out.push_str(MASK);
                out.push_str(&authority[at_sign..]);
                changed = true;
            }
            _ => out.push_str(authority),
        }
        rest = &tail[authority_end..];
    }
    if !changed {
        return Cow::Borrowed(text);
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// `name=value` after `?`, `&` or `;` with a secret name → `name=*XXX`.
fn mask_parameters(text: &str) -> Cow<'_, str> {
    if !text.contains('=') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    let mut start = 0;
    while let Some((i, c)) = chars.next() {
        if !matches!(c, '?' | '&' | ';') {
            continue;
        }
        let name_start = i + 1;
        let Some(eq) = text[name_start..].find('=').map(|e| name_start + e) else {
            break;
        };
        let name = &text[name_start..eq];
        if name.is_empty()
            || name.contains(|c: char| matches!(c, '&' | ';' | '?') || c.is_whitespace())
        {
            continue;
        }
        if !is_secret_name(name) {
            continue;
        }
        let value_end = text[eq + 1..]
            .find(|c: char| matches!(c, '&' | ';' | '#' | '\'' | '"' | ')') || c.is_whitespace())
            .map_or(text.len(), |e| eq + 1 + e);
        out.push_str(&text[start..=eq]);
        out.push_str(MASK);
        start = value_end;
        while chars.peek().is_some_and(|(j, _)| *j < value_end) {
            chars.next();
        }
    }
    if start == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[start..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_in_urls_and_parameters_are_masked() {
        let cases = [
            (
                "postgresql://alice:hunter2@db:5432/meta",
                "postgresql://alice:*XXX@db:5432/meta",
            ),
            (
                "jdbc:postgresql://db/meta?user=alice&password=hunter2&ssl=true",
                "jdbc:postgresql://db/meta?user=alice&password=*XXX&ssl=true",
            ),
            (
                "https://acct.blob.core.windows.net/c?sv=2022&sig=abc%2Fdef",
                "https://acct.blob.core.windows.net/c?sv=2022&sig=*XXX",
            ),
            (
                "jdbc:sqlserver://h;user=a;pwd=p;db=x",
                "jdbc:sqlserver://h;user=a;pwd=*XXX;db=x",
            ),
            (
                "error at http://u:p@h/x and https://v:q@k/y",
                "error at http://u:*XXX@h/x and https://v:*XXX@k/y",
            ),
            ("http://user@host/x", "http://user@host/x"),
            ("s3://bucket/path", "s3://bucket/path"),
            ("no url here", "no url here"),
            (
                "GET /v1/config?token=t0k3n failed",
                "GET /v1/config?token=*XXX failed",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(redact(text), expected, "{text}");
        }
        assert!(matches!(redact("s3://bucket/path"), Cow::Borrowed(_)));
    }

    #[test]
    fn secret_names() {
        for name in [
            "password",
            "jdbc.passwd",
            "PWD",
            "fs.azure.account.key.acct.dfs.core.windows.net",
            "s3.secret_key",
            "iceberg.rest.oauth2.token",
            "sig",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in ["user", "uri", "jdbc_url", "warehouse", "keys", "signal"] {
            assert!(!is_secret_name(name), "{name}");
        }
    }
}
