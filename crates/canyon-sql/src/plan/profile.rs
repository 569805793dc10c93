//! What EXPLAIN ANALYZE measured: per plan node, how often it ran, the rows
//! it produced and the time it took, as MySQL 8's tree form prints them
//! (`(actual time=FIRST..ALL rows=N loops=L)`).
//!
//! The executor (`crate::exec::select`) writes a [`Profile`] while it runs a
//! SELECT that EXPLAIN ANALYZE asked for, and [`crate::plan::explain`]'s
//! tree form reads it back. The two meet on plan addresses: a query block is
//! named by the address of its [`SelectPlan`] (plans are immutable and the
//! renderer walks the very objects the executor ran, subqueries and derived
//! tables included), a node within it by a [`Slot`].
//!
//! # What the numbers mean (MySQL 8.0 reference manual, 15.8.2 "EXPLAIN
//! Statement", "Obtaining Information with EXPLAIN ANALYZE")
//! - `loops`: how many times the node was started: once per run of its block
//!   for the join and the stages above it, once per row of the steps before
//!   it for a join step's read (the inner side of a nested loop);
//! - `rows`: rows the node produced, averaged over its loops (rounded, as
//!   MySQL 8.0 prints them);
//! - `actual time=FIRST..ALL`: milliseconds from the node's start to its
//!   first row and to its last, averaged over its loops.
//!
//! Canyon's executor pushes rows down a nested loop (each step calls the
//! next for every row it produces) where MySQL's iterators are pulled. A
//! push-based step's wall time includes the work of every step after it, so
//! the executor also measures the time each step spends in its consumer and
//! subtracts it: a step's own time is what it took less what the steps after
//! it took, and a join node's time is the sum of its steps' own times — the
//! time MySQL's pulled iterator would report, which never includes its
//! parent's work. The stages above the join (grouping, sorting, DISTINCT,
//! LIMIT) work on the block's materialised rows, so they all carry the
//! block's run time, with their own row counts.
//!
//! Measuring costs two clock reads per row and step; it happens only for
//! EXPLAIN ANALYZE (the executor's profile is `None` otherwise, one branch
//! per row).

use crate::plan::select::SelectPlan;
use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Duration;

/// A node of a query block's tree, as the executor and the renderer name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Slot {
    /// Step `k`'s read of its source: the rows it bound, per start of the
    /// step (a key lookup, a scan, a probe of a hash table, a pass over
    /// materialised rows).
    Read(usize),
    /// Step `k`'s rows that passed its own conditions.
    Filter(usize),
    /// The join of steps `0..=k`: rows out of step `k`, per run of the
    /// block.
    Join(usize),
    /// Step `k`'s source materialised (a derived table, a set operation, a
    /// table read whole for a hash join): the rows it holds.
    Materialized(usize),
    /// The block as a whole: runs, output rows, time per run.
    Block,
    /// Rows that reached the grouping / select-list stage (out of the join).
    Frames,
    /// Groups formed (GROUP BY or an aggregate over all rows).
    Groups,
    /// Rows left after HAVING (before DISTINCT).
    Having,
    /// Rows left after DISTINCT (before LIMIT).
    Distinct,
}

/// One node's measurements, summed over its loops.
#[derive(Debug, Default, Clone, Copy)]
pub struct Stat {
    /// Times the node started.
    pub loops: u64,
    /// Rows it produced, over all loops.
    pub rows: u64,
    /// Time to the first row, summed over the loops that produced one.
    pub first: Duration,
    /// Loops that produced a row (the divisor of `first`).
    pub firsts: u64,
    /// Time from start to end, summed over loops (for a join step: with the
    /// time spent in its consumer subtracted).
    pub total: Duration,
}

impl Stat {
    /// MySQL's annotation: `(actual time=A..B rows=N loops=L)`, or
    /// `(never executed)`.
    pub fn annotation(&self) -> String {
        if self.loops == 0 {
            return "(never executed)".into();
        }
        let ms = |d: Duration, n: u64| d.as_secs_f64() * 1000.0 / n.max(1) as f64;
        let all = ms(self.total, self.loops);
        // A node that produced nothing reached its end without a first row.
        let first = if self.firsts == 0 {
            all
        } else {
            ms(self.first, self.firsts).min(all)
        };
        let rows = (self.rows as f64 / self.loops as f64).round() as u64;
        format!(
            "(actual time={first:.3}..{all:.3} rows={rows} loops={})",
            self.loops
        )
    }
}

/// The measurements of one statement: by (block address, node).
#[derive(Debug, Default)]
pub struct Profile {
    nodes: RefCell<HashMap<(usize, Slot), Stat>>,
}

/// The key of a block: its plan's address.
pub fn block_key(plan: &SelectPlan) -> usize {
    plan as *const SelectPlan as usize
}

impl Profile {
    /// A node's measurements (zero when it never ran).
    pub fn get(&self, plan: &SelectPlan, slot: Slot) -> Stat {
        self.nodes
            .borrow()
            .get(&(block_key(plan), slot))
            .copied()
            .unwrap_or_default()
    }

    /// Forgets everything measured so far (a locking statement's rounds:
    /// only the round whose result is the answer is shown).
    pub fn clear(&self) {
        self.nodes.borrow_mut().clear();
    }

    /// Updates a node's measurements.
    pub fn with(&self, plan: &SelectPlan, slot: Slot, f: impl FnOnce(&mut Stat)) {
        f(self
            .nodes
            .borrow_mut()
            .entry((block_key(plan), slot))
            .or_default());
    }

    /// Adds one loop of `rows` rows that took `total`, its first row after
    /// `first` (when it had one).
    pub fn record(
        &self,
        plan: &SelectPlan,
        slot: Slot,
        rows: u64,
        first: Option<Duration>,
        total: Duration,
    ) {
        self.with(plan, slot, |s| {
            s.loops += 1;
            s.rows += rows;
            s.total += total;
            if let Some(f) = first {
                s.first += f;
                s.firsts += 1;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotation_averages_over_loops_and_says_never_executed() {
        let s = Stat::default();
        assert_eq!(s.annotation(), "(never executed)");
        let s = Stat {
            loops: 4,
            rows: 10,
            first: Duration::from_micros(200),
            firsts: 2,
            total: Duration::from_millis(4),
        };
        // 10 rows over 4 loops round to 3 (2.5 rounds away from zero); the
        // first row took 0.1 ms on average over the 2 loops that had one.
        assert_eq!(s.annotation(), "(actual time=0.100..1.000 rows=3 loops=4)");
        let s = Stat {
            loops: 1,
            rows: 0,
            first: Duration::ZERO,
            firsts: 0,
            total: Duration::from_micros(50),
        };
        assert_eq!(s.annotation(), "(actual time=0.050..0.050 rows=0 loops=1)");
    }
}
