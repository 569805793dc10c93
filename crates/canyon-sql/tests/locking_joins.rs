//! Locking reads over joins, derived tables and subqueries (issue 30, item 2;
//! issue 24, item 2): `SELECT ... FOR UPDATE` locks every row its locking query
//! block reads, reads the latest committed versions, and a SERIALIZABLE
//! SELECT locks what every block of it reads — as InnoDB does. How the
//! general path does it (rounds of reads, then locks) is the module doc of
//! `canyon_sql::exec::select`.

mod common;

use canyon_common::Error;
use canyon_sql::{Engine, Session};
use common::{blocked, free, rows, run, second_closes_a_deadlock};
use std::sync::Arc;

/// Two accounts and an owner table pointing at them: `owner.acc` joins
/// `acc.id` (acc's primary key), so a join from one owner reads one account.
fn engine() -> Arc<Engine> {
    common::engine_with(&[
        "CREATE DATABASE b",
        "USE b",
        "CREATE TABLE acc (id INT PRIMARY KEY, bal INT NOT NULL)",
        "INSERT INTO acc VALUES (1, 100), (2, 100), (3, 100)",
        "CREATE TABLE owner (id INT PRIMARY KEY, acc INT NOT NULL, name VARCHAR(10))",
        "INSERT INTO owner VALUES (1, 1, 'ann'), (2, 2, 'bob'), (3, 3, 'cy')",
    ])
}

/// A session on database `b`; `impatient` ones give up a lock wait after a second.
fn session(e: &Arc<Engine>, id: u32, impatient: bool) -> Session {
    common::session_on(e, "b", id, impatient)
}

fn row(values: &[&str]) -> Vec<Vec<String>> {
    vec![values.iter().map(|v| v.to_string()).collect()]
}

#[test]
fn a_locking_join_locks_the_rows_it_reads_in_both_tables() {
    let e = engine();
    let mut a = session(&e, 2, false);
    let mut b = session(&e, 3, true);
    run(&mut a, "BEGIN").expect("begin");
    let got = rows(
        &mut a,
        "SELECT owner.name, acc.bal FROM owner JOIN acc ON acc.id = owner.acc \
         WHERE owner.id = 1 FOR UPDATE",
    );
    assert_eq!(got, row(&["ann", "100"]));
    blocked(&mut b, "UPDATE acc SET bal = 0 WHERE id = 1");
    blocked(&mut b, "UPDATE owner SET name = 'x' WHERE id = 1");
    // Rows the join did not read stay free.
    free(&mut b, "UPDATE acc SET bal = 7 WHERE id = 2");
    free(&mut b, "UPDATE owner SET name = 'y' WHERE id = 2");
    run(&mut a, "COMMIT").expect("commit");
    free(&mut b, "UPDATE acc SET bal = 0 WHERE id = 1");
}

#[test]
fn a_locking_join_reads_the_latest_committed_versions() {
    let e = engine();
    let mut a = session(&e, 2, false);
    let mut b = session(&e, 3, false);
    run(&mut a, "BEGIN").expect("begin");
    // REPEATABLE READ: the first read fixes a's snapshot.
    assert_eq!(
        rows(&mut a, "SELECT bal FROM acc WHERE id = 1"),
        row(&["100"])
    );
    free(&mut b, "UPDATE acc SET bal = 55 WHERE id = 1");
    let join = "SELECT acc.bal FROM owner JOIN acc ON acc.id = owner.acc WHERE owner.id = 1";
    assert_eq!(
        rows(&mut a, join),
        row(&["100"]),
        "a consistent read keeps the snapshot"
    );
    assert_eq!(
        rows(&mut a, &format!("{join} FOR UPDATE")),
        row(&["55"]),
        "a locking read sees the latest committed version"
    );
    run(&mut a, "COMMIT").expect("commit");
}

#[test]
fn a_locking_join_waits_for_a_writer_and_returns_what_it_committed() {
    let e = engine();
    let mut a = session(&e, 2, false);
    let mut b = session(&e, 3, false);
    run(&mut b, "BEGIN").expect("begin");
    run(&mut b, "UPDATE acc SET bal = 70 WHERE id = 1").expect("b locks account 1");
    let t = std::thread::spawn(move || {
        run(&mut a, "BEGIN").expect("begin");
        let got = rows(
            &mut a,
            "SELECT SUM(acc.bal) FROM owner JOIN acc ON acc.id = owner.acc \
             WHERE owner.id IN (1, 2) FOR UPDATE",
        );
        run(&mut a, "COMMIT").expect("commit");
        got
    });
    // Let `a` read and queue behind b's lock, then commit b's change.
    std::thread::sleep(std::time::Duration::from_millis(300));
    run(&mut b, "COMMIT").expect("b commits");
    let got = t.join().expect("thread joins");
    assert_eq!(
        got,
        row(&["170"]),
        "the locking read returns the version b committed, not the one it read before waiting"
    );
}

#[test]
fn a_subquery_without_a_locking_clause_is_not_locked() {
    let e = engine();
    let mut a = session(&e, 2, false);
    let mut b = session(&e, 3, true);
    run(&mut a, "BEGIN").expect("begin");
    let got = rows(
        &mut a,
        "SELECT bal FROM acc WHERE id IN (SELECT acc FROM owner WHERE id = 2) FOR UPDATE",
    );
    assert_eq!(got, row(&["100"]));
    blocked(&mut b, "UPDATE acc SET bal = 0 WHERE id = 2");
    // MySQL: "a locking read clause in an outer statement does not lock the
    // rows of a table in a nested subquery unless a locking read clause is
    // also specified in the subquery".
    free(&mut b, "UPDATE owner SET name = 'z' WHERE id = 2");
    run(&mut a, "ROLLBACK").expect("rollback");
}

#[test]
fn a_locking_clause_in_a_subquery_locks_only_that_block() {
    let e = engine();
    let mut a = session(&e, 2, false);
    let mut b = session(&e, 3, true);
    run(&mut a, "BEGIN").expect("begin");
    let got = rows(
        &mut a,
        "SELECT name FROM owner WHERE acc IN (SELECT id FROM acc WHERE id = 3 FOR UPDATE)",
    );
    assert_eq!(got, row(&["cy"]));
    blocked(&mut b, "UPDATE acc SET bal = 0 WHERE id = 3");
    free(&mut b, "UPDATE owner SET name = 'w' WHERE id = 3");
    run(&mut a, "ROLLBACK").expect("rollback");
}

#[test]
fn a_locking_read_through_a_derived_table_locks_what_it_reads() {
    let e = engine();
    let mut a = session(&e, 2, false);
    let mut b = session(&e, 3, true);
    run(&mut a, "BEGIN").expect("begin");
    let got = rows(
        &mut a,
        "SELECT o.name, d.bal FROM owner o JOIN (SELECT id, bal FROM acc) d ON d.id = o.acc \
         WHERE o.id = 1 FOR UPDATE",
    );
    assert_eq!(got, row(&["ann", "100"]));
    blocked(&mut b, "UPDATE owner SET name = 'q' WHERE id = 1");
    // The derived table is materialised with the outer block's lock (MySQL
    // merges it into the block): its rows are locked too.
    blocked(&mut b, "UPDATE acc SET bal = 1 WHERE id = 2");
    run(&mut a, "ROLLBACK").expect("rollback");
}

#[test]
fn a_locking_read_over_a_union_locks_every_operand_s_rows() {
    let e = engine();
    let mut a = session(&e, 2, false);
    let mut b = session(&e, 3, true);
    run(&mut a, "BEGIN").expect("begin");
    let got = rows(
        &mut a,
        "SELECT bal FROM acc WHERE id = 1 UNION ALL SELECT acc FROM owner WHERE id = 3 FOR UPDATE",
    );
    assert_eq!(got.len(), 2);
    blocked(&mut b, "UPDATE acc SET bal = 0 WHERE id = 1");
    blocked(&mut b, "UPDATE owner SET name = 'u' WHERE id = 3");
    free(&mut b, "UPDATE owner SET name = 'u' WHERE id = 2");
    run(&mut a, "ROLLBACK").expect("rollback");
}

/// Write skew through a join: two SERIALIZABLE transactions each read both
/// accounts (through a join and a derived table) and then withdraw from one,
/// keeping the sum above zero only if the other does not do the same. InnoDB
/// makes every SERIALIZABLE read a shared locking read: both audits pass,
/// each withdrawal waits for the other reader's shared lock, and the second
/// closes a deadlock (1213). Canyon must not let both commit.
#[test]
fn serializable_reads_through_joins_and_derived_tables_are_locking_reads() {
    let e = engine();
    let mut a = session(&e, 2, false);
    let mut b = session(&e, 3, false);
    for s in [&mut a, &mut b] {
        run(s, "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE").expect("set");
        run(s, "BEGIN").expect("begin");
    }
    let audit = "SELECT SUM(d.bal) FROM owner o JOIN (SELECT id, bal FROM acc) d \
                 ON d.id = o.acc WHERE o.id IN (1, 2)";
    assert_eq!(rows(&mut a, audit), row(&["200"]));
    // Shared locks: b's identical read goes on.
    assert_eq!(rows(&mut b, audit), row(&["200"]));
    // a's withdrawal waits for b's shared lock on account 1; b's closes
    // the cycle.
    let outcome_b = second_closes_a_deadlock(
        &mut a,
        "UPDATE acc SET bal = bal - 150 WHERE id = 1",
        &mut b,
        "UPDATE acc SET bal = bal - 150 WHERE id = 2",
    );
    assert!(
        matches!(outcome_b, Err(Error::Deadlock)),
        "b's withdrawal closes the cycle: {outcome_b:?}"
    );
    let mut c = session(&e, 4, false);
    assert_eq!(rows(&mut c, audit), row(&["50"]));
}
