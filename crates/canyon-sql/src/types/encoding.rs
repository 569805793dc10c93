//! Byte encodings of the SQL layer: memcomparable keys and row values.
//!
//! # Keys (primary keys and index keys)
//! A key is the concatenation of its columns' encodings. Each column encodes as a
//! tag byte — `0x00` for NULL, `0x01` for a value — followed by:
//!
//! | type | bytes |
//! |---|---|
//! | signed integer | 8 bytes big-endian of `v XOR 0x8000_0000_0000_0000` |
//! | unsigned integer | 8 bytes big-endian |
//! | DOUBLE | 8 bytes: IEEE bits, sign bit flipped for positives, all bits for negatives |
//! | DECIMAL(p,s) | 16 bytes big-endian of the mantissa at scale `s`, sign bit flipped |
//! | strings | the collation's sort key with `0x00` escaped as `0x00 0xFF`, terminated by `0x00 0x00` |
//! | DATE | 4 bytes big-endian of days since 0001-01-01, sign bit flipped |
//! | DATETIME | 8 bytes big-endian of microseconds since 1970, sign bit flipped |
//! | TIME | its text as a string; a column with `time_key_ordered` instead its signed microseconds, sign bit flipped, 8 bytes big-endian framed as a string (`crate::catalog::rows::encode_column_key`) |
//!
//! A string's sort key ([`crate::types::collation::Collation::sort_key`]) is its bytes
//! under a byte collation (`binary`, `utf8mb4_0900_bin`; trailing spaces
//! removed under `_bin` PAD SPACE ones) and its weights under a `_ci` one, so
//! strings equal under the column's collation ('a', 'A') have equal keys.
//!
//! Two properties the MVCC layer relies on: byte order equals SQL order (for the
//! column's type and collation), and the encoding is prefix-free (no key is a
//! proper prefix of another), so `key ++ suffix` never interleaves. Keys are
//! never decoded back into strings: rows hold every column.
//!
//! # Rows
//! `version u8 (=1) ++ varint column_count ++ column values`, each value a tag byte
//! then its payload: `0` NULL; `1` i64 LE; `2` u64 LE; `3` f64 LE; `4` DECIMAL as
//! i128 LE mantissa + u8 scale; `5` bytes as varint length + bytes; `6` DATE as i32
//! LE days since 0001-01-01; `7` DATETIME as i64 LE microseconds since 1970;
//! `8` JSON as varint length + its binary form (`crate::types::json`).
//!
//! The values are **slots**, not columns: `TableDef::slots` maps each column to
//! its slot (identity for a table no ALTER changed). A row with fewer slots than
//! the table (written before an ADD COLUMN) reads the missing columns as their
//! `added_default`; a dropped column's slot is never read again and is written
//! as NULL (one byte); slots beyond the table's (written by a statement on a
//! newer definition) are ignored. See "Instant ADD / DROP COLUMN" in
//! `crate::ddl::alter`.

use crate::types::collation::Collation;
use crate::types::decimal::Decimal;
use crate::types::value::{Stamp, Value};
use canyon_common::{Error, Result};
use chrono::{DateTime, Datelike, NaiveDate};
use ethnum::I256;

const SIGN: u64 = 1 << 63;

/// Set in [`encode_key_value`]'s `decimal_scale` argument for a DECIMAL
/// column of more than 38 digits: its keys hold a 32-byte mantissa (see
/// [`decimal_key_form`]).
pub const WIDE_DECIMAL_KEY: u8 = 0x80;

/// The `decimal_scale` argument of [`encode_key_value`] for a
/// DECIMAL(`precision`, `scale`) column: the scale, with
/// [`WIDE_DECIMAL_KEY`] set past 38 digits. Columns of up to 38 digits keep
/// the 16-byte key every data file written before 65-digit decimals holds.
pub fn decimal_key_form(precision: u8, scale: u8) -> u8 {
    if precision > 38 {
        scale | WIDE_DECIMAL_KEY
    } else {
        scale
    }
}

/// Appends the memcomparable encoding of one key column. The value must already
/// have the column's type (see [`crate::types::coerce`]); `decimal_scale` is the
/// column's scale for DECIMAL columns (with [`WIDE_DECIMAL_KEY`] for wide
/// ones, see [`decimal_key_form`]), `collation` its collation (used for
/// strings only).
pub fn encode_key_value(v: &Value, decimal_scale: u8, collation: Collation, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.push(0x00),
        Value::Int(i) => {
            out.push(0x01);
            out.extend_from_slice(&((*i as u64) ^ SIGN).to_be_bytes());
        }
        Value::UInt(u) => {
            out.push(0x01);
            out.extend_from_slice(&u.to_be_bytes());
        }
        Value::Double(d) => {
            out.push(0x01);
            let bits = d.to_bits();
            let enc = if *d >= 0.0 { bits ^ SIGN } else { !bits };
            out.extend_from_slice(&enc.to_be_bytes());
        }
        Value::Decimal(d) => {
            // The mantissa at the column's scale, two's complement with the
            // sign bit flipped, big-endian: byte order is numeric order.
            out.push(0x01);
            let mut d = *d;
            d.rescale((decimal_scale & !WIDE_DECIMAL_KEY) as u32);
            let (m, _) = d.parts();
            if decimal_scale & WIDE_DECIMAL_KEY != 0 {
                let flipped = m.to_be_bytes();
                out.push(flipped[0] ^ 0x80);
                out.extend_from_slice(&flipped[1..]);
            } else {
                // A value the column holds fits (<= 38 digits); anything
                // wider (a probe from a WHERE clause) saturates, which keeps
                // it beyond every stored key on its side.
                let m = i128::try_from(m).unwrap_or(if m < 0 { i128::MIN } else { i128::MAX });
                out.extend_from_slice(&((m as u128) ^ (1u128 << 127)).to_be_bytes());
            }
        }
        Value::Bytes(b) if !collation.is_bytewise() => {
            let mut key = Vec::with_capacity(b.len() * 2);
            collation.sort_key(b, &mut key);
            encode_key_value(&Value::Bytes(key), 0, Collation::Binary, out);
        }
        Value::Bytes(b) => {
            out.push(0x01);
            for &byte in b {
                out.push(byte);
                if byte == 0 {
                    out.push(0xFF);
                }
            }
            out.extend_from_slice(&[0x00, 0x00]);
        }
        Value::Date(d) => {
            out.push(0x01);
            let days = d.num_days_from_ce() as u32 ^ (1 << 31);
            out.extend_from_slice(&days.to_be_bytes());
        }
        // A TIMESTAMP's key is its instant: keys never depend on the session.
        Value::DateTime(dt) | Value::Stamp(Stamp { utc: dt, .. }) => {
            out.push(0x01);
            let micros = dt.and_utc().timestamp_micros() as u64 ^ SIGN;
            out.extend_from_slice(&micros.to_be_bytes());
        }
        // No index holds a JSON column (MySQL's 3152); a JSON value as a
        // key (a GROUP BY or DISTINCT key, say) is its binary form, which
        // equal documents share.
        Value::Json(j) => encode_key_value(&Value::Bytes(j.clone()), 0, Collation::Binary, out),
    }
}

/// Encodes a whole row value.
pub fn encode_row(values: &[Value]) -> Vec<u8> {
    encode_values(values.len(), values.iter())
}

/// Encodes a row value of `count` slots given in order (a table whose columns
/// were moved or dropped by ALTER TABLE maps its columns to slots first).
pub fn encode_values<'a>(count: usize, values: impl Iterator<Item = &'a Value> + Clone) -> Vec<u8> {
    // The exact size up to the varints' slack: one allocation, no growth, and
    // no spare capacity kept by a write buffer holding a million rows.
    let size: usize = values
        .clone()
        .map(|v| match v {
            Value::Bytes(b) => 10 + b.len(),
            Value::Json(j) => 10 + j.len(),
            _ => 18,
        })
        .sum();
    let mut out = Vec::with_capacity(10 + size);
    out.push(1);
    put_varint(&mut out, count as u64);
    for v in values {
        match v {
            Value::Null => out.push(0),
            Value::Int(i) => {
                out.push(1);
                out.extend_from_slice(&i.to_le_bytes());
            }
            Value::UInt(u) => {
                out.push(2);
                out.extend_from_slice(&u.to_le_bytes());
            }
            Value::Double(d) => {
                out.push(3);
                out.extend_from_slice(&d.to_le_bytes());
            }
            Value::Decimal(d) => {
                let (m, scale) = d.parts();
                match i128::try_from(m) {
                    Ok(m) => {
                        out.push(4);
                        out.extend_from_slice(&m.to_le_bytes());
                    }
                    Err(_) => {
                        // Past 38 digits: a 32-byte mantissa (format 1 rows
                        // gained tag 9 with 65-digit decimals; tag 4 is
                        // still written for everything that fits it).
                        out.push(9);
                        out.extend_from_slice(&m.to_le_bytes());
                    }
                }
                out.push(scale as u8);
            }
            Value::Bytes(b) => {
                out.push(5);
                put_varint(&mut out, b.len() as u64);
                out.extend_from_slice(b);
            }
            Value::Date(d) => {
                out.push(6);
                out.extend_from_slice(&d.num_days_from_ce().to_le_bytes());
            }
            Value::DateTime(dt) | Value::Stamp(Stamp { utc: dt, .. }) => {
                out.push(7);
                out.extend_from_slice(&dt.and_utc().timestamp_micros().to_le_bytes());
            }
            Value::Json(j) => {
                out.push(8);
                put_varint(&mut out, j.len() as u64);
                out.extend_from_slice(j);
            }
        }
    }
    out
}

/// Decodes a row value into `out` (cleared first).
pub fn decode_row(bytes: &[u8], out: &mut Vec<Value>) -> Result<()> {
    decode_row_columns(bytes, None, out)
}

/// Decodes a row value into `out` (cleared first), materialising only the columns
/// marked in `needed` (all when `None`); the others are skipped over and read as
/// NULL. A range scan that returns one column of a wide row then allocates
/// nothing for the rest.
pub fn decode_row_columns(
    bytes: &[u8],
    needed: Option<&[bool]>,
    out: &mut Vec<Value>,
) -> Result<()> {
    out.clear();
    let mut r = Reader { b: bytes, pos: 0 };
    if r.u8()? != 1 {
        return Err(Error::Corrupt("unknown row format version".into()));
    }
    let n = r.varint()? as usize;
    out.reserve(n);
    for i in 0..n {
        if needed.is_some_and(|m| !m.get(i).copied().unwrap_or(true)) {
            r.skip_value()?;
            out.push(Value::Null);
            continue;
        }
        let v = match r.u8()? {
            0 => Value::Null,
            1 => Value::Int(i64::from_le_bytes(r.array()?)),
            2 => Value::UInt(u64::from_le_bytes(r.array()?)),
            3 => Value::Double(f64::from_le_bytes(r.array()?)),
            4 => {
                let m = i128::from_le_bytes(r.array()?);
                let scale = r.u8()? as u32;
                Value::Decimal(
                    Decimal::try_from_i128_with_scale(m, scale)
                        .map_err(|_| Error::Corrupt("bad decimal".into()))?,
                )
            }
            9 => {
                let m = I256::from_le_bytes(r.array()?);
                let scale = r.u8()? as u32;
                Value::Decimal(
                    Decimal::from_parts(m, scale)
                        .ok_or_else(|| Error::Corrupt("bad decimal".into()))?,
                )
            }
            5 => {
                let len = r.varint()? as usize;
                Value::Bytes(r.take(len)?.to_vec())
            }
            6 => {
                let days = i32::from_le_bytes(r.array()?);
                Value::Date(
                    NaiveDate::from_num_days_from_ce_opt(days)
                        .ok_or_else(|| Error::Corrupt("bad date".into()))?,
                )
            }
            7 => {
                let micros = i64::from_le_bytes(r.array()?);
                Value::DateTime(
                    DateTime::from_timestamp_micros(micros)
                        .ok_or_else(|| Error::Corrupt("bad datetime".into()))?
                        .naive_utc(),
                )
            }
            8 => {
                let len = r.varint()? as usize;
                Value::Json(r.take(len)?.to_vec())
            }
            t => return Err(Error::Corrupt(format!("unknown value tag {t}"))),
        };
        out.push(v);
    }
    Ok(())
}

/// Decodes one key column of the given kind back into a value (used to recover
/// AUTO_INCREMENT counters and hidden row ids from the last key of a table).
pub fn decode_key_int(bytes: &[u8], unsigned: bool) -> Option<i128> {
    if bytes.len() < 9 || bytes[0] != 0x01 {
        return None;
    }
    let raw = u64::from_be_bytes(bytes[1..9].try_into().ok()?);
    Some(if unsigned {
        raw as i128
    } else {
        (raw ^ SIGN) as i64 as i128
    })
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| Error::Corrupt("row value truncated".into()))?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
    /// Skips one tagged value without materialising it.
    fn skip_value(&mut self) -> Result<()> {
        let len = match self.u8()? {
            0 => 0,
            1..=3 => 8,
            4 => 17,
            9 => 33,
            5 | 8 => self.varint()? as usize,
            6 => 4,
            7 => 8,
            t => return Err(Error::Corrupt(format!("unknown value tag {t}"))),
        };
        self.take(len).map(|_| ())
    }

    fn varint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            v |= ((b & 0x7F) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(Error::Corrupt("varint too long".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        encode_key_value(v, 2, Collation::Binary, &mut out);
        out
    }

    #[test]
    fn key_order_matches_sql_order() {
        let ints = [i64::MIN, -5, -1, 0, 1, 7, i64::MAX];
        for w in ints.windows(2) {
            assert!(key(&Value::Int(w[0])) < key(&Value::Int(w[1])), "{w:?}");
        }
        let doubles = [f64::NEG_INFINITY, -2.5, -0.1, 0.0, 0.1, 3.0, f64::INFINITY];
        for w in doubles.windows(2) {
            assert!(
                key(&Value::Double(w[0])) < key(&Value::Double(w[1])),
                "{w:?}"
            );
        }
        let strs: [&[u8]; 5] = [b"", b"\0", b"a", b"a\0", b"ab"];
        for w in strs.windows(2) {
            assert!(
                key(&Value::Bytes(w[0].to_vec())) < key(&Value::Bytes(w[1].to_vec())),
                "{w:?}"
            );
        }
        let decs = [
            Decimal::new(-150, 2),
            Decimal::new(-1, 2),
            Decimal::ZERO,
            Decimal::new(5, 1),
        ];
        for w in decs.windows(2) {
            assert!(
                key(&Value::Decimal(w[0])) < key(&Value::Decimal(w[1])),
                "{w:?}"
            );
        }
        assert!(key(&Value::Null) < key(&Value::Int(i64::MIN)));
    }

    #[test]
    fn wide_decimal_keys_order_and_rows_round_trip() {
        let wide = |v: &Decimal| {
            let mut out = Vec::new();
            encode_key_value(
                &Value::Decimal(*v),
                decimal_key_form(65, 30),
                Collation::Binary,
                &mut out,
            );
            out
        };
        let nines = "9".repeat(35) + "." + &"9".repeat(30);
        let vals: Vec<Decimal> = [
            format!("-{nines}"),
            "-12345678901234567890123456789012345.5".into(),
            "-1".into(),
            "0".into(),
            "0.000000000000000000000000000001".into(),
            "12345678901234567890123456789012345.5".into(),
            nines.clone(),
        ]
        .iter()
        .map(|s| s.parse().expect("decimal"))
        .collect();
        for w in vals.windows(2) {
            assert!(wide(&w[0]) < wide(&w[1]), "{w:?}");
            assert_eq!(wide(&w[0]).len(), 33);
        }
        // Narrow columns keep the 16-byte key of existing data files.
        let mut old = Vec::new();
        encode_key_value(
            &Value::Decimal(Decimal::new(-150, 2)),
            2,
            Collation::Binary,
            &mut old,
        );
        let mut expect = vec![0x01];
        expect.extend_from_slice(&((-150i128 as u128) ^ (1u128 << 127)).to_be_bytes());
        assert_eq!(old, expect);
        // Rows: tag 4 (i128) for what fits, tag 9 (I256) past it; both read back.
        let row: Vec<Value> = vals.iter().map(|d| Value::Decimal(*d)).collect();
        let bytes = encode_row(&row);
        let mut back = Vec::new();
        decode_row(&bytes, &mut back).expect("decode");
        assert_eq!(back, row);
        for (a, b) in back.iter().zip(&row) {
            assert_eq!(a.to_text(), b.to_text());
        }
        // A row written before (tag 4, i128 mantissa -150, scale 2).
        let mut old_row = vec![1, 1, 4];
        old_row.extend_from_slice(&(-150i128).to_le_bytes());
        old_row.push(2);
        decode_row(&old_row, &mut back).expect("old row");
        assert_eq!(back[0].to_text(), Some(b"-1.50".to_vec()));
    }

    #[test]
    fn keys_are_prefix_free() {
        let a = key(&Value::str("ab"));
        let b = key(&Value::str("abc"));
        assert!(!b.starts_with(&a));
    }

    #[test]
    fn row_round_trip() {
        let row = vec![
            Value::Null,
            Value::Int(-3),
            Value::UInt(u64::MAX),
            Value::Double(1.5),
            Value::Decimal(Decimal::new(-12345, 3)),
            Value::str("héllo\0"),
            Value::Date(NaiveDate::from_ymd_opt(1999, 12, 31).expect("valid")),
            Value::DateTime(
                NaiveDate::from_ymd_opt(2024, 2, 29)
                    .and_then(|d| d.and_hms_micro_opt(23, 59, 58, 123456))
                    .expect("valid"),
            ),
        ];
        let bytes = encode_row(&row);
        let mut back = Vec::new();
        decode_row(&bytes, &mut back).expect("decodes");
        assert_eq!(back, row);
        assert!(decode_row(&bytes[..bytes.len() - 1], &mut back).is_err());
        let mut needed = vec![false; row.len()];
        needed[5] = true;
        decode_row_columns(&bytes, Some(&needed), &mut back).expect("decodes");
        assert_eq!(back.len(), row.len());
        assert_eq!(back[5], row[5]);
        assert!(back.iter().enumerate().all(|(i, v)| i == 5 || v.is_null()));
        assert!(decode_row(&[9], &mut back).is_err());
    }

    #[test]
    fn int_key_decodes() {
        assert_eq!(decode_key_int(&key(&Value::Int(-7)), false), Some(-7));
        assert_eq!(decode_key_int(&key(&Value::UInt(9)), true), Some(9));
    }
}
