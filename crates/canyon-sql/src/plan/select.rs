//! Planning SELECT queries: FROM sources, join order, an access path per join
//! step, and the frame every expression is evaluated over.
//!
//! # Frames
//! A query block evaluates its expressions over one *frame*: first the values of
//! the enclosing query's frame (for a correlated subquery; none at top level),
//! then the columns of each FROM source, at fixed offsets. `Expr::Column(i)` is
//! frame position `i`. A single-table query's frame is exactly the table's row,
//! so the common OLTP statement pays nothing for the generality.
//!
//! # Join steps
//! Sources are joined by nested loops in an order the planner chooses: a step
//! binds one source's columns into the frame for each of its rows, then runs the
//! next step. A step reads its table through an access path chosen with the
//! columns of the already-bound sources as constants (`Expr::Bound`): an equality
//! `inner.k = outer.c` on an index prefix is an index lookup per outer row
//! (index nested-loop join). A derived table, or a table without a usable index
//! when an equality with bound columns exists, is read once, kept in memory and
//! probed through a hash table on the equality columns (hash join).
//!
//! # Join order
//! Greedy: at each position, the source expected to read the fewest rows per
//! row of the sources already placed. For a table that is the estimate of its
//! best access path given the placed sources' columns as constants, from the
//! table's statistics ([`crate::catalog::stats`]: rows / distinct values of the fixed key
//! prefix); a table never analysed is ranked by the shape of its best path
//! (full unique key < index equality < range < scan, `shape_cost`). A hash
//! probe counts as a few rows; a derived table without one as many. Ties go to
//! FROM order. A LEFT JOIN's inner source keeps its place after everything left
//! of it in FROM, and sources after it stay after it, which is always a valid
//! order. Greedy is not exhaustive: with up to six tables and selective keys the
//! cheapest next step is nearly always part of a good plan, and EXPLAIN shows
//! the choice.
//!
//! # Predicates
//! WHERE (and inner-join ON) conjuncts are checked at the first step where every
//! source they read is bound; a LEFT JOIN's ON conjuncts decide whether its
//! inner row matches (else the inner columns are NULL), and WHERE conjuncts that
//! read the inner source are checked after that decision. Conjuncts that read
//! no source of this block run once before any step. A conjunct on a
//! single-table derived table's grouping columns is also pushed into it
//! (`push_into_derived`), so the derived table reads by key. A block joins at
//! most 61 sources, as in MySQL (error 1116).
//!
//! # Set operations and WITH
//! A query whose body is a UNION, INTERSECT or EXCEPT is planned as a block
//! over one source that produces its rows (`SourceKind::SetOp`, see
//! [`crate::plan::setop`]), so ORDER BY and LIMIT over it are this planner's. A
//! WITH clause puts its common table expressions in scope
//! (`PlanContext::ctes`); each reference plans the CTE's body as a derived
//! table, so a CTE read twice runs twice (MySQL materialises it once; for
//! OLTP-sized CTEs the difference is the second read). A CTE of WITH
//! RECURSIVE that reads itself is planned by [`crate::plan::recursive`].
//!
//! # Window functions
//! A window function call is bound like an aggregate ([`AggCall`] with its
//! window, `crate::plan::bind_window`); the plan keeps the calls after the
//! grouping aggregates ([`SelectPlan::windows_from`]) and execution
//! evaluates them after HAVING and before the select list, DISTINCT, ORDER
//! BY and LIMIT (`crate::exec::window`). A block with windows never stops
//! its scan at LIMIT nor takes its order from the access path.
//!
//! # Files
//! This file holds the plan's shape (frames, sources, join steps) and the
//! planning of a query block from start to end ([`plan_select`],
//! [`plan_subquery`]); its steps live beside it: `from.rs` (the FROM clause:
//! sources, derived tables, CTE references, ON / USING / NATURAL conditions),
//! `clauses.rs` (the select list, WHERE, GROUP BY, HAVING, ORDER BY, LIMIT)
//! and `join.rs` (pushed-down conjuncts, join order, access paths, predicates
//! per step).

use crate::catalog::Table;
use crate::expr::{AggCall, Expr, SubqueryExpr, SubqueryPlan};
use crate::plan::access::Access;
use crate::plan::bind::{Binder, Scope};
use crate::plan::clauses::{bind_clauses, Clauses};
use crate::plan::from::SystemSource;
use crate::plan::from::{From, FromItem};
use crate::plan::join::{plan_joins, push_into_derived, push_into_system};
use crate::plan::setop::{outer_block, SetOpPlan};
use crate::plan::{CteDef, PlanContext};
use crate::types::collation::Collation;
use crate::types::result::Column;
use crate::types::{expr_column, table_column, ExprKind};
use canyon_common::{Error, Result};
use sqlparser::ast;
use std::sync::Arc;

/// Row locking requested by a SELECT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockMode {
    /// A consistent (snapshot) read.
    None,
    /// FOR SHARE, LOCK IN SHARE MODE: lock each row shared (and, above READ
    /// COMMITTED, the ranges read) and read the latest committed version.
    Share,
    /// FOR UPDATE: as `Share` with exclusive row locks.
    Update,
}

impl LockMode {
    /// Whether the block locks what it reads.
    pub fn locks(self) -> bool {
        self != LockMode::None
    }

    /// The row lock mode it takes (`None` for a consistent read).
    pub fn row_mode(self) -> Option<canyon_txn::LockMode> {
        match self {
            LockMode::None => None,
            LockMode::Share => Some(canyon_txn::LockMode::Shared),
            LockMode::Update => Some(canyon_txn::LockMode::Exclusive),
        }
    }
}

/// What a FROM source reads.
#[derive(Debug)]
pub enum SourceKind {
    /// A base table.
    Table(Arc<Table>),
    /// A derived table `(SELECT ...) AS name`, materialised once per execution.
    Derived(Box<SelectPlan>),
    /// An `information_schema` table, generated once per execution (see
    /// [`crate::catalog::infoschema`]), with the filters pushed into its generator.
    System(SystemSource),
    /// A UNION, INTERSECT or EXCEPT, materialised once per execution (see
    /// [`crate::plan::setop`]); also a recursive CTE.
    SetOp(Box<SetOpPlan>),
    /// Inside a recursive CTE's recursive block, the CTE itself: the rows
    /// the previous round added (see [`crate::plan::recursive`]).
    WorkTable(Arc<crate::plan::recursive::WorkTable>),
}

/// One FROM source.
#[derive(Debug)]
pub struct Source {
    /// The name it is referred to by.
    pub name: String,
    /// What it reads.
    pub kind: SourceKind,
    /// Frame position of its first column.
    pub offset: usize,
    /// Number of columns.
    pub width: usize,
    /// The columns any expression reads (`None`: all), for partial decoding.
    pub needed: Option<Vec<bool>>,
    /// A base table's index hints (USE / FORCE / IGNORE INDEX), for the
    /// access path chooser.
    pub index_hints: Option<crate::plan::access::IndexHints>,
}

/// One nested-loop join step.
#[derive(Debug)]
pub struct Step {
    /// Index into [`SelectPlan::sources`].
    pub source: usize,
    /// Key ranges of a table source; range bounds may read bound columns
    /// (`Expr::Bound`) and are evaluated over the frame.
    pub access: Access,
    /// Hash-join keys: (source column, probe expression over the frame). When
    /// present (and always for derived tables) the source is materialised once
    /// and probed; otherwise a table is read through `access`.
    pub hash_keys: Vec<(usize, Expr)>,
    /// Whether the source is materialised (derived tables, hash joins): read
    /// once through `access` (whose bounds then read no bound column) per
    /// statement execution, and kept.
    pub materialize: bool,
    /// Checked on each candidate row (over the frame); for a LEFT JOIN step these
    /// are its ON conjuncts and decide "matched".
    pub filter: Option<Expr>,
    /// LEFT JOIN: this step starts the join's inner side, steps up to
    /// `group_end`; when no combination of their rows reaches `group_end`,
    /// their sources are bound to NULLs once.
    pub left: bool,
    /// The step after a LEFT JOIN's inner side (`k + 1` for a single
    /// source; further for a parenthesised join, see `crate::plan::from`).
    pub group_end: usize,
    /// For a LEFT JOIN step: WHERE conjuncts (and conditions of the joins
    /// around it) checked after the match decision, for matched and
    /// NULL-extended rows alike.
    pub post_filter: Option<Expr>,
    /// A WHERE `MATCH ... AGAINST` over this step's table that reads its
    /// rows through the FULLTEXT index instead of the full scan `access`
    /// would make (`crate::plan::join`'s `fulltext_driver`).
    pub fulltext: Option<Box<crate::expr::MatchExpr>>,
}

/// A planned SELECT.
#[derive(Debug)]
pub struct SelectPlan {
    /// Frame positions holding the enclosing query's frame (0 at top level).
    pub outer_len: usize,
    /// Frame width.
    pub frame_len: usize,
    /// FROM sources in FROM order.
    pub sources: Vec<Source>,
    /// Join steps in execution order.
    pub steps: Vec<Step>,
    /// Conjuncts that read no source of this block, checked once first.
    pub pre_filter: Option<Expr>,
    /// Single-table fast path: the table, when the query reads exactly one base
    /// table, is not correlated and has no subqueries (then `access`, `filter`
    /// and `needed` describe the whole read).
    pub table: Option<Arc<Table>>,
    /// The single table's access path.
    pub access: Access,
    /// The whole WHERE clause (re-checked on every row of the single-table path
    /// unless `filter_implied`).
    pub filter: Option<Expr>,
    /// Whether reading `access`'s ranges already evaluates `filter`
    /// ([`Access::implies`]); the re-check is skipped when the bounds also
    /// convert exactly at run time ([`Access::bounds_exact`]).
    pub filter_implied: bool,
    /// Aggregates referenced by projection / HAVING / ORDER BY: the grouping
    /// ones, then from [`SelectPlan::windows_from`] on the window function
    /// calls (`Expr::Agg(i)` reads either: see `crate::exec::window`).
    pub aggs: Vec<AggCall>,
    /// Where the window function calls start in `aggs` (`aggs.len()`: none).
    pub windows_from: usize,
    /// Whether rows are grouped (aggregates or GROUP BY present).
    pub grouped: bool,
    /// GROUP BY expressions.
    pub group_by: Vec<Expr>,
    /// HAVING.
    pub having: Option<Expr>,
    /// Output expressions: visible columns, then hidden sort keys.
    pub projection: Vec<Expr>,
    /// Number of visible columns.
    pub visible: usize,
    /// Result-set metadata of the visible columns.
    pub columns: Arc<[Column]>,
    /// Kinds of the visible columns.
    pub kinds: Vec<ExprKind>,
    /// DISTINCT.
    pub distinct: bool,
    /// The collation of each projection column (visible and hidden) that is a
    /// string under a collation other than bytewise: DISTINCT and ORDER BY
    /// compare under it. (`None`: MySQL's type rules, strings bytewise.)
    pub colls: Vec<Option<Collation>>,
    /// Likewise for each GROUP BY expression.
    pub group_colls: Vec<Option<Collation>>,
    /// ORDER BY as (output position, descending).
    pub order_by: Vec<(usize, bool)>,
    /// Whether the access path already yields rows in ORDER BY order.
    pub order_from_access: bool,
    /// LIMIT.
    pub limit: Option<Expr>,
    /// OFFSET.
    pub offset: Option<Expr>,
    /// Row locking.
    pub lock: LockMode,
    /// Whether any expression of this block holds a subquery.
    pub has_subqueries: bool,
    /// The single table's columns any expression reads (`None`: all).
    pub needed: Option<Vec<bool>>,
}

impl SelectPlan {
    /// The grouping aggregates (without the window function calls).
    pub fn group_aggs(&self) -> &[AggCall] {
        &self.aggs[..self.windows_from]
    }

    /// The window function calls, evaluated after grouping and HAVING.
    pub fn windows(&self) -> &[AggCall] {
        &self.aggs[self.windows_from..]
    }
}

/// The select plan is what a subquery's node in the expression tree holds,
/// handed down to `crate::expr` as a [`SubqueryPlan`] (the tree cannot name
/// this layer); [`select_plan`] gets it back.
impl SubqueryPlan for SelectPlan {
    fn kinds(&self) -> &[ExprKind] {
        &self.kinds
    }
    fn colls(&self) -> &[Option<Collation>] {
        &self.colls
    }
    fn outer_len(&self) -> usize {
        self.outer_len
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn into_any(self: Arc<Self>) -> Arc<dyn std::any::Any + Send + Sync> {
        self
    }
}

/// The select plan of a subquery. Every subquery's plan is one (the binder
/// makes them: [`Binder`]'s `subquery`); any other is an internal error, not
/// a panic.
pub fn select_plan(p: &dyn SubqueryPlan) -> Result<&SelectPlan> {
    p.as_any()
        .downcast_ref::<SelectPlan>()
        .ok_or_else(|| Error::Internal("a subquery's plan is not a select plan".into()))
}

/// [`select_plan`], keeping the plan shared (EXPLAIN's list of blocks).
/// `None` where the plan is not a select plan.
pub fn shared_select_plan(p: &Arc<dyn SubqueryPlan>) -> Option<Arc<SelectPlan>> {
    Arc::clone(p).into_any().downcast::<SelectPlan>().ok()
}

/// Marks the frame positions `e` reads; a subquery marks everything (it may
/// read any column of the enclosing frame).
fn mark_columns(e: &Expr, needed: &mut [bool]) {
    e.visit_columns(
        &mut |i| {
            if let Some(n) = needed.get_mut(i) {
                *n = true;
            }
        },
        &mut |_sq: &SubqueryExpr| {},
    );
    if e.has_subquery() {
        needed.iter_mut().for_each(|n| *n = true);
    }
}

/// Every base table a plan reads — its sources, its derived tables' and its
/// subqueries' — for privilege checks (duplicates possible).
pub fn tables_read(plan: &SelectPlan, out: &mut Vec<Arc<Table>>) -> Result<()> {
    for s in &plan.sources {
        match &s.kind {
            SourceKind::Table(t) => out.push(t.clone()),
            SourceKind::Derived(d) => tables_read(d, out)?,
            SourceKind::SetOp(sp) => {
                for p in &sp.operands {
                    tables_read(p, out)?;
                }
            }
            // information_schema needs no grant; its rows are filtered by the
            // account's privileges instead. A work table reads the CTE
            // whose operands are listed where it is planned.
            SourceKind::System(_) | SourceKind::WorkTable(_) => {}
        }
    }
    let exprs = plan
        .projection
        .iter()
        .chain(plan.filter.iter())
        .chain(plan.pre_filter.iter())
        .chain(&plan.group_by)
        .chain(plan.having.iter())
        .chain(plan.aggs.iter().flat_map(|a| a.exprs()))
        .chain(
            plan.steps
                .iter()
                .flat_map(|st| st.filter.iter().chain(st.post_filter.iter())),
        );
    for e in exprs {
        subquery_tables(e, out)?;
    }
    Ok(())
}

/// The tables read by the subqueries inside `e`.
pub fn subquery_tables(e: &Expr, out: &mut Vec<Arc<Table>>) -> Result<()> {
    let mut done = Ok(());
    e.visit_columns(&mut |_| {}, &mut |sq| {
        if done.is_ok() {
            done = select_plan(sq.plan.as_ref()).and_then(|p| tables_read(p, out));
        }
    });
    done
}

/// Plans a top-level SELECT query.
pub fn plan_select(ctx: &PlanContext<'_>, q: &ast::Query) -> Result<SelectPlan> {
    plan_query(ctx, q, &[], 0, 0).map(|(p, _, _)| p)
}

/// Plans a subquery whose enclosing frame has `outer_len` positions described by
/// `scopes`, numbering its placeholders from `params`. Returns the plan, the next
/// placeholder number and the smallest enclosing position it reads (`Some`:
/// correlated).
pub fn plan_subquery(
    ctx: &PlanContext<'_>,
    q: &ast::Query,
    scopes: &[Scope],
    outer_len: usize,
    params: usize,
) -> Result<(SelectPlan, usize, Option<usize>)> {
    plan_query(ctx, q, scopes, outer_len, params)
}

/// Plans a query with a WITH clause: its common table expressions are in
/// scope (innermost first) while the body is planned, and each reference
/// plans the CTE's body as a derived table (`From::cte_reference`).
/// Placeholders are numbered in textual order: the CTEs' first.
fn plan_with(
    ctx: &PlanContext<'_>,
    q: &ast::Query,
    with: &ast::With,
    outer_scopes: &[Scope],
    outer_len: usize,
    params_start: usize,
) -> Result<(SelectPlan, usize, Option<usize>)> {
    if with.cte_tables.len() > canyon_common::MAX_WITH_ELEMENTS {
        return Err(Error::TooManyWithElements);
    }
    let base = ctx.ctes.borrow().len();
    let mut params = params_start;
    let mut defs = Vec::with_capacity(with.cte_tables.len());
    for (i, cte) in with.cte_tables.iter().enumerate() {
        if cte.materialized.is_some() || cte.from.is_some() {
            return Err(Error::Unsupported("this WITH clause".into()));
        }
        let name = cte.alias.name.value.clone();
        if with.cte_tables[..i]
            .iter()
            .any(|c| c.alias.name.value == name)
        {
            return Err(Error::NonUniqueTable(name));
        }
        defs.push(CteDef {
            name,
            columns: cte
                .alias
                .columns
                .iter()
                .map(|c| c.name.value.clone())
                .collect(),
            query: std::sync::Arc::new(crate::parse::limits::clone_query(&cte.query)),
            params,
            visible: base + i,
            recursive: with.recursive
                && crate::plan::recursive::references(&cte.query, &cte.alias.name.value),
            work: None,
        });
        params += crate::parse::limits::count_placeholders(&cte.query);
    }
    ctx.ctes.borrow_mut().extend(defs);
    let mut body = crate::parse::limits::clone_query(q);
    body.with = None;
    let r = plan_query(ctx, &body, outer_scopes, outer_len, params);
    ctx.ctes.borrow_mut().truncate(base);
    r
}

/// Plans one query block (see [`plan_subquery`] for the arguments).
pub(super) fn plan_query(
    ctx: &PlanContext<'_>,
    q: &ast::Query,
    outer_scopes: &[Scope],
    outer_len: usize,
    params_start: usize,
) -> Result<(SelectPlan, usize, Option<usize>)> {
    crate::parse::limits::check_stack()?;
    ctx.checkpoint()?;
    if let Some(with) = &q.with {
        return plan_with(ctx, q, with, outer_scopes, outer_len, params_start);
    }
    if q.fetch.is_some() || !q.pipe_operators.is_empty() {
        return Err(Error::Unsupported("this SELECT form".into()));
    }
    let select = match q.body.as_ref() {
        ast::SetExpr::Select(s) => s,
        ast::SetExpr::Query(inner) if q.order_by.is_none() && q.limit_clause.is_none() => {
            return plan_query(ctx, inner, outer_scopes, outer_len, params_start)
        }
        body @ ast::SetExpr::SetOperation { .. } => {
            let outer = outer_block(q, crate::plan::setop::op_name(body))?;
            return plan_query(ctx, &outer, outer_scopes, outer_len, params_start);
        }
        _ => return Err(Error::Unsupported("this SELECT form".into())),
    };
    if select.into.is_some() {
        return Err(Error::Unsupported("SELECT ... INTO".into()));
    }
    let (block, params_end) = bind_block(ctx, q, select, outer_scopes, outer_len, params_start)?;
    let min_outer_ref = block.min_outer_ref;
    let plan = plan_block(block)?;
    Ok((plan, params_end, min_outer_ref))
}

/// A query block bound (steps 1 to 6 of [`plan_query`]), before its join is
/// planned.
struct Block {
    /// Frame positions holding the enclosing query's frame.
    outer_len: usize,
    /// Frame width.
    frame_len: usize,
    /// FROM sources in FROM order.
    sources: Vec<Source>,
    /// How each source joins the ones before it.
    items: Vec<FromItem>,
    /// Whether the join order is the written one ([`From::fixed_order`]).
    fixed_order: bool,
    /// The kind of each frame position.
    frame_kinds: Vec<ExprKind>,
    /// The table, when the block reads exactly one base table and is not a
    /// subquery.
    single_table: Option<Arc<Table>>,
    /// The clauses after FROM.
    clauses: Clauses,
    /// Aggregates referenced by projection / HAVING / ORDER BY, window
    /// function calls last (see [`SelectPlan::aggs`]).
    aggs: Vec<AggCall>,
    /// See [`SelectPlan::windows_from`].
    windows_from: usize,
    /// Whether rows are grouped (aggregates or GROUP BY present).
    grouped: bool,
    /// Row locking.
    lock: LockMode,
    /// DISTINCT.
    distinct: bool,
    /// See [`SelectPlan::colls`].
    colls: Vec<Option<Collation>>,
    /// See [`SelectPlan::group_colls`].
    group_colls: Vec<Option<Collation>>,
    /// The smallest enclosing frame position the block reads (`Some`:
    /// correlated).
    min_outer_ref: Option<usize>,
}

/// Binds the query block `select` of `q`: FROM, then its other clauses
/// (steps 1 to 6), its row locking and DISTINCT, and the collations of its
/// output. Returns the block and the next placeholder number.
fn bind_block(
    ctx: &PlanContext<'_>,
    q: &ast::Query,
    select: &ast::Select,
    outer_scopes: &[Scope],
    outer_len: usize,
    params_start: usize,
) -> Result<(Block, usize)> {
    // 1. FROM: sources, derived tables planned, ON conditions bound. The select
    //    list comes first in the text, so its placeholders are numbered first.
    let projection_params: usize = select
        .projection
        .iter()
        .map(crate::parse::limits::count_placeholders)
        .sum();
    let from = From::plan(
        ctx,
        select,
        outer_scopes,
        outer_len,
        params_start + projection_params,
    )?;
    let after_from_params = from.params;
    let frame_len = from.next_offset;

    let mut all_scopes = outer_scopes.to_vec();
    all_scopes.extend(from.scopes.iter().cloned());
    let single_table = match from.sources.as_slice() {
        [Source {
            kind: SourceKind::Table(t),
            ..
        }] if outer_len == 0 => Some(t.clone()),
        _ => None,
    };
    let mut b = Binder::new(None, None);
    b.table = single_table.as_deref();
    b.scopes = all_scopes;
    b.own_from = outer_scopes.len();
    b.outer_len = outer_len;
    b.frame_len = frame_len;
    b.plan_ctx = Some(ctx);
    b.conn_coll = ctx.conn_coll;
    b.params = params_start;
    b.min_outer_ref = from.min_outer_ref;

    // 2. to 6.: the select list, WHERE, GROUP BY, HAVING, ORDER BY, LIMIT.
    let clauses = bind_clauses(
        &mut b,
        q,
        select,
        &from.scopes,
        &from.star,
        params_start + projection_params,
        after_from_params,
    )?;

    let grouped = b.aggs.iter().any(|a| a.window.is_none()) || !clauses.group_by.is_empty();
    let lock = match q.locks.as_slice() {
        [] => LockMode::None,
        [l] if l.of.is_none() && l.nonblock.is_none() => match l.lock_type {
            ast::LockType::Share => LockMode::Share,
            ast::LockType::Update => LockMode::Update,
        },
        _ => return Err(Error::Unsupported("NOWAIT / SKIP LOCKED / OF".into())),
    };
    let distinct = match &select.distinct {
        None | Some(ast::Distinct::All) => false,
        Some(ast::Distinct::Distinct) => true,
        Some(ast::Distinct::On(_)) => return Err(Error::Unsupported("DISTINCT ON".into())),
    };
    // Collations of the output and grouping columns (see `SelectPlan::colls`),
    // while the binder still knows the scopes and aggregates.
    let non_bytewise = |e: &Expr| b.derive(e).map(|d| d.0).filter(|c| !c.is_bytewise());
    let colls: Vec<Option<Collation>> = clauses.projection.iter().map(non_bytewise).collect();
    let group_colls: Vec<Option<Collation>> = clauses.group_by.iter().map(non_bytewise).collect();
    let (aggs, windows_from, clauses) = windows_last(std::mem::take(&mut b.aggs), clauses);
    let params_end = b.params;
    let min_outer_ref = b.min_outer_ref;
    let all_scopes = std::mem::take(&mut b.scopes);
    drop(b);

    // The kind of each frame position (result-set metadata, hash keys).
    let mut frame_kinds = vec![ExprKind::Null; frame_len];
    for s in &all_scopes {
        for (i, k) in s.kinds.iter().enumerate() {
            if let Some(slot) = frame_kinds.get_mut(s.offset + i) {
                *slot = *k;
            }
        }
    }
    let block = Block {
        outer_len,
        frame_len,
        sources: from.sources,
        items: from.items,
        fixed_order: from.fixed_order,
        frame_kinds,
        single_table,
        clauses,
        aggs,
        windows_from,
        grouped,
        lock,
        distinct,
        colls,
        group_colls,
        min_outer_ref,
    };
    Ok((block, params_end))
}

/// Moves the window function calls after the grouping aggregates (the
/// binder collects both in textual order), renumbering every `Expr::Agg`
/// of the clauses and of the calls themselves. Returns the calls, where the
/// window ones start, and the clauses.
#[inline(never)]
fn windows_last(aggs: Vec<AggCall>, mut c: Clauses) -> (Vec<AggCall>, usize, Clauses) {
    let windows_from = aggs.iter().filter(|a| a.window.is_none()).count();
    if windows_from == aggs.len() {
        return (aggs, windows_from, c);
    }
    let mut map = vec![0; aggs.len()];
    let (mut plain, mut win) = (0, windows_from);
    for (i, a) in aggs.iter().enumerate() {
        let slot = if a.window.is_none() {
            &mut plain
        } else {
            &mut win
        };
        map[i] = *slot;
        *slot += 1;
    }
    let remap = |e: &Expr| match e {
        Expr::Agg(i) => Some(Expr::Agg(map[*i])),
        _ => None,
    };
    let mut out: Vec<Option<AggCall>> = vec![None; aggs.len()];
    for (i, a) in aggs.iter().enumerate() {
        out[map[i]] = Some(a.rewrite(&remap));
    }
    let all = |v: &mut Vec<Expr>| {
        for e in v.iter_mut() {
            *e = e.rewrite(&remap);
        }
    };
    all(&mut c.projection);
    all(&mut c.group_by);
    c.having = c.having.map(|h| h.rewrite(&remap));
    let out = out
        .into_iter()
        .map(|a| a.expect("every call has a slot"))
        .collect();
    (out, windows_from, c)
}

/// Plans a bound block: its result-set metadata, then step 7 (conjuncts, join
/// order, access paths) and which columns each source decodes.
fn plan_block(block: Block) -> Result<SelectPlan> {
    let Block {
        outer_len,
        frame_len,
        mut sources,
        items,
        fixed_order,
        frame_kinds,
        single_table,
        clauses,
        aggs,
        windows_from,
        grouped,
        lock,
        distinct,
        colls,
        group_colls,
        min_outer_ref,
    } = block;
    let Clauses {
        projection,
        names,
        visible,
        filter,
        group_by,
        having,
        order_by,
        limit,
        offset,
    } = clauses;
    // A view merged as the only source put its WHERE on its FROM item.
    let mut items = items;
    let filter = crate::plan::view::fold_single_item(&mut items, filter);
    let (mut projection, mut order_by) = (projection, order_by);
    relevance_order(
        filter.as_ref(),
        grouped || distinct,
        &mut projection,
        &mut order_by,
    );

    // Result-set metadata.
    let kinds: Vec<ExprKind> = projection[..visible]
        .iter()
        .map(|e| e.kind(&frame_kinds, &aggs))
        .collect();
    let columns = result_columns(&names, &projection, &kinds, &sources, &aggs, grouped);

    // 7. Conjuncts, join order, access paths.
    let has_subqueries = projection
        .iter()
        .chain(filter.iter())
        .chain(&group_by)
        .chain(having.iter())
        .chain(aggs.iter().flat_map(|a| a.exprs()))
        .chain(items.iter().filter_map(|i| i.on.as_ref()))
        .any(Expr::has_subquery);
    // MATCH needs the general path's reader for its statistics.
    let has_match = projection
        .iter()
        .chain(filter.iter())
        .chain(having.iter())
        .any(Expr::has_match);
    if let Some(f) = &filter {
        push_into_derived(&mut sources, &items, f);
    }
    push_into_system(&mut sources, &items, filter.as_ref());
    let (steps, pre_filter) = plan_joins(
        &sources,
        &items,
        fixed_order,
        filter.as_ref(),
        outer_len,
        &frame_kinds,
    )?;

    // Which columns each source must decode.
    let mut needed = vec![false; frame_len];
    let exprs = filter
        .iter()
        .chain(&projection)
        .chain(&group_by)
        .chain(having.iter())
        .chain(aggs.iter().flat_map(|a| a.exprs()))
        .chain(items.iter().filter_map(|i| i.on.as_ref()));
    for e in exprs {
        mark_columns(e, &mut needed);
    }
    for s in &mut sources {
        let slice = &needed[s.offset..s.offset + s.width];
        s.needed = (!slice.iter().all(|n| *n)).then(|| slice.to_vec());
    }

    let fast = single_table.is_some() && !has_subqueries && !has_match && min_outer_ref.is_none();
    let (table, access, table_needed) = if fast {
        (
            single_table,
            steps[0].access.clone(),
            sources[0].needed.clone(),
        )
    } else {
        (None, Access::none(), None)
    };
    // Window functions sort the rows their own way (see `crate::exec::window`).
    let windowed = windows_from < aggs.len();
    let order_from_access = match &table {
        Some(t) if !grouped && !distinct && !windowed => {
            access.delivers_order(t, &order_by, &projection)
        }
        _ => false,
    };
    let filter_implied = match (&table, &filter) {
        (Some(t), Some(f)) => access.implies(t, f),
        _ => false,
    };
    Ok(SelectPlan {
        outer_len,
        frame_len,
        sources,
        steps,
        pre_filter,
        table,
        access,
        filter,
        filter_implied,
        aggs,
        windows_from,
        grouped,
        group_by,
        having,
        projection,
        visible,
        columns: columns.into(),
        kinds,
        distinct,
        colls,
        group_colls,
        order_by,
        order_from_access,
        limit,
        offset,
        lock,
        has_subqueries,
        needed: table_needed,
    })
}

/// InnoDB's order for a WHERE clause searched through a FULLTEXT index: with
/// no ORDER BY (and no grouping), a `MATCH ... AGAINST` that is a conjunct
/// of the WHERE clause orders the rows by relevance, highest first (ties in
/// primary-key order: the sort is stable over a primary-key scan). The MATCH
/// becomes a hidden output column sorted descending.
fn relevance_order(
    filter: Option<&Expr>,
    grouped: bool,
    projection: &mut Vec<Expr>,
    order_by: &mut Vec<(usize, bool)>,
) {
    if grouped || !order_by.is_empty() {
        return;
    }
    let Some(m) = filter.and_then(|f| {
        f.conjuncts()
            .into_iter()
            .find(|c| matches!(c, Expr::Match(_)))
    }) else {
        return;
    };
    projection.push(m.clone());
    order_by.push((projection.len() - 1, true));
}

/// The result-set metadata of the visible columns (`names`, `kinds`): one
/// that shows a source's column carries that column's origin (when rows are
/// grouped, only while its output expression is still a plain column).
fn result_columns(
    names: &[(String, Option<usize>)],
    projection: &[Expr],
    kinds: &[ExprKind],
    sources: &[Source],
    aggs: &[AggCall],
    grouped: bool,
) -> Vec<Column> {
    names
        .iter()
        .zip(projection)
        .zip(kinds)
        .map(|(((name, src), e), kind)| {
            let origin = src.and_then(|g| {
                sources
                    .iter()
                    .find(|s| g >= s.offset && g < s.offset + s.width)
                    .map(|s| (s, g - s.offset))
            });
            match origin {
                Some((s, i)) if !grouped || matches!(e, Expr::Column(_)) => match &s.kind {
                    SourceKind::Table(t) => {
                        let c = &t.def.columns[i];
                        let mut flags = 0;
                        if !c.nullable {
                            flags |= crate::types::result::column_flags::NOT_NULL;
                        }
                        if t.def.primary_key.contains(&i) {
                            flags |= crate::types::result::column_flags::PRI_KEY;
                        }
                        if c.auto_increment {
                            flags |= crate::types::result::column_flags::AUTO_INCREMENT;
                        }
                        let mut col =
                            table_column(&t.def.db, &t.def.name, &s.name, &c.name, c.ty, flags);
                        if c.is_year2() {
                            // Shown as two digits (`crate::types::text`).
                            col.length = 2;
                        }
                        col.name = name.clone();
                        col
                    }
                    SourceKind::Derived(d) => {
                        let mut col = d.columns[i].clone();
                        col.table = s.name.clone();
                        col.name = name.clone();
                        col
                    }
                    SourceKind::SetOp(sp) => {
                        let mut col = sp.columns[i].clone();
                        // The block a set operation is planned as names its
                        // source `<union>` etc.; MySQL reports no table there.
                        if !s.name.starts_with('<') {
                            col.table = s.name.clone();
                        }
                        col.name = name.clone();
                        col
                    }
                    SourceKind::WorkTable(_) => {
                        let mut col = expr_column(name, *kind);
                        col.table = s.name.clone();
                        col
                    }
                    SourceKind::System(sys) => {
                        let mut col = expr_column(name, *kind);
                        col.schema = sys.table.schema().to_string();
                        col.table = s.name.clone();
                        col.org_table = sys.table.name().to_string();
                        col.org_name = sys.table.columns()[i].0.to_string();
                        col
                    }
                },
                _ => {
                    let mut col = expr_column(name, *kind);
                    if *kind == ExprKind::Double {
                        if let Some((column_type, decimals)) = real_type(e, sources, aggs) {
                            col.column_type = column_type;
                            col.decimals = decimals;
                        }
                    }
                    col
                }
            }
        })
        .collect()
}

/// The protocol type and decimals of an approximate-number expression
/// whose value comes from FLOAT / DOUBLE columns, as MySQL derives them
/// (`Item::decimals`; 31 is "not fixed"): a column's own (FLOAT(10,5): a
/// FLOAT of 5 decimals), MIN / MAX the argument's type and decimals, SUM a
/// DOUBLE of the argument's decimals, AVG a DOUBLE of 4 more (up to 30),
/// ROUND / TRUNCATE with a number of digits that is no constant a DOUBLE of
/// the argument's decimals, a negation its operand's. The protocol prints a
/// value of fixed decimals with that many digits (`types::text`), so
/// `MIN(c)` of a FLOAT(10,5) column shows `0.00000` as the column does, and
/// a FLOAT's six significant digits (`111111000`). `None`: an expression
/// Canyon types as a plain DOUBLE.
fn real_type(
    e: &Expr,
    sources: &[Source],
    aggs: &[AggCall],
) -> Option<(crate::types::result::ColumnType, u8)> {
    use crate::expr::functions::Func;
    use crate::expr::AggFunc;
    use crate::types::result::ColumnType;
    use crate::types::SqlType;
    const NOT_FIXED: u8 = 31;
    let double_of = |e: &Expr| real_type(e, sources, aggs).map(|(_, d)| (ColumnType::Double, d));
    match e {
        Expr::Column(g) => {
            let s = sources
                .iter()
                .find(|s| *g >= s.offset && *g < s.offset + s.width)?;
            let i = g - s.offset;
            match &s.kind {
                SourceKind::Table(t) => match t.def.columns.get(i)?.ty {
                    SqlType::Float { digits, .. } => {
                        Some((ColumnType::Float, digits.map_or(NOT_FIXED, |(_, d)| d)))
                    }
                    SqlType::Double { digits, .. } => {
                        Some((ColumnType::Double, digits.map_or(NOT_FIXED, |(_, d)| d)))
                    }
                    _ => None,
                },
                SourceKind::Derived(d) => real_column(d.columns.get(i)?),
                SourceKind::SetOp(sp) => real_column(sp.columns.get(i)?),
                _ => None,
            }
        }
        Expr::Neg(x) => real_type(x, sources, aggs),
        Expr::Agg(i) => {
            let a = aggs.get(*i)?;
            let arg = a.arg.as_ref()?;
            match a.func {
                AggFunc::Min | AggFunc::Max => real_type(arg, sources, aggs),
                AggFunc::Sum => double_of(arg),
                AggFunc::Avg => double_of(arg)
                    .map(|(t, d)| (t, if d >= NOT_FIXED { d } else { (d + 4).min(30) })),
                _ => None,
            }
        }
        Expr::Func(Func::Round | Func::Truncate, args)
            if args.len() == 2 && !matches!(args[1], Expr::Literal(_)) =>
        {
            double_of(&args[0])
        }
        _ => None,
    }
}

/// [`real_type`] of a derived table's or set operation's column.
fn real_column(c: &Column) -> Option<(crate::types::result::ColumnType, u8)> {
    use crate::types::result::ColumnType;
    matches!(c.column_type, ColumnType::Float | ColumnType::Double)
        .then_some((c.column_type, c.decimals))
}

/// The kind of the projection's columns, exposed for tests.
pub fn projection_kinds(p: &SelectPlan) -> Vec<ExprKind> {
    p.kinds.clone()
}
