//! SQL column types: a declared type in the AST (`INT UNSIGNED`,
//! `DECIMAL(10,2)`, `DATETIME(3)`, `ENUM(...)`) to Canyon's [`SqlType`],
//! with MySQL's limits on lengths, precisions, scales and fractional-second
//! digits (1074, 1425, 1426, 1427, 1439) and the types refused with 1235.
//! Split out of `crate::ddl::define`, which translates whole column and
//! table definitions and re-exports [`sql_type`] for the routine and trigger
//! code that types parameters and variables.

use crate::types::collation::Collation;
use crate::types::decimal::{MAX_PRECISION, MAX_SCALE};
use crate::types::enumset;
use crate::types::SqlType;
use canyon_common::{Error, Result};
use sqlparser::ast;

/// The UNSIGNED form of a number type (MySQL 8 deprecates UNSIGNED for
/// DECIMAL, FLOAT and DOUBLE but still applies it: negative values are out
/// of range).
pub(super) fn unsigned_of(ty: SqlType) -> SqlType {
    ty.with_unsigned()
}

/// The display width an integer type was declared with (`INT(5)`), or the
/// length of a `YEAR(n)` other than `YEAR(4)` (left for [`year_widths`] to
/// refuse or, for MariaDB, keep or drop).
pub(super) fn declared_width(t: &ast::DataType) -> Option<u32> {
    use ast::DataType as D;
    match t {
        D::Custom(name, args) if name.to_string().eq_ignore_ascii_case("YEAR") => {
            match args.as_slice() {
                [n] => n.trim().parse::<u32>().ok().filter(|n| *n != 4),
                _ => None,
            }
        }
        D::TinyInt(w)
        | D::TinyIntUnsigned(w)
        | D::SmallInt(w)
        | D::SmallIntUnsigned(w)
        | D::MediumInt(w)
        | D::MediumIntUnsigned(w)
        | D::Int(w)
        | D::IntUnsigned(w)
        | D::Integer(w)
        | D::IntegerUnsigned(w)
        | D::BigInt(w)
        | D::BigIntUnsigned(w) => w.map(|w| w.min(255) as u32),
        _ => None,
    }
}

/// The (M,D) of FLOAT(M,D) / DOUBLE(M,D), checked as MySQL checks them
/// (M at most 255, D at most 30 and not above M).
fn real_digits(info: &ast::ExactNumberInfo) -> Result<Option<(u8, u8)>> {
    let ast::ExactNumberInfo::PrecisionAndScale(m, d) = *info else {
        return Ok(None);
    };
    let err = |code: u16, message: String| Error::Sql {
        code,
        sqlstate: *b"42000",
        message,
    };
    if m > 255 {
        return Err(err(1439, "Display width out of range (max = 255)".into()));
    }
    if d > 30 {
        return Err(err(
            1425,
            format!("Too big scale {d} specified. Maximum is 30."),
        ));
    }
    if d < 0 || d as u64 > m {
        return Err(err(
            1427,
            "For float(M,D), double(M,D) or decimal(M,D), M must be >= D".into(),
        ));
    }
    Ok(Some((m as u8, d as u8)))
}

/// The fractional-second precision of `DATETIME(p)`, `TIMESTAMP(p)` or
/// `TIME(p)`: 0 when omitted; past 6 MySQL's 1426 ER_TOO_BIG_PRECISION,
/// whose message names the column ([`column_def`] fills it in; a type
/// without a column, such as a routine parameter's, names the type).
fn fsp(p: Option<u64>) -> Result<u8> {
    match p {
        None => Ok(0),
        Some(p) if p <= u64::from(crate::types::sqltype::MAX_FSP) => Ok(p as u8),
        Some(p) => Err(too_big_precision(
            p,
            "",
            u32::from(crate::types::sqltype::MAX_FSP),
        )),
    }
}

/// 1426 ER_TOO_BIG_PRECISION for `name`, whose type allows `max`.
pub(super) fn too_big_precision(p: u64, name: &str, max: u32) -> Error {
    Error::Sql {
        code: 1426,
        sqlstate: *b"42000",
        message: format!("Too-big precision {p} specified for '{name}'. Maximum is {max}."),
    }
}

/// Maps a declared SQL type.
pub fn sql_type(t: &ast::DataType) -> Result<SqlType> {
    use ast::DataType as D;
    let len = |l: &Option<ast::CharacterLength>, default: u32| -> u32 {
        match l {
            Some(ast::CharacterLength::IntegerLength { length, .. }) => {
                (*length).min(u32::MAX as u64) as u32
            }
            Some(ast::CharacterLength::Max) => 65535,
            None => default,
        }
    };
    Ok(match t {
        D::TinyInt(_) => SqlType::TinyInt { unsigned: false },
        D::TinyIntUnsigned(_) | D::UTinyInt => SqlType::TinyInt { unsigned: true },
        D::Bool | D::Boolean => SqlType::TinyInt { unsigned: false },
        D::SmallInt(_) | D::Int2(_) => SqlType::SmallInt { unsigned: false },
        D::SmallIntUnsigned(_) | D::Int2Unsigned(_) | D::USmallInt => {
            SqlType::SmallInt { unsigned: true }
        }
        D::MediumInt(_) => SqlType::MediumInt { unsigned: false },
        D::MediumIntUnsigned(_) => SqlType::MediumInt { unsigned: true },
        D::Int(_) | D::Integer(_) | D::Int4(_) => SqlType::Int { unsigned: false },
        D::IntUnsigned(_) | D::IntegerUnsigned(_) | D::Int4Unsigned(_) => {
            SqlType::Int { unsigned: true }
        }
        D::BigInt(_) | D::Int8(_) => SqlType::BigInt { unsigned: false },
        D::BigIntUnsigned(_) | D::Int8Unsigned(_) | D::UBigInt => {
            SqlType::BigInt { unsigned: true }
        }
        D::Float(info) | D::FloatUnsigned(info) => {
            let unsigned = matches!(t, D::FloatUnsigned(_));
            match info {
                // FLOAT(p): single precision up to 24 bits, double to 53.
                ast::ExactNumberInfo::Precision(p) if *p > 53 => {
                    return Err(Error::Sql {
                        code: 1063,
                        sqlstate: *b"42000",
                        message: format!("Incorrect column specifier: FLOAT({p})"),
                    })
                }
                ast::ExactNumberInfo::Precision(p) if *p > 24 => SqlType::Double {
                    unsigned,
                    digits: None,
                },
                _ => SqlType::Float {
                    unsigned,
                    digits: real_digits(info)?,
                },
            }
        }
        D::Float4 => SqlType::FLOAT,
        D::Double(info) | D::DoubleUnsigned(info) => SqlType::Double {
            unsigned: matches!(t, D::DoubleUnsigned(_)),
            digits: real_digits(info)?,
        },
        D::DoublePrecision | D::Real | D::Float8 => SqlType::DOUBLE,
        D::RealUnsigned | D::DoublePrecisionUnsigned => SqlType::DOUBLE.with_unsigned(),
        D::Decimal(info)
        | D::Numeric(info)
        | D::Dec(info)
        | D::DecimalUnsigned(info)
        | D::DecUnsigned(info) => {
            let (p, s) = match info {
                ast::ExactNumberInfo::None => (10, 0),
                ast::ExactNumberInfo::Precision(p) => (*p, 0),
                ast::ExactNumberInfo::PrecisionAndScale(p, s) => (*p, (*s).max(0) as u64),
            };
            // MySQL's limits (see crate::types::decimal): 1426 past 65
            // digits, 1425 past scale 30, 1427 for a scale above M.
            if p > u64::from(MAX_PRECISION) {
                return Err(too_big_precision(p, "", MAX_PRECISION));
            }
            if s > u64::from(MAX_SCALE) {
                return Err(Error::Sql {
                    code: 1425,
                    sqlstate: *b"42000",
                    message: format!("Too big scale {s} specified. Maximum is {MAX_SCALE}."),
                });
            }
            if s > p {
                return Err(Error::Sql {
                    code: 1427,
                    sqlstate: *b"42000",
                    message: "For float(M,D), double(M,D) or decimal(M,D), M must be >= D".into(),
                });
            }
            SqlType::Decimal {
                precision: p as u8,
                scale: s as u8,
                unsigned: matches!(t, D::DecimalUnsigned(_) | D::DecUnsigned(_)),
            }
        }
        D::Char(l) | D::Character(l) => SqlType::Char(len(l, 1)),
        D::Varchar(l) | D::CharacterVarying(l) | D::CharVarying(l) | D::Nvarchar(l) => {
            if l.is_none() {
                return Err(Error::Syntax("VARCHAR needs a length".into()));
            }
            SqlType::VarChar(len(l, 255))
        }
        D::Binary(n) => SqlType::Binary(n.unwrap_or(1) as u32),
        D::Varbinary(n) => SqlType::VarBinary(match n {
            Some(ast::BinaryLength::IntegerLength { length }) => *length as u32,
            _ => 65535,
        }),
        D::TinyText => SqlType::Text(255),
        D::Text => SqlType::Text(65535),
        D::MediumText => SqlType::Text(16_777_215),
        D::LongText => SqlType::Text(u32::MAX),
        D::TinyBlob => SqlType::Blob(255),
        D::Blob(_) => SqlType::Blob(65535),
        D::MediumBlob => SqlType::Blob(16_777_215),
        D::LongBlob => SqlType::Blob(u32::MAX),
        D::Date => SqlType::Date,
        D::Datetime(p) => SqlType::DateTime(fsp(*p)?),
        D::Timestamp(p, _) => SqlType::Timestamp(fsp(*p)?),
        D::Bit(n) => {
            // BIT(0) is BIT(1), as in MySQL (type_bit.result: `bit(1)`).
            let n = n.unwrap_or(1).max(1);
            if n > 64 {
                // MySQL: 1439 ER_TOO_BIG_DISPLAYWIDTH.
                return Err(Error::Sql {
                    code: 1439,
                    sqlstate: *b"42000",
                    message: "Display width out of range (max = 64)".into(),
                });
            }
            SqlType::Bit(n as u8)
        }
        D::Time(p, _) => SqlType::Time(fsp(*p)?),
        D::JSON => SqlType::Json,
        // FIXED is DECIMAL's other name (MySQL 8 manual, 13.1.1).
        D::Custom(name, args) if name.to_string().eq_ignore_ascii_case("FIXED") => {
            let num = |a: &String| {
                a.trim()
                    .parse::<u64>()
                    .map_err(|_| Error::Syntax(format!("FIXED({a})")))
            };
            let info = match args.as_slice() {
                [] => ast::ExactNumberInfo::None,
                [p] => ast::ExactNumberInfo::Precision(num(p)?),
                [p, s] => ast::ExactNumberInfo::PrecisionAndScale(num(p)?, num(s)? as i64),
                _ => return Err(Error::Syntax("FIXED takes at most two numbers".into())),
            };
            return sql_type(&D::Decimal(info));
        }
        // SERIAL is BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE: the type
        // here, the rest in `column_def`.
        D::Custom(name, args)
            if args.is_empty() && name.to_string().eq_ignore_ascii_case("SERIAL") =>
        {
            SqlType::BigInt { unsigned: true }
        }
        D::Custom(name, args) if name.to_string().eq_ignore_ascii_case("YEAR") => {
            // YEAR, YEAR(4) and (see `year_widths`) YEAR(n): the length is
            // the column's display width, not part of its type.
            match args.as_slice() {
                [] => {}
                [n] if n.trim().parse::<u32>().is_ok() => {}
                _ => return Err(Error::Syntax(format!("YEAR({})", args.join(",")))),
            }
            SqlType::Year
        }
        // The member list's collation is the column's: `column_def` interns
        // it again once that is known.
        D::Enum(members, _) => {
            let values = members
                .iter()
                .map(|m| match m {
                    ast::EnumMember::Name(n) => Ok(n.clone()),
                    ast::EnumMember::NamedValue(n, _) => Err(Error::Syntax(format!(
                        "ENUM member '{n}' with a value (ClickHouse syntax)"
                    ))),
                })
                .collect::<Result<Vec<_>>>()?;
            SqlType::Enum(enumset::intern_bounded(values, Collation::DEFAULT)?)
        }
        D::Set(values) => {
            SqlType::Set(enumset::intern_bounded(values.clone(), Collation::DEFAULT)?)
        }
        other => return Err(Error::Unsupported(format!("column type {other}"))),
    })
}

/// The `YEAR(n)` columns among `columns` (n not 4; `declared_width` keeps n
/// as the display width), as the server's presentation has them.
///
/// MySQL 8 refuses them: YEAR(2) was removed in 5.7.5, and any length but
/// 4 is 1818 ER_INVALID_YEAR_COLUMN_LENGTH. MariaDB 10.11 keeps YEAR(2), a
/// column that stores the year as YEAR(4) does but shows and reads it as
/// two digits (see `crate::types::sqltype::year2`), and makes any other
/// length YEAR(4); each such column is a Note 1287 (deprecated). Under
/// `presentation = "mariadb"` Canyon does as MariaDB (`mariadb`), calling
/// `note` with each Note's code and message.
pub fn year_widths<'a>(
    columns: impl IntoIterator<Item = &'a mut crate::catalog::ColumnDef>,
    mariadb: bool,
    note: &mut dyn FnMut(u16, String),
) -> Result<()> {
    for c in columns {
        if c.ty != SqlType::Year {
            continue;
        }
        let Some(n) = c.attrs.display_width else {
            continue;
        };
        if !mariadb {
            return Err(Error::Sql {
                code: 1818,
                sqlstate: *b"HY000",
                message: "Supports only YEAR or YEAR(4) column.".into(),
            });
        }
        note(
            1287,
            format!(
                "'YEAR({n})' is deprecated and will be removed in a future release. \
                 Please use YEAR(4) instead"
            ),
        );
        if n != 2 {
            c.attrs.display_width = None;
        }
    }
    Ok(())
}
