//! `read_only` and `super_read_only`: which statements a read-only server
//! refuses, from whom, and where that is checked. The level itself is the
//! engine's ([`crate::catalog::read_only`]).
//!
//! # The contract
//! MySQL 8's (`check_readonly` and `deny_updates_if_read_only_option` in
//! sql_parse.cc, the read-only check of `ha_commit_trans`; manual, 7.1.8
//! "read_only"). A refusal is ER_OPTION_PREVENTS_STATEMENT, 1290, SQLSTATE
//! HY000, "The MySQL server is running with the --read-only option so it
//! cannot execute this statement" (`--super-read-only` once that is on).
//!
//! 1. **Who is refused** ([`Session::read_only_refusal`]): nobody while the
//!    level is off; never the replica's applier (the "system user" session,
//!    `State::system`: MySQL's replication threads are always exempt); under
//!    `read_only` an account without SUPER (MySQL: SUPER or
//!    CONNECTION_ADMIN; Canyon has SUPER alone); under `super_read_only`
//!    every client account.
//! 2. **What is refused**:
//!    - a data change of a table that is not TEMPORARY: INSERT, REPLACE,
//!      UPDATE, DELETE (multi-table forms: any target), LOAD DATA, the rows
//!      of a `BINLOG '...'` statement. Checked in `Session::with_txn`, the
//!      one door every data change goes through, on the same `write` flag
//!      that gives a READ ONLY transaction 1792 — and before it: MySQL's
//!      statement check comes first. So a prepared statement, a statement
//!      of a stored procedure and a write through a view are covered alike.
//!      A plan (`run_plan`) and LOAD DATA are checked once more before
//!      their table-lock gate, which records the transaction's write
//!      intentions that the COMMIT rule reads: a refused write leaves none;
//!    - DDL ([`Session::check_read_only_statement`], at the top of the
//!      dispatcher's `run_inner`): CREATE / DROP DATABASE, ALTER DATABASE,
//!      CREATE / ALTER / DROP / RENAME / TRUNCATE TABLE and their partition
//!      forms, CREATE / DROP INDEX, CREATE TABLE ... SELECT, CREATE / ALTER /
//!      DROP VIEW, ALTER TABLE ... DISABLE KEYS — unless every table it
//!      names is a TEMPORARY one (CREATE / DROP TEMPORARY TABLE, and ALTER,
//!      TRUNCATE, CREATE INDEX, DROP TABLE of a session's temporary table);
//!    - accounts: CREATE / ALTER / DROP USER, GRANT, REVOKE, SET PASSWORD;
//!    - stored programs: CREATE / ALTER / DROP PROCEDURE, FUNCTION,
//!      TRIGGER (`routines`);
//!    - the COMMIT of a transaction that wrote a shared table before the
//!      level rose ([`Session::check_read_only_commit`]; also the implicit
//!      commit of BEGIN, of SET autocommit = 1): rolled back, as MySQL's
//!      `ha_commit_trans` does.
//! 3. **What is not**: reads; SET (but SET GLOBAL needs SUPER, as every
//!    global); SHOW; transaction control of a transaction without writes;
//!    TEMPORARY tables; the performance_schema setup tables and their
//!    TRUNCATE; ANALYZE / CHECK TABLE; LOCK TABLES; FLUSH; KILL; replica
//!    administration (CHANGE REPLICATION SOURCE, START / STOP REPLICA);
//!    PURGE BINARY LOGS; BACKUP; GET_LOCK and its family. MySQL's list of
//!    exceptions is the same.
//! 4. **Order**: the data-change check runs after the statement's
//!    privilege checks (planning checks them), so an account lacking both
//!    the table privilege and a writable server gets 1142 where MySQL,
//!    checking read_only at the start of `mysql_execute_command`, answers
//!    1290. DDL is checked before its privileges, as in MySQL.
//!
//! SET GLOBAL read_only = 1 from a session holding LOCK TABLES or an open
//! transaction is 1192, as MySQL's (ER_LOCK_OR_ACTIVE_TRANSACTION).
//!
//! Not done: XA — a branch prepared before the level rose commits with XA
//! COMMIT (MySQL refuses its XA PREPARE once read_only is on; Canyon
//! refuses only its writes).

use super::state::*;
use crate::catalog::config::Presentation;
use crate::catalog::privileges::Privs;
use crate::catalog::read_only::{self, Level, ReadOnly};
use crate::parse::Parsed;
use crate::types::value::Value;
use canyon_common::{Error, Result};
use sqlparser::ast::{self, ObjectType, Statement};

impl Session {
    /// The error a write of this session gets now, if it may not write
    /// (rule 1 of the module doc). One relaxed load while the level is off.
    pub(super) fn read_only_refusal(&mut self) -> Option<Error> {
        let level = self.state.engine.read_only.level();
        if level == Level::Off || self.state.system {
            return None;
        }
        if level == Level::ReadOnly {
            let cat = self.state.engine.catalog();
            if self
                .state
                .account(&cat)
                .is_some_and(|a| a.allows_global(Privs::SUPER))
            {
                return None;
            }
        }
        let mariadb = self.state.engine.config.presentation == Presentation::Mariadb;
        Some(read_only::refused(level, mariadb))
    }

    /// Fails with 1290 if this session may not write now.
    pub(super) fn check_read_only_write(&mut self) -> Result<()> {
        match self.read_only_refusal() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Rule 2's statements other than data changes: DDL, accounts, views,
    /// partitions (data changes are checked where they run, in `with_txn`).
    pub(super) fn check_read_only_statement(&mut self, parsed: &Parsed) -> Result<()> {
        if self.state.engine.read_only.level() == Level::Off {
            return Ok(());
        }
        if self.changes_schema(parsed) {
            self.check_read_only_write()?;
        }
        Ok(())
    }

    /// Whether `parsed` changes the schema, accounts or other shared
    /// definitions (a statement on TEMPORARY tables only does not).
    fn changes_schema(&self, parsed: &Parsed) -> bool {
        match parsed {
            Parsed::Sql(stmt) => self.ddl_changes_shared(stmt),
            Parsed::CreateSelect { create, .. } => self.ddl_changes_shared(create),
            Parsed::CreateUser { .. }
            | Parsed::AlterUser { .. }
            | Parsed::Grant { .. }
            | Parsed::Revoke { .. }
            | Parsed::DropUser { .. }
            | Parsed::AlterDatabase { .. }
            | Parsed::CreatePartitioned { .. }
            | Parsed::View(_) => true,
            Parsed::AlterKeys { table } | Parsed::AlterPartition { table, .. } => {
                !self.all_temporary(std::slice::from_ref(table))
            }
            // Data changes (`with_txn`), reads, and what rule 3 lets run.
            Parsed::ShowGrants { .. }
            | Parsed::ShowWarnings { .. }
            | Parsed::StoredProgram(_)
            | Parsed::LoadData(_)
            | Parsed::SelectInto { .. }
            | Parsed::SetStatement { .. }
            | Parsed::Analyze { .. }
            | Parsed::LockTables { .. }
            | Parsed::Xa(_) => false,
        }
    }

    /// Whether a DDL statement of sqlparser's changes something shared.
    fn ddl_changes_shared(&self, stmt: &Statement) -> bool {
        let names: Vec<&ast::ObjectName> = match stmt {
            Statement::CreateDatabase { .. } | Statement::CreateSchema { .. } => return true,
            Statement::CreateTable(ct) => return !ct.temporary,
            Statement::Drop {
                temporary: true, ..
            } => return false,
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
            Statement::Drop { .. } => return true,
            // RENAME TABLE ignores shadowing temporary tables (MySQL).
            Statement::RenameTable(_) => return true,
            Statement::AlterTable(a) => vec![&a.name],
            Statement::Truncate(t) => t.table_names.iter().map(|t| &t.name).collect(),
            Statement::CreateIndex(ci) => vec![&ci.table_name],
            _ => return false,
        };
        let names: Vec<Vec<String>> = names.into_iter().map(object_name).collect();
        !self.all_temporary(&names)
            && !names.iter().all(|n| {
                // TRUNCATE of performance_schema's tables (MySQL's
                // exception; its setup tables' UPDATEs are no data change
                // here either).
                let db = match n.as_slice() {
                    [db, _] => Some(db.as_str()),
                    _ => self.state.db.as_deref(),
                };
                db.is_some_and(|d| d.eq_ignore_ascii_case("performance_schema"))
            })
    }

    /// Whether every table named (`[table]` or `[db, table]`) is one of the
    /// session's TEMPORARY tables (none named: false).
    fn all_temporary(&self, names: &[Vec<String>]) -> bool {
        !names.is_empty()
            && names.iter().all(|n| {
                let (db, t) = match n.as_slice() {
                    [db, t] => (db.as_str(), t.as_str()),
                    [t] => match self.state.db.as_deref() {
                        Some(db) => (db, t.as_str()),
                        None => return false,
                    },
                    _ => return false,
                };
                self.state.temp.get(db, t).is_some()
            })
    }

    /// The COMMIT rule (module doc, rule 2): a transaction that wrote a
    /// shared table may not commit on a server that became read-only for
    /// this session since; it is rolled back and the COMMIT fails with 1290.
    /// "Wrote a shared table": one of its statements passed the table-lock
    /// gate as a writer of one (the registry's write intentions, which
    /// stay when such a statement later failed) and it holds buffered
    /// writes — an approximation that can only refuse a transaction whose
    /// shared-table statements all failed but which wrote a TEMPORARY table.
    pub(super) fn check_read_only_commit(&mut self) -> Result<()> {
        if self.state.engine.read_only.level() == Level::Off
            || !self.txn.as_ref().is_some_and(|t| t.has_writes())
            || !self
                .state
                .engine
                .table_locks
                .txn_writes(&self.table_activity)
        {
            return Ok(());
        }
        let Some(e) = self.read_only_refusal() else {
            return Ok(());
        };
        if let Some(t) = self.txn.take() {
            self.count(crate::catalog::status::Counter::HandlerRollback);
            t.rollback();
        }
        Err(e)
    }

    /// SET GLOBAL read_only / super_read_only (the caller checked SUPER):
    /// the two move together ([`crate::catalog::read_only`]); switching
    /// read_only on is 1192 while this session holds LOCK TABLES or an open
    /// transaction, as in MySQL.
    pub(super) fn set_read_only(&mut self, var: &str, value: &Value) -> Result<()> {
        let ro = &self.state.engine.read_only;
        let from = ro.level();
        let to = ReadOnly::next(from, var, value)?;
        if from == Level::Off
            && to != Level::Off
            && (self.txn.is_some() || self.state.locked_tables.is_some())
        {
            return Err(Error::Sql {
                code: 1192,
                sqlstate: *b"HY000",
                message: "Can't execute the given command because you have active locked \
                          tables or an active transaction"
                    .into(),
            });
        }
        let was = ro.swap(to);
        if was != to {
            tracing::info!(
                conn = self.state.connection_id,
                "read-only level {was:?} -> {to:?} (SET GLOBAL {var})"
            );
        }
        Ok(())
    }
}
