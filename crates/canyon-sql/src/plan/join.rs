//! The join of one query block (step 7 of planning it, see
//! [`crate::plan::select`], "Join steps", "Join order" and "Predicates"):
//! conjuncts pushed into derived tables and `information_schema` generators,
//! the greedy join order, and each step's access path, hash keys and
//! predicates.

use crate::expr::Expr;
use crate::plan::access::{choose_access_estimated, choose_access_hinted, Access};
use crate::plan::from::{is_lateral, FromItem};
use crate::plan::select::{Source, SourceKind, Step};
use crate::types::ExprKind;
use canyon_common::{Error, Result};

/// The sources (indexes) an expression reads; `None` when it holds a correlated
/// subquery, which may read any of them.
fn sources_read(e: &Expr, sources: &[Source]) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    let mut correlated = false;
    e.visit_columns(
        &mut |g| {
            if let Some(i) = sources
                .iter()
                .position(|s| g >= s.offset && g < s.offset + s.width)
            {
                if !out.contains(&i) {
                    out.push(i);
                }
            }
        },
        &mut |sq| correlated |= sq.correlated,
    );
    (!correlated).then_some(out)
}

/// Pushes WHERE conjuncts that read one derived table's columns into it, so
/// that `SELECT ... FROM (SELECT k, COUNT(*) FROM t GROUP BY k) d WHERE d.k = ?`
/// reads only the matching rows of `t` through its keys instead of grouping the
/// whole table. A conjunct moves when the derived table reads a single base
/// table (the single-table path), has no LIMIT, OFFSET or HAVING, every column
/// the conjunct reads is an output column that is a plain column of that table
/// and, when the derived table groups, one of its GROUP BY columns (a filter on
/// a grouping column removes whole groups, so it commutes with grouping). The
/// conjunct also stays where it was; it is then true on every row anyway.
pub(super) fn push_into_derived(sources: &mut [Source], items: &[FromItem], filter: &Expr) {
    for c in filter.conjuncts() {
        if c.has_subquery() || c.has_agg() {
            continue;
        }
        let Some(read) = sources_read(c, sources) else {
            continue;
        };
        let [s] = read.as_slice() else {
            continue;
        };
        if in_outer_join(items, *s) {
            // WHERE on a LEFT JOIN's inner side also sees NULL-extended rows.
            continue;
        }
        let (off, width) = (sources[*s].offset, sources[*s].width);
        let SourceKind::Derived(d) = &mut sources[*s].kind else {
            continue;
        };
        let Some(table) = d.table.clone() else {
            continue;
        };
        // A filter pushed under a window function would change the rows it
        // ranks (MySQL pushes only on PARTITION BY columns; Canyon not at all).
        if d.limit.is_some() || d.offset.is_some() || d.having.is_some() || !d.windows().is_empty()
        {
            continue;
        }
        let mut ok = true;
        c.visit_columns(
            &mut |g| {
                let inner = g
                    .checked_sub(off)
                    .filter(|i| *i < width)
                    .and_then(|i| d.projection.get(i));
                ok &= match inner {
                    Some(e @ Expr::Column(_)) => !d.grouped || d.group_by.contains(e),
                    _ => false,
                };
            },
            &mut |_| {},
        );
        if !ok {
            continue;
        }
        let projection = d.projection.clone();
        let pushed = c.rewrite(&|x| match x {
            Expr::Column(g) if *g >= off && *g < off + width => Some(projection[*g - off].clone()),
            _ => None,
        });
        let and = |a: Option<Expr>, b: Expr| match a {
            Some(a) => Expr::Binary(crate::expr::BinOp::And, Box::new(a), Box::new(b)),
            None => b,
        };
        let new_filter = and(d.filter.take(), pushed.clone());
        let (access, _, _) = choose_access_estimated(&table, Some(&new_filter));
        d.access = access.clone();
        if let Some(step) = d.steps.first_mut() {
            // A derived table runs through the join steps (select.rs).
            step.access = access;
            step.filter = Some(and(step.filter.take(), pushed));
        }
        d.filter = Some(new_filter);
    }
}

/// Pushes conjuncts `TABLE_SCHEMA = const` / `TABLE_NAME IN (consts)` on an
/// `information_schema` source into its generator, so that it visits only the
/// named databases and tables (see [`crate::catalog::infoschema`]). Taken from WHERE
/// (unless the source is a LEFT JOIN's inner side, where WHERE also sees
/// NULL-extended rows) and from the source's own ON condition (an ON conjunct
/// that reads only the inner source filters it before the match decision, for
/// inner and LEFT joins alike). The conjunct also stays where it was: the
/// generator may return a superset.
pub(super) fn push_into_system(sources: &mut [Source], items: &[FromItem], filter: Option<&Expr>) {
    if !sources
        .iter()
        .any(|s| matches!(s.kind, SourceKind::System(_)))
    {
        return;
    }
    let mut candidates: Vec<(Option<usize>, &Expr)> = Vec::new();
    if let Some(f) = filter {
        candidates.extend(f.conjuncts().into_iter().map(|c| (None, c)));
    }
    for (i, it) in items.iter().enumerate() {
        if let Some(on) = &it.on {
            candidates.extend(on.conjuncts().into_iter().map(|c| (Some(i), c)));
        }
    }
    for (from_on, c) in candidates {
        if c.has_subquery() || c.has_agg() {
            continue;
        }
        let Some(read) = sources_read(c, sources) else {
            continue;
        };
        let [s] = read.as_slice() else {
            continue;
        };
        let allowed = match from_on {
            None => !in_outer_join(items, *s),
            Some(i) => i == *s,
        };
        if !allowed {
            continue;
        }
        let (lo, hi) = (sources[*s].offset, sources[*s].offset + sources[*s].width);
        let SourceKind::System(sys) = &mut sources[*s].kind else {
            continue;
        };
        let local = c.rewrite(&|x| match x {
            Expr::Column(g) if *g >= lo && *g < hi => Some(Expr::Column(g - lo)),
            _ => None,
        });
        sys.push(&local);
    }
}

/// Whether source `s` is on the inner side of a LEFT JOIN (any of the
/// `span` sources a left item starts).
fn in_outer_join(items: &[FromItem], s: usize) -> bool {
    items
        .iter()
        .enumerate()
        .any(|(t, it)| it.left && t <= s && s < t + it.span)
}

/// A LEFT JOIN's inner side: the sources `start..end`.
type Group = (usize, usize);

/// Where a conjunct is checked: at step `k`'s filter (`Filter`, before a
/// LEFT JOIN's match decision when `k` starts one), or at the post filter
/// of the step that starts a LEFT JOIN's inner side (`Post`, after it).
/// The conjunct belongs to `scope` (the LEFT JOIN whose inner side holds
/// the condition it came from; `None`: WHERE, or an inner join outside
/// every LEFT JOIN): it is checked within that scope, at the first
/// position where every source it reads is bound, and after the match
/// decision of every LEFT JOIN nested in the scope whose NULLs it may see
/// (the outermost one holding that position).
enum Place {
    Pre,
    Filter(usize),
    Post(usize),
}

fn place(
    c: &Expr,
    scope: Option<Group>,
    sources: &[Source],
    order: &[usize],
    groups: &[Group],
) -> Place {
    let n = order.len();
    let pos_of = |s: usize| order.iter().position(|&x| x == s).unwrap_or(0);
    let k = match (sources_read(c, sources), scope) {
        (Some(read), None) if read.is_empty() => return Place::Pre,
        (None, None) if n == 0 => return Place::Pre,
        (None, None) => n - 1,
        (None, Some((lo, hi))) => (lo..hi).map(pos_of).max().unwrap_or(0),
        (Some(read), scope) => read
            .iter()
            .map(|&s| pos_of(s))
            .chain(scope.map(|g| pos_of(g.0)))
            .max()
            .unwrap_or(0),
    };
    let at = order.get(k).copied().unwrap_or(0);
    let inside = |h: &Group| match scope {
        None => true,
        Some(g) => *h != g && g.0 <= h.0 && h.1 <= g.1,
    };
    let outermost = groups
        .iter()
        .filter(|h| h.0 <= at && at < h.1 && inside(h))
        .min_by_key(|h| (h.0, std::cmp::Reverse(h.1)));
    match outermost {
        Some(h) => Place::Post(pos_of(h.0)),
        None => Place::Filter(k),
    }
}

/// ANDs expressions together.
fn and_all(mut parts: Vec<Expr>) -> Option<Expr> {
    let first = if parts.is_empty() {
        return None;
    } else {
        parts.remove(0)
    };
    Some(parts.into_iter().fold(first, |acc, e| {
        Expr::Binary(crate::expr::BinOp::And, Box::new(acc), Box::new(e))
    }))
}

/// Rewrites a conjunct into `src`'s local terms for access-path analysis: its
/// columns become local positions, columns of placed sources (and of enclosing
/// queries) become `Bound`. `None` when it reads an unplaced source or holds a
/// subquery or an aggregate.
fn localize(
    e: &Expr,
    src: &Source,
    placed: &[bool],
    outer_len: usize,
    sources: &[Source],
) -> Option<Expr> {
    if e.has_subquery() || e.has_agg() {
        return None;
    }
    let mut ok = true;
    e.visit_columns(
        &mut |g| {
            let own = g >= src.offset && g < src.offset + src.width;
            let bound = g < outer_len
                || sources
                    .iter()
                    .enumerate()
                    .any(|(i, s)| placed[i] && g >= s.offset && g < s.offset + s.width);
            ok &= own || bound;
        },
        &mut |_| {},
    );
    if !ok {
        return None;
    }
    let (lo, hi) = (src.offset, src.offset + src.width);
    Some(e.rewrite(&|x| match x {
        Expr::Column(g) if *g >= lo && *g < hi => Some(Expr::Column(g - lo)),
        Expr::Column(g) => Some(Expr::Bound(*g)),
        _ => None,
    }))
}

/// Kind classes whose values compare equal exactly when their hash keys do.
fn hash_class(k: ExprKind) -> Option<u8> {
    match k {
        ExprKind::Int | ExprKind::UInt | ExprKind::Decimal(_) | ExprKind::Double => Some(0),
        ExprKind::String => Some(1),
        ExprKind::Date | ExprKind::DateTime => Some(2),
        _ => None,
    }
}

/// Equality conjuncts `src.col = expr over placed sources`, usable as hash keys
/// (only when both sides' kinds compare exactly as their hash keys do).
fn hash_keys(
    conjuncts: &[&Expr],
    src: &Source,
    placed: &[bool],
    outer_len: usize,
    sources: &[Source],
    frame_kinds: &[ExprKind],
) -> Vec<(usize, Expr)> {
    let own = |g: usize| g >= src.offset && g < src.offset + src.width;
    let mut keys = Vec::new();
    for c in conjuncts {
        let Expr::Binary(crate::expr::BinOp::Eq, a, b) = c else {
            continue;
        };
        for (x, y) in [(a, b), (b, a)] {
            // Under a collation both sides carry it; the probe keeps its
            // marker, which tells the hash table to key strings by their
            // collation's sort keys.
            let x = match x.as_ref() {
                Expr::Collate(inner, _) => inner.as_ref(),
                x => x,
            };
            let Expr::Column(g) = x else {
                continue;
            };
            if !own(*g) || y.has_subquery() || y.has_agg() {
                continue;
            }
            // The probe must read bound columns, and only those: a constant
            // probe gains nothing over reading the source with the condition.
            let mut ok = true;
            let mut reads = false;
            y.visit_columns(
                &mut |h| {
                    reads = true;
                    ok &= h < outer_len
                        || sources
                            .iter()
                            .enumerate()
                            .any(|(i, s)| placed[i] && h >= s.offset && h < s.offset + s.width)
                },
                &mut |_| {},
            );
            if !ok || !reads {
                continue;
            }
            let kx = frame_kinds.get(*g).copied().unwrap_or(ExprKind::Null);
            match (hash_class(kx), hash_class(y.kind(frame_kinds, &[]))) {
                (Some(p), Some(q)) if p == q => {
                    keys.push((*g - src.offset, y.as_ref().clone()));
                    break;
                }
                _ => {}
            }
        }
    }
    keys
}

/// The expected rows of an access path ranked `score` when the table has no
/// statistics: an order of magnitude per rank (see `crate::plan::access`).
fn shape_cost(score: u32) -> f64 {
    match score {
        900.. => 1.0,
        500.. => 10.0,
        300.. => 30.0,
        200.. => 100.0,
        100.. => 300.0,
        _ => 1e6,
    }
}

/// Chooses the join order and each step's access path and predicates.
/// With `fixed_order` (or a LEFT JOIN whose inner side is several sources)
/// the order is FROM order, as RIGHT JOIN's swap left it; otherwise greedy.
pub(super) fn plan_joins(
    sources: &[Source],
    items: &[FromItem],
    fixed_order: bool,
    filter: Option<&Expr>,
    outer_len: usize,
    frame_kinds: &[ExprKind],
) -> Result<(Vec<Step>, Option<Expr>)> {
    let n = sources.len();
    let fixed = fixed_order || items.iter().any(|i| i.span > 1);
    let groups: Vec<Group> = items
        .iter()
        .enumerate()
        .filter(|(_, i)| i.left)
        .map(|(s, i)| (s, s + i.span))
        .collect();
    // Every condition with the LEFT JOIN it belongs to (see `Place`): an
    // item's ON belongs to the innermost LEFT JOIN holding the item (its
    // own, for a LEFT JOIN's first inner source).
    let innermost = |s: usize| {
        groups
            .iter()
            .filter(|g| g.0 <= s && s < g.1)
            .max_by_key(|g| g.0)
            .copied()
    };
    let mut conditions: Vec<(&Expr, Option<Group>)> = filter
        .map(|f| f.conjuncts())
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c, None))
        .collect();
    for (s, it) in items.iter().enumerate() {
        if let Some(on) = &it.on {
            let scope = innermost(s);
            conditions.extend(on.conjuncts().into_iter().map(|c| (c, scope)));
        }
    }
    // Conditions outside every LEFT JOIN behave like WHERE conjuncts.
    let general: Vec<&Expr> = conditions
        .iter()
        .filter(|(_, g)| g.is_none())
        .map(|(c, _)| *c)
        .collect();
    // With the written order the predicates of each step are known first.
    let fixed_places: Vec<Vec<&Expr>> = if fixed {
        let order: Vec<usize> = (0..n).collect();
        let mut at = vec![Vec::new(); n];
        for (c, scope) in &conditions {
            if let Place::Filter(k) = place(c, *scope, sources, &order, &groups) {
                at[k].push(*c);
            }
        }
        at
    } else {
        Vec::new()
    };

    let mut placed = vec![false; n];
    let mut order: Vec<usize> = Vec::with_capacity(n);
    let mut accesses: Vec<Option<(Access, Vec<(usize, Expr)>, bool)>> =
        (0..n).map(|_| None).collect();
    while order.len() < n {
        let mut best: Option<(usize, f64)> = None;
        for s in 0..n {
            if placed[s] {
                continue;
            }
            // The written order, or LEFT JOIN barriers.
            let allowed = if fixed {
                s == order.len()
            } else if items[s].left {
                (0..s).all(|t| placed[t])
            } else {
                (0..s).all(|t| !items[t].left || placed[t])
            };
            if !allowed {
                continue;
            }
            let conj: Vec<&Expr> = if fixed {
                fixed_places[s].clone()
            } else if items[s].left {
                items[s]
                    .on
                    .as_ref()
                    .map(|o| o.conjuncts())
                    .unwrap_or_default()
            } else {
                general.clone()
            };
            let (score, acc) = match &sources[s].kind {
                SourceKind::Table(t) => {
                    let local: Vec<Expr> = conj
                        .iter()
                        .filter_map(|c| localize(c, &sources[s], &placed, outer_len, sources))
                        .collect();
                    let (access, score, est) = choose_access_hinted(
                        t,
                        and_all(local).as_ref(),
                        sources[s].index_hints.as_ref(),
                    );
                    // A read that does not depend on the bound columns would be
                    // repeated identically for every outer row (or every run of
                    // a correlated subquery): read it once and probe a hash table
                    // on the equalities with bound columns instead.
                    let repeated = !order.is_empty() || outer_len > 0;
                    let keys = if repeated && !access.reads_bound() {
                        hash_keys(&conj, &sources[s], &placed, outer_len, sources, frame_kinds)
                    } else {
                        Vec::new()
                    };
                    let cost = est.unwrap_or_else(|| shape_cost(score));
                    if keys.is_empty() {
                        (cost, (access, Vec::new(), false))
                    } else {
                        // A hash probe finds the matching rows at once.
                        let probe = if access.full_scan {
                            10.0
                        } else {
                            cost.min(10.0)
                        };
                        (probe, (access, keys, true))
                    }
                }
                SourceKind::System(sys) => {
                    let keys =
                        hash_keys(&conj, &sources[s], &placed, outer_len, sources, frame_kinds);
                    // Generated rows: a few when the generator is given table
                    // names, a database's worth with a schema, else everything.
                    let est: f64 = match sys.selective() {
                        (_, true) => 3.0,
                        (true, false) => 1e3,
                        (false, false) => 1e4,
                    };
                    (
                        if keys.is_empty() { est } else { est.min(10.0) },
                        (Access::scan(), keys, true),
                    )
                }
                // A LATERAL derived table runs again for each row of the
                // sources before it: nothing to hash once.
                SourceKind::Derived(_) if is_lateral(&sources[s]) => {
                    (1e5, (Access::scan(), Vec::new(), true))
                }
                SourceKind::Derived(_) | SourceKind::SetOp(_) | SourceKind::WorkTable(_) => {
                    let keys =
                        hash_keys(&conj, &sources[s], &placed, outer_len, sources, frame_kinds);
                    // A derived table's size is unknown until it runs: prefer
                    // it early only when it is probed through a hash table.
                    (
                        if keys.is_empty() { 1e5 } else { 10.0 },
                        (Access::scan(), keys, true),
                    )
                }
            };
            // Fewest expected rows per outer row first; ties keep FROM order.
            if best.is_none_or(|(_, b)| score < b) {
                best = Some((s, score));
                accesses[s] = Some(acc);
            }
        }
        let (s, _) = best.ok_or_else(|| Error::Internal("no joinable source".into()))?;
        placed[s] = true;
        order.push(s);
    }

    // Predicates per step.
    let pos_of = |s: usize| order.iter().position(|&x| x == s).unwrap_or(0);
    let mut filters: Vec<Vec<Expr>> = vec![Vec::new(); n];
    let mut posts: Vec<Vec<Expr>> = vec![Vec::new(); n];
    let mut pre: Vec<Expr> = Vec::new();
    for (c, scope) in &conditions {
        match place(c, *scope, sources, &order, &groups) {
            Place::Pre => pre.push((*c).clone()),
            Place::Filter(k) => filters[k].push((*c).clone()),
            Place::Post(k) => posts[k].push((*c).clone()),
        }
    }
    let mut steps = Vec::with_capacity(n);
    for (k, &s) in order.iter().enumerate() {
        let (access, hash_keys, materialize) = accesses[s]
            .take()
            .unwrap_or_else(|| (Access::scan(), Vec::new(), false));
        let fulltext = fulltext_driver(
            &sources[s],
            &access,
            materialize,
            items[s].left,
            &filters[k],
        );
        // The written order keeps a LEFT JOIN's inner side contiguous.
        let group_end = if items[s].left {
            pos_of(s) + items[s].span
        } else {
            k + 1
        };
        debug_assert!(group_end <= n, "a LEFT JOIN's inner side ends in the block");
        steps.push(Step {
            source: s,
            access,
            hash_keys,
            materialize,
            filter: and_all(std::mem::take(&mut filters[k])),
            left: items[s].left,
            group_end,
            post_filter: and_all(std::mem::take(&mut posts[k])),
            fulltext,
        });
    }
    Ok((steps, and_all(pre)))
}

/// The MATCH that drives a step's read through its FULLTEXT index: a
/// `MATCH ... AGAINST` over the step's own table that is one of the step's
/// WHERE conjuncts, when the step would otherwise scan the whole table (an
/// inner step, not materialised). Only the rows the index finds for the
/// search's words can pass the conjunct (rank 0 fails it), and the step's
/// filter still checks it on each, so reading just those rows is exact.
fn fulltext_driver(
    source: &Source,
    access: &Access,
    materialize: bool,
    left: bool,
    filters: &[Expr],
) -> Option<Box<crate::expr::MatchExpr>> {
    let SourceKind::Table(t) = &source.kind else {
        return None;
    };
    if left || materialize || !access.full_scan {
        return None;
    }
    filters.iter().find_map(|c| match c {
        Expr::Match(m) if m.table.def.id == t.def.id => Some(m.clone()),
        _ => None,
    })
}
