//! EXPLAIN's traditional form (`EXPLAIN stmt`, `FORMAT=TRADITIONAL`): MySQL's
//! twelve columns, one row per join step in execution order, then one block
//! of rows per derived table, set-operation operand and subquery (see
//! [`crate::plan::explain`] for how each column is derived).

use crate::catalog::Table;
use crate::expr::Expr;
use crate::plan::access::Access;
use crate::plan::explain_access::{access_info, dml_residual, is_hash_step, residual, AccessInfo};
use crate::plan::explain_names::{
    addr, frame_names, impossible, nested, number, number_dml, table_names, Ids, Names, Nested,
};
use crate::plan::select::{SelectPlan, SourceKind};
use crate::plan::{OnDuplicate, Plan, RowOrder};
use crate::types::decimal::Decimal;
use crate::types::result::Column;
use crate::types::value::Value;
use crate::types::{expr_column, ExprKind};
use std::sync::Arc;

/// The twelve columns of MySQL's traditional EXPLAIN.
pub(super) fn traditional_columns() -> Arc<[Column]> {
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
        let (temporary, sort) = block_flags(plan);
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
            for k in 0..plan.steps.len() {
                let r = step_row(self.ids, plan, k, &names, temporary, sort);
                let mut row = trad_row(id, select_type, Some(r.table), Some(&r.info), r.extra);
                row[3] = r.partitions;
                self.rows.push((id, row));
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

/// What the traditional form shows for one join step (the JSON form,
/// `explain_json`, is built from the same values so the two cannot disagree).
pub(super) struct StepRow {
    /// The `table` column: the source's name, `<derivedN>` or `<unionN,M>`.
    pub(super) table: String,
    pub(super) info: AccessInfo,
    /// The `Extra` notes, in MySQL's order.
    pub(super) extra: Vec<&'static str>,
    /// The `partitions` column.
    pub(super) partitions: Value,
}

/// Whether a block needs a temporary table (GROUP BY, DISTINCT, windows)
/// and a sort its access path does not deliver: (temporary, sort).
pub(super) fn block_flags(plan: &SelectPlan) -> (bool, bool) {
    // Window functions buffer their rows (MySQL: a temporary table) and
    // sort them on their PARTITION BY and ORDER BY keys.
    let window_sort = plan.windows().iter().any(|a| {
        a.window
            .as_deref()
            .is_some_and(|w| !w.partition.is_empty() || !w.order.is_empty())
    });
    let sort = (!plan.order_by.is_empty() && !plan.order_from_access) || window_sort;
    let temporary =
        (plan.grouped && !plan.group_by.is_empty()) || plan.distinct || !plan.windows().is_empty();
    (temporary, sort)
}

/// The traditional columns of join step `k` of `plan` (`temporary` and
/// `sort` as [`block_flags`] says; they show on the first step).
pub(super) fn step_row(
    ids: &Ids,
    plan: &SelectPlan,
    k: usize,
    names: &Names<'_>,
    temporary: bool,
    sort: bool,
) -> StepRow {
    let step = &plan.steps[k];
    let src = &plan.sources[step.source];
    let mut extra = Vec::new();
    // A hash join's equalities are checked as conditions, as MySQL
    // says for its own hash joins.
    if !residual(plan, step).is_empty() || step.post_filter.is_some() || is_hash_step(step) {
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
        // Read through its FULLTEXT index: MySQL's `fulltext` join type.
        SourceKind::Table(t) if step.fulltext.is_some() => {
            let index = step.fulltext.as_ref().map(|m| m.index).unwrap_or(0);
            let info = AccessInfo {
                ty: "fulltext",
                key: t.def.indexes.get(index).map(|x| x.name.clone()),
                key_len: Some("0".into()),
                refs: Some("const".into()),
                rows: Some(1),
            };
            (src.name.clone(), info)
        }
        SourceKind::Table(t) => (src.name.clone(), access_info(t, &step.access, names)),
        SourceKind::Derived(d) => (
            format!("<derived{}>", ids.get(&addr(d)).copied().unwrap_or(0)),
            AccessInfo::materialized(),
        ),
        SourceKind::WorkTable(_) => (src.name.clone(), AccessInfo::materialized()),
        SourceKind::SetOp(sp) => (
            format!(
                "<{}{}>",
                sp.op.name().to_ascii_lowercase(),
                sp.operands
                    .iter()
                    .map(|o| ids.get(&addr(o)).copied().unwrap_or(0).to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            AccessInfo::materialized(),
        ),
        SourceKind::System(_) => (src.name.clone(), AccessInfo::materialized()),
    };
    let partitions = match &src.kind {
        // The WHERE clause prunes only on the single-table path,
        // where it reads the table's own row.
        SourceKind::Table(t) => crate::plan::partition::explain_partitions(
            t,
            plan.table.as_ref().and(plan.filter.as_ref()),
        ),
        _ => Value::Null,
    };
    StepRow {
        table,
        info,
        extra,
        partitions,
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
        // A multi-table UPDATE / DELETE: its join's rows (MySQL marks the
        // written tables' rows UPDATE / DELETE; here they read as the join).
        Plan::Update(crate::plan::UpdatePlan { multi: Some(m), .. })
        | Plan::Delete(crate::plan::DeletePlan { multi: Some(m), .. }) => {
            let q = &m.select;
            number(q, &mut ids);
            let mut ex = Explainer {
                ids: &ids,
                qualify: q.table.is_none(),
                rows: Vec::new(),
            };
            let st = if ids.len() > 1 { "PRIMARY" } else { "SIMPLE" };
            ex.block(q, st, (&[], &[]));
            let mut rows = ex.rows;
            rows.sort_by_key(|(id, _)| *id);
            rows.into_iter().map(|(_, r)| r).collect()
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
        rows: vec![(1, {
            let mut row = trad_row(1, st, Some(t.def.name.clone()), Some(&info), extra);
            row[3] = crate::plan::partition::explain_partitions(t, filter);
            row
        })],
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
