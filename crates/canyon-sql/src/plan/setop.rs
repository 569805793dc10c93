//! UNION, INTERSECT and EXCEPT: planning the operands, the result type of each
//! column, and combining the operands' rows.
//!
//! # Shape
//! A query whose body is a set operation is planned as an ordinary query block
//! over one FROM source that produces the operation's rows:
//!
//! ```text
//!   a UNION b INTERSECT c ORDER BY 1 LIMIT 5
//!     => SELECT * FROM <set operation> ORDER BY 1 LIMIT 5
//!        SourceKind::SetOp { Union, distinct, [a, <block over Intersect{b, c}>] }
//! ```
//!
//! so the query's ORDER BY, LIMIT and OFFSET, its use as a subquery, a derived
//! table or the source of `INSERT ... SELECT`, and its result-set metadata are
//! the block planner's (`query.rs`), not a second implementation. The source
//! is materialised like a derived table, once per statement execution.
//!
//! # Semantics (MySQL 8.0.31+ and MariaDB 10.5+)
//! - sqlparser parses INTERSECT tighter than UNION and EXCEPT, and all three
//!   left-associative; a run of one operator with one quantifier (`a UNION ALL
//!   b UNION ALL c`) becomes one source with several operands, and a change of
//!   operator or quantifier nests the left part as an operand. So a DISTINCT
//!   union removes duplicates from everything to its left, including rows of
//!   an earlier UNION ALL, as MySQL documents.
//! - Without ALL every operator is DISTINCT. Duplicates are decided as
//!   DISTINCT decides them: NULLs equal, numbers by value, strings under the
//!   column's collation — a `_bin` one if any operand has one (it wins MySQL's
//!   collation aggregation), else the first string operand's. The first
//!   occurrence is kept.
//! - `INTERSECT ALL` keeps a row min(m, n) times, `EXCEPT ALL` max(m − n, 0)
//!   times, for m occurrences on the left and n on the right.
//! - The column count must match (1222). Names come from the first operand.
//!   Each column's type is the aggregate of the operands' types (see
//!   [`merge_kind`]) and every value is converted to it, so `SELECT 1 UNION
//!   SELECT 2.5` returns `1.0` and `2.5`, and a number united with a string is
//!   a string.
//! - An operand may be parenthesised with its own ORDER BY and LIMIT.
//!
//! # Not implemented (1235)
//! Operands that read columns of an enclosing query (a correlated UNION
//! subquery), `VALUES` / `TABLE` operands, `BY NAME` and `MINUS`. (A locking read over
//! a set operation locks every operand's rows: `crate::exec::select`.)

use crate::plan::bind::Scope;
use crate::plan::select::SelectPlan;
use crate::plan::PlanContext;
use crate::types::collation::Collation;
use crate::types::decimal::Decimal;
use crate::types::encoding::encode_row;
use crate::types::result::{column_flags, Column};
use crate::types::value::{collated, Value};
use crate::types::{expr_column, ExprKind};
use canyon_common::{Error, Result};
use sqlparser::ast;
use std::collections::{HashMap, HashSet};

/// The operator of a [`SetOpPlan`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOp {
    /// UNION.
    Union,
    /// INTERSECT.
    Intersect,
    /// EXCEPT.
    Except,
}

impl SetOp {
    /// The operator's name, as in SQL.
    pub fn name(self) -> &'static str {
        match self {
            SetOp::Union => "UNION",
            SetOp::Intersect => "INTERSECT",
            SetOp::Except => "EXCEPT",
        }
    }
}

/// A planned set operation over two or more operands, left to right.
#[derive(Debug)]
pub struct SetOpPlan {
    /// The operator.
    pub op: SetOp,
    /// ALL (multiset) rather than DISTINCT.
    pub all: bool,
    /// The operands, each a query block (a nested set operation is a block over
    /// its own source).
    pub operands: Vec<SelectPlan>,
    /// The result type of each column; every operand's values are converted to it.
    pub kinds: Vec<ExprKind>,
    /// The collation duplicates of each string column are decided under (`None`:
    /// not a string, or bytewise).
    pub colls: Vec<Option<Collation>>,
    /// Result-set metadata (names from the first operand).
    pub columns: Vec<Column>,
    /// A recursive CTE's iteration (see [`crate::plan::recursive`]).
    pub recursion: Option<Recursion>,
}

/// How a recursive CTE's UNION iterates.
#[derive(Debug, Clone, Copy)]
pub struct Recursion {
    /// Operands before this one are the seed; the rest read the work table.
    pub first_recursive: usize,
    /// The work table's id (`WorkTable::id`).
    pub work: usize,
}

impl SetOpPlan {
    /// The scope the enclosing block binds the result's columns through.
    pub fn scope(&self, qualifier: &str, offset: usize) -> Scope {
        Scope::of_derived(
            qualifier,
            self.columns.iter().map(|c| c.name.clone()).collect(),
            &self.kinds,
            &self.colls,
            offset,
        )
    }

    /// `rows` converted to the result's column types (a recursive CTE's
    /// new rows).
    pub fn convert_rows(&self, rows: Vec<Vec<Value>>) -> Vec<Vec<Value>> {
        rows.into_iter()
            .map(|mut row| {
                row.truncate(self.kinds.len());
                for (v, k) in row.iter_mut().zip(&self.kinds) {
                    convert(v, *k);
                }
                row
            })
            .collect()
    }

    /// The key DISTINCT compares a result row by.
    pub fn row_key(&self, row: &[Value]) -> Vec<u8> {
        encode_row(&collated(row, &self.colls))
    }

    /// Combines the operands' rows (in operand order) into the result.
    pub fn combine(&self, operands: Vec<Vec<Vec<Value>>>) -> Vec<Vec<Value>> {
        let key = |row: &[Value]| encode_row(&collated(row, &self.colls));
        let mut operands = operands.into_iter().map(|rows| {
            rows.into_iter()
                .map(|mut row| {
                    row.truncate(self.kinds.len());
                    for (v, k) in row.iter_mut().zip(&self.kinds) {
                        convert(v, *k);
                    }
                    row
                })
                .collect::<Vec<_>>()
        });
        let mut acc = operands.next().unwrap_or_default();
        if self.op == SetOp::Union {
            for rows in operands {
                acc.extend(rows);
            }
            if !self.all {
                let mut seen = HashSet::new();
                acc.retain(|r| seen.insert(key(r)));
            }
            return acc;
        }
        if !self.all {
            let mut seen = HashSet::new();
            acc.retain(|r| seen.insert(key(r)));
        }
        for rows in operands {
            let mut counts: HashMap<Vec<u8>, usize> = HashMap::new();
            for r in &rows {
                *counts.entry(key(r)).or_default() += 1;
            }
            // DISTINCT: the left side has no duplicates left, so "one match
            // consumed" and "some match exists" agree; ALL: one right row
            // cancels (EXCEPT) or admits (INTERSECT) one left row.
            acc.retain(|r| {
                let n = counts.get_mut(&key(r));
                let matched = match n {
                    Some(n) if *n > 0 => {
                        if self.all {
                            *n -= 1;
                        }
                        true
                    }
                    _ => false,
                };
                matched == (self.op == SetOp::Intersect)
            });
        }
        acc
    }
}

/// Converts `v` in place to a value of `kind`, the result type of its column
/// (see [`merge_kind`]: only widening conversions occur).
fn convert(v: &mut Value, kind: ExprKind) {
    let new = match (&*v, kind) {
        (Value::Null, _) => return,
        (Value::Bytes(_), ExprKind::String) => return,
        (_, ExprKind::String) => match v.to_text() {
            Some(t) => Value::Bytes(t),
            None => Value::Null,
        },
        (Value::Int(i), ExprKind::Decimal(s)) => Value::Decimal(rescaled(Decimal::from(*i), s)),
        (Value::UInt(u), ExprKind::Decimal(s)) => Value::Decimal(rescaled(Decimal::from(*u), s)),
        (Value::Decimal(d), ExprKind::Decimal(s)) => Value::Decimal(rescaled(*d, s)),
        (Value::Int(_) | Value::UInt(_) | Value::Decimal(_), ExprKind::Double) => {
            Value::Double(v.to_f64().unwrap_or(0.0))
        }
        (Value::Date(d), ExprKind::DateTime) => Value::DateTime(d.and_time(chrono::NaiveTime::MIN)),
        _ => return,
    };
    *v = new;
}

/// `d` shown with at least `scale` digits after the point (MySQL pads a
/// DECIMAL to its column's scale; rounding to it happens at the block's end).
fn rescaled(mut d: Decimal, scale: u8) -> Decimal {
    if d.scale() < u32::from(scale) {
        d.rescale(u32::from(scale));
    }
    d
}

/// The type of a column whose operands have types `a` and `b`: MySQL's type
/// aggregation reduced to Canyon's expression kinds. NULL takes the other
/// type; integers and DECIMAL give DECIMAL (signed with unsigned: DECIMAL, as
/// MySQL's BIGINT with BIGINT UNSIGNED); any number with DOUBLE gives DOUBLE;
/// DATE with DATETIME gives DATETIME; anything else mixed gives a string.
pub fn merge_kind(a: ExprKind, b: ExprKind) -> ExprKind {
    use ExprKind::*;
    match (a, b) {
        (Null, x) | (x, Null) => x,
        (x, y) if x == y => x,
        (Decimal(s), Decimal(t)) => Decimal(s.max(t)),
        (Int, UInt) | (UInt, Int) => Decimal(0),
        (Int | UInt, Decimal(s)) | (Decimal(s), Int | UInt) => Decimal(s),
        (Int | UInt | Decimal(_) | Double, Int | UInt | Decimal(_) | Double) => Double,
        (Date, DateTime) | (DateTime, Date) => DateTime,
        _ => String,
    }
}

/// The result-set metadata of column `i`: the first operand's, without its
/// table, when every operand's column has the same protocol type; else that of
/// an expression of the merged kind. NOT NULL only when no operand can be NULL.
fn merged_column(operands: &[SelectPlan], i: usize, kind: ExprKind) -> Column {
    let first = &operands[0].columns[i];
    let same = operands.iter().all(|p| {
        let c = &p.columns[i];
        c.column_type == first.column_type
            && c.decimals == first.decimals
            && c.charset == first.charset
            && (c.flags & column_flags::UNSIGNED) == (first.flags & column_flags::UNSIGNED)
            && p.kinds[i] == kind
    });
    let not_null = operands
        .iter()
        .all(|p| p.columns[i].flags & column_flags::NOT_NULL != 0);
    let mut col = if same {
        let mut c = first.clone();
        c.length = operands
            .iter()
            .map(|p| p.columns[i].length)
            .max()
            .unwrap_or(c.length);
        c.flags &= column_flags::UNSIGNED | column_flags::BINARY | column_flags::NUM;
        c
    } else {
        expr_column(&first.name, kind)
    };
    col.schema.clear();
    col.table.clear();
    col.org_table.clear();
    col.org_name.clear();
    col.name = first.name.clone();
    if not_null {
        col.flags |= column_flags::NOT_NULL;
    }
    col
}

/// Whether `body` is a set operation (the case [`plan_set_op`] plans).
pub fn is_set_op(body: &ast::SetExpr) -> bool {
    matches!(body, ast::SetExpr::SetOperation { .. })
}

/// Plans the set operation `body` whose operands may see the enclosing scopes
/// (but must not read them: a correlated operand is refused), numbering
/// placeholders from `params`. Returns the plan and the next placeholder number.
pub fn plan_set_op(
    ctx: &PlanContext<'_>,
    body: &ast::SetExpr,
    scopes: &[Scope],
    outer_len: usize,
    params: usize,
) -> Result<(SetOpPlan, usize)> {
    let ast::SetExpr::SetOperation {
        op, set_quantifier, ..
    } = body
    else {
        return Err(Error::Internal("plan_set_op on a query block".into()));
    };
    let op = match op {
        ast::SetOperator::Union => SetOp::Union,
        ast::SetOperator::Intersect => SetOp::Intersect,
        ast::SetOperator::Except => SetOp::Except,
        ast::SetOperator::Minus => return Err(Error::Unsupported("MINUS".into())),
    };
    let all = quantifier_all(set_quantifier)?;
    // The left-deep run of this operator and quantifier, in textual order.
    let mut exprs: Vec<&ast::SetExpr> = Vec::new();
    let mut node = body;
    loop {
        match node {
            ast::SetExpr::SetOperation {
                left,
                op: o,
                set_quantifier: q,
                right,
            } if same_op(o, op) && quantifier_all(q)? == all => {
                exprs.push(right);
                node = left;
            }
            other => {
                exprs.push(other);
                break;
            }
        }
    }
    exprs.reverse();

    let mut params = params;
    let mut operands = Vec::with_capacity(exprs.len());
    for e in exprs {
        let (plan, next, outer_ref) = plan_operand(ctx, e, scopes, outer_len, params)?;
        if outer_ref.is_some() {
            return Err(Error::Unsupported(format!(
                "{} in a correlated subquery",
                op.name()
            )));
        }
        if let Some(first) = operands.first() {
            let first: &SelectPlan = first;
            if plan.visible != first.visible {
                return Err(Error::SetOpColumnCount);
            }
        }
        params = next;
        operands.push(plan);
    }
    let width = operands[0].visible;
    let mut kinds = Vec::with_capacity(width);
    let mut colls = Vec::with_capacity(width);
    for i in 0..width {
        let kind = operands
            .iter()
            .map(|p| p.kinds[i])
            .fold(ExprKind::Null, merge_kind);
        kinds.push(kind);
        // A binary (`_bin`) collation among the string operands wins, as
        // in MySQL's collation aggregation; otherwise the first string
        // operand's. (Coercibility is not tracked here: a literal first
        // operand lends its connection collation where MySQL would take a
        // later column's — the two differ only between case-insensitive
        // collations.)
        let strings: Vec<Option<Collation>> = operands
            .iter()
            .filter(|p| p.kinds[i] == ExprKind::String)
            .map(|p| p.colls.get(i).copied().flatten())
            .collect();
        let binary = strings.iter().find(|c| !c.is_some_and(Collation::is_ci));
        colls.push(match (binary, strings.first()) {
            _ if kind != ExprKind::String => None,
            (Some(b), _) => *b,
            (None, first) => first.copied().flatten(),
        });
    }
    let columns = (0..width)
        .map(|i| merged_column(&operands, i, kinds[i]))
        .collect();
    Ok((
        SetOpPlan {
            op,
            all,
            operands,
            kinds,
            colls,
            columns,
            recursion: None,
        },
        params,
    ))
}

fn same_op(o: &ast::SetOperator, op: SetOp) -> bool {
    matches!(
        (o, op),
        (ast::SetOperator::Union, SetOp::Union)
            | (ast::SetOperator::Intersect, SetOp::Intersect)
            | (ast::SetOperator::Except, SetOp::Except)
    )
}

fn quantifier_all(q: &ast::SetQuantifier) -> Result<bool> {
    match q {
        ast::SetQuantifier::All => Ok(true),
        ast::SetQuantifier::Distinct | ast::SetQuantifier::None => Ok(false),
        _ => Err(Error::Unsupported("BY NAME".into())),
    }
}

/// Plans one operand as a query block.
fn plan_operand(
    ctx: &PlanContext<'_>,
    e: &ast::SetExpr,
    scopes: &[Scope],
    outer_len: usize,
    params: usize,
) -> Result<(SelectPlan, usize, Option<usize>)> {
    match e {
        ast::SetExpr::Query(q) => {
            crate::plan::select::plan_subquery(ctx, q, scopes, outer_len, params)
        }
        ast::SetExpr::Select(_) | ast::SetExpr::SetOperation { .. } => {
            let mut q = template("SELECT 1")?;
            *q.body = crate::parse::limits::clone_set_expr(e);
            crate::plan::select::plan_subquery(ctx, &q, scopes, outer_len, params)
        }
        ast::SetExpr::Values(_) => Err(Error::Unsupported("VALUES as a set operand".into())),
        _ => Err(Error::Unsupported("this set operand".into())),
    }
}

/// The block a query with a set-operation body is planned as (see "Shape"):
/// `SELECT * FROM (<body>) AS <op>` with the query's ORDER BY, LIMIT and
/// locking clause. A column named through a table in that ORDER BY is
/// refused as MySQL refuses it (1250): the operands' tables are not visible.
pub fn outer_block(q: &ast::Query, op_name: &str) -> Result<ast::Query> {
    if let Some(ob) = &q.order_by {
        if let ast::OrderByKind::Expressions(exprs) = &ob.kind {
            for o in exprs {
                if let ast::Expr::CompoundIdentifier(ids) = &o.expr {
                    let table = ids.len().checked_sub(2).map(|i| ids[i].value.clone());
                    return Err(Error::SetOpOrderTable(table.unwrap_or_default()));
                }
            }
        }
    }
    let mut outer = template("SELECT * FROM (SELECT 1) AS t")?;
    let ast::SetExpr::Select(select) = outer.body.as_mut() else {
        return Err(Error::Internal("set operation template".into()));
    };
    let Some(ast::TableFactor::Derived {
        subquery, alias, ..
    }) = select.from.first_mut().map(|t| &mut t.relation)
    else {
        return Err(Error::Internal("set operation template".into()));
    };
    *subquery.body = crate::parse::limits::clone_set_expr(&q.body);
    if let Some(a) = alias.as_mut() {
        a.name.value = format!("<{op_name}>");
    }
    outer.order_by = q.order_by.clone();
    outer.limit_clause = q.limit_clause.clone();
    outer.locks = q.locks.clone();
    Ok(outer)
}

/// A parsed query to build synthesized ones from: building sqlparser's AST
/// nodes field by field would tie this module to every field a release adds.
fn template(sql: &str) -> Result<ast::Query> {
    sqlparser::parser::Parser::new(&sqlparser::dialect::MySqlDialect {})
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_query())
        .map(|q| *q)
        .map_err(|e| Error::Internal(format!("set operation template: {e}")))
}

/// The operator name of a set-operation body (for the source's name).
pub fn op_name(body: &ast::SetExpr) -> &'static str {
    match body {
        ast::SetExpr::SetOperation { op, .. } => match op {
            ast::SetOperator::Intersect => "intersect",
            ast::SetOperator::Except | ast::SetOperator::Minus => "except",
            ast::SetOperator::Union => "union",
        },
        _ => "derived",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_merge_as_mysql_aggregates_types() {
        use ExprKind::*;
        assert_eq!(merge_kind(Null, Int), Int);
        assert_eq!(merge_kind(Int, Decimal(1)), Decimal(1));
        assert_eq!(merge_kind(Decimal(3), Decimal(1)), Decimal(3));
        assert_eq!(merge_kind(Int, UInt), Decimal(0));
        assert_eq!(merge_kind(Decimal(2), Double), Double);
        assert_eq!(merge_kind(Date, DateTime), DateTime);
        assert_eq!(merge_kind(Int, String), String);
        assert_eq!(merge_kind(Date, Int), String);
    }

    #[test]
    fn values_widen_to_the_column_kind() {
        let mut v = Value::Int(1);
        convert(&mut v, ExprKind::Decimal(1));
        assert_eq!(v.to_text().unwrap(), b"1.0");
        let mut v = Value::Decimal(Decimal::new(15, 1));
        convert(&mut v, ExprKind::String);
        assert_eq!(v, Value::Bytes(b"1.5".to_vec()));
        let mut v = Value::Null;
        convert(&mut v, ExprKind::String);
        assert_eq!(v, Value::Null);
    }
}
