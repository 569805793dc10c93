//! Functions that wait, repeat or lock rather than compute (MySQL manual,
//! 14.14 "Locking Functions", 14.15 "Information Functions", 14.23
//! "Miscellaneous Functions"): SLEEP, BENCHMARK, the user-level locks
//! (GET_LOCK, RELEASE_LOCK, IS_FREE_LOCK, IS_USED_LOCK, RELEASE_ALL_LOCKS) and
//! WEIGHT_STRING.
//!
//! SLEEP and GET_LOCK's waits belong to the session (its kill flag, its
//! max_execution_time deadline, moving the statement off the runtime worker),
//! and the locks to the engine: both are reached through
//! [`crate::expr::EvalContext::sleep`] and
//! [`crate::expr::EvalContext::user_lock`]. None of these
//! calls is folded as a constant at plan time
//! ([`Func::is_deterministic_per_statement`]).

use super::eval::eval;
use super::functions::{arg, Func};
use super::{Env, Expr};
use crate::types::collation::Collation;
use crate::types::value::Value;
use canyon_common::{Error, Result};
use std::time::Duration;

/// One call of the user-level lock functions, with its checked name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UserLockCall<'a> {
    /// GET_LOCK(name, timeout): `None` waits for ever (a negative timeout).
    Get(&'a str, Option<Duration>),
    /// RELEASE_LOCK(name).
    Release(&'a str),
    /// IS_FREE_LOCK(name).
    IsFree(&'a str),
    /// IS_USED_LOCK(name).
    IsUsed(&'a str),
    /// RELEASE_ALL_LOCKS().
    ReleaseAll,
}

/// SLEEP(seconds): 0 after the pause, 1 when KILL QUERY or
/// max_execution_time cut it short (MySQL returns 1 and no error when the
/// sleep is what was interrupted). A NULL or negative duration is refused
/// with a warning and returns 0.
pub(super) fn sleep(args: &[Expr], env: &Env<'_>) -> Result<Value> {
    let secs = arg(args, 0, env)?.to_f64().filter(|s| *s >= 0.0);
    let Some(secs) = secs else {
        env.ctx.warn(1210, "Incorrect arguments to sleep");
        return Ok(Value::Int(0));
    };
    let d = Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX);
    Ok(Value::Int(env.ctx.sleep(d) as i64))
}

/// BENCHMARK(count, expr): evaluates `expr` `count` times and returns 0;
/// NULL for a NULL count, NULL with warning 1411 for a negative one.
pub(super) fn benchmark(args: &[Expr], env: &Env<'_>) -> Result<Value> {
    let count = arg(args, 0, env)?;
    if count.is_null() {
        return Ok(Value::Null);
    }
    let Some(n) = count.to_i64().filter(|n| *n >= 0) else {
        env.ctx.warn(
            1411,
            &format!(
                "Incorrect count value: '{}' for function benchmark",
                count.to_display()
            ),
        );
        return Ok(Value::Null);
    };
    let expr = args
        .get(1)
        .ok_or_else(|| Error::Syntax("BENCHMARK".into()))?;
    for _ in 0..n {
        env.ctx.check_interrupt()?;
        eval(expr, env)?;
    }
    Ok(Value::Int(0))
}

/// The user-level lock functions: the name is checked here (3057 for NULL,
/// empty or longer than 64 characters), the rest is the session's
/// ([`EvalContext::user_lock`]).
pub(super) fn user_lock(f: Func, args: &[Expr], env: &Env<'_>) -> Result<Value> {
    if f == Func::ReleaseAllLocks {
        return env.ctx.user_lock(UserLockCall::ReleaseAll);
    }
    let name = arg(args, 0, env)?;
    let text = name
        .to_bytes()
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    let name = match text {
        Some(n)
            if !n.is_empty() && n.chars().count() <= crate::catalog::user_locks::MAX_NAME_CHARS =>
        {
            n
        }
        other => {
            return Err(Error::Sql {
                code: 3057,
                sqlstate: *b"42000",
                message: format!(
                    "Incorrect user-level lock name '{}'.",
                    other.as_deref().unwrap_or("NULL")
                ),
            })
        }
    };
    let call = match f {
        Func::GetLock => {
            // NULL waits no time; a negative timeout waits for ever.
            let secs = arg(args, 1, env)?.to_f64().unwrap_or(0.0);
            let timeout =
                (secs >= 0.0).then(|| Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX));
            UserLockCall::Get(&name, timeout)
        }
        Func::ReleaseLock => UserLockCall::Release(&name),
        Func::IsFreeLock => UserLockCall::IsFree(&name),
        _ => UserLockCall::IsUsed(&name),
    };
    env.ctx.user_lock(call)
}

/// WEIGHT_STRING(str) under the collation the binder passed as its second
/// argument (its name; absent for a binary string): the bytes whose
/// bytewise order is the collation's order of `str`. For binary strings and
/// bytewise collations that is the string itself — MySQL pads a `_bin`
/// PAD SPACE collation's key no further than Canyon's sort key does, and
/// trims trailing spaces — otherwise Canyon's sort key, whose bytes differ
/// from MySQL's UCA weights but order the same.
pub(super) fn weight_string(args: &[Expr], env: &Env<'_>) -> Result<Value> {
    let s = arg(args, 0, env)?;
    let Some(bytes) = s.to_bytes() else {
        return Ok(Value::Null);
    };
    let coll = match args.get(1) {
        Some(Expr::Literal(Value::Bytes(name))) => {
            Collation::from_name(&String::from_utf8_lossy(name))
        }
        _ => None,
    };
    Ok(Value::Bytes(match coll {
        Some(c) => {
            let mut out = Vec::with_capacity(bytes.len() * 2);
            c.sort_key(&bytes, &mut out);
            out
        }
        None => bytes.to_vec(),
    }))
}
