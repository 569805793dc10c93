//! The names MySQL gives unaliased select-list expressions: the text as
//! written (`LEFT(c1,5)`, `'e'='``'`), where sqlparser's printed form
//! respaces it (`LEFT(c1, 5)`, `'e' = '``'`).
//!
//! Right after parsing, each unaliased select item that is not a column or
//! a literal gets its source text as an alias (`crate::plan` names a column
//! by its alias; MySQL resolves an ORDER BY `` `a+b` `` to the item `a+b`
//! too, so the alias adds no name MySQL would not know). The text comes
//! from the expression's span in the parsed text; sqlparser's spans are
//! partial for some nodes (a function call's ends at its last argument), so
//! the slice is widened by a few characters on either side until, without
//! whitespace and ASCII case, it reads as the printed form; a slice that
//! never does keeps the printed name, as before.

use sqlparser::ast::{self, Spanned, VisitMut, VisitorMut};
use sqlparser::tokenizer::Location;
use std::ops::ControlFlow;

/// How far past its span an item's text is looked for, in characters
/// (a CAST's span is its operand's: `cast(x as datetime(6))` needs 16).
const WIDEN: usize = 20;

/// Gives the unaliased select items of `stmt`, parsed from `text`, their
/// source text as alias (see the module doc).
pub fn name_select_items(stmt: &mut ast::Statement, text: &str) {
    // Without a parenthesis a text has no subquery and no CTE: the only
    // query is the statement's own, so the walk over the whole tree
    // (a tenth of a point select's parse) is not needed.
    if !text.contains('(') {
        match stmt {
            ast::Statement::Query(q) => {
                let namer = Namer {
                    text,
                    lines: line_starts(text),
                };
                namer.set_expr(&mut q.body);
                return;
            }
            ast::Statement::Update(_) | ast::Statement::Delete(_) => return,
            _ => {}
        }
    }
    let lines = line_starts(text);
    let _ = stmt.visit(&mut Namer { text, lines });
}

struct Namer<'a> {
    text: &'a str,
    lines: Vec<usize>,
}

impl VisitorMut for Namer<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut ast::Query) -> ControlFlow<()> {
        self.set_expr(&mut query.body);
        ControlFlow::Continue(())
    }
}

impl Namer<'_> {
    fn set_expr(&self, body: &mut ast::SetExpr) {
        match body {
            ast::SetExpr::Select(select) => {
                for item in select.projection.iter_mut() {
                    self.item(item);
                }
            }
            ast::SetExpr::SetOperation { left, right, .. } => {
                self.set_expr(left);
                self.set_expr(right);
            }
            _ => {}
        }
    }

    fn item(&self, item: &mut ast::SelectItem) {
        let ast::SelectItem::UnnamedExpr(e) = item else {
            return;
        };
        if matches!(
            e,
            ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_) | ast::Expr::Value(_)
        ) {
            return;
        }
        let Some(source) = self.source_text(e) else {
            return;
        };
        let expr = std::mem::replace(e, ast::Expr::Value(ast::Value::Null.into()));
        *item = ast::SelectItem::ExprWithAlias {
            expr,
            alias: ast::Ident::with_quote('`', source),
        };
    }

    /// The text `e` was written as, when it differs from the printed form
    /// only in spacing.
    fn source_text(&self, e: &ast::Expr) -> Option<String> {
        let span = e.span();
        let start = self.offset(span.start)?;
        let end = self.offset(span.end)?.max(start);
        let printed = e.to_string();
        let want = squeeze(&printed);
        if squeeze(&self.text[start..end]) == want {
            // Same up to spacing: nothing to gain unless the spacing differs.
            return (self.text[start..end] != printed).then(|| self.text[start..end].to_string());
        }
        let before: Vec<usize> = self.text[..start]
            .char_indices()
            .rev()
            .take(WIDEN)
            .map(|(i, _)| i)
            .collect();
        let after: Vec<usize> = self.text[end..]
            .char_indices()
            .skip(1)
            .map(|(i, _)| end + i)
            .chain(std::iter::once(self.text.len()))
            .take(WIDEN)
            .collect();
        for s in std::iter::once(start).chain(before) {
            for e in std::iter::once(end).chain(after.iter().copied()) {
                let slice = &self.text[s..e];
                if squeeze(slice) == want {
                    return (slice != printed).then(|| slice.to_string());
                }
            }
        }
        None
    }

    /// The byte offset of a span location (1-based line and character).
    fn offset(&self, at: Location) -> Option<usize> {
        let line_start = *self
            .lines
            .get(usize::try_from(at.line).ok()?.checked_sub(1)?)?;
        let column = usize::try_from(at.column).ok()?.checked_sub(1)?;
        let line = &self.text[line_start..];
        match line.char_indices().nth(column) {
            Some((i, _)) => Some(line_start + i),
            None => Some(self.text.len()),
        }
    }
}

/// The byte offsets where `text`'s lines start.
fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

/// `s` without whitespace, in ASCII lower case: what spacing and keyword
/// case cannot change.
fn squeeze(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(sql: &str) -> Vec<String> {
        let dialect = sqlparser::dialect::MySqlDialect {};
        let mut stmts = sqlparser::parser::Parser::parse_sql(&dialect, sql).expect("parses");
        name_select_items(&mut stmts[0], sql);
        let ast::Statement::Query(q) = &stmts[0] else {
            panic!("a query")
        };
        let ast::SetExpr::Select(s) = q.body.as_ref() else {
            panic!("a select")
        };
        s.projection
            .iter()
            .map(|i| match i {
                ast::SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
                other => other.to_string(),
            })
            .collect()
    }

    #[test]
    fn items_are_named_as_written() {
        assert_eq!(
            names("SELECT LEFT(c1,5), 'e'='`', c1, a + b, (x+1)*2, COUNT(*) FROM t"),
            [
                "LEFT(c1,5)",
                "'e'='`'",
                "c1",
                "a + b",
                "(x+1)*2",
                "COUNT(*)"
            ]
        );
        assert_eq!(
            names("SELECT\n  ROUND(c1,c2) ,TRUNCATE(c1,c2) FROM t5"),
            ["ROUND(c1,c2)", "TRUNCATE(c1,c2)"]
        );
        // A CAST's span is its operand's: the text past it is found too.
        assert_eq!(
            names("SELECT cast('1:2' as time) < cast('24:00' as time), cast(1 as datetime(6))"),
            [
                "cast('1:2' as time) < cast('24:00' as time)",
                "cast(1 as datetime(6))"
            ]
        );
    }
}
