//! Generated columns at write time: the expressions the catalog keeps as
//! text, bound against the table's row once per statement, and the values
//! they give stored into each row a statement writes.
//!
//! The declaration side (what CREATE / ALTER TABLE accept, the errors, how
//! the expression is printed) and the essay on how generated columns are
//! kept are in `crate::ddl::generated`. This module is what a write needs:
//! - [`Generator`]: binds every generated column of a table
//!   ([`Generator::new`], `None` for a table without one, so the common
//!   path costs one scan of the column list) and fills a full row
//!   ([`Generator::fill`]) in column order — a generated column may read the
//!   generated columns declared before it, which are then already filled;
//! - [`check_insert`], [`check_assignments`]: MySQL's 3105 for a statement
//!   that writes a value other than DEFAULT into a generated column;
//! - [`match_expressions`]: a WHERE clause's copy of a generated column's
//!   expression replaced by the column, so that the access path can use an
//!   index on it (MySQL 8 does the same, 8.3.11 "Optimizer Use of Generated
//!   Column Indexes"), for integer columns whose expression is an integer.
//!
//! As `crate::plan::partition`'s `Router`, the binding happens per statement
//! (not per catalog version): a table's definition can change under a
//! cached plan only through a new catalog version, which re-plans it anyway.

use crate::catalog::Table;
use crate::expr::{eval, Env, EvalContext, Expr};
use crate::types::value::Value;
use canyon_common::{Error, Result};
use sqlparser::ast;

/// Parses a generated column's expression as the catalog stores it.
pub fn parse_expr(text: &str) -> Result<ast::Expr> {
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::parser::Parser;
    Parser::new(&MySqlDialect {})
        .try_with_sql(text)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| Error::Syntax(format!("{e} in generated column expression '{text}'")))
}

/// Binds generated column `c`'s expression over `table`'s row (no session:
/// no placeholders, no stored functions, no subqueries).
pub fn bind_column(table: &Table, c: usize) -> Result<Expr> {
    let col = &table.def.columns[c];
    let g = col
        .attrs
        .generated
        .as_ref()
        .ok_or_else(|| Error::Internal(format!("column '{}' is not generated", col.name)))?;
    let ast = parse_expr(&g.expr)?;
    let mut b = crate::plan::bind::Binder::new(Some(table), None);
    b.context = "generated column function";
    b.bind(&ast)
}

/// A table's generated columns, bound.
#[derive(Debug)]
pub struct Generator {
    /// (column position, expression), in column order.
    columns: Vec<(usize, Expr)>,
}

impl Generator {
    /// Binds `table`'s generated columns; `None` when it has none.
    pub fn new(table: &Table) -> Result<Option<Generator>> {
        let def = &table.def;
        if !def.columns.iter().any(|c| c.attrs.generated.is_some()) {
            return Ok(None);
        }
        let columns = (0..def.columns.len())
            .filter(|&c| def.columns[c].attrs.generated.is_some())
            .map(|c| Ok((c, bind_column(table, c)?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(Generator { columns }))
    }

    /// Whether `c` is one of the generated columns.
    pub fn is_generated(&self, c: usize) -> bool {
        self.columns.iter().any(|(g, _)| *g == c)
    }

    /// The generated columns' positions, in column order.
    pub fn positions(&self) -> impl Iterator<Item = usize> + '_ {
        self.columns.iter().map(|(c, _)| *c)
    }

    /// Computes every generated column of the full table row `row`, in
    /// column order, each value stored as an INSERT stores it into the
    /// column (strict mode: 1264 / 1366 / 1406 ... as errors, else
    /// warnings and the value adjusted) and NULL in a NOT NULL column 1048
    /// — as MySQL computes them for each written row (`rowno`: the row's
    /// number in the statement, for the messages).
    pub fn fill(
        &self,
        table: &Table,
        row: &mut [Value],
        ctx: &dyn EvalContext,
        rowno: u64,
    ) -> Result<()> {
        for (c, e) in &self.columns {
            let v = eval(
                e,
                &Env {
                    row,
                    aggs: &[],
                    ctx,
                },
            )?;
            let col = &table.def.columns[*c];
            let v = crate::expr::eval::coerce_column(v, col, rowno, ctx)?;
            if v.is_null() && !col.nullable {
                return Err(Error::BadNull(col.name.clone()));
            }
            row[*c] = v;
        }
        Ok(())
    }
}

/// MySQL's 3105 ER_NON_DEFAULT_VALUE_FOR_GENERATED_COLUMN (MariaDB: warning
/// 1906 ER_WARNING_NON_DEFAULT_VALUE_FOR_GENERATED_COLUMN, the value ignored).
pub fn non_default(table: &Table, c: usize) -> Error {
    Error::Sql {
        code: 3105,
        sqlstate: *b"HY000",
        message: format!(
            "The value specified for generated column '{}' in table '{}' is not allowed.",
            table.def.columns[c].name, table.def.name
        ),
    }
}

/// 3105 for an INSERT / REPLACE / LOAD DATA whose column list names a
/// generated column with a value other than DEFAULT: `rows` are the VALUES
/// rows (`None`: DEFAULT); `from_query` an INSERT ... SELECT (or LOAD DATA),
/// whose every value is given.
pub fn check_insert(
    table: &Table,
    columns: &[usize],
    rows: &[Vec<Option<Expr>>],
    from_query: bool,
) -> Result<()> {
    for (i, &c) in columns.iter().enumerate() {
        if table.def.columns[c].attrs.generated.is_none() {
            continue;
        }
        if from_query || rows.iter().any(|r| r.get(i).is_some_and(Option::is_some)) {
            return Err(non_default(table, c));
        }
    }
    Ok(())
}

/// 3105 for `SET gcol = value` in an UPDATE or ON DUPLICATE KEY UPDATE;
/// `SET gcol = DEFAULT` is allowed (and changes nothing the recomputation
/// does not): those assignments are removed from `assignments` (the parsed
/// ones, before they are bound).
pub fn check_assignments(table: &Table, assignments: &mut Vec<ast::Assignment>) -> Result<()> {
    let mut err = None;
    assignments.retain(|a| {
        let ast::AssignmentTarget::ColumnName(n) = &a.target else {
            return true;
        };
        let Some(c) =
            n.0.last()
                .and_then(|p| p.as_ident())
                .and_then(|i| table.column(&i.value))
        else {
            return true;
        };
        if table.def.columns[c].attrs.generated.is_none() {
            return true;
        }
        if is_default(&a.value) {
            return false;
        }
        err.get_or_insert_with(|| non_default(table, c));
        true
    });
    match err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Whether a value is the keyword DEFAULT.
fn is_default(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Identifier(id)
        if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("DEFAULT"))
}

/// The evaluation context of a write without a session (a table rewrite
/// computing a new generated column): the expressions read only the row,
/// so nothing else is asked; warnings are collected for the caller.
#[derive(Debug, Default)]
pub struct NoSession {
    warnings: std::cell::RefCell<Vec<(u16, String)>>,
}

impl NoSession {
    /// The warnings recorded since the last call.
    pub fn take_warnings(&self) -> Vec<(u16, String)> {
        std::mem::take(&mut *self.warnings.borrow_mut())
    }
}

impl EvalContext for NoSession {
    fn params(&self) -> &[Value] {
        &[]
    }
    fn sys_var(&self, name: &str) -> Result<Value> {
        Err(Error::Syntax(format!("@@{name} in a generated column")))
    }
    fn user_var(&self, _name: &str) -> Value {
        Value::Null
    }
    fn session_fact(&self, _f: crate::expr::functions::Func) -> Value {
        Value::Null
    }
    fn now(&self) -> chrono::NaiveDateTime {
        chrono::NaiveDateTime::default()
    }
    fn warn(&self, code: u16, message: &str) {
        self.warnings.borrow_mut().push((code, message.to_string()));
    }
}

/// `filter` (over `table`'s row) with every subexpression equal to the
/// expression of an indexed generated integer column whose expression is
/// an integer replaced by that column; `None` when nothing matched (or
/// the table has no such column).
///
/// The replacement is exact: the column holds the expression's value for
/// every stored row (an integer expression is stored unchanged in an
/// integer column, or the write failed). Other types are left alone, as
/// MySQL leaves them when the types differ: a DOUBLE expression in an INT
/// column, or a string under another collation, would compare otherwise
/// through the column than through the expression.
pub fn match_expressions(table: &Table, filter: &Expr) -> Option<Expr> {
    let def = &table.def;
    if !def.columns.iter().any(|c| c.attrs.generated.is_some()) {
        return None;
    }
    let kinds = crate::expr::column_kinds(Some(table));
    let indexed = |c: usize| {
        def.primary_key.first() == Some(&c)
            || def.indexes.iter().any(|i| i.columns.first() == Some(&c))
    };
    let patterns: Vec<(usize, Expr)> = (0..def.columns.len())
        .filter(|&c| def.columns[c].attrs.generated.is_some())
        .filter(|&c| def.columns[c].ty.is_integer() && indexed(c))
        .filter_map(|c| Some((c, bind_column(table, c).ok()?)))
        .filter(|(_, e)| {
            matches!(
                e.kind(&kinds, &[]),
                crate::types::ExprKind::Int | crate::types::ExprKind::UInt
            ) && !matches!(e, Expr::Column(_))
        })
        .collect();
    if patterns.is_empty() {
        return None;
    }
    let matched = std::cell::Cell::new(false);
    let out = filter.rewrite(&|x| {
        let (c, _) = patterns.iter().find(|(_, p)| p == x)?;
        matched.set(true);
        Some(Expr::Column(*c))
    });
    matched.get().then_some(out)
}
