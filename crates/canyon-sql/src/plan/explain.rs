//! EXPLAIN: a planned statement shown as MySQL 8 shows it, without running it.
//!
//! Two forms, both computed from the [`Plan`] alone (nothing is read, locked or
//! written; placeholders print as `?`):
//!
//! - **Traditional** (`EXPLAIN stmt`, `EXPLAIN FORMAT=TRADITIONAL stmt`): MySQL's
//!   twelve columns, one row per join step *in execution order* — so the join
//!   order the planner chose is the row order — then one block of rows per
//!   derived table (`DERIVED`, referred to as `<derivedN>` by the outer row),
//!   per operand of a set operation (`DERIVED` for the first, `UNION`,
//!   `INTERSECT` or `EXCEPT` for the others; the row reading their result says
//!   `<unionN,M>`: unlike MySQL, which adds a `UNION RESULT` row, the query's
//!   own block reads it) and per subquery (`SUBQUERY`, or `DEPENDENT SUBQUERY`
//!   when correlated).
//! - **Tree** (`EXPLAIN FORMAT=TREE stmt`): one row, one column, an indented
//!   iterator tree in MySQL 8's wording (`-> Nested loop inner join`,
//!   `-> Single-row index lookup on c using PRIMARY (c_w_id=w.w_id)`,
//!   `-> Filter: (...)`, `-> Table scan on t`, `-> Sort: ...`). It is the form the
//!   planner's golden tests (`tests/plans/*.plan`) print. Nodes with no MySQL
//!   counterpart: `Filter (once)` (conditions that read no table of the block,
//!   checked before the join starts), `Hash lookup on t` (the first table of a
//!   subquery read once per statement into a hash table and probed per run),
//!   `Group (hash) by` and `Deduplicate (hash)` (Canyon groups and removes
//!   duplicates in hash tables). Single-table statements print column names
//!   unqualified, everything else qualifies them with the table's alias.
//!
//! # How the columns are derived (MySQL 8.0 reference manual, 10.8.2 "EXPLAIN
//! Output Format")
//! - `type`: `ALL` for a full scan; `const` for an equality on every column of
//!   the primary key or of a UNIQUE index with constants (parameters count as
//!   constants); `eq_ref` for the same with a column of an earlier step
//!   (`Expr::Bound`); `ref` for an equality on a prefix or on a non-unique index;
//!   `range` for bounds, IN lists, OR-ed ranges and row-value IN (several key
//!   ranges). A materialised hash-join step keeps the type of the one read that
//!   fills its hash table (`ALL` when that read is a scan) and says
//!   `Using join buffer (hash join)` in Extra.
//! - `possible_keys`: only the chosen key. The access-path chooser keeps its best
//!   candidate only; listing the others would mean planning twice.
//! - `key_len`: the bytes MySQL would report for the key parts the read uses:
//!   the column's storage size (INT 4, BIGINT 8, DATE 3, DATETIME 5, DECIMAL
//!   packed 4 bytes per 9 digits), `n * 4` for CHAR(n) and `n * 4 + 2` for
//!   VARCHAR(n) (utf8mb4), `n` / `n + 2` for BINARY / VARBINARY, 3072 + 2 for a
//!   TEXT / BLOB part (Canyon indexes the whole value; MySQL would need a prefix),
//!   plus 1 for a nullable column.
//! - `ref`: per key part, `const`, the `db.table.column` of a bound column, or
//!   `func` for an expression over bound columns.
//! - `rows`: the planner's estimate from the table's statistics
//!   ([`crate::plan::access::estimate_rows`]); for a table never analysed, 1 for
//!   `const` / `eq_ref` and NULL otherwise. `filtered` is always 100.00 (no
//!   selectivity estimates for conditions outside the key).
//! - `Extra`: `Using where` when a condition is checked on the rows the access
//!   path returns beyond what the key ranges already enforce; `Using join buffer
//!   (hash join)`; on a block's first row `Using temporary` (GROUP BY, DISTINCT)
//!   and `Using filesort` (ORDER BY that the access path does not deliver);
//!   `Impossible WHERE` for a constant-false WHERE; `No tables used`. `Using
//!   index` never appears: Canyon has no covering-index reads.
//!
//! Subquery and derived-table ids follow the order of the plan (select list,
//! then FROM, then the other clauses), which matches MySQL's textual numbering
//! for the usual shapes.
//!
//! What this module does not do: EXPLAIN ANALYZE (it would execute) and
//! FORMAT=JSON are refused with 1235; there is no cost column in the tree form.

use crate::catalog::{ColumnDef, Table};
use crate::expr::functions::Func;
use crate::expr::{eval, AggCall, AggFunc, BinOp, Env, EvalContext, Expr, SubqueryKind};
use crate::plan::access::{Access, RangeSpec, Target};
use crate::plan::select::{SelectPlan, SourceKind, Step};
use crate::plan::{OnDuplicate, Plan, RowOrder};
use crate::types::result::{Column, QueryResult};
use crate::types::value::Value;
use crate::types::{expr_column, ExprKind, SqlType};
use canyon_common::{Error, Result};
use rust_decimal::Decimal;
use sqlparser::ast;
use std::collections::HashMap;
use std::sync::Arc;

/// The output form asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// MySQL's tabular EXPLAIN (the default).
    Traditional,
    /// `FORMAT=TREE`: the indented iterator tree.
    Tree,
}

impl Format {
    /// The form named by `EXPLAIN [FORMAT=...]`; JSON and the others are refused.
    pub fn from_ast(f: Option<&ast::AnalyzeFormatKind>) -> Result<Format> {
        let f = match f {
            None => return Ok(Format::Traditional),
            Some(ast::AnalyzeFormatKind::Keyword(f) | ast::AnalyzeFormatKind::Assignment(f)) => f,
        };
        match f {
            ast::AnalyzeFormat::TRADITIONAL => Ok(Format::Traditional),
            ast::AnalyzeFormat::TREE => Ok(Format::Tree),
            other => Err(Error::Unsupported(format!("EXPLAIN FORMAT={other}"))),
        }
    }
}

/// The EXPLAIN result set of a plan in the given form.
pub fn explain(plan: &Plan, format: Format) -> QueryResult {
    match format {
        Format::Tree => QueryResult::Rows {
            columns: Arc::from(vec![expr_column("EXPLAIN", ExprKind::String)]),
            rows: vec![vec![Value::str(&tree(plan))]],
            warnings: 0,
        },
        Format::Traditional => QueryResult::Rows {
            columns: traditional_columns(),
            rows: traditional(plan),
            warnings: 0,
        },
    }
}

/// The twelve columns of MySQL's traditional EXPLAIN.
fn traditional_columns() -> Arc<[Column]> {
    let cols: Vec<Column> = [
        ("id", ExprKind::Int),
        ("select_type", ExprKind::String),
        ("table", ExprKind::String),
        ("partitions", ExprKind::String),
        ("type", ExprKind::String),
        ("possible_keys", ExprKind::String),
        ("key", ExprKind::String),
        ("key_len", ExprKind::String),
        ("ref", ExprKind::String),
        ("rows", ExprKind::Int),
        ("filtered", ExprKind::Decimal(2)),
        ("Extra", ExprKind::String),
    ]
    .iter()
    .map(|(n, k)| expr_column(n, *k))
    .collect();
    cols.into()
}

// ----------------------------------------------------------------------------------
// Names: what a frame position, an aggregate or a subquery prints as
// ----------------------------------------------------------------------------------

/// Block ids (MySQL's `id` column and `select #N`), by plan address.
type Ids = HashMap<usize, usize>;

fn addr(p: &SelectPlan) -> usize {
    p as *const SelectPlan as usize
}

/// How the expressions of one query block print.
struct Names<'a> {
    /// Display name of each frame position.
    cols: Vec<String>,
    /// `db.table.column` of each frame position (the traditional `ref` column).
    refs: Vec<String>,
    /// The block's aggregates (`Expr::Agg`).
    aggs: &'a [AggCall],
    /// Block ids of subqueries.
    ids: &'a Ids,
}

impl Names<'_> {
    fn col(&self, i: usize) -> String {
        self.cols
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("<column {i}>"))
    }
}

/// The names of a block's frame: the enclosing frame's (for a correlated
/// subquery), then each source's columns, qualified by the source's name when
/// `qualify` (any statement with more than one table reference).
fn frame_names(
    plan: &SelectPlan,
    outer: (&[String], &[String]),
    qualify: bool,
) -> (Vec<String>, Vec<String>) {
    let mut cols: Vec<String> = outer.0.iter().take(plan.outer_len).cloned().collect();
    let mut refs: Vec<String> = outer.1.iter().take(plan.outer_len).cloned().collect();
    for s in &plan.sources {
        cols.resize(s.offset, "?".into());
        refs.resize(s.offset, "?".into());
        for i in 0..s.width {
            let (db, name) = match &s.kind {
                SourceKind::Table(t) => (
                    t.def.db.as_str(),
                    t.def.columns.get(i).map(|c| c.name.clone()),
                ),
                SourceKind::Derived(d) => ("", d.columns.get(i).map(|c| c.name.clone())),
                SourceKind::SetOp(sp) => ("", sp.columns.get(i).map(|c| c.name.clone())),
                SourceKind::System(sys) => (
                    crate::catalog::infoschema::NAME,
                    sys.table.columns().get(i).map(|c| c.0.to_string()),
                ),
            };
            let name = name.unwrap_or_else(|| format!("<column {i}>"));
            cols.push(if qualify {
                format!("{}.{name}", s.name)
            } else {
                name.clone()
            });
            refs.push(if db.is_empty() {
                format!("{}.{name}", s.name)
            } else {
                format!("{db}.{}.{name}", s.name)
            });
        }
    }
    (cols, refs)
}

/// Names for a single-table UPDATE / DELETE: the table's columns, unqualified.
fn table_names<'a>(t: &Table, ids: &'a Ids) -> Names<'a> {
    Names {
        cols: t.def.columns.iter().map(|c| c.name.clone()).collect(),
        refs: t
            .def
            .columns
            .iter()
            .map(|c| format!("{}.{}.{}", t.def.db, t.def.name, c.name))
            .collect(),
        aggs: &[],
        ids,
    }
}

/// A function's SQL name, from its variant name (`CharLength` -> `char_length`).
fn func_name(f: Func) -> String {
    let debug = format!("{f:?}");
    let base = debug.split('(').next().unwrap_or(&debug);
    let mut out = String::new();
    for (i, ch) in base.chars().enumerate() {
        if ch.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(ch.to_ascii_lowercase());
        } else {
            out.push(ch);
        }
    }
    out
}

fn literal(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Int(_) | Value::UInt(_) | Value::Double(_) | Value::Decimal(_) => v.to_display(),
        _ => format!("'{}'", v.to_display().replace('\'', "''")),
    }
}

fn agg_text(a: &AggCall, n: &Names<'_>) -> String {
    let name = match a.func {
        AggFunc::CountStar => return "count(*)".into(),
        AggFunc::Count => "count",
        AggFunc::Sum => "sum",
        AggFunc::Min => "min",
        AggFunc::Max => "max",
        AggFunc::Avg => "avg",
    };
    let arg = a.arg.as_ref().map(|e| expr(e, n)).unwrap_or_default();
    if a.distinct {
        format!("{name}(distinct {arg})")
    } else {
        format!("{name}({arg})")
    }
}

/// An expression as MySQL's tree EXPLAIN prints it: every operator
/// parenthesised, columns by name, placeholders as `?`, subqueries as
/// `(select #N)`.
fn expr(e: &Expr, n: &Names<'_>) -> String {
    let list = |items: &[Expr]| {
        items
            .iter()
            .map(|x| expr(x, n))
            .collect::<Vec<_>>()
            .join(",")
    };
    match e {
        Expr::Literal(v) => literal(v),
        Expr::Param(_) => "?".into(),
        Expr::Column(i) | Expr::Bound(i) => n.col(*i),
        Expr::Agg(i) => match n.aggs.get(*i) {
            Some(a) => agg_text(a, n),
            None => format!("<aggregate {i}>"),
        },
        Expr::SysVar(v) => format!("@@{v}"),
        Expr::UserVar(v) => format!("@{v}"),
        // A comparison's collation is implied by its operands, as MySQL
        // prints it.
        Expr::Collate(a, _) => expr(a, n),
        Expr::Neg(a) => format!("-({})", expr(a, n)),
        Expr::Not(a) => format!("(not({}))", expr(a, n)),
        Expr::BitNot(a) => format!("~({})", expr(a, n)),
        Expr::Binary(op, a, b) => format!("({} {} {})", expr(a, n), op.symbol(), expr(b, n)),
        Expr::IsNull(a, neg) => {
            format!("({} is {}null)", expr(a, n), if *neg { "not " } else { "" })
        }
        Expr::IsBool(a, t, neg) => format!(
            "({} is {}{})",
            expr(a, n),
            if *neg { "not " } else { "" },
            if *t { "true" } else { "false" }
        ),
        Expr::InList(a, l, neg) => format!(
            "({} {}in ({}))",
            expr(a, n),
            if *neg { "not " } else { "" },
            list(l)
        ),
        Expr::Between(a, lo, hi, neg) => format!(
            "({} {}between {} and {})",
            expr(a, n),
            if *neg { "not " } else { "" },
            expr(lo, n),
            expr(hi, n)
        ),
        Expr::Like(a, p, _, neg) => format!(
            "({} {}like {})",
            expr(a, n),
            if *neg { "not " } else { "" },
            expr(p, n)
        ),
        Expr::Case {
            operand,
            whens,
            otherwise,
        } => {
            let mut s = "(case".to_string();
            if let Some(o) = operand {
                s.push(' ');
                s.push_str(&expr(o, n));
            }
            for (c, r) in whens {
                s.push_str(&format!(" when {} then {}", expr(c, n), expr(r, n)));
            }
            if let Some(o) = otherwise {
                s.push_str(&format!(" else {}", expr(o, n)));
            }
            s.push_str(" end)");
            s
        }
        Expr::Func(f, args) => format!("{}({})", func_name(*f), list(args)),
        Expr::Row(items) => format!("({})", list(items)),
        Expr::Subquery(sq) => {
            let id = n
                .ids
                .get(&addr(&sq.plan))
                .map(|i| i.to_string())
                .unwrap_or_else(|| "?".into());
            match &sq.kind {
                SubqueryKind::Scalar => format!("(select #{id})"),
                SubqueryKind::Exists(neg) => {
                    format!("{}exists(select #{id})", if *neg { "not " } else { "" })
                }
                SubqueryKind::In(lhs, neg) => {
                    let l = if lhs.len() == 1 {
                        expr(&lhs[0], n)
                    } else {
                        format!("({})", list(lhs))
                    };
                    format!("({l} {}in (select #{id}))", if *neg { "not " } else { "" })
                }
            }
        }
    }
}

/// A condition made of AND-ed conjuncts, as one parenthesised expression.
fn conjunction(parts: &[&Expr], n: &Names<'_>) -> String {
    match parts {
        [one] => expr(one, n),
        _ => format!(
            "({})",
            parts
                .iter()
                .map(|c| expr(c, n))
                .collect::<Vec<_>>()
                .join(" and ")
        ),
    }
}

// ----------------------------------------------------------------------------------
// Block structure: ids, nested blocks, constant conditions
// ----------------------------------------------------------------------------------

/// Every expression of a block, in the order subqueries are numbered: select
/// list first, then conditions, grouping and the rest.
fn block_exprs(plan: &SelectPlan) -> Vec<&Expr> {
    let mut out: Vec<&Expr> = plan.projection.iter().collect();
    out.extend(plan.pre_filter.iter());
    for s in &plan.steps {
        out.extend(s.filter.iter());
        out.extend(s.post_filter.iter());
        out.extend(s.hash_keys.iter().map(|(_, e)| e));
    }
    out.extend(plan.filter.iter());
    out.extend(plan.group_by.iter());
    out.extend(plan.having.iter());
    out.extend(plan.aggs.iter().filter_map(|a| a.arg.as_ref()));
    out.extend(plan.limit.iter());
    out.extend(plan.offset.iter());
    out
}

/// The subqueries an expression holds (not those inside their plans), each once.
fn subqueries_of(e: &Expr, out: &mut Vec<(Arc<SelectPlan>, bool)>) {
    e.visit_columns(&mut |_| {}, &mut |sq| {
        if !out.iter().any(|(p, _)| Arc::ptr_eq(p, &sq.plan)) {
            out.push((sq.plan.clone(), sq.correlated));
        }
    });
}

/// A nested block of a query block: (plan, select_type).
enum Nested<'p> {
    Derived(&'p SelectPlan),
    /// An operand of a set operation, with its `select_type`.
    Operand(&'p SelectPlan, &'static str),
    Subquery(Arc<SelectPlan>, bool),
}

/// The blocks nested directly in `plan`, in numbering order: select-list
/// subqueries, derived tables in FROM order, then the other subqueries.
fn nested(plan: &SelectPlan) -> Vec<Nested<'_>> {
    let mut subs = Vec::new();
    for e in &plan.projection {
        subqueries_of(e, &mut subs);
    }
    let in_projection = subs.len();
    for e in block_exprs(plan) {
        subqueries_of(e, &mut subs);
    }
    let mut out: Vec<Nested<'_>> = Vec::new();
    let mut rest = subs.into_iter();
    for (p, c) in rest.by_ref().take(in_projection) {
        out.push(Nested::Subquery(p, c));
    }
    for s in &plan.sources {
        match &s.kind {
            SourceKind::Derived(d) => out.push(Nested::Derived(d)),
            // MySQL's select types: the first operand is the derived table,
            // the others are named after the operator.
            SourceKind::SetOp(sp) => {
                for (i, o) in sp.operands.iter().enumerate() {
                    out.push(Nested::Operand(
                        o,
                        if i == 0 { "DERIVED" } else { sp.op.name() },
                    ));
                }
            }
            _ => {}
        }
    }
    out.extend(rest.map(|(p, c)| Nested::Subquery(p, c)));
    out
}

/// Numbers `plan` and every block inside it, depth first.
fn number(plan: &SelectPlan, ids: &mut Ids) {
    if ids.contains_key(&addr(plan)) {
        return;
    }
    let next = ids.len() + 1;
    ids.insert(addr(plan), next);
    for n in nested(plan) {
        match n {
            Nested::Derived(d) | Nested::Operand(d, _) => number(d, ids),
            Nested::Subquery(p, _) => number(&p, ids),
        }
    }
}

/// A context that evaluates only literal-only expressions (see [`is_literal_only`]).
struct NoContext;

impl EvalContext for NoContext {
    fn params(&self) -> &[Value] {
        &[]
    }
    fn sys_var(&self, name: &str) -> Result<Value> {
        Err(Error::Internal(format!("@@{name} while explaining")))
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

/// Whether an expression reads nothing but literals (no parameter, variable,
/// function, column or subquery), so its value is known at EXPLAIN time.
fn is_literal_only(e: &Expr) -> bool {
    let leaf_ok = match e {
        Expr::Literal(_) => true,
        Expr::Param(_)
        | Expr::Column(_)
        | Expr::Bound(_)
        | Expr::Agg(_)
        | Expr::SysVar(_)
        | Expr::UserVar(_)
        | Expr::Func(..)
        | Expr::Subquery(_) => false,
        _ => true,
    };
    let mut ok = leaf_ok;
    if ok {
        e.for_each_child(&mut |c| ok &= is_literal_only(c));
    }
    ok
}

/// Whether a block's constant conditions are false whatever the parameters:
/// MySQL's "Impossible WHERE".
fn impossible(plan: &SelectPlan) -> bool {
    let Some(pre) = &plan.pre_filter else {
        return false;
    };
    pre.conjuncts().into_iter().any(|c| {
        if !is_literal_only(c) {
            return false;
        }
        let env = Env {
            row: &[],
            aggs: &[],
            ctx: &NoContext,
        };
        match eval(c, &env) {
            Ok(v) => match v {
                Value::Null => true,
                Value::Int(i) => i == 0,
                Value::UInt(u) => u == 0,
                Value::Double(d) => d == 0.0,
                Value::Decimal(d) => d.is_zero(),
                _ => false,
            },
            Err(_) => false,
        }
    })
}

// ----------------------------------------------------------------------------------
// Access paths: type, key, key_len, ref, residual conditions
// ----------------------------------------------------------------------------------

/// Bytes of one key part as MySQL's key_len counts them (see the module doc).
fn key_part_len(c: &ColumnDef) -> u32 {
    fn decimal_digits(d: u32) -> u32 {
        const REST: [u32; 9] = [0, 1, 1, 2, 2, 3, 3, 4, 4];
        (d / 9) * 4 + REST[(d % 9) as usize]
    }
    let base = match c.ty {
        SqlType::TinyInt { .. } => 1,
        SqlType::SmallInt { .. } => 2,
        SqlType::MediumInt { .. } => 3,
        SqlType::Int { .. } | SqlType::Float => 4,
        SqlType::BigInt { .. } | SqlType::Double => 8,
        SqlType::Decimal { precision, scale } => {
            let (p, s) = (precision as u32, scale as u32);
            decimal_digits(p.saturating_sub(s)) + decimal_digits(s)
        }
        SqlType::Char(n) => n * 4,
        SqlType::VarChar(n) => n * 4 + 2,
        SqlType::Binary(n) => n,
        SqlType::VarBinary(n) => n + 2,
        SqlType::Text(_) | SqlType::Blob(_) => 3072 + 2,
        SqlType::Date => 3,
        SqlType::DateTime => 5,
        SqlType::Timestamp => 4,
    };
    base + u32::from(c.nullable)
}

/// How many key parts a range uses: its equalities, plus the bounded column.
fn parts_used(r: &RangeSpec) -> usize {
    r.eq.len() + usize::from(r.lower.is_some() || r.upper.is_some())
}

/// The traditional columns that describe one table read.
struct AccessInfo {
    ty: &'static str,
    key: Option<String>,
    key_len: Option<String>,
    refs: Option<String>,
    rows: Option<i64>,
}

impl AccessInfo {
    /// A scan of rows materialised by the statement itself (a derived table,
    /// a set operation's result, generated catalog rows): no key, no estimate.
    fn materialized() -> AccessInfo {
        AccessInfo {
            ty: "ALL",
            key: None,
            key_len: None,
            refs: None,
            rows: None,
        }
    }
}

fn key_name(t: &Table, a: &Access) -> String {
    match a.target {
        Target::Primary => "PRIMARY".into(),
        Target::Index(i) => t
            .def
            .indexes
            .get(i)
            .map(|x| x.name.clone())
            .unwrap_or_else(|| format!("<index {i}>")),
    }
}

fn key_unique(t: &Table, a: &Access) -> bool {
    match a.target {
        Target::Primary => true,
        Target::Index(i) => t.def.indexes.get(i).is_some_and(|x| x.unique),
    }
}

fn reads_bound(e: &Expr) -> bool {
    let mut found = false;
    e.visit_columns(&mut |_| found = true, &mut |_| {});
    found
}

/// The kind of lookup a single equality-only range is.
#[derive(PartialEq)]
enum Lookup {
    Const,
    EqRef,
    Ref,
    Range,
    Scan,
}

fn lookup(t: &Table, a: &Access) -> Lookup {
    if a.full_scan || a.ranges.is_empty() {
        return Lookup::Scan;
    }
    match a.ranges.as_slice() {
        [r] if r.lower.is_none() && r.upper.is_none() => {
            if r.eq.len() == a.key_columns(t).len() && key_unique(t, a) {
                if r.eq.iter().any(reads_bound) {
                    Lookup::EqRef
                } else {
                    Lookup::Const
                }
            } else {
                Lookup::Ref
            }
        }
        _ => Lookup::Range,
    }
}

/// The planner's estimate of the rows a read returns (from the table's
/// statistics, see `crate::catalog::stats`); without statistics, 1 for a single-row
/// lookup and unknown (NULL) otherwise.
fn estimated_rows(t: &Table, a: &Access, kind: &Lookup) -> Option<i64> {
    match crate::plan::access::estimate_rows(t, a) {
        Some(r) => Some(r.round().max(1.0) as i64),
        None => matches!(kind, Lookup::Const | Lookup::EqRef).then_some(1),
    }
}

fn access_info(t: &Table, a: &Access, n: &Names<'_>) -> AccessInfo {
    let kind = lookup(t, a);
    if kind == Lookup::Scan {
        return AccessInfo {
            ty: "ALL",
            key: None,
            key_len: None,
            refs: None,
            rows: estimated_rows(t, a, &kind),
        };
    }
    let cols = a.key_columns(t);
    let used = a.ranges.iter().map(parts_used).max().unwrap_or(0);
    let key_len: u32 = cols
        .iter()
        .take(used)
        .filter_map(|&c| t.def.columns.get(c))
        .map(key_part_len)
        .sum();
    let refs = match kind {
        Lookup::Range | Lookup::Scan => None,
        _ => Some(
            a.ranges[0]
                .eq
                .iter()
                .map(|e| match e {
                    Expr::Bound(g) => n.refs.get(*g).cloned().unwrap_or_else(|| "func".into()),
                    e if reads_bound(e) => "func".into(),
                    _ => "const".into(),
                })
                .collect::<Vec<_>>()
                .join(","),
        ),
    };
    AccessInfo {
        ty: match kind {
            Lookup::Const => "const",
            Lookup::EqRef => "eq_ref",
            Lookup::Ref => "ref",
            Lookup::Range | Lookup::Scan => "range",
        },
        key: Some(key_name(t, a)),
        key_len: Some(key_len.to_string()),
        refs,
        rows: estimated_rows(t, a, &kind),
    }
}

/// A conjunct over the frame rewritten into the source's terms, as the planner
/// did before choosing the access path: the source's columns become local
/// positions, every other column `Bound`. `None` for a subquery.
fn localize(e: &Expr, offset: usize, width: usize) -> Option<Expr> {
    if e.has_subquery() {
        return None;
    }
    Some(e.rewrite(&|x| match x {
        Expr::Column(g) if *g >= offset && *g < offset + width => Some(Expr::Column(g - offset)),
        Expr::Column(g) => Some(Expr::Bound(*g)),
        _ => None,
    }))
}

/// Whether the key ranges already enforce a (localized) conjunct: it compares a
/// key column the ranges constrain with values that appear in the ranges. An
/// approximation on the safe side: a conjunct it does not recognise is shown.
fn enforced_by_access(c: &Expr, t: &Table, a: &Access) -> bool {
    if a.full_scan || a.ranges.is_empty() {
        return false;
    }
    let used = a.ranges.iter().map(parts_used).max().unwrap_or(0);
    let key = a.key_columns(t);
    let cols = &key[..used.min(key.len())];
    // A comparison's collation marker (see `Expr::Collate`) is not part of
    // the range bounds.
    fn bare(x: &Expr) -> &Expr {
        match x {
            Expr::Collate(inner, _) => inner,
            x => x,
        }
    }
    let appears = |v: &Expr| {
        let v = bare(v);
        a.ranges.iter().any(|r| {
            r.eq.contains(v)
                || r.lower.as_ref().is_some_and(|(x, _)| x == v)
                || r.upper.as_ref().is_some_and(|(x, _)| x == v)
        })
    };
    let on_key = |x: &Expr| matches!(bare(x), Expr::Column(i) if cols.contains(i));
    match c {
        Expr::Binary(
            BinOp::Eq | BinOp::NullSafeEq | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge,
            x,
            y,
        ) => {
            (on_key(x) && y.is_constant() && appears(y))
                || (on_key(y) && x.is_constant() && appears(x))
        }
        Expr::Between(x, lo, hi, false) => on_key(x) && appears(lo) && appears(hi),
        Expr::InList(x, list, false) => match x.as_ref() {
            Expr::Row(items) => {
                items.iter().all(on_key)
                    && list.iter().all(|r| match r {
                        Expr::Row(vals) => vals.iter().all(appears),
                        _ => false,
                    })
            }
            x => on_key(x) && list.iter().all(appears),
        },
        Expr::Binary(BinOp::Or, ..) => {
            let mut parts = Vec::new();
            fn walk<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
                if let Expr::Binary(BinOp::Or, a, b) = e {
                    walk(a, out);
                    walk(b, out);
                } else {
                    out.push(e);
                }
            }
            walk(c, &mut parts);
            parts.iter().all(|p| match p {
                Expr::Binary(BinOp::Eq, x, y) => {
                    (on_key(x) && appears(y)) || (on_key(y) && appears(x))
                }
                Expr::Between(x, lo, hi, false) => on_key(x) && appears(lo) && appears(hi),
                _ => false,
            })
        }
        _ => false,
    }
}

/// Whether a conjunct is one of the step's hash-join equalities.
fn is_hash_key(c: &Expr, step: &Step, offset: usize) -> bool {
    let Expr::Binary(BinOp::Eq, a, b) = c else {
        return false;
    };
    step.hash_keys.iter().any(|(col, probe)| {
        let own = Expr::Column(offset + col);
        let bare = |x: &Expr| match x {
            Expr::Collate(inner, _) => inner.as_ref().clone(),
            x => x.clone(),
        };
        (bare(a) == own && **b == *probe) || (bare(b) == own && **a == *probe)
    })
}

/// The conjuncts of a step's filter that its read does not already enforce.
fn residual<'p>(plan: &'p SelectPlan, step: &'p Step) -> Vec<&'p Expr> {
    let Some(f) = &step.filter else {
        return Vec::new();
    };
    let src = &plan.sources[step.source];
    f.conjuncts()
        .into_iter()
        .filter(|c| {
            if is_hash_key(c, step, src.offset) {
                return false;
            }
            match &src.kind {
                SourceKind::Table(t) => !localize(c, src.offset, src.width)
                    .is_some_and(|l| enforced_by_access(&l, t, &step.access)),
                SourceKind::Derived(_) | SourceKind::SetOp(_) | SourceKind::System(_) => true,
            }
        })
        .collect()
}

/// Whether a step is a hash join (materialised once, probed on equalities).
fn is_hash_step(step: &Step) -> bool {
    step.materialize && !step.hash_keys.is_empty()
}

// ----------------------------------------------------------------------------------
// Traditional format
// ----------------------------------------------------------------------------------

struct Explainer<'a> {
    ids: &'a Ids,
    qualify: bool,
    /// (id, row) in the order produced; sorted by id at the end.
    rows: Vec<(usize, Vec<Value>)>,
}

fn opt(s: Option<String>) -> Value {
    s.map(|s| Value::str(&s)).unwrap_or(Value::Null)
}

fn trad_row(
    id: usize,
    select_type: &str,
    table: Option<String>,
    info: Option<&AccessInfo>,
    extra: Vec<&str>,
) -> Vec<Value> {
    let extra = (!extra.is_empty()).then(|| extra.join("; "));
    match info {
        Some(i) => vec![
            Value::Int(id as i64),
            Value::str(select_type),
            opt(table),
            Value::Null,
            Value::str(i.ty),
            opt(i.key.clone()),
            opt(i.key.clone()),
            opt(i.key_len.clone()),
            opt(i.refs.clone()),
            i.rows.map(Value::Int).unwrap_or(Value::Null),
            Value::Decimal(Decimal::new(10000, 2)),
            opt(extra),
        ],
        None => vec![
            Value::Int(id as i64),
            Value::str(select_type),
            opt(table),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            opt(extra),
        ],
    }
}

impl Explainer<'_> {
    fn block(&mut self, plan: &SelectPlan, select_type: &str, outer: (&[String], &[String])) {
        let id = self.ids.get(&addr(plan)).copied().unwrap_or(0);
        let (cols, refs) = frame_names(plan, outer, self.qualify);
        let names = Names {
            cols,
            refs,
            aggs: &plan.aggs,
            ids: self.ids,
        };
        let sort = !plan.order_by.is_empty() && !plan.order_from_access;
        let temporary = (plan.grouped && !plan.group_by.is_empty()) || plan.distinct;
        if plan.sources.is_empty() {
            self.rows.push((
                id,
                trad_row(id, select_type, None, None, vec!["No tables used"]),
            ));
        } else if impossible(plan) {
            self.rows.push((
                id,
                trad_row(id, select_type, None, None, vec!["Impossible WHERE"]),
            ));
        } else {
            for (k, step) in plan.steps.iter().enumerate() {
                let src = &plan.sources[step.source];
                let mut extra = Vec::new();
                // A hash join's equalities are checked as conditions, as MySQL
                // says for its own hash joins.
                if !residual(plan, step).is_empty()
                    || step.post_filter.is_some()
                    || is_hash_step(step)
                {
                    extra.push("Using where");
                }
                if is_hash_step(step) {
                    extra.push("Using join buffer (hash join)");
                }
                if k == 0 && temporary {
                    extra.push("Using temporary");
                }
                if k == 0 && sort {
                    extra.push("Using filesort");
                }
                let (table, info) = match &src.kind {
                    SourceKind::Table(t) => {
                        (src.name.clone(), access_info(t, &step.access, &names))
                    }
                    SourceKind::Derived(d) => (
                        format!("<derived{}>", self.ids.get(&addr(d)).copied().unwrap_or(0)),
                        AccessInfo::materialized(),
                    ),
                    SourceKind::SetOp(sp) => (
                        format!(
                            "<{}{}>",
                            sp.op.name().to_ascii_lowercase(),
                            sp.operands
                                .iter()
                                .map(|o| self.ids.get(&addr(o)).copied().unwrap_or(0).to_string())
                                .collect::<Vec<_>>()
                                .join(",")
                        ),
                        AccessInfo::materialized(),
                    ),
                    SourceKind::System(_) => (src.name.clone(), AccessInfo::materialized()),
                };
                self.rows.push((
                    id,
                    trad_row(id, select_type, Some(table), Some(&info), extra),
                ));
            }
        }
        for n in nested(plan) {
            match n {
                Nested::Derived(d) => self.block(d, "DERIVED", (&[], &[])),
                Nested::Operand(d, select_type) => self.block(d, select_type, (&[], &[])),
                Nested::Subquery(p, correlated) => {
                    let st = if correlated {
                        "DEPENDENT SUBQUERY"
                    } else {
                        "SUBQUERY"
                    };
                    self.block(&p, st, (&names.cols, &names.refs));
                }
            }
        }
    }
}

/// The rows of the traditional EXPLAIN of a plan.
pub fn traditional(plan: &Plan) -> Vec<Vec<Value>> {
    let mut ids = Ids::new();
    match plan {
        Plan::Select(s) => {
            number(s, &mut ids);
            let mut ex = Explainer {
                ids: &ids,
                qualify: s.table.is_none(),
                rows: Vec::new(),
            };
            let st = if ids.len() > 1 { "PRIMARY" } else { "SIMPLE" };
            ex.block(s, st, (&[], &[]));
            let mut rows = ex.rows;
            rows.sort_by_key(|(id, _)| *id);
            rows.into_iter().map(|(_, r)| r).collect()
        }
        Plan::Insert(i) => {
            let st = match i.on_duplicate {
                OnDuplicate::Replace => "REPLACE",
                _ => "INSERT",
            };
            let info = AccessInfo {
                ty: "ALL",
                key: None,
                key_len: None,
                refs: None,
                rows: None,
            };
            let mut rows = vec![trad_row(
                1,
                st,
                Some(i.table.def.name.clone()),
                Some(&info),
                Vec::new(),
            )];
            // INSERT ... SELECT: the source's rows follow, with the same id
            // (as MySQL shows them).
            if let Some(q) = &i.select {
                number(q, &mut ids);
                let mut ex = Explainer {
                    ids: &ids,
                    qualify: q.table.is_none(),
                    rows: Vec::new(),
                };
                let st = if ids.len() > 1 { "PRIMARY" } else { "SIMPLE" };
                ex.block(q, st, (&[], &[]));
                let mut more = ex.rows;
                more.sort_by_key(|(id, _)| *id);
                rows.extend(more.into_iter().map(|(_, r)| r));
            }
            rows
        }
        Plan::Update(u) => {
            let mut exprs: Vec<&Expr> = u.assignments.iter().map(|(_, e)| e).collect();
            exprs.extend(u.filter.iter());
            dml_rows(
                "UPDATE",
                &u.table,
                &u.access,
                u.filter.as_ref(),
                &u.order,
                &exprs,
            )
        }
        Plan::Delete(d) => dml_rows(
            "DELETE",
            &d.table,
            &d.access,
            d.filter.as_ref(),
            &d.order,
            &d.filter.iter().collect::<Vec<_>>(),
        ),
    }
}

/// Numbers the subqueries of a single-table UPDATE / DELETE from 2 (the
/// statement itself is id 1).
fn number_dml(exprs: &[&Expr], ids: &mut Ids) -> Vec<(Arc<SelectPlan>, bool)> {
    // Address 0 is never a plan's: it holds id 1 for the statement.
    ids.insert(0, 1);
    let mut subs = Vec::new();
    for e in exprs {
        subqueries_of(e, &mut subs);
    }
    for (p, _) in &subs {
        number(p, ids);
    }
    subs
}

/// The WHERE conjuncts of a single-table UPDATE / DELETE its access path does
/// not enforce.
fn dml_residual<'f>(t: &Table, a: &Access, filter: Option<&'f Expr>) -> Vec<&'f Expr> {
    filter
        .map(|f| {
            f.conjuncts()
                .into_iter()
                .filter(|c| !enforced_by_access(c, t, a))
                .collect()
        })
        .unwrap_or_default()
}

fn dml_rows(
    st: &str,
    t: &Arc<Table>,
    a: &Access,
    filter: Option<&Expr>,
    order: &RowOrder,
    exprs: &[&Expr],
) -> Vec<Vec<Value>> {
    let mut ids = Ids::new();
    let subs = number_dml(exprs, &mut ids);
    let names = table_names(t, &ids);
    let info = access_info(t, a, &names);
    let mut extra = Vec::new();
    if !dml_residual(t, a, filter).is_empty() {
        extra.push("Using where");
    }
    if matches!(order, RowOrder::Sort(_)) {
        extra.push("Using filesort");
    }
    let mut ex = Explainer {
        ids: &ids,
        qualify: true,
        rows: vec![(
            1,
            trad_row(1, st, Some(t.def.name.clone()), Some(&info), extra),
        )],
    };
    for (p, correlated) in subs {
        let st = if correlated {
            "DEPENDENT SUBQUERY"
        } else {
            "SUBQUERY"
        };
        ex.block(&p, st, (&names.cols, &names.refs));
    }
    let mut rows = ex.rows;
    rows.sort_by_key(|(id, _)| *id);
    rows.into_iter().map(|(_, r)| r).collect()
}

// ----------------------------------------------------------------------------------
// Tree format
// ----------------------------------------------------------------------------------

/// One iterator of the tree.
struct Node {
    label: String,
    children: Vec<Node>,
}

impl Node {
    fn leaf(label: String) -> Node {
        Node {
            label,
            children: Vec::new(),
        }
    }

    fn over(label: String, child: Node) -> Node {
        Node {
            label,
            children: vec![child],
        }
    }

    fn render(&self, depth: usize, out: &mut String) {
        if !out.is_empty() {
            out.push('\n');
        }
        for _ in 0..depth {
            out.push_str("    ");
        }
        out.push_str("-> ");
        out.push_str(&self.label);
        for c in &self.children {
            c.render(depth + 1, out);
        }
    }
}

/// The read of a table through an access path, in MySQL's tree wording.
fn access_label(t: &Table, alias: &str, a: &Access, n: &Names<'_>, reverse: bool) -> String {
    let rev = if reverse { " (reverse)" } else { "" };
    if a.full_scan {
        return format!("Table scan on {alias}{rev}");
    }
    if a.ranges.is_empty() {
        return format!("Zero rows ({alias}: no key range)");
    }
    let key = key_name(t, a);
    let cols = a.key_columns(t);
    let col_name = |i: usize| {
        cols.get(i)
            .and_then(|&c| t.def.columns.get(c))
            .map(|c| c.name.clone())
            .unwrap_or_else(|| format!("<key part {i}>"))
    };
    let kind = lookup(t, a);
    if matches!(kind, Lookup::Const | Lookup::EqRef | Lookup::Ref) {
        let parts = a.ranges[0]
            .eq
            .iter()
            .enumerate()
            .map(|(i, e)| format!("{}={}", col_name(i), expr(e, n)))
            .collect::<Vec<_>>()
            .join(", ");
        let what = if kind == Lookup::Ref {
            "Index lookup"
        } else {
            "Single-row index lookup"
        };
        return format!("{what} on {alias} using {key} ({parts}){rev}");
    }
    let ranges = a
        .ranges
        .iter()
        .map(|r| {
            let mut conds: Vec<String> =
                r.eq.iter()
                    .enumerate()
                    .map(|(i, e)| format!("{} = {}", col_name(i), expr(e, n)))
                    .collect();
            let c = col_name(r.eq.len());
            let cmp = |incl: bool| if incl { "<=" } else { "<" };
            match (&r.lower, &r.upper) {
                (Some((lo, li)), Some((hi, hi_incl))) => conds.push(format!(
                    "{} {} {c} {} {}",
                    expr(lo, n),
                    cmp(*li),
                    cmp(*hi_incl),
                    expr(hi, n)
                )),
                (Some((lo, li)), None) => conds.push(format!("{} {} {c}", expr(lo, n), cmp(*li))),
                (None, Some((hi, hi_incl))) => {
                    conds.push(format!("{c} {} {}", cmp(*hi_incl), expr(hi, n)))
                }
                (None, None) => {}
            }
            format!("({})", conds.join(" AND "))
        })
        .collect::<Vec<_>>()
        .join(" OR ");
    format!("Index range scan on {alias} using {key} over {ranges}{rev}")
}

struct TreeBuilder<'a> {
    ids: &'a Ids,
    qualify: bool,
}

impl TreeBuilder<'_> {
    /// Adds a `Select #N` child for each subquery in `exprs` to `node`.
    fn attach(&self, mut node: Node, exprs: &[&Expr], place: &str, names: &Names<'_>) -> Node {
        let mut subs = Vec::new();
        for e in exprs {
            subqueries_of(e, &mut subs);
        }
        for (p, correlated) in subs {
            let id = self.ids.get(&addr(&p)).copied().unwrap_or(0);
            let how = if correlated {
                "dependent"
            } else {
                "run only once"
            };
            node.children.push(Node::over(
                format!("Select #{id} (subquery in {place}; {how})"),
                self.block(&p, (&names.cols, &names.refs)),
            ));
        }
        node
    }

    /// `Filter: (cond)` over `node` when `parts` is not empty.
    fn filter(&self, node: Node, parts: &[&Expr], names: &Names<'_>) -> Node {
        if parts.is_empty() {
            return node;
        }
        let f = Node::over(format!("Filter: {}", conjunction(parts, names)), node);
        self.attach(f, parts, "condition", names)
    }

    /// The read of step `k`'s source (before its per-row filter).
    fn read(&self, plan: &SelectPlan, step: &Step, names: &Names<'_>) -> Node {
        let src = &plan.sources[step.source];
        match &src.kind {
            SourceKind::Table(t) => {
                let reverse = plan.order_from_access && plan.order_by.first().is_some_and(|o| o.1);
                Node::leaf(access_label(t, &src.name, &step.access, names, reverse))
            }
            SourceKind::Derived(d) => Node::over(
                format!("Table scan on {}", src.name),
                Node::over("Materialize".into(), self.block(d, (&[], &[]))),
            ),
            SourceKind::SetOp(sp) => {
                let op = sp.op.name();
                let label = format!(
                    "{}{} materialize{}",
                    &op[..1],
                    op[1..].to_ascii_lowercase(),
                    if sp.all {
                        " (all)"
                    } else {
                        " with deduplication"
                    }
                );
                Node::over(
                    format!("Table scan on {}", src.name),
                    Node {
                        label,
                        children: sp
                            .operands
                            .iter()
                            .map(|o| self.block(o, (&[], &[])))
                            .collect(),
                    },
                )
            }
            SourceKind::System(sys) => Node::leaf(format!(
                "Table scan on {} (generated from the catalog{})",
                src.name,
                match sys.selective() {
                    (_, true) => ": named tables",
                    (true, false) => ": named schemas",
                    _ => "",
                }
            )),
        }
    }

    fn hash_conditions(&self, plan: &SelectPlan, step: &Step, names: &Names<'_>) -> String {
        let src = &plan.sources[step.source];
        step.hash_keys
            .iter()
            .map(|(c, probe)| format!("({} = {})", names.col(src.offset + c), expr(probe, names)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The join of steps `0..=k`, left-deep as the nested loops run.
    fn join(&self, plan: &SelectPlan, k: usize, names: &Names<'_>) -> Node {
        let step = &plan.steps[k];
        let res = residual(plan, step);
        let post: Vec<&Expr> = step
            .post_filter
            .as_ref()
            .map(|p| p.conjuncts())
            .unwrap_or_default();
        let kind = if step.left { "left" } else { "inner" };
        let node = if k == 0 {
            let read = self.read(plan, step, names);
            let read = if is_hash_step(step) {
                Node::over(
                    format!(
                        "Hash lookup on {} {}",
                        plan.sources[step.source].name,
                        self.hash_conditions(plan, step, names)
                    ),
                    Node::over("Hash (built once per statement)".into(), read),
                )
            } else {
                read
            };
            self.filter(read, &res, names)
        } else {
            let left = self.join(plan, k - 1, names);
            if is_hash_step(step) {
                let capital = if step.left { "Left" } else { "Inner" };
                let j = Node {
                    label: format!(
                        "{capital} hash join {}",
                        self.hash_conditions(plan, step, names)
                    ),
                    children: vec![
                        left,
                        Node::over("Hash".into(), self.read(plan, step, names)),
                    ],
                };
                self.filter(j, &res, names)
            } else {
                let inner = self.filter(self.read(plan, step, names), &res, names);
                Node {
                    label: format!("Nested loop {kind} join"),
                    children: vec![left, inner],
                }
            }
        };
        self.filter(node, &post, names)
    }

    /// The tree of one query block.
    fn block(&self, plan: &SelectPlan, outer: (&[String], &[String])) -> Node {
        let (cols, refs) = frame_names(plan, outer, self.qualify);
        let names = Names {
            cols,
            refs,
            aggs: &plan.aggs,
            ids: self.ids,
        };
        let mut node = if plan.sources.is_empty() {
            Node::leaf("Rows fetched before execution".into())
        } else if impossible(plan) {
            Node::leaf("Zero rows (Impossible WHERE)".into())
        } else {
            let j = self.join(plan, plan.steps.len().saturating_sub(1), &names);
            match &plan.pre_filter {
                Some(pre) => {
                    let parts = pre.conjuncts();
                    let f =
                        Node::over(format!("Filter (once): {}", conjunction(&parts, &names)), j);
                    self.attach(f, &parts, "condition", &names)
                }
                None => j,
            }
        };
        if plan.grouped {
            let aggs = plan
                .aggs
                .iter()
                .map(|a| agg_text(a, &names))
                .collect::<Vec<_>>()
                .join(", ");
            let label = if plan.group_by.is_empty() {
                format!("Aggregate: {aggs}")
            } else {
                let by = plan
                    .group_by
                    .iter()
                    .map(|e| expr(e, &names))
                    .collect::<Vec<_>>()
                    .join(", ");
                if aggs.is_empty() {
                    format!("Group (hash) by {by}")
                } else {
                    format!("Group (hash) by {by}: {aggs}")
                }
            };
            let group_exprs: Vec<&Expr> = plan
                .group_by
                .iter()
                .chain(plan.aggs.iter().filter_map(|a| a.arg.as_ref()))
                .collect();
            node = self.attach(Node::over(label, node), &group_exprs, "group by", &names);
        }
        if let Some(h) = &plan.having {
            node = self.filter(node, &[h], &names);
        }
        if plan.distinct {
            node = Node::over("Deduplicate (hash)".into(), node);
        }
        if !plan.order_by.is_empty() && !plan.order_from_access {
            let keys = plan
                .order_by
                .iter()
                .map(|(pos, desc)| {
                    let e = plan
                        .projection
                        .get(*pos)
                        .map(|e| expr(e, &names))
                        .unwrap_or_else(|| format!("<output {pos}>"));
                    if *desc {
                        format!("{e} DESC")
                    } else {
                        e
                    }
                })
                .collect::<Vec<_>>()
                .join(", ");
            node = Node::over(format!("Sort: {keys}"), node);
        }
        if let Some(l) = &plan.limit {
            let label = match &plan.offset {
                Some(o) => format!(
                    "Limit/Offset: {}/{} row(s)",
                    expr(l, &names),
                    expr(o, &names)
                ),
                None => format!("Limit: {} row(s)", expr(l, &names)),
            };
            node = Node::over(label, node);
        }
        let projection: Vec<&Expr> = plan.projection.iter().collect();
        self.attach(node, &projection, "projection", &names)
    }
}

/// The tree of a single-table UPDATE / DELETE: statement, LIMIT, sort, filter,
/// read, and the subqueries (which run once, before the read).
#[allow(clippy::too_many_arguments)]
fn dml_tree(
    head: &dyn Fn(&Names<'_>) -> String,
    t: &Arc<Table>,
    a: &Access,
    filter: Option<&Expr>,
    order: &RowOrder,
    limit: Option<&Expr>,
    exprs: &[&Expr],
    ids: &mut Ids,
) -> Node {
    number_dml(exprs, ids);
    let ids = &*ids;
    let names = table_names(t, ids);
    let reverse = matches!(order, RowOrder::Key { reverse: true });
    let mut label = access_label(t, &t.def.name, a, &names, reverse);
    if filter.is_some_and(Expr::has_subquery) {
        // The executor substitutes the subqueries' results and chooses the
        // access path again (an IN subquery may become a key lookup).
        label.push_str(" (chosen again after the subqueries run)");
    }
    let mut node = Node::leaf(label);
    let b = TreeBuilder { ids, qualify: true };
    let res = dml_residual(t, a, filter);
    node = b.filter(node, &res, &names);
    if let RowOrder::Sort(keys) = order {
        let keys = keys
            .iter()
            .map(|(e, desc)| {
                let e = expr(e, &names);
                if *desc {
                    format!("{e} DESC")
                } else {
                    e
                }
            })
            .collect::<Vec<_>>()
            .join(", ");
        node = Node::over(format!("Sort: {keys}"), node);
    }
    if let Some(l) = limit {
        node = Node::over(format!("Limit: {} row(s)", expr(l, &names)), node);
    }
    let top = Node::over(head(&names), node);
    let assignments: Vec<&Expr> = exprs
        .iter()
        .copied()
        .filter(|e| filter.is_none_or(|f| !std::ptr::eq(*e, f)))
        .collect();
    b.attach(top, &assignments, "SET", &names)
}

/// The tree EXPLAIN of a plan (MySQL 8's `EXPLAIN FORMAT=TREE`), one line per
/// iterator, children indented by four spaces.
pub fn tree(plan: &Plan) -> String {
    let mut ids = Ids::new();
    let node = match plan {
        Plan::Select(s) => {
            number(s, &mut ids);
            let b = TreeBuilder {
                ids: &ids,
                qualify: s.table.is_none(),
            };
            b.block(s, (&[], &[]))
        }
        Plan::Insert(i) => {
            let verb = match &i.on_duplicate {
                OnDuplicate::Error => "Insert into",
                OnDuplicate::Replace => "Replace into",
                OnDuplicate::Update(_) => "Insert (on duplicate key update) into",
            };
            let ignore = if i.ignore { " (ignore)" } else { "" };
            match &i.select {
                Some(q) => {
                    // The whole source is read before the first row is inserted.
                    number(q, &mut ids);
                    let b = TreeBuilder {
                        ids: &ids,
                        qualify: q.table.is_none(),
                    };
                    Node::over(
                        format!("{verb} {}{ignore}", i.table.def.name),
                        Node::over("Materialize".into(), b.block(q, (&[], &[]))),
                    )
                }
                None => Node::leaf(format!(
                    "{verb} {}{ignore}: {} row(s)",
                    i.table.def.name,
                    i.rows.len()
                )),
            }
        }
        Plan::Update(u) => {
            let mut exprs: Vec<&Expr> = u.assignments.iter().map(|(_, e)| e).collect();
            exprs.extend(u.filter.iter());
            let head = |names: &Names<'_>| {
                let sets = u
                    .assignments
                    .iter()
                    .map(|(c, e)| format!("{}={}", names.col(*c), expr(e, names)))
                    .collect::<Vec<_>>()
                    .join(", ");
                format!("Update {} set {sets}", u.table.def.name)
            };
            dml_tree(
                &head,
                &u.table,
                &u.access,
                u.filter.as_ref(),
                &u.order,
                u.limit.as_ref(),
                &exprs,
                &mut ids,
            )
        }
        Plan::Delete(d) => dml_tree(
            &|_: &Names<'_>| format!("Delete from {}", d.table.def.name),
            &d.table,
            &d.access,
            d.filter.as_ref(),
            &d.order,
            d.limit.as_ref(),
            &d.filter.iter().collect::<Vec<_>>(),
            &mut ids,
        ),
    };
    let mut out = String::new();
    node.render(0, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(ty: SqlType, nullable: bool) -> ColumnDef {
        ColumnDef {
            name: "c".into(),
            ty,
            nullable,
            default: None,
            auto_increment: false,
            collation: crate::types::collation::Collation::DEFAULT,
            added_default: None,
        }
    }

    #[test]
    fn key_len_matches_mysql_sizes() {
        assert_eq!(
            key_part_len(&col(SqlType::Int { unsigned: false }, false)),
            4
        );
        assert_eq!(
            key_part_len(&col(SqlType::Int { unsigned: false }, true)),
            5
        );
        assert_eq!(
            key_part_len(&col(SqlType::BigInt { unsigned: true }, false)),
            8
        );
        assert_eq!(key_part_len(&col(SqlType::VarChar(16), true)), 67);
        assert_eq!(key_part_len(&col(SqlType::Char(2), false)), 8);
        let dec = |p, s| SqlType::Decimal {
            precision: p,
            scale: s,
        };
        // MySQL: DECIMAL(12,2) is 6 bytes, DECIMAL(4,4) 2, DECIMAL(18,9) 8.
        assert_eq!(key_part_len(&col(dec(12, 2), false)), 6);
        assert_eq!(key_part_len(&col(dec(4, 4), false)), 2);
        assert_eq!(key_part_len(&col(dec(18, 9), false)), 8);
        assert_eq!(key_part_len(&col(SqlType::DateTime, true)), 6);
    }

    #[test]
    fn function_names_are_snake_case() {
        assert_eq!(func_name(Func::CharLength), "char_length");
        assert_eq!(func_name(Func::Concat), "concat");
    }

    #[test]
    fn literal_only_conditions_fold() {
        let f = Expr::Binary(
            BinOp::Eq,
            Box::new(Expr::Literal(Value::Int(1))),
            Box::new(Expr::Literal(Value::Int(0))),
        );
        assert!(is_literal_only(&f));
        let p = Expr::Binary(
            BinOp::Eq,
            Box::new(Expr::Param(0)),
            Box::new(Expr::Literal(Value::Int(0))),
        );
        assert!(!is_literal_only(&p));
    }
}
