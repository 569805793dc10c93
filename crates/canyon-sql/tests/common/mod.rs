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
