//! Execution of SELECT plans (see [`crate::plan::select`] for their shape: frames,
//! join steps, subqueries).
//!
//! Two paths:
//! - the **single-table path** (the plan's `table` is set): the OLTP statement —
//!   one access path, rows decoded straight into the frame, locking reads
//!   supported; no reader indirection and nothing else on the hot path;
//! - the **general path**: joins, derived tables, subqueries. It reads through a
//!   [`Reader`] (a shared borrow of the transaction at the statement's snapshot),
//!   so a join's inner step and a correlated subquery can read while an outer
//!   scan is open. Uncorrelated subqueries run once per statement (cached by
//!   plan); correlated ones once per outer row.
//!
//! Both feed a `Collector`: grouping and aggregates, HAVING, DISTINCT, ORDER BY,
//! LIMIT/OFFSET, with an early stop when a streaming LIMIT is satisfied.
//!
//! EXPLAIN ANALYZE ([`run_select_analyzed`]) runs every plan on the general
//! path, whose join steps are the nodes EXPLAIN shows, and measures each step
//! into a profile (`crate::exec::analyze`); otherwise the profile is `None`
//! and a step pays one branch per row for it.
//!
//! # Locking reads on the general path
//! `SELECT ... FOR UPDATE` (or `FOR SHARE`, `LOCK IN SHARE MODE`) over a join,
//! a derived table or with subqueries locks every row its locking query block
//! reads from a base table, as InnoDB does; under SERIALIZABLE (`force_lock`)
//! every block of the statement locks. A [`Reader`] borrows the transaction
//! shared, so rows cannot be locked while the join reads them. Instead the
//! statement runs in rounds: each round reads the locking blocks at the latest
//! committed versions and records the lock key of every row they read; after
//! the round the rows not yet locked are locked (in key order), and if there
//! were any the statement runs again. A round that read only rows locked
//! before it started read versions no other transaction can change until
//! this one ends: its result is the answer, exactly what a lock-as-you-read
//! execution would have returned at that moment. Above READ COMMITTED the
//! key ranges the locking blocks scan are locked after the round too (row
//! locks shared for FOR SHARE and SERIALIZABLE, exclusive for FOR UPDATE), and
//! a round that scanned a range not locked before it began is not the answer
//! either, so no row can appear in a range between the answer and the end of
//! the transaction (canyon-txn's `range_lock.rs`). Each extra round locks at
//! least one more row or range, so a statement runs one round more than there
//! were batches of rows and ranges it had not locked: usually two.
//! Subqueries without a locking clause read the snapshot (MySQL: "a locking
//! read clause in an outer statement does not lock the rows of a table in a
//! nested subquery unless a locking read clause is also specified in the
//! subquery"). A derived table or set operation a locking block reads is
//! materialised with that block's lock passed on: MySQL merges a plain
//! derived table into the block and locks its rows with the block's, and
//! locking a union's operands is the safe reading of `... UNION ... FOR
//! UPDATE`.

mod aggregate;
mod join;

pub(super) use aggregate::AggState;
use join::{Join, Materialized};

use crate::catalog::rows::{decode_table_row_columns, localize_row};
use crate::exec::analyze::{self, RunClock, StepTimer};
use crate::exec::dml::{check_writable, row_lock_key};
use crate::exec::{
    for_each_locked_row_dir, for_each_row, for_each_row_checked, no_row, residual_filter,
};
use crate::expr::{
    eval, eval_instant, eval_predicate, subquery_key, Env, EvalContext, Expr, SubqueryExpr,
    SubqueryRows, SubqueryRunner, WithSubqueries,
};
use crate::plan::access::{KeyRanges, Target};
use crate::plan::eval_count;
use crate::plan::profile::{Profile, Slot};
use crate::plan::select::{select_plan, SelectPlan, SourceKind, Step};
use crate::types::encoding::encode_row;
use crate::types::result::QueryResult;
use crate::types::value::{collated, sort_cmp_as, Value};
use canyon_common::{Error, Result};
use canyon_storage::KeyRange;
use canyon_txn::{IsolationLevel, LockMode as TxnLockMode, ReadMode, Reader, Transaction};
use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;
use std::rc::Rc;

/// Runs a SELECT. `txn` is `None` for a SELECT that reads no table.
/// `force_lock` makes a single-table read a locking read (SERIALIZABLE).
pub fn run_select(
    plan: &SelectPlan,
    txn: Option<&mut Transaction>,
    ctx: &dyn EvalContext,
    force_lock: bool,
) -> Result<QueryResult> {
    run_select_with(plan, txn, ctx, force_lock, None)
}

/// [`run_select`] for EXPLAIN ANALYZE: every block runs on the general path
/// (whose steps are the nodes EXPLAIN shows), measured into `profile`.
pub fn run_select_analyzed(
    plan: &SelectPlan,
    txn: Option<&mut Transaction>,
    ctx: &dyn EvalContext,
    force_lock: bool,
    profile: &Profile,
) -> Result<QueryResult> {
    run_select_with(plan, txn, ctx, force_lock, Some(profile))
}

fn run_select_with(
    plan: &SelectPlan,
    txn: Option<&mut Transaction>,
    ctx: &dyn EvalContext,
    force_lock: bool,
    profile: Option<&Profile>,
) -> Result<QueryResult> {
    let single_table = plan.table.as_ref().filter(|_| profile.is_none());
    let rows = match (single_table, txn) {
        (Some(table), Some(txn)) => {
            let mut col = Collector::new(plan, ctx)?;
            let reverse = plan.order_from_access && plan.order_by.first().is_some_and(|o| o.1);
            // The WHERE clause each row read must pass: none when the key
            // ranges read already are the clause (`Access::implies`).
            let filter = residual_filter(
                plan.filter.as_ref(),
                plan.filter_implied,
                &plan.access,
                table,
                ctx,
            )?;
            if plan.lock.locks() || force_lock {
                // The helper checks the filter (unless implied) on the locked
                // version, so `keep` is given none.
                // A LIMIT the access order satisfies bounds what is locked:
                // `ORDER BY pk LIMIT 1 FOR UPDATE` locks one row, not the range.
                let lock_limit = stop_after(plan, ctx)?;
                // SERIALIZABLE's plain reads lock shared, as InnoDB's.
                let mode = plan.lock.row_mode().unwrap_or(TxnLockMode::Shared);
                for_each_locked_row_dir(
                    txn,
                    table,
                    &plan.access,
                    filter,
                    lock_limit,
                    reverse,
                    mode,
                    ctx,
                    &mut |_t, _pk, mut row| keep(None, ctx, &mut col, &mut row).map(|_| ()),
                )?;
                col.finish(ctx, &[])?
            } else if plan.order_from_access && plan.access.target != Target::Primary {
                // Index order, checked row by row; a misplaced row (see
                // `for_each_row_checked`) means: read again and sort.
                let mut misplaced = false;
                for_each_row_checked(
                    txn,
                    table,
                    &plan.access,
                    ReadMode::Snapshot,
                    reverse,
                    plan.needed.as_deref(),
                    ctx,
                    Some(&mut misplaced),
                    &mut |_pk, row| keep(filter, ctx, &mut col, row),
                )?;
                if misplaced {
                    let mut col = Collector::new(plan, ctx)?;
                    col.sort_anyway = true;
                    col.stop_after = None;
                    for_each_row(
                        txn,
                        table,
                        &plan.access,
                        ReadMode::Snapshot,
                        false,
                        plan.needed.as_deref(),
                        ctx,
                        &mut |_pk, row| keep(filter, ctx, &mut col, row),
                    )?;
                    col.finish(ctx, &[])?
                } else {
                    col.finish(ctx, &[])?
                }
            } else {
                for_each_row(
                    txn,
                    table,
                    &plan.access,
                    ReadMode::Snapshot,
                    reverse,
                    plan.needed.as_deref(),
                    ctx,
                    &mut |_pk, row| keep(filter, ctx, &mut col, row),
                )?;
                col.finish(ctx, &[])?
            }
        }
        (Some(_), None) => {
            return Err(Error::Internal(
                "SELECT from a table without a transaction".into(),
            ))
        }
        (None, Some(txn)) if plan.lock.locks() || force_lock => {
            run_locking_rounds(plan, txn, ctx, force_lock, profile)?
        }
        (None, mut txn) => {
            let (rows, nested_lock) = {
                let reader = match txn.as_deref_mut() {
                    Some(t) => Some(t.reader(ReadMode::Snapshot)?),
                    None if plan.sources.is_empty() && !plan.has_subqueries => None,
                    None => {
                        return Err(Error::Internal(
                            "SELECT from a table without a transaction".into(),
                        ))
                    }
                };
                let q = QueryCtx::new(ctx, reader, None, profile);
                (run_block(plan, &q, &[]), q.state.nested_lock.get())
            };
            match (txn, nested_lock) {
                // A subquery or derived table with a locking clause of its
                // own, found as it ran: nothing was locked yet; run again in
                // rounds.
                (Some(txn), true) => run_locking_rounds(plan, txn, ctx, false, profile)?,
                _ => rows?,
            }
        }
    };
    Ok(QueryResult::Rows {
        columns: plan.columns.clone(),
        rows,
        warnings: 0,
    })
}

/// Runs a locking SELECT on the general path in rounds until one reads only
/// rows locked before it began (the module doc, "Locking reads on the
/// general path"). `all_blocks`: every query block locks (SERIALIZABLE),
/// not only those with a locking clause.
fn run_locking_rounds(
    plan: &SelectPlan,
    txn: &mut Transaction,
    ctx: &dyn EvalContext,
    all_blocks: bool,
    profile: Option<&Profile>,
) -> Result<Vec<Vec<Value>>> {
    // Above READ COMMITTED the ranges read are locked too (range_lock.rs in
    // canyon-txn): a range is locked after the round that read it, so the
    // next round reads under it.
    let gaps = matches!(
        txn.isolation(),
        IsolationLevel::RepeatableRead | IsolationLevel::Serializable
    );
    loop {
        if let Some(p) = profile {
            // EXPLAIN ANALYZE shows the round that gives the answer.
            p.clear();
        }
        let read = RefCell::new(Vec::new());
        let ranges = RefCell::new(Vec::new());
        let rows = {
            let (snapshot, current) = txn.reader_pair()?;
            let locking = Locking {
                reader: current,
                all_blocks,
                read: &read,
                ranges: Some(&ranges),
            };
            run_block(
                plan,
                &QueryCtx::new(ctx, Some(snapshot), Some(locking), profile),
                &[],
            )?
        };
        let mut keys = read.into_inner();
        keys.retain(|(k, m)| !txn.holds_lock_in(k, *m));
        keys.sort_unstable();
        keys.dedup();
        let mut again = !keys.is_empty();
        for (key, mode) in &keys {
            match mode {
                TxnLockMode::Exclusive => txn.lock(key)?,
                TxnLockMode::Shared => txn.lock_shared(key)?,
            }
        }
        for (table, index, range) in ranges.into_inner() {
            again |= if gaps {
                // An epoch no count can have: a range not held before this
                // round asks for another round; one held already does not.
                txn.lock_range(table, index, &range, u64::MAX)?
            } else {
                // READ COMMITTED: wait for inserts in flight, lock nothing.
                txn.await_range_inserts(table, index, &range)?
            };
        }
        if !again {
            return Ok(rows);
        }
    }
}

/// The single-table path's per-row step: the WHERE clause (`None`: already
/// checked, or implied by the key ranges read), then the collector, which may
/// take values out of `row` (the caller decodes the next row over it).
fn keep(
    filter: Option<&Expr>,
    ctx: &dyn EvalContext,
    col: &mut Collector<'_>,
    row: &mut [Value],
) -> Result<bool> {
    if let Some(f) = filter {
        let env = Env {
            row,
            aggs: &[],
            ctx,
        };
        if !eval_predicate(f, &env)? {
            return Ok(true);
        }
    }
    col.add_taking(row, ctx)
}

/// [`Collector::takes`] for a plan.
fn takeable(plan: &SelectPlan) -> Vec<Option<usize>> {
    if plan.grouped {
        return vec![None; plan.projection.len()];
    }
    let mut reads: HashMap<usize, usize> = HashMap::new();
    for e in &plan.projection {
        e.visit_columns(&mut |c| *reads.entry(c).or_default() += 1, &mut |_| {});
    }
    plan.projection
        .iter()
        .map(|e| match e {
            Expr::Column(c) if reads.get(c) == Some(&1) => Some(*c),
            _ => None,
        })
        .collect()
}

/// LIMIT and OFFSET, evaluated (no LIMIT: `None`; no OFFSET: 0).
fn limit_offset(plan: &SelectPlan, ctx: &dyn EvalContext) -> Result<(Option<u64>, u64)> {
    let count = |e: &Option<crate::expr::Expr>| {
        e.as_ref()
            .map(|e| eval(e, &no_row(ctx)).and_then(eval_count))
            .transpose()
    };
    Ok((count(&plan.limit)?, count(&plan.offset)?.unwrap_or(0)))
}

/// The number of rows after which a scan may stop: LIMIT + OFFSET when the rows
/// come out in their final order with nothing grouped, deduplicated or sorted.
fn stop_after(plan: &SelectPlan, ctx: &dyn EvalContext) -> Result<Option<u64>> {
    let (limit, offset) = limit_offset(plan, ctx)?;
    Ok(stop_after_of(plan, limit, offset))
}

/// [`stop_after`] for evaluated LIMIT and OFFSET.
fn stop_after_of(plan: &SelectPlan, limit: Option<u64>, offset: u64) -> Option<u64> {
    let streaming = !plan.grouped
        && !plan.distinct
        && plan.windows().is_empty()
        && (plan.order_by.is_empty() || plan.order_from_access);
    limit
        .filter(|_| streaming)
        .map(|l| l.saturating_add(offset))
}

/// Whether a statement needs a transaction: it reads a table (directly, in a
/// derived table or in a subquery).
pub fn needs_transaction(plan: &SelectPlan) -> bool {
    plan.table.is_some() || !plan.sources.is_empty() || plan.has_subqueries
}

/// A row waiting for the window step: its frame and the values `Expr::Agg`
/// reads (the grouping aggregates' results, then one slot per window call,
/// which `crate::exec::window::evaluate` fills).
pub(super) struct Staged {
    /// The frame (for a group: its first row).
    pub(super) row: Vec<Value>,
    /// Aggregate values, window results last.
    pub(super) aggs: Vec<Value>,
}

/// Grouping, aggregation, HAVING, DISTINCT, ORDER BY and LIMIT over the frames
/// that passed the WHERE clause.
struct Collector<'p> {
    plan: &'p SelectPlan,
    limit: Option<u64>,
    offset: u64,
    /// Stop after this many rows (a LIMIT that needs no sorting or grouping).
    stop_after: Option<u64>,
    out: Vec<Vec<Value>>,
    groups: HashMap<Vec<u8>, usize>,
    states: Vec<AggState>,
    /// Sort although the plan expects the access path's order (its rows came
    /// out of order).
    sort_anyway: bool,
    /// Per projection entry, the frame column [`Collector::add_taking`] may move
    /// out instead of copying: a plain column that no other entry reads, in a
    /// plan that keeps no frame (not grouped).
    takes: Vec<Option<usize>>,
    /// With window functions: the rows (frames, or groups' first rows with
    /// their aggregates) kept for the window step, projected after it.
    staged: Vec<Staged>,
    /// For EXPLAIN ANALYZE: where the stages' row counts go.
    profile: Option<&'p Profile>,
}

impl<'p> Collector<'p> {
    fn new(plan: &'p SelectPlan, ctx: &dyn EvalContext) -> Result<Collector<'p>> {
        let (limit, offset) = limit_offset(plan, ctx)?;
        Ok(Collector {
            plan,
            limit,
            offset,
            stop_after: stop_after_of(plan, limit, offset),
            out: Vec::new(),
            groups: HashMap::new(),
            states: Vec::new(),
            sort_anyway: false,
            takes: takeable(plan),
            staged: Vec::new(),
            profile: None,
        })
    }

    /// [`Collector::add`] for a frame the caller is done with: projected
    /// columns are moved out of it (left NULL) rather than copied.
    fn add_taking(&mut self, frame: &mut [Value], ctx: &dyn EvalContext) -> Result<bool> {
        if self.plan.grouped
            || !self.plan.windows().is_empty()
            || self.takes.iter().all(Option::is_none)
        {
            return self.add(frame, ctx);
        }
        let Some(mut row) = self.project(frame, ctx, &self.takes)? else {
            return Ok(true);
        };
        for (slot, take) in row.iter_mut().zip(&self.takes) {
            if let Some(v) = take.and_then(|c| frame.get_mut(c)) {
                *slot = std::mem::replace(v, Value::Null);
            }
        }
        Ok(self.push(row))
    }

    /// An ungrouped frame's output row, `None` when HAVING drops it. Entries
    /// marked in `skip` (missing entries: none) are left NULL for the caller
    /// to fill.
    fn project(
        &self,
        frame: &[Value],
        ctx: &dyn EvalContext,
        skip: &[Option<usize>],
    ) -> Result<Option<Vec<Value>>> {
        let plan = self.plan;
        let env = Env {
            row: frame,
            aggs: &[],
            ctx,
        };
        if let Some(h) = &plan.having {
            // HAVING without grouping filters rows (a MySQL extension); output
            // aliases in it are bound as their expressions, so the frame suffices.
            if !eval_predicate(h, &env)? {
                return Ok(None);
            }
        }
        let mut row = Vec::with_capacity(plan.projection.len());
        for (i, e) in plan.projection.iter().enumerate() {
            row.push(match skip.get(i) {
                Some(Some(_)) => Value::Null,
                // A TIMESTAMP column keeps its instant until `finish`: ORDER
                // BY and DISTINCT order and compare it by instant, as MySQL
                // does by its stored value (the two readings of a repeated
                // autumn hour are two values).
                _ => eval_instant(e, &env)?,
            });
        }
        Ok(Some(row))
    }

    /// Keeps an output row; `false` when no more are needed.
    fn push(&mut self, row: Vec<Value>) -> bool {
        self.out.push(row);
        self.stop_after.is_none_or(|w| (self.out.len() as u64) < w)
    }

    /// Takes one frame that passed the filters; `false` when no more are needed.
    fn add(&mut self, frame: &[Value], ctx: &dyn EvalContext) -> Result<bool> {
        let plan = self.plan;
        let env = Env {
            row: frame,
            aggs: &[],
            ctx,
        };
        if plan.grouped && plan.group_by.is_empty() {
            // One group (an aggregate over all rows): no key to build or hash.
            if self.states.is_empty() {
                self.states
                    .push(AggState::new(plan.group_aggs(), frame.to_vec()));
            }
            self.states[0].add(plan.group_aggs(), &env)?;
            return Ok(true);
        }
        if plan.grouped {
            let vals = plan
                .group_by
                .iter()
                .map(|e| eval(e, &env))
                .collect::<Result<Vec<_>>>()?;
            let key = encode_row(&collated(&vals, &plan.group_colls));
            let idx = match self.groups.get(&key) {
                Some(&i) => i,
                None => {
                    self.states
                        .push(AggState::new(plan.group_aggs(), frame.to_vec()));
                    self.groups.insert(key, self.states.len() - 1);
                    self.states.len() - 1
                }
            };
            self.states[idx].add(plan.group_aggs(), &env)?;
            return Ok(true);
        }
        if !plan.windows().is_empty() {
            // HAVING without grouping filters rows (see `project`); the
            // select list waits for the window step.
            if let Some(h) = &plan.having {
                if !eval_predicate(h, &env)? {
                    return Ok(true);
                }
            }
            self.staged.push(Staged {
                row: frame.to_vec(),
                aggs: Vec::new(),
            });
            return Ok(true);
        }
        Ok(match self.project(frame, ctx, &[])? {
            Some(row) => self.push(row),
            None => true,
        })
    }

    /// The result rows. `outer` is the enclosing frame (for the one row of an
    /// aggregate over no rows).
    fn finish(mut self, ctx: &dyn EvalContext, outer: &[Value]) -> Result<Vec<Vec<Value>>> {
        let plan = self.plan;
        if plan.grouped {
            if self.states.is_empty() && plan.group_by.is_empty() {
                let mut frame = outer.to_vec();
                frame.resize(plan.frame_len.max(outer.len()), Value::Null);
                self.states.push(AggState::new(plan.group_aggs(), frame));
            }
            analyze::stage(self.profile, plan, Slot::Groups, self.states.len());
            for (group, st) in self.states.iter().enumerate() {
                let aggs = st.finish(plan.group_aggs(), ctx, group);
                let env = Env {
                    row: &st.first_row,
                    aggs: &aggs,
                    ctx,
                };
                if let Some(h) = &plan.having {
                    if !eval_predicate(h, &env)? {
                        continue;
                    }
                }
                if !plan.windows().is_empty() {
                    self.staged.push(Staged {
                        row: st.first_row.clone(),
                        aggs,
                    });
                    continue;
                }
                let row = plan
                    .projection
                    .iter()
                    .map(|e| eval(e, &env))
                    .collect::<Result<Vec<_>>>()?;
                self.out.push(row);
            }
        }
        if !plan.windows().is_empty() {
            // The window step, then the select list over its results.
            let staged =
                crate::exec::window::evaluate(plan, std::mem::take(&mut self.staged), ctx)?;
            for s in &staged {
                let env = Env {
                    row: &s.row,
                    aggs: &s.aggs,
                    ctx,
                };
                let row = plan
                    .projection
                    .iter()
                    .map(|e| {
                        if plan.grouped {
                            eval(e, &env)
                        } else {
                            eval_instant(e, &env)
                        }
                    })
                    .collect::<Result<Vec<_>>>()?;
                self.out.push(row);
            }
        }
        let mut out = self.out;
        analyze::stage(self.profile, plan, Slot::Having, out.len());
        let sort = !plan.order_by.is_empty() && (!plan.order_from_access || self.sort_anyway);
        let order_cmp = |a: &Vec<Value>, b: &Vec<Value>| {
            for &(pos, desc) in &plan.order_by {
                let coll = plan.colls.get(pos).copied().flatten();
                let o = sort_cmp_as(&a[pos], &b[pos], coll);
                if o != Ordering::Equal {
                    return if desc { o.reverse() } else { o };
                }
            }
            Ordering::Equal
        };
        // DISTINCT ... ORDER BY over exactly the select list (sysbench's
        // `SELECT DISTINCT c ... ORDER BY c`): sort first, then only runs of
        // rows that sort equal can hold duplicates — hash within those runs,
        // not every row (no sort key built for a distinct value).
        let sorted_distinct = plan.distinct
            && sort
            && plan.order_by.iter().all(|o| o.0 < plan.visible)
            && (0..plan.visible).all(|i| plan.order_by.iter().any(|o| o.0 == i));
        if plan.distinct && !sorted_distinct {
            let mut seen = HashSet::new();
            out.retain(|r| seen.insert(encode_row(&collated(&r[..plan.visible], &plan.colls))));
        }
        if sort {
            ctx.check_interrupt()?;
            out.sort_by(order_cmp);
        }
        if sorted_distinct {
            let mut kept: Vec<Vec<Value>> = Vec::with_capacity(out.len());
            let mut run_start = 0;
            let mut seen = HashSet::new();
            for r in out {
                if kept.len() > run_start && order_cmp(&kept[run_start], &r) != Ordering::Equal {
                    run_start = kept.len();
                    seen.clear();
                }
                if kept.len() == run_start {
                    // First of a run: nothing before it can equal it.
                    kept.push(r);
                    continue;
                }
                if seen.is_empty() {
                    let first = &kept[run_start];
                    seen.insert(encode_row(&collated(&first[..plan.visible], &plan.colls)));
                }
                if seen.insert(encode_row(&collated(&r[..plan.visible], &plan.colls))) {
                    kept.push(r);
                }
            }
            out = kept;
        }
        analyze::stage(self.profile, plan, Slot::Distinct, out.len());
        let start = (self.offset as usize).min(out.len());
        let end = match self.limit {
            Some(l) => start.saturating_add(l as usize).min(out.len()),
            None => out.len(),
        };
        let mut rows: Vec<Vec<Value>> = out.drain(start..end).collect();
        if plan.projection.len() > plan.visible {
            for r in &mut rows {
                r.truncate(plan.visible);
            }
        }
        // Results carry TIMESTAMPs as their session-local times.
        for r in &mut rows {
            for v in r.iter_mut() {
                if matches!(v, Value::Stamp(_)) {
                    *v = std::mem::replace(v, Value::Null).local();
                }
            }
        }
        // DECIMAL results leave at their declared scale: a quotient carries
        // extra digits inside expressions (see `expr::arithmetic`).
        let scales: Vec<(usize, u32)> = plan
            .kinds
            .iter()
            .enumerate()
            .filter_map(|(i, k)| match k {
                crate::types::ExprKind::Decimal(s) => Some((i, *s as u32)),
                _ => None,
            })
            .collect();
        if !scales.is_empty() {
            for r in &mut rows {
                for &(i, s) in &scales {
                    if let Some(Value::Decimal(d)) = r.get_mut(i) {
                        if d.scale() > s {
                            *d = d.round_dp_with_strategy(
                                s,
                                crate::types::decimal::RoundingStrategy::MidpointAwayFromZero,
                            );
                        }
                    }
                }
            }
        }
        Ok(rows)
    }
}

// ----------------------------------------------------------------------------------
// The general path
// ----------------------------------------------------------------------------------

/// The evaluation context of the general path: the statement's context plus
/// the reader subqueries run with, and the per-statement cache of uncorrelated
/// subqueries' rows.
struct QueryState<'a> {
    reader: Option<Reader<'a>>,
    /// Set for a locking statement on the general path.
    locking: Option<Locking<'a>>,
    /// Set for EXPLAIN ANALYZE: where the blocks' measurements go.
    profile: Option<&'a Profile>,
    /// A block with a locking clause ran without `locking` (a subquery's
    /// own FOR UPDATE in a SELECT that has none): the statement stops and
    /// runs again in locking rounds.
    nested_lock: std::cell::Cell<bool>,
    /// How many derived tables or set operations of locking blocks are
    /// being materialised: their blocks lock too (MySQL merges a plain
    /// derived table into the block that reads it, so its rows are locked
    /// with that block's; Canyon materialises it, so it passes the lock on).
    inherited_lock: std::cell::Cell<u32>,
    cache: RefCell<HashMap<usize, SubqueryRows>>,
    /// Materialised join steps by (plan address, step): they depend on no
    /// frame value, so one read serves every run of a correlated subquery.
    mats: RefCell<HashMap<(usize, usize), Rc<Materialized>>>,
    /// MATCH searches by (index id, mode, search string): one set of
    /// statistics per statement (`crate::exec::fulltext`).
    searches: RefCell<FulltextSearches>,
    /// The rows each running recursive CTE's work table holds this round,
    /// by work table id (see `crate::plan::recursive`).
    work: RefCell<HashMap<usize, Rc<Vec<Vec<Value>>>>>,
}

type FulltextSearches =
    HashMap<(canyon_txn::IndexId, bool, String), Rc<crate::types::fulltext::Search>>;

/// How a locking statement's locking blocks read (see the module doc).
struct Locking<'a> {
    /// At the latest committed versions (and the transaction's own writes).
    reader: Reader<'a>,
    /// Every block locks (SERIALIZABLE), not only those with a locking clause.
    all_blocks: bool,
    /// The row lock key of every row a locking block read this round, with
    /// the mode the block locks in.
    read: &'a RefCell<Vec<(Vec<u8>, TxnLockMode)>>,
    /// The key ranges locking blocks scanned this round (table, index or
    /// `None` for the primary key, range).
    ranges: Option<&'a RefCell<Vec<RangeRead>>>,
}

/// A key range a locking block scanned: (table, index or `None` for the
/// primary key, range).
type RangeRead = (canyon_txn::TableId, Option<canyon_txn::IndexId>, KeyRange);

/// Where a locking block records what it reads (see [`Locking`]).
#[derive(Clone, Copy)]
struct Record<'a> {
    keys: &'a RefCell<Vec<(Vec<u8>, TxnLockMode)>>,
    mode: TxnLockMode,
    ranges: Option<&'a RefCell<Vec<RangeRead>>>,
}

type QueryCtx<'a> = WithSubqueries<'a, QueryState<'a>>;

impl<'a> QueryCtx<'a> {
    fn new(
        base: &'a dyn EvalContext,
        reader: Option<Reader<'a>>,
        locking: Option<Locking<'a>>,
        profile: Option<&'a Profile>,
    ) -> QueryCtx<'a> {
        QueryCtx {
            base,
            state: QueryState {
                reader,
                locking,
                profile,
                nested_lock: std::cell::Cell::new(false),
                inherited_lock: std::cell::Cell::new(0),
                cache: RefCell::new(HashMap::new()),
                mats: RefCell::new(HashMap::new()),
                searches: RefCell::new(HashMap::new()),
                work: RefCell::new(HashMap::new()),
            },
        }
    }
}

impl SubqueryRunner for QueryState<'_> {
    fn rows(ctx: &QueryCtx<'_>, sq: &SubqueryExpr, outer: &[Value]) -> Result<SubqueryRows> {
        let key = subquery_key(sq);
        if !sq.correlated {
            if let Some(rows) = ctx.state.cache.borrow().get(&key) {
                return Ok(rows.clone());
            }
        }
        let rows = Rc::new(run_block(select_plan(sq.plan.as_ref())?, ctx, outer)?);
        if !sq.correlated {
            ctx.state.cache.borrow_mut().insert(key, rows.clone());
        }
        Ok(rows)
    }

    fn fulltext(
        ctx: &QueryCtx<'_>,
        m: &crate::expr::MatchExpr,
        against: &str,
    ) -> Result<Rc<crate::types::fulltext::Search>> {
        let id = m.table.def.indexes[m.index].id;
        let key = (
            id,
            m.mode == crate::types::fulltext::Mode::Boolean,
            against.to_string(),
        );
        if let Some(s) = ctx.state.searches.borrow().get(&key) {
            return Ok(s.clone());
        }
        let reader = ctx
            .state
            .reader
            .as_ref()
            .ok_or_else(|| Error::Internal("MATCH ... AGAINST without a reader".into()))?;
        let search = Rc::new(crate::exec::fulltext::search(reader, m, against)?);
        ctx.state.searches.borrow_mut().insert(key, search.clone());
        Ok(search)
    }
}

/// Runs one query block over the enclosing frame `outer`.
fn run_block(plan: &SelectPlan, q: &QueryCtx<'_>, outer: &[Value]) -> Result<Vec<Vec<Value>>> {
    match q.state.profile {
        None => run_block_measured(plan, q, outer, None),
        Some(p) => analyze::block(p, plan, || run_block_measured(plan, q, outer, Some(p))),
    }
}

/// [`run_block`], its join steps measured into `profile` when there is one.
fn run_block_measured(
    plan: &SelectPlan,
    q: &QueryCtx<'_>,
    outer: &[Value],
    profile: Option<&Profile>,
) -> Result<Vec<Vec<Value>>> {
    let mut col = Collector::new(plan, q)?;
    col.profile = profile;
    if plan.order_from_access {
        // A single-table block planned to take its ORDER BY from the access
        // path (a derived table, an operand of a set operation) but run here:
        // the join steps read forward and without `run_select`'s misplaced-row
        // check, so sort, and read everything before the LIMIT applies.
        // (`(SELECT a FROM t ORDER BY a DESC LIMIT 1)` as a derived table
        // returned the smallest `a` before this.)
        col.sort_anyway = true;
        col.stop_after = None;
    }
    let mut frame = Vec::with_capacity(plan.frame_len);
    frame.extend_from_slice(&outer[..plan.outer_len.min(outer.len())]);
    frame.resize(plan.frame_len, Value::Null);
    let pass = match &plan.pre_filter {
        Some(f) => eval_predicate(
            f,
            &Env {
                row: &frame,
                aggs: &[],
                ctx: q,
            },
        )?,
        None => true,
    };
    if pass {
        let join = Join {
            plan,
            q,
            clock: profile.map(|p| RunClock::new(p, plan)),
        };
        join.step(0, plan.steps.len(), &mut frame, &mut |f| col.add(f, q))?;
        if let Some(clock) = join.clock {
            clock.finish();
        }
    }
    col.finish(q, &frame[..plan.outer_len])
}
