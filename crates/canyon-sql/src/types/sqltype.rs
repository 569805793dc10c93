//! Column types: declaration, result-set metadata, and coercion of values into a
//! column under MySQL 8.0's default strict SQL mode (STRICT_TRANS_TABLES).

use crate::types::decimal::{Decimal, RoundingStrategy};
use crate::types::enumset::{self, Kind, Members};
use crate::types::json;
use crate::types::result::{charset, column_flags, Column, ColumnType};
use crate::types::value::{parse_datetime_bytes, Value};
use canyon_common::{Error, Result};
use serde::{Deserialize, Serialize};

/// A declared column type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SqlType {
    /// TINYINT (1 byte).
    TinyInt {
        /// UNSIGNED.
        unsigned: bool,
    },
    /// SMALLINT (2 bytes).
    SmallInt {
        /// UNSIGNED.
        unsigned: bool,
    },
    /// MEDIUMINT (3 bytes).
    MediumInt {
        /// UNSIGNED.
        unsigned: bool,
    },
    /// INT / INTEGER (4 bytes).
    Int {
        /// UNSIGNED.
        unsigned: bool,
    },
    /// BIGINT (8 bytes).
    BigInt {
        /// UNSIGNED.
        unsigned: bool,
    },
    /// FLOAT (stored as a double, reported as FLOAT).
    Float {
        /// UNSIGNED: negative values are out of range.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        unsigned: bool,
        /// FLOAT(M,D): values are rounded to D decimals and must have at most
        /// M - D integer digits.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        digits: Option<(u8, u8)>,
    },
    /// DOUBLE / REAL / DOUBLE PRECISION.
    Double {
        /// UNSIGNED: negative values are out of range.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        unsigned: bool,
        /// DOUBLE(M,D), as for FLOAT.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        digits: Option<(u8, u8)>,
    },
    /// DECIMAL(precision, scale), exact: up to 65 digits, 30 after the point
    /// (see [`crate::types::decimal`]).
    Decimal {
        /// Total digits.
        precision: u8,
        /// Digits after the point.
        scale: u8,
        /// UNSIGNED: negative values are out of range.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        unsigned: bool,
    },
    /// CHAR(n): trailing spaces are removed on store, as MySQL removes them on read.
    Char(u32),
    /// VARCHAR(n), n in characters.
    VarChar(u32),
    /// BINARY(n).
    Binary(u32),
    /// VARBINARY(n), n in bytes.
    VarBinary(u32),
    /// TINYTEXT/TEXT/MEDIUMTEXT/LONGTEXT with their byte limit.
    Text(u32),
    /// TINYBLOB/BLOB/MEDIUMBLOB/LONGBLOB with their byte limit.
    Blob(u32),
    /// DATE.
    Date,
    /// DATETIME(fsp): fsp fractional-second digits, 0 to 6 (values are
    /// rounded to them on store; see [`crate::types::datetime::round_datetime`]).
    DateTime(u8),
    /// TIMESTAMP(fsp): held like DATETIME, in UTC; shown in the session's
    /// `time_zone` (see [`crate::types::timezone`]).
    Timestamp(u8),
    /// BIT(n), 1 to 64 bits: held as an unsigned integer (`Value::UInt`), so
    /// that it compares and computes as a number as MySQL's BIT does; the
    /// protocol sends a BIT column's value as its ⌈n/8⌉ big-endian bytes.
    Bit(u8),
    /// YEAR: 1901 to 2155, or 0 (`0000`); held as `Value::UInt`. Two-digit
    /// input maps 1..=69 to 2001..=2069 and 70..=99 to 1970..=1999, as MySQL.
    Year,
    /// TIME(fsp), '-838:59:59' to '838:59:59' with fsp (0 to 6) fractional
    /// digits: held as its canonical text `[-]HH:MM:SS[.f…]` (`Value::Bytes`),
    /// which is what the protocol sends. Not implemented: ordering by time
    /// value across negative times or hours past 99 (the text's order is
    /// used, in ORDER BY and in keys).
    Time(u8),
    /// ENUM('a', ...): one member, held as its text (see
    /// [`crate::types::enumset`] for why and how it reads as a number).
    Enum(#[serde(deserialize_with = "enumset::deserialize_members")] &'static Members),
    /// SET('a', ...): a subset of the members, held as their text in
    /// declaration order, comma-joined.
    Set(#[serde(deserialize_with = "enumset::deserialize_members")] &'static Members),
    /// JSON: a validated document in Canyon's binary form, held as
    /// `Value::Json` (see [`crate::types::json`]).
    Json,
}

impl SqlType {
    /// Whether values are integers.
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            SqlType::TinyInt { .. }
                | SqlType::SmallInt { .. }
                | SqlType::MediumInt { .. }
                | SqlType::Int { .. }
                | SqlType::BigInt { .. }
        )
    }

    /// Whether values are numbers (integers, DECIMAL, FLOAT, DOUBLE, YEAR):
    /// MariaDB prints such a column's DEFAULT unquoted.
    pub fn is_numeric(self) -> bool {
        self.is_integer()
            || matches!(
                self,
                SqlType::Decimal { .. }
                    | SqlType::Float { .. }
                    | SqlType::Double { .. }
                    | SqlType::Year
            )
    }

    /// Whether the type is UNSIGNED (an integer, DECIMAL, FLOAT or DOUBLE
    /// declared so).
    pub fn is_unsigned(self) -> bool {
        matches!(
            self,
            SqlType::TinyInt { unsigned: true }
                | SqlType::SmallInt { unsigned: true }
                | SqlType::MediumInt { unsigned: true }
                | SqlType::Int { unsigned: true }
                | SqlType::BigInt { unsigned: true }
                | SqlType::Decimal { unsigned: true, .. }
                | SqlType::Float { unsigned: true, .. }
                | SqlType::Double { unsigned: true, .. }
        )
    }

    /// Whether values are approximate numbers (FLOAT, DOUBLE).
    pub fn is_real(self) -> bool {
        matches!(self, SqlType::Float { .. } | SqlType::Double { .. })
    }

    /// The type made UNSIGNED (for a number type; others are returned as
    /// they are).
    pub fn with_unsigned(self) -> SqlType {
        match self {
            SqlType::TinyInt { .. } => SqlType::TinyInt { unsigned: true },
            SqlType::SmallInt { .. } => SqlType::SmallInt { unsigned: true },
            SqlType::MediumInt { .. } => SqlType::MediumInt { unsigned: true },
            SqlType::Int { .. } => SqlType::Int { unsigned: true },
            SqlType::BigInt { .. } => SqlType::BigInt { unsigned: true },
            SqlType::Decimal {
                precision, scale, ..
            } => SqlType::Decimal {
                precision,
                scale,
                unsigned: true,
            },
            SqlType::Float { digits, .. } => SqlType::Float {
                unsigned: true,
                digits,
            },
            SqlType::Double { digits, .. } => SqlType::Double {
                unsigned: true,
                digits,
            },
            other => other,
        }
    }

    /// A plain FLOAT (no UNSIGNED, no (M,D)).
    pub const FLOAT: SqlType = SqlType::Float {
        unsigned: false,
        digits: None,
    };

    /// A plain DOUBLE (no UNSIGNED, no (M,D)).
    pub const DOUBLE: SqlType = SqlType::Double {
        unsigned: false,
        digits: None,
    };

    /// Whether values are character or binary strings.
    pub fn is_string(self) -> bool {
        matches!(
            self,
            SqlType::Char(_)
                | SqlType::VarChar(_)
                | SqlType::Binary(_)
                | SqlType::VarBinary(_)
                | SqlType::Text(_)
                | SqlType::Blob(_)
                | SqlType::Enum(_)
                | SqlType::Set(_)
        )
    }

    /// The member list and kind of an ENUM or SET type.
    pub fn members(self) -> Option<(Kind, &'static Members)> {
        match self {
            SqlType::Enum(m) => Some((Kind::Enum, m)),
            SqlType::Set(m) => Some((Kind::Set, m)),
            _ => None,
        }
    }

    /// Whether the type holds binary (not character) strings.
    pub fn is_binary(self) -> bool {
        matches!(
            self,
            SqlType::Binary(_) | SqlType::VarBinary(_) | SqlType::Blob(_)
        )
    }

    /// The display width MySQL 5.7 and MariaDB print for an integer or YEAR
    /// column declared without one (`int(11)`, `tinyint(3) unsigned`).
    pub fn default_display_width(self) -> Option<u32> {
        Some(match self {
            SqlType::TinyInt { unsigned } => 4 - unsigned as u32,
            SqlType::SmallInt { unsigned } => 6 - unsigned as u32,
            SqlType::MediumInt { unsigned } => 9 - unsigned as u32,
            SqlType::Int { unsigned } => 11 - unsigned as u32,
            SqlType::BigInt { .. } => 20,
            SqlType::Year => 4,
            _ => return None,
        })
    }

    /// Integer range of the type.
    pub(crate) fn int_range(self) -> (i128, i128) {
        let (bits, unsigned) = match self {
            SqlType::TinyInt { unsigned } => (8, unsigned),
            SqlType::SmallInt { unsigned } => (16, unsigned),
            SqlType::MediumInt { unsigned } => (24, unsigned),
            SqlType::Int { unsigned } => (32, unsigned),
            SqlType::BigInt { unsigned } => (64, unsigned),
            _ => (64, false),
        };
        if unsigned {
            (0, (1i128 << bits) - 1)
        } else {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        }
    }

    /// The fractional-second precision of DATETIME, TIMESTAMP and TIME (0 for
    /// every other type).
    pub fn fsp(self) -> u8 {
        match self {
            SqlType::DateTime(f) | SqlType::Timestamp(f) | SqlType::Time(f) => f,
            _ => 0,
        }
    }

    /// `CURRENT_TIMESTAMP` as a DEFAULT or ON UPDATE of this type prints in
    /// SHOW CREATE TABLE and information_schema: with the column's fsp when
    /// it has one (`CURRENT_TIMESTAMP(3)`), as MySQL prints it.
    pub fn current_timestamp_name(self) -> String {
        with_fsp("CURRENT_TIMESTAMP", self.fsp())
    }

    /// The protocol type code, display length and decimals of the type.
    pub fn protocol(self) -> (ColumnType, u32, u8) {
        match self {
            SqlType::TinyInt { .. } => (ColumnType::Tiny, 4, 0),
            SqlType::SmallInt { .. } => (ColumnType::Short, 6, 0),
            SqlType::MediumInt { .. } => (ColumnType::Int24, 9, 0),
            SqlType::Int { .. } => (ColumnType::Long, 11, 0),
            SqlType::BigInt { .. } => (ColumnType::LongLong, 20, 0),
            SqlType::Float { digits, .. } => match digits {
                Some((m, d)) => (ColumnType::Float, m as u32 + 2, d),
                None => (ColumnType::Float, 12, 31),
            },
            SqlType::Double { digits, .. } => match digits {
                Some((m, d)) => (ColumnType::Double, m as u32 + 2, d),
                None => (ColumnType::Double, 22, 31),
            },
            SqlType::Decimal {
                precision, scale, ..
            } => (ColumnType::NewDecimal, precision as u32 + 2, scale),
            SqlType::Char(n) | SqlType::Binary(n) => (ColumnType::String, n * 4, 0),
            SqlType::VarChar(n) | SqlType::VarBinary(n) => (ColumnType::VarString, n * 4, 0),
            SqlType::Text(n) | SqlType::Blob(n) => (ColumnType::Blob, n, 0),
            SqlType::Date => (ColumnType::Date, 10, 0),
            // MySQL: length 19, plus the point and the digits when fsp > 0.
            SqlType::DateTime(f) => (ColumnType::DateTime, 19 + fsp_width(f), f),
            SqlType::Timestamp(f) => (ColumnType::Timestamp, 19 + fsp_width(f), f),
            SqlType::Bit(n) => (ColumnType::Bit, n as u32, 0),
            SqlType::Year => (ColumnType::Year, 4, 0),
            SqlType::Time(f) => (ColumnType::Time, 10 + fsp_width(f), f),
            // MySQL sends ENUM and SET as MYSQL_TYPE_STRING (with ENUM_FLAG /
            // SET_FLAG), their length the longest value in bytes.
            SqlType::Enum(m) => (ColumnType::String, m.max_chars(Kind::Enum) * 4, 0),
            SqlType::Set(m) => (ColumnType::String, m.max_chars(Kind::Set) * 4, 0),
            // MySQL: MYSQL_TYPE_JSON, 4 GiB - 1, charset binary, BLOB_FLAG.
            SqlType::Json => (ColumnType::Json, u32::MAX, 0),
        }
    }

    /// The type as SHOW COLUMNS / DESCRIBE print it (MySQL 8: no integer
    /// display widths).
    pub fn sql_name(self) -> String {
        self.sql_name_with(false)
    }

    /// The type as SHOW COLUMNS / DESCRIBE print it; with `display_widths`
    /// as MySQL 5.7 and MariaDB do (`int(11)`, `year(4)`).
    pub fn sql_name_with(self, display_widths: bool) -> String {
        self.sql_name_width(self.default_display_width().filter(|_| display_widths))
    }

    /// The type's name with display width `width` (integer types and YEAR
    /// only; others ignore it).
    pub fn sql_name_width(self, width: Option<u32>) -> String {
        let width = match width {
            Some(w) if self.default_display_width().is_some() => format!("({w})"),
            _ => String::new(),
        };
        let int = |n: &str, u: bool| {
            if u {
                format!("{n}{width} unsigned")
            } else {
                format!("{n}{width}")
            }
        };
        let real = |n: &str, u: bool, digits: Option<(u8, u8)>| {
            let d = digits.map_or(String::new(), |(m, d)| format!("({m},{d})"));
            if u {
                format!("{n}{d} unsigned")
            } else {
                format!("{n}{d}")
            }
        };
        match self {
            SqlType::TinyInt { unsigned } => int("tinyint", unsigned),
            SqlType::SmallInt { unsigned } => int("smallint", unsigned),
            SqlType::MediumInt { unsigned } => int("mediumint", unsigned),
            SqlType::Int { unsigned } => int("int", unsigned),
            SqlType::BigInt { unsigned } => int("bigint", unsigned),
            SqlType::Float { unsigned, digits } => real("float", unsigned, digits),
            SqlType::Double { unsigned, digits } => real("double", unsigned, digits),
            SqlType::Decimal {
                precision,
                scale,
                unsigned,
            } => real("decimal", unsigned, Some((precision, scale))),
            SqlType::Char(n) => format!("char({n})"),
            SqlType::VarChar(n) => format!("varchar({n})"),
            SqlType::Binary(n) => format!("binary({n})"),
            SqlType::VarBinary(n) => format!("varbinary({n})"),
            SqlType::Text(n) => match n {
                255 => "tinytext".into(),
                65535 => "text".into(),
                16777215 => "mediumtext".into(),
                _ => "longtext".into(),
            },
            SqlType::Blob(n) => match n {
                255 => "tinyblob".into(),
                65535 => "blob".into(),
                16777215 => "mediumblob".into(),
                _ => "longblob".into(),
            },
            SqlType::Date => "date".into(),
            SqlType::DateTime(f) => with_fsp("datetime", f),
            SqlType::Timestamp(f) => with_fsp("timestamp", f),
            SqlType::Bit(n) => format!("bit({n})"),
            SqlType::Year => format!("year{width}"),
            SqlType::Time(f) => with_fsp("time", f),
            SqlType::Enum(m) => m.sql_name(Kind::Enum),
            SqlType::Set(m) => m.sql_name(Kind::Set),
            SqlType::Json => "json".into(),
        }
    }
}

/// The largest fractional-second precision MySQL accepts (`DATETIME(6)`);
/// more is 1426 ER_TOO_BIG_PRECISION.
pub const MAX_FSP: u8 = 6;

/// The characters fsp fractional digits add to a temporal column's display
/// length: the point and the digits.
fn fsp_width(fsp: u8) -> u32 {
    if fsp == 0 {
        0
    } else {
        u32::from(fsp) + 1
    }
}

/// `datetime`, `datetime(3)`: the type name with its fsp when it has one.
fn with_fsp(name: &str, fsp: u8) -> String {
    if fsp == 0 {
        name.to_string()
    } else {
        format!("{name}({fsp})")
    }
}

/// Reads a catalog record's column type, accepting the form written before
/// temporal types carried their fractional-second precision: the bare names
/// `"DateTime"`, `"Timestamp"` and `"Time"` read as fsp 0. Zero is what
/// those columns showed and stored: SHOW CREATE TABLE printed `datetime`,
/// TIME values were rounded to whole seconds, and a DATETIME/TIMESTAMP value
/// that kept a fraction (they were not rounded then) still prints it, since
/// the protocol prints six digits for a nonzero fraction in an fsp-0 column.
/// Reading them as fsp 6 would instead add `.000000` to every value shown.
/// Likewise `"Float"` and `"Double"`, written before those types carried
/// UNSIGNED and (M,D), read as the plain types.
pub fn deserialize_compat<'de, D>(d: D) -> std::result::Result<SqlType, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let v = serde_json::Value::deserialize(d)?;
    match v.as_str() {
        Some("DateTime") => Ok(SqlType::DateTime(0)),
        Some("Timestamp") => Ok(SqlType::Timestamp(0)),
        Some("Time") => Ok(SqlType::Time(0)),
        Some("Float") => Ok(SqlType::FLOAT),
        Some("Double") => Ok(SqlType::DOUBLE),
        _ => SqlType::deserialize(v).map_err(serde::de::Error::custom),
    }
}

/// [`deserialize_compat`] for an optional type.
pub fn deserialize_compat_opt<'de, D>(d: D) -> std::result::Result<Option<SqlType>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    #[derive(Deserialize)]
    struct Compat(#[serde(deserialize_with = "deserialize_compat")] SqlType);
    Ok(Option::<Compat>::deserialize(d)?.map(|c| c.0))
}

/// Result-set metadata for a table column.
pub fn table_column(
    db: &str,
    table: &str,
    alias: &str,
    name: &str,
    ty: SqlType,
    extra_flags: u16,
) -> Column {
    let (column_type, length, decimals) = ty.protocol();
    let mut flags = extra_flags;
    if ty.is_unsigned() || matches!(ty, SqlType::Bit(_) | SqlType::Year) {
        flags |= column_flags::UNSIGNED;
    }
    if ty == SqlType::Year {
        flags |= column_flags::ZEROFILL | column_flags::NUM;
    }
    if ty.is_integer()
        || matches!(
            ty,
            SqlType::Decimal { .. } | SqlType::Double { .. } | SqlType::Float { .. }
        )
    {
        flags |= column_flags::NUM;
    }
    if matches!(ty, SqlType::Text(_) | SqlType::Blob(_) | SqlType::Json) {
        flags |= column_flags::BLOB;
    }
    match ty {
        SqlType::Enum(_) => flags |= column_flags::ENUM,
        SqlType::Set(_) => flags |= column_flags::SET,
        _ => {}
    }
    let cs = if ty.is_binary() {
        flags |= column_flags::BINARY;
        charset::BINARY
    } else if ty.is_string() {
        charset::UTF8MB4_GENERAL
    } else {
        charset::BINARY
    };
    Column {
        schema: db.to_string(),
        table: alias.to_string(),
        org_table: table.to_string(),
        name: name.to_string(),
        org_name: name.to_string(),
        charset: cs,
        length,
        column_type,
        // MySQL flags BIT columns UNSIGNED but not BINARY (Field_bit), and
        // Connector/J reads a BIT(1) column without BINARY_FLAG as a Boolean
        // (Debezium's snapshot relies on it); with the flag, as bytes.
        flags: if ty.is_string() || matches!(ty, SqlType::Bit(_)) {
            flags
        } else {
            flags | column_flags::BINARY
        },
        decimals,
    }
}

/// Metadata for a computed (expression) column of a given runtime kind.
pub fn expr_column(name: &str, kind: ExprKind) -> Column {
    let (column_type, length, decimals, cs, flags) = match kind {
        ExprKind::Int => (
            ColumnType::LongLong,
            21,
            0,
            charset::BINARY,
            column_flags::NUM | column_flags::BINARY,
        ),
        ExprKind::UInt => (
            ColumnType::LongLong,
            21,
            0,
            charset::BINARY,
            column_flags::NUM | column_flags::BINARY | column_flags::UNSIGNED,
        ),
        ExprKind::Double => (
            ColumnType::Double,
            23,
            31,
            charset::BINARY,
            column_flags::NUM | column_flags::BINARY,
        ),
        ExprKind::Decimal(scale) => (
            ColumnType::NewDecimal,
            67,
            scale,
            charset::BINARY,
            column_flags::NUM | column_flags::BINARY,
        ),
        ExprKind::String => (ColumnType::VarString, 1024, 31, charset::UTF8MB4_GENERAL, 0),
        ExprKind::Date => (
            ColumnType::Date,
            10,
            0,
            charset::BINARY,
            column_flags::BINARY,
        ),
        ExprKind::DateTime => (
            ColumnType::DateTime,
            19,
            0,
            charset::BINARY,
            column_flags::BINARY,
        ),
        ExprKind::Json => (
            ColumnType::Json,
            u32::MAX,
            0,
            charset::BINARY,
            column_flags::BLOB | column_flags::BINARY,
        ),
        ExprKind::Null => (
            ColumnType::Null,
            0,
            0,
            charset::BINARY,
            column_flags::BINARY,
        ),
    };
    Column {
        schema: String::new(),
        table: String::new(),
        org_table: String::new(),
        name: name.to_string(),
        org_name: String::new(),
        charset: cs,
        length,
        column_type,
        flags,
        decimals,
    }
}

/// The static kind of an expression's result, for result-set metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExprKind {
    /// BIGINT.
    Int,
    /// BIGINT UNSIGNED.
    UInt,
    /// DOUBLE.
    Double,
    /// DECIMAL with the given scale.
    Decimal(u8),
    /// VARCHAR.
    String,
    /// DATE.
    Date,
    /// DATETIME.
    DateTime,
    /// JSON.
    Json,
    /// The NULL literal.
    Null,
}

impl ExprKind {
    /// The kind a stored column of type `ty` evaluates to.
    pub fn of(ty: SqlType) -> ExprKind {
        match ty {
            t if t.is_integer() && t.is_unsigned() => ExprKind::UInt,
            t if t.is_integer() => ExprKind::Int,
            SqlType::Bit(_) | SqlType::Year => ExprKind::UInt,
            SqlType::Float { .. } | SqlType::Double { .. } => ExprKind::Double,
            SqlType::Decimal { scale, .. } => ExprKind::Decimal(scale),
            SqlType::Date => ExprKind::Date,
            SqlType::DateTime(_) | SqlType::Timestamp(_) => ExprKind::DateTime,
            SqlType::Json => ExprKind::Json,
            _ => ExprKind::String,
        }
    }

    /// The kind of a runtime value.
    pub fn of_value(v: &Value) -> ExprKind {
        match v {
            Value::Null => ExprKind::Null,
            Value::Int(_) => ExprKind::Int,
            Value::UInt(_) => ExprKind::UInt,
            Value::Double(_) => ExprKind::Double,
            Value::Decimal(d) => ExprKind::Decimal(d.scale() as u8),
            Value::Bytes(_) => ExprKind::String,
            Value::Date(_) => ExprKind::Date,
            Value::DateTime(_) | Value::Stamp(_) => ExprKind::DateTime,
            Value::Json(_) => ExprKind::Json,
        }
    }
}

/// A character column holds UTF-8 (every character set Canyon accepts is
/// stored as UTF-8, and collations weigh characters): other bytes are MySQL's
/// 1366, quoting the bytes from the first bad one as MySQL does.
fn check_utf8(b: &[u8], column: &str, row: u64) -> Result<()> {
    if let Err(e) = std::str::from_utf8(b) {
        let bad = &b[e.valid_up_to()..];
        let value: String = bad.iter().take(6).map(|x| format!("\\x{x:02X}")).collect();
        return Err(Error::IncorrectValue {
            type_name: "string".into(),
            value: if bad.len() > 6 {
                format!("{value}...")
            } else {
                value
            },
            column: column.to_string(),
            row,
        });
    }
    Ok(())
}

/// The largest magnitude a FLOAT(M,D) / DOUBLE(M,D) holds: 10^(M-D) - 10^-D
/// (999.99 for (5,2)).
fn real_max(m: u8, d: u8, float: bool) -> f64 {
    let by_digits = 10f64.powi(m as i32 - d as i32) - 10f64.powi(-(d as i32));
    // A FLOAT(M,D) is still a single-precision number: FLOAT(53,0) holds
    // no more than FLT_MAX (MySQL's truncate_double takes the smaller).
    if float {
        by_digits.min(f64::from(f32::MAX))
    } else {
        by_digits
    }
}

/// What `v` becomes in a DECIMAL column of scale `scale` when that drops
/// nonzero fractional digits (`1.235` into DECIMAL(5,2): 1.24), read as
/// [`coerce`] reads it; `None` when the value keeps all its digits
/// (`'1.20000'` does) or is no number. MySQL stores such a value rounded
/// with note 1265 "Data truncated", which strict mode leaves a note; the
/// caller compares with what was stored, so that a value clipped to the
/// column's range has only its warning 1264.
pub fn decimal_rounding(v: &Value, scale: u8) -> Option<Decimal> {
    let scale = u32::from(scale);
    let d = match v {
        Value::Decimal(d) => *d,
        Value::Double(f) => Decimal::try_from(*f).ok()?,
        Value::Bytes(b) => {
            // Read from the text: '1e-4294967296' has a digit far below
            // any scale, which its value (0 once parsed) no longer shows.
            let s = std::str::from_utf8(b).ok()?.trim();
            if !digits_below(s, scale)? {
                return None;
            }
            Decimal::from_str_exact(s)
                .ok()
                .or_else(|| Decimal::try_from(s.parse::<f64>().ok()?).ok())?
        }
        _ => return None,
    };
    if !matches!(v, Value::Bytes(_)) && d.normalize().scale() <= scale {
        return None;
    }
    let mut r = d.round_dp_with_strategy(scale, RoundingStrategy::MidpointAwayFromZero);
    r.rescale(scale);
    Some(r)
}

/// Whether number text (`-12.50`, `.5`, `1e-3`) has a nonzero digit below
/// 10^-`scale`; `None` for text that is no number.
fn digits_below(s: &str, scale: u32) -> Option<bool> {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (mantissa, exp) = match s.find(['e', 'E']) {
        // An exponent past 64 bits is no number MariaDB reads digit by
        // digit: '1e-9223372036854775809' stores 0 without the note.
        Some(i) => (&s[..i], i128::from(s[i + 1..].parse::<i64>().ok()?)),
        None => (s, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: Vec<u8> = int.bytes().chain(frac.bytes()).collect();
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // The place (power of ten) of the last nonzero digit.
    Some(
        digits
            .iter()
            .rposition(|&c| c != b'0')
            .is_some_and(|p| int.len() as i128 - 1 - p as i128 + exp < -i128::from(scale)),
    )
}

/// [`coerce`], except that a number out of the column's range is clipped to
/// the nearest end of it with warning 1264, as MySQL stores it outside
/// strict mode or under IGNORE (the caller's `warn` records the warning;
/// in strict mode the session turns it into the statement's error).
pub fn coerce_or_clip(
    v: Value,
    ty: SqlType,
    column: &str,
    row: u64,
    warn: &dyn Fn(u16, &str),
) -> Result<Value> {
    let negative = match &v {
        Value::Int(i) => *i < 0,
        Value::Double(d) => *d < 0.0,
        Value::Decimal(d) => d.is_sign_negative(),
        Value::Bytes(b) => b.trim_ascii_start().first() == Some(&b'-'),
        _ => false,
    };
    // A string too long for the column is cut, so its bytes are kept for
    // that; only when it can be too long (more bytes than the column's
    // characters), which an ordinary value is not.
    let long = match (&v, ty) {
        (
            Value::Bytes(b),
            SqlType::Char(n)
            | SqlType::VarChar(n)
            | SqlType::Binary(n)
            | SqlType::VarBinary(n)
            | SqlType::Text(n)
            | SqlType::Blob(n),
        ) if b.len() > n as usize => Some(b.clone()),
        _ => None,
    };
    // A string past a double's range ('1e+1000') into a FLOAT / DOUBLE:
    // MySQL's and MariaDB's Field_float / Field_double::store(const char *)
    // warn 1264 for the text, then once more for the value clipped.
    let text_overflow = ty.is_real()
        && matches!(&v, Value::Bytes(b) if std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .is_some_and(f64::is_infinite));
    // A TIME is read again when it is not exact (see the arm below).
    let time_in = matches!(ty, SqlType::Time(_)).then(|| v.clone());
    match coerce(v, ty, column, row) {
        Err(Error::DataTooLong { column, row }) if matches!(ty, SqlType::Bit(_)) => {
            // Too many bits (a negative number has 64): all ones. Strict
            // mode's error is 1406, as MySQL's; outside it (and under
            // IGNORE) the warning is 1264: the text tells the session's
            // `warn` which to show.
            let SqlType::Bit(n) = ty else { unreachable!() };
            let ones = u64::MAX >> (64 - u32::from(n.clamp(1, 64)));
            warn(
                1406,
                &format!("Out of range value for column '{column}' at row {row}"),
            );
            Ok(Value::UInt(ones))
        }
        Err(Error::DataTooLong { column, row }) if long.is_some() => {
            let text = long.unwrap_or_default();
            let cut = match ty {
                SqlType::Char(n) | SqlType::VarChar(n) => {
                    let end = std::str::from_utf8(&text)
                        .ok()
                        .and_then(|s| s.char_indices().nth(n as usize).map(|(i, _)| i))
                        .unwrap_or(text.len().min(n as usize));
                    text[..end].to_vec()
                }
                SqlType::Text(n) => {
                    // At a character boundary: TEXT holds characters.
                    let mut end = text.len().min(n as usize);
                    while end > 0 && end < text.len() && (text[end] & 0xC0) == 0x80 {
                        end -= 1;
                    }
                    text[..end].to_vec()
                }
                SqlType::Binary(n) | SqlType::VarBinary(n) | SqlType::Blob(n) => {
                    text[..text.len().min(n as usize)].to_vec()
                }
                _ => return Err(Error::DataTooLong { column, row }),
            };
            let v = coerce(Value::Bytes(cut), ty, &column, row)?;
            // 1406 for strict mode's error; the session shows it as the
            // warning MySQL gives outside strict mode (1265).
            warn(
                1406,
                &format!("Data too long for column '{column}' at row {row}"),
            );
            Ok(v)
        }
        Err(Error::IncorrectValue {
            type_name, value, ..
        }) if ty.is_integer()
            || matches!(
                ty,
                SqlType::Decimal { .. }
                    | SqlType::Float { .. }
                    | SqlType::Double { .. }
                    | SqlType::Year
            ) =>
        {
            // YEAR reads a string as an integer (MySQL's message says so).
            let type_name = if ty == SqlType::Year {
                "integer".to_string()
            } else {
                type_name
            };
            // Field_num::store: the longest numeric prefix (0 without one),
            // then the column's range.
            let prefix = numeric_prefix(&value);
            if !prefix.is_empty() && prefix == value.trim() {
                // The whole value is the number the column refused: trying
                // it again would recurse without end.
                return Err(Error::IncorrectValue {
                    type_name,
                    value,
                    column: column.to_string(),
                    row,
                });
            }
            // No prefix is the number 0 (for YEAR the year 0000, where the
            // string '0' would be 2000).
            let n = if prefix.is_empty() {
                Value::Int(0)
            } else {
                Value::str(prefix)
            };
            let v = coerce_or_clip(n, ty, column, row, warn)?;
            if prefix.is_empty() {
                warn(
                    1366,
                    &format!(
                        "Incorrect {type_name} value: '{value}' for column '{column}' at row {row}"
                    ),
                );
            } else {
                warn(
                    1265,
                    &format!("Data truncated for column '{column}' at row {row}"),
                );
            }
            Ok(v)
        }
        Err(Error::OutOfRange { column, row }) => {
            let clipped = if ty.is_integer() {
                let (lo, hi) = ty.int_range();
                let n = if negative { lo } else { hi };
                if ty.is_unsigned() {
                    Value::UInt(n as u64)
                } else {
                    Value::Int(n as i64)
                }
            } else if let SqlType::Decimal {
                precision,
                scale,
                unsigned,
            } = ty
            {
                if negative && unsigned {
                    Value::Decimal(Decimal::new(0, scale as u32))
                } else {
                    // 99.99 for DECIMAL(4,2).
                    let max = Decimal::max_of(precision as u32, scale as u32);
                    Value::Decimal(if negative { -max } else { max })
                }
            } else if let SqlType::Float { unsigned, digits }
            | SqlType::Double { unsigned, digits } = ty
            {
                match (negative && unsigned, digits) {
                    (true, _) => Value::Double(0.0),
                    (false, Some((m, d))) => {
                        let max = real_max(m, d, matches!(ty, SqlType::Float { .. }));
                        let max = if matches!(ty, SqlType::Float { .. }) {
                            // Single precision, as every FLOAT value.
                            f64::from(max as f32)
                        } else {
                            max
                        };
                        Value::Double(if negative { -max } else { max })
                    }
                    // The type's largest magnitude (FLT_MAX, DBL_MAX).
                    (false, None) => {
                        let max = if matches!(ty, SqlType::Float { .. }) {
                            f64::from(f32::MAX)
                        } else {
                            f64::MAX
                        };
                        Value::Double(if negative { -max } else { max })
                    }
                }
            } else if ty == SqlType::Year {
                // A year out of range is the year 0000 (MySQL's and
                // MariaDB's `Field_year::store`), not an end of the range.
                Value::UInt(0)
            } else {
                return Err(Error::OutOfRange { column, row });
            };
            let message = format!("Out of range value for column '{column}' at row {row}");
            if text_overflow {
                warn(1264, &message);
            }
            // The text read as ±DBL_MAX is then stored: a plain DOUBLE holds
            // it without a second warning (unless it is negative and the
            // column UNSIGNED); FLOAT and DOUBLE(M,D) clip it again.
            let holds_dbl_max = matches!(ty, SqlType::Double { digits: None, .. })
                && !(negative && ty.is_unsigned());
            if !(text_overflow && holds_dbl_max) {
                warn(1264, &message);
            }
            Ok(clipped)
        }
        // The zero date where NO_ZERO_DATE is set: stored with warning 1292,
        // which strict mode turns into the statement's error (see
        // `crate::types::datetime`'s module doc).
        Ok(v)
            if v.is_zero_date()
                && crate::types::datetime::zero_dates()
                    != crate::types::datetime::ZeroDates::Allowed =>
        {
            let (type_name, text) = zero_text(ty);
            warn(
                1292,
                &format!(
                    "Incorrect {type_name} value: '{text}' for column '{column}' at row {row}"
                ),
            );
            Ok(v)
        }
        // A TIME that is not exact: outside strict mode (or under IGNORE)
        // MySQL stores what it could read, within ±838:59:59, with warning
        // 1264 past the range, or for text it cut or could not read 1292
        // "Incorrect time value", strict mode's error, shown as 1265 "Data
        // truncated" (the session's `stored_date_warning`).
        Err(Error::IncorrectValue { value, .. }) if time_in.is_some() => {
            use crate::types::datetime::{format_time_fsp, TimeFit};
            let SqlType::Time(fsp) = ty else {
                unreachable!("time_in is set for TIME columns only")
            };
            let (micros, fit) = time_to_store(&time_in.unwrap_or(Value::Null), fsp);
            match fit {
                TimeFit::Exact => {}
                TimeFit::OutOfRange => warn(
                    1264,
                    &format!("Out of range value for column '{column}' at row {row}"),
                ),
                TimeFit::Truncated => warn(
                    1292,
                    &format!("Incorrect time value: '{value}' for column '{column}' at row {row}"),
                ),
            }
            Ok(Value::str(&format_time_fsp(micros, fsp)))
        }
        // A string that is no date: outside strict mode (or under IGNORE)
        // MySQL stores the zero date, with the warning strict mode would
        // have made the error.
        Err(Error::IncorrectValue {
            type_name, value, ..
        }) if matches!(
            ty,
            SqlType::Date | SqlType::DateTime(_) | SqlType::Timestamp(_)
        ) =>
        {
            warn(
                1292,
                &format!(
                    "Incorrect {type_name} value: '{value}' for column '{column}' at row {row}"
                ),
            );
            Ok(match ty {
                SqlType::Date => Value::Date(crate::types::datetime::ZERO_DATE),
                _ => Value::DateTime(crate::types::datetime::ZERO_DATETIME),
            })
        }
        other => other,
    }
}

/// The time a TIME(fsp) column stores for `v`, rounded to fsp and clamped
/// to ±838:59:59, and how it fit (see [`crate::types::datetime::TimeFit`]).
pub(crate) fn time_to_store(v: &Value, fsp: u8) -> (i64, crate::types::datetime::TimeFit) {
    use crate::types::datetime::{self as dt, TimeFit};
    let (micros, fit) = match v {
        Value::DateTime(t) | Value::Stamp(crate::types::value::Stamp { local: t, .. }) => {
            (dt::time_of_day_micros(t), TimeFit::Exact)
        }
        Value::Date(_) => (0, TimeFit::Exact),
        Value::Int(i) => dt::store_time_number(*i < 0, Some(i.unsigned_abs()), 0),
        Value::UInt(u) => dt::store_time_number(false, Some(*u), 0),
        Value::Decimal(d) => {
            let abs = d.abs();
            let frac = (abs.fract() * Decimal::from(1_000_000i64))
                .round()
                .to_i64()
                .unwrap_or(0);
            dt::store_time_number(d.is_sign_negative(), abs.trunc().to_u64(), frac)
        }
        Value::Double(f) => {
            let abs = f.abs();
            let int = abs.trunc();
            let frac = ((abs - int) * 1e6).round() as i64;
            let int = (int < u64::MAX as f64).then_some(int as u64);
            dt::store_time_number(*f < 0.0, int, frac)
        }
        Value::Bytes(b) => dt::store_time_text(b),
        other => dt::store_time_text(other.to_display().as_bytes()),
    };
    // Rounded to the column's fsp (TIME_TRUNCATE_FRACTIONAL truncates),
    // then within MySQL's range.
    dt::clamp_time(dt::round_micros(micros, fsp), fit)
}

/// An integer read as a date (`YYYYMMDD`, `YYYYMMDDHHMMSS`, 0 the zero date).
fn number_temporal(v: &Value) -> Option<chrono::NaiveDateTime> {
    let n = match v {
        Value::Int(i) => *i,
        Value::UInt(u) => i64::try_from(*u).ok()?,
        _ => return None,
    };
    crate::types::datetime::parse_temporal_number(n).map(|t| t.dt)
}

/// The type name and text of the zero date in a column of type `ty`, as
/// MySQL's warning 1292 words them.
fn zero_text(ty: SqlType) -> (&'static str, &'static str) {
    match ty {
        SqlType::Date => ("date", "0000-00-00"),
        _ => ("datetime", "0000-00-00 00:00:00"),
    }
}

/// The longest prefix of `s` that reads as a number (after leading spaces).
pub fn numeric_prefix(s: &str) -> &str {
    let t = s.trim_start();
    let b = t.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    if i == digits_start || (i == digits_start + 1 && b[digits_start] == b'.') {
        return "";
    }
    let mantissa = i;
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let exp = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > exp {
            i = j;
        } else {
            i = mantissa;
        }
    }
    &t[..i]
}

/// Converts `v` into a value of column type `ty` as an INSERT or UPDATE stores it,
/// with strict-mode errors (1264 out of range, 1406 too long, 1366 bad value).
/// NULL passes through; the caller checks NOT NULL.
pub fn coerce(v: Value, ty: SqlType, column: &str, row: u64) -> Result<Value> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    // A TIMESTAMP value into a TIMESTAMP column keeps its instant (rounded to
    // the column's fsp); into anything else it is its session-local reading.
    let v = match (v, ty) {
        (Value::Stamp(s), SqlType::Timestamp(fsp)) => {
            return crate::types::datetime::round_datetime(s.utc, fsp)
                .map(|utc| {
                    Value::Stamp(crate::types::value::Stamp {
                        utc,
                        local: s.local + (utc - s.utc),
                    })
                })
                .ok_or_else(|| Error::IncorrectValue {
                    type_name: "datetime".to_string(),
                    value: crate::types::value::format_datetime(&s.local),
                    column: column.to_string(),
                    row,
                });
        }
        (v, _) => v.local(),
    };
    let out_of_range = || Error::OutOfRange {
        column: column.to_string(),
        row,
    };
    let incorrect = |type_name: &str, v: &Value| Error::IncorrectValue {
        type_name: type_name.to_string(),
        value: v.to_display(),
        column: column.to_string(),
        row,
    };
    match ty {
        // MySQL keeps a negative DECIMAL's sign through the rounding, so -0.3
        // for an UNSIGNED column is out of range (1264), not 0. (A DOUBLE is
        // rint()-ed first: -0.3e0 stores 0.)
        t if t.is_integer()
            && t.is_unsigned()
            && matches!(&v, Value::Decimal(d) if d.is_sign_negative() && !d.is_zero()) =>
        {
            Err(out_of_range())
        }
        t if t.is_integer() => {
            let n: i128 = match &v {
                Value::Int(i) => *i as i128,
                Value::UInt(u) => *u as i128,
                Value::Double(d) => {
                    if !d.is_finite() {
                        return Err(out_of_range());
                    }
                    // MySQL's Field_long::store(double): rint(), half to even
                    // (2.5 is stored as 2, 3.5 as 4).
                    d.round_ties_even() as i128
                }
                Value::Decimal(d) => d
                    .round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero)
                    .to_i128()
                    .ok_or_else(out_of_range)?,
                Value::Bytes(b) => {
                    let s = std::str::from_utf8(b)
                        .map_err(|_| incorrect("integer", &v))?
                        .trim();
                    if let Ok(i) = s.parse::<i128>() {
                        i
                    } else if let Ok(d) = Decimal::from_str_exact(s) {
                        d.round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero)
                            .to_i128()
                            .ok_or_else(out_of_range)?
                    } else if let Ok(f) = s.parse::<f64>() {
                        f.round() as i128
                    } else {
                        return Err(incorrect("integer", &v));
                    }
                }
                Value::Date(_) | Value::DateTime(_) | Value::Stamp(_) | Value::Json(_) => {
                    v.to_i64().unwrap_or(0) as i128
                }
                Value::Null => unreachable!("NULL handled above"),
            };
            let (lo, hi) = t.int_range();
            if n < lo || n > hi {
                return Err(out_of_range());
            }
            Ok(if t.is_unsigned() {
                Value::UInt(n as u64)
            } else {
                Value::Int(n as i64)
            })
        }
        SqlType::Float { unsigned, digits } | SqlType::Double { unsigned, digits } => {
            let mut f = match &v {
                Value::Bytes(b) => {
                    let s = std::str::from_utf8(b).map_err(|_| incorrect("double", &v))?;
                    s.trim()
                        .parse::<f64>()
                        .map_err(|_| incorrect("double", &v))?
                }
                other => other.to_f64().unwrap_or(0.0),
            };
            // Field_real::truncate: a negative value into UNSIGNED is out
            // of range before any rounding (-0.1 into FLOAT(10,0) UNSIGNED).
            if unsigned && f < 0.0 {
                return Err(out_of_range());
            }
            // Without (M,D) the range is the type's own: FLT_MAX for a
            // FLOAT, a finite number for a DOUBLE ('1e+1000' is out of it).
            let past_type = match ty {
                SqlType::Float { .. } => f.abs() > f64::from(f32::MAX),
                _ => f.is_infinite(),
            };
            if digits.is_none() && past_type {
                return Err(out_of_range());
            }
            if let Some((m, d)) = digits {
                // MySQL's Field_real::truncate_double: rounded to D decimals
                // (half away from zero), then at most 10^(M-D) - 10^-D.
                let p = 10f64.powi(d as i32);
                f = (f * p).round() / p;
                if f.abs() > real_max(m, d, matches!(ty, SqlType::Float { .. })) {
                    return Err(out_of_range());
                }
            }
            if unsigned && f < 0.0 {
                return Err(out_of_range());
            }
            // A FLOAT holds a single-precision number (after the range
            // check, as MySQL's Field_float::store: 99999.99999 fits a
            // FLOAT(10,5) and reads back as 100000.00000).
            if matches!(ty, SqlType::Float { .. }) && f.is_finite() {
                f = f64::from(f as f32);
            }
            Ok(Value::Double(f))
        }
        SqlType::Decimal {
            precision,
            scale,
            unsigned,
        } => {
            let d = match &v {
                Value::Bytes(b) => {
                    let s = std::str::from_utf8(b).map_err(|_| incorrect("decimal", &v))?;
                    Decimal::from_str_exact(s.trim()).or_else(|_| {
                        match s.trim().parse::<f64>() {
                            // A number past 65 integer digits ('1e100').
                            Ok(f) if f.is_finite() => {
                                Decimal::try_from(f).map_err(|_| out_of_range())
                            }
                            // Past a double too ('1e+1000'): out of range,
                            // clipped outside strict mode as MySQL does.
                            Ok(f) if f.is_infinite() => Err(out_of_range()),
                            _ => Err(incorrect("decimal", &v)),
                        }
                    })?
                }
                Value::Double(f) => Decimal::try_from(*f).map_err(|_| out_of_range())?,
                other => other.to_decimal().ok_or_else(out_of_range)?,
            };
            // The sign is checked before the rounding: -0.1 into DECIMAL(10,0)
            // UNSIGNED is out of range (1264), not 0 (MySQL, MariaDB).
            if unsigned && d.is_sign_negative() && !d.is_zero() {
                return Err(out_of_range());
            }
            let mut d =
                d.round_dp_with_strategy(scale as u32, RoundingStrategy::MidpointAwayFromZero);
            d.rescale(scale as u32);
            if d.abs() > Decimal::max_of(precision as u32, scale as u32) {
                return Err(out_of_range());
            }
            if unsigned && d.is_sign_negative() && !d.is_zero() {
                return Err(out_of_range());
            }
            Ok(Value::Decimal(d))
        }
        SqlType::Char(n) | SqlType::VarChar(n) => {
            let mut b = v.to_bytes().unwrap_or_default();
            check_utf8(&b, column, row)?;
            if matches!(ty, SqlType::Char(_)) {
                while b.last() == Some(&b' ') {
                    b.pop();
                }
            }
            let chars = std::str::from_utf8(&b)
                .map(|s| s.chars().count())
                .unwrap_or(b.len());
            if chars > n as usize {
                return Err(Error::DataTooLong {
                    column: column.to_string(),
                    row,
                });
            }
            Ok(Value::Bytes(b))
        }
        SqlType::Binary(n) | SqlType::VarBinary(n) | SqlType::Text(n) | SqlType::Blob(n) => {
            let mut b = v.to_bytes().unwrap_or_default();
            if matches!(ty, SqlType::Text(_)) {
                check_utf8(&b, column, row)?;
            }
            if b.len() > n as usize {
                return Err(Error::DataTooLong {
                    column: column.to_string(),
                    row,
                });
            }
            // MySQL right-pads a BINARY(n) value with 0x00 to n bytes (and
            // keeps the padding on read, unlike CHAR's spaces).
            if matches!(ty, SqlType::Binary(_)) {
                b.resize(n as usize, 0);
            }
            Ok(Value::Bytes(b))
        }
        SqlType::Date => match v {
            Value::Date(_) => Ok(v),
            Value::DateTime(dt) => Ok(Value::Date(dt.date())),
            Value::Bytes(ref b) => match parse_datetime_bytes(b) {
                Some(Value::DateTime(dt)) => Ok(Value::Date(dt.date())),
                Some(d) => Ok(d),
                None => Err(incorrect("date", &v)),
            },
            // A number is YYYYMMDD[HHMMSS] (0 the zero date), as MySQL reads it.
            Value::Int(_) | Value::UInt(_) => match number_temporal(&v) {
                Some(dt) => Ok(Value::Date(dt.date())),
                None => Err(incorrect("date", &v)),
            },
            other => Err(incorrect("date", &other)),
        },
        SqlType::DateTime(fsp) | SqlType::Timestamp(fsp) => {
            let dt = match v {
                Value::DateTime(dt) => dt,
                Value::Date(d) => d.and_time(chrono::NaiveTime::MIN),
                Value::Bytes(ref b) => match parse_datetime_bytes(b) {
                    Some(Value::Date(d)) => d.and_time(chrono::NaiveTime::MIN),
                    Some(Value::DateTime(dt)) => dt,
                    _ => return Err(incorrect("datetime", &v)),
                },
                Value::Int(_) | Value::UInt(_) => {
                    number_temporal(&v).ok_or_else(|| incorrect("datetime", &v))?
                }
                other => return Err(incorrect("datetime", &other)),
            };
            // MySQL 8 rounds to the column's fsp (TIME_TRUNCATE_FRACTIONAL
            // truncates); a carry past 9999-12-31 is out of range.
            crate::types::datetime::round_datetime(dt, fsp)
                .map(Value::DateTime)
                .ok_or_else(|| incorrect("datetime", &Value::DateTime(dt)))
        }
        SqlType::Bit(n) => {
            // A string is a bit string: its bytes, big-endian (b'101',
            // x'05' and '\x05' all store 5). Numbers store their value.
            let bits: u64 = match &v {
                Value::Bytes(b) => {
                    let b = match b.iter().position(|x| *x != 0) {
                        Some(i) => &b[i..],
                        None => &[][..],
                    };
                    if b.len() > 8 {
                        return Err(Error::DataTooLong {
                            column: column.to_string(),
                            row,
                        });
                    }
                    b.iter().fold(0, |acc, x| acc << 8 | u64::from(*x))
                }
                // A negative integer is its 64-bit two's complement, as
                // MySQL's Field_bit::store stores it: -1 fills BIT(64), and
                // is too long (1406) for a narrower column.
                Value::Int(i) if *i < 0 => *i as u64,
                other => match other.to_decimal() {
                    Some(d) => d
                        .round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero)
                        .to_u64()
                        .ok_or_else(out_of_range)?,
                    None => return Err(incorrect("bit", other)),
                },
            };
            if n < 64 && bits >> n != 0 {
                return Err(Error::DataTooLong {
                    column: column.to_string(),
                    row,
                });
            }
            Ok(Value::UInt(bits))
        }
        SqlType::Year => {
            // MySQL: the number 0 is year 0000, the string '0' or '00' is 2000.
            let (n, from_text) = match &v {
                Value::Bytes(b) => {
                    let s = std::str::from_utf8(b)
                        .map_err(|_| incorrect("year", &v))?
                        .trim();
                    let n = s
                        .parse::<i64>()
                        .or_else(|_| s.parse::<f64>().map(|f| f.round() as i64))
                        .map_err(|_| incorrect("year", &v))?;
                    (n, true)
                }
                // The zero date's year (-1 as held) is 0.
                Value::Date(d) => (chrono::Datelike::year(d).max(0) as i64, false),
                Value::DateTime(dt) => (chrono::Datelike::year(dt).max(0) as i64, false),
                other => (
                    other
                        .to_decimal()
                        .and_then(|d| d.round().to_i64())
                        .ok_or_else(out_of_range)?,
                    false,
                ),
            };
            let year = match n {
                0 if !from_text => 0,
                0..=69 => 2000 + n,
                70..=99 => 1900 + n,
                1901..=2155 => n,
                _ => return Err(out_of_range()),
            };
            Ok(Value::UInt(year as u64))
        }
        SqlType::Time(fsp) => {
            // Strict: anything but an exact time in range is refused (the
            // value stored otherwise is `coerce_or_clip`'s).
            match time_to_store(&v, fsp) {
                (micros, crate::types::datetime::TimeFit::Exact) => Ok(Value::str(
                    &crate::types::datetime::format_time_fsp(micros, fsp),
                )),
                _ => Err(incorrect("time", &v)),
            }
        }
        // A bad value is 1265 here; where a statement may keep it as a
        // warning (non-strict mode, INSERT IGNORE) the caller uses
        // `Members::store_enum` / `store_set` itself (`coerce_member`).
        SqlType::Json => coerce_json(v, column),
        SqlType::Enum(_) | SqlType::Set(_) => match coerce_member(v, ty) {
            (v, false) => Ok(v),
            (_, true) => Err(enumset::truncated(column, row)),
        },
        _ => Ok(v),
    }
}

/// A value stored into a JSON column: a JSON value as it is, a string
/// parsed (3140 when it is no JSON text), anything else refused as MySQL
/// refuses it ("not a JSON text, may need CAST").
fn coerce_json(v: Value, column: &str) -> Result<Value> {
    match v {
        Value::Null | Value::Json(_) => Ok(v),
        Value::Bytes(b) => match json::parse(&b) {
            Ok(n) => Ok(Value::Json(n.encode())),
            Err(e) => Err(json::invalid_text_for_column(e.message, e.pos, column)),
        },
        _ => Err(json::invalid_text_for_column(
            "not a JSON text, may need CAST",
            0,
            column,
        )),
    }
}

/// Converts `v` for an ENUM or SET column of type `ty`: the canonical
/// text, and whether the value was bad (1265: the text is then the error
/// value `''`, or a SET's members that matched). Other types pass through.
pub fn coerce_member(v: Value, ty: SqlType) -> (Value, bool) {
    match ty {
        SqlType::Enum(m) => m.store_enum(&v),
        SqlType::Set(m) => m.store_set(&v),
        _ => (v, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_integer_ranges() {
        let t = SqlType::TinyInt { unsigned: false };
        assert_eq!(coerce(Value::Int(127), t, "c", 1), Ok(Value::Int(127)));
        assert!(matches!(
            coerce(Value::Int(128), t, "c", 1),
            Err(Error::OutOfRange { .. })
        ));
        let u = SqlType::Int { unsigned: true };
        assert!(matches!(
            coerce(Value::Int(-1), u, "c", 1),
            Err(Error::OutOfRange { .. })
        ));
        assert_eq!(coerce(Value::str(" 42 "), u, "c", 1), Ok(Value::UInt(42)));
        assert!(matches!(
            coerce(Value::str("x1"), u, "c", 1),
            Err(Error::IncorrectValue { .. })
        ));
    }

    #[test]
    fn strings_and_decimals() {
        assert!(matches!(
            coerce(Value::str("abcd"), SqlType::VarChar(3), "c", 2),
            Err(Error::DataTooLong { row: 2, .. })
        ));
        assert!(matches!(
            coerce(Value::Bytes(b"ok\xF0\x9F".to_vec()), SqlType::VarChar(9), "c", 3),
            Err(Error::IncorrectValue { ref value, row: 3, .. }) if value == "\\xF0\\x9F"
        ));
        assert!(matches!(
            coerce(
                Value::Bytes(b"\xFF".to_vec()),
                SqlType::VarBinary(9),
                "c",
                1
            ),
            Ok(Value::Bytes(_))
        ));
        assert_eq!(
            coerce(Value::str("ab  "), SqlType::Char(3), "c", 1),
            Ok(Value::str("ab"))
        );
        let d = SqlType::Decimal {
            precision: 5,
            scale: 2,
            unsigned: false,
        };
        assert_eq!(
            coerce(Value::str("1.005"), d, "c", 1),
            Ok(Value::Decimal(Decimal::new(101, 2)))
        );
        assert!(matches!(
            coerce(Value::Int(1000), d, "c", 1),
            Err(Error::OutOfRange { .. })
        ));
    }
}

#[cfg(test)]
mod fsp_tests {
    use super::*;

    /// A catalog record written before temporal types carried their fsp
    /// names them bare; it reads as fsp 0, and the new form round-trips.
    #[test]
    fn old_catalog_records_read_as_fsp_zero() {
        #[derive(Deserialize)]
        struct Col {
            #[serde(deserialize_with = "deserialize_compat")]
            ty: SqlType,
        }
        let read = |json: &str| serde_json::from_str::<Col>(json).expect("reads").ty;
        assert_eq!(read(r#"{"ty":"DateTime"}"#), SqlType::DateTime(0));
        assert_eq!(read(r#"{"ty":"Timestamp"}"#), SqlType::Timestamp(0));
        assert_eq!(read(r#"{"ty":"Time"}"#), SqlType::Time(0));
        assert_eq!(read(r#"{"ty":"Date"}"#), SqlType::Date);
        assert_eq!(
            read(r#"{"ty":{"Int":{"unsigned":true}}}"#),
            SqlType::Int { unsigned: true }
        );
        for ty in [
            SqlType::DateTime(3),
            SqlType::Timestamp(6),
            SqlType::Time(2),
        ] {
            let json = format!(
                r#"{{"ty":{}}}"#,
                serde_json::to_string(&ty).expect("writes")
            );
            assert_eq!(read(&json), ty);
        }
    }

    #[test]
    fn values_round_to_the_column_fsp() {
        let dt = |s: &str| {
            coerce(Value::str(s), SqlType::DateTime(3), "c", 1)
                .expect("valid")
                .to_display()
        };
        assert_eq!(dt("2020-12-31 23:59:59.9995"), "2021-01-01 00:00:00");
        assert_eq!(dt("2020-12-31 23:59:59.9994"), "2020-12-31 23:59:59.999000");
        let time = |s: &str, fsp: u8| {
            coerce(Value::str(s), SqlType::Time(fsp), "c", 1)
                .expect("valid")
                .to_display()
        };
        assert_eq!(time("-00:00:00.5", 0), "-00:00:01");
        assert_eq!(time("-00:00:00.25", 1), "-00:00:00.3");
        assert_eq!(time("838:59:59.4", 0), "838:59:59");
        assert!(coerce(Value::str("838:59:59.5"), SqlType::Time(0), "c", 1).is_err());
        crate::types::datetime::set_truncate_fractional(true);
        assert_eq!(time("-00:00:00.99", 1), "-00:00:00.9");
        assert_eq!(
            dt("2020-12-31 23:59:59.9999999"),
            "2020-12-31 23:59:59.999000"
        );
        crate::types::datetime::set_truncate_fractional(false);
    }

    /// Result-set flags of BIT as MySQL sends them: UNSIGNED, not BINARY
    /// (Connector/J turns a BIT(1) column with BINARY_FLAG into bytes rather
    /// than a Boolean); other non-string columns keep BINARY.
    #[test]
    fn bit_columns_are_not_flagged_binary() {
        for n in [1, 10, 64] {
            let c = table_column("d", "t", "t", "b", SqlType::Bit(n), 0);
            assert_eq!(c.length, n as u32);
            assert_eq!(c.flags & column_flags::BINARY, 0, "BIT({n})");
            assert_ne!(c.flags & column_flags::UNSIGNED, 0, "BIT({n})");
        }
        let c = table_column("d", "t", "t", "i", SqlType::Int { unsigned: false }, 0);
        assert_ne!(c.flags & column_flags::BINARY, 0);
    }
}
