//! Optimizer hints that change what a statement does (`crate::parse::hints`):
//! `SET_VAR(var = value)` runs the statement under a session value put back
//! afterwards — through the machinery of MariaDB's `SET STATEMENT ... FOR`
//! ([`Session::run_set_statement`]) — and `MAX_EXECUTION_TIME(N)` gives a
//! SELECT N milliseconds in place of the session's max_execution_time.
//!
//! As in MySQL, a SET_VAR naming an unknown variable, or one that cannot be
//! set for one statement, is skipped with a warning and the statement runs;
//! MAX_EXECUTION_TIME on anything but a SELECT is ignored. Not as in MySQL:
//! a SET_VAR value the variable refuses fails the statement (MySQL warns).

use super::state::*;
use crate::catalog::vars;
use crate::parse::hints::{clear_statement_hints, parse_hint_text, statement_hints, Hint};
use crate::parse::Parsed;
use crate::types::result::QueryResult;
use crate::types::value::Value;
use canyon_common::Result;
use sqlparser::ast::Statement;

impl Session {
    /// Runs a statement that carries SET_VAR or MAX_EXECUTION_TIME hints
    /// under them; `None` for any other statement (the caller runs it).
    pub(super) fn run_with_hints(
        &mut self,
        parsed: &Parsed,
        params: &[Value],
        sql: &str,
    ) -> Option<Result<QueryResult>> {
        let Parsed::Sql(stmt) = parsed else {
            return None;
        };
        let hints: Vec<Hint> = statement_hints(stmt)
            .iter()
            .filter(|h| h.prefix.is_empty())
            .flat_map(|h| parse_hint_text(&h.text))
            .collect();
        if hints.is_empty() {
            return None;
        }
        let is_select = matches!(stmt.as_ref(), Statement::Query(_));
        let mut stripped = stmt.as_ref().clone();
        clear_statement_hints(&mut stripped);
        let stripped = Parsed::Sql(Box::new(stripped));
        let mut assignments = Vec::new();
        let mut max_ms = None;
        for h in hints {
            match h {
                Hint::SetVar { name, value } => {
                    if let Some(a) = self.set_var_assignment(&name, &value) {
                        assignments.push(a);
                    }
                }
                Hint::MaxExecutionTime(ms) if is_select => max_ms = Some(ms),
                Hint::MaxExecutionTime(_) => {}
            }
        }
        let saved_ms = self.state.max_execution_ms;
        if let Some(ms) = max_ms {
            self.state.max_execution_ms = ms;
        }
        let set = (!assignments.is_empty())
            .then(|| crate::parse::parse(&format!("SET {}", assignments.join(", "))))
            .transpose();
        let result = match set {
            Ok(Some(mut set)) => match (set.pop(), set.is_empty()) {
                (Some(Parsed::Sql(set)), true) => {
                    self.run_set_statement(&set, &stripped, sql, params)
                }
                _ => self.run_inner(&stripped, params, sql),
            },
            Ok(None) => self.run_inner(&stripped, params, sql),
            Err(e) => Err(e),
        };
        self.state.max_execution_ms = saved_ms;
        Some(result)
    }

    /// One SET_VAR hint as a `var = value` assignment; `None`, with a
    /// warning, for a variable that is unknown (1193) or cannot be set for
    /// one statement, and for a value that does not read as an expression.
    fn set_var_assignment(&mut self, name: &str, value: &str) -> Option<String> {
        let var = name.to_ascii_lowercase();
        let known = vars::default_value(&var, &self.state.engine.config).is_some();
        let one_statement = !super::set::NOT_FOR_ONE_STATEMENT.contains(&var.as_str());
        let text = format!("{var} = {value}");
        let reads = matches!(
            crate::parse::parse(&format!("SET {text}")).as_deref(),
            Ok([Parsed::Sql(s)]) if matches!(s.as_ref(), Statement::Set(_))
        );
        let warning = if !known {
            (1193, format!("Unknown system variable '{var}'"))
        } else if !one_statement {
            // MySQL 8.0's ER_WARN_SET_VAR_HINT_NOT_SUPPORTED-style warning.
            (
                4537,
                format!("Variable '{var}' cannot be set using SET_VAR hint."),
            )
        } else if !reads {
            (1064, format!("Optimizer hint syntax error near '{value}'"))
        } else {
            return Some(text);
        };
        self.state.warnings.push(("Warning", warning.0, warning.1));
        None
    }
}
