//! Planner golden tests: every `tests/plans/*.plan` file sets up a schema and
//! then states, for each query, the plan the planner must choose, printed as
//! `EXPLAIN FORMAT=TREE` prints it (see `canyon_sql::explain`).
//!
//! Format (blocks separated by blank lines, as in `tests/sql/*.test`):
//! ```text
//! # A comment block: kept as is.
//!
//! statement ok
//! CREATE TABLE t (id INT PRIMARY KEY, k INT, INDEX k_1 (k))
//!
//! explain
//! SELECT id FROM t WHERE k = ?
//! ----
//! -> Index lookup on t using k_1 (k=?)
//! ```
//! An `explain` block's query is prepared as `EXPLAIN FORMAT=TREE <query>` and
//! executed with NULL for every `?` (EXPLAIN never runs the query, so the values
//! do not matter; this also exercises EXPLAIN through the prepared-statement
//! path). `CANYON_BLESS=1 cargo test --test plans` rewrites every expected tree
//! from what the planner chose — review the diff: a changed plan is a changed
//! planner decision.
//!
//! Tables stay empty: the planner has no statistics, so plans do not depend on
//! data.

mod common;
mod golden;

use canyon_sql::{QueryResult, Session, Value};
use std::path::Path;
use std::time::Duration;

/// The tree EXPLAIN of `query`, or the error it gave.
fn explain_tree(session: &mut Session, query: &str) -> Vec<String> {
    let sql = format!("EXPLAIN FORMAT=TREE {query}");
    let r = session.prepare(&sql).and_then(|info| {
        let params = vec![Value::Null; info.params as usize];
        let r = session.execute_prepared(info.id, &params);
        session.close_prepared(info.id);
        r
    });
    match r {
        Ok(QueryResult::Rows { rows, .. }) => rows
            .iter()
            .flat_map(|row| {
                row.iter()
                    .map(|v| v.to_display())
                    .collect::<Vec<_>>()
                    .join("\t")
                    .lines()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect(),
        Ok(other) => vec![format!("UNEXPECTED {other:?}")],
        Err(e) => vec![format!("ERROR {e:?}")],
    }
}

fn run_file(path: &Path) {
    let text = std::fs::read_to_string(path).expect("plan file reads");
    let bless = golden::blessing();
    let engine = common::engine(Duration::from_secs(2));
    let mut session = engine.session(1, "root", "localhost");
    let mut out = String::new();
    let mut failures = Vec::new();
    for block in text.split("\n\n") {
        let block = block.trim_matches('\n');
        if block.is_empty() {
            continue;
        }
        let mut lines = block.lines();
        let header = lines.next().expect("non-empty block");
        let rest: Vec<&str> = lines.collect();
        if header.starts_with('#') {
            out.push_str(block);
            out.push_str("\n\n");
        } else if let Some(expect) = header.strip_prefix("statement ") {
            let sql = rest.join("\n");
            let r = session.execute(&sql, false).pop().expect("one result");
            match (expect, &r) {
                ("ok", Ok(_)) => {}
                (e, Err(err))
                    if e.starts_with("error ") && format!("{err:?}").starts_with(&e[6..]) => {}
                _ => failures.push(format!(
                    "{}: `{sql}` expected {expect}, got {r:?}",
                    path.display()
                )),
            }
            out.push_str(block);
            out.push_str("\n\n");
        } else if header == "explain" {
            let split = rest.iter().position(|l| *l == "----").unwrap_or(rest.len());
            let query = rest[..split].join("\n");
            let expected: Vec<String> = rest
                .get(split + 1..)
                .unwrap_or(&[])
                .iter()
                .map(|s| s.to_string())
                .collect();
            let got = explain_tree(&mut session, &query);
            if got != expected && !bless {
                failures.push(format!(
                    "{}: `{query}`\n  expected:\n{}\n  got:\n{}",
                    path.display(),
                    expected.join("\n"),
                    got.join("\n")
                ));
            }
            out.push_str("explain\n");
            out.push_str(&query);
            out.push_str("\n----\n");
            for l in &got {
                out.push_str(l);
                out.push('\n');
            }
            out.push('\n');
        } else {
            failures.push(format!(
                "{}: unknown block header `{header}`",
                path.display()
            ));
        }
    }
    golden::finish(path, &out, &failures);
}

#[test]
fn planner_golden_plans() {
    for f in golden::files("plans", "plan") {
        run_file(&f);
    }
}

/// The first column of every row of a result, as text.
fn first_column(r: &QueryResult) -> Vec<String> {
    match r {
        QueryResult::Rows { rows, .. } => rows
            .iter()
            .map(|row| row.first().map(|v| v.to_display()).unwrap_or_default())
            .collect(),
        QueryResult::Ok { .. } => Vec::new(),
    }
}

#[test]
fn explain_needs_the_statements_privileges_and_executes_nothing() {
    let engine = common::engine(Duration::from_secs(2));
    let mut root = engine.session(1, "root", "localhost");
    for sql in [
        "CREATE DATABASE secret",
        "CREATE TABLE secret.t (id INT PRIMARY KEY, v INT)",
        "INSERT INTO secret.t VALUES (1, 10)",
        "CREATE USER 'app'@'%' IDENTIFIED BY 'pw'",
    ] {
        let r = root.execute(sql, false).pop().expect("one result");
        assert!(r.is_ok(), "{sql}: {r:?}");
    }
    let mut app = engine.session(2, "app", "localhost");
    for sql in [
        "EXPLAIN SELECT v FROM secret.t WHERE id = 1",
        "EXPLAIN UPDATE secret.t SET v = 0",
        "EXPLAIN DELETE FROM secret.t",
    ] {
        let r = app.execute(sql, false).pop().expect("one result");
        assert!(
            matches!(r, Err(canyon_common::Error::TableAccessDenied { .. })),
            "{sql}: {r:?}"
        );
    }

    // Explained writes leave the data alone.
    for sql in [
        "EXPLAIN DELETE FROM secret.t",
        "EXPLAIN UPDATE secret.t SET v = v + 1",
        "EXPLAIN INSERT INTO secret.t VALUES (2, 20)",
    ] {
        let r = root.execute(sql, false).pop().expect("one result");
        assert!(r.is_ok(), "{sql}: {r:?}");
    }
    let r = root
        .execute("SELECT id, v FROM secret.t", false)
        .pop()
        .expect("one result")
        .expect("select runs");
    let QueryResult::Rows { rows, .. } = r else {
        panic!("a result set")
    };
    assert_eq!(rows, vec![vec![Value::Int(1), Value::Int(10)]]);
}

#[test]
fn explain_of_a_prepared_statement_prints_placeholders() {
    let engine = common::engine(Duration::from_secs(2));
    let mut s = engine.session(1, "root", "localhost");
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE t (id INT PRIMARY KEY, k INT, INDEX k_1 (k))",
    ] {
        let r = s.execute(sql, false).pop().expect("one result");
        assert!(r.is_ok(), "{sql}: {r:?}");
    }
    let info = s
        .prepare("EXPLAIN SELECT id FROM t WHERE k = ? AND id > ?")
        .expect("prepares");
    assert_eq!(info.params, 2);
    let r = s
        .execute_prepared(info.id, &[Value::Int(1), Value::Int(2)])
        .expect("executes");
    let QueryResult::Rows { columns, rows, .. } = &r else {
        panic!("a result set")
    };
    let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "id",
            "select_type",
            "table",
            "partitions",
            "type",
            "possible_keys",
            "key",
            "key_len",
            "ref",
            "rows",
            "filtered",
            "Extra"
        ]
    );
    assert_eq!(rows.len(), 1);
    assert_eq!(first_column(&r), ["1"]);

    let info = s
        .prepare("EXPLAIN FORMAT=TREE SELECT id FROM t WHERE k = ?")
        .expect("prepares");
    let r = s
        .execute_prepared(info.id, &[Value::Int(7)])
        .expect("executes");
    assert_eq!(first_column(&r), ["-> Index lookup on t using k_1 (k=?)"]);
}
