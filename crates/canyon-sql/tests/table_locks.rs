//! Table locks across sessions of one engine (crate::catalog::table_locks):
//! LOCK TABLES READ keeps writers out and lets readers in, WRITE keeps
//! everyone out, FLUSH TABLES [t] WITH READ LOCK stops writes, DDL and the
//! COMMIT of a transaction with writes; every waiter really waits and goes
//! on after UNLOCK TABLES, the holder's end, or fails at lock_wait_timeout
//! (1205) and at KILL QUERY (1317). The holder's own rules: 1100, 1099, 1223.

mod common;

use canyon_common::Error;
use canyon_sql::{Engine, QueryResult, Session};
use common::{ok, rows, run};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

fn engine() -> Arc<Engine> {
    let e = common::engine(Duration::from_secs(10));
    let mut s = e.session(100, "root", "localhost");
    for sql in [
        "CREATE DATABASE b",
        "USE b",
        "CREATE TABLE acc (id INT PRIMARY KEY, bal INT NOT NULL)",
        "INSERT INTO acc VALUES (1, 100), (2, 100)",
        "CREATE TABLE other (id INT PRIMARY KEY)",
    ] {
        ok(&mut s, sql);
    }
    e
}

fn session(e: &Arc<Engine>, id: u32) -> Session {
    let mut s = e.session(id, "root", "localhost");
    ok(&mut s, "USE b");
    s
}

fn count(s: &mut Session, table: &str) -> String {
    rows(s, &format!("SELECT COUNT(*) FROM {table}"))[0][0].clone()
}

fn code(r: Result<QueryResult, Error>) -> u16 {
    match r {
        Err(Error::Sql { code, .. }) => code,
        Err(Error::LockWaitTimeout) => 1205,
        Err(Error::Interrupted) => 1317,
        other => panic!("expected an error, got {other:?}"),
    }
}

/// A statement run by `s` on its own thread: its result comes back on the
/// channel, the session with the handle.
struct Waiter {
    done: mpsc::Receiver<Result<QueryResult, Error>>,
    handle: JoinHandle<Session>,
}

fn start(mut s: Session, sql: &'static str) -> Waiter {
    let (tx, done) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        let r = run(&mut s, sql);
        let _ = tx.send(r);
        s
    });
    Waiter { done, handle }
}

impl Waiter {
    /// Asserts that the statement is still waiting after a while, and shows
    /// in the process list as running.
    fn still_waits(&self, observer: &mut Session, id: u32) {
        assert!(
            self.done.recv_timeout(Duration::from_millis(300)).is_err(),
            "the statement did not wait"
        );
        let running = rows(
            observer,
            &format!(
                "SELECT COUNT(*) FROM information_schema.processlist \
                 WHERE id = {id} AND command = 'Query'"
            ),
        );
        assert_eq!(running, [["1"]], "the waiter is shown running");
    }

    /// The statement's result once it ends (at most 10 s), and the session.
    fn finish(self) -> (Result<QueryResult, Error>, Session) {
        let r = self
            .done
            .recv_timeout(Duration::from_secs(10))
            .expect("the waiter went on");
        (r, self.handle.join().expect("the waiter's thread"))
    }
}

#[test]
fn read_lock_blocks_writers_until_unlock_and_lets_readers_in() {
    let e = engine();
    let mut a = session(&e, 1);
    let mut b = session(&e, 2);
    ok(&mut a, "LOCK TABLES acc READ");
    // Readers go on; another table is not locked for them.
    assert_eq!(count(&mut b, "acc"), "2");
    ok(&mut b, "INSERT INTO other VALUES (1)");
    // The holder's own rules: 1099 writing a READ-locked table, 1100 for a
    // table not locked (information_schema is exempt).
    assert_eq!(code(run(&mut a, "INSERT INTO acc VALUES (9, 0)")), 1099);
    assert_eq!(code(run(&mut a, "SELECT * FROM other")), 1100);
    assert_eq!(count(&mut a, "acc"), "2");
    let writer = start(b, "INSERT INTO acc VALUES (3, 0)");
    writer.still_waits(&mut a, 2);
    assert_eq!(
        count(&mut a, "acc"),
        "2",
        "the READ-locked table did not change"
    );
    ok(&mut a, "UNLOCK TABLES");
    let (r, _b) = writer.finish();
    r.expect("the insert ran after UNLOCK TABLES");
    assert_eq!(count(&mut a, "acc"), "3");
    // The holder's session is back to normal.
    ok(&mut a, "INSERT INTO other VALUES (2)");
}

#[test]
fn write_lock_blocks_readers_and_writers() {
    let e = engine();
    let mut a = session(&e, 1);
    let b = session(&e, 2);
    let mut c = session(&e, 3);
    ok(&mut a, "LOCK TABLES acc WRITE");
    let reader = start(b, "SELECT COUNT(*) FROM acc");
    reader.still_waits(&mut a, 2);
    let writer = start(
        std::mem::replace(&mut c, session(&e, 4)),
        "UPDATE acc SET bal = 0",
    );
    writer.still_waits(&mut a, 3);
    ok(&mut a, "INSERT INTO acc VALUES (3, 7)");
    assert_eq!(code(run(&mut a, "SELECT * FROM other")), 1100);
    ok(&mut a, "UNLOCK TABLES");
    let (r, _) = reader.finish();
    match r.expect("the read ran") {
        QueryResult::Rows { rows, .. } => {
            assert_eq!(rows[0][0].to_display(), "3", "it saw the holder's insert")
        }
        other => panic!("{other:?}"),
    }
    writer.finish().0.expect("the update ran");
    assert_eq!(
        rows(&mut a, "SELECT SUM(bal) FROM acc"),
        [["0"]],
        "the update ran after the holder's insert"
    );
}

#[test]
fn waits_end_at_lock_wait_timeout_and_at_kill_query() {
    let e = engine();
    let mut a = session(&e, 1);
    let mut b = session(&e, 2);
    ok(&mut a, "LOCK TABLES acc READ");
    ok(&mut b, "SET lock_wait_timeout = 1");
    let t0 = Instant::now();
    assert_eq!(code(run(&mut b, "DELETE FROM acc")), 1205);
    let waited = t0.elapsed();
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    // innodb_lock_wait_timeout is the row locks' timeout, not this one's.
    ok(&mut b, "SET lock_wait_timeout = 100");
    let writer = start(b, "DELETE FROM acc");
    writer.still_waits(&mut a, 2);
    ok(&mut a, "KILL QUERY 2");
    let (r, mut b) = writer.finish();
    assert_eq!(code(r), 1317);
    // Nothing was deleted, and the session goes on.
    assert_eq!(count(&mut b, "acc"), "2");
    ok(&mut a, "UNLOCK TABLES");
    ok(&mut b, "DELETE FROM acc WHERE id = 2");
}

#[test]
fn the_holders_end_releases_its_locks() {
    let e = engine();
    let mut a = session(&e, 1);
    let b = session(&e, 2);
    let mut c = session(&e, 3);
    ok(&mut a, "LOCK TABLES acc WRITE");
    let writer = start(b, "INSERT INTO acc VALUES (3, 0)");
    writer.still_waits(&mut c, 2);
    drop(a);
    writer
        .finish()
        .0
        .expect("the insert ran once the holder was gone");
    assert_eq!(count(&mut c, "acc"), "3");
}

#[test]
fn lock_tables_waits_for_transactions_that_wrote_the_table() {
    let e = engine();
    let a = session(&e, 1);
    let mut b = session(&e, 2);
    let mut c = session(&e, 3);
    ok(&mut b, "BEGIN");
    ok(&mut b, "INSERT INTO acc VALUES (3, 0)");
    let locker = start(a, "LOCK TABLES acc READ");
    locker.still_waits(&mut c, 1);
    // b's transaction may go on writing the table it holds an intention on
    // (making it wait would deadlock it with the pending lock).
    ok(&mut b, "INSERT INTO acc VALUES (4, 0)");
    // A session without writes in flight waits behind the pending lock.
    let late = start(
        std::mem::replace(&mut c, session(&e, 4)),
        "INSERT INTO acc VALUES (5, 0)",
    );
    late.still_waits(&mut b, 3);
    ok(&mut b, "COMMIT");
    let (r, mut a) = locker.finish();
    r.expect("locked once b committed");
    assert_eq!(count(&mut a, "acc"), "4", "the READ lock sees b's commit");
    late.still_waits(&mut b, 3);
    ok(&mut a, "UNLOCK TABLES");
    late.finish().0.expect("the late insert ran");
    // READ locks share; a WRITE lock waits for them.
    ok(&mut a, "LOCK TABLES acc READ");
    ok(&mut b, "LOCK TABLES acc READ");
    let exclusive = start(c, "LOCK TABLES acc WRITE");
    exclusive.still_waits(&mut a, 4);
    ok(&mut a, "UNLOCK TABLES");
    exclusive.still_waits(&mut a, 4);
    ok(&mut b, "UNLOCK TABLES");
    let (r, mut c) = exclusive.finish();
    r.expect("the WRITE lock once both READ locks went");
    ok(&mut c, "UNLOCK TABLES");
}

#[test]
fn the_holders_own_rules() {
    let e = engine();
    let mut a = session(&e, 1);
    let mut b = session(&e, 2);
    ok(&mut a, "LOCK TABLES acc WRITE, other READ");
    ok(&mut a, "INSERT INTO acc SELECT id + 10, 0 FROM other");
    assert_eq!(code(run(&mut a, "INSERT INTO other VALUES (5)")), 1099);
    // START TRANSACTION releases LOCK TABLES locks.
    ok(&mut a, "START TRANSACTION");
    assert_eq!(count(&mut b, "acc"), "2");
    ok(&mut a, "INSERT INTO other VALUES (5)");
    ok(&mut a, "COMMIT");
    // LOCK TABLES commits the open transaction and replaces earlier locks.
    ok(&mut a, "SET autocommit = 0");
    ok(&mut a, "INSERT INTO other VALUES (6)");
    ok(&mut a, "LOCK TABLES acc READ");
    assert_eq!(count(&mut b, "other"), "2", "the LOCK TABLES committed");
    ok(&mut a, "LOCK TABLES other WRITE");
    ok(&mut b, "INSERT INTO acc VALUES (7, 0)");
    ok(&mut a, "INSERT INTO other VALUES (7)");
    // UNLOCK TABLES commits what was written under LOCK TABLES.
    ok(&mut a, "UNLOCK TABLES");
    assert_eq!(count(&mut b, "other"), "3");
    // Unknown tables: 1146; FTWRL under LOCK TABLES: 1192.
    assert!(matches!(
        run(&mut a, "LOCK TABLES nope READ"),
        Err(Error::UnknownTable { .. })
    ));
    ok(&mut a, "LOCK TABLES acc READ");
    assert_eq!(code(run(&mut a, "FLUSH TABLES WITH READ LOCK")), 1192);
    ok(&mut a, "UNLOCK TABLES");
}

#[test]
fn ftwrl_stops_other_sessions_writes_ddl_and_commits() {
    let e = engine();
    let mut a = session(&e, 1);
    let mut b = session(&e, 2);
    let mut c = session(&e, 3);
    let d = session(&e, 4);
    // c wrote before the lock: FTWRL does not wait for its open transaction,
    // but its COMMIT waits for UNLOCK TABLES.
    ok(&mut c, "BEGIN");
    ok(&mut c, "INSERT INTO acc VALUES (3, 0)");
    ok(&mut a, "FLUSH TABLES WITH READ LOCK");
    assert_eq!(count(&mut b, "acc"), "2", "reads go on");
    // The holder reads anything and writes nothing (1223).
    assert_eq!(count(&mut a, "other"), "0");
    assert_eq!(code(run(&mut a, "INSERT INTO other VALUES (1)")), 1223);
    assert_eq!(code(run(&mut a, "CREATE TABLE t2 (id INT)")), 1223);
    ok(&mut b, "SET lock_wait_timeout = 1");
    assert_eq!(code(run(&mut b, "CREATE TABLE t2 (id INT)")), 1205);
    ok(&mut b, "SET lock_wait_timeout = 100");
    let writer = start(b, "UPDATE other SET id = id + 1");
    writer.still_waits(&mut a, 2);
    let committer = start(c, "COMMIT");
    committer.still_waits(&mut a, 3);
    let ddl = start(d, "ALTER TABLE other ADD COLUMN v INT");
    ddl.still_waits(&mut a, 4);
    assert_eq!(count(&mut a, "acc"), "2", "c's commit did not happen");
    ok(&mut a, "UNLOCK TABLES");
    writer.finish().0.expect("the update ran");
    committer.finish().0.expect("the commit ran");
    ddl.finish().0.expect("the ALTER ran");
    assert_eq!(count(&mut a, "acc"), "3");
}

#[test]
fn unlock_tables_after_ftwrl_keeps_the_snapshot_transaction() {
    // mariadb-dump --single-transaction --master-data's sequence.
    let e = engine();
    let mut a = session(&e, 1);
    let mut b = session(&e, 2);
    ok(&mut a, "FLUSH TABLES WITH READ LOCK");
    ok(&mut a, "START TRANSACTION WITH CONSISTENT SNAPSHOT");
    ok(&mut a, "UNLOCK TABLES");
    ok(&mut b, "INSERT INTO acc VALUES (3, 0)");
    assert_eq!(
        count(&mut a, "acc"),
        "2",
        "still the snapshot's transaction"
    );
    ok(&mut a, "COMMIT");
    assert_eq!(count(&mut a, "acc"), "3");
}

#[test]
fn flush_tables_with_read_lock_on_named_tables() {
    let e = engine();
    let mut a = session(&e, 1);
    let mut b = session(&e, 2);
    ok(&mut a, "FLUSH TABLES acc WITH READ LOCK");
    ok(&mut b, "INSERT INTO other VALUES (1)");
    assert_eq!(code(run(&mut a, "DELETE FROM acc")), 1099);
    assert_eq!(code(run(&mut a, "SELECT * FROM other")), 1100);
    let writer = start(b, "DELETE FROM acc");
    writer.still_waits(&mut a, 2);
    ok(&mut a, "UNLOCK TABLES");
    writer.finish().0.expect("the delete ran");
    assert_eq!(count(&mut a, "acc"), "0");
}

/// The server's connections do not block a thread: a one-statement request
/// answers LockWaitPending, the caller awaits `lock_wait()`, and sends the
/// request again once it is ready.
#[test]
fn an_async_wait_resolves_at_unlock_tables() {
    let e = engine();
    let mut a = session(&e, 1);
    let mut b = session(&e, 2);
    b.set_async_lock_waits(true);
    ok(&mut a, "LOCK TABLES acc READ");
    let sql = "UPDATE acc SET bal = bal + 1";
    assert!(matches!(run(&mut b, sql), Err(Error::LockWaitPending)));
    let wait = b.lock_wait().expect("b waits for a's lock");
    assert!(!wait.is_granted());
    assert!(wait.deadline().is_some());
    // Other statements do not wake it.
    assert_eq!(count(&mut a, "acc"), "2");
    assert!(!wait.is_granted());
    ok(&mut a, "UNLOCK TABLES");
    assert!(wait.is_granted(), "UNLOCK TABLES woke the wait");
    b.end_lock_wait(None).expect("ended");
    run(&mut b, sql).expect("the update runs again");
    assert_eq!(rows(&mut a, "SELECT SUM(bal) FROM acc"), [["202"]]);
    // A wait given up at its timeout fails the statement with 1205.
    ok(&mut a, "LOCK TABLES acc READ");
    assert!(matches!(run(&mut b, sql), Err(Error::LockWaitPending)));
    assert!(b.lock_wait().is_some());
    assert!(matches!(
        b.end_lock_wait(Some(Error::LockWaitTimeout)),
        Err(Error::LockWaitTimeout)
    ));
    assert!(b.lock_wait().is_none());
    ok(&mut a, "UNLOCK TABLES");
    run(&mut b, sql).expect("a fresh request runs");
}

#[test]
fn ddl_waits_for_a_read_lock_and_truncate_keeps_a_write_lock() {
    let e = engine();
    let mut a = session(&e, 1);
    let b = session(&e, 2);
    let mut c = session(&e, 3);
    ok(&mut a, "LOCK TABLES acc READ");
    let alter = start(b, "ALTER TABLE acc ADD COLUMN note INT");
    alter.still_waits(&mut a, 2);
    ok(&mut a, "UNLOCK TABLES");
    let (r, b) = alter.finish();
    r.expect("the ALTER ran after UNLOCK TABLES");
    // TRUNCATE gives the table a new id: the WRITE lock still covers it, for
    // the holder and against the others.
    ok(&mut a, "LOCK TABLES acc WRITE");
    ok(&mut a, "TRUNCATE TABLE acc");
    ok(&mut a, "INSERT INTO acc VALUES (1, 1, NULL)");
    let reader = start(b, "SELECT COUNT(*) FROM acc");
    reader.still_waits(&mut c, 2);
    ok(&mut a, "UNLOCK TABLES");
    match reader.finish().0.expect("the read ran") {
        QueryResult::Rows { rows, .. } => assert_eq!(rows[0][0].to_display(), "1"),
        other => panic!("{other:?}"),
    }
    assert_eq!(count(&mut c, "acc"), "1");
}

#[test]
fn temporary_tables_are_outside_table_locks() {
    let e = engine();
    let mut a = session(&e, 1);
    let mut b = session(&e, 2);
    ok(&mut a, "FLUSH TABLES WITH READ LOCK");
    // The holder's and the others' TEMPORARY tables are their own.
    ok(&mut a, "CREATE TEMPORARY TABLE tmp (id INT)");
    ok(&mut a, "INSERT INTO tmp VALUES (1)");
    ok(&mut b, "CREATE TEMPORARY TABLE tmp (id INT)");
    ok(&mut b, "INSERT INTO tmp VALUES (1), (2)");
    assert_eq!(count(&mut b, "tmp"), "2");
    ok(&mut a, "DROP TEMPORARY TABLE tmp");
    ok(&mut a, "UNLOCK TABLES");
    // Under LOCK TABLES a TEMPORARY table needs no lock either.
    ok(&mut b, "LOCK TABLES acc READ");
    ok(&mut b, "INSERT INTO tmp SELECT id FROM acc");
    assert_eq!(count(&mut b, "tmp"), "4");
    ok(&mut b, "UNLOCK TABLES");
}

/// A CALL whose first statement ran before a WRITE lock was requested holds
/// that statement's intention until the CALL ends: the pending lock waits for
/// it, and the CALL's later statements do not wait for the pending lock (that
/// would deadlock the two until the timeout).
#[test]
fn a_pending_lock_does_not_deadlock_with_a_call_in_progress() {
    let e = engine();
    let mut a = session(&e, 1);
    let b = session(&e, 2);
    ok(
        &mut a,
        "CREATE PROCEDURE p() BEGIN \
           SELECT COUNT(*) FROM other; \
           SELECT SLEEP(0.5); \
           SELECT COUNT(*) FROM acc; \
         END",
    );
    let call = start(b, "CALL p()");
    std::thread::sleep(Duration::from_millis(150));
    ok(&mut a, "SET lock_wait_timeout = 5");
    let t0 = Instant::now();
    ok(&mut a, "LOCK TABLES acc WRITE");
    assert!(
        t0.elapsed() < Duration::from_secs(4),
        "the lock waited for the CALL only: {:?}",
        t0.elapsed()
    );
    let (r, _) = call.finish();
    r.expect("the CALL ran to its end");
    ok(&mut a, "UNLOCK TABLES");
}
