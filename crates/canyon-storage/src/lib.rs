//! The storage layer: a narrow, ordered key-value contract and its in-memory
//! implementation.
//!
//! Everything Canyon keeps — rows, old row versions, index entries, the catalog —
//! lives in one [`Storage`] as byte keys and byte values, in a few fixed keyspaces
//! ([`Keyspace`]). The layers above (MVCC in `canyon-txn`, the catalog in
//! `canyon-sql`) decide what the bytes mean; `docs/format.md` documents them.
//!
//! Two implementations honour the same contract and run the same conformance
//! tests ([`conformance`]):
//! - [`MemoryStorage`] (here): for fast tests; nothing is durable.
//! - `canyon_rocksdb::RocksStorage`: the durable one (column families, atomic
//!   WriteBatch, WAL with explicit sync, bloom filters, a bounded block cache).
//!
//! What this layer does **not** do: versions, visibility, locking, transactions.
//! It gives atomic multi-key batches and an explicit durability point; MVCC is
//! built on top of those two promises.
//!
//! # Bulk ingestion
//! A third, optional promise serves LOAD DATA into an empty table
//! (`canyon-txn`'s `bulk.rs`): sorted files written outside the write path
//! ([`Storage::sorted_file_writer`]) and added to a keyspace whole
//! ([`Storage::ingest`]), without the WAL or the memtable. Ingestion is atomic
//! per file and durable when it returns, but not atomic with a [`WriteBatch`]
//! or across keyspaces: the caller makes it so with a durable intent record
//! and [`Storage::delete_range`] at recovery. The trait's default methods do it
//! with a plain length-prefixed file applied as one batch (the in-memory
//! storage uses them); RocksDB writes SST files and ingests them.

mod memory;

pub mod conformance;

pub use memory::MemoryStorage;

use canyon_common::{Error, Result};
use std::io::{BufReader, BufWriter, Read, Write};
use std::ops::{Bound, ControlFlow};
use std::path::{Path, PathBuf};

/// The fixed keyspaces (RocksDB column families). Each has its own key layout,
/// documented in `docs/format.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Keyspace {
    /// Catalog records and server metadata (databases, tables, users, counters).
    Meta,
    /// The newest committed version of every row: one point read per row.
    Rows,
    /// Older row versions, kept while some snapshot may still read them.
    History,
    /// Secondary index entries.
    Index,
    /// The change log (canyon-txn `changelog.rs`): one record per committed
    /// write transaction, keyed by its sequence number; what the binary log
    /// serves replicas. Append-only, read in key order, purged from the front.
    Log,
}

impl Keyspace {
    /// Every keyspace, in a fixed order (the order column families are created in).
    pub const ALL: [Keyspace; 5] = [
        Keyspace::Meta,
        Keyspace::Rows,
        Keyspace::History,
        Keyspace::Index,
        Keyspace::Log,
    ];

    /// The stable name of the keyspace (the RocksDB column family name).
    pub fn name(self) -> &'static str {
        match self {
            Keyspace::Meta => "meta",
            Keyspace::Rows => "rows",
            Keyspace::History => "history",
            Keyspace::Index => "index",
            Keyspace::Log => "log",
        }
    }
}

/// One operation of a [`WriteBatch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOp {
    /// Set `key` to `value`.
    Put {
        /// Keyspace written.
        keyspace: Keyspace,
        /// Key.
        key: Vec<u8>,
        /// Value.
        value: Vec<u8>,
    },
    /// Remove `key` (no error if absent).
    Delete {
        /// Keyspace written.
        keyspace: Keyspace,
        /// Key.
        key: Vec<u8>,
    },
}

/// A set of writes applied atomically: after a crash either all of them are
/// present or none is. Later operations on the same key win.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteBatch {
    ops: Vec<WriteOp>,
    bytes: usize,
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a put.
    pub fn put(&mut self, keyspace: Keyspace, key: Vec<u8>, value: Vec<u8>) {
        self.bytes += key.len() + value.len();
        self.ops.push(WriteOp::Put {
            keyspace,
            key,
            value,
        });
    }

    /// Adds a delete.
    pub fn delete(&mut self, keyspace: Keyspace, key: Vec<u8>) {
        self.bytes += key.len();
        self.ops.push(WriteOp::Delete { keyspace, key });
    }

    /// The operations in the order they were added.
    pub fn ops(&self) -> &[WriteOp] {
        &self.ops
    }

    /// Number of operations.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether the batch has no operations.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Approximate payload size in bytes (keys plus values).
    pub fn size_bytes(&self) -> usize {
        self.bytes
    }
}

/// A key range for [`Storage::scan`]: `start` and `end` bounds over raw keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRange {
    /// Lower bound.
    pub start: Bound<Vec<u8>>,
    /// Upper bound.
    pub end: Bound<Vec<u8>>,
}

impl KeyRange {
    /// Every key that starts with `prefix`.
    pub fn prefix(prefix: &[u8]) -> Self {
        let start = Bound::Included(prefix.to_vec());
        let end = match prefix_successor(prefix) {
            Some(s) => Bound::Excluded(s),
            None => Bound::Unbounded,
        };
        KeyRange { start, end }
    }

    /// The whole keyspace.
    pub fn all() -> Self {
        KeyRange {
            start: Bound::Unbounded,
            end: Bound::Unbounded,
        }
    }

    /// Whether `key` lies within the range.
    pub fn contains(&self, key: &[u8]) -> bool {
        let above = match &self.start {
            Bound::Included(s) => key >= s.as_slice(),
            Bound::Excluded(s) => key > s.as_slice(),
            Bound::Unbounded => true,
        };
        let below = match &self.end {
            Bound::Included(e) => key <= e.as_slice(),
            Bound::Excluded(e) => key < e.as_slice(),
            Bound::Unbounded => true,
        };
        above && below
    }
}

/// The smallest key greater than every key starting with `prefix`, or `None` when
/// no such key exists (the prefix is all 0xFF bytes, or empty).
pub fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut s = prefix.to_vec();
    while let Some(last) = s.pop() {
        if last < 0xFF {
            s.push(last + 1);
            return Some(s);
        }
    }
    None
}

/// The ordered key-value contract every storage implementation keeps.
///
/// # Contract
/// - **Ordering**: keys within a keyspace are ordered bytewise (memcmp, shorter
///   prefix first); [`Storage::scan`] visits them in that order, or the reverse.
/// - **Atomicity**: [`Storage::write`] applies a whole [`WriteBatch`] or nothing,
///   even across a crash. Concurrent readers may observe a batch partially applied
///   (there are no storage-level snapshots): the MVCC layer above never relies on
///   storage-level isolation, only on its own commit timestamps.
/// - **Durability**: a write is durable only after a later [`Storage::sync`] has
///   returned (or `write` was called with `sync = true`). Writes are made durable in
///   the order they were written: when `sync` returns, every batch whose `write`
///   returned before `sync` was called survives a crash (prefix durability). After a
///   crash, the surviving batches are a prefix of the write order.
/// - **Concurrency**: every method may be called from many threads at once.
/// - **Errors**: IO failures are [`canyon_common::Error::Io`]; undecodable state is
///   [`canyon_common::Error::Corrupt`]. An error from `write` means the batch may or
///   may not be applied; the caller treats the transaction as failed.
pub trait Storage: Send + Sync + 'static {
    /// Reads one key.
    fn get(&self, keyspace: Keyspace, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// Visits the keys in `range` in order (descending when `reverse`), calling `f`
    /// with each key and value until `f` returns [`ControlFlow::Break`] or the range
    /// ends. `f` must not call back into the storage's write path.
    #[allow(clippy::type_complexity)] // a plain callback; an alias would only hide it
    fn scan(
        &self,
        keyspace: Keyspace,
        range: &KeyRange,
        reverse: bool,
        f: &mut dyn FnMut(&[u8], &[u8]) -> ControlFlow<()>,
    ) -> Result<()>;

    /// [`Storage::scan`] for a pass over a whole table or keyspace that is not
    /// the workload's working set — background statistics, GC sweeps: an
    /// implementation with a block cache reads it without filling the cache,
    /// so that the pass does not evict the blocks the workload reads. Same
    /// results as `scan`, which it defaults to.
    #[allow(clippy::type_complexity)] // as `scan`
    fn scan_bulk(
        &self,
        keyspace: Keyspace,
        range: &KeyRange,
        reverse: bool,
        f: &mut dyn FnMut(&[u8], &[u8]) -> ControlFlow<()>,
    ) -> Result<()> {
        self.scan(keyspace, range, reverse, f)
    }

    /// Up to `parts - 1` keys, ascending and within `range`, that divide it into
    /// `parts` pieces holding about equal shares of its stored bytes (they need
    /// not be stored keys). For sampling a range too large to read: statistics
    /// seek to these points and read a short run at each, as InnoDB's
    /// statistics dive to random leaf pages. An estimate from what the
    /// implementation knows without reading the data; empty when it knows
    /// nothing (the default), and the caller then reads the whole range.
    fn split_points(
        &self,
        keyspace: Keyspace,
        range: &KeyRange,
        parts: usize,
    ) -> Result<Vec<Vec<u8>>> {
        let _ = (keyspace, range, parts);
        Ok(Vec::new())
    }

    /// Applies `batch` atomically. With `sync`, returns only once it is durable.
    fn write(&self, batch: WriteBatch, sync: bool) -> Result<()>;

    /// Makes every write that returned before this call durable.
    fn sync(&self) -> Result<()>;

    /// A short name for logs and benchmark reports ("memory", "rocksdb").
    fn name(&self) -> &'static str;

    /// A directory for temporary files of this storage (bulk loads' sorted
    /// runs): under the data directory for a durable storage, so that they are
    /// on its disk and its rename / link of files is cheap. Default: the
    /// system's temporary directory.
    fn scratch_dir(&self) -> PathBuf {
        std::env::temp_dir().join("canyon-scratch")
    }

    /// A writer of sorted files for [`Storage::ingest`] into `keyspace`: the
    /// first at `path`, further ones (if the storage cuts its output, see
    /// [`SortedFileWriter::finish`]) beside it. Keys must be added in
    /// strictly ascending order.
    fn sorted_file_writer<'a>(
        &'a self,
        keyspace: Keyspace,
        path: &Path,
    ) -> Result<Box<dyn SortedFileWriter + 'a>> {
        let _ = keyspace;
        Ok(Box::new(PlainSortedFile::create(path)?))
    }

    /// Adds the finished sorted files to their keyspaces, durably once it
    /// returns (each file wholly or not at all; the set is not atomic across
    /// keyspaces, see the module doc). The files are consumed (moved or
    /// deleted). Default: each file read back and applied as one synced
    /// batch.
    fn ingest(&self, files: &[(Keyspace, PathBuf)]) -> Result<()> {
        for (keyspace, path) in files {
            let mut batch = WriteBatch::new();
            read_plain_sorted_file(path, &mut |k, v| {
                batch.put(*keyspace, k, v);
            })?;
            self.write(batch, true)?;
            let _ = std::fs::remove_file(path);
        }
        Ok(())
    }

    /// Removes every key of `range` in `keyspace`, durably once it returns
    /// (recovery of a bulk load that did not commit). Default: a scan and one
    /// synced batch of deletes.
    fn delete_range(&self, keyspace: Keyspace, range: &KeyRange) -> Result<()> {
        delete_range_by_scan(self, keyspace, range)
    }

    /// The text of the diagnostic property `name` — of the keyspace's
    /// column family when `keyspace` is given, else of the whole store —
    /// for operators' reports (SHOW ENGINE INNODB STATUS). Names are the
    /// implementation's own (RocksDB's `rocksdb.stats`,
    /// `rocksdb.estimate-num-keys`, ...); `None` for a name it does not know,
    /// and always for an implementation without such figures (the default,
    /// and the in-memory storage). Never on a hot path: a property may take
    /// the implementation's internal locks.
    fn property(&self, keyspace: Option<Keyspace>, name: &str) -> Option<String> {
        let _ = (keyspace, name);
        None
    }

    /// Writes a copy of the whole store into the new directory `dir` (which
    /// must not exist) that opens as a store holding exactly the batches
    /// whose `write` returned before this call, and no later ones — a
    /// crash-consistent image (hot backup: `canyon-txn`'s `backup.rs` says
    /// why that is enough). Files are hard-linked where the file system
    /// allows, copied otherwise. Default: unsupported (a store without files,
    /// such as the in-memory one, has nothing to copy).
    fn checkpoint(&self, dir: &Path) -> Result<()> {
        let _ = dir;
        Err(Error::Unsupported(format!(
            "a backup of the {} storage (it has no files)",
            self.name()
        )))
    }
}

/// [`Storage::delete_range`] by a scan and one synced batch of deletes.
pub fn delete_range_by_scan<S: Storage + ?Sized>(
    storage: &S,
    keyspace: Keyspace,
    range: &KeyRange,
) -> Result<()> {
    let mut batch = WriteBatch::new();
    storage.scan(keyspace, range, false, &mut |k, _| {
        batch.delete(keyspace, k.to_vec());
        ControlFlow::Continue(())
    })?;
    storage.write(batch, true)
}

/// Sorted files being written for [`Storage::ingest`].
pub trait SortedFileWriter {
    /// Appends an entry; `key` must be greater than every key added before.
    fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()>;
    /// Finishes writing; returns the files written, in key order, each
    /// holding at least one entry — none when no entry was added (a file at
    /// the writer's path may then not exist, and must not be ingested). A
    /// writer may cut a long sequence of entries into several files (RocksDB
    /// does, at [`INGEST_FILE_BYTES`]).
    fn finish(self: Box<Self>) -> Result<Vec<PathBuf>>;
}

/// About the largest sorted file a storage should make for [`Storage::ingest`]
/// (64 MiB, RocksDB's default target size of a compaction's output file).
/// Why a bound: a file is the unit that filters, indexes and compactions deal
/// in. One file of a whole table (450 MB for 2.5 million sysbench rows) has a
/// filter block (~3 MB) and an index block (~1 MB) each larger than a shard
/// of RocksDB's block cache, so they never stay cached: every point read
/// re-read and re-checksummed them (925 cold point selects a second where
/// 25,697 were possible once files were cut, issue 28); and a later compaction touching any of its keys
/// rewrites all of it.
pub const INGEST_FILE_BYTES: u64 = 64 << 20;

fn io_err(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::Io(format!("{what} {}: {e}", path.display()))
}

/// The default sorted file: `key_len u32 LE ++ value_len u32 LE ++ key ++
/// value` per entry.
struct PlainSortedFile {
    out: BufWriter<std::fs::File>,
    path: PathBuf,
    entries: u64,
}

impl PlainSortedFile {
    fn create(path: &Path) -> Result<Self> {
        let f = std::fs::File::create(path).map_err(|e| io_err("creating", path, e))?;
        Ok(PlainSortedFile {
            out: BufWriter::new(f),
            path: path.to_path_buf(),
            entries: 0,
        })
    }
}

impl SortedFileWriter for PlainSortedFile {
    fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let w = |out: &mut BufWriter<std::fs::File>| -> std::io::Result<()> {
            out.write_all(&(key.len() as u32).to_le_bytes())?;
            out.write_all(&(value.len() as u32).to_le_bytes())?;
            out.write_all(key)?;
            out.write_all(value)
        };
        w(&mut self.out).map_err(|e| io_err("writing", &self.path, e))?;
        self.entries += 1;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<Vec<PathBuf>> {
        self.out
            .flush()
            .map_err(|e| io_err("writing", &self.path, e))?;
        Ok(if self.entries > 0 {
            vec![self.path.clone()]
        } else {
            Vec::new()
        })
    }
}

/// Reads a [`PlainSortedFile`] back, entry by entry.
fn read_plain_sorted_file(path: &Path, f: &mut dyn FnMut(Vec<u8>, Vec<u8>)) -> Result<()> {
    let file = std::fs::File::open(path).map_err(|e| io_err("opening", path, e))?;
    let mut r = BufReader::new(file);
    let mut len = [0u8; 8];
    loop {
        match r.read_exact(&mut len) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(io_err("reading", path, e)),
        }
        let kl = u32::from_le_bytes(len[..4].try_into().expect("4 bytes")) as usize;
        let vl = u32::from_le_bytes(len[4..].try_into().expect("4 bytes")) as usize;
        let mut k = vec![0; kl];
        let mut v = vec![0; vl];
        r.read_exact(&mut k)
            .and_then(|()| r.read_exact(&mut v))
            .map_err(|e| io_err("reading", path, e))?;
        f(k, v);
    }
}
