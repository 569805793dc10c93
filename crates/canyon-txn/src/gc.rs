//! Garbage collection of old versions, the snapshot registry it reads, and the
//! background threads.
//!
//! # The watermark
//!
//! GC may delete a version only if no snapshot that exists or can still be taken
//! reads it. Every transaction publishes its snapshot in a **slot**
//! (`CachePadded<AtomicU64>`, `u64::MAX` = idle) owned by its session. Slots are
//! registered in `SnapshotRegistry::slots` when a session is created and removed
//! when it is dropped — never per statement — so taking a snapshot writes only the
//! session's own cache line.
//!
//! Publishing races with GC: a reader could load `visible = 5`, GC could compute
//! the watermark 9 from the slots before the reader's store of 5 lands, and delete
//! a version the reader needs. A Dekker-style handshake closes the race (all
//! operations `SeqCst`):
//!
//! ```text
//!   reader (publish)                        GC (run_gc_once)
//!   v = visible.load()                      w0 = visible.load()
//!   slot.store(v)                           horizon.fetch_max(w0)
//!   if horizon.load() > v: retry            w = min(w0, every slot)
//! ```
//!
//! In the single total order of `SeqCst` operations, either the reader's
//! `horizon.load` sees GC's store — then `v < w0` makes it retry with a fresh
//! `v >= w0 >= w` (visible only grows), or `v >= w0` already holds — or it does
//! not, so its `slot.store` came before GC's store and hence before GC's slot
//! loads, and GC sees `v` (`w <= v`). Either way `w <= v`: GC deletes only versions
//! with `end_ts <= w`, which a reader at `v` never needs (it needs the version
//! with `begin <= v < end`).
//!
//! # What is deleted
//!
//! With watermark `w`:
//! 1. History entries with `end_ts <= w` — immutable once written (a History key
//!    names one version, moved there once, under its row lock), so they are
//!    deleted without further checks: from memory (`history.rs`), or, for a
//!    version spilled past the memory budget, from the History keyspace.
//! 2. Index entries with `end_ts <= w`. A commit may re-add the same key (the row
//!    changed `A -> B -> A` overwrites the ended `A` entry with `u64::MAX`), so each
//!    candidate is re-read **under the commit mutex**, and deleted only if its
//!    value is byte-equal to what the scan saw. Every Index write happens in a
//!    commit batch under that mutex, so nothing can change it in between.
//! 3. Rows tombstones with `commit_ts <= w`: every snapshot sees the delete, so the
//!    key may go. Same re-check under the commit mutex (an INSERT of the same pk
//!    replaces the tombstone). If a commit read the tombstone before GC deleted it
//!    and moves it to History afterwards, the result is a harmless History
//!    tombstone, collected later.
//!
//! Holding the commit mutex for a re-check batch ([`GC_BATCH`] point reads) delays
//! commits by that much; the batch is small to bound the pause.
//!
//! # Finding the garbage: the queue, and the sweep
//!
//! Every key above becomes garbage in one known commit: a History entry, an
//! ended Index entry and a Rows tombstone are all written with the commit
//! timestamp `T` that ends them, and are collectable exactly when `w >= T`.
//! So the commit that writes them also hands their keys to a [`GarbageQueue`]
//! (built outside the commit mutex, pushed under it, hence in timestamp order),
//! and a GC pass pops the commits at or below `w` and deletes their keys: the
//! cost of a pass is the garbage, not the data. (Before this queue each pass
//! scanned the three keyspaces whole — 3.7% of the server's CPU under TPC-C on
//! 2 warehouses with a pass every 30 s, growing with the tables.)
//!
//! Rows tombstones wait for a pass at least `TxnConfig::gc_tombstone_interval`
//! (30 s) after the last one that took them. A tombstone is a version RocksDB
//! shows (Canyon skips it); deleting it leaves entries RocksDB hides but its
//! scans still step over, and in a range deleted from its front — TPC-C's
//! `new_order` — a steady trickle of them made the Rows memtable's
//! scan-triggered flush fire every second or two (39 flushes in a 75-s
//! TPC-C run instead of 24), and every flush leads to compactions that
//! rewrite the Rows bottom level: twice the compaction output, eating what the
//! queue saved. In batches they cost one flush per batch, as before the queue.
//!
//! A queued Index or Rows key is re-read under the commit mutex like a scanned
//! one, with the garbage test itself (`end <= w`, or "tombstone at `<= w`")
//! instead of byte equality: if a later commit re-added the key, the test
//! fails and the key stays (that commit queues it again if it ends it again);
//! if the key is gone already, there is nothing to do.
//!
//! The queue is in memory and bounded (`TxnConfig::gc_queue_keys`, default
//! [`MAX_QUEUED_KEYS`]). Garbage it does not hold — written before this
//! process started, refused while the queue was full (a snapshot held open
//! for minutes keeps `w` back while commits go on), or popped by a pass whose
//! deletes failed —
//! is found by a **sweep**: the old full scan of the three keyspaces (a bulk
//! scan, `Storage::scan_bulk`, which leaves the block cache alone) and of the
//! old versions in memory (`history.rs`), run once
//! `w` has passed the newest timestamp of such garbage (`sweep_until`). A
//! restart therefore costs one sweep, and a long snapshot one sweep after it
//! ends; in between, passes read only the queue.
//!
//! Not implemented: a RocksDB compaction filter could drop History and Index
//! garbage during compaction instead; RocksDB's own tombstones for the deleted
//! keys stay until compaction reaches them (a range that is deleted from its
//! front, like TPC-C's `new_order`, steps over them).

use crate::keys::{decode_index_value, decode_version, split_history_key};
use crate::{Durability, IndexId, TableId, Timestamp, TxnManager};
use canyon_common::{Error, Result};
use canyon_storage::{KeyRange, Keyspace, WriteBatch};
use crossbeam_utils::CachePadded;
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::ops::{Bound, ControlFlow};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// Value of an idle slot.
const IDLE: Timestamp = u64::MAX;
/// Garbage keys deleted per batch (and re-checked per hold of the commit mutex).
const GC_BATCH: usize = 256;
/// Keys visited per storage scan call before GC writes and resumes.
const SCAN_BUDGET: usize = 4096;
/// Default of `TxnConfig::gc_queue_keys`: most keys the [`GarbageQueue`] holds
/// (about 64 bytes each with their allocation); past it, commits leave their
/// garbage to a sweep.
pub(crate) const MAX_QUEUED_KEYS: usize = 1 << 20;

/// A key that becomes garbage once the watermark reaches its commit.
pub(crate) type GarbageKey = (Keyspace, Vec<u8>);

/// The keys commits made garbage, in commit order. See "Finding the garbage"
/// in the module doc.
#[derive(Debug)]
pub(crate) struct GarbageQueue {
    inner: Mutex<QueueInner>,
}

#[derive(Debug)]
struct QueueInner {
    /// History and Index keys: `(commit_ts, keys)`, oldest first; timestamps
    /// strictly increase.
    versions: VecDeque<(Timestamp, Vec<GarbageKey>)>,
    /// Rows tombstones, likewise (collected less often: see
    /// `TxnConfig::gc_tombstone_interval`).
    tombstones: VecDeque<(Timestamp, Vec<GarbageKey>)>,
    /// Keys in both.
    keys: usize,
    /// Most keys both may hold.
    capacity: usize,
    /// The newest timestamp of garbage that is not queued: a sweep at a
    /// watermark at or above it finds it. `None`: everything is queued.
    sweep_until: Option<Timestamp>,
}

impl QueueInner {
    /// Garbage up to `ts` is not (or no longer) queued: a sweep must find it.
    fn need_sweep(&mut self, ts: Timestamp) {
        self.sweep_until = Some(self.sweep_until.map_or(ts, |t| t.max(ts)));
    }
}

impl GarbageQueue {
    /// A queue of at most `capacity` keys for a store whose commits up to
    /// `recovered` were written by an earlier process: their garbage is left to
    /// the first sweep.
    pub(crate) fn new(recovered: Timestamp, capacity: usize) -> Self {
        GarbageQueue {
            inner: Mutex::new(QueueInner {
                versions: VecDeque::new(),
                tombstones: VecDeque::new(),
                keys: 0,
                capacity,
                sweep_until: (recovered > 0).then_some(recovered),
            }),
        }
    }

    /// Queues the garbage of the commit at `ts`: History and Index keys in
    /// `versions`, Rows tombstones in `tombstones`. Called under the commit
    /// mutex, so timestamps arrive in order.
    pub(crate) fn push(
        &self,
        ts: Timestamp,
        versions: Vec<GarbageKey>,
        tombstones: Vec<GarbageKey>,
    ) {
        if versions.is_empty() && tombstones.is_empty() {
            return;
        }
        let mut q = self.inner.lock();
        let q = &mut *q;
        if q.keys + tombstones.len() + versions.len() > q.capacity {
            q.need_sweep(ts);
            return;
        }
        q.keys += tombstones.len() + versions.len();
        for (list, keys) in [(&mut q.versions, versions), (&mut q.tombstones, tombstones)] {
            if !keys.is_empty() {
                debug_assert!(list.back().is_none_or(|(last, _)| *last < ts));
                list.push_back((ts, keys));
            }
        }
    }

    /// Removes and returns the garbage of every commit at or below `w`: its
    /// History and Index keys, and with `tombstones` its Rows keys too. Only
    /// the per-commit lists move under the mutex (commits push under it, while
    /// holding the commit mutex); the caller flattens them.
    fn pop_through(&self, w: Timestamp, tombstones: bool) -> Vec<Vec<GarbageKey>> {
        let mut q = self.inner.lock();
        let q = &mut *q;
        let mut out = Vec::new();
        let lists = if tombstones {
            vec![&mut q.versions, &mut q.tombstones]
        } else {
            vec![&mut q.versions]
        };
        for list in lists {
            while list.front().is_some_and(|(ts, _)| *ts <= w) {
                let (_, keys) = list.pop_front().expect("checked above");
                q.keys -= keys.len();
                out.push(keys);
            }
        }
        out
    }

    /// Records garbage up to `ts` that is no longer queued.
    fn need_sweep(&self, ts: Timestamp) {
        self.inner.lock().need_sweep(ts);
    }

    /// The `sweep_until` a sweep at watermark `w` would cover, if one is due.
    fn sweep_due(&self, w: Timestamp) -> Option<Timestamp> {
        self.inner.lock().sweep_until.filter(|t| *t <= w)
    }

    /// Records a finished sweep that covered `covered`; garbage refused while
    /// it ran (a newer `sweep_until`) still needs the next one.
    fn swept(&self, covered: Timestamp) {
        let mut q = self.inner.lock();
        if q.sweep_until == Some(covered) {
            q.sweep_until = None;
        }
    }

    /// Keys queued now (tests, status).
    pub(crate) fn len(&self) -> usize {
        self.inner.lock().keys
    }
}

/// A published snapshot. See the module doc.
#[derive(Debug)]
pub(crate) struct Slot {
    /// The snapshot timestamp being read at, or [`IDLE`].
    pub ts: AtomicU64,
    /// Whether a transaction is using this slot.
    pub in_use: AtomicBool,
}

impl Slot {
    /// Marks the slot idle: its snapshot no longer holds back GC.
    pub(crate) fn clear(&self) {
        self.ts.store(IDLE, Ordering::SeqCst);
    }
}

/// A shared handle on a slot.
pub(crate) type SlotRef = Arc<CachePadded<Slot>>;

/// Every session's slot, plus the GC horizon of the publishing handshake.
#[derive(Debug)]
pub(crate) struct SnapshotRegistry {
    slots: Mutex<Vec<SlotRef>>,
    horizon: CachePadded<AtomicU64>,
}

impl SnapshotRegistry {
    pub(crate) fn new() -> Self {
        SnapshotRegistry {
            slots: Mutex::new(Vec::new()),
            horizon: CachePadded::new(AtomicU64::new(0)),
        }
    }

    /// A new idle slot, registered (session creation; the slow path of `begin`).
    pub(crate) fn register(&self) -> SlotRef {
        let slot = Arc::new(CachePadded::new(Slot {
            ts: AtomicU64::new(IDLE),
            in_use: AtomicBool::new(false),
        }));
        self.slots.lock().push(Arc::clone(&slot));
        slot
    }

    /// Removes a session's slot, unless a transaction still holds it (then the
    /// next GC prunes it once only the registry holds it).
    pub(crate) fn unregister(&self, slot: &SlotRef) {
        let mut slots = self.slots.lock();
        // Held by the registry and the caller only: no transaction uses it, and
        // none can start (the session is being dropped).
        if Arc::strong_count(slot) <= 2 {
            slots.retain(|s| !Arc::ptr_eq(s, slot));
        }
    }

    /// Publishes a snapshot in `slot` and returns it (the reader's side of the
    /// handshake in the module doc).
    pub(crate) fn publish(&self, visible: &AtomicU64, slot: &Slot) -> Timestamp {
        loop {
            let v = visible.load(Ordering::SeqCst);
            slot.ts.store(v, Ordering::SeqCst);
            if self.horizon.load(Ordering::SeqCst) <= v {
                return v;
            }
        }
    }

    /// The oldest published snapshot (IDLE if none); prunes slots nobody holds.
    fn oldest(&self) -> Timestamp {
        let mut slots = self.slots.lock();
        slots.retain(|s| Arc::strong_count(s) > 1);
        slots
            .iter()
            .map(|s| s.ts.load(Ordering::SeqCst))
            .min()
            .unwrap_or(IDLE)
    }

    /// The snapshots published now and the oldest of them (InnoDB's "read
    /// views open"; SHOW ENGINE INNODB STATUS). Prunes nothing.
    pub(crate) fn open_snapshots(&self) -> (u64, Option<Timestamp>) {
        let slots = self.slots.lock();
        let open = slots
            .iter()
            .map(|s| s.ts.load(Ordering::Relaxed))
            .filter(|&ts| ts != IDLE);
        open.fold((0, None), |(n, oldest), ts| {
            (n + 1, Some(oldest.map_or(ts, |o: Timestamp| o.min(ts))))
        })
    }

    /// Number of registered slots (tests).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.slots.lock().len()
    }
}

/// What one GC run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GcStats {
    /// The watermark: every version that ended at or before it was collectable.
    pub watermark: Timestamp,
    /// History entries (old versions) deleted.
    pub history_removed: u64,
    /// Ended index entries deleted.
    pub index_removed: u64,
    /// Rows tombstones deleted.
    pub tombstones_removed: u64,
    /// Whether this pass scanned the keyspaces whole (a sweep) instead of
    /// reading the garbage queue; see the module doc of `gc.rs`.
    pub swept: bool,
}

/// An Index entry that ended at or before `w`.
fn is_index_garbage(v: &[u8], w: Timestamp) -> Result<bool> {
    Ok(decode_index_value(v)?.0 <= w)
}

/// A Rows tombstone written at or before `w`.
fn is_tombstone_garbage(v: &[u8], w: Timestamp) -> Result<bool> {
    let version = decode_version(v)?;
    Ok(version.row.is_none() && version.ts <= w)
}

impl TxnManager {
    /// Runs one garbage collection pass now (the background thread calls this every
    /// `gc_interval`). See the module doc of `gc.rs` for what is deleted and why it
    /// is safe.
    pub fn run_gc_once(&self) -> Result<GcStats> {
        let w0 = self.visible.load(Ordering::SeqCst);
        self.snapshots.horizon.fetch_max(w0, Ordering::SeqCst);
        let w = w0.min(self.snapshots.oldest());
        let mut stats = GcStats {
            watermark: w,
            ..GcStats::default()
        };
        if w == 0 {
            return Ok(stats);
        }
        let tombstones = {
            let mut last = self.last_tombstone_pass.lock();
            let due = last.is_none_or(|t| t.elapsed() >= self.config.gc_tombstone_interval);
            if due {
                *last = Some(std::time::Instant::now());
            }
            due
        };
        // Taken before the sweep: garbage queued while it runs is the queue's.
        let queued = self.garbage.pop_through(w, tombstones);
        if let Some(covered) = self.garbage.sweep_due(w) {
            // The sweep collects everything at or below `w`, the popped keys too.
            stats.swept = true;
            self.sweep(w, &mut stats)?;
            self.garbage.swept(covered);
        } else {
            if let Err(e) = self.collect_queued(w, queued, &mut stats) {
                // The popped keys are gone from the queue: leave them to a sweep.
                self.garbage.need_sweep(w);
                return Err(e);
            }
        }
        if stats.history_removed + stats.index_removed + stats.tombstones_removed > 0 {
            tracing::debug!(?stats, "gc pass");
        }
        Ok(stats)
    }

    /// Deletes the garbage of every keyspace by scanning it whole.
    fn sweep(&self, w: Timestamp, stats: &mut GcStats) -> Result<()> {
        stats.history_removed += self.history.retain(w, None);
        stats.history_removed +=
            self.gc_keyspace(
                Keyspace::History,
                false,
                &|v| Ok(decode_version(v)?.ts <= w),
            )?;
        stats.index_removed +=
            self.gc_keyspace(Keyspace::Index, true, &|v| is_index_garbage(v, w))?;
        stats.tombstones_removed +=
            self.gc_keyspace(Keyspace::Rows, true, &|v| is_tombstone_garbage(v, w))?;
        Ok(())
    }

    /// Deletes queued garbage: History keys as they are (immutable), Index and
    /// Rows keys if the garbage test still holds under the commit mutex.
    fn collect_queued(
        &self,
        w: Timestamp,
        keys: Vec<Vec<GarbageKey>>,
        stats: &mut GcStats,
    ) -> Result<()> {
        let mut history = WriteBatch::new();
        let mut rechecked: Vec<GarbageKey> = Vec::new();
        for (ks, key) in keys.into_iter().flatten() {
            if ks == Keyspace::History {
                let (rows_key, begin_ts) = split_history_key(&key)?;
                if self.history.remove(rows_key, begin_ts) {
                    stats.history_removed += 1;
                    continue;
                }
                history.delete(ks, key);
                if history.len() >= GC_BATCH {
                    stats.history_removed += history.len() as u64;
                    self.storage.write(std::mem::take(&mut history), false)?;
                }
            } else {
                rechecked.push((ks, key));
            }
        }
        if !history.is_empty() {
            stats.history_removed += history.len() as u64;
            self.storage.write(history, false)?;
        }
        for chunk in rechecked.chunks(GC_BATCH) {
            let mut batch = WriteBatch::new();
            let _commits = self.commit_mutex.lock();
            for (ks, key) in chunk {
                let Some(v) = self.storage.get(*ks, key)? else {
                    continue;
                };
                let garbage = match ks {
                    Keyspace::Index => is_index_garbage(&v, w)?,
                    _ => is_tombstone_garbage(&v, w)?,
                };
                if garbage {
                    match ks {
                        Keyspace::Index => stats.index_removed += 1,
                        _ => stats.tombstones_removed += 1,
                    }
                    batch.delete(*ks, key.clone());
                }
            }
            if !batch.is_empty() {
                self.storage.write(batch, false)?;
            }
        }
        Ok(())
    }

    /// Deletes every entry of `keyspace` whose value `is_garbage`; with `recheck`,
    /// only if the value is unchanged when re-read under the commit mutex.
    fn gc_keyspace(
        &self,
        keyspace: Keyspace,
        recheck: bool,
        is_garbage: &dyn Fn(&[u8]) -> Result<bool>,
    ) -> Result<u64> {
        let mut range = KeyRange::all();
        let mut removed = 0;
        loop {
            let mut candidates: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
            let mut visited = 0usize;
            let mut resume: Option<Vec<u8>> = None;
            let mut err = None;
            self.storage
                .scan_bulk(keyspace, &range, false, &mut |k, v| {
                    visited += 1;
                    match is_garbage(v) {
                        Ok(true) => candidates
                            .push((k.to_vec(), if recheck { v.to_vec() } else { Vec::new() })),
                        Ok(false) => {}
                        Err(e) => {
                            err = Some(e);
                            return ControlFlow::Break(());
                        }
                    }
                    if candidates.len() >= GC_BATCH || visited >= SCAN_BUDGET {
                        resume = Some(k.to_vec());
                        return ControlFlow::Break(());
                    }
                    ControlFlow::Continue(())
                })?;
            if let Some(e) = err {
                return Err(e);
            }
            if !candidates.is_empty() {
                removed += self.delete_garbage(keyspace, recheck, candidates)?;
            }
            match resume {
                Some(k) => range.start = Bound::Excluded(k),
                None => return Ok(removed),
            }
        }
    }

    fn delete_garbage(
        &self,
        keyspace: Keyspace,
        recheck: bool,
        candidates: Vec<(Vec<u8>, Vec<u8>)>,
    ) -> Result<u64> {
        let mut batch = WriteBatch::new();
        if !recheck {
            for (k, _) in candidates {
                batch.delete(keyspace, k);
            }
            let n = batch.len() as u64;
            self.storage.write(batch, false)?;
            return Ok(n);
        }
        let _commits = self.commit_mutex.lock();
        for (k, seen) in candidates {
            if self.storage.get(keyspace, &k)?.as_deref() == Some(seen.as_slice()) {
                batch.delete(keyspace, k);
            }
        }
        let n = batch.len() as u64;
        if n > 0 {
            self.storage.write(batch, false)?;
        }
        Ok(n)
    }

    /// Starts the GC thread and, with periodic durability, the sync thread.
    pub(crate) fn start_background(self: &Arc<Self>) -> Result<()> {
        if !self.config.gc_interval.is_zero() {
            self.background.spawn(
                "canyon-gc",
                self.config.gc_interval,
                Arc::downgrade(self),
                |m| {
                    if let Err(e) = m.run_gc_once() {
                        tracing::warn!(error = %e, "gc pass failed");
                    }
                },
            )?;
        }
        if let Durability::SyncEveryCommit = self.config.durability {
            crate::commit::GroupCommit::spawn_syncer(&self.group, Arc::downgrade(self))?;
        }
        if let Durability::SyncPeriodically { interval } = self.config.durability {
            self.background.spawn(
                "canyon-sync",
                interval.max(Duration::from_millis(1)),
                Arc::downgrade(self),
                TxnManager::periodic_sync,
            )?;
        }
        Ok(())
    }
}

/// The stop signal shared with the background threads. The threads hold only a
/// `Weak` on the manager, so dropping the last user handle drops the manager,
/// whose `Drop` calls [`Background::stop`].
#[derive(Debug)]
pub(crate) struct Background {
    stop: Arc<(Mutex<bool>, Condvar)>,
}

impl Background {
    pub(crate) fn new() -> Self {
        Background {
            stop: Arc::new((Mutex::new(false), Condvar::new())),
        }
    }

    /// Tells every background thread to exit (they are not joined: one of them may
    /// be the thread running this, having held the last handle).
    pub(crate) fn stop(&self) {
        *self.stop.0.lock() = true;
        self.stop.1.notify_all();
    }

    /// Runs `tick` every `interval` on a new named thread until stopped.
    fn spawn(
        &self,
        name: &str,
        interval: Duration,
        mgr: Weak<TxnManager>,
        tick: fn(&TxnManager),
    ) -> Result<()> {
        let stop = Arc::clone(&self.stop);
        std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || loop {
                {
                    let mut stopped = stop.0.lock();
                    if !*stopped {
                        stop.1.wait_for(&mut stopped, interval);
                    }
                    if *stopped {
                        return;
                    }
                }
                let Some(m) = mgr.upgrade() else { return };
                tick(&m);
            })
            .map(|_| ())
            .map_err(|e| Error::Io(format!("cannot start the {name} thread: {e}")))
    }
}

impl TxnManager {
    /// Deletes every stored key of a dropped (or truncated) table: its rows, old
    /// versions and the entries of `indexes`. The caller (DROP / TRUNCATE) has
    /// already removed the table from the catalog, so no new statement reaches
    /// these keys; transactions that still hold the old definition see the rows
    /// disappear, as with MySQL's DROP without metadata locks.
    pub fn purge_table(&self, table: TableId, indexes: &[IndexId]) -> Result<()> {
        let tid = table.to_be_bytes();
        self.purge_prefix(Keyspace::Rows, &tid)?;
        // After the purge, so that a fill from a read that raced it is dropped
        // (the invariant in row_cache.rs, case 3).
        self.row_cache.remove_table(table);
        self.dead_runs.forget(table);
        self.purge_prefix(Keyspace::History, &tid)?;
        self.history.retain(0, Some(table));
        for ix in indexes {
            self.purge_prefix(Keyspace::Index, &ix.to_be_bytes())?;
        }
        Ok(())
    }

    /// Deletes every entry of one index (DROP INDEX).
    pub fn purge_index(&self, index: IndexId) -> Result<()> {
        self.purge_prefix(Keyspace::Index, &index.to_be_bytes())
    }

    fn purge_prefix(&self, ks: Keyspace, prefix: &[u8]) -> Result<()> {
        const CHUNK: usize = 10_000;
        loop {
            let mut batch = WriteBatch::new();
            self.storage
                .scan(ks, &KeyRange::prefix(prefix), false, &mut |k, _| {
                    batch.delete(ks, k.to_vec());
                    if batch.len() >= CHUNK {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    }
                })?;
            let full = batch.len() >= CHUNK;
            if !batch.is_empty() {
                self.storage.write(batch, false)?;
            }
            if !full {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{IsolationLevel, ReadMode, TxnConfig, TxnManager};
    use canyon_storage::MemoryStorage;
    use std::sync::atomic::Ordering;
    use std::sync::Arc;
    use std::time::Duration;

    fn open() -> Arc<TxnManager> {
        let config = TxnConfig {
            gc_interval: Duration::ZERO,
            ..TxnConfig::default()
        };
        TxnManager::open(Arc::new(MemoryStorage::new()), config).unwrap()
    }

    fn commit_row(mgr: &Arc<TxnManager>, v: &[u8]) {
        let s = mgr.session();
        let mut tx = s.begin(IsolationLevel::RepeatableRead);
        tx.lock(b"k").unwrap();
        tx.put(1, b"k".to_vec(), v.to_vec(), vec![], vec![]);
        tx.commit().unwrap();
    }

    #[test]
    fn slots_live_as_long_as_sessions_or_their_transactions() {
        let mgr = open();
        assert_eq!(mgr.snapshots.len(), 0);
        let s = mgr.session();
        assert_eq!(mgr.snapshots.len(), 1);
        drop(s);
        assert_eq!(mgr.snapshots.len(), 0);

        // A transaction that outlives its session keeps its snapshot protected.
        commit_row(&mgr, b"v1");
        let s = mgr.session();
        let mut tx = s.begin(IsolationLevel::RepeatableRead);
        assert_eq!(
            tx.get(1, b"k", ReadMode::Snapshot).unwrap(),
            Some(b"v1".to_vec())
        );
        drop(s);
        assert_eq!(mgr.snapshots.len(), 1);
        commit_row(&mgr, b"v2");
        assert_eq!(mgr.run_gc_once().unwrap().watermark, 1);
        assert_eq!(
            tx.get(1, b"k", ReadMode::Snapshot).unwrap(),
            Some(b"v1".to_vec())
        );
        tx.commit().unwrap();
        assert_eq!(mgr.run_gc_once().unwrap().watermark, 2);
        assert_eq!(mgr.snapshots.len(), 0, "pruned once nobody holds it");
    }

    #[test]
    fn a_second_concurrent_transaction_of_a_session_gets_its_own_slot() {
        let mgr = open();
        commit_row(&mgr, b"v1");
        let s = mgr.session();
        let mut a = s.begin(IsolationLevel::RepeatableRead);
        let mut b = s.begin(IsolationLevel::ReadCommitted);
        assert_eq!(mgr.snapshots.len(), 2);
        a.snapshot_ts().unwrap();
        b.snapshot_ts().unwrap();
        commit_row(&mgr, b"v2");
        b.begin_statement(); // RC: b's old snapshot is released, a's is not
        assert_eq!(mgr.run_gc_once().unwrap().watermark, 1);
        b.commit().unwrap();
        a.commit().unwrap();
        assert!(!s.slot.in_use.load(Ordering::SeqCst));
        assert_eq!(mgr.run_gc_once().unwrap().watermark, 2);
        assert_eq!(
            mgr.snapshots.len(),
            1,
            "only the session's own slot is left"
        );
    }

    #[test]
    fn publish_never_returns_below_the_gc_horizon() {
        let mgr = open();
        commit_row(&mgr, b"v1");
        commit_row(&mgr, b"v2");
        mgr.run_gc_once().unwrap();
        let s = mgr.session();
        let ts = mgr.snapshots.publish(&mgr.visible, &s.slot);
        assert!(ts >= mgr.snapshots.horizon.load(Ordering::SeqCst));
        assert_eq!(s.slot.ts.load(Ordering::SeqCst), ts);
    }
}
