//! SQL values and MySQL's comparison and conversion rules.
//!
//! [`Value`] is what expressions evaluate to and what crosses the engine boundary.
//! Comparisons follow MySQL's "type conversion in expression evaluation" rules
//! (manual, section 14.3): two integers compare as integers; an exact number with a
//! DECIMAL compares as DECIMAL; anything with a DOUBLE, or a string with a number,
//! compares as DOUBLE; two strings compare as strings; a temporal value with a
//! string compares as temporal values when the string parses.
//!
//! [`compare`] compares strings bytewise; [`compare_as`] and [`sort_cmp_as`]
//! compare them under a collation (`crate::types::collation`), which the binder
//! decides per operation.

use crate::types::collation::Collation;
use crate::types::decimal::Decimal;
use crate::types::json;
use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
use std::cmp::Ordering;

/// A SQL value as it crosses the engine boundary.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// Signed integers (all signed integer column types).
    Int(i64),
    /// Unsigned integers (UNSIGNED columns, and values above i64::MAX).
    UInt(u64),
    /// DOUBLE / FLOAT.
    Double(f64),
    /// DECIMAL, exact.
    Decimal(Decimal),
    /// Character and binary strings (CHAR, VARCHAR, TEXT, BLOB, VARBINARY).
    Bytes(Vec<u8>),
    /// DATE.
    Date(NaiveDate),
    /// DATETIME, and any date-and-time an expression makes (a TIMESTAMP
    /// column read into an expression included: it is its session-local time).
    DateTime(NaiveDateTime),
    /// A TIMESTAMP column's value as a row holds it: the stored UTC instant
    /// with its reading in the session's time zone (see
    /// [`crate::types::timezone`], "TIMESTAMP columns"). Everything that
    /// shows or computes with it sees [`Stamp::local`]; storage, keys and
    /// UNIX_TIMESTAMP() use [`Stamp::utc`], so a row read and written back
    /// keeps its instant even in a repeated autumn hour.
    Stamp(Stamp),
    /// A JSON document in Canyon's binary form (see [`crate::types::json`]);
    /// clients see its normalised text.
    Json(Vec<u8>),
}

/// A TIMESTAMP value: its instant and how the session's zone reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// The instant, as a UTC date and time (what is stored).
    pub utc: NaiveDateTime,
    /// The instant in the session's time zone (what is shown).
    pub local: NaiveDateTime,
}

impl Value {
    /// A string value from text.
    pub fn str(s: &str) -> Value {
        Value::Bytes(s.as_bytes().to_vec())
    }

    /// Whether the value is SQL NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Whether the value is the zero date `'0000-00-00'` (as a DATE,
    /// DATETIME or TIMESTAMP; see `crate::types::datetime`).
    pub fn is_zero_date(&self) -> bool {
        match self {
            Value::Date(d) => crate::types::datetime::is_zero_date(d),
            Value::DateTime(dt) | Value::Stamp(Stamp { utc: dt, .. }) => {
                crate::types::datetime::is_zero(dt)
            }
            _ => false,
        }
    }

    /// The value as MySQL's text protocol shows it; `None` for NULL.
    pub fn to_text(&self) -> Option<Vec<u8>> {
        Some(match self {
            Value::Null => return None,
            Value::Int(i) => i.to_string().into_bytes(),
            Value::UInt(u) => u.to_string().into_bytes(),
            Value::Double(d) => format_double(*d).into_bytes(),
            Value::Decimal(d) => d.to_string().into_bytes(),
            Value::Bytes(b) => b.clone(),
            Value::Date(d) => format_date(d).into_bytes(),
            Value::DateTime(dt) | Value::Stamp(Stamp { local: dt, .. }) => {
                format_datetime(dt).into_bytes()
            }
            Value::Json(j) => json::to_text(j).into_bytes(),
        })
    }

    /// The value as a Rust string (lossy for invalid UTF-8), "NULL" for NULL.
    pub fn to_display(&self) -> String {
        match self.to_text() {
            None => "NULL".to_string(),
            Some(b) => String::from_utf8_lossy(&b).into_owned(),
        }
    }

    /// SQL truth: NULL is unknown (`None`), zero is false, anything else true.
    /// Strings are converted to numbers as MySQL does ('abc' is 0, false).
    pub fn truth(&self) -> Option<bool> {
        match self {
            Value::Null => None,
            Value::Int(i) => Some(*i != 0),
            Value::UInt(u) => Some(*u != 0),
            Value::Double(d) => Some(*d != 0.0),
            Value::Decimal(d) => Some(!d.is_zero()),
            Value::Bytes(b) => Some(parse_double_prefix(b) != 0.0),
            Value::Date(_) | Value::DateTime(_) | Value::Stamp(_) => Some(true),
            Value::Json(_) => Some(self.to_f64() != Some(0.0)),
        }
    }

    /// The value as a double (MySQL's numeric context). NULL is `None`.
    pub fn to_f64(&self) -> Option<f64> {
        Some(match self {
            Value::Null => return None,
            Value::Int(i) => *i as f64,
            Value::UInt(u) => *u as f64,
            Value::Double(d) => *d,
            Value::Decimal(d) => d.to_f64().unwrap_or(0.0),
            Value::Bytes(b) => parse_double_prefix(b),
            Value::Date(d) => date_number(d) as f64,
            Value::DateTime(dt) | Value::Stamp(Stamp { local: dt, .. }) => {
                datetime_number(dt) as f64
            }
            Value::Json(j) => json_number(j),
        })
    }

    /// The value as a signed integer, rounding as MySQL does for assignment.
    pub fn to_i64(&self) -> Option<i64> {
        Some(match self {
            Value::Null => return None,
            Value::Int(i) => *i,
            Value::UInt(u) => *u as i64,
            // MySQL: a DOUBLE (and a string, read as one) becomes an integer by
            // rint(), half to even; a DECIMAL rounds half away from zero.
            Value::Double(d) => d.round_ties_even() as i64,
            Value::Decimal(d) => d
                .round_dp_with_strategy(
                    0,
                    crate::types::decimal::RoundingStrategy::MidpointAwayFromZero,
                )
                .to_i64()
                .unwrap_or(0),
            Value::Bytes(b) => parse_double_prefix(b).round_ties_even() as i64,
            Value::Date(d) => date_number(d),
            Value::DateTime(dt) | Value::Stamp(Stamp { local: dt, .. }) => datetime_number(dt),
            Value::Json(j) => json_number(j).round_ties_even() as i64,
        })
    }

    /// The value as an exact decimal when it has one.
    pub fn to_decimal(&self) -> Option<Decimal> {
        match self {
            Value::Null => None,
            Value::Int(i) => Some(Decimal::from(*i)),
            Value::UInt(u) => Some(Decimal::from(*u)),
            Value::Double(d) => Decimal::from_f64(*d),
            Value::Decimal(d) => Some(*d),
            Value::Bytes(b) => {
                let s = std::str::from_utf8(b).ok()?.trim();
                Decimal::from_str_exact(s)
                    .ok()
                    .or_else(|| Decimal::from_f64(parse_double_prefix(b)))
            }
            Value::Date(d) => Some(Decimal::from(date_number(d))),
            Value::DateTime(dt) | Value::Stamp(Stamp { local: dt, .. }) => {
                Some(Decimal::from(datetime_number(dt)))
            }
            Value::Json(j) => match json::JsonRef::new(j).number() {
                Some(json::Num::Decimal(d)) => Some(d),
                Some(json::Num::Int(i)) => Some(Decimal::from(i)),
                Some(json::Num::UInt(u)) => Some(Decimal::from(u)),
                _ => Decimal::from_f64(json_number(j)),
            },
        }
    }

    /// The bytes of a string value, or the text form of anything else.
    pub fn to_bytes(&self) -> Option<Vec<u8>> {
        self.to_text()
    }

    fn is_exact_number(&self) -> bool {
        matches!(self, Value::Int(_) | Value::UInt(_) | Value::Decimal(_))
    }

    fn is_temporal(&self) -> bool {
        matches!(self, Value::Date(_) | Value::DateTime(_) | Value::Stamp(_))
    }

    /// The value as expressions see it: a [`Value::Stamp`] becomes its
    /// session-local [`Value::DateTime`]; anything else is itself.
    pub fn local(self) -> Value {
        match self {
            Value::Stamp(s) => Value::DateTime(s.local),
            v => v,
        }
    }
}

/// Compares two non-NULL values with MySQL's conversion rules. Returns `None` when
/// either side is NULL.
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    use Value::*;
    Some(match (a, b) {
        (Null, _) | (_, Null) => return None,
        // Two TIMESTAMPs compare by instant (as MySQL sorts them: by the
        // stored value); one with anything else by its local reading.
        (Stamp(x), Stamp(y)) => x.utc.cmp(&y.utc),
        (Stamp(x), y) => return compare(&DateTime(x.local), y),
        (x, Stamp(y)) => return compare(x, &DateTime(y.local)),
        // A JSON value compares with JSON rules, the SQL value converted to
        // JSON (a string is a JSON string): MySQL 8 manual 13.5.
        (Json(x), y) => json::compare(json::JsonRef::new(x), json::JsonRef::new(&sql_to_json(y))),
        (x, Json(y)) => json::compare(json::JsonRef::new(&sql_to_json(x)), json::JsonRef::new(y)),
        (Int(x), Int(y)) => x.cmp(y),
        (UInt(x), UInt(y)) => x.cmp(y),
        (Int(x), UInt(y)) => {
            if *x < 0 {
                Ordering::Less
            } else {
                (*x as u64).cmp(y)
            }
        }
        (UInt(x), Int(y)) => {
            if *y < 0 {
                Ordering::Greater
            } else {
                x.cmp(&(*y as u64))
            }
        }
        (Bytes(x), Bytes(y)) => x.cmp(y),
        (Date(x), Date(y)) => x.cmp(y),
        (DateTime(x), DateTime(y)) => x.cmp(y),
        (Date(x), DateTime(y)) => x.and_time(NaiveTime::MIN).cmp(y),
        (DateTime(x), Date(y)) => x.cmp(&y.and_time(NaiveTime::MIN)),
        (t, Bytes(s)) if t.is_temporal() => match parse_datetime_bytes(s) {
            Some(parsed) => return compare(t, &parsed),
            None => return compare_f64(a, b),
        },
        (Bytes(s), t) if t.is_temporal() => match parse_datetime_bytes(s) {
            Some(parsed) => return compare(&parsed, t),
            None => return compare_f64(a, b),
        },
        (x, y) if x.is_exact_number() && y.is_exact_number() => {
            let (dx, dy) = (x.to_decimal()?, y.to_decimal()?);
            dx.cmp(&dy)
        }
        _ => return compare_f64(a, b),
    })
}

/// A JSON value in numeric context: its number, a string's numeric prefix,
/// true as 1, anything else 0 (MySQL warns 3156 there; Canyon does not).
fn json_number(j: &[u8]) -> f64 {
    let r = json::JsonRef::new(j);
    match (r.number(), r.as_str(), r.as_bool()) {
        (Some(n), _, _) => n.to_f64(),
        (_, Some(s), _) => parse_double_prefix(s.as_bytes()),
        (_, _, Some(b)) => b as u8 as f64,
        _ => 0.0,
    }
}

/// A SQL value as a JSON value (binary form), as MySQL converts the
/// non-JSON operand of a comparison or a JSON function's value argument:
/// strings become JSON strings, numbers numbers, temporal values their text
/// (MySQL has JSON DATE / DATETIME scalars; Canyon uses strings), NULL null.
pub fn sql_to_json(v: &Value) -> Vec<u8> {
    json::encode(&sql_to_node(v))
}

/// [`sql_to_json`] as a tree.
pub fn sql_to_node(v: &Value) -> json::Node {
    match v {
        Value::Null => json::Node::Null,
        Value::Int(i) => json::Node::Int(*i),
        Value::UInt(u) => json::Node::UInt(*u),
        Value::Double(d) => json::Node::Double(*d),
        Value::Decimal(d) => json::Node::Decimal(*d),
        Value::Json(j) => json::JsonRef::new(j).to_node(),
        other => json::Node::Str(other.to_display()),
    }
}

fn compare_f64(a: &Value, b: &Value) -> Option<Ordering> {
    let (x, y) = (a.to_f64()?, b.to_f64()?);
    Some(x.partial_cmp(&y).unwrap_or(Ordering::Equal))
}

/// A total order for sorting (ORDER BY, DISTINCT, GROUP BY): NULL first, then by
/// [`compare`].
pub fn sort_cmp(a: &Value, b: &Value) -> Ordering {
    match (a.is_null(), b.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ => compare(a, b).unwrap_or(Ordering::Equal),
    }
}

/// [`compare`] under a collation: two strings compare by its weights; any
/// other pair (a string with a number, say) by MySQL's type rules.
pub fn compare_as(l: &Value, r: &Value, coll: Option<Collation>) -> Option<Ordering> {
    match (l, r, coll) {
        (Value::Bytes(x), Value::Bytes(y), Some(c)) => Some(c.compare(x, y)),
        _ => compare(l, r),
    }
}

/// [`sort_cmp`] under a collation.
pub fn sort_cmp_as(a: &Value, b: &Value, coll: Option<Collation>) -> Ordering {
    match (a, b, coll) {
        (Value::Bytes(x), Value::Bytes(y), Some(c)) => c.compare(x, y),
        _ => sort_cmp(a, b),
    }
}

/// `vals` with each string replaced by its sort key under the matching
/// collation of `colls` (absent or `None`: kept), so that values equal under
/// the collations become equal values — for hashing GROUP BY, DISTINCT and
/// join keys. Borrows when nothing changes.
pub fn collated<'a>(
    vals: &'a [Value],
    colls: &[Option<Collation>],
) -> std::borrow::Cow<'a, [Value]> {
    // Equal numbers spelled differently get one key: a DECIMAL's scale varies
    // with the expression that made it (`4.00 MOD 2` is 0, `2.00 MOD 2` 0.00)
    // and a zero may be negative (`-2.00 MOD 2` is -0.00).
    let respelled = |v: &Value| match v {
        Value::Decimal(d) => {
            d.scale() != d.normalize().scale() || (d.is_zero() && d.is_sign_negative())
        }
        Value::Double(f) => *f == 0.0 && f.is_sign_negative(),
        _ => false,
    };
    let applies = |i: usize, v: &Value| {
        respelled(v) || (matches!(v, Value::Bytes(_)) && colls.get(i).copied().flatten().is_some())
    };
    if !vals.iter().enumerate().any(|(i, v)| applies(i, v)) {
        return std::borrow::Cow::Borrowed(vals);
    }
    std::borrow::Cow::Owned(
        vals.iter()
            .enumerate()
            .map(|(i, v)| match (v, colls.get(i).copied().flatten()) {
                (Value::Bytes(b), Some(c)) => {
                    let mut k = Vec::with_capacity(b.len() * 2);
                    c.sort_key(b, &mut k);
                    Value::Bytes(k)
                }
                (Value::Decimal(d), _) => Value::Decimal(d.normalize()),
                (Value::Double(f), _) if *f == 0.0 => Value::Double(0.0),
                _ => v.clone(),
            })
            .collect(),
    )
}

/// Formats a double as MySQL prints it: shortest round-trip digits, no trailing
/// ".0", exponent form for very large or small magnitudes.
pub fn format_double(d: f64) -> String {
    if d.is_nan() {
        return "NaN".into();
    }
    if d.is_infinite() {
        return if d > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if d == 0.0 {
        return "0".into();
    }
    let abs = d.abs();
    if (1e-6..1e15).contains(&abs) {
        let s = format!("{d}");
        s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
    } else {
        // Rust's `{:e}` gives "1e20" / "1.5e-7"; MySQL prints "1e20" / "1.5e-7".
        format!("{d:e}")
    }
}

/// Formats a datetime as MySQL does: fractional seconds only when nonzero.
pub fn format_datetime(dt: &NaiveDateTime) -> String {
    if crate::types::datetime::is_zero(dt) {
        return "0000-00-00 00:00:00".to_string();
    }
    let micros = dt.and_utc().timestamp_subsec_micros();
    if micros == 0 {
        dt.format("%Y-%m-%d %H:%M:%S").to_string()
    } else {
        format!("{}.{:06}", dt.format("%Y-%m-%d %H:%M:%S"), micros)
    }
}

/// Parses the longest numeric prefix of a string as MySQL does in numeric context
/// ('12abc' is 12, 'abc' is 0); leading spaces are skipped.
pub fn parse_double_prefix(b: &[u8]) -> f64 {
    let s = match std::str::from_utf8(b) {
        Ok(s) => s.trim_start(),
        Err(_) => return 0.0,
    };
    let bytes = s.as_bytes();
    let mut end = 0;
    let mut seen_digit = false;
    let mut seen_dot = false;
    let mut seen_exp = false;
    while end < bytes.len() {
        let c = bytes[end];
        match c {
            b'0'..=b'9' => seen_digit = true,
            b'+' | b'-' if end == 0 => {}
            b'+' | b'-' if seen_exp && matches!(bytes[end - 1], b'e' | b'E') => {}
            b'.' if !seen_dot && !seen_exp => seen_dot = true,
            b'e' | b'E' if seen_digit && !seen_exp => seen_exp = true,
            _ => break,
        }
        end += 1;
    }
    // Back off a dangling exponent or sign ("1e", "1e+").
    while end > 0 && matches!(bytes[end - 1], b'e' | b'E' | b'+' | b'-') {
        end -= 1;
    }
    s[..end].parse::<f64>().unwrap_or(0.0)
}

/// Parses 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS[.ffffff]' (also with 'T'),
/// then MySQL's lenient forms (`crate::types::datetime::parse_temporal`).
pub fn parse_datetime_bytes(b: &[u8]) -> Option<Value> {
    let s = std::str::from_utf8(b).ok()?.trim();
    // chrono's `%Y` reads '98-12-31' as the year 98; MySQL's two-digit
    // years (1970-2069) are `parse_temporal`'s.
    let short_year = s.bytes().take_while(u8::is_ascii_digit).count() <= 2;
    if short_year {
        let t = crate::types::datetime::parse_temporal(s.as_bytes())?;
        return Some(if t.has_time {
            Value::DateTime(t.dt)
        } else {
            Value::Date(t.dt.date())
        });
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return Some(Value::Date(d));
    }
    for fmt in [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
        "%Y%m%d%H%M%S",
    ] {
        if let Ok(dt) = NaiveDateTime::parse_from_str(s, fmt) {
            return Some(Value::DateTime(dt));
        }
    }
    if s.len() == 8 {
        if let Ok(d) = NaiveDate::parse_from_str(s, "%Y%m%d") {
            return Some(Value::Date(d));
        }
    }
    // MySQL's lenient forms: any punctuation as the delimiter and one-digit
    // parts ('1962/2/18', '2021.1.1 0:0:0'), as real load scripts write
    // them (the Chinook sample's dates).
    let t = crate::types::datetime::parse_temporal(s.as_bytes())?;
    Some(if t.has_time {
        Value::DateTime(t.dt)
    } else {
        Value::Date(t.dt.date())
    })
}

/// `YYYY-MM-DD`; the zero date is `0000-00-00`.
pub fn format_date(d: &NaiveDate) -> String {
    if crate::types::datetime::is_zero_date(d) {
        return "0000-00-00".to_string();
    }
    d.format("%Y-%m-%d").to_string()
}

fn date_number(d: &NaiveDate) -> i64 {
    use chrono::Datelike;
    if crate::types::datetime::is_zero_date(d) {
        return 0;
    }
    d.year() as i64 * 10000 + d.month() as i64 * 100 + d.day() as i64
}

fn datetime_number(dt: &NaiveDateTime) -> i64 {
    use chrono::Timelike;
    date_number(&dt.date()) * 1_000_000
        + dt.hour() as i64 * 10000
        + dt.minute() as i64 * 100
        + dt.second() as i64
}

/// Normalises a value assigned to a boolean variable ("ON", 1, true ...).
pub fn parse_bool(name: &str, v: &Value) -> canyon_common::Result<bool> {
    let bad = || canyon_common::Error::WrongValueForVar {
        name: name.to_string(),
        value: v.to_display(),
    };
    match v {
        Value::Int(0) | Value::UInt(0) => Ok(false),
        Value::Int(1) | Value::UInt(1) => Ok(true),
        Value::Bytes(b) => match String::from_utf8_lossy(b).to_ascii_uppercase().as_str() {
            "ON" | "TRUE" | "1" => Ok(true),
            "OFF" | "FALSE" | "0" => Ok(false),
            _ => Err(bad()),
        },
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mysql_comparison_rules() {
        assert_eq!(
            compare(&Value::Int(-1), &Value::UInt(1)),
            Some(Ordering::Less)
        );
        assert_eq!(
            compare(&Value::str("10"), &Value::Int(9)),
            Some(Ordering::Greater)
        );
        assert_eq!(
            compare(&Value::str("abc"), &Value::Int(0)),
            Some(Ordering::Equal)
        );
        assert_eq!(compare(&Value::Null, &Value::Int(0)), None);
        assert_eq!(
            compare(&Value::Decimal(Decimal::new(150, 2)), &Value::Double(1.5)),
            Some(Ordering::Equal)
        );
        let d = NaiveDate::from_ymd_opt(2024, 1, 2).expect("valid date");
        assert_eq!(
            compare(&Value::Date(d), &Value::str("2024-01-02")),
            Some(Ordering::Equal)
        );
    }

    #[test]
    fn doubles_print_like_mysql() {
        assert_eq!(format_double(1.0), "1");
        assert_eq!(format_double(0.5), "0.5");
        assert_eq!(format_double(-2.25), "-2.25");
        assert_eq!(format_double(1e20), "1e20");
        assert_eq!(format_double(0.0), "0");
    }

    #[test]
    fn numeric_prefix() {
        assert_eq!(parse_double_prefix(b"12abc"), 12.0);
        assert_eq!(parse_double_prefix(b" -3.5e2x"), -350.0);
        assert_eq!(parse_double_prefix(b"abc"), 0.0);
        assert_eq!(parse_double_prefix(b"1e"), 1.0);
    }
}
