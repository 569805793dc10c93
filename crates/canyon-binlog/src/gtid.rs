//! MySQL GTIDs and GTID sets.
//!
//! A GTID is `source_uuid:gno`: the UUID of the server that first committed
//! the transaction (its `server_uuid`) and a transaction number that runs
//! 1, 2, 3 ... without gaps on that server. A GTID set is, per UUID, a list of
//! closed intervals; its text form (what `@@gtid_executed` shows, what
//! `WAIT_FOR_EXECUTED_GTID_SET` and `COM_BINLOG_DUMP_GTID` take) is
//!
//! ```text
//! 3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7,4f2b0c1a-...:1-100
//! ```
//!
//! UUIDs sorted, intervals sorted and merged (`1-3:4-5` is written `1-5`).
//! MySQL separates UUIDs with `",\n"` when it prints `@@gtid_executed`; this
//! type writes `","` and reads either. In a PREVIOUS_GTIDS event and in
//! COM_BINLOG_DUMP_GTID the set is binary:
//!
//! ```text
//! n_sids u64 | per sid: uuid [16] | n_intervals u64 | per interval: start i64, end i64 (exclusive)
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use crate::wire::Reader;
use crate::Error;

/// A GTID event's fields as MySQL 8.0 writes them (`Gtid_log_event`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Gtid {
    /// The source server's UUID (`server_uuid`), as 16 bytes.
    pub sid: [u8; 16],
    /// The transaction number on that server, from 1.
    pub gno: u64,
    /// Logical clock: the `sequence_number` of the last transaction this one
    /// may depend on; a replica's parallel applier (`LOGICAL_CLOCK`) starts
    /// it once that one has committed.
    pub last_committed: i64,
    /// Logical clock: this transaction's number in the file, from 1 (0 means
    /// "not tracked" and serialises the applier).
    pub sequence_number: i64,
    /// When this server committed it, in microseconds since the epoch.
    pub immediate_commit_ts_us: u64,
    /// When the original source committed it (equal on the source itself).
    pub original_commit_ts_us: u64,
    /// Bytes of the whole transaction in the log, this GTID event included
    /// (see [`gtid_transaction_length`]).
    pub transaction_length: u64,
    /// `MAJOR*10000 + MINOR*100 + PATCH` of the server writing the event
    /// (80036 for 8.0.36).
    pub immediate_server_version: u32,
    /// The same for the original source.
    pub original_server_version: u32,
    /// `FLAG_MAY_HAVE_SBR`: the transaction may contain statement-based
    /// events (MySQL sets it for DDL and for statement-format logging).
    pub may_have_sbr: bool,
}

/// Whole closed interval of transaction numbers `start..=end`.
pub type Interval = (u64, u64);

/// A set of GTIDs: per source UUID, sorted disjoint non-adjacent intervals.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct GtidSet {
    sids: BTreeMap<[u8; 16], Vec<Interval>>,
}

impl GtidSet {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// True when the set holds no GTID.
    pub fn is_empty(&self) -> bool {
        self.sids.is_empty()
    }

    /// Adds `sid:gno` (gno 0 is not a transaction number and is refused).
    pub fn add(&mut self, sid: [u8; 16], gno: u64) -> Result<(), Error> {
        self.add_interval(sid, gno, gno)
    }

    /// Adds `sid:start-end`.
    pub fn add_interval(&mut self, sid: [u8; 16], start: u64, end: u64) -> Result<(), Error> {
        if start == 0 || end < start || end >= i64::MAX as u64 {
            return Err(Error::Invalid(format!(
                "GTID interval {start}-{end} is not within 1-{}",
                i64::MAX - 1
            )));
        }
        let ivs = self.sids.entry(sid).or_default();
        ivs.push((start, end));
        ivs.sort_unstable();
        let mut merged: Vec<Interval> = Vec::with_capacity(ivs.len());
        for &(s, e) in ivs.iter() {
            match merged.last_mut() {
                // Overlapping or adjacent intervals are one interval.
                Some(last) if s <= last.1.saturating_add(1) => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        *ivs = merged;
        Ok(())
    }

    /// Adds every GTID of `other`.
    pub fn union(&mut self, other: &GtidSet) {
        for (sid, ivs) in &other.sids {
            for &(s, e) in ivs {
                self.add_interval(*sid, s, e)
                    .expect("intervals of a GtidSet are valid");
            }
        }
    }

    /// True when `sid:gno` is in the set.
    pub fn contains(&self, sid: &[u8; 16], gno: u64) -> bool {
        self.sids
            .get(sid)
            .is_some_and(|ivs| ivs.iter().any(|&(s, e)| s <= gno && gno <= e))
    }

    /// True when every GTID of `self` is in `other`.
    pub fn is_subset_of(&self, other: &GtidSet) -> bool {
        self.sids.iter().all(|(sid, ivs)| {
            let Some(theirs) = other.sids.get(sid) else {
                return false;
            };
            ivs.iter()
                .all(|&(s, e)| theirs.iter().any(|&(ts, te)| ts <= s && e <= te))
        })
    }

    /// The GTIDs of `self` that are not in `other` (MySQL's
    /// `GTID_SUBTRACT(self, other)`).
    pub fn subtract(&self, other: &GtidSet) -> GtidSet {
        let mut out = GtidSet::new();
        for (sid, ivs) in &self.sids {
            let theirs = other.sids.get(sid).map_or(&[][..], |v| v.as_slice());
            let mut kept = Vec::new();
            for &(s, e) in ivs {
                // Both lists are sorted and disjoint: walk `theirs`, keeping
                // the pieces of `s..=e` between their intervals.
                let mut from = s;
                for &(ts, te) in theirs {
                    if te < from || ts > e {
                        continue;
                    }
                    if ts > from {
                        kept.push((from, ts - 1));
                    }
                    from = te.saturating_add(1);
                    if from > e {
                        break;
                    }
                }
                if from <= e {
                    kept.push((from, e));
                }
            }
            if !kept.is_empty() {
                out.sids.insert(*sid, kept);
            }
        }
        out
    }

    /// The UUIDs and their intervals, UUIDs in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8; 16], &[Interval])> {
        self.sids.iter().map(|(k, v)| (k, v.as_slice()))
    }

    /// The binary form (PREVIOUS_GTIDS body, COM_BINLOG_DUMP_GTID data).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&(self.sids.len() as u64).to_le_bytes());
        for (sid, ivs) in &self.sids {
            out.extend_from_slice(sid);
            out.extend_from_slice(&(ivs.len() as u64).to_le_bytes());
            for &(s, e) in ivs {
                out.extend_from_slice(&s.to_le_bytes());
                // The binary form's intervals are half-open.
                out.extend_from_slice(&(e + 1).to_le_bytes());
            }
        }
        out
    }

    /// Reads the binary form; `buf` must hold exactly one set.
    pub fn decode(buf: &[u8]) -> Result<GtidSet, Error> {
        let mut r = Reader::new(buf);
        let set = Self::decode_from(&mut r)?;
        if !r.is_empty() {
            return Err(Error::Malformed(format!(
                "{} bytes after the GTID set",
                r.remaining()
            )));
        }
        Ok(set)
    }

    pub(crate) fn decode_from(r: &mut Reader<'_>) -> Result<GtidSet, Error> {
        let mut set = GtidSet::new();
        let n_sids = r.u64("GTID set: number of UUIDs")?;
        for _ in 0..n_sids {
            let sid: [u8; 16] = r
                .bytes(16, "GTID set: UUID")?
                .try_into()
                .expect("16 bytes were read");
            let n = r.u64("GTID set: number of intervals")?;
            for _ in 0..n {
                let s = r.u64("GTID set: interval start")?;
                let e = r.u64("GTID set: interval end")?;
                if e <= s {
                    return Err(Error::Malformed(format!(
                        "GTID interval [{s}, {e}) is empty"
                    )));
                }
                set.add_interval(sid, s, e - 1)
                    .map_err(|e| Error::Malformed(e.to_string()))?;
            }
        }
        Ok(set)
    }
}

/// Formats a UUID as `8-4-4-4-12` lower-case hex.
pub fn format_uuid(sid: &[u8; 16]) -> String {
    let mut s = String::with_capacity(36);
    for (i, b) in sid.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Parses a UUID: 32 hex digits, dashes anywhere ignored (MySQL accepts the
/// `8-4-4-4-12` form and the bare 32 digits).
pub fn parse_uuid(text: &str) -> Result<[u8; 16], Error> {
    let digits: Vec<u8> = text.bytes().filter(|&b| b != b'-').collect();
    let bad = || Error::Invalid(format!("malformed UUID '{text}'"));
    if digits.len() != 32 {
        return Err(bad());
    }
    let mut out = [0u8; 16];
    for (i, pair) in digits.chunks(2).enumerate() {
        let hex = std::str::from_utf8(pair).map_err(|_| bad())?;
        out[i] = u8::from_str_radix(hex, 16).map_err(|_| bad())?;
    }
    Ok(out)
}

impl fmt::Display for GtidSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (sid, ivs)) in self.sids.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            f.write_str(&format_uuid(sid))?;
            for &(s, e) in ivs {
                if s == e {
                    write!(f, ":{s}")?;
                } else {
                    write!(f, ":{s}-{e}")?;
                }
            }
        }
        Ok(())
    }
}

impl FromStr for GtidSet {
    type Err = Error;

    /// Parses `uuid:1-5:7,uuid2:3` (whitespace and newlines around the parts
    /// ignored; the empty string is the empty set).
    fn from_str(text: &str) -> Result<GtidSet, Error> {
        let mut set = GtidSet::new();
        for part in text.split(',') {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let mut pieces = part.split(':');
            let sid = parse_uuid(pieces.next().unwrap_or_default().trim())?;
            let mut any = false;
            for iv in pieces {
                any = true;
                let iv = iv.trim();
                let bad = || Error::Invalid(format!("malformed GTID interval '{iv}'"));
                let (s, e) = match iv.split_once('-') {
                    Some((s, e)) => (s.trim(), e.trim()),
                    None => (iv, iv),
                };
                let s: u64 = s.parse().map_err(|_| bad())?;
                let e: u64 = e.parse().map_err(|_| bad())?;
                set.add_interval(sid, s, e)?;
            }
            if !any {
                return Err(Error::Invalid(format!(
                    "GTID set part '{part}' has no interval"
                )));
            }
        }
        Ok(set)
    }
}

/// The `transaction_length` a GTID event must carry when the rest of its
/// transaction (every event after the GTID event, framed) takes `rest_len`
/// bytes: the GTID event's own length depends on the packed length of the
/// number, so the sum is found by iterating to the fixed point (at most
/// twice, as MySQL does in `Gtid_log_event::set_trx_length_by_cache_size`).
pub fn gtid_transaction_length(gtid: &Gtid, rest_len: u64, checksum: bool) -> u64 {
    let mut g = gtid.clone();
    g.transaction_length = rest_len;
    loop {
        let own = crate::event::framed_len(crate::control::gtid(&g).len(), checksum) as u64;
        let total = rest_len + own;
        if total == g.transaction_length {
            return total;
        }
        g.transaction_length = total;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const U1: &str = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
    const U2: &str = "4f2b0c1a-0000-11e1-9e33-c80aa9429562";

    #[test]
    fn text_form_round_trips_and_merges_intervals() {
        let set: GtidSet = format!("{U2}:3,\n{U1}:1-3:4-5:7:9-10")
            .parse()
            .expect("parses");
        assert_eq!(set.to_string(), format!("{U1}:1-5:7:9-10,{U2}:3"));
        let again: GtidSet = set.to_string().parse().expect("parses");
        assert_eq!(again, set);
        assert_eq!("".parse::<GtidSet>().expect("empty"), GtidSet::new());
    }

    #[test]
    fn add_and_contains() {
        let sid = parse_uuid(U1).expect("uuid");
        let mut set = GtidSet::new();
        for gno in [1, 2, 3, 5] {
            set.add(sid, gno).expect("valid");
        }
        assert_eq!(set.to_string(), format!("{U1}:1-3:5"));
        set.add(sid, 4).expect("valid");
        assert_eq!(set.to_string(), format!("{U1}:1-5"));
        assert!(set.contains(&sid, 5));
        assert!(!set.contains(&sid, 6));
        assert!(!set.contains(&[0; 16], 1));
        assert!(set.add(sid, 0).is_err());
    }

    #[test]
    fn subset_and_union() {
        let a: GtidSet = format!("{U1}:1-3").parse().expect("parses");
        let b: GtidSet = format!("{U1}:1-5,{U2}:1").parse().expect("parses");
        assert!(a.is_subset_of(&b));
        assert!(!b.is_subset_of(&a));
        let mut c = a.clone();
        c.union(&b);
        assert_eq!(c, b);
    }

    #[test]
    fn subtract_cuts_intervals() {
        let a: GtidSet = format!("{U1}:1-10:20-30,{U2}:1-5").parse().expect("parses");
        let b: GtidSet = format!("{U1}:1:4-6:10-21:30,{U2}:1-5")
            .parse()
            .expect("parses");
        assert_eq!(a.subtract(&b).to_string(), format!("{U1}:2-3:7-9:22-29"));
        assert_eq!(b.subtract(&a).to_string(), format!("{U1}:11-19"));
        assert_eq!(a.subtract(&GtidSet::new()), a);
        assert!(a.subtract(&a).is_empty());
        assert!(GtidSet::new().subtract(&a).is_empty());
        // What is left is still a set in normal form (parses back equal).
        let left = a.subtract(&b);
        assert_eq!(left.to_string().parse::<GtidSet>().expect("parses"), left);
    }

    #[test]
    fn binary_form_is_half_open_and_round_trips() {
        let set: GtidSet = format!("{U1}:1-5:7").parse().expect("parses");
        let bin = set.encode();
        assert_eq!(bin.len(), 8 + 16 + 8 + 2 * 16);
        // First interval: start 1, end 6 (exclusive).
        assert_eq!(&bin[32..40], &1u64.to_le_bytes());
        assert_eq!(&bin[40..48], &6u64.to_le_bytes());
        assert_eq!(GtidSet::decode(&bin).expect("decodes"), set);
        assert!(GtidSet::decode(&bin[..bin.len() - 1]).is_err());
    }

    #[test]
    fn malformed_text_is_refused() {
        for bad in ["nonsense:1", U1, &format!("{U1}:x"), &format!("{U1}:5-3")] {
            assert!(bad.parse::<GtidSet>().is_err(), "{bad}");
        }
    }
}
