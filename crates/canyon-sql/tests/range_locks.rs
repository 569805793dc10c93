//! Range locks and shared locks (issue 24, items 1–3): above READ COMMITTED
//! a locking read locks the key range it read, so no other transaction can
//! insert into it (or move a row into it) until the reader ends, as InnoDB's
//! next-key locks ensure; FOR SHARE / LOCK IN SHARE MODE, SERIALIZABLE reads
//! and foreign-key parent checks take shared row locks. The design is
//! canyon-txn's `range_lock.rs`; the anomaly table is in
//! docs/architecture/transactions.md.

mod common;

use canyon_common::Error;
use canyon_sql::{Engine, Session};
use common::{blocked, free, rows, run, second_closes_a_deadlock};
use std::sync::Arc;

/// `t`: ids 10, 20, 30 with `k` equal to the id, and an index on `k`.
fn engine() -> Arc<Engine> {
    common::engine_with(&[
        "CREATE DATABASE r",
        "USE r",
        "CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, v INT NOT NULL DEFAULT 0, KEY (k))",
        "INSERT INTO t (id, k) VALUES (10, 10), (20, 20), (30, 30)",
        "CREATE TABLE parent (id INT PRIMARY KEY)",
        "INSERT INTO parent VALUES (1), (2)",
        "CREATE TABLE child (id INT PRIMARY KEY, p INT NOT NULL, \
         FOREIGN KEY (p) REFERENCES parent (id))",
    ])
}

/// A session on database `r`; `impatient` ones give up a lock wait after a second.
fn session(e: &Arc<Engine>, id: u32, impatient: bool) -> Session {
    common::session_on(e, "r", id, impatient)
}

/// The first column of the rows `sql` returns, as text.
fn col(s: &mut Session, sql: &str) -> Vec<String> {
    rows(s, sql).into_iter().map(|mut r| r.remove(0)).collect()
}

#[test]
fn a_locking_range_read_keeps_inserts_out_of_its_range() {
    let e = engine();
    let mut a = session(&e, 2, false);
    let mut b = session(&e, 3, true);
    run(&mut a, "BEGIN").unwrap();
    assert_eq!(
        col(
            &mut a,
            "SELECT id FROM t WHERE id BETWEEN 10 AND 25 FOR UPDATE"
        ),
        ["10", "20"]
    );
    blocked(&mut b, "INSERT INTO t (id, k) VALUES (15, 15)");
    // Exactly the range read is locked (InnoDB's next-key lock would also
    // take the gap up to 30).
    free(&mut b, "INSERT INTO t (id, k) VALUES (26, 26)");
    free(&mut b, "INSERT INTO t (id, k) VALUES (5, 5)");
    // The phantom never shows: the second read equals the first.
    assert_eq!(
        col(
            &mut a,
            "SELECT id FROM t WHERE id BETWEEN 10 AND 25 FOR UPDATE"
        ),
        ["10", "20"]
    );
    run(&mut a, "COMMIT").unwrap();
    free(&mut b, "INSERT INTO t (id, k) VALUES (15, 15)");
}

#[test]
fn an_index_range_lock_stops_inserts_and_rows_moving_in() {
    let e = engine();
    let mut a = session(&e, 2, false);
    let mut b = session(&e, 3, true);
    run(&mut a, "BEGIN").unwrap();
    assert!(col(
        &mut a,
        "SELECT id FROM t WHERE k BETWEEN 100 AND 200 FOR UPDATE"
    )
    .is_empty());
    blocked(&mut b, "INSERT INTO t (id, k) VALUES (40, 150)");
    // An UPDATE that gives a row a key in the range is an insert there.
    blocked(&mut b, "UPDATE t SET k = 150 WHERE id = 10");
    free(&mut b, "UPDATE t SET k = 250 WHERE id = 10");
    free(&mut b, "INSERT INTO t (id, k) VALUES (41, 99)");
    run(&mut a, "COMMIT").unwrap();
    free(&mut b, "INSERT INTO t (id, k) VALUES (40, 150)");
}

#[test]
fn update_and_delete_over_a_range_lock_it() {
    let e = engine();
    let mut a = session(&e, 2, false);
    let mut b = session(&e, 3, true);
    run(&mut a, "BEGIN").unwrap();
    free(&mut a, "UPDATE t SET v = 1 WHERE k > 25");
    blocked(&mut b, "INSERT INTO t (id, k) VALUES (99, 99)");
    free(&mut b, "INSERT INTO t (id, k) VALUES (1, 1)");
    run(&mut a, "ROLLBACK").unwrap();
    run(&mut a, "BEGIN").unwrap();
    free(&mut a, "DELETE FROM t WHERE id < 5");
    blocked(&mut b, "INSERT INTO t (id, k) VALUES (2, 2)");
    run(&mut a, "COMMIT").unwrap();
    free(&mut b, "INSERT INTO t (id, k) VALUES (2, 2)");
}

#[test]
fn a_limit_scan_locks_only_the_keys_it_read() {
    let e = engine();
    let mut a = session(&e, 2, false);
    let mut b = session(&e, 3, true);
    run(&mut a, "BEGIN").unwrap();
    assert_eq!(
        col(
            &mut a,
            "SELECT id FROM t WHERE id > 0 ORDER BY id LIMIT 1 FOR UPDATE"
        ),
        ["10"]
    );
    blocked(&mut b, "INSERT INTO t (id, k) VALUES (5, 5)");
    free(&mut b, "INSERT INTO t (id, k) VALUES (15, 15)");
    run(&mut a, "COMMIT").unwrap();
}

#[test]
fn read_committed_takes_no_range_locks() {
    let e = engine();
    let mut a = session(&e, 2, false);
    let mut b = session(&e, 3, true);
    run(
        &mut a,
        "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
    )
    .unwrap();
    run(&mut a, "BEGIN").unwrap();
    col(
        &mut a,
        "SELECT id FROM t WHERE id BETWEEN 10 AND 25 FOR UPDATE",
    );
    free(&mut b, "INSERT INTO t (id, k) VALUES (15, 15)");
    // The rows read are locked all the same.
    blocked(&mut b, "UPDATE t SET v = 2 WHERE id = 10");
    run(&mut a, "COMMIT").unwrap();
    // A locking read waits for a row being inserted into its range (InnoDB
    // waits for the new record's lock), though it keeps no range.
    let mut c = session(&e, 4, true);
    run(
        &mut c,
        "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
    )
    .unwrap();
    run(&mut b, "BEGIN").unwrap();
    free(&mut b, "INSERT INTO t (id, k) VALUES (16, 16)");
    run(&mut c, "BEGIN").unwrap();
    blocked(
        &mut c,
        "SELECT id FROM t WHERE id BETWEEN 10 AND 25 FOR UPDATE",
    );
    run(&mut b, "COMMIT").unwrap();
    assert_eq!(
        col(
            &mut c,
            "SELECT id FROM t WHERE id BETWEEN 10 AND 25 FOR UPDATE"
        ),
        ["10", "15", "16", "20"]
    );
    run(&mut c, "COMMIT").unwrap();
}

#[test]
fn an_insert_that_timed_out_on_a_range_leaves_its_key_free() {
    // The insert intention comes before the row lock, as in InnoDB: the
    // range's owner can insert the key the waiter gave up on.
    let e = engine();
    let mut a = session(&e, 2, false);
    let mut b = session(&e, 3, true);
    run(&mut a, "BEGIN").unwrap();
    run(&mut b, "BEGIN").unwrap();
    assert!(col(
        &mut a,
        "SELECT id FROM t WHERE id BETWEEN 11 AND 19 FOR UPDATE"
    )
    .is_empty());
    blocked(&mut b, "INSERT INTO t (id, k) VALUES (14, 14)");
    free(&mut a, "INSERT INTO t (id, k) VALUES (14, 41)");
    run(&mut a, "COMMIT").unwrap();
    match run(&mut b, "INSERT INTO t (id, k) VALUES (14, 14)") {
        Err(Error::DuplicateEntry { .. }) => {}
        other => panic!("a's row is there now: {other:?}"),
    }
    run(&mut b, "ROLLBACK").unwrap();
}

#[test]
fn check_then_insert_never_duplicates_one_side_deadlocks() {
    // Two transactions check that no row has k = 50, then insert one: the
    // range locks are compatible (both checks pass), and each insert waits
    // for the other's range: a deadlock, one is rolled back (1213), as in
    // InnoDB. Without range locks both would commit a k = 50.
    let e = engine();
    let mut a = session(&e, 2, false);
    let mut b = session(&e, 3, false);
    let check = "SELECT id FROM t WHERE k = 50 FOR UPDATE";
    run(&mut a, "BEGIN").unwrap();
    run(&mut b, "BEGIN").unwrap();
    assert!(col(&mut a, check).is_empty());
    assert!(col(&mut b, check).is_empty());
    let outcome_b = second_closes_a_deadlock(
        &mut a,
        "INSERT INTO t (id, k) VALUES (50, 50)",
        &mut b,
        "INSERT INTO t (id, k) VALUES (51, 50)",
    );
    assert!(
        matches!(outcome_b, Err(Error::Deadlock)),
        "b closes the cycle: {outcome_b:?}"
    );
    let mut c = session(&e, 4, false);
    assert_eq!(col(&mut c, "SELECT COUNT(*) FROM t WHERE k = 50"), ["1"]);
}

#[test]
fn for_share_readers_share_and_a_writer_waits() {
    let e = engine();
    let mut a = session(&e, 2, false);
    let mut b = session(&e, 3, true);
    let mut c = session(&e, 4, true);
    run(&mut a, "BEGIN").unwrap();
    run(&mut b, "BEGIN").unwrap();
    assert_eq!(
        col(&mut a, "SELECT v FROM t WHERE id = 10 FOR SHARE"),
        ["0"]
    );
    assert_eq!(
        col(&mut b, "SELECT v FROM t WHERE id = 10 LOCK IN SHARE MODE"),
        ["0"]
    );
    blocked(&mut c, "UPDATE t SET v = 3 WHERE id = 10");
    // A shared range lock keeps inserts out too.
    col(&mut a, "SELECT id FROM t WHERE id > 25 FOR SHARE");
    blocked(&mut c, "INSERT INTO t (id, k) VALUES (35, 35)");
    run(&mut a, "COMMIT").unwrap();
    blocked(&mut c, "UPDATE t SET v = 3 WHERE id = 10");
    // The sole holder upgrades at once.
    free(&mut b, "UPDATE t SET v = 4 WHERE id = 10");
    run(&mut b, "COMMIT").unwrap();
    free(&mut c, "UPDATE t SET v = 3 WHERE id = 10");
    free(&mut c, "INSERT INTO t (id, k) VALUES (35, 35)");
}

#[test]
fn serializable_predicate_write_skew_is_stopped() {
    // Hermitage's G2: each transaction reads a predicate, then inserts a row
    // the other's predicate covers. SERIALIZABLE reads lock their ranges, so
    // the second insert closes a wait-for cycle.
    let e = engine();
    let mut a = session(&e, 2, false);
    let mut b = session(&e, 3, false);
    for s in [&mut a, &mut b] {
        run(s, "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE").unwrap();
        run(s, "BEGIN").unwrap();
        assert_eq!(col(s, "SELECT COUNT(*) FROM t WHERE k >= 100"), ["0"]);
    }
    let outcome_b = second_closes_a_deadlock(
        &mut a,
        "INSERT INTO t (id, k) VALUES (100, 100)",
        &mut b,
        "INSERT INTO t (id, k) VALUES (101, 101)",
    );
    assert!(matches!(outcome_b, Err(Error::Deadlock)), "{outcome_b:?}");
    let mut c = session(&e, 4, false);
    assert_eq!(col(&mut c, "SELECT COUNT(*) FROM t WHERE k >= 100"), ["1"]);
}

#[test]
fn children_of_one_parent_insert_side_by_side() {
    // The parent check takes a shared lock (InnoDB's S lock on the parent
    // record): two transactions adding children of one parent do not queue,
    // and the parent cannot be deleted under them.
    let e = engine();
    let mut a = session(&e, 2, false);
    let mut b = session(&e, 3, true);
    let mut c = session(&e, 4, true);
    run(&mut a, "BEGIN").unwrap();
    free(&mut a, "INSERT INTO child VALUES (1, 1)");
    run(&mut b, "BEGIN").unwrap();
    free(&mut b, "INSERT INTO child VALUES (2, 1)");
    blocked(&mut c, "DELETE FROM parent WHERE id = 1");
    run(&mut a, "COMMIT").unwrap();
    run(&mut b, "COMMIT").unwrap();
    match run(&mut c, "DELETE FROM parent WHERE id = 1") {
        Err(Error::ForeignKey { .. }) => {}
        other => panic!("the parent has children now: {other:?}"),
    }
}
