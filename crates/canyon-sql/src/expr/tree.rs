//! Bound expressions: the tree the binder builds from sqlparser's AST, and
//! evaluation with MySQL's semantics (three-valued logic, numeric promotion,
//! integer overflow errors, division by zero giving NULL).
//!
//! Binding (the planner's `crate::plan::bind`) resolves every name once (columns to positions, functions to
//! [`Func`]); evaluation then only walks the tree. Placeholders (`?`) are numbered
//! in the order the binder meets them, which is their textual order because each
//! statement binds its clauses in textual order and children left to right.
//!
//! Nesting is bounded twice: sqlparser stops at its recursion limit (which we
//! report as [`Error::TooDeep`](canyon_common::Error::TooDeep)), and the
//! binder refuses trees deeper than [`MAX_DEPTH`], so evaluation's recursion
//! is bounded too.
//!
//! This file holds the tree itself ([`Expr`] and its parts, with the walks
//! over it). [`eval`](mod@super::eval) evaluates it. The binder that builds
//! it is the planner's (`crate::plan::bind`, a layer above: binding plans
//! subqueries), so a subquery's plan reaches the tree as a
//! [`SubqueryPlan`]: the interface of the planner's select plan, handed down
//! as a trait object, which tells the tree what it asks of a subquery (its
//! output's kinds and collations, the width of its enclosing frame) and
//! lets the layers above get their plan back.

use crate::catalog::Table;
use crate::expr::functions::{self, Func};
use crate::types::collation::Collation;
use crate::types::value::Value;
use crate::types::ExprKind;
use std::any::Any;
use std::sync::Arc;

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
    /// << (BIGINT UNSIGNED; a shift of 64 or more gives 0)
    Shl,
    /// >> (BIGINT UNSIGNED; a shift of 64 or more gives 0)
    Shr,
}

impl BinOp {
    /// Whether the operator compares (`=`, `<=>`, `<>`, `<`, `<=`, `>`, `>=`).
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq
                | BinOp::NullSafeEq
                | BinOp::Ne
                | BinOp::Lt
                | BinOp::Le
                | BinOp::Gt
                | BinOp::Ge
        )
    }

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
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
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
    /// GROUP_CONCAT: the non-NULL values joined by the separator, in the
    /// ORDER BY order, cut at `group_concat_max_len` bytes.
    GroupConcat,
    /// JSON_ARRAYAGG(x): the values (NULL as JSON null) as a JSON array.
    JsonArrayAgg,
    /// JSON_OBJECTAGG(k, v): bound with the argument `Row([k, v])`; a JSON
    /// object, the last value of a key winning.
    JsonObjectAgg,
    // The window-only functions below exist only with an OVER clause
    // ([`AggCall::window`] set); see `crate::exec::window`.
    /// ROW_NUMBER(): the row's position in its partition, from 1.
    RowNumber,
    /// RANK(): 1 + the number of rows before the row's first peer.
    Rank,
    /// DENSE_RANK(): the number of distinct peer groups up to the row's.
    DenseRank,
    /// PERCENT_RANK(): (RANK() - 1) / (partition rows - 1), 0 for one row.
    PercentRank,
    /// CUME_DIST(): rows up to the row's last peer / partition rows.
    CumeDist,
    /// NTILE(n): the bucket (1 to n) of n nearly equal ones the row falls in.
    Ntile,
    /// LAG(x [, n [, default]]): x of the row n (1) rows before, in the
    /// partition; else default (NULL).
    Lag,
    /// LEAD(x [, n [, default]]): likewise, n rows after.
    Lead,
    /// FIRST_VALUE(x): x of the frame's first row.
    FirstValue,
    /// LAST_VALUE(x): x of the frame's last row.
    LastValue,
    /// NTH_VALUE(x, n): x of the frame's n-th row (NULL when it has fewer).
    NthValue,
}

impl AggFunc {
    /// Whether the function exists only as a window function.
    pub fn window_only(self) -> bool {
        matches!(
            self,
            AggFunc::RowNumber
                | AggFunc::Rank
                | AggFunc::DenseRank
                | AggFunc::PercentRank
                | AggFunc::CumeDist
                | AggFunc::Ntile
                | AggFunc::Lag
                | AggFunc::Lead
                | AggFunc::FirstValue
                | AggFunc::LastValue
                | AggFunc::NthValue
        )
    }

    /// Whether the function reads its window's frame (the others read the
    /// whole partition and ignore a frame, as MySQL does with note 3599).
    pub fn uses_frame(self) -> bool {
        !matches!(
            self,
            AggFunc::RowNumber
                | AggFunc::Rank
                | AggFunc::DenseRank
                | AggFunc::PercentRank
                | AggFunc::CumeDist
                | AggFunc::Ntile
                | AggFunc::Lag
                | AggFunc::Lead
        )
    }
}

/// One end of a window frame (see `crate::exec::window` for how each is
/// resolved to a row of the partition).
#[derive(Debug, Clone, PartialEq)]
pub enum FrameBound {
    /// UNBOUNDED PRECEDING: the partition's first row.
    UnboundedPreceding,
    /// `n PRECEDING`. ROWS: `n`, a constant row count. RANGE: the boundary
    /// value, an expression over the row (`key - n`, or `key + n` when the
    /// key sorts descending; INTERVALs likewise).
    Preceding(Box<Expr>),
    /// CURRENT ROW (RANGE: the row's first / last peer).
    CurrentRow,
    /// `n FOLLOWING`, as [`FrameBound::Preceding`] the other way.
    Following(Box<Expr>),
    /// UNBOUNDED FOLLOWING: the partition's last row.
    UnboundedFollowing,
}

/// A window frame: ROWS or RANGE, BETWEEN start AND end.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowFrame {
    /// ROWS (physical offsets) rather than RANGE (offsets of the ORDER BY
    /// key's value).
    pub rows: bool,
    /// Where the frame starts.
    pub start: FrameBound,
    /// Where it ends.
    pub end: FrameBound,
}

/// The window of a window function call, resolved (named windows and their
/// inheritance applied) and bound.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowDef {
    /// The window's name for messages and EXPLAIN (`<unnamed window>`).
    pub name: String,
    /// PARTITION BY, with the collation a string key compares under.
    pub partition: Vec<(Expr, Option<Collation>)>,
    /// ORDER BY: (key, descending, collation).
    pub order: Vec<(Expr, bool, Option<Collation>)>,
    /// The frame; `None` is MySQL's default: with ORDER BY, RANGE BETWEEN
    /// UNBOUNDED PRECEDING AND CURRENT ROW (peers included), else the whole
    /// partition.
    pub frame: Option<WindowFrame>,
    /// The function's arguments after the first: LAG / LEAD's offset and
    /// default, NTH_VALUE's and NTILE's n.
    pub extra: Vec<Expr>,
}

impl WindowDef {
    /// Whether two windows sort their rows the same way (one sort serves
    /// both).
    pub fn same_sort(&self, other: &WindowDef) -> bool {
        self.partition == other.partition && self.order == other.order
    }

    /// Every expression the window reads.
    pub fn exprs(&self) -> impl Iterator<Item = &Expr> {
        fn bound(b: &FrameBound) -> Option<&Expr> {
            match b {
                FrameBound::Preceding(e) | FrameBound::Following(e) => Some(e.as_ref()),
                _ => None,
            }
        }
        self.partition
            .iter()
            .map(|(e, _)| e)
            .chain(self.order.iter().map(|(e, _, _)| e))
            .chain(self.extra.iter())
            .chain(
                self.frame
                    .iter()
                    .flat_map(|f| bound(&f.start).into_iter().chain(bound(&f.end))),
            )
    }

    /// The window with every expression rewritten by `f`.
    pub fn rewrite(&self, f: &dyn Fn(&Expr) -> Option<Expr>) -> WindowDef {
        let bound = |b: &FrameBound| match b {
            FrameBound::Preceding(e) => FrameBound::Preceding(Box::new(e.rewrite(f))),
            FrameBound::Following(e) => FrameBound::Following(Box::new(e.rewrite(f))),
            other => other.clone(),
        };
        WindowDef {
            name: self.name.clone(),
            partition: self
                .partition
                .iter()
                .map(|(e, c)| (e.rewrite(f), *c))
                .collect(),
            order: self
                .order
                .iter()
                .map(|(e, d, c)| (e.rewrite(f), *d, *c))
                .collect(),
            frame: self.frame.as_ref().map(|fr| WindowFrame {
                rows: fr.rows,
                start: bound(&fr.start),
                end: bound(&fr.end),
            }),
            extra: self.extra.iter().map(|e| e.rewrite(f)).collect(),
        }
    }
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
    /// GROUP_CONCAT's ORDER BY keys: (expression, descending, the
    /// collation a string key sorts under).
    pub order: Vec<(Expr, bool, Option<Collation>)>,
    /// GROUP_CONCAT's SEPARATOR (',' unless given).
    pub separator: Vec<u8>,
    /// The window of a window function call (`f(...) OVER (...)`); `None`
    /// for a grouping aggregate.
    pub window: Option<Box<WindowDef>>,
}

impl AggCall {
    /// Every expression the aggregate reads: its argument, its ORDER BY
    /// keys and its window's expressions (what column pruning and subquery
    /// discovery must see).
    pub fn exprs(&self) -> impl Iterator<Item = &Expr> {
        self.arg
            .iter()
            .chain(self.order.iter().map(|(e, _, _)| e))
            .chain(self.window.iter().flat_map(|w| w.exprs()))
    }

    /// The call with every expression rewritten by `f`.
    pub fn rewrite(&self, f: &dyn Fn(&Expr) -> Option<Expr>) -> AggCall {
        AggCall {
            func: self.func,
            arg: self.arg.as_ref().map(|e| e.rewrite(f)),
            distinct: self.distinct,
            coll: self.coll,
            order: self
                .order
                .iter()
                .map(|(e, d, c)| (e.rewrite(f), *d, *c))
                .collect(),
            separator: self.separator.clone(),
            window: self.window.as_ref().map(|w| Box::new(w.rewrite(f))),
        }
    }
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
    /// A row value `(a, b, ...)` or `ROW(a, b, ...)`, only as an operand of a
    /// comparison or of IN (see [`rows`](mod@super::rows)).
    Row(Vec<Expr>),
    /// A subquery (scalar, row, EXISTS, IN or quantified).
    Subquery(Box<SubqueryExpr>),
    /// The value of the inner expression, compared under a collation: an
    /// explicit `expr COLLATE name`, or the collation the binder chose for a
    /// comparison, IN, BETWEEN, LIKE or CASE whose operands are all strings
    /// and whose collation is not bytewise (then every operand carries it;
    /// see "Collations" on the planner's `Binder`). Evaluation is the inner value;
    /// [`comparison_collation`](super::eval::comparison_collation) finds the
    /// collation for the operator.
    Collate(Box<Expr>, Collation),
    /// A call of a stored function whose arguments read the row (a call
    /// with constant arguments is evaluated before planning, by the session).
    /// Evaluation hands it to [`EvalContext::call_stored`](super::eval::EvalContext::call_stored).
    Stored(Box<StoredCall>),
    /// `MATCH (cols) AGAINST ('text' [mode])` over a FULLTEXT index (see
    /// [`crate::types::fulltext`]): the row's relevance, a DOUBLE.
    Match(Box<MatchExpr>),
}

/// A bound `MATCH ... AGAINST`. Evaluation asks the context for the
/// search's table statistics ([`EvalContext::fulltext`](super::eval::EvalContext::fulltext))
/// and ranks the row's text with them.
#[derive(Debug, Clone)]
pub struct MatchExpr {
    /// The table the index belongs to.
    pub table: Arc<crate::catalog::Table>,
    /// The FULLTEXT index, by position in the table's `indexes`.
    pub index: usize,
    /// The index's columns as frame expressions, in index order.
    pub columns: Vec<Expr>,
    /// The search string (a literal or a parameter).
    pub against: Box<Expr>,
    /// The search modifier.
    pub mode: crate::types::fulltext::Mode,
    /// Whether words fold to lower case (the index's collation is
    /// case-insensitive).
    pub fold: bool,
}

impl PartialEq for MatchExpr {
    fn eq(&self, other: &MatchExpr) -> bool {
        self.table.def.id == other.table.def.id
            && self.index == other.index
            && self.columns == other.columns
            && self.against == other.against
            && self.mode == other.mode
    }
}

/// A bound call of a stored function.
#[derive(Debug, Clone)]
pub struct StoredCall {
    /// The function, as the catalog holds it.
    pub routine: Arc<crate::catalog::routines::RoutineDef>,
    /// The arguments.
    pub args: Vec<Expr>,
}

impl StoredCall {
    /// The kind of the function's RETURNS type.
    pub fn kind(&self) -> ExprKind {
        self.routine
            .returns_type
            .map(ExprKind::of)
            .unwrap_or(ExprKind::String)
    }

    /// [`Expr::rewrite`] of the arguments (apart, not inlined: `rewrite`
    /// recurses and keeps its frame small).
    #[inline(never)]
    fn rewrite(&self, f: &dyn Fn(&Expr) -> Option<Expr>) -> Expr {
        Expr::Stored(Box::new(StoredCall {
            routine: self.routine.clone(),
            args: self.args.iter().map(|x| x.rewrite(f)).collect(),
        }))
    }
}

impl PartialEq for StoredCall {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.routine, &other.routine) && self.args == other.args
    }
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
    /// Also `lhs = ANY|SOME (SELECT ...)` and `lhs <> ALL (SELECT ...)`, which
    /// are IN and NOT IN.
    In(Vec<Expr>, bool),
    /// `lhs op ANY|SOME|ALL (SELECT one column)`: (lhs, op, ALL?), for the
    /// comparisons `=`, `<>`, `<`, `<=`, `>`, `>=` other than `= ANY` and
    /// `<> ALL` (see [`rows`](mod@super::rows) for the NULL rules).
    Quantified(Box<Expr>, BinOp, bool),
    /// `(SELECT a, b, ...)` as an operand of a row comparison: its one row,
    /// a row of NULLs for none, error 1242 for more than one.
    Row,
}

/// What the tree asks of a subquery's plan, handed down by the planner: the
/// plan itself is the planner's (`crate::plan::select::SelectPlan`, a layer
/// above), which implements this. Evaluation runs a subquery through the
/// [`EvalContext`](super::eval::EvalContext) it is given, and the layers
/// above get their plan back with [`as_any`](SubqueryPlan::as_any) (the
/// planner's `select_plan`).
pub trait SubqueryPlan: std::fmt::Debug + Send + Sync + 'static {
    /// The kind of each output column.
    fn kinds(&self) -> &[ExprKind];
    /// The collation of each output column that is a string under a
    /// collation other than bytewise (`None` otherwise).
    fn colls(&self) -> &[Option<Collation>];
    /// The width of the enclosing frame the subquery's frame starts with.
    fn outer_len(&self) -> usize;
    /// The plan, for a downcast to its type.
    fn as_any(&self) -> &dyn Any;
    /// The shared plan, for a downcast that keeps it shared.
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
}

/// A bound subquery.
#[derive(Debug, Clone)]
pub struct SubqueryExpr {
    /// The subquery's plan; its frame starts with the enclosing frame.
    pub plan: Arc<dyn SubqueryPlan>,
    /// How its rows are used.
    pub kind: SubqueryKind,
    /// Whether it reads columns of an enclosing query (then it runs once per
    /// outer row; otherwise once per statement, cached).
    pub correlated: bool,
}

impl PartialEq for SubqueryExpr {
    fn eq(&self, other: &Self) -> bool {
        // The same plan, by address (`Arc::ptr_eq` ignores the vtable).
        Arc::ptr_eq(&self.plan, &other.plan) && self.kind == other.kind
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
            // A stored function may read tables and need not be deterministic.
            Expr::Stored(_) => false,
            // Needs the table's statistics, through a reader.
            Expr::Match(_) => false,
        }
    }

    /// Calls `f` on every direct child expression (not into subqueries' plans,
    /// but into an IN or quantified subquery's left operand).
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
            Expr::Stored(c) => c.args.iter().for_each(f),
            Expr::Match(m) => {
                m.columns.iter().for_each(&mut *f);
                f(&m.against);
            }
            Expr::Subquery(sq) => match &sq.kind {
                SubqueryKind::In(lhs, _) => lhs.iter().for_each(f),
                SubqueryKind::Quantified(lhs, _, _) => f(lhs),
                SubqueryKind::Scalar | SubqueryKind::Exists(_) | SubqueryKind::Row => {}
            },
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
            Expr::Stored(c) => c.rewrite(f),
            Expr::Match(m) => Expr::Match(Box::new(MatchExpr {
                columns: m.columns.iter().map(|x| x.rewrite(f)).collect(),
                against: r(&m.against),
                ..m.as_ref().clone()
            })),
            Expr::Func(func, args) => {
                Expr::Func(*func, args.iter().map(|x| x.rewrite(f)).collect())
            }
            Expr::Row(items) => Expr::Row(items.iter().map(|x| x.rewrite(f)).collect()),
            Expr::Subquery(sq) => {
                let mut sq = sq.as_ref().clone();
                match &sq.kind {
                    SubqueryKind::In(lhs, neg) => {
                        sq.kind =
                            SubqueryKind::In(lhs.iter().map(|x| x.rewrite(f)).collect(), *neg);
                    }
                    SubqueryKind::Quantified(lhs, op, all) => {
                        sq.kind = SubqueryKind::Quantified(r(lhs), *op, *all);
                    }
                    SubqueryKind::Scalar | SubqueryKind::Exists(_) | SubqueryKind::Row => {}
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

    /// Whether the expression contains a `MATCH ... AGAINST` (which needs a
    /// reader to evaluate, as a subquery does).
    pub fn has_match(&self) -> bool {
        let mut found = matches!(self, Expr::Match(_));
        if !found {
            self.for_each_child(&mut |c| found |= c.has_match());
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
            Expr::Stored(c) => c.kind(),
            Expr::Match(_) => ExprKind::Double,
            Expr::Subquery(sq) => match &sq.kind {
                SubqueryKind::Scalar => sq.plan.kinds().first().copied().unwrap_or(ExprKind::Null),
                _ => ExprKind::Int,
            },
            Expr::Agg(i) => match aggs.get(*i) {
                Some(a) => match a.func {
                    AggFunc::Count | AggFunc::CountStar => ExprKind::Int,
                    AggFunc::GroupConcat => ExprKind::String,
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
                    AggFunc::JsonArrayAgg | AggFunc::JsonObjectAgg => ExprKind::Json,
                    AggFunc::RowNumber | AggFunc::Rank | AggFunc::DenseRank | AggFunc::Ntile => {
                        ExprKind::Int
                    }
                    AggFunc::PercentRank | AggFunc::CumeDist => ExprKind::Double,
                    AggFunc::Min
                    | AggFunc::Max
                    | AggFunc::Lag
                    | AggFunc::Lead
                    | AggFunc::FirstValue
                    | AggFunc::LastValue
                    | AggFunc::NthValue => a
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
                BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => {
                    ExprKind::UInt
                }
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
