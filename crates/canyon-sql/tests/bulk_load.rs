//! LOAD DATA's bulk path (canyon-txn's `bulk.rs`, `crate::session`'s load
//! module doc): a load into an empty table as sorted runs ingested at
//! commit. What it must keep from the ordinary path: the rows and their
//! index entries, INSERT's duplicate rules (strict: 1062 and nothing
//! loaded; IGNORE / LOCAL: the first row wins, a warning), other sessions'
//! snapshots, writers that wait rather than fail, and all-or-nothing across
//! a failure at any point of the commit — on the in-memory storage and on
//! RocksDB (SST files ingested).

#![allow(clippy::unwrap_used)] // a test: a failed unwrap is a failed test

mod common;

use canyon_common::{Error, Result};
use canyon_sql::{Engine, QueryResult, Session};
use canyon_storage::{KeyRange, Keyspace, SortedFileWriter, Storage, WriteBatch, WriteOp};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

fn engine_on(storage: Arc<dyn Storage>, dir: &Path, bootstrap: bool) -> Arc<Engine> {
    let mut cfg = common::config(Duration::from_secs(5));
    cfg.secure_file_priv = Some(dir.to_path_buf());
    cfg.local_infile = true;
    let e = Engine::open(storage, cfg).expect("engine opens");
    if bootstrap {
        e.bootstrap_root("").expect("root account");
        let mut s = e.session(1, "root", "localhost");
        common::ok(&mut s, "CREATE DATABASE ld");
    }
    e
}

fn session(e: &Arc<Engine>, id: u32) -> Session {
    let mut s = e.session(id, "root", "localhost");
    common::ok(&mut s, "USE ld");
    s.set_client_local_files(true);
    s
}

fn loads(e: &Arc<Engine>) -> u64 {
    e.txn_manager().bulk_loads_committed()
}

fn code(e: &Error) -> u16 {
    match e {
        Error::DuplicateEntry { .. } => 1062,
        Error::LockWaitTimeout => 1205,
        Error::Sql { code, .. } => *code,
        other => panic!("unexpected error {other:?}"),
    }
}

fn info(r: Result<QueryResult>) -> String {
    match r {
        Ok(QueryResult::Ok { info, .. }) => info,
        other => panic!("expected OK, got {other:?}"),
    }
}

fn one(s: &mut Session, sql: &str) -> String {
    common::rows(s, sql)[0][0].clone()
}

const TABLE: &str = "CREATE TABLE t (id INT NOT NULL PRIMARY KEY, k INT NOT NULL, \
                     c VARCHAR(20) NOT NULL, KEY k_1 (k))";

/// Rows `id \t id*7 % 1000 \t c<id>` for each id.
fn file(dir: &Path, name: &str, ids: impl Iterator<Item = u32>) -> PathBuf {
    let mut text = String::new();
    for i in ids {
        text.push_str(&format!("{i}\t{}\tc{i}\n", i * 7 % 1000));
    }
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write the file");
    p
}

fn load_sql(p: &Path, modifier: &str) -> String {
    format!("LOAD DATA INFILE '{}' {modifier} INTO TABLE t", p.display())
}

/// Checks every row 1..=n through the primary key and through the index.
fn check_rows(s: &mut Session, n: u32) {
    assert_eq!(one(s, "SELECT COUNT(*) FROM t"), n.to_string());
    let expect: u64 = (1..=n as u64).sum();
    assert_eq!(one(s, "SELECT SUM(id) FROM t"), expect.to_string());
    // The index: every k finds its rows, and only them.
    let by_index = common::rows(
        s,
        "SELECT id, k FROM t FORCE INDEX (k_1) WHERE k = 7 ORDER BY id",
    );
    let want: Vec<Vec<String>> = (1..=n)
        .filter(|i| i * 7 % 1000 == 7)
        .map(|i| vec![i.to_string(), "7".into()])
        .collect();
    assert_eq!(by_index, want);
    assert_eq!(
        one(s, "SELECT COUNT(*) FROM t FORCE INDEX (k_1) WHERE k >= 0"),
        n.to_string()
    );
}

#[test]
fn a_load_into_an_empty_table_is_bulk_and_keeps_rows_and_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_on(
        Arc::new(canyon_storage::MemoryStorage::new()),
        dir.path(),
        true,
    );
    let mut s = session(&e, 2);
    common::ok(&mut s, TABLE);
    let p = file(dir.path(), "a.tsv", 1..=5000);
    let before = loads(&e);
    assert_eq!(
        info(common::run(&mut s, &load_sql(&p, ""))),
        "Records: 5000  Deleted: 0  Skipped: 0  Warnings: 0"
    );
    assert_eq!(loads(&e), before + 1, "the bulk path committed");
    check_rows(&mut s, 5000);
    // The table is an ordinary one afterwards: INSERT's duplicate check
    // finds the loaded rows, new rows go in, reads see both.
    let err = common::run(&mut s, "INSERT INTO t VALUES (17, 1, 'x')").unwrap_err();
    assert_eq!(code(&err), 1062);
    common::ok(&mut s, "INSERT INTO t VALUES (5001, 7, 'new')");
    common::ok(&mut s, "UPDATE t SET k = 7 WHERE id = 2");
    assert_eq!(
        one(
            &mut s,
            "SELECT COUNT(*) FROM t FORCE INDEX (k_1) WHERE k = 7"
        ),
        "7"
    );
    // A second load into the (now non-empty) table takes the old path.
    let p2 = file(dir.path(), "b.tsv", 6000..=6010);
    common::run(&mut s, &load_sql(&p2, "")).unwrap();
    assert_eq!(loads(&e), before + 1);
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t"), "5012");
    // No scratch files are left behind.
    let scratch = e.txn_manager().storage().scratch_dir();
    let left = std::fs::read_dir(&scratch).map(|d| d.count()).unwrap_or(0);
    assert_eq!(left, 0, "scratch files left in {}", scratch.display());
}

#[test]
fn duplicates_strict_fail_with_nothing_loaded_ignore_keeps_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_on(
        Arc::new(canyon_storage::MemoryStorage::new()),
        dir.path(),
        true,
    );
    let mut s = session(&e, 2);
    common::ok(&mut s, TABLE);
    // Row 4 repeats id 2 with another k and c; row 6 repeats id 1.
    let p = dir.path().join("dup.tsv");
    std::fs::write(
        &p,
        "1\t10\ta\n2\t20\tb\n3\t30\tc\n2\t99\tdup\n5\t50\te\n1\t98\tdup2\n",
    )
    .unwrap();
    let before = loads(&e);
    let err = common::run(&mut s, &load_sql(&p, "")).unwrap_err();
    assert_eq!(code(&err), 1062);
    // The first duplicate in file order is the one reported (id 2, row 4).
    assert!(
        matches!(&err, Error::DuplicateEntry { value, .. } if value == "2"),
        "{err:?}"
    );
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t"), "0");
    assert_eq!(loads(&e), before);
    // IGNORE: the first row of each key stays, the others are warnings.
    assert_eq!(
        info(common::run(&mut s, &load_sql(&p, "IGNORE"))),
        "Records: 6  Deleted: 0  Skipped: 2  Warnings: 2"
    );
    // In file order: row 4 (id 2), then row 6 (id 1).
    let w = common::rows(&mut s, "SHOW WARNINGS");
    assert_eq!(w.len(), 2);
    assert_eq!(w[0][1], "1062");
    assert!(w[0][2].contains("'2'"), "{:?}", w[0]);
    assert!(w[1][2].contains("'1'"), "{:?}", w[1]);
    assert_eq!(loads(&e), before + 1);
    assert_eq!(
        common::rows(&mut s, "SELECT id, k, c FROM t ORDER BY id"),
        vec![
            vec!["1", "10", "a"],
            vec!["2", "20", "b"],
            vec!["3", "30", "c"],
            vec!["5", "50", "e"],
        ]
    );
    // A skipped row leaves no index entry behind.
    assert_eq!(
        one(
            &mut s,
            "SELECT COUNT(*) FROM t FORCE INDEX (k_1) WHERE k IN (98, 99)"
        ),
        "0"
    );
    // LOCAL is IGNORE too.
    common::ok(&mut s, "CREATE TABLE t2 LIKE t");
    match common::run(&mut s, "LOAD DATA LOCAL INFILE 'x' INTO TABLE t2") {
        Err(Error::LocalInfileRequest(_)) => {}
        other => panic!("{other:?}"),
    }
    let data = std::fs::read(&p).unwrap();
    let mut sent = false;
    let r = s.finish_local_infile(&mut |buf: &mut Vec<u8>| {
        if sent {
            return Ok(false);
        }
        sent = true;
        buf.extend_from_slice(&data);
        Ok(true)
    });
    assert_eq!(info(r), "Records: 6  Deleted: 0  Skipped: 2  Warnings: 2");
    assert_eq!(loads(&e), before + 2);
    assert_eq!(
        one(&mut s, "SELECT GROUP_CONCAT(c ORDER BY id) FROM t2"),
        "a,b,c,e"
    );
}

#[test]
fn a_snapshot_taken_before_the_load_does_not_see_it() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_on(
        Arc::new(canyon_storage::MemoryStorage::new()),
        dir.path(),
        true,
    );
    let mut s = session(&e, 2);
    let mut r = session(&e, 3);
    common::ok(&mut s, TABLE);
    common::ok(&mut r, "START TRANSACTION WITH CONSISTENT SNAPSHOT");
    assert_eq!(one(&mut r, "SELECT COUNT(*) FROM t"), "0");
    let p = file(dir.path(), "a.tsv", 1..=300);
    let before = loads(&e);
    common::run(&mut s, &load_sql(&p, "")).unwrap();
    assert_eq!(loads(&e), before + 1);
    assert_eq!(one(&mut r, "SELECT COUNT(*) FROM t"), "0");
    assert_eq!(
        one(
            &mut r,
            "SELECT COUNT(*) FROM t FORCE INDEX (k_1) WHERE k = 7"
        ),
        "0"
    );
    assert_eq!(
        common::rows(&mut r, "SELECT c FROM t WHERE id = 5").len(),
        0
    );
    common::ok(&mut r, "COMMIT");
    check_rows(&mut r, 300);
}

#[test]
fn tables_the_bulk_path_cannot_keep_take_the_old_path() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_on(
        Arc::new(canyon_storage::MemoryStorage::new()),
        dir.path(),
        true,
    );
    let mut s = session(&e, 2);
    let p = file(dir.path(), "a.tsv", 1..=50);
    let before = loads(&e);
    // A UNIQUE secondary index.
    common::ok(
        &mut s,
        "CREATE TABLE u (id INT PRIMARY KEY, k INT, c VARCHAR(20), UNIQUE KEY (c))",
    );
    common::run(
        &mut s,
        &format!("LOAD DATA INFILE '{}' INTO TABLE u", p.display()),
    )
    .unwrap();
    // Inside a transaction.
    common::ok(&mut s, TABLE);
    common::ok(&mut s, "BEGIN");
    common::run(&mut s, &load_sql(&p, "")).unwrap();
    common::ok(&mut s, "ROLLBACK");
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t"), "0");
    // A table with a trigger.
    common::ok(&mut s, "CREATE TABLE log (n INT)");
    common::ok(
        &mut s,
        "CREATE TABLE tr (id INT PRIMARY KEY, k INT, c VARCHAR(20))",
    );
    common::ok(
        &mut s,
        "CREATE TRIGGER tr_ai AFTER INSERT ON tr FOR EACH ROW INSERT INTO log VALUES (NEW.id)",
    );
    common::run(
        &mut s,
        &format!("LOAD DATA INFILE '{}' INTO TABLE tr", p.display()),
    )
    .unwrap();
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM log"), "50");
    // REPLACE.
    common::run(&mut s, &load_sql(&p, "REPLACE")).unwrap();
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM u"), "50");
    assert_eq!(loads(&e), before, "none of these was a bulk load");
    // The same table once emptied by DELETE still has tombstones: old path.
    common::ok(&mut s, "DELETE FROM t");
    common::run(&mut s, &load_sql(&p, "")).unwrap();
    assert_eq!(loads(&e), before);
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t"), "50");
}

/// A LOAD DATA LOCAL whose client sends `first`, then stops until `go`
/// is received: the load is in progress (its gate closed) meanwhile.
fn paused_local_load(
    e: &Arc<Engine>,
    first: Vec<u8>,
    started: mpsc::Sender<()>,
    go: mpsc::Receiver<()>,
) -> std::thread::JoinHandle<Result<QueryResult>> {
    let e = e.clone();
    std::thread::spawn(move || {
        let mut s = session(&e, 10);
        match common::run(&mut s, "LOAD DATA LOCAL INFILE 'x' INTO TABLE t") {
            Err(Error::LocalInfileRequest(_)) => {}
            other => return other,
        }
        let mut step = 0;
        s.finish_local_infile(&mut |buf: &mut Vec<u8>| {
            step += 1;
            match step {
                1 => {
                    buf.extend_from_slice(&first);
                    Ok(true)
                }
                2 => {
                    started.send(()).unwrap();
                    go.recv().unwrap();
                    Ok(false)
                }
                _ => Ok(false),
            }
        })
    })
}

#[test]
fn writers_wait_for_the_load_and_time_out_as_on_a_row_lock() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_on(
        Arc::new(canyon_storage::MemoryStorage::new()),
        dir.path(),
        true,
    );
    let mut s = session(&e, 2);
    common::ok(&mut s, TABLE);
    let before = loads(&e);
    let data: String = (1..=100).map(|i| format!("{i}\t{i}\tc{i}\n")).collect();
    let (started_tx, started) = mpsc::channel();
    let (go, go_rx) = mpsc::channel();
    let loader = paused_local_load(&e, data.into_bytes(), started_tx, go_rx);
    started.recv().unwrap();
    // A writer of a row the file has waits, and so does one of a new row.
    let spawn_insert = |id: u32, sql: String| {
        let e = e.clone();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut w = session(&e, id);
            tx.send(common::run(&mut w, &sql)).unwrap();
        });
        rx
    };
    let dup = spawn_insert(20, "INSERT INTO t VALUES (5, 1, 'w')".into());
    let new = spawn_insert(21, "INSERT INTO t VALUES (500, 1, 'w')".into());
    assert!(
        dup.recv_timeout(Duration::from_millis(400)).is_err(),
        "the writer waits"
    );
    assert!(
        new.recv_timeout(Duration::from_millis(10)).is_err(),
        "the writer waits"
    );
    // A reader does not wait: it sees the table as before the load.
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t"), "0");
    // A writer with a short lock wait timeout gives up with 1205.
    let mut impatient = session(&e, 22);
    common::ok(&mut impatient, "SET SESSION innodb_lock_wait_timeout = 1");
    let t0 = std::time::Instant::now();
    let err = common::run(&mut impatient, "DELETE FROM t WHERE id = 7").unwrap_err();
    assert_eq!(code(&err), 1205);
    assert!(t0.elapsed() >= Duration::from_millis(900));
    go.send(()).unwrap();
    assert_eq!(
        info(loader.join().unwrap()),
        "Records: 100  Deleted: 0  Skipped: 0  Warnings: 0"
    );
    assert_eq!(loads(&e), before + 1);
    // The waiting writers went on once the load committed, and saw it.
    let err = dup
        .recv_timeout(Duration::from_secs(10))
        .unwrap()
        .unwrap_err();
    assert_eq!(code(&err), 1062);
    new.recv_timeout(Duration::from_secs(10)).unwrap().unwrap();
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t"), "101");
}

#[test]
fn kill_query_ends_the_wait_of_a_gated_writer_and_a_killed_load_loads_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_on(
        Arc::new(canyon_storage::MemoryStorage::new()),
        dir.path(),
        true,
    );
    let mut s = session(&e, 2);
    common::ok(&mut s, TABLE);
    let (started_tx, started) = mpsc::channel();
    let (go, go_rx) = mpsc::channel();
    let data: String = (1..=100).map(|i| format!("{i}\t{i}\tc{i}\n")).collect();
    let loader = paused_local_load(&e, data.into_bytes(), started_tx, go_rx);
    started.recv().unwrap();
    let (tx, rx) = mpsc::channel();
    let e2 = e.clone();
    std::thread::spawn(move || {
        let mut w = session(&e2, 30);
        tx.send(common::run(&mut w, "INSERT INTO t VALUES (1000, 1, 'w')"))
            .unwrap();
    });
    assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
    common::ok(&mut s, "KILL QUERY 30");
    let r = rx
        .recv_timeout(Duration::from_secs(5))
        .expect("KILL ends the wait");
    assert!(r.is_err(), "{r:?}");
    // Kill the load itself: nothing of it stays, and the table is free.
    common::ok(&mut s, "KILL QUERY 10");
    go.send(()).unwrap();
    let r = loader.join().unwrap();
    assert!(r.is_err(), "{r:?}");
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t"), "0");
    common::ok(&mut s, "INSERT INTO t VALUES (1, 1, 'after')");
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t"), "1");
}

/// A storage that fails at a chosen point of a bulk commit, to stand for a
/// crash there: 1 = the ingestion fails (before any file is in), 2 = the
/// commit batch after the ingestion fails (the files are in, `last_ts`
/// and the intent record's deletion are not).
struct Faulty {
    inner: Arc<dyn Storage>,
    fail: AtomicU8,
    ingested: AtomicU8,
}

impl Storage for Faulty {
    fn get(&self, keyspace: Keyspace, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.inner.get(keyspace, key)
    }
    fn scan(
        &self,
        keyspace: Keyspace,
        range: &KeyRange,
        reverse: bool,
        f: &mut dyn FnMut(&[u8], &[u8]) -> ControlFlow<()>,
    ) -> Result<()> {
        self.inner.scan(keyspace, range, reverse, f)
    }
    fn write(&self, batch: WriteBatch, sync: bool) -> Result<()> {
        let commit_batch = batch.ops().iter().any(|op| {
            matches!(op, WriteOp::Delete { keyspace: Keyspace::Meta, key } if key.starts_with(b"txn/bulk/"))
        });
        if commit_batch
            && self.fail.load(Ordering::SeqCst) == 2
            && self.ingested.load(Ordering::SeqCst) == 1
        {
            return Err(Error::Io("injected: crash before the commit point".into()));
        }
        self.inner.write(batch, sync)
    }
    fn sync(&self) -> Result<()> {
        self.inner.sync()
    }
    fn name(&self) -> &'static str {
        "faulty"
    }
    fn scratch_dir(&self) -> PathBuf {
        self.inner.scratch_dir()
    }
    fn sorted_file_writer<'a>(
        &'a self,
        keyspace: Keyspace,
        path: &Path,
    ) -> Result<Box<dyn SortedFileWriter + 'a>> {
        self.inner.sorted_file_writer(keyspace, path)
    }
    fn ingest(&self, files: &[(Keyspace, PathBuf)]) -> Result<()> {
        if self.fail.load(Ordering::SeqCst) == 1 {
            // Half the files in, then the failure.
            self.inner.ingest(&files[..1])?;
            return Err(Error::Io("injected: crash during ingestion".into()));
        }
        self.inner.ingest(files)?;
        self.ingested.store(1, Ordering::SeqCst);
        Ok(())
    }
    fn delete_range(&self, keyspace: Keyspace, range: &KeyRange) -> Result<()> {
        self.inner.delete_range(keyspace, range)
    }
}

/// For each failure point: the load fails, and after a restart on the same
/// storage the table is empty (recovery rolled the files back), loadable
/// again; a load that committed survives the restart.
fn crash_around_the_ingest(open: &dyn Fn() -> Arc<dyn Storage>) {
    let dir = tempfile::tempdir().unwrap();
    let p = file(dir.path(), "a.tsv", 1..=2000);
    let mut bootstrap = true;
    for point in [1u8, 2] {
        let inner = open();
        let faulty = Arc::new(Faulty {
            inner: inner.clone(),
            fail: AtomicU8::new(0),
            ingested: AtomicU8::new(0),
        });
        let e = engine_on(faulty.clone(), dir.path(), bootstrap);
        let mut s = session(&e, 2);
        if bootstrap {
            common::ok(&mut s, TABLE);
            bootstrap = false;
        }
        faulty.fail.store(point, Ordering::SeqCst);
        let r = common::run(&mut s, &load_sql(&p, ""));
        assert!(r.is_err(), "point {point}: {r:?}");
        drop(s);
        drop(e);
        drop(faulty);
        // The "restart".
        let e = engine_on(inner, dir.path(), false);
        let mut s = session(&e, 2);
        assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t"), "0", "point {point}");
        assert_eq!(
            one(
                &mut s,
                "SELECT COUNT(*) FROM t FORCE INDEX (k_1) WHERE k >= 0"
            ),
            "0",
            "point {point}"
        );
        let mut intents = 0;
        e.txn_manager()
            .storage()
            .scan(
                Keyspace::Meta,
                &KeyRange::prefix(b"txn/bulk/"),
                false,
                &mut |_, _| {
                    intents += 1;
                    ControlFlow::Continue(())
                },
            )
            .unwrap();
        assert_eq!(intents, 0, "point {point}");
    }
    // Now a load that commits, then a restart: everything is there.
    let e = engine_on(open(), dir.path(), false);
    let mut s = session(&e, 2);
    common::run(&mut s, &load_sql(&p, "")).unwrap();
    assert_eq!(loads(&e), 1);
    drop(s);
    drop(e);
    let e = engine_on(open(), dir.path(), false);
    let mut s = session(&e, 2);
    check_rows(&mut s, 2000);
    // Writes after the restart get timestamps above the load's.
    common::ok(&mut s, "UPDATE t SET c = 'x' WHERE id = 3");
    assert_eq!(one(&mut s, "SELECT c FROM t WHERE id = 3"), "x");
}

#[test]
fn a_failure_around_the_ingest_leaves_nothing_memory() {
    let storage: Arc<dyn Storage> = Arc::new(canyon_storage::MemoryStorage::new());
    crash_around_the_ingest(&|| storage.clone());
}

#[test]
fn a_failure_around_the_ingest_leaves_nothing_rocksdb() {
    let db = tempfile::tempdir().unwrap();
    let path = db.path().to_path_buf();
    crash_around_the_ingest(&|| Arc::new(reopen_rocksdb(&path)));
}

/// Opens the RocksDB at `path`, waiting (a bounded time) while an engine
/// dropped just before still holds it. Dropping the test's last `Arc<Engine>`
/// does not always close the database at once: a background thread (the
/// analysis a 2,000-row load schedules, a group-commit or purge round) holds
/// its own strong handle for the length of its work, and the engine, with
/// RocksDB's LOCK file, closes when that thread lets go. A server never
/// reopens in-process (a restart is a new process), so only tests meet this.
fn reopen_rocksdb(path: &Path) -> canyon_rocksdb::RocksStorage {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        match canyon_rocksdb::RocksStorage::open(path, &canyon_rocksdb::RocksOptions::default()) {
            Ok(s) => return s,
            Err(e)
                if e.to_string().contains("lock hold by current process")
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("rocksdb opens: {e:?}"),
        }
    }
}

#[test]
fn rows_in_reverse_order_round_trip_through_the_sst_files() {
    // The file in descending key order, on RocksDB (SST files); the spill
    // to several runs is canyon-txn's unit test.
    let db = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let storage: Arc<dyn Storage> = Arc::new(
        canyon_rocksdb::RocksStorage::open(db.path(), &canyon_rocksdb::RocksOptions::default())
            .unwrap(),
    );
    let e = engine_on(storage, dir.path(), true);
    let mut s = session(&e, 2);
    common::ok(&mut s, TABLE);
    let p = file(dir.path(), "r.tsv", (1..=3000).rev());
    common::run(&mut s, &load_sql(&p, "")).unwrap();
    assert_eq!(loads(&e), 1);
    check_rows(&mut s, 3000);
    assert_eq!(one(&mut s, "SELECT c FROM t WHERE id = 2999"), "c2999");
}
