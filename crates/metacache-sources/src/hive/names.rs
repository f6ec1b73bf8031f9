//! Hive partition names: `k1=v1/k2=v2`, with values escaped the way Hive escapes them in
//! directory names (`%` followed by two hex digits for `/`, `=`, `:`, `%`, `#`, control
//! characters and a few more), and `__HIVE_DEFAULT_PARTITION__` for NULL.

/// The directory name Hive gives a NULL partition value.
pub const DEFAULT_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// Splits one directory name `key=value` into the key and the unescaped value.
pub fn split_component(component: &str) -> Option<(&str, String)> {
    let (key, value) = component.split_once('=')?;
    (!key.is_empty()).then(|| (key, unescape(value)))
}

/// The values of `name` for the partition columns `keys`, in order; `None` if `name` does not
/// have exactly these columns in this order.
pub fn parse(name: &str, keys: &[String]) -> Option<Vec<String>> {
    let parts: Vec<&str> = name.split('/').collect();
    if parts.len() != keys.len() {
        return None;
    }
    parts
        .iter()
        .zip(keys)
        .map(|(part, key)| {
            let (k, v) = split_component(part)?;
            k.eq_ignore_ascii_case(key).then_some(v)
        })
        .collect()
}

/// Undoes Hive's `%XX` escaping; malformed escapes are kept as they are.
pub fn unescape(text: &str) -> String {
    if !text.contains('%') {
        return text.to_owned();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(byte) = hex_pair(bytes[i + 1], bytes[i + 2])
        {
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Escapes a value for a directory name the way Hive (and Paimon) do: `%XX` (upper-case hex)
/// for control characters, `"`, `#`, `%`, `'`, `*`, `/`, `:`, `=`, `?`, `\\`, DEL, `{`, `[`,
/// `]` and `^`. [`unescape`] undoes it.
pub fn escape(value: &str) -> String {
    let needs = |c: char| {
        matches!(
            c,
            '\u{01}'
                ..='\u{1f}'
                    | '"'
                    | '#'
                    | '%'
                    | '\''
                    | '*'
                    | '/'
                    | ':'
                    | '='
                    | '?'
                    | '\\'
                    | '\u{7f}'
                    | '{'
                    | '['
                    | ']'
                    | '^'
        )
    };
    if !value.contains(needs) {
        return value.to_owned();
    }
    let mut out = String::with_capacity(value.len() + 8);
    for c in value.chars() {
        if needs(c) {
            out.push_str(&format!("%{:02X}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

fn hex_pair(high: u8, low: u8) -> Option<u8> {
    let digit = |c: u8| (c as char).to_digit(16);
    Some(u8::try_from(digit(high)? * 16 + digit(low)?).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(k: &[&str]) -> Vec<String> {
        k.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn parses_names_in_column_order() {
        assert_eq!(
            parse("dt=2024-01-01/region=us", &keys(&["dt", "region"])),
            Some(vec!["2024-01-01".to_owned(), "us".to_owned()])
        );
        assert_eq!(parse("region=us/dt=1", &keys(&["dt", "region"])), None);
        assert_eq!(parse("dt=1", &keys(&["dt", "region"])), None);
        assert_eq!(parse("dt", &keys(&["dt"])), None);
    }

    #[test]
    fn unescapes_hive_escapes() {
        assert_eq!(unescape("2024-01-01 10%3A00%3A00"), "2024-01-01 10:00:00");
        assert_eq!(unescape("a%2Fb%3Dc"), "a/b=c");
        assert_eq!(unescape("100%"), "100%");
        assert_eq!(unescape("%zz%4"), "%zz%4");
        assert_eq!(unescape(DEFAULT_PARTITION), DEFAULT_PARTITION);
    }

    #[test]
    fn escape_is_undone_by_unescape() {
        assert_eq!(escape("2024-01-01"), "2024-01-01");
        assert_eq!(escape("10:00/a=b%"), "10%3A00%2Fa%3Db%25");
        for value in ["a/b=c", "x%y", "plain", "é:ü", "tab\there"] {
            assert_eq!(unescape(&escape(value)), value);
        }
    }
}
