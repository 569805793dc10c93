//! Multi-table UPDATE and DELETE (MySQL 8.0 manual, 15.2.17 and 15.2.2):
//!
//! ```text
//! UPDATE [LOW_PRIORITY] [IGNORE] t1 [, t2 ...] | t1 JOIN t2 ON ...  SET ... [WHERE ...]
//! DELETE [LOW_PRIORITY] [QUICK] [IGNORE] a [, b] FROM table_references [WHERE ...]
//! DELETE ... FROM a [, b] USING table_references [WHERE ...]
//! ```
//!
//! # How they are planned
//! The join is planned by the SELECT planner, whole: the statement becomes
//!
//! ```text
//!   SELECT <target 1's columns>, <target 2's columns>, ..., <SET values>
//!   FROM <the table references> WHERE <the WHERE clause>
//! ```
//!
//! so every join form, access path and subquery (correlated ones included)
//! a SELECT has, a multi-table write has too. The executor
//! (`crate::exec::multi_dml`) runs it to completion first, then for each
//! target in FROM order locks and rewrites (or deletes) each distinct row
//! the join met, once, however many join rows it appears in (the primary key
//! the target's columns make identifies it; for a table without one, every
//! stored row equal to a met row is that row). The SET values are the
//! join's: MySQL evaluates them on the join row too, and gives no order
//! among assignments to different tables.
//!
//! # Errors, as MySQL gives them
//! - a DELETE target that is no table of the FROM clause: 1109
//!   ER_UNKNOWN_TABLE ("Unknown table 'x' in MULTI DELETE"); one named
//!   twice: 1066 ER_NONUNIQ_TABLE;
//! - a subquery of the WHERE or SET reading a target table: 1093;
//! - ORDER BY or LIMIT: 1221 ER_WRONG_USAGE for UPDATE ("UPDATE and ORDER
//!   BY"); a syntax error for DELETE (MySQL 8's grammar has no such form);
//! - a derived table as a target: 1288 ER_NON_UPDATABLE_TABLE.
//!
//! Not implemented (1235): views as targets, placeholders inside the FROM
//! clause of a multi-table UPDATE (the SELECT puts the SET list before the
//! FROM clause, which would renumber them).

use crate::catalog::Table;
use crate::plan::dml::{MultiTables, MultiTarget, PlanContext};
use crate::plan::{DeletePlan, RowOrder, UpdatePlan};
use canyon_common::{Error, Result};
use sqlparser::ast;
use std::sync::Arc;

/// A table reference of the FROM clause: the name it is known by, and the
/// base-table name (`None` for a derived table).
struct Source {
    exposed: String,
    name: Option<ast::ObjectName>,
}

fn last_ident(name: &ast::ObjectName) -> String {
    name.0
        .last()
        .and_then(|p| p.as_ident())
        .map(|i| i.value.clone())
        .unwrap_or_default()
}

fn collect_sources(t: &ast::TableWithJoins, out: &mut Vec<Source>) {
    collect_factor(&t.relation, out);
    for j in &t.joins {
        collect_factor(&j.relation, out);
    }
}

fn collect_factor(f: &ast::TableFactor, out: &mut Vec<Source>) {
    match f {
        ast::TableFactor::Table { name, alias, .. } => out.push(Source {
            exposed: alias
                .as_ref()
                .map(|a| a.name.value.clone())
                .unwrap_or_else(|| last_ident(name)),
            name: Some(name.clone()),
        }),
        ast::TableFactor::Derived { alias: Some(a), .. } => out.push(Source {
            exposed: a.name.value.clone(),
            name: None,
        }),
        ast::TableFactor::NestedJoin {
            table_with_joins, ..
        } => collect_sources(table_with_joins, out),
        _ => {}
    }
}

/// The base table of source `s`, as a target of `command` ("UPDATE" or
/// "DELETE").
fn target_table(ctx: &PlanContext<'_>, s: &Source, command: &str) -> Result<Arc<Table>> {
    let Some(name) = &s.name else {
        return Err(Error::View {
            code: 1288,
            message: format!(
                "The target table {} of the {command} is not updatable",
                s.exposed
            ),
        });
    };
    ctx.resolve(name).map_err(|e| {
        let db = match name.0.as_slice() {
            [_] => ctx.db.map(str::to_string),
            [d, _] => d.as_ident().map(|i| i.value.clone()),
            _ => None,
        };
        match db {
            Some(db) if ctx.catalog.view(&db, &last_ident(name)).is_some() => {
                Error::Unsupported(format!("a view as a target of a multi-table {command}"))
            }
            _ => e,
        }
    })
}

/// Whether an expression tree holds a `?` placeholder.
fn has_placeholder<T: ast::Visit>(node: &T) -> bool {
    use std::ops::ControlFlow;
    let found = ast::visit_expressions(node, |e| match e {
        ast::Expr::Value(v) if matches!(v.value, ast::Value::Placeholder(_)) => {
            ControlFlow::Break(())
        }
        _ => ControlFlow::Continue(()),
    });
    found.is_break()
}

/// The join's SELECT: the targets' columns, then `extra`, over `from`
/// filtered by `selection`.
fn join_query(
    targets: &[(&Source, Arc<Table>)],
    extra: Vec<ast::Expr>,
    from: Vec<ast::TableWithJoins>,
    selection: Option<ast::Expr>,
) -> Result<ast::Query> {
    let parsed = crate::parse::parse("SELECT 1")?;
    let Some(crate::parse::Parsed::Sql(stmt)) = parsed.into_iter().next() else {
        return Err(Error::Internal("the join template did not parse".into()));
    };
    let ast::Statement::Query(mut q) = *stmt else {
        return Err(Error::Internal("the join template is no query".into()));
    };
    let ast::SetExpr::Select(sel) = q.body.as_mut() else {
        return Err(Error::Internal("the join template is no SELECT".into()));
    };
    let mut projection = Vec::new();
    for (s, t) in targets {
        for c in &t.def.columns {
            projection.push(ast::SelectItem::UnnamedExpr(ast::Expr::CompoundIdentifier(
                vec![
                    ast::Ident::with_quote('`', s.exposed.clone()),
                    ast::Ident::with_quote('`', c.name.clone()),
                ],
            )));
        }
    }
    projection.extend(extra.into_iter().map(ast::SelectItem::UnnamedExpr));
    sel.projection = projection;
    sel.from = from;
    sel.selection = selection;
    Ok(*q)
}

/// Plans the join and checks its subqueries: none may read a target (1093).
fn plan_join(
    ctx: &PlanContext<'_>,
    targets: &[(&Source, Arc<Table>)],
    q: &ast::Query,
) -> Result<Box<crate::plan::select::SelectPlan>> {
    let select = crate::plan::select::plan_select(ctx, q)?;
    for (s, t) in targets {
        if crate::plan::dml::subqueries_read_table(&select, t)? {
            return Err(Error::UpdateTableUsed(s.exposed.clone()));
        }
    }
    Ok(Box::new(select))
}

/// The multi-table targets, their offsets in the join's rows, and the FK
/// catalog.
fn multi_targets(targets: &[(&Source, Arc<Table>)]) -> Vec<MultiTarget> {
    let mut offset = 0;
    targets
        .iter()
        .map(|(_, t)| {
            let m = MultiTarget {
                table: t.clone(),
                offset,
                assignments: Vec::new(),
            };
            offset += t.def.columns.len();
            m
        })
        .collect()
}

/// Plans a multi-table UPDATE (see the module doc).
pub fn plan_multi_update(
    ctx: &PlanContext<'_>,
    up: &ast::Update,
    ignore: bool,
) -> Result<UpdatePlan> {
    if !up.order_by.is_empty() {
        return Err(Error::WrongUsage("UPDATE and ORDER BY".into()));
    }
    if up.limit.is_some() {
        return Err(Error::WrongUsage("UPDATE and LIMIT".into()));
    }
    let mut from = vec![up.table.clone()];
    if let Some(
        ast::UpdateTableFromKind::BeforeSet(more) | ast::UpdateTableFromKind::AfterSet(more),
    ) = &up.from
    {
        from.extend(more.iter().cloned());
    }
    if has_placeholder(&from) {
        return Err(Error::Unsupported(
            "placeholders in the table references of a multi-table UPDATE".into(),
        ));
    }
    let mut sources = Vec::new();
    for t in &from {
        collect_sources(t, &mut sources);
    }
    // Each assignment's table: by its qualifier, else the one source that
    // has the column (1054 none, 1052 several).
    let mut resolved: Vec<(usize, Arc<Table>)> = Vec::new();
    let mut assigned: Vec<(usize, usize, ast::Expr)> = Vec::new();
    for a in &up.assignments {
        let ast::AssignmentTarget::ColumnName(n) = &a.target else {
            return Err(Error::Unsupported("tuple assignment".into()));
        };
        let parts: Vec<String> =
            n.0.iter()
                .map(|p| p.as_ident().map(|i| i.value.clone()).unwrap_or_default())
                .collect();
        let (qualifier, column) = match parts.as_slice() {
            [c] => (None, c.clone()),
            [t, c] | [_, t, c] => (Some(t.clone()), c.clone()),
            _ => return Err(Error::Syntax(n.to_string())),
        };
        let unknown = || Error::UnknownColumn {
            column: n.to_string(),
            context: "field list".into(),
        };
        let mut found: Option<(usize, Arc<Table>, usize)> = None;
        for (si, s) in sources.iter().enumerate() {
            if qualifier.as_ref().is_some_and(|q| *q != s.exposed) {
                continue;
            }
            let table = match resolved.iter().find(|(i, _)| *i == si) {
                Some((_, t)) => t.clone(),
                // A derived table: named as the target, 1288.
                None if s.name.is_none() => {
                    if qualifier.is_some() {
                        target_table(ctx, s, "UPDATE")?;
                    }
                    continue;
                }
                None => target_table(ctx, s, "UPDATE")?,
            };
            if let Some(c) = table.column(&column) {
                if found.is_some() {
                    return Err(Error::AmbiguousColumn {
                        column: column.clone(),
                        context: "field list".into(),
                    });
                }
                found = Some((si, table, c));
            }
        }
        let (si, table, c) = found.ok_or_else(unknown)?;
        if !resolved.iter().any(|(i, _)| *i == si) {
            resolved.push((si, table));
        }
        assigned.push((si, c, a.value.clone()));
    }
    resolved.sort_by_key(|(i, _)| *i);
    let targets: Vec<(&Source, Arc<Table>)> = resolved
        .iter()
        .map(|(i, t)| (&sources[*i], t.clone()))
        .collect();
    // Generated columns: only `gcol = DEFAULT` (3105 for any other value),
    // which this form does not drop; refused as written then too.
    for (si, _, _) in &assigned {
        let t = &resolved.iter().find(|(i, _)| i == si).expect("resolved").1;
        let mine: Vec<ast::Assignment> = up
            .assignments
            .iter()
            .zip(&assigned)
            .filter(|(_, (s, _, _))| s == si)
            .map(|(a, _)| a.clone())
            .collect();
        let mut kept = mine.clone();
        crate::plan::generated::check_assignments(t, &mut kept)?;
        if kept.len() != mine.len() {
            return Err(Error::Unsupported(
                "DEFAULT for a generated column in a multi-table UPDATE".into(),
            ));
        }
    }
    let values: Vec<ast::Expr> = assigned.iter().map(|(_, _, e)| e.clone()).collect();
    let q = join_query(&targets, values, from, up.selection.clone())?;
    let select = plan_join(ctx, &targets, &q)?;
    let mut multi = multi_targets(&targets);
    let value_base: usize = targets.iter().map(|(_, t)| t.def.columns.len()).sum();
    for (k, (si, c, _)) in assigned.iter().enumerate() {
        let ti = resolved
            .iter()
            .position(|(i, _)| i == si)
            .expect("every assigned source is a target");
        multi[ti].assignments.push((*c, value_base + k));
    }
    let table = multi[0].table.clone();
    Ok(UpdatePlan {
        access: crate::plan::access::choose_access(&table, None),
        table,
        filter: None,
        filter_implied: false,
        assignments: Vec::new(),
        order: RowOrder::Any,
        limit: None,
        subqueries: false,
        ignore,
        multi: Some(Box::new(MultiTables {
            select,
            targets: multi,
        })),
        fk: None,
    })
}

/// Plans a multi-table DELETE (see the module doc).
pub fn plan_multi_delete(
    ctx: &PlanContext<'_>,
    del: &ast::Delete,
    ignore: bool,
) -> Result<DeletePlan> {
    if !del.order_by.is_empty() || del.limit.is_some() {
        // MySQL 8's grammar has no ORDER BY / LIMIT in a multi-table DELETE.
        return Err(Error::Syntax(
            "ORDER BY / LIMIT in a multi-table DELETE".into(),
        ));
    }
    let from_list = match &del.from {
        ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f) => f,
    };
    // DELETE a, b FROM refs | DELETE FROM a, b USING refs.
    let (names, refs): (Vec<ast::ObjectName>, Vec<ast::TableWithJoins>) = if !del.tables.is_empty()
    {
        match &del.using {
            // DELETE FROM a.*, b.* USING refs (`crate::parse::dml_modifiers`).
            Some(using) => (del.tables.clone(), using.clone()),
            None => (del.tables.clone(), from_list.clone()),
        }
    } else if let Some(using) = &del.using {
        let mut names = Vec::new();
        for t in from_list {
            match (&t.relation, t.joins.is_empty()) {
                (ast::TableFactor::Table { name, .. }, true) => names.push(name.clone()),
                _ => return Err(Error::Syntax("DELETE FROM <table list> USING".into())),
            }
        }
        (names, using.clone())
    } else {
        // DELETE FROM t1 JOIN t2: no target list.
        return Err(Error::Syntax("DELETE FROM a join without targets".into()));
    };
    let mut sources = Vec::new();
    for t in &refs {
        collect_sources(t, &mut sources);
    }
    let mut picked: Vec<usize> = Vec::new();
    for n in &names {
        let exposed = last_ident(n);
        let db = match n.0.as_slice() {
            [d, _] => d.as_ident().map(|i| i.value.clone()),
            _ => None,
        };
        let si = sources
            .iter()
            .position(|s| {
                s.exposed == exposed
                    && match (&db, &s.name) {
                        (None, _) => true,
                        (Some(d), Some(sn)) => match sn.0.as_slice() {
                            [sd, _] => sd.as_ident().is_some_and(|i| i.value == *d),
                            _ => ctx.db == Some(d.as_str()),
                        },
                        (Some(_), None) => false,
                    }
            })
            .ok_or_else(|| Error::UnknownTableIn {
                table: exposed.clone(),
                context: "MULTI DELETE".into(),
            })?;
        if picked.contains(&si) {
            return Err(Error::NonUniqueTable(exposed));
        }
        picked.push(si);
    }
    picked.sort_unstable();
    let mut targets: Vec<(&Source, Arc<Table>)> = Vec::new();
    for &si in &picked {
        targets.push((&sources[si], target_table(ctx, &sources[si], "DELETE")?));
    }
    let q = join_query(&targets, Vec::new(), refs, del.selection.clone())?;
    let select = plan_join(ctx, &targets, &q)?;
    let multi = multi_targets(&targets);
    let table = multi[0].table.clone();
    Ok(DeletePlan {
        access: crate::plan::access::choose_access(&table, None),
        table,
        filter: None,
        filter_implied: false,
        order: RowOrder::Any,
        limit: None,
        subqueries: false,
        ignore,
        multi: Some(Box::new(MultiTables {
            select,
            targets: multi,
        })),
        fk: None,
    })
}
