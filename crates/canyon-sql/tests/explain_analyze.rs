//! EXPLAIN ANALYZE: the statement runs, and each node of the tree carries
//! the rows it really produced and how often it ran (times vary and are
//! checked for shape only: FIRST <= ALL).

mod common;

use canyon_common::Error;
use canyon_sql::Session;
use common::{engine, ok, rows, run};
use std::time::Duration;

/// A session over `t` (100 rows, `a` = id % 10, an index on `a`) and `u`
/// (300 rows, three per row of `t`, `c` = id).
fn setup() -> Session {
    let e = engine(Duration::from_secs(5));
    let mut s = e.session(1, "root", "localhost");
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "USE d");
    ok(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10), KEY ka (a))",
    );
    ok(
        &mut s,
        "CREATE TABLE u (id INT PRIMARY KEY, t_id INT, c INT)",
    );
    let t: Vec<String> = (1..=100)
        .map(|i| format!("({i}, {}, 'b{}')", i % 10, i % 4))
        .collect();
    ok(&mut s, &format!("INSERT INTO t VALUES {}", t.join(",")));
    let u: Vec<String> = (1..=300)
        .map(|i| format!("({i}, {}, {i})", (i - 1) / 3 + 1))
        .collect();
    ok(&mut s, &format!("INSERT INTO u VALUES {}", u.join(",")));
    s
}

/// The tree, each `(actual time=A..B ` checked (A <= B) and replaced by
/// `(actual `.
fn analyzed(s: &mut Session, query: &str) -> String {
    let out = rows(s, &format!("EXPLAIN ANALYZE {query}"));
    assert_eq!(out.len(), 1, "{query}: one row");
    let text = &out[0][0];
    let mut cleaned = String::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("(actual time=") {
        cleaned.push_str(&rest[..i]);
        cleaned.push_str("(actual ");
        let after = &rest[i + "(actual time=".len()..];
        let end = after.find(' ').expect("time then a space");
        let (first, all) = after[..end].split_once("..").expect("FIRST..ALL");
        let first: f64 = first.parse().expect("a number of milliseconds");
        let all: f64 = all.parse().expect("a number of milliseconds");
        assert!(
            first >= 0.0 && first <= all,
            "{query}: {first}..{all} in\n{text}"
        );
        rest = &after[end + 1..];
    }
    cleaned.push_str(rest);
    cleaned
}

/// The tree without annotations (to compare with EXPLAIN FORMAT=TREE).
fn bare(tree: &str) -> String {
    tree.lines()
        .map(|l| match l.find("  (") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn row_counts_and_loops_are_the_real_ones() {
    let mut s = setup();
    let cases: &[(&str, &str)] = &[
        (
            "SELECT * FROM t WHERE a > 7",
            "-> Index range scan on t using ka over (7 < a)  (actual rows=20 loops=1)",
        ),
        (
            "SELECT * FROM t WHERE b = 'b1'",
            "-> Filter: (b = 'b1')  (actual rows=25 loops=1)\n    \
             -> Table scan on t  (actual rows=100 loops=1)",
        ),
        (
            // A nested loop: u read by its primary key once per row of t.
            "SELECT t.id, u.c FROM t JOIN u ON u.id = t.id * 3 WHERE t.a = 2",
            "-> Nested loop inner join  (actual rows=10 loops=1)\n    \
             -> Index lookup on t using ka (a=2)  (actual rows=10 loops=1)\n    \
             -> Single-row index lookup on u using PRIMARY (id=(t.id * 3))  (actual rows=1 loops=10)",
        ),
        (
            "SELECT t.b, COUNT(*) FROM t JOIN u ON u.t_id = t.id WHERE t.a < 2 \
             GROUP BY t.b ORDER BY 2 DESC LIMIT 3",
            "-> Limit: 3 row(s)  (actual rows=3 loops=1)\n    \
             -> Sort: count(*) DESC  (actual rows=4 loops=1)\n        \
             -> Group (hash) by t.b: count(*)  (actual rows=4 loops=1)\n            \
             -> Inner hash join (u.t_id = t.id)  (actual rows=60 loops=1)\n                \
             -> Index range scan on t using ka over (a < 2)  (actual rows=20 loops=1)\n                \
             -> Hash  (actual rows=300 loops=1)\n                    \
             -> Table scan on u  (actual rows=300 loops=1)",
        ),
        (
            // A dependent subquery runs once per row of t.
            "SELECT id FROM t WHERE a = 3 AND EXISTS (SELECT 1 FROM u WHERE u.t_id = t.id AND u.c > 150)",
            "-> Filter: exists(select #2)  (actual rows=5 loops=1)\n    \
             -> Index lookup on t using ka (a=3)  (actual rows=10 loops=1)\n    \
             -> Select #2 (subquery in condition; dependent)\n        \
             -> Filter: (u.c > 150)  (actual rows=2 loops=10)\n            \
             -> Hash lookup on u (u.t_id = t.id)  (actual rows=3 loops=10)\n                \
             -> Hash (built once per statement)  (actual rows=300 loops=1)\n                    \
             -> Table scan on u  (actual rows=300 loops=1)",
        ),
        (
            "SELECT * FROM (SELECT a, COUNT(*) n FROM t WHERE id <= 15 GROUP BY a) d WHERE n > 1",
            "-> Filter: (d.n > 1)  (actual rows=5 loops=1)\n    \
             -> Table scan on d  (actual rows=10 loops=1)\n        \
             -> Materialize  (actual rows=10 loops=1)\n            \
             -> Group (hash) by t.a: count(*)  (actual rows=10 loops=1)\n                \
             -> Index range scan on t using PRIMARY over (id <= 15)  (actual rows=15 loops=1)",
        ),
        (
            // Row 1 of t matches three rows of u, the other 99 none and are
            // NULL-extended: 102 rows. The ON condition on u is checked per
            // probe (the hash table holds all of u).
            "SELECT t.id, u.c FROM t LEFT JOIN u ON u.t_id = t.id AND u.c < 4",
            "-> Filter: (u.c < 4)  (actual rows=102 loops=1)\n    \
             -> Left hash join (u.t_id = t.id)  (actual rows=102 loops=1)\n        \
             -> Table scan on t  (actual rows=100 loops=1)\n        \
             -> Hash  (actual rows=300 loops=1)\n            \
             -> Table scan on u  (actual rows=300 loops=1)",
        ),
        (
            "SELECT 1 + 1",
            "-> Rows fetched before execution  (actual rows=1 loops=1)",
        ),
    ];
    let mut failures = String::new();
    for (query, want) in cases {
        let got = analyzed(&mut s, query);
        if got != *want {
            failures.push_str(&format!("{query}\n  want:\n{want}\n  got:\n{got}\n\n"));
        }
        // The same nodes as EXPLAIN FORMAT=TREE shows without running it.
        let tree = rows(&mut s, &format!("EXPLAIN FORMAT=TREE {query}"));
        assert_eq!(bare(&got), tree[0][0], "{query}");
        // The top node's rows are the statement's.
        let n = rows(&mut s, query).len();
        let top = got.lines().next().unwrap_or_default();
        assert!(
            top.contains(&format!("rows={n} loops=1")),
            "{query}: {n} rows, top node {top}"
        );
    }
    assert!(failures.is_empty(), "{failures}");
}

#[test]
fn a_node_that_never_ran_says_so() {
    let mut s = setup();
    // The inner side never starts: the outer read finds nothing.
    let got = analyzed(
        &mut s,
        "SELECT t.id FROM t JOIN u ON u.id = t.id * 3 WHERE t.a = 42",
    );
    assert_eq!(
        got,
        "-> Nested loop inner join  (actual rows=0 loops=1)\n    \
         -> Index lookup on t using ka (a=42)  (actual rows=0 loops=1)\n    \
         -> Single-row index lookup on u using PRIMARY (id=(t.id * 3))  (never executed)"
    );
}

#[test]
fn only_select_and_only_the_tree_form() {
    let mut s = setup();
    for sql in [
        "EXPLAIN ANALYZE UPDATE t SET a = 1",
        "EXPLAIN ANALYZE DELETE FROM t",
        "EXPLAIN ANALYZE INSERT INTO t VALUES (1000, 1, 'x')",
        "EXPLAIN ANALYZE FORMAT=JSON SELECT * FROM t",
    ] {
        match run(&mut s, sql) {
            Err(Error::Unsupported(_)) => {}
            other => panic!("{sql}: {other:?}"),
        }
    }
    // Nothing was changed by the refused statements.
    assert_eq!(
        rows(&mut s, "SELECT COUNT(*), SUM(a) FROM t"),
        [["100", "450"]]
    );
    // FORMAT=TREE is the form EXPLAIN ANALYZE prints anyway.
    let got = rows(
        &mut s,
        "EXPLAIN ANALYZE FORMAT=TREE SELECT * FROM t WHERE id = 5",
    );
    assert!(got[0][0].contains("rows=1 loops=1"), "{got:?}");
}

#[test]
fn it_runs_in_the_session_transaction_and_takes_its_locks() {
    let e = engine(Duration::from_millis(200));
    let mut a = e.session(1, "root", "localhost");
    let mut b = e.session(2, "root", "localhost");
    ok(&mut a, "CREATE DATABASE d");
    ok(&mut a, "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)");
    ok(&mut a, "INSERT INTO d.t VALUES (1, 10), (2, 20)");
    ok(&mut a, "BEGIN");
    ok(&mut a, "INSERT INTO d.t VALUES (3, 30)");
    // It sees the transaction's own row ...
    let got = analyzed(&mut a, "SELECT * FROM d.t FOR UPDATE");
    assert!(got.contains("rows=3 loops=1"), "{got}");
    // ... and its locking read locked what it read: another session waits
    // and times out.
    match run(&mut b, "UPDATE d.t SET v = 0 WHERE id = 1") {
        Err(Error::LockWaitTimeout) => {}
        other => panic!("expected a lock wait timeout, got {other:?}"),
    }
    ok(&mut a, "ROLLBACK");
    ok(&mut b, "UPDATE d.t SET v = 0 WHERE id = 1");
}
