//! SET: session and global variables, user variables, SET NAMES, SET
//! TRANSACTION.

use super::{context::*, state::*, txn::*};
use crate::catalog::privileges::Privs;
use crate::catalog::vars;
use crate::expr::{eval, Env};
use crate::plan::bind::Binder;
use crate::types::result::QueryResult;
use crate::types::value::Value;
use canyon_common::{Error, Result};
use sqlparser::ast::{self};
use std::time::Duration;

impl Session {
    pub(super) fn run_set(
        &mut self,
        set: &ast::Set,
        params: &[Value],
        sql: &str,
    ) -> Result<QueryResult> {
        match set {
            ast::Set::SingleAssignment {
                scope,
                variable,
                values,
                ..
            } => {
                let v = values.first().ok_or_else(|| Error::Syntax("SET".into()))?;
                self.assign(scope.as_ref(), variable, v, params)?;
            }
            ast::Set::MultipleAssignments { assignments } => {
                for a in assignments {
                    self.assign(a.scope.as_ref(), &a.name, &a.value, params)?;
                }
            }
            ast::Set::SetNames {
                charset_name,
                collation_name,
            } => {
                // 1115 / 1273 / 1253 for unknown or mismatched names; without
                // COLLATE the character set's default collation.
                let coll = crate::types::collation::Collation::resolve(
                    Some(&charset_name.value),
                    collation_name.as_deref(),
                    crate::types::collation::Collation::DEFAULT,
                )?;
                let cs = Value::str(coll.charset());
                for v in [
                    "character_set_client",
                    "character_set_connection",
                    "character_set_results",
                ] {
                    self.state.vars.insert(v.into(), cs.clone());
                }
                self.state
                    .vars
                    .insert("collation_connection".into(), Value::str(coll.name()));
            }
            ast::Set::SetNamesDefault {} => {
                for v in [
                    "character_set_client",
                    "character_set_connection",
                    "character_set_results",
                    "collation_connection",
                ] {
                    self.state.vars.remove(v);
                }
            }
            ast::Set::SetTransaction { modes, .. } => {
                let upper = sql.to_ascii_uppercase();
                let session_scope =
                    upper.contains("SESSION TRANSACTION") || upper.contains("GLOBAL TRANSACTION");
                if !session_scope && self.txn.is_some() {
                    return Err(Error::CantChangeTxCharacteristics);
                }
                for m in modes {
                    match m {
                        ast::TransactionMode::IsolationLevel(l) => {
                            let iso = map_isolation(l);
                            if session_scope {
                                self.state.isolation = iso;
                            } else {
                                self.state.next_isolation = Some(iso);
                            }
                        }
                        ast::TransactionMode::AccessMode(a) => {
                            let ro = matches!(a, ast::TransactionAccessMode::ReadOnly);
                            if session_scope {
                                self.set_session_read_only(ro);
                            } else {
                                self.state.next_read_only = Some(ro);
                            }
                        }
                    }
                }
            }
            ast::Set::SetTimeZone { value, .. } => {
                let v = self.eval_set_value(value, params)?;
                let zone = crate::catalog::vars::normalize_time_zone(&v)?;
                self.state
                    .vars
                    .insert("time_zone".into(), Value::str(&zone));
            }
            _ => return Err(Error::Unsupported("this SET form".into())),
        }
        Ok(ok(0))
    }

    /// `SET STATEMENT assignments FOR statement` (`crate::parse::set_statement`):
    /// the assignments as a session SET, the statement, then every assigned
    /// variable back to its value before — after a failure too, and after
    /// an assignment that failed half way through the list (MariaDB's
    /// behaviour; MySQL 8.0 has only the SET_VAR hint).
    pub(super) fn run_set_statement(
        &mut self,
        set: &ast::Statement,
        inner: &crate::parse::Parsed,
        inner_sql: &str,
        params: &[Value],
    ) -> Result<QueryResult> {
        let syntax = || Error::Syntax("SET STATEMENT".into());
        let ast::Statement::Set(set) = set else {
            return Err(syntax());
        };
        let assignments: Vec<(&ast::ObjectName, &ast::Expr)> = match set {
            ast::Set::SingleAssignment {
                scope: None | Some(ast::ContextModifier::Session),
                variable,
                values,
                ..
            } if values.len() == 1 => vec![(variable, &values[0])],
            ast::Set::MultipleAssignments { assignments }
                if assignments
                    .iter()
                    .all(|a| matches!(a.scope, None | Some(ast::ContextModifier::Session))) =>
            {
                assignments.iter().map(|a| (&a.name, &a.value)).collect()
            }
            _ => return Err(syntax()),
        };
        // What each assignment will change: the variable's effective value
        // (put back through `apply_session_var`, which also restores the
        // fields Canyon keeps beside the map), and the map entries it and
        // its companion (character_set_x <-> collation_x) hold now.
        let mut saved = Vec::with_capacity(assignments.len());
        for (name, _) in &assignments {
            let var = match object_name(name).as_slice() {
                [v] if v.starts_with("@@") => v[2..].to_ascii_lowercase(),
                [v] if v.starts_with('@') => return Err(syntax()),
                [s, v]
                    if s.eq_ignore_ascii_case("@@session") || s.eq_ignore_ascii_case("@@local") =>
                {
                    v.to_ascii_lowercase()
                }
                [v] => v.to_ascii_lowercase(),
                _ => return Err(syntax()),
            };
            if NOT_FOR_ONE_STATEMENT.contains(&var.as_str()) {
                return Err(Error::SetStatementNotSupported(var));
            }
            let value = self.state.get_var(&var)?;
            let companion = if let Some(x) = var.strip_prefix("character_set_") {
                Some(format!("collation_{x}"))
            } else {
                var.strip_prefix("collation_")
                    .map(|x| format!("character_set_{x}"))
            };
            let entries: Vec<(String, Option<Value>)> = std::iter::once(var.clone())
                .chain(companion)
                .map(|k| {
                    let v = self.state.vars.get(&k).cloned();
                    (k, v)
                })
                .collect();
            saved.push((var, value, entries));
        }
        let mut result = Ok(());
        for (name, e) in &assignments {
            result = self.assign(None, name, e, params);
            if result.is_err() {
                break;
            }
        }
        let result = result.and_then(|()| self.run_inner(inner, params, inner_sql));
        for (var, value, entries) in saved.into_iter().rev() {
            // The value was the variable's own a moment ago: putting it back
            // cannot fail, short of a bug worth hearing about in tests.
            let restored = self.apply_session_var(var, value, false);
            debug_assert!(restored.is_ok(), "{restored:?}");
            for (k, v) in entries {
                match v {
                    Some(v) => self.state.vars.insert(k, v),
                    None => self.state.vars.remove(&k),
                };
            }
        }
        result
    }

    /// The session's access mode, reflected in both variable names.
    pub(super) fn set_session_read_only(&mut self, ro: bool) {
        self.state.read_only = ro;
        for v in ["transaction_read_only", "tx_read_only"] {
            self.state.vars.insert(v.into(), Value::Int(ro as i64));
        }
    }

    pub(super) fn eval_set_value(&self, e: &ast::Expr, params: &[Value]) -> Result<Value> {
        // `SET x = ON` / `= OFF` / `= REPEATABLE-READ` style bare words are strings.
        if let ast::Expr::Identifier(id) = e {
            if !id.value.starts_with('@') {
                return Ok(Value::str(&id.value));
            }
        }
        let mut b = Binder::new(None, None);
        let bound = b.bind(e)?;
        let ctx = StmtCtx::new(&self.state, params);
        eval(
            &bound,
            &Env {
                row: &[],
                aggs: &[],
                ctx: &ctx,
            },
        )
    }

    pub(super) fn assign(
        &mut self,
        scope: Option<&ast::ContextModifier>,
        name: &ast::ObjectName,
        e: &ast::Expr,
        params: &[Value],
    ) -> Result<()> {
        let parts = object_name(name);
        let (mut global, var) = match parts.as_slice() {
            [v] if v.starts_with("@@") => (false, v[2..].to_string()),
            [v] if v.starts_with('@') => {
                let val = self.eval_set_value(e, params)?;
                self.state
                    .user_vars
                    .insert(v[1..].to_ascii_lowercase(), val);
                return Ok(());
            }
            [s, v] if s.eq_ignore_ascii_case("@@global") => (true, v.clone()),
            [s, v] if s.eq_ignore_ascii_case("@@session") || s.eq_ignore_ascii_case("@@local") => {
                (false, v.clone())
            }
            [v] => (false, v.clone()),
            _ => return Err(Error::Syntax(name.to_string())),
        };
        if matches!(scope, Some(ast::ContextModifier::Global)) {
            global = true;
        }
        let var = var.to_ascii_lowercase();
        let (default, access) = vars::default_value(&var, &self.state.engine.config)
            .ok_or_else(|| Error::UnknownSystemVariable(var.clone()))?;
        if access == vars::Access::ReadOnly {
            return Err(Error::ReadOnlyVariable(var));
        }
        let is_default =
            matches!(e, ast::Expr::Identifier(id) if id.value.eq_ignore_ascii_case("DEFAULT"));
        let value = if is_default {
            default.clone()
        } else {
            self.eval_set_value(e, params)?
        };
        // The server's own settings, read live where they act: the query
        // logs', the binary log's retention and semi-synchronous ones, and
        // the read-only level (`super::read_only`). Global only, SUPER.
        let semisync = crate::catalog::binlog::semisync::is_var(&var);
        let retention = crate::catalog::binlog::is_retention_var(&var);
        let querylog = crate::catalog::querylog::is_var(&var);
        let read_only = crate::catalog::read_only::is_var(&var);
        if semisync || retention || querylog || read_only {
            if !global {
                return Err(Error::GlobalOnlyVariable(var));
            }
            let cat = self.state.engine.catalog();
            if !self
                .state
                .account(&cat)
                .is_some_and(|a| a.allows_global(Privs::SUPER))
            {
                return Err(Error::SpecificAccessDenied(
                    "SUPER or SYSTEM_VARIABLES_ADMIN".into(),
                ));
            }
            drop(cat);
            let engine = &self.state.engine;
            return if querylog {
                engine.query_log.set(&var, &value)
            } else if semisync {
                engine.binlog.semi_sync().set_var(&var, &value)
            } else if retention {
                crate::catalog::binlog::set_retention_var(&engine.binlog, &var, &value)
            } else {
                self.set_read_only(&var, &value)
            };
        }
        match (global, vars::scope(&var)) {
            (true, vars::Scope::SessionOnly) => return Err(Error::SessionOnlyVariable(var)),
            (true, vars::Scope::ServerOnly) => {
                return Err(Error::Unsupported(format!(
                    "SET GLOBAL {var} (a server setting: set it in the configuration file)"
                )))
            }
            (false, vars::Scope::ServerOnly) => return Err(Error::GlobalOnlyVariable(var)),
            (true, vars::Scope::Both) => {
                let cat = self.state.engine.catalog();
                let allowed = self
                    .state
                    .account(&cat)
                    .is_some_and(|a| a.allows_global(Privs::SUPER));
                if !allowed {
                    return Err(Error::SpecificAccessDenied(
                        "SUPER or SYSTEM_VARIABLES_ADMIN".into(),
                    ));
                }
                let stored = if is_default {
                    None
                } else {
                    Some(vars::normalize_global(&var, value)?)
                };
                // New sessions start from it; this one keeps its own value.
                self.state.engine.set_global(&var, stored);
                return Ok(());
            }
            (false, _) => {}
        }
        self.apply_session_var(var, value, is_default)
    }

    /// Sets a session variable (SET SESSION, and a new session's globals),
    /// with the effects of those Canyon acts on.
    pub(super) fn apply_session_var(
        &mut self,
        var: String,
        value: Value,
        is_default: bool,
    ) -> Result<()> {
        match var.as_str() {
            "autocommit" => {
                let on = vars::parse_bool(&var, &value)?;
                if on && !self.state.autocommit {
                    // MySQL commits the open transaction when autocommit is switched on.
                    self.commit()?;
                }
                self.state.autocommit = on;
            }
            "transaction_isolation" | "tx_isolation" => {
                self.state.isolation = vars::parse_isolation(&value)?;
            }
            "innodb_lock_wait_timeout" => {
                let secs =
                    value
                        .to_i64()
                        .filter(|s| *s >= 1)
                        .ok_or_else(|| Error::WrongValueForVar {
                            name: var.clone(),
                            value: value.to_display(),
                        })?;
                self.state.lock_wait_timeout = Duration::from_secs(secs as u64);
                self.state.vars.insert(var, Value::Int(secs));
                if let Some(t) = self.txn.as_mut() {
                    t.set_lock_wait_timeout(self.state.lock_wait_timeout);
                }
            }
            // Stored as 0 / 1 (it has no effect: Canyon has no general log).
            "sql_log_off" => {
                let off = vars::parse_bool(&var, &value)?;
                self.state.vars.insert(var, Value::Int(off as i64));
            }
            "transaction_read_only" | "tx_read_only" => {
                let ro = vars::parse_bool(&var, &value)?;
                self.set_session_read_only(ro);
            }
            "max_execution_time" => {
                let ms =
                    value
                        .to_i64()
                        .filter(|v| *v >= 0)
                        .ok_or_else(|| Error::WrongValueForVar {
                            name: var.clone(),
                            value: value.to_display(),
                        })?;
                self.state.max_execution_ms = ms as u64;
                self.state.vars.insert(var, Value::Int(ms));
            }
            "time_zone" if !is_default => {
                let zone = crate::catalog::vars::normalize_time_zone(&value)?;
                self.state.vars.insert(var, Value::str(&zone));
            }
            "sql_mode" if !is_default => {
                let text = match &value {
                    // A number is the modes' bits, as MySQL takes it
                    // (mysqlbinlog prints a QUERY event's sql_mode so).
                    Value::Int(_) | Value::UInt(_) => super::binlog::sql_mode_names(
                        value.to_i64().unwrap_or(-1),
                    )
                    .ok_or_else(|| Error::WrongValueForVar {
                        name: var.clone(),
                        value: value.to_display(),
                    })?,
                    _ => String::from_utf8_lossy(&value.to_text().unwrap_or_default()).into_owned(),
                };
                let mode = crate::catalog::vars::normalize_sql_mode(&text)?;
                self.state.vars.insert(var, Value::str(&mode));
            }
            "lc_time_names" if !is_default => {
                // Only en_US (locale 0): month and day names are English.
                let name = value.to_display();
                if !(name == "0" || name.eq_ignore_ascii_case("en_US")) {
                    return Err(Error::Sql {
                        code: 1649,
                        sqlstate: *b"HY000",
                        message: format!("Unknown locale: '{name}'"),
                    });
                }
                self.state.vars.insert(var, Value::str("en_US"));
            }
            "check_constraint_checks" if !is_default && value.to_i64() != Some(1) => {
                // MariaDB's switch for CHECK constraints; Canyon always
                // checks them, so only ON is taken (mariadb-binlog sets it).
                return Err(Error::Unsupported(
                    "check_constraint_checks = 0 (CHECK constraints are always enforced)".into(),
                ));
            }
            "system_versioning_insert_history" if !is_default && value.to_i64() != Some(0) => {
                return Err(Error::Unsupported(
                    "system_versioning_insert_history (no system-versioned tables)".into(),
                ));
            }
            "timestamp" => {
                // MySQL 8.0: 1 to 32536771199.999999 seconds (3001-01-18);
                // 0 and DEFAULT set the clock going again.
                let secs = match &value {
                    Value::Bytes(_) => None,
                    v => v.to_f64().filter(|s| (0.0..32_536_771_200.0).contains(s)),
                }
                .ok_or_else(|| Error::WrongValueForVar {
                    name: var.clone(),
                    value: value.to_display(),
                })?;
                if is_default || secs == 0.0 {
                    self.state.vars.remove(&var);
                } else {
                    // Microseconds, as MySQL keeps them.
                    let micros = (secs * 1e6).round() / 1e6;
                    self.state.vars.insert(var, Value::Double(micros));
                }
            }
            "long_query_time" => {
                // A number of seconds, not a string that reads as 0 (1232
                // in MySQL; Canyon's closest is 1231).
                let secs = match &value {
                    Value::Bytes(_) => None,
                    v => v.to_f64().filter(|s| *s >= 0.0),
                }
                .ok_or_else(|| Error::WrongValueForVar {
                    name: var.clone(),
                    value: value.to_display(),
                })?;
                self.state.long_query_secs = secs;
                self.state.vars.insert(var, Value::Double(secs));
            }
            "collation_connection" | "collation_server" | "collation_database" if !is_default => {
                let name = value.to_display();
                // A number is a collation id, as MySQL takes it (mysqlbinlog
                // prints the ids its QUERY events carry).
                let by_id = match &value {
                    Value::Int(_) | Value::UInt(_) => value
                        .to_i64()
                        .and_then(|n| u16::try_from(n).ok())
                        .and_then(crate::types::collation::Collation::from_id),
                    _ => None,
                };
                let c = by_id
                    .or_else(|| crate::types::collation::Collation::from_name(&name))
                    .ok_or_else(|| Error::UnknownCollation(name.to_ascii_lowercase()))?;
                // A collation names its character set too: MySQL sets the
                // matching character_set_* variable with it.
                let cs_var = var.replace("collation_", "character_set_");
                self.state.vars.insert(cs_var, Value::str(c.charset()));
                self.state.vars.insert(var, Value::str(c.name()));
            }
            "character_set_client"
            | "character_set_connection"
            | "character_set_results"
            | "character_set_server"
            | "character_set_database" => {
                // 1115 for a character set Canyon cannot convert; NULL only
                // for the results (no conversion). Reads of the client's and
                // the results' sets: `Session::client_charset`.
                let stored = if is_default {
                    None
                } else {
                    Some(vars::normalize_charset(&var, &value)?)
                };
                if var != "character_set_client" && var != "character_set_results" {
                    // And the matching collation_* becomes the set's default.
                    let coll_var = var.replace("character_set_", "collation_");
                    match &stored {
                        Some(v) => {
                            let c =
                                crate::types::collation::Collation::for_charset(&v.to_display())
                                    .expect("a normalized character set has a default collation");
                            self.state.vars.insert(coll_var, Value::str(c.name()));
                        }
                        None => {
                            self.state.vars.remove(&coll_var);
                        }
                    }
                }
                match stored {
                    Some(v) => self.state.vars.insert(var, v),
                    None => self.state.vars.remove(&var),
                };
            }
            _ => {
                if is_default {
                    self.state.vars.remove(&var);
                } else {
                    self.state.vars.insert(var, value);
                }
            }
        }
        Ok(())
    }
}

/// The variables SET STATEMENT refuses (1971), as MariaDB's list has them
/// (with MySQL 8's names for the same settings): they describe the
/// connection or the transaction rather than one statement.
pub(super) const NOT_FOR_ONE_STATEMENT: &[&str] = &[
    "autocommit",
    "character_set_client",
    "character_set_connection",
    "character_set_filesystem",
    "collation_connection",
    "interactive_timeout",
    "last_insert_id",
    "identity",
    "long_query_time",
    "profiling",
    "rand_seed1",
    "rand_seed2",
    "sql_log_off",
    "transaction_isolation",
    "transaction_read_only",
    "tx_isolation",
    "tx_read_only",
    "wait_timeout",
];
