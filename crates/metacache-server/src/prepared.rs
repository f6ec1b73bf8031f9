//! Server-side prepared statements of the MySQL binary protocol (issue 13): `COM_STMT_PREPARE`
//! counts the statement's `?` placeholders, `COM_STMT_EXECUTE` binds the client's values into
//! the text as SQL literals and runs it like a text statement, `COM_STMT_CLOSE` forgets it.
//! Every statement of SPEC §7 can be prepared, DDL included, as in MySQL.
//!
//! Binding is textual, the way MySQL's own client-side emulation and proxies do it, so a
//! prepared statement means exactly what the same text statement means. It is safe because
//! placeholders are found by the SQL tokenizer (a `?` inside a string, an identifier or a
//! comment is not one) and every value becomes one literal token: strings are quoted with
//! both quotes and backslashes escaped (the MySQL dialect reads backslash escapes), numbers
//! are written by Rust, dates and times as quoted text.
//!
//! # Invariants
//! - A connection holds at most [`MAX_STATEMENTS`] prepared statements (MySQL's
//!   `max_prepared_stmt_count` answers 1461 the same way), holding at most [`MAX_BYTES`]
//!   together (text and tokens): a client cannot grow the server by preparing.
//! - An execute binds exactly the statement's number of values; anything else is an error.

use std::collections::HashMap;
use std::fmt::Write as _;

use metacache_sql::statement::tokens::{self, Token};
use opensrv_mysql::ValueInner;

/// Prepared statements one connection may hold.
pub const MAX_STATEMENTS: usize = 1024;
/// Bytes the prepared statements of one connection may hold together.
pub const MAX_BYTES: usize = 16 << 20;

/// Why a statement could not be prepared or bound.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BindError {
    /// The text does not tokenize (an unterminated string, say).
    #[error("Syntax error: {reason}")]
    Syntax {
        /// The tokenizer's message.
        reason: String,
    },
    /// An execute with another number of values than the statement has placeholders.
    #[error(
        "Incorrect arguments to mysqld_stmt_execute: {expected} parameters expected, {given} given"
    )]
    Arity {
        /// Placeholders.
        expected: usize,
        /// Values sent.
        given: usize,
    },
    /// A binary date or time value that does not decode.
    #[error("Parameter {index}: {reason}")]
    Value {
        /// 1-based.
        index: usize,
        /// Why.
        reason: String,
    },
    /// More statements than [`MAX_STATEMENTS`].
    #[error(
        "Can't create more than max_prepared_stmt_count statements (current value: {MAX_STATEMENTS})"
    )]
    TooMany,
    /// More than [`MAX_BYTES`] of prepared statements.
    #[error(
        "Prepared statements of one connection may hold 16 MiB together; this one needs {bytes} bytes more than is left: close some (COM_STMT_CLOSE) or send it as text"
    )]
    TooLarge {
        /// What it was short by.
        bytes: usize,
    },
}

/// One prepared statement.
#[derive(Debug, Clone)]
pub struct Prepared {
    tokens: Vec<Token>,
    /// Number of `?` placeholders.
    pub params: usize,
}

/// A connection's prepared statements.
#[derive(Debug, Default)]
pub struct Statements {
    next_id: u32,
    by_id: HashMap<u32, Prepared>,
    /// What the statements hold ([`Prepared::bytes`]).
    bytes: usize,
}

impl Statements {
    /// Prepares `sql`: its id and statement.
    pub fn prepare(&mut self, sql: &str) -> Result<(u32, Prepared), BindError> {
        if self.by_id.len() >= MAX_STATEMENTS {
            return Err(BindError::TooMany);
        }
        let prepared = Prepared::new(sql)?;
        let needed = prepared.bytes();
        let left = MAX_BYTES.saturating_sub(self.bytes);
        if needed > left {
            return Err(BindError::TooLarge {
                bytes: needed - left,
            });
        }
        self.bytes += needed;
        self.next_id = self.next_id.wrapping_add(1).max(1);
        while self.by_id.contains_key(&self.next_id) {
            self.next_id = self.next_id.wrapping_add(1).max(1);
        }
        self.by_id.insert(self.next_id, prepared.clone());
        Ok((self.next_id, prepared))
    }

    /// The statement `id`.
    pub fn get(&self, id: u32) -> Option<&Prepared> {
        self.by_id.get(&id)
    }

    /// Forgets `id`.
    pub fn close(&mut self, id: u32) {
        if let Some(gone) = self.by_id.remove(&id) {
            self.bytes = self.bytes.saturating_sub(gone.bytes());
        }
    }
}

fn is_placeholder(token: &Token) -> bool {
    matches!(token, Token::Placeholder(p) if p == "?")
}

impl Prepared {
    /// Tokenizes `sql` and counts its placeholders.
    pub fn new(sql: &str) -> Result<Self, BindError> {
        let tokens = tokens::raw(sql).map_err(|reason| BindError::Syntax { reason })?;
        let params = tokens.iter().filter(|t| is_placeholder(t)).count();
        Ok(Self { tokens, params })
    }

    /// What the statement holds: its tokens and their text.
    pub fn bytes(&self) -> usize {
        self.tokens.capacity() * std::mem::size_of::<Token>()
            + self
                .tokens
                .iter()
                .map(|t| match t {
                    Token::Word(w) => w.value.capacity(),
                    Token::SingleQuotedString(s)
                    | Token::DoubleQuotedString(s)
                    | Token::Number(s, _)
                    | Token::Placeholder(s) => s.capacity(),
                    Token::Whitespace(_) => 0,
                    other => other.to_string().len(),
                })
                .sum::<usize>()
    }

    /// The text with `values` (as SQL literals) in place of the placeholders, in order.
    pub fn bind(&self, values: &[ValueInner<'_>]) -> Result<String, BindError> {
        if values.len() != self.params {
            return Err(BindError::Arity {
                expected: self.params,
                given: values.len(),
            });
        }
        let mut values = values.iter().enumerate();
        let mut text = String::new();
        // Inside `LIMIT …`/`OFFSET …`: a whole double (JavaScript drivers send every number
        // as one) is written as an integer, which is what LIMIT takes.
        let mut in_limit = false;
        for token in &self.tokens {
            if is_placeholder(token) {
                let (index, value) = values.next().ok_or(BindError::Arity {
                    expected: self.params,
                    given: 0,
                })?;
                let value = match value {
                    ValueInner::Double(d)
                        if in_limit && d.fract() == 0.0 && d.abs() < 9_007_199_254_740_992.0 =>
                    {
                        // Whole and exact: the cast cannot truncate.
                        ValueInner::Int(*d as i64)
                    }
                    other => *other,
                };
                text.push_str(&literal(&value).map_err(|reason| BindError::Value {
                    index: index + 1,
                    reason,
                })?);
            } else {
                match token {
                    Token::Word(w) if w.quote_style.is_none() => {
                        in_limit = w.value.eq_ignore_ascii_case("LIMIT")
                            || w.value.eq_ignore_ascii_case("OFFSET");
                    }
                    Token::Whitespace(_) | Token::Comma | Token::Number(..) => {}
                    _ => in_limit = false,
                }
                let _ = write!(text, "{token}");
            }
        }
        Ok(text)
    }

    /// The text with every placeholder NULL: what planning the statement's columns needs.
    pub fn with_nulls(&self) -> String {
        let mut text = String::new();
        for token in &self.tokens {
            if is_placeholder(token) {
                text.push_str("NULL");
            } else {
                let _ = write!(text, "{token}");
            }
        }
        text
    }
}

/// `text` as a MySQL string literal: quotes doubled, backslashes escaped.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('\'');
    for c in text.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

fn literal(value: &ValueInner<'_>) -> Result<String, String> {
    Ok(match value {
        ValueInner::NULL => "NULL".to_owned(),
        ValueInner::Int(i) => i.to_string(),
        ValueInner::UInt(u) => u.to_string(),
        ValueInner::Double(d) if d.is_finite() => format!("{d:?}"),
        ValueInner::Double(_) => "NULL".to_owned(),
        ValueInner::Bytes(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => quoted(text),
            Err(_) => {
                let mut hex = String::from("X'");
                for b in *bytes {
                    let _ = write!(hex, "{b:02X}");
                }
                hex.push('\'');
                hex
            }
        },
        ValueInner::Date(bytes) | ValueInner::Datetime(bytes) => quoted(&datetime(bytes)?),
        ValueInner::Time(bytes) => quoted(&time(bytes)?),
    })
}

/// A binary `DATE`/`DATETIME`/`TIMESTAMP` (0, 4, 7 or 11 bytes) as `YYYY-MM-DD[ hh:mm:ss[.ffffff]]`.
fn datetime(bytes: &[u8]) -> Result<String, String> {
    let u16_at = |i: usize| u16::from_le_bytes([bytes[i], bytes[i + 1]]);
    match bytes.len() {
        0 => Ok("0000-00-00 00:00:00".to_owned()),
        4 => Ok(format!("{:04}-{:02}-{:02}", u16_at(0), bytes[2], bytes[3])),
        7 | 11 => {
            let mut text = format!(
                "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
                u16_at(0),
                bytes[2],
                bytes[3],
                bytes[4],
                bytes[5],
                bytes[6]
            );
            if bytes.len() == 11 {
                let micros = u32::from_le_bytes([bytes[7], bytes[8], bytes[9], bytes[10]]);
                let _ = write!(text, ".{micros:06}");
            }
            Ok(text)
        }
        n => Err(format!("a date of {n} bytes")),
    }
}

/// A binary `TIME` (0, 8 or 12 bytes) as `[-]hh:mm:ss[.ffffff]` (days folded into hours).
fn time(bytes: &[u8]) -> Result<String, String> {
    match bytes.len() {
        0 => Ok("00:00:00".to_owned()),
        8 | 12 => {
            let negative = bytes[0] == 1;
            let days = u32::from_le_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]);
            let hours = u64::from(days) * 24 + u64::from(bytes[5]);
            let mut text = format!(
                "{}{hours:02}:{:02}:{:02}",
                if negative { "-" } else { "" },
                bytes[6],
                bytes[7]
            );
            if bytes.len() == 12 {
                let micros = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
                let _ = write!(text, ".{micros:06}");
            }
            Ok(text)
        }
        n => Err(format!("a time of {n} bytes")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bind(sql: &str, values: &[ValueInner<'_>]) -> String {
        Prepared::new(sql)
            .expect("tokenizes")
            .bind(values)
            .expect("binds")
    }

    #[test]
    fn placeholders_are_tokens_not_characters() {
        let p = Prepared::new("SELECT '?', `a?`, ? /* ? */ FROM t WHERE x = ? -- ?\n")
            .expect("tokenizes");
        assert_eq!(p.params, 2);
        assert_eq!(
            bind(
                "SELECT ? + ?",
                &[ValueInner::Int(-3), ValueInner::UInt(u64::MAX)]
            ),
            "SELECT -3 + 18446744073709551615"
        );
        assert_eq!(bind("SELECT ?", &[ValueInner::Double(0.1)]), "SELECT 0.1");
        assert_eq!(bind("SELECT ?", &[ValueInner::NULL]), "SELECT NULL");
    }

    #[test]
    fn a_value_is_one_literal_whatever_it_holds() {
        for hostile in [
            "x' OR '1'='1",
            "x\\",
            "x\\' ; DROP CATALOG c; --",
            "\\\\'",
            "😀 ' \" ` ?",
        ] {
            let sql = bind("SELECT ? AS v", &[ValueInner::Bytes(hostile.as_bytes())]);
            let tokens = tokens::unescaped(&sql).expect("tokenizes");
            let strings: Vec<&Token> = tokens
                .iter()
                .filter(|t| matches!(t, Token::SingleQuotedString(_)))
                .collect();
            assert_eq!(
                strings,
                [&Token::SingleQuotedString(hostile.to_owned())],
                "{sql}"
            );
        }
        assert_eq!(
            bind("SELECT ?", &[ValueInner::Bytes(&[0xff, 0x00])]),
            "SELECT X'FF00'"
        );
    }

    #[test]
    fn dates_and_times_are_quoted_text() {
        let date = [0xe8, 0x07, 12, 3];
        assert_eq!(
            bind("SELECT ?", &[ValueInner::Date(&date)]),
            "SELECT '2024-12-03'"
        );
        let at = [0xe8, 0x07, 12, 3, 17, 5, 9, 0x40, 0xe2, 0x01, 0x00];
        assert_eq!(
            bind("SELECT ?", &[ValueInner::Datetime(&at)]),
            "SELECT '2024-12-03 17:05:09.123456'"
        );
        let t = [1, 1, 0, 0, 0, 2, 3, 4];
        assert_eq!(
            bind("SELECT ?", &[ValueInner::Time(&t)]),
            "SELECT '-26:03:04'"
        );
        assert!(
            Prepared::new("SELECT ?")
                .expect("ok")
                .bind(&[ValueInner::Date(&[1, 2])])
                .is_err()
        );
    }

    #[test]
    fn the_rest_of_the_text_is_kept_exactly() {
        let sql = "SELECT 'a\\b', 'it''s', `Col``x` FROM t WHERE n = ? -- note\n";
        assert_eq!(
            bind(sql, &[ValueInner::Int(1)]),
            sql.replace('?', "1"),
            "escapes in the statement's own strings survive"
        );
    }

    #[test]
    fn whole_doubles_in_limit_and_offset_are_integers() {
        assert_eq!(
            bind(
                "SELECT ? FROM t LIMIT ?, ? OFFSET ?",
                &[
                    ValueInner::Double(2.0),
                    ValueInner::Double(1.0),
                    ValueInner::Double(5.0),
                    ValueInner::Double(3.0)
                ]
            ),
            "SELECT 2.0 FROM t LIMIT 1, 5 OFFSET 3"
        );
        assert_eq!(
            bind("SELECT 1 LIMIT ?", &[ValueInner::Double(2.5)]),
            "SELECT 1 LIMIT 2.5",
            "a fraction stays (and is refused as MySQL refuses it)"
        );
    }

    #[test]
    fn arity_and_limits() {
        let p = Prepared::new("SELECT ?").expect("tokenizes");
        assert_eq!(
            p.bind(&[]),
            Err(BindError::Arity {
                expected: 1,
                given: 0
            })
        );
        let mut statements = Statements::default();
        for _ in 0..MAX_STATEMENTS {
            statements.prepare("SELECT 1").expect("room");
        }
        assert_eq!(
            statements.prepare("SELECT 1").err(),
            Some(BindError::TooMany)
        );
        statements.close(1);
        assert!(statements.prepare("SELECT 1").is_ok());
        // Bytes: a few large statements fill the budget long before the count does.
        let mut statements = Statements::default();
        let big = format!("SELECT '{}'", "x".repeat(4 << 20));
        let mut prepared = 0;
        while statements.prepare(&big).is_ok() {
            prepared += 1;
            assert!(prepared < 8, "the byte budget binds");
        }
        assert!(matches!(
            statements.prepare(&big),
            Err(BindError::TooLarge { .. })
        ));
        statements.close(1);
        assert!(
            statements.prepare(&big).is_ok(),
            "closing gives the bytes back"
        );
        assert!(matches!(
            Prepared::new("SELECT 'unterminated"),
            Err(BindError::Syntax { .. })
        ));
    }
}
