//! XA transactions at the engine level: the state machine of a session's
//! branch and MySQL's errors (1397, 1398, 1399, 1400, 1440, 1614), ONE
//! PHASE, a prepared branch that outlives its session with its row locks,
//! XA RECOVER's columns, and a restart that brings a prepared branch back.

mod common;

use canyon_common::Error;
use canyon_sql::Session;
use common::{ok, rows, run};
use std::sync::Arc;
use std::time::Duration;

/// The MySQL error number of a failed statement (`None` if it succeeded).
fn code(s: &mut Session, sql: &str) -> Option<u16> {
    match run(s, sql) {
        Ok(_) => None,
        Err(Error::Sql { code, .. }) => Some(code),
        Err(Error::LockWaitTimeout) => Some(1205),
        Err(Error::Deadlock) => Some(1213),
        Err(e) => panic!("{sql}: unexpected error {e:?}"),
    }
}

fn message(s: &mut Session, sql: &str) -> String {
    match run(s, sql) {
        Err(Error::Sql { message, .. }) => message,
        other => panic!("{sql}: expected an XA error, got {other:?}"),
    }
}

fn setup(engine: &Arc<canyon_sql::Engine>) -> Session {
    let mut s = engine.session(1, "root", "localhost");
    ok(&mut s, "CREATE DATABASE x");
    ok(&mut s, "USE x");
    ok(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, v INT, KEY kv (v))",
    );
    ok(&mut s, "INSERT INTO t VALUES (1, 10), (2, 20)");
    s
}

fn session(engine: &Arc<canyon_sql::Engine>, id: u32) -> Session {
    let mut s = engine.session(id, "root", "localhost");
    ok(&mut s, "USE x");
    s
}

#[test]
fn state_machine_and_errors_follow_mysql() {
    let engine = common::engine(Duration::from_millis(300));
    let mut a = setup(&engine);
    let mut b = session(&engine, 2);

    assert_eq!(
        message(&mut a, "XA END 'a'"),
        "XAER_RMFAIL: The command cannot be executed when global transaction is in the  NON-EXISTING state"
    );
    assert_eq!(code(&mut a, "XA ROLLBACK 'nope'"), Some(1397));
    assert_eq!(code(&mut a, "XA START 'j' JOIN"), Some(1398));

    ok(&mut a, "XA START 'a'");
    assert_eq!(code(&mut b, "XA START 'a'"), Some(1440), "the xid is taken");
    assert_eq!(code(&mut a, "XA START 'b'"), Some(1399));
    for implicit_commit in [
        "COMMIT",
        "ROLLBACK",
        "BEGIN",
        "CREATE TABLE u (i INT)",
        "LOCK TABLES t READ",
    ] {
        let m = message(&mut a, implicit_commit);
        assert!(
            m.ends_with("in the  ACTIVE state"),
            "{implicit_commit}: {m}"
        );
    }
    assert_eq!(code(&mut a, "XA PREPARE 'a'"), Some(1399));
    ok(&mut a, "UPDATE t SET v = 11 WHERE id = 1");
    assert_eq!(code(&mut a, "XA END 'b'"), Some(1397));
    assert_eq!(code(&mut a, "XA END 'a' SUSPEND"), Some(1398));
    ok(&mut a, "XA END 'a'");
    let m = message(&mut a, "UPDATE t SET v = 12 WHERE id = 1");
    assert!(m.ends_with("in the  IDLE state"), "{m}");
    assert_eq!(
        code(&mut a, "XA COMMIT 'a'"),
        Some(1399),
        "IDLE needs ONE PHASE"
    );
    assert_eq!(code(&mut a, "XA START 'a' RESUME"), None);
    ok(&mut a, "UPDATE t SET v = 12 WHERE id = 2");
    ok(&mut a, "XA END 'a'");
    assert_eq!(
        rows(&mut b, "SELECT v FROM t ORDER BY id"),
        [["10"], ["20"]],
        "not committed yet"
    );
    ok(&mut a, "XA COMMIT 'a' ONE PHASE");
    assert_eq!(
        rows(&mut b, "SELECT v FROM t ORDER BY id"),
        [["11"], ["12"]]
    );
    // The xid is free again, and the session back to normal transactions.
    ok(&mut b, "XA START 'a'");
    ok(&mut b, "XA END 'a'");
    ok(&mut b, "XA ROLLBACK 'a'");
    ok(&mut a, "BEGIN");
    assert_eq!(code(&mut a, "XA START 'c'"), Some(1400));
    ok(&mut a, "ROLLBACK");

    // PREPARED: only XA COMMIT / ROLLBACK; ONE PHASE is refused there.
    ok(&mut a, "XA START 'p'");
    ok(&mut a, "DELETE FROM t WHERE id = 2");
    ok(&mut a, "XA END 'p'");
    ok(&mut a, "XA PREPARE 'p'");
    let m = message(&mut a, "SELECT * FROM t");
    assert!(m.ends_with("in the  PREPARED state"), "{m}");
    assert_eq!(code(&mut a, "XA COMMIT 'p' ONE PHASE"), Some(1399));
    assert_eq!(
        code(&mut b, "XA COMMIT 'p'"),
        Some(1397),
        "attached to session a: not b's to finish"
    );
    assert_eq!(rows(&mut b, "XA RECOVER"), [["1", "1", "0", "p"]]);
    ok(&mut a, "XA COMMIT 'p'");
    assert_eq!(rows(&mut b, "SELECT id FROM t"), [["1"]]);
    assert!(rows(&mut b, "XA RECOVER").is_empty());
    assert_eq!(
        rows(
            &mut b,
            "SELECT xa FROM information_schema.engines WHERE engine = 'InnoDB'"
        ),
        [["YES"]]
    );
}

#[test]
fn prepared_branch_outlives_its_session_with_its_locks() {
    let engine = common::engine(Duration::from_millis(300));
    let mut a = setup(&engine);
    ok(&mut a, "XA START X'0102', 'bq', 5");
    ok(&mut a, "UPDATE t SET v = 100 WHERE id = 1");
    ok(&mut a, "INSERT INTO t VALUES (3, 30)");
    ok(&mut a, "XA END 0x0102, 'bq', 5");
    ok(&mut a, "XA PREPARE X'0102', 'bq', 5");
    drop(a); // the client disconnects

    let mut b = session(&engine, 2);
    assert_eq!(
        rows(&mut b, "XA RECOVER CONVERT XID"),
        [["5", "2", "2", "0x01026271"]]
    );
    assert_eq!(
        code(&mut b, "UPDATE t SET v = 0 WHERE id = 1"),
        Some(1205),
        "the prepared branch holds the row lock"
    );
    assert_eq!(code(&mut b, "INSERT INTO t VALUES (3, 0)"), Some(1205));
    assert_eq!(rows(&mut b, "SELECT v FROM t WHERE id = 1"), [["10"]]);
    // Not from inside a transaction.
    ok(&mut b, "BEGIN");
    ok(&mut b, "SELECT 1");
    assert_eq!(code(&mut b, "XA COMMIT X'0102', 'bq', 5"), Some(1399));
    ok(&mut b, "ROLLBACK");
    ok(&mut b, "XA COMMIT X'0102', 'bq', 5");
    assert_eq!(
        rows(&mut b, "SELECT id, v FROM t ORDER BY id"),
        [["1", "100"], ["2", "20"], ["3", "30"]]
    );
    assert_eq!(rows(&mut b, "SELECT id FROM t WHERE v = 100"), [["1"]]);
    assert_eq!(code(&mut b, "UPDATE t SET v = 1 WHERE id = 1"), None);
    assert_eq!(code(&mut b, "XA COMMIT X'0102', 'bq', 5"), Some(1397));
}

#[test]
fn active_branch_of_a_dropped_session_rolls_back() {
    let engine = common::engine(Duration::from_millis(300));
    let mut a = setup(&engine);
    ok(&mut a, "XA START 'gone'");
    ok(&mut a, "UPDATE t SET v = 0 WHERE id = 1");
    drop(a);
    let mut b = session(&engine, 2);
    assert!(rows(&mut b, "XA RECOVER").is_empty());
    ok(&mut b, "UPDATE t SET v = 1 WHERE id = 1");
    ok(&mut b, "XA START 'gone'");
    ok(&mut b, "XA END 'gone'");
    ok(&mut b, "XA ROLLBACK 'gone'");
}

#[test]
fn deadlock_victim_branch_answers_xa_rbdeadlock() {
    let engine = common::engine(Duration::from_secs(5));
    let mut a = setup(&engine);
    let mut b = session(&engine, 2);
    ok(&mut a, "XA START 'd1'");
    ok(&mut a, "UPDATE t SET v = 1 WHERE id = 1");
    ok(&mut b, "XA START 'd2'");
    ok(&mut b, "UPDATE t SET v = 2 WHERE id = 2");
    let waiter = std::thread::spawn(move || {
        let r = code(&mut b, "UPDATE t SET v = 2 WHERE id = 1");
        (r, b)
    });
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(code(&mut a, "UPDATE t SET v = 1 WHERE id = 2"), Some(1213));
    let (r, mut b) = waiter.join().expect("b");
    assert_eq!(r, None, "the victim's locks went: b goes on");
    assert_eq!(code(&mut a, "UPDATE t SET v = 1 WHERE id = 2"), Some(1614));
    assert_eq!(code(&mut a, "XA END 'd1'"), Some(1614));
    assert_eq!(code(&mut a, "XA COMMIT 'd1'"), Some(1614));
    assert!(rows(&mut a, "XA RECOVER").is_empty());
    ok(&mut b, "XA END 'd2'");
    ok(&mut b, "XA PREPARE 'd2'");
    ok(&mut b, "XA COMMIT 'd2'");
    assert_eq!(rows(&mut a, "SELECT v FROM t ORDER BY id"), [["2"], ["2"]]);
    // After END moved it to ROLLBACK ONLY, XA ROLLBACK ends it.
    ok(&mut a, "XA START 'd3'");
    ok(&mut a, "XA END 'd3'");
    ok(&mut a, "XA ROLLBACK 'd3'");
}

#[test]
fn prepared_branch_survives_a_restart_with_its_locks() {
    let storage = Arc::new(canyon_storage::MemoryStorage::new());
    {
        let engine = common::open(&storage);
        engine.bootstrap_root("").expect("root");
        let mut a = setup(&engine);
        ok(&mut a, "XA START 'r'");
        ok(&mut a, "UPDATE t SET v = 99 WHERE id = 2");
        ok(&mut a, "XA END 'r'");
        ok(&mut a, "XA PREPARE 'r'");
    }
    let engine = common::open(&storage);
    let mut b = session(&engine, 2);
    ok(&mut b, "SET innodb_lock_wait_timeout = 1");
    assert_eq!(rows(&mut b, "XA RECOVER"), [["1", "1", "0", "r"]]);
    assert_eq!(code(&mut b, "DELETE FROM t WHERE id = 2"), Some(1205));
    assert_eq!(rows(&mut b, "SELECT v FROM t WHERE id = 2"), [["20"]]);
    ok(&mut b, "XA COMMIT 'r'");
    assert_eq!(rows(&mut b, "SELECT v FROM t WHERE id = 2"), [["99"]]);
    assert_eq!(rows(&mut b, "SELECT id FROM t WHERE v = 99"), [["2"]]);
}

/// XA RECOVER lists every session's xids, so it needs XA_RECOVER_ADMIN
/// (MySQL 8.0.19+, 1227 without it); finishing a detached branch needs only
/// its xid. Each XA statement counts in its `Com_xa_*` status variable.
#[test]
fn xa_recover_needs_xa_recover_admin_and_xa_statements_are_counted() {
    let engine = common::engine(Duration::from_millis(300));
    let mut root = setup(&engine);
    ok(&mut root, "CREATE USER app IDENTIFIED BY 'pw'");
    ok(&mut root, "GRANT ALL ON x.* TO app");
    let mut app = engine.session(2, "app", "localhost");
    ok(&mut app, "USE x");

    ok(&mut app, "XA START 'g'");
    ok(&mut app, "UPDATE t SET v = 11 WHERE id = 1");
    ok(&mut app, "XA END 'g'");
    ok(&mut app, "XA PREPARE 'g'");
    match run(&mut app, "XA RECOVER") {
        Err(Error::SpecificAccessDenied(p)) => assert_eq!(p, "XA_RECOVER_ADMIN"),
        other => panic!("XA RECOVER without XA_RECOVER_ADMIN: {other:?}"),
    }
    assert_eq!(rows(&mut root, "XA RECOVER"), [["1", "1", "0", "g"]]);
    for (name, n) in [
        ("Com_xa_start", "1"),
        ("Com_xa_end", "1"),
        ("Com_xa_prepare", "1"),
        ("Com_xa_recover", "1"),
        ("Com_xa_commit", "0"),
    ] {
        assert_eq!(
            rows(&mut app, &format!("SHOW SESSION STATUS LIKE '{name}'")),
            [[name, n]],
            "{name}"
        );
    }
    drop(app);

    // Another session of the same account finishes the branch by its xid.
    let mut again = engine.session(3, "app", "localhost");
    ok(&mut again, "XA COMMIT 'g'");
    // It counts as a commit (MySQL's Handler_commit counts XA COMMIT).
    assert_eq!(
        rows(&mut again, "SHOW SESSION STATUS LIKE 'Handler_commit'"),
        [["Handler_commit", "1"]]
    );
    assert_eq!(rows(&mut again, "SELECT v FROM x.t WHERE id = 1"), [["11"]]);
    ok(&mut root, "GRANT XA_RECOVER_ADMIN ON *.* TO app");
    assert!(rows(&mut again, "XA RECOVER").is_empty());
    assert_eq!(
        rows(&mut root, "SHOW GRANTS FOR app"),
        [
            ["GRANT USAGE ON *.* TO `app`@`%`"],
            ["GRANT XA_RECOVER_ADMIN ON *.* TO `app`@`%`"],
            ["GRANT ALL PRIVILEGES ON `x`.* TO `app`@`%`"],
        ]
    );
    assert_eq!(
        rows(&mut root, "SHOW GLOBAL STATUS LIKE 'Com_xa_commit'"),
        [["Com_xa_commit", "1"]]
    );
}

/// DDL on a table a prepared branch wrote waits for the branch, up to
/// lock_wait_timeout (1205), as MySQL's prepared branch keeps its metadata
/// locks: its XA COMMIT must still succeed into the table it wrote.
#[test]
fn ddl_waits_for_a_prepared_branch_that_wrote_the_table() {
    let engine = common::engine(Duration::from_millis(300));
    let mut a = setup(&engine);
    ok(&mut a, "CREATE TABLE other (id INT PRIMARY KEY)");
    ok(&mut a, "XA START 'd'");
    ok(&mut a, "UPDATE t SET v = 12 WHERE id = 1");
    ok(&mut a, "XA END 'd'");
    ok(&mut a, "XA PREPARE 'd'");

    let mut b = session(&engine, 2);
    ok(&mut b, "SET lock_wait_timeout = 1");
    for ddl in [
        "ALTER TABLE t ADD COLUMN c INT",
        "DROP TABLE t",
        "TRUNCATE TABLE t",
        "CREATE INDEX kv2 ON t (v)",
        "RENAME TABLE t TO t2",
    ] {
        let t0 = std::time::Instant::now();
        assert!(
            matches!(run(&mut b, ddl), Err(Error::LockWaitTimeout)),
            "{ddl}"
        );
        assert!(t0.elapsed() >= Duration::from_millis(900), "{ddl} waited");
    }
    ok(&mut b, "ALTER TABLE other ADD COLUMN c INT");
    ok(&mut a, "XA COMMIT 'd'");
    ok(&mut b, "ALTER TABLE t ADD COLUMN c INT");
    assert_eq!(
        rows(&mut b, "SELECT id, v, c FROM t ORDER BY id"),
        [["1", "12", "NULL"], ["2", "20", "NULL"]]
    );
}

/// MariaDB's Spider engine sends its session settings and `xa start` in one
/// multi-statement text; each XA statement in it runs as if sent alone.
#[test]
fn xa_statements_run_inside_a_multi_statement_text() {
    let engine = common::engine(Duration::from_millis(300));
    let mut a = setup(&engine);
    let results = a.execute(
        "set session autocommit = 1;set @`spider_lc_./x/t` = 'a';xa start 0x3137,0x31,1",
        true,
    );
    assert_eq!(results.len(), 3);
    assert!(results.iter().all(|r| r.is_ok()), "{results:?}");
    ok(&mut a, "UPDATE t SET v = 13 WHERE id = 1");
    let results = a.execute("xa end 0x3137,0x31,1; xa prepare 0x3137,0x31,1", true);
    assert!(results.iter().all(|r| r.is_ok()), "{results:?}");
    assert_eq!(
        rows(&mut a, "XA RECOVER CONVERT XID"),
        [["1", "2", "1", "0x313731"]]
    );
    let results = a.execute("xa commit 0x3137,0x31,1;select v from t where id = 1", true);
    assert!(results.iter().all(|r| r.is_ok()), "{results:?}");
    assert_eq!(rows(&mut a, "SELECT v FROM t WHERE id = 1"), [["13"]]);
    // A text whose XA piece is malformed is a syntax error, as alone.
    let results = a.execute("select 1;xa start", true);
    assert!(
        results.iter().any(|r| matches!(r, Err(Error::Syntax(_)))),
        "{results:?}"
    );
}
