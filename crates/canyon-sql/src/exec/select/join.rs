//! The nested-loop join of one query block: each step reads a base table
//! (through an access path or a locking read), a materialised source (a
//! derived table, a CTE, a set operation, hashed on the step's keys when the
//! plan asks for a hash join) or a table function, and calls the next step
//! for each row that passes its filter.

use super::*;
use crate::types::decimal::Decimal;

/// A materialised source: its rows, and a hash table on the step's keys.
pub(super) struct Materialized {
    rows: Vec<Vec<Value>>,
    hash: Option<HashMap<Vec<u8>, Vec<usize>>>,
    /// The collation of each hash key (computed once, used by every probe).
    hash_colls: Vec<Option<crate::types::collation::Collation>>,
}

/// The nested-loop join of one block execution.
pub(super) struct Join<'a, 'q> {
    pub(super) plan: &'a SelectPlan,
    pub(super) q: &'a QueryCtx<'q>,
    /// For EXPLAIN ANALYZE: this run's measurements.
    pub(super) clock: Option<RunClock<'a>>,
}

/// The collation each hash-join key compares under (carried by its probe
/// expression; see `Expr::Collate`).
fn hash_collations(
    step: &crate::plan::select::Step,
) -> Vec<Option<crate::types::collation::Collation>> {
    step.hash_keys
        .iter()
        .map(|(_, e)| crate::expr::collation_of(e))
        .collect()
}

/// The hash key of a row of values; `None` when one is NULL (never equal).
/// Equal values under MySQL comparison within one kind class give equal keys;
/// the step filter re-checks every candidate, so extra matches are harmless.
fn hash_key(vals: &[Value]) -> Option<Vec<u8>> {
    let mut k = Vec::new();
    for v in vals {
        match v {
            Value::Null => return None,
            Value::Int(_) | Value::UInt(_) | Value::Decimal(_) => {
                let d = match v {
                    Value::Int(i) => Decimal::from(*i),
                    Value::UInt(u) => Decimal::from(*u),
                    // -0.00 joins 0: one key for both.
                    Value::Decimal(d) if d.is_zero() => Decimal::ZERO,
                    Value::Decimal(d) => *d,
                    _ => Decimal::ZERO,
                };
                k.push(1);
                k.extend_from_slice(d.normalize().to_string().as_bytes());
            }
            Value::Double(f) => match Decimal::from_f64(*f).filter(|d| d.to_f64() == Some(*f)) {
                Some(d) => {
                    k.push(1);
                    k.extend_from_slice(d.normalize().to_string().as_bytes());
                }
                None => {
                    k.push(2);
                    k.extend_from_slice(&(f + 0.0).to_bits().to_be_bytes());
                }
            },
            Value::Bytes(b) => {
                k.push(3);
                let end = b.iter().rposition(|c| *c != b' ').map_or(0, |p| p + 1);
                k.extend_from_slice(&b[..end]);
            }
            Value::Date(d) => {
                k.push(4);
                k.extend_from_slice(d.and_time(chrono::NaiveTime::MIN).to_string().as_bytes());
            }
            Value::DateTime(d) | Value::Stamp(crate::types::value::Stamp { local: d, .. }) => {
                k.push(4);
                k.extend_from_slice(d.to_string().as_bytes());
            }
            Value::Json(j) => {
                k.push(5);
                k.extend_from_slice(j);
            }
        }
        k.push(0);
    }
    Some(k)
}

impl Join<'_, '_> {
    fn reader(&self) -> Result<Reader<'_>> {
        self.q
            .state
            .reader
            .ok_or_else(|| Error::Internal("a table read without a transaction".into()))
    }

    /// Whether this block locks the rows it reads in a locking statement:
    /// it has a locking clause, or it is materialised for a block that locks.
    fn locks(&self) -> bool {
        self.plan.lock.locks() || self.q.state.inherited_lock.get() > 0
    }

    /// Runs `f` (the materialisation of a derived table or set operation)
    /// with this block's lock passed on to the blocks it runs.
    fn passing_lock<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let pass = self.q.state.locking.is_some() && self.locks();
        let n = &self.q.state.inherited_lock;
        if pass {
            n.set(n.get() + 1);
        }
        let r = f();
        if pass {
            n.set(n.get() - 1);
        }
        r
    }

    /// The reader this block reads `table` with and, when the block locks,
    /// where the lock keys of the rows it reads are recorded.
    fn table_reader(
        &self,
        table: &crate::catalog::Table,
    ) -> Result<(Reader<'_>, Option<Record<'_>>)> {
        match &self.q.state.locking {
            Some(l) if l.all_blocks || self.locks() => {
                check_writable(table)?;
                // The block's own clause; a block locking for another
                // (materialised for it) locks exclusively, and one locking
                // only because of SERIALIZABLE, shared.
                let mode = self.plan.lock.row_mode().unwrap_or(if self.locks() {
                    TxnLockMode::Exclusive
                } else {
                    TxnLockMode::Shared
                });
                let record = Record {
                    keys: l.read,
                    mode,
                    ranges: l.ranges,
                };
                Ok((l.reader, Some(record)))
            }
            None if self.plan.lock.locks() => {
                self.q.state.nested_lock.set(true);
                Err(Error::Internal(
                    "a nested locking read outside locking rounds".into(),
                ))
            }
            _ => Ok((self.reader()?, None)),
        }
    }

    /// The materialised rows of step `k`'s source.
    fn materialized(&self, k: usize, step: &Step, frame: &[Value]) -> Result<Rc<Materialized>> {
        let key = (self.plan as *const SelectPlan as usize, k);
        if let Some(m) = self.q.state.mats.borrow().get(&key) {
            return Ok(m.clone());
        }
        let src = &self.plan.sources[step.source];
        let started = std::time::Instant::now();
        let measured = |rows: &Vec<Vec<Value>>| {
            let p = self.q.state.profile;
            analyze::materialized(p, self.plan, k, rows.len(), started.elapsed());
        };
        let rows = match &src.kind {
            // LATERAL: run again over the sources bound before it; never
            // cached.
            SourceKind::Derived(d) if d.outer_len > 0 => {
                let rows = self.passing_lock(|| run_block(d, self.q, frame))?;
                measured(&rows);
                return Ok(Rc::new(self.materialize(step, rows)));
            }
            SourceKind::Derived(d) => self.passing_lock(|| run_block(d, self.q, &[]))?,
            SourceKind::WorkTable(w) => {
                let rows = self.q.state.work.borrow().get(&w.id).cloned();
                let rows = rows.map(|r| r.as_ref().clone()).unwrap_or_default();
                measured(&rows);
                // Never cached: the next round holds other rows.
                return Ok(Rc::new(self.materialize(step, rows)));
            }
            SourceKind::SetOp(sp) if sp.recursion.is_some() => self.recurse(sp)?,
            SourceKind::SetOp(sp) => {
                let mut operands = Vec::with_capacity(sp.operands.len());
                for o in &sp.operands {
                    operands.push(self.passing_lock(|| run_block(o, self.q, &[]))?);
                }
                sp.combine(operands)
            }
            SourceKind::System(sys) => {
                let pushed = sys.evaluate(&Env {
                    row: frame,
                    aggs: &[],
                    ctx: self.q,
                })?;
                self.q.system_rows(sys.table, &pushed)?
            }
            SourceKind::Table(t) => {
                let mut rows = Vec::new();
                let (ranges, _) = step.access.key_ranges_over(t, frame, self.q)?;
                self.read_ranges(t, step, ranges, src.needed.as_deref(), &mut |row| {
                    rows.push(std::mem::take(row));
                    Ok(true)
                })?;
                rows
            }
        };
        measured(&rows);
        let m = Rc::new(self.materialize(step, rows));
        self.q.state.mats.borrow_mut().insert(key, m.clone());
        Ok(m)
    }

    /// A recursive CTE's rows (see `crate::plan::recursive`): the seed,
    /// then rounds of the recursive blocks over the previous round's new
    /// rows until a round adds none, at most `cte_max_recursion_depth`
    /// rounds (3636). Each round checks for KILL QUERY and
    /// max_execution_time.
    #[inline(never)]
    fn recurse(&self, sp: &crate::plan::setop::SetOpPlan) -> Result<Vec<Vec<Value>>> {
        let rec = sp
            .recursion
            .ok_or_else(|| Error::Internal("a recursion without its plan".into()))?;
        let max = self
            .q
            .sys_var("cte_max_recursion_depth")?
            .to_i64()
            .unwrap_or(1000)
            .max(0) as u64;
        let mut seed = Vec::with_capacity(rec.first_recursive);
        for o in &sp.operands[..rec.first_recursive] {
            seed.push(run_block(o, self.q, &[])?);
        }
        let mut result = sp.combine(seed);
        let mut seen: HashSet<Vec<u8>> = HashSet::new();
        if !sp.all {
            seen.extend(result.iter().map(|r| sp.row_key(r)));
        }
        let mut work = result.clone();
        let mut round = 0u64;
        while !work.is_empty() {
            round += 1;
            if round > max {
                return Err(Error::CteMaxRecursionDepth(round));
            }
            self.q.check_interrupt()?;
            self.q
                .state
                .work
                .borrow_mut()
                .insert(rec.work, Rc::new(std::mem::take(&mut work)));
            let mut new = Vec::new();
            for o in &sp.operands[rec.first_recursive..] {
                new.extend(run_block(o, self.q, &[])?);
            }
            let mut new = sp.convert_rows(new);
            if !sp.all {
                new.retain(|r| seen.insert(sp.row_key(r)));
            }
            result.extend(new.iter().cloned());
            work = new;
        }
        self.q.state.work.borrow_mut().remove(&rec.work);
        Ok(result)
    }

    /// Materialised rows of a step: the rows, and the hash table on its
    /// hash keys when it has some.
    #[inline(never)]
    fn materialize(&self, step: &Step, rows: Vec<Vec<Value>>) -> Materialized {
        let hash_colls = hash_collations(step);
        let colls = &hash_colls;
        let hash = (!step.hash_keys.is_empty()).then(|| {
            let mut h: HashMap<Vec<u8>, Vec<usize>> = HashMap::new();
            for (i, r) in rows.iter().enumerate() {
                let vals: Vec<Value> = step
                    .hash_keys
                    .iter()
                    .map(|(c, _)| r.get(*c).cloned().unwrap_or(Value::Null))
                    .collect();
                if let Some(key) = hash_key(&collated(&vals, colls)) {
                    h.entry(key).or_default().push(i);
                }
            }
            h
        });
        Materialized {
            rows,
            hash,
            hash_colls,
        }
    }

    /// Reads the rows of `table` in `ranges` (through the step's target key),
    /// decoded, each passed to `f` (which may take the vector); `false` when `f`
    /// asked to stop.
    fn read_ranges(
        &self,
        table: &crate::catalog::Table,
        step: &Step,
        ranges: KeyRanges,
        needed: Option<&[bool]>,
        f: &mut dyn FnMut(&mut Vec<Value>) -> Result<bool>,
    ) -> Result<bool> {
        // Rows read, reported once per scan (performance_schema's
        // ROWS_EXAMINED and table I/O: `crate::catalog::perfschema::io`).
        let count = std::cell::Cell::new(0u64);
        let r = self.read_ranges_counted(table, step, ranges, needed, &count, f);
        if count.get() > 0 || step.access.full_scan {
            let joined = !self
                .plan
                .steps
                .first()
                .is_some_and(|s| std::ptr::eq(s, step));
            self.q.note_read(
                &table.def,
                crate::exec::read::io_index(&step.access),
                count.get(),
                joined,
            );
        }
        r
    }

    /// [`Self::read_ranges`], counting the rows read in `count`.
    fn read_ranges_counted(
        &self,
        table: &crate::catalog::Table,
        step: &Step,
        ranges: KeyRanges,
        needed: Option<&[bool]>,
        count: &std::cell::Cell<u64>,
        f: &mut dyn FnMut(&mut Vec<Value>) -> Result<bool>,
    ) -> Result<bool> {
        let (reader, record) = self.table_reader(table)?;
        let read = |pk: &[u8]| {
            count.set(count.get() + 1);
            if let Some(r) = record {
                r.keys.borrow_mut().push((row_lock_key(table, pk), r.mode));
            }
        };
        if let (
            Some(Record {
                ranges: Some(rr), ..
            }),
            KeyRanges::Ranges(list),
        ) = (record, &ranges)
        {
            // The whole of each range, also when the consumer stops early
            // (more than was read: safe, and rare on this path).
            let index = match step.access.target {
                Target::Primary => None,
                Target::Index(i) => Some(table.def.indexes[i].id),
            };
            let mut rr = rr.borrow_mut();
            rr.extend(list.iter().map(|r| (table.def.id, index, r.clone())));
        }
        let mut buf = Vec::new();
        let zone = self.q.time_zone();
        if let Some(m) = &step.fulltext {
            // Only the rows the FULLTEXT index finds for the search's words
            // (in primary-key order); the step's filter ranks each.
            let env = Env {
                row: &[],
                aggs: &[],
                ctx: self.q,
            };
            let against = match crate::expr::eval(&m.against, &env)? {
                Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
                Value::Null => String::new(),
                other => other.to_display(),
            };
            let search = QueryState::fulltext(self.q, m, &against)?;
            for pk in &search.candidates {
                self.q.check_interrupt()?;
                if let Some(bytes) = reader.get(table.def.id, pk)? {
                    read(pk);
                    decode_table_row_columns(table, &bytes, needed, &mut buf)?;
                    localize_row(&mut buf, &zone);
                    if !f(&mut buf)? {
                        return Ok(false);
                    }
                }
            }
            return Ok(true);
        }
        match ranges {
            KeyRanges::Empty => Ok(true),
            KeyRanges::Points(points) => {
                let mut seen = HashSet::new();
                for pk in points {
                    if !seen.insert(pk.clone()) {
                        continue;
                    }
                    self.q.check_interrupt()?;
                    if let Some(bytes) = reader.get(table.def.id, &pk)? {
                        read(&pk);
                        decode_table_row_columns(table, &bytes, needed, &mut buf)?;
                        localize_row(&mut buf, &zone);
                        if !f(&mut buf)? {
                            return Ok(false);
                        }
                    }
                }
                Ok(true)
            }
            KeyRanges::Ranges(list) => {
                let dedup = list.len() > 1;
                let mut seen: HashSet<Vec<u8>> = HashSet::new();
                let mut err = None;
                let mut go = true;
                for range in list {
                    let mut on_row = |pk: &[u8], bytes: &[u8]| -> ControlFlow<()> {
                        if dedup && !seen.insert(pk.to_vec()) {
                            return ControlFlow::Continue(());
                        }
                        read(pk);
                        let r = self
                            .q
                            .check_interrupt()
                            .and_then(|_| decode_table_row_columns(table, bytes, needed, &mut buf))
                            .and_then(|_| {
                                localize_row(&mut buf, &zone);
                                f(&mut buf)
                            });
                        match r {
                            Ok(true) => ControlFlow::Continue(()),
                            Ok(false) => {
                                go = false;
                                ControlFlow::Break(())
                            }
                            Err(e) => {
                                err = Some(e);
                                ControlFlow::Break(())
                            }
                        }
                    };
                    match step.access.target {
                        Target::Primary => reader.scan(table.def.id, &range, false, &mut on_row)?,
                        Target::Index(i) => {
                            crate::exec::check_index_ready(
                                &table.def.indexes[i],
                                reader.read_point(),
                            )?;
                            reader.scan_index(
                                table.def.id,
                                table.def.indexes[i].id,
                                &range,
                                false,
                                &mut |_k, pk, bytes| on_row(pk, bytes),
                            )?
                        }
                    }
                    if let Some(e) = err.take() {
                        return Err(e);
                    }
                    if !go {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
        }
    }

    /// Runs steps `k..end` for the current frame, then `emit`; `false`
    /// when the consumer needs no more rows. A LEFT JOIN step runs its
    /// inner side (steps up to its `group_end`) and NULL-extends it when no
    /// combination of rows got through.
    pub(super) fn step(
        &self,
        k: usize,
        end: usize,
        frame: &mut Vec<Value>,
        emit: &mut dyn FnMut(&mut Vec<Value>) -> Result<bool>,
    ) -> Result<bool> {
        if k >= end {
            return emit(frame);
        }
        let step = &self.plan.steps[k];
        let joined = || {
            if let Some(c) = &self.clock {
                c.joined(k);
            }
        };
        if !step.left {
            return self.read_step(k, frame, &mut |frame| {
                joined();
                self.step(k + 1, end, frame, emit)
            });
        }
        let g = step.group_end;
        let mut matched = false;
        let go = self.read_step(k, frame, &mut |frame| {
            self.step(k + 1, g, frame, &mut |frame| {
                matched = true;
                if let Some(pf) = &step.post_filter {
                    let env = Env {
                        row: frame,
                        aggs: &[],
                        ctx: self.q,
                    };
                    if !eval_predicate(pf, &env)? {
                        return Ok(true);
                    }
                }
                joined();
                self.step(g, end, frame, emit)
            })
        })?;
        if go && !matched {
            for st in &self.plan.steps[k..g] {
                let src = &self.plan.sources[st.source];
                for v in &mut frame[src.offset..src.offset + src.width] {
                    *v = Value::Null;
                }
            }
            if let Some(pf) = &step.post_filter {
                let env = Env {
                    row: frame,
                    aggs: &[],
                    ctx: self.q,
                };
                if !eval_predicate(pf, &env)? {
                    return Ok(true);
                }
            }
            joined();
            return self.step(g, end, frame, emit);
        }
        Ok(go)
    }

    /// Reads step `k`'s candidate rows into the frame, each that passes the
    /// step's filter handed to `next`; `false` when `next` asked to stop.
    fn read_step(
        &self,
        k: usize,
        frame: &mut Vec<Value>,
        next: &mut dyn FnMut(&mut Vec<Value>) -> Result<bool>,
    ) -> Result<bool> {
        let step = &self.plan.steps[k];
        let src = &self.plan.sources[step.source];
        let (off, width) = (src.offset, src.width);
        let mut go = true;
        let timer = self.clock.as_ref().map(|_| StepTimer::start());
        let mut visit = |frame: &mut Vec<Value>| -> Result<bool> {
            // Materialised rows and hash probes loop without reading storage.
            self.q.check_interrupt()?;
            if let Some(t) = &timer {
                t.bound();
            }
            let env = Env {
                row: frame,
                aggs: &[],
                ctx: self.q,
            };
            if let Some(f) = &step.filter {
                if !eval_predicate(f, &env)? {
                    return Ok(true);
                }
            }
            match &timer {
                Some(t) => {
                    t.passed();
                    t.downstream(|| next(frame))
                }
                None => next(frame),
            }
        };
        if step.materialize {
            let m = self.materialized(k, step, frame)?;
            let bind = |frame: &mut Vec<Value>, row: &[Value]| {
                frame[off..off + width].clone_from_slice(row);
            };
            match &m.hash {
                Some(h) => {
                    let env = Env {
                        row: frame,
                        aggs: &[],
                        ctx: self.q,
                    };
                    let probe = step
                        .hash_keys
                        .iter()
                        .map(|(_, e)| eval(e, &env))
                        .collect::<Result<Vec<_>>>()?;
                    let probe = collated(&probe, &m.hash_colls);
                    if let Some(hits) = hash_key(&probe).and_then(|key| h.get(&key)) {
                        for &i in hits {
                            bind(frame, &m.rows[i]);
                            if !visit(frame)? {
                                go = false;
                                break;
                            }
                        }
                    }
                }
                None => {
                    for r in &m.rows {
                        bind(frame, r);
                        if !visit(frame)? {
                            go = false;
                            break;
                        }
                    }
                }
            }
        } else {
            let SourceKind::Table(table) = &src.kind else {
                return Err(Error::Internal("a derived table read by key".into()));
            };
            let (ranges, _) = step.access.key_ranges_over(table, frame, self.q)?;
            go = self.read_ranges(table, step, ranges, src.needed.as_deref(), &mut |row| {
                for (d, v) in frame[off..off + width].iter_mut().zip(row.drain(..)) {
                    *d = v;
                }
                visit(frame)
            })?;
        }
        if let (Some(clock), Some(t)) = (&self.clock, timer) {
            t.finish(clock, k);
        }
        Ok(go)
    }
}
