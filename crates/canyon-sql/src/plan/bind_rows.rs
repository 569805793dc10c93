//! Row constructors (`(a, b)`, `ROW(a, b)`), row subqueries and quantified
//! comparisons (`op ANY / SOME / ALL (subquery)`) in the binder: their
//! operands bound, arity checked (1241) and collations aggregated. Their
//! evaluation and NULL rules are `crate::expr::rows`.

use crate::expr::rows::{check_row_operands, is_row_operand};
use crate::expr::{BinOp, Expr, SubqueryKind};
use crate::plan::bind::{
    bit_literal_number, is_row_constructor, refuse_limit, with_key_range, Binder,
};
use crate::plan::bind_collate::aggregate_collations;
use crate::types::collation::Collation;
use crate::types::value::Value;
use crate::types::ExprKind;
use canyon_common::{Error, Result};
use sqlparser::ast;

// Row constructors, row subqueries and quantified comparisons (their
// evaluation and NULL rules: `crate::expr::rows`).
impl Binder<'_> {
    /// Marks `l`, compared with output column `i` of a subquery's `plan`,
    /// with their aggregated collation when both are strings (see
    /// "Collations"); `op` names the operation for error 1267.
    #[inline(never)]
    pub(super) fn collate_with_output(
        &self,
        l: &mut Expr,
        plan: &crate::plan::select::SelectPlan,
        i: usize,
        op: &str,
    ) -> Result<()> {
        let out = match plan.kinds.get(i) {
            Some(ExprKind::String) => Some((
                plan.colls
                    .get(i)
                    .copied()
                    .flatten()
                    .unwrap_or(Collation::Utf8mb4_0900Bin),
                // A constant output (`SELECT 'x'`) is as coercible as a
                // literal; anything else as a column.
                if plan.projection.get(i).is_some_and(Expr::is_constant) {
                    4
                } else {
                    2
                },
            )),
            _ => None,
        };
        if let (Some(mine), Some(theirs)) = (self.derive(l), out) {
            let c = aggregate_collations(&[mine, theirs], op)?;
            let mut inner = std::mem::replace(l, Expr::Literal(Value::Null));
            while let Expr::Collate(x, _) = inner {
                inner = *x;
            }
            *l = if c.is_bytewise() {
                inner
            } else {
                Expr::Collate(Box::new(inner), c)
            };
        }
        Ok(())
    }

    /// `ROW(a, b, ...)`: a row constructor (MySQL's grammar wants two
    /// elements or more).
    #[inline(never)]
    pub(super) fn bind_row_constructor(&mut self, f: &ast::Function) -> Result<Expr> {
        let ast::FunctionArguments::List(l) = &f.args else {
            return Err(Error::Syntax("ROW".into()));
        };
        let mut items = Vec::with_capacity(l.args.len());
        for a in &l.args {
            match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                    items.push(self.bind(e)?)
                }
                _ => return Err(Error::Syntax(format!("ROW({a})"))),
            }
        }
        if items.len() < 2 {
            return Err(Error::Syntax(format!("{f}")));
        }
        Ok(Expr::Row(items))
    }

    /// An operand of a comparison: a subquery (`(SELECT ...)`, parenthesised
    /// or not) binds as a row subquery, which [`Binder::subquery`] turns
    /// into a scalar one when it has one column.
    #[inline(never)]
    pub(super) fn comparison_operand(&mut self, e: &ast::Expr) -> Result<Expr> {
        // As `bind` does: nested subqueries recurse through here.
        crate::parse::limits::check_stack()?;
        let mut inner = e;
        while let ast::Expr::Nested(x) = inner {
            inner = x;
        }
        match inner {
            ast::Expr::Subquery(q) => self.subquery(q, SubqueryKind::Row),
            _ => self.bind(e),
        }
    }

    /// `a op b` where an operand is a row constructor or a subquery of
    /// several columns: the shapes checked (1241), the elements collated
    /// pairwise; `None` when neither operand is a row (the caller binds a
    /// scalar comparison).
    #[inline(never)]
    pub(super) fn bind_row_comparison(
        &mut self,
        op: BinOp,
        left: &ast::Expr,
        right: &ast::Expr,
    ) -> Result<Option<Expr>> {
        let maybe_row = |e: &ast::Expr| {
            let mut inner = e;
            while let ast::Expr::Nested(x) = inner {
                inner = x;
            }
            matches!(inner, ast::Expr::Tuple(_) | ast::Expr::Subquery(_))
                || matches!(inner, ast::Expr::Function(f) if is_row_constructor(f))
        };
        if !maybe_row(left) && !maybe_row(right) {
            return Ok(None);
        }
        let mut l = self.comparison_operand(left)?;
        let mut r = self.comparison_operand(right)?;
        if !is_row_operand(&l) && !is_row_operand(&r) {
            // Scalar after all (`x = (SELECT one column)`): the usual
            // comparison, collated as one (a hex or bit-value literal
            // compared with a number is its integer, as in `bind_binary`).
            if let Some(n) = bit_literal_number(left).filter(|_| self.is_numeric(&r)) {
                l = n;
            }
            if let Some(n) = bit_literal_number(right).filter(|_| self.is_numeric(&l)) {
                r = n;
            }
            let (mut l, mut r) = (Box::new(l), Box::new(r));
            let range = self.member_operands(op, &mut l, &mut r);
            self.collate_pair(&mut l, &mut r, op.symbol())?;
            return Ok(Some(with_key_range(range, Expr::Binary(op, l, r))));
        }
        check_row_operands(&l, &r)?;
        self.collate_rows(&mut l, &mut r, op.symbol())?;
        Ok(Some(Expr::Binary(op, Box::new(l), Box::new(r))))
    }

    /// Collates two row operands of the same shape element by element; a row
    /// subquery's columns carry their output collations.
    #[inline(never)]
    pub(super) fn collate_rows(&self, a: &mut Expr, b: &mut Expr, op: &str) -> Result<()> {
        match (a, b) {
            (Expr::Row(xs), Expr::Row(ys)) => {
                for (x, y) in xs.iter_mut().zip(ys.iter_mut()) {
                    if is_row_operand(x) {
                        self.collate_rows(x, y, op)?;
                    } else {
                        self.collate(&mut [x, y], op)?;
                    }
                }
                Ok(())
            }
            (Expr::Row(xs), Expr::Subquery(sq)) | (Expr::Subquery(sq), Expr::Row(xs)) => {
                let plan = crate::plan::select::select_plan(sq.plan.as_ref())?;
                for (i, x) in xs.iter_mut().enumerate() {
                    self.collate_with_output(x, plan, i, op)?;
                }
                Ok(())
            }
            // Two row subqueries: their columns compare under the left's
            // collations, as MySQL's type rules (no coercion between them).
            _ => Ok(()),
        }
    }

    /// `left op ANY|SOME|ALL (subquery)`: `= ANY` is IN and `<> ALL` NOT IN
    /// (row operands allowed there); the other comparisons take one column.
    #[inline(never)]
    pub(super) fn bind_quantified(&mut self, e: &ast::Expr) -> Result<Expr> {
        let (left, op, right, all) = match e {
            ast::Expr::AnyOp {
                left,
                compare_op,
                right,
                ..
            } => (left, compare_op, right, false),
            ast::Expr::AllOp {
                left,
                compare_op,
                right,
            } => (left, compare_op, right, true),
            other => return Err(Error::Internal(format!("not ANY / ALL: {other}"))),
        };
        let mut inner: &ast::Expr = right;
        while let ast::Expr::Nested(x) = inner {
            inner = x;
        }
        let ast::Expr::Subquery(q) = inner else {
            // MySQL's grammar takes only a subquery after ANY / SOME / ALL.
            let word = if all { "ALL" } else { "ANY" };
            return Err(Error::Syntax(format!("{word} {right}")));
        };
        let op = match op {
            ast::BinaryOperator::Eq => BinOp::Eq,
            ast::BinaryOperator::NotEq => BinOp::Ne,
            ast::BinaryOperator::Lt => BinOp::Lt,
            ast::BinaryOperator::LtEq => BinOp::Le,
            ast::BinaryOperator::Gt => BinOp::Gt,
            ast::BinaryOperator::GtEq => BinOp::Ge,
            other => return Err(Error::Syntax(format!("{other} ANY / ALL"))),
        };
        refuse_limit(q)?;
        let lhs = self.bind(left)?;
        match (op, all) {
            (BinOp::Eq, false) | (BinOp::Ne, true) => {
                let lhs = match lhs {
                    Expr::Row(items) => items,
                    one => vec![one],
                };
                self.subquery(q, SubqueryKind::In(lhs, all))
            }
            _ if is_row_operand(&lhs) => Err(Error::OperandColumns(1)),
            _ => self.subquery(q, SubqueryKind::Quantified(Box::new(lhs), op, all)),
        }
    }
}
