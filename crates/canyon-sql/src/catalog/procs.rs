//! The process registry: one entry per session, read by SHOW PROCESSLIST and
//! `information_schema.PROCESSLIST`, written by KILL.
//!
//! # Layout and costs
//! ```text
//!   ProcessList.shards[id % 16]   Mutex<HashMap<id, Vec<Arc<Process>>>>
//!        (locked at session open and close, by KILL and by readers)
//!   Process { id, user, host, connected,
//!             kill: Arc<AtomicU32>          (KILL writes, row loops read: relaxed)
//!             info: Mutex<ProcInfo>         (its session + PROCESSLIST and
//!                                            SHOW GLOBAL STATUS readers; holds
//!                                            the session's status counters,
//!                                            published at statement end)
//!             hook: Mutex<Option<KillHook>> (the server's wake-up for KILL) }
//! ```
//! A statement never takes a shared lock: it locks its own `info` mutex twice
//! (Query at the start, Sleep at the end) — uncontended unless someone is
//! reading the process list at that moment — and its row loops load `kill`
//! with a relaxed atomic load. MySQL's THD list is guarded by one
//! LOCK_thd_list (partitioned in 8.0); the shards here play the same role and
//! are touched once per connection, never per statement.
//!
//! # The kill flag (a small state machine)
//! ```text
//!   NONE --KILL QUERY--> QUERY --next statement starts--> NONE
//!   NONE/QUERY --KILL CONNECTION--> CONNECTION   (final: the session is dead)
//! ```
//! Invariants: (1) CONNECTION is never cleared; (2) only the session itself
//! clears QUERY, with a compare-exchange, at the start of a statement, so a
//! KILL QUERY that arrives while a statement runs stops that statement (and a
//! KILL QUERY of an idle session is forgotten by its next statement, as in
//! MySQL); (3) a non-zero flag makes every row loop and lock wait of the
//! session's running statement fail with ER_QUERY_INTERRUPTED.
//!
//! Not implemented: KILL of a statement blocked in storage I/O (a single
//! RocksDB call is not interruptible) and the finer MySQL states (only
//! "executing" and "" are reported).

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The flag's resting value.
pub const KILL_NONE: u32 = 0;
/// KILL QUERY: stop the running statement.
pub const KILL_QUERY: u32 = 1;
/// KILL CONNECTION: stop the running statement and close the connection.
pub const KILL_CONNECTION: u32 = 2;

/// A wake-up the server installs so that a KILL reaches a connection task that
/// is waiting rather than running: KILL CONNECTION closes one that waits for the
/// client's next packet, and either KILL ends one that awaits a row lock.
pub type KillHook = Box<dyn Fn() + Send + Sync>;

const SHARDS: usize = 16;

/// What a session is doing, as SHOW PROCESSLIST shows it.
#[derive(Debug, Clone)]
pub struct ProcInfo {
    /// The current database.
    pub db: Option<String>,
    /// Whether a statement is running ("Query") or not ("Sleep").
    pub running: bool,
    /// When the current state began (the Time column).
    pub since: Instant,
    /// The running statement's text (empty when sleeping).
    pub query: String,
    /// The session's status counters as of its last statement (see
    /// `crate::catalog::status`).
    pub counts: crate::catalog::status::Counts,
}

/// One session's entry.
pub struct Process {
    /// The connection id (CONNECTION_ID()).
    pub id: u32,
    /// The login user.
    pub user: String,
    /// The client host.
    pub host: String,
    kill: Arc<AtomicU32>,
    info: Mutex<ProcInfo>,
    hook: Mutex<Option<KillHook>>,
    /// The session's performance_schema statistics (taken by the session at
    /// statement end and by readers of performance_schema: see
    /// `crate::catalog::perfschema`).
    pub perf: Mutex<crate::catalog::perfschema::ThreadStats>,
    /// The id of the session's transaction as of its last request end (0:
    /// none), for `performance_schema.data_locks`' THREAD_ID. Written by
    /// the session alone, with a relaxed store.
    txn_id: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for Process {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Process")
            .field("id", &self.id)
            .field("user", &self.user)
            .field("kill", &self.kill)
            .finish_non_exhaustive()
    }
}

impl Process {
    /// The kill flag, shared with the session's transactions (lock waits).
    pub fn kill_flag(&self) -> &Arc<AtomicU32> {
        &self.kill
    }

    /// The flag's current value (`KILL_*`).
    pub fn kill_state(&self) -> u32 {
        self.kill.load(Ordering::Relaxed)
    }

    /// Starts a statement: forgets a KILL QUERY aimed at an earlier one
    /// (invariant 2) and shows the statement as running.
    pub(crate) fn begin_statement(&self, text: &str) {
        let _ =
            self.kill
                .compare_exchange(KILL_QUERY, KILL_NONE, Ordering::Relaxed, Ordering::Relaxed);
        let mut i = self.info.lock();
        i.running = true;
        i.since = Instant::now();
        i.query.clear();
        i.query.push_str(text);
    }

    /// Ends a statement: back to Sleep, publishing the session's counters.
    /// The buffer keeps its capacity for the next statement.
    pub(crate) fn end_statement(&self, counts: &crate::catalog::status::Counts) {
        let mut i = self.info.lock();
        i.counts.clone_from(counts);
        i.running = false;
        i.since = Instant::now();
        i.query.clear();
    }

    /// Records the end of the running statement in performance_schema (its
    /// text is the one `begin_statement` showed), before `end_statement`.
    pub(crate) fn record_statement(
        &self,
        perf: &crate::catalog::perfschema::PerfSchema,
        e: &crate::catalog::perfschema::StatementEnd<'_>,
    ) {
        // Lock order: `info`, then `perf` (readers never hold `perf` while
        // they take `info`).
        let i = self.info.lock();
        perf.statement_end(&self.perf, &i.query, e);
    }

    /// Publishes the session's transaction id (`None`: no transaction, or
    /// one that has taken no lock yet).
    pub(crate) fn set_txn(&self, id: Option<u64>) {
        self.txn_id.store(id.unwrap_or(0), Ordering::Relaxed);
    }

    /// The transaction id the session published last.
    pub fn txn(&self) -> Option<u64> {
        Some(self.txn_id.load(Ordering::Relaxed)).filter(|&id| id != 0)
    }

    /// Records the current database.
    pub(crate) fn set_db(&self, db: Option<&str>) {
        self.info.lock().db = db.map(str::to_string);
    }

    /// A copy of what the session is doing.
    pub fn info(&self) -> ProcInfo {
        self.info.lock().clone()
    }

    /// Installs the server's wake-up for KILL CONNECTION (replacing any).
    pub(crate) fn set_hook(&self, hook: KillHook) {
        *self.hook.lock() = Some(hook);
    }

    /// Marks the session killed (`KILL_QUERY` or `KILL_CONNECTION`), then
    /// runs the server's hook (after the mark, so that the woken task sees it).
    pub(crate) fn kill(&self, how: u32) {
        debug_assert!(how == KILL_QUERY || how == KILL_CONNECTION);
        if how == KILL_CONNECTION {
            self.kill.store(KILL_CONNECTION, Ordering::Relaxed);
        } else {
            // Never downgrade a connection kill (invariant 1).
            let _ = self.kill.compare_exchange(
                KILL_NONE,
                KILL_QUERY,
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
        }
        if let Some(h) = self.hook.lock().as_ref() {
            h();
        }
    }
}

/// The registry of live sessions. See the module doc.
pub struct ProcessList {
    shards: Box<[Mutex<HashMap<u32, Vec<Arc<Process>>>>]>,
    /// performance_schema's instance-wide state; its per-thread part is
    /// in each [`Process`].
    pub perf: crate::catalog::perfschema::PerfSchema,
}

impl Default for ProcessList {
    fn default() -> Self {
        ProcessList {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            perf: Default::default(),
        }
    }
}

impl ProcessList {
    fn shard(&self, id: u32) -> &Mutex<HashMap<u32, Vec<Arc<Process>>>> {
        &self.shards[id as usize % SHARDS]
    }

    /// Registers a new session (once per connection). In-process callers may
    /// reuse an id; each registration is its own entry.
    pub(crate) fn register(&self, id: u32, user: &str, host: &str) -> Arc<Process> {
        let p = Arc::new(Process {
            id,
            user: user.to_string(),
            host: host.to_string(),
            kill: Arc::new(AtomicU32::new(KILL_NONE)),
            info: Mutex::new(ProcInfo {
                db: None,
                running: false,
                since: Instant::now(),
                query: String::new(),
                counts: Default::default(),
            }),
            hook: Mutex::new(None),
            perf: Mutex::default(),
            txn_id: Default::default(),
        });
        self.shard(id).lock().entry(id).or_default().push(p.clone());
        p
    }

    /// Removes a session's entry (when the session is dropped).
    pub(crate) fn deregister(&self, p: &Arc<Process>) {
        // Its digest rows outlive the connection, as in MySQL.
        self.perf.retire(&p.perf.lock());
        let mut shard = self.shard(p.id).lock();
        if let Some(list) = shard.get_mut(&p.id) {
            list.retain(|q| !Arc::ptr_eq(q, p));
            if list.is_empty() {
                shard.remove(&p.id);
            }
        }
    }

    /// The entries with connection id `id` (usually one).
    pub fn find(&self, id: u32) -> Vec<Arc<Process>> {
        self.shard(id).lock().get(&id).cloned().unwrap_or_default()
    }

    /// Every live session, by id.
    pub fn all(&self) -> Vec<Arc<Process>> {
        let mut out: Vec<Arc<Process>> = Vec::new();
        for s in self.shards.iter() {
            out.extend(s.lock().values().flatten().cloned());
        }
        out.sort_by_key(|p| p.id);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kill_state_machine() {
        let list = ProcessList::default();
        let p = list.register(7, "u", "h");
        assert_eq!(list.find(7).len(), 1);
        p.kill(KILL_QUERY);
        assert_eq!(p.kill_state(), KILL_QUERY);
        p.begin_statement("SELECT 1");
        assert_eq!(
            p.kill_state(),
            KILL_NONE,
            "a new statement forgets KILL QUERY"
        );
        let woken = Arc::new(AtomicU32::new(0));
        let w = woken.clone();
        p.set_hook(Box::new(move || {
            w.fetch_add(1, Ordering::Relaxed);
        }));
        p.kill(KILL_CONNECTION);
        p.kill(KILL_QUERY);
        p.begin_statement("SELECT 2");
        p.end_statement(&Default::default());
        assert_eq!(p.kill_state(), KILL_CONNECTION, "never downgraded");
        assert_eq!(woken.load(Ordering::Relaxed), 2, "each KILL wakes the task");
        list.deregister(&p);
        assert!(list.find(7).is_empty());
        assert!(list.all().is_empty());
    }
}
