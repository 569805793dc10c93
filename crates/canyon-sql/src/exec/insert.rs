//! INSERT, with its duplicate-key handling (IGNORE, ON DUPLICATE KEY UPDATE,
//! REPLACE) and AUTO_INCREMENT: the section comment below gives the rules
//! and the affected-row arithmetic.

use super::{dml::*, read::*};
use crate::catalog::perfschema::IoWrite;
use crate::catalog::routines::{TriggerEvent, TriggerTiming};
use crate::catalog::rows::*;
use crate::catalog::Table;
use crate::exec::foreign::{self, FkScope};
use crate::expr::eval::coerce_column;
use crate::expr::functions::Func;
use crate::expr::{eval, Env, EvalContext, Expr};
use crate::plan::{InsertPlan, OnDuplicate};
use crate::types::coerce;
use crate::types::result::QueryResult;
use crate::types::value::{compare_as, Value};
use canyon_common::{Error, Result};
use canyon_storage::KeyRange;
use canyon_txn::{ReadMode, Transaction};
use std::cmp::Ordering;
use std::ops::ControlFlow;
use std::sync::atomic::Ordering as AtomicOrdering;

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
pub(crate) enum KeyHit {
    /// The primary key.
    Primary,
    /// The unique index at this position of `def.indexes`.
    Unique(usize),
}

/// An existing row an inserted row collides with, locked and read at its latest
/// version.
pub(crate) struct Conflict {
    pub(crate) key: KeyHit,
    pub(crate) pk: Vec<u8>,
    pub(crate) row: Vec<Value>,
}

/// The encoded value of `row` in unique index `idx`, or `None` when one of its
/// columns is NULL (NULLs never collide).
pub(crate) fn unique_key(table: &Table, idx: usize, row: &[Value]) -> Option<Vec<u8>> {
    let index = &table.def.indexes[idx];
    if index.columns.iter().any(|&c| row[c].is_null()) {
        return None;
    }
    let mut key = Vec::new();
    for &c in &index.columns {
        crate::catalog::rows::encode_column_key(&table.def.columns[c], &row[c], &mut key);
    }
    Some(key)
}

/// Locks the unique value `key` of index `idx` and finds a live row other than
/// `pk` that holds the same value as `row`: its primary key and decoded row, as
/// read before locking that row.
pub(crate) fn unique_holder(
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
pub(crate) fn same_columns(table: &Table, cols: &[usize], a: &[Value], b: &[Value]) -> bool {
    same_columns_by(table, cols, |c| &a[c], b)
}

/// [`same_columns`] with the first row given column by column.
pub(crate) fn same_columns_by<'a>(
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
pub(crate) fn check_unique(
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
pub(crate) const CONFLICT_RETRIES: usize = 1000;

/// Finds the first existing row that `row` (to be stored at `pk`) collides with:
/// the primary key first, then each unique index in order. Locks every key value
/// it looks at, and the colliding row, which it returns at its latest version.
pub(crate) fn find_conflict(
    txn: &mut Transaction,
    table: &Table,
    row: &[Value],
    pk: &[u8],
) -> Result<Option<Conflict>> {
    let def = &table.def;
    // The insert intention comes first, as InnoDB's does: a wait for a range
    // lock that times out leaves nothing of this row locked (taken after the
    // row lock, it would leave the key locked against the range's owner).
    txn.insert_intention(def.id, pk, true, &index_keys(table, row))?;
    lock_row(txn, table, pk)?;
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
            lock_row(txn, table, &other_pk)?;
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

/// The key values of a duplicate-entry message, each as its column shows
/// it: a FLOAT(M,D) / DOUBLE(M,D) with its D digits (`100000.00000`, where
/// the bare double is `100000`), as MySQL prints the field; a YEAR as
/// `0000`, MariaDB's YEAR(2) as `01`.
pub(crate) fn key_display(table: &Table, cols: &[usize], row: &[Value]) -> String {
    use crate::types::SqlType;
    cols.iter()
        .map(|&c| match (&row[c], table.def.columns[c].ty) {
            (Value::UInt(y), SqlType::Year) if table.def.columns[c].is_year2() => {
                format!("{:02}", y % 100)
            }
            (Value::UInt(y), SqlType::Year) => format!("{y:04}"),
            (
                Value::Double(v),
                SqlType::Float {
                    digits: Some((_, d)),
                    ..
                }
                | SqlType::Double {
                    digits: Some((_, d)),
                    ..
                },
            ) if v.is_finite() => format!("{:.*}", usize::from(d), v),
            // A BIT is its bytes, as the protocol sends it; a byte that is no
            // printable ASCII shows as `\xNN` (MySQL's `err_conv`): `'\x01'`.
            (Value::UInt(v), SqlType::Bit(n)) => {
                let bytes = usize::from(n.clamp(1, 64)).div_ceil(8);
                v.to_be_bytes()[8 - bytes..]
                    .iter()
                    .map(|&b| {
                        if (0x20..0x7f).contains(&b) {
                            char::from(b).to_string()
                        } else {
                            format!("\\x{b:02X}")
                        }
                    })
                    .collect()
            }
            (v, _) => v.to_display(),
        })
        .collect::<Vec<_>>()
        .join("-")
}

pub(crate) fn pk_duplicate(table: &Table, row: &[Value]) -> Error {
    Error::DuplicateEntry {
        value: key_display(table, &table.def.primary_key, row),
        key: format!("{}.PRIMARY", table.def.name),
    }
}

pub(crate) fn unique_duplicate(table: &Table, idx: usize, row: &[Value]) -> Error {
    let index = &table.def.indexes[idx];
    Error::DuplicateEntry {
        value: key_display(table, &index.columns, row),
        key: format!("{}.{}", table.def.name, index.name),
    }
}

pub(crate) fn conflict_error(table: &Table, hit: KeyHit, row: &[Value]) -> Error {
    match hit {
        KeyHit::Primary => pk_duplicate(table, row),
        KeyHit::Unique(i) => unique_duplicate(table, i, row),
    }
}

/// Whether `hit` is the last key a REPLACE checks: no unique index after it.
pub(crate) fn is_last_unique_key(table: &Table, hit: KeyHit) -> bool {
    let after = match hit {
        KeyHit::Primary => 0,
        KeyHit::Unique(i) => i + 1,
    };
    !table.def.indexes[after..].iter().any(|i| i.unique)
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
pub(crate) struct AutoInc {
    /// Rows in the statement: the size of the first reservation.
    pub(crate) estimate: u64,
    /// Next value to hand out (0: none reserved yet).
    pub(crate) next: u64,
    /// End (exclusive) of the reserved interval.
    pub(crate) end: u64,
    /// Reservations made so far.
    pub(crate) intervals: u32,
}

impl AutoInc {
    pub(crate) fn new(rows: usize) -> AutoInc {
        AutoInc {
            estimate: rows.max(1) as u64,
            next: 0,
            end: 0,
            intervals: 0,
        }
    }

    /// The next number. Once the counter has handed out (or seen) the
    /// largest BIGINT UNSIGNED there is none: error 1467, as MySQL's
    /// handler answers when it cannot reserve one.
    pub(crate) fn take(&mut self, table: &Table) -> Result<u64> {
        if self.next == 0 || self.next >= self.end {
            let n = if self.intervals == 0 {
                self.estimate
            } else {
                1u64 << self.intervals.min(16)
            };
            // `auto_increment` holds the largest value handed out or seen;
            // the reservation stops at u64::MAX rather than wrap to 0.
            let last = table
                .auto_increment
                .fetch_update(AtomicOrdering::Relaxed, AtomicOrdering::Relaxed, |c| {
                    (c < u64::MAX).then_some(c.saturating_add(n))
                })
                .map_err(|_| Error::Sql {
                    code: 1467,
                    sqlstate: *b"HY000",
                    message: "Failed to read auto-increment value from storage engine".into(),
                })?;
            let first = last + 1;
            self.intervals += 1;
            self.next = first;
            self.end = first.saturating_add(n);
        }
        let v = self.next;
        self.next = self.next.saturating_add(1);
        Ok(v)
    }

    /// `SET insert_id = v`: the statement's first generated value is `v`,
    /// the next ones follow it (MySQL's forced auto-increment interval).
    pub(crate) fn force(&mut self, table: &Table, v: u64) {
        self.next = v;
        self.end = v.saturating_add(self.estimate);
        table
            .auto_increment
            .fetch_max(self.end - 1, AtomicOrdering::Relaxed);
        self.intervals += 1;
    }

    /// A row that took `v` was not inserted: the next row takes `v` again.
    pub(crate) fn give_back(&mut self, v: u64) {
        self.next = v;
    }

    /// The row carries the value `v` (given explicitly, or set by an update).
    pub(crate) fn seen(&mut self, table: &Table, v: u64) {
        table.auto_increment.fetch_max(v, AtomicOrdering::Relaxed);
        if self.next > 0 && v >= self.next {
            self.next = v.saturating_add(1);
        }
    }
}

/// The positive integer value of an AUTO_INCREMENT column, if any.
pub(crate) fn auto_value(v: &Value) -> Option<u64> {
    match v {
        // A BIGINT UNSIGNED past i64 (18446744073709551615 leaves no next).
        Value::UInt(u) => (*u > 0).then_some(*u),
        v => v.to_i64().filter(|&x| x > 0).map(|x| x as u64),
    }
}

/// Counters of one INSERT / REPLACE, named as in MySQL's `COPY_INFO`.
#[derive(Debug, Default)]
pub struct InsertStats {
    /// Rows the statement tried.
    pub records: u64,
    /// Rows inserted, or changed by ON DUPLICATE KEY UPDATE.
    pub copied: u64,
    /// Rows deleted (or overwritten in place) by REPLACE.
    pub deleted: u64,
    /// Rows changed by ON DUPLICATE KEY UPDATE.
    pub updated: u64,
    /// Rows found by ON DUPLICATE KEY UPDATE, changed or not.
    pub touched: u64,
}

/// Evaluates one VALUES row into the values of the plan's columns (`None`:
/// DEFAULT).
pub(crate) fn eval_values(
    exprs: &[Option<Expr>],
    ctx: &dyn EvalContext,
) -> Result<Vec<Option<Value>>> {
    exprs
        .iter()
        .map(|e| e.as_ref().map(|e| eval(e, &no_row(ctx))).transpose())
        .collect()
}

/// Makes a full table row of the values of the plan's columns (`None`:
/// DEFAULT): defaults for the columns not given, each value coerced to its
/// column's type. The AUTO_INCREMENT column is left as given (NULL when not
/// given). A NOT NULL column without a default and not given is error 1364
/// in strict mode, else its implicit default with warning 1364 —
/// or, with `missing` (a BEFORE INSERT trigger will run, and may set it, as
/// the Sakila sample's `customer_create_date` does), NULL here and its
/// position pushed to `missing`, for the caller to check after the trigger.
pub(crate) fn build_row(
    plan: &InsertPlan,
    values: Vec<Option<Value>>,
    ctx: &dyn EvalContext,
    rowno: u64,
    mut missing: Option<&mut Vec<usize>>,
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
        if col.attrs.generated.is_some() {
            // Computed once the row is complete (`insert_rows`).
            continue;
        }
        if !given[c] && !col.auto_increment {
            // A TIMESTAMP's literal default is an instant.
            let instant = matches!(col.ty, crate::types::SqlType::Timestamp(_))
                .then(|| crate::catalog::timestamp_default(col, &ctx.time_zone()))
                .flatten();
            row[c] = match &col.default {
                Some(_) if instant.is_some() => instant.unwrap_or(Value::Null),
                Some(d) => crate::catalog::default_value(d, || {
                    crate::types::datetime::truncate_datetime(ctx.now(), col.ty.fsp())
                }),
                None if col.nullable => Value::Null,
                None => match missing.as_deref_mut() {
                    Some(m) => {
                        m.push(c);
                        continue;
                    }
                    // INSERT IGNORE or a non-strict sql_mode: the implicit
                    // default, with the error as warning 1364 (MySQL 8:
                    // `INSERT INTO t(a) VALUES (1)` under sql_mode='' stores
                    // 0 in a NOT NULL INT b without a default). Strict mode
                    // fails here, before the row meets a duplicate key.
                    None if plan.ignore || !strict_mode(ctx) => {
                        ctx.warn(
                            1364,
                            &format!("Field '{}' doesn't have a default value", col.name),
                        );
                        super::load::implicit_default(col.ty)
                    }
                    None => return Err(Error::NoDefault(col.name.clone())),
                },
            };
        }
        if Some(c) != auto_col || !row[c].is_null() {
            row[c] = store_column(
                std::mem::replace(&mut row[c], Value::Null),
                col,
                rowno,
                ctx,
                plan.ignore,
            )?;
        }
    }
    Ok(row)
}

/// Whether the session's `sql_mode` is strict (STRICT_TRANS_TABLES or
/// STRICT_ALL_TABLES: every table here is transactional). Asked only when a
/// row lacks a value for a NOT NULL column.
fn strict_mode(ctx: &dyn EvalContext) -> bool {
    ctx.sys_var("sql_mode").is_ok_and(|m| {
        m.to_display().split(',').any(|f| {
            f.trim().eq_ignore_ascii_case("STRICT_TRANS_TABLES")
                || f.trim().eq_ignore_ascii_case("STRICT_ALL_TABLES")
        })
    })
}

/// What became of one row of an INSERT.
pub(crate) enum RowOutcome {
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
    if plan.delayed {
        // MySQL 8 runs INSERT / REPLACE DELAYED as the plain statement.
        let word = match plan.on_duplicate {
            OnDuplicate::Replace => "REPLACE",
            _ => "INSERT",
        };
        ctx.warn(
            3005,
            &format!(
                "{word} DELAYED is no longer supported. The statement was converted to {word}."
            ),
        );
    }
    // The source of INSERT ... SELECT is read whole before the first row is
    // inserted (see the module doc).
    let selected = match &plan.select {
        Some(q) => Some(run_source(q, txn, ctx)?),
        None => None,
    };
    // INSERT ... SELECT does not know its row count in advance: InnoDB then
    // reserves AUTO_INCREMENT values 1, 2, 4, ... at a time (sql_insert.cc starts
    // the bulk insert with an estimate of 0 rows).
    let estimate = if selected.is_some() {
        1
    } else {
        plan.rows.len()
    };
    let nrows = selected.as_ref().map_or(plan.rows.len(), Vec::len);
    let mut selected = selected.map(Vec::into_iter);
    let mut n = 0;
    let mut next = |_: &mut StatementEffects, _: u64| -> Result<Option<Vec<Option<Value>>>> {
        if n >= nrows {
            return Ok(None);
        }
        let values = match selected.as_mut() {
            Some(rows) => rows
                .next()
                .ok_or_else(|| Error::Internal("INSERT ... SELECT: a row vanished".into()))?
                .into_iter()
                .map(Some)
                .collect(),
            None => eval_values(&plan.rows[n], ctx)?,
        };
        n += 1;
        Ok(Some(values))
    };
    let (stats, last_auto) = insert_rows(plan, txn, ctx, effects, estimate, &mut next)?;
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

/// Where the rows of an insert come from: called with the statement's
/// effects (for warnings) and the 1-based number of the row asked for, it
/// gives the values of the plan's columns (`None`: DEFAULT), or `None` when
/// there are no more rows. LOAD DATA's reader is one (`crate::session`'s
/// `load`), the VALUES list and INSERT ... SELECT another.
pub type RowSource<'s> =
    dyn FnMut(&mut StatementEffects, u64) -> Result<Option<Vec<Option<Value>>>> + 's;

/// Inserts the rows `next` gives under `plan`'s duplicate-key rules, the
/// AUTO_INCREMENT rules and the table's triggers and foreign keys; returns
/// the counters and the AUTO_INCREMENT value of the last row processed.
/// `estimate` is the number of rows expected (the first AUTO_INCREMENT
/// reservation). `plan.rows` and `plan.select` are not read.
pub fn insert_rows(
    plan: &InsertPlan,
    txn: &mut Transaction,
    ctx: &dyn EvalContext,
    effects: &mut StatementEffects,
    estimate: usize,
    next: &mut RowSource<'_>,
) -> Result<(InsertStats, u64)> {
    let table = &plan.table;
    let def = &table.def;
    let auto_col = table.auto_increment_column();
    let mut auto = AutoInc::new(estimate);
    if auto_col.is_some() {
        let forced = ctx.sys_var("insert_id").ok().and_then(|v| v.to_i64());
        if let Some(v) = forced.filter(|&v| v > 0) {
            auto.force(table, v as u64);
        }
    }
    let mut stats = InsertStats::default();
    let mut fk = FkScope::new(plan.fk.as_ref(), ctx)?;
    // The AUTO_INCREMENT value of the last row processed, which MySQL reports in
    // the OK packet when no value was generated (sql_insert.cc: the value of
    // `next_number_field` once the statement is done).
    let mut last_auto: u64 = 0;
    let router = crate::plan::partition::Router::new(table)?;
    // Row triggers (see `crate::session` routines): asked once per statement.
    let trig_insert = ctx.has_triggers(def, TriggerEvent::Insert);
    let trig_update = matches!(plan.on_duplicate, OnDuplicate::Update(_))
        && ctx.has_triggers(def, TriggerEvent::Update);
    let trig_delete = matches!(plan.on_duplicate, OnDuplicate::Replace)
        && ctx.has_triggers(def, TriggerEvent::Delete);
    let generator = crate::plan::generated::Generator::new(table)?;
    // NULL into a NOT NULL column is error 1048 for a single-row INSERT;
    // for several rows (VALUES lists, INSERT ... SELECT) outside strict mode
    // MySQL warns 1048 and stores the implicit default (its
    // `abort_on_warning || single row`). Asked only when it happens.
    let null_warns = || plan.rows.len() != 1 && !strict_mode(ctx);
    let mut rowno = 0u64;
    loop {
        rowno += 1;
        let Some(values) = next(effects, rowno)? else {
            break;
        };
        stats.records += 1;
        let mut missing = Vec::new();
        let mut row = build_row(
            plan,
            values,
            ctx,
            rowno,
            trig_insert.then_some(&mut missing),
        )?;
        if let Some(g) = &generator {
            g.fill(table, &mut row, ctx, rowno)?;
        }
        if trig_insert {
            // BEFORE INSERT sees the defaults, and an AUTO_INCREMENT column
            // still 0; what it assigns to NEW is what is stored.
            ctx.fire_triggers(
                txn,
                def,
                TriggerTiming::Before,
                TriggerEvent::Insert,
                None,
                Some(&mut row),
            )?;
            // Generated columns follow what the trigger set (as MySQL
            // computes them again after BEFORE triggers).
            if let Some(g) = &generator {
                g.fill(table, &mut row, ctx, rowno)?;
            }
            // A column with no default that the trigger left unset: 1364,
            // as MariaDB and MySQL answer after their BEFORE triggers.
            if let Some(&c) = missing.iter().find(|&&c| row[c].is_null()) {
                return Err(Error::NoDefault(def.columns[c].name.clone()));
            }
        }
        // NOT NULL is checked as the values are stored into the row, before
        // write_row() generates an AUTO_INCREMENT value: a failing row uses up no
        // id (NULL in the AUTO_INCREMENT column itself asks for one).
        for (c, col) in def.columns.iter().enumerate() {
            if row[c].is_null() && !col.nullable && Some(c) != auto_col {
                if !plan.ignore && !null_warns() {
                    return Err(Error::BadNull(col.name.clone()));
                }
                // INSERT IGNORE, or a multi-row INSERT outside strict mode:
                // the implicit default, with the error as a warning, as
                // UPDATE IGNORE does.
                ctx.warn(1048, &format!("Column '{}' cannot be null", col.name));
                row[c] = super::load::implicit_default(col.ty);
            }
        }
        let mut generated = None;
        if let Some(a) = auto_col {
            let v = &row[a];
            if v.is_null() || v.to_i64() == Some(0) {
                // A 0 here may be an explicit value clipped to 0 (a negative
                // number into an UNSIGNED column) whose 1264 the statement
                // raises in strict mode: that error, not 167, is MySQL's.
                let asked = v.is_null();
                let id = match auto.take(table) {
                    Ok(id) => id,
                    Err(_) if !asked => {
                        return Err(Error::OutOfRange {
                            column: def.columns[a].name.clone(),
                            row: rowno,
                        })
                    }
                    Err(e) => return Err(e),
                };
                row[a] = coerce(
                    Value::UInt(id),
                    def.columns[a].ty,
                    &def.columns[a].name,
                    rowno,
                )
                .map_err(|e| match e {
                    // The next number is past the column's type: the
                    // handler's error 167 (HA_ERR_AUTOINC_ERANGE) in MySQL 8
                    // and MariaDB, with 1264's text and SQLSTATE.
                    Error::OutOfRange { column, row } if asked => Error::Sql {
                        code: 167,
                        sqlstate: *b"22003",
                        message: format!("Out of range value for column '{column}' at row {row}"),
                    },
                    e => e,
                })?;
                generated = Some(id);
            } else if let Some(x) = auto_value(v) {
                auto.seen(table, x);
            }
        }
        if let Err(e) = super::partition::place_row(router.as_ref(), &row, ctx) {
            // INSERT IGNORE: the row is skipped with the error as a warning.
            match e {
                Error::Partition { code, message } if plan.ignore => {
                    effects.warnings.push((code, message));
                    if let Some(id) = generated {
                        auto.give_back(id);
                    }
                    continue;
                }
                e => return Err(e),
            }
        }
        let pk = if table.hidden_pk() {
            hidden_key(table.row_id.fetch_add(1, AtomicOrdering::Relaxed) + 1)
        } else {
            primary_key(table, &row)
        };
        let outcome = match &plan.on_duplicate {
            OnDuplicate::Error if txn.bulk_table() == Some(def.id) => {
                // A bulk load (LOAD DATA into an empty table closed to other
                // writers, `crate::session`'s load and canyon_txn's bulk.rs):
                // no lock, no check; duplicates are found when its sorted
                // runs merge.
                check_writable(table)?;
                txn.bulk_put(
                    &pk,
                    &encode_table_row(table, &row),
                    &index_keys(table, &row),
                )?;
                crate::exec::journal::log_write(txn, table, &row);
                RowOutcome::Inserted
            }
            OnDuplicate::Error => match find_conflict(txn, table, &row, &pk)? {
                None => insert_new(txn, fk.as_mut(), table, pk, &row, plan.ignore, effects)?,
                Some(c) if plan.ignore => {
                    // Raised in the row's turn, after the warnings its values
                    // raised and before the next row's, as MySQL lists them.
                    if let Error::DuplicateEntry { value, key } = conflict_error(table, c.key, &row)
                    {
                        ctx.warn(1062, &format!("Duplicate entry '{value}' for key '{key}'"));
                    }
                    RowOutcome::Skipped
                }
                Some(c) => return Err(conflict_error(table, c.key, &row)),
            },
            OnDuplicate::Replace => {
                stats.deleted += replace_row(txn, table, &pk, &row, fk.as_mut(), trig_delete, ctx)?;
                RowOutcome::Inserted
            }
            OnDuplicate::Update(assignments) => match find_conflict(txn, table, &row, &pk)? {
                None => insert_new(txn, fk.as_mut(), table, pk, &row, plan.ignore, effects)?,
                Some(mut c) => {
                    // The existing row's TIMESTAMPs read in the session's zone.
                    crate::catalog::rows::localize_row(&mut c.row, &ctx.time_zone());
                    let mut new =
                        upsert_values(table, assignments, &c.row, &row, ctx, rowno, effects)?;
                    if let Some(g) = &generator {
                        g.fill(table, &mut new, ctx, rowno)?;
                    }
                    if trig_update {
                        ctx.fire_triggers(
                            txn,
                            def,
                            TriggerTiming::Before,
                            TriggerEvent::Update,
                            Some(&c.row),
                            Some(&mut new),
                        )?;
                    }
                    super::partition::place_row(router.as_ref(), &new, ctx)?;
                    let after_update = |txn: &mut Transaction, new: &[Value]| {
                        if !trig_update {
                            return Ok(());
                        }
                        ctx.fire_triggers(
                            txn,
                            def,
                            TriggerTiming::After,
                            TriggerEvent::Update,
                            Some(&c.row),
                            Some(&mut new.to_vec()),
                        )
                    };
                    if new == c.row {
                        after_update(txn, &new)?;
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
                                after_update(txn, &new)?;
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
        if trig_insert && matches!(outcome, RowOutcome::Inserted) {
            ctx.fire_triggers(
                txn,
                def,
                TriggerTiming::After,
                TriggerEvent::Insert,
                None,
                Some(&mut row.clone()),
            )?;
        }
        match outcome {
            RowOutcome::Inserted => ctx.note_write(def, IoWrite::Insert, 1),
            RowOutcome::Updated { changed: true } => ctx.note_write(def, IoWrite::Update, 1),
            _ => {}
        }
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
    Ok((stats, last_auto))
}

/// Records a duplicate-key (1062) or missing-parent (1452) error that IGNORE
/// turns into a warning.
pub(crate) fn skip_warning(effects: &mut StatementEffects, e: Error) {
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
pub(crate) fn insert_new(
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

/// Stores a new row at `pk` (its keys are known to be free: the caller ran
/// [`find_conflict`], which also registered the row's insert intention),
/// after its foreign keys found their parents.
pub(crate) fn insert_checked(
    txn: &mut Transaction,
    fk: Option<&mut FkScope<'_>>,
    table: &Table,
    pk: Vec<u8>,
    row: &[Value],
) -> Result<()> {
    check_writable(table)?;
    if let Some(scope) = fk {
        foreign::check_parents(txn, scope, table, row, None)?;
    }
    // The insert intention over the new keys was registered by
    // `find_conflict`, which every caller ran first.
    let keys = index_keys(table, row);
    txn.put(
        table.def.id,
        pk,
        encode_table_row(table, row),
        Vec::new(),
        keys,
    );
    crate::exec::journal::log_write(txn, table, row);
    Ok(())
}

/// Evaluates the value of an assignment (`SET col = e`, ON DUPLICATE KEY UPDATE).
/// `col = LAST_INSERT_ID(expr)` is MySQL's idiom for handing a value back through
/// LAST_INSERT_ID(): a sequence table (`UPDATE seq SET id = LAST_INSERT_ID(id + 1)`)
/// or the id of the row an upsert updated (`... UPDATE id = LAST_INSERT_ID(id)`).
/// The argument's value, as an unsigned integer, becomes the statement's insert
/// id (the OK packet's and the session's LAST_INSERT_ID()), recorded in
/// `effects.generated_id`. Only this top-level form sets it here.
pub(crate) fn eval_assignment(
    e: &Expr,
    env: &Env<'_>,
    effects: &mut StatementEffects,
) -> Result<Value> {
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
pub(crate) fn upsert_values(
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
        let v = coerce_column(v, col, rowno, ctx)?;
        if v.is_null() && !col.nullable {
            return Err(Error::BadNull(col.name.clone()));
        }
        frame[*c] = v;
    }
    frame.truncate(ncols);
    // ON UPDATE CURRENT_TIMESTAMP, as in an UPDATE: only when the row changed.
    if frame.as_slice() != existing {
        for (c, col) in table.def.columns.iter().enumerate() {
            if col.attrs.on_update_now && !assignments.iter().any(|(a, _)| *a == c) {
                // coerce_column: a TIMESTAMP stores the instant.
                frame[c] = coerce_column(
                    Value::DateTime(crate::types::datetime::truncate_datetime(
                        ctx.now(),
                        col.ty.fsp(),
                    )),
                    col,
                    rowno,
                    ctx,
                )?;
            }
        }
    }
    Ok(frame)
}

/// Stores `row` (at `pk`) for a REPLACE: deletes each row it collides with, or
/// overwrites the last one in place (see the section comment). Returns the rows
/// deleted, counting an in-place overwrite that changed the row as one.
///
/// A deleted row is a parent row deleted (its children's ON DELETE applies);
/// an overwrite in place is an update.
pub(crate) fn replace_row(
    txn: &mut Transaction,
    table: &Table,
    pk: &[u8],
    row: &[Value],
    mut fk: Option<&mut FkScope<'_>>,
    delete_triggers: bool,
    ctx: &dyn EvalContext,
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
        // ... and, as MySQL's write_record, not when the table has DELETE
        // triggers: they fire for the deleted row.
        if is_last_unique_key(table, c.key) && !referenced && !delete_triggers {
            if c.row.as_slice() != row {
                write_update(txn, table, c.pk, OldRow::Row(&c.row), row, fk, 0)?;
                deleted += 1;
            }
            return Ok(deleted);
        }
        if delete_triggers {
            ctx.fire_triggers(
                txn,
                def,
                TriggerTiming::Before,
                TriggerEvent::Delete,
                Some(&c.row),
                None,
            )?;
        }
        txn.delete(def.id, c.pk, index_keys(table, &c.row));
        crate::exec::journal::log_delete(txn, table, &c.row);
        if let Some(scope) = fk.as_deref_mut() {
            foreign::on_parent_change(txn, scope, table, OldRow::Row(&c.row), None, 0)?;
        }
        if delete_triggers {
            ctx.fire_triggers(
                txn,
                def,
                TriggerTiming::After,
                TriggerEvent::Delete,
                Some(&c.row),
                None,
            )?;
        }
        deleted += 1;
    }
    Err(Error::Internal(
        "REPLACE: a colliding row remained after deleting one per key".into(),
    ))
}
