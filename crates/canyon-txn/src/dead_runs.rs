//! Dead runs: letting a range scan start past the deleted head of a queue.
//!
//! # The problem
//!
//! A table used as a queue — rows inserted at the tail, taken from the head by
//! `SELECT ... ORDER BY pk LIMIT 1 FOR UPDATE` and deleted, as TPC-C's
//! Delivery does with `new_order` — leaves its head full of dead keys: a
//! delete writes a Rows tombstone, which GC removes only once no snapshot
//! needs it (in batches: `TxnConfig::gc_tombstone_interval`), and RocksDB
//! keeps its own delete markers and the overwritten versions until compaction
//! reaches them. Every scan of the queue starts at the range's first key and
//! steps over all of them to find the first live row. Measured under TPC-C
//! (2 warehouses, 8 clients): each of Delivery's ten `new_order` scans stepped
//! over 240–450 Rows tombstones and 600–900 hidden RocksDB entries before its
//! one row, and those scans took 7% of the server's CPU samples. InnoDB does
//! not pay this: its purge removes delete-marked records from the B-tree
//! within moments, and a B-tree descent lands on the first live record.
//!
//! # The idea
//!
//! A scan that stepped over many dead entries at the start of its range before
//! meeting a live one records a **run**: `[start, resume)` is dead. A later
//! scan of the same range start begins at `resume` instead, which costs one
//! seek past everything dead, in Canyon and in RocksDB. The head of a queue
//! only moves up, so the run keeps being extended by the scans that use it.
//!
//! ```text
//!   Rows  (t, w1 d1 o2101) tomb  ...  (t, w1 d1 o2517) tomb  (t, w1 d1 o2518) live ...
//!         ^ start                                            ^ resume
//!   run:  start -> { resume, dead_through = newest tombstone's commit_ts }
//! ```
//!
//! # The invariant, and what keeps it
//!
//! **I: while a run `[start, resume)` with `dead_through = d` is in the map,
//! every Rows key in `[start, resume)` is absent from storage or holds a
//! tombstone with `commit_ts <= d`.**
//!
//! Given I, a scan that finds the run, then scans storage from `resume`, sees
//! what a scan from `start` would have seen had it passed `[start, resume)` at
//! the moment it found the run: nothing live. That is a result a storage scan
//! could give anyway (scans are not storage-level snapshots: the MVCC layer
//! gets its isolation from timestamps, `canyon_storage::Storage`). A current
//! read (locking reads, UPDATE, DELETE) can therefore always use a run; a
//! snapshot read at `S` only if `S >= d`, since a tombstone newer than `S` may
//! hide a row `S` still sees (an absent key is a tombstone GC collected, which
//! it does only below every snapshot's timestamp). The transaction's own
//! writes are merged from its write buffer as for any scan.
//!
//! Only commits write to Rows (GC and DROP TABLE only delete), and a commit
//! writes a tombstone only over a live value (deleting a dead row writes
//! nothing), so I can break only by a commit writing a **live** value into a
//! run, or by a run recorded wrongly. Two rules close both ways:
//!
//! 1. **Writers remove first.** Under the commit mutex, before its storage
//!    write, a commit looks up every live Rows key it writes in a table that
//!    has runs, removes the run covering it, and appends `(commit_ts, key)` to
//!    the table's bounded log of live writes.
//! 2. **Recorders check the log.** A scan loads `last_written_ts` (`L0`)
//!    before it starts. Every commit at or below `L0` was written before the
//!    scan began, so the scan saw it (or what replaced it). A commit above
//!    `L0` may have been missed — but it is in the log (the table was made
//!    *watched* under the commit mutex at a timestamp `<= L0`, so every later
//!    commit logs), and the run is recorded only if no logged write above
//!    `L0` falls inside it and the log still reaches back to `L0`. A write
//!    logged after the run is recorded removes it by rule 1.
//!
//! A run that extends one found at the scan's start covers the found part by
//! the same check: a commit writing into it after the run was found is above
//! `L0` (it was written after the scan began) and in the log.
//!
//! # Costs
//!
//! Nothing, for tables that never showed a dead head: commits test one
//! counter (no table is watched) or one flag per shard of tables, scans one
//! counter or flag. A watched table costs a forward scan of it one load of
//! `last_written_ts` (the `l0` of rule 2), one shard mutex and a map lookup,
//! and a live write to it one shard mutex, a map lookup and
//! a log entry, under the commit mutex (listed in
//! `docs/architecture/scalability.md`). At most [`MAX_TABLES`] tables are
//! watched; the rest scan as before.

use crate::keys::{decode_version, ID_LEN};
use crate::{TableId, Timestamp};
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Dead entries a scan must step over, from its start, before its first live
/// one, for a run to be recorded (or extended): fewer cost less to step over
/// than the bookkeeping does.
pub(crate) const MIN_RUN: usize = 16;

/// Live writes remembered per watched table. A scan's window between loading
/// `L0` and recording is one storage scan; the log only has to outlast it.
const LOG_ENTRIES: usize = 256;

/// Watched tables at most.
pub(crate) const MAX_TABLES: usize = 64;

/// Runs per watched table at most; past it the table's runs are dropped and
/// relearned (a queue needs one run per range start it is scanned from).
const MAX_RUNS: usize = 4096;

/// Shards of the table map (a power of two).
const SHARDS: usize = 16;

/// One run: `[start, resume)` is dead (invariant I of the module doc).
#[derive(Debug, Clone)]
pub(crate) struct Run {
    /// The first key a scan from `start` needs to read (a live one when
    /// recorded).
    pub(crate) resume: Vec<u8>,
    /// The newest commit timestamp of a tombstone inside the run.
    pub(crate) dead_through: Timestamp,
}

/// A watched table.
#[derive(Debug)]
struct Table {
    /// The commit timestamp at or below which commits may not have logged
    /// (the newest handed out when the table was watched).
    watched_at: Timestamp,
    /// Runs by their start key (a full Rows key); never overlapping.
    runs: BTreeMap<Vec<u8>, Run>,
    /// Recent live writes, oldest first.
    log: VecDeque<(Timestamp, Vec<u8>)>,
    /// The newest timestamp of a write dropped from `log`.
    trimmed_through: Timestamp,
}

#[derive(Debug, Default)]
struct Shard {
    /// Whether `tables` is non-empty: a commit or scan tests this, not the mutex.
    watched: AtomicBool,
    tables: Mutex<HashMap<TableId, Table>>,
}

/// The runs of every watched table. See the module doc.
#[derive(Debug)]
pub(crate) struct DeadRuns {
    /// Watched tables in all shards.
    watched: AtomicUsize,
    shards: Vec<Shard>,
}

impl Default for DeadRuns {
    fn default() -> Self {
        DeadRuns {
            watched: AtomicUsize::new(0),
            shards: (0..SHARDS).map(|_| Shard::default()).collect(),
        }
    }
}

/// The table id of a Rows key (`keys.rs`: a 4-byte big-endian prefix).
fn table_of(rows_key: &[u8]) -> Option<TableId> {
    let id: [u8; ID_LEN] = rows_key.get(..ID_LEN)?.try_into().ok()?;
    Some(TableId::from_be_bytes(id))
}

impl DeadRuns {
    fn shard(&self, table: TableId) -> &Shard {
        &self.shards[table as usize % SHARDS]
    }

    /// Whether any table is watched (one load: the commit path's test).
    pub(crate) fn any_watched(&self) -> bool {
        self.watched.load(Ordering::Relaxed) > 0
    }

    /// Whether another table may be watched.
    pub(crate) fn can_watch(&self) -> bool {
        self.watched.load(Ordering::Relaxed) < MAX_TABLES
    }

    /// `None` if `table` is not watched; else the run starting exactly at
    /// `start` (a Rows key), if there is one.
    pub(crate) fn lookup(&self, table: TableId, start: &[u8]) -> Option<Option<Run>> {
        if self.watched.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let shard = self.shard(table);
        if !shard.watched.load(Ordering::Acquire) {
            return None;
        }
        let tables = shard.tables.lock();
        Some(tables.get(&table)?.runs.get(start).cloned())
    }

    /// Starts watching `table`. The caller holds the commit mutex, and
    /// `next_ts` is the newest commit timestamp handed out: every commit above
    /// it checks the flag this sets (rule 2 of the module doc). Returns false
    /// when [`MAX_TABLES`] are watched already.
    pub(crate) fn watch(&self, table: TableId, next_ts: Timestamp) -> bool {
        let shard = self.shard(table);
        let mut tables = shard.tables.lock();
        if tables.contains_key(&table) {
            return true;
        }
        if self.watched.load(Ordering::Relaxed) >= MAX_TABLES {
            return false;
        }
        tables.insert(
            table,
            Table {
                watched_at: next_ts,
                runs: BTreeMap::new(),
                log: VecDeque::new(),
                trimmed_through: 0,
            },
        );
        shard.watched.store(true, Ordering::Release);
        self.watched.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// Rule 1: called under the commit mutex, before the storage write of the
    /// commit at `ts`, with each Rows key and value it writes. Removes the run
    /// covering a live write and logs the write.
    pub(crate) fn note_write(&self, ts: Timestamp, rows_key: &[u8], value: &[u8]) {
        let Some(table) = table_of(rows_key) else {
            return;
        };
        let shard = self.shard(table);
        if !shard.watched.load(Ordering::Acquire) {
            return;
        }
        if matches!(decode_version(value), Ok(v) if v.row.is_none()) {
            return; // a tombstone: cannot break invariant I
        }
        let mut tables = shard.tables.lock();
        let Some(t) = tables.get_mut(&table) else {
            return;
        };
        let covering = t
            .runs
            .range::<[u8], _>((Bound::Unbounded, Bound::Included(rows_key)))
            .next_back()
            .filter(|(_, run)| rows_key < run.resume.as_slice())
            .map(|(start, _)| start.clone());
        if let Some(start) = covering {
            t.runs.remove(&start);
        }
        if t.log.len() == LOG_ENTRIES {
            if let Some((old_ts, _)) = t.log.pop_front() {
                t.trimmed_through = t.trimmed_through.max(old_ts);
            }
        }
        t.log.push_back((ts, rows_key.to_vec()));
    }

    /// Rule 2: records that `[start, run.resume)` is dead, as seen by a scan
    /// that loaded `last_written_ts = l0` before it began. Refused (returns
    /// false) if a commit above `l0` wrote a live row inside, if the log no
    /// longer reaches back to `l0`, or if the table is not watched since
    /// before `l0`.
    pub(crate) fn record(&self, table: TableId, start: &[u8], run: Run, l0: Timestamp) -> bool {
        debug_assert!(start < run.resume.as_slice(), "a run is never empty");
        let shard = self.shard(table);
        let mut tables = shard.tables.lock();
        let Some(t) = tables.get_mut(&table) else {
            return false;
        };
        if t.watched_at > l0 || t.trimmed_through > l0 {
            return false;
        }
        let end = run.resume.as_slice();
        let missed = t
            .log
            .iter()
            .rev()
            .take_while(|(ts, _)| *ts > l0)
            .any(|(_, k)| start <= k.as_slice() && k.as_slice() < end);
        if missed {
            return false;
        }
        // Runs never overlap: drop those this one overlaps (its own older
        // form included), so that rule 1 finds the one covering a key with a
        // single lookup.
        // (Sorted by start and disjoint, so their ends ascend too.)
        let overlapped: Vec<Vec<u8>> = t
            .runs
            .range::<[u8], _>((Bound::Unbounded, Bound::Excluded(end)))
            .rev()
            .take_while(|(_, r)| r.resume.as_slice() > start)
            .map(|(s, _)| s.clone())
            .collect();
        for s in overlapped {
            t.runs.remove(&s);
        }
        if t.runs.len() >= MAX_RUNS {
            t.runs.clear();
        }
        t.runs.insert(start.to_vec(), run);
        true
    }

    /// Forgets `table` (dropped): its keys are gone and its id is not reused.
    pub(crate) fn forget(&self, table: TableId) {
        let shard = self.shard(table);
        let mut tables = shard.tables.lock();
        if tables.remove(&table).is_some() {
            self.watched.fetch_sub(1, Ordering::Relaxed);
            if tables.is_empty() {
                shard.watched.store(false, Ordering::Release);
            }
        }
    }

    /// Runs recorded, in all tables.
    pub(crate) fn runs(&self) -> usize {
        self.shards
            .iter()
            .map(|s| {
                s.tables
                    .lock()
                    .values()
                    .map(|t| t.runs.len())
                    .sum::<usize>()
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::version_value;

    const T: TableId = 7;

    fn key(s: &str) -> Vec<u8> {
        [&T.to_be_bytes()[..], s.as_bytes()].concat()
    }

    fn run(resume: &str) -> Run {
        Run {
            resume: key(resume),
            dead_through: 3,
        }
    }

    fn found(d: &DeadRuns, start: &str) -> Option<String> {
        let run = d.lookup(T, &key(start))??;
        Some(String::from_utf8_lossy(&run.resume[ID_LEN..]).into_owned())
    }

    #[test]
    fn a_table_is_watched_before_runs_are_recorded() {
        let d = DeadRuns::default();
        assert!(d.lookup(T, &key("a")).is_none());
        assert!(!d.record(T, &key("a"), run("m"), 10), "not watched");
        assert!(d.watch(T, 10));
        assert!(
            !d.record(T, &key("a"), run("m"), 9),
            "a scan that began before the table was watched may have missed a commit \
             that did not log"
        );
        assert!(d.record(T, &key("a"), run("m"), 10));
        assert_eq!(found(&d, "a").as_deref(), Some("m"));
        d.forget(T);
        assert!(d.lookup(T, &key("a")).is_none());
        assert!(!d.any_watched());
    }

    #[test]
    fn a_live_write_removes_the_run_it_falls_into_and_a_tombstone_does_not() {
        let d = DeadRuns::default();
        d.watch(T, 0);
        assert!(d.record(T, &key("a"), run("m"), 0));
        assert!(d.record(T, &key("p"), run("t"), 0));
        d.note_write(5, &key("c"), &version_value(5, None));
        assert_eq!(found(&d, "a").as_deref(), Some("m"), "a tombstone");
        d.note_write(5, &key("m"), &version_value(5, Some(b"row")));
        assert_eq!(
            found(&d, "a").as_deref(),
            Some("m"),
            "the resume key is outside"
        );
        d.note_write(6, &key("c"), &version_value(6, Some(b"row")));
        assert_eq!(found(&d, "a"), None);
        assert_eq!(found(&d, "p").as_deref(), Some("t"), "other runs stay");
        // Another table's write touches nothing.
        let other = [&8u32.to_be_bytes()[..], b"q"].concat();
        d.note_write(7, &other, &version_value(7, Some(b"row")));
        assert_eq!(d.runs(), 1);
    }

    #[test]
    fn a_run_over_a_write_the_scan_may_have_missed_is_refused() {
        let d = DeadRuns::default();
        d.watch(T, 0);
        d.note_write(11, &key("c"), &version_value(11, Some(b"row")));
        // Written above L0 = 10, inside [a, m): the scan may not have seen it.
        assert!(!d.record(T, &key("a"), run("m"), 10));
        // At or below L0 the scan saw it; outside the run it does not matter.
        assert!(d.record(T, &key("a"), run("m"), 11));
        assert!(d.record(T, &key("d"), run("m"), 10));
        // Once the log no longer reaches back to L0, nothing is recorded.
        for ts in 12..12 + LOG_ENTRIES as u64 + 1 {
            d.note_write(ts, &key("z"), &version_value(ts, Some(b"row")));
        }
        assert!(!d.record(T, &key("n"), run("p"), 11), "ts 12 was dropped");
        assert!(d.record(T, &key("n"), run("p"), 12 + LOG_ENTRIES as u64));
    }

    #[test]
    fn runs_never_overlap() {
        let d = DeadRuns::default();
        d.watch(T, 0);
        assert!(d.record(T, &key("c"), run("f"), 0));
        assert!(d.record(T, &key("h"), run("k"), 0));
        assert!(d.record(T, &key("x"), run("y"), 0));
        // [a, i) overlaps both [c, f) and [h, k), not [x, y).
        assert!(d.record(T, &key("a"), run("i"), 0));
        assert_eq!(found(&d, "c"), None);
        assert_eq!(found(&d, "h"), None);
        assert_eq!(found(&d, "a").as_deref(), Some("i"));
        assert_eq!(found(&d, "x").as_deref(), Some("y"));
        // A write at "g" finds the one run covering it.
        d.note_write(1, &key("g"), &version_value(1, Some(b"row")));
        assert_eq!(d.runs(), 1);
    }
}
