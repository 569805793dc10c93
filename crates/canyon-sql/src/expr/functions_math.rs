//! The numeric functions: ABS, CEIL / FLOOR, ROUND / TRUNCATE (exact for
//! DECIMAL and integers, `rint` for DOUBLE: see [`functions`](super::functions)),
//! MOD, POW, SQRT, SIGN, RAND, the logarithms and trigonometry, and CONV. A
//! family of the functions, in its own file as the others are.

use crate::expr::eval::{arithmetic, Env};
use crate::expr::functions::{arg, text, unsupported, Func};
use crate::expr::tree::{BinOp, Expr};
use crate::types::decimal::{Decimal, RoundingStrategy};
use crate::types::value::Value;
use canyon_common::{Error, Result};

/// The numeric functions that evaluate their arguments as they need them.
pub(super) fn call_numeric(f: Func, args: &[Expr], env: &Env<'_>) -> Result<Value> {
    Ok(match f {
        Func::Rand => Value::Double(rand::random::<f64>()),
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
                        let dp = d.min(i64::from(crate::types::decimal::MAX_SCALE)) as u32;
                        let mut r = x.round_dp_with_strategy(dp, strategy);
                        r.rescale(dp);
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
                let r = arithmetic(BinOp::Mod, &a, &b)?;
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
        other => return Err(unsupported(other)),
    })
}

/// The math functions evaluated with all their arguments (`v`).
pub(super) fn call_math(f: Func, v: Vec<Value>, env: &Env<'_>) -> Result<Value> {
    let a0 = v.first().cloned().unwrap_or(Value::Null);
    let a1 = v.get(1).cloned().unwrap_or(Value::Null);
    let a2 = v.get(2).cloned().unwrap_or(Value::Null);
    Ok(match f {
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
        other => return Err(unsupported(other)),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_match_mysql() {
        assert_eq!(conv("a", 16, 2).as_deref(), Some("1010"));
        assert_eq!(conv("-17", 10, -18).as_deref(), Some("-H"));
        assert_eq!(conv("-1", 10, 16).as_deref(), Some("FFFFFFFFFFFFFFFF"));
        assert_eq!(round_double(2.5, 0, false), 2.0);
        assert_eq!(round_double(2.675, 2, false), 2.68);
        assert_eq!(round_double(-1.99, 1, true), -1.9);
    }
}
