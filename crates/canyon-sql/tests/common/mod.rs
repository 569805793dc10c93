//! Shared setup of the engine-level tests: an engine on `MemoryStorage` with a
//! root account, as the server would open it.

#![allow(dead_code)] // each test file uses part of this

use canyon_common::Error;
use canyon_sql::{Durability, Engine, EngineConfig, QueryResult, Session, Value};
use canyon_storage::MemoryStorage;
use std::sync::Arc;
use std::time::Duration;

/// The engine configuration of the tests: durable commits, no blocking hook.
pub fn config(lock_wait_timeout: Duration) -> EngineConfig {
    EngineConfig {
        durability: Durability::SyncEveryCommit,
        lock_wait_timeout,
        blocking_hook: None,
        version: "8.0.36-canyon-test".into(),
        max_allowed_packet: 64 << 20,
        max_connections: 100,
        port: 3306,
        row_cache_bytes: 1 << 20,
        history_memory_bytes: 1 << 20,
        statement_memory_limit: canyon_sql::DEFAULT_STATEMENT_MEMORY_LIMIT,
        statement_memory_budget: canyon_sql::DEFAULT_STATEMENT_MEMORY_BUDGET,
        server_collation: canyon_sql::collation::Collation::DEFAULT,
        display_widths: false,
        presentation: Default::default(),
        local_infile: false,
        bulk_load: true,
        binlog: Default::default(),
        secure_file_priv: None,
    }
}

/// An engine on `storage` (opened again on the same storage: a restart), with
/// a 5-second lock wait timeout; no account is created.
pub fn open(storage: &Arc<MemoryStorage>) -> Arc<Engine> {
    Engine::open(storage.clone(), config(Duration::from_secs(5))).expect("engine opens")
}

/// A fresh in-memory engine with `root` (no password) bootstrapped.
pub fn engine(lock_wait_timeout: Duration) -> Arc<Engine> {
    let e = Engine::open(Arc::new(MemoryStorage::new()), config(lock_wait_timeout))
        .expect("engine opens");
    e.bootstrap_root("").expect("root account");
    e
}

/// Runs one statement and returns its result.
pub fn run(s: &mut Session, sql: &str) -> Result<QueryResult, Error> {
    s.execute(sql, false).pop().expect("one result")
}

/// Runs one statement that must succeed.
pub fn ok(s: &mut Session, sql: &str) {
    run(s, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// Runs a query that must succeed; its rows as displayed text.
pub fn rows(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
    match run(s, sql).unwrap_or_else(|e| panic!("{sql}: {e}")) {
        QueryResult::Rows { rows, .. } => rows
            .iter()
            .map(|r| r.iter().map(Value::to_display).collect())
            .collect(),
        other => panic!("{sql}: expected rows, got {other:?}"),
    }
}

/// An engine with a 10-second lock wait timeout whose root session ran
/// `setup` (statements that must succeed).
pub fn engine_with(setup: &[&str]) -> Arc<Engine> {
    let e = engine(Duration::from_secs(10));
    let mut s = e.session(1, "root", "localhost");
    for sql in setup {
        ok(&mut s, sql);
    }
    e
}

/// A root session on database `db`; `impatient` ones give up a lock wait
/// after a second (what [`blocked`] observes).
pub fn session_on(e: &Arc<Engine>, db: &str, id: u32, impatient: bool) -> Session {
    let mut s = e.session(id, "root", "localhost");
    ok(&mut s, &format!("USE {db}"));
    if impatient {
        ok(&mut s, "SET innodb_lock_wait_timeout = 1");
    }
    s
}

/// Asserts that `sql`, run by an impatient session, times out on a lock.
pub fn blocked(s: &mut Session, sql: &str) {
    match run(s, sql) {
        Err(Error::LockWaitTimeout) => {}
        other => panic!("{sql} should wait for a lock and time out, got {other:?}"),
    }
}

/// Asserts that `sql` runs without waiting for a lock.
pub fn free(s: &mut Session, sql: &str) {
    run(s, sql).unwrap_or_else(|e| panic!("{sql} should not be blocked: {e:?}"));
}

/// Two transactions that each wait for the other: `a` runs `a_sql` (which
/// waits for `b`) in a thread, then `b` runs `b_sql`, which closes the
/// cycle. Asserts that `a`'s statement and COMMIT succeed once `b` is rolled
/// back, and returns `b_sql`'s outcome (the caller checks it is the 1213).
pub fn second_closes_a_deadlock(
    a: &mut Session,
    a_sql: &str,
    b: &mut Session,
    b_sql: &str,
) -> Result<QueryResult, Error> {
    std::thread::scope(|sc| {
        let ha = sc.spawn(|| (run(a, a_sql), run(a, "COMMIT")));
        // Long enough for `a` to be queued before `b` asks.
        std::thread::sleep(Duration::from_millis(200));
        let rb = run(b, b_sql);
        if rb.is_err() {
            ok(b, "ROLLBACK");
        }
        let (ra, ca) = ha.join().expect("a's thread");
        ra.unwrap_or_else(|e| panic!("{a_sql} goes on once b is rolled back: {e:?}"));
        ca.unwrap_or_else(|e| panic!("a commits: {e:?}"));
        rb
    })
}
