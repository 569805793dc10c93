//! Views in queries: a view named in FROM is expanded into the query that
//! names it, and INSERT / UPDATE / DELETE through a view are rewritten into
//! statements on its base table.
//!
//! # Expansion in FROM
//! MySQL 8.0 (manual 27.5.2 "View Processing Algorithms") either *merges* a
//! view — its FROM, WHERE and select list are substituted into the outer
//! query block — or *materialises* it as a derived table (TEMPTABLE). It can
//! merge only a view without aggregates, DISTINCT, GROUP BY, HAVING, LIMIT,
//! UNION, subqueries in the select list, or constant-only select lists
//! ([`mergeable`] decides, as MySQL does), and ALGORITHM=TEMPTABLE never
//! merges.
//!
//! Canyon merges a view when MySQL would *and* it reads one base table
//! (directly or through views that do) with each of its columns a distinct
//! base column, in the table's column order (`merge_view`):
//!
//! ```text
//!   CREATE VIEW v AS SELECT id, a AS val FROM t WHERE a >= 20
//!   SELECT val FROM v WHERE id = 3
//!     FROM source `v` = base table t      scope columns: id, val, \0b
//!     v's WHERE `a >= 20`, bound on t     (b is hidden: no name reaches it,
//!       -> v's FROM item's condition       SELECT * and v.* skip it)
//!     EXPLAIN: 1 SIMPLE v const PRIMARY   (a point read, as on t itself)
//! ```
//!
//! The view's WHERE rides on its FROM item's condition: for an inner item
//! that is a WHERE conjunct (for a lone source it is folded into the WHERE:
//! `fold_single_item`), for the inner side of a LEFT JOIN it filters the
//! view's rows before the match, as merging it into the ON clause does in
//! MySQL. Any other view — aggregates, DISTINCT, LIMIT, UNION, joins,
//! expression columns, ALGORITHM=TEMPTABLE — is planned as a derived table
//! over its SELECT, planned again by each statement against its own
//! snapshot; a single-table one still gets the outer WHERE's conjuncts on
//! its columns pushed into it (`crate::plan::join`'s `push_into_derived`).
//!
//! Names: the view's columns are named by its column list, or by the names
//! its SELECT gave when it was created ([`ViewDef::columns`]). Its base
//! tables were qualified with the view's database when it is parsed
//! ([`qualify`]), so a view reads the same tables whatever the session's
//! current database. A `SELECT *` view keeps the columns it had when it was
//! created (MySQL expands `*` at CREATE time): a lone `*` is replaced by
//! the stored names (`expand_star`); for other forms, when the SELECT's
//! output has another width, the stored names are picked from it by name.
//! A view whose SELECT no longer plans (a base table or column dropped or
//! renamed) fails with 1356 ER_VIEW_INVALID.
//!
//! # Updatable views
//! A view is updatable (MySQL manual 27.5.3) when it is mergeable and reads
//! one base table: [`target`] resolves such a view (through nested
//! updatable views) to its base table, the column each view column maps to
//! (a plain column, or an expression: read-only), and the conjunction of
//! the WHERE clauses on the way. The DML statement is rewritten on the base
//! table ([`rewrite_insert`], [`rewrite_update`], [`rewrite_delete`]): its
//! column names mapped, the views' WHERE added to UPDATE's and DELETE's.
//! Errors as MySQL: 1288 (not updatable), 1471 (not insertable: an
//! expression column), 1348 (an expression column assigned).
//!
//! WITH CHECK OPTION: the rows an INSERT or UPDATE writes must satisfy the
//! conditions [`Target::check`] lists (CASCADED: every view's on the way
//! down; LOCAL: its own, and those of views below with their own check
//! option), else 1369 ER_VIEW_CHECK_FAILED. The session checks them before
//! it writes (see `crate::session`'s view file).
//!
//! # Not implemented
//! Merging join views and views with expression columns (they are derived
//! tables: EXPLAIN shows DERIVED, and a locking read through them locks
//! the rows read by the query blocks that lock); writes through join views (MySQL
//! writes one of their tables; here 1288, DELETE 1395). View recursion is
//! refused when CREATE OR REPLACE / ALTER VIEW would make a cycle
//! ([`reads_view`], 1462), and bounded at use ([`MAX_VIEW_NESTING`]).

use crate::catalog::view::{invalid, CheckOption, View, ViewDef};
use crate::catalog::Table;
use crate::parse::Parsed;
use crate::plan::bind::{Binder, Scope};
use crate::plan::from::From;
use crate::plan::select::{tables_read, SourceKind};
use crate::plan::PlanContext;
use canyon_common::{Error, Result};
use sqlparser::ast::{self, Statement};
use std::ops::ControlFlow;
use std::sync::Arc;

/// Views nested deeper than this (a view reading a view reading ...) fail
/// with 1462 ER_VIEW_RECURSIVE: a cycle made by CREATE OR REPLACE stops here.
pub const MAX_VIEW_NESTING: usize = 32;

/// The view `name` names, if it names one (a table, CTE or system table of
/// the name is looked up before: callers ask only when those failed).
pub(crate) fn find_view(ctx: &PlanContext<'_>, name: &ast::ObjectName) -> Option<Arc<View>> {
    // Every table reference asks: without views that is one branch.
    if ctx.catalog.views.is_empty() {
        return None;
    }
    let parts: Vec<&str> = name
        .0
        .iter()
        .map(|p| p.as_ident().map(|i| i.value.as_str()).unwrap_or(""))
        .collect();
    let (db, v) = match parts.as_slice() {
        [v] => (ctx.db?, *v),
        [d, v] => (*d, *v),
        _ => return None,
    };
    ctx.catalog.view(db, v).cloned()
}

/// The view's SELECT, parsed (once per snapshot) and qualified.
pub fn view_query(view: &View) -> Result<Arc<ast::Query>> {
    view.query(|text| {
        let mut q = parse_query(text)?;
        qualify(&mut q, &view.def.db);
        expand_star(&mut q, &view.def);
        Ok(q)
    })
}

/// `SELECT * FROM ...` without a column list: the `*` replaced by the
/// columns it stood for at CREATE time (MySQL stores the expansion), so a
/// column added to the base table later is not shown and one dropped makes
/// the view invalid, as in MySQL.
fn expand_star(q: &mut ast::Query, def: &ViewDef) {
    if def.explicit_columns {
        return;
    }
    let ast::SetExpr::Select(s) = q.body.as_mut() else {
        return;
    };
    if !matches!(s.projection.as_slice(), [ast::SelectItem::Wildcard(_)]) {
        return;
    }
    s.projection = def
        .columns
        .iter()
        .map(|c| ast::SelectItem::UnnamedExpr(ast::Expr::Identifier(quoted(c))))
        .collect();
}

/// Parses a SELECT's text.
pub fn parse_query(text: &str) -> Result<ast::Query> {
    let mut stmts = crate::parse::parse(text)?;
    match stmts.pop() {
        Some(Parsed::Sql(s)) if stmts.is_empty() => match *s {
            Statement::Query(q) => Ok(*q),
            _ => Err(Error::Syntax(text.to_string())),
        },
        _ => Err(Error::Syntax(text.to_string())),
    }
}

/// Qualifies every unqualified table name of `q` with `db`, except the
/// names of common table expressions it defines.
pub fn qualify(q: &mut ast::Query, db: &str) {
    use ast::{Visit, Visitor};
    struct Ctes(Vec<String>);
    impl Visitor for Ctes {
        type Break = ();
        fn pre_visit_query(&mut self, q: &ast::Query) -> ControlFlow<()> {
            if let Some(w) = &q.with {
                self.0
                    .extend(w.cte_tables.iter().map(|c| c.alias.name.value.clone()));
            }
            ControlFlow::Continue(())
        }
    }
    let mut ctes = Ctes(Vec::new());
    let _ = q.visit(&mut ctes);
    let _ = ast::visit_relations_mut(q, |name| {
        if let [part] = name.0.as_slice() {
            let is_cte = part.as_ident().is_some_and(|i| ctes.0.contains(&i.value));
            if !is_cte {
                name.0
                    .insert(0, ast::ObjectNamePart::Identifier(quoted(db)));
            }
        }
        ControlFlow::<()>::Continue(())
    });
}

fn quoted(s: &str) -> ast::Ident {
    ast::Ident::with_quote('`', s)
}

/// Whether an error planning a view's body means the view is invalid (1356)
/// rather than an error to pass on.
fn invalidates(e: &Error) -> bool {
    matches!(
        e,
        Error::UnknownTable { .. }
            | Error::UnknownColumn { .. }
            | Error::UnknownFunction(_)
            | Error::UnknownDatabase(_)
            | Error::TableAccessDenied { .. }
            | Error::DbAccessDenied { .. }
    )
}

/// Runs `f` one view nesting level deeper (1462 past [`MAX_VIEW_NESTING`]).
pub(crate) fn nested<T>(
    ctx: &PlanContext<'_>,
    def: &ViewDef,
    f: impl FnOnce() -> Result<T>,
) -> Result<T> {
    let depth = ctx.view_nesting.get();
    if depth >= MAX_VIEW_NESTING {
        return Err(Error::View {
            code: 1462,
            message: format!("`{}`.`{}` contains view recursion", def.db, def.name),
        });
    }
    ctx.view_nesting.set(depth + 1);
    let r = f();
    ctx.view_nesting.set(depth);
    r
}

impl From<'_> {
    /// Adds a reference to `view`, named `name` in this block, as a derived
    /// table over its SELECT (see the module doc).
    pub(super) fn view_reference(&mut self, view: &View, name: String) -> Result<()> {
        let def = &view.def;
        if self.merge_view(view, &name)? {
            return Ok(());
        }
        let q = view_query(view).map_err(|_| invalid(&def.db, &def.name))?;
        let params = self.params;
        let ctx = self.ctx;
        let r = nested(ctx, def, || {
            match self.derived(&q, name.clone(), def.columns.clone(), params) {
                Err(Error::Unsupported(m)) if m.starts_with("a derived column list") => {
                    if def.explicit_columns {
                        return Err(invalid(&def.db, &def.name));
                    }
                    // The base tables changed under a `SELECT *`: pick the
                    // stored columns by name.
                    let narrowed = by_name(&q, &def.columns);
                    self.derived(&narrowed, name.clone(), def.columns.clone(), params)
                }
                r => r,
            }
        });
        let params = r.map_err(|e| {
            if invalidates(&e) {
                invalid(&def.db, &def.name)
            } else {
                e
            }
        })?;
        self.params = params;
        if let Some(scope) = self.scopes.last_mut() {
            scope.db = def.db.clone();
        }
        let mut tables = Vec::new();
        match self.sources.last().map(|s| &s.kind) {
            Some(SourceKind::Derived(d)) => tables_read(d, &mut tables)?,
            Some(SourceKind::SetOp(sp)) => {
                for p in &sp.operands {
                    tables_read(p, &mut tables)?;
                }
            }
            _ => {}
        }
        self.ctx.views_used.borrow_mut().push(ViewUse {
            db: def.db.clone(),
            name: def.name.clone(),
            definer: (def.definer_user.clone(), def.definer_host.clone()),
            security: def.security,
            nested: self.ctx.view_nesting.get() > 0,
            tables,
        });
        Ok(())
    }
}

impl From<'_> {
    /// Merges `view` into this block when MySQL would and its shape allows
    /// (see the module doc): its base table becomes a source named `name`,
    /// whose scope shows the view's column names (the base columns the view
    /// leaves out are hidden: [`is_hidden`]), and its WHERE joins its FROM
    /// item's condition (`attach_view_filters`). False when it cannot be
    /// merged: then it is planned as a derived table.
    fn merge_view(&mut self, view: &View, name: &str) -> Result<bool> {
        let def = &view.def;
        if def.algorithm == crate::catalog::view::Algorithm::TempTable {
            return Ok(false);
        }
        let Ok(t) = target(self.ctx, view, "SELECT") else {
            return Ok(false);
        };
        let table = t.table.clone();
        // Each view column one base column, in the base table's order.
        let mut names: Vec<String> = table
            .def
            .columns
            .iter()
            .map(|c| format!("{HIDDEN}{}", c.name))
            .collect();
        let mut last = None;
        for (n, c) in &t.columns {
            let TargetColumn::Column(base) = c else {
                return Ok(false);
            };
            let Some(i) = table.column(base) else {
                return Ok(false);
            };
            if last.is_some_and(|l| i <= l) {
                return Ok(false);
            }
            last = Some(i);
            names[i] = n.clone();
        }
        let offset = self.next_offset;
        let filter = match &t.filter {
            None => None,
            Some(f) => {
                let mut b = Binder::new(None, None);
                b.scopes = vec![Scope::of_table(&table, None, offset)];
                b.own_from = 0;
                b.outer_len = offset;
                b.frame_len = offset + table.def.columns.len();
                b.plan_ctx = Some(self.ctx);
                b.conn_coll = self.ctx.conn_coll;
                b.params = self.params;
                b.context = "where clause";
                let bound = b.bind(f).map_err(|e| {
                    if invalidates(&e) {
                        invalid(&def.db, &def.name)
                    } else {
                        e
                    }
                })?;
                if b.params != self.params || b.min_outer_ref.is_some() {
                    return Ok(false);
                }
                Some(bound)
            }
        };
        let mut scope = Scope::of_table(&table, Some(name), offset);
        scope.columns = names.into();
        scope.db = def.db.clone();
        self.add_source(name.to_string(), SourceKind::Table(table.clone()), scope)?;
        if let Some(f) = filter {
            self.view_filters.push((self.sources.len() - 1, f));
        }
        self.ctx.views_used.borrow_mut().push(ViewUse {
            db: def.db.clone(),
            name: def.name.clone(),
            definer: (def.definer_user.clone(), def.definer_host.clone()),
            security: def.security,
            nested: self.ctx.view_nesting.get() > 0,
            tables: vec![table],
        });
        Ok(true)
    }

    /// Adds each merged view's WHERE to its FROM item's condition (an inner
    /// item's is a WHERE conjunct; a LEFT JOIN's inner item's filters the
    /// view's rows before the match). Run once the FROM clause is planned.
    pub(super) fn attach_view_filters(&mut self) {
        for (i, f) in std::mem::take(&mut self.view_filters) {
            if let Some(item) = self.items.get_mut(i) {
                item.on = Some(match item.on.take() {
                    Some(on) => crate::expr::Expr::Binary(
                        crate::expr::BinOp::And,
                        Box::new(on),
                        Box::new(f),
                    ),
                    None => f,
                });
            }
        }
    }
}

/// The prefix of the scope name of a base column a merged view leaves out:
/// no name a statement can write starts with it, so the column cannot be
/// named, and `SELECT *` skips it.
const HIDDEN: char = '\u{0}';

/// Whether a scope's column name is one a merged view hides.
pub(crate) fn is_hidden(name: &str) -> bool {
    name.starts_with(HIDDEN)
}

/// A FROM clause with a single inner item: the condition a merged view put
/// on it joins the WHERE clause (the single-table read path checks only
/// the WHERE).
pub(super) fn fold_single_item(
    items: &mut [crate::plan::from::FromItem],
    filter: Option<crate::expr::Expr>,
) -> Option<crate::expr::Expr> {
    let [item] = items else {
        return filter;
    };
    if item.left {
        return filter;
    }
    match (item.on.take(), filter) {
        (Some(on), Some(f)) => Some(crate::expr::Expr::Binary(
            crate::expr::BinOp::And,
            Box::new(f),
            Box::new(on),
        )),
        (on, f) => on.or(f),
    }
}

/// One view a statement's plan expanded: what the session's privilege
/// check needs (the invoker's SELECT on the view; the definer's, or the
/// invoker's, on what its body reads).
#[derive(Debug, Clone)]
pub struct ViewUse {
    /// The view's database.
    pub db: String,
    /// The view's name.
    pub name: String,
    /// Its DEFINER (user, host).
    pub definer: (String, String),
    /// Its SQL SECURITY.
    pub security: crate::catalog::view::Security,
    /// Whether it was named inside another view's body (checked as part of
    /// that view, not against the invoker).
    pub nested: bool,
    /// The base tables its body reads (nested views' included).
    pub tables: Vec<Arc<Table>>,
}

/// `SELECT `c1`, `c2` ... FROM (q) AS `v``: the named columns of `q`.
fn by_name(q: &ast::Query, columns: &[String]) -> ast::Query {
    let items: Vec<String> = columns
        .iter()
        .map(|c| format!("`{}`", c.replace('`', "``")))
        .collect();
    let text = format!("SELECT {} FROM ({q}) AS `v`", items.join(", "));
    parse_query(&text).unwrap_or_else(|_| q.clone())
}

// ---- mergeability and updatable views ----------------------------------------------

/// Whether MySQL can merge a view with this SELECT (manual 27.5.2): one
/// query block without aggregates, window functions, DISTINCT, GROUP BY,
/// HAVING, LIMIT, set operations, WITH, or subqueries in the select list,
/// reading at least one table.
pub fn mergeable(q: &ast::Query) -> bool {
    let ast::SetExpr::Select(s) = q.body.as_ref() else {
        return false;
    };
    if q.with.is_some() || q.limit_clause.is_some() || q.fetch.is_some() || !q.locks.is_empty() {
        return false;
    }
    let no_group = match &s.group_by {
        ast::GroupByExpr::Expressions(e, m) => e.is_empty() && m.is_empty(),
        ast::GroupByExpr::All(_) => false,
    };
    if s.distinct.is_some() || !no_group || s.having.is_some() || s.from.is_empty() {
        return false;
    }
    !s.projection.iter().any(|item| match item {
        ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
            has_aggregate_or_subquery(e)
        }
        _ => false,
    })
}

/// MySQL's aggregate functions (those Canyon lacks stop a merge too).
const AGGREGATES: [&str; 16] = [
    "COUNT",
    "SUM",
    "MIN",
    "MAX",
    "AVG",
    "GROUP_CONCAT",
    "BIT_AND",
    "BIT_OR",
    "BIT_XOR",
    "STD",
    "STDDEV",
    "STDDEV_POP",
    "STDDEV_SAMP",
    "VARIANCE",
    "VAR_POP",
    "VAR_SAMP",
];

/// Whether `q` (qualified) reads the view `db`.`name`, directly or through
/// the views it reads: CREATE OR REPLACE / ALTER VIEW refuse such a cycle
/// (1462), as MySQL does.
pub fn reads_view(catalog: &crate::catalog::Catalog, q: &ast::Query, db: &str, name: &str) -> bool {
    fn walk(
        catalog: &crate::catalog::Catalog,
        q: &ast::Query,
        target: (&str, &str),
        depth: usize,
    ) -> bool {
        if depth > MAX_VIEW_NESTING {
            return true;
        }
        let mut found = false;
        let _ = ast::visit_relations(q, |n| {
            let parts: Vec<&str> =
                n.0.iter()
                    .map(|p| p.as_ident().map(|i| i.value.as_str()).unwrap_or(""))
                    .collect();
            if let [d, v] = parts.as_slice() {
                if (*d, *v) == target {
                    found = true;
                } else if let Some(view) = catalog.view(d, v) {
                    found |= view_query(view)
                        .is_ok_and(|inner| walk(catalog, &inner, target, depth + 1));
                }
            }
            if found {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        found
    }
    walk(catalog, q, (db, name), 0)
}

/// Whether a view's SELECT reads a user variable or a placeholder (MySQL
/// refuses such a view: 1351 ER_VIEW_SELECT_VARIABLE).
pub fn reads_variable(q: &ast::Query) -> bool {
    use ast::{Visit, Visitor};
    struct Find(bool);
    impl Visitor for Find {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &ast::Expr) -> ControlFlow<()> {
            let hit = match e {
                ast::Expr::Identifier(i) => i.quote_style.is_none() && i.value.starts_with('@'),
                ast::Expr::Value(v) => matches!(v.value, ast::Value::Placeholder(_)),
                _ => false,
            };
            if hit {
                self.0 = true;
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        }
    }
    let mut f = Find(false);
    let _ = q.visit(&mut f);
    f.0
}

/// Whether `e` holds an aggregate call or a subquery (either stops a merge
/// in a select list).
fn has_aggregate_or_subquery(e: &ast::Expr) -> bool {
    use ast::{Visit, Visitor};
    struct Find(bool);
    impl Visitor for Find {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &ast::Expr) -> ControlFlow<()> {
            let hit = match e {
                ast::Expr::Subquery(_)
                | ast::Expr::Exists { .. }
                | ast::Expr::InSubquery { .. } => true,
                ast::Expr::Function(f) => {
                    let name = f.name.to_string().to_ascii_uppercase();
                    f.over.is_some() || AGGREGATES.contains(&name.as_str())
                }
                _ => false,
            };
            if hit {
                self.0 = true;
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        }
    }
    let mut f = Find(false);
    let _ = e.visit(&mut f);
    f.0
}

/// What one view column stands for in its base table.
#[derive(Debug, Clone)]
pub enum TargetColumn {
    /// A base column, by name: updatable.
    Column(String),
    /// An expression over the base columns (written unqualified): readable,
    /// not updatable (1348) nor insertable (1471).
    Expr(Box<ast::Expr>),
}

/// An updatable view resolved down to its base table.
#[derive(Debug, Clone)]
pub struct Target {
    /// The base table.
    pub table: Arc<Table>,
    /// The view's columns by name, with what each stands for.
    pub columns: Vec<(String, TargetColumn)>,
    /// The conjunction of the WHERE clauses of the views on the way down
    /// (over the base table's columns, unqualified).
    pub filter: Option<ast::Expr>,
    /// The conditions WITH CHECK OPTION enforces on written rows.
    pub check: Vec<ast::Expr>,
    /// The view named by the statement (for error messages).
    pub db: String,
    /// Its name.
    pub name: String,
}

/// MySQL's error for a write through a view that cannot take it: 1471 for
/// an INSERT, 1288 otherwise.
fn not_updatable(def: &ViewDef, what: &str) -> Error {
    if what == "INSERT" {
        return Error::View {
            code: 1471,
            message: format!(
                "The target table {} of the INSERT is not insertable-into",
                def.name
            ),
        };
    }
    Error::View {
        code: 1288,
        message: format!(
            "The target table {} of the {what} is not updatable",
            def.name
        ),
    }
}

/// 1395 ER_VIEW_DELETE_MERGE_VIEW, for a DELETE through a join view.
fn join_view_delete(def: &ViewDef) -> Error {
    Error::View {
        code: 1395,
        message: format!("Can not delete from join view '{}.{}'", def.db, def.name),
    }
}

/// Resolves an updatable view to its base table (`what`: "UPDATE",
/// "DELETE" or "INSERT", for the 1288 message).
pub fn target(ctx: &PlanContext<'_>, view: &View, what: &str) -> Result<Target> {
    resolve_target(ctx, view, what, false)
}

fn resolve_target(
    ctx: &PlanContext<'_>,
    view: &View,
    what: &str,
    outer_checks: bool,
) -> Result<Target> {
    let def = &view.def;
    nested(ctx, def, || {
        let q = view_query(view).map_err(|_| invalid(&def.db, &def.name))?;
        if !mergeable(&q) || def.algorithm == crate::catalog::view::Algorithm::TempTable {
            return Err(not_updatable(def, what));
        }
        let ast::SetExpr::Select(s) = q.body.as_ref() else {
            return Err(not_updatable(def, what));
        };
        let joined = s.from.len() > 1 || s.from.iter().any(|t| !t.joins.is_empty());
        if joined && what == "DELETE" {
            return Err(join_view_delete(def));
        }
        // MySQL writes one table of a join view; Canyon does not (1288).
        let [twj] = s.from.as_slice() else {
            return Err(not_updatable(def, what));
        };
        if !twj.joins.is_empty() {
            return Err(not_updatable(def, what));
        }
        let ast::TableFactor::Table {
            name,
            alias,
            args: None,
            ..
        } = &twj.relation
        else {
            return Err(not_updatable(def, what));
        };
        let own_check = def.check != CheckOption::None;
        // CASCADED checks every view below; LOCAL only those with their own.
        let check_below = outer_checks || def.check == CheckOption::Cascaded;
        // The base: a table, or an updatable view (resolved recursively).
        let (table, base_cols, base_filter, mut checks) = match find_view(ctx, name) {
            Some(inner) => {
                let t = resolve_target(ctx, &inner, what, check_below)?;
                (t.table, Some(t.columns), t.filter, t.check)
            }
            _ => {
                let t = ctx.resolve(name).map_err(|e| {
                    if invalidates(&e) {
                        invalid(&def.db, &def.name)
                    } else {
                        e
                    }
                })?;
                (t, None, None, Vec::new())
            }
        };
        let qualifier = alias
            .as_ref()
            .map(|a| a.name.value.clone())
            .unwrap_or_else(|| name_last(name));
        // What a column name of this view's SELECT means below.
        let below = |col: &str| -> Option<TargetColumn> {
            match &base_cols {
                Some(cols) => cols
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(col))
                    .map(|(_, c)| c.clone()),
                None => table
                    .column(col)
                    .map(|i| TargetColumn::Column(table.def.columns[i].name.clone())),
            }
        };
        let below_names: Vec<String> = match &base_cols {
            Some(cols) => cols.iter().map(|(n, _)| n.clone()).collect(),
            None => table.def.columns.iter().map(|c| c.name.clone()).collect(),
        };
        let rewrite = |e: &ast::Expr| -> Result<ast::Expr> {
            substitute(e, &qualifier, &|c| below(c)).ok_or_else(|| invalid(&def.db, &def.name))
        };
        let mut columns: Vec<(String, TargetColumn)> = Vec::new();
        for item in &s.projection {
            match item {
                ast::SelectItem::Wildcard(_) => {
                    for n in &below_names {
                        let c = below(n).ok_or_else(|| invalid(&def.db, &def.name))?;
                        columns.push((n.clone(), c));
                    }
                }
                ast::SelectItem::QualifiedWildcard(k, _) => {
                    if !k
                        .to_string()
                        .trim_matches('`')
                        .eq_ignore_ascii_case(&qualifier)
                    {
                        return Err(invalid(&def.db, &def.name));
                    }
                    for n in &below_names {
                        let c = below(n).ok_or_else(|| invalid(&def.db, &def.name))?;
                        columns.push((n.clone(), c));
                    }
                }
                ast::SelectItem::UnnamedExpr(e) => {
                    let name = match e {
                        ast::Expr::Identifier(i) => i.value.clone(),
                        ast::Expr::CompoundIdentifier(p) => {
                            p.last().map(|i| i.value.clone()).unwrap_or_default()
                        }
                        other => other.to_string(),
                    };
                    columns.push((name, column_of(rewrite(e)?)));
                }
                ast::SelectItem::ExprWithAlias { expr, alias } => {
                    columns.push((alias.value.clone(), column_of(rewrite(expr)?)));
                }
                _ => return Err(not_updatable(def, what)),
            }
        }
        // The view's own names: its column list (or stored names) by position.
        if def.columns.len() == columns.len() {
            for (c, n) in columns.iter_mut().zip(&def.columns) {
                c.0 = n.clone();
            }
        } else if def.explicit_columns {
            return Err(invalid(&def.db, &def.name));
        } else {
            let mut picked = Vec::new();
            for n in &def.columns {
                let c = columns
                    .iter()
                    .find(|(m, _)| m.eq_ignore_ascii_case(n))
                    .cloned()
                    .ok_or_else(|| invalid(&def.db, &def.name))?;
                picked.push(c);
            }
            columns = picked;
        }
        let own_filter = s.selection.as_ref().map(rewrite).transpose()?;
        let filter = and(base_filter.clone(), own_filter.clone());
        if own_check || outer_checks {
            if let Some(f) = &own_filter {
                checks.push(f.clone());
            }
        }
        Ok(Target {
            table,
            columns,
            filter,
            check: checks,
            db: def.db.clone(),
            name: def.name.clone(),
        })
    })
}

fn name_last(n: &ast::ObjectName) -> String {
    n.0.last()
        .and_then(|p| p.as_ident())
        .map(|i| i.value.clone())
        .unwrap_or_default()
}

fn column_of(e: ast::Expr) -> TargetColumn {
    match e {
        ast::Expr::Identifier(i) => TargetColumn::Column(i.value),
        e => TargetColumn::Expr(Box::new(e)),
    }
}

fn and(a: Option<ast::Expr>, b: Option<ast::Expr>) -> Option<ast::Expr> {
    match (a, b) {
        (Some(a), Some(b)) => Some(ast::Expr::BinaryOp {
            left: Box::new(nest(a)),
            op: ast::BinaryOperator::And,
            right: Box::new(nest(b)),
        }),
        (a, None) => a,
        (None, b) => b,
    }
}

fn nest(e: ast::Expr) -> ast::Expr {
    match e {
        e @ (ast::Expr::Identifier(_) | ast::Expr::Nested(_) | ast::Expr::Value(_)) => e,
        e => ast::Expr::Nested(Box::new(e)),
    }
}

/// `e` with every column reference (unqualified, or qualified by
/// `qualifier`) replaced by what `map` says it stands for; `None` when a
/// name maps to nothing. Subqueries are left as they are: their names are
/// their own.
pub fn substitute(
    e: &ast::Expr,
    qualifier: &str,
    map: &dyn Fn(&str) -> Option<TargetColumn>,
) -> Option<ast::Expr> {
    use ast::VisitorMut;
    struct Sub<'a> {
        qualifier: &'a str,
        map: &'a dyn Fn(&str) -> Option<TargetColumn>,
        depth: usize,
        failed: bool,
    }
    impl VisitorMut for Sub<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, _: &mut ast::Query) -> ControlFlow<()> {
            self.depth += 1;
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _: &mut ast::Query) -> ControlFlow<()> {
            self.depth -= 1;
            ControlFlow::Continue(())
        }
        fn post_visit_expr(&mut self, e: &mut ast::Expr) -> ControlFlow<()> {
            if self.depth > 0 {
                return ControlFlow::Continue(());
            }
            let name = match e {
                ast::Expr::Identifier(i) => Some(i.value.clone()),
                ast::Expr::CompoundIdentifier(p) if p.len() >= 2 => {
                    let q = &p[p.len() - 2];
                    q.value
                        .eq_ignore_ascii_case(self.qualifier)
                        .then(|| p[p.len() - 1].value.clone())
                }
                _ => None,
            };
            let name = name.filter(|n| !n.starts_with('@') && !n.eq_ignore_ascii_case("DEFAULT"));
            if let Some(n) = name {
                match (self.map)(&n) {
                    Some(TargetColumn::Column(c)) => *e = ast::Expr::Identifier(quoted(&c)),
                    Some(TargetColumn::Expr(x)) => *e = nest(*x),
                    None => {
                        self.failed = true;
                        return ControlFlow::Break(());
                    }
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut out = e.clone();
    let mut s = Sub {
        qualifier,
        map,
        depth: 0,
        failed: false,
    };
    let _ = ast::VisitMut::visit(&mut out, &mut s);
    (!s.failed).then_some(out)
}

impl Target {
    /// What view column `name` stands for (1054 if the view has none).
    pub fn column(&self, name: &str, context: &str) -> Result<&TargetColumn> {
        self.columns
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, c)| c)
            .ok_or_else(|| Error::UnknownColumn {
                column: name.to_string(),
                context: context.to_string(),
            })
    }

    /// `e` over the view's columns, rewritten over the base table's.
    pub fn map_expr(&self, e: &ast::Expr, qualifier: &str, context: &str) -> Result<ast::Expr> {
        // Find the first unknown name for the error message.
        let unknown = std::cell::RefCell::new(None);
        let r = substitute(e, qualifier, &|n| {
            let c = self
                .columns
                .iter()
                .find(|(m, _)| m.eq_ignore_ascii_case(n))
                .map(|(_, c)| c.clone());
            if c.is_none() {
                *unknown.borrow_mut() = Some(n.to_string());
            }
            c
        });
        r.ok_or_else(|| Error::UnknownColumn {
            column: unknown.into_inner().unwrap_or_default(),
            context: context.to_string(),
        })
    }

    /// The base column an assignment or insert names (1348 / 1471 for an
    /// expression column).
    pub fn writable(&self, name: &str, insert: bool, context: &str) -> Result<String> {
        match self.column(name, context)? {
            TargetColumn::Column(c) => Ok(c.clone()),
            TargetColumn::Expr(_) if insert => Err(Error::View {
                code: 1471,
                message: format!(
                    "The target table {} of the INSERT is not insertable-into",
                    self.name
                ),
            }),
            TargetColumn::Expr(_) => Err(Error::View {
                code: 1348,
                message: format!("Column '{name}' is not updatable"),
            }),
        }
    }

    /// The base table as an object name (qualified).
    pub fn table_name(&self) -> ast::ObjectName {
        ast::ObjectName(vec![
            ast::ObjectNamePart::Identifier(quoted(&self.table.def.db)),
            ast::ObjectNamePart::Identifier(quoted(&self.table.def.name)),
        ])
    }

    /// The check conditions, as one expression (`None`: nothing to check).
    pub fn check_expr(&self) -> Option<ast::Expr> {
        self.check
            .iter()
            .cloned()
            .fold(None, |acc, c| and(acc, Some(c)))
    }
}

// ---- INSERT / UPDATE / DELETE through a view ----------------------------------------

/// The view a DML statement writes, if it writes one: its target name.
pub fn dml_target(stmt: &Statement) -> Option<&ast::ObjectName> {
    match stmt {
        Statement::Insert(i) => match &i.table {
            ast::TableObject::TableName(n) => Some(n),
            _ => None,
        },
        Statement::Update(u) if u.table.joins.is_empty() && u.from.is_none() => {
            match &u.table.relation {
                ast::TableFactor::Table { name, .. } => Some(name),
                _ => None,
            }
        }
        Statement::Delete(d) if d.tables.is_empty() && d.using.is_none() => match &d.from {
            ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f) => {
                match f.as_slice() {
                    [twj] if twj.joins.is_empty() => match &twj.relation {
                        ast::TableFactor::Table { name, .. } => Some(name),
                        _ => None,
                    },
                    _ => None,
                }
            }
        },
        _ => None,
    }
}

/// A DML statement on a view, rewritten onto the view's base table, with
/// the resolved view (its check conditions are the caller's to enforce).
/// `None` when the statement does not write a view.
pub fn rewrite_dml(ctx: &PlanContext<'_>, stmt: &Statement) -> Result<Option<(Statement, Target)>> {
    if ctx.catalog.views.is_empty() {
        return Ok(None);
    }
    let Some(name) = dml_target(stmt) else {
        return Ok(None);
    };
    let Some(view) = find_view(ctx, name) else {
        return Ok(None);
    };
    let what = match stmt {
        Statement::Insert(_) => "INSERT",
        Statement::Update(_) => "UPDATE",
        _ => "DELETE",
    };
    let t = target(ctx, &view, what)?;
    let out = match stmt {
        Statement::Insert(i) => Statement::Insert(rewrite_insert(&t, i)?),
        Statement::Update(u) => Statement::Update(rewrite_update(&t, u)?),
        Statement::Delete(d) => Statement::Delete(rewrite_delete(&t, d)?),
        _ => return Ok(None),
    };
    Ok(Some((out, t)))
}

fn object(name: &str) -> ast::ObjectName {
    ast::ObjectName(vec![ast::ObjectNamePart::Identifier(quoted(name))])
}

fn last_ident(n: &ast::ObjectName) -> String {
    name_last(n)
}

fn map_assignments(
    t: &Target,
    list: &[ast::Assignment],
    qualifier: &str,
    insert: bool,
) -> Result<Vec<ast::Assignment>> {
    list.iter()
        .map(|a| {
            let target = match &a.target {
                ast::AssignmentTarget::ColumnName(n) => ast::AssignmentTarget::ColumnName(object(
                    &t.writable(&last_ident(n), insert, "field list")?,
                )),
                ast::AssignmentTarget::Tuple(_) => {
                    return Err(Error::Unsupported(
                        "a tuple assignment through a view".into(),
                    ))
                }
            };
            Ok(ast::Assignment {
                target,
                value: t.map_expr(&a.value, qualifier, "field list")?,
            })
        })
        .collect()
}

/// INSERT into a view: the column list (all the view's columns when none is
/// given) mapped to base columns (1471 for an expression column).
pub fn rewrite_insert(t: &Target, i: &ast::Insert) -> Result<ast::Insert> {
    let mut out = i.clone();
    out.table = ast::TableObject::TableName(t.table_name());
    let qualifier = t.name.clone();
    if i.assignments.is_empty() {
        let names: Vec<String> = if i.columns.is_empty() {
            t.columns.iter().map(|(n, _)| n.clone()).collect()
        } else {
            i.columns.iter().map(last_ident).collect()
        };
        out.columns = names
            .iter()
            .map(|n| t.writable(n, true, "field list").map(|c| object(&c)))
            .collect::<Result<_>>()?;
    } else {
        out.assignments = map_assignments(t, &i.assignments, &qualifier, true)?;
    }
    if let Some(ast::OnInsert::DuplicateKeyUpdate(list)) = &i.on {
        out.on = Some(ast::OnInsert::DuplicateKeyUpdate(map_assignments(
            t, list, &qualifier, false,
        )?));
    }
    Ok(out)
}

/// The name a single-table DML statement calls its target by.
fn qualifier_of(f: &ast::TableFactor, t: &Target) -> String {
    match f {
        ast::TableFactor::Table { alias: Some(a), .. } => a.name.value.clone(),
        _ => t.name.clone(),
    }
}

fn base_factor(t: &Target) -> ast::TableFactor {
    ast::TableFactor::Table {
        name: t.table_name(),
        alias: None,
        args: None,
        with_hints: vec![],
        version: None,
        with_ordinality: false,
        partitions: vec![],
        json_path: None,
        sample: None,
        index_hints: vec![],
    }
}

fn map_order(t: &Target, order: &[ast::OrderByExpr], q: &str) -> Result<Vec<ast::OrderByExpr>> {
    order
        .iter()
        .map(|o| {
            let mut o = o.clone();
            o.expr = t.map_expr(&o.expr, q, "order clause")?;
            Ok(o)
        })
        .collect()
}

/// UPDATE of a view: assignments and WHERE mapped, the views' WHERE added.
pub fn rewrite_update(t: &Target, u: &ast::Update) -> Result<ast::Update> {
    let q = qualifier_of(&u.table.relation, t);
    let mut out = u.clone();
    out.table.relation = base_factor(t);
    out.assignments = map_assignments(t, &u.assignments, &q, false)?;
    let own = u
        .selection
        .as_ref()
        .map(|e| t.map_expr(e, &q, "where clause"))
        .transpose()?;
    out.selection = and(t.filter.clone(), own);
    out.order_by = map_order(t, &u.order_by, &q)?;
    Ok(out)
}

/// DELETE from a view: WHERE mapped, the views' WHERE added.
pub fn rewrite_delete(t: &Target, d: &ast::Delete) -> Result<ast::Delete> {
    let mut out = d.clone();
    let (ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f)) = &mut out.from;
    let q = qualifier_of(&f[0].relation, t);
    f[0].relation = base_factor(t);
    let own = d
        .selection
        .as_ref()
        .map(|e| t.map_expr(e, &q, "where clause"))
        .transpose()?;
    out.selection = and(t.filter.clone(), own);
    out.order_by = map_order(t, &d.order_by, &q)?;
    Ok(out)
}
