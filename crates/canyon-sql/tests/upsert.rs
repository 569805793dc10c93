//! INSERT ... ON DUPLICATE KEY UPDATE and REPLACE through the engine API: what the
//! OK packet carries (affected rows with and without CLIENT_FOUND_ROWS, the insert
//! id), and sessions racing on the same key. The expected values were taken from
//! MariaDB 10.11 with InnoDB (pymysql, `innodb_autoinc_lock_mode = 1`); the
//! statement-level results are also compared with MariaDB by
//! crates/canyon-server/tests/sql/differential_dml.sql.

mod common;

use canyon_common::Error;
use canyon_sql::{Engine, QueryResult, Session, Value};
use std::sync::Arc;
use std::time::Duration;

fn engine() -> Arc<Engine> {
    let e = common::engine(Duration::from_secs(10));
    let mut s = e.session(1, "root", "localhost");
    for sql in [
        "CREATE DATABASE up",
        "USE up",
        "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, u INT, c INT, UNIQUE KEY uk (u))",
        "CREATE TABLE cnt (k VARCHAR(10) PRIMARY KEY, n INT NOT NULL)",
    ] {
        run(&mut s, sql).expect("setup succeeds");
    }
    e
}

fn session(e: &Arc<Engine>, id: u32) -> Session {
    let mut s = e.session(id, "root", "localhost");
    run(&mut s, "USE up").expect("USE succeeds");
    s
}

fn run(s: &mut Session, sql: &str) -> Result<QueryResult, Error> {
    s.execute(sql, false).pop().expect("one result")
}

/// (affected rows, insert id) of a statement that returns an OK packet.
fn ok(s: &mut Session, sql: &str) -> (u64, u64) {
    match run(s, sql) {
        Ok(QueryResult::Ok {
            affected_rows,
            last_insert_id,
            ..
        }) => (affected_rows, last_insert_id),
        other => panic!("`{sql}`: expected an OK packet, got {other:?}"),
    }
}

fn rows(s: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    match run(s, sql) {
        Ok(QueryResult::Rows { rows, .. }) => rows,
        other => panic!("`{sql}`: expected rows, got {other:?}"),
    }
}

fn int(s: &mut Session, sql: &str) -> i64 {
    let r = rows(s, sql);
    assert_eq!(r.len(), 1, "`{sql}` returns one row");
    r[0][0].to_i64().expect("an integer")
}

/// The OK packet of each statement, as MariaDB 10.11 reports it, with and without
/// CLIENT_FOUND_ROWS (the second number: the insert id, `mysql_insert_id()`).
#[test]
fn ok_packets_match_mysql() {
    // (statement, affected, affected with CLIENT_FOUND_ROWS, insert id)
    let cases: &[(&str, u64, u64, u64)] = &[
        ("INSERT INTO t (u, c) VALUES (1, 1), (2, 2), (3, 3)", 3, 3, 1),
        // Changed by the update: 2, and the updated row's id.
        (
            "INSERT INTO t (u, c) VALUES (2, 5) ON DUPLICATE KEY UPDATE c = VALUES(c)",
            2,
            2,
            2,
        ),
        // Left as it was: 0 (1 with CLIENT_FOUND_ROWS), no id.
        (
            "INSERT INTO t (u, c) VALUES (2, 5) ON DUPLICATE KEY UPDATE c = VALUES(c)",
            0,
            1,
            0,
        ),
        (
            "INSERT INTO t (u, c) VALUES (3, 5), (2, 6) ON DUPLICATE KEY UPDATE c = VALUES(c)",
            4,
            4,
            2,
        ),
        // One row inserted: its generated id (8: ids 4..7 went to rows that became
        // updates, as in InnoDB).
        (
            "INSERT INTO t (u, c) VALUES (9, 9), (2, 7) ON DUPLICATE KEY UPDATE c = VALUES(c)",
            3,
            3,
            8,
        ),
        ("INSERT INTO t (id, u, c) VALUES (50, 50, 50)", 1, 1, 50),
        (
            "INSERT INTO t (id, u, c) VALUES (2, 50, 50) ON DUPLICATE KEY UPDATE c = 1",
            2,
            2,
            2,
        ),
        (
            "INSERT INTO t (u, c) VALUES (3, 3) ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id), c = c + 1",
            2,
            2,
            3,
        ),
        ("INSERT IGNORE INTO t (u, c) VALUES (3, 3)", 0, 0, 0),
        ("REPLACE INTO t (u, c) VALUES (3, 3)", 2, 2, 53),
        ("UPDATE t SET c = c + 1 WHERE id = 1", 1, 1, 0),
        ("UPDATE t SET c = c WHERE id = 1", 0, 1, 0),
    ];
    for found_rows in [false, true] {
        let e = engine();
        let mut s = session(&e, 2);
        s.set_client_found_rows(found_rows);
        for &(sql, affected, affected_found, id) in cases {
            let want = (if found_rows { affected_found } else { affected }, id);
            assert_eq!(
                ok(&mut s, sql),
                want,
                "`{sql}` (CLIENT_FOUND_ROWS {found_rows})"
            );
        }
        assert_eq!(int(&mut s, "SELECT LAST_INSERT_ID()"), 53);
        let got = rows(&mut s, "SELECT id, u, c FROM t ORDER BY id");
        let want: Vec<Vec<Value>> = [(1, 1, 2), (2, 2, 1), (8, 9, 9), (50, 50, 50), (53, 3, 3)]
            .iter()
            .map(|&(a, b, c)| vec![Value::Int(a), Value::Int(b), Value::Int(c)])
            .collect();
        assert_eq!(got, want);
    }
}

/// A session's upsert waits for the other's uncommitted insert of the same key,
/// then updates the committed row instead of failing with 1062.
#[test]
fn racing_upserts_on_the_primary_key_serialise() {
    let e = engine();
    let mut a = session(&e, 2);
    let mut b = session(&e, 3);
    run(&mut a, "BEGIN").expect("begin");
    let sql = "INSERT INTO cnt VALUES ('k', 1) ON DUPLICATE KEY UPDATE n = n + VALUES(n)";
    assert_eq!(ok(&mut a, sql), (1, 0), "a inserts");
    let t = std::thread::spawn(move || {
        let r = ok(&mut b, sql);
        (b, r)
    });
    std::thread::sleep(Duration::from_millis(200));
    assert!(!t.is_finished(), "b waits for a's row lock");
    run(&mut a, "COMMIT").expect("commit");
    let (mut b, rb) = t.join().expect("thread joins");
    assert_eq!(rb, (2, 0), "b updates the row a committed");
    assert_eq!(int(&mut b, "SELECT n FROM cnt WHERE k = 'k'"), 2);
}

/// The same on a unique secondary key: the second session finds the first's row
/// through the index once it commits, locks it and updates it.
#[test]
fn racing_upserts_on_a_unique_key_serialise() {
    let e = engine();
    let mut a = session(&e, 2);
    let mut b = session(&e, 3);
    run(&mut a, "BEGIN").expect("begin");
    let sql = "INSERT INTO t (u, c) VALUES (7, 1) ON DUPLICATE KEY UPDATE c = c + 1";
    assert_eq!(ok(&mut a, sql), (1, 1), "a inserts id 1");
    let t = std::thread::spawn(move || {
        let r = ok(&mut b, sql);
        (b, r)
    });
    std::thread::sleep(Duration::from_millis(200));
    assert!(!t.is_finished(), "b waits for a's unique-value lock");
    run(&mut a, "COMMIT").expect("commit");
    let (mut b, rb) = t.join().expect("thread joins");
    assert_eq!(rb, (2, 1), "b updates row 1");
    assert_eq!(
        rows(&mut b, "SELECT id, u, c FROM t"),
        vec![vec![Value::Int(1), Value::Int(7), Value::Int(2)]]
    );
}

/// If the first session rolls back, the waiting one inserts after all.
#[test]
fn an_upsert_inserts_when_the_racing_insert_rolls_back() {
    let e = engine();
    let mut a = session(&e, 2);
    let mut b = session(&e, 3);
    run(&mut a, "BEGIN").expect("begin");
    let sql = "INSERT INTO t (u, c) VALUES (7, 1) ON DUPLICATE KEY UPDATE c = c + 1";
    assert_eq!(ok(&mut a, sql), (1, 1));
    let t = std::thread::spawn(move || {
        let r = ok(&mut b, sql);
        (b, r)
    });
    std::thread::sleep(Duration::from_millis(200));
    run(&mut a, "ROLLBACK").expect("rollback");
    let (mut b, rb) = t.join().expect("thread joins");
    assert_eq!(rb, (1, 2), "b inserts, with the next id (1 is not reused)");
    assert_eq!(int(&mut b, "SELECT COUNT(*) FROM t"), 1);
}

/// Many sessions incrementing a few counters with upserts: no lost update, no
/// duplicate-key error, exactly one row per key.
#[test]
fn concurrent_upsert_counters_lose_nothing() {
    const THREADS: u32 = 4;
    const ROUNDS: i64 = 50;
    let e = engine();
    let handles: Vec<_> = (0..THREADS)
        .map(|i| {
            let e = e.clone();
            std::thread::spawn(move || {
                let mut s = session(&e, 10 + i);
                for r in 0..ROUNDS {
                    let key = ["a", "b", "c"][(r % 3) as usize];
                    let sql = format!(
                        "INSERT INTO cnt VALUES ('{key}', 1) ON DUPLICATE KEY UPDATE n = n + 1"
                    );
                    let (affected, _) = ok(&mut s, &sql);
                    assert!(affected == 1 || affected == 2, "`{sql}`: {affected}");
                    let sql = format!(
                        "INSERT INTO t (u, c) VALUES ({}, 1) ON DUPLICATE KEY UPDATE c = c + 1",
                        r % 5
                    );
                    ok(&mut s, &sql);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("thread joins");
    }
    let mut s = session(&e, 99);
    assert_eq!(
        int(&mut s, "SELECT SUM(n) FROM cnt"),
        THREADS as i64 * ROUNDS
    );
    assert_eq!(int(&mut s, "SELECT COUNT(*) FROM cnt"), 3);
    assert_eq!(int(&mut s, "SELECT SUM(c) FROM t"), THREADS as i64 * ROUNDS);
    assert_eq!(int(&mut s, "SELECT COUNT(DISTINCT u) FROM t"), 5);
    assert_eq!(int(&mut s, "SELECT COUNT(*) FROM t"), 5);
}

/// Two sessions REPLACE-ing the same key: one row remains, the later one's.
#[test]
fn racing_replaces_leave_one_row() {
    let e = engine();
    let mut a = session(&e, 2);
    let mut b = session(&e, 3);
    run(&mut a, "BEGIN").expect("begin");
    assert_eq!(
        ok(&mut a, "REPLACE INTO t (id, u, c) VALUES (1, 1, 1)"),
        (1, 1)
    );
    let t = std::thread::spawn(move || {
        let r = ok(&mut b, "REPLACE INTO t (id, u, c) VALUES (2, 1, 2)");
        (b, r)
    });
    std::thread::sleep(Duration::from_millis(200));
    run(&mut a, "COMMIT").expect("commit");
    let (mut b, rb) = t.join().expect("thread joins");
    // u is the last unique key: row 1 is overwritten in place (moved to id 2).
    assert_eq!(rb, (2, 2));
    assert_eq!(
        rows(&mut b, "SELECT id, u, c FROM t"),
        vec![vec![Value::Int(2), Value::Int(1), Value::Int(2)]]
    );
}

/// An error in the update part rolls back the whole statement, rows inserted
/// before it included; under IGNORE the row is skipped with warning 1062.
#[test]
fn errors_in_the_update_part() {
    let e = engine();
    let mut s = session(&e, 2);
    ok(&mut s, "INSERT INTO t (u, c) VALUES (1, 1), (2, 2)");
    let r = run(
        &mut s,
        "INSERT INTO t (u, c) VALUES (3, 3), (1, 0) ON DUPLICATE KEY UPDATE u = 2",
    );
    assert!(matches!(r, Err(Error::DuplicateEntry { .. })), "got {r:?}");
    assert_eq!(
        int(&mut s, "SELECT COUNT(*) FROM t"),
        2,
        "row 3 rolled back"
    );
    match run(
        &mut s,
        "INSERT IGNORE INTO t (u, c) VALUES (3, 3), (1, 0) ON DUPLICATE KEY UPDATE u = 2",
    ) {
        Ok(QueryResult::Ok {
            affected_rows,
            info,
            warnings,
            ..
        }) => {
            assert_eq!(affected_rows, 1);
            assert_eq!(info, "Records: 2  Duplicates: 1  Warnings: 1");
            assert_eq!(warnings, 1);
        }
        other => panic!("expected OK, got {other:?}"),
    }
    let w = rows(&mut s, "SHOW WARNINGS");
    assert_eq!(w.len(), 1);
    assert_eq!(w[0][1].to_i64(), Some(1062));
    assert_eq!(int(&mut s, "SELECT COUNT(*) FROM t"), 3);
}

/// Placeholders number through the VALUES part, then ON DUPLICATE KEY UPDATE, then
/// (for UPDATE) SET, WHERE, ORDER BY and LIMIT, in statement order.
#[test]
fn prepared_upserts_and_ordered_updates() {
    let e = engine();
    let mut s = session(&e, 2);
    let p = s
        .prepare(
            "INSERT INTO cnt (k, n) VALUES (?, ?) ON DUPLICATE KEY UPDATE n = n + ? * VALUES(n)",
        )
        .expect("prepares");
    assert_eq!(p.params, 3);
    for (k, n, factor, want) in [
        ("a", 1, 10, 1),
        ("a", 2, 10, 2),
        ("b", 5, 0, 1),
        ("b", 5, 0, 0),
    ] {
        let r = s
            .execute_prepared(p.id, &[Value::str(k), Value::Int(n), Value::Int(factor)])
            .expect("executes");
        assert!(
            matches!(r, QueryResult::Ok { affected_rows, .. } if affected_rows == want),
            "({k}, {n}, {factor}): {r:?}"
        );
    }
    assert_eq!(int(&mut s, "SELECT n FROM cnt WHERE k = 'a'"), 21);
    assert_eq!(int(&mut s, "SELECT n FROM cnt WHERE k = 'b'"), 5);
    let p = s
        .prepare("UPDATE cnt SET n = n + ? WHERE n > ? ORDER BY n DESC LIMIT ?")
        .expect("prepares");
    let r = s
        .execute_prepared(p.id, &[Value::Int(100), Value::Int(0), Value::Int(1)])
        .expect("executes");
    assert!(
        matches!(
            r,
            QueryResult::Ok {
                affected_rows: 1,
                ..
            }
        ),
        "{r:?}"
    );
    assert_eq!(int(&mut s, "SELECT n FROM cnt WHERE k = 'a'"), 121);
    assert_eq!(int(&mut s, "SELECT n FROM cnt WHERE k = 'b'"), 5);
}
