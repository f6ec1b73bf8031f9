//! `SHOW …` statements.

use super::{P, R, Statement, dotted, eat, eat_all, expect, like, name};

pub(super) fn show(p: &mut P) -> R<Statement> {
    if eat(p, "CATALOGS") {
        return Ok(Statement::ShowCatalogs { like: like(p)? });
    }
    if eat(p, "CATALOG") {
        return Ok(Statement::ShowCatalog { name: name(p)? });
    }
    if eat(p, "CREATE") {
        if eat(p, "TABLE") {
            return Ok(Statement::ShowCreateTable { name: dotted(p)? });
        }
        expect(p, "CATALOG")?;
        return Ok(Statement::ShowCreateCatalog { name: name(p)? });
    }
    if eat(p, "COLLATION") {
        return Ok(Statement::ShowCollation { like: like(p)? });
    }
    if eat(p, "CHARSET") || eat_all(p, &["CHARACTER", "SET"])? {
        return Ok(Statement::ShowCharset { like: like(p)? });
    }
    if eat(p, "ENGINES") || eat_all(p, &["STORAGE", "ENGINES"])? {
        return Ok(Statement::ShowEngines);
    }
    if eat(p, "INDEX") || eat(p, "INDEXES") || eat(p, "KEYS") {
        if !(eat(p, "FROM") || eat(p, "IN")) {
            return p.expected("FROM", p.peek_token());
        }
        let mut name = dotted(p)?;
        if eat(p, "FROM") || eat(p, "IN") {
            name.insert(0, self::name(p)?);
        }
        return Ok(Statement::ShowIndex { name });
    }
    if eat_all(p, &["TABLE", "STATUS"])? {
        let database = if eat(p, "FROM") || eat(p, "IN") {
            Some(dotted(p)?)
        } else {
            None
        };
        return Ok(Statement::ShowTableStatus {
            database,
            like: like(p)?,
        });
    }
    if eat(p, "DATABASES") || eat(p, "SCHEMAS") {
        let catalog = if eat(p, "FROM") || eat(p, "IN") {
            Some(name(p)?)
        } else {
            None
        };
        return Ok(Statement::ShowDatabases {
            catalog,
            like: like(p)?,
        });
    }
    if eat(p, "PARTITIONS") {
        if !(eat(p, "FROM") || eat(p, "IN")) {
            return p.expected("FROM", p.peek_token());
        }
        return Ok(Statement::ShowPartitions {
            name: dotted(p)?,
            like: like(p)?,
        });
    }
    if eat(p, "WARNINGS") || eat(p, "ERRORS") {
        return Ok(Statement::ShowWarnings);
    }
    let _scope = eat(p, "SESSION") || eat(p, "GLOBAL");
    if eat(p, "VARIABLES") {
        return Ok(Statement::ShowVariables { like: like(p)? });
    }
    if eat(p, "STATUS") {
        return Ok(Statement::ShowStatus { like: like(p)? });
    }
    let full = eat(p, "FULL");
    if eat(p, "PROCESSLIST") {
        return Ok(Statement::ShowProcesslist);
    }
    if eat(p, "TABLES") {
        let database = if eat(p, "FROM") || eat(p, "IN") {
            Some(dotted(p)?)
        } else {
            None
        };
        return Ok(Statement::ShowTables {
            full,
            database,
            like: like(p)?,
        });
    }
    if eat(p, "COLUMNS") || eat(p, "FIELDS") {
        if !(eat(p, "FROM") || eat(p, "IN")) {
            return p.expected("FROM", p.peek_token());
        }
        let mut name = dotted(p)?;
        if eat(p, "FROM") || eat(p, "IN") {
            name.insert(0, self::name(p)?);
        }
        return Ok(Statement::Describe { name });
    }
    p.expected(
        "CATALOGS, CATALOG, CREATE CATALOG, CREATE TABLE, DATABASES, TABLES, PARTITIONS, COLUMNS, VARIABLES, STATUS, PROCESSLIST, INDEX, TABLE STATUS, COLLATION, CHARACTER SET, ENGINES or WARNINGS",
        p.peek_token(),
    )
}
