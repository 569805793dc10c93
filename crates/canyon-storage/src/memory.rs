//! [`MemoryStorage`]: the in-memory implementation of [`Storage`], for tests.
//!
//! One `BTreeMap` per keyspace, each behind its own `RwLock`:
//!
//! ```text
//!   maps[Meta]    RwLock<BTreeMap<key, value>>
//!   maps[Rows]    RwLock<BTreeMap<key, value>>
//!   maps[History] RwLock<BTreeMap<key, value>>
//!   maps[Index]   RwLock<BTreeMap<key, value>>
//! ```
//!
//! Invariants:
//! 1. `write` takes the write locks of every keyspace its batch touches, in
//!    [`Keyspace::ALL`] order, before applying the first operation, and releases
//!    them after the last. A reader therefore sees a batch wholly or not at all
//!    within one keyspace, and two writers can never deadlock (same lock order).
//! 2. `scan` never holds a lock while the caller's callback runs: it copies up to
//!    [`SCAN_CHUNK`] entries under a read lock, drops the lock, hands them out, and
//!    resumes after the last key handed out. A callback may therefore read (or even
//!    write) the same storage without deadlocking. The price is that one scan may
//!    see writes made while it runs — which the [`Storage`] contract allows (no
//!    storage-level snapshots).
//!
//! Nothing is durable: [`Storage::sync`] is a no-op and everything is lost when the
//! value is dropped.

use crate::{KeyRange, Keyspace, Storage, WriteBatch, WriteOp};
use canyon_common::Result;
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::ops::{Bound, ControlFlow};

/// How many entries a scan copies out under one read lock (see invariant 2).
const SCAN_CHUNK: usize = 64;

type Map = BTreeMap<Vec<u8>, Vec<u8>>;

/// An in-memory [`Storage`] for tests: ordered maps behind read-write locks.
///
/// Every write is visible to later reads as soon as `write` returns, but **nothing
/// is durable**: [`Storage::sync`] does nothing and the data disappear with the
/// value. Use `canyon_rocksdb::RocksStorage` for anything that must survive a
/// restart.
#[derive(Debug, Default)]
pub struct MemoryStorage {
    /// One map per keyspace, indexed by [`slot`].
    maps: [RwLock<Map>; Keyspace::ALL.len()],
}

/// The position of `keyspace` in [`Keyspace::ALL`], which is also its lock order.
fn slot(keyspace: Keyspace) -> usize {
    match keyspace {
        Keyspace::Meta => 0,
        Keyspace::Rows => 1,
        Keyspace::History => 2,
        Keyspace::Index => 3,
        Keyspace::Log => 4,
    }
}

impl MemoryStorage {
    /// An empty storage.
    pub fn new() -> Self {
        Self::default()
    }

    fn map(&self, keyspace: Keyspace) -> &RwLock<Map> {
        &self.maps[slot(keyspace)]
    }

    /// Copies up to [`SCAN_CHUNK`] entries of `(lo, hi)` in scan order, under one
    /// read lock.
    fn chunk(
        &self,
        keyspace: Keyspace,
        lo: Bound<&[u8]>,
        hi: Bound<&[u8]>,
        reverse: bool,
    ) -> Vec<(Vec<u8>, Vec<u8>)> {
        // BTreeMap::range panics on an inverted or doubly-excluded-equal range;
        // those ranges are empty, so answer that without asking it.
        if range_is_empty(lo, hi) {
            return Vec::new();
        }
        let map = self.map(keyspace).read();
        let range = map.range::<[u8], _>((lo, hi));
        let copy = |(k, v): (&Vec<u8>, &Vec<u8>)| (k.clone(), v.clone());
        if reverse {
            range.rev().take(SCAN_CHUNK).map(copy).collect()
        } else {
            range.take(SCAN_CHUNK).map(copy).collect()
        }
    }
}

/// Whether no key can lie between `lo` and `hi`.
fn range_is_empty(lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> bool {
    match (lo, hi) {
        (Bound::Included(l), Bound::Included(h)) => l > h,
        (Bound::Included(l), Bound::Excluded(h))
        | (Bound::Excluded(l), Bound::Included(h))
        | (Bound::Excluded(l), Bound::Excluded(h)) => l >= h,
        _ => false,
    }
}

fn as_slice_bound(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k.as_slice()),
        Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

impl Storage for MemoryStorage {
    fn get(&self, keyspace: Keyspace, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.map(keyspace).read().get(key).cloned())
    }

    fn scan(
        &self,
        keyspace: Keyspace,
        range: &KeyRange,
        reverse: bool,
        f: &mut dyn FnMut(&[u8], &[u8]) -> ControlFlow<()>,
    ) -> Result<()> {
        // `resume` is the last key handed out; the next chunk starts just past it.
        let mut resume: Option<Vec<u8>> = None;
        loop {
            let (lo, hi) = match (&resume, reverse) {
                (None, _) => (as_slice_bound(&range.start), as_slice_bound(&range.end)),
                (Some(k), false) => (Bound::Excluded(k.as_slice()), as_slice_bound(&range.end)),
                (Some(k), true) => (as_slice_bound(&range.start), Bound::Excluded(k.as_slice())),
            };
            let chunk = self.chunk(keyspace, lo, hi, reverse);
            let done = chunk.len() < SCAN_CHUNK;
            for (k, v) in &chunk {
                if f(k, v).is_break() {
                    return Ok(());
                }
            }
            if done {
                return Ok(());
            }
            resume = chunk.into_iter().next_back().map(|(k, _)| k);
        }
    }

    /// Exact: the keys at which the running total of key and value bytes
    /// crosses each `i / parts` of the range's total (a pass over the range; the
    /// in-memory storage serves tests, where exactness makes sampling testable).
    fn split_points(
        &self,
        keyspace: Keyspace,
        range: &KeyRange,
        parts: usize,
    ) -> Result<Vec<Vec<u8>>> {
        let (lo, hi) = (as_slice_bound(&range.start), as_slice_bound(&range.end));
        if parts < 2 || range_is_empty(lo, hi) {
            return Ok(Vec::new());
        }
        let map = self.map(keyspace).read();
        let size = |(k, v): (&Vec<u8>, &Vec<u8>)| k.len() + v.len();
        let total: usize = map.range::<[u8], _>((lo, hi)).map(size).sum();
        let mut points = Vec::with_capacity(parts - 1);
        let mut seen = 0;
        for (k, v) in map.range::<[u8], _>((lo, hi)) {
            // Point i goes at the first key at or past i/parts of the bytes.
            while points.len() < parts - 1 && seen * parts >= (points.len() + 1) * total {
                points.push(k.clone());
            }
            seen += k.len() + v.len();
        }
        points.dedup();
        Ok(points)
    }

    fn write(&self, batch: WriteBatch, _sync: bool) -> Result<()> {
        let mut touched = [false; Keyspace::ALL.len()];
        for op in batch.ops() {
            let keyspace = match op {
                WriteOp::Put { keyspace, .. } | WriteOp::Delete { keyspace, .. } => *keyspace,
            };
            touched[slot(keyspace)] = true;
        }
        // Invariant 1: lock in Keyspace::ALL order, hold until the batch is applied.
        let mut guards: [Option<parking_lot::RwLockWriteGuard<'_, Map>>; Keyspace::ALL.len()] =
            Default::default();
        for (i, lock) in self.maps.iter().enumerate() {
            if touched[i] {
                guards[i] = Some(lock.write());
            }
        }
        for op in batch.ops() {
            let (keyspace, key) = match op {
                WriteOp::Put { keyspace, key, .. } | WriteOp::Delete { keyspace, key } => {
                    (*keyspace, key)
                }
            };
            let map = guards[slot(keyspace)]
                .as_mut()
                .expect("the write lock of every keyspace in the batch was taken above");
            match op {
                WriteOp::Put { value, .. } => {
                    map.insert(key.clone(), value.clone());
                }
                WriteOp::Delete { .. } => {
                    map.remove(key);
                }
            }
        }
        Ok(())
    }

    /// Does nothing: an in-memory storage has nothing to make durable.
    fn sync(&self) -> Result<()> {
        Ok(())
    }

    fn name(&self) -> &'static str {
        "memory"
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;

    #[test]
    fn slots_follow_keyspace_all_order() {
        for (i, ks) in Keyspace::ALL.iter().enumerate() {
            assert_eq!(slot(*ks), i, "{ks:?}");
        }
    }

    #[test]
    fn scan_spanning_many_chunks_while_callback_writes() {
        let s = MemoryStorage::new();
        let mut b = WriteBatch::new();
        for i in 0u32..(SCAN_CHUNK as u32 * 3 + 7) {
            b.put(Keyspace::Rows, i.to_be_bytes().to_vec(), vec![1]);
        }
        s.write(b, false).unwrap();
        // The callback reads the keyspace being scanned and writes another one: no
        // lock is held while it runs (invariant 2), so neither deadlocks.
        let mut seen = Vec::new();
        s.scan(Keyspace::Rows, &KeyRange::all(), false, &mut |k, v| {
            seen.push(k.to_vec());
            assert_eq!(s.get(Keyspace::Rows, k).unwrap().as_deref(), Some(v));
            let mut b = WriteBatch::new();
            b.put(Keyspace::Index, k.to_vec(), vec![2]);
            s.write(b, false).unwrap();
            ControlFlow::Continue(())
        })
        .unwrap();
        assert_eq!(seen.len(), SCAN_CHUNK * 3 + 7);
        assert!(seen.windows(2).all(|w| w[0] < w[1]));

        let mut rev = Vec::new();
        s.scan(Keyspace::Rows, &KeyRange::all(), true, &mut |k, _| {
            rev.push(k.to_vec());
            ControlFlow::Continue(())
        })
        .unwrap();
        seen.reverse();
        assert_eq!(rev, seen);
    }

    #[test]
    fn empty_and_inverted_ranges_do_not_panic() {
        let s = MemoryStorage::new();
        let mut b = WriteBatch::new();
        b.put(Keyspace::Rows, b"k".to_vec(), b"v".to_vec());
        s.write(b, false).unwrap();
        let ranges = [
            KeyRange {
                start: Bound::Excluded(b"k".to_vec()),
                end: Bound::Excluded(b"k".to_vec()),
            },
            KeyRange {
                start: Bound::Included(b"z".to_vec()),
                end: Bound::Included(b"a".to_vec()),
            },
        ];
        for r in &ranges {
            for reverse in [false, true] {
                let mut n = 0;
                s.scan(Keyspace::Rows, r, reverse, &mut |_, _| {
                    n += 1;
                    ControlFlow::Continue(())
                })
                .unwrap();
                assert_eq!(n, 0, "{r:?}");
            }
        }
    }

    #[test]
    fn split_points_cut_the_bytes_into_equal_parts() {
        let s = MemoryStorage::new();
        let mut b = WriteBatch::new();
        for i in 0u32..1_000 {
            b.put(
                Keyspace::Rows,
                [&[1u8][..], &i.to_be_bytes()].concat(),
                vec![0; 11],
            );
            b.put(
                Keyspace::Rows,
                [&[2u8][..], &i.to_be_bytes()].concat(),
                vec![0; 11],
            );
        }
        s.write(b, false).unwrap();
        let range = KeyRange::prefix(&[1]);
        let points = s.split_points(Keyspace::Rows, &range, 4).unwrap();
        // 1,000 entries of 16 bytes: a point every 250 entries.
        let at = |i: u32| [&[1u8][..], &i.to_be_bytes()].concat();
        assert_eq!(points, vec![at(250), at(500), at(750)]);
        assert!(s
            .split_points(Keyspace::Rows, &range, 1)
            .unwrap()
            .is_empty());
        assert!(s
            .split_points(Keyspace::Rows, &KeyRange::prefix(&[3]), 4)
            .unwrap()
            .is_empty());
    }
}
