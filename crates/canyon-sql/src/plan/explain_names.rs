//! EXPLAIN, shared by both forms (see [`crate::plan::explain`]): how the
//! expressions of a block print (columns by name, placeholders as `?`,
//! subqueries as `(select #N)`), how blocks are numbered and nested, and
//! whether a block's constant conditions make it an "Impossible WHERE".

use crate::catalog::Table;
use crate::expr::functions::Func;
use crate::expr::{eval, subquery_key, AggCall, AggFunc, Env, EvalContext, Expr, SubqueryKind};
use crate::plan::select::{shared_select_plan, SelectPlan, SourceKind};
use crate::types::value::Value;
use canyon_common::{Error, Result};
use std::collections::HashMap;
use std::sync::Arc;

// ----------------------------------------------------------------------------------
// Names: what a frame position, an aggregate or a subquery prints as
// ----------------------------------------------------------------------------------

/// Block ids (MySQL's `id` column and `select #N`), by plan address.
pub(super) type Ids = HashMap<usize, usize>;

pub(super) fn addr(p: &SelectPlan) -> usize {
    p as *const SelectPlan as usize
}

/// How the expressions of one query block print.
pub(super) struct Names<'a> {
    /// Display name of each frame position.
    pub(super) cols: Vec<String>,
    /// `db.table.column` of each frame position (the traditional `ref` column).
    pub(super) refs: Vec<String>,
    /// The block's aggregates (`Expr::Agg`).
    pub(super) aggs: &'a [AggCall],
    /// Block ids of subqueries.
    pub(super) ids: &'a Ids,
}

impl Names<'_> {
    pub(super) fn col(&self, i: usize) -> String {
        self.cols
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("<column {i}>"))
    }
}

/// The names of a block's frame: the enclosing frame's (for a correlated
/// subquery), then each source's columns, qualified by the source's name when
/// `qualify` (any statement with more than one table reference).
pub(super) fn frame_names(
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
                SourceKind::WorkTable(w) => ("", w.columns.get(i).cloned()),
                SourceKind::System(sys) => (
                    sys.table.schema(),
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
pub(super) fn table_names<'a>(t: &Table, ids: &'a Ids) -> Names<'a> {
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

pub(super) fn agg_text(a: &AggCall, n: &Names<'_>) -> String {
    let name = match a.func {
        AggFunc::CountStar => "count",
        AggFunc::Count => "count",
        AggFunc::Sum => "sum",
        AggFunc::Min => "min",
        AggFunc::Max => "max",
        AggFunc::Avg => "avg",
        AggFunc::GroupConcat => "group_concat",
        AggFunc::JsonArrayAgg => "json_arrayagg",
        AggFunc::JsonObjectAgg => "json_objectagg",
        AggFunc::RowNumber => "row_number",
        AggFunc::Rank => "rank",
        AggFunc::DenseRank => "dense_rank",
        AggFunc::PercentRank => "percent_rank",
        AggFunc::CumeDist => "cume_dist",
        AggFunc::Ntile => "ntile",
        AggFunc::Lag => "lag",
        AggFunc::Lead => "lead",
        AggFunc::FirstValue => "first_value",
        AggFunc::LastValue => "last_value",
        AggFunc::NthValue => "nth_value",
    };
    let mut args: Vec<String> = a.arg.iter().map(|e| expr(e, n)).collect();
    if a.func == AggFunc::CountStar {
        args.push("*".into());
    }
    if let Some(w) = &a.window {
        args.extend(w.extra.iter().map(|e| expr(e, n)));
    }
    let arg = args.join(",");
    let call = if a.distinct {
        format!("{name}(distinct {arg})")
    } else {
        format!("{name}({arg})")
    };
    match &a.window {
        Some(w) => format!("{call} OVER {}", window_text(w, n)),
        None => call,
    }
}

/// A window as MySQL's tree EXPLAIN prints it after OVER: its name, or its
/// PARTITION BY and ORDER BY in parentheses (the frame is not shown).
pub(super) fn window_text(w: &crate::expr::WindowDef, n: &Names<'_>) -> String {
    if w.name != "<unnamed window>" {
        return format!("`{}`", w.name);
    }
    let mut parts = Vec::new();
    if !w.partition.is_empty() {
        let keys: Vec<String> = w.partition.iter().map(|(e, _)| expr(e, n)).collect();
        parts.push(format!("PARTITION BY {}", keys.join(",")));
    }
    if !w.order.is_empty() {
        let keys: Vec<String> = w
            .order
            .iter()
            .map(|(e, d, _)| format!("{}{}", expr(e, n), if *d { " desc" } else { "" }))
            .collect();
        parts.push(format!("ORDER BY {}", keys.join(",")));
    }
    format!("({})", parts.join(" "))
}

/// An expression as MySQL's tree EXPLAIN prints it: every operator
/// parenthesised, columns by name, placeholders as `?`, subqueries as
/// `(select #N)`.
/// A stored function's call as EXPLAIN shows it (apart from the recursive
/// [`expr`], not inlined).
#[inline(never)]
fn stored_text(c: &crate::expr::StoredCall, n: &Names<'_>) -> String {
    let args: Vec<String> = c.args.iter().map(|x| expr(x, n)).collect();
    format!(
        "`{}`.`{}`({})",
        c.routine.db,
        c.routine.name,
        args.join(",")
    )
}

pub(super) fn expr(e: &Expr, n: &Names<'_>) -> String {
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
        // An ENUM / SET column's numeric reading prints as the column, as
        // MySQL's EXPLAIN shows `(t.e = 2)`.
        Expr::Func(Func::EnumIndex | Func::SetMask, args) if !args.is_empty() => expr(&args[0], n),
        Expr::Func(f, args) => format!("{}({})", func_name(*f), list(args)),
        Expr::Stored(c) => stored_text(c, n),
        Expr::Match(m) => format!(
            "(match {} against ({}{}))",
            list(&m.columns),
            expr(&m.against, n),
            match m.mode {
                crate::types::fulltext::Mode::Natural => "",
                crate::types::fulltext::Mode::Boolean => " in boolean mode",
            }
        ),
        Expr::Row(items) => format!("({})", list(items)),
        Expr::Subquery(sq) => {
            let id = n
                .ids
                .get(&subquery_key(sq))
                .map(|i| i.to_string())
                .unwrap_or_else(|| "?".into());
            match &sq.kind {
                SubqueryKind::Scalar | SubqueryKind::Row => format!("(select #{id})"),
                SubqueryKind::Quantified(lhs, op, all) => format!(
                    "({} {} {} (select #{id}))",
                    expr(lhs, n),
                    op.symbol(),
                    if *all { "all" } else { "any" }
                ),
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
pub(super) fn conjunction(parts: &[&Expr], n: &Names<'_>) -> String {
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
    out.extend(plan.aggs.iter().flat_map(|a| a.exprs()));
    out.extend(plan.limit.iter());
    out.extend(plan.offset.iter());
    out
}

/// The subqueries an expression holds (not those inside their plans), each once.
/// (A subquery's plan is always a select plan; one that were not would have no
/// block to print.)
pub(super) fn subqueries_of(e: &Expr, out: &mut Vec<(Arc<SelectPlan>, bool)>) {
    e.visit_columns(&mut |_| {}, &mut |sq| {
        if !out.iter().any(|(p, _)| addr(p) == subquery_key(sq)) {
            if let Some(p) = shared_select_plan(&sq.plan) {
                out.push((p, sq.correlated));
            }
        }
    });
}

/// A nested block of a query block: (plan, select_type).
pub(super) enum Nested<'p> {
    Derived(&'p SelectPlan),
    /// An operand of a set operation, with its `select_type`.
    Operand(&'p SelectPlan, &'static str),
    Subquery(Arc<SelectPlan>, bool),
}

/// The blocks nested directly in `plan`, in numbering order: select-list
/// subqueries, derived tables in FROM order, then the other subqueries.
pub(super) fn nested(plan: &SelectPlan) -> Vec<Nested<'_>> {
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
pub(super) fn number(plan: &SelectPlan, ids: &mut Ids) {
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
pub(super) fn impossible(plan: &SelectPlan) -> bool {
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

/// Numbers the subqueries of a single-table UPDATE / DELETE from 2 (the
/// statement itself is id 1).
pub(super) fn number_dml(exprs: &[&Expr], ids: &mut Ids) -> Vec<(Arc<SelectPlan>, bool)> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::BinOp;

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
