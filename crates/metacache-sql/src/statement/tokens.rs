//! The tokens of MySQL's dialect, for front ends that work on statement text (prepared
//! statements find their placeholders with them).

use datafusion::sql::sqlparser::dialect::MySqlDialect;
pub use datafusion::sql::sqlparser::tokenizer::Token;

/// The tokens of `sql` as written: displaying them in order gives `sql` back exactly
/// (strings keep their escapes).
pub fn raw(sql: &str) -> Result<Vec<Token>, String> {
    datafusion::sql::sqlparser::tokenizer::Tokenizer::new(&MySqlDialect {}, sql)
        .with_unescape(false)
        .tokenize()
        .map_err(|e| e.to_string())
}

/// The tokens of `sql` with string escapes resolved (what the parser sees).
pub fn unescaped(sql: &str) -> Result<Vec<Token>, String> {
    datafusion::sql::sqlparser::tokenizer::Tokenizer::new(&MySqlDialect {}, sql)
        .tokenize()
        .map_err(|e| e.to_string())
}
