//! The commit path: one atomic batch per transaction, leader/follower group commit.
//!
//! # Commit rules
//!
//! 1. Only committed data reaches storage: one atomic [`WriteBatch`] per
//!    transaction holds every Rows and Index change and
//!    `txn/last_ts = commit_ts` (and, for XA, the prepared record it writes
//!    or deletes: `xa.rs`). Recovery is therefore `visible = last_ts`.
//!    The versions it replaces go to memory (`history.rs`: only snapshots of
//!    this process read them), or, past its budget, into the batch as History
//!    puts.
//! 2. The caller holds, from its current read until the end of the transaction, a
//!    row lock covering every pk it writes ([`crate::Transaction::put`]'s
//!    contract). So the Rows version the transaction's locked read remembered
//!    ([`crate::Transaction::get_locked`]), or the one read while preparing —
//!    outside any global lock — is still the one the batch replaces when it is
//!    written. Debug builds re-read it under the commit mutex and assert so.
//! 3. The commit timestamp is taken and the batch written under the one commit
//!    mutex, `commit_ts = next_ts + 1`: WAL order is timestamp order. Batches are
//!    built before it; under it happen stamping the timestamp into the
//!    prebuilt values, `Storage::write` (RocksDB serialises writers anyway; its
//!    WAL record is only buffered under the server's default, see
//!    `canyon-rocksdb`) and the bookkeeping that must precede or follow that
//!    write in timestamp order: the replaced versions into memory (rule 4), a
//!    dead run's removal, the row cache and the garbage queue (listed in
//!    `docs/architecture/scalability.md`).
//! 4. The replaced versions go into memory under the commit mutex before the
//!    storage write (invariant H of `history.rs`), and within the batch History
//!    and Index puts come before the Rows change, so a storage that exposed a
//!    batch partially would still never show a reader a new Rows version
//!    without the old version it replaced. The row
//!    cache learns of every Rows key the batch wrote right after the storage
//!    write, still under the commit mutex and before `last_written_ts` covers
//!    the commit — so before any snapshot can include it, and before the row
//!    locks go (rule 6). See the invariant in `row_cache.rs`.
//! 5. `visible` moves to `t` only when every commit `<= t` is written — and, under
//!    [`Durability::SyncEveryCommit`], durable: the sync leader loads
//!    `last_written_ts` *before* calling `Storage::sync`, which makes durable every
//!    write that returned before it (prefix durability), then raises `visible`.
//!    Under [`Durability::SyncPeriodically`] `visible` is raised right after the
//!    write, under the commit mutex, so it still moves in timestamp order.
//! 6. Row locks are released once the commit is **written** — in storage, in
//!    the row cache, covered by `last_written_ts` — not once it is durable
//!    (early lock release, as InnoDB releases a transaction's locks when it
//!    commits in memory, before its redo log flush). The next holder's current
//!    read sees the written version; its snapshot sees it only once visible
//!    (rule 5). A hot row's writers so follow one another at the speed of the
//!    storage write rather than one sync round each: on 16 CPUs, TPC-C's
//!    Payment, which updates one of a few warehouse rows, took 1.75× MariaDB's
//!    latency while locks waited for the sync (docs/benchmarks.md).
//!    Why this loses nothing acknowledged: WAL order is timestamp order
//!    (rule 3) and a sync makes a prefix of the WAL durable (rule 5), so a
//!    transaction that wrote after reading a not-yet-durable version commits
//!    at a higher timestamp and is durable only if that version is. A crash
//!    can lose a suffix of written commits, never one in the middle.
//! 7. COMMIT returns `Ok` only once the commit is durable and visible (rule 5).
//!    A failed write or sync leaves storage in an unknown state: the manager
//!    refuses every later commit with [`Error::Io`] until restarted (as
//!    Postgres PANICs on a failed fsync).
//! 8. A transaction without writes takes no timestamp and writes nothing. If it
//!    made a current read (rule 6 lets one return a written, not yet durable
//!    version), its COMMIT still waits, under [`Durability::SyncEveryCommit`],
//!    until everything written before it is durable — `visible >= next_ts` as
//!    of the commit — so that no client is told "committed" about a
//!    transaction that read what a crash could still take back. Snapshot
//!    reads see only visible, so durable, data: read-only transactions without
//!    current reads never wait. An autocommitted statement's result is sent
//!    only after its COMMIT; what a current read shows *before* an explicit
//!    COMMIT (a `SELECT ... FOR UPDATE` result, a duplicate-key error) may
//!    still be undone by a crash, as in InnoDB.
//!
//! A bulk load (`bulk.rs`: LOAD DATA into an empty table closed to other
//! writers) commits differently under rules 1 and 3: its rows are not in a
//! batch but in sorted files, ingested under the commit mutex at a
//! timestamp chosen ahead (above `next_ts`), and its batch — `txn/last_ts`
//! and the deletion of its intent record — is the commit point; recovery
//! removes the files' keys when that batch did not survive. Rules 5–8 are
//! unchanged.
//!
//! # Group commit (leader / follower)
//!
//! ```text
//!   state { synced_ts, leader_active }  (Mutex + Condvar)
//!   commit at ts:  loop {
//!     synced_ts >= ts            -> done
//!     leader_active              -> wait, re-check
//!     else become leader: target = last_written_ts; Storage::sync();
//!          visible.fetch_max(target); synced_ts = target; wake all
//!   }
//! ```
//!
//! Every commit written before a sync starts is covered by it; commits arriving
//! during a sync queue behind it and share the next one. Under load the number of
//! syncs is far below the number of commits (see the `group_commit_*` test).
//! How far below is counted ([`GroupCommitStats`]: commits, rounds, commits per
//! round, sync times; SHOW ENGINE INNODB STATUS) by relaxed atomics that only
//! the commit-mutex holder or the round's leader writes: no lock is added.
//!
//! # Waiting without a thread: [`Committing`]
//!
//! [`Transaction::commit`] blocks its thread until the commit is durable. The
//! server runs many connections on a few async worker threads, where blocking
//! means handing the worker to another thread (`block_in_place`) on every commit:
//! measured under TPC-C that hand-off cost 5–10% of the server's CPU per
//! transaction. So the commit splits in two:
//!
//! - [`Transaction::commit_deferred`] prepares and writes the batch (rules 1–4:
//!   the commit mutex is held only for the storage write and its
//!   bookkeeping), releases the row
//!   locks (rule 6) and returns a [`Committing`] that still owns the
//!   transaction (its snapshot slot);
//! - [`Committing::durable`] is a future that completes when the commit is
//!   durable and visible, then ends the transaction. It registers its waker in the
//!   group state; the rounds that make it durable are led by the **syncer
//!   thread** (SyncEveryCommit only), which leads a round whenever a waiter wants
//!   a timestamp above `synced_ts` and no leader is active. A blocking leader that
//!   finishes a round wakes the waiters it covered and hands any still waiting to
//!   the syncer, so no waiter is forgotten:
//!
//! ```text
//!   poll(ts):   visible >= ts -> Ready;  failed -> Ready(Err)
//!               else wakers += (ts, waker); wanted_ts = max(wanted_ts, ts);
//!                    no leader active -> wake the syncer;  Pending
//!   any round:  ... synced_ts = target; wake wakers with ts <= target (all on
//!               failure); wanted_ts > synced_ts -> wake the syncer
//!   syncer:     loop { wait until wanted_ts > synced_ts && !leader_active; round }
//! ```
//!
//! [`Committing::wait`] is the blocking form (through the blocking hook), and
//! dropping an unfinished `Committing` waits too: a waiter is what asks the
//! syncer for a round, and the session that commits next expects to see it.

use crate::gc::GarbageKey;
use crate::keys::{self, history_key, index_entry_key, index_value, patch_ts, version_value};
use crate::mvcc::{Buffered, Replaced, Transaction};
use crate::row_cache::RowsValue;
use crate::{run_blocking, Durability, Timestamp, TxnManager};
use canyon_common::{Error, Result};
use canyon_storage::{Keyspace, WriteBatch};
use parking_lot::{Condvar, Mutex, MutexGuard};
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, Waker};

/// Group commit so far ([`crate::TxnManager::group_commit_stats`]; SHOW
/// ENGINE INNODB STATUS's GROUP COMMIT section).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GroupCommitStats {
    /// Commit batches written to storage (one per write transaction).
    pub commits: u64,
    /// Sync rounds: `Storage::sync` calls by a group-commit leader, the
    /// syncer thread or the periodic sync.
    pub syncs: u64,
    /// Commit timestamps the rounds made durable (about one per commit: a
    /// failed write spends one too); divided by `syncs`, the mean batch.
    pub synced_commits: u64,
    /// The most commits one round made durable.
    pub max_batch: u64,
    /// Time spent in the rounds' syncs, in microseconds.
    pub sync_us: u64,
    /// The longest sync, in microseconds.
    pub sync_max_us: u64,
}

/// The counters behind [`GroupCommitStats`]. Relaxed atomics, each written by
/// one thread at a time: `commits` under the commit mutex, the rest by the
/// one round leader (`leader_active`) or the periodic sync thread. Readers
/// take no lock, and the commit path takes none for them.
#[derive(Debug, Default)]
struct GroupCounters {
    commits: AtomicU64,
    syncs: AtomicU64,
    synced_commits: AtomicU64,
    max_batch: AtomicU64,
    sync_us: AtomicU64,
    sync_max_us: AtomicU64,
}

impl GroupCounters {
    /// A sync round that took `took` and made `batch` more commits durable.
    fn round(&self, took: std::time::Duration, batch: u64) {
        let us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.syncs.fetch_add(1, Ordering::Relaxed);
        self.synced_commits.fetch_add(batch, Ordering::Relaxed);
        self.max_batch.fetch_max(batch, Ordering::Relaxed);
        self.sync_us.fetch_add(us, Ordering::Relaxed);
        self.sync_max_us.fetch_max(us, Ordering::Relaxed);
    }
}

/// State of the leader/follower group commit, shared with the syncer thread.
#[derive(Debug)]
pub(crate) struct GroupCommit {
    /// Commits, rounds and sync times ([`GroupCommitStats`]).
    counters: GroupCounters,
    state: Mutex<GroupState>,
    /// Blocking followers wait here for the end of a round.
    cv: Condvar,
    /// The syncer thread waits here for a round to lead.
    syncer_cv: Condvar,
}

#[derive(Debug)]
struct GroupState {
    /// Every commit at or below this is durable.
    synced_ts: Timestamp,
    /// A leader is inside `Storage::sync`.
    leader_active: bool,
    /// The highest timestamp an async waiter has asked to be made durable.
    wanted_ts: Timestamp,
    /// Async waiters ([`Committing::durable`]): the timestamp each waits for.
    wakers: Vec<(Timestamp, Waker)>,
    /// The manager is gone: the syncer thread exits.
    shutdown: bool,
}

impl GroupState {
    /// An async waiter is owed a sync round and nobody is leading one.
    fn round_wanted(&self) -> bool {
        self.wanted_ts > self.synced_ts && !self.leader_active
    }
}

impl GroupCommit {
    pub(crate) fn new(recovered_ts: Timestamp) -> Self {
        GroupCommit {
            counters: GroupCounters::default(),
            state: Mutex::new(GroupState {
                synced_ts: recovered_ts,
                leader_active: false,
                wanted_ts: recovered_ts,
                wakers: Vec::new(),
                shutdown: false,
            }),
            cv: Condvar::new(),
            syncer_cv: Condvar::new(),
        }
    }

    /// The counters so far.
    pub(crate) fn stats(&self) -> GroupCommitStats {
        let c = &self.counters;
        GroupCommitStats {
            commits: c.commits.load(Ordering::Relaxed),
            syncs: c.syncs.load(Ordering::Relaxed),
            synced_commits: c.synced_commits.load(Ordering::Relaxed),
            max_batch: c.max_batch.load(Ordering::Relaxed),
            sync_us: c.sync_us.load(Ordering::Relaxed),
            sync_max_us: c.sync_max_us.load(Ordering::Relaxed),
        }
    }

    /// Tells the syncer thread to exit (the manager is being dropped).
    pub(crate) fn shut_down(&self) {
        self.state.lock().shutdown = true;
        self.syncer_cv.notify_all();
    }

    /// Starts the syncer thread. It holds only a `Weak` on the manager, taking a
    /// strong handle just for the length of a round.
    pub(crate) fn spawn_syncer(group: &Arc<GroupCommit>, mgr: Weak<TxnManager>) -> Result<()> {
        let group = Arc::clone(group);
        std::thread::Builder::new()
            .name("canyon-syncer".to_string())
            .spawn(move || loop {
                {
                    let mut g = group.state.lock();
                    while !g.shutdown && !g.round_wanted() {
                        group.syncer_cv.wait(&mut g);
                    }
                    if g.shutdown {
                        return;
                    }
                }
                let Some(m) = mgr.upgrade() else { return };
                let mut g = group.state.lock();
                if g.round_wanted() {
                    m.lead_round(&mut g);
                }
            })
            .map(|_| ())
            .map_err(|e| Error::Io(format!("cannot start the canyon-syncer thread: {e}")))
    }
}

/// One put of a prepared batch. When `stamp` is set, the value's leading
/// timestamp is filled with the commit timestamp under the commit mutex.
#[derive(Debug)]
struct PendingPut {
    keyspace: Keyspace,
    key: Vec<u8>,
    value: Vec<u8>,
    stamp: bool,
    /// Rows puts, with the row cache on: a copy of key and value for
    /// [`crate::row_cache::RowCache::written`] (rule 4), made here so that
    /// only its stamping happens under the commit mutex.
    cache_copy: Option<RowsValue>,
}

/// A transaction writing more rows than this commits as a *bulk commit*
/// (LOAD DATA, a large INSERT ... SELECT): the same one atomic batch, with two
/// differences that change no outcome, only the cost (measured on a load of a
/// million rows, `docs/benchmarks.md`):
///
/// - the row cache is not handed a copy of every new Rows value: each written
///   key's entry is dropped instead ([`crate::row_cache::RowCache::written_key`]).
///   Caching the rows of a load copies each one only to evict it again;
///   dropping keeps the cache's invariant just as well (an absent entry claims
///   nothing).
/// - the batch's Index puts are sorted by key. The write buffer is ordered by
///   Rows key, so Rows and History puts already arrive in key order, but the
///   entries of a secondary index arrive in primary-key order, random in index
///   order. RocksDB's memtable inserts a batch's keys one by one into a skip
///   list and reuses the previous insert's position when keys ascend; random
///   keys pay a full search from the top each (a third of a load's commit).
///   Within one batch the order of puts to distinct keys does not matter to
///   what is stored, and rule 4's order between keyspaces (History and Index
///   before Rows) is kept.
pub(crate) const BULK_ROWS: usize = 4096;

/// A commit batch built outside the commit mutex, in rule-4 order.
#[derive(Debug, Default)]
pub(crate) struct Prepared {
    puts: Vec<PendingPut>,
    /// Replaced versions kept in memory (`history.rs`): Rows key and the raw
    /// value it had, inserted under the commit mutex before the write.
    history: Vec<(Vec<u8>, Vec<u8>)>,
    /// The keys among `puts` that end a version — History entries and ended
    /// Index entries here, Rows tombstones in `tombstones` — garbage once the
    /// watermark reaches the commit, for the GC queue (gc.rs, "Finding the
    /// garbage").
    garbage: Vec<GarbageKey>,
    tombstones: Vec<GarbageKey>,
    /// A bulk commit (see [`BULK_ROWS`]): the Rows keys it writes, for
    /// [`crate::row_cache::RowCache::written_key`] after the write (its puts
    /// carry no cache copies).
    bulk_keys: Vec<Vec<u8>>,
    /// Meta records written (`Some`) or deleted (`None`) in the same batch:
    /// an XA branch's prepared record (`xa.rs`).
    pub(crate) meta: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    /// The change-log record to append in the same batch (changelog.rs).
    pub(crate) log: Option<crate::changelog::LogEntry>,
    /// Rows values as read while preparing (debug builds check rule 2).
    #[cfg(debug_assertions)]
    read: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

impl Transaction {
    /// Commits: writes the buffered changes as one batch at a new commit timestamp,
    /// releases the locks, and waits until it is durable and visible (per
    /// [`Durability`]). See the commit rules in `commit.rs`.
    ///
    /// Errors: [`Error::Deadlock`] if the transaction was a deadlock victim (nothing
    /// is written); [`Error::Io`] if storage failed (the commit may or may not
    /// survive a restart; it never becomes visible in this process). In every case
    /// the transaction is over and its locks are released.
    pub fn commit(self) -> Result<()> {
        self.commit_deferred()?.wait()
    }

    /// Writes the commit like [`Transaction::commit`] and releases the locks
    /// (rule 6), but returns before it is durable: [`Committing::durable`] (or
    /// [`Committing::wait`]) sees the commit durable and visible. Errors as for
    /// `commit`, for the write; the transaction is then over.
    ///
    /// The storage write runs on the calling thread, under the commit mutex: a
    /// short critical section (the WAL append and memtable insert) that an async
    /// caller accepts in exchange for not handing its worker to another thread.
    pub fn commit_deferred(mut self) -> Result<Committing> {
        let id = self.id.unwrap_or(0);
        canyon_probes::commit_start(id);
        let written = self.commit_write();
        canyon_probes::commit_done(id, written.is_ok());
        match written {
            Ok(written) => {
                // Rule 6: written (and cached, and covered by last_written_ts).
                self.release_locks();
                let ts = written.or_else(|| self.read_floor());
                Ok(Committing {
                    txn: Some(self),
                    ts,
                })
            }
            Err(e) => {
                self.finish();
                Err(e)
            }
        }
    }

    /// Rule 8: what a commit without writes waits for — every commit written so
    /// far, if a current read may have returned one not yet durable. `next_ts`,
    /// not `last_written_ts`: a current read made without the row's lock can
    /// meet a version whose commit is between its storage write and the
    /// `last_written_ts` store.
    fn read_floor(&self) -> Option<Timestamp> {
        if !self.current_reads || !matches!(self.mgr.config.durability, Durability::SyncEveryCommit)
        {
            return None;
        }
        let floor = self.mgr.next_ts.load(Ordering::SeqCst);
        (self.mgr.visible.load(Ordering::Acquire) < floor).then_some(floor)
    }

    /// Prepares and writes the batch; the commit timestamp, or `None` when there
    /// was nothing to write (rule 8).
    fn commit_write(&mut self) -> Result<Option<Timestamp>> {
        self.check_active()?;
        if let Some(mut b) = self.bulk.take() {
            // bulk.rs: the merged files, ingested at the commit timestamp.
            return self.mgr.commit_bulk(&mut b, self.log.take()).map(Some);
        }
        if self.writes.is_empty() && self.commit_meta.is_empty() {
            return Ok(None);
        }
        let writes = std::mem::take(&mut self.writes);
        let mut prepared = self.mgr.prepare(writes)?;
        if prepared.puts.is_empty() && self.commit_meta.is_empty() {
            return Ok(None);
        }
        prepared.log = self.log.take();
        prepared.meta.extend(
            std::mem::take(&mut self.commit_meta)
                .into_iter()
                .map(|(k, v)| (k, Some(v))),
        );
        self.mgr.write_commit(prepared).map(Some)
    }
}

/// A commit that is written but may not yet be durable and visible; its row
/// locks are released already (rule 6), the transaction's snapshot slot not.
/// See "Waiting without a thread" in the module doc. Dropping it unfinished
/// waits, blocking.
#[derive(Debug)]
#[must_use = "a commit is acknowledged only once it is durable: await `durable` or call `wait`"]
pub struct Committing {
    /// `None` once finished.
    txn: Option<Transaction>,
    /// `None` when nothing was written.
    ts: Option<Timestamp>,
}

impl Committing {
    /// The commit's timestamp; `None` when it wrote nothing. A commit that
    /// carried a change-log record wrote that record at this timestamp (the
    /// SQL layer's semi-synchronous replication waits for a replica to
    /// acknowledge it).
    pub fn ts(&self) -> Option<Timestamp> {
        self.ts
    }

    /// Whether the commit is durable and visible already (or wrote nothing).
    pub fn is_done(&self) -> bool {
        match (&self.txn, self.ts) {
            (Some(t), Some(ts)) => t.mgr.visible.load(Ordering::Acquire) >= ts,
            _ => true,
        }
    }

    /// Completes when the commit is durable and visible (for a commit without
    /// writes: when what it may have read is, rule 8), then ends the
    /// transaction. Errors: [`Error::Io`] if a storage write or sync failed.
    pub fn durable(mut self) -> impl Future<Output = Result<()>> {
        std::future::poll_fn(move |cx| self.poll_durable(cx))
    }

    /// [`Committing::durable`], blocking (inside the blocking hook).
    pub fn wait(mut self) -> Result<()> {
        self.wait_inner()
    }

    fn poll_durable(&mut self, cx: &mut Context<'_>) -> Poll<Result<()>> {
        let (Some(txn), Some(ts)) = (&self.txn, self.ts) else {
            self.txn = None;
            return Poll::Ready(Ok(()));
        };
        match txn.mgr.poll_durable(ts, cx) {
            Poll::Ready(r) => {
                self.txn = None;
                Poll::Ready(r)
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn wait_inner(&mut self) -> Result<()> {
        let (Some(txn), Some(ts)) = (&self.txn, self.ts) else {
            self.txn = None;
            return Ok(());
        };
        let mgr = &txn.mgr;
        let mut result = Ok(());
        if mgr.visible.load(Ordering::Acquire) < ts {
            run_blocking(mgr.config.blocking_hook, &mut || {
                result = mgr.make_durable(ts);
            });
        }
        self.txn = None;
        result
    }
}

impl Drop for Committing {
    fn drop(&mut self) {
        if self.txn.is_some() {
            // An abandoned wait (a client gone mid-commit): the commit must still
            // be driven to visibility, so that the session's next transaction
            // sees it. The outcome is not ours to report.
            let _ = self.wait_inner();
        }
    }
}

impl TxnManager {
    /// Builds the commit batch (rule 2: outside any global lock), with placeholder
    /// timestamps where the commit timestamp goes.
    pub(crate) fn prepare(&self, writes: BTreeMap<Vec<u8>, Buffered>) -> Result<Prepared> {
        let mut history = Vec::new();
        let mut in_memory = Vec::new();
        let mut index = Vec::new();
        let mut rows = Vec::new();
        let mut garbage = Vec::new();
        let mut tombstones = Vec::new();
        #[cfg(debug_assertions)]
        let mut read = Vec::new();
        let bulk = writes.len() > BULK_ROWS;
        let mut bulk_keys = Vec::new();
        for (rk, b) in writes {
            let mut old: Option<Vec<u8>> = match b.replaced {
                Replaced::Unknown => self.rows_get(&rk)?.map(|raw| raw.to_vec()),
                Replaced::Absent => None,
                Replaced::Live(raw) => Some(raw.to_vec()),
            };
            let old_version = old.as_deref().map(keys::decode_version).transpose()?;
            let old_live = old_version.is_some_and(|v| v.row.is_some());
            let old_ts = old_version.map(|v| v.ts);
            let new_value = match &b.row {
                Some(row) => Some(version_value(0, Some(row))),
                None if old_live => Some(version_value(0, None)),
                // Deleting a row that does not exist (or is already a tombstone).
                None => None,
            };
            if let Some(value) = new_value {
                if let (Some(raw), Some(ts)) = (old.as_mut(), old_ts) {
                    // The replaced version moves verbatim; its leading commit_ts
                    // becomes the end_ts, stamped later. Debug builds keep a copy
                    // for the rule-2 check.
                    let value = if cfg!(debug_assertions) {
                        raw.clone()
                    } else {
                        std::mem::take(raw)
                    };
                    let key = history_key(&rk, ts);
                    garbage.push((Keyspace::History, key.clone()));
                    if self.history.admit(&rk, &value) {
                        in_memory.push((rk.clone(), value));
                    } else {
                        history.push(PendingPut {
                            keyspace: Keyspace::History,
                            key,
                            value,
                            stamp: true,
                            cache_copy: None,
                        });
                    }
                }
                if b.row.is_none() {
                    tombstones.push((Keyspace::Rows, rk.clone()));
                }
                let cache_copy = if !self.row_cache.enabled() {
                    None
                } else if bulk {
                    bulk_keys.push(rk.clone());
                    None
                } else {
                    Some(RowsValue::new(&rk, &value))
                };
                rows.push(PendingPut {
                    keyspace: Keyspace::Rows,
                    key: rk.clone(),
                    value,
                    stamp: true,
                    cache_copy,
                });
            }
            let pk = &rk[keys::ID_LEN..];
            for (ix, k) in &b.committed_index_keys {
                if !b.new_index_keys.iter().any(|(i, n)| i == ix && n == k) {
                    let key = index_entry_key(*ix, k, pk);
                    garbage.push((Keyspace::Index, key.clone()));
                    index.push(PendingPut {
                        keyspace: Keyspace::Index,
                        key,
                        value: index_value(0, pk.len())?,
                        stamp: true,
                        cache_copy: None,
                    });
                }
            }
            for (ix, k) in &b.new_index_keys {
                // A key the committed version has already has a live entry.
                if !b
                    .committed_index_keys
                    .iter()
                    .any(|(i, c)| i == ix && c == k)
                {
                    index.push(PendingPut {
                        keyspace: Keyspace::Index,
                        key: index_entry_key(*ix, k, pk),
                        value: index_value(u64::MAX, pk.len())?,
                        stamp: false,
                        cache_copy: None,
                    });
                }
            }
            #[cfg(debug_assertions)]
            read.push((rk, old));
        }
        if bulk {
            index.sort_unstable_by(|a, b| a.key.cmp(&b.key));
        }
        history.append(&mut index);
        history.append(&mut rows);
        Ok(Prepared {
            puts: history,
            history: in_memory,
            garbage,
            tombstones,
            bulk_keys,
            meta: Vec::new(),
            log: None,
            #[cfg(debug_assertions)]
            read,
        })
    }

    /// Rule 3: timestamp and write under the commit mutex.
    pub(crate) fn write_commit(&self, prepared: Prepared) -> Result<Timestamp> {
        let _commit = self.commit_mutex.lock();
        if self.failed.load(Ordering::Acquire) {
            return Err(self.failure_error());
        }
        #[cfg(debug_assertions)]
        for (rk, old) in &prepared.read {
            let now = self.storage.get(Keyspace::Rows, rk)?;
            let gc_removed_tombstone = now.is_none()
                && old
                    .as_deref()
                    .is_some_and(|o| keys::decode_version(o).is_ok_and(|v| v.row.is_none()));
            assert!(
                now == *old || gc_removed_tombstone,
                "commit rule 2 broken: a row written by this transaction changed since it \
                 was read; the SQL layer must lock every row it writes"
            );
        }
        let ts = self.next_ts.load(Ordering::Relaxed) + 1;
        // Rule 4 and invariant H of history.rs: the replaced versions are
        // readable before the versions replacing them are.
        for (rk, raw) in prepared.history {
            self.history.insert(rk, raw, ts);
        }
        let mut batch = WriteBatch::new();
        // Rule 4: the new Rows values, for the row cache after the write.
        let mut cached = Vec::new();
        // Rule 1 of dead_runs.rs: runs a live write falls into go before the write.
        let watching = self.dead_runs.any_watched();
        for mut p in prepared.puts {
            if p.stamp {
                patch_ts(&mut p.value, ts);
            }
            if watching && p.keyspace == Keyspace::Rows {
                self.dead_runs.note_write(ts, &p.key, &p.value);
            }
            if let Some(mut copy) = p.cache_copy {
                copy.stamp(ts);
                cached.push(copy);
            }
            batch.put(p.keyspace, p.key, p.value);
        }
        for (key, value) in prepared.meta {
            match value {
                Some(v) => batch.put(Keyspace::Meta, key, v),
                None => batch.delete(Keyspace::Meta, key),
            }
        }
        batch.put(
            Keyspace::Meta,
            keys::LAST_TS_KEY.to_vec(),
            keys::ts_value(ts),
        );
        // Rule 1: the change record travels in the commit's own batch.
        let log_head = prepared
            .log
            .map(|entry| self.changelog.append(&mut batch, ts, entry));
        // The timestamp is spent even if the write fails: the batch may be applied.
        self.next_ts.store(ts, Ordering::SeqCst);
        if let Err(e) = self.storage.write(batch, false) {
            self.fail("write", &e);
            return Err(e);
        }
        if let Some(head) = log_head {
            self.changelog.appended(head, ts);
        }
        for value in cached {
            self.row_cache.written(value);
        }
        for key in &prepared.bulk_keys {
            self.row_cache.written_key(key);
        }
        self.garbage.push(ts, prepared.garbage, prepared.tombstones);
        self.last_written_ts.store(ts, Ordering::SeqCst);
        // Under the commit mutex: one writer at a time.
        self.group.counters.commits.fetch_add(1, Ordering::Relaxed);
        if let Durability::SyncPeriodically { .. } = self.config.durability {
            self.visible.fetch_max(ts, Ordering::SeqCst);
            self.changelog.wake();
        }
        Ok(ts)
    }

    /// Blocks until every commit written to storage so far is durable and
    /// visible (call it inside the blocking hook). A commit is written before
    /// its durability wait, which the server may leave to the connection task:
    /// the SQL layer's table locks end a transaction's write intention when
    /// its commit is written, so LOCK TABLES ... READ and FLUSH TABLES WITH
    /// READ LOCK, once granted, call this — no commit that raced the grant
    /// becomes visible under the lock.
    pub fn settle_written(&self) -> Result<()> {
        let ts = self.last_written_ts.load(Ordering::SeqCst);
        if self.visible.load(Ordering::Acquire) >= ts {
            return Ok(());
        }
        self.make_durable(ts)
    }

    /// Rules 5 and 7: returns once the commit at `ts` is durable and visible.
    pub(crate) fn make_durable(&self, ts: Timestamp) -> Result<()> {
        match self.config.durability {
            Durability::SyncEveryCommit => self.group_commit(ts),
            Durability::SyncPeriodically { .. } => Ok(()),
        }
    }

    /// The leader/follower loop of the module doc.
    fn group_commit(&self, ts: Timestamp) -> Result<()> {
        let mut g = self.group.state.lock();
        loop {
            if g.synced_ts >= ts {
                return Ok(());
            }
            if self.failed.load(Ordering::Acquire) {
                return Err(self.failure_error());
            }
            if g.leader_active {
                self.group.cv.wait(&mut g);
                continue;
            }
            self.lead_round(&mut g);
        }
    }

    /// One sync round, led by the caller (a blocking committer or the syncer
    /// thread), with the group state locked on entry and exit and unlocked for the
    /// sync itself. Wakes everyone the round covered (everyone, on failure).
    fn lead_round(&self, g: &mut MutexGuard<'_, GroupState>) {
        debug_assert!(!g.leader_active);
        g.leader_active = true;
        let from = g.synced_ts;
        let (target, synced, took) = MutexGuard::unlocked(g, || {
            let target = self.last_written_ts.load(Ordering::SeqCst);
            canyon_probes::group_commit_sync_start(target.saturating_sub(from));
            let start = std::time::Instant::now();
            let synced = self.storage.sync();
            let took = start.elapsed();
            canyon_probes::group_commit_sync_done(
                target.saturating_sub(from),
                u64::try_from(took.as_nanos()).unwrap_or(u64::MAX),
                synced.is_ok(),
            );
            (target, synced, took)
        });
        g.leader_active = false;
        let failed = match synced {
            Ok(()) => {
                // Still the round's leader's: no other round counts meanwhile.
                let batch = target.saturating_sub(g.synced_ts);
                self.group.counters.round(took, batch);
                self.visible.fetch_max(target, Ordering::SeqCst);
                self.changelog.wake();
                g.synced_ts = g.synced_ts.max(target);
                // A failed write spends a timestamp that `last_written_ts` never
                // reaches; a rule-8 waiter may be waiting for it.
                self.failed.load(Ordering::Acquire)
            }
            Err(e) => {
                self.fail("sync", &e);
                true
            }
        };
        if failed {
            // Every waiter is woken below (to its result or the failure); none
            // is owed a round any more, and the syncer must not retry forever.
            g.wanted_ts = g.synced_ts;
        }
        let synced_ts = g.synced_ts;
        let mut ready = Vec::new();
        g.wakers.retain(|(ts, w)| {
            let done = failed || *ts <= synced_ts;
            if done {
                ready.push(w.clone());
            }
            !done
        });
        if g.wanted_ts > g.synced_ts && !failed {
            self.group.syncer_cv.notify_one();
        }
        self.group.cv.notify_all();
        MutexGuard::unlocked(g, || ready.into_iter().for_each(Waker::wake));
    }

    /// The poll behind [`Committing::durable`].
    fn poll_durable(&self, ts: Timestamp, cx: &mut Context<'_>) -> Poll<Result<()>> {
        if self.visible.load(Ordering::Acquire) >= ts {
            return Poll::Ready(Ok(()));
        }
        let mut g = self.group.state.lock();
        // Under the lock, so that a round ending now either is seen here or sees
        // the waker registered below.
        if self.visible.load(Ordering::Acquire) >= ts {
            return Poll::Ready(Ok(()));
        }
        if self.failed.load(Ordering::Acquire) {
            drop(g);
            return Poll::Ready(Err(self.failure_error()));
        }
        if !g
            .wakers
            .iter()
            .any(|(t, w)| *t == ts && w.will_wake(cx.waker()))
        {
            g.wakers.push((ts, cx.waker().clone()));
        }
        g.wanted_ts = g.wanted_ts.max(ts);
        if !g.leader_active {
            self.group.syncer_cv.notify_one();
        }
        Poll::Pending
    }

    /// The body of the periodic sync thread ([`Durability::SyncPeriodically`]).
    pub(crate) fn periodic_sync(&self) {
        let target = self.last_written_ts.load(Ordering::SeqCst);
        if target <= self.group.state.lock().synced_ts || self.failed.load(Ordering::Acquire) {
            return;
        }
        let start = std::time::Instant::now();
        match self.storage.sync() {
            Ok(()) => {
                let took = start.elapsed();
                let mut g = self.group.state.lock();
                self.group
                    .counters
                    .round(took, target.saturating_sub(g.synced_ts));
                g.synced_ts = g.synced_ts.max(target);
            }
            Err(e) => self.fail("periodic sync", &e),
        }
    }

    /// Rule 7: remember the failure; later commits are refused.
    pub(crate) fn fail(&self, what: &str, e: &Error) {
        tracing::error!(error = %e, "storage {what} failed; refusing further commits");
        let mut f = self.failure.lock();
        if f.is_none() {
            *f = Some(format!("storage {what} failed: {e}"));
        }
        self.failed.store(true, Ordering::Release);
    }

    pub(crate) fn failure_error(&self) -> Error {
        let why = self.failure.lock().clone().unwrap_or_default();
        Error::Io(format!(
            "commits are refused until restart after an earlier failure ({why})"
        ))
    }
}
