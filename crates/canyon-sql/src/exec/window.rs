//! The window step: window functions (`f(...) OVER (...)`) evaluated over a
//! query block's rows, MySQL 8.0's semantics (manual 12.21).
//!
//! # Where the step runs
//! ```text
//!   FROM / WHERE -> GROUP BY, aggregates -> HAVING -> WINDOWS -> select list
//!                                                              -> DISTINCT -> ORDER BY -> LIMIT
//! ```
//! The collector (`crate::exec::select`) keeps each row that passed HAVING
//! as a [`Staged`] row: its frame (a group's first row) and the values
//! `Expr::Agg` reads. [`evaluate`] fills one more slot per window call (the
//! calls follow the grouping aggregates in the plan's `aggs`, from
//! `windows_from` on, so `Expr::Agg(i)` reads either kind alike), then the
//! select list is evaluated over the result, and DISTINCT, ORDER BY and
//! LIMIT see the window values like any column. Hence a window function may
//! be sorted on, and a LIMIT never stops the scan early when windows exist.
//!
//! # Partitions and order
//! Calls whose windows have the same PARTITION BY and ORDER BY share one
//! sort: the rows' indexes are sorted stably by (partition keys, order
//! keys), NULL first ascending, strings under their collation (ORDER BY's
//! comparison, `sort_cmp_as`), and cut into partitions where the partition
//! keys change. Rows whose order keys all compare equal are *peers*.
//! Without ORDER BY every row of a partition is a peer of every other.
//! The query's rows come out in the order of the last window sorted (as
//! MySQL's do) unless ORDER BY says otherwise.
//!
//! # Frames
//! A frame is the part of the partition an aggregate, FIRST_VALUE,
//! LAST_VALUE or NTH_VALUE reads for one row, `[lo, hi]` by position:
//! ```text
//!   partition (sorted):  r0  r1  r2 [r3  r4  r5] r6      row r4, ROWS 1 PRECEDING AND 1 FOLLOWING
//!                                    lo      hi
//!   RANGE CURRENT ROW:   the row's first peer .. its last peer
//!   RANGE n PRECEDING:   the first row whose key >= key(row) - n   (ascending;
//!   RANGE n FOLLOWING:   the last row whose key <= key(row) + n     mirrored descending)
//! ```
//! A RANGE offset is bound as the boundary value (`key - n`, `key + INTERVAL
//! 1 DAY`, ...; see `crate::plan::bind_window`), evaluated on the current
//! row and found by binary search, the partition being sorted on that key.
//! A row whose key is NULL gets its NULL peers for an offset bound. The
//! default frame is RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW with
//! ORDER BY (so peers share a running total), else the whole partition.
//!
//! # Cost
//! Both ends of every frame kind only move forward as the row does. A frame
//! that starts at UNBOUNDED PRECEDING (the default, running totals, whole
//! partitions) is therefore one aggregate state fed each row once: O(n).
//! Any other start recomputes the frame for each row: O(n · frame width),
//! fine for the usual `n PRECEDING` of a moving average; a removable
//! aggregate (subtracting the row that leaves) is not implemented.
//! Ranking functions, LAG and LEAD are O(n) per partition.
//!
//! # Not implemented
//! IGNORE NULLS and NTH_VALUE's FROM LAST (MySQL 8 has neither), frame
//! EXCLUDE, GROUPS frames, GROUP_CONCAT and the BIT_* / STD / VARIANCE
//! aggregates as window functions (Canyon lacks the aggregates), note 3599
//! for a frame a function ignores.

use crate::exec::no_row;
use crate::exec::select::{AggState, Staged};
use crate::expr::{eval, AggCall, AggFunc, Env, EvalContext, Expr, FrameBound, WindowDef};
use crate::plan::select::SelectPlan;
use crate::types::value::{sort_cmp_as, Value};
use canyon_common::{Error, Result, WindowRule};
use std::cmp::Ordering;

/// Fills the window calls' slots of every row (see the module doc) and
/// returns the rows in the order of the last window sorted.
#[inline(never)]
pub(super) fn evaluate(
    plan: &SelectPlan,
    mut rows: Vec<Staged>,
    ctx: &dyn EvalContext,
) -> Result<Vec<Staged>> {
    let calls = plan.windows();
    let base = plan.windows_from;
    for r in &mut rows {
        r.aggs.resize(plan.aggs.len(), Value::Null);
    }
    let n = rows.len();
    let mut order: Vec<usize> = (0..n).collect();
    let mut done = vec![false; calls.len()];
    for k in 0..calls.len() {
        if done[k] {
            continue;
        }
        let w = window(&calls[k])?;
        let group: Vec<usize> = (k..calls.len())
            .filter(|&j| !done[j] && window(&calls[j]).is_ok_and(|o| o.same_sort(w)))
            .collect();
        // Keys: partition then order values, per row.
        let mut keys: Vec<Vec<Value>> = Vec::with_capacity(n);
        for r in &rows {
            let env = env_of(r, ctx);
            let mut k = Vec::with_capacity(w.partition.len() + w.order.len());
            for (e, _) in &w.partition {
                k.push(eval(e, &env)?);
            }
            for (e, _, _) in &w.order {
                k.push(eval(e, &env)?);
            }
            keys.push(k);
        }
        let np = w.partition.len();
        let cmp_part = |a: &[Value], b: &[Value]| -> Ordering {
            for (i, (_, coll)) in w.partition.iter().enumerate() {
                let o = sort_cmp_as(&a[i], &b[i], *coll);
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        };
        let cmp_order = |a: &[Value], b: &[Value]| -> Ordering {
            for (i, (_, desc, coll)) in w.order.iter().enumerate() {
                let o = sort_cmp_as(&a[np + i], &b[np + i], *coll);
                if o != Ordering::Equal {
                    return if *desc { o.reverse() } else { o };
                }
            }
            Ordering::Equal
        };
        if np + w.order.len() > 0 {
            ctx.check_interrupt()?;
            order = (0..n).collect();
            order.sort_by(|&a, &b| {
                cmp_part(&keys[a], &keys[b]).then_with(|| cmp_order(&keys[a], &keys[b]))
            });
        }
        let mut results: Vec<Vec<Value>> = vec![vec![Value::Null; n]; group.len()];
        let mut start = 0;
        while start < n {
            let mut end = start + 1;
            while end < n && cmp_part(&keys[order[start]], &keys[order[end]]) == Ordering::Equal {
                end += 1;
            }
            ctx.check_interrupt()?;
            let part = Partition {
                rows: &rows,
                idx: &order[start..end],
                keys: &keys,
                np,
                window: w,
                ctx,
            };
            let peers = part.peers(&cmp_order);
            for (g, &j) in group.iter().enumerate() {
                part.compute(&calls[j], &peers, &mut results[g])?;
            }
            start = end;
        }
        for (g, &j) in group.iter().enumerate() {
            for (r, v) in rows.iter_mut().zip(results[g].drain(..)) {
                r.aggs[base + j] = v;
            }
            done[j] = true;
        }
    }
    // The rows in the last sort's order.
    let mut slots: Vec<Option<Staged>> = rows.into_iter().map(Some).collect();
    Ok(order.into_iter().filter_map(|i| slots[i].take()).collect())
}

/// The first position in `0..m` where `pred` fails (it holds on a prefix).
fn partition_point(m: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, m);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

fn window(call: &AggCall) -> Result<&WindowDef> {
    call.window
        .as_deref()
        .ok_or_else(|| Error::Internal("a window call without its window".into()))
}

fn env_of<'a>(r: &'a Staged, ctx: &'a dyn EvalContext) -> Env<'a> {
    Env {
        row: &r.row,
        aggs: &r.aggs,
        ctx,
    }
}

/// One partition, sorted: `idx` are its rows' indexes in window order.
struct Partition<'a> {
    rows: &'a [Staged],
    idx: &'a [usize],
    keys: &'a [Vec<Value>],
    /// Number of partition keys (the order keys follow them in `keys`).
    np: usize,
    window: &'a WindowDef,
    ctx: &'a dyn EvalContext,
}

/// Each position's first and last peer (inclusive).
struct Peers {
    first: Vec<usize>,
    last: Vec<usize>,
}

impl Partition<'_> {
    fn env(&self, pos: usize) -> Env<'_> {
        env_of(&self.rows[self.idx[pos]], self.ctx)
    }

    fn peers(&self, cmp_order: &dyn Fn(&[Value], &[Value]) -> Ordering) -> Peers {
        let m = self.idx.len();
        let mut first = vec![0; m];
        let mut last = vec![0; m];
        let mut s = 0;
        while s < m {
            let mut e = s + 1;
            while e < m
                && cmp_order(&self.keys[self.idx[s]], &self.keys[self.idx[e]]) == Ordering::Equal
            {
                e += 1;
            }
            for p in s..e {
                first[p] = s;
                last[p] = e - 1;
            }
            s = e;
        }
        Peers { first, last }
    }

    /// A constant argument (NTILE's n, LAG's offset, ROWS offsets) as a
    /// non-negative integer at least `min`; 1210 (`what`) otherwise.
    fn count(&self, e: &Expr, min: i64, what: &str) -> Result<i64> {
        let v = eval(e, &no_row(self.ctx))?;
        let n = match v {
            Value::Int(n) => Some(n),
            Value::UInt(n) => i64::try_from(n).ok(),
            Value::Decimal(d) if d.fract().is_zero() => d.to_i64(),
            _ => None,
        };
        match n {
            Some(n) if n >= min => Ok(n),
            _ if what.is_empty() => Err(Error::Window(
                WindowRule::FrameIllegal,
                self.window.name.clone(),
            )),
            _ => Err(Error::WrongArguments(what.into())),
        }
    }

    /// The frame of position `pos` under `w` (a window sorting as the
    /// partition's) as inclusive positions; `None` when empty.
    fn frame(&self, w: &WindowDef, pos: usize, peers: &Peers) -> Result<Option<(usize, usize)>> {
        let m = self.idx.len();
        let (rows, start, end) = match &w.frame {
            Some(f) => (f.rows, &f.start, &f.end),
            None if w.order.is_empty() => (
                true,
                &FrameBound::UnboundedPreceding,
                &FrameBound::UnboundedFollowing,
            ),
            None => (
                false,
                &FrameBound::UnboundedPreceding,
                &FrameBound::CurrentRow,
            ),
        };
        let lo = self.bound(pos, start, rows, true, peers)?;
        let hi = self.bound(pos, end, rows, false, peers)?;
        Ok(match (lo, hi) {
            (Some(lo), Some(hi)) if lo <= hi && lo < m => Some((lo, hi.min(m - 1))),
            _ => None,
        })
    }

    /// One end of a frame as a position (`start`: the first row in it; else
    /// the last). `None`: before the partition (an end) or after it.
    fn bound(
        &self,
        pos: usize,
        b: &FrameBound,
        rows: bool,
        start: bool,
        peers: &Peers,
    ) -> Result<Option<usize>> {
        let m = self.idx.len();
        Ok(match b {
            FrameBound::UnboundedPreceding => Some(0),
            FrameBound::UnboundedFollowing => Some(m - 1),
            FrameBound::CurrentRow if rows => Some(pos),
            FrameBound::CurrentRow if start => Some(peers.first[pos]),
            FrameBound::CurrentRow => Some(peers.last[pos]),
            FrameBound::Preceding(e) if rows => {
                let n = self.count(e, 0, "")? as usize;
                match pos.checked_sub(n) {
                    Some(p) => Some(p),
                    None if start => Some(0),
                    None => None,
                }
            }
            FrameBound::Following(e) if rows => {
                let n = self.count(e, 0, "")? as usize;
                Some(pos.saturating_add(n))
            }
            FrameBound::Preceding(e) | FrameBound::Following(e) => {
                let key_of = |p: usize| &self.keys[self.idx[p]][self.np];
                if key_of(pos).is_null() {
                    // NULL keys: the offset reaches the NULL peers only.
                    return Ok(Some(if start {
                        peers.first[pos]
                    } else {
                        peers.last[pos]
                    }));
                }
                let boundary = eval(e, &self.env(pos))?;
                let (_, desc, coll) = &self.window.order[0];
                let ord = |p: usize| {
                    let o = sort_cmp_as(key_of(p), &boundary, *coll);
                    if *desc {
                        o.reverse()
                    } else {
                        o
                    }
                };
                if start {
                    Some(partition_point(m, |p| ord(p) == Ordering::Less))
                } else {
                    partition_point(m, |p| ord(p) != Ordering::Greater).checked_sub(1)
                }
            }
        })
    }

    /// Computes `call` for every row of the partition into `out` (by row
    /// index).
    fn compute(&self, call: &AggCall, peers: &Peers, out: &mut [Value]) -> Result<()> {
        let m = self.idx.len();
        let w = window(call)?;
        let set = |out: &mut [Value], pos: usize, v: Value| out[self.idx[pos]] = v;
        match call.func {
            AggFunc::RowNumber => {
                for p in 0..m {
                    set(out, p, Value::Int(p as i64 + 1));
                }
            }
            AggFunc::Rank => {
                for p in 0..m {
                    set(out, p, Value::Int(peers.first[p] as i64 + 1));
                }
            }
            AggFunc::DenseRank => {
                let mut rank = 0;
                for p in 0..m {
                    if peers.first[p] == p {
                        rank += 1;
                    }
                    set(out, p, Value::Int(rank));
                }
            }
            AggFunc::PercentRank => {
                for p in 0..m {
                    let v = if m == 1 {
                        0.0
                    } else {
                        peers.first[p] as f64 / (m - 1) as f64
                    };
                    set(out, p, Value::Double(v));
                }
            }
            AggFunc::CumeDist => {
                for p in 0..m {
                    set(out, p, Value::Double((peers.last[p] + 1) as f64 / m as f64));
                }
            }
            AggFunc::Ntile => {
                let arg = w
                    .extra
                    .first()
                    .ok_or_else(|| Error::Internal("NTILE without its argument".into()))?;
                let buckets = self.count(arg, 1, "ntile")? as usize;
                // The first `m % buckets` buckets hold one row more.
                let (q, r) = (m / buckets, m % buckets);
                let big = r * (q + 1);
                for p in 0..m {
                    let b = if p < big {
                        p / (q + 1)
                    } else {
                        r + (p - big) / q.max(1)
                    };
                    set(out, p, Value::Int(b as i64 + 1));
                }
            }
            AggFunc::Lag | AggFunc::Lead => {
                let what = if call.func == AggFunc::Lag {
                    "lag"
                } else {
                    "lead"
                };
                let n = match w.extra.first() {
                    Some(e) => self.count(e, 0, what)? as usize,
                    None => 1,
                };
                let arg = call
                    .arg
                    .as_ref()
                    .ok_or_else(|| Error::Internal("LAG without its argument".into()))?;
                for p in 0..m {
                    let other = if call.func == AggFunc::Lag {
                        p.checked_sub(n)
                    } else {
                        p.checked_add(n).filter(|&o| o < m)
                    };
                    let v = match (other, w.extra.get(1)) {
                        (Some(o), _) => eval(arg, &self.env(o))?,
                        (None, Some(d)) => eval(d, &self.env(p))?,
                        (None, None) => Value::Null,
                    };
                    set(out, p, v);
                }
            }
            AggFunc::FirstValue | AggFunc::LastValue | AggFunc::NthValue => {
                let arg = call
                    .arg
                    .as_ref()
                    .ok_or_else(|| Error::Internal("FIRST_VALUE without its argument".into()))?;
                let nth = match (call.func, w.extra.first()) {
                    (AggFunc::NthValue, Some(e)) => self.count(e, 1, "nth_value")? as usize,
                    _ => 1,
                };
                for p in 0..m {
                    let at = self
                        .frame(w, p, peers)?
                        .and_then(|(lo, hi)| match call.func {
                            AggFunc::FirstValue => Some(lo),
                            AggFunc::LastValue => Some(hi),
                            _ => Some(lo + nth - 1).filter(|&x| x <= hi),
                        });
                    let v = match at {
                        Some(x) => eval(arg, &self.env(x))?,
                        None => Value::Null,
                    };
                    set(out, p, v);
                }
            }
            _ => self.aggregate(call, peers, out)?,
        }
        Ok(())
    }

    /// An aggregate over each row's frame: one running state while frames
    /// start at the partition's first row, else one state per frame.
    fn aggregate(&self, call: &AggCall, peers: &Peers, out: &mut [Value]) -> Result<()> {
        let m = self.idx.len();
        let w = window(call)?;
        let one = std::slice::from_ref(call);
        let running = match &w.frame {
            None => true,
            Some(f) => f.start == FrameBound::UnboundedPreceding,
        };
        let value = |st: &AggState| st.finish(one, self.ctx, 0).pop().unwrap_or(Value::Null);
        if running {
            let mut st = AggState::new(one, Vec::new());
            let mut added = 0;
            let mut last: Option<(usize, Value)> = None;
            for p in 0..m {
                let hi = self.frame(w, p, peers)?.map(|(_, hi)| hi + 1).unwrap_or(0);
                while added < hi {
                    st.add(one, &self.env(added))?;
                    added += 1;
                }
                // The same frame as the row before (peers, a whole
                // partition): its value again, not finished again.
                let v = match &last {
                    Some((h, v)) if *h == added => v.clone(),
                    _ => value(&st),
                };
                last = Some((added, v.clone()));
                out[self.idx[p]] = v;
            }
            return Ok(());
        }
        for p in 0..m {
            let mut st = AggState::new(one, Vec::new());
            if let Some((lo, hi)) = self.frame(w, p, peers)? {
                for x in lo..=hi {
                    st.add(one, &self.env(x))?;
                }
            }
            out[self.idx[p]] = value(&st);
        }
        Ok(())
    }
}
