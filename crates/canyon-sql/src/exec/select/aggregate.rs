//! Aggregates' running state: one [`AggState`] per group (or, for the
//! window step, per frame), an [`Acc`] per aggregate call.

use crate::expr::{eval, AggCall, AggFunc, Env, EvalContext, Expr};
use crate::types::decimal::Decimal;
use crate::types::encoding::encode_row;
use crate::types::value::{collated, compare_as, sort_cmp_as, Value};
use canyon_common::{Error, Result};
use std::cmp::Ordering;
use std::collections::HashSet;

/// An aggregate's running state.
pub(in crate::exec) enum Acc {
    Count(i64),
    SumInt(i128, bool),
    SumDec(Decimal, bool),
    SumDbl(f64, bool),
    Min(Value),
    Max(Value),
    AvgDec(Decimal, i64),
    AvgDbl(f64, i64),
    /// GROUP_CONCAT: each kept row's ORDER BY key values and text.
    Concat(Vec<(Vec<Value>, Vec<u8>)>),
    /// JSON_ARRAYAGG's elements (`None` before the first row).
    JsonArray(Option<Vec<crate::types::json::Node>>),
    /// JSON_OBJECTAGG's members (`None` before the first row).
    JsonObject(Option<Vec<(String, crate::types::json::Node)>>),
}

/// The running state of a list of aggregates over one group (or, for the
/// window step, one frame: `crate::exec::window`).
pub(in crate::exec) struct AggState {
    accs: Vec<Acc>,
    distinct: Vec<Option<HashSet<Vec<u8>>>>,
    pub(in crate::exec) first_row: Vec<Value>,
}

impl AggState {
    /// The state before any row.
    pub(in crate::exec) fn new(aggs: &[AggCall], first_row: Vec<Value>) -> AggState {
        AggState {
            accs: aggs
                .iter()
                .map(|a| match a.func {
                    AggFunc::Count | AggFunc::CountStar => Acc::Count(0),
                    AggFunc::Sum => Acc::SumInt(0, false),
                    AggFunc::Min => Acc::Min(Value::Null),
                    AggFunc::Max => Acc::Max(Value::Null),
                    AggFunc::Avg => Acc::AvgDec(Decimal::ZERO, 0),
                    AggFunc::GroupConcat => Acc::Concat(Vec::new()),
                    AggFunc::JsonArrayAgg => Acc::JsonArray(None),
                    AggFunc::JsonObjectAgg => Acc::JsonObject(None),
                    // Window-only functions are never grouping aggregates
                    // (`crate::exec::window` evaluates them); a count keeps
                    // the match total.
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
                    | AggFunc::NthValue => Acc::Count(0),
                })
                .collect(),
            distinct: aggs
                .iter()
                .map(|a| {
                    if a.distinct {
                        Some(HashSet::new())
                    } else {
                        None
                    }
                })
                .collect(),
            first_row,
        }
    }

    /// Adds the row `env` reads.
    pub(in crate::exec) fn add(&mut self, aggs: &[AggCall], env: &Env<'_>) -> Result<()> {
        for (i, a) in aggs.iter().enumerate() {
            if self.add_json(i, a, env)?.is_some() {
                continue;
            }
            let v = match &a.arg {
                None => Value::Int(1),
                Some(e) => eval(e, env)?,
            };
            if v.is_null() {
                continue;
            }
            if let Some(set) = &mut self.distinct[i] {
                let one = std::slice::from_ref(&v);
                if !set.insert(encode_row(&collated(one, &[a.coll]))) {
                    continue;
                }
            }
            let acc = &mut self.accs[i];
            match acc {
                Acc::Count(n) => *n += 1,
                Acc::SumInt(s, seen) => match v {
                    Value::Int(x) => {
                        *s += x as i128;
                        *seen = true;
                    }
                    Value::UInt(x) => {
                        *s += x as i128;
                        *seen = true;
                    }
                    Value::Decimal(d) => {
                        *acc = Acc::SumDec(Decimal::from_i128_with_scale(*s, 0) + d, true)
                    }
                    other => *acc = Acc::SumDbl(*s as f64 + other.to_f64().unwrap_or(0.0), true),
                },
                Acc::SumDec(s, seen) => match v {
                    Value::Double(_) | Value::Bytes(_) => {
                        *acc =
                            Acc::SumDbl(s.to_f64().unwrap_or(0.0) + v.to_f64().unwrap_or(0.0), true)
                    }
                    other => {
                        *s += other.to_decimal().unwrap_or_default();
                        *seen = true;
                    }
                },
                Acc::SumDbl(s, seen) => {
                    *s += v.to_f64().unwrap_or(0.0);
                    *seen = true;
                }
                Acc::Min(m) => {
                    if m.is_null() || compare_as(&v, m, a.coll) == Some(Ordering::Less) {
                        *m = v;
                    }
                }
                Acc::Max(m) => {
                    if m.is_null() || compare_as(&v, m, a.coll) == Some(Ordering::Greater) {
                        *m = v;
                    }
                }
                Acc::AvgDec(s, n) => match v {
                    Value::Double(_) | Value::Bytes(_) => {
                        *acc = Acc::AvgDbl(
                            s.to_f64().unwrap_or(0.0) + v.to_f64().unwrap_or(0.0),
                            *n + 1,
                        )
                    }
                    other => {
                        *s += other.to_decimal().unwrap_or_default();
                        *n += 1;
                    }
                },
                Acc::AvgDbl(s, n) => {
                    *s += v.to_f64().unwrap_or(0.0);
                    *n += 1;
                }
                Acc::Concat(rows) => {
                    let keys = a
                        .order
                        .iter()
                        .map(|(e, _, _)| eval(e, env))
                        .collect::<Result<Vec<_>>>()?;
                    rows.push((keys, v.to_bytes().unwrap_or_default()));
                }
                // Added by `add_json`.
                Acc::JsonArray(_) | Acc::JsonObject(_) => {}
            }
        }
        Ok(())
    }

    /// GROUP_CONCAT's result: the texts in ORDER BY order (a stable sort,
    /// so equal keys keep the order the rows came in) joined by the
    /// separator, cut at `group_concat_max_len` bytes with MySQL's warning
    /// 1260; NULL when no row had a non-NULL value.
    fn concat(
        rows: &[(Vec<Value>, Vec<u8>)],
        a: &AggCall,
        ctx: &dyn EvalContext,
        group: usize,
    ) -> Value {
        if rows.is_empty() {
            return Value::Null;
        }
        let mut order: Vec<&(Vec<Value>, Vec<u8>)> = rows.iter().collect();
        if !a.order.is_empty() {
            order.sort_by(|x, y| {
                for (i, (_, desc, coll)) in a.order.iter().enumerate() {
                    let c = sort_cmp_as(&x.0[i], &y.0[i], *coll);
                    let c = if *desc { c.reverse() } else { c };
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                Ordering::Equal
            });
        }
        let mut out = Vec::new();
        for (i, (_, text)) in order.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(&a.separator);
            }
            out.extend_from_slice(text);
        }
        let max = ctx
            .sys_var("group_concat_max_len")
            .ok()
            .and_then(|v| v.to_i64())
            .unwrap_or(1024)
            .max(0) as usize;
        if out.len() > max {
            // Cut on a character boundary: the text is UTF-8.
            let mut cut = max;
            while cut > 0 && (out[cut] & 0xC0) == 0x80 {
                cut -= 1;
            }
            out.truncate(cut);
            ctx.warn(
                1260,
                &format!("Row {} was cut by GROUP_CONCAT()", group + 1),
            );
        }
        Value::Bytes(out)
    }

    /// JSON_ARRAYAGG / JSON_OBJECTAGG take NULLs (as JSON null), so they
    /// add apart from the others; `None` for any other aggregate.
    fn add_json(&mut self, i: usize, a: &AggCall, env: &Env<'_>) -> Result<Option<()>> {
        use crate::types::json::Node;
        use crate::types::value::sql_to_node;
        match (&mut self.accs[i], &a.arg) {
            (Acc::JsonArray(items), Some(e)) => {
                let v = eval(e, env)?;
                items.get_or_insert_with(Vec::new).push(sql_to_node(&v));
                Ok(Some(()))
            }
            (Acc::JsonObject(members), Some(Expr::Row(pair))) if pair.len() == 2 => {
                let k = eval(&pair[0], env)?;
                if k.is_null() {
                    return Err(Error::Sql {
                        code: 3158,
                        sqlstate: *b"22032",
                        message: "JSON documents may not contain NULL member names.".into(),
                    });
                }
                let v = eval(&pair[1], env)?;
                Node::object_set(
                    members.get_or_insert_with(Vec::new),
                    k.to_display(),
                    sql_to_node(&v),
                );
                Ok(Some(()))
            }
            _ => Ok(None),
        }
    }

    /// The aggregates' values over the rows added so far.
    pub(in crate::exec) fn finish(
        &self,
        aggs: &[AggCall],
        ctx: &dyn EvalContext,
        group: usize,
    ) -> Vec<Value> {
        self.accs
            .iter()
            .zip(aggs)
            .map(|(acc, a)| match acc {
                Acc::Count(n) => Value::Int(*n),
                Acc::SumInt(s, seen) => {
                    if *seen {
                        Value::Decimal(Decimal::try_from_i128_with_scale(*s, 0).unwrap_or_default())
                    } else {
                        Value::Null
                    }
                }
                Acc::SumDec(s, seen) => {
                    if *seen {
                        // A sum of negative zeros (`-2.00 MOD 2`) is 0.00: MySQL
                        // adds to a positive zero.
                        Value::Decimal(if s.is_zero() { s.abs() } else { *s })
                    } else {
                        Value::Null
                    }
                }
                Acc::SumDbl(s, seen) => {
                    if *seen {
                        Value::Double(*s)
                    } else {
                        Value::Null
                    }
                }
                Acc::Min(m) | Acc::Max(m) => m.clone(),
                Acc::Concat(rows) => Self::concat(rows, a, ctx, group),
                Acc::JsonArray(items) => items.as_ref().map_or(Value::Null, |items| {
                    Value::Json(crate::types::json::Node::Array(items.clone()).encode())
                }),
                Acc::JsonObject(m) => m.as_ref().map_or(Value::Null, |m| {
                    Value::Json(crate::types::json::Node::Object(m.clone()).encode())
                }),
                Acc::AvgDec(s, n) => {
                    if *n == 0 {
                        Value::Null
                    } else {
                        let scale = s.scale() + 4;
                        // MySQL: AVG of a DECIMAL has the argument's scale + 4
                        // (div_precision_increment), rounded half away from zero.
                        let mut q = s.div_round(Decimal::from(*n), scale).unwrap_or(*s);
                        q.rescale(scale);
                        let _ = a;
                        Value::Decimal(q)
                    }
                }
                Acc::AvgDbl(s, n) => {
                    if *n == 0 {
                        Value::Null
                    } else {
                        Value::Double(*s / *n as f64)
                    }
                }
            })
            .collect()
    }
}
