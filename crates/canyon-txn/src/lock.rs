//! The row lock table: shared and exclusive locks on opaque byte keys, FIFO
//! waits, deadlock detection.
//!
//! ```text
//!   shards[hash(key) % 64]   CachePadded<Mutex<HashMap<key, LockState>>>
//!        LockState { holders: [(TxnId, mode)], waiters: VecDeque<Arc<Waiter>> }
//!   waits_for                Mutex<HashMap<TxnId, [TxnId]>>   (slow path only)
//!   Waiter                   txn, mode, Mutex<{granted, waker}> + Condvar
//! ```
//!
//! # Modes
//! A key is held in [`LockMode::Shared`] by any number of transactions or in
//! [`LockMode::Exclusive`] by one, as InnoDB's S and X record locks: FOR SHARE,
//! a SERIALIZABLE plain read and a foreign key's parent check take S; writes
//! and FOR UPDATE take X. A holder of S that asks for X *upgrades*: at once
//! if it is the only holder, else it waits at the head of the queue (behind
//! other upgraders only) for the other holders to go. InnoDB queues the upgrade
//! behind every waiter, so "A holds S, B waits for X, A asks for X" is a
//! deadlock there (the MySQL manual's example in "An InnoDB Deadlock
//! Example"); here A is granted once the other S holders leave, and B follows.
//! Two holders of S that both upgrade wait for each other: that deadlock is
//! real, and detected.
//!
//! Grants are FIFO: a request is granted at once only when nobody waits and
//! it is compatible with every holder; otherwise it queues, and hand-over
//! grants from the head of the queue while the head is compatible with the
//! holders (so a run of S waiters is granted together, and an S request never
//! overtakes a waiting X one).
//!
//! # Two ways to wait
//! [`LockTable::acquire`] blocks its thread on the waiter's condvar (in-process
//! callers; the server wraps it in `block_in_place`). A transaction in
//! *deferred* mode instead stops at [`LockTable::enqueue`]: the waiter stays in
//! the key's queue and the caller gets a [`LockWait`], a future the
//! connection's task awaits without holding a thread; the hand-over wakes it.
//! The statement that hit the lock was rolled back meanwhile and runs again
//! once the lock is granted (see `Transaction::set_deferred_lock_waits`). Both
//! ways queue the same waiter in the same FIFO, so fairness, deadlock
//! detection and hand-over do not depend on how the owner of a waiter sleeps.
//!
//! The SQL layer chooses the keys (one per row, per unique value, ...); this table
//! only knows bytes. The transaction layer adds one key per transaction
//! (`t ++ id`, held X by its owner) that others take S on to wait for the
//! transaction's end: how range locks wait (`range_lock.rs`). An uncontended
//! lock is one shard mutex and one hash-map insert; the wait-for map is touched
//! only by transactions that are about to wait, by the hand-over of a lock that
//! has waiters, and by a timed-out waiter.
//!
//! Invariants:
//! 1. A key is in its shard's map iff some transaction holds it. The holders
//!    are pairwise compatible (all S, or one X alone); a transaction is at most
//!    once among the holders and at most once among the waiters, and it is in
//!    both only while upgrading (holding S, waiting for X).
//! 2. `waits_for[t]` is, for a `t` queued on some key, the set of its
//!    *blockers* there: the holders (other than `t`) whose mode conflicts with
//!    the mode `t` asks for, and the waiters ahead of it whose asked mode
//!    conflicts with it. It is recomputed for every waiter of a key whenever
//!    the key's holders or queue change ([`LockTable::repoint`]).
//! 3. Every wait-for cycle is found when its last edge is created. A new
//!    request creates edges from the requester, and (an upgrade queued ahead
//!    of others) edges to it; so a new cycle passes through the requester,
//!    which follows the edges from its blockers and becomes the victim if
//!    they lead back to it. A hand-over or a withdrawal only removes blockers:
//!    a transaction granted there was a waiter ahead of each remaining waiter
//!    it conflicts with, an edge that existed already.
//! 4. Lock order: shard mutex, then `waits_for`, then a waiter's mutex. A waiter
//!    sleeps holding only its own mutex.
//!
//! Victim choice: the requester that closes the cycle (InnoDB picks the
//! transaction with the least undo; the requester is the simpler, common choice).
//! The last deadlock is kept for SHOW ENGINE INNODB STATUS ([`DeadlockRecord`]):
//! written on the deadlock path only, once the shard and wait-for mutexes are
//! released, so detection itself is unchanged.

use crate::{run_blocking, TxnId};
use canyon_common::{Error, Result};
use crossbeam_utils::CachePadded;
use parking_lot::{Condvar, Mutex};
use smallvec::SmallVec;
use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// How often a waiter with an interrupt flag wakes to look at it. KILL QUERY of
/// a lock wait therefore takes effect within this interval; InnoDB's lock wait
/// timeout thread, which also ends killed waits, wakes once a second. (An
/// awaiter of a [`LockWait`] is woken by the KILL itself.)
const INTERRUPT_POLL: Duration = Duration::from_millis(50);

/// Number of shards of the lock table (a power of two).
const SHARDS: usize = 64;

/// How a key is held: InnoDB's S and X (ordered by strength).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LockMode {
    /// Shared: other transactions may hold S too; nobody may hold X.
    Shared,
    /// Exclusive: nobody else holds the key.
    Exclusive,
}

impl LockMode {
    /// Whether two transactions may hold the key in these modes at once.
    pub fn compatible(self, other: LockMode) -> bool {
        self == LockMode::Shared && other == LockMode::Shared
    }

    /// Whether holding the key in this mode grants a request for `want`.
    pub fn covers(self, want: LockMode) -> bool {
        self == LockMode::Exclusive || want == LockMode::Shared
    }

    /// InnoDB's letter (`performance_schema.data_locks.LOCK_MODE`).
    pub fn letter(self) -> &'static str {
        match self {
            LockMode::Shared => "S",
            LockMode::Exclusive => "X",
        }
    }
}

/// One waiting transaction's parking spot.
#[derive(Debug)]
pub(crate) struct Waiter {
    txn: TxnId,
    /// The mode asked for.
    mode: LockMode,
    state: Mutex<WaitState>,
    cv: Condvar,
    /// When it queued (for [`LockStats`]).
    since: Instant,
}

#[derive(Debug, Default)]
struct WaitState {
    /// Set (under the shard mutex) when the lock is handed to this waiter.
    granted: bool,
    /// The task awaiting a deferred wait ([`LockWait`]), woken on hand-over.
    waker: Option<Waker>,
}

impl Waiter {
    /// Whether the lock has been handed to this waiter.
    pub(crate) fn granted(&self) -> bool {
        self.state.lock().granted
    }

    /// The mode it asked for.
    pub(crate) fn mode(&self) -> LockMode {
        self.mode
    }
}

/// The outcome of [`LockTable::enqueue`].
pub(crate) enum Queued {
    /// The lock is `txn`'s in the mode asked (it was free or compatible, or
    /// already `txn`'s in a mode that covers it).
    Granted,
    /// `txn` waits in the key's queue; settle with [`LockTable::withdraw`]
    /// unless the waiter is granted.
    Waiting(Arc<Waiter>),
}

/// A deferred lock wait: a future that resolves once the lock is handed to the
/// waiting transaction. Cheap to clone; it does not end the wait — the
/// transaction does (`Transaction::end_lock_wait`).
#[derive(Debug, Clone)]
pub struct LockWait {
    waiter: Arc<Waiter>,
    deadline: Option<Instant>,
}

impl LockWait {
    /// Whether the lock has been handed over.
    pub fn is_granted(&self) -> bool {
        self.waiter.granted()
    }

    /// When the wait times out (`None`: never).
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }
}

impl Future for LockWait {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut st = self.waiter.state.lock();
        if st.granted {
            return Poll::Ready(());
        }
        // Registered under the waiter's mutex, which the hand-over takes to
        // set `granted`: no wake-up falls between the check and the store.
        match &mut st.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            w => *w = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

/// Row lock waits so far, as InnoDB reports them (`Innodb_row_lock_*` in
/// SHOW STATUS).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LockStats {
    /// Waits begun (a lock requested while another transaction held it).
    pub waits: u64,
    /// Waits in progress.
    pub current_waits: u64,
    /// Time spent in finished waits, in milliseconds.
    pub time_ms: u64,
    /// The longest finished wait, in milliseconds.
    pub time_max_ms: u64,
}

/// One held lock and its queue, as `performance_schema.data_locks` lists
/// them ([`crate::TxnManager::lock_snapshot`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldLock {
    /// The key the SQL layer locked.
    pub key: Vec<u8>,
    /// The transactions that hold it, with their modes.
    pub holders: Vec<(TxnId, LockMode)>,
    /// The transactions waiting for it with the mode each asks for, first in
    /// line first.
    pub waiters: Vec<(TxnId, LockMode)>,
}

/// One transaction waiting for a lock now ([`crate::TxnManager::lock_waits`];
/// SHOW ENGINE INNODB STATUS's TRANSACTIONS section).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitingLock {
    /// The key it waits for.
    pub key: Vec<u8>,
    /// The waiting transaction.
    pub waiter: TxnId,
    /// The mode it asks for.
    pub mode: LockMode,
    /// The first transaction it waits for (a holder, or a waiter ahead).
    pub owner: TxnId,
    /// How long it has waited so far.
    pub waited: Duration,
}

/// One transaction of a deadlock cycle ([`DeadlockRecord::cycle`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadlockEdge {
    /// The transaction.
    pub txn: TxnId,
    /// The key it waited for (the victim: the key it requested), held by
    /// the next transaction of the cycle; `None` when its wait ended before
    /// the record was made (the record is made after the lock table's
    /// mutexes are released, see [`DeadlockRecord`]).
    pub waits_for: Option<Vec<u8>>,
    /// The transaction it waited for: the next one of the cycle.
    pub holder: TxnId,
}

/// The last deadlock the lock table detected, as InnoDB keeps its LATEST
/// DETECTED DEADLOCK ([`crate::TxnManager::deadlocks`]). Made on the
/// deadlock path only, after the shard and wait-for mutexes are released
/// (lock order, invariant 4: another shard's keys cannot be read under a
/// shard's mutex), so a wait in the cycle that ended meanwhile shows without
/// its key. A diagnostic: nothing decides anything from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadlockRecord {
    /// When it was detected.
    pub at: std::time::SystemTime,
    /// The transaction rolled back: the requester that would have closed
    /// the cycle (see the module doc's victim choice).
    pub victim: TxnId,
    /// The cycle, starting with the victim: each transaction waits for a
    /// key the next one holds, and the last waits for one the victim holds.
    pub cycle: Vec<DeadlockEdge>,
}

/// The counters behind [`LockStats`]: written only by transactions that wait
/// (which take the global wait-for mutex anyway), never on an uncontended lock.
#[derive(Debug, Default)]
struct WaitCounters {
    waits: AtomicU64,
    ended: AtomicU64,
    time_us: AtomicU64,
    max_us: AtomicU64,
}

impl WaitCounters {
    fn ended(&self, since: Instant) {
        let us = micros_since(since);
        self.time_us.fetch_add(us, Ordering::Relaxed);
        self.max_us.fetch_max(us, Ordering::Relaxed);
        self.ended.fetch_add(1, Ordering::Relaxed);
    }
}

/// Microseconds since `since` (saturating).
fn micros_since(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// The holders of one key: one, inline, in the common case.
type Holders = SmallVec<[(TxnId, LockMode); 1]>;
/// The transactions one waiter waits for.
type Blockers = SmallVec<[TxnId; 2]>;

/// The state of one locked key.
#[derive(Debug)]
struct LockState {
    holders: Holders,
    waiters: VecDeque<Arc<Waiter>>,
}

impl LockState {
    /// The mode `txn` holds the key in, if it does.
    fn held_by(&self, txn: TxnId) -> Option<LockMode> {
        self.holders
            .iter()
            .find(|(t, _)| *t == txn)
            .map(|&(_, m)| m)
    }

    /// Whether `txn` may hold the key in `mode` beside the holders (other
    /// than itself).
    fn fits(&self, txn: TxnId, mode: LockMode) -> bool {
        self.holders
            .iter()
            .all(|&(t, m)| t == txn || m.compatible(mode))
    }

    /// The blockers of the waiter at `idx` (invariant 2).
    fn blockers(&self, idx: usize) -> Blockers {
        let w = &self.waiters[idx];
        let mut out: Blockers = self
            .holders
            .iter()
            .filter(|&&(t, m)| t != w.txn && !m.compatible(w.mode))
            .map(|&(t, _)| t)
            .collect();
        for ahead in self.waiters.iter().take(idx) {
            if ahead.txn != w.txn && !ahead.mode.compatible(w.mode) && !out.contains(&ahead.txn) {
                out.push(ahead.txn);
            }
        }
        out
    }

    /// Grants from the head of the queue while the head fits the holders
    /// (FIFO), returning the waiters granted (their flags are set by the
    /// caller, after the wait-for edges are fixed).
    fn grant_from_head(&mut self) -> SmallVec<[Arc<Waiter>; 1]> {
        let mut granted = SmallVec::new();
        while let Some(head) = self.waiters.front() {
            if !self.fits(head.txn, head.mode) {
                break;
            }
            let w = self.waiters.pop_front().expect("the head exists");
            match self.holders.iter_mut().find(|(t, _)| *t == w.txn) {
                // An upgrade.
                Some(h) => h.1 = LockMode::Exclusive,
                None => self.holders.push((w.txn, w.mode)),
            }
            granted.push(w);
        }
        granted
    }
}

type Shard = CachePadded<Mutex<HashMap<Vec<u8>, LockState>>>;

/// The sharded table of row locks. See the module doc.
#[derive(Debug)]
pub(crate) struct LockTable {
    shards: Box<[Shard]>,
    waits_for: Mutex<HashMap<TxnId, Blockers>>,
    counters: WaitCounters,
    /// Deadlocks detected since the start.
    deadlocks: AtomicU64,
    /// The last one ([`DeadlockRecord`]): written on the deadlock path only.
    last_deadlock: Mutex<Option<DeadlockRecord>>,
}

/// FNV-1a: cheap and good enough to spread keys over the shards (the maps inside
/// use the std SipHash, which resists keys chosen by a client).
fn shard_of(key: &[u8]) -> usize {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h ^ (h >> 32)) as usize & (SHARDS - 1)
}

impl LockTable {
    pub(crate) fn new() -> Self {
        LockTable {
            shards: (0..SHARDS)
                .map(|_| CachePadded::new(Mutex::new(HashMap::new())))
                .collect(),
            waits_for: Mutex::new(HashMap::new()),
            counters: WaitCounters::default(),
            deadlocks: AtomicU64::new(0),
            last_deadlock: Mutex::new(None),
        }
    }

    /// Every waiting transaction with the key, the first transaction it
    /// waits for and how long it has waited, one shard at a time (as
    /// [`LockTable::snapshot`]).
    pub(crate) fn waits(&self) -> Vec<WaitingLock> {
        let mut out = Vec::new();
        for shard in self.shards.iter() {
            for (key, st) in shard.lock().iter() {
                for (i, w) in st.waiters.iter().enumerate() {
                    let owner = st.blockers(i).first().copied().unwrap_or(w.txn);
                    out.push(WaitingLock {
                        key: key.clone(),
                        waiter: w.txn,
                        mode: w.mode,
                        owner,
                        waited: w.since.elapsed(),
                    });
                }
            }
        }
        out
    }

    /// Deadlocks detected so far, and the last one.
    pub(crate) fn deadlocks(&self) -> (u64, Option<DeadlockRecord>) {
        (
            self.deadlocks.load(Ordering::Relaxed),
            self.last_deadlock.lock().clone(),
        )
    }

    /// Records the deadlock `victim` closed by requesting `key`: `chain` is
    /// the wait-for path from the first transaction it would have waited for
    /// back to the victim (victim excluded). Called with no lock-table mutex
    /// held: each chain member's awaited key is looked up shard by shard.
    fn record_deadlock(&self, victim: TxnId, key: &[u8], chain: Vec<TxnId>) {
        self.deadlocks.fetch_add(1, Ordering::Relaxed);
        let mut awaited: HashMap<TxnId, Vec<u8>> = HashMap::new();
        for shard in self.shards.iter() {
            for (k, st) in shard.lock().iter() {
                for w in &st.waiters {
                    if chain.contains(&w.txn) {
                        awaited.insert(w.txn, k.clone());
                    }
                }
            }
        }
        let mut cycle = Vec::with_capacity(chain.len() + 1);
        let holders = chain.iter().copied().skip(1).chain(std::iter::once(victim));
        cycle.push(DeadlockEdge {
            txn: victim,
            waits_for: Some(key.to_vec()),
            holder: chain.first().copied().unwrap_or(victim),
        });
        for (&txn, holder) in chain.iter().zip(holders) {
            cycle.push(DeadlockEdge {
                txn,
                waits_for: awaited.remove(&txn),
                holder,
            });
        }
        *self.last_deadlock.lock() = Some(DeadlockRecord {
            at: std::time::SystemTime::now(),
            victim,
            cycle,
        });
    }

    /// Every held lock with its holders and waiters. Each shard's mutex is
    /// held while its locks are copied (one shard at a time, so the whole is
    /// not one instant's picture: a lock handed over meanwhile may show twice
    /// or not at all). A reader's cost; the lock path pays nothing for it.
    pub(crate) fn snapshot(&self) -> Vec<HeldLock> {
        let mut out = Vec::new();
        for shard in self.shards.iter() {
            for (key, st) in shard.lock().iter() {
                out.push(HeldLock {
                    key: key.clone(),
                    holders: st.holders.to_vec(),
                    waiters: st.waiters.iter().map(|w| (w.txn, w.mode)).collect(),
                });
            }
        }
        out
    }

    /// Row lock waits so far (SHOW STATUS).
    pub(crate) fn stats(&self) -> LockStats {
        let c = &self.counters;
        // `ended` is read first: a wait that ends between the two loads is
        // counted as current rather than as neither.
        let ended = c.ended.load(Ordering::Relaxed);
        let waits = c.waits.load(Ordering::Relaxed);
        LockStats {
            waits,
            current_waits: waits.saturating_sub(ended),
            time_ms: c.time_us.load(Ordering::Relaxed) / 1_000,
            time_max_ms: c.max_us.load(Ordering::Relaxed) / 1_000,
        }
    }

    /// Whether any lock whose key starts with `prefix` is held (a bulk load
    /// waiting for its table's writers: one pass over every shard).
    pub(crate) fn any_held_with_prefix(&self, prefix: &[u8]) -> bool {
        self.shards
            .iter()
            .any(|s| s.lock().keys().any(|k| k.starts_with(prefix)))
    }

    fn shard(&self, key: &[u8]) -> &Mutex<HashMap<Vec<u8>, LockState>> {
        &self.shards[shard_of(key)]
    }

    /// Takes `key` in `mode` for `txn`, waiting up to `timeout`.
    ///
    /// Returns `Ok` when granted (also when `txn` already holds it in a mode
    /// that covers `mode`), [`Error::Deadlock`] when waiting would close a
    /// wait-for cycle (nothing is queued; the caller must release everything
    /// `txn` holds), or [`Error::LockWaitTimeout`] (nothing more is held or
    /// queued for this key), or [`Error::Interrupted`] when `interrupt` became
    /// non-zero during the wait (withdrawn like a timeout; the waiter polls it
    /// every `INTERRUPT_POLL`).
    pub(crate) fn acquire(
        &self,
        txn: TxnId,
        key: &[u8],
        mode: LockMode,
        timeout: Duration,
        hook: Option<fn(&mut dyn FnMut())>,
        interrupt: Option<&AtomicU32>,
    ) -> Result<()> {
        let waiter = match self.enqueue(txn, key, mode)? {
            Queued::Granted => return Ok(()),
            Queued::Waiting(w) => w,
        };

        // A timeout too large for an Instant (e.g. Duration::MAX) waits forever.
        let deadline = Instant::now().checked_add(timeout);
        let mut granted = false;
        let mut interrupted = false;
        let is_interrupted = || interrupt.is_some_and(|f| f.load(Ordering::Relaxed) != 0);
        run_blocking(hook, &mut || {
            let mut g = waiter.state.lock();
            while !g.granted {
                if is_interrupted() {
                    interrupted = true;
                    break;
                }
                // With an interrupt flag, sleep in slices so that a KILL is seen.
                let slice = interrupt.and_then(|_| Instant::now().checked_add(INTERRUPT_POLL));
                let wake = match (deadline, slice) {
                    (Some(d), Some(s)) => Some(d.min(s)),
                    (d, s) => d.or(s),
                };
                match wake {
                    Some(w) => {
                        if waiter.cv.wait_until(&mut g, w).timed_out()
                            && deadline.is_some_and(|d| Instant::now() >= d)
                        {
                            break;
                        }
                    }
                    None => waiter.cv.wait(&mut g),
                }
            }
            granted = g.granted;
        });
        if granted || self.withdraw(txn, key, &waiter) {
            return Ok(());
        }
        if interrupted {
            Err(Error::Interrupted)
        } else {
            Err(Error::LockWaitTimeout)
        }
    }

    /// The first half of [`LockTable::acquire`]: takes the lock if it can be
    /// granted now (see the module doc's grant rule), else — after the
    /// deadlock check, which fails with [`Error::Deadlock`] and queues
    /// nothing — queues `txn` and returns its waiter, without waiting.
    pub(crate) fn enqueue(&self, txn: TxnId, key: &[u8], mode: LockMode) -> Result<Queued> {
        let mut map = self.shard(key).lock();
        let Some(state) = map.get_mut(key) else {
            let mut holders = Holders::new();
            holders.push((txn, mode));
            map.insert(
                key.to_vec(),
                LockState {
                    holders,
                    waiters: VecDeque::new(),
                },
            );
            return Ok(Queued::Granted);
        };
        let held = state.held_by(txn);
        if held.is_some_and(|m| m.covers(mode)) {
            return Ok(Queued::Granted);
        }
        let upgrade = held.is_some();
        if state.fits(txn, mode) && (upgrade || state.waiters.is_empty()) {
            match state.holders.iter_mut().find(|(t, _)| *t == txn) {
                Some(h) => h.1 = mode,
                None => state.holders.push((txn, mode)),
            }
            return Ok(Queued::Granted);
        }
        // Slow path: about to wait. An upgrade goes ahead of every waiter
        // that is not upgrading too; others go to the back.
        let w = Arc::new(Waiter {
            txn,
            mode,
            state: Mutex::new(WaitState::default()),
            cv: Condvar::new(),
            since: Instant::now(),
        });
        let at = if upgrade {
            state
                .waiters
                .iter()
                .position(|q| state.held_by(q.txn).is_none())
                .unwrap_or(state.waiters.len())
        } else {
            state.waiters.len()
        };
        state.waiters.insert(at, Arc::clone(&w));
        let mut wf = self.waits_for.lock();
        repoint(state, &mut wf);
        // Invariant 3: a new cycle passes through the requester.
        let first = wf.get(&txn).and_then(|b| b.first().copied());
        if let Some(chain) = path_back(&wf, txn) {
            tracing::debug!(txn, "deadlock: requester is the victim");
            state.waiters.remove(at);
            wf.remove(&txn);
            repoint(state, &mut wf);
            drop(wf);
            drop(map);
            self.record_deadlock(txn, key, chain);
            return Err(Error::Deadlock);
        }
        drop(wf);
        self.counters.waits.fetch_add(1, Ordering::Relaxed);
        canyon_probes::row_lock_wait_start(txn, key, first.unwrap_or(txn));
        Ok(Queued::Waiting(w))
    }

    /// Ends `txn`'s wait for `key` without the lock: takes its waiter out of the
    /// queue and its wait-for edges out of the graph (and grants the waiters
    /// behind it that its request held back). Returns true, and changes
    /// nothing, if the hand-over won the race and the lock is `txn`'s now (the
    /// grant flag is only set under the shard mutex, so it is stable here).
    pub(crate) fn withdraw(&self, txn: TxnId, key: &[u8], waiter: &Arc<Waiter>) -> bool {
        let mut map = self.shard(key).lock();
        if waiter.granted() {
            return true;
        }
        let mut granted = SmallVec::new();
        if let Some(state) = map.get_mut(key) {
            state.waiters.retain(|w| !Arc::ptr_eq(w, waiter));
            granted = state.grant_from_head();
            let mut wf = self.waits_for.lock();
            wf.remove(&txn);
            for g in &granted {
                wf.remove(&g.txn);
            }
            repoint(state, &mut wf);
        } else {
            self.waits_for.lock().remove(&txn);
        }
        self.counters.ended(waiter.since);
        canyon_probes::row_lock_wait_done(txn, false, micros_since(waiter.since));
        self.wake(granted);
        false
    }

    /// Sets the grant flag of each waiter granted and wakes it (under the
    /// shard mutex: see [`LockTable::withdraw`]).
    fn wake(&self, granted: SmallVec<[Arc<Waiter>; 1]>) {
        for next in granted {
            self.counters.ended(next.since);
            canyon_probes::row_lock_wait_done(next.txn, true, micros_since(next.since));
            let waker = {
                let mut st = next.state.lock();
                st.granted = true;
                st.waker.take()
            };
            next.cv.notify_one();
            if let Some(w) = waker {
                w.wake();
            }
        }
    }

    /// A [`LockWait`] on `waiter` that times out at `deadline`.
    pub(crate) fn wait_handle(waiter: &Arc<Waiter>, deadline: Option<Instant>) -> LockWait {
        LockWait {
            waiter: Arc::clone(waiter),
            deadline,
        }
    }

    /// Releases `key`, held by `txn`: hands it to the waiters at the head of
    /// the queue that fit.
    pub(crate) fn release(&self, txn: TxnId, key: &[u8]) {
        let mut map = self.shard(key).lock();
        let Some(state) = map.get_mut(key) else {
            debug_assert!(false, "releasing a lock that is not held");
            return;
        };
        let before = state.holders.len();
        state.holders.retain(|(t, _)| *t != txn);
        debug_assert_eq!(
            state.holders.len() + 1,
            before,
            "releasing another transaction's lock"
        );
        if state.waiters.is_empty() {
            if state.holders.is_empty() {
                map.remove(key);
            }
            return;
        }
        let granted = state.grant_from_head();
        {
            let mut wf = self.waits_for.lock();
            for g in &granted {
                wf.remove(&g.txn);
            }
            repoint(state, &mut wf);
        }
        debug_assert!(!state.holders.is_empty(), "a free key with waiters");
        self.wake(granted);
    }

    /// The holders of `key` (tests and diagnostics).
    #[cfg(test)]
    pub(crate) fn holders(&self, key: &[u8]) -> Vec<(TxnId, LockMode)> {
        self.shard(key)
            .lock()
            .get(key)
            .map(|s| s.holders.to_vec())
            .unwrap_or_default()
    }

    /// The sole holder of `key`, if it is held by one transaction (tests).
    #[cfg(test)]
    pub(crate) fn owner(&self, key: &[u8]) -> Option<TxnId> {
        match self.holders(key)[..] {
            [(t, _)] => Some(t),
            _ => None,
        }
    }
}

/// Recomputes the wait-for edges of every waiter of `state` (invariant 2).
fn repoint(state: &LockState, wf: &mut HashMap<TxnId, Blockers>) {
    for (i, w) in state.waiters.iter().enumerate() {
        wf.insert(w.txn, state.blockers(i));
    }
}

/// A wait-for path from one of `target`'s blockers back to `target`
/// (`target` excluded), if there is one: depth-first, each transaction
/// visited once, so cycles elsewhere in the graph cannot loop.
fn path_back(wf: &HashMap<TxnId, Blockers>, target: TxnId) -> Option<Vec<TxnId>> {
    let mut seen = HashSet::new();
    // Each stack entry: a transaction and how many of its blockers were tried.
    let mut stack: Vec<(TxnId, usize)> = Vec::new();
    for &b in wf.get(&target)?.iter() {
        if seen.insert(b) {
            stack.push((b, 0));
        }
        while let Some(&mut (t, ref mut next)) = stack.last_mut() {
            if t == target {
                return Some(stack[..stack.len() - 1].iter().map(|&(t, _)| t).collect());
            }
            let step = wf.get(&t).and_then(|bs| bs.get(*next).copied());
            *next += 1;
            match step {
                Some(n) if n == target || seen.insert(n) => stack.push((n, 0)),
                Some(_) => {}
                None => {
                    stack.pop();
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;
    use LockMode::{Exclusive as X, Shared as S};

    const LONG: Duration = Duration::from_secs(10);

    #[test]
    fn reentrant_and_release_removes() {
        let t = LockTable::new();
        t.acquire(1, b"a", X, LONG, None, None).unwrap();
        t.acquire(1, b"a", X, LONG, None, None).unwrap();
        assert_eq!(t.owner(b"a"), Some(1));
        t.release(1, b"a");
        assert_eq!(t.owner(b"a"), None);
    }

    #[test]
    fn snapshot_lists_owners_and_waiters_in_line() {
        let t = LockTable::new();
        t.acquire(1, b"k", X, LONG, None, None).unwrap();
        t.acquire(3, b"m", X, LONG, None, None).unwrap();
        let Queued::Waiting(w2) = t.enqueue(2, b"k", X).unwrap() else {
            panic!("k is taken");
        };
        let Queued::Waiting(w4) = t.enqueue(4, b"k", X).unwrap() else {
            panic!("k is taken");
        };
        let mut s = t.snapshot();
        s.sort_by(|a, b| a.key.cmp(&b.key));
        assert_eq!(
            s,
            vec![
                HeldLock {
                    key: b"k".to_vec(),
                    holders: vec![(1, X)],
                    waiters: vec![(2, X), (4, X)]
                },
                HeldLock {
                    key: b"m".to_vec(),
                    holders: vec![(3, X)],
                    waiters: vec![]
                },
            ]
        );
        t.withdraw(2, b"k", &w2);
        t.withdraw(4, b"k", &w4);
        t.release(1, b"k");
        t.release(3, b"m");
        assert!(t.snapshot().is_empty());
    }

    #[test]
    fn fifo_hand_over() {
        let t = Arc::new(LockTable::new());
        t.acquire(1, b"k", X, LONG, None, None).unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut hs = Vec::new();
        for id in [2u64, 3, 4] {
            let (t2, order) = (Arc::clone(&t), Arc::clone(&order));
            hs.push(thread::spawn(move || {
                t2.acquire(id, b"k", X, LONG, None, None).unwrap();
                order.lock().push(id);
                t2.release(id, b"k");
            }));
            // Let each waiter queue before the next one arrives.
            while t.waits_for.lock().len() < (id - 1) as usize {
                thread::yield_now();
            }
        }
        t.release(1, b"k");
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(*order.lock(), vec![2, 3, 4]);
        assert!(t.waits_for.lock().is_empty());
        assert_eq!(t.owner(b"k"), None);
    }

    #[test]
    fn interrupt_ends_a_wait_and_withdraws_the_waiter() {
        let t = Arc::new(LockTable::new());
        t.acquire(1, b"k", X, LONG, None, None).unwrap();
        let flag = Arc::new(AtomicU32::new(0));
        let (t2, f2) = (t.clone(), flag.clone());
        let start = Instant::now();
        let h = std::thread::spawn(move || t2.acquire(2, b"k", X, LONG, None, Some(&f2)));
        while t.waits_for.lock().is_empty() {
            std::thread::yield_now();
        }
        flag.store(1, Ordering::Relaxed);
        let r = h.join().unwrap();
        assert!(matches!(r, Err(Error::Interrupted)), "{r:?}");
        assert!(
            start.elapsed() < LONG,
            "the interrupt, not the timeout, ended it"
        );
        assert!(t.waits_for.lock().is_empty());
        t.release(1, b"k");
        assert_eq!(
            t.owner(b"k"),
            None,
            "the interrupted waiter was not handed the lock"
        );
    }

    #[test]
    fn a_deferred_wait_is_woken_by_the_hand_over_or_withdrawn() {
        struct Flag(std::sync::atomic::AtomicBool);
        impl std::task::Wake for Flag {
            fn wake(self: Arc<Self>) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let t = LockTable::new();
        t.acquire(1, b"k", X, LONG, None, None).unwrap();
        let Queued::Waiting(w) = t.enqueue(2, b"k", X).unwrap() else {
            panic!("2 must queue behind 1")
        };
        let mut wait = LockTable::wait_handle(&w, None);
        let flag = Arc::new(Flag(false.into()));
        let waker = Waker::from(flag.clone());
        let mut cx = Context::from_waker(&waker);
        assert!(Pin::new(&mut wait).poll(&mut cx).is_pending());
        // The queued wait is an edge of the wait-for graph like a blocked one.
        t.acquire(2, b"j", X, LONG, None, None).unwrap();
        assert!(matches!(t.enqueue(1, b"j", X), Err(Error::Deadlock)));
        t.release(1, b"k");
        assert!(flag.0.load(Ordering::SeqCst), "the hand-over woke the task");
        assert!(Pin::new(&mut wait).poll(&mut cx).is_ready());
        assert!(wait.is_granted());
        assert_eq!(t.owner(b"k"), Some(2));
        assert!(t.withdraw(2, b"k", &w), "granted before the withdrawal");
        assert_eq!(t.owner(b"k"), Some(2));
        t.release(2, b"k");
        t.release(2, b"j");
        // A withdrawn waiter is never handed the lock.
        t.acquire(3, b"m", X, LONG, None, None).unwrap();
        let Queued::Waiting(w4) = t.enqueue(4, b"m", X).unwrap() else {
            panic!("4 must queue behind 3")
        };
        assert!(!t.withdraw(4, b"m", &w4));
        assert!(t.waits_for.lock().is_empty());
        t.release(3, b"m");
        assert_eq!(t.owner(b"m"), None);
        assert!(!LockTable::wait_handle(&w4, None).is_granted());
    }

    #[test]
    fn waits_are_counted_as_innodb_reports_them() {
        let t = LockTable::new();
        t.acquire(1, b"k", X, LONG, None, None).unwrap();
        assert_eq!(t.stats(), LockStats::default(), "no wait yet");
        let Queued::Waiting(w2) = t.enqueue(2, b"k", X).unwrap() else {
            panic!("queued")
        };
        let Queued::Waiting(w3) = t.enqueue(3, b"k", X).unwrap() else {
            panic!("queued")
        };
        let s = t.stats();
        assert_eq!((s.waits, s.current_waits), (2, 2));
        std::thread::sleep(Duration::from_millis(30));
        t.release(1, b"k"); // to 2
        assert!(!t.withdraw(3, b"k", &w3));
        assert!(w2.granted());
        let s = t.stats();
        assert_eq!((s.waits, s.current_waits), (2, 0));
        assert!(s.time_ms >= 60 && s.time_max_ms >= 30, "{s:?}");
        assert!(s.time_max_ms <= s.time_ms);
    }

    #[test]
    fn timeout_withdraws_the_waiter() {
        let t = LockTable::new();
        t.acquire(1, b"k", X, LONG, None, None).unwrap();
        let r = t.acquire(2, b"k", X, Duration::from_millis(20), None, None);
        assert!(matches!(r, Err(Error::LockWaitTimeout)));
        assert!(t.waits_for.lock().is_empty());
        t.release(1, b"k");
        assert_eq!(t.owner(b"k"), None);
    }

    #[test]
    fn path_back_follows_every_blocker_and_ends() {
        let mut wf: HashMap<TxnId, Blockers> = HashMap::new();
        wf.insert(1, [2, 5].into_iter().collect());
        wf.insert(5, [3].into_iter().collect());
        wf.insert(3, [1].into_iter().collect());
        assert_eq!(path_back(&wf, 1), Some(vec![5, 3]));
        wf.insert(3, [4].into_iter().collect());
        wf.insert(4, [5].into_iter().collect()); // 5 -> 3 -> 4 -> 5: not through 1
        assert_eq!(path_back(&wf, 1), None);
        assert_eq!(path_back(&wf, 9), None);
    }

    #[test]
    fn shared_holders_share_and_exclude_writers() {
        let t = LockTable::new();
        t.acquire(1, b"k", S, LONG, None, None).unwrap();
        t.acquire(2, b"k", S, LONG, None, None).unwrap();
        assert_eq!(t.holders(b"k"), [(1, S), (2, S)]);
        // S covers S, X does not.
        t.acquire(1, b"k", S, LONG, None, None).unwrap();
        let Queued::Waiting(w3) = t.enqueue(3, b"k", X).unwrap() else {
            panic!("X waits for the S holders")
        };
        // FIFO: an S request does not overtake the waiting X.
        let Queued::Waiting(w4) = t.enqueue(4, b"k", S).unwrap() else {
            panic!("S queues behind the waiting X")
        };
        t.release(1, b"k");
        assert!(!w3.granted(), "2 still holds S");
        t.release(2, b"k");
        assert!(w3.granted());
        assert!(!w4.granted());
        assert_eq!(t.holders(b"k"), [(3, X)]);
        t.release(3, b"k");
        assert!(w4.granted());
        assert_eq!(t.holders(b"k"), [(4, S)]);
        t.release(4, b"k");
        assert!(t.holders(b"k").is_empty());
        assert!(t.waits_for.lock().is_empty());
    }

    #[test]
    fn a_run_of_shared_waiters_is_granted_together() {
        let t = LockTable::new();
        t.acquire(1, b"k", X, LONG, None, None).unwrap();
        let ws: Vec<_> = [2, 3, 4]
            .into_iter()
            .map(|id| match t.enqueue(id, b"k", S).unwrap() {
                Queued::Waiting(w) => w,
                Queued::Granted => panic!("X is held"),
            })
            .collect();
        let Queued::Waiting(w5) = t.enqueue(5, b"k", X).unwrap() else {
            panic!("queued")
        };
        t.release(1, b"k");
        assert!(ws.iter().all(|w| w.granted()));
        assert!(!w5.granted());
        assert_eq!(t.waits_for.lock().get(&5).map(|b| b.len()), Some(3));
        for id in [2, 3, 4] {
            t.release(id, b"k");
        }
        assert!(w5.granted());
        t.release(5, b"k");
    }

    #[test]
    fn upgrades_go_first_and_two_upgraders_deadlock() {
        let t = LockTable::new();
        t.acquire(1, b"k", S, LONG, None, None).unwrap();
        // The only holder upgrades at once.
        t.acquire(1, b"k", X, LONG, None, None).unwrap();
        assert_eq!(t.holders(b"k"), [(1, X)]);
        t.release(1, b"k");

        t.acquire(1, b"k", S, LONG, None, None).unwrap();
        t.acquire(2, b"k", S, LONG, None, None).unwrap();
        let Queued::Waiting(w3) = t.enqueue(3, b"k", X).unwrap() else {
            panic!("queued")
        };
        // 1 upgrades ahead of 3: it waits for 2 only (InnoDB would call it
        // a deadlock with 3).
        let Queued::Waiting(w1) = t.enqueue(1, b"k", X).unwrap() else {
            panic!("2 holds S")
        };
        assert_eq!(
            t.waits_for.lock().get(&1).map(|b| b.to_vec()),
            Some(vec![2])
        );
        // 2 upgrading too closes the cycle 2 -> 1 -> 2.
        assert!(matches!(t.enqueue(2, b"k", X), Err(Error::Deadlock)));
        assert_eq!(t.deadlocks().0, 1);
        t.release(2, b"k");
        assert!(w1.granted() && !w3.granted());
        assert_eq!(t.holders(b"k"), [(1, X)]);
        t.release(1, b"k");
        assert!(w3.granted());
        t.release(3, b"k");
        assert!(t.waits_for.lock().is_empty());
    }

    #[test]
    fn a_withdrawn_writer_lets_the_readers_behind_it_in() {
        let t = LockTable::new();
        t.acquire(1, b"k", S, LONG, None, None).unwrap();
        let Queued::Waiting(w2) = t.enqueue(2, b"k", X).unwrap() else {
            panic!("queued")
        };
        let Queued::Waiting(w3) = t.enqueue(3, b"k", S).unwrap() else {
            panic!("behind the X")
        };
        assert!(!t.withdraw(2, b"k", &w2));
        assert!(w3.granted(), "nothing holds 3 back now");
        assert_eq!(t.holders(b"k"), [(1, S), (3, S)]);
        assert!(t.waits_for.lock().is_empty());
        t.release(1, b"k");
        t.release(3, b"k");
    }

    #[test]
    fn the_last_deadlock_and_the_waits_are_recorded() {
        let t = LockTable::new();
        assert_eq!(t.deadlocks(), (0, None));
        t.acquire(1, b"a", X, LONG, None, None).unwrap();
        t.acquire(2, b"b", X, LONG, None, None).unwrap();
        t.acquire(3, b"c", X, LONG, None, None).unwrap();
        // 1 waits for b (2's), 2 for c (3's); 3 asking for a closes the cycle.
        let Queued::Waiting(w1) = t.enqueue(1, b"b", X).unwrap() else {
            panic!("1 must queue behind 2")
        };
        let Queued::Waiting(w2) = t.enqueue(2, b"c", X).unwrap() else {
            panic!("2 must queue behind 3")
        };
        let mut waits = t.waits();
        waits.sort_by_key(|w| w.waiter);
        assert_eq!(
            waits
                .iter()
                .map(|w| (w.waiter, w.key.as_slice(), w.owner))
                .collect::<Vec<_>>(),
            [(1, &b"b"[..], 2), (2, &b"c"[..], 3)]
        );
        assert!(matches!(t.enqueue(3, b"a", X), Err(Error::Deadlock)));
        let (n, Some(d)) = t.deadlocks() else {
            panic!("the deadlock is recorded")
        };
        assert_eq!(n, 1);
        assert_eq!(d.victim, 3);
        let edge = |txn, key: &[u8], holder| DeadlockEdge {
            txn,
            waits_for: Some(key.to_vec()),
            holder,
        };
        assert_eq!(
            d.cycle,
            [edge(3, b"a", 1), edge(1, b"b", 2), edge(2, b"c", 3)]
        );
        assert!(!t.withdraw(1, b"b", &w1));
        assert!(!t.withdraw(2, b"c", &w2));
        assert!(t.waits().is_empty());
    }

    #[test]
    fn shards_spread() {
        let mut seen = [false; SHARDS];
        for i in 0u32..10_000 {
            seen[shard_of(&i.to_be_bytes())] = true;
        }
        assert!(seen.iter().all(|s| *s));
    }
}
