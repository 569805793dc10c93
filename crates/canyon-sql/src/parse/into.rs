//! `SELECT ... INTO`: a query whose result goes to user variables or a file
//! instead of the client (MySQL manual, 15.2.13.1 "SELECT ... INTO
//! Statement").
//!
//! MySQL accepts the INTO clause after the select list, or at the very end
//! (after ORDER BY / LIMIT / the locking clause). sqlparser reads neither
//! form for files, and for variables only the first, so this module cuts the
//! clause out of the text: [`split_select_into`] finds the word INTO at
//! parenthesis depth 0 of a text that starts like a query, parses the clause
//! that follows it and returns the text without the clause (parsed as any
//! query) and the target. A text without such a clause costs one byte scan
//! for the letters `into`.
//!
//! Inside stored programs `crate::parse::psm` cuts the clause itself (its
//! targets may be local variables); this is the top-level statement's form,
//! where a name without `@` is MySQL's 1327 "Undeclared variable".

use super::load::{parse_charset, parse_format, LoadFormat};
use super::parser::CanyonDialect;
use canyon_common::{Error, Result};
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer};

/// Where a SELECT ... INTO sends its result.
#[derive(Debug, Clone, PartialEq)]
pub enum IntoTarget {
    /// `INTO @a, @b`: user variables (names lower-cased, without the `@`).
    Vars(Vec<String>),
    /// `INTO OUTFILE 'path' [CHARACTER SET cs] [FIELDS ...] [LINES ...]`.
    Outfile {
        /// The file name as written.
        path: String,
        /// CHARACTER SET, lower-cased.
        charset: Option<String>,
        /// FIELDS / LINES (LOAD DATA's defaults when absent).
        format: LoadFormat,
    },
    /// `INTO DUMPFILE 'path'`: one row, its values back to back.
    Dumpfile(String),
}

/// The query text without its INTO clause, and the clause's target; `None`
/// when `text` (one statement, trimmed) is not a query with an INTO clause
/// at depth 0.
pub fn split_select_into(text: &str) -> Option<Result<(String, IntoTarget)>> {
    let first = text.split(|c: char| !c.is_ascii_alphabetic()).next()?;
    let query_like = first.eq_ignore_ascii_case("SELECT")
        || first.eq_ignore_ascii_case("WITH")
        || text.starts_with('(');
    if !query_like
        || !text
            .as_bytes()
            .windows(4)
            .any(|w| w.eq_ignore_ascii_case(b"into"))
    {
        return None;
    }
    let dialect = CanyonDialect::new(None);
    let mut toks = Tokenizer::new(&dialect, text)
        .tokenize_with_location()
        .ok()?;
    crate::parse::user_vars::join_quoted_user_variables(&mut toks);
    let mut depth = 0i32;
    let at = toks.iter().position(|t| {
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Word(w) => {
                return depth == 0
                    && w.quote_style.is_none()
                    && w.value.eq_ignore_ascii_case("INTO")
            }
            _ => {}
        }
        false
    })?;
    let lines: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let offset = |loc: Location| {
        let Some(&start) = lines.get((loc.line as usize).saturating_sub(1)) else {
            return text.len();
        };
        let line = &text[start..];
        start
            + line
                .char_indices()
                .nth((loc.column as usize).saturating_sub(1))
                .map_or(line.len(), |(i, _)| i)
    };
    let clause: Vec<TokenWithSpan> = toks[at + 1..].to_vec();
    let mut p = Parser::new(&dialect).with_tokens_with_locations(clause.clone());
    let target = match target(&mut p) {
        Ok(t) => t,
        Err(e) => return Some(Err(e)),
    };
    // The first token the clause did not take (EOF: the text's end).
    let next = clause
        .get(p.index())
        .filter(|t| t.token != Token::EOF)
        .map_or(text.len(), |t| offset(t.span.start));
    let before = &text[..offset(toks[at].span.start)];
    Some(Ok((format!("{before} {}", &text[next..]), target)))
}

/// The clause after INTO.
fn target(p: &mut Parser) -> Result<IntoTarget> {
    let syntax = |p: &Parser| Error::Syntax(format!("near '{}'", p.peek_token_ref().token));
    let path = |p: &mut Parser| match p.next_token().token {
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Ok(s),
        _ => Err(syntax(p)),
    };
    if keyword(p, "OUTFILE") {
        let path = path(p)?;
        let charset = parse_charset(p)?;
        let format = parse_format(p)?;
        return Ok(IntoTarget::Outfile {
            path,
            charset,
            format,
        });
    }
    if keyword(p, "DUMPFILE") {
        return Ok(IntoTarget::Dumpfile(path(p)?));
    }
    let mut vars = Vec::new();
    loop {
        let quoted = |p: &mut Parser| match p.next_token().token {
            Token::Word(q) if q.quote_style.is_some() => Ok(q.value),
            Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Ok(s),
            _ => Err(syntax(p)),
        };
        let name = match p.next_token().token {
            // `@` then a quoted name: @`a`, @'a', @"a".
            Token::AtSign => quoted(p)?,
            Token::Word(w) if w.quote_style.is_none() && w.value.starts_with('@') => {
                match &w.value[1..] {
                    "" => quoted(p)?,
                    name if !name.starts_with('@') => name.to_string(),
                    _ => return Err(syntax(p)),
                }
            }
            Token::Word(w) => {
                return Err(Error::Sql {
                    code: 1327,
                    sqlstate: *b"42000",
                    message: format!("Undeclared variable: {}", w.value),
                })
            }
            _ => return Err(syntax(p)),
        };
        vars.push(name.to_ascii_lowercase());
        if !p.consume_token(&Token::Comma) {
            return Ok(IntoTarget::Vars(vars));
        }
    }
}

/// Consumes the unquoted word `w` (any case) if it comes next.
fn keyword(p: &mut Parser, w: &str) -> bool {
    let matched = matches!(&p.peek_token_ref().token,
        Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w));
    if matched {
        p.next_token();
    }
    matched
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text without the clause (its spaces collapsed) and the target.
    fn split(sql: &str) -> (String, IntoTarget) {
        let (rest, t) = split_select_into(sql)
            .expect("an INTO clause")
            .expect("parses");
        (rest.split_whitespace().collect::<Vec<_>>().join(" "), t)
    }

    #[test]
    fn variables_after_the_list_or_at_the_end() {
        let (rest, t) = split("SELECT a, b, c INTO @x, @`Y`, @'z' FROM t WHERE c = 'into'");
        assert_eq!(rest, "SELECT a, b, c FROM t WHERE c = 'into'");
        assert_eq!(
            t,
            IntoTarget::Vars(vec!["x".into(), "y".into(), "z".into()])
        );
        let (rest, t) = split("SELECT a FROM t ORDER BY a LIMIT 1 INTO @x");
        assert_eq!(rest, "SELECT a FROM t ORDER BY a LIMIT 1");
        assert_eq!(t, IntoTarget::Vars(vec!["x".into()]));
    }

    #[test]
    fn files_with_their_format() {
        let (rest, t) = split(
            "SELECT * FROM t INTO OUTFILE '/tmp/x' FIELDS TERMINATED BY ',' \
             OPTIONALLY ENCLOSED BY '\"' LINES TERMINATED BY '\\r\\n'",
        );
        assert_eq!(rest, "SELECT * FROM t");
        let IntoTarget::Outfile { path, format, .. } = t else {
            panic!("an OUTFILE");
        };
        assert_eq!(path, "/tmp/x");
        assert_eq!(format.field_term, b",");
        assert_eq!(format.enclosed, Some(b'"'));
        let (rest, t) = split("SELECT a INTO DUMPFILE 'd' FROM t FOR UPDATE");
        assert_eq!(rest, "SELECT a FROM t FOR UPDATE");
        assert_eq!(t, IntoTarget::Dumpfile("d".into()));
    }

    #[test]
    fn not_a_select_into() {
        assert!(split_select_into("INSERT INTO t SELECT 1").is_none());
        assert!(split_select_into("SELECT (SELECT 1) AS intox").is_none());
        assert!(split_select_into("SELECT a FROM t WHERE b IN (SELECT 1)").is_none());
        assert!(matches!(
            split_select_into("SELECT 1 INTO x"),
            Some(Err(Error::Sql { code: 1327, .. }))
        ));
    }
}
