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
//! # TIMESTAMP columns
//! MySQL stores a TIMESTAMP as the instant it names (seconds since the epoch,
//! UTC) and shows it in the session's zone; DATETIME is stored and shown as
//! given. Canyon does the same:
//!
//! ```text
//!   write: '2026-11-01 01:30' in the session's zone --stamp()--> 05:30 UTC
//!          (INSERT, UPDATE, LOAD DATA, defaults: expr::coerce_column;
//!           ALTER rewrites: ddl::rewrite::convert_row)
//!   store: the UTC date and time, in the row and in every key (encoding.rs)
//!   read:  decode (catalog::rows) -> Stamp { utc, local: utc }
//!          -> localize_row in the session's zone (exec::read, exec::select)
//!          -> Stamp { utc: 05:30, local: 01:30 }
//! ```
//!
//! The hard part is the repeated autumn hour. New York reads both 05:30 UTC
//! and 06:30 UTC as `2026-11-01 01:30`, and local time to UTC takes the first
//! ([`Zone::to_utc`]). A design that converted back from the local text at
//! the storage boundary would move a row stored at 06:30 UTC to 05:30 when
//! an UPDATE of another column wrote it back, and an UPDATE or DELETE would
//! compute the old row's key as 05:30 and miss its index entry. So the value
//! keeps its instant as it flows: a row read from storage holds
//! [`Value::Stamp`](crate::types::value::Value::Stamp) — the instant and its
//! local reading — and
//!
//! 1. keys and row bytes are encoded from `utc` (never from `local`): an old
//!    row's keys are exactly the ones stored; a column an UPDATE does not
//!    assign is copied as the Stamp it was, so written back unchanged;
//! 2. an expression sees `local` (`expr::eval` turns a column's Stamp into
//!    a DATETIME): comparisons, functions, CAST read the session-local time,
//!    as MySQL does (`WHERE ts = '...'` compares in the session's zone);
//! 3. UNIX_TIMESTAMP(column) reads `utc` (`expr::eval_instant`): exact in
//!    the repeated hour too; a SELECT's projection keeps Stamps until its
//!    rows are sorted and deduplicated, so ORDER BY and DISTINCT go by
//!    instant as MySQL's (by the stored value), and results leave as local
//!    DATETIMEs (both protocols show the session zone);
//! 4. a Stamp stored into a TIMESTAMP column keeps its instant (`coerce`);
//!    any other value is a local time and becomes [`stamp`]'s instant. A
//!    time in a spring-forward gap stores the first instant after it, with
//!    MySQL 8's warning 1299 (MariaDB refuses it in strict mode); outside
//!    `1970-01-01 00:00:01` .. `2038-01-19 03:14:07.999999` UTC is 1292;
//! 5. a key range from a constant (`plan::access`): an equality is the one
//!    instant with that local time, or a full scan when there are two or
//!    none; a lower or upper bound widens to every instant that may read on
//!    its side ([`Zone::utc_span`]), the rows being filtered again. A local
//!    range is no instant range across a transition, so this is what keeps
//!    an index scan equal to a full scan;
//! 6. a literal DEFAULT is an instant too: CREATE / ALTER convert it from
//!    the session's zone and the catalog keeps UTC text
//!    (`catalog::timestamp_default_to_utc`); SHOW CREATE TABLE, SHOW COLUMNS
//!    and information_schema show it in the reader's zone.
//!
//! Values stored before this change were the writer's wall-clock time in
//! its session zone, with no marker; they read as UTC instants. The default
//! `time_zone` (SYSTEM, and the hosts Canyon runs on are UTC) made the two
//! the same; a table written under another zone reads shifted by its offset.
//!
//! Not implemented: the zero TIMESTAMP (Canyon has no zero dates);
//! INSERT ... SELECT and expressions (`SET ts = ts`) carry the local reading,
//! so a value in the repeated hour copied that way takes its first
//! occurrence (MySQL copies the field's instant); ALTER's conversions use the
//! session's zone, but `Engine::alter_table` without a session the host's;
//! leap seconds; and case-insensitive zone names (the file system's names
//! are used as they are spelled).

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
    if crate::types::datetime::is_zero(&local) {
        // The zero TIMESTAMP is no instant: zero in every time zone.
        return Some(Stamp { utc: local, local });
    }
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
    if crate::types::datetime::is_zero(&utc) {
        return Stamp { utc, local: utc };
    }
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

    #[test]
    fn timestamp_range_and_new_york_transitions() {
        let utc = Zone::utc();
        assert!(stamp(dt("1970-01-01 00:00:00"), &utc).is_none());
        assert_eq!(
            stamp(dt("1970-01-01 00:00:01"), &utc).map(|s| s.utc),
            Some(dt("1970-01-01 00:00:01"))
        );
        assert!(stamp(dt("2038-01-19 03:14:07"), &utc).is_some());
        assert!(stamp(dt("2038-01-19 03:14:08"), &utc).is_none());
        // +01:00: local 01:00:00 on the epoch's day is before the range.
        let plus1 = zone("+01:00").expect("offset zone");
        assert!(stamp(dt("1970-01-01 01:00:00"), &plus1).is_none());
        assert_eq!(
            plus1.utc_span(dt("2026-01-01 12:00:00")),
            (dt("2026-01-01 11:00:00"), dt("2026-01-01 11:00:00"))
        );
        let Some(ny) = zone("America/New_York") else {
            return; // no tzdata on this host
        };
        // Spring forward 2026-03-08 02:00 -> 03:00: 02:30 stores 03:00 EDT.
        let gap = stamp(dt("2026-03-08 02:30:00"), &ny).expect("in range");
        assert_eq!(gap.utc, dt("2026-03-08 07:00:00"));
        assert_eq!(gap.local, dt("2026-03-08 03:00:00"));
        assert_eq!(ny.unique_utc(dt("2026-03-08 02:30:00")), None);
        // Fall back 2026-11-01 02:00 -> 01:00: 01:30 is 05:30 and 06:30 UTC.
        assert_eq!(ny.unique_utc(dt("2026-11-01 01:30:00")), None);
        assert_eq!(
            localize(dt("2026-11-01 06:30:00"), &ny).local,
            dt("2026-11-01 01:30:00")
        );
        assert_eq!(
            ny.unique_utc(dt("2026-11-01 03:00:00")),
            Some(dt("2026-11-01 08:00:00"))
        );
        // The span holds both readings of the repeated hour.
        let (lo, hi) = ny.utc_span(dt("2026-11-01 01:30:00"));
        assert!(lo <= dt("2026-11-01 05:30:00") && hi >= dt("2026-11-01 06:30:00"));
    }
}
