//! Multi-table UPDATE and DELETE: running the join `crate::plan::multi_dml`
//! planned, then writing each target's rows.
//!
//! # Order and atomicity
//! The join runs to completion before anything is written (as
//! `INSERT ... SELECT` does: a locking read of its single-table sources
//! above READ COMMITTED, a consistent read of the rest), so no write of the
//! statement changes what the join sees. Then each target, in the order the
//! FROM clause names them, has each distinct row the join met locked, read
//! at its latest version and rewritten or deleted once — however many join
//! rows it appears in, as MySQL does. A failing row fails the statement,
//! which the session rolls back whole: nothing is half-applied.
//!
//! # Which stored row a join row names
//! A target's columns in the join row make its primary key. A table without
//! one keeps a hidden row id the join does not carry: there every stored row
//! equal, column for column, to a row the join met is that row — two equal
//! rows join alike, so both are met or neither is.
//!
//! # Locking (a decision, written down)
//! Target rows are locked (exclusively) as they are written, and the write
//! applies to their latest committed version; the SET values are those the
//! join computed. InnoDB instead locks target rows while it reads the join,
//! so a row changed by another transaction between the join's read and the
//! lock is written with values computed from the version the join read
//! (REPEATABLE READ: the statement's snapshot). The other tables' rows are
//! read as `INSERT ... SELECT` reads its source (see above).

use super::{dml::*, update::*};
use crate::catalog::routines::TriggerEvent;
use crate::catalog::rows::{decode_table_row, localize_row, primary_key};
use crate::catalog::Table;
use crate::exec::foreign::FkScope;
use crate::expr::EvalContext;
use crate::plan::{DeletePlan, MultiTables, UpdatePlan};
use crate::types::result::QueryResult;
use crate::types::value::Value;
use canyon_common::Result;
use canyon_txn::Transaction;
use std::collections::HashSet;

/// What a target row is handed to: the transaction, its primary key, the
/// row at its latest version, and the (first) join row that met it.
type MetRow<'f> = dyn FnMut(&mut Transaction, Vec<u8>, Vec<Value>, &[Value]) -> Result<()> + 'f;

/// Visits, locked and at its latest version, each distinct stored row of
/// `table` that a join row met (its columns at `offset` in `rows`); rows an
/// outer join did not find (NULL primary key) and rows since deleted are
/// skipped.
fn for_each_met_row(
    txn: &mut Transaction,
    table: &Table,
    offset: usize,
    rows: &[Vec<Value>],
    ctx: &dyn EvalContext,
    f: &mut MetRow<'_>,
) -> Result<()> {
    let n = table.def.columns.len();
    let zone = ctx.time_zone();
    if !table.hidden_pk() {
        let mut seen: HashSet<Vec<u8>> = HashSet::new();
        for jr in rows {
            let cols = &jr[offset..offset + n];
            if table.def.primary_key.iter().any(|&c| cols[c].is_null()) {
                continue;
            }
            let pk = primary_key(table, cols);
            if !seen.insert(pk.clone()) {
                continue;
            }
            lock_row(txn, table, &pk)?;
            let Some(bytes) = txn.get_locked(table.def.id, &pk)? else {
                continue;
            };
            let mut row = Vec::new();
            decode_table_row(table, &bytes, &mut row)?;
            localize_row(&mut row, &zone);
            f(txn, pk, row, jr)?;
        }
        return Ok(());
    }
    let met: Vec<&Vec<Value>> = rows
        .iter()
        .filter(|jr| jr[offset..offset + n].iter().any(|v| !v.is_null()))
        .collect();
    if met.is_empty() {
        return Ok(());
    }
    let access = crate::plan::access::choose_access(table, None);
    crate::exec::for_each_locked_row(txn, table, &access, None, None, ctx, &mut |txn, pk, row| {
        match met.iter().find(|jr| jr[offset..offset + n] == row[..]) {
            Some(jr) => f(txn, pk, row, jr),
            None => Ok(()),
        }
    })
}

/// Runs a multi-table UPDATE. Affected rows, and the info line's counts,
/// add up over the targets.
pub(crate) fn run_multi_update(
    plan: &UpdatePlan,
    m: &MultiTables,
    txn: &mut Transaction,
    ctx: &dyn EvalContext,
    found_rows: bool,
    effects: &mut StatementEffects,
) -> Result<QueryResult> {
    let rows = run_source(&m.select, txn, ctx)?;
    let (mut matched, mut changed) = (0u64, 0u64);
    for t in &m.targets {
        if t.assignments.is_empty() {
            continue;
        }
        let mut up = RowUpdater::new(&t.table, plan.fk.as_ref(), plan.ignore, ctx)?;
        let columns: Vec<usize> = t.assignments.iter().map(|(c, _)| *c).collect();
        for_each_met_row(
            txn,
            &t.table,
            t.offset,
            &rows,
            ctx,
            &mut |txn, pk, row, jr| {
                let number = up.matched + 1;
                up.update(txn, pk, row, number, &columns, effects, &mut |k, _, _| {
                    Ok(jr[t.assignments[k].1].clone())
                })
            },
        )?;
        matched += up.matched;
        changed += up.changed;
    }
    Ok(QueryResult::Ok {
        affected_rows: if found_rows { matched } else { changed },
        last_insert_id: effects.generated_id.unwrap_or(0),
        info: format!(
            "Rows matched: {matched}  Changed: {changed}  Warnings: {}",
            effects.warnings.len()
        ),
        warnings: 0,
    })
}

/// Runs a multi-table DELETE: affected rows count the rows deleted from all
/// targets.
pub(crate) fn run_multi_delete(
    plan: &DeletePlan,
    m: &MultiTables,
    txn: &mut Transaction,
    ctx: &dyn EvalContext,
) -> Result<QueryResult> {
    let rows = run_source(&m.select, txn, ctx)?;
    let mut deleted = 0u64;
    for t in &m.targets {
        let mut fk = FkScope::new(plan.fk.as_ref(), ctx)?;
        let triggers = ctx.has_triggers(&t.table.def, TriggerEvent::Delete);
        for_each_met_row(
            txn,
            &t.table,
            t.offset,
            &rows,
            ctx,
            &mut |txn, pk, row, _| {
                delete_row(txn, &t.table, pk, &row, triggers, fk.as_mut(), ctx)?;
                deleted += 1;
                Ok(())
            },
        )?;
    }
    Ok(QueryResult::Ok {
        affected_rows: deleted,
        last_insert_id: 0,
        info: String::new(),
        warnings: 0,
    })
}
