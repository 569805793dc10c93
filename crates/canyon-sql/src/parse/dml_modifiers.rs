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
//! - DELETE's modifiers are skipped and the rest is sqlparser's; IGNORE is
//!   recorded as an optimizer hint with the prefix [`IGNORE_HINT_PREFIX`],
//!   which no comment can produce (a real hint's prefix is alphanumeric).
//!   [`delete_ignore`] reads it back.
//!
//! LOW_PRIORITY and QUICK change nothing in InnoDB (table-level locking and
//! MyISAM index merging) and are accepted and dropped, as MySQL does.

use sqlparser::ast::{
    Delete, OptimizerHint, OptimizerHintStyle, SqliteOnConflict, Statement, Update,
    UpdateTableFromKind,
};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

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

/// Parses an UPDATE (always) or a DELETE with modifiers, at the parser's
/// position; `None` (nothing consumed) for any other statement and for a
/// DELETE without modifiers, which sqlparser reads as it is.
pub(crate) fn parse_update_or_delete(
    parser: &mut Parser,
) -> Option<Result<Statement, ParserError>> {
    if parser.peek_keyword(Keyword::UPDATE) {
        let token = parser.next_token();
        return Some(parse_update(parser, token));
    }
    if !parser.peek_keyword(Keyword::DELETE) {
        return None;
    }
    let token = parser.next_token();
    let mut ignore = false;
    let mut any = false;
    loop {
        if parser.parse_keyword(Keyword::LOW_PRIORITY) || parse_word(parser, "QUICK") {
            any = true;
        } else if parser.parse_keyword(Keyword::IGNORE) {
            any = true;
            ignore = true;
        } else {
            break;
        }
    }
    if !any {
        parser.prev_token();
        return None;
    }
    Some(parser.parse_delete(token).map(|mut s| {
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

/// `UPDATE [LOW_PRIORITY] [IGNORE] table_references SET assignments [WHERE]
/// [ORDER BY] [LIMIT]`, after the UPDATE token.
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
