//! Back-filling a new secondary index from the rows that exist (the last step of
//! the SQL layer's online ADD INDEX; the protocol and its invariants are in
//! canyon-sql's `alter.rs`).
//!
//! The SQL layer publishes the index as *write-only* first, so every commit from
//! then on maintains its entries, and waits until no transaction that could
//! have written without it is still running. What is left is the rows whose
//! newest version was written before that point: each needs a live entry
//! `(index, key(row), pk) -> u64::MAX`.
//!
//! [`TxnManager::backfill_index`] reads a chunk of newest versions (Rows) without
//! any lock, computes their keys, then — **under the commit mutex** — re-reads
//! each Rows key and writes the entry of the version that is there *now*: the
//! one read (the common case) or, when a commit replaced it in between, the
//! replacement's (recomputed). Since every Index write of a commit happens
//! under the same mutex, a commit after the back-fill's write sees the entry as
//! part of the committed version and ends it as usual; a commit before it has
//! already written its own entries, which the back-fill re-writes identically.
//! So after a pass over the whole table, the invariant of `mvcc.rs` holds for
//! the newest versions: each live row has a live entry under its key.
//! Old versions get no entries: a snapshot older than the back-fill must not
//! read the index (the SQL layer waits for such snapshots to end before making
//! the index public).
//!
//! Entries are written without a sync; the SQL layer's next catalog write is
//! synced and, on RocksDB, one WAL covers both.

use crate::keys::{self, decode_version, index_entry_key, index_value, rows_range};
use crate::{IndexId, TableId, TxnManager};
use canyon_common::Result;
use canyon_storage::{KeyRange, Keyspace, WriteBatch};
use std::ops::{Bound, ControlFlow};
use std::sync::atomic::Ordering;

/// A row read by a back-fill chunk: Rows key, raw value, computed index key
/// (`None` for a tombstone).
type Seen = (Vec<u8>, Vec<u8>, Option<Vec<Vec<u8>>>);

impl TxnManager {
    /// Writes live entries of `index` for up to `limit` rows of `table` after pk
    /// `after` (from the start when `None`), in pk order; `key_of` turns a stored
    /// row into its index keys (one for an ordered index; one per word for a
    /// FULLTEXT index, none for a row without words). Returns the last pk visited, or `None` when there
    /// was nothing left. See the module doc for why this is safe against
    /// concurrent commits (which must already maintain `index`).
    pub fn backfill_index(
        &self,
        table: TableId,
        index: IndexId,
        after: Option<&[u8]>,
        limit: usize,
        key_of: &mut dyn FnMut(&[u8]) -> Result<Vec<Vec<u8>>>,
    ) -> Result<Option<Vec<u8>>> {
        let range = rows_range(
            table,
            &KeyRange {
                start: after.map_or(Bound::Unbounded, |pk| Bound::Excluded(pk.to_vec())),
                end: Bound::Unbounded,
            },
        );
        let mut seen: Vec<Seen> = Vec::new();
        let mut err = None;
        self.storage
            .scan(Keyspace::Rows, &range, false, &mut |k, v| {
                let key = decode_version(v).and_then(|ver| ver.row.map(&mut *key_of).transpose());
                match key {
                    Ok(key) => seen.push((k.to_vec(), v.to_vec(), key)),
                    Err(e) => {
                        err = Some(e);
                        return ControlFlow::Break(());
                    }
                }
                if seen.len() >= limit {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            })?;
        if let Some(e) = err {
            return Err(e);
        }
        let Some(last) = seen.last().map(|s| s.0[keys::ID_LEN..].to_vec()) else {
            return Ok(None);
        };
        let _commit = self.commit_mutex.lock();
        if self.failed.load(Ordering::Acquire) {
            return Err(canyon_common::Error::Io(
                "commits are refused after an earlier storage failure".into(),
            ));
        }
        let mut batch = WriteBatch::new();
        for (rk, raw, key) in seen {
            let now = self.storage.get(Keyspace::Rows, &rk)?;
            let key = if now.as_deref() == Some(raw.as_slice()) {
                key
            } else {
                // A commit replaced the version since the scan: index the
                // replacement (its commit maintained the index too, so this
                // only re-writes what it wrote).
                match now {
                    Some(v) => decode_version(&v)?.row.map(&mut *key_of).transpose()?,
                    None => None,
                }
            };
            let pk = &rk[keys::ID_LEN..];
            for k in key.into_iter().flatten() {
                batch.put(
                    Keyspace::Index,
                    index_entry_key(index, &k, pk),
                    index_value(u64::MAX, pk.len())?,
                );
            }
        }
        if !batch.is_empty() {
            self.storage.write(batch, false)?;
        }
        Ok(Some(last))
    }
}
