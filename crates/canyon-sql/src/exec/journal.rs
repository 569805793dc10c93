//! Row changes recorded for the binary log, in the order they are made.
//!
//! When the binary log is on, a session turns on its transaction's journal
//! (canyon-txn, `Transaction::enable_journal`) and every row write the
//! executors make is also recorded here: an insert with its row, a delete
//! with the row it removes, an update with both images. The write buffer
//! cannot give this back (it holds one final value per key, in key order),
//! and a replica must apply the changes as they were made: `UPDATE t SET u =
//! u + 1 ORDER BY u DESC` on a unique `u` succeeds only in that order.
//!
//! The journal undoes with the statement or savepoint that wrote it
//! (canyon-txn keeps the marks). At commit `crate::binlog` turns the entries
//! into binary-log events. TEMPORARY tables are not logged (MySQL 8's row
//! format does not log them either).
//!
//! An entry: `kind u8 ++ table u32 ++ db_len u8 ++ db ++ name_len u8 ++ name
//! ++ (len u32 ++ row)` for each image the kind has (W: after; D: before; U:
//! before, after). The names find the table in the catalog at commit
//! without an index by id; the id tells a table dropped and created again. Rows are
//! [`crate::types::encoding::encode_row`]s of every column in declaration
//! order, generated ones included, as a row image in the binary log has them.

use crate::catalog::temporary::is_temporary;
use crate::catalog::Table;
use crate::types::encoding::{decode_row, encode_row};
use crate::types::value::Value;
use canyon_common::{Error, Result};
use canyon_txn::{TableId, Transaction};

/// What a journal entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// A new row (INSERT, the insert half of REPLACE, LOAD DATA).
    Write,
    /// A changed row.
    Update,
    /// A removed row.
    Delete,
}

impl ChangeKind {
    fn code(self) -> u8 {
        match self {
            ChangeKind::Write => b'W',
            ChangeKind::Update => b'U',
            ChangeKind::Delete => b'D',
        }
    }
}

/// A decoded journal entry.
#[derive(Debug, Clone, PartialEq)]
pub struct RowChange {
    /// What happened.
    pub kind: ChangeKind,
    /// The table it happened to.
    pub table: TableId,
    /// Its database.
    pub db: String,
    /// Its name.
    pub name: String,
    /// The row before (Update, Delete).
    pub before: Option<Vec<Value>>,
    /// The row after (Write, Update).
    pub after: Option<Vec<Value>>,
}

fn wanted(txn: &Transaction, table: &Table) -> bool {
    txn.journaling() && !is_temporary(table.def.id)
}

fn push(txn: &mut Transaction, kind: ChangeKind, table: &Table, images: &[&[u8]]) {
    let mut e = Vec::with_capacity(5 + images.iter().map(|i| 4 + i.len()).sum::<usize>());
    e.push(kind.code());
    e.extend_from_slice(&table.def.id.to_be_bytes());
    for name in [&table.def.db, &table.def.name] {
        // Identifiers are at most 64 characters (256 bytes in UTF-8 would
        // need more; MySQL's limit keeps them far below).
        let n = name.len().min(255);
        e.push(n as u8);
        e.extend_from_slice(&name.as_bytes()[..n]);
    }
    for img in images {
        e.extend_from_slice(&(img.len() as u32).to_be_bytes());
        e.extend_from_slice(img);
    }
    txn.journal_push(&e);
}

/// Records the insert of `row` into `table`, if the journal is on.
pub(crate) fn log_write(txn: &mut Transaction, table: &Table, row: &[Value]) {
    if wanted(txn, table) {
        push(txn, ChangeKind::Write, table, &[&encode_row(row)]);
    }
}

/// Records the delete of `row` from `table`, if the journal is on.
pub(crate) fn log_delete(txn: &mut Transaction, table: &Table, row: &[Value]) {
    if wanted(txn, table) {
        push(txn, ChangeKind::Delete, table, &[&encode_row(row)]);
    }
}

/// Records the update of a row to `new` in `table`, if the journal is on;
/// `old(c)` is column `c` of the row before.
pub(crate) fn log_update(
    txn: &mut Transaction,
    table: &Table,
    old: &dyn Fn(usize) -> Value,
    new: &[Value],
) {
    if wanted(txn, table) {
        let before: Vec<Value> = (0..new.len()).map(old).collect();
        push(
            txn,
            ChangeKind::Update,
            table,
            &[&encode_row(&before), &encode_row(new)],
        );
    }
}

/// Decodes an entry made here.
pub fn decode_change(entry: &[u8]) -> Result<RowChange> {
    let bad = || Error::Internal(format!("malformed journal entry of {} bytes", entry.len()));
    let (&code, rest) = entry.split_first().ok_or_else(bad)?;
    let kind = match code {
        b'W' => ChangeKind::Write,
        b'U' => ChangeKind::Update,
        b'D' => ChangeKind::Delete,
        _ => return Err(bad()),
    };
    let table = TableId::from_be_bytes(
        rest.get(..4)
            .ok_or_else(bad)?
            .try_into()
            .map_err(|_| bad())?,
    );
    let mut at = &rest[4..];
    let mut names = [String::new(), String::new()];
    for name in &mut names {
        let (&n, tail) = at.split_first().ok_or_else(bad)?;
        let text = tail.get(..n as usize).ok_or_else(bad)?;
        *name = String::from_utf8_lossy(text).into_owned();
        at = &tail[n as usize..];
    }
    let [db, name] = names;
    let mut image = || -> Result<Vec<Value>> {
        let len = u32::from_be_bytes(at.get(..4).ok_or_else(bad)?.try_into().map_err(|_| bad())?)
            as usize;
        let bytes = at.get(4..4 + len).ok_or_else(bad)?;
        let mut row = Vec::new();
        decode_row(bytes, &mut row)?;
        at = &at[4 + len..];
        Ok(row)
    };
    let (before, after) = match kind {
        ChangeKind::Write => (None, Some(image()?)),
        ChangeKind::Delete => (Some(image()?), None),
        ChangeKind::Update => {
            let b = image()?;
            (Some(b), Some(image()?))
        }
    };
    if !at.is_empty() {
        return Err(bad());
    }
    Ok(RowChange {
        kind,
        table,
        db,
        name,
        before,
        after,
    })
}
