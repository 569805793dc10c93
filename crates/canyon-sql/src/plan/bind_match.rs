//! Binding `MATCH (cols) AGAINST ('text' [modifier])` to a FULLTEXT index
//! ([`Expr::Match`]); the search itself is `crate::types::fulltext`'s, its
//! statistics the executor's (`crate::exec::select`).
//!
//! InnoDB's rule: the MATCH column list must be exactly the column list of
//! one FULLTEXT index of one table (in any order), else 1191
//! ER_FT_MATCHING_KEY_NOT_FOUND. The search string must be a constant: a
//! literal or a `?` parameter (MySQL: "Incorrect arguments to AGAINST"
//! otherwise, which sqlparser's grammar already enforces for literals).

use crate::expr::{Expr, MatchExpr};
use crate::plan::bind::Binder;
use crate::types::fulltext::Mode;
use canyon_common::{Error, Result};
use sqlparser::ast;

/// MySQL's 1191 ER_FT_MATCHING_KEY_NOT_FOUND.
fn no_matching_key() -> Error {
    Error::Sql {
        code: 1191,
        sqlstate: *b"HY000",
        message: "Can't find FULLTEXT index matching the column list".into(),
    }
}

/// Binds a MATCH ... AGAINST (see the module doc).
pub(crate) fn bind_match(
    b: &mut Binder<'_>,
    columns: &[ast::ObjectName],
    against: &ast::Value,
    modifier: Option<ast::SearchModifier>,
) -> Result<Expr> {
    let mode = match modifier {
        None | Some(ast::SearchModifier::InNaturalLanguageMode) => Mode::Natural,
        Some(ast::SearchModifier::InBooleanMode) => Mode::Boolean,
        Some(
            ast::SearchModifier::WithQueryExpansion
            | ast::SearchModifier::InNaturalLanguageModeWithQueryExpansion,
        ) => {
            return Err(Error::Unsupported(
                "MATCH ... AGAINST WITH QUERY EXPANSION".into(),
            ))
        }
    };
    let against = match against {
        ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
            Expr::Literal(crate::types::value::Value::Bytes(s.as_bytes().to_vec()))
        }
        ast::Value::Placeholder(p) if p == "?" => {
            let e = Expr::Param(b.params);
            b.params += 1;
            e
        }
        ast::Value::Null => Expr::Literal(crate::types::value::Value::Null),
        other => {
            return Err(Error::WrongArguments(format!("AGAINST ({other})")));
        }
    };
    // The columns, as frame positions.
    let mut positions = Vec::with_capacity(columns.len());
    for name in columns {
        let parts: Vec<ast::Ident> = name
            .0
            .iter()
            .filter_map(|p| p.as_ident().cloned())
            .collect();
        let e = b.bind(&match parts.as_slice() {
            [one] => ast::Expr::Identifier(one.clone()),
            _ => ast::Expr::CompoundIdentifier(parts.clone()),
        })?;
        let Expr::Column(pos) = e else {
            return Err(no_matching_key());
        };
        positions.push(pos);
    }
    // The base table whose columns they are, and its FULLTEXT index over
    // exactly them.
    let Some(scope) = b.scopes[b.own_from..].iter().find(|s| {
        s.table_name.is_some()
            && positions
                .iter()
                .all(|p| *p >= s.offset && *p < s.offset + s.columns.len())
    }) else {
        return Err(no_matching_key());
    };
    let (name, id) = scope.table_name.clone().unwrap_or_default();
    let (db, offset) = (scope.db.clone(), scope.offset);
    let table = b
        .plan_ctx
        .and_then(|ctx| ctx.catalog.table(&db, &name).cloned())
        .filter(|t| t.def.id == id)
        .ok_or_else(|| {
            Error::Unsupported(
                "MATCH ... AGAINST in this statement (or on a temporary table)".into(),
            )
        })?;
    let mut wanted: Vec<usize> = positions.iter().map(|p| p - offset).collect();
    wanted.sort_unstable();
    wanted.dedup();
    let found = table.def.fulltext_indexes().find(|(_, ix)| {
        let mut cols = ix.columns.clone();
        cols.sort_unstable();
        cols == wanted && ix.columns.len() == positions.len()
    });
    let Some((index, ix)) = found else {
        return Err(no_matching_key());
    };
    let columns = ix
        .columns
        .iter()
        .map(|c| Expr::Column(offset + c))
        .collect();
    let fold = ix
        .columns
        .first()
        .is_some_and(|&c| table.def.columns[c].collation.is_ci());
    Ok(Expr::Match(Box::new(MatchExpr {
        table,
        index,
        columns,
        against: Box::new(against),
        mode,
        fold,
    })))
}
