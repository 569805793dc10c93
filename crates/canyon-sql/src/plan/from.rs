//! A query block's FROM clause (step 1 of planning it, see
//! [`crate::plan::select`]): its sources at their frame offsets — base tables,
//! derived tables, references to common table expressions, `information_schema`
//! tables, set operations, views (`crate::plan::view`) — and how each joins
//! the ones before it (inner or LEFT, with its ON, USING or NATURAL condition
//! bound). The join order and the access paths are chosen afterwards, in
//! `join.rs`.

use crate::catalog::infoschema::{Pushed, SystemTable};
use crate::expr::{eval, BinOp, Env, Expr};
use crate::plan::bind::{Binder, Scope};
use crate::plan::select::{plan_query, Source, SourceKind};
use crate::plan::setop::{is_set_op, plan_set_op};
use crate::plan::{CteDef, PlanContext};
use crate::types::collation::Collation;
use crate::types::ExprKind;
use canyon_common::{Error, Result};
use sqlparser::ast;

/// How a source joins the ones before it.
pub(super) struct FromItem {
    pub(super) left: bool,
    pub(super) on: Option<Expr>,
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
                        member_types: Vec::new(),
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
    pub(super) fn derived(
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
        // `((a JOIN b ON x) LEFT JOIN c ON y)`: how MySQL and MariaDB write
        // a view's joins (and so every dump of a view). Joins associate to
        // the left, so a parenthesised join that starts a FROM item is the
        // same joins without the parentheses. One on the right of a join
        // (`a JOIN (b JOIN c ON x) ON y`) is not, and stays unsupported.
        if let ast::TableFactor::NestedJoin {
            table_with_joins: inner,
            alias: None,
        } = &twj.relation
        {
            let flat = ast::TableWithJoins {
                relation: inner.relation.clone(),
                joins: inner.joins.iter().chain(&twj.joins).cloned().collect(),
            };
            return self.table_with_joins(&flat);
        }
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
                        .filter(|c| !crate::plan::view::is_hidden(c))
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
        let names = &self.scopes[i].columns;
        (s.offset..s.offset + s.width)
            .filter(|p| !crate::plan::view::is_hidden(&names[p - s.offset]))
            .collect()
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
