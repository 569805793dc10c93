//! Multi-version concurrency control: versions, visibility, isolation, write
//! buffers, and the transaction state machine.
//!
//! # The idea in one paragraph
//!
//! Only committed data ever reaches storage. A transaction buffers its writes in
//! memory, takes exclusive row locks for every row it writes, and at commit writes
//! one atomic batch stamped with a fresh **commit timestamp**. A global counter,
//! `visible`, is the largest timestamp such that every commit at or below it is
//! fully written (and durable, under [`Durability::SyncEveryCommit`]). A
//! **snapshot** is one atomic load of `visible`; a snapshot read returns, for each
//! row, the newest version whose commit timestamp is at or below the snapshot.
//! There is no list of active transactions to copy and no global mutex to take for
//! a read, unlike InnoDB's read views (built under `trx_sys->mutex` in 5.6), because
//! an uncommitted write is never in storage for a reader to skip.
//!
//! Sources: the version store follows InnoDB's split between the clustered index
//! (newest version, read in one lookup) and the undo log (older versions, reached
//! only by old snapshots); the timestamps follow the commit-timestamp snapshot
//! isolation of Berenson et al., "A Critique of ANSI SQL Isolation Levels" (1995);
//! the anomaly names are Adya's ("Weak Consistency", 1999) as tested by Hermitage.
//! Where Canyon differs from InnoDB: versions are keyed by timestamp in a separate
//! keyspace rather than chained through roll pointers, and deletes are tombstones
//! in place rather than delete-marked records purged later (the effect is the
//! same: [`TxnManager::run_gc_once`] plays the purge thread).
//!
//! # Versions
//!
//! ```text
//!  Rows     (t, pk)        -> [commit_ts 9 | live | row v3]      newest: one get
//!  History  (t, pk, !5)    -> [end_ts    9 | live | row v2]      began at 5, replaced at 9
//!           (t, pk, !2)    -> [end_ts    5 | live | row v1]      began at 2, replaced at 5
//!
//!  reader at S = 6:  Rows ts 9 > 6  ->  seek History from (t, pk, !6) forward
//!                    first key of exactly this pk: (t, pk, !5), end 9 > 6  ->  v2
//! ```
//!
//! `!ts` (bitwise not) makes a forward seek meet the newest version that began at
//! or before the snapshot first. A delete writes a tombstone (flag 0) into Rows;
//! replacing any Rows value (tombstones included) moves it verbatim to History with
//! `end_ts` = the replacing commit's timestamp. The exact bytes are in
//! `docs/format.md` and `keys.rs`.
//!
//! History is drawn above as the keyspace it is on disk, but a replaced version
//! goes there only past a memory budget: it is read only by snapshots of this
//! process, so it needs no durability, and it is kept in memory, per row, with
//! the same `begin_ts` and `end_ts` (`history.rs`, with the invariant that makes
//! every needed version findable in one of the two places).
//!
//! **Snapshot read** of `(t, pk)` at `S` ([`TxnManager::read_version`]):
//! 1. the transaction's own write buffer, if it has the pk;
//! 2. Rows (through the row cache, which holds exactly what Rows holds for the
//!    rows it has: `row_cache.rs`): if `commit_ts <= S`, that version (a
//!    tombstone reads as "no row");
//! 3. else the row's versions in memory, the one with `begin_ts <= S < end_ts`;
//!    failing that, if any version was ever spilled, History from `(t, pk, !S)`:
//!    the first key of exactly `len(t ++ pk) + 8` bytes is the newest version that
//!    began at or before `S`; it is the answer if its `end_ts > S` (always true
//!    unless GC or a delete left a gap, in which case the row did not exist at
//!    `S`); otherwise, or when there is none, no row.
//!
//! **Current read** (under a row lock, for writes and locking reads): the own
//! write buffer, else the Rows version as it is.
//!
//! **Index entries** `(index, index_key, pk) -> end_ts` are markers, not copies: an
//! entry says "some version of this pk had this key until `end_ts`" (`u64::MAX`:
//! the live version has it). Invariant: for every snapshot `S` and every row version
//! visible at `S`, each of its index keys has an entry with `end_ts > S`. A scan
//! therefore finds every candidate, fetches the row version the reader would see,
//! yields each pk once (at its first entry), and the SQL layer re-checks its
//! predicate on the row. A row changed `A -> B -> A` has one entry for `A`, live,
//! and one for `B`, ended; a snapshot taken while it was `B` meets the `A` entry
//! first and gets the row (with `B`) there.
//!
//! # Timestamps and their invariants
//!
//! ```text
//!   next_ts          newest commit timestamp handed out (under the commit mutex)
//!   last_written_ts  newest commit whose batch storage has accepted
//!   visible          every commit <= visible is written (and durable, if syncing)
//! ```
//!
//! 1. `visible <= last_written_ts <= next_ts`, all three only grow.
//! 2. Storage holds only committed versions; each commit is one atomic batch that
//!    also writes `txn/last_ts = commit_ts` (so recovery is `visible = last_ts`).
//! 3. Commit timestamps are assigned and written in one order (the commit mutex),
//!    so "every commit <= visible is written" is a prefix property and a reader's
//!    snapshot never has holes.
//! 4. A row version with `commit_ts > S` is never returned to a snapshot `S`; so a
//!    batch that is written but not yet visible (waiting for its sync) is skipped.
//!
//! # Isolation
//!
//! | level | snapshot | writes |
//! |---|---|---|
//! | READ UNCOMMITTED, READ COMMITTED | fresh at each statement's first consistent read | row locks, current reads |
//! | REPEATABLE READ, SERIALIZABLE | taken at the transaction's first consistent read, kept | row locks, current reads |
//!
//! READ UNCOMMITTED behaves as READ COMMITTED: there is no uncommitted data in
//! storage to read. SERIALIZABLE's conversion of plain reads into locking reads is
//! the SQL layer's. The snapshot is taken lazily, at the first consistent read,
//! as InnoDB creates its read view at the first consistent read (MySQL manual,
//! "Consistent Nonlocking Reads"), so a transaction that only writes publishes
//! nothing. Which anomalies each level allows, with the test showing each, is in
//! `docs/architecture/transactions.md`.
//!
//! # Write buffer and statement savepoints
//!
//! Each transaction keeps `BTreeMap<t ++ pk, Buffered>`: the new row (or `None` for
//! a delete), the index keys of the committed version it replaces (recorded at the
//! first write of the pk, from what the caller read), and the index keys of the
//! new row. Reads and scans merge it in key order. [`Transaction::begin_statement`]
//! empties an undo log of previous buffer values; [`Transaction::rollback_statement`]
//! replays it backwards. Locks taken by the failed statement stay held, as in
//! InnoDB.
//!
//! # Transaction states
//!
//! | from | event | to | function |
//! |---|---|---|---|
//! | Active | commit | (consumed) | [`Transaction::commit`] |
//! | Active | XA PREPARE | (consumed; its locks and writes, unreleased, now a prepared branch's: `xa.rs`) | [`crate::XaClaim::prepare`] |
//! | Active | rollback or drop | (consumed) | [`Transaction::rollback`], `Drop` |
//! | Active | chosen as deadlock victim | Aborted | [`Transaction::lock`] |
//! | Aborted | any read, lock or commit | Aborted, returns [`Error::Deadlock`] | |
//! | Aborted | rollback or drop | (consumed) | [`Transaction::rollback`], `Drop` |
//!
//! Entering Aborted releases every lock, empties the write buffer and clears the
//! snapshot at once, so the transactions the victim blocked go on without waiting
//! for the client's ROLLBACK. Writes given to an Aborted transaction are dropped.
//! A transaction id is assigned at the first lock or write (an atomic
//! `fetch_add`); read-only autocommit statements touch no shared counter and write
//! only their own session's snapshot slot.
//!
//! # Shared writes on the hot paths
//!
//! - read: the session's own snapshot slot (its own cache line), one load of
//!   `visible`, one load of the GC horizon, and per point read one of the row
//!   cache's 64 shard mutexes (its hit and miss counters live under it).
//! - write transaction: `next_txn_id` (`fetch_add`), the lock-table shard of each
//!   locked key, then at commit the commit mutex (which also serialises WAL order =
//!   timestamp order; RocksDB serialises its writers anyway), under it the row
//!   cache's shard of each written row (and, for each version it replaces, that
//!   row's shard of the in-memory History), then the group-commit state, and
//!   `visible`; a live write into a table with dead runs also takes that
//!   table's shard of them (`dead_runs.rs`).
//!
//! # Not implemented
//!
//! - First-committer-wins: under REPEATABLE READ a transaction may overwrite a
//!   row changed after its snapshot (it reads the current version under the lock,
//!   as InnoDB does), so lost updates are possible when the application reads
//!   without locking — the same as MySQL.
//! - Victim choice by size of the transaction (the requester is the victim).
//! - A long snapshot holds back GC for everything (InnoDB's purge lag likewise).
//! - GC deletes through the write path (from a queue the commits fill, gc.rs);
//!   a RocksDB compaction filter would drop garbage for free.
//! - Exact index order for old snapshots: a row whose indexed columns changed
//!   after the snapshot may be yielded at its newer key's position (entries carry
//!   only an end timestamp, so the scan cannot tell which key the old version had;
//!   versioned index entries would fix it at the cost of one entry per change).
//! - Transactions larger than memory: the write buffer is all in RAM. (A
//!   LOAD DATA into an empty table avoids it: sorted runs on disk, ingested
//!   at commit, `bulk.rs`.)
//!
//! [`Durability::SyncEveryCommit`]: crate::Durability::SyncEveryCommit
//! [`Error::Deadlock`]: canyon_common::Error::Deadlock

use crate::commit::GroupCommit;
use crate::dead_runs::DeadRuns;
use crate::gc::{Background, GarbageQueue, SlotRef, SnapshotRegistry};
use crate::history::{Found, History, HistoryStats};
use crate::keys::{self, decode_version, history_seek_range, rows_key};
use crate::lock::{LockMode, LockTable, LockWait, Queued};
use crate::range_lock::{Outcome, RangeLocks, Registration, Space};
use crate::row_cache::{Lookup, RowCache, RowCacheStats, RowsValue};
use crate::{IndexId, IsolationLevel, ReadMode, TableId, Timestamp, TxnConfig, TxnId};
use canyon_common::{Error, Result};
use canyon_storage::{KeyRange, Keyspace, Storage};
use crossbeam_utils::CachePadded;
use parking_lot::Mutex;
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The transaction manager: timestamps, the lock table, the snapshot registry, the
/// commit path and the background threads (GC, the syncer or the periodic sync).
/// One per database.
pub struct TxnManager {
    pub(crate) storage: Arc<dyn Storage>,
    pub(crate) config: TxnConfig,
    /// Newest commit timestamp handed out. Written only under `commit_mutex`.
    pub(crate) next_ts: CachePadded<AtomicU64>,
    /// Newest commit whose batch storage accepted. Written only under `commit_mutex`.
    pub(crate) last_written_ts: CachePadded<AtomicU64>,
    /// Every commit at or below this is written (and durable, if syncing).
    pub(crate) visible: CachePadded<AtomicU64>,
    /// Source of transaction ids.
    pub(crate) next_txn_id: CachePadded<AtomicU64>,
    /// Serialises timestamp assignment with the storage write (commit.rs rule 3).
    pub(crate) commit_mutex: Mutex<()>,
    /// Leader/follower group commit state, shared with the syncer thread.
    pub(crate) group: Arc<GroupCommit>,
    /// Set once a storage write or sync failed; every later commit is refused.
    pub(crate) failed: AtomicBool,
    /// Why `failed` was set.
    pub(crate) failure: Mutex<Option<String>>,
    pub(crate) locks: LockTable,
    /// Range locks and insert intentions (range_lock.rs).
    pub(crate) ranges: RangeLocks,
    /// The newest version of recently read rows (`row_cache.rs`).
    pub(crate) row_cache: RowCache,
    pub(crate) snapshots: SnapshotRegistry,
    /// Keys commits made garbage, for the GC (gc.rs, "Finding the garbage").
    pub(crate) garbage: GarbageQueue,
    /// When GC last collected queued Rows tombstones
    /// (`TxnConfig::gc_tombstone_interval`).
    pub(crate) last_tombstone_pass: Mutex<Option<std::time::Instant>>,
    /// Where scans may start past the dead head of a range (dead_runs.rs).
    pub(crate) dead_runs: DeadRuns,
    /// Old versions held in memory, the rest in the History keyspace
    /// (history.rs).
    pub(crate) history: History,
    pub(crate) background: Background,
    /// The writer gates of tables being bulk loaded (bulk.rs).
    pub(crate) bulk_gate: crate::bulk::BulkGate,
    /// XA branches: started, prepared, finishing (xa.rs).
    pub(crate) xa: crate::xa::XaRegistry,
    /// The change log's head and readers (changelog.rs).
    pub(crate) changelog: crate::changelog::ChangeLog,
}

impl std::fmt::Debug for TxnManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TxnManager")
            .field("storage", &self.storage.name())
            .field("next_ts", &self.next_ts.load(Ordering::Relaxed))
            .field("visible", &self.visible.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// One connection's handle on the manager. It owns the connection's snapshot slot
/// (registered with the GC once, here, not per statement).
pub struct TxnSession {
    mgr: MgrHandle,
    pub(crate) slot: SlotRef,
}

/// The manager as a transaction holds it: a per-session `Arc` around the shared
/// one. Beginning a transaction clones this handle, whose reference count only
/// this session's thread touches — cloning the shared `Arc<TxnManager>` instead
/// would write one cache line shared by every core on every statement.
#[derive(Clone)]
#[allow(clippy::redundant_allocation)] // the extra allocation is the point: see above
pub(crate) struct MgrHandle(Arc<Arc<TxnManager>>);

impl std::ops::Deref for MgrHandle {
    type Target = TxnManager;
    fn deref(&self) -> &TxnManager {
        &self.0
    }
}

impl std::fmt::Debug for TxnSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TxnSession").finish_non_exhaustive()
    }
}

/// The committed Rows value a buffered write replaces, as the transaction's own
/// locked current read ([`Transaction::get_locked`]) saw it. Commit moves it to
/// History; remembering it spares commit a second storage read of every row it
/// writes (3.7% of the server's CPU under TPC-C, measured with `perf`).
///
/// Valid until the transaction ends because the row lock was held at the read and
/// is held until then (commit rule 2): no other writer can change the value. GC
/// changes Rows values without row locks only by removing tombstones, so a
/// tombstone is never remembered; `Absent` and `Live` cannot change under a lock.
#[derive(Debug, Clone)]
pub(crate) enum Replaced {
    /// Not remembered: commit reads the value from storage.
    Unknown,
    /// No Rows value at all.
    Absent,
    /// A live version, raw: header and row, exactly as stored. Shared, because
    /// statement undo and savepoints copy the write buffer, and the row cache
    /// may hold the same value.
    Live(RowsValue),
}

/// At most this many bytes of replaced values are remembered per transaction;
/// past it, commit reads them again. Bounds the extra memory of a bulk UPDATE to
/// this, not to a second copy of every row it touched.
const REMEMBERED_BYTES_MAX: usize = 4 << 20;

/// One transaction's buffered write of one row.
#[derive(Debug, Clone)]
pub(crate) struct Buffered {
    /// The new row, or `None` for a delete.
    pub row: Option<Vec<u8>>,
    /// The committed version this write replaces, if the locked read remembered it.
    pub replaced: Replaced,
    /// Index keys of the committed version this write replaces (as the caller read
    /// it at the transaction's first write of this pk).
    pub committed_index_keys: Vec<(IndexId, Vec<u8>)>,
    /// Index keys of `row` (empty for a delete).
    pub new_index_keys: Vec<(IndexId, Vec<u8>)>,
}

/// A lock a transaction is queued for while its caller awaits the wait
/// ([`Transaction::lock_wait`]).
#[derive(Debug)]
pub(crate) struct PendingLock {
    key: Vec<u8>,
    waiter: Arc<crate::lock::Waiter>,
    deadline: Option<std::time::Instant>,
    /// A wait for another transaction's end ([`Transaction::wait_for_txn`]):
    /// the lock is given back as soon as it is granted.
    transient: bool,
}

/// The lock keys a transaction holds, with the mode of each.
pub(crate) type HeldLocks = HashMap<Vec<u8>, LockMode>;

/// The lock key every transaction that registers a range lock or an insert
/// intention holds exclusively, and others take shared to wait for its end
/// (range_lock.rs). SQL-layer keys never start with `t`.
pub(crate) fn txn_lock_key(id: TxnId) -> Vec<u8> {
    let mut k = Vec::with_capacity(9);
    k.push(b't');
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// Where a transaction is in its life. See the state table in the module doc.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TxnState {
    Active,
    /// Chosen as a deadlock victim: rolled back already, waiting for the client.
    Aborted,
    /// Committed or rolled back; only `Drop` sees this.
    Finished,
}

/// A transaction: a snapshot, a write buffer and a set of row locks.
///
/// Dropping an unfinished transaction rolls it back.
pub struct Transaction {
    pub(crate) mgr: MgrHandle,
    /// This transaction's snapshot slot (usually its session's).
    pub(crate) slot: SlotRef,
    pub(crate) isolation: IsolationLevel,
    /// Assigned at the first lock or write.
    pub(crate) id: Option<TxnId>,
    /// The published snapshot, if one is taken (RC: for the current statement).
    pub(crate) snapshot: Option<Timestamp>,
    pub(crate) lock_wait_timeout: Duration,
    /// The session's interrupt flag (KILL QUERY): non-zero ends lock waits
    /// with [`Error::Interrupted`].
    pub(crate) interrupt: Option<Arc<std::sync::atomic::AtomicU32>>,
    /// Lock keys held.
    pub(crate) held: HeldLocks,
    /// Range locks and insert intentions registered (range_lock.rs), removed
    /// at the end with the row locks.
    pub(crate) gaps: Vec<Registration>,
    /// Lock waits are handed to the caller instead of blocking (see
    /// [`Transaction::set_deferred_lock_waits`]).
    pub(crate) defer_waits: bool,
    /// The deferred wait in progress: the key, its queued waiter, the deadline.
    pub(crate) pending: Option<PendingLock>,
    /// The write buffer, keyed by the Rows key `table ++ pk`.
    pub(crate) writes: BTreeMap<Vec<u8>, Buffered>,
    /// Every table written (buffered or bulk-loaded) since the start, no
    /// duplicates; kept through statement and savepoint rollbacks (a
    /// superset is what its reader, the SQL layer's DDL wait, needs).
    pub(crate) tables_written: Vec<TableId>,
    /// Previous buffer values changed by the current statement, oldest first.
    /// Boxed: a statement that inserts a million rows (LOAD DATA) logs a
    /// million `None`s, at 32 bytes each instead of `Buffered`'s width.
    pub(crate) undo: Vec<(Vec<u8>, Option<Box<Buffered>>)>,
    /// SAVEPOINTs, oldest first: a name and the write buffer as it was. They
    /// live and die with the transaction.
    pub(crate) savepoints: Vec<Savepoint>,
    /// The last [`Transaction::get_locked`] that reached storage: its Rows key and
    /// what it found, taken by the first buffered write of that key.
    pub(crate) locked_read: Option<(Vec<u8>, Replaced)>,
    /// Bytes of `Replaced::Live` values remembered so far (<= REMEMBERED_BYTES_MAX).
    pub(crate) remembered_bytes: usize,
    /// A current read happened (locked or not): it may have returned a version
    /// that is written but not yet durable, since row locks go at the write
    /// (commit rule 6), so even a commit without writes waits for durability
    /// (rule 8).
    pub(crate) current_reads: bool,
    pub(crate) state: TxnState,
    /// A bulk load in progress instead of buffered writes (bulk.rs).
    pub(crate) bulk: Option<Box<crate::bulk::BulkLoad>>,
    /// What the commit appends to the change log (changelog.rs), if anything.
    pub(crate) log: Option<crate::changelog::LogEntry>,
    /// Meta records the commit writes in its own batch
    /// ([`Transaction::put_meta_on_commit`]).
    pub(crate) commit_meta: Vec<(Vec<u8>, Vec<u8>)>,
    /// The SQL layer's journal of changes in execution order, when it asked
    /// for one ([`Transaction::enable_journal`]).
    pub(crate) journal: Option<Journal>,
}

/// A SAVEPOINT: its name, the write buffer and the journal's length as they
/// were.
#[derive(Debug, Clone)]
pub(crate) struct Savepoint {
    name: String,
    writes: BTreeMap<Vec<u8>, Buffered>,
    journal_len: usize,
}

/// The journal: entries the SQL layer appends as it writes (for the binary
/// log: each row change, in the order executed, which the write buffer —
/// one final value per key, in key order — cannot give back). Entries are
/// opaque here; they are undone with the writes they describe.
#[derive(Debug, Default)]
pub(crate) struct Journal {
    /// `(len u32 ++ entry)*`, native-endian: it never leaves the process.
    bytes: Vec<u8>,
    /// Its length when the current statement began.
    statement_start: usize,
}

impl std::fmt::Debug for Transaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction")
            .field("id", &self.id)
            .field("isolation", &self.isolation)
            .field("snapshot", &self.snapshot)
            .field("writes", &self.writes.len())
            .field("locks", &self.held.len())
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl TxnManager {
    /// Opens the transaction manager over `storage`, recovering the timestamp
    /// counters from `txn/last_ts` (storage holds only committed batches) and
    /// the prepared XA branches with their row locks (xa.rs), and starts the background threads (GC; the syncer
    /// thread for [`crate::Committing::durable`] with
    /// [`crate::Durability::SyncEveryCommit`], the periodic sync with
    /// [`crate::Durability::SyncPeriodically`]).
    pub fn open(storage: Arc<dyn Storage>, config: TxnConfig) -> Result<Arc<TxnManager>> {
        let last_ts = match storage.get(Keyspace::Meta, keys::LAST_TS_KEY)? {
            Some(v) => keys::decode_ts_value(&v)?,
            None => 0,
        };
        tracing::info!(
            last_ts,
            storage = storage.name(),
            "transaction manager recovered"
        );
        let storage_for_log = Arc::clone(&storage);
        let mgr = Arc::new(TxnManager {
            storage,
            next_ts: CachePadded::new(AtomicU64::new(last_ts)),
            last_written_ts: CachePadded::new(AtomicU64::new(last_ts)),
            visible: CachePadded::new(AtomicU64::new(last_ts)),
            next_txn_id: CachePadded::new(AtomicU64::new(1)),
            commit_mutex: Mutex::new(()),
            group: Arc::new(GroupCommit::new(last_ts)),
            failed: AtomicBool::new(false),
            failure: Mutex::new(None),
            locks: LockTable::new(),
            ranges: RangeLocks::new(),
            row_cache: RowCache::new(config.row_cache_bytes),
            snapshots: SnapshotRegistry::new(),
            garbage: GarbageQueue::new(last_ts, config.gc_queue_keys),
            last_tombstone_pass: Mutex::new(None),
            dead_runs: DeadRuns::default(),
            history: History::new(config.history_memory_bytes),
            background: Background::new(),
            bulk_gate: crate::bulk::BulkGate::default(),
            xa: crate::xa::XaRegistry::default(),
            changelog: crate::changelog::ChangeLog::open(&*storage_for_log)?,
            config,
        });
        mgr.recover_bulk_loads()?;
        // Before the manager is returned, so before any client runs: a
        // prepared branch's locks are held again before anyone can ask.
        mgr.recover_xa()?;
        mgr.start_background()?;
        Ok(mgr)
    }

    /// A new session (one per connection). Registers its snapshot slot.
    pub fn session(self: &Arc<Self>) -> TxnSession {
        TxnSession {
            mgr: MgrHandle(Arc::new(Arc::clone(self))),
            slot: self.snapshots.register(),
        }
    }

    /// The storage this manager writes to.
    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.storage
    }

    /// The configuration the manager was opened with.
    pub fn config(&self) -> &TxnConfig {
        &self.config
    }

    /// The dead runs recorded: ranges whose dead head scans skip (dead_runs.rs).
    pub fn dead_runs(&self) -> usize {
        self.dead_runs.runs()
    }

    /// The old versions held in memory and spilled (history.rs; SHOW STATUS).
    pub fn history_stats(&self) -> HistoryStats {
        self.history.stats()
    }

    /// The locks held now and who waits for each (lock.rs;
    /// `performance_schema.data_locks`).
    pub fn lock_snapshot(&self) -> Vec<crate::HeldLock> {
        self.locks.snapshot()
    }

    /// Every transaction waiting for a row lock now, with the key, its
    /// holder and how long it has waited (lock.rs; SHOW ENGINE INNODB STATUS).
    pub fn lock_waits(&self) -> Vec<crate::WaitingLock> {
        self.locks.waits()
    }

    /// Deadlocks detected since the start, and the last one (lock.rs; SHOW
    /// ENGINE INNODB STATUS's LATEST DETECTED DEADLOCK).
    pub fn deadlocks(&self) -> (u64, Option<crate::DeadlockRecord>) {
        self.locks.deadlocks()
    }

    /// Commits, sync rounds and sync times so far (commit.rs, "Group
    /// commit"; SHOW ENGINE INNODB STATUS).
    pub fn group_commit_stats(&self) -> crate::GroupCommitStats {
        self.group.stats()
    }

    /// The newest commit timestamp handed out: InnoDB's "Log sequence
    /// number" in SHOW ENGINE INNODB STATUS (every commit takes one).
    pub fn last_commit_ts(&self) -> Timestamp {
        self.next_ts.load(Ordering::Relaxed)
    }

    /// The snapshots open now and the oldest of them (gc.rs; SHOW ENGINE
    /// INNODB STATUS's "read views open inside InnoDB").
    pub fn open_snapshots(&self) -> (u64, Option<Timestamp>) {
        self.snapshots.open_snapshots()
    }

    /// The next transaction id to be handed out (InnoDB's "Trx id counter").
    pub fn next_txn_id(&self) -> TxnId {
        self.next_txn_id.load(Ordering::Relaxed)
    }

    /// The newest commit written to storage (durable once `visible_ts`
    /// reaches it under `SyncEveryCommit`).
    pub fn last_written_ts(&self) -> Timestamp {
        self.last_written_ts.load(Ordering::Relaxed)
    }

    /// Row lock waits so far (lock.rs; SHOW STATUS's `Innodb_row_lock_*`).
    pub fn lock_stats(&self) -> crate::LockStats {
        self.locks.stats()
    }

    /// The visible timestamp: a snapshot taken now reads every commit at or below it.
    pub fn visible_ts(&self) -> Timestamp {
        self.visible.load(Ordering::SeqCst)
    }

    /// The committed version of the row at `rows_key`: at snapshot `at`, or the
    /// current one when `at` is `None`. See "Snapshot read" in the module doc.
    pub(crate) fn read_version(
        &self,
        rows_key: &[u8],
        at: Option<Timestamp>,
    ) -> Result<Option<Vec<u8>>> {
        let Some(value) = self.rows_get(rows_key)? else {
            return Ok(None);
        };
        let v = decode_version(&value)?;
        match at {
            Some(s) if v.ts > s => self.read_history(rows_key, s),
            _ => Ok(v.row.map(<[u8]>::to_vec)),
        }
    }

    /// The raw Rows value of `rows_key` (header and row, as stored): from the row
    /// cache, or from storage, filling the cache.
    pub(crate) fn rows_get(&self, rows_key: &[u8]) -> Result<Option<RowsValue>> {
        let generation = match self.row_cache.lookup(rows_key) {
            Lookup::Hit(value) => return Ok(Some(value)),
            Lookup::Miss(generation) => generation,
        };
        let Some(value) = self.storage.get(Keyspace::Rows, rows_key)? else {
            return Ok(None);
        };
        let value = RowsValue::new(rows_key, &value);
        self.row_cache.fill(&value, generation);
        Ok(Some(value))
    }

    /// The row cache's counters (SHOW STATUS).
    pub fn row_cache_stats(&self) -> RowCacheStats {
        self.row_cache.stats()
    }

    /// Keys waiting in the GC's garbage queue (gc.rs, "Finding the garbage").
    pub fn gc_queued_keys(&self) -> u64 {
        self.garbage.len() as u64
    }

    /// The version of `rows_key` visible at `at`, from History (the Rows version is
    /// newer than `at`): from memory, else — if anything was spilled — from the
    /// History keyspace (history.rs, "Reading").
    pub(crate) fn read_history(&self, rows_key: &[u8], at: Timestamp) -> Result<Option<Vec<u8>>> {
        match self.history.get(rows_key, at)? {
            Found::Version(row) => return Ok(row),
            Found::NotHere if !self.history.spilled() => return Ok(None),
            Found::NotHere => {}
        }
        let want_len = rows_key.len() + keys::TS_LEN;
        let mut found: Result<Option<Vec<u8>>> = Ok(None);
        self.storage.scan(
            Keyspace::History,
            &history_seek_range(rows_key, at),
            false,
            &mut |k, v| {
                // pks are prefix-free, so every key in the range is this pk's; the
                // length check guards against a caller that broke that promise.
                if k.len() != want_len {
                    return ControlFlow::Continue(());
                }
                found = decode_version(v).map(|h| match h.row {
                    Some(row) if h.ts > at => Some(row.to_vec()),
                    _ => None,
                });
                ControlFlow::Break(())
            },
        )?;
        found
    }

    /// Makes the next transaction id.
    fn new_txn_id(&self) -> TxnId {
        self.next_txn_id.fetch_add(1, Ordering::Relaxed)
    }
}

impl Drop for TxnManager {
    fn drop(&mut self) {
        self.background.stop();
        self.group.shut_down();
        if matches!(
            self.config.durability,
            crate::Durability::SyncPeriodically { .. }
        ) {
            if let Err(e) = self.storage.sync() {
                tracing::error!(error = %e, "final sync at shutdown failed");
            }
        }
    }
}

impl TxnSession {
    /// Starts a transaction. No timestamp, id or lock is taken yet: the snapshot is
    /// taken at the first consistent read, the id at the first lock or write.
    pub fn begin(&self, isolation: IsolationLevel) -> Transaction {
        // A session runs one transaction at a time; a second concurrent one (not a
        // MySQL pattern, but allowed by the API) gets a slot of its own.
        let slot = if self
            .slot
            .in_use
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            Arc::clone(&self.slot)
        } else {
            let s = self.mgr.snapshots.register();
            s.in_use.store(true, Ordering::Release);
            s
        };
        Transaction {
            lock_wait_timeout: self.mgr.config.lock_wait_timeout,
            interrupt: None,
            mgr: self.mgr.clone(),
            slot,
            isolation,
            id: None,
            snapshot: None,
            held: HashMap::new(),
            gaps: Vec::new(),
            defer_waits: false,
            pending: None,
            current_reads: false,
            writes: BTreeMap::new(),
            tables_written: Vec::new(),
            undo: Vec::new(),
            savepoints: Vec::new(),
            locked_read: None,
            remembered_bytes: 0,
            state: TxnState::Active,
            bulk: None,
            log: None,
            commit_meta: Vec::new(),
            journal: None,
        }
    }
}

impl Drop for TxnSession {
    fn drop(&mut self) {
        self.mgr.snapshots.unregister(&self.slot);
    }
}

impl Transaction {
    /// The isolation level the transaction was started with.
    pub fn isolation(&self) -> IsolationLevel {
        self.isolation
    }

    /// Sets this transaction's lock wait timeout (`innodb_lock_wait_timeout` of the
    /// session).
    pub fn set_lock_wait_timeout(&mut self, timeout: Duration) {
        self.lock_wait_timeout = timeout;
    }

    /// Installs the session's interrupt flag: while it is non-zero, a lock wait
    /// ends with [`Error::Interrupted`] (the statement is rolled back by the
    /// caller, the transaction stays open). The flag's meaning beyond
    /// "non-zero: stop" belongs to the caller (the SQL layer's KILL).
    pub fn set_interrupt(&mut self, flag: Option<Arc<std::sync::atomic::AtomicU32>>) {
        self.interrupt = flag;
    }

    /// Deferred lock waits: with `on`, a [`Transaction::lock`] that would wait
    /// queues this transaction's waiter and fails at once with
    /// [`Error::LockWaitPending`] instead of blocking the thread. The caller
    /// rolls the statement back ([`Transaction::rollback_statement`]), awaits
    /// [`Transaction::lock_wait`] — a future, so the connection's task waits
    /// without holding a thread — then calls [`Transaction::end_lock_wait`]
    /// and runs the statement again, which finds the lock its own. The lock
    /// wait timeout and KILL are the awaiter's to enforce (`end_lock_wait` with
    /// the error). Off by default: in-process callers block.
    pub fn set_deferred_lock_waits(&mut self, on: bool) {
        self.defer_waits = on;
    }

    /// The deferred lock wait in progress, if any: resolves when the lock is
    /// handed over (its [`LockWait::deadline`] is this transaction's lock wait
    /// timeout from when it queued).
    pub fn lock_wait(&self) -> Option<LockWait> {
        self.pending
            .as_ref()
            .map(|p| LockTable::wait_handle(&p.waiter, p.deadline))
    }

    /// Ends the deferred lock wait in progress (nothing to do without one).
    /// `give_up` `None`: the caller saw [`LockWait`] resolve, and the lock is
    /// now held. `Some(e)` (a timeout, a KILL): the waiter leaves the queue and
    /// `e` is returned — unless the hand-over won the race, in which case the
    /// lock is held and the result is `Ok`: the caller then runs the statement
    /// again as if granted.
    pub fn end_lock_wait(&mut self, give_up: Option<Error>) -> Result<()> {
        let Some(p) = self.pending.take() else {
            return Ok(());
        };
        let id = self.id.expect("a queued transaction has an id");
        let granted = match give_up {
            None => {
                debug_assert!(p.waiter.granted(), "ended as granted before the grant");
                true
            }
            Some(_) => self.mgr.locks.withdraw(id, &p.key, &p.waiter),
        };
        if granted {
            if p.transient {
                self.mgr.locks.release(id, &p.key);
            } else {
                self.hold(p.key, p.waiter.mode());
            }
            return Ok(());
        }
        Err(give_up.expect("a wait that was not granted was given up"))
    }

    /// Starts a statement: marks the statement savepoint and, under READ COMMITTED
    /// and READ UNCOMMITTED, drops the previous statement's snapshot (the next
    /// consistent read takes a fresh one).
    pub fn begin_statement(&mut self) {
        self.undo.clear();
        if let Some(j) = &mut self.journal {
            j.statement_start = j.bytes.len();
        }
        if !self.isolation.snapshot_per_transaction() && self.snapshot.take().is_some() {
            // The previous statement is over; let GC move past its snapshot.
            self.slot.clear();
        }
    }

    /// Undoes the current statement's buffered writes (since the last
    /// [`Transaction::begin_statement`]). Locks stay held, as in InnoDB.
    pub fn rollback_statement(&mut self) {
        // A bulk load is its own statement: nothing of it remains.
        self.bulk = None;
        if let Some(j) = &mut self.journal {
            j.bytes.truncate(j.statement_start);
        }
        while let Some((key, prev)) = self.undo.pop() {
            match prev {
                Some(b) => {
                    self.writes.insert(key, *b);
                }
                None => {
                    self.writes.remove(&key);
                }
            }
        }
    }

    /// SAVEPOINT `name`: remembers the write buffer (a copy of it: savepoints
    /// are for the short transactions ORMs and dump tools nest them in). An
    /// older savepoint of the same name (ASCII case-insensitive, as MySQL) is
    /// replaced.
    pub fn set_savepoint(&mut self, name: &str) {
        self.savepoints
            .retain(|s| !s.name.eq_ignore_ascii_case(name));
        self.savepoints.push(Savepoint {
            name: name.to_string(),
            writes: self.writes.clone(),
            journal_len: self.journal.as_ref().map_or(0, |j| j.bytes.len()),
        });
    }

    /// ROLLBACK TO SAVEPOINT `name`: the write buffer as it was when the
    /// savepoint was set; savepoints set after it are gone, it stays. Row locks
    /// taken since stay held, as in InnoDB. `false` if there is no such
    /// savepoint.
    pub fn rollback_to_savepoint(&mut self, name: &str) -> bool {
        let Some(at) = self
            .savepoints
            .iter()
            .position(|s| s.name.eq_ignore_ascii_case(name))
        else {
            return false;
        };
        self.savepoints.truncate(at + 1);
        self.writes = self.savepoints[at].writes.clone();
        if let Some(j) = &mut self.journal {
            j.bytes.truncate(self.savepoints[at].journal_len);
            j.statement_start = j.bytes.len();
        }
        self.undo.clear();
        true
    }

    /// RELEASE SAVEPOINT `name`: forgets it and every later one; `false` if
    /// there is no such savepoint.
    pub fn release_savepoint(&mut self, name: &str) -> bool {
        match self
            .savepoints
            .iter()
            .position(|s| s.name.eq_ignore_ascii_case(name))
        {
            Some(at) => {
                self.savepoints.truncate(at);
                true
            }
            None => false,
        }
    }

    /// Starts the journal (the SQL layer's record of its changes in execution
    /// order, undone with their statement or savepoint) if it is not on: from now on
    /// [`Transaction::journal_push`] records entries.
    pub fn enable_journal(&mut self) {
        if self.journal.is_none() {
            self.journal = Some(Journal::default());
        }
    }

    /// Whether the journal is on.
    pub fn journaling(&self) -> bool {
        self.journal.is_some()
    }

    /// Appends an entry to the journal, if it is on. A statement rolled back
    /// (or a ROLLBACK TO SAVEPOINT) removes the entries it added.
    pub fn journal_push(&mut self, entry: &[u8]) {
        if self.state != TxnState::Active {
            return;
        }
        if let Some(j) = &mut self.journal {
            let len = u32::try_from(entry.len()).unwrap_or(u32::MAX);
            j.bytes.extend_from_slice(&len.to_ne_bytes());
            j.bytes.extend_from_slice(&entry[..len as usize]);
        }
    }

    /// The journal's entries so far, in order, and the journal emptied (it
    /// stays on).
    pub fn take_journal(&mut self) -> Vec<Vec<u8>> {
        let Some(j) = &mut self.journal else {
            return Vec::new();
        };
        let bytes = std::mem::take(&mut j.bytes);
        j.statement_start = 0;
        let mut out = Vec::new();
        let mut at = 0;
        while at + 4 <= bytes.len() {
            let mut len = [0u8; 4];
            len.copy_from_slice(&bytes[at..at + 4]);
            let len = u32::from_ne_bytes(len) as usize;
            out.push(bytes[at + 4..at + 4 + len].to_vec());
            at += 4 + len;
        }
        out
    }

    /// Sets what this transaction's commit appends to the change log
    /// (changelog.rs), replacing any earlier entry; `None` logs nothing. A
    /// commit that writes nothing logs nothing either.
    pub fn set_log_entry(&mut self, entry: Option<crate::changelog::LogEntry>) {
        self.log = entry;
    }

    /// Whether the commit will append a change-log record.
    pub fn has_log_entry(&self) -> bool {
        self.log.is_some()
    }

    /// Has the commit also write the Meta record `key` = `value` in its own
    /// batch: a replica's applied position travels with the rows it applied,
    /// so that after a crash the two agree (the SQL layer's `replica` module).
    /// A later call with the same key replaces the value. A transaction that
    /// has nothing else to write still commits this record.
    pub fn put_meta_on_commit(&mut self, key: Vec<u8>, value: Vec<u8>) {
        match self.commit_meta.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.commit_meta.push((key, value)),
        }
    }

    /// Whether the transaction has buffered writes.
    pub fn has_writes(&self) -> bool {
        !self.writes.is_empty() || self.bulk.is_some()
    }

    /// The transaction id, if one has been assigned (at the first lock or write).
    pub fn id(&self) -> Option<TxnId> {
        self.id
    }

    /// Whether the transaction was chosen as a deadlock victim (it is rolled back
    /// already; only `rollback` or drop remain).
    pub fn is_aborted(&self) -> bool {
        self.state == TxnState::Aborted
    }

    /// The transaction's snapshot timestamp, taking the snapshot now if none is
    /// taken (START TRANSACTION WITH CONSISTENT SNAPSHOT).
    pub fn snapshot_ts(&mut self) -> Result<Timestamp> {
        self.check_active()?;
        Ok(self.ensure_snapshot())
    }

    /// Reads one row: the own write buffer first, then storage in `mode`.
    pub fn get(&mut self, table: TableId, pk: &[u8], mode: ReadMode) -> Result<Option<Vec<u8>>> {
        self.check_active()?;
        let at = self.read_at(mode);
        self.get_at(at, table, pk)
    }

    /// [`Transaction::get`] at a resolved read point.
    pub(crate) fn get_at(
        &self,
        at: Option<Timestamp>,
        table: TableId,
        pk: &[u8],
    ) -> Result<Option<Vec<u8>>> {
        let key = rows_key(table, pk);
        if let Some(b) = self.writes.get(&key) {
            return Ok(b.row.clone());
        }
        self.mgr.read_version(&key, at)
    }

    /// The current read of a row whose lock the caller holds — taken before this
    /// call and, like every lock, kept to the end of the transaction. Returns what
    /// [`Transaction::get`] in [`ReadMode::Current`] returns, and remembers the
    /// stored version for commit, which then need not read it again (see
    /// `Replaced` in `mvcc.rs`). Reading a row without holding its lock here
    /// breaks commit rule 2; debug builds catch it at commit.
    pub fn get_locked(&mut self, table: TableId, pk: &[u8]) -> Result<Option<Vec<u8>>> {
        self.check_active()?;
        let key = rows_key(table, pk);
        if let Some(b) = self.writes.get(&key) {
            return Ok(b.row.clone());
        }
        self.current_reads = true;
        let Some(raw) = self.mgr.rows_get(&key)? else {
            self.locked_read = Some((key, Replaced::Absent));
            return Ok(None);
        };
        let v = decode_version(&raw)?;
        let row = v.row.map(<[u8]>::to_vec);
        self.locked_read =
            if row.is_some() && self.remembered_bytes + raw.len() <= REMEMBERED_BYTES_MAX {
                self.remembered_bytes += raw.len();
                Some((key, Replaced::Live(raw)))
            } else {
                None
            };
        Ok(row)
    }

    /// Takes the exclusive lock on `key` (an opaque key chosen by the SQL layer),
    /// waiting up to the lock wait timeout. Re-entrant.
    ///
    /// Errors: [`Error::LockWaitTimeout`] (the transaction stays alive; the SQL
    /// layer rolls back the statement), [`Error::Deadlock`] (this transaction was
    /// the victim and is rolled back already; the caller calls `rollback`).
    pub fn lock(&mut self, key: &[u8]) -> Result<()> {
        self.lock_in(key, LockMode::Exclusive, false)
    }

    /// Takes `key` shared (FOR SHARE, a SERIALIZABLE read, a foreign key's
    /// parent): other transactions may hold it shared too, none exclusive.
    /// Holding it exclusive already covers it. Errors as [`Transaction::lock`].
    pub fn lock_shared(&mut self, key: &[u8]) -> Result<()> {
        self.lock_in(key, LockMode::Shared, false)
    }

    /// Takes `key` in `mode`; a `transient` lock is given back as soon as it
    /// is granted (a wait for another transaction's end).
    fn lock_in(&mut self, key: &[u8], mode: LockMode, transient: bool) -> Result<()> {
        self.check_active()?;
        if self.held.get(key).is_some_and(|m| m.covers(mode)) {
            return Ok(());
        }
        let id = self.ensure_id();
        debug_assert!(
            self.pending.is_none(),
            "a lock taken during a deferred wait"
        );
        let result = if self.defer_waits {
            match self.mgr.locks.enqueue(id, key, mode) {
                Ok(Queued::Granted) => Ok(()),
                Ok(Queued::Waiting(waiter)) => {
                    self.pending = Some(PendingLock {
                        key: key.to_vec(),
                        waiter,
                        deadline: std::time::Instant::now().checked_add(self.lock_wait_timeout),
                        transient,
                    });
                    return Err(Error::LockWaitPending);
                }
                Err(e) => Err(e),
            }
        } else {
            self.mgr.locks.acquire(
                id,
                key,
                mode,
                self.lock_wait_timeout,
                self.mgr.config.blocking_hook,
                self.interrupt.as_deref(),
            )
        };
        match result {
            Ok(()) if transient => {
                self.mgr.locks.release(id, key);
                Ok(())
            }
            Ok(())
                if mode == LockMode::Exclusive
                    && self.bulk.is_none()
                    && self.mgr.bulk_gate.gated(key, &self.held) =>
            {
                // A bulk load closed this table to other writers (bulk.rs):
                // give the lock back (unless it was held shared before), wait
                // for the load to end, take it again.
                match self.held.get(key) {
                    Some(_) => {
                        self.hold(key.to_vec(), LockMode::Exclusive);
                        return Ok(());
                    }
                    None => self.mgr.locks.release(id, key),
                }
                let mgr = self.mgr.clone();
                let mut waited = Ok(());
                crate::run_blocking(mgr.config.blocking_hook, &mut || {
                    waited =
                        mgr.bulk_gate
                            .wait(key, self.lock_wait_timeout, self.interrupt.as_deref());
                });
                waited?;
                self.lock_in(key, mode, false)
            }
            Ok(()) => {
                self.hold(key.to_vec(), mode);
                Ok(())
            }
            Err(Error::Deadlock) => {
                self.abort_as_victim();
                Err(Error::Deadlock)
            }
            Err(e) => Err(e),
        }
    }

    /// Records `key` as held in `mode` (an upgrade replaces S by X).
    fn hold(&mut self, key: Vec<u8>, mode: LockMode) {
        let m = self.held.entry(key).or_insert(mode);
        if mode == LockMode::Exclusive {
            *m = LockMode::Exclusive;
        }
    }

    /// Waits until transaction `other` has ended (a shared lock on the key
    /// it holds exclusively, given back at once: range_lock.rs). Errors as
    /// [`Transaction::lock`]; in deferred mode, [`Error::LockWaitPending`].
    fn wait_for_txn(&mut self, other: TxnId) -> Result<()> {
        self.lock_in(&txn_lock_key(other), LockMode::Shared, true)
    }

    /// A bulk load's insert intention over the whole of `table` and its
    /// `indexes` (bulk.rs; range_lock.rs): `false`, registering nothing,
    /// when another transaction holds a range lock there — the load then
    /// takes the ordinary path, which waits for it row by row.
    pub(crate) fn intend_whole_table(
        &mut self,
        table: TableId,
        indexes: &[IndexId],
    ) -> Result<bool> {
        let id = self.own_key()?;
        let spaces: Vec<Space> = std::iter::once(Space::Rows(table))
            .chain(indexes.iter().map(|&i| Space::Index(i)))
            .collect();
        if self.mgr.ranges.intend_whole(id, &spaces).is_some() {
            return Ok(false);
        }
        self.gaps
            .extend(spaces.into_iter().map(Registration::Whole));
        Ok(true)
    }

    /// Takes this transaction's own key (see [`txn_lock_key`]) before its
    /// first registration, so that others can wait for its end.
    fn own_key(&mut self) -> Result<TxnId> {
        let id = self.ensure_id();
        let key = txn_lock_key(id);
        if !self.held.contains_key(&key) {
            self.lock_in(&key, LockMode::Exclusive, false)?;
        }
        Ok(id)
    }

    /// The space and storage-key range a range lock over `range` of the
    /// primary key (`index` `None`) or an index of `table` covers; `None`
    /// when the range is empty.
    fn range_space(
        table: TableId,
        index: Option<IndexId>,
        range: &KeyRange,
    ) -> Option<(Space, KeyRange)> {
        let (space, r) = match index {
            None => (Space::Rows(table), keys::rows_range(table, range)),
            Some(i) => (Space::Index(i), keys::index_range(i, range)?),
        };
        (!keys::range_is_empty(&r)).then_some((space, r))
    }

    /// The count a locking read notes before it reads `table` through
    /// `index` (`None`: the primary key) and gives to
    /// [`Transaction::lock_range`] (range_lock.rs, "Why a read is complete").
    pub fn range_epoch(&self, table: TableId, index: Option<IndexId>) -> u64 {
        let space = match index {
            None => Space::Rows(table),
            Some(i) => Space::Index(i),
        };
        self.mgr.ranges.ended(space)
    }

    /// Locks the key range a locking read examined — `range` over primary
    /// keys (`index` `None`) or over `index`'s keys, as the scan was given it
    /// (bounds are prefixes, as for [`Transaction::scan_index`]) — until the
    /// transaction ends: no other transaction can add a key in it meanwhile
    /// (range_lock.rs). Waits for each transaction that has added one and
    /// not ended. Returns whether the read must be repeated: it waited, or an
    /// inserter ended since `epoch` ([`Transaction::range_epoch`], noted
    /// before the read); a range held already (by an earlier call) never
    /// asks for a repeat — the read ran under it.
    ///
    /// Errors as [`Transaction::lock`].
    pub fn lock_range(
        &mut self,
        table: TableId,
        index: Option<IndexId>,
        range: &KeyRange,
        epoch: u64,
    ) -> Result<bool> {
        self.check_active()?;
        let Some((space, r)) = Self::range_space(table, index, range) else {
            return Ok(false);
        };
        let id = self.own_key()?;
        let mut waited = false;
        loop {
            match self.mgr.ranges.lock_range(id, space, &r) {
                (Outcome::Conflict(other), _) => {
                    self.wait_for_txn(other)?;
                    waited = true;
                }
                (Outcome::Registered(_), false) => return Ok(waited),
                (Outcome::Registered(ended), true) => {
                    self.gaps.push(Registration::Range(space, r));
                    return Ok(waited || ended != epoch);
                }
            }
        }
    }

    /// What a locking read under READ COMMITTED does instead of
    /// [`Transaction::lock_range`]: waits for every other transaction that
    /// has added a key in `range` and not ended (InnoDB's locking read waits
    /// for an uncommitted record's lock), but registers nothing, so later
    /// inserts go on. Returns whether it waited: the read must be repeated
    /// to see what those transactions committed. Errors as
    /// [`Transaction::lock`].
    pub fn await_range_inserts(
        &mut self,
        table: TableId,
        index: Option<IndexId>,
        range: &KeyRange,
    ) -> Result<bool> {
        self.check_active()?;
        let Some((space, r)) = Self::range_space(table, index, range) else {
            return Ok(false);
        };
        let id = self.ensure_id();
        let mut waited = false;
        while let Some(other) = self.mgr.ranges.point_owner(id, space, &r) {
            self.wait_for_txn(other)?;
            waited = true;
        }
        Ok(waited)
    }

    /// The insert intention of a write that adds `pk` to `table` (`new_row`:
    /// a new row or a changed primary key) and the index keys `added` (each
    /// `(index, index key)`, the row's pk appended as stored): waits for every
    /// transaction holding a range lock over one of them to end, and
    /// registers them so that a later range lock waits for this transaction
    /// (range_lock.rs). Call before buffering the write. Errors as
    /// [`Transaction::lock`].
    ///
    /// A row this transaction deleted and now inserts again (sysbench's
    /// DELETE then INSERT of one id, an upsert written as both) needs no
    /// intention on its primary key, as InnoDB reuses its delete-marked
    /// record without one: the delete was of a row that was live — committed
    /// (this transaction holds its row lock, so any other locking read over
    /// it waits for this transaction and reads after it ends: not a phantom)
    /// or this transaction's own insert (whose intention is registered
    /// already). Waiting there instead deadlocks with every range reader
    /// queued on that row lock.
    pub fn insert_intention(
        &mut self,
        table: TableId,
        pk: &[u8],
        new_row: bool,
        added: &[(IndexId, Vec<u8>)],
    ) -> Result<()> {
        if !new_row && added.is_empty() {
            return Ok(());
        }
        self.check_active()?;
        let id = self.own_key()?;
        let deleted_here = |k: &Vec<u8>| self.writes.get(k).is_some_and(|b| b.row.is_none());
        let rows = Some(rows_key(table, pk))
            .filter(|k| new_row && !deleted_here(k))
            .map(|k| (Space::Rows(table), k));
        let entries = added
            .iter()
            .map(|(i, k)| (Space::Index(*i), keys::index_entry_key(*i, k, pk)));
        for (space, key) in rows.into_iter().chain(entries) {
            loop {
                match self.mgr.ranges.intend(id, space, &key) {
                    (Outcome::Conflict(other), _) => self.wait_for_txn(other)?,
                    (Outcome::Registered(_), new) => {
                        if new {
                            self.gaps.push(Registration::Point(space, key));
                        }
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// Buffers an insert or update of `(table, pk)`.
    ///
    /// `old_index_keys` are the index keys of the version being replaced as the
    /// caller read it (current read, own writes included; empty for an insert);
    /// they are kept only from the transaction's first write of this pk, since only
    /// the committed version's entries need ending at commit. `new_index_keys` are
    /// the new row's. The caller must hold a row lock that covers this pk: commit
    /// relies on it to move the replaced version to History.
    pub fn put(
        &mut self,
        table: TableId,
        pk: Vec<u8>,
        row: Vec<u8>,
        old_index_keys: Vec<(IndexId, Vec<u8>)>,
        new_index_keys: Vec<(IndexId, Vec<u8>)>,
    ) {
        self.buffer(table, &pk, Some(row), old_index_keys, new_index_keys);
    }

    /// Buffers a delete of `(table, pk)`; `old_index_keys` as for [`Transaction::put`].
    pub fn delete(&mut self, table: TableId, pk: Vec<u8>, old_index_keys: Vec<(IndexId, Vec<u8>)>) {
        self.buffer(table, &pk, None, old_index_keys, Vec::new());
    }

    /// Rolls the transaction back: drops the write buffer, releases the locks and
    /// the snapshot.
    pub fn rollback(mut self) {
        self.finish();
    }

    fn buffer(
        &mut self,
        table: TableId,
        pk: &[u8],
        row: Option<Vec<u8>>,
        old_index_keys: Vec<(IndexId, Vec<u8>)>,
        new_index_keys: Vec<(IndexId, Vec<u8>)>,
    ) {
        if self.state != TxnState::Active {
            // An aborted transaction can never commit; its writes go nowhere.
            return;
        }
        self.ensure_id();
        self.note_table_written(table);
        let key = rows_key(table, pk);
        match self.writes.entry(key) {
            Entry::Occupied(mut e) => {
                self.undo
                    .push((e.key().clone(), Some(Box::new(e.get().clone()))));
                let b = e.get_mut();
                b.row = row;
                b.new_index_keys = new_index_keys;
            }
            Entry::Vacant(e) => {
                self.undo.push((e.key().clone(), None));
                let replaced = match self.locked_read.take() {
                    Some((k, r)) if k == *e.key() => r,
                    other => {
                        self.locked_read = other;
                        Replaced::Unknown
                    }
                };
                e.insert(Buffered {
                    row,
                    replaced,
                    committed_index_keys: old_index_keys,
                    new_index_keys,
                });
            }
        }
    }

    /// `Err(Deadlock)` once the transaction was a deadlock victim.
    pub(crate) fn check_active(&self) -> Result<()> {
        match self.state {
            TxnState::Active => Ok(()),
            TxnState::Aborted => Err(Error::Deadlock),
            TxnState::Finished => Err(Error::Internal("transaction already finished".into())),
        }
    }

    /// The snapshot to read at in `mode` (`None`: current).
    pub(crate) fn read_at(&mut self, mode: ReadMode) -> Option<Timestamp> {
        match mode {
            ReadMode::Snapshot => Some(self.ensure_snapshot()),
            ReadMode::Current => {
                self.current_reads = true;
                None
            }
        }
    }

    /// The snapshot, published in the slot on first use (gc.rs, "publishing").
    pub(crate) fn ensure_snapshot(&mut self) -> Timestamp {
        if let Some(s) = self.snapshot {
            return s;
        }
        // Invariant: the slot holds a snapshot iff `self.snapshot` does.
        debug_assert_eq!(self.slot.ts.load(Ordering::Relaxed), u64::MAX);
        let s = self.mgr.snapshots.publish(&self.mgr.visible, &self.slot);
        self.snapshot = Some(s);
        s
    }

    pub(crate) fn ensure_id(&mut self) -> TxnId {
        match self.id {
            Some(id) => id,
            None => {
                let id = self.mgr.new_txn_id();
                self.id = Some(id);
                id
            }
        }
    }

    /// Releases every lock held, and withdraws a deferred wait (or releases
    /// the lock it was granted).
    pub(crate) fn release_locks(&mut self) {
        if let (Some(p), Some(id)) = (self.pending.take(), self.id) {
            if self.mgr.locks.withdraw(id, &p.key, &p.waiter) {
                if p.transient {
                    self.mgr.locks.release(id, &p.key);
                } else {
                    self.hold(p.key, p.waiter.mode());
                }
            }
        }
        if let Some(id) = self.id {
            // Registrations first: a transaction woken by the release of
            // this one's own key asks again and must find them gone.
            if !self.gaps.is_empty() {
                self.mgr.ranges.release(id, std::mem::take(&mut self.gaps));
            }
            for (key, _) in self.held.drain() {
                self.mgr.locks.release(id, &key);
            }
        }
        debug_assert!(self.held.is_empty());
    }

    /// Deadlock victim: roll back now (Active -> Aborted).
    fn abort_as_victim(&mut self) {
        self.bulk = None;
        self.writes.clear();
        self.undo.clear();
        self.savepoints.clear();
        self.locked_read = None;
        self.release_locks();
        self.snapshot = None;
        self.slot.clear();
        self.state = TxnState::Aborted;
    }

    /// Ends the transaction without committing (-> Finished).
    pub(crate) fn finish(&mut self) {
        if self.state == TxnState::Finished {
            return;
        }
        self.bulk = None;
        self.writes.clear();
        self.undo.clear();
        self.savepoints.clear();
        self.locked_read = None;
        self.release_locks();
        self.snapshot = None;
        self.slot.clear();
        self.slot.in_use.store(false, Ordering::Release);
        self.state = TxnState::Finished;
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        self.finish();
    }
}
