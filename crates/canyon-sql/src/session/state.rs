//! The session's state: [`Session`] itself, the [`State`] its statements read
//! (database, variables, warnings, the account), prepared statements, and
//! the small accessors the server calls between requests.

use crate::catalog::engine::Engine;
use crate::catalog::privileges::Privs;
use crate::catalog::procs::{Process, KILL_CONNECTION};
use crate::catalog::status::Counter;
use crate::catalog::vars;
use crate::catalog::{Catalog, UserDef};
use crate::parse::Parsed;
use crate::plan::Plan;
use crate::types::result::{Column, QueryResult};
use crate::types::value::Value;
use crate::types::{expr_column, ExprKind};
use canyon_common::{Error, Result};
use canyon_txn::{Committing, IsolationLevel, Transaction, TxnSession};
use sqlparser::ast::{self};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// A prepared statement.
pub(super) struct Prepared {
    /// The statement's text (SHOW PROCESSLIST's Info while it executes).
    pub(super) text: String,
    pub(super) parsed: Parsed,
    /// `command_counter(&parsed)`, found once: on every execution it would read
    /// the statement's tree, cold in the cache by then.
    pub(super) counter: Option<Counter>,
    pub(super) params: usize,
    pub(super) plan: Option<(u64, Arc<Plan>)>,
}

/// The session state expressions may read (everything but the transaction).
pub(super) struct State {
    pub(super) engine: Arc<Engine>,
    pub(super) connection_id: u32,
    pub(super) user: String,
    pub(super) host: String,
    pub(super) db: Option<String>,
    pub(super) autocommit: bool,
    pub(super) isolation: IsolationLevel,
    pub(super) next_isolation: Option<IsolationLevel>,
    /// The session's access mode (`transaction_read_only`).
    pub(super) read_only: bool,
    /// The tables LOCK TABLES (or FLUSH TABLES t WITH READ LOCK) locked, while
    /// held (see `super::table_lock`).
    pub(super) locked_tables: Option<Vec<crate::catalog::table_locks::Locked>>,
    /// The session holds FLUSH TABLES WITH READ LOCK.
    pub(super) global_read_lock: bool,
    /// `SET TRANSACTION READ ONLY / READ WRITE`: the next transaction's mode only.
    pub(super) next_read_only: Option<bool>,
    /// Whether the open transaction is READ ONLY: its writes fail with 1792.
    pub(super) txn_read_only: bool,
    pub(super) lock_wait_timeout: Duration,
    pub(super) vars: HashMap<String, Value>,
    pub(super) user_vars: HashMap<String, Value>,
    pub(super) last_insert_id: u64,
    /// Whether the next SELECT testing `auto_col IS NULL` reads it as
    /// `auto_col = LAST_INSERT_ID()` under `sql_auto_is_null` (MySQL's
    /// `substitute_null_with_insert_id`): set, while `sql_auto_is_null` is
    /// on, by an INSERT that generated a value; cleared by the SELECT that
    /// used it.
    pub(super) substitute_null_with_insert_id: bool,
    pub(super) row_count: i64,
    pub(super) found_rows: u64,
    pub(super) client_found_rows: bool,
    /// CLIENT_LOCAL_FILES: the client allows LOAD DATA LOCAL (see `load`).
    pub(super) client_local_files: bool,
    /// (level, code, message) of the last statement.
    pub(super) warnings: Vec<(&'static str, u16, String)>,
    /// Cached account, valid for one catalog version.
    pub(super) account: Option<(u64, Option<Arc<UserDef>>)>,
    /// This session's entry in the process registry (SHOW PROCESSLIST, KILL).
    pub(super) process: Arc<Process>,
    /// SHOW SESSION STATUS counters, published to `process` after each
    /// statement (see `crate::catalog::status`).
    pub(super) counts: crate::catalog::status::Counts,
    /// The binary-log coordinates of the open transaction's consistent
    /// snapshot (START TRANSACTION WITH CONSISTENT SNAPSHOT; `binlog.rs`).
    pub(super) binlog_snapshot: Option<crate::catalog::binlog::Snapshot>,
    /// The last FLUSH STATUS (session start before one).
    pub(super) flushed_at: std::time::Instant,
    /// `long_query_time` in seconds (Slow_queries), kept here so that the end
    /// of every statement does not look it up by name.
    pub(super) long_query_secs: f64,
    /// max_execution_time in milliseconds (0: no limit), for SELECT.
    pub(super) max_execution_ms: u64,
    /// The session's TEMPORARY tables (see `super::temporary`).
    pub(super) temp: super::temporary::TempTables,
    /// This connection's query-log buffer (see `crate::catalog::querylog`).
    pub(super) query_log: crate::catalog::querylog::SessionLog,
    /// The running request's rows examined, index use, lock wait and table
    /// I/O (`crate::catalog::perfschema::io`): written by the executor
    /// through `StmtCtx` (hence the cell), read at the request's end.
    pub(super) io: std::cell::RefCell<crate::catalog::perfschema::StatementIo>,
    /// The replica applier's "system user": every privilege, no account.
    pub(super) system: bool,
}

/// The replica applier's account: every privilege on everything, as
/// MySQL's applier runs without PRIVILEGE_CHECKS_USER.
fn system_user() -> Arc<UserDef> {
    static USER: std::sync::OnceLock<Arc<UserDef>> = std::sync::OnceLock::new();
    USER.get_or_init(|| {
        Arc::new(UserDef {
            user: "system user".into(),
            host: String::new(),
            native_hash_hex: String::new(),
            plugin: String::new(),
            sha2_verifier: String::new(),
            grants: vec![crate::catalog::schema::Grant {
                db: None,
                table: None,
                all: true,
                privs: u32::MAX,
                grant_option: true,
                dynamic: true,
            }],
        })
    })
    .clone()
}

impl State {
    /// The collation of literals and parameters: `collation_connection`.
    pub(super) fn connection_collation(&self) -> crate::types::collation::Collation {
        self.vars
            .get("collation_connection")
            .and_then(|v| crate::types::collation::Collation::from_name(&v.to_display()))
            .unwrap_or(crate::types::collation::Collation::DEFAULT)
    }

    /// The session's `time_zone` (`@@time_zone` holds only names
    /// `timezone::normalize` accepted); the host's zone failing that.
    pub(super) fn time_zone(&self) -> crate::types::timezone::Zone {
        let name = self.get_var("time_zone").ok().map(|v| v.to_display());
        name.and_then(|n| crate::types::timezone::zone(&n))
            .unwrap_or_else(|| crate::types::timezone::system_zone().clone())
    }

    pub(super) fn get_var(&self, name: &str) -> Result<Value> {
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
            // Read by every INSERT into a table with an AUTO_INCREMENT column
            // (and the next by the one that generated a value): answered
            // without the defaults table's long match when unset.
            "insert_id" => self.vars.get(name).cloned().unwrap_or(Value::UInt(0)),
            "sql_auto_is_null" => self.vars.get(name).cloned().unwrap_or(Value::Int(0)),
            "timestamp" => self.vars.get(name).cloned().unwrap_or_else(|| {
                let now = chrono::Utc::now();
                Value::Double(
                    now.timestamp() as f64 + f64::from(now.timestamp_subsec_micros()) / 1e6,
                )
            }),
            "warning_count" => {
                Value::Int(self.warnings.iter().filter(|w| w.0 != "Error").count() as i64)
            }
            "error_count" => {
                Value::Int(self.warnings.iter().filter(|w| w.0 == "Error").count() as i64)
            }
            _ => match self.vars.get(name) {
                Some(v) => v.clone(),
                None if crate::catalog::binlog::is_live(name) => {
                    crate::catalog::binlog::live_var(&self.engine.binlog, &self.engine.txn, name)
                        .expect("is_live names a live variable")
                }
                None if crate::catalog::querylog::is_var(name) => self
                    .engine
                    .query_log
                    .var(name)
                    .expect("is_var names a variable"),
                None if crate::catalog::read_only::is_var(name) => self
                    .engine
                    .read_only
                    .var(name)
                    .expect("is_var names a variable"),
                None => vars::default_value(name, &self.engine.config)
                    .map(|(v, _)| v)
                    .ok_or_else(|| Error::UnknownSystemVariable(name.to_string()))?,
            },
        })
    }

    pub(super) fn account(&mut self, cat: &Catalog) -> Option<Arc<UserDef>> {
        if self.system {
            return Some(system_user());
        }
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
    pub(super) fn check_db(
        &mut self,
        cat: &Catalog,
        db: &str,
        command: &str,
        table: Option<&str>,
    ) -> Result<()> {
        if crate::catalog::infoschema::is_system_schema(db) {
            // Everyone may read information_schema and performance_schema;
            // nobody may change them (performance_schema's few writable
            // tables are written by `super::perfschema` before this check).
            return match command {
                "SELECT" | "SHOW" | "USE" => Ok(()),
                _ => Err(Error::DbAccessDenied {
                    user: self.user.clone(),
                    host: self.host.clone(),
                    db: db.to_ascii_lowercase(),
                }),
            };
        }
        // MySQL checks no privilege on a temporary table once it exists: the
        // statements that reach it by name. (CREATE of the name makes a base
        // table, and DROP / ALTER / TRUNCATE take the temporary table before
        // any check, so those stay checked.)
        if matches!(command, "SELECT" | "INSERT" | "UPDATE" | "DELETE" | "SHOW")
            && table.is_some_and(|t| self.temp.get(db, t).is_some())
        {
            return Ok(());
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
    pub(super) fn fill_account(&self, e: Error) -> Error {
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

    /// The session's identity among the holders of user-level locks
    /// (`crate::catalog::user_locks`): its process entry's address, unique
    /// while the session lives, where connection ids repeat in-process.
    pub(super) fn lock_owner(&self) -> crate::catalog::user_locks::Owner {
        Arc::as_ptr(&self.process) as usize as u64
    }

    /// When a SELECT starting now must stop (max_execution_time).
    pub(super) fn select_deadline(&self) -> Option<std::time::Instant> {
        (self.max_execution_ms > 0)
            .then(|| std::time::Instant::now() + Duration::from_millis(self.max_execution_ms))
    }

    /// Checks a global privilege named `what` (e.g. "CREATE USER"); an unknown
    /// name needs SUPER. MySQL 1227.
    pub(super) fn check_super(&mut self, cat: &Catalog, what: &str) -> Result<()> {
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
    pub(super) state: State,
    pub(super) txn_session: TxnSession,
    pub(super) txn: Option<Transaction>,
    pub(super) prepared: HashMap<u32, Prepared>,
    pub(super) next_statement_id: u32,
    /// This session's catalog pin (see `crate::ddl::alter`).
    pub(super) pin: Arc<crate::catalog::engine::CatalogPin>,
    /// Whether the caller awaits [`Session::take_pending_commit`] itself.
    pub(super) defer_durability: bool,
    /// A written commit the caller has yet to await (deferred durability). While
    /// it is here nothing else runs: every entry point settles it first.
    pub(super) pending_commit: Option<Committing>,
    /// The newest change-log record this session's requests committed and
    /// the caller has not yet taken (0: none; see
    /// [`Session::take_replication_wait`]).
    pub(super) replication_wait: std::sync::atomic::AtomicU64,
    /// The original GTID of the transaction this session applies for a
    /// replica (`replica.rs`): what it logs is logged under it.
    pub(super) log_origin: crate::binlog::Origin,
    /// Whether the caller awaits row lock waits itself (see
    /// [`Session::set_async_lock_waits`]).
    pub(super) async_lock_waits: bool,
    /// Lock waits of the statement now running are deferred: the caller
    /// allows it and the request is one statement (a multi-statement text
    /// cannot be resumed in its middle, so it blocks).
    pub(super) defer_waits_now: bool,
    /// The open transaction was begun for one autocommitted statement that is
    /// waiting for a row lock: it commits when the statement, run again,
    /// succeeds, and rolls back if the wait is given up.
    pub(super) implicit_txn: bool,
    /// The statement is waiting for a row lock, or running again after one: it
    /// was counted, and shown in the process list, when it first ran. Holds
    /// when it started.
    pub(super) lock_retry: Option<std::time::Instant>,
    /// The statement running is the whole text of its request (so the
    /// binary log may log that text: `binlog.rs`).
    pub(super) whole_request: bool,
    /// The stored programs running now (see `super::routines`).
    pub(super) routines: super::routines::Active,
    /// A LOAD DATA LOCAL waiting for the client's file (see `load`).
    pub(super) pending_load: Option<Box<super::load::PendingLoad>>,
    /// The session's XA branch, from XA START to its end (`xa.rs`).
    pub(super) xa: Option<super::xa::XaBranch>,
    /// What this session's statement and transaction intend, as table locks
    /// see it (`crate::catalog::table_locks`).
    pub(super) table_activity: Arc<crate::catalog::table_locks::Activity>,
    /// Nesting of statement scopes (`super::table_lock`): the outermost
    /// one's end ends the statement's table intention.
    pub(super) stmt_depth: u32,
    /// The table lock wait the last request stopped at: the generation it
    /// waits to see pass, and its deadline.
    pub(super) pending_table_wait: Option<(u64, std::time::Instant)>,
    /// The deadline of the table lock wait the current request is in (kept
    /// across its retries).
    pub(super) table_wait_deadline: Option<std::time::Instant>,
    /// What BINLOG statements left for the next one: the format description
    /// and table maps (`super::apply`).
    pub(super) binlog_applier: Option<Box<crate::binlog::apply::Applier>>,
}

pub(super) fn ok(affected_rows: u64) -> QueryResult {
    QueryResult::Ok {
        affected_rows,
        last_insert_id: 0,
        info: String::new(),
        warnings: 0,
    }
}

/// The OK packet of ALTER TABLE / CREATE INDEX (MySQL's info string).
pub(super) fn alter_ok() -> QueryResult {
    QueryResult::Ok {
        affected_rows: 0,
        last_insert_id: 0,
        info: "Records: 0  Duplicates: 0  Warnings: 0".into(),
        warnings: 0,
    }
}

pub(super) fn text_rows(names: &[&str], rows: Vec<Vec<Value>>) -> QueryResult {
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
pub(super) fn typed_rows(cols: &[(&str, ExprKind)], rows: Vec<Vec<Value>>) -> QueryResult {
    let columns: Vec<Column> = cols.iter().map(|(n, k)| expr_column(n, *k)).collect();
    QueryResult::Rows {
        columns: columns.into(),
        rows,
        warnings: 0,
    }
}

pub(super) fn object_name(n: &ast::ObjectName) -> Vec<String> {
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
        let table_activity = engine
            .table_locks
            .register(Arc::as_ptr(&process) as usize as u64);
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
                locked_tables: None,
                global_read_lock: false,
                next_read_only: None,
                txn_read_only: false,
                lock_wait_timeout,
                vars: HashMap::new(),
                user_vars: HashMap::new(),
                last_insert_id: 0,
                substitute_null_with_insert_id: false,
                row_count: -1,
                found_rows: 0,
                client_found_rows: false,
                client_local_files: false,
                warnings: Vec::new(),
                account: None,
                process,
                counts: Default::default(),
                binlog_snapshot: None,
                flushed_at: std::time::Instant::now(),
                long_query_secs: 10.0,
                max_execution_ms: 0,
                temp: Default::default(),
                query_log: Default::default(),
                io: Default::default(),
                system: false,
            },
            txn_session,
            txn: None,
            prepared: HashMap::new(),
            next_statement_id: 1,
            pin,
            defer_durability: false,
            pending_commit: None,
            replication_wait: Default::default(),
            log_origin: None,
            async_lock_waits: false,
            defer_waits_now: false,
            implicit_txn: false,
            lock_retry: None,
            whole_request: false,
            routines: Default::default(),
            pending_load: None,
            xa: None,
            table_activity,
            stmt_depth: 0,
            pending_table_wait: None,
            table_wait_deadline: None,
            binlog_applier: None,
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

    /// `character_set_client`: the character set of the statement text and
    /// of string parameters this client sends (the server converts them to
    /// UTF-8 before `execute`; see `crate::types::charset`). Read per
    /// request, so without allocating.
    pub fn client_charset(&self) -> crate::types::charset::Charset {
        self.charset_var("character_set_client")
            .unwrap_or(crate::types::charset::Charset::Utf8mb4)
    }

    /// `character_set_results`: what result values and column names are
    /// converted to before they are sent; `None` when it is NULL (no
    /// conversion).
    pub fn results_charset(&self) -> Option<crate::types::charset::Charset> {
        match self.state.vars.get("character_set_results") {
            Some(Value::Null) => None,
            _ => Some(
                self.charset_var("character_set_results")
                    .unwrap_or(crate::types::charset::Charset::Utf8mb4),
            ),
        }
    }

    /// The id of `collation_connection` (what the handshake's id set, until
    /// SET NAMES changes it).
    pub fn connection_collation_id(&self) -> u16 {
        self.state.connection_collation().id()
    }

    /// The account's user name this session runs as.
    pub fn user(&self) -> &str {
        &self.state.user
    }

    fn charset_var(&self, name: &str) -> Option<crate::types::charset::Charset> {
        match self.state.vars.get(name) {
            Some(Value::Bytes(b)) => {
                crate::types::charset::Charset::from_name(std::str::from_utf8(b).ok()?)
            }
            _ => None,
        }
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
}

impl Drop for Session {
    fn drop(&mut self) {
        // An XA branch: ACTIVE / IDLE roll back, PREPARED stays, detached.
        self.xa_release();
        // A client that vanished mid-transaction: roll back and free its locks.
        if let Some(t) = self.txn.take() {
            t.rollback();
        }
        // Temporary tables end with their session, however it ends.
        self.drop_all_temporary();
        // And so do its user-level locks (GET_LOCK).
        self.state
            .engine
            .user_locks
            .release_all(self.state.lock_owner());
        // And its table locks and intentions (LOCK TABLES, FTWRL).
        self.state
            .engine
            .table_locks
            .deregister(self.state.lock_owner());
        self.state.engine.unregister_pin(&self.pin);
        let engine = &self.state.engine;
        engine.status.disconnect(&self.state.counts, || {
            engine.processes.deregister(&self.state.process)
        });
    }
}

/// Sessions are opened on the instance, but belong to this layer.
impl Engine {
    /// Opens a session for an authenticated user.
    pub fn session(self: &Arc<Self>, connection_id: u32, user: &str, host: &str) -> Session {
        Session::new(self.clone(), connection_id, user, host)
    }
}
