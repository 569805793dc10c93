//! A table's columns as the binary log describes them (TABLE_MAP column
//! types and metadata) and its values as row images hold them.
//!
//! Canyon keeps strings as UTF-8 whatever a column's character set; a row
//! image carries the bytes in the column's own set (what a MySQL replica
//! stores), so text is converted here. TIME is held as its text and becomes
//! the fields of MySQL's TIME2; TIMESTAMP becomes seconds since the epoch of
//! its UTC instant; ENUM and SET their member number and bitmask; JSON
//! MySQL's binary JSON (canyon-binlog builds it from the document's text).

use crate::catalog::schema::ColumnDef;
use crate::catalog::Table;
use crate::types::sqltype::SqlType;
use crate::types::value::Value;
use canyon_binlog::{BinValue, ColumnMeta};
use canyon_common::{Error, Result};
use chrono::{Datelike, Timelike};

/// Most bytes one character of `charset` takes (MySQL's `mbmaxlen`).
fn max_char_bytes(charset: &str) -> u32 {
    match charset {
        "utf8mb4" => 4,
        "utf8mb3" | "utf8" | "ujis" => 3,
        "sjis" | "cp932" | "gbk" | "big5" | "euckr" => 2,
        _ => 1,
    }
}

/// The length prefix of a BLOB / TEXT of at most `limit` bytes.
fn blob_len_bytes(limit: u32) -> u8 {
    match limit {
        0..=255 => 1,
        256..=65_535 => 2,
        65_536..=16_777_215 => 3,
        _ => 4,
    }
}

/// A column's TABLE_MAP description.
pub(crate) fn column_meta(c: &ColumnDef, in_pk: bool) -> ColumnMeta {
    let cs = c.collation.id();
    let mb = max_char_bytes(c.collation.charset());
    let clamp = |n: u32| u16::try_from(n).unwrap_or(u16::MAX);
    let meta = match c.ty {
        SqlType::TinyInt { unsigned } => ColumnMeta::tinyint(unsigned),
        SqlType::SmallInt { unsigned } => ColumnMeta::smallint(unsigned),
        SqlType::MediumInt { unsigned } => ColumnMeta::mediumint(unsigned),
        SqlType::Int { unsigned } => ColumnMeta::int(unsigned),
        SqlType::BigInt { unsigned } => ColumnMeta::bigint(unsigned),
        SqlType::Float { unsigned, .. } => ColumnMeta {
            unsigned,
            ..ColumnMeta::float()
        },
        SqlType::Double { unsigned, .. } => ColumnMeta {
            unsigned,
            ..ColumnMeta::double()
        },
        SqlType::Decimal {
            precision,
            scale,
            unsigned,
        } => ColumnMeta {
            unsigned,
            ..ColumnMeta::decimal(precision, scale)
        },
        SqlType::Char(n) => ColumnMeta::char(clamp(n * mb), cs),
        SqlType::VarChar(n) => ColumnMeta::varchar(clamp(n * mb), cs),
        SqlType::Binary(n) => ColumnMeta::char(clamp(n), canyon_binlog::rows::BINARY_CHARSET),
        SqlType::VarBinary(n) => ColumnMeta::varchar(clamp(n), canyon_binlog::rows::BINARY_CHARSET),
        SqlType::Text(limit) => ColumnMeta::blob(blob_len_bytes(limit), cs),
        SqlType::Blob(limit) => {
            ColumnMeta::blob(blob_len_bytes(limit), canyon_binlog::rows::BINARY_CHARSET)
        }
        SqlType::Date => ColumnMeta::date(),
        SqlType::DateTime(fsp) => ColumnMeta::datetime(fsp),
        SqlType::Timestamp(fsp) => ColumnMeta::timestamp(fsp),
        SqlType::Bit(n) => ColumnMeta::bit(n),
        SqlType::Year => ColumnMeta::year(),
        SqlType::Time(fsp) => ColumnMeta::time(fsp),
        SqlType::Enum(m) => ColumnMeta::enumeration(
            m.values
                .iter()
                .map(|v| encode_text(c, v.as_bytes()))
                .collect(),
            cs,
        ),
        SqlType::Set(m) => ColumnMeta::set(
            m.values
                .iter()
                .map(|v| encode_text(c, v.as_bytes()))
                .collect(),
            cs,
        ),
        SqlType::Json => ColumnMeta::json(),
    };
    let meta = meta.named(&c.name);
    let meta = if c.nullable { meta } else { meta.not_null() };
    if in_pk {
        meta.primary_key()
    } else {
        meta
    }
}

/// Every column of `table`, in declaration order.
pub(crate) fn table_columns(table: &Table) -> Vec<ColumnMeta> {
    table
        .def
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| column_meta(c, table.def.primary_key.contains(&i)))
        .collect()
}

/// UTF-8 text in the column's character set.
fn encode_text(c: &ColumnDef, utf8: &[u8]) -> Vec<u8> {
    let cs = c.collation.character_set();
    if cs.is_passthrough() {
        return utf8.to_vec();
    }
    match std::str::from_utf8(utf8) {
        Ok(text) => cs.encode(text).into_owned(),
        Err(_) => utf8.to_vec(),
    }
}

fn unexpected(c: &ColumnDef, v: &Value) -> Error {
    Error::Internal(format!(
        "binary log: column `{}` of type {:?} holds {v:?}",
        c.name, c.ty
    ))
}

/// `v`, a value of column `c`, as a row image holds it.
pub(crate) fn bin_value(c: &ColumnDef, v: &Value) -> Result<BinValue> {
    if matches!(v, Value::Null) {
        return Ok(BinValue::Null);
    }
    Ok(match (c.ty, v) {
        (ty, Value::Int(i)) if ty.is_integer() => {
            if ty.is_unsigned() {
                BinValue::UInt(*i as u64)
            } else {
                BinValue::Int(*i)
            }
        }
        (ty, Value::UInt(u)) if ty.is_integer() => {
            if ty.is_unsigned() {
                BinValue::UInt(*u)
            } else {
                BinValue::Int(*u as i64)
            }
        }
        (SqlType::Float { .. }, Value::Double(d)) => BinValue::Float(*d as f32),
        (SqlType::Double { .. }, Value::Double(d)) => BinValue::Double(*d),
        (SqlType::Float { .. }, Value::Int(i)) => BinValue::Float(*i as f32),
        (SqlType::Double { .. }, Value::Int(i)) => BinValue::Double(*i as f64),
        (SqlType::Decimal { .. }, Value::Decimal(d)) => BinValue::Decimal(d.to_string()),
        (SqlType::Decimal { .. }, Value::Int(i)) => BinValue::Decimal(i.to_string()),
        (SqlType::Decimal { .. }, Value::UInt(u)) => BinValue::Decimal(u.to_string()),
        (SqlType::Char(_) | SqlType::VarChar(_) | SqlType::Text(_), Value::Bytes(b)) => {
            BinValue::Bytes(encode_text(c, b))
        }
        (SqlType::Binary(_) | SqlType::VarBinary(_) | SqlType::Blob(_), Value::Bytes(b)) => {
            BinValue::Bytes(b.clone())
        }
        (SqlType::Date, Value::Date(d)) => BinValue::Date {
            year: d.year() as u16,
            month: d.month() as u8,
            day: d.day() as u8,
        },
        (SqlType::DateTime(_), Value::DateTime(dt)) => BinValue::DateTime {
            year: dt.year() as u16,
            month: dt.month() as u8,
            day: dt.day() as u8,
            hour: dt.hour() as u8,
            minute: dt.minute() as u8,
            second: dt.second() as u8,
            micros: dt.nanosecond() / 1000,
        },
        (SqlType::Timestamp(_), Value::Stamp(s)) => timestamp(&s.utc),
        // A TIMESTAMP read back from its stored form is its UTC instant.
        (SqlType::Timestamp(_), Value::DateTime(utc)) => timestamp(utc),
        (SqlType::Bit(_), Value::UInt(u)) => BinValue::Bit(*u),
        (SqlType::Bit(_), Value::Int(i)) => BinValue::Bit(*i as u64),
        (SqlType::Year, Value::UInt(u)) => BinValue::Year(*u as u16),
        (SqlType::Year, Value::Int(i)) => BinValue::Year(*i as u16),
        (SqlType::Time(_), Value::Bytes(text)) => {
            let micros =
                crate::types::datetime::parse_time(text).ok_or_else(|| unexpected(c, v))?;
            let negative = micros < 0;
            let m = micros.unsigned_abs();
            BinValue::Time {
                negative,
                hours: (m / 3_600_000_000) as u16,
                minutes: (m / 60_000_000 % 60) as u8,
                seconds: (m / 1_000_000 % 60) as u8,
                micros: (m % 1_000_000) as u32,
            }
        }
        (SqlType::Enum(m), Value::Bytes(b)) => {
            // The empty string is the error member, number 0.
            BinValue::Enum(m.member_position(b).unwrap_or(0) as u16)
        }
        (SqlType::Set(m), Value::Bytes(b)) => {
            let mut mask = 0u64;
            for part in b.split(|&x| x == b',').filter(|p| !p.is_empty()) {
                if let Some(p) = m.member_position(part) {
                    mask |= 1 << (p - 1);
                }
            }
            BinValue::Set(mask)
        }
        (SqlType::Json, Value::Json(doc)) => {
            let text = crate::types::json::to_text(doc);
            BinValue::Json(
                serde_json::from_str(&text).map_err(|e| {
                    Error::Internal(format!("binary log: JSON of `{}`: {e}", c.name))
                })?,
            )
        }
        _ => return Err(unexpected(c, v)),
    })
}

fn timestamp(utc: &chrono::NaiveDateTime) -> BinValue {
    let t = utc.and_utc();
    BinValue::Timestamp {
        secs: t.timestamp(),
        micros: t.timestamp_subsec_micros(),
    }
}

/// A whole row (declaration order) as a row image.
pub(crate) fn bin_row(table: &Table, row: &[Value]) -> Result<Vec<BinValue>> {
    table
        .def
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| bin_value(c, row.get(i).unwrap_or(&Value::Null)))
        .collect()
}
