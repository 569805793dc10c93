//! Stored programs end to end, for what the sqllogic file
//! (`tests/sql/60_routines.test`) cannot show: the several results of one
//! CALL, definitions surviving a restart, SHOW CREATE's text, KILL QUERY
//! and max_execution_time stopping a loop, and a trigger's writes undone
//! with its statement inside an explicit transaction.

mod common;

use canyon_common::Error;
use canyon_sql::{QueryResult, Session, Value};
use canyon_storage::MemoryStorage;
use std::sync::Arc;
use std::time::Duration;

fn exec(s: &mut Session, sql: &str) -> Vec<QueryResult> {
    s.execute(sql, true)
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("`{sql}` failed: {e:?}")))
        .collect()
}

fn rows(r: &QueryResult) -> Vec<Vec<String>> {
    match r {
        QueryResult::Rows { rows, .. } => rows
            .iter()
            .map(|row| row.iter().map(Value::to_display).collect())
            .collect(),
        QueryResult::Ok { .. } => panic!("expected rows, got {r:?}"),
    }
}

fn scalar(s: &mut Session, sql: &str) -> String {
    let r = exec(s, sql);
    rows(r.last().expect("a result"))[0][0].clone()
}

fn err(s: &mut Session, sql: &str) -> Error {
    match s.execute(sql, true).pop().expect("a result") {
        Err(e) => e,
        Ok(r) => panic!("`{sql}` succeeded: {r:?}"),
    }
}

fn code(e: &Error) -> u16 {
    match e {
        Error::Sql { code, .. } => *code,
        other => panic!("not a stored-program error: {other:?}"),
    }
}

fn session(engine: &Arc<canyon_sql::Engine>, id: u32) -> Session {
    let mut s = engine.session(id, "root", "localhost");
    s.use_database("d").expect("database d");
    s
}

fn setup() -> (Arc<canyon_sql::Engine>, Session) {
    let engine = common::engine(Duration::from_secs(2));
    let mut s = engine.session(1, "root", "localhost");
    exec(&mut s, "CREATE DATABASE d");
    s.use_database("d").expect("database d");
    exec(&mut s, "CREATE TABLE t (a INT PRIMARY KEY, b INT)");
    exec(&mut s, "INSERT INTO t VALUES (1, 10), (2, 20)");
    (engine, s)
}

/// Each SELECT of a procedure is one result set, in order, and the CALL's
/// own OK comes last (the server sends all but it with
/// SERVER_MORE_RESULTS_EXISTS). The column names are the SELECTs' text, not
/// the values the locals were replaced by.
#[test]
fn call_returns_one_result_set_per_select_then_ok() {
    let (_e, mut s) = setup();
    exec(
        &mut s,
        "CREATE PROCEDURE p(n INT)
BEGIN
  DECLARE i INT DEFAULT 0;
  WHILE i < n DO
    SELECT i, i * 10 AS tens;
    SET i = i + 1;
  END WHILE;
  SELECT a FROM t ORDER BY a;
  UPDATE t SET b = b + 1;
END",
    );
    let out = exec(&mut s, "CALL p(2)");
    assert_eq!(out.len(), 4, "{out:?}");
    assert_eq!(rows(&out[0]), vec![vec!["0", "0"]]);
    assert_eq!(rows(&out[1]), vec![vec!["1", "10"]]);
    assert_eq!(rows(&out[2]), vec![vec!["1"], vec!["2"]]);
    assert!(matches!(out[3], QueryResult::Ok { .. }), "{:?}", out[3]);
    match &out[0] {
        QueryResult::Rows { columns, .. } => {
            let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
            assert_eq!(names, ["i", "tens"]);
        }
        other => panic!("{other:?}"),
    }
    // An error part way: the result sets before it, then the error.
    exec(
        &mut s,
        "CREATE PROCEDURE q() BEGIN SELECT 1; SELECT * FROM missing; SELECT 2; END",
    );
    let out = s.execute("CALL q()", true);
    assert_eq!(out.len(), 2, "{out:?}");
    assert!(out[0].is_ok());
    assert!(matches!(out[1], Err(Error::UnknownTable { .. })), "{out:?}");
    // A CALL followed by another statement of the same request.
    let out = exec(&mut s, "CALL p(1); SELECT 42");
    assert_eq!(out.len(), 4, "{out:?}");
    assert_eq!(rows(&out[3]), vec![vec!["42"]]);
}

/// Procedures, functions and triggers are catalog records: they survive a
/// restart, and DROP removes them for good.
#[test]
fn definitions_survive_restart() {
    let storage = Arc::new(MemoryStorage::new());
    {
        let engine = common::open(&storage);
        engine.bootstrap_root("").expect("root");
        let mut s = engine.session(1, "root", "localhost");
        exec(&mut s, "CREATE DATABASE d");
        s.use_database("d").expect("d");
        exec(&mut s, "CREATE TABLE t (a INT PRIMARY KEY, b INT)");
        exec(&mut s, "CREATE TABLE log (n INT)");
        exec(
            &mut s,
            "CREATE FUNCTION f(x INT) RETURNS INT DETERMINISTIC RETURN x + 1",
        );
        exec(&mut s, "CREATE PROCEDURE p(OUT y INT) SET y = f(41)");
        exec(&mut s, "CREATE PROCEDURE gone() SELECT 1");
        exec(&mut s, "DROP PROCEDURE gone");
        exec(
            &mut s,
            "CREATE TRIGGER t_ai AFTER INSERT ON t FOR EACH ROW INSERT INTO log VALUES (NEW.a)",
        );
    }
    let engine = common::open(&storage);
    let mut s = session(&engine, 2);
    exec(&mut s, "CALL p(@y)");
    assert_eq!(scalar(&mut s, "SELECT @y"), "42");
    assert_eq!(scalar(&mut s, "SELECT f(1)"), "2");
    exec(&mut s, "INSERT INTO t VALUES (7, 0)");
    assert_eq!(scalar(&mut s, "SELECT n FROM log"), "7");
    assert_eq!(code(&err(&mut s, "CALL gone()")), 1305);
    let deterministic = scalar(
        &mut s,
        "SELECT IS_DETERMINISTIC FROM information_schema.ROUTINES WHERE ROUTINE_NAME = 'f'",
    );
    assert_eq!(deterministic, "YES");
}

/// SHOW CREATE rebuilds the statement from the stored parts; SHOW ...
/// STATUS and SHOW TRIGGERS list what the catalog holds.
#[test]
fn show_statements() {
    let (_e, mut s) = setup();
    exec(
        &mut s,
        "CREATE DEFINER = 'admin'@'localhost' FUNCTION f(x INT) RETURNS INT DETERMINISTIC NO SQL COMMENT 'inc' RETURN x + 1",
    );
    let r = exec(&mut s, "SHOW CREATE FUNCTION f");
    let row = &rows(&r[0])[0];
    assert_eq!(row[0], "f");
    assert_eq!(
        row[2],
        "CREATE DEFINER=`admin`@`localhost` FUNCTION `f`(x INT) RETURNS INT\n    DETERMINISTIC\n    NO SQL\n    COMMENT 'inc'\nRETURN x + 1"
    );
    let r = exec(
        &mut s,
        "SHOW FUNCTION STATUS WHERE Db = 'd' AND Name LIKE 'f%'",
    );
    let list = rows(&r[0]);
    assert_eq!(list.len(), 1);
    assert_eq!(&list[0][..4], ["d", "f", "FUNCTION", "admin@localhost"]);
    assert_eq!(list[0][7], "inc");
    let r = exec(&mut s, "SHOW PROCEDURE STATUS");
    assert!(rows(&r[0]).is_empty());
    exec(
        &mut s,
        "CREATE TRIGGER tb BEFORE UPDATE ON t FOR EACH ROW SET NEW.b = OLD.b",
    );
    let r = exec(&mut s, "SHOW TRIGGERS LIKE 't'");
    let list = rows(&r[0]);
    assert_eq!(
        &list[0][..5],
        ["tb", "UPDATE", "t", "SET NEW.b = OLD.b", "BEFORE"]
    );
    let r = exec(&mut s, "SHOW CREATE TRIGGER tb");
    assert_eq!(
        rows(&r[0])[0][2],
        "CREATE DEFINER=`root`@`%` TRIGGER `tb` BEFORE UPDATE ON `t` FOR EACH ROW SET NEW.b = OLD.b"
    );
    assert_eq!(code(&err(&mut s, "SHOW CREATE TRIGGER nope")), 1360);
}

/// A routine that loops for ever stops on KILL QUERY (1317) and on
/// max_execution_time (3024); the session goes on afterwards.
#[test]
fn endless_loops_stop() {
    let (engine, mut s) = setup();
    exec(
        &mut s,
        "CREATE PROCEDURE spin() BEGIN DECLARE i INT DEFAULT 0; LOOP SET i = i + 1; END LOOP; END",
    );
    exec(&mut s, "SET max_execution_time = 200");
    let e = err(&mut s, "CALL spin()");
    assert!(matches!(e, Error::QueryTimeout), "{e:?}");
    exec(&mut s, "SET max_execution_time = 0");

    let id = s.connection_id();
    let runner = std::thread::spawn(move || s.execute("CALL spin()", false));
    std::thread::sleep(Duration::from_millis(200));
    let mut killer = session(&engine, 99);
    exec(&mut killer, &format!("KILL QUERY {id}"));
    let out = runner.join().expect("the CALL's thread");
    assert!(
        matches!(out.last(), Some(Err(Error::Interrupted))),
        "{out:?}"
    );
}

/// A trigger's writes belong to its statement: a failing row undoes the
/// statement's earlier rows and what their triggers wrote, and the open
/// transaction's earlier work stays.
#[test]
fn trigger_failure_undoes_the_statement_only() {
    let (_e, mut s) = setup();
    exec(&mut s, "CREATE TABLE audit (a INT)");
    exec(
        &mut s,
        "CREATE TRIGGER t_bi BEFORE INSERT ON t FOR EACH ROW
BEGIN
  INSERT INTO audit VALUES (NEW.a);
  IF NEW.a > 100 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'too big'; END IF;
END",
    );
    exec(&mut s, "BEGIN");
    exec(&mut s, "INSERT INTO t VALUES (3, 30)");
    let e = err(&mut s, "INSERT INTO t VALUES (4, 40), (500, 1)");
    assert_eq!(code(&e), 1644);
    exec(&mut s, "COMMIT");
    let r = exec(&mut s, "SELECT a FROM t ORDER BY a");
    assert_eq!(rows(&r[0]), vec![vec!["1"], vec!["2"], vec!["3"]]);
    let r = exec(&mut s, "SELECT a FROM audit ORDER BY a");
    assert_eq!(rows(&r[0]), vec![vec!["3"]]);
}

/// A text that starts with a stored-program statement but does not parse
/// is a syntax error (1064), not a silent OK.
#[test]
fn malformed_bodies_are_syntax_errors() {
    let (_e, mut s) = setup();
    for sql in [
        "CREATE PROCEDURE p() BEGIN SELECT 1",
        "CREATE PROCEDURE p() BEGIN IF 1 THEN SELECT 1; END; END",
        "CREATE FUNCTION f() RETURNS INT BEGIN RETURN 1 END",
        "CREATE PROCEDURE p(OUT) SELECT 1",
    ] {
        let e = err(&mut s, sql);
        assert!(matches!(e, Error::Syntax(_)), "`{sql}`: {e:?}");
    }
    assert!(matches!(
        err(&mut s, "CREATE FUNCTION f(OUT x INT) RETURNS INT RETURN 1"),
        Error::Syntax(_)
    ));
    assert!(
        matches!(
            err(&mut s, "CREATE PROCEDURE p() RETURN 1"),
            Error::Sql { code: 1313, .. }
        ) || s
            .execute("CALL p()", true)
            .pop()
            .is_some_and(|r| matches!(r, Err(Error::Sql { code: 1313, .. })))
    );
}

/// A stored function whose argument reads the row runs once per row.
#[test]
fn per_row_function_calls() {
    let (_e, mut s) = setup();
    exec(&mut s, "CREATE FUNCTION f(v INT) RETURNS INT RETURN v * 2");
    let r = exec(&mut s, "SELECT a, f(a) FROM t ORDER BY a");
    assert_eq!(rows(&r[0]), vec![vec!["1", "2"], vec!["2", "4"]]);
}

/// A CALL after the first statement of a text sends its result sets too; a
/// prepared CALL binds its `?` and answers with one result (1312 when the
/// procedure sends result sets, as MySQL answers a client that cannot take
/// several).
#[test]
fn call_in_multi_statement_text_and_prepared() {
    let (_e, mut s) = setup();
    exec(
        &mut s,
        "CREATE PROCEDURE p(IN x INT, OUT y INT) BEGIN SET y = x + 1; SELECT y; END",
    );
    exec(
        &mut s,
        "CREATE PROCEDURE quiet(IN x INT, OUT y INT) SET y = x * 3",
    );
    let out = exec(&mut s, "SELECT 1; CALL p(5, @y); SELECT @y");
    assert_eq!(out.len(), 4, "{out:?}");
    assert_eq!(rows(&out[1]), vec![vec!["6"]]);
    assert_eq!(rows(&out[3]), vec![vec!["6"]]);
    let id = s.prepare("CALL quiet(?, @z)").expect("prepares").id;
    s.execute_prepared(id, &[Value::Int(7)]).expect("runs");
    assert_eq!(scalar(&mut s, "SELECT @z"), "21");
    let id = s.prepare("CALL p(?, @z)").expect("prepares").id;
    let e = s
        .execute_prepared(id, &[Value::Int(1)])
        .expect_err("result sets over a prepared CALL");
    assert_eq!(code(&e), 1312);
}

/// Without CLIENT_MULTI_RESULTS a CALL may not send result sets (1312);
/// one that sends none works.
#[test]
fn clients_without_multi_results() {
    let (_e, mut s) = setup();
    s.set_client_multi_results(false);
    exec(&mut s, "CREATE PROCEDURE rows_out() SELECT 1");
    exec(&mut s, "CREATE PROCEDURE no_rows(OUT x INT) SET x = 3");
    assert_eq!(code(&err(&mut s, "CALL rows_out()")), 1312);
    exec(&mut s, "CALL no_rows(@x)");
    assert_eq!(scalar(&mut s, "SELECT @x"), "3");
}

/// CREATE ROUTINE, ALTER ROUTINE, EXECUTE and TRIGGER are checked at the
/// database (or table) level like the other privileges.
#[test]
fn routine_privileges() {
    let (engine, mut root) = setup();
    exec(&mut root, "CREATE PROCEDURE p() SELECT 1");
    exec(&mut root, "CREATE FUNCTION f() RETURNS INT RETURN 1");
    exec(&mut root, "CREATE USER 'u'@'%' IDENTIFIED BY 'pw'");
    exec(&mut root, "GRANT SELECT ON d.* TO 'u'@'%'");
    let mut u = engine.session(7, "u", "localhost");
    u.use_database("d").expect("d");
    for sql in [
        "CALL p()",
        "SELECT f()",
        "CREATE PROCEDURE q() SELECT 1",
        "DROP PROCEDURE p",
        "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.b = 1",
    ] {
        let e = err(&mut u, sql);
        assert!(
            matches!(
                e,
                Error::DbAccessDenied { .. } | Error::TableAccessDenied { .. }
            ),
            "`{sql}`: {e:?}"
        );
    }
    exec(&mut root, "GRANT EXECUTE, CREATE ROUTINE ON d.* TO 'u'@'%'");
    exec(&mut u, "CALL p()");
    assert_eq!(scalar(&mut u, "SELECT f()"), "1");
    exec(&mut u, "CREATE PROCEDURE q() SELECT 1");
}

/// What mariadb-dump --routines --triggers writes replays: triggers inside
/// executable comments, routines with DEFINER and characteristics.
#[test]
fn dump_forms_replay() {
    let (_e, mut s) = setup();
    exec(&mut s, "CREATE TABLE log (x INT)");
    exec(
        &mut s,
        "/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`%`*/ /*!50003 TRIGGER `tr` AFTER INSERT ON `t` FOR EACH ROW BEGIN INSERT INTO log VALUES (NEW.a); END \n*/",
    );
    exec(&mut s, "/*!50003 DROP FUNCTION IF EXISTS `f` */");
    exec(
        &mut s,
        "CREATE DEFINER=`root`@`%` FUNCTION `f`(v INT) RETURNS INT\n    DETERMINISTIC\nRETURN v+1\n",
    );
    exec(&mut s, "INSERT INTO t VALUES (9, f(1))");
    assert_eq!(scalar(&mut s, "SELECT x FROM log"), "9");
    assert_eq!(scalar(&mut s, "SELECT b FROM t WHERE a = 9"), "2");
}
