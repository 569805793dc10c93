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

use crate::catalog::rows::{decode_table_row_columns, localize_row};
use crate::exec::analyze::{self, RunClock, StepTimer};
use crate::exec::dml::{check_writable, row_lock_key};
use crate::exec::{
    for_each_locked_row_dir, for_each_row, for_each_row_checked, no_row, residual_filter,
};
use crate::expr::{
    eval, eval_instant, eval_predicate, subquery_key, AggCall, AggFunc, Env, EvalContext, Expr,
    SubqueryExpr, SubqueryRows, SubqueryRunner, WithSubqueries,
};
use crate::plan::access::{KeyRanges, Target};
use crate::plan::eval_count;
use crate::plan::profile::{Profile, Slot};
use crate::plan::select::{select_plan, SelectPlan, SourceKind, Step};
use crate::types::decimal::Decimal;
use crate::types::encoding::encode_row;
use crate::types::result::QueryResult;
use crate::types::value::{collated, compare_as, sort_cmp_as, Value};
use canyon_common::{Error, Result};
use canyon_storage::KeyRange;
use canyon_txn::{IsolationLevel, LockMode as TxnLockMode, ReadMode, Reader, Transaction};
use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;
use std::rc::Rc;

/// An aggregate's running state.
pub(super) enum Acc {
    Count(i64),
    SumInt(i128, bool),
    SumDec(Decimal, bool),
    SumDbl(f64, bool),
    Min(Value),
    Max(Value),
    AvgDec(Decimal, i64),
    AvgDbl(f64, i64),
    /// GROUP_CONCAT: each kept row's ORDER BY key values and text.
    Concat(Vec<(Vec<Value>, Vec<u8>)>),
    /// JSON_ARRAYAGG's elements (`None` before the first row).
    JsonArray(Option<Vec<crate::types::json::Node>>),
    /// JSON_OBJECTAGG's members (`None` before the first row).
    JsonObject(Option<Vec<(String, crate::types::json::Node)>>),
}

/// The running state of a list of aggregates over one group (or, for the
/// window step, one frame: `crate::exec::window`).
pub(super) struct AggState {
    accs: Vec<Acc>,
    distinct: Vec<Option<HashSet<Vec<u8>>>>,
    first_row: Vec<Value>,
}

impl AggState {
    /// The state before any row.
    pub(super) fn new(aggs: &[AggCall], first_row: Vec<Value>) -> AggState {
        AggState {
            accs: aggs
                .iter()
                .map(|a| match a.func {
                    AggFunc::Count | AggFunc::CountStar => Acc::Count(0),
                    AggFunc::Sum => Acc::SumInt(0, false),
                    AggFunc::Min => Acc::Min(Value::Null),
                    AggFunc::Max => Acc::Max(Value::Null),
                    AggFunc::Avg => Acc::AvgDec(Decimal::ZERO, 0),
                    AggFunc::GroupConcat => Acc::Concat(Vec::new()),
                    AggFunc::JsonArrayAgg => Acc::JsonArray(None),
                    AggFunc::JsonObjectAgg => Acc::JsonObject(None),
                    // Window-only functions are never grouping aggregates
                    // (`crate::exec::window` evaluates them); a count keeps
                    // the match total.
                    AggFunc::RowNumber
                    | AggFunc::Rank
                    | AggFunc::DenseRank
                    | AggFunc::PercentRank
                    | AggFunc::CumeDist
                    | AggFunc::Ntile
                    | AggFunc::Lag
                    | AggFunc::Lead
                    | AggFunc::FirstValue
                    | AggFunc::LastValue
                    | AggFunc::NthValue => Acc::Count(0),
                })
                .collect(),
            distinct: aggs
                .iter()
                .map(|a| {
                    if a.distinct {
                        Some(HashSet::new())
                    } else {
                        None
                    }
                })
                .collect(),
            first_row,
        }
    }

    /// Adds the row `env` reads.
    pub(super) fn add(&mut self, aggs: &[AggCall], env: &Env<'_>) -> Result<()> {
        for (i, a) in aggs.iter().enumerate() {
            if self.add_json(i, a, env)?.is_some() {
                continue;
            }
            let v = match &a.arg {
                None => Value::Int(1),
                Some(e) => eval(e, env)?,
            };
            if v.is_null() {
                continue;
            }
            if let Some(set) = &mut self.distinct[i] {
                let one = std::slice::from_ref(&v);
                if !set.insert(encode_row(&collated(one, &[a.coll]))) {
                    continue;
                }
            }
            let acc = &mut self.accs[i];
            match acc {
                Acc::Count(n) => *n += 1,
                Acc::SumInt(s, seen) => match v {
                    Value::Int(x) => {
                        *s += x as i128;
                        *seen = true;
                    }
                    Value::UInt(x) => {
                        *s += x as i128;
                        *seen = true;
                    }
                    Value::Decimal(d) => {
                        *acc = Acc::SumDec(Decimal::from_i128_with_scale(*s, 0) + d, true)
                    }
                    other => *acc = Acc::SumDbl(*s as f64 + other.to_f64().unwrap_or(0.0), true),
                },
                Acc::SumDec(s, seen) => match v {
                    Value::Double(_) | Value::Bytes(_) => {
                        *acc =
                            Acc::SumDbl(s.to_f64().unwrap_or(0.0) + v.to_f64().unwrap_or(0.0), true)
                    }
                    other => {
                        *s += other.to_decimal().unwrap_or_default();
                        *seen = true;
                    }
                },
                Acc::SumDbl(s, seen) => {
                    *s += v.to_f64().unwrap_or(0.0);
                    *seen = true;
                }
                Acc::Min(m) => {
                    if m.is_null() || compare_as(&v, m, a.coll) == Some(Ordering::Less) {
                        *m = v;
                    }
                }
                Acc::Max(m) => {
                    if m.is_null() || compare_as(&v, m, a.coll) == Some(Ordering::Greater) {
                        *m = v;
                    }
                }
                Acc::AvgDec(s, n) => match v {
                    Value::Double(_) | Value::Bytes(_) => {
                        *acc = Acc::AvgDbl(
                            s.to_f64().unwrap_or(0.0) + v.to_f64().unwrap_or(0.0),
                            *n + 1,
                        )
                    }
                    other => {
                        *s += other.to_decimal().unwrap_or_default();
                        *n += 1;
                    }
                },
                Acc::AvgDbl(s, n) => {
                    *s += v.to_f64().unwrap_or(0.0);
                    *n += 1;
                }
                Acc::Concat(rows) => {
                    let keys = a
                        .order
                        .iter()
                        .map(|(e, _, _)| eval(e, env))
                        .collect::<Result<Vec<_>>>()?;
                    rows.push((keys, v.to_bytes().unwrap_or_default()));
                }
                // Added by `add_json`.
                Acc::JsonArray(_) | Acc::JsonObject(_) => {}
            }
        }
        Ok(())
    }

    /// GROUP_CONCAT's result: the texts in ORDER BY order (a stable sort,
    /// so equal keys keep the order the rows came in) joined by the
    /// separator, cut at `group_concat_max_len` bytes with MySQL's warning
    /// 1260; NULL when no row had a non-NULL value.
    fn concat(
        rows: &[(Vec<Value>, Vec<u8>)],
        a: &AggCall,
        ctx: &dyn EvalContext,
        group: usize,
    ) -> Value {
        if rows.is_empty() {
            return Value::Null;
        }
        let mut order: Vec<&(Vec<Value>, Vec<u8>)> = rows.iter().collect();
        if !a.order.is_empty() {
            order.sort_by(|x, y| {
                for (i, (_, desc, coll)) in a.order.iter().enumerate() {
                    let c = sort_cmp_as(&x.0[i], &y.0[i], *coll);
                    let c = if *desc { c.reverse() } else { c };
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                Ordering::Equal
            });
        }
        let mut out = Vec::new();
        for (i, (_, text)) in order.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(&a.separator);
            }
            out.extend_from_slice(text);
        }
        let max = ctx
            .sys_var("group_concat_max_len")
            .ok()
            .and_then(|v| v.to_i64())
            .unwrap_or(1024)
            .max(0) as usize;
        if out.len() > max {
            // Cut on a character boundary: the text is UTF-8.
            let mut cut = max;
            while cut > 0 && (out[cut] & 0xC0) == 0x80 {
                cut -= 1;
            }
            out.truncate(cut);
            ctx.warn(
                1260,
                &format!("Row {} was cut by GROUP_CONCAT()", group + 1),
            );
        }
        Value::Bytes(out)
    }

    /// JSON_ARRAYAGG / JSON_OBJECTAGG take NULLs (as JSON null), so they
    /// add apart from the others; `None` for any other aggregate.
    fn add_json(&mut self, i: usize, a: &AggCall, env: &Env<'_>) -> Result<Option<()>> {
        use crate::types::json::Node;
        use crate::types::value::sql_to_node;
        match (&mut self.accs[i], &a.arg) {
            (Acc::JsonArray(items), Some(e)) => {
                let v = eval(e, env)?;
                items.get_or_insert_with(Vec::new).push(sql_to_node(&v));
                Ok(Some(()))
            }
            (Acc::JsonObject(members), Some(Expr::Row(pair))) if pair.len() == 2 => {
                let k = eval(&pair[0], env)?;
                if k.is_null() {
                    return Err(Error::Sql {
                        code: 3158,
                        sqlstate: *b"22032",
                        message: "JSON documents may not contain NULL member names.".into(),
                    });
                }
                let v = eval(&pair[1], env)?;
                Node::object_set(
                    members.get_or_insert_with(Vec::new),
                    k.to_display(),
                    sql_to_node(&v),
                );
                Ok(Some(()))
            }
            _ => Ok(None),
        }
    }

    /// The aggregates' values over the rows added so far.
    pub(super) fn finish(
        &self,
        aggs: &[AggCall],
        ctx: &dyn EvalContext,
        group: usize,
    ) -> Vec<Value> {
        self.accs
            .iter()
            .zip(aggs)
            .map(|(acc, a)| match acc {
                Acc::Count(n) => Value::Int(*n),
                Acc::SumInt(s, seen) => {
                    if *seen {
                        Value::Decimal(Decimal::try_from_i128_with_scale(*s, 0).unwrap_or_default())
                    } else {
                        Value::Null
                    }
                }
                Acc::SumDec(s, seen) => {
                    if *seen {
                        // A sum of negative zeros (`-2.00 MOD 2`) is 0.00: MySQL
                        // adds to a positive zero.
                        Value::Decimal(if s.is_zero() { s.abs() } else { *s })
                    } else {
                        Value::Null
                    }
                }
                Acc::SumDbl(s, seen) => {
                    if *seen {
                        Value::Double(*s)
                    } else {
                        Value::Null
                    }
                }
                Acc::Min(m) | Acc::Max(m) => m.clone(),
                Acc::Concat(rows) => Self::concat(rows, a, ctx, group),
                Acc::JsonArray(items) => items.as_ref().map_or(Value::Null, |items| {
                    Value::Json(crate::types::json::Node::Array(items.clone()).encode())
                }),
                Acc::JsonObject(m) => m.as_ref().map_or(Value::Null, |m| {
                    Value::Json(crate::types::json::Node::Object(m.clone()).encode())
                }),
                Acc::AvgDec(s, n) => {
                    if *n == 0 {
                        Value::Null
                    } else {
                        let scale = s.scale() + 4;
                        // MySQL: AVG of a DECIMAL has the argument's scale + 4
                        // (div_precision_increment), rounded half away from zero.
                        let mut q = s.div_round(Decimal::from(*n), scale).unwrap_or(*s);
                        q.rescale(scale);
                        let _ = a;
                        Value::Decimal(q)
                    }
                }
                Acc::AvgDbl(s, n) => {
                    if *n == 0 {
                        Value::Null
                    } else {
                        Value::Double(*s / *n as f64)
                    }
                }
            })
            .collect()
    }
}

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

/// A materialised source: its rows, and a hash table on the step's keys.
struct Materialized {
    rows: Vec<Vec<Value>>,
    hash: Option<HashMap<Vec<u8>, Vec<usize>>>,
    /// The collation of each hash key (computed once, used by every probe).
    hash_colls: Vec<Option<crate::types::collation::Collation>>,
}

/// The nested-loop join of one block execution.
struct Join<'a, 'q> {
    plan: &'a SelectPlan,
    q: &'a QueryCtx<'q>,
    /// For EXPLAIN ANALYZE: this run's measurements.
    clock: Option<RunClock<'a>>,
}

/// The collation each hash-join key compares under (carried by its probe
/// expression; see `Expr::Collate`).
fn hash_collations(
    step: &crate::plan::select::Step,
) -> Vec<Option<crate::types::collation::Collation>> {
    step.hash_keys
        .iter()
        .map(|(_, e)| crate::expr::collation_of(e))
        .collect()
}

/// The hash key of a row of values; `None` when one is NULL (never equal).
/// Equal values under MySQL comparison within one kind class give equal keys;
/// the step filter re-checks every candidate, so extra matches are harmless.
fn hash_key(vals: &[Value]) -> Option<Vec<u8>> {
    let mut k = Vec::new();
    for v in vals {
        match v {
            Value::Null => return None,
            Value::Int(_) | Value::UInt(_) | Value::Decimal(_) => {
                let d = match v {
                    Value::Int(i) => Decimal::from(*i),
                    Value::UInt(u) => Decimal::from(*u),
                    // -0.00 joins 0: one key for both.
                    Value::Decimal(d) if d.is_zero() => Decimal::ZERO,
                    Value::Decimal(d) => *d,
                    _ => Decimal::ZERO,
                };
                k.push(1);
                k.extend_from_slice(d.normalize().to_string().as_bytes());
            }
            Value::Double(f) => match Decimal::from_f64(*f).filter(|d| d.to_f64() == Some(*f)) {
                Some(d) => {
                    k.push(1);
                    k.extend_from_slice(d.normalize().to_string().as_bytes());
                }
                None => {
                    k.push(2);
                    k.extend_from_slice(&(f + 0.0).to_bits().to_be_bytes());
                }
            },
            Value::Bytes(b) => {
                k.push(3);
                let end = b.iter().rposition(|c| *c != b' ').map_or(0, |p| p + 1);
                k.extend_from_slice(&b[..end]);
            }
            Value::Date(d) => {
                k.push(4);
                k.extend_from_slice(d.and_time(chrono::NaiveTime::MIN).to_string().as_bytes());
            }
            Value::DateTime(d) | Value::Stamp(crate::types::value::Stamp { local: d, .. }) => {
                k.push(4);
                k.extend_from_slice(d.to_string().as_bytes());
            }
            Value::Json(j) => {
                k.push(5);
                k.extend_from_slice(j);
            }
        }
        k.push(0);
    }
    Some(k)
}

impl Join<'_, '_> {
    fn reader(&self) -> Result<Reader<'_>> {
        self.q
            .state
            .reader
            .ok_or_else(|| Error::Internal("a table read without a transaction".into()))
    }

    /// Whether this block locks the rows it reads in a locking statement:
    /// it has a locking clause, or it is materialised for a block that locks.
    fn locks(&self) -> bool {
        self.plan.lock.locks() || self.q.state.inherited_lock.get() > 0
    }

    /// Runs `f` (the materialisation of a derived table or set operation)
    /// with this block's lock passed on to the blocks it runs.
    fn passing_lock<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let pass = self.q.state.locking.is_some() && self.locks();
        let n = &self.q.state.inherited_lock;
        if pass {
            n.set(n.get() + 1);
        }
        let r = f();
        if pass {
            n.set(n.get() - 1);
        }
        r
    }

    /// The reader this block reads `table` with and, when the block locks,
    /// where the lock keys of the rows it reads are recorded.
    fn table_reader(
        &self,
        table: &crate::catalog::Table,
    ) -> Result<(Reader<'_>, Option<Record<'_>>)> {
        match &self.q.state.locking {
            Some(l) if l.all_blocks || self.locks() => {
                check_writable(table)?;
                // The block's own clause; a block locking for another
                // (materialised for it) locks exclusively, and one locking
                // only because of SERIALIZABLE, shared.
                let mode = self.plan.lock.row_mode().unwrap_or(if self.locks() {
                    TxnLockMode::Exclusive
                } else {
                    TxnLockMode::Shared
                });
                let record = Record {
                    keys: l.read,
                    mode,
                    ranges: l.ranges,
                };
                Ok((l.reader, Some(record)))
            }
            None if self.plan.lock.locks() => {
                self.q.state.nested_lock.set(true);
                Err(Error::Internal(
                    "a nested locking read outside locking rounds".into(),
                ))
            }
            _ => Ok((self.reader()?, None)),
        }
    }

    /// The materialised rows of step `k`'s source.
    fn materialized(&self, k: usize, step: &Step, frame: &[Value]) -> Result<Rc<Materialized>> {
        let key = (self.plan as *const SelectPlan as usize, k);
        if let Some(m) = self.q.state.mats.borrow().get(&key) {
            return Ok(m.clone());
        }
        let src = &self.plan.sources[step.source];
        let started = std::time::Instant::now();
        let measured = |rows: &Vec<Vec<Value>>| {
            let p = self.q.state.profile;
            analyze::materialized(p, self.plan, k, rows.len(), started.elapsed());
        };
        let rows = match &src.kind {
            // LATERAL: run again over the sources bound before it; never
            // cached.
            SourceKind::Derived(d) if d.outer_len > 0 => {
                let rows = self.passing_lock(|| run_block(d, self.q, frame))?;
                measured(&rows);
                return Ok(Rc::new(self.materialize(step, rows)));
            }
            SourceKind::Derived(d) => self.passing_lock(|| run_block(d, self.q, &[]))?,
            SourceKind::WorkTable(w) => {
                let rows = self.q.state.work.borrow().get(&w.id).cloned();
                let rows = rows.map(|r| r.as_ref().clone()).unwrap_or_default();
                measured(&rows);
                // Never cached: the next round holds other rows.
                return Ok(Rc::new(self.materialize(step, rows)));
            }
            SourceKind::SetOp(sp) if sp.recursion.is_some() => self.recurse(sp)?,
            SourceKind::SetOp(sp) => {
                let mut operands = Vec::with_capacity(sp.operands.len());
                for o in &sp.operands {
                    operands.push(self.passing_lock(|| run_block(o, self.q, &[]))?);
                }
                sp.combine(operands)
            }
            SourceKind::System(sys) => {
                let pushed = sys.evaluate(&Env {
                    row: frame,
                    aggs: &[],
                    ctx: self.q,
                })?;
                self.q.system_rows(sys.table, &pushed)?
            }
            SourceKind::Table(t) => {
                let mut rows = Vec::new();
                let (ranges, _) = step.access.key_ranges_over(t, frame, self.q)?;
                self.read_ranges(t, step, ranges, src.needed.as_deref(), &mut |row| {
                    rows.push(std::mem::take(row));
                    Ok(true)
                })?;
                rows
            }
        };
        measured(&rows);
        let m = Rc::new(self.materialize(step, rows));
        self.q.state.mats.borrow_mut().insert(key, m.clone());
        Ok(m)
    }

    /// A recursive CTE's rows (see `crate::plan::recursive`): the seed,
    /// then rounds of the recursive blocks over the previous round's new
    /// rows until a round adds none, at most `cte_max_recursion_depth`
    /// rounds (3636). Each round checks for KILL QUERY and
    /// max_execution_time.
    #[inline(never)]
    fn recurse(&self, sp: &crate::plan::setop::SetOpPlan) -> Result<Vec<Vec<Value>>> {
        let rec = sp
            .recursion
            .ok_or_else(|| Error::Internal("a recursion without its plan".into()))?;
        let max = self
            .q
            .sys_var("cte_max_recursion_depth")?
            .to_i64()
            .unwrap_or(1000)
            .max(0) as u64;
        let mut seed = Vec::with_capacity(rec.first_recursive);
        for o in &sp.operands[..rec.first_recursive] {
            seed.push(run_block(o, self.q, &[])?);
        }
        let mut result = sp.combine(seed);
        let mut seen: HashSet<Vec<u8>> = HashSet::new();
        if !sp.all {
            seen.extend(result.iter().map(|r| sp.row_key(r)));
        }
        let mut work = result.clone();
        let mut round = 0u64;
        while !work.is_empty() {
            round += 1;
            if round > max {
                return Err(Error::CteMaxRecursionDepth(round));
            }
            self.q.check_interrupt()?;
            self.q
                .state
                .work
                .borrow_mut()
                .insert(rec.work, Rc::new(std::mem::take(&mut work)));
            let mut new = Vec::new();
            for o in &sp.operands[rec.first_recursive..] {
                new.extend(run_block(o, self.q, &[])?);
            }
            let mut new = sp.convert_rows(new);
            if !sp.all {
                new.retain(|r| seen.insert(sp.row_key(r)));
            }
            result.extend(new.iter().cloned());
            work = new;
        }
        self.q.state.work.borrow_mut().remove(&rec.work);
        Ok(result)
    }

    /// Materialised rows of a step: the rows, and the hash table on its
    /// hash keys when it has some.
    #[inline(never)]
    fn materialize(&self, step: &Step, rows: Vec<Vec<Value>>) -> Materialized {
        let hash_colls = hash_collations(step);
        let colls = &hash_colls;
        let hash = (!step.hash_keys.is_empty()).then(|| {
            let mut h: HashMap<Vec<u8>, Vec<usize>> = HashMap::new();
            for (i, r) in rows.iter().enumerate() {
                let vals: Vec<Value> = step
                    .hash_keys
                    .iter()
                    .map(|(c, _)| r.get(*c).cloned().unwrap_or(Value::Null))
                    .collect();
                if let Some(key) = hash_key(&collated(&vals, colls)) {
                    h.entry(key).or_default().push(i);
                }
            }
            h
        });
        Materialized {
            rows,
            hash,
            hash_colls,
        }
    }

    /// Reads the rows of `table` in `ranges` (through the step's target key),
    /// decoded, each passed to `f` (which may take the vector); `false` when `f`
    /// asked to stop.
    fn read_ranges(
        &self,
        table: &crate::catalog::Table,
        step: &Step,
        ranges: KeyRanges,
        needed: Option<&[bool]>,
        f: &mut dyn FnMut(&mut Vec<Value>) -> Result<bool>,
    ) -> Result<bool> {
        // Rows read, reported once per scan (performance_schema's
        // ROWS_EXAMINED and table I/O: `crate::catalog::perfschema::io`).
        let count = std::cell::Cell::new(0u64);
        let r = self.read_ranges_counted(table, step, ranges, needed, &count, f);
        if count.get() > 0 || step.access.full_scan {
            let joined = !self
                .plan
                .steps
                .first()
                .is_some_and(|s| std::ptr::eq(s, step));
            self.q.note_read(
                &table.def,
                super::read::io_index(&step.access),
                count.get(),
                joined,
            );
        }
        r
    }

    /// [`Self::read_ranges`], counting the rows read in `count`.
    fn read_ranges_counted(
        &self,
        table: &crate::catalog::Table,
        step: &Step,
        ranges: KeyRanges,
        needed: Option<&[bool]>,
        count: &std::cell::Cell<u64>,
        f: &mut dyn FnMut(&mut Vec<Value>) -> Result<bool>,
    ) -> Result<bool> {
        let (reader, record) = self.table_reader(table)?;
        let read = |pk: &[u8]| {
            count.set(count.get() + 1);
            if let Some(r) = record {
                r.keys.borrow_mut().push((row_lock_key(table, pk), r.mode));
            }
        };
        if let (
            Some(Record {
                ranges: Some(rr), ..
            }),
            KeyRanges::Ranges(list),
        ) = (record, &ranges)
        {
            // The whole of each range, also when the consumer stops early
            // (more than was read: safe, and rare on this path).
            let index = match step.access.target {
                Target::Primary => None,
                Target::Index(i) => Some(table.def.indexes[i].id),
            };
            let mut rr = rr.borrow_mut();
            rr.extend(list.iter().map(|r| (table.def.id, index, r.clone())));
        }
        let mut buf = Vec::new();
        let zone = self.q.time_zone();
        if let Some(m) = &step.fulltext {
            // Only the rows the FULLTEXT index finds for the search's words
            // (in primary-key order); the step's filter ranks each.
            let env = Env {
                row: &[],
                aggs: &[],
                ctx: self.q,
            };
            let against = match crate::expr::eval(&m.against, &env)? {
                Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
                Value::Null => String::new(),
                other => other.to_display(),
            };
            let search = QueryState::fulltext(self.q, m, &against)?;
            for pk in &search.candidates {
                self.q.check_interrupt()?;
                if let Some(bytes) = reader.get(table.def.id, pk)? {
                    read(pk);
                    decode_table_row_columns(table, &bytes, needed, &mut buf)?;
                    localize_row(&mut buf, &zone);
                    if !f(&mut buf)? {
                        return Ok(false);
                    }
                }
            }
            return Ok(true);
        }
        match ranges {
            KeyRanges::Empty => Ok(true),
            KeyRanges::Points(points) => {
                let mut seen = HashSet::new();
                for pk in points {
                    if !seen.insert(pk.clone()) {
                        continue;
                    }
                    self.q.check_interrupt()?;
                    if let Some(bytes) = reader.get(table.def.id, &pk)? {
                        read(&pk);
                        decode_table_row_columns(table, &bytes, needed, &mut buf)?;
                        localize_row(&mut buf, &zone);
                        if !f(&mut buf)? {
                            return Ok(false);
                        }
                    }
                }
                Ok(true)
            }
            KeyRanges::Ranges(list) => {
                let dedup = list.len() > 1;
                let mut seen: HashSet<Vec<u8>> = HashSet::new();
                let mut err = None;
                let mut go = true;
                for range in list {
                    let mut on_row = |pk: &[u8], bytes: &[u8]| -> ControlFlow<()> {
                        if dedup && !seen.insert(pk.to_vec()) {
                            return ControlFlow::Continue(());
                        }
                        read(pk);
                        let r = self
                            .q
                            .check_interrupt()
                            .and_then(|_| decode_table_row_columns(table, bytes, needed, &mut buf))
                            .and_then(|_| {
                                localize_row(&mut buf, &zone);
                                f(&mut buf)
                            });
                        match r {
                            Ok(true) => ControlFlow::Continue(()),
                            Ok(false) => {
                                go = false;
                                ControlFlow::Break(())
                            }
                            Err(e) => {
                                err = Some(e);
                                ControlFlow::Break(())
                            }
                        }
                    };
                    match step.access.target {
                        Target::Primary => reader.scan(table.def.id, &range, false, &mut on_row)?,
                        Target::Index(i) => reader.scan_index(
                            table.def.id,
                            table.def.indexes[i].id,
                            &range,
                            false,
                            &mut |_k, pk, bytes| on_row(pk, bytes),
                        )?,
                    }
                    if let Some(e) = err.take() {
                        return Err(e);
                    }
                    if !go {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
        }
    }

    /// Runs steps `k..end` for the current frame, then `emit`; `false`
    /// when the consumer needs no more rows. A LEFT JOIN step runs its
    /// inner side (steps up to its `group_end`) and NULL-extends it when no
    /// combination of rows got through.
    fn step(
        &self,
        k: usize,
        end: usize,
        frame: &mut Vec<Value>,
        emit: &mut dyn FnMut(&mut Vec<Value>) -> Result<bool>,
    ) -> Result<bool> {
        if k >= end {
            return emit(frame);
        }
        let step = &self.plan.steps[k];
        let joined = || {
            if let Some(c) = &self.clock {
                c.joined(k);
            }
        };
        if !step.left {
            return self.read_step(k, frame, &mut |frame| {
                joined();
                self.step(k + 1, end, frame, emit)
            });
        }
        let g = step.group_end;
        let mut matched = false;
        let go = self.read_step(k, frame, &mut |frame| {
            self.step(k + 1, g, frame, &mut |frame| {
                matched = true;
                if let Some(pf) = &step.post_filter {
                    let env = Env {
                        row: frame,
                        aggs: &[],
                        ctx: self.q,
                    };
                    if !eval_predicate(pf, &env)? {
                        return Ok(true);
                    }
                }
                joined();
                self.step(g, end, frame, emit)
            })
        })?;
        if go && !matched {
            for st in &self.plan.steps[k..g] {
                let src = &self.plan.sources[st.source];
                for v in &mut frame[src.offset..src.offset + src.width] {
                    *v = Value::Null;
                }
            }
            if let Some(pf) = &step.post_filter {
                let env = Env {
                    row: frame,
                    aggs: &[],
                    ctx: self.q,
                };
                if !eval_predicate(pf, &env)? {
                    return Ok(true);
                }
            }
            joined();
            return self.step(g, end, frame, emit);
        }
        Ok(go)
    }

    /// Reads step `k`'s candidate rows into the frame, each that passes the
    /// step's filter handed to `next`; `false` when `next` asked to stop.
    fn read_step(
        &self,
        k: usize,
        frame: &mut Vec<Value>,
        next: &mut dyn FnMut(&mut Vec<Value>) -> Result<bool>,
    ) -> Result<bool> {
        let step = &self.plan.steps[k];
        let src = &self.plan.sources[step.source];
        let (off, width) = (src.offset, src.width);
        let mut go = true;
        let timer = self.clock.as_ref().map(|_| StepTimer::start());
        let mut visit = |frame: &mut Vec<Value>| -> Result<bool> {
            // Materialised rows and hash probes loop without reading storage.
            self.q.check_interrupt()?;
            if let Some(t) = &timer {
                t.bound();
            }
            let env = Env {
                row: frame,
                aggs: &[],
                ctx: self.q,
            };
            if let Some(f) = &step.filter {
                if !eval_predicate(f, &env)? {
                    return Ok(true);
                }
            }
            match &timer {
                Some(t) => {
                    t.passed();
                    t.downstream(|| next(frame))
                }
                None => next(frame),
            }
        };
        if step.materialize {
            let m = self.materialized(k, step, frame)?;
            let bind = |frame: &mut Vec<Value>, row: &[Value]| {
                frame[off..off + width].clone_from_slice(row);
            };
            match &m.hash {
                Some(h) => {
                    let env = Env {
                        row: frame,
                        aggs: &[],
                        ctx: self.q,
                    };
                    let probe = step
                        .hash_keys
                        .iter()
                        .map(|(_, e)| eval(e, &env))
                        .collect::<Result<Vec<_>>>()?;
                    let probe = collated(&probe, &m.hash_colls);
                    if let Some(hits) = hash_key(&probe).and_then(|key| h.get(&key)) {
                        for &i in hits {
                            bind(frame, &m.rows[i]);
                            if !visit(frame)? {
                                go = false;
                                break;
                            }
                        }
                    }
                }
                None => {
                    for r in &m.rows {
                        bind(frame, r);
                        if !visit(frame)? {
                            go = false;
                            break;
                        }
                    }
                }
            }
        } else {
            let SourceKind::Table(table) = &src.kind else {
                return Err(Error::Internal("a derived table read by key".into()));
            };
            let (ranges, _) = step.access.key_ranges_over(table, frame, self.q)?;
            go = self.read_ranges(table, step, ranges, src.needed.as_deref(), &mut |row| {
                for (d, v) in frame[off..off + width].iter_mut().zip(row.drain(..)) {
                    *d = v;
                }
                visit(frame)
            })?;
        }
        if let (Some(clock), Some(t)) = (&self.clock, timer) {
            t.finish(clock, k);
        }
        Ok(go)
    }
}
