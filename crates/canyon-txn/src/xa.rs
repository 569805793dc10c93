//! XA: transaction branches that a coordinator outside Canyon commits in two
//! phases (`XA START ... XA END; XA PREPARE; XA COMMIT`).
//!
//! # The idea
//!
//! A branch is an ordinary [`Transaction`] until XA PREPARE. Preparing
//! promises the coordinator that a later XA COMMIT will succeed, whatever
//! happens in between (the client disconnects, the server is killed). Canyon
//! keeps that promise with the two things a commit needs — the write buffer,
//! and the row locks that make it applicable (commit rule 2) — made durable
//! and detached from the session:
//!
//! ```text
//!  XA PREPARE   one batch at a fresh timestamp: Meta  txn/xa/<xid> -> write set + lock keys
//!               (no row change; group-committed and synced like any commit);
//!               the locks stay held under the branch's TxnId, now owned by the registry
//!  disconnect   the session's claim drops: the branch stays, "detached"
//!  kill -9      open() reads every txn/xa/ record back and takes its locks again
//!               before the manager is returned (so before any client is served)
//!  XA COMMIT    one batch: the write set's Rows / Index / History changes at a fresh
//!               commit timestamp + the deletion of txn/xa/<xid>; then the locks go
//!  XA ROLLBACK  one batch deleting txn/xa/<xid>; then the locks go
//! ```
//!
//! # Invariants
//!
//! 1. **Exactly once.** The prepared record and the write set's changes are
//!    never both absent before the branch ends nor both present after: the
//!    commit batch applies the writes *and* deletes the record atomically
//!    (rule 1 of `commit.rs`), so a crash leaves either the prepared branch
//!    (recovered, committable again) or the committed rows without it. A
//!    branch being finished is marked `Finishing` in the registry, so two
//!    sessions cannot both commit it.
//! 2. **Locks held continuously** from before PREPARE to the end of COMMIT's
//!    write: the transaction's lock set moves to the registry without being
//!    released; at start-up every recovered branch takes its locks before
//!    [`crate::TxnManager::open`] returns. Hence the Rows version each
//!    buffered write replaces is still the one in storage when XA COMMIT
//!    builds its batch — rule 2 of `commit.rs`, which lets the batch be built
//!    the ordinary way (`TxnManager::prepare`). Values the branch remembered
//!    from its locked reads (`Replaced`) are not persisted: after a restart
//!    they are read again, under the same locks, which is equally valid.
//! 3. **A fresh timestamp.** XA COMMIT stamps the writes with `next_ts + 1`
//!    under the commit mutex, like any commit: above every snapshot taken so
//!    far, so no reader sees the branch's rows before the commit, and every
//!    reader that began after it sees all of them. (The prepare batch also
//!    spends a timestamp, for `txn/last_ts`; it changes no row.)
//! 4. **Durable before acknowledged.** XA PREPARE, COMMIT and ROLLBACK return
//!    only once their batch is synced (`make_durable`), grouped with other
//!    commits by the leader/follower group commit.
//!
//! # What a prepared branch does not keep
//!
//! Its snapshot (a prepared branch reads nothing more), its statement undo
//! log and savepoints. Reads by others are not blocked: a snapshot read of a
//! row the branch wrote sees the committed version before XA COMMIT, as in
//! InnoDB. A bulk load (`bulk.rs`) cannot be prepared.
//!
//! # States (MySQL's names) and who holds the branch
//!
//! | state | the transaction | registry entry |
//! |---|---|---|
//! | ACTIVE, IDLE | the session's [`Transaction`] | `Started` (the xid is taken: XAER_DUPID) |
//! | PREPARED, attached | the registry | `Prepared { attached: true }` |
//! | PREPARED, detached | the registry | `Prepared { attached: false }` |
//! | finishing | the finisher | `Finishing` |
//!
//! The session's side of the state machine (what each XA statement may do in
//! each state) is canyon-sql's (`session/xa.rs`); this module only holds
//! branches and makes them durable. An attached prepared branch is finished
//! only through its [`XaClaim`]; a detached one by any session
//! ([`crate::TxnManager::xa_finish_detached`]), as MySQL lets any session
//! finish a branch whose session has gone.
//!
//! The byte layout of the record is in `docs/format.md` ("`meta`: prepared XA
//! branches").

use crate::changelog::LogEntry;
use crate::commit::Prepared;
use crate::keys::ID_LEN;
use crate::lock::{LockMode, Queued};
use crate::mvcc::{Buffered, HeldLocks, Replaced, Transaction};
use crate::range_lock::Registration;
use crate::{run_blocking, IndexId, TxnId, TxnManager};
use canyon_common::{Error, Result};
use canyon_storage::{KeyRange, Keyspace};
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::ops::ControlFlow;
use std::sync::Arc;

/// The Meta key prefix of prepared XA branches.
pub const XA_PREFIX: &[u8] = b"txn/xa/";

/// Most bytes of a gtrid or a bqual (MySQL's MAXGTRIDSIZE, MAXBQUALSIZE).
pub const XID_PART_MAX: usize = 64;

/// Version byte of the prepared record's value.
const RECORD_VERSION: u8 = 1;

/// An XA transaction identifier: `gtrid[, bqual[, formatID]]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Xid {
    /// The format identifier (1 unless given).
    pub format_id: i64,
    /// The global transaction identifier, 1 to 64 bytes.
    pub gtrid: Vec<u8>,
    /// The branch qualifier, 0 to 64 bytes.
    pub bqual: Vec<u8>,
}

impl Xid {
    /// The Meta key of this branch's prepared record:
    /// `txn/xa/ ++ format_id i64 BE ++ len u8 ++ gtrid ++ len u8 ++ bqual`.
    pub(crate) fn record_key(&self) -> Vec<u8> {
        let mut k = Vec::with_capacity(XA_PREFIX.len() + 10 + self.gtrid.len() + self.bqual.len());
        k.extend_from_slice(XA_PREFIX);
        k.extend_from_slice(&self.format_id.to_be_bytes());
        k.push(self.gtrid.len() as u8);
        k.extend_from_slice(&self.gtrid);
        k.push(self.bqual.len() as u8);
        k.extend_from_slice(&self.bqual);
        k
    }

    /// The xid of a record key; `Error::Corrupt` when malformed.
    fn from_record_key(key: &[u8]) -> Result<Xid> {
        let corrupt = || Error::Corrupt(format!("malformed XA record key of {} bytes", key.len()));
        let mut r = Reader(key.strip_prefix(XA_PREFIX).ok_or_else(corrupt)?);
        let format_id = i64::from_be_bytes(
            r.take(8)
                .ok_or_else(corrupt)?
                .try_into()
                .map_err(|_| corrupt())?,
        );
        let g = usize::from(*r.take(1).ok_or_else(corrupt)?.first().ok_or_else(corrupt)?);
        let gtrid = r.take(g).ok_or_else(corrupt)?.to_vec();
        let b = usize::from(*r.take(1).ok_or_else(corrupt)?.first().ok_or_else(corrupt)?);
        let bqual = r.take(b).ok_or_else(corrupt)?.to_vec();
        if !r.0.is_empty() || gtrid.len() > XID_PART_MAX || bqual.len() > XID_PART_MAX {
            return Err(corrupt());
        }
        Ok(Xid {
            format_id,
            gtrid,
            bqual,
        })
    }
}

/// The XA errors, with MySQL's numbers, SQLSTATEs and messages
/// (`share/errmsg-utf8.txt`; the RMFAIL text has MySQL's two spaces).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XaError {
    /// 1397 ER_XAER_NOTA: the xid names no branch this session may act on.
    Nota,
    /// 1398 ER_XAER_INVAL: JOIN, SUSPEND and other unsupported options.
    Inval,
    /// 1399 ER_XAER_RMFAIL: the statement is not allowed in this state
    /// (`ACTIVE`, `IDLE`, `PREPARED`, `ROLLBACK ONLY`, `NON-EXISTING`).
    RmFail(&'static str),
    /// 1400 ER_XAER_OUTSIDE: XA START inside a normal transaction.
    Outside,
    /// 1401 ER_XAER_RMERR.
    RmErr,
    /// 1402 ER_XA_RBROLLBACK: the branch was rolled back (XA PREPARE failed).
    RbRollback,
    /// 1440 ER_XAER_DUPID: the xid is in use.
    DupId,
    /// 1614 ER_XA_RBDEADLOCK: the branch was rolled back as a deadlock victim.
    RbDeadlock,
}

impl From<XaError> for Error {
    fn from(e: XaError) -> Error {
        let (code, sqlstate, message): (u16, &[u8; 5], String) = match e {
            XaError::Nota => (1397, b"XAE04", "XAER_NOTA: Unknown XID".into()),
            XaError::Inval => (
                1398,
                b"XAE05",
                "XAER_INVAL: Invalid arguments (or unsupported command)".into(),
            ),
            XaError::RmFail(state) => (
                1399,
                b"XAE07",
                format!(
                    "XAER_RMFAIL: The command cannot be executed when global transaction is in the  {state} state"
                ),
            ),
            XaError::Outside => (
                1400,
                b"XAE09",
                "XAER_OUTSIDE: Some work is done outside global transaction".into(),
            ),
            XaError::RmErr => (
                1401,
                b"XAE03",
                "XAER_RMERR: Fatal error occurred in the transaction branch - check your data for consistency".into(),
            ),
            XaError::RbRollback => (
                1402,
                b"XA100",
                "XA_RBROLLBACK: Transaction branch was rolled back".into(),
            ),
            XaError::DupId => (1440, b"XAE08", "XAER_DUPID: The XID already exists".into()),
            XaError::RbDeadlock => (
                1614,
                b"XA102",
                "XA_RBDEADLOCK: Transaction branch was rolled back: deadlock was detected".into(),
            ),
        };
        Error::Sql {
            code,
            sqlstate: *sqlstate,
            message,
        }
    }
}

/// A prepared branch's write set and locks, owned by the registry.
#[derive(Debug)]
struct PreparedBranch {
    /// The lock owner: the transaction's id (or a fresh one after recovery).
    id: TxnId,
    held: HeldLocks,
    /// Its range locks and insert intentions (range_lock.rs): kept while
    /// the process lives; a restart recovers the row locks only.
    gaps: Vec<Registration>,
    writes: BTreeMap<Vec<u8>, Buffered>,
    /// The change-log record its commit appends (changelog.rs).
    log: Option<LogEntry>,
}

#[derive(Debug)]
enum Branch {
    /// XA START'ed: ACTIVE or IDLE in its session.
    Started,
    /// PREPARED; `attached` while the preparing session's claim lives.
    Prepared {
        branch: Box<PreparedBranch>,
        attached: bool,
    },
    /// An XA COMMIT or ROLLBACK is writing its batch.
    Finishing,
}

/// Every xid in use, by state (see the table in the module doc).
#[derive(Debug, Default)]
pub(crate) struct XaRegistry {
    branches: Mutex<HashMap<Xid, Branch>>,
}

/// A session's hold on an xid, from XA START to the end of the branch.
/// Dropping it (the session ends) frees a started xid — the caller has rolled
/// its transaction back — and detaches a prepared branch, which stays.
#[derive(Debug)]
pub struct XaClaim {
    mgr: Arc<TxnManager>,
    xid: Xid,
    /// Finished (committed or rolled back): the entry is gone.
    done: bool,
}

impl TxnManager {
    /// XA START: claims `xid` for a session; [`XaError::DupId`] when a
    /// branch with this xid exists (started, prepared or finishing).
    pub fn xa_start(self: &Arc<Self>, xid: Xid) -> Result<XaClaim> {
        let mut b = self.xa.branches.lock();
        if b.contains_key(&xid) {
            return Err(XaError::DupId.into());
        }
        b.insert(xid.clone(), Branch::Started);
        Ok(XaClaim {
            mgr: Arc::clone(self),
            xid,
            done: false,
        })
    }

    /// XA RECOVER: the prepared branches (attached or not), in xid order.
    pub fn xa_recover(&self) -> Vec<Xid> {
        let b = self.xa.branches.lock();
        let mut xids: Vec<Xid> = b
            .iter()
            .filter(|(_, br)| matches!(br, Branch::Prepared { .. }))
            .map(|(x, _)| x.clone())
            .collect();
        xids.sort();
        xids
    }

    /// Whether a detached prepared branch has this xid.
    pub fn xa_is_detached(&self, xid: &Xid) -> bool {
        matches!(
            self.xa.branches.lock().get(xid),
            Some(Branch::Prepared {
                attached: false,
                ..
            })
        )
    }

    /// Whether a prepared branch (attached or not) holds a write to `table`.
    /// DDL on the table waits while one does (MySQL's prepared branch keeps
    /// its metadata locks): the branch's commit cannot fail, and it writes
    /// rows encoded for the table as it is now.
    pub fn xa_prepared_writes_in(&self, table: crate::TableId) -> bool {
        let prefix = table.to_be_bytes();
        self.xa.branches.lock().values().any(|b| match b {
            Branch::Prepared { branch, .. } => branch
                .writes
                .range(prefix.to_vec()..)
                .next()
                .is_some_and(|(k, _)| k.starts_with(&prefix)),
            Branch::Started | Branch::Finishing => false,
        })
    }

    /// XA COMMIT (`commit`) or XA ROLLBACK of a detached prepared branch,
    /// from any session; [`XaError::Nota`] when there is none with this xid
    /// (a branch still attached to its session is not another session's).
    pub fn xa_finish_detached(&self, xid: &Xid, commit: bool) -> Result<()> {
        self.finish_prepared(xid, false, commit)
    }

    /// Takes the prepared branch out of the registry (marking it finishing),
    /// writes its commit or rollback batch, releases its locks, waits until
    /// durable.
    fn finish_prepared(&self, xid: &Xid, attached: bool, commit: bool) -> Result<()> {
        let mut branch = {
            let mut b = self.xa.branches.lock();
            match b.get(xid) {
                Some(Branch::Prepared { attached: a, .. }) if *a == attached => {}
                _ => return Err(XaError::Nota.into()),
            }
            let Some(Branch::Prepared { branch, .. }) = b.insert(xid.clone(), Branch::Finishing)
            else {
                unreachable!("the entry was Prepared under the same lock");
            };
            branch
        };
        let written = (|| {
            let mut batch = if commit {
                let mut p = self.prepare(branch.writes.clone())?;
                p.log = branch.log.clone();
                p
            } else {
                Prepared::default()
            };
            batch.meta.push((xid.record_key(), None));
            self.write_commit(batch)
        })();
        let ts = match written {
            Ok(ts) => ts,
            Err(e) => {
                // Nothing was applied (or the manager refuses every later
                // commit): the branch stays prepared, its locks held.
                self.xa
                    .branches
                    .lock()
                    .insert(xid.clone(), Branch::Prepared { branch, attached });
                return Err(e);
            }
        };
        // Rule 6 of commit.rs: written, so the locks may go.
        self.ranges
            .release(branch.id, std::mem::take(&mut branch.gaps));
        for key in branch.held.keys() {
            self.locks.release(branch.id, key);
        }
        self.xa.branches.lock().remove(xid);
        let mut r = Ok(());
        run_blocking(self.config.blocking_hook, &mut || r = self.make_durable(ts));
        r
    }

    /// Start-up: every prepared record back into the registry, detached,
    /// with its locks taken (invariant 2). Runs before the manager is
    /// returned, so before any other transaction exists.
    pub(crate) fn recover_xa(&self) -> Result<()> {
        let mut records = Vec::new();
        self.storage.scan(
            Keyspace::Meta,
            &KeyRange::prefix(XA_PREFIX),
            false,
            &mut |k, v| {
                records.push((k.to_vec(), v.to_vec()));
                ControlFlow::Continue(())
            },
        )?;
        let mut b = self.xa.branches.lock();
        for (k, v) in records {
            let xid = Xid::from_record_key(&k)?;
            let (held, writes, log) = decode_record(&v)?;
            let id = self
                .next_txn_id
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            for key in held.keys() {
                match self.locks.enqueue(id, key, LockMode::Exclusive)? {
                    Queued::Granted => {}
                    Queued::Waiting(w) => {
                        self.locks.withdraw(id, key, &w);
                        return Err(Error::Corrupt(
                            "two prepared XA branches hold the same row lock".into(),
                        ));
                    }
                }
            }
            tracing::warn!(
                gtrid = %String::from_utf8_lossy(&xid.gtrid),
                writes = writes.len(),
                locks = held.len(),
                "recovered a prepared XA branch: XA COMMIT or XA ROLLBACK it"
            );
            b.insert(
                xid,
                Branch::Prepared {
                    branch: Box::new(PreparedBranch {
                        id,
                        held,
                        gaps: Vec::new(),
                        writes,
                        log,
                    }),
                    attached: false,
                },
            );
        }
        Ok(())
    }
}

impl XaClaim {
    /// The claimed xid.
    pub fn xid(&self) -> &Xid {
        &self.xid
    }

    /// XA PREPARE: makes `txn`'s write set and lock set durable in one
    /// synced batch and moves them to the registry (the branch is then
    /// PREPARED, attached to this claim). On error the transaction is rolled
    /// back and the xid stays claimed as started; the caller ends the branch.
    pub fn prepare(&self, mut txn: Transaction) -> Result<()> {
        txn.check_active()?;
        if txn.bulk.is_some() {
            return Err(Error::Unsupported(
                "XA PREPARE of a transaction that bulk loaded an empty table".into(),
            ));
        }
        let id = txn.ensure_id();
        let mgr = &self.mgr;
        let writes = std::mem::take(&mut txn.writes);
        let held = std::mem::take(&mut txn.held);
        let gaps = std::mem::take(&mut txn.gaps);
        let log = txn.log.take();
        let record = encode_record(&held, &writes, log.as_ref())?;
        let mut batch = Prepared::default();
        batch.meta.push((self.xid.record_key(), Some(record)));
        let ts = match mgr.write_commit(batch) {
            Ok(ts) => ts,
            Err(e) => {
                // Released by the drop (rollback).
                txn.held = held;
                txn.gaps = gaps;
                return Err(e);
            }
        };
        let mut r = Ok(());
        run_blocking(mgr.config.blocking_hook, &mut || r = mgr.make_durable(ts));
        if let Err(e) = r {
            txn.held = held;
            txn.gaps = gaps;
            return Err(e);
        }
        // The transaction ends without its locks, which now belong to the
        // branch (invariant 2): dropping it releases nothing.
        drop(txn);
        let mut b = mgr.xa.branches.lock();
        debug_assert!(matches!(b.get(&self.xid), Some(Branch::Started)));
        b.insert(
            self.xid.clone(),
            Branch::Prepared {
                branch: Box::new(PreparedBranch {
                    id,
                    held,
                    gaps,
                    writes,
                    log,
                }),
                attached: true,
            },
        );
        Ok(())
    }

    /// XA COMMIT (`commit`) or XA ROLLBACK of this claim's prepared branch.
    /// On error the branch stays prepared (and claimed).
    pub fn finish_prepared(&mut self, commit: bool) -> Result<()> {
        self.mgr.finish_prepared(&self.xid, true, commit)?;
        self.done = true;
        Ok(())
    }
}

impl Drop for XaClaim {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let mut b = self.mgr.xa.branches.lock();
        match b.get_mut(&self.xid) {
            Some(Branch::Started) => {
                b.remove(&self.xid);
            }
            Some(Branch::Prepared { attached, .. }) => *attached = false,
            Some(Branch::Finishing) | None => {}
        }
    }
}

/// A little cursor over a record's bytes.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
}

fn put_u32(out: &mut Vec<u8>, n: usize) -> Result<()> {
    let n = u32::try_from(n)
        .map_err(|_| Error::InvalidArgument("an XA branch too large to prepare".into()))?;
    out.extend_from_slice(&n.to_be_bytes());
    Ok(())
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) -> Result<()> {
    put_u32(out, b.len())?;
    out.extend_from_slice(b);
    Ok(())
}

fn put_index_keys(out: &mut Vec<u8>, keys: &[(IndexId, Vec<u8>)]) -> Result<()> {
    put_u32(out, keys.len())?;
    for (ix, k) in keys {
        out.extend_from_slice(&ix.to_be_bytes());
        put_bytes(out, k)?;
    }
    Ok(())
}

/// The prepared record's value (docs/format.md): the locks, the writes, then,
/// when the commit is to be logged, the change-log entry (absent in records
/// written before the change log existed, so optional at the end).
fn encode_record(
    held: &HeldLocks,
    writes: &BTreeMap<Vec<u8>, Buffered>,
    log: Option<&LogEntry>,
) -> Result<Vec<u8>> {
    let mut out = vec![RECORD_VERSION];
    // The exclusive locks: a restart gives back the locks on the rows the
    // branch writes, as InnoDB recovers a prepared transaction's X locks.
    let mut locks: Vec<&Vec<u8>> = held
        .iter()
        .filter(|(_, m)| **m == LockMode::Exclusive)
        .map(|(k, _)| k)
        .collect();
    put_u32(&mut out, locks.len())?;
    locks.sort();
    for k in locks {
        put_bytes(&mut out, k)?;
    }
    put_u32(&mut out, writes.len())?;
    for (rk, b) in writes {
        put_bytes(&mut out, rk)?;
        match &b.row {
            Some(row) => {
                out.push(1);
                put_bytes(&mut out, row)?;
            }
            None => out.push(0),
        }
        put_index_keys(&mut out, &b.committed_index_keys)?;
        put_index_keys(&mut out, &b.new_index_keys)?;
    }
    if let Some(e) = log {
        out.push(u8::from(e.counted));
        out.extend_from_slice(&e.len.to_be_bytes());
        put_bytes(&mut out, &e.payload)?;
    }
    Ok(out)
}

type Decoded = (HeldLocks, BTreeMap<Vec<u8>, Buffered>, Option<LogEntry>);

fn decode_record(v: &[u8]) -> Result<Decoded> {
    decode_record_inner(v)
        .ok_or_else(|| Error::Corrupt(format!("malformed XA prepared record of {} bytes", v.len())))
}

fn decode_index_keys(r: &mut Reader<'_>) -> Option<Vec<(IndexId, Vec<u8>)>> {
    let n = r.u32()?;
    let mut keys = Vec::new();
    for _ in 0..n {
        let ix = r.u32()?;
        keys.push((ix, r.bytes()?.to_vec()));
    }
    Some(keys)
}

fn decode_record_inner(v: &[u8]) -> Option<Decoded> {
    let mut r = Reader(v);
    if r.take(1)? != [RECORD_VERSION] {
        return None;
    }
    let mut held = HeldLocks::new();
    for _ in 0..r.u32()? {
        held.insert(r.bytes()?.to_vec(), LockMode::Exclusive);
    }
    let mut writes = BTreeMap::new();
    for _ in 0..r.u32()? {
        let rk = r.bytes()?.to_vec();
        if rk.len() < ID_LEN {
            return None;
        }
        let row = match r.take(1)? {
            [1] => Some(r.bytes()?.to_vec()),
            [0] => None,
            _ => return None,
        };
        let committed_index_keys = decode_index_keys(&mut r)?;
        let new_index_keys = decode_index_keys(&mut r)?;
        writes.insert(
            rk,
            Buffered {
                row,
                replaced: Replaced::Unknown,
                committed_index_keys,
                new_index_keys,
            },
        );
    }
    let log = if r.0.is_empty() {
        None
    } else {
        let counted = match r.take(1)? {
            [0] => false,
            [1] => true,
            _ => return None,
        };
        let len = u64::from_be_bytes(r.take(8)?.try_into().ok()?);
        let payload = r.bytes()?.to_vec();
        Some(LogEntry {
            payload,
            len,
            counted,
        })
    };
    r.0.is_empty().then_some((held, writes, log))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{IsolationLevel, ReadMode, TxnConfig};
    use canyon_storage::{MemoryStorage, Storage};
    use std::time::Duration;

    fn open(storage: &Arc<MemoryStorage>) -> Arc<TxnManager> {
        TxnManager::open(
            Arc::clone(storage) as Arc<dyn Storage>,
            TxnConfig {
                gc_interval: Duration::ZERO,
                lock_wait_timeout: Duration::from_millis(100),
                ..TxnConfig::default()
            },
        )
        .unwrap()
    }

    fn xid(g: &str) -> Xid {
        Xid {
            format_id: 1,
            gtrid: g.as_bytes().to_vec(),
            bqual: b"b".to_vec(),
        }
    }

    /// Writes row `pk` = `v` of table 1 under its lock, as the SQL layer does.
    fn write(t: &mut Transaction, pk: &[u8], v: &[u8]) {
        let mut lk = b"L".to_vec();
        lk.extend_from_slice(pk);
        t.lock(&lk).unwrap();
        t.get_locked(1, pk).unwrap();
        t.put(1, pk.to_vec(), v.to_vec(), vec![], vec![(7, v.to_vec())]);
    }

    fn read(mgr: &Arc<TxnManager>, pk: &[u8]) -> Option<Vec<u8>> {
        let s = mgr.session();
        let mut t = s.begin(IsolationLevel::RepeatableRead);
        t.get(1, pk, ReadMode::Snapshot).unwrap()
    }

    fn lock_times_out(mgr: &Arc<TxnManager>, pk: &[u8]) -> bool {
        let s = mgr.session();
        let mut t = s.begin(IsolationLevel::RepeatableRead);
        let mut lk = b"L".to_vec();
        lk.extend_from_slice(pk);
        matches!(t.lock(&lk), Err(Error::LockWaitTimeout))
    }

    #[test]
    fn record_round_trips() {
        let x = Xid {
            format_id: -3,
            gtrid: vec![0, 255, 7],
            bqual: vec![],
        };
        assert_eq!(Xid::from_record_key(&x.record_key()).unwrap(), x);
        let mut held = HeldLocks::new();
        held.insert(b"k1".to_vec(), LockMode::Exclusive);
        let mut writes = BTreeMap::new();
        writes.insert(
            vec![0, 0, 0, 1, 9],
            Buffered {
                row: None,
                replaced: Replaced::Absent,
                committed_index_keys: vec![(3, b"old".to_vec())],
                new_index_keys: vec![],
            },
        );
        let rec = encode_record(&held, &writes, None).unwrap();
        let (h, w, log) = decode_record(&rec).unwrap();
        assert_eq!(h, held);
        let mut with_shared = held.clone();
        with_shared.insert(b"k0".to_vec(), LockMode::Shared);
        let rec2 = encode_record(&with_shared, &writes, None).unwrap();
        assert_eq!(
            decode_record(&rec2).unwrap().0,
            held,
            "S locks are not kept"
        );
        assert_eq!(log, None);
        let entry = LogEntry {
            payload: b"events".to_vec(),
            len: 99,
            counted: true,
        };
        let logged = encode_record(&held, &writes, Some(&entry)).unwrap();
        assert_eq!(decode_record(&logged).unwrap().2, Some(entry));
        assert!(decode_record(&logged[..logged.len() - 1]).is_err());
        let b = &w[&vec![0, 0, 0, 1, 9]];
        assert!(b.row.is_none());
        assert_eq!(b.committed_index_keys, vec![(3, b"old".to_vec())]);
        assert!(decode_record(&rec[..rec.len() - 1]).is_err());
    }

    #[test]
    fn duplicate_xid_is_refused_until_the_claim_ends() {
        let storage = Arc::new(MemoryStorage::new());
        let mgr = open(&storage);
        let c = mgr.xa_start(xid("a")).unwrap();
        assert_eq!(
            mgr.xa_start(xid("a")).unwrap_err(),
            Error::from(XaError::DupId)
        );
        drop(c);
        mgr.xa_start(xid("a")).unwrap();
    }

    #[test]
    fn prepared_branch_outlives_its_claim_keeps_locks_and_commits_once() {
        let storage = Arc::new(MemoryStorage::new());
        let mgr = open(&storage);
        let s = mgr.session();
        let claim = mgr.xa_start(xid("t1")).unwrap();
        let mut t = s.begin(IsolationLevel::RepeatableRead);
        write(&mut t, b"1", b"one");
        claim.prepare(t).unwrap();
        assert_eq!(mgr.xa_recover(), vec![xid("t1")]);
        // Attached: another session may not finish it.
        assert_eq!(
            mgr.xa_finish_detached(&xid("t1"), true).unwrap_err(),
            Error::from(XaError::Nota)
        );
        drop(claim); // the client disconnects
        assert_eq!(mgr.xa_recover(), vec![xid("t1")]);
        assert!(
            lock_times_out(&mgr, b"1"),
            "the prepared branch keeps its lock"
        );
        assert_eq!(read(&mgr, b"1"), None, "not visible before XA COMMIT");
        mgr.xa_finish_detached(&xid("t1"), true).unwrap();
        assert_eq!(read(&mgr, b"1").as_deref(), Some(&b"one"[..]));
        assert!(!lock_times_out(&mgr, b"1"), "XA COMMIT released the lock");
        assert!(mgr.xa_recover().is_empty());
        assert_eq!(
            mgr.xa_finish_detached(&xid("t1"), true).unwrap_err(),
            Error::from(XaError::Nota)
        );
    }

    #[test]
    fn prepared_branch_survives_reopen_with_locks_then_rolls_back() {
        let storage = Arc::new(MemoryStorage::new());
        {
            let mgr = open(&storage);
            let s = mgr.session();
            let mut t = s.begin(IsolationLevel::RepeatableRead);
            write(&mut t, b"1", b"old");
            t.commit().unwrap();
            let claim = mgr.xa_start(xid("t2")).unwrap();
            let mut t = s.begin(IsolationLevel::RepeatableRead);
            write(&mut t, b"1", b"new");
            write(&mut t, b"2", b"two");
            claim.prepare(t).unwrap();
            // The process "dies": nothing else is written.
            std::mem::forget(claim);
        }
        let mgr = open(&storage);
        assert_eq!(mgr.xa_recover(), vec![xid("t2")]);
        assert!(lock_times_out(&mgr, b"1"));
        assert!(lock_times_out(&mgr, b"2"));
        assert_eq!(read(&mgr, b"1").as_deref(), Some(&b"old"[..]));
        mgr.xa_finish_detached(&xid("t2"), false).unwrap();
        assert_eq!(read(&mgr, b"1").as_deref(), Some(&b"old"[..]));
        assert_eq!(read(&mgr, b"2"), None);
        assert!(!lock_times_out(&mgr, b"1"));
        drop(mgr);
        let mgr = open(&storage);
        assert!(mgr.xa_recover().is_empty(), "the rollback was durable");
    }

    #[test]
    fn recovered_branch_commits_its_writes_and_index_entries() {
        let storage = Arc::new(MemoryStorage::new());
        {
            let mgr = open(&storage);
            let s = mgr.session();
            let claim = mgr.xa_start(xid("t3")).unwrap();
            let mut t = s.begin(IsolationLevel::RepeatableRead);
            write(&mut t, b"5", b"five");
            claim.prepare(t).unwrap();
            std::mem::forget(claim);
        }
        let mgr = open(&storage);
        let before = mgr.visible_ts();
        mgr.xa_finish_detached(&xid("t3"), true).unwrap();
        assert!(mgr.visible_ts() > before, "committed at a fresh timestamp");
        assert_eq!(read(&mgr, b"5").as_deref(), Some(&b"five"[..]));
        drop(mgr);
        let mgr = open(&storage);
        assert!(mgr.xa_recover().is_empty());
        assert_eq!(read(&mgr, b"5").as_deref(), Some(&b"five"[..]));
    }
}
