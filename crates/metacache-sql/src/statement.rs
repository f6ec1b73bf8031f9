//! Our statements, parsed with the `sqlparser` that DataFusion re-exports (so the tree has one
//! parser): its tokenizer handles quoting and its errors name the line and column. `SELECT`
//! and friends are only recognised here and handed to DataFusion whole.

use datafusion::sql::sqlparser::dialect::MySqlDialect;
use datafusion::sql::sqlparser::parser::{Parser, ParserError};
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};

use crate::{Error, Result};

/// A parsed statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Statement {
    /// `CREATE CATALOG [IF NOT EXISTS] c [COMMENT '…'] PROPERTIES (…)`.
    CreateCatalog {
        /// Name.
        name: String,
        /// `IF NOT EXISTS`.
        if_not_exists: bool,
        /// `COMMENT`.
        comment: String,
        /// Properties in the order written (a later duplicate wins).
        properties: Vec<(String, String)>,
    },
    /// `ALTER CATALOG c SET PROPERTIES (…)`.
    AlterCatalog {
        /// Name.
        name: String,
        /// Properties.
        properties: Vec<(String, String)>,
    },
    /// `ALTER CATALOG c MODIFY COMMENT '…'`.
    AlterCatalogComment {
        /// Name.
        name: String,
        /// The new comment.
        comment: String,
    },
    /// `ALTER CATALOG c RENAME new_name`.
    RenameCatalog {
        /// Name.
        name: String,
        /// The new name.
        new_name: String,
    },
    /// `DROP CATALOG [IF EXISTS] c`.
    DropCatalog {
        /// Name.
        name: String,
        /// `IF EXISTS`.
        if_exists: bool,
    },
    /// `SHOW CATALOGS [LIKE '…']`.
    ShowCatalogs {
        /// Pattern.
        like: Option<String>,
    },
    /// `SHOW CATALOG c`: its properties as `Key`/`Value` rows (Doris).
    ShowCatalog {
        /// Name.
        name: String,
    },
    /// `SHOW CREATE CATALOG c`.
    ShowCreateCatalog {
        /// Name.
        name: String,
    },
    /// `REFRESH CATALOG c [PROPERTIES ("invalid_cache" = "true"|"false")]`.
    RefreshCatalog {
        /// Name.
        name: String,
        /// `invalid_cache` (default true): drop the cached values too, not only the lists.
        invalid_cache: bool,
    },
    /// `REFRESH DATABASE [c.]db [PROPERTIES ("invalid_cache" = …)]`.
    RefreshDatabase {
        /// Catalog, else the session's.
        catalog: Option<String>,
        /// Database.
        database: String,
        /// As for `RefreshCatalog`.
        invalid_cache: bool,
    },
    /// `REFRESH TABLE [[c.]db.]t`.
    RefreshTable {
        /// Catalog, else the session's.
        catalog: Option<String>,
        /// Database, else the session's.
        database: Option<String>,
        /// Table.
        table: String,
    },
    /// `ADMIN SET FRONTEND CONFIG ("k" = "v")`.
    AdminSetConfig {
        /// Key-value pairs.
        pairs: Vec<(String, String)>,
    },
    /// `ADMIN SHOW FRONTEND CONFIG [LIKE '…']`.
    AdminShowConfig {
        /// Pattern.
        like: Option<String>,
    },
    /// `SHOW DATABASES [FROM catalog] [LIKE '…']` / `SHOW SCHEMAS`.
    ShowDatabases {
        /// The catalog, else the session's.
        catalog: Option<String>,
        /// Pattern.
        like: Option<String>,
    },
    /// `SHOW [FULL] TABLES [FROM [catalog.]db] [LIKE '…']`.
    ShowTables {
        /// `FULL`: adds `Table_type`.
        full: bool,
        /// `[catalog.]db`, else the session's.
        database: Option<Vec<String>>,
        /// Pattern.
        like: Option<String>,
    },
    /// `SHOW PARTITIONS FROM [[catalog.]db.]table [LIKE '…']`.
    ShowPartitions {
        /// `[[catalog.]db.]table`.
        name: Vec<String>,
        /// Pattern on the partition name.
        like: Option<String>,
    },
    /// `SHOW [SESSION|GLOBAL] VARIABLES [LIKE '…']`.
    ShowVariables {
        /// Pattern.
        like: Option<String>,
    },
    /// `SHOW WARNINGS`.
    ShowWarnings,
    /// `SHOW [GLOBAL|SESSION] STATUS [LIKE '…']`.
    ShowStatus {
        /// Pattern.
        like: Option<String>,
    },
    /// `SHOW [FULL] PROCESSLIST`.
    ShowProcesslist,
    /// `SHOW COLLATION [LIKE '…']`.
    ShowCollation {
        /// Pattern.
        like: Option<String>,
    },
    /// `SHOW CHARACTER SET [LIKE '…']`, `SHOW CHARSET`.
    ShowCharset {
        /// Pattern.
        like: Option<String>,
    },
    /// `SHOW [STORAGE] ENGINES`.
    ShowEngines,
    /// `SHOW CREATE TABLE [[c.]db.]t`.
    ShowCreateTable {
        /// `[[catalog.]db.]table`.
        name: Vec<String>,
    },
    /// `SHOW INDEX|INDEXES|KEYS FROM [[c.]db.]t [FROM db]`.
    ShowIndex {
        /// `[[catalog.]db.]table`.
        name: Vec<String>,
    },
    /// `SHOW TABLE STATUS [FROM [c.]db] [LIKE '…']`.
    ShowTableStatus {
        /// `[catalog.]db`, else the session's.
        database: Option<Vec<String>>,
        /// Pattern.
        like: Option<String>,
    },
    /// `DESC t`, `DESCRIBE t`, `SHOW [FULL] COLUMNS FROM t`.
    Describe {
        /// `[db.]t`.
        name: Vec<String>,
    },
    /// `USE db`, `USE c.db`.
    Use {
        /// The catalog part, if given.
        catalog: Option<String>,
        /// The database.
        database: String,
    },
    /// `SWITCH c`.
    Switch {
        /// The catalog.
        catalog: String,
    },
    /// `SET …`, `BEGIN`, `COMMIT`, `ROLLBACK`: accepted and ignored (clients send them).
    Ignored,
    /// A read-only query for the SQL engine (`SELECT`, `WITH`, `VALUES`, `EXPLAIN`).
    Query(String),
}

impl Statement {
    /// Whether the statement only reads (it may then be cut off by the query time limit without
    /// leaving a change half made).
    pub fn reads_only(&self) -> bool {
        matches!(
            self,
            Statement::ShowCatalogs { .. }
                | Statement::ShowCatalog { .. }
                | Statement::ShowCreateCatalog { .. }
                | Statement::AdminShowConfig { .. }
                | Statement::ShowDatabases { .. }
                | Statement::ShowTables { .. }
                | Statement::ShowPartitions { .. }
                | Statement::ShowVariables { .. }
                | Statement::ShowStatus { .. }
                | Statement::ShowProcesslist
                | Statement::ShowCollation { .. }
                | Statement::ShowCharset { .. }
                | Statement::ShowEngines
                | Statement::ShowCreateTable { .. }
                | Statement::ShowIndex { .. }
                | Statement::ShowTableStatus { .. }
                | Statement::Describe { .. }
                | Statement::Query(_)
        )
    }
}

/// Parses one statement (a trailing `;` is allowed).
pub fn parse(sql: &str) -> Result<Statement> {
    let sql = sql.trim();
    let dialect = MySqlDialect {};
    let tokens = Tokenizer::new(&dialect, sql)
        .tokenize_with_location()
        .map_err(|e| parse_error(ParserError::TokenizerError(e.to_string())))?;
    let words: Vec<&Token> = tokens
        .iter()
        .map(|t| &t.token)
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    let statements = 1 + words
        .iter()
        .enumerate()
        .filter(|(i, t)| {
            matches!(t, Token::SemiColon)
                && words[i + 1..]
                    .iter()
                    .any(|t| !matches!(t, Token::SemiColon))
        })
        .count();
    if words.iter().all(|t| matches!(t, Token::SemiColon)) {
        return Err(Error::Empty);
    }
    if statements > 1 {
        return Err(Error::MultipleStatements { count: statements });
    }
    let first = first_word(&words);
    let second = words.get(1).and_then(|t| word(t));
    match (first.as_deref(), second.as_deref()) {
        (Some("SELECT" | "WITH" | "VALUES" | "EXPLAIN"), _) => {
            Ok(Statement::Query(strip_semicolons(sql).to_owned()))
        }
        (None, _) if matches!(words.first(), Some(Token::LParen)) => {
            Ok(Statement::Query(strip_semicolons(sql).to_owned()))
        }
        (Some("SET" | "BEGIN" | "COMMIT" | "ROLLBACK" | "START"), _) => Ok(Statement::Ignored),
        _ => {
            let mut parser = Parser::new(&dialect).with_tokens_with_locations(tokens);
            ours(&mut parser, first.as_deref().unwrap_or_default()).map_err(parse_error)
        }
    }
}

fn parse_error(error: ParserError) -> Error {
    let message = match error {
        ParserError::ParserError(m) | ParserError::TokenizerError(m) => m,
        ParserError::RecursionLimitExceeded => "statement nested too deeply".to_owned(),
    };
    Error::Parse {
        message: format!("Syntax error: {message}"),
    }
}

fn strip_semicolons(sql: &str) -> &str {
    sql.trim_end_matches(|c: char| c == ';' || c.is_whitespace())
}

fn word(token: &Token) -> Option<String> {
    match token {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        _ => None,
    }
}

fn first_word(tokens: &[&Token]) -> Option<String> {
    tokens.first().and_then(|t| word(t))
}

type P<'a> = Parser<'a>;
type R<T> = std::result::Result<T, ParserError>;

/// Whether the next token is the unquoted word `w`.
fn peek_is(p: &P, w: &str) -> bool {
    word(&p.peek_token().token).is_some_and(|v| v == w)
}

/// Consumes the word `w` if it is next.
fn eat(p: &mut P, w: &str) -> bool {
    let found = peek_is(p, w);
    if found {
        p.next_token();
    }
    found
}

/// Consumes the word `w` or fails naming it.
fn expect(p: &mut P, w: &str) -> R<()> {
    if eat(p, w) {
        Ok(())
    } else {
        p.expected(w, p.peek_token())
    }
}

fn eat_all(p: &mut P, words: &[&str]) -> R<bool> {
    if !peek_is(p, words[0]) {
        return Ok(false);
    }
    for w in words {
        expect(p, w)?;
    }
    Ok(true)
}

fn name(p: &mut P) -> R<String> {
    Ok(p.parse_identifier()?.value)
}

/// `a`, `a.b`, `a.b.c`.
fn dotted(p: &mut P) -> R<Vec<String>> {
    let mut parts = vec![name(p)?];
    while p.consume_token(&Token::Period) {
        parts.push(name(p)?);
    }
    Ok(parts)
}

/// A string, a number or a bare word.
fn value(p: &mut P) -> R<String> {
    let token = p.next_token();
    match token.token {
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Ok(s),
        Token::Number(n, _) => Ok(n),
        Token::Word(w) => Ok(w.value),
        _ => p.expected("a quoted string", token),
    }
}

/// `( "k" = "v", … )`.
fn properties(p: &mut P) -> R<Vec<(String, String)>> {
    p.expect_token(&Token::LParen)?;
    let mut pairs = Vec::new();
    if p.consume_token(&Token::RParen) {
        return Ok(pairs);
    }
    loop {
        let key = value(p)?;
        p.expect_token(&Token::Eq)?;
        pairs.push((key, value(p)?));
        if p.consume_token(&Token::RParen) {
            return Ok(pairs);
        }
        p.expect_token(&Token::Comma)?;
    }
}

fn like(p: &mut P) -> R<Option<String>> {
    if eat(p, "LIKE") {
        Ok(Some(value(p)?))
    } else {
        Ok(None)
    }
}

fn end(p: &mut P) -> R<()> {
    while p.consume_token(&Token::SemiColon) {}
    match p.peek_token().token {
        Token::EOF => Ok(()),
        _ => p.expected("end of statement", p.peek_token()),
    }
}

const OURS: [&str; 9] = [
    "CREATE", "ALTER", "DROP", "REFRESH", "ADMIN", "SHOW", "DESC", "DESCRIBE", "USE",
];

fn ours(p: &mut P, first: &str) -> R<Statement> {
    if OURS.contains(&first) || first == "SWITCH" {
        p.next_token();
    }
    let statement = match first {
        "CREATE" => create(p)?,
        "ALTER" => alter(p)?,
        "DROP" => {
            expect(p, "CATALOG")?;
            let if_exists = eat_all(p, &["IF", "EXISTS"])?;
            Statement::DropCatalog {
                name: name(p)?,
                if_exists,
            }
        }
        "REFRESH" => refresh(p)?,
        "ADMIN" => admin(p)?,
        "SHOW" => show::show(p)?,
        "DESC" | "DESCRIBE" => Statement::Describe { name: dotted(p)? },
        "USE" => {
            let mut parts = dotted(p)?;
            let database = parts.pop().unwrap_or_default();
            Statement::Use {
                catalog: parts.pop(),
                database,
            }
        }
        "SWITCH" => Statement::Switch { catalog: name(p)? },
        _ => {
            return p.expected(
                "CREATE, ALTER, DROP, SHOW or REFRESH CATALOG, ADMIN, SHOW, DESC, USE, SET or SELECT",
                p.peek_token(),
            );
        }
    };
    end(p)?;
    Ok(statement)
}

fn create(p: &mut P) -> R<Statement> {
    expect(p, "CATALOG")?;
    let if_not_exists = eat_all(p, &["IF", "NOT", "EXISTS"])?;
    let name = name(p)?;
    let comment = if eat(p, "COMMENT") {
        value(p)?
    } else {
        String::new()
    };
    let properties = if eat(p, "PROPERTIES") {
        properties(p)?
    } else {
        Vec::new()
    };
    Ok(Statement::CreateCatalog {
        name,
        if_not_exists,
        comment,
        properties,
    })
}

/// `ALTER CATALOG c SET PROPERTIES (…)`, `… MODIFY COMMENT '…'`, `… RENAME new_name`.
fn alter(p: &mut P) -> R<Statement> {
    expect(p, "CATALOG")?;
    let name = name(p)?;
    if eat(p, "RENAME") {
        return Ok(Statement::RenameCatalog {
            name,
            new_name: self::name(p)?,
        });
    }
    if eat(p, "MODIFY") {
        expect(p, "COMMENT")?;
        return Ok(Statement::AlterCatalogComment {
            name,
            comment: value(p)?,
        });
    }
    if !eat(p, "SET") {
        return p.expected("SET PROPERTIES, MODIFY COMMENT or RENAME", p.peek_token());
    }
    expect(p, "PROPERTIES")?;
    Ok(Statement::AlterCatalog {
        name,
        properties: properties(p)?,
    })
}

/// The optional `PROPERTIES ("invalid_cache" = "true"|"false")` of REFRESH CATALOG/DATABASE:
/// true when absent; another key or value is a syntax error (Doris ignores them).
fn invalid_cache(p: &mut P) -> R<bool> {
    if !eat(p, "PROPERTIES") {
        return Ok(true);
    }
    let mut invalid_cache = true;
    for (key, value) in properties(p)? {
        if !key.eq_ignore_ascii_case("invalid_cache") {
            return Err(ParserError::ParserError(format!(
                "REFRESH takes only the property 'invalid_cache', not '{}'",
                key.escape_debug()
            )));
        }
        invalid_cache = match value.to_ascii_lowercase().as_str() {
            "true" => true,
            "false" => false,
            _ => {
                return Err(ParserError::ParserError(format!(
                    "'invalid_cache' is true or false, not '{}'",
                    value.escape_debug()
                )));
            }
        };
    }
    Ok(invalid_cache)
}

fn refresh(p: &mut P) -> R<Statement> {
    if eat(p, "CATALOG") {
        let name = name(p)?;
        return Ok(Statement::RefreshCatalog {
            name,
            invalid_cache: invalid_cache(p)?,
        });
    }
    if eat(p, "DATABASE") || eat(p, "SCHEMA") {
        let mut parts = dotted(p)?;
        if parts.len() > 2 {
            return p.expected("[catalog.]database", p.peek_token());
        }
        let database = parts.pop().unwrap_or_default();
        return Ok(Statement::RefreshDatabase {
            catalog: parts.pop(),
            database,
            invalid_cache: invalid_cache(p)?,
        });
    }
    expect(p, "TABLE")?;
    let mut parts = dotted(p)?;
    if parts.len() > 3 {
        return p.expected("[[catalog.]database.]table", p.peek_token());
    }
    let table = parts.pop().unwrap_or_default();
    let database = parts.pop();
    Ok(Statement::RefreshTable {
        catalog: parts.pop(),
        database,
        table,
    })
}

fn admin(p: &mut P) -> R<Statement> {
    if eat(p, "SET") {
        expect(p, "FRONTEND")?;
        expect(p, "CONFIG")?;
        let pairs = properties(p)?;
        eat(p, "ALL");
        return Ok(Statement::AdminSetConfig { pairs });
    }
    expect(p, "SHOW")?;
    expect(p, "FRONTEND")?;
    expect(p, "CONFIG")?;
    Ok(Statement::AdminShowConfig { like: like(p)? })
}

mod show;
pub mod tokens;

#[cfg(test)]
mod tests;
