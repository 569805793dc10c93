//! Execution of SELECT plans (see [`crate::query`] for their shape).

use crate::api::QueryResult;
use crate::encoding::encode_row;
use crate::exec::{for_each_locked_row, for_each_row, no_row};
use crate::expr::{eval, eval_predicate, AggCall, AggFunc, Env, EvalContext};
use crate::plan::eval_count;
use crate::query::{LockMode, SelectPlan};
use crate::value::{compare, sort_cmp, Value};
use canyon_common::{Error, Result};
use canyon_txn::{ReadMode, Transaction};
use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

// ----------------------------------------------------------------------------------
// SELECT
// ----------------------------------------------------------------------------------

enum Acc {
    Count(i64),
    SumInt(i128, bool),
    SumDec(Decimal, bool),
    SumDbl(f64, bool),
    Min(Value),
    Max(Value),
    AvgDec(Decimal, i64),
    AvgDbl(f64, i64),
}

struct AggState {
    accs: Vec<Acc>,
    distinct: Vec<Option<HashSet<Vec<u8>>>>,
    first_row: Vec<Value>,
}

impl AggState {
    fn new(aggs: &[AggCall], first_row: Vec<Value>) -> AggState {
        AggState {
            accs: aggs
                .iter()
                .map(|a| match a.func {
                    AggFunc::Count | AggFunc::CountStar => Acc::Count(0),
                    AggFunc::Sum => Acc::SumInt(0, false),
                    AggFunc::Min => Acc::Min(Value::Null),
                    AggFunc::Max => Acc::Max(Value::Null),
                    AggFunc::Avg => Acc::AvgDec(Decimal::ZERO, 0),
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

    fn add(&mut self, aggs: &[AggCall], env: &Env<'_>) -> Result<()> {
        for (i, a) in aggs.iter().enumerate() {
            let v = match &a.arg {
                None => Value::Int(1),
                Some(e) => eval(e, env)?,
            };
            if v.is_null() {
                continue;
            }
            if let Some(set) = &mut self.distinct[i] {
                if !set.insert(encode_row(std::slice::from_ref(&v))) {
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
                    if m.is_null() || compare(&v, m) == Some(Ordering::Less) {
                        *m = v;
                    }
                }
                Acc::Max(m) => {
                    if m.is_null() || compare(&v, m) == Some(Ordering::Greater) {
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
            }
        }
        Ok(())
    }

    fn finish(&self, aggs: &[AggCall]) -> Vec<Value> {
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
                        Value::Decimal(*s)
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
                Acc::AvgDec(s, n) => {
                    if *n == 0 {
                        Value::Null
                    } else {
                        let scale = s.scale() + 4;
                        let mut q = (*s / Decimal::from(*n)).round_dp_with_strategy(
                            scale,
                            rust_decimal::RoundingStrategy::MidpointAwayFromZero,
                        );
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

/// Runs a SELECT. `txn` is `None` for a table-less SELECT.
pub fn run_select(
    plan: &SelectPlan,
    txn: Option<&mut Transaction>,
    ctx: &dyn EvalContext,
) -> Result<QueryResult> {
    let limit = plan
        .limit
        .as_ref()
        .map(|e| eval(e, &no_row(ctx)).and_then(eval_count))
        .transpose()?;
    let offset = plan
        .offset
        .as_ref()
        .map(|e| eval(e, &no_row(ctx)).and_then(eval_count))
        .transpose()?
        .unwrap_or(0);
    let streaming =
        !plan.grouped && !plan.distinct && (plan.order_by.is_empty() || plan.order_from_access);
    let want = limit.map(|l| l.saturating_add(offset));
    let mut out: Vec<Vec<Value>> = Vec::new();

    let project = |row: &[Value], aggs: &[Value]| -> Result<Vec<Value>> {
        let env = Env { row, aggs, ctx };
        plan.projection.iter().map(|e| eval(e, &env)).collect()
    };

    match (&plan.table, txn) {
        (None, _) => {
            let env = Env {
                row: &[],
                aggs: &[],
                ctx,
            };
            let keep = match &plan.filter {
                Some(f) => eval_predicate(f, &env)?,
                None => true,
            };
            if keep {
                if plan.grouped {
                    let st = AggState::new(&plan.aggs, Vec::new());
                    let aggs = st.finish(&plan.aggs);
                    out.push(project(&[], &aggs)?);
                } else {
                    out.push(project(&[], &[])?);
                }
            }
        }
        (Some(table), Some(txn)) => {
            let mut groups: HashMap<Vec<u8>, usize> = HashMap::new();
            let mut states: Vec<AggState> = Vec::new();
            let reverse = plan.order_from_access && plan.order_by.first().is_some_and(|o| o.1);
            let mut visit = |_pk: &[u8], row: &[Value]| -> Result<bool> {
                let env = Env {
                    row,
                    aggs: &[],
                    ctx,
                };
                if let Some(f) = &plan.filter {
                    if !eval_predicate(f, &env)? {
                        return Ok(true);
                    }
                }
                if plan.grouped {
                    let key = if plan.group_by.is_empty() {
                        Vec::new()
                    } else {
                        let vals = plan
                            .group_by
                            .iter()
                            .map(|e| eval(e, &env))
                            .collect::<Result<Vec<_>>>()?;
                        encode_row(&vals)
                    };
                    let idx = match groups.get(&key) {
                        Some(&i) => i,
                        None => {
                            states.push(AggState::new(&plan.aggs, row.to_vec()));
                            groups.insert(key, states.len() - 1);
                            states.len() - 1
                        }
                    };
                    states[idx].add(&plan.aggs, &env)?;
                    Ok(true)
                } else {
                    out.push(project(row, &[])?);
                    Ok(!(streaming && want.is_some_and(|w| out.len() as u64 >= w)))
                }
            };
            match plan.lock {
                LockMode::None => {
                    for_each_row(
                        txn,
                        table,
                        &plan.access,
                        ReadMode::Snapshot,
                        reverse,
                        plan.needed.as_deref(),
                        ctx,
                        &mut |pk, row| visit(pk, row),
                    )?;
                }
                LockMode::Locking => {
                    // The filter is re-checked on the locked version by the helper.
                    for_each_locked_row(
                        txn,
                        table,
                        &plan.access,
                        plan.filter.as_ref(),
                        None,
                        ctx,
                        &mut |_t, pk, row| visit(&pk, &row).map(|_| ()),
                    )?;
                }
            }
            if plan.grouped {
                if states.is_empty() && plan.group_by.is_empty() {
                    states.push(AggState::new(
                        &plan.aggs,
                        vec![Value::Null; table.def.columns.len()],
                    ));
                }
                for st in &states {
                    let aggs = st.finish(&plan.aggs);
                    if let Some(h) = &plan.having {
                        if !eval_predicate(
                            h,
                            &Env {
                                row: &st.first_row,
                                aggs: &aggs,
                                ctx,
                            },
                        )? {
                            continue;
                        }
                    }
                    out.push(project(&st.first_row, &aggs)?);
                }
            }
        }
        (Some(_), None) => {
            return Err(Error::Internal(
                "SELECT from a table without a transaction".into(),
            ))
        }
    }

    if plan.distinct {
        let mut seen = HashSet::new();
        out.retain(|r| seen.insert(encode_row(&r[..plan.visible])));
    }
    if !plan.order_by.is_empty() && !plan.order_from_access {
        out.sort_by(|a, b| {
            for &(pos, desc) in &plan.order_by {
                let o = sort_cmp(&a[pos], &b[pos]);
                if o != Ordering::Equal {
                    return if desc { o.reverse() } else { o };
                }
            }
            Ordering::Equal
        });
    }
    let start = (offset as usize).min(out.len());
    let end = match limit {
        Some(l) => start.saturating_add(l as usize).min(out.len()),
        None => out.len(),
    };
    let mut rows: Vec<Vec<Value>> = out.drain(start..end).collect();
    if plan.projection.len() > plan.visible {
        for r in &mut rows {
            r.truncate(plan.visible);
        }
    }
    Ok(QueryResult::Rows {
        columns: plan.columns.clone(),
        rows,
        warnings: 0,
    })
}
