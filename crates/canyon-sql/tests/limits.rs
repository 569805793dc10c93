//! The statement limits of `canyon_sql::limits`, in-process: for each construct
//! that nests, the largest input that succeeds, and that the next one gets an
//! error — never a crash — after which the session serves the next statement.
//! Then inputs that once panicked, a random front-end fuzz (parse, bind, plan on
//! a fixed schema), the memory limits, and KILL / max_execution_time during a
//! parse.
//!
//! Each search runs the statements on a plain test thread (2 MiB of stack): the
//! session moves them to [`limits::STATEMENT_STACK`], so the sizes found here
//! are those of the smallest stack a statement ever runs on.

mod common;

use canyon_common::Error;
use canyon_sql::{limits, Engine, QueryResult, Session, Value};
use rand::{Rng, SeedableRng};
use std::sync::Arc;
use std::time::Duration;

fn engine() -> Arc<Engine> {
    common::engine(Duration::from_secs(5))
}

fn session(e: &Arc<Engine>) -> Session {
    let mut s = e.session(1, "root", "localhost");
    run(&mut s, "CREATE DATABASE IF NOT EXISTS d").expect("create database");
    s.use_database("d").expect("use d");
    s
}

fn run(s: &mut Session, sql: &str) -> Result<QueryResult, Error> {
    s.execute(sql, false).pop().unwrap_or(Ok(QueryResult::Ok {
        affected_rows: 0,
        last_insert_id: 0,
        info: String::new(),
        warnings: 0,
    }))
}

/// Asserts the session still answers `SELECT 1` with 1.
fn serves(s: &mut Session) {
    match run(s, "SELECT 1") {
        Ok(QueryResult::Rows { rows, .. }) => assert_eq!(rows, vec![vec![Value::Int(1)]]),
        other => panic!("SELECT 1 after a refused statement: {other:?}"),
    }
}

/// The largest `n` in `1..=hi` for which `make(n)` runs, given that `make(1)`
/// does and that success is monotone; and the error of `make(n + 1)`, if it
/// is within reach.
fn largest_accepted(
    s: &mut Session,
    hi: usize,
    make: impl Fn(usize) -> String,
) -> (usize, Option<Error>) {
    assert!(run(s, &make(1)).is_ok(), "the smallest input runs");
    let (mut ok, mut bad) = (1usize, hi + 1);
    if run(s, &make(hi)).is_ok() {
        return (hi, None);
    }
    bad = bad.min(hi);
    while bad - ok > 1 {
        let mid = ok + (bad - ok) / 2;
        match run(s, &make(mid)) {
            Ok(_) => ok = mid,
            Err(_) => bad = mid,
        }
    }
    let next = run(s, &make(ok + 1)).expect_err("one more is refused");
    serves(s);
    (ok, Some(next))
}

fn chain(first: &str, sep: &str, n: usize) -> String {
    let mut out = String::with_capacity((first.len() + sep.len()) * (n + 1));
    out.push_str(first);
    for _ in 0..n {
        out.push_str(sep);
        out.push_str(first);
    }
    out
}

/// An error the depth limits may answer with, by design.
fn is_depth_error(e: &Error) -> bool {
    matches!(
        e,
        Error::TooDeep | Error::StackOverrun { .. } | Error::TooManyWithElements
    )
}

#[test]
fn operator_chains_stop_at_the_binders_depth() {
    let e = engine();
    let mut s = session(&e);
    for (name, first, sep) in [
        ("+", "1", "+"),
        ("AND", "1", " AND "),
        ("OR", "0", " OR "),
        ("IS NULL", "1", " IS NULL"),
    ] {
        let make = |n: usize| {
            if name == "IS NULL" {
                format!("SELECT 1{}", " IS NULL".repeat(n))
            } else {
                format!("SELECT {}", chain(first, sep, n))
            }
        };
        let (n, next) = largest_accepted(&mut s, 5_000, make);
        let next = next.expect("a limit exists");
        println!("{name}: {n} operators accepted, the next: {next:?}");
        assert!(n >= 100, "{name}: only {n}");
        assert!(is_depth_error(&next), "{name}: {next:?}");
    }
    // Far past every limit, in the sizes: an error, not an overflow
    // (the 135,000-term chain once overflowed the stack while being dropped).
    // A million terms is refused before parsing, for its memory.
    for n in [135_000usize, 1_000_000] {
        let r = run(&mut s, &format!("SELECT {}", chain("1", "+", n)));
        assert!(
            matches!(&r, Err(e) if is_depth_error(e) || matches!(e, Error::OutOfMemory { .. })),
            "{r:?}"
        );
        serves(&mut s);
        // The same chain followed by a syntax error: sqlparser drops the
        // deep tree on its error path, before any check of ours can run.
        let r = run(&mut s, &format!("SELECT {} FRM t", chain("1", "+", n)));
        assert!(
            matches!(r, Err(Error::Syntax(_)) | Err(Error::OutOfMemory { .. })),
            "{r:?}"
        );
        serves(&mut s);
    }
}

#[test]
fn set_operation_chains_run_up_to_the_limit() {
    let e = engine();
    let mut s = session(&e);
    // The limit is known, so the search is its two sides (a binary search
    // over 10,000-operator texts would take a minute).
    for op in ["UNION ALL", "UNION", "INTERSECT", "EXCEPT"] {
        let make = |n: usize| chain("SELECT 1", &format!(" {op} "), n);
        let max = limits::MAX_SET_OPERATIONS;
        let at = run(&mut s, &make(max));
        assert!(at.is_ok(), "{op} x {max}: {at:?}");
        let next = run(&mut s, &make(max + 1));
        println!("{op}: {max} operators accepted, the next: {next:?}");
        assert!(matches!(next, Err(Error::TooDeep)), "{op}: {next:?}");
        serves(&mut s);
    }
    // EXPLAIN copies the statement it plans: at the limit too.
    let explained = run(
        &mut s,
        &format!(
            "EXPLAIN {}",
            chain("SELECT 1", " UNION ALL ", limits::MAX_SET_OPERATIONS)
        ),
    );
    assert!(explained.is_ok(), "{explained:?}");
    // The full chain returns its rows.
    match run(&mut s, &chain("SELECT 1", " UNION ALL ", 2_400)) {
        Ok(QueryResult::Rows { rows, .. }) => assert_eq!(rows.len(), 2_401),
        other => panic!("{other:?}"),
    }
    // Alternating quantifiers nest one operand per change.
    let mixed = |n: usize| {
        let mut q = "SELECT 1".to_string();
        for i in 0..n {
            q.push_str(if i % 2 == 0 {
                " UNION ALL SELECT 1"
            } else {
                " UNION SELECT 1"
            });
        }
        q
    };
    let (n, next) = largest_accepted(&mut s, 1_000, mixed);
    println!("alternating UNION / UNION ALL: {n} accepted, the next: {next:?}");
    assert!(n >= 100, "only {n}");
    if let Some(next) = next {
        assert!(is_depth_error(&next), "{next:?}");
    }
}

#[test]
fn with_chains_stop_at_the_element_limit() {
    let e = engine();
    let mut s = session(&e);
    let make = |n: usize| {
        let mut q = "WITH c0 AS (SELECT 1 AS x)".to_string();
        for i in 1..n {
            q.push_str(&format!(", c{i} AS (SELECT x FROM c{})", i - 1));
        }
        q.push_str(&format!(" SELECT x FROM c{}", n - 1));
        q
    };
    let max = canyon_common::MAX_WITH_ELEMENTS;
    let at = run(&mut s, &make(max));
    assert!(at.is_ok(), "{max} chained WITH elements: {at:?}");
    let next = run(&mut s, &make(max + 1));
    println!("chained WITH elements: {max} accepted, the next: {next:?}");
    assert!(matches!(next, Err(Error::TooManyWithElements)), "{next:?}");
    // 800 elements, the overflow: 4003.
    assert!(matches!(
        run(&mut s, &make(800)),
        Err(Error::TooManyWithElements)
    ));
    serves(&mut s);
    // Each element reading the one before twice: 2^n plans without a bound.
    let doubling = |n: usize| {
        let mut q = "WITH c0 AS (SELECT 1 AS x)".to_string();
        for i in 1..n {
            q.push_str(&format!(
                ", c{i} AS (SELECT x FROM c{p} UNION ALL SELECT x FROM c{p})",
                p = i - 1
            ));
        }
        q.push_str(&format!(" SELECT COUNT(*) FROM c{}", n - 1));
        q
    };
    let r = run(&mut s, &doubling(40));
    assert!(matches!(r, Err(Error::Unsupported(_))), "{r:?}");
    serves(&mut s);
}

#[test]
fn nesting_by_recursion_stops_at_the_parsers_limit() {
    let e = engine();
    let mut s = session(&e);
    for (name, open, close) in [
        ("parentheses", "(", ")"),
        ("subqueries", "(SELECT ", ")"),
        ("NOT", "NOT ", ""),
        ("unary minus", "- ", ""),
        ("functions", "ABS(", ")"),
        ("CASE", "CASE WHEN 1 THEN ", " END"),
    ] {
        let make = |n: usize| format!("SELECT {}1{}", open.repeat(n), close.repeat(n));
        let (n, next) = largest_accepted(&mut s, 100_000, make);
        let next = next.expect("a limit exists");
        println!("{name}: {n} levels accepted, the next: {next:?}");
        assert!(n >= 20, "{name}: only {n}");
        assert!(
            is_depth_error(&next) || matches!(next, Error::Syntax(_)),
            "{name}: {next:?}"
        );
    }
}

#[test]
fn texts_that_once_panicked_get_answers() {
    let e = engine();
    let mut s = session(&e);
    // The keyword matcher sliced bytes inside a character.
    for sql in [
        "/*ñ*/ SELECT 1",
        "éé",
        "SET€",
        "GRANT é",
        "ALTER TABLE ñ DISABLE KEYS",
        "SHOW GRANTS FOR é",
    ] {
        let r = run(&mut s, sql);
        assert!(!matches!(r, Err(Error::Internal(_))), "{sql}: {r:?}");
    }
    // Found by the `sql` fuzz target: `@` before a quoted name is a user
    // variable, not a placeholder (it broke the select list's numbering: 1105).
    let fuzz_found = "SET @x = 0; SELECT @x + 1, @`autocommit, @4@session.sq 0; \
                      SELECT @x + 1, @`autocomml_mode";
    for r in s.execute(fuzz_found, true) {
        assert!(!matches!(r, Err(Error::Internal(_))), "{r:?}");
    }
    // Also found by it: a `?` inside a quoted name, which the select list's
    // placeholder count read from the printed text (CI run after session 31).
    let fuzz_found = "SET @\u{FFFD}x = 1; SELECT @x + 1, @`autocommit, @4@n.sq 0; \
                      SELECT @x + 1, ?otc@u`amml_mode";
    for r in s.execute(fuzz_found, true) {
        assert!(!matches!(r, Err(Error::Internal(_))), "{r:?}");
    }
    match run(&mut s, "SELECT @`a?` IS NULL, 2") {
        Ok(QueryResult::Rows { rows, .. }) => {
            assert_eq!(rows, vec![vec![Value::Int(1), Value::Int(2)]])
        }
        other => panic!("{other:?}"),
    }
    run(&mut s, "SET @my_var = 5").expect("set a user variable");
    match run(&mut s, "SELECT @`my_var` + 1, @`unset`") {
        Ok(QueryResult::Rows { rows, .. }) => {
            assert_eq!(rows, vec![vec![Value::Int(6), Value::Null]])
        }
        other => panic!("{other:?}"),
    }
    match run(&mut s, "/*ñ*/ SELECT 1") {
        Ok(QueryResult::Rows { rows, .. }) => assert_eq!(rows, vec![vec![Value::Int(1)]]),
        other => panic!("{other:?}"),
    }
    serves(&mut s);
}

/// Seed statements of the front-end fuzz, over the schema it creates.
const SEEDS: &[&str] = &[
    "SELECT a, b FROM t WHERE a = 1 AND b LIKE 'x%' ORDER BY a DESC LIMIT 3",
    "SELECT COUNT(*), SUM(a) FROM t GROUP BY b HAVING COUNT(*) > 1",
    "SELECT * FROM t JOIN u ON t.a = u.a WHERE u.c IN (1, 2, 3)",
    "SELECT a FROM t WHERE a IN (SELECT a FROM u WHERE c > 0) UNION ALL SELECT 2",
    "WITH w AS (SELECT a FROM t) SELECT * FROM w WHERE a BETWEEN 1 AND 9",
    "INSERT INTO t (a, b) VALUES (10, 'ñé'), (11, NULL) ON DUPLICATE KEY UPDATE b = VALUES(b)",
    "UPDATE t SET b = CONCAT(b, '€') WHERE a > 5",
    "DELETE FROM u WHERE c = 3 LIMIT 1",
    "SELECT CASE WHEN a > 1 THEN 'x' ELSE 'y' END, -a, NOT a, a DIV 2 FROM t",
    "SELECT (SELECT MAX(a) FROM u), COALESCE(NULL, 1), CAST(a AS CHAR) FROM t",
    "SELECT a FROM t WHERE b = ? AND a > ?",
];

/// Fragments the fuzz inserts.
const FRAGMENTS: &[&str] = &[
    "(",
    ")",
    "'",
    "\"",
    "`",
    "/*",
    "*/",
    "-- ",
    "#",
    ";",
    ",",
    "ñ",
    "é",
    "€",
    "😀",
    "\\",
    " UNION SELECT 1",
    " AND ",
    " OR ",
    "+1",
    " IS NULL",
    "SELECT",
    "(SELECT 1)",
    "?",
    "@a",
    "@@version",
    " COLLATE utf8mb4_bin",
    "0x",
    "1e309",
    "-9223372036854775808",
    "/*!80000 ",
];

/// One random edit of `sql`, at a character boundary.
fn mutate(rng: &mut impl Rng, sql: &str) -> String {
    let cuts: Vec<usize> = sql
        .char_indices()
        .map(|(i, _)| i)
        .chain([sql.len()])
        .collect();
    let at = cuts[rng.gen_range(0..cuts.len())];
    let to = cuts[rng.gen_range(0..cuts.len())].max(at);
    match rng.gen_range(0..5) {
        0 => format!("{}{}", &sql[..at], &sql[to..]),
        1 => format!(
            "{}{}{}",
            &sql[..at],
            FRAGMENTS[rng.gen_range(0..FRAGMENTS.len())],
            &sql[at..]
        ),
        2 => format!("{}{}{}", &sql[..to], &sql[at..to], &sql[to..]),
        3 => {
            let other = SEEDS[rng.gen_range(0..SEEDS.len())];
            format!("{}{}", &sql[..at], &other[other.len() / 2..])
        }
        _ => {
            let n = rng.gen_range(1..200);
            format!("{}{}{}", &sql[..at], "(".repeat(n), &sql[at..])
        }
    }
}

#[test]
fn front_end_fuzz_never_panics() {
    let e = engine();
    let mut s = session(&e);
    run(
        &mut s,
        "CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(20), KEY (b))",
    )
    .expect("t");
    run(&mut s, "CREATE TABLE u (a INT, c INT)").expect("u");
    run(
        &mut s,
        "INSERT INTO t VALUES (1, 'x'), (2, 'xy'), (3, NULL)",
    )
    .expect("rows");
    run(&mut s, "INSERT INTO u VALUES (1, 1), (2, 3)").expect("rows");
    let seed: u64 = std::env::var("CANYON_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(22);
    let iterations: usize = std::env::var("CANYON_FUZZ_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    println!("front-end fuzz: seed {seed}, {iterations} statements");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut refused = 0usize;
    for i in 0..iterations {
        let mut sql = SEEDS[rng.gen_range(0..SEEDS.len())].to_string();
        for _ in 0..rng.gen_range(1..4) {
            sql = mutate(&mut rng, &sql);
        }
        // Prepared and text paths both: prepare binds and plans without rows.
        let r = if i % 3 == 0 {
            s.prepare(&sql).map(|_| ())
        } else {
            run(&mut s, &sql).map(|_| ())
        };
        if let Err(e) = r {
            assert!(
                !matches!(e, Error::Internal(_)),
                "statement {i} (seed {seed}) hit a bug: {sql:?}: {e:?}"
            );
            refused += 1;
        }
        // Keep the prepared-statement count under its cap.
        if i % 1_000 == 999 {
            s = session(&e);
        }
    }
    println!("front-end fuzz: {refused} of {iterations} statements refused");
    assert!(refused < iterations, "every mutated statement was refused");
    // The data is as it was, less what the fuzz's own DML did.
    serves(&mut s);
}

#[test]
fn statement_memory_is_limited() {
    let mut config = common::config(Duration::from_secs(5));
    config.statement_memory_limit = 8 << 20;
    config.statement_memory_budget = 8 << 20;
    let e =
        Engine::open(Arc::new(canyon_storage::MemoryStorage::new()), config).expect("engine opens");
    e.bootstrap_root("").expect("root");
    let mut s = session(&e);
    // A list whose estimate is just under 8 MiB runs; twice as long does not.
    let per_item = (limits::TOKEN_BYTES * 2 + limits::NODE_BYTES) * 5 / 4;
    let items = (8 << 20) / per_item - 10;
    let fits = format!("SELECT 1 IN ({})", chain("1", ",", items));
    assert!(limits::scan(&fits).memory() < 8 << 20);
    assert!(run(&mut s, &fits).is_ok());
    assert_eq!(
        e.statement_memory_used(),
        0,
        "a finished statement gives back"
    );
    let over = format!("SELECT 1 IN ({})", chain("1", ",", 2 * items));
    let r = run(&mut s, &over);
    assert!(
        matches!(
            r,
            Err(Error::OutOfMemory {
                limit: "statement_memory_limit",
                ..
            })
        ),
        "{r:?}"
    );
    assert_eq!(
        e.statement_memory_used(),
        0,
        "the reservation is given back"
    );
    serves(&mut s);
    // Long whitespace is compacted, not charged per character.
    let spaced = format!("SELECT{}1", " ".repeat(4 << 20));
    assert!(run(&mut s, &spaced).is_ok());
}

#[test]
fn kill_and_max_execution_time_stop_a_parse() {
    let e = engine();
    let mut s = session(&e);
    // Under the default statement_memory_limit, and long enough to parse
    // for tens of milliseconds.
    let big = format!("SELECT 1 IN ({})", chain("1", ",", 300_000));
    assert!(limits::scan(&big).memory() < canyon_sql::DEFAULT_STATEMENT_MEMORY_LIMIT);
    run(&mut s, "SET max_execution_time = 1").expect("set");
    let r = run(&mut s, &big);
    assert!(matches!(r, Err(Error::QueryTimeout)), "{r:?}");
    run(&mut s, "SET max_execution_time = 0").expect("set");
    serves(&mut s);

    // KILL QUERY from another session, again and again, until one lands
    // while a parse runs (between statements a KILL QUERY has nothing to
    // stop).
    let id = s.connection_id();
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let killer = {
        let (e, done) = (e.clone(), done.clone());
        std::thread::spawn(move || {
            let mut k = e.session(2, "root", "localhost");
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(5));
                run(&mut k, &format!("KILL QUERY {id}")).expect("kill");
            }
        })
    };
    let mut interrupted = false;
    for _ in 0..200 {
        if matches!(run(&mut s, &big), Err(Error::Interrupted)) {
            interrupted = true;
            break;
        }
    }
    // A short text that plans for long: 13 CTEs each reading the one before
    // twice plan 2^13 derived tables.
    let mut planned_long = "WITH c0 AS (SELECT 1 AS x)".to_string();
    for i in 1..14 {
        planned_long.push_str(&format!(
            ", c{i} AS (SELECT x FROM c{p} UNION ALL SELECT x FROM c{p})",
            p = i - 1
        ));
    }
    planned_long.push_str(" SELECT COUNT(*) FROM c13");
    let mut plan_interrupted = false;
    for _ in 0..200 {
        if matches!(run(&mut s, &planned_long), Err(Error::Interrupted)) {
            plan_interrupted = true;
            break;
        }
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    killer.join().expect("killer");
    assert!(interrupted, "no KILL QUERY stopped a parse");
    assert!(plan_interrupted, "no KILL QUERY stopped a long plan");
    serves(&mut s);
}

#[test]
fn kill_and_max_execution_time_stop_a_runaway_recursive_cte() {
    let e = engine();
    let mut s = session(&e);
    // No depth limit: only the statement's interrupt can stop it.
    run(&mut s, "SET cte_max_recursion_depth = 4294967295").expect("set");
    let runaway = "WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) \
                   SELECT COUNT(*) FROM c";
    run(&mut s, "SET max_execution_time = 200").expect("set");
    let r = run(&mut s, runaway);
    assert!(matches!(r, Err(Error::QueryTimeout)), "{r:?}");
    run(&mut s, "SET max_execution_time = 0").expect("set");
    serves(&mut s);

    let id = s.connection_id();
    let killer = {
        let e = e.clone();
        std::thread::spawn(move || {
            let mut k = e.session(2, "root", "localhost");
            std::thread::sleep(Duration::from_millis(300));
            run(&mut k, &format!("KILL QUERY {id}")).expect("kill");
        })
    };
    let r = run(&mut s, runaway);
    killer.join().expect("killer");
    assert!(matches!(r, Err(Error::Interrupted)), "{r:?}");
    // The default depth stops the same query with 3636.
    run(&mut s, "SET cte_max_recursion_depth = DEFAULT").expect("set");
    let r = run(&mut s, runaway);
    assert!(matches!(r, Err(Error::CteMaxRecursionDepth(1001))), "{r:?}");
    serves(&mut s);
}

/// Hand-offs asked for through the engine's blocking hook.
static HANDOFFS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn counting_hook(f: &mut dyn FnMut()) {
    HANDOFFS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    f();
}

#[test]
fn a_long_plan_asks_to_leave_the_worker() {
    let mut config = common::config(Duration::from_secs(5));
    config.blocking_hook = Some(counting_hook);
    let e =
        Engine::open(Arc::new(canyon_storage::MemoryStorage::new()), config).expect("engine opens");
    e.bootstrap_root("").expect("root");
    let mut s = session(&e);
    // A short text (not offloaded for its size) whose plan covers 2^12
    // derived tables; EXPLAIN plans without running it.
    let mut q = "EXPLAIN WITH c0 AS (SELECT 1 AS x)".to_string();
    for i in 1..13 {
        q.push_str(&format!(
            ", c{i} AS (SELECT x FROM c{p} UNION ALL SELECT x FROM c{p})",
            p = i - 1
        ));
    }
    q.push_str(" SELECT COUNT(*) FROM c12");
    assert!(q.len() < canyon_sql::LARGE_TEXT);
    let before = HANDOFFS.load(std::sync::atomic::Ordering::Relaxed);
    let started = std::time::Instant::now();
    let r = run(&mut s, &q);
    assert!(r.is_ok(), "{r:?}");
    let took = started.elapsed();
    let handoffs = HANDOFFS.load(std::sync::atomic::Ordering::Relaxed) - before;
    println!("plan of 2^12 CTE references: {took:?}, {handoffs} hand-offs asked");
    // Only meaningful when the plan outlasts the first threshold.
    if took > canyon_sql::plan::PLAN_OFFLOAD * 2 {
        assert!(
            handoffs > 0,
            "a {took:?} plan never asked to leave the worker"
        );
    }
}
