//! Scalar functions: the ones clients and common applications call.
//!
//! Each function is resolved once at bind time ([`lookup`], [`check_arity`]) and
//! evaluated by [`call`]. Unknown functions are error 1305, wrong argument counts
//! 1582, as in MySQL. Forms with their own syntax (`d + INTERVAL n DAY`,
//! `DATE_ADD(d, INTERVAL ...)`, `EXTRACT(unit FROM d)`, `TIMESTAMPDIFF(unit, a, b)`,
//! `POSITION(a IN b)`) are bound by [`bind_special`], which the binder asks first.
//!
//! Semantics follow MySQL 8's manual (chapter 14, "Functions and Operators"), and
//! every function is checked against MariaDB 10.11 by the differential test
//! (`crates/canyon-server/tests/sql/differential_functions.sql`):
//!
//! * NULL in, NULL out, except where MySQL says otherwise (CONCAT_WS, COALESCE,
//!   FIELD, ELT, CHAR, QUOTE);
//! * a string that is no valid date gives NULL with warning 1292, a date outside
//!   years 1..9999 NULL with warning 1441 (see [`crate::types::datetime`]);
//! * ROUND/TRUNCATE of DECIMAL and integers are exact, half away from zero; of
//!   DOUBLE they scale by a power of ten and use `rint` (half to even), as
//!   MySQL's `my_double_round` does: `ROUND(2.5e0)` is 2, `ROUND(2.5)` is 3;
//! * CAST(string AS SIGNED) reads the leading integer only ('1e3' is 1), with
//!   warning 1292 for the rest; CAST(x AS DECIMAL(p, s)) clamps to p digits
//!   (warning 1264).
//!
//! Known differences: strings compare bytewise (LOCATE, INSTR, FIELD, STRCMP,
//! NULLIF are case-sensitive; MySQL's default collation is not); TIME values are
//! strings (`TIME()`, `CURTIME()`, STR_TO_DATE with only time parts); zero dates
//! ('2024-00-00') are NULL; SHA2 with 384 or 512 bits is refused (1235); the
//! compound INTERVAL units (DAY_SECOND, ...) do not parse.

use crate::expr::{eval, AggCall, Env, Expr};
use crate::types::datetime::{self, Temporal, Unit};
use crate::types::value::{compare, sort_cmp, Value};
use crate::types::ExprKind;
use canyon_common::{Error, Result};
use rust_decimal::prelude::ToPrimitive;
use rust_decimal::{Decimal, RoundingStrategy};
use sqlparser::ast;
use std::cmp::Ordering;

/// A scalar function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Func {
    Version,
    Database,
    User,
    CurrentUser,
    ConnectionId,
    LastInsertId,
    RowCount,
    FoundRows,
    Now,
    CurDate,
    UnixTimestamp,
    Rand,
    Concat,
    ConcatWs,
    Length,
    CharLength,
    Upper,
    Lower,
    Substring,
    Left,
    Right,
    Trim,
    LTrim,
    RTrim,
    Replace,
    Repeat,
    Hex,
    Abs,
    Ceil,
    Floor,
    Round,
    Truncate,
    Mod,
    Power,
    Sqrt,
    Sign,
    Coalesce,
    IfNull,
    If,
    NullIf,
    IsNull,
    Greatest,
    Least,
    CastSigned,
    CastUnsigned,
    CastChar,
    /// CAST(x AS CHAR(n)): at most n characters (MySQL warns 1292 when it cuts).
    CastCharN(u32),
    CastDouble,
    CastDecimal(u8, u8),
    CastDate,
    CastDateTime,
    /// Converts a branch of IF / IFNULL / COALESCE / CASE to the branches'
    /// aggregated type (see [`aggregate_kind`]); made by the binder, never named
    /// in SQL.
    Conform(ExprKind),
    // ---- date and time (see crate::types::datetime) ----
    /// DATE_ADD / DATE_SUB / `+ INTERVAL`: (unit, subtract). Args: date, amount.
    DateAdd(Unit, bool),
    DateDiff,
    TimestampDiff(Unit),
    DateFormat,
    StrToDate,
    DateOf,
    TimeOf,
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    Microsecond,
    Quarter,
    Week,
    YearWeek,
    DayOfWeek,
    DayOfYear,
    WeekDay,
    DayName,
    MonthName,
    LastDay,
    Extract(Unit),
    FromUnixtime,
    ToDays,
    FromDays,
    MakeDate,
    UtcTimestamp,
    UtcDate,
    UtcTime,
    CurTime,
    // ---- strings ----
    LPad,
    RPad,
    Locate,
    Instr,
    Reverse,
    SubstringIndex,
    Ascii,
    Char,
    Space,
    Field,
    Elt,
    Strcmp,
    Insert,
    Format,
    Quote,
    Unhex,
    ToBase64,
    FromBase64,
    Md5,
    Sha1,
    Sha2,
    Crc32,
    // ---- math ----
    Exp,
    Ln,
    Log,
    Log2,
    Log10,
    Pi,
    Radians,
    Degrees,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Cot,
    Conv,
}

impl Func {
    /// Whether the result depends only on the arguments and the statement (not
    /// on the row or on randomness): such calls over constants are constants.
    pub fn is_deterministic_per_statement(self) -> bool {
        !matches!(self, Func::Rand)
    }
}

/// Resolves a function name (upper-case).
pub fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "VERSION" => Func::Version,
        "DATABASE" | "SCHEMA" => Func::Database,
        "USER" | "SESSION_USER" | "SYSTEM_USER" => Func::User,
        "CURRENT_USER" => Func::CurrentUser,
        "CONNECTION_ID" => Func::ConnectionId,
        "LAST_INSERT_ID" => Func::LastInsertId,
        "ROW_COUNT" => Func::RowCount,
        "FOUND_ROWS" => Func::FoundRows,
        "NOW" | "CURRENT_TIMESTAMP" | "LOCALTIME" | "LOCALTIMESTAMP" | "SYSDATE" => Func::Now,
        "CURDATE" | "CURRENT_DATE" => Func::CurDate,
        "UNIX_TIMESTAMP" => Func::UnixTimestamp,
        "RAND" => Func::Rand,
        "CONCAT" => Func::Concat,
        "CONCAT_WS" => Func::ConcatWs,
        "LENGTH" | "OCTET_LENGTH" => Func::Length,
        "CHAR_LENGTH" | "CHARACTER_LENGTH" => Func::CharLength,
        "UPPER" | "UCASE" => Func::Upper,
        "LOWER" | "LCASE" => Func::Lower,
        "SUBSTRING" | "SUBSTR" | "MID" => Func::Substring,
        "LEFT" => Func::Left,
        "RIGHT" => Func::Right,
        "TRIM" => Func::Trim,
        "LTRIM" => Func::LTrim,
        "RTRIM" => Func::RTrim,
        "REPLACE" => Func::Replace,
        "REPEAT" => Func::Repeat,
        "HEX" => Func::Hex,
        "ABS" => Func::Abs,
        "CEIL" | "CEILING" => Func::Ceil,
        "FLOOR" => Func::Floor,
        "ROUND" => Func::Round,
        "TRUNCATE" => Func::Truncate,
        "MOD" => Func::Mod,
        "POW" | "POWER" => Func::Power,
        "SQRT" => Func::Sqrt,
        "SIGN" => Func::Sign,
        "COALESCE" => Func::Coalesce,
        "IFNULL" => Func::IfNull,
        "IF" => Func::If,
        "NULLIF" => Func::NullIf,
        "ISNULL" => Func::IsNull,
        "GREATEST" => Func::Greatest,
        "LEAST" => Func::Least,
        "DATEDIFF" => Func::DateDiff,
        "DATE_FORMAT" => Func::DateFormat,
        "STR_TO_DATE" => Func::StrToDate,
        "DATE" => Func::DateOf,
        "TIME" => Func::TimeOf,
        "YEAR" => Func::Year,
        "MONTH" => Func::Month,
        "DAY" | "DAYOFMONTH" => Func::Day,
        "HOUR" => Func::Hour,
        "MINUTE" => Func::Minute,
        "SECOND" => Func::Second,
        "MICROSECOND" => Func::Microsecond,
        "QUARTER" => Func::Quarter,
        "WEEK" => Func::Week,
        "YEARWEEK" => Func::YearWeek,
        "DAYOFWEEK" => Func::DayOfWeek,
        "DAYOFYEAR" => Func::DayOfYear,
        "WEEKDAY" => Func::WeekDay,
        "DAYNAME" => Func::DayName,
        "MONTHNAME" => Func::MonthName,
        "LAST_DAY" => Func::LastDay,
        "FROM_UNIXTIME" => Func::FromUnixtime,
        "TO_DAYS" => Func::ToDays,
        "FROM_DAYS" => Func::FromDays,
        "MAKEDATE" => Func::MakeDate,
        "UTC_TIMESTAMP" => Func::UtcTimestamp,
        "UTC_DATE" => Func::UtcDate,
        "UTC_TIME" => Func::UtcTime,
        "CURTIME" | "CURRENT_TIME" => Func::CurTime,
        "LPAD" => Func::LPad,
        "RPAD" => Func::RPad,
        "LOCATE" => Func::Locate,
        "INSTR" => Func::Instr,
        "REVERSE" => Func::Reverse,
        "SUBSTRING_INDEX" => Func::SubstringIndex,
        "ASCII" | "ORD" => Func::Ascii,
        "CHAR" => Func::Char,
        "SPACE" => Func::Space,
        "FIELD" => Func::Field,
        "ELT" => Func::Elt,
        "STRCMP" => Func::Strcmp,
        "INSERT" => Func::Insert,
        "FORMAT" => Func::Format,
        "QUOTE" => Func::Quote,
        "UNHEX" => Func::Unhex,
        "TO_BASE64" => Func::ToBase64,
        "FROM_BASE64" => Func::FromBase64,
        "MD5" => Func::Md5,
        "SHA1" | "SHA" => Func::Sha1,
        "SHA2" => Func::Sha2,
        "CRC32" => Func::Crc32,
        "EXP" => Func::Exp,
        "LN" => Func::Ln,
        "LOG" => Func::Log,
        "LOG2" => Func::Log2,
        "LOG10" => Func::Log10,
        "PI" => Func::Pi,
        "RADIANS" => Func::Radians,
        "DEGREES" => Func::Degrees,
        "SIN" => Func::Sin,
        "COS" => Func::Cos,
        "TAN" => Func::Tan,
        "ASIN" => Func::Asin,
        "ACOS" => Func::Acos,
        "ATAN" | "ATAN2" => Func::Atan,
        "COT" => Func::Cot,
        "CONV" => Func::Conv,
        _ => return None,
    })
}

/// Checks the argument count (MySQL 1582 on mismatch).
pub fn check_arity(f: Func, name: &str, n: usize) -> Result<()> {
    let ok = match f {
        Func::Version
        | Func::Database
        | Func::User
        | Func::CurrentUser
        | Func::ConnectionId
        | Func::RowCount
        | Func::FoundRows
        | Func::CurDate
        | Func::UtcDate
        | Func::Pi => n == 0,
        Func::UtcTimestamp | Func::UtcTime | Func::CurTime => n <= 1,
        Func::DateAdd(..) | Func::TimestampDiff(_) => n == 2,
        Func::DateOf
        | Func::TimeOf
        | Func::Year
        | Func::Month
        | Func::Day
        | Func::Hour
        | Func::Minute
        | Func::Second
        | Func::Microsecond
        | Func::Quarter
        | Func::DayOfWeek
        | Func::DayOfYear
        | Func::WeekDay
        | Func::DayName
        | Func::MonthName
        | Func::LastDay
        | Func::Extract(_)
        | Func::ToDays
        | Func::FromDays
        | Func::Reverse
        | Func::Ascii
        | Func::Space
        | Func::Quote
        | Func::Unhex
        | Func::ToBase64
        | Func::FromBase64
        | Func::Md5
        | Func::Sha1
        | Func::Crc32
        | Func::Exp
        | Func::Ln
        | Func::Log2
        | Func::Log10
        | Func::Radians
        | Func::Degrees
        | Func::Sin
        | Func::Cos
        | Func::Tan
        | Func::Asin
        | Func::Acos
        | Func::Cot => n == 1,
        Func::Week | Func::YearWeek | Func::FromUnixtime | Func::Log | Func::Atan => {
            n == 1 || n == 2
        }
        Func::DateDiff
        | Func::DateFormat
        | Func::StrToDate
        | Func::MakeDate
        | Func::Instr
        | Func::Strcmp
        | Func::Format
        | Func::Sha2 => n == 2,
        Func::Locate => n == 2 || n == 3,
        Func::LPad | Func::RPad | Func::SubstringIndex | Func::Conv => n == 3,
        Func::Insert => n == 4,
        Func::Char => n >= 1,
        Func::Field | Func::Elt => n >= 2,
        Func::LastInsertId | Func::Rand | Func::UnixTimestamp => n <= 1,
        Func::Now => n <= 1,
        Func::Concat | Func::Coalesce => n >= 1,
        Func::ConcatWs | Func::Greatest | Func::Least => n >= 2,
        Func::Length
        | Func::CharLength
        | Func::Upper
        | Func::Lower
        | Func::Hex
        | Func::Abs
        | Func::Ceil
        | Func::Floor
        | Func::Sqrt
        | Func::Sign
        | Func::IsNull
        | Func::CastSigned
        | Func::CastUnsigned
        | Func::CastChar
        | Func::CastCharN(_)
        | Func::CastDouble
        | Func::CastDecimal(..)
        | Func::CastDate
        | Func::CastDateTime
        | Func::Conform(_)
        | Func::LTrim
        | Func::RTrim => n == 1,
        Func::Trim => n == 1 || n == 2,
        Func::Round => n == 1 || n == 2,
        Func::Substring => n == 2 || n == 3,
        Func::Left
        | Func::Right
        | Func::Truncate
        | Func::Mod
        | Func::Power
        | Func::IfNull
        | Func::NullIf
        | Func::Repeat => n == 2,
        Func::If | Func::Replace => n == 3,
    };
    if ok {
        Ok(())
    } else {
        Err(Error::WrongFunctionArgs(name.to_string()))
    }
}

/// The CAST/CONVERT target as a function.
pub fn cast_func(t: &ast::DataType) -> Result<Func> {
    use ast::DataType as D;
    Ok(match t {
        D::Signed | D::SignedInteger | D::Int(_) | D::Integer(_) | D::BigInt(_) => Func::CastSigned,
        D::Unsigned | D::UnsignedInteger | D::IntUnsigned(_) | D::BigIntUnsigned(_) => {
            Func::CastUnsigned
        }
        D::Char(Some(ast::CharacterLength::IntegerLength { length, .. }))
        | D::Binary(Some(length))
        | D::Character(Some(ast::CharacterLength::IntegerLength { length, .. })) => {
            Func::CastCharN(u32::try_from(*length).unwrap_or(u32::MAX))
        }
        D::Char(_) | D::Varchar(_) | D::Text | D::Binary(_) | D::Nvarchar(_) | D::Character(_) => {
            Func::CastChar
        }
        D::Double(_) | D::DoublePrecision | D::Float(_) | D::Real => Func::CastDouble,
        D::Decimal(info) | D::Numeric(info) | D::Dec(info) => {
            let (p, s) = match info {
                ast::ExactNumberInfo::None => (10, 0),
                ast::ExactNumberInfo::Precision(p) => (*p as u8, 0),
                ast::ExactNumberInfo::PrecisionAndScale(p, s) => (*p as u8, *s as u8),
            };
            Func::CastDecimal(p, s)
        }
        D::Date => Func::CastDate,
        D::Datetime(_) | D::Timestamp(..) => Func::CastDateTime,
        other => return Err(Error::Unsupported(format!("CAST to {other}"))),
    })
}

/// The static result kind of a call.
pub fn result_kind(f: Func, args: &[Expr], cols: &[ExprKind], aggs: &[AggCall]) -> ExprKind {
    let first = || {
        args.first()
            .map(|a| a.kind(cols, aggs))
            .unwrap_or(ExprKind::Null)
    };
    match f {
        Func::ConnectionId
        | Func::RowCount
        | Func::FoundRows
        | Func::Length
        | Func::CharLength
        | Func::Sign => ExprKind::Int,
        Func::LastInsertId | Func::UnixTimestamp | Func::CastUnsigned => ExprKind::UInt,
        Func::CastSigned | Func::IsNull => ExprKind::Int,
        Func::Now | Func::CastDateTime => ExprKind::DateTime,
        Func::CurDate | Func::CastDate => ExprKind::Date,
        Func::Rand | Func::Sqrt | Func::Power | Func::CastDouble => ExprKind::Double,
        Func::CastDecimal(_, s) => ExprKind::Decimal(s),
        Func::Conform(k) => k,
        Func::Abs | Func::Mod => match first() {
            ExprKind::String => ExprKind::Double,
            k => k,
        },
        // CEIL/FLOOR of an exact number is a BIGINT when it fits (it always does
        // for the DECIMALs Canyon stores).
        Func::Ceil | Func::Floor => match first() {
            ExprKind::String | ExprKind::Double => ExprKind::Double,
            ExprKind::Decimal(_) => ExprKind::Int,
            k => k,
        },
        // ROUND(x, d) of a DECIMAL has d decimals when d is a constant (none when
        // d is negative), else x's; the protocol pads values to that scale.
        Func::Round | Func::Truncate => match first() {
            ExprKind::String => ExprKind::Double,
            ExprKind::Decimal(s) => match args.get(1) {
                None => ExprKind::Decimal(0),
                Some(Expr::Literal(Value::Int(d))) => ExprKind::Decimal((*d).clamp(0, 30) as u8),
                Some(_) => ExprKind::Decimal(s),
            },
            k => k,
        },
        Func::Coalesce | Func::IfNull => aggregate_kind(args.iter().map(|a| a.kind(cols, aggs))),
        Func::Greatest | Func::Least | Func::NullIf => first(),
        Func::If => aggregate_kind(args.iter().skip(1).map(|a| a.kind(cols, aggs))),
        Func::DateDiff
        | Func::TimestampDiff(_)
        | Func::Year
        | Func::Month
        | Func::Day
        | Func::Hour
        | Func::Minute
        | Func::Second
        | Func::Microsecond
        | Func::Quarter
        | Func::Week
        | Func::YearWeek
        | Func::DayOfWeek
        | Func::DayOfYear
        | Func::WeekDay
        | Func::Extract(_)
        | Func::ToDays
        | Func::Locate
        | Func::Instr
        | Func::Ascii
        | Func::Field
        | Func::Strcmp => ExprKind::Int,
        Func::Crc32 => ExprKind::UInt,
        Func::Exp
        | Func::Ln
        | Func::Log
        | Func::Log2
        | Func::Log10
        | Func::Pi
        | Func::Radians
        | Func::Degrees
        | Func::Sin
        | Func::Cos
        | Func::Tan
        | Func::Asin
        | Func::Acos
        | Func::Atan
        | Func::Cot => ExprKind::Double,
        Func::DateOf | Func::LastDay | Func::MakeDate | Func::FromDays | Func::UtcDate => {
            ExprKind::Date
        }
        Func::UtcTimestamp => ExprKind::DateTime,
        Func::FromUnixtime if args.len() == 1 => ExprKind::DateTime,
        // DATE plus a day-or-larger interval stays DATE; DATE plus a time unit
        // and DATETIME plus anything are DATETIME; a string argument gives a
        // string (MySQL types the result VARCHAR).
        Func::DateAdd(unit, _) => match first() {
            ExprKind::Date if unit.is_date_unit() => ExprKind::Date,
            ExprKind::Date | ExprKind::DateTime => ExprKind::DateTime,
            ExprKind::Null => ExprKind::Null,
            _ => ExprKind::String,
        },
        // STR_TO_DATE is typed by its format when the format is a constant.
        Func::StrToDate => match args.get(1) {
            Some(Expr::Literal(Value::Bytes(f))) => {
                match crate::types::datetime::format_parts(&String::from_utf8_lossy(f)) {
                    (true, false) => ExprKind::Date,
                    (true, true) => ExprKind::DateTime,
                    _ => ExprKind::String,
                }
            }
            _ => ExprKind::String,
        },
        _ => ExprKind::String,
    }
}

/// The type MySQL gives the result of IF, IFNULL, COALESCE and CASE from the
/// types of the values they may return (MySQL 8.0 manual, 14.5 "Flow Control
/// Functions", and `Item::aggregate_type`): NULL branches do not count; a
/// string among them makes a string; DATE with DATETIME a DATETIME, a temporal
/// with anything else a string; otherwise a DOUBLE makes a DOUBLE, a DECIMAL a
/// DECIMAL of the largest scale, and signed with unsigned integers a DECIMAL
/// (MySQL: DECIMAL for BIGINTs, a signed BIGINT for narrower ones, which
/// prints the same), so `IF(c, -1, unsigned_col) - 5` is never an unsigned
/// overflow and `IF(c, 1, -4.0)` is `1.0`.
pub fn aggregate_kind(kinds: impl IntoIterator<Item = ExprKind>) -> ExprKind {
    use ExprKind as K;
    kinds.into_iter().fold(K::Null, |acc, k| match (acc, k) {
        (K::Null, k) | (k, K::Null) => k,
        (a, b) if a == b => a,
        (K::String, _) | (_, K::String) => K::String,
        (K::Date, K::DateTime) | (K::DateTime, K::Date) => K::DateTime,
        (K::Date | K::DateTime, _) | (_, K::Date | K::DateTime) => K::String,
        (K::Double, _) | (_, K::Double) => K::Double,
        (K::Decimal(x), K::Decimal(y)) => K::Decimal(x.max(y)),
        (K::Decimal(x), _) | (_, K::Decimal(x)) => K::Decimal(x),
        // Int with UInt.
        _ => K::Decimal(0),
    })
}

/// A branch value converted to the aggregated `kind` ([`Func::Conform`]).
fn conform(v: Value, kind: ExprKind) -> Value {
    match (kind, v) {
        (_, Value::Null) => Value::Null,
        (ExprKind::Decimal(scale), v) => match v.to_decimal() {
            Some(mut d) => {
                // Never fewer digits than the value has (a quotient carries
                // more inside expressions; see expr::arithmetic).
                if d.scale() < u32::from(scale) {
                    d.rescale(u32::from(scale));
                }
                Value::Decimal(d)
            }
            None => Value::Null,
        },
        (ExprKind::Double, v) => v.to_f64().map_or(Value::Null, Value::Double),
        (ExprKind::String, v @ Value::Bytes(_)) => v,
        (ExprKind::String, v) => v.to_bytes().map_or(Value::Null, Value::Bytes),
        (ExprKind::DateTime, Value::Date(d)) => Value::DateTime(d.and_time(chrono::NaiveTime::MIN)),
        (_, v) => v,
    }
}

fn arg(args: &[Expr], i: usize, env: &Env<'_>) -> Result<Value> {
    match args.get(i) {
        Some(e) => eval(e, env),
        None => Ok(Value::Null),
    }
}

fn string_fn(v: Value, f: impl FnOnce(&str) -> String) -> Value {
    match v.to_bytes() {
        None => Value::Null,
        Some(b) => Value::str(&f(&String::from_utf8_lossy(&b))),
    }
}

/// Evaluates a call.
pub fn call(f: Func, args: &[Expr], env: &Env<'_>) -> Result<Value> {
    Ok(match f {
        Func::Version
        | Func::Database
        | Func::User
        | Func::CurrentUser
        | Func::ConnectionId
        | Func::RowCount
        | Func::FoundRows => env.ctx.session_fact(f),
        Func::LastInsertId => {
            if args.is_empty() {
                env.ctx.session_fact(f)
            } else {
                arg(args, 0, env)?
            }
        }
        Func::Now => {
            // NOW([fsp]) keeps fsp fractional digits, none by default (MySQL
            // manual, 14.7 "Date and Time Functions"); the statement's clock
            // reads microseconds.
            let fsp = match args.first() {
                None => 0,
                Some(_) => arg(args, 0, env)?
                    .to_i64()
                    .filter(|p| (0..=6).contains(p))
                    .ok_or_else(|| Error::WrongArguments("NOW".into()))?,
            };
            use chrono::Timelike;
            let now = env.ctx.now();
            let unit = 10u32.pow(9 - fsp as u32);
            Value::DateTime(
                now.with_nanosecond(now.nanosecond() / unit * unit)
                    .unwrap_or(now),
            )
        }
        Func::CurDate => Value::Date(env.ctx.now().date()),
        Func::UnixTimestamp => {
            use chrono::TimeZone;
            // Datetimes are in the session's (the server's local) time zone, as
            // NOW() and FROM_UNIXTIME() are; before the epoch is 0.
            let dt = if args.is_empty() {
                Some(env.ctx.now())
            } else {
                temporal(&arg(args, 0, env)?, env).map(|t| t.dt)
            };
            match dt {
                None => Value::Null,
                Some(dt) => Value::UInt(
                    chrono::Local
                        .from_local_datetime(&dt)
                        .earliest()
                        .map(|t| t.timestamp())
                        .unwrap_or_else(|| dt.and_utc().timestamp())
                        .max(0) as u64,
                ),
            }
        }
        Func::Rand => Value::Double(rand::random::<f64>()),
        Func::Concat => {
            let mut out = Vec::new();
            for i in 0..args.len() {
                match arg(args, i, env)?.to_bytes() {
                    None => return Ok(Value::Null),
                    Some(b) => out.extend_from_slice(&b),
                }
            }
            Value::Bytes(out)
        }
        Func::ConcatWs => {
            let sep = match arg(args, 0, env)?.to_bytes() {
                None => return Ok(Value::Null),
                Some(s) => s,
            };
            let mut out = Vec::new();
            let mut first = true;
            for i in 1..args.len() {
                if let Some(b) = arg(args, i, env)?.to_bytes() {
                    if !first {
                        out.extend_from_slice(&sep);
                    }
                    out.extend_from_slice(&b);
                    first = false;
                }
            }
            Value::Bytes(out)
        }
        Func::Length => match arg(args, 0, env)?.to_bytes() {
            None => Value::Null,
            Some(b) => Value::Int(b.len() as i64),
        },
        Func::CharLength => match arg(args, 0, env)?.to_bytes() {
            None => Value::Null,
            Some(b) => Value::Int(String::from_utf8_lossy(&b).chars().count() as i64),
        },
        Func::Upper => string_fn(arg(args, 0, env)?, str::to_uppercase),
        Func::Lower => string_fn(arg(args, 0, env)?, str::to_lowercase),
        Func::Trim => {
            let v = arg(args, 0, env)?;
            match args.len() {
                1 => string_fn(v, |s| s.trim_matches(' ').to_string()),
                _ => {
                    let what = arg(args, 1, env)?.to_display();
                    string_fn(v, |s| trim_both(s, &what))
                }
            }
        }
        Func::LTrim => string_fn(arg(args, 0, env)?, |s| {
            s.trim_start_matches(' ').to_string()
        }),
        Func::RTrim => string_fn(arg(args, 0, env)?, |s| s.trim_end_matches(' ').to_string()),
        Func::Substring => {
            let s = arg(args, 0, env)?;
            let pos = arg(args, 1, env)?.to_i64();
            let len = if args.len() > 2 {
                arg(args, 2, env)?.to_i64()
            } else {
                Some(i64::MAX)
            };
            match (s.to_bytes(), pos, len) {
                (Some(b), Some(pos), Some(len)) => {
                    let chars: Vec<char> = String::from_utf8_lossy(&b).chars().collect();
                    let n = chars.len() as i64;
                    let start = if pos > 0 {
                        pos - 1
                    } else if pos < 0 {
                        n + pos
                    } else {
                        n
                    };
                    if start < 0 || start >= n || len <= 0 {
                        Value::str("")
                    } else {
                        let end = start.saturating_add(len).min(n);
                        Value::str(
                            &chars[start as usize..end as usize]
                                .iter()
                                .collect::<String>(),
                        )
                    }
                }
                _ => Value::Null,
            }
        }
        Func::Left | Func::Right => {
            let s = arg(args, 0, env)?;
            match (s.to_bytes(), arg(args, 1, env)?.to_i64()) {
                (Some(b), Some(n)) => {
                    let chars: Vec<char> = String::from_utf8_lossy(&b).chars().collect();
                    let n = n.clamp(0, chars.len() as i64) as usize;
                    let part: String = if f == Func::Left {
                        chars[..n].iter().collect()
                    } else {
                        chars[chars.len() - n..].iter().collect()
                    };
                    Value::str(&part)
                }
                _ => Value::Null,
            }
        }
        Func::Replace => {
            let (s, from, to) = (arg(args, 0, env)?, arg(args, 1, env)?, arg(args, 2, env)?);
            match (s.to_bytes(), from.to_bytes(), to.to_bytes()) {
                (Some(s), Some(from), Some(to)) => {
                    let (s, from, to) = (
                        String::from_utf8_lossy(&s).into_owned(),
                        String::from_utf8_lossy(&from).into_owned(),
                        String::from_utf8_lossy(&to).into_owned(),
                    );
                    if from.is_empty() {
                        Value::str(&s)
                    } else {
                        Value::str(&s.replace(&from, &to))
                    }
                }
                _ => Value::Null,
            }
        }
        Func::Repeat => match (arg(args, 0, env)?.to_bytes(), arg(args, 1, env)?.to_i64()) {
            (Some(b), Some(n)) => {
                let n = n.max(0) as usize;
                if b.len().saturating_mul(n) > 64 << 20 {
                    Value::Null
                } else {
                    Value::Bytes(b.repeat(n))
                }
            }
            _ => Value::Null,
        },
        Func::Hex => match arg(args, 0, env)? {
            Value::Null => Value::Null,
            Value::Int(i) => Value::str(&format!("{:X}", i as u64)),
            Value::UInt(u) => Value::str(&format!("{u:X}")),
            other => {
                let b = other.to_bytes().unwrap_or_default();
                Value::str(&b.iter().map(|x| format!("{x:02X}")).collect::<String>())
            }
        },
        Func::Abs => match arg(args, 0, env)? {
            Value::Null => Value::Null,
            Value::Int(i) => i
                .checked_abs()
                .map(Value::Int)
                .unwrap_or(Value::UInt(i.unsigned_abs())),
            Value::UInt(u) => Value::UInt(u),
            Value::Decimal(d) => Value::Decimal(d.abs()),
            other => Value::Double(other.to_f64().unwrap_or(0.0).abs()),
        },
        Func::Ceil | Func::Floor => match arg(args, 0, env)? {
            Value::Null => Value::Null,
            v @ (Value::Int(_) | Value::UInt(_)) => v,
            Value::Decimal(d) => {
                let r = if f == Func::Ceil { d.ceil() } else { d.floor() };
                r.to_i64().map(Value::Int).unwrap_or(Value::Decimal(r))
            }
            other => {
                let x = other.to_f64().unwrap_or(0.0);
                Value::Double(if f == Func::Ceil { x.ceil() } else { x.floor() })
            }
        },
        Func::Round | Func::Truncate => {
            let v = arg(args, 0, env)?;
            let d = if args.len() > 1 {
                arg(args, 1, env)?.to_i64()
            } else {
                Some(0)
            };
            let Some(d) = d else { return Ok(Value::Null) };
            let strategy = if f == Func::Round {
                RoundingStrategy::MidpointAwayFromZero
            } else {
                RoundingStrategy::ToZero
            };
            match v {
                Value::Null => Value::Null,
                Value::Int(_) | Value::UInt(_) if d >= 0 => v,
                Value::Int(_) | Value::UInt(_) | Value::Decimal(_) => {
                    let x = v.to_decimal().unwrap_or_default();
                    if d >= 0 {
                        let mut r = x.round_dp_with_strategy(d.min(28) as u32, strategy);
                        r.rescale(d.min(28) as u32);
                        Value::Decimal(r)
                    } else {
                        let p = Decimal::from(10i64.pow((-d).min(18) as u32));
                        let r = (x / p).round_dp_with_strategy(0, strategy) * p;
                        match v {
                            Value::Decimal(_) => Value::Decimal(r),
                            _ => r.to_i64().map(Value::Int).unwrap_or(Value::Decimal(r)),
                        }
                    }
                }
                other => Value::Double(round_double(
                    other.to_f64().unwrap_or(0.0),
                    d,
                    f == Func::Truncate,
                )),
            }
        }
        Func::Mod => {
            let (a, b) = (arg(args, 0, env)?, arg(args, 1, env)?);
            if a.is_null() || b.is_null() {
                Value::Null
            } else {
                let r = crate::expr::arithmetic(crate::expr::BinOp::Mod, &a, &b)?;
                if r.is_null() {
                    env.ctx.warn(1365, "Division by 0");
                }
                r
            }
        }
        Func::Power => {
            let (a, b) = (arg(args, 0, env)?, arg(args, 1, env)?);
            match (a.to_f64(), b.to_f64()) {
                (Some(x), Some(y)) => {
                    let r = x.powf(y);
                    // MySQL: a NaN or infinite result is error 1690, not a value.
                    if !r.is_finite() {
                        return Err(double_out_of_range("pow", &[a, b]));
                    }
                    Value::Double(r)
                }
                _ => Value::Null,
            }
        }
        Func::Sqrt => match arg(args, 0, env)?.to_f64() {
            Some(x) if x >= 0.0 => Value::Double(x.sqrt()),
            _ => Value::Null,
        },
        Func::Sign => match arg(args, 0, env)?.to_f64() {
            Some(x) => Value::Int(if x > 0.0 {
                1
            } else if x < 0.0 {
                -1
            } else {
                0
            }),
            None => Value::Null,
        },
        Func::Coalesce => {
            for i in 0..args.len() {
                let v = arg(args, i, env)?;
                if !v.is_null() {
                    return Ok(v);
                }
            }
            Value::Null
        }
        Func::IfNull => {
            let v = arg(args, 0, env)?;
            if v.is_null() {
                arg(args, 1, env)?
            } else {
                v
            }
        }
        Func::If => {
            if arg(args, 0, env)?.truth() == Some(true) {
                arg(args, 1, env)?
            } else {
                arg(args, 2, env)?
            }
        }
        Func::NullIf => {
            let (a, b) = (arg(args, 0, env)?, arg(args, 1, env)?);
            if compare(&a, &b) == Some(Ordering::Equal) {
                Value::Null
            } else {
                a
            }
        }
        Func::IsNull => Value::Int(arg(args, 0, env)?.is_null() as i64),
        Func::Greatest | Func::Least => {
            let mut best: Option<Value> = None;
            for i in 0..args.len() {
                let v = arg(args, i, env)?;
                if v.is_null() {
                    return Ok(Value::Null);
                }
                best = Some(match best {
                    None => v,
                    Some(b) => {
                        let o = sort_cmp(&v, &b);
                        if (f == Func::Greatest && o == Ordering::Greater)
                            || (f == Func::Least && o == Ordering::Less)
                        {
                            v
                        } else {
                            b
                        }
                    }
                });
            }
            best.unwrap_or(Value::Null)
        }
        Func::CastSigned | Func::CastUnsigned => {
            cast_integer(&arg(args, 0, env)?, f == Func::CastUnsigned, env)
        }
        Func::CastChar => match arg(args, 0, env)?.to_bytes() {
            None => Value::Null,
            Some(b) => Value::Bytes(b),
        },
        Func::CastCharN(n) => match arg(args, 0, env)?.to_bytes() {
            None => Value::Null,
            Some(b) => {
                let s = String::from_utf8_lossy(&b);
                if s.chars().count() > n as usize {
                    env.ctx
                        .warn(1292, &format!("Truncated incorrect CHAR({n}) value: '{s}'"));
                    Value::str(&s.chars().take(n as usize).collect::<String>())
                } else {
                    Value::Bytes(b)
                }
            }
        },
        Func::CastDouble => match arg(args, 0, env)? {
            Value::Null => Value::Null,
            v => {
                warn_if_not_number(&v, "DOUBLE", env);
                Value::Double(v.to_f64().unwrap_or(0.0))
            }
        },
        Func::CastDecimal(p, s) => match arg(args, 0, env)? {
            Value::Null => Value::Null,
            v => {
                warn_if_not_number(&v, "DECIMAL", env);
                cast_decimal(v.to_decimal().unwrap_or_default(), p, s, env)
            }
        },
        Func::CastDate => match temporal(&arg(args, 0, env)?, env) {
            Some(t) => Value::Date(t.dt.date()),
            None => Value::Null,
        },
        Func::CastDateTime => match temporal(&arg(args, 0, env)?, env) {
            Some(t) => Value::DateTime(t.dt),
            None => Value::Null,
        },
        Func::Conform(kind) => conform(arg(args, 0, env)?, kind),
        other => return call_ext(other, args, env),
    })
}

/// ROUND / TRUNCATE of a double, as MySQL's `my_double_round`: scale by a power
/// of ten, `rint` (half to even) or truncate, scale back.
fn round_double(x: f64, d: i64, truncate: bool) -> f64 {
    let abs = d.unsigned_abs().min(400) as i32;
    // Powers of ten up to 1e22 are exact doubles; above that parse the literal so
    // the factor is the nearest double, as MySQL's table of them is.
    let p = if abs <= 22 {
        10f64.powi(abs)
    } else {
        format!("1e{abs}").parse().unwrap_or(f64::INFINITY)
    };
    let op = |y: f64| {
        if !truncate {
            y.round_ties_even()
        } else if x >= 0.0 {
            y.floor()
        } else {
            y.ceil()
        }
    };
    let r = if d < 0 {
        if p.is_infinite() {
            0.0
        } else {
            op(x / p) * p
        }
    } else if (x * p).is_infinite() {
        x
    } else {
        op(x * p) / p
    };
    // No negative zero: ROUND(-0.4e0) prints 0.
    r + 0.0
}

fn trim_both(s: &str, what: &str) -> String {
    if what.is_empty() {
        return s.to_string();
    }
    let mut t = s;
    while let Some(r) = t.strip_prefix(what) {
        t = r;
    }
    while let Some(r) = t.strip_suffix(what) {
        t = r;
    }
    t.to_string()
}

/// MySQL warns 1292 when a string it reads as a number has text after the number.
fn warn_if_not_number(v: &Value, type_name: &str, env: &Env<'_>) {
    if let Value::Bytes(b) = v {
        let s = String::from_utf8_lossy(b);
        if Decimal::from_str_exact(s.trim()).is_err() && s.trim().parse::<f64>().is_err() {
            env.ctx.warn(
                1292,
                &format!("Truncated incorrect {type_name} value: '{s}'"),
            );
        }
    }
}

/// CAST(x AS SIGNED / UNSIGNED). Strings are read up to the first character that
/// is not a digit ('1e3' is 1, '12.7' is 12, with warning 1292); doubles round
/// half to even (`rint`); exact numbers round half away from zero. A negative
/// number cast to UNSIGNED wraps (two's complement), as in MySQL.
fn cast_integer(v: &Value, unsigned: bool, env: &Env<'_>) -> Value {
    let bits: u64 = match v {
        Value::Null => return Value::Null,
        Value::Int(i) => *i as u64,
        Value::UInt(u) => *u,
        Value::Double(x) => {
            let r = x.round_ties_even();
            if unsigned && r < 0.0 {
                env.ctx.warn(
                    1916,
                    &format!(
                        "Got overflow when converting '{}' to UNSIGNED INT. Value truncated",
                        v.to_display()
                    ),
                );
                0
            } else if unsigned {
                r as u64
            } else {
                if !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&r) {
                    env.ctx.warn(
                        1916,
                        &format!(
                            "Got overflow when converting '{}' to SIGNED BIGINT. Value truncated",
                            v.to_display()
                        ),
                    );
                }
                r as i64 as u64
            }
        }
        Value::Decimal(d) => {
            let r = d.round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero);
            if unsigned && r.is_sign_negative() && !r.is_zero() {
                env.ctx.warn(
                    1916,
                    &format!("Got overflow when converting '{d}' to UNSIGNED INT. Value truncated"),
                );
                0
            } else if unsigned {
                r.to_u64().unwrap_or(u64::MAX)
            } else {
                r.to_i64().unwrap_or(if r.is_sign_negative() {
                    i64::MIN
                } else {
                    i64::MAX
                }) as u64
            }
        }
        Value::Bytes(b) => {
            let s = String::from_utf8_lossy(b);
            let t = s.trim_start();
            let (neg, rest) = match t.as_bytes().first() {
                Some(b'-') => (true, &t[1..]),
                Some(b'+') => (false, &t[1..]),
                _ => (false, t),
            };
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            let mut overflow = false;
            let mut n: u64 = 0;
            for c in rest[..digits].bytes() {
                match n
                    .checked_mul(10)
                    .and_then(|x| x.checked_add((c - b'0') as u64))
                {
                    Some(x) => n = x,
                    None => {
                        overflow = true;
                        n = u64::MAX;
                        break;
                    }
                }
            }
            if overflow || digits == 0 || !rest[digits..].trim().is_empty() {
                env.ctx
                    .warn(1292, &format!("Truncated incorrect INTEGER value: '{s}'"));
            }
            if neg {
                n.wrapping_neg()
            } else {
                n
            }
        }
        other => other.to_i64().unwrap_or(0) as u64,
    };
    let negative_source = match v {
        Value::Int(i) => *i < 0,
        Value::Bytes(b) => bits != 0 && String::from_utf8_lossy(b).trim_start().starts_with('-'),
        _ => false,
    };
    if unsigned && negative_source {
        // A Note in MySQL; it counts in warning_count like a warning.
        env.ctx.warn(
            1105,
            "Cast to unsigned converted negative integer to it's positive complement",
        );
    }
    if unsigned {
        Value::UInt(bits)
    } else {
        Value::Int(bits as i64)
    }
}

/// CAST(x AS DECIMAL(p, s)): rounded half away from zero to s places, and clamped
/// to the largest value p digits hold (MySQL warns 1264).
fn cast_decimal(d: Decimal, p: u8, s: u8, env: &Env<'_>) -> Value {
    let s = u32::from(s.min(28));
    let mut r = d.round_dp_with_strategy(s, RoundingStrategy::MidpointAwayFromZero);
    let int_digits = u32::from(p).saturating_sub(s);
    if int_digits + s <= 28 {
        // The largest value DECIMAL(p, s) holds: p nines with s after the point.
        let max = Decimal::from_i128_with_scale(10i128.pow(int_digits + s) - 1, s);
        if r.abs() > max {
            env.ctx
                .warn(1264, "Out of range value for column 'CAST' at row 1");
            r = if r.is_sign_negative() { -max } else { max };
        }
    }
    r.rescale(s);
    Value::Decimal(r)
}

// ----------------------------------------------------------------------------------
// Special syntax: INTERVAL arithmetic, EXTRACT, POSITION, TIMESTAMPDIFF, ...
// ----------------------------------------------------------------------------------

/// The unit an INTERVAL or EXTRACT names.
fn unit_of_field(f: &ast::DateTimeField) -> Result<Unit> {
    use ast::DateTimeField as F;
    Ok(match f {
        F::Microsecond | F::Microseconds => Unit::Microsecond,
        F::Second | F::Seconds => Unit::Second,
        F::Minute | F::Minutes => Unit::Minute,
        F::Hour | F::Hours => Unit::Hour,
        F::Day | F::Days => Unit::Day,
        F::Week(None) | F::Weeks => Unit::Week,
        F::Month | F::Months => Unit::Month,
        F::Quarter => Unit::Quarter,
        F::Year | F::Years => Unit::Year,
        other => return Err(Error::Unsupported(format!("interval unit {other}"))),
    })
}

/// The unit of an INTERVAL expression (`INTERVAL n DAY`).
fn interval_unit(iv: &ast::Interval) -> Result<Unit> {
    match (&iv.leading_field, &iv.last_field) {
        (Some(f), None) => unit_of_field(f),
        _ => Err(Error::Unsupported(format!("INTERVAL {}", iv.value))),
    }
}

/// A unit given as a bare word (TIMESTAMPDIFF(MONTH, ...)); MySQL also accepts
/// the ODBC spelling SQL_TSI_MONTH.
fn unit_of_word(e: &ast::Expr) -> Result<Unit> {
    let word = match e {
        ast::Expr::Identifier(id) => id.value.to_ascii_uppercase(),
        other => return Err(Error::Syntax(other.to_string())),
    };
    let name = word.strip_prefix("SQL_TSI_").unwrap_or(&word);
    Unit::from_name(name).ok_or_else(|| Error::Syntax(word.clone()))
}

fn plain_args(f: &ast::Function) -> Option<Vec<&ast::Expr>> {
    match &f.args {
        ast::FunctionArguments::List(l) if l.duplicate_treatment.is_none() => l
            .args
            .iter()
            .map(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// Binds expression forms that belong with the functions here rather than with
/// the general binder (date arithmetic with INTERVAL, EXTRACT, ...). `None`: not
/// such a form, the general binder goes on.
///
/// Sub-expressions are bound in textual order, so placeholders keep their
/// numbering (`INTERVAL ? DAY + ?` binds the amount first).
pub fn bind_special(b: &mut crate::expr::Binder<'_>, e: &ast::Expr) -> Option<Result<Expr>> {
    use ast::Expr as A;
    match e {
        A::BinaryOp { left, op, right } => {
            let plus = matches!(op, ast::BinaryOperator::Plus);
            let minus = matches!(op, ast::BinaryOperator::Minus);
            if !plus && !minus {
                return None;
            }
            match (left.as_ref(), right.as_ref()) {
                (_, A::Interval(iv)) => Some((|| {
                    let unit = interval_unit(iv)?;
                    let d = b.bind(left)?;
                    let n = b.bind(&iv.value)?;
                    Ok(Expr::Func(Func::DateAdd(unit, minus), vec![d, n]))
                })()),
                (A::Interval(iv), _) => Some((|| {
                    if minus {
                        // MySQL accepts INTERVAL only on the right of '-'.
                        return Err(Error::Syntax(format!("{e}")));
                    }
                    let unit = interval_unit(iv)?;
                    let n = b.bind(&iv.value)?;
                    let d = b.bind(right)?;
                    Ok(Expr::Func(Func::DateAdd(unit, false), vec![d, n]))
                })()),
                _ => None,
            }
        }
        A::Extract { field, expr, .. } => Some((|| {
            let unit = unit_of_field(field)?;
            Ok(Expr::Func(Func::Extract(unit), vec![b.bind(expr)?]))
        })()),
        A::Position { expr, r#in } => Some((|| {
            let needle = b.bind(expr)?;
            let hay = b.bind(r#in)?;
            Ok(Expr::Func(Func::Locate, vec![needle, hay]))
        })()),
        A::Convert {
            expr,
            data_type: None,
            charset: Some(_),
            ..
        } => Some(b.bind(expr).map(|x| Expr::Func(Func::CastChar, vec![x]))),
        A::Identifier(id) if id.quote_style.is_none() => {
            // UTC_DATE, UTC_TIME and UTC_TIMESTAMP may be written without
            // parentheses, like CURRENT_TIMESTAMP (unless a column has the name).
            let f = match id.value.to_ascii_uppercase().as_str() {
                "UTC_TIMESTAMP" => Func::UtcTimestamp,
                "UTC_DATE" => Func::UtcDate,
                "UTC_TIME" => Func::UtcTime,
                _ => return None,
            };
            if b.table.is_some_and(|t| t.column(&id.value).is_some()) {
                return None;
            }
            Some(Ok(Expr::Func(f, Vec::new())))
        }
        A::Function(f) => {
            let name = f
                .name
                .0
                .last()
                .and_then(|p| p.as_ident())
                .map(|i| i.value.to_ascii_uppercase())?;
            let special = matches!(
                name.as_str(),
                "DATE_ADD" | "DATE_SUB" | "ADDDATE" | "SUBDATE" | "TIMESTAMPDIFF" | "TIMESTAMPADD"
            );
            if !special {
                return None;
            }
            let Some(args) = plain_args(f) else {
                return Some(Err(Error::Syntax(format!("{name}(...)"))));
            };
            Some(bind_unit_function(b, &name, &args))
        }
        _ => None,
    }
}

fn bind_unit_function(
    b: &mut crate::expr::Binder<'_>,
    name: &str,
    args: &[&ast::Expr],
) -> Result<Expr> {
    let wrong = || Error::WrongFunctionArgs(name.to_string());
    match name {
        "TIMESTAMPDIFF" => {
            let [unit, x, y] = args else {
                return Err(wrong());
            };
            let unit = unit_of_word(unit)?;
            let x = b.bind(x)?;
            let y = b.bind(y)?;
            Ok(Expr::Func(Func::TimestampDiff(unit), vec![x, y]))
        }
        "TIMESTAMPADD" => {
            let [unit, n, d] = args else {
                return Err(wrong());
            };
            let unit = unit_of_word(unit)?;
            let n = b.bind(n)?;
            let d = b.bind(d)?;
            Ok(Expr::Func(Func::DateAdd(unit, false), vec![d, n]))
        }
        _ => {
            let [d, amount] = args else {
                return Err(wrong());
            };
            let sub = matches!(name, "DATE_SUB" | "SUBDATE");
            let d = b.bind(d)?;
            match amount {
                ast::Expr::Interval(iv) => {
                    let unit = interval_unit(iv)?;
                    let n = b.bind(&iv.value)?;
                    Ok(Expr::Func(Func::DateAdd(unit, sub), vec![d, n]))
                }
                // ADDDATE(d, n) / SUBDATE(d, n): n days.
                other if matches!(name, "ADDDATE" | "SUBDATE") => {
                    let n = b.bind(other)?;
                    Ok(Expr::Func(Func::DateAdd(Unit::Day, sub), vec![d, n]))
                }
                other => Err(Error::Syntax(other.to_string())),
            }
        }
    }
}

// ----------------------------------------------------------------------------------
// Evaluation of the date, string and math functions
// ----------------------------------------------------------------------------------

/// A temporal argument: `None` for NULL, and for text that is no valid date
/// (MySQL: NULL with warning 1292).
fn temporal(v: &Value, env: &Env<'_>) -> Option<Temporal> {
    let parsed = match v {
        Value::Null => return None,
        Value::Date(d) => {
            return Some(Temporal {
                dt: d.and_time(chrono::NaiveTime::MIN),
                has_time: false,
            })
        }
        Value::DateTime(dt) => {
            return Some(Temporal {
                dt: *dt,
                has_time: true,
            })
        }
        Value::Int(i) => datetime::parse_temporal_number(*i),
        Value::UInt(u) => i64::try_from(*u)
            .ok()
            .and_then(datetime::parse_temporal_number),
        other => other.to_bytes().and_then(|b| datetime::parse_temporal(&b)),
    };
    if parsed.is_none() {
        env.ctx.warn(
            1292,
            &format!("Incorrect datetime value: '{}'", v.to_display()),
        );
    }
    parsed
}

/// A time-of-day (or duration) argument in microseconds, for HOUR(), TIME(), ...
fn time_value(v: &Value, env: &Env<'_>) -> Option<i64> {
    let parsed = match v {
        Value::Null => return None,
        Value::Date(_) => Some(0),
        Value::DateTime(dt) => Some(datetime::time_of_day_micros(dt)),
        other => other.to_bytes().and_then(|b| datetime::parse_time(&b)),
    };
    if parsed.is_none() {
        env.ctx.warn(
            1292,
            &format!("Truncated incorrect time value: '{}'", v.to_display()),
        );
    }
    parsed
}

/// The text of a temporal result that MySQL types as a string.
fn temporal_text(t: &Temporal) -> Value {
    if t.has_time {
        Value::str(&crate::types::value::format_datetime(&t.dt))
    } else {
        Value::str(&t.dt.date().format("%Y-%m-%d").to_string())
    }
}

/// An integer argument as MySQL reads one from a string: the leading integer,
/// with warning 1292 when text follows it.
fn int_of(v: &Value, env: &Env<'_>) -> Option<i64> {
    match v {
        Value::Bytes(b) => {
            let s = String::from_utf8_lossy(b);
            let t = s.trim();
            let end = t
                .char_indices()
                .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && (c == '-' || c == '+'))))
                .map(|(i, _)| i)
                .unwrap_or(t.len());
            let n = t[..end].parse::<i64>().unwrap_or(0);
            if end != t.len() || t.is_empty() {
                env.ctx
                    .warn(1292, &format!("Truncated incorrect INTEGER value: '{s}'"));
            }
            Some(n)
        }
        Value::Decimal(d) => d
            .round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero)
            .to_i64(),
        // rint(), as MySQL's val_int of a DOUBLE.
        Value::Double(x) => Some(x.round_ties_even() as i64),
        other => other.to_i64(),
    }
}

fn overflow(env: &Env<'_>) -> Value {
    env.ctx
        .warn(1441, "Datetime function: datetime field overflow");
    Value::Null
}

/// `t + amount unit` (or minus): MySQL's date_add_interval.
fn date_add(unit: Unit, sub: bool, d: &Value, amount: &Value, env: &Env<'_>) -> Result<Value> {
    if d.is_null() || amount.is_null() {
        return Ok(Value::Null);
    }
    let Some(t) = temporal(d, env) else {
        return Ok(Value::Null);
    };
    // SECOND accepts a fraction (INTERVAL 1.5 SECOND); other units take the
    // amount rounded to an integer.
    let fractional_seconds = unit == Unit::Second
        && match amount {
            Value::Decimal(x) => !x.fract().is_zero(),
            Value::Double(x) => x.fract() != 0.0,
            _ => false,
        };
    let result = if fractional_seconds {
        let micros = amount
            .to_decimal()
            .and_then(|x| (x * Decimal::from(1_000_000)).round().to_i64());
        match micros {
            Some(m) => datetime::add_micros(t.dt, if sub { -m } else { m }),
            None => None,
        }
    } else {
        match int_of(amount, env) {
            Some(n) => {
                let n = if sub { n.checked_neg() } else { Some(n) };
                n.and_then(|n| datetime::add_interval(t.dt, unit, n))
            }
            None => None,
        }
    };
    let Some(dt) = result else {
        return Ok(overflow(env));
    };
    let keep_date = !t.has_time && unit.is_date_unit() && !fractional_seconds;
    let out = Temporal {
        dt,
        has_time: !keep_date,
    };
    Ok(match d {
        Value::Date(_) if keep_date => Value::Date(dt.date()),
        Value::Date(_) | Value::DateTime(_) => Value::DateTime(dt),
        _ => temporal_text(&out),
    })
}

fn text(v: &Value) -> Option<String> {
    v.to_bytes()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

fn double_fn(v: &Value, f: impl FnOnce(f64) -> Option<f64>) -> Value {
    match v.to_f64().and_then(f) {
        Some(x) => Value::Double(x),
        None => Value::Null,
    }
}

/// MySQL 8: the logarithm of a non-positive number is NULL with warning 3020.
fn log_arg(x: f64, env: &Env<'_>) -> Option<f64> {
    if x > 0.0 {
        Some(x)
    } else {
        env.ctx.warn(3020, "Invalid argument for logarithm");
        None
    }
}

fn double_out_of_range(name: &str, args: &[Value]) -> Error {
    Error::ValueOutOfRange {
        type_name: "DOUBLE".into(),
        expr: format!(
            "{name}({})",
            args.iter()
                .map(Value::to_display)
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}

fn pad(s: &str, len: i64, fill: &str, left: bool) -> Option<String> {
    if !(0..=(64 << 20)).contains(&len) {
        return None;
    }
    let chars: Vec<char> = s.chars().collect();
    let len = len as usize;
    if len <= chars.len() {
        return Some(chars[..len].iter().collect());
    }
    let fill: Vec<char> = fill.chars().collect();
    if fill.is_empty() {
        return None;
    }
    let padding: String = fill.iter().cycle().take(len - chars.len()).collect();
    Some(if left {
        padding + s
    } else {
        s.to_string() + &padding
    })
}

/// LOCATE(needle, hay, pos): 1-based character position, 0 when absent.
fn locate(needle: &str, hay: &str, pos: i64) -> i64 {
    let hay: Vec<char> = hay.chars().collect();
    let needle: Vec<char> = needle.chars().collect();
    if pos < 1 || pos - 1 > hay.len() as i64 {
        return 0;
    }
    let start = (pos - 1) as usize;
    if needle.is_empty() {
        return pos;
    }
    (start..hay.len())
        .find(|&i| hay[i..].starts_with(&needle))
        .map(|i| i as i64 + 1)
        .unwrap_or(0)
}

fn substring_index(s: &str, delim: &str, count: i64) -> String {
    if delim.is_empty() || count == 0 {
        return String::new();
    }
    if count > 0 {
        let mut idx = 0;
        for (seen, (i, _)) in s.match_indices(delim).enumerate() {
            if seen as i64 + 1 == count {
                return s[..i].to_string();
            }
            idx = i;
        }
        let _ = idx;
        s.to_string()
    } else {
        let want = count.unsigned_abs();
        for (seen, (i, _)) in s.rmatch_indices(delim).enumerate() {
            if seen as u64 + 1 == want {
                return s[i + delim.len()..].to_string();
            }
        }
        s.to_string()
    }
}

/// FORMAT(x, d): rounded half away from zero, thousands grouped with ','.
fn format_number(x: Decimal, d: i64) -> String {
    let d = d.clamp(0, 30) as u32;
    let mut r = x.round_dp_with_strategy(d.min(28), RoundingStrategy::MidpointAwayFromZero);
    r.rescale(d.min(28));
    let s = r.abs().to_string();
    let (int, frac) = s.split_once('.').unwrap_or((&s, ""));
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let mut out = String::new();
    if r.is_sign_negative() && !r.is_zero() {
        out.push('-');
    }
    out.push_str(&grouped);
    if d > 0 {
        out.push('.');
        out.push_str(frac);
        for _ in frac.len()..d as usize {
            out.push('0');
        }
    }
    out
}

fn quote(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len() + 2);
    out.push(b'\'');
    for &c in b {
        match c {
            b'\\' | b'\'' => {
                out.push(b'\\');
                out.push(c);
            }
            0 => out.extend_from_slice(b"\\0"),
            0x1a => out.extend_from_slice(b"\\Z"),
            _ => out.push(c),
        }
    }
    out.push(b'\'');
    out
}

fn unhex(s: &[u8]) -> Option<Vec<u8>> {
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(s.len() / 2 + 1);
    let mut it = s.iter();
    if s.len() % 2 == 1 {
        out.push(digit(*it.next()?)?);
    }
    while let (Some(&h), Some(&l)) = (it.next(), it.next()) {
        out.push(digit(h)? << 4 | digit(l)?);
    }
    Some(out)
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// TO_BASE64: MySQL breaks the output with a newline every 76 characters.
fn to_base64(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len() * 4 / 3 + 4);
    for (n, chunk) in b.chunks(3).enumerate() {
        if n > 0 && n % 19 == 0 {
            out.push(b'\n');
        }
        let v = (chunk[0] as u32) << 16
            | (*chunk.get(1).unwrap_or(&0) as u32) << 8
            | *chunk.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64[(v >> (18 - 6 * i) & 63) as usize]);
            } else {
                out.push(b'=');
            }
        }
    }
    out
}

fn from_base64(b: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(b.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    let mut padding = false;
    for &c in b {
        if c.is_ascii_whitespace() {
            continue;
        }
        if c == b'=' {
            padding = true;
            continue;
        }
        if padding {
            return None;
        }
        let v = B64.iter().position(|&x| x == c)? as u32;
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

fn hex_lower(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// CRC-32 (ISO-HDLC, the zlib polynomial), as MySQL's CRC32().
fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                crc >> 1 ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// MD5 (RFC 1321), from RustCrypto's `md-5`.
fn md5(input: &[u8]) -> [u8; 16] {
    use md5::Digest;
    md5::Md5::digest(input).into()
}

/// SHA-2 of `bits` (224, 256, 384 or 512) as MySQL's SHA2(), from RustCrypto's
/// `sha2`; `None` for another length.
fn sha2_digest(input: &[u8], bits: i64) -> Option<Vec<u8>> {
    use sha2::Digest;
    Some(match bits {
        0 | 256 => sha2::Sha256::digest(input).to_vec(),
        224 => sha2::Sha224::digest(input).to_vec(),
        384 => sha2::Sha384::digest(input).to_vec(),
        512 => sha2::Sha512::digest(input).to_vec(),
        _ => return None,
    })
}

/// CONV(n, from_base, to_base): MySQL reads the longest valid prefix as an
/// unsigned 64-bit number (a leading '-' negates it in two's complement); a
/// negative `to_base` prints the value as signed.
fn conv(s: &str, from: i64, to: i64) -> Option<String> {
    let (fa, ta) = (from.unsigned_abs(), to.unsigned_abs());
    if !(2..=36).contains(&fa) || !(2..=36).contains(&ta) {
        return None;
    }
    let t = s.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t),
    };
    let mut v: u64 = 0;
    for c in digits.chars() {
        let Some(d) = c.to_digit(fa as u32) else {
            break;
        };
        v = match v.checked_mul(fa).and_then(|x| x.checked_add(d as u64)) {
            Some(x) => x,
            None => {
                v = u64::MAX;
                break;
            }
        };
    }
    if neg {
        v = v.wrapping_neg();
    }
    let (minus, mut mag) = if to < 0 && (v as i64) < 0 {
        (true, (v as i64).unsigned_abs())
    } else {
        (false, v)
    };
    let mut out = Vec::new();
    loop {
        let d = (mag % ta) as u32;
        out.push(std::char::from_digit(d, ta as u32)?.to_ascii_uppercase());
        mag /= ta;
        if mag == 0 {
            break;
        }
    }
    if minus {
        out.push('-');
    }
    Some(out.iter().rev().collect())
}

/// The statement time in UTC (NOW() is the session's local time).
fn utc_now(env: &Env<'_>) -> chrono::NaiveDateTime {
    use chrono::TimeZone;
    let now = env.ctx.now();
    chrono::Local
        .from_local_datetime(&now)
        .earliest()
        .map(|t| t.naive_utc())
        .unwrap_or(now)
}

/// The functions evaluated with all their arguments (no short-circuit).
fn call_ext(f: Func, args: &[Expr], env: &Env<'_>) -> Result<Value> {
    use chrono::{Datelike, Timelike};
    let v: Vec<Value> = args.iter().map(|a| eval(a, env)).collect::<Result<_>>()?;
    let a0 = v.first().cloned().unwrap_or(Value::Null);
    let a1 = v.get(1).cloned().unwrap_or(Value::Null);
    let a2 = v.get(2).cloned().unwrap_or(Value::Null);
    // Functions whose any NULL argument makes the result NULL.
    let strict_null = !matches!(
        f,
        Func::Char | Func::Field | Func::Elt | Func::Quote | Func::Log | Func::Atan
    );
    if strict_null && v.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let date_part = |g: &dyn Fn(&Temporal) -> Value| -> Value {
        match temporal(&a0, env) {
            Some(t) => g(&t),
            None => Value::Null,
        }
    };
    Ok(match f {
        Func::DateAdd(unit, sub) => date_add(unit, sub, &a0, &a1, env)?,
        Func::DateDiff => match (temporal(&a0, env), temporal(&a1, env)) {
            (Some(x), Some(y)) => {
                Value::Int(datetime::day_number(x.dt.date()) - datetime::day_number(y.dt.date()))
            }
            _ => Value::Null,
        },
        Func::TimestampDiff(unit) => match (temporal(&a0, env), temporal(&a1, env)) {
            (Some(x), Some(y)) => Value::Int(datetime::timestamp_diff(unit, x.dt, y.dt)),
            _ => Value::Null,
        },
        Func::DateFormat => match (temporal(&a0, env), text(&a1)) {
            (Some(t), Some(fmt)) => Value::str(&datetime::format(&t.dt, &fmt)),
            _ => Value::Null,
        },
        Func::StrToDate => {
            let (s, fmt) = (text(&a0).unwrap_or_default(), text(&a1).unwrap_or_default());
            let (want_date, want_time) = datetime::format_parts(&fmt);
            match datetime::str_to_date(&s, &fmt) {
                Some(p) if want_date && p.date.is_some() => {
                    let d = p.date.unwrap_or_default();
                    if want_time {
                        Value::DateTime(
                            d.and_time(chrono::NaiveTime::MIN)
                                + chrono::Duration::microseconds(p.time),
                        )
                    } else {
                        Value::Date(d)
                    }
                }
                Some(p) if !want_date && want_time => Value::str(&datetime::format_time(p.time)),
                _ => {
                    env.ctx.warn(
                        1411,
                        &format!("Incorrect datetime value: '{s}' for function str_to_date"),
                    );
                    Value::Null
                }
            }
        }
        Func::DateOf => date_part(&|t| Value::Date(t.dt.date())),
        Func::TimeOf => match time_value(&a0, env) {
            Some(us) => Value::str(&datetime::format_time(us)),
            None => Value::Null,
        },
        Func::Year => date_part(&|t| Value::Int(t.dt.year() as i64)),
        Func::Month => date_part(&|t| Value::Int(t.dt.month() as i64)),
        Func::Day => date_part(&|t| Value::Int(t.dt.day() as i64)),
        Func::Quarter => date_part(&|t| Value::Int((t.dt.month() as i64 + 2) / 3)),
        Func::DayOfWeek => {
            date_part(&|t| Value::Int(t.dt.weekday().num_days_from_sunday() as i64 + 1))
        }
        Func::WeekDay => date_part(&|t| Value::Int(t.dt.weekday().num_days_from_monday() as i64)),
        Func::DayOfYear => date_part(&|t| Value::Int(t.dt.ordinal() as i64)),
        Func::DayName => date_part(&|t| Value::str(datetime::day_name(t.dt.date()))),
        Func::MonthName => date_part(&|t| Value::str(datetime::month_name(t.dt.month()))),
        Func::ToDays => date_part(&|t| Value::Int(datetime::day_number(t.dt.date()))),
        Func::LastDay => date_part(&|t| {
            let (y, m) = (t.dt.year(), t.dt.month());
            chrono::NaiveDate::from_ymd_opt(y, m, datetime::days_in_month(y, m))
                .map(Value::Date)
                .unwrap_or(Value::Null)
        }),
        Func::Week | Func::YearWeek => {
            // WEEK's default mode is default_week_format (0); YEARWEEK's is 0.
            let mode = if v.len() > 1 {
                a1.to_i64().unwrap_or(0) as u32
            } else {
                0
            };
            date_part(&|t| {
                if f == Func::Week {
                    Value::Int(datetime::calc_week(t.dt.date(), datetime::week_mode(mode)).0)
                } else {
                    let (w, y) = datetime::calc_week(t.dt.date(), datetime::week_mode(mode) | 2);
                    Value::Int(y * 100 + w)
                }
            })
        }
        Func::Hour | Func::Minute | Func::Second | Func::Microsecond => {
            match time_value(&a0, env) {
                None => Value::Null,
                Some(us) => {
                    let us = us.abs();
                    Value::Int(match f {
                        Func::Hour => us / 3_600_000_000,
                        Func::Minute => us / 60_000_000 % 60,
                        Func::Second => us / 1_000_000 % 60,
                        _ => us % 1_000_000,
                    })
                }
            }
        }
        Func::Extract(unit) => {
            if unit.is_date_unit() || unit == Unit::Quarter {
                date_part(&|t| {
                    let d = t.dt.date();
                    Value::Int(match unit {
                        Unit::Year => d.year() as i64,
                        Unit::Quarter => (d.month() as i64 + 2) / 3,
                        Unit::Month => d.month() as i64,
                        Unit::Week => datetime::calc_week(d, datetime::week_mode(0)).0,
                        _ => d.day() as i64,
                    })
                })
            } else {
                match time_value(&a0, env) {
                    None => Value::Null,
                    Some(us) => {
                        let sign = if us < 0 { -1 } else { 1 };
                        let us = us.abs();
                        Value::Int(
                            sign * match unit {
                                Unit::Hour => us / 3_600_000_000,
                                Unit::Minute => us / 60_000_000 % 60,
                                Unit::Second => us / 1_000_000 % 60,
                                _ => us % 1_000_000,
                            },
                        )
                    }
                }
            }
        }
        Func::FromUnixtime => {
            use chrono::TimeZone;
            let secs = a0.to_decimal().unwrap_or_default();
            if secs.is_sign_negative() && !secs.is_zero() {
                return Ok(Value::Null);
            }
            let whole = secs.trunc().to_i64().unwrap_or(i64::MAX);
            let micros = (secs.fract() * Decimal::from(1_000_000))
                .round()
                .to_u32()
                .unwrap_or(0);
            let Some(dt) = chrono::Local
                .timestamp_opt(whole, micros * 1000)
                .single()
                .map(|t| t.naive_local())
            else {
                return Ok(Value::Null);
            };
            if v.len() > 1 {
                Value::str(&datetime::format(&dt, &text(&a1).unwrap_or_default()))
            } else {
                Value::DateTime(dt)
            }
        }
        Func::FromDays => match a0
            .to_i64()
            .and_then(datetime::from_day_number)
            .filter(|d| d.year() >= 1)
        {
            Some(d) => Value::Date(d),
            None => Value::Null,
        },
        Func::MakeDate => {
            let (y, doy) = (a0.to_i64().unwrap_or(0), a1.to_i64().unwrap_or(0));
            let y = match y {
                0..=69 => y + 2000,
                70..=99 => y + 1900,
                _ => y,
            };
            if doy <= 0 || !(0..=9999).contains(&y) {
                return Ok(Value::Null);
            }
            match chrono::NaiveDate::from_ymd_opt(y as i32, 1, 1)
                .and_then(|d| d.checked_add_signed(chrono::Duration::days(doy - 1)))
                .filter(|d| d.year() <= 9999)
            {
                Some(d) => Value::Date(d),
                None => Value::Null,
            }
        }
        Func::UtcTimestamp => Value::DateTime(utc_now(env).with_nanosecond(0).unwrap_or_default()),
        Func::UtcDate => Value::Date(utc_now(env).date()),
        Func::UtcTime => Value::str(&utc_now(env).format("%H:%M:%S").to_string()),
        Func::CurTime => Value::str(&env.ctx.now().format("%H:%M:%S").to_string()),

        // ---- strings ----
        Func::LPad | Func::RPad => {
            let (s, fill) = (text(&a0).unwrap_or_default(), text(&a2).unwrap_or_default());
            match pad(&s, a1.to_i64().unwrap_or(0), &fill, f == Func::LPad) {
                Some(p) => Value::str(&p),
                None => Value::Null,
            }
        }
        Func::Locate => {
            let pos = if v.len() > 2 {
                a2.to_i64().unwrap_or(0)
            } else {
                1
            };
            Value::Int(locate(
                &text(&a0).unwrap_or_default(),
                &text(&a1).unwrap_or_default(),
                pos,
            ))
        }
        Func::Instr => Value::Int(locate(
            &text(&a1).unwrap_or_default(),
            &text(&a0).unwrap_or_default(),
            1,
        )),
        Func::Reverse => Value::str(
            &text(&a0)
                .unwrap_or_default()
                .chars()
                .rev()
                .collect::<String>(),
        ),
        Func::SubstringIndex => Value::str(&substring_index(
            &text(&a0).unwrap_or_default(),
            &text(&a1).unwrap_or_default(),
            a2.to_i64().unwrap_or(0),
        )),
        Func::Ascii => {
            Value::Int(a0.to_bytes().and_then(|b| b.first().copied()).unwrap_or(0) as i64)
        }
        Func::Char => {
            let mut out = Vec::new();
            for x in &v {
                if let Some(n) = x.to_i64() {
                    let bytes = (n as u32).to_be_bytes();
                    let skip = bytes.iter().take(3).take_while(|&&b| b == 0).count();
                    out.extend_from_slice(&bytes[skip..]);
                }
            }
            Value::Bytes(out)
        }
        Func::Space => {
            let n = a0.to_i64().unwrap_or(0);
            if n > (64 << 20) {
                Value::Null
            } else {
                Value::str(&" ".repeat(n.max(0) as usize))
            }
        }
        Func::Field => {
            if a0.is_null() {
                return Ok(Value::Int(0));
            }
            let pos = v[1..]
                .iter()
                .position(|x| compare(&a0, x) == Some(Ordering::Equal));
            Value::Int(pos.map(|p| p as i64 + 1).unwrap_or(0))
        }
        Func::Elt => match a0.to_i64() {
            Some(n) if n >= 1 && (n as usize) < v.len() => v[n as usize].clone(),
            _ => Value::Null,
        },
        Func::Strcmp => {
            let (x, y) = (
                a0.to_bytes().unwrap_or_default(),
                a1.to_bytes().unwrap_or_default(),
            );
            Value::Int(match x.cmp(&y) {
                Ordering::Less => -1,
                Ordering::Equal => 0,
                Ordering::Greater => 1,
            })
        }
        Func::Insert => {
            let s: Vec<char> = text(&a0).unwrap_or_default().chars().collect();
            let (pos, len) = (a1.to_i64().unwrap_or(0), a2.to_i64().unwrap_or(0));
            let new = text(&v[3]).unwrap_or_default();
            let n = s.len() as i64;
            if pos < 1 || pos > n {
                Value::str(&s.iter().collect::<String>())
            } else {
                let start = (pos - 1) as usize;
                let end = if len < 0 || start as i64 + len > n {
                    s.len()
                } else {
                    start + len as usize
                };
                let mut out: String = s[..start].iter().collect();
                out.push_str(&new);
                out.extend(&s[end..]);
                Value::str(&out)
            }
        }
        Func::Format => {
            let d = a1.to_i64().unwrap_or(0);
            match a0.to_decimal() {
                Some(x) => Value::str(&format_number(x, d)),
                // Beyond DECIMAL's range: fall back to the double's digits.
                None => Value::str(&crate::types::value::format_double(
                    a0.to_f64().unwrap_or(0.0),
                )),
            }
        }
        Func::Quote => match a0.to_bytes() {
            None => Value::str("NULL"),
            Some(b) => Value::Bytes(quote(&b)),
        },
        Func::Unhex => match a0.to_bytes().and_then(|b| unhex(&b)) {
            Some(b) => Value::Bytes(b),
            None => Value::Null,
        },
        Func::ToBase64 => Value::Bytes(to_base64(&a0.to_bytes().unwrap_or_default())),
        Func::FromBase64 => match a0.to_bytes().and_then(|b| from_base64(&b)) {
            Some(b) => Value::Bytes(b),
            None => Value::Null,
        },
        Func::Md5 => Value::str(&hex_lower(&md5(&a0.to_bytes().unwrap_or_default()))),
        Func::Sha1 => {
            use sha1::Digest;
            Value::str(&hex_lower(&sha1::Sha1::digest(
                a0.to_bytes().unwrap_or_default(),
            )))
        }
        Func::Sha2 => {
            let data = a0.to_bytes().unwrap_or_default();
            match a1.to_i64().and_then(|bits| sha2_digest(&data, bits)) {
                Some(digest) => Value::str(&hex_lower(&digest)),
                None => {
                    env.ctx.warn(
                        1583,
                        "Incorrect parameters in the call to native function 'sha2'",
                    );
                    Value::Null
                }
            }
        }
        Func::Crc32 => Value::UInt(crc32(&a0.to_bytes().unwrap_or_default()) as u64),

        // ---- math ----
        Func::Exp => {
            let x = a0.to_f64().unwrap_or(0.0);
            let y = x.exp();
            if y.is_infinite() {
                return Err(double_out_of_range("exp", &v));
            }
            Value::Double(y)
        }
        Func::Ln => double_fn(&a0, |x| log_arg(x, env).map(f64::ln)),
        Func::Log2 => double_fn(&a0, |x| log_arg(x, env).map(f64::log2)),
        Func::Log10 => double_fn(&a0, |x| log_arg(x, env).map(f64::log10)),
        Func::Log => {
            if v.iter().any(Value::is_null) {
                return Ok(Value::Null);
            }
            if v.len() == 1 {
                double_fn(&a0, |x| log_arg(x, env).map(f64::ln))
            } else {
                let (b, x) = (a0.to_f64().unwrap_or(0.0), a1.to_f64().unwrap_or(0.0));
                if b <= 0.0 || x <= 0.0 || b == 1.0 {
                    env.ctx.warn(3020, "Invalid argument for logarithm");
                    Value::Null
                } else {
                    Value::Double(x.ln() / b.ln())
                }
            }
        }
        Func::Pi => Value::Double(std::f64::consts::PI),
        Func::Radians => double_fn(&a0, |x| Some(x.to_radians())),
        Func::Degrees => double_fn(&a0, |x| Some(x.to_degrees())),
        Func::Sin => double_fn(&a0, |x| Some(x.sin())),
        Func::Cos => double_fn(&a0, |x| Some(x.cos())),
        Func::Tan => double_fn(&a0, |x| Some(x.tan())),
        Func::Asin => double_fn(&a0, |x| (-1.0..=1.0).contains(&x).then(|| x.asin())),
        Func::Acos => double_fn(&a0, |x| (-1.0..=1.0).contains(&x).then(|| x.acos())),
        Func::Atan => {
            if v.iter().any(Value::is_null) {
                return Ok(Value::Null);
            }
            if v.len() == 1 {
                double_fn(&a0, |x| Some(x.atan()))
            } else {
                let (y, x) = (a0.to_f64().unwrap_or(0.0), a1.to_f64().unwrap_or(0.0));
                Value::Double(y.atan2(x))
            }
        }
        Func::Cot => {
            let x = a0.to_f64().unwrap_or(0.0);
            let t = x.tan();
            if t == 0.0 {
                return Err(double_out_of_range("cot", &v));
            }
            Value::Double(1.0 / t)
        }
        Func::Conv if text(&a0).is_some_and(|t| t.is_empty()) => Value::Null,
        Func::Conv => match conv(
            &text(&a0).unwrap_or_default(),
            a1.to_i64().unwrap_or(0),
            a2.to_i64().unwrap_or(0),
        ) {
            Some(s) => Value::str(&s),
            None => Value::Null,
        },
        other => {
            return Err(Error::Unsupported(format!(
                "function {other:?} in this context"
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::Binder;
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::parser::Parser;

    fn bind_projection(sql: &str) -> Vec<Expr> {
        let stmts = Parser::parse_sql(&MySqlDialect {}, sql).expect("test SQL parses");
        let ast::Statement::Query(q) = &stmts[0] else {
            panic!("not a query")
        };
        let ast::SetExpr::Select(s) = q.body.as_ref() else {
            panic!("not a select")
        };
        let mut b = Binder::new(None, None);
        s.projection
            .iter()
            .map(|item| match item {
                ast::SelectItem::UnnamedExpr(e) => b.bind(e).expect("binds"),
                other => panic!("unexpected item {other}"),
            })
            .collect()
    }

    #[test]
    fn interval_forms_bind_placeholders_in_textual_order() {
        let p = Expr::Param;
        assert_eq!(
            bind_projection(
                "SELECT DATE_ADD(?, INTERVAL ? DAY), INTERVAL ? MONTH + ?, ? - INTERVAL ? HOUR"
            ),
            vec![
                Expr::Func(Func::DateAdd(Unit::Day, false), vec![p(0), p(1)]),
                Expr::Func(Func::DateAdd(Unit::Month, false), vec![p(3), p(2)]),
                Expr::Func(Func::DateAdd(Unit::Hour, true), vec![p(4), p(5)]),
            ]
        );
        assert_eq!(
            bind_projection("SELECT TIMESTAMPADD(WEEK, ?, ?), TIMESTAMPDIFF(SQL_TSI_DAY, ?, ?)"),
            vec![
                Expr::Func(Func::DateAdd(Unit::Week, false), vec![p(1), p(0)]),
                Expr::Func(Func::TimestampDiff(Unit::Day), vec![p(2), p(3)]),
            ]
        );
    }

    #[test]
    fn special_forms_bind() {
        let lit = |s: &str| Expr::Literal(Value::str(s));
        assert_eq!(
            bind_projection("SELECT POSITION('b' IN 'abc'), EXTRACT(QUARTER FROM 'x'), UTC_DATE"),
            vec![
                Expr::Func(Func::Locate, vec![lit("b"), lit("abc")]),
                Expr::Func(Func::Extract(Unit::Quarter), vec![lit("x")]),
                Expr::Func(Func::UtcDate, vec![]),
            ]
        );
    }

    #[test]
    fn helpers_match_mysql() {
        assert_eq!(conv("a", 16, 2).as_deref(), Some("1010"));
        assert_eq!(conv("-17", 10, -18).as_deref(), Some("-H"));
        assert_eq!(conv("-1", 10, 16).as_deref(), Some("FFFFFFFFFFFFFFFF"));
        assert_eq!(format_number(Decimal::new(-12345, 1), 0), "-1,235");
        assert_eq!(
            format_number(Decimal::new(1234567891, 3), 2),
            "1,234,567.89"
        );
        assert_eq!(substring_index("a.b.c", ".", -2), "b.c");
        assert_eq!(locate("", "abc", 3), 3);
        assert_eq!(round_double(2.5, 0, false), 2.0);
        assert_eq!(round_double(2.675, 2, false), 2.68);
        assert_eq!(round_double(-1.99, 1, true), -1.9);
        assert_eq!(crc32(b"MySQL"), 3_259_397_556);
        assert_eq!(hex_lower(&md5(b"abc")), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(
            sha2_digest(b"abc", 256).map(|d| hex_lower(&d)).as_deref(),
            Some("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        );
        assert_eq!(sha2_digest(b"abc", 512).map(|d| d.len()), Some(64));
        assert_eq!(sha2_digest(b"abc", 100), None);
        assert_eq!(to_base64(b"ab"), b"YWI=");
        assert_eq!(from_base64(b"YWI="), Some(b"ab".to_vec()));
    }
}
