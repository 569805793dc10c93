//! Layer 8, **session**: one client's session and the statement dispatcher.
//!
//! A client session: current database, variables, the open transaction,
//! prepared statements — and the dispatcher that runs each statement through
//! the layers below (parse, plan, exec, ddl). This is the top layer: it
//! imports all of them and nothing imports it.
//!
//! # Where things are
//! - [`state`]: [`Session`] and the state its statements read;
//! - [`request`]: the requests the server makes (a query text, a prepare, an
//!   execution), each guarded, counted and timed;
//! - [`dispatch`]: one parsed statement to the handler of its family, after
//!   [`hints`] (a statement's SET_VAR and MAX_EXECUTION_TIME hints);
//! - the families: [`txn`] (transactions, commits, lock waits, and DML plans
//!   run inside them), [`set`], [`show`], [`schema`] (DDL statements),
//!   [`accounts`], [`admin`] (KILL, FLUSH, ANALYZE, EXPLAIN), [`view`]
//!   (CREATE / ALTER / DROP VIEW, writes through a view WITH CHECK OPTION,
//!   SHOW CREATE VIEW, DESCRIBE of a view, view privileges), [`routines`]
//!   (stored procedures, functions and triggers, run by [`interp`]),
//!   [`triggers`] (triggers and stored functions run per row, inside a
//!   statement's execution), [`temporary`] (TEMPORARY tables: the essay),
//!   [`create`] (CREATE TABLE, with its LIKE and SELECT forms), [`load`]
//!   (LOAD DATA [LOCAL] INFILE);
//! - [`xa`]: the XA statements and the state machine of a session's branch;
//! - [`read_only`]: which statements `read_only` / `super_read_only`
//!   refuse, from whom, and where each is checked (its contract);
//! - [`context`]: what a running statement evaluates in, and how KILL and
//!   max_execution_time reach it;
//! - [`engine_status`]: SHOW ENGINE ... STATUS (InnoDB's monitor report from
//!   Canyon's figures) and the `Innodb_rows_*` counters it shows.
//!
//! The files are one `impl Session` cut by statement family, so they call
//! each other freely: one circle, inside this folder (`accounts`, `admin`,
//! `context`, `dispatch`, `engine_status`, `hints`, `interp`, `read_only`, `request`, `routines`, `schema`, `set`,
//! `show`, `state`, `temporary`, `create`, `load`, `triggers`, `txn`,
//! `view`, `xa`).
//!
//! # Transactions (MySQL semantics)
//! - autocommit=1 and no BEGIN: each statement is its own transaction, committed
//!   (durably) before its result is returned, rolled back on error.
//! - BEGIN / START TRANSACTION: commits any open transaction, opens a new one; it
//!   stays open until COMMIT, ROLLBACK, a DDL statement (implicit commit) or
//!   SET autocommit=1.
//! - autocommit=0: the first statement opens a transaction that stays open.
//! - A failed statement is rolled back alone (its writes, not its locks); a
//!   deadlock rolls back the whole transaction (MySQL 1213).
//! - Deferred durability ([`Session::set_deferred_durability`], the server's
//!   mode): a COMMIT, or an autocommitted statement, that ends a request is
//!   written but its wait for durability is left to the caller
//!   ([`Session::take_pending_commit`]), who awaits it before answering — so an
//!   async connection task does not block its worker thread on the log sync.
//!   The result is still sent only once the commit is durable; every other
//!   commit (implicit ones, and statements followed by more in the same
//!   request) waits in place.
//! - Asynchronous lock waits ([`Session::set_async_lock_waits`], the server's
//!   mode): a one-statement request that meets a held row lock is rolled back
//!   with its transaction left queued for the lock and fails with
//!   `Error::LockWaitPending`; the caller awaits [`Session::lock_wait`], ends it
//!   with [`Session::end_lock_wait`] and sends the request again, which runs
//!   the statement from its start — counted, timed and listed as one. A
//!   multi-statement request blocks on the lock instead.
//! - Strict SQL mode: an INSERT, UPDATE or DELETE fails, rolled back, on the
//!   warnings MySQL's STRICT_TRANS_TABLES makes errors ([`context::STRICT_WARNINGS`]).
//!
//! A session is owned by one connection task; nothing in it is shared, so none of
//! its state costs a shared write.
//!
//! # SHOW statements
//! The SHOW statements GUIs and ORMs send are answered here from the catalog
//! snapshot, with MySQL's column names: TABLES, DATABASES, COLUMNS (FULL),
//! VARIABLES, CREATE TABLE, INDEX / KEYS, ENGINES, CHARACTER SET, COLLATION,
//! STATUS (a few counters), WARNINGS / ERRORS, [FULL] PROCESSLIST (from
//! [`crate::catalog::procs`]), TABLE STATUS, CREATE DATABASE, GRANTS and ENGINE
//! ... STATUS ([`engine_status`]). sqlparser has no statement for SHOW INDEX,
//! ENGINES, TABLE STATUS, CREATE DATABASE, ENGINE and GRANTS, so
//! [`show::show_extra`] recognises those forms before parsing.
//! `information_schema` itself is a virtual database read through the SELECT
//! planner ([`crate::catalog::infoschema`]).
//!
//! # Stored programs
//! Procedures, functions and triggers are kept as text in the catalog
//! (`crate::catalog::routines`), parsed by `crate::parse::psm` and run by
//! [`interp`] through a host: the session itself for CALL and for stored
//! functions with constant arguments (their statements run as a client's
//! would), the firing statement's transaction for triggers (the executor calls
//! up through `EvalContext::fire_triggers`), and a read snapshot of their own
//! for stored functions called per row (`EvalContext::call_stored`).
//! [`routines`] holds the statements and the essay.
//!
//! # The process registry and KILL
//! Each session registers in [`crate::catalog::procs::ProcessList`] when it opens and
//! leaves it when dropped; every statement marks its own entry running and then
//! sleeping (its own mutex, no shared lock). KILL sets the victim's flag: its row
//! loops ([`crate::expr::EvalContext::check_interrupt`]) and lock waits
//! (`Transaction::set_interrupt`) fail the statement with 1317, a statement
//! rollback. Either KILL then runs the server's hook ([`Session::set_kill_hook`]),
//! which wakes the connection's task: KILL CONNECTION closes an idle
//! connection, and either ends an awaited lock wait.

mod accounts;
mod admin;
mod apply;
mod backup;
mod binlog;
mod context;
mod create;
mod dispatch;
mod engine_status;
mod hints;
mod interp;
mod into;
mod load;
mod partition;
mod perfschema;
mod read_only;
pub use replica::{ApplyOutcome, ReplicaApplier};
mod replica;
mod request;
mod routines;
mod schema;
mod set;
mod show;
mod state;
mod table_lock;
mod temporary;
mod triggers;
mod txn;
mod view;
mod xa;

#[cfg(test)]
mod tests;

pub use binlog::Dump;
pub use request::{LARGE_TEXT, MAX_PREPARED_STATEMENTS};
pub use state::Session;
pub use table_lock::SessionLockWait;
