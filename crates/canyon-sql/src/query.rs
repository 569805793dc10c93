//! Planning SELECT queries.

use crate::access::{choose_access, Access};
use crate::api::Column;
use crate::catalog::Table;
use crate::expr::{AggCall, Binder, Expr};
use crate::plan::PlanContext;
use crate::types::{expr_column, table_column, ExprKind};
use canyon_common::{Error, Result};
use sqlparser::ast;
use std::sync::Arc;

/// Row locking requested by a SELECT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockMode {
    /// A consistent (snapshot) read.
    None,
    /// FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE: lock each row and read the latest
    /// committed version. Shared locks are taken as exclusive ones (documented).
    Locking,
}

/// A single-table (or table-less) SELECT.
#[derive(Debug)]
pub struct SelectPlan {
    /// The table, or `None` for `SELECT 1`.
    pub table: Option<Arc<Table>>,
    /// How rows are found.
    pub access: Access,
    /// The whole WHERE clause, re-checked on every row.
    pub filter: Option<Expr>,
    /// Aggregates referenced by projection / HAVING / ORDER BY.
    pub aggs: Vec<AggCall>,
    /// Whether rows are grouped (aggregates or GROUP BY present).
    pub grouped: bool,
    /// GROUP BY expressions.
    pub group_by: Vec<Expr>,
    /// HAVING.
    pub having: Option<Expr>,
    /// Output expressions: visible columns, then hidden sort keys.
    pub projection: Vec<Expr>,
    /// Number of visible columns.
    pub visible: usize,
    /// Result-set metadata of the visible columns.
    pub columns: Arc<[Column]>,
    /// DISTINCT.
    pub distinct: bool,
    /// ORDER BY as (output position, descending).
    pub order_by: Vec<(usize, bool)>,
    /// Whether the access path already yields rows in ORDER BY order.
    pub order_from_access: bool,
    /// LIMIT.
    pub limit: Option<Expr>,
    /// OFFSET.
    pub offset: Option<Expr>,
    /// Row locking.
    pub lock: LockMode,
    /// The table columns any expression reads; `None` when all are (decoding
    /// skips the others, see `encoding::decode_row_columns`).
    pub needed: Option<Vec<bool>>,
}

/// Marks the columns `e` reads.
fn mark_columns(e: &Expr, needed: &mut [bool]) {
    match e {
        Expr::Column(i) => {
            if let Some(n) = needed.get_mut(*i) {
                *n = true;
            }
        }
        Expr::Literal(_) | Expr::Param(_) | Expr::Agg(_) | Expr::SysVar(_) | Expr::UserVar(_) => {}
        Expr::Neg(a)
        | Expr::Not(a)
        | Expr::BitNot(a)
        | Expr::IsNull(a, _)
        | Expr::IsBool(a, _, _) => mark_columns(a, needed),
        Expr::Binary(_, a, b) | Expr::Like(a, b, _, _) => {
            mark_columns(a, needed);
            mark_columns(b, needed);
        }
        Expr::InList(a, list, _) => {
            mark_columns(a, needed);
            list.iter().for_each(|x| mark_columns(x, needed));
        }
        Expr::Between(a, b, c, _) => {
            mark_columns(a, needed);
            mark_columns(b, needed);
            mark_columns(c, needed);
        }
        Expr::Case {
            operand,
            whens,
            otherwise,
        } => {
            operand.iter().for_each(|x| mark_columns(x, needed));
            for (c, r) in whens {
                mark_columns(c, needed);
                mark_columns(r, needed);
            }
            otherwise.iter().for_each(|x| mark_columns(x, needed));
        }
        Expr::Func(_, args) => args.iter().for_each(|x| mark_columns(x, needed)),
    }
}

/// Plans a SELECT query.
pub fn plan_select(ctx: &PlanContext<'_>, q: &ast::Query) -> Result<SelectPlan> {
    if q.with.is_some() {
        return Err(Error::Unsupported("WITH".into()));
    }
    if q.fetch.is_some() || !q.pipe_operators.is_empty() {
        return Err(Error::Unsupported("this SELECT form".into()));
    }
    let select = match q.body.as_ref() {
        ast::SetExpr::Select(s) => s,
        ast::SetExpr::Query(inner) if q.order_by.is_none() && q.limit_clause.is_none() => {
            return plan_select(ctx, inner)
        }
        ast::SetExpr::SetOperation { .. } => return Err(Error::Unsupported("UNION".into())),
        _ => return Err(Error::Unsupported("this SELECT form".into())),
    };
    if select.into.is_some() {
        return Err(Error::Unsupported("SELECT ... INTO".into()));
    }
    let (table, alias) = match select.from.as_slice() {
        [] => (None, None),
        [twj] => {
            if !twj.joins.is_empty() {
                return Err(Error::Unsupported("joins".into()));
            }
            match &twj.relation {
                ast::TableFactor::Table {
                    name,
                    alias: None,
                    args: None,
                    ..
                } if name.0.len() == 1 && name.to_string().eq_ignore_ascii_case("dual") => {
                    (None, None)
                }
                ast::TableFactor::Table {
                    name,
                    alias,
                    args: None,
                    ..
                } => (
                    Some(ctx.resolve(name)?),
                    alias.as_ref().map(|a| a.name.value.clone()),
                ),
                ast::TableFactor::Derived { .. } => {
                    return Err(Error::Unsupported("derived tables".into()))
                }
                _ => return Err(Error::Unsupported("this FROM clause".into())),
            }
        }
        _ => return Err(Error::Unsupported("joins".into())),
    };
    let table_ref = table.as_deref();
    let mut b = Binder::new(table_ref, alias.as_deref());

    // 1. Projection (textual order first, for placeholder numbering).
    b.allow_aggs = true;
    b.context = "field list";
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
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => {
                let t = table_ref.ok_or_else(|| Error::Syntax("* without a table".into()))?;
                for (i, c) in t.def.columns.iter().enumerate() {
                    names.push((c.name.clone(), Some(i)));
                    projection.push(Expr::Column(i));
                }
            }
            ast::SelectItem::ExprWithAliases { .. } => {
                return Err(Error::Unsupported("this select item".into()))
            }
        }
    }

    // Output aliases become visible to GROUP BY, HAVING and ORDER BY (not WHERE).
    let aliases: Vec<(String, Expr)> = names
        .iter()
        .zip(&projection)
        .map(|((n, _), e)| (n.clone(), e.clone()))
        .collect();

    // 2. WHERE.
    b.allow_aggs = false;
    b.context = "where clause";
    let filter = select.selection.as_ref().map(|w| b.bind(w)).transpose()?;

    // 3. GROUP BY, HAVING.
    b.context = "group statement";
    b.aliases = aliases;
    let group_by = match &select.group_by {
        ast::GroupByExpr::Expressions(exprs, mods) if mods.is_empty() => exprs
            .iter()
            .map(|e| bind_output_ref(&mut b, e, &names, &projection))
            .collect::<Result<Vec<_>>>()?,
        _ => return Err(Error::Unsupported("GROUP BY ALL / WITH ROLLUP".into())),
    };
    b.allow_aggs = true;
    b.context = "having clause";
    let having = select
        .having
        .as_ref()
        .map(|h| bind_output_ref(&mut b, h, &names, &projection))
        .transpose()?;

    // 4. ORDER BY: an output position, an alias, or an expression (hidden column).
    b.context = "order clause";
    let visible = projection.len();
    let mut order_by = Vec::new();
    if let Some(ob) = &q.order_by {
        let exprs = match &ob.kind {
            ast::OrderByKind::Expressions(e) => e,
            ast::OrderByKind::All(_) => return Err(Error::Unsupported("ORDER BY ALL".into())),
        };
        for o in exprs {
            let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
            let pos = match &o.expr {
                ast::Expr::Value(v) if matches!(v.value, ast::Value::Number(..)) => {
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
                    let bound = b.bind(e)?;
                    match projection.iter().position(|p| *p == bound) {
                        Some(i) => i,
                        None => {
                            projection.push(bound);
                            projection.len() - 1
                        }
                    }
                }
            };
            order_by.push((pos, desc));
        }
    }

    // 5. LIMIT / OFFSET.
    b.allow_aggs = false;
    b.context = "field list";
    let (limit, offset) = bind_limit(&mut b, q.limit_clause.as_ref())?;

    let grouped = !b.aggs.is_empty() || !group_by.is_empty();
    if !grouped && having.is_some() {
        // MySQL allows HAVING without GROUP BY as a filter on output; keep it simple.
    }
    let lock = match q.locks.as_slice() {
        [] => LockMode::None,
        [l] if l.of.is_none() && l.nonblock.is_none() => LockMode::Locking,
        _ => return Err(Error::Unsupported("NOWAIT / SKIP LOCKED / OF".into())),
    };
    let distinct = match &select.distinct {
        None | Some(ast::Distinct::All) => false,
        Some(ast::Distinct::Distinct) => true,
        Some(ast::Distinct::On(_)) => return Err(Error::Unsupported("DISTINCT ON".into())),
    };

    // Result-set metadata.
    let aggs = std::mem::take(&mut b.aggs);
    let params = b.params;
    let _ = params;
    let db = table_ref.map(|t| t.def.db.clone()).unwrap_or_default();
    let columns: Vec<Column> = names
        .iter()
        .zip(&projection)
        .map(|((name, src), e)| match (src, table_ref) {
            (Some(i), Some(t)) if !grouped || matches!(e, Expr::Column(_)) => {
                let c = &t.def.columns[*i];
                let mut flags = 0;
                if !c.nullable {
                    flags |= crate::api::column_flags::NOT_NULL;
                }
                if t.def.primary_key.contains(i) {
                    flags |= crate::api::column_flags::PRI_KEY;
                }
                if c.auto_increment {
                    flags |= crate::api::column_flags::AUTO_INCREMENT;
                }
                let mut col = table_column(
                    &db,
                    &t.def.name,
                    alias.as_deref().unwrap_or(&t.def.name),
                    &c.name,
                    c.ty,
                    flags,
                );
                col.name = name.clone();
                col
            }
            _ => {
                let kind = e.kind(&crate::expr::column_kinds(table_ref), &aggs);
                expr_column(name, kind)
            }
        })
        .collect();

    let filter_ref = filter.as_ref();
    let access = match table_ref {
        Some(t) => choose_access(t, filter_ref),
        None => Access::none(),
    };
    let order_from_access = match table_ref {
        Some(t) if !grouped && !distinct => access.delivers_order(t, &order_by, &projection),
        _ => false,
    };
    let needed = table_ref.and_then(|t| {
        let mut needed = vec![false; t.def.columns.len()];
        let exprs = filter
            .iter()
            .chain(&projection)
            .chain(&group_by)
            .chain(having.iter())
            .chain(aggs.iter().filter_map(|a| a.arg.as_ref()));
        for e in exprs {
            mark_columns(e, &mut needed);
        }
        (!needed.iter().all(|n| *n)).then_some(needed)
    });
    Ok(SelectPlan {
        needed,
        table,
        access,
        filter,
        aggs,
        grouped,
        group_by,
        having,
        projection,
        visible,
        columns: columns.into(),
        distinct,
        order_by,
        order_from_access,
        limit,
        offset,
        lock,
    })
}

/// Binds an expression that may name an output column by alias (GROUP BY / HAVING).
fn bind_output_ref(
    b: &mut Binder<'_>,
    e: &ast::Expr,
    names: &[(String, Option<usize>)],
    projection: &[Expr],
) -> Result<Expr> {
    if let ast::Expr::Identifier(id) = e {
        let is_column = b.table.and_then(|t| t.column(&id.value)).is_some();
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
            if let Ok(k) = n.parse::<usize>() {
                if k >= 1 && k <= names.len() {
                    return Ok(projection[k - 1].clone());
                }
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

/// The kind of the projection's columns, exposed for tests.
pub fn projection_kinds(p: &SelectPlan) -> Vec<ExprKind> {
    p.projection[..p.visible]
        .iter()
        .map(|e| e.kind(&crate::expr::column_kinds(p.table.as_deref()), &p.aggs))
        .collect()
}
