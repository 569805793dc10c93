//! Server status counters: SHOW [GLOBAL | SESSION] STATUS.
//!
//! # Where the counts live
//! MySQL keeps a `System_status_var` per THD and adds them all up under
//! LOCK_status when someone asks for the global view; the per-statement cost
//! is plain increments on thread-local memory. Canyon does the same with the
//! structures it already has:
//!
//! ```text
//!   Session.counts       plain u64s, bumped by the session alone (no atomics)
//!      │ published at the end of every statement, into
//!   Process.counts       inside the process-list entry's `info` mutex, which
//!      │                 the statement locks there anyway (see crate::catalog::procs)
//!      │ folded at disconnect and FLUSH STATUS, into
//!   Status.closed        one mutex, touched once per connection
//! ```
//! GLOBAL = `closed` + Σ live processes' `counts`, summed when asked; SESSION
//! = the session's own counts. So a statement adds no lock, no atomic and no
//! shared cache line it did not touch before. Connection-level figures
//! (Connections, Threads_connected, Max_used_connections, Aborted_*) are
//! atomics changed once per connection; Uptime is the engine's age.
//!
//! A counter is in [`Counter`]; its MySQL name is [`Counter::name`]. Values a
//! session cannot see alone (Threads_*, Connections, Uptime, ...) show their
//! global value in SESSION scope too, as in MySQL.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// A per-session status counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)] // each is its MySQL name, see `Counter::name`
pub enum Counter {
    Questions,
    ComSelect,
    ComInsert,
    ComInsertSelect,
    ComReplace,
    ComUpdate,
    ComDelete,
    ComBegin,
    ComCommit,
    ComRollback,
    ComSavepoint,
    ComSetOption,
    ComShowStatus,
    ComShowVariables,
    ComShowTables,
    ComShowDatabases,
    ComShowFields,
    ComShowCreateTable,
    ComShowProcesslist,
    ComShowWarnings,
    ComCreateTable,
    ComDropTable,
    ComAlterTable,
    ComCreateDb,
    ComDropDb,
    ComCreateIndex,
    ComDropIndex,
    ComChangeDb,
    ComKill,
    ComStmtPrepare,
    ComStmtExecute,
    ComStmtClose,
    ComXaCommit,
    ComXaEnd,
    ComXaPrepare,
    ComXaRecover,
    ComXaRollback,
    ComXaStart,
    BytesReceived,
    BytesSent,
    SlowQueries,
    HandlerCommit,
    HandlerRollback,
    HandlerReadKey,
    HandlerReadNext,
    HandlerReadRndNext,
    SelectFullJoin,
    SelectScan,
    InnodbRowsDeleted,
    InnodbRowsInserted,
    InnodbRowsRead,
    InnodbRowsUpdated,
}

impl Counter {
    /// Every counter, in SHOW STATUS order (alphabetical, as MySQL sorts).
    pub const ALL: [Counter; 52] = {
        use Counter::*;
        [
            BytesReceived,
            BytesSent,
            ComAlterTable,
            ComBegin,
            ComChangeDb,
            ComCommit,
            ComCreateDb,
            ComCreateIndex,
            ComCreateTable,
            ComDelete,
            ComDropDb,
            ComDropIndex,
            ComDropTable,
            ComInsert,
            ComInsertSelect,
            ComKill,
            ComReplace,
            ComRollback,
            ComSavepoint,
            ComSelect,
            ComSetOption,
            ComShowCreateTable,
            ComShowDatabases,
            ComShowFields,
            ComShowProcesslist,
            ComShowStatus,
            ComShowTables,
            ComShowVariables,
            ComShowWarnings,
            ComStmtClose,
            ComStmtExecute,
            ComStmtPrepare,
            ComUpdate,
            ComXaCommit,
            ComXaEnd,
            ComXaPrepare,
            ComXaRecover,
            ComXaRollback,
            ComXaStart,
            HandlerCommit,
            HandlerReadKey,
            HandlerReadNext,
            HandlerReadRndNext,
            HandlerRollback,
            InnodbRowsDeleted,
            InnodbRowsInserted,
            InnodbRowsRead,
            InnodbRowsUpdated,
            Questions,
            SelectFullJoin,
            SelectScan,
            SlowQueries,
        ]
    };

    /// The variable's name in SHOW STATUS.
    pub fn name(self) -> &'static str {
        use Counter::*;
        match self {
            Questions => "Questions",
            ComSelect => "Com_select",
            ComInsert => "Com_insert",
            ComInsertSelect => "Com_insert_select",
            ComReplace => "Com_replace",
            ComUpdate => "Com_update",
            ComDelete => "Com_delete",
            ComBegin => "Com_begin",
            ComCommit => "Com_commit",
            ComRollback => "Com_rollback",
            ComSavepoint => "Com_savepoint",
            ComSetOption => "Com_set_option",
            ComShowStatus => "Com_show_status",
            ComShowVariables => "Com_show_variables",
            ComShowTables => "Com_show_tables",
            ComShowDatabases => "Com_show_databases",
            ComShowFields => "Com_show_fields",
            ComShowCreateTable => "Com_show_create_table",
            ComShowProcesslist => "Com_show_processlist",
            ComShowWarnings => "Com_show_warnings",
            ComCreateTable => "Com_create_table",
            ComDropTable => "Com_drop_table",
            ComAlterTable => "Com_alter_table",
            ComCreateDb => "Com_create_db",
            ComDropDb => "Com_drop_db",
            ComCreateIndex => "Com_create_index",
            ComDropIndex => "Com_drop_index",
            ComChangeDb => "Com_change_db",
            ComKill => "Com_kill",
            ComStmtPrepare => "Com_stmt_prepare",
            ComStmtExecute => "Com_stmt_execute",
            ComStmtClose => "Com_stmt_close",
            ComXaCommit => "Com_xa_commit",
            ComXaEnd => "Com_xa_end",
            ComXaPrepare => "Com_xa_prepare",
            ComXaRecover => "Com_xa_recover",
            ComXaRollback => "Com_xa_rollback",
            ComXaStart => "Com_xa_start",
            BytesReceived => "Bytes_received",
            BytesSent => "Bytes_sent",
            SlowQueries => "Slow_queries",
            HandlerCommit => "Handler_commit",
            HandlerRollback => "Handler_rollback",
            HandlerReadKey => "Handler_read_key",
            HandlerReadNext => "Handler_read_next",
            HandlerReadRndNext => "Handler_read_rnd_next",
            SelectFullJoin => "Select_full_join",
            SelectScan => "Select_scan",
            InnodbRowsDeleted => "Innodb_rows_deleted",
            InnodbRowsInserted => "Innodb_rows_inserted",
            InnodbRowsRead => "Innodb_rows_read",
            InnodbRowsUpdated => "Innodb_rows_updated",
        }
    }
}

/// One set of counts (a session's, or a sum).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counts([u64; Counter::ALL.len()]);

impl Default for Counts {
    fn default() -> Counts {
        Counts([0; Counter::ALL.len()])
    }
}

impl Counts {
    /// Adds `n` to `c`.
    pub fn add(&mut self, c: Counter, n: u64) {
        self.0[c as usize] = self.0[c as usize].wrapping_add(n);
    }

    /// The value of `c`.
    pub fn get(&self, c: Counter) -> u64 {
        self.0[c as usize]
    }

    /// Adds every count of `other`.
    pub fn absorb(&mut self, other: &Counts) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a = a.wrapping_add(*b);
        }
    }
}

/// The engine-wide part: closed sessions' totals and connection figures.
#[derive(Debug, Default)]
pub struct Status {
    closed: Mutex<Counts>,
    connections: AtomicU64,
    connected: AtomicU64,
    max_connected: AtomicU64,
    aborted_connects: AtomicU64,
    aborted_clients: AtomicU64,
}

impl Status {
    /// A session opened (`Connections`, `Threads_connected`,
    /// `Max_used_connections`).
    pub(crate) fn connect(&self) {
        self.connections.fetch_add(1, Ordering::Relaxed);
        let now = self.connected.fetch_add(1, Ordering::Relaxed) + 1;
        self.max_connected.fetch_max(now, Ordering::Relaxed);
    }

    /// A session closed: its counts join the totals. `leave` takes the
    /// session off the process list; it runs under the totals' lock, so a
    /// GLOBAL reader (see [`Status::closed_with`]) sees the counts either in
    /// the live entry or in the totals, never in both and never in neither.
    pub(crate) fn disconnect(&self, counts: &Counts, leave: impl FnOnce()) {
        let mut closed = self.closed.lock();
        leave();
        closed.absorb(counts);
        drop(closed);
        self.connected.fetch_sub(1, Ordering::Relaxed);
    }

    /// Folds counts into the totals without closing (FLUSH STATUS).
    pub(crate) fn fold(&self, counts: &Counts) {
        self.closed.lock().absorb(counts);
    }

    /// A connection attempt that failed before a session existed (bad
    /// password, bad handshake): `Aborted_connects`.
    pub fn aborted_connect(&self) {
        self.aborted_connects.fetch_add(1, Ordering::Relaxed);
    }

    /// A connection that ended without COM_QUIT: `Aborted_clients`.
    pub fn aborted_client(&self) {
        self.aborted_clients.fetch_add(1, Ordering::Relaxed);
    }

    /// Closed sessions' totals, and `live` run under the same lock: what
    /// `live` reads of the process list is consistent with the totals (a
    /// closing session is in exactly one of them).
    pub(crate) fn closed_with<T>(&self, live: impl FnOnce() -> T) -> (Counts, T) {
        let closed = self.closed.lock();
        let t = live();
        (closed.clone(), t)
    }

    /// (Connections, Threads_connected, Max_used_connections,
    /// Aborted_connects, Aborted_clients).
    pub(crate) fn connection_figures(&self) -> [(&'static str, u64); 5] {
        [
            (
                "Aborted_clients",
                self.aborted_clients.load(Ordering::Relaxed),
            ),
            (
                "Aborted_connects",
                self.aborted_connects.load(Ordering::Relaxed),
            ),
            ("Connections", self.connections.load(Ordering::Relaxed)),
            (
                "Max_used_connections",
                self.max_connected.load(Ordering::Relaxed),
            ),
            ("Threads_connected", self.connected.load(Ordering::Relaxed)),
        ]
    }
}

impl crate::catalog::engine::Engine {
    /// SHOW STATUS's rows for `counts` (a session's, or every session's):
    /// the counters by their MySQL names, then the server-wide figures
    /// (connections, Threads_running over `procs`, the row cache, history,
    /// row lock waits), sorted by name; `since` is what
    /// Uptime_since_flush_status counts from.
    pub fn status_rows_from(
        &self,
        counts: &Counts,
        procs: &[std::sync::Arc<crate::catalog::procs::Process>],
        since: std::time::Instant,
    ) -> Vec<(String, u64)> {
        let mut rows: Vec<(String, u64)> = Counter::ALL
            .iter()
            .map(|c| (c.name().to_string(), counts.get(*c)))
            .collect();
        rows.push(("Queries".into(), counts.get(Counter::Questions)));
        for (n, v) in self.status.connection_figures() {
            rows.push((n.into(), v));
        }
        let running = procs.iter().filter(|p| p.info().running).count() as u64;
        rows.push(("Threads_running".into(), running));
        rows.push(("Uptime".into(), self.started().elapsed().as_secs()));
        // The row cache is the server's, so its figures are global in both
        // scopes (as InnoDB's buffer pool figures are).
        let rc = self.txn.row_cache_stats();
        rows.push(("Canyon_row_cache_hits".into(), rc.hits));
        rows.push(("Canyon_row_cache_misses".into(), rc.misses));
        rows.push(("Canyon_row_cache_rows".into(), rc.entries));
        rows.push(("Canyon_row_cache_bytes".into(), rc.bytes));
        rows.push(("Canyon_row_cache_capacity".into(), rc.capacity));
        let h = self.txn.history_stats();
        rows.push(("Canyon_history_versions".into(), h.versions));
        rows.push(("Canyon_history_bytes".into(), h.bytes));
        rows.push(("Canyon_history_spilled".into(), h.spilled));
        rows.push(("Canyon_gc_queued_keys".into(), self.txn.gc_queued_keys()));
        rows.push(("Canyon_dead_runs".into(), self.txn.dead_runs() as u64));
        // Row lock waits are counted by the lock table, server-wide (as
        // InnoDB's are): the same in both scopes.
        let l = self.txn.lock_stats();
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
        rows.push((
            "Uptime_since_flush_status".into(),
            since.elapsed().as_secs(),
        ));
        rows.sort_by_key(|r| r.0.to_ascii_lowercase());
        rows
    }

    /// SHOW GLOBAL STATUS without a session (what `/metrics` serves):
    /// closed sessions' totals plus every live session's last published
    /// counts (a running statement's own counts join at its end).
    pub fn global_status_rows(&self) -> Vec<(String, u64)> {
        let (mut total, procs) = self.status.closed_with(|| self.processes.all());
        for p in &procs {
            total.absorb(&p.info().counts);
        }
        self.status_rows_from(&total, &procs, self.started())
    }

    /// SHOW GLOBAL VARIABLES without a session: (name, value) in name order.
    pub fn global_variable_rows(&self) -> Vec<(&'static str, crate::types::value::Value)> {
        crate::catalog::vars::NAMES
            .iter()
            .map(|name| {
                let v = self
                    .global_var(name)
                    .unwrap_or(crate::types::value::Value::Null);
                (*name, v)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_table_is_complete_and_sorted() {
        let names: Vec<&str> = Counter::ALL.iter().map(|c| c.name()).collect();
        let mut sorted = names.clone();
        sorted.sort_by_key(|n| n.to_ascii_lowercase());
        assert_eq!(names, sorted);
        for (i, c) in Counter::ALL.iter().enumerate() {
            assert!(Counter::ALL[..i].iter().all(|d| d != c), "{c:?} twice");
        }
        // Every variant indexes inside the array.
        assert!(Counter::ALL
            .iter()
            .all(|c| (*c as usize) < Counter::ALL.len()));
    }

    #[test]
    fn totals_survive_disconnects() {
        let s = Status::default();
        s.connect();
        s.connect();
        let mut c = Counts::default();
        c.add(Counter::ComSelect, 3);
        let mut left = false;
        s.disconnect(&c, || left = true);
        assert!(left, "the leave step runs");
        let (closed, ()) = s.closed_with(|| ());
        assert_eq!(closed.get(Counter::ComSelect), 3);
        let f = s.connection_figures();
        assert!(f.contains(&("Connections", 2)));
        assert!(f.contains(&("Threads_connected", 1)));
        assert!(f.contains(&("Max_used_connections", 2)));
    }
}
