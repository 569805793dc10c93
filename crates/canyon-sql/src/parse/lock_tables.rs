//! `LOCK {TABLE | TABLES} [db.]t [[AS] alias] {READ [LOCAL] | [LOW_PRIORITY]
//! WRITE}, ...` as MySQL writes it (manual, 15.3.6 "LOCK TABLES and UNLOCK
//! TABLES Statements"). sqlparser's MySQL form takes only an unqualified
//! table name; mariadb-dump and MariaDB's Spider engine qualify theirs.

use super::parser::{CanyonDialect, Parsed};
use canyon_common::{Error, Result};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};

/// One table of a LOCK TABLES list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockTarget {
    /// `[table]` or `[db, table]`, as written.
    pub table: Vec<String>,
    /// The alias the lock is taken under, if any.
    pub alias: Option<String>,
    /// WRITE (true) or READ (false).
    pub write: bool,
}

/// Parses a LOCK TABLES text into [`Parsed::LockTables`]; `None` when the text
/// is not one (it does not start with LOCK TABLE or LOCK TABLES), a 1064 when it is one
/// written wrongly.
pub fn parse_lock_tables(trimmed: &str) -> Option<Result<Parsed>> {
    let head = trimmed.get(..5)?;
    if !head.eq_ignore_ascii_case("LOCK ") {
        return None;
    }
    let dialect = CanyonDialect::new(None);
    let mut p = Parser::new(&dialect).try_with_sql(trimmed).ok()?;
    if !p.parse_keyword(Keyword::LOCK)
        || p.parse_one_of_keywords(&[Keyword::TABLE, Keyword::TABLES])
            .is_none()
    {
        return None;
    }
    let targets = p.parse_comma_separated(target).and_then(|t| {
        let _ = p.consume_token(&sqlparser::tokenizer::Token::SemiColon);
        p.expect_token(&sqlparser::tokenizer::Token::EOF).map(|_| t)
    });
    Some(
        targets
            .map(|tables| Parsed::LockTables { tables })
            .map_err(|e| Error::Syntax(format!("{e}: {trimmed}"))),
    )
}

/// `[db.]t [[AS] alias] lock_type`.
fn target(p: &mut Parser) -> std::result::Result<LockTarget, ParserError> {
    let name = p.parse_object_name(false)?;
    let table: Vec<String> = name
        .0
        .iter()
        .filter_map(|part| part.as_ident().map(|i| i.value.clone()))
        .collect();
    if table.is_empty() || table.len() > 2 {
        return p.expected("[db.]table", p.peek_token());
    }
    // An alias, after AS or alone (any word but the lock type's).
    let explicit = p.parse_keyword(Keyword::AS);
    let alias = if explicit
        || !matches!(
            p.peek_token().token,
            sqlparser::tokenizer::Token::Word(ref w)
                if matches!(w.keyword, Keyword::READ | Keyword::WRITE | Keyword::LOW_PRIORITY)
        ) {
        Some(p.parse_identifier()?.value)
    } else {
        None
    };
    let write = if p.parse_keyword(Keyword::READ) {
        let _ = p.parse_keyword(Keyword::LOCAL);
        false
    } else {
        let _ = p.parse_keyword(Keyword::LOW_PRIORITY);
        p.expect_keyword_is(Keyword::WRITE)?;
        true
    };
    Ok(LockTarget {
        table,
        alias,
        write,
    })
}
