//! The durable [`Storage`]: Canyon's keyspaces on RocksDB.
//!
//! [`RocksStorage`] maps the [`Storage`] contract onto RocksDB one to one:
//!
//! ```text
//!   Storage                       RocksDB
//!   ───────────────────────────   ─────────────────────────────────────────────
//!   Keyspace::{Meta,Rows,         one column family each, named Keyspace::name();
//!     History,Index,Log}            created on first open ("default" is unused)
//!   get(ks, key)                  get_pinned_cf_opt (one copy: into the result)
//!   scan(ks, range, reverse, f)   raw iterator with iterate_lower/upper_bound
//!   write(batch, sync)            one rocksdb::WriteBatch, WriteOptions::set_sync
//!   sync()                        flush_wal(true)  (fsync of the WAL)
//!   sorted_file_writer(ks, path)  SstFileWriter with the column family's options,
//!                                   a new file every INGEST_FILE_BYTES (64 MiB)
//!   ingest(files)                 ingest_external_file_cf_opts per keyspace,
//!                                   files moved (linked), not copied
//!   delete_range(ks, range)       one synced WriteBatch::delete_range_cf
//! ```
//!
//! # Durability, and why it matches the contract
//! 1. Every `write` appends one record to RocksDB's write-ahead log (WAL) before it
//!    is applied to the memtables; a WAL record is one `WriteBatch`, so a batch is
//!    recovered wholly or not at all — across column families, because all column
//!    families share the one WAL.
//! 2. By default the WAL is written with `write(2)` before `write` returns
//!    (`manual_wal_flush` is off), so a process crash (`kill -9`) loses nothing
//!    that returned. An OS crash or power loss loses what was not yet fsynced.
//!    With [`RocksOptions::buffer_wal_until_sync`] the records wait in RocksDB's
//!    buffer until `sync()` writes and fsyncs them together (one `write(2)`
//!    per group commit), and a process crash loses what was not yet synced —
//!    still within the contract, which makes a write durable only at a sync.
//!    Either way the WAL file receives records in write order, so what
//!    survives is a prefix.
//! 3. `sync()` = `flush_wal(true)` writes out the buffered records, if any, and
//!    fsyncs every live WAL file; `write(.., true)`
//!    does the same for its own record and everything before it. Since the WAL is
//!    appended in write order, this gives the contract's *prefix durability*.
//! 4. Recovery uses `WALRecoveryMode::PointInTime`: replay stops at the first torn
//!    or corrupt record — or, in a recycled WAL file
//!    ([`RocksOptions::recycle_wal_files`]), at the first record left from the
//!    file's previous life, which carries another file's number — so the
//!    surviving batches are a prefix of the write order.
//!    Before a memtable flush RocksDB syncs the closed WALs, so a flushed SST never
//!    holds data newer than the WAL prefix that survives (no need for
//!    `atomic_flush`, which only matters with the WAL disabled).
//!
//! # Tuning, and why
//! | setting | value | why |
//! |---|---|---|
//! | block cache | one LRU cache shared by all column families, [`RocksOptions::block_cache_bytes`] | data larger than RAM is the normal case: reads must stay within a fixed memory budget |
//! | index and filter blocks | charged to the block cache, L0's pinned; partitioned ([`RocksOptions::partitioned_index_filters`]), 4 KiB partitions under a pinned top level | otherwise filters and indexes grow with the data, outside any bound; partitioned, a point read needs only the partitions where its key falls, not a file's whole filter and index |
//! | bloom filters | full filters, 10 bits/key (~1% false positives), whole-key, on `rows`, `history`, `index` | a point read of an absent key (INSERT uniqueness check, a row not yet in history) costs no IO |
//! | memtable bloom | whole-key, on `rows` | point reads of rows skip memtables that lack the key |
//! | data-block hash index | on `rows` | point reads find the key inside a block without a binary search |
//! | block size | 16 KiB | fewer index entries per GB on flash; MyRocks' recommended setting |
//! | compression | LZ4 on every level | cheap to decompress on the read path; the only codec built in |
//! | compaction | levelled, dynamic level sizes | bounded space amplification (~1.1x) for update-heavy OLTP |
//! | memtables | [`RocksOptions::write_buffer_bytes`] each ([`RocksOptions::rows_write_buffer_bytes`] for Rows), all capped by [`RocksOptions::total_write_buffer_bytes`] | a bounded memory budget on the write side too; Rows smaller (32 MiB): versions that scans step over are flushed away by the scan-triggered flush, and the size bounds how often compactions rewrite the bottom level |
//! | memtables in the cache | off by default; [`RocksOptions::charge_write_buffers_to_cache`], set by the server's `memory_budget_bytes` | one bound for blocks and memtables together: what a memory budget needs |
//! | direct I/O | off by default; [`RocksOptions::direct_io`] | blocks cached once, in the block cache, not again in the kernel's page cache that a memory cgroup charges |
//! | scan-triggered flush | on `rows`: [`RocksOptions::rows_scan_flush_entries`] (64) and [`RocksOptions::rows_scan_flush_avg_entries`] (2) | a range scan that steps over many hidden old versions of rewritten rows in the active memtable marks it for flush, which drops them; without it, hot rows' versions cost every scan until the memtable fills |
//! | WAL buffering | [`RocksOptions::buffer_wal_until_sync`], set by the server under sync-every-commit | one `write(2)` of the WAL per group commit; a process crash loses only unsynced, so unacknowledged, commits |
//! | WAL size | [`RocksOptions::max_total_wal_bytes`] (256 MiB) | `meta`'s memtable, one key rewritten per commit, never fills: without the limit it would keep every old WAL alive — recovery time and disk growing, nothing to recycle |
//! | WAL recycling | [`RocksOptions::recycle_wal_files`] (16) | a sync writes over a recycled file's blocks, so it commits no file-size change through the file system's journal: one device write per sync, not two |
//! | `bytes_per_sync` | 1 MiB | SST writeback in small steps, not one long stall at file close |
//! | scans | `fill_cache = true` | OLTP range scans are short and likely to be repeated |
//! | bulk scans (`scan_bulk`: statistics, GC sweeps) | `fill_cache = false` | a pass over a whole table would evict the working set |
//!
//! Whole-key filters do not help prefix scans (secondary-index lookups, history
//! seeks). A prefix extractor would, once `canyon-sql`/`canyon-txn` fix their key
//! layouts (`docs/format.md`); it is not configured yet.
//!
//! # What this crate does not do
//! Versions, visibility, locking, transactions, group commit (all in `canyon-txn`),
//! key encodings (in `canyon-sql`), backups/checkpoints and compaction-filter GC
//! (not implemented yet). It adds no API beyond [`Storage`] that a layer above could
//! depend on, save [`RocksStorage::block_cache_usage`] for metrics.

use canyon_common::{Error, Result};
use canyon_storage::{KeyRange, Keyspace, SortedFileWriter, Storage, WriteBatch, WriteOp};
use rocksdb::{
    BlockBasedIndexType, BlockBasedOptions, Cache, ColumnFamily, ColumnFamilyDescriptor,
    DBCompressionType, DBRecoveryMode, DBWithThreadMode, DataBlockIndexType, ErrorKind,
    IngestExternalFileOptions, Options, Range, ReadOptions, SingleThreaded, SstFileWriter,
    WriteBufferManager, WriteOptions,
};
use std::ops::{Bound, ControlFlow};
use std::path::{Path, PathBuf};

/// The column family RocksDB always has; Canyon stores nothing in it.
const DEFAULT_CF: &str = "default";

/// Tuning knobs for [`RocksStorage::open`]. Every default lives in
/// [`RocksOptions::default`]; the module doc says why each setting is what it is.
#[derive(Debug, Clone, PartialEq)]
pub struct RocksOptions {
    /// Capacity of the LRU block cache shared by every keyspace, in bytes: data,
    /// index and filter blocks all count against it. Default 512 MiB. Size it to
    /// the memory left after memtables and the server's own needs; data larger
    /// than the cache is read from disk.
    pub block_cache_bytes: usize,
    /// Size of one memtable (per column family) before it is frozen and flushed to
    /// an SST file, in bytes. Default 64 MiB. Larger means fewer, bigger L0 files
    /// and longer WAL replay at recovery.
    pub write_buffer_bytes: usize,
    /// Memtable size of the Rows keyspace, in bytes. Default 32 MiB, half the
    /// other keyspaces'. Every UPDATE rewrites the row's key, and a memtable
    /// keeps every version until it is flushed (a flush keeps only the
    /// newest: Canyon holds no RocksDB snapshots), so range scans step over all
    /// of them: with 64 MiB, sysbench oltp_read_write (8 threads, uniform ids,
    /// 10,000 rows) fell from 32k to 8k queries/s within 30 s as versions piled
    /// up. Every flush, though, adds an L0 file, and each few L0 files are
    /// compacted into the bottom level, rewriting the keyspace: with 2 MiB,
    /// TPC-C spent a fifth of the server's CPU in compaction. Against 2 MiB,
    /// 8 MiB measured 0.99–1.00× the read-write throughput and 1.14–1.17× the
    /// TPC-C throughput at 0.81–0.86× the CPU per transaction; 16 MiB lost
    /// read-write throughput (0.91×) (docs/benchmarks.md, "Session 6 A/B").
    /// Since then the scan-triggered flush (`rows_scan_flush_entries`) flushes
    /// the memtable as soon as scans start stepping over versions, whatever its
    /// size, so the size only has to bound compaction: against 8 MiB, 32 MiB
    /// measured 1.10× the TPC-C throughput in three rounds at 0.81–0.90× the CPU
    /// per transaction, with a third of the bytes compacted, and 0.93–1.12×
    /// (about 1.0×) the read-write throughput in six ("Session 8 A/B").
    pub rows_write_buffer_bytes: usize,
    /// Rows only: when one iterator operation steps over this many hidden
    /// entries (older versions, deletes) in the active memtable, the memtable is
    /// marked for flush — a flush keeps only each key's newest version (RocksDB's
    /// `memtable_op_scan_flush_trigger`). 0 disables it and the next setting.
    /// Default 64.
    ///
    /// Why: sysbench's read-write mix sends 75% of its updates to 1% of the rows,
    /// which pile up dozens of versions each in the memtable; its range scans
    /// then spent half their time re-seeking past them (15% of the server's CPU).
    /// With 64 / 2 the read-write throughput measured 1.08× (five rounds), and
    /// TPC-C did not lose (docs/benchmarks.md, "Session 7 A/B").
    pub rows_scan_flush_entries: u32,
    /// Rows only: the same when the Next calls between two seeks step over this
    /// many hidden entries each on average (and over at least
    /// `rows_scan_flush_entries` in all) — a scan of many rows with a few old
    /// versions each (RocksDB's `memtable_avg_op_scan_flush_trigger`). Default 2.
    pub rows_scan_flush_avg_entries: u32,
    /// Memtables per column family (the active one plus frozen ones waiting for a
    /// flush). Default 4. Writes stall when all are full.
    pub max_write_buffer_number: i32,
    /// Cap on the memtables of all column families together, in bytes; when
    /// exceeded, the largest is flushed. Default 512 MiB. 0 means no cap.
    pub total_write_buffer_bytes: usize,
    /// Charge the memtables to the block cache (RocksDB's `WriteBufferManager`
    /// with a cache): memtable memory, capped by `total_write_buffer_bytes`,
    /// takes its place in the cache and evicts blocks, so `block_cache_bytes`
    /// bounds the two together — the way to hold RocksDB to one memory budget
    /// (the server's `memory_budget_bytes` sets it). Writers stall while the
    /// memtables are over `total_write_buffer_bytes`, until a flush. Default
    /// false: the cache holds blocks only and the memtables come on top.
    pub charge_write_buffers_to_cache: bool,
    /// Read SST files and write flushes and compactions with O_DIRECT
    /// (RocksDB's `use_direct_reads` and
    /// `use_direct_io_for_flush_and_compaction`): blocks are then cached once,
    /// uncompressed, in the block cache, and not again, compressed, in the
    /// kernel's page cache — which a memory cgroup charges to the server.
    /// Default false.
    pub direct_io: bool,
    /// Background threads for flushes and compactions together. Default: the
    /// number of CPUs, between 2 and 8.
    pub max_background_jobs: i32,
    /// Bloom filter bits per key on `rows`, `history` and `index`. Default 10
    /// (about 1% false positives). 0 disables the filters.
    pub bloom_bits_per_key: f64,
    /// Uncompressed size of an SST data block, in bytes. Default 16 KiB.
    pub block_size_bytes: usize,
    /// Partitioned index and filter blocks (RocksDB's `kTwoLevelIndexSearch`
    /// with `partition_filters`, 4 KiB partitions, the top level pinned) in
    /// the files written from now on; files written without stay readable.
    /// Default true. Why: with a small block cache a file's whole filter and
    /// index (~0.5 MB for 64 MiB of sysbench rows) are evicted by data blocks
    /// and read again; a partition is read only where a key falls. Measured
    /// after a LOAD DATA of 4 × 2.5 million rows in a 256 MiB memory group
    /// (docs/benchmarks.md, "Session 48"): with `direct_io`, 20,451 → 32,030
    /// cold point selects a second, 35.9 → 13.3 KB read per query; buffered,
    /// 25,697-27,460 → 27,140-30,304.
    pub partitioned_index_filters: bool,
    /// When the live WAL files exceed this many bytes, the column families that
    /// keep the oldest one alive are flushed. Default 256 MiB.
    ///
    /// Why: every commit writes `meta` (the last commit timestamp), whose
    /// memtable, one key rewritten, almost never fills; so no WAL file becomes
    /// obsolete until this limit forces `meta`'s flush. The limit therefore
    /// bounds the WAL replayed at recovery, the WAL's disk space (with the
    /// recycled files, about twice the limit) and how soon WAL files are
    /// recycled ([`RocksOptions::recycle_wal_files`]): with 1 GiB, TPC-C ran
    /// minutes on appended WAL files before the first became obsolete. The
    /// flushes it forces are small ones of `meta` (one key) and of the other
    /// keyspaces' partly filled memtables: 2 of the 14 flushes of a
    /// one-client TPC-C load and 60 s run.
    pub max_total_wal_bytes: u64,
    /// Open SST file handles RocksDB keeps; -1 keeps every file open (fastest,
    /// needs a high `ulimit -n`). Default -1.
    pub max_open_files: i32,
    /// Create the database (and the directory) when `path` holds none. Default
    /// true. When false, opening a path without a database is an error.
    pub create_if_missing: bool,
    /// Keep the WAL records of unsynced writes in RocksDB's buffer until the
    /// next [`Storage::sync`] (RocksDB's `manual_wal_flush`), so a group of
    /// commits costs one `write(2)` of the WAL, made by the sync, instead of
    /// one per commit under the caller's commit mutex. Default false. (MyRocks
    /// runs this way by default: `rocksdb_manual_wal_flush = ON`, its group
    /// commit flushing the WAL.) Measured under TPC-C on 2 vCPUs, where a
    /// sync covers only ~1.1 commits, it saved 7% of the `write(2)` calls;
    /// it matters where groups are large, and for the commit mutex it
    /// shortens.
    ///
    /// RISK: a **process** crash then loses the writes not yet synced, as a
    /// machine crash does anyway. The [`Storage`] contract promises nothing
    /// more (a write is durable only after a sync), and a caller that
    /// acknowledges only synced commits (canyon-txn's `SyncEveryCommit`) loses
    /// nothing it acknowledged; one that acknowledges before the sync
    /// (`SyncPeriodically`, whose documented risk is a machine crash) must
    /// leave it off.
    pub buffer_wal_until_sync: bool,
    /// Obsolete WAL files kept to be written over by later WALs instead of
    /// being deleted (RocksDB's `recycle_log_file_num`). Default 16 (more
    /// than the files one forced flush of `max_total_wal_bytes` retires under
    /// TPC-C, ~30 MiB each); 0 deletes them.
    ///
    /// Why: a commit's sync is an `fdatasync` of the WAL. After an append
    /// the file's size has changed, and ext4 or XFS must also commit that
    /// size through its journal — a second device write and cache flush;
    /// writing over a recycled file's old blocks changes no metadata, so the
    /// sync writes the data alone. InnoDB's redo log, preallocated and
    /// written in a circle, has the same property. On the project's 2-vCPU
    /// VM (ext4 on virtio) a 300-byte `write` + `fdatasync` took 184–192 µs
    /// appending and 112–132 µs overwriting; the server's group-commit syncs
    /// under one TPC-C client averaged 376–391 µs without recycling and
    /// 312–330 µs with it (`perf trace -s`, two runs each;
    /// docs/benchmarks.md, "Session 15").
    ///
    /// What it costs: the kept files' disk space (each as large as it grew);
    /// WAL records carry their file's number (an 11-byte header instead of
    /// 7), so recovery tells this file's records from the old ones left
    /// behind them, and point-in-time recovery stops at the first record that
    /// is torn, corrupt or old, as at any torn tail (the combination with
    /// `PointInTime` was fixed in facebook/rocksdb#12403; the RocksDB we
    /// build, 11.8, keeps recycling on with it). RocksDB reuses
    /// only WALs of the running process, so after each restart appends come
    /// first, until WAL files become obsolete (all their keyspaces flushed;
    /// `max_total_wal_bytes` forces that).
    pub recycle_wal_files: usize,
}

impl Default for RocksOptions {
    fn default() -> Self {
        const MIB: usize = 1 << 20;
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        RocksOptions {
            block_cache_bytes: 512 * MIB,
            write_buffer_bytes: 64 * MIB,
            rows_write_buffer_bytes: 32 * MIB,
            rows_scan_flush_entries: 64,
            rows_scan_flush_avg_entries: 2,
            max_write_buffer_number: 4,
            total_write_buffer_bytes: 512 * MIB,
            charge_write_buffers_to_cache: false,
            direct_io: false,
            max_background_jobs: cpus.clamp(2, 8) as i32,
            bloom_bits_per_key: 10.0,
            block_size_bytes: 16 * 1024,
            partitioned_index_filters: true,
            max_total_wal_bytes: 256 << 20,
            max_open_files: -1,
            create_if_missing: true,
            buffer_wal_until_sync: false,
            recycle_wal_files: 16,
        }
    }
}

/// The durable [`Storage`] on RocksDB: one column family per [`Keyspace`].
///
/// Dropping it fsyncs the WAL (best effort; a failure is logged) and closes the
/// database; [`RocksStorage::close`] does the same but reports the error.
pub struct RocksStorage {
    // `SingleThreaded` only means column families are created with `&mut self`
    // (we create them all in `open`); in exchange `cf_handle` is a plain map
    // lookup without a lock. Every method we use takes `&self` and is thread-safe.
    db: DBWithThreadMode<SingleThreaded>,
    cache: Cache,
    /// Options for point reads, made once: `get` allocates nothing but its result.
    get_options: ReadOptions,
    write_nosync: WriteOptions,
    write_sync: WriteOptions,
    /// Each keyspace's column family options (in [`Keyspace::ALL`] order),
    /// for the SST files of bulk loads.
    sst_options: Vec<Options>,
    path: PathBuf,
}

impl std::fmt::Debug for RocksStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RocksStorage")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Maps a RocksDB error: corruption is [`Error::Corrupt`] (the contract's
/// "undecodable state"), everything else [`Error::Io`].
fn map_err(what: &str, e: rocksdb::Error) -> Error {
    let msg = format!("rocksdb {what}: {e}");
    match e.kind() {
        ErrorKind::Corruption => Error::Corrupt(msg),
        _ => Error::Io(msg),
    }
}

/// The options shared by every column family, plus each keyspace's own.
fn cf_options(keyspace: Keyspace, o: &RocksOptions, cache: &Cache) -> Options {
    let mut table = BlockBasedOptions::default();
    table.set_block_cache(cache);
    table.set_block_size(o.block_size_bytes);
    table.set_cache_index_and_filter_blocks(true);
    table.set_cache_index_and_filter_blocks_with_high_priority(true);
    table.set_pin_l0_filter_and_index_blocks_in_cache(true);
    if o.partitioned_index_filters {
        // A two-level index: the file's index and filter cut into ~4 KiB
        // partitions, cached and evicted like data blocks, under a small top
        // level that stays pinned while the file is open. A point read then
        // needs one index partition and one filter partition in the cache, not
        // the file's whole index and filter (hundreds of KiB for a 64 MiB
        // file), which a small cache evicts and re-reads.
        table.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
        table.set_metadata_block_size(4096);
        table.set_pin_top_level_index_and_filter(true);
    }
    match keyspace {
        Keyspace::Rows | Keyspace::History | Keyspace::Index => {
            if o.bloom_bits_per_key > 0.0 {
                // `false`: a full filter (one per SST file), not the retired
                // block-based format.
                table.set_bloom_filter(o.bloom_bits_per_key, false);
                table.set_whole_key_filtering(true);
                table.set_partition_filters(o.partitioned_index_filters);
            }
        }
        // Small, read mostly at startup and always cached: a filter buys nothing.
        // The change log is read by range scans only.
        Keyspace::Meta | Keyspace::Log => {}
    }
    if keyspace == Keyspace::Rows {
        table.set_data_block_index_type(DataBlockIndexType::BinaryAndHash);
        table.set_data_block_hash_ratio(0.75);
    }

    let mut cf = Options::default();
    cf.set_block_based_table_factory(&table);
    cf.set_compression_type(DBCompressionType::Lz4);
    cf.set_bottommost_compression_type(DBCompressionType::Lz4);
    cf.set_level_compaction_dynamic_level_bytes(true);
    cf.set_write_buffer_size(if keyspace == Keyspace::Rows {
        o.rows_write_buffer_bytes
    } else {
        o.write_buffer_bytes
    });
    cf.set_max_write_buffer_number(o.max_write_buffer_number);
    if keyspace == Keyspace::Rows {
        cf.set_memtable_whole_key_filtering(true);
        cf.set_memtable_prefix_bloom_ratio(0.02);
    }
    cf
}

/// `key` followed by 0x00: the smallest key greater than `key` in bytewise
/// order. Turns `Excluded(k)` lower and `Included(k)` upper bounds into the
/// inclusive-lower / exclusive-upper bounds RocksDB iterators take, exactly.
fn successor(key: &[u8]) -> Vec<u8> {
    let mut s = Vec::with_capacity(key.len() + 1);
    s.extend_from_slice(key);
    s.push(0);
    s
}

/// A key strictly between `a` and `b` (`a < b` bytewise), about halfway when
/// both are read as binary fractions after their common prefix (16 bytes of
/// resolution); `None` when the two are adjacent at that resolution.
///
/// The result is the common prefix followed by 16 bytes `m`, where `x < m < y`
/// for `a`'s and `b`'s next 16 bytes `x` and `y` (zero-padded). It is above `a`:
/// at the first byte where `m` and `x` differ, `m`'s is larger — or `a` has
/// ended there, and a longer key with `a`'s bytes follows it. It is below `b`,
/// likewise.
fn key_between(a: &[u8], b: &[u8]) -> Option<Vec<u8>> {
    let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let word = |k: &[u8]| {
        let tail = &k[common.min(k.len())..];
        let mut w = [0u8; 16];
        let n = tail.len().min(16);
        w[..n].copy_from_slice(&tail[..n]);
        u128::from_be_bytes(w)
    };
    let (x, y) = (word(a), word(b));
    if y.checked_sub(x)? < 2 {
        return None;
    }
    let mut key = Vec::with_capacity(common + 16);
    key.extend_from_slice(&a[..common]);
    key.extend_from_slice(&(x + (y - x) / 2).to_be_bytes());
    Some(key)
}

/// Bisection steps [`RocksStorage`]'s `split_points` takes at most: each
/// halves the key interval, and the estimate stops improving once the interval
/// is within one data block.
const SPLIT_STEPS: usize = 64;

impl RocksStorage {
    /// Opens (or, with [`RocksOptions::create_if_missing`], creates) the database
    /// at `path`, creating any missing keyspace column family.
    ///
    /// Fails with [`Error::Corrupt`] if the database holds a column family Canyon
    /// does not know (a newer format, or not a Canyon database), and with
    /// [`Error::Io`] if RocksDB cannot open it (missing, locked by another
    /// process, unreadable).
    pub fn open(path: &Path, options: &RocksOptions) -> Result<RocksStorage> {
        let cache = Cache::new_lru_cache(options.block_cache_bytes);

        let mut db_opts = Options::default();
        db_opts.create_if_missing(options.create_if_missing);
        db_opts.create_missing_column_families(true);
        db_opts.set_max_background_jobs(options.max_background_jobs);
        if options.charge_write_buffers_to_cache {
            // `true`: past the cap writers stall until a flush frees memtable
            // memory. Without it, memtables waiting for a flush (the flush
            // threads behind a long load's compactions) piled up to
            // `max_write_buffer_number` per keyspace — 96 MiB under a 154 MiB
            // budget whose cap was 19 MiB — and a load's resident set rose
            // past the budget by that much.
            db_opts.set_write_buffer_manager(
                &WriteBufferManager::new_write_buffer_manager_with_cache(
                    options.total_write_buffer_bytes,
                    true,
                    cache.clone(),
                ),
            );
        } else {
            db_opts.set_db_write_buffer_size(options.total_write_buffer_bytes);
        }
        db_opts.set_use_direct_reads(options.direct_io);
        db_opts.set_use_direct_io_for_flush_and_compaction(options.direct_io);
        db_opts.set_max_total_wal_size(options.max_total_wal_bytes);
        db_opts.set_manual_wal_flush(options.buffer_wal_until_sync);
        db_opts.set_max_open_files(options.max_open_files);
        db_opts.set_wal_recovery_mode(DBRecoveryMode::PointInTime);
        db_opts.set_bytes_per_sync(1 << 20);
        db_opts.set_keep_log_file_num(10);
        db_opts.set_recycle_log_file_num(options.recycle_wal_files);

        // A column family we do not know means a format we cannot read safely.
        // (list_cf fails when there is no database yet; open reports that case.)
        if let Ok(existing) = DBWithThreadMode::<SingleThreaded>::list_cf(&db_opts, path) {
            for name in existing {
                let known = name == DEFAULT_CF || Keyspace::ALL.iter().any(|ks| ks.name() == name);
                if !known {
                    return Err(Error::Corrupt(format!(
                        "{}: unknown column family {name:?}: not a Canyon database, or a \
                         newer format",
                        path.display()
                    )));
                }
            }
        }

        let descriptors = Keyspace::ALL
            .iter()
            .map(|ks| ColumnFamilyDescriptor::new(ks.name(), cf_options(*ks, options, &cache)));
        let db =
            DBWithThreadMode::<SingleThreaded>::open_cf_descriptors(&db_opts, path, descriptors)
                .map_err(|e| map_err(&format!("open {}", path.display()), e))?;

        if options.rows_scan_flush_entries > 0 {
            // Not in the `rocksdb` crate's Options; it is a mutable option, so
            // it is set by name once the database is open.
            let rows = db
                .cf_handle(Keyspace::Rows.name())
                .expect("open() opens a column family for every keyspace");
            let op = options.rows_scan_flush_entries.to_string();
            let avg = options.rows_scan_flush_avg_entries.to_string();
            db.set_options_cf(
                &rows,
                &[
                    ("memtable_op_scan_flush_trigger", op.as_str()),
                    ("memtable_avg_op_scan_flush_trigger", avg.as_str()),
                ],
            )
            .map_err(|e| map_err("set the Rows scan flush trigger", e))?;
        }
        let mut get_options = ReadOptions::default();
        get_options.fill_cache(true);
        let mut write_sync = WriteOptions::default();
        write_sync.set_sync(true);
        let mut write_nosync = WriteOptions::default();
        write_nosync.set_sync(false);

        tracing::info!(
            path = %path.display(),
            block_cache_bytes = options.block_cache_bytes,
            write_buffer_bytes = options.write_buffer_bytes,
            max_background_jobs = options.max_background_jobs,
            "opened RocksDB storage"
        );
        let sst_options = Keyspace::ALL
            .iter()
            .map(|ks| cf_options(*ks, options, &cache))
            .collect();
        Ok(RocksStorage {
            db,
            cache,
            get_options,
            write_nosync,
            write_sync,
            sst_options,
            path: path.to_path_buf(),
        })
    }

    /// The directory the database lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A scan; with `fill_cache` false the data blocks it reads do not enter
    /// the block cache (`Storage::scan_bulk`).
    #[allow(clippy::type_complexity)] // as `Storage::scan`
    fn scan_with(
        &self,
        keyspace: Keyspace,
        range: &KeyRange,
        reverse: bool,
        fill_cache: bool,
        f: &mut dyn FnMut(&[u8], &[u8]) -> ControlFlow<()>,
    ) -> Result<()> {
        // Both bounds go to RocksDB, so the iterator never steps outside the
        // range (no wasted block reads past its end, in either direction), and
        // seek_to_first / seek_to_last land on the range's first / last key.
        let mut opts = ReadOptions::default();
        opts.fill_cache(fill_cache);
        match &range.start {
            Bound::Included(k) => opts.set_iterate_lower_bound(k.clone()),
            Bound::Excluded(k) => opts.set_iterate_lower_bound(successor(k)),
            Bound::Unbounded => {}
        }
        match &range.end {
            Bound::Included(k) => opts.set_iterate_upper_bound(successor(k)),
            Bound::Excluded(k) => opts.set_iterate_upper_bound(k.clone()),
            Bound::Unbounded => {}
        }
        let mut it = self.db.raw_iterator_cf_opt(self.cf(keyspace), opts);
        if reverse {
            it.seek_to_last();
        } else {
            it.seek_to_first();
        }
        while let Some((k, v)) = it.item() {
            debug_assert!(range.contains(k), "iterator left the range: {k:?}");
            if f(k, v).is_break() {
                return Ok(());
            }
            if reverse {
                it.prev();
            } else {
                it.next();
            }
        }
        // An invalid iterator is either the end of the range or an error.
        it.status().map_err(|e| map_err("scan", e))
    }

    /// Bytes currently held in the shared block cache (for metrics and tests; at
    /// most about [`RocksOptions::block_cache_bytes`]).
    pub fn block_cache_usage(&self) -> usize {
        self.cache.get_usage()
    }

    /// Makes every returned write durable, then closes the database. Unlike
    /// dropping, reports a failure of that last sync.
    pub fn close(self) -> Result<()> {
        self.sync()
        // `self` drops here: Drop syncs again (a no-op now) and closes.
    }

    fn cf(&self, keyspace: Keyspace) -> &ColumnFamily {
        self.db
            .cf_handle(keyspace.name())
            .expect("open() opens a column family for every keyspace")
    }
}

impl Storage for RocksStorage {
    fn get(&self, keyspace: Keyspace, key: &[u8]) -> Result<Option<Vec<u8>>> {
        match self
            .db
            .get_pinned_cf_opt(self.cf(keyspace), key, &self.get_options)
        {
            Ok(Some(value)) => Ok(Some(value.to_vec())),
            Ok(None) => Ok(None),
            Err(e) => Err(map_err("get", e)),
        }
    }

    fn scan(
        &self,
        keyspace: Keyspace,
        range: &KeyRange,
        reverse: bool,
        f: &mut dyn FnMut(&[u8], &[u8]) -> ControlFlow<()>,
    ) -> Result<()> {
        self.scan_with(keyspace, range, reverse, true, f)
    }

    fn scan_bulk(
        &self,
        keyspace: Keyspace,
        range: &KeyRange,
        reverse: bool,
        f: &mut dyn FnMut(&[u8], &[u8]) -> ControlFlow<()>,
    ) -> Result<()> {
        self.scan_with(keyspace, range, reverse, false, f)
    }

    /// From RocksDB's size estimates (`GetApproximateSizes`: the offsets of a
    /// key's data block in each SST file, read from the files' index blocks;
    /// memtables are not counted), by bisection: every step computes one
    /// candidate key per point, halfway between the keys bracketing it (see
    /// `key_between`), moves it to the first stored key at or after it (one
    /// iterator seek), and sizes the ranges from the start to all of them in
    /// one call, keeping the half in which each point's share of the bytes
    /// lies; where no stored key lies between the candidate and the upper
    /// bracket, the bracket comes down to just past the last stored key below
    /// the candidate instead. The seeks matter: encoded keys leave most of the
    /// byte space empty (an integer column is 8 bytes, mostly zeros), and
    /// halving bytes alone would take a step per bit to cross it; between two
    /// stored keys, halfway falls at their first differing byte. Empty when
    /// the range is unbounded above or nothing of it has reached a file yet.
    fn split_points(
        &self,
        keyspace: Keyspace,
        range: &KeyRange,
        parts: usize,
    ) -> Result<Vec<Vec<u8>>> {
        let lo = match &range.start {
            Bound::Included(k) => k.clone(),
            Bound::Excluded(k) => successor(k),
            Bound::Unbounded => Vec::new(),
        };
        let hi = match &range.end {
            Bound::Included(k) => successor(k),
            Bound::Excluded(k) => k.clone(),
            Bound::Unbounded => return Ok(Vec::new()),
        };
        if parts < 2 || lo >= hi {
            return Ok(Vec::new());
        }
        let cf = self.cf(keyspace);
        let total = self
            .db
            .get_approximate_sizes_cf(&cf, &[Range::new(&lo, &hi)])
            .first()
            .copied()
            .unwrap_or(0);
        if total == 0 {
            return Ok(Vec::new());
        }
        // Each point brackets its target share between `below` (bytes before
        // it < target) and `above` (bytes before it >= target).
        struct Point {
            target: u64,
            below: Vec<u8>,
            above: Vec<u8>,
        }
        let parts64 = parts as u64;
        let mut points: Vec<Point> = (1..parts64)
            .map(|i| Point {
                target: (u128::from(total) * u128::from(i) / u128::from(parts64)) as u64,
                below: lo.clone(),
                above: hi.clone(),
            })
            .collect();
        // Close enough: an eighth of a part.
        let tolerance = total / (parts64 * 8);
        let mut open: Vec<usize> = (0..points.len()).collect();
        let mut opts = ReadOptions::default();
        opts.fill_cache(false);
        opts.set_iterate_lower_bound(lo.clone());
        opts.set_iterate_upper_bound(hi.clone());
        let mut it = self.db.raw_iterator_cf_opt(cf, opts);
        for _ in 0..SPLIT_STEPS {
            let mut next_open = Vec::with_capacity(open.len());
            let mut candidates: Vec<(usize, Vec<u8>)> = Vec::with_capacity(open.len());
            for &i in &open {
                let p = &mut points[i];
                // Nothing between the brackets at 16 bytes of resolution:
                // `above` is as close as this gets.
                let Some(mid) = key_between(&p.below, &p.above) else {
                    continue;
                };
                it.seek(&mid);
                match it.key() {
                    Some(k) if k < p.above.as_slice() => candidates.push((i, k.to_vec())),
                    // No stored key in [mid, above): bring `above` down to just
                    // past the last stored key before mid (none lies between),
                    // or stop if that key is `below` itself.
                    _ => {
                        it.seek_for_prev(&mid);
                        match it.key() {
                            Some(k) if k > p.below.as_slice() => {
                                p.above = successor(k);
                                next_open.push(i);
                            }
                            _ => {}
                        }
                    }
                }
            }
            it.status().map_err(|e| map_err("split_points", e))?;
            if candidates.is_empty() && next_open.is_empty() {
                break;
            }
            let ranges: Vec<Range<'_>> =
                candidates.iter().map(|(_, k)| Range::new(&lo, k)).collect();
            let sizes = self.db.get_approximate_sizes_cf(&cf, &ranges);
            for ((i, k), size) in candidates.into_iter().zip(sizes) {
                let p = &mut points[i];
                if size.abs_diff(p.target) <= tolerance {
                    p.above = k;
                    continue;
                }
                if size < p.target {
                    p.below = k;
                } else {
                    p.above = k;
                }
                next_open.push(i);
            }
            open = next_open;
        }
        let mut out: Vec<Vec<u8>> = points
            .into_iter()
            .map(|p| p.above)
            .filter(|k| *k > lo && *k < hi)
            .collect();
        out.dedup();
        Ok(out)
    }

    fn write(&self, batch: WriteBatch, sync: bool) -> Result<()> {
        if batch.is_empty() {
            // Nothing to log; a synced empty batch still promises that earlier
            // writes are durable.
            return if sync { self.sync() } else { Ok(()) };
        }
        // ~20 bytes of record framing per operation on top of the payload.
        let mut wb =
            rocksdb::WriteBatch::with_capacity_bytes(batch.size_bytes() + 20 * batch.len() + 12);
        for op in batch.ops() {
            match op {
                WriteOp::Put {
                    keyspace,
                    key,
                    value,
                } => wb.put_cf(self.cf(*keyspace), key, value),
                WriteOp::Delete { keyspace, key } => wb.delete_cf(self.cf(*keyspace), key),
            }
        }
        let opts = if sync {
            &self.write_sync
        } else {
            &self.write_nosync
        };
        self.db.write_opt(wb, opts).map_err(|e| map_err("write", e))
    }

    fn sync(&self) -> Result<()> {
        self.db.flush_wal(true).map_err(|e| map_err("sync", e))
    }

    fn property(&self, keyspace: Option<Keyspace>, name: &str) -> Option<String> {
        // A name holding NUL cannot be a property; RocksDB's CStr conversion
        // would refuse it anyway.
        if name.contains('\0') {
            return None;
        }
        let value = match keyspace {
            Some(k) => self.db.property_value_cf(self.cf(k), name),
            None => self.db.property_value(name),
        };
        value.ok().flatten()
    }

    fn name(&self) -> &'static str {
        "rocksdb"
    }

    fn scratch_dir(&self) -> PathBuf {
        self.path.join("bulk-scratch")
    }

    fn checkpoint(&self, dir: &Path) -> Result<()> {
        // The WAL is buffered under sync-every-commit (`buffer_wal_until_sync`):
        // write it out first so that every batch written before this call is
        // in the image. RocksDB's checkpoint then flushes the memtables (log
        // size 0) and hard-links the SST files (copies them across file
        // systems), copying the live WAL and MANIFEST up to their current
        // size — one sequence number cuts every column family.
        self.db
            .flush_wal(true)
            .map_err(|e| map_err("checkpoint: sync", e))?;
        let cp =
            rocksdb::checkpoint::Checkpoint::new(&self.db).map_err(|e| map_err("checkpoint", e))?;
        cp.create_checkpoint(dir)
            .map_err(|e| map_err(&format!("checkpoint into {}", dir.display()), e))
    }

    fn sorted_file_writer<'a>(
        &'a self,
        keyspace: Keyspace,
        path: &Path,
    ) -> Result<Box<dyn SortedFileWriter + 'a>> {
        let at = Keyspace::ALL
            .iter()
            .position(|k| *k == keyspace)
            .expect("every keyspace is in ALL");
        let options = &self.sst_options[at];
        let w = SstFileWriter::create(options);
        w.open(path).map_err(|e| map_err("open an SST file", e))?;
        Ok(Box::new(RocksSst {
            options,
            w,
            entries: 0,
            path: path.to_path_buf(),
            done: Vec::new(),
        }))
    }

    fn ingest(&self, files: &[(Keyspace, PathBuf)]) -> Result<()> {
        let mut opts = IngestExternalFileOptions::default();
        // Linked into the database, not copied; the scratch directory is on
        // the database's file system.
        opts.set_move_files(true);
        for ks in Keyspace::ALL {
            let paths: Vec<&PathBuf> = files
                .iter()
                .filter(|(k, _)| *k == ks)
                .map(|(_, p)| p)
                .collect();
            if paths.is_empty() {
                continue;
            }
            self.db
                .ingest_external_file_cf_opts(self.cf(ks), &opts, paths)
                .map_err(|e| map_err("ingest SST files", e))?;
        }
        Ok(())
    }

    fn delete_range(&self, keyspace: Keyspace, range: &KeyRange) -> Result<()> {
        let start = match &range.start {
            Bound::Included(k) => k.clone(),
            Bound::Excluded(k) => successor(k),
            Bound::Unbounded => Vec::new(),
        };
        let mut wb = rocksdb::WriteBatch::default();
        match &range.end {
            Bound::Excluded(e) => wb.delete_range_cf(self.cf(keyspace), &start, e),
            Bound::Included(e) => wb.delete_range_cf(self.cf(keyspace), &start, &successor(e)),
            Bound::Unbounded => {
                // Range deletion needs an end: the keys at or past the last
                // 0xFF-run are deleted one by one.
                return canyon_storage::delete_range_by_scan(self, keyspace, range);
            }
        }
        self.db
            .write_opt(wb, &self.write_sync)
            .map_err(|e| map_err("delete_range", e))
    }
}

/// SST files being written for a bulk load: `path`, then `path.1`, `path.2`,
/// ... each cut once it reaches [`canyon_storage::INGEST_FILE_BYTES`] (keys
/// are unique and ascending, so a cut never splits a key's entries).
struct RocksSst<'a> {
    options: &'a Options,
    w: SstFileWriter<'a>,
    /// Entries in the file being written.
    entries: u64,
    /// The file being written.
    path: PathBuf,
    /// The files finished before it.
    done: Vec<PathBuf>,
}

impl RocksSst<'_> {
    fn finish_file(&mut self) -> Result<()> {
        self.w
            .finish()
            .map_err(|e| map_err("finish an SST file", e))?;
        self.done.push(self.path.clone());
        Ok(())
    }
}

impl SortedFileWriter for RocksSst<'_> {
    fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        if self.entries > 0 && self.w.file_size() >= canyon_storage::INGEST_FILE_BYTES {
            self.finish_file()?;
            let first = self.done.first().expect("a file was just finished");
            let mut next = first.clone().into_os_string();
            next.push(format!(".{}", self.done.len()));
            self.path = PathBuf::from(next);
            self.w = SstFileWriter::create(self.options);
            self.w
                .open(&self.path)
                .map_err(|e| map_err("open an SST file", e))?;
            self.entries = 0;
        }
        self.entries += 1;
        self.w
            .put(key, value)
            .map_err(|e| map_err("write an SST file", e))
    }

    fn finish(mut self: Box<Self>) -> Result<Vec<PathBuf>> {
        if self.entries == 0 {
            // RocksDB refuses to finish an empty file (only the first can be).
            let _ = std::fs::remove_file(&self.path);
        } else {
            self.finish_file()?;
        }
        Ok(std::mem::take(&mut self.done))
    }
}

impl Drop for RocksStorage {
    fn drop(&mut self) {
        // Best effort: nothing can be returned from drop. Callers that must know
        // use close(). The DB field's own Drop then closes RocksDB, which waits for
        // running background jobs.
        if let Err(e) = self.db.flush_wal(true) {
            tracing::warn!(path = %self.path.display(), error = %e, "WAL sync at close failed");
        }
        tracing::info!(path = %self.path.display(), "closing RocksDB storage");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::key_between;

    #[test]
    fn key_between_lies_strictly_between() {
        let cases: &[(&[u8], &[u8])] = &[
            (b"\x00\x00\x00\x07", b"\x00\x00\x00\x08\x01"),
            (b"\x00\x00\x00\x07", b"\x00\x00\x00\x08"),
            (b"", b"\x00\x00\x00\x01"),
            (b"ab", b"ab\x00\x00\x01"),
            (b"ab\xff\xff\xff", b"ac"),
            (
                b"\x01\x80\x00\x00\x00\x00\x00\x00\x05",
                b"\x01\x80\x00\x00\x00\x00\x00\x27\x10",
            ),
            (&[0x05; 40], &[0x06; 3]),
        ];
        for &(a, b) in cases {
            let m = key_between(a, b).unwrap_or_else(|| panic!("{a:?} {b:?}"));
            assert!(
                a < m.as_slice() && m.as_slice() < b,
                "{a:?} < {m:?} < {b:?}"
            );
        }
        // About halfway between two integers of the same width.
        let m = key_between(&[0, 0, 0, 10], &[0, 0, 0, 30]).unwrap();
        assert_eq!(&m[..4], &[0, 0, 0, 20]);
        // Nothing fits at 16 bytes of resolution.
        assert_eq!(key_between(b"a", b"a\x00"), None);
        assert_eq!(key_between(b"k", b"k"), None);
    }
}
