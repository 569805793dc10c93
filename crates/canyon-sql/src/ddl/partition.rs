//! Partitioning as DDL defines and changes it: a PARTITION BY clause as
//! written ([`crate::parse::partition::PartitionSpec`]) checked against its
//! table and turned into the catalog's [`Partitioning`] ([`build`]), and the
//! ALTER TABLE partition operations as changes of that definition
//! ([`add`], [`drop`], [`coalesce`], [`reorganize`]).
//!
//! # The rules checked (MySQL 8.0 manual, chapter 26; errors as MySQL numbers them)
//! | rule | error |
//! |---|---|
//! | the expression uses only columns, integer literals, `+ - * DIV %` and the functions of 26.6.3 | 1564 |
//! | it reads a column (no constant function) | 1486 |
//! | a bare column of HASH / RANGE / LIST is an integer; COLUMNS columns are integers, strings or dates | 1659 |
//! | KEY / COLUMNS columns exist | 1488 |
//! | every unique key (the primary key included) has every column of the function | 1503 |
//! | no foreign keys | 1506 |
//! | PARTITIONS n matches the list (a parse error, as in MySQL's grammar) | 1064 |
//! | HASH / KEY: n > 0; no VALUES | 1504, 1480 |
//! | RANGE / LIST: every partition defined, with VALUES of its kind | 1492, 1479, 1480 |
//! | RANGE: bounds strictly increasing, MAXVALUE last, no NULL | 1493, 1481, 1566 |
//! | non-COLUMNS bounds are integers | 1697 |
//! | COLUMNS bounds: one value per column (a parse error), of the column's type | 1064, 1654 |
//! | LIST: no value twice | 1495 |
//! | partition and subpartition names unique | 1517 |
//! | at most 8192 partitions, subpartitions included | 1499 |
//! | SUBPARTITION BY only under RANGE / LIST, same count everywhere | 1500, 1483, 1485 |
//!
//! What the rows must satisfy after a change (every row fits a partition)
//! is checked by the session against the stored rows
//! (`crate::exec::partition`).

use crate::catalog::partition::{
    BoundValue, PartitionDef, PartitionMethod, PartitionValues, Partitioning, SubPartitioning,
};
use crate::catalog::{Table, TableDef};
use crate::expr::functions::Func;
use crate::expr::{eval, Env, EvalContext};
use crate::parse::partition::{BoundSpec, PartitionSpec, PartitionSpecDef, SubSpec, ValuesSpec};
use crate::types::value::{compare, Value};
use crate::types::SqlType;
use canyon_common::{Error, Result};
use sqlparser::ast;
use std::cmp::Ordering;

/// MySQL's limit on partitions, subpartitions included.
const MAX_PARTITIONS: usize = 8192;

/// The functions a partitioning expression may call (MySQL 8.0 manual,
/// 26.6.3 "Partitioning Limitations Relating to Functions").
const ALLOWED_FUNCTIONS: &[&str] = &[
    "ABS",
    "CEILING",
    "CEIL",
    "DATEDIFF",
    "DAY",
    "DAYOFMONTH",
    "DAYOFWEEK",
    "DAYOFYEAR",
    "FLOOR",
    "HOUR",
    "MICROSECOND",
    "MINUTE",
    "MOD",
    "MONTH",
    "QUARTER",
    "SECOND",
    "TIME_TO_SEC",
    "TO_DAYS",
    "TO_SECONDS",
    "UNIX_TIMESTAMP",
    "WEEKDAY",
    "YEAR",
    "YEARWEEK",
];

/// A partitioning error: MySQL's number and message.
pub fn err(code: u16, message: impl Into<String>) -> Error {
    Error::Partition {
        code,
        message: message.into(),
    }
}

/// The checks MySQL's and MariaDB's grammars make while parsing (the
/// partition count against PARTITIONS n, the values against the column
/// list): a parse error, 1064, with the check's message.
fn grammar(message: &str) -> Error {
    Error::Syntax(message.to_string())
}

fn not_allowed() -> Error {
    err(1564, "This partition function is not allowed")
}

/// Validates a PARTITION BY clause for `table` (a new table's definition, or
/// an existing table's for ALTER TABLE ... PARTITION BY).
pub fn build(spec: &PartitionSpec, table: &Table) -> Result<Partitioning> {
    let def = &table.def;
    let (expr, columns) = function(spec.method, spec.expr.as_ref(), &spec.columns, table)?;
    let mut partitions = Vec::with_capacity(spec.partitions.len());
    let by_count = spec.partitions.is_empty() && spec.method.is_hash();
    if spec.method.is_hash() {
        if let Some(n) = spec.count {
            if !spec.partitions.is_empty() && n as usize != spec.partitions.len() {
                return Err(grammar(
                    "Wrong number of partitions defined, mismatch with previous setting",
                ));
            }
        }
        if spec.partitions.is_empty() {
            let n = spec.count.unwrap_or(1);
            if n == 0 {
                return Err(err(
                    1504,
                    "Number of partitions = 0 is not an allowed value",
                ));
            }
            if n as usize > MAX_PARTITIONS {
                return Err(too_many());
            }
            partitions = (0..n)
                .map(|i| PartitionDef::bucket(format!("p{i}")))
                .collect();
        }
    } else {
        let kind = if spec.method.is_range() {
            "RANGE"
        } else {
            "LIST"
        };
        if spec.partitions.is_empty() {
            return Err(err(
                1492,
                format!("For {kind} partitions each partition must be defined"),
            ));
        }
        if let Some(n) = spec.count {
            if n as usize != spec.partitions.len() {
                return Err(grammar(
                    "Wrong number of partitions defined, mismatch with previous setting",
                ));
            }
        }
    }
    let mut part = Partitioning {
        method: spec.method,
        expr,
        columns,
        key_algorithm: spec.key_algorithm,
        partitions: Vec::new(),
        by_count,
        default_count: by_count && spec.count.is_none(),
        sub: None,
    };
    for p in &spec.partitions {
        partitions.push(definition(&part, p, table)?);
    }
    part.partitions = partitions;
    if let Some(sub) = &spec.sub {
        part.sub = Some(subpartitioning(spec, sub, table)?);
    }
    check(&part, def)?;
    Ok(part)
}

fn too_many() -> Error {
    err(
        1499,
        "Too many partitions (including subpartitions) were defined",
    )
}

/// The partitioning function of a method: the printed expression (HASH /
/// RANGE / LIST) or the column names (KEY / COLUMNS), checked.
fn function(
    method: PartitionMethod,
    expr: Option<&ast::Expr>,
    columns: &[String],
    table: &Table,
) -> Result<(String, Vec<String>)> {
    let def = &table.def;
    if let Some(e) = expr {
        let mut cols = Vec::new();
        let printed = print_expr(e, table, &mut cols, true)?;
        if cols.is_empty() {
            return Err(err(
                1486,
                "Constant, random or timezone-dependent expressions in (sub)partitioning function are not permitted",
            ));
        }
        if let ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_) = strip_nested(e) {
            let col = &def.columns[cols[0]];
            if !col.ty.is_integer() {
                return Err(err(
                    1659,
                    format!(
                        "Field '{}' is of a not allowed type for this type of partitioning",
                        col.name
                    ),
                ));
            }
        }
        // The printed form must bind (every function Canyon evaluates).
        crate::plan::partition::bind_expr(table, &printed).map_err(|_| not_allowed())?;
        return Ok((printed, Vec::new()));
    }
    let mut names = Vec::with_capacity(columns.len());
    let cols: Vec<usize> = if columns.is_empty() && method.is_hash() {
        // KEY (): the primary key's columns.
        if def.primary_key.is_empty() {
            return Err(err(
                1488,
                "Field in list of fields for partition function not found in table",
            ));
        }
        def.primary_key.clone()
    } else {
        columns
            .iter()
            .map(|c| {
                table.column(c).ok_or_else(|| {
                    err(
                        1488,
                        "Field in list of fields for partition function not found in table",
                    )
                })
            })
            .collect::<Result<_>>()?
    };
    for &c in &cols {
        let col = &def.columns[c];
        let allowed = match method {
            PartitionMethod::Key | PartitionMethod::LinearKey => {
                !matches!(col.ty, SqlType::Text(_) | SqlType::Blob(_))
            }
            _ => {
                col.ty.is_integer()
                    || matches!(
                        col.ty,
                        SqlType::Char(_)
                            | SqlType::VarChar(_)
                            | SqlType::Binary(_)
                            | SqlType::VarBinary(_)
                            | SqlType::Date
                            | SqlType::DateTime(_)
                    )
            }
        };
        if !allowed {
            return Err(if matches!(col.ty, SqlType::Text(_) | SqlType::Blob(_)) {
                err(1502, "A BLOB field is not allowed in partition function")
            } else {
                err(
                    1659,
                    format!(
                        "Field '{}' is of a not allowed type for this type of partitioning",
                        col.name
                    ),
                )
            });
        }
        names.push(col.name.clone());
    }
    // KEY () keeps its empty list: SHOW CREATE TABLE prints `KEY ()`.
    if columns.is_empty() {
        return Ok((String::new(), Vec::new()));
    }
    Ok((String::new(), names))
}

fn strip_nested(e: &ast::Expr) -> &ast::Expr {
    match e {
        ast::Expr::Nested(x) => strip_nested(x),
        e => e,
    }
}

/// Prints a partitioning expression as MySQL's SHOW CREATE TABLE does
/// (identifiers quoted, functions in lower case, operations parenthesised
/// inside other operations),
/// refusing what a partitioning function may not contain (1564); collects
/// the columns it reads.
fn print_expr(e: &ast::Expr, table: &Table, cols: &mut Vec<usize>, top: bool) -> Result<String> {
    use ast::{BinaryOperator as B, Expr as E, UnaryOperator as U};
    Ok(match e {
        E::Identifier(id) => column(&id.value, table, cols)?,
        E::CompoundIdentifier(parts) => {
            let last = parts.last().ok_or_else(not_allowed)?;
            column(&last.value, table, cols)?
        }
        E::Value(v) => match &v.value {
            ast::Value::Number(n, _) if n.bytes().all(|b| b.is_ascii_digit()) => n.clone(),
            _ => return Err(not_allowed()),
        },
        E::Nested(x) => print_expr(x, table, cols, top)?,
        E::UnaryOp { op: U::Minus, expr } => format!("-{}", print_expr(expr, table, cols, false)?),
        E::UnaryOp { op: U::Plus, expr } => print_expr(expr, table, cols, top)?,
        E::BinaryOp { left, op, right } => {
            let op = match op {
                B::Plus => "+",
                B::Minus => "-",
                B::Multiply => "*",
                B::Modulo => "%",
                B::MyIntegerDivide => "DIV",
                _ => return Err(not_allowed()),
            };
            let inner = format!(
                "{} {op} {}",
                print_expr(left, table, cols, false)?,
                print_expr(right, table, cols, false)?
            );
            // Parenthesised inside another operation, not at the top (as
            // MariaDB prints `a` + 1).
            if top {
                inner
            } else {
                format!("({inner})")
            }
        }
        E::Ceil { expr, .. } => format!("ceiling({})", print_expr(expr, table, cols, true)?),
        E::Floor { expr, .. } => format!("floor({})", print_expr(expr, table, cols, true)?),
        E::Extract { field, expr, .. } => format!(
            "extract({} from {})",
            field.to_string().to_ascii_lowercase(),
            print_expr(expr, table, cols, true)?
        ),
        E::Function(f) => {
            let name = f.name.to_string().to_ascii_uppercase();
            if !ALLOWED_FUNCTIONS.contains(&name.as_str()) {
                return Err(not_allowed());
            }
            let ast::FunctionArguments::List(list) = &f.args else {
                return Err(not_allowed());
            };
            let mut args = Vec::with_capacity(list.args.len());
            for a in &list.args {
                match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => {
                        args.push(print_expr(x, table, cols, true)?)
                    }
                    _ => return Err(not_allowed()),
                }
            }
            // MySQL prints a function by its item's name: CEIL is
            // ceiling, DAY is dayofmonth.
            let name = match name.as_str() {
                "CEIL" => "CEILING".into(),
                "DAY" => "DAYOFMONTH".into(),
                _ => name,
            };
            format!("{}({})", name.to_ascii_lowercase(), args.join(","))
        }
        _ => return Err(not_allowed()),
    })
}

fn column(name: &str, table: &Table, cols: &mut Vec<usize>) -> Result<String> {
    let c = table.column(name).ok_or_else(|| Error::UnknownColumn {
        column: name.to_string(),
        context: "partition function".into(),
    })?;
    if !cols.contains(&c) {
        cols.push(c);
    }
    Ok(format!(
        "`{}`",
        table.def.columns[c].name.replace('`', "``")
    ))
}

/// A context for constant bound expressions (no session: no variables, no
/// parameters).
struct Constants;

impl EvalContext for Constants {
    fn params(&self) -> &[Value] {
        &[]
    }
    fn sys_var(&self, name: &str) -> Result<Value> {
        Err(Error::Syntax(format!("@@{name} in a partition bound")))
    }
    fn user_var(&self, _name: &str) -> Value {
        Value::Null
    }
    fn session_fact(&self, _f: Func) -> Value {
        Value::Null
    }
    fn now(&self) -> chrono::NaiveDateTime {
        chrono::NaiveDateTime::default()
    }
    fn warn(&self, _code: u16, _message: &str) {}
}

/// A bound value: MAXVALUE, or a constant expression evaluated.
fn bound_value(
    b: &BoundSpec,
    part: &Partitioning,
    pname: &str,
    col: Option<&SqlType>,
) -> Result<BoundValue> {
    let e = match b {
        BoundSpec::MaxValue => return Ok(BoundValue::MaxValue),
        BoundSpec::Expr(e) => e,
    };
    let bound = crate::plan::bind::Binder::new(None, None)
        .bind(e)
        .map_err(|_| err(1487, "Expression in RANGE/LIST VALUES must be constant"))?;
    if !bound.is_constant() {
        return Err(err(
            1487,
            "Expression in RANGE/LIST VALUES must be constant",
        ));
    }
    let v = eval(
        &bound,
        &Env {
            row: &[],
            aggs: &[],
            ctx: &Constants,
        },
    )?;
    if v.is_null() {
        return Ok(BoundValue::Null);
    }
    if !part.method.by_columns() {
        return match v {
            Value::Int(i) => Ok(BoundValue::Int(i)),
            Value::UInt(u) => Ok(BoundValue::Int(i64::try_from(u).unwrap_or(i64::MAX))),
            _ => Err(err(
                1697,
                format!("VALUES value for partition '{pname}' must have type INT"),
            )),
        };
    }
    let ty = col
        .copied()
        .ok_or_else(|| grammar("Inconsistency in usage of column lists for partitioning"))?;
    let wrong = || err(1654, "Partition column values of incorrect type");
    if ty.is_integer() {
        return match v {
            Value::Int(i) => Ok(BoundValue::Int(i)),
            Value::UInt(u) => Ok(BoundValue::Int(i64::try_from(u).unwrap_or(i64::MAX))),
            _ => Err(wrong()),
        };
    }
    match v {
        Value::Bytes(b) => {
            let s = String::from_utf8(b.to_vec()).map_err(|_| wrong())?;
            if matches!(ty, SqlType::Date | SqlType::DateTime(_))
                && crate::types::coerce(Value::str(&s), ty, "", 0).is_err()
            {
                return Err(wrong());
            }
            Ok(BoundValue::Text(s))
        }
        _ => Err(wrong()),
    }
}

/// One PARTITION definition, its values evaluated.
fn definition(part: &Partitioning, p: &PartitionSpecDef, table: &Table) -> Result<PartitionDef> {
    let method = part.method;
    let col_types: Vec<SqlType> = part
        .columns
        .iter()
        .filter_map(|c| table.column(c).map(|i| table.def.columns[i].ty))
        .collect();
    let kind = if method.is_range() { "RANGE" } else { "LIST" };
    let values = match (&p.values, method) {
        (ValuesSpec::None, m) if m.is_hash() => PartitionValues::Bucket,
        (ValuesSpec::None, m) => {
            let what = if m.is_range() { "LESS THAN" } else { "IN" };
            return Err(err(
                1479,
                format!("Syntax error: {kind} PARTITIONING requires definition of VALUES {what} for each partition"),
            ));
        }
        (ValuesSpec::LessThan(_), m) if !m.is_range() => {
            return Err(err(
                1480,
                "Only RANGE PARTITIONING can use VALUES LESS THAN in partition definition",
            ))
        }
        (ValuesSpec::In(_), m) if !m.is_list() => {
            return Err(err(
                1480,
                "Only LIST PARTITIONING can use VALUES IN in partition definition",
            ))
        }
        (ValuesSpec::LessThan(bounds), _) => {
            if method.by_columns() && bounds.len() != part.columns.len() {
                return Err(grammar(
                    "Inconsistency in usage of column lists for partitioning",
                ));
            }
            let mut out = Vec::with_capacity(bounds.len());
            for (i, b) in bounds.iter().enumerate() {
                let v = bound_value(b, part, &p.name, col_types.get(i))?;
                if v == BoundValue::Null {
                    return Err(err(
                        1566,
                        "Not allowed to use NULL value in VALUES LESS THAN",
                    ));
                }
                out.push(v);
            }
            PartitionValues::LessThan(out)
        }
        (ValuesSpec::In(list), _) => {
            let mut out = Vec::with_capacity(list.len());
            for tuple in list {
                if method.by_columns() && tuple.len() != part.columns.len() {
                    return Err(grammar(
                        "Inconsistency in usage of column lists for partitioning",
                    ));
                }
                if !method.by_columns() && tuple.len() != 1 {
                    return Err(grammar(
                        "Inconsistency in usage of column lists for partitioning",
                    ));
                }
                let mut t = Vec::with_capacity(tuple.len());
                for (i, b) in tuple.iter().enumerate() {
                    let v = bound_value(b, part, &p.name, col_types.get(i))?;
                    if v == BoundValue::MaxValue {
                        return Err(Error::Syntax("MAXVALUE in VALUES IN".into()));
                    }
                    t.push(v);
                }
                out.push(t);
            }
            PartitionValues::In(out)
        }
    };
    Ok(PartitionDef {
        name: p.name.clone(),
        values,
        comment: p.comment.clone(),
        data_directory: p.data_directory.clone(),
        index_directory: p.index_directory.clone(),
        subpartitions: p.subpartitions.clone(),
    })
}

/// SUBPARTITION BY, checked.
fn subpartitioning(spec: &PartitionSpec, sub: &SubSpec, table: &Table) -> Result<SubPartitioning> {
    if spec.method.is_hash() {
        return Err(err(
            1500,
            "It is only possible to mix RANGE/LIST partitioning with HASH/KEY partitioning for subpartitioning",
        ));
    }
    let (expr, columns) = function(sub.method, sub.expr.as_ref(), &sub.columns, table)?;
    let named: Vec<usize> = spec
        .partitions
        .iter()
        .map(|p| p.subpartitions.len())
        .collect();
    let count = if named.iter().all(|&n| n == 0) {
        let n = sub.count.unwrap_or(1);
        if n == 0 {
            return Err(err(
                1504,
                "Number of subpartitions = 0 is not an allowed value",
            ));
        }
        n as u32
    } else {
        if named.contains(&0) {
            return Err(err(
                1483,
                "Must define subpartitions on all partitions if on one partition",
            ));
        }
        let n = named[0];
        if named.iter().any(|&k| k != n) || sub.count.is_some_and(|c| c as usize != n) {
            return Err(err(
                1485,
                "Wrong number of subpartitions defined, mismatch with previous setting",
            ));
        }
        n as u32
    };
    Ok(SubPartitioning {
        method: sub.method,
        expr,
        columns,
        count,
        // SHOW CREATE TABLE prints SUBPARTITIONS n only when it was given.
        by_count: named.iter().all(|&n| n == 0) && sub.count.is_some(),
    })
}

/// The column positions the partitioning functions read.
fn function_columns(part: &Partitioning, def: &TableDef) -> Vec<usize> {
    let table = Table::new(def.clone());
    let mut cols = Vec::new();
    let mut add = |expr: &str, names: &[String], method: PartitionMethod| {
        if method.by_columns() {
            if names.is_empty() {
                cols.extend(def.primary_key.iter().copied());
            }
            cols.extend(names.iter().filter_map(|n| table.column(n)));
        } else {
            // Column names are the quoted identifiers of the printed form.
            for (i, piece) in expr.split('`').enumerate() {
                if i % 2 == 1 {
                    if let Some(c) = table.column(piece) {
                        cols.push(c);
                    }
                }
            }
        }
    };
    add(&part.expr, &part.columns, part.method);
    if let Some(sub) = &part.sub {
        add(&sub.expr, &sub.columns, sub.method);
    }
    cols.sort_unstable();
    cols.dedup();
    cols
}

/// The rules that hold between partitions and with the table's keys (see
/// the module's table): run on every new or changed partitioning.
pub fn check(part: &Partitioning, def: &TableDef) -> Result<()> {
    let subs = part.sub.as_ref().map_or(1, |s| s.count.max(1) as usize);
    if part.partitions.len() * subs > MAX_PARTITIONS {
        return Err(too_many());
    }
    if part.partitions.is_empty() {
        return Err(err(
            1504,
            "Number of partitions = 0 is not an allowed value",
        ));
    }
    // Names: partitions and subpartitions together.
    let mut names: Vec<&str> = Vec::new();
    for p in &part.partitions {
        for n in std::iter::once(p.name.as_str()).chain(p.subpartitions.iter().map(String::as_str))
        {
            if names.iter().any(|x| x.eq_ignore_ascii_case(n)) {
                return Err(err(1517, format!("Duplicate partition name {n}")));
            }
            names.push(n);
        }
    }
    if part.method.is_range() {
        let last = part.partitions.len() - 1;
        for (i, p) in part.partitions.iter().enumerate() {
            let PartitionValues::LessThan(b) = &p.values else {
                continue;
            };
            if !part.method.by_columns() && b.first() == Some(&BoundValue::MaxValue) && i != last {
                return Err(err(
                    1481,
                    "MAXVALUE can only be used in last partition definition",
                ));
            }
            if i > 0 {
                let PartitionValues::LessThan(prev) = &part.partitions[i - 1].values else {
                    continue;
                };
                if tuple_cmp(prev, b) != Ordering::Less {
                    return Err(err(
                        1493,
                        "VALUES LESS THAN value must be strictly increasing for each partition",
                    ));
                }
            }
        }
    }
    if part.method.is_list() {
        let mut seen: Vec<&Vec<BoundValue>> = Vec::new();
        for p in &part.partitions {
            if let PartitionValues::In(list) = &p.values {
                for t in list {
                    if seen.iter().any(|s| tuple_cmp(s, t) == Ordering::Equal) {
                        return Err(err(
                            1495,
                            "Multiple definition of same constant in list partitioning",
                        ));
                    }
                    seen.push(t);
                }
            }
        }
    }
    check_keys(part, def)
}

/// 1506: InnoDB's partitioned tables neither hold nor are referenced by
/// foreign keys.
pub fn foreign_keys_refused() -> Error {
    err(
        1506,
        "Foreign keys are not yet supported in conjunction with partitioning",
    )
}

/// Every unique key must include every column of the partitioning functions
/// (1503), and a partitioned table has no foreign keys (1506).
pub fn check_keys(part: &Partitioning, def: &TableDef) -> Result<()> {
    if !def.foreign_keys.is_empty() {
        return Err(foreign_keys_refused());
    }
    // Every column the functions name is still there (DROP COLUMN).
    let table = Table::new(def.clone());
    let mut functions = vec![(part.method, &part.expr, &part.columns)];
    if let Some(sub) = &part.sub {
        functions.push((sub.method, &sub.expr, &sub.columns));
    }
    for (method, expr, columns) in functions {
        for n in columns {
            if table.column(n).is_none() {
                return Err(Error::UnknownColumn {
                    column: n.clone(),
                    context: "partition function".into(),
                });
            }
        }
        if !method.by_columns() {
            crate::plan::partition::bind_expr(&table, expr).map_err(|e| match e {
                Error::UnknownColumn { column, .. } => Error::UnknownColumn {
                    column,
                    context: "partition function".into(),
                },
                e => e,
            })?;
        }
    }
    let cols = function_columns(part, def);
    if !def.primary_key.is_empty() && cols.iter().any(|c| !def.primary_key.contains(c)) {
        return Err(err(
            1503,
            "A PRIMARY KEY must include all columns in the table's partitioning function",
        ));
    }
    for ix in def.indexes.iter().filter(|i| i.unique) {
        if cols.iter().any(|c| !ix.columns.contains(c)) {
            return Err(err(
                1503,
                "A UNIQUE INDEX must include all columns in the table's partitioning function",
            ));
        }
    }
    Ok(())
}

/// Compares two bound tuples: MAXVALUE above everything, NULL below.
fn tuple_cmp(a: &[BoundValue], b: &[BoundValue]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let o = match (x, y) {
            (BoundValue::MaxValue, BoundValue::MaxValue) => Ordering::Equal,
            (BoundValue::MaxValue, _) => Ordering::Greater,
            (_, BoundValue::MaxValue) => Ordering::Less,
            (BoundValue::Null, BoundValue::Null) => Ordering::Equal,
            (BoundValue::Null, _) => Ordering::Less,
            (_, BoundValue::Null) => Ordering::Greater,
            _ => compare(&x.value(), &y.value()).unwrap_or(Ordering::Equal),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

fn no_partition_mgmt() -> Error {
    err(
        1505,
        "Partition management on a not partitioned table is not possible",
    )
}

/// The table's partitioning, or 1505 for an unpartitioned table.
pub fn current(def: &TableDef) -> Result<&Partitioning> {
    def.partitioning.as_ref().ok_or_else(no_partition_mgmt)
}

/// Positions of the named partitions; an unknown one is 1507 "Error in list
/// of partitions to `verb`" (MySQL 8's wording; MariaDB says "Wrong partition
/// name or partition list").
pub fn positions(part: &Partitioning, names: &[String], verb: &str) -> Result<Vec<usize>> {
    let mut out = Vec::with_capacity(names.len());
    for n in names {
        let i = part
            .position(n)
            .ok_or_else(|| err(1507, format!("Error in list of partitions to {verb}")))?;
        if !out.contains(&i) {
            out.push(i);
        }
    }
    Ok(out)
}

/// ADD PARTITION.
pub fn add(table: &Table, defs: &[PartitionSpecDef], count: Option<u64>) -> Result<Partitioning> {
    let cur = current(&table.def)?;
    let mut next = cur.clone();
    next.default_count = false;
    if let Some(n) = count {
        if !cur.method.is_hash() {
            return Err(err(
                1492,
                format!(
                    "For {} partitions each partition must be defined",
                    if cur.method.is_range() {
                        "RANGE"
                    } else {
                        "LIST"
                    }
                ),
            ));
        }
        if n == 0 {
            return Err(err(1514, "At least one partition must be added"));
        }
        let base = next.partitions.len();
        for i in 0..n as usize {
            let mut k = base + i;
            while next.position(&format!("p{k}")).is_some() {
                k += 1;
            }
            next.partitions.push(PartitionDef::bucket(format!("p{k}")));
        }
    } else {
        if defs.is_empty() {
            return Err(err(1514, "At least one partition must be added"));
        }
        for d in defs {
            let p = definition(&next, d, table)?;
            next.partitions.push(p);
        }
        if cur.method.is_hash() {
            next.by_count = false;
        }
    }
    check(&next, &table.def)?;
    Ok(next)
}

/// DROP PARTITION: the new definition and the dropped positions.
pub fn drop(table: &Table, names: &[String]) -> Result<(Partitioning, Vec<usize>)> {
    let cur = current(&table.def)?;
    if cur.method.is_hash() {
        return Err(err(
            1512,
            "DROP PARTITION can only be used on RANGE/LIST partitions",
        ));
    }
    let gone = positions(cur, names, "DROP")?;
    if gone.len() >= cur.partitions.len() {
        return Err(err(
            1508,
            "Cannot remove all partitions, use DROP TABLE instead",
        ));
    }
    let mut next = cur.clone();
    next.partitions = cur
        .partitions
        .iter()
        .enumerate()
        .filter(|(i, _)| !gone.contains(i))
        .map(|(_, p)| p.clone())
        .collect();
    Ok((next, gone))
}

/// COALESCE PARTITION n: the last n buckets go.
pub fn coalesce(table: &Table, n: u64) -> Result<Partitioning> {
    let cur = current(&table.def)?;
    if !cur.method.is_hash() {
        return Err(err(
            1509,
            "COALESCE PARTITION can only be used on HASH/KEY partitions",
        ));
    }
    if n == 0 {
        return Err(err(1515, "At least one partition must be coalesced"));
    }
    if n as usize >= cur.partitions.len() {
        return Err(err(
            1508,
            "Cannot remove all partitions, use DROP TABLE instead",
        ));
    }
    let mut next = cur.clone();
    next.default_count = false;
    next.partitions.truncate(cur.partitions.len() - n as usize);
    Ok(next)
}

/// REORGANIZE PARTITION names INTO (definitions).
pub fn reorganize(
    table: &Table,
    from: &[String],
    into: &[PartitionSpecDef],
) -> Result<Partitioning> {
    let cur = current(&table.def)?;
    if from.is_empty() {
        // A rebuild of an auto-partitioned HASH / KEY table: nothing changes.
        if !cur.method.is_hash() || !cur.by_count {
            return Err(err(
                1511,
                "REORGANIZE PARTITION without parameters can only be used on auto-partitioned tables using HASH PARTITIONs",
            ));
        }
        return Ok(cur.clone());
    }
    if from.len() > cur.partitions.len() {
        return Err(err(
            1516,
            "More partitions to reorganize than there are partitions",
        ));
    }
    let mut pos = positions(cur, from, "REORGANIZE")?;
    pos.sort_unstable();
    if pos.windows(2).any(|w| w[1] != w[0] + 1) {
        return Err(err(
            1519,
            "When reorganizing a set of partitions they must be in consecutive order",
        ));
    }
    let mut new_defs = Vec::with_capacity(into.len());
    for d in into {
        new_defs.push(definition(cur, d, table)?);
    }
    if cur.method.is_hash() && new_defs.len() != pos.len() {
        return Err(err(
            1510,
            "REORGANIZE PARTITION can only be used to reorganize partitions not to change their numbers",
        ));
    }
    let (first, last) = (pos[0], pos[pos.len() - 1]);
    if cur.method.is_range() {
        // The reorganised set must end where it ended, except that the last
        // partition of the table may extend its range.
        let end = |p: &PartitionDef| match &p.values {
            PartitionValues::LessThan(b) => b.clone(),
            _ => Vec::new(),
        };
        let old_end = end(&cur.partitions[last]);
        let new_end = new_defs.last().map(end).unwrap_or_default();
        let o = tuple_cmp(&new_end, &old_end);
        let is_last = last == cur.partitions.len() - 1;
        if o == Ordering::Less || (o == Ordering::Greater && !is_last) {
            return Err(err(
                1520,
                "Reorganize of range partitions cannot change total ranges except for last partition where it can extend the range",
            ));
        }
    }
    let mut next = cur.clone();
    next.partitions.splice(first..=last, new_defs);
    if cur.method.is_hash() {
        next.by_count = false;
    }
    check(&next, &table.def)?;
    Ok(next)
}
