//! Row values and subqueries in comparisons: `(a, b) < (c, d)`,
//! `(a, b) = (SELECT x, y ...)`, `(a, b) IN ((1, 2), (3, 4))`,
//! `x [NOT] IN (SELECT ...)`, `x op ANY|SOME|ALL (SELECT ...)`, EXISTS and
//! scalar subqueries — their evaluation with MySQL 8.0's NULL rules.
//!
//! # Row comparisons
//!
//! A row operand is a row constructor ([`Expr::Row`]: `(a, b)`, `ROW(a, b)`,
//! nested rows included) or a row subquery ([`SubqueryKind::Row`]: its one
//! row; a row of NULLs when it has none; error 1242 when it has more). The
//! two operands must have the same shape, element by element (nested rows
//! too), else error 1241 "Operand should contain N column(s)", N being the
//! width of the left element where the shapes part (MySQL's
//! `Item::check_cols`). The binder checks shapes once
//! ([`check_row_operands`]); evaluation checks again (it is cheap) for the
//! trees built elsewhere.
//!
//! Shapes agreeing, a nested row compares as the flat list of its scalars
//! (MySQL's `Arg_comparator::compare_row` nests with the same owner, which
//! comes to the same), pairwise, left to right:
//!
//! ```text
//!  op          a pair that differs   a pair with a NULL          all pairs equal
//!  =           FALSE (stop)          remember, go on             NULL if a NULL was met, else TRUE
//!  <>          TRUE (stop)           remember, go on             NULL if a NULL was met, else FALSE
//!  < <= > >=   decides (stop)        NULL (stop)                 <= and >=: TRUE; < and >: FALSE
//!  <=>         FALSE (stop)          both NULL: equal; one: FALSE  TRUE
//! ```
//!
//! So `(1, NULL) = (2, NULL)` is FALSE (an explicit difference wins over the
//! NULL), `(1, NULL) < (2, NULL)` TRUE (decided before the NULL), `(1, NULL)
//! < (1, 2)` NULL. `(a, b) IN ((..), (..))` is a chain of row `=`s: TRUE on
//! the first TRUE, else NULL if one was NULL, else FALSE.
//!
//! # Subquery predicates
//!
//! ```text
//!  form                          empty set   a row decides          no row decides
//!  x IN (SELECT ...)             FALSE       TRUE when x = row      NULL if x or a row compared NULL, else FALSE
//!  x NOT IN (SELECT ...)         TRUE        FALSE when x = row     NULL if ..., else TRUE
//!  x op ANY|SOME (SELECT ...)    FALSE       TRUE when x op row     NULL if x op row was NULL for one, else FALSE
//!  x op ALL (SELECT ...)         TRUE        FALSE when !(x op row) NULL if x op row was NULL for one, else TRUE
//!  [NOT] EXISTS (SELECT ...)     FALSE/TRUE  TRUE/FALSE for a row   -
//!  (SELECT x ...)                NULL        its one value; 1242 for two rows or more
//! ```
//!
//! The empty set decides before the left operand is looked at: `NULL > ALL
//! (empty)` is TRUE, `NULL IN (empty)` FALSE. `x = ANY` and `x = SOME` are
//! `x IN`, and `x <> ALL` is `x NOT IN` (the binder makes them so); the
//! other quantified forms are [`SubqueryKind::Quantified`], over a
//! one-column subquery only (a row operand or several columns: error 1241,
//! as in MySQL, which takes rows only with `= ANY` / `<> ALL`).
//!
//! # Cost
//!
//! A subquery that reads no column of an enclosing query runs once per
//! statement and its rows are cached by the executor's
//! [`SubqueryRunner`](super::eval::SubqueryRunner); a correlated one runs
//! once per outer row. IN and the quantified comparisons then scan the rows
//! linearly, stopping at the first one that decides.
//!
//! Not implemented: a row subquery as an element of an IN list (`(a, b) IN
//! ((SELECT 1, 2), (3, 4))`: error 1241), and MySQL's semi-join and
//! materialization strategies (the rows are scanned per evaluation).

use crate::expr::eval::{collation_of, eval, Env};
use crate::expr::tree::{BinOp, Expr, SubqueryExpr, SubqueryKind};
use crate::types::collation::Collation;
use crate::types::value::{compare_as, Value};
use canyon_common::{Error, Result};
use std::cmp::Ordering;

/// The number of columns an operand has: a row constructor's or a row
/// subquery's width, 1 for anything else.
pub fn operand_columns(e: &Expr) -> usize {
    match e {
        Expr::Row(items) => items.len(),
        Expr::Subquery(sq) if sq.kind == SubqueryKind::Row => sq.plan.kinds().len(),
        _ => 1,
    }
}

/// Whether `e` is a row operand (a row constructor or a row subquery).
pub fn is_row_operand(e: &Expr) -> bool {
    matches!(e, Expr::Row(_)) || matches!(e, Expr::Subquery(sq) if sq.kind == SubqueryKind::Row)
}

/// Checks that two operands of a comparison have the same shape (see the
/// module doc): error 1241 naming the left element's width where they part.
pub fn check_row_operands(a: &Expr, b: &Expr) -> Result<()> {
    let (wa, wb) = (operand_columns(a), operand_columns(b));
    if wa != wb || is_row_operand(a) != is_row_operand(b) {
        return Err(Error::OperandColumns(wa));
    }
    match (a, b) {
        (Expr::Row(xs), Expr::Row(ys)) => xs
            .iter()
            .zip(ys)
            .try_for_each(|(x, y)| check_row_operands(x, y)),
        // A row subquery's columns are scalars.
        (Expr::Row(xs), _) => xs.iter().try_for_each(|x| match operand_columns(x) {
            1 if !is_row_operand(x) => Ok(()),
            n => Err(Error::OperandColumns(n)),
        }),
        (_, Expr::Row(ys)) => ys.iter().try_for_each(|y| match is_row_operand(y) {
            false => Ok(()),
            true => Err(Error::OperandColumns(1)),
        }),
        _ => Ok(()),
    }
}

/// One scalar of a flattened row operand, with the collation it carries.
type Scalar = (Value, Option<Collation>);

/// Evaluates a row operand into its scalars, left to right (nested rows
/// flattened; see the module doc).
fn flatten(e: &Expr, env: &Env<'_>, out: &mut Vec<Scalar>) -> Result<()> {
    match e {
        Expr::Row(items) => items.iter().try_for_each(|x| flatten(x, env, out)),
        Expr::Subquery(sq) if sq.kind == SubqueryKind::Row => {
            let width = sq.plan.kinds().len();
            let rows = subquery_rows(sq, env)?;
            match rows.as_slice() {
                [] => out.extend(std::iter::repeat_n((Value::Null, None), width)),
                [row] => out.extend(row.iter().map(|v| (v.clone(), None))),
                _ => return Err(Error::SubqueryMoreThanOneRow),
            }
            Ok(())
        }
        _ => {
            out.push((eval(e, env)?, collation_of(e)));
            Ok(())
        }
    }
}

/// Compares two flattened row operands under `op` (the module doc's table):
/// `None` is NULL.
fn compare_flat(op: BinOp, l: &[Scalar], r: &[Scalar]) -> Option<bool> {
    let mut was_null = false;
    for ((x, cx), (y, cy)) in l.iter().zip(r) {
        let coll = cx.or(*cy);
        if op == BinOp::NullSafeEq {
            match (x.is_null(), y.is_null()) {
                (true, true) => continue,
                (true, false) | (false, true) => return Some(false),
                _ if compare_as(x, y, coll) != Some(Ordering::Equal) => return Some(false),
                _ => continue,
            }
        }
        match compare_as(x, y, coll) {
            None if matches!(op, BinOp::Eq | BinOp::Ne) => was_null = true,
            None => return None,
            Some(Ordering::Equal) => {}
            Some(o) => return Some(ordering_holds(op, o)),
        }
    }
    if was_null {
        None
    } else {
        Some(ordering_holds(op, Ordering::Equal))
    }
}

/// Whether `op` holds between two values that compare as `o`.
pub(crate) fn ordering_holds(op: BinOp, o: Ordering) -> bool {
    match op {
        BinOp::Eq | BinOp::NullSafeEq => o == Ordering::Equal,
        BinOp::Ne => o != Ordering::Equal,
        BinOp::Lt => o == Ordering::Less,
        BinOp::Le => o != Ordering::Greater,
        BinOp::Gt => o == Ordering::Greater,
        BinOp::Ge => o != Ordering::Less,
        _ => false,
    }
}

/// Three-valued result as a value.
fn truth(t: Option<bool>) -> Value {
    t.map_or(Value::Null, |b| Value::Int(b as i64))
}

/// `a op b` where one operand is a row (see the module doc).
#[inline(never)]
pub(crate) fn compare_rows(op: BinOp, a: &Expr, b: &Expr, env: &Env<'_>) -> Result<Value> {
    if !matches!(
        op,
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::NullSafeEq
    ) {
        return Err(Error::OperandColumns(1));
    }
    check_row_operands(a, b)?;
    let (mut l, mut r) = (Vec::new(), Vec::new());
    flatten(a, env, &mut l)?;
    flatten(b, env, &mut r)?;
    Ok(truth(compare_flat(op, &l, &r)))
}

/// `row [NOT] IN (row, row, ...)`: a chain of row `=`s.
#[inline(never)]
pub(crate) fn row_in_list(a: &Expr, list: &[Expr], neg: bool, env: &Env<'_>) -> Result<Value> {
    let mut l = Vec::new();
    flatten(a, env, &mut l)?;
    let mut saw_null = false;
    let mut r = Vec::new();
    for item in list {
        check_row_operands(a, item)?;
        r.clear();
        flatten(item, env, &mut r)?;
        match compare_flat(BinOp::Eq, &l, &r) {
            Some(true) => return Ok(Value::Int(!neg as i64)),
            None => saw_null = true,
            Some(false) => {}
        }
    }
    Ok(if saw_null {
        Value::Null
    } else {
        Value::Int(neg as i64)
    })
}

/// The rows of `sq` for this row's enclosing frame.
fn subquery_rows(sq: &SubqueryExpr, env: &Env<'_>) -> Result<std::rc::Rc<Vec<Vec<Value>>>> {
    let outer_len = sq.plan.outer_len().min(env.row.len());
    env.ctx.subquery(sq, &env.row[..outer_len])
}

/// A subquery as a value (the module doc's table of subquery predicates).
#[inline(never)]
pub(crate) fn eval_subquery(sq: &SubqueryExpr, env: &Env<'_>) -> Result<Value> {
    if sq.kind == SubqueryKind::Row {
        // Only a comparison reads a row subquery ([`compare_rows`]).
        return Err(Error::OperandColumns(1));
    }
    let rows = subquery_rows(sq, env)?;
    Ok(match &sq.kind {
        SubqueryKind::Scalar => match rows.len() {
            0 => Value::Null,
            1 => rows[0].first().cloned().unwrap_or(Value::Null),
            _ => return Err(Error::SubqueryMoreThanOneRow),
        },
        SubqueryKind::Row => Value::Null,
        SubqueryKind::Exists(neg) => Value::Int((rows.is_empty() == *neg) as i64),
        SubqueryKind::In(lhs, neg) => {
            let mut lv = Vec::with_capacity(lhs.len());
            for e in lhs {
                lv.push((eval(e, env)?, collation_of(e)));
            }
            if rows.is_empty() {
                return Ok(Value::Int(*neg as i64));
            }
            let mut saw_null = false;
            let mut rv: Vec<Scalar> = Vec::with_capacity(lhs.len());
            for r in rows.iter() {
                rv.clear();
                rv.extend(r.iter().map(|v| (v.clone(), None)));
                match compare_flat(BinOp::Eq, &lv, &rv) {
                    Some(true) => return Ok(Value::Int(!*neg as i64)),
                    None => saw_null = true,
                    Some(false) => {}
                }
            }
            if saw_null {
                Value::Null
            } else {
                Value::Int(*neg as i64)
            }
        }
        SubqueryKind::Quantified(lhs, op, all) => {
            // The empty set decides before the left operand is read.
            if rows.is_empty() {
                return Ok(Value::Int(*all as i64));
            }
            let v = eval(lhs, env)?;
            if v.is_null() {
                return Ok(Value::Null);
            }
            let coll = collation_of(lhs);
            let mut saw_null = false;
            for r in rows.iter() {
                let w = r.first().unwrap_or(&Value::Null);
                match compare_as(&v, w, coll) {
                    None => saw_null = true,
                    // ANY is decided by a TRUE, ALL by a FALSE.
                    Some(o) if ordering_holds(*op, o) != *all => {
                        return Ok(Value::Int(!*all as i64))
                    }
                    Some(_) => {}
                }
            }
            if saw_null {
                Value::Null
            } else {
                Value::Int(*all as i64)
            }
        }
    })
}
