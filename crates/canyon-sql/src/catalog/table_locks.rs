//! Table locks: LOCK TABLES ... READ / WRITE, FLUSH TABLES WITH READ LOCK
//! (FTWRL) and `FLUSH TABLES t, ... WITH READ LOCK`, one registry per engine,
//! with MySQL 8.0's blocking rules (manual, 15.3.6 "LOCK TABLES and UNLOCK
//! TABLES Statements", 15.7.8.3 "FLUSH Statement").
//!
//! # Who blocks whom
//! A *holder* is a session's LOCK TABLES list or its FTWRL. Every other
//! session's statement declares an *intention*: the tables it reads (for
//! the statement), the tables it writes (for its transaction: a READ lock
//! must not be granted while an uncommitted write to the table can still
//! commit under it), and whether it is a global write (a DML or DDL
//! statement, or the COMMIT of a transaction with writes: MySQL's global
//! and COMMIT locks, which FTWRL takes shared).
//!
//! | holder \ other session's | reads t        | writes t (txn) | global write |
//! |--------------------------|----------------|----------------|--------------|
//! | LOCK TABLES t READ       | go             | wait           | go           |
//! | LOCK TABLES t WRITE      | wait           | wait           | go           |
//! | FTWRL                    | go             | go¹            | wait         |
//!
//! ¹ a transaction that wrote before FTWRL was granted keeps its writes
//! uncommitted: its next write statement and its COMMIT wait (as MySQL's).
//!
//! A holder is granted only once no other session's intention conflicts with
//! it, and once no other granted holder does (READ/READ and FTWRL/FTWRL share;
//! WRITE excludes everything on its table; FTWRL and a LOCK TABLES WRITE
//! exclude each other, as MySQL's LOCK TABLES WRITE holds the global lock's
//! intention). While a holder waits for that, it already stops new
//! intentions that conflict with it — except those of a session that already
//! holds an intention (its transaction has written, or its statement — a
//! CALL whose first statements have run — has begun): that session may be
//! the one the holder waits for, and making it wait too would deadlock the
//! two until the timeout. So a steady stream of short transactions cannot starve a backup's
//! lock, and no wait cycle runs through a pending holder.
//!
//! # Invariants
//! 1. While a session holds a granted READ lock on t, no other session has an
//!    uncommitted write to t, and none begins one: t does not change.
//! 2. While a session holds a granted WRITE lock on t, no other session's
//!    statement reads or writes t.
//! 3. While a session holds FTWRL, no other session's write statement runs
//!    and no transaction with writes commits.
//! 4. Locks end with UNLOCK TABLES, with the next LOCK TABLES or START
//!    TRANSACTION (LOCK TABLES locks only), and with the session however it
//!    ends (disconnect, KILL CONNECTION): `Session`'s drop deregisters it.
//!
//! A transaction's write intentions end when its commit is *written*; it
//! becomes visible only after the group commit's sync, which the server
//! awaits after the statement. So a holder, once granted here, still waits
//! for every written commit to become visible (the session's side calls
//! `TxnManager::settle_written`): otherwise a dump reading `a` and then `b`
//! under READ locks could see a transfer's credit to `b` and not its debit
//! from `a`.
//!
//! # The hot path costs nothing measurable
//! Holders are rare (a backup, a restore, Vitess' copy phase) and
//! statements are not, so a statement first asks [`TableLocks::begin_fast`]:
//! under its *own* session's [`Activity`] mutex (uncontended: only a
//! holder being granted ever takes another session's), it reads the engine's
//! count of holders; at zero it records "a statement that reads some tables
//! (which, it does not say) and writes these" and goes on — no shared cache
//! line is written, no table list is built. A holder raises the count first
//! and then reads each session's activity under that session's mutex, so
//! either the holder sees the statement's intention, or the statement sees
//! the count and takes the precise path instead ([`TableLocks::try_begin`]:
//! the plan's tables, checked against the holders under the registry's
//! mutex). An unnamed read counts as a read of every table: a WRITE lock
//! waits for every statement in flight when it is taken (statements are
//! short; transactions are not, and a transaction's writes are always
//! named).
//!
//! # Waiting
//! A statement that must wait gets the registry's generation: every change
//! that can end a wait (a holder released or granted; a statement or
//! transaction ended while a holder waits to be granted) bumps it and wakes the blocked
//! threads ([`TableLocks::wait`]) and the awaiting tasks ([`TableWait`]);
//! the waiter then checks again. The server's connections await a
//! one-statement request's wait as they await a row lock's (the session
//! answers `Error::LockWaitPending`), so writers queued behind a backup's
//! lock hold no thread. LOCK TABLES, FTWRL and a COMMIT waiting behind FTWRL
//! block their thread — rare statements, waiting through the engine's
//! blocking hook that moves the wait off the runtime's worker, as a DDL's
//! wait for older transactions does. Every wait ends with 1205 at the
//! session's `lock_wait_timeout` and with 1317 at KILL QUERY.

use canyon_common::{Error, Result};
use canyon_txn::TableId;
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// A session's identity in the registry (the same as GET_LOCK's).
pub type Owner = crate::catalog::user_locks::Owner;

/// How long a blocked thread sleeps between two looks at its kill flag.
const WAIT_SLICE: Duration = Duration::from_millis(20);

/// One table of a holder's list.
#[derive(Debug, Clone)]
pub struct Locked {
    /// Database, as resolved when the lock was taken.
    pub db: String,
    /// Table or view name.
    pub name: String,
    /// The table's id when locked (`None` for a view). A table is matched by
    /// id or by name: TRUNCATE gives a WRITE-locked table a new id.
    pub id: Option<TableId>,
    /// WRITE (true) or READ.
    pub write: bool,
}

impl Locked {
    /// Whether this entry names `t`.
    pub fn names(&self, id: TableId, db: &str, name: &str) -> bool {
        self.id == Some(id) || (self.db == db && self.name == name)
    }
}

/// A table a statement touches, as the precise path compares it.
#[derive(Debug, Clone, Copy)]
pub struct Touch<'a> {
    /// The table's id.
    pub id: TableId,
    /// Its database.
    pub db: &'a str,
    /// Its name.
    pub name: &'a str,
}

#[derive(Debug)]
struct Holder {
    owner: Owner,
    /// FTWRL (true) or a LOCK TABLES / FLUSH TABLES t WITH READ LOCK list.
    global: bool,
    tables: Vec<Locked>,
    granted: bool,
}

impl Holder {
    fn write_locks(&self) -> bool {
        self.tables.iter().any(|t| t.write)
    }

    /// Whether granted holders `self` and `other` (of different sessions)
    /// exclude each other.
    fn excludes(&self, other: &Holder) -> bool {
        if (self.global && other.write_locks()) || (other.global && self.write_locks()) {
            return true;
        }
        self.tables.iter().any(|a| {
            other.tables.iter().any(|b| {
                (a.write || b.write)
                    && ((a.id.is_some() && a.id == b.id) || (a.db == b.db && a.name == b.name))
            })
        })
    }
}

/// What a session's statement and transaction intend: read under its own
/// mutex by a holder being granted.
#[derive(Debug, Default)]
pub struct Activity(Mutex<Acts>);

#[derive(Debug, Default)]
struct Acts {
    /// The statement in flight, if any.
    stmt: Option<Intent>,
    /// Tables the open transaction has written (ids, no duplicates).
    txn_writes: Vec<TableId>,
}

#[derive(Debug, Default)]
struct Intent {
    /// Tables read; `None`: not named (the fast path) — any table.
    reads: Option<Vec<TableId>>,
    /// Tables written for the statement only (a DDL's).
    writes: Vec<TableId>,
    /// A DML or DDL statement, or a COMMIT with writes.
    global_write: bool,
}

impl Acts {
    /// Whether this session's intentions conflict with holder `h`.
    fn conflicts(&self, h: &Holder) -> bool {
        let on = |id: &TableId, write_only: bool| {
            h.tables
                .iter()
                .any(|t| t.id == Some(*id) && (t.write || !write_only))
        };
        if self.txn_writes.iter().any(|id| on(id, false)) {
            return true;
        }
        let Some(s) = &self.stmt else {
            return false;
        };
        if h.global && s.global_write {
            return true;
        }
        if s.writes.iter().any(|id| on(id, false)) {
            return true;
        }
        match &s.reads {
            None => h.write_locks(),
            Some(reads) => reads.iter().any(|id| on(id, true)),
        }
    }
}

#[derive(Default)]
struct Inner {
    holders: Vec<Holder>,
    sessions: std::collections::HashMap<Owner, Arc<Activity>>,
    generation: u64,
    wakers: Vec<Waker>,
}

/// The engine's table locks (see the module doc).
#[derive(Default)]
pub struct TableLocks {
    /// Holders, granted or waiting: zero keeps every statement on the fast path.
    holders: AtomicUsize,
    /// Holders not yet granted: only they wait for statements and
    /// transactions to end.
    pending: AtomicUsize,
    inner: Mutex<Inner>,
    changed: Condvar,
}

/// Why a wait ended without the lock.
fn give_up(kill: &AtomicU32, deadline: Instant) -> Option<Error> {
    if kill.load(Ordering::Relaxed) != 0 {
        Some(Error::Interrupted)
    } else if Instant::now() >= deadline {
        Some(Error::LockWaitTimeout)
    } else {
        None
    }
}

impl TableLocks {
    /// Registers a session; its [`Activity`] is what it passes from then on.
    pub fn register(&self, owner: Owner) -> Arc<Activity> {
        let a = Arc::new(Activity::default());
        self.inner.lock().sessions.insert(owner, a.clone());
        a
    }

    /// A session ends: its holders and intentions go (invariant 4).
    pub fn deregister(&self, owner: Owner) {
        let mut g = self.inner.lock();
        g.sessions.remove(&owner);
        let before = g.holders.len();
        g.holders.retain(|h| h.owner != owner);
        self.holders
            .fetch_sub(before - g.holders.len(), Ordering::SeqCst);
        self.bump(&mut g);
    }

    /// Wakes every waiter to check again.
    fn bump(&self, g: &mut Inner) {
        g.generation += 1;
        for w in g.wakers.drain(..) {
            w.wake();
        }
        self.changed.notify_all();
    }

    /// Bumps the generation if a holder waits to be granted (only such a
    /// holder waits for statements and transactions to end; waking the
    /// statements queued behind granted holders would only make them check
    /// again for nothing).
    fn bump_if_pending(&self) {
        if self.pending.load(Ordering::SeqCst) != 0 {
            let mut g = self.inner.lock();
            self.bump(&mut g);
        }
    }

    /// The fast path (module doc): with no holder anywhere, records the
    /// statement's intention — unnamed reads, `writes` for the transaction,
    /// `global_write` — and returns true. False: take [`TableLocks::try_begin`].
    pub fn begin_fast(&self, act: &Activity, writes: &[TableId], global_write: bool) -> bool {
        let mut a = act.0.lock();
        // Under the session's mutex: a holder raises the count before it
        // takes this mutex to look, so it sees either the count or this.
        if self.holders.load(Ordering::Acquire) != 0 {
            return false;
        }
        match &mut a.stmt {
            Some(s) => {
                s.reads = None;
                s.global_write |= global_write;
            }
            None => {
                a.stmt = Some(Intent {
                    reads: None,
                    writes: Vec::new(),
                    global_write,
                })
            }
        }
        for id in writes {
            if !a.txn_writes.contains(id) {
                a.txn_writes.push(*id);
            }
        }
        true
    }

    /// The precise path: records the intention unless another session's
    /// holder conflicts with it; `Err(generation)` to wait on then.
    /// `txn_writes` are written for the transaction, `stmt_writes` for the
    /// statement only (a DDL's).
    pub fn try_begin(
        &self,
        owner: Owner,
        act: &Activity,
        reads: &[Touch<'_>],
        txn_writes: &[Touch<'_>],
        stmt_writes: &[Touch<'_>],
        global_write: bool,
    ) -> std::result::Result<(), u64> {
        let g = self.inner.lock();
        let mut a = act.0.lock();
        // A session holding an intention already may be what a pending
        // holder waits for: it does not wait for pending holders (module doc).
        let holds = !a.txn_writes.is_empty() || a.stmt.is_some();
        let blocked = g.holders.iter().any(|h| {
            if h.owner == owner || (!h.granted && holds) {
                return false;
            }
            if h.global && global_write {
                return true;
            }
            let locked = |t: &Touch<'_>, write_only: bool| {
                h.tables
                    .iter()
                    .any(|l| l.names(t.id, t.db, t.name) && (l.write || !write_only))
            };
            reads.iter().any(|t| locked(t, true))
                || txn_writes
                    .iter()
                    .chain(stmt_writes)
                    .any(|t| locked(t, false))
        });
        if blocked {
            return Err(g.generation);
        }
        let s = a.stmt.get_or_insert_with(|| Intent {
            reads: Some(Vec::new()),
            ..Intent::default()
        });
        if let Some(r) = &mut s.reads {
            r.extend(reads.iter().map(|t| t.id));
        }
        s.writes.extend(stmt_writes.iter().map(|t| t.id));
        s.global_write |= global_write;
        for t in txn_writes {
            if !a.txn_writes.contains(&t.id) {
                a.txn_writes.push(t.id);
            }
        }
        Ok(())
    }

    /// The session's statement is over (the outermost one: a CALL's are
    /// part of it).
    pub fn end_statement(&self, act: &Activity) {
        if act.0.lock().stmt.take().is_some() {
            self.bump_if_pending();
        }
    }

    /// The session's transaction is over: its write intentions go.
    pub fn end_transaction(&self, act: &Activity) {
        let mut a = act.0.lock();
        if a.txn_writes.is_empty() {
            return;
        }
        a.txn_writes.clear();
        drop(a);
        self.bump_if_pending();
    }

    /// Whether the session's open transaction has written a shared table.
    pub fn txn_writes(&self, act: &Activity) -> bool {
        !act.0.lock().txn_writes.is_empty()
    }

    /// The current generation (a wait ends when it moves on).
    fn generation(&self) -> u64 {
        self.inner.lock().generation
    }

    /// Blocks until the generation moves past `generation`, `deadline`
    /// passes (1205) or `kill` is set (1317).
    pub fn wait(&self, generation: u64, deadline: Instant, kill: &AtomicU32) -> Result<()> {
        let mut g = self.inner.lock();
        while g.generation == generation {
            if let Some(e) = give_up(kill, deadline) {
                return Err(e);
            }
            let slice = deadline
                .saturating_duration_since(Instant::now())
                .min(WAIT_SLICE);
            self.changed.wait_for(&mut g, slice);
        }
        Ok(())
    }

    /// An awaitable [`TableLocks::wait`] (timeout and KILL are the awaiter's).
    pub fn wait_handle(self: &Arc<Self>, generation: u64, deadline: Instant) -> TableWait {
        TableWait {
            locks: self.clone(),
            generation,
            deadline,
        }
    }

    /// Takes a holder for `owner` — FTWRL (`global`) or a table list — once
    /// nothing conflicts (module doc), waiting up to `deadline`; KILL ends the
    /// wait (1317). The caller has ended its own transaction: its own
    /// intentions are not looked at.
    pub fn acquire(
        &self,
        owner: Owner,
        global: bool,
        tables: Vec<Locked>,
        deadline: Instant,
        kill: &AtomicU32,
    ) -> Result<()> {
        let mut g = self.inner.lock();
        g.holders.push(Holder {
            owner,
            global,
            tables,
            granted: false,
        });
        // Before looking at any session's activity (module doc).
        self.holders.fetch_add(1, Ordering::SeqCst);
        self.pending.fetch_add(1, Ordering::SeqCst);
        loop {
            // Found again each time: others' holders come and go meanwhile.
            // A session waits for one holder at a time: its only pending one.
            let at = g
                .holders
                .iter()
                .position(|h| h.owner == owner && !h.granted)
                .expect("the pending holder stays until this call ends");
            let me = &g.holders[at];
            let blocked = g
                .holders
                .iter()
                .any(|h| h.owner != owner && h.granted && h.excludes(me))
                || g.sessions
                    .iter()
                    .any(|(o, a)| *o != owner && a.0.lock().conflicts(me));
            if !blocked {
                g.holders[at].granted = true;
                self.pending.fetch_sub(1, Ordering::SeqCst);
                self.bump(&mut g);
                return Ok(());
            }
            if let Some(e) = give_up(kill, deadline) {
                g.holders.remove(at);
                self.holders.fetch_sub(1, Ordering::SeqCst);
                self.pending.fetch_sub(1, Ordering::SeqCst);
                self.bump(&mut g);
                return Err(e);
            }
            let slice = deadline
                .saturating_duration_since(Instant::now())
                .min(WAIT_SLICE);
            self.changed.wait_for(&mut g, slice);
        }
    }

    /// Releases `owner`'s FTWRL (`global`) or table list, if held.
    pub fn release(&self, owner: Owner, global: bool) {
        let mut g = self.inner.lock();
        let before = g.holders.len();
        g.holders
            .retain(|h| !(h.owner == owner && h.global == global));
        let gone = before - g.holders.len();
        if gone > 0 {
            self.holders.fetch_sub(gone, Ordering::SeqCst);
            self.bump(&mut g);
        }
    }
}

/// A holder as `performance_schema.metadata_locks` shows it.
#[derive(Debug, Clone)]
pub struct HolderView {
    /// The session (see [`Owner`]).
    pub owner: Owner,
    /// FTWRL (true) or a table list.
    pub global: bool,
    /// The tables (empty for FTWRL).
    pub tables: Vec<Locked>,
    /// Granted, or waiting to be (PENDING).
    pub granted: bool,
}

impl TableLocks {
    /// The holders, granted and pending, in the order they asked.
    pub fn holders(&self) -> Vec<HolderView> {
        self.inner
            .lock()
            .holders
            .iter()
            .map(|h| HolderView {
                owner: h.owner,
                global: h.global,
                tables: h.tables.clone(),
                granted: h.granted,
            })
            .collect()
    }
}

/// A statement's wait behind a holder, as a future: ready once anything that
/// could end it changed (the statement then runs again and checks).
pub struct TableWait {
    locks: Arc<TableLocks>,
    generation: u64,
    deadline: Instant,
}

impl TableWait {
    /// Whether something changed since the wait began.
    pub fn is_granted(&self) -> bool {
        self.locks.generation() != self.generation
    }

    /// When the wait times out (the session's `lock_wait_timeout`).
    pub fn deadline(&self) -> Option<Instant> {
        Some(self.deadline)
    }
}

impl std::future::Future for TableWait {
    type Output = ();

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut g = self.locks.inner.lock();
        if g.generation != self.generation {
            return Poll::Ready(());
        }
        // Under the registry's mutex, which every bump takes: no wake-up
        // falls between the check and the store.
        if !g.wakers.iter().any(|w| w.will_wake(cx.waker())) {
            g.wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}
