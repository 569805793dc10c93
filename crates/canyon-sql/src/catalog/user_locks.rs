//! User-level locks: the named locks of GET_LOCK, RELEASE_LOCK, IS_FREE_LOCK,
//! IS_USED_LOCK and RELEASE_ALL_LOCKS (MySQL manual, 14.14 "Locking
//! Functions"), one registry per engine.
//!
//! # Rules (MySQL 8.0's)
//! 1. A lock belongs to a session; the session may take it again, and holds
//!    it until it has released it as many times (GET_LOCK is re-entrant).
//! 2. A session may hold any number of locks; they all go when it ends
//!    (`Session`'s drop calls [`UserLocks::release_all`]), never with a
//!    transaction's end.
//! 3. GET_LOCK waits up to its timeout (a negative one: for ever) for a lock
//!    another session holds; KILL QUERY ends the wait.
//! 4. A wait that would close a cycle — the holder of the wanted lock waits,
//!    through holders of further locks, for a lock this session holds — is
//!    refused at once with ER_USER_LOCK_DEADLOCK (3058): the session that
//!    closes the cycle is the victim, and the others wait on.
//! 5. A name is at most 64 characters (ER_USER_LOCK_WRONG_NAME, 3057,
//!    checked by the caller) and compared without regard to case.
//!
//! ```text
//!   held:    name -> (owner, connection id, count)
//!   waiting: owner -> name        (the edges of rule 4's wait-for graph)
//! ```
//! A waiter sleeps on one condition variable that every release notifies,
//! and wakes at least every [`WAIT_SLICE`] to look at its kill flag.

use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The longest name GET_LOCK accepts (MySQL 8.0: 64 characters).
pub const MAX_NAME_CHARS: usize = 64;

/// How long a waiter sleeps between two looks at its kill flag.
pub const WAIT_SLICE: Duration = Duration::from_millis(20);

/// A session's identity in the registry: unique among live sessions (the
/// connection id is not, for in-process callers).
pub type Owner = u64;

/// How a GET_LOCK ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acquired {
    /// The lock is the session's (GET_LOCK returns 1).
    Granted,
    /// The timeout passed first (GET_LOCK returns 0).
    TimedOut,
    /// Waiting would deadlock (3058, rule 4).
    Deadlock,
    /// The wait was killed (KILL QUERY).
    Interrupted,
}

/// A held lock.
#[derive(Debug)]
struct Holder {
    owner: Owner,
    conn: u32,
    count: u64,
}

#[derive(Debug, Default)]
struct State {
    held: HashMap<String, Holder>,
    waiting: HashMap<Owner, String>,
}

impl State {
    /// Whether `owner` waiting for `key` closes a cycle (rule 4).
    fn closes_cycle(&self, owner: Owner, key: &str) -> bool {
        let mut name = key;
        // Each step follows a distinct waiter; more steps than waiters
        // means a cycle that does not pass through `owner`.
        for _ in 0..=self.waiting.len() {
            let Some(h) = self.held.get(name) else {
                return false;
            };
            if h.owner == owner {
                return true;
            }
            match self.waiting.get(&h.owner) {
                Some(next) => name = next,
                None => return false,
            }
        }
        false
    }
}

/// The registry of user-level locks (see the module doc).
#[derive(Debug, Default)]
pub struct UserLocks {
    state: Mutex<State>,
    released: Condvar,
}

fn key(name: &str) -> String {
    name.to_lowercase()
}

impl UserLocks {
    /// GET_LOCK: takes `name` for `owner` (connection `conn`), waiting up to
    /// `timeout` (`None`: for ever) while another session holds it;
    /// `interrupted` is asked every [`WAIT_SLICE`] of the wait.
    pub fn acquire(
        &self,
        owner: Owner,
        conn: u32,
        name: &str,
        timeout: Option<Duration>,
        interrupted: &dyn Fn() -> bool,
    ) -> Acquired {
        let key = key(name);
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut st = self.state.lock();
        let outcome = loop {
            match st.held.get_mut(&key) {
                None => {
                    st.held.insert(
                        key.clone(),
                        Holder {
                            owner,
                            conn,
                            count: 1,
                        },
                    );
                    break Acquired::Granted;
                }
                Some(h) if h.owner == owner => {
                    h.count += 1;
                    break Acquired::Granted;
                }
                Some(_) => {}
            }
            if st.closes_cycle(owner, &key) {
                break Acquired::Deadlock;
            }
            if interrupted() {
                break Acquired::Interrupted;
            }
            let now = Instant::now();
            let slice = match deadline {
                Some(d) if now >= d => break Acquired::TimedOut,
                Some(d) => (d - now).min(WAIT_SLICE),
                None => WAIT_SLICE,
            };
            st.waiting.insert(owner, key.clone());
            self.released.wait_for(&mut st, slice);
        };
        st.waiting.remove(&owner);
        outcome
    }

    /// RELEASE_LOCK: `None` when no session holds `name`, `Some(false)` when
    /// another one does, `Some(true)` when `owner` did and has released it
    /// once.
    pub fn release(&self, owner: Owner, name: &str) -> Option<bool> {
        let key = key(name);
        let mut st = self.state.lock();
        let h = st.held.get_mut(&key)?;
        if h.owner != owner {
            return Some(false);
        }
        h.count -= 1;
        if h.count == 0 {
            st.held.remove(&key);
            self.released.notify_all();
        }
        Some(true)
    }

    /// RELEASE_ALL_LOCKS, and a session's end: releases every lock `owner`
    /// holds; the number of times they had been taken.
    pub fn release_all(&self, owner: Owner) -> u64 {
        let mut st = self.state.lock();
        let mut n = 0;
        st.held.retain(|_, h| {
            if h.owner == owner {
                n += h.count;
                false
            } else {
                true
            }
        });
        if n > 0 {
            self.released.notify_all();
        }
        n
    }

    /// IS_USED_LOCK: the connection id of the session holding `name`.
    pub fn holder(&self, name: &str) -> Option<u32> {
        self.state.lock().held.get(&key(name)).map(|h| h.conn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn reentrant_release_counts_and_ownership() {
        let l = UserLocks::default();
        let never = || false;
        assert_eq!(l.acquire(1, 10, "a", None, &never), Acquired::Granted);
        assert_eq!(l.acquire(1, 10, "A", None, &never), Acquired::Granted);
        assert_eq!(l.holder("a"), Some(10));
        assert_eq!(
            l.acquire(2, 20, "a", Some(Duration::from_millis(30)), &never),
            Acquired::TimedOut
        );
        assert_eq!(l.release(2, "a"), Some(false));
        assert_eq!(l.release(1, "a"), Some(true));
        assert_eq!(l.holder("a"), Some(10));
        assert_eq!(l.release(1, "a"), Some(true));
        assert_eq!(l.release(1, "a"), None);
        assert_eq!(l.acquire(1, 10, "b", None, &never), Acquired::Granted);
        assert_eq!(l.acquire(1, 10, "c", None, &never), Acquired::Granted);
        assert_eq!(l.release_all(1), 2);
        assert_eq!(l.holder("b"), None);
    }

    #[test]
    fn a_wait_closing_a_cycle_is_refused_and_a_release_wakes_a_waiter() {
        let l = Arc::new(UserLocks::default());
        let never = || false;
        assert_eq!(l.acquire(1, 10, "a", None, &never), Acquired::Granted);
        assert_eq!(l.acquire(2, 20, "b", None, &never), Acquired::Granted);
        let l2 = l.clone();
        let waiter = std::thread::spawn(move || l2.acquire(1, 10, "b", None, &|| false));
        while l.state.lock().waiting.is_empty() {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(l.acquire(2, 20, "a", None, &never), Acquired::Deadlock);
        assert_eq!(l.release_all(2), 1);
        assert_eq!(waiter.join().expect("waiter"), Acquired::Granted);
        assert_eq!(l.holder("b"), Some(10));
    }
}
