//! View statements as the session runs them: CREATE / ALTER / DROP VIEW
//! (validation, privileges, the implicit commit, then `crate::ddl::view`),
//! INSERT / UPDATE through a view WITH CHECK OPTION, and what SHOW says of
//! a view (SHOW CREATE VIEW, DESCRIBE / SHOW COLUMNS).
//!
//! CREATE VIEW plans the SELECT against the session's snapshot, as MySQL
//! does, so a missing table or column fails with 1146 / 1054 at once; the
//! column names (the list, or the SELECT's names) are then fixed: 1060 for
//! a duplicate, 1353 when the list's length differs from the SELECT's.
//!
//! WITH CHECK OPTION (`crate::plan::view` says which conditions apply) is
//! enforced before the write: for an UPDATE, the rows it will change are
//! read with the conditions evaluated over their new values (each assigned
//! column replaced by its new expression); for an INSERT, the conditions
//! are evaluated over each row's values (omitted columns take their
//! DEFAULT). A row that would leave the view fails the statement with 1369
//! before anything is written. The check and the write are two reads of
//! the same transaction's snapshot only inside an explicit transaction;
//! under autocommit a concurrent write between them is not seen by the
//! check (MySQL checks each row as it writes it). An INSERT ... SELECT is
//! checked by running its SELECT as a derived table first. Not checked:
//! prepared statements with placeholders through such a view (refused
//! with 1235), the ON DUPLICATE KEY UPDATE part of an INSERT.

use super::state::*;
use crate::catalog::view::{Algorithm, Security, View, ViewDef};
use crate::catalog::Catalog;
use crate::ddl::view::ViewMode;
use crate::parse::view::{CreateView, ViewStatement};
use crate::parse::Parsed;
use crate::plan::view::{self as pv, TargetColumn};
use crate::plan::PlanContext;
use crate::types::result::QueryResult;
use crate::types::value::Value;
use canyon_common::{Error, Result};
use sqlparser::ast::{self, Statement};
use std::sync::Arc;

impl Session {
    /// Runs a view statement, or an INSERT / UPDATE through a view with a
    /// check option; `None` for any other statement.
    pub(super) fn run_view_statement(
        &mut self,
        cat: &Arc<Catalog>,
        parsed: &Parsed,
        params: &[Value],
    ) -> Result<Option<QueryResult>> {
        match parsed {
            Parsed::View(v) => match v.as_ref() {
                ViewStatement::Create(c) => self.create_view(cat, c).map(Some),
                ViewStatement::Drop { if_exists, names } => {
                    self.drop_views(cat, names, *if_exists).map(Some)
                }
            },
            Parsed::Sql(stmt) if !cat.views.is_empty() => {
                if !matches!(stmt.as_ref(), Statement::Insert(_) | Statement::Update(_)) {
                    return Ok(None);
                }
                self.checked_view_write(cat, stmt, params)
            }
            _ => Ok(None),
        }
    }

    fn plan_context<'a>(&'a self, cat: &'a Catalog) -> PlanContext<'a> {
        PlanContext::new(
            cat,
            self.state.db.as_deref(),
            self.state.connection_collation(),
        )
    }

    fn create_view(&mut self, cat: &Arc<Catalog>, c: &CreateView) -> Result<QueryResult> {
        let (db, name) = match c.name.as_slice() {
            [v] => (
                self.state.db.clone().ok_or(Error::NoDatabaseSelected)?,
                v.clone(),
            ),
            [d, v] => (d.clone(), v.clone()),
            _ => return Err(Error::Syntax("a view name".into())),
        };
        self.state.check_db(cat, &db, "CREATE VIEW", Some(&name))?;
        if c.alter || c.or_replace {
            self.state.check_db(cat, &db, "DROP", Some(&name))?;
        }
        if !cat.databases.contains_key(&db) {
            return Err(Error::UnknownDatabase(db));
        }
        if pv::reads_variable(&c.query) {
            return Err(Error::View {
                code: 1351,
                message: "View's SELECT contains a variable or parameter".into(),
            });
        }
        let mut query = (*c.query).clone();
        pv::qualify(&mut query, &db);
        // A cycle through the view being replaced (a new view's own name
        // reads as a missing table: 1146 when planned below).
        if cat.view(&db, &name).is_some() && pv::reads_view(cat, &query, &db, &name) {
            return Err(Error::View {
                code: 1462,
                message: format!("`{db}`.`{name}` contains view recursion"),
            });
        }
        // Plan it as the view's own database would see it.
        let ctx = PlanContext::new(cat, Some(&db), self.state.connection_collation());
        let plan = crate::plan::select::plan_select(&ctx, &query)?;
        let mut read = Vec::new();
        crate::plan::select::tables_read(&plan, &mut read)?;
        for t in read {
            self.state
                .check_db(cat, &t.def.db, "SELECT", Some(&t.def.name))?;
        }
        // MySQL 8 names a column whose generated name passes 64 characters
        // `Name_exp_<position>`.
        let selected: Vec<String> = plan.columns[..plan.visible]
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if c.name.chars().count() > 64 {
                    format!("Name_exp_{}", i + 1)
                } else {
                    c.name.clone()
                }
            })
            .collect();
        let columns = if c.columns.is_empty() {
            selected
        } else {
            if c.columns.len() != selected.len() {
                return Err(Error::View {
                    code: 1353,
                    message: "In definition of view, derived table or common table \
                              expression, SELECT list and column names list have \
                              different column counts"
                        .into(),
                });
            }
            c.columns.clone()
        };
        for (i, n) in columns.iter().enumerate() {
            if columns[..i].iter().any(|m| m.eq_ignore_ascii_case(n)) {
                return Err(Error::DuplicateColumn(n.clone()));
            }
        }
        let mergeable = pv::mergeable(&c.query);
        let mut algorithm = c.algorithm.unwrap_or_default();
        if algorithm == Algorithm::Merge && !mergeable {
            self.state.warnings.push((
                "Warning",
                1354,
                "View merge algorithm can't be used here for now (assumed undefined algorithm)"
                    .into(),
            ));
            algorithm = Algorithm::Undefined;
        }
        let me = match self.state.account(cat) {
            Some(a) => (a.user.clone(), a.host.clone()),
            None => (self.state.user.clone(), self.state.host.clone()),
        };
        let (definer_user, definer_host) = match &c.definer {
            // Naming another account needs SUPER (MySQL 8: SET_USER_ID).
            Some(Some(d)) if *d != me => {
                self.state.check_super(cat, "SUPER")?;
                d.clone()
            }
            _ => me,
        };
        let var = |s: &Self, n: &str| -> String {
            s.state
                .get_var(n)
                .map(|v| v.to_display())
                .unwrap_or_default()
        };
        let def = ViewDef {
            db: db.clone(),
            name: name.clone(),
            columns,
            explicit_columns: !c.columns.is_empty(),
            query: c.query.to_string(),
            algorithm,
            definer_user,
            definer_host,
            security: c.security.unwrap_or(Security::Definer),
            check: c.check,
            character_set_client: var(self, "character_set_client"),
            collation_connection: var(self, "collation_connection"),
            updatable: mergeable && algorithm != Algorithm::TempTable,
            column_types: view_columns(cat, &plan)
                .into_iter()
                .map(|(_, c)| c)
                .collect(),
        };
        let mode = if c.alter {
            ViewMode::Alter
        } else if c.or_replace {
            ViewMode::OrReplace
        } else {
            ViewMode::Create
        };
        self.commit()?;
        self.state.engine.create_view(def, mode)?;
        Ok(ok(0))
    }

    fn drop_views(
        &mut self,
        cat: &Arc<Catalog>,
        names: &[Vec<String>],
        if_exists: bool,
    ) -> Result<QueryResult> {
        let mut all = Vec::with_capacity(names.len());
        for n in names {
            let (db, v) = match n.as_slice() {
                [v] => (
                    self.state.db.clone().ok_or(Error::NoDatabaseSelected)?,
                    v.clone(),
                ),
                [d, v] => (d.clone(), v.clone()),
                _ => return Err(Error::Syntax("a view name".into())),
            };
            self.state.check_db(cat, &db, "DROP", Some(&v))?;
            all.push((db, v));
        }
        self.commit()?;
        let missing = self.state.engine.drop_views(&all, if_exists)?;
        for (db, v) in missing {
            self.note(1051, format!("Unknown table '{db}.{v}'"));
        }
        Ok(ok(0))
    }

    /// INSERT / UPDATE through a view WITH CHECK OPTION (see the module
    /// doc); `None` when the statement writes no such view.
    fn checked_view_write(
        &mut self,
        cat: &Arc<Catalog>,
        stmt: &Statement,
        params: &[Value],
    ) -> Result<Option<QueryResult>> {
        let (rewritten, target) = {
            let ctx = self.plan_context(cat);
            match pv::rewrite_dml(&ctx, stmt)? {
                Some(r) => r,
                None => return Ok(None),
            }
        };
        let Some(check) = target.check_expr() else {
            return Ok(None);
        };
        if !params.is_empty() {
            return Err(Error::Unsupported(
                "placeholders in a write through a view WITH CHECK OPTION".into(),
            ));
        }
        let table = target.table.def.clone();
        let check_sql = match &rewritten {
            Statement::Update(u) => {
                let assigned = |n: &str| -> Option<TargetColumn> {
                    for a in &u.assignments {
                        if let ast::AssignmentTarget::ColumnName(c) = &a.target {
                            if object_name(c)
                                .last()
                                .is_some_and(|x| x.eq_ignore_ascii_case(n))
                            {
                                return Some(TargetColumn::Expr(Box::new(a.value.clone())));
                            }
                        }
                    }
                    Some(TargetColumn::Column(n.to_string()))
                };
                let new = pv::substitute(&check, "", &assigned)
                    .ok_or_else(|| Error::Internal("check option substitution".into()))?;
                let mut sql = format!(
                    "SELECT COALESCE(({new}), 0) FROM `{}`.`{}`",
                    table.db, table.name
                );
                if let Some(w) = &u.selection {
                    sql.push_str(&format!(" WHERE {w}"));
                }
                if !u.order_by.is_empty() {
                    let o: Vec<String> = u.order_by.iter().map(|o| o.to_string()).collect();
                    sql.push_str(&format!(" ORDER BY {}", o.join(", ")));
                }
                if let Some(l) = &u.limit {
                    sql.push_str(&format!(" LIMIT {l}"));
                }
                sql
            }
            Statement::Insert(i) => {
                let names: Vec<String> = if !i.assignments.is_empty() {
                    i.assignments
                        .iter()
                        .map(|a| match &a.target {
                            ast::AssignmentTarget::ColumnName(c) => {
                                object_name(c).last().cloned().unwrap_or_default()
                            }
                            ast::AssignmentTarget::Tuple(_) => String::new(),
                        })
                        .collect()
                } else {
                    i.columns
                        .iter()
                        .map(|c| object_name(c).last().cloned().unwrap_or_default())
                        .collect()
                };
                let rows: Vec<Vec<ast::Expr>> = if !i.assignments.is_empty() {
                    vec![i.assignments.iter().map(|a| a.value.clone()).collect()]
                } else {
                    match i.source.as_deref() {
                        Some(q) => match q.body.as_ref() {
                            ast::SetExpr::Values(v) => {
                                v.rows.iter().map(|r| r.content.clone()).collect()
                            }
                            // INSERT ... SELECT: the conditions over each
                            // row the SELECT gives, as a derived table.
                            _ => {
                                let value = |n: &str| -> Option<TargetColumn> {
                                    let e = match names
                                        .iter()
                                        .position(|m| m.eq_ignore_ascii_case(n))
                                    {
                                        Some(p) => ast::Expr::CompoundIdentifier(vec![
                                            ast::Ident::with_quote('`', "__s"),
                                            ast::Ident::with_quote('`', format!("c{p}")),
                                        ]),
                                        None => default_expr(&table, n),
                                    };
                                    Some(TargetColumn::Expr(Box::new(e)))
                                };
                                let e = pv::substitute(&check, "", &value).ok_or_else(|| {
                                    Error::Internal("check option substitution".into())
                                })?;
                                let alias: Vec<String> =
                                    (0..names.len()).map(|k| format!("`c{k}`")).collect();
                                let sql = format!(
                                    "SELECT COALESCE(({e}), 0) FROM ({q}) AS `__s` ({})",
                                    alias.join(", ")
                                );
                                return self.run_checked(cat, &sql, &target, rewritten, params);
                            }
                        },
                        None => return Ok(None),
                    }
                };
                let mut items = Vec::with_capacity(rows.len());
                for row in &rows {
                    let value = |n: &str| -> Option<TargetColumn> {
                        let given = names
                            .iter()
                            .position(|m| m.eq_ignore_ascii_case(n))
                            .and_then(|p| row.get(p))
                            .filter(|e| !is_default(e));
                        Some(TargetColumn::Expr(Box::new(match given {
                            Some(e) => e.clone(),
                            None => default_expr(&table, n),
                        })))
                    };
                    let e = pv::substitute(&check, "", &value)
                        .ok_or_else(|| Error::Internal("check option substitution".into()))?;
                    items.push(format!("COALESCE(({e}), 0)"));
                }
                if items.is_empty() {
                    return Ok(None);
                }
                format!("SELECT {}", items.join(", "))
            }
            _ => return Ok(None),
        };
        self.run_checked(cat, &check_sql, &target, rewritten, params)
    }

    /// Runs the check query `check_sql` (each value 0 or NULL: a row that
    /// would leave the view, 1369), then the rewritten write.
    fn run_checked(
        &mut self,
        cat: &Arc<Catalog>,
        check_sql: &str,
        target: &pv::Target,
        rewritten: Statement,
        params: &[Value],
    ) -> Result<Option<QueryResult>> {
        let q = pv::parse_query(check_sql)?;
        let plan = {
            let ctx = self.plan_context(cat);
            crate::plan::select::plan_select(&ctx, &q)?
        };
        let checked = self.run_plan(&crate::plan::Plan::Select(Box::new(plan)), &[])?;
        if let QueryResult::Rows { rows, .. } = &checked {
            let failed = rows
                .iter()
                .flatten()
                .any(|v| v.to_i64().is_none_or(|x| x == 0));
            if failed {
                return Err(Error::View {
                    code: 1369,
                    message: format!("CHECK OPTION failed '{}.{}'", target.db, target.name),
                });
            }
        }
        let plan = self
            .plan_dml(cat, &Parsed::Sql(Box::new(rewritten)))?
            .ok_or_else(|| Error::Internal("a rewritten DML statement did not plan".into()))?;
        self.run_plan(&plan, params).map(Some)
    }
}

/// Whether a VALUES item is the word DEFAULT.
fn is_default(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Identifier(i) if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("DEFAULT"))
}

/// Column `name`'s DEFAULT as an expression (NULL without one).
fn default_expr(table: &crate::catalog::TableDef, name: &str) -> ast::Expr {
    use crate::catalog::DefaultValue as D;
    let text = match table
        .columns
        .iter()
        .find(|c| c.name.eq_ignore_ascii_case(name))
        .and_then(|c| c.default.as_ref())
    {
        Some(D::Literal(s)) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''")),
        Some(D::Number(n)) => n.clone(),
        Some(D::CurrentTimestamp) => "NOW()".to_string(),
        Some(D::Null) | None => "NULL".to_string(),
    };
    pv::parse_query(&format!("SELECT {text}"))
        .ok()
        .and_then(|q| match *q.body {
            ast::SetExpr::Select(s) => match s.projection.into_iter().next() {
                Some(ast::SelectItem::UnnamedExpr(e)) => Some(e),
                _ => None,
            },
            _ => None,
        })
        .unwrap_or(ast::Expr::Value(ast::Value::Null.into()))
}

impl Session {
    /// The view `name` names, after the privilege check, if it names one.
    pub(super) fn shown_view(
        &mut self,
        cat: &Catalog,
        name: &ast::ObjectName,
    ) -> Result<Option<Arc<View>>> {
        let (db, v) = self.split_name(name)?;
        let Some(view) = cat.view(&db, &v).cloned() else {
            return Ok(None);
        };
        self.state.check_db(cat, &db, "SELECT", Some(&v))?;
        Ok(Some(view))
    }

    /// SHOW CREATE VIEW (and SHOW CREATE TABLE of a view, as MySQL answers
    /// it): View, Create View, character_set_client, collation_connection.
    /// `None` when `name` is no view.
    pub(super) fn show_create_view(
        &mut self,
        cat: &Catalog,
        name: &ast::ObjectName,
    ) -> Result<Option<QueryResult>> {
        let Some(view) = self.shown_view(cat, name)? else {
            return Ok(None);
        };
        let d = &view.def;
        Ok(Some(text_rows(
            &[
                "View",
                "Create View",
                "character_set_client",
                "collation_connection",
            ],
            vec![vec![
                Value::str(&d.name),
                Value::str(&d.create_statement()),
                Value::str(&d.character_set_client),
                Value::str(&d.collation_connection),
            ]],
        )))
    }

    /// SHOW CREATE VIEW of a name that is no view: 1347 for a table, 1146
    /// otherwise.
    pub(super) fn show_create_not_view(
        &mut self,
        cat: &Catalog,
        name: &ast::ObjectName,
    ) -> Result<QueryResult> {
        let (db, t) = self.split_name(name)?;
        if cat.table(&db, &t).is_some() {
            return Err(crate::catalog::view::wrong_object(&db, &t, "VIEW"));
        }
        Err(Error::UnknownTable { db, table: t })
    }

    /// DESCRIBE / SHOW [FULL] COLUMNS of a view: its columns as its SELECT
    /// plans now (1356 when it no longer does); a column that is a base
    /// table's column shows that column's type, nullability and default.
    /// `None` when `name` is no view.
    pub(super) fn describe_view(
        &mut self,
        cat: &Catalog,
        name: &ast::ObjectName,
        full: bool,
    ) -> Result<Option<QueryResult>> {
        let Some(view) = self.shown_view(cat, name)? else {
            return Ok(None);
        };
        let d = &view.def;
        let text = format!(
            "SELECT * FROM `{}`.`{}`",
            d.db.replace('`', "``"),
            d.name.replace('`', "``")
        );
        let q = pv::parse_query(&text)?;
        let plan = {
            let ctx = self.plan_context(cat);
            crate::plan::select::plan_select(&ctx, &q)?
        };
        let mut rows = Vec::new();
        for (name, c) in view_columns(cat, &plan) {
            let default = match &c.default {
                None | Some(crate::catalog::DefaultValue::Null) => Value::Null,
                Some(crate::catalog::DefaultValue::Literal(s))
                | Some(crate::catalog::DefaultValue::Number(s)) => Value::str(s),
                Some(crate::catalog::DefaultValue::CurrentTimestamp) => {
                    Value::str("CURRENT_TIMESTAMP")
                }
            };
            let mut r = vec![
                Value::str(&name),
                Value::str(&c.ty.sql_name()),
                Value::str(if c.nullable { "YES" } else { "NO" }),
                Value::str(""),
                default,
                Value::str(""),
            ];
            if full {
                let coll = if c.ty.is_string() && !c.ty.is_binary() {
                    Value::str(c.collation.name())
                } else {
                    Value::Null
                };
                r.insert(2, coll);
                r.push(Value::str("select,insert,update,references"));
                r.push(Value::str(""));
            }
            rows.push(r);
        }
        let names: &[&str] = if full {
            &[
                "Field",
                "Type",
                "Collation",
                "Null",
                "Key",
                "Default",
                "Extra",
                "Privileges",
                "Comment",
            ]
        } else {
            &["Field", "Type", "Null", "Key", "Default", "Extra"]
        };
        Ok(Some(text_rows(names, rows)))
    }
}

/// The view's columns as a plan of `SELECT *` from it shows them: a base
/// table's column keeps its definition's type, nullability, collation and
/// default; an expression's type comes from the result-set metadata.
fn view_columns(
    cat: &Catalog,
    plan: &crate::plan::select::SelectPlan,
) -> Vec<(String, crate::catalog::view::ViewColumn)> {
    use crate::catalog::view::ViewColumn;
    plan.columns[..plan.visible]
        .iter()
        .map(|c| {
            let base = cat
                .table(&c.schema, &c.org_table)
                .and_then(|t| t.column(&c.org_name).map(|i| t.def.columns[i].clone()));
            let col = match base {
                Some(b) => ViewColumn {
                    ty: b.ty,
                    nullable: b.nullable,
                    collation: b.collation,
                    default: b.default,
                },
                None => ViewColumn {
                    ty: type_of(c),
                    nullable: c.flags & crate::types::result::column_flags::NOT_NULL == 0,
                    collation: crate::types::collation::Collation::DEFAULT,
                    default: None,
                },
            };
            (c.name.clone(), col)
        })
        .collect()
}

/// A column type from result-set metadata (for view columns that are
/// expressions).
pub(super) fn type_of(c: &crate::types::result::Column) -> crate::types::SqlType {
    use crate::types::result::ColumnType as T;
    use crate::types::SqlType as S;
    let unsigned = c.flags & crate::types::result::column_flags::UNSIGNED != 0;
    let binary = c.charset == crate::types::result::charset::BINARY;
    match c.column_type {
        T::Tiny => S::TinyInt { unsigned },
        T::Short => S::SmallInt { unsigned },
        T::Int24 => S::MediumInt { unsigned },
        T::Long => S::Int { unsigned },
        T::LongLong => S::BigInt { unsigned },
        T::Float => S::FLOAT,
        T::Double => S::DOUBLE,
        T::Decimal | T::NewDecimal => S::Decimal {
            precision: c
                .length
                .saturating_sub(1 + u32::from(c.decimals > 0))
                .clamp(1, 65) as u8,
            scale: c.decimals.min(30),
            unsigned,
        },
        T::Date => S::Date,
        T::DateTime => S::DateTime(c.decimals.min(6)),
        T::Timestamp => S::Timestamp(c.decimals.min(6)),
        T::Time => S::Time(c.decimals.min(6)),
        T::Json => S::Json,
        T::Blob if binary => S::Blob(c.length),
        T::Blob => S::Text(c.length),
        _ if binary => S::VarBinary(c.length),
        _ => S::VarChar(c.length / 4),
    }
}

// ---- privileges ----------------------------------------------------------------------

impl Session {
    /// The account a view's body is checked against: its definer's for SQL
    /// SECURITY DEFINER (1449 when that account is gone), `None` for the
    /// invoker's.
    fn view_account(
        cat: &Catalog,
        security: Security,
        definer: &(String, String),
    ) -> Result<Option<Arc<crate::catalog::UserDef>>> {
        if security == Security::Invoker {
            return Ok(None);
        }
        let exact = cat
            .users
            .get(&(definer.0.clone(), definer.1.clone()))
            .or_else(|| cat.user(&definer.0, &definer.1));
        match exact {
            Some(u) => Ok(Some(u.clone())),
            None => Err(Error::View {
                code: 1449,
                message: format!(
                    "The user specified as a definer ('{}'@'{}') does not exist",
                    definer.0, definer.1
                ),
            }),
        }
    }

    /// Privileges of a query that reads views (MySQL manual 27.6 "Access
    /// Control for Stored Programs and Views"): the invoker needs SELECT on
    /// each view it names; a SQL SECURITY DEFINER view's base tables are
    /// checked against its definer (1356 when the definer lacks SELECT) and
    /// taken out of `read`, which the caller checks against the invoker. An
    /// INVOKER view's tables stay in `read`. Not modelled: the views a
    /// DEFINER view names inside its body are checked against the invoker's
    /// definer chain only through their base tables (their own SELECT grant
    /// is not asked for).
    pub(super) fn check_views_read(
        &mut self,
        cat: &Catalog,
        views: &[pv::ViewUse],
        read: &mut Vec<Arc<crate::catalog::Table>>,
    ) -> Result<()> {
        use crate::catalog::privileges::Privs;
        for v in views {
            if !v.nested {
                self.state.check_db(cat, &v.db, "SELECT", Some(&v.name))?;
            }
            let Some(definer) = Self::view_account(cat, v.security, &v.definer)? else {
                continue;
            };
            for t in &v.tables {
                if !definer.allows(&t.def.db, Some(&t.def.name), Privs::SELECT) {
                    return Err(crate::catalog::view::invalid(&v.db, &v.name));
                }
                if let Some(i) = read.iter().position(|r| Arc::ptr_eq(r, t)) {
                    read.remove(i);
                }
            }
        }
        Ok(())
    }

    /// Privileges of a write through a view: the invoker needs `command` on
    /// the view; the base table is checked against the view's definer (SQL
    /// SECURITY DEFINER) or the invoker.
    pub(super) fn check_view_write(
        &mut self,
        cat: &Catalog,
        target: &pv::Target,
        command: &str,
        table: &crate::catalog::Table,
    ) -> Result<()> {
        use crate::catalog::privileges::Privs;
        self.state
            .check_db(cat, &target.db, command, Some(&target.name))?;
        let Some(view) = cat.view(&target.db, &target.name) else {
            return Ok(());
        };
        let d = &view.def;
        let definer = (d.definer_user.clone(), d.definer_host.clone());
        match Self::view_account(cat, d.security, &definer)? {
            Some(acc) => {
                let needed = Privs::from_name(command).unwrap_or(Privs::SELECT);
                if acc.allows(&table.def.db, Some(&table.def.name), needed) {
                    Ok(())
                } else {
                    Err(crate::catalog::view::invalid(&d.db, &d.name))
                }
            }
            None => self
                .state
                .check_db(cat, &table.def.db, command, Some(&table.def.name)),
        }
    }
}
