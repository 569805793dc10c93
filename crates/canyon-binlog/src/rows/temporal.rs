//! The temporal row formats of MySQL 5.6.4 and later (TIME2, DATETIME2,
//! TIMESTAMP2) and the older DATE and YEAR, which MySQL 8 still writes.
//!
//! The "2" formats are big-endian so that `memcmp` sorts them, and take
//! `fsp` (fractional seconds precision, the column's `(N)`, 0..=6) from the
//! table map. The fraction follows the integer part in 0-3 bytes:
//!
//! ```text
//! fsp        0   1-2             3-4              5-6
//! frac       -   1 byte: µs/10000  2 bytes: µs/100   3 bytes: µs
//! ```
//!
//! * DATE (3 bytes, little-endian): `day | month << 5 | year << 9`.
//! * YEAR (1 byte): `year - 1900`, 0 for the year 0000.
//! * TIMESTAMP2: 4 bytes of seconds since the epoch (UTC), then the fraction.
//! * DATETIME2: 5 bytes, from the top: 1 sign bit (always 1: no negative
//!   datetimes), 17 bits `year * 13 + month`, 5 bits day, 5 bits hour,
//!   6 bits minute, 6 bits second; then the fraction.
//! * TIME2: 3 bytes, from the top: 1 sign bit (1 = non-negative), 1 unused
//!   bit, 10 bits hours, 6 bits minutes, 6 bits seconds; then the fraction.
//!   A negative time is stored as the two's complement of the whole packed
//!   value `(hms << 24) + µs` offset by `0x800000000000`, so with fsp 1-4
//!   its fraction byte(s) count down from the next second: -00:00:01.10 is
//!   `7ffffe.f6`.
//!
//! Microseconds finer than `fsp` are truncated: the stored value was already
//! rounded to the column's precision when it was written.

use crate::wire::{put_be, put_le, Reader};
use crate::Error;

/// Offset added to the integer part of DATETIME2 (its sign bit).
const DATETIMEF_INT_OFS: u64 = 0x80_0000_0000;
/// Offset added to the integer part of TIME2 with fsp 0-4.
const TIMEF_INT_OFS: i64 = 0x80_0000;
/// Offset added to the whole 6-byte TIME2 with fsp 5-6.
const TIMEF_OFS: i64 = 0x8000_0000_0000;

#[cfg(test)]
fn frac_bytes(fsp: u8) -> usize {
    usize::from(fsp).div_ceil(2)
}

/// Microseconds truncated to `fsp` digits.
fn truncate_micros(micros: u32, fsp: u8) -> u32 {
    let unit = 10u32.pow(6 - u32::from(fsp.min(6)));
    micros - micros % unit
}

/// Writes the fraction of a non-negative DATETIME2 / TIMESTAMP2.
fn put_frac(out: &mut Vec<u8>, micros: u32, fsp: u8) {
    match fsp {
        0 => {}
        1 | 2 => out.push((micros / 10_000) as u8),
        3 | 4 => put_be(out, u64::from(micros / 100), 2),
        _ => put_be(out, u64::from(micros), 3),
    }
}

fn get_frac(r: &mut Reader<'_>, fsp: u8) -> Result<u32, Error> {
    Ok(match fsp {
        0 => 0,
        1 | 2 => r.u8("fraction")? as u32 * 10_000,
        3 | 4 => r.be(2, "fraction")? as u32 * 100,
        _ => r.be(3, "fraction")? as u32,
    })
}

fn check_fsp(fsp: u8) -> Result<(), Error> {
    if fsp > 6 {
        return Err(Error::Invalid(format!(
            "fractional precision {fsp} is over 6"
        )));
    }
    Ok(())
}

/// Bytes of a TIME2 / DATETIME2 / TIMESTAMP2 value.
#[cfg(test)]
pub(crate) fn time2_len(fsp: u8) -> usize {
    3 + frac_bytes(fsp)
}
#[cfg(test)]
pub(crate) fn datetime2_len(fsp: u8) -> usize {
    5 + frac_bytes(fsp)
}
#[cfg(test)]
pub(crate) fn timestamp2_len(fsp: u8) -> usize {
    4 + frac_bytes(fsp)
}

pub(crate) fn encode_date(out: &mut Vec<u8>, year: u16, month: u8, day: u8) -> Result<(), Error> {
    if year > 9999 || month > 12 || day > 31 {
        return Err(Error::Invalid(format!(
            "{year:04}-{month:02}-{day:02} is not a DATE"
        )));
    }
    let v = u64::from(day) | u64::from(month) << 5 | u64::from(year) << 9;
    put_le(out, v, 3);
    Ok(())
}

pub(crate) fn decode_date(r: &mut Reader<'_>) -> Result<(u16, u8, u8), Error> {
    let v = r.le(3, "DATE")?;
    Ok(((v >> 9) as u16, ((v >> 5) & 0xf) as u8, (v & 0x1f) as u8))
}

pub(crate) fn encode_year(out: &mut Vec<u8>, year: u16) -> Result<(), Error> {
    match year {
        0 => out.push(0),
        1901..=2155 => out.push((year - 1900) as u8),
        _ => return Err(Error::Invalid(format!("{year} is not a YEAR"))),
    }
    Ok(())
}

pub(crate) fn decode_year(r: &mut Reader<'_>) -> Result<u16, Error> {
    Ok(match r.u8("YEAR")? {
        0 => 0,
        y => 1900 + u16::from(y),
    })
}

/// A DATETIME's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DateTime {
    pub year: u16,
    pub month: u8,
    pub day: u8,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub micros: u32,
}

pub(crate) fn encode_datetime2(out: &mut Vec<u8>, dt: DateTime, fsp: u8) -> Result<(), Error> {
    check_fsp(fsp)?;
    if dt.year > 9999
        || dt.month > 12
        || dt.day > 31
        || dt.hour > 23
        || dt.minute > 59
        || dt.second > 59
        || dt.micros > 999_999
    {
        return Err(Error::Invalid(format!("{dt:?} is not a DATETIME")));
    }
    let ym = u64::from(dt.year) * 13 + u64::from(dt.month);
    let ymd = ym << 5 | u64::from(dt.day);
    let hms = u64::from(dt.hour) << 12 | u64::from(dt.minute) << 6 | u64::from(dt.second);
    put_be(out, (ymd << 17 | hms) + DATETIMEF_INT_OFS, 5);
    put_frac(out, truncate_micros(dt.micros, fsp), fsp);
    Ok(())
}

pub(crate) fn decode_datetime2(r: &mut Reader<'_>, fsp: u8) -> Result<DateTime, Error> {
    check_fsp(fsp).map_err(|e| Error::Malformed(e.to_string()))?;
    let v = r.be(5, "DATETIME2")?;
    let Some(int) = v.checked_sub(DATETIMEF_INT_OFS) else {
        return Err(Error::Malformed("negative DATETIME2".into()));
    };
    let ymd = int >> 17;
    let hms = int & ((1 << 17) - 1);
    let ym = ymd >> 5;
    Ok(DateTime {
        year: (ym / 13) as u16,
        month: (ym % 13) as u8,
        day: (ymd & 0x1f) as u8,
        hour: (hms >> 12) as u8,
        minute: ((hms >> 6) & 0x3f) as u8,
        second: (hms & 0x3f) as u8,
        micros: get_frac(r, fsp)?,
    })
}

pub(crate) fn encode_timestamp2(
    out: &mut Vec<u8>,
    secs: i64,
    micros: u32,
    fsp: u8,
) -> Result<(), Error> {
    check_fsp(fsp)?;
    let secs = u32::try_from(secs)
        .map_err(|_| Error::Invalid(format!("{secs} is outside TIMESTAMP's range")))?;
    if micros > 999_999 {
        return Err(Error::Invalid(format!("{micros} microseconds")));
    }
    put_be(out, u64::from(secs), 4);
    put_frac(out, truncate_micros(micros, fsp), fsp);
    Ok(())
}

pub(crate) fn decode_timestamp2(r: &mut Reader<'_>, fsp: u8) -> Result<(i64, u32), Error> {
    let secs = r.be(4, "TIMESTAMP2")? as i64;
    Ok((secs, get_frac(r, fsp)?))
}

/// A TIME's fields (hours up to 838 in SQL; the format holds 1023).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Time {
    pub negative: bool,
    pub hours: u16,
    pub minutes: u8,
    pub seconds: u8,
    pub micros: u32,
}

pub(crate) fn encode_time2(out: &mut Vec<u8>, t: Time, fsp: u8) -> Result<(), Error> {
    check_fsp(fsp)?;
    if t.hours > 1023 || t.minutes > 59 || t.seconds > 59 || t.micros > 999_999 {
        return Err(Error::Invalid(format!("{t:?} is not a TIME")));
    }
    let micros = truncate_micros(t.micros, fsp);
    let hms = i64::from(t.hours) << 12 | i64::from(t.minutes) << 6 | i64::from(t.seconds);
    let mut packed = (hms << 24) + i64::from(micros);
    if t.negative {
        packed = -packed;
    }
    // MY_PACKED_TIME_GET_INT_PART / _FRAC_PART: an arithmetic shift and a
    // remainder that keeps the sign, as in C.
    let int = packed >> 24;
    let frac = packed % (1 << 24);
    match fsp {
        0 => put_be(out, (int + TIMEF_INT_OFS) as u64, 3),
        1 | 2 => {
            put_be(out, (int + TIMEF_INT_OFS) as u64, 3);
            out.push((frac / 10_000) as i8 as u8);
        }
        3 | 4 => {
            put_be(out, (int + TIMEF_INT_OFS) as u64, 3);
            put_be(out, u64::from((frac / 100) as i16 as u16), 2);
        }
        _ => put_be(out, (packed + TIMEF_OFS) as u64, 6),
    }
    Ok(())
}

pub(crate) fn decode_time2(r: &mut Reader<'_>, fsp: u8) -> Result<Time, Error> {
    let packed: i64 = match fsp {
        0 => (r.be(3, "TIME2")? as i64 - TIMEF_INT_OFS) << 24,
        1 | 2 => {
            let mut int = r.be(3, "TIME2")? as i64 - TIMEF_INT_OFS;
            let mut frac = i64::from(r.u8("TIME2 fraction")?);
            if int < 0 && frac != 0 {
                // Negative values count their fraction down from the next
                // second (see the module doc).
                int += 1;
                frac -= 0x100;
            }
            (int << 24) + frac * 10_000
        }
        3 | 4 => {
            let mut int = r.be(3, "TIME2")? as i64 - TIMEF_INT_OFS;
            let mut frac = r.be(2, "TIME2 fraction")? as i64;
            if int < 0 && frac != 0 {
                int += 1;
                frac -= 0x10000;
            }
            (int << 24) + frac * 100
        }
        _ => r.be(6, "TIME2")? as i64 - TIMEF_OFS,
    };
    let negative = packed < 0;
    let abs = packed.unsigned_abs();
    let hms = abs >> 24;
    Ok(Time {
        negative,
        hours: ((hms >> 12) & 0x3ff) as u16,
        minutes: ((hms >> 6) & 0x3f) as u8,
        seconds: (hms & 0x3f) as u8,
        micros: (abs % (1 << 24)) as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(negative: bool, hours: u16, minutes: u8, seconds: u8, micros: u32) -> Time {
        Time {
            negative,
            hours,
            minutes,
            seconds,
            micros,
        }
    }

    #[test]
    fn time2_matches_mysqls_negative_fraction_table() {
        // From MySQL's my_time.cc comment on TIME(2): disk value per time value.
        for (time, disk) in [
            (t(false, 0, 0, 0, 0), [0x80, 0x00, 0x00, 0x00]),
            (t(true, 0, 0, 0, 10_000), [0x7f, 0xff, 0xff, 0xff]),
            (t(true, 0, 0, 0, 990_000), [0x7f, 0xff, 0xff, 0x9d]),
            (t(true, 0, 0, 1, 0), [0x7f, 0xff, 0xff, 0x00]),
            (t(true, 0, 0, 1, 10_000), [0x7f, 0xff, 0xfe, 0xff]),
            (t(true, 0, 0, 1, 100_000), [0x7f, 0xff, 0xfe, 0xf6]),
        ] {
            let mut out = Vec::new();
            encode_time2(&mut out, time, 2).expect("encodes");
            assert_eq!(out, disk, "{time:?}");
            assert_eq!(
                decode_time2(&mut Reader::new(&out), 2).expect("decodes"),
                time
            );
        }
    }

    #[test]
    fn time2_round_trips_at_every_precision() {
        for fsp in 0..=6u8 {
            let unit = 10u32.pow(6 - u32::from(fsp));
            for time in [
                t(false, 838, 59, 59, 999_999),
                t(true, 838, 59, 59, 999_999),
                t(true, 0, 0, 0, 500_000),
                t(false, 12, 34, 56, 123_456),
                t(true, 1, 2, 3, 0),
            ] {
                let mut out = Vec::new();
                encode_time2(&mut out, time, fsp).expect("encodes");
                assert_eq!(out.len(), time2_len(fsp));
                let back = decode_time2(&mut Reader::new(&out), fsp).expect("decodes");
                let micros = time.micros - time.micros % unit;
                let negative = time.negative
                    && (time.hours, time.minutes, time.seconds, micros) != (0, 0, 0, 0);
                assert_eq!(
                    back,
                    Time {
                        micros,
                        negative,
                        ..time
                    },
                    "fsp {fsp}"
                );
            }
        }
    }

    #[test]
    fn datetime2_and_timestamp2_round_trip() {
        let dt = DateTime {
            year: 2024,
            month: 2,
            day: 29,
            hour: 23,
            minute: 59,
            second: 58,
            micros: 654_321,
        };
        for fsp in 0..=6u8 {
            let mut out = Vec::new();
            encode_datetime2(&mut out, dt, fsp).expect("encodes");
            assert_eq!(out.len(), datetime2_len(fsp));
            let back = decode_datetime2(&mut Reader::new(&out), fsp).expect("decodes");
            assert_eq!(back.micros, truncate_micros(dt.micros, fsp));
            assert_eq!(
                DateTime {
                    micros: dt.micros,
                    ..back
                },
                dt
            );

            let mut out = Vec::new();
            encode_timestamp2(&mut out, 1_700_000_000, 654_321, fsp).expect("encodes");
            assert_eq!(out.len(), timestamp2_len(fsp));
            let (s, us) = decode_timestamp2(&mut Reader::new(&out), fsp).expect("decodes");
            assert_eq!((s, us), (1_700_000_000, truncate_micros(654_321, fsp)));
        }
        // MySQL's zero datetime is stored as the bare offset.
        let mut out = Vec::new();
        let zero = DateTime {
            year: 0,
            month: 0,
            day: 0,
            hour: 0,
            minute: 0,
            second: 0,
            micros: 0,
        };
        encode_datetime2(&mut out, zero, 0).expect("encodes");
        assert_eq!(out, [0x80, 0, 0, 0, 0]);
    }

    #[test]
    fn date_and_year() {
        let mut out = Vec::new();
        encode_date(&mut out, 2024, 12, 31).expect("encodes");
        assert_eq!(out, [0x9f, 0xd1, 0x0f]);
        assert_eq!(
            decode_date(&mut Reader::new(&out)).expect("decodes"),
            (2024, 12, 31)
        );
        let mut out = Vec::new();
        encode_year(&mut out, 2155).expect("encodes");
        encode_year(&mut out, 0).expect("encodes");
        assert_eq!(out, [255, 0]);
        let mut r = Reader::new(&out);
        assert_eq!(decode_year(&mut r).expect("decodes"), 2155);
        assert_eq!(decode_year(&mut r).expect("decodes"), 0);
        assert!(encode_year(&mut out, 1900).is_err());
    }
}
