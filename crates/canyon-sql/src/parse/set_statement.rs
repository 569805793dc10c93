//! `SET STATEMENT var = value [, var = value ...] FOR statement`: session
//! variables set for one statement only, then put back (MariaDB 10.1+).
//!
//! MySQL 8.0 has no such statement — its per-statement form is the
//! `/*+ SET_VAR(var = value) */` optimizer hint — but MariaDB's own test files
//! and tools that target both servers send it (`SET STATEMENT sql_mode = ''
//! FOR INSERT ...` to load a value strict mode refuses), and accepting it
//! changes nothing a MySQL 8 client can see. Canyon reads it as MariaDB does:
//! the assignments are SET's (system variables only: a user variable is a
//! syntax error), and the session restores each variable's value after the
//! statement, whether it succeeded or failed (`crate::session`'s
//! `run_set_statement`).
//!
//! sqlparser knows neither form, so this module cuts the text in two at the
//! first word FOR at parenthesis depth 0 (a value being an expression, FOR
//! cannot occur in one at depth 0): `SET <assignments>` and the statement.

use super::parser::CanyonDialect;
use canyon_common::{Error, Result};
use sqlparser::tokenizer::{Location, Token, Tokenizer};

/// `SET <assignments>` and the statement's text, when `text` (one statement,
/// trimmed) starts with `SET STATEMENT`; `None` otherwise (one look at the
/// first two words).
pub fn split_set_statement(text: &str) -> Option<Result<(String, String)>> {
    let mut words = text.split_ascii_whitespace();
    if !words.next()?.eq_ignore_ascii_case("SET")
        || !words.next()?.eq_ignore_ascii_case("STATEMENT")
    {
        return None;
    }
    let syntax = || {
        Error::Syntax(format!(
            "near '{}'",
            text.chars().take(80).collect::<String>()
        ))
    };
    let dialect = CanyonDialect::new(None);
    let toks = match Tokenizer::new(&dialect, text).tokenize_with_location() {
        Ok(t) => t,
        Err(_) => return Some(Err(syntax())),
    };
    let words: Vec<_> = toks
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let mut depth = 0i32;
    let at = words.iter().skip(2).find(|t| {
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Word(w) => {
                return depth == 0 && w.quote_style.is_none() && w.value.eq_ignore_ascii_case("FOR")
            }
            _ => {}
        }
        false
    });
    let Some(at) = at else {
        return Some(Err(syntax()));
    };
    let start = byte_offset(text, words[1].span.end);
    let for_at = byte_offset(text, at.span.start);
    let after = byte_offset(text, at.span.end);
    let assignments = text[start..for_at].trim();
    let statement = text[after..].trim();
    if assignments.is_empty() || statement.is_empty() {
        return Some(Err(syntax()));
    }
    Some(Ok((format!("SET {assignments}"), statement.to_string())))
}

/// The byte offset in `text` of a tokenizer location (lines and columns
/// counted from 1, columns in characters).
fn byte_offset(text: &str, loc: Location) -> usize {
    let mut start = 0;
    for _ in 1..loc.line {
        match text[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return text.len(),
        }
    }
    let line = &text[start..];
    start
        + line
            .char_indices()
            .nth((loc.column as usize).saturating_sub(1))
            .map_or(line.len(), |(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(t: &str) -> Option<(String, String)> {
        split_set_statement(t).map(|r| r.unwrap())
    }

    #[test]
    fn cuts_at_the_first_for_outside_parentheses() {
        assert_eq!(
            split("SET STATEMENT sql_mode = '' FOR INSERT INTO t VALUES (1)"),
            Some((
                "SET sql_mode = ''".into(),
                "INSERT INTO t VALUES (1)".into()
            ))
        );
        assert_eq!(
            split("set  statement\n a = (select 1 for update), b='for' for\nSELECT 'é' FOR UPDATE"),
            Some((
                "SET a = (select 1 for update), b='for'".into(),
                "SELECT 'é' FOR UPDATE".into()
            ))
        );
        assert_eq!(split("SET sql_mode = ''"), None);
        assert_eq!(split("SELECT 1"), None);
    }

    #[test]
    fn a_missing_for_or_statement_is_a_syntax_error() {
        for t in [
            "SET STATEMENT sql_mode = ''",
            "SET STATEMENT FOR SELECT 1",
            "SET STATEMENT a=1 FOR",
        ] {
            assert!(
                matches!(split_set_statement(t), Some(Err(Error::Syntax(_)))),
                "{t}"
            );
        }
    }
}
