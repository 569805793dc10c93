//! A table's stored form: its primary-key and index keys, and its row
//! bytes, decoded through the table's column slots (which is how an instant
//! ADD / DROP COLUMN reads rows written before it; see `crate::ddl::alter`).
//!
//! Values are encoded by `crate::types::encoding`; this file knows the
//! table: which columns make each key, which slots the row holds.

use crate::catalog::Table;
use crate::types::encoding::{decode_row_columns, encode_key_value, encode_row};
use crate::types::fulltext;
use crate::types::timezone::Zone;
use crate::types::value::Value;
use crate::types::SqlType;
use canyon_common::Result;
use canyon_txn::IndexId;

pub(crate) fn scale_of(ty: SqlType) -> u8 {
    match ty {
        SqlType::Decimal {
            precision, scale, ..
        } => crate::types::encoding::decimal_key_form(precision, scale),
        _ => 0,
    }
}

/// Appends the key encoding of column `col`'s value `v`
/// ([`encode_key_value`] with the column's scale and collation), except that
/// a TIME column with `time_key_ordered` encodes its time's value: the text
/// `[-]HH:MM:SS[.f]` that a TIME holds sorts wrongly (`-02:00:00` after
/// `-01:00:00`, `100:00:00` before `99:00:00`), so the key holds the 8
/// big-endian bytes of its signed microseconds with the sign bit flipped,
/// framed as a binary string (escaped, `00 00`-terminated), which keeps the
/// key prefix-free and the framing the statistics read (`catalog::stats`).
pub(crate) fn encode_column_key(col: &crate::catalog::ColumnDef, v: &Value, out: &mut Vec<u8>) {
    if col.attrs.time_key_ordered {
        if let Value::Bytes(b) = v {
            if let Some(micros) = crate::types::datetime::parse_time(b) {
                let ordered = (micros as u64 ^ (1 << 63)).to_be_bytes();
                let key = Value::Bytes(ordered.to_vec());
                encode_key_value(&key, 0, crate::types::collation::Collation::Binary, out);
                return;
            }
        }
    }
    encode_key_value(v, scale_of(col.ty), col.collation, out);
}

/// The primary key bytes of a row. Tables without a primary key use the hidden
/// row id, which the caller supplies for new rows.
pub fn primary_key(table: &Table, row: &[Value]) -> Vec<u8> {
    let mut k = Vec::with_capacity(16);
    for &c in &table.def.primary_key {
        encode_column_key(&table.def.columns[c], &row[c], &mut k);
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
pub(crate) fn index_keys_by<'a>(
    table: &Table,
    column: impl Fn(usize) -> &'a Value,
) -> Vec<(IndexId, Vec<u8>)> {
    let mut keys = Vec::with_capacity(table.def.indexes.len());
    for idx in &table.def.indexes {
        if idx.attrs.fulltext {
            // One entry per distinct indexed word (`crate::types::fulltext`).
            let doc = fulltext_doc(table, &idx.columns, &column);
            keys.extend(doc.words().map(|w| (idx.id, fulltext::word_key(w))));
            continue;
        }
        let mut k = Vec::with_capacity(16);
        for &c in &idx.columns {
            encode_column_key(&table.def.columns[c], column(c), &mut k);
        }
        keys.push((idx.id, k));
    }
    keys
}

/// The document a FULLTEXT index over `cols` sees in a row: the columns'
/// text (NULLs left out), folded when the first column's collation is
/// case-insensitive.
pub(crate) fn fulltext_doc<'a>(
    table: &Table,
    cols: &[usize],
    column: &impl Fn(usize) -> &'a Value,
) -> fulltext::Doc {
    let fold = cols
        .first()
        .is_some_and(|&c| table.def.columns[c].collation.is_ci());
    let texts: Vec<std::borrow::Cow<'_, str>> = cols
        .iter()
        .filter_map(|&c| match column(c) {
            Value::Bytes(b) => Some(String::from_utf8_lossy(b)),
            // FULLTEXT columns are strings (1283 otherwise).
            _ => None,
        })
        .collect();
    fulltext::Doc::new(texts.iter().map(|t| t.as_ref()), fold)
}

/// The key of secondary index `i` (by position in `def.indexes`) for `row`.
pub fn index_key(table: &Table, i: usize, row: &[Value]) -> Vec<u8> {
    index_key_of(table, i, row)
}

pub(crate) fn index_key_of(table: &Table, i: usize, row: &[Value]) -> Vec<u8> {
    let mut k = Vec::with_capacity(16);
    for &c in &table.def.indexes[i].columns {
        encode_column_key(&table.def.columns[c], &row[c], &mut k);
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
        stamp_timestamps(table, row);
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
    stamp_timestamps(table, row);
    Ok(())
}

/// Turns each TIMESTAMP column's stored instant (a UTC date and time) into a
/// [`Value::Stamp`] read in UTC, so that rows fresh from storage compare with
/// rows being written by instant; [`localize_row`] then reads them in the
/// session's zone. See `crate::types::timezone`, "TIMESTAMP columns".
fn stamp_timestamps(table: &Table, row: &mut [Value]) {
    for (v, col) in row.iter_mut().zip(&table.def.columns) {
        if let (Value::DateTime(utc), SqlType::Timestamp(_)) = (&*v, col.ty) {
            *v = Value::Stamp(crate::types::value::Stamp {
                utc: *utc,
                local: *utc,
            });
        }
    }
}

/// Reads the TIMESTAMP values of a decoded row in the session's time zone
/// `zone` (their instants stay as stored).
pub fn localize_row(row: &mut [Value], zone: &Zone) {
    if matches!(zone, Zone::Offset(0)) {
        return;
    }
    for v in row.iter_mut() {
        if let Value::Stamp(s) = v {
            *s = crate::types::timezone::localize(s.utc, zone);
        }
    }
}

/// Encodes `row` (columns in declaration order) as stored: by slot, dropped
/// slots NULL (see [`decode_table_row`]).
pub fn encode_table_row(table: &Table, row: &[Value]) -> Vec<u8> {
    encode_table_row_with(table, row, &[])
}

/// [`encode_table_row`] followed by `extra` slots beyond the definition's width.
pub(crate) fn encode_table_row_with(table: &Table, row: &[Value], extra: &[Value]) -> Vec<u8> {
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
