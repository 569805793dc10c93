//! Access paths: which key ranges of the primary key or of one secondary index a
//! statement reads, chosen from its WHERE clause.
//!
//! # Rule
//! A point or range predicate on a prefix of the primary key or of an index uses
//! that key. From the WHERE clause's AND-ed conjuncts the planner collects, per
//! key, equalities on leading columns (`col = const`, where a column of a join
//! step bound earlier counts as a constant: `Expr::Bound`), then one range on the
//! next column (`<, <=, >, >=, BETWEEN`); `col IN (...)`, OR-ed
//! equalities/BETWEENs on one column and row-value IN lists `(a, b) IN ((..),
//! ..)` become several ranges (or points).
//!
//! # Choice
//! With statistics ([`crate::catalog::stats`]) the candidate expected to read the fewest
//! rows wins ([`estimate_rows`]), and a full scan wins only when it reads fewer
//! than every key candidate (an equality matching most of the table). Without
//! statistics candidates are ranked by shape: full primary-key equality, full
//! unique-index equality, then the longest equality prefix (primary key
//! preferred on ties), then a range, then a scan.
//!
//! # Safety net
//! The whole WHERE clause is re-evaluated on every row the access path returns,
//! so an access path only has to return a superset of the matching rows. When a
//! bound cannot be encoded exactly in the key's type at run time (e.g. `int_col =
//! 1.5`, or a string compared with an integer column, which MySQL compares as
//! numbers), [`Access::key_ranges`] falls back to a full scan rather than guess.
//!
//! The one exception: a single-table SELECT, UPDATE or DELETE whose WHERE
//! clause *is* its primary-key ranges over integer columns
//! ([`Access::implies`]) skips the re-check when this execution's bounds
//! convert exactly ([`Access::bounds_exact`]); the key encoding orders integers
//! exactly as SQL compares them, so the re-check could only repeat what the
//! ranges decided. (A locking read re-reads a row at its latest version under
//! its lock; that version has the same primary key, so it is still in range.)

use crate::catalog::Table;
use crate::expr::{eval, BinOp, Env, EvalContext, Expr};
use crate::types::decimal::Decimal;
use crate::types::timezone::Zone;
use crate::types::value::{parse_datetime_bytes, Value};
use crate::types::SqlType;
use canyon_common::Result;
use canyon_storage::{prefix_successor, KeyRange};
use std::ops::Bound;

/// Which key an access path reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The primary key (the rows themselves).
    Primary,
    /// The n-th secondary index of the table.
    Index(usize),
}

/// One key range as expressions: equal leading columns, then optional bounds on
/// the next column (expression, inclusive).
#[derive(Debug, Clone, PartialEq)]
pub struct RangeSpec {
    /// Values of the leading key columns.
    pub eq: Vec<Expr>,
    /// Lower bound on the next column.
    pub lower: Option<(Expr, bool)>,
    /// Upper bound on the next column.
    pub upper: Option<(Expr, bool)>,
}

/// An access path.
#[derive(Debug, Clone, PartialEq)]
pub struct Access {
    /// The key read.
    pub target: Target,
    /// The ranges read; empty with `full_scan` false means "no table" (SELECT 1).
    pub ranges: Vec<RangeSpec>,
    /// Whether this is a full scan of the primary key.
    pub full_scan: bool,
}

/// Key ranges ready for the transaction layer.
#[derive(Debug)]
pub enum KeyRanges {
    /// Exact primary keys (point reads).
    Points(Vec<Vec<u8>>),
    /// Ranges over the target key.
    Ranges(Vec<KeyRange>),
    /// Nothing can match (e.g. `pk = NULL`).
    Empty,
}

impl Access {
    /// The path for a table-less SELECT.
    pub fn none() -> Access {
        Access {
            target: Target::Primary,
            ranges: Vec::new(),
            full_scan: false,
        }
    }

    /// A full scan of the primary key.
    pub fn scan() -> Access {
        Access {
            target: Target::Primary,
            ranges: Vec::new(),
            full_scan: true,
        }
    }

    /// Whether a range bound reads a column bound by an earlier join step
    /// (`Expr::Bound`), so the ranges change from one outer row to the next.
    pub fn reads_bound(&self) -> bool {
        fn has_bound(e: &Expr) -> bool {
            let mut found = false;
            e.visit_columns(&mut |_| found = true, &mut |_| {});
            found
        }
        self.ranges.iter().any(|r| {
            r.eq.iter().any(has_bound)
                || r.lower.as_ref().is_some_and(|(e, _)| has_bound(e))
                || r.upper.as_ref().is_some_and(|(e, _)| has_bound(e))
        })
    }

    /// The key columns of the target.
    pub fn key_columns<'t>(&self, table: &'t Table) -> &'t [usize] {
        match self.target {
            Target::Primary => &table.def.primary_key,
            Target::Index(i) => &table.def.indexes[i].columns,
        }
    }

    /// Whether rows come out in the order of `order_by` (output positions):
    /// a single range (or a full scan) of a key whose columns after the equality
    /// prefix are the ORDER BY columns, all ascending or all descending
    /// (descending is served by a reverse scan). ORDER BY may also name the
    /// prefix's columns, which are constant. A secondary index orders equal
    /// index values by primary key, so the primary key's columns extend its key.
    pub fn delivers_order(
        &self,
        table: &Table,
        order_by: &[(usize, bool)],
        projection: &[Expr],
    ) -> bool {
        if order_by.is_empty() || self.ranges.len() > 1 {
            return false;
        }
        if self.ranges.is_empty() && !self.full_scan {
            return false;
        }
        let mut key: Vec<usize> = self.key_columns(table).to_vec();
        if self.target != Target::Primary {
            let pk: Vec<usize> = table
                .def
                .primary_key
                .iter()
                .copied()
                .filter(|c| !key.contains(c))
                .collect();
            key.extend(pk);
        }
        if key.is_empty() {
            return false;
        }
        let eq = self.ranges.first().map_or(0, |r| r.eq.len());
        let desc = order_by[0].1;
        let mut next = eq;
        for (pos, d) in order_by {
            let Some(Expr::Column(c)) = projection.get(*pos) else {
                return false;
            };
            if key[..eq.min(key.len())].contains(c) {
                continue;
            }
            if *d != desc || key.get(next) != Some(c) {
                return false;
            }
            next += 1;
        }
        true
    }

    /// Evaluates the range expressions and encodes them as keys. Falls back to a
    /// full scan when a value cannot be encoded exactly (see the module doc).
    pub fn key_ranges(&self, table: &Table, ctx: &dyn EvalContext) -> Result<(KeyRanges, bool)> {
        self.key_ranges_over(table, &[], ctx)
    }

    /// [`Access::key_ranges`] for a join step: bounds may read the frame's
    /// already-bound columns (`Expr::Bound`).
    pub fn key_ranges_over(
        &self,
        table: &Table,
        frame: &[Value],
        ctx: &dyn EvalContext,
    ) -> Result<(KeyRanges, bool)> {
        if self.full_scan {
            return Ok((KeyRanges::Ranges(vec![KeyRange::all()]), true));
        }
        let cols = self.key_columns(table);
        let env = Env {
            row: frame,
            aggs: &[],
            ctx,
        };
        let zone = ctx.time_zone();
        let mut points = Vec::new();
        let mut ranges = Vec::new();
        for spec in &self.ranges {
            let mut prefix = Vec::with_capacity(32);
            let mut impossible = false;
            for (i, e) in spec.eq.iter().enumerate() {
                let col = &table.def.columns[cols[i]];
                let (kv, _) =
                    timestamp_key(key_value(eval(e, &env)?, col.ty), col.ty, &zone, Side::Eq);
                match kv {
                    KeyValue::Exact(v) => {
                        crate::catalog::rows::encode_column_key(col, &v, &mut prefix)
                    }
                    KeyValue::Null => {
                        impossible = true;
                        break;
                    }
                    KeyValue::Inexact => {
                        return Ok((KeyRanges::Ranges(vec![KeyRange::all()]), true))
                    }
                }
            }
            if impossible {
                continue;
            }
            let full_pk_point = self.target == Target::Primary
                && spec.eq.len() == cols.len()
                && spec.lower.is_none()
                && spec.upper.is_none();
            if full_pk_point {
                points.push(prefix);
                continue;
            }
            let next = cols.get(spec.eq.len()).map(|&c| &table.def.columns[c]);
            let mut start = Bound::Included(prefix.clone());
            let mut end = match prefix_successor(&prefix) {
                Some(s) => Bound::Excluded(s),
                None => Bound::Unbounded,
            };
            if let (Some(col), Some((e, inclusive))) = (next, &spec.lower) {
                let (kv, widened) = timestamp_key(
                    key_value(eval(e, &env)?, col.ty),
                    col.ty,
                    &zone,
                    Side::Lower,
                );
                match kv {
                    KeyValue::Exact(v) => {
                        let mut k = prefix.clone();
                        crate::catalog::rows::encode_column_key(col, &v, &mut k);
                        start = if *inclusive || widened {
                            Bound::Included(k)
                        } else {
                            match prefix_successor(&k) {
                                Some(s) => Bound::Included(s),
                                None => continue,
                            }
                        };
                    }
                    KeyValue::Null => continue,
                    KeyValue::Inexact => {
                        return Ok((KeyRanges::Ranges(vec![KeyRange::all()]), true))
                    }
                }
            } else if next.is_some() && spec.upper.is_some() {
                // Skip NULLs (tag 0x00) for `col < x`.
                let mut k = prefix.clone();
                k.push(0x01);
                start = Bound::Included(k);
            }
            if let (Some(col), Some((e, inclusive))) = (next, &spec.upper) {
                let (kv, widened) = timestamp_key(
                    key_value(eval(e, &env)?, col.ty),
                    col.ty,
                    &zone,
                    Side::Upper,
                );
                match kv {
                    KeyValue::Exact(v) => {
                        let mut k = prefix.clone();
                        crate::catalog::rows::encode_column_key(col, &v, &mut k);
                        end = if *inclusive || widened {
                            match prefix_successor(&k) {
                                Some(s) => Bound::Excluded(s),
                                None => Bound::Unbounded,
                            }
                        } else {
                            Bound::Excluded(k)
                        };
                    }
                    KeyValue::Null => continue,
                    KeyValue::Inexact => {
                        return Ok((KeyRanges::Ranges(vec![KeyRange::all()]), true))
                    }
                }
            }
            ranges.push(KeyRange { start, end });
        }
        if !points.is_empty() && !ranges.is_empty() {
            // Mixed (cannot happen for one target today); read everything as ranges.
            for p in points.drain(..) {
                ranges.push(KeyRange::prefix(&p));
            }
        }
        Ok(if !points.is_empty() {
            // Key order, once each: rows come back as InnoDB's range access over
            // an IN list returns them, and locking statements take their row
            // locks in one global order, so two of them over overlapping IN
            // lists (TPC-C's New-Order on stock) queue instead of deadlocking.
            points.sort_unstable();
            points.dedup();
            (KeyRanges::Points(points), false)
        } else if !ranges.is_empty() {
            (KeyRanges::Ranges(ranges), false)
        } else {
            (KeyRanges::Empty, false)
        })
    }
}

impl Access {
    /// Whether reading this path's key ranges *is* evaluating `filter`, so the
    /// per-row re-check (the module doc's safety net) may be skipped when
    /// [`Access::bounds_exact`] also holds at run time.
    ///
    /// Holds only for the primary key over integer key columns, where the key
    /// encoding orders exactly as SQL compares, and only when every conjunct of
    /// `filter` is one of `col = v`, `col < v` (`<=`, `>`, `>=`, either side),
    /// `col BETWEEN v AND w` or `col IN (v, ...)` on a key column with `v` a
    /// parameter or a literal (not an expression: `id = RAND()` is evaluated
    /// per row), and the ranges are exactly those conjuncts: equalities on the
    /// leading key columns, then bounds or an IN list on the next one, nothing
    /// on later columns, no column constrained twice (`id > 1 AND id > 5`
    /// keeps only one bound in the ranges).
    pub fn implies(&self, table: &Table, filter: &Expr) -> bool {
        if self.target != Target::Primary || self.full_scan || self.ranges.is_empty() {
            return false;
        }
        let key = &table.def.primary_key;
        /// What the conjuncts say about one key column.
        #[derive(Default)]
        struct Said {
            eq: Option<Expr>,
            lower: Option<(Expr, bool)>,
            upper: Option<(Expr, bool)>,
            list: Option<Vec<Expr>>,
        }
        let mut said: Vec<Said> = key.iter().map(|_| Said::default()).collect();
        let value = |e: &Expr| matches!(e, Expr::Param(_) | Expr::Literal(_));
        let key_pos = |e: &Expr| match e {
            Expr::Column(c) if table.def.columns[*c].ty.is_integer() => {
                key.iter().position(|k| k == c)
            }
            _ => None,
        };
        fn set<T>(slot: &mut Option<T>, v: T) -> bool {
            slot.replace(v).is_none()
        }
        for c in filter.conjuncts() {
            let fresh = match c {
                Expr::Binary(op, a, b) => {
                    let (pos, v, op) = match (key_pos(a), key_pos(b)) {
                        (Some(p), None) if value(b) => (p, b.as_ref().clone(), *op),
                        (None, Some(p)) if value(a) => (p, a.as_ref().clone(), flip(*op)),
                        _ => return false,
                    };
                    let s = &mut said[pos];
                    match op {
                        BinOp::Eq => set(&mut s.eq, v),
                        BinOp::Gt => set(&mut s.lower, (v, false)),
                        BinOp::Ge => set(&mut s.lower, (v, true)),
                        BinOp::Lt => set(&mut s.upper, (v, false)),
                        BinOp::Le => set(&mut s.upper, (v, true)),
                        _ => return false,
                    }
                }
                Expr::Between(e, lo, hi, false) if value(lo) && value(hi) => {
                    let Some(p) = key_pos(e) else { return false };
                    let s = &mut said[p];
                    set(&mut s.lower, (lo.as_ref().clone(), true))
                        & set(&mut s.upper, (hi.as_ref().clone(), true))
                }
                Expr::InList(e, list, false) if list.iter().all(value) => {
                    let Some(p) = key_pos(e) else { return false };
                    set(&mut said[p].list, list.clone())
                }
                _ => return false,
            };
            if !fresh {
                return false;
            }
        }
        // Equalities on a prefix, then at most one bounded column, then nothing.
        let n = said.iter().take_while(|s| s.eq.is_some()).count();
        let prefix: Vec<Expr> = said[..n].iter().filter_map(|s| s.eq.clone()).collect();
        if said[..n]
            .iter()
            .any(|s| s.lower.is_some() || s.upper.is_some() || s.list.is_some())
            || said.iter().skip(n + 1).any(|s| {
                s.eq.is_some() || s.lower.is_some() || s.upper.is_some() || s.list.is_some()
            })
        {
            return false;
        }
        let next = said.get(n);
        match next.and_then(|s| s.list.as_ref()) {
            Some(list) => {
                let s = next.expect("a list is on a column");
                s.lower.is_none()
                    && s.upper.is_none()
                    && self.ranges.len() == list.len()
                    && self.ranges.iter().zip(list).all(|(r, v)| {
                        r.lower.is_none()
                            && r.upper.is_none()
                            && r.eq.len() == n + 1
                            && r.eq[..n] == prefix[..]
                            && r.eq[n] == *v
                    })
            }
            None => {
                let (lower, upper) =
                    next.map_or((None, None), |s| (s.lower.clone(), s.upper.clone()));
                self.ranges.len() == 1
                    && self.ranges[0]
                        == RangeSpec {
                            eq: prefix,
                            lower,
                            upper,
                        }
            }
        }
    }

    /// Whether every bound of the ranges converts exactly to its key column's
    /// type for this execution's values, i.e. [`Access::key_ranges`] does not
    /// fall back to a full scan (`id = 1.5`, `id = 'x'`). With
    /// [`Access::implies`] this makes the filter's re-check redundant.
    pub fn bounds_exact(&self, table: &Table, ctx: &dyn EvalContext) -> Result<bool> {
        let cols = self.key_columns(table);
        let env = Env {
            row: &[],
            aggs: &[],
            ctx,
        };
        for spec in &self.ranges {
            let n = spec.eq.len();
            let bounds = spec.eq.iter().enumerate().chain(
                spec.lower
                    .iter()
                    .chain(spec.upper.iter())
                    .map(|(e, _)| (n, e)),
            );
            for (i, e) in bounds {
                let Some(col) = cols.get(i).map(|&c| &table.def.columns[c]) else {
                    return Ok(false);
                };
                if matches!(key_value(eval(e, &env)?, col.ty), KeyValue::Inexact) {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }
}

enum KeyValue {
    Exact(Value),
    Null,
    Inexact,
}

/// Which part of a key range a bound is.
#[derive(Clone, Copy)]
enum Side {
    Eq,
    Lower,
    Upper,
}

/// A bound on a TIMESTAMP key column: the constant is a session-local time
/// (`WHERE ts = '2026-03-29 02:30:00'` compares in the session's zone, as
/// MySQL does) and the key holds instants. An equality is the one instant
/// with that local time, or a full scan when there are two (a repeated
/// autumn hour) or none (a gap); a lower or upper bound is widened to every
/// instant that can read on its side of it ([`Zone::utc_span`]) and made
/// inclusive (the `bool`: `true` when widened). The rows are filtered again,
/// so a wider range only reads more. Other columns' values pass unchanged.
fn timestamp_key(kv: KeyValue, ty: SqlType, zone: &Zone, side: Side) -> (KeyValue, bool) {
    let (SqlType::Timestamp(_), KeyValue::Exact(Value::DateTime(local))) = (ty, &kv) else {
        return (kv, false);
    };
    let local = *local;
    let widened = !matches!(zone, Zone::Offset(_));
    match side {
        Side::Eq => match zone.unique_utc(local) {
            Some(utc) => (KeyValue::Exact(Value::DateTime(utc)), false),
            None => (KeyValue::Inexact, false),
        },
        Side::Lower => (
            KeyValue::Exact(Value::DateTime(zone.utc_span(local).0)),
            widened,
        ),
        Side::Upper => (
            KeyValue::Exact(Value::DateTime(zone.utc_span(local).1)),
            widened,
        ),
    }
}

/// Whether `b` is a TIME(fsp) column's own text for its time.
fn canonical_time(b: &[u8], fsp: u8) -> bool {
    crate::types::coerce(Value::Bytes(b.to_vec()), SqlType::Time(fsp), "", 0)
        .is_ok_and(|v| v.to_bytes().is_some_and(|c| c.as_slice() == b))
}

/// Converts a constant to the key column's type when that is exact.
fn key_value(v: Value, ty: SqlType) -> KeyValue {
    if v.is_null() {
        return KeyValue::Null;
    }
    if ty.is_integer() {
        let n: Option<i128> = match &v {
            Value::Int(i) => Some(*i as i128),
            Value::UInt(u) => Some(*u as i128),
            // `to_i128`, not the mantissa: `trunc` drops the scale, so 3.0's
            // truncated mantissa is 3, not 30.
            Value::Decimal(d) if d.fract().is_zero() => d.to_i128(),
            Value::Double(d) if d.fract() == 0.0 && d.abs() < 9e18 => Some(*d as i128),
            Value::Bytes(b) => std::str::from_utf8(b)
                .ok()
                .and_then(|s| s.trim().parse::<i128>().ok()),
            _ => None,
        };
        return match n {
            Some(n) if ty.is_unsigned() && (0..=u64::MAX as i128).contains(&n) => {
                KeyValue::Exact(Value::UInt(n as u64))
            }
            Some(n) if !ty.is_unsigned() && (i64::MIN as i128..=i64::MAX as i128).contains(&n) => {
                KeyValue::Exact(Value::Int(n as i64))
            }
            _ => KeyValue::Inexact,
        };
    }
    match ty {
        SqlType::Char(_)
        | SqlType::VarChar(_)
        | SqlType::Text(_)
        | SqlType::Binary(_)
        | SqlType::VarBinary(_)
        | SqlType::Blob(_)
        // An ENUM / SET compared with a string compares text, as it is keyed
        // (a comparison with a number reads the index: no key range).
        | SqlType::Enum(_)
        | SqlType::Set(_) => match v {
            Value::Bytes(mut b) => {
                if matches!(ty, SqlType::Char(_)) {
                    while b.last() == Some(&b' ') {
                        b.pop();
                    }
                }
                KeyValue::Exact(Value::Bytes(b))
            }
            _ => KeyValue::Inexact,
        },
        SqlType::Double { .. } | SqlType::Float { .. } => match v.to_f64() {
            Some(f) if !matches!(v, Value::Bytes(_)) => KeyValue::Exact(Value::Double(f)),
            _ => KeyValue::Inexact,
        },
        // A BIT is keyed by its number: an integer it can hold finds it.
        SqlType::Bit(n) => {
            let max = u64::MAX >> (64 - u32::from(n.clamp(1, 64)));
            match v {
                Value::Int(i) if i >= 0 && i as u64 <= max => KeyValue::Exact(Value::UInt(i as u64)),
                Value::UInt(u) if u <= max => KeyValue::Exact(Value::UInt(u)),
                _ => KeyValue::Inexact,
            }
        }
        SqlType::Decimal { scale, .. } => {
            let d = match &v {
                Value::Int(i) => Some(Decimal::from(*i)),
                Value::UInt(u) => Some(Decimal::from(*u)),
                Value::Decimal(d) => Some(*d),
                Value::Double(f) => Decimal::from_f64(*f),
                _ => None,
            };
            match d {
                Some(d) if d.round_dp(scale as u32) == d => KeyValue::Exact(Value::Decimal(d)),
                _ => KeyValue::Inexact,
            }
        }
        // A TIME is keyed by its canonical text: only that text finds it
        // (the binder gives an equality with a constant in that form,
        // `bind_members`' `time_key_constant`).
        SqlType::Time(fsp) => match v {
            Value::Bytes(b) if canonical_time(&b, fsp) => KeyValue::Exact(Value::Bytes(b)),
            _ => KeyValue::Inexact,
        },
        // A YEAR is keyed by the year it stores (`Value::UInt`: 0 or 1901 to
        // 2155). The binder reads a constant compared with the column as
        // that year (`bind_members`), so a whole non-negative number bounds
        // the key exactly; anything else (a string, a negative number) is
        // left to the full scan.
        SqlType::Year => match v {
            Value::UInt(_) => KeyValue::Exact(v),
            Value::Int(i) if i >= 0 => KeyValue::Exact(Value::UInt(i as u64)),
            _ => KeyValue::Inexact,
        },
        SqlType::Date => match v {
            Value::Date(_) => KeyValue::Exact(v),
            Value::Bytes(b) => match parse_datetime_bytes(&b) {
                Some(d @ Value::Date(_)) => KeyValue::Exact(d),
                _ => KeyValue::Inexact,
            },
            _ => KeyValue::Inexact,
        },
        SqlType::DateTime(_) | SqlType::Timestamp(_) => match v {
            Value::DateTime(_) => KeyValue::Exact(v),
            Value::Date(d) => KeyValue::Exact(Value::DateTime(d.and_time(chrono::NaiveTime::MIN))),
            Value::Bytes(b) => match parse_datetime_bytes(&b) {
                Some(Value::Date(d)) => {
                    KeyValue::Exact(Value::DateTime(d.and_time(chrono::NaiveTime::MIN)))
                }
                Some(dt) => KeyValue::Exact(dt),
                None => KeyValue::Inexact,
            },
            _ => KeyValue::Inexact,
        },
        _ => KeyValue::Inexact,
    }
}

/// What the WHERE clause says about one column.
#[derive(Default, Clone)]
struct ColumnFacts {
    eq: Option<Expr>,
    lower: Option<(Expr, bool)>,
    upper: Option<(Expr, bool)>,
    /// Alternatives (IN list or OR of equalities/BETWEENs): each (lower, upper).
    alternatives: Option<Vec<(Option<(Expr, bool)>, Option<(Expr, bool)>)>>,
}

/// How a comparison operand names a column of the table, for key ranges.
#[derive(Clone, Copy, PartialEq)]
enum KeyUse {
    /// The comparison orders as the key does: ranges and equalities.
    Ordered,
    /// Only equality: a bytewise comparison on a column keyed by a `_ci`
    /// collation's weights (bytewise-equal strings have equal weights, so the
    /// key range holds every match; the filter, always re-checked, drops the
    /// rest), but bytewise order is not the key's order.
    EqualityOnly,
}

/// The column a comparison operand names and how its key can serve the
/// comparison. A column compared under a collation (`Expr::Collate`) uses the
/// key only if that is the column's own collation: the key holds its weights.
fn key_column(e: &Expr, table: &Table) -> Option<(usize, KeyUse)> {
    match e {
        Expr::Column(i) => {
            let col = table.def.columns.get(*i)?;
            let ordered = !col.ty.is_string() || col.collation.is_bytewise();
            Some((
                *i,
                if ordered {
                    KeyUse::Ordered
                } else {
                    KeyUse::EqualityOnly
                },
            ))
        }
        Expr::Collate(inner, c) => match inner.as_ref() {
            Expr::Column(i) if table.def.columns.get(*i)?.collation == *c => {
                Some((*i, KeyUse::Ordered))
            }
            _ => None,
        },
        _ => None,
    }
}

/// The value side of a comparison, without its collation marker (the key
/// encoding applies the column's collation).
fn key_operand(e: &Expr) -> Expr {
    match e {
        Expr::Collate(inner, _) => inner.as_ref().clone(),
        e => e.clone(),
    }
}

fn analyse(filter: Option<&Expr>, table: &Table) -> Vec<ColumnFacts> {
    let ncols = table.def.columns.len();
    let mut facts = vec![ColumnFacts::default(); ncols];
    let Some(f) = filter else { return facts };
    for c in f.conjuncts() {
        match c {
            Expr::Binary(op, a, b) => {
                let (col, val, op) = match (key_column(a, table), key_column(b, table)) {
                    (Some((i, u)), _) if b.is_constant() && usable(u, *op) => {
                        (i, key_operand(b), *op)
                    }
                    (_, Some((i, u))) if a.is_constant() && usable(u, *op) => {
                        (i, key_operand(a), flip(*op))
                    }
                    _ => {
                        if *op == BinOp::Or {
                            if let Some((col, alts)) = or_alternatives(c, table) {
                                if col < ncols && facts[col].alternatives.is_none() {
                                    facts[col].alternatives = Some(alts);
                                }
                            }
                        }
                        continue;
                    }
                };
                if col >= ncols {
                    continue;
                }
                let fc = &mut facts[col];
                match op {
                    BinOp::Eq => fc.eq = Some(val),
                    // `col <=> v` is `col = v` only for a v that is never NULL:
                    // a NULL key value makes the range impossible (right for
                    // `=`), while `<=> NULL` matches the NULLs. A parameter or
                    // an outer column may be NULL at run time, so only a
                    // non-NULL literal serves as a key value.
                    BinOp::NullSafeEq => {
                        if matches!(&val, Expr::Literal(v) if !v.is_null()) {
                            fc.eq = Some(val)
                        }
                    }
                    BinOp::Gt => fc.lower = Some((val, false)),
                    BinOp::Ge => fc.lower = Some((val, true)),
                    BinOp::Lt => fc.upper = Some((val, false)),
                    BinOp::Le => fc.upper = Some((val, true)),
                    _ => {}
                }
            }
            Expr::Between(e, lo, hi, false) => {
                if let Some((i, KeyUse::Ordered)) = key_column(e, table) {
                    if i < ncols && lo.is_constant() && hi.is_constant() {
                        facts[i].lower = Some((key_operand(lo), true));
                        facts[i].upper = Some((key_operand(hi), true));
                    }
                }
            }
            Expr::InList(e, list, false) => {
                if let Some((i, _)) = key_column(e, table) {
                    if i < ncols
                        && list.iter().all(Expr::is_constant)
                        && facts[i].alternatives.is_none()
                    {
                        facts[i].alternatives = Some(
                            list.iter()
                                .map(key_operand)
                                .map(|v| (Some((v.clone(), true)), Some((v, true))))
                                .collect(),
                        );
                    }
                }
            }
            _ => {}
        }
    }
    facts
}

/// `(c1, c2, ...) IN ((v1, v2, ...), ...)` with constant rows: the columns and
/// the rows of values.
fn tuple_in(e: &Expr, table: &Table) -> Option<(Vec<usize>, Vec<Vec<Expr>>)> {
    let Expr::InList(lhs, list, false) = e else {
        return None;
    };
    let Expr::Row(items) = lhs.as_ref() else {
        return None;
    };
    let cols = items
        .iter()
        .map(|x| key_column(x, table).map(|(i, _)| i))
        .collect::<Option<Vec<_>>>()?;
    let rows = list
        .iter()
        .map(|r| match r {
            Expr::Row(vals) if vals.len() == cols.len() && vals.iter().all(Expr::is_constant) => {
                Some(vals.iter().map(key_operand).collect())
            }
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some((cols, rows))
}

/// A key read through a row-value IN list: one equality range per row, on the
/// leading key columns that the IN's columns and the other equalities cover.
fn tuple_candidate(
    target: Target,
    key: &[usize],
    unique: bool,
    facts: &[ColumnFacts],
    cols: &[usize],
    rows: &[Vec<Expr>],
) -> Option<Candidate> {
    let n = key
        .iter()
        .take_while(|c| facts[**c].eq.is_some() || cols.contains(c))
        .count();
    if n == 0 || !key[..n].iter().any(|c| cols.contains(c)) {
        return None;
    }
    let ranges = rows
        .iter()
        .map(|r| RangeSpec {
            eq: key[..n]
                .iter()
                .map(|c| match cols.iter().position(|x| x == c) {
                    Some(p) => r[p].clone(),
                    None => facts[*c].eq.clone().unwrap_or(Expr::Literal(Value::Null)),
                })
                .collect(),
            lower: None,
            upper: None,
        })
        .collect();
    let score = if n == key.len() {
        if target == Target::Primary {
            950
        } else if unique {
            850
        } else {
            400 + n as u32 * 10
        }
    } else {
        300 + n as u32 * 10 + if target == Target::Primary { 5 } else { 0 }
    };
    Some(Candidate {
        access: Access {
            target,
            ranges,
            full_scan: false,
        },
        score,
    })
}

/// `col = a OR col BETWEEN b AND c OR ...` on one column.
fn or_alternatives(
    e: &Expr,
    table: &Table,
) -> Option<(usize, Vec<(Option<(Expr, bool)>, Option<(Expr, bool)>)>)> {
    let mut parts = Vec::new();
    fn walk<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
        if let Expr::Binary(BinOp::Or, a, b) = e {
            walk(a, out);
            walk(b, out);
        } else {
            out.push(e);
        }
    }
    walk(e, &mut parts);
    let mut col = None;
    let mut alts = Vec::new();
    for p in parts {
        let (c, alt) = match p {
            Expr::Binary(BinOp::Eq, a, b) => {
                let (i, v) = match (key_column(a, table), key_column(b, table)) {
                    (Some((i, _)), _) if b.is_constant() => (i, key_operand(b)),
                    (_, Some((i, _))) if a.is_constant() => (i, key_operand(a)),
                    _ => return None,
                };
                (i, (Some((v.clone(), true)), Some((v, true))))
            }
            Expr::Between(x, lo, hi, false) => match key_column(x, table) {
                Some((i, KeyUse::Ordered)) if lo.is_constant() && hi.is_constant() => (
                    i,
                    (Some((key_operand(lo), true)), Some((key_operand(hi), true))),
                ),
                _ => return None,
            },
            _ => return None,
        };
        if col.is_some_and(|x| x != c) {
            return None;
        }
        col = Some(c);
        alts.push(alt);
    }
    col.map(|c| (c, alts))
}

/// Whether a column used as `u` can bound a key range for `op`.
fn usable(u: KeyUse, op: BinOp) -> bool {
    u == KeyUse::Ordered || matches!(op, BinOp::Eq | BinOp::NullSafeEq)
}

fn flip(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::Le => BinOp::Ge,
        BinOp::Gt => BinOp::Lt,
        BinOp::Ge => BinOp::Le,
        o => o,
    }
}

/// A scored candidate.
struct Candidate {
    access: Access,
    score: u32,
}

fn candidate_for(
    target: Target,
    cols: &[usize],
    unique: bool,
    facts: &[ColumnFacts],
) -> Option<Candidate> {
    let mut eq = Vec::new();
    for &c in cols {
        match &facts[c].eq {
            Some(e) => eq.push(e.clone()),
            None => break,
        }
    }
    let n = eq.len();
    if n == cols.len() && n > 0 {
        let score = if target == Target::Primary {
            1000
        } else if unique {
            900
        } else {
            500 + n as u32 * 10
        };
        return Some(Candidate {
            access: Access {
                target,
                ranges: vec![RangeSpec {
                    eq,
                    lower: None,
                    upper: None,
                }],
                full_scan: false,
            },
            score,
        });
    }
    let next = cols.get(n).copied()?;
    let f = &facts[next];
    let pk_bonus = if target == Target::Primary { 5 } else { 0 };
    if let Some(alts) = &f.alternatives {
        // IN list / OR: one range per alternative.
        let ranges = alts
            .iter()
            .map(|(lo, hi)| {
                // Equal bounds are an equality on the next column.
                match (lo, hi) {
                    (Some((a, true)), Some((b, true))) if a == b => {
                        let mut e = eq.clone();
                        e.push(a.clone());
                        RangeSpec {
                            eq: e,
                            lower: None,
                            upper: None,
                        }
                    }
                    _ => RangeSpec {
                        eq: eq.clone(),
                        lower: lo.clone(),
                        upper: hi.clone(),
                    },
                }
            })
            .collect();
        return Some(Candidate {
            access: Access {
                target,
                ranges,
                full_scan: false,
            },
            score: 300 + n as u32 * 10 + pk_bonus,
        });
    }
    if f.lower.is_some() || f.upper.is_some() {
        return Some(Candidate {
            access: Access {
                target,
                ranges: vec![RangeSpec {
                    eq,
                    lower: f.lower.clone(),
                    upper: f.upper.clone(),
                }],
                full_scan: false,
            },
            score: 200 + n as u32 * 10 + pk_bonus,
        });
    }
    if n > 0 {
        return Some(Candidate {
            access: Access {
                target,
                ranges: vec![RangeSpec {
                    eq,
                    lower: None,
                    upper: None,
                }],
                full_scan: false,
            },
            score: 100 + n as u32 * 10 + pk_bonus,
        });
    }
    None
}

/// A table's index hints, `USE | FORCE | IGNORE {INDEX | KEY} (names)`
/// (MySQL manual, 10.9.4 "Index Hints"), resolved against its definition:
/// which keys the access path may read, and whether a full scan is to be
/// avoided.
///
/// USE restricts the candidates to the named keys (an empty list: none, a
/// full scan); FORCE does too and moreover takes a usable key however many
/// rows the statistics expect it to read; IGNORE removes keys. `PRIMARY`
/// names the primary key. A `FOR JOIN | ORDER BY | GROUP BY` scope is
/// accepted and treated as unscoped. As in MySQL, a single-table DELETE
/// ignores index hints; SELECT and UPDATE honour them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexHints {
    /// The keys USE / FORCE name; `None` when neither appears.
    usable: Option<Vec<Target>>,
    /// The keys IGNORE names.
    ignored: Vec<Target>,
    /// FORCE appeared.
    force: bool,
}

impl IndexHints {
    /// Resolves the hints written on `table`; `None` when there are none, a
    /// 1176 for a name that is no key of the table.
    pub fn resolve(
        table: &Table,
        hints: &[sqlparser::ast::TableIndexHints],
    ) -> Result<Option<IndexHints>> {
        use sqlparser::ast::TableIndexHintType;
        if hints.is_empty() {
            return Ok(None);
        }
        let mut out = IndexHints::default();
        for h in hints {
            let mut targets = Vec::with_capacity(h.index_names.len());
            for n in &h.index_names {
                let t = if n.value.eq_ignore_ascii_case("PRIMARY")
                    && !table.def.primary_key.is_empty()
                {
                    Target::Primary
                } else {
                    let found = table
                        .def
                        .public_indexes()
                        .find(|(_, x)| x.name.eq_ignore_ascii_case(&n.value));
                    match found {
                        Some((i, _)) => Target::Index(i),
                        None => {
                            return Err(canyon_common::Error::Sql {
                                code: 1176,
                                sqlstate: *b"42000",
                                message: format!(
                                    "Key '{}' doesn't exist in table '{}'",
                                    n.value, table.def.name
                                ),
                            })
                        }
                    }
                };
                targets.push(t);
            }
            match h.hint_type {
                TableIndexHintType::Ignore => out.ignored.extend(targets),
                TableIndexHintType::Use | TableIndexHintType::Force => {
                    out.force |= h.hint_type == TableIndexHintType::Force;
                    out.usable.get_or_insert_with(Vec::new).extend(targets);
                }
            }
        }
        Ok(Some(out))
    }

    /// Whether the access path may read `target`.
    pub fn allows(&self, target: Target) -> bool {
        !self.ignored.contains(&target) && self.usable.as_ref().is_none_or(|u| u.contains(&target))
    }
}

/// Chooses the access path for a WHERE clause over `table`.
pub fn choose_access(table: &Table, filter: Option<&Expr>) -> Access {
    choose_access_scored(table, filter).0
}

/// The rows an access path is expected to read, from the table's statistics
/// (`None` without them): `rows / n_diff(prefix)` per equality range, a third of
/// that for a one-sided range on the next column and a tenth for a two-sided
/// one (MySQL's guesses when it has no histogram), one row per full primary or
/// unique key point.
pub fn estimate_rows(table: &Table, access: &Access) -> Option<f64> {
    let rows = table.stats.rows()?;
    if access.full_scan {
        return Some(rows);
    }
    let (index, key_len, unique) = match access.target {
        Target::Primary => (None, table.def.primary_key.len(), true),
        Target::Index(i) => {
            let idx = &table.def.indexes[i];
            (Some(idx.id), idx.columns.len(), idx.unique)
        }
    };
    let mut total = 0.0;
    for r in &access.ranges {
        let n = r.eq.len();
        let mut est = if n == key_len && unique {
            1.0
        } else if n == 0 {
            rows
        } else {
            rows / table.stats.n_diff(index, n).unwrap_or(1.0)
        };
        est *= match (&r.lower, &r.upper) {
            (Some(_), Some(_)) => 0.1,
            (Some(_), None) | (None, Some(_)) => 0.3,
            (None, None) => 1.0,
        };
        total += est.max(1.0);
    }
    Some(total.min(rows.max(1.0)))
}

/// [`choose_access`] with the rank of the chosen path (0: a full scan), which
/// the join planner compares across tables, and its estimated rows when the
/// table has statistics. With statistics the path expected to read the fewest
/// rows wins (ties go to the shape rank); without, the shape rank decides.
pub fn choose_access_scored(table: &Table, filter: Option<&Expr>) -> (Access, u32) {
    let (a, score, _) = choose_access_estimated(table, filter);
    (a, score)
}

/// [`choose_access_scored`] with the estimate.
pub fn choose_access_estimated(table: &Table, filter: Option<&Expr>) -> (Access, u32, Option<f64>) {
    choose_access_hinted(table, filter, None)
}

/// [`choose_access_estimated`] under a table's index hints: only the keys
/// they allow are candidates, and under FORCE a usable key beats a full
/// scan whatever the statistics say.
pub fn choose_access_hinted(
    table: &Table,
    filter: Option<&Expr>,
    hints: Option<&IndexHints>,
) -> (Access, u32, Option<f64>) {
    let allows = |t: Target| hints.is_none_or(|h| h.allows(t));
    let force = hints.is_some_and(|h| h.force);
    // `WHERE a + b = 5` reads an index on `s AS (a + b)` (see `generated`).
    let matched = filter.and_then(|f| crate::plan::generated::match_expressions(table, f));
    let filter = matched.as_ref().or(filter);
    let facts = analyse(filter, table);
    let tuples: Vec<(Vec<usize>, Vec<Vec<Expr>>)> = filter
        .map(|f| {
            f.conjuncts()
                .into_iter()
                .filter_map(|c| tuple_in(c, table))
                .collect()
        })
        .unwrap_or_default();
    let mut best: Option<(Candidate, Option<f64>)> = None;
    let mut consider = |c: Option<Candidate>| {
        if let Some(c) = c.filter(|c| allows(c.access.target)) {
            let est = estimate_rows(table, &c.access);
            let better = match &best {
                None => true,
                Some((b, b_est)) => match (est, b_est) {
                    (Some(x), Some(y)) if (x - y).abs() > f64::EPSILON => x < *y,
                    _ => c.score > b.score,
                },
            };
            if better {
                best = Some((c, est));
            }
        }
    };
    if !table.def.primary_key.is_empty() {
        consider(candidate_for(
            Target::Primary,
            &table.def.primary_key,
            true,
            &facts,
        ));
    }
    for (i, idx) in table.def.ordered_indexes() {
        consider(candidate_for(
            Target::Index(i),
            &idx.columns,
            idx.unique,
            &facts,
        ));
    }
    for (cols, rows) in &tuples {
        if !table.def.primary_key.is_empty() {
            consider(tuple_candidate(
                Target::Primary,
                &table.def.primary_key,
                true,
                &facts,
                cols,
                rows,
            ));
        }
        for (i, idx) in table.def.ordered_indexes() {
            consider(tuple_candidate(
                Target::Index(i),
                &idx.columns,
                idx.unique,
                &facts,
                cols,
                rows,
            ));
        }
    }
    match best {
        Some((c, est)) => {
            // A full scan can beat a poor key read when statistics say so
            // (e.g. an equality matching most of the table).
            let scan_est = table.stats.rows();
            match (est, scan_est) {
                (Some(e), Some(r)) if r < e && !force => (Access::scan(), 0, Some(r)),
                _ => (c.access, c.score, est),
            }
        }
        None => {
            let scan = Access::scan();
            let est = estimate_rows(table, &scan);
            (scan, 0, est)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{ColumnDef, IndexDef, TableDef};
    use crate::plan::bind::Binder;
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::parser::Parser;

    fn table() -> Table {
        let col = |name: &str, ty| ColumnDef {
            name: name.into(),
            ty,
            nullable: false,
            default: None,
            auto_increment: false,
            collation: crate::types::collation::Collation::DEFAULT,
            added_default: None,
            attrs: Default::default(),
        };
        Table::new(TableDef {
            id: 1,
            db: "d".into(),
            name: "t".into(),
            columns: vec![
                col("id", SqlType::Int { unsigned: false }),
                col("k", SqlType::Int { unsigned: false }),
                col("c", SqlType::Char(120)),
                col("a", SqlType::Int { unsigned: false }),
                col("b", SqlType::Int { unsigned: false }),
            ],
            primary_key: vec![0],
            indexes: vec![
                IndexDef {
                    id: 2,
                    name: "k_1".into(),
                    columns: vec![1],
                    unique: false,
                    state: Default::default(),
                    attrs: Default::default(),
                    ready_since: 0,
                },
                IndexDef {
                    id: 3,
                    name: "ab".into(),
                    columns: vec![3, 4],
                    unique: true,
                    state: Default::default(),
                    attrs: Default::default(),
                    ready_since: 0,
                },
            ],
            slots: Vec::new(),
            slot_count: 0,
            default_collation: crate::types::collation::Collation::DEFAULT,
            foreign_keys: Vec::new(),
            comment: String::new(),
            partitioning: None,
            engine: None,
            created: 0,
            stable_since: 0,
        })
    }

    /// The test table and `where_clause` bound over it.
    fn bound_where(where_clause: &str) -> (Table, Expr) {
        let t = table();
        let sql = format!("SELECT * FROM t WHERE {where_clause}");
        let stmt = Parser::parse_sql(&MySqlDialect {}, &sql)
            .expect("parses")
            .remove(0);
        let sqlparser::ast::Statement::Query(q) = stmt else {
            panic!("a query")
        };
        let sqlparser::ast::SetExpr::Select(s) = *q.body else {
            panic!("a select")
        };
        let filter = Binder::new(Some(&t), None)
            .bind(s.selection.as_ref().expect("has WHERE"))
            .expect("binds");
        (t, filter)
    }

    fn access(where_clause: &str) -> Access {
        let (t, filter) = bound_where(where_clause);
        choose_access(&t, Some(&filter))
    }

    #[test]
    fn primary_key_point_and_range() {
        let a = access("id = ?");
        assert_eq!(
            (a.target, a.full_scan, a.ranges.len()),
            (Target::Primary, false, 1)
        );
        assert_eq!(a.ranges[0].eq.len(), 1);
        let a = access("id BETWEEN ? AND ?");
        assert_eq!(a.target, Target::Primary);
        assert!(a.ranges[0].lower.is_some() && a.ranges[0].upper.is_some());
        let a = access("5 < id");
        assert_eq!(a.target, Target::Primary);
        assert!(
            matches!(&a.ranges[0].lower, Some((_, false))),
            "flipped to id > 5"
        );
        assert!(a.ranges[0].upper.is_none());
    }

    #[test]
    fn primary_key_point_beats_index() {
        let a = access("k = 2 AND id = 1");
        assert_eq!(a.target, Target::Primary);
        assert_eq!(a.ranges[0].eq.len(), 1);
    }

    #[test]
    fn secondary_index_equality_in_list_and_or_ranges() {
        let a = access("k = 5");
        assert_eq!((a.target, a.full_scan), (Target::Index(0), false));
        let a = access("k IN (1, 2, 3)");
        assert_eq!((a.target, a.ranges.len()), (Target::Index(0), 3));
        let a = access("k BETWEEN 1 AND 2 OR k BETWEEN 5 AND 6");
        assert_eq!((a.target, a.ranges.len()), (Target::Index(0), 2));
    }

    #[test]
    fn composite_index_prefix_and_full_unique_match() {
        let a = access("a = 1");
        assert_eq!(a.target, Target::Index(1));
        assert_eq!(a.ranges[0].eq.len(), 1);
        let a = access("a = 1 AND b > 3");
        assert_eq!(a.target, Target::Index(1));
        assert!(a.ranges[0].lower.is_some());
        let a = access("b = 1 AND a = 2 AND k = 3");
        assert_eq!(
            a.target,
            Target::Index(1),
            "full unique match beats a plain index"
        );
        assert_eq!(a.ranges[0].eq.len(), 2);
    }

    fn implied(where_clause: &str) -> bool {
        let (t, filter) = bound_where(where_clause);
        choose_access(&t, Some(&filter)).implies(&t, &filter)
    }

    #[test]
    fn primary_key_ranges_that_are_the_whole_filter_imply_it() {
        for w in [
            "id = ?",
            "id = 5",
            "? = id",
            "id BETWEEN ? AND ?",
            "id > ? AND id <= ?",
            "5 < id",
            "id IN (1, 2, ?)",
        ] {
            assert!(implied(w), "{w}");
        }
        for w in [
            // Another column, a second bound the ranges keep only one of, an
            // expression (evaluated per row), a secondary index, OR, <=>.
            "id = ? AND k = 1",
            "id > 1 AND id > 5",
            "id = ? AND id = ?",
            "id = 1 + 1",
            "id IN (1, 2) AND id = 1",
            "k = 5",
            "a = 1 AND b = 2",
            "id = 1 OR id = 2",
            "id <=> 1",
            "NOT id = 1",
            "1 = 1 AND id = 1",
        ] {
            assert!(!implied(w), "{w}");
        }
    }

    #[test]
    fn unindexed_predicates_scan() {
        assert!(access("c = 'x'").full_scan);
        assert!(access("b = 1").full_scan, "b is not a prefix of (a, b)");
        assert!(access("id = 1 OR k = 2").full_scan);
        assert!(access("id + 1 = 2").full_scan);
    }
}
