//! Collations of comparisons: MySQL's coercibility rules as the binder applies
//! them (see "Collations" on [`Binder`]). [`Binder::derive`] gives a string
//! expression's collation and coercibility level; the binder's `collate` marks
//! the operands of one comparison-like operation (`=`, IN, BETWEEN, LIKE, a
//! CASE operand) with the collation [`aggregate_collations`] chooses.
//!
//! A file apart from [`bind`](super::bind) because these rules are one piece,
//! read on their own against MySQL's (`DTCollation::aggregate`), whichever
//! form of the AST the binder is binding. (The evaluator's side, which
//! collation an operator compares under once the binder has marked its
//! operands, is `comparison_collation` in `crate::expr::eval`.)

use crate::expr::functions;
use crate::expr::{AggFunc, Expr, SubqueryKind};
use crate::plan::bind::Binder;
use crate::types::collation::Collation;
use crate::types::value::Value;
use crate::types::ExprKind;
use canyon_common::{Error, Result};

impl Binder<'_> {
    /// The collation of frame position `pos`, if it holds a string.
    fn column_collation(&self, pos: usize) -> Option<Collation> {
        self.scopes
            .iter()
            .rev()
            .find(|s| pos >= s.offset && pos < s.offset + s.colls.len())
            .and_then(|s| s.colls[pos - s.offset])
    }

    /// The collation and coercibility (MySQL's levels: 0 explicit, 2 column,
    /// 3 system constant, 4 literal) of a string-valued expression; `None` when
    /// its value is not a string.
    pub fn derive(&self, e: &Expr) -> Option<(Collation, u8)> {
        match e {
            // A binary string literal (`_binary'..'`) is as coercible as any
            // literal, CAST(.. AS BINARY) as a column; COLLATE is explicit.
            Expr::Collate(inner, Collation::Binary)
                if matches!(inner.as_ref(), Expr::Literal(_)) =>
            {
                Some((Collation::Binary, 4))
            }
            Expr::Collate(inner, Collation::Binary) if matches!(inner.as_ref(), Expr::Func(..)) => {
                Some((Collation::Binary, 2))
            }
            Expr::Collate(_, c) => Some((*c, 0)),
            Expr::Column(i) | Expr::Bound(i) => self.column_collation(*i).map(|c| (c, 2)),
            Expr::Literal(Value::Bytes(_)) | Expr::Param(_) | Expr::UserVar(_) => {
                Some((self.conn_coll, 4))
            }
            Expr::SysVar(name) => (crate::catalog::vars::kind(name) == ExprKind::String)
                .then_some((self.conn_coll, 3)),
            Expr::Agg(i) => {
                let a = self.aggs.get(*i)?;
                match a.func {
                    AggFunc::Min
                    | AggFunc::Max
                    | AggFunc::GroupConcat
                    | AggFunc::Lag
                    | AggFunc::Lead
                    | AggFunc::FirstValue
                    | AggFunc::LastValue
                    | AggFunc::NthValue => self.derive(a.arg.as_ref()?),
                    _ => None,
                }
            }
            Expr::Case {
                whens, otherwise, ..
            } => Self::aggregate_derived(
                whens
                    .iter()
                    .map(|(_, r)| r)
                    .chain(otherwise.as_deref())
                    .filter_map(|r| self.derive(r))
                    .collect(),
            ),
            Expr::Func(f, args) => {
                let kinds = self.frame_kinds();
                if functions::result_kind(*f, args, &kinds, &self.aggs) != ExprKind::String {
                    return None;
                }
                Self::aggregate_derived(args.iter().filter_map(|a| self.derive(a)).collect())
                    .or(Some((self.conn_coll, 4)))
            }
            Expr::Subquery(sq) if sq.kind == SubqueryKind::Scalar => {
                sq.plan.colls().first().copied().flatten().map(|c| (c, 2))
            }
            _ => None,
        }
    }

    /// The collation of a result made from strings of collations `ds` (CASE
    /// branches, a function's arguments): MySQL's aggregation, so that
    /// `COALESCE(ci_col, bin_col)` is `_bin` like `ci_col = bin_col`; where
    /// the aggregation fails (1267 in a comparison), the most explicit one.
    fn aggregate_derived(ds: Vec<(Collation, u8)>) -> Option<(Collation, u8)> {
        let level = ds.iter().map(|d| d.1).min()?;
        match aggregate_collations(&ds, "") {
            Ok(c) => Some((c, level)),
            Err(_) => ds.into_iter().min_by_key(|d| d.1),
        }
    }

    /// Decides the collation of one comparison-like operation over `ops` and
    /// marks the operands with it (see "Collations" above); `op` names the
    /// operation for error 1267.
    pub(super) fn collate(&self, ops: &mut [&mut Expr], op: &str) -> Result<()> {
        let mut derived = Vec::with_capacity(ops.len());
        for o in ops.iter() {
            // NULL takes no part (MySQL's coercibility 6, IGNORABLE): `ci_col
            // IN ('ABC', NULL)` still compares under the column's collation.
            if matches!(**o, Expr::Literal(Value::Null)) {
                continue;
            }
            match self.derive(o) {
                Some(d) => derived.push(d),
                // Not all strings: MySQL's type rules, no collation.
                None => return Ok(()),
            }
        }
        if derived.is_empty() {
            return Ok(());
        }
        let chosen = aggregate_collations(&derived, op)?;
        for o in ops.iter_mut() {
            if matches!(**o, Expr::Literal(Value::Null)) {
                continue;
            }
            let mut inner = std::mem::replace(&mut **o, Expr::Literal(Value::Null));
            while let Expr::Collate(x, _) = inner {
                inner = *x;
            }
            **o = if chosen.is_bytewise() {
                inner
            } else {
                Expr::Collate(Box::new(inner), chosen)
            };
        }
        Ok(())
    }

    /// [`Binder::collate`] for `a op b`, component-wise for row values.
    pub(super) fn collate_pair(&self, a: &mut Expr, b: &mut Expr, op: &str) -> Result<()> {
        match (a, b) {
            (Expr::Row(xs), Expr::Row(ys)) if xs.len() == ys.len() => {
                for (x, y) in xs.iter_mut().zip(ys.iter_mut()) {
                    self.collate(&mut [x, y], op)?;
                }
                Ok(())
            }
            (Expr::Row(_), _) | (_, Expr::Row(_)) => Ok(()),
            (a, b) => self.collate(&mut [a, b], op),
        }
    }
}

/// MySQL's collation aggregation for one operation: binary wins; otherwise
/// the lowest coercibility level, which must name one collation (1267).
pub fn aggregate_collations(d: &[(Collation, u8)], op: &str) -> Result<Collation> {
    let Some(min) = d.iter().map(|x| x.1).min() else {
        return Ok(Collation::Binary);
    };
    // A binary string decides only from the winning level (MySQL's
    // DTCollation::aggregate): `ci_column = _binary'x'` compares under the
    // column's collation.
    if d.iter().any(|x| x.1 == min && x.0 == Collation::Binary) {
        return Ok(Collation::Binary);
    }
    let mut at_min = d.iter().filter(|x| x.1 == min);
    let Some(&(first, _)) = at_min.next() else {
        return Ok(Collation::Binary);
    };
    if let Some(&(other, _)) = at_min.find(|x| x.0 != first) {
        let others: Vec<Collation> = d.iter().filter(|x| x.1 == min).map(|x| x.0).collect();
        // MySQL: within one character set a `_bin` collation wins over `_ci`
        // ones; across Unicode sets the superset (utf8mb4) wins.
        let bin = others
            .iter()
            .find(|c| !c.is_ci() && others.iter().all(|o| o.charset() == c.charset()));
        if let Some(b) = bin {
            return Ok(*b);
        }
        let mb4: Vec<&Collation> = others.iter().filter(|c| c.charset() == "utf8mb4").collect();
        if let [only, rest @ ..] = mb4.as_slice() {
            if rest.iter().all(|c| *c == *only) {
                return Ok(**only);
            }
        }
        if min >= 3 {
            // Constants of two connections' collations cannot meet; take the first.
            return Ok(first);
        }
        let level = |l: u8| match l {
            0 => "EXPLICIT",
            1 => "NONE",
            2 => "IMPLICIT",
            3 => "SYSCONST",
            _ => "COERCIBLE",
        };
        return Err(Error::IllegalMixOfCollations(format!(
            "({},{}) and ({},{}) for operation '{op}'",
            first.name(),
            level(min),
            other.name(),
            level(min)
        )));
    }
    Ok(first)
}
