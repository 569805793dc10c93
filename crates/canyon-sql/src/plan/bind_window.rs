//! Binding window function calls: `f(args) OVER (window)` and `OVER name`
//! to an [`AggCall`] whose [`WindowDef`] holds the resolved window. The
//! evaluation is `crate::exec::window`'s (its module doc is the essay on
//! frames, peers and the order of evaluation).
//!
//! # Rules (MySQL 8.0, manual 12.21.2 to 12.21.5), and the error each breaks
//!
//! | rule | error |
//! |---|---|
//! | window functions only in the select list and ORDER BY | 3593 |
//! | not inside an aggregate or another window function's arguments | 3593 |
//! | not in a window's PARTITION BY / ORDER BY / frame | 3595 |
//! | a select-list alias of a window expression not in GROUP BY / HAVING | 3594 |
//! | `OVER w`, `OVER (w ...)`, `WINDOW v AS (w ...)` name a defined window | 3579 |
//! | no window defined twice in one WINDOW clause | 3591 |
//! | no cycle of windows referring to each other | 3580 |
//! | a window referring to another defines no PARTITION BY | 3581 |
//! | the referred window has no frame | 3582 |
//! | not both define ORDER BY | 3583 |
//! | frame start not UNBOUNDED FOLLOWING, end not UNBOUNDED PRECEDING | 3584, 3585 |
//! | a ROWS / RANGE offset: a non-negative number (ROWS: integer) | 3586 |
//! | RANGE with an offset: one ORDER BY key, numeric or temporal | 3587 |
//! | ... temporal key: INTERVAL offsets only; numeric: no INTERVAL | 3588, 3589 |
//! | INTERVAL only with RANGE | 3596 |
//! | NTILE / NTH_VALUE's n a positive integer, LAG / LEAD's offset a non-negative one, all constant | 1210 |
//! | `f(DISTINCT ...) OVER`, IGNORE NULLS, GROUP_CONCAT OVER | 1235 / 1064 |
//!
//! The functions that ignore frames (ranking, LAG, LEAD) ignore one that is
//! given, as MySQL does (it adds note 3599; Canyon adds nothing).

use crate::expr::{AggCall, AggFunc, Expr, FrameBound, WindowDef, WindowFrame};
use crate::plan::bind::Binder;
use crate::types::value::Value;
use crate::types::ExprKind;
use canyon_common::{Error, Result, WindowRule};
use sqlparser::ast;

/// The name a window without one is shown with, as in MySQL's messages.
pub const UNNAMED: &str = "<unnamed window>";

/// A window resolved from its text: named windows it refers to applied.
struct Resolved {
    name: String,
    partition: Vec<ast::Expr>,
    order: Vec<ast::OrderByExpr>,
    frame: Option<ast::WindowFrame>,
}

/// The window function a name calls with OVER; `None`: no such function.
fn window_func(name: &str) -> Option<AggFunc> {
    Some(match name {
        "ROW_NUMBER" => AggFunc::RowNumber,
        "RANK" => AggFunc::Rank,
        "DENSE_RANK" => AggFunc::DenseRank,
        "PERCENT_RANK" => AggFunc::PercentRank,
        "CUME_DIST" => AggFunc::CumeDist,
        "NTILE" => AggFunc::Ntile,
        "LAG" => AggFunc::Lag,
        "LEAD" => AggFunc::Lead,
        "FIRST_VALUE" => AggFunc::FirstValue,
        "LAST_VALUE" => AggFunc::LastValue,
        "NTH_VALUE" => AggFunc::NthValue,
        "COUNT" => AggFunc::Count,
        "SUM" => AggFunc::Sum,
        "AVG" => AggFunc::Avg,
        "MIN" => AggFunc::Min,
        "MAX" => AggFunc::Max,
        "JSON_ARRAYAGG" => AggFunc::JsonArrayAgg,
        "JSON_OBJECTAGG" => AggFunc::JsonObjectAgg,
        _ => return None,
    })
}

/// Whether `name` is a function that exists only with OVER (called without
/// one it is a syntax error, as in MySQL).
pub fn is_window_only(name: &str) -> bool {
    window_func(name).is_some_and(AggFunc::window_only)
}

fn err(rule: WindowRule, name: &str) -> Error {
    Error::Window(rule, name.to_string())
}

impl Binder<'_> {
    /// Checks a query block's WINDOW clause (names unique, references
    /// defined and acyclic, inheritance rules) and keeps it for the calls
    /// that name its windows.
    #[inline(never)]
    pub(super) fn set_named_windows(&mut self, defs: &[ast::NamedWindowDefinition]) -> Result<()> {
        self.named_windows.clear();
        for (i, d) in defs.iter().enumerate() {
            let name = d.0.value.clone();
            if defs[..i]
                .iter()
                .any(|o| o.0.value.eq_ignore_ascii_case(&name))
            {
                return Err(err(WindowRule::DuplicateName, &name));
            }
            let spec = match &d.1 {
                ast::NamedWindowExpr::WindowSpec(s) => s.clone(),
                ast::NamedWindowExpr::NamedWindow(other) => ast::WindowSpec {
                    window_name: Some(other.clone()),
                    partition_by: Vec::new(),
                    order_by: Vec::new(),
                    window_frame: None,
                },
            };
            self.named_windows.push((name, spec));
        }
        for (name, _) in self.named_windows.clone() {
            self.resolve_named(&name, 0)?;
        }
        Ok(())
    }

    /// The named window `name` with what it inherits applied.
    fn resolve_named(&self, name: &str, depth: usize) -> Result<Resolved> {
        if depth > self.named_windows.len() {
            return Err(err(WindowRule::Circularity, name));
        }
        let spec = self
            .named_windows
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, s)| s.clone())
            .ok_or_else(|| err(WindowRule::NoSuchWindow, name))?;
        let mut r = self.resolve_spec(&spec, depth + 1)?;
        r.name = name.to_string();
        Ok(r)
    }

    /// A window specification with the window it names (if any) applied:
    /// the child adds ORDER BY and a frame to its parent's PARTITION BY.
    fn resolve_spec(&self, spec: &ast::WindowSpec, depth: usize) -> Result<Resolved> {
        let Some(base) = &spec.window_name else {
            return Ok(Resolved {
                name: UNNAMED.to_string(),
                partition: spec.partition_by.clone(),
                order: spec.order_by.clone(),
                frame: spec.window_frame.clone(),
            });
        };
        let parent = self.resolve_named(&base.value, depth)?;
        if !spec.partition_by.is_empty() {
            return Err(err(WindowRule::NoChildPartitioning, ""));
        }
        if parent.frame.is_some() {
            return Err(err(WindowRule::NoInheritFrame, &parent.name));
        }
        if !parent.order.is_empty() && !spec.order_by.is_empty() {
            return Err(err(
                WindowRule::NoRedefineOrderBy,
                &format!("{UNNAMED}\0{}", parent.name),
            ));
        }
        Ok(Resolved {
            name: UNNAMED.to_string(),
            partition: parent.partition,
            order: if spec.order_by.is_empty() {
                parent.order
            } else {
                spec.order_by.clone()
            },
            frame: spec.window_frame.clone(),
        })
    }

    /// Binds `name(args) OVER over` (`f` is the call). Out of line: the
    /// binder recurses through `bind_function`, whose frame this would grow.
    #[inline(never)]
    pub(super) fn bind_window_call(
        &mut self,
        f: &ast::Function,
        name: &str,
        over: &ast::WindowType,
    ) -> Result<Expr> {
        let lower = name.to_ascii_lowercase();
        let Some(mut func) = window_func(name) else {
            // MySQL's grammar has OVER only after these functions.
            return Err(Error::Syntax(format!("{lower}(...) OVER")));
        };
        if !self.allow_windows || !self.allow_aggs {
            return Err(match &self.window_spec {
                Some(w) => err(WindowRule::NestedInSpec, w),
                None => err(WindowRule::InvalidUse, &lower),
            });
        }
        let (args, distinct) = match &f.args {
            ast::FunctionArguments::None => (Vec::new(), false),
            ast::FunctionArguments::List(l) => {
                if !l.clauses.is_empty() {
                    return Err(Error::Syntax(format!("{lower}(...) OVER")));
                }
                (
                    l.args.iter().collect::<Vec<_>>(),
                    matches!(
                        l.duplicate_treatment,
                        Some(ast::DuplicateTreatment::Distinct)
                    ),
                )
            }
            ast::FunctionArguments::Subquery(_) => {
                return Err(Error::Syntax(format!("{lower}(...) OVER")))
            }
        };
        if distinct {
            return Err(Error::Unsupported("<window function>(DISTINCT ..)".into()));
        }
        if matches!(f.null_treatment, Some(ast::NullTreatment::IgnoreNulls)) {
            return Err(Error::Unsupported("IGNORE NULLS".into()));
        }
        if f.filter.is_some() || !f.within_group.is_empty() {
            return Err(Error::Syntax(format!("{lower}(...) OVER")));
        }
        let resolved = match over {
            ast::WindowType::NamedWindow(id) => self.resolve_named(&id.value, 0)?,
            ast::WindowType::WindowSpec(spec) => self.resolve_spec(spec, 0)?,
        };

        // Arguments: no window function inside (3593); aggregates as the
        // select list allows them.
        self.allow_windows = false;
        let bound = self.bind_window_args(&args, &mut func, &lower);
        let window = bound.and_then(|(arg, extra)| {
            let saved = self.window_spec.replace(resolved.name.clone());
            let w = self.bind_window_def(&resolved, extra);
            self.window_spec = saved;
            Ok((arg, w?))
        });
        self.allow_windows = true;
        let (arg, window) = window?;
        check_constant_args(func, &window.extra, &lower)?;
        let arg = match (func, arg) {
            (AggFunc::Sum | AggFunc::Avg, Some(e)) => Some(self.numeric_reading(e)),
            (_, arg) => arg,
        };
        let coll = arg
            .as_ref()
            .and_then(|e| self.derive(e))
            .map(|d| d.0)
            .filter(|c| !c.is_bytewise());
        self.aggs.push(AggCall {
            func,
            arg,
            distinct: false,
            coll,
            order: Vec::new(),
            separator: Vec::new(),
            window: Some(Box::new(window)),
        });
        Ok(Expr::Agg(self.aggs.len() - 1))
    }

    /// The first argument and the rest (LAG's offset and default, NTILE's
    /// and NTH_VALUE's n), checking their number (a syntax error in MySQL).
    fn bind_window_args(
        &mut self,
        args: &[&ast::FunctionArg],
        func: &mut AggFunc,
        lower: &str,
    ) -> Result<(Option<Expr>, Vec<Expr>)> {
        let mut bound = Vec::with_capacity(args.len());
        for a in args {
            match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard)
                    if *func == AggFunc::Count && args.len() == 1 =>
                {
                    *func = AggFunc::CountStar;
                }
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                    bound.push(self.bind(e)?)
                }
                _ => return Err(Error::Syntax(format!("{lower}(...)"))),
            }
        }
        let (min, max) = match func {
            AggFunc::RowNumber
            | AggFunc::Rank
            | AggFunc::DenseRank
            | AggFunc::PercentRank
            | AggFunc::CumeDist
            | AggFunc::CountStar => (0, 0),
            AggFunc::Lag | AggFunc::Lead => (1, 3),
            AggFunc::NthValue | AggFunc::JsonObjectAgg => (2, 2),
            _ => (1, 1),
        };
        if bound.len() < min || bound.len() > max {
            return Err(Error::Syntax(format!("{lower}(...)")));
        }
        Ok(match func {
            AggFunc::Ntile => (None, bound),
            AggFunc::JsonObjectAgg => (Some(Expr::Row(bound)), Vec::new()),
            _ if bound.is_empty() => (None, Vec::new()),
            _ => {
                let first = bound.remove(0);
                (Some(first), bound)
            }
        })
    }

    /// Binds a resolved window: PARTITION BY and ORDER BY keys and the frame.
    fn bind_window_def(&mut self, r: &Resolved, extra: Vec<Expr>) -> Result<WindowDef> {
        let mut partition = Vec::with_capacity(r.partition.len());
        for e in &r.partition {
            let b = self.bind(e)?;
            let coll = self.derive(&b).map(|d| d.0).filter(|c| !c.is_bytewise());
            partition.push((b, coll));
        }
        let mut order = Vec::with_capacity(r.order.len());
        for o in &r.order {
            // An ENUM / SET key sorts by index / bitmask, as ORDER BY does.
            let b = self.bind(&o.expr)?;
            let b = self.numeric_reading(b);
            let coll = self.derive(&b).map(|d| d.0).filter(|c| !c.is_bytewise());
            let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
            order.push((b, desc, coll));
        }
        let frame = match &r.frame {
            None => None,
            Some(f) => Some(self.bind_frame(f, r, &order)?),
        };
        Ok(WindowDef {
            name: r.name.clone(),
            partition,
            order,
            frame,
            extra,
        })
    }

    /// Binds a frame (see the rules in the module doc). A RANGE offset
    /// becomes the boundary value as an expression over the row: `key - n`
    /// before the row in ascending order, `key + n` in descending order.
    fn bind_frame(
        &mut self,
        f: &ast::WindowFrame,
        r: &Resolved,
        order: &[(Expr, bool, Option<crate::types::collation::Collation>)],
    ) -> Result<WindowFrame> {
        let name = r.name.as_str();
        let rows = match f.units {
            ast::WindowFrameUnits::Rows => true,
            ast::WindowFrameUnits::Range => false,
            ast::WindowFrameUnits::Groups => return Err(Error::Syntax("GROUPS".into())),
        };
        let end = f
            .end_bound
            .clone()
            .unwrap_or(ast::WindowFrameBound::CurrentRow);
        if matches!(f.start_bound, ast::WindowFrameBound::Following(None)) {
            return Err(err(WindowRule::FrameStartIllegal, name));
        }
        if matches!(end, ast::WindowFrameBound::Preceding(None)) {
            return Err(err(WindowRule::FrameEndIllegal, name));
        }
        let mut bound = |b: &ast::WindowFrameBound| -> Result<FrameBound> {
            let (offset, preceding) = match b {
                ast::WindowFrameBound::CurrentRow => return Ok(FrameBound::CurrentRow),
                ast::WindowFrameBound::Preceding(None) => {
                    return Ok(FrameBound::UnboundedPreceding)
                }
                ast::WindowFrameBound::Following(None) => {
                    return Ok(FrameBound::UnboundedFollowing)
                }
                ast::WindowFrameBound::Preceding(Some(e)) => (e.as_ref(), true),
                ast::WindowFrameBound::Following(Some(e)) => (e.as_ref(), false),
            };
            let interval = matches!(offset, ast::Expr::Interval(_));
            let e = if rows {
                if interval {
                    return Err(err(WindowRule::RowsIntervalUse, name));
                }
                let n = self.bind(offset)?;
                if !offset_ok(&n, true) {
                    return Err(err(WindowRule::FrameIllegal, name));
                }
                n
            } else {
                let (key, desc) = match (order, r.order.as_slice()) {
                    ([(k, d, _)], [o]) => ((k, o), *d),
                    _ => return Err(err(WindowRule::RangeFrameOrderType, name)),
                };
                let kinds = self.frame_kinds();
                let temporal = match key.0.kind(&kinds, &self.aggs) {
                    ExprKind::Date | ExprKind::DateTime => true,
                    ExprKind::Int | ExprKind::UInt | ExprKind::Decimal(_) | ExprKind::Double => {
                        false
                    }
                    _ => return Err(err(WindowRule::RangeFrameOrderType, name)),
                };
                if temporal && !interval {
                    return Err(err(WindowRule::RangeFrameTemporalType, name));
                }
                if !temporal && interval {
                    return Err(err(WindowRule::RangeFrameNumericType, name));
                }
                // Checked on the text: the offset is bound once, inside
                // the boundary (a placeholder must take one number).
                if !interval && !range_offset_ok(offset) {
                    return Err(err(WindowRule::FrameIllegal, name));
                }
                // Before the row in sort order: smaller keys ascending,
                // larger ones descending.
                let op = if preceding != desc {
                    ast::BinaryOperator::Minus
                } else {
                    ast::BinaryOperator::Plus
                };
                let boundary = ast::Expr::BinaryOp {
                    left: Box::new(ast::Expr::Nested(Box::new(key.1.expr.clone()))),
                    op,
                    right: Box::new(offset.clone()),
                };
                self.bind(&boundary)?
            };
            Ok(if preceding {
                FrameBound::Preceding(Box::new(e))
            } else {
                FrameBound::Following(Box::new(e))
            })
        };
        let start = bound(&f.start_bound)?;
        let end = bound(&end)?;
        Ok(WindowFrame { rows, start, end })
    }
}

/// Whether a frame offset is acceptable: a placeholder, or a non-negative
/// number (an integer for ROWS).
fn offset_ok(e: &Expr, integer: bool) -> bool {
    match e {
        Expr::Param(_) => true,
        Expr::Literal(v) => match v {
            Value::Int(n) => *n >= 0,
            Value::UInt(_) => true,
            Value::Decimal(d) => !integer && !d.is_sign_negative(),
            Value::Double(d) => !integer && *d >= 0.0,
            _ => false,
        },
        _ => false,
    }
}

/// Whether a numeric RANGE offset is a placeholder or a non-negative
/// number literal.
fn range_offset_ok(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Placeholder(_) => true,
            ast::Value::Number(n, _) => n.parse::<f64>().is_ok_and(|x| x >= 0.0),
            _ => false,
        },
        ast::Expr::Nested(inner) => range_offset_ok(inner),
        _ => false,
    }
}

/// NTILE's and NTH_VALUE's n (a positive integer) and LAG / LEAD's offset (a
/// non-negative one) must be constants: 1210 otherwise. A placeholder is
/// checked when the statement runs.
fn check_constant_args(func: AggFunc, extra: &[Expr], lower: &str) -> Result<()> {
    let (arg, min) = match func {
        AggFunc::Ntile | AggFunc::NthValue => (extra.first(), 1),
        AggFunc::Lag | AggFunc::Lead => (extra.first(), 0),
        _ => return Ok(()),
    };
    let ok = match arg {
        None => true,
        Some(Expr::Param(_)) => true,
        Some(Expr::Literal(Value::Int(n))) => *n >= min,
        Some(Expr::Literal(Value::UInt(n))) => *n >= min as u64,
        Some(_) => false,
    };
    if ok {
        Ok(())
    } else {
        Err(Error::WrongArguments(lower.to_string()))
    }
}
