//! Byte layout of the MVCC records: encoding and checked decoding.
//!
//! `docs/format.md` ("MVCC records (canyon-txn)") is the byte-by-byte reference;
//! this module is its only implementation. Summary (all integers big-endian, so
//! that byte order is numeric order):
//!
//! ```text
//! Rows     table u32 ++ pk                  -> commit_ts u64 ++ flag u8 ++ row
//! History  table u32 ++ pk ++ !begin_ts u64 -> end_ts u64    ++ flag u8 ++ row
//! Index    index u32 ++ index_key ++ pk     -> end_ts u64 ++ pk_len u16
//! Meta     "txn/last_ts"                    -> ts u64
//! ```
//!
//! flag: 1 = live row, 0 = tombstone (row bytes empty). `!begin_ts` is the bitwise
//! complement, so a forward scan visits a row's versions newest first. `end_ts =
//! u64::MAX` marks a live index entry.
//!
//! Every decoder checks lengths and returns [`Error::Corrupt`] rather than
//! panicking: these bytes come from disk.

use crate::{IndexId, TableId, Timestamp};
use canyon_common::{Error, Result};
use canyon_storage::{prefix_successor, KeyRange};
use std::ops::Bound;

/// The Meta key holding the newest commit timestamp, written in every commit batch
/// (value: the timestamp as `u64` big-endian). Read once at [`crate::TxnManager::open`].
pub const LAST_TS_KEY: &[u8] = b"txn/last_ts";

/// Length of an encoded timestamp.
pub(crate) const TS_LEN: usize = 8;
/// Length of the `ts ++ flag` header of Rows and History values.
pub(crate) const VERSION_HEADER: usize = TS_LEN + 1;
/// Length of an Index value.
pub(crate) const INDEX_VALUE_LEN: usize = TS_LEN + 2;
/// Flag byte of a live row version.
pub(crate) const FLAG_LIVE: u8 = 1;
/// Flag byte of a tombstone (a deleted row).
pub(crate) const FLAG_TOMBSTONE: u8 = 0;
/// Length of the table / index id prefix.
pub(crate) const ID_LEN: usize = 4;

/// `table u32 BE ++ pk`: the Rows key, also the key of the write buffer.
pub(crate) fn rows_key(table: TableId, pk: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(ID_LEN + pk.len());
    k.extend_from_slice(&table.to_be_bytes());
    k.extend_from_slice(pk);
    k
}

/// `rows_key ++ !begin_ts`: the History key of the version that began at `begin_ts`.
pub(crate) fn history_key(rows_key: &[u8], begin_ts: Timestamp) -> Vec<u8> {
    let mut k = Vec::with_capacity(rows_key.len() + TS_LEN);
    k.extend_from_slice(rows_key);
    k.extend_from_slice(&(!begin_ts).to_be_bytes());
    k
}

/// The Rows key and `begin_ts` of a History key; `Error::Corrupt` if it is too
/// short to hold them.
pub(crate) fn split_history_key(key: &[u8]) -> Result<(&[u8], Timestamp)> {
    match key.len().checked_sub(TS_LEN) {
        Some(at) if at >= ID_LEN => {
            let (rows_key, ts) = key.split_at(at);
            Ok((rows_key, !read_u64(ts).unwrap_or_default()))
        }
        _ => Err(Error::Corrupt(format!(
            "History key of {} bytes is shorter than a table id and a timestamp",
            key.len()
        ))),
    }
}

/// The History keys a reader at snapshot `at` may need for `rows_key`: from the
/// newest version that began at or before `at`, down to the oldest one.
pub(crate) fn history_seek_range(rows_key: &[u8], at: Timestamp) -> KeyRange {
    let mut end = Vec::with_capacity(rows_key.len() + TS_LEN);
    end.extend_from_slice(rows_key);
    end.extend_from_slice(&[0xFF; TS_LEN]);
    KeyRange {
        start: Bound::Included(history_key(rows_key, at)),
        end: Bound::Included(end),
    }
}

/// `index u32 BE ++ index_key ++ pk`: the Index key of one entry.
pub(crate) fn index_entry_key(index: IndexId, index_key: &[u8], pk: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(ID_LEN + index_key.len() + pk.len());
    k.extend_from_slice(&index.to_be_bytes());
    k.extend_from_slice(index_key);
    k.extend_from_slice(pk);
    k
}

/// `end_ts u64 BE ++ pk_len u16 BE`. Fails when the pk does not fit a `u16`.
pub(crate) fn index_value(end_ts: Timestamp, pk_len: usize) -> Result<Vec<u8>> {
    let pk_len = u16::try_from(pk_len).map_err(|_| {
        Error::InvalidArgument(format!(
            "primary key of {pk_len} bytes is longer than an index entry can hold (65535)"
        ))
    })?;
    let mut v = Vec::with_capacity(INDEX_VALUE_LEN);
    v.extend_from_slice(&end_ts.to_be_bytes());
    v.extend_from_slice(&pk_len.to_be_bytes());
    Ok(v)
}

/// `ts u64 BE ++ flag ++ row`: a Rows value (ts = commit_ts) or a History value
/// (ts = end_ts). `row = None` encodes a tombstone.
pub(crate) fn version_value(ts: Timestamp, row: Option<&[u8]>) -> Vec<u8> {
    let body = row.unwrap_or(&[]);
    let mut v = Vec::with_capacity(VERSION_HEADER + body.len());
    v.extend_from_slice(&ts.to_be_bytes());
    v.push(if row.is_some() {
        FLAG_LIVE
    } else {
        FLAG_TOMBSTONE
    });
    v.extend_from_slice(body);
    v
}

/// The timestamp value of [`LAST_TS_KEY`].
pub(crate) fn ts_value(ts: Timestamp) -> Vec<u8> {
    ts.to_be_bytes().to_vec()
}

/// Overwrites the leading timestamp of an encoded value (Rows, History and Index
/// values all start with one). Used to fill in the commit timestamp, which is only
/// known under the commit mutex, into values built before it.
pub(crate) fn patch_ts(value: &mut [u8], ts: Timestamp) {
    value[..TS_LEN].copy_from_slice(&ts.to_be_bytes());
}

fn read_u64(b: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(b.get(..TS_LEN)?.try_into().ok()?))
}

/// A decoded Rows or History value, borrowing the row bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Version<'a> {
    /// commit_ts (Rows) or end_ts (History).
    pub ts: Timestamp,
    /// `Some(row)` for a live version, `None` for a tombstone.
    pub row: Option<&'a [u8]>,
}

/// Decodes a Rows or History value.
pub(crate) fn decode_version(v: &[u8]) -> Result<Version<'_>> {
    let corrupt = || Error::Corrupt(format!("row version of {} bytes: bad header", v.len()));
    let ts = read_u64(v).ok_or_else(corrupt)?;
    match v.get(TS_LEN) {
        Some(&FLAG_LIVE) => Ok(Version {
            ts,
            row: Some(&v[VERSION_HEADER..]),
        }),
        Some(&FLAG_TOMBSTONE) if v.len() == VERSION_HEADER => Ok(Version { ts, row: None }),
        _ => Err(corrupt()),
    }
}

/// Decodes an Index value into `(end_ts, pk_len)`.
pub(crate) fn decode_index_value(v: &[u8]) -> Result<(Timestamp, usize)> {
    if v.len() != INDEX_VALUE_LEN {
        return Err(Error::Corrupt(format!(
            "index entry value of {} bytes, expected {INDEX_VALUE_LEN}",
            v.len()
        )));
    }
    let end = read_u64(v).ok_or_else(|| Error::Corrupt("index entry value".into()))?;
    let pk_len = u16::from_be_bytes([v[TS_LEN], v[TS_LEN + 1]]) as usize;
    Ok((end, pk_len))
}

/// Splits an Index key into `(index_key, pk)` given the stored pk length.
pub(crate) fn split_index_key(key: &[u8], pk_len: usize) -> Result<(&[u8], &[u8])> {
    if key.len() < ID_LEN + pk_len {
        return Err(Error::Corrupt(format!(
            "index key of {} bytes cannot hold a {pk_len}-byte primary key",
            key.len()
        )));
    }
    let (rest, pk) = key.split_at(key.len() - pk_len);
    Ok((&rest[ID_LEN..], pk))
}

/// Decodes the value of [`LAST_TS_KEY`].
pub(crate) fn decode_ts_value(v: &[u8]) -> Result<Timestamp> {
    if v.len() != TS_LEN {
        return Err(Error::Corrupt(format!(
            "txn/last_ts of {} bytes, expected {TS_LEN}",
            v.len()
        )));
    }
    read_u64(v).ok_or_else(|| Error::Corrupt("txn/last_ts".into()))
}

/// Prepends `prefix` to a bound, with exact (byte-compare) semantics.
fn prefixed(prefix: &[u8], b: &Bound<Vec<u8>>) -> Bound<Vec<u8>> {
    let cat = |k: &Vec<u8>| [prefix, k.as_slice()].concat();
    match b {
        Bound::Included(k) => Bound::Included(cat(k)),
        Bound::Excluded(k) => Bound::Excluded(cat(k)),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// The end bound of everything under `prefix`.
fn prefix_end(prefix: &[u8]) -> Bound<Vec<u8>> {
    match prefix_successor(prefix) {
        Some(s) => Bound::Excluded(s),
        None => Bound::Unbounded,
    }
}

/// Translates a pk range of `table` into a Rows key range. Bounds compare whole
/// keys exactly (Rows keys have nothing after the pk).
pub(crate) fn rows_range(table: TableId, range: &KeyRange) -> KeyRange {
    let p = table.to_be_bytes();
    KeyRange {
        start: match &range.start {
            Bound::Unbounded => Bound::Included(p.to_vec()),
            b => prefixed(&p, b),
        },
        end: match &range.end {
            Bound::Unbounded => prefix_end(&p),
            b => prefixed(&p, b),
        },
    }
}

/// Translates an index_key range of `index` into an Index key range. Bounds are
/// treated as prefixes of `index_key ++ pk`: `Included(k)` as an end takes every
/// entry whose key starts with `k`, `Excluded(k)` as a start skips them all.
/// Returns `None` when the range is empty.
pub(crate) fn index_range(index: IndexId, range: &KeyRange) -> Option<KeyRange> {
    let p = index.to_be_bytes();
    let start = match &range.start {
        Bound::Unbounded => Bound::Included(p.to_vec()),
        Bound::Included(k) => Bound::Included([&p[..], k].concat()),
        Bound::Excluded(k) => Bound::Included(prefix_successor(&[&p[..], k].concat())?),
    };
    let end = match &range.end {
        Bound::Unbounded => prefix_end(&p),
        Bound::Included(k) => prefix_end(&[&p[..], k].concat()),
        Bound::Excluded(k) => Bound::Excluded([&p[..], k].concat()),
    };
    Some(KeyRange { start, end })
}

/// Whether no key can lie within `range` (storage and `BTreeMap::range` are not
/// asked about such ranges: the latter panics on them).
pub(crate) fn range_is_empty(range: &KeyRange) -> bool {
    match (&range.start, &range.end) {
        (Bound::Included(l), Bound::Included(h)) => l > h,
        (Bound::Included(l), Bound::Excluded(h))
        | (Bound::Excluded(l), Bound::Included(h))
        | (Bound::Excluded(l), Bound::Excluded(h)) => l >= h,
        _ => false,
    }
}

/// Borrows a bound's key.
pub(crate) fn bound_ref(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k.as_slice()),
        Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_keys_split_back() {
        let rk = rows_key(7, b"pk");
        let k = history_key(&rk, 42);
        assert_eq!(split_history_key(&k).unwrap(), (&rk[..], 42));
        assert!(matches!(
            split_history_key(&k[..ID_LEN + 7]),
            Err(Error::Corrupt(_))
        ));
    }

    #[test]
    fn history_keys_sort_newest_first() {
        let rk = rows_key(7, b"pk");
        let k5 = history_key(&rk, 5);
        let k9 = history_key(&rk, 9);
        assert!(k9 < k5);
        // A reader at 7 starts at !7: it sees version 5, not 9.
        let r = history_seek_range(&rk, 7);
        assert!(!r.contains(&k9));
        assert!(r.contains(&k5));
        assert!(r.contains(&history_key(&rk, 0)));
        assert!(r.contains(&history_key(&rk, 7)));
    }

    #[test]
    fn version_round_trip_and_corruption() {
        let v = version_value(42, Some(b"abc"));
        assert_eq!(
            decode_version(&v).unwrap(),
            Version {
                ts: 42,
                row: Some(&b"abc"[..])
            }
        );
        let t = version_value(43, None);
        assert_eq!(decode_version(&t).unwrap(), Version { ts: 43, row: None });
        assert!(matches!(decode_version(&v[..5]), Err(Error::Corrupt(_))));
        let mut bad = v.clone();
        bad[8] = 7;
        assert!(matches!(decode_version(&bad), Err(Error::Corrupt(_))));
        let mut bad_tomb = t.clone();
        bad_tomb.push(1);
        assert!(matches!(decode_version(&bad_tomb), Err(Error::Corrupt(_))));
        let mut p = v.clone();
        patch_ts(&mut p, 99);
        assert_eq!(decode_version(&p).unwrap().ts, 99);
    }

    #[test]
    fn index_value_and_split() {
        let v = index_value(u64::MAX, 3).unwrap();
        assert_eq!(decode_index_value(&v).unwrap(), (u64::MAX, 3));
        assert!(matches!(
            index_value(1, 70_000),
            Err(Error::InvalidArgument(_))
        ));
        let k = index_entry_key(2, b"key", b"pk!");
        assert_eq!(split_index_key(&k, 3).unwrap(), (&b"key"[..], &b"pk!"[..]));
        assert!(matches!(split_index_key(&k, 40), Err(Error::Corrupt(_))));
        assert!(matches!(
            decode_index_value(&v[..3]),
            Err(Error::Corrupt(_))
        ));
    }

    #[test]
    fn index_range_treats_bounds_as_prefixes() {
        let e = |k: &[u8], pk: &[u8]| index_entry_key(1, k, pk);
        let r = index_range(
            1,
            &KeyRange {
                start: Bound::Excluded(b"b".to_vec()),
                end: Bound::Included(b"d".to_vec()),
            },
        )
        .unwrap();
        assert!(!r.contains(&e(b"b", b"\x01")));
        assert!(r.contains(&e(b"c", b"\x01")));
        assert!(r.contains(&e(b"d", b"\xff\xff")));
        assert!(!r.contains(&e(b"e", b"")));
        let all = index_range(1, &KeyRange::all()).unwrap();
        assert!(all.contains(&e(b"", b"")));
        assert!(all.contains(&e(b"\xff\xff", b"\xff")));
        assert!(!all.contains(&index_entry_key(2, b"", b"")));
        assert!(!all.contains(&index_entry_key(0, b"\xff", b"")));
        let top = index_range(
            u32::MAX,
            &KeyRange {
                start: Bound::Excluded(vec![0xFF]),
                end: Bound::Unbounded,
            },
        );
        assert!(top.is_none());
    }

    #[test]
    fn rows_range_is_exact_and_confined_to_the_table() {
        let r = rows_range(
            3,
            &KeyRange {
                start: Bound::Excluded(b"b".to_vec()),
                end: Bound::Included(b"d".to_vec()),
            },
        );
        assert!(!r.contains(&rows_key(3, b"b")));
        assert!(r.contains(&rows_key(3, b"b\x00")));
        assert!(r.contains(&rows_key(3, b"d")));
        assert!(!r.contains(&rows_key(3, b"d\x00")));
        let all = rows_range(3, &KeyRange::all());
        assert!(!all.contains(&rows_key(4, b"")));
        assert!(!all.contains(&rows_key(2, b"\xff")));
        assert!(range_is_empty(&KeyRange {
            start: Bound::Excluded(b"a".to_vec()),
            end: Bound::Excluded(b"a".to_vec()),
        }));
    }
}
