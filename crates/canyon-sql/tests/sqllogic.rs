//! Data-driven SQL tests: every `tests/sql/*.test` file runs in-process against
//! an engine on `MemoryStorage`.
//!
//! Format (a small sqllogictest dialect):
//! ```text
//! statement ok
//! CREATE TABLE t (a INT)
//!
//! statement error DuplicateEntry
//! INSERT INTO t VALUES (1)
//!
//! query
//! SELECT a, b FROM t ORDER BY a
//! ----
//! 1<TAB>x
//! 2<TAB>NULL
//! ```
//! A statement runs to the next blank line. `statement error NAME` expects the
//! engine error whose variant name starts with NAME. Query results are rows of
//! tab-separated values (`<TAB>` above), NULL as `NULL`. `query masked 11,12`
//! shows the values of those columns (counted from 0) that are not NULL as
//! `<set>`: for times the engine stamps (CREATE_TIME). `CANYON_BLESS=1 cargo
//! test` rewrites the expected results of every `query` block from what the
//! engine returned.

mod common;
mod golden;

use canyon_sql::types::text::column_text;
use canyon_sql::Value;
use canyon_sql::{ColumnType, QueryResult};
use std::path::Path;
use std::time::Duration;

fn render(r: &QueryResult) -> Vec<String> {
    match r {
        // A FLOAT column's value is single precision: shown as the server
        // sends it (`123.46` for FLOAT(5,2), not the double 123.4599990844).
        QueryResult::Rows { columns, rows, .. } => rows
            .iter()
            .map(|row| {
                row.iter()
                    .zip(columns.iter())
                    .map(|(v, c)| match (v, c.column_type) {
                        // So is a DOUBLE of fixed decimals (DOUBLE(M,D), SUM
                        // of a FLOAT(M,D)): with its D digits.
                        (Value::Double(_), ColumnType::Float) => column_text(v, c)
                            .map(|t| String::from_utf8_lossy(&t).into_owned())
                            .unwrap_or_default(),
                        (Value::Double(_), ColumnType::Double) if c.decimals < 31 => {
                            column_text(v, c)
                                .map(|t| String::from_utf8_lossy(&t).into_owned())
                                .unwrap_or_default()
                        }
                        _ => v.to_display(),
                    })
                    .collect::<Vec<_>>()
                    .join("\t")
            })
            // A value with line breaks (EXPLAIN FORMAT=TREE / JSON) reads
            // as the lines it prints as.
            .flat_map(|row| row.split('\n').map(str::to_string).collect::<Vec<_>>())
            .collect(),
        QueryResult::Ok { affected_rows, .. } => vec![format!("affected {affected_rows}")],
    }
}

/// `row` with the non-NULL values of the `masked` columns shown as `<set>`.
fn mask(row: &str, masked: &[usize]) -> String {
    if masked.is_empty() {
        return row.to_string();
    }
    row.split('\t')
        .enumerate()
        .map(|(i, v)| {
            if masked.contains(&i) && v != "NULL" {
                "<set>"
            } else {
                v
            }
        })
        .collect::<Vec<_>>()
        .join("\t")
}

fn run_file(path: &Path) {
    let text = std::fs::read_to_string(path).expect("test file reads");
    let bless = golden::blessing();
    let engine = common::engine(Duration::from_secs(2));
    let mut session = engine.session(1, "root", "localhost");
    let mut out = String::new();
    let mut failures = Vec::new();
    let blocks: Vec<&str> = text.split("\n\n").collect();
    for block in blocks {
        let block = block.trim_matches('\n');
        if block.is_empty() {
            continue;
        }
        // Comment lines may open a block; the statement after them (if
        // any) runs. (Skipping the whole block once hid four tests.)
        let mut lines = block.lines().peekable();
        let mut comments = String::new();
        while let Some(c) = lines.next_if(|l| l.starts_with('#')) {
            comments.push_str(c);
            comments.push('\n');
        }
        let Some(header) = lines.next() else {
            out.push_str(block);
            out.push_str("\n\n");
            continue;
        };
        let rest: Vec<&str> = lines.collect();
        if let Some(expect) = header.strip_prefix("statement ") {
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
        } else if let Some(masked) = header
            .strip_prefix("query")
            .filter(|m| m.is_empty() || m.starts_with(" masked "))
        {
            let masked: Vec<usize> = masked
                .trim()
                .strip_prefix("masked ")
                .unwrap_or("")
                .split(',')
                .filter_map(|n| n.trim().parse().ok())
                .collect();
            let split = rest.iter().position(|l| *l == "----").unwrap_or(rest.len());
            let sql = rest[..split].join("\n");
            let expected: Vec<String> = rest
                .get(split + 1..)
                .unwrap_or(&[])
                .iter()
                .map(|s| s.to_string())
                .collect();
            let got: Vec<String> = match session.execute(&sql, false).pop().expect("one result") {
                Ok(r) => render(&r),
                Err(e) => vec![format!("ERROR {e:?}")],
            }
            .into_iter()
            .map(|row| mask(&row, &masked))
            .collect();
            if got != expected && !bless {
                failures.push(format!(
                    "{}: `{sql}`\n  expected: {expected:?}\n  got:      {got:?}",
                    path.display()
                ));
            }
            out.push_str(&comments);
            out.push_str(header);
            out.push('\n');
            out.push_str(&sql);
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
fn sql_logic_tests() {
    for f in golden::files("sql", "test") {
        run_file(&f);
    }
}
