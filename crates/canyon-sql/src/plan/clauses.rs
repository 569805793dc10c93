//! The clauses of a query block after FROM, bound over its frame (steps 2 to 6
//! of planning it, see [`crate::plan::select`]): the select list (names, `*`,
//! `t.*`), WHERE, GROUP BY and HAVING (which may name an output column by
//! alias, GROUP BY also by position), ORDER BY (an output position, an alias,
//! or an expression added as a hidden column) and LIMIT / OFFSET.

use crate::expr::Expr;
use crate::plan::bind::{Binder, Scope};
use canyon_common::{Error, Result};
use sqlparser::ast;

/// A query block's clauses after FROM, bound.
pub(super) struct Clauses {
    /// Output expressions: visible columns, then hidden sort keys.
    pub(super) projection: Vec<Expr>,
    /// Each visible column's name and, for a plain column, its frame position.
    pub(super) names: Vec<(String, Option<usize>)>,
    /// Number of visible columns.
    pub(super) visible: usize,
    /// WHERE.
    pub(super) filter: Option<Expr>,
    /// GROUP BY expressions.
    pub(super) group_by: Vec<Expr>,
    /// HAVING.
    pub(super) having: Option<Expr>,
    /// ORDER BY as (output position, descending).
    pub(super) order_by: Vec<(usize, bool)>,
    /// LIMIT.
    pub(super) limit: Option<Expr>,
    /// OFFSET.
    pub(super) offset: Option<Expr>,
}

/// Binds the clauses of `select` after FROM with `b`, set up over the block's
/// frame: `scopes` and `star` are the FROM clause's (its sources' scopes and
/// the frame positions `SELECT *` lists), `projection_end` the placeholder
/// number after the select list, `after_from` the one after FROM.
pub(super) fn bind_clauses(
    b: &mut Binder<'_>,
    q: &ast::Query,
    select: &ast::Select,
    scopes: &[Scope],
    star: &[usize],
    projection_end: usize,
    after_from: usize,
) -> Result<Clauses> {
    // 2. Projection (textual order first, for placeholder numbering). Window
    //    functions may appear here and in ORDER BY only.
    b.set_named_windows(&select.named_window)?;
    b.allow_aggs = true;
    b.allow_windows = true;
    b.context = "field list";
    let (mut projection, names) = bind_select_list(b, select, scopes, star)?;
    b.allow_windows = false;
    if b.params != projection_end {
        return Err(Error::Internal(
            "placeholder numbering of the select list".into(),
        ));
    }
    b.params = after_from;

    // Output aliases become visible to GROUP BY, HAVING and ORDER BY (not WHERE).
    let aliases: Vec<(String, Expr)> = names
        .iter()
        .zip(&projection)
        .map(|((n, _), e)| (n.clone(), e.clone()))
        .collect();

    // 3. WHERE.
    b.allow_aggs = false;
    b.context = "where clause";
    let filter = select.selection.as_ref().map(|w| b.bind(w)).transpose()?;

    // 4. GROUP BY, HAVING.
    b.context = "group statement";
    b.aliases = aliases;
    let (group_by, having) = bind_grouping(b, select, &names, &projection)?;
    // An alias of a window expression named in GROUP BY / HAVING.
    if group_by
        .iter()
        .chain(having.iter())
        .any(|e| reads_window(b, e))
    {
        let alias = names
            .iter()
            .zip(&projection)
            .find(|(_, e)| reads_window(b, e))
            .map(|((n, _), _)| n.clone())
            .unwrap_or_default();
        return Err(Error::Window(
            canyon_common::WindowRule::InvalidAliasUse,
            alias,
        ));
    }

    // 5. ORDER BY: an output position, an alias, or an expression (hidden column).
    b.context = "order clause";
    b.allow_windows = true;
    let visible = projection.len();
    let order_by = bind_order_by(b, q, &names, &mut projection, visible)?;
    b.allow_windows = false;

    // 6. LIMIT / OFFSET.
    b.allow_aggs = false;
    b.context = "field list";
    let (limit, offset) = bind_limit(b, q.limit_clause.as_ref())?;
    Ok(Clauses {
        projection,
        names,
        visible,
        filter,
        group_by,
        having,
        order_by,
        limit,
        offset,
    })
}

/// Whether `e` reads a window function's result.
fn reads_window(b: &Binder<'_>, e: &Expr) -> bool {
    if let Expr::Agg(i) = e {
        return b.aggs.get(*i).is_some_and(|a| a.window.is_some());
    }
    let mut found = false;
    e.for_each_child(&mut |c| found |= reads_window(b, c));
    found
}

/// The output columns the select list binds to, with each one's name and,
/// for a plain column, its frame position.
fn bind_select_list(
    b: &mut Binder<'_>,
    select: &ast::Select,
    scopes: &[Scope],
    star: &[usize],
) -> Result<(Vec<Expr>, Vec<(String, Option<usize>)>)> {
    let mut projection = Vec::new();
    let mut names: Vec<(String, Option<usize>)> = Vec::new(); // (name, source column)
    for item in &select.projection {
        match item {
            ast::SelectItem::UnnamedExpr(e) => {
                let bound = b.bind(e)?;
                let src = if let Expr::Column(i) = bound {
                    Some(i)
                } else {
                    None
                };
                let name = match (e, src) {
                    (ast::Expr::Identifier(id), Some(_)) => id.value.clone(),
                    (ast::Expr::CompoundIdentifier(ids), Some(_)) => {
                        ids.last().map(|i| i.value.clone()).unwrap_or_default()
                    }
                    _ => expr_display_name(e),
                };
                names.push((name, src));
                projection.push(bound);
            }
            ast::SelectItem::ExprWithAlias { expr, alias } => {
                let bound = b.bind(expr)?;
                let src = if let Expr::Column(i) = bound {
                    Some(i)
                } else {
                    None
                };
                names.push((alias.value.clone(), src));
                projection.push(bound);
            }
            ast::SelectItem::Wildcard(_) => {
                if scopes.is_empty() {
                    return Err(Error::Syntax("* without a table".into()));
                }
                for &pos in star {
                    let s = scopes
                        .iter()
                        .find(|s| pos >= s.offset && pos < s.offset + s.columns.len())
                        .ok_or_else(|| Error::Internal("a * column outside FROM".into()))?;
                    names.push((s.columns[pos - s.offset].clone(), Some(pos)));
                    projection.push(Expr::Column(pos));
                }
            }
            ast::SelectItem::QualifiedWildcard(kind, _) => {
                let q = match kind {
                    ast::SelectItemQualifiedWildcardKind::ObjectName(n) => {
                        n.0.last()
                            .and_then(|p| p.as_ident())
                            .map(|i| i.value.clone())
                            .unwrap_or_default()
                    }
                    _ => return Err(Error::Unsupported("this select item".into())),
                };
                let s = scopes.iter().find(|s| s.qualifier == q).ok_or_else(|| {
                    Error::UnknownTable {
                        db: String::new(),
                        table: q.clone(),
                    }
                })?;
                for (i, c) in s.columns.iter().enumerate() {
                    if crate::plan::view::is_hidden(c) {
                        continue;
                    }
                    names.push((c.clone(), Some(s.offset + i)));
                    projection.push(Expr::Column(s.offset + i));
                }
            }
            ast::SelectItem::ExprWithAliases { .. } => {
                return Err(Error::Unsupported("this select item".into()))
            }
        }
    }
    Ok((projection, names))
}

/// GROUP BY and HAVING, which may name output columns (`names`, `projection`).
fn bind_grouping(
    b: &mut Binder<'_>,
    select: &ast::Select,
    names: &[(String, Option<usize>)],
    projection: &[Expr],
) -> Result<(Vec<Expr>, Option<Expr>)> {
    let group_by = match &select.group_by {
        ast::GroupByExpr::Expressions(exprs, mods) if mods.is_empty() => exprs
            .iter()
            .map(|e| bind_output_ref(b, e, names, projection, true))
            .collect::<Result<Vec<_>>>()?,
        _ => return Err(Error::Unsupported("GROUP BY ALL / WITH ROLLUP".into())),
    };
    b.allow_aggs = true;
    b.context = "having clause";
    // In HAVING a select-list alias hides a FROM column of the same name,
    // unless GROUP BY lists that name as a column (MySQL's rule; Connector/J's
    // DatabaseMetaData.getTables relies on it).
    let grouped_names: Vec<&str> = match &select.group_by {
        ast::GroupByExpr::Expressions(exprs, _) => exprs
            .iter()
            .filter_map(|e| match e {
                ast::Expr::Identifier(id) => Some(id.value.as_str()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    b.alias_first = names
        .iter()
        .map(|(n, _)| n.clone())
        .filter(|n| !grouped_names.iter().any(|g| g.eq_ignore_ascii_case(n)))
        .collect();
    let having = select
        .having
        .as_ref()
        .map(|h| bind_output_ref(b, h, names, projection, false))
        .transpose()?;
    b.alias_first.clear();
    Ok((group_by, having))
}

/// ORDER BY as (output position, descending): an output position (1 to
/// `visible`), an alias, or an expression, added to `projection` as a hidden
/// column unless it is already there.
fn bind_order_by(
    b: &mut Binder<'_>,
    q: &ast::Query,
    names: &[(String, Option<usize>)],
    projection: &mut Vec<Expr>,
    visible: usize,
) -> Result<Vec<(usize, bool)>> {
    let mut order_by = Vec::new();
    if let Some(ob) = &q.order_by {
        let exprs = match &ob.kind {
            ast::OrderByKind::Expressions(e) => e,
            ast::OrderByKind::All(_) => return Err(Error::Unsupported("ORDER BY ALL".into())),
        };
        for o in exprs {
            let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
            let pos = match &o.expr {
                // An integer literal is an output position; any other number
                // (`ORDER BY 12.0`, `1e3`) is a constant, as in MySQL.
                ast::Expr::Value(v)
                    if matches!(&v.value, ast::Value::Number(n, _)
                        if n.bytes().all(|c| c.is_ascii_digit())) =>
                {
                    let n: usize = v.value.to_string().parse().unwrap_or(0);
                    if n == 0 || n > visible {
                        return Err(Error::UnknownColumn {
                            column: n.to_string(),
                            context: "order clause".into(),
                        });
                    }
                    n - 1
                }
                ast::Expr::Identifier(id)
                    if names.iter().any(|(n, _)| n.eq_ignore_ascii_case(&id.value)) =>
                {
                    names
                        .iter()
                        .position(|(n, _)| n.eq_ignore_ascii_case(&id.value))
                        .expect("checked by the guard")
                }
                e => {
                    // An ENUM / SET column sorts by index / bitmask (MySQL).
                    let bound = b.bind(e)?;
                    let bound = b.sort_reading(bound);
                    match projection.iter().position(|p| *p == bound) {
                        Some(i) => i,
                        None => {
                            projection.push(bound);
                            projection.len() - 1
                        }
                    }
                }
            };
            // An output position or alias naming an ENUM / SET column: sort
            // by its numeric reading, a hidden column.
            let numeric = b.sort_reading(projection[pos].clone());
            let pos = if numeric == projection[pos] {
                pos
            } else {
                match projection.iter().position(|p| *p == numeric) {
                    Some(i) => i,
                    None => {
                        projection.push(numeric);
                        projection.len() - 1
                    }
                }
            };
            order_by.push((pos, desc));
        }
    }
    Ok(order_by)
}

/// Binds an expression that may name an output column by alias (GROUP BY /
/// HAVING) or, with `positions` (GROUP BY only, as in MySQL: `HAVING 2` is a
/// constant), by its 1-based position: an integer literal out of range is
/// 1054, any other number a constant.
fn bind_output_ref(
    b: &mut Binder<'_>,
    e: &ast::Expr,
    names: &[(String, Option<usize>)],
    projection: &[Expr],
    positions: bool,
) -> Result<Expr> {
    if let ast::Expr::Identifier(id) = e {
        let is_column = b.is_own_column(&id.value);
        if !is_column {
            if let Some(i) = names
                .iter()
                .position(|(n, _)| n.eq_ignore_ascii_case(&id.value))
            {
                return Ok(projection[i].clone());
            }
        }
    }
    if let ast::Expr::Value(v) = e {
        if let ast::Value::Number(n, _) = &v.value {
            if positions && n.bytes().all(|c| c.is_ascii_digit()) {
                return match n.parse::<usize>() {
                    Ok(k) if k >= 1 && k <= names.len() => Ok(projection[k - 1].clone()),
                    _ => Err(Error::UnknownColumn {
                        column: n.clone(),
                        context: "group statement".into(),
                    }),
                };
            }
        }
    }
    b.bind(e)
}

fn bind_limit(
    b: &mut Binder<'_>,
    l: Option<&ast::LimitClause>,
) -> Result<(Option<Expr>, Option<Expr>)> {
    Ok(match l {
        None => (None, None),
        Some(ast::LimitClause::LimitOffset {
            limit,
            offset,
            limit_by,
        }) => {
            if !limit_by.is_empty() {
                return Err(Error::Unsupported("LIMIT BY".into()));
            }
            let lim = limit.as_ref().map(|e| b.bind(e)).transpose()?;
            let off = offset.as_ref().map(|o| b.bind(&o.value)).transpose()?;
            (lim, off)
        }
        Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => {
            let off = b.bind(offset)?;
            let lim = b.bind(limit)?;
            (Some(lim), Some(off))
        }
    })
}

/// The column name MySQL gives an unaliased expression: its text.
fn expr_display_name(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => s.clone(),
            other => other.to_string(),
        },
        ast::Expr::Identifier(id) => id.value.clone(),
        ast::Expr::CompoundIdentifier(ids) => ids
            .iter()
            .map(|i| i.value.as_str())
            .collect::<Vec<_>>()
            .join("."),
        other => other.to_string(),
    }
}
