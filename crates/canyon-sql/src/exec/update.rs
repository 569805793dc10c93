//! UPDATE and DELETE: the rows a statement targets (in ORDER BY order when
//! asked), and the writes.

use super::{dml::*, insert::*, read::*};
use crate::catalog::routines::{TriggerEvent, TriggerTiming};
use crate::catalog::rows::*;
use crate::catalog::Table;
use crate::exec::foreign::{self, FkScope};
use crate::expr::{eval, eval_predicate, Env, EvalContext, Expr};
use crate::plan::access::Access;
use crate::plan::{eval_count, DeletePlan, RowOrder, UpdatePlan};
use crate::types::collation::Collation;
use crate::types::result::QueryResult;
use crate::types::value::{sort_cmp_as, Value};
use canyon_common::{Error, Result};
use canyon_txn::Transaction;
use std::cmp::Ordering;

/// The WHERE clause each row read must still pass: `None` when the plan's
/// key ranges are the clause (`implied`, from [`Access::implies`]) and this
/// execution's bounds convert exactly ([`Access::bounds_exact`]), so checking it
/// again could only repeat what the ranges decided.
pub(crate) fn residual_filter<'e>(
    filter: Option<&'e Expr>,
    implied: bool,
    access: &Access,
    table: &Table,
    ctx: &dyn EvalContext,
) -> Result<Option<&'e Expr>> {
    Ok(match filter {
        Some(_) if implied && access.bounds_exact(table, ctx)? => None,
        f => f,
    })
}

/// Visits the rows an UPDATE or DELETE changes, locked and at their latest
/// version, in the plan's ORDER BY order, at most `limit` of them.
#[allow(clippy::too_many_arguments)] // the statement's row selection, spelled out
pub(crate) fn for_each_target_row(
    txn: &mut Transaction,
    table: &Table,
    access: &Access,
    filter: Option<&Expr>,
    order: &RowOrder,
    limit: Option<u64>,
    ctx: &dyn EvalContext,
    f: &mut dyn FnMut(&mut Transaction, Vec<u8>, Vec<Value>, u64) -> Result<()>,
) -> Result<()> {
    match order {
        RowOrder::Any => for_each_locked_row_numbered(
            txn,
            table,
            access,
            filter,
            limit,
            false,
            canyon_txn::LockMode::Exclusive,
            ctx,
            f,
        ),
        RowOrder::Key { reverse } => for_each_locked_row_numbered(
            txn,
            table,
            access,
            filter,
            limit,
            *reverse,
            canyon_txn::LockMode::Exclusive,
            ctx,
            f,
        ),
        RowOrder::Sort(keys) => {
            if limit == Some(0) {
                return Ok(());
            }
            // Like MySQL's filesort for UPDATE / DELETE: every matching row is
            // locked and read, then sorted; only the first LIMIT are changed.
            let mut rows: Vec<(Vec<Value>, Vec<u8>, Vec<Value>)> = Vec::new();
            for_each_locked_row_dir(
                txn,
                table,
                access,
                filter,
                None,
                false,
                canyon_txn::LockMode::Exclusive,
                ctx,
                &mut |_, pk, row| {
                    let env = Env {
                        row: &row,
                        aggs: &[],
                        ctx,
                    };
                    let sort_key = keys
                        .iter()
                        .map(|(e, _)| eval(e, &env))
                        .collect::<Result<Vec<_>>>()?;
                    rows.push((sort_key, pk, row));
                    Ok(())
                },
            )?;
            // Strings sort under their column's (or an explicit) collation.
            let colls: Vec<Option<Collation>> = keys
                .iter()
                .map(|(e, _)| match e {
                    Expr::Column(c) => Some(table.def.columns[*c].collation),
                    e => crate::expr::collation_of(e),
                })
                .map(|c| c.filter(|c| !c.is_bytewise()))
                .collect();
            // A stable sort: ties keep the access path's order.
            rows.sort_by(|a, b| {
                for (i, (_, desc)) in keys.iter().enumerate() {
                    let o = sort_cmp_as(&a.0[i], &b.0[i], colls[i]);
                    if o != Ordering::Equal {
                        return if *desc { o.reverse() } else { o };
                    }
                }
                Ordering::Equal
            });
            if let Some(l) = limit {
                rows.truncate(usize::try_from(l).unwrap_or(usize::MAX));
            }
            // Numbered in the sorted order, as MySQL's rows after a filesort.
            for (n, (_, pk, row)) in rows.into_iter().enumerate() {
                f(txn, pk, row, n as u64 + 1)?;
            }
            Ok(())
        }
    }
}

/// Whether a WHERE clause is MySQL's "Impossible WHERE": one of its AND-ed
/// parts is constant (literals, parameters, variables, substituted subqueries)
/// and not true, as the optimizer finds when it folds constants.
pub(crate) fn impossible_where(filter: Option<&Expr>, ctx: &dyn EvalContext) -> Result<bool> {
    let Some(f) = filter else {
        return Ok(false);
    };
    for c in f.conjuncts() {
        if c.is_constant() && !eval_predicate(c, &no_row(ctx))? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Runs an UPDATE. With `found_rows` (CLIENT_FOUND_ROWS) affected rows are the
/// matched rows, else the changed rows, as in MySQL.
pub fn run_update(
    plan: &UpdatePlan,
    txn: &mut Transaction,
    ctx: &dyn EvalContext,
    found_rows: bool,
    effects: &mut StatementEffects,
) -> Result<QueryResult> {
    if let Some(m) = &plan.multi {
        return super::multi_dml::run_multi_update(plan, m, txn, ctx, found_rows, effects);
    }
    let table = &plan.table;
    let limit = plan
        .limit
        .as_ref()
        .map(|e| eval(e, &no_row(ctx)).and_then(eval_count))
        .transpose()?;
    let resolved = if plan.subqueries {
        let mut exprs: Vec<&Expr> = plan.filter.iter().collect();
        exprs.extend(plan.assignments.iter().map(|(_, e)| e));
        exprs.extend(order_keys(&plan.order));
        let pre = Prefetched::run(&exprs, txn, ctx)?;
        let assignments = plan
            .assignments
            .iter()
            .map(|(c, e)| (*c, pre.substitute(e)))
            .collect();
        Some(Resolved::new(
            table,
            plan.filter.as_ref(),
            assignments,
            &plan.order,
            pre,
        )?)
    } else {
        None
    };
    let (filter, assignments, access, order, ctx): (_, &[(usize, Expr)], _, _, &dyn EvalContext) =
        match &resolved {
            Some(r) => (
                r.filter.as_ref(),
                &r.assignments,
                &r.access,
                &r.order,
                &r.ctx,
            ),
            None => (
                plan.filter.as_ref(),
                &plan.assignments,
                &plan.access,
                &plan.order,
                ctx,
            ),
        };
    if impossible_where(filter, ctx)? {
        // No row is read, and the OK packet carries no "Rows matched" info
        // (Sql_cmd_update::update_single_table returns early).
        return Ok(QueryResult::Ok {
            affected_rows: 0,
            last_insert_id: effects.generated_id.unwrap_or(0),
            info: String::new(),
            warnings: 0,
        });
    }
    let filter = match &resolved {
        Some(_) => filter,
        None => residual_filter(filter, plan.filter_implied, access, table, ctx)?,
    };
    let mut up = RowUpdater::new(table, plan.fk.as_ref(), plan.ignore, ctx)?;
    let columns: Vec<usize> = assignments.iter().map(|(c, _)| *c).collect();
    for_each_target_row(
        txn,
        table,
        access,
        filter,
        order,
        limit,
        ctx,
        &mut |txn, pk, row, number| {
            up.update(
                txn,
                pk,
                row,
                number,
                &columns,
                effects,
                &mut |k, row, effects| {
                    eval_assignment(
                        &assignments[k].1,
                        &Env {
                            row,
                            aggs: &[],
                            ctx,
                        },
                        effects,
                    )
                },
            )
        },
    )?;
    Ok(up.result(found_rows, effects))
}

/// The per-row work of an UPDATE, single- or multi-table: assignments,
/// BEFORE / AFTER UPDATE triggers, generated columns, ON UPDATE
/// CURRENT_TIMESTAMP, the write with its key and foreign-key checks, and the
/// matched / changed counts. Under IGNORE a row that would collide with a
/// unique key or lose its parent keeps its old values (warning 1062 / 1452),
/// and NULL for a NOT NULL column stores the column's implicit default with
/// warning 1048, as MySQL 8 does.
pub(crate) struct RowUpdater<'a> {
    table: &'a Table,
    ctx: &'a dyn EvalContext,
    triggers: bool,
    generator: Option<crate::plan::generated::Generator>,
    router: Option<crate::plan::partition::Router>,
    fk: Option<FkScope<'a>>,
    ignore: bool,
    /// Rows met (MySQL's "Rows matched").
    pub matched: u64,
    /// Rows whose values changed ("Changed").
    pub changed: u64,
}

impl<'a> RowUpdater<'a> {
    /// An updater of `table`'s rows; `fk` the plan's foreign-key catalog.
    pub(crate) fn new(
        table: &'a Table,
        fk: Option<&'a std::sync::Arc<crate::catalog::Catalog>>,
        ignore: bool,
        ctx: &'a dyn EvalContext,
    ) -> Result<RowUpdater<'a>> {
        Ok(RowUpdater {
            table,
            ctx,
            triggers: ctx.has_triggers(&table.def, TriggerEvent::Update),
            generator: crate::plan::generated::Generator::new(table)?,
            router: crate::plan::partition::Router::new(table)?,
            fk: FkScope::new(fk, ctx)?,
            ignore,
            matched: 0,
            changed: 0,
        })
    }

    /// The statement's OK result. With `found_rows` (CLIENT_FOUND_ROWS)
    /// affected rows are the matched rows, else the changed rows, as in MySQL.
    pub(crate) fn result(&self, found_rows: bool, effects: &StatementEffects) -> QueryResult {
        QueryResult::Ok {
            affected_rows: if found_rows {
                self.matched
            } else {
                self.changed
            },
            last_insert_id: effects.generated_id.unwrap_or(0),
            info: format!(
                "Rows matched: {}  Changed: {}  Warnings: {}",
                self.matched,
                self.changed,
                effects.warnings.len()
            ),
            warnings: 0,
        }
    }

    /// Updates the locked row `row` stored at `pk`: column `columns[k]`
    /// takes `value(k, row so far, effects)`, left to right. `number` is
    /// the row's number that a stored value's warning names (see
    /// `for_each_locked_row_numbered`).
    #[allow(clippy::too_many_arguments)] // one row's update, spelled out
    pub(crate) fn update(
        &mut self,
        txn: &mut Transaction,
        pk: Vec<u8>,
        mut row: Vec<Value>,
        number: u64,
        columns: &[usize],
        effects: &mut StatementEffects,
        value: &mut dyn FnMut(usize, &[Value], &mut StatementEffects) -> Result<Value>,
    ) -> Result<()> {
        let (table, ctx) = (self.table, self.ctx);
        let def = &table.def;
        self.matched += 1;
        // With UPDATE triggers the whole row before is kept: a BEFORE
        // trigger may change any column of NEW.
        let before = self.triggers.then(|| row.clone());
        // The assignments change the row in place, left to right (a later
        // one reads what an earlier one assigned, as in MySQL); `replaced`
        // keeps the value each assigned column had.
        let mut replaced: Vec<(usize, Value)> = Vec::with_capacity(columns.len());
        for (k, c) in columns.iter().enumerate() {
            let v = value(k, &row, effects)?;
            let col = &def.columns[*c];
            let mut v = store_column(v, col, number, ctx, self.ignore)?;
            if v.is_null() && !col.nullable {
                if !self.ignore {
                    return Err(Error::BadNull(col.name.clone()));
                }
                // UPDATE IGNORE: the implicit default, with the error as a
                // warning.
                ctx.warn(1048, &format!("Column '{}' cannot be null", col.name));
                v = super::load::implicit_default(col.ty);
            }
            let was = std::mem::replace(&mut row[*c], v);
            if !replaced.iter().any(|(r, _)| r == c) {
                replaced.push((*c, was));
            }
        }
        if let Some(old) = &before {
            ctx.fire_triggers(
                txn,
                def,
                TriggerTiming::Before,
                TriggerEvent::Update,
                Some(old),
                Some(&mut row),
            )?;
            replaced = (0..row.len())
                .filter(|c| row[*c] != old[*c])
                .map(|c| (c, old[c].clone()))
                .collect();
        }
        if let Some(g) = &self.generator {
            // The generated columns follow the new values (after the
            // BEFORE trigger, as in MySQL); a changed one is one more
            // replaced column (its index entries move).
            let old: Vec<Value> = g.positions().map(|c| row[c].clone()).collect();
            g.fill(table, &mut row, ctx, number)?;
            for (c, was) in g.positions().zip(old) {
                if row[c] != was && !replaced.iter().any(|(r, _)| *r == c) {
                    replaced.push((c, was));
                }
            }
        }
        let unchanged = replaced.iter().all(|(c, was)| row[*c] == *was);
        if !unchanged {
            // ON UPDATE CURRENT_TIMESTAMP: a changed row's columns that
            // carry it and were not assigned take the statement's time.
            for (c, col) in def.columns.iter().enumerate() {
                if col.attrs.on_update_now && !replaced.iter().any(|(r, _)| *r == c) {
                    // coerce_column: a TIMESTAMP stores the instant.
                    let now = crate::expr::coerce_column(
                        Value::DateTime(crate::types::datetime::truncate_datetime(
                            ctx.now(),
                            col.ty.fsp(),
                        )),
                        col,
                        number,
                        ctx,
                    )?;
                    replaced.push((c, std::mem::replace(&mut row[c], now)));
                }
            }
            super::partition::place_row(self.router.as_ref(), &row, ctx)?;
            // The key and parent checks come before anything is written
            // (`write_update`), so an IGNOREd row leaves nothing behind.
            match write_update(
                txn,
                table,
                pk,
                OldRow::Replaced(&replaced),
                &row,
                self.fk.as_mut(),
                0,
            ) {
                Ok(()) => {
                    self.changed += 1;
                    self.ctx.note_write(
                        &self.table.def,
                        crate::catalog::perfschema::IoWrite::Update,
                        1,
                    );
                }
                Err(e @ (Error::DuplicateEntry { .. } | Error::ForeignKey { code: 1452, .. }))
                    if self.ignore =>
                {
                    skip_warning(effects, e);
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        }
        if let Some(old) = &before {
            // MySQL fires AFTER UPDATE for a matched row even when its
            // values did not change.
            ctx.fire_triggers(
                txn,
                def,
                TriggerTiming::After,
                TriggerEvent::Update,
                Some(old),
                Some(&mut row.clone()),
            )?;
        }
        Ok(())
    }
}

/// Runs a DELETE.
pub fn run_delete(
    plan: &DeletePlan,
    txn: &mut Transaction,
    ctx: &dyn EvalContext,
) -> Result<QueryResult> {
    if let Some(m) = &plan.multi {
        return super::multi_dml::run_multi_delete(plan, m, txn, ctx);
    }
    let table = &plan.table;
    let limit = plan
        .limit
        .as_ref()
        .map(|e| eval(e, &no_row(ctx)).and_then(eval_count))
        .transpose()?;
    let resolved = if plan.subqueries {
        let mut exprs: Vec<&Expr> = plan.filter.iter().collect();
        exprs.extend(order_keys(&plan.order));
        let pre = Prefetched::run(&exprs, txn, ctx)?;
        Some(Resolved::new(
            table,
            plan.filter.as_ref(),
            Vec::new(),
            &plan.order,
            pre,
        )?)
    } else {
        None
    };
    let (filter, access, order, ctx): (_, _, _, &dyn EvalContext) = match &resolved {
        Some(r) => (r.filter.as_ref(), &r.access, &r.order, &r.ctx),
        None => (
            residual_filter(
                plan.filter.as_ref(),
                plan.filter_implied,
                &plan.access,
                table,
                ctx,
            )?,
            &plan.access,
            &plan.order,
            ctx,
        ),
    };
    let mut deleted = 0u64;
    let mut fk = FkScope::new(plan.fk.as_ref(), ctx)?;
    let triggers = ctx.has_triggers(&table.def, TriggerEvent::Delete);
    for_each_target_row(
        txn,
        table,
        access,
        filter,
        order,
        limit,
        ctx,
        &mut |txn, pk, old, _| {
            delete_row(txn, table, pk, &old, triggers, fk.as_mut(), ctx)?;
            deleted += 1;
            Ok(())
        },
    )?;
    Ok(QueryResult::Ok {
        affected_rows: deleted,
        last_insert_id: 0,
        info: String::new(),
        warnings: 0,
    })
}

/// Deletes the locked row `old` stored at `pk`, with its BEFORE / AFTER
/// DELETE triggers (`triggers`) and foreign-key actions.
// DELETE IGNORE is accepted, but a child row's RESTRICT (1451) still fails
// the statement: the cascade runs after the row is gone, and the
// transaction has no per-row savepoint to take it back.
pub(crate) fn delete_row(
    txn: &mut Transaction,
    table: &Table,
    pk: Vec<u8>,
    old: &[Value],
    triggers: bool,
    fk: Option<&mut FkScope<'_>>,
    ctx: &dyn EvalContext,
) -> Result<()> {
    let def = &table.def;
    ctx.note_write(def, crate::catalog::perfschema::IoWrite::Delete, 1);
    if triggers {
        ctx.fire_triggers(
            txn,
            def,
            TriggerTiming::Before,
            TriggerEvent::Delete,
            Some(old),
            None,
        )?;
    }
    txn.delete(def.id, pk, index_keys(table, old));
    crate::exec::journal::log_delete(txn, table, old);
    if let Some(scope) = fk {
        foreign::on_parent_change(txn, scope, table, OldRow::Row(old), None, 0)?;
    }
    if triggers {
        ctx.fire_triggers(
            txn,
            def,
            TriggerTiming::After,
            TriggerEvent::Delete,
            Some(old),
            None,
        )?;
    }
    Ok(())
}
