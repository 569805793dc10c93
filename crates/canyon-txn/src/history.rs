//! Old row versions in memory, spilled to the History keyspace past a budget.
//!
//! # Why memory
//!
//! A commit that replaces a row version keeps the old one for the snapshots
//! older than the commit (`mvcc.rs`, "Versions"). Those snapshots belong to
//! transactions of this process: after a restart every snapshot is at or above
//! the recovered `last_ts`, so it reads each row at its Rows version and never
//! needs a version a previous process replaced. Old versions therefore need no
//! durability at all, and writing them into the History keyspace with every
//! commit paid for durability nobody uses: the WAL bytes of a whole old row, a
//! memtable insert (a skip-list walk that misses the CPU caches at every level:
//! the single largest leaf in the server's profile under TPC-C), a flush and
//! its compactions — and then GC's delete, a second WAL record and memtable
//! insert for the same key. InnoDB keeps its undo log in the buffer pool for
//! the same readers; it writes undo durably because recovery rolls back
//! uncommitted transactions with it, which Canyon never has to (only committed
//! data reaches storage).
//!
//! # Where a version lives
//!
//! A commit hands each version it replaces to [`History::admit`] while
//! preparing its batch. While the memory held is under its budget
//! (`TxnConfig::history_memory_bytes`, default 128 MiB) the version goes here:
//! a hash map, in [`SHARDS`] mutex-protected shards, from the Rows key to the
//! row's versions, oldest first, each with its `begin_ts` (the raw Rows value
//! as it was, so its leading timestamp) and its `end_ts` (the replacing
//! commit). Past the budget it goes into the History keyspace as before
//! (`docs/format.md`), and [`History::spilled`] is set for the rest of the
//! process: a snapshot held open for minutes under a write load costs disk,
//! not memory without bound. Versions of one row may so be split between the
//! two places. GC removes them with the rest of a commit's garbage once the
//! watermark reaches their `end_ts` (gc.rs); under GC every second the memory
//! holds about a second of the workload's replaced versions.
//!
//! # Invariant
//!
//! **H.** Every version a live snapshot may need is here, or, when `spilled`
//! is set, in the History keyspace. Why it holds:
//! - the commit that replaces version `V` of a row (at `end_ts > S` for the
//!   snapshot `S` that needs `V`, so in this process) inserts `V` here, or sets
//!   `spilled` and writes `V` in its batch, under the commit mutex and before
//!   its storage write (rule 4 of `commit.rs`);
//! - a reader looks for `V` only after reading, in Rows or the row cache, a
//!   version newer than `S`: that commit's or a later one's write, which
//!   happened after the insert (the later commits held the row lock after it);
//! - GC removes `V` only once the watermark is at or above `end_ts > S`, which
//!   the snapshot `S` prevents (gc.rs, "The watermark").
//!
//! # Reading
//!
//! The versions of a row have disjoint lifetimes `[begin_ts, end_ts)`. A reader
//! at `S` wants the one with `begin_ts <= S < end_ts`: [`History::get`] walks
//! the row's versions newest first. If memory has it, that is the answer; if
//! not and nothing was ever spilled, the row had no version at `S`; otherwise
//! the reader seeks the History keyspace (`TxnManager::read_history`).
//!
//! # Costs
//!
//! Per replaced version: one shard mutex and hash probe at commit (under the
//! commit mutex, replacing a memtable insert there), one at GC. Per snapshot
//! read of an old version: one shard mutex and hash probe instead of a RocksDB
//! seek. The shards are the row cache's design (`row_cache.rs`).

use crate::keys::{self, TS_LEN};
use crate::{TableId, Timestamp};
use canyon_common::Result;
use crossbeam_utils::CachePadded;
use hashbrown::hash_table::Entry;
use hashbrown::{DefaultHashBuilder, HashTable};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Number of shards (a power of two), as in the row cache.
const SHARDS: usize = 64;

/// Bytes charged per version beyond its key and value: the version record, the
/// row's entry in the hash table and its deque (shared by the row's versions,
/// charged to each: an estimate, not an account).
const VERSION_OVERHEAD: usize = 96;

/// One old version of a row.
#[derive(Debug)]
struct Version {
    /// The raw Rows value as it was: `begin_ts | flag | row` (format.md).
    raw: Box<[u8]>,
    /// The commit that replaced it.
    end_ts: Timestamp,
}

impl Version {
    fn begin_ts(&self) -> Timestamp {
        let mut ts = [0u8; TS_LEN];
        ts.copy_from_slice(&self.raw[..TS_LEN]);
        Timestamp::from_be_bytes(ts)
    }
}

/// A row's versions in memory, oldest first.
#[derive(Debug)]
struct Row {
    key: Box<[u8]>,
    versions: VecDeque<Version>,
}

#[derive(Debug, Default)]
struct Shard {
    rows: HashTable<Row>,
}

/// What [`History::get`] found in memory.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// The version visible at the snapshot: the row bytes, or `None` for a
    /// tombstone (no row at the snapshot).
    Version(Option<Vec<u8>>),
    /// Memory has no version visible at the snapshot.
    NotHere,
}

/// Old row versions: see the module doc.
#[derive(Debug)]
pub(crate) struct History {
    shards: Box<[CachePadded<Mutex<Shard>>]>,
    hasher: DefaultHashBuilder,
    /// Bytes charged for the versions held (keys, values, [`VERSION_OVERHEAD`]).
    bytes: AtomicUsize,
    /// Versions held.
    versions: AtomicU64,
    /// The budget: a version that would take `bytes` past it is spilled.
    capacity: usize,
    /// Some version went to the History keyspace in this process.
    spilled: AtomicBool,
    /// Versions spilled (SHOW STATUS).
    spills: AtomicU64,
}

/// The bytes a version of `rows_key` with raw value `raw` is charged.
fn charge(rows_key: &[u8], raw: &[u8]) -> usize {
    rows_key.len() + raw.len() + VERSION_OVERHEAD
}

impl History {
    /// Old versions kept in at most about `capacity` bytes of memory; 0 sends
    /// every version to the History keyspace.
    pub(crate) fn new(capacity: usize) -> History {
        History {
            shards: (0..SHARDS)
                .map(|_| CachePadded::new(Mutex::new(Shard::default())))
                .collect(),
            hasher: DefaultHashBuilder::default(),
            bytes: AtomicUsize::new(0),
            versions: AtomicU64::new(0),
            capacity,
            spilled: AtomicBool::new(false),
            spills: AtomicU64::new(0),
        }
    }

    fn shard(&self, hash: u64) -> &Mutex<Shard> {
        &self.shards[(hash >> 40) as usize & (SHARDS - 1)]
    }

    /// Whether the version `raw` of `rows_key` goes to memory (`true`) or to
    /// the History keyspace. Called while preparing a batch, outside the
    /// commit mutex: concurrent commits may together overshoot the budget by
    /// what they admit at once. A refusal sets [`History::spilled`] before the
    /// batch is written (invariant H).
    pub(crate) fn admit(&self, rows_key: &[u8], raw: &[u8]) -> bool {
        if self.bytes.load(Ordering::Relaxed) + charge(rows_key, raw) <= self.capacity {
            return true;
        }
        self.spills.fetch_add(1, Ordering::Relaxed);
        self.spilled.store(true, Ordering::SeqCst);
        false
    }

    /// Whether some version went to the History keyspace in this process.
    pub(crate) fn spilled(&self) -> bool {
        self.spilled.load(Ordering::SeqCst)
    }

    /// Keeps the admitted version `raw` of `rows_key`, replaced by the commit
    /// at `end_ts`. Called under the commit mutex before the commit's storage
    /// write (invariant H), so a row's versions arrive in timestamp order.
    /// The key is taken owned: a row not held yet keeps it without a copy.
    pub(crate) fn insert(&self, rows_key: Vec<u8>, raw: Vec<u8>, end_ts: Timestamp) {
        let charged = charge(&rows_key, &raw);
        let version = Version {
            raw: raw.into_boxed_slice(),
            end_ts,
        };
        debug_assert!(version.raw.len() > TS_LEN && version.begin_ts() < end_ts);
        let hash = self.hasher.hash_one(&rows_key[..]);
        let mut shard = self.shard(hash).lock();
        let hasher = &self.hasher;
        let row = match shard.rows.entry(
            hash,
            |r| *r.key == rows_key[..],
            |r| hasher.hash_one(&*r.key),
        ) {
            Entry::Occupied(row) => row.into_mut(),
            Entry::Vacant(slot) => slot
                .insert(Row {
                    key: rows_key.into_boxed_slice(),
                    versions: VecDeque::new(),
                })
                .into_mut(),
        };
        debug_assert!(row.versions.back().is_none_or(|v| v.end_ts < end_ts));
        row.versions.push_back(version);
        drop(shard);
        self.bytes.fetch_add(charged, Ordering::Relaxed);
        self.versions.fetch_add(1, Ordering::Relaxed);
    }

    /// The version of `rows_key` visible at `at`, if memory holds it (see
    /// "Reading" in the module doc).
    pub(crate) fn get(&self, rows_key: &[u8], at: Timestamp) -> Result<Found> {
        let hash = self.hasher.hash_one(rows_key);
        let shard = self.shard(hash).lock();
        let Some(row) = shard.rows.find(hash, |r| &*r.key == rows_key) else {
            return Ok(Found::NotHere);
        };
        for v in row.versions.iter().rev() {
            if v.begin_ts() > at {
                continue;
            }
            if v.end_ts <= at {
                // A newer version began at or before `at`: if memory does not
                // have it, it was spilled.
                return Ok(Found::NotHere);
            }
            let version = keys::decode_version(&v.raw)?;
            return Ok(Found::Version(version.row.map(<[u8]>::to_vec)));
        }
        Ok(Found::NotHere)
    }

    /// Removes the version of `rows_key` that began at `begin_ts` (GC, from the
    /// garbage queue); `false` if memory does not hold it (it was spilled).
    pub(crate) fn remove(&self, rows_key: &[u8], begin_ts: Timestamp) -> bool {
        let hash = self.hasher.hash_one(rows_key);
        let mut shard = self.shard(hash).lock();
        let Ok(entry) = shard.rows.find_entry(hash, |r| &*r.key == rows_key) else {
            return false;
        };
        let row = entry.get();
        // GC pops commits oldest first, so the version is almost always the
        // row's oldest.
        let Some(i) = row.versions.iter().position(|v| v.begin_ts() == begin_ts) else {
            return false;
        };
        let charged = if row.versions.len() == 1 {
            let (row, _) = entry.remove();
            charge(&row.key, &row.versions[0].raw)
        } else {
            let row = entry.into_mut();
            let v = row.versions.remove(i).expect("position found above");
            charge(&row.key, &v.raw)
        };
        drop(shard);
        self.bytes.fetch_sub(charged, Ordering::Relaxed);
        self.versions.fetch_sub(1, Ordering::Relaxed);
        true
    }

    /// Removes every version with `end_ts <= w` (a GC sweep: garbage the queue
    /// did not hold) and, with `table`, every version of that table (its data
    /// is being purged). Returns how many went.
    pub(crate) fn retain(&self, w: Timestamp, table: Option<TableId>) -> u64 {
        let prefix = table.map(TableId::to_be_bytes);
        let mut removed = 0u64;
        let mut freed = 0usize;
        for shard in self.shards.iter() {
            let mut shard = shard.lock();
            shard.rows.retain(|row| {
                if prefix.is_some_and(|p| row.key.starts_with(&p)) {
                    removed += row.versions.len() as u64;
                    freed += row
                        .versions
                        .iter()
                        .map(|v| charge(&row.key, &v.raw))
                        .sum::<usize>();
                    return false;
                }
                while row.versions.front().is_some_and(|v| v.end_ts <= w) {
                    let v = row.versions.pop_front().expect("checked above");
                    removed += 1;
                    freed += charge(&row.key, &v.raw);
                }
                !row.versions.is_empty()
            });
        }
        self.bytes.fetch_sub(freed, Ordering::Relaxed);
        self.versions.fetch_sub(removed, Ordering::Relaxed);
        removed
    }

    /// Figures for SHOW STATUS: versions held, bytes charged, versions spilled.
    pub(crate) fn stats(&self) -> HistoryStats {
        HistoryStats {
            versions: self.versions.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed) as u64,
            spilled: self.spills.load(Ordering::Relaxed),
        }
    }
}

/// Figures for SHOW STATUS (`Canyon_history_*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HistoryStats {
    /// Old versions held in memory.
    pub versions: u64,
    /// Bytes charged for them: keys, values and a fixed 96 bytes per version.
    pub bytes: u64,
    /// Versions sent to the History keyspace because memory was over budget,
    /// since the start.
    pub spilled: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::version_value;

    fn raw(begin: Timestamp, row: Option<&[u8]>) -> Vec<u8> {
        let mut v = version_value(0, row);
        v[..TS_LEN].copy_from_slice(&begin.to_be_bytes());
        v
    }

    #[test]
    fn reads_the_version_whose_lifetime_holds_the_snapshot() {
        let h = History::new(1 << 20);
        // v1 lived [2, 5), a tombstone [5, 7), v3 [7, 9).
        h.insert(b"k".to_vec(), raw(2, Some(b"v1")), 5);
        h.insert(b"k".to_vec(), raw(5, None), 7);
        h.insert(b"k".to_vec(), raw(7, Some(b"v3")), 9);
        assert_eq!(h.get(b"k", 1).unwrap(), Found::NotHere);
        for s in 2..5 {
            assert_eq!(
                h.get(b"k", s).unwrap(),
                Found::Version(Some(b"v1".to_vec()))
            );
        }
        assert_eq!(h.get(b"k", 6).unwrap(), Found::Version(None));
        assert_eq!(
            h.get(b"k", 8).unwrap(),
            Found::Version(Some(b"v3".to_vec()))
        );
        // At 9 the Rows version is the answer; memory has none.
        assert_eq!(h.get(b"k", 9).unwrap(), Found::NotHere);
        assert_eq!(h.get(b"other", 3).unwrap(), Found::NotHere);
        assert_eq!(h.stats().versions, 3);
    }

    #[test]
    fn a_gap_left_by_a_spilled_version_is_not_an_answer() {
        let h = History::new(1 << 20);
        // [2, 5) in memory, [5, 7) spilled, [7, 9) in memory.
        h.insert(b"k".to_vec(), raw(2, Some(b"v1")), 5);
        h.insert(b"k".to_vec(), raw(7, Some(b"v3")), 9);
        assert_eq!(h.get(b"k", 6).unwrap(), Found::NotHere);
        assert_eq!(
            h.get(b"k", 4).unwrap(),
            Found::Version(Some(b"v1".to_vec()))
        );
    }

    #[test]
    fn remove_and_retain_account_for_every_byte() {
        let h = History::new(1 << 20);
        h.insert(b"\0\0\0\x01a".to_vec(), raw(2, Some(b"a1")), 5);
        h.insert(b"\0\0\0\x01a".to_vec(), raw(5, Some(b"a2")), 8);
        h.insert(b"\0\0\0\x01b".to_vec(), raw(3, Some(b"b1")), 6);
        h.insert(b"\0\0\0\x02c".to_vec(), raw(3, Some(b"c1")), 9);
        assert!(h.remove(b"\0\0\0\x01a", 2));
        assert!(!h.remove(b"\0\0\0\x01a", 2), "removed once");
        assert!(!h.remove(b"\0\0\0\x01z", 2), "never held");
        assert_eq!(h.stats().versions, 3);
        // Watermark 8: a2 (ended 8) and b1 (ended 6) go, c1 (ended 9) stays.
        assert_eq!(h.retain(8, None), 2);
        assert_eq!(
            h.get(b"\0\0\0\x02c", 4).unwrap(),
            Found::Version(Some(b"c1".to_vec()))
        );
        // Purging table 2 takes c1 whatever its end.
        assert_eq!(h.retain(0, Some(2)), 1);
        assert_eq!(
            h.stats(),
            HistoryStats {
                versions: 0,
                bytes: 0,
                spilled: 0
            }
        );
    }

    #[test]
    fn past_the_budget_versions_spill() {
        let one = charge(b"k", &raw(2, Some(b"v1")));
        let h = History::new(one);
        assert!(!h.spilled());
        assert!(h.admit(b"k", &raw(2, Some(b"v1"))));
        h.insert(b"k".to_vec(), raw(2, Some(b"v1")), 5);
        assert!(!h.admit(b"k", &raw(5, Some(b"v2"))));
        assert!(h.spilled());
        assert_eq!(h.stats().spilled, 1);
        assert!(h.remove(b"k", 2));
        assert!(h.admit(b"k", &raw(5, Some(b"v2"))), "room again after GC");
        assert!(!History::new(0).admit(b"k", &raw(2, None)));
    }
}
