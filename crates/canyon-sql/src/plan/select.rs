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
//! OLTP-sized CTEs the difference is the second read).

use crate::catalog::infoschema::SystemSource;
use crate::catalog::Table;
use crate::expr::{AggCall, Binder, Expr, Scope, SubqueryExpr};
use crate::plan::access::{choose_access_estimated, Access};
use crate::plan::setop::{is_set_op, outer_block, plan_set_op, SetOpPlan};
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
    /// FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE: lock each row and read the latest
    /// committed version. Shared locks are taken as exclusive ones (documented).
    Locking,
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
    /// [`crate::plan::setop`]).
    SetOp(Box<SetOpPlan>),
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
    /// LEFT JOIN: when no row passes `filter`, bind NULLs once.
    pub left: bool,
    /// For a LEFT JOIN step: WHERE conjuncts checked after the match decision.
    pub post_filter: Option<Expr>,
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
    /// Aggregates referenced by projection / HAVING / ORDER BY.
    pub aggs: Vec<AggCall>,
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
pub fn tables_read(plan: &SelectPlan, out: &mut Vec<Arc<Table>>) {
    for s in &plan.sources {
        match &s.kind {
            SourceKind::Table(t) => out.push(t.clone()),
            SourceKind::Derived(d) => tables_read(d, out),
            SourceKind::SetOp(sp) => sp.operands.iter().for_each(|p| tables_read(p, out)),
            // information_schema needs no grant; its rows are filtered by the
            // account's privileges instead.
            SourceKind::System(_) => {}
        }
    }
    let exprs = plan
        .projection
        .iter()
        .chain(plan.filter.iter())
        .chain(plan.pre_filter.iter())
        .chain(&plan.group_by)
        .chain(plan.having.iter())
        .chain(plan.aggs.iter().filter_map(|a| a.arg.as_ref()))
        .chain(
            plan.steps
                .iter()
                .flat_map(|st| st.filter.iter().chain(st.post_filter.iter())),
        );
    for e in exprs {
        subquery_tables(e, out);
    }
}

/// The tables read by the subqueries inside `e`.
pub fn subquery_tables(e: &Expr, out: &mut Vec<Arc<Table>>) {
    e.visit_columns(&mut |_| {}, &mut |sq| tables_read(&sq.plan, out));
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

/// How a source joins the ones before it.
struct FromItem {
    left: bool,
    on: Option<Expr>,
}

/// Planner state for one query block's FROM clause.
struct From<'c> {
    ctx: &'c PlanContext<'c>,
    outer_scopes: &'c [Scope],
    outer_len: usize,
    sources: Vec<Source>,
    scopes: Vec<Scope>,
    items: Vec<FromItem>,
    params: usize,
    min_outer_ref: Option<usize>,
    next_offset: usize,
    /// The frame positions `SELECT *` lists, in order: each FROM item's
    /// columns, with USING / NATURAL joins' coalesced columns once, first.
    star: Vec<usize>,
}

impl From<'_> {
    fn add_source(&mut self, name: String, kind: SourceKind, scope: Scope) -> Result<()> {
        if self.sources.len() >= canyon_common::MAX_JOIN_TABLES {
            return Err(Error::TooManyTables);
        }
        if self.sources.iter().any(|s| s.name == name) {
            return Err(Error::NonUniqueTable(name));
        }
        let width = scope.columns.len();
        self.sources.push(Source {
            name,
            kind,
            offset: self.next_offset,
            width,
            needed: None,
        });
        self.scopes.push(scope);
        self.next_offset += width;
        Ok(())
    }

    fn factor(&mut self, f: &ast::TableFactor) -> Result<()> {
        match f {
            ast::TableFactor::Table {
                name,
                alias,
                args: None,
                ..
            } => {
                if alias.as_ref().is_some_and(|a| !a.columns.is_empty()) {
                    return Err(Error::Unsupported("column aliases on a table".into()));
                }
                if let Some(cte) = self.ctx.cte(name) {
                    let qualifier = alias
                        .as_ref()
                        .map(|a| a.name.value.clone())
                        .unwrap_or_else(|| cte.name.clone());
                    return self.cte_reference(&cte, qualifier);
                }
                if let Some((table, written)) = self.ctx.resolve_system(name)? {
                    let qualifier = alias
                        .as_ref()
                        .map(|a| a.name.value.clone())
                        .unwrap_or(written);
                    let scope = Scope {
                        qualifier: qualifier.clone(),
                        db: crate::catalog::infoschema::NAME.to_string(),
                        columns: table.columns().iter().map(|c| c.0.to_string()).collect(),
                        kinds: table.columns().iter().map(|c| c.1).collect(),
                        // information_schema names compare bytewise, as
                        // MySQL's on a case-sensitive file system.
                        colls: table
                            .columns()
                            .iter()
                            .map(|c| {
                                (c.1 == ExprKind::String).then_some(Collation::Utf8mb4_0900Bin)
                            })
                            .collect(),
                        offset: self.next_offset,
                        coalesced: Vec::new(),
                    };
                    return self.add_source(
                        qualifier,
                        SourceKind::System(SystemSource::new(table)),
                        scope,
                    );
                }
                let t = self.ctx.resolve(name)?;
                let qualifier = alias
                    .as_ref()
                    .map(|a| a.name.value.clone())
                    .unwrap_or_else(|| t.def.name.clone());
                let scope = Scope::of_table(&t, Some(&qualifier), self.next_offset);
                self.add_source(qualifier, SourceKind::Table(t), scope)
            }
            ast::TableFactor::Derived {
                lateral,
                subquery,
                alias,
                ..
            } => {
                if *lateral {
                    return Err(Error::Unsupported("LATERAL".into()));
                }
                let alias = alias.as_ref().ok_or(Error::DerivedNeedsAlias)?;
                let columns = alias.columns.iter().map(|c| c.name.value.clone()).collect();
                self.params =
                    self.derived(subquery, alias.name.value.clone(), columns, self.params)?;
                Ok(())
            }
            ast::TableFactor::NestedJoin { .. } => {
                Err(Error::Unsupported("parenthesised joins".into()))
            }
            _ => Err(Error::Unsupported("this FROM clause".into())),
        }
    }

    /// Adds a derived table named `name` (`alias_columns`: its column list, if
    /// given), its placeholders numbered from `params`; returns the next
    /// number. Not LATERAL: a derived table sees no other source of this FROM
    /// clause and, as in MySQL, no enclosing query either — except the operands
    /// of a set operation, which are planned with the enclosing scopes so that
    /// reading them is refused as unsupported rather than reported unknown.
    fn derived(
        &mut self,
        subquery: &ast::Query,
        name: String,
        alias_columns: Vec<String>,
        params: usize,
    ) -> Result<usize> {
        let plain_set_op = is_set_op(&subquery.body)
            && subquery.with.is_none()
            && subquery.order_by.is_none()
            && subquery.limit_clause.is_none()
            && subquery.locks.is_empty();
        let (kind, mut scope, params) = if plain_set_op {
            let (sp, params) = plan_set_op(
                self.ctx,
                &subquery.body,
                self.outer_scopes,
                self.outer_len,
                params,
            )?;
            let scope = sp.scope(&name, self.next_offset);
            (SourceKind::SetOp(Box::new(sp)), scope, params)
        } else {
            let (mut plan, params, _) = plan_query(self.ctx, subquery, &[], 0, params)?;
            // A derived table is a set: without LIMIT its ORDER BY orders
            // nothing (MySQL ignores it too), so skip the sort.
            if plan.limit.is_none() && plan.offset.is_none() {
                plan.order_by.clear();
            }
            let scope = Scope::of_derived(
                &name,
                plan.columns[..plan.visible]
                    .iter()
                    .map(|c| c.name.clone())
                    .collect(),
                &plan.kinds[..plan.visible.min(plan.kinds.len())],
                &plan.colls[..plan.visible.min(plan.colls.len())],
                self.next_offset,
            );
            (SourceKind::Derived(Box::new(plan)), scope, params)
        };
        if !alias_columns.is_empty() {
            if alias_columns.len() != scope.columns.len() {
                return Err(Error::Unsupported(
                    "a derived column list of another length".into(),
                ));
            }
            scope.columns = alias_columns;
        }
        for (i, c) in scope.columns.iter().enumerate() {
            if scope.columns[..i].iter().any(|d| d.eq_ignore_ascii_case(c)) {
                return Err(Error::DuplicateColumn(c.clone()));
            }
        }
        self.add_source(name, kind, scope)?;
        Ok(params)
    }

    /// Adds a reference to the common table expression `cte` as a derived
    /// table named `name`. Its body is planned at each reference, with the
    /// CTEs defined before it (not after it, nor itself: no recursion) in
    /// scope and its placeholders numbered where its text stands, so that
    /// two references read the same parameters.
    fn cte_reference(&mut self, cte: &CteDef, name: String) -> Result<()> {
        // A CTE that reads the one before it twice doubles the work at each
        // element: 30 of them would plan 2^30 bodies. MySQL materialises a
        // CTE once; until Canyon does, the expansion is bounded.
        let n = self.ctx.cte_expansions.get() + 1;
        if n > crate::parse::limits::MAX_CTE_EXPANSIONS {
            return Err(Error::Unsupported(format!(
                "a WITH clause that expands to more than {} CTE references",
                crate::parse::limits::MAX_CTE_EXPANSIONS
            )));
        }
        self.ctx.cte_expansions.set(n);
        self.ctx.checkpoint()?;
        let hidden = self.ctx.ctes.borrow_mut().split_off(cte.visible);
        let r = self.derived(&cte.query, name, cte.columns.clone(), cte.params);
        self.ctx.ctes.borrow_mut().extend(hidden);
        r.map(|_| ())
    }

    /// Binds a join's ON condition over the sources added so far.
    fn bind_on(&mut self, e: &ast::Expr) -> Result<Expr> {
        let mut all = self.outer_scopes.to_vec();
        all.extend(self.scopes.iter().cloned());
        let mut b = Binder::new(None, None);
        b.scopes = all;
        b.own_from = self.outer_scopes.len();
        b.outer_len = self.outer_len;
        b.frame_len = self.next_offset;
        b.plan_ctx = Some(self.ctx);
        b.conn_coll = self.ctx.conn_coll;
        b.params = self.params;
        b.context = "on clause";
        let bound = b.bind(e)?;
        self.params = b.params;
        if let Some(r) = b.min_outer_ref {
            self.min_outer_ref = Some(self.min_outer_ref.map_or(r, |m| m.min(r)));
        }
        Ok(bound)
    }

    fn table_with_joins(&mut self, twj: &ast::TableWithJoins) -> Result<()> {
        let first = self.sources.len();
        self.factor(&twj.relation)?;
        self.items.push(FromItem {
            left: false,
            on: None,
        });
        // The `SELECT *` order of this FROM item (joins bind tighter than
        // commas, so a USING join sees only the sources of its own item).
        let mut star = self.positions(first);
        for j in &twj.joins {
            let (left, constraint) = match &j.join_operator {
                ast::JoinOperator::Join(c) | ast::JoinOperator::Inner(c) => (false, Some(c)),
                ast::JoinOperator::CrossJoin(c) => (false, Some(c)),
                ast::JoinOperator::Left(c) | ast::JoinOperator::LeftOuter(c) => (true, Some(c)),
                _ => return Err(Error::Unsupported("this join type".into())),
            };
            let right = self.sources.len();
            self.factor(&j.relation)?;
            let mut right_star = self.positions(right);
            let on = match constraint {
                Some(ast::JoinConstraint::On(e)) => Some(self.bind_on(e)?),
                Some(ast::JoinConstraint::None) | None => None,
                Some(ast::JoinConstraint::Using(cols)) => {
                    let names = cols
                        .iter()
                        .map(|c| {
                            c.0.last()
                                .and_then(|p| p.as_ident())
                                .map(|i| i.value.clone())
                                .ok_or_else(|| Error::Syntax("a USING column".into()))
                        })
                        .collect::<Result<Vec<_>>>()?;
                    Some(self.using(first, right, &names, &mut star, &mut right_star)?)
                }
                Some(ast::JoinConstraint::Natural) => {
                    // The columns of the right source that some source to its
                    // left shows under the same unqualified name.
                    let names: Vec<String> = self.scopes[right]
                        .columns
                        .iter()
                        .filter(|c| {
                            self.scopes[first..right]
                                .iter()
                                .any(|s| s.find_unqualified(c).is_some())
                        })
                        .cloned()
                        .collect();
                    if names.is_empty() {
                        // No common column: every pair matches.
                        Some(Expr::Literal(crate::types::value::Value::Int(1)))
                    } else {
                        Some(self.using(first, right, &names, &mut star, &mut right_star)?)
                    }
                }
            };
            if left && on.is_none() {
                return Err(Error::Syntax("LEFT JOIN without ON".into()));
            }
            star.extend(right_star);
            self.items.push(FromItem { left, on });
        }
        self.star.extend(star);
        Ok(())
    }

    /// The frame positions of source `i`'s columns.
    fn positions(&self, i: usize) -> Vec<usize> {
        let s = &self.sources[i];
        (s.offset..s.offset + s.width).collect()
    }

    /// `JOIN right USING (names)` (also NATURAL JOIN): the join condition —
    /// each name's column on the left (the one source among `first..right`
    /// that shows it unqualified; 1054 if none, 1052 if several) equals the
    /// right source's (1054 if it has none) — with the right columns
    /// coalesced into the left ones: an unqualified name means the left
    /// column (for a LEFT JOIN, MySQL's `COALESCE(l, r)` is always `l`), and
    /// `SELECT *` shows it once, the coalesced columns first in the left
    /// side's order (`star`), then the other left columns, then the right
    /// source's others (`right_star`).
    fn using(
        &mut self,
        first: usize,
        right: usize,
        names: &[String],
        star: &mut Vec<usize>,
        right_star: &mut Vec<usize>,
    ) -> Result<Expr> {
        let unknown = |c: &str| Error::UnknownColumn {
            column: c.to_string(),
            context: "from clause".into(),
        };
        let mut front = Vec::new();
        let mut cond: Option<ast::Expr> = None;
        for name in names {
            let mut found = None;
            for s in first..right {
                if let Some(p) = self.scopes[s].find_unqualified(name) {
                    if found.is_some() {
                        return Err(Error::AmbiguousColumn {
                            column: name.clone(),
                            context: "from clause".into(),
                        });
                    }
                    found = Some((s, p));
                }
            }
            let (ls, lp) = found.ok_or_else(|| unknown(name))?;
            let rp = self.scopes[right]
                .find_unqualified(name)
                .ok_or_else(|| unknown(name))?;
            if front.contains(&lp) {
                return Err(Error::DuplicateColumn(name.clone()));
            }
            front.push(lp);
            let local = rp - self.scopes[right].offset;
            self.scopes[right].coalesced.push(local);
            right_star.retain(|p| *p != rp);
            let column = |source: usize| {
                ast::Expr::CompoundIdentifier(vec![
                    ast::Ident::new(self.sources[source].name.clone()),
                    ast::Ident::new(name.clone()),
                ])
            };
            let eq = ast::Expr::BinaryOp {
                left: Box::new(column(ls)),
                op: ast::BinaryOperator::Eq,
                right: Box::new(column(right)),
            };
            cond = Some(match cond {
                None => eq,
                Some(c) => ast::Expr::BinaryOp {
                    left: Box::new(c),
                    op: ast::BinaryOperator::And,
                    right: Box::new(eq),
                },
            });
        }
        let (mut coalesced, rest): (Vec<usize>, Vec<usize>) =
            star.iter().partition(|p| front.contains(p));
        coalesced.extend(rest);
        *star = coalesced;
        let cond = cond.ok_or_else(|| Error::Syntax("USING ()".into()))?;
        self.bind_on(&cond)
    }
}

/// Whether the FROM item is `DUAL`.
fn is_dual(twj: &ast::TableWithJoins) -> bool {
    twj.joins.is_empty()
        && matches!(&twj.relation, ast::TableFactor::Table { name, alias: None, args: None, .. }
            if name.0.len() == 1 && name.to_string().eq_ignore_ascii_case("dual"))
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
    if with.recursive {
        return Err(Error::Unsupported("WITH RECURSIVE".into()));
    }
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
fn plan_query(
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

    // 1. FROM: sources, derived tables planned, ON conditions bound. The select
    //    list comes first in the text, so its placeholders are numbered first.
    let projection_params: usize = select
        .projection
        .iter()
        .map(crate::parse::limits::count_placeholders)
        .sum();
    let mut from = From {
        ctx,
        outer_scopes,
        outer_len,
        sources: Vec::new(),
        scopes: Vec::new(),
        items: Vec::new(),
        params: params_start + projection_params,
        min_outer_ref: None,
        next_offset: outer_len,
        star: Vec::new(),
    };
    let from_list: Vec<&ast::TableWithJoins> = select.from.iter().filter(|t| !is_dual(t)).collect();
    if from_list.len() < select.from.len() && !from_list.is_empty() {
        return Err(Error::Unsupported("DUAL with other tables".into()));
    }
    for twj in from_list {
        from.table_with_joins(twj)?;
    }
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
    b.scopes = all_scopes.clone();
    b.own_from = outer_scopes.len();
    b.outer_len = outer_len;
    b.frame_len = frame_len;
    b.plan_ctx = Some(ctx);
    b.conn_coll = ctx.conn_coll;
    b.params = params_start;
    b.min_outer_ref = from.min_outer_ref;

    // 2. Projection (textual order first, for placeholder numbering).
    b.allow_aggs = true;
    b.context = "field list";
    let mut projection = Vec::new();
    let mut names: Vec<(String, Option<usize>)> = Vec::new(); // (name, source column)
    for item in &select.projection {
        match item {
            ast::SelectItem::UnnamedExpr(e) => {
                let bound = b.bind(e)?;
                let src = if let Expr::Column(i) = bound {
                    Some(i)
                } else {
                    None
                };
                let name = match (e, src) {
                    (ast::Expr::Identifier(id), Some(_)) => id.value.clone(),
                    (ast::Expr::CompoundIdentifier(ids), Some(_)) => {
                        ids.last().map(|i| i.value.clone()).unwrap_or_default()
                    }
                    _ => expr_display_name(e),
                };
                names.push((name, src));
                projection.push(bound);
            }
            ast::SelectItem::ExprWithAlias { expr, alias } => {
                let bound = b.bind(expr)?;
                let src = if let Expr::Column(i) = bound {
                    Some(i)
                } else {
                    None
                };
                names.push((alias.value.clone(), src));
                projection.push(bound);
            }
            ast::SelectItem::Wildcard(_) => {
                if from.scopes.is_empty() {
                    return Err(Error::Syntax("* without a table".into()));
                }
                for &pos in &from.star {
                    let s = from
                        .scopes
                        .iter()
                        .find(|s| pos >= s.offset && pos < s.offset + s.columns.len())
                        .ok_or_else(|| Error::Internal("a * column outside FROM".into()))?;
                    names.push((s.columns[pos - s.offset].clone(), Some(pos)));
                    projection.push(Expr::Column(pos));
                }
            }
            ast::SelectItem::QualifiedWildcard(kind, _) => {
                let q = match kind {
                    ast::SelectItemQualifiedWildcardKind::ObjectName(n) => {
                        n.0.last()
                            .and_then(|p| p.as_ident())
                            .map(|i| i.value.clone())
                            .unwrap_or_default()
                    }
                    _ => return Err(Error::Unsupported("this select item".into())),
                };
                let s = from
                    .scopes
                    .iter()
                    .find(|s| s.qualifier == q)
                    .ok_or_else(|| Error::UnknownTable {
                        db: String::new(),
                        table: q.clone(),
                    })?;
                for (i, c) in s.columns.iter().enumerate() {
                    names.push((c.clone(), Some(s.offset + i)));
                    projection.push(Expr::Column(s.offset + i));
                }
            }
            ast::SelectItem::ExprWithAliases { .. } => {
                return Err(Error::Unsupported("this select item".into()))
            }
        }
    }
    if b.params != params_start + projection_params {
        return Err(Error::Internal(
            "placeholder numbering of the select list".into(),
        ));
    }
    b.params = after_from_params;

    // Output aliases become visible to GROUP BY, HAVING and ORDER BY (not WHERE).
    let aliases: Vec<(String, Expr)> = names
        .iter()
        .zip(&projection)
        .map(|((n, _), e)| (n.clone(), e.clone()))
        .collect();

    // 3. WHERE.
    b.allow_aggs = false;
    b.context = "where clause";
    let filter = select.selection.as_ref().map(|w| b.bind(w)).transpose()?;

    // 4. GROUP BY, HAVING.
    b.context = "group statement";
    b.aliases = aliases;
    let group_by = match &select.group_by {
        ast::GroupByExpr::Expressions(exprs, mods) if mods.is_empty() => exprs
            .iter()
            .map(|e| bind_output_ref(&mut b, e, &names, &projection, true))
            .collect::<Result<Vec<_>>>()?,
        _ => return Err(Error::Unsupported("GROUP BY ALL / WITH ROLLUP".into())),
    };
    b.allow_aggs = true;
    b.context = "having clause";
    // In HAVING a select-list alias hides a FROM column of the same name,
    // unless GROUP BY lists that name as a column (MySQL's rule; Connector/J's
    // DatabaseMetaData.getTables relies on it).
    let grouped_names: Vec<&str> = match &select.group_by {
        ast::GroupByExpr::Expressions(exprs, _) => exprs
            .iter()
            .filter_map(|e| match e {
                ast::Expr::Identifier(id) => Some(id.value.as_str()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    b.alias_first = names
        .iter()
        .map(|(n, _)| n.clone())
        .filter(|n| !grouped_names.iter().any(|g| g.eq_ignore_ascii_case(n)))
        .collect();
    let having = select
        .having
        .as_ref()
        .map(|h| bind_output_ref(&mut b, h, &names, &projection, false))
        .transpose()?;
    b.alias_first.clear();

    // 5. ORDER BY: an output position, an alias, or an expression (hidden column).
    b.context = "order clause";
    let visible = projection.len();
    let mut order_by = Vec::new();
    if let Some(ob) = &q.order_by {
        let exprs = match &ob.kind {
            ast::OrderByKind::Expressions(e) => e,
            ast::OrderByKind::All(_) => return Err(Error::Unsupported("ORDER BY ALL".into())),
        };
        for o in exprs {
            let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
            let pos = match &o.expr {
                // An integer literal is an output position; any other number
                // (`ORDER BY 12.0`, `1e3`) is a constant, as in MySQL.
                ast::Expr::Value(v)
                    if matches!(&v.value, ast::Value::Number(n, _)
                        if n.bytes().all(|c| c.is_ascii_digit())) =>
                {
                    let n: usize = v.value.to_string().parse().unwrap_or(0);
                    if n == 0 || n > visible {
                        return Err(Error::UnknownColumn {
                            column: n.to_string(),
                            context: "order clause".into(),
                        });
                    }
                    n - 1
                }
                ast::Expr::Identifier(id)
                    if names.iter().any(|(n, _)| n.eq_ignore_ascii_case(&id.value)) =>
                {
                    names
                        .iter()
                        .position(|(n, _)| n.eq_ignore_ascii_case(&id.value))
                        .expect("checked by the guard")
                }
                e => {
                    let bound = b.bind(e)?;
                    match projection.iter().position(|p| *p == bound) {
                        Some(i) => i,
                        None => {
                            projection.push(bound);
                            projection.len() - 1
                        }
                    }
                }
            };
            order_by.push((pos, desc));
        }
    }

    // 6. LIMIT / OFFSET.
    b.allow_aggs = false;
    b.context = "field list";
    let (limit, offset) = bind_limit(&mut b, q.limit_clause.as_ref())?;

    let grouped = !b.aggs.is_empty() || !group_by.is_empty();
    let lock = match q.locks.as_slice() {
        [] => LockMode::None,
        [l] if l.of.is_none() && l.nonblock.is_none() => LockMode::Locking,
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
    let colls: Vec<Option<Collation>> = projection.iter().map(non_bytewise).collect();
    let group_colls: Vec<Option<Collation>> = group_by.iter().map(non_bytewise).collect();
    let aggs = std::mem::take(&mut b.aggs);
    let params_end = b.params;
    let min_outer_ref = b.min_outer_ref;
    drop(b);

    // Result-set metadata.
    let mut frame_kinds = vec![ExprKind::Null; frame_len];
    for s in &all_scopes {
        for (i, k) in s.kinds.iter().enumerate() {
            if let Some(slot) = frame_kinds.get_mut(s.offset + i) {
                *slot = *k;
            }
        }
    }
    let kinds: Vec<ExprKind> = projection[..visible]
        .iter()
        .map(|e| e.kind(&frame_kinds, &aggs))
        .collect();
    let columns: Vec<Column> = names
        .iter()
        .zip(&projection)
        .zip(&kinds)
        .map(|(((name, src), e), kind)| {
            let origin = src.and_then(|g| {
                from.sources
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
                    SourceKind::System(sys) => {
                        let mut col = expr_column(name, *kind);
                        col.schema = crate::catalog::infoschema::NAME.to_string();
                        col.table = s.name.clone();
                        col.org_table = sys.table.name().to_string();
                        col.org_name = sys.table.columns()[i].0.to_string();
                        col
                    }
                },
                _ => expr_column(name, *kind),
            }
        })
        .collect();

    // 7. Conjuncts, join order, access paths.
    let has_subqueries = projection
        .iter()
        .chain(filter.iter())
        .chain(&group_by)
        .chain(having.iter())
        .chain(aggs.iter().filter_map(|a| a.arg.as_ref()))
        .chain(from.items.iter().filter_map(|i| i.on.as_ref()))
        .any(Expr::has_subquery);
    let mut sources = from.sources;
    let items = from.items;
    if let Some(f) = &filter {
        push_into_derived(&mut sources, &items, f);
    }
    push_into_system(&mut sources, &items, filter.as_ref());
    let (steps, pre_filter) =
        plan_joins(&sources, &items, filter.as_ref(), outer_len, &frame_kinds)?;

    // Which columns each source must decode.
    let mut needed = vec![false; frame_len];
    let exprs = filter
        .iter()
        .chain(&projection)
        .chain(&group_by)
        .chain(having.iter())
        .chain(aggs.iter().filter_map(|a| a.arg.as_ref()))
        .chain(items.iter().filter_map(|i| i.on.as_ref()));
    for e in exprs {
        mark_columns(e, &mut needed);
    }
    for s in &mut sources {
        let slice = &needed[s.offset..s.offset + s.width];
        s.needed = (!slice.iter().all(|n| *n)).then(|| slice.to_vec());
    }

    let fast = single_table.is_some() && !has_subqueries && min_outer_ref.is_none();
    let (table, access, table_needed) = if fast {
        (
            single_table,
            steps[0].access.clone(),
            sources[0].needed.clone(),
        )
    } else {
        (None, Access::none(), None)
    };
    if lock == LockMode::Locking && !fast && !sources.is_empty() {
        return Err(Error::Unsupported(
            "locking reads with joins, derived tables or subqueries".into(),
        ));
    }
    let order_from_access = match &table {
        Some(t) if !grouped && !distinct => access.delivers_order(t, &order_by, &projection),
        _ => false,
    };
    let filter_implied = match (&table, &filter) {
        (Some(t), Some(f)) => access.implies(t, f),
        _ => false,
    };
    let plan = SelectPlan {
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
    };
    Ok((plan, params_end, min_outer_ref))
}

/// The sources (indexes) an expression reads; `None` when it holds a correlated
/// subquery, which may read any of them.
fn sources_read(e: &Expr, sources: &[Source]) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    let mut correlated = false;
    e.visit_columns(
        &mut |g| {
            if let Some(i) = sources
                .iter()
                .position(|s| g >= s.offset && g < s.offset + s.width)
            {
                if !out.contains(&i) {
                    out.push(i);
                }
            }
        },
        &mut |sq| correlated |= sq.correlated,
    );
    (!correlated).then_some(out)
}

/// Pushes WHERE conjuncts that read one derived table's columns into it, so
/// that `SELECT ... FROM (SELECT k, COUNT(*) FROM t GROUP BY k) d WHERE d.k = ?`
/// reads only the matching rows of `t` through its keys instead of grouping the
/// whole table. A conjunct moves when the derived table reads a single base
/// table (the single-table path), has no LIMIT, OFFSET or HAVING, every column
/// the conjunct reads is an output column that is a plain column of that table
/// and, when the derived table groups, one of its GROUP BY columns (a filter on
/// a grouping column removes whole groups, so it commutes with grouping). The
/// conjunct also stays where it was; it is then true on every row anyway.
fn push_into_derived(sources: &mut [Source], items: &[FromItem], filter: &Expr) {
    for c in filter.conjuncts() {
        if c.has_subquery() || c.has_agg() {
            continue;
        }
        let Some(read) = sources_read(c, sources) else {
            continue;
        };
        let [s] = read.as_slice() else {
            continue;
        };
        if items[*s].left {
            // WHERE on a LEFT JOIN's inner side also sees NULL-extended rows.
            continue;
        }
        let (off, width) = (sources[*s].offset, sources[*s].width);
        let SourceKind::Derived(d) = &mut sources[*s].kind else {
            continue;
        };
        let Some(table) = d.table.clone() else {
            continue;
        };
        if d.limit.is_some() || d.offset.is_some() || d.having.is_some() {
            continue;
        }
        let mut ok = true;
        c.visit_columns(
            &mut |g| {
                let inner = g
                    .checked_sub(off)
                    .filter(|i| *i < width)
                    .and_then(|i| d.projection.get(i));
                ok &= match inner {
                    Some(e @ Expr::Column(_)) => !d.grouped || d.group_by.contains(e),
                    _ => false,
                };
            },
            &mut |_| {},
        );
        if !ok {
            continue;
        }
        let projection = d.projection.clone();
        let pushed = c.rewrite(&|x| match x {
            Expr::Column(g) if *g >= off && *g < off + width => Some(projection[*g - off].clone()),
            _ => None,
        });
        let and = |a: Option<Expr>, b: Expr| match a {
            Some(a) => Expr::Binary(crate::expr::BinOp::And, Box::new(a), Box::new(b)),
            None => b,
        };
        let new_filter = and(d.filter.take(), pushed.clone());
        let (access, _, _) = choose_access_estimated(&table, Some(&new_filter));
        d.access = access.clone();
        if let Some(step) = d.steps.first_mut() {
            // A derived table runs through the join steps (select.rs).
            step.access = access;
            step.filter = Some(and(step.filter.take(), pushed));
        }
        d.filter = Some(new_filter);
    }
}

/// Pushes conjuncts `TABLE_SCHEMA = const` / `TABLE_NAME IN (consts)` on an
/// `information_schema` source into its generator, so that it visits only the
/// named databases and tables (see [`crate::catalog::infoschema`]). Taken from WHERE
/// (unless the source is a LEFT JOIN's inner side, where WHERE also sees
/// NULL-extended rows) and from the source's own ON condition (an ON conjunct
/// that reads only the inner source filters it before the match decision, for
/// inner and LEFT joins alike). The conjunct also stays where it was: the
/// generator may return a superset.
fn push_into_system(sources: &mut [Source], items: &[FromItem], filter: Option<&Expr>) {
    if !sources
        .iter()
        .any(|s| matches!(s.kind, SourceKind::System(_)))
    {
        return;
    }
    let mut candidates: Vec<(Option<usize>, &Expr)> = Vec::new();
    if let Some(f) = filter {
        candidates.extend(f.conjuncts().into_iter().map(|c| (None, c)));
    }
    for (i, it) in items.iter().enumerate() {
        if let Some(on) = &it.on {
            candidates.extend(on.conjuncts().into_iter().map(|c| (Some(i), c)));
        }
    }
    for (from_on, c) in candidates {
        if c.has_subquery() || c.has_agg() {
            continue;
        }
        let Some(read) = sources_read(c, sources) else {
            continue;
        };
        let [s] = read.as_slice() else {
            continue;
        };
        let allowed = match from_on {
            None => !items[*s].left,
            Some(i) => i == *s,
        };
        if !allowed {
            continue;
        }
        let (lo, hi) = (sources[*s].offset, sources[*s].offset + sources[*s].width);
        let SourceKind::System(sys) = &mut sources[*s].kind else {
            continue;
        };
        let local = c.rewrite(&|x| match x {
            Expr::Column(g) if *g >= lo && *g < hi => Some(Expr::Column(g - lo)),
            _ => None,
        });
        sys.push(&local);
    }
}

/// ANDs expressions together.
fn and_all(mut parts: Vec<Expr>) -> Option<Expr> {
    let first = if parts.is_empty() {
        return None;
    } else {
        parts.remove(0)
    };
    Some(parts.into_iter().fold(first, |acc, e| {
        Expr::Binary(crate::expr::BinOp::And, Box::new(acc), Box::new(e))
    }))
}

/// Rewrites a conjunct into `src`'s local terms for access-path analysis: its
/// columns become local positions, columns of placed sources (and of enclosing
/// queries) become `Bound`. `None` when it reads an unplaced source or holds a
/// subquery or an aggregate.
fn localize(
    e: &Expr,
    src: &Source,
    placed: &[bool],
    outer_len: usize,
    sources: &[Source],
) -> Option<Expr> {
    if e.has_subquery() || e.has_agg() {
        return None;
    }
    let mut ok = true;
    e.visit_columns(
        &mut |g| {
            let own = g >= src.offset && g < src.offset + src.width;
            let bound = g < outer_len
                || sources
                    .iter()
                    .enumerate()
                    .any(|(i, s)| placed[i] && g >= s.offset && g < s.offset + s.width);
            ok &= own || bound;
        },
        &mut |_| {},
    );
    if !ok {
        return None;
    }
    let (lo, hi) = (src.offset, src.offset + src.width);
    Some(e.rewrite(&|x| match x {
        Expr::Column(g) if *g >= lo && *g < hi => Some(Expr::Column(g - lo)),
        Expr::Column(g) => Some(Expr::Bound(*g)),
        _ => None,
    }))
}

/// Kind classes whose values compare equal exactly when their hash keys do.
fn hash_class(k: ExprKind) -> Option<u8> {
    match k {
        ExprKind::Int | ExprKind::UInt | ExprKind::Decimal(_) | ExprKind::Double => Some(0),
        ExprKind::String => Some(1),
        ExprKind::Date | ExprKind::DateTime => Some(2),
        _ => None,
    }
}

/// Equality conjuncts `src.col = expr over placed sources`, usable as hash keys
/// (only when both sides' kinds compare exactly as their hash keys do).
fn hash_keys(
    conjuncts: &[&Expr],
    src: &Source,
    placed: &[bool],
    outer_len: usize,
    sources: &[Source],
    frame_kinds: &[ExprKind],
) -> Vec<(usize, Expr)> {
    let own = |g: usize| g >= src.offset && g < src.offset + src.width;
    let mut keys = Vec::new();
    for c in conjuncts {
        let Expr::Binary(crate::expr::BinOp::Eq, a, b) = c else {
            continue;
        };
        for (x, y) in [(a, b), (b, a)] {
            // Under a collation both sides carry it; the probe keeps its
            // marker, which tells the hash table to key strings by their
            // collation's sort keys.
            let x = match x.as_ref() {
                Expr::Collate(inner, _) => inner.as_ref(),
                x => x,
            };
            let Expr::Column(g) = x else {
                continue;
            };
            if !own(*g) || y.has_subquery() || y.has_agg() {
                continue;
            }
            // The probe must read bound columns, and only those: a constant
            // probe gains nothing over reading the source with the condition.
            let mut ok = true;
            let mut reads = false;
            y.visit_columns(
                &mut |h| {
                    reads = true;
                    ok &= h < outer_len
                        || sources
                            .iter()
                            .enumerate()
                            .any(|(i, s)| placed[i] && h >= s.offset && h < s.offset + s.width)
                },
                &mut |_| {},
            );
            if !ok || !reads {
                continue;
            }
            let kx = frame_kinds.get(*g).copied().unwrap_or(ExprKind::Null);
            match (hash_class(kx), hash_class(y.kind(frame_kinds, &[]))) {
                (Some(p), Some(q)) if p == q => {
                    keys.push((*g - src.offset, y.as_ref().clone()));
                    break;
                }
                _ => {}
            }
        }
    }
    keys
}

/// The expected rows of an access path ranked `score` when the table has no
/// statistics: an order of magnitude per rank (see `crate::plan::access`).
fn shape_cost(score: u32) -> f64 {
    match score {
        900.. => 1.0,
        500.. => 10.0,
        300.. => 30.0,
        200.. => 100.0,
        100.. => 300.0,
        _ => 1e6,
    }
}

/// Chooses the join order and each step's access path and predicates.
fn plan_joins(
    sources: &[Source],
    items: &[FromItem],
    filter: Option<&Expr>,
    outer_len: usize,
    frame_kinds: &[ExprKind],
) -> Result<(Vec<Step>, Option<Expr>)> {
    let n = sources.len();
    let where_conjuncts: Vec<&Expr> = filter.map(|f| f.conjuncts()).unwrap_or_default();
    // Inner-join ON conditions behave like WHERE conjuncts.
    let mut general: Vec<&Expr> = where_conjuncts.clone();
    for it in items {
        if !it.left {
            if let Some(on) = &it.on {
                general.extend(on.conjuncts());
            }
        }
    }

    // Greedy order.
    let mut placed = vec![false; n];
    let mut order: Vec<usize> = Vec::with_capacity(n);
    let mut accesses: Vec<Option<(Access, Vec<(usize, Expr)>, bool)>> =
        (0..n).map(|_| None).collect();
    while order.len() < n {
        let mut best: Option<(usize, f64)> = None;
        for s in 0..n {
            if placed[s] {
                continue;
            }
            // LEFT JOIN barriers.
            let allowed = if items[s].left {
                (0..s).all(|t| placed[t])
            } else {
                (0..s).all(|t| !items[t].left || placed[t])
            };
            if !allowed {
                continue;
            }
            let conj: Vec<&Expr> = if items[s].left {
                items[s]
                    .on
                    .as_ref()
                    .map(|o| o.conjuncts())
                    .unwrap_or_default()
            } else {
                general.clone()
            };
            let (score, acc) = match &sources[s].kind {
                SourceKind::Table(t) => {
                    let local: Vec<Expr> = conj
                        .iter()
                        .filter_map(|c| localize(c, &sources[s], &placed, outer_len, sources))
                        .collect();
                    let (access, score, est) = choose_access_estimated(t, and_all(local).as_ref());
                    // A read that does not depend on the bound columns would be
                    // repeated identically for every outer row (or every run of
                    // a correlated subquery): read it once and probe a hash table
                    // on the equalities with bound columns instead.
                    let repeated = !order.is_empty() || outer_len > 0;
                    let keys = if repeated && !access.reads_bound() {
                        hash_keys(&conj, &sources[s], &placed, outer_len, sources, frame_kinds)
                    } else {
                        Vec::new()
                    };
                    let cost = est.unwrap_or_else(|| shape_cost(score));
                    if keys.is_empty() {
                        (cost, (access, Vec::new(), false))
                    } else {
                        // A hash probe finds the matching rows at once.
                        let probe = if access.full_scan {
                            10.0
                        } else {
                            cost.min(10.0)
                        };
                        (probe, (access, keys, true))
                    }
                }
                SourceKind::System(sys) => {
                    let keys =
                        hash_keys(&conj, &sources[s], &placed, outer_len, sources, frame_kinds);
                    // Generated rows: a few when the generator is given table
                    // names, a database's worth with a schema, else everything.
                    let est: f64 = match sys.selective() {
                        (_, true) => 3.0,
                        (true, false) => 1e3,
                        (false, false) => 1e4,
                    };
                    (
                        if keys.is_empty() { est } else { est.min(10.0) },
                        (Access::scan(), keys, true),
                    )
                }
                SourceKind::Derived(_) | SourceKind::SetOp(_) => {
                    let keys =
                        hash_keys(&conj, &sources[s], &placed, outer_len, sources, frame_kinds);
                    // A derived table's size is unknown until it runs: prefer
                    // it early only when it is probed through a hash table.
                    (
                        if keys.is_empty() { 1e5 } else { 10.0 },
                        (Access::scan(), keys, true),
                    )
                }
            };
            // Fewest expected rows per outer row first; ties keep FROM order.
            if best.is_none_or(|(_, b)| score < b) {
                best = Some((s, score));
                accesses[s] = Some(acc);
            }
        }
        let (s, _) = best.ok_or_else(|| Error::Internal("no joinable source".into()))?;
        placed[s] = true;
        order.push(s);
    }

    // Predicates per step.
    let pos_of = |s: usize| order.iter().position(|&x| x == s).unwrap_or(0);
    let mut filters: Vec<Vec<Expr>> = vec![Vec::new(); n];
    let mut posts: Vec<Vec<Expr>> = vec![Vec::new(); n];
    let mut pre: Vec<Expr> = Vec::new();
    for c in &general {
        match sources_read(c, sources) {
            Some(read) if read.is_empty() => pre.push((*c).clone()),
            Some(read) => {
                let k = read.iter().map(|&s| pos_of(s)).max().unwrap_or(0);
                if items[order[k]].left {
                    posts[k].push((*c).clone());
                } else {
                    filters[k].push((*c).clone());
                }
            }
            None => {
                if n == 0 {
                    pre.push((*c).clone());
                } else if items[order[n - 1]].left {
                    posts[n - 1].push((*c).clone());
                } else {
                    filters[n - 1].push((*c).clone());
                }
            }
        }
    }
    for (s, it) in items.iter().enumerate() {
        if it.left {
            if let Some(on) = &it.on {
                filters[pos_of(s)].extend(on.conjuncts().into_iter().cloned());
            }
        }
    }
    let mut steps = Vec::with_capacity(n);
    for (k, &s) in order.iter().enumerate() {
        let (access, hash_keys, materialize) = accesses[s]
            .take()
            .unwrap_or_else(|| (Access::scan(), Vec::new(), false));
        steps.push(Step {
            source: s,
            access,
            hash_keys,
            materialize,
            filter: and_all(std::mem::take(&mut filters[k])),
            left: items[s].left,
            post_filter: and_all(std::mem::take(&mut posts[k])),
        });
    }
    Ok((steps, and_all(pre)))
}

/// Binds an expression that may name an output column by alias (GROUP BY /
/// HAVING) or, with `positions` (GROUP BY only, as in MySQL: `HAVING 2` is a
/// constant), by its 1-based position: an integer literal out of range is
/// 1054, any other number a constant.
fn bind_output_ref(
    b: &mut Binder<'_>,
    e: &ast::Expr,
    names: &[(String, Option<usize>)],
    projection: &[Expr],
    positions: bool,
) -> Result<Expr> {
    if let ast::Expr::Identifier(id) = e {
        let is_column = b.is_own_column(&id.value);
        if !is_column {
            if let Some(i) = names
                .iter()
                .position(|(n, _)| n.eq_ignore_ascii_case(&id.value))
            {
                return Ok(projection[i].clone());
            }
        }
    }
    if let ast::Expr::Value(v) = e {
        if let ast::Value::Number(n, _) = &v.value {
            if positions && n.bytes().all(|c| c.is_ascii_digit()) {
                return match n.parse::<usize>() {
                    Ok(k) if k >= 1 && k <= names.len() => Ok(projection[k - 1].clone()),
                    _ => Err(Error::UnknownColumn {
                        column: n.clone(),
                        context: "group statement".into(),
                    }),
                };
            }
        }
    }
    b.bind(e)
}

fn bind_limit(
    b: &mut Binder<'_>,
    l: Option<&ast::LimitClause>,
) -> Result<(Option<Expr>, Option<Expr>)> {
    Ok(match l {
        None => (None, None),
        Some(ast::LimitClause::LimitOffset {
            limit,
            offset,
            limit_by,
        }) => {
            if !limit_by.is_empty() {
                return Err(Error::Unsupported("LIMIT BY".into()));
            }
            let lim = limit.as_ref().map(|e| b.bind(e)).transpose()?;
            let off = offset.as_ref().map(|o| b.bind(&o.value)).transpose()?;
            (lim, off)
        }
        Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => {
            let off = b.bind(offset)?;
            let lim = b.bind(limit)?;
            (Some(lim), Some(off))
        }
    })
}

/// The column name MySQL gives an unaliased expression: its text.
fn expr_display_name(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => s.clone(),
            other => other.to_string(),
        },
        ast::Expr::Identifier(id) => id.value.clone(),
        ast::Expr::CompoundIdentifier(ids) => ids
            .iter()
            .map(|i| i.value.as_str())
            .collect::<Vec<_>>()
            .join("."),
        other => other.to_string(),
    }
}

/// The kind of the projection's columns, exposed for tests.
pub fn projection_kinds(p: &SelectPlan) -> Vec<ExprKind> {
    p.kinds.clone()
}
