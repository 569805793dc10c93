//! The forms with their own syntax that bind to functions: `d + INTERVAL n
//! DAY`, DATE_ADD / DATE_SUB / ADDDATE / SUBDATE, TIMESTAMPADD /
//! TIMESTAMPDIFF, EXTRACT, POSITION, CONVERT(x USING cs) and UTC_DATE,
//! UTC_TIME, UTC_TIMESTAMP without parentheses. [`bind_special`] binds them
//! before the general binder does ([`Binder::bind`] asks it first). A file
//! apart from the functions' evaluation (`crate::expr::functions` and its
//! families): this is binding, which reads sqlparser's AST.

use crate::expr::functions::Func;
use crate::expr::Expr;
use crate::plan::bind::Binder;
use crate::types::datetime::Unit;
use crate::types::value::Value;
use canyon_common::{Error, Result};
use sqlparser::ast;

/// The unit an INTERVAL or EXTRACT names.
fn unit_of_field(f: &ast::DateTimeField) -> Result<Unit> {
    use ast::DateTimeField as F;
    Ok(match f {
        F::Microsecond | F::Microseconds => Unit::Microsecond,
        F::Second | F::Seconds => Unit::Second,
        F::Minute | F::Minutes => Unit::Minute,
        F::Hour | F::Hours => Unit::Hour,
        F::Day | F::Days => Unit::Day,
        F::Week(None) | F::Weeks => Unit::Week,
        F::Month | F::Months => Unit::Month,
        F::Quarter => Unit::Quarter,
        F::Year | F::Years => Unit::Year,
        other => return Err(Error::Unsupported(format!("interval unit {other}"))),
    })
}

/// The unit of an INTERVAL expression (`INTERVAL n DAY`).
fn interval_unit(iv: &ast::Interval) -> Result<Unit> {
    use ast::DateTimeField as F;
    // MySQL's compound units, as `crate::parse::spellings::interval_units`
    // rewrote them (`DAY_SECOND` is `DAY TO SECOND`; `SECOND_MICROSECOND`,
    // whose SECOND sqlparser reads no TO after, is `MICROSECOND TO SECOND`).
    let compound = match (&iv.leading_field, &iv.last_field) {
        (Some(f), None) => return unit_of_field(f),
        (Some(F::Year), Some(F::Month)) => Unit::YearMonth,
        (Some(F::Day), Some(F::Hour)) => Unit::DayHour,
        (Some(F::Day), Some(F::Minute)) => Unit::DayMinute,
        (Some(F::Day), Some(F::Second)) => Unit::DaySecond,
        (Some(F::Day), Some(F::Microsecond)) => Unit::DayMicrosecond,
        (Some(F::Hour), Some(F::Minute)) => Unit::HourMinute,
        (Some(F::Hour), Some(F::Second)) => Unit::HourSecond,
        (Some(F::Hour), Some(F::Microsecond)) => Unit::HourMicrosecond,
        (Some(F::Minute), Some(F::Second)) => Unit::MinuteSecond,
        (Some(F::Minute), Some(F::Microsecond)) => Unit::MinuteMicrosecond,
        (Some(F::Microsecond), Some(F::Second)) => Unit::SecondMicrosecond,
        _ => return Err(Error::Unsupported(format!("INTERVAL {}", iv.value))),
    };
    Ok(compound)
}

/// A unit given as a bare word (TIMESTAMPDIFF(MONTH, ...)); MySQL also accepts
/// the ODBC spelling SQL_TSI_MONTH.
fn unit_of_word(e: &ast::Expr) -> Result<Unit> {
    let word = match e {
        ast::Expr::Identifier(id) => id.value.to_ascii_uppercase(),
        other => return Err(Error::Syntax(other.to_string())),
    };
    let name = word.strip_prefix("SQL_TSI_").unwrap_or(&word);
    Unit::from_name(name).ok_or_else(|| Error::Syntax(word.clone()))
}

fn plain_args(f: &ast::Function) -> Option<Vec<&ast::Expr>> {
    match &f.args {
        ast::FunctionArguments::List(l) if l.duplicate_treatment.is_none() => l
            .args
            .iter()
            .map(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// Binds expression forms that belong with the functions here rather than with
/// the general binder (date arithmetic with INTERVAL, EXTRACT, ...). `None`: not
/// such a form, the general binder goes on.
///
/// Sub-expressions are bound in textual order, so placeholders keep their
/// numbering (`INTERVAL ? DAY + ?` binds the amount first).
pub fn bind_special(b: &mut Binder<'_>, e: &ast::Expr) -> Option<Result<Expr>> {
    use ast::Expr as A;
    match e {
        A::BinaryOp { left, op, right } => {
            let plus = matches!(op, ast::BinaryOperator::Plus);
            let minus = matches!(op, ast::BinaryOperator::Minus);
            if !plus && !minus {
                return None;
            }
            match (left.as_ref(), right.as_ref()) {
                (_, A::Interval(iv)) => Some((|| {
                    let unit = interval_unit(iv)?;
                    let d = b.bind(left)?;
                    let n = b.bind(&iv.value)?;
                    Ok(Expr::Func(Func::DateAdd(unit, minus), vec![d, n]))
                })()),
                (A::Interval(iv), _) => Some((|| {
                    if minus {
                        // MySQL accepts INTERVAL only on the right of '-'.
                        return Err(Error::Syntax(format!("{e}")));
                    }
                    let unit = interval_unit(iv)?;
                    let n = b.bind(&iv.value)?;
                    let d = b.bind(right)?;
                    Ok(Expr::Func(Func::DateAdd(unit, false), vec![d, n]))
                })()),
                _ => None,
            }
        }
        A::Extract { field, expr, .. } => Some((|| {
            let unit = unit_of_field(field)?;
            Ok(Expr::Func(Func::Extract(unit), vec![b.bind(expr)?]))
        })()),
        A::Position { expr, r#in } => Some((|| {
            let needle = b.bind(expr)?;
            let hay = b.bind(r#in)?;
            Ok(Expr::Func(Func::Locate, vec![needle, hay]))
        })()),
        A::Convert {
            expr,
            data_type: None,
            charset: Some(cs),
            ..
        } => Some((|| {
            // CONVERT(x USING cs): 1115 for a character set Canyon lacks;
            // utf8mb4 and binary change nothing of a UTF-8 value.
            let name = cs.to_string();
            let cs = crate::types::charset::Charset::from_name(&name)
                .ok_or(Error::UnknownCharset(name))?;
            let f = match cs {
                crate::types::charset::Charset::Utf8mb4
                | crate::types::charset::Charset::Binary => Func::CastChar,
                cs => Func::CastCharset(cs),
            };
            Ok(Expr::Func(f, vec![b.bind(expr)?]))
        })()),
        A::Identifier(id) if id.quote_style.is_none() => {
            // UTC_DATE, UTC_TIME and UTC_TIMESTAMP may be written without
            // parentheses, like CURRENT_TIMESTAMP (unless a column has the name).
            let f = match id.value.to_ascii_uppercase().as_str() {
                "UTC_TIMESTAMP" => Func::UtcTimestamp,
                "UTC_DATE" => Func::UtcDate,
                "UTC_TIME" => Func::UtcTime,
                _ => return None,
            };
            if b.table.is_some_and(|t| t.column(&id.value).is_some()) {
                return None;
            }
            Some(Ok(Expr::Func(f, Vec::new())))
        }
        A::Function(f) => {
            let name = f
                .name
                .0
                .last()
                .and_then(|p| p.as_ident())
                .map(|i| i.value.to_ascii_uppercase())?;
            if name == "OCT" || name == "BIN" {
                // OCT(n) is CONV(n, 10, 8), BIN(n) CONV(n, 10, 2) (MySQL
                // manual, 14.8).
                let to = if name == "OCT" { 8 } else { 2 };
                return Some((|| {
                    let args = plain_args(f).unwrap_or_default();
                    let [n] = args.as_slice() else {
                        return Err(Error::WrongFunctionArgs(name.clone()));
                    };
                    let n = b.bind(n)?;
                    let base = |x| Expr::Literal(Value::Int(x));
                    Ok(Expr::Func(Func::Conv, vec![n, base(10), base(to)]))
                })());
            }
            let special = matches!(
                name.as_str(),
                "DATE_ADD" | "DATE_SUB" | "ADDDATE" | "SUBDATE" | "TIMESTAMPDIFF" | "TIMESTAMPADD"
            );
            if !special {
                return None;
            }
            let Some(args) = plain_args(f) else {
                return Some(Err(Error::Syntax(format!("{name}(...)"))));
            };
            Some(bind_unit_function(b, &name, &args))
        }
        _ => None,
    }
}

fn bind_unit_function(b: &mut Binder<'_>, name: &str, args: &[&ast::Expr]) -> Result<Expr> {
    let wrong = || Error::WrongFunctionArgs(name.to_string());
    match name {
        "TIMESTAMPDIFF" => {
            let [unit, x, y] = args else {
                return Err(wrong());
            };
            let unit = unit_of_word(unit)?;
            let x = b.bind(x)?;
            let y = b.bind(y)?;
            Ok(Expr::Func(Func::TimestampDiff(unit), vec![x, y]))
        }
        "TIMESTAMPADD" => {
            let [unit, n, d] = args else {
                return Err(wrong());
            };
            let unit = unit_of_word(unit)?;
            let n = b.bind(n)?;
            let d = b.bind(d)?;
            Ok(Expr::Func(Func::DateAdd(unit, false), vec![d, n]))
        }
        _ => {
            let [d, amount] = args else {
                return Err(wrong());
            };
            let sub = matches!(name, "DATE_SUB" | "SUBDATE");
            let d = b.bind(d)?;
            match amount {
                ast::Expr::Interval(iv) => {
                    let unit = interval_unit(iv)?;
                    let n = b.bind(&iv.value)?;
                    Ok(Expr::Func(Func::DateAdd(unit, sub), vec![d, n]))
                }
                // ADDDATE(d, n) / SUBDATE(d, n): n days.
                other if matches!(name, "ADDDATE" | "SUBDATE") => {
                    let n = b.bind(other)?;
                    Ok(Expr::Func(Func::DateAdd(Unit::Day, sub), vec![d, n]))
                }
                other => Err(Error::Syntax(other.to_string())),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::value::Value;
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::parser::Parser;

    fn bind_projection(sql: &str) -> Vec<Expr> {
        let stmts = Parser::parse_sql(&MySqlDialect {}, sql).expect("test SQL parses");
        let ast::Statement::Query(q) = &stmts[0] else {
            panic!("not a query")
        };
        let ast::SetExpr::Select(s) = q.body.as_ref() else {
            panic!("not a select")
        };
        let mut b = Binder::new(None, None);
        s.projection
            .iter()
            .map(|item| match item {
                ast::SelectItem::UnnamedExpr(e) => b.bind(e).expect("binds"),
                other => panic!("unexpected item {other}"),
            })
            .collect()
    }

    #[test]
    fn interval_forms_bind_placeholders_in_textual_order() {
        let p = Expr::Param;
        assert_eq!(
            bind_projection(
                "SELECT DATE_ADD(?, INTERVAL ? DAY), INTERVAL ? MONTH + ?, ? - INTERVAL ? HOUR"
            ),
            vec![
                Expr::Func(Func::DateAdd(Unit::Day, false), vec![p(0), p(1)]),
                Expr::Func(Func::DateAdd(Unit::Month, false), vec![p(3), p(2)]),
                Expr::Func(Func::DateAdd(Unit::Hour, true), vec![p(4), p(5)]),
            ]
        );
        assert_eq!(
            bind_projection("SELECT TIMESTAMPADD(WEEK, ?, ?), TIMESTAMPDIFF(SQL_TSI_DAY, ?, ?)"),
            vec![
                Expr::Func(Func::DateAdd(Unit::Week, false), vec![p(1), p(0)]),
                Expr::Func(Func::TimestampDiff(Unit::Day), vec![p(2), p(3)]),
            ]
        );
    }

    #[test]
    fn special_forms_bind() {
        let lit = |s: &str| Expr::Literal(Value::str(s));
        assert_eq!(
            bind_projection("SELECT POSITION('b' IN 'abc'), EXTRACT(QUARTER FROM 'x'), UTC_DATE"),
            vec![
                Expr::Func(Func::Locate, vec![lit("b"), lit("abc")]),
                Expr::Func(Func::Extract(Unit::Quarter), vec![lit("x")]),
                Expr::Func(Func::UtcDate, vec![]),
            ]
        );
    }
}
