//! CAST and CONVERT (to SIGNED, UNSIGNED, CHAR, DOUBLE, DECIMAL, DATE,
//! DATETIME and TIME), and the conversion the binder puts on the branches of IF,
//! IFNULL, COALESCE and CASE ([`Func::Conform`]): MySQL's rules for reading a
//! value as another type, with their warnings (1292, 1264, 1916). A family of
//! the functions, in its own file as the others are.

use crate::expr::eval::Env;
use crate::expr::functions::{arg, unsupported, Func};
use crate::expr::functions_datetime::temporal_or_zero;
use crate::expr::tree::Expr;
use crate::types::decimal::{Decimal, RoundingStrategy, MAX_PRECISION, MAX_SCALE};
use crate::types::value::Value;
use crate::types::ExprKind;
use canyon_common::Result;

/// The casts and [`Func::Conform`].
pub(super) fn call_cast(f: Func, args: &[Expr], env: &Env<'_>) -> Result<Value> {
    Ok(match f {
        Func::CastSigned | Func::CastUnsigned => {
            cast_integer(&arg(args, 0, env)?, f == Func::CastUnsigned, env)
        }
        Func::CastChar => match arg(args, 0, env)?.to_bytes() {
            None => Value::Null,
            Some(b) => Value::Bytes(b),
        },
        Func::CastCharset(cs) => match arg(args, 0, env)?.to_bytes() {
            None => Value::Null,
            Some(b) => match std::str::from_utf8(&b) {
                Ok(text) => match cs.restrict(text) {
                    std::borrow::Cow::Borrowed(_) => Value::Bytes(b),
                    std::borrow::Cow::Owned(s) => Value::str(&s),
                },
                // Bytes (a binary string) are read as text in `cs`, as
                // MySQL reads CONVERT(X'E9' USING latin1) as 'é'.
                Err(_) => Value::str(&cs.decode(&b)),
            },
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
                // A number past 65 digits (1e70) has no decimal: it is
                // clipped like any other out-of-range value below.
                match v.to_decimal() {
                    Some(d) => cast_decimal(d, p, s, env),
                    None => match v.to_f64() {
                        Some(f) if f.is_finite() && f.abs() >= 1.0 => {
                            env.ctx
                                .warn(1264, "Out of range value for column 'CAST' at row 1");
                            let max = Decimal::max_of(u32::from(p), u32::from(s));
                            Value::Decimal(if f < 0.0 { -max } else { max })
                        }
                        _ => cast_decimal(Decimal::ZERO, p, s, env),
                    },
                }
            }
        },
        Func::CastDate => match temporal_or_zero(&arg(args, 0, env)?, env) {
            Some(t) => Value::Date(t.dt.date()),
            None => Value::Null,
        },
        Func::CastDateTime => match temporal_or_zero(&arg(args, 0, env)?, env) {
            Some(t) => Value::DateTime(t.dt),
            None => Value::Null,
        },
        Func::CastTime(fsp) => cast_time(arg(args, 0, env)?, fsp, env),
        Func::Conform(kind) => conform(arg(args, 0, env)?, kind),
        other => return Err(unsupported(other)),
    })
}

/// CAST(v AS TIME(fsp)): `v` read as a TIME column of precision `fsp`
/// would read it (a number as `[H]HHMMSS[.f]`, text as a time, a datetime
/// as its time of day), the fraction rounded to `fsp` digits, as MySQL 8's
/// `Item_time_typecast`. What does not read whole warns 1292 "Truncated
/// incorrect time value": past ±838:59:59 the value is the nearest end;
/// text or a number that gives no time at all (`'abc'`, minutes past 59) is
/// NULL, text with a time before its rest (`'10:11:12abc'`) that time.
/// The result is the TIME column's text; the binder reads it as a time
/// where MySQL would (comparisons, `+ 0`: `plan::bind_members`).
fn cast_time(v: Value, fsp: u8, env: &Env<'_>) -> Value {
    use crate::types::datetime::{format_time_fsp, TimeFit};
    if v.is_null() {
        return Value::Null;
    }
    let (micros, fit) = crate::types::sqltype::time_to_store(&v, fsp);
    if fit != TimeFit::Exact {
        env.ctx.warn(
            1292,
            &format!("Truncated incorrect time value: '{}'", v.to_display()),
        );
        if fit == TimeFit::Truncated && micros == 0 {
            return Value::Null;
        }
    }
    Value::str(&format_time_fsp(micros, fsp))
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
    let s = u32::from(s).min(MAX_SCALE);
    let mut r = d.round_dp_with_strategy(s, RoundingStrategy::MidpointAwayFromZero);
    let p = u32::from(p).clamp(s.max(1), MAX_PRECISION);
    {
        // The largest value DECIMAL(p, s) holds: p nines with s after the point.
        let max = Decimal::max_of(p, s);
        if r.abs() > max {
            env.ctx
                .warn(1264, "Out of range value for column 'CAST' at row 1");
            r = if r.is_sign_negative() { -max } else { max };
        }
    }
    r.rescale(s);
    Value::Decimal(r)
}
