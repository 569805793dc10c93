//! Generated columns: `col TYPE [GENERATED ALWAYS] AS (expr) [VIRTUAL |
//! STORED]` (MySQL 8.0 manual, 15.1.20.8 "CREATE TABLE and Generated
//! Columns").
//!
//! # What is kept
//! The catalog keeps the expression as text in MySQL 8's printed form
//! ([`print()`]: identifiers back-quoted, every operation parenthesised,
//! function names in lower case) and the kind
//! ([`crate::catalog::GeneratedColumn`]); nothing bound is stored. Each
//! statement that writes the table binds the text again against the
//! table's current definition (`crate::plan::generated::Generator`), as a
//! view's SELECT is planned again by each statement that reads it — so
//! the expression follows ADD / DROP / reordering of other columns.
//!
//! # VIRTUAL is stored
//! MySQL computes a VIRTUAL column when a row is read (InnoDB stores it
//! only in the secondary indexes that include it). Canyon computes both
//! kinds when a row is written and keeps the value in the row, as STORED.
//! Results are the same as MySQL's, because the expression is
//! deterministic (the rules below refuse anything else) and can read only
//! the row: a value computed on write is the value a read would compute.
//! The cost is row size; the gain is that every read path (point reads,
//! ranges, covering index reads, the planner's statistics) sees an ordinary
//! column, and that an index on a VIRTUAL column needs nothing of its own.
//! The kind is kept and shown, and still decides the key rules (a VIRTUAL
//! column cannot be in the primary key).
//!
//! # When values are computed
//! | statement | where |
//! |---|---|
//! | INSERT, REPLACE, LOAD DATA, INSERT ... SELECT | `crate::exec`'s `insert_rows`, after the row's defaults, again after BEFORE INSERT triggers |
//! | ON DUPLICATE KEY UPDATE | `insert_rows`, on the updated row |
//! | UPDATE | `run_update`, after the assignments and BEFORE UPDATE triggers; a changed generated column moves its index entries like an assigned one |
//! | ALTER TABLE ... ADD COLUMN gcol | a table rewrite (`crate::ddl::rewrite`) computes it for every stored row |
//!
//! Each value is stored as an INSERT stores a value into the column:
//! strict mode makes 1264 / 1265 / 1366 / 1406 errors, NULL in a NOT NULL
//! column is 1048.
//!
//! # Rules (MySQL 8 error numbers; MariaDB's differ, noted where they do)
//! | rule | error | checked by |
//! |---|---|---|
//! | a value other than DEFAULT written into a generated column | 3105 (MariaDB: warning 1906, value ignored) | `crate::plan::generated` |
//! | a built-in function that is not deterministic (NOW(), RAND(), UUID(), ...) | 3763, naming it (MariaDB: 1901) | [`generated_column`] |
//! | a subquery, a variable, a parameter | 3102 | [`generated_column`] |
//! | DEFAULT / AUTO_INCREMENT / ON UPDATE on a generated column | 1221 | `define::column_def` |
//! | a reference to a generated column declared later (or itself) | 3107 | [`check_table`] |
//! | a reference to an AUTO_INCREMENT column | 3109 | [`check_table`] |
//! | a VIRTUAL column in the primary key | 3106 (MariaDB: 1903 for any generated column) | [`check_table`] |
//! | DROP COLUMN (or a rename by CHANGE) of a column a generated column reads | 3108 | [`check_drop`] |
//! | a FOREIGN KEY on a generated column with ON UPDATE CASCADE / SET NULL or ON DELETE SET NULL | 3104 (MariaDB: 1905) | [`check_foreign_key`] (CREATE TABLE) |
//!
//! # Not implemented
//! - The planner does not match `WHERE <the expression> = ...` to an index
//!   on the generated column (MySQL 8 does); `WHERE gcol = ...` uses it.
//! - MODIFY / CHANGE that makes a column generated, or changes a generated
//!   column's expression: 1235.
//! - ON UPDATE CASCADE / SET NULL of a foreign key on a base column does not
//!   recompute the child's generated columns (MySQL refuses such a foreign
//!   key on the base column of a STORED column); not checked, nor 3104 for
//!   ALTER TABLE ... ADD FOREIGN KEY.
//! - MariaDB's gcol suite (run with `have_innodb` stripped):
//!   `gcol_trigger_sp_innodb` passes; the others stop at MariaDB-only
//!   behaviour (NULL accepted for a generated column, RAND() in a VIRTUAL
//!   one), at SQL PREPARE / FLUSH / ADDTIME, or at MODIFY to a generated
//!   column (1235 here).
//! - Stored functions are refused by the binder (which binds the text
//!   without a session) with its own error rather than MySQL's 3102.

use crate::catalog::{ColumnDef, GeneratedColumn, Table, TableDef};
use crate::expr::Expr;
use canyon_common::{Error, Result};
use sqlparser::ast;
use std::ops::ControlFlow;

/// Built-in functions MySQL refuses in a generated column (not
/// deterministic, or reading the session): the name as written, and the
/// name MySQL's 3763 gives (its item's `func_name()`).
const DISALLOWED: &[(&str, &str)] = &[
    ("NOW", "now"),
    ("CURRENT_TIMESTAMP", "now"),
    ("LOCALTIME", "now"),
    ("LOCALTIMESTAMP", "now"),
    ("SYSDATE", "sysdate"),
    ("CURDATE", "curdate"),
    ("CURRENT_DATE", "curdate"),
    ("CURTIME", "curtime"),
    ("CURRENT_TIME", "curtime"),
    ("UTC_DATE", "utc_date"),
    ("UTC_TIME", "utc_time"),
    ("UTC_TIMESTAMP", "utc_timestamp"),
    ("UNIX_TIMESTAMP", "unix_timestamp"),
    ("RAND", "rand"),
    ("UUID", "uuid"),
    ("UUID_SHORT", "uuid_short"),
    ("RANDOM_BYTES", "random_bytes"),
    ("CONNECTION_ID", "connection_id"),
    ("CURRENT_USER", "current_user"),
    ("USER", "user"),
    ("SESSION_USER", "user"),
    ("SYSTEM_USER", "user"),
    ("DATABASE", "database"),
    ("SCHEMA", "database"),
    ("VERSION", "version"),
    ("FOUND_ROWS", "found_rows"),
    ("ROW_COUNT", "row_count"),
    ("LAST_INSERT_ID", "last_insert_id"),
    ("GET_LOCK", "get_lock"),
    ("RELEASE_LOCK", "release_lock"),
    ("RELEASE_ALL_LOCKS", "release_all_locks"),
    ("IS_FREE_LOCK", "is_free_lock"),
    ("IS_USED_LOCK", "is_used_lock"),
    ("SLEEP", "sleep"),
    ("BENCHMARK", "benchmark"),
    ("LOAD_FILE", "load_file"),
    ("VALUES", "values"),
];

fn sql_error(code: u16, message: String) -> Error {
    Error::Sql {
        code,
        sqlstate: *b"HY000",
        message,
    }
}

/// MySQL's 1221 ER_WRONG_USAGE for an option a generated column cannot
/// have (`what`: DEFAULT, AUTO_INCREMENT, ON UPDATE).
pub fn wrong_usage(what: &str) -> Error {
    sql_error(
        1221,
        format!("Incorrect usage of {what} and generated column"),
    )
}

/// The catalog form of `name`'s `[GENERATED ALWAYS] AS (expr) [VIRTUAL |
/// STORED]`: the expression checked for what MySQL refuses in any
/// generated column (3763 a disallowed built-in function, 3102 a subquery
/// or variable) and printed ([`print()`]).
pub fn generated_column(
    name: &str,
    expr: &ast::Expr,
    mode: Option<ast::GeneratedExpressionMode>,
) -> Result<GeneratedColumn> {
    let refused = ast::visit_expressions(expr, |e| {
        let err = match e {
            ast::Expr::Function(f) => {
                let fname = f
                    .name
                    .0
                    .last()
                    .and_then(|p| p.as_ident())
                    .map(|i| i.value.to_ascii_uppercase())
                    .unwrap_or_default();
                DISALLOWED
                    .iter()
                    .find(|(n, _)| *n == fname)
                    .map(|(_, shown)| {
                        sql_error(
                            3763,
                            format!(
                                "Expression of generated column '{name}' contains a \
                                 disallowed function: {shown}."
                            ),
                        )
                    })
            }
            ast::Expr::Subquery(_) | ast::Expr::Exists { .. } | ast::Expr::InSubquery { .. } => {
                Some(disallowed(name))
            }
            ast::Expr::Identifier(id) if id.quote_style.is_none() && id.value.starts_with('@') => {
                Some(disallowed(name))
            }
            ast::Expr::Value(v) if matches!(v.value, ast::Value::Placeholder(_)) => {
                Some(disallowed(name))
            }
            _ => None,
        };
        match err {
            Some(e) => ControlFlow::Break(e),
            None => ControlFlow::Continue(()),
        }
    });
    if let ControlFlow::Break(e) = refused {
        return Err(e);
    }
    Ok(GeneratedColumn {
        expr: print(expr),
        stored: matches!(mode, Some(ast::GeneratedExpressionMode::Stored)),
    })
}

/// MySQL's 3102 ER_GENERATED_COLUMN_FUNCTION_IS_NOT_ALLOWED.
fn disallowed(name: &str) -> Error {
    sql_error(
        3102,
        format!("Expression of generated column '{name}' contains a disallowed function."),
    )
}

/// Prints an expression as MySQL 8 prints a generated column's: column
/// names back-quoted, each operation in parentheses (`a+b*2` is
/// `(`a` + (`b` * 2))`), function names in lower case. String literals
/// are printed plainly, where MySQL 8 adds the character set introducer
/// (`_utf8mb4'x'`).
pub fn print(expr: &ast::Expr) -> String {
    let mut e = expr.clone();
    let _ = ast::visit_expressions_mut(&mut e, |x| {
        match x {
            // Written parentheses go; the operations get their own below
            // (children are visited first, so an inner operation already
            // has them).
            ast::Expr::Nested(inner) => {
                let inner = std::mem::replace(inner.as_mut(), ast::Expr::value(ast::Value::Null));
                *x = inner;
            }
            ast::Expr::Identifier(id) if !id.value.starts_with('@') => {
                id.quote_style = Some('`');
            }
            ast::Expr::CompoundIdentifier(parts) => {
                if let Some(last) = parts.pop() {
                    *x = ast::Expr::Identifier(ast::Ident::with_quote('`', last.value));
                }
            }
            ast::Expr::Function(f) => {
                for p in f.name.0.iter_mut() {
                    if let ast::ObjectNamePart::Identifier(id) = p {
                        if id.quote_style.is_none() {
                            id.value = id.value.to_ascii_lowercase();
                        }
                    }
                }
            }
            _ => {}
        }
        if matches!(
            x,
            ast::Expr::BinaryOp { .. }
                | ast::Expr::UnaryOp { .. }
                | ast::Expr::IsNull(_)
                | ast::Expr::IsNotNull(_)
                | ast::Expr::Like { .. }
                | ast::Expr::Between { .. }
                | ast::Expr::InList { .. }
        ) {
            let inner = std::mem::replace(x, ast::Expr::value(ast::Value::Null));
            *x = ast::Expr::Nested(Box::new(inner));
        }
        ControlFlow::<()>::Continue(())
    });
    without_list_spaces(&e.to_string())
}

/// `f(a, b)` as MySQL and MariaDB print lists: `f(a,b)` (outside quotes).
fn without_list_spaces(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        out.push(ch);
        match quote {
            Some(q) if ch == q => quote = None,
            Some(_) => {}
            None if matches!(ch, '\'' | '"' | '`') => quote = Some(ch),
            None if ch == ',' && chars.peek() == Some(&' ') => {
                chars.next();
            }
            None => {}
        }
    }
    out
}

/// The expression as SHOW CREATE TABLE shows it: MySQL 8 prints the
/// stored form inside `AS (...)` (`AS ((`a` + `b`))`); MariaDB
/// (`mariadb`) without the outer parentheses of an operation
/// (`AS (`a` + `b`)`).
pub fn shown_expr(g: &GeneratedColumn, mariadb: bool) -> String {
    let e = &g.expr;
    if mariadb && e.starts_with('(') && e.ends_with(')') && closes_at_end(e) {
        e[1..e.len() - 1].to_string()
    } else {
        e.clone()
    }
}

/// Whether the parenthesis opening `e` closes at its last character
/// (quotes skipped).
fn closes_at_end(e: &str) -> bool {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let n = e.chars().count();
    for (i, ch) in e.chars().enumerate() {
        match quote {
            Some(q) if ch == q => quote = None,
            Some(_) => {}
            None => match ch {
                '\'' | '"' | '`' => quote = Some(ch),
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return i == n - 1;
                    }
                }
                _ => {}
            },
        }
    }
    false
}

/// The column clause SHOW CREATE TABLE prints after the type:
/// `GENERATED ALWAYS AS (...) VIRTUAL` / `STORED`.
pub fn show_clause(g: &GeneratedColumn, mariadb: bool) -> String {
    format!(
        " GENERATED ALWAYS AS ({}) {}",
        shown_expr(g, mariadb),
        if g.stored { "STORED" } else { "VIRTUAL" }
    )
}

/// information_schema.COLUMNS.EXTRA of a generated column.
pub fn extra(g: &GeneratedColumn) -> &'static str {
    if g.stored {
        "STORED GENERATED"
    } else {
        "VIRTUAL GENERATED"
    }
}

/// The columns an expression names (lower case).
fn referenced_names(text: &str) -> Result<Vec<String>> {
    let e = crate::plan::generated::parse_expr(text)?;
    let mut out = Vec::new();
    let _ = ast::visit_expressions(&e, |x| {
        match x {
            ast::Expr::Identifier(id) if !id.value.starts_with('@') => {
                out.push(id.value.to_ascii_lowercase())
            }
            ast::Expr::CompoundIdentifier(parts) => {
                if let Some(last) = parts.last() {
                    out.push(last.value.to_ascii_lowercase())
                }
            }
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
    Ok(out)
}

/// MySQL's 3104 ER_WRONG_FK_OPTION_FOR_GENERATED_COLUMN (MariaDB: 1905):
/// a foreign key on a generated column cannot change it — ON UPDATE
/// CASCADE / SET NULL, ON DELETE SET NULL. Checked for CREATE TABLE;
/// MySQL's rule on the *base* columns of a STORED column is not checked.
pub fn check_foreign_key(
    columns: &[ColumnDef],
    fk_columns: &[usize],
    on_update: crate::catalog::FkAction,
    on_delete: crate::catalog::FkAction,
) -> Result<()> {
    use crate::catalog::FkAction;
    if !fk_columns
        .iter()
        .any(|&c| columns[c].attrs.generated.is_some())
    {
        return Ok(());
    }
    let clause = match (on_update, on_delete) {
        (FkAction::Cascade, _) => "ON UPDATE CASCADE",
        (FkAction::SetNull, _) => "ON UPDATE SET NULL",
        (_, FkAction::SetNull) => "ON DELETE SET NULL",
        _ => return Ok(()),
    };
    Err(sql_error(
        3104,
        format!("Cannot define foreign key with {clause} clause on a generated column."),
    ))
}

/// MySQL's 3108 ER_DEPENDENT_BY_GENERATED_COLUMN: column `name` goes away
/// (DROP COLUMN, or CHANGE to another name) while another generated column
/// reads it.
pub fn check_drop(def: &TableDef, name: &str) -> Result<()> {
    let lower = name.to_ascii_lowercase();
    for c in &def.columns {
        let Some(g) = &c.attrs.generated else {
            continue;
        };
        if c.name.eq_ignore_ascii_case(name) {
            continue;
        }
        if referenced_names(&g.expr)?.contains(&lower) {
            return Err(sql_error(
                3108,
                format!("Column '{name}' has a generated column dependency."),
            ));
        }
    }
    Ok(())
}

/// Checks a table definition's generated columns against each other and
/// the rest of the table: each binds (1054 for an unknown column), reads
/// only earlier generated columns (3107) and no AUTO_INCREMENT column
/// (3109); no VIRTUAL column is in the primary key (3106).
pub fn check_table(def: &TableDef) -> Result<()> {
    if !def.columns.iter().any(|c| c.attrs.generated.is_some()) {
        return Ok(());
    }
    let table = Table::new(def.clone());
    for (i, col) in def.columns.iter().enumerate() {
        let Some(g) = &col.attrs.generated else {
            continue;
        };
        if !g.stored && def.primary_key.contains(&i) {
            return Err(sql_error(
                3106,
                "'Defining a virtual generated column as primary key' is not supported \
                 for generated columns."
                    .into(),
            ));
        }
        let e = crate::plan::generated::bind_column(&table, i)?;
        let mut refs = Vec::new();
        columns_of(&e, &mut refs);
        for r in refs {
            let rc: &ColumnDef = &def.columns[r];
            if rc.attrs.generated.is_some() && r >= i {
                return Err(sql_error(
                    3107,
                    "Generated column can refer only to generated columns defined prior to it."
                        .into(),
                ));
            }
            if rc.auto_increment {
                return Err(sql_error(
                    3109,
                    format!(
                        "Generated column '{}' cannot refer to auto-increment column.",
                        col.name
                    ),
                ));
            }
        }
        if matches!(e, Expr::Stored(_)) || has_stored_call(&e) {
            return Err(disallowed(&col.name));
        }
    }
    Ok(())
}

fn columns_of(e: &Expr, out: &mut Vec<usize>) {
    e.visit_columns(&mut |c| out.push(c), &mut |_| {});
}

fn has_stored_call(e: &Expr) -> bool {
    let mut found = matches!(e, Expr::Stored(_) | Expr::Subquery(_));
    if !found {
        e.for_each_child(&mut |c| found |= has_stored_call(c));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn printed(sql: &str) -> String {
        print(&crate::plan::generated::parse_expr(sql).expect("parses"))
    }

    #[test]
    fn prints_as_mysql_8() {
        assert_eq!(printed("a+b"), "(`a` + `b`)");
        assert_eq!(printed("(a + b) * 2"), "((`a` + `b`) * 2)");
        assert_eq!(printed("CONCAT(a, 'x, y')"), "concat(`a`,'x, y')");
        assert_eq!(printed("a IN (1, 2)"), "(`a` IN (1,2))");
        assert_eq!(printed("t.a"), "`a`");
        let g = GeneratedColumn {
            expr: printed("a+b"),
            stored: false,
        };
        assert_eq!(
            show_clause(&g, false),
            " GENERATED ALWAYS AS ((`a` + `b`)) VIRTUAL"
        );
        assert_eq!(
            show_clause(&g, true),
            " GENERATED ALWAYS AS (`a` + `b`) VIRTUAL"
        );
        let g = GeneratedColumn {
            expr: printed("(a+1)*(b+1)"),
            stored: true,
        };
        assert_eq!(
            show_clause(&g, true),
            " GENERATED ALWAYS AS ((`a` + 1) * (`b` + 1)) STORED"
        );
    }

    #[test]
    fn refuses_what_mysql_refuses() {
        let check = |sql: &str| {
            let e = crate::plan::generated::parse_expr(sql).expect("parses");
            match generated_column("g", &e, None) {
                Err(Error::Sql { code, .. }) => code,
                Ok(_) => 0,
                Err(e) => panic!("{e}"),
            }
        };
        assert_eq!(check("NOW()"), 3763);
        assert_eq!(check("a + RAND()"), 3763);
        assert_eq!(check("UUID()"), 3763);
        assert_eq!(check("(SELECT 1)"), 3102);
        assert_eq!(check("@x + 1"), 3102);
        assert_eq!(check("a + 1"), 0);
    }
}
