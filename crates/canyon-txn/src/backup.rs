//! Hot backup: a storage checkpoint taken between two commits.
//!
//! # Why a checkpoint is a consistent backup
//!
//! Canyon survives `kill -9` by construction: every state it writes to
//! storage is one a restart accepts, because
//!
//! - a commit is one atomic batch holding its rows, `txn/last_ts`, its
//!   change-log record and the log head (commit rule 1, `changelog.rs`
//!   invariant 1), and commits are written in timestamp order (rule 3);
//! - an XA branch's PREPARE is such a batch too, and [`TxnManager::open`]
//!   takes the prepared branches' locks back (`xa.rs`);
//! - a bulk load writes an intent record before it ingests its files and
//!   deletes it in its commit batch; open removes the keys of any load whose
//!   intent is still there (`bulk.rs`);
//! - everything else (GC, dead-run removal, catalog changes, binary-log
//!   rotations) is written in atomic batches each of which leaves a state a
//!   restart accepts — the crash test (`canyon-server/tests/crash.rs`) kills
//!   the server at random moments to check exactly this.
//!
//! A crash keeps a *prefix* of the storage's write order (the storage
//! contract's prefix durability). [`canyon_storage::Storage::checkpoint`]
//! makes an image of a prefix too: RocksDB's checkpoint cuts every column
//! family at one sequence number (SST files plus the WAL up to that point).
//! So opening a checkpoint is opening the database after a crash at the
//! moment of the checkpoint, and the ordinary recovery at open — `visible =
//! last_ts`, prepared XA branches re-locked, unfinished bulk loads removed,
//! the change log's head read back — turns it into a consistent database.
//! Nothing of what the running server keeps only in memory (replaced
//! versions for its own old snapshots, the row cache, the lock table of
//! live transactions) is needed by a new process: its first snapshot is at
//! `last_ts`, which sees only Rows versions.
//!
//! # Why under the commit mutex
//!
//! Any prefix would be consistent, but a backup must also say *which*
//! commit it ends at: the binary-log position and GTID set from which a
//! point-in-time recovery replays. [`TxnManager::checkpoint`] holds the
//! commit mutex (which orders timestamps, storage writes and log records:
//! rule 3) while it syncs and checkpoints, so the image holds exactly the
//! commits up to `last_written_ts` and the log records before the head it
//! reports. Commits wait meanwhile — for the WAL flush, a memtable flush and
//! the hard links, typically milliseconds to a few hundred: the same short
//! stop MariaDB's `BACKUP STAGE BLOCK_COMMIT` makes. Readers never wait.
//!
//! Written but not yet visible commits (their group sync had not finished)
//! are in the image: the sync here makes them durable, so the backup holds
//! what a crash right after this sync would have kept — they would have
//! been acknowledged moments later.

use crate::{LogHead, Timestamp, TxnManager};
use canyon_common::Result;
use std::path::Path;
use std::sync::atomic::Ordering;

/// Where a checkpoint ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointPoint {
    /// The newest commit in the image (its `txn/last_ts`).
    pub ts: Timestamp,
    /// The change log's head in the image: every record before it, none
    /// after.
    pub head: LogHead,
}

impl TxnManager {
    /// Writes a checkpoint of the storage into the new directory `dir`
    /// holding exactly the commits up to the returned timestamp (see the
    /// module doc). Refused once the manager has failed (rule 7 of
    /// `commit.rs`: storage is then in an unknown state).
    pub fn checkpoint(&self, dir: &Path) -> Result<CheckpointPoint> {
        let _commit = self.commit_mutex.lock();
        if self.failed.load(Ordering::Acquire) {
            return Err(self.failure_error());
        }
        // Under the mutex nothing commits: last_written_ts and the head are
        // those of the newest batch written, and the sync makes every written
        // batch durable before the image is cut.
        self.storage.sync()?;
        let point = CheckpointPoint {
            ts: self.last_written_ts.load(Ordering::Acquire),
            head: self.log_head(),
        };
        self.storage.checkpoint(dir)?;
        Ok(point)
    }
}
