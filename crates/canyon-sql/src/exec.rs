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

use crate::access::{Access, KeyRanges, Target};
use crate::api::QueryResult;
use crate::catalog::Table;
use crate::encoding::{decode_row_columns, encode_key_value, encode_row};
use crate::expr::{eval, eval_predicate, Env, EvalContext, Expr};
use crate::plan::{eval_count, DeletePlan, InsertPlan, UpdatePlan};
use crate::types::{coerce, SqlType};
use crate::value::{compare, Value};
use canyon_common::{Error, Result};
use canyon_storage::KeyRange;
use canyon_txn::{IndexId, ReadMode, Transaction};
use std::cmp::Ordering;
use std::collections::HashSet;
use std::ops::ControlFlow;
use std::sync::atomic::Ordering as AtomicOrdering;

/// What a statement reports besides its result.
#[derive(Debug, Default)]
pub struct StatementEffects {
    /// First AUTO_INCREMENT value generated (LAST_INSERT_ID()).
    pub generated_id: Option<u64>,
    /// Warnings raised: (code, message).
    pub warnings: Vec<(u16, String)>,
}

fn scale_of(ty: SqlType) -> u8 {
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
        encode_key_value(&row[c], scale_of(table.def.columns[c].ty), &mut k);
    }
    k
}

/// The hidden primary key for row id `id`.
pub fn hidden_key(id: u64) -> Vec<u8> {
    let mut k = Vec::with_capacity(9);
    encode_key_value(&Value::UInt(id), 0, &mut k);
    k
}

/// The secondary index keys of a row.
pub fn index_keys(table: &Table, row: &[Value]) -> Vec<(IndexId, Vec<u8>)> {
    table
        .def
        .indexes
        .iter()
        .map(|idx| {
            let mut k = Vec::with_capacity(16);
            for &c in &idx.columns {
                encode_key_value(&row[c], scale_of(table.def.columns[c].ty), &mut k);
            }
            (idx.id, k)
        })
        .collect()
}

/// Decodes a stored row of `table`. A row stored with fewer columns than the
/// table has (written before a future ADD COLUMN) reads the missing trailing
/// columns as their defaults (docs/format.md); more columns than the table has is
/// corruption — never an out-of-bounds panic later.
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
    decode_row_columns(bytes, needed, row)?;
    let n = table.def.columns.len();
    if row.len() > n {
        return Err(Error::Corrupt(format!(
            "row of {}.{} has {} columns, the table {}",
            table.def.db,
            table.def.name,
            row.len(),
            n
        )));
    }
    for col in &table.def.columns[row.len()..] {
        row.push(match &col.default {
            Some(d) => {
                crate::catalog::default_value(d, || chrono::DateTime::UNIX_EPOCH.naive_utc())
            }
            None => Value::Null,
        });
    }
    Ok(())
}

fn row_lock_key(table: &Table, pk: &[u8]) -> Vec<u8> {
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
                    let r = decode_table_row_columns(table, bytes, needed, &mut row)
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
                        txn.scan_index(tid, iid, &range, reverse, mode, &mut |_k, pk, bytes| {
                            visit(pk, bytes)
                        })?
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
    let matches = |row: &[Value]| -> Result<bool> {
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
    let (ranges, _) = access.key_ranges(table, ctx)?;
    // Point lookups lock first, then read: one read per row.
    let candidates: Vec<Vec<u8>> = match ranges {
        KeyRanges::Empty => return Ok(()),
        KeyRanges::Points(mut p) => {
            let mut seen = HashSet::new();
            p.retain(|k| seen.insert(k.clone()));
            p
        }
        KeyRanges::Ranges(_) => {
            let mut pks = Vec::new();
            for_each_row(
                txn,
                table,
                access,
                ReadMode::Current,
                false,
                None,
                ctx,
                &mut |pk, row| {
                    if matches(row)? {
                        pks.push(pk.to_vec());
                    }
                    Ok(limit.is_none_or(|l| (pks.len() as u64) < l))
                },
            )?;
            pks
        }
    };
    let mut done = 0u64;
    let mut row = Vec::new();
    for pk in candidates {
        if limit.is_some_and(|l| done >= l) {
            break;
        }
        txn.lock(&row_lock_key(table, &pk))?;
        let Some(bytes) = txn.get(table.def.id, &pk, ReadMode::Current)? else {
            continue;
        };
        decode_table_row(table, &bytes, &mut row)?;
        if !matches(&row)? {
            continue;
        }
        done += 1;
        f(txn, pk, std::mem::take(&mut row))?;
    }
    Ok(())
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
// ----------------------------------------------------------------------------------

/// Checks unique secondary indexes for `row` (which will live at `pk`): locks each
/// unique value and looks for another live row holding it.
fn check_unique(
    txn: &mut Transaction,
    table: &Table,
    row: &[Value],
    pk: &[u8],
    only_changed_from: Option<&[Value]>,
) -> Result<()> {
    for idx in table.def.indexes.iter().filter(|i| i.unique) {
        if idx.columns.iter().any(|&c| row[c].is_null()) {
            continue; // NULLs never collide.
        }
        if let Some(old) = only_changed_from {
            if idx
                .columns
                .iter()
                .all(|&c| compare(&old[c], &row[c]) == Some(Ordering::Equal))
            {
                continue;
            }
        }
        let mut key = Vec::new();
        for &c in &idx.columns {
            encode_key_value(&row[c], scale_of(table.def.columns[c].ty), &mut key);
        }
        txn.lock(&unique_lock_key(idx.id, &key))?;
        let mut clash = false;
        let mut decoded = Vec::new();
        let mut err = None;
        txn.scan_index(
            table.def.id,
            idx.id,
            &KeyRange::prefix(&key),
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
                if idx
                    .columns
                    .iter()
                    .all(|&c| compare(&decoded[c], &row[c]) == Some(Ordering::Equal))
                {
                    clash = true;
                    return ControlFlow::Break(());
                }
                ControlFlow::Continue(())
            },
        )?;
        if let Some(e) = err {
            return Err(e);
        }
        if clash {
            return Err(Error::DuplicateEntry {
                value: key_display(&idx.columns, row),
                key: format!("{}.{}", table.def.name, idx.name),
            });
        }
    }
    Ok(())
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

/// Runs an INSERT.
pub fn run_insert(
    plan: &InsertPlan,
    txn: &mut Transaction,
    ctx: &dyn EvalContext,
    effects: &mut StatementEffects,
) -> Result<QueryResult> {
    let table = &plan.table;
    let def = &table.def;
    let auto_col = table.auto_increment_column();
    let mut affected = 0u64;
    let mut duplicates = 0u64;
    let mut explicit_auto: Option<u64> = None;
    for (n, exprs) in plan.rows.iter().enumerate() {
        let rowno = n as u64 + 1;
        let mut row = vec![Value::Null; def.columns.len()];
        let mut given = vec![false; def.columns.len()];
        for (slot, &c) in plan.columns.iter().enumerate() {
            if let Some(e) = &exprs[slot] {
                row[c] = eval(e, &no_row(ctx))?;
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
        if let Some(a) = auto_col {
            let v = &row[a];
            let zero = v.is_null() || v.to_i64() == Some(0);
            if zero {
                let id = table.auto_increment.fetch_add(1, AtomicOrdering::Relaxed) + 1;
                row[a] = coerce(
                    Value::UInt(id),
                    def.columns[a].ty,
                    &def.columns[a].name,
                    rowno,
                )?;
                if effects.generated_id.is_none() {
                    effects.generated_id = Some(id);
                }
            } else if let Some(x) = v.to_i64() {
                if x > 0 {
                    table
                        .auto_increment
                        .fetch_max(x as u64, AtomicOrdering::Relaxed);
                    explicit_auto = Some(x as u64);
                }
            }
        }
        for (c, col) in def.columns.iter().enumerate() {
            if row[c].is_null() && !col.nullable {
                return Err(Error::BadNull(col.name.clone()));
            }
        }
        let pk = if table.hidden_pk() {
            hidden_key(table.row_id.fetch_add(1, AtomicOrdering::Relaxed) + 1)
        } else {
            primary_key(table, &row)
        };
        txn.lock(&row_lock_key(table, &pk))?;
        if txn.get(def.id, &pk, ReadMode::Current)?.is_some() {
            if plan.ignore {
                duplicates += 1;
                effects.warnings.push((
                    1062,
                    format!(
                        "Duplicate entry '{}' for key '{}.PRIMARY'",
                        key_display(&def.primary_key, &row),
                        def.name
                    ),
                ));
                continue;
            }
            return Err(pk_duplicate(table, &row));
        }
        match check_unique(txn, table, &row, &pk, None) {
            Ok(()) => {}
            Err(Error::DuplicateEntry { value, key }) if plan.ignore => {
                duplicates += 1;
                effects
                    .warnings
                    .push((1062, format!("Duplicate entry '{value}' for key '{key}'")));
                continue;
            }
            Err(e) => return Err(e),
        }
        let keys = index_keys(table, &row);
        txn.put(def.id, pk, encode_row(&row), Vec::new(), keys);
        affected += 1;
    }
    let info = if plan.rows.len() > 1 {
        format!(
            "Records: {}  Duplicates: {}  Warnings: {}",
            plan.rows.len(),
            duplicates,
            effects.warnings.len()
        )
    } else {
        String::new()
    };
    Ok(QueryResult::Ok {
        affected_rows: affected,
        last_insert_id: effects.generated_id.or(explicit_auto).unwrap_or(0),
        info,
        warnings: effects.warnings.len() as u16,
    })
}

/// Runs an UPDATE. With `found_rows` (CLIENT_FOUND_ROWS) affected rows are the
/// matched rows, else the changed rows, as in MySQL.
pub fn run_update(
    plan: &UpdatePlan,
    txn: &mut Transaction,
    ctx: &dyn EvalContext,
    found_rows: bool,
) -> Result<QueryResult> {
    let table = &plan.table;
    let def = &table.def;
    let limit = plan
        .limit
        .as_ref()
        .map(|e| eval(e, &no_row(ctx)).and_then(eval_count))
        .transpose()?;
    let mut matched = 0u64;
    let mut changed = 0u64;
    let pk_cols: HashSet<usize> = def.primary_key.iter().copied().collect();
    let touches_pk = plan.assignments.iter().any(|(c, _)| pk_cols.contains(c));
    for_each_locked_row(
        txn,
        table,
        &plan.access,
        plan.filter.as_ref(),
        limit,
        ctx,
        &mut |txn, pk, old| {
            matched += 1;
            let mut new = old.clone();
            for (c, e) in &plan.assignments {
                let v = eval(
                    e,
                    &Env {
                        row: &new,
                        aggs: &[],
                        ctx,
                    },
                )?;
                let col = &def.columns[*c];
                let v = coerce(v, col.ty, &col.name, matched)?;
                if v.is_null() && !col.nullable {
                    return Err(Error::BadNull(col.name.clone()));
                }
                new[*c] = v;
            }
            if new.iter().zip(&old).all(|(a, b)| a == b) {
                return Ok(());
            }
            changed += 1;
            let old_keys = index_keys(table, &old);
            let new_keys = index_keys(table, &new);
            let new_pk = if touches_pk && !table.hidden_pk() {
                primary_key(table, &new)
            } else {
                pk.clone()
            };
            if new_pk != pk {
                txn.lock(&row_lock_key(table, &new_pk))?;
                if txn.get(def.id, &new_pk, ReadMode::Current)?.is_some() {
                    return Err(pk_duplicate(table, &new));
                }
                // Unique values the row keeps are its own (its old primary key
                // is deleted by this same statement): only changed ones collide.
                check_unique(txn, table, &new, &new_pk, Some(&old))?;
                txn.delete(def.id, pk, old_keys);
                txn.put(def.id, new_pk, encode_row(&new), Vec::new(), new_keys);
            } else {
                check_unique(txn, table, &new, &pk, Some(&old))?;
                txn.put(def.id, pk, encode_row(&new), old_keys, new_keys);
            }
            Ok(())
        },
    )?;
    Ok(QueryResult::Ok {
        affected_rows: if found_rows { matched } else { changed },
        last_insert_id: 0,
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
    let mut deleted = 0u64;
    for_each_locked_row(
        txn,
        table,
        &plan.access,
        plan.filter.as_ref(),
        limit,
        ctx,
        &mut |txn, pk, old| {
            txn.delete(table.def.id, pk, index_keys(table, &old));
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
