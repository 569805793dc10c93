//! Generic response packets (OK, ERR, EOF), column definitions, and the text
//! result set of COM_QUERY.
//!
//! ```text
//!  text result set          without DEPRECATE_EOF        with DEPRECATE_EOF
//!  column count (lenenc)    yes                          yes
//!  ColumnDefinition41 x n   yes                          yes
//!  EOF                      yes                          -
//!  rows (lenenc strings,    yes                          yes
//!    0xFB for NULL)
//!  end                      EOF (0xFE, warnings, status) OK with a 0xFE header
//! ```
//!
//! Values are printed as MySQL prints them in the text protocol: integers in
//! decimal, doubles in the shortest form that reads back to the same double
//! (MySQL's `my_gcvt`), decimals with their scale, temporals in ISO form
//! (`canyon_sql::types::text`, shared with SELECT ... INTO OUTFILE).

use super::codec::{put_lenenc_bytes, put_lenenc_int, put_u16};
use super::constants::header;
use super::errors::MysqlError;
use canyon_sql::types::text::column_text;
pub use canyon_sql::types::text::{format_date, format_datetime, format_double, format_float};
use canyon_sql::{Charset, Column, ColumnType, Value};

/// The fields of an OK packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OkPacket<'a> {
    /// Rows changed (or matched, with CLIENT_FOUND_ROWS) by the statement.
    pub affected_rows: u64,
    /// The first AUTO_INCREMENT value generated, or 0.
    pub last_insert_id: u64,
    /// Server status flags.
    pub status: u16,
    /// Warnings raised by the statement.
    pub warnings: u16,
    /// Human-readable info ("Rows matched: 1  Changed: 1  Warnings: 0").
    pub info: &'a str,
}

impl OkPacket<'_> {
    /// An OK packet with no counts and no info.
    pub fn empty(status: u16) -> OkPacket<'static> {
        OkPacket {
            affected_rows: 0,
            last_insert_id: 0,
            status,
            warnings: 0,
            info: "",
        }
    }
}

/// Appends an OK packet payload. `eof_header` gives it the 0xFE header that marks
/// the end of a result set under CLIENT_DEPRECATE_EOF.
pub fn write_ok(out: &mut Vec<u8>, ok: &OkPacket<'_>, eof_header: bool) {
    out.push(if eof_header { header::EOF } else { header::OK });
    put_lenenc_int(out, ok.affected_rows);
    put_lenenc_int(out, ok.last_insert_id);
    put_u16(out, ok.status);
    put_u16(out, ok.warnings);
    // The manual says string<EOF> without CLIENT_SESSION_TRACK, but mysqld
    // (`net_send_ok`) writes a length-encoded string, and libmysql and MariaDB
    // Connector/C read one: match the server, and omit an empty info entirely.
    if !ok.info.is_empty() {
        put_lenenc_bytes(out, ok.info.as_bytes());
    }
}

/// Appends an EOF packet payload (protocol 4.1).
pub fn write_eof(out: &mut Vec<u8>, warnings: u16, status: u16) {
    out.push(header::EOF);
    put_u16(out, warnings);
    put_u16(out, status);
}

/// Appends the packet that ends a result set: EOF, or OK-with-0xFE under
/// CLIENT_DEPRECATE_EOF.
pub fn write_end_of_rows(out: &mut Vec<u8>, deprecate_eof: bool, warnings: u16, status: u16) {
    if deprecate_eof {
        let ok = OkPacket {
            warnings,
            ..OkPacket::empty(status)
        };
        write_ok(out, &ok, true);
    } else {
        write_eof(out, warnings, status);
    }
}

/// Appends an ERR packet payload (protocol 4.1: with `#` and the SQLSTATE).
pub fn write_err(out: &mut Vec<u8>, err: &MysqlError) {
    out.push(header::ERR);
    put_u16(out, err.code);
    out.push(b'#');
    out.extend_from_slice(err.sqlstate.as_bytes());
    out.extend_from_slice(err.message.as_bytes());
}

/// Appends a Protocol::ColumnDefinition41 payload. `field_list_default` adds the
/// default-value field that only COM_FIELD_LIST responses carry (sent as NULL).
pub fn write_column_definition(out: &mut Vec<u8>, col: &Column, field_list_default: bool) {
    write_column_definition_as(out, col, field_list_default, Charset::Utf8mb4);
}

/// [`write_column_definition`] for a session whose `character_set_results`
/// is `cs`: the names converted to it and a character column's character set
/// number its (`crate::convert`). With utf8mb4 nothing is copied.
pub fn write_column_definition_as(
    out: &mut Vec<u8>,
    col: &Column,
    field_list_default: bool,
    cs: Charset,
) {
    put_lenenc_bytes(out, b"def");
    put_lenenc_bytes(out, &cs.encode(&col.schema));
    put_lenenc_bytes(out, &cs.encode(&col.table));
    put_lenenc_bytes(out, &cs.encode(&col.org_table));
    put_lenenc_bytes(out, &cs.encode(&col.name));
    put_lenenc_bytes(out, &cs.encode(&col.org_name));
    out.push(0x0c); // length of the fixed-length fields
    put_u16(out, crate::convert::column_charset_id(col.charset, cs));
    out.extend_from_slice(&col.length.to_le_bytes());
    out.push(col.column_type as u8);
    put_u16(out, col.flags);
    out.push(col.decimals);
    out.extend_from_slice(&[0, 0]); // filler
    if field_list_default {
        out.push(header::NULL_VALUE);
    }
}

/// Appends one ProtocolText::ResultsetRow payload. `row` may be shorter than
/// `columns` only through an engine bug; missing values are sent as NULL so the
/// client's framing stays intact.
pub fn write_text_row(out: &mut Vec<u8>, columns: &[Column], row: &[Value]) {
    for (i, col) in columns.iter().enumerate() {
        write_text_value(out, row.get(i).unwrap_or(&Value::Null), col);
    }
}

/// Appends one value of a text row: `string<lenenc>`, or 0xFB for NULL.
pub fn write_text_value(out: &mut Vec<u8>, value: &Value, col: &Column) {
    let mut scratch = [0u8; 40];
    match value {
        Value::Null => out.push(header::NULL_VALUE),
        // The common values, without allocating.
        Value::Int(v) => put_lenenc_bytes(out, fmt_i64(*v, &mut scratch)),
        Value::UInt(v) if !matches!(col.column_type, ColumnType::Bit | ColumnType::Year) => {
            put_lenenc_bytes(out, fmt_u64(*v, &mut scratch))
        }
        Value::Bytes(b) => put_lenenc_bytes(out, b),
        other => put_lenenc_bytes(out, &column_text(other, col).unwrap_or_default()),
    }
}

/// Formats a signed integer into `buf` without allocating.
pub fn fmt_i64(v: i64, buf: &mut [u8; 40]) -> &[u8] {
    if v < 0 {
        let len = fmt_u64(v.unsigned_abs(), buf).len();
        let start = buf.len() - len - 1;
        buf[start] = b'-';
        &buf[start..]
    } else {
        fmt_u64(v as u64, buf)
    }
}

/// Formats an unsigned integer into the end of `buf` without allocating.
pub fn fmt_u64(mut v: u64, buf: &mut [u8; 40]) -> &[u8] {
    let mut pos = buf.len();
    loop {
        pos -= 1;
        buf[pos] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    &buf[pos..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Cursor;
    use canyon_sql::charset;
    use chrono::NaiveDate;
    use std::sync::Arc;

    pub(crate) fn col(name: &str, column_type: ColumnType) -> Column {
        Column {
            schema: "db".into(),
            table: "t".into(),
            org_table: "t".into(),
            name: name.into(),
            org_name: name.into(),
            charset: charset::BINARY,
            length: 11,
            column_type,
            flags: 0,
            decimals: 0,
        }
    }

    #[test]
    fn ints_format_without_allocating() {
        let mut b = [0u8; 40];
        assert_eq!(fmt_i64(0, &mut b), b"0");
        assert_eq!(fmt_i64(-42, &mut b), b"-42");
        assert_eq!(fmt_i64(i64::MIN, &mut b), b"-9223372036854775808");
        assert_eq!(fmt_u64(u64::MAX, &mut b), b"18446744073709551615");
    }

    #[test]
    fn text_values() {
        let date = NaiveDate::from_ymd_opt(2024, 3, 7).expect("date");
        let dt = date.and_hms_opt(9, 5, 1).expect("time");
        let dt_us = date.and_hms_micro_opt(9, 5, 1, 120).expect("time");
        let c = col("c", ColumnType::VarString);
        let cases: Vec<(Value, &[u8])> = vec![
            (Value::Int(-7), b"\x02-7"),
            (
                Value::UInt(18446744073709551615),
                b"\x1418446744073709551615",
            ),
            (Value::Double(0.5), b"\x030.5"),
            (
                Value::Decimal("1.50".parse().expect("decimal")),
                b"\x041.50",
            ),
            (Value::Bytes(b"a\0b".to_vec()), b"\x03a\0b"),
            (Value::Date(date), b"\x0a2024-03-07"),
            (Value::DateTime(dt), b"\x132024-03-07 09:05:01"),
            (Value::DateTime(dt_us), b"\x1a2024-03-07 09:05:01.000120"),
            (Value::Null, b"\xfb"),
        ];
        for (v, want) in cases {
            let mut out = Vec::new();
            write_text_value(&mut out, &v, &c);
            assert_eq!(out, want, "{v:?}");
        }
        let mut dec = col("d", ColumnType::NewDecimal);
        dec.decimals = 2;
        for (v, want) in [
            ("1", &b"\x041.00"[..]),
            ("0.5", b"\x040.50"),
            ("1.234", b"\x051.234"),
        ] {
            let mut out = Vec::new();
            write_text_value(&mut out, &Value::Decimal(v.parse().expect("decimal")), &dec);
            assert_eq!(out, want, "{v}");
        }
        let mut dt3 = col("d", ColumnType::DateTime);
        dt3.decimals = 3;
        let mut out = Vec::new();
        write_text_value(&mut out, &Value::DateTime(dt), &dt3);
        assert_eq!(out, b"\x172024-03-07 09:05:01.000");
        // A TIMESTAMP column's value shows its session-local reading.
        let stamp = Value::Stamp(canyon_sql::Stamp {
            utc: dt - chrono::Duration::hours(5),
            local: dt,
        });
        let mut out = Vec::new();
        write_text_value(&mut out, &stamp, &dt3);
        assert_eq!(out, b"\x172024-03-07 09:05:01.000");
    }

    #[test]
    fn ok_eof_err_layout() {
        let mut out = Vec::new();
        write_ok(
            &mut out,
            &OkPacket {
                affected_rows: 300,
                last_insert_id: 5,
                status: 2,
                warnings: 1,
                info: "hi",
            },
            false,
        );
        assert_eq!(out, vec![0, 0xfc, 44, 1, 5, 2, 0, 1, 0, 2, b'h', b'i']);
        out.clear();
        write_end_of_rows(&mut out, true, 0, 3);
        assert_eq!(out, vec![0xfe, 0, 0, 3, 0, 0, 0]);
        out.clear();
        write_end_of_rows(&mut out, false, 2, 3);
        assert_eq!(out, vec![0xfe, 2, 0, 3, 0]);
        out.clear();
        write_err(
            &mut out,
            &MysqlError {
                code: 1146,
                sqlstate: "42S02",
                message: "x".into(),
            },
        );
        assert_eq!(out, b"\xff\x7a\x04#42S02x");
    }

    #[test]
    fn column_definition_layout() {
        let mut c = col("id", ColumnType::Long);
        c.flags = 3;
        let mut out = Vec::new();
        write_column_definition(&mut out, &c, false);
        let mut r = Cursor::new(&out);
        for want in ["def", "db", "t", "t", "id", "id"] {
            assert_eq!(r.lenenc_bytes(), Ok(want.as_bytes()));
        }
        assert_eq!(r.u8(), Ok(0x0c));
        assert_eq!(r.u16(), Ok(63));
        assert_eq!(r.u32(), Ok(11));
        assert_eq!(r.u8(), Ok(ColumnType::Long as u8));
        assert_eq!(r.u16(), Ok(3));
        assert_eq!(r.u8(), Ok(0));
        assert_eq!(r.u16(), Ok(0));
        assert!(r.is_empty());
        out.clear();
        write_column_definition(&mut out, &c, true);
        assert_eq!(out.last(), Some(&0xfb));
    }

    #[test]
    fn short_rows_are_padded_with_null() {
        let cols: Arc<[Column]> =
            vec![col("a", ColumnType::Long), col("b", ColumnType::Long)].into();
        let mut out = Vec::new();
        write_text_row(&mut out, &cols, &[Value::Int(1)]);
        assert_eq!(out, b"\x011\xfb");
    }
}
