//! The row lock table: exclusive locks on opaque byte keys, FIFO waits, deadlock
//! detection.
//!
//! ```text
//!   shards[hash(key) % 64]   CachePadded<Mutex<HashMap<key, LockState>>>
//!        LockState { owner: TxnId, waiters: VecDeque<Arc<Waiter>> }   (FIFO)
//!   waits_for                Mutex<HashMap<TxnId, TxnId>>   (slow path only)
//!   Waiter                   Mutex<{granted, waker}> + Condvar   (one per wait)
//! ```
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
//! only knows bytes. An uncontended lock is one shard mutex and one hash-map insert;
//! the wait-for map is touched only by transactions that are about to wait, by the
//! hand-over of a lock that has waiters, and by a timed-out waiter.
//!
//! Invariants:
//! 1. A key is in its shard's map iff some transaction owns it; `owner` never
//!    appears among the key's `waiters`.
//! 2. `waits_for[t] = o` iff `t` is queued on a key whose owner is `o`. Hand-over
//!    ([`LockTable::release`]) re-points the remaining waiters to the new owner and
//!    removes the new owner's edge, so edges always lead to current owners.
//! 3. Every wait-for cycle is found when its last edge is created: an edge is
//!    created only by a transaction about to wait (which first follows the chain
//!    from the owner and becomes the victim if the chain comes back to it), or by a
//!    hand-over, which points edges at a transaction that has just stopped waiting
//!    and so has no outgoing edge.
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
use std::collections::{HashMap, VecDeque};
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

/// One waiting transaction's parking spot.
#[derive(Debug)]
pub(crate) struct Waiter {
    txn: TxnId,
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
}

/// The outcome of [`LockTable::enqueue`].
pub(crate) enum Queued {
    /// The lock is `txn`'s (it was free, or already `txn`'s).
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
    /// The transaction that holds it.
    pub owner: TxnId,
    /// The transactions waiting for it, first in line first.
    pub waiters: Vec<TxnId>,
}

/// One transaction waiting for a lock now ([`crate::TxnManager::lock_waits`];
/// SHOW ENGINE INNODB STATUS's TRANSACTIONS section).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitingLock {
    /// The key it waits for.
    pub key: Vec<u8>,
    /// The waiting transaction.
    pub waiter: TxnId,
    /// The transaction holding the key.
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
    /// The holder of that key: the next transaction of the cycle.
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

/// The state of one locked key.
#[derive(Debug)]
struct LockState {
    owner: TxnId,
    waiters: VecDeque<Arc<Waiter>>,
}

type Shard = CachePadded<Mutex<HashMap<Vec<u8>, LockState>>>;

/// The sharded table of exclusive row locks. See the module doc.
#[derive(Debug)]
pub(crate) struct LockTable {
    shards: Box<[Shard]>,
    waits_for: Mutex<HashMap<TxnId, TxnId>>,
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

    /// Every waiting transaction with the key, its holder and how long it
    /// has waited, one shard at a time (as [`LockTable::snapshot`]).
    pub(crate) fn waits(&self) -> Vec<WaitingLock> {
        let mut out = Vec::new();
        for shard in self.shards.iter() {
            for (key, st) in shard.lock().iter() {
                out.extend(st.waiters.iter().map(|w| WaitingLock {
                    key: key.clone(),
                    waiter: w.txn,
                    owner: st.owner,
                    waited: w.since.elapsed(),
                }));
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

    /// Records the deadlock `victim` closed by requesting `key`, held by the
    /// first of `chain` (the wait-for chain from that holder back to the
    /// victim, victim excluded). Called with no lock-table mutex held: each
    /// chain member's awaited key is looked up shard by shard.
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

    /// Row lock waits so far (SHOW STATUS).
    /// Every held lock with its waiters. Each shard's mutex is held while
    /// its locks are copied (one shard at a time, so the whole is not one
    /// instant's picture: a lock handed over meanwhile may show twice or
    /// not at all). A reader's cost; the lock path pays nothing for it.
    pub(crate) fn snapshot(&self) -> Vec<HeldLock> {
        let mut out = Vec::new();
        for shard in self.shards.iter() {
            for (key, st) in shard.lock().iter() {
                out.push(HeldLock {
                    key: key.clone(),
                    owner: st.owner,
                    waiters: st.waiters.iter().map(|w| w.txn).collect(),
                });
            }
        }
        out
    }

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

    /// Takes the exclusive lock on `key` for `txn`, waiting up to `timeout`.
    ///
    /// Returns `Ok` when granted (also when `txn` already holds it),
    /// [`Error::Deadlock`] when waiting would close a wait-for cycle (nothing is
    /// queued; the caller must release everything `txn` holds), or
    /// [`Error::LockWaitTimeout`] (nothing is held or queued for this key), or
    /// [`Error::Interrupted`] when `interrupt` became non-zero during the wait
    /// (withdrawn like a timeout; the waiter polls it every `INTERRUPT_POLL`).
    pub(crate) fn acquire(
        &self,
        txn: TxnId,
        key: &[u8],
        timeout: Duration,
        hook: Option<fn(&mut dyn FnMut())>,
        interrupt: Option<&AtomicU32>,
    ) -> Result<()> {
        let waiter = match self.enqueue(txn, key)? {
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

    /// The first half of [`LockTable::acquire`]: takes the lock if it is free
    /// (or `txn`'s already), else — after the deadlock check, which fails with
    /// [`Error::Deadlock`] and queues nothing — queues `txn` behind the owner
    /// and returns its waiter, without waiting.
    pub(crate) fn enqueue(&self, txn: TxnId, key: &[u8]) -> Result<Queued> {
        let mut map = self.shard(key).lock();
        let Some(state) = map.get_mut(key) else {
            map.insert(
                key.to_vec(),
                LockState {
                    owner: txn,
                    waiters: VecDeque::new(),
                },
            );
            return Ok(Queued::Granted);
        };
        if state.owner == txn {
            return Ok(Queued::Granted);
        }
        // Slow path: about to wait. Deadlock check first (invariant 3).
        let mut wf = self.waits_for.lock();
        if chain_reaches(&wf, state.owner, txn) {
            tracing::debug!(
                txn,
                holder = state.owner,
                "deadlock: requester is the victim"
            );
            let chain = chain_to(&wf, state.owner, txn);
            drop(wf);
            drop(map);
            self.record_deadlock(txn, key, chain);
            return Err(Error::Deadlock);
        }
        wf.insert(txn, state.owner);
        let w = Arc::new(Waiter {
            txn,
            state: Mutex::new(WaitState::default()),
            cv: Condvar::new(),
            since: Instant::now(),
        });
        state.waiters.push_back(Arc::clone(&w));
        self.counters.waits.fetch_add(1, Ordering::Relaxed);
        canyon_probes::row_lock_wait_start(txn, key, state.owner);
        Ok(Queued::Waiting(w))
    }

    /// Ends `txn`'s wait for `key` without the lock: takes its waiter out of the
    /// queue and its wait-for edge out of the graph. Returns true, and changes
    /// nothing, if the hand-over won the race and the lock is `txn`'s now (the
    /// grant flag is only set under the shard mutex, so it is stable here).
    pub(crate) fn withdraw(&self, txn: TxnId, key: &[u8], waiter: &Arc<Waiter>) -> bool {
        let mut map = self.shard(key).lock();
        if waiter.granted() {
            return true;
        }
        if let Some(state) = map.get_mut(key) {
            state.waiters.retain(|w| !Arc::ptr_eq(w, waiter));
        }
        self.waits_for.lock().remove(&txn);
        self.counters.ended(waiter.since);
        canyon_probes::row_lock_wait_done(txn, false, micros_since(waiter.since));
        false
    }

    /// A [`LockWait`] on `waiter` that times out at `deadline`.
    pub(crate) fn wait_handle(waiter: &Arc<Waiter>, deadline: Option<Instant>) -> LockWait {
        LockWait {
            waiter: Arc::clone(waiter),
            deadline,
        }
    }

    /// Releases `key`, held by `txn`: hands it to the first waiter, if any.
    pub(crate) fn release(&self, txn: TxnId, key: &[u8]) {
        let mut map = self.shard(key).lock();
        let Some(state) = map.get_mut(key) else {
            debug_assert!(false, "releasing a lock that is not held");
            return;
        };
        debug_assert_eq!(state.owner, txn, "releasing another transaction's lock");
        match state.waiters.pop_front() {
            None => {
                map.remove(key);
            }
            Some(next) => {
                state.owner = next.txn;
                {
                    // Invariant 2: edges lead to the current owner.
                    let mut wf = self.waits_for.lock();
                    wf.remove(&next.txn);
                    for w in &state.waiters {
                        wf.insert(w.txn, next.txn);
                    }
                }
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
    }

    /// The owner of `key`, if locked (tests and diagnostics).
    #[cfg(test)]
    pub(crate) fn owner(&self, key: &[u8]) -> Option<TxnId> {
        self.shard(key).lock().get(key).map(|s| s.owner)
    }
}

/// The transactions met following wait-for edges from `from` until
/// `target` (excluded), which [`chain_reaches`] said is reached.
fn chain_to(wf: &HashMap<TxnId, TxnId>, from: TxnId, target: TxnId) -> Vec<TxnId> {
    let mut out = Vec::new();
    let mut cur = from;
    while cur != target && out.len() <= wf.len() {
        out.push(cur);
        match wf.get(&cur) {
            Some(&next) => cur = next,
            None => break,
        }
    }
    out
}

/// Whether following wait-for edges from `from` reaches `target`. Bounded by the
/// number of edges, so a cycle that does not contain `target` cannot loop forever.
fn chain_reaches(wf: &HashMap<TxnId, TxnId>, from: TxnId, target: TxnId) -> bool {
    let mut cur = from;
    for _ in 0..=wf.len() {
        if cur == target {
            return true;
        }
        match wf.get(&cur) {
            Some(&next) => cur = next,
            None => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;

    const LONG: Duration = Duration::from_secs(10);

    #[test]
    fn reentrant_and_release_removes() {
        let t = LockTable::new();
        t.acquire(1, b"a", LONG, None, None).unwrap();
        t.acquire(1, b"a", LONG, None, None).unwrap();
        assert_eq!(t.owner(b"a"), Some(1));
        t.release(1, b"a");
        assert_eq!(t.owner(b"a"), None);
    }

    #[test]
    fn snapshot_lists_owners_and_waiters_in_line() {
        let t = LockTable::new();
        t.acquire(1, b"k", LONG, None, None).unwrap();
        t.acquire(3, b"m", LONG, None, None).unwrap();
        let Queued::Waiting(w2) = t.enqueue(2, b"k").unwrap() else {
            panic!("k is taken");
        };
        let Queued::Waiting(w4) = t.enqueue(4, b"k").unwrap() else {
            panic!("k is taken");
        };
        let mut s = t.snapshot();
        s.sort_by(|a, b| a.key.cmp(&b.key));
        assert_eq!(
            s,
            vec![
                HeldLock {
                    key: b"k".to_vec(),
                    owner: 1,
                    waiters: vec![2, 4]
                },
                HeldLock {
                    key: b"m".to_vec(),
                    owner: 3,
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
        t.acquire(1, b"k", LONG, None, None).unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut hs = Vec::new();
        for id in [2u64, 3, 4] {
            let (t2, order) = (Arc::clone(&t), Arc::clone(&order));
            hs.push(thread::spawn(move || {
                t2.acquire(id, b"k", LONG, None, None).unwrap();
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
        t.acquire(1, b"k", LONG, None, None).unwrap();
        let flag = Arc::new(AtomicU32::new(0));
        let (t2, f2) = (t.clone(), flag.clone());
        let start = Instant::now();
        let h = std::thread::spawn(move || t2.acquire(2, b"k", LONG, None, Some(&f2)));
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
        t.acquire(1, b"k", LONG, None, None).unwrap();
        let Queued::Waiting(w) = t.enqueue(2, b"k").unwrap() else {
            panic!("2 must queue behind 1")
        };
        let mut wait = LockTable::wait_handle(&w, None);
        let flag = Arc::new(Flag(false.into()));
        let waker = Waker::from(flag.clone());
        let mut cx = Context::from_waker(&waker);
        assert!(Pin::new(&mut wait).poll(&mut cx).is_pending());
        // The queued wait is an edge of the wait-for graph like a blocked one.
        t.acquire(2, b"j", LONG, None, None).unwrap();
        assert!(matches!(t.enqueue(1, b"j"), Err(Error::Deadlock)));
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
        t.acquire(3, b"m", LONG, None, None).unwrap();
        let Queued::Waiting(w4) = t.enqueue(4, b"m").unwrap() else {
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
        t.acquire(1, b"k", LONG, None, None).unwrap();
        assert_eq!(t.stats(), LockStats::default(), "no wait yet");
        let Queued::Waiting(w2) = t.enqueue(2, b"k").unwrap() else {
            panic!("queued")
        };
        let Queued::Waiting(w3) = t.enqueue(3, b"k").unwrap() else {
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
        t.acquire(1, b"k", LONG, None, None).unwrap();
        let r = t.acquire(2, b"k", Duration::from_millis(20), None, None);
        assert!(matches!(r, Err(Error::LockWaitTimeout)));
        assert!(t.waits_for.lock().is_empty());
        t.release(1, b"k");
        assert_eq!(t.owner(b"k"), None);
    }

    #[test]
    fn chain_detection() {
        let mut wf = HashMap::new();
        wf.insert(2, 3);
        wf.insert(3, 1);
        assert!(chain_reaches(&wf, 2, 1));
        assert!(!chain_reaches(&wf, 2, 9));
        wf.insert(1, 2); // a cycle without 9 must still terminate
        assert!(!chain_reaches(&wf, 2, 9));
        assert_eq!(chain_to(&wf, 2, 1), [2, 3]);
    }

    #[test]
    fn the_last_deadlock_and_the_waits_are_recorded() {
        let t = LockTable::new();
        assert_eq!(t.deadlocks(), (0, None));
        t.acquire(1, b"a", LONG, None, None).unwrap();
        t.acquire(2, b"b", LONG, None, None).unwrap();
        t.acquire(3, b"c", LONG, None, None).unwrap();
        // 1 waits for b (2's), 2 for c (3's); 3 asking for a closes the cycle.
        let Queued::Waiting(w1) = t.enqueue(1, b"b").unwrap() else {
            panic!("1 must queue behind 2")
        };
        let Queued::Waiting(w2) = t.enqueue(2, b"c").unwrap() else {
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
        assert!(matches!(t.enqueue(3, b"a"), Err(Error::Deadlock)));
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
