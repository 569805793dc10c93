//! Canyon's transactions: MVCC on top of the storage trait.
//!
//! The essay — versions, visibility, isolation, locking, group commit, GC, and the
//! list of what is not implemented — is the module doc of `mvcc.rs`; the commit
//! rules are at the top of `commit.rs`; the row cache (the newest version of
//! recently read rows, kept coherent with storage) and its invariant are in
//! `row_cache.rs`; XA branches (prepared, durable, detached from their
//! session) in `xa.rs`; old versions, kept in memory for older snapshots and
//! spilled to storage past a budget, in `history.rs`; the byte layout is in
//! `docs/format.md`
//! ("MVCC records (canyon-txn)"); what each isolation level allows is in
//! `docs/architecture/transactions.md`. This file is the public contract.
//!
//! The SQL layer sees tables and indexes as byte keys:
//! - a **row** is `(table, pk) -> row bytes`, where `pk` is a prefix-free,
//!   memcomparable encoding made by the SQL layer;
//! - an **index entry** is `(index, index_key, pk)`; the SQL layer computes index
//!   keys, this layer stores them and keeps them valid for old snapshots.
//!
//! One statement, as the SQL layer drives it:
//! 1. [`TxnManager::session`] once per connection; [`TxnSession::begin`] per
//!    transaction (autocommit: per statement).
//! 2. [`Transaction::begin_statement`] marks the statement savepoint and, under
//!    READ COMMITTED, drops the previous statement's snapshot.
//! 3. Consistent reads ([`ReadMode::Snapshot`]) go through [`Transaction::get`],
//!    [`Transaction::scan`] and [`Transaction::scan_index`]; the first one publishes
//!    the snapshot (one atomic load of the visible timestamp).
//! 4. Writes: [`Transaction::lock`] the row's lock key, read it with
//!    [`Transaction::get_locked`] (a current read that commit reuses), then
//!    [`Transaction::put`] / [`Transaction::delete`] into the transaction's write
//!    buffer. Nothing reaches storage yet.
//! 5. On error, [`Transaction::rollback_statement`] undoes the statement's buffered
//!    writes (locks stay held, as in InnoDB).
//! 6. [`Transaction::commit`] writes one atomic batch at a fresh commit timestamp,
//!    releases the locks, waits for the (grouped) WAL sync and publishes the
//!    timestamp.
//!    An async caller uses [`Transaction::commit_deferred`] and awaits
//!    [`Committing::durable`] instead, so no thread blocks on the sync.
//!
//! What this layer does not do: it does not know column types, does not evaluate
//! predicates, and does not decide which rows to lock — the SQL layer does.

// Lint policy: the workspace lints (missing_docs, clippy::unwrap_used) apply; tests
// may unwrap, since a panic is how a test reports failure.
#![cfg_attr(test, allow(clippy::unwrap_used))]

mod backfill;
mod backup;
mod bulk;
mod changelog;
mod commit;
mod dead_runs;
mod footprint;
mod gc;
mod history;
mod keys;
mod lock;
mod mvcc;
mod range_lock;
mod row_cache;
mod scan;
mod xa;

pub use backup::CheckpointPoint;
pub use bulk::RUN_BUDGET;
pub use changelog::{LogEntry, LogHead, LogRecord};
pub use commit::{Committing, GroupCommitStats};
pub use gc::GcStats;
pub use history::HistoryStats;
pub use keys::LAST_TS_KEY;
pub use lock::{
    DeadlockEdge, DeadlockRecord, HeldLock, LockMode, LockStats, LockWait, WaitingLock,
};
pub use mvcc::{Transaction, TxnManager, TxnSession};
pub use row_cache::RowCacheStats;
pub use scan::Reader;
pub use xa::{XaClaim, XaError, Xid, XA_PREFIX, XID_PART_MAX};

use std::time::Duration;

/// A commit timestamp. 0 is "before everything"; `u64::MAX` means "not ended".
pub type Timestamp = u64;
/// A transaction id (assigned only to transactions that lock or write).
pub type TxnId = u64;
/// A table id, assigned by the catalog.
pub type TableId = u32;
/// An index id, assigned by the catalog, unique across all tables.
pub type IndexId = u32;

/// The isolation levels of MySQL. See docs/architecture/transactions.md.
///
/// Canyon implements two behaviours: a snapshot per statement (the first two) and a
/// snapshot per transaction (the last two). Locking of plain reads under
/// SERIALIZABLE is the SQL layer's job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsolationLevel {
    /// READ UNCOMMITTED. Behaves exactly as [`IsolationLevel::ReadCommitted`]:
    /// uncommitted data never reaches storage, so there is nothing dirty to read.
    /// The standard allows a level to be stronger than asked.
    ReadUncommitted,
    /// READ COMMITTED: every statement reads a fresh snapshot.
    ReadCommitted,
    /// REPEATABLE READ (MySQL's default): one snapshot for the whole transaction,
    /// taken at its first consistent read (as InnoDB creates its read view).
    RepeatableRead,
    /// SERIALIZABLE: the snapshot behaviour of REPEATABLE READ; the SQL layer turns
    /// plain reads into locking reads.
    Serializable,
}

impl IsolationLevel {
    /// Whether this level keeps one snapshot for the whole transaction (as opposed
    /// to a fresh one per statement).
    pub fn snapshot_per_transaction(self) -> bool {
        matches!(
            self,
            IsolationLevel::RepeatableRead | IsolationLevel::Serializable
        )
    }
}

/// How commits are made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// COMMIT returns only after the WAL is synced; concurrent commits share a sync.
    /// A commit becomes visible to other transactions only once it is durable.
    /// (`innodb_flush_log_at_trx_commit = 1`.)
    SyncEveryCommit,
    /// COMMIT returns after the WAL write; a background thread syncs every `interval`.
    /// RISK: a crash of the machine (not just the process) loses up to `interval` of
    /// acknowledged commits, and other transactions may have read them.
    /// (`innodb_flush_log_at_trx_commit = 2`.) A zero interval is treated as 1 ms.
    SyncPeriodically {
        /// Time between two background syncs.
        interval: Duration,
    },
}

/// Configuration of the transaction manager. Defaults: [`TxnConfig::default`].
#[derive(Debug, Clone)]
pub struct TxnConfig {
    /// How commits are made durable (default [`Durability::SyncEveryCommit`]).
    pub durability: Durability,
    /// Default lock wait timeout (innodb_lock_wait_timeout, 50 s in MySQL).
    pub lock_wait_timeout: Duration,
    /// How often garbage collection of old versions runs (default 1 s). Zero
    /// disables the background thread; [`TxnManager::run_gc_once`] still works.
    pub gc_interval: Duration,
    /// Called around every blocking wait (lock wait, [`crate::Committing::wait`]);
    /// the server sets it to `tokio::task::block_in_place` so a waiting
    /// connection does not stall a runtime worker (its commits it awaits instead,
    /// through [`crate::Committing::durable`]). `None` runs the wait directly.
    pub blocking_hook: Option<fn(&mut dyn FnMut())>,
    /// Memory for the row cache, the newest version of recently read rows
    /// (`row_cache.rs`; default 256 MiB). Zero turns it off: every point read
    /// goes to storage.
    pub row_cache_bytes: usize,
    /// Most keys the GC's garbage queue holds (gc.rs, "Finding the garbage";
    /// default 1 Mi keys, about 64 MiB). Past it, garbage waits for a sweep
    /// of whole keyspaces.
    pub gc_queue_keys: usize,
    /// Least time between two GC passes that delete queued Rows tombstones
    /// (default 30 s; other garbage goes every pass). Deleting a tombstone
    /// replaces a version RocksDB shows with entries it hides; in a range that
    /// is deleted from its front (a queue table such as TPC-C's `new_order`)
    /// every scan of the active memtable then steps over them, and a trickle
    /// of them trips RocksDB's scan-triggered flush every second or two, each
    /// flush leading to compactions that rewrite the bottom level. Batched,
    /// they cost one flush per batch. Zero: every pass.
    pub gc_tombstone_interval: Duration,
    /// Memory for old row versions (`history.rs`; default 128 MiB). They are
    /// read only by older snapshots of this process, so they need no
    /// durability; past this budget they go to the History keyspace in
    /// RocksDB instead (a snapshot held open under a write load costs disk, not
    /// memory). Zero sends every old version there.
    pub history_memory_bytes: usize,
}

impl Default for TxnConfig {
    /// The one place the defaults live: durable commits, MySQL's 50 s lock wait
    /// timeout, GC every second (Rows tombstones every 30 s), no blocking hook,
    /// a 256 MiB row cache, a GC queue of 1 Mi keys, 128 MiB of old versions
    /// in memory.
    fn default() -> Self {
        TxnConfig {
            durability: Durability::SyncEveryCommit,
            lock_wait_timeout: Duration::from_secs(50),
            gc_interval: Duration::from_secs(1),
            blocking_hook: None,
            row_cache_bytes: 256 << 20,
            gc_queue_keys: gc::MAX_QUEUED_KEYS,
            gc_tombstone_interval: Duration::from_secs(30),
            history_memory_bytes: 128 << 20,
        }
    }
}

/// How a read chooses the row version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadMode {
    /// The transaction's snapshot (a consistent read), plus its own writes.
    Snapshot,
    /// The latest committed version, plus its own writes (after locking the row).
    Current,
}

/// Runs `f` through the configured blocking hook (or directly).
pub(crate) fn run_blocking(hook: Option<fn(&mut dyn FnMut())>, f: &mut dyn FnMut()) {
    match hook {
        Some(h) => h(f),
        None => f(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The server moves transactions between tokio worker threads and shares the
    /// manager: these bounds are part of the contract.
    #[test]
    fn handles_are_send_and_sync() {
        fn send<T: Send>() {}
        fn send_sync<T: Send + Sync>() {}
        send::<Transaction>();
        send_sync::<TxnSession>();
        send_sync::<TxnManager>();
        send_sync::<TxnConfig>();
    }

    #[test]
    fn huge_lock_wait_timeout_does_not_overflow() {
        let mgr = TxnManager::open(
            std::sync::Arc::new(canyon_storage::MemoryStorage::new()),
            TxnConfig {
                lock_wait_timeout: Duration::MAX,
                gc_interval: Duration::ZERO,
                ..TxnConfig::default()
            },
        )
        .unwrap();
        let s = mgr.session();
        let mut a = s.begin(IsolationLevel::RepeatableRead);
        a.lock(b"k").unwrap();
        std::thread::scope(|sc| {
            let h = sc.spawn(|| {
                let s2 = mgr.session();
                let mut b = s2.begin(IsolationLevel::RepeatableRead);
                b.lock(b"k").unwrap();
                b.commit().unwrap();
            });
            std::thread::sleep(Duration::from_millis(50));
            a.rollback();
            h.join().unwrap();
        });
    }
}
