//! The change log: one record per logged commit, written in that commit's
//! own batch, in commit order.
//!
//! # Why in the commit batch
//!
//! MySQL keeps its binary log and InnoDB's redo log apart and joins them
//! with a two-phase commit (prepare in InnoDB, write and sync the binlog,
//! commit in InnoDB): two syncs per group, and a recovery that must
//! reconcile two logs. Canyon's commit is already one atomic storage batch
//! (commit rule 1), so the change record is simply one more put in it. After
//! any crash the log and the data agree: a commit is in both or in neither,
//! and no second sync is paid.
//!
//! # What this layer knows
//!
//! Nothing of the record's contents: the SQL layer encodes a transaction's
//! row changes (as binary-log events) into an opaque payload and says how
//! many bytes of log it occupies ([`LogEntry::len`], the size of its events
//! as served). This layer assigns, under the commit mutex and so in commit
//! order:
//!
//! - `seq`: the record's key, gap-free over every record;
//! - `number`: gap-free over the *counted* records only (transactions: the
//!   GTID sequence number), 0 for a record that is not counted (a marker the
//!   SQL layer writes, such as a log rotation);
//! - `offset`: the sum of the `len` of every record before it (the SQL layer
//!   maps offsets to binary-log file positions).
//!
//! ```text
//! Log   seq u64                   -> ts u64 ++ number u64 ++ offset u64 ++ len u64
//!                                    ++ wall_us u64 ++ flags u8 ++ payload
//! Meta  "txn/log_head"            -> next_seq u64 ++ next_number u64 ++ next_offset u64
//! Meta  "txn/log_first"           -> the first seq not purged (absent: 1)
//! ```
//!
//! The head is written in every batch that appends a record, so it survives
//! even when every record has been purged.
//!
//! # Invariants
//!
//! 1. A record is in storage only with the commit it describes (same batch).
//! 2. `seq`, `number` and `offset` grow in commit-timestamp order without gaps
//!    (assigned under the commit mutex, which also orders the timestamps).
//! 3. A reader sees a record only once its commit is visible (`ts <=
//!    visible`): a replica is never sent a transaction that a crash of this
//!    server could still take back. Since records are in timestamp order, the
//!    visible records are a prefix of the log.

use crate::{Timestamp, TxnManager};
use canyon_common::{Error, Result};
use canyon_storage::{KeyRange, Keyspace, WriteBatch};
use parking_lot::Mutex;
use std::future::Future;
use std::ops::{Bound, ControlFlow};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll, Waker};

/// The Meta key of the log head (see the module doc).
pub(crate) const LOG_HEAD_KEY: &[u8] = b"txn/log_head";
/// The Meta key of the first record not purged.
pub(crate) const LOG_FIRST_KEY: &[u8] = b"txn/log_first";
/// The record header's length, before the payload.
const RECORD_HEADER: usize = 8 * 5 + 1;
/// Flag bit: the record is counted (has a `number`).
const FLAG_COUNTED: u8 = 1;

/// What a commit asks to be logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    /// The record's contents, opaque to this layer.
    pub payload: Vec<u8>,
    /// How many bytes of log the record occupies (advances `offset`).
    pub len: u64,
    /// Whether the record takes a `number` (a transaction does; a marker not).
    pub counted: bool,
}

/// A record as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRecord {
    /// Its key: gap-free over all records.
    pub seq: u64,
    /// Gap-free over counted records; 0 when not counted.
    pub number: u64,
    /// The sum of the lengths of all records before it.
    pub offset: u64,
    /// Its [`LogEntry::len`].
    pub len: u64,
    /// The commit timestamp it was written with.
    pub ts: Timestamp,
    /// Wall-clock time of the commit, microseconds since the Unix epoch.
    pub wall_us: u64,
    /// [`LogEntry::payload`].
    pub payload: Vec<u8>,
}

/// Where the next record goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogHead {
    /// The next record's `seq`.
    pub next_seq: u64,
    /// The next counted record's `number`.
    pub next_number: u64,
    /// The next record's `offset`.
    pub next_offset: u64,
}

impl LogHead {
    const EMPTY: LogHead = LogHead {
        next_seq: 1,
        next_number: 1,
        next_offset: 0,
    };

    fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(24);
        v.extend_from_slice(&self.next_seq.to_be_bytes());
        v.extend_from_slice(&self.next_number.to_be_bytes());
        v.extend_from_slice(&self.next_offset.to_be_bytes());
        v
    }

    fn decode(v: &[u8]) -> Result<LogHead> {
        if v.len() != 24 {
            return Err(Error::Corrupt(format!(
                "log head of {} bytes, expected 24",
                v.len()
            )));
        }
        Ok(LogHead {
            next_seq: u64_at(v, 0),
            next_number: u64_at(v, 8),
            next_offset: u64_at(v, 16),
        })
    }
}

fn u64_at(v: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&v[at..at + 8]);
    u64::from_be_bytes(b)
}

fn decode_record(key: &[u8], v: &[u8]) -> Result<LogRecord> {
    if key.len() != 8 || v.len() < RECORD_HEADER {
        return Err(Error::Corrupt(format!(
            "change log record with a {}-byte key and {} bytes",
            key.len(),
            v.len()
        )));
    }
    let counted = v[40] & FLAG_COUNTED != 0;
    Ok(LogRecord {
        seq: u64_at(key, 0),
        ts: u64_at(v, 0),
        number: if counted { u64_at(v, 8) } else { 0 },
        offset: u64_at(v, 16),
        len: u64_at(v, 24),
        wall_us: u64_at(v, 32),
        payload: v[RECORD_HEADER..].to_vec(),
    })
}

fn wall_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// The manager's change-log state.
#[derive(Debug)]
pub(crate) struct ChangeLog {
    /// Changed only under the commit mutex, after a successful write.
    head: Mutex<LogHead>,
    /// The commit timestamp of the newest record (0: none).
    last_ts: AtomicU64,
    /// The first seq not purged.
    first_seq: AtomicU64,
    /// Readers waiting for the next record ([`TxnManager::log_changed`]).
    waiters: Mutex<Vec<Waker>>,
    /// `waiters` is not empty: the commit path's only cost when nobody waits
    /// is loading this.
    waiting: AtomicBool,
}

impl ChangeLog {
    /// Recovers the head from storage.
    pub(crate) fn open(storage: &dyn canyon_storage::Storage) -> Result<ChangeLog> {
        let head = match storage.get(Keyspace::Meta, LOG_HEAD_KEY)? {
            Some(v) => LogHead::decode(&v)?,
            None => LogHead::EMPTY,
        };
        let first_seq = match storage.get(Keyspace::Meta, LOG_FIRST_KEY)? {
            Some(v) if v.len() == 8 => u64_at(&v, 0),
            Some(v) => {
                return Err(Error::Corrupt(format!(
                    "log_first of {} bytes, expected 8",
                    v.len()
                )))
            }
            None => 1,
        };
        let last_ts = if head.next_seq > first_seq {
            let key = (head.next_seq - 1).to_be_bytes();
            match storage.get(Keyspace::Log, &key)? {
                Some(v) => decode_record(&key, &v)?.ts,
                None => {
                    return Err(Error::Corrupt(format!(
                        "change log record {} (before the head) is missing",
                        head.next_seq - 1
                    )))
                }
            }
        } else {
            0
        };
        Ok(ChangeLog {
            head: Mutex::new(head),
            last_ts: AtomicU64::new(last_ts),
            first_seq: AtomicU64::new(first_seq),
            waiters: Mutex::new(Vec::new()),
            waiting: AtomicBool::new(false),
        })
    }

    /// Under the commit mutex: puts the record for `entry`, committed at `ts`,
    /// and the new head into `batch`; returns the head to publish once the
    /// batch is written ([`ChangeLog::appended`]).
    pub(crate) fn append(&self, batch: &mut WriteBatch, ts: Timestamp, entry: LogEntry) -> LogHead {
        let head = *self.head.lock();
        let mut v = Vec::with_capacity(RECORD_HEADER + entry.payload.len());
        v.extend_from_slice(&ts.to_be_bytes());
        v.extend_from_slice(&(if entry.counted { head.next_number } else { 0 }).to_be_bytes());
        v.extend_from_slice(&head.next_offset.to_be_bytes());
        v.extend_from_slice(&entry.len.to_be_bytes());
        v.extend_from_slice(&wall_us().to_be_bytes());
        v.push(if entry.counted { FLAG_COUNTED } else { 0 });
        v.extend_from_slice(&entry.payload);
        batch.put(Keyspace::Log, head.next_seq.to_be_bytes().to_vec(), v);
        let next = LogHead {
            next_seq: head.next_seq + 1,
            next_number: head.next_number + u64::from(entry.counted),
            next_offset: head.next_offset + entry.len,
        };
        batch.put(Keyspace::Meta, LOG_HEAD_KEY.to_vec(), next.encode());
        next
    }

    /// Under the commit mutex, after the batch [`ChangeLog::append`] filled
    /// is written.
    pub(crate) fn appended(&self, head: LogHead, ts: Timestamp) {
        *self.head.lock() = head;
        self.last_ts.store(ts, Ordering::SeqCst);
    }

    /// Wakes the readers waiting for a record, if any (called where `visible`
    /// moves; cheap when nobody waits).
    pub(crate) fn wake(&self) {
        if self.waiting.load(Ordering::Acquire) {
            let ws = {
                let mut w = self.waiters.lock();
                self.waiting.store(false, Ordering::Release);
                std::mem::take(&mut *w)
            };
            ws.into_iter().for_each(Waker::wake);
        }
    }
}

impl TxnManager {
    /// Where the next record goes (the last one written, visible or not, is
    /// just before it).
    pub fn log_head(&self) -> LogHead {
        *self.changelog.head.lock()
    }

    /// The first record not purged (equal to the head's `next_seq` when the
    /// log is empty).
    pub fn log_first_seq(&self) -> u64 {
        self.changelog.first_seq.load(Ordering::SeqCst)
    }

    /// Calls `f` with each visible record from `from_seq` on, in order, until
    /// it returns `false` (invariant 3: a record not yet visible ends the
    /// walk, and so does every one after it).
    pub fn read_log(&self, from_seq: u64, f: &mut dyn FnMut(LogRecord) -> bool) -> Result<()> {
        let go = |more: bool| {
            if more {
                ControlFlow::Continue(())
            } else {
                ControlFlow::Break(())
            }
        };
        let visible = self.visible.load(Ordering::Acquire);
        let range = KeyRange {
            start: Bound::Included(from_seq.max(1).to_be_bytes().to_vec()),
            end: Bound::Unbounded,
        };
        let mut out = Ok(());
        self.storage
            .scan(Keyspace::Log, &range, false, &mut |k, v| {
                go(match decode_record(k, v) {
                    Ok(r) if r.ts <= visible => f(r),
                    Ok(_) => false,
                    Err(e) => {
                        out = Err(e);
                        false
                    }
                })
            })?;
        out
    }

    /// The commit timestamp of the last record appended (0 before any).
    pub fn log_last_ts(&self) -> Timestamp {
        self.changelog.last_ts.load(Ordering::SeqCst)
    }

    /// Completes once a record at or after `seq` may be visible (a reader
    /// that has read everything before `seq` waits here; it rechecks with
    /// [`TxnManager::read_log`], so a spurious wake costs one empty read).
    pub fn log_changed(&self, seq: u64) -> impl Future<Output = ()> + '_ {
        std::future::poll_fn(move |cx: &mut Context<'_>| {
            if self.log_visible_past(seq) {
                return Poll::Ready(());
            }
            {
                let mut w = self.changelog.waiters.lock();
                if !w.iter().any(|x| x.will_wake(cx.waker())) {
                    w.push(cx.waker().clone());
                }
                self.changelog.waiting.store(true, Ordering::Release);
            }
            // Re-check after registering: a wake between the first check and
            // the registration would otherwise be missed.
            if self.log_visible_past(seq) {
                return Poll::Ready(());
            }
            Poll::Pending
        })
    }

    fn log_visible_past(&self, seq: u64) -> bool {
        let head = self.log_head();
        head.next_seq > seq
            && self.changelog.last_ts.load(Ordering::SeqCst) <= self.visible.load(Ordering::Acquire)
    }

    /// Writes a record that describes no commit (a marker such as a log
    /// rotation) at the head, synced, in commit order with the commits
    /// around it. `build` is given the head the marker goes at and returns
    /// the entry and Meta records to write in the same batch (the SQL
    /// layer's index of its log files). Returns that head.
    pub fn append_log_marker(
        &self,
        build: &mut dyn FnMut(&LogHead) -> Result<(LogEntry, Vec<(Vec<u8>, Vec<u8>)>)>,
    ) -> Result<LogHead> {
        let _commit = self.commit_mutex.lock();
        if self.failed.load(Ordering::Acquire) {
            return Err(self.failure_error());
        }
        let ts = self.next_ts.load(Ordering::Relaxed);
        let at = self.log_head();
        let (entry, meta) = build(&at)?;
        let mut batch = WriteBatch::new();
        for (k, v) in meta {
            batch.put(Keyspace::Meta, k, v);
        }
        let head = self.changelog.append(&mut batch, ts, entry);
        if let Err(e) = self.storage.write(batch, true) {
            self.fail("write", &e);
            return Err(e);
        }
        self.changelog.appended(head, ts);
        drop(_commit);
        self.synced_through(ts);
        Ok(at)
    }

    /// Writes a counted record that describes no row change (a DDL
    /// statement, logged after the catalog change it describes) at a commit
    /// timestamp of its own, synced. Returns that timestamp.
    pub fn append_log_record(&self, entry: LogEntry) -> Result<Timestamp> {
        let commit = self.commit_mutex.lock();
        if self.failed.load(Ordering::Acquire) {
            return Err(self.failure_error());
        }
        let ts = self.next_ts.load(Ordering::Relaxed) + 1;
        let mut batch = WriteBatch::new();
        batch.put(
            Keyspace::Meta,
            crate::keys::LAST_TS_KEY.to_vec(),
            crate::keys::ts_value(ts),
        );
        let head = self.changelog.append(&mut batch, ts, entry);
        self.next_ts.store(ts, Ordering::SeqCst);
        if let Err(e) = self.storage.write(batch, true) {
            self.fail("write", &e);
            return Err(e);
        }
        self.changelog.appended(head, ts);
        self.last_written_ts.store(ts, Ordering::SeqCst);
        drop(commit);
        self.synced_through(ts);
        Ok(ts)
    }

    /// After a synced write at `ts`: every commit up to it is written (they
    /// took the commit mutex before) and durable (a sync makes the whole WAL
    /// before it durable), so `visible` may move to it (commit rule 5).
    fn synced_through(&self, ts: Timestamp) {
        self.visible.fetch_max(ts, Ordering::SeqCst);
        self.changelog.wake();
    }

    /// Removes every record before `before_seq` (clamped to the head): what
    /// PURGE BINARY LOGS and the log's retention do.
    pub fn purge_log(&self, before_seq: u64) -> Result<()> {
        let _commit = self.commit_mutex.lock();
        let before = before_seq.min(self.log_head().next_seq);
        let first = self.changelog.first_seq.load(Ordering::SeqCst);
        if before <= first {
            return Ok(());
        }
        let mut batch = WriteBatch::new();
        batch.put(
            Keyspace::Meta,
            LOG_FIRST_KEY.to_vec(),
            before.to_be_bytes().to_vec(),
        );
        self.storage.write(batch, true)?;
        self.changelog.first_seq.store(before, Ordering::SeqCst);
        drop(_commit);
        // Readers find the first record by seq, never by scanning from 0, so
        // the range delete may follow the marker without a lock.
        self.storage.delete_range(
            Keyspace::Log,
            &KeyRange {
                start: Bound::Included(first.to_be_bytes().to_vec()),
                end: Bound::Excluded(before.to_be_bytes().to_vec()),
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{IsolationLevel, TxnConfig};
    use canyon_storage::{MemoryStorage, Storage};
    use std::sync::Arc;
    use std::time::Duration;

    fn open(storage: &Arc<MemoryStorage>) -> Arc<TxnManager> {
        TxnManager::open(
            Arc::clone(storage) as Arc<dyn Storage>,
            TxnConfig {
                gc_interval: Duration::ZERO,
                ..TxnConfig::default()
            },
        )
        .unwrap()
    }

    fn entry(text: &str, counted: bool) -> LogEntry {
        LogEntry {
            payload: text.as_bytes().to_vec(),
            len: text.len() as u64 * 10,
            counted,
        }
    }

    /// Commits a write of table 1 row `pk`, logging `log`.
    fn commit(mgr: &Arc<TxnManager>, pk: &[u8], log: Option<LogEntry>) {
        let s = mgr.session();
        let mut t = s.begin(IsolationLevel::RepeatableRead);
        t.lock(pk).unwrap();
        t.get_locked(1, pk).unwrap();
        t.put(1, pk.to_vec(), b"v".to_vec(), vec![], vec![]);
        t.set_log_entry(log);
        t.commit().unwrap();
    }

    fn all(mgr: &TxnManager, from: u64) -> Vec<LogRecord> {
        let mut out = Vec::new();
        mgr.read_log(from, &mut |r| {
            out.push(r);
            true
        })
        .unwrap();
        out
    }

    #[test]
    fn records_number_commits_in_order_and_survive_a_restart() {
        let storage = Arc::new(MemoryStorage::new());
        let mgr = open(&storage);
        commit(&mgr, b"a", Some(entry("one", true)));
        // A commit that asks for nothing is not logged and takes no number.
        commit(&mgr, b"b", None);
        let at = mgr
            .append_log_marker(&mut |_| {
                Ok((
                    entry("rotate", false),
                    vec![(b"x/m".to_vec(), b"1".to_vec())],
                ))
            })
            .unwrap();
        assert_eq!(at.next_seq, 2);
        assert_eq!(
            storage.get(Keyspace::Meta, b"x/m").unwrap().as_deref(),
            Some(&b"1"[..])
        );
        commit(&mgr, b"c", Some(entry("three", true)));
        let got = all(&mgr, 1);
        let summary: Vec<(u64, u64, u64, u64, &[u8])> = got
            .iter()
            .map(|r| (r.seq, r.number, r.offset, r.len, &r.payload[..]))
            .collect();
        assert_eq!(
            summary,
            vec![
                (1, 1, 0, 30, &b"one"[..]),
                (2, 0, 30, 60, &b"rotate"[..]),
                (3, 2, 90, 50, &b"three"[..]),
            ]
        );
        assert!(got.windows(2).all(|w| w[0].ts <= w[1].ts));
        assert_eq!(
            mgr.log_head(),
            LogHead {
                next_seq: 4,
                next_number: 3,
                next_offset: 140
            }
        );
        assert_eq!(all(&mgr, 3).len(), 1);
        drop(mgr);
        let mgr = open(&storage);
        assert_eq!(mgr.log_head().next_offset, 140);
        commit(&mgr, b"d", Some(entry("four", true)));
        let last = all(&mgr, 4);
        assert_eq!((last[0].seq, last[0].number, last[0].offset), (4, 3, 140));
    }

    #[test]
    fn an_xa_branch_logs_at_its_commit_even_after_a_restart() {
        let storage = Arc::new(MemoryStorage::new());
        let mgr = open(&storage);
        let xid = crate::Xid {
            format_id: 1,
            gtrid: b"g".to_vec(),
            bqual: vec![],
        };
        let claim = mgr.xa_start(xid.clone()).unwrap();
        let s = mgr.session();
        let mut t = s.begin(IsolationLevel::RepeatableRead);
        t.lock(b"x").unwrap();
        t.get_locked(1, b"x").unwrap();
        t.put(1, b"x".to_vec(), b"v".to_vec(), vec![], vec![]);
        t.set_log_entry(Some(entry("xa", true)));
        claim.prepare(t).unwrap();
        assert!(all(&mgr, 1).is_empty(), "prepared is not committed");
        drop(claim);
        drop(s);
        drop(mgr);
        let mgr = open(&storage);
        mgr.xa_finish_detached(&xid, true).unwrap();
        let got = all(&mgr, 1);
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].number, &got[0].payload[..]), (1, &b"xa"[..]));
    }

    #[test]
    fn purge_removes_the_front_and_keeps_the_head() {
        let storage = Arc::new(MemoryStorage::new());
        let mgr = open(&storage);
        for pk in [b"a", b"b", b"c"] {
            commit(&mgr, pk, Some(entry("t", true)));
        }
        mgr.purge_log(3).unwrap();
        assert_eq!(mgr.log_first_seq(), 3);
        assert_eq!(all(&mgr, 1).iter().map(|r| r.seq).collect::<Vec<_>>(), [3]);
        // Purging past the head stops at it; the head and numbering go on.
        mgr.purge_log(100).unwrap();
        assert!(all(&mgr, 1).is_empty());
        drop(mgr);
        let mgr = open(&storage);
        assert_eq!(mgr.log_first_seq(), 4);
        commit(&mgr, b"d", Some(entry("t", true)));
        let got = all(&mgr, 1);
        assert_eq!((got[0].seq, got[0].number), (4, 4));
    }

    #[test]
    fn a_waiting_reader_is_woken_by_the_next_record() {
        let storage = Arc::new(MemoryStorage::new());
        let mgr = open(&storage);
        let waker_mgr = Arc::clone(&mgr);
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            commit(&waker_mgr, b"a", Some(entry("t", true)));
        });
        // A minimal executor: park until woken.
        let mut fut = Box::pin(mgr.log_changed(1));
        let thread = std::thread::current();
        let waker = Waker::from(Arc::new(ThreadWaker(thread)));
        let mut cx = Context::from_waker(&waker);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while fut.as_mut().poll(&mut cx).is_pending() {
            assert!(std::time::Instant::now() < deadline, "never woken");
            std::thread::park_timeout(Duration::from_secs(1));
        }
        writer.join().unwrap();
        assert_eq!(all(&mgr, 1).len(), 1);
    }

    #[test]
    fn the_journal_follows_statement_and_savepoint_rollbacks() {
        let storage = Arc::new(MemoryStorage::new());
        let mgr = open(&storage);
        let s = mgr.session();
        let mut t = s.begin(IsolationLevel::RepeatableRead);
        t.journal_push(b"off");
        assert!(t.take_journal().is_empty(), "nothing recorded while off");
        t.enable_journal();
        t.begin_statement();
        t.journal_push(b"s1");
        t.begin_statement();
        t.journal_push(b"s2-a");
        t.journal_push(b"");
        t.rollback_statement();
        t.begin_statement();
        t.set_savepoint("p");
        t.journal_push(b"s3");
        assert!(t.rollback_to_savepoint("P"));
        t.begin_statement();
        t.journal_push(b"s4");
        assert_eq!(t.take_journal(), vec![b"s1".to_vec(), b"s4".to_vec()]);
        assert!(t.take_journal().is_empty());
    }

    struct ThreadWaker(std::thread::Thread);
    impl std::task::Wake for ThreadWaker {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
}
