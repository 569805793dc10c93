//! A client session: current database, variables, the open transaction,
//! prepared statements — and the dispatcher that runs each statement.
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
//!   warnings MySQL's STRICT_TRANS_TABLES makes errors ([`STRICT_WARNINGS`]).
//!
//! A session is owned by one connection task; nothing in it is shared, so none of
//! its state costs a shared write.
//!
//! # SHOW statements
//! The SHOW statements GUIs and ORMs send are answered here from the catalog
//! snapshot, with MySQL's column names: TABLES, DATABASES, COLUMNS (FULL),
//! VARIABLES, CREATE TABLE, INDEX / KEYS, ENGINES, CHARACTER SET, COLLATION,
//! STATUS (a few counters), WARNINGS / ERRORS, [FULL] PROCESSLIST (from
//! [`crate::catalog::procs`]), TABLE STATUS, CREATE DATABASE and GRANTS. sqlparser has
//! no statement for SHOW INDEX, ENGINES, TABLE STATUS, CREATE DATABASE and
//! GRANTS, so [`show_extra`] recognises those forms before parsing.
//! `information_schema` itself is a virtual database read through the SELECT
//! planner ([`crate::catalog::infoschema`]).
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

use crate::catalog::auth::AuthPlugin;
use crate::catalog::engine::Engine;
use crate::catalog::infoschema::SystemTable;
use crate::catalog::privileges::{Level, PrivSpec, Privs};
use crate::catalog::procs::{Process, KILL_CONNECTION, KILL_NONE, KILL_QUERY};
use crate::catalog::status::Counter;
use crate::catalog::vars;
use crate::catalog::{Catalog, UserDef};
use crate::exec::{self, StatementEffects};
use crate::expr::functions::Func;
use crate::expr::{eval, Binder, Env, EvalContext};
use crate::parse::limits;
use crate::parse::GrantTarget;
use crate::parse::{count_placeholders, parse, parse_with, Parsed};
use crate::plan::{self, LockMode, Plan, PlanContext};
use crate::types::result::{column_flags, Column, PreparedInfo, QueryResult};
use crate::types::value::Value;
use crate::types::{expr_column, ExprKind};
use canyon_common::{Error, Result};
use canyon_txn::{Committing, IsolationLevel, LockWait, Transaction, TxnSession};
use sqlparser::ast::{self, Statement};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// The most prepared statements one session may hold. MySQL's
/// max_prepared_stmt_count (default 16382) is global; Canyon counts per session so
/// that PREPARE touches no shared counter.
pub const MAX_PREPARED_STATEMENTS: usize = 16382;

/// A prepared statement.
struct Prepared {
    /// The statement's text (SHOW PROCESSLIST's Info while it executes).
    text: String,
    parsed: Parsed,
    /// `command_counter(&parsed)`, found once: on every execution it would read
    /// the statement's tree, cold in the cache by then.
    counter: Option<Counter>,
    params: usize,
    plan: Option<(u64, Arc<Plan>)>,
}

/// The session state expressions may read (everything but the transaction).
struct State {
    engine: Arc<Engine>,
    connection_id: u32,
    user: String,
    host: String,
    db: Option<String>,
    autocommit: bool,
    isolation: IsolationLevel,
    next_isolation: Option<IsolationLevel>,
    /// The session's access mode (`transaction_read_only`).
    read_only: bool,
    /// LOCK TABLES ... READ opened the current transaction; UNLOCK TABLES
    /// commits it.
    table_locks: bool,
    /// `SET TRANSACTION READ ONLY / READ WRITE`: the next transaction's mode only.
    next_read_only: Option<bool>,
    /// Whether the open transaction is READ ONLY: its writes fail with 1792.
    txn_read_only: bool,
    lock_wait_timeout: Duration,
    vars: HashMap<String, Value>,
    user_vars: HashMap<String, Value>,
    last_insert_id: u64,
    row_count: i64,
    found_rows: u64,
    client_found_rows: bool,
    /// (level, code, message) of the last statement.
    warnings: Vec<(&'static str, u16, String)>,
    /// Cached account, valid for one catalog version.
    account: Option<(u64, Option<Arc<UserDef>>)>,
    /// This session's entry in the process registry (SHOW PROCESSLIST, KILL).
    process: Arc<Process>,
    /// SHOW SESSION STATUS counters, published to `process` after each
    /// statement (see `crate::catalog::status`).
    counts: crate::catalog::status::Counts,
    /// The last FLUSH STATUS (session start before one).
    flushed_at: std::time::Instant,
    /// `long_query_time` in seconds (Slow_queries), kept here so that the end
    /// of every statement does not look it up by name.
    long_query_secs: f64,
    /// max_execution_time in milliseconds (0: no limit), for SELECT.
    max_execution_ms: u64,
}

/// The context one statement evaluates in.
struct StmtCtx<'a> {
    state: &'a State,
    params: &'a [Value],
    /// The statement's time, read on first use: most statements never call
    /// NOW(), and reading the local time zone costs a system call in chrono.
    now: std::cell::OnceCell<chrono::NaiveDateTime>,
    warnings: std::cell::RefCell<Vec<(u16, String)>>,
    /// The first warning of each code strict mode turns into an error in
    /// data-change statements ([`STRICT_WARNINGS`]), kept even past the
    /// warning list's cap.
    strict_warnings: std::cell::RefCell<Vec<(u16, String)>>,
    /// max_execution_time's deadline (SELECT only).
    deadline: Option<std::time::Instant>,
    /// Interrupt checks so far: the clock is read every `CLOCK_EVERY`.
    ticks: std::cell::Cell<u32>,
    /// When the statement had read its first `CLOCK_EVERY` rows, and how many
    /// times it has asked to be moved off the connection-serving thread (see
    /// [`LONG_STATEMENT`]).
    long: std::cell::Cell<(Option<std::time::Instant>, u32)>,
}

/// Warnings that strict SQL mode (STRICT_TRANS_TABLES or STRICT_ALL_TABLES,
/// MySQL 8's default) turns into errors in INSERT, UPDATE and DELETE: out of
/// range (1264), data truncated (1265), truncated incorrect value (1292),
/// incorrect value (1366), data too long (1406), and division by zero (1365)
/// when ERROR_FOR_DIVISION_BY_ZERO is set too. INSERT IGNORE keeps them
/// warnings; SELECT always does.
const STRICT_WARNINGS: [u16; 6] = [1264, 1265, 1292, 1365, 1366, 1406];

/// How many interrupt checks (rows) pass between two reads of the clock for
/// max_execution_time: reading it per row would cost more than the row.
const CLOCK_EVERY: u32 = 1024;

/// A statement still reading rows this long after its first `CLOCK_EVERY`
/// rows is moved off the runtime worker that serves connections: it calls
/// the engine's blocking hook (`block_in_place` in the server), which hands
/// the worker's other connections to another thread for the rest of the
/// statement. Without this one long join stalls every connection queued on
/// its worker — KILL QUERY for it included. Short statements never read the
/// clock, and OLTP statements never reach the threshold.
///
/// The hand-off can fail: tokio gives the worker's core to a pool thread,
/// and if that thread has not started by the time the hook returns, the
/// statement's thread takes the core back. On an oversubscribed machine
/// starting a thread takes longer than the hook's pause, so one attempt was
/// not enough (a 64M-row join then held its worker, and the connections
/// queued on it, to the end: tests/kill.rs failed with two busy loops beside
/// it). The statement therefore asks again at 10×, 100×, ... this age, each
/// time pausing twice as long ([`OFFLOAD_PAUSE`], at most 8 ms): 7 ms of
/// pauses by half a second, 15 ms by five seconds. A request after a
/// hand-off that worked only pauses.
const LONG_STATEMENT: Duration = Duration::from_millis(5);

/// A query text at least this long is parsed and run off the
/// connection-serving worker ([`Session::execute`]) and can be stopped while
/// it parses. sqlparser reads about 2–5 MB/s here, so a text under this size
/// parses in a few milliseconds (sysbench's statements are under 1 KiB, its
/// multi-row INSERTs of `prepare` up to 512 KiB).
pub const LARGE_TEXT: usize = 16 << 10;

/// Statement memory a running text holds (see `crate::parse::limits`), given back
/// when it drops.
struct Held {
    engine: Arc<Engine>,
    bytes: usize,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.engine.statement_memory.release(self.bytes);
    }
}

/// The first hand-off's pause (see [`LONG_STATEMENT`]).
const OFFLOAD_PAUSE: Duration = Duration::from_millis(1);

impl<'a> StmtCtx<'a> {
    fn new(state: &'a State, params: &'a [Value]) -> StmtCtx<'a> {
        StmtCtx {
            state,
            params,
            now: std::cell::OnceCell::new(),
            warnings: Default::default(),
            strict_warnings: Default::default(),
            deadline: None,
            ticks: std::cell::Cell::new(0),
            long: std::cell::Cell::new((None, 0)),
        }
    }

    /// The error a data-change statement ends with under strict SQL mode: the
    /// first of its warnings the mode turns into errors ([`STRICT_WARNINGS`]),
    /// if any and if the session's `sql_mode` is strict. (MySQL stops at the
    /// offending row; here the statement finishes first and is then rolled
    /// back, which ends the same way.)
    fn strict_mode_error(&self) -> Option<Error> {
        let found = self.strict_warnings.borrow();
        let (code, message) = found.first()?;
        if !self.sql_mode_has("STRICT_TRANS_TABLES") && !self.sql_mode_has("STRICT_ALL_TABLES") {
            return None;
        }
        Some(Error::StrictModeError {
            code: *code,
            message: message.clone(),
        })
    }

    /// Whether the session's `sql_mode` names `flag` (read only when a
    /// warning asks: never on a statement's ordinary path).
    fn sql_mode_has(&self, flag: &str) -> bool {
        self.state.get_var("sql_mode").is_ok_and(|v| {
            v.to_display()
                .split(',')
                .any(|m| m.trim().eq_ignore_ascii_case(flag))
        })
    }

    /// Every `CLOCK_EVERY` rows: asks to move a statement that has run for
    /// [`LONG_STATEMENT`] (then 10×, 100×, ... that) off the
    /// connection-serving worker.
    fn offload_if_long(&self, now: std::time::Instant) {
        let (t0, tries) = match self.long.get() {
            (None, _) => {
                self.long.set((Some(now), 0));
                return;
            }
            (Some(t0), tries) => (t0, tries),
        };
        let due = LONG_STATEMENT.saturating_mul(10u32.saturating_pow(tries));
        if now.duration_since(t0) < due {
            return;
        }
        self.long.set((Some(t0), tries + 1));
        tracing::debug!(
            conn = self.state.connection_id,
            tries = tries + 1,
            "long statement: off the worker"
        );
        if let Some(hook) = self.state.engine.config.blocking_hook {
            // What matters is that the worker's other tasks move to a new
            // thread; this statement goes on here afterwards. The pause lets
            // that thread start (see LONG_STATEMENT for why it may take more
            // than one try).
            let pause = OFFLOAD_PAUSE.saturating_mul(1 << tries.min(3));
            hook(&mut || std::thread::sleep(pause));
        }
    }
}

impl EvalContext for StmtCtx<'_> {
    fn params(&self) -> &[Value] {
        self.params
    }
    fn sys_var(&self, name: &str) -> Result<Value> {
        self.state.get_var(name)
    }
    fn user_var(&self, name: &str) -> Value {
        self.state
            .user_vars
            .get(name)
            .cloned()
            .unwrap_or(Value::Null)
    }
    fn session_fact(&self, f: Func) -> Value {
        let s = self.state;
        match f {
            Func::Version => Value::str(&s.engine.config.version),
            Func::Database => s.db.as_deref().map(Value::str).unwrap_or(Value::Null),
            Func::User => Value::str(&format!("{}@{}", s.user, s.host)),
            Func::CurrentUser => {
                // The account the login matched ('root'@'%'), not the client host.
                let host = match &s.account {
                    Some((_, Some(u))) => u.host.clone(),
                    _ => s
                        .engine
                        .catalog()
                        .user(&s.user, &s.host)
                        .map(|u| u.host.clone())
                        .unwrap_or_else(|| s.host.clone()),
                };
                Value::str(&format!("{}@{}", s.user, host))
            }
            Func::ConnectionId => Value::Int(s.connection_id as i64),
            Func::LastInsertId => Value::UInt(s.last_insert_id),
            Func::RowCount => Value::Int(s.row_count),
            Func::FoundRows => Value::UInt(s.found_rows),
            _ => Value::Null,
        }
    }
    fn now(&self) -> chrono::NaiveDateTime {
        *self.now.get_or_init(|| chrono::Local::now().naive_local())
    }
    fn warn(&self, code: u16, message: &str) {
        if code == 1365 && !self.sql_mode_has("ERROR_FOR_DIVISION_BY_ZERO") {
            // MySQL: without ERROR_FOR_DIVISION_BY_ZERO a division by zero is
            // NULL without a warning.
            return;
        }
        if STRICT_WARNINGS.contains(&code) {
            let mut strict = self.strict_warnings.borrow_mut();
            if strict.iter().all(|(c, _)| *c != code) {
                strict.push((code, message.to_string()));
            }
        }
        let mut w = self.warnings.borrow_mut();
        // MySQL caps the list at max_error_count (64).
        if w.len() < 64 {
            w.push((code, message.to_string()));
        }
    }
    fn check_interrupt(&self) -> Result<()> {
        if self.state.process.kill_state() != KILL_NONE {
            return Err(Error::Interrupted);
        }
        let n = self.ticks.get().wrapping_add(1);
        self.ticks.set(n);
        if n.is_multiple_of(CLOCK_EVERY) {
            let now = std::time::Instant::now();
            if self.deadline.is_some_and(|d| now >= d) {
                return Err(Error::QueryTimeout);
            }
            self.offload_if_long(now);
        }
        Ok(())
    }
    fn system_rows(
        &self,
        table: SystemTable,
        filter: &crate::catalog::infoschema::Pushed,
    ) -> Result<Vec<Vec<Value>>> {
        let s = self.state;
        let cat = s.engine.catalog();
        let account = cat.user(&s.user, &s.host).cloned();
        let see_all = account
            .as_ref()
            .is_some_and(|a| a.allows_global(Privs::PROCESS));
        let processes = || process_rows(&s.engine, &s.user, see_all);
        let g = crate::catalog::infoschema::GenCtx {
            catalog: &cat,
            account: account.as_deref(),
            processes: &processes,
        };
        Ok(crate::catalog::infoschema::generate(table, filter, &g))
    }
}

/// The sessions an account may see in the process list: all of them with
/// global privileges (MySQL's PROCESS privilege), else its own user's.
fn process_rows(
    engine: &Engine,
    user: &str,
    see_all: bool,
) -> Vec<crate::catalog::infoschema::ProcessRow> {
    engine
        .processes()
        .all()
        .into_iter()
        .filter(|p| see_all || p.user == user)
        .map(|p| {
            let i = p.info();
            crate::catalog::infoschema::ProcessRow {
                id: p.id,
                user: p.user.clone(),
                host: p.host.clone(),
                db: i.db,
                running: i.running,
                time: i.since.elapsed().as_secs() as i64,
                info: i.query,
            }
        })
        .collect()
}

impl State {
    /// The collation of literals and parameters: `collation_connection`.
    fn connection_collation(&self) -> crate::types::collation::Collation {
        self.vars
            .get("collation_connection")
            .and_then(|v| crate::types::collation::Collation::from_name(&v.to_display()))
            .unwrap_or(crate::types::collation::Collation::DEFAULT)
    }

    fn get_var(&self, name: &str) -> Result<Value> {
        if let Some(g) = name.strip_prefix("global.") {
            return self
                .engine
                .global_var(g)
                .ok_or_else(|| Error::UnknownSystemVariable(g.to_string()));
        }
        Ok(match name {
            "autocommit" => Value::Int(self.autocommit as i64),
            "transaction_isolation" | "tx_isolation" => {
                Value::str(vars::isolation_name(self.isolation))
            }
            "innodb_lock_wait_timeout" => Value::Int(self.lock_wait_timeout.as_secs() as i64),
            "last_insert_id" | "identity" => Value::UInt(self.last_insert_id),
            "warning_count" => {
                Value::Int(self.warnings.iter().filter(|w| w.0 != "Error").count() as i64)
            }
            "error_count" => {
                Value::Int(self.warnings.iter().filter(|w| w.0 == "Error").count() as i64)
            }
            _ => match self.vars.get(name) {
                Some(v) => v.clone(),
                None => vars::default_value(name, &self.engine.config)
                    .map(|(v, _)| v)
                    .ok_or_else(|| Error::UnknownSystemVariable(name.to_string()))?,
            },
        })
    }

    fn account(&mut self, cat: &Catalog) -> Option<Arc<UserDef>> {
        match &self.account {
            Some((v, a)) if *v == cat.version => a.clone(),
            _ => {
                let a = cat.user(&self.user, &self.host).cloned();
                self.account = Some((cat.version, a.clone()));
                a
            }
        }
    }

    /// Checks that the account holds `command`'s privilege on `db` (with
    /// `table`, on that table): MySQL 1142 for a table, 1044 for a database.
    /// USE and SHOW need any privilege on the database.
    fn check_db(
        &mut self,
        cat: &Catalog,
        db: &str,
        command: &str,
        table: Option<&str>,
    ) -> Result<()> {
        if crate::catalog::infoschema::is_info_schema(db) {
            // Everyone may read information_schema; nobody may change it.
            return match command {
                "SELECT" | "SHOW" | "USE" => Ok(()),
                _ => Err(Error::DbAccessDenied {
                    user: self.user.clone(),
                    host: self.host.clone(),
                    db: crate::catalog::infoschema::NAME.to_string(),
                }),
            };
        }
        let allowed = self
            .account(cat)
            .is_some_and(|u| match Privs::from_name(command) {
                Some(needed) => u.allows(db, table, needed),
                None => u.can_use_db(db),
            });
        if allowed {
            return Ok(());
        }
        Err(match table {
            Some(t) => Error::TableAccessDenied {
                command: command.to_string(),
                user: self.user.clone(),
                host: self.host.clone(),
                table: t.to_string(),
            },
            None => Error::DbAccessDenied {
                user: self.user.clone(),
                host: self.host.clone(),
                db: db.to_string(),
            },
        })
    }

    /// Fills the account into a 1044 raised below the session (the planner
    /// refusing a write to information_schema: see `PlanContext::resolve`).
    fn fill_account(&self, e: Error) -> Error {
        match e {
            Error::DbAccessDenied { user, host, db } if user.is_empty() && host.is_empty() => {
                Error::DbAccessDenied {
                    user: self.user.clone(),
                    host: self.host.clone(),
                    db,
                }
            }
            e => e,
        }
    }

    /// When a SELECT starting now must stop (max_execution_time).
    fn select_deadline(&self) -> Option<std::time::Instant> {
        (self.max_execution_ms > 0)
            .then(|| std::time::Instant::now() + Duration::from_millis(self.max_execution_ms))
    }

    /// Checks a global privilege named `what` (e.g. "CREATE USER"); an unknown
    /// name needs SUPER. MySQL 1227.
    fn check_super(&mut self, cat: &Catalog, what: &str) -> Result<()> {
        let needed = Privs::from_name(what).unwrap_or(Privs::SUPER);
        match self.account(cat) {
            Some(u) if u.allows_global(needed) => Ok(()),
            _ => Err(Error::SpecificAccessDenied(what.to_string())),
        }
    }
}

/// One client's session state: current database, variables, the open transaction,
/// prepared statements. Dropping it rolls back any open transaction.
pub struct Session {
    state: State,
    txn_session: TxnSession,
    txn: Option<Transaction>,
    prepared: HashMap<u32, Prepared>,
    next_statement_id: u32,
    /// This session's catalog pin (see `crate::ddl::alter`).
    pin: Arc<std::sync::atomic::AtomicU64>,
    /// Whether the caller awaits [`Session::take_pending_commit`] itself.
    defer_durability: bool,
    /// A written commit the caller has yet to await (deferred durability). While
    /// it is here nothing else runs: every entry point settles it first.
    pending_commit: Option<Committing>,
    /// Whether the caller awaits row lock waits itself (see
    /// [`Session::set_async_lock_waits`]).
    async_lock_waits: bool,
    /// Lock waits of the statement now running are deferred: the caller
    /// allows it and the request is one statement (a multi-statement text
    /// cannot be resumed in its middle, so it blocks).
    defer_waits_now: bool,
    /// The open transaction was begun for one autocommitted statement that is
    /// waiting for a row lock: it commits when the statement, run again,
    /// succeeds, and rolls back if the wait is given up.
    implicit_txn: bool,
    /// The statement is waiting for a row lock, or running again after one: it
    /// was counted, and shown in the process list, when it first ran. Holds
    /// when it started.
    lock_retry: Option<std::time::Instant>,
}

fn ok(affected_rows: u64) -> QueryResult {
    QueryResult::Ok {
        affected_rows,
        last_insert_id: 0,
        info: String::new(),
        warnings: 0,
    }
}

/// The OK packet of ALTER TABLE / CREATE INDEX (MySQL's info string).
fn alter_ok() -> QueryResult {
    QueryResult::Ok {
        affected_rows: 0,
        last_insert_id: 0,
        info: "Records: 0  Duplicates: 0  Warnings: 0".into(),
        warnings: 0,
    }
}

fn text_rows(names: &[&str], rows: Vec<Vec<Value>>) -> QueryResult {
    let columns: Vec<Column> = names
        .iter()
        .map(|n| expr_column(n, ExprKind::String))
        .collect();
    QueryResult::Rows {
        columns: columns.into(),
        rows,
        warnings: 0,
    }
}

/// A result set whose columns have the given names and kinds (SHOW statements
/// with numeric columns).
fn typed_rows(cols: &[(&str, ExprKind)], rows: Vec<Vec<Value>>) -> QueryResult {
    let columns: Vec<Column> = cols.iter().map(|(n, k)| expr_column(n, *k)).collect();
    QueryResult::Rows {
        columns: columns.into(),
        rows,
        warnings: 0,
    }
}

fn object_name(n: &ast::ObjectName) -> Vec<String> {
    n.0.iter()
        .map(|p| p.as_ident().map(|i| i.value.clone()).unwrap_or_default())
        .collect()
}

impl Session {
    pub(crate) fn new(engine: Arc<Engine>, connection_id: u32, user: &str, host: &str) -> Session {
        let txn_session = engine.txn.session();
        let pin = engine.register_pin();
        let lock_wait_timeout = engine.config.lock_wait_timeout;
        let process = engine.processes.register(connection_id, user, host);
        engine.status.connect();
        let globals = engine.globals();
        let mut session = Session {
            state: State {
                engine,
                connection_id,
                user: user.to_string(),
                host: host.to_string(),
                db: None,
                autocommit: true,
                isolation: IsolationLevel::RepeatableRead,
                next_isolation: None,
                read_only: false,
                table_locks: false,
                next_read_only: None,
                txn_read_only: false,
                lock_wait_timeout,
                vars: HashMap::new(),
                user_vars: HashMap::new(),
                last_insert_id: 0,
                row_count: -1,
                found_rows: 0,
                client_found_rows: false,
                warnings: Vec::new(),
                account: None,
                process,
                counts: Default::default(),
                flushed_at: std::time::Instant::now(),
                long_query_secs: 10.0,
                max_execution_ms: 0,
            },
            txn_session,
            txn: None,
            prepared: HashMap::new(),
            next_statement_id: 1,
            pin,
            defer_durability: false,
            pending_commit: None,
            async_lock_waits: false,
            defer_waits_now: false,
            implicit_txn: false,
            lock_retry: None,
        };
        // SET GLOBAL values are the new session's starting values (checked
        // when they were set, so they apply).
        for (name, value) in globals.iter() {
            if let Err(e) = session.apply_session_var(name.clone(), value.clone(), false) {
                tracing::warn!(var = %name, "global value not applied: {e}");
            }
        }
        session
    }

    /// Installs the server's wake-up for KILL: called (from the killing
    /// session's thread) after this session is marked killed, so that a
    /// connection task waiting for the next packet can close the socket (KILL
    /// CONNECTION) and one awaiting a row lock can stop waiting (either KILL).
    pub fn set_kill_hook(&self, hook: crate::catalog::procs::KillHook) {
        self.state.process.set_hook(hook);
    }

    /// Whether KILL CONNECTION ended this session: the server closes the
    /// connection (any statement now fails with 1317).
    pub fn killed(&self) -> bool {
        self.state.process.kill_state() == KILL_CONNECTION
    }

    /// This session's connection id.
    pub fn connection_id(&self) -> u32 {
        self.state.connection_id
    }

    /// The collation a client asked for in its handshake (a collation id, as
    /// MySQL's protocol carries it): `collation_connection` and the
    /// `character_set_*` variables follow it, as in MySQL. Unknown ids keep
    /// the server's defaults.
    pub fn set_client_collation(&mut self, id: u16) {
        let Some(c) = crate::types::collation::Collation::from_id(id) else {
            return;
        };
        for v in [
            "character_set_client",
            "character_set_connection",
            "character_set_results",
        ] {
            self.state.vars.insert(v.into(), Value::str(c.charset()));
        }
        self.state
            .vars
            .insert("collation_connection".into(), Value::str(c.name()));
    }

    /// Sets whether the client asked for CLIENT_FOUND_ROWS (UPDATE reports
    /// matched rather than changed rows).
    pub fn set_client_found_rows(&mut self, on: bool) {
        self.state.client_found_rows = on;
    }

    /// The current database, if any.
    pub fn current_database(&self) -> Option<&str> {
        self.state.db.as_deref()
    }

    /// Whether a transaction is open (SERVER_STATUS_IN_TRANS).
    pub fn in_transaction(&self) -> bool {
        self.txn.is_some()
    }

    /// Whether autocommit is on (SERVER_STATUS_AUTOCOMMIT).
    pub fn autocommit(&self) -> bool {
        self.state.autocommit
    }

    /// Warnings of the last statement.
    pub fn warning_count(&self) -> u16 {
        self.state
            .warnings
            .iter()
            .filter(|w| w.0 != "Error")
            .count() as u16
    }

    /// Runs one COM_QUERY text. With `multi` (CLIENT_MULTI_STATEMENTS) the text may
    /// hold several statements; results come back in order and stop after the first
    /// error. Without `multi`, more than one statement is a syntax error.
    ///
    /// A text of [`LARGE_TEXT`] bytes or more is parsed and run off the
    /// connection-serving worker (the engine's blocking hook), so that its
    /// parse does not hold up the worker's other connections; KILL and
    /// max_execution_time can stop its parse. Every request runs with
    /// [`limits::STATEMENT_STACK`] of stack, and a panic in it (a bug) is
    /// answered with an error rather than ending the connection (see
    /// `Session::guarded`).
    pub fn execute(&mut self, sql: &str, multi: bool) -> Vec<Result<QueryResult>> {
        if sql.len() >= LARGE_TEXT {
            if let Some(hook) = self.state.engine.config.blocking_hook {
                let mut out = Vec::new();
                hook(&mut || out = self.execute_here(sql, multi));
                return out;
            }
        }
        self.execute_here(sql, multi)
    }

    fn execute_here(&mut self, sql: &str, multi: bool) -> Vec<Result<QueryResult>> {
        limits::with_statement_stack(|| {
            self.guarded(|s| s.execute_unguarded(sql, multi), |e| vec![Err(e)])
        })
    }

    fn execute_unguarded(&mut self, sql: &str, multi: bool) -> Vec<Result<QueryResult>> {
        if let Err(e) = self.settle() {
            return vec![Err(e)];
        }
        if self.killed() {
            return vec![Err(Error::Interrupted)];
        }
        let start = self.request_start(sql);
        self.defer_waits_now = self.async_lock_waits;
        let out = self.execute_text(sql, multi);
        let last = match out.last() {
            Some(Err(e)) => Err(e.clone()),
            _ => Ok(()),
        };
        self.request_end(start, &last);
        out
    }

    /// Runs `f`, turning a panic in it into `on_panic(error 1105)`: a panic
    /// is a bug (the engine's contract is an [`Error`] for every input), but
    /// one statement's bug must not end its connection, nor, through an
    /// abort, every other. The panic is logged at error level (tests and CI
    /// fail on it); the session's open transaction is rolled back, since the
    /// statement may have stopped half way through its writes.
    fn guarded<R>(
        &mut self,
        f: impl FnOnce(&mut Self) -> R,
        on_panic: impl FnOnce(Error) -> R,
    ) -> R {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(self))) {
            Ok(r) => r,
            Err(payload) => {
                let what = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".to_string());
                tracing::error!(
                    conn = self.state.connection_id,
                    "statement panicked (a bug; its transaction is rolled back): {what}"
                );
                self.implicit_txn = false;
                self.lock_retry = None;
                self.defer_waits_now = false;
                if let Some(t) = self.txn.take() {
                    t.rollback();
                }
                self.unpin();
                self.state.process.end_statement(&self.state.counts);
                let e = Error::Internal(format!(
                    "the statement stopped on a server bug and its transaction was rolled back ({what})"
                ));
                self.record_error(&e);
                on_panic(e)
            }
        }
    }

    /// What stops a long parse of `sql`: KILL, and for a SELECT the session's
    /// max_execution_time (MySQL applies it to read-only SELECTs).
    fn parse_interrupt(&self, sql: &str) -> crate::parse::Interrupt {
        let process = self.state.process.clone();
        let first = sql
            .trim_start_matches(|c: char| c.is_whitespace() || c == '(')
            .get(..6)
            .unwrap_or("");
        let deadline = if first.eq_ignore_ascii_case("SELECT") {
            self.state.select_deadline()
        } else {
            None
        };
        Box::new(move || {
            if process.kill_state() != KILL_NONE {
                return Some(Error::Interrupted);
            }
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                return Some(Error::QueryTimeout);
            }
            None
        })
    }

    fn execute_text(&mut self, sql: &str, multi: bool) -> Vec<Result<QueryResult>> {
        if let Some(show) = show_extra(sql) {
            self.state.warnings.clear();
            let r = self.run_show_extra(&show);
            if let Err(e) = &r {
                self.record_error(e);
            }
            return vec![r];
        }
        let interrupt = (sql.len() >= LARGE_TEXT).then(|| self.parse_interrupt(sql));
        // The reservation outlives the borrow of the engine it came from; a
        // large statement's keeps its own handle on the engine (`Held`), a
        // small one (nothing reserved) clones nothing shared.
        let (parsed, _reservation) = match transaction_control(sql) {
            Some(cached) => (Ok(cached.to_vec()), None),
            None => match parse_with(sql, Some(&self.state.engine.statement_memory), interrupt) {
                Ok((stmts, reservation)) => {
                    let bytes = reservation.map_or(0, |r| r.into_bytes());
                    let held = (bytes > 0).then(|| Held {
                        engine: self.state.engine.clone(),
                        bytes,
                    });
                    (Ok(stmts), held)
                }
                Err(e) => (Err(e), None),
            },
        };
        let stmts = match parsed {
            Ok(s) => s,
            Err(e) => {
                self.record_error(&e);
                return vec![Err(e)];
            }
        };
        if stmts.is_empty() {
            // Only whitespace or comments: the server answers 1065 (empty query).
            return Vec::new();
        }
        if !multi && stmts.len() > 1 {
            let e = Error::Syntax(second_statement_text(sql));
            self.record_error(&e);
            return vec![Err(e)];
        }
        // Only a request of one statement can be sent again after a wait.
        self.defer_waits_now &= stmts.len() == 1;
        let mut out = Vec::with_capacity(stmts.len());
        for s in &stmts {
            let mut r = self.run(s, &[], sql);
            if out.len() + 1 < stmts.len() {
                // More statements follow: this one's commit must be durable and
                // visible before they run (and before its OK counts).
                if let Err(e) = self.settle() {
                    r = Err(e);
                }
            }
            let failed = r.is_err();
            out.push(r);
            if failed {
                break;
            }
        }
        out
    }

    /// COM_INIT_DB / USE.
    pub fn use_database(&mut self, db: &str) -> Result<()> {
        let cat = self.state.engine.catalog();
        if crate::catalog::infoschema::is_info_schema(db) {
            // MySQL keeps the lower-case spelling whatever the client wrote.
            self.state.db = Some(crate::catalog::infoschema::NAME.to_string());
            self.state
                .process
                .set_db(Some(crate::catalog::infoschema::NAME));
            return Ok(());
        }
        if !cat.databases.contains_key(db) {
            return Err(Error::UnknownDatabase(db.to_string()));
        }
        self.state.check_db(&cat, db, "USE", None)?;
        self.state.db = Some(db.to_string());
        self.state.process.set_db(Some(db));
        Ok(())
    }

    /// COM_FIELD_LIST: the table's columns.
    pub fn field_list(&mut self, table: &str) -> Result<Vec<Column>> {
        let db = self.state.db.clone().ok_or(Error::NoDatabaseSelected)?;
        if crate::catalog::infoschema::is_info_schema(&db) {
            let t = SystemTable::lookup(table).ok_or_else(|| Error::UnknownTable {
                db: db.clone(),
                table: table.to_string(),
            })?;
            return Ok(t
                .columns()
                .iter()
                .map(|(name, kind)| {
                    let mut c = expr_column(name, *kind);
                    c.schema = db.clone();
                    c.table = table.to_string();
                    c.org_table = t.name().to_string();
                    c.org_name = name.to_string();
                    c
                })
                .collect());
        }
        let cat = self.state.engine.catalog();
        let t = cat.table(&db, table).ok_or_else(|| Error::UnknownTable {
            db: db.clone(),
            table: table.to_string(),
        })?;
        Ok(t.def
            .columns
            .iter()
            .map(|c| {
                crate::types::table_column(
                    &db,
                    table,
                    table,
                    &c.name,
                    c.ty,
                    if c.nullable {
                        0
                    } else {
                        column_flags::NOT_NULL
                    },
                )
            })
            .collect())
    }

    /// COM_STMT_PREPARE. A session may hold [`MAX_PREPARED_STATEMENTS`] at once
    /// (error 1461 beyond): a client that prepares without closing must not grow
    /// the server's memory without bound.
    ///
    /// A large text is parsed off the connection-serving worker, as by
    /// [`Session::execute`], with the same stack and panic guard.
    pub fn prepare(&mut self, sql: &str) -> Result<PreparedInfo> {
        if sql.len() >= LARGE_TEXT {
            if let Some(hook) = self.state.engine.config.blocking_hook {
                let mut out = None;
                hook(&mut || out = Some(self.prepare_here(sql)));
                if let Some(r) = out {
                    return r;
                }
            }
        }
        self.prepare_here(sql)
    }

    fn prepare_here(&mut self, sql: &str) -> Result<PreparedInfo> {
        limits::with_statement_stack(|| self.guarded(|s| s.prepare_unguarded(sql), Err))
    }

    fn prepare_unguarded(&mut self, sql: &str) -> Result<PreparedInfo> {
        self.count(Counter::ComStmtPrepare);
        if self.prepared.len() >= MAX_PREPARED_STATEMENTS {
            return Err(Error::TooManyPreparedStatements(
                MAX_PREPARED_STATEMENTS as u64,
            ));
        }
        let engine = self.state.engine.clone();
        let interrupt = (sql.len() >= LARGE_TEXT).then(|| self.parse_interrupt(sql));
        let (mut stmts, _reservation) = parse_with(sql, Some(&engine.statement_memory), interrupt)?;
        if stmts.len() != 1 {
            return Err(Error::Syntax(second_statement_text(sql)));
        }
        let parsed = stmts.pop().expect("one statement, checked above");
        let params = count_placeholders(sql)?;
        if params > u16::MAX as usize {
            return Err(Error::InvalidArgument("too many placeholders".into()));
        }
        let cat = self.state.engine.catalog();
        let plan = self.plan_dml(&cat, &parsed)?;
        let columns = plan
            .as_ref()
            .map(|p| p.columns())
            .unwrap_or_else(|| Arc::from(Vec::new()));
        let id = self.next_statement_id;
        self.next_statement_id = self.next_statement_id.wrapping_add(1).max(1);
        self.prepared.insert(
            id,
            Prepared {
                text: sql.to_string(),
                counter: command_counter(&parsed),
                parsed,
                params,
                plan: plan.map(|p| (cat.version, Arc::new(p))),
            },
        );
        Ok(PreparedInfo {
            id,
            params: params as u16,
            columns,
        })
    }

    /// SHOW [GLOBAL] STATUS: (name, value) sorted by name. The Com_* style
    /// counters are this session's, or with `global` every session's plus
    /// those of closed ones; connection figures and Uptime are global in
    /// both scopes, as in MySQL. See `crate::catalog::status`.
    fn status_rows(&self, global: bool) -> Vec<(String, u64)> {
        let engine = &self.state.engine;
        let (closed, procs) = engine.status.closed_with(|| engine.processes.all());
        let counts = if global {
            let mut total = closed;
            for p in &procs {
                if !Arc::ptr_eq(p, &self.state.process) {
                    total.absorb(&p.info().counts);
                }
            }
            total.absorb(&self.state.counts);
            total
        } else {
            self.state.counts.clone()
        };
        let mut rows: Vec<(String, u64)> = Counter::ALL
            .iter()
            .map(|c| (c.name().to_string(), counts.get(*c)))
            .collect();
        rows.push(("Queries".into(), counts.get(Counter::Questions)));
        for (n, v) in engine.status.connection_figures() {
            rows.push((n.into(), v));
        }
        let running = procs.iter().filter(|p| p.info().running).count() as u64;
        rows.push(("Threads_running".into(), running));
        rows.push(("Uptime".into(), engine.started().elapsed().as_secs()));
        // The row cache is the server's, so its figures are global in both
        // scopes (as InnoDB's buffer pool figures are).
        let rc = engine.txn.row_cache_stats();
        rows.push(("Canyon_row_cache_hits".into(), rc.hits));
        rows.push(("Canyon_row_cache_misses".into(), rc.misses));
        rows.push(("Canyon_row_cache_rows".into(), rc.entries));
        rows.push(("Canyon_row_cache_bytes".into(), rc.bytes));
        rows.push(("Canyon_row_cache_capacity".into(), rc.capacity));
        let h = engine.txn.history_stats();
        rows.push(("Canyon_history_versions".into(), h.versions));
        rows.push(("Canyon_history_bytes".into(), h.bytes));
        rows.push(("Canyon_history_spilled".into(), h.spilled));
        rows.push(("Canyon_gc_queued_keys".into(), engine.txn.gc_queued_keys()));
        rows.push(("Canyon_dead_runs".into(), engine.txn.dead_runs() as u64));
        // Row lock waits are counted by the lock table, server-wide (as
        // InnoDB's are): the same in both scopes.
        let l = engine.txn.lock_stats();
        rows.push(("Innodb_row_lock_current_waits".into(), l.current_waits));
        rows.push(("Innodb_row_lock_time".into(), l.time_ms));
        rows.push((
            "Innodb_row_lock_time_avg".into(),
            l.time_ms
                .checked_div(l.waits - l.current_waits)
                .unwrap_or(0),
        ));
        rows.push(("Innodb_row_lock_time_max".into(), l.time_max_ms));
        rows.push(("Innodb_row_lock_waits".into(), l.waits));
        let since = if global {
            engine.started()
        } else {
            self.state.flushed_at
        };
        rows.push((
            "Uptime_since_flush_status".into(),
            since.elapsed().as_secs(),
        ));
        rows.sort_by_key(|r| r.0.to_ascii_lowercase());
        rows
    }

    /// Adds one to a status counter of this session.
    fn count(&mut self, c: Counter) {
        self.state.counts.add(c, 1);
    }

    /// Bytes read from and written to the client, for Bytes_received /
    /// Bytes_sent (the server reports them; published with the next
    /// statement).
    pub fn add_traffic(&mut self, received: u64, sent: u64) {
        self.state.counts.add(Counter::BytesReceived, received);
        self.state.counts.add(Counter::BytesSent, sent);
    }

    /// The end of a client statement: Slow_queries against long_query_time,
    /// then the counters published to the process list (its mutex is taken
    /// there anyway).
    fn end_statement(&mut self, start: std::time::Instant) {
        if start.elapsed().as_secs_f64() > self.state.long_query_secs {
            self.count(Counter::SlowQueries);
        }
        self.state.process.end_statement(&self.state.counts);
    }

    /// COM_STMT_EXECUTE with decoded parameters (the count is checked: 1210).
    pub fn execute_prepared(&mut self, id: u32, params: &[Value]) -> Result<QueryResult> {
        limits::with_statement_stack(|| {
            self.guarded(|s| s.execute_prepared_unguarded(id, params), Err)
        })
    }

    fn execute_prepared_unguarded(&mut self, id: u32, params: &[Value]) -> Result<QueryResult> {
        self.settle()?;
        if self.killed() {
            return Err(Error::Interrupted);
        }
        // As `request_start`, without copying the statement's text.
        let start = match self.lock_retry {
            Some(start) => start,
            None => {
                let text = self.prepared.get(&id).map_or("", |p| p.text.as_str());
                self.state.process.begin_statement(text);
                self.count(Counter::ComStmtExecute);
                std::time::Instant::now()
            }
        };
        self.defer_waits_now = self.async_lock_waits;
        let r = self.execute_prepared_inner(id, params);
        self.request_end(start, &r);
        r
    }

    fn execute_prepared_inner(&mut self, id: u32, params: &[Value]) -> Result<QueryResult> {
        let p = self
            .prepared
            .get(&id)
            .ok_or_else(|| Error::UnknownStatementHandler {
                id,
                command: "mysqld_stmt_execute".into(),
            })?;
        if params.len() != p.params {
            return Err(Error::WrongArguments("mysqld_stmt_execute".into()));
        }
        self.state.engine.pin_catalog(&self.pin);
        let r = self.execute_prepared_pinned(id, params);
        self.unpin_if_idle();
        r
    }

    fn execute_prepared_pinned(&mut self, id: u32, params: &[Value]) -> Result<QueryResult> {
        let p = self
            .prepared
            .get(&id)
            .expect("the caller looked the statement up");
        let counter = p.counter;
        let cat = self.state.engine.catalog();
        let plan = match &p.plan {
            Some((v, plan)) if *v == cat.version => Some(plan.clone()),
            Some(_) => {
                // The catalog changed since PREPARE: plan again.
                let parsed = p.parsed.clone();
                let fresh = self.plan_dml(&cat, &parsed)?.map(Arc::new);
                if let (Some(f), Some(p)) = (&fresh, self.prepared.get_mut(&id)) {
                    p.plan = Some((cat.version, f.clone()));
                }
                fresh
            }
            None => None,
        };
        drop(cat);
        match plan {
            Some(plan) => {
                // (The other arm counts in `run`.) A statement sent again after
                // a lock wait was counted when it first ran.
                if self.lock_retry.is_none() {
                    self.count(Counter::Questions);
                    if let Some(c) = counter {
                        self.count(c);
                    }
                }
                self.state.warnings.clear();
                let r = self.run_plan(&plan, params);
                if let Err(e) = &r {
                    self.record_error(e);
                }
                self.with_warning_count(r)
            }
            None => {
                let parsed = self
                    .prepared
                    .get(&id)
                    .map(|p| p.parsed.clone())
                    .expect("looked up above");
                self.run(&parsed, params, "")
            }
        }
    }

    /// COM_STMT_CLOSE (unknown ids are ignored, as in MySQL).
    pub fn close_prepared(&mut self, id: u32) {
        self.count(Counter::ComStmtClose);
        self.prepared.remove(&id);
    }

    /// COM_RESET_CONNECTION: roll back, drop prepared statements, reset variables.
    pub fn reset(&mut self) {
        if let Some(t) = self.txn.take() {
            t.rollback();
        }
        self.unpin();
        self.prepared.clear();
        let s = &mut self.state;
        s.vars.clear();
        s.user_vars.clear();
        s.autocommit = true;
        s.isolation = IsolationLevel::RepeatableRead;
        s.next_isolation = None;
        s.read_only = false;
        s.table_locks = false;
        s.next_read_only = None;
        s.txn_read_only = false;
        s.lock_wait_timeout = s.engine.config.lock_wait_timeout;
        s.last_insert_id = 0;
        s.max_execution_ms = 0;
        s.warnings.clear();
    }

    fn note(&mut self, code: u16, message: String) {
        self.state.warnings.push(("Note", code, message));
    }

    /// Sets the result's warning count from the statement's warnings.
    fn with_warning_count(&self, r: Result<QueryResult>) -> Result<QueryResult> {
        let n = self
            .state
            .warnings
            .iter()
            .filter(|w| w.0 != "Error")
            .count() as u16;
        r.map(|mut q| {
            match &mut q {
                QueryResult::Ok { warnings, info, .. } => {
                    *warnings = n;
                    // The info line ("Rows matched: 2  Changed: 2  Warnings: 3")
                    // counts every warning of the statement too, its
                    // expressions' included.
                    if let Some(at) = info.rfind("Warnings: ") {
                        info.truncate(at + "Warnings: ".len());
                        info.push_str(&n.to_string());
                    }
                }
                QueryResult::Rows { warnings, .. } => *warnings = n,
            }
            q
        })
    }

    fn record_error(&mut self, e: &Error) {
        if matches!(e, Error::LockWaitPending) {
            // Not the statement's outcome: it runs again after the wait.
            return;
        }
        self.state.warnings.clear();
        self.state.warnings.push(("Error", 0, format!("{e}")));
    }

    /// Plans SELECT/INSERT/UPDATE/DELETE; `None` for other statements.
    fn plan_dml(&mut self, cat: &Arc<Catalog>, parsed: &Parsed) -> Result<Option<Plan>> {
        let Parsed::Sql(stmt) = parsed else {
            return Ok(None);
        };
        let mut ctx = PlanContext::new(
            cat,
            self.state.db.as_deref(),
            self.state.connection_collation(),
        );
        ctx.kill = Some(self.state.process.kill_flag());
        ctx.blocking_hook = self.state.engine.config.blocking_hook;
        let planned = match stmt.as_ref() {
            Statement::Query(q) => {
                crate::plan::select::plan_select(&ctx, q).map(|p| Plan::Select(Box::new(p)))
            }
            Statement::Insert(i) => plan::plan_insert(&ctx, i).map(Plan::Insert),
            Statement::Update(u) => plan::plan_update(&ctx, u).map(Plan::Update),
            Statement::Delete(d) => plan::plan_delete(&ctx, d).map(Plan::Delete),
            _ => return Ok(None),
        };
        let mut plan = planned.map_err(|e| self.state.fill_account(e))?;
        // A write to a table with either side of a foreign key carries the
        // catalog it was planned on (crate::exec::foreign).
        match &mut plan {
            Plan::Insert(p) if cat.has_foreign_keys(&p.table) => p.fk = Some(cat.clone()),
            Plan::Update(p) if cat.has_foreign_keys(&p.table) => p.fk = Some(cat.clone()),
            Plan::Delete(p) if cat.has_foreign_keys(&p.table) => p.fk = Some(cat.clone()),
            _ => {}
        }
        // Privileges: the account must hold a grant on the database of the
        // written table (for the statement's command) and of every table read
        // (SELECT), including those of joins, derived tables and subqueries.
        let (written, command) = match &plan {
            Plan::Select(_) => (None, "SELECT"),
            Plan::Insert(i) => (Some(&i.table), "INSERT"),
            Plan::Update(u) => (Some(&u.table), "UPDATE"),
            Plan::Delete(d) => (Some(&d.table), "DELETE"),
        };
        if let Some(t) = written {
            self.state
                .check_db(cat, &t.def.db, command, Some(&t.def.name))?;
        }
        let mut read = Vec::new();
        plan.tables_read(&mut read);
        for t in read {
            self.state
                .check_db(cat, &t.def.db, "SELECT", Some(&t.def.name))?;
        }
        Ok(Some(plan))
    }

    /// Runs a statement inside the session's transaction rules. A `write` in a
    /// READ ONLY transaction (also the implicit one of an autocommitted statement
    /// under `transaction_read_only = 1`) fails with 1792, as in MySQL, and is
    /// rolled back like any failed statement.
    fn with_txn<T>(
        &mut self,
        params: &[Value],
        write: bool,
        deadline: Option<std::time::Instant>,
        f: impl FnOnce(&mut Transaction, &StmtCtx<'_>) -> Result<T>,
    ) -> Result<T> {
        let single =
            (self.txn.is_none() && self.state.autocommit) || std::mem::take(&mut self.implicit_txn);
        if self.txn.is_none() {
            let iso = self
                .state
                .next_isolation
                .take()
                .unwrap_or(self.state.isolation);
            let mut t = self.txn_session.begin(iso);
            t.set_lock_wait_timeout(self.state.lock_wait_timeout);
            t.set_interrupt(Some(self.state.process.kill_flag().clone()));
            self.txn = Some(t);
            self.state.txn_read_only = self
                .state
                .next_read_only
                .take()
                .unwrap_or(self.state.read_only);
        }
        let refuse = write && self.state.txn_read_only;
        let txn = self.txn.as_mut().expect("a transaction was opened above");
        txn.begin_statement();
        txn.set_deferred_lock_waits(self.defer_waits_now);
        let (r, warnings) = {
            let mut ctx = StmtCtx::new(&self.state, params);
            ctx.deadline = deadline;
            let r = if refuse {
                Err(Error::ReadOnlyTransaction)
            } else {
                f(txn, &ctx)
            };
            (r, ctx.warnings.into_inner())
        };
        for (code, msg) in warnings {
            self.state.warnings.push(("Warning", code, msg));
        }
        match r {
            Ok(v) => {
                if single {
                    let t = self
                        .txn
                        .take()
                        .expect("the statement's transaction is open");
                    self.count(Counter::HandlerCommit);
                    self.commit_txn(t, true)?;
                }
                Ok(v)
            }
            Err(Error::LockWaitPending) => {
                // Queued for a row lock: undo what the statement did, keep the
                // transaction (an autocommit statement's too) for the rerun.
                if let Some(t) = self.txn.as_mut() {
                    t.rollback_statement();
                }
                self.implicit_txn = single;
                Err(Error::LockWaitPending)
            }
            Err(e) => {
                if single || e.rolls_back_transaction() {
                    if let Some(t) = self.txn.take() {
                        self.count(Counter::HandlerRollback);
                        t.rollback();
                    }
                } else if let Some(t) = self.txn.as_mut() {
                    t.rollback_statement();
                }
                Err(e)
            }
        }
    }

    fn run_plan(&mut self, plan: &Plan, params: &[Value]) -> Result<QueryResult> {
        let serializable_lock = !self.state.autocommit || self.txn.is_some();
        let found_rows = self.state.client_found_rows;
        let mut effects = StatementEffects::default();
        let result = match plan {
            Plan::Select(s) if !crate::exec::select::needs_transaction(s) => {
                let mut ctx = StmtCtx::new(&self.state, params);
                ctx.deadline = self.state.select_deadline();
                let r = crate::exec::select::run_select(s, None, &ctx, false);
                let warnings = ctx.warnings.into_inner();
                for (code, msg) in warnings {
                    self.state.warnings.push(("Warning", code, msg));
                }
                r
            }
            Plan::Select(s) => {
                self.with_txn(params, false, self.state.select_deadline(), |txn, ctx| {
                    if txn.isolation() == IsolationLevel::Serializable
                        && serializable_lock
                        && s.lock == LockMode::None
                    {
                        // InnoDB: under SERIALIZABLE, plain SELECTs in a multi-statement
                        // transaction are locking reads. (Joins and subqueries read
                        // their snapshot: see docs/architecture/transactions.md.)
                        crate::exec::select::run_select(s, Some(txn), ctx, true)
                    } else {
                        crate::exec::select::run_select(s, Some(txn), ctx, false)
                    }
                })
            }
            // Strict mode: the statement fails (and its writes roll back) on
            // a warning the mode makes an error; INSERT IGNORE keeps them
            // warnings.
            Plan::Insert(i) => self.with_txn(params, true, None, |txn, ctx| {
                let r = exec::run_insert(i, txn, ctx, &mut effects, found_rows)?;
                match ctx.strict_mode_error() {
                    Some(e) if !i.ignore => Err(e),
                    _ => Ok(r),
                }
            }),
            Plan::Update(u) => self.with_txn(params, true, None, |txn, ctx| {
                let r = exec::run_update(u, txn, ctx, found_rows, &mut effects)?;
                ctx.strict_mode_error().map_or(Ok(r), Err)
            }),
            Plan::Delete(d) => self.with_txn(params, true, None, |txn, ctx| {
                let r = exec::run_delete(d, txn, ctx)?;
                ctx.strict_mode_error().map_or(Ok(r), Err)
            }),
        }?;
        if let Some(id) = effects.generated_id {
            self.state.last_insert_id = id;
        }
        for (code, msg) in effects.warnings {
            self.state.warnings.push(("Warning", code, msg));
        }
        match &result {
            QueryResult::Ok { affected_rows, .. } => self.state.row_count = *affected_rows as i64,
            QueryResult::Rows { rows, .. } => {
                self.state.row_count = -1;
                self.state.found_rows = rows.len() as u64;
            }
        }
        if let QueryResult::Ok { affected_rows, .. } = &result {
            // Statistics upkeep (crate::catalog::stats): one atomic add on the table's
            // own counters; an analysis, when due, runs in the background.
            let n = *affected_rows;
            let (table, due) = match plan {
                Plan::Insert(i) => (&i.table, i.table.stats.note_changes(n, 0, 0)),
                // An UPDATE that assigns no key column leaves every n_diff as it
                // was: it is no reason to analyse the table again.
                Plan::Update(u) => {
                    let changed = if u.assigns_key_column() { n } else { 0 };
                    (&u.table, u.table.stats.note_changes(0, 0, changed))
                }
                Plan::Delete(d) => (&d.table, d.table.stats.note_changes(0, n, 0)),
                Plan::Select(_) => return Ok(result),
            };
            if let Some(delay) = due {
                self.state.engine.spawn_analysis(table.clone(), delay);
            }
        }
        Ok(result)
    }

    /// Ends the open transaction (BEGIN, and the implicit commit of DDL),
    /// durably, and releases the catalog pin: a DDL must not wait for itself.
    fn commit(&mut self) -> Result<()> {
        self.commit_open(false)
    }

    /// [`Session::commit`]; with `deferrable`, the statement ends with it (COMMIT)
    /// and its durability wait may be left to the caller.
    fn commit_open(&mut self, deferrable: bool) -> Result<()> {
        let r = match self.txn.take() {
            Some(t) => {
                self.count(Counter::HandlerCommit);
                self.commit_txn(t, deferrable)
            }
            None => Ok(()),
        };
        self.unpin();
        r
    }

    /// Commits `t`: writes it, then waits until it is durable — or, when the
    /// statement ends with this commit and the caller asked for deferred
    /// durability, leaves that wait in `pending_commit`.
    fn commit_txn(&mut self, t: Transaction, deferrable: bool) -> Result<()> {
        let c = t.commit_deferred()?;
        if deferrable && self.defer_durability && !c.is_done() {
            debug_assert!(self.pending_commit.is_none(), "settled at every entry");
            self.pending_commit = Some(c);
            Ok(())
        } else {
            c.wait()
        }
    }

    /// Waits (blocking) for a pending commit the caller did not take.
    fn settle(&mut self) -> Result<()> {
        match self.pending_commit.take() {
            Some(c) => c.wait(),
            None => Ok(()),
        }
    }

    /// Deferred durability: a COMMIT or autocommitted statement that ends a
    /// request leaves its wait for durability to the caller, who must take it
    /// with [`Session::take_pending_commit`] and await it before answering (see
    /// the module doc). Off by default: every commit waits in place.
    pub fn set_deferred_durability(&mut self, on: bool) {
        self.defer_durability = on;
    }

    /// The commit the last request wrote but did not wait for, if any. The
    /// request's result may be sent only once it is durable; if it fails, the
    /// request fails with its error. Not taken, the next request waits for it.
    pub fn take_pending_commit(&mut self) -> Option<Committing> {
        self.pending_commit.take()
    }

    /// Asynchronous row lock waits. With `on`, a single-statement request
    /// ([`Session::execute`] of one statement, [`Session::execute_prepared`])
    /// that must wait for a row lock does not block: it fails with
    /// [`Error::LockWaitPending`] — the statement rolled back, its transaction
    /// (even an autocommit statement's) kept open and queued for the lock.
    /// The caller then awaits [`Session::lock_wait`] (and a KILL: the kill
    /// hook wakes it, [`Session::interrupted`] tells), calls
    /// [`Session::end_lock_wait`],
    /// and on `Ok` sends the same request again; the statement runs again with
    /// the lock its own, counted and timed as one statement. A
    /// multi-statement request still blocks. Off by default.
    pub fn set_async_lock_waits(&mut self, on: bool) {
        self.async_lock_waits = on;
    }

    /// The row lock wait the last request stopped at (see
    /// [`Session::set_async_lock_waits`]).
    pub fn lock_wait(&self) -> Option<LockWait> {
        self.txn.as_ref().and_then(|t| t.lock_wait())
    }

    /// Whether KILL QUERY or KILL CONNECTION asked this session to stop.
    pub fn interrupted(&self) -> bool {
        self.state.process.kill_state() != 0
    }

    /// Ends the row lock wait of the last request: `give_up` `None` once
    /// [`Session::lock_wait`] has resolved — `Ok`, and the caller sends the
    /// request again. `Some(e)` when the wait timed out
    /// ([`Error::LockWaitTimeout`]) or was killed ([`Error::Interrupted`]): the
    /// statement fails with `e` as if it had blocked (an autocommit
    /// statement's transaction rolls back, an explicit one stays open) — or,
    /// if the lock was handed over meanwhile, `Ok` as above.
    pub fn end_lock_wait(&mut self, give_up: Option<Error>) -> Result<()> {
        let r = match self.txn.as_mut() {
            Some(t) => t.end_lock_wait(give_up),
            None => Ok(()),
        };
        if let Err(e) = &r {
            if std::mem::take(&mut self.implicit_txn) {
                if let Some(t) = self.txn.take() {
                    self.count(Counter::HandlerRollback);
                    t.rollback();
                }
            }
            self.unpin_if_idle();
            self.record_error(e);
            if let Some(start) = self.lock_retry.take() {
                self.end_statement(start);
            }
        }
        r
    }

    /// Marks the start of a client request: a fresh one is shown in the
    /// process list and timed; one sent again after a lock wait continues the
    /// first's. Returns the start time.
    fn request_start(&mut self, text: &str) -> std::time::Instant {
        match self.lock_retry {
            Some(start) => start,
            None => {
                self.state.process.begin_statement(text);
                std::time::Instant::now()
            }
        }
    }

    /// Marks the end of a client request (see [`Session::request_start`]):
    /// one stopped at a lock wait stays running.
    fn request_end<T>(&mut self, start: std::time::Instant, r: &Result<T>) {
        self.defer_waits_now = false;
        if matches!(r, Err(Error::LockWaitPending)) {
            self.lock_retry = Some(start);
        } else {
            self.lock_retry = None;
            self.end_statement(start);
        }
    }

    /// Releases the catalog pin once no transaction is open (rule P1 of
    /// `crate::ddl::alter`: a pin lives as long as the transaction).
    fn unpin_if_idle(&self) {
        if self.txn.is_none() {
            self.unpin();
        }
    }

    fn unpin(&self) {
        self.pin.store(
            crate::catalog::engine::PIN_IDLE,
            std::sync::atomic::Ordering::SeqCst,
        );
    }

    /// Runs one parsed statement. `sql` is the whole text (for a few checks that
    /// sqlparser's AST does not preserve); empty for prepared statements.
    fn run(&mut self, parsed: &Parsed, params: &[Value], sql: &str) -> Result<QueryResult> {
        if self.lock_retry.is_none() {
            self.count(Counter::Questions);
            if let Some(c) = command_counter(parsed) {
                self.count(c);
            }
        }
        if !matches!(parsed, Parsed::ShowWarnings { .. }) {
            self.state.warnings.clear();
        }
        self.state.engine.pin_catalog(&self.pin);
        let r = self.run_inner(parsed, params, sql);
        self.unpin_if_idle();
        if let Err(e) = &r {
            self.record_error(e);
        }
        if matches!(parsed, Parsed::ShowWarnings { .. }) {
            r
        } else {
            self.with_warning_count(r)
        }
    }

    fn run_inner(&mut self, parsed: &Parsed, params: &[Value], sql: &str) -> Result<QueryResult> {
        let cat = self.state.engine.catalog();
        if let Some(plan) = self.plan_dml(&cat, parsed)? {
            drop(cat);
            return self.run_plan(&plan, params);
        }
        let engine = self.state.engine.clone();
        let stmt = match parsed {
            Parsed::Sql(s) => s,
            Parsed::CreateUser {
                user,
                host,
                plugin,
                password,
                if_not_exists,
            } => {
                self.state.check_super(&cat, "CREATE USER")?;
                let plugin = auth_plugin(plugin.as_deref())?.unwrap_or(AuthPlugin::NativePassword);
                self.commit()?;
                engine.create_user(user, host, plugin, password, *if_not_exists)?;
                return Ok(ok(0));
            }
            Parsed::AlterUser {
                account,
                plugin,
                password,
                if_exists,
            } => {
                // Anyone may change their own password (SET PASSWORD, or ALTER
                // USER naming their own account); other accounts need CREATE USER.
                let own = self
                    .state
                    .account(&cat)
                    .map(|u| (u.user.clone(), u.host.clone()));
                let (user, host) = match (account, &own) {
                    (Some(a), _) => a.clone(),
                    (None, Some(own)) => own.clone(),
                    (None, None) => return Err(Error::SpecificAccessDenied("SET PASSWORD".into())),
                };
                if own.as_ref() != Some(&(user.clone(), host.clone())) {
                    self.state.check_super(&cat, "CREATE USER")?;
                }
                let plugin = auth_plugin(plugin.as_deref())?;
                self.commit()?;
                engine.alter_user_password(&user, &host, plugin, password, *if_exists)?;
                return Ok(ok(0));
            }
            Parsed::Grant {
                privs,
                target,
                accounts,
                grant_option,
            } => {
                let level = self.grant_level(target)?;
                let privs = privs.at(&level);
                level.check_grantable(privs)?;
                let may = self
                    .state
                    .account(&cat)
                    .is_some_and(|u| u.may_grant(&level, privs));
                if !may {
                    return Err(self.grant_denied(&level));
                }
                for (user, host) in accounts {
                    if !cat.users.contains_key(&(user.clone(), host.clone())) {
                        return Err(Error::NoSuchUser(format!("'{user}'@'{host}'")));
                    }
                }
                self.commit()?;
                for (user, host) in accounts {
                    engine.grant(user, host, &level, privs, *grant_option)?;
                }
                return Ok(ok(0));
            }
            Parsed::Revoke {
                privs,
                target,
                accounts,
                grant_option,
            } => {
                let level = match target {
                    Some(t) => Some(self.grant_level(t)?),
                    None => None,
                };
                let may = self.state.account(&cat).is_some_and(|u| match &level {
                    Some(l) => u.may_grant(l, privs.at(l)),
                    None => u.allows_global(Privs::CREATE_USER),
                });
                if !may {
                    return Err(match &level {
                        Some(l) => self.grant_denied(l),
                        None => Error::SpecificAccessDenied("CREATE USER".into()),
                    });
                }
                self.commit()?;
                for (user, host) in accounts {
                    match &level {
                        Some(l) => engine.revoke(user, host, l, privs.at(l), *grant_option)?,
                        None => {
                            // Every level the account holds grants at.
                            let def = cat
                                .users
                                .get(&(user.clone(), host.clone()))
                                .ok_or_else(|| Error::NoSuchUser(format!("'{user}'@'{host}'")))?;
                            for g in &def.grants {
                                let l = g.level();
                                engine.revoke(user, host, &l, PrivSpec::All.at(&l), true)?;
                            }
                        }
                    }
                }
                return Ok(ok(0));
            }
            Parsed::AlterKeys { table } => {
                let (db, t) = match table.as_slice() {
                    [t] => (
                        self.state.db.clone().ok_or(Error::NoDatabaseSelected)?,
                        t.clone(),
                    ),
                    [d, t] => (d.clone(), t.clone()),
                    _ => return Err(Error::Syntax("ALTER TABLE".into())),
                };
                self.state.check_db(&cat, &db, "ALTER", Some(&t))?;
                if cat.table(&db, &t).is_none() {
                    return Err(Error::UnknownTable { db, table: t });
                }
                self.commit()?;
                // What InnoDB answers: a note, nothing done.
                self.note(
                    1031,
                    format!("Table storage engine for '{t}' doesn't have this option"),
                );
                return Ok(ok(0));
            }
            Parsed::ShowGrants { account } => {
                let def = match account {
                    None => self.state.account(&cat),
                    Some((user, host)) => {
                        let own = self
                            .state
                            .account(&cat)
                            .is_some_and(|u| (&u.user, &u.host) == (user, host));
                        let may = own
                            || self
                                .state
                                .account(&cat)
                                .is_some_and(|u| u.allows_global(Privs::CREATE_USER));
                        if !may {
                            // MySQL: another account's grants need SELECT on
                            // the mysql system database (1044); Canyon has no
                            // such database and asks for CREATE USER instead.
                            return Err(Error::DbAccessDenied {
                                user: self.state.user.clone(),
                                host: self.state.host.clone(),
                                db: "mysql".into(),
                            });
                        }
                        Some(
                            cat.users
                                .get(&(user.clone(), host.clone()))
                                .cloned()
                                .ok_or_else(|| Error::NonexistingGrant {
                                    user: user.clone(),
                                    host: host.clone(),
                                })?,
                        )
                    }
                };
                let def = def.ok_or_else(|| Error::SpecificAccessDenied("SHOW GRANTS".into()))?;
                let rows = def
                    .show_grants()
                    .iter()
                    .map(|l| vec![Value::str(l)])
                    .collect();
                let title = format!("Grants for {}@{}", def.user, def.host);
                return Ok(text_rows(&[title.as_str()], rows));
            }
            Parsed::DropUser {
                user,
                host,
                if_exists,
            } => {
                self.state.check_super(&cat, "CREATE USER")?;
                self.commit()?;
                engine.drop_user(user, host, *if_exists)?;
                return Ok(ok(0));
            }
            Parsed::Analyze { tables } => {
                // As MySQL: one result row per table, errors reported in the
                // rows rather than failing the statement.
                let mut rows = Vec::new();
                for parts in tables {
                    let (db, name) = match parts.as_slice() {
                        [t] => (
                            self.state.db.clone().ok_or(Error::NoDatabaseSelected)?,
                            t.clone(),
                        ),
                        [d, t] => (d.clone(), t.clone()),
                        _ => return Err(Error::Syntax("ANALYZE TABLE".into())),
                    };
                    self.state.check_db(&cat, &db, "SELECT", Some(&name))?;
                    let label = Value::str(&format!("{db}.{name}"));
                    let (kind, text) = match cat.table(&db, &name) {
                        None => ("Error", format!("Table '{db}.{name}' doesn't exist")),
                        Some(t) if !t.stats.begin_analysis() => {
                            ("status", "Analysis already running".to_string())
                        }
                        // Asked for, an analysis reads every key: exact, and
                        // it resets the running row count.
                        Some(t) => {
                            match engine.analyze_table(t, crate::catalog::stats::Method::Scan) {
                                Ok(()) => ("status", "OK".to_string()),
                                Err(e) => ("Error", e.to_string()),
                            }
                        }
                    };
                    rows.push(vec![
                        label,
                        Value::str("analyze"),
                        Value::str(kind),
                        Value::str(&text),
                    ]);
                }
                return Ok(text_rows(&["Table", "Op", "Msg_type", "Msg_text"], rows));
            }
            Parsed::ShowWarnings { errors_only } => {
                let rows = self
                    .state
                    .warnings
                    .iter()
                    .filter(|w| !errors_only || w.0 == "Error")
                    .map(|(level, code, msg)| {
                        vec![Value::str(level), Value::Int(*code as i64), Value::str(msg)]
                    })
                    .collect();
                return Ok(text_rows(&["Level", "Code", "Message"], rows));
            }
        };
        match stmt.as_ref() {
            Statement::StartTransaction { modes, .. } => {
                self.commit()?;
                let mut iso = self
                    .state
                    .next_isolation
                    .take()
                    .unwrap_or(self.state.isolation);
                let mut read_only = self
                    .state
                    .next_read_only
                    .take()
                    .unwrap_or(self.state.read_only);
                for m in modes {
                    match m {
                        ast::TransactionMode::IsolationLevel(l) => iso = map_isolation(l),
                        ast::TransactionMode::AccessMode(a) => {
                            read_only = matches!(a, ast::TransactionAccessMode::ReadOnly)
                        }
                    }
                }
                self.state.txn_read_only = read_only;
                let mut t = self.txn_session.begin(iso);
                t.set_lock_wait_timeout(self.state.lock_wait_timeout);
                t.set_interrupt(Some(self.state.process.kill_flag().clone()));
                if sql.to_ascii_uppercase().contains("CONSISTENT SNAPSHOT") {
                    // Snapshots are taken lazily, at the first read; this one
                    // is taken now, as MySQL does.
                    t.begin_statement();
                    t.snapshot_ts()?;
                }
                self.txn = Some(t);
                Ok(ok(0))
            }
            Statement::Commit { chain: false, .. } => {
                self.commit_open(true)?;
                Ok(ok(0))
            }
            Statement::Rollback {
                chain: false,
                savepoint: None,
            } => {
                if let Some(t) = self.txn.take() {
                    self.count(Counter::HandlerRollback);
                    t.rollback();
                }
                Ok(ok(0))
            }
            Statement::Savepoint { name } => {
                // With autocommit and no open transaction a savepoint marks
                // nothing (MySQL accepts it); with autocommit=0 the
                // transaction starts here.
                if self.txn.is_none() && !self.state.autocommit {
                    self.with_txn(params, false, None, |_, _| Ok(()))?;
                }
                if let Some(t) = self.txn.as_mut() {
                    t.set_savepoint(&name.value);
                }
                Ok(ok(0))
            }
            Statement::Rollback {
                chain: false,
                savepoint: Some(name),
            } => {
                let done = self
                    .txn
                    .as_mut()
                    .is_some_and(|t| t.rollback_to_savepoint(&name.value));
                if done {
                    Ok(ok(0))
                } else {
                    Err(Error::NoSuchSavepoint(name.value.clone()))
                }
            }
            Statement::ReleaseSavepoint { name } => {
                let done = self
                    .txn
                    .as_mut()
                    .is_some_and(|t| t.release_savepoint(&name.value));
                if done {
                    Ok(ok(0))
                } else {
                    Err(Error::NoSuchSavepoint(name.value.clone()))
                }
            }
            Statement::LockTables { tables } => self.lock_tables(&cat, tables),
            Statement::UnlockTables => {
                // MySQL: UNLOCK TABLES commits the transaction LOCK TABLES
                // began; with no tables locked it does nothing.
                if std::mem::take(&mut self.state.table_locks) {
                    self.state.txn_read_only = false;
                    self.commit()?;
                }
                Ok(ok(0))
            }
            Statement::Set(set) => self.run_set(set, params, sql),
            Statement::Use(u) => {
                let name = match u {
                    ast::Use::Object(n) | ast::Use::Database(n) | ast::Use::Schema(n) => {
                        object_name(n)
                    }
                    _ => return Err(Error::Unsupported("this USE form".into())),
                };
                let db = name.last().cloned().unwrap_or_default();
                self.use_database(&db)?;
                Ok(ok(0))
            }
            Statement::CreateDatabase {
                db_name,
                if_not_exists,
                default_charset,
                default_collation,
                ..
            } => {
                let name = object_name(db_name).last().cloned().unwrap_or_default();
                self.state.check_db(&cat, &name, "CREATE", None)?;
                let collation = crate::types::collation::Collation::resolve(
                    default_charset.as_deref(),
                    default_collation.as_deref(),
                    crate::types::collation::Collation::DEFAULT,
                )?;
                self.commit()?;
                let created = engine.create_database(&name, *if_not_exists, collation)?;
                if !created {
                    self.note(
                        1007,
                        format!("Can't create database '{name}'; database exists"),
                    );
                }
                Ok(ok(created as u64))
            }
            Statement::CreateSchema { .. } => {
                Err(Error::Unsupported("CREATE SCHEMA with options".into()))
            }
            Statement::Drop {
                object_type,
                if_exists,
                names,
                table,
                ..
            } => {
                self.commit()?;
                match object_type {
                    ast::ObjectType::Database | ast::ObjectType::Schema => {
                        let mut n = 0;
                        for name in names {
                            let db = object_name(name).last().cloned().unwrap_or_default();
                            self.state.check_db(&cat, &db, "DROP", None)?;
                            match engine.drop_database(&db, *if_exists, self.fk_checks()?)? {
                                Some(k) => {
                                    n += k;
                                    if self.state.db.as_deref() == Some(db.as_str()) {
                                        self.state.db = None;
                                        self.state.process.set_db(None);
                                    }
                                }
                                None => self.note(
                                    1008,
                                    format!("Can't drop database '{db}'; database doesn't exist"),
                                ),
                            }
                        }
                        Ok(ok(n as u64))
                    }
                    ast::ObjectType::Table => {
                        let checks = self.fk_checks()?;
                        let all = names
                            .iter()
                            .map(|n| self.split_name(n))
                            .collect::<Result<Vec<_>>>()?;
                        for (i, (db, t)) in all.iter().enumerate() {
                            let (db, t) = (db.clone(), t.clone());
                            self.state.check_db(&cat, &db, "DROP", Some(&t))?;
                            if !engine.drop_table(&db, &t, *if_exists, checks, &all[i + 1..])? {
                                self.note(1051, format!("Unknown table '{db}.{t}'"));
                            }
                        }
                        Ok(ok(0))
                    }
                    ast::ObjectType::Index => {
                        let table = table
                            .as_ref()
                            .ok_or_else(|| Error::Syntax("DROP INDEX needs ON table".into()))?;
                        let (db, t) = self.split_name(table)?;
                        self.state.check_db(&cat, &db, "INDEX", Some(&t))?;
                        for name in names {
                            let idx = object_name(name).last().cloned().unwrap_or_default();
                            engine.drop_index(&db, &t, &idx)?;
                        }
                        Ok(alter_ok())
                    }
                    other => Err(Error::Unsupported(format!("DROP {other}"))),
                }
            }
            Statement::CreateTable(ct) => {
                let (db, t) = self.split_name(&ct.name)?;
                // The privilege first (MySQL answers 1044 before 1049).
                self.state.check_db(&cat, &db, "CREATE", Some(&t))?;
                let Some(database) = cat.databases.get(&db) else {
                    return Err(Error::UnknownDatabase(db));
                };
                let def = crate::ddl::create_table(ct, database.default_collation)?;
                self.commit()?;
                let checks = self.fk_checks()?;
                if !engine.create_table(&db, &t, def, ct.if_not_exists, checks)? {
                    self.note(1050, format!("Table '{t}' already exists"));
                }
                Ok(ok(0))
            }
            Statement::CreateIndex(ci) => {
                let (db, t) = self.split_name(&ci.table_name)?;
                self.state.check_db(&cat, &db, "INDEX", Some(&t))?;
                if cat.table(&db, &t).is_none() {
                    return Err(Error::UnknownTable { db, table: t });
                }
                let op = crate::ddl::alter::AlterOp::AddIndex {
                    name: ci
                        .name
                        .as_ref()
                        .and_then(|n| object_name(n).last().cloned()),
                    columns: crate::ddl::create_index_column_names(ci)?,
                    unique: ci.unique,
                };
                self.commit()?;
                drop(cat);
                engine.alter_table(&db, &t, vec![op])?;
                Ok(alter_ok())
            }
            Statement::AlterTable(at) => {
                let (db, t) = self.split_name(&at.name)?;
                self.state.check_db(&cat, &db, "ALTER", Some(&t))?;
                let Some(table) = cat.table(&db, &t) else {
                    return Err(Error::UnknownTable { db, table: t });
                };
                let default = table.def.default_collation;
                let checks = self.fk_checks()?;
                let ops = crate::ddl::alter_ops(at, default, &table.def.columns, checks, &|n| {
                    self.split_name(n)
                })?;
                for op in &ops {
                    if let crate::ddl::alter::AlterOp::RenameTo { db: to, .. } = op {
                        self.state.check_db(&cat, to, "CREATE", None)?;
                    }
                }
                // MySQL reports no record counts for a bare rename.
                let rename_only = ops
                    .iter()
                    .all(|o| matches!(o, crate::ddl::alter::AlterOp::RenameTo { .. }));
                self.commit()?;
                drop(cat);
                engine.alter_table(&db, &t, ops)?;
                Ok(if rename_only { ok(0) } else { alter_ok() })
            }
            Statement::RenameTable(list) => {
                let mut pairs = Vec::with_capacity(list.len());
                for r in list {
                    let (db, t) = self.split_name(&r.old_name)?;
                    let (to_db, to) = self.split_name(&r.new_name)?;
                    self.state.check_db(&cat, &db, "ALTER", Some(&t))?;
                    self.state.check_db(&cat, &to_db, "CREATE", None)?;
                    pairs.push((db, t, to_db, to));
                }
                self.commit()?;
                drop(cat);
                // MySQL renames the pairs atomically; Canyon one after the other.
                for (db, t, to_db, to) in pairs {
                    engine.rename_table(&db, &t, &to_db, &to)?;
                }
                Ok(ok(0))
            }
            Statement::Truncate(tr) => {
                self.commit()?;
                for target in &tr.table_names {
                    let (db, t) = self.split_name(&target.name)?;
                    self.state.check_db(&cat, &db, "DROP", Some(&t))?;
                    engine.truncate_table(&db, &t, self.fk_checks()?)?;
                }
                Ok(ok(0))
            }
            // GRANT / REVOKE are parsed by `parse`; a form it does not know
            // never reaches sqlparser's (Snowflake-shaped) statements.
            Statement::Grant(_) | Statement::Revoke(_) => {
                Err(Error::Unsupported("this form of GRANT / REVOKE".into()))
            }
            Statement::ShowVariables { filter, global, .. } => {
                let pattern = like_filter(filter.as_ref())?;
                let mut rows = Vec::new();
                for name in vars::NAMES {
                    if pattern
                        .as_ref()
                        .is_some_and(|p| !crate::expr::like(name.as_bytes(), p.as_bytes(), b'\\'))
                    {
                        continue;
                    }
                    let v = if *global {
                        engine.global_var(name).unwrap_or(Value::Null)
                    } else {
                        self.state.get_var(name)?
                    };
                    rows.push(vec![
                        Value::str(name),
                        Value::Bytes(v.to_text().unwrap_or_default()),
                    ]);
                }
                Ok(text_rows(&["Variable_name", "Value"], rows))
            }
            Statement::ShowDatabases { show_options, .. } => {
                let pattern = show_like(show_options)?;
                let header = match &pattern {
                    Some(p) => format!("Database ({p})"),
                    None => "Database".to_string(),
                };
                let mut account = self.state.account(&cat);
                let mut names: Vec<&str> = cat.databases.keys().map(String::as_str).collect();
                // Every account sees information_schema (MySQL lists it first:
                // it sorts before any name a user is likely to pick).
                names.push(crate::catalog::infoschema::NAME);
                names.sort_unstable();
                let rows = names
                    .into_iter()
                    .filter(|d| {
                        crate::catalog::infoschema::is_info_schema(d)
                            || account.as_mut().is_some_and(|a| a.can_use_db(d))
                    })
                    .filter(|d| {
                        pattern
                            .as_ref()
                            .is_none_or(|p| crate::expr::like(d.as_bytes(), p.as_bytes(), b'\\'))
                    })
                    .map(|d| vec![Value::str(d)])
                    .collect();
                Ok(text_rows(&[&header], rows))
            }
            Statement::ShowTables {
                show_options, full, ..
            } => {
                let db = match show_options
                    .show_in
                    .as_ref()
                    .and_then(|s| s.parent_name.as_ref())
                {
                    Some(n) => object_name(n).last().cloned().unwrap_or_default(),
                    None => self.state.db.clone().ok_or(Error::NoDatabaseSelected)?,
                };
                if crate::catalog::infoschema::is_info_schema(&db) {
                    let pattern = show_like(show_options)?;
                    let header = format!("Tables_in_{}", crate::catalog::infoschema::NAME);
                    let rows: Vec<Vec<Value>> = crate::catalog::infoschema::SystemTable::ALL
                        .iter()
                        .filter(|t| like_match(&pattern, t.name()))
                        .map(|t| {
                            let mut r = vec![Value::str(t.name())];
                            if *full {
                                r.push(Value::str("SYSTEM VIEW"));
                            }
                            r
                        })
                        .collect();
                    return if *full {
                        Ok(text_rows(&[&header, "Table_type"], rows))
                    } else {
                        Ok(text_rows(&[&header], rows))
                    };
                }
                let database = cat
                    .databases
                    .get(&db)
                    .ok_or_else(|| Error::UnknownDatabase(db.clone()))?;
                self.state.check_db(&cat, &db, "SHOW", None)?;
                let pattern = show_like(show_options)?;
                let header = format!("Tables_in_{db}");
                let rows: Vec<Vec<Value>> = database
                    .tables
                    .keys()
                    .filter(|t| {
                        pattern
                            .as_ref()
                            .is_none_or(|p| crate::expr::like(t.as_bytes(), p.as_bytes(), b'\\'))
                    })
                    .map(|t| {
                        if *full {
                            vec![Value::str(t), Value::str("BASE TABLE")]
                        } else {
                            vec![Value::str(t)]
                        }
                    })
                    .collect();
                if *full {
                    Ok(text_rows(&[&header, "Table_type"], rows))
                } else {
                    Ok(text_rows(&[&header], rows))
                }
            }
            Statement::ShowColumns {
                show_options, full, ..
            } => {
                let name = show_options
                    .show_in
                    .as_ref()
                    .and_then(|s| s.parent_name.as_ref())
                    .ok_or_else(|| Error::Syntax("SHOW COLUMNS needs FROM table".into()))?;
                if *full {
                    self.show_full_columns(&cat, name)
                } else {
                    self.describe(&cat, name)
                }
            }
            Statement::ShowCreate {
                obj_type: ast::ShowCreateObject::Table,
                obj_name,
            } => self.show_create_table(&cat, obj_name),
            Statement::ShowCharset(c) => {
                let pattern = like_filter(c.filter.as_ref())?;
                let rows = crate::types::collation::CHARSETS
                    .iter()
                    .filter(|r| like_match(&pattern, r.0))
                    .map(|(c, coll, d, len)| {
                        vec![
                            Value::str(c),
                            Value::str(d),
                            Value::str(coll.name()),
                            Value::Int(*len as i64),
                        ]
                    })
                    .collect();
                Ok(typed_rows(
                    &[
                        ("Charset", ExprKind::String),
                        ("Description", ExprKind::String),
                        ("Default collation", ExprKind::String),
                        ("Maxlen", ExprKind::Int),
                    ],
                    rows,
                ))
            }
            Statement::ShowCollation { filter } => {
                let pattern = like_filter(filter.as_ref())?;
                let rows = crate::types::collation::Collation::ALL
                    .into_iter()
                    .filter(|c| like_match(&pattern, c.name()))
                    .map(|c| {
                        vec![
                            Value::str(c.name()),
                            Value::str(c.charset()),
                            Value::Int(c.id() as i64),
                            Value::str(if c.is_default() { "Yes" } else { "" }),
                            Value::str("Yes"),
                            Value::Int(1),
                            Value::str(if c.pad_space() { "PAD SPACE" } else { "NO PAD" }),
                        ]
                    })
                    .collect();
                Ok(typed_rows(
                    &[
                        ("Collation", ExprKind::String),
                        ("Charset", ExprKind::String),
                        ("Id", ExprKind::Int),
                        ("Default", ExprKind::String),
                        ("Compiled", ExprKind::String),
                        ("Sortlen", ExprKind::Int),
                        ("Pad_attribute", ExprKind::String),
                    ],
                    rows,
                ))
            }
            Statement::ShowStatus { filter, global, .. } => {
                let pattern = like_filter(filter.as_ref())?;
                let rows = self
                    .status_rows(*global)
                    .into_iter()
                    .filter(|r| like_match(&pattern, &r.0))
                    .map(|(n, v)| vec![Value::str(&n), Value::str(&v.to_string())])
                    .collect();
                Ok(text_rows(&["Variable_name", "Value"], rows))
            }
            Statement::Flush {
                object_type: ast::FlushType::Status,
                ..
            } => {
                // MySQL: the session's counts join the global ones, then
                // restart from zero; GLOBAL totals never go back.
                let counts = std::mem::take(&mut self.state.counts);
                engine.status.fold(&counts);
                self.state.process.end_statement(&self.state.counts);
                self.state.flushed_at = std::time::Instant::now();
                Ok(ok(0))
            }
            Statement::ExplainTable { table_name, .. } => self.describe(&cat, table_name),
            Statement::Kill { modifier, id } => {
                let how = match modifier {
                    Some(ast::KillType::Query) => KILL_QUERY,
                    Some(ast::KillType::Connection) | None => KILL_CONNECTION,
                    Some(ast::KillType::Mutation) => {
                        return Err(Error::Unsupported("KILL MUTATION".into()))
                    }
                };
                self.kill(&cat, *id, how)
            }
            Statement::ShowProcessList { full } => {
                let see_all = self
                    .state
                    .account(&cat)
                    .is_some_and(|a| a.allows_global(Privs::PROCESS));
                let rows = process_rows(&engine, &self.state.user, see_all)
                    .into_iter()
                    .map(|p| {
                        // Info: the statement, its first 100 characters without FULL.
                        let info = if !p.running {
                            Value::Null
                        } else if *full {
                            Value::str(&p.info)
                        } else {
                            Value::str(&p.info.chars().take(100).collect::<String>())
                        };
                        vec![
                            Value::UInt(p.id as u64),
                            Value::str(&p.user),
                            Value::str(&p.host),
                            p.db.as_deref().map_or(Value::Null, Value::str),
                            Value::str(if p.running { "Query" } else { "Sleep" }),
                            Value::Int(p.time),
                            Value::str(if p.running { "executing" } else { "" }),
                            info,
                        ]
                    })
                    .collect();
                use ExprKind::{Int, String as Str, UInt};
                Ok(typed_rows(
                    &[
                        ("Id", UInt),
                        ("User", Str),
                        ("Host", Str),
                        ("db", Str),
                        ("Command", Str),
                        ("Time", Int),
                        ("State", Str),
                        ("Info", Str),
                    ],
                    rows,
                ))
            }
            Statement::Explain {
                statement,
                analyze,
                format,
                ..
            } => {
                // Plans (and checks privileges) exactly as the statement itself
                // would, then describes the plan; nothing is executed.
                if *analyze {
                    return Err(Error::Unsupported("EXPLAIN ANALYZE".into()));
                }
                let format = crate::plan::explain::Format::from_ast(format.as_ref())?;
                let copy = Box::new(limits::clone_statement(statement));
                match self.plan_dml(&cat, &Parsed::Sql(copy))? {
                    Some(plan) => Ok(crate::plan::explain::explain(&plan, format)),
                    None => Err(Error::Unsupported("EXPLAIN of this statement".into())),
                }
            }
            other => Err(Error::Unsupported(statement_kind(other))),
        }
    }

    /// KILL [QUERY | CONNECTION] id. An account may kill its own user's
    /// sessions; global privileges (MySQL's SUPER / CONNECTION_ADMIN) kill any.
    /// Killing the own session fails this very statement with 1317, as MySQL.
    fn kill(&mut self, cat: &Catalog, id: u64, how: u32) -> Result<QueryResult> {
        let targets = u32::try_from(id)
            .map(|i| self.state.engine.processes.find(i))
            .unwrap_or_default();
        if targets.is_empty() {
            return Err(Error::UnknownThread(id));
        }
        let superuser = self.state.account(cat).is_some_and(|a| a.is_superuser());
        if !superuser && targets.iter().any(|p| p.user != self.state.user) {
            return Err(Error::KillDenied(id));
        }
        let mut own = false;
        for p in &targets {
            own |= Arc::ptr_eq(p, &self.state.process);
            p.kill(how);
        }
        if own {
            if how == KILL_QUERY {
                // The flag was meant for this statement: it ends here.
                self.state.process.begin_statement("");
            }
            return Err(Error::Interrupted);
        }
        Ok(ok(0))
    }

    /// The session's `foreign_key_checks`.
    fn fk_checks(&self) -> Result<bool> {
        Ok(self.state.get_var("foreign_key_checks")?.to_i64() != Some(0))
    }

    fn split_name(&self, n: &ast::ObjectName) -> Result<(String, String)> {
        let parts = object_name(n);
        match parts.as_slice() {
            [t] => Ok((
                self.state.db.clone().ok_or(Error::NoDatabaseSelected)?,
                t.clone(),
            )),
            [d, t] => Ok((d.clone(), t.clone())),
            _ => Err(Error::Syntax(n.to_string())),
        }
    }

    fn describe(&mut self, cat: &Catalog, name: &ast::ObjectName) -> Result<QueryResult> {
        let (db, t) = self.split_name(name)?;
        self.state.check_db(cat, &db, "SELECT", Some(&t))?;
        let table = cat.table(&db, &t).ok_or_else(|| Error::UnknownTable {
            db: db.clone(),
            table: t.clone(),
        })?;
        let rows = table
            .def
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let key = if table.def.primary_key.contains(&i) {
                    "PRI"
                } else if table
                    .def
                    .public_indexes()
                    .any(|(_, x)| x.unique && x.columns.len() == 1 && x.columns[0] == i)
                {
                    "UNI"
                } else if table
                    .def
                    .public_indexes()
                    .any(|(_, x)| x.columns.first() == Some(&i))
                {
                    "MUL"
                } else {
                    ""
                };
                let default = match &c.default {
                    None | Some(crate::catalog::DefaultValue::Null) => Value::Null,
                    Some(crate::catalog::DefaultValue::Literal(s))
                    | Some(crate::catalog::DefaultValue::Number(s)) => Value::str(s),
                    Some(crate::catalog::DefaultValue::CurrentTimestamp) => {
                        Value::str("CURRENT_TIMESTAMP")
                    }
                };
                vec![
                    Value::str(&c.name),
                    Value::str(&c.ty.sql_name()),
                    Value::str(if c.nullable { "YES" } else { "NO" }),
                    Value::str(key),
                    default,
                    Value::str(if c.auto_increment {
                        "auto_increment"
                    } else {
                        ""
                    }),
                ]
            })
            .collect();
        Ok(text_rows(
            &["Field", "Type", "Null", "Key", "Default", "Extra"],
            rows,
        ))
    }

    /// The table `name` names, after the SELECT privilege check (SHOW on a table).
    fn shown_table<'c>(
        &mut self,
        cat: &'c Catalog,
        name: &ast::ObjectName,
    ) -> Result<&'c crate::catalog::Table> {
        let (db, t) = self.split_name(name)?;
        self.show_table_named(cat, db, t)
    }

    fn show_table_named<'c>(
        &mut self,
        cat: &'c Catalog,
        db: String,
        t: String,
    ) -> Result<&'c crate::catalog::Table> {
        self.state.check_db(cat, &db, "SELECT", Some(&t))?;
        cat.table(&db, &t)
            .map(|t| &**t)
            .ok_or(Error::UnknownTable { db, table: t })
    }

    /// SHOW FULL COLUMNS: DESCRIBE's columns plus Collation, Privileges, Comment.
    fn show_full_columns(&mut self, cat: &Catalog, name: &ast::ObjectName) -> Result<QueryResult> {
        let table = self.shown_table(cat, name)?;
        let QueryResult::Rows { rows, .. } = self.describe(cat, name)? else {
            return Err(Error::Internal("DESCRIBE returned no rows".into()));
        };
        let rows = rows
            .into_iter()
            .zip(&table.def.columns)
            .map(|(mut r, c)| {
                let collation = if c.ty.is_string() && !c.ty.is_binary() {
                    Value::str(c.collation.name())
                } else {
                    Value::Null
                };
                r.insert(2, collation);
                r.push(Value::str("select,insert,update,references"));
                r.push(Value::str(""));
                r
            })
            .collect();
        Ok(text_rows(
            &[
                "Field",
                "Type",
                "Collation",
                "Null",
                "Key",
                "Default",
                "Extra",
                "Privileges",
                "Comment",
            ],
            rows,
        ))
    }

    /// SHOW CREATE TABLE: a CREATE TABLE statement that re-creates the table.
    fn show_create_table(&mut self, cat: &Catalog, name: &ast::ObjectName) -> Result<QueryResult> {
        let table = self.shown_table(cat, name)?;
        let def = &table.def;
        let quote = |n: &str| format!("`{}`", n.replace('`', "``"));
        let col_list = |cols: &[usize]| {
            cols.iter()
                .map(|&i| quote(&def.columns[i].name))
                .collect::<Vec<_>>()
                .join(",")
        };
        let mut lines = Vec::new();
        for c in &def.columns {
            let mut l = format!("  {} {}", quote(&c.name), c.ty.sql_name());
            // As MySQL 8: the column's collation where it is not the table's.
            let table_coll = def.default_collation;
            if c.ty.is_string() && !c.ty.is_binary() && c.collation != table_coll {
                if c.collation.charset() != table_coll.charset() {
                    l.push_str(&format!(" CHARACTER SET {}", c.collation.charset()));
                }
                l.push_str(&format!(" COLLATE {}", c.collation.name()));
            }
            if !c.nullable {
                l.push_str(" NOT NULL");
            }
            match &c.default {
                Some(crate::catalog::DefaultValue::Literal(v))
                | Some(crate::catalog::DefaultValue::Number(v)) => {
                    l.push_str(&format!(
                        " DEFAULT '{}'",
                        v.replace('\\', "\\\\").replace('\'', "''")
                    ));
                }
                Some(crate::catalog::DefaultValue::CurrentTimestamp) => {
                    l.push_str(" DEFAULT CURRENT_TIMESTAMP");
                }
                Some(crate::catalog::DefaultValue::Null) | None if c.nullable => {
                    l.push_str(" DEFAULT NULL");
                }
                _ => {}
            }
            if c.auto_increment {
                l.push_str(" AUTO_INCREMENT");
            }
            lines.push(l);
        }
        if !def.primary_key.is_empty() {
            lines.push(format!("  PRIMARY KEY ({})", col_list(&def.primary_key)));
        }
        for (_, x) in def.public_indexes() {
            let kind = if x.unique { "UNIQUE KEY" } else { "KEY" };
            lines.push(format!(
                "  {kind} {} ({})",
                quote(&x.name),
                col_list(&x.columns)
            ));
        }
        for fk in &def.foreign_keys {
            lines.push(format!(
                "  {}",
                crate::exec::foreign::constraint_clause(def, fk)
            ));
        }
        let text = format!(
            "CREATE TABLE {} (\n{}\n) ENGINE=InnoDB DEFAULT CHARSET={} COLLATE={}",
            quote(&def.name),
            lines.join(",\n"),
            def.default_collation.charset(),
            def.default_collation.name(),
        );
        Ok(text_rows(
            &["Table", "Create Table"],
            vec![vec![Value::str(&def.name), Value::str(&text)]],
        ))
    }

    /// Runs a SHOW statement that sqlparser does not parse (see [`show_extra`]).
    fn run_show_extra(&mut self, show: &ShowExtra) -> Result<QueryResult> {
        match show {
            ShowExtra::Empty(columns) => Ok(text_rows(columns, Vec::new())),
            ShowExtra::TableStatus { db, like } => {
                let cat = self.state.engine.catalog();
                let db = match db {
                    Some(d) => d.clone(),
                    None => self.state.db.clone().ok_or(Error::NoDatabaseSelected)?,
                };
                self.state.check_db(&cat, &db, "SHOW", None)?;
                let mut rows = Vec::new();
                if crate::catalog::infoschema::is_info_schema(&db) {
                    for t in crate::catalog::infoschema::SystemTable::ALL {
                        if like_match(like, t.name()) {
                            let mut r = vec![Value::Null; 18];
                            r[0] = Value::str(t.name());
                            r[2] = Value::Int(10);
                            r[16] = Value::str("");
                            r[17] = Value::str("");
                            rows.push(r);
                        }
                    }
                } else {
                    let database = cat
                        .databases
                        .get(&db)
                        .ok_or_else(|| Error::UnknownDatabase(db.clone()))?;
                    for t in database.tables.values() {
                        if !like_match(like, &t.def.name) {
                            continue;
                        }
                        // TABLES' row without TABLE_CATALOG, TABLE_SCHEMA and
                        // TABLE_TYPE: SHOW TABLE STATUS's columns.
                        let mut r = crate::catalog::infoschema::tables_row(&db, t);
                        r.remove(3);
                        r.drain(..2);
                        rows.push(r);
                    }
                }
                use ExprKind::{DateTime, Int, String as Str, UInt};
                Ok(typed_rows(
                    &[
                        ("Name", Str),
                        ("Engine", Str),
                        ("Version", Int),
                        ("Row_format", Str),
                        ("Rows", UInt),
                        ("Avg_row_length", UInt),
                        ("Data_length", UInt),
                        ("Max_data_length", UInt),
                        ("Index_length", UInt),
                        ("Data_free", UInt),
                        ("Auto_increment", UInt),
                        ("Create_time", DateTime),
                        ("Update_time", DateTime),
                        ("Check_time", DateTime),
                        ("Collation", Str),
                        ("Checksum", Int),
                        ("Create_options", Str),
                        ("Comment", Str),
                    ],
                    rows,
                ))
            }
            ShowExtra::CreateDatabase { db, if_not_exists } => {
                let cat = self.state.engine.catalog();
                let (name, collation) = if crate::catalog::infoschema::is_info_schema(db) {
                    (crate::catalog::infoschema::NAME, "utf8mb3_general_ci")
                } else {
                    let d = cat
                        .databases
                        .get(db.as_str())
                        .ok_or_else(|| Error::UnknownDatabase(db.clone()))?;
                    (d.name.as_str(), d.default_collation.name())
                };
                self.state.check_db(&cat, name, "SHOW", None)?;
                let charset = collation.split('_').next().unwrap_or("utf8mb4");
                // MySQL 8 adds `/*!80016 DEFAULT ENCRYPTION='N' */`; Canyon's
                // parser would read that version comment and refuse it, and
                // the statement must re-create the database (dump tools).
                let text = format!(
                    "CREATE DATABASE {}`{}` /*!40100 DEFAULT CHARACTER SET {charset} COLLATE {collation} */",
                    if *if_not_exists { "/*!32312 IF NOT EXISTS*/ " } else { "" },
                    name.replace('`', "``"),
                );
                Ok(text_rows(
                    &["Database", "Create Database"],
                    vec![vec![Value::str(name), Value::str(&text)]],
                ))
            }
            ShowExtra::Engines => Ok(text_rows(
                &[
                    "Engine",
                    "Support",
                    "Comment",
                    "Transactions",
                    "XA",
                    "Savepoints",
                ],
                vec![[
                    "InnoDB",
                    "DEFAULT",
                    "Canyon's transactional storage (MVCC on RocksDB)",
                    "YES",
                    "NO",
                    "NO",
                ]
                .iter()
                .map(|s| Value::str(s))
                .collect()],
            )),
            ShowExtra::Index { db, table } => {
                let cat = self.state.engine.catalog();
                let db = match db {
                    Some(d) => d.clone(),
                    None => self.state.db.clone().ok_or(Error::NoDatabaseSelected)?,
                };
                let t = self.show_table_named(&cat, db, table.clone())?;
                let def = &t.def;
                let mut keys: Vec<(&str, bool, &[usize], Option<_>)> = Vec::new();
                if !def.primary_key.is_empty() {
                    keys.push(("PRIMARY", true, &def.primary_key, None));
                }
                for (_, x) in def.public_indexes() {
                    keys.push((&x.name, x.unique, &x.columns, Some(x.id)));
                }
                let mut rows = Vec::new();
                for (name, unique, cols, id) in keys {
                    for (seq, &c) in cols.iter().enumerate() {
                        let col = &def.columns[c];
                        // Distinct values of the key's first seq+1 columns, from
                        // the table's statistics (0 before the first analysis).
                        let cardinality = t.stats.n_diff(id, seq + 1).unwrap_or(0.0);
                        rows.push(vec![
                            Value::str(&def.name),
                            Value::Int(!unique as i64),
                            Value::str(name),
                            Value::Int(seq as i64 + 1),
                            Value::str(&col.name),
                            Value::str("A"),
                            Value::Int(cardinality.round() as i64),
                            Value::Null,
                            Value::Null,
                            Value::str(if col.nullable { "YES" } else { "" }),
                            Value::str("BTREE"),
                            Value::str(""),
                            Value::str(""),
                            Value::str("YES"),
                            Value::Null,
                        ]);
                    }
                }
                use ExprKind::{Int, String as Str};
                Ok(typed_rows(
                    &[
                        ("Table", Str),
                        ("Non_unique", Int),
                        ("Key_name", Str),
                        ("Seq_in_index", Int),
                        ("Column_name", Str),
                        ("Collation", Str),
                        ("Cardinality", Int),
                        ("Sub_part", Int),
                        ("Packed", Str),
                        ("Null", Str),
                        ("Index_type", Str),
                        ("Comment", Str),
                        ("Index_comment", Str),
                        ("Visible", Str),
                        ("Expression", Str),
                    ],
                    rows,
                ))
            }
        }
    }

    /// LOCK TABLES, as far as Canyon has table locks — it has none (row locks
    /// and MVCC only), and says so in a warning:
    /// - like MySQL it commits the open transaction and checks that each table
    ///   exists (1146) and may be read (1142);
    /// - when every lock is READ, the statements up to UNLOCK TABLES run in one
    ///   read-only snapshot transaction: what READ locks give a reader such as
    ///   mariadb-dump (every table as of one moment; writes fail with 1792),
    ///   without blocking other sessions' writes;
    /// - WRITE locks take nothing: statements autocommit as before, and other
    ///   sessions are not kept out (a restored dump's `LOCK TABLES t WRITE`
    ///   therefore works; exclusive access does not).
    fn lock_tables(&mut self, cat: &Catalog, tables: &[ast::LockTable]) -> Result<QueryResult> {
        self.commit()?;
        self.state.table_locks = false;
        self.state.txn_read_only = false;
        let db = self.state.db.clone().ok_or(Error::NoDatabaseSelected)?;
        for lt in tables {
            let name = &lt.table.value;
            if cat.table(&db, name).is_none() {
                return Err(Error::UnknownTable {
                    db: db.clone(),
                    table: name.clone(),
                });
            }
            self.state.check_db(cat, &db, "SELECT", Some(name))?;
        }
        let all_read = tables
            .iter()
            .all(|t| matches!(t.lock_type, ast::LockTableType::Read { .. }));
        if all_read {
            let mut t = self.txn_session.begin(IsolationLevel::RepeatableRead);
            t.set_lock_wait_timeout(self.state.lock_wait_timeout);
            t.begin_statement();
            t.snapshot_ts()?;
            self.txn = Some(t);
            self.state.txn_read_only = true;
            self.state.table_locks = true;
        }
        self.state.warnings.push((
            "Warning",
            1235,
            if all_read {
                "LOCK TABLES ... READ reads one snapshot until UNLOCK TABLES; \
                 other sessions' writes are not blocked"
            } else {
                "LOCK TABLES ... WRITE takes no lock: Canyon locks rows, not tables"
            }
            .to_string(),
        ));
        Ok(ok(0))
    }

    /// The level a GRANT / REVOKE names, with `*` and bare table names resolved
    /// against the current database (1046 without one).
    fn grant_level(&self, target: &GrantTarget) -> Result<Level> {
        let current = || self.state.db.clone().ok_or(Error::NoDatabaseSelected);
        Ok(match target {
            GrantTarget::Global => Level::Global,
            GrantTarget::CurrentDb => Level::Db(current()?),
            GrantTarget::Db(d) => Level::Db(d.clone()),
            GrantTarget::Table(d, t) => Level::Table(
                match d {
                    Some(d) => d.clone(),
                    None => current()?,
                },
                t.clone(),
            ),
        })
    }

    /// MySQL's error for a GRANT the session may not give: 1044 at a database,
    /// 1142 at a table, 1227 globally.
    fn grant_denied(&self, level: &Level) -> Error {
        match level {
            Level::Global => Error::SpecificAccessDenied("GRANT OPTION".into()),
            Level::Db(db) => Error::DbAccessDenied {
                user: self.state.user.clone(),
                host: self.state.host.clone(),
                db: db.clone(),
            },
            Level::Table(_, t) => Error::TableAccessDenied {
                command: "GRANT".into(),
                user: self.state.user.clone(),
                host: self.state.host.clone(),
                table: t.clone(),
            },
        }
    }

    fn run_set(&mut self, set: &ast::Set, params: &[Value], sql: &str) -> Result<QueryResult> {
        match set {
            ast::Set::SingleAssignment {
                scope,
                variable,
                values,
                ..
            } => {
                let v = values.first().ok_or_else(|| Error::Syntax("SET".into()))?;
                self.assign(scope.as_ref(), variable, v, params)?;
            }
            ast::Set::MultipleAssignments { assignments } => {
                for a in assignments {
                    self.assign(a.scope.as_ref(), &a.name, &a.value, params)?;
                }
            }
            ast::Set::SetNames {
                charset_name,
                collation_name,
            } => {
                // 1115 / 1273 / 1253 for unknown or mismatched names; without
                // COLLATE the character set's default collation.
                let coll = crate::types::collation::Collation::resolve(
                    Some(&charset_name.value),
                    collation_name.as_deref(),
                    crate::types::collation::Collation::DEFAULT,
                )?;
                let cs = Value::str(&charset_name.value);
                for v in [
                    "character_set_client",
                    "character_set_connection",
                    "character_set_results",
                ] {
                    self.state.vars.insert(v.into(), cs.clone());
                }
                self.state
                    .vars
                    .insert("collation_connection".into(), Value::str(coll.name()));
            }
            ast::Set::SetNamesDefault {} => {
                for v in [
                    "character_set_client",
                    "character_set_connection",
                    "character_set_results",
                    "collation_connection",
                ] {
                    self.state.vars.remove(v);
                }
            }
            ast::Set::SetTransaction { modes, .. } => {
                let upper = sql.to_ascii_uppercase();
                let session_scope =
                    upper.contains("SESSION TRANSACTION") || upper.contains("GLOBAL TRANSACTION");
                if !session_scope && self.txn.is_some() {
                    return Err(Error::CantChangeTxCharacteristics);
                }
                for m in modes {
                    match m {
                        ast::TransactionMode::IsolationLevel(l) => {
                            let iso = map_isolation(l);
                            if session_scope {
                                self.state.isolation = iso;
                            } else {
                                self.state.next_isolation = Some(iso);
                            }
                        }
                        ast::TransactionMode::AccessMode(a) => {
                            let ro = matches!(a, ast::TransactionAccessMode::ReadOnly);
                            if session_scope {
                                self.set_session_read_only(ro);
                            } else {
                                self.state.next_read_only = Some(ro);
                            }
                        }
                    }
                }
            }
            ast::Set::SetTimeZone { value, .. } => {
                let v = self.eval_set_value(value, params)?;
                self.state.vars.insert("time_zone".into(), v);
            }
            _ => return Err(Error::Unsupported("this SET form".into())),
        }
        Ok(ok(0))
    }

    /// The session's access mode, reflected in both variable names.
    fn set_session_read_only(&mut self, ro: bool) {
        self.state.read_only = ro;
        for v in ["transaction_read_only", "tx_read_only"] {
            self.state.vars.insert(v.into(), Value::Int(ro as i64));
        }
    }

    fn eval_set_value(&self, e: &ast::Expr, params: &[Value]) -> Result<Value> {
        // `SET x = ON` / `= OFF` / `= REPEATABLE-READ` style bare words are strings.
        if let ast::Expr::Identifier(id) = e {
            if !id.value.starts_with('@') {
                return Ok(Value::str(&id.value));
            }
        }
        let mut b = Binder::new(None, None);
        let bound = b.bind(e)?;
        let ctx = StmtCtx::new(&self.state, params);
        eval(
            &bound,
            &Env {
                row: &[],
                aggs: &[],
                ctx: &ctx,
            },
        )
    }

    fn assign(
        &mut self,
        scope: Option<&ast::ContextModifier>,
        name: &ast::ObjectName,
        e: &ast::Expr,
        params: &[Value],
    ) -> Result<()> {
        let parts = object_name(name);
        let (mut global, var) = match parts.as_slice() {
            [v] if v.starts_with("@@") => (false, v[2..].to_string()),
            [v] if v.starts_with('@') => {
                let val = self.eval_set_value(e, params)?;
                self.state
                    .user_vars
                    .insert(v[1..].to_ascii_lowercase(), val);
                return Ok(());
            }
            [s, v] if s.eq_ignore_ascii_case("@@global") => (true, v.clone()),
            [s, v] if s.eq_ignore_ascii_case("@@session") || s.eq_ignore_ascii_case("@@local") => {
                (false, v.clone())
            }
            [v] => (false, v.clone()),
            _ => return Err(Error::Syntax(name.to_string())),
        };
        if matches!(scope, Some(ast::ContextModifier::Global)) {
            global = true;
        }
        let var = var.to_ascii_lowercase();
        let (default, access) = vars::default_value(&var, &self.state.engine.config)
            .ok_or_else(|| Error::UnknownSystemVariable(var.clone()))?;
        if access == vars::Access::ReadOnly {
            return Err(Error::ReadOnlyVariable(var));
        }
        let is_default =
            matches!(e, ast::Expr::Identifier(id) if id.value.eq_ignore_ascii_case("DEFAULT"));
        let value = if is_default {
            default.clone()
        } else {
            self.eval_set_value(e, params)?
        };
        match (global, vars::scope(&var)) {
            (true, vars::Scope::SessionOnly) => return Err(Error::SessionOnlyVariable(var)),
            (true, vars::Scope::ServerOnly) => {
                return Err(Error::Unsupported(format!(
                    "SET GLOBAL {var} (a server setting: set it in the configuration file)"
                )))
            }
            (false, vars::Scope::ServerOnly) => return Err(Error::GlobalOnlyVariable(var)),
            (true, vars::Scope::Both) => {
                let cat = self.state.engine.catalog();
                let allowed = self
                    .state
                    .account(&cat)
                    .is_some_and(|a| a.allows_global(Privs::SUPER));
                if !allowed {
                    return Err(Error::SpecificAccessDenied(
                        "SUPER or SYSTEM_VARIABLES_ADMIN".into(),
                    ));
                }
                let stored = if is_default {
                    None
                } else {
                    Some(vars::normalize_global(&var, value)?)
                };
                // New sessions start from it; this one keeps its own value.
                self.state.engine.set_global(&var, stored);
                return Ok(());
            }
            (false, _) => {}
        }
        self.apply_session_var(var, value, is_default)
    }

    /// Sets a session variable (SET SESSION, and a new session's globals),
    /// with the effects of those Canyon acts on.
    fn apply_session_var(&mut self, var: String, value: Value, is_default: bool) -> Result<()> {
        match var.as_str() {
            "autocommit" => {
                let on = vars::parse_bool(&var, &value)?;
                if on && !self.state.autocommit {
                    // MySQL commits the open transaction when autocommit is switched on.
                    self.commit()?;
                }
                self.state.autocommit = on;
            }
            "transaction_isolation" | "tx_isolation" => {
                self.state.isolation = vars::parse_isolation(&value)?;
            }
            "innodb_lock_wait_timeout" => {
                let secs =
                    value
                        .to_i64()
                        .filter(|s| *s >= 1)
                        .ok_or_else(|| Error::WrongValueForVar {
                            name: var.clone(),
                            value: value.to_display(),
                        })?;
                self.state.lock_wait_timeout = Duration::from_secs(secs as u64);
                self.state.vars.insert(var, Value::Int(secs));
                if let Some(t) = self.txn.as_mut() {
                    t.set_lock_wait_timeout(self.state.lock_wait_timeout);
                }
            }
            "transaction_read_only" | "tx_read_only" => {
                let ro = vars::parse_bool(&var, &value)?;
                self.set_session_read_only(ro);
            }
            "max_execution_time" => {
                let ms =
                    value
                        .to_i64()
                        .filter(|v| *v >= 0)
                        .ok_or_else(|| Error::WrongValueForVar {
                            name: var.clone(),
                            value: value.to_display(),
                        })?;
                self.state.max_execution_ms = ms as u64;
                self.state.vars.insert(var, Value::Int(ms));
            }
            "sql_mode" => {
                self.state
                    .vars
                    .insert(var, Value::Bytes(value.to_text().unwrap_or_default()));
            }
            "long_query_time" => {
                // A number of seconds, not a string that reads as 0 (1232
                // in MySQL; Canyon's closest is 1231).
                let secs = match &value {
                    Value::Bytes(_) => None,
                    v => v.to_f64().filter(|s| *s >= 0.0),
                }
                .ok_or_else(|| Error::WrongValueForVar {
                    name: var.clone(),
                    value: value.to_display(),
                })?;
                self.state.long_query_secs = secs;
                self.state.vars.insert(var, Value::Double(secs));
            }
            "collation_connection" | "collation_server" | "collation_database" if !is_default => {
                let name = value.to_display();
                let c = crate::types::collation::Collation::from_name(&name)
                    .ok_or_else(|| Error::UnknownCollation(name.to_ascii_lowercase()))?;
                self.state.vars.insert(var, Value::str(c.name()));
            }
            _ => {
                if is_default {
                    self.state.vars.remove(&var);
                } else {
                    self.state.vars.insert(var, value);
                }
            }
        }
        Ok(())
    }
}

/// The Com_* counter a statement counts under, if any.
fn command_counter(parsed: &Parsed) -> Option<Counter> {
    use ast::ObjectType as O;
    let stmt = match parsed {
        Parsed::Sql(s) => s.as_ref(),
        Parsed::ShowWarnings { .. } => return Some(Counter::ComShowWarnings),
        _ => return None,
    };
    Some(match stmt {
        Statement::Query(_) => Counter::ComSelect,
        Statement::Insert(i) if i.replace_into => Counter::ComReplace,
        Statement::Insert(i) => match i.source.as_deref().map(|q| q.body.as_ref()) {
            Some(ast::SetExpr::Values(_)) | None => Counter::ComInsert,
            Some(_) => Counter::ComInsertSelect,
        },
        Statement::Update { .. } => Counter::ComUpdate,
        Statement::Delete(_) => Counter::ComDelete,
        Statement::StartTransaction { .. } => Counter::ComBegin,
        Statement::Commit { .. } => Counter::ComCommit,
        Statement::Rollback {
            savepoint: None, ..
        } => Counter::ComRollback,
        Statement::Savepoint { .. } => Counter::ComSavepoint,
        Statement::Set(_) => Counter::ComSetOption,
        Statement::ShowStatus { .. } => Counter::ComShowStatus,
        Statement::ShowVariables { .. } => Counter::ComShowVariables,
        Statement::ShowTables { .. } => Counter::ComShowTables,
        Statement::ShowDatabases { .. } => Counter::ComShowDatabases,
        Statement::ShowColumns { .. } => Counter::ComShowFields,
        Statement::ShowCreate {
            obj_type: ast::ShowCreateObject::Table,
            ..
        } => Counter::ComShowCreateTable,
        Statement::ShowProcessList { .. } => Counter::ComShowProcesslist,
        Statement::CreateTable(_) => Counter::ComCreateTable,
        Statement::AlterTable(_) => Counter::ComAlterTable,
        Statement::CreateDatabase { .. } | Statement::CreateSchema { .. } => Counter::ComCreateDb,
        Statement::CreateIndex(_) => Counter::ComCreateIndex,
        Statement::Drop { object_type, .. } => match object_type {
            O::Table => Counter::ComDropTable,
            O::Database | O::Schema => Counter::ComDropDb,
            O::Index => Counter::ComDropIndex,
            _ => return None,
        },
        Statement::Use(_) => Counter::ComChangeDb,
        Statement::Kill { .. } => Counter::ComKill,
        _ => return None,
    })
}

impl Drop for Session {
    fn drop(&mut self) {
        // A client that vanished mid-transaction: roll back and free its locks.
        if let Some(t) = self.txn.take() {
            t.rollback();
        }
        self.state.engine.unregister_pin(&self.pin);
        let engine = &self.state.engine;
        engine.status.disconnect(&self.state.counts, || {
            engine.processes.deregister(&self.state.process)
        });
    }
}

fn map_isolation(l: &ast::TransactionIsolationLevel) -> IsolationLevel {
    match l {
        ast::TransactionIsolationLevel::ReadUncommitted => IsolationLevel::ReadUncommitted,
        ast::TransactionIsolationLevel::ReadCommitted => IsolationLevel::ReadCommitted,
        ast::TransactionIsolationLevel::RepeatableRead => IsolationLevel::RepeatableRead,
        _ => IsolationLevel::Serializable,
    }
}

fn like_filter(f: Option<&ast::ShowStatementFilter>) -> Result<Option<String>> {
    match f {
        None => Ok(None),
        Some(ast::ShowStatementFilter::Like(p)) | Some(ast::ShowStatementFilter::NoKeyword(p)) => {
            Ok(Some(p.clone()))
        }
        Some(_) => Err(Error::Unsupported("SHOW ... WHERE".into())),
    }
}

/// The plugin named in IDENTIFIED WITH; 1524 (ER_PLUGIN_IS_NOT_LOADED) for one
/// Canyon does not have.
fn auth_plugin(name: Option<&str>) -> Result<Option<AuthPlugin>> {
    name.map(|n| AuthPlugin::from_name(n).ok_or_else(|| Error::PluginNotLoaded(n.to_string())))
        .transpose()
}

fn show_like(o: &ast::ShowStatementOptions) -> Result<Option<String>> {
    match &o.filter_position {
        None => Ok(None),
        Some(ast::ShowStatementFilterPosition::Infix(f))
        | Some(ast::ShowStatementFilterPosition::Suffix(f)) => like_filter(Some(f)),
    }
}

/// Whether `name` passes an optional LIKE pattern.
fn like_match(pattern: &Option<String>, name: &str) -> bool {
    pattern
        .as_ref()
        .is_none_or(|p| crate::expr::like(name.as_bytes(), p.as_bytes(), b'\\'))
}

/// A SHOW statement sqlparser 0.63 does not parse.
#[derive(Debug, PartialEq)]
enum ShowExtra {
    /// SHOW [STORAGE] ENGINES.
    Engines,
    /// SHOW {INDEX | INDEXES | KEYS} {FROM | IN} t [{FROM | IN} db].
    Index {
        /// The database, if named.
        db: Option<String>,
        /// The table.
        table: String,
    },
    /// SHOW TABLE STATUS [{FROM | IN} db] [LIKE 'pattern'].
    TableStatus {
        /// The database, if named.
        db: Option<String>,
        /// The LIKE pattern.
        like: Option<String>,
    },
    /// SHOW CREATE {DATABASE | SCHEMA} [IF NOT EXISTS] db.
    CreateDatabase {
        /// The database.
        db: String,
        /// IF NOT EXISTS.
        if_not_exists: bool,
    },
    /// SHOW EVENTS / TRIGGERS / {PROCEDURE | FUNCTION} STATUS [...]: always
    /// empty (Canyon has none of these objects), with MySQL's columns; dump
    /// tools send them.
    Empty(&'static [&'static str]),
}

const SHOW_EVENTS: &[&str] = &[
    "Db",
    "Name",
    "Definer",
    "Time zone",
    "Type",
    "Execute at",
    "Interval value",
    "Interval field",
    "Starts",
    "Ends",
    "Status",
    "Originator",
    "character_set_client",
    "collation_connection",
    "Database Collation",
];
const SHOW_TRIGGERS: &[&str] = &[
    "Trigger",
    "Event",
    "Table",
    "Statement",
    "Timing",
    "Created",
    "sql_mode",
    "Definer",
    "character_set_client",
    "collation_connection",
    "Database Collation",
];
const SHOW_ROUTINE_STATUS: &[&str] = &[
    "Db",
    "Name",
    "Type",
    "Definer",
    "Modified",
    "Created",
    "Security_type",
    "Comment",
    "character_set_client",
    "collation_connection",
    "Database Collation",
];

/// The value of a quoted string literal that is the whole of `w` ('...' or
/// "...", with doubled quotes or backslash escapes); `None` otherwise.
fn string_literal(w: &str) -> Option<String> {
    let q = w.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let inner = w.strip_prefix(q)?.strip_suffix(q)?;
    let mut out = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            out.push(chars.next()?);
        } else if c == q {
            // Only a doubled quote may appear inside.
            if chars.next() != Some(q) {
                return None;
            }
            out.push(q);
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// Recognises the SHOW forms of [`ShowExtra`] in a whole query text (one
/// statement, an optional `;`); `None` for anything else, which then goes to the
/// parser as usual.
fn show_extra(sql: &str) -> Option<ShowExtra> {
    let text = sql.trim();
    if !text
        .get(..5)
        .is_some_and(|p| p.eq_ignore_ascii_case("SHOW "))
    {
        return None;
    }
    let text = text.strip_suffix(';').unwrap_or(text);
    let words: Vec<&str> = text.split_whitespace().collect();
    let is = |w: &str, k: &str| w.eq_ignore_ascii_case(k);
    let ident = |w: &str| -> Option<String> {
        let w = match w.strip_prefix('`') {
            Some(r) => r.strip_suffix('`')?,
            None => w,
        };
        (!w.is_empty() && !w.contains(['`', '\'', '"', ';', '('])).then(|| w.to_string())
    };
    match words.as_slice() {
        [_, e] if is(e, "ENGINES") => Some(ShowExtra::Engines),
        [_, s, e] if is(s, "STORAGE") && is(e, "ENGINES") => Some(ShowExtra::Engines),
        [_, k, f, rest @ ..]
            if ["INDEX", "INDEXES", "KEYS"].iter().any(|x| is(k, x))
                && (is(f, "FROM") || is(f, "IN")) =>
        {
            let (db, table) = match rest {
                [t] => match ident(t)?.split_once('.') {
                    Some((d, t)) => (Some(ident(d)?), ident(t)?),
                    None => (None, ident(t)?),
                },
                [t, f2, d] if is(f2, "FROM") || is(f2, "IN") => (Some(ident(d)?), ident(t)?),
                _ => return None,
            };
            Some(ShowExtra::Index { db, table })
        }
        [_, t, st, rest @ ..] if is(t, "TABLE") && is(st, "STATUS") => {
            let (db, rest) = match rest {
                [f, d, r @ ..] if is(f, "FROM") || is(f, "IN") => (Some(ident(d)?), r),
                r => (None, r),
            };
            let like = match rest {
                [] => None,
                [l, _, ..] if is(l, "LIKE") => {
                    // The pattern may hold spaces: take the text after LIKE.
                    let at = text.to_ascii_uppercase().rfind(" LIKE ")?;
                    Some(string_literal(text[at + 6..].trim())?)
                }
                _ => return None,
            };
            Some(ShowExtra::TableStatus { db, like })
        }
        [_, c, d, rest @ ..] if is(c, "CREATE") && (is(d, "DATABASE") || is(d, "SCHEMA")) => {
            match rest {
                [i, n, e, db] if is(i, "IF") && is(n, "NOT") && is(e, "EXISTS") => {
                    Some(ShowExtra::CreateDatabase {
                        db: ident(db)?,
                        if_not_exists: true,
                    })
                }
                [db] => Some(ShowExtra::CreateDatabase {
                    db: ident(db)?,
                    if_not_exists: false,
                }),
                _ => None,
            }
        }
        [_, e, ..] if is(e, "EVENTS") => Some(ShowExtra::Empty(SHOW_EVENTS)),
        [_, t, ..] if is(t, "TRIGGERS") => Some(ShowExtra::Empty(SHOW_TRIGGERS)),
        [_, r, st, ..] if (is(r, "PROCEDURE") || is(r, "FUNCTION")) && is(st, "STATUS") => {
            Some(ShowExtra::Empty(SHOW_ROUTINE_STATUS))
        }
        _ => None,
    }
}

/// The transaction-control statements drivers send as text around every
/// transaction (Go's database/sql: `START TRANSACTION`, `COMMIT`, `ROLLBACK`),
/// parsed once per process: spelled exactly so, up to case, surrounding
/// whitespace and one trailing `;`, they skip sqlparser, whose tokenizer and
/// the parser's checks for statements it lacks took 1.4% of the server's CPU
/// under TPC-C for them. Anything else — comments, other spacing — takes the
/// ordinary path and parses to the same statements.
fn transaction_control(sql: &str) -> Option<&'static [Parsed]> {
    const TEXTS: [&str; 4] = ["BEGIN", "COMMIT", "ROLLBACK", "START TRANSACTION"];
    static PARSED: std::sync::OnceLock<Vec<Vec<Parsed>>> = std::sync::OnceLock::new();
    let text = sql.trim();
    let text = text.strip_suffix(';').unwrap_or(text).trim_end();
    let i = TEXTS.iter().position(|t| t.eq_ignore_ascii_case(text))?;
    let all = PARSED.get_or_init(|| {
        TEXTS
            .iter()
            .map(|t| parse(t).expect("transaction-control statements parse"))
            .collect()
    });
    Some(&all[i])
}

/// The text of the second statement of a multi-statement text (for the 1064
/// message when multi-statements are off).
fn second_statement_text(sql: &str) -> String {
    match sql.find(';') {
        Some(i) => sql[i + 1..].trim_start().chars().take(80).collect(),
        None => String::new(),
    }
}

/// A short name for an unsupported statement, for error 1235.
fn statement_kind(s: &Statement) -> String {
    let text = s.to_string();
    let words: Vec<&str> = text.split_whitespace().take(2).collect();
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::config::EngineConfig;

    #[test]
    fn transaction_control_texts_parse_as_the_parser_would() {
        for sql in [
            "commit",
            "  Commit ;",
            "BEGIN",
            "rollback;",
            "start transaction\n",
        ] {
            let cached = transaction_control(sql).expect("recognised");
            let parsed = parse(sql).expect("parses");
            assert_eq!(format!("{cached:?}"), format!("{parsed:?}"), "{sql}");
        }
        for sql in [
            "COMMIT WORK",
            "ROLLBACK TO SAVEPOINT a",
            "START TRANSACTION READ ONLY",
            "/* c */ COMMIT",
            "COMMIT;;",
            "BEGIN WORK",
        ] {
            assert!(transaction_control(sql).is_none(), "{sql}");
        }
    }

    #[test]
    fn show_extra_forms() {
        let index = |db: Option<&str>, t: &str| {
            Some(ShowExtra::Index {
                db: db.map(str::to_string),
                table: t.to_string(),
            })
        };
        assert_eq!(show_extra("show engines"), Some(ShowExtra::Engines));
        assert_eq!(
            show_extra("SHOW STORAGE ENGINES;"),
            Some(ShowExtra::Engines)
        );
        assert_eq!(show_extra("SHOW INDEX FROM t"), index(None, "t"));
        assert_eq!(show_extra("SHOW KEYS IN `t` FROM d"), index(Some("d"), "t"));
        assert_eq!(show_extra("SHOW INDEXES FROM d.t"), index(Some("d"), "t"));
        assert_eq!(show_extra("SHOW INDEX FROM t WHERE x"), None);
        assert_eq!(
            show_extra("SHOW TABLE STATUS FROM d LIKE 'a b%'"),
            Some(ShowExtra::TableStatus {
                db: Some("d".into()),
                like: Some("a b%".into())
            })
        );
        assert_eq!(
            show_extra("show grants for 'u'@'h'"),
            None,
            "parse.rs has GRANTS"
        );
        assert_eq!(
            show_extra("SHOW CREATE SCHEMA IF NOT EXISTS `d`"),
            Some(ShowExtra::CreateDatabase {
                db: "d".into(),
                if_not_exists: true
            })
        );
        assert_eq!(
            show_extra("SHOW FUNCTION STATUS WHERE Db = 'd'"),
            Some(ShowExtra::Empty(SHOW_ROUTINE_STATUS))
        );
        assert_eq!(show_extra("SHOW TABLES"), None);
        assert_eq!(show_extra("SELECT 1"), None);
    }

    #[test]
    fn show_create_table_recreates_the_table() {
        let cfg = EngineConfig {
            durability: canyon_txn::Durability::SyncEveryCommit,
            lock_wait_timeout: Duration::from_secs(2),
            blocking_hook: None,
            version: "8.0.36-canyon-test".into(),
            max_allowed_packet: 64 << 20,
            max_connections: 10,
            port: 3306,
            row_cache_bytes: 1 << 20,
            history_memory_bytes: 1 << 20,
            statement_memory_limit: crate::catalog::config::DEFAULT_STATEMENT_MEMORY_LIMIT,
            statement_memory_budget: crate::catalog::config::DEFAULT_STATEMENT_MEMORY_BUDGET,
        };
        let storage = Arc::new(canyon_storage::MemoryStorage::new());
        let engine = Engine::open(storage, cfg).expect("engine opens");
        engine.bootstrap_root("").expect("root account");
        let mut s = engine.session(1, "root", "localhost");
        let run = |s: &mut Session, sql: &str| {
            s.execute(sql, false)
                .pop()
                .expect("one result")
                .unwrap_or_else(|e| panic!("{sql}: {e}"))
        };
        run(&mut s, "CREATE DATABASE d");
        run(&mut s, "USE d");
        run(
            &mut s,
            "CREATE TABLE t (id BIGINT NOT NULL AUTO_INCREMENT, s VARCHAR(10) NOT NULL DEFAULT 'it''s', \
             n INT, b VARCHAR(3) COLLATE utf8mb4_bin, l CHAR(2) CHARACTER SET latin1, \
             PRIMARY KEY (id), UNIQUE KEY us (s), KEY kn (n, s))",
        );
        let QueryResult::Rows { rows, .. } = run(&mut s, "SHOW CREATE TABLE t") else {
            panic!("SHOW CREATE TABLE returned no rows");
        };
        let ddl = rows[0][1].to_display();
        assert_eq!(
            ddl,
            "CREATE TABLE `t` (\n  `id` bigint NOT NULL AUTO_INCREMENT,\n  \
             `s` varchar(10) NOT NULL DEFAULT 'it''s',\n  `n` int DEFAULT NULL,\n  \
             `b` varchar(3) COLLATE utf8mb4_bin DEFAULT NULL,\n  \
             `l` char(2) CHARACTER SET latin1 COLLATE latin1_swedish_ci DEFAULT NULL,\n  \
             PRIMARY KEY (`id`),\n  UNIQUE KEY `us` (`s`),\n  KEY `kn` (`n`,`s`)\n\
             ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
        );
        run(&mut s, "DROP TABLE t");
        run(&mut s, &ddl);
        let QueryResult::Rows { rows, .. } = run(&mut s, "SHOW CREATE TABLE t") else {
            panic!("SHOW CREATE TABLE returned no rows");
        };
        assert_eq!(rows[0][1].to_display(), ddl);
    }
}
