//! A partitioned table's partitioning function, bound, and what a WHERE
//! clause tells about it.
//!
//! [`Router`] binds the function the catalog stores as text
//! ([`crate::catalog::partition::Partitioning`]: the expression of HASH /
//! RANGE / LIST, the columns of KEY / COLUMNS) against the table, once per
//! statement, and places rows with it ([`Router::place`]). [`Router::prune`] finds
//! the partitions a single-table WHERE clause can match, for EXPLAIN's
//! `partitions` column.
//!
//! Pruning is a filter here, not a skip: partitions are logical (see the
//! essay in `crate::catalog::partition`), so the partitions EXPLAIN names
//! are the ones whose rows can match, and the rows of the others are read or
//! not as the access path decides. It recognises, among the WHERE clause's
//! conjuncts:
//! - `col = literal` and `col IN (literals)` on the function's column (for
//!   a HASH / RANGE / LIST expression of one column, any such expression:
//!   the literal's partition is computed through it), or on every column of
//!   KEY / COLUMNS partitioning;
//! - `<`, `<=`, `>`, `>=`, BETWEEN on the column of `RANGE (col)`, of
//!   `RANGE (f(col))` for the non-decreasing YEAR, TO_DAYS and
//!   UNIX_TIMESTAMP (the bound goes through `f`, made inclusive), or on the
//!   first column of RANGE COLUMNS.
//!
//! Anything else leaves every partition in: no pruning of joined tables, of
//! LINEAR HASH by ranges, or by placeholders (EXPLAIN of a prepared
//! statement shows every partition).

use crate::catalog::partition::{BoundValue, PartitionValues, Partitioning, Placement};
use crate::catalog::Table;
use crate::expr::{eval, BinOp, Env, EvalContext, Expr};
use crate::types::collation::Collation;
use crate::types::encoding::encode_key_value;
use crate::types::value::{compare_as, Value};
use crate::types::{coerce, SqlType};
use canyon_common::{Error, Result};
use std::cmp::Ordering;

/// A table's partitioning function, bound to its row.
#[derive(Debug)]
pub struct Router {
    /// The partitioning.
    pub part: Partitioning,
    /// HASH / RANGE / LIST: the expression over the table's row.
    expr: Option<Expr>,
    /// The columns the function reads (KEY / COLUMNS: in order; an
    /// expression: those it names).
    cols: Vec<usize>,
    /// Their types.
    types: Vec<SqlType>,
    /// Their collations (strings).
    colls: Vec<Option<Collation>>,
}

/// Parses and binds a partitioning expression (as stored) over `table`'s row.
pub fn bind_expr(table: &Table, text: &str) -> Result<Expr> {
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::parser::Parser;
    let ast = Parser::new(&MySqlDialect {})
        .try_with_sql(text)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| Error::Syntax(format!("{e} in partition function '{text}'")))?;
    crate::plan::bind::Binder::new(Some(table), None).bind(&ast)
}

impl Router {
    /// The router of a partitioned table; `None` for an unpartitioned one.
    pub fn new(table: &Table) -> Result<Option<Router>> {
        let Some(part) = &table.def.partitioning else {
            return Ok(None);
        };
        let (expr, cols) = if part.method.by_columns() && part.columns.is_empty() {
            // KEY (): the primary key's columns.
            (None, table.def.primary_key.clone())
        } else if part.method.by_columns() {
            let cols = part
                .columns
                .iter()
                .map(|c| {
                    table.column(c).ok_or_else(|| {
                        Error::Internal(format!("partition column {c} is not in the table"))
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            (None, cols)
        } else {
            let e = bind_expr(table, &part.expr)?;
            let mut cols = Vec::new();
            columns_of(&e, &mut cols);
            (Some(e), cols)
        };
        let def = &table.def;
        Ok(Some(Router {
            part: part.clone(),
            expr,
            types: cols.iter().map(|&c| def.columns[c].ty).collect(),
            colls: cols
                .iter()
                .map(|&c| {
                    def.columns[c]
                        .ty
                        .is_string()
                        .then_some(def.columns[c].collation)
                })
                .collect(),
            cols,
        }))
    }

    /// The partition `row` (a full table row) belongs to, or the value no
    /// partition takes.
    pub fn place(&self, row: &[Value], ctx: &dyn EvalContext) -> Result<Placement> {
        match &self.expr {
            Some(e) => {
                let v = eval(
                    e,
                    &Env {
                        row,
                        aggs: &[],
                        ctx,
                    },
                )?;
                let v = if v.is_null() {
                    Value::Null
                } else {
                    match v.to_i64() {
                        Some(i) => Value::Int(i),
                        None => Value::UInt(match v {
                            Value::UInt(u) => u,
                            _ => 0,
                        }),
                    }
                };
                Ok(self.part.locate(&[v], &[], &[]))
            }
            None => {
                let vals: Vec<Value> = self.cols.iter().map(|&c| row[c].clone()).collect();
                let mut key = Vec::new();
                if self.part.method.is_hash() {
                    for (v, coll) in vals.iter().zip(&self.colls) {
                        encode_key_value(v, 0, coll.unwrap_or(Collation::Binary), &mut key);
                    }
                }
                Ok(self.part.locate(&vals, &self.colls, &key))
            }
        }
    }

    /// The error a row that matches no partition fails with.
    pub fn no_partition(value: String) -> Error {
        Error::Partition {
            code: 1526,
            message: format!("Table has no partition for value {value}"),
        }
    }

    /// The partitions rows matching `filter` (over the table's row) can be
    /// in, as flags by position.
    pub fn prune(&self, table: &Table, filter: Option<&Expr>, ctx: &dyn EvalContext) -> Vec<bool> {
        let n = self.part.partitions.len();
        let mut keep = vec![true; n];
        let Some(filter) = filter else {
            return keep;
        };
        let conjuncts = filter.conjuncts();
        // Equalities: the partitions of the pinned values.
        if let Some(rows) = self.pinned_rows(table, &conjuncts) {
            let mut hit = vec![false; n];
            for row in rows {
                if let Ok(Ok(i)) = self.place(&row, ctx) {
                    hit[i] = true;
                }
            }
            keep = hit;
        }
        // Ranges on RANGE (col), RANGE (f(col)) with f non-decreasing, and
        // RANGE COLUMNS' first column.
        let range_col = match (&self.expr, self.part.method.is_range()) {
            (Some(e), true) => monotonic_column(e),
            (None, true) => self.cols.first().copied(),
            _ => None,
        };
        if let Some(c) = range_col {
            let col = &table.def.columns[c];
            let coll = col.ty.is_string().then_some(col.collation);
            for cj in &conjuncts {
                for (op, v) in range_terms(cj, c) {
                    match &self.expr {
                        Some(Expr::Column(_)) | None => self.cut_ranges(&mut keep, op, &v, coll),
                        Some(e) => {
                            // f(col) < f(v) need not hold for col < v when f
                            // only does not decrease: the bound becomes <=.
                            let op = match op {
                                BinOp::Lt => BinOp::Le,
                                BinOp::Gt => BinOp::Ge,
                                op => op,
                            };
                            let mut row = vec![Value::Null; table.def.columns.len()];
                            let Ok(v) = coerce(v, col.ty, &col.name, 0) else {
                                continue;
                            };
                            row[c] = v;
                            let env = Env {
                                row: &row,
                                aggs: &[],
                                ctx,
                            };
                            if let Ok(fv) = eval(e, &env) {
                                if !fv.is_null() {
                                    self.cut_ranges(&mut keep, op, &fv, None);
                                }
                            }
                        }
                    }
                }
            }
        }
        keep
    }

    /// For each combination of the values the conjuncts pin the function's
    /// columns to (at most 256), a table row holding them; `None` when a
    /// column is not pinned.
    fn pinned_rows(&self, table: &Table, conjuncts: &[&Expr]) -> Option<Vec<Vec<Value>>> {
        if self.cols.is_empty() {
            return None;
        }
        let mut rows = vec![vec![Value::Null; table.def.columns.len()]];
        for (k, &c) in self.cols.iter().enumerate() {
            let vals = conjuncts.iter().find_map(|cj| pinned_values(cj, c))?;
            let mut next = Vec::new();
            for r in &rows {
                for v in &vals {
                    let mut r = r.clone();
                    let col = &table.def.columns[c];
                    r[c] = coerce(v.clone(), self.types[k], &col.name, 0).ok()?;
                    next.push(r);
                }
            }
            if next.len() > 256 {
                return None;
            }
            rows = next;
        }
        Some(rows)
    }

    /// Clears the RANGE partitions that `col op v` excludes. Partition `i`
    /// holds [bound(i-1), bound(i)).
    fn cut_ranges(&self, keep: &mut [bool], op: BinOp, v: &Value, coll: Option<Collation>) {
        let bound = |i: usize| -> Option<Value> {
            match &self.part.partitions[i].values {
                PartitionValues::LessThan(b) => match b.first() {
                    Some(BoundValue::MaxValue) | None => None,
                    Some(x) => Some(x.value()),
                },
                _ => None,
            }
        };
        let cmp = |a: &Value, b: &Value| compare_as(a, b, coll).unwrap_or(Ordering::Equal);
        for (i, kept) in keep.iter_mut().enumerate() {
            let upper = bound(i); // exclusive; None: unbounded
            let lower = if i == 0 { None } else { bound(i - 1) }; // inclusive
            let excluded = match op {
                // col > v / col >= v: nothing at or above `upper` qualifies
                // when upper <= v (for >=: upper <= v too, upper exclusive).
                BinOp::Gt | BinOp::Ge => upper
                    .as_ref()
                    .is_some_and(|u| cmp(u, v) != Ordering::Greater),
                BinOp::Lt => lower.as_ref().is_some_and(|l| cmp(l, v) != Ordering::Less),
                BinOp::Le => lower
                    .as_ref()
                    .is_some_and(|l| cmp(l, v) == Ordering::Greater),
                _ => false,
            };
            if excluded {
                *kept = false;
            }
        }
    }
}

/// The column of a partitioning expression that is `col` or a
/// non-decreasing function of it (YEAR, TO_DAYS, UNIX_TIMESTAMP: MySQL's
/// monotonic functions that Canyon evaluates), so a range on the column
/// maps to a range of the function.
fn monotonic_column(e: &Expr) -> Option<usize> {
    use crate::expr::functions::Func;
    match e {
        Expr::Column(c) => Some(*c),
        Expr::Func(Func::Year | Func::ToDays | Func::UnixTimestamp, args) => {
            match args.as_slice() {
                [Expr::Column(c)] => Some(*c),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The columns an expression reads, each once.
fn columns_of(e: &Expr, out: &mut Vec<usize>) {
    if let Expr::Column(c) = e {
        if !out.contains(c) {
            out.push(*c);
        }
    }
    e.for_each_child(&mut |x| columns_of(x, out));
}

/// A literal's value (through a COLLATE wrapper).
fn literal(e: &Expr) -> Option<Value> {
    match e {
        Expr::Literal(v) if !v.is_null() => Some(v.clone()),
        Expr::Collate(x, _) => literal(x),
        Expr::Neg(x) => match literal(x)? {
            Value::Int(i) => Some(Value::Int(-i)),
            _ => None,
        },
        _ => None,
    }
}

fn is_column(e: &Expr, c: usize) -> bool {
    match e {
        Expr::Column(x) => *x == c,
        Expr::Collate(x, _) => is_column(x, c),
        _ => false,
    }
}

/// The values `col = v` or `col IN (v, ...)` pins column `c` to.
fn pinned_values(e: &Expr, c: usize) -> Option<Vec<Value>> {
    match e {
        Expr::Binary(BinOp::Eq | BinOp::NullSafeEq, l, r) => {
            if is_column(l, c) {
                literal(r).map(|v| vec![v])
            } else if is_column(r, c) {
                literal(l).map(|v| vec![v])
            } else {
                None
            }
        }
        Expr::InList(x, list, false) if is_column(x, c) => list.iter().map(literal).collect(),
        _ => None,
    }
}

/// The `(op, v)` bounds a conjunct puts on column `c`, as `col op v`.
fn range_terms(e: &Expr, c: usize) -> Vec<(BinOp, Value)> {
    let flip = |op: BinOp| match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::Le => BinOp::Ge,
        BinOp::Gt => BinOp::Lt,
        BinOp::Ge => BinOp::Le,
        o => o,
    };
    match e {
        Expr::Binary(op @ (BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq), l, r) => {
            let (op, v) = if is_column(l, c) {
                (*op, literal(r))
            } else if is_column(r, c) {
                (flip(*op), literal(l))
            } else {
                return Vec::new();
            };
            match (op, v) {
                (BinOp::Eq, Some(v)) => vec![(BinOp::Ge, v.clone()), (BinOp::Le, v)],
                (op, Some(v)) => vec![(op, v)],
                _ => Vec::new(),
            }
        }
        Expr::Between(x, lo, hi, false) if is_column(x, c) => {
            let mut out = Vec::new();
            if let Some(v) = literal(lo) {
                out.push((BinOp::Ge, v));
            }
            if let Some(v) = literal(hi) {
                out.push((BinOp::Le, v));
            }
            out
        }
        _ => Vec::new(),
    }
}

/// Partition selection (`FROM t PARTITION (p0)`, `UPDATE t PARTITION (p0)`,
/// `DELETE FROM t PARTITION (p0)`) is not implemented: refused with 1235
/// rather than read as the whole table.
pub fn refuse_selection(partitions: &[sqlparser::ast::Ident]) -> Result<()> {
    if partitions.is_empty() {
        Ok(())
    } else {
        Err(Error::Unsupported(
            "partition selection (table PARTITION (...))".into(),
        ))
    }
}

/// EXPLAIN's `partitions` column for `table` read under `filter` (over the
/// table's row; `None` when the table is one source of a join, or has no
/// WHERE clause): the names of the partitions that can hold matching rows
/// (`p0_p0sp0`, ... with subpartitions), NULL for an unpartitioned table.
pub fn explain_partitions(table: &Table, filter: Option<&Expr>) -> Value {
    if table.def.partitioning.is_none() {
        return Value::Null;
    }
    let Ok(Some(router)) = Router::new(table) else {
        return Value::Null;
    };
    let keep = router.prune(table, filter, &Literals);
    let part = &router.part;
    let mut names = Vec::new();
    for (i, p) in part.partitions.iter().enumerate() {
        if !keep[i] {
            continue;
        }
        let subs: Vec<String> = if !p.subpartitions.is_empty() {
            p.subpartitions.clone()
        } else if let Some(sub) = &part.sub {
            (0..sub.count).map(|k| format!("{}sp{k}", p.name)).collect()
        } else {
            Vec::new()
        };
        if subs.is_empty() {
            names.push(p.name.clone());
        } else {
            names.extend(subs.iter().map(|s| format!("{}_{s}", p.name)));
        }
    }
    if names.is_empty() {
        // MySQL: NULL, with "No matching rows after partition pruning".
        return Value::Null;
    }
    Value::str(&names.join(","))
}

/// The context EXPLAIN evaluates partitioning functions in: literal values
/// only (no session, no parameters).
struct Literals;

impl EvalContext for Literals {
    fn params(&self) -> &[Value] {
        &[]
    }
    fn sys_var(&self, name: &str) -> Result<Value> {
        Err(Error::Internal(format!(
            "@@{name} in a partitioning function"
        )))
    }
    fn user_var(&self, _name: &str) -> Value {
        Value::Null
    }
    fn session_fact(&self, _f: crate::expr::functions::Func) -> Value {
        Value::Null
    }
    fn now(&self) -> chrono::NaiveDateTime {
        chrono::NaiveDateTime::default()
    }
    fn warn(&self, _code: u16, _message: &str) {}
}
