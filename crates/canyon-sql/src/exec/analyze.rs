//! The executor's side of EXPLAIN ANALYZE: clocks and counters that
//! `crate::exec::select` runs while a [`Profile`] is being filled (see
//! [`crate::plan::profile`] for what the numbers mean and why a step's own
//! time is its wall time less the time spent in its consumer).

use crate::plan::profile::{Profile, Slot};
use crate::plan::select::SelectPlan;
use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

/// One run of a query block's join: per step, its own time, the rows out of
/// the join up to it and when the first of them came.
pub(super) struct RunClock<'p> {
    profile: &'p Profile,
    plan: &'p SelectPlan,
    start: Instant,
    steps: RefCell<Vec<StepRun>>,
}

#[derive(Default, Clone, Copy)]
struct StepRun {
    own: Duration,
    rows: u64,
    first: Option<Duration>,
}

impl<'p> RunClock<'p> {
    pub(super) fn new(profile: &'p Profile, plan: &'p SelectPlan) -> RunClock<'p> {
        RunClock {
            profile,
            plan,
            start: Instant::now(),
            steps: RefCell::new(vec![StepRun::default(); plan.steps.len()]),
        }
    }

    /// A row out of the join of steps `0..=k`.
    pub(super) fn joined(&self, k: usize) {
        if let Some(s) = self.steps.borrow_mut().get_mut(k) {
            s.rows += 1;
            if s.first.is_none() {
                s.first = Some(self.start.elapsed());
            }
        }
    }

    /// Records the run: the join of steps `0..=k` took the own times of those
    /// steps (each step's consumer subtracted, see the profile's module doc).
    pub(super) fn finish(self) {
        let mut total = Duration::ZERO;
        for (k, s) in self.steps.into_inner().into_iter().enumerate() {
            total += s.own;
            self.profile
                .record(self.plan, Slot::Join(k), s.rows, s.first, total);
        }
    }
}

/// One start of a step's read: rows bound and passed, and the time spent in
/// the step's consumer (subtracted from its own time).
pub(super) struct StepTimer {
    start: Instant,
    downstream: Cell<Duration>,
    bound: Cell<u64>,
    passed: Cell<u64>,
    first_bound: Cell<Option<Duration>>,
    first_passed: Cell<Option<Duration>>,
}

impl StepTimer {
    pub(super) fn start() -> StepTimer {
        StepTimer {
            start: Instant::now(),
            downstream: Cell::new(Duration::ZERO),
            bound: Cell::new(0),
            passed: Cell::new(0),
            first_bound: Cell::new(None),
            first_passed: Cell::new(None),
        }
    }

    /// A candidate row bound into the frame.
    pub(super) fn bound(&self) {
        self.bound.set(self.bound.get() + 1);
        if self.first_bound.get().is_none() {
            self.first_bound.set(Some(self.own()));
        }
    }

    /// The bound row passed the step's conditions.
    pub(super) fn passed(&self) {
        self.passed.set(self.passed.get() + 1);
        if self.first_passed.get().is_none() {
            self.first_passed.set(Some(self.own()));
        }
    }

    /// Runs the step's consumer, its time kept apart.
    pub(super) fn downstream<T>(&self, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let r = f();
        self.downstream.set(self.downstream.get() + t.elapsed());
        r
    }

    fn own(&self) -> Duration {
        self.start.elapsed().saturating_sub(self.downstream.get())
    }

    /// Records this start of step `k` (its read and its filter) and adds its
    /// own time to the run.
    pub(super) fn finish(self, clock: &RunClock<'_>, k: usize) {
        let own = self.own();
        let p = clock.profile;
        p.record(
            clock.plan,
            Slot::Read(k),
            self.bound.get(),
            self.first_bound.get(),
            own,
        );
        p.record(
            clock.plan,
            Slot::Filter(k),
            self.passed.get(),
            self.first_passed.get(),
            own,
        );
        if let Some(s) = clock.steps.borrow_mut().get_mut(k) {
            s.own += own;
        }
    }
}

/// Runs one execution of a block and records it (`Slot::Block`: the rows it
/// returned and its time; its rows are materialised, so the first row comes
/// when the last does).
pub(super) fn block<T>(
    profile: &Profile,
    plan: &SelectPlan,
    run: impl FnOnce() -> canyon_common::Result<Vec<T>>,
) -> canyon_common::Result<Vec<T>> {
    let start = Instant::now();
    let r = run();
    let took = start.elapsed();
    if let Ok(rows) = &r {
        let first = (!rows.is_empty()).then_some(took);
        profile.record(plan, Slot::Block, rows.len() as u64, first, took);
    }
    r
}

/// Records how many rows a stage above the join (grouping, HAVING,
/// DISTINCT) kept in one run of its block.
pub(super) fn stage(profile: Option<&Profile>, plan: &SelectPlan, slot: Slot, rows: usize) {
    if let Some(p) = profile {
        p.with(plan, slot, |s| {
            s.loops += 1;
            s.rows += rows as u64;
        });
    }
}

/// Records one materialisation of step `k`'s source.
pub(super) fn materialized(
    profile: Option<&Profile>,
    plan: &SelectPlan,
    k: usize,
    rows: usize,
    took: Duration,
) {
    if let Some(p) = profile {
        let first = (rows > 0).then_some(took);
        p.record(plan, Slot::Materialized(k), rows as u64, first, took);
    }
}
