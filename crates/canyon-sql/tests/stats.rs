//! Planner statistics (`canyon_sql::stats`): ANALYZE TABLE measures row counts
//! and distinct-prefix counts, DML keeps the row count current, the planner
//! picks the access path expected to read the fewest rows, and analyses survive
//! a restart.

mod common;

use canyon_sql::access::Target;
use canyon_sql::parse::{parse, Parsed};
use canyon_sql::plan::PlanContext;
use canyon_sql::query::plan_select;
use canyon_sql::stats::{analyze, Method};
use canyon_sql::{Engine, QueryResult, Session, Value};
use std::sync::Arc;
use std::time::Duration;

fn run(s: &mut Session, sql: &str) -> QueryResult {
    s.execute(sql, false)
        .pop()
        .expect("one result")
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The index (by name) or PRIMARY the single-table plan of `sql` reads.
fn chosen_key(e: &Arc<Engine>, sql: &str) -> String {
    let cat = e.catalog();
    let ctx = PlanContext::new(&cat, Some("st"), canyon_sql::collation::Collation::DEFAULT);
    let parsed = parse(sql).expect("parses");
    let Some(Parsed::Sql(stmt)) = parsed.first() else {
        panic!("not a statement")
    };
    let sqlparser::ast::Statement::Query(q) = stmt.as_ref() else {
        panic!("not a query")
    };
    let plan = plan_select(&ctx, q).expect("plans");
    let table = plan.table.as_ref().expect("single-table plan");
    if plan.access.full_scan {
        return "scan".into();
    }
    match plan.access.target {
        Target::Primary => "PRIMARY".into(),
        Target::Index(i) => table.def.indexes[i].name.clone(),
    }
}

fn setup() -> (Arc<Engine>, Session) {
    let e = common::engine(Duration::from_secs(5));
    let mut s = e.session(1, "root", "localhost");
    run(&mut s, "CREATE DATABASE st");
    run(&mut s, "USE st");
    // `flag` has 2 distinct values, `grp` 50: an equality on grp is 25 times
    // more selective, but both are one-column equalities of the same shape.
    run(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, flag INT NOT NULL, grp INT NOT NULL, \
         INDEX by_flag (flag), INDEX by_grp (grp))",
    );
    let values: Vec<String> = (1..=400)
        .map(|i| format!("({i}, {}, {})", i % 2, i % 50))
        .collect();
    run(
        &mut s,
        &format!("INSERT INTO t VALUES {}", values.join(", ")),
    );
    (e, s)
}

#[test]
fn analyze_reports_and_the_planner_uses_cardinality() {
    let (e, mut s) = setup();
    let q = "SELECT COUNT(*) FROM t WHERE flag = 1 AND grp = 7";
    // Without statistics the shapes tie and the first index wins.
    assert_eq!(chosen_key(&e, q), "by_flag");
    match run(&mut s, "ANALYZE TABLE t") {
        QueryResult::Rows { rows, columns, .. } => {
            let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
            assert_eq!(names, ["Table", "Op", "Msg_type", "Msg_text"]);
            assert_eq!(
                rows,
                vec![vec![
                    Value::str("st.t"),
                    Value::str("analyze"),
                    Value::str("status"),
                    Value::str("OK")
                ]]
            );
        }
        other => panic!("expected rows, got {other:?}"),
    }
    let t = e.catalog().table("st", "t").expect("table").clone();
    let ks = t.stats.analysis().expect("analysed");
    assert_eq!(ks.rows, 400);
    assert_eq!(ks.primary, vec![400]);
    assert_eq!(ks.indexes.len(), 2);
    assert_eq!(ks.indexes[0].1, vec![2], "flag has two values");
    assert_eq!(ks.indexes[1].1, vec![50], "grp has fifty");
    assert_eq!(
        chosen_key(&e, q),
        "by_grp",
        "the selective index wins with statistics"
    );
    // The answer does not depend on the path.
    match run(&mut s, q) {
        QueryResult::Rows { rows, .. } => assert_eq!(rows, vec![vec![Value::Int(8)]]),
        other => panic!("expected rows, got {other:?}"),
    }
    // DML keeps the row count current.
    run(&mut s, "DELETE FROM t WHERE id > 300");
    assert_eq!(t.stats.rows(), Some(300.0));
    run(&mut s, "INSERT INTO t VALUES (1000, 0, 0)");
    assert_eq!(t.stats.rows(), Some(301.0));
}

#[test]
fn analyze_errors_are_rows_and_unknown_tables_do_not_fail_the_statement() {
    let (_e, mut s) = setup();
    match run(&mut s, "ANALYZE TABLE t, nope") {
        QueryResult::Rows { rows, .. } => {
            // MySQL: the error row, then `status | Operation failed`.
            assert_eq!(rows.len(), 3);
            assert_eq!(rows[0][3], Value::str("OK"));
            assert_eq!(rows[1][2], Value::str("Error"));
            assert_eq!(rows[1][3], Value::str("Table 'st.nope' doesn't exist"));
            assert_eq!(rows[2][2], Value::str("status"));
            assert_eq!(rows[2][3], Value::str("Operation failed"));
        }
        other => panic!("expected rows, got {other:?}"),
    }
}

#[test]
fn many_changes_trigger_a_background_analysis() {
    let (e, mut s) = setup();
    let t = e.catalog().table("st", "t").expect("table").clone();
    assert!(t.stats.analysis().is_none());
    // 400 rows inserted so far; push past 10% + 1,000 modified rows.
    for chunk in 0..12 {
        let values: Vec<String> = (0..100)
            .map(|i| {
                let id = 10_000 + chunk * 100 + i;
                format!("({id}, {}, {})", id % 2, id % 50)
            })
            .collect();
        run(
            &mut s,
            &format!("INSERT INTO t VALUES {}", values.join(", ")),
        );
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while t.stats.analysis().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "no background analysis ran"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let ks = t.stats.analysis().expect("analysed");
    // Never analysed, the table counts its 400 loaded rows as modified too: the
    // analysis is due once modified rows exceed 10% of the rows + 1,000, which
    // first happens at 1,200 rows; it sees at least those.
    assert!(
        (1_200..=1_600).contains(&ks.rows),
        "analysed {} rows",
        ks.rows
    );
    assert_eq!(ks.indexes[1].1, vec![50]);
}

#[test]
fn only_updates_of_key_columns_count_towards_the_next_analysis() {
    let (e, mut s) = setup();
    run(
        &mut s,
        "CREATE TABLE u (id INT PRIMARY KEY, k INT NOT NULL, note INT NOT NULL, INDEX by_k (k))",
    );
    let values: Vec<String> = (1..=100).map(|i| format!("({i}, {i}, 0)")).collect();
    run(
        &mut s,
        &format!("INSERT INTO u VALUES {}", values.join(", ")),
    );
    run(&mut s, "ANALYZE TABLE u");
    let u = e.catalog().table("st", "u").expect("table").clone();
    assert_eq!(u.stats.modified(), 0, "ANALYZE resets the count");
    // A non-key column: no n_diff can change, however many rows are updated.
    for _ in 0..3 {
        run(&mut s, "UPDATE u SET note = note + 1");
    }
    assert_eq!(u.stats.modified(), 0);
    // An indexed column and the primary key count, row by row.
    run(&mut s, "UPDATE u SET k = k + 1000 WHERE id <= 30");
    assert_eq!(u.stats.modified(), 30);
    run(
        &mut s,
        "UPDATE u SET id = id + 1000, note = 1 WHERE id <= 5",
    );
    assert_eq!(u.stats.modified(), 35);
    // Inserts and deletes count as before.
    run(&mut s, "DELETE FROM u WHERE id > 90 AND id < 1000");
    assert_eq!(u.stats.modified(), 45);
}

#[test]
fn show_index_reports_cardinality_after_analysis() {
    let (_e, mut s) = setup();
    let cardinalities = |s: &mut Session| match run(s, "SHOW INDEX FROM t") {
        QueryResult::Rows { rows, .. } => rows
            .iter()
            .map(|r| (r[2].clone(), r[6].clone()))
            .collect::<Vec<_>>(),
        other => panic!("expected rows, got {other:?}"),
    };
    let before = cardinalities(&mut s);
    assert!(
        before.iter().all(|(_, c)| *c == Value::Int(0)),
        "{before:?}"
    );
    run(&mut s, "ANALYZE TABLE t");
    assert_eq!(
        cardinalities(&mut s),
        vec![
            (Value::str("PRIMARY"), Value::Int(400)),
            (Value::str("by_flag"), Value::Int(2)),
            (Value::str("by_grp"), Value::Int(50)),
        ]
    );
}

#[test]
fn analyses_survive_a_restart() {
    let storage = Arc::new(canyon_storage::MemoryStorage::new());
    let cfg = || common::config(Duration::from_secs(5));
    {
        let e = Engine::open(storage.clone(), cfg()).expect("engine opens");
        e.bootstrap_root("").expect("root account");
        let mut s = e.session(1, "root", "localhost");
        run(&mut s, "CREATE DATABASE st");
        run(&mut s, "USE st");
        run(
            &mut s,
            "CREATE TABLE t (id INT PRIMARY KEY, g INT, INDEX by_g (g))",
        );
        run(&mut s, "INSERT INTO t VALUES (1, 1), (2, 1), (3, 2)");
        run(&mut s, "ANALYZE TABLE t");
    }
    let e = Engine::open(storage, cfg()).expect("engine reopens");
    let t = e.catalog().table("st", "t").expect("table").clone();
    let ks = t.stats.analysis().expect("the analysis was loaded");
    assert_eq!((ks.rows, ks.primary.clone()), (3, vec![3]));
    assert_eq!(ks.indexes[0].1, vec![2]);
    assert_eq!(t.stats.rows(), Some(3.0));
}

/// Loads `st.big`: PRIMARY KEY (w, d, o) over 4 × 10 × 750 = 30,000 rows;
/// `by_c (c, w)` with 97 and 388 distinct prefixes (few enough to be counted
/// exactly by a sampled analysis); `by_e (e)` with about 7,900 values, which a
/// sampled analysis estimates from its runs.
fn load_big(s: &mut Session) {
    run(
        s,
        "CREATE TABLE big (w INT, d INT, o INT, c INT NOT NULL, e INT NOT NULL, \
         PRIMARY KEY (w, d, o), INDEX by_c (c, w), INDEX by_e (e))",
    );
    for w in 1..=4 {
        for d in 1..=10 {
            let values: Vec<String> = (1..=750)
                .map(|o| {
                    let e = ((w * 10 + d) * 750 + o) % 7_919;
                    format!("({w}, {d}, {o}, {}, {e})", o % 97)
                })
                .collect();
            run(s, &format!("INSERT INTO big VALUES {}", values.join(", ")));
        }
    }
}

/// Analyses `st.big` both ways and checks the sample against the scan: the
/// prefixes with few values exactly, the row count from the caller, and the
/// estimated index within 15%.
fn check_sampled_against_exact(e: &Arc<Engine>) {
    let t = e.catalog().table("st", "big").expect("table").clone();
    let session = e.txn_manager().session();
    let mut txn = session.begin(canyon_txn::IsolationLevel::ReadCommitted);
    let exact = analyze(&t, &mut txn, Method::Scan).expect("scan");
    let sampled = analyze(&t, &mut txn, Method::Sample { rows: 30_000 }).expect("sample");
    txn.rollback();
    assert_eq!(exact.rows, 30_000);
    assert_eq!(exact.primary, vec![4, 40, 30_000]);
    assert_eq!(exact.sampled, 0);
    assert_eq!(sampled.sampled, 1, "the analysis sampled: {sampled:?}");
    assert_eq!(sampled.rows, 30_000);
    assert_eq!(sampled.primary, exact.primary, "skip-scanned, and unique");
    assert_eq!(sampled.indexes[0], exact.indexes[0], "by_c, skip-scanned");
    assert_eq!(exact.indexes[0].1, vec![97, 388]);
    let (want, got) = (exact.indexes[1].1[0] as f64, sampled.indexes[1].1[0] as f64);
    assert!(want > 7_000.0, "by_e has {want} values");
    assert!(
        (got / want - 1.0).abs() < 0.15,
        "by_e: sampled {got} distinct values, exactly {want}"
    );
}

#[test]
fn a_sampled_analysis_matches_a_scan() {
    let (e, mut s) = setup();
    load_big(&mut s);
    check_sampled_against_exact(&e);
}

/// The same over RocksDB, where the runs start at split points estimated from
/// the SST files (small write buffers, so that the load reaches files).
#[test]
fn a_sampled_analysis_over_rocksdb_matches_a_scan() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let options = canyon_rocksdb::RocksOptions {
        write_buffer_bytes: 64 << 10,
        rows_write_buffer_bytes: 64 << 10,
        block_cache_bytes: 8 << 20,
        ..canyon_rocksdb::RocksOptions::default()
    };
    let storage = canyon_rocksdb::RocksStorage::open(dir.path(), &options).expect("RocksDB opens");
    let e = Engine::open(Arc::new(storage), common::config(Duration::from_secs(5)))
        .expect("engine opens");
    e.bootstrap_root("").expect("root account");
    let mut s = e.session(1, "root", "localhost");
    run(&mut s, "CREATE DATABASE st");
    run(&mut s, "USE st");
    load_big(&mut s);
    check_sampled_against_exact(&e);
}

/// A sampled analysis of a table much smaller than the row count it is given
/// finds too few keys in its runs and scans instead (exact rows, `sampled` 0).
#[test]
fn a_sample_too_thin_falls_back_to_a_scan() {
    let (e, _s) = setup();
    let t = e.catalog().table("st", "t").expect("table").clone();
    let session = e.txn_manager().session();
    let mut txn = session.begin(canyon_txn::IsolationLevel::ReadCommitted);
    let ks = analyze(&t, &mut txn, Method::Sample { rows: 1_000_000 }).expect("analysis");
    txn.rollback();
    assert_eq!((ks.rows, ks.sampled), (400, 0), "{ks:?}");
    assert_eq!(ks.indexes[1].1, vec![50]);
}
