//! Stored procedures, stored functions and triggers: their statements
//! (CREATE / DROP / ALTER, CALL, SHOW CREATE, SHOW ... STATUS, SHOW
//! TRIGGERS), the calls of stored functions in other statements, and
//! the session as the interpreter's [`Host`].
//!
//! # The path of a CALL
//! 1. `Session::execute_text` sees a text that starts a stored-program
//!    statement ([`crate::parse::psm_detect::is_routine_statement`]) and hands it
//!    to [`Session::run_routine_text`], before sqlparser would split the
//!    body at its `;`s.
//! 2. [`crate::parse::psm::routine_statement`] parses it; the procedure's
//!    definition comes from the catalog snapshot
//!    ([`crate::catalog::routines`]) and its body is parsed from its text.
//! 3. The arguments are evaluated (`SELECT arg`), the interpreter
//!    ([`super::interp`]) runs the body: each plain statement runs through
//!    [`Session::run_inner`], so it autocommits (or joins the open
//!    transaction) exactly as if the client had sent it.
//! 4. Each SELECT's rows become one result set; the CALL's own OK follows
//!    them. The server sends every result but the last with
//!    SERVER_MORE_RESULTS_EXISTS (`canyon-server`'s `com_query`), which is
//!    what CLIENT_MULTI_RESULTS clients expect.
//! 5. OUT and INOUT parameters are written back to the `@variables` given
//!    as their arguments.
//!
//! # Stored functions in statements
//! Before a SELECT, INSERT, UPDATE, DELETE or SET is planned, each call of
//! a stored function in it (a name no builtin has, found in the current or
//! named database) whose arguments read no column is evaluated once and
//! replaced by its value ([`Session::expand_stored_functions`]). It runs in
//! the session like a CALL's statements: in the statement's transaction,
//! free to read and write. The function runs with the database it belongs
//! to as the current one; a function that calls itself is 1424.
//!
//! A call whose arguments read the row is bound into the expression tree
//! (`crate::plan::bind_stored`, [`crate::expr::Expr::Stored`]) and
//! evaluated per row through [`crate::expr::EvalContext::call_stored`]:
//! the executor holds the statement's transaction (`&mut`) while it
//! evaluates, so such a call runs in a read snapshot of its own and may only
//! read ([`super::triggers::call_stored_per_row`]). MySQL runs every call per row, inside
//! the statement's transaction; the differences are that a constant call
//! runs once per statement, and that a per-row call neither sees the
//! transaction's own uncommitted rows nor may write.
//!
//! # Recursion
//! A procedure may call itself only up to `max_sp_recursion_depth` (default
//! 0: not at all; 1456 beyond); any program stops at [`MAX_NESTING`]
//! nested calls (MySQL's thread-stack check, 1436).

use super::interp::{self, Flow, Host, Interp, ProgramKind};
use super::state::*;
use super::triggers::compiled;
use crate::catalog::routines::{
    definer_sql, missing_routine, sp_error, RoutineDef, RoutineKind, TriggerDef, TriggerEvent,
    TriggerPlace, TriggerTiming,
};
use crate::catalog::status::Counter;
use crate::catalog::Catalog;
use crate::parse::psm::{self, ObjectKind, ParamMode, Psm, RoutineStatement};
use crate::parse::Parsed;
use crate::types::result::QueryResult;
use crate::types::value::Value;
use canyon_common::{Error, Result};
use sqlparser::ast::{self, Expr, Statement};
use std::ops::ControlFlow;
use std::sync::Arc;

/// The most stored programs one statement may nest.
pub(super) const MAX_NESTING: usize = 64;

/// The stored programs running in a session, outermost first.
#[derive(Debug, Default)]
pub(super) struct Active {
    stack: Vec<(RoutineKind, String, String)>,
    /// When the outermost program must stop (max_execution_time).
    deadline: Option<std::time::Instant>,
    /// The client did not set CLIENT_MULTI_RESULTS: a CALL may not send
    /// result sets (1312).
    single_result_client: bool,
}

impl Host for Session {
    fn run_statement(&mut self, parsed: &Parsed) -> Result<QueryResult> {
        let r = self.run_inner(parsed, &[], "");
        // A statement's commit must be durable before the next one runs.
        self.settle()?;
        r
    }
    fn set_user_var(&mut self, name: &str, v: Value) -> Result<()> {
        self.state.user_vars.insert(name.to_ascii_lowercase(), v);
        Ok(())
    }
    fn check_interrupt(&self) -> Result<()> {
        if self.state.process.kill_state() != crate::catalog::procs::KILL_NONE {
            return Err(Error::Interrupted);
        }
        if self
            .routines
            .deadline
            .is_some_and(|d| std::time::Instant::now() >= d)
        {
            return Err(Error::QueryTimeout);
        }
        Ok(())
    }
    fn warn(&mut self, level: &'static str, code: u16, message: String) {
        self.state.warnings.push((level, code, message));
    }
    fn time_zone(&self) -> crate::types::timezone::Zone {
        self.state.time_zone()
    }
    fn call(
        &mut self,
        db: Option<&str>,
        name: &str,
        args: Vec<Value>,
        out: &mut Vec<QueryResult>,
    ) -> Result<Vec<Value>> {
        self.call_procedure(db, name, args, out)
    }
}

fn now_text() -> String {
    chrono::Local::now()
        .naive_local()
        .format("%Y-%m-%d %H:%M:%S")
        .to_string()
}

impl Session {
    /// Runs a text that starts with a stored-program statement; the text
    /// after it, if any, runs as the rest of a multi-statement request.
    pub(super) fn run_routine_text(&mut self, sql: &str, multi: bool) -> Vec<Result<QueryResult>> {
        self.state.warnings.clear();
        self.count(Counter::Questions);
        let (stmt, rest) = match psm::routine_statement(sql) {
            Ok(x) => x,
            Err(e) => {
                self.record_error(&e);
                return vec![Err(e)];
            }
        };
        let more = !rest.trim().trim_start_matches(';').trim().is_empty();
        if more && !multi {
            let e = Error::Syntax(rest.chars().take(80).collect());
            self.record_error(&e);
            return vec![Err(e)];
        }
        self.state.engine.pin_catalog(&self.pin);
        let defer = std::mem::replace(&mut self.defer_waits_now, false);
        // One statement scope for table locks: the CALL's statements add to
        // its intention, which ends with it (`super::table_lock`).
        self.enter_statement();
        let mut out = self.run_routine_statement(&stmt);
        self.leave_statement();
        self.defer_waits_now = defer;
        self.unpin_if_idle();
        match out.last_mut() {
            Some(Err(e)) => {
                let e = e.clone();
                self.record_error(&e);
                return out;
            }
            Some(last @ Ok(_)) => {
                let r = std::mem::replace(last, Ok(ok(0)));
                *last = self.with_warning_count(r);
            }
            None => {}
        }
        if more {
            if let Err(e) = self.settle() {
                out.push(Err(e));
                return out;
            }
            out.extend(self.execute_text(&rest, multi));
        }
        out
    }

    fn run_routine_statement(&mut self, stmt: &RoutineStatement) -> Vec<Result<QueryResult>> {
        match stmt {
            RoutineStatement::Call { db, name, args } => self.run_call(db.as_deref(), name, args),
            other => vec![self.run_routine_ddl(other)],
        }
    }

    fn routine_db(&self, db: &Option<String>) -> Result<String> {
        match db {
            Some(d) => Ok(d.clone()),
            None => self.state.db.clone().ok_or(Error::NoDatabaseSelected),
        }
    }

    /// The definer an unqualified CREATE records: the current account.
    fn current_definer(&self) -> String {
        let cat = self.state.engine.catalog();
        let host = cat
            .user(&self.state.user, &self.state.host)
            .map(|u| u.host.clone())
            .unwrap_or_else(|| self.state.host.clone());
        format!("{}@{}", self.state.user, host)
    }

    fn sql_mode(&self) -> String {
        self.state
            .get_var("sql_mode")
            .map(|v| v.to_display())
            .unwrap_or_default()
    }

    fn run_routine_ddl(&mut self, stmt: &RoutineStatement) -> Result<QueryResult> {
        if matches!(
            stmt,
            RoutineStatement::Create(_)
                | RoutineStatement::CreateTrigger(_)
                | RoutineStatement::Drop { .. }
                | RoutineStatement::Alter { .. }
        ) {
            // A stored program is a shared definition (`super::read_only`).
            self.check_read_only_write()?;
        }
        match stmt {
            RoutineStatement::Create(c) => {
                let db = self.routine_db(&c.db)?;
                crate::catalog::engine::validate_name(&c.name)?;
                let cat = self.catalog();
                self.state.check_db(&cat, &db, "CREATE ROUTINE", None)?;
                let returns_type = match c.kind {
                    RoutineKind::Function => Some(crate::ddl::define::sql_type(&psm::parse_type(
                        &c.returns_text,
                    )?)?),
                    RoutineKind::Procedure => None,
                };
                let body = psm::parse_body(&c.body_text)?;
                check_program(&body, c.kind == RoutineKind::Function)?;
                self.commit()?;
                let now = now_text();
                let def = RoutineDef {
                    db: db.clone(),
                    name: c.name.clone(),
                    kind: c.kind,
                    definer: c.definer.clone().unwrap_or_else(|| self.current_definer()),
                    params: c.params_text.clone(),
                    returns: c.returns_text.clone(),
                    returns_type,
                    body: c.body_text.clone(),
                    deterministic: c.chars.deterministic.unwrap_or(false),
                    data_access: c.chars.data_access.unwrap_or_default(),
                    security_invoker: c.chars.security_invoker.unwrap_or(false),
                    comment: c.chars.comment.clone().unwrap_or_default(),
                    sql_mode: self.sql_mode(),
                    created: now.clone(),
                    modified: now,
                };
                if !self.state.engine.create_routine(def, c.if_not_exists)? {
                    self.note(1304, format!("{} {} already exists", c.kind.sql(), c.name));
                }
                Ok(ok(0))
            }
            RoutineStatement::CreateTrigger(t) => self.create_trigger(t),
            RoutineStatement::Drop {
                kind,
                if_exists,
                db,
                name,
            } => {
                let db = self.routine_db(db)?;
                let cat = self.catalog();
                self.commit()?;
                match kind {
                    ObjectKind::Routine(k) => {
                        self.state.check_db(&cat, &db, "ALTER ROUTINE", None)?;
                        if !self.state.engine.drop_routine(&db, *k, name)? {
                            if !*if_exists {
                                return Err(missing_routine(*k, &db, name));
                            }
                            self.note(1305, format!("{} {db}.{name} does not exist", k.sql()));
                        }
                    }
                    ObjectKind::Trigger => {
                        self.state.check_db(&cat, &db, "TRIGGER", None)?;
                        if !self.state.engine.drop_trigger(&db, name)? {
                            if !*if_exists {
                                return Err(missing_trigger());
                            }
                            self.note(1360, "Trigger does not exist".into());
                        }
                    }
                }
                Ok(ok(0))
            }
            RoutineStatement::Alter {
                kind,
                db,
                name,
                chars,
            } => {
                let db = self.routine_db(db)?;
                let cat = self.catalog();
                self.state.check_db(&cat, &db, "ALTER ROUTINE", None)?;
                self.commit()?;
                let chars = chars.clone();
                self.state.engine.alter_routine(&db, *kind, name, |d| {
                    if let Some(x) = chars.deterministic {
                        d.deterministic = x;
                    }
                    if let Some(x) = chars.data_access {
                        d.data_access = x;
                    }
                    if let Some(x) = chars.security_invoker {
                        d.security_invoker = x;
                    }
                    if let Some(x) = chars.comment {
                        d.comment = x;
                    }
                    d.modified = now_text();
                })?;
                Ok(ok(0))
            }
            RoutineStatement::ShowCreate { kind, db, name } => {
                self.show_create_program(*kind, db, name)
            }
            RoutineStatement::ShowStatus { kind, like, filter } => {
                self.show_routine_status(*kind, like, filter)
            }
            RoutineStatement::ShowTriggers { db, like, filter } => {
                self.show_triggers(db, like, filter)
            }
            RoutineStatement::Call { .. } => Err(Error::Internal("CALL is run by run_call".into())),
        }
    }

    fn catalog(&self) -> Arc<Catalog> {
        Arc::clone(&self.state.catalog())
    }

    // ---- CALL -----------------------------------------------------------------------

    /// CALL as sqlparser parsed it: a CALL after the first statement of a
    /// multi-statement text, or a prepared CALL (its `?` are `params`, in
    /// order).
    pub(super) fn run_call_statement(
        &mut self,
        f: &ast::Function,
        params: &[Value],
    ) -> Vec<Result<QueryResult>> {
        let parts: Vec<String> = f
            .name
            .0
            .iter()
            .filter_map(|p| p.as_ident().map(|i| i.value.clone()))
            .collect();
        let (db, name) = match parts.as_slice() {
            [n] => (None, n.clone()),
            [d, n] => (Some(d.clone()), n.clone()),
            _ => return vec![Err(Error::Syntax(f.to_string()))],
        };
        let mut args: Vec<Expr> = match &f.args {
            ast::FunctionArguments::None => Vec::new(),
            ast::FunctionArguments::List(l) => {
                let mut v = Vec::with_capacity(l.args.len());
                for a in &l.args {
                    match a {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                            v.push(e.clone())
                        }
                        _ => return vec![Err(Error::Syntax(f.to_string()))],
                    }
                }
                v
            }
            ast::FunctionArguments::Subquery(_) => {
                return vec![Err(Error::Unsupported("CALL with a subquery".into()))]
            }
        };
        let mut next = params.iter();
        for a in &mut args {
            let _ = ast::visit_expressions_mut(a, |e| {
                if let Expr::Value(v) = e {
                    if matches!(&v.value, ast::Value::Placeholder(p) if p == "?") {
                        if let Some(p) = next.next() {
                            *e = interp::literal(p);
                        }
                    }
                }
                ControlFlow::<()>::Continue(())
            });
        }
        self.run_call(db.as_deref(), &name, &args)
    }

    /// Sets whether the client takes several results for one statement
    /// (CLIENT_MULTI_RESULTS; the server calls this at login). Without it, a
    /// CALL whose procedure sends result sets fails with 1312, as in MySQL.
    /// On by default: in-process callers take every result.
    pub fn set_client_multi_results(&mut self, on: bool) {
        self.routines.single_result_client = !on;
    }

    fn run_call(
        &mut self,
        db: Option<&str>,
        name: &str,
        args: &[Expr],
    ) -> Vec<Result<QueryResult>> {
        let mut out: Vec<QueryResult> = Vec::new();
        // The CALL is one statement scope for table locks, however it was
        // sent (text, multi-statement text, prepared).
        self.enter_statement();
        let r = self.run_call_inner(db, name, args, &mut out);
        self.leave_statement();
        if self.routines.single_result_client && !out.is_empty() {
            // 1312 ER_SP_BADSELECT.
            return vec![Err(sp_error(
                1312,
                b"0A000",
                format!("PROCEDURE {name} can't return a result set in the given context"),
            ))];
        }
        let mut results: Vec<Result<QueryResult>> = out.into_iter().map(Ok).collect();
        match r {
            Ok(()) => results.push(Ok(ok(0))),
            Err(e) => results.push(Err(e)),
        }
        results
    }

    fn run_call_inner(
        &mut self,
        db: Option<&str>,
        name: &str,
        args: &[Expr],
        out: &mut Vec<QueryResult>,
    ) -> Result<()> {
        let db_name = match db {
            Some(d) => d.to_string(),
            None => self.state.db.clone().ok_or(Error::NoDatabaseSelected)?,
        };
        let cat = self.catalog();
        let def = cat
            .routine(&db_name, RoutineKind::Procedure, name)
            .cloned()
            .ok_or_else(|| missing_routine(RoutineKind::Procedure, &db_name, name))?;
        self.state.check_db(&cat, &db_name, "EXECUTE", None)?;
        let params = psm::parse_params(&def.params, RoutineKind::Procedure)?;
        if params.len() != args.len() {
            return Err(wrong_arg_count(&def, params.len(), args.len()));
        }
        let mut values = Vec::with_capacity(args.len());
        for (i, (p, a)) in params.iter().zip(args).enumerate() {
            let var = user_var_name(a);
            if p.mode != ParamMode::In && var.is_none() {
                // 1414 ER_SP_NOT_VAR_ARG.
                return Err(sp_error(
                    1414,
                    b"42000",
                    format!(
                        "OUT or INOUT argument {} for routine {}.{} is not a variable or NEW pseudo-variable in BEFORE trigger",
                        i + 1,
                        def.db,
                        def.name
                    ),
                ));
            }
            values.push(match p.mode {
                ParamMode::Out => Value::Null,
                _ => self.eval_value(a)?,
            });
        }
        self.routines.deadline = match self.state.max_execution_ms {
            0 => None,
            ms => Some(std::time::Instant::now() + std::time::Duration::from_millis(ms)),
        };
        let end = self.call_procedure(Some(&db_name), name, values, out);
        self.routines.deadline = None;
        let end = end?;
        for ((p, a), v) in params.iter().zip(args).zip(end) {
            if p.mode != ParamMode::In {
                if let Some(var) = user_var_name(a) {
                    self.state.user_vars.insert(var, v);
                }
            }
        }
        Ok(())
    }

    /// Evaluates an expression as `SELECT expr` (stored functions in it too).
    fn eval_value(&mut self, e: &Expr) -> Result<Value> {
        match self.run_inner(&interp::select_of(e.clone()), &[], "")? {
            QueryResult::Rows { mut rows, .. } if !rows.is_empty() => Ok(rows
                .swap_remove(0)
                .into_iter()
                .next()
                .unwrap_or(Value::Null)),
            _ => Ok(Value::Null),
        }
    }

    /// Pushes a program on the nesting stack, checking recursion.
    fn enter(&mut self, kind: RoutineKind, def: &RoutineDef) -> Result<()> {
        let key = (kind, def.db.clone(), def.name.to_ascii_lowercase());
        let already = self.routines.stack.iter().filter(|k| **k == key).count();
        if self.routines.stack.len() >= MAX_NESTING {
            // 1436 ER_STACK_OVERRUN_NEED_MORE, as MySQL's stack check ends it.
            return Err(sp_error(
                1436,
                b"HY000",
                "Thread stack overrun: too many nested stored program calls".into(),
            ));
        }
        if already > 0 {
            match kind {
                RoutineKind::Function => {
                    // 1424 ER_SP_NO_RECURSION.
                    return Err(sp_error(
                        1424,
                        b"HY000",
                        "Recursive stored functions and triggers are not allowed.".into(),
                    ));
                }
                RoutineKind::Procedure => {
                    let limit = self
                        .state
                        .get_var("max_sp_recursion_depth")
                        .ok()
                        .and_then(|v| v.to_display().parse::<usize>().ok())
                        .unwrap_or(0);
                    if already > limit {
                        // 1456 ER_SP_RECURSION_LIMIT.
                        return Err(sp_error(
                            1456,
                            b"HY000",
                            format!(
                                "Recursive limit {limit} (as set by the max_sp_recursion_depth variable) was exceeded for routine {}",
                                def.name
                            ),
                        ));
                    }
                }
            }
        }
        self.routines.stack.push(key);
        Ok(())
    }

    /// Runs a procedure with its parameters' values; returns their values at
    /// the end. Its result sets go to `out`.
    pub(super) fn call_procedure(
        &mut self,
        db: Option<&str>,
        name: &str,
        args: Vec<Value>,
        out: &mut Vec<QueryResult>,
    ) -> Result<Vec<Value>> {
        let db_name = match db {
            Some(d) => d.to_string(),
            None => self.state.db.clone().ok_or(Error::NoDatabaseSelected)?,
        };
        let cat = self.catalog();
        let def = cat
            .routine(&db_name, RoutineKind::Procedure, name)
            .cloned()
            .ok_or_else(|| missing_routine(RoutineKind::Procedure, &db_name, name))?;
        drop(cat);
        crate::parse::limits::with_statement_stack(|| self.run_procedure(&def, args, out))
    }

    fn run_procedure(
        &mut self,
        def: &Arc<RoutineDef>,
        args: Vec<Value>,
        out: &mut Vec<QueryResult>,
    ) -> Result<Vec<Value>> {
        let compiled = compiled(def)?;
        let (params, body) = (&compiled.params, &compiled.body);
        if params.len() != args.len() {
            return Err(wrong_arg_count(def, params.len(), args.len()));
        }
        self.enter(RoutineKind::Procedure, def)?;
        let saved_db = self.state.db.replace(def.db.clone());
        let r = (|| {
            let mut it = Interp::new(self, ProgramKind::Procedure);
            for (p, v) in params.iter().zip(args) {
                let ty = crate::ddl::define::sql_type(&p.ty).ok();
                it.param(&p.name, v, ty)?;
            }
            let r = it.run(body);
            out.append(&mut it.results);
            r?;
            Ok((0..params.len()).map(|i| it.param_value(i)).collect())
        })();
        self.state.db = saved_db;
        self.routines.stack.pop();
        r
    }

    /// Calls a stored function with its arguments' values.
    pub(super) fn call_function(
        &mut self,
        def: &Arc<RoutineDef>,
        args: Vec<Value>,
    ) -> Result<Value> {
        crate::parse::limits::with_statement_stack(|| self.run_function(def, args))
    }

    fn run_function(&mut self, def: &Arc<RoutineDef>, args: Vec<Value>) -> Result<Value> {
        let cat = self.catalog();
        self.state.check_db(&cat, &def.db, "EXECUTE", None)?;
        drop(cat);
        let compiled = compiled(def)?;
        let (params, body) = (&compiled.params, &compiled.body);
        if params.len() != args.len() {
            return Err(wrong_arg_count(def, params.len(), args.len()));
        }
        let returns = match def.returns_type {
            Some(t) => t,
            None => crate::ddl::define::sql_type(&psm::parse_type(&def.returns)?)?,
        };
        self.enter(RoutineKind::Function, def)?;
        let saved_db = self.state.db.replace(def.db.clone());
        let r = (|| {
            let mut it = Interp::new(self, ProgramKind::Function);
            for (p, v) in params.iter().zip(args) {
                let ty = crate::ddl::define::sql_type(&p.ty).ok();
                it.param(&p.name, v, ty)?;
            }
            match it.run(body)? {
                Flow::Return(v) => crate::types::coerce(v, returns, &def.name, 1),
                // 1321 ER_SP_NORETURNEND.
                _ => Err(sp_error(
                    1321,
                    b"2F005",
                    format!("FUNCTION {} ended without RETURN", def.name),
                )),
            }
        })();
        self.state.db = saved_db;
        self.routines.stack.pop();
        r
    }

    /// A CALL that must answer with one result (a prepared CALL): a
    /// procedure that sends result sets needs the text protocol here (1312,
    /// as MySQL answers a client without CLIENT_MULTI_RESULTS).
    #[inline(never)] // apart from the dispatcher's frame
    pub(super) fn run_call_one_result(
        &mut self,
        f: &ast::Function,
        params: &[Value],
    ) -> Result<QueryResult> {
        let mut out = self.run_call_statement(f, params);
        match (out.len(), out.pop()) {
            (1, Some(r)) | (_, Some(r @ Err(_))) => r,
            _ => Err(sp_error(
                1312,
                b"0A000",
                format!("PROCEDURE {f} can't return a result set in the given context"),
            )),
        }
    }

    /// The CALLs among a multi-statement text's statements: its result sets,
    /// then its OK or error (`None` for any other statement).
    #[inline(never)] // apart from the request's frame
    pub(super) fn run_call_in_text(&mut self, s: &Parsed) -> Option<Vec<Result<QueryResult>>> {
        let Parsed::Sql(st) = s else {
            return None;
        };
        let Statement::Call(f) = st.as_ref() else {
            return None;
        };
        self.state.warnings.clear();
        self.count(Counter::Questions);
        let results = self.run_call_statement(f, &[]);
        if let Some(Err(e)) = results.last() {
            self.record_error(e);
        }
        Some(results)
    }

    /// Whether `parsed` calls a stored function that
    /// [`Session::expand_stored_functions`] would replace (nothing is run).
    /// A prepared statement that does is planned at each execution, after
    /// the expansion, not once at PREPARE.
    pub(super) fn calls_stored_functions(&self, cat: &Catalog, parsed: &Parsed) -> bool {
        let Parsed::Sql(stmt) = parsed else {
            return false;
        };
        if !cat.has_functions() {
            return false;
        }
        let current = self.state.db.clone();
        ast::visit_expressions(stmt.as_ref(), |e| {
            if stored_call(cat, current.as_deref(), e).is_some() {
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        })
        .is_break()
    }

    /// Replaces each call of a stored function in `parsed` by its value (see
    /// the module doc); `None` when the statement calls none.
    #[inline(never)] // apart from the dispatcher's frame
    pub(super) fn expand_stored_functions(
        &mut self,
        cat: &Catalog,
        parsed: &Parsed,
    ) -> Result<Option<Parsed>> {
        let Parsed::Sql(stmt) = parsed else {
            return Ok(None);
        };
        if !cat.has_functions() {
            return Ok(None);
        }
        if !matches!(
            stmt.as_ref(),
            Statement::Query(_)
                | Statement::Insert(_)
                | Statement::Update(_)
                | Statement::Delete(_)
                | Statement::Set(_)
        ) {
            return Ok(None);
        }
        let current = self.state.db.clone();
        let any = ast::visit_expressions(stmt.as_ref(), |e| {
            if stored_call(cat, current.as_deref(), e).is_some() {
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        });
        if any.is_continue() {
            return Ok(None);
        }
        // The tree is visited bottom up, so a call in another's arguments is
        // replaced by its value first; each call runs once.
        let mut stmt = stmt.clone();
        let mut replaced = false;
        interp::keeping_names(stmt.as_mut(), |s| {
            let r = ast::visit_expressions_mut(s, |e| {
                let Some((def, args)) = stored_call(cat, current.as_deref(), e) else {
                    return ControlFlow::Continue(());
                };
                match self.evaluate_call(&def, &args) {
                    Ok(Some(v)) => {
                        *e = interp::literal(&v);
                        replaced = true;
                        ControlFlow::Continue(())
                    }
                    Ok(None) => ControlFlow::Continue(()),
                    Err(err) => ControlFlow::Break(err),
                }
            });
            match r {
                ControlFlow::Break(e) => Err(e),
                ControlFlow::Continue(()) => Ok(()),
            }
        })?;
        if !replaced {
            // Every call reads the row: the binder takes them.
            return Ok(None);
        }
        Ok(Some(Parsed::Sql(stmt)))
    }

    /// Evaluates a stored function's arguments, then calls it; `None` when
    /// an argument reads a column of the statement (the call is then bound
    /// and run per row: `crate::plan::bind_stored`).
    fn evaluate_call(&mut self, def: &Arc<RoutineDef>, args: &[Expr]) -> Result<Option<Value>> {
        crate::parse::limits::with_statement_stack(|| self.evaluate_call_here(def, args))
    }

    fn evaluate_call_here(
        &mut self,
        def: &Arc<RoutineDef>,
        args: &[Expr],
    ) -> Result<Option<Value>> {
        let mut values = Vec::with_capacity(args.len());
        for a in args {
            match self.eval_value(a) {
                Ok(v) => values.push(v),
                Err(Error::UnknownColumn { .. }) => return Ok(None),
                Err(e) => return Err(e),
            }
        }
        self.call_function(def, values).map(Some)
    }

    // ---- triggers -------------------------------------------------------------------

    fn create_trigger(&mut self, t: &psm::CreateTrigger) -> Result<QueryResult> {
        let db = match (&t.db, &t.table.0) {
            (Some(d), Some(td)) if d != td => {
                // 1435 ER_TRG_IN_WRONG_SCHEMA.
                return Err(sp_error(1435, b"HY000", "Trigger in wrong schema".into()));
            }
            (Some(d), _) | (None, Some(d)) => d.clone(),
            (None, None) => self.state.db.clone().ok_or(Error::NoDatabaseSelected)?,
        };
        let cat = self.catalog();
        let table = cat
            .table(&db, &t.table.1)
            .cloned()
            .ok_or_else(|| Error::UnknownTable {
                db: db.clone(),
                table: t.table.1.clone(),
            })?;
        self.state
            .check_db(&cat, &db, "TRIGGER", Some(&t.table.1))?;
        let body = psm::parse_body(&t.body_text)?;
        check_program(&body, false)?;
        check_no_commit(&body)?;
        let columns: Vec<String> = table.def.columns.iter().map(|c| c.name.clone()).collect();
        check_trigger_rows(&body, t.event, t.timing, &columns)?;
        self.commit()?;
        let def = TriggerDef {
            db: db.clone(),
            name: t.name.clone(),
            table: t.table.1.clone(),
            timing: t.timing,
            event: t.event,
            order: 0,
            body: t.body_text.clone(),
            definer: t.definer.clone().unwrap_or_else(|| self.current_definer()),
            sql_mode: self.sql_mode(),
            created: {
                // MySQL shows CREATED with two fractional digits.
                let mut t = chrono::Local::now()
                    .naive_local()
                    .format("%Y-%m-%d %H:%M:%S%.3f")
                    .to_string();
                t.pop();
                t
            },
        };
        let place = match &t.order {
            None => TriggerPlace::Last,
            Some((true, o)) => TriggerPlace::Follows(o.clone()),
            Some((false, o)) => TriggerPlace::Precedes(o.clone()),
        };
        if !self
            .state
            .engine
            .create_trigger(def, place, t.if_not_exists)?
        {
            self.note(1359, "Trigger already exists".into());
        }
        Ok(ok(0))
    }

    // ---- SHOW -----------------------------------------------------------------------

    fn show_create_program(
        &mut self,
        kind: ObjectKind,
        db: &Option<String>,
        name: &str,
    ) -> Result<QueryResult> {
        let db = self.routine_db(db)?;
        let cat = self.catalog();
        let db_coll = database_collation(&cat, &db);
        let charset = || {
            vec![
                Value::str("utf8mb4"),
                Value::str("utf8mb4_0900_ai_ci"),
                Value::str(db_coll),
            ]
        };
        match kind {
            ObjectKind::Routine(k) => {
                let def = cat
                    .routine(&db, k, name)
                    .ok_or_else(|| missing_routine(k, &db, name))?;
                let returns = match k {
                    RoutineKind::Function => format!(" RETURNS {}", def.returns),
                    RoutineKind::Procedure => String::new(),
                };
                let text = format!(
                    "CREATE DEFINER={} {} `{}`({}){}\n{}{}",
                    def.definer_sql(),
                    k.sql(),
                    def.name,
                    def.params,
                    returns,
                    def.characteristics_text(),
                    def.body
                );
                let label = match k {
                    RoutineKind::Procedure => ["Procedure", "Create Procedure"],
                    RoutineKind::Function => ["Function", "Create Function"],
                };
                let mut row = vec![
                    Value::str(&def.name),
                    Value::str(&def.sql_mode),
                    Value::str(&text),
                ];
                row.extend(charset());
                Ok(text_rows(
                    &[
                        label[0],
                        "sql_mode",
                        label[1],
                        "character_set_client",
                        "collation_connection",
                        "Database Collation",
                    ],
                    vec![row],
                ))
            }
            ObjectKind::Trigger => {
                let t = cat
                    .triggers
                    .get(&(db.clone(), name.to_string()))
                    .ok_or_else(missing_trigger)?;
                let text = format!(
                    "CREATE DEFINER={} TRIGGER `{}` {} {} ON `{}` FOR EACH ROW {}",
                    definer_sql(&t.definer),
                    t.name,
                    t.timing.sql(),
                    t.event.sql(),
                    t.table,
                    t.body
                );
                let mut row = vec![
                    Value::str(&t.name),
                    Value::str(&t.sql_mode),
                    Value::str(&text),
                ];
                row.extend(charset());
                row.push(Value::str(&t.created));
                Ok(text_rows(
                    &[
                        "Trigger",
                        "sql_mode",
                        "SQL Original Statement",
                        "character_set_client",
                        "collation_connection",
                        "Database Collation",
                        "Created",
                    ],
                    vec![row],
                ))
            }
        }
    }

    /// The rows for which a SHOW's WHERE holds (its column names read the
    /// row's values).
    fn show_where(
        &mut self,
        names: &[&str],
        rows: Vec<Vec<Value>>,
        filter: &Option<Expr>,
    ) -> Result<Vec<Vec<Value>>> {
        let Some(f) = filter else {
            return Ok(rows);
        };
        let mut out = Vec::new();
        for row in rows {
            let mut e = f.clone();
            let _ = ast::visit_expressions_mut(&mut e, |x| {
                if let Expr::Identifier(id) = x {
                    if let Some(i) = names.iter().position(|n| n.eq_ignore_ascii_case(&id.value)) {
                        *x = interp::literal(&row[i]);
                    }
                }
                ControlFlow::<()>::Continue(())
            });
            if self.eval_value(&e)?.truth() == Some(true) {
                out.push(row);
            }
        }
        Ok(out)
    }

    fn show_routine_status(
        &mut self,
        kind: RoutineKind,
        like: &Option<String>,
        filter: &Option<Expr>,
    ) -> Result<QueryResult> {
        let cat = self.catalog();
        let rows = cat
            .routines
            .values()
            .filter(|r| r.kind == kind && super::show::like_match(like, &r.name))
            .map(|r| {
                vec![
                    Value::str(&r.db),
                    Value::str(&r.name),
                    Value::str(kind.sql()),
                    Value::str(&r.definer),
                    Value::str(&r.modified),
                    Value::str(&r.created),
                    Value::str(if r.security_invoker {
                        "INVOKER"
                    } else {
                        "DEFINER"
                    }),
                    Value::str(&r.comment),
                    Value::str("utf8mb4"),
                    Value::str("utf8mb4_0900_ai_ci"),
                    Value::str(database_collation(&cat, &r.db)),
                ]
            })
            .collect();
        let names = super::show::SHOW_ROUTINE_STATUS;
        let rows = self.show_where(names, rows, filter)?;
        Ok(text_rows(names, rows))
    }

    fn show_triggers(
        &mut self,
        db: &Option<String>,
        like: &Option<String>,
        filter: &Option<Expr>,
    ) -> Result<QueryResult> {
        let db = self.routine_db(db)?;
        let cat = self.catalog();
        let mut list: Vec<&Arc<TriggerDef>> = cat
            .triggers
            .values()
            .filter(|t| t.db == db && super::show::like_match(like, &t.table))
            .collect();
        list.sort_by(|a, b| {
            (&a.table, a.event.sql(), a.timing.sql(), a.order).cmp(&(
                &b.table,
                b.event.sql(),
                b.timing.sql(),
                b.order,
            ))
        });
        let rows = list
            .into_iter()
            .map(|t| {
                vec![
                    Value::str(&t.name),
                    Value::str(t.event.sql()),
                    Value::str(&t.table),
                    Value::str(&t.body),
                    Value::str(t.timing.sql()),
                    Value::str(&t.created),
                    Value::str(&t.sql_mode),
                    Value::str(&t.definer),
                    Value::str("utf8mb4"),
                    Value::str("utf8mb4_0900_ai_ci"),
                    Value::str(database_collation(&cat, &t.db)),
                ]
            })
            .collect();
        let names = super::show::SHOW_TRIGGERS;
        let rows = self.show_where(names, rows, filter)?;
        Ok(text_rows(names, rows))
    }
}

/// `@name` as the user variable's (lower-case) name.
fn user_var_name(e: &Expr) -> Option<String> {
    match e {
        Expr::Identifier(id) if id.value.starts_with('@') && !id.value.starts_with("@@") => {
            Some(id.value[1..].to_ascii_lowercase())
        }
        _ => None,
    }
}

/// A call of a stored function: its definition and arguments. A builtin's
/// name is never a stored function's call (as in MySQL, unless qualified).
fn stored_call(
    cat: &Catalog,
    current: Option<&str>,
    e: &Expr,
) -> Option<(Arc<RoutineDef>, Vec<Expr>)> {
    let Expr::Function(f) = e else {
        return None;
    };
    let parts: Vec<String> = f
        .name
        .0
        .iter()
        .filter_map(|p| p.as_ident().map(|i| i.value.clone()))
        .collect();
    let (db, name) = match parts.as_slice() {
        [n] => {
            if crate::expr::functions::lookup(n).is_some() {
                return None;
            }
            (current?.to_string(), n.clone())
        }
        [d, n] => (d.clone(), n.clone()),
        _ => return None,
    };
    let def = cat.routine(&db, RoutineKind::Function, &name)?.clone();
    let args = match &f.args {
        ast::FunctionArguments::List(l) => l
            .args
            .iter()
            .map(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e.clone()),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()?,
        ast::FunctionArguments::None => Vec::new(),
        ast::FunctionArguments::Subquery(_) => return None,
    };
    Some((def, args))
}

pub(super) fn wrong_arg_count(def: &RoutineDef, expected: usize, got: usize) -> Error {
    // 1318 ER_SP_WRONG_NO_OF_ARGS.
    sp_error(
        1318,
        b"42000",
        format!(
            "Incorrect number of arguments for {} {}.{}; expected {expected}, got {got}",
            def.kind.sql(),
            def.db,
            def.name
        ),
    )
}

fn missing_trigger() -> Error {
    // 1360 ER_TRG_DOES_NOT_EXIST.
    sp_error(1360, b"HY000", "Trigger does not exist".into())
}

/// Checks made at CREATE: a function needs a RETURN, and neither a function
/// nor a trigger may hold transaction control or DDL (1422).
fn check_program(body: &Psm, function: bool) -> Result<()> {
    let mut has_return = false;
    let mut commits = false;
    walk(body, &mut |s| match s {
        Psm::Return(_) => has_return = true,
        Psm::Sql(p) => {
            if let Parsed::Sql(stmt) = p.as_ref() {
                commits |= implicit_commit(stmt);
            }
        }
        _ => {}
    });
    if function && !has_return {
        // 1320 ER_SP_NORETURN.
        return Err(sp_error(
            1320,
            b"42000",
            "No RETURN found in FUNCTION".into(),
        ));
    }
    if !function && has_return {
        // 1313 ER_SP_BADRETURN.
        return Err(sp_error(
            1313,
            b"42000",
            "RETURN is only allowed in a FUNCTION".into(),
        ));
    }
    if function && commits {
        return Err(commit_not_allowed());
    }
    Ok(())
}

/// 1422 ER_COMMIT_NOT_ALLOWED_IN_SF_OR_TRG.
pub(super) fn commit_not_allowed() -> Error {
    sp_error(
        1422,
        b"HY000",
        "Explicit or implicit commit is not allowed in stored function or trigger.".into(),
    )
}

/// A trigger may hold neither transaction control nor DDL (1422).
fn check_no_commit(body: &Psm) -> Result<()> {
    let mut commits = false;
    walk(body, &mut |s| {
        if let Psm::Sql(p) = s {
            if let Parsed::Sql(stmt) = p.as_ref() {
                commits |= implicit_commit(stmt);
            }
        }
    });
    if commits {
        return Err(commit_not_allowed());
    }
    Ok(())
}

/// Whether a statement commits (transaction control, DDL).
pub(super) fn implicit_commit(stmt: &Statement) -> bool {
    matches!(
        stmt,
        Statement::StartTransaction { .. }
            | Statement::Commit { .. }
            | Statement::Rollback { .. }
            | Statement::CreateTable(_)
            | Statement::AlterTable(_)
            | Statement::Drop { .. }
            | Statement::CreateIndex(_)
            | Statement::Truncate(_)
            | Statement::CreateDatabase { .. }
    )
}

/// Calls `f` on every statement of a body, handlers' included.
fn walk(s: &Psm, f: &mut dyn FnMut(&Psm)) {
    f(s);
    let lists: Vec<&[Psm]> = match s {
        Psm::Block { decls, body, .. } => {
            for d in decls {
                if let psm::Decl::Handler { body, .. } = d {
                    walk(body, f);
                }
            }
            vec![body]
        }
        Psm::If { arms, otherwise }
        | Psm::Case {
            arms, otherwise, ..
        } => {
            let mut v: Vec<&[Psm]> = arms.iter().map(|(_, l)| l.as_slice()).collect();
            if let Some(o) = otherwise {
                v.push(o);
            }
            v
        }
        Psm::Loop { body, .. } | Psm::While { body, .. } | Psm::Repeat { body, .. } => vec![body],
        _ => Vec::new(),
    };
    for l in lists {
        for s in l {
            walk(s, f);
        }
    }
}

/// Calls `f` on every expression tree of a statement of a body.
fn statement_exprs(s: &Psm, f: &mut dyn FnMut(&Expr)) {
    let visit_stmt = |stmt: &Statement, f: &mut dyn FnMut(&Expr)| {
        let _ = ast::visit_expressions(stmt, |e| {
            f(e);
            ControlFlow::<()>::Continue(())
        });
    };
    let visit_expr = |e: &Expr, f: &mut dyn FnMut(&Expr)| {
        let _ = ast::visit_expressions(e, |x| {
            f(x);
            ControlFlow::<()>::Continue(())
        });
    };
    match s {
        Psm::Sql(p) | Psm::SelectInto { query: p, .. } => {
            if let Parsed::Sql(stmt) = p.as_ref() {
                visit_stmt(stmt, f);
            }
        }
        Psm::If { arms, .. } => arms.iter().for_each(|(e, _)| visit_expr(e, f)),
        Psm::Case { operand, arms, .. } => {
            if let Some(o) = operand {
                visit_expr(o, f);
            }
            arms.iter().for_each(|(e, _)| visit_expr(e, f));
        }
        Psm::While { cond: e, .. } | Psm::Repeat { until: e, .. } | Psm::Return(e) => {
            visit_expr(e, f)
        }
        Psm::Set(assigns) => assigns.iter().for_each(|a| visit_expr(&a.value, f)),
        Psm::Signal { items, .. } => items.iter().for_each(|(_, e)| visit_expr(e, f)),
        Psm::Call { args, .. } => args.iter().for_each(|e| visit_expr(e, f)),
        Psm::Block { decls, .. } => {
            for d in decls {
                match d {
                    psm::Decl::Var {
                        default: Some(e), ..
                    } => visit_expr(e, f),
                    psm::Decl::Cursor { query, .. } => {
                        if let Parsed::Sql(stmt) = query.as_ref() {
                            visit_stmt(stmt, f);
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// A trigger's uses of NEW and OLD, checked at CREATE TRIGGER as MySQL
/// does: OLD in an INSERT trigger and NEW in a DELETE trigger are 1363, an
/// assignment to OLD or (in an AFTER trigger) to NEW is 1362, an unknown
/// column 1054.
fn check_trigger_rows(
    body: &Psm,
    event: TriggerEvent,
    timing: TriggerTiming,
    columns: &[String],
) -> Result<()> {
    let mut err: Option<Error> = None;
    let check = |which: &str, col: &str, err: &mut Option<Error>| {
        if err.is_some() {
            return;
        }
        let new = which.eq_ignore_ascii_case("NEW");
        let old = which.eq_ignore_ascii_case("OLD");
        if !new && !old {
            return;
        }
        if new && event == TriggerEvent::Delete {
            *err = Some(interp::no_new_row());
        } else if old && event == TriggerEvent::Insert {
            *err = Some(interp::no_old_row());
        } else if !columns.iter().any(|c| c.eq_ignore_ascii_case(col)) {
            *err = Some(Error::UnknownColumn {
                column: col.to_string(),
                context: which.to_uppercase(),
            });
        }
    };
    walk(body, &mut |s| {
        statement_exprs(s, &mut |e| {
            if let Expr::CompoundIdentifier(parts) = e {
                if parts.len() == 2 {
                    check(&parts[0].value, &parts[1].value, &mut err);
                }
            }
        });
        if let Psm::Set(assigns) = s {
            for a in assigns {
                if a.target.len() == 2 {
                    check(&a.target[0], &a.target[1], &mut err);
                    if err.is_none() {
                        if a.target[0].eq_ignore_ascii_case("OLD") {
                            err = Some(sp_error(
                                1362,
                                b"HY000",
                                "Updating of OLD row is not allowed in trigger".into(),
                            ));
                        } else if a.target[0].eq_ignore_ascii_case("NEW")
                            && timing == TriggerTiming::After
                        {
                            err = Some(sp_error(
                                1362,
                                b"HY000",
                                "Updating of NEW row is not allowed in after trigger".into(),
                            ));
                        }
                    }
                }
            }
        }
    });
    match err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// SHOW's "Database Collation" of a routine or trigger in `db`: the
/// database's default collation (MySQL records it when the object is
/// made; Canyon shows the current one). mariadb-dump wraps an object whose
/// value differs from the database's in ALTER DATABASE ... COLLATE, and
/// stops (exit 2, no message) when its client library does not know the
/// collation, as MariaDB 10.11's does not know utf8mb4_0900_ai_ci.
fn database_collation(cat: &Catalog, db: &str) -> &'static str {
    cat.databases
        .get(db)
        .map(|d| d.default_collation.name())
        .unwrap_or("utf8mb4_0900_ai_ci")
}
