//! One column value in a row image: [`BinValue`] and its encoding per column
//! type (the table in the crate doc lists every layout).

use serde_json::Value as Json;

use super::temporal::{self, DateTime, Time};
use super::{decimal, field_type as ft, ColumnMeta};
use crate::wire::{put_le, Reader};
use crate::Error;

/// A column value as a row image carries it. Which variant a column takes
/// follows its type: the integers take `Int` (signed columns) or `UInt`
/// (unsigned; either is accepted on input when the value fits), CHAR /
/// VARCHAR / BINARY / BLOB / TEXT / GEOMETRY take `Bytes` (in the column's
/// character set), and the rest have their own variant.
#[derive(Clone, Debug, PartialEq)]
pub enum BinValue {
    /// SQL NULL (a bit in the row's null bitmap; no bytes).
    Null,
    /// TINYINT, SMALLINT, MEDIUMINT, INT, BIGINT (signed).
    Int(i64),
    /// The same, UNSIGNED.
    UInt(u64),
    /// FLOAT.
    Float(f32),
    /// DOUBLE.
    Double(f64),
    /// DECIMAL in plain decimal text (`-123.45`); decoded with exactly the
    /// column's scale of fraction digits.
    Decimal(String),
    /// CHAR, VARCHAR, BINARY, VARBINARY, the BLOB and TEXT types, GEOMETRY
    /// (MySQL's internal WKB with a 4-byte SRID in front).
    Bytes(Vec<u8>),
    /// BIT(n), right-aligned.
    Bit(u64),
    /// YEAR (0 for the zero year 0000).
    Year(u16),
    /// DATE.
    Date {
        /// 0..=9999
        year: u16,
        /// 0..=12 (0 in zero dates)
        month: u8,
        /// 0..=31
        day: u8,
    },
    /// TIME.
    Time {
        /// A negative interval.
        negative: bool,
        /// 0..=838 in SQL (the format holds 1023).
        hours: u16,
        /// 0..=59
        minutes: u8,
        /// 0..=59
        seconds: u8,
        /// 0..=999999, truncated to the column's precision.
        micros: u32,
    },
    /// DATETIME (no time zone).
    DateTime {
        /// 0..=9999
        year: u16,
        /// 0..=12
        month: u8,
        /// 0..=31
        day: u8,
        /// 0..=23
        hour: u8,
        /// 0..=59
        minute: u8,
        /// 0..=59
        second: u8,
        /// 0..=999999, truncated to the column's precision.
        micros: u32,
    },
    /// TIMESTAMP: seconds since the epoch, UTC (0 is the zero timestamp).
    Timestamp {
        /// 0..=2^32-1
        secs: i64,
        /// 0..=999999, truncated to the column's precision.
        micros: u32,
    },
    /// ENUM: the 1-based index of the value (0 for the empty error value).
    Enum(u16),
    /// SET: bit i set when the (i+1)-th member is in the value.
    Set(u64),
    /// JSON.
    Json(Json),
}

fn mismatch(col: &ColumnMeta, v: &BinValue) -> Error {
    Error::Invalid(format!(
        "column '{}' of type {} cannot hold {v:?}",
        col.name,
        ft::name(col.type_code, col.real_type())
    ))
}

/// Appends the integer `v` as `bytes` little-endian bytes after checking it
/// fits the column's signed or unsigned range.
fn put_int(col: &ColumnMeta, v: &BinValue, bytes: usize, out: &mut Vec<u8>) -> Result<(), Error> {
    let bits = 8 * bytes as u32;
    let raw: u64 = match (v, col.unsigned) {
        (&BinValue::Int(i), false) => {
            let min = -(1i128 << (bits - 1));
            let max = (1i128 << (bits - 1)) - 1;
            if !(min..=max).contains(&i128::from(i)) {
                return Err(mismatch(col, v));
            }
            i as u64
        }
        (&BinValue::UInt(u), false) => {
            if u128::from(u) >= 1u128 << (bits - 1) {
                return Err(mismatch(col, v));
            }
            u
        }
        (&BinValue::Int(i), true) if i >= 0 && u128::from(i as u64) < 1u128 << bits => i as u64,
        (&BinValue::UInt(u), true) if u128::from(u) < 1u128 << bits => u,
        _ => return Err(mismatch(col, v)),
    };
    put_le(out, raw, bytes);
    Ok(())
}

fn get_int(col: &ColumnMeta, r: &mut Reader<'_>, bytes: usize) -> Result<BinValue, Error> {
    let raw = r.le(bytes, "integer")?;
    Ok(if col.unsigned {
        BinValue::UInt(raw)
    } else {
        let shift = 64 - 8 * bytes as u32;
        BinValue::Int(((raw << shift) as i64) >> shift)
    })
}

/// Appends a length prefix of `n` bytes (1..=4) and `data`, checking that
/// the length fits the prefix and `max`.
fn put_prefixed(
    col: &ColumnMeta,
    data: &[u8],
    n: usize,
    max: u64,
    out: &mut Vec<u8>,
) -> Result<(), Error> {
    let len = data.len() as u64;
    if len > max || len >= 1u64 << (8 * n) {
        return Err(Error::Invalid(format!(
            "{} bytes do not fit column '{}' (at most {max})",
            data.len(),
            col.name
        )));
    }
    put_le(out, len, n);
    out.extend_from_slice(data);
    Ok(())
}

/// Appends the encoding of non-NULL `v` for column `col`.
pub(crate) fn encode(col: &ColumnMeta, v: &BinValue, out: &mut Vec<u8>) -> Result<(), Error> {
    use BinValue as V;
    let meta = col.meta;
    match (col.type_code, v) {
        (ft::TINY, V::Int(_) | V::UInt(_)) => put_int(col, v, 1, out)?,
        (ft::SHORT, V::Int(_) | V::UInt(_)) => put_int(col, v, 2, out)?,
        (ft::INT24, V::Int(_) | V::UInt(_)) => put_int(col, v, 3, out)?,
        (ft::LONG, V::Int(_) | V::UInt(_)) => put_int(col, v, 4, out)?,
        (ft::LONGLONG, V::Int(_) | V::UInt(_)) => put_int(col, v, 8, out)?,
        (ft::FLOAT, V::Float(f)) => out.extend_from_slice(&f.to_le_bytes()),
        (ft::DOUBLE, V::Double(f)) => out.extend_from_slice(&f.to_le_bytes()),
        (ft::NEWDECIMAL, V::Decimal(text)) => {
            decimal::encode(text, (meta >> 8) as u8, meta as u8, out)?;
        }
        (ft::YEAR, V::Year(y)) => temporal::encode_year(out, *y)?,
        (ft::DATE, V::Date { year, month, day }) => {
            temporal::encode_date(out, *year, *month, *day)?
        }
        (
            ft::TIME2,
            V::Time {
                negative,
                hours,
                minutes,
                seconds,
                micros,
            },
        ) => temporal::encode_time2(
            out,
            Time {
                negative: *negative,
                hours: *hours,
                minutes: *minutes,
                seconds: *seconds,
                micros: *micros,
            },
            meta as u8,
        )?,
        (
            ft::DATETIME2,
            V::DateTime {
                year,
                month,
                day,
                hour,
                minute,
                second,
                micros,
            },
        ) => temporal::encode_datetime2(
            out,
            DateTime {
                year: *year,
                month: *month,
                day: *day,
                hour: *hour,
                minute: *minute,
                second: *second,
                micros: *micros,
            },
            meta as u8,
        )?,
        (ft::TIMESTAMP2, V::Timestamp { secs, micros }) => {
            temporal::encode_timestamp2(out, *secs, *micros, meta as u8)?;
        }
        (ft::VARCHAR | ft::VAR_STRING, V::Bytes(b)) => {
            let n = if meta < 256 { 1 } else { 2 };
            put_prefixed(col, b, n, u64::from(meta), out)?;
        }
        (ft::BLOB | ft::GEOMETRY, V::Bytes(b)) => {
            let n = usize::from(meta).clamp(1, 4);
            put_prefixed(col, b, n, u64::MAX, out)?;
        }
        (ft::JSON, V::Json(j)) => {
            let doc = crate::json::encode(j)?;
            let n = usize::from(meta).clamp(1, 4);
            put_prefixed(col, &doc, n, u64::MAX, out)?;
        }
        (ft::BIT, V::Bit(bits)) => {
            let nbits = col.bit_width();
            if nbits == 0 || nbits > 64 || (nbits < 64 && *bits >> nbits != 0) {
                return Err(mismatch(col, v));
            }
            crate::wire::put_be(out, *bits, usize::from(nbits).div_ceil(8));
        }
        (ft::STRING, _) => match (col.real_type(), v) {
            (ft::ENUM, V::Enum(i)) => {
                let n = usize::from(meta & 0xff);
                if n == 1 && *i > 255 {
                    return Err(mismatch(col, v));
                }
                put_le(out, u64::from(*i), n);
            }
            (ft::SET, V::Set(s)) => {
                let n = usize::from(meta & 0xff);
                if n < 8 && *s >> (8 * n) != 0 {
                    return Err(mismatch(col, v));
                }
                put_le(out, *s, n);
            }
            (ft::STRING, V::Bytes(b)) => {
                let max = col.string_max_len();
                let n = if max < 256 { 1 } else { 2 };
                put_prefixed(col, b, n, u64::from(max), out)?;
            }
            _ => return Err(mismatch(col, v)),
        },
        _ => return Err(mismatch(col, v)),
    }
    Ok(())
}

/// Reads one non-NULL value of column `col`.
pub(crate) fn decode(col: &ColumnMeta, r: &mut Reader<'_>) -> Result<BinValue, Error> {
    use BinValue as V;
    let meta = col.meta;
    let prefixed = |r: &mut Reader<'_>, n: usize| -> Result<Vec<u8>, Error> {
        let len = r.le(n, "length prefix")? as usize;
        Ok(r.bytes(len, "string value")?.to_vec())
    };
    Ok(match col.type_code {
        ft::TINY => get_int(col, r, 1)?,
        ft::SHORT => get_int(col, r, 2)?,
        ft::INT24 => get_int(col, r, 3)?,
        ft::LONG => get_int(col, r, 4)?,
        ft::LONGLONG => get_int(col, r, 8)?,
        ft::FLOAT => V::Float(f32::from_bits(r.u32("FLOAT")?)),
        ft::DOUBLE => V::Double(f64::from_bits(r.u64("DOUBLE")?)),
        ft::NEWDECIMAL => {
            let (p, s) = ((meta >> 8) as u8, meta as u8);
            V::Decimal(decimal::decode(
                r.bytes(decimal::bin_size(p, s), "DECIMAL")?,
                p,
                s,
            )?)
        }
        ft::YEAR => V::Year(temporal::decode_year(r)?),
        ft::DATE => {
            let (year, month, day) = temporal::decode_date(r)?;
            V::Date { year, month, day }
        }
        ft::TIME2 => {
            let t = temporal::decode_time2(r, meta as u8)?;
            V::Time {
                negative: t.negative,
                hours: t.hours,
                minutes: t.minutes,
                seconds: t.seconds,
                micros: t.micros,
            }
        }
        ft::DATETIME2 => {
            let d = temporal::decode_datetime2(r, meta as u8)?;
            V::DateTime {
                year: d.year,
                month: d.month,
                day: d.day,
                hour: d.hour,
                minute: d.minute,
                second: d.second,
                micros: d.micros,
            }
        }
        ft::TIMESTAMP2 => {
            let (secs, micros) = temporal::decode_timestamp2(r, meta as u8)?;
            V::Timestamp { secs, micros }
        }
        ft::VARCHAR | ft::VAR_STRING => V::Bytes(prefixed(r, if meta < 256 { 1 } else { 2 })?),
        ft::BLOB | ft::GEOMETRY => V::Bytes(prefixed(r, usize::from(meta).clamp(1, 4))?),
        ft::JSON => V::Json(crate::json::decode(&prefixed(
            r,
            usize::from(meta).clamp(1, 4),
        )?)?),
        ft::BIT => V::Bit(r.be(usize::from(col.bit_width()).div_ceil(8), "BIT")?),
        ft::STRING => match col.real_type() {
            ft::ENUM => V::Enum(r.le(usize::from(meta & 0xff).clamp(1, 2), "ENUM")? as u16),
            ft::SET => V::Set(r.le(usize::from(meta & 0xff).clamp(1, 8), "SET")?),
            _ => V::Bytes(prefixed(r, if col.string_max_len() < 256 { 1 } else { 2 })?),
        },
        ft::NULL => V::Null,
        t => {
            return Err(Error::Unsupported(format!(
                "row values of column type {} ({t}), which MySQL 8 does not write",
                ft::name(t, t)
            )))
        }
    })
}
