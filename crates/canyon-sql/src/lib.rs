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
//!    passed the text through [`parse::limits`]' gate (shape, memory, then depth once
//!    parsed) and ran sqlparser's MySQL dialect; [`plan::select::plan_select`] resolved `sbtest1` in the
//!    snapshot, bound `c` and `id` to column positions and `?` to parameter 0
//!    ([`plan::bind::Binder`]), and [`plan::access::choose_access`] turned `id = ?` into a
//!    point read of the primary key.
//! 4. The session's privilege check reads the account from the same snapshot
//!    (cached per catalog version) — MySQL's LOCK_grant read lock has no
//!    counterpart here.
//! 5. `Session::with_txn` opens a transaction: `canyon_txn::TxnSession::begin`
//!    allocates no id and writes no shared counter for a read-only transaction.
//! 6. `Transaction::begin_statement` takes the snapshot: one atomic load of the
//!    visible commit timestamp, published in the session's own GC slot.
//! 7. [`exec::select::run_select`] asks the access path for key ranges
//!    ([`plan::access::Access::key_ranges`]): the parameter is coerced to the key
//!    column's type and encoded memcomparably ([`types::encoding`]).
//! 8. `Transaction::get` reads the newest version from the Rows keyspace (one
//!    RocksDB point read through the [`canyon_storage::Storage`] trait); if it is
//!    newer than the snapshot, the History keyspace gives the visible version.
//! 9. The row is decoded ([`types::encoding::decode_row`]), the WHERE clause re-checked
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
//! Each folder is a layer; its `mod.rs` holds the layer's essay. A file
//! imports its own folder or the folders below it, never one above; files
//! may call each other in a circle only inside one folder, and that folder's
//! essay names the circle (both checked by `tests/layers.rs`). Where a lower
//! layer needs something of a higher one, the higher one hands an interface
//! down: a subquery's plan reaches the expression tree as
//! [`expr::SubqueryPlan`], its execution as [`expr::SubqueryRunner`].
//!
//! 1. [`types`]: values, column types, collations, date/time, key and row
//!    encoding, result-set shapes.
//! 2. [`catalog`]: catalog snapshots, statistics, privileges, variables,
//!    `information_schema`, and the instance ([`Engine`]).
//! 3. [`parse`]: statement text to AST, through the [`parse::limits`] gate.
//! 4. [`expr`]: bound expressions, evaluation, builtin functions.
//! 5. [`plan`]: binding expressions, SELECT planning, set operations, access
//!    paths, DML plans, EXPLAIN.
//! 6. [`exec`]: running plans: scans, writes, foreign-key actions.
//! 7. [`ddl`]: CREATE / ALTER / DROP, online schema change.
//! 8. [`binlog`]: a committed transaction's row changes (the executors'
//!    journal) and DDL as binary-log events.
//! 9. `session`: the session facade and statement dispatch ([`Session`]).
//!
//! # Not implemented yet
//! WITH RECURSIVE, window functions, LATERAL and parenthesised joins, multi-table
//! UPDATE / DELETE, correlated subqueries in UPDATE / DELETE with ORDER BY or
//! LIMIT, locking reads over
//! joins, the ALTER TABLE forms that
//! `alter` lists, partition selection (`t PARTITION (p0)`) and EXCHANGE
//! PARTITION (see `catalog::partition`) — each is refused
//! with MySQL error 1235, never silently accepted.

pub mod binlog;
pub mod catalog;
pub mod ddl;
pub mod exec;
pub mod expr;
pub mod parse;
pub mod plan;
mod session;
pub mod types;

// Paths of the flat layout that came before the layer folders, kept for the
// crates and tests that use them.
pub use catalog::{auth, stats};
pub use parse::limits;
pub use plan::access;
pub use plan::select as query;
pub use types::{collation, decimal, value};

pub use catalog::auth::{native_hash, AuthPlugin};
pub use catalog::binlog::StartAt;
pub use catalog::config::{
    AuthInfo, Durability, EngineConfig, IsolationLevel, Presentation,
    DEFAULT_STATEMENT_MEMORY_BUDGET, DEFAULT_STATEMENT_MEMORY_LIMIT,
};
pub use catalog::engine::Engine;
pub use ddl::alter::{AlterOp, ColumnPosition};
pub use session::{
    ApplyOutcome, Dump, ReplicaApplier, Session, SessionLockWait, LARGE_TEXT,
    MAX_PREPARED_STATEMENTS,
};
pub use types::charset::Charset;
pub use types::result::{charset, column_flags, Column, ColumnType, PreparedInfo, QueryResult};
pub use types::value::{Stamp, Value};
