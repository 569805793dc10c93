//! The storage side of TEMPORARY tables: their private id range and the
//! sweep that removes what a crash left of them.
//!
//! A temporary table is a table whose definition lives only in its
//! session (the essay is in the session layer's `temporary` module); its
//! rows and index entries are stored like any table's, in the Rows,
//! History and Index keyspaces, under ids taken from a range no published
//! table ever uses:
//!
//! ```text
//!   0x0000_0001 ..= 0x7FFF_FFFF   catalog tables and indexes (Engine::change)
//!   0x8000_0000 ..= 0xFFFF_FFFF   temporary tables and their indexes (TempIds)
//! ```
//!
//! Keys start with the id in big-endian order, so every key of every
//! temporary table sorts at or after the byte `0x80` in each keyspace: one
//! prefix names them all, whatever session made them.
//!
//! # Invariants
//! 1. An id in the temporary range is handed out once per process
//!    ([`TempIds::take`]) and is never written to the Meta keyspace: no
//!    catalog record, so no other session — and no restart — can find it.
//! 2. Nothing survives a restart: [`purge_leftovers`] deletes every key in
//!    the range from Rows, History and Index when the engine opens, before
//!    any session exists (a crash skips the session's own cleanup; this sweep
//!    is what makes that safe).
//! 3. Ids are not reused within a process, so a late write to a dropped
//!    temporary table's id (a transaction that committed after the DROP)
//!    can never become rows of a later table; the session purges each id it
//!    used once more when it ends, and the startup sweep catches the rest.

use canyon_common::{Error, Result};
use canyon_storage::{KeyRange, Keyspace, Storage, WriteBatch};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU32, Ordering};

/// The first id of the temporary range.
pub const TEMP_ID_BASE: u32 = 0x8000_0000;

/// Whether a table or index id belongs to a temporary table.
pub fn is_temporary(id: u32) -> bool {
    id >= TEMP_ID_BASE
}

/// The counter of temporary ids (one per engine; see invariant 1).
#[derive(Debug)]
pub struct TempIds(AtomicU32);

impl Default for TempIds {
    fn default() -> Self {
        TempIds(AtomicU32::new(TEMP_ID_BASE))
    }
}

impl TempIds {
    /// A fresh id of the temporary range; an error once the range (2^31
    /// tables and indexes since the engine opened) is spent.
    pub fn take(&self) -> Result<u32> {
        let id = self.0.fetch_add(1, Ordering::Relaxed);
        if id < TEMP_ID_BASE {
            // Wrapped: keep it wrapped so every later call fails too.
            self.0.store(0, Ordering::Relaxed);
            return Err(Error::Internal("temporary table ids exhausted".into()));
        }
        Ok(id)
    }
}

/// Deletes every key of the temporary range from Rows, History and Index
/// (invariant 2). Run when the engine opens; returns the keys removed.
pub fn purge_leftovers(storage: &dyn Storage) -> Result<usize> {
    const CHUNK: usize = 10_000;
    // Ids 0x8000_0000 and up: every key whose first byte is 0x80 or more.
    let range_top = KeyRange {
        start: std::ops::Bound::Included(vec![0x80]),
        end: std::ops::Bound::Unbounded,
    };
    let mut removed = 0;
    for ks in [Keyspace::Rows, Keyspace::History, Keyspace::Index] {
        loop {
            let mut batch = WriteBatch::new();
            storage.scan(ks, &range_top, false, &mut |k, _| {
                batch.delete(ks, k.to_vec());
                if batch.len() >= CHUNK {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            })?;
            let n = batch.len();
            removed += n;
            if n > 0 {
                storage.write(batch, false)?;
            }
            if n < CHUNK {
                break;
            }
        }
    }
    Ok(removed)
}
