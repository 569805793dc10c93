//! The stored-program interpreter: runs a parsed body
//! ([`crate::parse::psm::Psm`]) statement by statement.
//!
//! # How a body runs
//! - **Locals** live in frames, one per BEGIN ... END block (the routine's
//!   parameters in the outermost). A name resolves to the innermost frame
//!   that declares it. Assignments convert to the declared type as an
//!   INSERT would ([`crate::types::coerce`]).
//! - **Plain statements** run through the host ([`Host::run_statement`]):
//!   the session's ordinary path for a CALL, the open transaction for a
//!   trigger. Before that, every identifier that names a local (and, in a
//!   trigger, every `NEW.col` / `OLD.col`) is replaced by its value as a
//!   literal — MySQL resolves a local before a column of the same name, so
//!   this is the same rule. Expressions of the control flow (IF, WHILE,
//!   RETURN, SET, DEFAULT) run as `SELECT expr` the same way, so every
//!   builtin function and subquery works in them.
//! - **Conditions**: an error of a statement is matched against the
//!   handlers of the enclosing blocks, innermost first, the most specific
//!   in a block winning (error number, then SQLSTATE, then SQLEXCEPTION /
//!   SQLWARNING / NOT FOUND). A CONTINUE handler's statement runs and the
//!   body goes on after the failing statement; an EXIT handler's runs and
//!   its block ends. A handler does not catch what its own statement
//!   raises. KILL and max_execution_time are never caught.
//! - **Cursors** are materialized when opened (MySQL's are asensitive; a
//!   copy is one of the allowed behaviours). FETCH past the last row raises
//!   NOT FOUND (1329, SQLSTATE 02000).
//! - **Control flow** is a value ([`Flow`]) returned up the statement tree:
//!   LEAVE and ITERATE carry their label, RETURN its value; an EXIT handler
//!   leaves its block through the block's label (unlabelled blocks get a
//!   hidden one).
//!
//! Loops check the session's KILL flag and deadline once per iteration, so
//! `LOOP END LOOP` stops on KILL QUERY and max_execution_time.
//!
//! GET DIAGNOSTICS reads the condition being handled (one, inside a handler;
//! none elsewhere).
//!
//! Not implemented: SQLWARNING handlers for warnings (only errors, NOT FOUND
//! and SIGNALed warnings raise conditions), UNDO handlers, a diagnostics
//! area of several conditions.

use crate::parse::psm::{CondValue, Decl, HandlerKind, Psm};
use crate::parse::Parsed;
use crate::types::result::QueryResult;
use crate::types::value::Value;
use crate::types::SqlType;
use canyon_common::{Error, Result};
use sqlparser::ast::{self, Expr, Statement};
use std::collections::VecDeque;
use std::ops::ControlFlow;

/// Where a body's statements run.
pub(super) trait Host {
    /// Runs one statement (locals already replaced by values).
    fn run_statement(&mut self, parsed: &Parsed) -> Result<QueryResult>;
    /// Sets a user variable.
    fn set_user_var(&mut self, name: &str, v: Value) -> Result<()>;
    /// Fails with the error that must stop the program (KILL, deadline).
    fn check_interrupt(&self) -> Result<()>;
    /// Records a warning or note.
    fn warn(&mut self, level: &'static str, code: u16, message: String);
    /// The session's time zone (`SET NEW.ts = ...` stores the instant).
    fn time_zone(&self) -> crate::types::timezone::Zone;
    /// Runs CALL of a procedure from inside a body, with its arguments'
    /// values; returns the values of its parameters at the end (for OUT /
    /// INOUT arguments).
    fn call(
        &mut self,
        db: Option<&str>,
        name: &str,
        args: Vec<Value>,
        out: &mut Vec<QueryResult>,
    ) -> Result<Vec<Value>>;
}

/// What kind of program runs: decides what a SELECT without INTO does and
/// whether RETURN is allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ProgramKind {
    /// A procedure: the SELECT's rows go to the client.
    Procedure,
    /// A function: a result set is error 1415; RETURN ends it.
    Function,
    /// A trigger: a result set is error 1415; no RETURN.
    Trigger,
}

/// The row a trigger runs for.
pub(super) struct TriggerRow {
    /// The table's column names.
    pub(super) columns: Vec<String>,
    /// The table's column types.
    pub(super) types: Vec<SqlType>,
    /// OLD (UPDATE and DELETE).
    pub(super) old: Option<Vec<Value>>,
    /// NEW (INSERT and UPDATE); a BEFORE trigger may change it.
    pub(super) new: Option<Vec<Value>>,
    /// Whether NEW may be assigned (BEFORE).
    pub(super) new_writable: bool,
}

/// How a statement ended.
#[derive(Debug)]
pub(super) enum Flow {
    /// Go on with the next statement.
    Next,
    /// LEAVE (or an EXIT handler) to this label.
    Leave(String),
    /// ITERATE this label.
    Iterate(String),
    /// RETURN this value.
    Return(Value),
}

struct Local {
    name: String,
    value: Value,
    ty: Option<SqlType>,
}

struct Cursor<'p> {
    name: String,
    query: &'p Parsed,
    rows: Option<VecDeque<Vec<Value>>>,
}

struct Handler<'p> {
    kind: HandlerKind,
    conditions: &'p [CondValue],
    body: &'p Psm,
}

struct Frame<'p> {
    label: String,
    locals: Vec<Local>,
    conditions: Vec<(String, CondValue)>,
    cursors: Vec<Cursor<'p>>,
    handlers: Vec<Handler<'p>>,
}

impl Frame<'_> {
    fn new(label: String) -> Self {
        Frame {
            label,
            locals: Vec::new(),
            conditions: Vec::new(),
            cursors: Vec::new(),
            handlers: Vec::new(),
        }
    }
}

/// One running program.
pub(super) struct Interp<'p, 'h> {
    host: &'h mut dyn Host,
    kind: ProgramKind,
    frames: Vec<Frame<'p>>,
    /// Handlers of frames at or above this index are not searched (the
    /// handler running now belongs to it).
    handler_floor: usize,
    /// The conditions being handled (RESIGNAL re-raises the last).
    handling: Vec<Error>,
    /// Result sets for the client (procedures).
    pub(super) results: Vec<QueryResult>,
    /// The trigger's row.
    pub(super) row: Option<TriggerRow>,
    hidden_labels: u32,
}

/// The MySQL (error number, SQLSTATE) of an error, for handler matching.
/// The client-facing mapping lives at the protocol edge
/// (`canyon_protocol::errors`); this covers the errors a handler commonly
/// names, and gives 1105 / HY000 to the rest (which SQLEXCEPTION catches).
pub(super) fn condition_of(e: &Error) -> (u16, [u8; 5]) {
    match e {
        Error::Sql { code, sqlstate, .. } => (*code, *sqlstate),
        Error::DuplicateEntry { .. } => (1062, *b"23000"),
        Error::BadNull(_) => (1048, *b"23000"),
        Error::NoDefault(_) => (1364, *b"HY000"),
        Error::UnknownTable { .. } => (1146, *b"42S02"),
        Error::BadTable(_) => (1051, *b"42S02"),
        Error::TableExists(_) => (1050, *b"42S01"),
        Error::UnknownColumn { .. } => (1054, *b"42S22"),
        Error::UnknownDatabase(_) => (1049, *b"42000"),
        Error::DatabaseExists(_) => (1007, *b"HY000"),
        Error::Syntax(_) => (1064, *b"42000"),
        Error::DataTooLong { .. } => (1406, *b"22001"),
        Error::OutOfRange { .. } => (1264, *b"22003"),
        Error::IncorrectValue { .. } => (1366, *b"HY000"),
        Error::ValueOutOfRange { .. } => (1690, *b"22003"),
        Error::SubqueryMoreThanOneRow => (1242, *b"21000"),
        Error::OperandColumns(_) => (1241, *b"21000"),
        Error::ForeignKey { .. } => (1452, *b"23000"),
        Error::Deadlock => (1213, *b"40001"),
        Error::LockWaitTimeout => (1205, *b"HY000"),
        Error::UnknownFunction(_) => (1305, *b"42000"),
        Error::StrictModeError { code, .. } => (
            *code,
            match code {
                1264 => *b"22003",
                1292 => *b"22007",
                1365 => *b"22012",
                1406 => *b"22001",
                _ => *b"HY000",
            },
        ),
        Error::Unsupported(_) => (1235, *b"42000"),
        _ => (1105, *b"HY000"),
    }
}

/// The message of an error as a handler sees it (GET DIAGNOSTICS,
/// RESIGNAL): MySQL's text for the errors handlers commonly catch, the
/// error's own rendering for the rest (the client-facing texts live at the
/// protocol edge).
pub(super) fn message_of(e: &Error) -> String {
    match e {
        Error::Sql { message, .. } | Error::StrictModeError { message, .. } => message.clone(),
        Error::DuplicateEntry { value, key } => {
            format!("Duplicate entry '{value}' for key '{key}'")
        }
        Error::BadNull(c) => format!("Column '{c}' cannot be null"),
        Error::UnknownTable { db, table } => format!("Table '{db}.{table}' doesn't exist"),
        Error::UnknownColumn { column, context } => {
            format!("Unknown column '{column}' in '{context}'")
        }
        Error::NoDefault(c) => format!("Field '{c}' doesn't have a default value"),
        other => format!("{other}"),
    }
}

/// 1329 ER_SP_FETCH_NO_DATA: the NOT FOUND condition.
pub(super) fn no_data() -> Error {
    Error::Sql {
        code: 1329,
        sqlstate: *b"02000",
        message: "No data - zero rows fetched, selected, or processed".into(),
    }
}

fn sp_err(code: u16, sqlstate: &[u8; 5], message: String) -> Error {
    crate::catalog::routines::sp_error(code, sqlstate, message)
}

/// A value as a literal expression.
pub(super) fn literal(v: &Value) -> Expr {
    use sqlparser::ast::Value as L;
    let l = match v {
        Value::Null => L::Null,
        Value::Int(i) => L::Number(i.to_string(), false),
        Value::UInt(u) => L::Number(u.to_string(), false),
        Value::Decimal(d) => L::Number(d.to_string(), false),
        Value::Double(f) => L::Number(format!("{f:e}"), false),
        Value::Bytes(b) => match std::str::from_utf8(b) {
            Ok(s) => L::SingleQuotedString(s.to_string()),
            Err(_) => L::HexStringLiteral(b.iter().map(|x| format!("{x:02X}")).collect()),
        },
        // A JSON value re-enters as its text (JSON-ness is lost here).
        Value::Date(_) | Value::DateTime(_) | Value::Stamp(_) | Value::Json(_) => {
            L::SingleQuotedString(v.to_display())
        }
    };
    if let Value::Int(i) = v {
        if *i < 0 {
            // `-5` is a negation of 5 to the parser; as one literal the
            // binder reads it as well.
            return Expr::UnaryOp {
                op: ast::UnaryOperator::Minus,
                expr: Box::new(Expr::value(L::Number(i.unsigned_abs().to_string(), false))),
            };
        }
    }
    Expr::value(l)
}

/// Runs `f` on a statement, keeping the column names of its select list:
/// an unaliased item that `f` changes (a local replaced by its value, a
/// stored function by its result) gets its text from before as an alias,
/// so the client sees `sf1(2)`, not `4`, as MySQL shows it.
pub(super) fn keeping_names(
    stmt: &mut Statement,
    f: impl FnOnce(&mut Statement) -> Result<()>,
) -> Result<()> {
    let names: Vec<Option<String>> = match select_items(stmt) {
        Some(items) => items
            .iter()
            .map(|i| match i {
                ast::SelectItem::UnnamedExpr(e) => Some(e.to_string()),
                _ => None,
            })
            .collect(),
        None => Vec::new(),
    };
    f(stmt)?;
    if let Some(items) = select_items(stmt) {
        for (item, name) in items.iter_mut().zip(names) {
            let Some(name) = name else { continue };
            if let ast::SelectItem::UnnamedExpr(e) = item {
                if e.to_string() != name {
                    *item = ast::SelectItem::ExprWithAlias {
                        expr: e.clone(),
                        alias: ast::Ident::new(name),
                    };
                }
            }
        }
    }
    Ok(())
}

fn select_items(stmt: &mut Statement) -> Option<&mut Vec<ast::SelectItem>> {
    match stmt {
        Statement::Query(q) => match q.body.as_mut() {
            ast::SetExpr::Select(s) => Some(&mut s.projection),
            _ => None,
        },
        _ => None,
    }
}

/// A `SELECT NULL` statement whose one projected expression is replaced.
pub(super) fn select_of(e: Expr) -> Parsed {
    static TEMPLATE: std::sync::OnceLock<Statement> = std::sync::OnceLock::new();
    let template = TEMPLATE.get_or_init(|| match crate::parse::parse("SELECT NULL") {
        Ok(mut v) => match v.pop() {
            Some(Parsed::Sql(s)) => *s,
            _ => unreachable!("SELECT NULL is a statement"),
        },
        Err(_) => unreachable!("SELECT NULL parses"),
    });
    let mut stmt = template.clone();
    if let Statement::Query(q) = &mut stmt {
        if let ast::SetExpr::Select(s) = q.body.as_mut() {
            s.projection = vec![ast::SelectItem::UnnamedExpr(e)];
        }
    }
    Parsed::Sql(Box::new(stmt))
}

/// The first value of a result (NULL when none).
fn first_value(r: QueryResult) -> Value {
    match r {
        QueryResult::Rows { mut rows, .. } if !rows.is_empty() => rows
            .swap_remove(0)
            .into_iter()
            .next()
            .unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

impl<'p, 'h> Interp<'p, 'h> {
    pub(super) fn new(host: &'h mut dyn Host, kind: ProgramKind) -> Self {
        Interp {
            host,
            kind,
            frames: vec![Frame::new("\0params".into())],
            handler_floor: usize::MAX,
            handling: Vec::new(),
            results: Vec::new(),
            row: None,
            hidden_labels: 0,
        }
    }

    /// Declares a parameter (in the outermost frame).
    pub(super) fn param(&mut self, name: &str, value: Value, ty: Option<SqlType>) -> Result<()> {
        let value = convert(value, ty, name)?;
        self.frames[0].locals.push(Local {
            name: name.to_string(),
            value,
            ty,
        });
        Ok(())
    }

    /// The value of a parameter at the end (OUT / INOUT).
    pub(super) fn param_value(&self, i: usize) -> Value {
        self.frames[0]
            .locals
            .get(i)
            .map_or(Value::Null, |l| l.value.clone())
    }

    /// Runs the program's body.
    pub(super) fn run(&mut self, body: &'p Psm) -> Result<Flow> {
        let flow = self.exec(body)?;
        Ok(match flow {
            Flow::Leave(_) | Flow::Iterate(_) | Flow::Next => Flow::Next,
            f => f,
        })
    }

    fn lookup(&self, name: &str) -> Option<&Local> {
        self.frames
            .iter()
            .rev()
            .flat_map(|f| f.locals.iter().rev())
            .find(|l| l.name.eq_ignore_ascii_case(name))
    }

    fn lookup_mut(&mut self, name: &str) -> Option<&mut Local> {
        self.frames
            .iter_mut()
            .rev()
            .flat_map(|f| f.locals.iter_mut().rev())
            .find(|l| l.name.eq_ignore_ascii_case(name))
    }

    /// Assigns a local, `NEW.col` or `@user` variable.
    fn assign(&mut self, target: &[String], v: Value) -> Result<()> {
        if target.len() == 2 {
            return self.assign_row(&target[0], &target[1], v);
        }
        let name = &target[0];
        if let Some(u) = name.strip_prefix('@') {
            return self.host.set_user_var(u, v);
        }
        match self.lookup_mut(name) {
            Some(l) => {
                l.value = convert(v, l.ty, &l.name)?;
                Ok(())
            }
            None => Err(undeclared(name)),
        }
    }

    fn assign_row(&mut self, which: &str, col: &str, v: Value) -> Result<()> {
        let Some(row) = self.row.as_mut() else {
            return Err(undeclared(&format!("{which}.{col}")));
        };
        if which.eq_ignore_ascii_case("OLD") {
            // 1362 ER_TRG_CANT_CHANGE_ROW.
            return Err(sp_err(
                1362,
                b"HY000",
                "Updating of OLD row is not allowed in trigger".into(),
            ));
        }
        if !which.eq_ignore_ascii_case("NEW") {
            return Err(undeclared(&format!("{which}.{col}")));
        }
        if !row.new_writable || row.new.is_none() {
            return Err(if row.new.is_none() {
                no_new_row()
            } else {
                sp_err(
                    1362,
                    b"HY000",
                    "Updating of NEW row is not allowed in after trigger".into(),
                )
            });
        }
        let i = row
            .columns
            .iter()
            .position(|c| c.eq_ignore_ascii_case(col))
            .ok_or_else(|| Error::UnknownColumn {
                column: col.to_string(),
                context: "NEW".into(),
            })?;
        let v = match crate::types::coerce(v, row.types[i], col, 1)? {
            // A TIMESTAMP column holds the instant of the session-local time.
            Value::DateTime(local)
                if matches!(row.types[i], crate::types::SqlType::Timestamp(_)) =>
            {
                crate::types::timezone::stamp(local, &self.host.time_zone())
                    .map(Value::Stamp)
                    .ok_or_else(|| Error::IncorrectValue {
                        type_name: "datetime".to_string(),
                        value: crate::types::value::format_datetime(&local),
                        column: col.to_string(),
                        row: 1,
                    })?
            }
            v => v,
        };
        if let Some(new) = row.new.as_mut() {
            new[i] = v;
        }
        Ok(())
    }

    /// Replaces locals and `NEW.c` / `OLD.c` in a statement by their values.
    fn substitute(&self, stmt: &mut Statement) -> Result<()> {
        let r = ast::visit_expressions_mut(stmt, |e| {
            match e {
                Expr::Identifier(id) => {
                    if let Some(l) = self.lookup(&id.value) {
                        *e = literal(&l.value);
                    }
                }
                Expr::CompoundIdentifier(parts) if parts.len() == 2 => {
                    if let Some(row) = &self.row {
                        match row_value(row, &parts[0].value, &parts[1].value) {
                            Ok(Some(v)) => *e = literal(&v),
                            Ok(None) => {}
                            Err(err) => return ControlFlow::Break(err),
                        }
                    }
                }
                _ => {}
            }
            ControlFlow::Continue(())
        });
        match r {
            ControlFlow::Break(e) => Err(e),
            ControlFlow::Continue(()) => Ok(()),
        }
    }

    /// Runs a statement with its locals replaced.
    fn run_parsed(&mut self, parsed: &Parsed) -> Result<QueryResult> {
        match parsed {
            Parsed::Sql(s) => {
                let mut s = s.clone();
                keeping_names(&mut s, |s| self.substitute(s))?;
                self.host.run_statement(&Parsed::Sql(s))
            }
            other => self.host.run_statement(other),
        }
    }

    /// Evaluates an expression (as `SELECT expr`).
    pub(super) fn eval(&mut self, e: &Expr) -> Result<Value> {
        let r = self.run_parsed(&select_of(e.clone()))?;
        Ok(first_value(r))
    }

    fn truth(&mut self, e: &Expr) -> Result<bool> {
        Ok(self.eval(e)?.truth().unwrap_or(false))
    }

    /// Runs one statement, handing an error to the handlers in scope.
    fn exec(&mut self, s: &'p Psm) -> Result<Flow> {
        match self.exec_raw(s) {
            Ok(f) => Ok(f),
            Err(e) => self.raise(e),
        }
    }

    /// Finds a handler for `e`; runs it, or returns the error.
    fn raise(&mut self, e: Error) -> Result<Flow> {
        if matches!(
            e,
            Error::Interrupted | Error::QueryTimeout | Error::LockWaitPending | Error::Deadlock
        ) {
            return Err(e);
        }
        let Some((fi, hi)) = self.find_handler(&e) else {
            return Err(e);
        };
        let (kind, body) = {
            let h = &self.frames[fi].handlers[hi];
            (h.kind, h.body)
        };
        let floor = self.handler_floor;
        self.handler_floor = fi;
        self.handling.push(e);
        let r = self.exec(body);
        self.handling.pop();
        self.handler_floor = floor;
        match r? {
            Flow::Return(v) => Ok(Flow::Return(v)),
            _ if kind == HandlerKind::Exit => Ok(Flow::Leave(self.frames[fi].label.clone())),
            _ => Ok(Flow::Next),
        }
    }

    fn find_handler(&self, e: &Error) -> Option<(usize, usize)> {
        let (code, state) = condition_of(e);
        let state = std::str::from_utf8(&state).unwrap_or("HY000").to_string();
        let top = self.frames.len().min(self.handler_floor);
        for fi in (0..top).rev() {
            let frame = &self.frames[fi];
            let mut best: Option<(u8, usize)> = None;
            for (hi, h) in frame.handlers.iter().enumerate() {
                for c in h.conditions {
                    let score = self.matches(fi, c, code, &state);
                    if score > 0 && best.is_none_or(|(b, _)| score > b) {
                        best = Some((score, hi));
                    }
                }
            }
            if let Some((_, hi)) = best {
                return Some((fi, hi));
            }
        }
        None
    }

    /// How specifically `c` matches (0: not at all).
    fn matches(&self, fi: usize, c: &CondValue, code: u16, state: &str) -> u8 {
        match c {
            CondValue::Errno(n) => 3 * (*n == code) as u8,
            CondValue::SqlState(s) => 2 * (s == state) as u8,
            CondValue::Name(n) => match self.condition(fi, n) {
                Some(v) => self.matches(fi, &v, code, state),
                None => 0,
            },
            CondValue::NotFound => state.starts_with("02") as u8,
            CondValue::SqlWarning => state.starts_with("01") as u8,
            CondValue::SqlException => {
                !(state.starts_with("00") || state.starts_with("01") || state.starts_with("02"))
                    as u8
            }
        }
    }

    /// A declared condition, searched from frame `fi` outward.
    fn condition(&self, fi: usize, name: &str) -> Option<CondValue> {
        self.frames[..=fi.min(self.frames.len() - 1)]
            .iter()
            .rev()
            .flat_map(|f| f.conditions.iter())
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    }

    fn exec_list(&mut self, list: &'p [Psm]) -> Result<Flow> {
        for s in list {
            match self.exec(s)? {
                Flow::Next => {}
                f => return Ok(f),
            }
        }
        Ok(Flow::Next)
    }

    fn hidden_label(&mut self) -> String {
        self.hidden_labels += 1;
        format!("\0{}", self.hidden_labels)
    }

    fn exec_raw(&mut self, s: &'p Psm) -> Result<Flow> {
        match s {
            Psm::Block { label, decls, body } => {
                let label = label.clone().unwrap_or_else(|| self.hidden_label());
                self.frames.push(Frame::new(label.clone()));
                let r = self.block(decls, body);
                self.frames.pop();
                match r? {
                    Flow::Leave(l) if l.eq_ignore_ascii_case(&label) => Ok(Flow::Next),
                    f => Ok(f),
                }
            }
            Psm::If { arms, otherwise } => {
                for (cond, list) in arms {
                    if self.truth(cond)? {
                        return self.exec_list(list);
                    }
                }
                match otherwise {
                    Some(list) => self.exec_list(list),
                    None => Ok(Flow::Next),
                }
            }
            Psm::Case {
                operand,
                arms,
                otherwise,
            } => {
                for (when, list) in arms {
                    let hit = match operand {
                        Some(op) => self.truth(&Expr::BinaryOp {
                            left: Box::new(op.clone()),
                            op: ast::BinaryOperator::Eq,
                            right: Box::new(when.clone()),
                        })?,
                        None => self.truth(when)?,
                    };
                    if hit {
                        return self.exec_list(list);
                    }
                }
                match otherwise {
                    Some(list) => self.exec_list(list),
                    // 1339 ER_SP_CASE_NOT_FOUND.
                    None => Err(sp_err(
                        1339,
                        b"20000",
                        "Case not found for CASE statement".into(),
                    )),
                }
            }
            Psm::Loop { label, body } => self.repeat(label, body, None, None),
            Psm::While { label, cond, body } => self.repeat(label, body, Some(cond), None),
            Psm::Repeat { label, body, until } => self.repeat(label, body, None, Some(until)),
            Psm::Leave(l) => Ok(Flow::Leave(l.clone())),
            Psm::Iterate(l) => Ok(Flow::Iterate(l.clone())),
            Psm::Return(e) => {
                if self.kind != ProgramKind::Function {
                    // 1313 ER_SP_BADRETURN.
                    return Err(sp_err(
                        1313,
                        b"42000",
                        "RETURN is only allowed in a FUNCTION".into(),
                    ));
                }
                Ok(Flow::Return(self.eval(e)?))
            }
            Psm::Set(assigns) => {
                for a in assigns {
                    let is_local = a.target.len() == 1
                        && !a.target[0].starts_with('@')
                        && self.lookup(&a.target[0]).is_some();
                    let is_row = a.target.len() == 2
                        && self.row.is_some()
                        && (a.target[0].eq_ignore_ascii_case("NEW")
                            || a.target[0].eq_ignore_ascii_case("OLD"));
                    if is_local
                        || is_row
                        || (a.target.len() == 1
                            && a.target[0].starts_with('@')
                            && !a.target[0].starts_with("@@"))
                    {
                        let v = self.eval(&a.value)?;
                        self.assign(&a.target, v)?;
                    } else {
                        // A system variable: the session's SET, with the value.
                        let v = self.eval(&a.value)?;
                        let text = format!("SET {} = {}", a.target_text, literal(&v));
                        let mut parsed = crate::parse::parse(&text)?;
                        let p = parsed.pop().ok_or_else(|| Error::Syntax(text.clone()))?;
                        self.host.run_statement(&p)?;
                    }
                }
                Ok(Flow::Next)
            }
            Psm::Open(name) => {
                let query = self.cursor(name)?.query;
                if self.cursor(name)?.rows.is_some() {
                    // 1325 ER_SP_CURSOR_ALREADY_OPEN.
                    return Err(sp_err(1325, b"24000", "Cursor is already open".into()));
                }
                let rows = match self.run_parsed(query)? {
                    QueryResult::Rows { rows, .. } => rows,
                    QueryResult::Ok { .. } => Vec::new(),
                };
                self.cursor_mut(name)?.rows = Some(rows.into());
                Ok(Flow::Next)
            }
            Psm::Close(name) => {
                let c = self.cursor_mut(name)?;
                if c.rows.take().is_none() {
                    return Err(cursor_not_open());
                }
                Ok(Flow::Next)
            }
            Psm::Fetch { cursor, into } => {
                let c = self.cursor_mut(cursor)?;
                let row = match c.rows.as_mut() {
                    None => return Err(cursor_not_open()),
                    Some(rows) => rows.pop_front(),
                };
                let Some(row) = row else {
                    return Err(no_data());
                };
                if row.len() != into.len() {
                    // 1328 ER_SP_WRONG_NO_OF_FETCH_ARGS.
                    return Err(sp_err(
                        1328,
                        b"HY000",
                        "Incorrect number of FETCH variables".into(),
                    ));
                }
                for (name, v) in into.iter().zip(row) {
                    self.assign(std::slice::from_ref(name), v)?;
                }
                Ok(Flow::Next)
            }
            Psm::Signal {
                resignal,
                cond,
                items,
            } => match self.signal(*resignal, cond.as_ref(), items)? {
                Some(e) => Err(e),
                None => Ok(Flow::Next),
            },
            Psm::SelectInto { query, into } => {
                let rows = match self.run_parsed(query)? {
                    QueryResult::Rows { rows, .. } => rows,
                    QueryResult::Ok { .. } => Vec::new(),
                };
                if rows.len() > 1 {
                    // 1172 ER_TOO_MANY_ROWS.
                    return Err(sp_err(
                        1172,
                        b"42000",
                        "Result consisted of more than one row".into(),
                    ));
                }
                let Some(row) = rows.into_iter().next() else {
                    // NOT FOUND: a handler may take it; else a warning.
                    let e = no_data();
                    if self.find_handler(&e).is_some() {
                        return Err(e);
                    }
                    self.host.warn(
                        "Warning",
                        1329,
                        "No data - zero rows fetched, selected, or processed".into(),
                    );
                    return Ok(Flow::Next);
                };
                if row.len() != into.len() {
                    // 1222 ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT.
                    return Err(sp_err(
                        1222,
                        b"21000",
                        "The used SELECT statements have a different number of columns".into(),
                    ));
                }
                for (name, v) in into.iter().zip(row) {
                    self.assign(std::slice::from_ref(name), v)?;
                }
                Ok(Flow::Next)
            }
            Psm::GetDiagnostics { condition, items } => {
                self.get_diagnostics(condition.as_ref(), items)?;
                Ok(Flow::Next)
            }
            Psm::Call { db, name, args } => {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    values.push(self.eval(a)?);
                }
                let mut out = Vec::new();
                let end = self.host.call(db.as_deref(), name, values, &mut out);
                if self.kind == ProgramKind::Procedure {
                    self.results.append(&mut out);
                } else if !out.is_empty() {
                    return Err(no_result_sets());
                }
                let end = end?;
                // OUT / INOUT arguments that are variables get their values.
                for (a, v) in args.iter().zip(end) {
                    match a {
                        Expr::Identifier(id)
                            if self.lookup(&id.value).is_some() || id.value.starts_with('@') =>
                        {
                            self.assign(std::slice::from_ref(&id.value), v)?;
                        }
                        _ => {}
                    }
                }
                Ok(Flow::Next)
            }
            Psm::Sql(parsed) => {
                let r = self.run_parsed(parsed)?;
                if let QueryResult::Rows { .. } = r {
                    if self.kind == ProgramKind::Procedure {
                        self.results.push(r);
                    } else {
                        return Err(no_result_sets());
                    }
                }
                Ok(Flow::Next)
            }
        }
    }

    fn block(&mut self, decls: &'p [Decl], body: &'p [Psm]) -> Result<Flow> {
        for d in decls {
            match d {
                Decl::Var { names, ty, default } => {
                    let sql_ty = crate::ddl::define::sql_type(ty).ok();
                    let v = match default {
                        Some(e) => self.eval(e)?,
                        None => Value::Null,
                    };
                    for n in names {
                        let value = convert(v.clone(), sql_ty, n)?;
                        self.frames
                            .last_mut()
                            .expect("a block pushed its frame")
                            .locals
                            .push(Local {
                                name: n.clone(),
                                value,
                                ty: sql_ty,
                            });
                    }
                }
                Decl::Condition { name, value } => self
                    .frames
                    .last_mut()
                    .expect("a block pushed its frame")
                    .conditions
                    .push((name.clone(), value.clone())),
                Decl::Cursor { name, query } => self
                    .frames
                    .last_mut()
                    .expect("a block pushed its frame")
                    .cursors
                    .push(Cursor {
                        name: name.clone(),
                        query,
                        rows: None,
                    }),
                Decl::Handler {
                    kind,
                    conditions,
                    body,
                } => self
                    .frames
                    .last_mut()
                    .expect("a block pushed its frame")
                    .handlers
                    .push(Handler {
                        kind: *kind,
                        conditions,
                        body,
                    }),
            }
        }
        self.exec_list(body)
    }

    fn repeat(
        &mut self,
        label: &Option<String>,
        body: &'p [Psm],
        cond: Option<&'p Expr>,
        until: Option<&'p Expr>,
    ) -> Result<Flow> {
        loop {
            self.host.check_interrupt()?;
            if let Some(c) = cond {
                if !self.truth(c)? {
                    return Ok(Flow::Next);
                }
            }
            match self.exec_list(body)? {
                Flow::Next => {}
                Flow::Leave(l) if label.as_ref().is_some_and(|x| x.eq_ignore_ascii_case(&l)) => {
                    return Ok(Flow::Next)
                }
                Flow::Iterate(l) if label.as_ref().is_some_and(|x| x.eq_ignore_ascii_case(&l)) => {
                    continue
                }
                f => return Ok(f),
            }
            if let Some(u) = until {
                if self.truth(u)? {
                    return Ok(Flow::Next);
                }
            }
        }
    }

    fn cursor(&self, name: &str) -> Result<&Cursor<'p>> {
        self.frames
            .iter()
            .rev()
            .flat_map(|f| f.cursors.iter())
            .find(|c| c.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| undefined_cursor(name))
    }

    fn cursor_mut(&mut self, name: &str) -> Result<&mut Cursor<'p>> {
        self.frames
            .iter_mut()
            .rev()
            .flat_map(|f| f.cursors.iter_mut())
            .find(|c| c.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| undefined_cursor(name))
    }

    /// GET DIAGNOSTICS: the diagnostics area is the condition being handled
    /// (one condition inside a handler, none elsewhere; ROW_COUNT is the last
    /// statement's, as ROW_COUNT() reads it).
    fn get_diagnostics(
        &mut self,
        condition: Option<&Expr>,
        items: &[(Vec<String>, String)],
    ) -> Result<()> {
        let current = self.handling.last().cloned();
        if let Some(n) = condition {
            let n = self.eval(n)?.to_i64().unwrap_or(0);
            let Some(e) = current.filter(|_| n == 1) else {
                // 1758 ER_DA_INVALID_CONDITION_NUMBER.
                return Err(sp_err(1758, b"35000", "Invalid condition number".into()));
            };
            let (code, state) = condition_of(&e);
            for (target, item) in items {
                let v = match item.as_str() {
                    "MESSAGE_TEXT" => Value::str(&message_of(&e)),
                    "MYSQL_ERRNO" => Value::Int(code as i64),
                    "RETURNED_SQLSTATE" => Value::Bytes(state.to_vec()),
                    "CLASS_ORIGIN" | "SUBCLASS_ORIGIN" => {
                        Value::str(if state.starts_with(b"HY") || code < 1000 {
                            "MySQL"
                        } else {
                            "ISO 9075"
                        })
                    }
                    _ => Value::str(""),
                };
                self.assign(target, v)?;
            }
            return Ok(());
        }
        for (target, item) in items {
            let v = match item.as_str() {
                "NUMBER" => Value::Int(current.is_some() as i64),
                "ROW_COUNT" => self.eval(&Expr::Function(ast::Function {
                    name: ast::ObjectName::from(vec![ast::Ident::new("ROW_COUNT")]),
                    uses_odbc_syntax: false,
                    parameters: ast::FunctionArguments::None,
                    args: ast::FunctionArguments::List(ast::FunctionArgumentList {
                        duplicate_treatment: None,
                        args: Vec::new(),
                        clauses: Vec::new(),
                    }),
                    filter: None,
                    null_treatment: None,
                    over: None,
                    within_group: Vec::new(),
                }))?,
                other => return Err(Error::Syntax(other.to_string())),
            };
            self.assign(target, v)?;
        }
        Ok(())
    }

    /// The error a SIGNAL / RESIGNAL raises.
    fn signal(
        &mut self,
        resignal: bool,
        cond: Option<&CondValue>,
        items: &[(String, Expr)],
    ) -> Result<Option<Error>> {
        let (mut code, state, mut message) = if resignal && cond.is_none() {
            let Some(e) = self.handling.last() else {
                // 1645 ER_RESIGNAL_WITHOUT_ACTIVE_HANDLER.
                return Ok(Some(sp_err(
                    1645,
                    b"0K000",
                    "RESIGNAL when handler not active".into(),
                )));
            };
            let (c, s) = condition_of(e);
            let m = message_of(e);
            (c, s, m)
        } else {
            let top = self.frames.len() - 1;
            let value = match cond {
                Some(CondValue::Name(n)) => self.condition(top, n).ok_or_else(|| {
                    // 1319 ER_SP_COND_MISMATCH.
                    sp_err(1319, b"42000", format!("Undefined CONDITION: {n}"))
                })?,
                Some(v) => v.clone(),
                None => CondValue::SqlState("45000".into()),
            };
            match value {
                CondValue::SqlState(s) => {
                    let mut st = [0u8; 5];
                    st.copy_from_slice(&s.as_bytes()[..5]);
                    let (code, message) = match &s[..2] {
                        "01" => (1642, "Unhandled user-defined warning condition"),
                        "02" => (1643, "Unhandled user-defined not found condition"),
                        _ => (1644, "Unhandled user-defined exception condition"),
                    };
                    (code, st, message.to_string())
                }
                CondValue::Errno(_) => {
                    // A condition declared FOR an error number cannot be
                    // SIGNALed (1646 ER_SIGNAL_BAD_CONDITION_TYPE).
                    return Ok(Some(sp_err(
                        1646,
                        b"HY000",
                        "SIGNAL/RESIGNAL can only use a CONDITION defined with SQLSTATE".into(),
                    )));
                }
                _ => return Err(Error::Syntax("SIGNAL".into())),
            }
        };
        for (name, e) in items {
            let v = self.eval(e)?;
            match name.as_str() {
                "MESSAGE_TEXT" => message = v.to_display(),
                "MYSQL_ERRNO" => {
                    code = v
                        .to_display()
                        .parse()
                        .ok()
                        .filter(|n| *n > 0)
                        .ok_or_else(|| {
                            // 1231 ER_WRONG_VALUE_FOR_VAR.
                            sp_err(
                                1231,
                                b"42000",
                                format!(
                                    "Variable 'MYSQL_ERRNO' can't be set to the value of '{}'",
                                    v.to_display()
                                ),
                            )
                        })?
                }
                "CLASS_ORIGIN" | "SUBCLASS_ORIGIN" | "CONSTRAINT_CATALOG" | "CONSTRAINT_SCHEMA"
                | "CONSTRAINT_NAME" | "CATALOG_NAME" | "SCHEMA_NAME" | "TABLE_NAME"
                | "COLUMN_NAME" | "CURSOR_NAME" => {}
                other => return Err(Error::Syntax(other.to_string())),
            }
        }
        if state.starts_with(b"01") && !resignal {
            // A warning: recorded, and the program goes on unless a handler
            // takes it.
            let e = sp_err(code, &state, message.clone());
            if self.find_handler(&e).is_none() {
                self.host.warn("Warning", code, message);
                return Ok(None);
            }
        }
        Ok(Some(sp_err(code, &state, message)))
    }
}

/// A trigger row's column (`NEW.c` / `OLD.c`): `None` when `which` is
/// neither (a table alias).
fn row_value(row: &TriggerRow, which: &str, col: &str) -> Result<Option<Value>> {
    let values = if which.eq_ignore_ascii_case("NEW") {
        match &row.new {
            Some(v) => v,
            None => return Err(no_new_row()),
        }
    } else if which.eq_ignore_ascii_case("OLD") {
        match &row.old {
            Some(v) => v,
            None => return Err(no_old_row()),
        }
    } else {
        return Ok(None);
    };
    let i = row
        .columns
        .iter()
        .position(|c| c.eq_ignore_ascii_case(col))
        .ok_or_else(|| Error::UnknownColumn {
            column: col.to_string(),
            context: which.to_string(),
        })?;
    Ok(Some(values[i].clone()))
}

/// 1363 ER_TRG_NO_SUCH_ROW_IN_TRG for NEW in a DELETE trigger.
pub(super) fn no_new_row() -> Error {
    sp_err(
        1363,
        b"HY000",
        "There is no NEW row in on DELETE trigger".into(),
    )
}

/// 1363 ER_TRG_NO_SUCH_ROW_IN_TRG for OLD in an INSERT trigger.
pub(super) fn no_old_row() -> Error {
    sp_err(
        1363,
        b"HY000",
        "There is no OLD row in on INSERT trigger".into(),
    )
}

fn undeclared(name: &str) -> Error {
    // 1193 ER_UNKNOWN_SYSTEM_VARIABLE is what MySQL reports for SET of an
    // undeclared name.
    sp_err(1193, b"HY000", format!("Unknown system variable '{name}'"))
}

fn undefined_cursor(name: &str) -> Error {
    // 1324 ER_SP_CURSOR_MISMATCH.
    sp_err(1324, b"42000", format!("Undefined CURSOR: {name}"))
}

fn cursor_not_open() -> Error {
    // 1326 ER_SP_CURSOR_NOT_OPEN.
    sp_err(1326, b"24000", "Cursor is not open".into())
}

/// 1415 ER_SP_NO_RETSET.
pub(super) fn no_result_sets() -> Error {
    sp_err(
        1415,
        b"0A000",
        "Not allowed to return a result set from a function".into(),
    )
}

/// A value converted to a local's declared type.
fn convert(v: Value, ty: Option<SqlType>, name: &str) -> Result<Value> {
    match ty {
        Some(t) => crate::types::coerce(v, t, name, 1),
        None => Ok(v),
    }
}
