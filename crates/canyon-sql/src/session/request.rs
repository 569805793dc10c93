//! A request from the client: a query text ([`Session::execute`]), a prepare,
//! an execution of a prepared statement. Each runs guarded (a panic is
//! answered with 1105), counted and timed; large texts leave the
//! connection-serving worker.

use super::perfschema::Outcome;
use super::{context::*, dispatch::*, show::*, state::*};
use crate::catalog::procs::KILL_NONE;
use crate::catalog::status::Counter;
use crate::parse::limits;
use crate::parse::{count_placeholders, parse_with};
use crate::types::expr_column;
use crate::types::result::{column_flags, Column, PreparedInfo, QueryResult};
use crate::types::value::Value;
use canyon_common::{Error, Result};
use canyon_txn::IsolationLevel;
use std::sync::Arc;

/// The most prepared statements one session may hold. MySQL's
/// max_prepared_stmt_count (default 16382) is global; Canyon counts per session so
/// that PREPARE touches no shared counter.
pub const MAX_PREPARED_STATEMENTS: usize = 16382;

/// A query text at least this long is parsed and run off the
/// connection-serving worker ([`Session::execute`]) and can be stopped while
/// it parses. sqlparser reads about 2–5 MB/s here, so a text under this size
/// parses in a few milliseconds (sysbench's statements are under 1 KiB, its
/// multi-row INSERTs of `prepare` up to 512 KiB).
pub const LARGE_TEXT: usize = 16 << 10;

impl Session {
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

    pub(super) fn execute_here(&mut self, sql: &str, multi: bool) -> Vec<Result<QueryResult>> {
        limits::with_statement_stack(|| {
            self.guarded(|s| s.execute_unguarded(sql, multi), |e| vec![Err(e)])
        })
    }

    pub(super) fn execute_unguarded(&mut self, sql: &str, multi: bool) -> Vec<Result<QueryResult>> {
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
            _ => Ok(out
                .iter()
                .flatten()
                .map(|r| r.rows())
                .fold((0, 0), |a, r| (a.0 + r.0, a.1 + r.1))),
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
    pub(super) fn guarded<R>(
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
                self.stmt_depth = 1;
                self.leave_statement();
                self.pending_table_wait = None;
                self.table_wait_deadline = None;
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
    pub(super) fn parse_interrupt(&self, sql: &str) -> crate::parse::Interrupt {
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

    pub(super) fn execute_text(&mut self, sql: &str, multi: bool) -> Vec<Result<QueryResult>> {
        if crate::parse::psm_detect::is_routine_statement(sql) {
            return self.run_routine_text(sql, multi);
        }
        if crate::parse::load::is_load_statement(sql) {
            // LOAD DATA is parsed by `parse::load` (sqlparser knows only
            // Hive's form) and runs alone: a text holding more than it is a
            // syntax error there.
            self.state.warnings.clear();
            let r = self.run_load_text(sql);
            if let Err(e) = &r {
                self.record_error(e);
            }
            return vec![self.with_warning_count(r)];
        }
        if let Some(stmt) = crate::parse::binlog_stmts::parse_binlog_statement(sql) {
            self.state.warnings.clear();
            let r = stmt
                .map_err(Error::Syntax)
                .and_then(|s| self.run_binlog_statement(&s));
            if let Err(e) = &r {
                self.record_error(e);
            }
            return vec![r];
        }
        if let Some(stmt) = crate::parse::replica_stmts::parse_replica_statement(sql) {
            self.state.warnings.clear();
            let r = stmt
                .map_err(Error::Syntax)
                .and_then(|s| self.run_replica_statement(s));
            if let Err(e) = &r {
                self.record_error(e);
            }
            return vec![r];
        }
        if let Some(dir) = crate::parse::backup_stmt::parse_backup_statement(sql) {
            self.state.warnings.clear();
            let r = dir
                .map_err(Error::Syntax)
                .and_then(|d| self.run_backup_statement(&d));
            if let Err(e) = &r {
                self.record_error(e);
            }
            return vec![r];
        }
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
            None => {
                canyon_probes::query_parse_start(sql);
                let r = parse_with(sql, Some(&self.state.engine.statement_memory), interrupt);
                canyon_probes::query_parse_done(r.is_ok());
                match r {
                    Ok((stmts, reservation)) => {
                        let bytes = reservation.map_or(0, |r| r.into_bytes());
                        let held = (bytes > 0).then(|| Held {
                            engine: self.state.engine.clone(),
                            bytes,
                        });
                        (Ok(stmts), held)
                    }
                    Err(e) => (Err(e), None),
                }
            }
        };
        let stmts = match parsed {
            Ok(s) => s,
            Err(e) => {
                self.record_error(&e);
                return vec![Err(e)];
            }
        };
        if stmts.is_empty() {
            // Only comments: OK, as MySQL's grammar gives a text whose
            // lexer met a comment (`SQLCOM_EMPTY_QUERY`); mysqlbinlog's
            // output sends such texts (`/*!\C utf8mb4 */` once the client
            // took its command out). Only whitespace: the server answers
            // 1065 (empty query).
            if sql.contains("/*") || sql.contains('#') || sql.contains("--") {
                return vec![Ok(ok(0))];
            }
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
        self.whole_request = stmts.len() == 1;
        for s in &stmts {
            if let Some(results) = self.run_call_in_text(s) {
                // A CALL sends its result sets, then its OK (`routines`).
                let failed = results.iter().any(|r| r.is_err());
                out.extend(results);
                if failed {
                    break;
                }
                continue;
            }
            let st = &self.state;
            canyon_probes::query_exec_start(
                sql,
                st.connection_id,
                st.db.as_deref().unwrap_or(""),
                &st.user,
                &st.host,
                false,
            );
            let mut r = self.run(s, &[], sql);
            canyon_probes::query_exec_done(r.is_ok());
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
        if let Some(name) = crate::catalog::infoschema::system_schema_name(db) {
            // MySQL keeps the lower-case spelling whatever the client wrote.
            self.state.db = Some(name.to_string());
            self.state.process.set_db(Some(name));
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
        if crate::catalog::infoschema::is_system_schema(&db) {
            let t = crate::catalog::infoschema::lookup_in(&db, table).ok_or_else(|| {
                Error::UnknownTable {
                    db: db.clone(),
                    table: table.to_string(),
                }
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
        let cat = self.state.catalog();
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

    pub(super) fn prepare_here(&mut self, sql: &str) -> Result<PreparedInfo> {
        limits::with_statement_stack(|| self.guarded(|s| s.prepare_unguarded(sql), Err))
    }

    pub(super) fn prepare_unguarded(&mut self, sql: &str) -> Result<PreparedInfo> {
        self.count(Counter::ComStmtPrepare);
        if self.prepared.len() >= MAX_PREPARED_STATEMENTS {
            return Err(Error::TooManyPreparedStatements(
                MAX_PREPARED_STATEMENTS as u64,
            ));
        }
        // The stored-program statements (CREATE / DROP / ALTER PROCEDURE,
        // FUNCTION, TRIGGER, their SHOWs) are prepared as their text and run
        // by `routines` when executed, without parameters, as MariaDB allows
        // (MySQL 8 answers 1295 for most of them). CALL is prepared as usual.
        // LOAD DATA is prepared as its text, as MariaDB prepares it (MySQL 8
        // answers 1295); mysqltest --ps-protocol prepares it.
        let parsed = if crate::parse::load::is_load_statement(sql) {
            crate::parse::load::parse_load(sql)?;
            crate::parse::Parsed::LoadData(sql.to_string())
        } else if crate::parse::psm_detect::is_routine_statement(sql) && !starts_with_call(sql) {
            crate::parse::Parsed::StoredProgram(sql.to_string())
        } else {
            let engine = self.state.engine.clone();
            let interrupt = (sql.len() >= LARGE_TEXT).then(|| self.parse_interrupt(sql));
            let (mut stmts, _reservation) =
                parse_with(sql, Some(&engine.statement_memory), interrupt)?;
            if stmts.len() != 1 {
                return Err(Error::Syntax(second_statement_text(sql)));
            }
            stmts.pop().expect("one statement, checked above")
        };
        let params = match &parsed {
            crate::parse::Parsed::StoredProgram(_) | crate::parse::Parsed::LoadData(_) => 0,
            _ => count_placeholders(sql)?,
        };
        if params > u16::MAX as usize {
            return Err(Error::InvalidArgument("too many placeholders".into()));
        }
        let cat = self.state.catalog();
        let plan = if self.calls_stored_functions(&cat, &parsed) {
            None
        } else {
            // In the server's words, as when the statement runs unprepared.
            self.plan_dml(&cat, &parsed)
                .map_err(|e| self.present_error(e, &parsed))?
        };
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

    /// Adds one to a status counter of this session.
    pub(super) fn count(&mut self, c: Counter) {
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
    pub(super) fn end_statement(&mut self, start: std::time::Instant, rows: (u64, u64)) {
        if start.elapsed().as_secs_f64() > self.state.long_query_secs {
            self.count(Counter::SlowQueries);
        }
        self.perfschema_end(start, rows);
        self.count_reads();
        self.state.process.end_statement(&self.state.counts);
    }

    /// COM_STMT_EXECUTE with decoded parameters (the count is checked: 1210).
    pub fn execute_prepared(&mut self, id: u32, params: &[Value]) -> Result<QueryResult> {
        limits::with_statement_stack(|| {
            self.guarded(|s| s.execute_prepared_unguarded(id, params), Err)
        })
    }

    pub(super) fn execute_prepared_unguarded(
        &mut self,
        id: u32,
        params: &[Value],
    ) -> Result<QueryResult> {
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
                let s = &mut self.state;
                canyon_probes::query_start(
                    text,
                    s.connection_id,
                    s.db.as_deref().unwrap_or(""),
                    &s.user,
                    &s.host,
                );
                s.io.get_mut().start();
                s.query_log
                    .start(&s.engine.query_log, s.connection_id, "Execute", text);
                self.count(Counter::ComStmtExecute);
                std::time::Instant::now()
            }
        };
        self.defer_waits_now = self.async_lock_waits;
        if let Some(p) = self.prepared.get(&id) {
            let s = &self.state;
            canyon_probes::query_exec_start(
                &p.text,
                s.connection_id,
                s.db.as_deref().unwrap_or(""),
                &s.user,
                &s.host,
                true,
            );
        }
        let r = self.execute_prepared_inner(id, params);
        canyon_probes::query_exec_done(r.is_ok());
        self.request_end(start, &r);
        r
    }

    pub(super) fn execute_prepared_inner(
        &mut self,
        id: u32,
        params: &[Value],
    ) -> Result<QueryResult> {
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

    pub(super) fn execute_prepared_pinned(
        &mut self,
        id: u32,
        params: &[Value],
    ) -> Result<QueryResult> {
        let p = self
            .prepared
            .get(&id)
            .expect("the caller looked the statement up");
        let counter = p.counter;
        let cat = self.state.catalog();
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
                self.enter_statement();
                let r = self.run_plan(&plan, params);
                self.leave_statement();
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
        self.xa_release();
        self.state
            .engine
            .table_locks
            .deregister(self.state.lock_owner());
        self.table_activity = self
            .state
            .engine
            .table_locks
            .register(self.state.lock_owner());
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
        s.locked_tables = None;
        s.global_read_lock = false;
        s.next_read_only = None;
        s.txn_read_only = false;
        s.lock_wait_timeout = s.engine.config.lock_wait_timeout;
        s.last_insert_id = 0;
        s.max_execution_ms = 0;
        s.warnings.clear();
    }

    pub(super) fn note(&mut self, code: u16, message: String) {
        self.state.warnings.push(("Note", code, message));
    }

    /// A warning for SHOW WARNINGS; a note where `code` carries
    /// [`crate::expr::eval::NOTE`].
    pub(super) fn warning(&mut self, code: u16, message: String) {
        let (level, code) = crate::expr::eval::warning_level(code);
        self.state.warnings.push((level, code, message));
    }

    /// The `YEAR(n)` columns of a CREATE or ALTER TABLE as the server's
    /// presentation has them: 1818 for MySQL 8, MariaDB's YEAR(2) and Note
    /// 1287 for `presentation = "mariadb"` (see
    /// `crate::ddl::column_type::year_widths`).
    pub(super) fn year_widths<'a>(
        &mut self,
        columns: impl IntoIterator<Item = &'a mut crate::catalog::ColumnDef>,
    ) -> Result<()> {
        let mariadb = self.state.engine.config().presentation
            == crate::catalog::config::Presentation::Mariadb;
        let mut notes = Vec::new();
        crate::ddl::column_type::year_widths(columns, mariadb, &mut |code, message| {
            notes.push((code, message))
        })?;
        for (code, message) in notes {
            self.note(code, message);
        }
        Ok(())
    }

    /// Whether the session's `sql_mode` names `flag`.
    pub(super) fn sql_mode_has(&self, flag: &str) -> bool {
        self.state.get_var("sql_mode").is_ok_and(|v| {
            v.to_display()
                .split(',')
                .any(|m| m.trim().eq_ignore_ascii_case(flag))
        })
    }

    /// Whether the session's `sql_mode` is strict (STRICT_TRANS_TABLES or
    /// STRICT_ALL_TABLES).
    pub(super) fn strict_sql_mode(&self) -> bool {
        self.sql_mode_has("STRICT_TRANS_TABLES") || self.sql_mode_has("STRICT_ALL_TABLES")
    }

    /// Sets the result's warning count from the statement's warnings.
    pub(super) fn with_warning_count(&mut self, r: Result<QueryResult>) -> Result<QueryResult> {
        let r = self.present_key_names(r);
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

    /// Duplicate-key messages name the key as MySQL 5.7 and MariaDB do
    /// (`for key 'PRIMARY'`) when the server shows 5.7's presentation
    /// (`display_widths`, or MariaDB's presentation): MySQL 8.0.19 began to
    /// qualify the key with its table (`'t1.PRIMARY'`) in the release that
    /// dropped display widths.
    fn present_key_names(&mut self, r: Result<QueryResult>) -> Result<QueryResult> {
        if !self.state.engine.config.shows_display_widths() {
            return r;
        }
        let unqualify = |key: &str| key.rsplit('.').next().unwrap_or(key).to_string();
        for w in self.state.warnings.iter_mut().filter(|w| w.1 == 1062) {
            if let Some(at) = w.2.find("for key '") {
                let start = at + "for key '".len();
                let key = w.2[start..].trim_end_matches('\'');
                w.2 = format!("{}{}'", &w.2[..start], unqualify(key));
            }
        }
        match r {
            Err(Error::DuplicateEntry { value, key }) => Err(Error::DuplicateEntry {
                value,
                key: unqualify(&key),
            }),
            r => r,
        }
    }

    pub(super) fn record_error(&mut self, e: &Error) {
        if matches!(e, Error::LockWaitPending | Error::LocalInfileRequest(_)) {
            // Not the statement's outcome: it runs again after the wait, or
            // goes on once the client's file is in (`load`).
            return;
        }
        self.state.warnings.clear();
        self.state.warnings.push(("Error", 0, format!("{e}")));
    }

    /// Marks the start of a client request: a fresh one is shown in the
    /// process list and timed; one sent again after a lock wait continues the
    /// first's. Returns the start time.
    pub(super) fn request_start(&mut self, text: &str) -> std::time::Instant {
        match self.lock_retry {
            Some(start) => start,
            None => {
                self.state.process.begin_statement(text);
                let s = &mut self.state;
                canyon_probes::query_start(
                    text,
                    s.connection_id,
                    s.db.as_deref().unwrap_or(""),
                    &s.user,
                    &s.host,
                );
                s.io.get_mut().start();
                s.query_log
                    .start(&s.engine.query_log, s.connection_id, "Query", text);
                std::time::Instant::now()
            }
        }
    }

    /// Marks the end of a client request (see [`Session::request_start`]):
    /// one stopped at a lock wait stays running.
    pub(super) fn request_end<T: Outcome>(&mut self, start: std::time::Instant, r: &Result<T>) {
        self.defer_waits_now = false;
        // For performance_schema.data_locks: whose transaction holds or awaits a lock.
        self.state
            .process
            .set_txn(self.txn.as_ref().and_then(|t| t.id()));
        if matches!(r, Err(Error::LockWaitPending)) {
            self.state.io.get_mut().wait_begins();
            self.lock_retry = Some(start);
        } else {
            self.lock_retry = None;
            self.table_wait_deadline = None;
            canyon_probes::query_done(r.is_ok());
            self.end_statement(start, r.as_ref().map_or((0, 0), Outcome::rows));
            self.log_statement_end(start);
        }
    }

    /// The statement's slow-log entry (`crate::catalog::querylog`), if it
    /// is one. Rows_examined: see that module's doc.
    fn log_statement_end(&mut self, start: std::time::Instant) {
        let s = &mut self.state;
        if !s.engine.query_log.slow_on() {
            return;
        }
        let sent = match s.row_count {
            -1 => s.found_rows,
            _ => 0,
        };
        let io = s.io.get_mut();
        let entry = crate::catalog::querylog::SlowEntry {
            id: s.connection_id,
            user: &s.user,
            host: &s.host,
            db: s.db.as_deref(),
            elapsed: start.elapsed(),
            long_query_secs: s.long_query_secs,
            rows_sent: sent,
            rows_examined: io.rows_examined,
            rows_affected: match s.row_count {
                -1 => 0,
                n => n.max(0) as u64,
            },
            lock: std::time::Duration::from_nanos(io.lock_ns),
            no_index_used: io.no_index_used,
        };
        s.query_log.end(&s.engine.query_log, &entry);
    }

    /// The general log's Connect line (`user@host on db using TCP/IP`).
    pub fn log_connect(&mut self) {
        if !self.state.engine.query_log.general_on() {
            return;
        }
        let s = &self.state;
        let via = if s.host == "localhost" {
            "Socket"
        } else {
            "TCP/IP"
        };
        let arg = format!(
            "{}@{} on {} using {via}",
            s.user,
            s.host,
            s.db.as_deref().unwrap_or("")
        );
        self.log_general("Connect", &arg);
    }

    /// Writes a general-log line for a connection event (Connect, Quit,
    /// Init DB); one relaxed load when the log is off.
    pub fn log_general(&mut self, command: &str, argument: &str) {
        let s = &mut self.state;
        if s.engine.query_log.general_on() {
            s.engine
                .query_log
                .general(&mut s.query_log, s.connection_id, command, argument);
        }
    }

    /// Releases the catalog pin once no transaction is open (rule P1 of
    /// `crate::ddl::alter`: a pin lives as long as the transaction).
    pub(super) fn unpin_if_idle(&self) {
        if self.txn.is_none() {
            self.unpin();
        }
    }

    pub(super) fn unpin(&self) {
        // The transaction is over: so are its table write intentions.
        self.state
            .engine
            .table_locks
            .end_transaction(&self.table_activity);
        self.pin.unpin();
    }
}

/// Whether the statement's first word is CALL.
fn starts_with_call(sql: &str) -> bool {
    let t = sql.trim_start();
    t.len() >= 4
        && t[..4].eq_ignore_ascii_case("CALL")
        && !t[4..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
}
