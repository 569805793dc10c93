//! RocksDB-specific tests: what the shared conformance suite cannot see —
//! restarts, crashes, data larger than the block cache, and opening foreign
//! databases.

// Tests: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use canyon_common::Error;
use canyon_rocksdb::{RocksOptions, RocksStorage};
use canyon_storage::{KeyRange, Keyspace, Storage, WriteBatch};
use std::io::{BufRead, BufReader};
use std::ops::ControlFlow;
use std::path::Path;
use std::process::{Command, Stdio};

fn small_options() -> RocksOptions {
    RocksOptions {
        block_cache_bytes: 4 << 20,
        write_buffer_bytes: 1 << 20,
        total_write_buffer_bytes: 8 << 20,
        max_background_jobs: 2,
        ..RocksOptions::default()
    }
}

fn count(s: &dyn Storage, ks: Keyspace) -> usize {
    let mut n = 0;
    s.scan(ks, &KeyRange::all(), false, &mut |_, _| {
        n += 1;
        ControlFlow::Continue(())
    })
    .unwrap();
    n
}

/// Incompressible bytes (xorshift), so LZ4 cannot shrink the data below the cache.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[test]
fn data_larger_than_block_cache() {
    const ROWS: u64 = 20_000;
    const VALUE: usize = 1024; // 20k x 1 KiB = ~20 MiB against a 1 MiB cache
    let dir = tempfile::tempdir().unwrap();
    let options = RocksOptions {
        block_cache_bytes: 1 << 20,
        write_buffer_bytes: 2 << 20,
        ..small_options()
    };
    let key = |i: u64| i.to_be_bytes().to_vec();
    let verify = |s: &RocksStorage| {
        for i in 0..ROWS {
            let v = s.get(Keyspace::Rows, &key(i)).unwrap();
            assert!(v.as_deref() == Some(&noise(i, VALUE)[..]), "row {i}");
        }
        let mut next = 0u64;
        s.scan(Keyspace::Rows, &KeyRange::all(), false, &mut |k, v| {
            assert_eq!(k, key(next).as_slice());
            assert_eq!(v.len(), VALUE);
            next += 1;
            ControlFlow::Continue(())
        })
        .unwrap();
        assert_eq!(next, ROWS);
        // Bounded: the LRU cache may overshoot its capacity only by the blocks
        // pinned at this moment, a few at most.
        let used = s.block_cache_usage();
        assert!(used <= 2 << 20, "block cache holds {used} bytes");
    };
    {
        let s = RocksStorage::open(dir.path(), &options).unwrap();
        for chunk in 0..ROWS / 100 {
            let mut b = WriteBatch::new();
            for i in chunk * 100..(chunk + 1) * 100 {
                b.put(Keyspace::Rows, key(i), noise(i, VALUE));
            }
            s.write(b, false).unwrap();
        }
        s.sync().unwrap();
        verify(&s);
    }
    let s = RocksStorage::open(dir.path(), &options).unwrap();
    verify(&s);
    s.close().unwrap();
}

/// A bulk scan (`scan_bulk`: statistics, GC sweeps) reads the whole keyspace
/// without filling the block cache; a plain scan fills it.
#[test]
fn bulk_scans_leave_the_block_cache_alone() {
    const ROWS: u64 = 8_000;
    const VALUE: usize = 1024; // ~8 MiB of incompressible values, in SSTs
    let dir = tempfile::tempdir().unwrap();
    let options = RocksOptions {
        block_cache_bytes: 4 << 20,
        write_buffer_bytes: 1 << 20,
        ..small_options()
    };
    {
        let s = RocksStorage::open(dir.path(), &options).unwrap();
        for chunk in 0..ROWS / 100 {
            let mut b = WriteBatch::new();
            for i in chunk * 100..(chunk + 1) * 100 {
                b.put(Keyspace::Rows, i.to_be_bytes().to_vec(), noise(i, VALUE));
            }
            s.write(b, false).unwrap();
        }
        s.close().unwrap();
    }
    // Reopened: the cache starts empty, the data is in SST files.
    let s = RocksStorage::open(dir.path(), &options).unwrap();
    let scan = |bulk: bool| {
        let mut n = 0u64;
        let mut f = |_: &[u8], v: &[u8]| {
            assert_eq!(v.len(), VALUE);
            n += 1;
            ControlFlow::Continue(())
        };
        if bulk {
            s.scan_bulk(Keyspace::Rows, &KeyRange::all(), false, &mut f)
        } else {
            s.scan(Keyspace::Rows, &KeyRange::all(), false, &mut f)
        }
        .unwrap();
        assert_eq!(n, ROWS);
    };
    let before = s.block_cache_usage();
    scan(true);
    let after_bulk = s.block_cache_usage();
    assert!(
        after_bulk <= before + (512 << 10),
        "a bulk scan filled the cache: {before} -> {after_bulk} bytes"
    );
    scan(false);
    let after_scan = s.block_cache_usage();
    assert!(
        after_scan >= after_bulk + (2 << 20),
        "a plain scan should fill the cache: {after_bulk} -> {after_scan} bytes"
    );
    s.close().unwrap();
}

/// `split_points` estimates from the SST files' index blocks where a range's
/// bytes divide evenly: the keys between consecutive points are about equal in
/// number (equal-sized entries), every point lies inside the range, and a range
/// still all in the memtable gives none.
#[test]
fn split_points_divide_a_range_into_about_equal_parts() {
    const ROWS: u32 = 40_000;
    let dir = tempfile::tempdir().unwrap();
    let key = |table: u8, i: u32| [&[table][..], &(i * 7).to_be_bytes()].concat();
    {
        let s = RocksStorage::open(dir.path(), &small_options()).unwrap();
        for chunk in 0..ROWS / 1_000 {
            let mut b = WriteBatch::new();
            for i in chunk * 1_000..(chunk + 1) * 1_000 {
                // Two "tables": only the first is split.
                b.put(Keyspace::Rows, key(1, i), noise(u64::from(i), 100));
                b.put(Keyspace::Rows, key(2, i), noise(u64::from(i), 100));
            }
            s.write(b, false).unwrap();
        }
        s.close().unwrap();
    }
    let s = RocksStorage::open(dir.path(), &small_options()).unwrap();
    let range = KeyRange::prefix(&[1]);
    let points = s.split_points(Keyspace::Rows, &range, 8).unwrap();
    assert!(points.len() >= 6, "{} points", points.len());
    assert!(points.windows(2).all(|w| w[0] < w[1]), "ascending");
    assert!(points.iter().all(|p| range.contains(p)), "inside the range");
    // Keys per part, from the range's start through each point to its end.
    let mut bounds = vec![key(1, 0)];
    bounds.extend(points.iter().cloned());
    bounds.push(vec![2]);
    let mut sizes = Vec::new();
    for w in bounds.windows(2) {
        let part = KeyRange {
            start: std::ops::Bound::Included(w[0].clone()),
            end: std::ops::Bound::Excluded(w[1].clone()),
        };
        let mut n = 0u32;
        s.scan(Keyspace::Rows, &part, false, &mut |_, _| {
            n += 1;
            ControlFlow::Continue(())
        })
        .unwrap();
        sizes.push(n);
    }
    assert_eq!(sizes.iter().sum::<u32>(), ROWS);
    let even = ROWS / sizes.len() as u32;
    assert!(
        sizes.iter().all(|&n| n > even / 2 && n < even * 3 / 2),
        "parts of {sizes:?} keys, about {even} each expected"
    );
    // An unbounded range is not split; nor is one whose data is all in the
    // memtable (the estimates read only SST files).
    assert!(s
        .split_points(Keyspace::Rows, &KeyRange::all(), 8)
        .unwrap()
        .is_empty());
    let mut b = WriteBatch::new();
    for i in 0..1_000 {
        b.put(Keyspace::Rows, key(3, i), noise(u64::from(i), 100));
    }
    s.write(b, false).unwrap();
    assert!(s
        .split_points(Keyspace::Rows, &KeyRange::prefix(&[3]), 8)
        .unwrap()
        .is_empty());
    s.close().unwrap();
}

#[test]
fn synced_writes_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = RocksStorage::open(dir.path(), &small_options()).unwrap();
        let mut b = WriteBatch::new();
        for ks in Keyspace::ALL {
            b.put(ks, b"k".to_vec(), ks.name().as_bytes().to_vec());
            b.put(ks, b"doomed".to_vec(), b"x".to_vec());
        }
        s.write(b, true).unwrap();
        let mut b = WriteBatch::new();
        b.delete(Keyspace::Rows, b"doomed".to_vec());
        b.put(Keyspace::Meta, b"k".to_vec(), b"meta v2".to_vec());
        s.write(b, false).unwrap();
        s.sync().unwrap();
        // Dropped here without close(): Drop must leave a reopenable database.
    }
    let s = RocksStorage::open(dir.path(), &small_options()).unwrap();
    assert_eq!(
        s.get(Keyspace::Meta, b"k").unwrap().as_deref(),
        Some(&b"meta v2"[..])
    );
    for ks in [Keyspace::Rows, Keyspace::History, Keyspace::Index] {
        assert_eq!(
            s.get(ks, b"k").unwrap().as_deref(),
            Some(ks.name().as_bytes())
        );
    }
    assert_eq!(s.get(Keyspace::Rows, b"doomed").unwrap(), None);
    assert_eq!(
        s.get(Keyspace::Index, b"doomed").unwrap().as_deref(),
        Some(&b"x"[..])
    );
    s.close().unwrap();
}

#[test]
fn open_creates_every_column_family() {
    let dir = tempfile::tempdir().unwrap();
    RocksStorage::open(dir.path(), &small_options())
        .unwrap()
        .close()
        .unwrap();
    let mut names = rocksdb::DB::list_cf(&rocksdb::Options::default(), dir.path()).unwrap();
    names.sort();
    let mut want: Vec<String> = Keyspace::ALL.iter().map(|k| k.name().to_string()).collect();
    want.push("default".to_string());
    want.sort();
    assert_eq!(names, want);
}

#[test]
fn unknown_column_family_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut opts = rocksdb::Options::default();
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        let _db = rocksdb::DB::open_cf(&opts, dir.path(), ["rows", "from_the_future"]).unwrap();
    }
    let err = RocksStorage::open(dir.path(), &small_options()).unwrap_err();
    assert!(
        matches!(&err, Error::Corrupt(m) if m.contains("from_the_future")),
        "{err:?}"
    );
}

#[test]
fn missing_database_without_create_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let options = RocksOptions {
        create_if_missing: false,
        ..small_options()
    };
    let err = RocksStorage::open(&dir.path().join("absent"), &options).unwrap_err();
    assert!(matches!(err, Error::Io(_)), "{err:?}");
}

#[test]
fn second_open_of_a_live_database_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let first = RocksStorage::open(dir.path(), &small_options()).unwrap();
    let err = RocksStorage::open(dir.path(), &small_options()).unwrap_err();
    assert!(matches!(err, Error::Io(_)), "{err:?}");
    drop(first);
    RocksStorage::open(dir.path(), &small_options()).unwrap();
}

// ---- kill -9 ---------------------------------------------------------------------

const CHILD_ENV: &str = "CANYON_ROCKS_CRASH_CHILD_DIR";
/// Set in the child of the buffered variant: `buffer_wal_until_sync` on.
const BUFFERED_ENV: &str = "CANYON_ROCKS_CRASH_BUFFERED";
const BATCH_KEYS: u64 = 8;

/// The keys of batch `n`: `BATCH_KEYS` keys in every keyspace, all holding `n`.
fn crash_batch(n: u64) -> WriteBatch {
    let mut b = WriteBatch::new();
    for ks in Keyspace::ALL {
        for j in 0..BATCH_KEYS {
            let mut k = n.to_be_bytes().to_vec();
            k.extend_from_slice(&j.to_be_bytes());
            b.put(ks, k, noise(n * 100 + j, 512));
        }
    }
    b
}

/// Child side: write numbered batches forever, reporting each synced one on stdout.
fn crash_child(dir: &Path, buffered: bool) -> ! {
    let options = RocksOptions {
        buffer_wal_until_sync: buffered,
        ..small_options()
    };
    let s = RocksStorage::open(dir, &options).unwrap();
    let mut n = 0u64;
    loop {
        s.write(crash_batch(n), false).unwrap();
        if n.is_multiple_of(20) {
            s.sync().unwrap();
            println!("synced {n}");
        }
        n += 1;
    }
}

/// Kill -9 a process in the middle of writing. After reopening, every batch is
/// present whole or absent in every keyspace, the present ones are a prefix of the
/// write order, and that prefix covers every batch reported synced.
///
/// (A process kill leaves the OS page cache intact, so this checks atomicity and
/// ordering of recovery, not fsync; power loss needs a fault-injecting file
/// system.)
#[test]
fn kill9_keeps_batches_whole_and_a_prefix() {
    kill9_rounds("kill9_keeps_batches_whole_and_a_prefix", false);
}

/// The same with the WAL records kept in RocksDB's buffer until each sync
/// (`buffer_wal_until_sync`, RocksDB's `manual_wal_flush`): the kill loses the
/// unsynced tail, but never a synced batch, never half a batch, never a gap —
/// also across the memtable flushes the small write buffers force.
#[test]
fn kill9_with_the_wal_buffered_until_sync_loses_only_unsynced_batches() {
    kill9_rounds(
        "kill9_with_the_wal_buffered_until_sync_loses_only_unsynced_batches",
        true,
    );
}

/// The parent side of the kill -9 tests (or the child's, when `CHILD_ENV` is set).
fn kill9_rounds(test_name: &str, buffered: bool) {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        crash_child(Path::new(&dir), std::env::var(BUFFERED_ENV).is_ok());
    }
    let dir = tempfile::tempdir().unwrap();
    for round in 0..3u64 {
        let mut child = Command::new(std::env::current_exe().unwrap());
        if buffered {
            child.env(BUFFERED_ENV, "1");
        }
        let mut child = child
            .args(["--exact", test_name, "--nocapture"])
            .args(["--test-threads", "1"])
            .env(CHILD_ENV, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (mut synced, mut reused) = (None, false);
        // The small write buffers (1 MiB, ~250 batches) make WAL files
        // obsolete within the round, and the default `recycle_wal_files`
        // reuses them. Kill only once the child's info log (`LOG`, until the
        // reopen below renames it) says a WAL was reused: the kill then lands
        // while the process writes over a recycled WAL, whose tail holds
        // records of the file's previous life, which recovery must not
        // replay. The target varies where in the WAL the kill lands.
        let target = 300 + round * 37;
        let log = dir.path().join("LOG");
        let recycled = || {
            std::fs::read(&log)
                .is_ok_and(|t| String::from_utf8_lossy(&t).contains("from recycle list"))
        };
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap();
            if let Some(n) = line.strip_prefix("synced ") {
                let n: u64 = n.parse().unwrap();
                synced = Some(n);
                if n >= target && recycled() {
                    reused = true;
                    break;
                }
                assert!(
                    n < 20_000,
                    "round {round}: no WAL file recycled after {n} batches"
                );
            }
        }
        // Let it run on un-synced for a while, so the kill lands mid-write.
        std::thread::sleep(std::time::Duration::from_millis(1 + round * 7));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let synced = synced.expect("child reported no synced batch");
        assert!(
            reused,
            "round {round}: the child stopped before reusing a WAL"
        );

        let s = RocksStorage::open(dir.path(), &small_options()).unwrap();
        let mut per_batch = std::collections::BTreeMap::<u64, u64>::new();
        for ks in Keyspace::ALL {
            s.scan(ks, &KeyRange::all(), false, &mut |k, _| {
                let n = u64::from_be_bytes(k[..8].try_into().unwrap());
                *per_batch.entry(n).or_default() += 1;
                ControlFlow::Continue(())
            })
            .unwrap();
        }
        for (n, keys) in &per_batch {
            assert_eq!(
                *keys,
                BATCH_KEYS * Keyspace::ALL.len() as u64,
                "batch {n} partly recovered"
            );
        }
        let present: Vec<u64> = per_batch.keys().copied().collect();
        let want: Vec<u64> = (0..present.len() as u64).collect();
        assert_eq!(present, want, "recovered batches are not a prefix");
        assert!(present.len() as u64 > synced, "synced batch {synced} lost");
        // The next child starts over at batch 0: clear the keyspaces so each
        // round checks its own crash.
        let mut b = WriteBatch::new();
        for ks in Keyspace::ALL {
            s.scan(ks, &KeyRange::all(), false, &mut |k, _| {
                b.delete(ks, k.to_vec());
                ControlFlow::Continue(())
            })
            .unwrap();
        }
        s.write(b, true).unwrap();
        assert_eq!(count(&s, Keyspace::Rows), 0);
        s.close().unwrap();
    }
}

/// A scan that steps over many hidden old versions in the Rows memtable marks
/// it for flush (`rows_scan_flush_entries`), which keeps only the newest
/// version of each key; with the trigger off, nothing is flushed.
#[test]
fn scans_over_many_old_versions_flush_the_rows_memtable() {
    for trigger in [64, 0] {
        let dir = tempfile::tempdir().unwrap();
        let options = RocksOptions {
            rows_scan_flush_entries: trigger,
            ..small_options()
        };
        let s = RocksStorage::open(dir.path(), &options).unwrap();
        let ssts = || {
            std::fs::read_dir(dir.path())
                .unwrap()
                .filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .path()
                        .extension()
                        .is_some_and(|x| x == "sst")
                })
                .count()
        };
        // 100 keys written 6 times: 5 hidden versions of each in the memtable
        // (fewer than the 8 after which RocksDB re-seeks past a key's versions
        // instead of stepping over them: the scan steps over all 500).
        for round in 0..6u32 {
            let mut b = WriteBatch::new();
            for k in 0..100u32 {
                b.put(
                    Keyspace::Rows,
                    k.to_be_bytes().to_vec(),
                    round.to_be_bytes().to_vec(),
                );
            }
            s.write(b, false).unwrap();
        }
        assert_eq!(ssts(), 0, "nothing flushed before the scan");
        let mut newest = 0;
        s.scan(Keyspace::Rows, &KeyRange::all(), false, &mut |_, v| {
            assert_eq!(v, 5u32.to_be_bytes());
            newest += 1;
            ControlFlow::Continue(())
        })
        .unwrap();
        assert_eq!(newest, 100);
        // RocksDB notices a marked memtable after a write and switches it at
        // the write after that.
        let write = |i: u32| {
            let mut b = WriteBatch::new();
            b.put(Keyspace::Rows, b"z".to_vec(), i.to_be_bytes().to_vec());
            s.write(b, false).unwrap();
        };
        write(0);
        write(1);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while trigger > 0 && ssts() == 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        if trigger > 0 {
            assert!(ssts() > 0, "the scan did not trigger a flush");
        } else {
            std::thread::sleep(std::time::Duration::from_millis(300));
            assert_eq!(ssts(), 0, "flushed with the trigger off");
        }
        assert_eq!(count(&s, Keyspace::Rows), 101);
    }
}

/// A checkpoint holds every batch written before it — buffered in the WAL
/// (`buffer_wal_until_sync`) or in the memtable — and none written after,
/// in every keyspace, and opens as a database of its own (hot backup).
#[test]
fn checkpoint_is_a_cut_of_the_write_order() {
    let dir = tempfile::tempdir().unwrap();
    let options = RocksOptions {
        buffer_wal_until_sync: true,
        ..small_options()
    };
    let s = RocksStorage::open(&dir.path().join("db"), &options).unwrap();
    for i in 0u32..1000 {
        let mut b = WriteBatch::new();
        b.put(
            Keyspace::Rows,
            i.to_be_bytes().to_vec(),
            noise(i.into(), 100),
        );
        b.put(Keyspace::Meta, b"last".to_vec(), i.to_be_bytes().to_vec());
        s.write(b, false).unwrap();
    }
    let cp = dir.path().join("cp");
    s.checkpoint(&cp).unwrap();
    let mut b = WriteBatch::new();
    b.put(
        Keyspace::Rows,
        5000u32.to_be_bytes().to_vec(),
        b"after".to_vec(),
    );
    b.put(
        Keyspace::Meta,
        b"last".to_vec(),
        5000u32.to_be_bytes().to_vec(),
    );
    s.write(b, true).unwrap();
    // An existing directory is refused, not overwritten.
    assert!(s.checkpoint(&cp).is_err());

    let c = RocksStorage::open(&cp, &options).unwrap();
    assert_eq!(count(&c, Keyspace::Rows), 1000);
    assert_eq!(
        c.get(Keyspace::Meta, b"last").unwrap(),
        Some(999u32.to_be_bytes().to_vec())
    );
    assert_eq!(
        c.get(Keyspace::Rows, &7u32.to_be_bytes()).unwrap(),
        Some(noise(7, 100))
    );
    assert_eq!(count(&s, Keyspace::Rows), 1001);
}

/// `Storage::property` reads RocksDB's properties, per keyspace or for the
/// whole database (SHOW ENGINE INNODB STATUS's ROCKSDB section); unknown
/// names and names RocksDB cannot take are `None`.
#[test]
fn properties_are_read_per_keyspace_and_for_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let s = RocksStorage::open(dir.path(), &small_options()).unwrap();
    let mut batch = WriteBatch::new();
    for i in 0u32..100 {
        batch.put(Keyspace::Rows, i.to_be_bytes().to_vec(), b"v".to_vec());
    }
    s.write(batch, true).unwrap();
    let num = |k: Option<Keyspace>, name: &str| -> u64 {
        s.property(k, name)
            .unwrap_or_else(|| panic!("{name} is a property"))
            .trim()
            .parse()
            .unwrap()
    };
    assert_eq!(num(Some(Keyspace::Rows), "rocksdb.estimate-num-keys"), 100);
    assert_eq!(num(Some(Keyspace::Index), "rocksdb.estimate-num-keys"), 0);
    assert!(num(Some(Keyspace::Rows), "rocksdb.cur-size-all-mem-tables") > 0);
    assert_eq!(num(None, "rocksdb.num-running-compactions"), 0);
    assert_eq!(num(Some(Keyspace::Rows), "rocksdb.num-files-at-level0"), 0);
    let stats = s.property(Some(Keyspace::Rows), "rocksdb.stats").unwrap();
    assert!(stats.contains("Compaction Stats [rows]"), "{stats}");
    assert_eq!(s.property(None, "rocksdb.no-such-property"), None);
    assert_eq!(s.property(None, "rocksdb.stats\0x"), None);
    // The in-memory storage has none.
    let m = canyon_storage::MemoryStorage::new();
    assert_eq!(
        m.property(Some(Keyspace::Rows), "rocksdb.estimate-num-keys"),
        None
    );
}

/// A bulk load's sorted output is cut into files of about
/// `INGEST_FILE_BYTES` (so that no filter or index block outgrows the block
/// cache, nor a later compaction rewrites a whole table), in key order, and
/// ingesting them all gives back every entry.
#[test]
fn sorted_files_are_cut_at_the_ingest_size_and_ingest_whole() {
    use canyon_storage::INGEST_FILE_BYTES;
    const VALUE: usize = 4096; // incompressible: LZ4 keeps ~ the same bytes
    let rows = (2 * INGEST_FILE_BYTES / VALUE as u64) + 1_000; // a bit over two files' worth
    let dir = tempfile::tempdir().unwrap();
    let s = RocksStorage::open(&dir.path().join("db"), &small_options()).unwrap();
    let key = |i: u64| i.to_be_bytes().to_vec();
    let base = dir.path().join("load.sst");
    let mut w = s.sorted_file_writer(Keyspace::Rows, &base).unwrap();
    for i in 0..rows {
        w.add(&key(i), &noise(i, VALUE)).unwrap();
    }
    let files = w.finish().unwrap();
    assert_eq!(files.len(), 3, "{files:?}");
    assert_eq!(files[0], base);
    for f in &files[..2] {
        let len = std::fs::metadata(f).unwrap().len();
        assert!(
            (INGEST_FILE_BYTES..INGEST_FILE_BYTES + (1 << 20)).contains(&len),
            "{} is {len} bytes",
            f.display()
        );
    }
    s.ingest(
        &files
            .iter()
            .map(|f| (Keyspace::Rows, f.clone()))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    assert_eq!(count(&s, Keyspace::Rows), rows as usize);
    for i in [0, rows / 2, rows - 1] {
        assert_eq!(
            s.get(Keyspace::Rows, &key(i)).unwrap(),
            Some(noise(i, VALUE))
        );
    }
    // Nothing written: no file.
    let w = s
        .sorted_file_writer(Keyspace::Rows, &dir.path().join("empty.sst"))
        .unwrap();
    assert!(w.finish().unwrap().is_empty());
    s.close().unwrap();
}
