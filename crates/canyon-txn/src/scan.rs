//! Range scans over rows and over secondary indexes, merged with the
//! transaction's own writes.
//!
//! Both scans run the caller's callback from inside the storage scan's callback
//! (the storage contract allows reads there), so a row is handed out without
//! being copied when the Rows version is the visible one. Own writes are collected
//! first (references into the write buffer, sorted) and merged in key order:
//!
//! ```text
//!   storage:  a     c  d        g          own writes:  b(put)  d(delete)  e(put)
//!   yields:   a  b  c     e     g          (d hidden by the buffered delete)
//! ```
//!
//! A forward row scan from an exact start key may begin past a run of dead
//! keys an earlier scan recorded, and records or extends one when it steps
//! over many itself (`dead_runs.rs`: a queue's deleted head costs one seek,
//! not a walk over every tombstone).

use crate::dead_runs::{Run, MIN_RUN};
use crate::keys::{
    self, bound_ref, decode_index_value, decode_version, index_entry_key, index_range,
    range_is_empty, rows_range, split_index_key,
};
use crate::{IndexId, ReadMode, TableId, Timestamp, Transaction, TxnManager};
use canyon_common::Result;
use canyon_storage::{prefix_successor, KeyRange, Keyspace};
use std::borrow::Cow;
use std::collections::HashSet;
use std::ops::{Bound, ControlFlow};
use std::sync::atomic::Ordering;

/// The callback of [`Transaction::scan`].
type RowVisitor<'a> = dyn FnMut(&[u8], &[u8]) -> ControlFlow<()> + 'a;

/// The callback of [`Transaction::scan_index`].
type IndexVisitor<'a> = dyn FnMut(&[u8], &[u8], &[u8]) -> ControlFlow<()> + 'a;

/// An own write's index entry: (full Index key, index_key, pk, row).
type OwnIndexEntry<'a> = (Vec<u8>, &'a [u8], &'a [u8], &'a [u8]);

/// The dead entries a forward scan met at the start of its storage range,
/// before its first live one (dead_runs.rs).
struct DeadHead {
    entries: usize,
    /// The newest tombstone's commit timestamp (from the run the scan resumed
    /// from, too).
    newest: Timestamp,
    /// Still counting: no live entry met yet.
    open: bool,
}

/// Whether `a` comes strictly before `b` in scan order.
fn before(a: &[u8], b: &[u8], reverse: bool) -> bool {
    if reverse {
        a > b
    } else {
        a < b
    }
}

impl TxnManager {
    /// The version of a Rows entry (`key`, `value` as stored) that a reader at `at`
    /// sees (`None`: current). Borrows the row from `value` when it can.
    fn resolve<'v>(
        &self,
        key: &[u8],
        value: &'v [u8],
        at: Option<Timestamp>,
    ) -> Result<Option<Cow<'v, [u8]>>> {
        let v = decode_version(value)?;
        match at {
            Some(s) if v.ts > s => Ok(self.read_history(key, s)?.map(Cow::Owned)),
            _ => Ok(v.row.map(Cow::Borrowed)),
        }
    }
}

impl Transaction {
    /// Visits the rows of `table` whose pk lies in `range` (bounds compare whole pk
    /// bytes), in pk order or reverse, reading each in `mode` and merging the own
    /// write buffer (buffered rows replace stored ones, buffered deletes hide them).
    /// `f(pk, row)` returns [`ControlFlow::Break`] to stop. `f` runs inside a
    /// storage scan: it may read, but must not commit other transactions.
    #[allow(clippy::type_complexity)] // the signature is the SQL layer's contract
    pub fn scan(
        &mut self,
        table: TableId,
        range: &KeyRange,
        reverse: bool,
        mode: ReadMode,
        f: &mut dyn FnMut(&[u8], &[u8]) -> ControlFlow<()>,
    ) -> Result<()> {
        self.check_active()?;
        let at = self.read_at(mode);
        self.scan_at(at, table, range, reverse, f)
    }

    /// [`Transaction::scan`] at a resolved read point (see [`Reader`]).
    pub(crate) fn scan_at(
        &self,
        at: Option<Timestamp>,
        table: TableId,
        range: &KeyRange,
        reverse: bool,
        f: &mut dyn FnMut(&[u8], &[u8]) -> ControlFlow<()>,
    ) -> Result<()> {
        let srange = rows_range(table, range);
        if range_is_empty(&srange) {
            return Ok(());
        }
        let mut own: Vec<(&[u8], Option<&[u8]>)> = self
            .writes
            .range::<[u8], _>((bound_ref(&srange.start), bound_ref(&srange.end)))
            .map(|(k, b)| (k.as_slice(), b.row.as_deref()))
            .collect();
        if reverse {
            own.reverse();
        }
        let mgr = &self.mgr;
        // Dead runs (dead_runs.rs): a forward scan from an exact start key may
        // begin past the dead head a run records, and records or extends one.
        let head = match (&srange.start, reverse) {
            (Bound::Included(start), false) => Some(start.as_slice()),
            _ => None,
        };
        let watched = head.and_then(|start| mgr.dead_runs.lookup(table, start));
        // Rule 2: loaded before the scan begins, and only if a run may be recorded.
        let is_watched = watched.is_some();
        let l0 = is_watched.then(|| mgr.last_written_ts.load(Ordering::SeqCst));
        let found = watched
            .flatten()
            .filter(|run| at.is_none_or(|s| s >= run.dead_through));
        let resumed;
        let storage_range = match &found {
            Some(run) => {
                resumed = KeyRange {
                    start: Bound::Included(run.resume.clone()),
                    end: srange.end.clone(),
                };
                &resumed
            }
            None => &srange,
        };
        let mut dead = DeadHead {
            entries: 0,
            newest: found.as_ref().map_or(0, |run| run.dead_through),
            open: head.is_some(),
        };
        let mut next_own = 0;
        let mut stopped = false;
        let mut err = None;
        // Emits own write `i` (if it is a row, not a delete); true = stop.
        let emit_own = |i: usize, f: &mut RowVisitor<'_>| {
            let (k, row) = own[i];
            row.is_some_and(|r| f(&k[keys::ID_LEN..], r).is_break())
        };
        let mut visit = |k: &[u8], v: &[u8]| {
            if dead.open {
                match decode_version(v) {
                    Ok(version) if version.row.is_none() => {
                        dead.entries += 1;
                        dead.newest = dead.newest.max(version.ts);
                    }
                    _ => {
                        dead.open = false;
                        if dead.entries >= MIN_RUN {
                            if let (Some(start), Some(l0)) = (head, l0) {
                                let run = Run {
                                    resume: k.to_vec(),
                                    dead_through: dead.newest,
                                };
                                mgr.dead_runs.record(table, start, run, l0);
                            }
                        }
                    }
                }
            }
            while next_own < own.len() && before(own[next_own].0, k, reverse) {
                next_own += 1;
                if emit_own(next_own - 1, f) {
                    stopped = true;
                    return ControlFlow::Break(());
                }
            }
            if next_own < own.len() && own[next_own].0 == k {
                next_own += 1;
                if emit_own(next_own - 1, f) {
                    stopped = true;
                    return ControlFlow::Break(());
                }
                return ControlFlow::Continue(());
            }
            match mgr.resolve(k, v, at) {
                Ok(Some(row)) => {
                    if f(&k[keys::ID_LEN..], &row).is_break() {
                        stopped = true;
                        return ControlFlow::Break(());
                    }
                    ControlFlow::Continue(())
                }
                Ok(None) => ControlFlow::Continue(()),
                Err(e) => {
                    err = Some(e);
                    ControlFlow::Break(())
                }
            }
        };
        if !range_is_empty(storage_range) {
            mgr.storage
                .scan(Keyspace::Rows, storage_range, reverse, &mut visit)?;
        }
        if let Some(e) = err {
            return Err(e);
        }
        if head.is_some() && !is_watched && dead.entries >= MIN_RUN && mgr.dead_runs.can_watch() {
            // A long dead head in a table not watched yet: watch it, so that
            // the next scan can record a run (rule 2 needs the commit mutex).
            let _commit = mgr.commit_mutex.lock();
            mgr.dead_runs
                .watch(table, mgr.next_ts.load(Ordering::SeqCst));
        }
        if !stopped {
            for i in next_own..own.len() {
                if emit_own(i, f) {
                    break;
                }
            }
        }
        Ok(())
    }

    /// Visits the entries of secondary index `index` (of `table`) whose index key
    /// lies in `range`, in `(index_key, pk)` order or reverse, calling
    /// `f(index_key, pk, row)` with the row version read in `mode`.
    ///
    /// Range bounds are treated as prefixes of `index_key ++ pk` (an `Included(k)`
    /// end includes every entry of key `k`; an `Excluded(k)` start skips them), so
    /// callers pass whole key values or prefixes, never a split of a key.
    ///
    /// Snapshot mode considers entries with `end_ts > snapshot`, Current mode only
    /// live ones. Rows in the own write buffer are never taken from storage
    /// entries: they are yielded under their *new* index keys that fall in the range,
    /// merged in order.
    ///
    /// **Each pk is yielded at most once per call**, at its first entry in scan
    /// order, and **the caller re-checks its predicate on the row**: an entry is a
    /// marker (see the essay in `mvcc.rs`), so the offered `index_key` is the row's
    /// key in the version read, except for a row whose indexed columns changed
    /// after the snapshot, which an old snapshot also reaches through the newer
    /// key. Such a row is yielded once, possibly at the newer key's position: a
    /// consistent read that needs index order exactly should re-sort, or compare
    /// `index_key` with the row's key (and then not rely on a second offer).
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    pub fn scan_index(
        &mut self,
        table: TableId,
        index: IndexId,
        range: &KeyRange,
        reverse: bool,
        mode: ReadMode,
        f: &mut dyn FnMut(&[u8], &[u8], &[u8]) -> ControlFlow<()>,
    ) -> Result<()> {
        self.check_active()?;
        let at = self.read_at(mode);
        self.scan_index_at(at, table, index, range, reverse, f)
    }

    /// [`Transaction::scan_index`] at a resolved read point (see [`Reader`]).
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    pub(crate) fn scan_index_at(
        &self,
        at: Option<Timestamp>,
        table: TableId,
        index: IndexId,
        range: &KeyRange,
        reverse: bool,
        f: &mut dyn FnMut(&[u8], &[u8], &[u8]) -> ControlFlow<()>,
    ) -> Result<()> {
        let Some(irange) = index_range(index, range) else {
            return Ok(());
        };
        if range_is_empty(&irange) {
            return Ok(());
        }

        // Own writes of this table: their new entries for this index, in order.
        let tp = table.to_be_bytes();
        let table_end = match prefix_successor(&tp) {
            Some(s) => Bound::Excluded(s),
            None => Bound::Unbounded,
        };
        let table_writes = || {
            self.writes
                .range::<[u8], _>((Bound::Included(&tp[..]), bound_ref(&table_end)))
        };
        let has_own = table_writes().next().is_some();
        let mut own: Vec<OwnIndexEntry<'_>> = Vec::new();
        for (rk, b) in table_writes() {
            let Some(row) = b.row.as_deref() else {
                continue;
            };
            let pk = &rk[keys::ID_LEN..];
            for (ix, ik) in &b.new_index_keys {
                if *ix != index {
                    continue;
                }
                let full = index_entry_key(index, ik, pk);
                if irange.contains(&full) {
                    own.push((full, ik.as_slice(), pk, row));
                }
            }
        }
        own.sort_by(|a, b| a.0.cmp(&b.0));
        if reverse {
            own.reverse();
        }

        let mgr = &self.mgr;
        let writes = &self.writes;
        let mut next_own = 0;
        let mut stopped = false;
        let mut err = None;
        let mut rk = Vec::new();
        // pks yielded so far: one offer per pk per call.
        let mut seen: HashSet<Vec<u8>> = HashSet::new();
        // Yields own entry `i` unless its pk was yielded; true = stop.
        let emit_own = |i: usize, seen: &mut HashSet<Vec<u8>>, f: &mut IndexVisitor<'_>| {
            let (_, ik, pk, row) = own[i];
            seen.insert(pk.to_vec()) && f(ik, pk, row).is_break()
        };
        mgr.storage
            .scan(Keyspace::Index, &irange, reverse, &mut |k, v| {
                while next_own < own.len() && before(&own[next_own].0, k, reverse) {
                    next_own += 1;
                    if emit_own(next_own - 1, &mut seen, f) {
                        stopped = true;
                        return ControlFlow::Break(());
                    }
                }
                let step = (|| -> Result<ControlFlow<()>> {
                    let (end_ts, pk_len) = decode_index_value(v)?;
                    let wanted = match at {
                        Some(s) => end_ts > s,
                        None => end_ts == u64::MAX,
                    };
                    if !wanted {
                        return Ok(ControlFlow::Continue(()));
                    }
                    let (ik, pk) = split_index_key(k, pk_len)?;
                    rk.clear();
                    rk.extend_from_slice(&tp);
                    rk.extend_from_slice(pk);
                    if (has_own && writes.contains_key(rk.as_slice())) || seen.contains(pk) {
                        return Ok(ControlFlow::Continue(()));
                    }
                    match mgr.read_version(&rk, at)? {
                        Some(row) => {
                            seen.insert(pk.to_vec());
                            Ok(f(ik, pk, &row))
                        }
                        None => Ok(ControlFlow::Continue(())),
                    }
                })();
                match step {
                    Ok(ControlFlow::Continue(())) => ControlFlow::Continue(()),
                    Ok(ControlFlow::Break(())) => {
                        stopped = true;
                        ControlFlow::Break(())
                    }
                    Err(e) => {
                        err = Some(e);
                        ControlFlow::Break(())
                    }
                }
            })?;
        if let Some(e) = err {
            return Err(e);
        }
        if !stopped {
            for i in next_own..own.len() {
                if emit_own(i, &mut seen, f) {
                    break;
                }
            }
        }
        Ok(())
    }
}

/// A read-only view of a transaction at one read point: a snapshot (consistent
/// reads) or the latest committed versions. It borrows the transaction shared, so
/// several scans can be open at once — a nested-loop join reads the inner table
/// from inside the outer table's scan callback, and a correlated subquery runs
/// from inside its outer query's. Locking reads and writes need the transaction
/// itself (`&mut`), so they cannot happen while a `Reader` lives: the borrow
/// checker enforces that.
#[derive(Clone, Copy)]
pub struct Reader<'t> {
    txn: &'t Transaction,
    at: Option<Timestamp>,
}

impl Transaction {
    /// A reader in `mode` (taking the snapshot now if `mode` needs one and none is
    /// taken yet).
    pub fn reader(&mut self, mode: ReadMode) -> Result<Reader<'_>> {
        self.check_active()?;
        let at = self.read_at(mode);
        Ok(Reader { txn: self, at })
    }

    /// Two readers over one borrow: the snapshot's and the latest committed
    /// versions'. A locking SELECT over a join reads its locking query blocks
    /// at the latest versions while its other blocks (subqueries without a
    /// locking clause) read the snapshot, and locks the rows it read only
    /// after the readers are gone (the SQL layer's `exec::select` says how).
    pub fn reader_pair(&mut self) -> Result<(Reader<'_>, Reader<'_>)> {
        self.check_active()?;
        let snapshot = self.read_at(ReadMode::Snapshot);
        let current = self.read_at(ReadMode::Current);
        let txn: &Transaction = self;
        Ok((Reader { txn, at: snapshot }, Reader { txn, at: current }))
    }

    /// Whether this transaction holds the lock on `key` (taken by
    /// [`Transaction::lock`] and not yet released by commit or rollback).
    pub fn holds_lock(&self, key: &[u8]) -> bool {
        self.held.contains_key(key)
    }

    /// Whether this transaction holds `key` in a mode that covers `mode`.
    pub fn holds_lock_in(&self, key: &[u8], mode: crate::LockMode) -> bool {
        self.held.get(key).is_some_and(|m| m.covers(mode))
    }
}

impl Reader<'_> {
    /// The snapshot this reader reads at; `None` for the latest committed
    /// versions (a current read).
    pub fn read_point(&self) -> Option<Timestamp> {
        self.at
    }

    /// [`Transaction::get`] at this reader's read point.
    pub fn get(&self, table: TableId, pk: &[u8]) -> Result<Option<Vec<u8>>> {
        self.txn.get_at(self.at, table, pk)
    }

    /// [`Transaction::scan`] at this reader's read point.
    pub fn scan(
        &self,
        table: TableId,
        range: &KeyRange,
        reverse: bool,
        f: &mut dyn FnMut(&[u8], &[u8]) -> ControlFlow<()>,
    ) -> Result<()> {
        self.txn.scan_at(self.at, table, range, reverse, f)
    }

    /// [`Transaction::scan_index`] at this reader's read point.
    #[allow(clippy::type_complexity)] // the signature is the SQL layer's contract
    pub fn scan_index(
        &self,
        table: TableId,
        index: IndexId,
        range: &KeyRange,
        reverse: bool,
        f: &mut dyn FnMut(&[u8], &[u8], &[u8]) -> ControlFlow<()>,
    ) -> Result<()> {
        self.txn
            .scan_index_at(self.at, table, index, range, reverse, f)
    }
}

impl Reader<'_> {
    /// Visits the primary keys of `table`'s live rows at the latest committed
    /// state, in key order, without decoding rows or consulting history (for
    /// statistics: this reader's snapshot and own writes do not apply). A
    /// bulk scan: it does not fill the block cache (`Storage::scan_bulk`).
    pub fn scan_live_keys(&self, table: TableId, f: &mut dyn FnMut(&[u8])) -> Result<()> {
        self.scan_live_keys_in(table, &KeyRange::all(), &mut |pk| {
            f(pk);
            ControlFlow::Continue(())
        })
    }

    /// [`Reader::scan_live_keys`] over the primary keys in `range`, until `f`
    /// breaks.
    pub fn scan_live_keys_in(
        &self,
        table: TableId,
        range: &KeyRange,
        f: &mut dyn FnMut(&[u8]) -> ControlFlow<()>,
    ) -> Result<()> {
        let range = rows_range(table, range);
        if range_is_empty(&range) {
            return Ok(());
        }
        let mut err = None;
        self.txn
            .mgr
            .storage
            .scan_bulk(
                Keyspace::Rows,
                &range,
                false,
                &mut |k, v| match decode_version(v) {
                    Ok(ver) if ver.row.is_some() => f(&k[keys::ID_LEN..]),
                    Ok(_) => ControlFlow::Continue(()),
                    Err(e) => {
                        err = Some(e);
                        ControlFlow::Break(())
                    }
                },
            )?;
        err.map_or(Ok(()), Err)
    }

    /// Visits the live entries `(index_key, pk)` of secondary index `index` at
    /// the latest committed state, in key order, without reading rows (for
    /// statistics, like [`Reader::scan_live_keys`]).
    pub fn scan_live_index_keys(
        &self,
        index: IndexId,
        f: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<()> {
        self.scan_live_index_keys_in(index, &KeyRange::all(), &mut |ik, pk| {
            f(ik, pk);
            ControlFlow::Continue(())
        })
    }

    /// [`Reader::scan_live_index_keys`] over the entries in `range`, whose
    /// bounds are prefixes of `index_key ++ pk` (as for
    /// [`Transaction::scan_index`]), until `f` breaks.
    #[allow(clippy::type_complexity)] // a plain callback, as `Storage::scan`'s
    pub fn scan_live_index_keys_in(
        &self,
        index: IndexId,
        range: &KeyRange,
        f: &mut dyn FnMut(&[u8], &[u8]) -> ControlFlow<()>,
    ) -> Result<()> {
        let Some(range) = index_range(index, range) else {
            return Ok(());
        };
        if range_is_empty(&range) {
            return Ok(());
        }
        let mut err = None;
        self.txn
            .mgr
            .storage
            .scan_bulk(Keyspace::Index, &range, false, &mut |k, v| {
                let step = decode_index_value(v).and_then(|(end_ts, pk_len)| {
                    Ok(if end_ts == u64::MAX {
                        let (ik, pk) = split_index_key(k, pk_len)?;
                        f(ik, pk)
                    } else {
                        ControlFlow::Continue(())
                    })
                });
                match step {
                    Ok(flow) => flow,
                    Err(e) => {
                        err = Some(e);
                        ControlFlow::Break(())
                    }
                }
            })?;
        err.map_or(Ok(()), Err)
    }

    /// Up to `parts - 1` primary keys (not necessarily stored) that divide
    /// `table`'s stored bytes into `parts` about equal pieces, ascending
    /// (`Storage::split_points`): seek points for a sampled analysis. Empty
    /// when storage cannot tell without reading the table.
    pub fn split_live_keys(&self, table: TableId, parts: usize) -> Result<Vec<Vec<u8>>> {
        let range = rows_range(table, &KeyRange::all());
        let points = self
            .txn
            .mgr
            .storage
            .split_points(Keyspace::Rows, &range, parts)?;
        Ok(points
            .into_iter()
            .filter(|p| range.contains(p))
            .map(|mut p| p.split_off(keys::ID_LEN))
            .collect())
    }

    /// [`Reader::split_live_keys`] for secondary index `index`: the points are
    /// `index_key ++ pk` prefixes, bounds for [`Reader::scan_live_index_keys_in`].
    pub fn split_live_index_keys(&self, index: IndexId, parts: usize) -> Result<Vec<Vec<u8>>> {
        let Some(range) = index_range(index, &KeyRange::all()) else {
            return Ok(Vec::new());
        };
        let prefix = index.to_be_bytes().len();
        let points = self
            .txn
            .mgr
            .storage
            .split_points(Keyspace::Index, &range, parts)?;
        Ok(points
            .into_iter()
            .filter(|p| range.contains(p))
            .map(|mut p| p.split_off(prefix))
            .collect())
    }
}
