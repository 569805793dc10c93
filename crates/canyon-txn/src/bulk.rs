//! Bulk loads: a statement's rows into an empty table as sorted files
//! ingested at commit, instead of a write buffer (issue 29; LOAD DATA).
//!
//! # Why
//!
//! A buffered write costs, per row, a write-buffer entry, a row lock, an
//! undo record, a commit-batch copy and a memtable insert, all held until
//! the commit: a load of ten million rows holds them all in memory at once
//! (about 1.5 KiB a row) and writes every row twice (WAL, then the
//! memtable's flush). For a table that is *empty* and closed to other
//! writers, none of that machinery is needed: nobody else can see, lock or
//! conflict with the rows, and there are no old versions to keep.
//!
//! # What happens
//!
//! 1. [`Transaction::begin_bulk`] (the SQL layer decides eligibility: one
//!    statement in its own transaction, no triggers, no foreign keys, no
//!    UNIQUE secondary index, ...). It closes the **writer gate** of the
//!    table (a lock-key prefix, opaque here): from now on a
//!    [`Transaction::lock`] on a key with that prefix, once granted, gives
//!    the lock back and *waits* until the gate opens (up to the lock wait
//!    timeout, ending early on KILL), then takes it again. Every writer locks
//!    every row it writes before reading it (commit rule 2), so no writer
//!    passes the gate — except a transaction that holds a lock of the table
//!    already (taken before the gate closed), which the load is about to
//!    wait for anyway. Then it waits until no lock with the prefix is held
//!    (transactions that wrote the table before the gate closed must end);
//!    if that takes longer than the lock wait timeout, the gate opens again
//!    and the caller takes the ordinary path. Then it checks, with one seek
//!    per keyspace, that the table has no key at all in Rows and in each of
//!    its indexes (not even a tombstone or an ended entry): otherwise the
//!    ordinary path too. Last it writes, synced, an **intent record** in
//!    Meta (`txn/bulk/<table>`: the key prefixes the load may fill).
//! 2. [`Transaction::bulk_put`] appends `(Rows key, row)` and each
//!    `(Index key, pk length)` to in-memory runs, each entry tagged with its
//!    sequence number in the statement. Past [`RUN_BUDGET`] bytes both runs
//!    are sorted by `(key, seq)` and spilled to files under the storage's
//!    scratch directory: memory stays bounded, whatever the file's size.
//! 3. [`Transaction::bulk_merge`] k-way merges the runs into sorted files for
//!    the storage ([`canyon_storage::Storage::sorted_file_writer`]: SST files
//!    on RocksDB). Equal Rows keys are duplicates of the primary key: the
//!    first in statement order wins, each later one is reported to the
//!    caller (who fails the statement, or counts a warning under IGNORE) and
//!    its index entries are left out of the Index file. The Rows values
//!    carry a commit timestamp guessed ahead of time, `T = next_ts +`
//!    [`TS_MARGIN`].
//! 4. The commit ([`TxnManager::commit_bulk`]), under the commit mutex:
//!    if other commits used up the margin meanwhile (`next_ts >= T`), the
//!    Rows file is written again with a new guess, outside the mutex. Else
//!    the files are ingested, `next_ts` jumps to `T` (timestamps need not be
//!    dense: every rule compares them, none counts them), and one batch
//!    writes `txn/last_ts = T` and deletes the intent record — the **commit
//!    point**. Then the row cache forgets the table, `last_written_ts = T`,
//!    and the commit becomes durable and visible as any commit does (the
//!    group commit's sync covers the batch; the ingested files are durable
//!    when ingestion returns). The gate opens when the transaction ends.
//!
//! # Why it keeps the guarantees
//!
//! - **Snapshots**: every ingested version carries `T`, above every
//!   snapshot taken before the commit becomes visible; such a snapshot finds
//!   `commit_ts > S`, no older version, so no row — as the table was. Index
//!   entries are live (`end_ts = u64::MAX`) and are only candidates: the
//!   scan fetches the row version and finds none.
//! - **Atomicity and crashes**: ingestion is not atomic with the WAL, nor
//!   across column families. The intent record makes it so: it is durable
//!   before any file is ingested and is deleted in the very batch that
//!   writes `last_ts = T`. [`TxnManager::open`] finds an intent record only
//!   when that batch did not survive; it then deletes every key under the
//!   recorded prefixes (the table was empty and gated, so they are all the
//!   load's) and the record. A load that fails before its commit point
//!   (duplicate in strict mode, KILL, an error) deletes its files and its
//!   intent record; nothing was ingested.
//! - **Other writers** cannot write the table from the gate's closing to
//!   the end of the transaction, so the ingested files overwrite nothing and
//!   need no History copies; the duplicate check inside the file is the
//!   merge's.
//!
//! # Not implemented
//!
//! - Unique secondary indexes (the SQL layer takes the ordinary path): the
//!   merge would find their duplicates, but a row skipped for one must also
//!   leave Rows and the other indexes, which needs a second pass.
//! - The statement cannot read its own rows (no SET subquery over the
//!   loaded table sees them; the SQL layer's eligibility excludes nothing
//!   for it).
//! - DDL that purges the table (DROP, TRUNCATE) while a load runs leaves
//!   the ingested keys behind as orphans of a dropped table id.

use crate::keys::{self, index_value};
use crate::mvcc::{MgrHandle, Transaction};
use crate::{IndexId, TableId, Timestamp, TxnManager};
use canyon_common::{Error, Result};
use canyon_storage::{KeyRange, Keyspace, WriteBatch};
use parking_lot::{Condvar, Mutex};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{BufReader, BufWriter, Read, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Bytes of in-memory runs (Rows and Index together) before they are sorted
/// and spilled to files.
pub const RUN_BUDGET: usize = 64 << 20;

/// How far ahead of `next_ts` a bulk load guesses its commit timestamp.
pub(crate) const TS_MARGIN: u64 = 1 << 24;

/// Meta key prefix of the intent records (`txn/bulk/` ++ table u32 BE).
pub(crate) const INTENT_PREFIX: &[u8] = b"txn/bulk/";

/// Per-entry bytes charged to the budget besides key and value.
const ENTRY_OVERHEAD: usize = 48;

/// Source of unique scratch directory names within the process.
static NEXT_LOAD: AtomicU64 = AtomicU64::new(1);

/// The writer gates of the tables being bulk loaded (see the module doc).
#[derive(Debug, Default)]
pub(crate) struct BulkGate {
    /// Bulk loads committed since the manager opened.
    committed: AtomicU64,
    /// How many gates are closed: one load when none is, for every lock.
    active: AtomicUsize,
    /// The lock-key prefixes of the closed gates.
    closed: Mutex<Vec<Vec<u8>>>,
    /// Waiters for a gate to open.
    cv: Condvar,
}

/// How often a gated writer checks its interrupt flag.
const GATE_POLL: Duration = Duration::from_millis(50);

impl BulkGate {
    /// Whether `key` is behind a closed gate, for a transaction holding the
    /// locks `held`. One that holds a lock of the table already passes: it
    /// locked before the gate closed, and the load waits for it to end
    /// (stopping it at the gate would only make both wait out the timeout).
    pub(crate) fn gated(&self, key: &[u8], held: &crate::mvcc::HeldLocks) -> bool {
        if self.active.load(Ordering::SeqCst) == 0 {
            return false;
        }
        let closed = self.closed.lock();
        closed
            .iter()
            .any(|p| key.starts_with(p) && !held.keys().any(|h| h.starts_with(p)))
    }

    fn close(&self, prefix: &[u8]) {
        let mut c = self.closed.lock();
        c.push(prefix.to_vec());
        self.active.fetch_add(1, Ordering::SeqCst);
    }

    fn open(&self, prefix: &[u8]) {
        let mut c = self.closed.lock();
        if let Some(at) = c.iter().position(|p| p == prefix) {
            c.swap_remove(at);
            self.active.fetch_sub(1, Ordering::SeqCst);
        }
        self.cv.notify_all();
    }

    /// Waits until `key` is not gated: `LockWaitTimeout` past `timeout`,
    /// `Interrupted` once `interrupt` is non-zero.
    pub(crate) fn wait(
        &self,
        key: &[u8],
        timeout: Duration,
        interrupt: Option<&std::sync::atomic::AtomicU32>,
    ) -> Result<()> {
        let deadline = Instant::now().checked_add(timeout);
        let mut c = self.closed.lock();
        loop {
            if !c.iter().any(|p| key.starts_with(p)) {
                return Ok(());
            }
            if interrupt.is_some_and(|f| f.load(Ordering::Relaxed) != 0) {
                return Err(Error::Interrupted);
            }
            let now = Instant::now();
            let step = match deadline {
                Some(d) if d <= now => return Err(Error::LockWaitTimeout),
                Some(d) => (d - now).min(GATE_POLL),
                None => GATE_POLL,
            };
            self.cv.wait_for(&mut c, step);
        }
    }
}

/// One entry of a run: key and value in one allocation, and the sequence
/// number of the row it came from.
struct Entry {
    data: Vec<u8>,
    key_len: u32,
    seq: u64,
}

impl Entry {
    fn key(&self) -> &[u8] {
        &self.data[..self.key_len as usize]
    }
    fn value(&self) -> &[u8] {
        &self.data[self.key_len as usize..]
    }
}

/// The runs of one keyspace: the in-memory one and those spilled.
#[derive(Default)]
struct Runs {
    mem: Vec<Entry>,
    files: Vec<PathBuf>,
}

impl Runs {
    /// Sorts the in-memory run and writes it to a file in `dir`.
    fn spill(&mut self, dir: &Path, name: &str) -> Result<()> {
        if self.mem.is_empty() {
            return Ok(());
        }
        self.mem
            .sort_unstable_by(|a, b| a.key().cmp(b.key()).then(a.seq.cmp(&b.seq)));
        let path = dir.join(format!("{name}-{}.run", self.files.len()));
        let f = std::fs::File::create(&path).map_err(|e| io_err("creating", &path, e))?;
        let mut w = BufWriter::with_capacity(1 << 20, f);
        for e in self.mem.drain(..) {
            let r = (|| -> std::io::Result<()> {
                w.write_all(&e.key_len.to_le_bytes())?;
                w.write_all(&(e.data.len() as u32).to_le_bytes())?;
                w.write_all(&e.seq.to_le_bytes())?;
                w.write_all(&e.data)
            })();
            r.map_err(|e| io_err("writing", &path, e))?;
        }
        w.flush().map_err(|e| io_err("writing", &path, e))?;
        self.mem = Vec::new();
        self.files.push(path);
        Ok(())
    }

    /// A merge over the spilled runs (the in-memory one must be spilled).
    fn merge(&self) -> Result<Merge> {
        debug_assert!(self.mem.is_empty());
        let mut m = Merge {
            readers: Vec::new(),
            heap: BinaryHeap::new(),
        };
        for path in &self.files {
            let f = std::fs::File::open(path).map_err(|e| io_err("opening", path, e))?;
            m.readers.push(RunReader {
                r: BufReader::with_capacity(256 << 10, f),
                path: path.clone(),
            });
            let at = m.readers.len() - 1;
            if let Some(e) = m.readers[at].next()? {
                m.heap.push(Reverse(Head(e, at)));
            }
        }
        Ok(m)
    }
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::Io(format!("{what} {}: {e}", path.display()))
}

/// A spilled run read back.
struct RunReader {
    r: BufReader<std::fs::File>,
    path: PathBuf,
}

impl RunReader {
    fn next(&mut self) -> Result<Option<Entry>> {
        let mut head = [0u8; 16];
        match self.r.read_exact(&mut head) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(io_err("reading", &self.path, e)),
        }
        let key_len = u32::from_le_bytes(head[..4].try_into().expect("4 bytes"));
        let len = u32::from_le_bytes(head[4..8].try_into().expect("4 bytes")) as usize;
        let seq = u64::from_le_bytes(head[8..].try_into().expect("8 bytes"));
        let mut data = vec![0; len];
        self.r
            .read_exact(&mut data)
            .map_err(|e| io_err("reading", &self.path, e))?;
        Ok(Some(Entry { data, key_len, seq }))
    }
}

/// The smallest entry of one run, ordered by `(key, seq)`.
struct Head(Entry, usize);

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}
impl Eq for Head {}
impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Head {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0
            .key()
            .cmp(other.0.key())
            .then(self.0.seq.cmp(&other.0.seq))
    }
}

/// A k-way merge of sorted runs, yielding entries by `(key, seq)`.
struct Merge {
    readers: Vec<RunReader>,
    heap: BinaryHeap<Reverse<Head>>,
}

impl Merge {
    fn next(&mut self) -> Result<Option<Entry>> {
        let Some(Reverse(Head(e, at))) = self.heap.pop() else {
            return Ok(None);
        };
        if let Some(n) = self.readers[at].next()? {
            self.heap.push(Reverse(Head(n, at)));
        }
        Ok(Some(e))
    }
}

/// A bulk load in progress: the state a [`Transaction`] carries instead of
/// a write buffer (see the module doc).
pub(crate) struct BulkLoad {
    mgr: MgrHandle,
    table: TableId,
    gate: Vec<u8>,
    /// The key prefixes the load fills (and recovery would delete).
    ranges: Vec<(Keyspace, Vec<u8>)>,
    dir: PathBuf,
    rows: Runs,
    index: Runs,
    mem_bytes: usize,
    seq: u64,
    /// Sequence numbers of rows skipped as duplicates, ascending.
    losers: Vec<u64>,
    /// The merged files, once [`Transaction::bulk_merge`] ran.
    files: Vec<(Keyspace, PathBuf)>,
    /// The commit timestamp the Rows file carries.
    guess: Timestamp,
    merged: bool,
    /// The intent record is not this load's to delete any more: the commit
    /// point passed, or a failure left it for recovery.
    committed: bool,
    /// Bytes of in-memory runs before a spill ([`RUN_BUDGET`]; tests lower it).
    pub(crate) budget: usize,
}

impl std::fmt::Debug for BulkLoad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BulkLoad")
            .field("table", &self.table)
            .field("rows", &self.seq)
            .finish_non_exhaustive()
    }
}

fn intent_key(table: TableId) -> Vec<u8> {
    let mut k = INTENT_PREFIX.to_vec();
    k.extend_from_slice(&table.to_be_bytes());
    k
}

/// `(keyspace u8 ++ len u16 BE ++ prefix)*`: the intent record's value.
fn encode_ranges(ranges: &[(Keyspace, Vec<u8>)]) -> Vec<u8> {
    let mut v = Vec::new();
    for (ks, p) in ranges {
        v.push(match ks {
            Keyspace::Rows => 1,
            _ => 3,
        });
        v.extend_from_slice(&(p.len() as u16).to_be_bytes());
        v.extend_from_slice(p);
    }
    v
}

fn decode_ranges(mut v: &[u8]) -> Result<Vec<(Keyspace, Vec<u8>)>> {
    let mut out = Vec::new();
    while !v.is_empty() {
        if v.len() < 3 {
            return Err(Error::Corrupt("truncated bulk-load intent record".into()));
        }
        let ks = match v[0] {
            1 => Keyspace::Rows,
            3 => Keyspace::Index,
            b => {
                return Err(Error::Corrupt(format!(
                    "bulk-load intent record names keyspace {b}"
                )))
            }
        };
        let len = u16::from_be_bytes([v[1], v[2]]) as usize;
        let Some(p) = v.get(3..3 + len) else {
            return Err(Error::Corrupt("truncated bulk-load intent record".into()));
        };
        out.push((ks, p.to_vec()));
        v = &v[3 + len..];
    }
    Ok(out)
}

impl TxnManager {
    /// How many bulk loads committed since the manager opened (tests and
    /// benchmarks tell the two LOAD DATA paths apart by it).
    pub fn bulk_loads_committed(&self) -> u64 {
        self.bulk_gate.committed.load(Ordering::Relaxed)
    }

    /// Recovery of bulk loads that did not reach their commit point (see
    /// "Why it keeps the guarantees"): their keys and intent records go.
    pub(crate) fn recover_bulk_loads(&self) -> Result<()> {
        let mut intents = Vec::new();
        self.storage.scan(
            Keyspace::Meta,
            &KeyRange::prefix(INTENT_PREFIX),
            false,
            &mut |k, v| {
                intents.push((k.to_vec(), v.to_vec()));
                ControlFlow::Continue(())
            },
        )?;
        for (k, v) in intents {
            let ranges = decode_ranges(&v)?;
            tracing::warn!(
                intent = ?String::from_utf8_lossy(&k),
                "rolling back a bulk load that did not commit"
            );
            for (ks, prefix) in &ranges {
                self.storage.delete_range(*ks, &KeyRange::prefix(prefix))?;
            }
            let mut b = WriteBatch::new();
            b.delete(Keyspace::Meta, k);
            self.storage.write(b, true)?;
        }
        // Scratch files of loads of a process that has ended. The in-memory
        // storage's scratch directory is shared by every engine of this
        // process and by other processes running at the same time (test
        // binaries in parallel), so a directory is removed only when the
        // process its name carries is gone: neither this one nor a live one.
        if let Ok(dir) = std::fs::read_dir(self.storage.scratch_dir()) {
            for entry in dir.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let Some(pid) = name
                    .strip_prefix("load-")
                    .and_then(|rest| rest.split('-').next())
                    .and_then(|pid| pid.parse::<u32>().ok())
                else {
                    continue;
                };
                if pid != std::process::id() && !process_is_alive(pid) {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        Ok(())
    }

    /// Commits a merged bulk load (step 4 of the module doc); its timestamp.
    pub(crate) fn commit_bulk(
        &self,
        b: &mut BulkLoad,
        log: Option<crate::changelog::LogEntry>,
    ) -> Result<Timestamp> {
        debug_assert!(b.merged);
        loop {
            let commit = self.commit_mutex.lock();
            if self.failed.load(Ordering::Acquire) {
                return Err(self.failure_error());
            }
            let next = self.next_ts.load(Ordering::Relaxed);
            if next >= b.guess {
                drop(commit);
                b.guess = next + TS_MARGIN;
                b.write_rows_file()?;
                continue;
            }
            let ts = b.guess;
            // From here the storage may hold the load: recovery decides by
            // the intent record.
            if let Err(e) = self.storage.ingest(&b.files) {
                // Some files may be in: only recovery, which the failure
                // makes the next step (rule 7), may decide. The intent
                // record stays.
                b.committed = true;
                self.fail("bulk ingest", &e);
                return Err(e);
            }
            b.files.clear();
            let mut batch = WriteBatch::new();
            batch.put(
                Keyspace::Meta,
                keys::LAST_TS_KEY.to_vec(),
                keys::ts_value(ts),
            );
            batch.delete(Keyspace::Meta, intent_key(b.table));
            let log_head = log
                .clone()
                .map(|entry| self.changelog.append(&mut batch, ts, entry));
            self.next_ts.store(ts, Ordering::SeqCst);
            let written = self.storage.write(batch, false);
            b.committed = true;
            if let Err(e) = written {
                self.fail("write", &e);
                return Err(e);
            }
            if let Some(head) = log_head {
                self.changelog.appended(head, ts);
            }
            self.bulk_gate.committed.fetch_add(1, Ordering::Relaxed);
            self.row_cache.remove_table(b.table);
            self.last_written_ts.store(ts, Ordering::SeqCst);
            if let crate::Durability::SyncPeriodically { .. } = self.config.durability {
                self.visible.fetch_max(ts, Ordering::SeqCst);
                self.changelog.wake();
            }
            return Ok(ts);
        }
    }
}

impl BulkLoad {
    /// Writes the merged Rows file with the current guess, skipping losers.
    fn write_rows_file(&mut self) -> Result<()> {
        let path = self.dir.join("rows.sst");
        self.files.retain(|(ks, _)| *ks != Keyspace::Rows);
        let mut m = self.rows.merge()?;
        let mut w = self.mgr.storage.sorted_file_writer(Keyspace::Rows, &path)?;
        let mut value = Vec::new();
        while let Some(e) = m.next()? {
            if self.losers.binary_search(&e.seq).is_ok() {
                continue;
            }
            value.clear();
            value.extend_from_slice(&self.guess.to_be_bytes());
            value.push(keys::FLAG_LIVE);
            value.extend_from_slice(e.value());
            w.add(e.key(), &value)?;
        }
        let written = w.finish()?;
        self.files
            .extend(written.into_iter().map(|p| (Keyspace::Rows, p)));
        Ok(())
    }

    fn spill(&mut self) -> Result<()> {
        self.rows.spill(&self.dir, "rows")?;
        self.index.spill(&self.dir, "index")?;
        self.mem_bytes = 0;
        Ok(())
    }

    /// Deletes the scratch files and, before the commit point, the intent
    /// record; opens the gate.
    fn end(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        if !self.committed {
            let mut b = WriteBatch::new();
            b.delete(Keyspace::Meta, intent_key(self.table));
            if let Err(e) = self.mgr.storage.write(b, false) {
                tracing::error!(error = %e, "cannot delete a bulk-load intent record");
            }
            self.committed = true;
        }
        self.mgr.bulk_gate.open(&self.gate);
    }
}

impl Drop for BulkLoad {
    fn drop(&mut self) {
        self.end();
    }
}

impl Transaction {
    /// Starts a bulk load into the empty `table` (step 1 of the module doc):
    /// `gate` is the lock-key prefix of its rows, `indexes` its secondary
    /// indexes. `Ok(false)` when the table is not empty in storage or its
    /// writers did not finish within the lock wait timeout: the caller takes
    /// the ordinary path, nothing changed. The transaction must have no
    /// writes.
    pub fn begin_bulk(&mut self, table: TableId, gate: &[u8], indexes: &[IndexId]) -> Result<bool> {
        self.check_active()?;
        if self.bulk.is_some() || !self.writes.is_empty() {
            return Ok(false);
        }
        let mgr = self.mgr.clone();
        mgr.bulk_gate.close(gate);
        let deadline = Instant::now() + self.lock_wait_timeout;
        while mgr.locks.any_held_with_prefix(gate) {
            let stop = Instant::now() >= deadline
                || self
                    .interrupt
                    .as_deref()
                    .is_some_and(|f| f.load(Ordering::Relaxed) != 0);
            if stop {
                mgr.bulk_gate.open(gate);
                return Ok(false);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut ranges = vec![(Keyspace::Rows, table.to_be_bytes().to_vec())];
        ranges.extend(
            indexes
                .iter()
                .map(|ix| (Keyspace::Index, ix.to_be_bytes().to_vec())),
        );
        let empty = (|| -> Result<bool> {
            for (ks, prefix) in &ranges {
                let mut any = false;
                mgr.storage
                    .scan(*ks, &KeyRange::prefix(prefix), false, &mut |_, _| {
                        any = true;
                        ControlFlow::Break(())
                    })?;
                if any {
                    return Ok(false);
                }
            }
            Ok(true)
        })();
        if !matches!(empty, Ok(true)) {
            mgr.bulk_gate.open(gate);
            return empty;
        }
        // The load adds keys anywhere in the table without registering each:
        // one insert intention over all of it (range_lock.rs). A range lock
        // another transaction holds there sends the load down the ordinary
        // path, which waits for it row by row.
        match self.intend_whole_table(table, indexes) {
            Ok(true) => {}
            other => {
                mgr.bulk_gate.open(gate);
                return other;
            }
        }
        let dir = mgr.storage.scratch_dir().join(format!(
            "load-{}-{}",
            std::process::id(),
            NEXT_LOAD.fetch_add(1, Ordering::Relaxed)
        ));
        // From here on the BulkLoad's drop undoes everything.
        let mut load = Box::new(BulkLoad {
            mgr: mgr.clone(),
            table,
            gate: gate.to_vec(),
            ranges,
            dir,
            rows: Runs::default(),
            index: Runs::default(),
            mem_bytes: 0,
            seq: 0,
            losers: Vec::new(),
            files: Vec::new(),
            guess: 0,
            merged: false,
            committed: true,
            budget: RUN_BUDGET,
        });
        std::fs::create_dir_all(&load.dir).map_err(|e| io_err("creating", &load.dir, e))?;
        let mut b = WriteBatch::new();
        b.put(
            Keyspace::Meta,
            intent_key(table),
            encode_ranges(&load.ranges),
        );
        load.committed = false;
        mgr.storage.write(b, true)?;
        self.ensure_id();
        self.note_table_written(table);
        self.bulk = Some(load);
        Ok(true)
    }

    /// The table of the bulk load in progress, if any.
    pub fn bulk_table(&self) -> Option<TableId> {
        self.bulk.as_ref().map(|b| b.table)
    }

    /// Adds a new row of the bulk load's table: its primary key, encoded row
    /// and index keys, as [`Transaction::put`] takes them (no lock, no
    /// duplicate check: the merge finds duplicates).
    pub fn bulk_put(
        &mut self,
        pk: &[u8],
        row: &[u8],
        index_keys: &[(IndexId, Vec<u8>)],
    ) -> Result<()> {
        self.check_active()?;
        let Some(b) = self.bulk.as_mut() else {
            return Err(Error::Internal("bulk_put without a bulk load".into()));
        };
        b.seq += 1;
        let seq = b.seq;
        let rk = keys::rows_key(b.table, pk);
        let mut data = Vec::with_capacity(rk.len() + row.len());
        data.extend_from_slice(&rk);
        data.extend_from_slice(row);
        b.mem_bytes += data.len() + ENTRY_OVERHEAD;
        b.rows.mem.push(Entry {
            data,
            key_len: rk.len() as u32,
            seq,
        });
        for (ix, k) in index_keys {
            let key = keys::index_entry_key(*ix, k, pk);
            let mut data = key;
            let key_len = data.len() as u32;
            data.extend_from_slice(&index_value(u64::MAX, pk.len())?);
            b.mem_bytes += data.len() + ENTRY_OVERHEAD;
            b.index.mem.push(Entry { data, key_len, seq });
        }
        if b.mem_bytes >= b.budget {
            b.spill()?;
        }
        Ok(())
    }

    /// Merges the bulk load's runs into the files the commit ingests (step 3
    /// of the module doc). `on_duplicate` is called, in primary-key order,
    /// with the pk, encoded row and sequence number (1-based, in
    /// [`Transaction::bulk_put`] order) of each row whose primary key an
    /// earlier row has; an error from it ends the merge (the statement
    /// fails, nothing is loaded). Returns how many rows were skipped.
    pub fn bulk_merge(
        &mut self,
        on_duplicate: &mut dyn FnMut(&[u8], &[u8], u64) -> Result<()>,
    ) -> Result<u64> {
        self.check_active()?;
        let Some(b) = self.bulk.as_mut() else {
            return Ok(0);
        };
        b.spill()?;
        // Duplicates: equal Rows keys, the lowest sequence number first.
        {
            let mut m = b.rows.merge()?;
            let mut last: Option<Vec<u8>> = None;
            while let Some(e) = m.next()? {
                if last.as_deref() == Some(e.key()) {
                    on_duplicate(&e.key()[keys::ID_LEN..], e.value(), e.seq)?;
                    b.losers.push(e.seq);
                } else {
                    last = Some(e.key().to_vec());
                }
            }
        }
        b.losers.sort_unstable();
        b.guess = self.mgr.next_ts.load(Ordering::SeqCst) + TS_MARGIN;
        b.write_rows_file()?;
        let path = b.dir.join("index.sst");
        let mut m = b.index.merge()?;
        let mut w = self
            .mgr
            .storage
            .sorted_file_writer(Keyspace::Index, &path)?;
        let mut last: Option<Vec<u8>> = None;
        while let Some(e) = m.next()? {
            if b.losers.binary_search(&e.seq).is_ok() || last.as_deref() == Some(e.key()) {
                continue;
            }
            w.add(e.key(), e.value())?;
            last = Some(e.key().to_vec());
        }
        let written = w.finish()?;
        b.files
            .extend(written.into_iter().map(|p| (Keyspace::Index, p)));
        // The runs are not needed again but for a rewrite of the Rows file.
        for p in b.index.files.drain(..) {
            let _ = std::fs::remove_file(p);
        }
        b.merged = true;
        Ok(b.losers.len() as u64)
    }
}

/// Whether process `pid` still runs (Linux: its /proc entry exists). Where
/// there is no /proc, every other process counts as ended, which is right for
/// a durable storage (its scratch directory is its own data directory's).
fn process_is_alive(pid: u32) -> bool {
    std::path::Path::new("/proc/self").exists()
        && std::path::Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{IsolationLevel, ReadMode, TxnConfig};
    use canyon_storage::{MemoryStorage, Storage};
    use std::sync::Arc;

    fn pk(i: u32) -> Vec<u8> {
        i.to_be_bytes().to_vec()
    }

    fn count(storage: &dyn Storage, ks: Keyspace, prefix: &[u8]) -> usize {
        let mut n = 0;
        storage
            .scan(ks, &KeyRange::prefix(prefix), false, &mut |_, _| {
                n += 1;
                ControlFlow::Continue(())
            })
            .unwrap();
        n
    }

    /// Many spilled runs, duplicates across them, a snapshot from before,
    /// and a commit whose guessed timestamp was overtaken (the Rows file is
    /// written again).
    #[test]
    fn runs_spill_merge_find_duplicates_and_commit_at_a_new_timestamp() {
        let storage: Arc<dyn Storage> = Arc::new(MemoryStorage::new());
        let mgr = TxnManager::open(storage.clone(), TxnConfig::default()).unwrap();
        let sess = mgr.session();
        let other = mgr.session();
        // A commit elsewhere, so that timestamps are not all zero.
        let mut t0 = other.begin(IsolationLevel::RepeatableRead);
        t0.lock(b"x").unwrap();
        t0.put(1, pk(1), b"other".to_vec(), vec![], vec![]);
        t0.commit().unwrap();
        let mut snap = other.begin(IsolationLevel::RepeatableRead);
        snap.snapshot_ts().unwrap();

        let mut t = sess.begin(IsolationLevel::RepeatableRead);
        assert!(t.begin_bulk(7, b"r\0\0\0\x07", &[9]).unwrap());
        assert_eq!(count(&*storage, Keyspace::Meta, INTENT_PREFIX), 1);
        t.bulk.as_mut().unwrap().budget = 2000;
        // 1000 rows in a scrambled order, then ids 10 and 500 again.
        let mut ids: Vec<u32> = (0..1000).map(|i| (i * 617) % 1000).collect();
        ids.extend([10, 500]);
        for (n, &i) in ids.iter().enumerate() {
            let row = format!("row{i}-{n}");
            t.bulk_put(&pk(i), row.as_bytes(), &[(9, vec![(i % 7) as u8])])
                .unwrap();
        }
        assert!(
            t.bulk.as_ref().unwrap().rows.files.len() > 5,
            "spilled runs"
        );
        let mut dups = Vec::new();
        let skipped = t
            .bulk_merge(&mut |p, row, seq| {
                dups.push((p.to_vec(), String::from_utf8(row.to_vec()).unwrap(), seq));
                Ok(())
            })
            .unwrap();
        assert_eq!(skipped, 2);
        dups.sort();
        assert_eq!(dups[0], (pk(10), "row10-1000".into(), 1001));
        assert_eq!(dups[1], (pk(500), "row500-1001".into(), 1002));
        // Another commit overtakes the guessed timestamp.
        let overtaken = mgr.next_ts.load(Ordering::SeqCst);
        t.bulk.as_mut().unwrap().guess = overtaken;
        t.commit().unwrap();
        assert_eq!(mgr.bulk_loads_committed(), 1);
        assert!(mgr.visible_ts() > overtaken);
        assert_eq!(count(&*storage, Keyspace::Meta, INTENT_PREFIX), 0);
        assert_eq!(count(&*storage, Keyspace::Rows, &7u32.to_be_bytes()), 1000);
        assert_eq!(count(&*storage, Keyspace::Index, &9u32.to_be_bytes()), 1000);

        // The snapshot from before sees nothing; a new one sees the first
        // row of each key.
        assert_eq!(snap.get(7, &pk(10), ReadMode::Snapshot).unwrap(), None);
        snap.rollback();
        let mut r = other.begin(IsolationLevel::RepeatableRead);
        let first10 = ids.iter().position(|&i| i == 10).unwrap();
        assert_eq!(
            r.get(7, &pk(10), ReadMode::Snapshot).unwrap(),
            Some(format!("row10-{first10}").into_bytes())
        );
        assert!(r.get(7, &pk(999), ReadMode::Snapshot).unwrap().is_some());
        r.rollback();
        // The gate is open again: a writer of the table goes on at once.
        let mut w = other.begin(IsolationLevel::RepeatableRead);
        w.lock(b"r\0\0\0\x07\0\0\0\x01").unwrap();
        w.rollback();
    }

    /// The gate: a writer waits while a load holds it, and is let through
    /// (or times out) as a row-lock waiter would be.
    #[test]
    fn a_gated_writer_times_out_then_passes_once_the_load_ends() {
        let storage: Arc<dyn Storage> = Arc::new(MemoryStorage::new());
        let mgr = TxnManager::open(storage, TxnConfig::default()).unwrap();
        let sess = mgr.session();
        let other = mgr.session();
        let mut t = sess.begin(IsolationLevel::RepeatableRead);
        assert!(t.begin_bulk(3, b"r\0\0\0\x03", &[]).unwrap());
        let mut w = other.begin(IsolationLevel::RepeatableRead);
        w.set_lock_wait_timeout(Duration::from_millis(200));
        assert!(matches!(
            w.lock(b"r\0\0\0\x03\0\0\0\x01"),
            Err(Error::LockWaitTimeout)
        ));
        // Another table is not gated.
        w.lock(b"r\0\0\0\x04\0\0\0\x01").unwrap();
        drop(t);
        w.lock(b"r\0\0\0\x03\0\0\0\x01").unwrap();
        // With the lock held, a new load waits for it and gives up: the
        // caller takes the ordinary path.
        let mut t2 = sess.begin(IsolationLevel::RepeatableRead);
        t2.set_lock_wait_timeout(Duration::from_millis(100));
        assert!(!t2.begin_bulk(3, b"r\0\0\0\x03", &[]).unwrap());
        w.rollback();
        assert!(t2.begin_bulk(3, b"r\0\0\0\x03", &[]).unwrap());
        drop(t2);

        // A writer that held a lock of the table before the gate closed
        // passes it (the load waits for that writer anyway).
        let mut early = other.begin(IsolationLevel::RepeatableRead);
        early.lock(b"r\0\0\0\x05\0\0\0\x01").unwrap();
        let loader = std::thread::spawn(move || {
            let mut t = sess.begin(IsolationLevel::RepeatableRead);
            let started = t.begin_bulk(5, b"r\0\0\0\x05", &[]).unwrap();
            (started, t.bulk_table())
        });
        std::thread::sleep(Duration::from_millis(100));
        early.set_lock_wait_timeout(Duration::from_millis(200));
        early.lock(b"r\0\0\0\x05\0\0\0\x02").unwrap();
        early.rollback();
        assert_eq!(loader.join().unwrap(), (true, Some(5)));
    }
}
