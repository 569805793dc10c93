//! Statement memory: the instance's budget that every large statement's parse
//! reserves from before it allocates, and the per-statement limit (the rules
//! and the estimate are in `crate::parse::limits`). It is the instance's
//! state, shared by every session, so it lives with the instance.

use canyon_common::{Error, Result};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The server-wide budget of statement memory (rule 2 of
/// `crate::parse::limits`) and the
/// per-statement limit. Shared by every session of an engine.
#[derive(Debug)]
pub struct MemoryBudget {
    /// Bytes reserved by statements now running.
    used: AtomicUsize,
    /// `statement_memory_budget`: all statements together.
    budget: usize,
    /// `statement_memory_limit`: one statement.
    limit: usize,
}

impl MemoryBudget {
    /// A budget of `budget` bytes for all statements, `limit` for one.
    pub fn new(budget: usize, limit: usize) -> MemoryBudget {
        MemoryBudget {
            used: AtomicUsize::new(0),
            budget,
            limit,
        }
    }

    /// Reserves `needed` bytes, the memory a statement is estimated to need
    /// (`crate::parse::limits::Shape::memory`), until the returned guard drops. Small statements (under 64 KiB of
    /// estimate) reserve nothing: they touch no shared counter on the hot
    /// path, and all of them together are bounded by the connection count.
    pub fn reserve(&self, needed: usize) -> Result<Reservation<'_>> {
        if needed < 64 << 10 {
            return Ok(Reservation {
                budget: self,
                bytes: 0,
            });
        }
        if needed > self.limit {
            return Err(Error::OutOfMemory {
                needed,
                limit: "statement_memory_limit",
            });
        }
        let mut used = self.used.load(Ordering::Relaxed);
        loop {
            if used.saturating_add(needed) > self.budget {
                return Err(Error::OutOfMemory {
                    needed,
                    limit: "statement_memory_budget",
                });
            }
            match self.used.compare_exchange_weak(
                used,
                used + needed,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    return Ok(Reservation {
                        budget: self,
                        bytes: needed,
                    })
                }
                Err(now) => used = now,
            }
        }
    }

    /// Bytes reserved now (for tests and status).
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }
}

/// Memory reserved from a [`MemoryBudget`], given back on drop.
#[derive(Debug)]
pub struct Reservation<'a> {
    budget: &'a MemoryBudget,
    bytes: usize,
}

impl Reservation<'_> {
    /// The reserved bytes, no longer given back by this guard: the caller
    /// gives them back with [`MemoryBudget::release`]. (Lets a session keep a
    /// large statement's reservation without borrowing its engine, and a
    /// small statement's without touching the engine at all.)
    pub fn into_bytes(self) -> usize {
        let bytes = self.bytes;
        std::mem::forget(self);
        bytes
    }
}

impl MemoryBudget {
    /// Gives back `bytes` taken with [`Reservation::into_bytes`].
    pub fn release(&self, bytes: usize) {
        if bytes > 0 {
            self.used.fetch_sub(bytes, Ordering::Relaxed);
        }
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.budget.used.fetch_sub(self.bytes, Ordering::Relaxed);
        }
    }
}
