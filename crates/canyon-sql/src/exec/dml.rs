//! Execution of plans inside one transaction.
//!
//! Reads come in two kinds, as in InnoDB:
//! - a **consistent read** (plain SELECT) reads the transaction's snapshot and
//!   takes no locks;
//! - a **locking read** (UPDATE, DELETE, SELECT ... FOR UPDATE / FOR SHARE, the
//!   duplicate-key check of INSERT) locks each row, then reads its latest
//!   committed version and re-checks the WHERE clause on it.
//!
//! Locking reads over a range first collect candidate primary keys from the
//! latest versions, then lock them one by one; above READ COMMITTED the range
//! read is locked too, so no row can be inserted into it until the
//! transaction ends (canyon-txn's `range_lock.rs`; `read`'s
//! `for_each_locked_row_numbered`). Writes that add a key register their
//! insert intention first.
//!
//! Lock keys: `b'r' ++ table id ++ pk` for a row, `b'u' ++ index id ++ index key`
//! for a unique-index value (so two inserts of the same unique value serialise).
//! (`b't'` is the transaction layer's own.)
//!
//! UPDATE / DELETE with ORDER BY visit rows in that order: straight from the
//! access path when it delivers the order (a primary-key prefix, scanned
//! backwards for DESC), else by locking every matching row, sorting and keeping
//! the first LIMIT (MySQL's filesort does the same and locks the same rows).
//! INSERT's duplicate handling (IGNORE, ON DUPLICATE KEY UPDATE, REPLACE) and the
//! affected-row arithmetic are described in the comment that opens the
//! INSERT / UPDATE / DELETE section below.
//!
//! Subqueries of a DML statement (the source of `INSERT ... SELECT`, the
//! uncorrelated subqueries of UPDATE / DELETE) run to completion before the
//! statement writes anything: a scan holds the transaction mutably, so nothing
//! can read in the middle of it, and reading first is also what makes
//! `INSERT INTO t SELECT ... FROM t` see only the rows that existed before it
//! (MySQL buffers the source in a temporary table for the same reason). Like
//! InnoDB, the source of `INSERT ... SELECT` is read with locks above READ
//! COMMITTED (a locking read: the latest committed rows); the subqueries of
//! UPDATE / DELETE, and joins, read the transaction's snapshot — InnoDB would
//! lock their rows too (docs/architecture/transactions.md lists the
//! differences).
//!
//! Files: `read` (consistent and locking reads), `insert` (INSERT and its
//! duplicate handling), `update` (UPDATE, DELETE); this file holds what they
//! share (statement effects, lock keys, the update of one row) and the
//! subqueries a DML statement runs before it writes. A table's stored key
//! and row format is `crate::catalog::rows`.

use super::insert::*;
use crate::catalog::rows::*;
use crate::catalog::Table;
use crate::exec::foreign::{self, FkScope};
use crate::expr::{
    subquery_key, EvalContext, Expr, SubqueryExpr, SubqueryKind, SubqueryRows, SubqueryRunner,
    WithSubqueries,
};
use crate::plan::access::{choose_access, Access};
use crate::plan::select::{select_plan, SelectPlan};
use crate::plan::{row_order, RowOrder};
use crate::types::result::QueryResult;
use crate::types::value::Value;
use canyon_common::{Error, Result};
use canyon_txn::{IndexId, IsolationLevel, ReadMode, Transaction};
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::Ordering as AtomicOrdering;

/// What a statement reports besides its result.
#[derive(Debug, Default)]
pub struct StatementEffects {
    /// First AUTO_INCREMENT value generated (LAST_INSERT_ID()).
    pub generated_id: Option<u64>,
    /// Warnings raised: (code, message).
    pub warnings: Vec<(u16, String)>,
}

/// Encodes the new version of the row stored at `pk` (locked). A statement
/// still running on a definition that an ADD COLUMN has since replaced
/// (`Table::superseded`) may meet a row written on the newer one, whose slots
/// it does not know: they are carried over, so the added columns keep their
/// values (see "Instant ADD / DROP COLUMN" in `crate::ddl::alter`).
pub(crate) fn encode_over(
    txn: &mut Transaction,
    table: &Table,
    pk: &[u8],
    row: &[Value],
) -> Result<Vec<u8>> {
    if !table.superseded.load(AtomicOrdering::Relaxed) {
        return Ok(encode_table_row(table, row));
    }
    let Some(stored) = txn.get(table.def.id, pk, ReadMode::Current)? else {
        return Ok(encode_table_row(table, row));
    };
    let mut slots = Vec::new();
    crate::types::encoding::decode_row(&stored, &mut slots)?;
    let width = table.def.physical_width();
    Ok(encode_table_row_with(
        table,
        row,
        slots.get(width..).unwrap_or(&[]),
    ))
}

/// Locks the row stored at `pk` for a write (or a locking read), unless a
/// table rewrite copies or replaced the table (see [`check_writable`]).
pub(crate) fn lock_row(txn: &mut Transaction, table: &Table, pk: &[u8]) -> Result<()> {
    check_writable(table)?;
    txn.lock(&row_lock_key(table, pk))
}

/// [`lock_row`] in `mode`: shared for FOR SHARE, SERIALIZABLE reads and a
/// foreign key's parent.
pub(crate) fn lock_row_in(
    txn: &mut Transaction,
    table: &Table,
    pk: &[u8],
    mode: canyon_txn::LockMode,
) -> Result<()> {
    check_writable(table)?;
    let key = row_lock_key(table, pk);
    match mode {
        canyon_txn::LockMode::Exclusive => txn.lock(&key),
        canyon_txn::LockMode::Shared => txn.lock_shared(&key),
    }
}

/// Called before every row write and locking read of `table`: while a
/// table rewrite copies it, fails at once with 1205 (the statement is rolled
/// back, the transaction goes on); once a rewrite has replaced it, with 1412
/// ER_TABLE_DEF_CHANGED: this statement planned against the old definition,
/// and a row it wrote to the old table would be lost. One atomic load when
/// no rewrite runs. (MySQL's ALGORITHM=COPY makes the write wait on its
/// metadata lock instead; why Canyon does not wait is in `crate::ddl`'s
/// `rewrite` module.)
pub(crate) fn check_writable(table: &Table) -> Result<()> {
    use crate::catalog::{REWRITE_FROZEN, REWRITE_OPEN};
    match table.rewrite.load(AtomicOrdering::SeqCst) {
        REWRITE_OPEN => Ok(()),
        REWRITE_FROZEN => Err(Error::LockWaitTimeout),
        _ => Err(table_def_changed()),
    }
}

/// Before a read through index `ix` at snapshot `at` (`None`: the latest
/// versions): 1412 when the index was made public after that snapshot was
/// taken, so that its back-fill may lack entries the snapshot would see
/// (`IndexDef::ready_since`). InnoDB fails such a read the same way.
pub(crate) fn check_index_ready(ix: &crate::catalog::IndexDef, at: Option<u64>) -> Result<()> {
    match at {
        Some(at) if ix.ready_since > at => Err(table_def_changed()),
        _ => Ok(()),
    }
}

/// 1412 ER_TABLE_DEF_CHANGED.
pub(crate) fn table_def_changed() -> Error {
    Error::Sql {
        code: 1412,
        sqlstate: *b"HY000",
        message: "Table definition has changed, please retry transaction".into(),
    }
}

pub(crate) fn row_lock_key(table: &Table, pk: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(5 + pk.len());
    k.push(b'r');
    k.extend_from_slice(&table.def.id.to_be_bytes());
    k.extend_from_slice(pk);
    k
}

/// The prefix every [`row_lock_key`] of `table` starts with: the writer
/// gate a bulk load closes (canyon_txn's `bulk.rs`).
pub(crate) fn row_lock_prefix(table: &Table) -> Vec<u8> {
    row_lock_key(table, &[])
}

pub(crate) fn unique_lock_key(index: IndexId, key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(5 + key.len());
    k.push(b'u');
    k.extend_from_slice(&index.to_be_bytes());
    k.extend_from_slice(key);
    k
}

/// Writes `new` over the locked row `old` stored at `pk`. When the primary key
/// changes the row moves: the new key is locked and must be free. Unique values
/// the row keeps are its own; only changed ones are checked. With `fk`, the
/// row's changed foreign keys must find their parents and children of its
/// changed referenced columns follow their constraints (`crate::exec::foreign`;
/// `depth` counts the cascades that led here). A failed check fails the
/// statement, which rolls back whatever was written.
pub(crate) fn write_update(
    txn: &mut Transaction,
    table: &Table,
    pk: Vec<u8>,
    old: OldRow<'_>,
    new: &[Value],
    fk: Option<&mut FkScope<'_>>,
    depth: usize,
) -> Result<()> {
    let def = &table.def;
    let old_keys = index_keys_by(table, |c| old.column(new, c));
    let new_keys = index_keys(table, new);
    // A table without a primary key keeps the row's hidden row id.
    let new_pk = if !table.hidden_pk()
        && def
            .primary_key
            .iter()
            .any(|&c| *old.column(new, c) != new[c])
    {
        primary_key(table, new)
    } else {
        pk.clone()
    };
    let bytes = encode_over(txn, table, &pk, new)?;
    let mut fk = fk;
    if let Some(scope) = fk.as_deref_mut() {
        foreign::check_parents(txn, scope, table, new, Some(old))?;
    }
    if new_pk != pk {
        lock_row(txn, table, &new_pk)?;
        if txn.get_locked(def.id, &new_pk)?.is_some() {
            return Err(pk_duplicate(table, new));
        }
        check_unique(txn, table, new, &new_pk, old)?;
        // The row moves: an insert intention for every key at its new place.
        txn.insert_intention(def.id, &new_pk, true, &new_keys)?;
        txn.delete(def.id, pk, old_keys);
        txn.put(def.id, new_pk, bytes, Vec::new(), new_keys);
    } else {
        check_unique(txn, table, new, &pk, old)?;
        // An insert intention for each index value the row moves to.
        if new_keys.iter().any(|k| !old_keys.contains(k)) {
            let added: Vec<(IndexId, Vec<u8>)> = new_keys
                .iter()
                .filter(|k| !old_keys.contains(k))
                .cloned()
                .collect();
            txn.insert_intention(def.id, &pk, false, &added)?;
        }
        txn.put(def.id, pk, bytes, old_keys, new_keys);
    }
    crate::exec::journal::log_update(txn, table, &|c| old.column(new, c).clone(), new);
    if let Some(scope) = fk {
        foreign::on_parent_update(txn, scope, table, old, new, depth)?;
    }
    Ok(())
}

/// [`coerce_column`](crate::expr::eval::coerce_column) for a value an INSERT
/// or UPDATE stores; under IGNORE a value MySQL's strict mode refuses (1366
/// incorrect value, 1406 too long, 1264 out of range) is stored adjusted
/// instead — the numeric prefix or zero, the string cut to the column, the
/// range's end, the zero date — with the warning MySQL gives for it
/// (`crate::exec::load::store_field`, which LOAD DATA uses alike).
pub(crate) fn store_column(
    v: Value,
    col: &crate::catalog::ColumnDef,
    rowno: u64,
    ctx: &dyn crate::expr::EvalContext,
    ignore: bool,
) -> Result<Value> {
    if !ignore {
        return crate::expr::eval::coerce_column(v, col, rowno, ctx);
    }
    let text = match &v {
        Value::Null => None,
        Value::Bytes(b) => Some(b.clone()),
        other => Some(other.to_display().into_bytes()),
    };
    match (crate::expr::eval::coerce_column(v, col, rowno, ctx), text) {
        (
            Err(
                Error::IncorrectValue { .. } | Error::DataTooLong { .. } | Error::OutOfRange { .. },
            ),
            Some(text),
        ) => {
            let (v, warning) = super::load::store_field(text, col.ty, &col.name, rowno);
            if let Some((code, message)) = warning {
                ctx.warn(code, &message);
            }
            Ok(v)
        }
        (r, _) => r,
    }
}

// ----------------------------------------------------------------------------------
// Subqueries of DML statements
// ----------------------------------------------------------------------------------

/// Runs a query whose rows feed a DML statement, to completion. `outer_len == 0`
/// marks the source of `INSERT ... SELECT`, which InnoDB reads with locks above
/// READ COMMITTED (a single-table source is then a locking read here too).
pub(crate) fn run_source(
    plan: &SelectPlan,
    txn: &mut Transaction,
    ctx: &dyn EvalContext,
) -> Result<Vec<Vec<Value>>> {
    let locking = plan.outer_len == 0
        && !matches!(
            txn.isolation(),
            IsolationLevel::ReadCommitted | IsolationLevel::ReadUncommitted
        );
    match crate::exec::select::run_select(plan, Some(txn), ctx, locking)? {
        QueryResult::Rows { rows, .. } => Ok(rows),
        QueryResult::Ok { .. } => Err(Error::Internal(
            "a subquery of a DML statement returned no result set".into(),
        )),
    }
}

/// The ORDER BY keys of an UPDATE / DELETE that sorts.
pub(crate) fn order_keys(order: &RowOrder) -> impl Iterator<Item = &Expr> {
    let keys = match order {
        RowOrder::Sort(keys) => keys.as_slice(),
        RowOrder::Any | RowOrder::Key { .. } => &[],
    };
    keys.iter().map(|(e, _)| e)
}

/// The rows of every subquery of an UPDATE / DELETE, read before its scan, and
/// the evaluation context that answers the subqueries from them.
pub(crate) type Prefetched<'a> = WithSubqueries<'a, PrefetchedRows>;

/// Subqueries' rows by [`subquery_key`].
pub(crate) struct PrefetchedRows(HashMap<usize, SubqueryRows>);

impl SubqueryRunner for PrefetchedRows {
    fn rows(ctx: &Prefetched<'_>, sq: &SubqueryExpr, _outer: &[Value]) -> Result<SubqueryRows> {
        ctx.state
            .0
            .get(&subquery_key(sq))
            .cloned()
            .ok_or_else(|| Error::Internal("a DML subquery was not run before the scan".into()))
    }
}

impl<'a> Prefetched<'a> {
    /// Runs each subquery of `exprs` once. The planner accepted only
    /// uncorrelated ones (`plan::check_subqueries`), so the enclosing row they
    /// would see does not matter: they run over a frame of NULLs.
    pub(crate) fn run(
        exprs: &[&Expr],
        txn: &mut Transaction,
        base: &'a dyn EvalContext,
    ) -> Result<Prefetched<'a>> {
        let mut found: Vec<SubqueryExpr> = Vec::new();
        for e in exprs {
            e.visit_columns(&mut |_| {}, &mut |sq| found.push(sq.clone()));
        }
        let mut rows = HashMap::new();
        for sq in found {
            if sq.correlated {
                return Err(Error::Unsupported(
                    "correlated subqueries in UPDATE and DELETE".into(),
                ));
            }
            if let Entry::Vacant(slot) = rows.entry(subquery_key(&sq)) {
                slot.insert(Rc::new(run_source(
                    select_plan(sq.plan.as_ref())?,
                    txn,
                    base,
                )?));
            }
        }
        Ok(Prefetched {
            base,
            state: PrefetchedRows(rows),
        })
    }

    /// `e` with each subquery replaced by its result where that is a constant
    /// expression: a scalar subquery of at most one row by its value (NULL for
    /// none), EXISTS by 0 / 1, `x IN (SELECT ...)` by `x IN (v1, v2, ...)` (row
    /// values for several columns) — which an access path can use. A scalar
    /// subquery of several rows stays, and fails with error 1242 only if it is
    /// evaluated, as in MySQL (no matching row, no error).
    pub(crate) fn substitute(&self, e: &Expr) -> Expr {
        e.rewrite(&|x| self.substitute_node(x))
    }

    pub(crate) fn substitute_node(&self, e: &Expr) -> Option<Expr> {
        let Expr::Subquery(sq) = e else {
            return None;
        };
        let rows = self.state.0.get(&subquery_key(sq))?;
        let first = |r: &Vec<Value>| r.first().cloned().unwrap_or(Value::Null);
        match &sq.kind {
            SubqueryKind::Scalar => match rows.as_slice() {
                [] => Some(Expr::Literal(Value::Null)),
                [r] => Some(Expr::Literal(first(r))),
                _ => None,
            },
            SubqueryKind::Row => match rows.as_slice() {
                [] => Some(Expr::Row(
                    (0..sq.plan.kinds().len())
                        .map(|_| Expr::Literal(Value::Null))
                        .collect(),
                )),
                [r] => Some(Expr::Row(r.iter().cloned().map(Expr::Literal).collect())),
                _ => None,
            },
            SubqueryKind::Exists(neg) => {
                Some(Expr::Literal(Value::Int((rows.is_empty() == *neg) as i64)))
            }
            // Over the empty set ALL is true and ANY false, whatever the left
            // operand; otherwise the comparison stays, answered from the rows.
            SubqueryKind::Quantified(_, _, all) if rows.is_empty() => {
                Some(Expr::Literal(Value::Int(*all as i64)))
            }
            SubqueryKind::Quantified(..) => None,
            // `x IN (empty)` is false and `x NOT IN (empty)` true even for a NULL
            // x, unlike an IN list; an empty IN list does not parse anyway.
            SubqueryKind::In(_, neg) if rows.is_empty() => {
                Some(Expr::Literal(Value::Int(*neg as i64)))
            }
            SubqueryKind::In(lhs, neg) => {
                let lhs: Vec<Expr> = lhs.iter().map(|x| self.substitute(x)).collect();
                Some(match <[Expr; 1]>::try_from(lhs) {
                    Ok([x]) => Expr::InList(
                        Box::new(x),
                        rows.iter().map(|r| Expr::Literal(first(r))).collect(),
                        *neg,
                    ),
                    Err(lhs) => Expr::InList(
                        Box::new(Expr::Row(lhs)),
                        rows.iter()
                            .map(|r| Expr::Row(r.iter().cloned().map(Expr::Literal).collect()))
                            .collect(),
                        *neg,
                    ),
                })
            }
        }
    }
}

/// An UPDATE / DELETE with its subqueries' results substituted, and the access
/// path and row order chosen on the result.
pub(crate) struct Resolved<'a> {
    pub(crate) ctx: Prefetched<'a>,
    pub(crate) filter: Option<Expr>,
    pub(crate) assignments: Vec<(usize, Expr)>,
    pub(crate) access: Access,
    pub(crate) order: RowOrder,
}

impl<'a> Resolved<'a> {
    /// `assignments` are already substituted.
    pub(crate) fn new(
        table: &Table,
        filter: Option<&Expr>,
        assignments: Vec<(usize, Expr)>,
        order: &RowOrder,
        ctx: Prefetched<'a>,
    ) -> Result<Resolved<'a>> {
        let filter = filter.map(|f| ctx.substitute(f));
        let access = choose_access(table, filter.as_ref());
        let order = match order {
            RowOrder::Any => RowOrder::Any,
            RowOrder::Key { reverse } => RowOrder::Key { reverse: *reverse },
            RowOrder::Sort(keys) => {
                let keys = keys.iter().map(|(e, d)| (ctx.substitute(e), *d)).collect();
                row_order(table, &access, keys)
            }
        };
        Ok(Resolved {
            ctx,
            filter,
            assignments,
            access,
            order,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::config::EngineConfig;
    use crate::catalog::engine::Engine;
    use crate::exec::read::no_row;
    use crate::expr::functions::Func;
    use crate::expr::{eval, Env};
    use crate::plan::access::KeyRanges;
    use crate::plan::{plan_delete, plan_update, PlanContext};
    use sqlparser::ast::Statement;
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::parser::Parser;
    use std::sync::Arc;

    /// Parameters, variables and session facts of a statement without any.
    struct NoSession;

    impl EvalContext for NoSession {
        fn params(&self) -> &[Value] {
            &[]
        }
        fn sys_var(&self, name: &str) -> Result<Value> {
            Err(Error::Internal(format!("no @@{name} in this test")))
        }
        fn user_var(&self, _name: &str) -> Value {
            Value::Null
        }
        fn session_fact(&self, _f: Func) -> Value {
            Value::Null
        }
        fn now(&self) -> chrono::NaiveDateTime {
            chrono::DateTime::UNIX_EPOCH.naive_utc()
        }
        fn warn(&self, _code: u16, _message: &str) {}
    }

    /// An engine with `d.t (id PRIMARY KEY, k)` and `d.w (k)`.
    fn engine() -> Arc<Engine> {
        let cfg = EngineConfig::for_unit_tests();
        let storage = Arc::new(canyon_storage::MemoryStorage::new());
        let engine = Engine::open(storage, cfg).expect("engine opens");
        engine.bootstrap_root("").expect("root account");
        let mut s = engine.session(1, "root", "localhost");
        for sql in [
            "CREATE DATABASE d",
            "USE d",
            "CREATE TABLE t (id INT PRIMARY KEY, k INT)",
            "CREATE TABLE w (k INT, n INT)",
        ] {
            let r = s.execute(sql, false).pop().expect("one result");
            assert!(r.is_ok(), "{sql}: {r:?}");
        }
        engine
    }

    fn parse(sql: &str) -> Statement {
        Parser::parse_sql(&MySqlDialect {}, sql)
            .expect("parses")
            .pop()
            .expect("one statement")
    }

    /// Fakes the rows every subquery of `exprs` returned.
    fn prefetched<'a>(
        exprs: &[&Expr],
        rows: Vec<Vec<Value>>,
        base: &'a NoSession,
    ) -> Prefetched<'a> {
        let rows = Rc::new(rows);
        let mut map = HashMap::new();
        for e in exprs {
            e.visit_columns(&mut |_| {}, &mut |sq| {
                map.insert(subquery_key(sq), rows.clone());
            });
        }
        Prefetched {
            base,
            state: PrefetchedRows(map),
        }
    }

    #[test]
    fn in_subquery_becomes_an_in_list_that_drives_point_reads() {
        let engine = engine();
        let cat = engine.catalog();
        let ctx = PlanContext::new(&cat, Some("d"), crate::types::collation::Collation::DEFAULT);
        let Statement::Delete(del) = parse("DELETE FROM t WHERE id IN (SELECT k FROM w)") else {
            panic!("not a DELETE");
        };
        let plan = plan_delete(&ctx, &del).expect("plans");
        assert!(plan.subqueries);
        assert!(
            plan.access.full_scan,
            "a subquery cannot drive the planned path"
        );
        let base = NoSession;
        let filter: Vec<&Expr> = plan.filter.iter().collect();
        let rows = vec![vec![Value::Int(3)], vec![Value::Int(1)]];
        let pre = prefetched(&filter, rows, &base);
        let r = Resolved::new(
            &plan.table,
            plan.filter.as_ref(),
            Vec::new(),
            &plan.order,
            pre,
        )
        .expect("resolves");
        assert!(
            matches!(&r.filter, Some(Expr::InList(_, list, false)) if list.len() == 2),
            "{:?}",
            r.filter
        );
        assert!(!r.access.full_scan, "{:?}", r.access);
        let (ranges, _) = r.access.key_ranges(&plan.table, &r.ctx).expect("ranges");
        assert!(
            matches!(&ranges, KeyRanges::Points(p) if p.len() == 2),
            "{ranges:?}"
        );
    }

    #[test]
    fn subquery_results_become_constants() {
        let engine = engine();
        let cat = engine.catalog();
        let ctx = PlanContext::new(&cat, Some("d"), crate::types::collation::Collation::DEFAULT);
        let Statement::Update(up) = parse(
            "UPDATE t SET k = (SELECT MAX(n) FROM w) WHERE EXISTS (SELECT 1 FROM w) \
             AND (id, k) NOT IN (SELECT k, n FROM w)",
        ) else {
            panic!("not an UPDATE");
        };
        let plan = plan_update(&ctx, &up).expect("plans");
        let base = NoSession;
        // No rows: the scalar is NULL, EXISTS false, NOT IN (empty) true.
        let exprs: Vec<&Expr> = plan
            .filter
            .iter()
            .chain(plan.assignments.iter().map(|(_, e)| e))
            .collect();
        let pre = prefetched(&exprs, Vec::new(), &base);
        assert_eq!(
            pre.substitute(&plan.assignments[0].1),
            Expr::Literal(Value::Null)
        );
        let filter = pre.substitute(plan.filter.as_ref().expect("a WHERE clause"));
        assert!(!filter.has_subquery(), "{filter:?}");
        assert_eq!(
            eval(&filter, &no_row(&base)).expect("evaluates"),
            Value::Int(0)
        );
        // Two rows: the scalar subquery stays, and fails only when evaluated.
        let two = vec![
            vec![Value::Int(1), Value::Int(2)],
            vec![Value::Int(3), Value::Int(4)],
        ];
        let pre = prefetched(&exprs, two, &base);
        let set = pre.substitute(&plan.assignments[0].1);
        assert!(set.has_subquery());
        assert!(matches!(
            eval(&set, &no_row(&pre)),
            Err(Error::SubqueryMoreThanOneRow)
        ));
        let filter = pre.substitute(plan.filter.as_ref().expect("a WHERE clause"));
        let row = [Value::Int(1), Value::Int(2)];
        let env = Env {
            row: &row,
            aggs: &[],
            ctx: &pre,
        };
        assert_eq!(eval(&filter, &env).expect("evaluates"), Value::Int(0));
    }

    #[test]
    fn refused_subqueries() {
        let engine = engine();
        let cat = engine.catalog();
        let ctx = PlanContext::new(&cat, Some("d"), crate::types::collation::Collation::DEFAULT);
        let update = |sql: &str| {
            let Statement::Update(up) = parse(sql) else {
                panic!("not an UPDATE");
            };
            plan_update(&ctx, &up).map(|_| ())
        };
        assert!(matches!(
            update("UPDATE t SET k = (SELECT MAX(k) FROM t)"),
            Err(Error::UpdateTableUsed(t)) if t == "t"
        ));
        assert!(matches!(
            update("UPDATE t AS x SET k = 1 WHERE id IN (SELECT k FROM w WHERE n IN (SELECT id FROM t))"),
            Err(Error::UpdateTableUsed(t)) if t == "x"
        ));
        // A correlated subquery: a one-table multi-table UPDATE, but not
        // with ORDER BY / LIMIT.
        assert!(update("UPDATE t SET k = (SELECT n FROM w WHERE w.k = t.id)").is_ok());
        assert!(matches!(
            update("UPDATE t SET k = (SELECT n FROM w WHERE w.k = t.id) LIMIT 1"),
            Err(Error::Unsupported(_))
        ));
        assert!(update("UPDATE t SET k = (SELECT m FROM (SELECT MAX(k) AS m FROM t) d)").is_ok());
    }
}
