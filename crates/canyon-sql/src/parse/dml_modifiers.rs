//! UPDATE and DELETE as MySQL 8.0 writes them, where sqlparser 0.63 departs
//! from its grammar (MySQL manual, 15.2.17 "UPDATE Statement" and 15.2.2
//! "DELETE Statement"):
//!
//! ```text
//! UPDATE [LOW_PRIORITY] [IGNORE] table_references SET ... [WHERE ...]
//!        [ORDER BY ...] [LIMIT n]
//! DELETE [LOW_PRIORITY] [QUICK] [IGNORE] FROM t ...      (and the multi-table forms)
//! ```
//!
//! sqlparser reads the modifiers as a table name (`UPDATE IGNORE t` updated a
//! table named IGNORE aliased `t`) and reads one table reference after
//! UPDATE, not a comma-separated list. Here:
//!
//! - UPDATE is parsed whole: its table references become `Update::table`
//!   (the first) and `Update::from` as `UpdateTableFromKind::BeforeSet` (the
//!   others; MySQL has no UPDATE ... FROM, so the field is free), and IGNORE
//!   becomes `Update::or = Some(SqliteOnConflict::Ignore)` — the AST's own
//!   "on conflict ignore".
//! - DELETE's modifiers are skipped, the multi-table forms parsed here (their
//!   targets may be written `t.*`, which sqlparser refuses) and the
//!   single-table form left to sqlparser; IGNORE is
//!   recorded as an optimizer hint with the prefix [`IGNORE_HINT_PREFIX`],
//!   which no comment can produce (a real hint's prefix is alphanumeric).
//!   [`delete_ignore`] reads it back.
//!
//! LOW_PRIORITY and QUICK change nothing in InnoDB (table-level locking and
//! MyISAM index merging) and are accepted and dropped, as MySQL does.

use sqlparser::ast::{
    Delete, FromTable, ObjectName, OptimizerHint, OptimizerHintStyle, SqliteOnConflict, Statement,
    Update, UpdateTableFromKind,
};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, Whitespace};

/// The optimizer-hint prefix that marks a DELETE IGNORE (see the module doc).
pub const IGNORE_HINT_PREFIX: &str = "canyon:ignore";

/// Whether a parsed DELETE carried IGNORE.
pub fn delete_ignore(d: &Delete) -> bool {
    d.optimizer_hints
        .iter()
        .any(|h| h.prefix == IGNORE_HINT_PREFIX)
}

/// Whether a parsed UPDATE carried IGNORE.
pub fn update_ignore(u: &Update) -> bool {
    matches!(u.or, Some(SqliteOnConflict::Ignore))
}

/// Consumes the next token if it is the (non-keyword) word `w`.
fn parse_word(parser: &mut Parser, w: &str) -> bool {
    match &parser.peek_token_ref().token {
        Token::Word(word) if word.quote_style.is_none() && word.value.eq_ignore_ascii_case(w) => {
            parser.next_token();
            true
        }
        _ => false,
    }
}

/// Parses an UPDATE or a DELETE at the parser's position; `None` (nothing
/// consumed) for any other statement.
// Not inlined: the dialect's `parse_statement` stays on the stack for the
// whole parse of every statement, and these frames (whole statements by
// value) would shrink the depth left to deep queries (tests/limits.rs).
#[inline(never)]
pub(crate) fn parse_update_or_delete(
    parser: &mut Parser,
) -> Option<Result<Statement, ParserError>> {
    if parser.peek_keyword(Keyword::UPDATE) {
        let token = parser.next_token();
        let hints = optimizer_hints(parser);
        return Some(parse_update(parser, token).map(|mut s| {
            if let Statement::Update(u) = &mut s {
                u.optimizer_hints = hints;
            }
            s
        }));
    }
    if !parser.peek_keyword(Keyword::DELETE) {
        return None;
    }
    let token = parser.next_token();
    let hints = optimizer_hints(parser);
    let mut ignore = false;
    loop {
        if parser.parse_keyword(Keyword::LOW_PRIORITY) || parse_word(parser, "QUICK") {
            continue;
        }
        if parser.parse_keyword(Keyword::IGNORE) {
            ignore = true;
            continue;
        }
        break;
    }
    let parsed = parse_delete_rest(parser, token);
    Some(parsed.map(|mut s| {
        if let Statement::Delete(d) = &mut s {
            d.optimizer_hints = hints;
        }
        if let (Statement::Delete(d), true) = (&mut s, ignore) {
            d.optimizer_hints.push(OptimizerHint {
                prefix: IGNORE_HINT_PREFIX.to_string(),
                text: String::new(),
                style: OptimizerHintStyle::MultiLine,
            });
        }
        s
    }))
}

/// The `/*+ ... */` optimizer hint comments right after UPDATE / DELETE (as
/// sqlparser collects them after SELECT and INSERT; see `crate::parse::hints`).
fn optimizer_hints(parser: &mut Parser) -> Vec<OptimizerHint> {
    let mut hints = Vec::new();
    loop {
        match parser.peek_token_no_skip().token {
            Token::Whitespace(Whitespace::MultiLineComment(c)) => {
                if let Some(text) = c.strip_prefix('+') {
                    hints.push(OptimizerHint {
                        prefix: String::new(),
                        text: text.to_string(),
                        style: OptimizerHintStyle::MultiLine,
                    });
                }
            }
            Token::Whitespace(_) => {}
            _ => break,
        }
        parser.next_token_no_skip();
    }
    hints
}

/// A multi-table DELETE's target: `[db.]t[.*]`.
fn parse_target(parser: &mut Parser) -> Result<ObjectName, ParserError> {
    let mut parts = vec![parser.parse_identifier()?];
    while parser.consume_token(&Token::Period) {
        if parser.consume_token(&Token::Mul) {
            break;
        }
        parts.push(parser.parse_identifier()?);
    }
    Ok(ObjectName::from(parts))
}

/// DELETE after its modifiers. The multi-table forms whose targets may be
/// written `t.*` are parsed here (sqlparser reads a target as a plain name):
/// `DELETE t1[.*], ... FROM refs ...` and `DELETE FROM t1[.*], ... USING refs
/// ...` (the targets then go to `Delete::tables` too, with an empty FROM
/// list); the single-table form is sqlparser's.
#[inline(never)]
fn parse_delete_rest(
    parser: &mut Parser,
    token: sqlparser::tokenizer::TokenWithSpan,
) -> Result<Statement, ParserError> {
    let (tables, from, using) = if !parser.peek_keyword(Keyword::FROM) {
        let tables = parser.parse_comma_separated(parse_target)?;
        parser.expect_keyword_is(Keyword::FROM)?;
        let from = parser.parse_comma_separated(Parser::parse_table_and_joins)?;
        (tables, from, None)
    } else {
        parser.expect_keyword_is(Keyword::FROM)?;
        let targets = parser.maybe_parse(|p| {
            let t = p.parse_comma_separated(parse_target)?;
            p.expect_keyword_is(Keyword::USING)?;
            Ok(t)
        })?;
        match targets {
            Some(t) => {
                let using = parser.parse_comma_separated(Parser::parse_table_and_joins)?;
                (t, Vec::new(), Some(using))
            }
            None => {
                parser.prev_token();
                return parser.parse_delete(token);
            }
        }
    };
    let selection = if parser.parse_keyword(Keyword::WHERE) {
        Some(parser.parse_expr()?)
    } else {
        None
    };
    let order_by = if parser.parse_keywords(&[Keyword::ORDER, Keyword::BY]) {
        parser.parse_comma_separated(Parser::parse_order_by_expr)?
    } else {
        Vec::new()
    };
    let limit = if parser.parse_keyword(Keyword::LIMIT) {
        parser.parse_limit()?
    } else {
        None
    };
    Ok(Statement::Delete(Delete {
        delete_token: token.into(),
        optimizer_hints: Vec::new(),
        tables,
        from: FromTable::WithFromKeyword(from),
        using,
        selection,
        returning: None,
        output: None,
        order_by,
        limit,
    }))
}

/// `UPDATE [LOW_PRIORITY] [IGNORE] table_references SET assignments [WHERE]
/// [ORDER BY] [LIMIT]`, after the UPDATE token.
#[inline(never)]
fn parse_update(
    parser: &mut Parser,
    token: sqlparser::tokenizer::TokenWithSpan,
) -> Result<Statement, ParserError> {
    let mut ignore = false;
    loop {
        if parser.parse_keyword(Keyword::LOW_PRIORITY) {
            continue;
        }
        if parser.parse_keyword(Keyword::IGNORE) {
            ignore = true;
            continue;
        }
        break;
    }
    let mut tables = parser.parse_comma_separated(Parser::parse_table_and_joins)?;
    parser.expect_keyword_is(Keyword::SET)?;
    let assignments = parser.parse_comma_separated(Parser::parse_assignment)?;
    let selection = if parser.parse_keyword(Keyword::WHERE) {
        Some(parser.parse_expr()?)
    } else {
        None
    };
    let order_by = if parser.parse_keywords(&[Keyword::ORDER, Keyword::BY]) {
        parser.parse_comma_separated(Parser::parse_order_by_expr)?
    } else {
        Vec::new()
    };
    let limit = if parser.parse_keyword(Keyword::LIMIT) {
        Some(parser.parse_expr()?)
    } else {
        None
    };
    let table = tables.remove(0);
    let from = (!tables.is_empty()).then_some(UpdateTableFromKind::BeforeSet(tables));
    Ok(Update {
        update_token: token.into(),
        optimizer_hints: Vec::new(),
        table,
        assignments,
        from,
        selection,
        returning: None,
        output: None,
        or: ignore.then_some(SqliteOnConflict::Ignore),
        order_by,
        limit,
    }
    .into())
}
