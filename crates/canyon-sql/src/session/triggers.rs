//! Stored programs that run inside a statement's execution: triggers fired
//! for each row an INSERT / UPDATE / DELETE writes, and stored functions
//! called per row from an expression. Both run through a [`TxnHost`] (the
//! statement's transaction, lent by the executor) or a read snapshot of
//! their own, never through the session; the parsed bodies are cached per
//! thread so a program run per row is parsed once. The statements that
//! define and call programs are [`super::routines`]'.

use super::interp::{self, Flow, Host, Interp, ProgramKind};
use super::routines::{commit_not_allowed, implicit_commit, wrong_arg_count, MAX_NESTING};
use super::state::*;
use crate::catalog::routines::{sp_error, RoutineDef, TriggerDef, TriggerEvent, TriggerTiming};
use crate::catalog::Catalog;
use crate::parse::psm::{self, Psm};
use crate::parse::Parsed;
use crate::types::result::QueryResult;
use crate::types::value::Value;
use canyon_common::{Error, Result};
use sqlparser::ast::Statement;
use std::sync::Arc;

// ---- firing triggers ------------------------------------------------------------------

/// Fires the triggers of `table` for one row (see
/// [`crate::expr::EvalContext::fire_triggers`]): each runs in the
/// statement's transaction through a [`TxnHost`], with the trigger's
/// database as the current one.
pub(super) fn fire_triggers(
    ctx: &super::context::StmtCtx<'_>,
    txn: &mut canyon_txn::Transaction,
    table: &crate::catalog::TableDef,
    timing: TriggerTiming,
    event: TriggerEvent,
    old: Option<&[Value]>,
    new: Option<&mut Vec<Value>>,
) -> Result<()> {
    if crate::catalog::temporary::is_temporary(table.id) {
        // The base table a temporary one shadows keeps its triggers to itself.
        return Ok(());
    }
    let cat = Arc::clone(&ctx.state.engine.catalog());
    let list = cat.table_triggers(&table.db, &table.name, timing, event);
    if list.is_empty() {
        return Ok(());
    }
    if ctx.trigger_chain.len() >= MAX_NESTING {
        return Err(sp_error(
            1436,
            b"HY000",
            "Thread stack overrun: too many nested triggers".into(),
        ));
    }
    let mut chain = ctx.trigger_chain.clone();
    chain.push((table.db.clone(), table.name.clone()));
    crate::parse::limits::with_statement_stack(|| {
        fire_list(ctx, txn, table, timing, &cat, &list, &chain, old, new)
    })
}

/// [`fire_triggers`] for the triggers found, on a stack deep enough.
#[allow(clippy::too_many_arguments)] // the row and where it fires, spelled out
fn fire_list(
    ctx: &super::context::StmtCtx<'_>,
    txn: &mut canyon_txn::Transaction,
    table: &crate::catalog::TableDef,
    timing: TriggerTiming,
    cat: &Arc<Catalog>,
    list: &[Arc<TriggerDef>],
    chain: &[(String, String)],
    old: Option<&[Value]>,
    mut new: Option<&mut Vec<Value>>,
) -> Result<()> {
    for t in list {
        let body = compiled_trigger(t)?;
        let body = body.as_ref();
        let mut host = TxnHost {
            state: ctx.state,
            txn: &mut *txn,
            cat: cat.clone(),
            db: t.db.clone(),
            chain: chain.to_vec(),
            read_only: false,
            var_writes: ctx.var_writes,
        };
        let mut it = Interp::new(&mut host, ProgramKind::Trigger);
        it.row = Some(interp::TriggerRow {
            columns: table.columns.iter().map(|c| c.name.clone()).collect(),
            types: table.columns.iter().map(|c| c.ty).collect(),
            old: old.map(<[Value]>::to_vec),
            new: new.as_deref().cloned(),
            new_writable: timing == TriggerTiming::Before,
        });
        it.run(body)?;
        if let (Some(n), Some(row)) = (new.as_deref_mut(), it.row.take()) {
            if let Some(changed) = row.new {
                *n = changed;
            }
        }
    }
    Ok(())
}

/// A trigger's host: its statements run inside the firing statement's
/// transaction, planned and executed directly (SELECT, INSERT, UPDATE,
/// DELETE; anything else is refused: DDL and transaction control with
/// 1422, as in MySQL).
struct TxnHost<'s, 't> {
    state: &'s State,
    txn: &'t mut canyon_txn::Transaction,
    cat: Arc<Catalog>,
    db: String,
    chain: Vec<(String, String)>,
    /// A stored function called per row: its own read snapshot, no writes.
    read_only: bool,
    /// Where `SET @x` goes (the firing statement's context's).
    var_writes: Option<&'s super::context::VarWrites>,
}

impl TxnHost<'_, '_> {
    /// 1442 ER_CANT_UPDATE_USED_TABLE_IN_SF_OR_TRG when a trigger writes a
    /// table whose trigger is running.
    fn check_written(&self, t: &crate::catalog::Table) -> Result<()> {
        if self
            .chain
            .iter()
            .any(|(d, n)| *d == t.def.db && *n == t.def.name)
        {
            return Err(sp_error(
                1442,
                b"HY000",
                format!(
                    "Can't update table '{}' in stored function/trigger because it is already used by statement which invoked this stored function/trigger.",
                    t.def.name
                ),
            ));
        }
        Ok(())
    }
}

impl Host for TxnHost<'_, '_> {
    fn run_statement(&mut self, parsed: &Parsed) -> Result<QueryResult> {
        use crate::plan::{self, Plan, PlanContext};
        let Parsed::Sql(stmt) = parsed else {
            return Err(Error::Unsupported("this statement in a trigger".into()));
        };
        let pctx = PlanContext::new(&self.cat, Some(&self.db), self.state.connection_collation());
        let planned = match stmt.as_ref() {
            Statement::Query(q) => {
                plan::select::plan_select(&pctx, q).map(|p| Plan::Select(Box::new(p)))
            }
            Statement::Insert(i) => plan::plan_insert(&pctx, i).map(Plan::Insert),
            Statement::Update(u) => plan::plan_update(&pctx, u).map(Plan::Update),
            Statement::Delete(d) => plan::plan_delete(&pctx, d).map(Plan::Delete),
            s if implicit_commit(s) => return Err(commit_not_allowed()),
            other => {
                return Err(Error::Unsupported(format!(
                    "{} in a trigger",
                    super::dispatch::statement_kind(other)
                )))
            }
        };
        let mut plan = planned?;
        if self.read_only && !matches!(plan, Plan::Select(_)) {
            return Err(Error::Unsupported(
                "a stored function that changes data, called for each row".into(),
            ));
        }
        match &mut plan {
            Plan::Insert(p) => {
                self.check_written(&p.table)?;
                if self.cat.has_foreign_keys(&p.table) {
                    p.fk = Some(self.cat.clone());
                }
            }
            Plan::Update(p) => {
                let targets: Vec<_> = match &p.multi {
                    Some(m) => m.targets.iter().map(|t| t.table.clone()).collect(),
                    None => vec![p.table.clone()],
                };
                for t in &targets {
                    self.check_written(t)?;
                    if self.cat.has_foreign_keys(t) {
                        p.fk = Some(self.cat.clone());
                    }
                }
            }
            Plan::Delete(p) => {
                let targets: Vec<_> = match &p.multi {
                    Some(m) => m.targets.iter().map(|t| t.table.clone()).collect(),
                    None => vec![p.table.clone()],
                };
                for t in &targets {
                    self.check_written(t)?;
                    if self.cat.has_foreign_keys(t) {
                        p.fk = Some(self.cat.clone());
                    }
                }
            }
            Plan::Select(_) => {}
        }
        let mut ctx = super::context::StmtCtx::new(self.state, &[]);
        ctx.trigger_chain = self.chain.clone();
        ctx.var_writes = self.var_writes;
        let mut effects = crate::exec::StatementEffects::default();
        let txn = &mut *self.txn;
        let r = match &plan {
            Plan::Select(s) => crate::exec::select::run_select(s, Some(txn), &ctx, false),
            Plan::Insert(i) => crate::exec::run_insert(i, txn, &ctx, &mut effects, false),
            Plan::Update(u) => crate::exec::run_update(u, txn, &ctx, false, &mut effects),
            Plan::Delete(d) => crate::exec::run_delete(d, txn, &ctx),
        }?;
        let ignore = match &plan {
            Plan::Insert(i) => i.ignore,
            Plan::Update(u) => u.ignore,
            Plan::Delete(d) => d.ignore,
            Plan::Select(_) => true,
        };
        if !ignore {
            if let Some(e) = ctx.strict_mode_error() {
                return Err(e);
            }
        }
        Ok(r)
    }
    fn set_user_var(&mut self, name: &str, v: Value) -> Result<()> {
        match self.var_writes {
            Some(w) => {
                w.borrow_mut().insert(name.to_ascii_lowercase(), v);
                Ok(())
            }
            None => Err(Error::Unsupported(
                "assigning a user variable in this statement's trigger".into(),
            )),
        }
    }
    fn check_interrupt(&self) -> Result<()> {
        if self.state.process.kill_state() != crate::catalog::procs::KILL_NONE {
            return Err(Error::Interrupted);
        }
        Ok(())
    }
    fn warn(&mut self, _level: &'static str, _code: u16, _message: String) {}
    fn time_zone(&self) -> crate::types::timezone::Zone {
        self.state.time_zone()
    }
    fn call(
        &mut self,
        _db: Option<&str>,
        _name: &str,
        _args: Vec<Value>,
        _out: &mut Vec<QueryResult>,
    ) -> Result<Vec<Value>> {
        Err(Error::Unsupported("CALL in a trigger".into()))
    }
}

// ---- stored functions called per row ------------------------------------------------

thread_local! {
    /// The stored functions running per row on this thread (1424 on
    /// recursion): they run inside an expression, out of the session's
    /// reach, so their nesting is kept here.
    static PER_ROW: std::cell::RefCell<Vec<(String, String)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Pops the per-row stack when a call ends, however it ends.
struct PerRowFrame;

impl Drop for PerRowFrame {
    fn drop(&mut self) {
        PER_ROW.with(|s| s.borrow_mut().pop());
    }
}

/// Runs a stored function called from an expression that reads the row
/// ([`crate::expr::EvalContext::call_stored`]). The executor holds the
/// statement's transaction while it evaluates, so the body runs in a read
/// snapshot of its own (taken now: it sees what is committed, not the
/// calling transaction's own uncommitted writes), and may only read:
/// INSERT, UPDATE and DELETE in it are refused (1235).
pub(super) fn call_stored_per_row(
    ctx: &super::context::StmtCtx<'_>,
    routine: &Arc<RoutineDef>,
    args: Vec<Value>,
) -> Result<Value> {
    let key = (routine.db.clone(), routine.name.to_ascii_lowercase());
    PER_ROW.with(|s| {
        let s = s.borrow();
        if s.contains(&key) {
            return Err(sp_error(
                1424,
                b"HY000",
                "Recursive stored functions and triggers are not allowed.".into(),
            ));
        }
        if s.len() >= MAX_NESTING {
            return Err(sp_error(
                1436,
                b"HY000",
                "Thread stack overrun: too many nested stored program calls".into(),
            ));
        }
        Ok(())
    })?;
    PER_ROW.with(|s| s.borrow_mut().push(key));
    let _frame = PerRowFrame;
    crate::parse::limits::with_statement_stack(|| run_per_row(ctx, routine, args))
}

fn run_per_row(
    ctx: &super::context::StmtCtx<'_>,
    routine: &Arc<RoutineDef>,
    args: Vec<Value>,
) -> Result<Value> {
    let compiled = compiled(routine)?;
    let (params, body) = (&compiled.params, &compiled.body);
    if params.len() != args.len() {
        return Err(wrong_arg_count(routine, params.len(), args.len()));
    }
    let cat = Arc::clone(&ctx.state.engine.catalog());
    let session = ctx.state.engine.txn_manager().session();
    let mut txn = session.begin(canyon_txn::IsolationLevel::RepeatableRead);
    txn.set_interrupt(Some(ctx.state.process.kill_flag().clone()));
    let mut host = TxnHost {
        state: ctx.state,
        txn: &mut txn,
        cat,
        db: routine.db.clone(),
        chain: ctx.trigger_chain.clone(),
        read_only: true,
        var_writes: ctx.var_writes,
    };
    let flow = {
        let mut it = Interp::new(&mut host, ProgramKind::Function);
        for (p, v) in params.iter().zip(args) {
            let ty = crate::ddl::define::sql_type(&p.ty).ok();
            it.param(&p.name, v, ty)?;
        }
        it.run(body)?
    };
    txn.rollback();
    match flow {
        Flow::Return(v) => match routine.returns_type {
            Some(t) => crate::types::coerce(v, t, &routine.name, 1),
            None => Ok(v),
        },
        // 1321 ER_SP_NORETURNEND.
        _ => Err(sp_error(
            1321,
            b"2F005",
            format!("FUNCTION {} ended without RETURN", routine.name),
        )),
    }
}

// ---- parsed bodies ----------------------------------------------------------------------

/// A routine's parameters and body, parsed.
pub(super) struct Compiled {
    /// The parameters.
    pub(super) params: Vec<psm::Param>,
    /// The body.
    pub(super) body: Psm,
}

/// How many parsed routines (and, apart, triggers) a thread keeps.
const COMPILED_CACHE: usize = 32;

thread_local! {
    /// Parsed routines by definition: a function called per row, or a
    /// trigger fired per row, is parsed once, not per row. An entry holds
    /// its definition's `Arc`, so its address names it until it is evicted
    /// (a new catalog version's definition is a new `Arc`).
    static COMPILED: std::cell::RefCell<Vec<(Arc<RoutineDef>, std::rc::Rc<Compiled>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
    static COMPILED_TRIGGERS: std::cell::RefCell<Vec<(Arc<TriggerDef>, std::rc::Rc<Psm>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

pub(super) fn compiled(def: &Arc<RoutineDef>) -> Result<std::rc::Rc<Compiled>> {
    if let Some(c) = COMPILED.with(|c| {
        c.borrow()
            .iter()
            .find(|(d, _)| Arc::ptr_eq(d, def))
            .map(|(_, c)| c.clone())
    }) {
        return Ok(c);
    }
    let c = std::rc::Rc::new(Compiled {
        params: psm::parse_params(&def.params, def.kind)?,
        body: psm::parse_body(&def.body)?,
    });
    COMPILED.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.len() >= COMPILED_CACHE {
            cache.remove(0);
        }
        cache.push((def.clone(), c.clone()));
    });
    Ok(c)
}

fn compiled_trigger(def: &Arc<TriggerDef>) -> Result<std::rc::Rc<Psm>> {
    if let Some(c) = COMPILED_TRIGGERS.with(|c| {
        c.borrow()
            .iter()
            .find(|(d, _)| Arc::ptr_eq(d, def))
            .map(|(_, c)| c.clone())
    }) {
        return Ok(c);
    }
    let c = std::rc::Rc::new(psm::parse_body(&def.body)?);
    COMPILED_TRIGGERS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.len() >= COMPILED_CACHE {
            cache.remove(0);
        }
        cache.push((def.clone(), c.clone()));
    });
    Ok(c)
}
