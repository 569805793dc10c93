//! A query block's FROM clause (step 1 of planning it, see
//! [`crate::plan::select`]): its sources at their frame offsets — base tables,
//! derived tables, references to common table expressions, `information_schema`
//! tables, set operations, views (`crate::plan::view`) — and how each joins
//! the ones before it ([`FromItem`]: inner, or the start of a LEFT JOIN's
//! inner side, with its ON, USING or NATURAL condition bound). The join order
//! and the access paths are chosen afterwards, in `join.rs`.
//!
//! # Normal form of a join tree
//! Every join is brought to one shape: a list of sources, each with an item,
//! where a LEFT JOIN's inner side is the `span` consecutive sources its
//! first item starts (MySQL's own normalisation, "Nested Join
//! Optimization" and "Outer Join Simplification" in the manual):
//!
//! - `A RIGHT JOIN B ON c` is `B LEFT JOIN A ON c` (MySQL rewrites it the
//!   same way): the sources of `B` move before those of `A` (`rotate`), but
//!   keep their frame offsets, so `SELECT *` still lists `A`'s columns
//!   first and every bound column still reads the same slot. `A` may be the
//!   whole join so far: `t1 JOIN t2 ON x RIGHT JOIN t3 ON y` is
//!   `t3 LEFT JOIN (t1 JOIN t2 ON x) ON y`.
//! - `NATURAL [LEFT|RIGHT] JOIN` is `USING` over the common column names
//!   (none: a cross join, or an outer join on TRUE). `USING` coalesces each
//!   pair into the side that is never NULL-extended — the left one, the
//!   right one for RIGHT JOIN — and hides the other from unqualified names;
//!   `SELECT *` lists the coalesced columns once, first, then that side's
//!   others, then the other side's (MySQL 8.0's order).
//! - A parenthesised join on the right of an inner join without its own
//!   condition is spliced into the chain (`flatten`); one with a condition,
//!   or on the inner side of an outer join, stays a group of sources.
//! - Comma binds looser than JOIN: an ON condition sees only the sources of
//!   its own join tree (1054 for another comma item's), plus enclosing
//!   queries. A LATERAL derived table sees every source before it.
//!
//! Invariants: (1) each source has exactly one item, in source order; (2) a
//! left item's `span` sources are consecutive and lie within any enclosing
//! left item's; (3) the first item of a FROM item or of a parenthesised join
//! has no condition until the join that contains it gives it one; (4) a
//! block with a LEFT JOIN over several sources, STRAIGHT_JOIN (operator or
//! `SELECT STRAIGHT_JOIN`) or LATERAL is joined in source order
//! (`fixed_order`), so a group's steps stay together and a LATERAL table's
//! sources are bound before it runs.
//!
//! Not implemented: FULL JOIN (MySQL has none either), a LATERAL derived
//! table on the right of a RIGHT JOIN. (Locking reads over joins are the
//! executor's: `crate::exec::select`, "Locking reads on the general path".) An ON
//! condition of a parenthesised inner join that names a source outside it
//! is accepted where MySQL says 1054 (the parser gives both forms one tree).

use crate::catalog::infoschema::{Pushed, SystemTable};
use crate::expr::{eval, BinOp, Env, Expr};
use crate::plan::bind::{Binder, Scope};
use crate::plan::select::{plan_query, Source, SourceKind};
use crate::plan::setop::{is_set_op, plan_set_op};
use crate::plan::{CteDef, PlanContext};
use crate::types::ExprKind;
use canyon_common::{Error, Result};
use sqlparser::ast;

/// How a source joins the ones before it (see the module doc's rules).
#[derive(Debug)]
pub(super) struct FromItem {
    /// Whether this source starts the inner side of a LEFT JOIN: the
    /// `span` sources from here, NULL-extended together when no
    /// combination of their rows passes `on`.
    pub(super) left: bool,
    /// The sources of the outer join's inner side (1 unless `left`).
    pub(super) span: usize,
    /// The join condition: for an inner join a WHERE conjunct (within the
    /// LEFT JOIN that holds it, if any); for a LEFT JOIN's inner side the
    /// match condition.
    pub(super) on: Option<Expr>,
}

impl FromItem {
    /// The first source of a FROM item or of a parenthesised join: no
    /// condition yet (a cross join with what comes before it).
    fn start() -> FromItem {
        FromItem {
            left: false,
            span: 1,
            on: None,
        }
    }
}

/// Planner state for one query block's FROM clause.
pub(super) struct From<'c> {
    pub(super) ctx: &'c PlanContext<'c>,
    outer_scopes: &'c [Scope],
    outer_len: usize,
    pub(super) sources: Vec<Source>,
    pub(super) scopes: Vec<Scope>,
    pub(super) items: Vec<FromItem>,
    pub(super) params: usize,
    pub(super) min_outer_ref: Option<usize>,
    pub(super) next_offset: usize,
    /// The frame positions `SELECT *` lists, in order: each FROM item's
    /// columns, with USING / NATURAL joins' coalesced columns once, first.
    pub(super) star: Vec<usize>,
    /// The WHERE of each view merged into this FROM clause, by source
    /// (`crate::plan::view`).
    pub(super) view_filters: Vec<(usize, Expr)>,
    /// Whether a derived table's (a view's) ORDER BY is kept: the FROM
    /// clause is that one table, without joins (see `derived`).
    keep_derived_order: bool,
    /// Whether the join order is the written one (after RIGHT JOIN's
    /// swap): STRAIGHT_JOIN, a LATERAL derived table, or a LEFT JOIN whose
    /// inner side is several sources (`crate::plan::join`).
    pub(super) fixed_order: bool,
}

impl<'c> From<'c> {
    /// Plans the FROM clause of `select`, numbering its placeholders from
    /// `params`: sources, derived tables planned, ON conditions bound.
    pub(super) fn plan(
        ctx: &'c PlanContext<'c>,
        select: &ast::Select,
        outer_scopes: &'c [Scope],
        outer_len: usize,
        params: usize,
    ) -> Result<From<'c>> {
        let mut from = From {
            ctx,
            outer_scopes,
            outer_len,
            sources: Vec::new(),
            scopes: Vec::new(),
            items: Vec::new(),
            params,
            min_outer_ref: None,
            next_offset: outer_len,
            star: Vec::new(),
            view_filters: Vec::new(),
            keep_derived_order: false,
            // `SELECT STRAIGHT_JOIN ...`: the written join order.
            fixed_order: select
                .select_modifiers
                .as_ref()
                .is_some_and(|m| m.straight_join),
        };
        let from_list: Vec<&ast::TableWithJoins> =
            select.from.iter().filter(|t| !is_dual(t)).collect();
        from.keep_derived_order = from_list.len() == 1 && from_list[0].joins.is_empty();
        if from_list.len() < select.from.len() && !from_list.is_empty() {
            return Err(Error::Unsupported("DUAL with other tables".into()));
        }
        for twj in from_list {
            from.table_with_joins(twj)?;
        }
        from.attach_view_filters();
        Ok(from)
    }
}

impl From<'_> {
    pub(super) fn add_source(
        &mut self,
        name: String,
        kind: SourceKind,
        scope: Scope,
    ) -> Result<()> {
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
            index_hints: None,
        });
        self.scopes.push(scope);
        self.next_offset += width;
        Ok(())
    }

    /// Adds a base table with the index hints written on it. Not inlined,
    /// and called last: `factor` recurses through CTE references and
    /// derived tables, and every byte of its frame counts against the depth
    /// left to deep queries (tests/limits.rs).
    #[inline(never)]
    fn add_table(
        &mut self,
        qualifier: String,
        t: std::sync::Arc<crate::catalog::Table>,
        scope: Scope,
        hints: &[ast::TableIndexHints],
    ) -> Result<()> {
        let resolved = crate::plan::access::IndexHints::resolve(&t, hints)?;
        self.add_source(qualifier, SourceKind::Table(t), scope)?;
        if let Some(s) = self.sources.last_mut() {
            s.index_hints = resolved;
        }
        Ok(())
    }

    fn factor(&mut self, f: &ast::TableFactor) -> Result<()> {
        match f {
            ast::TableFactor::Table {
                name,
                alias,
                args: None,
                partitions,
                index_hints,
                ..
            } => {
                crate::plan::partition::refuse_selection(partitions)?;
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
                        db: table.schema().to_string(),
                        columns: table.columns().iter().map(|c| c.0.to_string()).collect(),
                        kinds: table.columns().iter().map(|c| c.1).collect(),
                        // information_schema names compare bytewise, as
                        // MySQL's on a case-sensitive file system.
                        colls: table
                            .columns()
                            .iter()
                            .map(|c| (c.1 == ExprKind::String).then_some(table.string_collation()))
                            .collect(),
                        member_types: Default::default(),
                        years: Default::default(),
                        offset: self.next_offset,
                        coalesced: Vec::new(),
                        table_name: None,
                    };
                    return self.add_source(
                        qualifier,
                        SourceKind::System(SystemSource::new(table)),
                        scope,
                    );
                }
                if let Some(view) = crate::plan::view::find_view(self.ctx, name) {
                    let qualifier = alias
                        .as_ref()
                        .map(|a| a.name.value.clone())
                        .unwrap_or_else(|| view.def.name.clone());
                    return self.view_reference(&view, qualifier);
                }
                let t = self.ctx.resolve(name)?;
                let qualifier = alias
                    .as_ref()
                    .map(|a| a.name.value.clone())
                    .unwrap_or_else(|| t.def.name.clone());
                let scope = Scope::of_table(&t, Some(&qualifier), self.next_offset);
                self.add_table(qualifier, t, scope, index_hints)
            }
            ast::TableFactor::Derived {
                lateral,
                subquery,
                alias,
                ..
            } => {
                let alias = alias.as_ref().ok_or(Error::DerivedNeedsAlias)?;
                let columns = alias.columns.iter().map(|c| c.name.value.clone()).collect();
                let name = alias.name.value.clone();
                self.params = if *lateral {
                    self.fixed_order = true;
                    self.derived_over(subquery, name, columns, self.params, true)?
                } else {
                    self.derived(subquery, name, columns, self.params)?
                };
                Ok(())
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
    pub(super) fn derived(
        &mut self,
        subquery: &ast::Query,
        name: String,
        alias_columns: Vec<String>,
        params: usize,
    ) -> Result<usize> {
        self.derived_over(subquery, name, alias_columns, params, false)
    }

    /// [`From::derived`], or with `lateral` a LATERAL derived table: one
    /// planned as a correlated subquery over the sources before it (its
    /// outer frame is this block's frame up to its own offset), run again
    /// for each combination of their rows.
    fn derived_over(
        &mut self,
        subquery: &ast::Query,
        name: String,
        alias_columns: Vec<String>,
        params: usize,
        lateral: bool,
    ) -> Result<usize> {
        let plain_set_op = !lateral
            && is_set_op(&subquery.body)
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
            let (mut plan, params, _) = if lateral {
                let mut scopes = self.outer_scopes.to_vec();
                scopes.extend(self.scopes.iter().cloned());
                let (plan, params, min) =
                    plan_query(self.ctx, subquery, &scopes, self.next_offset, params)?;
                // A reference to the enclosing query makes this block
                // correlated too.
                if let Some(r) = min.filter(|r| *r < self.outer_len) {
                    self.min_outer_ref = Some(self.min_outer_ref.map_or(r, |m| m.min(r)));
                }
                (plan, params, min)
            } else {
                plan_query(self.ctx, subquery, &[], 0, params)?
            };
            // A derived table is a set: without LIMIT its ORDER BY orders
            // nothing (MySQL ignores it too), so skip the sort — unless it
            // is the whole FROM clause: MySQL then reads it in its order
            // (`SELECT * FROM v` is in the order of v's ORDER BY, as the
            // Sakila sample's sales_by_store view relies on); a sort the
            // outer query makes again is only wasted work.
            if plan.limit.is_none() && plan.offset.is_none() && !self.keep_derived_order {
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
            scope.columns = alias_columns.into();
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
    /// CTEs defined before it (not after it, nor itself) in scope and its
    /// placeholders numbered where its text stands, so that two references
    /// read the same parameters. A recursive CTE (WITH RECURSIVE) is planned
    /// by `crate::plan::recursive`; inside its own recursive blocks its name
    /// reads the work table.
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
        if let Some(work) = &cte.work {
            let scope = work.scope(&name, self.next_offset);
            return self.add_source(name, SourceKind::WorkTable(work.clone()), scope);
        }
        let hidden = self.ctx.ctes.borrow_mut().split_off(cte.visible);
        let r = if cte.recursive {
            self.recursive_reference(cte, name, n)
        } else {
            self.derived(&cte.query, name, cte.columns.clone(), cte.params)
                .map(|_| ())
        };
        self.ctx.ctes.borrow_mut().extend(hidden);
        r
    }

    /// A reference to a recursive CTE: its UNION over the seed and the
    /// rounds (`crate::plan::recursive`), `id` naming its work table. Out of
    /// line: CTE chains recurse through `cte_reference`.
    #[inline(never)]
    fn recursive_reference(&mut self, cte: &CteDef, name: String, id: usize) -> Result<()> {
        let (sp, _) = crate::plan::recursive::plan_recursive(self.ctx, cte, id)?;
        let scope = sp.scope(&name, self.next_offset);
        self.add_source(name, SourceKind::SetOp(Box::new(sp)), scope)
    }

    /// Binds a join's ON condition over the sources of its own join tree
    /// (`lo..`: the FROM item or parenthesised join it belongs to) and the
    /// enclosing queries'. MySQL's scope for ON: comma binds looser than
    /// JOIN, so a source of another comma item is unknown there (1054).
    fn bind_on(&mut self, e: &ast::Expr, lo: usize) -> Result<Expr> {
        let mut all = self.outer_scopes.to_vec();
        all.extend(self.scopes[lo..].iter().cloned());
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

    /// Adds one FROM item (an element of the comma list): its join tree.
    fn table_with_joins(&mut self, twj: &ast::TableWithJoins) -> Result<()> {
        let star = self.join_tree(twj)?;
        self.star.extend(star);
        Ok(())
    }

    /// Adds the sources and items of a join tree — its first operand, then
    /// each join left to right (joins associate to the left) — and returns
    /// its `SELECT *` positions. A RIGHT JOIN is turned into a LEFT JOIN
    /// here (see the module doc's rules).
    fn join_tree(&mut self, twj: &ast::TableWithJoins) -> Result<Vec<usize>> {
        crate::parse::limits::check_stack()?;
        let first = self.sources.len();
        let mut star = self.operand(&twj.relation)?;
        for j in flatten(&twj.joins) {
            let (kind, constraint) = match &j.join_operator {
                ast::JoinOperator::Join(c)
                | ast::JoinOperator::Inner(c)
                | ast::JoinOperator::CrossJoin(c) => (JoinKind::Inner, c),
                ast::JoinOperator::StraightJoin(c) => {
                    self.fixed_order = true;
                    (JoinKind::Inner, c)
                }
                ast::JoinOperator::Left(c) | ast::JoinOperator::LeftOuter(c) => (JoinKind::Left, c),
                ast::JoinOperator::Right(c) | ast::JoinOperator::RightOuter(c) => {
                    (JoinKind::Right, c)
                }
                _ => return Err(Error::Unsupported("this join type".into())),
            };
            if kind != JoinKind::Inner && matches!(constraint, ast::JoinConstraint::None) {
                // MySQL's grammar has no outer join without a condition.
                return Err(Error::Syntax("an outer join without ON or USING".into()));
            }
            let right = self.sources.len();
            let mut right_star = self.operand(&j.relation)?;
            let end = self.sources.len();
            let on = match constraint {
                ast::JoinConstraint::On(e) => Some(self.bind_on(e, first)?),
                ast::JoinConstraint::None => None,
                ast::JoinConstraint::Using(cols) => {
                    let names = cols
                        .iter()
                        .map(|c| {
                            c.0.last()
                                .and_then(|p| p.as_ident())
                                .map(|i| i.value.clone())
                                .ok_or_else(|| Error::Syntax("a USING column".into()))
                        })
                        .collect::<Result<Vec<_>>>()?;
                    let sides = Sides {
                        first,
                        right,
                        end,
                        kind,
                    };
                    Some(self.using(sides, &names, &mut star, &mut right_star)?)
                }
                ast::JoinConstraint::Natural => {
                    let names = self.common_columns(first, right, end);
                    let sides = Sides {
                        first,
                        right,
                        end,
                        kind,
                    };
                    if names.is_empty() {
                        // No common column: every pair matches (MySQL: a
                        // NATURAL join without common columns is a cross
                        // join, or an outer join on TRUE).
                        None
                    } else {
                        Some(self.using(sides, &names, &mut star, &mut right_star)?)
                    }
                }
            };
            match kind {
                JoinKind::Inner => self.items[right].on = on,
                JoinKind::Left => {
                    self.items[right] = FromItem {
                        left: true,
                        span: end - right,
                        on,
                    }
                }
                JoinKind::Right => {
                    if self.sources[right..end].iter().any(is_lateral) {
                        return Err(Error::Unsupported(
                            "a LATERAL derived table on the right of a RIGHT JOIN".into(),
                        ));
                    }
                    self.rotate(first, right, end);
                    self.items[first + (end - right)] = FromItem {
                        left: true,
                        span: right - first,
                        on,
                    };
                }
            }
            star.extend(right_star);
        }
        Ok(star)
    }

    /// Adds one operand of a join: a table factor (one source, one fresh
    /// item) or a parenthesised join (its whole tree); returns its `SELECT *`
    /// positions.
    fn operand(&mut self, f: &ast::TableFactor) -> Result<Vec<usize>> {
        match f {
            ast::TableFactor::NestedJoin {
                table_with_joins,
                alias: None,
            } => self.join_tree(table_with_joins),
            ast::TableFactor::NestedJoin { alias: Some(_), .. } => {
                Err(Error::Syntax("an alias after a parenthesised join".into()))
            }
            _ => {
                let i = self.sources.len();
                self.factor(f)?;
                debug_assert_eq!(self.sources.len(), i + 1, "a table factor is one source");
                self.items.push(FromItem::start());
                Ok(self.positions(i))
            }
        }
    }

    /// RIGHT JOIN's swap: moves the right operand's sources `right..end`
    /// before the left operand's `first..right` (with their scopes, items
    /// and merged views' filters), keeping every frame offset, so that
    /// `SELECT *` and every bound column still mean what they meant.
    fn rotate(&mut self, first: usize, right: usize, end: usize) {
        let k = right - first;
        self.sources[first..end].rotate_left(k);
        self.scopes[first..end].rotate_left(k);
        self.items[first..end].rotate_left(k);
        for (i, _) in &mut self.view_filters {
            if (first..right).contains(i) {
                *i += end - right;
            } else if (right..end).contains(i) {
                *i -= k;
            }
        }
    }

    /// The frame positions of source `i`'s columns.
    fn positions(&self, i: usize) -> Vec<usize> {
        let s = &self.sources[i];
        let names = &self.scopes[i].columns;
        (s.offset..s.offset + s.width)
            .filter(|p| !crate::plan::view::is_hidden(&names[p - s.offset]))
            .collect()
    }

    /// NATURAL JOIN's columns: the names the right operand (`right..end`)
    /// shows unqualified that the left one (`first..right`) shows too, in
    /// the right operand's order, each once.
    fn common_columns(&self, first: usize, right: usize, end: usize) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for s in right..end {
            let scope = &self.scopes[s];
            for c in scope.columns.iter() {
                let shown = !crate::plan::view::is_hidden(c) && scope.find_unqualified(c).is_some();
                if shown
                    && !names.iter().any(|n| n.eq_ignore_ascii_case(c))
                    && self.scopes[first..right]
                        .iter()
                        .any(|l| l.find_unqualified(c).is_some())
                {
                    names.push(c.clone());
                }
            }
        }
        names
    }

    /// The one source among `range` that shows `name` unqualified, and the
    /// column's frame position: 1054 if none, 1052 if several.
    fn unique_column(&self, range: std::ops::Range<usize>, name: &str) -> Result<(usize, usize)> {
        let mut found = None;
        for s in range {
            if let Some(p) = self.scopes[s].find_unqualified(name) {
                if found.is_some() {
                    return Err(Error::AmbiguousColumn {
                        column: name.to_string(),
                        context: "from clause".into(),
                    });
                }
                found = Some((s, p));
            }
        }
        found.ok_or_else(|| Error::UnknownColumn {
            column: name.to_string(),
            context: "from clause".into(),
        })
    }

    /// `JOIN right USING (names)` (also NATURAL JOIN): the join condition —
    /// each name's column on the left (the one source of the left operand
    /// that shows it unqualified; 1054 if none, 1052 if several) equals the
    /// right operand's (likewise) — with the two columns coalesced into one:
    /// an unqualified name means the side that is never NULL-extended (the
    /// left for inner and LEFT joins, the right for RIGHT joins: MySQL's
    /// `COALESCE(l, r)` is always that side's value), the other side's
    /// column is hidden from unqualified names. `SELECT *` shows the
    /// coalesced columns once, first, in their side's order, then that
    /// side's other columns, then the other side's (`star` then
    /// `right_star`, which the caller appends).
    fn using(
        &mut self,
        sides: Sides,
        names: &[String],
        star: &mut Vec<usize>,
        right_star: &mut Vec<usize>,
    ) -> Result<Expr> {
        let Sides {
            first,
            right,
            end,
            kind,
        } = sides;
        let mut front = Vec::new();
        let mut cond: Option<ast::Expr> = None;
        for name in names {
            let (ls, lp) = self.unique_column(first..right, name)?;
            let (rs, rp) = self.unique_column(right..end, name)?;
            let (keep, hide, hidden_in) = if kind == JoinKind::Right {
                (rp, lp, ls)
            } else {
                (lp, rp, rs)
            };
            if front.contains(&keep) {
                return Err(Error::DuplicateColumn(name.clone()));
            }
            front.push(keep);
            let local = hide - self.scopes[hidden_in].offset;
            self.scopes[hidden_in].coalesced.push(local);
            star.retain(|p| *p != hide);
            right_star.retain(|p| *p != hide);
            let column = |source: usize| {
                ast::Expr::CompoundIdentifier(vec![
                    ast::Ident::new(self.sources[source].name.clone()),
                    ast::Ident::new(name.clone()),
                ])
            };
            let eq = ast::Expr::BinaryOp {
                left: Box::new(column(ls)),
                op: ast::BinaryOperator::Eq,
                right: Box::new(column(rs)),
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
        if kind == JoinKind::Right {
            // The right operand's columns lead: `star` becomes the right
            // side's, the left's follow.
            let left = std::mem::take(star);
            *star = std::mem::take(right_star);
            *right_star = left;
        }
        let (mut coalesced, rest): (Vec<usize>, Vec<usize>) =
            star.iter().partition(|p| front.contains(p));
        coalesced.extend(rest);
        *star = coalesced;
        let cond = cond.ok_or_else(|| Error::Syntax("USING ()".into()))?;
        self.bind_on(&cond, first)
    }
}

/// How a join operator joins its right operand (STRAIGHT_JOIN is an inner
/// join whose block keeps the written order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JoinKind {
    Inner,
    Left,
    Right,
}

/// The two operands of one join, as source ranges: the left `first..right`,
/// the right `right..end`.
#[derive(Debug, Clone, Copy)]
struct Sides {
    first: usize,
    right: usize,
    end: usize,
    kind: JoinKind,
}

/// Whether a source is a LATERAL derived table (planned over the sources
/// before it: its frame starts after this block's first columns).
pub(super) fn is_lateral(s: &Source) -> bool {
    matches!(&s.kind, SourceKind::Derived(d) if d.outer_len > 0)
}

/// The joins of a chain with each inner join whose right operand is a
/// parenthesised join without its own condition spliced in:
/// `t1 JOIN (t2 JOIN t3 ON c)` is `t1 JOIN t2 JOIN t3 ON c`. The MySQL
/// dialect parses `t1 JOIN t2 JOIN t3 ON c` in the first form, MySQL in the
/// second; for inner joins both give the same rows, and the spliced form
/// gives ON MySQL's scope (`c` may name `t1`).
fn flatten(joins: &[ast::Join]) -> Vec<ast::Join> {
    let mut out = Vec::with_capacity(joins.len());
    for j in joins {
        let (op, nested) = match (&j.join_operator, &j.relation) {
            (
                op @ (ast::JoinOperator::Join(ast::JoinConstraint::None)
                | ast::JoinOperator::Inner(ast::JoinConstraint::None)
                | ast::JoinOperator::CrossJoin(ast::JoinConstraint::None)
                | ast::JoinOperator::StraightJoin(ast::JoinConstraint::None)),
                ast::TableFactor::NestedJoin {
                    table_with_joins,
                    alias: None,
                },
            ) => (op, table_with_joins),
            _ => {
                out.push(j.clone());
                continue;
            }
        };
        out.push(ast::Join {
            relation: nested.relation.clone(),
            global: j.global,
            join_operator: op.clone(),
        });
        out.extend(flatten(&nested.joins));
    }
    out
}

/// Whether the FROM item is `DUAL`.
fn is_dual(twj: &ast::TableWithJoins) -> bool {
    twj.joins.is_empty()
        && matches!(&twj.relation, ast::TableFactor::Table { name, alias: None, args: None, .. }
            if name.0.len() == 1 && name.to_string().eq_ignore_ascii_case("dual"))
}

/// A system table as a FROM source: the table and the constant expressions
/// pushed into its generator (see `crate::catalog::infoschema`).
#[derive(Debug, Clone)]
pub struct SystemSource {
    /// Which table.
    pub table: SystemTable,
    /// Allowed schema names (`None`: any), as constant expressions.
    pub schemas: Option<Vec<Expr>>,
    /// Allowed table names (`None`: any), as constant expressions.
    pub names: Option<Vec<Expr>>,
}

impl SystemSource {
    /// A source with nothing pushed.
    pub fn new(table: SystemTable) -> SystemSource {
        SystemSource {
            table,
            schemas: None,
            names: None,
        }
    }

    /// Takes a conjunct over this source's own columns (local positions) if it
    /// is `key = const` or `key IN (consts)` on a key column; `true` when taken.
    pub fn push(&mut self, conjunct: &Expr) -> bool {
        let (schema_col, name_col) = self.table.key_columns();
        let (col, values) = match conjunct {
            Expr::Binary(BinOp::Eq, a, b) => match (a.as_ref(), b.as_ref()) {
                (Expr::Column(c), v) | (v, Expr::Column(c)) if v.is_constant() => {
                    (*c, vec![v.clone()])
                }
                _ => return false,
            },
            Expr::InList(a, list, false) => match a.as_ref() {
                Expr::Column(c) if list.iter().all(Expr::is_constant) => (*c, list.clone()),
                _ => return false,
            },
            _ => return false,
        };
        let slot = if Some(col) == schema_col {
            &mut self.schemas
        } else if Some(col) == name_col {
            &mut self.names
        } else {
            return false;
        };
        // The first usable conjunct per column narrows enough; a second one is
        // still checked row by row.
        if slot.is_some() {
            return false;
        }
        *slot = Some(values);
        true
    }

    /// Whether a table name is pushed (the generator touches few tables).
    pub fn selective(&self) -> (bool, bool) {
        (self.schemas.is_some(), self.names.is_some())
    }
}

impl SystemSource {
    /// Evaluates the pushed expressions for one execution (NULL matches
    /// nothing): what the table's generator is given.
    pub fn evaluate(&self, env: &Env<'_>) -> Result<Pushed> {
        let src = self;
        let eval = |l: &Option<Vec<Expr>>| -> Result<Option<Vec<String>>> {
            let Some(l) = l else { return Ok(None) };
            let mut out = Vec::with_capacity(l.len());
            for e in l {
                let v = eval(e, env)?;
                if let Some(t) = v.to_text() {
                    let s = String::from_utf8_lossy(&t).into_owned();
                    out.push(s.trim_end_matches(' ').to_string());
                }
            }
            Ok(Some(out))
        };
        Ok(Pushed {
            schemas: eval(&src.schemas)?,
            names: eval(&src.names)?,
        })
    }
}
