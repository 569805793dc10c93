//! Metadata through the engine API: information_schema's privilege filtering and
//! its behaviour on a 10,000-table schema, the process list, KILL QUERY of a
//! running statement and of a lock wait (from a second session, on threads),
//! KILL permissions, and max_execution_time.

mod common;

use canyon_common::Error;
use canyon_sql::{Engine, QueryResult, Session, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

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

fn scalar(s: &mut Session, sql: &str) -> String {
    rows(s, sql)[0][0].clone()
}

/// An engine with database `m`: `acc` (2 rows) and `big` (300 rows, enough
/// for a three-way cross join of 27 million rows).
fn engine() -> Arc<Engine> {
    let e = common::engine(Duration::from_secs(20));
    let mut s = e.session(1, "root", "localhost");
    for sql in [
        "CREATE DATABASE m",
        "USE m",
        "CREATE TABLE acc (id INT PRIMARY KEY, bal INT NOT NULL)",
        "INSERT INTO acc VALUES (1, 100), (2, 100)",
        "CREATE TABLE big (id INT PRIMARY KEY)",
    ] {
        run(&mut s, sql).expect("setup succeeds");
    }
    let values: Vec<String> = (0..300).map(|i| format!("({i})")).collect();
    run(
        &mut s,
        &format!("INSERT INTO big VALUES {}", values.join(",")),
    )
    .expect("rows");
    e
}

fn session(e: &Arc<Engine>, id: u32) -> Session {
    let mut s = e.session(id, "root", "localhost");
    run(&mut s, "USE m").expect("USE succeeds");
    s
}

const LONG_JOIN: &str = "SELECT COUNT(*) FROM big a, big b, big c WHERE a.id + b.id + c.id >= 0";

/// Waits until connection `id` shows a running statement in the process list.
fn wait_running(observer: &mut Session, id: u32, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let sql = format!(
        "SELECT COUNT(*) FROM information_schema.processlist WHERE id = {id} AND command = 'Query' AND info LIKE '{what}%'"
    );
    while scalar(observer, &sql) != "1" {
        assert!(
            Instant::now() < deadline,
            "connection {id} never ran {what}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn kill_query_stops_a_running_join_and_keeps_the_transaction() {
    let e = engine();
    let mut victim = session(&e, 2);
    let mut killer = session(&e, 3);
    run(&mut victim, "BEGIN").expect("begin");
    run(&mut victim, "INSERT INTO acc VALUES (3, 1)").expect("insert");
    let t = std::thread::spawn(move || {
        let started = Instant::now();
        let r = run(&mut victim, LONG_JOIN);
        (r, started.elapsed(), victim)
    });
    wait_running(&mut killer, 2, "SELECT COUNT(*) FROM big");
    // SHOW PROCESSLIST shows the same (Info cut at 100 characters without FULL).
    let list = rows(&mut killer, "SHOW PROCESSLIST");
    let row = list.iter().find(|r| r[0] == "2").expect("victim listed");
    assert_eq!(row[4], "Query");
    assert_eq!(row[7], LONG_JOIN[..LONG_JOIN.len().min(100)]);
    run(&mut killer, "KILL QUERY 2").expect("root may kill");
    let (r, took, mut victim) = t.join().expect("victim thread");
    assert!(matches!(r, Err(Error::Interrupted)), "{r:?} after {took:?}");
    // A statement rollback only: the transaction and its insert live on.
    assert!(victim.in_transaction());
    assert_eq!(scalar(&mut victim, "SELECT COUNT(*) FROM acc"), "3");
    // The KILL was for that statement only.
    assert_eq!(scalar(&mut victim, "SELECT COUNT(*) FROM big"), "300");
    run(&mut victim, "COMMIT").expect("commit");
    assert_eq!(scalar(&mut killer, "SELECT COUNT(*) FROM acc"), "3");
}

#[test]
fn kill_query_ends_a_lock_wait() {
    let e = engine();
    let mut holder = session(&e, 2);
    let mut waiter = session(&e, 3);
    let mut killer = session(&e, 4);
    run(&mut holder, "BEGIN").expect("begin");
    run(&mut holder, "UPDATE acc SET bal = 1 WHERE id = 1").expect("lock row 1");
    run(&mut waiter, "BEGIN").expect("begin");
    run(&mut waiter, "UPDATE acc SET bal = 7 WHERE id = 2").expect("own row");
    let t = std::thread::spawn(move || {
        let started = Instant::now();
        let r = run(&mut waiter, "UPDATE acc SET bal = 2 WHERE id = 1");
        (r, started.elapsed(), waiter)
    });
    wait_running(&mut killer, 3, "UPDATE acc SET bal = 2");
    std::thread::sleep(Duration::from_millis(50)); // let it queue on the lock
    run(&mut killer, "KILL QUERY 3").expect("kill");
    let (r, took, mut waiter) = t.join().expect("waiter thread");
    assert!(matches!(r, Err(Error::Interrupted)), "{r:?}");
    assert!(
        took < Duration::from_secs(10),
        "ended by the KILL, not by the 20 s lock wait timeout: {took:?}"
    );
    // The transaction stays open with its earlier write.
    assert!(waiter.in_transaction());
    run(&mut holder, "COMMIT").expect("holder commits");
    run(&mut waiter, "UPDATE acc SET bal = 2 WHERE id = 1").expect("retry gets the lock");
    run(&mut waiter, "COMMIT").expect("commit");
    assert_eq!(
        rows(&mut killer, "SELECT bal FROM acc ORDER BY id"),
        vec![vec!["2".to_string()], vec!["7".to_string()]]
    );
}

#[test]
fn kill_connection_marks_the_session_and_runs_the_hook() {
    let e = engine();
    let mut victim = session(&e, 2);
    let mut killer = session(&e, 3);
    let woken = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let w = woken.clone();
    victim.set_kill_hook(Box::new(move || {
        w.store(true, std::sync::atomic::Ordering::SeqCst)
    }));
    run(&mut killer, "KILL 2").expect("kill");
    assert!(woken.load(std::sync::atomic::Ordering::SeqCst), "hook ran");
    assert!(victim.killed());
    assert!(matches!(
        run(&mut victim, "SELECT 1"),
        Err(Error::Interrupted)
    ));
    drop(victim);
    assert!(matches!(
        run(&mut killer, "KILL 2"),
        Err(Error::UnknownThread(2))
    ));
}

#[test]
fn kill_needs_ownership_or_global_privileges() {
    let e = engine();
    let mut root = session(&e, 2);
    run(&mut root, "CREATE USER 'u'@'%' IDENTIFIED BY 'pw'").expect("user");
    run(&mut root, "GRANT ALL ON m.* TO 'u'@'%'").expect("grant");
    let mut u1 = e.session(10, "u", "localhost");
    let u2 = e.session(11, "u", "localhost");
    assert!(matches!(
        run(&mut u1, "KILL QUERY 2"),
        Err(Error::KillDenied(2))
    ));
    // u sees only its own sessions.
    assert_eq!(
        rows(
            &mut u1,
            "SELECT id FROM information_schema.processlist ORDER BY id"
        ),
        vec![vec!["10".to_string()], vec!["11".to_string()]]
    );
    assert_eq!(rows(&mut u1, "SHOW PROCESSLIST").len(), 2);
    // root sees everyone.
    assert!(rows(&mut root, "SHOW FULL PROCESSLIST").len() >= 3);
    run(&mut u1, "KILL 11").expect("own user's session");
    assert!(u2.killed());
    run(&mut root, "KILL 10").expect("root kills anyone");
    assert!(u1.killed());
}

#[test]
fn information_schema_lists_only_what_the_account_may_use() {
    let e = engine();
    let mut root = session(&e, 2);
    for sql in [
        "CREATE DATABASE secret",
        "CREATE TABLE secret.s (id INT PRIMARY KEY)",
        "CREATE USER 'u'@'%' IDENTIFIED BY 'pw'",
        "GRANT ALL ON m.* TO 'u'@'%'",
    ] {
        run(&mut root, sql).expect("setup succeeds");
    }
    let mut u = e.session(3, "u", "localhost");
    assert_eq!(
        rows(
            &mut u,
            "SELECT schema_name FROM information_schema.schemata ORDER BY 1"
        ),
        vec![
            vec!["information_schema".to_string()],
            vec!["m".to_string()],
            // MySQL 8 shows it to every account (some of its tables, such
            // as session_status, every account may read).
            vec!["performance_schema".to_string()],
            vec!["sys".to_string()]
        ]
    );
    assert_eq!(
        rows(&mut u, "SHOW DATABASES"),
        vec![
            vec!["information_schema".to_string()],
            vec!["m".to_string()],
            // MySQL 8 shows it to every account (some of its tables, such
            // as session_status, every account may read).
            vec!["performance_schema".to_string()],
            vec!["sys".to_string()]
        ]
    );
    assert_eq!(
        scalar(
            &mut u,
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'secret'"
        ),
        "0"
    );
    assert_eq!(
        scalar(&mut u, "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema NOT IN ('information_schema', 'performance_schema', 'sys')"),
        "3"
    );
    assert_eq!(
        scalar(
            &mut root,
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'secret'"
        ),
        "1"
    );
    // Reading information_schema needs no grant; writing it is refused.
    run(&mut u, "USE information_schema").expect("anyone may use it");
    assert!(matches!(
        run(&mut u, "DELETE FROM tables"),
        Err(Error::DbAccessDenied { ref user, ref db, .. }) if user == "u" && db == "information_schema"
    ));
}

/// Equalities and IN lists on TABLE_SCHEMA / TABLE_NAME reach the generator
/// (EXPLAIN says how much it was told), whatever the case of the names.
#[test]
fn filters_are_pushed_into_the_generator() {
    let e = engine();
    let mut s = session(&e, 2);
    let plan =
        |s: &mut Session, sql: &str| rows(s, &format!("EXPLAIN FORMAT=TREE {sql}"))[0][0].clone();
    let p = plan(&mut s, "SELECT table_rows FROM information_schema.TABLES WHERE table_schema = 'm' AND TABLE_NAME = 'acc'");
    assert!(
        p.contains("generated from the catalog: named tables"),
        "{p}"
    );
    let p = plan(
        &mut s,
        "SELECT column_name FROM information_schema.columns WHERE table_schema IN ('m', 'x')",
    );
    assert!(
        p.contains("generated from the catalog: named schemas"),
        "{p}"
    );
    let p = plan(
        &mut s,
        "SELECT column_name FROM information_schema.columns WHERE table_schema LIKE 'm%'",
    );
    assert!(
        p.contains("generated from the catalog)"),
        "a LIKE is not pushed: {p}"
    );
    // An inner source's own ON conjuncts are pushed too.
    let p = plan(&mut s, "SELECT c.column_name FROM acc a JOIN information_schema.columns c ON c.table_schema = 'm' AND c.table_name = 'acc' AND c.ordinal_position = a.id");
    assert!(
        p.contains("generated from the catalog: named tables"),
        "{p}"
    );
    assert_eq!(
        rows(&mut s, "SELECT a.id, c.column_name FROM acc a LEFT JOIN information_schema.columns c ON c.table_schema = 'm' AND c.table_name = 'acc' AND c.ordinal_position = a.id + 1 ORDER BY a.id"),
        vec![vec!["1".to_string(), "bal".to_string()], vec!["2".to_string(), "NULL".to_string()]]
    );
    assert_eq!(
        s.field_list("acc").expect("COM_FIELD_LIST").len(),
        2,
        "COM_FIELD_LIST of a base table"
    );
    run(&mut s, "USE information_schema").expect("use");
    let fields = s
        .field_list("Tables")
        .expect("COM_FIELD_LIST of a system table");
    assert_eq!(fields[2].name, "TABLE_NAME");
    run(&mut s, "USE m").expect("use");
    // A LEFT JOIN whose pushed ON names no table keeps its outer rows.
    assert_eq!(
        rows(&mut s, "SELECT a.id, t.table_name FROM acc a LEFT JOIN information_schema.tables t ON t.table_schema = 'm' AND t.table_name = 'nope' ORDER BY a.id"),
        vec![vec!["1".to_string(), "NULL".to_string()], vec!["2".to_string(), "NULL".to_string()]]
    );
}

/// SHOW CREATE DATABASE re-creates the database (what mariadb-dump replays).
#[test]
fn show_create_database_round_trips() {
    let e = engine();
    let mut s = session(&e, 2);
    for if_not_exists in ["", "IF NOT EXISTS "] {
        let ddl = rows(&mut s, &format!("SHOW CREATE DATABASE {if_not_exists}m"))[0][1].clone();
        run(&mut s, "DROP DATABASE m").expect("drop");
        run(&mut s, &ddl).unwrap_or_else(|e| panic!("{ddl}: {e}"));
        assert_eq!(
            rows(&mut s, "SHOW DATABASES LIKE 'm'"),
            vec![vec!["m".to_string()]]
        );
    }
}

/// SHOW CREATE TABLE prints foreign keys as MySQL does, and its text
/// re-creates them: the constraint acts the same after the round trip.
#[test]
fn show_create_table_round_trips_foreign_keys() {
    let e = engine();
    let mut s = session(&e, 2);
    for sql in [
        "CREATE TABLE p (id INT PRIMARY KEY, code VARCHAR(10), UNIQUE KEY uc (code))",
        "CREATE TABLE ch (id INT PRIMARY KEY, a INT, b VARCHAR(10) REFERENCES p (code), \
         KEY ka (a, id), FOREIGN KEY (a) REFERENCES p (id) ON DELETE RESTRICT ON UPDATE CASCADE)",
        "INSERT INTO p VALUES (1, 'x')",
    ] {
        run(&mut s, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let ddl = rows(&mut s, "SHOW CREATE TABLE ch")[0][1].clone();
    assert_eq!(
        ddl,
        "CREATE TABLE `ch` (\n  `id` int NOT NULL,\n  `a` int DEFAULT NULL,\n  \
         `b` varchar(10) DEFAULT NULL,\n  PRIMARY KEY (`id`),\n  KEY `ka` (`a`,`id`),\n  \
         KEY `b` (`b`),\n  \
         CONSTRAINT `ch_ibfk_1` FOREIGN KEY (`b`) REFERENCES `p` (`code`),\n  \
         CONSTRAINT `ch_ibfk_2` FOREIGN KEY (`a`) REFERENCES `p` (`id`) ON DELETE RESTRICT ON UPDATE CASCADE\n\
         ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
    );
    run(&mut s, "DROP TABLE ch").expect("drop");
    run(&mut s, &ddl).unwrap_or_else(|e| panic!("{ddl}: {e}"));
    assert_eq!(rows(&mut s, "SHOW CREATE TABLE ch")[0][1], ddl);
    run(&mut s, "INSERT INTO ch VALUES (1, 1, 'x')").expect("insert");
    let r = run(&mut s, "INSERT INTO ch VALUES (2, 2, NULL)");
    assert!(
        matches!(r, Err(Error::ForeignKey { code: 1452, .. })),
        "{r:?}"
    );
    run(&mut s, "UPDATE p SET id = 10").expect("cascade");
    assert_eq!(scalar(&mut s, "SELECT a FROM ch"), "10");
    let r = run(&mut s, "DELETE FROM p");
    assert!(
        matches!(r, Err(Error::ForeignKey { code: 1451, .. })),
        "{r:?}"
    );
}

/// Foreign keys survive a restart of the engine (they are part of the
/// persisted table definition) and are enforced after it.
#[test]
fn foreign_keys_persist_across_restart() {
    let storage = Arc::new(canyon_storage::MemoryStorage::new());
    {
        let e = common::open(&storage);
        e.bootstrap_root("").expect("root account");
        let mut s = e.session(1, "root", "localhost");
        for sql in [
            "CREATE DATABASE r",
            "USE r",
            "CREATE TABLE p (id INT PRIMARY KEY)",
            "CREATE TABLE c (id INT PRIMARY KEY, pid INT, CONSTRAINT c_p FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE)",
            "INSERT INTO p VALUES (1), (2)",
            "INSERT INTO c VALUES (1, 1), (2, 2)",
        ] {
            run(&mut s, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
    }
    let e = common::open(&storage);
    let mut s = e.session(1, "root", "localhost");
    run(&mut s, "USE r").expect("use");
    let r = run(&mut s, "INSERT INTO c VALUES (3, 3)");
    assert!(
        matches!(r, Err(Error::ForeignKey { code: 1452, .. })),
        "{r:?}"
    );
    run(&mut s, "DELETE FROM p WHERE id = 1").expect("cascade");
    assert_eq!(
        rows(&mut s, "SELECT id FROM c"),
        vec![vec!["2".to_string()]]
    );
    let r = run(&mut s, "DROP TABLE p");
    assert!(
        matches!(r, Err(Error::ForeignKey { code: 3730, .. })),
        "{r:?}"
    );
}

#[test]
fn max_execution_time_stops_a_select() {
    let e = engine();
    let mut s = session(&e, 2);
    run(&mut s, "SET max_execution_time = 50").expect("set");
    let started = Instant::now();
    let r = run(&mut s, LONG_JOIN);
    assert!(matches!(r, Err(Error::QueryTimeout)), "{r:?}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    // Writes are not limited (MySQL: SELECT only), and 0 lifts the limit.
    run(&mut s, "UPDATE acc SET bal = bal + 1").expect("update");
    run(&mut s, "SET max_execution_time = 0").expect("set");
    assert_eq!(scalar(&mut s, "SELECT COUNT(*) FROM big a, big b"), "90000");
}

/// 10,000 tables: filtered information_schema queries touch only the named
/// tables, unfiltered ones stay linear. No timing assertions (shared CI
/// machines); the times are printed for the record.
#[test]
fn ten_thousand_tables() {
    const N: usize = 10_000;
    let e = common::engine(Duration::from_secs(10));
    let mut s = e.session(1, "root", "localhost");
    run(&mut s, "CREATE DATABASE many").expect("db");
    run(&mut s, "USE many").expect("use");
    let started = Instant::now();
    for i in 0..N {
        run(
            &mut s,
            &format!(
                "CREATE TABLE t{i:05} (id INT PRIMARY KEY, name VARCHAR(20), n BIGINT, KEY kn (n))"
            ),
        )
        .expect("create");
    }
    eprintln!("created {N} tables in {:?}", started.elapsed());
    let mut timed = |sql: &str| {
        let t = Instant::now();
        let r = rows(&mut s, sql);
        eprintln!(
            "{:>10.3} ms  {} rows  {sql}",
            t.elapsed().as_secs_f64() * 1e3,
            r.len()
        );
        r
    };
    let one = timed("SELECT table_name, table_rows FROM information_schema.tables WHERE table_schema = 'many' AND table_name = 't04321'");
    assert_eq!(one, vec![vec!["t04321".to_string(), "0".to_string()]]);
    let cols = timed("SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'many' AND table_name = 't09999' ORDER BY ordinal_position");
    assert_eq!(cols.len(), 3);
    assert_eq!(cols[2], vec!["n".to_string(), "bigint".to_string()]);
    let all = timed("SELECT table_name FROM information_schema.tables WHERE table_schema = 'many'");
    assert_eq!(all.len(), N);
    let count = timed("SELECT COUNT(*) FROM information_schema.tables");
    assert_eq!(
        count[0][0],
        (N + ["information_schema", "performance_schema", "sys"]
            .iter()
            .map(|d| canyon_sql::catalog::infoschema::system_tables(d).len())
            .sum::<usize>())
        .to_string(),
        "user tables and the system schemas' own tables"
    );
    let allcols =
        timed("SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = 'many'");
    assert_eq!(allcols[0][0], (3 * N).to_string());
    let like = timed("SELECT COUNT(*) FROM information_schema.columns WHERE table_name LIKE 't0000%' AND column_name = 'id'");
    assert_eq!(like[0][0], "10");
    let join = timed("SELECT COUNT(*) FROM information_schema.tables t JOIN information_schema.statistics s ON s.table_schema = t.table_schema AND s.table_name = t.table_name WHERE t.table_schema = 'many'");
    assert_eq!(join[0][0], (2 * N).to_string());
    let status = timed("SHOW TABLE STATUS LIKE 't0999%'");
    assert_eq!(status.len(), 10);
    // Placeholders are pushed into the generator as well.
    let p = s
        .prepare("SELECT table_name FROM information_schema.tables WHERE table_schema = ? AND table_name = ?")
        .expect("prepare");
    let t = Instant::now();
    let r = s
        .execute_prepared(p.id, &[Value::str("many"), Value::str("t00007")])
        .expect("execute");
    eprintln!(
        "{:>10.3} ms  prepared, schema and name bound",
        t.elapsed().as_secs_f64() * 1e3
    );
    let QueryResult::Rows { rows, .. } = r else {
        panic!("rows expected");
    };
    assert_eq!(rows, vec![vec![Value::str("t00007")]]);
}

/// Collations are part of the persisted catalog: a database's default, a
/// table's and a column's survive a restart, and so does what they mean (a
/// `_ci` UNIQUE key still refuses a case variant).
#[test]
fn collations_survive_a_restart() {
    use canyon_storage::MemoryStorage;
    let storage = Arc::new(MemoryStorage::new());
    let e = common::open(&storage);
    e.bootstrap_root("").expect("root account");
    let mut s = e.session(1, "root", "localhost");
    for sql in [
        "CREATE DATABASE rc DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
        "CREATE TABLE rc.t (id INT PRIMARY KEY, a VARCHAR(9), b VARCHAR(9) COLLATE utf8mb4_bin, UNIQUE KEY ua (a))",
        "INSERT INTO rc.t VALUES (1, 'x', 'x')",
    ] {
        s.execute(sql, false)
            .pop()
            .expect("one result")
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    drop(s);
    drop(e);
    let e = common::open(&storage);
    let mut s = e.session(2, "root", "localhost");
    let rows = |s: &mut canyon_sql::Session, sql: &str| match s.execute(sql, false).pop() {
        Some(Ok(canyon_sql::QueryResult::Rows { rows, .. })) => rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|v| v.to_display())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>(),
        other => panic!("{sql}: {other:?}"),
    };
    assert_eq!(
        rows(
            &mut s,
            "SELECT column_name, collation_name FROM information_schema.columns \
             WHERE table_schema = 'rc' AND collation_name IS NOT NULL ORDER BY 1"
        ),
        ["a utf8mb4_general_ci", "b utf8mb4_bin"]
    );
    assert_eq!(
        rows(&mut s, "SELECT default_collation_name FROM information_schema.schemata WHERE schema_name = 'rc'"),
        ["utf8mb4_general_ci"]
    );
    assert!(matches!(
        s.execute("INSERT INTO rc.t VALUES (2, 'X', 'y')", false)
            .pop(),
        Some(Err(canyon_common::Error::DuplicateEntry { .. }))
    ));
    assert_eq!(
        rows(&mut s, "SELECT id FROM rc.t WHERE b = 'X'"),
        Vec::<String>::new()
    );
}
