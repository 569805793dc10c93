//! EXPLAIN's tree form (`FORMAT=TREE`): one indented iterator tree in MySQL
//! 8's wording (see [`crate::plan::explain`] for the nodes Canyon adds).

use crate::catalog::Table;
use crate::expr::Expr;
use crate::plan::access::Access;
use crate::plan::explain_access::{dml_residual, is_hash_step, key_name, lookup, residual, Lookup};
use crate::plan::explain_names::{
    addr, agg_text, conjunction, expr, frame_names, impossible, number, number_dml, subqueries_of,
    table_names, Ids, Names,
};
use crate::plan::profile::{Profile, Slot, Stat};
use crate::plan::select::{SelectPlan, SourceKind, Step};
use crate::plan::{OnDuplicate, Plan, RowOrder};
use std::sync::Arc;

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
    /// EXPLAIN ANALYZE: the measurements each node is annotated with.
    profile: Option<&'a Profile>,
}

impl TreeBuilder<'_> {
    /// `node` with MySQL's `(actual time=... rows=... loops=...)` for `stat`
    /// appended to its label (EXPLAIN ANALYZE only).
    fn noted(&self, mut node: Node, stat: impl FnOnce(&Profile) -> Stat) -> Node {
        if let Some(p) = self.profile {
            node.label.push_str("  ");
            node.label.push_str(&stat(p).annotation());
        }
        node
    }

    /// [`TreeBuilder::noted`] with one node's own measurements.
    fn note(&self, node: Node, plan: &SelectPlan, slot: Slot) -> Node {
        self.noted(node, |p| p.get(plan, slot))
    }

    /// [`TreeBuilder::noted`] for a stage above the join: the block's runs
    /// and time, the stage's rows.
    fn note_stage(&self, node: Node, plan: &SelectPlan, rows: Slot) -> Node {
        self.noted(node, |p| Stat {
            rows: p.get(plan, rows).rows,
            ..p.get(plan, Slot::Block)
        })
    }

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
    fn read(&self, plan: &SelectPlan, k: usize, names: &Names<'_>) -> Node {
        let step = &plan.steps[k];
        let src = &plan.sources[step.source];
        let materialized = |node: Node| self.note(node, plan, Slot::Materialized(k));
        let node = match &src.kind {
            SourceKind::Table(t) => {
                let reverse = plan.order_from_access && plan.order_by.first().is_some_and(|o| o.1);
                Node::leaf(access_label(t, &src.name, &step.access, names, reverse))
            }
            SourceKind::WorkTable(_) => Node::leaf(format!("Scan new records on {}", src.name)),
            SourceKind::Derived(d) => Node::over(
                format!("Table scan on {}", src.name),
                materialized(Node::over("Materialize".into(), self.block(d, (&[], &[])))),
            ),
            SourceKind::SetOp(sp) => {
                let op = sp.op.name();
                let dedup = if sp.all {
                    " (all)"
                } else {
                    " with deduplication"
                };
                let label = if sp.recursion.is_some() {
                    // MySQL 8's label for the iteration.
                    format!("Materialize recursive CTE {}{dedup}", src.name)
                } else {
                    format!(
                        "{}{} materialize{dedup}",
                        &op[..1],
                        op[1..].to_ascii_lowercase()
                    )
                };
                Node::over(
                    format!("Table scan on {}", src.name),
                    materialized(Node {
                        label,
                        children: sp
                            .operands
                            .iter()
                            .map(|o| self.block(o, (&[], &[])))
                            .collect(),
                    }),
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
        };
        // A hash step's source is read once, into its hash table.
        let slot = if is_hash_step(step) {
            Slot::Materialized(k)
        } else {
            Slot::Read(k)
        };
        self.note(node, plan, slot)
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
            let read = self.read(plan, k, names);
            let read = if is_hash_step(step) {
                let built = self.note(
                    Node::over("Hash (built once per statement)".into(), read),
                    plan,
                    Slot::Materialized(k),
                );
                let probe = Node::over(
                    format!(
                        "Hash lookup on {} {}",
                        plan.sources[step.source].name,
                        self.hash_conditions(plan, step, names)
                    ),
                    built,
                );
                self.note(probe, plan, Slot::Read(k))
            } else {
                read
            };
            self.filter_noted(read, &res, names, plan, Slot::Filter(k))
        } else {
            let left = self.join(plan, k - 1, names);
            if is_hash_step(step) {
                let capital = if step.left { "Left" } else { "Inner" };
                let hash = self.note(
                    Node::over("Hash".into(), self.read(plan, k, names)),
                    plan,
                    Slot::Materialized(k),
                );
                let j = Node {
                    label: format!(
                        "{capital} hash join {}",
                        self.hash_conditions(plan, step, names)
                    ),
                    children: vec![left, hash],
                };
                // The join's rows per run of the block (the probes are its
                // steps, not its loops).
                let j = self.note(j, plan, Slot::Join(k));
                self.filter_noted(j, &res, names, plan, Slot::Join(k))
            } else {
                let read = self.read(plan, k, names);
                let inner = self.filter_noted(read, &res, names, plan, Slot::Filter(k));
                self.note(
                    Node {
                        label: format!("Nested loop {kind} join"),
                        children: vec![left, inner],
                    },
                    plan,
                    Slot::Join(k),
                )
            }
        };
        self.filter_noted(node, &post, names, plan, Slot::Join(k))
    }

    /// [`TreeBuilder::filter`], the filter node annotated with `slot`.
    fn filter_noted(
        &self,
        node: Node,
        parts: &[&Expr],
        names: &Names<'_>,
        plan: &SelectPlan,
        slot: Slot,
    ) -> Node {
        if parts.is_empty() {
            return node;
        }
        let f = self.note(
            Node::over(format!("Filter: {}", conjunction(parts, names)), node),
            plan,
            slot,
        );
        self.attach(f, parts, "condition", names)
    }

    /// The tree of one query block (see [`window_steps`] for its window
    /// functions).
    fn block(&self, plan: &SelectPlan, outer: (&[String], &[String])) -> Node {
        let (cols, refs) = frame_names(plan, outer, self.qualify);
        let names = Names {
            cols,
            refs,
            aggs: &plan.aggs,
            ids: self.ids,
        };
        let last = plan.steps.len().saturating_sub(1);
        let mut node = if plan.sources.is_empty() {
            let n = Node::leaf("Rows fetched before execution".into());
            self.note(n, plan, Slot::Block)
        } else if impossible(plan) {
            let n = Node::leaf("Zero rows (Impossible WHERE)".into());
            self.note_stage(n, plan, Slot::Join(last))
        } else {
            let j = self.join(plan, last, &names);
            match &plan.pre_filter {
                Some(pre) => {
                    let parts = pre.conjuncts();
                    let f =
                        Node::over(format!("Filter (once): {}", conjunction(&parts, &names)), j);
                    let f = self.note_stage(f, plan, Slot::Join(last));
                    self.attach(f, &parts, "condition", &names)
                }
                None => j,
            }
        };
        if plan.grouped {
            let aggs = plan
                .group_aggs()
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
                .chain(plan.group_aggs().iter().flat_map(|a| a.exprs()))
                .collect();
            let group = self.note_stage(Node::over(label, node), plan, Slot::Groups);
            node = self.attach(group, &group_exprs, "group by", &names);
        }
        if let Some(h) = &plan.having {
            let f = Node::over(format!("Filter: {}", conjunction(&[h], &names)), node);
            let f = self.note_stage(f, plan, Slot::Having);
            node = self.attach(f, &[h], "condition", &names);
        }
        node = window_steps(plan, node, &names, &|n| {
            self.note_stage(n, plan, Slot::Having)
        });
        if plan.distinct {
            node = self.note_stage(
                Node::over("Deduplicate (hash)".into(), node),
                plan,
                Slot::Distinct,
            );
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
            node = self.note_stage(
                Node::over(format!("Sort: {keys}"), node),
                plan,
                Slot::Distinct,
            );
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
            node = self.note(Node::over(label, node), plan, Slot::Block);
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
    let b = TreeBuilder {
        ids,
        qualify: true,
        profile: None,
    };
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
                profile: None,
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
                        profile: None,
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
        // A multi-table UPDATE / DELETE: its targets over the join, which is
        // read whole before the first write.
        Plan::Update(crate::plan::UpdatePlan { multi: Some(m), .. })
        | Plan::Delete(crate::plan::DeletePlan { multi: Some(m), .. }) => {
            let verb = if matches!(plan, Plan::Update(_)) {
                "Update"
            } else {
                "Delete from"
            };
            let names: Vec<&str> = m
                .targets
                .iter()
                .map(|t| t.table.def.name.as_str())
                .collect();
            let q = &m.select;
            number(q, &mut ids);
            let b = TreeBuilder {
                ids: &ids,
                qualify: q.table.is_none(),
                profile: None,
            };
            Node::over(
                format!("{verb} {} (multi-table)", names.join(", ")),
                Node::over("Materialize".into(), b.block(q, (&[], &[]))),
            )
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

/// EXPLAIN ANALYZE's tree of a SELECT that ran: [`tree`]'s nodes, each
/// annotated with what `profile` measured for it.
pub fn analyzed(plan: &SelectPlan, profile: &Profile) -> String {
    let mut ids = Ids::new();
    number(plan, &mut ids);
    let b = TreeBuilder {
        ids: &ids,
        qualify: plan.table.is_none(),
        profile: Some(profile),
    };
    let mut out = String::new();
    b.block(plan, (&[], &[])).render(0, &mut out);
    out
}

/// The window step of a block (`crate::exec::window`), as MySQL 8 shows it:
/// per sort the calls share, `Window aggregate: calls` over `Sort: keys`
/// (no sort for a window without PARTITION BY and ORDER BY).
#[inline(never)]
fn window_steps(
    plan: &SelectPlan,
    mut node: Node,
    names: &Names<'_>,
    noted: &dyn Fn(Node) -> Node,
) -> Node {
    let calls = plan.windows();
    let mut done = vec![false; calls.len()];
    for k in 0..calls.len() {
        let Some(w) = calls[k].window.as_deref() else {
            continue;
        };
        if done[k] {
            continue;
        }
        let mut texts = Vec::new();
        for j in k..calls.len() {
            if !done[j] && calls[j].window.as_deref().is_some_and(|o| o.same_sort(w)) {
                done[j] = true;
                texts.push(agg_text(&calls[j], names));
            }
        }
        let keys: Vec<String> = w
            .partition
            .iter()
            .map(|(e, _)| expr(e, names))
            .chain(w.order.iter().map(|(e, desc, _)| {
                let e = expr(e, names);
                if *desc {
                    format!("{e} DESC")
                } else {
                    e
                }
            }))
            .collect();
        if !keys.is_empty() {
            node = Node::over(format!("Sort: {}", keys.join(", ")), node);
        }
        node = noted(Node::over(
            format!("Window aggregate: {}", texts.join(", ")),
            node,
        ));
    }
    node
}
