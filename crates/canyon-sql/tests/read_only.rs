//! `read_only` / `super_read_only` (the contract in canyon-sql's
//! `session/read_only.rs`) and the GTID functions that wait on and compare
//! `gtid_executed`, through the engine API: who is refused what (1290),
//! what stays writable (TEMPORARY tables, SUPER under read_only, the
//! replica's applier), COMMIT of a transaction that wrote before the server
//! became read-only, and WAIT_FOR_EXECUTED_GTID_SET woken by a commit on a
//! source and by a replica's applier.

mod common;

use canyon_common::Error;
use canyon_sql::catalog::config::BinlogConfig;
use canyon_sql::catalog::replica::Applied;
use canyon_sql::{Engine, ReplicaApplier, Session, StartAt, Value};
use canyon_storage::MemoryStorage;
use common::{ok, rows, run};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Asserts that `sql` fails with 1290 naming `option`.
fn refused(s: &mut Session, sql: &str, option: &str) {
    match run(s, sql) {
        Err(Error::Sql {
            code: 1290,
            sqlstate,
            message,
        }) => {
            assert_eq!(&sqlstate, b"HY000", "{sql}");
            assert_eq!(
                message,
                format!(
                    "The MySQL server is running with the {option} option so it cannot execute \
                     this statement"
                ),
                "{sql}"
            );
        }
        other => panic!("{sql}: expected 1290 ({option}), got {other:?}"),
    }
}

fn count(s: &mut Session, sql: &str) -> String {
    rows(s, sql)[0][0].clone()
}

/// An engine with root, database `shop` (table `items`) and user `u`
/// holding every privilege on `shop.*` but no SUPER.
fn setup() -> Arc<Engine> {
    let e = common::engine(Duration::from_secs(5));
    let mut root = e.session(1, "root", "localhost");
    for sql in [
        "CREATE DATABASE shop",
        "CREATE TABLE shop.items (id INT PRIMARY KEY, price INT)",
        "INSERT INTO shop.items VALUES (1, 10)",
        "CREATE USER 'u'@'%' IDENTIFIED BY 'pw'",
        "GRANT ALL ON shop.* TO 'u'@'%'",
    ] {
        ok(&mut root, sql);
    }
    e
}

#[test]
fn read_only_refuses_writes_of_accounts_without_super() {
    let e = setup();
    let mut root = e.session(1, "root", "localhost");
    let mut u = e.session(2, "u", "h");
    ok(&mut u, "USE shop");
    let ins = u
        .prepare("INSERT INTO items VALUES (?, 1)")
        .expect("prepares")
        .id;
    // Only SUPER sets it, and only globally.
    assert!(matches!(
        run(&mut u, "SET GLOBAL read_only = 1"),
        Err(Error::SpecificAccessDenied(_))
    ));
    assert!(matches!(
        run(&mut root, "SET SESSION read_only = 1"),
        Err(Error::GlobalOnlyVariable(_))
    ));
    ok(&mut root, "SET GLOBAL read_only = ON");
    assert_eq!(
        rows(
            &mut u,
            "SELECT @@read_only, @@global.read_only, @@super_read_only"
        ),
        vec![vec!["1", "1", "0"]]
    );
    for sql in [
        "INSERT INTO items VALUES (2, 20)",
        "REPLACE INTO items VALUES (1, 11)",
        "UPDATE items SET price = 11",
        "DELETE FROM items",
        "INSERT INTO items SELECT id + 10, price FROM items",
        "CREATE TABLE t2 (a INT)",
        "CREATE TABLE t3 AS SELECT * FROM items",
        "ALTER TABLE items ADD COLUMN c INT",
        "CREATE INDEX k ON items (price)",
        "TRUNCATE TABLE items",
        "RENAME TABLE items TO items2",
        "DROP TABLE items",
        "CREATE VIEW v AS SELECT * FROM items",
        "CREATE DATABASE other",
        "DROP DATABASE shop",
        "CREATE PROCEDURE p() SELECT 1",
        "SET PASSWORD = 'new'",
    ] {
        refused(&mut u, sql, "--read-only");
    }
    // A prepared statement and a statement of a transaction alike.
    match u.execute_prepared(ins, &[Value::Int(9)]) {
        Err(Error::Sql { code: 1290, .. }) => {}
        other => panic!("a prepared INSERT: expected 1290, got {other:?}"),
    }
    ok(&mut u, "BEGIN");
    refused(
        &mut u,
        "UPDATE items SET price = 12 WHERE id = 1",
        "--read-only",
    );
    ok(&mut u, "COMMIT");
    // Reads, and TEMPORARY tables, go on.
    assert_eq!(count(&mut u, "SELECT price FROM items WHERE id = 1"), "10");
    for sql in [
        "CREATE TEMPORARY TABLE tt (a INT PRIMARY KEY)",
        "INSERT INTO tt VALUES (1), (2)",
        "UPDATE tt SET a = a + 10",
        "DELETE FROM tt WHERE a = 12",
        "ALTER TABLE tt RENAME TO tt2",
        "INSERT INTO tt2 SELECT id FROM items",
        "TRUNCATE TABLE tt2",
        "DROP TABLE tt2",
    ] {
        ok(&mut u, sql);
    }
    // SUPER is exempt from read_only.
    ok(&mut root, "INSERT INTO shop.items VALUES (3, 30)");
    ok(&mut root, "CREATE TABLE shop.by_root (a INT)");
    // super_read_only: read_only too, and nobody writes.
    ok(&mut root, "SET GLOBAL super_read_only = 1");
    assert_eq!(
        rows(
            &mut root,
            "SELECT @@global.read_only, @@global.super_read_only"
        ),
        vec![vec!["1", "1"]]
    );
    refused(
        &mut u,
        "INSERT INTO items VALUES (4, 40)",
        "--super-read-only",
    );
    for sql in [
        "INSERT INTO shop.items VALUES (4, 40)",
        "DROP TABLE shop.by_root",
        "CREATE USER 'v'@'%'",
        "GRANT SELECT ON shop.* TO 'u'@'%'",
        "DROP USER 'u'@'%'",
        "CREATE DATABASE other",
    ] {
        refused(&mut root, sql, "--super-read-only");
    }
    ok(&mut root, "CREATE TEMPORARY TABLE shop.rt (a INT)");
    ok(&mut root, "INSERT INTO shop.rt VALUES (1)");
    // super_read_only = 0 leaves read_only on; read_only = 0 clears both.
    ok(&mut root, "SET GLOBAL super_read_only = 0");
    assert_eq!(
        rows(
            &mut root,
            "SELECT @@global.read_only, @@global.super_read_only"
        ),
        vec![vec!["1", "0"]]
    );
    ok(&mut root, "SET GLOBAL super_read_only = 1");
    ok(&mut root, "SET GLOBAL read_only = 0");
    assert_eq!(
        rows(
            &mut root,
            "SELECT @@global.read_only, @@global.super_read_only"
        ),
        vec![vec!["0", "0"]]
    );
    ok(&mut u, "INSERT INTO items VALUES (5, 50)");
    assert_eq!(count(&mut u, "SELECT COUNT(*) FROM items"), "3");
}

#[test]
fn commit_of_writes_made_before_read_only_is_refused_and_rolled_back() {
    let e = setup();
    let mut root = e.session(1, "root", "localhost");
    let mut u = e.session(2, "u", "h");
    let mut reader = e.session(3, "u", "h");
    ok(&mut u, "USE shop");
    ok(&mut u, "BEGIN");
    ok(&mut u, "INSERT INTO items VALUES (2, 20)");
    ok(&mut reader, "BEGIN");
    assert_eq!(count(&mut reader, "SELECT COUNT(*) FROM shop.items"), "1");
    // Switching it on from inside a transaction: 1192, as MySQL.
    ok(&mut root, "BEGIN");
    match run(&mut root, "SET GLOBAL read_only = 1") {
        Err(Error::Sql { code: 1192, .. }) => {}
        other => panic!("expected 1192, got {other:?}"),
    }
    ok(&mut root, "COMMIT");
    ok(&mut root, "SET GLOBAL read_only = 1");
    refused(&mut u, "COMMIT", "--read-only");
    // The transaction is gone (rolled back), its row with it.
    assert!(!u.in_transaction());
    ok(&mut u, "COMMIT");
    // A transaction that only read commits.
    ok(&mut reader, "COMMIT");
    assert_eq!(count(&mut root, "SELECT COUNT(*) FROM shop.items"), "1");
    // BEGIN's implicit commit is a COMMIT too.
    ok(&mut root, "SET GLOBAL read_only = 0");
    ok(&mut u, "BEGIN");
    ok(&mut u, "INSERT INTO items VALUES (3, 30)");
    ok(&mut root, "SET GLOBAL read_only = 1");
    refused(&mut u, "BEGIN", "--read-only");
    ok(&mut root, "SET GLOBAL read_only = 0");
    assert_eq!(count(&mut root, "SELECT COUNT(*) FROM shop.items"), "1");
}

/// A source engine (binary log on, `server_id` 1) and a replica (id 2).
fn source_and_replica() -> (Arc<Engine>, Arc<Engine>) {
    let open = |id: u32, log: bool| {
        let cfg = canyon_sql::EngineConfig {
            binlog: BinlogConfig {
                enabled: log,
                server_id: id,
                ..BinlogConfig::default()
            },
            ..common::config(Duration::from_secs(5))
        };
        let e = Engine::open(Arc::new(MemoryStorage::new()), cfg).expect("engine opens");
        e.bootstrap_root("").expect("root account");
        e
    };
    (open(1, true), open(2, false))
}

/// Everything in the source's log not applied yet, through `applier`.
fn replicate(source: &Arc<Engine>, applier: &mut ReplicaApplier) {
    let mut s = source.session(90, "root", "localhost");
    ok(&mut s, "SET @master_binlog_checksum = 'CRC32'");
    let mut dump = s
        .start_dump(&StartAt::Gtids(applier.gtids().clone()), 2)
        .expect("dump starts");
    loop {
        let events = dump.read().expect("log reads");
        if events.is_empty() {
            break;
        }
        for ev in &events {
            applier.apply(ev).expect("the applier applies");
        }
    }
}

#[test]
fn replica_applier_writes_under_super_read_only() {
    let (source, replica) = source_and_replica();
    let mut src = source.session(1, "root", "localhost");
    let mut rep = replica.session(1, "root", "localhost");
    ok(&mut rep, "SET GLOBAL super_read_only = 1");
    for sql in [
        "CREATE DATABASE d",
        "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)",
        "INSERT INTO d.t VALUES (1, 1), (2, 2)",
        "UPDATE d.t SET v = 20 WHERE id = 2",
        "ALTER TABLE d.t ADD COLUMN w INT",
        "DELETE FROM d.t WHERE id = 1",
    ] {
        ok(&mut src, sql);
    }
    let executed = count(&mut src, "SELECT @@gtid_executed");
    assert!(!executed.is_empty());
    let mut applier = ReplicaApplier::new(replica.clone(), Applied::default());
    replicate(&source, &mut applier);
    assert_eq!(
        rows(&mut rep, "SELECT id, v, w FROM d.t"),
        vec![vec!["2", "20", "NULL"]]
    );
    // The source's transactions are the replica's gtid_executed ...
    assert_eq!(
        count(
            &mut rep,
            &format!("SELECT WAIT_FOR_EXECUTED_GTID_SET('{executed}', 1)")
        ),
        "0"
    );
    assert_eq!(
        count(
            &mut rep,
            &format!("SELECT GTID_SUBSET('{executed}', @@gtid_executed)")
        ),
        "1"
    );
    // ... while its clients write nothing.
    refused(
        &mut rep,
        "INSERT INTO d.t VALUES (3, 3, 3)",
        "--super-read-only",
    );
    assert!(!rep.in_transaction());
}

#[test]
fn wait_for_executed_gtid_set_returns_when_the_commit_lands() {
    let (source, _) = source_and_replica();
    let mut src = source.session(1, "root", "localhost");
    ok(&mut src, "CREATE DATABASE d");
    ok(&mut src, "CREATE TABLE d.t (id INT PRIMARY KEY)");
    let uuid = count(&mut src, "SELECT @@server_uuid");
    let executed = count(&mut src, "SELECT @@gtid_executed");
    let next: u64 = executed
        .rsplit(['-', ':'])
        .next()
        .and_then(|n| n.parse().ok())
        .expect("gtid_executed ends in a number");
    let want = format!("{uuid}:1-{}", next + 1);
    // Not there yet: a timeout answers 1.
    let started = Instant::now();
    assert_eq!(
        count(
            &mut src,
            &format!("SELECT WAIT_FOR_EXECUTED_GTID_SET('{want}', 0.2)")
        ),
        "1"
    );
    assert!(started.elapsed() >= Duration::from_millis(200));
    let mut waiter = source.session(2, "root", "localhost");
    std::thread::scope(|sc| {
        let h = sc.spawn(|| {
            run(
                &mut waiter,
                &format!("SELECT WAIT_FOR_EXECUTED_GTID_SET('{want}', 30)"),
            )
        });
        std::thread::sleep(Duration::from_millis(100));
        ok(&mut src, "INSERT INTO d.t VALUES (1)");
        let r = h.join().expect("the waiter ends");
        match r {
            Ok(canyon_sql::QueryResult::Rows { rows, .. }) => {
                assert_eq!(rows[0][0].to_display(), "0")
            }
            other => panic!("expected 0, got {other:?}"),
        }
    });
    // What a restarted Debezium connector asks: the GTIDs it has not seen.
    assert_eq!(
        count(
            &mut src,
            &format!("SELECT GTID_SUBTRACT(@@gtid_executed, '{uuid}:1-{next}')")
        ),
        format!("{uuid}:{}", next + 1)
    );
}
