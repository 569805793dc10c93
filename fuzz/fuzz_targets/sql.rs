//! The SQL front end: `data` (lossily UTF-8) as a statement, prepared and then
//! executed (multi-statement) in one session of an in-memory engine holding a
//! database with two small tables.
//!
//! The session turns a panic inside a statement into `Error::Internal` (1105,
//! canyon-sql `Session::guarded`) so one bad statement cannot take the server
//! down; here any `Error::Internal` is a bug, and the target panics so libFuzzer
//! reports the input. (libfuzzer-sys' panic hook aborts first in most cases:
//! either way the input is saved.) The stable counterpart is canyon-sql's
//! `tests/limits.rs` `front_end_fuzz_never_panics`.
//!
//! State carries over between inputs (a DROP TABLE input drops the table for the
//! next ones); every `RESET_EVERY` inputs the engine is opened afresh, which also
//! keeps the session under its prepared-statement cap. A crash that needs
//! earlier inputs shows as not reproducing alone: rerun with the crash's
//! neighbours from libFuzzer's log.
#![no_main]

use canyon_common::Error;
use canyon_sql::{Durability, Engine, EngineConfig, Session};
use canyon_storage::MemoryStorage;
use libfuzzer_sys::fuzz_target;
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

/// Inputs per engine and session (well under `MAX_PREPARED_STATEMENTS`).
const RESET_EVERY: u32 = 500;

const SETUP: &[&str] = &[
    "CREATE DATABASE d",
    "USE d",
    "CREATE TABLE t (id BIGINT UNSIGNED PRIMARY KEY, k INT NOT NULL DEFAULT 0, \
     c CHAR(10), d DATETIME, f DOUBLE, KEY k_1 (k))",
    "INSERT INTO t VALUES (1, 10, 'one', '2024-01-02 03:04:05', 0.5), \
     (2, 20, 'two', NULL, 1e20), (3, 10, 'three', '2024-01-02', -2.25), \
     (4, 40, NULL, NULL, NULL)",
    "CREATE TABLE u (a INT, b VARCHAR(20), m DECIMAL(10,2), KEY (b))",
    "INSERT INTO u VALUES (1, 'x', 1.50), (2, 'xy', -3), (3, NULL, NULL), (1, 'Z', 0)",
    // A runaway statement is stopped, not reported as a libFuzzer timeout.
    "SET SESSION max_execution_time = 2000",
];

struct State {
    session: Session,
    inputs: u32,
}

fn fresh() -> State {
    let config = EngineConfig {
        durability: Durability::SyncEveryCommit,
        lock_wait_timeout: Duration::from_millis(100),
        blocking_hook: None,
        version: "8.0.36-canyon-fuzz".into(),
        max_allowed_packet: 1 << 20,
        max_connections: 10,
        port: 3306,
        row_cache_bytes: 1 << 20,
        history_memory_bytes: 1 << 20,
        statement_memory_limit: canyon_sql::DEFAULT_STATEMENT_MEMORY_LIMIT,
        statement_memory_budget: canyon_sql::DEFAULT_STATEMENT_MEMORY_BUDGET,
        server_collation: canyon_sql::collation::Collation::DEFAULT,
        display_widths: false,
        presentation: Default::default(),
        local_infile: false,
        secure_file_priv: None,
        bulk_load: false,
        binlog: Default::default(),
    };
    let engine =
        Engine::open(Arc::new(MemoryStorage::new()), config).expect("in-memory engine opens");
    engine.bootstrap_root("").expect("root account");
    let mut session = engine.session(1, "root", "localhost");
    for sql in SETUP {
        for r in session.execute(sql, false) {
            r.expect("fuzz setup statement");
        }
    }
    State { session, inputs: 0 }
}

thread_local! {
    static STATE: RefCell<Option<State>> = const { RefCell::new(None) };
}

fn check(sql: &str, r: Result<(), Error>) {
    if let Err(Error::Internal(what)) = r {
        panic!("internal error (a bug) on {sql:?}: {what}");
    }
}

fuzz_target!(|data: &[u8]| {
    let sql = String::from_utf8_lossy(data);
    STATE.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_none_or(|s| s.inputs >= RESET_EVERY) {
            *slot = Some(fresh());
        }
        let state = slot.as_mut().expect("just set");
        state.inputs += 1;
        check(&sql, state.session.prepare(&sql).map(|_| ()));
        for r in state.session.execute(&sql, true) {
            check(&sql, r.map(|_| ()));
        }
    });
});
