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
//! A TIME column (held as its text, see `crate::types::datetime`), and
//! CAST(x AS TIME), which makes such text, reads
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
//!
//! A YEAR column compared with a constant reads the constant as the year
//! the column would store (`c > '10'` is `c > 2010`, `c = 69` is
//! `c = 2069`), as MySQL's and MariaDB's `convert_const_to_int` do; a
//! constant that is no such year (`c < 100`) compares as it is.
//!
//! A MariaDB YEAR(2) column ([`crate::catalog::ColumnDef::is_year2`]; its
//! member type is `SqlType::Year`, a YEAR(4) column has none) holds the
//! year, as YEAR(4) does, but MariaDB's `Field_year::val_int` reads it as
//! the year modulo 100, and so does Canyon: in arithmetic (`c + 1` of 2005
//! is 6), SUM / AVG, CAST, `-c`, and compared with anything but another
//! YEAR(2) column. A constant compared with it (`c < '64'`, `c = 1964`,
//! `c IN (01, 2054)`) is first read as the column would store it, then
//! taken modulo 100, as MariaDB's `convert_const_to_int` does: `c < 1964`
//! is `c % 100 < 64`. Two YEAR(2) columns compare, and ORDER BY sorts, by
//! the years themselves (MariaDB compares and sorts fields by what they
//! store): ORDER BY c puts 1970 (`70`) before 2001 (`01`).
//! A YEAR(2) column that leads a key, compared in WHERE with a constant by
//! `=`, `<`, `<=`, `>`, `>=`, BETWEEN or IN, is answered as MariaDB answers
//! it from that key: the rows whose stored year is in the range the
//! constant names as a year, then the two-digit comparison on them (`c <
//! '55'` is `c < 2055 AND c % 100 < 55`; `c = '01'` finds 2001, not 1901).
//! The first conjunct is a range of the key, which the access planner
//! reads (as MariaDB does: an UPDATE's warnings count the rows that range
//! read).

use crate::expr::functions::Func;
use crate::expr::{BinOp, Expr};
use crate::plan::bind::{Binder, YearColumn};
use crate::types::value::Value;
use crate::types::{ExprKind, SqlType};

impl Binder<'_> {
    /// The ENUM / SET / TIME type of `e` when it is such a column (possibly
    /// under a COLLATE the binder added).
    pub(super) fn member_type(&self, e: &Expr) -> Option<SqlType> {
        let pos = match e {
            Expr::Column(i) | Expr::Bound(i) => *i,
            Expr::Collate(inner, _) => return self.member_type(inner),
            // CAST(x AS TIME) reads as a time wherever a TIME column does.
            Expr::Func(Func::CastTime(fsp), _) => return Some(SqlType::Time(*fsp)),
            _ => return None,
        };
        self.scopes
            .iter()
            .rev()
            .find(|s| pos >= s.offset && pos < s.offset + s.columns.len())
            .and_then(|s| s.member_types.get(pos - s.offset).copied().flatten())
    }

    /// The kind of YEAR column `e` is, if it is one.
    fn year_column(&self, e: &Expr) -> Option<YearColumn> {
        let pos = match e {
            Expr::Column(i) | Expr::Bound(i) => *i,
            _ => return None,
        };
        self.scopes
            .iter()
            .rev()
            .find(|s| pos >= s.offset && pos < s.offset + s.columns.len())
            .and_then(|s| s.years.get(pos - s.offset).copied().flatten())
    }

    /// Whether `e` is a YEAR(2) column that leads a key, compared in WHERE:
    /// MariaDB answers such a comparison with a constant from the key's
    /// range of stored years, then checks the two-digit comparison on the
    /// rows the range gave (see the module doc).
    fn keyed_year2_in_where(&self, e: &Expr) -> bool {
        self.context == "where clause" && self.year_column(e) == Some(YearColumn::TwoKeyed)
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
            SqlType::Year => {
                let hundred = Box::new(Expr::Literal(Value::UInt(100)));
                return Expr::Binary(BinOp::Mod, Box::new(bare(e)), hundred);
            }
            _ => return e,
        };
        let bare = bare(e);
        let mut args = Vec::with_capacity(m.values.len() + 1);
        args.push(bare);
        args.extend(m.values.iter().map(|v| Expr::Literal(Value::str(v))));
        Expr::Func(f, args)
    }

    /// The key ORDER BY sorts `e` by: its numeric reading, but a YEAR(2)
    /// column sorts by its year.
    pub(super) fn sort_reading(&self, e: Expr) -> Expr {
        if matches!(self.member_type(&e), Some(SqlType::Year)) {
            e
        } else {
            self.numeric_reading(e)
        }
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
    ///
    /// Returns the key range a keyed YEAR(2) column's comparison also
    /// requires (see [`Binder::year2_comparison`]), for the caller to AND
    /// with the comparison it builds.
    #[must_use]
    pub(super) fn member_operands(
        &self,
        op: BinOp,
        l: &mut Box<Expr>,
        r: &mut Box<Expr>,
    ) -> Option<Expr> {
        if op.is_comparison() {
            self.year_constant_operand(l, r);
        }
        let (lm, rm) = (self.member_type(l).is_some(), self.member_type(r).is_some());
        if !lm && !rm {
            return None;
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
        if comparison {
            if let Some(range) = self.year2_comparison(op, l, r) {
                return range;
            }
        }
        if op == BinOp::Eq {
            // A TIME column equal to a constant time: the column's own text
            // for that time, which a key on the column can find.
            if let Some(c) = self.time_key_constant(l, r) {
                **r = c;
                return None;
            }
            if let Some(c) = self.time_key_constant(r, l) {
                **l = c;
                return None;
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
            return None;
        }
        if lm && (arithmetic || comparison && self.is_numeric(r)) {
            let e = take(l);
            **l = self.numeric_reading(e);
        }
        if rm && (arithmetic || comparison && self.is_numeric(l)) {
            let e = take(r);
            **r = self.numeric_reading(e);
        }
        None
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

    /// A YEAR(4) column compared with a constant: the constant read as the
    /// year the column would store (`c > '10'` is `c > 2010`), as MySQL's and
    /// MariaDB's `convert_const_to_int` read it; a constant that is no such
    /// year is compared as it is.
    fn year_constant_operand(&self, l: &mut Box<Expr>, r: &mut Box<Expr>) {
        let four = |e: &Expr| self.year_column(e) == Some(YearColumn::Four);
        let other = match (four(l), four(r)) {
            (true, false) => r,
            (false, true) => l,
            _ => return,
        };
        if let Some(y) = year_stored(other, false) {
            **other = Expr::Literal(Value::UInt(y));
        }
    }

    /// `e BETWEEN lo AND hi` of a YEAR column and constants, as `>=` and
    /// `<=` compare them: for YEAR(4) the constants read as years, for
    /// YEAR(2) the column modulo 100 and the constants as years modulo 100
    /// (for a keyed one in WHERE, within the key's range of stored years).
    ///
    /// Returns the key range a keyed YEAR(2) column also requires (`c
    /// BETWEEN y1 AND y2` of the stored years), for the caller to AND with
    /// the BETWEEN it builds.
    #[must_use]
    pub(super) fn year_between(
        &self,
        e: &mut Box<Expr>,
        lo: &mut Box<Expr>,
        hi: &mut Box<Expr>,
    ) -> Option<Expr> {
        let two_digit = match self.year_column(e)? {
            YearColumn::Four => false,
            YearColumn::Two | YearColumn::TwoKeyed => true,
        };
        let (Some(y1), Some(y2)) = (year_stored(lo, two_digit), year_stored(hi, two_digit)) else {
            return None;
        };
        if !two_digit {
            **lo = Expr::Literal(Value::UInt(y1));
            **hi = Expr::Literal(Value::UInt(y2));
            return None;
        }
        let column = std::mem::replace(e.as_mut(), Expr::Literal(Value::Null));
        **e = self.numeric_reading(column.clone());
        **lo = Expr::Literal(Value::UInt(y1 % 100));
        **hi = Expr::Literal(Value::UInt(y2 % 100));
        self.keyed_year2_in_where(&column).then(|| {
            Expr::Between(
                Box::new(column),
                Box::new(Expr::Literal(Value::UInt(y1))),
                Box::new(Expr::Literal(Value::UInt(y2))),
                false,
            )
        })
    }

    /// The argument MIN / MAX of `e` compare when `e` is a YEAR(2) column,
    /// and whether it is one (the aggregate's result is then taken modulo
    /// 100, a number as MariaDB shows it: `0`, `55`). MariaDB answers MIN /
    /// MAX of a column that leads a key from the key, so by the stored
    /// years; of another, by the two digits read as a year of 1970-2069
    /// (MIN is `70` when 1970 is there, whatever else is).
    pub(super) fn year2_extreme(&self, e: Expr) -> (Expr, bool) {
        match self.year_column(&e) {
            Some(YearColumn::TwoKeyed) => (e, true),
            Some(YearColumn::Two) => {
                // IF(c % 100 >= 70, c % 100 + 1900, c % 100 + 2000)
                let two = || self.numeric_reading(e.clone());
                let lit = |n: u64| Box::new(Expr::Literal(Value::UInt(n)));
                let window = Expr::Func(
                    Func::If,
                    vec![
                        Expr::Binary(BinOp::Ge, Box::new(two()), lit(70)),
                        Expr::Binary(BinOp::Add, Box::new(two()), lit(1900)),
                        Expr::Binary(BinOp::Add, Box::new(two()), lit(2000)),
                    ],
                );
                (window, true)
            }
            _ => (e, false),
        }
    }

    /// A comparison of a YEAR(2) column: with another YEAR column, left as
    /// it is (the years compare); with anything else but an ENUM / SET / TIME column,
    /// the column read modulo 100 and a constant read as a year (see
    /// [`year2_constant`]). `None` if it was no such comparison, else the
    /// key range a keyed column's comparison in WHERE also requires
    /// (`c < 2055` for `c < '55'`: the rows MariaDB's range read gives,
    /// on which the two-digit comparison is then checked). The caller
    /// ANDs it with the comparison, where the access planner sees it as a
    /// range of the key.
    fn year2_comparison(
        &self,
        op: BinOp,
        l: &mut Box<Expr>,
        r: &mut Box<Expr>,
    ) -> Option<Option<Expr>> {
        let is_year2 = |e: &Expr| matches!(self.member_type(e), Some(SqlType::Year));
        let (ly, ry) = (is_year2(l), is_year2(r));
        let column_left = ly;
        let (column, other) = match (ly, ry) {
            (true, true) => return Some(None),
            (true, false) => (l, r),
            (false, true) => (r, l),
            (false, false) => return None,
        };
        if self.year_column(other).is_some() {
            return Some(None);
        }
        if self.member_type(other).is_some() {
            return None;
        }
        let ranged = matches!(
            op,
            BinOp::Eq | BinOp::NullSafeEq | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        ) && self.keyed_year2_in_where(column);
        let stored = if ranged { year2_stored(other) } else { None };
        let e = std::mem::replace(column.as_mut(), Expr::Literal(Value::Null));
        **column = self.numeric_reading(e.clone());
        if let Some(v) = year2_constant(other) {
            **other = Expr::Literal(v);
        }
        // `c op Y`: the key's range of stored years (the column keeps its
        // side of `op`).
        Some(stored.map(|year| {
            let year = Box::new(Expr::Literal(Value::UInt(year)));
            let e = Box::new(e);
            if column_left {
                Expr::Binary(op, e, year)
            } else {
                Expr::Binary(op, year, e)
            }
        }))
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
        if self.year_column(e) == Some(YearColumn::Four) {
            // A YEAR(4) column IN (constants): each read as a year, as `=`.
            for x in list.iter_mut() {
                if let Some(y) = year_stored(x, false) {
                    *x = Expr::Literal(Value::UInt(y));
                }
            }
            return;
        }
        if self.keyed_year2_in_where(e) && list.iter().all(|x| year2_stored(x).is_some()) {
            // Answered from the key: the stored years.
            for x in list.iter_mut() {
                if let Some(y) = year2_stored(x) {
                    *x = Expr::Literal(Value::UInt(y));
                }
            }
            return;
        }
        if matches!(self.member_type(e), Some(SqlType::Year)) {
            // A YEAR(2) column IN (constants): as `=` compares them.
            let v = std::mem::replace(e.as_mut(), Expr::Literal(Value::Null));
            **e = self.numeric_reading(v);
            for x in list.iter_mut() {
                if let Some(v) = year2_constant(x) {
                    *x = Expr::Literal(v);
                }
            }
            return;
        }
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

/// A constant compared with a YEAR(2) column, as MariaDB reads it there:
/// a number or numeric string that is a year YEAR stores as given (1901 to
/// 2155) is that year modulo 100, as the column reads it; another number
/// (0 to 99 among them, which the column reads as themselves) stays that
/// number. `None` for anything else (NULL, a non-numeric string, an
/// expression), compared as it is.
fn year2_constant(e: &Expr) -> Option<Value> {
    let v = match e {
        Expr::Literal(v) => v,
        Expr::Collate(inner, _) => match inner.as_ref() {
            Expr::Literal(v) => v,
            _ => return None,
        },
        _ => return None,
    };
    let n = match v {
        Value::Int(i) => *i,
        Value::UInt(u) => i64::try_from(*u).ok()?,
        Value::Decimal(_) | Value::Double(_) => v.to_decimal()?.round().to_i64()?,
        Value::Bytes(b) => {
            let s = std::str::from_utf8(b).ok()?.trim();
            s.parse::<i64>()
                .ok()
                .or_else(|| s.parse::<f64>().ok().map(|f| f.round() as i64))?
        }
        _ => return None,
    };
    Some(if (1901..=2155).contains(&n) {
        Value::UInt((n % 100) as u64)
    } else {
        Value::Int(n)
    })
}

/// The year a YEAR(2) column stores for the constant `e`, as MariaDB's
/// `Field_year::store` reads it for that column: the numbers 0 to 69 (0,
/// and the string '0' or '00', is 2000), 70 to 99, 1901 to 2155, and the
/// four-character string '0000' (the year 0000). `None` for anything else
/// (NULL among them), which is no key range.
fn year2_stored(e: &Expr) -> Option<u64> {
    year_stored(e, true)
}

/// [`year2_stored`] for a column of either width: `two_digit` for YEAR(2),
/// where the number 0 is 2000; a YEAR(4) stores it as the year 0000.
fn year_stored(e: &Expr, two_digit: bool) -> Option<u64> {
    let v = match e {
        Expr::Literal(v) => v,
        Expr::Collate(inner, _) => match inner.as_ref() {
            Expr::Literal(v) => v,
            _ => return None,
        },
        _ => return None,
    };
    let n = match v {
        Value::Int(i) => *i,
        Value::UInt(u) => i64::try_from(*u).ok()?,
        Value::Decimal(_) | Value::Double(_) => v.to_decimal()?.round().to_i64()?,
        Value::Bytes(b) => {
            let s = std::str::from_utf8(b).ok()?.trim();
            if s == "0000" {
                return Some(0);
            }
            s.parse::<i64>().ok()?
        }
        _ => return None,
    };
    let number = !matches!(v, Value::Bytes(_));
    match n {
        0 if number && !two_digit => Some(0),
        0..=69 => Some(2000 + n as u64),
        70..=99 => Some(1900 + n as u64),
        1901..=2155 => Some(n as u64),
        _ => None,
    }
}
