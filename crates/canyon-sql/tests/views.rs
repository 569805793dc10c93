//! Views through the engine API: definitions survive a restart, and the
//! privilege rules of SQL SECURITY DEFINER / INVOKER (the SQL surface is
//! tests/sql/60_views.test's).

mod common;

use canyon_common::Error;
use canyon_sql::{QueryResult, Session, Value};
use std::sync::Arc;

fn run(s: &mut Session, sql: &str) -> Result<QueryResult, Error> {
    s.execute(sql, false).pop().expect("one result")
}

fn rows(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
    match run(s, sql).unwrap_or_else(|e| panic!("{sql}: {e}")) {
        QueryResult::Rows { rows, .. } => rows
            .iter()
            .map(|r| r.iter().map(Value::to_display).collect())
            .collect(),
        other => panic!("{sql}: expected rows, got {other:?}"),
    }
}

fn all(s: &mut Session, sqls: &[&str]) {
    for sql in sqls {
        run(s, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

/// Views are catalog records: they survive a restart with their column
/// list, check option and definer, and DROP VIEW's removal does too.
#[test]
fn views_persist_across_restart() {
    let storage = Arc::new(canyon_storage::MemoryStorage::new());
    {
        let e = common::open(&storage);
        e.bootstrap_root("").expect("root account");
        let mut s = e.session(1, "root", "localhost");
        all(
            &mut s,
            &[
                "CREATE DATABASE r",
                "USE r",
                "CREATE TABLE t (id INT PRIMARY KEY, a INT)",
                "INSERT INTO t VALUES (1, 10), (2, 20)",
                "CREATE VIEW v (k, x) AS SELECT id, a FROM t WHERE a < 100 WITH LOCAL CHECK OPTION",
                "CREATE VIEW gone AS SELECT id FROM t",
                "DROP VIEW gone",
            ],
        );
    }
    let e = common::open(&storage);
    let mut s = e.session(1, "root", "localhost");
    run(&mut s, "USE r").expect("use");
    assert_eq!(
        rows(&mut s, "SELECT k, x FROM v ORDER BY k"),
        vec![vec!["1", "10"], vec!["2", "20"]]
    );
    let create = rows(&mut s, "SHOW CREATE VIEW v");
    assert_eq!(
        create[0][1],
        "CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`%` SQL SECURITY DEFINER VIEW `v` \
         (`k`,`x`) AS SELECT id, a FROM t WHERE a < 100 WITH LOCAL CHECK OPTION"
    );
    let r = run(&mut s, "INSERT INTO v VALUES (3, 300)");
    assert!(matches!(r, Err(Error::View { code: 1369, .. })), "{r:?}");
    let r = run(&mut s, "SELECT * FROM gone");
    assert!(matches!(r, Err(Error::UnknownTable { .. })), "{r:?}");
    // The name is free again, for a table.
    run(&mut s, "CREATE TABLE gone (x INT)").expect("create table");
    let r = run(&mut s, "CREATE TABLE v (x INT)");
    assert!(matches!(r, Err(Error::TableExists(_))), "{r:?}");
}

/// SQL SECURITY DEFINER: the invoker needs SELECT on the view only; the
/// base table is checked against the definer. INVOKER: against the invoker.
#[test]
fn definer_and_invoker_security() {
    let e = common::engine(std::time::Duration::from_secs(5));
    let mut root = e.session(1, "root", "localhost");
    all(
        &mut root,
        &[
            "CREATE DATABASE p",
            "USE p",
            "CREATE TABLE secret (id INT PRIMARY KEY, pay INT)",
            "INSERT INTO secret VALUES (1, 100), (2, 200)",
            "CREATE VIEW vd AS SELECT id FROM secret",
            "CREATE SQL SECURITY INVOKER VIEW vi AS SELECT id FROM secret",
            "CREATE VIEW vno AS SELECT id FROM secret",
            "CREATE USER 'bob'@'%' IDENTIFIED BY 'pw'",
            "GRANT SELECT ON p.vd TO 'bob'@'%'",
            "GRANT SELECT ON p.vi TO 'bob'@'%'",
            "GRANT SELECT, UPDATE ON p.vd TO 'bob'@'%'",
        ],
    );
    let mut bob = e.session(2, "bob", "localhost");
    run(&mut bob, "USE p").expect("use");
    assert_eq!(
        rows(&mut bob, "SELECT id FROM vd ORDER BY id"),
        vec![vec!["1"], vec!["2"]]
    );
    let r = run(&mut bob, "SELECT * FROM secret");
    assert!(matches!(r, Err(Error::TableAccessDenied { .. })), "{r:?}");
    let r = run(&mut bob, "SELECT * FROM vi");
    assert!(matches!(r, Err(Error::TableAccessDenied { .. })), "{r:?}");
    let r = run(&mut bob, "SELECT * FROM vno");
    assert!(matches!(r, Err(Error::TableAccessDenied { .. })), "{r:?}");
    // A write through the DEFINER view: UPDATE on the view suffices.
    run(&mut bob, "UPDATE vd SET id = 3 WHERE id = 2").expect("update through vd");
    assert_eq!(
        rows(&mut root, "SELECT id, pay FROM secret ORDER BY id"),
        vec![vec!["1", "100"], vec!["3", "200"]]
    );
    let r = run(&mut bob, "DELETE FROM vd WHERE id = 1");
    assert!(matches!(r, Err(Error::TableAccessDenied { .. })), "{r:?}");
    // Naming another account as DEFINER needs SUPER (1227).
    all(
        &mut root,
        &["GRANT CREATE VIEW, SELECT ON p.* TO 'bob'@'%'"],
    );
    let r = run(
        &mut bob,
        "CREATE DEFINER = 'root'@'%' VIEW vb AS SELECT 1 AS one",
    );
    assert!(matches!(r, Err(Error::SpecificAccessDenied(_))), "{r:?}");
    run(&mut bob, "CREATE VIEW vb AS SELECT 1 AS one").expect("own definer");
    let def = rows(
        &mut bob,
        "SELECT DEFINER FROM information_schema.VIEWS WHERE TABLE_NAME = 'vb'",
    );
    assert_eq!(def, vec![vec!["bob@%"]]);
    // A definer that lost its account: 1449.
    all(
        &mut root,
        &["CREATE DEFINER = 'ghost'@'%' VIEW vg AS SELECT id FROM secret"],
    );
    let r = run(&mut root, "SELECT * FROM vg");
    assert!(matches!(r, Err(Error::View { code: 1449, .. })), "{r:?}");
}

/// Prepared statements read and write through views (re-planned when a
/// view changes); a prepared write through a view WITH CHECK OPTION is
/// refused (1235) rather than run unchecked.
#[test]
fn prepared_statements_through_views() {
    let e = common::engine(std::time::Duration::from_secs(5));
    let mut s = e.session(1, "root", "localhost");
    all(
        &mut s,
        &[
            "CREATE DATABASE pv",
            "USE pv",
            "CREATE TABLE t (id INT PRIMARY KEY, a INT)",
            "INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)",
            "CREATE VIEW v AS SELECT id, a AS x FROM t WHERE a > 10",
            "CREATE VIEW vc AS SELECT id, a FROM t WHERE a > 10 WITH CHECK OPTION",
        ],
    );
    let sel = s.prepare("SELECT x FROM v WHERE id = ?").expect("prepares");
    let one = |s: &mut Session, id: i64| match s.execute_prepared(sel.id, &[Value::Int(id)]) {
        Ok(QueryResult::Rows { rows, .. }) => {
            rows.iter().map(|r| r[0].to_display()).collect::<Vec<_>>()
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(one(&mut s, 2), vec!["20"]);
    assert!(one(&mut s, 1).is_empty(), "row 1 is not in the view");
    let upd = s
        .prepare("UPDATE v SET x = ? WHERE id = ?")
        .expect("prepares");
    s.execute_prepared(upd.id, &[Value::Int(25), Value::Int(2)])
        .expect("update through the view");
    assert_eq!(one(&mut s, 2), vec!["25"]);
    // The view changes: the prepared SELECT follows it.
    run(
        &mut s,
        "CREATE OR REPLACE VIEW v AS SELECT id, a * 2 AS x FROM t",
    )
    .expect("replace");
    assert_eq!(one(&mut s, 1), vec!["20"]);
    let r = s.prepare("UPDATE vc SET a = ? WHERE id = ?");
    assert!(matches!(r, Err(Error::Unsupported(_))), "{r:?}");
}
