//! Reading rows for a statement: consistent reads of the snapshot, locking
//! reads that lock each row and re-check it at its latest committed version,
//! and the environment a row is evaluated in.

use super::dml::*;
use crate::catalog::rows::*;
use crate::catalog::Table;
use crate::expr::{eval_predicate, Env, EvalContext, Expr};
use crate::plan::access::{Access, KeyRanges, Target};
use crate::types::value::Value;
use canyon_common::{Error, Result};
use canyon_storage::KeyRange;
use canyon_txn::{IsolationLevel, LockMode, ReadMode, Transaction};
use std::collections::HashSet;
use std::ops::Bound;
use std::ops::ControlFlow;

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
    misplaced: Option<&mut bool>,
    f: &mut dyn FnMut(&[u8], &mut Vec<Value>) -> Result<bool>,
) -> Result<()> {
    // Rows read, counted locally and reported once (performance_schema's
    // ROWS_EXAMINED and table I/O), whatever way the scan ends.
    let mut read = 0u64;
    let r = scan_rows(
        txn, table, access, mode, reverse, needed, ctx, misplaced, &mut read, f,
    );
    if read > 0 || access.full_scan {
        ctx.note_read(&table.def, io_index(access), read, false);
    }
    r
}

/// Where a scan of `access` reads, for performance_schema's INDEX_NAME.
pub(crate) fn io_index(access: &Access) -> crate::catalog::perfschema::IoIndex {
    use crate::catalog::perfschema::IoIndex;
    match access.target {
        _ if access.full_scan => IoIndex::Scan,
        Target::Primary => IoIndex::Primary,
        Target::Index(i) => IoIndex::Index(i),
    }
}

/// [`for_each_row_checked`]'s scan, counting the rows it reads in `read`.
#[allow(clippy::too_many_arguments)] // as for_each_row_checked
fn scan_rows(
    txn: &mut Transaction,
    table: &Table,
    access: &Access,
    mode: ReadMode,
    reverse: bool,
    needed: Option<&[bool]>,
    ctx: &dyn EvalContext,
    mut misplaced: Option<&mut bool>,
    read: &mut u64,
    f: &mut dyn FnMut(&[u8], &mut Vec<Value>) -> Result<bool>,
) -> Result<()> {
    let needed = if misplaced.is_some() { None } else { needed };
    let (ranges, _fallback) = access.key_ranges(table, ctx)?;
    let tid = table.def.id;
    let mut err: Option<Error> = None;
    let mut row = Vec::new();
    let zone = ctx.time_zone();
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
                    *read += 1;
                    decode_table_row_columns(table, &bytes, needed, &mut row)?;
                    localize_row(&mut row, &zone);
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
                    *read += 1;
                    // KILL QUERY / max_execution_time: one relaxed load per row.
                    let r = ctx
                        .check_interrupt()
                        .and_then(|_| decode_table_row_columns(table, bytes, needed, &mut row))
                        .and_then(|_| {
                            localize_row(&mut row, &zone);
                            f(pk, &mut row)
                        });
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
                        if mode == ReadMode::Snapshot {
                            crate::exec::check_index_ready(
                                &table.def.indexes[i],
                                txn.transaction_snapshot(),
                            )?;
                        }
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

pub(crate) fn points_dup(seen: &mut HashSet<Vec<u8>>, pk: &[u8]) -> bool {
    !seen.insert(pk.to_vec())
}

/// Visits the rows matching `filter` with each row locked exclusively and
/// read at its latest committed version (a locking read, as for UPDATE and
/// DELETE). `f` gets (pk, row); stops after `limit`.
pub fn for_each_locked_row(
    txn: &mut Transaction,
    table: &Table,
    access: &Access,
    filter: Option<&Expr>,
    limit: Option<u64>,
    ctx: &dyn EvalContext,
    f: &mut dyn FnMut(&mut Transaction, Vec<u8>, Vec<Value>) -> Result<()>,
) -> Result<()> {
    for_each_locked_row_dir(
        txn,
        table,
        access,
        filter,
        limit,
        false,
        LockMode::Exclusive,
        ctx,
        f,
    )
}

/// [`for_each_locked_row`] scanning the access path backwards when
/// `reverse`, locking rows in `mode`.
#[allow(clippy::too_many_arguments)] // one locking scan's whole description
pub(crate) fn for_each_locked_row_dir(
    txn: &mut Transaction,
    table: &Table,
    access: &Access,
    filter: Option<&Expr>,
    limit: Option<u64>,
    reverse: bool,
    mode: LockMode,
    ctx: &dyn EvalContext,
    f: &mut dyn FnMut(&mut Transaction, Vec<u8>, Vec<Value>) -> Result<()>,
) -> Result<()> {
    for_each_locked_row_numbered(
        txn,
        table,
        access,
        filter,
        limit,
        reverse,
        mode,
        ctx,
        &mut |txn, pk, row, _| f(txn, pk, row),
    )
}

/// [`for_each_locked_row_dir`] that also gives `f` the row's number among
/// the rows the access path read, matching or not (from 1): the row a
/// value's warning names, as MySQL counts rows for warnings in UPDATE
/// (`current_row_for_warning`, one per row read: a full scan's twelfth row
/// is "row 12" even when it is the only one changed).
///
/// Above READ COMMITTED a scan's key ranges are locked too, from their
/// start to the farthest key the scan examined (to their end when it ran
/// out): no other transaction can add a row there until this one ends, as
/// InnoDB's next-key locks ensure (canyon-txn's `range_lock.rs`). The range
/// is locked after the scan, so the scan runs again when locking it had to
/// wait or an inserter ended meanwhile. Point lookups need no range: the
/// row lock on an absent key stops its insert. Under READ COMMITTED the scan
/// waits for the transactions inserting into its ranges and runs again, but
/// locks no range.
#[allow(clippy::too_many_arguments)] // one locking scan's whole description
pub(crate) fn for_each_locked_row_numbered(
    txn: &mut Transaction,
    table: &Table,
    access: &Access,
    filter: Option<&Expr>,
    limit: Option<u64>,
    reverse: bool,
    mode: LockMode,
    ctx: &dyn EvalContext,
    f: &mut dyn FnMut(&mut Transaction, Vec<u8>, Vec<Value>, u64) -> Result<()>,
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
    // Rows read so far (each row's number for `f`).
    let mut read = 0u64;
    let mut row = Vec::new();
    let zone = ctx.time_zone();
    loop {
        let want = limit.map(|l| l.saturating_sub(done));
        let (ranges, _) = access.key_ranges(table, ctx)?;
        // Point lookups lock first, then read: one read per row.
        // Scanned candidates were filtered once already: their re-check after
        // the lock keeps quiet, so that a row's warnings (1292 ...) are given
        // once, as MySQL evaluates a row's WHERE once.
        let scanned = matches!(ranges, KeyRanges::Ranges(_));
        // Each candidate with its number among the rows read; a point's is
        // given when it is found.
        let (candidates, exhausted): (Vec<(Vec<u8>, Option<u64>)>, bool) = match ranges {
            KeyRanges::Empty => return Ok(()),
            KeyRanges::Points(mut p) => {
                let mut seen = HashSet::new();
                p.retain(|k| seen.insert(k.clone()));
                if reverse {
                    p.reverse();
                }
                (p.into_iter().map(|k| (k, None)).collect(), true)
            }
            KeyRanges::Ranges(list) => {
                let gaps = matches!(
                    txn.isolation(),
                    IsolationLevel::RepeatableRead | IsolationLevel::Serializable
                );
                let index = match access.target {
                    Target::Primary => None,
                    Target::Index(i) => Some(table.def.indexes[i].id),
                };
                let read_before = read;
                loop {
                    let epoch = if gaps {
                        txn.range_epoch(table.def.id, index)
                    } else {
                        0
                    };
                    read = read_before;
                    let mut pks = Vec::new();
                    // The farthest key examined (by scan order), kept only
                    // when a LIMIT may stop the scan early.
                    let mut edge: Option<Vec<u8>> = None;
                    let track = gaps && want.is_some();
                    for_each_row(
                        txn,
                        table,
                        access,
                        ReadMode::Current,
                        reverse,
                        None,
                        ctx,
                        &mut |pk, row| {
                            if track {
                                let key = scan_key(table, access, pk, row);
                                let further = edge.as_ref().is_none_or(|e| {
                                    if reverse {
                                        key < *e
                                    } else {
                                        key > *e
                                    }
                                });
                                if further {
                                    edge = Some(key);
                                }
                            }
                            if processed.contains(pk) {
                                return Ok(true);
                            }
                            read += 1;
                            if matches(row, ctx)? {
                                pks.push((pk.to_vec(), Some(read)));
                            }
                            Ok(want.is_none_or(|w| (pks.len() as u64) < w))
                        },
                    )?;
                    let exhausted = want.is_none_or(|w| (pks.len() as u64) < w);
                    let mut again = false;
                    if gaps {
                        let edge = if exhausted { None } else { edge };
                        for range in &list {
                            let r = examined(range, edge.as_deref(), reverse);
                            again |= txn.lock_range(table.def.id, index, &r, epoch)?;
                        }
                    } else {
                        // READ COMMITTED: no range locks, but rows being
                        // inserted into the ranges are waited for, as
                        // InnoDB's locking read waits on their record locks.
                        for range in &list {
                            again |= txn.await_range_inserts(table.def.id, index, range)?;
                        }
                    }
                    if !again {
                        break (pks, exhausted);
                    }
                }
            }
        };
        for (pk, number) in candidates {
            if limit.is_some_and(|l| done >= l) {
                break;
            }
            processed.insert(pk.clone());
            lock_row_in(txn, table, &pk, mode)?;
            let Some(bytes) = txn.get_locked(table.def.id, &pk)? else {
                continue;
            };
            if !scanned {
                // A point read (a scan's candidates were counted by its scan).
                ctx.note_read(&table.def, io_index(access), 1, false);
            }
            let number = number.unwrap_or_else(|| {
                read += 1;
                read
            });
            decode_table_row(table, &bytes, &mut row)?;
            localize_row(&mut row, &zone);
            if !matches(&row, if scanned { &quiet } else { ctx })? {
                continue;
            }
            done += 1;
            f(txn, pk, std::mem::take(&mut row), number)?;
        }
        if exhausted || limit.is_some_and(|l| done >= l) {
            return Ok(());
        }
    }
}

/// The key a scan of `access` orders `pk`'s row by: the pk, or the index
/// key followed by the pk (as the index stores it).
fn scan_key(table: &Table, access: &Access, pk: &[u8], row: &[Value]) -> Vec<u8> {
    match access.target {
        Target::Primary => pk.to_vec(),
        Target::Index(i) => {
            let mut k = index_key_of(table, i, row);
            k.extend_from_slice(pk);
            k
        }
    }
}

/// The part of `range` a scan examined when it stopped at `edge` (`None`:
/// it ran to the range's end): from the start to the edge, or (scanning
/// backwards) from the edge to the end. The edge may lie outside `range`
/// (another range of the list): the part is then empty or the whole.
fn examined(range: &KeyRange, edge: Option<&[u8]>, reverse: bool) -> KeyRange {
    let Some(edge) = edge else {
        return range.clone();
    };
    let mut r = range.clone();
    let at = Bound::Included(edge.to_vec());
    if reverse {
        let inside = match &r.start {
            Bound::Included(s) | Bound::Excluded(s) => edge > s.as_slice(),
            Bound::Unbounded => true,
        };
        if inside {
            r.start = at;
        }
    } else {
        let inside = match &r.end {
            Bound::Included(e) | Bound::Excluded(e) => edge < e.as_slice(),
            Bound::Unbounded => true,
        };
        if inside {
            r.end = at;
        }
    }
    r
}

/// A statement's context that drops warnings: for evaluating again what was
/// evaluated (and warned about) once already.
pub(crate) struct Quiet<'a>(&'a dyn EvalContext);

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
    fn set_user_var(&self, name: &str, v: Value) -> bool {
        self.0.set_user_var(name, v)
    }
    fn session_fact(&self, f: crate::expr::functions::Func) -> Value {
        self.0.session_fact(f)
    }
    fn load_file(&self, name: &[u8]) -> Value {
        self.0.load_file(name)
    }
    fn sleep(&self, d: std::time::Duration) -> bool {
        self.0.sleep(d)
    }
    fn user_lock(&self, call: crate::expr::functions_misc::UserLockCall<'_>) -> Result<Value> {
        self.0.user_lock(call)
    }
    fn binlog_gtid_pos(&self, file: &str, pos: u64) -> Result<Value> {
        self.0.binlog_gtid_pos(file, pos)
    }
    fn wait_for_executed_gtids(
        &self,
        set: &canyon_binlog::GtidSet,
        timeout: Option<std::time::Duration>,
    ) -> Result<bool> {
        self.0.wait_for_executed_gtids(set, timeout)
    }
    fn now(&self) -> chrono::NaiveDateTime {
        self.0.now()
    }
    fn time_zone(&self) -> crate::types::timezone::Zone {
        self.0.time_zone()
    }
    fn mariadb(&self) -> bool {
        self.0.mariadb()
    }
    fn now_utc(&self) -> chrono::NaiveDateTime {
        self.0.now_utc()
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
    fn note_read(
        &self,
        table: &crate::catalog::TableDef,
        index: crate::catalog::perfschema::IoIndex,
        rows: u64,
        joined: bool,
    ) {
        self.0.note_read(table, index, rows, joined)
    }
    fn note_write(
        &self,
        table: &crate::catalog::TableDef,
        kind: crate::catalog::perfschema::IoWrite,
        rows: u64,
    ) {
        self.0.note_write(table, kind, rows)
    }
    fn call_stored(
        &self,
        routine: &std::sync::Arc<crate::catalog::routines::RoutineDef>,
        args: Vec<Value>,
    ) -> Result<Value> {
        self.0.call_stored(routine, args)
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
