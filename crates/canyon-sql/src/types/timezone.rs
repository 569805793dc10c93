//! Time zones: the session's `time_zone`, and conversion between it and UTC.
//!
//! # What MySQL does
//! A session has a `time_zone` (MySQL 8 manual, 7.1.15 "MySQL Server Time Zone
//! Support"), one of
//!
//! * `'SYSTEM'`: the server host's zone (`@@system_time_zone` names it);
//! * an offset `'[+|-]HH:MM'`, from `-13:59` to `+14:00` (MySQL 8.0.19+);
//! * a named zone (`'Europe/Berlin'`, `'UTC'`), which MySQL looks up in its
//!   `mysql.time_zone*` tables, themselves loaded from the system's zoneinfo
//!   files by `mysql_tzinfo_to_sql`.
//!
//! Anything else is 1298 ER_UNKNOWN_TIME_ZONE. NOW(), CURTIME(),
//! UNIX_TIMESTAMP() and FROM_UNIXTIME() read and produce times in the session's
//! zone; CONVERT_TZ(dt, from, to) converts between any two (NULL when either
//! is unknown).
//!
//! # What Canyon does
//! Named zones are read straight from the system's time-zone database
//! (`/usr/share/zoneinfo/<name>`, TZif files parsed by the `tz-rs` crate,
//! which also applies a file's POSIX footer rule to dates past its last
//! transition), as `mysql_tzinfo_to_sql` would have loaded them: no table to
//! load, and the zones stay as current as the host's `tzdata` package. A zone
//! read once is kept for the life of the process ([`zone`]). `SYSTEM` is the
//! zone `TZ` names when set, else `/etc/localtime`, else UTC.
//!
//! Local time to UTC ([`Zone::to_utc`]) follows MySQL's `TIME_to_gmt_sec`:
//!
//! ```text
//!   spring forward (gap):   01:59:59 | 02:00 .. 02:59:59 do not exist | 03:00
//!                            a time in the gap is the first instant after
//!                            it (02:30 -> 03:00 local)
//!   fall back (overlap):    02:00 .. 02:59:59 happen twice
//!                            the first reading (still daylight time) is
//!                            taken, the earlier instant
//! ```
//!
//! Not implemented: converting TIMESTAMP columns (see `docs/compatibility.md`:
//! they hold the session-local time they were given, as before), leap
//! seconds, and case-insensitive zone names (the file system's names are
//! used as they are spelled).

use crate::types::value::Stamp;
use chrono::{DateTime, NaiveDateTime};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Where named zones are read from.
pub const ZONEINFO: &str = "/usr/share/zoneinfo";

/// A time zone a session or CONVERT_TZ can name.
#[derive(Debug, Clone)]
pub enum Zone {
    /// A fixed offset from UTC, in seconds (`'+05:30'`).
    Offset(i32),
    /// A zone with rules (named, or the system's).
    Rules(Arc<tz::TimeZone>),
}

impl Zone {
    /// UTC.
    pub fn utc() -> Zone {
        Zone::Offset(0)
    }

    /// The offset from UTC, in seconds, at the UTC instant `unix` (seconds).
    fn offset_at(&self, unix: i64) -> i32 {
        match self {
            Zone::Offset(o) => *o,
            Zone::Rules(tz) => tz
                .find_local_time_type(unix)
                .map(|t| t.ut_offset())
                .unwrap_or(0),
        }
    }

    /// The local time of the UTC time `utc`.
    pub fn from_utc(&self, utc: NaiveDateTime) -> NaiveDateTime {
        let offset = self.offset_at(utc.and_utc().timestamp());
        utc + chrono::Duration::seconds(i64::from(offset))
    }

    /// The offsets that can apply to local time `local`: those in force a
    /// day either side of it (no zone moves more than a day at once).
    fn offsets_near(&self, l: i64) -> [i32; 3] {
        [
            self.offset_at(l - 86_400),
            self.offset_at(l),
            self.offset_at(l + 86_400),
        ]
    }

    /// The only instant whose local time is `local`, as a UTC date and
    /// time; `None` when there are two (a repeated autumn hour) or none (a
    /// spring-forward gap).
    pub fn unique_utc(&self, local: NaiveDateTime) -> Option<NaiveDateTime> {
        let l = local.and_utc().timestamp();
        let mut valid: Vec<i64> = self
            .offsets_near(l)
            .iter()
            .map(|&o| l - i64::from(o))
            .filter(|&u| i64::from(self.offset_at(u)) == l - u)
            .collect();
        valid.sort_unstable();
        valid.dedup();
        match valid.as_slice() {
            [u] => Some(local - chrono::Duration::seconds(l - u)),
            _ => None,
        }
    }

    /// UTC bounds of every instant whose local time is `local`, or any
    /// instant whose local time lies beyond it on either side within the
    /// zone's offsets: an instant reading at least `local` is at least the
    /// first, one reading at most `local` at most the second. (A range of
    /// local times is no range of instants across a transition: the bounds
    /// are wide enough for a key scan whose rows are filtered again.)
    pub fn utc_span(&self, local: NaiveDateTime) -> (NaiveDateTime, NaiveDateTime) {
        let offs = self.offsets_near(local.and_utc().timestamp());
        let max = offs.iter().copied().max().unwrap_or(0);
        let min = offs.iter().copied().min().unwrap_or(0);
        (
            local - chrono::Duration::seconds(i64::from(max)),
            local - chrono::Duration::seconds(i64::from(min)),
        )
    }

    /// The UTC time of the local time `local` (see the module doc for times
    /// that do not exist or happen twice).
    pub fn to_utc(&self, local: NaiveDateTime) -> NaiveDateTime {
        let l = local.and_utc().timestamp();
        let sub = local.and_utc().timestamp_subsec_nanos();
        let at = |unix: i64| {
            DateTime::from_timestamp(unix, sub)
                .map(|d| d.naive_utc())
                .unwrap_or(local)
        };
        if let Zone::Offset(o) = self {
            return at(l - i64::from(*o));
        }
        // The offsets in force a day either side bound every offset that
        // can apply to `local` (no zone moves more than a day at once).
        let candidates = [
            self.offset_at(l - 86_400),
            self.offset_at(l),
            self.offset_at(l + 86_400),
        ];
        // A reading is valid when the offset at its UTC instant is the one
        // it assumed; of two (an overlap) the earlier instant, as MySQL and
        // MariaDB answer (`2021-10-31 02:30` Berlin is 00:30 UTC).
        let valid = candidates
            .iter()
            .map(|&o| l - i64::from(o))
            .filter(|&u| i64::from(self.offset_at(u)) == l - u)
            .min();
        if let Some(u) = valid {
            return at(u);
        }
        // In a gap: the transition itself, the first instant after it. It
        // lies between the readings with the offsets before and after.
        let (before, after) = (
            l - i64::from(candidates.iter().copied().min().unwrap_or(0)),
            l - i64::from(candidates.iter().copied().max().unwrap_or(0)),
        );
        let (mut lo, mut hi) = (after.min(before), after.max(before));
        let off_hi = self.offset_at(hi);
        while lo + 1 < hi {
            let mid = lo + (hi - lo) / 2;
            if self.offset_at(mid) == off_hi {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        DateTime::from_timestamp(hi, 0)
            .map(|d| d.naive_utc())
            .unwrap_or(local)
    }
}

/// The first instant a TIMESTAMP holds, `1970-01-01 00:00:01` UTC.
pub const TIMESTAMP_MIN_UNIX: i64 = 1;
/// The second after the last instant a TIMESTAMP holds
/// (`2038-01-19 03:14:07.999999` UTC, the largest signed 32-bit second).
pub const TIMESTAMP_END_UNIX: i64 = i32::MAX as i64 + 1;

/// The TIMESTAMP value of session-local time `local` in `zone`: its instant
/// ([`Zone::to_utc`]: a time in a spring-forward gap is the first instant
/// after it, one in a repeated hour its first occurrence) and that instant's
/// local reading (`02:30` in a gap reads back as `03:00`, as in MySQL).
/// `None` outside the TIMESTAMP range (MySQL's 1292 in strict mode).
pub fn stamp(local: NaiveDateTime, zone: &Zone) -> Option<Stamp> {
    let utc = zone.to_utc(local);
    let unix = utc.and_utc().timestamp();
    if !(TIMESTAMP_MIN_UNIX..TIMESTAMP_END_UNIX).contains(&unix) {
        return None;
    }
    Some(Stamp {
        utc,
        local: zone.from_utc(utc),
    })
}

/// A stored TIMESTAMP instant `utc` as a session in `zone` sees it.
pub fn localize(utc: NaiveDateTime, zone: &Zone) -> Stamp {
    Stamp {
        utc,
        local: zone.from_utc(utc),
    }
}

/// Parses `'[+|-]H[H]:MM'` as MySQL 8 accepts it: `-13:59` to `+14:00`.
fn parse_offset(name: &str) -> Option<i32> {
    let (sign, rest) = match name.as_bytes().first()? {
        b'+' => (1, &name[1..]),
        b'-' => (-1, &name[1..]),
        _ => return None,
    };
    let (h, m) = rest.split_once(':')?;
    let digits = |s: &str, max_len: usize| {
        (!s.is_empty() && s.len() <= max_len && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<i32>().ok())
            .flatten()
    };
    let (h, m) = (digits(h, 2)?, digits(m, 2)?);
    if m > 59 {
        return None;
    }
    let secs = sign * (h * 3600 + m * 60);
    (-(13 * 3600 + 59 * 60)..=14 * 3600)
        .contains(&secs)
        .then_some(secs)
}

/// Reads the named zone's TZif file from [`ZONEINFO`]. Names are paths under
/// it: letters, digits, `_`, `-`, `+` and `/`, never `..` or a leading `/`.
fn read_named(name: &str) -> Option<tz::TimeZone> {
    let ok = !name.is_empty()
        && !name.starts_with('/')
        && !name
            .split('/')
            .any(|p| p.is_empty() || p == "." || p == "..")
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-+/".contains(&b));
    if !ok {
        return None;
    }
    let bytes = std::fs::read(std::path::Path::new(ZONEINFO).join(name)).ok()?;
    tz::TimeZone::from_tz_data(&bytes).ok()
}

/// The host's zone: `TZ`'s when it names one (`:Europe/Berlin` or
/// `Europe/Berlin`), else `/etc/localtime`, else UTC. Read once.
pub fn system_zone() -> &'static Zone {
    static SYSTEM: OnceLock<Zone> = OnceLock::new();
    SYSTEM.get_or_init(|| {
        let from_env = std::env::var("TZ")
            .ok()
            .and_then(|t| read_named(t.trim_start_matches(':')));
        let local = from_env.or_else(|| {
            std::fs::read("/etc/localtime")
                .ok()
                .and_then(|b| tz::TimeZone::from_tz_data(&b).ok())
        });
        match local {
            Some(tz) => Zone::Rules(Arc::new(tz)),
            None => Zone::utc(),
        }
    })
}

/// `@@system_time_zone`: the abbreviation the host's zone has now (`UTC`,
/// `CET`), as MySQL reports the `tzname` it started with.
pub fn system_zone_name() -> String {
    match system_zone() {
        Zone::Offset(_) => "UTC".to_string(),
        Zone::Rules(tz) => tz
            .find_current_local_time_type()
            .map(|t| t.time_zone_designation().to_string())
            .unwrap_or_else(|_| "UTC".to_string()),
    }
}

/// The zone `name` stands for (`SYSTEM`, an offset, or a name in the system's
/// database), or `None` for a name MySQL would answer with 1298. Named zones
/// are read once and kept.
pub fn zone(name: &str) -> Option<Zone> {
    let name = name.trim();
    if name.eq_ignore_ascii_case("SYSTEM") {
        return Some(system_zone().clone());
    }
    if let Some(o) = parse_offset(name) {
        return Some(Zone::Offset(o));
    }
    static NAMED: OnceLock<Mutex<HashMap<String, Option<Arc<tz::TimeZone>>>>> = OnceLock::new();
    let cache = NAMED.get_or_init(Default::default);
    let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(found) = cache.get(name) {
        return found.clone().map(Zone::Rules);
    }
    // Unknown names are remembered too (bounded: a client could send many).
    let found = read_named(name).map(Arc::new);
    if cache.len() < 4096 {
        cache.insert(name.to_string(), found.clone());
    }
    found.map(Zone::Rules)
}

/// The form `@@time_zone` keeps a valid zone name in: offsets as `+HH:MM`
/// (MySQL prints `'+5:30'` back as `'+05:30'`), `SYSTEM` in upper case,
/// names as given.
pub fn normalize(name: &str) -> Option<String> {
    let name = name.trim();
    zone(name)?;
    if name.eq_ignore_ascii_case("SYSTEM") {
        return Some("SYSTEM".to_string());
    }
    Some(match parse_offset(name) {
        Some(o) => {
            let sign = if o < 0 { '-' } else { '+' };
            let a = o.unsigned_abs();
            format!("{sign}{:02}:{:02}", a / 3600, a / 60 % 60)
        }
        None => name.to_string(),
    })
}

/// MySQL's 1298 ER_UNKNOWN_TIME_ZONE for `name`.
pub fn unknown_zone(name: &str) -> canyon_common::Error {
    canyon_common::Error::Sql {
        code: 1298,
        sqlstate: *b"HY000",
        message: format!("Unknown or incorrect time zone: '{name}'"),
    }
}

/// CONVERT_TZ(dt, from, to): `None` (SQL NULL) when either zone is unknown.
pub fn convert(dt: NaiveDateTime, from: &str, to: &str) -> Option<NaiveDateTime> {
    let (from, to) = (zone(from)?, zone(to)?);
    Some(to.from_utc(from.to_utc(dt)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").expect("test datetime")
    }

    #[test]
    fn offsets_parse_and_normalize_as_mysql() {
        assert_eq!(normalize("+5:30").as_deref(), Some("+05:30"));
        assert_eq!(normalize("-13:59").as_deref(), Some("-13:59"));
        assert_eq!(normalize("+14:00").as_deref(), Some("+14:00"));
        assert!(normalize("+14:01").is_none());
        assert!(normalize("-14:00").is_none());
        assert!(normalize("05:30").is_none());
        assert!(normalize("+05:60").is_none());
        assert_eq!(normalize("system").as_deref(), Some("SYSTEM"));
    }

    #[test]
    fn names_outside_the_database_are_refused() {
        assert!(zone("../etc/passwd").is_none());
        assert!(zone("/etc/localtime").is_none());
        assert!(zone("No/Such_Zone").is_none());
    }

    #[test]
    fn berlin_dst_edges_follow_mysql() {
        if zone("Europe/Berlin").is_none() {
            return; // no tzdata on this host
        }
        let c = |s: &str| convert(dt(s), "Europe/Berlin", "UTC").expect("known zones");
        // Spring forward 2003-03-30 02:00 -> 03:00: the gap maps to 01:00 UTC.
        assert_eq!(c("2003-03-30 01:59:59"), dt("2003-03-30 00:59:59"));
        assert_eq!(c("2003-03-30 02:30:00"), dt("2003-03-30 01:00:00"));
        assert_eq!(c("2003-03-30 03:00:00"), dt("2003-03-30 01:00:00"));
        // Fall back 2003-10-26 03:00 -> 02:00: the repeated hour reads as
        // its first occurrence (daylight time), as MariaDB answers.
        assert_eq!(c("2003-10-26 01:59:59"), dt("2003-10-25 23:59:59"));
        assert_eq!(c("2003-10-26 02:00:00"), dt("2003-10-26 00:00:00"));
        assert_eq!(c("2003-10-26 02:59:59"), dt("2003-10-26 00:59:59"));
        assert_eq!(c("2003-10-26 03:00:00"), dt("2003-10-26 02:00:00"));
        let back = |s: &str| convert(dt(s), "UTC", "Europe/Berlin").expect("known zones");
        assert_eq!(back("2003-10-26 00:30:00"), dt("2003-10-26 02:30:00"));
        assert_eq!(back("2003-10-26 01:30:00"), dt("2003-10-26 02:30:00"));
        assert_eq!(back("2003-07-01 12:00:00"), dt("2003-07-01 14:00:00"));
    }
}
