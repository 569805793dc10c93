//! Bound expressions: binding sqlparser's AST against one table's columns, and
//! evaluation with MySQL's semantics (three-valued logic, numeric promotion,
//! integer overflow errors, division by zero giving NULL).
//!
//! Binding resolves every name once (columns to positions, functions to
//! [`Func`]); evaluation then only walks the tree. Placeholders (`?`) are numbered
//! in the order the binder meets them, which is their textual order because each
//! statement binds its clauses in textual order and children left to right.
//!
//! Nesting is bounded twice: sqlparser stops at its recursion limit (which we
//! report as [`Error::TooDeep`]), and the binder refuses trees deeper than
//! [`MAX_DEPTH`], so evaluation's recursion is bounded too.

use crate::catalog::Table;
use crate::expr::functions::{self, Func};
use crate::types::collation::Collation;
use crate::types::value::{compare_as, Value};
use crate::types::ExprKind;
use canyon_common::{Error, Result};
use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use sqlparser::ast;
use std::cmp::Ordering;

/// Deepest expression tree the binder accepts.
pub const MAX_DEPTH: usize = 200;

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// +
    Add,
    /// -
    Sub,
    /// *
    Mul,
    /// / (decimal division in MySQL)
    Div,
    /// DIV
    IntDiv,
    /// % / MOD
    Mod,
    /// =
    Eq,
    /// <=>
    NullSafeEq,
    /// <> / !=
    Ne,
    /// <
    Lt,
    /// <=
    Le,
    /// >
    Gt,
    /// >=
    Ge,
    /// AND / &&
    And,
    /// OR / ||
    Or,
    /// XOR
    Xor,
    /// &
    BitAnd,
    /// |
    BitOr,
    /// ^
    BitXor,
}

impl BinOp {
    /// The operator as SQL spells it (EXPLAIN, error 1267).
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::IntDiv => "DIV",
            BinOp::Mod => "%",
            BinOp::Eq => "=",
            BinOp::NullSafeEq => "<=>",
            BinOp::Ne => "<>",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "and",
            BinOp::Or => "or",
            BinOp::Xor => "xor",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
        }
    }
}

/// Aggregate functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    /// COUNT(*)
    CountStar,
    /// COUNT(expr)
    Count,
    /// SUM
    Sum,
    /// MIN
    Min,
    /// MAX
    Max,
    /// AVG
    Avg,
}

/// One aggregate call in a SELECT.
#[derive(Debug, Clone, PartialEq)]
pub struct AggCall {
    /// Which aggregate.
    pub func: AggFunc,
    /// Its argument (none for COUNT(*)).
    pub arg: Option<Expr>,
    /// DISTINCT.
    pub distinct: bool,
    /// The argument's collation when it is a string other than bytewise:
    /// MIN / MAX and DISTINCT compare under it.
    pub coll: Option<Collation>,
}

/// A bound expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A constant.
    Literal(Value),
    /// The n-th `?` parameter (0-based).
    Param(usize),
    /// A column of the current row, by position.
    Column(usize),
    /// The n-th aggregate's result (only after grouping).
    Agg(usize),
    /// `@@name` (lower-cased, scope prefix removed).
    SysVar(String),
    /// `@name`.
    UserVar(String),
    /// Unary minus.
    Neg(Box<Expr>),
    /// NOT / !.
    Not(Box<Expr>),
    /// ~.
    BitNot(Box<Expr>),
    /// A binary operator.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `IS [NOT] NULL` (the bool is `negated`).
    IsNull(Box<Expr>, bool),
    /// `IS [NOT] TRUE / FALSE`: (expr, TRUE?, negated).
    IsBool(Box<Expr>, bool, bool),
    /// `[NOT] IN (list)`.
    InList(Box<Expr>, Vec<Expr>, bool),
    /// `[NOT] BETWEEN low AND high`.
    Between(Box<Expr>, Box<Expr>, Box<Expr>, bool),
    /// `[NOT] LIKE pattern [ESCAPE c]`.
    Like(Box<Expr>, Box<Expr>, u8, bool),
    /// CASE.
    Case {
        /// CASE operand WHEN ...
        operand: Option<Box<Expr>>,
        /// WHEN cond THEN result.
        whens: Vec<(Expr, Expr)>,
        /// ELSE.
        otherwise: Option<Box<Expr>>,
    },
    /// A scalar function.
    Func(Func, Vec<Expr>),
    /// A column of a source bound by an earlier join step (or of an enclosing
    /// query), seen from a later step's access path: fixed while that step runs,
    /// so [`Expr::is_constant`] holds and it can bound a key range. Evaluates
    /// like `Column` over the whole frame.
    Bound(usize),
    /// A row value `(a, b, ...)`, only as an operand of `=`, `<>`, `<=>` and IN.
    Row(Vec<Expr>),
    /// A subquery (scalar, EXISTS or IN).
    Subquery(Box<SubqueryExpr>),
    /// The value of the inner expression, compared under a collation: an
    /// explicit `expr COLLATE name`, or the collation the binder chose for a
    /// comparison, IN, BETWEEN, LIKE or CASE whose operands are all strings
    /// and whose collation is not bytewise (then every operand carries it;
    /// see "Collations" in [`Binder`]). Evaluation is the inner value;
    /// [`comparison_collation`] finds the collation for the operator.
    Collate(Box<Expr>, Collation),
}

/// What a subquery expression asks of its rows.
#[derive(Debug, Clone, PartialEq)]
pub enum SubqueryKind {
    /// `(SELECT one column)`: its single value, NULL for no row, error 1242 for
    /// more than one.
    Scalar,
    /// `[NOT] EXISTS (SELECT ...)`: (negated).
    Exists(bool),
    /// `lhs [NOT] IN (SELECT ...)`: the left operand's values (one per column).
    In(Vec<Expr>, bool),
}

/// A bound subquery.
#[derive(Debug, Clone)]
pub struct SubqueryExpr {
    /// The subquery's plan; its frame starts with the enclosing frame.
    pub plan: std::sync::Arc<crate::plan::select::SelectPlan>,
    /// How its rows are used.
    pub kind: SubqueryKind,
    /// Whether it reads columns of an enclosing query (then it runs once per
    /// outer row; otherwise once per statement, cached).
    pub correlated: bool,
}

impl PartialEq for SubqueryExpr {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.plan, &other.plan) && self.kind == other.kind
    }
}

impl Expr {
    /// Whether the expression reads no column and no aggregate (it may read
    /// parameters and variables): its value is fixed for a whole statement.
    pub fn is_constant(&self) -> bool {
        match self {
            Expr::Literal(_) | Expr::Param(_) | Expr::SysVar(_) | Expr::UserVar(_) => true,
            Expr::Column(_) | Expr::Agg(_) => false,
            Expr::Neg(e)
            | Expr::Not(e)
            | Expr::BitNot(e)
            | Expr::IsNull(e, _)
            | Expr::IsBool(e, _, _)
            | Expr::Collate(e, _) => e.is_constant(),
            Expr::Binary(_, a, b) | Expr::Like(a, b, _, _) => a.is_constant() && b.is_constant(),
            Expr::InList(e, l, _) => e.is_constant() && l.iter().all(Expr::is_constant),
            Expr::Between(a, b, c, _) => a.is_constant() && b.is_constant() && c.is_constant(),
            Expr::Case {
                operand,
                whens,
                otherwise,
            } => {
                operand.as_ref().is_none_or(|e| e.is_constant())
                    && whens
                        .iter()
                        .all(|(a, b)| a.is_constant() && b.is_constant())
                    && otherwise.as_ref().is_none_or(|e| e.is_constant())
            }
            Expr::Func(f, args) => {
                f.is_deterministic_per_statement() && args.iter().all(Expr::is_constant)
            }
            Expr::Bound(_) => true,
            Expr::Row(items) => items.iter().all(Expr::is_constant),
            // Evaluating one needs a reader; access paths never do.
            Expr::Subquery(_) => false,
        }
    }

    /// Calls `f` on every direct child expression (not into subqueries' plans,
    /// but into an IN subquery's left operand).
    pub fn for_each_child(&self, f: &mut dyn FnMut(&Expr)) {
        match self {
            Expr::Literal(_)
            | Expr::Param(_)
            | Expr::Column(_)
            | Expr::Agg(_)
            | Expr::SysVar(_)
            | Expr::UserVar(_)
            | Expr::Bound(_) => {}
            Expr::Neg(a)
            | Expr::Not(a)
            | Expr::BitNot(a)
            | Expr::IsNull(a, _)
            | Expr::IsBool(a, _, _)
            | Expr::Collate(a, _) => f(a),
            Expr::Binary(_, a, b) | Expr::Like(a, b, _, _) => {
                f(a);
                f(b);
            }
            Expr::InList(a, l, _) => {
                f(a);
                l.iter().for_each(f);
            }
            Expr::Between(a, b, c, _) => {
                f(a);
                f(b);
                f(c);
            }
            Expr::Case {
                operand,
                whens,
                otherwise,
            } => {
                if let Some(o) = operand {
                    f(o);
                }
                for (c, r) in whens {
                    f(c);
                    f(r);
                }
                if let Some(o) = otherwise {
                    f(o);
                }
            }
            Expr::Func(_, args) | Expr::Row(args) => args.iter().for_each(f),
            Expr::Subquery(sq) => {
                if let SubqueryKind::In(lhs, _) = &sq.kind {
                    lhs.iter().for_each(f);
                }
            }
        }
    }

    /// Rebuilds the expression bottom-up, replacing each node for which `f`
    /// returns `Some` (children of a replaced node are not visited).
    pub fn rewrite(&self, f: &dyn Fn(&Expr) -> Option<Expr>) -> Expr {
        if let Some(e) = f(self) {
            return e;
        }
        let r = |e: &Expr| Box::new(e.rewrite(f));
        match self {
            Expr::Literal(_)
            | Expr::Param(_)
            | Expr::Column(_)
            | Expr::Agg(_)
            | Expr::SysVar(_)
            | Expr::UserVar(_)
            | Expr::Bound(_) => self.clone(),
            Expr::Neg(a) => Expr::Neg(r(a)),
            Expr::Not(a) => Expr::Not(r(a)),
            Expr::BitNot(a) => Expr::BitNot(r(a)),
            Expr::IsNull(a, n) => Expr::IsNull(r(a), *n),
            Expr::IsBool(a, t, n) => Expr::IsBool(r(a), *t, *n),
            Expr::Collate(a, c) => Expr::Collate(r(a), *c),
            Expr::Binary(op, a, b) => Expr::Binary(*op, r(a), r(b)),
            Expr::Like(a, b, esc, n) => Expr::Like(r(a), r(b), *esc, *n),
            Expr::InList(a, l, n) => {
                Expr::InList(r(a), l.iter().map(|x| x.rewrite(f)).collect(), *n)
            }
            Expr::Between(a, b, c, n) => Expr::Between(r(a), r(b), r(c), *n),
            Expr::Case {
                operand,
                whens,
                otherwise,
            } => Expr::Case {
                operand: operand.as_ref().map(|o| r(o)),
                whens: whens
                    .iter()
                    .map(|(c, x)| (c.rewrite(f), x.rewrite(f)))
                    .collect(),
                otherwise: otherwise.as_ref().map(|o| r(o)),
            },
            Expr::Func(func, args) => {
                Expr::Func(*func, args.iter().map(|x| x.rewrite(f)).collect())
            }
            Expr::Row(items) => Expr::Row(items.iter().map(|x| x.rewrite(f)).collect()),
            Expr::Subquery(sq) => {
                let mut sq = sq.as_ref().clone();
                if let SubqueryKind::In(lhs, neg) = &sq.kind {
                    sq.kind = SubqueryKind::In(lhs.iter().map(|x| x.rewrite(f)).collect(), *neg);
                }
                Expr::Subquery(Box::new(sq))
            }
        }
    }

    /// Calls `f` on every column position the expression reads in its own
    /// frame (`Column` and `Bound`), and reports subqueries through `sub`.
    pub fn visit_columns(&self, f: &mut dyn FnMut(usize), sub: &mut dyn FnMut(&SubqueryExpr)) {
        match self {
            Expr::Column(i) | Expr::Bound(i) => f(*i),
            Expr::Subquery(sq) => {
                sub(sq);
                self.for_each_child(&mut |c| c.visit_columns(f, sub));
            }
            _ => self.for_each_child(&mut |c| c.visit_columns(f, sub)),
        }
    }

    /// Whether the expression contains an aggregate reference.
    pub fn has_agg(&self) -> bool {
        let mut found = matches!(self, Expr::Agg(_));
        if !found {
            self.for_each_child(&mut |c| found |= c.has_agg());
        }
        found
    }

    /// Whether the expression contains a subquery.
    pub fn has_subquery(&self) -> bool {
        let mut found = matches!(self, Expr::Subquery(_));
        if !found {
            self.for_each_child(&mut |c| found |= c.has_subquery());
        }
        found
    }

    /// Splits a conjunction into its AND-ed parts.
    pub fn conjuncts(&self) -> Vec<&Expr> {
        let mut out = Vec::new();
        fn walk<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
            if let Expr::Binary(BinOp::And, a, b) = e {
                walk(a, out);
                walk(b, out);
            } else {
                out.push(e);
            }
        }
        walk(self, &mut out);
        out
    }

    /// The static result kind, for result-set metadata (a best effort that
    /// matches MySQL for the common cases). `cols` gives the kind of each column
    /// position (see [`column_kinds`]).
    pub fn kind(&self, cols: &[ExprKind], aggs: &[AggCall]) -> ExprKind {
        match self {
            Expr::Literal(v) => ExprKind::of_value(v),
            Expr::Param(_) | Expr::UserVar(_) => ExprKind::String,
            Expr::SysVar(name) => crate::catalog::vars::kind(name),
            Expr::Column(i) | Expr::Bound(i) => cols.get(*i).copied().unwrap_or(ExprKind::String),
            Expr::Row(_) => ExprKind::Int,
            Expr::Subquery(sq) => match &sq.kind {
                SubqueryKind::Scalar => sq.plan.kinds.first().copied().unwrap_or(ExprKind::Null),
                _ => ExprKind::Int,
            },
            Expr::Agg(i) => match aggs.get(*i) {
                Some(a) => match a.func {
                    AggFunc::Count | AggFunc::CountStar => ExprKind::Int,
                    AggFunc::Avg => match a.arg.as_ref().map(|e| e.kind(cols, aggs)) {
                        Some(ExprKind::Double) => ExprKind::Double,
                        Some(ExprKind::Decimal(s)) => ExprKind::Decimal((s + 4).min(30)),
                        _ => ExprKind::Decimal(4),
                    },
                    AggFunc::Sum => match a.arg.as_ref().map(|e| e.kind(cols, aggs)) {
                        Some(ExprKind::Double) => ExprKind::Double,
                        Some(ExprKind::Decimal(s)) => ExprKind::Decimal(s),
                        _ => ExprKind::Decimal(0),
                    },
                    AggFunc::Min | AggFunc::Max => a
                        .arg
                        .as_ref()
                        .map(|e| e.kind(cols, aggs))
                        .unwrap_or(ExprKind::Null),
                },
                None => ExprKind::Null,
            },
            Expr::Neg(e) | Expr::Collate(e, _) => e.kind(cols, aggs),
            Expr::Binary(op, a, b) => match op {
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Mod => {
                    match (a.kind(cols, aggs), b.kind(cols, aggs)) {
                        (ExprKind::Double, _) | (_, ExprKind::Double) => ExprKind::Double,
                        (ExprKind::String, _) | (_, ExprKind::String) => ExprKind::Double,
                        // MySQL: a product's scale is the sum of the factors'.
                        (ExprKind::Decimal(x), ExprKind::Decimal(y)) if *op == BinOp::Mul => {
                            ExprKind::Decimal((x + y).min(30))
                        }
                        (ExprKind::Decimal(x), ExprKind::Decimal(y)) => ExprKind::Decimal(x.max(y)),
                        (ExprKind::Decimal(x), _) | (_, ExprKind::Decimal(x)) => {
                            ExprKind::Decimal(x)
                        }
                        // MOD is unsigned only with an unsigned dividend.
                        (ExprKind::Int, ExprKind::UInt) if *op == BinOp::Mod => ExprKind::Int,
                        (ExprKind::UInt, _) | (_, ExprKind::UInt) => ExprKind::UInt,
                        _ => ExprKind::Int,
                    }
                }
                BinOp::Div => match (a.kind(cols, aggs), b.kind(cols, aggs)) {
                    (ExprKind::Double, _) | (_, ExprKind::Double) => ExprKind::Double,
                    (ExprKind::String, _) | (_, ExprKind::String) => ExprKind::Double,
                    (ExprKind::Decimal(x), _) => ExprKind::Decimal((x + 4).min(30)),
                    _ => ExprKind::Decimal(4),
                },
                BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => ExprKind::UInt,
                _ => ExprKind::Int,
            },
            Expr::BitNot(_) => ExprKind::UInt,
            Expr::Not(_)
            | Expr::IsNull(..)
            | Expr::IsBool(..)
            | Expr::InList(..)
            | Expr::Between(..)
            | Expr::Like(..) => ExprKind::Int,
            Expr::Case {
                whens, otherwise, ..
            } => functions::aggregate_kind(
                whens
                    .iter()
                    .map(|(_, r)| r)
                    .chain(otherwise.as_deref())
                    .map(|e| e.kind(cols, aggs)),
            ),
            Expr::Func(f, args) => functions::result_kind(*f, args, cols, aggs),
        }
    }
}

/// The kinds of a table's columns, by position (for [`Expr::kind`]).
pub fn column_kinds(table: Option<&Table>) -> Vec<ExprKind> {
    table
        .map(|t| t.def.columns.iter().map(|c| ExprKind::of(c.ty)).collect())
        .unwrap_or_default()
}

// ----------------------------------------------------------------------------------
// Binding
// ----------------------------------------------------------------------------------

/// One source whose columns names can resolve to: a table or derived table of
/// the query being bound, or of an enclosing query (for correlated subqueries).
#[derive(Debug, Clone)]
pub struct Scope {
    /// The name it is referred to by: its alias, or the table's name.
    pub qualifier: String,
    /// The table's database (empty for a derived table).
    pub db: String,
    /// Column names, in order.
    pub columns: Vec<String>,
    /// Column kinds, in order.
    pub kinds: Vec<ExprKind>,
    /// Column collations, in order (`None` for columns that are not strings).
    pub colls: Vec<Option<Collation>>,
    /// Frame position of its first column.
    pub offset: usize,
    /// Columns (by index) merged into an earlier source's column of the same
    /// name by a USING or NATURAL join: an unqualified name means the earlier
    /// one (MySQL's coalesced column), so it is not ambiguous.
    pub coalesced: Vec<usize>,
}

impl Scope {
    /// The scope of a table referred to as `alias` (or its name), at `offset`.
    pub fn of_table(table: &Table, alias: Option<&str>, offset: usize) -> Scope {
        Scope {
            qualifier: alias.unwrap_or(&table.def.name).to_string(),
            db: table.def.db.clone(),
            columns: table.def.columns.iter().map(|c| c.name.clone()).collect(),
            kinds: table
                .def
                .columns
                .iter()
                .map(|c| ExprKind::of(c.ty))
                .collect(),
            colls: table
                .def
                .columns
                .iter()
                .map(|c| c.ty.is_string().then_some(c.collation))
                .collect(),
            offset,
            coalesced: Vec::new(),
        }
    }

    fn find(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.eq_ignore_ascii_case(name))
            .map(|i| self.offset + i)
    }

    /// The scope of a derived source (a derived table, a set operation's
    /// result) with these output columns. A string column keeps its
    /// collation; `None` there means bytewise, kept as a bytewise collation.
    pub fn of_derived(
        qualifier: &str,
        columns: Vec<String>,
        kinds: &[ExprKind],
        colls: &[Option<Collation>],
        offset: usize,
    ) -> Scope {
        Scope {
            qualifier: qualifier.to_string(),
            db: String::new(),
            colls: (0..columns.len())
                .map(|i| {
                    (kinds.get(i) == Some(&ExprKind::String)).then(|| {
                        colls
                            .get(i)
                            .copied()
                            .flatten()
                            .unwrap_or(Collation::Utf8mb4_0900Bin)
                    })
                })
                .collect(),
            kinds: kinds.to_vec(),
            columns,
            offset,
            coalesced: Vec::new(),
        }
    }

    /// The frame position of `name` written without a qualifier: a coalesced
    /// column is not found.
    pub fn find_unqualified(&self, name: &str) -> Option<usize> {
        self.find(name)
            .filter(|p| !self.coalesced.contains(&(p - self.offset)))
    }

    /// The frame position of `name` as written with (`qualified`) or without
    /// a table qualifier.
    fn lookup(&self, name: &str, qualified: bool) -> Option<usize> {
        if qualified {
            self.find(name)
        } else {
            self.find_unqualified(name)
        }
    }
}

/// Resolves names to frame positions and numbers placeholders.
///
/// # Collations
/// When it binds a comparison (`=`, `<`, `<=>`, ...), IN, BETWEEN, LIKE or a
/// CASE with an operand, the binder decides which collation compares the
/// strings, with MySQL's coercibility rules ([`Binder::derive`]): an explicit
/// COLLATE (level 0) beats a column (2), which beats a system constant (3),
/// which beats a literal, parameter or variable (4, the connection's
/// `collation_connection`); a binary string makes the comparison binary; two
/// different collations at the winning level are 1267. If any operand is not
/// a string the comparison follows MySQL's numeric and temporal rules and no
/// collation applies. A bytewise result (`binary`, `utf8mb4_0900_bin`) leaves
/// the operands bare — exactly Canyon's plain comparison — and any other
/// wraps *every* operand in [`Expr::Collate`], so the evaluator finds the
/// collation on either side and the planner can tell whether an index on a
/// column (keyed by that column's collation) serves the comparison.
///
/// A query block evaluates its expressions over a *frame*: the values of the
/// enclosing queries' frames (for correlated subqueries), then the columns of
/// each of its own sources. `Expr::Column(i)` is frame position `i`; a
/// single-table statement's frame is just the table's row.
pub struct Binder<'a> {
    /// The single table of a DML statement (or a single-table SELECT), if any.
    pub table: Option<&'a Table>,
    /// Visible sources: the enclosing queries' first, then this query's.
    pub scopes: Vec<Scope>,
    /// `scopes[own_from..]` are this query's sources.
    pub own_from: usize,
    /// Frame positions below this belong to enclosing queries.
    pub outer_len: usize,
    /// Frame width (where a subquery's own sources start).
    pub frame_len: usize,
    /// The smallest enclosing-frame position read (by this query or a nested
    /// subquery): `Some` means this query is correlated.
    pub min_outer_ref: Option<usize>,
    /// The planner, for subqueries (absent where subqueries are not allowed).
    pub plan_ctx: Option<&'a crate::plan::PlanContext<'a>>,
    /// Placeholders seen so far.
    pub params: usize,
    /// Aggregates collected, when aggregates are allowed.
    pub aggs: Vec<AggCall>,
    /// Whether aggregate functions may appear here.
    pub allow_aggs: bool,
    /// Where we are, for "Unknown column 'x' in '...'".
    pub context: &'static str,
    /// Output-column aliases visible here (GROUP BY, HAVING, ORDER BY), used
    /// for names that are not columns of the table.
    pub aliases: Vec<(String, Expr)>,
    /// Names an alias wins over a column of the same name for (HAVING, as
    /// MySQL: a select-list alias before a FROM column, except for names the
    /// GROUP BY lists as columns).
    pub alias_first: Vec<String>,
    /// The collation of literals, parameters and variables: the session's
    /// `collation_connection`.
    pub conn_coll: Collation,
    depth: usize,
}

impl<'a> Binder<'a> {
    /// A binder for expressions over `table` (referred to as `alias`): the
    /// frame is the table's row.
    pub fn new(table: Option<&'a Table>, table_alias: Option<&str>) -> Binder<'a> {
        let scopes: Vec<Scope> = table
            .map(|t| vec![Scope::of_table(t, table_alias, 0)])
            .unwrap_or_default();
        let frame_len = table.map(|t| t.def.columns.len()).unwrap_or(0);
        Binder {
            table,
            scopes,
            own_from: 0,
            outer_len: 0,
            frame_len,
            min_outer_ref: None,
            plan_ctx: None,
            params: 0,
            aggs: Vec::new(),
            allow_aggs: false,
            context: "field list",
            aliases: Vec::new(),
            alias_first: Vec::new(),
            conn_coll: Collation::DEFAULT,
            depth: 0,
        }
    }

    /// The kind of every frame position (strings where no scope says).
    pub fn frame_kinds(&self) -> Vec<ExprKind> {
        let mut kinds = vec![ExprKind::String; self.frame_len];
        for s in &self.scopes {
            for (i, k) in s.kinds.iter().enumerate() {
                if let Some(slot) = kinds.get_mut(s.offset + i) {
                    *slot = *k;
                }
            }
        }
        kinds
    }

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
                    AggFunc::Min | AggFunc::Max => self.derive(a.arg.as_ref()?),
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
                sq.plan.colls.first().copied().flatten().map(|c| (c, 2))
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
    fn collate(&self, ops: &mut [&mut Expr], op: &str) -> Result<()> {
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
    fn collate_pair(&self, a: &mut Expr, b: &mut Expr, op: &str) -> Result<()> {
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

    /// Binds one expression.
    pub fn bind(&mut self, e: &ast::Expr) -> Result<Expr> {
        crate::parse::limits::check_stack()?;
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.depth -= 1;
            return Err(Error::TooDeep);
        }
        let r = self.bind_inner(e);
        self.depth -= 1;
        r
    }

    fn boxed(&mut self, e: &ast::Expr) -> Result<Box<Expr>> {
        Ok(Box::new(self.bind(e)?))
    }

    /// Whether `name` is a column of one of this query's own sources.
    pub fn is_own_column(&self, name: &str) -> bool {
        self.scopes[self.own_from..]
            .iter()
            .any(|s| s.find(name).is_some())
    }

    fn column(&mut self, parts: &[&ast::Ident]) -> Result<Expr> {
        let display = parts
            .iter()
            .map(|p| p.value.as_str())
            .collect::<Vec<_>>()
            .join(".");
        let unknown = || Error::UnknownColumn {
            column: display.clone(),
            context: self.context.to_string(),
        };
        let (db, qualifier, name) = match parts {
            [c] => (None, None, &c.value),
            [t, c] => (None, Some(&t.value), &c.value),
            [d, t, c] => (Some(&d.value), Some(&t.value), &c.value),
            _ => return Err(unknown()),
        };
        let matches = |s: &Scope| {
            qualifier.is_none_or(|q| *q == s.qualifier) && db.is_none_or(|d| *d == s.db)
        };
        // This query's sources first: a name found in two is ambiguous.
        let mut found = None;
        for s in &self.scopes[self.own_from..] {
            if !matches(s) {
                continue;
            }
            if let Some(pos) = s.lookup(name, qualifier.is_some()) {
                if found.is_some() {
                    return Err(Error::AmbiguousColumn {
                        column: display.clone(),
                        context: self.context.to_string(),
                    });
                }
                found = Some(pos);
            }
        }
        if let Some(pos) = found {
            return Ok(Expr::Column(pos));
        }
        // Then the enclosing queries', innermost first: a correlated reference.
        for s in self.scopes[..self.own_from].iter().rev() {
            if matches(s) {
                if let Some(pos) = s.lookup(name, qualifier.is_some()) {
                    self.min_outer_ref = Some(self.min_outer_ref.map_or(pos, |m| m.min(pos)));
                    return Ok(Expr::Column(pos));
                }
            }
        }
        Err(unknown())
    }

    /// Binds a subquery against this binder's frame.
    fn subquery(&mut self, q: &ast::Query, kind: SubqueryKind) -> Result<Expr> {
        let ctx = self
            .plan_ctx
            .ok_or_else(|| Error::Unsupported("subqueries in this statement".into()))?;
        let (plan, params, min_ref) =
            crate::plan::select::plan_subquery(ctx, q, &self.scopes, self.frame_len, self.params)?;
        self.params = params;
        if let Some(r) = min_ref {
            // A reference below our own frame start makes us correlated too.
            if r < self.outer_len {
                self.min_outer_ref = Some(self.min_outer_ref.map_or(r, |m| m.min(r)));
            }
        }
        if kind == SubqueryKind::Scalar || matches!(kind, SubqueryKind::In(..)) {
            let want = match &kind {
                SubqueryKind::In(lhs, _) => lhs.len(),
                _ => 1,
            };
            if plan.visible != want {
                return Err(Error::OperandColumns(want));
            }
        }
        let kind = match kind {
            // `lhs IN (SELECT ...)` compares each operand with the matching
            // output column under their aggregated collation, which the
            // operand carries (see "Collations").
            SubqueryKind::In(mut lhs, neg) => {
                for (i, l) in lhs.iter_mut().enumerate() {
                    let out = match plan.kinds.get(i) {
                        Some(ExprKind::String) => Some((
                            plan.colls
                                .get(i)
                                .copied()
                                .flatten()
                                .unwrap_or(Collation::Utf8mb4_0900Bin),
                            // A constant output (`SELECT 'x'`) is as
                            // coercible as a literal; anything else as a column.
                            if plan.projection.get(i).is_some_and(Expr::is_constant) {
                                4
                            } else {
                                2
                            },
                        )),
                        _ => None,
                    };
                    if let (Some(mine), Some(theirs)) = (self.derive(l), out) {
                        let c = aggregate_collations(&[mine, theirs], "in")?;
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
                }
                SubqueryKind::In(lhs, neg)
            }
            k => k,
        };
        Ok(Expr::Subquery(Box::new(SubqueryExpr {
            plan: std::sync::Arc::new(plan),
            kind,
            correlated: min_ref.is_some(),
        })))
    }

    fn bind_inner(&mut self, e: &ast::Expr) -> Result<Expr> {
        use ast::Expr as A;
        // Forms whose binding belongs with their functions (INTERVAL arithmetic,
        // EXTRACT, ...).
        if let Some(r) = functions::bind_special(self, e) {
            return r;
        }
        Ok(match e {
            A::Identifier(id) => {
                if let Some(v) = id.value.strip_prefix("@@") {
                    Expr::SysVar(strip_scope(v))
                } else if let Some(v) = id.value.strip_prefix('@') {
                    Expr::UserVar(v.to_ascii_lowercase())
                } else if id.quote_style == Some('"') && !self.is_own_column(&id.value) {
                    // In MySQL's default sql_mode "..." is a string literal.
                    Expr::Literal(Value::str(&id.value))
                } else if let Some((_, aliased)) = self
                    .alias_first
                    .iter()
                    .any(|n| n.eq_ignore_ascii_case(&id.value))
                    .then(|| {
                        self.aliases
                            .iter()
                            .find(|(n, _)| n.eq_ignore_ascii_case(&id.value))
                    })
                    .flatten()
                {
                    aliased.clone()
                } else {
                    match self.column(&[id]) {
                        Ok(c) => c,
                        Err(e) => match self
                            .aliases
                            .iter()
                            .find(|(n, _)| n.eq_ignore_ascii_case(&id.value))
                        {
                            Some((_, aliased)) => aliased.clone(),
                            None => return Err(e),
                        },
                    }
                }
            }
            A::CompoundIdentifier(parts) => {
                if let Some(first) = parts.first().and_then(|p| p.value.strip_prefix("@@")) {
                    // @@session.x / @@global.x
                    let name = parts
                        .last()
                        .map(|p| p.value.to_ascii_lowercase())
                        .unwrap_or_default();
                    if first.eq_ignore_ascii_case("global") {
                        Expr::SysVar(format!("global.{name}"))
                    } else {
                        Expr::SysVar(name)
                    }
                } else {
                    let refs: Vec<&ast::Ident> = parts.iter().collect();
                    self.column(&refs)?
                }
            }
            A::Value(v) => match &v.value {
                ast::Value::Placeholder(p) if p == "?" => {
                    let i = self.params;
                    self.params += 1;
                    Expr::Param(i)
                }
                // sqlparser reads `@` before a quoted name (`@`my var``) as a
                // placeholder; in MySQL it is a user variable. (Found by the
                // `sql` fuzz target: it was numbered as a `?`, which broke
                // the select list's placeholder numbering, 1105.)
                ast::Value::Placeholder(p) if p.starts_with('@') && !p.starts_with("@@") => {
                    Expr::UserVar(p[1..].to_ascii_lowercase())
                }
                ast::Value::Placeholder(p) => return Err(Error::Syntax(p.clone())),
                // X'..' is a binary string: it compares bytewise, unless a
                // column's collation wins (see `Binder::derive`).
                hex @ ast::Value::HexStringLiteral(_) => {
                    Expr::Collate(Box::new(Expr::Literal(literal(hex)?)), Collation::Binary)
                }
                other => Expr::Literal(literal(other)?),
            },
            A::TypedString(ts) => {
                let text = match &ts.value.value {
                    ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                        s.clone()
                    }
                    other => other.to_string(),
                };
                let v = Value::str(&text);
                match ts.data_type {
                    ast::DataType::Date => Expr::Func(Func::CastDate, vec![Expr::Literal(v)]),
                    ast::DataType::Timestamp(..) | ast::DataType::Datetime(_) => {
                        Expr::Func(Func::CastDateTime, vec![Expr::Literal(v)])
                    }
                    _ => Expr::Literal(v),
                }
            }
            A::Nested(inner) => self.bind(inner)?,
            A::UnaryOp { op, expr } => match op {
                ast::UnaryOperator::Minus => match self.bind(expr)? {
                    Expr::Literal(Value::Int(i)) => Expr::Literal(Value::Int(-i)),
                    Expr::Literal(Value::UInt(u)) if u == 1u64 << 63 => {
                        Expr::Literal(Value::Int(i64::MIN))
                    }
                    // A zero stays positive (MySQL's my_decimal_neg): `-0.0` is 0.0.
                    Expr::Literal(Value::Decimal(d)) if !d.is_zero() => {
                        Expr::Literal(Value::Decimal(-d))
                    }
                    Expr::Literal(Value::Double(d)) => Expr::Literal(Value::Double(-d)),
                    other => Expr::Neg(Box::new(other)),
                },
                ast::UnaryOperator::Plus => self.bind(expr)?,
                ast::UnaryOperator::Not | ast::UnaryOperator::BangNot => {
                    Expr::Not(self.boxed(expr)?)
                }
                ast::UnaryOperator::BitwiseNot => Expr::BitNot(self.boxed(expr)?),
                other => return Err(Error::Unsupported(format!("operator {other}"))),
            },
            A::BinaryOp { left, op, right } => {
                let op = match op {
                    ast::BinaryOperator::Plus => BinOp::Add,
                    ast::BinaryOperator::Minus => BinOp::Sub,
                    ast::BinaryOperator::Multiply => BinOp::Mul,
                    ast::BinaryOperator::Divide => BinOp::Div,
                    ast::BinaryOperator::Modulo => BinOp::Mod,
                    ast::BinaryOperator::MyIntegerDivide
                    | ast::BinaryOperator::DuckIntegerDivide => BinOp::IntDiv,
                    ast::BinaryOperator::Eq => BinOp::Eq,
                    ast::BinaryOperator::Spaceship => BinOp::NullSafeEq,
                    ast::BinaryOperator::NotEq => BinOp::Ne,
                    ast::BinaryOperator::Lt => BinOp::Lt,
                    ast::BinaryOperator::LtEq => BinOp::Le,
                    ast::BinaryOperator::Gt => BinOp::Gt,
                    ast::BinaryOperator::GtEq => BinOp::Ge,
                    ast::BinaryOperator::And => BinOp::And,
                    ast::BinaryOperator::Or | ast::BinaryOperator::StringConcat => BinOp::Or,
                    ast::BinaryOperator::Xor => BinOp::Xor,
                    ast::BinaryOperator::BitwiseAnd => BinOp::BitAnd,
                    ast::BinaryOperator::BitwiseOr => BinOp::BitOr,
                    ast::BinaryOperator::BitwiseXor => BinOp::BitXor,
                    other => return Err(Error::Unsupported(format!("operator {other}"))),
                };
                let mut l = self.boxed(left)?;
                let mut r = self.boxed(right)?;
                if matches!(
                    op,
                    BinOp::Eq
                        | BinOp::NullSafeEq
                        | BinOp::Ne
                        | BinOp::Lt
                        | BinOp::Le
                        | BinOp::Gt
                        | BinOp::Ge
                ) {
                    self.collate_pair(&mut l, &mut r, op.symbol())?;
                }
                Expr::Binary(op, l, r)
            }
            A::IsNull(e) => Expr::IsNull(self.boxed(e)?, false),
            A::IsNotNull(e) => Expr::IsNull(self.boxed(e)?, true),
            A::IsTrue(e) => Expr::IsBool(self.boxed(e)?, true, false),
            A::IsNotTrue(e) => Expr::IsBool(self.boxed(e)?, true, true),
            A::IsFalse(e) => Expr::IsBool(self.boxed(e)?, false, false),
            A::IsNotFalse(e) => Expr::IsBool(self.boxed(e)?, false, true),
            A::IsUnknown(e) => Expr::IsNull(self.boxed(e)?, false),
            A::IsNotUnknown(e) => Expr::IsNull(self.boxed(e)?, true),
            A::IsNotDistinctFrom(a, b) => {
                let mut a = self.boxed(a)?;
                let mut b = self.boxed(b)?;
                self.collate_pair(&mut a, &mut b, "<=>")?;
                Expr::Binary(BinOp::NullSafeEq, a, b)
            }
            A::IsDistinctFrom(a, b) => {
                let mut a = self.boxed(a)?;
                let mut b = self.boxed(b)?;
                self.collate_pair(&mut a, &mut b, "<=>")?;
                Expr::Not(Box::new(Expr::Binary(BinOp::NullSafeEq, a, b)))
            }
            A::InList {
                expr,
                list,
                negated,
            } => {
                let mut e = self.boxed(expr)?;
                let mut list = list
                    .iter()
                    .map(|x| self.bind(x))
                    .collect::<Result<Vec<_>>>()?;
                if let Expr::Row(items) = e.as_mut() {
                    // Component-wise: column i against the i-th of every row.
                    for (i, item) in items.iter_mut().enumerate() {
                        let mut ops: Vec<&mut Expr> = vec![item];
                        let mut all_rows = true;
                        for r in list.iter_mut() {
                            match r {
                                Expr::Row(vals) if i < vals.len() => ops.push(&mut vals[i]),
                                _ => all_rows = false,
                            }
                        }
                        if all_rows {
                            self.collate(&mut ops, "in")?;
                        }
                    }
                } else {
                    let mut ops: Vec<&mut Expr> = vec![e.as_mut()];
                    ops.extend(list.iter_mut());
                    self.collate(&mut ops, "in")?;
                }
                Expr::InList(e, list, *negated)
            }
            A::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let mut e = self.boxed(expr)?;
                let mut lo = self.boxed(low)?;
                let mut hi = self.boxed(high)?;
                self.collate(&mut [e.as_mut(), lo.as_mut(), hi.as_mut()], "between")?;
                Expr::Between(e, lo, hi, *negated)
            }
            A::Like {
                negated,
                any: false,
                expr,
                pattern,
                escape_char,
            } => {
                let mut e = self.boxed(expr)?;
                let mut p = self.boxed(pattern)?;
                self.collate(&mut [e.as_mut(), p.as_mut()], "like")?;
                let esc = match escape_char.as_deref() {
                    None => b'\\',
                    Some(ast::Expr::Value(v)) => match &v.value {
                        ast::Value::SingleQuotedString(s) if s.len() == 1 => s.as_bytes()[0],
                        _ => return Err(Error::WrongArguments("ESCAPE".into())),
                    },
                    Some(_) => return Err(Error::WrongArguments("ESCAPE".into())),
                };
                Expr::Like(e, p, esc, *negated)
            }
            A::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                let mut operand = operand.as_ref().map(|o| self.boxed(o)).transpose()?;
                let mut whens = Vec::with_capacity(conditions.len());
                for w in conditions {
                    let c = self.bind(&w.condition)?;
                    let r = self.bind(&w.result)?;
                    whens.push((c, r));
                }
                if let Some(o) = operand.as_mut() {
                    let mut ops: Vec<&mut Expr> = vec![o.as_mut()];
                    ops.extend(whens.iter_mut().map(|(c, _)| c));
                    self.collate(&mut ops, "case")?;
                }
                let mut otherwise = else_result.as_ref().map(|o| self.boxed(o)).transpose()?;
                let mut results: Vec<&mut Expr> = whens.iter_mut().map(|(_, r)| r).collect();
                results.extend(otherwise.as_deref_mut());
                self.conform(results);
                Expr::Case {
                    operand,
                    whens,
                    otherwise,
                }
            }
            A::Function(f) => self.bind_function(f)?,
            A::Cast {
                expr, data_type, ..
            }
            | A::Convert {
                expr,
                data_type: Some(data_type),
                ..
            } => {
                let inner = self.bind(expr)?;
                let cast = Expr::Func(functions::cast_func(data_type)?, vec![inner]);
                if matches!(data_type, ast::DataType::Binary(_)) {
                    // CAST(x AS BINARY) is a binary string: it compares bytewise.
                    Expr::Collate(Box::new(cast), Collation::Binary)
                } else {
                    cast
                }
            }
            A::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![self.bind(expr)?];
                if let Some(f) = substring_from {
                    args.push(self.bind(f)?);
                } else {
                    args.push(Expr::Literal(Value::Int(1)));
                }
                if let Some(f) = substring_for {
                    args.push(self.bind(f)?);
                }
                Expr::Func(Func::Substring, args)
            }
            A::Trim {
                expr,
                trim_where,
                trim_what,
                ..
            } => {
                let e = self.bind(expr)?;
                let what = trim_what.as_ref().map(|w| self.bind(w)).transpose()?;
                let f = match trim_where {
                    Some(ast::TrimWhereField::Leading) => Func::LTrim,
                    Some(ast::TrimWhereField::Trailing) => Func::RTrim,
                    _ => Func::Trim,
                };
                let mut args = vec![e];
                args.extend(what);
                Expr::Func(f, args)
            }
            A::Ceil { expr, .. } => Expr::Func(Func::Ceil, vec![self.bind(expr)?]),
            A::Floor { expr, .. } => Expr::Func(Func::Floor, vec![self.bind(expr)?]),
            A::Tuple(items) => Expr::Row(
                items
                    .iter()
                    .map(|x| self.bind(x))
                    .collect::<Result<Vec<_>>>()?,
            ),
            A::Subquery(q) => self.subquery(q, SubqueryKind::Scalar)?,
            A::Exists { subquery, negated } => {
                self.subquery(subquery, SubqueryKind::Exists(*negated))?
            }
            A::InSubquery {
                expr,
                subquery,
                negated,
            } => {
                let lhs = match self.bind(expr)? {
                    Expr::Row(items) => items,
                    one => vec![one],
                };
                self.subquery(subquery, SubqueryKind::In(lhs, *negated))?
            }
            // Character set introducers on literals (`_binary'...'`, `_utf8mb4'...'`),
            // which drivers put before interpolated parameters: with one character
            // set a literal's bytes are the same under any of these.
            A::Prefixed { prefix, value } if is_utf8_introducer(&prefix.value) => {
                let lit = match value.as_ref() {
                    A::Value(v) => Expr::Literal(literal(&v.value)?),
                    other => return Err(Error::Unsupported(format!("expression {other}"))),
                };
                if prefix.value.eq_ignore_ascii_case("_binary") {
                    // A binary string: it compares bytewise.
                    Expr::Collate(Box::new(lit), Collation::Binary)
                } else {
                    lit
                }
            }
            // `expr COLLATE name`: the explicit collation (coercibility 0);
            // an unknown one is MySQL's 1273.
            A::Collate { expr, collation } => {
                let name = collation.to_string().trim_matches('`').to_ascii_lowercase();
                let c = Collation::from_name(&name).ok_or(Error::UnknownCollation(name))?;
                let mut inner = self.bind(expr)?;
                // The collation must be of the operand's character set (a
                // literal's is the connection's): 1253 otherwise.
                // One exception: a utf8mb3 collation applies to a utf8mb4
                // string. MySQL's information_schema columns are utf8mb3 and
                // Connector/J's metadata queries put utf8mb3 collations on
                // them; Canyon's are utf8mb4 (every string is UTF-8 here).
                if let Some((have, _)) = self.derive(&inner) {
                    let narrowing = have.charset() == "utf8mb4" && c.charset() == "utf8mb3";
                    if have.charset() != c.charset() && !narrowing {
                        return Err(Error::CollationCharsetMismatch {
                            collation: c.name().to_string(),
                            charset: have.charset().to_string(),
                        });
                    }
                }
                while let Expr::Collate(x, _) = inner {
                    inner = *x;
                }
                Expr::Collate(Box::new(inner), c)
            }
            A::Interval(_) => return Err(Error::Unsupported("INTERVAL expressions".into())),
            other => return Err(Error::Unsupported(format!("expression {other}"))),
        })
    }

    fn bind_function(&mut self, f: &ast::Function) -> Result<Expr> {
        let name = f
            .name
            .0
            .last()
            .and_then(|p| p.as_ident())
            .map(|i| i.value.to_ascii_uppercase())
            .unwrap_or_default();
        let (args, distinct) = match &f.args {
            ast::FunctionArguments::None => (Vec::new(), false),
            ast::FunctionArguments::List(l) => (
                l.args.iter().collect::<Vec<_>>(),
                matches!(
                    l.duplicate_treatment,
                    Some(ast::DuplicateTreatment::Distinct)
                ),
            ),
            ast::FunctionArguments::Subquery(_) => {
                return Err(Error::Unsupported("subqueries".into()))
            }
        };
        let agg = match name.as_str() {
            "COUNT" => Some(AggFunc::Count),
            "SUM" => Some(AggFunc::Sum),
            "MIN" => Some(AggFunc::Min),
            "MAX" => Some(AggFunc::Max),
            "AVG" => Some(AggFunc::Avg),
            _ => None,
        };
        if let Some(mut func) = agg {
            if !self.allow_aggs {
                return Err(Error::InvalidGroupFuncUse);
            }
            if args.len() != 1 {
                return Err(Error::Syntax(format!("{name}()")));
            }
            let arg = match args[0] {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard)
                    if func == AggFunc::Count =>
                {
                    func = AggFunc::CountStar;
                    None
                }
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                    // An aggregate's argument cannot itself hold aggregates.
                    self.allow_aggs = false;
                    let r = self.bind(e);
                    self.allow_aggs = true;
                    Some(r?)
                }
                _ => return Err(Error::Syntax(format!("{name}(...)"))),
            };
            let coll = arg
                .as_ref()
                .and_then(|e| self.derive(e))
                .map(|d| d.0)
                .filter(|c| !c.is_bytewise());
            let call = AggCall {
                func,
                arg,
                distinct,
                coll,
            };
            let idx = match self.aggs.iter().position(|a| *a == call) {
                Some(i) => i,
                None => {
                    self.aggs.push(call);
                    self.aggs.len() - 1
                }
            };
            return Ok(Expr::Agg(idx));
        }
        let func =
            functions::lookup(&name).ok_or_else(|| Error::UnknownFunction(name.to_lowercase()))?;
        let mut bound = Vec::with_capacity(args.len());
        for a in args {
            match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                    bound.push(self.bind(e)?)
                }
                _ => return Err(Error::Syntax(format!("{name}(...)"))),
            }
        }
        functions::check_arity(func, &name, bound.len())?;
        match func {
            Func::If => self.conform(bound.iter_mut().skip(1).collect()),
            Func::IfNull | Func::Coalesce => self.conform(bound.iter_mut().collect()),
            _ => {}
        }
        Ok(Expr::Func(func, bound))
    }

    /// Wraps each of `branches` (the values an IF / IFNULL / COALESCE / CASE
    /// may return) whose type differs from their aggregated type in a
    /// conversion to it ([`Func::Conform`]), so that the value returned has the
    /// type MySQL gives the whole expression whichever branch is taken.
    fn conform(&self, mut branches: Vec<&mut Expr>) {
        // A parameter's or user variable's type is only known when it has a
        // value: leave such expressions as they are.
        if branches
            .iter()
            .any(|e| matches!(**e, Expr::Param(_) | Expr::UserVar(_)))
        {
            return;
        }
        let cols = self.frame_kinds();
        let kinds: Vec<ExprKind> = branches.iter().map(|e| e.kind(&cols, &self.aggs)).collect();
        let target = functions::aggregate_kind(kinds.iter().copied());
        for (e, k) in branches.iter_mut().zip(kinds) {
            if k != target && k != ExprKind::Null && target != ExprKind::Null {
                let inner = std::mem::replace(&mut **e, Expr::Literal(Value::Null));
                **e = Expr::Func(Func::Conform(target), vec![inner]);
            }
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

/// Whether `_name` introduces a literal whose bytes Canyon takes as they are:
/// binary, or one of the names of UTF-8 (the only character set it stores).
fn is_utf8_introducer(name: &str) -> bool {
    ["_binary", "_utf8mb4", "_utf8mb3", "_utf8"]
        .iter()
        .any(|i| name.eq_ignore_ascii_case(i))
}

/// `@@session.x` / `@@local.x` are `x`; `@@global.x` keeps its prefix (the
/// global value, see `crate::catalog::vars`).
fn strip_scope(v: &str) -> String {
    let lower = v.to_ascii_lowercase();
    for p in ["session.", "local."] {
        if let Some(rest) = lower.strip_prefix(p) {
            return rest.to_string();
        }
    }
    lower
}

/// Converts a literal of the AST into a value.
pub fn literal(v: &ast::Value) -> Result<Value> {
    Ok(match v {
        ast::Value::Number(s, _) => number_literal(s)?,
        ast::Value::SingleQuotedString(s)
        | ast::Value::DoubleQuotedString(s)
        | ast::Value::EscapedStringLiteral(s)
        | ast::Value::NationalStringLiteral(s)
        | ast::Value::TripleSingleQuotedString(s)
        | ast::Value::TripleDoubleQuotedString(s) => Value::str(s),
        ast::Value::SingleQuotedByteStringLiteral(s)
        | ast::Value::DoubleQuotedByteStringLiteral(s) => Value::str(s),
        ast::Value::HexStringLiteral(h) => {
            Value::Bytes(decode_hex(h).ok_or_else(|| Error::Syntax(format!("X'{h}'")))?)
        }
        ast::Value::Boolean(b) => Value::Int(*b as i64),
        ast::Value::Null => Value::Null,
        other => return Err(Error::Syntax(other.to_string())),
    })
}

/// Parses a numeric literal as MySQL types it: integers as BIGINT (UNSIGNED when
/// they only fit that), with a point as DECIMAL, with an exponent as DOUBLE.
pub fn number_literal(s: &str) -> Result<Value> {
    if let Ok(i) = s.parse::<i64>() {
        return Ok(Value::Int(i));
    }
    if let Ok(u) = s.parse::<u64>() {
        return Ok(Value::UInt(u));
    }
    if !s.contains(['e', 'E']) {
        if let Ok(d) = Decimal::from_str_exact(s) {
            // `-0.0` is 0.0, as MySQL's negation of a zero.
            return Ok(Value::Decimal(if d.is_zero() { d.abs() } else { d }));
        }
    }
    s.parse::<f64>()
        .map(Value::Double)
        .map_err(|_| Error::Syntax(s.to_string()))
}

fn decode_hex(h: &str) -> Option<Vec<u8>> {
    let h = if h.len() % 2 == 1 {
        format!("0{h}")
    } else {
        h.to_string()
    };
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
        .collect()
}

// ----------------------------------------------------------------------------------
// Evaluation
// ----------------------------------------------------------------------------------

/// What evaluation can see besides the expression.
pub trait EvalContext {
    /// The statement's parameter values.
    fn params(&self) -> &[Value];
    /// A system variable's current value.
    fn sys_var(&self, name: &str) -> Result<Value>;
    /// A user variable's value (NULL when unset).
    fn user_var(&self, name: &str) -> Value;
    /// Session facts for functions (DATABASE(), CONNECTION_ID(), ...).
    fn session_fact(&self, f: Func) -> Value;
    /// The statement's start time (NOW() is constant within a statement).
    fn now(&self) -> chrono::NaiveDateTime;
    /// Records a warning for SHOW WARNINGS (code, message).
    fn warn(&self, code: u16, message: &str);
    /// The rows of a subquery whose enclosing frame is `outer` (its visible
    /// columns only). Only a query executor can answer (it holds the reader);
    /// elsewhere this is an error.
    fn subquery(&self, sq: &SubqueryExpr, outer: &[Value]) -> Result<std::rc::Rc<Vec<Vec<Value>>>> {
        let _ = (sq, outer);
        Err(Error::Unsupported("subqueries in this statement".into()))
    }
    /// Fails with [`Error::Interrupted`] (KILL) or [`Error::QueryTimeout`]
    /// (max_execution_time) when the statement must stop. Row loops call it
    /// once per row: it must stay a relaxed atomic load on the common path.
    fn check_interrupt(&self) -> Result<()> {
        Ok(())
    }
    /// The rows of an `information_schema` table, generated for this statement
    /// (see [`crate::catalog::infoschema`]); only a session can answer.
    fn system_rows(
        &self,
        table: crate::catalog::infoschema::SystemTable,
        filter: &crate::catalog::infoschema::Pushed,
    ) -> Result<Vec<Vec<Value>>> {
        let _ = (table, filter);
        Err(Error::Unsupported(
            "information_schema in this statement".into(),
        ))
    }
}

/// The rows of one subquery (its visible columns), shared by its evaluations.
pub type SubqueryRows = std::rc::Rc<Vec<Vec<Value>>>;

/// The identity of a subquery within a statement: its plan's address (plans are
/// shared, never copied, between clones of an expression).
pub fn subquery_key(sq: &SubqueryExpr) -> usize {
    std::sync::Arc::as_ptr(&sq.plan) as usize
}

/// How a [`WithSubqueries`] context answers subqueries.
pub trait SubqueryRunner: Sized {
    /// The rows of `sq` over the enclosing frame `outer`; `ctx` is the context
    /// the subquery itself evaluates in.
    fn rows(
        ctx: &WithSubqueries<'_, Self>,
        sq: &SubqueryExpr,
        outer: &[Value],
    ) -> Result<SubqueryRows>;
}

/// A statement's evaluation context that can also answer subqueries (through
/// `state`); everything else comes from `base`.
pub struct WithSubqueries<'a, S> {
    /// The statement's context.
    pub base: &'a dyn EvalContext,
    /// What runs or remembers the subqueries.
    pub state: S,
}

impl<S: SubqueryRunner> EvalContext for WithSubqueries<'_, S> {
    fn params(&self) -> &[Value] {
        self.base.params()
    }
    fn sys_var(&self, name: &str) -> Result<Value> {
        self.base.sys_var(name)
    }
    fn user_var(&self, name: &str) -> Value {
        self.base.user_var(name)
    }
    fn session_fact(&self, f: Func) -> Value {
        self.base.session_fact(f)
    }
    fn now(&self) -> chrono::NaiveDateTime {
        self.base.now()
    }
    fn warn(&self, code: u16, message: &str) {
        self.base.warn(code, message)
    }
    fn subquery(&self, sq: &SubqueryExpr, outer: &[Value]) -> Result<SubqueryRows> {
        S::rows(self, sq, outer)
    }
    fn check_interrupt(&self) -> Result<()> {
        self.base.check_interrupt()
    }
    fn system_rows(
        &self,
        table: crate::catalog::infoschema::SystemTable,
        filter: &crate::catalog::infoschema::Pushed,
    ) -> Result<Vec<Vec<Value>>> {
        self.base.system_rows(table, filter)
    }
}

/// The row an expression is evaluated over.
pub struct Env<'a> {
    /// Column values of the current row.
    pub row: &'a [Value],
    /// Aggregate results (after grouping).
    pub aggs: &'a [Value],
    /// Parameters, variables and session facts.
    pub ctx: &'a dyn EvalContext,
}

/// Evaluates an expression.
pub fn eval(e: &Expr, env: &Env<'_>) -> Result<Value> {
    Ok(match e {
        Expr::Literal(v) => v.clone(),
        Expr::Param(i) => env
            .ctx
            .params()
            .get(*i)
            .cloned()
            .ok_or_else(|| Error::WrongArguments("mysqld_stmt_execute".into()))?,
        Expr::Column(i) | Expr::Bound(i) => env.row.get(*i).cloned().unwrap_or(Value::Null),
        Expr::Row(_) => return Err(Error::OperandColumns(1)),
        Expr::Subquery(sq) => return eval_subquery(sq, env),
        Expr::Agg(i) => env.aggs.get(*i).cloned().unwrap_or(Value::Null),
        Expr::SysVar(n) => env.ctx.sys_var(n)?,
        Expr::UserVar(n) => env.ctx.user_var(n),
        Expr::Neg(a) => match eval(a, env)? {
            Value::Null => Value::Null,
            Value::Int(i) => i
                .checked_neg()
                .map(Value::Int)
                .ok_or_else(|| out_of_range("-"))?,
            Value::UInt(u) => {
                if u <= i64::MAX as u64 {
                    Value::Int(-(u as i64))
                } else if u == 1 << 63 {
                    Value::Int(i64::MIN)
                } else {
                    return Err(out_of_range("-"));
                }
            }
            // MySQL's my_decimal_neg leaves a zero positive: `-0.0` is 0.0.
            Value::Decimal(d) if d.is_zero() => Value::Decimal(d.abs()),
            Value::Decimal(d) => Value::Decimal(-d),
            other => Value::Double(-other.to_f64().unwrap_or(0.0)),
        },
        Expr::Not(a) => match eval(a, env)?.truth() {
            None => Value::Null,
            Some(b) => Value::Int(!b as i64),
        },
        Expr::BitNot(a) => match eval(a, env)?.to_i64() {
            None => Value::Null,
            Some(i) => Value::UInt(!(i as u64)),
        },
        Expr::Binary(op, a, b) => binary(*op, a, b, env)?,
        Expr::Collate(a, _) => eval(a, env)?,
        Expr::IsNull(a, neg) => Value::Int((eval(a, env)?.is_null() != *neg) as i64),
        Expr::IsBool(a, want, neg) => {
            let t = eval(a, env)?.truth();
            Value::Int(((t == Some(*want)) != *neg) as i64)
        }
        Expr::InList(a, list, neg) if matches!(a.as_ref(), Expr::Row(_)) => {
            let mut saw_null = false;
            for item in list {
                match row_eq(a, item, env)? {
                    Some(true) => return Ok(Value::Int(!*neg as i64)),
                    None => saw_null = true,
                    Some(false) => {}
                }
            }
            if saw_null {
                Value::Null
            } else {
                Value::Int(*neg as i64)
            }
        }
        Expr::InList(a, list, neg) => {
            let v = eval(a, env)?;
            if v.is_null() {
                return Ok(Value::Null);
            }
            let coll = collation_of(a);
            let mut saw_null = false;
            for item in list {
                let w = eval(item, env)?;
                match compare_as(&v, &w, coll) {
                    Some(Ordering::Equal) => return Ok(Value::Int(!*neg as i64)),
                    None => saw_null = true,
                    _ => {}
                }
            }
            if saw_null {
                Value::Null
            } else {
                Value::Int(*neg as i64)
            }
        }
        Expr::Between(a, lo, hi, neg) => {
            let v = eval(a, env)?;
            let l = eval(lo, env)?;
            let h = eval(hi, env)?;
            let coll = collation_of(a);
            let ge = compare_as(&v, &l, coll).map(|o| o != Ordering::Less);
            let le = compare_as(&v, &h, coll).map(|o| o != Ordering::Greater);
            match and3(ge, le) {
                None => Value::Null,
                Some(b) => Value::Int((b != *neg) as i64),
            }
        }
        Expr::Like(a, p, esc, neg) => {
            let v = eval(a, env)?;
            let pat = eval(p, env)?;
            let coll = comparison_collation(a, p).unwrap_or(Collation::Binary);
            match (v.to_bytes(), pat.to_bytes()) {
                (Some(s), Some(p)) => Value::Int((coll.like(&s, &p, *esc) != *neg) as i64),
                _ => Value::Null,
            }
        }
        Expr::Case {
            operand,
            whens,
            otherwise,
        } => {
            let op = operand.as_ref().map(|o| eval(o, env)).transpose()?;
            let coll = operand.as_deref().and_then(collation_of);
            for (cond, result) in whens {
                let c = eval(cond, env)?;
                let hit = match &op {
                    Some(o) => compare_as(o, &c, coll) == Some(Ordering::Equal),
                    None => c.truth() == Some(true),
                };
                if hit {
                    return eval(result, env);
                }
            }
            match otherwise {
                Some(o) => eval(o, env)?,
                None => Value::Null,
            }
        }
        Expr::Func(f, args) => functions::call(*f, args, env)?,
    })
}

/// The collation an operand carries (see [`Expr::Collate`]).
pub fn collation_of(e: &Expr) -> Option<Collation> {
    match e {
        Expr::Collate(_, c) => Some(*c),
        _ => None,
    }
}

/// The collation a binary comparison of `a` and `b` uses: the one its
/// operands carry; `None` means MySQL's type rules with bytewise strings.
pub fn comparison_collation(a: &Expr, b: &Expr) -> Option<Collation> {
    collation_of(a).or_else(|| collation_of(b))
}

/// Row-value equality `(a, b) = (c, d)`: `None` when unknown (a NULL compared).
fn row_eq(a: &Expr, b: &Expr, env: &Env<'_>) -> Result<Option<bool>> {
    let (Expr::Row(xs), Expr::Row(ys)) = (a, b) else {
        let n = match (a, b) {
            (Expr::Row(xs), _) => xs.len(),
            (_, Expr::Row(ys)) => ys.len(),
            _ => 1,
        };
        return Err(Error::OperandColumns(n));
    };
    if xs.len() != ys.len() {
        return Err(Error::OperandColumns(xs.len()));
    }
    let mut result = Some(true);
    for (x, y) in xs.iter().zip(ys) {
        let (l, r) = (eval(x, env)?, eval(y, env)?);
        match compare_as(&l, &r, comparison_collation(x, y)) {
            Some(Ordering::Equal) => {}
            Some(_) => return Ok(Some(false)),
            None => result = None,
        }
    }
    Ok(result)
}

/// Compares a subquery row with the values of an IN's left operand.
fn values_eq(lhs: &[Value], row: &[Value], colls: &[Option<Collation>]) -> Option<bool> {
    let mut result = Some(true);
    for (i, (l, r)) in lhs.iter().zip(row).enumerate() {
        match compare_as(l, r, colls.get(i).copied().flatten()) {
            Some(Ordering::Equal) => {}
            Some(_) => return Some(false),
            None => result = None,
        }
    }
    result
}

fn eval_subquery(sq: &SubqueryExpr, env: &Env<'_>) -> Result<Value> {
    let outer_len = sq.plan.outer_len.min(env.row.len());
    let rows = env.ctx.subquery(sq, &env.row[..outer_len])?;
    Ok(match &sq.kind {
        SubqueryKind::Scalar => match rows.len() {
            0 => Value::Null,
            1 => rows[0].first().cloned().unwrap_or(Value::Null),
            _ => return Err(Error::SubqueryMoreThanOneRow),
        },
        SubqueryKind::Exists(neg) => Value::Int((rows.is_empty() == *neg) as i64),
        SubqueryKind::In(lhs, neg) => {
            let lv = lhs
                .iter()
                .map(|e| eval(e, env))
                .collect::<Result<Vec<_>>>()?;
            if rows.is_empty() {
                return Ok(Value::Int(*neg as i64));
            }
            let colls: Vec<Option<Collation>> = lhs.iter().map(collation_of).collect();
            let mut saw_null = false;
            for r in rows.iter() {
                match values_eq(&lv, r, &colls) {
                    Some(true) => return Ok(Value::Int(!*neg as i64)),
                    None => saw_null = true,
                    Some(false) => {}
                }
            }
            if saw_null {
                Value::Null
            } else {
                Value::Int(*neg as i64)
            }
        }
    })
}

/// Evaluates a predicate: true only when the value is true (NULL is not).
pub fn eval_predicate(e: &Expr, env: &Env<'_>) -> Result<bool> {
    Ok(eval(e, env)?.truth() == Some(true))
}

fn and3(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

fn out_of_range(op: &str) -> Error {
    Error::ValueOutOfRange {
        type_name: "BIGINT".into(),
        expr: op.to_string(),
    }
}

fn binary(op: BinOp, a: &Expr, b: &Expr, env: &Env<'_>) -> Result<Value> {
    // AND/OR short-circuit with three-valued logic.
    match op {
        BinOp::And => {
            let l = eval(a, env)?.truth();
            if l == Some(false) {
                return Ok(Value::Int(0));
            }
            let r = eval(b, env)?.truth();
            return Ok(match and3(l, r) {
                None => Value::Null,
                Some(x) => Value::Int(x as i64),
            });
        }
        BinOp::Or => {
            let l = eval(a, env)?.truth();
            if l == Some(true) {
                return Ok(Value::Int(1));
            }
            let r = eval(b, env)?.truth();
            return Ok(match (l, r) {
                (_, Some(true)) => Value::Int(1),
                (Some(false), Some(false)) => Value::Int(0),
                _ => Value::Null,
            });
        }
        _ => {}
    }
    if matches!(a, Expr::Row(_)) || matches!(b, Expr::Row(_)) {
        return match op {
            BinOp::Eq => Ok(row_eq(a, b, env)?.map_or(Value::Null, |x| Value::Int(x as i64))),
            BinOp::Ne => Ok(row_eq(a, b, env)?.map_or(Value::Null, |x| Value::Int(!x as i64))),
            _ => Err(Error::Unsupported("this operator on row values".into())),
        };
    }
    let l = eval(a, env)?;
    let r = eval(b, env)?;
    let coll = comparison_collation(a, b);
    if matches!(
        op,
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::NullSafeEq
    ) {
        // A string compared with a number is read as a DOUBLE, with warning
        // 1292 when it is not a whole number, as in arithmetic (in strict-mode
        // DML an error: `UPDATE ... WHERE varchar_col = 0`).
        if let (Value::Bytes(s), n) | (n, Value::Bytes(s)) = (&l, &r) {
            if matches!(
                n,
                Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Double(_)
            ) && !is_whole_number(s)
            {
                warn_truncated_double(env, s);
            }
        }
    }
    if op == BinOp::NullSafeEq {
        return Ok(Value::Int(match (l.is_null(), r.is_null()) {
            (true, true) => 1,
            (true, false) | (false, true) => 0,
            _ => (compare_as(&l, &r, coll) == Some(Ordering::Equal)) as i64,
        }));
    }
    if l.is_null() || r.is_null() {
        return Ok(Value::Null);
    }
    let cmp = |pred: fn(Ordering) -> bool| -> Result<Value> {
        Ok(match compare_as(&l, &r, coll) {
            None => Value::Null,
            Some(o) => Value::Int(pred(o) as i64),
        })
    };
    match op {
        BinOp::Eq => cmp(|o| o == Ordering::Equal),
        BinOp::Ne => cmp(|o| o != Ordering::Equal),
        BinOp::Lt => cmp(|o| o == Ordering::Less),
        BinOp::Le => cmp(|o| o != Ordering::Greater),
        BinOp::Gt => cmp(|o| o == Ordering::Greater),
        BinOp::Ge => cmp(|o| o != Ordering::Less),
        BinOp::Xor => Ok(match (l.truth(), r.truth()) {
            (Some(x), Some(y)) => Value::Int((x != y) as i64),
            _ => Value::Null,
        }),
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
            let (x, y) = (
                l.to_i64().unwrap_or(0) as u64,
                r.to_i64().unwrap_or(0) as u64,
            );
            Ok(Value::UInt(match op {
                BinOp::BitAnd => x & y,
                BinOp::BitOr => x | y,
                _ => x ^ y,
            }))
        }
        _ => {
            // MySQL reads a string operand as a DOUBLE, warning 1292 when it is
            // not a whole number (in strict-mode DML an error: see
            // `STRICT_WARNINGS` in session.rs).
            for v in [&l, &r] {
                if let Value::Bytes(b) = v {
                    if !is_whole_number(b) {
                        warn_truncated_double(env, b);
                    }
                }
            }
            let v = arithmetic(op, &l, &r)?;
            if v.is_null() && matches!(op, BinOp::Div | BinOp::IntDiv | BinOp::Mod) {
                // MySQL: NULL with warning 1365 (an error in strict-mode DML).
                env.ctx.warn(1365, "Division by 0");
            }
            Ok(v)
        }
    }
}

/// Warning 1292 for string `b` read as a DOUBLE.
fn warn_truncated_double(env: &Env<'_>, b: &[u8]) {
    env.ctx.warn(
        1292,
        &format!(
            "Truncated incorrect DOUBLE value: '{}'",
            String::from_utf8_lossy(b)
        ),
    );
}

/// Whether `b`, read as a number, is one whole: optional spaces, a sign,
/// digits with an optional fraction (or a fraction alone), an optional
/// exponent, optional spaces — what converts without warning 1292. (MariaDB
/// adds a Note for trailing spaces; Canyon, whose warnings have no Note level,
/// says nothing.)
fn is_whole_number(b: &[u8]) -> bool {
    let s = b.trim_ascii();
    let mut i = usize::from(matches!(s.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while s.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    let mut n = digits(&mut i);
    if s.get(i) == Some(&b'.') {
        i += 1;
        n += digits(&mut i);
    }
    if n == 0 {
        return false;
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(s.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == s.len()
}

/// Numeric class of an operand for arithmetic.
enum Num {
    Int(i64),
    UInt(u64),
    Dec(Decimal),
    Dbl(f64),
}

fn num(v: &Value) -> Num {
    match v {
        Value::Int(i) => Num::Int(*i),
        Value::UInt(u) => Num::UInt(*u),
        Value::Decimal(d) => Num::Dec(*d),
        Value::Double(d) => Num::Dbl(*d),
        // Strings are DOUBLE in arithmetic, as in MySQL.
        other => Num::Dbl(other.to_f64().unwrap_or(0.0)),
    }
}

/// MySQL arithmetic: integer ops stay integer (with overflow errors, 1690 in
/// MySQL, reported here as out of range), anything with a DOUBLE is DOUBLE,
/// otherwise DECIMAL; `/` is never integer division.
pub fn arithmetic(op: BinOp, l: &Value, r: &Value) -> Result<Value> {
    let (a, b) = (num(l), num(r));
    let as_dec = |n: &Num| -> Option<Decimal> {
        match n {
            Num::Int(i) => Some(Decimal::from(*i)),
            Num::UInt(u) => Some(Decimal::from(*u)),
            Num::Dec(d) => Some(*d),
            Num::Dbl(_) => None,
        }
    };
    let as_f64 = |n: &Num| -> f64 {
        match n {
            Num::Int(i) => *i as f64,
            Num::UInt(u) => *u as f64,
            Num::Dec(d) => d.to_f64().unwrap_or(0.0),
            Num::Dbl(d) => *d,
        }
    };
    // MySQL's DIV of a DECIMAL or DOUBLE truncates the exact quotient to an
    // integer that is BIGINT UNSIGNED when either operand is unsigned, so a
    // negative quotient is out of range (1690) there too.
    let unsigned = matches!(a, Num::UInt(_)) || matches!(b, Num::UInt(_));
    let int_quotient = |q: Option<Decimal>| -> Result<Value> {
        let q = q.map(|q| q.trunc()).ok_or_else(|| out_of_range("DIV"))?;
        if q.is_zero() {
            // -0.5 DIV 1 is 0, also when unsigned.
            Ok(if unsigned {
                Value::UInt(0)
            } else {
                Value::Int(0)
            })
        } else if unsigned {
            q.to_u64()
                .map(Value::UInt)
                .ok_or_else(|| out_of_range("DIV"))
        } else {
            q.to_i64()
                .map(Value::Int)
                .ok_or_else(|| out_of_range("DIV"))
        }
    };
    let sym = match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::IntDiv => "DIV",
        _ => "%",
    };
    // DOUBLE wins.
    if matches!(a, Num::Dbl(_)) || matches!(b, Num::Dbl(_)) {
        let (x, y) = (as_f64(&a), as_f64(&b));
        return Ok(match op {
            BinOp::Add => Value::Double(x + y),
            BinOp::Sub => Value::Double(x - y),
            BinOp::Mul => Value::Double(x * y),
            BinOp::Div => {
                if y == 0.0 {
                    Value::Null
                } else {
                    Value::Double(x / y)
                }
            }
            BinOp::IntDiv => {
                if y == 0.0 {
                    Value::Null
                } else {
                    return int_quotient(Decimal::from_f64_retain((x / y).trunc()));
                }
            }
            _ => {
                if y == 0.0 {
                    Value::Null
                } else {
                    Value::Double(x % y)
                }
            }
        });
    }
    // Pure integers.
    if let (Some(x), Some(y)) = (int128(&a), int128(&b)) {
        let res = match op {
            BinOp::Add => Some(x + y),
            BinOp::Sub => Some(x - y),
            BinOp::Mul => x.checked_mul(y),
            BinOp::IntDiv => {
                if y == 0 {
                    return Ok(Value::Null);
                }
                Some(x / y)
            }
            BinOp::Mod => {
                if y == 0 {
                    return Ok(Value::Null);
                }
                Some(x % y)
            }
            _ => None,
        };
        if op != BinOp::Div {
            let n = res.ok_or_else(|| out_of_range(sym))?;
            // MySQL: with an UNSIGNED operand the result is BIGINT UNSIGNED (for
            // MOD: with an UNSIGNED dividend), else BIGINT; either way an
            // overflow is an error (1690), not a wrap.
            let unsigned = if op == BinOp::Mod {
                matches!(a, Num::UInt(_))
            } else {
                unsigned
            };
            return if unsigned {
                u64::try_from(n)
                    .map(Value::UInt)
                    .map_err(|_| out_of_range(sym))
            } else {
                i64::try_from(n)
                    .map(Value::Int)
                    .map_err(|_| out_of_range(sym))
            };
        }
    }
    // DECIMAL.
    let (x, y) = match (as_dec(&a), as_dec(&b)) {
        (Some(x), Some(y)) => (x, y),
        _ => return Ok(Value::Null),
    };
    let res = match op {
        BinOp::Add => x.checked_add(y),
        BinOp::Sub => x.checked_sub(y),
        // MySQL: a product's scale is the sum of the operands' (`0 * 11.99` is
        // 0.00); rust_decimal returns a zero product at scale 0.
        BinOp::Mul => x.checked_mul(y).map(|mut p| {
            let scale = (x.scale() + y.scale()).min(28);
            if p.is_zero() && p.scale() < scale {
                p.rescale(scale);
            }
            p
        }),
        BinOp::Div => {
            if y.is_zero() {
                return Ok(Value::Null);
            }
            // MySQL: the result's declared scale is the dividend's scale +
            // div_precision_increment (4), but the value keeps that scale
            // rounded up to a whole 9-digit group (MySQL's decimal word), so
            // `1/3*3` is 0.999999999 inside and 1.0000 once the result is
            // rounded to its declared scale at output (see select.rs). The
            // carried digits are truncated, not rounded, as MySQL's do_div_mod
            // computes them: 1/7 is 0.142857142 inside (seen where the
            // quotient becomes a DOUBLE).
            let internal = (x.scale() + 4).div_ceil(9) * 9;
            let internal = internal.min(28);
            x.checked_div(y).map(|q| {
                let mut q =
                    q.round_dp_with_strategy(internal, rust_decimal::RoundingStrategy::ToZero);
                q.rescale(internal);
                q
            })
        }
        BinOp::IntDiv => {
            if y.is_zero() {
                return Ok(Value::Null);
            }
            return int_quotient(x.checked_div(y));
        }
        _ => {
            if y.is_zero() {
                return Ok(Value::Null);
            }
            // A zero remainder is a positive zero. (MySQL's decimal MOD gives
            // some of them the dividend's sign, `-2.00 MOD 2` is -0.00, by
            // how the digits fall in its 9-digit words; not reproduced.)
            x.checked_rem(y)
                .map(|r| if r.is_zero() { r.abs() } else { r })
        }
    };
    res.map(Value::Decimal).ok_or_else(|| out_of_range(sym))
}

fn int128(n: &Num) -> Option<i128> {
    match n {
        Num::Int(i) => Some(*i as i128),
        Num::UInt(u) => Some(*u as i128),
        _ => None,
    }
}

/// MySQL LIKE: `%` any run, `_` one character (UTF-8 aware), `esc` escapes;
/// characters compare bytewise (see [`Collation::like`] for the others).
pub fn like(s: &[u8], p: &[u8], esc: u8) -> bool {
    Collation::Binary.like(s, p, esc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns() {
        assert!(like(b"abc", b"a%", b'\\'));
        assert!(like(b"abc", b"%c", b'\\'));
        assert!(like(b"abc", b"a_c", b'\\'));
        assert!(!like(b"abc", b"a_d", b'\\'));
        assert!(like(b"a%c", b"a\\%c", b'\\'));
        assert!(!like(b"abc", b"a\\%c", b'\\'));
        assert!(like(b"", b"%", b'\\'));
        assert!(like(b"mississippi", b"%iss%ppi", b'\\'));
        assert!(like("héllo".as_bytes(), b"h_llo", b'\\'));
    }

    #[test]
    fn whole_numbers_are_what_converts_without_a_warning() {
        for ok in ["1", " 12 ", "-3.5", "+.5", "5.", "1e3", "2.5E-2", "0"] {
            assert!(is_whole_number(ok.as_bytes()), "{ok}");
        }
        for bad in [
            "", " ", "abc", "12abc", "1e", ".", "-", "inf", "1.2.3", "0x10",
        ] {
            assert!(!is_whole_number(bad.as_bytes()), "{bad}");
        }
    }

    #[test]
    fn integer_and_decimal_arithmetic() {
        assert_eq!(
            arithmetic(BinOp::Add, &Value::Int(2), &Value::Int(3)),
            Ok(Value::Int(5))
        );
        assert_eq!(
            arithmetic(BinOp::Div, &Value::Int(1), &Value::Int(2)),
            Ok(Value::Decimal(Decimal::new(5000, 4)))
        );
        assert_eq!(
            arithmetic(BinOp::Div, &Value::Int(1), &Value::Int(0)),
            Ok(Value::Null)
        );
        assert_eq!(
            arithmetic(BinOp::IntDiv, &Value::Int(7), &Value::Int(2)),
            Ok(Value::Int(3))
        );
        assert_eq!(
            arithmetic(BinOp::Mod, &Value::Int(-7), &Value::Int(2)),
            Ok(Value::Int(-1))
        );
        assert!(arithmetic(BinOp::Mul, &Value::Int(i64::MAX), &Value::Int(2)).is_err());
        assert_eq!(
            arithmetic(BinOp::Add, &Value::str("1.5"), &Value::Int(1)),
            Ok(Value::Double(2.5))
        );
    }

    #[test]
    fn number_literals_are_typed_like_mysql() {
        assert_eq!(number_literal("42"), Ok(Value::Int(42)));
        assert_eq!(
            number_literal("18446744073709551615"),
            Ok(Value::UInt(u64::MAX))
        );
        assert_eq!(
            number_literal("1.50"),
            Ok(Value::Decimal(Decimal::new(150, 2)))
        );
        assert_eq!(number_literal("1e3"), Ok(Value::Double(1000.0)));
    }
}
