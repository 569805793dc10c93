//! The JSON type through the engine API: result metadata (MYSQL_TYPE_JSON,
//! 245), prepared statements with JSON parameters and results, and
//! SHOW CREATE TABLE. The SQL surface is in `sql/json.test`.

mod common;

use canyon_sql::{ColumnType, QueryResult, Value};
use std::time::Duration;

fn session() -> canyon_sql::Session {
    let e = common::engine(Duration::from_secs(2));
    let mut s = e.session(1, "root", "localhost");
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE t (id INT PRIMARY KEY, j JSON)",
        r#"INSERT INTO t VALUES (1, '{"b": 2, "a": [1, "x"]}'), (2, NULL)"#,
    ] {
        s.execute(sql, false)
            .pop()
            .expect("a result")
            .expect("setup statement succeeds");
    }
    s
}

fn text(v: &Value) -> String {
    v.to_display()
}

#[test]
fn json_columns_report_type_245() {
    let mut s = session();
    let r = s
        .execute(
            "SELECT j, j->'$.a', j->>'$.b', JSON_OBJECT('k', 1) FROM t WHERE id = 1",
            false,
        )
        .pop()
        .expect("a result")
        .expect("runs");
    let QueryResult::Rows { columns, rows, .. } = r else {
        panic!("expected rows");
    };
    assert_eq!(columns[0].column_type, ColumnType::Json);
    assert_eq!(columns[0].charset, 63, "JSON is sent with charset binary");
    assert_eq!(columns[1].column_type, ColumnType::Json);
    assert_ne!(columns[2].column_type, ColumnType::Json, "->> is a string");
    assert_eq!(columns[3].column_type, ColumnType::Json);
    assert_eq!(text(&rows[0][0]), r#"{"a": [1, "x"], "b": 2}"#);
    assert_eq!(text(&rows[0][1]), r#"[1, "x"]"#);
    assert_eq!(text(&rows[0][2]), "2");
}

#[test]
fn prepared_statements_take_and_return_json() {
    let mut s = session();
    let ins = s.prepare("INSERT INTO t VALUES (?, ?)").expect("prepares");
    s.execute_prepared(ins.id, &[Value::Int(3), Value::str(r#"{"z": [true]}"#)])
        .expect("a string parameter is JSON text");
    let err = s
        .execute_prepared(ins.id, &[Value::Int(4), Value::str("{oops")])
        .expect_err("invalid JSON text");
    assert!(
        matches!(&err, canyon_common::Error::Sql { code: 3140, .. }),
        "{err:?}"
    );
    let sel = s
        .prepare("SELECT id, JSON_EXTRACT(j, ?) FROM t WHERE JSON_CONTAINS_PATH(j, 'one', ?) ORDER BY id")
        .expect("prepares");
    let QueryResult::Rows { columns, rows, .. } = s
        .execute_prepared(sel.id, &[Value::str("$.z[0]"), Value::str("$.z")])
        .expect("executes")
    else {
        panic!("expected rows");
    };
    assert_eq!(columns[1].column_type, ColumnType::Json);
    assert_eq!(rows.len(), 1);
    assert_eq!(text(&rows[0][1]), "true");
    // A NULL parameter is SQL NULL, not JSON null.
    let QueryResult::Rows { rows, .. } = s
        .execute_prepared(sel.id, &[Value::Null, Value::str("$.a")])
        .expect("executes")
    else {
        panic!("expected rows");
    };
    assert_eq!(rows, vec![vec![Value::Int(1), Value::Null]]);
}

#[test]
fn show_create_table_prints_json() {
    let mut s = session();
    let QueryResult::Rows { rows, .. } = s
        .execute("SHOW CREATE TABLE t", false)
        .pop()
        .expect("a result")
        .expect("runs")
    else {
        panic!("expected rows");
    };
    let ddl = text(&rows[0][1]);
    assert!(ddl.contains("`j` json DEFAULT NULL"), "{ddl}");
}
