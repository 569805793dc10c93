//! Date and time helpers behind the temporal functions: MySQL's lenient parsing
//! of temporal strings and numbers, INTERVAL arithmetic, week numbering,
//! DATE_FORMAT and STR_TO_DATE.
//!
//! The rules follow MySQL's manual (section 14.7, "Date and Time Functions") and,
//! where the manual is vague, MySQL's `sql_time.cc` (`calc_week`,
//! `calc_time_diff`, `date_add_interval`):
//!
//! * month and year arithmetic clamps the day to the last day of the target month
//!   (`'2024-01-31' + INTERVAL 1 MONTH` is `2024-02-29`);
//! * results outside years 1..9999 are NULL (MySQL warns 1441, "datetime field
//!   overflow");
//! * TIMESTAMPDIFF counts whole units: a month is complete only when the day and
//!   time of day of the end reach those of the start.
//!
//! Fractional seconds (MySQL 8 manual, 13.2.6 "Fractional Seconds in Time
//! Values"): a seventh digit of input rounds into the sixth,
//! and a value stored into a DATETIME(fsp) / TIMESTAMP(fsp) / TIME(fsp) column
//! rounds half away from zero to fsp digits ([`round_datetime`],
//! [`round_micros`]), carrying into the next second, day or year; `sql_mode`
//! TIME_TRUNCATE_FRACTIONAL truncates instead (a per-statement flag the
//! session sets: [`set_truncate_fractional`]). Time zones are in
//! [`crate::types::timezone`].
//!
//! The zero date. MySQL keeps `'0000-00-00'` (and `'0000-00-00 00:00:00'`)
//! as a "dummy date" where `sql_mode` lacks NO_ZERO_DATE: applications
//! written for MySQL 5 (WordPress's `DEFAULT '0000-00-00 00:00:00'`, every
//! dump that sets `SQL_MODE='NO_AUTO_VALUE_ON_ZERO'`) depend on it. chrono
//! has no such date, so Canyon names one it cannot otherwise reach:
//! [`ZERO_DATE`], 1 January of the year -1, and [`ZERO_DATETIME`], its
//! midnight. The invariants that make the sentinel safe:
//!
//! * nothing else produces a year below 1: parsing takes years 0..=9999
//!   only, and arithmetic results outside years 1..=9999 are NULL
//!   (`in_range`), so a sentinel value is always the zero date;
//! * it sorts before every real date, as MySQL's zero date does, and its
//!   key and row encodings (days from the common era, microseconds from the
//!   epoch) need no new form: old rows and keys read unchanged;
//! * everything that shows a date asks [`is_zero_date`] / [`is_zero`] first
//!   (the text and binary protocols, `Value::to_text`, numbers: 0), and the
//!   functions that take a date return NULL for it, as MySQL's do for an
//!   incomplete date, except YEAR / MONTH / DAY / EXTRACT, which give 0.
//!
//! Whether the zero date may be stored is the statement's `sql_mode`
//! ([`ZeroDates`], set per statement like TIME_TRUNCATE_FRACTIONAL): without
//! NO_ZERO_DATE it is an ordinary value; with it, storing one is warning
//! 1292, which strict mode makes an error (MySQL 8's default modes refuse
//! it) and INSERT IGNORE keeps a warning.
//!
//! Not implemented: zero-in-date values (`'2024-00-00'`, which MySQL keeps
//! without NO_ZERO_IN_DATE) are invalid dates here; a zero date with a time
//! of day (`'0000-00-00 10:00:00'`) likewise; a TIME value type (TIME values are
//! held as their text); an fsp carried by expressions (NOW(3) and a DATETIME(3)
//! column inside CONCAT print six digits when the fraction is nonzero); the
//! compound interval units in EXTRACT (`EXTRACT(DAY_SECOND FROM d)`); INTERVAL
//! takes them ([`compound_interval`], and `crate::parse::spellings`'
//! `interval_units` rewrite).

use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, NaiveTime, Timelike};

/// An INTERVAL / EXTRACT / TIMESTAMPDIFF unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Unit {
    Microsecond,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
    /// The compound units of INTERVAL (`INTERVAL '1 2:03:04' DAY_SECOND`),
    /// whose amount is a string of numbers (see [`compound_interval`]).
    SecondMicrosecond,
    MinuteMicrosecond,
    MinuteSecond,
    HourMicrosecond,
    HourSecond,
    HourMinute,
    DayMicrosecond,
    DaySecond,
    DayMinute,
    DayHour,
    YearMonth,
}

impl Unit {
    /// The unit a SQL keyword names (`DAY`, `MONTH`, ...).
    pub fn from_name(name: &str) -> Option<Unit> {
        Some(match name.to_ascii_uppercase().as_str() {
            "MICROSECOND" | "MICROSECONDS" => Unit::Microsecond,
            "SECOND" | "SECONDS" => Unit::Second,
            "MINUTE" | "MINUTES" => Unit::Minute,
            "HOUR" | "HOURS" => Unit::Hour,
            "DAY" | "DAYS" => Unit::Day,
            "WEEK" | "WEEKS" => Unit::Week,
            "MONTH" | "MONTHS" => Unit::Month,
            "QUARTER" => Unit::Quarter,
            "YEAR" | "YEARS" => Unit::Year,
            _ => return None,
        })
    }

    /// Whether adding this unit to a DATE keeps a DATE (day or larger).
    pub fn is_date_unit(self) -> bool {
        matches!(
            self,
            Unit::Day | Unit::Week | Unit::Month | Unit::Quarter | Unit::Year | Unit::YearMonth
        )
    }

    /// Months per unit for the calendar units, `None` for the fixed-length ones.
    fn months(self) -> Option<i64> {
        match self {
            Unit::Month => Some(1),
            Unit::Quarter => Some(3),
            Unit::Year => Some(12),
            _ => None,
        }
    }

    /// Microseconds per unit for the fixed-length units.
    fn micros(self) -> i64 {
        match self {
            Unit::Microsecond => 1,
            Unit::Second => 1_000_000,
            Unit::Minute => 60_000_000,
            Unit::Hour => 3_600_000_000,
            Unit::Day => 86_400_000_000,
            Unit::Week => 7 * 86_400_000_000,
            // Calendar and compound units never reach here (see `months`,
            // `compound_interval`).
            _ => 0,
        }
    }

    /// A compound unit's fields, largest first, and whether its last field
    /// is microseconds; `None` for a simple unit.
    fn compound_fields(self) -> Option<(&'static [Unit], bool)> {
        use Unit::*;
        Some(match self {
            SecondMicrosecond => (&[Second, Microsecond], true),
            MinuteMicrosecond => (&[Minute, Second, Microsecond], true),
            MinuteSecond => (&[Minute, Second], false),
            HourMicrosecond => (&[Hour, Minute, Second, Microsecond], true),
            HourSecond => (&[Hour, Minute, Second], false),
            HourMinute => (&[Hour, Minute], false),
            DayMicrosecond => (&[Day, Hour, Minute, Second, Microsecond], true),
            DaySecond => (&[Day, Hour, Minute, Second], false),
            DayMinute => (&[Day, Hour, Minute], false),
            DayHour => (&[Day, Hour], false),
            YearMonth => (&[Year, Month], false),
            _ => return None,
        })
    }

    /// Whether this is a compound unit (`DAY_SECOND`, ...).
    pub fn is_compound(self) -> bool {
        self.compound_fields().is_some()
    }
}

/// A compound INTERVAL amount as MySQL reads it (`get_interval_info`): an
/// optional leading `-` (negating every field), then up to one number per
/// field, separated by any non-digits. Too few numbers fill the smallest
/// fields (`'1:02' DAY_SECOND` is one minute two seconds); a microsecond
/// field written with fewer than six digits is a fraction (`'1.5'
/// SECOND_MICROSECOND` is 1.5 seconds). Returns `(months, microseconds)`,
/// `None` when the text has no number or a field overflows.
pub fn compound_interval(unit: Unit, text: &[u8]) -> Option<(i64, i64)> {
    let (fields, micro) = unit.compound_fields()?;
    let mut p = 0;
    while p < text.len() && text[p].is_ascii_whitespace() {
        p += 1;
    }
    let neg = text.get(p) == Some(&b'-');
    if neg {
        p += 1;
    }
    while p < text.len() && !text[p].is_ascii_digit() {
        p += 1;
    }
    let mut values: Vec<i64> = Vec::with_capacity(fields.len());
    let mut last_len = 0;
    while values.len() < fields.len() && p < text.len() && text[p].is_ascii_digit() {
        let start = p;
        let mut n: i64 = 0;
        while p < text.len() && text[p].is_ascii_digit() {
            n = n.checked_mul(10)?.checked_add((text[p] - b'0') as i64)?;
            p += 1;
        }
        last_len = p - start;
        values.push(n);
        while p < text.len() && !text[p].is_ascii_digit() {
            p += 1;
        }
    }
    if values.is_empty() {
        return None;
    }
    if micro {
        let last = values.last_mut().expect("not empty");
        if last_len < 6 {
            *last = last.checked_mul(10i64.pow(6 - last_len as u32))?;
        } else if last_len > 6 {
            *last /= 10i64.pow((last_len - 6).min(18) as u32);
        }
    }
    let skipped = fields.len() - values.len();
    let (mut months, mut micros) = (0i64, 0i64);
    for (f, v) in fields[skipped..].iter().zip(values) {
        match f.months() {
            Some(per) => months = months.checked_add(v.checked_mul(per)?)?,
            None => micros = micros.checked_add(v.checked_mul(f.micros())?)?,
        }
    }
    Some(if neg {
        (-months, -micros)
    } else {
        (months, micros)
    })
}

/// A parsed temporal argument: the point in time and whether it carried a time
/// of day (a DATE plus a day-or-larger interval stays a DATE).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Temporal {
    /// The value; midnight for dates.
    pub dt: NaiveDateTime,
    /// Whether the source had a time part (DATETIME rather than DATE).
    pub has_time: bool,
}

fn two_digit_year(y: i64, digits: usize) -> i64 {
    // MySQL: two-digit years 70-99 are 1970-1999, 00-69 are 2000-2069.
    if digits <= 2 {
        if y < 70 {
            2000 + y
        } else {
            1900 + y
        }
    } else {
        y
    }
}

fn make(parts: &[(i64, usize)], frac: u32, has_time: bool) -> Option<Temporal> {
    let get = |i: usize| parts.get(i).map(|p| p.0).unwrap_or(0);
    if parts.iter().all(|p| p.0 == 0) && frac == 0 {
        // '0000-00-00', '00000000', '0000-00-00 00:00:00': the zero date
        // (a two-digit '00-00-00' too, whose year would read as 2000).
        return Some(Temporal {
            dt: ZERO_DATETIME,
            has_time,
        });
    }
    let year = two_digit_year(get(0), parts.first().map(|p| p.1).unwrap_or(4));
    let date = NaiveDate::from_ymd_opt(
        i32::try_from(year).ok()?,
        u32::try_from(get(1)).ok()?,
        u32::try_from(get(2)).ok()?,
    )?;
    if !(1..=9999).contains(&year) {
        return None;
    }
    // `frac` is 1_000_000 when a seventh digit rounded up (see `micros_of`).
    let time = NaiveTime::from_hms_micro_opt(
        u32::try_from(get(3)).ok()?,
        u32::try_from(get(4)).ok()?,
        u32::try_from(get(5)).ok()?,
        frac.min(999_999),
    )?;
    let dt = date.and_time(time) + Duration::microseconds(i64::from(frac.saturating_sub(999_999)));
    Some(Temporal {
        dt: in_range(dt)?,
        has_time,
    })
}

/// Parses a fraction's digits as microseconds. A seventh digit rounds (half
/// up) as MySQL 8 rounds nanoseconds, so `.9999995` is 1_000_000 (a carry
/// into the next second, which the callers add); under `sql_mode`
/// TIME_TRUNCATE_FRACTIONAL the extra digits are cut instead.
fn micros_of(digits: &str) -> u32 {
    let mut s: String = digits.chars().take(6).collect();
    while s.len() < 6 {
        s.push('0');
    }
    let micros: u32 = s.parse().unwrap_or(0);
    let round_up = !truncate_fractional()
        && digits
            .chars()
            .nth(6)
            .is_some_and(|c| c.is_ascii_digit() && c >= '5');
    micros + u32::from(round_up)
}

/// MySQL's zero date `'0000-00-00'` as Canyon holds it: a date no SQL text
/// or arithmetic reaches (see the module doc's invariants).
pub const ZERO_DATE: NaiveDate = match NaiveDate::from_ymd_opt(-1, 1, 1) {
    Some(d) => d,
    None => panic!("year -1 is within chrono's range"),
};

/// `'0000-00-00 00:00:00'`: [`ZERO_DATE`]'s midnight.
pub const ZERO_DATETIME: NaiveDateTime = ZERO_DATE.and_time(NaiveTime::MIN);

/// Whether `d` is the zero date.
pub fn is_zero_date(d: &NaiveDate) -> bool {
    *d == ZERO_DATE
}

/// Whether `dt` is the zero date (as a DATETIME).
pub fn is_zero(dt: &NaiveDateTime) -> bool {
    *dt == ZERO_DATETIME
}

/// Whether the running statement may store the zero date, from its
/// `sql_mode` (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZeroDates {
    /// No NO_ZERO_DATE: an ordinary value.
    Allowed,
    /// NO_ZERO_DATE: storing it is warning 1292, an error in strict mode.
    Warned,
    /// NO_ZERO_DATE in a strict mode: a column DEFAULT of the zero date is
    /// 1067 (a stored value is warned, and the strict mode's end of
    /// statement makes that the error).
    Refused,
}

impl ZeroDates {
    /// The policy of a `sql_mode` value (the comma-separated flags, any case).
    pub fn of_sql_mode(mode: &[u8]) -> ZeroDates {
        let has = |flag: &str| {
            mode.split(|b| *b == b',')
                .any(|m| m.trim_ascii().eq_ignore_ascii_case(flag.as_bytes()))
        };
        match (
            has("NO_ZERO_DATE"),
            has("STRICT_TRANS_TABLES") || has("STRICT_ALL_TABLES"),
        ) {
            (false, _) => ZeroDates::Allowed,
            (true, false) => ZeroDates::Warned,
            (true, true) => ZeroDates::Refused,
        }
    }
}

thread_local! {
    /// Whether the running statement's `sql_mode` has TIME_TRUNCATE_FRACTIONAL
    /// (set by the session for each statement: see [`set_truncate_fractional`]).
    static TRUNCATE_FRACTIONAL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The running statement's [`ZeroDates`] (see [`set_zero_dates`]).
    static ZERO_DATES: std::cell::Cell<ZeroDates> = const { std::cell::Cell::new(ZeroDates::Refused) };
}

/// Records the zero-date policy of the statement about to run on this
/// thread, for the same reason as [`set_truncate_fractional`]: a value's
/// coercion into a DATE column, and a column DEFAULT's check, have no session
/// to ask. MySQL 8's default modes (NO_ZERO_DATE, strict) until set.
pub fn set_zero_dates(z: ZeroDates) {
    ZERO_DATES.with(|c| c.set(z));
}

/// The running statement's zero-date policy (see [`set_zero_dates`]).
pub fn zero_dates() -> ZeroDates {
    ZERO_DATES.with(|c| c.get())
}

/// Records whether the statement about to run on this thread truncates
/// fractional seconds (`sql_mode` TIME_TRUNCATE_FRACTIONAL) instead of
/// rounding them. The coercion of a value into a DATETIME(fsp), TIMESTAMP(fsp)
/// or TIME(fsp) column has no session to ask, and statements run start to end
/// on one thread, so the session sets this before each statement.
pub fn set_truncate_fractional(on: bool) {
    TRUNCATE_FRACTIONAL.with(|c| c.set(on));
}

/// Whether fractional seconds are truncated rather than rounded (see
/// [`set_truncate_fractional`]).
pub fn truncate_fractional() -> bool {
    TRUNCATE_FRACTIONAL.with(|c| c.get())
}

/// Rounds (MySQL 8's default) or truncates (TIME_TRUNCATE_FRACTIONAL) a
/// signed count of microseconds to `fsp` fractional digits, 0 to 6: halves
/// round away from zero, so `-00:00:01.5` is `-00:00:02` at fsp 0.
pub fn round_micros(micros: i64, fsp: u8) -> i64 {
    let unit = 10i64.pow(6 - u32::from(fsp.min(6)));
    let m = micros.unsigned_abs() as i64;
    let cut = m - m % unit;
    let r = if !truncate_fractional() && m % unit * 2 >= unit {
        cut + unit
    } else {
        cut
    };
    if micros < 0 {
        -r
    } else {
        r
    }
}

/// A DATETIME rounded (or truncated) to `fsp` fractional digits, as a
/// DATETIME(fsp) / TIMESTAMP(fsp) column stores it: nanoseconds first round
/// to microseconds, then microseconds to `fsp` digits; a carry moves into the
/// next second, minute, day or year (`23:59:59.9999995` is the next day's
/// midnight at any fsp). `None` past year 9999.
pub fn round_datetime(dt: NaiveDateTime, fsp: u8) -> Option<NaiveDateTime> {
    if is_zero(&dt) {
        return Some(dt);
    }
    let nanos = i64::from(dt.nanosecond() % 1_000_000_000);
    let mut micros = nanos / 1000;
    if !truncate_fractional() && nanos % 1000 >= 500 {
        micros += 1;
    }
    let whole = dt.with_nanosecond(0)?;
    let out = whole + Duration::microseconds(round_micros(micros, fsp));
    in_range(out)
}

/// The statement's time as CURRENT_TIMESTAMP(fsp) gives it to a column of
/// precision `fsp` (a DEFAULT or ON UPDATE): cut to `fsp` digits, never
/// rounded up (NOW(0) at 10:00:00.7 is 10:00:00, as in MySQL).
pub fn truncate_datetime(dt: NaiveDateTime, fsp: u8) -> NaiveDateTime {
    let unit = 10u32.pow(9 - u32::from(fsp.min(6)));
    dt.with_nanosecond(dt.nanosecond() / unit * unit)
        .unwrap_or(dt)
}

/// Parses a temporal string as MySQL does: `YYYY-MM-DD[ HH:MM:SS[.ffffff]]` with
/// any punctuation as delimiters, `T` between date and time, two-digit years, or
/// the delimiter-free forms `YYYYMMDD[HHMMSS]` / `YYMMDD[HHMMSS]`. `None` when the
/// text is not a valid date (MySQL: NULL with warning 1292).
pub fn parse_temporal(text: &[u8]) -> Option<Temporal> {
    let s = std::str::from_utf8(text).ok()?.trim();
    if s.is_empty() {
        return None;
    }
    let (main, frac) = s.split_once('.').unwrap_or((s, ""));
    let all_digits = |x: &str| x.bytes().all(|c| c.is_ascii_digit());
    if !main.is_empty() && all_digits(main) && all_digits(frac) {
        return parse_digits(main, micros_of(frac));
    }
    // Delimited form: digit groups separated by single punctuation characters.
    let mut parts: Vec<(i64, usize)> = Vec::new();
    let mut frac_us = 0u32;
    let mut has_time = false;
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if start == i {
            return None;
        }
        let group = &s[start..i];
        if parts.len() == 6 {
            // The fraction after the seconds.
            frac_us = micros_of(group);
            if i != bytes.len() {
                return None;
            }
            break;
        }
        parts.push((group.parse().ok()?, group.len()));
        if i == bytes.len() {
            break;
        }
        let delim = bytes[i];
        if delim.is_ascii_alphanumeric() && delim != b'T' {
            return None;
        }
        if parts.len() == 3 {
            has_time = true;
            // Date and time may be separated by spaces or 'T'.
            while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'T') {
                i += 1;
            }
            if i == start + group.len() {
                i += 1;
            }
        } else {
            if parts.len() == 6 && delim != b'.' {
                return None;
            }
            i += 1;
        }
        if i == bytes.len() {
            break;
        }
    }
    if parts.len() < 3 {
        return None;
    }
    make(&parts, frac_us, has_time && parts.len() > 3)
}

fn parse_digits(d: &str, frac: u32) -> Option<Temporal> {
    let n = |a: usize, b: usize| -> (i64, usize) { (d[a..b].parse().unwrap_or(0), b - a) };
    match d.len() {
        8 => make(&[n(0, 4), n(4, 6), n(6, 8)], 0, false),
        6 => make(&[n(0, 2), n(2, 4), n(4, 6)], 0, false),
        14 => make(
            &[n(0, 4), n(4, 6), n(6, 8), n(8, 10), n(10, 12), n(12, 14)],
            frac,
            true,
        ),
        12 => make(
            &[n(0, 2), n(2, 4), n(4, 6), n(6, 8), n(8, 10), n(10, 12)],
            frac,
            true,
        ),
        _ => None,
    }
}

/// A number in temporal context: `YYYYMMDD`, `YYMMDD`, `YYYYMMDDHHMMSS`, ...
pub fn parse_temporal_number(n: i64) -> Option<Temporal> {
    if n == 0 {
        // MySQL: 0 in a date context is the zero date.
        return Some(Temporal {
            dt: ZERO_DATETIME,
            has_time: false,
        });
    }
    if n < 0 {
        return None;
    }
    let s = n.to_string();
    match s.len() {
        // MySQL pads short dates: 5-digit and 7-digit numbers are YMMDD / YYYMMDD.
        5 | 7 => parse_digits(&format!("0{s}"), 0),
        13 => parse_digits(&format!("0{s}"), 0),
        _ => parse_digits(&s, 0),
    }
}

/// A time of day or duration in microseconds (may be negative or above 24h).
///
/// Parses `[-][D ]HH:MM[:SS[.ffffff]]`, `HHMMSS`, or a datetime (whose time part
/// is taken).
pub fn parse_time(text: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(text).ok()?.trim();
    // Only a text with a date part is read as a datetime: a '-' or '/'
    // after the sign, or twelve digits and more (YYMMDDHHMMSS). Otherwise
    // '01:01:01.01' read as 2001-01-01 01:00:00 and '05 05' as a date.
    let unsigned = s.strip_prefix('-').unwrap_or(s);
    let dated = unsigned.contains(['-', '/'])
        || unsigned.len() >= 12 && unsigned.bytes().all(|c| c.is_ascii_digit());
    if let Some(t) = parse_temporal(s.as_bytes()).filter(|_| dated) {
        if t.has_time || s.contains('-') {
            return Some(time_of_day_micros(&t.dt));
        }
    }
    let (neg, body) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let (days, body, days_given) = match body.split_once(' ') {
        Some((d, rest)) => (d.parse::<i64>().ok()?, rest.trim(), true),
        None => (0, body, false),
    };
    let (main, frac) = match body.split_once('.') {
        Some((m, f)) => (m, micros_of(f)),
        None => (body, 0),
    };
    let fields: Vec<&str> = main.split(':').collect();
    let num = |x: &str| -> Option<i64> {
        if x.is_empty() || !x.bytes().all(|c| c.is_ascii_digit()) || x.len() > 10 {
            None
        } else {
            x.parse().ok()
        }
    };
    let (h, m, sec) = match fields.as_slice() {
        [h, m] => (num(h)?, num(m)?, 0),
        [h, m, s] => (num(h)?, num(m)?, num(s)?),
        // 'D HH': hours after a day count (MySQL: '05 05' is 125:00:00).
        [h] if days_given => (num(h)?, 0, 0),
        [hms] => {
            let v = num(hms)?;
            (v / 10000, v / 100 % 100, v % 100)
        }
        _ => return None,
    };
    if m > 59 || sec > 59 {
        return None;
    }
    let total = ((days * 24 + h) * 3600 + m * 60 + sec) * 1_000_000 + frac as i64;
    Some(if neg { -total } else { total })
}

/// The largest TIME, 838:59:59, in microseconds (the least is its negation).
pub const TIME_MAX_MICROS: i64 = (838 * 3600 + 59 * 60 + 59) * 1_000_000;

/// How a value stored into a TIME column fit it: MySQL's `str_to_time` /
/// `number_to_time` warnings. The caller ([`crate::types::sqltype::coerce`]
/// and `coerce_or_clip`) turns them into strict mode's error or, outside
/// it, the warning of the value stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeFit {
    /// Read whole, within ±838:59:59.
    Exact,
    /// Text after the time (`'12.45a'` is 00:00:12, `'1:2:3:4'` 01:02:03),
    /// or no time at all, or minutes or seconds past 59 (`'-838:59:60'`,
    /// the number 1234567): the value is what could be read, 00:00:00 for
    /// the last two. Warning 1265 "Data truncated"; strict mode's error 1292.
    Truncated,
    /// Past ±838:59:59 (`'-850:00:00'`, 8390000): the value is the nearest
    /// end. Warning (and strict mode's error) 1264.
    OutOfRange,
}

/// Clamps `micros` to the TIME range, saying whether it had to.
pub fn clamp_time(micros: i64, fit: TimeFit) -> (i64, TimeFit) {
    if micros.abs() > TIME_MAX_MICROS {
        (micros.signum() * TIME_MAX_MICROS, TimeFit::OutOfRange)
    } else {
        (micros, fit)
    }
}

/// The time a TIME column stores for the text `text`, and how it fit
/// (not yet rounded to the column's fsp, nor clamped: see [`clamp_time`]).
///
/// What [`parse_time`] reads is exact. Otherwise, as MySQL's `str_to_time`,
/// the longest prefix that reads as a time: `[-][D ]H[:M[:S]][.f]` or the
/// digits `[H]HMMSS[.f]`; minutes or seconds past 59 make it 00:00:00, and
/// so does a date that is no date (`'2009-13-45 10:00'`).
pub fn store_time_text(text: &[u8]) -> (i64, TimeFit) {
    let zero = (0, TimeFit::Truncated);
    let Ok(s) = std::str::from_utf8(text) else {
        return zero;
    };
    let s = s.trim();
    // parse_time reads past the fraction's digits ('12.45a' is 12.45 s):
    // such text is read here, as cut.
    let clean = s
        .split_once('.')
        .is_none_or(|(_, f)| f.bytes().all(|c| c.is_ascii_digit()));
    if let Some(us) = parse_time(text).filter(|_| clean) {
        return (us, TimeFit::Exact);
    }
    let (neg, body) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    if body.contains(['-', '/']) {
        // A date part (parse_time reads a valid one).
        return zero;
    }
    // The leading digits of `t` (at most 10, as parse_time takes), and the rest.
    fn digits(t: &str) -> Option<(i64, &str)> {
        let n = t.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 || n > 10 {
            return None;
        }
        Some((t[..n].parse().ok()?, &t[n..]))
    }
    let Some((first, mut rest)) = digits(body) else {
        return zero;
    };
    let (h, m, sec) = if rest.starts_with(':') || rest.starts_with(' ') {
        // `D H...` or `H:M...`: fields after the first, while they read.
        let mut hours = first;
        if let Some(after) = rest.strip_prefix(' ') {
            match digits(after) {
                Some((h, r)) => {
                    hours = first * 24 + h;
                    rest = r;
                }
                None => return zero,
            }
        }
        let field = |rest: &mut &str| -> i64 {
            match rest.strip_prefix(':').and_then(digits) {
                Some((v, r)) => {
                    *rest = r;
                    v
                }
                None => 0,
            }
        };
        let m = field(&mut rest);
        let sec = field(&mut rest);
        (hours, m, sec)
    } else {
        (first / 10000, first / 100 % 100, first % 100)
    };
    let mut frac = 0;
    if let Some(after) = rest.strip_prefix('.') {
        let n = after.bytes().take_while(u8::is_ascii_digit).count();
        frac = micros_of(&after[..n]) as i64;
        rest = &after[n..];
    }
    if m > 59 || sec > 59 {
        return zero;
    }
    let total = (h * 3600 + m * 60 + sec) * 1_000_000 + frac;
    let fit = if rest.trim().is_empty() {
        TimeFit::Exact
    } else {
        TimeFit::Truncated
    };
    (if neg { -total } else { total }, fit)
}

/// The time a TIME column stores for a number whose integer part's
/// magnitude is `int` (`None` past `u64`) and fraction `frac_micros`, as
/// MariaDB's `number_to_time` reads it: `[H]HHMMSS[.f]`; a positive
/// number of eight digits or more is a datetime (`20090101101112` is
/// 10:11:12), 00:00:00 when it is no valid one; past ±838:59:59 otherwise
/// the nearest end. (MySQL 8 takes a datetime from eleven digits only and
/// clamps below that.)
pub fn store_time_number(neg: bool, int: Option<u64>, frac_micros: i64) -> (i64, TimeFit) {
    let Some(n) = int.filter(|n| *n <= i64::MAX as u64) else {
        let end = if neg {
            -TIME_MAX_MICROS
        } else {
            TIME_MAX_MICROS
        };
        return (end, TimeFit::OutOfRange);
    };
    if !neg && n > 9_999_999 {
        return match parse_temporal_number(n as i64) {
            Some(t) => (time_of_day_micros(&t.dt), TimeFit::Exact),
            _ => (0, TimeFit::Truncated),
        };
    }
    // Minutes and seconds first: 8385960 is no time (00:00:00), 8390000
    // is past the range (838:59:59).
    if n % 100 > 59 || n / 100 % 100 > 59 {
        return (0, TimeFit::Truncated);
    }
    if n > 8_385_959 {
        let end = if neg {
            -TIME_MAX_MICROS
        } else {
            TIME_MAX_MICROS
        };
        return (end, TimeFit::OutOfRange);
    }
    let n = n as i64;
    let total = (n / 10000 * 3600 + n / 100 % 100 * 60 + n % 100) * 1_000_000 + frac_micros;
    (if neg { -total } else { total }, TimeFit::Exact)
}

/// Microseconds since midnight.
pub fn time_of_day_micros(dt: &NaiveDateTime) -> i64 {
    dt.num_seconds_from_midnight() as i64 * 1_000_000 + (dt.nanosecond() / 1000) as i64
}

/// Formats a duration in microseconds as MySQL shows a TIME:
/// `[-]HH:MM:SS[.ffffff]`.
pub fn format_time(micros: i64) -> String {
    let sign = if micros < 0 { "-" } else { "" };
    let m = micros.unsigned_abs();
    let (secs, frac) = (m / 1_000_000, m % 1_000_000);
    let base = format!(
        "{sign}{:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    );
    if frac == 0 {
        base
    } else {
        format!("{base}.{frac:06}")
    }
}

/// Formats a TIME as a TIME(fsp) column holds it: exactly `fsp` fractional
/// digits (`12:00:00.500` at fsp 3, `12:00:00` at fsp 0). `micros` must
/// already be rounded to `fsp` ([`round_micros`]).
pub fn format_time_fsp(micros: i64, fsp: u8) -> String {
    let sign = if micros < 0 { "-" } else { "" };
    let m = micros.unsigned_abs();
    let whole = format_time((m - m % 1_000_000) as i64);
    if fsp == 0 {
        return format!("{sign}{whole}");
    }
    let frac = format!("{:06}", m % 1_000_000);
    format!("{sign}{whole}.{}", &frac[..usize::from(fsp.min(6))])
}

fn in_range(dt: NaiveDateTime) -> Option<NaiveDateTime> {
    (1..=9999).contains(&dt.year()).then_some(dt)
}

/// Adds `amount` units (for SECOND and MICROSECOND, `micros` carries the
/// fractional amount in microseconds instead). `None` on overflow (MySQL: NULL,
/// warning 1441).
pub fn add_interval(dt: NaiveDateTime, unit: Unit, amount: i64) -> Option<NaiveDateTime> {
    if let Some(per) = unit.months() {
        let total = (dt.year() as i64)
            .checked_mul(12)?
            .checked_add(dt.month0() as i64)?
            .checked_add(amount.checked_mul(per)?)?;
        let (year, month0) = (total.div_euclid(12), total.rem_euclid(12));
        if !(1..=9999).contains(&year) {
            return None;
        }
        let year = i32::try_from(year).ok()?;
        let month = month0 as u32 + 1;
        let day = dt.day().min(days_in_month(year, month));
        let date = NaiveDate::from_ymd_opt(year, month, day)?;
        return Some(date.and_time(dt.time()));
    }
    let micros = amount.checked_mul(unit.micros())?;
    in_range(dt.checked_add_signed(Duration::microseconds(micros))?)
}

/// Adds a number of microseconds (SECOND intervals with a fraction).
pub fn add_micros(dt: NaiveDateTime, micros: i64) -> Option<NaiveDateTime> {
    in_range(dt.checked_add_signed(Duration::microseconds(micros))?)
}

/// Days in a month of a year.
pub fn days_in_month(year: i32, month: u32) -> u32 {
    let (ny, nm) = if month == 12 {
        (year + 1, 1)
    } else {
        (year, month + 1)
    };
    NaiveDate::from_ymd_opt(ny, nm, 1)
        .and_then(|d| d.pred_opt())
        .map(|d| d.day())
        .unwrap_or(31)
}

/// MySQL's day number (`TO_DAYS`): days since year 0 of the proleptic calendar.
pub fn day_number(d: NaiveDate) -> i64 {
    d.num_days_from_ce() as i64 + 365
}

/// The date of a MySQL day number (`FROM_DAYS`).
pub fn from_day_number(n: i64) -> Option<NaiveDate> {
    NaiveDate::from_num_days_from_ce_opt(i32::try_from(n - 365).ok()?)
}

/// TIMESTAMPDIFF(unit, a, b): whole units from `a` to `b` (negative when `b` is
/// earlier), as MySQL's `calc_time_diff` counts them.
pub fn timestamp_diff(unit: Unit, a: NaiveDateTime, b: NaiveDateTime) -> i64 {
    if let Some(per) = unit.months() {
        let (beg, end, sign) = if b >= a { (a, b, 1) } else { (b, a, -1) };
        let mut months =
            (end.year() as i64 - beg.year() as i64) * 12 + end.month() as i64 - beg.month() as i64;
        if (end.day(), time_of_day_micros(&end)) < (beg.day(), time_of_day_micros(&beg)) {
            months -= 1;
        }
        return sign * months / per;
    }
    let micros = (b - a).num_microseconds().unwrap_or(i64::MAX);
    micros / unit.micros()
}

// ----------------------------------------------------------------------------------
// Weeks (MySQL's calc_week)
// ----------------------------------------------------------------------------------

const WEEK_MONDAY_FIRST: u32 = 1;
const WEEK_YEAR: u32 = 2;
const WEEK_FIRST_WEEKDAY: u32 = 4;

/// The behaviour flags for WEEK(d, mode) (MySQL's `week_mode`).
pub fn week_mode(mode: u32) -> u32 {
    let mut f = mode & 7;
    if f & WEEK_MONDAY_FIRST == 0 {
        f ^= WEEK_FIRST_WEEKDAY;
    }
    f
}

fn weekday_of(daynr: i64, sunday_first: bool) -> i64 {
    (daynr + 5 + sunday_first as i64).rem_euclid(7)
}

fn days_in_year(y: i64) -> i64 {
    if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 {
        366
    } else {
        365
    }
}

/// MySQL's `calc_week`: (week number, the year it belongs to) for behaviour
/// flags `b` (see [`week_mode`]).
pub fn calc_week(d: NaiveDate, b: u32) -> (i64, i64) {
    let daynr = day_number(d);
    let mut first_daynr = day_number(d.with_ordinal(1).unwrap_or(d));
    let monday_first = b & WEEK_MONDAY_FIRST != 0;
    let mut week_year = b & WEEK_YEAR != 0;
    let first_weekday = b & WEEK_FIRST_WEEKDAY != 0;
    let mut weekday = weekday_of(first_daynr, !monday_first);
    let mut year = d.year() as i64;
    if d.month() == 1 && (d.day() as i64) <= 7 - weekday {
        if !week_year && ((first_weekday && weekday != 0) || (!first_weekday && weekday >= 4)) {
            return (0, year);
        }
        week_year = true;
        year -= 1;
        let days = days_in_year(year);
        first_daynr -= days;
        weekday = (weekday + 53 * 7 - days).rem_euclid(7);
    }
    let days = if (first_weekday && weekday != 0) || (!first_weekday && weekday >= 4) {
        daynr - (first_daynr + (7 - weekday))
    } else {
        daynr - (first_daynr - weekday)
    };
    if week_year && days >= 52 * 7 {
        let wd = (weekday + days_in_year(year)).rem_euclid(7);
        if (!first_weekday && wd < 4) || (first_weekday && wd == 0) {
            return (1, year + 1);
        }
    }
    (days / 7 + 1, year)
}

// ----------------------------------------------------------------------------------
// DATE_FORMAT / STR_TO_DATE
// ----------------------------------------------------------------------------------

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// The English month name (1-based month).
pub fn month_name(m: u32) -> &'static str {
    MONTHS
        .get(m.wrapping_sub(1) as usize)
        .copied()
        .unwrap_or("")
}

/// The English day name.
pub fn day_name(d: NaiveDate) -> &'static str {
    DAYS[d.weekday().num_days_from_monday() as usize]
}

fn ordinal_suffix(n: u32) -> &'static str {
    match (n % 100, n % 10) {
        (11..=13, _) => "th",
        (_, 1) => "st",
        (_, 2) => "nd",
        (_, 3) => "rd",
        _ => "th",
    }
}

/// DATE_FORMAT of the zero date: the numeric parts of the date and time
/// print as zeros (`%Y-%m-%d` is `0000-00-00`); a name or week of it
/// (`%W`, `%M`, `%U`, ...) has none, and the result is NULL (`None`), as in
/// MySQL.
pub fn format_zero(fmt: &str) -> Option<String> {
    let mut out = String::with_capacity(fmt.len() + 16);
    let mut chars = fmt.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(spec) = chars.next() else { break };
        match spec {
            'Y' => out.push_str("0000"),
            'y' | 'm' | 'd' | 'H' | 'i' | 'S' | 's' => out.push_str("00"),
            'c' | 'e' | 'k' => out.push('0'),
            'h' | 'I' => out.push_str("12"),
            'l' => out.push_str("12"),
            'f' => out.push_str("000000"),
            'p' => out.push_str("AM"),
            'r' => out.push_str("12:00:00 AM"),
            'T' => out.push_str("00:00:00"),
            'a' | 'b' | 'D' | 'j' | 'M' | 'U' | 'u' | 'V' | 'v' | 'W' | 'w' | 'X' | 'x' => {
                return None
            }
            other => out.push(other),
        }
    }
    Some(out)
}

/// DATE_FORMAT: MySQL's `%` specifiers; an unknown specifier prints its letter.
pub fn format(dt: &NaiveDateTime, fmt: &str) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(fmt.len() + 16);
    let mut chars = fmt.chars();
    let d = dt.date();
    let h12 = |h: u32| if h.is_multiple_of(12) { 12 } else { h % 12 };
    let ampm = |h: u32| if h < 12 { "AM" } else { "PM" };
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(spec) = chars.next() else { break };
        // `write!` to a String cannot fail.
        let _ = match spec {
            'a' => write!(out, "{}", &day_name(d)[..3]),
            'b' => write!(out, "{}", &month_name(d.month())[..3]),
            'c' => write!(out, "{}", d.month()),
            'D' => write!(out, "{}{}", d.day(), ordinal_suffix(d.day())),
            'd' => write!(out, "{:02}", d.day()),
            'e' => write!(out, "{}", d.day()),
            'f' => write!(out, "{:06}", dt.nanosecond() / 1000),
            'H' => write!(out, "{:02}", dt.hour()),
            'h' | 'I' => write!(out, "{:02}", h12(dt.hour())),
            'i' => write!(out, "{:02}", dt.minute()),
            'j' => write!(out, "{:03}", d.ordinal()),
            'k' => write!(out, "{}", dt.hour()),
            'l' => write!(out, "{}", h12(dt.hour())),
            'M' => write!(out, "{}", month_name(d.month())),
            'm' => write!(out, "{:02}", d.month()),
            'p' => write!(out, "{}", ampm(dt.hour())),
            'r' => write!(
                out,
                "{:02}:{:02}:{:02} {}",
                h12(dt.hour()),
                dt.minute(),
                dt.second(),
                ampm(dt.hour())
            ),
            'S' | 's' => write!(out, "{:02}", dt.second()),
            'T' => write!(
                out,
                "{:02}:{:02}:{:02}",
                dt.hour(),
                dt.minute(),
                dt.second()
            ),
            'U' => write!(out, "{:02}", calc_week(d, WEEK_FIRST_WEEKDAY).0),
            'u' => write!(out, "{:02}", calc_week(d, WEEK_MONDAY_FIRST).0),
            'V' => write!(out, "{:02}", calc_week(d, WEEK_YEAR | WEEK_FIRST_WEEKDAY).0),
            'v' => write!(out, "{:02}", calc_week(d, WEEK_YEAR | WEEK_MONDAY_FIRST).0),
            'X' => write!(out, "{:04}", calc_week(d, WEEK_YEAR | WEEK_FIRST_WEEKDAY).1),
            'x' => write!(out, "{:04}", calc_week(d, WEEK_YEAR | WEEK_MONDAY_FIRST).1),
            'W' => write!(out, "{}", day_name(d)),
            'w' => write!(out, "{}", d.weekday().num_days_from_sunday()),
            'Y' => write!(out, "{:04}", d.year()),
            'y' => write!(out, "{:02}", d.year().rem_euclid(100)),
            other => write!(out, "{other}"),
        };
    }
    out
}

/// What STR_TO_DATE's format asks for: whether it names date parts, time parts.
pub fn format_parts(fmt: &str) -> (bool, bool) {
    let (mut date, mut time) = (false, false);
    let mut chars = fmt.chars();
    while let Some(c) = chars.next() {
        if c == '%' {
            match chars.next() {
                Some(
                    'a' | 'b' | 'c' | 'D' | 'd' | 'e' | 'j' | 'M' | 'm' | 'U' | 'u' | 'V' | 'v'
                    | 'W' | 'w' | 'X' | 'x' | 'Y' | 'y',
                ) => date = true,
                Some('f' | 'H' | 'h' | 'I' | 'i' | 'k' | 'l' | 'p' | 'r' | 'S' | 's' | 'T') => {
                    time = true
                }
                _ => {}
            }
        }
    }
    (date, time)
}

/// The result of STR_TO_DATE before it is typed by the format.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Parsed {
    /// The date part (defaults to 0000-00-00, which is refused when asked for).
    pub date: Option<NaiveDate>,
    /// Microseconds since midnight.
    pub time: i64,
}

/// STR_TO_DATE(s, fmt). `None` when the string does not match the format or
/// the date is invalid (MySQL: NULL with warning 1411).
pub fn str_to_date(s: &str, fmt: &str) -> Option<Parsed> {
    let mut input = s.trim_start().chars().peekable();
    let mut f = fmt.chars();
    let (mut year, mut month, mut day) = (None::<i64>, None::<i64>, None::<i64>);
    let (mut hour, mut minute, mut second, mut micros) = (0i64, 0i64, 0i64, 0i64);
    let mut pm: Option<bool> = None;
    let mut yday: Option<i64> = None;
    let mut twelve_hour = false;

    fn digits(
        it: &mut std::iter::Peekable<std::str::Chars<'_>>,
        max: usize,
    ) -> Option<(i64, usize)> {
        let mut n = 0i64;
        let mut len = 0;
        while len < max {
            match it.peek() {
                Some(c) if c.is_ascii_digit() => {
                    n = n * 10 + c.to_digit(10).map(i64::from).unwrap_or(0);
                    it.next();
                    len += 1;
                }
                _ => break,
            }
        }
        (len > 0).then_some((n, len))
    }
    fn word(it: &mut std::iter::Peekable<std::str::Chars<'_>>) -> String {
        let mut w = String::new();
        while let Some(c) = it.peek() {
            if c.is_ascii_alphabetic() {
                w.push(*c);
                it.next();
            } else {
                break;
            }
        }
        w
    }
    fn name_index(w: &str, names: &[&str], abbrev: bool) -> Option<i64> {
        names
            .iter()
            .position(|n| {
                if abbrev {
                    n[..3].eq_ignore_ascii_case(w)
                } else {
                    n.eq_ignore_ascii_case(w)
                }
            })
            .map(|i| i as i64)
    }

    while let Some(c) = f.next() {
        if c.is_whitespace() {
            while input.peek().is_some_and(|c| c.is_whitespace()) {
                input.next();
            }
            continue;
        }
        if c != '%' {
            if input.next() != Some(c) {
                return None;
            }
            continue;
        }
        let spec = f.next()?;
        match spec {
            'Y' => {
                let (v, len) = digits(&mut input, 4)?;
                year = Some(two_digit_year(v, len));
            }
            'y' => year = Some(two_digit_year(digits(&mut input, 2)?.0, 2)),
            'm' | 'c' => month = Some(digits(&mut input, 2)?.0),
            'd' | 'e' => day = Some(digits(&mut input, 2)?.0),
            'D' => {
                day = Some(digits(&mut input, 2)?.0);
                let _ = word(&mut input);
            }
            'j' => yday = Some(digits(&mut input, 3)?.0),
            'H' | 'k' => hour = digits(&mut input, 2)?.0,
            'h' | 'I' | 'l' => {
                hour = digits(&mut input, 2)?.0;
                twelve_hour = true;
            }
            'i' => minute = digits(&mut input, 2)?.0,
            'S' | 's' => second = digits(&mut input, 2)?.0,
            'f' => {
                let (v, len) = digits(&mut input, 6)?;
                micros = v * 10i64.pow(6 - len as u32);
            }
            'p' => {
                let w = word(&mut input);
                pm = Some(match w.to_ascii_uppercase().as_str() {
                    "AM" => false,
                    "PM" => true,
                    _ => return None,
                });
            }
            'M' => month = Some(name_index(&word(&mut input), &MONTHS, false)? + 1),
            'b' => month = Some(name_index(&word(&mut input), &MONTHS, true)? + 1),
            'W' => {
                name_index(&word(&mut input), &DAYS, false)?;
            }
            'a' => {
                name_index(&word(&mut input), &DAYS, true)?;
            }
            'T' => {
                hour = digits(&mut input, 2)?.0;
                (input.next() == Some(':')).then_some(())?;
                minute = digits(&mut input, 2)?.0;
                (input.next() == Some(':')).then_some(())?;
                second = digits(&mut input, 2)?.0;
            }
            'r' => {
                hour = digits(&mut input, 2)?.0;
                (input.next() == Some(':')).then_some(())?;
                minute = digits(&mut input, 2)?.0;
                (input.next() == Some(':')).then_some(())?;
                second = digits(&mut input, 2)?.0;
                while input.peek().is_some_and(|c| c.is_whitespace()) {
                    input.next();
                }
                let w = word(&mut input);
                pm = Some(w.eq_ignore_ascii_case("PM"));
                twelve_hour = true;
            }
            '%' => {
                if input.next() != Some('%') {
                    return None;
                }
            }
            _ => return None,
        }
    }
    if twelve_hour || pm.is_some() {
        if !(1..=12).contains(&hour) {
            return None;
        }
        hour %= 12;
        if pm == Some(true) {
            hour += 12;
        }
    }
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let time = ((hour * 60 + minute) * 60 + second) * 1_000_000 + micros;
    let date = match (year, month, day, yday) {
        (None, None, None, None) => None,
        (Some(y), None, None, Some(j)) => {
            NaiveDate::from_yo_opt(i32::try_from(y).ok()?, u32::try_from(j).ok()?)
        }
        (y, m, d, _) => Some(NaiveDate::from_ymd_opt(
            i32::try_from(y?).ok()?,
            u32::try_from(m?).ok()?,
            u32::try_from(d?).ok()?,
        )?),
    };
    if let Some(d) = date {
        if !(1..=9999).contains(&d.year()) {
            return None;
        }
    }
    Some(Parsed { date, time })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(s: &str) -> NaiveDateTime {
        parse_temporal(s.as_bytes())
            .expect("valid test datetime")
            .dt
    }

    #[test]
    fn lenient_parsing() {
        assert_eq!(dt("2024-1-5"), dt("2024-01-05 00:00:00"));
        assert_eq!(dt("24-01-05"), dt("2024-01-05"));
        assert_eq!(dt("20240105"), dt("2024-01-05"));
        assert_eq!(dt("2024/01/05 10.11.12"), dt("2024-01-05 10:11:12"));
        assert_eq!(dt("2024-01-05T10:11:12"), dt("2024-01-05 10:11:12"));
        assert!(parse_temporal(b"2024-02-30").is_none());
        assert!(parse_temporal(b"abc").is_none());
        assert!(!parse_temporal(b"2024-01-05").expect("date").has_time);
        assert!(
            parse_temporal(b"2024-01-05 00:00")
                .expect("datetime")
                .has_time
        );
    }

    #[test]
    fn month_arithmetic_clamps_the_day() {
        assert_eq!(
            add_interval(dt("2024-01-31"), Unit::Month, 1),
            Some(dt("2024-02-29"))
        );
        assert_eq!(
            add_interval(dt("2024-02-29"), Unit::Year, 1),
            Some(dt("2025-02-28"))
        );
        assert_eq!(add_interval(dt("9999-12-31"), Unit::Day, 1), None);
    }

    #[test]
    fn timestampdiff_counts_whole_units() {
        let d = timestamp_diff;
        assert_eq!(d(Unit::Month, dt("2024-01-31"), dt("2024-02-29")), 0);
        assert_eq!(d(Unit::Month, dt("2024-01-31"), dt("2024-03-01")), 1);
        assert_eq!(d(Unit::Year, dt("2000-02-29"), dt("2024-02-28")), 23);
        assert_eq!(d(Unit::Month, dt("2024-03-01"), dt("2024-01-31")), -1);
        assert_eq!(d(Unit::Week, dt("2024-01-01"), dt("2024-02-01")), 4);
    }

    #[test]
    fn weeks_match_mysql() {
        let date = |s: &str| dt(s).date();
        assert_eq!(calc_week(date("2024-01-01"), week_mode(0)).0, 0);
        assert_eq!(calc_week(date("2024-01-01"), week_mode(3)).0, 1);
        assert_eq!(
            calc_week(date("2024-01-01"), WEEK_YEAR | WEEK_FIRST_WEEKDAY),
            (53, 2023)
        );
        assert_eq!(
            format(&dt("2024-03-05 14:07:09"), "%U %u %V %v %X %x %D %j %r"),
            "09 10 09 10 2024 2024 5th 065 02:07:09 PM"
        );
    }

    #[test]
    fn str_to_date_formats() {
        let p = str_to_date("01/02/2024", "%m/%d/%Y").expect("parses");
        assert_eq!(p.date, NaiveDate::from_ymd_opt(2024, 1, 2));
        let p = str_to_date("Jan 5 2024 3pm", "%b %e %Y %l%p").expect("parses");
        assert_eq!(p.time, 15 * 3_600_000_000);
        assert!(str_to_date("abc", "%Y").is_none());
    }
}
