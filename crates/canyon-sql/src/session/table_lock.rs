//! The session's side of table locks ([`crate::catalog::table_locks`] has
//! the rules and the essay): LOCK / UNLOCK TABLES, FLUSH TABLES [t, ...]
//! WITH READ LOCK, the gate every statement passes before it touches a
//! table, and the locking session's own rules, MySQL 8.0's:
//! - under LOCK TABLES a statement may use only the tables locked (1100
//!   ER_TABLE_NOT_LOCKED) and write only those locked WRITE (1099
//!   ER_TABLE_NOT_LOCKED_FOR_WRITE); TEMPORARY tables and
//!   information_schema are exempt;
//! - under FTWRL the holder's own writes fail with 1223
//!   (ER_CANT_UPDATE_WITH_READLOCK);
//! - LOCK TABLES commits the open transaction and releases the session's
//!   previous LOCK TABLES; START TRANSACTION releases LOCK TABLES locks (not
//!   FTWRL); UNLOCK TABLES commits only if LOCK TABLES locks were held (so
//!   mariadb-dump's `FTWRL; START TRANSACTION WITH CONSISTENT SNAPSHOT;
//!   UNLOCK TABLES` keeps its snapshot); FTWRL under LOCK TABLES is 1192.
//!
//! The gate runs once per outermost statement scope (`stmt_depth`): a CALL's
//! statements add to the intention of the CALL, which ends with it.

use super::state::*;
use crate::catalog::table_locks::{Locked, TableWait, Touch};
use crate::catalog::Table;
use crate::parse::lock_tables::LockTarget;
use crate::plan::Plan;
use crate::types::result::QueryResult;
use crate::types::value::Value;
use canyon_common::{Error, Result};
use canyon_txn::LockWait;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A wait the caller awaits before sending the request again (see
/// [`Session::set_async_lock_waits`]): for a row lock, or for a table lock
/// another session holds.
pub enum SessionLockWait {
    /// A row lock (canyon-txn's queue).
    Row(LockWait),
    /// A LOCK TABLES / FTWRL holder: ready when something changed; the
    /// statement, sent again, checks again.
    Table(TableWait),
}

impl SessionLockWait {
    /// Whether the wait is over (the row lock handed over; for a table lock,
    /// something changed since it began).
    pub fn is_granted(&self) -> bool {
        match self {
            SessionLockWait::Row(w) => w.is_granted(),
            SessionLockWait::Table(w) => w.is_granted(),
        }
    }

    /// When the wait times out (`None`: never).
    pub fn deadline(&self) -> Option<Instant> {
        match self {
            SessionLockWait::Row(w) => w.deadline(),
            SessionLockWait::Table(w) => w.deadline(),
        }
    }
}

impl std::future::Future for SessionLockWait {
    type Output = ();

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        match self.get_mut() {
            SessionLockWait::Row(w) => std::pin::Pin::new(w).poll(cx),
            SessionLockWait::Table(w) => std::pin::Pin::new(w).poll(cx),
        }
    }
}

fn sql_error(code: u16, message: String) -> Error {
    Error::Sql {
        code,
        sqlstate: *b"HY000",
        message,
    }
}

/// 1223: the holder of FTWRL writes.
fn read_lock_conflict() -> Error {
    sql_error(
        1223,
        "Can't execute the query because you have a conflicting read lock".into(),
    )
}

/// 1192: FTWRL under LOCK TABLES.
fn locked_tables_active() -> Error {
    sql_error(
        1192,
        "Can't execute the given command because you have active locked tables or an active transaction"
            .into(),
    )
}

fn shared(t: &Table) -> bool {
    !crate::catalog::temporary::is_temporary(t.def.id)
}

fn touch(t: &Table) -> Touch<'_> {
    Touch {
        id: t.def.id,
        db: &t.def.db,
        name: &t.def.name,
    }
}

/// The table a plan writes and, for a multi-table UPDATE / DELETE, the
/// targets.
fn write_parts(plan: &Plan) -> (Option<&Arc<Table>>, Option<&crate::plan::MultiTables>) {
    match plan {
        Plan::Select(_) => (None, None),
        Plan::Insert(i) => (Some(&i.table), None),
        Plan::Update(u) => (Some(&u.table), u.multi.as_deref()),
        Plan::Delete(d) => (Some(&d.table), d.multi.as_deref()),
    }
}

/// The shared (not TEMPORARY) tables a plan writes.
fn plan_writes(plan: &Plan) -> Vec<&Arc<Table>> {
    let (first, multi) = write_parts(plan);
    let mut out: Vec<&Arc<Table>> = first.into_iter().collect();
    if let Some(m) = multi {
        out.extend(m.targets.iter().map(|t| &t.table));
    }
    out.retain(|t| shared(t));
    out
}

impl Session {
    /// The deadline of a table lock wait beginning now: the session's
    /// `lock_wait_timeout` (MySQL's metadata lock timeout, not InnoDB's).
    fn table_lock_deadline(&self) -> Instant {
        let secs = match self.state.get_var("lock_wait_timeout") {
            Ok(Value::Int(n)) => n.max(0) as u64,
            Ok(Value::UInt(n)) => n,
            _ => 31_536_000,
        };
        let now = Instant::now();
        now.checked_add(Duration::from_secs(secs))
            .unwrap_or(now + Duration::from_secs(31_536_000))
    }

    /// An intention recorded outside a statement scope would never end (a
    /// pending lock would wait for it until its timeout).
    fn assert_in_statement(&self) {
        debug_assert!(
            self.stmt_depth > 0,
            "a table lock gate outside a statement scope (enter_statement)"
        );
    }

    /// Enters a statement scope (see the module doc); pair with
    /// [`Session::leave_statement`].
    pub(super) fn enter_statement(&mut self) {
        self.stmt_depth += 1;
    }

    /// Leaves a statement scope: the outermost one ends the statement's
    /// table intention.
    pub(super) fn leave_statement(&mut self) {
        self.stmt_depth = self.stmt_depth.saturating_sub(1);
        if self.stmt_depth == 0 {
            self.state
                .engine
                .table_locks
                .end_statement(&self.table_activity);
            self.pin
                .statement_ended(self.txn.as_ref().map_or(&[], |t| t.tables_written()));
        }
    }

    /// The gate of a DML statement (module doc of
    /// `crate::catalog::table_locks`): free while no session holds a table
    /// lock; otherwise the session's own rules, then a wait for conflicting
    /// holders.
    pub(super) fn gate_plan(&mut self, plan: &Plan) -> Result<()> {
        self.assert_in_statement();
        self.check_snapshot_tables(plan)?;
        // The fast path allocates nothing and writes no shared memory (not
        // even the registry's reference count).
        if self.state.locked_tables.is_none() && !self.state.global_read_lock {
            let locks = &self.state.engine.table_locks;
            let fast = match write_parts(plan) {
                (None, _) => locks.begin_fast(&self.table_activity, &[], false),
                (Some(t), None) if shared(t) => {
                    locks.begin_fast(&self.table_activity, &[t.def.id], true)
                }
                (Some(_), None) => locks.begin_fast(&self.table_activity, &[], false),
                (Some(_), Some(_)) => {
                    let writes = plan_writes(plan);
                    let ids: Vec<_> = writes.iter().map(|t| t.def.id).collect();
                    locks.begin_fast(&self.table_activity, &ids, !ids.is_empty())
                }
            };
            if fast {
                return Ok(());
            }
        }
        let writes = plan_writes(plan);
        let mut reads = Vec::new();
        plan.tables_read(&mut reads)?;
        reads.retain(|t| shared(t));
        self.check_own_locks(&reads, &writes)?;
        let reads: Vec<Touch<'_>> = reads.iter().map(|t| touch(t)).collect();
        let writes: Vec<Touch<'_>> = writes.iter().map(|t| touch(t)).collect();
        let global = !writes.is_empty();
        self.gate(&reads, &writes, &[], global)
    }

    /// 1412 ER_TABLE_DEF_CHANGED when the open transaction's snapshot is
    /// older than a table the plan uses has been stable
    /// ([`crate::catalog::TableDef::stable_since`]): a DDL no longer waits
    /// for a transaction that did not write its table (P3 of
    /// `crate::ddl::alter`), so such a transaction can meet a table rewritten
    /// since its snapshot, whose copied rows it cannot see. One load and
    /// compare when no table was rewritten since the snapshot. InnoDB fails
    /// such a read the same way. (A new index is checked where it is read:
    /// `crate::exec::check_index_ready`.)
    fn check_snapshot_tables(&self, plan: &Plan) -> Result<()> {
        let Some(snapshot) = self.txn.as_ref().and_then(|t| t.transaction_snapshot()) else {
            return Ok(());
        };
        if snapshot >= self.state.engine.newest_stable_since() {
            return Ok(());
        }
        let mut tables = Vec::new();
        plan.tables_read(&mut tables)?;
        let writes = plan_writes(plan);
        let changed = tables
            .iter()
            .chain(writes)
            .any(|t| t.def.stable_since > snapshot);
        if changed {
            return Err(crate::exec::table_def_changed());
        }
        Ok(())
    }

    /// The gate of LOAD DATA into `table`: a DML write. It blocks rather than
    /// answering LockWaitPending (a LOAD DATA LOCAL is in the middle of its
    /// exchange with the client when it gets here).
    pub(super) fn gate_load(&mut self, table: &Arc<Table>) -> Result<()> {
        if !shared(table) {
            return Ok(());
        }
        if self.state.locked_tables.is_none()
            && !self.state.global_read_lock
            && self
                .state
                .engine
                .table_locks
                .begin_fast(&self.table_activity, &[table.def.id], true)
        {
            return Ok(());
        }
        self.check_own_locks(&[], &[table])?;
        let defer = std::mem::replace(&mut self.defer_waits_now, false);
        let r = self.gate(&[], &[touch(table)], &[], true);
        self.defer_waits_now = defer;
        r
    }

    /// The gate of a DDL statement on `tables` (its global write intention
    /// alone when it names none that exist yet).
    pub(super) fn gate_ddl(&mut self, tables: &[Arc<Table>]) -> Result<()> {
        let tables: Vec<&Arc<Table>> = tables.iter().filter(|t| shared(t)).collect();
        if self.state.global_read_lock {
            return Err(read_lock_conflict());
        }
        if self.state.locked_tables.is_some() {
            self.check_own_locks(&[], &tables)?;
        }
        let writes: Vec<Touch<'_>> = tables.iter().map(|t| touch(t)).collect();
        self.gate(&[], &[], &writes, true)?;
        self.wait_for_prepared_branches(&tables)
    }

    /// DDL waits, up to `lock_wait_timeout` (1205) and interruptible by
    /// KILL, while a prepared XA branch has written to one of `tables`: its
    /// XA COMMIT must still succeed, into the table as the branch found it
    /// (MySQL keeps a prepared branch's metadata locks to the same end).
    /// Prepared branches are rare and short-lived, so a poll serves; DDL
    /// without them pays one registry lookup per table.
    fn wait_for_prepared_branches(&self, tables: &[&Arc<Table>]) -> Result<()> {
        let txn = &self.state.engine.txn;
        if !tables.iter().any(|t| txn.xa_prepared_writes_in(t.def.id)) {
            return Ok(());
        }
        let deadline = self.table_lock_deadline();
        let mut r = Ok(());
        let mut wait = || loop {
            if !tables.iter().any(|t| txn.xa_prepared_writes_in(t.def.id)) {
                return;
            }
            if self.state.process.kill_state() != 0 {
                r = Err(Error::Interrupted);
                return;
            }
            if Instant::now() >= deadline {
                r = Err(Error::LockWaitTimeout);
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        match self.state.engine.config.blocking_hook {
            Some(hook) => hook(&mut wait),
            None => wait(),
        }
        r
    }

    /// A COMMIT of a transaction with writes takes the global write
    /// intention (MySQL's COMMIT lock): it waits while another session holds
    /// FTWRL. Blocking (implicit commits happen inside other statements, which
    /// cannot be resumed half way); through the blocking hook.
    pub(super) fn gate_commit(&mut self) -> Result<()> {
        {
            let locks = &self.state.engine.table_locks;
            if !locks.txn_writes(&self.table_activity)
                || locks.begin_fast(&self.table_activity, &[], true)
            {
                return Ok(());
            }
        }
        let locks = self.state.engine.table_locks.clone();
        let deadline = self.table_lock_deadline();
        loop {
            match locks.try_begin(
                self.state.lock_owner(),
                &self.table_activity,
                &[],
                &[],
                &[],
                true,
            ) {
                Ok(()) => return Ok(()),
                Err(generation) => self.block_on_table_lock(generation, deadline)?,
            }
        }
    }

    /// Records the intention or waits for the holders in its way.
    fn gate(
        &mut self,
        reads: &[Touch<'_>],
        txn_writes: &[Touch<'_>],
        stmt_writes: &[Touch<'_>],
        global_write: bool,
    ) -> Result<()> {
        self.assert_in_statement();
        let locks = self.state.engine.table_locks.clone();
        let owner = self.state.lock_owner();
        loop {
            let generation = match locks.try_begin(
                owner,
                &self.table_activity,
                reads,
                txn_writes,
                stmt_writes,
                global_write,
            ) {
                Ok(()) => {
                    self.table_wait_deadline = None;
                    return Ok(());
                }
                Err(g) => g,
            };
            let deadline = match self.table_wait_deadline {
                Some(d) => d,
                None => *self.table_wait_deadline.insert(self.table_lock_deadline()),
            };
            if self.defer_waits_now && self.stmt_depth == 1 {
                // A one-statement request: the caller awaits the wait and
                // sends the request again (nothing of it has run yet).
                self.pending_table_wait = Some((generation, deadline));
                return Err(Error::LockWaitPending);
            }
            if let Err(e) = self.block_on_table_lock(generation, deadline) {
                self.table_wait_deadline = None;
                return Err(e);
            }
        }
    }

    /// Blocks (through the engine's blocking hook) until the table locks
    /// change, the deadline passes or a KILL comes.
    fn block_on_table_lock(&self, generation: u64, deadline: Instant) -> Result<()> {
        let locks = self.state.engine.table_locks.clone();
        let kill = self.state.process.kill_flag().clone();
        let mut r = Ok(());
        let mut wait = || r = locks.wait(generation, deadline, &kill);
        match self.state.engine.config.blocking_hook {
            Some(hook) => hook(&mut wait),
            None => wait(),
        }
        r
    }

    /// The table lock wait the last request stopped at, as an awaitable.
    pub(super) fn table_lock_wait(&self) -> Option<TableWait> {
        self.pending_table_wait.map(|(generation, deadline)| {
            self.state
                .engine
                .table_locks
                .wait_handle(generation, deadline)
        })
    }

    /// The locking session's own rules (module doc): 1223, 1100, 1099.
    fn check_own_locks(&self, reads: &[Arc<Table>], writes: &[&Arc<Table>]) -> Result<()> {
        if self.state.global_read_lock && !writes.is_empty() {
            return Err(read_lock_conflict());
        }
        let Some(held) = &self.state.locked_tables else {
            return Ok(());
        };
        // A locked view stands for the tables it reads, which Canyon does
        // not list: with one locked, unlisted tables may be read.
        let views = held.iter().any(|l| l.id.is_none());
        let find = |t: &Table| {
            held.iter()
                .filter(|l| l.names(t.def.id, &t.def.db, &t.def.name))
                .max_by_key(|l| l.write)
        };
        for t in reads {
            if find(t).is_none() && !views {
                return Err(sql_error(
                    1100,
                    format!("Table '{}' was not locked with LOCK TABLES", t.def.name),
                ));
            }
        }
        for t in writes {
            match find(t) {
                None => {
                    return Err(sql_error(
                        1100,
                        format!("Table '{}' was not locked with LOCK TABLES", t.def.name),
                    ))
                }
                Some(l) if !l.write => {
                    return Err(sql_error(
                        1099,
                        format!(
                            "Table '{}' was locked with a READ lock and can't be updated",
                            t.def.name
                        ),
                    ))
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// Releases the session's LOCK TABLES locks, if any (not FTWRL); true if
    /// there were some.
    pub(super) fn release_lock_tables(&mut self) -> bool {
        if self.state.locked_tables.take().is_none() {
            return false;
        }
        self.state
            .engine
            .table_locks
            .release(self.state.lock_owner(), false);
        true
    }

    /// LOCK TABLES: commits the open transaction, releases the session's
    /// previous locks, checks each table (1146, 1142), then waits until the
    /// locks can be granted (module doc of `crate::catalog::table_locks`).
    pub(super) fn lock_tables(
        &mut self,
        cat: &crate::catalog::Catalog,
        tables: &[LockTarget],
    ) -> Result<QueryResult> {
        if self.state.global_read_lock && tables.iter().any(|t| t.write) {
            return Err(read_lock_conflict());
        }
        self.commit()?;
        self.release_lock_tables();
        let mut locked = Vec::with_capacity(tables.len());
        for lt in tables {
            let (db, name) = match lt.table.as_slice() {
                [db, name] => (db.clone(), name),
                [name] => (
                    self.state.db.clone().ok_or(Error::NoDatabaseSelected)?,
                    name,
                ),
                _ => return Err(Error::Syntax(lt.table.join("."))),
            };
            // A view may be locked too (mariadb-dump locks every name).
            if !cat.name_taken(&db, name) {
                return Err(Error::UnknownTable {
                    db: db.clone(),
                    table: name.clone(),
                });
            }
            self.state.check_db(cat, &db, "SELECT", Some(name))?;
            let table = cat.table(&db, name);
            if table.is_some_and(|t| !shared(t)) {
                // A TEMPORARY table is the session's own: nothing to lock.
                continue;
            }
            locked.push(Locked {
                id: table.map(|t| t.def.id),
                db,
                name: name.clone(),
                write: lt.write,
            });
        }
        self.acquire_table_locks(false, locked.clone())?;
        self.state.locked_tables = Some(locked);
        Ok(ok(0))
    }

    /// Waits for a holder (through the blocking hook: LOCK TABLES and FTWRL
    /// are rare statements, and the wait is bounded by lock_wait_timeout and
    /// KILL).
    fn acquire_table_locks(&mut self, global: bool, tables: Vec<Locked>) -> Result<()> {
        let locks = self.state.engine.table_locks.clone();
        let owner = self.state.lock_owner();
        let deadline = self.table_lock_deadline();
        let kill = self.state.process.kill_flag().clone();
        let txn = &self.state.engine.txn;
        let mut tables = Some(tables);
        let mut r = Ok(());
        let mut wait = || {
            r = locks
                .acquire(
                    owner,
                    global,
                    tables.take().unwrap_or_default(),
                    deadline,
                    &kill,
                )
                // Invariant 1 and 3 of the registry: a writer's intention ends
                // when its commit is written, before that commit is visible
                // (the connection awaits durability after the statement), so
                // the granted lock waits for every written commit to become
                // visible — else a read under the lock could miss a commit
                // that a later read under it sees.
                .and_then(|()| {
                    txn.settle_written()
                        .inspect_err(|_| locks.release(owner, global))
                })
        };
        match self.state.engine.config.blocking_hook {
            Some(hook) => hook(&mut wait),
            None => wait(),
        }
        r
    }

    /// UNLOCK TABLES: commits and releases LOCK TABLES locks (the commit only
    /// if there were some, as MySQL), and releases FTWRL.
    pub(super) fn unlock_tables(&mut self) -> Result<QueryResult> {
        if self.state.locked_tables.is_some() {
            let r = self.commit();
            self.release_lock_tables();
            r?;
        }
        if std::mem::take(&mut self.state.global_read_lock) {
            self.state
                .engine
                .table_locks
                .release(self.state.lock_owner(), true);
        }
        Ok(ok(0))
    }

    /// FLUSH TABLES WITH READ LOCK (`tables` empty) or FLUSH TABLES t, ...
    /// WITH READ LOCK (READ locks on those tables, as LOCK TABLES takes
    /// them).
    pub(super) fn flush_tables_with_read_lock(
        &mut self,
        cat: &crate::catalog::Catalog,
        tables: &[Vec<String>],
    ) -> Result<QueryResult> {
        if self.state.locked_tables.is_some() {
            return Err(locked_tables_active());
        }
        if !tables.is_empty() {
            // MySQL: 1192 inside a transaction too; an explicit one only.
            if self.txn.is_some() && !self.state.autocommit {
                return Err(locked_tables_active());
            }
            let targets: Vec<LockTarget> = tables
                .iter()
                .map(|t| LockTarget {
                    table: t.clone(),
                    alias: None,
                    write: false,
                })
                .collect();
            return self.lock_tables(cat, &targets);
        }
        self.state.check_super(cat, "RELOAD")?;
        if self.state.global_read_lock {
            return Ok(ok(0));
        }
        // FLUSH commits implicitly.
        self.commit()?;
        self.acquire_table_locks(true, Vec::new())?;
        self.state.global_read_lock = true;
        Ok(ok(0))
    }
}

impl Session {
    /// The gate of a DDL statement: the existing tables it changes (DROP,
    /// ALTER, RENAME, TRUNCATE, CREATE / DROP INDEX), or none (CREATE TABLE,
    /// databases: the global write intention alone).
    pub(super) fn gate_ddl_statement(
        &mut self,
        cat: &crate::catalog::Catalog,
        stmt: &sqlparser::ast::Statement,
    ) -> Result<()> {
        use sqlparser::ast::{ObjectType, Statement};
        // TEMPORARY tables are the session's own (MySQL lets even FTWRL's
        // holder create and drop them).
        if matches!(stmt, Statement::CreateTable(ct) if ct.temporary)
            || matches!(
                stmt,
                Statement::Drop {
                    temporary: true,
                    ..
                }
            )
        {
            return Ok(());
        }
        let names: Vec<&sqlparser::ast::ObjectName> = match stmt {
            Statement::Drop {
                object_type: ObjectType::Table,
                names,
                ..
            } => names.iter().collect(),
            Statement::Drop {
                object_type: ObjectType::Index,
                table: Some(t),
                ..
            } => vec![t],
            Statement::AlterTable(a) => vec![&a.name],
            Statement::RenameTable(r) => r.iter().map(|r| &r.old_name).collect(),
            Statement::Truncate(t) => t.table_names.iter().map(|t| &t.name).collect(),
            Statement::CreateIndex(ci) => vec![&ci.table_name],
            _ => Vec::new(),
        };
        let names: Vec<Vec<String>> = names.into_iter().map(object_name).collect();
        self.gate_ddl_names(cat, &names)
    }

    /// [`Session::gate_ddl`] for tables named `[table]` or `[db, table]`
    /// (names that are no table are left to the DDL's own errors).
    pub(super) fn gate_ddl_names(
        &mut self,
        cat: &crate::catalog::Catalog,
        names: &[Vec<String>],
    ) -> Result<()> {
        let tables: Vec<Arc<Table>> = names
            .iter()
            .filter_map(|n| {
                let (db, name) = match n.as_slice() {
                    [db, name] => (db.as_str(), name.as_str()),
                    [name] => (self.state.db.as_deref()?, name.as_str()),
                    _ => return None,
                };
                cat.table(db, name).cloned()
            })
            .collect();
        self.gate_ddl(&tables)
    }
}
