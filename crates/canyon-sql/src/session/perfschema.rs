//! The session's side of `performance_schema` (`crate::catalog::perfschema`):
//! the statement-end hook, and the writes the schema takes — TRUNCATE of a
//! summary or event table, UPDATE of `setup_consumers` — with MySQL's 1142
//! for every other write.

use super::state::Session;
use crate::catalog::perfschema::{is_perf_schema, PerfTable, StatementEnd};
use crate::parse::Parsed;
use crate::types::result::QueryResult;
use canyon_common::{Error, Result};
use sqlparser::ast::{self, Expr, Statement};

/// What a request's outcome tells performance_schema: (rows sent, rows
/// affected).
pub(super) trait Outcome {
    /// (ROWS_SENT, ROWS_AFFECTED).
    fn rows(&self) -> (u64, u64);
}

impl Outcome for () {
    fn rows(&self) -> (u64, u64) {
        (0, 0)
    }
}

impl Outcome for (u64, u64) {
    fn rows(&self) -> (u64, u64) {
        *self
    }
}

impl Outcome for QueryResult {
    fn rows(&self) -> (u64, u64) {
        match self {
            QueryResult::Ok { affected_rows, .. } => (0, *affected_rows),
            QueryResult::Rows { rows, .. } => (rows.len() as u64, 0),
        }
    }
}

impl Session {
    /// Records the statement that ends now, which began at `start` and
    /// whose outcome's rows are `rows`. With every statement consumer off
    /// this is one relaxed load.
    pub(super) fn perfschema_end(&self, start: std::time::Instant, rows: (u64, u64)) {
        let perf = &self.state.engine.processes().perf;
        if !perf.wants_statements() {
            return;
        }
        let error = self
            .state
            .warnings
            .iter()
            .find(|w| w.0 == "Error")
            .map(|w| w.2.as_str());
        let warnings = self
            .state
            .warnings
            .iter()
            .filter(|w| w.0 != "Error")
            .count();
        let (rows_sent, rows_affected) = if error.is_some() { (0, 0) } else { rows };
        let io = self.state.io.borrow();
        let e = StatementEnd {
            schema: self.state.db.as_deref(),
            wait_ns: u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX),
            rows_sent,
            rows_affected,
            rows_examined: io.rows_examined,
            no_index_used: io.no_index_used,
            lock_ns: io.lock_ns,
            io: Some(&io),
            errors: u64::from(error.is_some()),
            warnings: warnings as u64,
            error_message: error,
        };
        self.state.process.record_statement(perf, &e);
    }

    /// The statement's scans in the status counters Select_scan,
    /// Select_full_join and Handler_read_* (from its tally, see
    /// `crate::catalog::perfschema::io`; approximations of MySQL's, which
    /// counts per handler call).
    pub(super) fn count_reads(&mut self) {
        use crate::catalog::status::Counter;
        let io = self.state.io.get_mut();
        // One each per statement, as MySQL counts one per query block (not
        // per scan: a nested loop scans its inner table once per outer row).
        let (scan, join) = (io.full_scans > 0, io.full_join);
        let (keys, next) = (io.index_scans, io.index_rows.saturating_sub(io.index_scans));
        let rnd = io.scan_rows + io.full_scans + io.full_join_scans;
        let c = &mut self.state.counts;
        c.add(Counter::SelectScan, u64::from(scan));
        c.add(Counter::SelectFullJoin, u64::from(join));
        c.add(Counter::HandlerReadKey, keys);
        c.add(Counter::HandlerReadNext, next);
        c.add(Counter::HandlerReadRndNext, rnd);
    }

    /// A write to a `performance_schema` table: TRUNCATE of a summary,
    /// UPDATE of `setup_consumers`; anything else there fails with 1142, as
    /// in MySQL. `None` when the statement writes no table of the schema.
    pub(super) fn run_perfschema_write(&mut self, parsed: &Parsed) -> Result<Option<QueryResult>> {
        let Parsed::Sql(stmt) = parsed else {
            return Ok(None);
        };
        let (command, targets): (&str, Vec<&ast::ObjectName>) = match stmt.as_ref() {
            Statement::Truncate(t) => ("DROP", t.table_names.iter().map(|t| &t.name).collect()),
            Statement::Insert(i) => match &i.table {
                ast::TableObject::TableName(n) => ("INSERT", vec![n]),
                _ => return Ok(None),
            },
            Statement::Update(u) => ("UPDATE", table_names(std::slice::from_ref(&u.table))),
            Statement::Delete(d) => {
                let from = match &d.from {
                    ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f) => f,
                };
                let mut names: Vec<&ast::ObjectName> = d.tables.iter().collect();
                if names.is_empty() {
                    names = table_names(from);
                }
                ("DELETE", names)
            }
            _ => return Ok(None),
        };
        let mut perf_tables = Vec::new();
        for n in &targets {
            if let Some(t) = self.perf_table(n) {
                perf_tables.push((t, n.0.last().map(|p| p.to_string()).unwrap_or_default()));
            }
        }
        if perf_tables.is_empty() {
            return Ok(None);
        }
        let denied = |table: &str| Error::TableAccessDenied {
            command: command.to_string(),
            user: self.state.user.clone(),
            host: self.state.host.clone(),
            table: table.trim_matches('`').to_string(),
        };
        // MySQL's ER_WRONG_PERFSCHEMA_USAGE: a table the account may write
        // (threads, setup_consumers) written in a way the schema does not take.
        let wrong_usage = || Error::Sql {
            code: 1683,
            sqlstate: *b"HY000",
            message: "Invalid performance_schema usage.".into(),
        };
        let perf = &self.state.engine.processes().perf;
        match stmt.as_ref() {
            Statement::Truncate(_) => {
                if let Some((t, name)) = perf_tables.iter().find(|(t, _)| !t.truncatable()) {
                    return Err(if t.updatable() {
                        wrong_usage()
                    } else {
                        denied(name)
                    });
                }
                if perf_tables.len() != targets.len() {
                    return Err(Error::Unsupported(
                        "TRUNCATE of performance_schema tables with other tables".into(),
                    ));
                }
                for (t, _) in &perf_tables {
                    match t {
                        PerfTable::EventsStatementsSummaryByDigest => perf.truncate(),
                        PerfTable::TableIoWaitsSummaryByTable
                        | PerfTable::TableIoWaitsSummaryByIndexUsage => perf.truncate_io(),
                        _ => {
                            for p in self.state.engine.processes().all() {
                                p.perf.lock().clear_history();
                            }
                        }
                    }
                }
                Ok(Some(ok(0)))
            }
            Statement::Update(u) if matches!(perf_tables[..], [(PerfTable::SetupConsumers, _)]) => {
                self.update_consumers(u).map(Some)
            }
            // UPDATE threads SET INSTRUMENTED / HISTORY: not taken (every
            // thread is instrumented).
            Statement::Update(_) if perf_tables.iter().all(|(t, _)| t.updatable()) => {
                Err(wrong_usage())
            }
            _ => Err(denied(&perf_tables[0].1)),
        }
    }

    /// The performance_schema table `name` names, if any.
    fn perf_table(&self, name: &ast::ObjectName) -> Option<PerfTable> {
        let parts: Vec<String> = name
            .0
            .iter()
            .map(|p| p.as_ident().map(|i| i.value.clone()).unwrap_or_default())
            .collect();
        let (db, table) = match parts.as_slice() {
            [t] => (self.state.db.clone()?, t.clone()),
            [d, t] => (d.clone(), t.clone()),
            _ => return None,
        };
        if !is_perf_schema(&db) {
            return None;
        }
        // An unknown table of the schema is refused as a write to it (1142).
        Some(PerfTable::lookup(&table).unwrap_or(PerfTable::Threads))
    }

    /// UPDATE setup_consumers SET ENABLED = 'YES' | 'NO' [WHERE ...]: the
    /// WHERE clause may test NAME and ENABLED with =, <>, LIKE, IN, AND, OR,
    /// NOT (what setup scripts write).
    fn update_consumers(&mut self, u: &ast::Update) -> Result<QueryResult> {
        let mut enable = None;
        for a in &u.assignments {
            let col = match &a.target {
                ast::AssignmentTarget::ColumnName(n) => n.0.last().map(|p| p.to_string()),
                ast::AssignmentTarget::Tuple(_) => None,
            };
            if !col.is_some_and(|c| c.trim_matches('`').eq_ignore_ascii_case("ENABLED")) {
                // MySQL: ER_WRONG_PERFSCHEMA_USAGE for the read-only NAME.
                return Err(Error::Sql {
                    code: 1683,
                    sqlstate: *b"HY000",
                    message: "Invalid performance_schema usage.".into(),
                });
            }
            enable = Some(match literal(&a.value).map(|v| v.to_ascii_uppercase()) {
                Some(v) if v == "YES" => true,
                Some(v) if v == "NO" => false,
                _ => {
                    return Err(Error::Sql {
                        code: 1265,
                        sqlstate: *b"01000",
                        message: "Data truncated for column 'ENABLED' at row 1".into(),
                    })
                }
            });
        }
        let Some(on) = enable else {
            return Ok(ok(0));
        };
        let perf = &self.state.engine.processes().perf;
        let mut changed = 0;
        for (name, _) in crate::catalog::perfschema::CONSUMERS {
            let enabled = if perf.consumer(name) { "YES" } else { "NO" };
            let hit = match &u.selection {
                None => true,
                Some(w) => matches_row(w, name, enabled)?,
            };
            if hit && perf.consumer(name) != on {
                perf.set_consumer(name, on);
                changed += 1;
            }
        }
        Ok(ok(changed))
    }
}

fn ok(affected_rows: u64) -> QueryResult {
    QueryResult::Ok {
        affected_rows,
        last_insert_id: 0,
        info: String::new(),
        warnings: 0,
    }
}

fn table_names(t: &[ast::TableWithJoins]) -> Vec<&ast::ObjectName> {
    t.iter()
        .filter_map(|t| match &t.relation {
            ast::TableFactor::Table { name, .. } => Some(name),
            _ => None,
        })
        .collect()
}

/// A string or number literal's text.
fn literal(e: &Expr) -> Option<String> {
    match e {
        Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                Some(s.clone())
            }
            ast::Value::Number(n, _) => Some(n.to_string()),
            _ => None,
        },
        Expr::Nested(e) => literal(e),
        _ => None,
    }
}

/// The value of column `e` in the row (name, enabled), if `e` names one.
fn column<'a>(e: &Expr, name: &'a str, enabled: &'a str) -> Option<&'a str> {
    let id = match e {
        Expr::Identifier(i) => &i.value,
        Expr::CompoundIdentifier(p) => &p.last()?.value,
        Expr::Nested(e) => return column(e, name, enabled),
        _ => return None,
    };
    if id.eq_ignore_ascii_case("NAME") {
        Some(name)
    } else if id.eq_ignore_ascii_case("ENABLED") {
        Some(enabled)
    } else {
        None
    }
}

/// Whether WHERE clause `w` holds for the row (name, enabled).
fn matches_row(w: &Expr, name: &str, enabled: &str) -> Result<bool> {
    let unsupported = || {
        Error::Unsupported(format!(
            "this WHERE clause on performance_schema.setup_consumers: {w}"
        ))
    };
    let operand = |e: &Expr| {
        column(e, name, enabled)
            .map(str::to_string)
            .or_else(|| literal(e))
    };
    Ok(match w {
        Expr::Nested(e) => matches_row(e, name, enabled)?,
        Expr::UnaryOp {
            op: ast::UnaryOperator::Not,
            expr,
        } => !matches_row(expr, name, enabled)?,
        Expr::BinaryOp { left, op, right } => match op {
            ast::BinaryOperator::And => {
                matches_row(left, name, enabled)? && matches_row(right, name, enabled)?
            }
            ast::BinaryOperator::Or => {
                matches_row(left, name, enabled)? || matches_row(right, name, enabled)?
            }
            ast::BinaryOperator::Eq | ast::BinaryOperator::NotEq => {
                let (Some(a), Some(b)) = (operand(left), operand(right)) else {
                    return Err(unsupported());
                };
                a.eq_ignore_ascii_case(&b) == matches!(op, ast::BinaryOperator::Eq)
            }
            _ => return Err(unsupported()),
        },
        Expr::Like {
            negated,
            expr,
            pattern,
            ..
        } => {
            let (Some(a), Some(p)) = (operand(expr), operand(pattern)) else {
                return Err(unsupported());
            };
            crate::expr::like(
                a.to_ascii_lowercase().as_bytes(),
                p.to_ascii_lowercase().as_bytes(),
                b'\\',
            ) != *negated
        }
        Expr::InList {
            expr,
            list,
            negated,
        } => {
            let Some(a) = operand(expr) else {
                return Err(unsupported());
            };
            let mut any = false;
            for e in list {
                let Some(b) = operand(e) else {
                    return Err(unsupported());
                };
                any |= a.eq_ignore_ascii_case(&b);
            }
            any != *negated
        }
        _ => return Err(unsupported()),
    })
}
