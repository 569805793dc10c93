//! The context one statement evaluates in ([`StmtCtx`], the session's side of
//! [`EvalContext`]): parameters, variables, warnings, strict mode, and the
//! interrupt checks that KILL and max_execution_time reach a running
//! statement through (with the hand-off of a long statement off the
//! connection-serving worker).

use super::state::*;
use crate::catalog::engine::Engine;
use crate::catalog::infoschema::SystemTable;
use crate::catalog::privileges::Privs;
use crate::catalog::procs::KILL_NONE;
use crate::catalog::user_locks::Acquired;
use crate::expr::functions::Func;
use crate::expr::functions_misc::UserLockCall;
use crate::expr::EvalContext;
use crate::types::value::Value;
use canyon_common::{Error, Result};
use std::sync::Arc;
use std::time::Duration;

/// How often WAIT_FOR_EXECUTED_GTID_SET looks at `gtid_executed` again: a
/// replica's reader waits this much longer at most than the commit it waits
/// for, and an idle wait costs one look per slice.
const GTID_WAIT_SLICE: Duration = Duration::from_millis(5);

/// The context one statement evaluates in.
pub(super) struct StmtCtx<'a> {
    pub(super) state: &'a State,
    pub(super) params: &'a [Value],
    /// The statement's time in UTC, read on first use: most statements
    /// never call NOW(). NOW() is it in the session's `time_zone`.
    pub(super) now: std::cell::OnceCell<chrono::NaiveDateTime>,
    pub(super) warnings: std::cell::RefCell<Vec<(u16, String)>>,
    /// The first warning of each code strict mode turns into an error in
    /// data-change statements ([`STRICT_WARNINGS`]), kept even past the
    /// warning list's cap.
    pub(super) strict_warnings: std::cell::RefCell<Vec<(u16, String)>>,
    /// max_execution_time's deadline (SELECT only).
    pub(super) deadline: Option<std::time::Instant>,
    /// Interrupt checks so far: the clock is read every `CLOCK_EVERY`.
    pub(super) ticks: std::cell::Cell<u32>,
    /// When the statement had read its first `CLOCK_EVERY` rows, and how many
    /// times it has asked to be moved off the connection-serving thread (see
    /// [`LONG_STATEMENT`]).
    pub(super) long: std::cell::Cell<(Option<std::time::Instant>, u32)>,
    /// The tables whose triggers are running this statement (a trigger's
    /// statement may not write them: 1442), outermost first.
    pub(super) trigger_chain: Vec<(String, String)>,
    /// User variables a trigger or stored function of this statement set
    /// (`SET @x` in a body run inside the statement, which cannot reach the
    /// session): read before the session's own, written to them when the
    /// statement ends (user variables are not transactional).
    pub(super) var_writes: Option<&'a VarWrites>,
}

/// User variables set while a statement runs (see `StmtCtx::var_writes`).
pub(super) type VarWrites = std::cell::RefCell<std::collections::HashMap<String, Value>>;

/// Warnings that strict SQL mode (STRICT_TRANS_TABLES or STRICT_ALL_TABLES,
/// MySQL 8's default) turns into errors in INSERT, UPDATE and DELETE: out of
/// range (1264), data truncated (1265), truncated incorrect value (1292),
/// incorrect value (1366), data too long (1406), and division by zero (1365)
/// when ERROR_FOR_DIVISION_BY_ZERO is set too. INSERT IGNORE keeps them
/// warnings; SELECT always does.
pub(super) const STRICT_WARNINGS: [u16; 6] = [1264, 1265, 1292, 1365, 1366, 1406];

/// The warning shown for a date a column could not take as given (1292,
/// which strict mode makes the error "Incorrect date value: 'x' for column
/// 'c' at row n"): as MySQL shows it outside strict mode or under IGNORE,
/// 1264 "Out of range value" for the zero date where NO_ZERO_DATE refuses
/// it, 1265 "Data truncated" for text that is no date (stored as the zero
/// date). A TIME column's text that did not read whole is 1265 alike.
/// `None` for any other warning (a function's 1292 names no column).
fn stored_date_warning(code: u16, message: &str) -> Option<(u16, String)> {
    let stored = message.starts_with("Incorrect date") || message.starts_with("Incorrect time");
    if code != 1292 || !stored {
        return None;
    }
    let at = message.find(" for column '")?;
    let place = &message[at + 1..];
    Some(
        if message[..at].ends_with(": '0000-00-00'")
            || message[..at].ends_with(": '0000-00-00 00:00:00'")
        {
            (1264, format!("Out of range value {place}"))
        } else {
            (1265, format!("Data truncated {place}"))
        },
    )
}

/// How many interrupt checks (rows) pass between two reads of the clock for
/// max_execution_time: reading it per row would cost more than the row.
pub(super) const CLOCK_EVERY: u32 = 1024;

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
pub(super) const LONG_STATEMENT: Duration = Duration::from_millis(5);

/// Statement memory a running text holds (see `crate::parse::limits`), given back
/// when it drops.
pub(super) struct Held {
    pub(super) engine: Arc<Engine>,
    pub(super) bytes: usize,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.engine.statement_memory.release(self.bytes);
    }
}

/// Whether a `sql_mode` value has TIME_TRUNCATE_FRACTIONAL (stored
/// normalized, in upper case: see `vars::normalize_sql_mode`). Read once per
/// statement, so a plain byte search.
fn truncates_fractional(mode: &[u8]) -> bool {
    mode.windows(24).any(|w| w == b"TIME_TRUNCATE_FRACTIONAL")
}

/// Sets the per-thread flags the type layer reads while a statement runs
/// (`crate::types::datetime`'s TIME_TRUNCATE_FRACTIONAL and zero-date
/// policy) from the session's `sql_mode`, or the global one's for a session
/// that never set it. Called before each statement.
pub(super) fn set_statement_modes(state: &State) {
    let global;
    let mode: &[u8] = match state.vars.get("sql_mode") {
        Some(Value::Bytes(b)) => b,
        Some(_) => b"",
        None => {
            global = state.engine.global_var("sql_mode");
            match &global {
                Some(Value::Bytes(b)) => b,
                _ => b"",
            }
        }
    };
    crate::types::datetime::set_truncate_fractional(truncates_fractional(mode));
    crate::types::datetime::set_zero_dates(crate::types::datetime::ZeroDates::of_sql_mode(mode));
}

/// The first hand-off's pause (see [`LONG_STATEMENT`]).
pub(super) const OFFLOAD_PAUSE: Duration = Duration::from_millis(1);

impl<'a> StmtCtx<'a> {
    pub(super) fn new(state: &'a State, params: &'a [Value]) -> StmtCtx<'a> {
        set_statement_modes(state);
        StmtCtx {
            state,
            params,
            now: std::cell::OnceCell::new(),
            warnings: Default::default(),
            strict_warnings: Default::default(),
            deadline: None,
            ticks: std::cell::Cell::new(0),
            long: std::cell::Cell::new((None, 0)),
            trigger_chain: Vec::new(),
            var_writes: None,
        }
    }

    /// The error a data-change statement ends with under strict SQL mode: the
    /// first of its warnings the mode turns into errors ([`STRICT_WARNINGS`]),
    /// if any and if the session's `sql_mode` is strict. (MySQL stops at the
    /// offending row; here the statement finishes first and is then rolled
    /// back, which ends the same way.)
    pub(super) fn strict_mode_error(&self) -> Option<Error> {
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
    pub(super) fn sql_mode_has(&self, flag: &str) -> bool {
        self.state.get_var("sql_mode").is_ok_and(|v| {
            v.to_display()
                .split(',')
                .any(|m| m.trim().eq_ignore_ascii_case(flag))
        })
    }

    /// Every `CLOCK_EVERY` rows: asks to move a statement that has run for
    /// [`LONG_STATEMENT`] (then 10×, 100×, ... that) off the
    /// connection-serving worker.
    pub(super) fn offload_if_long(&self, now: std::time::Instant) {
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
    fn note_read(
        &self,
        table: &crate::catalog::TableDef,
        index: crate::catalog::perfschema::IoIndex,
        rows: u64,
        joined: bool,
    ) {
        self.state.io.borrow_mut().read(table, index, rows, joined);
    }
    fn note_write(
        &self,
        table: &crate::catalog::TableDef,
        kind: crate::catalog::perfschema::IoWrite,
        rows: u64,
    ) {
        self.state.io.borrow_mut().wrote(table, kind, rows);
    }
    /// Off the runtime worker (the engine's blocking hook), in slices that
    /// look at the kill flag and the max_execution_time deadline.
    fn sleep(&self, d: Duration) -> bool {
        let end = std::time::Instant::now() + d;
        let mut cut = false;
        let mut wait = || loop {
            let now = std::time::Instant::now();
            if self.state.process.kill_state() != KILL_NONE
                || self.deadline.is_some_and(|dl| now >= dl)
            {
                cut = true;
                return;
            }
            if now >= end {
                return;
            }
            std::thread::sleep((end - now).min(Duration::from_millis(10)));
        };
        match self.state.engine.config.blocking_hook {
            Some(hook) => hook(&mut wait),
            None => wait(),
        }
        cut
    }
    fn binlog_gtid_pos(&self, file: &str, pos: u64) -> Result<Value> {
        let engine = &self.state.engine;
        Ok(match engine.binlog.gtid_pos_at(&engine.txn, file, pos)? {
            Some(p) => Value::str(&p),
            None => Value::Null,
        })
    }
    /// Polls `gtid_executed` (the log's head and the replica's applied set,
    /// each read under its own short lock, none held between polls) every
    /// [`GTID_WAIT_SLICE`], off the runtime worker (the engine's blocking
    /// hook) once the set is not there at the first look. A commit becomes
    /// part of `gtid_executed` when it is visible, so a 0 means a read that
    /// follows sees the transactions waited for.
    fn wait_for_executed_gtids(
        &self,
        set: &canyon_binlog::GtidSet,
        timeout: Option<Duration>,
    ) -> Result<bool> {
        let engine = &self.state.engine;
        let executed = || set.is_subset_of(&engine.binlog.executed(&engine.txn));
        if executed() {
            return Ok(false);
        }
        let end = timeout.map(|t| std::time::Instant::now() + t);
        let mut outcome = Ok(true);
        let mut wait = || loop {
            if self.state.process.kill_state() != KILL_NONE {
                outcome = Err(Error::Interrupted);
                return;
            }
            if self
                .deadline
                .is_some_and(|d| std::time::Instant::now() >= d)
            {
                outcome = Err(Error::QueryTimeout);
                return;
            }
            if executed() {
                outcome = Ok(false);
                return;
            }
            let now = std::time::Instant::now();
            let slice = match end {
                Some(end) if now >= end => return,
                Some(end) => (end - now).min(GTID_WAIT_SLICE),
                None => GTID_WAIT_SLICE,
            };
            std::thread::sleep(slice);
        };
        match engine.config.blocking_hook {
            Some(hook) => hook(&mut wait),
            None => wait(),
        }
        outcome
    }
    fn user_lock(&self, call: UserLockCall<'_>) -> Result<Value> {
        let locks = &self.state.engine.user_locks;
        let owner = self.state.lock_owner();
        Ok(match call {
            UserLockCall::Get(name, timeout) => {
                let conn = self.state.connection_id;
                let process = &self.state.process;
                let killed = || process.kill_state() != KILL_NONE;
                // The common case takes a free lock at once; only a wait
                // leaves the runtime worker.
                let mut got = locks.acquire(owner, conn, name, Some(Duration::ZERO), &killed);
                if got == Acquired::TimedOut && timeout != Some(Duration::ZERO) {
                    let mut wait = || got = locks.acquire(owner, conn, name, timeout, &killed);
                    match self.state.engine.config.blocking_hook {
                        Some(hook) => hook(&mut wait),
                        None => wait(),
                    }
                }
                match got {
                    Acquired::Granted => Value::Int(1),
                    Acquired::TimedOut => Value::Int(0),
                    Acquired::Interrupted => return Err(Error::Interrupted),
                    Acquired::Deadlock => {
                        return Err(Error::Sql {
                            code: 3058,
                            sqlstate: *b"HY000",
                            message: "Deadlock found when trying to get user-level lock; \
                                      try rolling back transaction/releasing locks and \
                                      restarting lock acquisition."
                                .into(),
                        })
                    }
                }
            }
            UserLockCall::Release(name) => match locks.release(owner, name) {
                Some(released) => Value::Int(released as i64),
                None => Value::Null,
            },
            UserLockCall::IsFree(name) => Value::Int(locks.holder(name).is_none() as i64),
            UserLockCall::IsUsed(name) => locks
                .holder(name)
                .map_or(Value::Null, |c| Value::Int(c as i64)),
            UserLockCall::ReleaseAll => Value::Int(locks.release_all(owner) as i64),
        })
    }
    fn sys_var(&self, name: &str) -> Result<Value> {
        self.state.get_var(name)
    }
    fn user_var(&self, name: &str) -> Value {
        if let Some(v) = self.var_writes.and_then(|w| w.borrow().get(name).cloned()) {
            return v;
        }
        self.state
            .user_vars
            .get(name)
            .cloned()
            .unwrap_or(Value::Null)
    }
    fn set_user_var(&self, name: &str, v: Value) -> bool {
        // Kept with the writes of the statement's triggers: read back by
        // `user_var` at once, the session's when the statement ends.
        match self.var_writes {
            Some(w) => {
                w.borrow_mut().insert(name.to_string(), v);
                true
            }
            None => false,
        }
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
    fn load_file(&self, name: &[u8]) -> Value {
        // MySQL 8 (Item_load_file): NULL without the FILE privilege, outside
        // secure_file_priv, when unreadable, and (warning 1301) when the
        // file is larger than max_allowed_packet.
        let s = self.state;
        let cat = s.engine.catalog();
        let may = cat
            .user(&s.user, &s.host)
            .is_some_and(|u| u.allows_global(Privs::from_name("FILE").unwrap_or(Privs::SUPER)));
        let Ok(name) = std::str::from_utf8(name) else {
            return Value::Null;
        };
        let path = match super::load::secure_path(&s.engine.config, name) {
            Ok(p) if may => p,
            _ => return Value::Null,
        };
        let max = self
            .sys_var("max_allowed_packet")
            .ok()
            .and_then(|v| v.to_i64())
            .unwrap_or(i64::MAX);
        match std::fs::metadata(&path) {
            Ok(m) if m.is_file() && m.len() <= max as u64 => {}
            Ok(m) if m.is_file() => {
                self.warn(
                    1301,
                    &format!(
                        "Result of load_file() was larger than max_allowed_packet ({max}) - \
                         truncated"
                    ),
                );
                return Value::Null;
            }
            _ => return Value::Null,
        }
        std::fs::read(&path).map_or(Value::Null, Value::Bytes)
    }
    fn now(&self) -> chrono::NaiveDateTime {
        self.time_zone().from_utc(self.now_utc())
    }
    fn time_zone(&self) -> crate::types::timezone::Zone {
        self.state.time_zone()
    }
    fn mariadb(&self) -> bool {
        self.state.engine.config().presentation == crate::catalog::config::Presentation::Mariadb
    }
    fn now_utc(&self) -> chrono::NaiveDateTime {
        *self.now.get_or_init(|| {
            // SET timestamp (what mysqlbinlog and dumps replay) fixes the
            // session's clock.
            match self.state.vars.get("timestamp").and_then(|v| v.to_f64()) {
                Some(secs) => {
                    let micros = (secs * 1e6).round() as i64;
                    chrono::DateTime::from_timestamp_micros(micros)
                        .map(|t| t.naive_utc())
                        .unwrap_or_else(|| chrono::Utc::now().naive_utc())
                }
                None => chrono::Utc::now().naive_utc(),
            }
        })
    }
    fn warn(&self, code: u16, message: &str) {
        if code == 1365 && !self.sql_mode_has("ERROR_FOR_DIVISION_BY_ZERO") {
            // MySQL: without ERROR_FOR_DIVISION_BY_ZERO a division by zero is
            // NULL without a warning.
            return;
        }
        // A BIT value with too many bits is 1406 whose text says "Out of
        // range value" (`types::sqltype::coerce_or_clip`): strict mode's
        // error is 1406 "Data too long", the warning 1264 "Out of range
        // value" (Field_bit::store in both servers).
        let bit_overflow = code == 1406 && message.starts_with("Out of range value");
        if STRICT_WARNINGS.contains(&code) {
            let mut strict = self.strict_warnings.borrow_mut();
            if strict.iter().all(|(c, _)| *c != code) {
                let text = if bit_overflow {
                    message.replacen("Out of range value", "Data too long", 1)
                } else {
                    message.to_string()
                };
                strict.push((code, text));
            }
        }
        let mut w = self.warnings.borrow_mut();
        // MySQL caps the list at max_error_count (64).
        if w.len() < 64 {
            if bit_overflow {
                w.push((1264, message.to_string()));
            } else if code == 1406 {
                // A string cut to the column's length: strict mode's error is
                // 1406 "Data too long", the warning MySQL shows otherwise is
                // 1265 "Data truncated".
                w.push((1265, message.replacen("Data too long", "Data truncated", 1)));
            } else if let Some(shown) = stored_date_warning(code, message) {
                w.push(shown);
            } else {
                w.push((code, message.to_string()));
            }
        }
    }
    fn warn_once(&self, code: u16, message: &str) {
        let known = self
            .warnings
            .borrow()
            .iter()
            .any(|(c, m)| *c == code && m == message);
        if !known {
            self.warn(code, message);
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
        let settings = |which| match which {
            crate::catalog::infoschema::Settings::Variables(global) => s
                .variable_rows(global)
                .into_iter()
                .map(|(n, v)| {
                    let text = v.to_text().unwrap_or_default();
                    (n.to_string(), String::from_utf8_lossy(&text).into_owned())
                })
                .collect(),
            crate::catalog::infoschema::Settings::Status(global) => s
                .status_rows(global)
                .into_iter()
                .map(|(n, v)| (n, v.to_string()))
                .collect(),
        };
        let g = crate::catalog::infoschema::GenCtx {
            catalog: &cat,
            registry: s.engine.processes(),
            table_locks: &s.engine.table_locks,
            locks: &|| s.engine.txn_manager().lock_snapshot(),
            account: account.as_deref(),
            processes: &processes,
            settings: &settings,
            display_widths: s.engine.config().shows_display_widths(),
            time_zone: s.time_zone(),
        };
        Ok(crate::catalog::infoschema::generate(table, filter, &g))
    }
    fn call_stored(
        &self,
        routine: &std::sync::Arc<crate::catalog::routines::RoutineDef>,
        args: Vec<Value>,
    ) -> Result<Value> {
        super::triggers::call_stored_per_row(self, routine, args)
    }
    fn has_triggers(
        &self,
        table: &crate::catalog::TableDef,
        event: crate::catalog::routines::TriggerEvent,
    ) -> bool {
        // A temporary table has no triggers, whatever its name's base table has.
        if crate::catalog::temporary::is_temporary(table.id) {
            return false;
        }
        let cat = self.state.engine.catalog();
        !cat.triggers.is_empty()
            && cat
                .triggers
                .values()
                .any(|t| t.db == table.db && t.table == table.name && t.event == event)
    }
    fn fire_triggers(
        &self,
        txn: &mut canyon_txn::Transaction,
        table: &crate::catalog::TableDef,
        timing: crate::catalog::routines::TriggerTiming,
        event: crate::catalog::routines::TriggerEvent,
        old: Option<&[Value]>,
        new: Option<&mut Vec<Value>>,
    ) -> Result<()> {
        super::triggers::fire_triggers(self, txn, table, timing, event, old, new)
    }
}

/// The sessions an account may see in the process list: all of them with
/// global privileges (MySQL's PROCESS privilege), else its own user's.
pub(super) fn process_rows(
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
