//! MySQL's optimizer hints (`/*+ ... */` right after SELECT, INSERT,
//! REPLACE, UPDATE or DELETE; manual, 10.9.3 "Optimizer Hints") that change
//! what a statement does rather than how it is planned:
//!
//! - `SET_VAR(var = value)` sets a session variable for the one statement
//!   and puts it back afterwards (Vitess' vtgate sends
//!   `SET_VAR(sql_mode = '...')`);
//! - `MAX_EXECUTION_TIME(N)` stops a SELECT after N milliseconds (3024).
//!
//! sqlparser keeps each hint comment's text on the statement
//! ([`statement_hints`]); [`parse_hint_text`] reads the hints Canyon acts on
//! out of it. Every other hint (join order, BKA, index-level hints, ...) is
//! accepted and ignored, as MySQL ignores a hint it cannot apply; so is a
//! hint written wrongly (MySQL warns, 1064, and runs the statement).

use sqlparser::ast::{OptimizerHint, SetExpr, Statement};

/// A hint Canyon acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hint {
    /// `SET_VAR(name = value)`: the variable's name and the value's text.
    SetVar {
        /// The variable, as written.
        name: String,
        /// The value's SQL text (a literal or a bare word).
        value: String,
    },
    /// `MAX_EXECUTION_TIME(N)`, in milliseconds.
    MaxExecutionTime(u64),
}

/// The optimizer hint comments of a statement: those after its first
/// keyword (for a query, its SELECT's, when the query is a plain SELECT).
pub fn statement_hints(stmt: &Statement) -> &[OptimizerHint] {
    match stmt {
        Statement::Query(q) => match q.body.as_ref() {
            SetExpr::Select(s) => &s.optimizer_hints,
            _ => &[],
        },
        Statement::Insert(i) => &i.optimizer_hints,
        Statement::Update(u) => &u.optimizer_hints,
        Statement::Delete(d) => &d.optimizer_hints,
        _ => &[],
    }
}

/// Removes the `/*+ ... */` hint comments [`statement_hints`] reads, so that
/// the statement runs as if written without them. Hints with a prefix stay
/// (Canyon's own marks, such as DELETE IGNORE's in
/// `crate::parse::dml_modifiers`).
pub fn clear_statement_hints(stmt: &mut Statement) {
    let hints = match stmt {
        Statement::Query(q) => match q.body.as_mut() {
            SetExpr::Select(s) => &mut s.optimizer_hints,
            _ => return,
        },
        Statement::Insert(i) => &mut i.optimizer_hints,
        Statement::Update(u) => &mut u.optimizer_hints,
        Statement::Delete(d) => &mut d.optimizer_hints,
        _ => return,
    };
    hints.retain(|h| !h.prefix.is_empty());
}

/// The hints Canyon acts on in one hint comment's text, in order. Any other
/// hint, and any hint whose arguments do not read, is skipped.
pub fn parse_hint_text(text: &str) -> Vec<Hint> {
    let mut out = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        let name_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if name_len == 0 {
            break;
        }
        let name = &rest[..name_len];
        let after = rest[name_len..].trim_start();
        let Some(args_len) = after.strip_prefix('(').and_then(closing_paren) else {
            break;
        };
        let args = after[1..1 + args_len].trim();
        rest = &after[args_len + 2..];
        if name.eq_ignore_ascii_case("SET_VAR") {
            if let Some((var, value)) = args.split_once('=') {
                let var = var.trim();
                let value = value.trim();
                if !var.is_empty()
                    && !value.is_empty()
                    && var
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '@')
                {
                    out.push(Hint::SetVar {
                        name: var.to_string(),
                        value: value.to_string(),
                    });
                }
            }
        } else if name.eq_ignore_ascii_case("MAX_EXECUTION_TIME") {
            if let Ok(ms) = args.parse::<u64>() {
                out.push(Hint::MaxExecutionTime(ms));
            }
        }
    }
    out
}

/// The length of the text before the `)` that closes an already opened `(`,
/// stepping over quoted strings and nested parentheses.
fn closing_paren(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            (Some(_), '\\') => {
                chars.next();
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"' | '`') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') if depth == 0 => return Some(i),
            (None, ')') => depth -= 1,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_set_var_and_max_execution_time_among_others() {
        let hints = parse_hint_text(
            " NO_ICP(t) SET_VAR(sql_mode = 'ANSI_QUOTES,NO_ZERO_DATE') max_execution_time(50) ",
        );
        assert_eq!(
            hints,
            [
                Hint::SetVar {
                    name: "sql_mode".into(),
                    value: "'ANSI_QUOTES,NO_ZERO_DATE'".into()
                },
                Hint::MaxExecutionTime(50)
            ]
        );
        assert_eq!(
            parse_hint_text("SET_VAR(x = ')')"),
            [Hint::SetVar {
                name: "x".into(),
                value: "')'".into()
            }]
        );
        assert!(parse_hint_text("MAX_EXECUTION_TIME(-1) SET_VAR(nonsense)").is_empty());
    }
}
