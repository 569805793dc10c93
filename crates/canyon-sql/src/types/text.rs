//! The text form of values: what MySQL's text protocol sends for a column,
//! and what SELECT ... INTO OUTFILE writes (one function for both, so a
//! file holds exactly what a client would have read).
//!
//! Integers in decimal, doubles in the shortest form that reads back to the
//! same double with MySQL's notation rules (`my_gcvt`), FLOAT(M,D) /
//! DOUBLE(M,D) and DECIMAL(M,D) with their D digits, BIT(n) as its bytes,
//! YEAR zero-filled, temporals in ISO form with the column's fractional
//! digits, TIMESTAMPs in the session's zone. The protocol writer
//! (`canyon-protocol`'s `write_text_value`) keeps its own allocation-free
//! path for integers and strings and calls [`column_text`] for the rest.

use crate::types::result::{Column, ColumnType};
use crate::types::value::Value;
use chrono::{Datelike, NaiveDate, NaiveDateTime, Timelike};
use std::borrow::Cow;

/// The text of `value` in a result column described by `col`; `None` for
/// NULL.
pub fn column_text<'a>(value: &'a Value, col: &Column) -> Option<Cow<'a, [u8]>> {
    let owned = |s: String| Cow::Owned(s.into_bytes());
    Some(match value {
        Value::Null => return None,
        Value::Int(v) => owned(v.to_string()),
        // A BIT(n) column's value is a bit string: ⌈n/8⌉ bytes, big-endian.
        Value::UInt(v) if col.column_type == ColumnType::Bit => {
            let bytes = (col.length.clamp(1, 64) as usize).div_ceil(8);
            Cow::Owned(v.to_be_bytes()[8 - bytes..].to_vec())
        }
        // YEAR is ZEROFILL: year 0 is `0000`. A column of length 2 is
        // MariaDB's YEAR(2), which shows the year's last two digits.
        Value::UInt(v) if col.column_type == ColumnType::Year && col.length == 2 => {
            owned(format!("{:02}", v % 100))
        }
        Value::UInt(v) if col.column_type == ColumnType::Year => owned(format!("{v:04}")),
        Value::UInt(v) => owned(v.to_string()),
        Value::Double(v) => {
            // A FLOAT(M,D) / DOUBLE(M,D) column prints D digits after the
            // point, as a DECIMAL does (31 is "not fixed").
            let real = matches!(col.column_type, ColumnType::Float | ColumnType::Double);
            owned(if real && col.decimals < 31 && v.is_finite() {
                format!("{:.*}", usize::from(col.decimals), v)
            } else if col.column_type == ColumnType::Float {
                format_float(*v as f32)
            } else {
                format_double(*v)
            })
        }
        Value::Decimal(d) => {
            // A DECIMAL(M,D) column prints D digits after the point (`1.00`,
            // not `1`) even when the value's own scale is smaller.
            let mut d = *d;
            let declared = u32::from(col.decimals);
            let decimal_column = matches!(
                col.column_type,
                ColumnType::NewDecimal | ColumnType::Decimal
            );
            if decimal_column
                && declared <= crate::types::decimal::MAX_SCALE
                && d.scale() < declared
            {
                d.rescale(declared);
            }
            owned(d.to_string())
        }
        Value::Bytes(b) => Cow::Borrowed(b.as_slice()),
        // MySQL's normalised JSON text.
        Value::Json(_) => Cow::Owned(value.to_bytes().unwrap_or_default()),
        Value::Date(d) => owned(format_date(d)),
        Value::DateTime(dt) => owned(format_datetime(dt, fraction_digits(col, dt))),
        // A TIMESTAMP column's value shows in the session's time zone.
        Value::Stamp(s) => owned(format_datetime(&s.local, fraction_digits(col, &s.local))),
    })
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

/// `YYYY-MM-DD`.
pub fn format_date(d: &NaiveDate) -> String {
    if crate::types::datetime::is_zero_date(d) {
        return "0000-00-00".to_string();
    }
    format!("{:04}-{:02}-{:02}", d.year(), d.month(), d.day())
}

/// `YYYY-MM-DD HH:MM:SS`, plus `.` and `digits` fractional digits when `digits > 0`.
pub fn format_datetime(dt: &NaiveDateTime, digits: u8) -> String {
    let zero = crate::types::datetime::is_zero(dt);
    let mut s = if zero {
        "0000-00-00 00:00:00".to_string()
    } else {
        format!(
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
            dt.year(),
            dt.month(),
            dt.day(),
            dt.hour(),
            dt.minute(),
            dt.second()
        )
    };
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

/// A FLOAT as MySQL prints it: at most FLT_DIG (6) significant digits
/// (`my_gcvt` asks dtoa for no more for a FLOAT: 1111111111 is
/// `1111110000`), with the same notation rules (field width 12).
pub fn format_float(v: f32) -> String {
    gcvt(f64::from(v), format!("{:.5e}", f64::from(v)), 12)
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
        assert_eq!(format_float(3.4028235e38), "3.40282e38");
        assert_eq!(format_float(1111111111.0), "1111110000");
        assert_eq!(format_float(100119.0), "100119");
    }
}
