//! MySQL 8's GTID functions (manual, 19.1.3.8 "Stored Function Examples to
//! Manipulate GTIDs" and 14.18.2 "Functions Used with Global Transaction
//! Identifiers"): `GTID_SUBSET(set1, set2)`, `GTID_SUBTRACT(set1, set2)` and
//! `WAIT_FOR_EXECUTED_GTID_SET(set[, timeout])`.
//!
//! The sets are the text form of [`canyon_binlog::GtidSet`]
//! (`uuid:1-5:7,uuid2:3`). As in MySQL:
//!
//! * GTID_SUBSET and GTID_SUBTRACT are NULL when either argument is NULL, and
//!   a set that does not parse is error 1772 (ER_MALFORMED_GTID_SET_SPECIFICATION);
//! * GTID_SUBTRACT writes its result in the server's form: UUIDs lower-case
//!   and sorted, intervals merged. MySQL separates UUIDs with `",\n"`;
//!   Canyon with `","`, as it prints `@@gtid_executed` (both read either);
//! * WAIT_FOR_EXECUTED_GTID_SET has side effects, so a NULL set is error 1772
//!   rather than NULL; a NULL or negative timeout is 1210
//!   (ER_WRONG_ARGUMENTS); no timeout, or 0, waits until the set is
//!   executed. It returns 0 once `@@gtid_executed` contains the set and 1 on
//!   timeout; KILL QUERY stops it with 1317. The wait is the session's
//!   ([`crate::expr::EvalContext::wait_for_executed_gtids`]): off the
//!   runtime worker, holding no lock while it waits.
//!
//! Not done: MySQL's GTID tags (8.3+), and MySQL's acceptance of a UUID with
//! no interval (`uuid` alone is 1772 here). `WAIT_FOR_EXECUTED_GTID_SET` does
//! not check `gtid_mode` (Canyon logs GTIDs whenever the log is on) and does
//! not refuse a set holding the session's own GTID (a session owns none
//! while it runs a statement: its GTID is given at commit).

use super::functions::{arg, Func};
use super::{Env, Expr};
use crate::types::value::Value;
use canyon_binlog::GtidSet;
use canyon_common::{Error, Result};
use std::time::Duration;

/// MySQL 1772 ER_MALFORMED_GTID_SET_SPECIFICATION for `text`.
pub(crate) fn malformed(text: &str) -> Error {
    let shown: String = text.chars().take(200).collect();
    Error::Sql {
        code: 1772,
        sqlstate: *b"HY000",
        message: format!("Malformed GTID set specification '{shown}'."),
    }
}

/// Parses a GTID set argument (1772 when it does not parse).
fn parse_set(v: &Value) -> Result<GtidSet> {
    let text = v
        .to_bytes()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    text.parse::<GtidSet>().map_err(|_| malformed(&text))
}

/// Evaluates GTID_SUBSET, GTID_SUBTRACT or WAIT_FOR_EXECUTED_GTID_SET.
pub(super) fn call(f: Func, args: &[Expr], env: &Env<'_>) -> Result<Value> {
    match f {
        Func::GtidSubset | Func::GtidSubtract => {
            let a = arg(args, 0, env)?;
            let b = arg(args, 1, env)?;
            if a.is_null() || b.is_null() {
                return Ok(Value::Null);
            }
            let (a, b) = (parse_set(&a)?, parse_set(&b)?);
            Ok(if f == Func::GtidSubset {
                Value::Int(i64::from(a.is_subset_of(&b)))
            } else {
                Value::str(&a.subtract(&b).to_string())
            })
        }
        Func::WaitForExecutedGtidSet => {
            let set = arg(args, 0, env)?;
            if set.is_null() {
                return Err(malformed("NULL"));
            }
            let set = parse_set(&set)?;
            let timeout = match args.len() {
                1 => None,
                _ => {
                    let secs = arg(args, 1, env)?.to_f64().filter(|s| *s >= 0.0);
                    let Some(secs) = secs else {
                        return Err(Error::Sql {
                            code: 1210,
                            sqlstate: *b"HY000",
                            message: "Incorrect arguments to WAIT_FOR_EXECUTED_GTID_SET.".into(),
                        });
                    };
                    // 0 waits for ever, as MySQL's.
                    (secs > 0.0).then(|| Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX))
                }
            };
            let timed_out = env.ctx.wait_for_executed_gtids(&set, timeout)?;
            Ok(Value::Int(i64::from(timed_out)))
        }
        other => Err(super::functions::unsupported(other)),
    }
}
