//! The date and time functions: the statement's clock (NOW(), CURDATE(),
//! UNIX_TIMESTAMP(), UTC_TIMESTAMP(), ...), the parts of a date or a time
//! (YEAR(), HOUR(), EXTRACT, ...), date arithmetic (DATE_ADD and `+ INTERVAL`,
//! DATEDIFF, TIMESTAMPDIFF) and formatting (DATE_FORMAT, STR_TO_DATE), over
//! [`crate::types::datetime`]. A family of the functions, in its own file as
//! the others are; its reading of a temporal argument (`temporal`) serves the
//! casts to DATE and DATETIME too.

use crate::expr::eval::Env;
use crate::expr::functions::{arg, text, unsupported, Func};
use crate::expr::tree::Expr;
use crate::types::datetime::{self, Temporal, Unit};
use crate::types::decimal::{Decimal, RoundingStrategy};
use crate::types::value::Value;
use canyon_common::{Error, Result};

/// NOW(), CURDATE() and UNIX_TIMESTAMP(), read from the statement's clock.
pub(super) fn call_clock(f: Func, args: &[Expr], env: &Env<'_>) -> Result<Value> {
    Ok(match f {
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
            // Datetimes are in the session's time zone, as
            // NOW() and FROM_UNIXTIME() are; before the epoch is 0.
            let a = match args.first() {
                Some(e) => crate::expr::eval::eval_instant(e, env)?,
                None => Value::Null,
            };
            // A TIMESTAMP column's value is its stored instant, exactly.
            if let Value::Stamp(s) = a {
                return Ok(Value::UInt(s.utc.and_utc().timestamp().max(0) as u64));
            }
            let dt = if args.is_empty() {
                Some(env.ctx.now())
            } else {
                temporal(&a, env).map(|t| t.dt)
            };
            // UNIX_TIMESTAMP() is the statement's instant itself (exact
            // even in a repeated DST hour); a datetime argument is read in
            // the session's time zone.
            let unix = match (args.is_empty(), dt) {
                (_, None) => return Ok(Value::Null),
                (true, Some(_)) => env.ctx.now_utc().and_utc().timestamp(),
                (false, Some(dt)) => env.ctx.time_zone().to_utc(dt).and_utc().timestamp(),
            };
            Value::UInt(unix.max(0) as u64)
        }
        other => return Err(unsupported(other)),
    })
}

/// The date functions evaluated with all their arguments (`v`): date
/// arithmetic, formatting and the parts of a date.
pub(super) fn call_date(f: Func, v: Vec<Value>, env: &Env<'_>) -> Result<Value> {
    use chrono::Datelike;
    let a0 = v.first().cloned().unwrap_or(Value::Null);
    let a1 = v.get(1).cloned().unwrap_or(Value::Null);
    let date_part = |g: &dyn Fn(&Temporal) -> Value| -> Value {
        match temporal(&a0, env) {
            Some(t) => g(&t),
            None => Value::Null,
        }
    };
    // YEAR, MONTH, DAY, QUARTER, DATE and EXTRACT of a date unit take the
    // zero date apart, as MySQL does: every part is 0.
    let zero_part = |zero: Value, g: &dyn Fn(&Temporal) -> Value| -> Value {
        match temporal_or_zero(&a0, env) {
            Some(t) if datetime::is_zero(&t.dt) => zero,
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
        Func::TimeDiff => time_diff(&a0, &a1, env),
        Func::TimestampDiff(unit) => match (temporal(&a0, env), temporal(&a1, env)) {
            (Some(x), Some(y)) => Value::Int(datetime::timestamp_diff(unit, x.dt, y.dt)),
            _ => Value::Null,
        },
        Func::DateFormat => match (temporal_or_zero(&a0, env), text(&a1)) {
            (Some(t), Some(fmt)) if datetime::is_zero(&t.dt) => {
                datetime::format_zero(&fmt).map_or(Value::Null, |s| Value::str(&s))
            }
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
        Func::DateOf => zero_part(Value::Date(datetime::ZERO_DATE), &|t| {
            Value::Date(t.dt.date())
        }),
        Func::TimeOf => match time_value(&a0, env) {
            Some(us) => Value::str(&datetime::format_time(us)),
            None => Value::Null,
        },
        Func::Year => zero_part(Value::Int(0), &|t| Value::Int(t.dt.year() as i64)),
        Func::Month => zero_part(Value::Int(0), &|t| Value::Int(t.dt.month() as i64)),
        Func::Day => zero_part(Value::Int(0), &|t| Value::Int(t.dt.day() as i64)),
        Func::Quarter => zero_part(Value::Int(0), &|t| {
            Value::Int((t.dt.month() as i64 + 2) / 3)
        }),
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
        other => return Err(unsupported(other)),
    })
}

/// The time functions evaluated with all their arguments (`v`): the parts of
/// a time, EXTRACT, and the functions that make a date or read the clock in UTC.
pub(super) fn call_time(f: Func, v: Vec<Value>, env: &Env<'_>) -> Result<Value> {
    use chrono::{Datelike, Timelike};
    let a0 = v.first().cloned().unwrap_or(Value::Null);
    let a1 = v.get(1).cloned().unwrap_or(Value::Null);
    // YEAR, MONTH, DAY, QUARTER, DATE and EXTRACT of a date unit take the
    // zero date apart, as MySQL does: every part is 0.
    let zero_part = |zero: Value, g: &dyn Fn(&Temporal) -> Value| -> Value {
        match temporal_or_zero(&a0, env) {
            Some(t) if datetime::is_zero(&t.dt) => zero,
            Some(t) => g(&t),
            None => Value::Null,
        }
    };
    Ok(match f {
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
                zero_part(Value::Int(0), &|t| {
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
            let secs = a0.to_decimal().unwrap_or_default();
            if secs.is_sign_negative() && !secs.is_zero() {
                return Ok(Value::Null);
            }
            let whole = secs.trunc().to_i64().unwrap_or(i64::MAX);
            let micros = (secs.fract() * Decimal::from(1_000_000))
                .round()
                .to_u64()
                .and_then(|m| u32::try_from(m).ok())
                .unwrap_or(0);
            // The instant, shown in the session's time zone.
            let Some(dt) = chrono::DateTime::from_timestamp(whole, micros * 1000)
                .map(|t| env.ctx.time_zone().from_utc(t.naive_utc()))
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
        // NULL for a NULL or unknown zone or an invalid datetime, as MySQL.
        Func::ConvertTz => {
            let (Some(t), Some(from), Some(to)) =
                (temporal(&a0, env), text(&a1), v.get(2).and_then(text))
            else {
                return Ok(Value::Null);
            };
            match crate::types::timezone::convert(t.dt, &from, &to) {
                Some(dt) => Value::DateTime(dt),
                None => Value::Null,
            }
        }
        Func::UtcTimestamp => Value::DateTime(utc_now(env).with_nanosecond(0).unwrap_or_default()),
        Func::UtcDate => Value::Date(utc_now(env).date()),
        Func::UtcTime => Value::str(&utc_now(env).format("%H:%M:%S").to_string()),
        Func::CurTime => Value::str(&env.ctx.now().format("%H:%M:%S").to_string()),
        other => return Err(unsupported(other)),
    })
}

/// `TimeNumber(x, fsp)`: `x` read as a time, as MySQL's number
/// `[-]HHMMSS[.ffffff]` with `fsp` decimals (see `plan::bind_members`).
/// Text reads as a TIME column would store it: what reads of it, 00:00:00
/// for none (`'12colon34'` is 00:00:12, `'abc'` 00:00:00), with warning 1292
/// "Truncated incorrect time value" — once for a `constant`, as MySQL and
/// MariaDB convert a constant compared with a TIME once.
pub(super) fn time_number(v: &[Value], constant: bool, env: &Env<'_>) -> Result<Value> {
    let a0 = v.first().cloned().unwrap_or(Value::Null);
    let a1 = v.get(1).cloned().unwrap_or(Value::Null);
    let us = match &a0 {
        Value::Null => return Ok(Value::Null),
        Value::Bytes(b) => {
            let (us, fit) = datetime::store_time_text(b);
            if fit != datetime::TimeFit::Exact {
                let message = format!("Truncated incorrect time value: '{}'", a0.to_display());
                if constant {
                    env.ctx.warn_once(1292, &message);
                } else {
                    env.ctx.warn(1292, &message);
                }
            }
            us
        }
        other => match time_value(other, env) {
            Some(us) => us,
            None => return Ok(Value::Null),
        },
    };
    let a = us.unsigned_abs();
    let secs = a / 1_000_000;
    let hms = (secs / 3600 * 10_000 + secs / 60 % 60 * 100 + secs % 60) as i64;
    let sign = if us < 0 { -1 } else { 1 };
    Ok(match a1.to_i64().unwrap_or(0) {
        0 => Value::Int(sign * hms),
        fsp => {
            let n = sign * (hms * 1_000_000 + (a % 1_000_000) as i64);
            let mut d = Decimal::new(n, 6);
            d.rescale(fsp.clamp(1, 6) as u32);
            Value::Decimal(d)
        }
    })
}

/// A temporal argument: `None` for NULL, and for text that is no valid date
/// (MySQL: NULL with warning 1292), the zero date included: the functions
/// that need a whole date have none to work on (MySQL: NULL).
pub(super) fn temporal(v: &Value, env: &Env<'_>) -> Option<Temporal> {
    let t = temporal_or_zero(v, env)?;
    if datetime::is_zero(&t.dt) {
        env.ctx.warn(
            1292,
            &format!("Incorrect datetime value: '{}'", v.to_display()),
        );
        return None;
    }
    Some(t)
}

/// [`temporal`], but the zero date is a value (`datetime::ZERO_DATETIME`),
/// for the functions that take it apart and CAST.
pub(super) fn temporal_or_zero(v: &Value, env: &Env<'_>) -> Option<Temporal> {
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

/// TIMEDIFF(a, b): `a - b` as a TIME when both are datetimes or both are
/// times; NULL when one is a datetime and the other a time, as MySQL. The
/// result is clamped to MySQL's TIME range, ±838:59:59, with warning 1292.
fn time_diff(a: &Value, b: &Value, env: &Env<'_>) -> Value {
    let is_datetime = |v: &Value| match v {
        Value::Date(_) | Value::DateTime(_) => true,
        other => other
            .to_bytes()
            .and_then(|b| datetime::parse_temporal(&b))
            .is_some_and(|t| t.has_time),
    };
    let micros = match (is_datetime(a), is_datetime(b)) {
        (true, true) => match (temporal(a, env), temporal(b, env)) {
            (Some(x), Some(y)) => (x.dt - y.dt).num_microseconds(),
            _ => None,
        },
        (false, false) => match (time_value(a, env), time_value(b, env)) {
            (Some(x), Some(y)) => Some(x - y),
            _ => None,
        },
        _ => None,
    };
    let Some(us) = micros else {
        return Value::Null;
    };
    const MAX: i64 = (838 * 3600 + 59 * 60 + 59) * 1_000_000;
    let clamped = us.clamp(-MAX, MAX);
    if clamped != us {
        env.ctx.warn(
            1292,
            &format!(
                "Truncated incorrect time value: '{}'",
                datetime::format_time(us)
            ),
        );
    }
    Value::str(&datetime::format_time(clamped))
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
    let result = if unit.is_compound() {
        let text = amount.to_bytes().unwrap_or_default();
        match datetime::compound_interval(unit, &text) {
            Some((months, micros)) => {
                let (months, micros) = if sub {
                    (-months, -micros)
                } else {
                    (months, micros)
                };
                datetime::add_interval(t.dt, Unit::Month, months)
                    .and_then(|dt| datetime::add_micros(dt, micros))
            }
            None => {
                env.ctx.warn(
                    1292,
                    &format!(
                        "Truncated incorrect INTERVAL value: '{}'",
                        amount.to_display()
                    ),
                );
                return Ok(Value::Null);
            }
        }
    } else if fractional_seconds {
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

/// The statement time in UTC (NOW() is the session's local time).
fn utc_now(env: &Env<'_>) -> chrono::NaiveDateTime {
    env.ctx.now_utc()
}
