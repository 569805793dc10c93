//! Evaluation of the bound tree with MySQL's semantics: three-valued logic,
//! numeric promotion, integer overflow errors, division by zero giving NULL,
//! comparisons under the collation the binder put on their operands. [`eval`]
//! walks an [`Expr`] over one row ([`Env`]); what else it reads (parameters,
//! variables, the clock, subqueries' rows) comes through [`EvalContext`].
//!
//! A file apart from [`tree`](super::tree): the tree is built once per
//! statement and read by the planner, evaluation runs for every row. Calls
//! go to [`functions`].

use crate::expr::functions::{self, Func};
use crate::expr::rows::{compare_rows, eval_subquery, is_row_operand, row_in_list};
use crate::expr::tree::{BinOp, Expr, SubqueryExpr};
use crate::types::collation::Collation;
use crate::types::decimal::Decimal;
use crate::types::value::{compare_as, Value};
use canyon_common::{Error, Result};
use std::cmp::Ordering;

/// The bit a Note's warning code carries: [`crate::types::warning::NOTE`].
pub use crate::types::warning::NOTE;

/// The level ("Note" or "Warning") and the MySQL code of a warning raised
/// as `code` (see [`NOTE`]).
pub fn warning_level(code: u16) -> (&'static str, u16) {
    if code & NOTE != 0 {
        ("Note", code & !NOTE)
    } else {
        ("Warning", code)
    }
}

/// What evaluation can see besides the expression.
pub trait EvalContext {
    /// The statement's parameter values.
    fn params(&self) -> &[Value];
    /// A system variable's current value.
    fn sys_var(&self, name: &str) -> Result<Value>;
    /// A user variable's value (NULL when unset).
    fn user_var(&self, name: &str) -> Value;
    /// `@name := v` inside a statement: sets the user variable for the rest
    /// of the statement and the session. `false` where there is no session
    /// to set it in (the expression is then refused with 1235).
    fn set_user_var(&self, _name: &str, _v: Value) -> bool {
        false
    }
    /// Session facts for functions (DATABASE(), CONNECTION_ID(), ...).
    fn session_fact(&self, f: Func) -> Value;
    /// The statement's start time (NOW() is constant within a statement), in
    /// the session's time zone.
    fn now(&self) -> chrono::NaiveDateTime;
    /// The session's `time_zone` (see [`crate::types::timezone`]); the
    /// host's zone where there is no session.
    fn time_zone(&self) -> crate::types::timezone::Zone {
        crate::types::timezone::system_zone().clone()
    }
    /// The statement's start time in UTC (UTC_TIMESTAMP(), UNIX_TIMESTAMP()).
    fn now_utc(&self) -> chrono::NaiveDateTime {
        self.time_zone().to_utc(self.now())
    }
    /// Records a warning for SHOW WARNINGS (code, message; a note's code
    /// carries [`NOTE`]).
    fn warn(&self, code: u16, message: &str);
    /// [`EvalContext::warn`] for a warning about a constant, which MySQL
    /// converts once per statement rather than once per row: not recorded
    /// again when the statement already has it.
    fn warn_once(&self, code: u16, message: &str) {
        self.warn(code, message);
    }
    /// Whether the server presents itself as MariaDB (`presentation =
    /// "mariadb"`), for the warnings only MariaDB gives; false where there
    /// is no session.
    fn mariadb(&self) -> bool {
        false
    }
    /// LOAD_FILE(name): the bytes of the server file `name`, or NULL where
    /// the session may not read it (no FILE privilege, outside
    /// `secure_file_priv`, unreadable, past `max_allowed_packet`). Only a
    /// session can answer; elsewhere NULL.
    fn load_file(&self, _name: &[u8]) -> Value {
        Value::Null
    }
    /// The rows of a subquery whose enclosing frame is `outer` (its visible
    /// columns only). Only a query executor can answer (it holds the reader);
    /// elsewhere this is an error.
    fn subquery(&self, sq: &SubqueryExpr, outer: &[Value]) -> Result<std::rc::Rc<Vec<Vec<Value>>>> {
        let _ = (sq, outer);
        Err(Error::Unsupported("subqueries in this statement".into()))
    }
    /// The search a `MATCH ... AGAINST` with search string `against` makes
    /// over its table: the parsed string and the table's statistics at this
    /// statement's read point. Only a query executor can answer (it holds
    /// the reader); elsewhere MATCH is refused (1235).
    fn fulltext(
        &self,
        m: &crate::expr::tree::MatchExpr,
        against: &str,
    ) -> Result<std::rc::Rc<crate::types::fulltext::Search>> {
        let _ = (m, against);
        Err(Error::Unsupported(
            "MATCH ... AGAINST in this statement".into(),
        ))
    }
    /// Fails with [`Error::Interrupted`] (KILL) or [`Error::QueryTimeout`]
    /// (max_execution_time) when the statement must stop. Row loops call it
    /// once per row: it must stay a relaxed atomic load on the common path.
    fn check_interrupt(&self) -> Result<()> {
        Ok(())
    }
    /// SLEEP: waits `d`, or less when the statement must stop (KILL QUERY,
    /// max_execution_time); whether it was cut short. The default waits in
    /// slices between calls of [`EvalContext::check_interrupt`].
    fn sleep(&self, d: std::time::Duration) -> bool {
        let end = std::time::Instant::now() + d;
        loop {
            if self.check_interrupt().is_err() {
                return true;
            }
            let now = std::time::Instant::now();
            if now >= end {
                return false;
            }
            std::thread::sleep((end - now).min(std::time::Duration::from_millis(10)));
        }
    }
    /// The user-level lock functions (GET_LOCK and its family); only a
    /// session holds locks, elsewhere they are refused (1235).
    fn user_lock(&self, call: crate::expr::functions_misc::UserLockCall<'_>) -> Result<Value> {
        let _ = call;
        Err(Error::Unsupported(
            "user-level locks in this statement".into(),
        ))
    }
    /// BINLOG_GTID_POS(file, pos): the binary log's GTID position there
    /// (NULL for a file or position it does not have); only a session can
    /// answer.
    fn binlog_gtid_pos(&self, file: &str, pos: u64) -> Result<Value> {
        let _ = (file, pos);
        Err(Error::Unsupported(
            "BINLOG_GTID_POS in this statement".into(),
        ))
    }
    /// WAIT_FOR_EXECUTED_GTID_SET: waits until `@@gtid_executed` contains
    /// `set`, at most `timeout` (`None`: no limit); `Ok(true)` when the time
    /// ran out first. KILL QUERY stops it with [`Error::Interrupted`]. Only
    /// a session can wait; elsewhere it is refused (1235).
    fn wait_for_executed_gtids(
        &self,
        set: &canyon_binlog::GtidSet,
        timeout: Option<std::time::Duration>,
    ) -> Result<bool> {
        let _ = (set, timeout);
        Err(Error::Unsupported(
            "WAIT_FOR_EXECUTED_GTID_SET in this statement".into(),
        ))
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
    /// Calls a stored function with its arguments' values (the expression
    /// layer's way up to the interpreter, which runs in the session). Only
    /// a session can answer.
    fn call_stored(
        &self,
        routine: &std::sync::Arc<crate::catalog::routines::RoutineDef>,
        args: Vec<Value>,
    ) -> Result<Value> {
        let _ = args;
        Err(Error::Unsupported(format!(
            "calling the stored function {} here",
            routine.name
        )))
    }
    /// A scan read `rows` rows of `table` through `index`; `joined`: the
    /// table is not the first of a join. Called once per scan with the
    /// scan's local count, never per row (performance_schema's
    /// ROWS_EXAMINED, NO_INDEX_USED and table I/O:
    /// `crate::catalog::perfschema::io`). Only a session keeps them.
    fn note_read(
        &self,
        table: &crate::catalog::TableDef,
        index: crate::catalog::perfschema::IoIndex,
        rows: u64,
        joined: bool,
    ) {
        let _ = (table, index, rows, joined);
    }
    /// `rows` rows of `table` written (performance_schema's table I/O).
    fn note_write(
        &self,
        table: &crate::catalog::TableDef,
        kind: crate::catalog::perfschema::IoWrite,
        rows: u64,
    ) {
        let _ = (table, kind, rows);
    }
    /// Whether `table` has triggers for `event`: the executor asks once per
    /// statement. Only a session has triggers to fire; elsewhere none.
    fn has_triggers(
        &self,
        table: &crate::catalog::TableDef,
        event: crate::catalog::routines::TriggerEvent,
    ) -> bool {
        let _ = (table, event);
        false
    }
    /// Fires `table`'s triggers of one timing and event for one row, in
    /// their order, inside the statement's transaction `txn`: `old` is the
    /// row before (UPDATE, DELETE), `new` the row after (INSERT, UPDATE),
    /// which a BEFORE trigger may change. An error fails the statement.
    fn fire_triggers(
        &self,
        txn: &mut canyon_txn::Transaction,
        table: &crate::catalog::TableDef,
        timing: crate::catalog::routines::TriggerTiming,
        event: crate::catalog::routines::TriggerEvent,
        old: Option<&[Value]>,
        new: Option<&mut Vec<Value>>,
    ) -> Result<()> {
        let _ = (txn, table, timing, event, old, new);
        Ok(())
    }
}

/// The rows of one subquery (its visible columns), shared by its evaluations.
pub type SubqueryRows = std::rc::Rc<Vec<Vec<Value>>>;

/// The identity of a subquery within a statement: its plan's address (plans are
/// shared, never copied, between clones of an expression).
pub fn subquery_key(sq: &SubqueryExpr) -> usize {
    std::sync::Arc::as_ptr(&sq.plan).cast::<()>() as usize
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

    /// [`EvalContext::fulltext`], answered by what holds the reader;
    /// refused by default.
    fn fulltext(
        ctx: &WithSubqueries<'_, Self>,
        m: &crate::expr::tree::MatchExpr,
        against: &str,
    ) -> Result<std::rc::Rc<crate::types::fulltext::Search>> {
        ctx.base.fulltext(m, against)
    }
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
    fn set_user_var(&self, name: &str, v: Value) -> bool {
        self.base.set_user_var(name, v)
    }
    fn load_file(&self, name: &[u8]) -> Value {
        self.base.load_file(name)
    }
    fn sleep(&self, d: std::time::Duration) -> bool {
        self.base.sleep(d)
    }
    fn user_lock(&self, call: crate::expr::functions_misc::UserLockCall<'_>) -> Result<Value> {
        self.base.user_lock(call)
    }
    fn binlog_gtid_pos(&self, file: &str, pos: u64) -> Result<Value> {
        self.base.binlog_gtid_pos(file, pos)
    }
    fn wait_for_executed_gtids(
        &self,
        set: &canyon_binlog::GtidSet,
        timeout: Option<std::time::Duration>,
    ) -> Result<bool> {
        self.base.wait_for_executed_gtids(set, timeout)
    }
    fn session_fact(&self, f: Func) -> Value {
        self.base.session_fact(f)
    }
    fn now(&self) -> chrono::NaiveDateTime {
        self.base.now()
    }
    fn time_zone(&self) -> crate::types::timezone::Zone {
        self.base.time_zone()
    }
    fn now_utc(&self) -> chrono::NaiveDateTime {
        self.base.now_utc()
    }
    fn warn(&self, code: u16, message: &str) {
        self.base.warn(code, message)
    }
    fn mariadb(&self) -> bool {
        self.base.mariadb()
    }
    fn subquery(&self, sq: &SubqueryExpr, outer: &[Value]) -> Result<SubqueryRows> {
        S::rows(self, sq, outer)
    }
    fn fulltext(
        &self,
        m: &crate::expr::tree::MatchExpr,
        against: &str,
    ) -> Result<std::rc::Rc<crate::types::fulltext::Search>> {
        S::fulltext(self, m, against)
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
    fn call_stored(
        &self,
        routine: &std::sync::Arc<crate::catalog::routines::RoutineDef>,
        args: Vec<Value>,
    ) -> Result<Value> {
        self.base.call_stored(routine, args)
    }
    fn has_triggers(
        &self,
        table: &crate::catalog::TableDef,
        event: crate::catalog::routines::TriggerEvent,
    ) -> bool {
        self.base.has_triggers(table, event)
    }
    fn note_read(
        &self,
        table: &crate::catalog::TableDef,
        index: crate::catalog::perfschema::IoIndex,
        rows: u64,
        joined: bool,
    ) {
        self.base.note_read(table, index, rows, joined)
    }
    fn note_write(
        &self,
        table: &crate::catalog::TableDef,
        kind: crate::catalog::perfschema::IoWrite,
        rows: u64,
    ) {
        self.base.note_write(table, kind, rows)
    }
    fn fire_triggers(
        &self,
        txn: &mut canyon_txn::Transaction,
        table: &crate::catalog::TableDef,
        timing: crate::catalog::routines::TriggerTiming,
        event: crate::catalog::routines::TriggerEvent,
        old: Option<&[Value]>,
        new: Option<&mut Vec<Value>>,
    ) -> Result<()> {
        self.base.fire_triggers(txn, table, timing, event, old, new)
    }
}

/// `MATCH ... AGAINST`: the row's relevance under the statement's search
/// (see [`crate::types::fulltext`]). A NULL search string searches nothing.
#[inline(never)]
fn eval_match(m: &crate::expr::tree::MatchExpr, env: &Env<'_>) -> Result<Value> {
    let against = match eval(&m.against, env)? {
        Value::Null => String::new(),
        Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
        other => other.to_display(),
    };
    let search = env.ctx.fulltext(m, &against)?;
    let mut texts = Vec::with_capacity(m.columns.len());
    for c in &m.columns {
        if let Value::Bytes(b) = eval(c, env)? {
            texts.push(String::from_utf8_lossy(&b).into_owned());
        }
    }
    let doc = crate::types::fulltext::Doc::new(texts.iter().map(String::as_str), m.fold);
    Ok(Value::Double(search.query.rank(&doc, &search.stats)))
}

/// A stored function's call: its arguments, then the call. Apart from
/// [`eval`] (and not inlined) so that the recursive `eval` keeps its frame.
#[inline(never)]
fn eval_stored(c: &crate::expr::tree::StoredCall, env: &Env<'_>) -> Result<Value> {
    let mut args = Vec::with_capacity(c.args.len());
    for a in &c.args {
        args.push(eval(a, env)?);
    }
    env.ctx.call_stored(&c.routine, args)
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

/// [`eval`], except that a column reference to a TIMESTAMP column gives its
/// [`Value::Stamp`], instant included (UNIX_TIMESTAMP() of a column: exact
/// even in a repeated autumn hour).
pub fn eval_instant(e: &Expr, env: &Env<'_>) -> Result<Value> {
    match e {
        Expr::Column(i) | Expr::Bound(i) => Ok(env.row.get(*i).cloned().unwrap_or(Value::Null)),
        _ => eval(e, env),
    }
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
        // A TIMESTAMP column reads as its session-local time (see
        // `crate::types::timezone`, "TIMESTAMP columns"); [`eval_instant`]
        // keeps the instant.
        Expr::Column(i) | Expr::Bound(i) => env.row.get(*i).cloned().unwrap_or(Value::Null).local(),
        Expr::Row(_) => return Err(Error::OperandColumns(1)),
        Expr::Subquery(sq) => return eval_subquery(sq, env),
        Expr::Stored(c) => eval_stored(c, env)?,
        Expr::Match(m) => eval_match(m, env)?,
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
        Expr::InList(a, list, neg) if is_row_operand(a) => row_in_list(a, list, *neg, env)?,
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
    if is_row_operand(a) || is_row_operand(b) {
        return compare_rows(op, a, b, env);
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
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => {
            // MySQL's integer bit operators work on BIGINT UNSIGNED: a
            // negative operand is its two's complement, and a shift by 64 or
            // more (a negative count included: it is a huge unsigned one)
            // gives 0. (MySQL 8 gives binary-string operands byte-wise
            // semantics; Canyon reads them as integers, as MySQL 5.7 did.)
            let (x, y) = (
                l.to_i64().unwrap_or(0) as u64,
                r.to_i64().unwrap_or(0) as u64,
            );
            Ok(Value::UInt(match op {
                BinOp::BitAnd => x & y,
                BinOp::BitOr => x | y,
                BinOp::BitXor => x ^ y,
                BinOp::Shl => x
                    .checked_shl(u32::try_from(y).unwrap_or(u32::MAX))
                    .unwrap_or(0),
                _ => x
                    .checked_shr(u32::try_from(y).unwrap_or(u32::MAX))
                    .unwrap_or(0),
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
        // 0.00), at most 30 (see crate::types::decimal).
        BinOp::Mul => x.checked_mul(y),
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
            let internal = internal.min(crate::types::decimal::MAX_SCALE);
            x.div_trunc(y, internal)
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
    // MySQL's 1690 names the result type: "DECIMAL value is out of range".
    res.map(Value::Decimal)
        .ok_or_else(|| Error::ValueOutOfRange {
            type_name: "DECIMAL".into(),
            expr: sym.to_string(),
        })
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

/// [`crate::types::coerce`] for a value an INSERT or UPDATE stores into `col`, where a
/// bad ENUM / SET value is warning 1265 and the error value `''` (or the SET
/// members that matched), as MySQL stores it: the statement's end makes the
/// warning an error under strict mode (the session's `StmtCtx::strict_mode_error`), and
/// INSERT IGNORE or a non-strict `sql_mode` keeps it a warning.
pub fn coerce_column(
    v: Value,
    col: &crate::catalog::ColumnDef,
    rowno: u64,
    ctx: &dyn EvalContext,
) -> Result<Value> {
    // MariaDB's YEAR(2) stores the number 0 as 2000: only a YEAR(4) keeps
    // it the year 0000 (`Field_year::store`); the string '0' is 2000 in both.
    let zero = match &v {
        Value::Int(0) | Value::UInt(0) => true,
        Value::Double(d) => *d == 0.0,
        Value::Decimal(d) => d.is_zero(),
        _ => false,
    };
    let v = if zero && col.is_year2() {
        Value::UInt(2000)
    } else {
        v
    };
    // MariaDB's `Field_year::store_time_dec`: a DATE or DATETIME stored in
    // a YEAR keeps its year with warning 1265 (MySQL 8 stores it silently).
    let temporal_year = col.ty == crate::types::SqlType::Year
        && matches!(v, Value::Date(_) | Value::DateTime(_) | Value::Stamp(_))
        && ctx.mariadb();
    // MySQL's note 1265 for a date and time stored in a DATE column whose
    // time of day is dropped (`Field_newdate`'s MYSQL_TIME_NOTE_TRUNCATED;
    // a note even in strict mode).
    let drops_time = col.ty == crate::types::SqlType::Date && has_time_of_day(&v);
    let v = in_column_charset(v, col);
    if col.ty.members().is_none() {
        // MySQL's note 1265 for a DECIMAL rounded to the column's scale (a
        // note even in strict mode); not for a value clipped to the range,
        // which has its warning 1264.
        let rounded = match col.ty {
            crate::types::SqlType::Decimal { scale, .. } => {
                crate::types::sqltype::decimal_rounding(&v, scale)
            }
            _ => None,
        };
        let clipped = std::cell::Cell::new(false);
        let warned = std::cell::Cell::new(false);
        let v =
            crate::types::sqltype::coerce_or_clip(v, col.ty, &col.name, rowno, &|code, msg| {
                clipped.set(clipped.get() || code == 1264);
                warned.set(true);
                ctx.warn(code, msg)
            })?;
        if drops_time && !warned.get() {
            ctx.warn(
                NOTE | 1265,
                &format!("Data truncated for column '{}' at row {rowno}", col.name),
            );
        }
        if temporal_year {
            ctx.warn(
                1265,
                &format!("Data truncated for column '{}' at row {rowno}", col.name),
            );
        }
        if let (Some(r), Value::Decimal(stored), false) = (rounded, &v, clipped.get()) {
            if r == *stored {
                ctx.warn(
                    NOTE | 1265,
                    &format!("Data truncated for column '{}' at row {rowno}", col.name),
                );
            }
        }
        return match (v, col.ty) {
            // A TIMESTAMP stores the instant of the session-local time; a
            // time in a spring-forward gap is the first instant after it,
            // with MySQL 8's warning 1299 (MariaDB refuses it in strict
            // mode, 1292); outside the range is 1292.
            (Value::DateTime(local), crate::types::SqlType::Timestamp(_)) => {
                let stamp =
                    crate::types::timezone::stamp(local, &ctx.time_zone()).ok_or_else(|| {
                        Error::IncorrectValue {
                            type_name: "datetime".to_string(),
                            value: crate::types::value::format_datetime(&local),
                            column: col.name.clone(),
                            row: rowno,
                        }
                    })?;
                if stamp.local != local {
                    ctx.warn(
                        1299,
                        &format!(
                            "Invalid TIMESTAMP value in column '{}' at row {rowno}",
                            col.name
                        ),
                    );
                }
                Ok(Value::Stamp(stamp))
            }
            (v, _) => Ok(limit_to_charset(v, col, rowno, ctx)),
        };
    }
    let (v, bad) = crate::types::coerce_member(v, col.ty);
    if bad {
        ctx.warn(
            1265,
            &format!("Data truncated for column '{}' at row {rowno}", col.name),
        );
    }
    Ok(v)
}

/// Whether `v`, read as a date and time, has a time of day other than
/// midnight (MySQL's `non_zero_time`): a DATETIME or TIMESTAMP value, or a
/// string or number that reads as one (`'2008-01-01 12:00:00'`,
/// 20080101120000). Something that is no date and time has none.
fn has_time_of_day(v: &Value) -> bool {
    let dt = match v {
        Value::DateTime(dt) | Value::Stamp(crate::types::value::Stamp { local: dt, .. }) => *dt,
        Value::Bytes(_) | Value::Int(_) | Value::UInt(_) | Value::Decimal(_) => {
            match crate::types::coerce(v.clone(), crate::types::SqlType::DateTime(6), "", 0) {
                Ok(Value::DateTime(dt)) => dt,
                _ => return false,
            }
        }
        _ => return false,
    };
    dt.time() != chrono::NaiveTime::MIN
}

/// Bytes that are no UTF-8 text (a binary string: `0x80`, `_binary'..'`)
/// stored into a character column declared in another character set
/// (latin1, sjis ...) are read as that set's bytes, as MySQL reinterprets a
/// binary string in the column's set: 0x80 into a latin1 column is `€`
/// (MySQL's latin1 is cp1252). Bytes that are no text in that set either
/// are left for [`crate::types::coerce`]'s 1366. Canyon holds text as
/// UTF-8 and cannot tell a binary string that is valid UTF-8 from text:
/// such bytes stay UTF-8 text (MySQL: one latin1 character per byte).
fn in_column_charset(v: Value, col: &crate::catalog::ColumnDef) -> Value {
    let Value::Bytes(b) = &v else {
        return v;
    };
    let cs = col.collation.character_set();
    // (In ascii every byte above 0x7F is no character: 1366.)
    if !col.ty.is_string()
        || col.ty.is_binary()
        || cs.is_passthrough()
        || cs == crate::types::charset::Charset::Ascii
        || b.is_ascii()
    {
        return v;
    }
    if std::str::from_utf8(b).is_ok() {
        return v;
    }
    match cs.decode(b) {
        std::borrow::Cow::Owned(text) if !text.contains('\u{FFFD}') => Value::str(&text),
        _ => v,
    }
}

/// A string stored into a column declared in a character set other than
/// UTF-8 (`CHARACTER SET latin1`): the values stay UTF-8, but only the
/// characters of that set may be stored, as in MySQL 8. Each other character
/// becomes `?` with warning 1366 ("Incorrect string value: '\\xE2\\x82\\xAC' for
/// column 'c' at row 1", the UTF-8 bytes from the first bad character), which
/// strict mode makes the statement's error (`StmtCtx::strict_mode_error`).
/// utf8mb4 and binary columns are not checked: no cost on their path.
fn limit_to_charset(
    v: Value,
    col: &crate::catalog::ColumnDef,
    rowno: u64,
    ctx: &dyn EvalContext,
) -> Value {
    use crate::types::charset::Charset;
    let cs = col.collation.character_set();
    if matches!(cs, Charset::Utf8mb4 | Charset::Binary) || !col.ty.is_string() || col.ty.is_binary()
    {
        return v;
    }
    let Value::Bytes(b) = &v else {
        return v;
    };
    if b.is_ascii() {
        return v;
    }
    let Ok(text) = std::str::from_utf8(b) else {
        return v;
    };
    let Some(bad) = cs.unrepresentable(text) else {
        return v;
    };
    let at = text.find(bad).unwrap_or(0);
    let tail = &b[at..];
    // MySQL's `convert_to_printable`: six bytes, printable ASCII as itself.
    let mut quoted: String = tail
        .iter()
        .take(6)
        .map(|&x| {
            if (0x20..0x7F).contains(&x) {
                (x as char).to_string()
            } else {
                format!("\\x{x:02X}")
            }
        })
        .collect();
    if tail.len() > 6 {
        quoted.push_str("...");
    }
    ctx.warn(
        1366,
        &format!(
            "Incorrect string value: '{quoted}' for column '{}' at row {rowno}",
            col.name
        ),
    );
    Value::str(&cs.restrict(text))
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
}
