//! Transactions: the autocommit and explicit-transaction rules of the
//! layer's essay, commits (deferred durability), lock waits, LOCK TABLES,
//! and running a DML plan inside a transaction.

use super::{context::*, dispatch::*, state::*};
use crate::catalog::status::Counter;
use crate::catalog::Catalog;
use crate::exec::{self, StatementEffects};
use crate::parse::lock_tables::LockTarget;
use crate::parse::Parsed;
use crate::plan::{self, LockMode, Plan, PlanContext};
use crate::types::result::QueryResult;
use crate::types::value::Value;
use canyon_common::{Error, Result};
use canyon_txn::{Committing, IsolationLevel, Transaction};
use sqlparser::ast::{self, Statement};
use std::sync::Arc;

impl Session {
    /// `sql_auto_is_null` (MySQL's, for ODBC programs): after an INSERT that
    /// generated an AUTO_INCREMENT value, the first SELECT from one table
    /// whose WHERE tests `auto_col IS NULL` (alone or in an AND) finds that
    /// row, reading the test as `auto_col = LAST_INSERT_ID()`; once, as MySQL
    /// (`substitute_null_with_insert_id`). `None`: the statement as it is.
    fn substitute_auto_is_null(&mut self, cat: &Catalog, stmt: &Statement) -> Option<Statement> {
        if !self.state.substitute_null_with_insert_id {
            return None;
        }
        let Statement::Query(q) = stmt else {
            return None;
        };
        let ast::SetExpr::Select(sel) = q.body.as_ref() else {
            return None;
        };
        let [from] = sel.from.as_slice() else {
            return None;
        };
        let ast::TableFactor::Table { name, .. } = &from.relation else {
            return None;
        };
        if !from.joins.is_empty() || sel.selection.is_none() {
            return None;
        }
        let (db, t) = self.split_name(name).ok()?;
        let table = cat.table(&db, &t)?;
        let auto = &table.def.columns[table.auto_increment_column()?];
        // A nullable AUTO_INCREMENT column keeps its IS NULL meaning, as
        // MariaDB 10.11 answers (its ai_sql_auto_is_null test file).
        if auto.nullable {
            return None;
        }
        let col = auto.name.clone();
        let id = self.state.last_insert_id.to_string();
        fn rewrite(e: &mut ast::Expr, col: &str, id: &str) -> bool {
            match e {
                ast::Expr::IsNull(inner) => {
                    let named = match inner.as_ref() {
                        ast::Expr::Identifier(i) => i.value.eq_ignore_ascii_case(col),
                        ast::Expr::CompoundIdentifier(p) => {
                            p.last().is_some_and(|i| i.value.eq_ignore_ascii_case(col))
                        }
                        _ => false,
                    };
                    if named {
                        *e = ast::Expr::BinaryOp {
                            left: inner.clone(),
                            op: ast::BinaryOperator::Eq,
                            right: Box::new(ast::Expr::value(ast::Value::Number(
                                id.to_string(),
                                false,
                            ))),
                        };
                    }
                    named
                }
                ast::Expr::BinaryOp {
                    left,
                    op: ast::BinaryOperator::And,
                    right,
                } => rewrite(left, col, id) | rewrite(right, col, id),
                ast::Expr::Nested(x) => rewrite(x, col, id),
                _ => false,
            }
        }
        let mut stmt = stmt.clone();
        let Statement::Query(q) = &mut stmt else {
            return None;
        };
        let ast::SetExpr::Select(sel) = q.body.as_mut() else {
            return None;
        };
        if !rewrite(sel.selection.as_mut()?, &col, &id) {
            return None;
        }
        self.state.substitute_null_with_insert_id = false;
        Some(stmt)
    }

    /// Plans SELECT/INSERT/UPDATE/DELETE; `None` for other statements.
    pub(super) fn plan_dml(&mut self, cat: &Arc<Catalog>, parsed: &Parsed) -> Result<Option<Plan>> {
        let Parsed::Sql(stmt) = parsed else {
            return Ok(None);
        };
        let substituted = self.substitute_auto_is_null(cat, stmt).map(Box::new);
        let stmt = substituted.as_ref().unwrap_or(stmt);
        let mut ctx = PlanContext::new(
            cat,
            self.state.db.as_deref(),
            self.state.connection_collation(),
        );
        ctx.kill = Some(self.state.process.kill_flag());
        ctx.blocking_hook = self.state.engine.config.blocking_hook;
        // A write through a view is planned on its base table (plan::view).
        let view_write = crate::plan::view::rewrite_dml(&ctx, stmt)?;
        if let Some((Statement::Insert(_) | Statement::Update(_), t)) = &view_write {
            if !t.check.is_empty() {
                // Text statements are checked by `view.rs` before this.
                return Err(Error::Unsupported(
                    "a prepared write through a view WITH CHECK OPTION".into(),
                ));
            }
        }
        let stmt: &Statement = view_write.as_ref().map_or(stmt.as_ref(), |(s, _)| s);
        let planned = match stmt {
            Statement::Query(q) => {
                crate::plan::select::plan_select(&ctx, q).map(|p| Plan::Select(Box::new(p)))
            }
            Statement::Insert(i) => plan::plan_insert(&ctx, i).map(Plan::Insert),
            Statement::Update(u) => plan::plan_update(&ctx, u).map(Plan::Update),
            Statement::Delete(d) => plan::plan_delete(&ctx, d).map(Plan::Delete),
            _ => return Ok(None),
        };
        let views = ctx.views_used.take();
        let mut plan = planned.map_err(|e| self.state.fill_account(e))?;
        // A write to a table with either side of a foreign key carries the
        // catalog it was planned on (crate::exec::foreign).
        match &mut plan {
            Plan::Insert(p) if cat.has_foreign_keys(&p.table) => p.fk = Some(cat.clone()),
            Plan::Update(p) if multi_targets(&p.multi).any(|t| cat.has_foreign_keys(t)) => {
                p.fk = Some(cat.clone())
            }
            Plan::Delete(p) if multi_targets(&p.multi).any(|t| cat.has_foreign_keys(t)) => {
                p.fk = Some(cat.clone())
            }
            Plan::Update(p) if cat.has_foreign_keys(&p.table) => p.fk = Some(cat.clone()),
            Plan::Delete(p) if cat.has_foreign_keys(&p.table) => p.fk = Some(cat.clone()),
            _ => {}
        }
        // Privileges: the account must hold a grant on the database of the
        // written table (for the statement's command) and of every table read
        // (SELECT), including those of joins, derived tables and subqueries.
        let (written, command) = match &plan {
            Plan::Select(_) => (None, "SELECT"),
            Plan::Insert(i) => (Some(&i.table), "INSERT"),
            Plan::Update(u) => (Some(&u.table), "UPDATE"),
            Plan::Delete(d) => (Some(&d.table), "DELETE"),
        };
        match (written, &view_write) {
            (Some(t), Some((_, target))) => self.check_view_write(cat, target, command, t)?,
            (Some(t), None) => self
                .state
                .check_db(cat, &t.def.db, command, Some(&t.def.name))?,
            (None, _) => {}
        }
        // The other targets of a multi-table UPDATE / DELETE.
        let multi = match &plan {
            Plan::Update(u) => u.multi.as_ref(),
            Plan::Delete(d) => d.multi.as_ref(),
            _ => None,
        };
        for t in multi.iter().flat_map(|m| m.targets.iter().skip(1)) {
            self.state
                .check_db(cat, &t.table.def.db, command, Some(&t.table.def.name))?;
        }
        let mut read = Vec::new();
        plan.tables_read(&mut read)?;
        // Views: SELECT on the view, and its base tables for its definer.
        if !views.is_empty() {
            self.check_views_read(cat, &views, &mut read)?;
        }
        for t in read {
            self.state
                .check_db(cat, &t.def.db, "SELECT", Some(&t.def.name))?;
        }
        Ok(Some(plan))
    }

    /// Runs a statement inside the session's transaction rules. A `write` (a
    /// change of a table that is not TEMPORARY) fails with 1290 on a server
    /// that is read-only for this session (`super::read_only`, the one place
    /// data changes are refused), and with 1792 in a READ ONLY transaction
    /// (also the implicit one of an autocommitted statement under
    /// `transaction_read_only = 1`), as in MySQL, and is rolled back like any
    /// failed statement.
    pub(super) fn with_txn<T>(
        &mut self,
        params: &[Value],
        write: bool,
        deadline: Option<std::time::Instant>,
        f: impl FnOnce(&mut Transaction, &StmtCtx<'_>) -> Result<T>,
    ) -> Result<T> {
        self.xa_check_statement()?;
        let single =
            (self.txn.is_none() && self.state.autocommit) || std::mem::take(&mut self.implicit_txn);
        if self.txn.is_none() {
            let iso = self
                .state
                .next_isolation
                .take()
                .unwrap_or(self.state.isolation);
            let mut t = self.txn_session.begin(iso);
            t.set_lock_wait_timeout(self.state.lock_wait_timeout);
            t.set_interrupt(Some(self.state.process.kill_flag().clone()));
            self.state.journal(&mut t);
            self.txn = Some(t);
            self.state.txn_read_only = self
                .state
                .next_read_only
                .take()
                .unwrap_or(self.state.read_only);
        }
        let refuse = match write {
            false => None,
            true => self.read_only_refusal().or_else(|| {
                self.state
                    .txn_read_only
                    .then_some(Error::ReadOnlyTransaction)
            }),
        };
        let txn = self.txn.as_mut().expect("a transaction was opened above");
        txn.begin_statement();
        txn.set_deferred_lock_waits(self.defer_waits_now);
        let var_writes = VarWrites::default();
        let (r, warnings) = {
            let mut ctx = StmtCtx::new(&self.state, params);
            ctx.deadline = deadline;
            ctx.var_writes = Some(&var_writes);
            let r = match refuse {
                Some(e) => Err(e),
                None => f(txn, &ctx),
            };
            (r, ctx.warnings.into_inner())
        };
        // `SET @x` in the statement's triggers (kept whether it succeeds).
        self.state.user_vars.extend(var_writes.into_inner());
        for (code, msg) in warnings {
            let (level, code) = crate::expr::eval::warning_level(code);
            self.state.warnings.push((level, code, msg));
        }
        match r {
            Ok(v) => {
                if single {
                    let t = self
                        .txn
                        .take()
                        .expect("the statement's transaction is open");
                    self.count(Counter::HandlerCommit);
                    self.commit_txn(t, true)?;
                }
                Ok(v)
            }
            Err(Error::LockWaitPending) => {
                // Queued for a row lock: undo what the statement did, keep the
                // transaction (an autocommit statement's too) for the rerun.
                if let Some(t) = self.txn.as_mut() {
                    t.rollback_statement();
                }
                self.implicit_txn = single;
                Err(Error::LockWaitPending)
            }
            Err(e) => {
                if single || e.rolls_back_transaction() {
                    if let Some(t) = self.txn.take() {
                        self.count(Counter::HandlerRollback);
                        t.rollback();
                    }
                } else if let Some(t) = self.txn.as_mut() {
                    t.rollback_statement();
                }
                Err(e)
            }
        }
    }

    /// Runs a SELECT plan (measured into `profile` for EXPLAIN ANALYZE).
    /// `serializable_lock`: a SERIALIZABLE transaction's plain SELECTs lock.
    pub(super) fn run_select_plan(
        &mut self,
        s: &crate::plan::select::SelectPlan,
        params: &[Value],
        serializable_lock: bool,
        profile: Option<&crate::plan::profile::Profile>,
    ) -> Result<QueryResult> {
        fn run(
            s: &crate::plan::select::SelectPlan,
            txn: Option<&mut Transaction>,
            ctx: &StmtCtx<'_>,
            force_lock: bool,
            profile: Option<&crate::plan::profile::Profile>,
        ) -> Result<QueryResult> {
            match profile {
                Some(p) => crate::exec::select::run_select_analyzed(s, txn, ctx, force_lock, p),
                None => crate::exec::select::run_select(s, txn, ctx, force_lock),
            }
        }
        if !crate::exec::select::needs_transaction(s) {
            let var_writes = VarWrites::default();
            let (r, warnings) = {
                let mut ctx = StmtCtx::new(&self.state, params);
                ctx.deadline = self.state.select_deadline();
                ctx.var_writes = Some(&var_writes);
                let r = run(s, None, &ctx, false, profile);
                (r, ctx.warnings.into_inner())
            };
            // `SELECT @v := ...`.
            self.state.user_vars.extend(var_writes.into_inner());
            for (code, msg) in warnings {
                let (level, code) = crate::expr::eval::warning_level(code);
                self.state.warnings.push((level, code, msg));
            }
            return r;
        }
        self.with_txn(params, false, self.state.select_deadline(), |txn, ctx| {
            // InnoDB: under SERIALIZABLE, plain SELECTs in a multi-statement
            // transaction are locking reads. (Joins and subqueries read
            // their snapshot: see docs/architecture/transactions.md.)
            let force_lock = txn.isolation() == IsolationLevel::Serializable
                && serializable_lock
                && s.lock == LockMode::None;
            run(s, Some(txn), ctx, force_lock, profile)
        })
    }

    pub(super) fn run_plan(&mut self, plan: &Plan, params: &[Value]) -> Result<QueryResult> {
        // A read-only server refuses the write before the table-lock gate
        // records its intention (which COMMIT's check reads: see
        // `super::read_only`); `with_txn` checks again, for the data changes
        // that come through no plan.
        if writes(plan) {
            self.check_read_only_write()?;
        }
        // Table locks (LOCK TABLES, FTWRL): free while nobody holds one.
        self.gate_plan(plan)?;
        let serializable_lock = !self.state.autocommit || self.txn.is_some();
        let found_rows = self.state.client_found_rows;
        let mut effects = StatementEffects::default();
        let warned = self.state.warnings.len();
        let result = match plan {
            Plan::Select(s) => self.run_select_plan(s, params, serializable_lock, None),
            // Strict mode: the statement fails (and its writes roll back) on
            // a warning the mode makes an error; INSERT IGNORE keeps them
            // warnings.
            Plan::Insert(i) => self.with_txn(params, writes(plan), None, |txn, ctx| {
                let r = exec::run_insert(i, txn, ctx, &mut effects, found_rows)?;
                match ctx.strict_mode_error() {
                    Some(e) if !i.ignore => Err(e),
                    _ => Ok(r),
                }
            }),
            Plan::Update(u) => self.with_txn(params, writes(plan), None, |txn, ctx| {
                let r = exec::run_update(u, txn, ctx, found_rows, &mut effects)?;
                match ctx.strict_mode_error() {
                    Some(e) if !u.ignore => Err(e),
                    _ => Ok(r),
                }
            }),
            Plan::Delete(d) => self.with_txn(params, writes(plan), None, |txn, ctx| {
                let r = exec::run_delete(d, txn, ctx)?;
                match ctx.strict_mode_error() {
                    Some(e) if !d.ignore => Err(e),
                    _ => Ok(r),
                }
            }),
        };
        if matches!(plan, Plan::Insert(_)) {
            // SET insert_id applies to one INSERT (MySQL resets it after).
            self.state.vars.remove("insert_id");
        }
        let result = match plan {
            Plan::Insert(i) => self.present_incorrect_value(warned, &i.table.def, result),
            Plan::Update(u) => self.present_incorrect_value(warned, &u.table.def, result),
            _ => result,
        };
        let result = result?;
        if let Some(id) = effects.generated_id {
            self.state.last_insert_id = id;
            // Decided here, once per INSERT, so that SELECTs pay nothing while
            // sql_auto_is_null is off (a SET sql_auto_is_null = 1 after the
            // INSERT takes effect from the next INSERT).
            self.state.substitute_null_with_insert_id = self
                .state
                .get_var("sql_auto_is_null")
                .is_ok_and(|v| v.to_i64() == Some(1));
        }
        // MariaDB's UPDATE IGNORE skips a row that would duplicate a key
        // without a warning (MySQL 8 warns 1062, as both do for INSERT IGNORE).
        let silent_duplicates = matches!(plan, Plan::Update(_))
            && self.state.engine.config().presentation
                == crate::catalog::config::Presentation::Mariadb;
        for (code, msg) in effects.warnings {
            if code == 1062 && silent_duplicates {
                continue;
            }
            let (level, code) = crate::expr::eval::warning_level(code);
            self.state.warnings.push((level, code, msg));
        }
        match &result {
            QueryResult::Ok { affected_rows, .. } => self.state.row_count = *affected_rows as i64,
            QueryResult::Rows { rows, .. } => {
                self.state.row_count = -1;
                self.state.found_rows = rows.len() as u64;
            }
        }
        if let QueryResult::Ok { affected_rows, .. } = &result {
            // Statistics upkeep (crate::catalog::stats): one atomic add on the table's
            // own counters; an analysis, when due, runs in the background.
            let n = *affected_rows;
            let (table, due) = match plan {
                Plan::Insert(i) => (&i.table, i.table.stats.note_changes(n, 0, 0)),
                // An UPDATE that assigns no key column leaves every n_diff as it
                // was: it is no reason to analyse the table again.
                Plan::Update(u) => {
                    let changed = if u.assigns_key_column() { n } else { 0 };
                    (&u.table, u.table.stats.note_changes(0, 0, changed))
                }
                Plan::Delete(d) => (&d.table, d.table.stats.note_changes(0, n, 0)),
                Plan::Select(_) => return Ok(result),
            };
            if let Some(delay) = due {
                self.state.engine.spawn_analysis(table.clone(), delay);
            }
        }
        Ok(result)
    }

    /// Ends the open transaction (BEGIN, and the implicit commit of DDL),
    /// durably, and releases the catalog pin: a DDL must not wait for itself.
    pub(super) fn commit(&mut self) -> Result<()> {
        self.commit_open(false)
    }

    /// [`Session::commit`]; with `deferrable`, the statement ends with it (COMMIT)
    /// and its durability wait may be left to the caller.
    pub(super) fn commit_open(&mut self, deferrable: bool) -> Result<()> {
        // COMMIT, BEGIN and every implicit commit inside an XA branch: 1399.
        self.xa_check_end()?;
        if self.txn.is_none() {
            self.unpin();
            return Ok(());
        }
        // MySQL's COMMIT lock: a transaction with writes waits while another
        // session holds FTWRL, and FTWRL waits for the commit. Its intention
        // lasts the statement (a scope of its own when called between
        // statements).
        self.enter_statement();
        let r = self
            .check_read_only_commit()
            .and_then(|()| self.gate_commit())
            .and_then(|()| {
                let t = self.txn.take().expect("checked above");
                self.count(Counter::HandlerCommit);
                self.commit_txn(t, deferrable)
            });
        // (A commit that waited in vain leaves the transaction open.)
        self.unpin_if_idle();
        self.leave_statement();
        r
    }

    /// Commits `t`: writes it, then waits until it is durable — or, when the
    /// statement ends with this commit and the caller asked for deferred
    /// durability, leaves that wait in `pending_commit`.
    pub(super) fn commit_txn(&mut self, mut t: Transaction, deferrable: bool) -> Result<()> {
        // The binary log's record travels in the commit batch (crate::binlog).
        self.attach_log(&mut t)?;
        let logged = t.has_log_entry();
        let c = t.commit_deferred()?;
        if logged {
            self.note_logged(c.ts());
        }
        if deferrable && self.defer_durability && !c.is_done() {
            debug_assert!(self.pending_commit.is_none(), "settled at every entry");
            self.pending_commit = Some(c);
            Ok(())
        } else {
            c.wait()
        }
    }

    /// Waits (blocking) for a pending commit the caller did not take.
    pub(super) fn settle(&mut self) -> Result<()> {
        match self.pending_commit.take() {
            Some(c) => c.wait(),
            None => Ok(()),
        }
    }

    /// Deferred durability: a COMMIT or autocommitted statement that ends a
    /// request leaves its wait for durability to the caller, who must take it
    /// with [`Session::take_pending_commit`] and await it before answering (see
    /// the module doc). Off by default: every commit waits in place.
    pub fn set_deferred_durability(&mut self, on: bool) {
        self.defer_durability = on;
    }

    /// The commit the last request wrote but did not wait for, if any. The
    /// request's result may be sent only once it is durable; if it fails, the
    /// request fails with its error. Not taken, the next request waits for it.
    pub fn take_pending_commit(&mut self) -> Option<Committing> {
        self.pending_commit.take()
    }

    /// Asynchronous row lock waits. With `on`, a single-statement request
    /// ([`Session::execute`] of one statement, [`Session::execute_prepared`])
    /// that must wait for a row lock does not block: it fails with
    /// [`Error::LockWaitPending`] — the statement rolled back, its transaction
    /// (even an autocommit statement's) kept open and queued for the lock.
    /// The caller then awaits [`Session::lock_wait`] (and a KILL: the kill
    /// hook wakes it, [`Session::interrupted`] tells), calls
    /// [`Session::end_lock_wait`],
    /// and on `Ok` sends the same request again; the statement runs again with
    /// the lock its own, counted and timed as one statement. A
    /// multi-statement request still blocks. Off by default.
    pub fn set_async_lock_waits(&mut self, on: bool) {
        self.async_lock_waits = on;
    }

    /// The row lock wait the last request stopped at (see
    /// [`Session::set_async_lock_waits`]).
    pub fn lock_wait(&self) -> Option<super::table_lock::SessionLockWait> {
        use super::table_lock::SessionLockWait;
        if let Some(w) = self.table_lock_wait() {
            return Some(SessionLockWait::Table(w));
        }
        self.txn
            .as_ref()
            .and_then(|t| t.lock_wait())
            .map(SessionLockWait::Row)
    }

    /// Whether KILL QUERY or KILL CONNECTION asked this session to stop.
    pub fn interrupted(&self) -> bool {
        self.state.process.kill_state() != 0
    }

    /// Ends the row lock wait of the last request: `give_up` `None` once
    /// [`Session::lock_wait`] has resolved — `Ok`, and the caller sends the
    /// request again. `Some(e)` when the wait timed out
    /// ([`Error::LockWaitTimeout`]) or was killed ([`Error::Interrupted`]): the
    /// statement fails with `e` as if it had blocked (an autocommit
    /// statement's transaction rolls back, an explicit one stays open) — or,
    /// if the lock was handed over meanwhile, `Ok` as above.
    pub fn end_lock_wait(&mut self, give_up: Option<Error>) -> Result<()> {
        self.state.io.get_mut().wait_ends();
        let r = if self.pending_table_wait.take().is_some() {
            // A table lock wait: nothing is queued; the request, sent again,
            // checks again.
            match give_up {
                Some(e) => {
                    self.table_wait_deadline = None;
                    Err(e)
                }
                None => Ok(()),
            }
        } else {
            match self.txn.as_mut() {
                Some(t) => t.end_lock_wait(give_up),
                None => Ok(()),
            }
        };
        if let Err(e) = &r {
            if std::mem::take(&mut self.implicit_txn) {
                if let Some(t) = self.txn.take() {
                    self.count(Counter::HandlerRollback);
                    t.rollback();
                }
            }
            self.unpin_if_idle();
            self.record_error(e);
            if let Some(start) = self.lock_retry.take() {
                self.end_statement(start, (0, 0));
            }
        }
        r
    }
}

pub(super) fn map_isolation(l: &ast::TransactionIsolationLevel) -> IsolationLevel {
    match l {
        ast::TransactionIsolationLevel::ReadUncommitted => IsolationLevel::ReadUncommitted,
        ast::TransactionIsolationLevel::ReadCommitted => IsolationLevel::ReadCommitted,
        ast::TransactionIsolationLevel::RepeatableRead => IsolationLevel::RepeatableRead,
        _ => IsolationLevel::Serializable,
    }
}

impl Session {
    /// Transaction control: START TRANSACTION / BEGIN, COMMIT, ROLLBACK,
    /// savepoints, LOCK / UNLOCK TABLES.
    pub(super) fn run_transaction_statement(
        &mut self,
        cat: &Arc<Catalog>,
        stmt: &Statement,
        params: &[Value],
        sql: &str,
    ) -> Result<QueryResult> {
        match stmt {
            Statement::StartTransaction { modes, .. } => {
                self.commit()?;
                // MySQL: beginning a transaction releases LOCK TABLES locks
                // (not FTWRL).
                self.release_lock_tables();
                let mut iso = self
                    .state
                    .next_isolation
                    .take()
                    .unwrap_or(self.state.isolation);
                let mut read_only = self
                    .state
                    .next_read_only
                    .take()
                    .unwrap_or(self.state.read_only);
                for m in modes {
                    match m {
                        ast::TransactionMode::IsolationLevel(l) => iso = map_isolation(l),
                        ast::TransactionMode::AccessMode(a) => {
                            read_only = matches!(a, ast::TransactionAccessMode::ReadOnly)
                        }
                    }
                }
                self.state.txn_read_only = read_only;
                let mut t = self.txn_session.begin(iso);
                t.set_lock_wait_timeout(self.state.lock_wait_timeout);
                t.set_interrupt(Some(self.state.process.kill_flag().clone()));
                self.state.journal(&mut t);
                if sql.to_ascii_uppercase().contains("CONSISTENT SNAPSHOT") {
                    // Snapshots are taken lazily, at the first read; this one
                    // is taken now, as MySQL does.
                    t.begin_statement();
                    let ts = t.snapshot_ts()?;
                    self.note_binlog_snapshot(ts)?;
                } else {
                    self.state.binlog_snapshot = None;
                }
                self.txn = Some(t);
                Ok(ok(0))
            }
            Statement::Commit { chain: false, .. } => {
                self.commit_open(true)?;
                Ok(ok(0))
            }
            Statement::Rollback {
                chain: false,
                savepoint: None,
            } => {
                self.xa_check_end()?;
                if let Some(t) = self.txn.take() {
                    self.count(Counter::HandlerRollback);
                    t.rollback();
                }
                Ok(ok(0))
            }
            Statement::Savepoint { name } => {
                // With autocommit and no open transaction a savepoint marks
                // nothing (MySQL accepts it); with autocommit=0 the
                // transaction starts here.
                if self.txn.is_none() && !self.state.autocommit {
                    self.with_txn(params, false, None, |_, _| Ok(()))?;
                }
                if let Some(t) = self.txn.as_mut() {
                    t.set_savepoint(&name.value);
                }
                Ok(ok(0))
            }
            Statement::Rollback {
                chain: false,
                savepoint: Some(name),
            } => {
                let done = self
                    .txn
                    .as_mut()
                    .is_some_and(|t| t.rollback_to_savepoint(&name.value));
                if done {
                    Ok(ok(0))
                } else {
                    Err(Error::NoSuchSavepoint(name.value.clone()))
                }
            }
            Statement::ReleaseSavepoint { name } => {
                let done = self
                    .txn
                    .as_mut()
                    .is_some_and(|t| t.release_savepoint(&name.value));
                if done {
                    Ok(ok(0))
                } else {
                    Err(Error::NoSuchSavepoint(name.value.clone()))
                }
            }
            Statement::LockTables { tables } => {
                let tables: Vec<LockTarget> = tables
                    .iter()
                    .map(|t| LockTarget {
                        table: vec![t.table.value.clone()],
                        alias: t.alias.as_ref().map(|a| a.value.clone()),
                        write: !matches!(t.lock_type, ast::LockTableType::Read { .. }),
                    })
                    .collect();
                self.lock_tables(cat, &tables)
            }
            Statement::UnlockTables => self.unlock_tables(),
            other => Err(Error::Unsupported(statement_kind(other))),
        }
    }
}

/// Whether a data change plan counts as a write for READ ONLY transactions
/// (1792) and a read-only server (1290): not when every table it writes (a
/// multi-table UPDATE / DELETE: every target) is TEMPORARY, which MySQL
/// lets both change ("it remains possible to change tables created with
/// the TEMPORARY keyword using DML statements").
fn writes(plan: &Plan) -> bool {
    let shared = |t: &crate::catalog::Table| !crate::catalog::temporary::is_temporary(t.def.id);
    match plan {
        Plan::Select(_) => false,
        Plan::Insert(i) => shared(&i.table),
        Plan::Update(u) => shared(&u.table) || multi_targets(&u.multi).any(|t| shared(t)),
        Plan::Delete(d) => shared(&d.table) || multi_targets(&d.multi).any(|t| shared(t)),
    }
}

/// The tables a multi-table UPDATE / DELETE writes (none for a
/// single-table one).
fn multi_targets(
    m: &Option<Box<crate::plan::MultiTables>>,
) -> impl Iterator<Item = &Arc<crate::catalog::Table>> {
    m.iter().flat_map(|m| m.targets.iter().map(|t| &t.table))
}

impl Session {
    /// MariaDB names the column of 1366 "Incorrect integer value: 'a' for
    /// column `db`.`t`.`c` at row 1" by database and table, MySQL 8 as
    /// 'c': under `presentation = "mariadb"` the warnings this INSERT /
    /// UPDATE raised (from `warned` on) and its strict-mode error read as
    /// MariaDB's.
    fn present_incorrect_value(
        &mut self,
        warned: usize,
        def: &crate::catalog::TableDef,
        result: Result<QueryResult>,
    ) -> Result<QueryResult> {
        use crate::catalog::config::Presentation;
        if self.state.engine.config().presentation != Presentation::Mariadb {
            return result;
        }
        let present = |message: &mut String| {
            if !message.starts_with("Incorrect ") {
                return;
            }
            let Some(at) = message.rfind(" for column '") else {
                return;
            };
            let rest = &message[at + " for column '".len()..];
            let Some(end) = rest.find("' at row ") else {
                return;
            };
            let named = format!(
                " for column `{}`.`{}`.`{}`{}",
                def.db,
                def.name,
                &rest[..end],
                &rest[end + 1..]
            );
            message.replace_range(at.., &named);
        };
        for w in self.state.warnings.iter_mut().skip(warned) {
            if w.1 == 1366 {
                present(&mut w.2);
            }
        }
        result.map_err(|e| match e {
            Error::StrictModeError {
                code: 1366,
                mut message,
            } => {
                present(&mut message);
                Error::StrictModeError {
                    code: 1366,
                    message,
                }
            }
            e => e,
        })
    }
}
