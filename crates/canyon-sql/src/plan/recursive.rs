//! `WITH RECURSIVE`: a common table expression that reads itself, MySQL
//! 8.0's semantics (manual 13.2.15, "Recursive Common Table Expressions").
//!
//! # Shape
//! ```text
//!   WITH RECURSIVE c (n) AS (SELECT 1  UNION ALL  SELECT n + 1 FROM c WHERE n < 5)
//!                            ^ seed (non-recursive)  ^ recursive block: reads `c` once
//! ```
//! A reference to a recursive CTE plans it as a UNION source
//! ([`SetOpPlan`] with [`Recursion`] set): operand 0 is the seed blocks
//! (planned as one query, their UNION when there are several), the others
//! the recursive blocks, each reading the *work table* (`SourceKind::WorkTable`)
//! where the CTE names itself. Execution (`crate::exec::select`'s
//! `materialized`) runs the seed, then repeatedly runs the recursive blocks
//! over the rows the previous round added, until a round adds none:
//! ```text
//!   result = work = seed rows
//!   while work not empty:  round += 1; round > cte_max_recursion_depth -> 3636
//!                          new = recursive blocks over work (UNION: minus rows already in result)
//!                          result += new; work = new
//! ```
//! Column names and types come from the seed; recursive rows are converted
//! to them (as MySQL, a recursive row that does not fit is cut to the seed's
//! type, not widened). A runaway recursion is also stopped by KILL QUERY and
//! max_execution_time (each round checks the statement's interrupt).
//!
//! # Rules and errors (MySQL 8)
//! The body is a UNION (3573) of seed blocks followed by recursive ones
//! (3574); a recursive block reads the CTE exactly once, in its FROM clause,
//! not in a subquery (3577) nor on the right of a LEFT JOIN (3576), and has
//! no aggregate or window function (3575)
//! and no ORDER BY, LIMIT or DISTINCT (1235). UNION DISTINCT anywhere in the
//! body makes the whole recursion distinct.
//!
//! # Not implemented
//! ORDER BY / LIMIT over the whole CTE body (1235), mutually recursive CTEs,
//! and materialising a CTE read twice once (each reference runs it).

use crate::plan::bind::Scope;
use crate::plan::select::plan_query;
use crate::plan::setop::{Recursion, SetOp, SetOpPlan};
use crate::plan::{CteDef, PlanContext};
use crate::types::collation::Collation;
use crate::types::result::Column;
use crate::types::ExprKind;
use canyon_common::{CteRule, Error, Result};
use sqlparser::ast;
use std::ops::ControlFlow;
use std::sync::Arc;

/// The rows one round of a recursive CTE reads: the previous round's new
/// rows, handed to the recursive blocks by the executor under `id`.
#[derive(Debug)]
pub struct WorkTable {
    /// Which recursion's rows (unique within the statement).
    pub id: usize,
    /// The CTE's column names.
    pub columns: Vec<String>,
    /// Their kinds (the seed's).
    pub kinds: Vec<ExprKind>,
    /// Their collations.
    pub colls: Vec<Option<Collation>>,
}

impl WorkTable {
    /// The scope the recursive block binds the CTE's columns through.
    pub fn scope(&self, qualifier: &str, offset: usize) -> Scope {
        Scope::of_derived(
            qualifier,
            self.columns.clone(),
            &self.kinds,
            &self.colls,
            offset,
        )
    }
}

/// Whether `q` names the table `name` anywhere (a recursive CTE does).
pub fn references(q: &ast::Query, name: &str) -> bool {
    count_refs(q, name) > 0
}

fn count_refs<V: ast::Visit>(q: &V, name: &str) -> usize {
    let mut n = 0;
    let _ = ast::visit_relations(q, |r| {
        if let [p] = r.0.as_slice() {
            if p.as_ident()
                .is_some_and(|i| i.value.eq_ignore_ascii_case(name))
            {
                n += 1;
            }
        }
        ControlFlow::<()>::Continue(())
    });
    n
}

/// Whether `name` is the right side of a LEFT JOIN in `s`'s FROM clause
/// (MySQL 8 refuses that, 3576: the work table must drive the join).
fn left_join_inner(s: &ast::Select, name: &str) -> bool {
    s.from.iter().flat_map(|t| &t.joins).any(|j| {
        matches!(
            j.join_operator,
            ast::JoinOperator::Left(_) | ast::JoinOperator::LeftOuter(_)
        ) && matches!(&j.relation, ast::TableFactor::Table { name: n, .. }
            if n.0.len() == 1
                && n.0[0].as_ident().is_some_and(|i| i.value.eq_ignore_ascii_case(name)))
    })
}

/// Whether a FROM clause names `name` directly (not in a subquery).
fn in_from(s: &ast::Select, name: &str) -> bool {
    let is = |f: &ast::TableFactor| match f {
        ast::TableFactor::Table { name: n, .. } => {
            n.0.len() == 1
                && n.0[0]
                    .as_ident()
                    .is_some_and(|i| i.value.eq_ignore_ascii_case(name))
        }
        _ => false,
    };
    s.from
        .iter()
        .any(|t| is(&t.relation) || t.joins.iter().any(|j| is(&j.relation)))
}

/// Plans a reference to the recursive CTE `cte`: the UNION source (see the
/// module doc), with its column names. Returns the plan and the next
/// placeholder number.
#[inline(never)]
pub(super) fn plan_recursive(
    ctx: &PlanContext<'_>,
    cte: &CteDef,
    id: usize,
) -> Result<(SetOpPlan, Vec<String>)> {
    let name = cte.name.as_str();
    let q = cte.query.as_ref();
    let mut blocks = Vec::new();
    let mut all = true;
    if !flatten(&q.body, &mut blocks, &mut all) {
        return Err(Error::RecursiveCte(CteRule::RequiresUnion, name.into()));
    }
    if q.order_by.is_some() || q.limit_clause.is_some() {
        return Err(Error::Unsupported(
            "ORDER BY / LIMIT over a recursive Common Table Expression".into(),
        ));
    }
    let refs: Vec<usize> = blocks.iter().map(|b| count_refs(*b, name)).collect();
    let first = refs.iter().position(|&n| n > 0);
    let first = match first {
        Some(f) if f > 0 && refs[f..].iter().all(|&n| n > 0) => f,
        _ => return Err(Error::RecursiveCte(CteRule::NonRecursiveFirst, name.into())),
    };
    for b in &blocks[first..] {
        let ok = match b {
            ast::SetExpr::Select(s) => {
                if s.distinct.is_some() {
                    return Err(Error::Unsupported(
                        "ORDER BY / LIMIT / SELECT DISTINCT in recursive query block of Common Table Expression".into(),
                    ));
                }
                if count_refs(*b, name) == 1 && left_join_inner(s, name) {
                    return Err(Error::RecursiveCte(
                        CteRule::ForbiddenJoinOrder,
                        name.into(),
                    ));
                }
                count_refs(*b, name) == 1 && in_from(s, name)
            }
            ast::SetExpr::Query(_) => {
                return Err(Error::Unsupported(
                    "ORDER BY / LIMIT / SELECT DISTINCT in recursive query block of Common Table Expression".into(),
                ))
            }
            _ => false,
        };
        if !ok {
            return Err(Error::RecursiveCte(CteRule::SingleReference, name.into()));
        }
    }
    let query = |body: ast::SetExpr| {
        let mut out = q.clone();
        out.with = None;
        out.body = Box::new(body);
        out
    };
    // The seed: its blocks as one query (their UNION).
    let mut seed_body = blocks[0].clone();
    for b in &blocks[1..first] {
        seed_body = ast::SetExpr::SetOperation {
            op: ast::SetOperator::Union,
            set_quantifier: if all {
                ast::SetQuantifier::All
            } else {
                ast::SetQuantifier::Distinct
            },
            left: Box::new(seed_body),
            right: Box::new((*b).clone()),
        };
    }
    let (seed, mut params, _) = plan_query(ctx, &query(seed_body), &[], 0, cte.params)?;
    let width = seed.visible;
    let columns: Vec<String> = if cte.columns.is_empty() {
        seed.columns[..width]
            .iter()
            .map(|c| c.name.clone())
            .collect()
    } else if cte.columns.len() == width {
        cte.columns.clone()
    } else {
        return Err(Error::Unsupported(
            "a derived column list of another length".into(),
        ));
    };
    let work = Arc::new(WorkTable {
        id,
        columns: columns.clone(),
        kinds: seed.kinds[..width].to_vec(),
        colls: seed.colls[..width].to_vec(),
    });
    let mut operands = vec![seed];
    // The recursive blocks see the CTE as the work table.
    ctx.ctes.borrow_mut().push(CteDef {
        work: Some(work.clone()),
        recursive: false,
        ..cte.clone()
    });
    let planned = (|| -> Result<()> {
        for b in &blocks[first..] {
            let (plan, next, _) = plan_query(ctx, &query((*b).clone()), &[], 0, params)?;
            params = next;
            if plan.grouped || !plan.windows().is_empty() {
                return Err(Error::RecursiveCte(
                    CteRule::ForbidsAggregation,
                    name.into(),
                ));
            }
            if plan.visible != width {
                return Err(Error::SetOpColumnCount);
            }
            operands.push(plan);
        }
        Ok(())
    })();
    ctx.ctes.borrow_mut().pop();
    planned?;
    let kinds = work.kinds.clone();
    let colls = work.colls.clone();
    let cols: Vec<Column> = operands[0].columns[..width]
        .iter()
        .zip(&columns)
        .map(|(c, n)| {
            let mut c = c.clone();
            c.name = n.clone();
            c
        })
        .collect();
    Ok((
        SetOpPlan {
            op: SetOp::Union,
            all,
            operands,
            kinds,
            colls,
            columns: cols,
            recursion: Some(Recursion {
                first_recursive: 1,
                work: id,
            }),
        },
        columns,
    ))
}

/// The blocks of a UNION chain, left to right; `false` when `e` is not a
/// UNION. `all` is cleared by any UNION DISTINCT.
fn flatten<'q>(e: &'q ast::SetExpr, out: &mut Vec<&'q ast::SetExpr>, all: &mut bool) -> bool {
    match e {
        ast::SetExpr::SetOperation {
            op: ast::SetOperator::Union,
            set_quantifier,
            left,
            right,
        } => {
            if !matches!(set_quantifier, ast::SetQuantifier::All) {
                *all = false;
            }
            if !flatten(left, out, all) {
                out.push(left);
            }
            out.push(right);
            true
        }
        _ => false,
    }
}
