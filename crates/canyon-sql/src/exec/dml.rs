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
//! latest versions, then lock them one by one. There are no gap or next-key locks:
//! a row inserted into the range after the collection is not seen (a phantom that
//! InnoDB's next-key locks would prevent) — see docs/architecture/transactions.md.
//!
//! Lock keys: `b'r' ++ table id ++ pk` for a row, `b'u' ++ index id ++ index key`
//! for a unique-index value (so two inserts of the same unique value serialise).
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

use crate::catalog::Table;
use crate::exec::foreign::{self, FkScope};
use crate::expr::functions::Func;
use crate::expr::{
    eval, eval_predicate, subquery_key, Env, EvalContext, Expr, SubqueryExpr, SubqueryKind,
    SubqueryRows, SubqueryRunner, WithSubqueries,
};
use crate::plan::access::{choose_access, Access, KeyRanges, Target};
use crate::plan::select::SelectPlan;
use crate::plan::{
    eval_count, row_order, DeletePlan, InsertPlan, OnDuplicate, RowOrder, UpdatePlan,
};
use crate::types::collation::Collation;
use crate::types::encoding::{decode_row_columns, encode_key_value, encode_row};
use crate::types::result::QueryResult;
use crate::types::value::{compare_as, sort_cmp_as, Value};
use crate::types::{coerce, SqlType};
use canyon_common::{Error, Result};
use canyon_storage::KeyRange;
use canyon_txn::{IndexId, IsolationLevel, ReadMode, Transaction};
use std::cmp::Ordering;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;
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

pub(crate) fn scale_of(ty: SqlType) -> u8 {
    match ty {
        SqlType::Decimal { scale, .. } => scale,
        _ => 0,
    }
}

/// The primary key bytes of a row. Tables without a primary key use the hidden
/// row id, which the caller supplies for new rows.
pub fn primary_key(table: &Table, row: &[Value]) -> Vec<u8> {
    let mut k = Vec::with_capacity(16);
    for &c in &table.def.primary_key {
        encode_key_value(
            &row[c],
            scale_of(table.def.columns[c].ty),
            table.def.columns[c].collation,
            &mut k,
        );
    }
    k
}

/// The hidden primary key for row id `id`.
pub fn hidden_key(id: u64) -> Vec<u8> {
    let mut k = Vec::with_capacity(9);
    encode_key_value(
        &Value::UInt(id),
        0,
        crate::types::collation::Collation::Binary,
        &mut k,
    );
    k
}

/// The secondary index keys of a row.
pub fn index_keys(table: &Table, row: &[Value]) -> Vec<(IndexId, Vec<u8>)> {
    index_keys_by(table, |c| &row[c])
}

/// The secondary index keys of the row whose column `c` is `column(c)`.
fn index_keys_by<'a>(
    table: &Table,
    column: impl Fn(usize) -> &'a Value,
) -> Vec<(IndexId, Vec<u8>)> {
    table
        .def
        .indexes
        .iter()
        .map(|idx| {
            let mut k = Vec::with_capacity(16);
            for &c in &idx.columns {
                encode_key_value(
                    column(c),
                    scale_of(table.def.columns[c].ty),
                    table.def.columns[c].collation,
                    &mut k,
                );
            }
            (idx.id, k)
        })
        .collect()
}

/// The key of secondary index `i` (by position in `def.indexes`) for `row`.
pub fn index_key(table: &Table, i: usize, row: &[Value]) -> Vec<u8> {
    index_key_of(table, i, row)
}

fn index_key_of(table: &Table, i: usize, row: &[Value]) -> Vec<u8> {
    let mut k = Vec::with_capacity(16);
    for &c in &table.def.indexes[i].columns {
        encode_key_value(
            &row[c],
            scale_of(table.def.columns[c].ty),
            table.def.columns[c].collation,
            &mut k,
        );
    }
    k
}

/// Decodes a stored row of `table` into its columns, in declaration order.
/// Rows are stored by physical slot (see "Instant ADD / DROP COLUMN" in
/// `crate::ddl::alter` and docs/format.md): a row stored before an ADD COLUMN lacks
/// the new column's slot and reads it as the column's `added_default`; a dropped
/// column's slot is skipped; slots beyond the table's — written by a statement
/// that ran on a newer definition while this one runs on an older — are ignored.
pub fn decode_table_row(table: &Table, bytes: &[u8], row: &mut Vec<Value>) -> Result<()> {
    decode_table_row_columns(table, bytes, None, row)
}

/// [`decode_table_row`] materialising only the `needed` columns (see
/// [`decode_row_columns`]).
pub fn decode_table_row_columns(
    table: &Table,
    bytes: &[u8],
    needed: Option<&[bool]>,
    row: &mut Vec<Value>,
) -> Result<()> {
    let def = &table.def;
    let n = def.columns.len();
    if def.identity_layout() {
        decode_row_columns(bytes, needed, row)?;
        row.truncate(n);
        for c in row.len()..n {
            row.push(table.missing_value(c));
        }
        return Ok(());
    }
    let mask = needed.map(|m| {
        let mut pm = vec![false; def.physical_width()];
        for (c, _) in m.iter().enumerate().filter(|(_, &b)| b) {
            if c < n {
                pm[def.slot(c)] = true;
            }
        }
        pm
    });
    let mut phys = Vec::new();
    decode_row_columns(bytes, mask.as_deref(), &mut phys)?;
    row.clear();
    for c in 0..n {
        row.push(match phys.get_mut(def.slot(c)) {
            Some(v) => std::mem::replace(v, Value::Null),
            None => table.missing_value(c),
        });
    }
    Ok(())
}

/// Encodes `row` (columns in declaration order) as stored: by slot, dropped
/// slots NULL (see [`decode_table_row`]).
pub fn encode_table_row(table: &Table, row: &[Value]) -> Vec<u8> {
    encode_table_row_with(table, row, &[])
}

/// [`encode_table_row`] followed by `extra` slots beyond the definition's width.
fn encode_table_row_with(table: &Table, row: &[Value], extra: &[Value]) -> Vec<u8> {
    let def = &table.def;
    if def.identity_layout() && extra.is_empty() {
        return encode_row(row);
    }
    let width = def.physical_width();
    let mut by_slot: Vec<&Value> = vec![&Value::Null; width];
    for (c, v) in row.iter().enumerate().take(def.columns.len()) {
        by_slot[def.slot(c)] = v;
    }
    by_slot.extend(extra);
    crate::types::encoding::encode_values(by_slot.len(), by_slot.into_iter())
}

/// Encodes the new version of the row stored at `pk` (locked). A statement
/// still running on a definition that an ADD COLUMN has since replaced
/// (`Table::superseded`) may meet a row written on the newer one, whose slots
/// it does not know: they are carried over, so the added columns keep their
/// values (see "Instant ADD / DROP COLUMN" in `crate::ddl::alter`).
fn encode_over(txn: &mut Transaction, table: &Table, pk: &[u8], row: &[Value]) -> Result<Vec<u8>> {
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

pub(crate) fn row_lock_key(table: &Table, pk: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(5 + pk.len());
    k.push(b'r');
    k.extend_from_slice(&table.def.id.to_be_bytes());
    k.extend_from_slice(pk);
    k
}

fn unique_lock_key(index: IndexId, key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(5 + key.len());
    k.push(b'u');
    k.extend_from_slice(&index.to_be_bytes());
    k.extend_from_slice(key);
    k
}

/// Visits the rows an access path yields (a superset of the matching rows),
/// decoded, with their primary keys. `f` returns `false` to stop.
#[allow(clippy::too_many_arguments)] // one scan's whole description; a struct would only rename them
pub fn for_each_row(
    txn: &mut Transaction,
    table: &Table,
    access: &Access,
    mode: ReadMode,
    reverse: bool,
    needed: Option<&[bool]>,
    ctx: &dyn EvalContext,
    f: &mut dyn FnMut(&[u8], &mut Vec<Value>) -> Result<bool>,
) -> Result<()> {
    for_each_row_checked(txn, table, access, mode, reverse, needed, ctx, None, f)
}

/// [`for_each_row`] that, given `misplaced`, checks that each row of a
/// secondary-index scan was offered at its own key: an old snapshot can meet a
/// row whose indexed columns changed later at the newer key's position (see
/// `Transaction::scan_index`). On the first such row it sets `misplaced` and
/// stops; a caller relying on index order then starts over and sorts. Rows are
/// decoded whole then (the key needs the indexed columns).
#[allow(clippy::too_many_arguments)] // one scan's whole description; a struct would only rename them
pub fn for_each_row_checked(
    txn: &mut Transaction,
    table: &Table,
    access: &Access,
    mode: ReadMode,
    reverse: bool,
    needed: Option<&[bool]>,
    ctx: &dyn EvalContext,
    mut misplaced: Option<&mut bool>,
    f: &mut dyn FnMut(&[u8], &mut Vec<Value>) -> Result<bool>,
) -> Result<()> {
    let needed = if misplaced.is_some() { None } else { needed };
    let (ranges, _fallback) = access.key_ranges(table, ctx)?;
    let tid = table.def.id;
    let mut err: Option<Error> = None;
    let mut row = Vec::new();
    match ranges {
        KeyRanges::Empty => Ok(()),
        KeyRanges::Points(points) => {
            let mut seen = HashSet::new();
            for pk in points {
                if points_dup(&mut seen, &pk) {
                    continue;
                }
                ctx.check_interrupt()?;
                if let Some(bytes) = txn.get(tid, &pk, mode)? {
                    decode_table_row_columns(table, &bytes, needed, &mut row)?;
                    if !f(&pk, &mut row)? {
                        break;
                    }
                }
            }
            Ok(())
        }
        KeyRanges::Ranges(list) => {
            let dedup = list.len() > 1;
            let mut seen: HashSet<Vec<u8>> = HashSet::new();
            for range in list {
                let mut stop = false;
                let mut visit = |pk: &[u8], bytes: &[u8]| -> ControlFlow<()> {
                    if dedup && !seen.insert(pk.to_vec()) {
                        return ControlFlow::Continue(());
                    }
                    // KILL QUERY / max_execution_time: one relaxed load per row.
                    let r = ctx
                        .check_interrupt()
                        .and_then(|_| decode_table_row_columns(table, bytes, needed, &mut row))
                        .and_then(|_| f(pk, &mut row));
                    match r {
                        Ok(true) => ControlFlow::Continue(()),
                        Ok(false) => {
                            stop = true;
                            ControlFlow::Break(())
                        }
                        Err(e) => {
                            err = Some(e);
                            stop = true;
                            ControlFlow::Break(())
                        }
                    }
                };
                match access.target {
                    Target::Primary => txn.scan(tid, &range, reverse, mode, &mut visit)?,
                    Target::Index(i) => {
                        let iid = table.def.indexes[i].id;
                        let check = misplaced.is_some();
                        let mut wrong = false;
                        txn.scan_index(tid, iid, &range, reverse, mode, &mut |k, pk, bytes| {
                            if check {
                                let mut own = Vec::new();
                                if decode_table_row(table, bytes, &mut own).is_ok()
                                    && index_key_of(table, i, &own) != k
                                {
                                    wrong = true;
                                    return ControlFlow::Break(());
                                }
                            }
                            visit(pk, bytes)
                        })?;
                        if wrong {
                            if let Some(m) = misplaced.as_deref_mut() {
                                *m = true;
                            }
                            return Ok(());
                        }
                    }
                }
                if let Some(e) = err.take() {
                    return Err(e);
                }
                if stop {
                    break;
                }
            }
            Ok(())
        }
    }
}

fn points_dup(seen: &mut HashSet<Vec<u8>>, pk: &[u8]) -> bool {
    !seen.insert(pk.to_vec())
}

/// Visits the rows matching `filter` with each row locked and read at its latest
/// committed version (a locking read). `f` gets (pk, row); stops after `limit`.
pub fn for_each_locked_row(
    txn: &mut Transaction,
    table: &Table,
    access: &Access,
    filter: Option<&Expr>,
    limit: Option<u64>,
    ctx: &dyn EvalContext,
    f: &mut dyn FnMut(&mut Transaction, Vec<u8>, Vec<Value>) -> Result<()>,
) -> Result<()> {
    for_each_locked_row_dir(txn, table, access, filter, limit, false, ctx, f)
}

/// [`for_each_locked_row`] scanning the access path backwards when `reverse`.
#[allow(clippy::too_many_arguments)] // one locking scan's whole description
pub(crate) fn for_each_locked_row_dir(
    txn: &mut Transaction,
    table: &Table,
    access: &Access,
    filter: Option<&Expr>,
    limit: Option<u64>,
    reverse: bool,
    ctx: &dyn EvalContext,
    f: &mut dyn FnMut(&mut Transaction, Vec<u8>, Vec<Value>) -> Result<()>,
) -> Result<()> {
    let quiet = Quiet(ctx);
    let matches = |row: &[Value], ctx: &dyn EvalContext| -> Result<bool> {
        match filter {
            None => Ok(true),
            Some(e) => eval_predicate(
                e,
                &Env {
                    row,
                    aggs: &[],
                    ctx,
                },
            ),
        }
    };
    // With a LIMIT, candidates are collected a batch at a time: a candidate
    // that fails the re-check after its lock (another transaction deleted or
    // changed it meanwhile) is replaced by the next one, as InnoDB's locking
    // read moves on to the next row.
    let mut processed: HashSet<Vec<u8>> = HashSet::new();
    let mut done = 0u64;
    let mut row = Vec::new();
    loop {
        let want = limit.map(|l| l.saturating_sub(done));
        let (ranges, _) = access.key_ranges(table, ctx)?;
        // Point lookups lock first, then read: one read per row.
        // Scanned candidates were filtered once already: their re-check after
        // the lock keeps quiet, so that a row's warnings (1292 ...) are given
        // once, as MySQL evaluates a row's WHERE once.
        let scanned = matches!(ranges, KeyRanges::Ranges(_));
        let (candidates, exhausted): (Vec<Vec<u8>>, bool) = match ranges {
            KeyRanges::Empty => return Ok(()),
            KeyRanges::Points(mut p) => {
                let mut seen = HashSet::new();
                p.retain(|k| seen.insert(k.clone()));
                if reverse {
                    p.reverse();
                }
                (p, true)
            }
            KeyRanges::Ranges(_) => {
                let mut pks = Vec::new();
                for_each_row(
                    txn,
                    table,
                    access,
                    ReadMode::Current,
                    reverse,
                    None,
                    ctx,
                    &mut |pk, row| {
                        if !processed.contains(pk) && matches(row, ctx)? {
                            pks.push(pk.to_vec());
                        }
                        Ok(want.is_none_or(|w| (pks.len() as u64) < w))
                    },
                )?;
                let exhausted = want.is_none_or(|w| (pks.len() as u64) < w);
                (pks, exhausted)
            }
        };
        for pk in candidates {
            if limit.is_some_and(|l| done >= l) {
                break;
            }
            processed.insert(pk.clone());
            txn.lock(&row_lock_key(table, &pk))?;
            let Some(bytes) = txn.get_locked(table.def.id, &pk)? else {
                continue;
            };
            decode_table_row(table, &bytes, &mut row)?;
            if !matches(&row, if scanned { &quiet } else { ctx })? {
                continue;
            }
            done += 1;
            f(txn, pk, std::mem::take(&mut row))?;
        }
        if exhausted || limit.is_some_and(|l| done >= l) {
            return Ok(());
        }
    }
}

/// A statement's context that drops warnings: for evaluating again what was
/// evaluated (and warned about) once already.
struct Quiet<'a>(&'a dyn EvalContext);

impl EvalContext for Quiet<'_> {
    fn params(&self) -> &[Value] {
        self.0.params()
    }
    fn sys_var(&self, name: &str) -> Result<Value> {
        self.0.sys_var(name)
    }
    fn user_var(&self, name: &str) -> Value {
        self.0.user_var(name)
    }
    fn session_fact(&self, f: crate::expr::functions::Func) -> Value {
        self.0.session_fact(f)
    }
    fn now(&self) -> chrono::NaiveDateTime {
        self.0.now()
    }
    fn warn(&self, _code: u16, _message: &str) {}
    fn subquery(
        &self,
        sq: &crate::expr::SubqueryExpr,
        outer: &[Value],
    ) -> Result<crate::expr::SubqueryRows> {
        self.0.subquery(sq, outer)
    }
    fn check_interrupt(&self) -> Result<()> {
        self.0.check_interrupt()
    }
    fn system_rows(
        &self,
        table: crate::catalog::infoschema::SystemTable,
        filter: &crate::catalog::infoschema::Pushed,
    ) -> Result<Vec<Vec<Value>>> {
        self.0.system_rows(table, filter)
    }
}

pub(crate) fn no_row(ctx: &dyn EvalContext) -> Env<'_> {
    Env {
        row: &[],
        aggs: &[],
        ctx,
    }
}

// ----------------------------------------------------------------------------------
// INSERT / UPDATE / DELETE
//
// Duplicate keys. An inserted row is checked against the primary key first, then
// each unique index in catalog order, as InnoDB inserts into the clustered index
// first and then into each secondary index. The first collision decides what
// happens:
//
//   plain INSERT          error 1062 (IGNORE: warning 1062, row skipped)
//   ON DUPLICATE KEY UPD  the colliding row is locked, re-read at its latest
//                         version and updated; a collision *caused by that
//                         update* is error 1062 (IGNORE: warning, row skipped)
//   REPLACE               the colliding row is deleted and the checks start over;
//                         when the collision is on the last unique key (nothing
//                         left to check after it) the row is overwritten in
//                         place instead, as MySQL's write_record() does — which
//                         is why REPLACE of an identical row reports 1 affected
//                         row on a table with one unique key and 2 on a table
//                         with two.
//
// Affected rows, as MySQL counts them (sql_insert.cc): copied (rows inserted or
// changed by the update) + deleted (by REPLACE) + updated (changed by ON
// DUPLICATE KEY UPDATE; with CLIENT_FOUND_ROWS "touched": found, changed or not).
// So an upsert reports 1 per inserted row, 2 per changed row, 0 (1 with
// CLIENT_FOUND_ROWS) per row left as it was.
// ----------------------------------------------------------------------------------

/// Where an inserted row collided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyHit {
    /// The primary key.
    Primary,
    /// The unique index at this position of `def.indexes`.
    Unique(usize),
}

/// An existing row an inserted row collides with, locked and read at its latest
/// version.
struct Conflict {
    key: KeyHit,
    pk: Vec<u8>,
    row: Vec<Value>,
}

/// The encoded value of `row` in unique index `idx`, or `None` when one of its
/// columns is NULL (NULLs never collide).
fn unique_key(table: &Table, idx: usize, row: &[Value]) -> Option<Vec<u8>> {
    let index = &table.def.indexes[idx];
    if index.columns.iter().any(|&c| row[c].is_null()) {
        return None;
    }
    let mut key = Vec::new();
    for &c in &index.columns {
        encode_key_value(
            &row[c],
            scale_of(table.def.columns[c].ty),
            table.def.columns[c].collation,
            &mut key,
        );
    }
    Some(key)
}

/// Locks the unique value `key` of index `idx` and finds a live row other than
/// `pk` that holds the same value as `row`: its primary key and decoded row, as
/// read before locking that row.
fn unique_holder(
    txn: &mut Transaction,
    table: &Table,
    idx: usize,
    key: &[u8],
    row: &[Value],
    pk: &[u8],
) -> Result<Option<(Vec<u8>, Vec<Value>)>> {
    let index = &table.def.indexes[idx];
    txn.lock(&unique_lock_key(index.id, key))?;
    let mut found = None;
    let mut decoded = Vec::new();
    let mut err = None;
    txn.scan_index(
        table.def.id,
        index.id,
        &KeyRange::prefix(key),
        false,
        ReadMode::Current,
        &mut |_k, other_pk, bytes| {
            if other_pk == pk {
                return ControlFlow::Continue(());
            }
            if let Err(e) = decode_table_row(table, bytes, &mut decoded) {
                err = Some(e);
                return ControlFlow::Break(());
            }
            if same_columns(table, &index.columns, &decoded, row) {
                found = Some((other_pk.to_vec(), std::mem::take(&mut decoded)));
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        },
    )?;
    match err {
        Some(e) => Err(e),
        None => Ok(found),
    }
}

/// Whether two rows agree on `cols` as the index on them sees it: strings
/// under each column's collation ('a' and 'A' are one value of a `_ci` UNIQUE
/// index, whose key holds the weights).
fn same_columns(table: &Table, cols: &[usize], a: &[Value], b: &[Value]) -> bool {
    same_columns_by(table, cols, |c| &a[c], b)
}

/// [`same_columns`] with the first row given column by column.
fn same_columns_by<'a>(
    table: &Table,
    cols: &[usize],
    a: impl Fn(usize) -> &'a Value,
    b: &[Value],
) -> bool {
    cols.iter().all(|&c| {
        let coll = Some(table.def.columns[c].collation).filter(|x| !x.is_bytewise());
        compare_as(a(c), &b[c], coll) == Some(Ordering::Equal)
    })
}

/// The version an UPDATE replaces, as [`write_update`] is given it.
#[derive(Clone, Copy)]
pub(crate) enum OldRow<'a> {
    /// The whole row.
    Row(&'a [Value]),
    /// The value each assigned column had (in assignment order, each column
    /// once); every other column is as in the new row. An UPDATE changes the
    /// row it read in place and so never copies it whole (a TPC-C stock row
    /// carries eleven strings).
    Replaced(&'a [(usize, Value)]),
}

impl<'a> OldRow<'a> {
    /// Column `c` of the old version, where `new` is the new one.
    pub(crate) fn column(self, new: &'a [Value], c: usize) -> &'a Value {
        match self {
            OldRow::Row(row) => &row[c],
            OldRow::Replaced(replaced) => replaced
                .iter()
                .find(|(r, _)| *r == c)
                .map_or(&new[c], |(_, v)| v),
        }
    }
}

/// Checks unique secondary indexes for `row` (which will live at `pk`): locks each
/// unique value and looks for another live row holding it.
fn check_unique(
    txn: &mut Transaction,
    table: &Table,
    row: &[Value],
    pk: &[u8],
    only_changed_from: OldRow<'_>,
) -> Result<()> {
    for (i, idx) in table.def.indexes.iter().enumerate() {
        if !idx.unique {
            continue;
        }
        if same_columns_by(
            table,
            &idx.columns,
            |c| only_changed_from.column(row, c),
            row,
        ) {
            continue;
        }
        let Some(key) = unique_key(table, i, row) else {
            continue;
        };
        if unique_holder(txn, table, i, &key, row, pk)?.is_some() {
            return Err(unique_duplicate(table, i, row));
        }
    }
    Ok(())
}

/// How many times a collision is looked for again because the colliding row
/// changed between finding and locking it. Each retry needs a concurrent commit,
/// so hitting this bound means something is wrong, not that we were unlucky.
const CONFLICT_RETRIES: usize = 1000;

/// Finds the first existing row that `row` (to be stored at `pk`) collides with:
/// the primary key first, then each unique index in order. Locks every key value
/// it looks at, and the colliding row, which it returns at its latest version.
fn find_conflict(
    txn: &mut Transaction,
    table: &Table,
    row: &[Value],
    pk: &[u8],
) -> Result<Option<Conflict>> {
    let def = &table.def;
    txn.lock(&row_lock_key(table, pk))?;
    if let Some(bytes) = txn.get_locked(def.id, pk)? {
        let mut existing = Vec::new();
        decode_table_row(table, &bytes, &mut existing)?;
        return Ok(Some(Conflict {
            key: KeyHit::Primary,
            pk: pk.to_vec(),
            row: existing,
        }));
    }
    for (i, idx) in def.indexes.iter().enumerate() {
        if !idx.unique {
            continue;
        }
        let Some(key) = unique_key(table, i, row) else {
            continue;
        };
        for _ in 0..CONFLICT_RETRIES {
            let Some((other_pk, _)) = unique_holder(txn, table, i, &key, row, pk)? else {
                break;
            };
            // The unique-value lock does not stop another transaction from moving
            // that row off the value: lock the row, re-read it, and look again if
            // it no longer holds the value.
            txn.lock(&row_lock_key(table, &other_pk))?;
            if let Some(bytes) = txn.get_locked(def.id, &other_pk)? {
                let mut existing = Vec::new();
                decode_table_row(table, &bytes, &mut existing)?;
                if same_columns(table, &idx.columns, &existing, row) {
                    return Ok(Some(Conflict {
                        key: KeyHit::Unique(i),
                        pk: other_pk,
                        row: existing,
                    }));
                }
            }
        }
    }
    Ok(None)
}

fn key_display(cols: &[usize], row: &[Value]) -> String {
    cols.iter()
        .map(|&c| row[c].to_display())
        .collect::<Vec<_>>()
        .join("-")
}

fn pk_duplicate(table: &Table, row: &[Value]) -> Error {
    Error::DuplicateEntry {
        value: key_display(&table.def.primary_key, row),
        key: format!("{}.PRIMARY", table.def.name),
    }
}

fn unique_duplicate(table: &Table, idx: usize, row: &[Value]) -> Error {
    let index = &table.def.indexes[idx];
    Error::DuplicateEntry {
        value: key_display(&index.columns, row),
        key: format!("{}.{}", table.def.name, index.name),
    }
}

fn conflict_error(table: &Table, hit: KeyHit, row: &[Value]) -> Error {
    match hit {
        KeyHit::Primary => pk_duplicate(table, row),
        KeyHit::Unique(i) => unique_duplicate(table, i, row),
    }
}

/// Whether `hit` is the last key a REPLACE checks: no unique index after it.
fn is_last_unique_key(table: &Table, hit: KeyHit) -> bool {
    let after = match hit {
        KeyHit::Primary => 0,
        KeyHit::Unique(i) => i + 1,
    };
    !table.def.indexes[after..].iter().any(|i| i.unique)
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
        txn.lock(&row_lock_key(table, &new_pk))?;
        if txn.get_locked(def.id, &new_pk)?.is_some() {
            return Err(pk_duplicate(table, new));
        }
        check_unique(txn, table, new, &new_pk, old)?;
        txn.delete(def.id, pk, old_keys);
        txn.put(def.id, new_pk, bytes, Vec::new(), new_keys);
    } else {
        check_unique(txn, table, new, &pk, old)?;
        txn.put(def.id, pk, bytes, old_keys, new_keys);
    }
    if let Some(scope) = fk {
        foreign::on_parent_update(txn, scope, table, old, new, depth)?;
    }
    Ok(())
}

/// Hands out AUTO_INCREMENT values for one INSERT the way InnoDB does with
/// `innodb_autoinc_lock_mode = 1` (the default in MariaDB 10.11 and MySQL 5.7),
/// so that the ids an application sees match MySQL's, gaps included:
///
/// - the first value a statement needs reserves as many values as the statement
///   has rows; later reservations (after an explicit value jumped past the
///   interval) reserve 1, 2, 4, ... up to 65536 (handler::update_auto_increment);
/// - a row that takes a value but is not inserted (a duplicate skipped by IGNORE,
///   or turned into an update by ON DUPLICATE KEY UPDATE) gives the value back to
///   the next row of the same statement (handler::restore_auto_increment); values
///   reserved but unused at the end of the statement are lost;
/// - an explicit value at or above the next value moves the next value past it.
struct AutoInc {
    /// Rows in the statement: the size of the first reservation.
    estimate: u64,
    /// Next value to hand out (0: none reserved yet).
    next: u64,
    /// End (exclusive) of the reserved interval.
    end: u64,
    /// Reservations made so far.
    intervals: u32,
}

impl AutoInc {
    fn new(rows: usize) -> AutoInc {
        AutoInc {
            estimate: rows.max(1) as u64,
            next: 0,
            end: 0,
            intervals: 0,
        }
    }

    fn take(&mut self, table: &Table) -> u64 {
        if self.next == 0 || self.next >= self.end {
            let n = if self.intervals == 0 {
                self.estimate
            } else {
                1u64 << self.intervals.min(16)
            };
            // `auto_increment` holds the largest value handed out or seen.
            let first = table
                .auto_increment
                .fetch_add(n, AtomicOrdering::Relaxed)
                .saturating_add(1);
            self.intervals += 1;
            self.next = first;
            self.end = first.saturating_add(n);
        }
        let v = self.next;
        self.next += 1;
        v
    }

    /// A row that took `v` was not inserted: the next row takes `v` again.
    fn give_back(&mut self, v: u64) {
        self.next = v;
    }

    /// The row carries the value `v` (given explicitly, or set by an update).
    fn seen(&mut self, table: &Table, v: u64) {
        table.auto_increment.fetch_max(v, AtomicOrdering::Relaxed);
        if self.next > 0 && v >= self.next {
            self.next = v.saturating_add(1);
        }
    }
}

/// The positive integer value of an AUTO_INCREMENT column, if any.
fn auto_value(v: &Value) -> Option<u64> {
    v.to_i64().filter(|&x| x > 0).map(|x| x as u64)
}

/// Counters of one INSERT / REPLACE, named as in MySQL's `COPY_INFO`.
#[derive(Default)]
struct InsertStats {
    /// Rows the statement tried.
    records: u64,
    /// Rows inserted, or changed by ON DUPLICATE KEY UPDATE.
    copied: u64,
    /// Rows deleted (or overwritten in place) by REPLACE.
    deleted: u64,
    /// Rows changed by ON DUPLICATE KEY UPDATE.
    updated: u64,
    /// Rows found by ON DUPLICATE KEY UPDATE, changed or not.
    touched: u64,
}

/// Evaluates one VALUES row into the values of the plan's columns (`None`:
/// DEFAULT).
fn eval_values(exprs: &[Option<Expr>], ctx: &dyn EvalContext) -> Result<Vec<Option<Value>>> {
    exprs
        .iter()
        .map(|e| e.as_ref().map(|e| eval(e, &no_row(ctx))).transpose())
        .collect()
}

/// Makes a full table row of the values of the plan's columns (`None`:
/// DEFAULT): defaults for the columns not given, each value coerced to its
/// column's type. The AUTO_INCREMENT column is left as given (NULL when not
/// given).
fn build_row(
    plan: &InsertPlan,
    values: Vec<Option<Value>>,
    ctx: &dyn EvalContext,
    rowno: u64,
) -> Result<Vec<Value>> {
    let def = &plan.table.def;
    let auto_col = plan.table.auto_increment_column();
    let mut row = vec![Value::Null; def.columns.len()];
    let mut given = vec![false; def.columns.len()];
    for (&c, v) in plan.columns.iter().zip(values) {
        if let Some(v) = v {
            row[c] = v;
            given[c] = true;
        }
    }
    for (c, col) in def.columns.iter().enumerate() {
        if !given[c] && !col.auto_increment {
            row[c] = match &col.default {
                Some(d) => crate::catalog::default_value(d, || ctx.now()),
                None if col.nullable => Value::Null,
                None => return Err(Error::NoDefault(col.name.clone())),
            };
        }
        if Some(c) != auto_col || !row[c].is_null() {
            row[c] = coerce(
                std::mem::replace(&mut row[c], Value::Null),
                col.ty,
                &col.name,
                rowno,
            )?;
        }
    }
    Ok(row)
}

/// What became of one row of an INSERT.
enum RowOutcome {
    /// Stored as a new row (REPLACE: after deleting `deleted` rows, or over one
    /// row in place).
    Inserted,
    /// Turned into an update of an existing row.
    Updated {
        /// Whether the update changed the row.
        changed: bool,
    },
    /// Skipped by IGNORE with warning 1062.
    Skipped,
}

/// Runs an INSERT or REPLACE. With `found_rows` (CLIENT_FOUND_ROWS) a row that
/// ON DUPLICATE KEY UPDATE leaves unchanged counts as affected.
pub fn run_insert(
    plan: &InsertPlan,
    txn: &mut Transaction,
    ctx: &dyn EvalContext,
    effects: &mut StatementEffects,
    found_rows: bool,
) -> Result<QueryResult> {
    let table = &plan.table;
    let def = &table.def;
    let auto_col = table.auto_increment_column();
    // The source of INSERT ... SELECT is read whole before the first row is
    // inserted (see the module doc).
    let selected = match &plan.select {
        Some(q) => Some(run_source(q, txn, ctx)?),
        None => None,
    };
    // INSERT ... SELECT does not know its row count in advance: InnoDB then
    // reserves AUTO_INCREMENT values 1, 2, 4, ... at a time (sql_insert.cc starts
    // the bulk insert with an estimate of 0 rows).
    let mut auto = AutoInc::new(if selected.is_some() {
        1
    } else {
        plan.rows.len()
    });
    let mut stats = InsertStats::default();
    let mut fk = FkScope::new(plan.fk.as_ref(), ctx)?;
    // The AUTO_INCREMENT value of the last row processed, which MySQL reports in
    // the OK packet when no value was generated (sql_insert.cc: the value of
    // `next_number_field` once the statement is done).
    let mut last_auto: u64 = 0;
    let nrows = selected.as_ref().map_or(plan.rows.len(), Vec::len);
    let mut selected = selected.map(Vec::into_iter);
    for n in 0..nrows {
        let rowno = n as u64 + 1;
        stats.records += 1;
        let values = match selected.as_mut() {
            Some(rows) => rows
                .next()
                .ok_or_else(|| Error::Internal("INSERT ... SELECT: a row vanished".into()))?
                .into_iter()
                .map(Some)
                .collect(),
            None => eval_values(&plan.rows[n], ctx)?,
        };
        let mut row = build_row(plan, values, ctx, rowno)?;
        // NOT NULL is checked as the values are stored into the row, before
        // write_row() generates an AUTO_INCREMENT value: a failing row uses up no
        // id (NULL in the AUTO_INCREMENT column itself asks for one).
        for (c, col) in def.columns.iter().enumerate() {
            if row[c].is_null() && !col.nullable && Some(c) != auto_col {
                return Err(Error::BadNull(col.name.clone()));
            }
        }
        let mut generated = None;
        if let Some(a) = auto_col {
            let v = &row[a];
            if v.is_null() || v.to_i64() == Some(0) {
                let id = auto.take(table);
                row[a] = coerce(
                    Value::UInt(id),
                    def.columns[a].ty,
                    &def.columns[a].name,
                    rowno,
                )?;
                generated = Some(id);
            } else if let Some(x) = auto_value(v) {
                auto.seen(table, x);
            }
        }
        let pk = if table.hidden_pk() {
            hidden_key(table.row_id.fetch_add(1, AtomicOrdering::Relaxed) + 1)
        } else {
            primary_key(table, &row)
        };
        let outcome = match &plan.on_duplicate {
            OnDuplicate::Error => match find_conflict(txn, table, &row, &pk)? {
                None => insert_new(txn, fk.as_mut(), table, pk, &row, plan.ignore, effects)?,
                Some(c) if plan.ignore => {
                    skip_warning(effects, conflict_error(table, c.key, &row));
                    RowOutcome::Skipped
                }
                Some(c) => return Err(conflict_error(table, c.key, &row)),
            },
            OnDuplicate::Replace => {
                stats.deleted += replace_row(txn, table, &pk, &row, fk.as_mut())?;
                RowOutcome::Inserted
            }
            OnDuplicate::Update(assignments) => match find_conflict(txn, table, &row, &pk)? {
                None => insert_new(txn, fk.as_mut(), table, pk, &row, plan.ignore, effects)?,
                Some(c) => {
                    let new = upsert_values(table, assignments, &c.row, &row, ctx, rowno, effects)?;
                    if new == c.row {
                        row = new;
                        RowOutcome::Updated { changed: false }
                    } else {
                        match write_update(
                            txn,
                            table,
                            c.pk,
                            OldRow::Row(&c.row),
                            &new,
                            fk.as_mut(),
                            0,
                        ) {
                            Ok(()) => {
                                row = new;
                                RowOutcome::Updated { changed: true }
                            }
                            Err(
                                e @ (Error::DuplicateEntry { .. }
                                | Error::ForeignKey { code: 1452, .. }),
                            ) if plan.ignore => {
                                skip_warning(effects, e);
                                RowOutcome::Skipped
                            }
                            Err(e) => return Err(e),
                        }
                    }
                }
            },
        };
        match outcome {
            RowOutcome::Inserted => {
                stats.copied += 1;
                if effects.generated_id.is_none() {
                    effects.generated_id = generated;
                }
            }
            RowOutcome::Updated { changed } => {
                stats.touched += 1;
                if changed {
                    stats.copied += 1;
                    stats.updated += 1;
                }
            }
            RowOutcome::Skipped => {}
        }
        if !matches!(outcome, RowOutcome::Inserted) {
            if let Some(id) = generated {
                auto.give_back(id);
            }
        }
        if let Some(a) = auto_col {
            let v = auto_value(&row[a]).unwrap_or(0);
            if matches!(outcome, RowOutcome::Updated { changed: true }) && v > 0 {
                // An update that moves the AUTO_INCREMENT column up moves the
                // counter too (ha_innobase::update_row, for this statement kind).
                auto.seen(table, v);
            }
            last_auto = v;
        }
    }
    let affected = stats.copied
        + stats.deleted
        + if found_rows {
            stats.touched
        } else {
            stats.updated
        };
    // MySQL reports the counts for a multi-row VALUES list and for every
    // INSERT ... SELECT (select_insert::send_eof), whatever its row count.
    let info = if plan.rows.len() > 1 || plan.select.is_some() {
        let duplicates = if plan.ignore {
            stats.records - stats.copied
        } else {
            stats.deleted + stats.updated
        };
        format!(
            "Records: {}  Duplicates: {}  Warnings: {}",
            stats.records,
            duplicates,
            effects.warnings.len()
        )
    } else {
        String::new()
    };
    let last_insert_id = match effects.generated_id {
        Some(id) => id,
        None if stats.copied > 0 => last_auto,
        None => 0,
    };
    Ok(QueryResult::Ok {
        affected_rows: affected,
        last_insert_id,
        info,
        warnings: effects.warnings.len() as u16,
    })
}

/// Records a duplicate-key (1062) or missing-parent (1452) error that IGNORE
/// turns into a warning.
fn skip_warning(effects: &mut StatementEffects, e: Error) {
    match e {
        Error::DuplicateEntry { value, key } => effects
            .warnings
            .push((1062, format!("Duplicate entry '{value}' for key '{key}'"))),
        Error::ForeignKey { code, message } => effects.warnings.push((code, message)),
        _ => {}
    }
}

/// [`insert_checked`] for one row of an INSERT: under IGNORE a row without
/// its parent is skipped with warning 1452, as a duplicate is with 1062.
fn insert_new(
    txn: &mut Transaction,
    fk: Option<&mut FkScope<'_>>,
    table: &Table,
    pk: Vec<u8>,
    row: &[Value],
    ignore: bool,
    effects: &mut StatementEffects,
) -> Result<RowOutcome> {
    match insert_checked(txn, fk, table, pk, row) {
        Ok(()) => Ok(RowOutcome::Inserted),
        Err(e @ Error::ForeignKey { .. }) if ignore => {
            skip_warning(effects, e);
            Ok(RowOutcome::Skipped)
        }
        Err(e) => Err(e),
    }
}

/// Stores a new row at `pk` (its keys are known to be free), after its
/// foreign keys found their parents.
fn insert_checked(
    txn: &mut Transaction,
    fk: Option<&mut FkScope<'_>>,
    table: &Table,
    pk: Vec<u8>,
    row: &[Value],
) -> Result<()> {
    if let Some(scope) = fk {
        foreign::check_parents(txn, scope, table, row, None)?;
    }
    let keys = index_keys(table, row);
    txn.put(
        table.def.id,
        pk,
        encode_table_row(table, row),
        Vec::new(),
        keys,
    );
    Ok(())
}

/// Evaluates the value of an assignment (`SET col = e`, ON DUPLICATE KEY UPDATE).
/// `col = LAST_INSERT_ID(expr)` is MySQL's idiom for handing a value back through
/// LAST_INSERT_ID(): a sequence table (`UPDATE seq SET id = LAST_INSERT_ID(id + 1)`)
/// or the id of the row an upsert updated (`... UPDATE id = LAST_INSERT_ID(id)`).
/// The argument's value, as an unsigned integer, becomes the statement's insert
/// id (the OK packet's and the session's LAST_INSERT_ID()), recorded in
/// `effects.generated_id`. Only this top-level form sets it here.
fn eval_assignment(e: &Expr, env: &Env<'_>, effects: &mut StatementEffects) -> Result<Value> {
    if let Expr::Func(Func::LastInsertId, args) = e {
        if let [arg] = args.as_slice() {
            let v = eval(arg, env)?;
            match v {
                Value::UInt(u) => effects.generated_id = Some(u),
                ref other => {
                    if let Some(i) = other.to_i64() {
                        // MySQL stores the argument as an unsigned 64-bit value.
                        effects.generated_id = Some(i as u64);
                    }
                }
            }
            return Ok(v);
        }
    }
    eval(e, env)
}

/// The row ON DUPLICATE KEY UPDATE makes of `existing`: the assignments run left
/// to right over the frame `existing ++ inserted`, each seeing the values the
/// earlier ones set, as in an UPDATE.
fn upsert_values(
    table: &Table,
    assignments: &[(usize, Expr)],
    existing: &[Value],
    inserted: &[Value],
    ctx: &dyn EvalContext,
    rowno: u64,
    effects: &mut StatementEffects,
) -> Result<Vec<Value>> {
    let ncols = table.def.columns.len();
    let mut frame = Vec::with_capacity(2 * ncols);
    frame.extend_from_slice(existing);
    frame.extend_from_slice(inserted);
    for (c, e) in assignments {
        let v = eval_assignment(
            e,
            &Env {
                row: &frame,
                aggs: &[],
                ctx,
            },
            effects,
        )?;
        let col = &table.def.columns[*c];
        let v = coerce(v, col.ty, &col.name, rowno)?;
        if v.is_null() && !col.nullable {
            return Err(Error::BadNull(col.name.clone()));
        }
        frame[*c] = v;
    }
    frame.truncate(ncols);
    Ok(frame)
}

/// Stores `row` (at `pk`) for a REPLACE: deletes each row it collides with, or
/// overwrites the last one in place (see the section comment). Returns the rows
/// deleted, counting an in-place overwrite that changed the row as one.
///
/// A deleted row is a parent row deleted (its children's ON DELETE applies);
/// an overwrite in place is an update.
fn replace_row(
    txn: &mut Transaction,
    table: &Table,
    pk: &[u8],
    row: &[Value],
    mut fk: Option<&mut FkScope<'_>>,
) -> Result<u64> {
    let def = &table.def;
    let mut deleted = 0;
    // Each round removes one colliding row, so there are at most as many rounds
    // as keys (the primary key and each unique index), plus the final insert.
    for _ in 0..def.indexes.len() + 2 {
        let Some(c) = find_conflict(txn, table, row, pk)? else {
            insert_checked(txn, fk, table, pk.to_vec(), row)?;
            return Ok(deleted);
        };
        // MySQL's write_record overwrites in place only a table no foreign
        // key references: a referenced row is deleted (its children's ON
        // DELETE applies) and inserted again.
        let referenced = fk.as_deref().is_some_and(|s| s.is_referenced(table));
        if is_last_unique_key(table, c.key) && !referenced {
            if c.row.as_slice() != row {
                write_update(txn, table, c.pk, OldRow::Row(&c.row), row, fk, 0)?;
                deleted += 1;
            }
            return Ok(deleted);
        }
        txn.delete(def.id, c.pk, index_keys(table, &c.row));
        if let Some(scope) = fk.as_deref_mut() {
            foreign::on_parent_change(txn, scope, table, OldRow::Row(&c.row), None, 0)?;
        }
        deleted += 1;
    }
    Err(Error::Internal(
        "REPLACE: a colliding row remained after deleting one per key".into(),
    ))
}

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
fn for_each_target_row(
    txn: &mut Transaction,
    table: &Table,
    access: &Access,
    filter: Option<&Expr>,
    order: &RowOrder,
    limit: Option<u64>,
    ctx: &dyn EvalContext,
    f: &mut dyn FnMut(&mut Transaction, Vec<u8>, Vec<Value>) -> Result<()>,
) -> Result<()> {
    match order {
        RowOrder::Any => for_each_locked_row_dir(txn, table, access, filter, limit, false, ctx, f),
        RowOrder::Key { reverse } => {
            for_each_locked_row_dir(txn, table, access, filter, limit, *reverse, ctx, f)
        }
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
            for (_, pk, row) in rows {
                f(txn, pk, row)?;
            }
            Ok(())
        }
    }
}

/// Whether a WHERE clause is MySQL's "Impossible WHERE": one of its AND-ed
/// parts is constant (literals, parameters, variables, substituted subqueries)
/// and not true, as the optimizer finds when it folds constants.
fn impossible_where(filter: Option<&Expr>, ctx: &dyn EvalContext) -> Result<bool> {
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
    let table = &plan.table;
    let def = &table.def;
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
    let mut matched = 0u64;
    let mut changed = 0u64;
    let mut fk = FkScope::new(plan.fk.as_ref(), ctx)?;
    for_each_target_row(
        txn,
        table,
        access,
        filter,
        order,
        limit,
        ctx,
        &mut |txn, pk, mut row| {
            matched += 1;
            // The assignments change the row in place, left to right (a later
            // one reads what an earlier one assigned, as in MySQL); `replaced`
            // keeps the value each assigned column had.
            let mut replaced: Vec<(usize, Value)> = Vec::with_capacity(assignments.len());
            for (c, e) in assignments {
                let v = eval_assignment(
                    e,
                    &Env {
                        row: &row,
                        aggs: &[],
                        ctx,
                    },
                    effects,
                )?;
                let col = &def.columns[*c];
                let v = coerce(v, col.ty, &col.name, matched)?;
                if v.is_null() && !col.nullable {
                    return Err(Error::BadNull(col.name.clone()));
                }
                let was = std::mem::replace(&mut row[*c], v);
                if !replaced.iter().any(|(r, _)| r == c) {
                    replaced.push((*c, was));
                }
            }
            if replaced.iter().all(|(c, was)| row[*c] == *was) {
                return Ok(());
            }
            changed += 1;
            write_update(
                txn,
                table,
                pk,
                OldRow::Replaced(&replaced),
                &row,
                fk.as_mut(),
                0,
            )
        },
    )?;
    Ok(QueryResult::Ok {
        affected_rows: if found_rows { matched } else { changed },
        last_insert_id: effects.generated_id.unwrap_or(0),
        info: format!("Rows matched: {matched}  Changed: {changed}  Warnings: 0"),
        warnings: 0,
    })
}

/// Runs a DELETE.
pub fn run_delete(
    plan: &DeletePlan,
    txn: &mut Transaction,
    ctx: &dyn EvalContext,
) -> Result<QueryResult> {
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
    for_each_target_row(
        txn,
        table,
        access,
        filter,
        order,
        limit,
        ctx,
        &mut |txn, pk, old| {
            txn.delete(table.def.id, pk, index_keys(table, &old));
            if let Some(scope) = fk.as_mut() {
                foreign::on_parent_change(txn, scope, table, OldRow::Row(&old), None, 0)?;
            }
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

// ----------------------------------------------------------------------------------
// Subqueries of DML statements
// ----------------------------------------------------------------------------------

/// Runs a query whose rows feed a DML statement, to completion. `outer_len == 0`
/// marks the source of `INSERT ... SELECT`, which InnoDB reads with locks above
/// READ COMMITTED (a single-table source is then a locking read here too).
fn run_source(
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
fn order_keys(order: &RowOrder) -> impl Iterator<Item = &Expr> {
    let keys = match order {
        RowOrder::Sort(keys) => keys.as_slice(),
        RowOrder::Any | RowOrder::Key { .. } => &[],
    };
    keys.iter().map(|(e, _)| e)
}

/// The rows of every subquery of an UPDATE / DELETE, read before its scan, and
/// the evaluation context that answers the subqueries from them.
type Prefetched<'a> = WithSubqueries<'a, PrefetchedRows>;

/// Subqueries' rows by [`subquery_key`].
struct PrefetchedRows(HashMap<usize, SubqueryRows>);

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
    fn run(
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
                slot.insert(Rc::new(run_source(&sq.plan, txn, base)?));
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
    fn substitute(&self, e: &Expr) -> Expr {
        e.rewrite(&|x| self.substitute_node(x))
    }

    fn substitute_node(&self, e: &Expr) -> Option<Expr> {
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
            SubqueryKind::Exists(neg) => {
                Some(Expr::Literal(Value::Int((rows.is_empty() == *neg) as i64)))
            }
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
struct Resolved<'a> {
    ctx: Prefetched<'a>,
    filter: Option<Expr>,
    assignments: Vec<(usize, Expr)>,
    access: Access,
    order: RowOrder,
}

impl<'a> Resolved<'a> {
    /// `assignments` are already substituted.
    fn new(
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
    use crate::plan::{plan_delete, plan_update, PlanContext};
    use sqlparser::ast::Statement;
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::parser::Parser;
    use std::sync::Arc;
    use std::time::Duration;

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
        let cfg = EngineConfig {
            durability: canyon_txn::Durability::SyncEveryCommit,
            lock_wait_timeout: Duration::from_secs(2),
            blocking_hook: None,
            version: "8.0.36-canyon-test".into(),
            max_allowed_packet: 64 << 20,
            max_connections: 10,
            port: 3306,
            row_cache_bytes: 1 << 20,
            history_memory_bytes: 1 << 20,
            statement_memory_limit: crate::catalog::config::DEFAULT_STATEMENT_MEMORY_LIMIT,
            statement_memory_budget: crate::catalog::config::DEFAULT_STATEMENT_MEMORY_BUDGET,
        };
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
        assert!(matches!(
            update("UPDATE t SET k = (SELECT n FROM w WHERE w.k = t.id)"),
            Err(Error::Unsupported(_))
        ));
        assert!(update("UPDATE t SET k = (SELECT m FROM (SELECT MAX(k) AS m FROM t) d)").is_ok());
    }
}
