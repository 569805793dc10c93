//! Canyon's SQL engine: catalog, parse, bind, plan, execute — usable in-process,
//! with no network. The server (`canyon-server`) wraps it; tests call it directly.
//!
//! # One statement, end to end
//! A point select from sysbench, `SELECT c FROM sbtest1 WHERE id = ?`, executed as
//! a prepared statement with autocommit on:
//!
//! 1. The server reads a COM_STMT_EXECUTE packet, decodes the parameter values and
//!    calls [`Session::execute_prepared`] on the connection's session.
//! 2. The session pins the published catalog version (one store into its own
//!    pin, so an online ALTER knows when no statement uses an older one; see
//!    `alter`), loads the catalog snapshot — one `ArcSwap::load`, no lock
//!    ([`Engine::catalog`]) — and, if the catalog version is the one the statement
//!    was planned against, reuses the cached [`plan::Plan`]; otherwise it re-plans.
//! 3. (At PREPARE time) [`parse::parse_with`] expanded `/*! ... */` comments,
//!    passed the text through [`limits`]' gate (shape, memory, then depth once
//!    parsed) and ran sqlparser's MySQL dialect; [`query::plan_select`] resolved `sbtest1` in the
//!    snapshot, bound `c` and `id` to column positions and `?` to parameter 0
//!    ([`expr::Binder`]), and [`access::choose_access`] turned `id = ?` into a
//!    point read of the primary key.
//! 4. The session's privilege check reads the account from the same snapshot
//!    (cached per catalog version) — MySQL's LOCK_grant read lock has no
//!    counterpart here.
//! 5. `Session::with_txn` opens a transaction: `canyon_txn::TxnSession::begin`
//!    allocates no id and writes no shared counter for a read-only transaction.
//! 6. `Transaction::begin_statement` takes the snapshot: one atomic load of the
//!    visible commit timestamp, published in the session's own GC slot.
//! 7. [`select::run_select`] asks the access path for key ranges
//!    ([`access::Access::key_ranges`]): the parameter is coerced to the key
//!    column's type and encoded memcomparably ([`encoding`]).
//! 8. `Transaction::get` reads the newest version from the Rows keyspace (one
//!    RocksDB point read through the [`canyon_storage::Storage`] trait); if it is
//!    newer than the snapshot, the History keyspace gives the visible version.
//! 9. The row is decoded ([`encoding::decode_row`]), the WHERE clause re-checked
//!    ([`expr::eval_predicate`]) and the projection evaluated.
//! 10. The transaction commits: with no writes, that only clears the snapshot slot.
//! 11. The session returns [`QueryResult::Rows`]; the server encodes a binary
//!     result set and flushes it with one write.
//!
//! A write (`UPDATE ... WHERE id = ?`) differs from step 7: it locks the row in
//! the sharded lock table, reads the latest committed version, buffers the new one
//! in the transaction, and at COMMIT writes one atomic batch and waits for the
//! grouped WAL sync (see `canyon_txn`).
//!
//! # Layers inside this crate (bottom up)
//! [`limits`] (what a statement may cost: stack depth, memory; every text
//! passes it in [`parse`]) → [`value`] (values, MySQL comparison rules) → [`types`] (column types, strict
//! coercion) → [`encoding`] (keys, rows) → [`catalog`] (snapshots), [`stats`]
//! (row counts, distinct-prefix counts) → [`expr`], [`functions`], [`datetime`]
//! (binding, evaluation) → [`access`] (access paths), [`query`] (SELECT: frames,
//! join order, subqueries), [`plan`] (INSERT / UPDATE / DELETE) → [`select`],
//! [`exec`] (execution, with [`foreign`]: what FOREIGN KEY constraints check
//! and cascade on each written row) → `session`, `engine` ([`Session`],
//! [`Engine`]: the public surface). Beside them: [`infoschema`] (the `information_schema` tables,
//! generated from a catalog snapshot) and [`procs`] (the process registry that
//! SHOW PROCESSLIST reads and KILL writes).
//!
//! # Not implemented yet
//! WITH RECURSIVE, window functions, LATERAL and parenthesised joins, multi-table
//! UPDATE / DELETE, correlated subqueries in UPDATE / DELETE, locking reads over
//! joins, the ALTER TABLE forms that
//! `alter` lists — each is refused
//! with MySQL error 1235, never silently accepted.

pub mod access;
mod alter;
mod api;
pub mod auth;
pub mod catalog;
pub mod collation;
pub mod datetime;
pub mod ddl;
pub mod encoding;
mod engine;
pub mod exec;
pub mod explain;
pub mod expr;
pub mod foreign;
pub mod functions;
pub mod infoschema;
pub mod limits;
pub mod parse;
pub mod plan;
pub mod privileges;
pub mod procs;
pub mod query;
pub mod select;
mod session;
pub mod setop;
pub mod stats;
pub mod status;
pub mod types;
pub mod value;
mod vars;

pub use alter::{AlterOp, ColumnPosition};
pub use api::{
    charset, column_flags, AuthInfo, Column, ColumnType, Durability, EngineConfig, IsolationLevel,
    PreparedInfo, QueryResult, DEFAULT_STATEMENT_MEMORY_BUDGET, DEFAULT_STATEMENT_MEMORY_LIMIT,
};
pub use auth::{native_hash, AuthPlugin};
pub use engine::Engine;
pub use session::{Session, LARGE_TEXT, MAX_PREPARED_STATEMENTS};
pub use value::Value;
