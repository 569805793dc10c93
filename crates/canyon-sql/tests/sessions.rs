//! Concurrent sessions through the engine API: the transaction behaviour a
//! MySQL client sees (1213 rolls back the whole transaction, 1205 only the
//! statement, no lost updates with UPDATE ... = ... + 1, REPEATABLE READ snapshots).

mod common;

use canyon_common::Error;
use canyon_sql::{Engine, QueryResult, Session, Value};
use std::sync::Arc;
use std::time::Duration;

fn engine() -> Arc<Engine> {
    let e = common::engine(Duration::from_secs(10));
    let mut s = e.session(1, "root", "localhost");
    for sql in [
        "CREATE DATABASE b",
        "USE b",
        "CREATE TABLE acc (id INT PRIMARY KEY, bal INT NOT NULL)",
        "INSERT INTO acc VALUES (1, 100), (2, 100)",
    ] {
        run(&mut s, sql).expect("setup succeeds");
    }
    e
}

fn session(e: &Arc<Engine>, id: u32) -> Session {
    let mut s = e.session(id, "root", "localhost");
    run(&mut s, "USE b").expect("USE succeeds");
    s
}

fn run(s: &mut Session, sql: &str) -> Result<QueryResult, Error> {
    s.execute(sql, false).pop().expect("one result")
}

/// The first value of the first row `sql` returns.
fn first_value(s: &mut Session, sql: &str) -> Value {
    match run(s, sql).expect("select succeeds") {
        QueryResult::Rows { rows, .. } => rows[0][0].clone(),
        other => panic!("expected rows, got {other:?}"),
    }
}

fn balance(s: &mut Session, id: i64) -> Value {
    first_value(s, &format!("SELECT bal FROM acc WHERE id = {id}"))
}

#[test]
fn deadlock_rolls_back_the_victim_and_the_other_commits() {
    let e = engine();
    let mut a = session(&e, 2);
    let mut b = session(&e, 3);
    run(&mut a, "BEGIN").expect("begin");
    run(&mut b, "BEGIN").expect("begin");
    run(&mut a, "UPDATE acc SET bal = bal - 10 WHERE id = 1").expect("a locks row 1");
    run(&mut b, "UPDATE acc SET bal = bal - 20 WHERE id = 2").expect("b locks row 2");
    let t = std::thread::spawn(move || {
        let r = run(&mut a, "UPDATE acc SET bal = bal + 10 WHERE id = 2");
        (a, r)
    });
    // Give `a` time to start waiting for row 2, then close the cycle.
    std::thread::sleep(Duration::from_millis(200));
    let rb = run(&mut b, "UPDATE acc SET bal = bal + 20 WHERE id = 1");
    let (a, ra) = t.join().expect("thread joins");
    let (mut winner, mut loser) = match (&ra, &rb) {
        (Ok(_), Err(Error::Deadlock)) => (a, b),
        (Err(Error::Deadlock), Ok(_)) => (b, a),
        other => panic!("expected exactly one deadlock victim, got {other:?}"),
    };
    assert!(
        !loser.in_transaction(),
        "1213 rolls back the whole transaction"
    );
    assert!(winner.in_transaction());
    run(&mut winner, "COMMIT").expect("the survivor commits");
    // Exactly one transfer happened; money is conserved.
    let total = [1, 2]
        .iter()
        .map(|id| balance(&mut loser, *id).to_i64().expect("int"))
        .sum::<i64>();
    assert_eq!(total, 200);
}

#[test]
fn lock_wait_timeout_rolls_back_only_the_statement() {
    let e = engine();
    let mut a = session(&e, 2);
    let mut b = session(&e, 3);
    run(&mut a, "BEGIN").expect("begin");
    run(&mut a, "UPDATE acc SET bal = 0 WHERE id = 1").expect("a locks row 1");
    run(&mut b, "SET innodb_lock_wait_timeout = 1").expect("set");
    run(&mut b, "BEGIN").expect("begin");
    run(&mut b, "UPDATE acc SET bal = 7 WHERE id = 2").expect("b's first statement");
    assert!(matches!(
        run(&mut b, "UPDATE acc SET bal = 1 WHERE id = 1"),
        Err(Error::LockWaitTimeout)
    ));
    assert!(
        b.in_transaction(),
        "1205 keeps the transaction (InnoDB default)"
    );
    run(&mut a, "ROLLBACK").expect("a rolls back");
    run(&mut b, "COMMIT").expect("b commits its first statement");
    assert_eq!(balance(&mut a, 2), Value::Int(7));
    assert_eq!(balance(&mut a, 1), Value::Int(100));
}

#[test]
fn concurrent_increments_lose_no_update() {
    let e = engine();
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let e = e.clone();
            std::thread::spawn(move || {
                let mut s = session(&e, 10 + i);
                for _ in 0..100 {
                    run(&mut s, "UPDATE acc SET bal = bal + 1 WHERE id = 1").expect("increment");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("thread joins");
    }
    let mut s = session(&e, 2);
    assert_eq!(balance(&mut s, 1), Value::Int(500));
}

#[test]
fn repeatable_read_keeps_its_snapshot_and_read_committed_does_not() {
    let e = engine();
    let mut reader = session(&e, 2);
    let mut writer = session(&e, 3);
    run(&mut reader, "BEGIN").expect("begin");
    assert_eq!(balance(&mut reader, 1), Value::Int(100));
    run(&mut writer, "UPDATE acc SET bal = 1 WHERE id = 1").expect("autocommit update");
    assert_eq!(
        balance(&mut reader, 1),
        Value::Int(100),
        "REPEATABLE READ: same snapshot"
    );
    run(&mut reader, "COMMIT").expect("commit");
    assert_eq!(balance(&mut reader, 1), Value::Int(1));

    run(
        &mut reader,
        "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
    )
    .expect("set");
    run(&mut reader, "BEGIN").expect("begin");
    assert_eq!(balance(&mut reader, 1), Value::Int(1));
    run(&mut writer, "UPDATE acc SET bal = 2 WHERE id = 1").expect("autocommit update");
    assert_eq!(
        balance(&mut reader, 1),
        Value::Int(2),
        "READ COMMITTED: new snapshot per statement"
    );
    run(&mut reader, "COMMIT").expect("commit");
}

#[test]
fn dropping_a_session_rolls_back_and_frees_its_locks() {
    let e = engine();
    let mut a = session(&e, 2);
    run(&mut a, "BEGIN").expect("begin");
    run(&mut a, "UPDATE acc SET bal = 0 WHERE id = 1").expect("lock row 1");
    drop(a); // the client vanished
    let mut b = session(&e, 3);
    run(&mut b, "SET innodb_lock_wait_timeout = 1").expect("set");
    run(&mut b, "UPDATE acc SET bal = bal + 1 WHERE id = 1").expect("the lock was released");
    assert_eq!(
        balance(&mut b, 1),
        Value::Int(101),
        "the dropped transaction's write is gone"
    );
}

/// ORDER BY ... LIMIT served by a secondary index stays exact for an old
/// snapshot: a row whose indexed column another transaction changed after the
/// snapshot is met at its new key position; the scan notices and sorts.
#[test]
fn index_order_survives_a_concurrent_key_change() {
    let e = engine();
    let mut setup = session(&e, 2);
    for sql in [
        "CREATE TABLE ev (id INT PRIMARY KEY, k INT NOT NULL, INDEX by_k (k))",
        "INSERT INTO ev VALUES (1, 10), (2, 20), (3, 30), (4, 40)",
    ] {
        run(&mut setup, sql).expect("setup succeeds");
    }
    let mut reader = session(&e, 3);
    let mut writer = session(&e, 4);
    run(&mut reader, "BEGIN").expect("begin");
    let first =
        |s: &mut Session| match run(s, "SELECT id, k FROM ev WHERE k > 0 ORDER BY k LIMIT 2")
            .expect("select succeeds")
        {
            QueryResult::Rows { rows, .. } => rows,
            other => panic!("expected rows, got {other:?}"),
        };
    let before = first(&mut reader);
    assert_eq!(
        before,
        vec![
            vec![Value::Int(1), Value::Int(10)],
            vec![Value::Int(2), Value::Int(20)]
        ]
    );
    // Row 4 moves to the front of the index after the reader's snapshot.
    run(&mut writer, "UPDATE ev SET k = 5 WHERE id = 4").expect("update commits");
    assert_eq!(
        first(&mut reader),
        before,
        "the snapshot still orders by the old keys"
    );
    let desc = match run(
        &mut reader,
        "SELECT id FROM ev WHERE k > 0 ORDER BY k DESC LIMIT 1",
    )
    .expect("select")
    {
        QueryResult::Rows { rows, .. } => rows,
        other => panic!("expected rows, got {other:?}"),
    };
    assert_eq!(
        desc,
        vec![vec![Value::Int(4)]],
        "row 4 still has k = 40 in the snapshot"
    );
    run(&mut reader, "COMMIT").expect("commit");
    assert_eq!(
        first(&mut reader),
        vec![
            vec![Value::Int(4), Value::Int(5)],
            vec![Value::Int(1), Value::Int(10)]
        ]
    );
}

/// Privileges cover every table a statement reads: a join, a derived table or a
/// subquery over a database the account has no grant on is refused (1142).
#[test]
fn reads_through_joins_and_subqueries_need_privileges() {
    let e = engine();
    let mut root = session(&e, 2);
    for sql in [
        "CREATE DATABASE secret",
        "CREATE TABLE secret.s (id INT PRIMARY KEY)",
        "INSERT INTO secret.s VALUES (1)",
        "CREATE USER 'u'@'%' IDENTIFIED BY 'pw'",
        "GRANT ALL ON b.* TO 'u'@'%'",
    ] {
        run(&mut root, sql).expect("setup succeeds");
    }
    let mut u = e.session(3, "u", "localhost");
    run(&mut u, "USE b").expect("u may use b");
    run(&mut u, "SELECT id FROM acc WHERE id = 1").expect("u may read b");
    for sql in [
        "SELECT a.id FROM acc a JOIN secret.s ON s.id = a.id",
        "SELECT * FROM (SELECT id FROM secret.s) d",
        "SELECT id FROM acc WHERE id IN (SELECT id FROM secret.s)",
        "SELECT (SELECT COUNT(*) FROM secret.s)",
        "UPDATE acc SET bal = 0 WHERE id IN (SELECT id FROM secret.s)",
        "EXPLAIN SELECT a.id FROM acc a JOIN secret.s ON s.id = a.id",
    ] {
        match run(&mut u, sql) {
            Err(Error::TableAccessDenied { .. }) => {}
            other => panic!("{sql}: expected 1142, got {other:?}"),
        }
    }
}

/// A join of more tables than MySQL allows (61) is refused with 1116 before any
/// planning work; 61 tables still plan and run.
#[test]
fn joins_are_limited_to_61_tables() {
    let e = engine();
    let mut s = session(&e, 2);
    let join = |n: usize| {
        let mut q = "SELECT COUNT(*) FROM acc t0".to_string();
        for i in 1..n {
            q.push_str(&format!(" JOIN acc t{i} ON t{i}.id = t{}.id", i - 1));
        }
        q
    };
    match run(&mut s, &join(61)).expect("61 tables run") {
        QueryResult::Rows { rows, .. } => assert_eq!(rows, vec![vec![Value::Int(2)]]),
        other => panic!("expected rows, got {other:?}"),
    }
    match run(&mut s, &join(62)) {
        Err(Error::TooManyTables) => {}
        other => panic!("expected 1116, got {other:?}"),
    }
    run(&mut s, "SELECT 1").expect("the session goes on");
}

#[test]
fn read_only_transactions_refuse_writes() {
    let e = engine();
    let mut s = session(&e, 2);
    let refused = |r: Result<QueryResult, Error>| matches!(r, Err(Error::ReadOnlyTransaction));

    // START TRANSACTION READ ONLY: reads work, writes are 1792, the transaction
    // stays open and usable.
    run(&mut s, "START TRANSACTION READ ONLY").expect("begin read only");
    assert_eq!(balance(&mut s, 1), Value::Int(100));
    assert!(refused(run(&mut s, "UPDATE acc SET bal = 0 WHERE id = 1")));
    assert!(refused(run(&mut s, "INSERT INTO acc VALUES (3, 3)")));
    assert!(refused(run(&mut s, "DELETE FROM acc")));
    // Changing the next transaction's mode inside one: 1568.
    assert!(matches!(
        run(&mut s, "SET TRANSACTION READ WRITE"),
        Err(Error::CantChangeTxCharacteristics)
    ));
    run(&mut s, "COMMIT").expect("commit");
    run(&mut s, "UPDATE acc SET bal = 90 WHERE id = 1").expect("read-write again");

    // SET TRANSACTION READ ONLY applies to the next transaction only, also an
    // autocommitted statement's.
    run(&mut s, "SET TRANSACTION READ ONLY").expect("set next");
    assert!(refused(run(&mut s, "UPDATE acc SET bal = 0")));
    run(&mut s, "UPDATE acc SET bal = 80 WHERE id = 1").expect("the one after is read-write");

    // The session default, by both spellings; START TRANSACTION READ WRITE overrides it.
    run(&mut s, "SET SESSION TRANSACTION READ ONLY").expect("session read only");
    assert!(refused(run(&mut s, "UPDATE acc SET bal = 0")));
    match run(&mut s, "SELECT @@transaction_read_only").expect("select") {
        QueryResult::Rows { rows, .. } => assert_eq!(rows[0][0], Value::Int(1)),
        other => panic!("expected rows, got {other:?}"),
    }
    run(&mut s, "START TRANSACTION READ WRITE").expect("begin read write");
    run(&mut s, "UPDATE acc SET bal = 70 WHERE id = 1").expect("write");
    run(&mut s, "COMMIT").expect("commit");
    run(&mut s, "SET transaction_read_only = 0").expect("session read write");
    run(&mut s, "SET autocommit = 0").expect("autocommit off");
    run(&mut s, "SET @@session.tx_read_only = 1").expect("old name");
    assert!(refused(run(&mut s, "UPDATE acc SET bal = 0")));
    run(&mut s, "ROLLBACK").expect("rollback");
    assert_eq!(balance(&mut s, 1), Value::Int(70));
}

// LOCK TABLES and FTWRL: tests/table_locks.rs.

/// START TRANSACTION WITH CONSISTENT SNAPSHOT (as mariadb-dump
/// --single-transaction sends it) fixes the snapshot when it runs, not at the
/// first read.
#[test]
fn consistent_snapshot_is_taken_at_start() {
    let e = engine();
    let mut a = session(&e, 2);
    let mut b = session(&e, 3);
    run(
        &mut a,
        "START TRANSACTION /*!40100 WITH CONSISTENT SNAPSHOT */",
    )
    .expect("start");
    run(&mut b, "INSERT INTO acc VALUES (3, 0)").expect("insert");
    match run(&mut a, "SELECT COUNT(*) FROM acc").expect("count") {
        QueryResult::Rows { rows, .. } => assert_eq!(rows[0][0], Value::Int(2)),
        other => panic!("{other:?}"),
    }
    run(&mut a, "COMMIT").expect("commit");
}

fn scalar(s: &mut Session, sql: &str) -> String {
    match run(s, sql).unwrap_or_else(|e| panic!("{sql}: {e}")) {
        QueryResult::Rows { rows, .. } => rows[0][0].to_display(),
        other => panic!("expected rows, got {other:?}"),
    }
}

/// SET GLOBAL: new sessions start from the global value (and act on it), the
/// setting session keeps its own; scope and privilege errors as MySQL's.
#[test]
fn set_global_is_the_default_of_new_sessions() {
    let e = engine();
    let mut a = session(&e, 10);
    run(
        &mut a,
        "SET GLOBAL transaction_isolation = 'READ-COMMITTED'",
    )
    .expect("set global");
    assert_eq!(
        scalar(&mut a, "SELECT @@transaction_isolation"),
        "REPEATABLE-READ"
    );
    assert_eq!(
        scalar(&mut a, "SELECT @@global.transaction_isolation"),
        "READ-COMMITTED"
    );
    let mut b = session(&e, 11);
    assert_eq!(
        scalar(&mut b, "SELECT @@transaction_isolation"),
        "READ-COMMITTED"
    );
    // ... and b really runs READ COMMITTED: it sees a commit made mid-transaction.
    run(&mut b, "BEGIN").expect("begin");
    assert_eq!(balance(&mut b, 1), Value::Int(100));
    run(&mut a, "UPDATE acc SET bal = 150 WHERE id = 1").expect("update");
    assert_eq!(balance(&mut b, 1), Value::Int(150), "READ COMMITTED");
    run(&mut b, "COMMIT").expect("commit");

    run(&mut a, "SET @@global.autocommit = OFF").expect("set global autocommit");
    let mut c = session(&e, 12);
    assert_eq!(scalar(&mut c, "SELECT @@autocommit"), "0");
    assert_eq!(scalar(&mut a, "SELECT @@autocommit"), "1");
    run(&mut a, "SET GLOBAL autocommit = DEFAULT").expect("back to the default");
    run(&mut a, "SET GLOBAL transaction_isolation = DEFAULT").expect("default");
    let mut d = session(&e, 13);
    assert_eq!(scalar(&mut d, "SELECT @@autocommit"), "1");
    assert_eq!(
        scalar(&mut d, "SELECT @@transaction_isolation"),
        "REPEATABLE-READ"
    );

    let err = |s: &mut Session, sql: &str| run(s, sql).expect_err(sql);
    assert!(matches!(
        err(&mut a, "SET GLOBAL warning_count = 1"),
        Error::SessionOnlyVariable(_)
    ));
    assert!(matches!(
        err(&mut a, "SET max_connections = 5"),
        Error::GlobalOnlyVariable(_)
    ));
    assert!(matches!(
        err(&mut a, "SET GLOBAL max_connections = 5"),
        Error::Unsupported(_)
    ));
    assert!(matches!(
        err(&mut a, "SET GLOBAL version = 'x'"),
        Error::ReadOnlyVariable(_)
    ));
    assert!(matches!(
        err(&mut a, "SET PERSIST max_execution_time = 5"),
        Error::Unsupported(_)
    ));
    assert!(matches!(
        err(&mut a, "SET GLOBAL autocommit = 7"),
        Error::WrongValueForVar { .. }
    ));
    assert!(matches!(
        err(&mut a, "SET GLOBAL collation_connection = 'klingon_ci'"),
        Error::UnknownCollation(_)
    ));

    // long_query_time is a number of seconds: a string is refused (it would
    // read as 0 and make every statement slow).
    assert!(matches!(
        err(&mut a, "SET long_query_time = 'abc'"),
        Error::WrongValueForVar { .. }
    ));
    assert!(matches!(
        err(&mut a, "SET GLOBAL long_query_time = -1"),
        Error::WrongValueForVar { .. }
    ));
    run(&mut a, "SET long_query_time = 0.5").expect("a number");
    assert_eq!(scalar(&mut a, "SELECT @@long_query_time"), "0.5");

    run(&mut a, "CREATE USER 'plain'@'%' IDENTIFIED BY 'pw'").expect("create user");
    let mut u = e.session(14, "plain", "localhost");
    assert!(matches!(
        err(&mut u, "SET GLOBAL max_execution_time = 5"),
        Error::SpecificAccessDenied(_)
    ));
    run(&mut u, "SET SESSION max_execution_time = 5").expect("a session value needs nothing");
}

fn count(s: &mut Session) -> Value {
    first_value(s, "SELECT COUNT(*) FROM acc")
}

/// Deferred durability (the server's mode): the commit that ends a request is
/// left for the caller to await — invisible to everyone until then — while
/// commits inside a request, and implicit ones, wait in place.
#[test]
fn deferred_durability_leaves_only_the_request_ending_commit_to_the_caller() {
    let e = engine();
    let mut a = session(&e, 2);
    let mut b = session(&e, 3);
    a.set_deferred_durability(true);

    // An autocommitted INSERT: written, pending, not yet visible.
    run(&mut a, "INSERT INTO acc VALUES (3, 0)").expect("insert succeeds");
    let pending = a
        .take_pending_commit()
        .expect("the INSERT's commit is pending");
    assert!(!pending.is_done());
    assert_eq!(count(&mut b), Value::Int(2), "visible before it is durable");
    pending.wait().expect("the commit becomes durable");
    assert_eq!(count(&mut b), Value::Int(3));

    // A read-only request leaves nothing to await.
    assert_eq!(count(&mut a), Value::Int(3));
    assert!(a.take_pending_commit().is_none());

    // BEGIN ... COMMIT: only the COMMIT leaves its wait.
    run(&mut a, "BEGIN").expect("begin");
    run(&mut a, "INSERT INTO acc VALUES (4, 0)").expect("insert succeeds");
    assert!(a.take_pending_commit().is_none());
    run(&mut a, "COMMIT").expect("commit");
    let pending = a.take_pending_commit().expect("the COMMIT is pending");
    pending.wait().expect("durable");

    // Statements followed by more in one request wait in place: the SELECT
    // after the INSERT sees it.
    let results = a.execute(
        "INSERT INTO acc VALUES (5, 0); SELECT COUNT(*) FROM acc",
        true,
    );
    match &results[1] {
        Ok(QueryResult::Rows { rows, .. }) => assert_eq!(rows[0][0], Value::Int(5)),
        other => panic!("expected rows, got {other:?}"),
    }
    assert!(a.take_pending_commit().is_none());

    // An implicit commit (DDL) waits in place.
    run(&mut a, "BEGIN").expect("begin");
    run(&mut a, "INSERT INTO acc VALUES (6, 0)").expect("insert succeeds");
    run(&mut a, "CREATE TABLE other (id INT PRIMARY KEY)").expect("create succeeds");
    assert!(a.take_pending_commit().is_none());
    assert_eq!(count(&mut b), Value::Int(6));

    // A pending commit nobody took is settled by the next request.
    run(&mut a, "INSERT INTO acc VALUES (7, 0)").expect("insert succeeds");
    run(&mut a, "SELECT 1").expect("next request");
    assert!(a.take_pending_commit().is_none());
    assert_eq!(count(&mut b), Value::Int(7));
}

/// Locking statements over IN lists take their row locks in key order, as
/// InnoDB's range access does, so two transactions locking the same rows
/// listed in opposite orders (TPC-C's New-Order on stock) queue rather than
/// deadlock; rows come back in key order too.
#[test]
fn in_list_locks_are_taken_in_key_order() {
    let e = engine();
    {
        let mut s = session(&e, 2);
        run(&mut s, "INSERT INTO acc VALUES (3, 100), (4, 100)").expect("more rows");
        match run(&mut s, "SELECT id FROM acc WHERE id IN (4, 2, 3, 2)").expect("select") {
            QueryResult::Rows { rows, .. } => assert_eq!(
                rows.iter().map(|r| r[0].clone()).collect::<Vec<_>>(),
                [Value::Int(2), Value::Int(3), Value::Int(4)]
            ),
            other => panic!("expected rows, got {other:?}"),
        }
    }
    let threads: Vec<_> = [(1u32, "(1, 2, 3, 4)"), (2, "(4, 3, 2, 1)")]
        .into_iter()
        .map(|(i, list)| {
            let e = e.clone();
            std::thread::spawn(move || {
                let mut s = session(&e, 10 + i);
                let mut deadlocks = 0;
                for _ in 0..200 {
                    run(&mut s, "BEGIN").expect("begin");
                    let locked = run(
                        &mut s,
                        &format!("SELECT bal FROM acc WHERE id IN {list} FOR UPDATE"),
                    );
                    match locked {
                        Ok(_) => {
                            run(
                                &mut s,
                                &format!("UPDATE acc SET bal = bal + 1 WHERE id IN {list}"),
                            )
                            .expect("update under the locks");
                            run(&mut s, "COMMIT").expect("commit");
                        }
                        Err(Error::Deadlock) => {
                            deadlocks += 1;
                            run(&mut s, "ROLLBACK").expect("rollback");
                        }
                        Err(e) => panic!("{e}"),
                    }
                }
                deadlocks
            })
        })
        .collect();
    let deadlocks: u32 = threads.into_iter().map(|t| t.join().expect("joins")).sum();
    assert_eq!(deadlocks, 0, "opposite IN lists deadlocked");
    let mut s = session(&e, 2);
    assert_eq!(balance(&mut s, 1), Value::Int(500));
    assert_eq!(balance(&mut s, 4), Value::Int(500));
}

/// A session counter (SHOW SESSION STATUS).
fn session_counter(s: &mut Session, name: &str) -> i64 {
    match run(s, &format!("SHOW SESSION STATUS LIKE '{name}'")).expect("status") {
        QueryResult::Rows { rows, .. } => match &rows[0][1] {
            Value::Int(n) => *n,
            Value::UInt(n) => *n as i64,
            Value::Bytes(b) => String::from_utf8_lossy(b).parse().expect("a number"),
            other => panic!("{other:?}"),
        },
        other => panic!("expected rows, got {other:?}"),
    }
}

/// Asynchronous lock waits (what the server's connections use): an
/// autocommitted UPDATE that meets a held lock returns LockWaitPending with
/// its effects undone and its transaction queued; once the holder commits,
/// the wait resolves, and the same request sent again updates the row on top
/// of the holder's change — counted as one statement.
#[test]
fn an_async_lock_wait_runs_the_statement_again_once_granted() {
    let e = engine();
    let mut a = session(&e, 2);
    let mut b = session(&e, 3);
    b.set_async_lock_waits(true);
    run(&mut a, "BEGIN").expect("begin");
    run(&mut a, "UPDATE acc SET bal = bal + 10 WHERE id = 2").expect("a locks row 2");
    let updates = session_counter(&mut b, "Com_update");
    // Rows in key order: b doubles row 1, then meets a's lock on row 2.
    let sql = "UPDATE acc SET bal = bal * 2 WHERE id IN (1, 2)";
    assert!(matches!(run(&mut b, sql), Err(Error::LockWaitPending)));
    let wait = b.lock_wait().expect("b is queued for row 2");
    assert!(!wait.is_granted());
    assert!(
        b.in_transaction(),
        "the autocommit statement's transaction waits"
    );
    run(&mut a, "COMMIT").expect("a commits");
    assert!(wait.is_granted(), "a's commit handed the lock to b");
    b.end_lock_wait(None).expect("granted");
    match run(&mut b, sql).expect("the statement runs again") {
        QueryResult::Ok { affected_rows, .. } => assert_eq!(affected_rows, 2),
        other => panic!("{other:?}"),
    }
    assert!(!b.in_transaction(), "the autocommit statement committed");
    // Row 1 doubled once: the first run's write was rolled back with it.
    assert_eq!(balance(&mut a, 1), Value::Int(200));
    assert_eq!(balance(&mut a, 2), Value::Int(220));
    assert_eq!(
        session_counter(&mut b, "Com_update") - updates,
        1,
        "one statement, counted once"
    );
}

/// An async lock wait given up (its timeout, a KILL) fails the statement with
/// that error, as a blocked wait would: an autocommit statement's
/// transaction rolls back, an explicit transaction keeps its earlier work.
#[test]
fn an_async_lock_wait_given_up_fails_the_statement() {
    let e = engine();
    let mut a = session(&e, 2);
    let mut b = session(&e, 3);
    b.set_async_lock_waits(true);
    run(&mut a, "BEGIN").expect("begin");
    run(&mut a, "UPDATE acc SET bal = 0 WHERE id = 1").expect("a locks row 1");
    // Autocommit: nothing of b's stays, nothing stays queued.
    assert!(matches!(
        run(&mut b, "UPDATE acc SET bal = 5 WHERE id = 1"),
        Err(Error::LockWaitPending)
    ));
    assert!(matches!(
        b.end_lock_wait(Some(Error::LockWaitTimeout)),
        Err(Error::LockWaitTimeout)
    ));
    assert!(!b.in_transaction());
    assert!(b.lock_wait().is_none());
    // Explicit: the statement fails, the transaction goes on.
    run(&mut b, "BEGIN").expect("begin");
    run(&mut b, "UPDATE acc SET bal = 7 WHERE id = 2").expect("b's first statement");
    assert!(matches!(
        run(&mut b, "UPDATE acc SET bal = 1 WHERE id = 1"),
        Err(Error::LockWaitPending)
    ));
    assert!(matches!(
        b.end_lock_wait(Some(Error::Interrupted)),
        Err(Error::Interrupted)
    ));
    assert!(b.in_transaction());
    run(&mut a, "ROLLBACK").expect("a rolls back");
    run(&mut b, "COMMIT").expect("b commits its first statement");
    assert_eq!(balance(&mut a, 2), Value::Int(7));
    assert_eq!(
        balance(&mut a, 1),
        Value::Int(100),
        "b's withdrawn waiter got nothing"
    );
    // A multi-statement text blocks instead (it cannot be resumed midway).
    run(&mut a, "BEGIN").expect("begin");
    run(&mut a, "UPDATE acc SET bal = 0 WHERE id = 1").expect("a locks row 1");
    run(&mut b, "SET innodb_lock_wait_timeout = 1").expect("set");
    let results = b.execute("SELECT 1; UPDATE acc SET bal = 3 WHERE id = 1", true);
    assert!(
        matches!(results.last(), Some(Err(Error::LockWaitTimeout))),
        "{results:?}"
    );
    run(&mut a, "ROLLBACK").expect("a rolls back");
}

/// Concurrent child inserts and parent deletes never leave an orphan: the
/// child side locks the parent row it found, the parent side locks every
/// child it reads, so the two serialise on the parent row (crate::foreign).
/// A deleter creates parents one at a time, publishes each, and deletes it
/// shortly after; inserters keep adding children to the newest parent, each
/// in a transaction held open across a second statement. Without the parent
/// lock a delete slips between an insert's check and its commit and leaves an
/// orphan (checked: the test then fails).
#[test]
fn concurrent_child_inserts_and_parent_deletes_leave_no_orphans() {
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
    let e = engine();
    let mut s = session(&e, 1);
    run(&mut s, "CREATE TABLE p (id INT PRIMARY KEY)").expect("p");
    run(
        &mut s,
        "CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id))",
    )
    .expect("c");
    let current = Arc::new(AtomicU32::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    for t in 0..3u32 {
        let (e, current, done) = (e.clone(), current.clone(), done.clone());
        threads.push(std::thread::spawn(move || {
            let mut s = session(&e, 10 + t);
            let mut kept = 0u32;
            let mut k = 0u32;
            while !done.load(Ordering::SeqCst) {
                let pid = current.load(Ordering::SeqCst);
                if pid == 0 {
                    std::thread::yield_now();
                    continue;
                }
                k += 1;
                let id = t * 1_000_000 + k;
                run(&mut s, "BEGIN").expect("begin");
                match run(&mut s, &format!("INSERT INTO c VALUES ({id}, {pid})")) {
                    Ok(_) => {
                        run(&mut s, "SELECT COUNT(*) FROM c").expect("read");
                        run(&mut s, "COMMIT").expect("commit");
                        kept += 1;
                    }
                    Err(Error::ForeignKey { code: 1452, .. })
                    | Err(Error::LockWaitTimeout)
                    | Err(Error::Deadlock) => {
                        let _ = run(&mut s, "ROLLBACK");
                    }
                    Err(e) => panic!("insert: {e:?}"),
                }
            }
            kept
        }));
    }
    let (mut deleted, mut refused) = (0u32, 0u32);
    let mut d = session(&e, 20);
    for pid in 1..=300u32 {
        run(&mut d, &format!("INSERT INTO p VALUES ({pid})")).expect("parent");
        current.store(pid, Ordering::SeqCst);
        std::thread::sleep(Duration::from_micros(200));
        match run(&mut d, &format!("DELETE FROM p WHERE id = {pid}")) {
            Ok(QueryResult::Ok {
                affected_rows: 1, ..
            }) => deleted += 1,
            Err(Error::ForeignKey { code: 1451, .. }) => refused += 1,
            Err(Error::LockWaitTimeout) | Err(Error::Deadlock) => {}
            other => panic!("delete: {other:?}"),
        }
    }
    done.store(true, Ordering::SeqCst);
    let kept: u32 = threads
        .into_iter()
        .map(|t| t.join().expect("inserter"))
        .sum();
    let orphans = first_value(
        &mut s,
        "SELECT COUNT(*) FROM c LEFT JOIN p ON c.pid = p.id WHERE p.id IS NULL",
    );
    assert_eq!(
        orphans,
        Value::Int(0),
        "children without a parent ({kept} children, {deleted} parents deleted, {refused} refused)"
    );
    assert_eq!(
        first_value(&mut s, "SELECT COUNT(*) FROM c"),
        Value::Int(i64::from(kept))
    );
    // The parents not deleted (refused, or a lock wait that gave up) remain.
    assert_eq!(
        first_value(&mut s, "SELECT COUNT(*) FROM p"),
        Value::Int(i64::from(300 - deleted))
    );
}
