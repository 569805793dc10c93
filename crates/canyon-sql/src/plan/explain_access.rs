//! EXPLAIN, shared by both forms (see [`crate::plan::explain`]): what a
//! table read shows of its access path (the traditional `type`, `key`,
//! `key_len`, `ref` and `rows`, and the kind of lookup the tree names), and
//! which conditions its key ranges do not already enforce.

use crate::catalog::{ColumnDef, Table};
use crate::expr::{BinOp, Expr};
use crate::plan::access::{Access, RangeSpec, Target};
use crate::plan::explain_names::Names;
use crate::plan::select::{SelectPlan, SourceKind, Step};
use crate::types::SqlType;

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
        SqlType::Int { .. } | SqlType::Float { .. } => 4,
        SqlType::BigInt { .. } | SqlType::Double { .. } => 8,
        SqlType::Decimal {
            precision, scale, ..
        } => {
            let (p, s) = (precision as u32, scale as u32);
            decimal_digits(p.saturating_sub(s)) + decimal_digits(s)
        }
        SqlType::Char(n) => n * 4,
        SqlType::VarChar(n) => n * 4 + 2,
        SqlType::Binary(n) => n,
        SqlType::VarBinary(n) => n + 2,
        SqlType::Text(_) | SqlType::Blob(_) | SqlType::Json => 3072 + 2,
        SqlType::Date => 3,
        SqlType::DateTime(_) => 5,
        SqlType::Timestamp(_) => 4,
        SqlType::Bit(n) => (n as u32).div_ceil(8),
        SqlType::Year => 1,
        SqlType::Time(_) => 3,
        // InnoDB keys an ENUM by its 1- or 2-byte index, a SET by its 1 to
        // 8-byte bitmask.
        SqlType::Enum(m) => 1 + u32::from(m.values.len() > 255),
        SqlType::Set(m) => match m.values.len().div_ceil(8) {
            0 => 1,
            n @ 1..=4 => n as u32,
            _ => 8,
        },
    };
    base + u32::from(c.nullable)
}

/// How many key parts a range uses: its equalities, plus the bounded column.
fn parts_used(r: &RangeSpec) -> usize {
    r.eq.len() + usize::from(r.lower.is_some() || r.upper.is_some())
}

/// The traditional columns that describe one table read.
pub(super) struct AccessInfo {
    pub(super) ty: &'static str,
    pub(super) key: Option<String>,
    pub(super) key_len: Option<String>,
    pub(super) refs: Option<String>,
    pub(super) rows: Option<i64>,
}

impl AccessInfo {
    /// A scan of rows materialised by the statement itself (a derived table,
    /// a set operation's result, generated catalog rows): no key, no estimate.
    pub(super) fn materialized() -> AccessInfo {
        AccessInfo {
            ty: "ALL",
            key: None,
            key_len: None,
            refs: None,
            rows: None,
        }
    }
}

pub(super) fn key_name(t: &Table, a: &Access) -> String {
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
pub(super) enum Lookup {
    Const,
    EqRef,
    Ref,
    Range,
    Scan,
}

pub(super) fn lookup(t: &Table, a: &Access) -> Lookup {
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
/// statistics, see `crate::catalog::stats`); without statistics, 1 for a
/// single-row lookup, the row count DML keeps for a full scan (as MySQL
/// always estimates one: a 2-row table's scan shows 2), and unknown (NULL)
/// otherwise.
fn estimated_rows(t: &Table, a: &Access, kind: &Lookup) -> Option<i64> {
    match crate::plan::access::estimate_rows(t, a) {
        Some(r) => Some(r.round().max(1.0) as i64),
        None if *kind == Lookup::Scan => Some(t.stats.counted_rows().max(1) as i64),
        None => matches!(kind, Lookup::Const | Lookup::EqRef).then_some(1),
    }
}

pub(super) fn access_info(t: &Table, a: &Access, n: &Names<'_>) -> AccessInfo {
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

/// The names of the key columns a read uses (MySQL's `used_key_parts`):
/// as many as `key_len` counts; none for a full scan.
pub(super) fn used_key_parts(t: &Table, a: &Access) -> Vec<String> {
    if lookup(t, a) == Lookup::Scan {
        return Vec::new();
    }
    let used = a.ranges.iter().map(parts_used).max().unwrap_or(0);
    a.key_columns(t)
        .iter()
        .take(used)
        .filter_map(|&c| t.def.columns.get(c).map(|c| c.name.clone()))
        .collect()
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
pub(super) fn enforced_by_access(c: &Expr, t: &Table, a: &Access) -> bool {
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
pub(super) fn residual<'p>(plan: &'p SelectPlan, step: &'p Step) -> Vec<&'p Expr> {
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
                SourceKind::Derived(_)
                | SourceKind::SetOp(_)
                | SourceKind::System(_)
                | SourceKind::WorkTable(_) => true,
            }
        })
        .collect()
}

/// Whether a step is a hash join (materialised once, probed on equalities).
pub(super) fn is_hash_step(step: &Step) -> bool {
    step.materialize && !step.hash_keys.is_empty()
}

/// The WHERE conjuncts of a single-table UPDATE / DELETE its access path does
/// not enforce.
pub(super) fn dml_residual<'f>(t: &Table, a: &Access, filter: Option<&'f Expr>) -> Vec<&'f Expr> {
    filter
        .map(|f| {
            f.conjuncts()
                .into_iter()
                .filter(|c| !enforced_by_access(c, t, a))
                .collect()
        })
        .unwrap_or_default()
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
            attrs: Default::default(),
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
            unsigned: false,
        };
        // MySQL: DECIMAL(12,2) is 6 bytes, DECIMAL(4,4) 2, DECIMAL(18,9) 8.
        assert_eq!(key_part_len(&col(dec(12, 2), false)), 6);
        assert_eq!(key_part_len(&col(dec(4, 4), false)), 2);
        assert_eq!(key_part_len(&col(dec(18, 9), false)), 8);
        assert_eq!(key_part_len(&col(SqlType::DateTime(0), true)), 6);
    }
}
