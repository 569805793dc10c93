//! SQL/PSM: the statements of stored programs, parsed by hand.
//!
//! sqlparser 0.63 does not parse MySQL's compound statements (BEGIN ... END
//! with DECLARE, IF, LOOP, handlers, cursors), and it splits a text at every
//! `;`, which a routine body contains. So a text that starts a stored-program
//! statement (CREATE PROCEDURE / FUNCTION / TRIGGER, DROP, ALTER, CALL, and
//! the SHOW statements about them: [`routine_statement`]) is parsed here:
//!
//! - the text is tokenized once with sqlparser's tokenizer (MySQL's
//!   comments, quoting and executable comments as for any statement);
//! - the control-flow layer (this file) walks the tokens by hand;
//! - expressions and data types are handed to sqlparser's parser on the
//!   tokens that follow (`parse_expr`, `parse_data_type`), which reports how
//!   many it used;
//! - a plain SQL statement in a body is the text up to its `;` at paren
//!   depth 0, parsed by [`crate::parse::parse`] like a client's statement.
//!   `SELECT ... INTO var, ...` is first cut out of its text (sqlparser
//!   knows only `INTO table`).
//!
//! The client's DELIMITER is the client's business: the mariadb CLI and
//! mariadb-test send `CREATE PROCEDURE ... END` as one COM_QUERY without it.
//!
//! What is not parsed: labels on IF / CASE (MySQL has none either),
//! MariaDB's `CREATE OR REPLACE` and `FOR` loops, and a CREATE PROCEDURE /
//! FUNCTION / TRIGGER that is not the first statement of a multi-statement
//! text (sqlparser has split it at its `;`s by then).

use crate::catalog::routines::{DataAccess, RoutineKind, TriggerEvent, TriggerTiming};
use crate::parse::parser::{parse, CanyonDialect, Parsed};
use canyon_common::{Error, Result};
use sqlparser::ast::{DataType, Expr};
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

/// PROCEDURE, FUNCTION or TRIGGER (DROP and SHOW CREATE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    /// A stored procedure or function.
    Routine(RoutineKind),
    /// A trigger.
    Trigger,
}

/// A parameter's direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamMode {
    /// IN (a function's parameters are all IN).
    In,
    /// OUT.
    Out,
    /// INOUT.
    InOut,
}

/// A routine parameter.
#[derive(Debug, Clone)]
pub struct Param {
    /// IN, OUT or INOUT.
    pub mode: ParamMode,
    /// Its name.
    pub name: String,
    /// Its type.
    pub ty: DataType,
}

/// Characteristics as a CREATE or ALTER wrote them (`None`: not given).
#[derive(Debug, Clone, Default)]
pub struct Characteristics {
    /// \[NOT\] DETERMINISTIC.
    pub deterministic: Option<bool>,
    /// CONTAINS SQL / NO SQL / READS SQL DATA / MODIFIES SQL DATA.
    pub data_access: Option<DataAccess>,
    /// SQL SECURITY INVOKER (true) / DEFINER (false).
    pub security_invoker: Option<bool>,
    /// COMMENT.
    pub comment: Option<String>,
}

/// CREATE PROCEDURE / FUNCTION.
#[derive(Debug, Clone)]
pub struct CreateRoutine {
    /// PROCEDURE or FUNCTION.
    pub kind: RoutineKind,
    /// DEFINER = as written (`None`: the current user).
    pub definer: Option<String>,
    /// IF NOT EXISTS.
    pub if_not_exists: bool,
    /// `db.` before the name.
    pub db: Option<String>,
    /// The name.
    pub name: String,
    /// The parameters.
    pub params: Vec<Param>,
    /// The parameter list's text.
    pub params_text: String,
    /// RETURNS type's text (functions).
    pub returns_text: String,
    /// The characteristics.
    pub chars: Characteristics,
    /// The body's text.
    pub body_text: String,
}

/// CREATE TRIGGER.
#[derive(Debug, Clone)]
pub struct CreateTrigger {
    /// DEFINER = as written.
    pub definer: Option<String>,
    /// IF NOT EXISTS.
    pub if_not_exists: bool,
    /// `db.` before the name.
    pub db: Option<String>,
    /// The name.
    pub name: String,
    /// BEFORE or AFTER.
    pub timing: TriggerTiming,
    /// INSERT, UPDATE or DELETE.
    pub event: TriggerEvent,
    /// The table (`db.` part, if any, must be the trigger's).
    pub table: (Option<String>, String),
    /// FOLLOWS (true) or PRECEDES (false) another trigger.
    pub order: Option<(bool, String)>,
    /// The body's text.
    pub body_text: String,
}

/// A stored-program statement a client sends.
#[derive(Debug, Clone)]
pub enum RoutineStatement {
    /// CREATE PROCEDURE / FUNCTION.
    Create(Box<CreateRoutine>),
    /// CREATE TRIGGER.
    CreateTrigger(Box<CreateTrigger>),
    /// DROP PROCEDURE / FUNCTION / TRIGGER \[IF EXISTS\] \[db.\]name.
    Drop {
        /// What is dropped.
        kind: ObjectKind,
        /// IF EXISTS.
        if_exists: bool,
        /// `db.`.
        db: Option<String>,
        /// The name.
        name: String,
    },
    /// ALTER PROCEDURE / FUNCTION name characteristics.
    Alter {
        /// PROCEDURE or FUNCTION.
        kind: RoutineKind,
        /// `db.`.
        db: Option<String>,
        /// The name.
        name: String,
        /// What changes.
        chars: Characteristics,
    },
    /// CALL \[db.\]p\[(args)\].
    Call {
        /// `db.`.
        db: Option<String>,
        /// The name.
        name: String,
        /// The arguments.
        args: Vec<Expr>,
    },
    /// SHOW CREATE PROCEDURE / FUNCTION / TRIGGER.
    ShowCreate {
        /// What is shown.
        kind: ObjectKind,
        /// `db.`.
        db: Option<String>,
        /// The name.
        name: String,
    },
    /// SHOW PROCEDURE / FUNCTION STATUS \[LIKE 'p' | WHERE expr\].
    ShowStatus {
        /// PROCEDURE or FUNCTION.
        kind: RoutineKind,
        /// LIKE pattern.
        like: Option<String>,
        /// WHERE condition over the result's columns.
        filter: Option<Expr>,
    },
    /// SHOW TRIGGERS \[FROM db\] \[LIKE 'table' | WHERE expr\].
    ShowTriggers {
        /// FROM / IN db.
        db: Option<String>,
        /// LIKE pattern (on the table name).
        like: Option<String>,
        /// WHERE condition over the result's columns.
        filter: Option<Expr>,
    },
}

/// A condition a handler or SIGNAL names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CondValue {
    /// SQLSTATE 'xxxxx'.
    SqlState(String),
    /// A MySQL error number.
    Errno(u16),
    /// A condition declared with DECLARE ... CONDITION.
    Name(String),
    /// SQLEXCEPTION: any SQLSTATE not of class 00, 01 or 02.
    SqlException,
    /// SQLWARNING: class 01.
    SqlWarning,
    /// NOT FOUND: class 02.
    NotFound,
}

/// CONTINUE or EXIT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandlerKind {
    /// Execution goes on after the statement that raised the condition.
    Continue,
    /// The block that declared the handler ends.
    Exit,
}

/// A declaration at the start of a BEGIN block.
#[derive(Debug, Clone)]
pub enum Decl {
    /// DECLARE a, b type \[DEFAULT expr\].
    Var {
        /// Names.
        names: Vec<String>,
        /// Type.
        ty: Box<DataType>,
        /// DEFAULT.
        default: Option<Box<Expr>>,
    },
    /// DECLARE name CONDITION FOR value.
    Condition {
        /// Name.
        name: String,
        /// An SQLSTATE or error number.
        value: CondValue,
    },
    /// DECLARE name CURSOR FOR select.
    Cursor {
        /// Name.
        name: String,
        /// The SELECT.
        query: Box<Parsed>,
    },
    /// DECLARE {CONTINUE | EXIT} HANDLER FOR conditions statement.
    Handler {
        /// CONTINUE or EXIT.
        kind: HandlerKind,
        /// What it handles.
        conditions: Vec<CondValue>,
        /// Its statement.
        body: Box<Psm>,
    },
}

/// One assignment of a SET in a body.
#[derive(Debug, Clone)]
pub struct Assign {
    /// The target as written (`x`, `NEW.c`, `@u`, `@@s`, `GLOBAL v`).
    pub target: Vec<String>,
    /// The target's text, for a SET that is passed on.
    pub target_text: String,
    /// The value.
    pub value: Expr,
}

/// A statement of a stored program's body.
#[derive(Debug, Clone)]
pub enum Psm {
    /// \[label:\] BEGIN decls stmts END \[label\].
    Block {
        /// The label.
        label: Option<String>,
        /// The declarations.
        decls: Vec<Decl>,
        /// The statements.
        body: Vec<Psm>,
    },
    /// IF / ELSEIF / ELSE.
    If {
        /// (condition, statements) in order.
        arms: Vec<(Expr, Vec<Psm>)>,
        /// ELSE.
        otherwise: Option<Vec<Psm>>,
    },
    /// CASE \[operand\] WHEN ... END CASE.
    Case {
        /// The simple CASE's operand.
        operand: Option<Expr>,
        /// (WHEN value or condition, statements).
        arms: Vec<(Expr, Vec<Psm>)>,
        /// ELSE (without one, no match is error 1339).
        otherwise: Option<Vec<Psm>>,
    },
    /// \[label:\] LOOP ... END LOOP.
    Loop {
        /// The label.
        label: Option<String>,
        /// The statements.
        body: Vec<Psm>,
    },
    /// \[label:\] WHILE cond DO ... END WHILE.
    While {
        /// The label.
        label: Option<String>,
        /// The condition.
        cond: Expr,
        /// The statements.
        body: Vec<Psm>,
    },
    /// \[label:\] REPEAT ... UNTIL cond END REPEAT.
    Repeat {
        /// The label.
        label: Option<String>,
        /// The statements.
        body: Vec<Psm>,
        /// The condition.
        until: Expr,
    },
    /// LEAVE label.
    Leave(String),
    /// ITERATE label.
    Iterate(String),
    /// RETURN expr.
    Return(Expr),
    /// SET assignments (locals, NEW.col, and variables passed on).
    Set(Vec<Assign>),
    /// OPEN cursor.
    Open(String),
    /// FETCH cursor INTO vars.
    Fetch {
        /// The cursor.
        cursor: String,
        /// The variables.
        into: Vec<String>,
    },
    /// CLOSE cursor.
    Close(String),
    /// SIGNAL / RESIGNAL.
    Signal {
        /// RESIGNAL.
        resignal: bool,
        /// The condition (RESIGNAL may omit it).
        cond: Option<CondValue>,
        /// SET MESSAGE_TEXT = ..., MYSQL_ERRNO = ...
        items: Vec<(String, Expr)>,
    },
    /// SELECT ... INTO vars.
    SelectInto {
        /// The SELECT without its INTO.
        query: Box<Parsed>,
        /// The variables (locals, or `@user` ones).
        into: Vec<String>,
    },
    /// GET \[CURRENT | STACKED\] DIAGNOSTICS: statement items (`n = NUMBER`,
    /// `r = ROW_COUNT`) or `CONDITION n` items (`m = MESSAGE_TEXT`, ...).
    GetDiagnostics {
        /// CONDITION n (its expression); `None` for statement items.
        condition: Option<Expr>,
        /// (target, item name upper-cased).
        items: Vec<(Vec<String>, String)>,
    },
    /// CALL inside a body.
    Call {
        /// `db.`.
        db: Option<String>,
        /// The name.
        name: String,
        /// The arguments.
        args: Vec<Expr>,
    },
    /// Any other statement.
    Sql(Box<Parsed>),
}

/// Parses one stored-program statement from the start of `text`; returns it
/// and the text after it (past its `;`), which may hold more statements.
pub fn routine_statement(text: &str) -> Result<(RoutineStatement, String)> {
    let expanded = crate::parse::parser::expand_executable_comments(text);
    let text: &str = &expanded;
    let mut p = P::new(text)?;
    let stmt = p.top()?;
    if !p.at_end() && !p.eat(&Token::SemiColon) {
        return Err(p.syntax());
    }
    let rest = match p.toks.get(p.i) {
        Some(t) => text[p.offset(t.span.start)..].to_string(),
        None => String::new(),
    };
    Ok((stmt, rest))
}

/// Parses a stored program's body text (as a CREATE stored it).
pub fn parse_body(text: &str) -> Result<Psm> {
    let mut p = P::new(text)?;
    let body = p.stmt()?;
    p.eat(&Token::SemiColon);
    if !p.at_end() {
        return Err(p.syntax());
    }
    Ok(body)
}

/// Parses a parameter list's text (as a CREATE stored it).
pub fn parse_params(text: &str, kind: RoutineKind) -> Result<Vec<Param>> {
    let mut p = P::new(text)?;
    let params = p.param_list(kind)?;
    if !p.at_end() {
        return Err(p.syntax());
    }
    Ok(params)
}

/// Parses a data type's text (a RETURNS type).
pub fn parse_type(text: &str) -> Result<DataType> {
    let mut p = P::new(text)?;
    p.data_type()
}

/// The token cursor.
struct P<'a> {
    src: &'a str,
    toks: Vec<TokenWithSpan>,
    i: usize,
    /// Byte offset of each line's start.
    lines: Vec<usize>,
}

impl<'a> P<'a> {
    fn new(src: &'a str) -> Result<P<'a>> {
        let dialect = CanyonDialect::new(None);
        let mut toks = Tokenizer::new(&dialect, src)
            .tokenize_with_location()
            .map_err(|e| Error::Syntax(e.to_string()))?;
        crate::parse::escapes::mysql_string_escapes(&mut toks, src);
        crate::parse::user_vars::join_quoted_user_variables(&mut toks);
        let toks = toks
            .into_iter()
            .filter(|t| !matches!(t.token, Token::Whitespace(_) | Token::EOF))
            .collect();
        let mut lines = vec![0];
        lines.extend(src.match_indices('\n').map(|(i, _)| i + 1));
        Ok(P {
            src,
            toks,
            i: 0,
            lines,
        })
    }

    /// The byte offset of a token location.
    fn offset(&self, loc: sqlparser::tokenizer::Location) -> usize {
        let Some(&start) = self.lines.get((loc.line as usize).saturating_sub(1)) else {
            return self.src.len();
        };
        let line = &self.src[start..];
        start
            + line
                .char_indices()
                .nth((loc.column as usize).saturating_sub(1))
                .map_or(line.len(), |(i, _)| i)
    }

    fn start_of(&self, i: usize) -> usize {
        self.toks
            .get(i)
            .map_or(self.src.len(), |t| self.offset(t.span.start))
    }

    fn end_of(&self, i: usize) -> usize {
        self.toks
            .get(i)
            .map_or(self.src.len(), |t| self.offset(t.span.end))
    }

    fn at_end(&self) -> bool {
        self.i >= self.toks.len()
    }

    fn syntax(&self) -> Error {
        let at = self.start_of(self.i);
        let near: String = self.src[at..].chars().take(80).collect();
        Error::Syntax(near)
    }

    /// The word at `i + k`, upper-cased (unquoted words only).
    fn word(&self, k: usize) -> Option<String> {
        match self.toks.get(self.i + k).map(|t| &t.token) {
            Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
            _ => None,
        }
    }

    fn is(&self, w: &str) -> bool {
        self.word(0).as_deref() == Some(w)
    }

    fn eat_word(&mut self, w: &str) -> bool {
        if self.is(w) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn eat_words(&mut self, ws: &[&str]) -> bool {
        if ws
            .iter()
            .enumerate()
            .all(|(k, w)| self.word(k).as_deref() == Some(*w))
        {
            self.i += ws.len();
            true
        } else {
            false
        }
    }

    fn expect_word(&mut self, w: &str) -> Result<()> {
        if self.eat_word(w) {
            Ok(())
        } else {
            Err(self.syntax())
        }
    }

    fn eat(&mut self, t: &Token) -> bool {
        if self.toks.get(self.i).map(|x| &x.token) == Some(t) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, t: &Token) -> Result<()> {
        if self.eat(t) {
            Ok(())
        } else {
            Err(self.syntax())
        }
    }

    /// An identifier (quoted or not).
    fn ident(&mut self) -> Result<String> {
        match self.toks.get(self.i).map(|t| &t.token) {
            Some(Token::Word(w)) => {
                let v = w.value.clone();
                self.i += 1;
                Ok(v)
            }
            _ => Err(self.syntax()),
        }
    }

    /// `[db.]name`.
    fn object_name(&mut self) -> Result<(Option<String>, String)> {
        let first = self.ident()?;
        if self.eat(&Token::Period) {
            let second = self.ident()?;
            Ok((Some(first), second))
        } else {
            Ok((None, first))
        }
    }

    /// A string literal.
    fn string(&mut self) -> Result<String> {
        match self.toks.get(self.i).map(|t| &t.token) {
            Some(Token::SingleQuotedString(s)) | Some(Token::DoubleQuotedString(s)) => {
                let v = s.clone();
                self.i += 1;
                Ok(v)
            }
            _ => Err(self.syntax()),
        }
    }

    /// The index of the next `;` at paren depth 0 (or the end).
    fn statement_end(&self) -> usize {
        let mut depth = 0i32;
        for (k, t) in self.toks.iter().enumerate().skip(self.i) {
            match t.token {
                Token::LParen => depth += 1,
                Token::RParen => depth -= 1,
                Token::SemiColon if depth <= 0 => return k,
                _ => {}
            }
        }
        self.toks.len()
    }

    /// Runs one of sqlparser's parse functions on the tokens up to the next
    /// `;`, and steps over the tokens it used.
    fn with_sqlparser<T>(
        &mut self,
        f: impl FnOnce(&mut Parser) -> std::result::Result<T, sqlparser::parser::ParserError>,
    ) -> Result<T> {
        let end = self.statement_end();
        let dialect = CanyonDialect::new(None);
        let mut parser = Parser::new(&dialect)
            .with_recursion_limit(crate::parse::parser::RECURSION_LIMIT)
            .with_tokens_with_locations(self.toks[self.i..end].to_vec());
        match f(&mut parser) {
            Ok(v) => {
                self.i += parser.index();
                Ok(v)
            }
            Err(_) => Err(self.syntax()),
        }
    }

    fn expr(&mut self) -> Result<Expr> {
        self.with_sqlparser(|p| p.parse_expr())
    }

    fn data_type(&mut self) -> Result<DataType> {
        let ty = self.with_sqlparser(|p| p.parse_data_type())?;
        // CHARSET / CHARACTER SET / COLLATE after a string type: accepted,
        // the type keeps the server's collation.
        loop {
            if self.eat_word("CHARSET")
                || self.eat_words(&["CHARACTER", "SET"])
                || self.eat_word("COLLATE")
            {
                self.ident()?;
            } else {
                break;
            }
        }
        Ok(ty)
    }

    // ---- top-level statements ---------------------------------------------------

    fn top(&mut self) -> Result<RoutineStatement> {
        if self.eat_word("CALL") {
            let (db, name, args) = self.call_rest()?;
            return Ok(RoutineStatement::Call { db, name, args });
        }
        if self.eat_word("DROP") {
            let kind = self.object_kind()?;
            let if_exists = self.eat_words(&["IF", "EXISTS"]);
            let (db, name) = self.object_name()?;
            return Ok(RoutineStatement::Drop {
                kind,
                if_exists,
                db,
                name,
            });
        }
        if self.eat_word("ALTER") {
            let kind = match self.object_kind()? {
                ObjectKind::Routine(k) => k,
                ObjectKind::Trigger => return Err(self.syntax()),
            };
            let (db, name) = self.object_name()?;
            let chars = self.characteristics()?;
            return Ok(RoutineStatement::Alter {
                kind,
                db,
                name,
                chars,
            });
        }
        if self.eat_word("SHOW") {
            return self.show();
        }
        self.expect_word("CREATE")?;
        let definer = self.definer()?;
        self.eat_word("AGGREGATE");
        if self.eat_word("TRIGGER") {
            return self.create_trigger(definer);
        }
        let kind = match self.object_kind()? {
            ObjectKind::Routine(k) => k,
            ObjectKind::Trigger => return Err(self.syntax()),
        };
        let if_not_exists = self.eat_words(&["IF", "NOT", "EXISTS"]);
        let (db, name) = self.object_name()?;
        if !matches!(self.toks.get(self.i).map(|t| &t.token), Some(Token::LParen)) {
            return Err(self.syntax());
        }
        let open = self.i;
        let close = self.matching_paren(open)?;
        let params_text = self.src[self.end_of(open)..self.start_of(close)].to_string();
        self.i = open + 1;
        let params = self.param_list(kind)?;
        if self.i != close {
            return Err(self.syntax());
        }
        self.i = close + 1;
        let mut returns_text = String::new();
        if kind == RoutineKind::Function {
            self.expect_word("RETURNS")?;
            let from = self.start_of(self.i);
            self.data_type()?;
            returns_text = self.src[from..self.end_of(self.i - 1)].to_string();
        }
        let chars = self.characteristics()?;
        let from = self.start_of(self.i);
        self.stmt()?;
        let body_text = self.src[from..self.end_of(self.i - 1)].to_string();
        let _ = params;
        Ok(RoutineStatement::Create(Box::new(CreateRoutine {
            kind,
            definer,
            if_not_exists,
            db,
            name,
            params: parse_params(&params_text, kind)?,
            params_text,
            returns_text,
            chars,
            body_text,
        })))
    }

    fn object_kind(&mut self) -> Result<ObjectKind> {
        if self.eat_word("PROCEDURE") {
            Ok(ObjectKind::Routine(RoutineKind::Procedure))
        } else if self.eat_word("FUNCTION") {
            Ok(ObjectKind::Routine(RoutineKind::Function))
        } else if self.eat_word("TRIGGER") {
            Ok(ObjectKind::Trigger)
        } else {
            Err(self.syntax())
        }
    }

    fn matching_paren(&self, open: usize) -> Result<usize> {
        let mut depth = 0;
        for (k, t) in self.toks.iter().enumerate().skip(open) {
            match t.token {
                Token::LParen => depth += 1,
                Token::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(k);
                    }
                }
                _ => {}
            }
        }
        Err(self.syntax())
    }

    /// `DEFINER = user` (`'u'@'h'`, `` `u`@`h` ``, `u@h`, CURRENT_USER[()]).
    fn definer(&mut self) -> Result<Option<String>> {
        if !self.eat_word("DEFINER") {
            return Ok(None);
        }
        self.expect(&Token::Eq)?;
        if self.eat_word("CURRENT_USER") {
            if self.eat(&Token::LParen) {
                self.expect(&Token::RParen)?;
            }
            return Ok(None);
        }
        let user = match self.toks.get(self.i).map(|t| &t.token) {
            Some(Token::Word(w)) => w.value.clone(),
            Some(Token::SingleQuotedString(s)) | Some(Token::DoubleQuotedString(s)) => s.clone(),
            _ => return Err(self.syntax()),
        };
        self.i += 1;
        // The host: `@'h'` tokenizes as a word starting with `@`, or as `@`
        // and a string.
        let mut host = "%".to_string();
        match self.toks.get(self.i).map(|t| &t.token) {
            Some(Token::AtSign) => {
                self.i += 1;
                host = match self.toks.get(self.i).map(|t| &t.token) {
                    Some(Token::Word(w)) => w.value.clone(),
                    Some(Token::SingleQuotedString(s)) | Some(Token::DoubleQuotedString(s)) => {
                        s.clone()
                    }
                    _ => return Err(self.syntax()),
                };
                self.i += 1;
            }
            Some(Token::Word(w)) if w.value.starts_with('@') => {
                host = w.value[1..]
                    .trim_matches(|c| c == '\'' || c == '`' || c == '"')
                    .to_string();
                self.i += 1;
            }
            _ => {}
        }
        Ok(Some(format!("{user}@{host}")))
    }

    fn param_list(&mut self, kind: RoutineKind) -> Result<Vec<Param>> {
        let mut out = Vec::new();
        if self.at_end() || matches!(self.toks[self.i].token, Token::RParen) {
            return Ok(out);
        }
        loop {
            let mode = if self.eat_word("INOUT") {
                ParamMode::InOut
            } else if self.eat_word("OUT") {
                ParamMode::Out
            } else {
                self.eat_word("IN");
                ParamMode::In
            };
            if kind == RoutineKind::Function && mode != ParamMode::In {
                return Err(self.syntax());
            }
            let name = self.ident()?;
            let ty = self.param_type()?;
            out.push(Param { mode, name, ty });
            if !self.eat(&Token::Comma) {
                break;
            }
        }
        Ok(out)
    }

    /// A parameter's type: parsed on the tokens up to the next `,` or `)`
    /// at depth 0 (sqlparser's type parser reads nothing past it).
    fn param_type(&mut self) -> Result<DataType> {
        self.data_type()
    }

    fn characteristics(&mut self) -> Result<Characteristics> {
        let mut c = Characteristics::default();
        loop {
            if self.eat_word("COMMENT") {
                c.comment = Some(self.string()?);
            } else if self.eat_words(&["LANGUAGE", "SQL"]) {
            } else if self.eat_words(&["NOT", "DETERMINISTIC"]) {
                c.deterministic = Some(false);
            } else if self.eat_word("DETERMINISTIC") {
                c.deterministic = Some(true);
            } else if self.eat_words(&["CONTAINS", "SQL"]) {
                c.data_access = Some(DataAccess::ContainsSql);
            } else if self.eat_words(&["NO", "SQL"]) {
                c.data_access = Some(DataAccess::NoSql);
            } else if self.eat_words(&["READS", "SQL", "DATA"]) {
                c.data_access = Some(DataAccess::ReadsSqlData);
            } else if self.eat_words(&["MODIFIES", "SQL", "DATA"]) {
                c.data_access = Some(DataAccess::ModifiesSqlData);
            } else if self.eat_words(&["SQL", "SECURITY"]) {
                if self.eat_word("DEFINER") {
                    c.security_invoker = Some(false);
                } else {
                    self.expect_word("INVOKER")?;
                    c.security_invoker = Some(true);
                }
            } else {
                return Ok(c);
            }
        }
    }

    fn create_trigger(&mut self, definer: Option<String>) -> Result<RoutineStatement> {
        let if_not_exists = self.eat_words(&["IF", "NOT", "EXISTS"]);
        let (db, name) = self.object_name()?;
        let timing = if self.eat_word("BEFORE") {
            TriggerTiming::Before
        } else {
            self.expect_word("AFTER")?;
            TriggerTiming::After
        };
        let event = if self.eat_word("INSERT") {
            TriggerEvent::Insert
        } else if self.eat_word("UPDATE") {
            TriggerEvent::Update
        } else {
            self.expect_word("DELETE")?;
            TriggerEvent::Delete
        };
        self.expect_word("ON")?;
        let table = self.object_name()?;
        self.expect_word("FOR")?;
        self.expect_word("EACH")?;
        self.expect_word("ROW")?;
        let order = if self.eat_word("FOLLOWS") {
            Some((true, self.ident()?))
        } else if self.eat_word("PRECEDES") {
            Some((false, self.ident()?))
        } else {
            None
        };
        let from = self.start_of(self.i);
        self.stmt()?;
        let body_text = self.src[from..self.end_of(self.i - 1)].to_string();
        Ok(RoutineStatement::CreateTrigger(Box::new(CreateTrigger {
            definer,
            if_not_exists,
            db,
            name,
            timing,
            event,
            table,
            order,
            body_text,
        })))
    }

    fn show(&mut self) -> Result<RoutineStatement> {
        if self.eat_word("CREATE") {
            let kind = self.object_kind()?;
            let (db, name) = self.object_name()?;
            return Ok(RoutineStatement::ShowCreate { kind, db, name });
        }
        if self.eat_word("TRIGGERS") {
            let db = if self.eat_word("FROM") || self.eat_word("IN") {
                Some(self.ident()?)
            } else {
                None
            };
            let (like, filter) = self.show_filter()?;
            return Ok(RoutineStatement::ShowTriggers { db, like, filter });
        }
        let kind = match self.object_kind()? {
            ObjectKind::Routine(k) => k,
            ObjectKind::Trigger => return Err(self.syntax()),
        };
        self.expect_word("STATUS")?;
        let (like, filter) = self.show_filter()?;
        Ok(RoutineStatement::ShowStatus { kind, like, filter })
    }

    /// `[LIKE 'p' | WHERE expr]` after a SHOW.
    fn show_filter(&mut self) -> Result<(Option<String>, Option<Expr>)> {
        if self.eat_word("LIKE") {
            Ok((Some(self.string()?), None))
        } else if self.eat_word("WHERE") {
            Ok((None, Some(self.expr()?)))
        } else {
            Ok((None, None))
        }
    }

    fn call_rest(&mut self) -> Result<(Option<String>, String, Vec<Expr>)> {
        let (db, name) = self.object_name()?;
        let mut args = Vec::new();
        if self.eat(&Token::LParen) && !self.eat(&Token::RParen) {
            loop {
                args.push(self.expr()?);
                if self.eat(&Token::RParen) {
                    break;
                }
                self.expect(&Token::Comma)?;
            }
        }
        Ok((db, name, args))
    }

    // ---- body statements ----------------------------------------------------------

    /// Whether the next word ends a statement list.
    fn at_list_end(&self) -> bool {
        self.at_end()
            || matches!(
                self.word(0).as_deref(),
                Some("END" | "ELSE" | "ELSEIF" | "UNTIL" | "WHEN")
            )
    }

    /// Statements each ended by `;`, up to END / ELSE / ELSEIF / UNTIL / WHEN.
    fn stmt_list(&mut self) -> Result<Vec<Psm>> {
        let mut out = Vec::new();
        while !self.at_list_end() {
            out.push(self.stmt()?);
            self.expect(&Token::SemiColon)?;
        }
        Ok(out)
    }

    /// `END [word] [label]` after a loop or block.
    fn end_label(&mut self, label: &Option<String>) -> Result<()> {
        if let Some(Token::Word(w)) = self.toks.get(self.i).map(|t| &t.token) {
            if label
                .as_ref()
                .is_some_and(|l| l.eq_ignore_ascii_case(&w.value))
            {
                self.i += 1;
            }
        }
        Ok(())
    }

    fn stmt(&mut self) -> Result<Psm> {
        // `label:` before BEGIN / LOOP / WHILE / REPEAT.
        let mut label = None;
        if matches!(
            self.toks.get(self.i + 1).map(|t| &t.token),
            Some(Token::Colon)
        ) && matches!(
            self.toks.get(self.i).map(|t| &t.token),
            Some(Token::Word(_))
        ) {
            label = Some(self.ident()?);
            self.i += 1;
            if !matches!(
                self.word(0).as_deref(),
                Some("BEGIN" | "LOOP" | "WHILE" | "REPEAT")
            ) {
                return Err(self.syntax());
            }
        }
        let w = self.word(0).unwrap_or_default();
        match w.as_str() {
            "BEGIN" => {
                self.i += 1;
                self.eat_words(&["NOT", "ATOMIC"]);
                let mut decls = Vec::new();
                while self.is("DECLARE") {
                    decls.push(self.decl()?);
                    self.expect(&Token::SemiColon)?;
                }
                let body = self.stmt_list()?;
                self.expect_word("END")?;
                self.end_label(&label)?;
                Ok(Psm::Block { label, decls, body })
            }
            "LOOP" => {
                self.i += 1;
                let body = self.stmt_list()?;
                self.expect_word("END")?;
                self.expect_word("LOOP")?;
                self.end_label(&label)?;
                Ok(Psm::Loop { label, body })
            }
            "WHILE" => {
                self.i += 1;
                let cond = self.expr()?;
                self.expect_word("DO")?;
                let body = self.stmt_list()?;
                self.expect_word("END")?;
                self.expect_word("WHILE")?;
                self.end_label(&label)?;
                Ok(Psm::While { label, cond, body })
            }
            "REPEAT" => {
                self.i += 1;
                let body = self.stmt_list()?;
                self.expect_word("UNTIL")?;
                let until = self.expr()?;
                self.expect_word("END")?;
                self.expect_word("REPEAT")?;
                self.end_label(&label)?;
                Ok(Psm::Repeat { label, body, until })
            }
            "IF" => {
                self.i += 1;
                let mut arms = Vec::new();
                let cond = self.expr()?;
                self.expect_word("THEN")?;
                arms.push((cond, self.stmt_list()?));
                let mut otherwise = None;
                loop {
                    if self.eat_word("ELSEIF") {
                        let cond = self.expr()?;
                        self.expect_word("THEN")?;
                        arms.push((cond, self.stmt_list()?));
                    } else if self.eat_word("ELSE") {
                        otherwise = Some(self.stmt_list()?);
                    } else {
                        break;
                    }
                }
                self.expect_word("END")?;
                self.expect_word("IF")?;
                Ok(Psm::If { arms, otherwise })
            }
            "CASE" => {
                self.i += 1;
                let operand = if self.is("WHEN") {
                    None
                } else {
                    Some(self.expr()?)
                };
                let mut arms = Vec::new();
                while self.eat_word("WHEN") {
                    let v = self.expr()?;
                    self.expect_word("THEN")?;
                    arms.push((v, self.stmt_list()?));
                }
                let otherwise = if self.eat_word("ELSE") {
                    Some(self.stmt_list()?)
                } else {
                    None
                };
                self.expect_word("END")?;
                self.expect_word("CASE")?;
                Ok(Psm::Case {
                    operand,
                    arms,
                    otherwise,
                })
            }
            "LEAVE" => {
                self.i += 1;
                Ok(Psm::Leave(self.ident()?))
            }
            "ITERATE" => {
                self.i += 1;
                Ok(Psm::Iterate(self.ident()?))
            }
            "RETURN" => {
                self.i += 1;
                Ok(Psm::Return(self.expr()?))
            }
            "OPEN" => {
                self.i += 1;
                Ok(Psm::Open(self.ident()?))
            }
            "CLOSE" => {
                self.i += 1;
                Ok(Psm::Close(self.ident()?))
            }
            "FETCH" => {
                self.i += 1;
                if self.eat_word("NEXT") {
                    self.expect_word("FROM")?;
                } else {
                    self.eat_word("FROM");
                }
                let cursor = self.ident()?;
                self.expect_word("INTO")?;
                let mut into = vec![self.ident()?];
                while self.eat(&Token::Comma) {
                    into.push(self.ident()?);
                }
                Ok(Psm::Fetch { cursor, into })
            }
            "SIGNAL" | "RESIGNAL" => {
                self.i += 1;
                let resignal = w == "RESIGNAL";
                let cond = if self.eat_word("SQLSTATE") {
                    self.eat_word("VALUE");
                    Some(CondValue::SqlState(self.sqlstate()?))
                } else if !self.at_end()
                    && !self.is("SET")
                    && !matches!(self.toks[self.i].token, Token::SemiColon)
                {
                    Some(CondValue::Name(self.ident()?))
                } else {
                    None
                };
                if cond.is_none() && !resignal {
                    return Err(self.syntax());
                }
                let mut items = Vec::new();
                if self.eat_word("SET") {
                    loop {
                        let name = self.ident()?.to_ascii_uppercase();
                        self.expect(&Token::Eq)?;
                        items.push((name, self.expr()?));
                        if !self.eat(&Token::Comma) {
                            break;
                        }
                    }
                }
                Ok(Psm::Signal {
                    resignal,
                    cond,
                    items,
                })
            }
            "SET" => self.set(),
            "GET"
                if matches!(
                    self.word(1).as_deref(),
                    Some("DIAGNOSTICS" | "CURRENT" | "STACKED")
                ) =>
            {
                self.i += 1;
                if !self.eat_word("CURRENT") {
                    self.eat_word("STACKED");
                }
                self.expect_word("DIAGNOSTICS")?;
                let condition = if self.eat_word("CONDITION") {
                    Some(self.expr()?)
                } else {
                    None
                };
                let mut items = Vec::new();
                loop {
                    let mut target = vec![self.ident()?];
                    while self.eat(&Token::Period) {
                        target.push(self.ident()?);
                    }
                    self.expect(&Token::Eq)?;
                    items.push((target, self.ident()?.to_ascii_uppercase()));
                    if !self.eat(&Token::Comma) {
                        break;
                    }
                }
                Ok(Psm::GetDiagnostics { condition, items })
            }
            "CALL" => {
                self.i += 1;
                let (db, name, args) = self.call_rest()?;
                Ok(Psm::Call { db, name, args })
            }
            "DECLARE" => Err(Error::Sql {
                code: 1064,
                sqlstate: *b"42000",
                message: "DECLARE is allowed only at the start of a BEGIN ... END block".into(),
            }),
            _ => self.plain(),
        }
    }

    fn sqlstate(&mut self) -> Result<String> {
        let s = self.string()?;
        if s.len() != 5 || s.starts_with("00") {
            // 1407 ER_SP_BAD_SQLSTATE.
            return Err(Error::Sql {
                code: 1407,
                sqlstate: *b"42000",
                message: format!("Bad SQLSTATE: '{s}'"),
            });
        }
        Ok(s)
    }

    fn cond_value(&mut self) -> Result<CondValue> {
        if self.eat_word("SQLSTATE") {
            self.eat_word("VALUE");
            return Ok(CondValue::SqlState(self.sqlstate()?));
        }
        if self.eat_word("SQLEXCEPTION") {
            return Ok(CondValue::SqlException);
        }
        if self.eat_word("SQLWARNING") {
            return Ok(CondValue::SqlWarning);
        }
        if self.eat_words(&["NOT", "FOUND"]) {
            return Ok(CondValue::NotFound);
        }
        if let Some(Token::Number(n, _)) = self.toks.get(self.i).map(|t| &t.token) {
            let n: u16 = n.parse().map_err(|_| self.syntax())?;
            self.i += 1;
            return Ok(CondValue::Errno(n));
        }
        Ok(CondValue::Name(self.ident()?))
    }

    fn decl(&mut self) -> Result<Decl> {
        self.expect_word("DECLARE")?;
        if self.is("CONTINUE") || self.is("EXIT") || self.is("UNDO") {
            let kind = if self.eat_word("CONTINUE") {
                HandlerKind::Continue
            } else if self.eat_word("EXIT") {
                HandlerKind::Exit
            } else {
                return Err(Error::Unsupported("UNDO handlers".into()));
            };
            self.expect_word("HANDLER")?;
            self.expect_word("FOR")?;
            let mut conditions = vec![self.cond_value()?];
            while self.eat(&Token::Comma) {
                conditions.push(self.cond_value()?);
            }
            let body = Box::new(self.stmt()?);
            return Ok(Decl::Handler {
                kind,
                conditions,
                body,
            });
        }
        let first = self.ident()?;
        if self.eat_word("CONDITION") {
            self.expect_word("FOR")?;
            let value = self.cond_value()?;
            if !matches!(value, CondValue::SqlState(_) | CondValue::Errno(_)) {
                return Err(self.syntax());
            }
            return Ok(Decl::Condition { name: first, value });
        }
        if self.eat_word("CURSOR") {
            self.expect_word("FOR")?;
            let query = self.plain()?;
            let Psm::Sql(query) = query else {
                return Err(self.syntax());
            };
            return Ok(Decl::Cursor { name: first, query });
        }
        let mut names = vec![first];
        while self.eat(&Token::Comma) {
            names.push(self.ident()?);
        }
        let ty = Box::new(self.data_type()?);
        let default = if self.eat_word("DEFAULT") {
            Some(Box::new(self.expr()?))
        } else {
            None
        };
        Ok(Decl::Var { names, ty, default })
    }

    fn set(&mut self) -> Result<Psm> {
        self.expect_word("SET")?;
        let mut out = Vec::new();
        loop {
            let from = self.start_of(self.i);
            let mut target = Vec::new();
            if self.eat_word("GLOBAL") || self.eat_word("SESSION") || self.eat_word("LOCAL") {
                target.push(self.word_text(self.i - 1));
            }
            target.push(self.ident()?);
            while self.eat(&Token::Period) {
                target.push(self.ident()?);
            }
            let target_text = self.src[from..self.end_of(self.i - 1)].to_string();
            if !self.eat(&Token::Eq) && !self.eat(&Token::Assignment) {
                return Err(self.syntax());
            }
            let value = self.expr()?;
            out.push(Assign {
                target,
                target_text,
                value,
            });
            if !self.eat(&Token::Comma) {
                break;
            }
        }
        Ok(Psm::Set(out))
    }

    fn word_text(&self, i: usize) -> String {
        match self.toks.get(i).map(|t| &t.token) {
            Some(Token::Word(w)) => w.value.clone(),
            _ => String::new(),
        }
    }

    /// A plain statement: the text up to the next `;` at depth 0, parsed as
    /// a client's statement; a SELECT's INTO list is cut out first.
    fn plain(&mut self) -> Result<Psm> {
        let end = self.statement_end();
        if end == self.i {
            return Err(self.syntax());
        }
        let from = self.start_of(self.i);
        let to = self.end_of(end - 1);
        let starts_select = self.is("SELECT") || self.is("WITH");
        let mut into = Vec::new();
        let mut text = self.src[from..to].to_string();
        if starts_select {
            let mut depth = 0;
            let mut k = self.i;
            while k < end {
                match &self.toks[k].token {
                    Token::LParen => depth += 1,
                    Token::RParen => depth -= 1,
                    Token::Word(w)
                        if depth == 0
                            && w.quote_style.is_none()
                            && w.value.eq_ignore_ascii_case("INTO") =>
                    {
                        let cut_from = self.start_of(k);
                        let mut j = k + 1;
                        loop {
                            match self.toks.get(j).map(|t| &t.token) {
                                Some(Token::Word(v)) => into.push(v.value.clone()),
                                _ => return Err(self.syntax()),
                            }
                            j += 1;
                            if matches!(self.toks.get(j).map(|t| &t.token), Some(Token::Comma)) {
                                j += 1;
                            } else {
                                break;
                            }
                        }
                        let cut_to = self.end_of(j - 1);
                        text = format!("{} {}", &self.src[from..cut_from], &self.src[cut_to..to]);
                        break;
                    }
                    _ => {}
                }
                k += 1;
            }
        }
        self.i = end;
        let mut parsed = parse(&text)?;
        if parsed.len() != 1 {
            return Err(Error::Syntax(text));
        }
        let parsed = Box::new(parsed.pop().expect("one statement, checked above"));
        if into.is_empty() {
            Ok(Psm::Sql(parsed))
        } else {
            Ok(Psm::SelectInto {
                query: parsed,
                into,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_parse_into_compound_statements() {
        let body = parse_body(
            "lbl: BEGIN
               DECLARE a, b INT DEFAULT 1;
               DECLARE c CURSOR FOR SELECT x FROM t;
               DECLARE CONTINUE HANDLER FOR NOT FOUND, SQLSTATE '23000' SET a = 0;
               IF a > 1 THEN LEAVE lbl; ELSEIF a < 0 THEN SET b = 2; ELSE SELECT 1; END IF;
               SELECT x, y INTO a, b FROM t LIMIT 1;
               SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'm';
             END lbl",
        )
        .expect("parses");
        let Psm::Block { label, decls, body } = body else {
            panic!("a block")
        };
        assert_eq!(label.as_deref(), Some("lbl"));
        assert_eq!(decls.len(), 3);
        assert!(matches!(&decls[2], Decl::Handler { conditions, .. } if conditions.len() == 2));
        assert_eq!(body.len(), 3);
        assert!(matches!(&body[1], Psm::SelectInto { into, .. } if into == &["a", "b"]));
        assert!(matches!(
            body[2],
            Psm::Signal {
                resignal: false,
                ..
            }
        ));
        for bad in [
            "BEGIN SELECT 1",
            "BEGIN IF 1 THEN SELECT 1; END; END",
            "BEGIN SELECT 1; DECLARE a INT; END",
            "x: SELECT 1",
        ] {
            assert!(parse_body(bad).is_err(), "{bad}");
        }
    }
}
