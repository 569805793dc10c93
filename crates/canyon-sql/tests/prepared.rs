//! Prepared statements through the engine API: parameter checks, re-planning after
//! DDL, the per-session statement limit.

mod common;

use canyon_common::Error;
use canyon_sql::{QueryResult, Value, MAX_PREPARED_STATEMENTS};
use std::time::Duration;

fn session() -> canyon_sql::Session {
    let e = common::engine(Duration::from_secs(2));
    let mut s = e.session(1, "root", "localhost");
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))",
        "INSERT INTO t VALUES (1, 'one'), (2, 'two')",
    ] {
        s.execute(sql, false)
            .pop()
            .expect("a result")
            .expect("setup statement succeeds");
    }
    s
}

fn rows(r: QueryResult) -> Vec<Vec<Value>> {
    match r {
        QueryResult::Rows { rows, .. } => rows,
        other => panic!("expected rows, got {other:?}"),
    }
}

#[test]
fn parameters_are_checked_and_bound() {
    let mut s = session();
    let p = s.prepare("SELECT v FROM t WHERE id = ?").expect("prepares");
    assert_eq!(p.params, 1);
    assert_eq!(p.columns.len(), 1);
    let got = rows(
        s.execute_prepared(p.id, &[Value::Int(2)])
            .expect("executes"),
    );
    assert_eq!(got, vec![vec![Value::str("two")]]);
    // Re-execution with another value reuses the plan.
    let got = rows(
        s.execute_prepared(p.id, &[Value::str("1")])
            .expect("executes"),
    );
    assert_eq!(got, vec![vec![Value::str("one")]]);
    assert!(matches!(
        s.execute_prepared(p.id, &[]),
        Err(Error::WrongArguments(_))
    ));
    assert!(matches!(
        s.execute_prepared(p.id, &[Value::Int(1), Value::Int(2)]),
        Err(Error::WrongArguments(_))
    ));
    assert!(matches!(
        s.execute_prepared(p.id + 100, &[Value::Int(1)]),
        Err(Error::UnknownStatementHandler { .. })
    ));
    s.close_prepared(p.id);
    assert!(matches!(
        s.execute_prepared(p.id, &[Value::Int(1)]),
        Err(Error::UnknownStatementHandler { .. })
    ));
}

#[test]
fn statements_are_replanned_after_ddl() {
    let mut s = session();
    let p = s.prepare("SELECT * FROM t WHERE id = ?").expect("prepares");
    for sql in [
        "DROP TABLE t",
        "CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)",
        "INSERT INTO t VALUES (1, 10, 20)",
    ] {
        s.execute(sql, false)
            .pop()
            .expect("a result")
            .expect("DDL succeeds");
    }
    let got = rows(
        s.execute_prepared(p.id, &[Value::Int(1)])
            .expect("re-planned"),
    );
    assert_eq!(
        got,
        vec![vec![Value::Int(1), Value::Int(10), Value::Int(20)]]
    );
    s.execute("DROP TABLE t", false)
        .pop()
        .expect("a result")
        .expect("drop succeeds");
    assert!(matches!(
        s.execute_prepared(p.id, &[Value::Int(1)]),
        Err(Error::UnknownTable { .. })
    ));
}

#[test]
fn a_session_holds_a_bounded_number_of_statements() {
    let mut s = session();
    let mut ids = Vec::new();
    for _ in 0..MAX_PREPARED_STATEMENTS {
        ids.push(s.prepare("SELECT 1").expect("under the limit").id);
    }
    assert!(matches!(
        s.prepare("SELECT 1"),
        Err(Error::TooManyPreparedStatements(_))
    ));
    s.close_prepared(ids[0]);
    assert!(s.prepare("SELECT 1").is_ok(), "closing one makes room");
}

#[test]
fn transaction_control_can_be_prepared() {
    // sysbench prepares BEGIN and COMMIT.
    let mut s = session();
    let begin = s.prepare("BEGIN").expect("prepares").id;
    let commit = s.prepare("COMMIT").expect("prepares").id;
    let upd = s
        .prepare("UPDATE t SET v = ? WHERE id = ?")
        .expect("prepares")
        .id;
    s.execute_prepared(begin, &[]).expect("begins");
    assert!(s.in_transaction());
    s.execute_prepared(upd, &[Value::str("uno"), Value::Int(1)])
        .expect("updates");
    s.execute_prepared(commit, &[]).expect("commits");
    assert!(!s.in_transaction());
    let got = rows(
        s.execute("SELECT v FROM t WHERE id = 1", false)
            .pop()
            .expect("a result")
            .expect("selects"),
    );
    assert_eq!(got, vec![vec![Value::str("uno")]]);
}

/// Placeholders in set operations and WITH are numbered in textual order:
/// the operands left to right, then the query's ORDER BY / LIMIT; a CTE's
/// before the body, and one CTE referenced twice reads the same parameter.
#[test]
fn placeholders_number_across_set_operations_and_ctes() {
    let mut s = session();
    let p = s
        .prepare("SELECT v FROM t WHERE id = ? UNION ALL SELECT ? UNION ALL SELECT v FROM t WHERE id = ? ORDER BY 1 LIMIT ?")
        .expect("prepares");
    assert_eq!(p.params, 4);
    let got = rows(
        s.execute_prepared(
            p.id,
            &[Value::Int(2), Value::str("m"), Value::Int(1), Value::Int(2)],
        )
        .expect("executes"),
    );
    assert_eq!(got, vec![vec![Value::str("m")], vec![Value::str("one")]]);

    let p = s
        .prepare(
            "WITH c AS (SELECT id, v FROM t WHERE id >= ?) \
             SELECT a.v, b.id FROM c a JOIN c b ON b.id = a.id WHERE a.id <= ? ORDER BY a.id",
        )
        .expect("prepares");
    assert_eq!(p.params, 2);
    let got = rows(
        s.execute_prepared(p.id, &[Value::Int(2), Value::Int(5)])
            .expect("executes"),
    );
    assert_eq!(got, vec![vec![Value::str("two"), Value::Int(2)]]);
}

/// Placeholders in a window: NTILE's n, LAG's offset, ROWS and RANGE
/// offsets, each numbered once in textual order and checked when bound.
#[test]
fn window_placeholders_are_numbered_and_checked() {
    let mut s = session();
    s.execute("INSERT INTO t VALUES (3, 'three'), (4, 'four')", false)
        .pop()
        .expect("a result")
        .expect("insert");
    let p = s
        .prepare(
            "SELECT id, NTILE(?) OVER (ORDER BY id), LAG(id, ?) OVER (ORDER BY id), \
             SUM(id) OVER (ORDER BY id ROWS ? PRECEDING), \
             COUNT(*) OVER (ORDER BY id RANGE BETWEEN ? PRECEDING AND ? FOLLOWING) \
             FROM t WHERE id > ? ORDER BY id",
        )
        .expect("prepares");
    assert_eq!(p.params, 6);
    let got = rows(
        s.execute_prepared(
            p.id,
            &[
                Value::Int(2),
                Value::Int(2),
                Value::Int(1),
                Value::Int(1),
                Value::Int(0),
                Value::Int(0),
            ],
        )
        .expect("runs"),
    );
    let i = |n: i64| Value::Int(n);
    assert_eq!(
        got,
        vec![
            vec![i(1), i(1), Value::Null, Value::Decimal(1.into()), i(1)],
            vec![i(2), i(1), Value::Null, Value::Decimal(3.into()), i(2)],
            vec![i(3), i(2), i(1), Value::Decimal(5.into()), i(2)],
            vec![i(4), i(2), i(2), Value::Decimal(7.into()), i(2)],
        ]
    );
    // NTILE(0) and a negative LAG offset: 1210 when the values arrive.
    let bad = s.execute_prepared(p.id, &[i(0), i(1), i(1), i(1), i(0), i(0)]);
    assert!(matches!(bad, Err(Error::WrongArguments(_))), "{bad:?}");
    let bad = s.execute_prepared(p.id, &[i(1), i(-1), i(1), i(1), i(0), i(0)]);
    assert!(matches!(bad, Err(Error::WrongArguments(_))), "{bad:?}");
}
