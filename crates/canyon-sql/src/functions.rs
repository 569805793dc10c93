//! Scalar functions: the ones clients and common applications call.
//!
//! Each function is resolved once at bind time ([`lookup`], [`check_arity`]) and
//! evaluated by [`call`]. Unknown functions are error 1305, wrong argument counts
//! 1582, as in MySQL.

use crate::expr::{eval, AggCall, Env, Expr};
use crate::types::ExprKind;
use crate::value::{compare, parse_datetime_bytes, sort_cmp, Value};
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
    CastDouble,
    CastDecimal(u8, u8),
    CastDate,
    CastDateTime,
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
        | Func::CurDate => n == 0,
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
        | Func::CastDouble
        | Func::CastDecimal(..)
        | Func::CastDate
        | Func::CastDateTime
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
        Func::Abs | Func::Ceil | Func::Floor | Func::Round | Func::Truncate | Func::Mod => {
            match first() {
                ExprKind::String => ExprKind::Double,
                k => k,
            }
        }
        Func::Coalesce | Func::IfNull | Func::Greatest | Func::Least | Func::NullIf => first(),
        Func::If => args
            .get(1)
            .map(|a| a.kind(cols, aggs))
            .unwrap_or(ExprKind::Null),
        _ => ExprKind::String,
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
        Func::Now => Value::DateTime(env.ctx.now()),
        Func::CurDate => Value::Date(env.ctx.now().date()),
        Func::UnixTimestamp => {
            if args.is_empty() {
                Value::UInt(env.ctx.now().and_utc().timestamp() as u64)
            } else {
                match arg(args, 0, env)? {
                    Value::DateTime(dt) => Value::UInt(dt.and_utc().timestamp().max(0) as u64),
                    Value::Date(d) => Value::UInt(
                        d.and_time(chrono::NaiveTime::MIN)
                            .and_utc()
                            .timestamp()
                            .max(0) as u64,
                    ),
                    Value::Bytes(b) => match parse_datetime_bytes(&b) {
                        Some(Value::DateTime(dt)) => {
                            Value::UInt(dt.and_utc().timestamp().max(0) as u64)
                        }
                        Some(Value::Date(d)) => Value::UInt(
                            d.and_time(chrono::NaiveTime::MIN)
                                .and_utc()
                                .timestamp()
                                .max(0) as u64,
                        ),
                        _ => Value::Null,
                    },
                    _ => Value::Null,
                }
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
                other => {
                    let x = other.to_f64().unwrap_or(0.0);
                    let p = 10f64.powi(d.clamp(-30, 30) as i32);
                    let y = x * p;
                    let r = if f == Func::Round {
                        if y < 0.0 {
                            -((-y) + 0.5).floor()
                        } else {
                            (y + 0.5).floor()
                        }
                    } else {
                        y.trunc()
                    };
                    Value::Double(r / p)
                }
            }
        }
        Func::Mod => {
            let (a, b) = (arg(args, 0, env)?, arg(args, 1, env)?);
            if a.is_null() || b.is_null() {
                Value::Null
            } else {
                crate::expr::arithmetic(crate::expr::BinOp::Mod, &a, &b)?
            }
        }
        Func::Power => match (arg(args, 0, env)?.to_f64(), arg(args, 1, env)?.to_f64()) {
            (Some(x), Some(y)) => Value::Double(x.powf(y)),
            _ => Value::Null,
        },
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
        Func::CastSigned => match arg(args, 0, env)? {
            Value::Null => Value::Null,
            Value::UInt(u) => Value::Int(u as i64),
            v => Value::Int(v.to_i64().unwrap_or(0)),
        },
        Func::CastUnsigned => match arg(args, 0, env)? {
            Value::Null => Value::Null,
            v => Value::UInt(v.to_i64().unwrap_or(0) as u64),
        },
        Func::CastChar => match arg(args, 0, env)?.to_bytes() {
            None => Value::Null,
            Some(b) => Value::Bytes(b),
        },
        Func::CastDouble => match arg(args, 0, env)?.to_f64() {
            None => Value::Null,
            Some(x) => Value::Double(x),
        },
        Func::CastDecimal(_, s) => match arg(args, 0, env)?.to_decimal() {
            None => Value::Null,
            Some(d) => {
                let mut r =
                    d.round_dp_with_strategy(s as u32, RoundingStrategy::MidpointAwayFromZero);
                r.rescale(s as u32);
                Value::Decimal(r)
            }
        },
        Func::CastDate => match arg(args, 0, env)? {
            Value::Date(d) => Value::Date(d),
            Value::DateTime(dt) => Value::Date(dt.date()),
            v => match v.to_bytes().and_then(|b| parse_datetime_bytes(&b)) {
                Some(Value::DateTime(dt)) => Value::Date(dt.date()),
                Some(d) => d,
                None => Value::Null,
            },
        },
        Func::CastDateTime => match arg(args, 0, env)? {
            Value::Date(d) => Value::DateTime(d.and_time(chrono::NaiveTime::MIN)),
            Value::DateTime(dt) => Value::DateTime(dt),
            v => match v.to_bytes().and_then(|b| parse_datetime_bytes(&b)) {
                Some(Value::Date(d)) => Value::DateTime(d.and_time(chrono::NaiveTime::MIN)),
                Some(dt) => dt,
                None => Value::Null,
            },
        },
    })
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

/// Binds expression forms that belong with the functions here rather than with
/// the general binder (date arithmetic with INTERVAL, EXTRACT, ...). `None`: not
/// such a form, the general binder goes on.
pub fn bind_special(b: &mut crate::expr::Binder<'_>, e: &ast::Expr) -> Option<Result<Expr>> {
    let _ = (b, e);
    None
}
