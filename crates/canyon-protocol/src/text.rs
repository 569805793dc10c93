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
//! (MySQL's `my_gcvt`), decimals with their scale, temporals in ISO form.

use super::codec::{put_lenenc_bytes, put_lenenc_int, put_u16};
use super::constants::header;
use super::errors::MysqlError;
use canyon_sql::{Charset, Column, ColumnType, Value};
use chrono::{Datelike, NaiveDate, NaiveDateTime, Timelike};

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
        Value::Int(v) => put_lenenc_bytes(out, fmt_i64(*v, &mut scratch)),
        // A BIT(n) column's value is a bit string: ⌈n/8⌉ bytes, big-endian.
        Value::UInt(v) if col.column_type == ColumnType::Bit => {
            let bytes = (col.length.clamp(1, 64) as usize).div_ceil(8);
            put_lenenc_bytes(out, &v.to_be_bytes()[8 - bytes..]);
        }
        // YEAR is ZEROFILL: year 0 is `0000`.
        Value::UInt(v) if col.column_type == ColumnType::Year => {
            put_lenenc_bytes(out, format!("{v:04}").as_bytes())
        }
        Value::UInt(v) => put_lenenc_bytes(out, fmt_u64(*v, &mut scratch)),
        Value::Double(v) => {
            // A FLOAT(M,D) / DOUBLE(M,D) column prints D digits after the
            // point, as a DECIMAL does (31 is "not fixed").
            let real = matches!(col.column_type, ColumnType::Float | ColumnType::Double);
            let s = if real && col.decimals < 31 && v.is_finite() {
                format!("{:.*}", usize::from(col.decimals), v)
            } else if col.column_type == ColumnType::Float {
                format_float(*v as f32)
            } else {
                format_double(*v)
            };
            put_lenenc_bytes(out, s.as_bytes());
        }
        Value::Decimal(d) => {
            // A DECIMAL(M,D) column prints D digits after the point (`1.00`, not `1`)
            // even when the value's own scale is smaller.
            let mut d = *d;
            let declared = u32::from(col.decimals);
            let decimal_column = matches!(
                col.column_type,
                ColumnType::NewDecimal | ColumnType::Decimal
            );
            if decimal_column && declared <= 28 && d.scale() < declared {
                d.rescale(declared);
            }
            put_lenenc_bytes(out, d.to_string().as_bytes())
        }
        Value::Bytes(b) => put_lenenc_bytes(out, b),
        // MySQL's normalised JSON text.
        Value::Json(_) => put_lenenc_bytes(out, &value.to_bytes().unwrap_or_default()),
        Value::Date(d) => put_lenenc_bytes(out, format_date(d).as_bytes()),
        Value::DateTime(dt) => put_lenenc_bytes(
            out,
            format_datetime(dt, fraction_digits(col, dt)).as_bytes(),
        ),
        // A TIMESTAMP column's value shows in the session's time zone.
        Value::Stamp(s) => put_lenenc_bytes(
            out,
            format_datetime(&s.local, fraction_digits(col, &s.local)).as_bytes(),
        ),
    }
}

/// How many fractional-second digits to print: the column's declared precision
/// for DATETIME(n)/TIMESTAMP(n), otherwise 6 when there are microseconds, else 0.
fn fraction_digits(col: &Column, dt: &NaiveDateTime) -> u8 {
    let temporal = matches!(
        col.column_type,
        ColumnType::DateTime | ColumnType::Timestamp
    );
    if temporal && (1..=6).contains(&col.decimals) {
        col.decimals
    } else if dt.and_utc().timestamp_subsec_micros() != 0 {
        6
    } else {
        0
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

/// `YYYY-MM-DD`.
pub fn format_date(d: &NaiveDate) -> String {
    format!("{:04}-{:02}-{:02}", d.year(), d.month(), d.day())
}

/// `YYYY-MM-DD HH:MM:SS`, plus `.` and `digits` fractional digits when `digits > 0`.
pub fn format_datetime(dt: &NaiveDateTime, digits: u8) -> String {
    let mut s = format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        dt.year(),
        dt.month(),
        dt.day(),
        dt.hour(),
        dt.minute(),
        dt.second()
    );
    if digits > 0 {
        let micros = dt.and_utc().timestamp_subsec_micros().min(999_999);
        let frac = format!("{micros:06}");
        s.push('.');
        s.push_str(&frac[..usize::from(digits.min(6))]);
    }
    s
}

/// A DOUBLE as MySQL's text protocol prints it (`my_gcvt` with the 22-character
/// field width of a DOUBLE column): the shortest digits that read back to the same
/// value, in fixed notation unless that would need more than 15 integer digits
/// with nothing after the point, more than 14 zeros after it, or more room than
/// the field has. `1` -> `1`, `0.5` -> `0.5`, `1e20` -> `1e20`,
/// `1.5e-20` -> `1.5e-20`.
pub fn format_double(v: f64) -> String {
    gcvt(v, format!("{v:e}"), 22)
}

/// A FLOAT as MySQL prints it: the shortest digits that read back to the same
/// single-precision value, with the same notation rules (field width 12).
pub fn format_float(v: f32) -> String {
    gcvt(f64::from(v), format!("{v:e}"), 12)
}

/// The notation choice of MySQL's `my_gcvt` (strings/dtoa.cc), applied to the
/// shortest round-trip digits that Rust's `{:e}` produces.
fn gcvt(v: f64, sci: String, width: i32) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v == 0.0 {
        // MySQL prints -0 as "-0"; the sign is kept.
        return if v.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    // `sci` is like "-1.2345e-7": split sign, digits and exponent.
    let (negative, body) = match sci.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, sci.as_str()),
    };
    let (mantissa, exp) = body.split_once('e').unwrap_or((body, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let len = digits.len() as i32;
    // `decpt`: the position of the decimal point relative to the digits, as dtoa
    // returns it (0.05 -> digits "5", decpt -1; 123 -> "123", decpt 3).
    let decpt = exp + 1;
    let width = if negative { width - 1 } else { width };

    let f_len = if decpt <= 0 {
        len - decpt + 2
    } else if decpt < len {
        len + 1
    } else {
        decpt
    };
    let have_space = f_len <= width;
    const MAX_DECPT_FOR_F_FORMAT: i32 = 15; // DBL_DIG
    let use_f = if have_space {
        decpt > -MAX_DECPT_FOR_F_FORMAT && (decpt <= MAX_DECPT_FOR_F_FORMAT || len > decpt)
    } else {
        decpt <= width && decpt >= -2
    };

    let mut s = String::with_capacity(24);
    if negative {
        s.push('-');
    }
    if use_f {
        if decpt <= 0 {
            s.push_str("0.");
            for _ in 0..-decpt {
                s.push('0');
            }
            s.push_str(digits);
        } else if decpt < len {
            s.push_str(&digits[..decpt as usize]);
            s.push('.');
            s.push_str(&digits[decpt as usize..]);
        } else {
            s.push_str(digits);
            for _ in 0..decpt - len {
                s.push('0');
            }
        }
    } else {
        s.push_str(&digits[..1]);
        if len > 1 {
            s.push('.');
            s.push_str(&digits[1..]);
        }
        s.push('e');
        s.push_str(&(decpt - 1).to_string());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Cursor;
    use canyon_sql::charset;
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
    fn doubles_print_like_mysql() {
        let cases: &[(f64, &str)] = &[
            (1.0, "1"),
            (0.5, "0.5"),
            (-0.5, "-0.5"),
            (1e20, "1e20"),
            (1e15, "1e15"),
            (1e14, "100000000000000"),
            (123456789012345.0, "123456789012345"),
            (1234567890123456.0, "1.234567890123456e15"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e-5, "0.00001"),
            (1.5e-20, "1.5e-20"),
            (1e-15, "0.000000000000001"),
            (1e-16, "1e-16"),
            (-1e-300, "-1e-300"),
            (2.71, "2.71"),
            (100.0, "100"),
            (12345.678, "12345.678"),
            (f64::MAX, "1.7976931348623157e308"),
            (0.0, "0"),
            (1.2345678901234568e-10, "1.2345678901234568e-10"),
        ];
        for (v, want) in cases {
            assert_eq!(format_double(*v), *want, "{v:e}");
        }
        assert_eq!(format_double(f64::NAN), "nan");
        assert_eq!(format_double(f64::INFINITY), "inf");
    }

    #[test]
    fn floats_use_single_precision_digits() {
        assert_eq!(format_float(0.1), "0.1");
        assert_eq!(format_float(1.5), "1.5");
        assert_eq!(format_float(3.4028235e38), "3.4028235e38");
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
