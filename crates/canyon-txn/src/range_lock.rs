//! Range locks: what stops phantoms in locking reads under REPEATABLE READ
//! and SERIALIZABLE, in place of InnoDB's gap and next-key locks.
//!
//! # The problem
//! A locking read (`SELECT ... FOR UPDATE WHERE k > 10`, an UPDATE or DELETE
//! over a range, a SERIALIZABLE read) locks the rows it finds. Row locks
//! cannot stop a row that does not exist yet: another transaction may insert
//! into the range and commit, and a second read of the range sees a phantom
//! (the "check, then insert" pattern breaks). InnoDB locks the gaps: a
//! next-key lock covers a record and the gap before it, and an insert takes
//! an *insert-intention* lock on the gap it lands in, which waits for any
//! gap lock there.
//!
//! # The design: ranges against points
//! Canyon's storage is an LSM tree, not a B-tree the reader is positioned in,
//! so there is no "next record" to hang a gap lock on without a seek. It
//! locks what the statement actually read instead (a predicate lock in the
//! simplest form, over key ranges):
//! - a locking read registers the **range** of keys it examined — the
//!   primary-key range, or the index range (as `index ++ key ++ pk` entry
//!   keys), from its start bound to the last key it examined, or to its end
//!   bound when it ran to the end (the "supremum");
//! - a write registers a **point** for every key it adds to the primary key
//!   or to an index (a new row, a changed primary key, a changed indexed
//!   value): the insert intention;
//! - a bulk load into an empty table registers one point covering the whole
//!   table and its indexes (`Registration::Whole`) instead of one per row;
//! - a range conflicts with another transaction's point inside it, a point
//!   with another transaction's range containing it. Ranges never conflict
//!   with ranges, nor points with points (InnoDB's gap locks are likewise
//!   compatible with each other); the rows themselves are the row locks'
//!   business (`lock.rs`).
//!
//! Registrations last until the transaction ends (commit, rollback, or the
//! end of a prepared XA branch), as InnoDB's locks do. A request that meets
//! a conflict registers nothing and reports the other transaction; the
//! caller waits for that transaction to end — a shared lock on the key
//! `t ++ id` its owner holds exclusively (`Transaction::wait_for_txn`), so
//! the wait is in the row lock table's queue and wait-for graph, and a cycle
//! through range waits and row waits alike is a deadlock (1213) — then asks
//! again.
//!
//! This blocks less than next-key locking: InnoDB's `WHERE k > 10 ... LIMIT 1`
//! also locks the gap after the row it stops at, and an empty range's gap
//! extends to the next existing key; here exactly the keys read are covered.
//! It guarantees the same: no key can enter a range a transaction read under
//! a lock until that transaction ends.
//!
//! # Why a read is complete
//! The reader registers after it has read (it does not know how far a LIMIT
//! scan goes before reading), so an insert could commit between the read and
//! the registration. Each space counts the transactions that ended holding a
//! point in it (`ended`); the reader notes the count before reading, and
//! reads again when registering had to wait or the count moved. An insert
//! the first read missed either still holds its point (a conflict: wait,
//! read again), ended before the registration (the count moved: read
//! again), or comes after it (it waits for the reader). Points are removed
//! only after their transaction's batch is in storage (commit rule 6), so a
//! read again sees the row.
//!
//! # Cost
//! A write that adds keys takes one mutex per index it adds to (the space's
//! shard) and one B-tree insert per key, and as much at its end; a locking
//! range read one mutex and a walk over the points inside its range. Ranges
//! are a list per space, so a point checks every range of its index: cheap
//! while locking range reads are few; an interval tree would bound it.

use crate::keys::range_is_empty;
use crate::{IndexId, TableId, TxnId};
use canyon_storage::KeyRange;
use crossbeam_utils::CachePadded;
use hashbrown::HashMap;
use parking_lot::Mutex;
use std::collections::BTreeSet;
use std::ops::Bound;

/// Number of shards (a power of two).
const SHARDS: usize = 16;

/// The key space a lock lives in: a table's rows (by primary key, as Rows
/// keys) or one index (as Index entry keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Space {
    Rows(TableId),
    Index(IndexId),
}

impl Space {
    fn shard(self) -> usize {
        let (tag, id) = match self {
            Space::Rows(t) => (0u32, t),
            Space::Index(i) => (1, i),
        };
        (id.wrapping_mul(0x9E37_79B9) ^ tag) as usize & (SHARDS - 1)
    }
}

/// One registration a transaction made, to be removed at its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Registration {
    Range(Space, KeyRange),
    Point(Space, Vec<u8>),
    /// An insert intention over the whole space: a bulk load (bulk.rs),
    /// which adds keys anywhere without registering each.
    Whole(Space),
}

/// The registrations of one space.
#[derive(Debug, Default)]
struct Registrations {
    ranges: Vec<(KeyRange, TxnId)>,
    points: BTreeSet<(Vec<u8>, TxnId)>,
    /// Transactions inserting anywhere in the space ([`Registration::Whole`]).
    whole: Vec<TxnId>,
    /// Transactions that ended holding a point here (see the module doc).
    ended: u64,
}

impl Registrations {
    /// Another transaction inserting into `range`, if any.
    fn inserter_in(&self, range: &KeyRange, txn: TxnId) -> Option<TxnId> {
        match self.whole.iter().find(|&&t| t != txn) {
            Some(&t) if !range_is_empty(range) => Some(t),
            _ => point_in(&self.points, range, txn),
        }
    }
}

/// What a request found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Registered (or held already). For a range: the space's `ended`
    /// count at registration.
    Registered(u64),
    /// Another transaction's registration conflicts: wait for it to end.
    Conflict(TxnId),
}

/// The range lock table. Spaces are created at first use and kept (one
/// small entry per table and index).
#[derive(Debug)]
pub(crate) struct RangeLocks {
    shards: Box<[CachePadded<Mutex<HashMap<Space, Registrations>>>]>,
}

impl RangeLocks {
    pub(crate) fn new() -> Self {
        RangeLocks {
            shards: (0..SHARDS)
                .map(|_| CachePadded::new(Mutex::new(HashMap::new())))
                .collect(),
        }
    }

    fn shard(&self, space: Space) -> &Mutex<HashMap<Space, Registrations>> {
        &self.shards[space.shard()]
    }

    /// The space's count of ended inserters (read before a locking read).
    pub(crate) fn ended(&self, space: Space) -> u64 {
        self.shard(space).lock().get(&space).map_or(0, |r| r.ended)
    }

    /// Registers `range` for `txn` unless another transaction has a point in
    /// it. `new` is false when one range `txn` holds covers it already.
    pub(crate) fn lock_range(&self, txn: TxnId, space: Space, range: &KeyRange) -> (Outcome, bool) {
        let mut map = self.shard(space).lock();
        let regs = map.entry(space).or_default();
        if let Some(other) = regs.inserter_in(range, txn) {
            return (Outcome::Conflict(other), false);
        }
        let held = regs
            .ranges
            .iter()
            .any(|(r, t)| *t == txn && covers(r, range));
        if !held {
            regs.ranges.push((range.clone(), txn));
        }
        (Outcome::Registered(regs.ended), !held)
    }

    /// Another transaction's point inside `range`, if any, registering
    /// nothing (a READ COMMITTED locking read, which waits for inserts in
    /// flight as InnoDB's waits for an uncommitted record's lock, but does
    /// not keep later inserts out).
    pub(crate) fn point_owner(&self, txn: TxnId, space: Space, range: &KeyRange) -> Option<TxnId> {
        let map = self.shard(space).lock();
        map.get(&space)?.inserter_in(range, txn)
    }

    /// Registers an insert intention over all of each space in `spaces` for
    /// `txn`, unless another transaction holds a range in one of them
    /// (then nothing is registered and that transaction is returned).
    pub(crate) fn intend_whole(&self, txn: TxnId, spaces: &[Space]) -> Option<TxnId> {
        // One space at a time, undoing on a conflict: spaces may lie in
        // different shards, whose mutexes are never held together.
        for (i, &space) in spaces.iter().enumerate() {
            let mut map = self.shard(space).lock();
            let regs = map.entry(space).or_default();
            if let Some(&(_, other)) = regs.ranges.iter().find(|(_, t)| *t != txn) {
                drop(map);
                let done = spaces[..i]
                    .iter()
                    .map(|&s| Registration::Whole(s))
                    .collect();
                self.release(txn, done);
                return Some(other);
            }
            if !regs.whole.contains(&txn) {
                regs.whole.push(txn);
            }
        }
        None
    }

    /// Registers the point `key` for `txn` unless another transaction's
    /// range contains it. `new` is false when `txn` holds that point already.
    pub(crate) fn intend(&self, txn: TxnId, space: Space, key: &[u8]) -> (Outcome, bool) {
        let mut map = self.shard(space).lock();
        let regs = map.entry(space).or_default();
        if let Some(&(_, other)) = regs
            .ranges
            .iter()
            .find(|(r, t)| *t != txn && r.contains(key))
        {
            return (Outcome::Conflict(other), false);
        }
        let new = regs.points.insert((key.to_vec(), txn));
        (Outcome::Registered(regs.ended), new)
    }

    /// Removes `txn`'s registrations (its end).
    pub(crate) fn release(&self, txn: TxnId, regs: Vec<Registration>) {
        // Group by shard so that each mutex is taken once.
        let mut by_shard: Vec<Vec<Registration>> = vec![Vec::new(); SHARDS];
        for r in regs {
            let s = match &r {
                Registration::Range(s, _) | Registration::Point(s, _) | Registration::Whole(s) => {
                    *s
                }
            };
            by_shard[s.shard()].push(r);
        }
        for (i, list) in by_shard.into_iter().enumerate() {
            if list.is_empty() {
                continue;
            }
            let mut map = self.shards[i].lock();
            let mut ended_in: Vec<Space> = Vec::new();
            for r in list {
                match r {
                    Registration::Range(s, range) => {
                        if let Some(regs) = map.get_mut(&s) {
                            if let Some(at) = regs
                                .ranges
                                .iter()
                                .position(|(x, t)| *t == txn && *x == range)
                            {
                                regs.ranges.swap_remove(at);
                            }
                        }
                    }
                    Registration::Whole(s) => {
                        if let Some(regs) = map.get_mut(&s) {
                            regs.whole.retain(|&t| t != txn);
                            if !ended_in.contains(&s) {
                                ended_in.push(s);
                            }
                        }
                    }
                    Registration::Point(s, key) => {
                        if let Some(regs) = map.get_mut(&s) {
                            let removed = regs.points.remove(&(key, txn));
                            debug_assert!(removed, "a point released twice");
                            if !ended_in.contains(&s) {
                                ended_in.push(s);
                            }
                        }
                    }
                }
            }
            for s in ended_in {
                if let Some(regs) = map.get_mut(&s) {
                    regs.ended += 1;
                }
            }
        }
    }

    /// How many ranges and points are registered now (tests).
    #[cfg(test)]
    pub(crate) fn count(&self) -> (usize, usize) {
        let mut n = (0, 0);
        for s in self.shards.iter() {
            for r in s.lock().values() {
                n.0 += r.ranges.len();
                n.1 += r.points.len();
            }
        }
        n
    }
}

/// Whether every key of `inner` lies in `outer`.
fn covers(outer: &KeyRange, inner: &KeyRange) -> bool {
    let start_ok = match (&outer.start, &inner.start) {
        (Bound::Unbounded, _) => true,
        (_, Bound::Unbounded) => false,
        (Bound::Included(o), Bound::Included(i) | Bound::Excluded(i)) => o <= i,
        (Bound::Excluded(o), Bound::Excluded(i)) => o <= i,
        (Bound::Excluded(o), Bound::Included(i)) => o < i,
    };
    let end_ok = match (&outer.end, &inner.end) {
        (Bound::Unbounded, _) => true,
        (_, Bound::Unbounded) => false,
        (Bound::Included(o), Bound::Included(i) | Bound::Excluded(i)) => i <= o,
        (Bound::Excluded(o), Bound::Excluded(i)) => i <= o,
        (Bound::Excluded(o), Bound::Included(i)) => i < o,
    };
    start_ok && end_ok
}

/// Another transaction's point inside `range`, if any.
fn point_in(points: &BTreeSet<(Vec<u8>, TxnId)>, range: &KeyRange, txn: TxnId) -> Option<TxnId> {
    if range_is_empty(range) {
        return None;
    }
    let start = match &range.start {
        Bound::Included(s) => Bound::Included((s.clone(), 0)),
        Bound::Excluded(s) => Bound::Excluded((s.clone(), TxnId::MAX)),
        Bound::Unbounded => Bound::Unbounded,
    };
    points
        .range((start, Bound::Unbounded))
        .take_while(|(k, _)| range.contains(k))
        .find(|(_, t)| *t != txn)
        .map(|&(_, t)| t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(lo: &[u8], hi: &[u8]) -> KeyRange {
        KeyRange {
            start: Bound::Included(lo.to_vec()),
            end: Bound::Excluded(hi.to_vec()),
        }
    }

    #[test]
    fn ranges_and_points_conflict_across_transactions_only() {
        let t = RangeLocks::new();
        let s = Space::Rows(7);
        assert_eq!(
            t.lock_range(1, s, &r(b"b", b"f")),
            (Outcome::Registered(0), true)
        );
        assert!(!t.lock_range(1, s, &r(b"b", b"f")).1, "held already");
        assert!(!t.lock_range(1, s, &r(b"c", b"e")).1, "covered");
        assert!(covers(&KeyRange::all(), &r(b"a", b"b")));
        assert!(!covers(&r(b"a", b"b"), &KeyRange::all()));
        // Ranges share.
        assert_eq!(t.lock_range(2, s, &r(b"a", b"z")).0, Outcome::Registered(0));
        // A point inside 1's range (and 2's) conflicts; its own does not.
        assert_eq!(t.intend(3, s, b"c").0, Outcome::Conflict(1));
        assert_eq!(t.intend(1, s, b"y").0, Outcome::Conflict(2));
        assert_eq!(t.intend(1, s, b"c").0, Outcome::Conflict(2));
        assert_eq!(t.intend(3, s, b"zz"), (Outcome::Registered(0), true));
        // Another space is another world.
        assert_eq!(t.intend(3, Space::Index(7), b"c").0, Outcome::Registered(0));
        // A range over 3's point conflicts, one beside it does not.
        assert_eq!(t.lock_range(1, s, &r(b"z", b"zzz")).0, Outcome::Conflict(3));
        assert_eq!(t.point_owner(1, s, &r(b"z", b"zzz")), Some(3));
        assert_eq!(t.point_owner(3, s, &r(b"z", b"zzz")), None, "its own");
        assert_eq!(
            t.lock_range(1, s, &r(b"z", b"zz")).0,
            Outcome::Registered(0)
        );
        t.release(
            3,
            vec![
                Registration::Point(s, b"zz".to_vec()),
                Registration::Point(Space::Index(7), b"c".to_vec()),
            ],
        );
        assert_eq!(t.ended(s), 1, "an inserter ended");
        assert_eq!(
            t.lock_range(1, s, &r(b"z", b"zzz")).0,
            Outcome::Registered(1)
        );
        t.release(2, vec![Registration::Range(s, r(b"a", b"z"))]);
        assert_eq!(t.ended(s), 1, "a reader's end is not counted");
        assert_eq!(t.intend(4, s, b"y").0, Outcome::Registered(1));
        assert_eq!(t.count(), (3, 1));
    }

    #[test]
    fn a_whole_space_intention_conflicts_with_every_range() {
        let t = RangeLocks::new();
        let (a, b) = (Space::Rows(1), Space::Index(2));
        t.lock_range(5, b, &r(b"a", b"b"));
        assert_eq!(t.intend_whole(7, &[a, b]), Some(5));
        assert_eq!(
            t.lock_range(8, a, &r(b"x", b"y")).0,
            Outcome::Registered(1),
            "undone (the undo counts as an inserter's end)"
        );
        t.release(5, vec![Registration::Range(b, r(b"a", b"b"))]);
        t.release(8, vec![Registration::Range(a, r(b"x", b"y"))]);
        assert_eq!(t.intend_whole(7, &[a, b]), None);
        assert_eq!(t.lock_range(8, a, &r(b"x", b"y")).0, Outcome::Conflict(7));
        assert_eq!(t.point_owner(8, b, &KeyRange::all()), Some(7));
        t.release(7, vec![Registration::Whole(a), Registration::Whole(b)]);
        assert_eq!(t.lock_range(8, a, &r(b"x", b"y")).0, Outcome::Registered(2));
    }

    #[test]
    fn unbounded_and_excluded_bounds() {
        let t = RangeLocks::new();
        let s = Space::Index(1);
        t.intend(2, s, b"m");
        let above_m = KeyRange {
            start: Bound::Excluded(b"m".to_vec()),
            end: Bound::Unbounded,
        };
        assert_eq!(t.lock_range(1, s, &above_m).0, Outcome::Registered(0));
        let from_m = KeyRange {
            start: Bound::Included(b"m".to_vec()),
            end: Bound::Unbounded,
        };
        assert_eq!(t.lock_range(1, s, &from_m).0, Outcome::Conflict(2));
        assert_eq!(t.lock_range(1, s, &KeyRange::all()).0, Outcome::Conflict(2));
        assert_eq!(t.intend(3, s, b"\xff").0, Outcome::Conflict(1));
        assert_eq!(t.intend(3, s, b"a").0, Outcome::Registered(0));
    }
}
