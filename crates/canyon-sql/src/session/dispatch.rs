//! The dispatcher: one parsed statement to the handler of its family
//! (DML plans, transaction control, SET, SHOW, DDL, accounts, administration).

use super::state::*;
use crate::catalog::status::Counter;
use crate::parse::{parse, Parsed};
use crate::types::result::QueryResult;
use crate::types::value::Value;
use canyon_common::{Error, Result};
use sqlparser::ast::{self, Statement};

impl Session {
    /// Runs one parsed statement. `sql` is the whole text (for a few checks that
    /// sqlparser's AST does not preserve); empty for prepared statements.
    pub(super) fn run(
        &mut self,
        parsed: &Parsed,
        params: &[Value],
        sql: &str,
    ) -> Result<QueryResult> {
        if self.lock_retry.is_none() {
            self.count(Counter::Questions);
            if let Some(c) = command_counter(parsed) {
                self.count(c);
            }
        }
        if !matches!(parsed, Parsed::ShowWarnings { .. }) {
            self.state.warnings.clear();
        }
        self.state.engine.pin_catalog(&self.pin);
        super::context::set_statement_modes(&self.state);
        self.enter_statement();
        let r = self
            .ddl_text(parsed, sql, self.whole_request)
            .and_then(|_| self.run_inner(parsed, params, sql))
            .and_then(|ok| {
                self.log_ddl(parsed, sql, self.whole_request)?;
                Ok(ok)
            });
        let r = r.map_err(|e| self.present_error(e, parsed));
        self.count_row_operations(parsed, &r);
        self.leave_statement();
        self.xa_after_statement();
        self.unpin_if_idle();
        if let Err(e) = &r {
            self.record_error(e);
        }
        if matches!(parsed, Parsed::ShowWarnings { .. }) {
            r
        } else {
            self.with_warning_count(r)
        }
    }

    /// An error in MariaDB's words where the server presents itself as
    /// MariaDB ([`crate::catalog::config::Presentation`]) and MariaDB words
    /// the same error (number and SQLSTATE) differently from MySQL 8.0.
    pub(super) fn present_error(&self, e: Error, parsed: &Parsed) -> Error {
        use crate::catalog::config::Presentation;
        if self.state.engine.config().presentation != Presentation::Mariadb {
            return e;
        }
        match e {
            Error::CantDropKey { kind, name } => Error::Presented {
                code: 1091,
                sqlstate: "42000",
                message: format!("Can't DROP {kind} `{name}`; check that it exists"),
            },
            Error::Partition { code: 1507, .. } => Error::Partition {
                code: 1507,
                message: "Wrong partition name or partition list".into(),
            },
            // MySQL 8: "Too-big precision 66 specified for 'c1'. Maximum is
            // 65."; MariaDB leaves the precision out.
            Error::Sql {
                code: 1426,
                sqlstate,
                message,
            } => match (message.find(" for '"), message.rfind(". Maximum is ")) {
                (Some(name), Some(max)) => Error::Sql {
                    code: 1426,
                    sqlstate,
                    message: format!(
                        "Too big precision specified{}{}",
                        &message[name..max],
                        message[max..].trim_end_matches('.')
                    ),
                },
                _ => Error::Sql {
                    code: 1426,
                    sqlstate,
                    message,
                },
            },
            Error::Sql {
                code: 1427,
                sqlstate,
                message,
            } => Error::Sql {
                code: 1427,
                sqlstate,
                message: message.trim_end_matches('.').to_string(),
            },
            // MySQL 8: "Display width out of range for column 'c1' (max =
            // 64)"; MariaDB: "... for 'c1' ...".
            Error::Sql {
                code: 1439,
                sqlstate,
                message,
            } => Error::Sql {
                code: 1439,
                sqlstate,
                message: message.replacen("for column '", "for '", 1),
            },
            // MySQL 8's ER_UPDATE_TABLE_USED reads "You can't specify target
            // table 't' for update in FROM clause"; MariaDB's names the
            // statement: "Table 't' is specified twice, both as a target for
            // 'DELETE' and as a separate source for data".
            Error::UpdateTableUsed(table) => Error::Presented {
                code: 1093,
                sqlstate: "HY000",
                message: format!(
                    "Table '{table}' is specified twice, both as a target for '{}' and as a \
                     separate source for data",
                    match command_counter(parsed) {
                        Some(Counter::ComDelete) => "DELETE",
                        _ => "UPDATE",
                    }
                ),
            },
            e => e,
        }
    }

    pub(super) fn run_inner(
        &mut self,
        parsed: &Parsed,
        params: &[Value],
        sql: &str,
    ) -> Result<QueryResult> {
        if let Parsed::SetStatement {
            set,
            inner,
            inner_sql,
        } = parsed
        {
            let inner_sql = if sql.is_empty() { "" } else { inner_sql };
            return self.run_set_statement(set, inner, inner_sql, params);
        }
        // DDL, accounts and views on a read-only server (data changes are
        // refused in `with_txn`: see `super::read_only`).
        self.check_read_only_statement(parsed)?;
        if let Some(r) = self.run_with_hints(parsed, params, sql) {
            return r;
        }
        if let Some(r) = self.run_perfschema_write(parsed)? {
            return Ok(r);
        }
        let cat = self.state.catalog();
        if let Some(r) = self.run_view_statement(&cat, parsed, params)? {
            return Ok(r);
        }
        if !cat.routines.is_empty() {
            if let Some(expanded) = self.expand_stored_functions(&cat, parsed)? {
                drop(cat);
                return self.run_inner(&expanded, params, sql);
            }
        }
        if let Some(plan) = self.plan_dml(&cat, parsed)? {
            drop(cat);
            return self.run_plan(&plan, params);
        }
        let stmt = match parsed {
            Parsed::Sql(s) => s,
            Parsed::CreateUser { .. }
            | Parsed::AlterUser { .. }
            | Parsed::Grant { .. }
            | Parsed::Revoke { .. }
            | Parsed::ShowGrants { .. }
            | Parsed::DropUser { .. } => {
                return self.run_account(&cat, parsed);
            }
            Parsed::AlterKeys { table } => return self.run_alter_keys(&cat, table),
            Parsed::Analyze { tables, op } => return self.run_analyze(&cat, tables, *op),
            Parsed::LockTables { tables } => return self.lock_tables(&cat, tables),
            Parsed::Xa(x) => {
                if matches!(x, crate::parse::xa::XaStatement::Recover { .. }) {
                    // MySQL 8.0.19+: XA RECOVER lists every session's
                    // branches, so it needs XA_RECOVER_ADMIN (1227).
                    self.state.check_super(&cat, "XA_RECOVER_ADMIN")?;
                }
                drop(cat);
                return self.run_xa(x);
            }
            Parsed::SelectInto { query, into } => {
                let query = Parsed::Sql(query.clone());
                drop(cat);
                let result = self.run_inner(&query, params, sql)?;
                return self.select_into(result, into);
            }
            Parsed::AlterDatabase {
                db,
                charset,
                collation,
            } => {
                return self.run_alter_database(&cat, db.as_deref(), charset, collation);
            }
            Parsed::ShowWarnings { errors_only } => return self.show_warnings(*errors_only),
            Parsed::CreatePartitioned { create, spec } => {
                self.gate_ddl_names(&cat, &[])?;
                return self.run_create_partitioned(&cat, create, spec);
            }
            Parsed::CreateSelect { create, replace } => {
                let Statement::CreateTable(ct) = create.as_ref() else {
                    return Err(Error::Internal(
                        "a CREATE ... SELECT that is no CREATE TABLE".into(),
                    ));
                };
                self.gate_ddl_names(&cat, &[])?;
                return self.run_create_table(cat, ct, Some(*replace));
            }
            Parsed::AlterPartition { table, op } => {
                self.gate_ddl_names(&cat, std::slice::from_ref(table))?;
                return self.run_alter_partition(&cat, table, op);
            }
            Parsed::View(_) => return Err(Error::Internal("a view statement not run".into())),
            Parsed::SetStatement { .. } => {
                return Err(Error::Internal("a SET STATEMENT not run".into()))
            }
            Parsed::LoadData(text) => {
                let text = text.clone();
                drop(cat);
                return self.run_load_text(&text);
            }
            Parsed::StoredProgram(text) => {
                let text = text.clone();
                return self
                    .run_routine_text(&text, false)
                    .pop()
                    .unwrap_or_else(|| {
                        Err(Error::Internal(
                            "a stored-program statement gave no result".into(),
                        ))
                    });
            }
        };
        match stmt.as_ref() {
            Statement::StartTransaction { .. }
            | Statement::Commit { .. }
            | Statement::Rollback { .. }
            | Statement::Savepoint { .. }
            | Statement::ReleaseSavepoint { .. }
            | Statement::LockTables { .. }
            | Statement::UnlockTables => self.run_transaction_statement(&cat, stmt, params, sql),
            Statement::Set(set) => self.run_set(set, params, sql),
            Statement::Use(u) => {
                let name = match u {
                    ast::Use::Object(n) | ast::Use::Database(n) | ast::Use::Schema(n) => {
                        object_name(n)
                    }
                    _ => return Err(Error::Unsupported("this USE form".into())),
                };
                let db = name.last().cloned().unwrap_or_default();
                self.use_database(&db)?;
                Ok(ok(0))
            }
            Statement::CreateDatabase { .. }
            | Statement::CreateSchema { .. }
            | Statement::Drop { .. }
            | Statement::CreateTable(..)
            | Statement::CreateIndex(..)
            | Statement::AlterTable(..)
            | Statement::RenameTable(..)
            | Statement::Truncate(..) => {
                self.gate_ddl_statement(&cat, stmt)?;
                self.run_ddl(cat, stmt)
            }
            // Canyon parses GRANT / REVOKE itself (`Parsed::Grant`); a form that
            // reaches sqlparser's statement is one Canyon does not take.
            Statement::Grant(_) | Statement::Revoke(_) => {
                Err(Error::Unsupported("this form of GRANT / REVOKE".into()))
            }
            Statement::ShowVariables { .. }
            | Statement::ShowDatabases { .. }
            | Statement::ShowSchemas { .. }
            | Statement::ShowTables { .. }
            | Statement::ShowColumns { .. }
            | Statement::ShowCreate { .. }
            | Statement::ShowCharset(..)
            | Statement::ShowCollation { .. }
            | Statement::ShowStatus { .. }
            | Statement::ExplainTable { .. }
            | Statement::ShowProcessList { .. } => self.run_show(&cat, stmt),
            Statement::Call(f) => self.run_call_one_result(f, params),
            Statement::Flush { .. } | Statement::Kill { .. } | Statement::Explain { .. } => {
                self.run_admin(&cat, stmt)
            }
            other => Err(Error::Unsupported(statement_kind(other))),
        }
    }
}

/// The Com_* counter a statement counts under, if any.
pub(super) fn command_counter(parsed: &Parsed) -> Option<Counter> {
    use ast::ObjectType as O;
    let stmt = match parsed {
        Parsed::Sql(s) | Parsed::CreateSelect { create: s, .. } => s.as_ref(),
        Parsed::ShowWarnings { .. } => return Some(Counter::ComShowWarnings),
        Parsed::SelectInto { .. } => return Some(Counter::ComSelect),
        // Counted as the statement it wraps (MariaDB counts it so too).
        Parsed::SetStatement { inner, .. } => return command_counter(inner),
        Parsed::Xa(x) => {
            use crate::parse::xa::XaStatement as X;
            return Some(match x {
                X::Start { .. } => Counter::ComXaStart,
                X::End { .. } => Counter::ComXaEnd,
                X::Prepare(_) => Counter::ComXaPrepare,
                X::Commit { .. } => Counter::ComXaCommit,
                X::Rollback(_) => Counter::ComXaRollback,
                X::Recover { .. } => Counter::ComXaRecover,
            });
        }
        _ => return None,
    };
    Some(match stmt {
        Statement::Query(_) => Counter::ComSelect,
        Statement::Insert(i) if i.replace_into => Counter::ComReplace,
        Statement::Insert(i) => match i.source.as_deref().map(|q| q.body.as_ref()) {
            Some(ast::SetExpr::Values(_)) | None => Counter::ComInsert,
            Some(_) => Counter::ComInsertSelect,
        },
        Statement::Update { .. } => Counter::ComUpdate,
        Statement::Delete(_) => Counter::ComDelete,
        Statement::StartTransaction { .. } => Counter::ComBegin,
        Statement::Commit { .. } => Counter::ComCommit,
        Statement::Rollback {
            savepoint: None, ..
        } => Counter::ComRollback,
        Statement::Savepoint { .. } => Counter::ComSavepoint,
        Statement::Set(_) => Counter::ComSetOption,
        Statement::ShowStatus { .. } => Counter::ComShowStatus,
        Statement::ShowVariables { .. } => Counter::ComShowVariables,
        Statement::ShowTables { .. } => Counter::ComShowTables,
        Statement::ShowDatabases { .. } | Statement::ShowSchemas { .. } => {
            Counter::ComShowDatabases
        }
        Statement::ShowColumns { .. } => Counter::ComShowFields,
        Statement::ShowCreate {
            obj_type: ast::ShowCreateObject::Table,
            ..
        } => Counter::ComShowCreateTable,
        Statement::ShowProcessList { .. } => Counter::ComShowProcesslist,
        Statement::CreateTable(_) => Counter::ComCreateTable,
        Statement::AlterTable(_) => Counter::ComAlterTable,
        Statement::CreateDatabase { .. } | Statement::CreateSchema { .. } => Counter::ComCreateDb,
        Statement::CreateIndex(_) => Counter::ComCreateIndex,
        Statement::Drop { object_type, .. } => match object_type {
            O::Table => Counter::ComDropTable,
            O::Database | O::Schema => Counter::ComDropDb,
            O::Index => Counter::ComDropIndex,
            _ => return None,
        },
        Statement::Use(_) => Counter::ComChangeDb,
        Statement::Kill { .. } => Counter::ComKill,
        _ => return None,
    })
}

/// The transaction-control statements drivers send as text around every
/// transaction (Go's database/sql: `START TRANSACTION`, `COMMIT`, `ROLLBACK`),
/// parsed once per process: spelled exactly so, up to case, surrounding
/// whitespace and one trailing `;`, they skip sqlparser, whose tokenizer and
/// the parser's checks for statements it lacks took 1.4% of the server's CPU
/// under TPC-C for them. Anything else — comments, other spacing — takes the
/// ordinary path and parses to the same statements.
pub(super) fn transaction_control(sql: &str) -> Option<&'static [Parsed]> {
    const TEXTS: [&str; 4] = ["BEGIN", "COMMIT", "ROLLBACK", "START TRANSACTION"];
    static PARSED: std::sync::OnceLock<Vec<Vec<Parsed>>> = std::sync::OnceLock::new();
    let text = sql.trim();
    let text = text.strip_suffix(';').unwrap_or(text).trim_end();
    let i = TEXTS.iter().position(|t| t.eq_ignore_ascii_case(text))?;
    let all = PARSED.get_or_init(|| {
        TEXTS
            .iter()
            .map(|t| parse(t).expect("transaction-control statements parse"))
            .collect()
    });
    Some(&all[i])
}

/// The text of the second statement of a multi-statement text (for the 1064
/// message when multi-statements are off).
pub(super) fn second_statement_text(sql: &str) -> String {
    match sql.find(';') {
        Some(i) => sql[i + 1..].trim_start().chars().take(80).collect(),
        None => String::new(),
    }
}

/// A short name for an unsupported statement, for error 1235.
pub(super) fn statement_kind(s: &Statement) -> String {
    let text = s.to_string();
    let words: Vec<&str> = text.split_whitespace().take(2).collect();
    words.join(" ")
}
