//! Scalar functions: the ones clients and common applications call.
//!
//! Each function is resolved once at bind time ([`lookup`], [`check_arity`]) and
//! evaluated by [`call`]. Unknown functions are error 1305, wrong argument counts
//! 1582, as in MySQL. Forms with their own syntax (`d + INTERVAL n DAY`,
//! `DATE_ADD(d, INTERVAL ...)`, `EXTRACT(unit FROM d)`, `TIMESTAMPDIFF(unit, a, b)`,
//! `POSITION(a IN b)`) are bound by the binder's `bind_special`, which it asks
//! first (in `crate::plan::bind_functions`: binding is planning, a layer above).
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
//!
//! This file holds what all the functions share: [`Func`], its resolution
//! and arity, its result type, and [`call`], which hands each call to its
//! family, a file each: [`functions_string`], [`functions_math`],
//! [`functions_datetime`], [`functions_cast`] (CAST, and the conversion
//! the binder puts on IF / COALESCE / CASE branches) and [`functions_json`]
//! (the JSON functions, `->` / `->>`, MEMBER OF, CAST(x AS JSON)); the session's facts and
//! the flow-control functions are evaluated here. The forms with their own
//! syntax are bound by the binder, in `crate::plan::bind_functions`.

use crate::expr::eval::{eval, Env};
use crate::expr::functions_cast;
use crate::expr::functions_datetime;
use crate::expr::functions_gtid;
use crate::expr::functions_json::{self, JsonFunc};
use crate::expr::functions_math;
use crate::expr::functions_misc;
use crate::expr::functions_string;
use crate::expr::tree::{AggCall, Expr};
use crate::types::datetime::Unit;
use crate::types::value::{compare, sort_cmp, Value};
use crate::types::ExprKind;
use canyon_common::{Error, Result};
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
    /// CONVERT(x USING cs) / CAST(x AS CHAR CHARACTER SET cs) for a
    /// character set other than UTF-8: the value limited to the set's
    /// characters (`?` for the others), bytes that are not UTF-8 read as
    /// text in it. The result stays UTF-8 (`crate::types::charset`).
    CastCharset(crate::types::charset::Charset),
    /// LENGTH() of a string in a character set other than UTF-8 (a latin1
    /// column's): its bytes in that set, as MySQL counts them.
    LengthIn(crate::types::charset::Charset),
    CastDouble,
    CastDecimal(u8, u8),
    CastDate,
    CastDateTime,
    /// CAST(x AS TIME(fsp)): the time `x` reads as, held as a TIME
    /// column's text with `fsp` fractional digits (`functions_cast`).
    CastTime(u8),
    /// Converts a branch of IF / IFNULL / COALESCE / CASE to the branches'
    /// aggregated type (see [`aggregate_kind`]); made by the binder, never named
    /// in SQL.
    Conform(ExprKind),
    // ---- date and time (see crate::types::datetime) ----
    /// DATE_ADD / DATE_SUB / `+ INTERVAL`: (unit, subtract). Args: date, amount.
    DateAdd(Unit, bool),
    DateDiff,
    /// TIMEDIFF: two datetimes or two times, the difference as a TIME.
    TimeDiff,
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
    /// CONVERT_TZ(dt, from_zone, to_zone).
    ConvertTz,
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
    /// FIND_IN_SET(str, list): the 1-based position of `str` among the
    /// comma-separated items of `list`, 0 if absent.
    FindInSet,
    /// An ENUM column's numeric reading (`c + 0`, `c = 2`, ORDER BY c):
    /// `EnumIndex(c, member...)` is the 1-based index of the member `c`
    /// holds, 0 for the error value `''` (see `crate::types::enumset`).
    /// Made by the binder only; no SQL name.
    EnumIndex,
    /// A SET column's numeric reading: `SetMask(c, member...)` is the
    /// bitmask of the members `c` holds. Made by the binder only.
    SetMask,
    /// A TIME column's numeric reading (`c + 0`, `c = 400`, ORDER BY c):
    /// `TimeNumber(c, fsp)` is MySQL's `[-]HHMMSS[.ffffff]`, a BIGINT for
    /// fsp 0 and a DECIMAL of scale fsp otherwise ('-838:59:55' is
    /// -8385955). Made by the binder only (see `crate::plan::bind_members`).
    TimeNumber,
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
    /// LOAD_FILE(name): a server file's bytes, as the session allows
    /// (`EvalContext::load_file`).
    LoadFile,
    /// SLEEP(seconds) (`crate::expr::functions_misc`, as the five below).
    Sleep,
    /// BENCHMARK(count, expr).
    Benchmark,
    /// GET_LOCK(name, timeout).
    GetLock,
    /// RELEASE_LOCK(name).
    ReleaseLock,
    /// IS_FREE_LOCK(name).
    IsFreeLock,
    /// IS_USED_LOCK(name).
    IsUsedLock,
    /// RELEASE_ALL_LOCKS().
    ReleaseAllLocks,
    /// BINLOG_GTID_POS(file, pos) (MariaDB): the GTID position at a binary
    /// log position.
    BinlogGtidPos,
    /// GTID_SUBSET(set1, set2) (`crate::expr::functions_gtid`, as the two
    /// below).
    GtidSubset,
    /// GTID_SUBTRACT(set1, set2).
    GtidSubtract,
    /// WAIT_FOR_EXECUTED_GTID_SET(set[, timeout]).
    WaitForExecutedGtidSet,
    /// `@name := expr` (the binder's form of MySQL's assignment operator):
    /// the name as a literal string, then the value, which is the result.
    SetUserVar,
    /// WEIGHT_STRING(str); the binder adds the name of `str`'s collation
    /// as a second argument (none for a binary string).
    WeightString,
    /// The JSON functions, `->` / `->>` and CAST(x AS JSON)
    /// (`crate::expr::functions_json`).
    Json(JsonFunc),
}

impl Func {
    /// Whether the result depends only on the arguments and the statement (not
    /// on the row or on randomness): such calls over constants are constants.
    pub fn is_deterministic_per_statement(self) -> bool {
        !matches!(
            self,
            Func::Rand
                | Func::Sleep
                | Func::Benchmark
                | Func::GetLock
                | Func::ReleaseLock
                | Func::IsFreeLock
                | Func::IsUsedLock
                | Func::ReleaseAllLocks
                | Func::BinlogGtidPos
                | Func::WaitForExecutedGtidSet
                | Func::SetUserVar
        )
    }
}

/// Resolves a function name (upper-case).
pub fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "VERSION" => Func::Version,
        "LOAD_FILE" => Func::LoadFile,
        "SLEEP" => Func::Sleep,
        "BENCHMARK" => Func::Benchmark,
        "GET_LOCK" => Func::GetLock,
        "BINLOG_GTID_POS" => Func::BinlogGtidPos,
        "GTID_SUBSET" => Func::GtidSubset,
        "GTID_SUBTRACT" => Func::GtidSubtract,
        "WAIT_FOR_EXECUTED_GTID_SET" => Func::WaitForExecutedGtidSet,
        "RELEASE_LOCK" => Func::ReleaseLock,
        "IS_FREE_LOCK" => Func::IsFreeLock,
        "IS_USED_LOCK" => Func::IsUsedLock,
        "RELEASE_ALL_LOCKS" => Func::ReleaseAllLocks,
        "WEIGHT_STRING" => Func::WeightString,
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
        "TIMEDIFF" => Func::TimeDiff,
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
        "CONVERT_TZ" => Func::ConvertTz,
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
        "FIND_IN_SET" => Func::FindInSet,
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
        other => Func::Json(functions_json::lookup(other)?),
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
        Func::ConvertTz => n == 3,
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
        | Func::TimeDiff
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
        // A third argument is bound for a SET column (`bind_members`).
        Func::FindInSet => n == 2 || n == 3,
        Func::EnumIndex | Func::SetMask => n >= 1,
        Func::TimeNumber => n == 2,
        Func::LoadFile => n == 1,
        Func::Sleep | Func::ReleaseLock | Func::IsFreeLock | Func::IsUsedLock => n == 1,
        Func::Benchmark | Func::GetLock => n == 2,
        Func::ReleaseAllLocks => n == 0,
        Func::BinlogGtidPos | Func::GtidSubset | Func::GtidSubtract => n == 2,
        Func::WaitForExecutedGtidSet => n == 1 || n == 2,
        Func::SetUserVar => n == 2,
        Func::WeightString => n == 1,
        Func::LastInsertId | Func::Rand | Func::UnixTimestamp => n <= 1,
        Func::Now => n <= 1,
        Func::Concat | Func::Coalesce => n >= 1,
        Func::ConcatWs | Func::Greatest | Func::Least => n >= 2,
        Func::Length
        | Func::LengthIn(_)
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
        | Func::CastCharset(_)
        | Func::CastDouble
        | Func::CastDecimal(..)
        | Func::CastDate
        | Func::CastDateTime
        | Func::CastTime(_)
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
        Func::Json(j) => j.arity_ok(n),
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
        D::Time(fsp, _) => match fsp.unwrap_or(0) {
            fsp @ 0..=6 => Func::CastTime(fsp as u8),
            fsp => {
                return Err(Error::Sql {
                    code: 1426,
                    sqlstate: *b"42000",
                    message: format!("Too-big precision {fsp} specified for 'CAST'. Maximum is 6."),
                })
            }
        },
        D::JSON => Func::Json(JsonFunc::Cast),
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
        | Func::LengthIn(_)
        | Func::CharLength
        | Func::Sign => ExprKind::Int,
        Func::LastInsertId | Func::UnixTimestamp | Func::CastUnsigned => ExprKind::UInt,
        Func::CastSigned | Func::IsNull => ExprKind::Int,
        Func::Now | Func::CastDateTime => ExprKind::DateTime,
        Func::CurDate | Func::CastDate => ExprKind::Date,
        Func::Rand | Func::Sqrt | Func::Power | Func::CastDouble => ExprKind::Double,
        Func::CastDecimal(_, s) => ExprKind::Decimal(s),
        Func::Conform(k) => k,
        Func::SetUserVar => args
            .get(1)
            .map(|a| a.kind(cols, aggs))
            .unwrap_or(ExprKind::Null),
        Func::TimeNumber => match args.get(1) {
            Some(Expr::Literal(Value::Int(f))) if *f > 0 => ExprKind::Decimal(*f as u8),
            _ => ExprKind::Int,
        },
        Func::Json(j) => j.kind(),
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
        | Func::FindInSet
        | Func::EnumIndex
        | Func::SetMask
        | Func::Strcmp => ExprKind::Int,
        Func::Crc32 => ExprKind::UInt,
        Func::BinlogGtidPos | Func::GtidSubtract => ExprKind::String,
        Func::GtidSubset | Func::WaitForExecutedGtidSet => ExprKind::Int,
        Func::Sleep
        | Func::Benchmark
        | Func::GetLock
        | Func::ReleaseLock
        | Func::IsFreeLock
        | Func::IsUsedLock
        | Func::ReleaseAllLocks => ExprKind::Int,
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
        Func::UtcTimestamp | Func::ConvertTz => ExprKind::DateTime,
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
        // JSON with anything but JSON is a string (MySQL: LONGTEXT).
        (K::Json, _) | (_, K::Json) => K::String,
        (K::Date, K::DateTime) | (K::DateTime, K::Date) => K::DateTime,
        (K::Date | K::DateTime, _) | (_, K::Date | K::DateTime) => K::String,
        (K::Double, _) | (_, K::Double) => K::Double,
        (K::Decimal(x), K::Decimal(y)) => K::Decimal(x.max(y)),
        (K::Decimal(x), _) | (_, K::Decimal(x)) => K::Decimal(x),
        // Int with UInt.
        _ => K::Decimal(0),
    })
}

pub(super) fn arg(args: &[Expr], i: usize, env: &Env<'_>) -> Result<Value> {
    match args.get(i) {
        Some(e) => eval(e, env),
        None => Ok(Value::Null),
    }
}

pub(super) fn text(v: &Value) -> Option<String> {
    v.to_bytes()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// The error for a function evaluated where no family knows it.
pub(super) fn unsupported(f: Func) -> Error {
    Error::Unsupported(format!("function {f:?} in this context"))
}

/// Evaluates a call: each family of functions in its file, the ones that take
/// all their arguments evaluated (no short-circuit) through `call_ext`.
pub fn call(f: Func, args: &[Expr], env: &Env<'_>) -> Result<Value> {
    match f {
        Func::Version
        | Func::Database
        | Func::User
        | Func::CurrentUser
        | Func::ConnectionId
        | Func::RowCount
        | Func::FoundRows
        | Func::LastInsertId => call_session(f, args, env),
        Func::Sleep => functions_misc::sleep(args, env),
        Func::Benchmark => functions_misc::benchmark(args, env),
        Func::GetLock
        | Func::ReleaseLock
        | Func::IsFreeLock
        | Func::IsUsedLock
        | Func::ReleaseAllLocks => functions_misc::user_lock(f, args, env),
        Func::WeightString => functions_misc::weight_string(args, env),
        Func::GtidSubset | Func::GtidSubtract | Func::WaitForExecutedGtidSet => {
            functions_gtid::call(f, args, env)
        }
        Func::BinlogGtidPos => {
            let file = arg(args, 0, env)?;
            let pos = arg(args, 1, env)?;
            if file.is_null() || pos.is_null() {
                return Ok(Value::Null);
            }
            let pos = pos.to_f64().unwrap_or(-1.0);
            if pos < 0.0 {
                return Ok(Value::Null);
            }
            env.ctx.binlog_gtid_pos(&file.to_display(), pos as u64)
        }
        Func::SetUserVar => {
            let name = arg(args, 0, env)?.to_display();
            let v = arg(args, 1, env)?;
            if !env.ctx.set_user_var(&name, v.clone()) {
                return Err(unsupported(f));
            }
            Ok(v)
        }
        Func::LoadFile => Ok(match arg(args, 0, env)?.to_bytes() {
            Some(name) => env.ctx.load_file(&name),
            None => Value::Null,
        }),
        Func::Now | Func::CurDate | Func::UnixTimestamp => {
            functions_datetime::call_clock(f, args, env)
        }
        Func::Concat
        | Func::ConcatWs
        | Func::Length
        | Func::LengthIn(_)
        | Func::CharLength
        | Func::Upper
        | Func::Lower
        | Func::Trim
        | Func::LTrim
        | Func::RTrim
        | Func::Substring
        | Func::Left
        | Func::Right
        | Func::Replace
        | Func::Repeat
        | Func::Hex
        | Func::Strcmp => functions_string::call_string(f, args, env),
        Func::Rand
        | Func::Abs
        | Func::Ceil
        | Func::Floor
        | Func::Round
        | Func::Truncate
        | Func::Mod
        | Func::Power
        | Func::Sqrt
        | Func::Sign => functions_math::call_numeric(f, args, env),
        Func::Coalesce
        | Func::IfNull
        | Func::If
        | Func::NullIf
        | Func::IsNull
        | Func::Greatest
        | Func::Least => call_flow(f, args, env),
        Func::CastSigned
        | Func::CastUnsigned
        | Func::CastChar
        | Func::CastCharN(_)
        | Func::CastCharset(_)
        | Func::CastDouble
        | Func::CastDecimal(..)
        | Func::CastDate
        | Func::CastDateTime
        | Func::CastTime(_)
        | Func::Conform(_) => functions_cast::call_cast(f, args, env),
        Func::Json(j) => functions_json::call(j, args, env),
        other => call_ext(other, args, env),
    }
}

/// The session's facts: VERSION(), DATABASE(), CONNECTION_ID(), LAST_INSERT_ID(), ...
fn call_session(f: Func, args: &[Expr], env: &Env<'_>) -> Result<Value> {
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
        other => return Err(unsupported(other)),
    })
}

/// COALESCE, IFNULL, IF, NULLIF, ISNULL, GREATEST and LEAST: each evaluates its
/// arguments as it needs them.
fn call_flow(f: Func, args: &[Expr], env: &Env<'_>) -> Result<Value> {
    Ok(match f {
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
        other => return Err(unsupported(other)),
    })
}

/// The functions evaluated with all their arguments (no short-circuit).
fn call_ext(f: Func, args: &[Expr], env: &Env<'_>) -> Result<Value> {
    let v: Vec<Value> = args.iter().map(|a| eval(a, env)).collect::<Result<_>>()?;
    // Functions whose any NULL argument makes the result NULL.
    let strict_null = !matches!(
        f,
        Func::Char | Func::Field | Func::Elt | Func::Quote | Func::Log | Func::Atan
    );
    if strict_null && v.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    match f {
        Func::DateAdd(..)
        | Func::DateDiff
        | Func::TimeDiff
        | Func::TimestampDiff(_)
        | Func::DateFormat
        | Func::StrToDate
        | Func::DateOf
        | Func::TimeOf
        | Func::Year
        | Func::Month
        | Func::Day
        | Func::Quarter
        | Func::DayOfWeek
        | Func::WeekDay
        | Func::DayOfYear
        | Func::DayName
        | Func::MonthName
        | Func::ToDays
        | Func::LastDay
        | Func::Week
        | Func::YearWeek => functions_datetime::call_date(f, v, env),
        Func::Hour
        | Func::Minute
        | Func::Second
        | Func::Microsecond
        | Func::Extract(_)
        | Func::FromUnixtime
        | Func::ConvertTz
        | Func::FromDays
        | Func::MakeDate
        | Func::UtcTimestamp
        | Func::UtcDate
        | Func::UtcTime
        | Func::CurTime => functions_datetime::call_time(f, v, env),
        // A constant compared with a TIME is read once in MySQL: its
        // warning is given once, not for every row.
        Func::TimeNumber => functions_datetime::time_number(&v, args[0].is_constant(), env),
        Func::LPad
        | Func::RPad
        | Func::Locate
        | Func::Instr
        | Func::Reverse
        | Func::SubstringIndex
        | Func::Ascii
        | Func::Char
        | Func::Space
        | Func::Field
        | Func::Elt
        | Func::FindInSet
        | Func::EnumIndex
        | Func::SetMask
        | Func::Insert
        | Func::Format
        | Func::Quote
        | Func::Unhex
        | Func::ToBase64
        | Func::FromBase64
        | Func::Md5
        | Func::Sha1
        | Func::Sha2
        | Func::Crc32 => functions_string::call_string_values(f, v, env),
        Func::Exp
        | Func::Ln
        | Func::Log2
        | Func::Log10
        | Func::Log
        | Func::Pi
        | Func::Radians
        | Func::Degrees
        | Func::Sin
        | Func::Cos
        | Func::Tan
        | Func::Asin
        | Func::Acos
        | Func::Atan
        | Func::Cot
        | Func::Conv => functions_math::call_math(f, v, env),
        other => Err(unsupported(other)),
    }
}
