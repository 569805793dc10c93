//! Online schema change under concurrent load (see `alter.rs` in the crate):
//! writers insert, update and delete while ADD INDEX back-fills; afterwards the
//! index and the table must agree row for row. Also: catalog pins (a DDL waits
//! for transactions on the older catalog), stale prepared plans, restart.

mod common;

use canyon_common::Error;
use canyon_sql::exec::{decode_table_row, index_key};
use canyon_sql::{Engine, QueryResult, Session, Value};
use canyon_storage::KeyRange;
use canyon_txn::{IsolationLevel, ReadMode};
use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn exec(s: &mut Session, sql: &str) -> Result<QueryResult, Error> {
    s.execute(sql, false)
        .pop()
        .expect("one statement, one result")
}

fn ok(s: &mut Session, sql: &str) -> QueryResult {
    exec(s, sql).unwrap_or_else(|e| panic!("{sql}: {e:?}"))
}

fn rows(s: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    match ok(s, sql) {
        QueryResult::Rows { rows, .. } => rows,
        other => panic!("{sql}: no rows: {other:?}"),
    }
}

fn int(s: &mut Session, sql: &str) -> i64 {
    rows(s, sql)[0][0].to_i64().unwrap_or(0)
}

fn setup(engine: &Arc<Engine>, rows_n: i64) -> Session {
    let mut s = engine.session(1, "root", "localhost");
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "USE d");
    ok(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, u INT, pad VARCHAR(20))",
    );
    for chunk in (1..=rows_n).collect::<Vec<_>>().chunks(500) {
        let values: Vec<String> = chunk
            .iter()
            .map(|i| format!("({i}, {}, {i}, 'p{i}')", i % 97))
            .collect();
        ok(
            &mut s,
            &format!("INSERT INTO t VALUES {}", values.join(",")),
        );
    }
    s
}

/// Compares every public index of `d.t` with a full scan, row for row: the
/// (index key, pk) pairs of a full scan equal those an index scan yields.
fn assert_indexes_agree(engine: &Arc<Engine>) {
    let cat = engine.catalog();
    let t = cat.table("d", "t").expect("table t").clone();
    drop(cat);
    let session = engine.txn_manager().session();
    let mut txn = session.begin(IsolationLevel::RepeatableRead);
    txn.begin_statement();
    for (pos, ix) in t.def.public_indexes() {
        let mut from_table = BTreeSet::new();
        let mut row = Vec::new();
        txn.scan(
            t.def.id,
            &KeyRange::all(),
            false,
            ReadMode::Snapshot,
            &mut |pk, bytes| {
                decode_table_row(&t, bytes, &mut row).expect("row decodes");
                from_table.insert((index_key(&t, pos, &row), pk.to_vec()));
                ControlFlow::Continue(())
            },
        )
        .expect("full scan");
        let mut from_index = BTreeSet::new();
        let mut yielded = 0usize;
        txn.scan_index(
            t.def.id,
            ix.id,
            &KeyRange::all(),
            false,
            ReadMode::Snapshot,
            &mut |k, pk, bytes| {
                decode_table_row(&t, bytes, &mut row).expect("row decodes");
                assert_eq!(
                    index_key(&t, pos, &row),
                    k,
                    "index {} offers a row under a key it does not have",
                    ix.name
                );
                from_index.insert((k.to_vec(), pk.to_vec()));
                yielded += 1;
                ControlFlow::Continue(())
            },
        )
        .expect("index scan");
        assert_eq!(yielded, from_index.len(), "a pk offered twice");
        assert_eq!(
            from_table.len(),
            from_index.len(),
            "index {} and table differ in size",
            ix.name
        );
        assert!(
            from_table == from_index,
            "index {} and table differ",
            ix.name
        );
    }
    txn.rollback();
}

/// Runs `writers` threads of random inserts, updates (of indexed columns) and
/// deletes, some in multi-statement transactions, until `stop`.
fn spawn_writers(
    engine: &Arc<Engine>,
    writers: u32,
    stop: &Arc<AtomicBool>,
    done: &Arc<AtomicU64>,
) -> Vec<std::thread::JoinHandle<()>> {
    (0..writers)
        .map(|w| {
            let engine = engine.clone();
            let stop = stop.clone();
            let done = done.clone();
            std::thread::spawn(move || {
                let mut rng = rand::rngs::StdRng::seed_from_u64(w as u64 + 7);
                let mut s = engine.session(10 + w, "root", "localhost");
                ok(&mut s, "USE d");
                let mut next = 1_000_000 * (w as i64 + 1);
                while !stop.load(Ordering::Relaxed) {
                    let multi = rng.gen_bool(0.3);
                    if multi {
                        ok(&mut s, "BEGIN");
                    }
                    for _ in 0..if multi { 3 } else { 1 } {
                        let id = rng.gen_range(1..20_000);
                        let sql = match rng.gen_range(0..4) {
                            0 => {
                                next += 1;
                                format!(
                                    "INSERT INTO t (id, k, u, pad) VALUES ({next}, {}, {next}, 'w')",
                                    rng.gen_range(0..97)
                                )
                            }
                            1 => format!("UPDATE t SET k = k + 1, pad = 'u' WHERE id = {id}"),
                            2 => format!("DELETE FROM t WHERE id = {id}"),
                            _ => format!("UPDATE t SET u = u + 0, k = {} WHERE id = {id}", id % 13),
                        };
                        match exec(&mut s, &sql) {
                            Ok(_) => {}
                            // Row-lock conflicts between the writers themselves.
                            Err(Error::Deadlock | Error::LockWaitTimeout) => break,
                            Err(e) => panic!("{sql}: {e:?}"),
                        }
                    }
                    if multi {
                        // The transaction may be gone after a deadlock: COMMIT
                        // of no transaction is fine.
                        ok(&mut s, "COMMIT");
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect()
}

#[test]
fn add_index_under_concurrent_writes_agrees_with_the_table() {
    let engine = common::engine(Duration::from_secs(20));
    let mut s = setup(&engine, 20_000);
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let handles = spawn_writers(&engine, 4, &stop, &done);
    std::thread::sleep(Duration::from_millis(100));
    let before = done.load(Ordering::Relaxed);
    let started = std::time::Instant::now();
    ok(&mut s, "ALTER TABLE t ADD INDEX kk (k)");
    eprintln!(
        "ADD INDEX on 20,000 rows took {:?}; {} writer transactions ran meanwhile",
        started.elapsed(),
        done.load(Ordering::Relaxed) - before
    );
    ok(&mut s, "CREATE INDEX kp ON t (pad, k)");
    // A narrowed index is rebuilt by the same protocol.
    ok(
        &mut s,
        "ALTER TABLE t ADD COLUMN extra INT DEFAULT 3, ADD INDEX ke (extra, k)",
    );
    ok(&mut s, "ALTER TABLE t DROP COLUMN extra");
    let kp = engine
        .catalog()
        .table("d", "t")
        .expect("t")
        .def
        .indexes
        .iter()
        .find(|i| i.name == "kp")
        .expect("kp")
        .id;
    ok(&mut s, "ALTER TABLE t DROP INDEX kp");
    ok(&mut s, "ALTER TABLE t ADD INDEX kp2 (pad)");
    std::thread::sleep(Duration::from_millis(100));
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().expect("writer thread");
    }
    assert!(
        done.load(Ordering::Relaxed) > before,
        "the writers made no progress during the ALTERs"
    );
    let names: Vec<String> = engine
        .catalog()
        .table("d", "t")
        .expect("t")
        .def
        .public_indexes()
        .map(|(_, i)| i.name.clone())
        .collect();
    assert_eq!(names, ["kk", "ke", "kp2"]);
    assert_indexes_agree(&engine);
    // DROP INDEX waited for the writers on the older definition before it
    // purged: no entry of the dropped index is left behind.
    let mut left = 0;
    engine
        .txn_manager()
        .storage()
        .scan(
            canyon_storage::Keyspace::Index,
            &KeyRange::prefix(&kp.to_be_bytes()),
            false,
            &mut |_, _| {
                left += 1;
                ControlFlow::Continue(())
            },
        )
        .expect("scan");
    assert_eq!(left, 0, "entries of a dropped index remain");
    // The planner reads the new index and it returns what a full scan does.
    let via_index = int(&mut s, "SELECT COUNT(*) FROM t WHERE k = 5");
    let via_scan = int(&mut s, "SELECT COUNT(*) FROM t WHERE k + 0 = 5");
    assert_eq!(via_index, via_scan);
    let plan: Vec<String> = rows(&mut s, "EXPLAIN SELECT COUNT(*) FROM t WHERE k = 5")[0]
        .iter()
        .map(Value::to_display)
        .collect();
    assert!(
        plan.iter().any(|c| c == "kk"),
        "the new index is not chosen: {plan:?}"
    );
}

#[test]
fn add_unique_index_under_concurrent_writes() {
    let engine = common::engine(Duration::from_secs(20));
    let mut s = setup(&engine, 3000);
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    // Writers keep `u` unique (u = id): the build must succeed.
    let handles = spawn_writers(&engine, 3, &stop, &done);
    std::thread::sleep(Duration::from_millis(50));
    ok(&mut s, "ALTER TABLE t ADD UNIQUE INDEX uu (u)");
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().expect("writer thread");
    }
    assert_indexes_agree(&engine);
    let e = exec(&mut s, "INSERT INTO t VALUES (9999999, 1, 2, 'dup')");
    let dup = matches!(
        exec(&mut s, "INSERT INTO t VALUES (9999998, 1, 2, 'dup')"),
        Err(Error::DuplicateEntry { .. })
    );
    assert!(e.is_err() || dup, "the unique index lets a duplicate in");
}

#[test]
fn a_duplicate_written_during_the_build_fails_the_unique_index_or_the_writer() {
    let engine = common::engine(Duration::from_secs(20));
    let mut s = setup(&engine, 2000);
    let stop = Arc::new(AtomicBool::new(false));
    let dups_written = Arc::new(AtomicU64::new(0));
    let writer = {
        let engine = engine.clone();
        let stop = stop.clone();
        let dups = dups_written.clone();
        std::thread::spawn(move || {
            let mut w = engine.session(50, "root", "localhost");
            ok(&mut w, "USE d");
            let mut id = 5_000_000;
            while !stop.load(Ordering::Relaxed) {
                id += 1;
                // u = 1 exists already (row 1).
                match exec(&mut w, &format!("INSERT INTO t VALUES ({id}, 0, 1, 'd')")) {
                    Ok(_) => {
                        dups.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(Error::DuplicateEntry { .. }) => {}
                    Err(e) => panic!("{e:?}"),
                }
            }
        })
    };
    std::thread::sleep(Duration::from_millis(20));
    let r = exec(&mut s, "ALTER TABLE t ADD UNIQUE INDEX uu (u)");
    stop.store(true, Ordering::Relaxed);
    writer.join().expect("writer");
    let public = engine
        .catalog()
        .table("d", "t")
        .expect("t")
        .def
        .indexes
        .iter()
        .any(|i| i.name == "uu");
    let dups = int(&mut s, "SELECT COUNT(*) FROM t WHERE u = 1");
    match r {
        Ok(_) => {
            assert!(public);
            assert_eq!(dups, 1, "a unique index was built over duplicates");
            assert_indexes_agree(&engine);
        }
        Err(Error::DuplicateEntry { value, key }) => {
            assert!(!public, "a failed index stayed in the catalog");
            assert_eq!((value.as_str(), key.as_str()), ("1", "t.uu"));
            assert!(dups > 1);
        }
        Err(e) => panic!("{e:?}"),
    }
}

#[test]
fn ddl_waits_for_transactions_on_the_older_catalog() {
    let engine = common::engine(Duration::from_millis(300));
    let mut s = setup(&engine, 100);
    let mut a = engine.session(2, "root", "localhost");
    ok(&mut a, "USE d");
    ok(&mut a, "BEGIN");
    ok(&mut a, "INSERT INTO t VALUES (500, 1, 500, 'a')");
    // A's transaction wrote on the catalog without the index: the build must
    // not start until it ends; here it never does, so the ALTER times out
    // (1205) and leaves no index behind.
    assert!(matches!(
        exec(&mut s, "ALTER TABLE t ADD INDEX kk (k)"),
        Err(Error::LockWaitTimeout)
    ));
    assert!(engine
        .catalog()
        .table("d", "t")
        .expect("t")
        .def
        .indexes
        .is_empty());
    ok(&mut a, "COMMIT");
    ok(&mut s, "ALTER TABLE t ADD INDEX kk (k)");
    assert_indexes_agree(&engine);

    // With a longer timeout the DDL simply waits for the commit.
    let engine = common::engine(Duration::from_secs(20));
    let mut s = setup(&engine, 100);
    let mut a = engine.session(2, "root", "localhost");
    ok(&mut a, "USE d");
    ok(&mut a, "BEGIN");
    ok(&mut a, "UPDATE t SET k = 1000 WHERE id = 7");
    let alter = std::thread::spawn(move || {
        ok(&mut s, "ALTER TABLE t ADD INDEX kk (k)");
        (std::time::Instant::now(), s)
    });
    std::thread::sleep(Duration::from_millis(200));
    // The ALTER cannot finish before this commit: compare instants rather
    // than durations, which a loaded machine stretches either way.
    let before_commit = std::time::Instant::now();
    ok(&mut a, "COMMIT");
    let (finished, mut s) = alter.join().expect("alter thread");
    assert!(
        finished >= before_commit,
        "the ALTER did not wait for the commit"
    );
    assert_eq!(int(&mut s, "SELECT id FROM t WHERE k = 1000"), 7);
    assert_indexes_agree(&engine);
}

/// P3 of `ddl::alter`: an ALTER waits only for transactions that wrote its
/// table (and statements in flight), as MySQL's metadata lock does; an open
/// transaction that read it or used other tables does not hold it back
/// (Vitess' VReplication drops a table's indexes while its own transaction
/// on `_vt.copy_state` is open, and waited for itself until the timeout). A
/// REPEATABLE READ snapshot older than a new index or a rewritten table then
/// fails on that table with 1412, and only on it.
#[test]
fn ddl_waits_only_for_transactions_that_wrote_its_table() {
    // A short lock_wait_timeout: an ALTER that waits when it should not
    // fails with 1205 instead of passing slowly.
    let engine = common::engine(Duration::from_millis(300));
    let mut s = setup(&engine, 100);
    ok(&mut s, "CREATE TABLE other (id INT PRIMARY KEY)");
    let mut a = engine.session(2, "root", "localhost");
    ok(&mut a, "USE d");
    ok(&mut a, "BEGIN");
    assert_eq!(int(&mut a, "SELECT COUNT(*) FROM t"), 100);
    ok(&mut a, "INSERT INTO other VALUES (1)");

    // An instant change: A's snapshot still reads t, with the new column.
    ok(&mut s, "ALTER TABLE t ADD COLUMN z INT");
    assert_eq!(int(&mut a, "SELECT COUNT(*) FROM t WHERE z IS NULL"), 100);
    // A new index: A's snapshot predates its back-fill, and a commit came
    // between (with none, the index is complete for that snapshot too, and
    // it may read).
    ok(&mut s, "UPDATE t SET k = k + 1 WHERE id = 3");
    ok(&mut s, "ALTER TABLE t ADD INDEX kk (k)");
    let is_1412 = |r: Result<QueryResult, Error>| matches!(r, Err(Error::Sql { code: 1412, .. }));
    // Reading through the new index fails; through the primary key it
    // reads its snapshot, and it may write (current reads).
    assert!(is_1412(exec(
        &mut a,
        "SELECT COUNT(*) FROM t FORCE INDEX (kk) WHERE k >= 0"
    )));
    assert_eq!(int(&mut a, "SELECT COUNT(*) FROM t WHERE id > 0"), 100);
    ok(&mut a, "UPDATE t SET u = 0 WHERE id = 1");
    // Its other table, and its own write there, are untouched.
    assert_eq!(int(&mut a, "SELECT COUNT(*) FROM other"), 1);
    ok(&mut a, "COMMIT");
    assert_eq!(int(&mut s, "SELECT COUNT(*) FROM other"), 1);
    assert_eq!(int(&mut a, "SELECT u FROM t WHERE id = 1"), 0);
    assert_eq!(
        int(
            &mut a,
            "SELECT COUNT(*) FROM t FORCE INDEX (kk) WHERE k >= 0"
        ),
        100
    );
    assert_indexes_agree(&engine);

    // A transaction that wrote t holds an ALTER of t (1205 here) but not
    // one of another table.
    ok(&mut a, "BEGIN");
    ok(&mut a, "UPDATE t SET u = -1 WHERE id = 2");
    assert!(matches!(
        exec(&mut s, "ALTER TABLE t ADD INDEX uu (u)"),
        Err(Error::LockWaitTimeout)
    ));
    ok(&mut s, "ALTER TABLE other ADD COLUMN w INT");
    ok(&mut a, "COMMIT");
    assert_eq!(int(&mut s, "SELECT u FROM t WHERE id = 2"), -1);

    // A rewrite (a new primary key): a snapshot from before it cannot see
    // the copied rows, so it fails rather than read an empty table.
    ok(&mut a, "BEGIN");
    assert_eq!(int(&mut a, "SELECT COUNT(*) FROM other"), 1);
    ok(
        &mut s,
        "ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (id, k)",
    );
    assert!(is_1412(exec(&mut a, "SELECT COUNT(*) FROM t")));
    ok(&mut a, "ROLLBACK");
    assert_eq!(int(&mut a, "SELECT COUNT(*) FROM t"), 100);
    assert_indexes_agree(&engine);
}

/// information_schema.TABLES.CREATE_TIME: set by CREATE TABLE, moved by
/// every ALTER TABLE (MySQL 8; schema trackers such as Vitess' vttablet
/// notice an ALTER by it), shown in the session's time zone.
#[test]
fn create_time_is_set_by_create_and_moved_by_alter() {
    let engine = common::engine(Duration::from_secs(2));
    let mut s = setup(&engine, 10);
    let q = "SELECT UNIX_TIMESTAMP(CREATE_TIME) FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = 'd' AND TABLE_NAME = 't'";
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970")
            .as_secs() as i64
    };
    let created = int(&mut s, q);
    assert!(created > 0 && created <= now(), "{created}");
    // Second precision, as MySQL's: the ALTER comes a second later.
    std::thread::sleep(Duration::from_millis(1100));
    ok(&mut s, "ALTER TABLE t ADD COLUMN z INT");
    let altered = int(&mut s, q);
    assert!(
        altered > created && altered <= now(),
        "{created} -> {altered}"
    );
    // The same instant read in another zone.
    let shown = |s: &mut Session, zone: &str| {
        ok(s, &format!("SET time_zone = '{zone}'"));
        rows(
            s,
            "SELECT CREATE_TIME FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = 'd' AND TABLE_NAME = 't'",
        )[0][0]
            .to_display()
    };
    let utc = shown(&mut s, "+00:00");
    let plus5 = shown(&mut s, "+05:00");
    let parse = |t: &str| {
        chrono::NaiveDateTime::parse_from_str(t, "%Y-%m-%d %H:%M:%S").expect("a DATETIME")
    };
    assert_eq!(parse(&plus5) - parse(&utc), chrono::Duration::hours(5));
    assert_eq!(int(&mut s, q), altered);
}

#[test]
fn prepared_statements_replan_after_alter() {
    let engine = common::engine(Duration::from_secs(5));
    let mut s = setup(&engine, 10);
    let p = s.prepare("SELECT * FROM t WHERE id = ?").expect("prepare");
    let width = |r: QueryResult| match r {
        QueryResult::Rows { rows, .. } => rows[0].len(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        width(s.execute_prepared(p.id, &[Value::Int(3)]).expect("run")),
        4
    );
    ok(&mut s, "ALTER TABLE t ADD COLUMN z INT DEFAULT 42");
    let r = s.execute_prepared(p.id, &[Value::Int(3)]).expect("run");
    match r {
        QueryResult::Rows { rows, .. } => assert_eq!(rows[0][4], Value::Int(42)),
        other => panic!("{other:?}"),
    }
    let q = s
        .prepare("SELECT pad FROM t WHERE id = ?")
        .expect("prepare");
    ok(&mut s, "ALTER TABLE t DROP COLUMN pad");
    assert!(matches!(
        s.execute_prepared(q.id, &[Value::Int(3)]),
        Err(Error::UnknownColumn { .. })
    ));
    let i = s
        .prepare("INSERT INTO t (id, k) VALUES (?, ?)")
        .expect("prepare");
    ok(
        &mut s,
        "ALTER TABLE t ADD COLUMN y VARCHAR(3) DEFAULT 'yy' FIRST",
    );
    s.execute_prepared(i.id, &[Value::Int(77), Value::Int(1)])
        .expect("insert");
    let r = rows(&mut s, "SELECT y, id, k, u, z FROM t WHERE id = 77");
    assert_eq!(
        r[0],
        vec![
            Value::str("yy"),
            Value::Int(77),
            Value::Int(1),
            Value::Null,
            Value::Int(42)
        ]
    );
}

#[test]
fn altered_schema_and_data_survive_a_restart() {
    let storage = Arc::new(canyon_storage::MemoryStorage::new());
    let open = || common::open(&storage);
    let engine = open();
    engine.bootstrap_root("").expect("root");
    let mut s = setup(&engine, 50);
    ok(
        &mut s,
        "ALTER TABLE t ADD COLUMN c INT DEFAULT 1 FIRST, DROP COLUMN pad",
    );
    ok(&mut s, "ALTER TABLE t ADD INDEX kc (c, k)");
    ok(&mut s, "INSERT INTO t (id, k, u, c) VALUES (100, 1, 1, 9)");
    ok(&mut s, "RENAME TABLE t TO t2");
    let before = rows(&mut s, "SELECT * FROM t2 ORDER BY id");
    drop(s);
    drop(engine);
    let engine = open();
    let mut s = engine.session(1, "root", "localhost");
    ok(&mut s, "USE d");
    assert_eq!(rows(&mut s, "SELECT * FROM t2 ORDER BY id"), before);
    assert_eq!(int(&mut s, "SELECT id FROM t2 WHERE c = 9 AND k = 1"), 100);
    assert!(exec(&mut s, "SELECT * FROM t").is_err());
}

#[test]
fn show_create_table_follows_alter() {
    let engine = common::engine(Duration::from_secs(5));
    let mut s = setup(&engine, 5);
    ok(
        &mut s,
        "ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 7 AFTER id, DROP COLUMN pad",
    );
    ok(
        &mut s,
        "ALTER TABLE t ADD UNIQUE KEY uc (u, c), ADD INDEX kk (k)",
    );
    ok(&mut s, "ALTER TABLE t DROP INDEX kk");
    let text = rows(&mut s, "SHOW CREATE TABLE t")[0][1].to_display();
    assert_eq!(
        text,
        "CREATE TABLE `t` (\n  `id` int NOT NULL,\n  `c` int NOT NULL DEFAULT '7',\n  \
         `k` int NOT NULL,\n  `u` int DEFAULT NULL,\n  PRIMARY KEY (`id`),\n  \
         UNIQUE KEY `uc` (`u`,`c`)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
    );
}

#[test]
fn an_index_left_write_only_by_a_crash_is_removed_at_open() {
    use canyon_storage::{Keyspace, Storage, WriteBatch};
    let storage = Arc::new(canyon_storage::MemoryStorage::new());
    let config = || common::config(Duration::from_secs(5));
    let engine = Engine::open(storage.clone(), config()).expect("engine opens");
    engine.bootstrap_root("").expect("root");
    let mut s = setup(&engine, 200);
    ok(&mut s, "ALTER TABLE t ADD INDEX kk (k)");
    // Simulate a crash between the back-fill and publication (step 6): the
    // catalog record still says WriteOnly, the entries are there.
    let mut def = engine.catalog().table("d", "t").expect("t").def.clone();
    let iid = def.indexes[0].id;
    def.indexes[0].state = canyon_sql::catalog::IndexState::WriteOnly;
    let mut key = b"c/t/".to_vec();
    key.extend_from_slice(&def.id.to_be_bytes());
    let mut batch = WriteBatch::new();
    batch.put(Keyspace::Meta, key, serde_json::to_vec(&def).expect("json"));
    storage.write(batch, true).expect("write");
    let entries = |st: &canyon_storage::MemoryStorage| {
        let mut n = 0;
        st.scan(
            Keyspace::Index,
            &KeyRange::prefix(&iid.to_be_bytes()),
            false,
            &mut |_, _| {
                n += 1;
                ControlFlow::Continue(())
            },
        )
        .expect("scan");
        n
    };
    assert_eq!(entries(&storage), 200);
    drop(s);
    drop(engine);
    let engine = Engine::open(storage.clone(), config()).expect("engine reopens");
    assert!(engine
        .catalog()
        .table("d", "t")
        .expect("t")
        .def
        .indexes
        .is_empty());
    assert_eq!(entries(&storage), 0);
    let mut s = engine.session(1, "root", "localhost");
    ok(&mut s, "USE d");
    ok(&mut s, "ALTER TABLE t ADD INDEX kk (k)");
    assert_indexes_agree(&engine);
}

#[test]
fn a_statement_on_the_older_definition_keeps_added_column_values() {
    let engine = common::engine(Duration::from_secs(30));
    let n = 30_000;
    let mut s = setup(&engine, n);
    let k_before = int(&mut s, &format!("SELECT k FROM t WHERE id = {n}"));
    // A long UPDATE that plans on the definition without `z` and rewrites
    // every row, the last one last.
    let long = {
        let engine = engine.clone();
        std::thread::spawn(move || {
            let mut l = engine.session(3, "root", "localhost");
            ok(&mut l, "USE d");
            ok(&mut l, "UPDATE t SET k = k + 1");
        })
    };
    std::thread::sleep(Duration::from_millis(5));
    // The ALTER publishes at once, then waits for the long UPDATE (its pin).
    let alter = {
        let engine = engine.clone();
        std::thread::spawn(move || {
            let mut a = engine.session(4, "root", "localhost");
            ok(&mut a, "USE d");
            ok(&mut a, "ALTER TABLE t ADD COLUMN z INT DEFAULT 1");
        })
    };
    while engine
        .catalog()
        .table("d", "t")
        .and_then(|t| t.column("z"))
        .is_none()
    {
        std::thread::sleep(Duration::from_micros(200));
    }
    // Written on the new definition, possibly before the long UPDATE reaches
    // the row: the long UPDATE must not drop the slot it does not know.
    ok(&mut s, &format!("UPDATE t SET z = 5 WHERE id = {n}"));
    let raced = !long.is_finished();
    long.join().expect("long update");
    alter.join().expect("alter");
    eprintln!("the new-definition write committed before the long UPDATE ended: {raced}");
    assert_eq!(
        rows(&mut s, &format!("SELECT k, z FROM t WHERE id = {n}"))[0],
        vec![Value::Int(k_before + 1), Value::Int(5)]
    );
    assert_eq!(int(&mut s, "SELECT COUNT(*) FROM t WHERE z = 1"), n - 1);
}

#[test]
fn add_column_default_current_timestamp_fills_existing_rows_with_the_alter_time() {
    let engine = common::engine(Duration::from_secs(5));
    let mut s = setup(&engine, 20);
    ok(
        &mut s,
        "ALTER TABLE t ADD COLUMN ts DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP",
    );
    // Existing rows read one value, the ALTER's time (as MySQL fills them),
    // never the epoch; new rows get their own insert time.
    assert_eq!(int(&mut s, "SELECT COUNT(DISTINCT ts) FROM t"), 1);
    assert_eq!(
        int(&mut s, "SELECT COUNT(*) FROM t WHERE ts > '2020-01-01'"),
        20
    );
    // The zero date MySQL fills the rows with is refused in strict mode.
    assert!(matches!(
        exec(&mut s, "ALTER TABLE t ADD COLUMN d DATE NOT NULL"),
        Err(Error::StrictModeError { code: 1292, .. })
    ));
}

/// A table rewrite (`ddl/rewrite.rs`) under concurrent readers and writers:
/// every reader sees the invariant of the writers' transactions (the sum of
/// `u` is constant) before, during and after the rewrite; a writer's
/// transaction either commits and survives the rewrite, or fails (1205 while
/// the table is copied, 1412 when it planned against the replaced
/// definition) and leaves nothing; the rewritten table and its indexes
/// agree.
#[test]
fn a_table_rewrite_under_concurrent_readers_and_writers_loses_nothing() {
    let engine = common::engine(Duration::from_secs(10));
    let n = 3_000;
    let mut s = setup(&engine, n);
    ok(&mut s, "ALTER TABLE t ADD INDEX ku (u)");
    let total = int(&mut s, "SELECT SUM(u) FROM t");
    let stop = Arc::new(AtomicBool::new(false));
    let moved = Arc::new(std::sync::Mutex::new(vec![0i64; n as usize + 1]));
    let commits = Arc::new(AtomicU64::new(0));
    let refused = Arc::new(AtomicU64::new(0));
    let mut handles = Vec::new();
    for w in 0..2u32 {
        let (engine, stop, moved) = (engine.clone(), stop.clone(), moved.clone());
        let (commits, refused) = (commits.clone(), refused.clone());
        handles.push(std::thread::spawn(move || {
            let mut rng = rand::rngs::StdRng::seed_from_u64(w as u64 + 99);
            let mut s = engine.session(20 + w, "root", "localhost");
            ok(&mut s, "USE d");
            while !stop.load(Ordering::Relaxed) {
                // Move one unit of `u` from row a to row b.
                let a = rng.gen_range(1..=n);
                let b = rng.gen_range(1..=n);
                ok(&mut s, "BEGIN");
                let mut failed = false;
                for sql in [
                    format!("UPDATE t SET u = u - 1 WHERE id = {a}"),
                    format!("UPDATE t SET u = u + 1 WHERE id = {b}"),
                ] {
                    match exec(&mut s, &sql) {
                        Ok(_) => {}
                        Err(Error::LockWaitTimeout | Error::Deadlock) => failed = true,
                        Err(Error::Sql { code: 1412, .. }) => failed = true,
                        Err(e) => panic!("{sql}: {e:?}"),
                    }
                    if failed {
                        break;
                    }
                }
                if failed {
                    ok(&mut s, "ROLLBACK");
                    refused.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                ok(&mut s, "COMMIT");
                let mut m = moved.lock().expect("moved");
                m[a as usize] -= 1;
                m[b as usize] += 1;
                commits.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    for r in 0..2u32 {
        let (engine, stop) = (engine.clone(), stop.clone());
        handles.push(std::thread::spawn(move || {
            let mut s = engine.session(30 + r, "root", "localhost");
            ok(&mut s, "USE d");
            let mut reads = 0;
            while !stop.load(Ordering::Relaxed) || reads == 0 {
                let got = rows(&mut s, "SELECT COUNT(*), SUM(u) FROM t");
                assert_eq!(got[0][0].to_i64(), Some(n), "a reader lost rows");
                assert_eq!(got[0][1].to_i64(), Some(total), "a reader saw half a move");
                reads += 1;
            }
        }));
    }
    std::thread::sleep(Duration::from_millis(200));
    let before = commits.load(Ordering::Relaxed);
    // k: INT to INT UNSIGNED (a new stored form), then a new primary key.
    ok(&mut s, "ALTER TABLE t MODIFY k INT UNSIGNED NOT NULL");
    ok(
        &mut s,
        "ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (id, k)",
    );
    std::thread::sleep(Duration::from_millis(200));
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().expect("thread");
    }
    assert!(
        commits.load(Ordering::Relaxed) > before,
        "no writer committed after the rewrites"
    );
    eprintln!(
        "{} moves committed, {} refused during the rewrites",
        commits.load(Ordering::Relaxed),
        refused.load(Ordering::Relaxed)
    );
    // Every committed move is in the rewritten table, and nothing else.
    let moved = moved.lock().expect("moved").clone();
    let got = rows(&mut s, "SELECT id, u FROM t ORDER BY id");
    assert_eq!(got.len(), n as usize);
    for r in &got {
        let id = r[0].to_i64().expect("id");
        assert_eq!(r[1].to_i64(), Some(id + moved[id as usize]), "row {id}");
    }
    assert_indexes_agree(&engine);
    let t = engine.catalog().table("d", "t").expect("t").clone();
    assert_eq!(t.def.primary_key, [0, 1]);
    assert!(t.def.columns[1].ty.is_unsigned());
}

/// Crash safety of a table rewrite (`ddl/rewrite.rs`): a crash before the
/// publish leaves the copy's rows under ids only a `c/x/` record names; the
/// next open purges them and the table is as before. A crash after the
/// publish leaves the old rows under such a record: purged too.
#[test]
fn rows_a_crashed_rewrite_left_are_purged_at_open() {
    use canyon_storage::{Keyspace, Storage, WriteBatch};
    let storage = Arc::new(canyon_storage::MemoryStorage::new());
    let engine = common::open(&storage);
    engine.bootstrap_root("").expect("root");
    let mut s = setup(&engine, 100);
    let old = engine.catalog().table("d", "t").expect("t").def.clone();
    // A finished rewrite leaves no record behind, and the old ids' rows are
    // gone.
    ok(&mut s, "ALTER TABLE t MODIFY k BIGINT UNSIGNED NOT NULL");
    let before = rows(&mut s, "SELECT * FROM t ORDER BY id");
    let count = |st: &canyon_storage::MemoryStorage, ks: Keyspace, prefix: &[u8]| {
        let mut n = 0;
        st.scan(ks, &KeyRange::prefix(prefix), false, &mut |_, _| {
            n += 1;
            ControlFlow::Continue(())
        })
        .expect("scan");
        n
    };
    assert_eq!(count(&storage, Keyspace::Meta, b"c/x/"), 0);
    assert_eq!(count(&storage, Keyspace::Rows, &old.id.to_be_bytes()), 0);
    // Simulate the crash of a second rewrite between its copy and its
    // publish: a record naming ids 9000 / 9001 and rows stored under them.
    let session = engine.txn_manager().session();
    let mut txn = session.begin(IsolationLevel::ReadCommitted);
    for i in 0..10u8 {
        txn.lock(&[b'x', i]).expect("lock");
        txn.put(
            9000,
            vec![i],
            vec![1, 2, 3],
            Vec::new(),
            vec![(9001, vec![i])],
        );
    }
    txn.commit().expect("commit");
    let mut batch = WriteBatch::new();
    let mut key = b"c/x/".to_vec();
    key.extend_from_slice(&9000u32.to_be_bytes());
    batch.put(
        Keyspace::Meta,
        key,
        br#"{"table":9000,"indexes":[9001]}"#.to_vec(),
    );
    storage.write(batch, true).expect("write");
    assert_eq!(count(&storage, Keyspace::Rows, &9000u32.to_be_bytes()), 10);
    drop(s);
    drop(engine);
    let engine = common::open(&storage);
    assert_eq!(count(&storage, Keyspace::Meta, b"c/x/"), 0);
    assert_eq!(count(&storage, Keyspace::Rows, &9000u32.to_be_bytes()), 0);
    assert_eq!(count(&storage, Keyspace::Index, &9001u32.to_be_bytes()), 0);
    let mut s = engine.session(1, "root", "localhost");
    ok(&mut s, "USE d");
    assert_eq!(rows(&mut s, "SELECT * FROM t ORDER BY id"), before);
}
