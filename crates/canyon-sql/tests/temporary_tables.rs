//! TEMPORARY tables across sessions (the essay: `src/session/temporary.rs`):
//! invisible to other sessions, shadowing a base table for their own,
//! dropped — their keys purged — when the session ends, swept after a crash
//! when the engine opens, needing only CREATE TEMPORARY TABLES, and
//! re-planned under prepared statements when they appear or go.

mod common;

use canyon_common::Error;
use canyon_sql::{Engine, QueryResult, Session, Value};
use canyon_storage::{KeyRange, Keyspace, MemoryStorage, Storage};
use std::ops::{Bound, ControlFlow};
use std::sync::Arc;

fn run(s: &mut Session, sql: &str) -> Result<QueryResult, Error> {
    s.execute(sql, false).pop().expect("one result")
}

fn ok(s: &mut Session, sql: &str) {
    run(s, sql).unwrap_or_else(|e| panic!("{sql}: {e:?}"));
}

fn rows(s: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    match run(s, sql).unwrap_or_else(|e| panic!("{sql}: {e:?}")) {
        QueryResult::Rows { rows, .. } => rows,
        other => panic!("{sql}: expected rows, got {other:?}"),
    }
}

fn text(v: &Value) -> String {
    v.to_display()
}

/// Keys of the temporary id range (first byte 0x80 and up) in Rows and Index.
fn temporary_keys(storage: &MemoryStorage) -> usize {
    let range = KeyRange {
        start: Bound::Included(vec![0x80]),
        end: Bound::Unbounded,
    };
    let mut n = 0;
    for ks in [Keyspace::Rows, Keyspace::History, Keyspace::Index] {
        storage
            .scan(ks, &range, false, &mut |_, _| {
                n += 1;
                ControlFlow::Continue(())
            })
            .expect("scan");
    }
    n
}

fn setup(storage: &Arc<MemoryStorage>) -> Arc<Engine> {
    let e = common::open(storage);
    e.bootstrap_root("").expect("root account");
    let mut s = e.session(1, "root", "localhost");
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))",
        "INSERT INTO t VALUES (1, 'base')",
    ] {
        ok(&mut s, sql);
    }
    e
}

fn session(e: &Arc<Engine>, id: u32) -> Session {
    let mut s = e.session(id, "root", "localhost");
    ok(&mut s, "USE d");
    s
}

#[test]
fn a_temporary_table_is_private_and_shadows_the_base_table() {
    let storage = Arc::new(MemoryStorage::new());
    let e = setup(&storage);
    let mut a = session(&e, 2);
    let mut b = session(&e, 3);
    ok(
        &mut a,
        "CREATE TEMPORARY TABLE t (id INT PRIMARY KEY, v VARCHAR(10), KEY kv (v))",
    );
    ok(&mut a, "INSERT INTO t VALUES (2, 'mine')");
    ok(&mut a, "CREATE TEMPORARY TABLE only_a (x INT)");

    // A sees its own table under the name, B the base table.
    assert_eq!(text(&rows(&mut a, "SELECT v FROM t")[0][0]), "mine");
    assert_eq!(text(&rows(&mut b, "SELECT v FROM t")[0][0]), "base");
    let r = run(&mut b, "SELECT * FROM only_a");
    assert!(matches!(r, Err(Error::UnknownTable { .. })), "{r:?}");
    let r = run(&mut b, "DROP TEMPORARY TABLE only_a");
    assert!(matches!(r, Err(Error::BadTable(_))), "{r:?}");

    // SHOW CREATE TABLE says which one each session sees.
    let create = |s: &mut Session| text(&rows(s, "SHOW CREATE TABLE t")[0][1]);
    assert!(
        create(&mut a).starts_with("CREATE TEMPORARY TABLE `t`"),
        "{}",
        create(&mut a)
    );
    assert!(create(&mut b).starts_with("CREATE TABLE `t`"));
    // SHOW INDEX and DESCRIBE find the temporary table too.
    let keys: Vec<String> = rows(&mut a, "SHOW INDEX FROM t")
        .iter()
        .map(|r| text(&r[2]))
        .collect();
    assert_eq!(keys, ["PRIMARY", "kv"]);
    assert_eq!(rows(&mut b, "SHOW INDEX FROM t").len(), 1);
    assert_eq!(rows(&mut a, "DESCRIBE only_a").len(), 1);

    // B's writes to the name reach the base table.
    ok(&mut b, "INSERT INTO t VALUES (3, 'b')");
    assert_eq!(rows(&mut a, "SELECT id FROM t").len(), 1);
    assert_eq!(rows(&mut b, "SELECT id FROM t").len(), 2);

    // Neither SHOW TABLES nor information_schema lists it (MySQL 8).
    let listed: Vec<String> = rows(&mut a, "SHOW TABLES")
        .iter()
        .map(|r| text(&r[0]))
        .collect();
    assert_eq!(listed, ["t"]);
    let n = rows(
        &mut a,
        "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_NAME = 'only_a'",
    );
    assert_eq!(text(&n[0][0]), "0");
}

#[test]
fn temporary_tables_are_dropped_and_purged_when_the_session_ends() {
    let storage = Arc::new(MemoryStorage::new());
    let e = setup(&storage);
    let mut a = session(&e, 2);
    ok(
        &mut a,
        "CREATE TEMPORARY TABLE tmp (id INT PRIMARY KEY, v INT, KEY kv (v))",
    );
    ok(&mut a, "INSERT INTO tmp VALUES (1, 10), (2, 20)");
    // A dropped table whose rows a transaction writes after the DROP:
    // purged again at the end (invariant 2 of the essay).
    ok(&mut a, "CREATE TEMPORARY TABLE gone (id INT PRIMARY KEY)");
    ok(&mut a, "INSERT INTO gone VALUES (1)");
    ok(&mut a, "DROP TEMPORARY TABLE gone");
    assert!(temporary_keys(&storage) > 0);
    drop(a);
    assert_eq!(temporary_keys(&storage), 0);

    // A new session of the same connection id does not find it.
    let mut a2 = session(&e, 2);
    let r = run(&mut a2, "SELECT * FROM tmp");
    assert!(matches!(r, Err(Error::UnknownTable { .. })), "{r:?}");
}

#[test]
fn what_a_crash_left_is_swept_when_the_engine_opens() {
    let storage = Arc::new(MemoryStorage::new());
    let e = setup(&storage);
    let mut a = session(&e, 2);
    ok(
        &mut a,
        "CREATE TEMPORARY TABLE tmp (id INT PRIMARY KEY, v INT, KEY kv (v))",
    );
    ok(&mut a, "INSERT INTO tmp VALUES (1, 10), (2, 20)");
    assert!(temporary_keys(&storage) > 0);
    // The process dies: no session cleanup runs.
    std::mem::forget(a);
    let e2 = common::open(&storage);
    assert_eq!(temporary_keys(&storage), 0);
    let mut s = session(&e2, 5);
    assert_eq!(text(&rows(&mut s, "SELECT v FROM t")[0][0]), "base");
    drop(e);
}

#[test]
fn create_temporary_tables_is_the_only_privilege_needed() {
    let storage = Arc::new(MemoryStorage::new());
    let e = setup(&storage);
    let mut root = session(&e, 2);
    ok(&mut root, "CREATE USER 'u'@'%' IDENTIFIED BY 'pw'");
    ok(&mut root, "GRANT CREATE TEMPORARY TABLES ON d.* TO 'u'@'%'");
    let mut u = e.session(3, "u", "localhost");
    ok(&mut u, "USE d");
    ok(&mut u, "CREATE TEMPORARY TABLE mine (a INT)");
    ok(&mut u, "INSERT INTO mine VALUES (1)");
    assert_eq!(rows(&mut u, "SELECT a FROM mine").len(), 1);
    let r = run(&mut u, "CREATE TABLE base (a INT)");
    assert!(matches!(r, Err(Error::TableAccessDenied { .. })), "{r:?}");
    // A temporary table of the name does not lend its freedom to a base
    // table's CREATE.
    let r = run(&mut u, "CREATE TABLE mine (a INT)");
    assert!(matches!(r, Err(Error::TableAccessDenied { .. })), "{r:?}");
    ok(&mut u, "DROP TEMPORARY TABLE mine");
    // Nor does it open the base table the temporary one shadowed.
    let r = run(&mut u, "SELECT * FROM t");
    assert!(
        matches!(
            r,
            Err(Error::TableAccessDenied { .. } | Error::DbAccessDenied { .. })
        ),
        "{r:?}"
    );
}

#[test]
fn prepared_statements_plan_again_when_a_temporary_table_appears_or_goes() {
    let storage = Arc::new(MemoryStorage::new());
    let e = setup(&storage);
    let mut a = session(&e, 2);
    let p = a.prepare("SELECT v FROM t").expect("prepares");
    let v = |a: &mut Session| match a.execute_prepared(p.id, &[]).expect("executes") {
        QueryResult::Rows { rows, .. } => text(&rows[0][0]),
        other => panic!("{other:?}"),
    };
    assert_eq!(v(&mut a), "base");
    ok(&mut a, "CREATE TEMPORARY TABLE t (v VARCHAR(10))");
    ok(&mut a, "INSERT INTO t VALUES ('temp')");
    assert_eq!(v(&mut a), "temp");
    ok(&mut a, "DROP TEMPORARY TABLE t");
    assert_eq!(v(&mut a), "base");
    ok(&mut a, "CREATE TEMPORARY TABLE t (v VARCHAR(10))");
    ok(&mut a, "INSERT INTO t VALUES ('again')");
    assert_eq!(v(&mut a), "again");
}
