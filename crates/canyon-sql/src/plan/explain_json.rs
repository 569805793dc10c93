//! EXPLAIN FORMAT=JSON: the plan as MySQL 8.0's JSON document (one row, one
//! column `EXPLAIN`, pretty-printed with two-space indentation).
//!
//! # One walk, two forms
//! The values of every `table` object come from the same functions the
//! traditional form prints ([`step_row`] and [`block_flags`] in
//! `explain_table`, [`access_info`] for single-table UPDATE / DELETE): the
//! `table_name`, `access_type`, `key`, `key_length`, `ref`,
//! `rows_examined_per_scan` and the filesort / temporary flags cannot differ
//! from the traditional row for the same step. Blocks nest where MySQL nests
//! them instead of following one another: a derived table's block sits in
//! its `table` object (`materialized_from_subquery`), a set operation read
//! as a derived table holds a `union_result` with one `query_specifications`
//! entry per operand, subqueries of the select list are
//! `select_list_subqueries` and the others `attached_subqueries` of the
//! block's last table (where their condition is checked).
//!
//! # Costs
//! Canyon's planner has no cost model: it chooses access paths by rule and
//! by the row estimates of the table statistics. So the cost figures are
//! row counts, documented as such (docs/observability.md): a step's
//! `read_cost` is the rows it is estimated to read (its
//! `rows_examined_per_scan` times the rows produced by the steps before it,
//! once for a hash-join step, which is read once per statement),
//! `prefix_cost` the sum of those up to and including the step, and the
//! block's `query_cost` the last step's `prefix_cost`. Where an estimate is
//! unknown (a table never analysed; a derived table) the `cost_info` objects
//! from that step on are left out rather than guessed. `eval_cost` and
//! `data_read_per_join` are never shown (no per-row evaluation cost, no row
//! size estimates), and `filtered` is always 100.00, as in the traditional form.
//!
//! # What differs from MySQL
//! - `possible_keys` holds only the chosen key (see `explain`).
//! - `used_columns` lists the columns the statement reads from the source
//!   (the planner's partial-decoding set), every column when it reads whole
//!   rows.
//! - `attached_condition` prints the conditions as the tree form prints
//!   them (unquoted names), not in MySQL's `` `db`.`t`.`c` `` form.
//! - A top-level UNION reads as the derived table it is in Canyon's plan:
//!   the outer block's `table` holds the `union_result`.
//! - Window functions show a `windowing` object with `using_temporary_table`
//!   only (no per-window list).

use crate::catalog::Table;
use crate::expr::Expr;
use crate::plan::access::Access;
use crate::plan::explain_access::{
    access_info, dml_residual, is_hash_step, residual, used_key_parts, AccessInfo,
};
use crate::plan::explain_names::{
    addr, conjunction, frame_names, impossible, nested, number, number_dml, subqueries_of,
    table_names, Ids, Names, Nested,
};
use crate::plan::explain_table::{block_flags, step_row};
use crate::plan::select::{SelectPlan, SourceKind};
use crate::plan::{OnDuplicate, Plan, RowOrder};
use crate::types::value::Value;
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::sync::Arc;

/// A JSON value whose objects keep their keys in insertion order (MySQL's
/// order; serde_json's own `Map` sorts them without its `preserve_order`
/// feature, which would change every other map of the workspace).
enum J {
    Bool(bool),
    Int(i64),
    Str(String),
    Arr(Vec<J>),
    Obj(Obj),
}

#[derive(Default)]
struct Obj(Vec<(&'static str, J)>);

impl Obj {
    fn put(&mut self, k: &'static str, v: J) {
        debug_assert!(self.0.iter().all(|(x, _)| *x != k), "duplicate key {k}");
        self.0.push((k, v));
    }
    fn str(&mut self, k: &'static str, v: impl Into<String>) {
        self.put(k, J::Str(v.into()));
    }
    fn get_mut(&mut self, k: &str) -> Option<&mut J> {
        self.0.iter_mut().find(|(x, _)| *x == k).map(|(_, v)| v)
    }
}

impl Serialize for J {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            J::Bool(b) => s.serialize_bool(*b),
            J::Int(i) => s.serialize_i64(*i),
            J::Str(t) => s.serialize_str(t),
            J::Arr(a) => a.serialize(s),
            J::Obj(o) => {
                let mut m = s.serialize_map(Some(o.0.len()))?;
                for (k, v) in &o.0 {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
        }
    }
}

fn strs(v: impl IntoIterator<Item = String>) -> J {
    J::Arr(v.into_iter().map(J::Str).collect())
}

/// MySQL prints costs and row products as strings with two decimals.
fn cost(x: f64) -> J {
    J::Str(format!("{x:.2}"))
}

/// The JSON document of a plan, pretty-printed.
pub fn json(plan: &Plan) -> String {
    let doc = document(plan);
    serde_json::to_string_pretty(&J::Obj(doc)).expect("an in-memory JSON document serialises")
}

fn document(plan: &Plan) -> Obj {
    let mut ids = Ids::new();
    let select_doc = |q: &SelectPlan, ids: &mut Ids| {
        number(q, ids);
        let w = Walker {
            ids,
            qualify: q.table.is_none(),
        };
        w.block(q, (&[], &[]))
    };
    let mut doc = Obj::default();
    match plan {
        Plan::Select(s) => doc.put("query_block", J::Obj(select_doc(s, &mut ids))),
        Plan::Update(crate::plan::UpdatePlan { multi: Some(m), .. })
        | Plan::Delete(crate::plan::DeletePlan { multi: Some(m), .. }) => {
            doc.put("query_block", J::Obj(select_doc(&m.select, &mut ids)))
        }
        Plan::Insert(i) => {
            let mut t = Obj::default();
            t.put("insert", J::Bool(true));
            t.str("table_name", i.table.def.name.clone());
            t.str("access_type", "ALL");
            let mut qb = Obj::default();
            qb.put("select_id", J::Int(1));
            qb.put("table", J::Obj(t));
            // INSERT ... SELECT: the source's block, as MySQL's `insert_from`
            // (MySQL numbers it with the same id; so does the traditional form).
            if let Some(q) = &i.select {
                let mut from = select_doc(q, &mut ids);
                // The source block's own select_id is the statement's (1).
                from.0.retain(|(k, _)| *k != "select_id");
                qb.put("insert_from", J::Obj(from));
            }
            if matches!(i.on_duplicate, OnDuplicate::Replace) {
                if let Some(J::Obj(t)) = qb.get_mut("table") {
                    t.0[0].0 = "replace";
                }
            }
            doc.put("query_block", J::Obj(qb));
        }
        Plan::Update(u) => {
            let mut exprs: Vec<&Expr> = u.assignments.iter().map(|(_, e)| e).collect();
            exprs.extend(u.filter.iter());
            let qb = dml_block(
                "update",
                &u.table,
                &u.access,
                u.filter.as_ref(),
                &u.order,
                &exprs,
            );
            doc.put("query_block", J::Obj(qb));
        }
        Plan::Delete(d) => {
            let exprs: Vec<&Expr> = d.filter.iter().collect();
            let qb = dml_block(
                "delete",
                &d.table,
                &d.access,
                d.filter.as_ref(),
                &d.order,
                &exprs,
            );
            doc.put("query_block", J::Obj(qb));
        }
    }
    doc
}

/// A single-table UPDATE / DELETE: MySQL's `table` object marked
/// `"update": true` / `"delete": true`, with its subqueries attached.
fn dml_block(
    kind: &'static str,
    t: &Arc<Table>,
    a: &Access,
    filter: Option<&Expr>,
    order: &RowOrder,
    exprs: &[&Expr],
) -> Obj {
    let mut ids = Ids::new();
    let subs = number_dml(exprs, &mut ids);
    let names = table_names(t, &ids);
    let info = access_info(t, a, &names);
    let mut tb = Obj::default();
    tb.put(kind, J::Bool(true));
    tb.str("table_name", t.def.name.clone());
    put_partitions(
        &mut tb,
        &crate::plan::partition::explain_partitions(t, filter),
    );
    put_access(&mut tb, &info, used_key_parts(t, a));
    if let Some(r) = info.rows {
        tb.put("rows_examined_per_scan", J::Int(r));
    }
    tb.str("filtered", "100.00");
    let res = dml_residual(t, a, filter);
    if !res.is_empty() {
        tb.str("attached_condition", conjunction(&res, &names));
    }
    let w = Walker {
        ids: &ids,
        qualify: true,
    };
    let attached: Vec<J> = subs
        .iter()
        .map(|(p, corr)| w.subquery(p, *corr, (&names.cols, &names.refs)))
        .collect();
    if !attached.is_empty() {
        tb.put("attached_subqueries", J::Arr(attached));
    }
    let mut qb = Obj::default();
    qb.put("select_id", J::Int(1));
    if matches!(order, RowOrder::Sort(_)) {
        let mut o = Obj::default();
        o.put("using_filesort", J::Bool(true));
        o.put("table", J::Obj(tb));
        qb.put("ordering_operation", J::Obj(o));
    } else {
        qb.put("table", J::Obj(tb));
    }
    qb
}

/// `partitions` as an array of names, when the traditional column has some.
fn put_partitions(tb: &mut Obj, partitions: &Value) {
    if let Some(text) = partitions.to_text() {
        let text = String::from_utf8_lossy(&text).into_owned();
        tb.put("partitions", strs(text.split(',').map(str::to_string)));
    }
}

/// `access_type`, `possible_keys`, `key`, `used_key_parts`, `key_length`, `ref`.
fn put_access(tb: &mut Obj, info: &AccessInfo, parts: Vec<String>) {
    tb.str("access_type", info.ty);
    if let Some(k) = &info.key {
        tb.put("possible_keys", strs([k.clone()]));
        tb.str("key", k.clone());
        if !parts.is_empty() {
            tb.put("used_key_parts", strs(parts));
        }
    }
    if let Some(l) = &info.key_len {
        tb.str("key_length", l.clone());
    }
    if let Some(r) = &info.refs {
        tb.put("ref", strs(r.split(',').map(str::to_string)));
    }
}

struct Walker<'a> {
    ids: &'a Ids,
    qualify: bool,
}

impl Walker<'_> {
    fn subquery(&self, p: &SelectPlan, correlated: bool, outer: (&[String], &[String])) -> J {
        let mut o = Obj::default();
        o.put("dependent", J::Bool(correlated));
        o.put("cacheable", J::Bool(!correlated));
        o.put("query_block", J::Obj(self.block(p, outer)));
        J::Obj(o)
    }

    /// The `query_block` object of one block.
    fn block(&self, plan: &SelectPlan, outer: (&[String], &[String])) -> Obj {
        let id = self.ids.get(&addr(plan)).copied().unwrap_or(0);
        let (cols, refs) = frame_names(plan, outer, self.qualify);
        let names = Names {
            cols,
            refs,
            aggs: &plan.aggs,
            ids: self.ids,
        };
        let (temporary, sort) = block_flags(plan);
        let mut qb = Obj::default();
        qb.put("select_id", J::Int(id as i64));

        // Nested blocks, sorted by where they go.
        let mut in_projection = Vec::new();
        for e in &plan.projection {
            subqueries_of(e, &mut in_projection);
        }
        let mut select_list = Vec::new();
        let mut attached = Vec::new();
        let mut derived: Vec<(usize, Obj)> = Vec::new();
        for n in nested(plan) {
            match n {
                Nested::Derived(d) => {
                    let mut m = Obj::default();
                    m.put("using_temporary_table", J::Bool(true));
                    m.put("dependent", J::Bool(false));
                    m.put("cacheable", J::Bool(true));
                    m.put("query_block", J::Obj(self.block(d, (&[], &[]))));
                    derived.push((addr(d), m));
                }
                // Gathered per set operation below.
                Nested::Operand(..) => {}
                Nested::Subquery(p, correlated) => {
                    let j = self.subquery(&p, correlated, (&names.cols, &names.refs));
                    if in_projection.iter().any(|(q, _)| addr(q) == addr(&p)) {
                        select_list.push(j);
                    } else {
                        attached.push(j);
                    }
                }
            }
        }

        if plan.sources.is_empty() || impossible(plan) {
            let message = if plan.sources.is_empty() {
                "No tables used"
            } else {
                "Impossible WHERE"
            };
            qb.str("message", message);
            if !attached.is_empty() {
                qb.put("attached_subqueries", J::Arr(attached));
            }
            if !select_list.is_empty() {
                qb.put("select_list_subqueries", J::Arr(select_list));
            }
            return qb;
        }

        let mut tables = Vec::new();
        // Rows produced by the steps so far, and rows read so far: None once
        // an estimate is unknown.
        let mut produced = Some(1.0_f64);
        let mut read = Some(0.0_f64);
        for k in 0..plan.steps.len() {
            let step = &plan.steps[k];
            let src = &plan.sources[step.source];
            let r = step_row(self.ids, plan, k, &names, temporary, sort);
            let mut tb = Obj::default();
            tb.str("table_name", r.table.clone());
            put_partitions(&mut tb, &r.partitions);
            let parts = match &src.kind {
                SourceKind::Table(t) if step.fulltext.is_none() => used_key_parts(t, &step.access),
                _ => Vec::new(),
            };
            put_access(&mut tb, &r.info, parts);
            let rows = r.info.rows;
            if let Some(n) = rows {
                tb.put("rows_examined_per_scan", J::Int(n));
            }
            let step_read = match (rows, produced) {
                (Some(n), _) if is_hash_step(step) => Some(n as f64),
                (Some(n), Some(p)) => Some(n as f64 * p),
                _ => None,
            };
            produced = produced.zip(rows).map(|(p, n)| p * n as f64);
            read = read.zip(step_read).map(|(a, b)| a + b);
            if let Some(p) = produced {
                // An integer, as MySQL 8.0 prints it (costs are strings).
                tb.put("rows_produced_per_join", J::Int(p.round() as i64));
            }
            tb.str("filtered", "100.00");
            if r.extra.contains(&"Using join buffer (hash join)") {
                tb.str("using_join_buffer", "hash join");
            }
            if let (Some(sr), Some(total)) = (step_read, read) {
                let mut c = Obj::default();
                c.put("read_cost", cost(sr));
                c.put("prefix_cost", cost(total));
                tb.put("cost_info", J::Obj(c));
            }
            tb.put(
                "used_columns",
                strs(used_columns(src, &names, self.qualify)),
            );
            // A hash join checks its equalities as conditions (the
            // traditional form's `Using where`): MySQL shows them here too.
            let mut cond = match &step.filter {
                Some(f) if is_hash_step(step) => f.conjuncts(),
                _ => residual(plan, step),
            };
            if let Some(p) = &step.post_filter {
                cond.extend(p.conjuncts());
            }
            if !cond.is_empty() {
                tb.str("attached_condition", conjunction(&cond, &names));
            }
            match &src.kind {
                SourceKind::Derived(d) => {
                    if let Some(i) = derived.iter().position(|(a, _)| *a == addr(d)) {
                        let (_, m) = derived.remove(i);
                        tb.put("materialized_from_subquery", J::Obj(m));
                    }
                }
                SourceKind::SetOp(sp) => {
                    let specs: Vec<J> = sp
                        .operands
                        .iter()
                        .map(|o| {
                            let mut s = Obj::default();
                            s.put("dependent", J::Bool(false));
                            s.put("cacheable", J::Bool(true));
                            s.put("query_block", J::Obj(self.block(o, (&[], &[]))));
                            J::Obj(s)
                        })
                        .collect();
                    let mut u = Obj::default();
                    u.put("using_temporary_table", J::Bool(!sp.all));
                    u.str("table_name", r.table.clone());
                    u.str("access_type", "ALL");
                    u.put("query_specifications", J::Arr(specs));
                    let mut inner = Obj::default();
                    inner.put("union_result", J::Obj(u));
                    let mut m = Obj::default();
                    m.put("using_temporary_table", J::Bool(true));
                    m.put("dependent", J::Bool(false));
                    m.put("cacheable", J::Bool(true));
                    m.put("query_block", J::Obj(inner));
                    tb.put("materialized_from_subquery", J::Obj(m));
                }
                _ => {}
            }
            tables.push(tb);
        }
        assert!(derived.is_empty(), "every derived table has its step");
        if let Some(total) = read {
            let mut c = Obj::default();
            c.put("query_cost", cost(total));
            qb.put("cost_info", J::Obj(c));
        }
        if !attached.is_empty() {
            if let Some(last) = tables.last_mut() {
                last.put("attached_subqueries", J::Arr(attached));
            }
        }

        // The join, then the operations over it, innermost first.
        let mut body = Obj::default();
        if tables.len() == 1 {
            body.put("table", J::Obj(tables.pop().expect("one table")));
        } else {
            let list = tables
                .into_iter()
                .map(|t| {
                    let mut o = Obj::default();
                    o.put("table", J::Obj(t));
                    J::Obj(o)
                })
                .collect();
            body.put("nested_loop", J::Arr(list));
        }
        // MySQL names both flags in these objects; the sort, when there is
        // one, shows in the `ordering_operation` around them.
        let wrap = |key: &'static str, temp: bool, body: Obj| {
            let mut o = Obj::default();
            o.put("using_temporary_table", J::Bool(temp));
            if key != "windowing" {
                o.put("using_filesort", J::Bool(false));
            }
            o.0.extend(body.0);
            let mut w = Obj::default();
            w.put(key, J::Obj(o));
            w
        };
        if plan.grouped && !plan.group_by.is_empty() {
            body = wrap("grouping_operation", true, body);
        } else if !plan.windows().is_empty() {
            body = wrap("windowing", true, body);
        }
        if plan.distinct {
            body = wrap("duplicates_removal", true, body);
        }
        if sort {
            let mut o = Obj::default();
            o.put("using_filesort", J::Bool(true));
            o.0.extend(body.0);
            body = Obj::default();
            body.put("ordering_operation", J::Obj(o));
        }
        qb.0.extend(body.0);
        if !select_list.is_empty() {
            qb.put("select_list_subqueries", J::Arr(select_list));
        }
        qb
    }
}

/// The source's columns the statement reads (every column when it decodes
/// whole rows), unqualified.
fn used_columns(
    src: &crate::plan::select::Source,
    names: &Names<'_>,
    qualify: bool,
) -> Vec<String> {
    let prefix = format!("{}.", src.name);
    (0..src.width)
        .filter(|i| {
            src.needed
                .as_ref()
                .is_none_or(|n| n.get(*i).copied().unwrap_or(true))
        })
        .map(|i| {
            let n = names.col(src.offset + i);
            match n.strip_prefix(&prefix) {
                Some(bare) if qualify => bare.to_string(),
                _ => n,
            }
        })
        .collect()
}
