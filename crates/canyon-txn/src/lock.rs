//! The row lock table: exclusive locks on opaque byte keys, FIFO waits, deadlock
//! detection.
//!
//! ```text
//!   shards[hash(key) % 64]   CachePadded<Mutex<HashMap<key, LockState>>>
//!        LockState { owner: TxnId, waiters: VecDeque<Arc<Waiter>> }   (FIFO)
//!   waits_for                Mutex<HashMap<TxnId, TxnId>>   (slow path only)
//!   Waiter                   Mutex<bool granted> + Condvar   (one per wait)
//! ```
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

use crate::{run_blocking, TxnId};
use canyon_common::{Error, Result};
use crossbeam_utils::CachePadded;
use parking_lot::{Condvar, Mutex};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a waiter with an interrupt flag wakes to look at it. KILL QUERY of
/// a lock wait therefore takes effect within this interval; InnoDB's lock wait
/// timeout thread, which also ends killed waits, wakes once a second.
const INTERRUPT_POLL: Duration = Duration::from_millis(50);

/// Number of shards of the lock table (a power of two).
const SHARDS: usize = 64;

/// One waiting transaction's parking spot.
#[derive(Debug)]
struct Waiter {
    txn: TxnId,
    /// Set (under the shard mutex) when the lock is handed to this waiter.
    granted: Mutex<bool>,
    cv: Condvar,
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
        }
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
        let shard = self.shard(key);
        let waiter = {
            let mut map = shard.lock();
            let Some(state) = map.get_mut(key) else {
                map.insert(
                    key.to_vec(),
                    LockState {
                        owner: txn,
                        waiters: VecDeque::new(),
                    },
                );
                return Ok(());
            };
            if state.owner == txn {
                return Ok(());
            }
            // Slow path: about to wait. Deadlock check first (invariant 3).
            let mut wf = self.waits_for.lock();
            if chain_reaches(&wf, state.owner, txn) {
                tracing::debug!(
                    txn,
                    holder = state.owner,
                    "deadlock: requester is the victim"
                );
                return Err(Error::Deadlock);
            }
            wf.insert(txn, state.owner);
            let w = Arc::new(Waiter {
                txn,
                granted: Mutex::new(false),
                cv: Condvar::new(),
            });
            state.waiters.push_back(Arc::clone(&w));
            w
        };

        // A timeout too large for an Instant (e.g. Duration::MAX) waits forever.
        let deadline = Instant::now().checked_add(timeout);
        let mut granted = false;
        let mut interrupted = false;
        let is_interrupted = || interrupt.is_some_and(|f| f.load(Ordering::Relaxed) != 0);
        run_blocking(hook, &mut || {
            let mut g = waiter.granted.lock();
            while !*g {
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
            granted = *g;
        });
        if granted {
            return Ok(());
        }

        // Timed out: withdraw, unless the hand-over won the race (the grant flag is
        // only set under the shard mutex, so it is stable while we hold it).
        let mut map = shard.lock();
        if *waiter.granted.lock() {
            return Ok(());
        }
        if let Some(state) = map.get_mut(key) {
            state.waiters.retain(|w| !Arc::ptr_eq(w, &waiter));
        }
        self.waits_for.lock().remove(&txn);
        if interrupted {
            Err(Error::Interrupted)
        } else {
            Err(Error::LockWaitTimeout)
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
                *next.granted.lock() = true;
                next.cv.notify_one();
            }
        }
    }

    /// The owner of `key`, if locked (tests and diagnostics).
    #[cfg(test)]
    pub(crate) fn owner(&self, key: &[u8]) -> Option<TxnId> {
        self.shard(key).lock().get(key).map(|s| s.owner)
    }
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
