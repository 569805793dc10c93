//! ENUM and SET columns through the engine API, for what the `.test` files
//! cannot show: SHOW CREATE TABLE's multi-line text, the result-set metadata
//! (MYSQL_TYPE_STRING with ENUM_FLAG / SET_FLAG), and the member lists read
//! back from the stored catalog after a restart. (The value semantics are in
//! `tests/sql/62_enum_set.test`.)

mod common;

use canyon_common::Error;
use canyon_sql::{column_flags, ColumnType, QueryResult, Session, Value};
use canyon_storage::MemoryStorage;
use std::sync::Arc;
use std::time::Duration;

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

const CREATE: &str = "CREATE TABLE t (id INT PRIMARY KEY, \
     e ENUM('a','it''s','c') CHARACTER SET latin1 NOT NULL DEFAULT 'IT''S', \
     s SET('x','y','z') DEFAULT 'z,x')";

#[test]
fn show_create_table_prints_members_as_mysql() {
    let e = common::engine(Duration::from_secs(2));
    let mut s = e.session(1, "root", "localhost");
    for sql in ["CREATE DATABASE d", "USE d", CREATE] {
        run(&mut s, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let text = rows(&mut s, "SHOW CREATE TABLE t")[0][1].clone();
    assert_eq!(
        text,
        "CREATE TABLE `t` (\n  \
         `id` int NOT NULL,\n  \
         `e` enum('a','it''s','c') CHARACTER SET latin1 COLLATE latin1_swedish_ci NOT NULL DEFAULT 'it''s',\n  \
         `s` set('x','y','z') DEFAULT 'x,z',\n  \
         PRIMARY KEY (`id`)\n\
         ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
    );
    // The printed statement creates the same table.
    run(&mut s, "DROP TABLE t").expect("drop");
    run(&mut s, &text).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(rows(&mut s, "SHOW CREATE TABLE t")[0][1], text);
}

#[test]
fn result_columns_are_strings_with_enum_and_set_flags() {
    let e = common::engine(Duration::from_secs(2));
    let mut s = e.session(1, "root", "localhost");
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        CREATE,
        "INSERT INTO t (id, e) VALUES (1, 'c')",
    ] {
        run(&mut s, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let Ok(QueryResult::Rows { columns, rows, .. }) = run(&mut s, "SELECT e, s, e + 0 FROM t")
    else {
        panic!("rows expected");
    };
    assert_eq!(rows[0], [Value::str("c"), Value::str("x,z"), Value::Int(3)]);
    assert_eq!(columns[0].column_type, ColumnType::String);
    assert_ne!(columns[0].flags & column_flags::ENUM, 0);
    assert_ne!(columns[0].flags & column_flags::NOT_NULL, 0);
    assert_eq!(
        columns[0].length,
        4 * 4,
        "longest member, 4 bytes a character"
    );
    assert_eq!(columns[1].column_type, ColumnType::String);
    assert_ne!(columns[1].flags & column_flags::SET, 0);
    assert_eq!(columns[1].flags & column_flags::ENUM, 0);
    assert_eq!(columns[1].length, 5 * 4, "every member and the commas");
}

#[test]
fn member_lists_survive_a_restart() {
    let storage = Arc::new(MemoryStorage::new());
    {
        let e = common::open(&storage);
        e.bootstrap_root("").expect("root account");
        let mut s = e.session(1, "root", "localhost");
        for sql in ["CREATE DATABASE d", "USE d", CREATE] {
            run(&mut s, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
    }
    let e = common::open(&storage);
    let mut s = e.session(1, "root", "localhost");
    run(&mut s, "USE d").expect("use");
    run(&mut s, "INSERT INTO t VALUES (1, 3, 'Y,x'), (2, 'A', 6)").expect("insert");
    assert_eq!(
        rows(&mut s, "SELECT e, e + 0, s, s + 0 FROM t ORDER BY id"),
        [["c", "3", "x,y", "3"], ["a", "1", "y,z", "6"]]
    );
    assert!(matches!(
        run(&mut s, "INSERT INTO t (id, e) VALUES (3, 'd')"),
        Err(Error::StrictModeError { code: 1265, .. })
    ));
}
