//! The numeric reading of ENUM and SET columns: where MySQL reads such a
//! column as its index or bitmask rather than its text, the binder wraps
//! the column in [`Func::EnumIndex`] / [`Func::SetMask`] (see
//! `crate::types::enumset` for why values are held as text).
//!
//! | where the column appears                               | reading          |
//! |--------------------------------------------------------|------------------|
//! | arithmetic (`c + 0`, `c * 2`, `-c`, `c & 1`, `~c`)      | index / bitmask  |
//! | compared (`=`, `<`, ..., IN, BETWEEN) with a number     | index / bitmask  |
//! | compared with a string, LIKE, string functions, MIN/MAX | text             |
//! | ORDER BY `c` (or its alias or position)                 | index / bitmask  |
//! | SUM / AVG, CAST(c AS SIGNED / UNSIGNED / DECIMAL / DOUBLE) | index / bitmask |
//! | results, GROUP BY, DISTINCT                             | text             |
//! | FIND_IN_SET(constant, c) of a SET column                | member position  |
//!
//! SUM / AVG and CAST to a number read the index / bitmask too. Not done:
//! UNION's ORDER BY over an ENUM output column (sorts by text); an ENUM column of a derived table (or of a
//! view that is not merged into the query) reads as text everywhere: a
//! derived source's scope carries no member list.
//!
//! A TIME column (held as its text, see `crate::types::datetime`) reads
//! the same way, in the same places, as MySQL's number `[-]HHMMSS[.ffffff]`
//! ([`Func::TimeNumber`]): `c + 0`, `c = 000400`, `-c`, CAST(c AS SIGNED),
//! SUM(c) and ORDER BY c (which then sorts by time, not by text). A TIME
//! column compared with a string or another TIME compares as times, as
//! MySQL does (`c < '000009'` reads the string as 00:00:09, `-838:59:59`
//! sorts first): both sides become `TimeNumber(x, 6)`, whose order is the
//! times' order. Such a comparison is not answered from a key, except an
//! equality with a constant that is a time the column holds exactly
//! (`c = 59`, `c = '100:04:04'`): the constant becomes the column's text for
//! that time, which compares equal exactly when the times are, and which a
//! key on the column finds (`time_key_constant`).

use crate::expr::functions::Func;
use crate::expr::{BinOp, Expr};
use crate::plan::bind::Binder;
use crate::types::value::Value;
use crate::types::{ExprKind, SqlType};

impl Binder<'_> {
    /// The ENUM / SET / TIME type of `e` when it is such a column (possibly
    /// under a COLLATE the binder added).
    pub(super) fn member_type(&self, e: &Expr) -> Option<SqlType> {
        let pos = match e {
            Expr::Column(i) | Expr::Bound(i) => *i,
            Expr::Collate(inner, _) => return self.member_type(inner),
            _ => return None,
        };
        self.scopes
            .iter()
            .rev()
            .find(|s| pos >= s.offset && pos < s.offset + s.columns.len())
            .and_then(|s| s.member_types.get(pos - s.offset).copied().flatten())
    }

    /// `e`'s numeric reading if it is an ENUM / SET column, else `e`.
    pub(super) fn numeric_reading(&self, e: Expr) -> Expr {
        let Some(ty) = self.member_type(&e) else {
            return e;
        };
        let bare = |e: Expr| match e {
            Expr::Collate(inner, _) => *inner,
            other => other,
        };
        let (f, m) = match ty {
            SqlType::Enum(m) => (Func::EnumIndex, m),
            SqlType::Set(m) => (Func::SetMask, m),
            SqlType::Time(fsp) => {
                let fsp = Expr::Literal(Value::Int(fsp as i64));
                return Expr::Func(Func::TimeNumber, vec![bare(e), fsp]);
            }
            _ => return e,
        };
        let bare = bare(e);
        let mut args = Vec::with_capacity(m.values.len() + 1);
        args.push(bare);
        args.extend(m.values.iter().map(|v| Expr::Literal(Value::str(v))));
        Expr::Func(f, args)
    }

    /// Whether `e` is numeric (so that an ENUM / SET compared with it is
    /// compared by index or bitmask).
    pub(super) fn is_numeric(&self, e: &Expr) -> bool {
        matches!(
            e.kind(&self.frame_kinds(), &self.aggs),
            ExprKind::Int | ExprKind::UInt | ExprKind::Double | ExprKind::Decimal(_)
        )
    }

    /// The operands of binary operator `op` as MySQL reads an ENUM / SET
    /// column there: arithmetic and bit operators read both as numbers; a
    /// comparison reads the column as a number when the other side is one.
    pub(super) fn member_operands(&self, op: BinOp, l: &mut Box<Expr>, r: &mut Box<Expr>) {
        let (lm, rm) = (self.member_type(l).is_some(), self.member_type(r).is_some());
        if !lm && !rm {
            return;
        }
        let take = |e: &mut Box<Expr>| std::mem::replace(e.as_mut(), Expr::Literal(Value::Null));
        let arithmetic = matches!(
            op,
            BinOp::Add
                | BinOp::Sub
                | BinOp::Mul
                | BinOp::Div
                | BinOp::Mod
                | BinOp::IntDiv
                | BinOp::BitAnd
                | BinOp::BitOr
                | BinOp::BitXor
                | BinOp::Shl
                | BinOp::Shr
        );
        let comparison = op.is_comparison();
        if op == BinOp::Eq {
            // A TIME column equal to a constant time: the column's own text
            // for that time, which a key on the column can find.
            if let Some(c) = self.time_key_constant(l, r) {
                **r = c;
                return;
            }
            if let Some(c) = self.time_key_constant(r, l) {
                **l = c;
                return;
            }
        }
        if comparison && self.time_comparison(l, r) {
            let time = |e: Expr| {
                let bare = match e {
                    Expr::Collate(inner, _) => *inner,
                    other => other,
                };
                Expr::Func(Func::TimeNumber, vec![bare, Expr::Literal(Value::Int(6))])
            };
            let e = take(l);
            **l = time(e);
            let e = take(r);
            **r = time(e);
            return;
        }
        if lm && (arithmetic || comparison && self.is_numeric(r)) {
            let e = take(l);
            **l = self.numeric_reading(e);
        }
        if rm && (arithmetic || comparison && self.is_numeric(l)) {
            let e = take(r);
            **r = self.numeric_reading(e);
        }
    }

    /// For `col = constant` where `col` is a TIME(fsp) column and the
    /// constant (a number or string) reads whole as a time that the column
    /// holds exactly (no digits past fsp): that time as the column's text.
    /// Equal texts are then equal times, and the comparison can be
    /// answered from a key on the column, as MySQL answers it.
    fn time_key_constant(&self, col: &Expr, constant: &Expr) -> Option<Expr> {
        let (Expr::Column(_) | Expr::Bound(_), Some(SqlType::Time(fsp))) =
            (col, self.member_type(col))
        else {
            return None;
        };
        let Expr::Literal(v) = constant else {
            return None;
        };
        if v.is_null() {
            return None;
        }
        let time = |fsp| {
            crate::types::coerce(v.clone(), SqlType::Time(fsp), "", 0)
                .ok()
                .and_then(|t| t.to_bytes())
                .and_then(|t| crate::types::datetime::parse_time(&t))
        };
        let held = time(fsp)?;
        (time(6)? == held).then(|| {
            Expr::Literal(Value::str(&crate::types::datetime::format_time_fsp(
                held, fsp,
            )))
        })
    }

    /// Whether comparing `l` with `r` compares TIMEs: one is a TIME column
    /// and the other a string (a literal, a column) or a TIME column.
    fn time_comparison(&self, l: &Expr, r: &Expr) -> bool {
        let is_time = |e: &Expr| matches!(self.member_type(e), Some(SqlType::Time(_)));
        let is_text = |e: &Expr| {
            self.member_type(e).is_none()
                && matches!(e.kind(&self.frame_kinds(), &self.aggs), ExprKind::String)
        };
        (is_time(l) && (is_time(r) || is_text(r))) || (is_time(r) && is_text(l))
    }

    /// FIND_IN_SET(constant, c) of a SET column `c`: MySQL answers the
    /// constant's position among the *declared* members when `c` holds it
    /// (`Item_func_find_in_set`'s `enum_value`), not its position in the
    /// value's text. Bound as a third argument, the answer when found; a
    /// constant that is no member is 0 for every row.
    pub(super) fn member_find_in_set(&self, args: &mut Vec<Expr>) {
        let (Some(SqlType::Set(m)), Some(Expr::Literal(needle))) =
            (args.get(1).and_then(|c| self.member_type(c)), args.first())
        else {
            return;
        };
        let Some(b) = needle.to_bytes() else {
            return;
        };
        let pos = m.member_position(&b).unwrap_or(0);
        args.push(Expr::Literal(Value::Int(pos as i64)));
    }

    /// `e IN (list)` (and `e BETWEEN lo AND hi`, whose bounds are such a
    /// list): a TIME column compares as times, an ENUM / SET column reads
    /// as a number when every item is one.
    pub(super) fn member_in_list(&self, e: &mut Box<Expr>, list: &mut [Expr]) {
        if matches!(self.member_type(e), Some(SqlType::Time(_))) {
            // A TIME column IN (strings, numbers, TIMEs): compared as times,
            // each element read as a TIME ('2:2:2', 005454).
            let time = |x: Expr| {
                let bare = match x {
                    Expr::Collate(inner, _) => *inner,
                    other => other,
                };
                Expr::Func(Func::TimeNumber, vec![bare, Expr::Literal(Value::Int(6))])
            };
            let v = std::mem::replace(e.as_mut(), Expr::Literal(Value::Null));
            **e = time(v);
            for x in list.iter_mut() {
                let v = std::mem::replace(x, Expr::Literal(Value::Null));
                *x = time(v);
            }
            return;
        }
        if self.member_type(e).is_some()
            && !list.is_empty()
            && list.iter().all(|x| self.is_numeric(x))
        {
            let v = std::mem::replace(e.as_mut(), Expr::Literal(Value::Null));
            **e = self.numeric_reading(v);
        }
    }
}
