//! Planning: from a parsed statement to an executable plan, against one catalog
//! snapshot.
//!
//! A plan holds `Arc<Table>`s and bound expressions; it is immutable and can be
//! re-executed with new parameters (prepared statements keep it until the
//! catalog version changes). Access-path choice lives in [`crate::plan::access`].
//!
//! Scope of this version: single-table SELECT / INSERT / UPDATE / DELETE, with
//! MySQL's write forms that OLTP applications use: `INSERT ... SET`,
//! `INSERT ... ON DUPLICATE KEY UPDATE` (with `VALUES(col)` and the 8.0.19 row
//! alias `AS new`), `REPLACE`, `INSERT / REPLACE ... SELECT`, uncorrelated
//! subqueries in UPDATE / DELETE, and `UPDATE` / `DELETE ... ORDER BY ... LIMIT`,
//! with the modifiers LOW_PRIORITY, QUICK, HIGH_PRIORITY, DELAYED (warning
//! 3005) and IGNORE. Multi-table UPDATE / DELETE are planned as a SELECT over
//! their join ([`crate::plan::multi_dml`]), which takes correlated subqueries
//! too; correlated subqueries in a single-table UPDATE / DELETE are refused
//! with error 1235 (not supported yet), never silently ignored.
//!
//! # Subqueries in DML
//! `INSERT ... SELECT` plans its source as a top-level SELECT
//! ([`crate::plan::select::plan_select`]'s planner); the executor reads the whole
//! source before inserting the first row, which is what MySQL does when source
//! and target are the same table and is correct in every case.
//!
//! UPDATE and DELETE bind their expressions with subqueries allowed. A DML scan
//! holds the transaction mutably, so a subquery cannot run in the middle of it:
//! only uncorrelated subqueries are accepted, and the executor runs each once
//! before the scan and substitutes its result (see `exec::Prefetched`).
//! Because an `IN (SELECT ...)` then becomes an IN list that can drive an access
//! path, such statements choose their access path (and whether it delivers the
//! ORDER BY) at execution time. As in MySQL, a subquery may not read the table
//! being changed (error 1093) except inside a derived table, which is
//! materialised before the change starts.
//!
//! # How ON DUPLICATE KEY UPDATE is bound
//! The assignments see two rows: the existing (conflicting) row, by plain column
//! names, and the row that would have been inserted, through `VALUES(col)` or the
//! row alias. They are bound against one frame of `2 * ncols` columns:
//!
//! ```text
//!   frame:  [ existing c0 .. c(n-1) | would-be-inserted c0 .. c(n-1) ]
//!   `c`        -> Column(c)
//!   VALUES(c)  -> Column(n + c)        (also `new.c` with `AS new`)
//! ```
//!
//! The planner rewrites `VALUES(c)` in the parsed expression into a reference to
//! a hidden column of a frame table (the table's columns followed by hidden
//! copies), then lets the general binder bind the rest, so the binder needs no
//! special form for it.

use crate::catalog::{Catalog, Table};
use crate::expr::{BinOp, Expr};
use crate::plan::access::{choose_access, Access};
use crate::plan::bind::Binder;
pub use crate::plan::select::LockMode;
use crate::plan::select::{select_plan, SelectPlan, SourceKind};
use crate::types::result::Column;
use crate::types::value::Value;
use canyon_common::{Error, Result};
use sqlparser::ast;
use std::cell::RefCell;
use std::sync::Arc;

/// An INSERT (or REPLACE).
#[derive(Debug)]
pub struct InsertPlan {
    /// Target table.
    pub table: Arc<Table>,
    /// Positions of the listed columns (all columns when no list was given; the
    /// SET targets for `INSERT ... SET`).
    pub columns: Vec<usize>,
    /// VALUES rows (`None`: DEFAULT); empty for `INSERT ... SELECT`.
    pub rows: Vec<Vec<Option<Expr>>>,
    /// `INSERT ... SELECT`: the source query, whose visible columns are
    /// `columns`, in order.
    pub select: Option<Box<SelectPlan>>,
    /// INSERT IGNORE: rows that collide (on insert, or in the ON DUPLICATE KEY
    /// UPDATE that follows) are skipped with warning 1062.
    pub ignore: bool,
    /// What a row that collides with an existing row does.
    pub on_duplicate: OnDuplicate,
    /// INSERT / REPLACE DELAYED: run as a plain INSERT / REPLACE with MySQL
    /// 8's warning 3005 (ER_WARN_LEGACY_SYNTAX_CONVERTED).
    pub delayed: bool,
    /// The catalog planned on, when the table holds or is referenced by a
    /// foreign key (see `crate::exec::foreign`); set by the session.
    pub fk: Option<Arc<Catalog>>,
}

/// What an inserted row that collides with an existing row on the primary key or
/// a unique index does.
#[derive(Debug)]
pub enum OnDuplicate {
    /// Error 1062 (a warning and the row skipped under IGNORE).
    Error,
    /// REPLACE: the colliding rows are deleted, then the row is inserted.
    Replace,
    /// ON DUPLICATE KEY UPDATE: the first colliding row is updated instead.
    /// Expressions are bound over the frame `existing row ++ inserted row` (see
    /// the module doc) and applied left to right, each seeing the earlier ones.
    Update(Vec<(usize, Expr)>),
}

/// The order in which UPDATE / DELETE visit rows (`ORDER BY`).
#[derive(Debug)]
pub enum RowOrder {
    /// No ORDER BY: the access path's order.
    Any,
    /// The access path delivers the ORDER BY (a primary-key prefix, all in one
    /// direction): scan, backwards when `reverse`, and stop at LIMIT.
    Key {
        /// Scan from the high end (ORDER BY ... DESC).
        reverse: bool,
    },
    /// Lock and read every matching row, sort by these keys (`true`: DESC), then
    /// process the first LIMIT rows — what MySQL's filesort does.
    Sort(Vec<(Expr, bool)>),
}

/// An UPDATE.
#[derive(Debug)]
pub struct UpdatePlan {
    /// Target table.
    pub table: Arc<Table>,
    /// How rows are found.
    pub access: Access,
    /// WHERE.
    pub filter: Option<Expr>,
    /// Whether reading `access`'s ranges already evaluates `filter`
    /// ([`Access::implies`]).
    pub filter_implied: bool,
    /// SET column = expr, applied left to right as MySQL does.
    pub assignments: Vec<(usize, Expr)>,
    /// ORDER BY.
    pub order: RowOrder,
    /// LIMIT.
    pub limit: Option<Expr>,
    /// Whether an expression holds a subquery (all uncorrelated): they run before
    /// the scan, and `access` and `order` are chosen again on the result (see the
    /// module doc).
    pub subqueries: bool,
    /// UPDATE IGNORE: a row whose new values collide with a unique key or
    /// lack a parent keeps its old values (warning 1062 / 1452), NULL in a
    /// NOT NULL column stores the column's implicit default (warning 1048),
    /// and strict mode leaves conversion warnings warnings.
    pub ignore: bool,
    /// A multi-table UPDATE: the join and its targets (`table` is then the
    /// first target, and `access`, `filter`, `assignments` are unused).
    pub multi: Option<Box<MultiTables>>,
    /// See [`InsertPlan::fk`]; for a multi-table statement, set when any
    /// target has foreign keys.
    pub fk: Option<Arc<Catalog>>,
}

/// The join of a multi-table UPDATE or DELETE (see
/// [`crate::plan::multi_dml`]): a SELECT whose rows carry, for each target,
/// all its columns, then the SET values.
#[derive(Debug)]
pub struct MultiTables {
    /// `SELECT <targets' columns>, <SET values> FROM <tables> WHERE <where>`.
    pub select: Box<SelectPlan>,
    /// The tables written, in the order the FROM clause names them.
    pub targets: Vec<MultiTarget>,
}

/// One table a multi-table UPDATE or DELETE writes.
#[derive(Debug)]
pub struct MultiTarget {
    /// The table.
    pub table: Arc<Table>,
    /// Where its columns start in the join's rows.
    pub offset: usize,
    /// UPDATE: (column, position of its new value in the join's rows), in
    /// the SET list's order.
    pub assignments: Vec<(usize, usize)>,
}

impl UpdatePlan {
    /// Whether the SET list assigns a column of the primary key or of any index:
    /// only such an UPDATE can change a key's distinct-value counts (the
    /// planner's statistics, `crate::catalog::stats`). Assigning a column its own value
    /// counts too; this looks at the plan, not at the rows.
    pub fn assigns_key_column(&self) -> bool {
        let def = &self.table.def;
        self.assignments.iter().any(|(c, _)| {
            def.primary_key.contains(c) || def.indexes.iter().any(|ix| ix.columns.contains(c))
        })
    }
}

/// A DELETE.
#[derive(Debug)]
pub struct DeletePlan {
    /// Target table.
    pub table: Arc<Table>,
    /// How rows are found.
    pub access: Access,
    /// WHERE.
    pub filter: Option<Expr>,
    /// Whether reading `access`'s ranges already evaluates `filter`
    /// ([`Access::implies`]).
    pub filter_implied: bool,
    /// ORDER BY.
    pub order: RowOrder,
    /// LIMIT.
    pub limit: Option<Expr>,
    /// Whether an expression holds a subquery (see [`UpdatePlan::subqueries`]).
    pub subqueries: bool,
    /// DELETE IGNORE (accepted; see `crate::exec::update::run_delete`).
    pub ignore: bool,
    /// A multi-table DELETE (see [`UpdatePlan::multi`]).
    pub multi: Option<Box<MultiTables>>,
    /// See [`UpdatePlan::fk`].
    pub fk: Option<Arc<Catalog>>,
}

/// An executable plan.
#[derive(Debug)]
pub enum Plan {
    /// SELECT (boxed: by far the largest plan).
    Select(Box<SelectPlan>),
    /// INSERT.
    Insert(InsertPlan),
    /// UPDATE.
    Update(UpdatePlan),
    /// DELETE.
    Delete(DeletePlan),
}

impl Plan {
    /// The result-set columns (empty for DML).
    pub fn columns(&self) -> Arc<[Column]> {
        match self {
            Plan::Select(s) => s.columns.clone(),
            _ => Arc::from(Vec::new()),
        }
    }

    /// Every table the statement reads (not counting the table a DML statement
    /// writes): joins, derived tables, subqueries, an INSERT's SELECT.
    pub fn tables_read(&self, out: &mut Vec<Arc<Table>>) -> Result<()> {
        use crate::plan::select::{subquery_tables, tables_read};
        match self {
            Plan::Select(s) => tables_read(s, out)?,
            Plan::Insert(i) => {
                if let Some(sel) = &i.select {
                    tables_read(sel, out)?;
                }
                for e in i.rows.iter().flatten().flatten() {
                    subquery_tables(e, out)?;
                }
            }
            Plan::Update(u) if u.multi.is_some() => {
                tables_read(&u.multi.as_ref().expect("checked").select, out)?
            }
            Plan::Delete(d) if d.multi.is_some() => {
                tables_read(&d.multi.as_ref().expect("checked").select, out)?
            }
            Plan::Update(u) => {
                let order = match &u.order {
                    RowOrder::Sort(keys) => keys.as_slice(),
                    _ => &[],
                };
                let exprs = u.filter.iter();
                let exprs = exprs.chain(u.assignments.iter().map(|(_, e)| e));
                for e in exprs.chain(order.iter().map(|(e, _)| e)) {
                    subquery_tables(e, out)?;
                }
            }
            Plan::Delete(d) => {
                let order = match &d.order {
                    RowOrder::Sort(keys) => keys.as_slice(),
                    _ => &[],
                };
                for e in d.filter.iter().chain(order.iter().map(|(e, _)| e)) {
                    subquery_tables(e, out)?;
                }
            }
        }
        Ok(())
    }
}

/// What the planner needs from the session.
pub struct PlanContext<'a> {
    /// The catalog snapshot.
    pub catalog: &'a Catalog,
    /// The current database.
    pub db: Option<&'a str>,
    /// The collation of literals and parameters (`collation_connection`).
    pub conn_coll: crate::types::collation::Collation,
    /// The common table expressions in scope while a WITH query is planned,
    /// outermost first (`query.rs`, `plan_with`).
    pub(crate) ctes: RefCell<Vec<CteDef>>,
    /// CTE references planned so far by this statement (each plans the
    /// CTE's body again): bounded by [`crate::parse::limits::MAX_CTE_EXPANSIONS`].
    pub(crate) cte_expansions: std::cell::Cell<usize>,
    /// The session's KILL flag (`procs::Process::kill_flag`), read before each
    /// query block and CTE reference is planned, so that KILL QUERY stops a
    /// long plan too. `None` where nothing can kill the planning.
    pub kill: Option<&'a std::sync::atomic::AtomicU32>,
    /// The engine's blocking hook: a plan still running [`PLAN_OFFLOAD`]
    /// after it started asks, through it, to leave the connection-serving
    /// worker (as a long execution does; see `session.rs`, `LONG_STATEMENT`).
    pub blocking_hook: Option<fn(&mut dyn FnMut())>,
    /// The views this statement's plan expanded (`crate::plan::view`), for
    /// the session's privilege checks.
    pub(crate) views_used: RefCell<Vec<crate::plan::view::ViewUse>>,
    /// View expansions in progress (bounded: `crate::plan::view`).
    pub(crate) view_nesting: std::cell::Cell<usize>,
    /// When planning started, checkpoints passed, and hand-offs asked for.
    progress: std::cell::Cell<(Option<std::time::Instant>, u32, u32)>,
}

/// A plan still running this long after its first checkpoint asks to leave
/// the connection-serving worker, and again at 10x, 100x, ... this age (the
/// hand-off can fail on a loaded machine; see `session.rs`).
pub const PLAN_OFFLOAD: std::time::Duration = std::time::Duration::from_millis(5);

/// A common table expression in scope.
#[derive(Debug, Clone)]
pub(crate) struct CteDef {
    /// Its name.
    pub name: String,
    /// Its column list, if it has one.
    pub columns: Vec<String>,
    /// Its body (shared: each lookup copies the definition).
    pub query: std::sync::Arc<ast::Query>,
    /// The number of its first placeholder.
    pub params: usize,
    /// How many entries of the scope stack its own body sees: the CTEs
    /// defined before it.
    pub visible: usize,
    /// A CTE of WITH RECURSIVE that reads itself (see
    /// [`crate::plan::recursive`]).
    pub recursive: bool,
    /// Inside a recursive CTE's recursive blocks: the work table its name
    /// reads.
    pub work: Option<std::sync::Arc<crate::plan::recursive::WorkTable>>,
}

impl<'a> PlanContext<'a> {
    /// A context for planning statements against `catalog` with `db` current.
    pub fn new(
        catalog: &'a Catalog,
        db: Option<&'a str>,
        conn_coll: crate::types::collation::Collation,
    ) -> PlanContext<'a> {
        PlanContext {
            catalog,
            db,
            conn_coll,
            ctes: RefCell::new(Vec::new()),
            cte_expansions: std::cell::Cell::new(0),
            views_used: RefCell::new(Vec::new()),
            view_nesting: std::cell::Cell::new(0),
            kill: None,
            blocking_hook: None,
            progress: std::cell::Cell::new((None, 0, 0)),
        }
    }

    /// Called before each query block and CTE reference is planned: stops
    /// the planning of a statement killed meanwhile (1317), and every 16
    /// calls reads the clock to move a long plan off the connection-serving
    /// worker ([`PLAN_OFFLOAD`]).
    pub(crate) fn checkpoint(&self) -> Result<()> {
        if let Some(k) = self.kill {
            if k.load(std::sync::atomic::Ordering::Relaxed) != 0 {
                return Err(Error::Interrupted);
            }
        }
        let Some(hook) = self.blocking_hook else {
            return Ok(());
        };
        let (started, calls, tries) = self.progress.get();
        let calls = calls.wrapping_add(1);
        let now = match started {
            None => {
                self.progress
                    .set((Some(std::time::Instant::now()), calls, tries));
                return Ok(());
            }
            Some(_) if calls % 16 != 0 => {
                self.progress.set((started, calls, tries));
                return Ok(());
            }
            Some(t0) => std::time::Instant::now().duration_since(t0),
        };
        let due = PLAN_OFFLOAD.saturating_mul(10u32.saturating_pow(tries));
        if now < due {
            self.progress.set((started, calls, tries));
            return Ok(());
        }
        self.progress.set((started, calls, tries + 1));
        let pause = std::time::Duration::from_millis(1 << tries.min(3));
        hook(&mut || std::thread::sleep(pause));
        Ok(())
    }

    /// The innermost common table expression in scope named by `name` (an
    /// unqualified name; names compare as table names do, case-sensitively).
    pub(crate) fn cte(&self, name: &ast::ObjectName) -> Option<CteDef> {
        let [part] = name.0.as_slice() else {
            return None;
        };
        let ident = part.as_ident()?;
        self.ctes
            .borrow()
            .iter()
            .rev()
            .find(|c| c.name == ident.value)
            .cloned()
    }
    /// Resolves `name` if it names an `information_schema` table (qualified,
    /// or unqualified after `USE information_schema`): the table and the name
    /// as written. `None` for any other name; 1109 for an unknown table there.
    pub(crate) fn resolve_system(
        &self,
        name: &ast::ObjectName,
    ) -> Result<Option<(crate::catalog::infoschema::SystemTable, String)>> {
        let parts: Vec<&str> = name
            .0
            .iter()
            .map(|p| p.as_ident().map(|i| i.value.as_str()).unwrap_or(""))
            .collect();
        let (db, table) = match parts.as_slice() {
            [t] => match self.db {
                Some(d) => (d, *t),
                None => return Ok(None),
            },
            [d, t] => (*d, *t),
            _ => return Ok(None),
        };
        if !crate::catalog::infoschema::is_system_schema(db) {
            return Ok(None);
        }
        match crate::catalog::infoschema::lookup_in(db, table) {
            Some(t) => Ok(Some((t, table.to_string()))),
            None => Err(Error::UnknownTable {
                db: db.to_ascii_lowercase(),
                table: table.to_string(),
            }),
        }
    }

    /// Resolves a base table. A name in `information_schema` is refused with
    /// 1044 (every statement that resolves a base table may write it; SELECT
    /// reads system tables through [`Self::resolve_system`] first). The error
    /// carries no account: the session fills it in (`State::fill_account`).
    pub(crate) fn resolve(&self, name: &ast::ObjectName) -> Result<Arc<Table>> {
        let parts: Vec<&str> = name
            .0
            .iter()
            .map(|p| p.as_ident().map(|i| i.value.as_str()).unwrap_or(""))
            .collect();
        let (db, table) = match parts.as_slice() {
            [t] => (self.db.ok_or(Error::NoDatabaseSelected)?, *t),
            [d, t] => (*d, *t),
            _ => return Err(Error::Syntax(name.to_string())),
        };
        if crate::catalog::infoschema::is_system_schema(db) {
            return Err(Error::DbAccessDenied {
                user: String::new(),
                host: String::new(),
                db: db.to_ascii_lowercase(),
            });
        }
        if !self.catalog.databases.contains_key(db) {
            return Err(Error::UnknownTable {
                db: db.to_string(),
                table: table.to_string(),
            });
        }
        self.catalog
            .table(db, table)
            .cloned()
            .ok_or_else(|| Error::UnknownTable {
                db: db.to_string(),
                table: table.to_string(),
            })
    }
}

fn table_name(t: &ast::TableObject) -> Result<&ast::ObjectName> {
    match t {
        ast::TableObject::TableName(n) => Ok(n),
        _ => Err(Error::Unsupported("INSERT INTO a table function".into())),
    }
}

/// Plans an INSERT or REPLACE: `VALUES` rows, `SET col = expr, ...` or a
/// `SELECT`, with an optional ON DUPLICATE KEY UPDATE.
pub fn plan_insert(ctx: &PlanContext<'_>, ins: &ast::Insert) -> Result<InsertPlan> {
    if ins.returning.is_some() || ins.partitioned.is_some() {
        return Err(Error::Unsupported("this INSERT form".into()));
    }
    let table = ctx.resolve(table_name(&ins.table)?)?;
    let mut b = Binder::new(Some(&table), None);
    b.context = "field list";
    let mut select = None;
    let (columns, rows) = if ins.assignments.is_empty() {
        let (columns, source) = plan_insert_source(ctx, &mut b, &table, ins)?;
        match source {
            InsertSource::Values(rows) => (columns, rows),
            InsertSource::Select(q) => {
                select = Some(q);
                (columns, Vec::new())
            }
        }
    } else {
        // INSERT ... SET: one row whose columns are the SET targets.
        if ins.source.is_some() || !ins.columns.is_empty() {
            return Err(Error::Syntax("INSERT with both SET and VALUES".into()));
        }
        let mut columns = Vec::with_capacity(ins.assignments.len());
        let mut row = Vec::with_capacity(ins.assignments.len());
        for a in &ins.assignments {
            let pos = assignment_column(&table, a)?;
            if columns.contains(&pos) {
                return Err(Error::ColumnSpecifiedTwice(
                    table.def.columns[pos].name.clone(),
                ));
            }
            columns.push(pos);
            row.push(bind_insert_value(&mut b, &a.value)?);
        }
        (columns, vec![row])
    };
    crate::plan::generated::check_insert(&table, &columns, &rows, select.is_some())?;
    let on_duplicate = match &ins.on {
        None if ins.replace_into => OnDuplicate::Replace,
        None => OnDuplicate::Error,
        Some(ast::OnInsert::DuplicateKeyUpdate(assignments)) if !ins.replace_into => {
            let mut inserted = InsertedRow::new(&table, &columns, ins.insert_alias.as_ref())?;
            if let Some(q) = &select {
                inserted.select_sources = select_sources(q);
            }
            let frame = inserted.frame_table();
            let mut ub = Binder::new(Some(&frame), None);
            ub.context = "field list";
            // Placeholders continue the numbering of the VALUES part, which comes
            // first in the statement text.
            ub.params = b.params;
            let assignments = generated_assignments(&table, assignments)?;
            let mut bound = Vec::with_capacity(assignments.len());
            for a in assignments.iter() {
                let pos = assignment_column(&table, a)?;
                let mut value = a.value.clone();
                inserted.rewrite(&mut value, 0)?;
                bound.push((pos, ub.bind(&value)?));
            }
            OnDuplicate::Update(bound)
        }
        Some(_) => return Err(Error::Unsupported("ON CONFLICT".into())),
    };
    Ok(InsertPlan {
        table,
        columns,
        rows,
        select,
        ignore: ins.ignore,
        on_duplicate,
        delayed: matches!(ins.priority, Some(ast::MysqlInsertPriority::Delayed)),
        fk: None,
    })
}

/// Where the rows of an INSERT come from.
enum InsertSource {
    /// VALUES rows (`None`: DEFAULT).
    Values(Vec<Vec<Option<Expr>>>),
    /// A query.
    Select(Box<SelectPlan>),
}

/// The column list and the source of `INSERT ... [(cols)] VALUES (...), ...` or
/// `INSERT ... [(cols)] SELECT ...`. Placeholders of a SELECT are numbered from
/// `b.params`, and `b.params` moves past them (ON DUPLICATE KEY UPDATE follows).
fn plan_insert_source(
    ctx: &PlanContext<'_>,
    b: &mut Binder<'_>,
    table: &Table,
    ins: &ast::Insert,
) -> Result<(Vec<usize>, InsertSource)> {
    let columns: Vec<usize> = if ins.columns.is_empty() {
        (0..table.def.columns.len()).collect()
    } else {
        let mut cols = Vec::with_capacity(ins.columns.len());
        for c in &ins.columns {
            let name =
                c.0.last()
                    .and_then(|p| p.as_ident())
                    .map(|i| i.value.clone())
                    .unwrap_or_default();
            let pos = table.column(&name).ok_or_else(|| Error::UnknownColumn {
                column: name.clone(),
                context: "field list".into(),
            })?;
            if cols.contains(&pos) {
                return Err(Error::ColumnSpecifiedTwice(name));
            }
            cols.push(pos);
        }
        cols
    };
    let source = ins
        .source
        .as_ref()
        .ok_or_else(|| Error::Syntax("INSERT without VALUES".into()))?;
    let values = match source.body.as_ref() {
        ast::SetExpr::Values(v) => v,
        _ => {
            let (plan, params, outer) =
                crate::plan::select::plan_subquery(ctx, source, &[], 0, b.params)?;
            if outer.is_some() {
                return Err(Error::Internal(
                    "INSERT ... SELECT planned with an enclosing frame".into(),
                ));
            }
            b.params = params;
            // MySQL checks the count once, before reading a row, and reports it
            // as "at row 1".
            if plan.visible != columns.len() {
                return Err(Error::ValueCountMismatch { row: 1 });
            }
            return Ok((columns, InsertSource::Select(Box::new(plan))));
        }
    };
    let mut rows = Vec::with_capacity(values.rows.len());
    for (i, row) in values.rows.iter().enumerate() {
        if row.content.len() != columns.len() {
            return Err(Error::ValueCountMismatch { row: i as u64 + 1 });
        }
        let mut bound = Vec::with_capacity(row.content.len());
        for e in &row.content {
            bound.push(bind_insert_value(b, e)?);
        }
        rows.push(bound);
    }
    Ok((columns, InsertSource::Values(rows)))
}

/// Binds one value of a VALUES row or an `INSERT ... SET`; `None` for DEFAULT
/// (the column default).
fn bind_insert_value(b: &mut Binder<'_>, e: &ast::Expr) -> Result<Option<Expr>> {
    if let ast::Expr::Identifier(id) = e {
        if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("DEFAULT") {
            return Ok(None);
        }
    }
    let x = b.bind(e)?;
    // VALUES are evaluated without a current row: a column reference there would
    // read NULL in Canyon but the default (or the value set earlier in the row) in
    // MySQL; refuse it.
    if !x.is_constant() {
        return Err(Error::Unsupported("column references in VALUES".into()));
    }
    Ok(Some(x))
}

/// The table column an assignment (`SET col = ...`, `t.col = ...`) targets.
fn assignment_column(table: &Table, a: &ast::Assignment) -> Result<usize> {
    let target = match &a.target {
        ast::AssignmentTarget::ColumnName(n) => n,
        ast::AssignmentTarget::Tuple(_) => {
            return Err(Error::Unsupported("tuple assignment".into()))
        }
    };
    let name = target
        .0
        .last()
        .and_then(|p| p.as_ident())
        .map(|i| i.value.clone())
        .unwrap_or_default();
    table.column(&name).ok_or_else(|| Error::UnknownColumn {
        column: name.clone(),
        context: "field list".into(),
    })
}

/// How ON DUPLICATE KEY UPDATE names the row that would have been inserted:
/// `VALUES(col)`, and with MySQL 8.0.19's row alias `INSERT ... VALUES (...) AS new
/// [(m, n, ...)]` also `new.col` and the column aliases (`m`, or `new.m`).
struct InsertedRow<'a> {
    table: &'a Table,
    /// The row alias, if any.
    alias: Option<String>,
    /// Column aliases with the column each names (the insert list, in order).
    col_aliases: Vec<(String, usize)>,
    /// After `INSERT ... SELECT`: the SELECT's FROM sources, as (name, column
    /// names). MySQL lets the assignments read their columns too; Canyon does
    /// not yet, and refuses such references (see [`InsertedRow::check_name`]).
    select_sources: Vec<(String, Vec<String>)>,
}

/// The FROM sources of an `INSERT ... SELECT`'s query: (name, column names).
fn select_sources(q: &SelectPlan) -> Vec<(String, Vec<String>)> {
    q.sources
        .iter()
        .map(|s| {
            let cols = match &s.kind {
                SourceKind::Table(t) => t.def.columns.iter().map(|c| c.name.clone()).collect(),
                SourceKind::Derived(d) => d.columns.iter().map(|c| c.name.clone()).collect(),
                SourceKind::SetOp(sp) => sp.columns.iter().map(|c| c.name.clone()).collect(),
                SourceKind::WorkTable(w) => w.columns.clone(),
                SourceKind::System(sys) => sys
                    .table
                    .columns()
                    .iter()
                    .map(|c| c.0.to_string())
                    .collect(),
            };
            (s.name.clone(), cols)
        })
        .collect()
}

impl<'a> InsertedRow<'a> {
    fn new(
        table: &'a Table,
        columns: &[usize],
        aliases: Option<&ast::InsertAliases>,
    ) -> Result<InsertedRow<'a>> {
        let mut row = InsertedRow {
            table,
            alias: None,
            col_aliases: Vec::new(),
            select_sources: Vec::new(),
        };
        if let Some(a) = aliases {
            row.alias = a
                .row_alias
                .0
                .last()
                .and_then(|p| p.as_ident())
                .map(|i| i.value.clone());
            if let Some(cols) = a.col_aliases.as_ref().filter(|c| !c.is_empty()) {
                if cols.len() != columns.len() {
                    return Err(Error::ValueCountMismatch { row: 1 });
                }
                row.col_aliases = cols
                    .iter()
                    .zip(columns)
                    .map(|(id, &c)| (id.value.clone(), c))
                    .collect();
            }
        }
        Ok(row)
    }

    /// The name of the frame column holding the inserted value of column `c`. A
    /// NUL byte cannot occur in a MySQL identifier, so it never shadows a column.
    fn hidden_name(c: usize) -> String {
        format!("\u{0}values\u{0}{c}")
    }

    /// The frame the assignments are bound against: the table's columns, then a
    /// hidden copy of each for the inserted row (see the module doc).
    fn frame_table(&self) -> Table {
        let mut def = self.table.def.clone();
        let hidden: Vec<_> = def
            .columns
            .iter()
            .enumerate()
            .map(|(c, col)| crate::catalog::ColumnDef {
                name: Self::hidden_name(c),
                ..col.clone()
            })
            .collect();
        def.columns.extend(hidden);
        Table::new(def)
    }

    fn column(&self, name: &str) -> Result<usize> {
        self.table.column(name).ok_or_else(|| Error::UnknownColumn {
            column: name.to_string(),
            context: "field list".into(),
        })
    }

    fn col_alias(&self, name: &str) -> Option<usize> {
        self.col_aliases
            .iter()
            .find(|(a, _)| a.eq_ignore_ascii_case(name))
            .map(|&(_, c)| c)
    }

    /// The inserted-row column `e` names, if it is `VALUES(col)` or a row-alias
    /// reference.
    fn inserted_column(&self, e: &ast::Expr) -> Result<Option<usize>> {
        use ast::Expr as A;
        match e {
            A::Function(f) if is_values_call(f) => {
                let arg = match &f.args {
                    ast::FunctionArguments::List(l) if l.args.len() == 1 => match &l.args[0] {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => x,
                        _ => return Err(Error::WrongArguments("VALUES".into())),
                    },
                    _ => return Err(Error::WrongArguments("VALUES".into())),
                };
                let name = match arg {
                    A::Identifier(id) => &id.value,
                    A::CompoundIdentifier(parts)
                        if parts.len() >= 2
                            && parts[parts.len() - 2].value == self.table.def.name =>
                    {
                        &parts[parts.len() - 1].value
                    }
                    _ => return Err(Error::Syntax(format!("VALUES({arg}): not a column"))),
                };
                Ok(Some(self.column(name)?))
            }
            A::CompoundIdentifier(parts)
                if parts.len() == 2 && self.alias.as_deref() == Some(parts[0].value.as_str()) =>
            {
                let name = &parts[1].value;
                if self.col_aliases.is_empty() {
                    Ok(Some(self.column(name)?))
                } else {
                    self.col_alias(name)
                        .map(Some)
                        .ok_or_else(|| Error::UnknownColumn {
                            column: format!("{}.{name}", parts[0].value),
                            context: "field list".into(),
                        })
                }
            }
            A::Identifier(id) => Ok(self.col_alias(&id.value)),
            _ => Ok(None),
        }
    }

    /// Checks a column name of an assignment after `INSERT ... SELECT` (not a
    /// reference to the inserted row). In MySQL such names resolve against the
    /// target table and the SELECT's FROM sources together: a name both have is
    /// ambiguous (error 1052); a name only a source has reads the source row,
    /// which Canyon does not support yet (error 1235, where a plain unknown
    /// column would mislead).
    fn check_name(&self, e: &ast::Expr) -> Result<()> {
        use ast::Expr as A;
        if self.select_sources.is_empty() {
            return Ok(());
        }
        let has = |cols: &[String], name: &str| cols.iter().any(|c| c.eq_ignore_ascii_case(name));
        let unsupported = || {
            Err(Error::Unsupported(
                "columns of the SELECT in ON DUPLICATE KEY UPDATE".into(),
            ))
        };
        match e {
            A::Identifier(id) if id.quote_style != Some('"') => {
                if !self
                    .select_sources
                    .iter()
                    .any(|(_, cols)| has(cols, &id.value))
                {
                    Ok(())
                } else if self.table.column(&id.value).is_some() {
                    Err(Error::AmbiguousColumn {
                        column: id.value.clone(),
                        context: "field list".into(),
                    })
                } else {
                    unsupported()
                }
            }
            A::CompoundIdentifier(parts) if parts.len() == 2 => {
                let (q, name) = (&parts[0].value, &parts[1].value);
                let is_source = self
                    .select_sources
                    .iter()
                    .any(|(s, cols)| s == q && has(cols, name));
                if is_source && *q != self.table.def.name {
                    unsupported()
                } else {
                    Ok(())
                }
            }
            _ => Ok(()),
        }
    }

    /// Rewrites, in place, every reference to the inserted row into a reference to
    /// its hidden frame column. Forms outside the common expression grammar that
    /// still mention `VALUES(` are refused rather than bound wrongly.
    fn rewrite(&self, e: &mut ast::Expr, depth: usize) -> Result<()> {
        use ast::Expr as A;
        if depth > crate::expr::MAX_DEPTH {
            return Err(Error::TooDeep);
        }
        if let Some(c) = self.inserted_column(e)? {
            *e = A::Identifier(ast::Ident::new(Self::hidden_name(c)));
            return Ok(());
        }
        let d = depth + 1;
        match e {
            A::Identifier(_) | A::CompoundIdentifier(_) => self.check_name(e),
            A::Value(_) => Ok(()),
            A::BinaryOp { left, right, .. } => {
                self.rewrite(left, d)?;
                self.rewrite(right, d)
            }
            A::UnaryOp { expr, .. }
            | A::Nested(expr)
            | A::IsNull(expr)
            | A::IsNotNull(expr)
            | A::IsTrue(expr)
            | A::IsNotTrue(expr)
            | A::IsFalse(expr)
            | A::IsNotFalse(expr)
            | A::IsUnknown(expr)
            | A::IsNotUnknown(expr)
            | A::Cast { expr, .. } => self.rewrite(expr, d),
            A::Between {
                expr, low, high, ..
            } => {
                self.rewrite(expr, d)?;
                self.rewrite(low, d)?;
                self.rewrite(high, d)
            }
            A::InList { expr, list, .. } => {
                self.rewrite(expr, d)?;
                list.iter_mut().try_for_each(|x| self.rewrite(x, d))
            }
            A::Like { expr, pattern, .. } | A::ILike { expr, pattern, .. } => {
                self.rewrite(expr, d)?;
                self.rewrite(pattern, d)
            }
            A::Tuple(list) => list.iter_mut().try_for_each(|x| self.rewrite(x, d)),
            A::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                if let Some(o) = operand {
                    self.rewrite(o, d)?;
                }
                for w in conditions {
                    self.rewrite(&mut w.condition, d)?;
                    self.rewrite(&mut w.result, d)?;
                }
                match else_result {
                    Some(x) => self.rewrite(x, d),
                    None => Ok(()),
                }
            }
            A::Function(f) if matches!(f.args, ast::FunctionArguments::List(_)) => {
                if let ast::FunctionArguments::List(l) = &mut f.args {
                    for a in &mut l.args {
                        match a {
                            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x))
                            | ast::FunctionArg::Named {
                                arg: ast::FunctionArgExpr::Expr(x),
                                ..
                            } => self.rewrite(x, d)?,
                            _ => {}
                        }
                    }
                }
                Ok(())
            }
            other => {
                let text = other.to_string().to_ascii_uppercase();
                if text.contains("VALUES(") || text.contains("VALUES (") {
                    Err(Error::Unsupported(
                        "VALUES() inside this kind of expression".into(),
                    ))
                } else {
                    Ok(())
                }
            }
        }
    }
}

/// Whether a function call is ON DUPLICATE KEY UPDATE's `VALUES(col)`.
fn is_values_call(f: &ast::Function) -> bool {
    matches!(f.name.0.as_slice(), [p] if p.as_ident().is_some_and(|i| i.value.eq_ignore_ascii_case("VALUES")))
}

/// Plans a single-table UPDATE, with optional ORDER BY and LIMIT.
pub fn plan_update(ctx: &PlanContext<'_>, up: &ast::Update) -> Result<UpdatePlan> {
    let ignore = crate::parse::dml_modifiers::update_ignore(up);
    if up.returning.is_some() || (up.or.is_some() && !ignore) {
        return Err(Error::Unsupported("this UPDATE form".into()));
    }
    if !up.table.joins.is_empty() || up.from.is_some() {
        return crate::plan::multi_dml::plan_multi_update(ctx, up, ignore);
    }
    let (name, alias, index_hints) = match &up.table.relation {
        ast::TableFactor::Table {
            name,
            alias,
            partitions,
            index_hints,
            ..
        } => {
            crate::plan::partition::refuse_selection(partitions)?;
            (
                name,
                alias.as_ref().map(|a| a.name.value.clone()),
                index_hints,
            )
        }
        _ => return Err(Error::Unsupported("this UPDATE target".into())),
    };
    let table = ctx.resolve(name)?;
    // MySQL applies index hints to UPDATE (not to a single-table DELETE).
    let index_hints = crate::plan::access::IndexHints::resolve(&table, index_hints)?;
    let mut b = Binder::new(Some(&table), alias.as_deref());
    b.plan_ctx = Some(ctx);
    b.conn_coll = ctx.conn_coll;
    b.context = "field list";
    let up_assignments = generated_assignments(&table, &up.assignments)?;
    let mut assignments = Vec::with_capacity(up_assignments.len());
    for a in up_assignments.iter() {
        let pos = assignment_column(&table, a)?;
        let e = b.bind(&a.value)?;
        assignments.push((pos, e));
    }
    b.context = "where clause";
    let filter = up.selection.as_ref().map(|w| b.bind(w)).transpose()?;
    let keys = without_constant_keys(bind_order_keys(&mut b, &up.order_by)?, filter.as_ref());
    let limit = up.limit.as_ref().map(|l| b.bind(l)).transpose()?;
    let exprs = filter
        .iter()
        .chain(assignments.iter().map(|(_, e)| e))
        .chain(keys.iter().map(|(e, _)| e));
    if up.order_by.is_empty() && up.limit.is_none() && any_correlated(exprs.clone()) {
        // A correlated subquery runs once per row: planned as the one-table
        // join of a multi-table UPDATE, whose SELECT runs it (see
        // `crate::plan::multi_dml`).
        return crate::plan::multi_dml::plan_multi_update(ctx, up, ignore);
    }
    let subqueries = check_subqueries(&table, alias.as_deref(), exprs)?;
    let access =
        crate::plan::access::choose_access_hinted(&table, filter.as_ref(), index_hints.as_ref()).0;
    let filter_implied = filter.as_ref().is_some_and(|f| access.implies(&table, f));
    let order = planned_row_order(&table, &access, keys, subqueries);
    Ok(UpdatePlan {
        table,
        access,
        filter,
        filter_implied,
        assignments,
        order,
        limit,
        subqueries,
        ignore,
        multi: None,
        fk: None,
    })
}

/// The assignments of an UPDATE or ON DUPLICATE KEY UPDATE: as written,
/// unless the table has generated columns — then `gcol = DEFAULT` is
/// dropped and any other value for one is 3105
/// (`crate::plan::generated::check_assignments`).
fn generated_assignments<'a>(
    table: &Table,
    assignments: &'a [ast::Assignment],
) -> Result<std::borrow::Cow<'a, [ast::Assignment]>> {
    if !table
        .def
        .columns
        .iter()
        .any(|c| c.attrs.generated.is_some())
    {
        return Ok(std::borrow::Cow::Borrowed(assignments));
    }
    let mut kept = assignments.to_vec();
    crate::plan::generated::check_assignments(table, &mut kept)?;
    Ok(std::borrow::Cow::Owned(kept))
}

/// Plans a single-table DELETE, with optional ORDER BY and LIMIT.
pub fn plan_delete(ctx: &PlanContext<'_>, del: &ast::Delete) -> Result<DeletePlan> {
    if del.returning.is_some() {
        return Err(Error::Unsupported("DELETE ... RETURNING".into()));
    }
    let ignore = crate::parse::dml_modifiers::delete_ignore(del);
    let from = match &del.from {
        ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f) => f,
    };
    let multi = !del.tables.is_empty()
        || del.using.is_some()
        || from.len() > 1
        || from.iter().any(|t| !t.joins.is_empty());
    if multi {
        return crate::plan::multi_dml::plan_multi_delete(ctx, del, ignore);
    }
    let (name, alias) = match from.as_slice() {
        [twj] if twj.joins.is_empty() => match &twj.relation {
            ast::TableFactor::Table {
                name,
                alias,
                partitions,
                ..
            } => {
                crate::plan::partition::refuse_selection(partitions)?;
                (name, alias.as_ref().map(|a| a.name.value.clone()))
            }
            _ => return Err(Error::Unsupported("this DELETE target".into())),
        },
        _ => return Err(Error::Unsupported("multi-table DELETE".into())),
    };
    let table = ctx.resolve(name)?;
    let mut b = Binder::new(Some(&table), alias.as_deref());
    b.plan_ctx = Some(ctx);
    b.conn_coll = ctx.conn_coll;
    b.context = "where clause";
    let filter = del.selection.as_ref().map(|w| b.bind(w)).transpose()?;
    let keys = without_constant_keys(bind_order_keys(&mut b, &del.order_by)?, filter.as_ref());
    let limit = del.limit.as_ref().map(|l| b.bind(l)).transpose()?;
    let exprs = filter.iter().chain(keys.iter().map(|(e, _)| e));
    if del.order_by.is_empty() && del.limit.is_none() && any_correlated(exprs.clone()) {
        // A correlated subquery runs once per row: planned as the one-table
        // join of a multi-table DELETE (`DELETE t FROM t WHERE ...`), whose
        // SELECT runs it (see `crate::plan::multi_dml`).
        let mut as_multi = del.clone();
        as_multi.tables = vec![match &alias {
            Some(a) => ast::ObjectName::from(vec![ast::Ident::new(a)]),
            None => name.clone(),
        }];
        return crate::plan::multi_dml::plan_multi_delete(ctx, &as_multi, ignore);
    }
    let subqueries = check_subqueries(&table, alias.as_deref(), exprs)?;
    let access = choose_access(&table, filter.as_ref());
    let filter_implied = filter.as_ref().is_some_and(|f| access.implies(&table, f));
    let order = planned_row_order(&table, &access, keys, subqueries);
    Ok(DeletePlan {
        table,
        access,
        filter,
        filter_implied,
        order,
        limit,
        subqueries,
        ignore,
        multi: None,
        fk: None,
    })
}

/// Whether any of `exprs` holds a correlated subquery.
fn any_correlated<'e>(exprs: impl Iterator<Item = &'e Expr>) -> bool {
    let mut found = false;
    for e in exprs {
        e.visit_columns(&mut |_| {}, &mut |sq| found |= sq.correlated);
    }
    found
}

/// Checks the subqueries of an UPDATE / DELETE on `table` (named `alias` in the
/// statement, if it has one) and says whether there are any. Refused: a
/// correlated subquery with ORDER BY or LIMIT (error 1235: it would have to
/// run in the middle of the locking scan; without them the statement is
/// planned as a one-table multi-table UPDATE / DELETE), and one that reads `table` outside a derived table (MySQL's
/// error 1093, ER_UPDATE_TABLE_USED).
fn check_subqueries<'e>(
    table: &Table,
    alias: Option<&str>,
    exprs: impl Iterator<Item = &'e Expr>,
) -> Result<bool> {
    let mut found = Vec::new();
    for e in exprs {
        e.visit_columns(&mut |_| {}, &mut |sq| found.push(sq.clone()));
    }
    for sq in &found {
        if sq.correlated {
            return Err(Error::Unsupported(
                "correlated subqueries in UPDATE and DELETE".into(),
            ));
        }
        if plan_reads_table(select_plan(sq.plan.as_ref())?, table)? {
            let name = alias.unwrap_or(&table.def.name);
            return Err(Error::UpdateTableUsed(name.to_string()));
        }
    }
    Ok(!found.is_empty())
}

/// Whether a query reads `table` directly or through a nested subquery. Derived
/// tables are not looked into: they are materialised before the statement
/// changes anything (MySQL makes the same exception to error 1093).
pub(crate) fn plan_reads_table(p: &SelectPlan, table: &Table) -> Result<bool> {
    let same = |t: &Table| t.def.db == table.def.db && t.def.name == table.def.name;
    if p.table.as_deref().is_some_and(same) {
        return Ok(true);
    }
    for s in &p.sources {
        let reads = match &s.kind {
            SourceKind::Table(t) => same(t),
            SourceKind::WorkTable(_) => false,
            // A set operation's operands are subqueries in MySQL's eyes (1093).
            SourceKind::SetOp(sp) => {
                let mut any = false;
                for o in &sp.operands {
                    if plan_reads_table(o, table)? {
                        any = true;
                        break;
                    }
                }
                any
            }
            SourceKind::Derived(_) | SourceKind::System(_) => false,
        };
        if reads {
            return Ok(true);
        }
    }
    subqueries_read_table(p, table)
}

/// Whether a subquery of `p`'s expressions (not its FROM sources) reads
/// `table`, as [`plan_reads_table`] looks.
pub(crate) fn subqueries_read_table(p: &SelectPlan, table: &Table) -> Result<bool> {
    let mut exprs: Vec<&Expr> = Vec::new();
    exprs.extend(&p.pre_filter);
    exprs.extend(&p.filter);
    exprs.extend(&p.having);
    exprs.extend(&p.limit);
    exprs.extend(&p.offset);
    exprs.extend(&p.projection);
    exprs.extend(&p.group_by);
    exprs.extend(p.aggs.iter().flat_map(|a| a.exprs()));
    for s in &p.steps {
        exprs.extend(&s.filter);
        exprs.extend(&s.post_filter);
        exprs.extend(s.hash_keys.iter().map(|(_, e)| e));
    }
    let mut reads = Ok(false);
    for e in exprs {
        e.visit_columns(&mut |_| {}, &mut |sq| {
            if let Ok(false) = reads {
                reads = select_plan(sq.plan.as_ref()).and_then(|p| plan_reads_table(p, table));
            }
        });
    }
    reads
}

/// Binds the ORDER BY keys of UPDATE / DELETE: (expression, descending).
fn bind_order_keys(b: &mut Binder<'_>, order_by: &[ast::OrderByExpr]) -> Result<Vec<(Expr, bool)>> {
    b.context = "order clause";
    let mut keys = Vec::with_capacity(order_by.len());
    for o in order_by {
        if o.options.nulls_first.is_some() || o.with_fill.is_some() {
            return Err(Error::Unsupported("NULLS FIRST / LAST, WITH FILL".into()));
        }
        let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
        // An ENUM / SET / TIME column sorts by its index, bitmask or time
        // (MySQL), not by its text.
        let key = b.bind(&o.expr)?;
        keys.push((b.sort_reading(key), desc));
    }
    b.context = "field list";
    Ok(keys)
}

/// The ORDER BY keys of UPDATE / DELETE less those the WHERE clause holds
/// constant (`WHERE c1 = 109 ORDER BY c1`): every row it visits has the same
/// value there, so the key orders nothing. MySQL's single-table UPDATE and
/// DELETE drop them too (`simple_remove_const`), which shows: with no key
/// left the rows are visited in the access path's order, unsorted, and a
/// warning's row number counts them in that order.
fn without_constant_keys(keys: Vec<(Expr, bool)>, filter: Option<&Expr>) -> Vec<(Expr, bool)> {
    let Some(filter) = filter else {
        return keys;
    };
    let constant: Vec<usize> = filter
        .conjuncts()
        .into_iter()
        .filter_map(|c| match c {
            Expr::Binary(BinOp::Eq, a, b) => match (a.as_ref(), b.as_ref()) {
                (Expr::Column(i), Expr::Literal(v)) | (Expr::Literal(v), Expr::Column(i))
                    if !v.is_null() =>
                {
                    Some(*i)
                }
                _ => None,
            },
            _ => None,
        })
        .collect();
    keys.into_iter()
        .filter(|(e, _)| !matches!(e, Expr::Column(i) if constant.contains(i)))
        .collect()
}

/// The row order planned for UPDATE / DELETE. With subqueries the access path
/// is chosen again at execution, so the keys are kept (as a sort) for
/// [`row_order`] to decide then.
fn planned_row_order(
    table: &Table,
    access: &Access,
    keys: Vec<(Expr, bool)>,
    subqueries: bool,
) -> RowOrder {
    if subqueries && !keys.is_empty() {
        RowOrder::Sort(keys)
    } else {
        row_order(table, access, keys)
    }
}

/// Decides how UPDATE / DELETE visit rows for ORDER BY `keys`: in key order when
/// the access path delivers it (so LIMIT stops the scan early, as MySQL does for
/// an ORDER BY on a primary-key prefix), else by sorting all matching rows.
pub(crate) fn row_order(table: &Table, access: &Access, keys: Vec<(Expr, bool)>) -> RowOrder {
    if keys.is_empty() {
        return RowOrder::Any;
    }
    let positions: Vec<(usize, bool)> = keys
        .iter()
        .enumerate()
        .map(|(i, (_, desc))| (i, *desc))
        .collect();
    let exprs: Vec<Expr> = keys.iter().map(|(e, _)| e.clone()).collect();
    if access.delivers_order(table, &positions, &exprs) {
        RowOrder::Key { reverse: keys[0].1 }
    } else {
        RowOrder::Sort(keys)
    }
}

/// Evaluates a LIMIT/OFFSET expression to a row count.
pub fn eval_count(v: Value) -> Result<u64> {
    match v {
        Value::Int(i) if i >= 0 => Ok(i as u64),
        Value::UInt(u) => Ok(u),
        Value::Bytes(ref b) => std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .ok_or_else(|| Error::WrongArguments("LIMIT".into())),
        _ => Err(Error::WrongArguments("LIMIT".into())),
    }
}
