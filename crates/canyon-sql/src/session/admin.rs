//! Administration statements: KILL, FLUSH, ANALYZE TABLE, EXPLAIN.

use super::{dispatch::*, state::*};
use crate::catalog::procs::{KILL_CONNECTION, KILL_QUERY};
use crate::catalog::Catalog;
use crate::parse::limits;
use crate::parse::Parsed;
use crate::types::result::QueryResult;
use crate::types::value::Value;
use canyon_common::{Error, Result};
use sqlparser::ast::{self, Statement};
use std::sync::Arc;

impl Session {
    /// KILL [QUERY | CONNECTION] id. An account may kill its own user's
    /// sessions; global privileges (MySQL's SUPER / CONNECTION_ADMIN) kill any.
    /// Killing the own session fails this very statement with 1317, as MySQL.
    pub(super) fn kill(&mut self, cat: &Catalog, id: u64, how: u32) -> Result<QueryResult> {
        let targets = u32::try_from(id)
            .map(|i| self.state.engine.processes.find(i))
            .unwrap_or_default();
        if targets.is_empty() {
            return Err(Error::UnknownThread(id));
        }
        let superuser = self.state.account(cat).is_some_and(|a| a.is_superuser());
        if !superuser && targets.iter().any(|p| p.user != self.state.user) {
            return Err(Error::KillDenied(id));
        }
        let mut own = false;
        for p in &targets {
            own |= Arc::ptr_eq(p, &self.state.process);
            p.kill(how);
        }
        if own {
            if how == KILL_QUERY {
                // The flag was meant for this statement: it ends here.
                self.state.process.begin_statement("");
            }
            return Err(Error::Interrupted);
        }
        Ok(ok(0))
    }
}

impl Session {
    /// ANALYZE TABLE; CHECK TABLE (each table's keys counted against its
    /// rows, `Engine::check_table`); OPTIMIZE TABLE, which InnoDB answers
    /// with a note that it recreates and analyzes instead: Canyon's rows
    /// need no rebuild (RocksDB compacts them as it goes), so it analyzes
    /// (tools such as Vitess run it on their own tables).
    pub(super) fn run_analyze(
        &mut self,
        cat: &Arc<Catalog>,
        tables: &[Vec<String>],
        op: crate::parse::parser::TableOp,
    ) -> Result<QueryResult> {
        use crate::parse::parser::TableOp;
        let check = op == TableOp::Check;
        let engine = self.state.engine.clone();
        // As MySQL: one result row per table, errors reported in the
        // rows rather than failing the statement.
        let mut rows = Vec::new();
        for parts in tables {
            let (db, name) = match parts.as_slice() {
                [t] => (
                    self.state.db.clone().ok_or(Error::NoDatabaseSelected)?,
                    t.clone(),
                ),
                [d, t] => (d.clone(), t.clone()),
                _ => return Err(Error::Syntax("ANALYZE TABLE".into())),
            };
            self.state.check_db(cat, &db, "SELECT", Some(&name))?;
            let label = Value::str(&format!("{db}.{name}"));
            if op == TableOp::Optimize && cat.table(&db, &name).is_some() {
                rows.push(vec![
                    label.clone(),
                    Value::str(op.name()),
                    Value::str("note"),
                    Value::str("Table does not support optimize, doing recreate + analyze instead"),
                ]);
            }
            let op = op.name();
            let (kind, text) = match cat.table(&db, &name) {
                None => ("Error", format!("Table '{db}.{name}' doesn't exist")),
                Some(t) if check => match engine.check_table(t) {
                    Ok(None) => ("status", "OK".to_string()),
                    Ok(Some(problem)) => ("error", problem),
                    Err(e) => ("Error", e.to_string()),
                },
                Some(t) if !t.stats.begin_analysis() => {
                    ("status", "Analysis already running".to_string())
                }
                // Asked for, an analysis reads every key: exact, and
                // it resets the running row count.
                Some(t) => match engine.analyze_table(t, crate::catalog::stats::Method::Scan) {
                    Ok(()) => ("status", "OK".to_string()),
                    Err(e) => ("Error", e.to_string()),
                },
            };
            let missing = cat.table(&db, &name).is_none();
            rows.push(vec![
                label.clone(),
                Value::str(op),
                Value::str(kind),
                Value::str(&text),
            ]);
            if missing {
                // MySQL and MariaDB follow the error with this row.
                rows.push(vec![
                    label,
                    Value::str(op),
                    Value::str("status"),
                    Value::str("Operation failed"),
                ]);
            }
        }
        Ok(text_rows(&["Table", "Op", "Msg_type", "Msg_text"], rows))
    }
}

impl Session {
    /// EXPLAIN ANALYZE (MySQL 8's, tree form only): runs the SELECT as the
    /// statement itself would run (privileges, table locks, the session's
    /// transaction, locking reads), discards its rows and returns the plan
    /// tree annotated with what each node did (`crate::plan::profile`).
    /// Like MySQL 8.0, only SELECT: a data-change statement is refused
    /// rather than run (MySQL 8.0 also takes multi-table UPDATE and DELETE;
    /// docs/compatibility.md).
    fn explain_analyze(
        &mut self,
        cat: &Arc<Catalog>,
        statement: &ast::Statement,
        format: Option<&ast::AnalyzeFormatKind>,
    ) -> Result<QueryResult> {
        match crate::plan::explain::Format::from_ast(format)? {
            // MySQL 8.0's own refusal (1235), word for word.
            crate::plan::explain::Format::Json => {
                return Err(Error::Unsupported(
                    "EXPLAIN ANALYZE with JSON format".into(),
                ))
            }
            crate::plan::explain::Format::Traditional if format.is_some() => {
                return Err(Error::Unsupported(
                    "EXPLAIN ANALYZE with a format other than TREE".into(),
                ))
            }
            _ => {}
        }
        let copy = Box::new(limits::clone_statement(statement));
        let plan = self.plan_dml(cat, &Parsed::Sql(copy))?;
        let Some(crate::plan::Plan::Select(select)) = &plan else {
            return Err(Error::Unsupported(
                "EXPLAIN ANALYZE of this statement".into(),
            ));
        };
        if let Some(plan) = &plan {
            self.gate_plan(plan)?;
        }
        let serializable_lock = !self.state.autocommit || self.txn.is_some();
        let profile = crate::plan::profile::Profile::default();
        self.run_select_plan(select, &[], serializable_lock, Some(&profile))?;
        Ok(QueryResult::Rows {
            columns: std::sync::Arc::from(vec![crate::types::expr_column(
                "EXPLAIN",
                crate::types::ExprKind::String,
            )]),
            rows: vec![vec![Value::str(&crate::plan::explain::analyzed(
                select, &profile,
            ))]],
            warnings: 0,
        })
    }

    /// FLUSH STATUS, KILL, EXPLAIN.
    pub(super) fn run_admin(
        &mut self,
        cat: &Arc<Catalog>,
        stmt: &Statement,
    ) -> Result<QueryResult> {
        let engine = self.state.engine.clone();
        match stmt {
            Statement::Flush {
                object_type: ast::FlushType::Status,
                ..
            } => {
                // MySQL: the session's counts join the global ones, then
                // restart from zero; GLOBAL totals never go back.
                let counts = std::mem::take(&mut self.state.counts);
                engine.status.fold(&counts);
                self.state.process.end_statement(&self.state.counts);
                self.state.flushed_at = std::time::Instant::now();
                Ok(ok(0))
            }
            // Canyon writes no binary log, so there is none to rotate: OK,
            // as MariaDB answers with log_bin OFF. Setup scripts send it
            // (the employees sample's `flush /*!50503 binary */ logs`).
            Statement::Flush {
                object_type: ast::FlushType::BinaryLogs,
                ..
            } => Ok(ok(0)),
            // Log rotation: the query logs are opened again by their paths
            // (`crate::catalog::querylog`). FLUSH LOGS does not start a new
            // binary log file here (FLUSH BINARY LOGS does).
            Statement::Flush {
                object_type:
                    t @ (ast::FlushType::Logs | ast::FlushType::SlowLogs | ast::FlushType::GeneralLogs),
                ..
            } => {
                self.state.check_super(cat, "RELOAD")?;
                let slow = !matches!(t, ast::FlushType::GeneralLogs);
                let general = !matches!(t, ast::FlushType::SlowLogs);
                engine.query_log.reopen(slow, general)?;
                Ok(ok(0))
            }
            // FLUSH [LOCAL | NO_WRITE_TO_BINLOG] TABLES [t, ...]: MySQL
            // closes its open table handles and empties the table cache.
            // Canyon keeps neither (a statement reads the catalog snapshot
            // it pinned), so there is nothing to close: OK after MySQL's
            // privilege check. LOCAL / NO_WRITE_TO_BINLOG keep the statement
            // out of the binary log, where Canyon never writes FLUSH anyway.
            // `mariadb-dump --master-data` sends `FLUSH /*!40101 LOCAL */
            // TABLES` before FLUSH TABLES WITH READ LOCK when it cannot read
            // a consistent snapshot's coordinates. FOR EXPORT is refused.
            Statement::Flush {
                object_type: ast::FlushType::Tables,
                read_lock: false,
                export: false,
                ..
            } => {
                self.state.check_super(cat, "RELOAD")?;
                Ok(ok(0))
            }
            // FLUSH TABLES [t, ...] WITH READ LOCK (`super::table_lock`).
            Statement::Flush {
                object_type: ast::FlushType::Tables,
                read_lock: true,
                tables,
                ..
            } => {
                let tables: Vec<Vec<String>> = tables.iter().map(object_name).collect();
                self.flush_tables_with_read_lock(cat, &tables)
            }
            Statement::Kill { modifier, id } => {
                let how = match modifier {
                    Some(ast::KillType::Query) => KILL_QUERY,
                    Some(ast::KillType::Connection) | None => KILL_CONNECTION,
                    Some(ast::KillType::Mutation) => {
                        return Err(Error::Unsupported("KILL MUTATION".into()))
                    }
                };
                self.kill(cat, *id, how)
            }
            Statement::Explain {
                statement,
                analyze,
                format,
                ..
            } => {
                // Plans (and checks privileges) exactly as the statement itself
                // would, then describes the plan; nothing is executed (but
                // for EXPLAIN ANALYZE, which runs it).
                if *analyze {
                    return self.explain_analyze(cat, statement, format.as_ref());
                }
                let format = crate::plan::explain::Format::from_ast(format.as_ref())?;
                let copy = Box::new(limits::clone_statement(statement));
                let mariadb = self.state.engine.config().presentation
                    == crate::catalog::config::Presentation::Mariadb
                    && format == crate::plan::explain::Format::Traditional;
                match self.plan_dml(cat, &Parsed::Sql(copy))? {
                    Some(plan) if mariadb => Ok(crate::plan::explain::as_mariadb(
                        crate::plan::explain::explain(&plan, format),
                    )),
                    Some(plan) => Ok(crate::plan::explain::explain(&plan, format)),
                    None => Err(Error::Unsupported("EXPLAIN of this statement".into())),
                }
            }
            other => Err(Error::Unsupported(statement_kind(other))),
        }
    }
}
