//! Planning: from a parsed statement to an executable plan, against one catalog
//! snapshot.
//!
//! A plan holds `Arc<Table>`s and bound expressions; it is immutable and can be
//! re-executed with new parameters (prepared statements keep it until the
//! catalog version changes). Access-path choice lives in [`crate::access`].
//!
//! Scope of this version: single-table SELECT / INSERT / UPDATE / DELETE. Joins,
//! sub-queries, INSERT ... SELECT and ON DUPLICATE KEY UPDATE are refused with
//! error 1235 (not supported yet), never silently ignored.

use crate::access::{choose_access, Access};
use crate::api::Column;
use crate::catalog::{Catalog, Table};
use crate::expr::{Binder, Expr};
pub use crate::query::LockMode;
use crate::query::SelectPlan;
use crate::value::Value;
use canyon_common::{Error, Result};
use sqlparser::ast;
use std::sync::Arc;

/// An INSERT (or REPLACE).
#[derive(Debug)]
pub struct InsertPlan {
    /// Target table.
    pub table: Arc<Table>,
    /// Positions of the listed columns (all columns when no list was given).
    pub columns: Vec<usize>,
    /// VALUES rows.
    pub rows: Vec<Vec<Option<Expr>>>,
    /// INSERT IGNORE: duplicate-key rows are skipped with a warning.
    pub ignore: bool,
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
    /// SET column = expr, applied left to right as MySQL does.
    pub assignments: Vec<(usize, Expr)>,
    /// LIMIT.
    pub limit: Option<Expr>,
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
    /// LIMIT.
    pub limit: Option<Expr>,
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
}

/// What the planner needs from the session.
pub struct PlanContext<'a> {
    /// The catalog snapshot.
    pub catalog: &'a Catalog,
    /// The current database.
    pub db: Option<&'a str>,
}

impl PlanContext<'_> {
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

/// Plans an INSERT.
pub fn plan_insert(ctx: &PlanContext<'_>, ins: &ast::Insert) -> Result<InsertPlan> {
    if ins.on.is_some() {
        return Err(Error::Unsupported(
            "INSERT ... ON DUPLICATE KEY UPDATE".into(),
        ));
    }
    if ins.replace_into {
        return Err(Error::Unsupported("REPLACE".into()));
    }
    if !ins.assignments.is_empty() {
        return Err(Error::Unsupported("INSERT ... SET".into()));
    }
    if ins.returning.is_some() || ins.partitioned.is_some() {
        return Err(Error::Unsupported("this INSERT form".into()));
    }
    let table = ctx.resolve(table_name(&ins.table)?)?;
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
                return Err(Error::DuplicateColumn(name));
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
        _ => return Err(Error::Unsupported("INSERT ... SELECT".into())),
    };
    let mut b = Binder::new(Some(&table), None);
    b.context = "field list";
    let mut rows = Vec::with_capacity(values.rows.len());
    for (i, row) in values.rows.iter().enumerate() {
        if row.content.len() != columns.len() {
            return Err(Error::ValueCountMismatch { row: i as u64 + 1 });
        }
        let mut bound = Vec::with_capacity(row.content.len());
        for e in &row.content {
            // DEFAULT in a VALUES list means the column default.
            if let ast::Expr::Identifier(id) = e {
                if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("DEFAULT") {
                    bound.push(None);
                    continue;
                }
            }
            let x = b.bind(e)?;
            // VALUES are evaluated without a current row: a column reference there
            // would read NULL in Canyon but the default in MySQL; refuse it.
            if !x.is_constant() {
                return Err(Error::Unsupported("column references in VALUES".into()));
            }
            bound.push(Some(x));
        }
        rows.push(bound);
    }
    Ok(InsertPlan {
        table,
        columns,
        rows,
        ignore: ins.ignore,
    })
}

/// Plans an UPDATE.
pub fn plan_update(ctx: &PlanContext<'_>, up: &ast::Update) -> Result<UpdatePlan> {
    if !up.table.joins.is_empty() || up.from.is_some() {
        return Err(Error::Unsupported("multi-table UPDATE".into()));
    }
    if !up.order_by.is_empty() {
        return Err(Error::Unsupported("UPDATE ... ORDER BY".into()));
    }
    let (name, alias) = match &up.table.relation {
        ast::TableFactor::Table { name, alias, .. } => {
            (name, alias.as_ref().map(|a| a.name.value.clone()))
        }
        _ => return Err(Error::Unsupported("this UPDATE target".into())),
    };
    let table = ctx.resolve(name)?;
    let mut b = Binder::new(Some(&table), alias.as_deref());
    b.context = "field list";
    let mut assignments = Vec::with_capacity(up.assignments.len());
    for a in &up.assignments {
        let target = match &a.target {
            ast::AssignmentTarget::ColumnName(n) => n,
            ast::AssignmentTarget::Tuple(_) => {
                return Err(Error::Unsupported("tuple assignment".into()))
            }
        };
        let cname = target
            .0
            .last()
            .and_then(|p| p.as_ident())
            .map(|i| i.value.clone())
            .unwrap_or_default();
        let pos = table.column(&cname).ok_or_else(|| Error::UnknownColumn {
            column: cname.clone(),
            context: "field list".into(),
        })?;
        let e = b.bind(&a.value)?;
        assignments.push((pos, e));
    }
    b.context = "where clause";
    let filter = up.selection.as_ref().map(|w| b.bind(w)).transpose()?;
    let limit = up.limit.as_ref().map(|l| b.bind(l)).transpose()?;
    let access = choose_access(&table, filter.as_ref());
    Ok(UpdatePlan {
        table,
        access,
        filter,
        assignments,
        limit,
    })
}

/// Plans a DELETE.
pub fn plan_delete(ctx: &PlanContext<'_>, del: &ast::Delete) -> Result<DeletePlan> {
    if !del.tables.is_empty() || del.using.is_some() {
        return Err(Error::Unsupported("multi-table DELETE".into()));
    }
    if !del.order_by.is_empty() {
        return Err(Error::Unsupported("DELETE ... ORDER BY".into()));
    }
    let from = match &del.from {
        ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f) => f,
    };
    let (name, alias) = match from.as_slice() {
        [twj] if twj.joins.is_empty() => match &twj.relation {
            ast::TableFactor::Table { name, alias, .. } => {
                (name, alias.as_ref().map(|a| a.name.value.clone()))
            }
            _ => return Err(Error::Unsupported("this DELETE target".into())),
        },
        _ => return Err(Error::Unsupported("multi-table DELETE".into())),
    };
    let table = ctx.resolve(name)?;
    let mut b = Binder::new(Some(&table), alias.as_deref());
    b.context = "where clause";
    let filter = del.selection.as_ref().map(|w| b.bind(w)).transpose()?;
    let limit = del.limit.as_ref().map(|l| b.bind(l)).transpose()?;
    let access = choose_access(&table, filter.as_ref());
    Ok(DeletePlan {
        table,
        access,
        filter,
        limit,
    })
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
