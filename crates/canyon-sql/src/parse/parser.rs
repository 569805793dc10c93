//! Parsing: MySQL executable comments, sqlparser (MySQL dialect, pinned
//! version), and the few account statements sqlparser 0.63 does not parse.
//!
//! Errors become [`Error::Syntax`] carrying the text near the error, as MySQL's
//! 1064 message shows it; sqlparser's recursion limit becomes [`Error::TooDeep`].
//! Every text passes [`crate::parse::limits`]' gate on its way through [`parse_with`]:
//! its shape, its memory, its whitespace and, once parsed, its depth.
//!
//! The hand-written scanners here (account statements, `SET NAMES` lists,
//! `ANALYZE`) compare ASCII bytes but slice the text only where an ASCII byte
//! was matched, so no input can split a character (`/*ñ*/ SELECT 1` once did).

use super::spellings::{
    alter_table_spellings, backslash_n_null, create_fulltext_index, drop_tables, interval_units,
    real_type_spellings, set_character_set, set_names_in_list, window_from_last, window_spellings,
};
use crate::catalog::budget::{MemoryBudget, Reservation};
use crate::catalog::privileges::{PrivSpec, Privs};
use crate::parse::limits;
use canyon_common::{Error, Result};
use sqlparser::ast::{BinaryOperator, Expr, Statement};
use sqlparser::dialect::{Dialect, MySqlDialect, Precedence};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, Tokenizer};
use std::cell::{Cell, RefCell};

/// The server version executable comments are compared against (`/*!80000 ... */`).
const VERSION_ID: u32 = 80036;

/// sqlparser's nesting limit. Deeper statements are refused with a parse error.
pub const RECURSION_LIMIT: usize = 64;

/// How often (in calls of the dialect's hooks, about one per expression) a
/// parse asks its [`Interrupt`] whether to stop.
const INTERRUPT_EVERY: u32 = 1024;

/// Asked while a statement parses whether it must stop: KILL QUERY and
/// `max_execution_time` apply to parse time too (a 16 MB statement takes
/// seconds). Returns the error to stop with.
pub type Interrupt = Box<dyn Fn() -> Option<Error>>;

/// sqlparser's MySQL dialect with MySQL's operator grammar where sqlparser 0.63
/// departs from it (MySQL 8.0 manual, 14.4.1 "Operator Precedence"):
///
/// - `XOR` binds more loosely than `AND` and more tightly than `OR`; sqlparser
///   ranks it above the comparisons, so `a <= 1 XOR b` parsed as
///   `a <= (1 XOR b)`.
/// - `MOD` is an infix operator, a synonym of `%` (`a MOD b`); sqlparser knows
///   only the `MOD(a, b)` function.
///
/// Every other behaviour is MySqlDialect's: the methods it overrides are
/// forwarded, and [`Dialect::dialect`] reports MySqlDialect's type, so that the
/// parser's `dialect_of!(self is MySqlDialect)` checks hold (sqlparser supports
/// such wrappers: its `parse_with_wrapped_dialect` test).
///
/// The dialect also carries the parse's [`Interrupt`]: its expression hooks
/// (`parse_prefix`, `get_next_precedence`) run about once per expression, so
/// they are where a long parse can be stopped.
pub(crate) struct CanyonDialect {
    base: MySqlDialect,
    /// Asked every [`INTERRUPT_EVERY`] hook calls.
    interrupt: Option<Interrupt>,
    /// Hook calls so far.
    calls: Cell<u32>,
    /// The error the interrupt stopped the parse with.
    stopped: RefCell<Option<Error>>,
}

impl std::fmt::Debug for CanyonDialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CanyonDialect")
    }
}

impl CanyonDialect {
    pub(crate) fn new(interrupt: Option<Interrupt>) -> CanyonDialect {
        CanyonDialect {
            base: MySqlDialect {},
            interrupt,
            calls: Cell::new(0),
            stopped: RefCell::new(None),
        }
    }

    /// Every [`INTERRUPT_EVERY`] calls, whether the parse must stop: then a
    /// parser error that [`CanyonDialect::stopped`] explains.
    fn poll(&self) -> Option<ParserError> {
        let interrupt = self.interrupt.as_ref()?;
        let n = self.calls.get().wrapping_add(1);
        self.calls.set(n);
        if !n.is_multiple_of(INTERRUPT_EVERY) {
            return None;
        }
        let e = interrupt()?;
        *self.stopped.borrow_mut() = Some(e);
        Some(ParserError::ParserError("interrupted".into()))
    }
}

impl CanyonDialect {
    /// Whether the next token is the bare word `MOD`.
    fn next_is_mod(parser: &Parser) -> bool {
        matches!(&parser.peek_token_ref().token,
            Token::Word(w) if w.keyword == Keyword::MOD && w.quote_style.is_none())
    }
}

impl Dialect for CanyonDialect {
    fn dialect(&self) -> std::any::TypeId {
        self.base.dialect()
    }
    fn prec_value(&self, prec: Precedence) -> u8 {
        match prec {
            // Between And (10) and Or (5).
            Precedence::Xor => 7,
            p => self.base.prec_value(p),
        }
    }
    fn parse_prefix(&self, parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        if let Some(e) = self.poll() {
            return Some(Err(e));
        }
        self.base.parse_prefix(parser)
    }
    fn get_next_precedence(&self, parser: &Parser) -> Option<Result<u8, ParserError>> {
        if let Some(e) = self.poll() {
            return Some(Err(e));
        }
        if Self::next_is_mod(parser) {
            return Some(Ok(self.prec_value(Precedence::MulDivModOp)));
        }
        // MySQL's `col->'path'` / `col->>'path'` bind to their column
        // before any operator (sqlparser gives them PostgreSQL's low
        // precedence, which would read `j->'$.a' + 1` as `j->('$.a' + 1)`).
        if matches!(
            parser.peek_token_ref().token,
            sqlparser::tokenizer::Token::Arrow | sqlparser::tokenizer::Token::LongArrow
        ) {
            return Some(Ok(self.prec_value(Precedence::DoubleColon)));
        }
        // MySQL's `<<` / `>>` bind looser than + and -, tighter than & and |
        // (sqlparser puts them below &: `6 & 3 << 1` read as `(6 & 3) << 1`).
        if matches!(
            parser.peek_token_ref().token,
            sqlparser::tokenizer::Token::ShiftLeft | sqlparser::tokenizer::Token::ShiftRight
        ) {
            let (amp, plus) = (
                self.prec_value(Precedence::Ampersand),
                self.prec_value(Precedence::PlusMinus),
            );
            return Some(Ok(amp + (plus - amp) / 2));
        }
        self.base.get_next_precedence(parser)
    }
    fn parse_infix(
        &self,
        parser: &mut Parser,
        expr: &Expr,
        precedence: u8,
    ) -> Option<Result<Expr, ParserError>> {
        if Self::next_is_mod(parser) {
            parser.next_token();
            return Some(
                parser
                    .parse_subexpr(precedence)
                    .map(|right| Expr::BinaryOp {
                        left: Box::new(expr.clone()),
                        op: BinaryOperator::Modulo,
                        right: Box::new(right),
                    }),
            );
        }
        self.base.parse_infix(parser, expr, precedence)
    }
    // The rest forwards what MySqlDialect overrides (sqlparser 0.63.0,
    // src/dialect/mysql.rs).
    fn is_identifier_start(&self, ch: char) -> bool {
        self.base.is_identifier_start(ch)
    }
    fn is_identifier_part(&self, ch: char) -> bool {
        self.base.is_identifier_part(ch)
    }
    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        self.base.is_delimited_identifier_start(ch)
    }
    fn identifier_quote_style(&self, identifier: &str) -> Option<char> {
        self.base.identifier_quote_style(identifier)
    }
    fn supports_string_literal_backslash_escape(&self) -> bool {
        self.base.supports_string_literal_backslash_escape()
    }
    fn supports_string_literal_concatenation(&self) -> bool {
        self.base.supports_string_literal_concatenation()
    }
    fn ignores_wildcard_escapes(&self) -> bool {
        self.base.ignores_wildcard_escapes()
    }
    fn supports_numeric_prefix(&self) -> bool {
        self.base.supports_numeric_prefix()
    }
    fn supports_bitwise_shift_operators(&self) -> bool {
        self.base.supports_bitwise_shift_operators()
    }
    fn supports_multiline_comment_hints(&self) -> bool {
        self.base.supports_multiline_comment_hints()
    }
    fn parse_column_option(
        &self,
        parser: &mut Parser,
    ) -> Result<Option<Result<Option<sqlparser::ast::ColumnOption>, ParserError>>, ParserError>
    {
        // ZEROFILL, and UNSIGNED / SIGNED after a type sqlparser does not let
        // carry them (`FIXED UNSIGNED`, `INT(5) ZEROFILL UNSIGNED`): MySQL's
        // attributes of a number type, which sqlparser 0.63 does not know.
        // Also BINARY after a character type (`VARCHAR(40) BINARY`, the
        // Sakila schema's spelling): the old attribute for the charset's
        // `_bin` collation. Handed on as dialect-specific options;
        // `crate::ddl::define` applies them to the type.
        let word = match &parser.peek_token_ref().token {
            Token::Word(w) if w.quote_style.is_none() => w.value.to_ascii_uppercase(),
            _ => return Ok(None),
        };
        if matches!(word.as_str(), "ZEROFILL" | "UNSIGNED" | "SIGNED" | "BINARY") {
            parser.next_token();
            return Ok(Some(Ok(Some(
                sqlparser::ast::ColumnOption::DialectSpecific(vec![Token::make_word(&word, None)]),
            ))));
        }
        Ok(None)
    }
    fn parse_statement(&self, parser: &mut Parser) -> Option<Result<Statement, ParserError>> {
        // In MySQL, CREATE SCHEMA is CREATE DATABASE (same options); sqlparser
        // reads it as the SQL-standard CREATE SCHEMA, without the MySQL options.
        if parser.parse_keywords(&[Keyword::CREATE, Keyword::SCHEMA]) {
            return Some(parser.parse_create_database());
        }
        // UPDATE / DELETE with MySQL's modifiers and table lists, which
        // sqlparser does not read (see `super::dml_modifiers`).
        if let Some(r) = super::dml_modifiers::parse_update_or_delete(parser) {
            return Some(r);
        }
        self.base.parse_statement(parser)
    }
    fn require_interval_qualifier(&self) -> bool {
        self.base.require_interval_qualifier()
    }
    fn supports_limit_comma(&self) -> bool {
        self.base.supports_limit_comma()
    }
    fn supports_create_table_select(&self) -> bool {
        self.base.supports_create_table_select()
    }
    fn supports_insert_set(&self) -> bool {
        self.base.supports_insert_set()
    }
    fn supports_user_host_grantee(&self) -> bool {
        self.base.supports_user_host_grantee()
    }
    fn is_table_factor_alias(&self, explicit: bool, kw: &Keyword, parser: &mut Parser) -> bool {
        self.base.is_table_factor_alias(explicit, kw, parser)
    }
    fn supports_table_hints(&self) -> bool {
        self.base.supports_table_hints()
    }
    fn requires_single_line_comment_whitespace(&self) -> bool {
        self.base.requires_single_line_comment_whitespace()
    }
    fn supports_match_against(&self) -> bool {
        self.base.supports_match_against()
    }
    fn supports_select_modifiers(&self) -> bool {
        self.base.supports_select_modifiers()
    }
    fn supports_set_names(&self) -> bool {
        self.base.supports_set_names()
    }
    fn supports_comma_separated_set_assignments(&self) -> bool {
        self.base.supports_comma_separated_set_assignments()
    }
    fn supports_update_order_by(&self) -> bool {
        self.base.supports_update_order_by()
    }
    fn supports_data_type_signed_suffix(&self) -> bool {
        self.base.supports_data_type_signed_suffix()
    }
    fn supports_cross_join_constraint(&self) -> bool {
        self.base.supports_cross_join_constraint()
    }
    fn supports_double_ampersand_operator(&self) -> bool {
        self.base.supports_double_ampersand_operator()
    }
    fn supports_binary_kw_as_cast(&self) -> bool {
        self.base.supports_binary_kw_as_cast()
    }
    fn supports_comment_optimizer_hint(&self) -> bool {
        self.base.supports_comment_optimizer_hint()
    }
    fn supports_constraint_keyword_without_name(&self) -> bool {
        self.base.supports_constraint_keyword_without_name()
    }
    fn supports_key_column_option(&self) -> bool {
        self.base.supports_key_column_option()
    }
    fn supports_group_by_with_modifier(&self) -> bool {
        self.base.supports_group_by_with_modifier()
    }
    fn supports_left_associative_joins_without_parens(&self) -> bool {
        self.base.supports_left_associative_joins_without_parens()
    }
}

/// A parsed statement.
#[derive(Debug, Clone)]
pub enum Parsed {
    /// Anything sqlparser parses.
    Sql(Box<Statement>),
    /// CREATE USER [IF NOT EXISTS] 'u'@'h' [IDENTIFIED [WITH plugin] BY 'pw'].
    CreateUser {
        /// User.
        user: String,
        /// Host ('%' by default).
        host: String,
        /// The plugin named by IDENTIFIED WITH.
        plugin: Option<String>,
        /// Password.
        password: String,
        /// IF NOT EXISTS.
        if_not_exists: bool,
    },
    /// ALTER USER [IF EXISTS] 'u'@'h' IDENTIFIED [WITH plugin] BY 'pw', and
    /// SET PASSWORD \[FOR 'u'@'h'\] = 'pw' (`user` `None`: the current user).
    AlterUser {
        /// User and host; `None` for the session's own account.
        account: Option<(String, String)>,
        /// The plugin named by IDENTIFIED WITH.
        plugin: Option<String>,
        /// Password.
        password: String,
        /// IF EXISTS.
        if_exists: bool,
    },
    /// GRANT privileges ON level TO accounts [WITH GRANT OPTION].
    Grant {
        /// The privileges.
        privs: PrivSpec,
        /// Where.
        target: GrantTarget,
        /// The accounts.
        accounts: Vec<(String, String)>,
        /// WITH GRANT OPTION.
        grant_option: bool,
    },
    /// REVOKE privileges [, GRANT OPTION] ON level FROM accounts, or (with
    /// `target` `None`) REVOKE ALL PRIVILEGES, GRANT OPTION FROM accounts.
    Revoke {
        /// The privileges.
        privs: PrivSpec,
        /// Where; `None`: every level.
        target: Option<GrantTarget>,
        /// The accounts.
        accounts: Vec<(String, String)>,
        /// GRANT OPTION was in the list.
        grant_option: bool,
    },
    /// ALTER TABLE t {DISABLE | ENABLE} KEYS (dump files wrap their INSERTs
    /// in it); InnoDB has no such option, and neither has Canyon.
    AlterKeys {
        /// `[table]` or `[db, table]`.
        table: Vec<String>,
    },
    /// SHOW GRANTS \[FOR 'u'@'h' | CURRENT_USER\].
    ShowGrants {
        /// The account; `None` for the session's own.
        account: Option<(String, String)>,
    },
    /// DROP USER [IF EXISTS] 'u'@'h'.
    DropUser {
        /// User.
        user: String,
        /// Host.
        host: String,
        /// IF EXISTS.
        if_exists: bool,
    },
    /// SHOW WARNINGS / SHOW ERRORS.
    ShowWarnings {
        /// SHOW ERRORS (only errors).
        errors_only: bool,
    },
    /// CREATE / ALTER / DROP VIEW (see [`crate::parse::view`]).
    View(Box<crate::parse::view::ViewStatement>),
    /// A stored-program statement prepared with COM_STMT_PREPARE (CREATE /
    /// DROP / ALTER PROCEDURE, FUNCTION, TRIGGER and their SHOWs): its text
    /// runs through [`crate::parse::psm`] when executed. Never made by
    /// [`parse`]; the session's PREPARE makes it.
    StoredProgram(String),
    /// LOAD DATA prepared with COM_STMT_PREPARE (MariaDB prepares it; MySQL
    /// 8 answers 1295): its text runs through [`crate::parse::load`] when
    /// executed. Never made by [`parse`]; the session's PREPARE makes it.
    LoadData(String),
    /// ALTER {DATABASE | SCHEMA} \[db\] options (see `crate::parse::alter_database`).
    AlterDatabase {
        /// The database; `None`: the current one.
        db: Option<String>,
        /// \[DEFAULT\] CHARACTER SET / CHARSET.
        charset: Option<String>,
        /// \[DEFAULT\] COLLATE.
        collation: Option<String>,
    },
    /// SELECT ... INTO @vars | OUTFILE | DUMPFILE (`crate::parse::into`):
    /// the query without its INTO clause, and where its result goes.
    SelectInto {
        /// The query (a `Statement::Query`).
        query: Box<Statement>,
        /// The target.
        into: crate::parse::into::IntoTarget,
    },
    /// `SET STATEMENT assignments FOR statement` (`crate::parse::set_statement`):
    /// system variables set for the one statement.
    SetStatement {
        /// The assignments, as a `Statement::Set`.
        set: Box<Statement>,
        /// The statement they apply to.
        inner: Box<Parsed>,
        /// Its text.
        inner_sql: String,
    },
    /// ANALYZE | OPTIMIZE [NO_WRITE_TO_BINLOG | LOCAL] TABLE t [, t ...],
    /// or CHECK TABLE t [, t ...] [option ...].
    Analyze {
        /// The tables, each as `[table]` or `[db, table]`.
        tables: Vec<Vec<String>>,
        /// Which statement.
        op: TableOp,
    },
    /// CREATE TABLE ... PARTITION BY: sqlparser's statement for the text
    /// before the clause, and the clause (see `crate::parse::partition`).
    CreatePartitioned {
        /// The CREATE TABLE without its partition clause.
        create: Box<Statement>,
        /// The partition clause.
        spec: Box<crate::parse::partition::PartitionSpec>,
    },
    /// CREATE TABLE ... IGNORE | REPLACE SELECT (`crate::parse::create_select`):
    /// the statement without the word, and which word it was.
    CreateSelect {
        /// The CREATE TABLE ... SELECT.
        create: Box<Statement>,
        /// REPLACE (true) or IGNORE (false).
        replace: bool,
    },
    /// LOCK TABLES with MySQL's qualified names (`crate::parse::lock_tables`).
    LockTables {
        /// The tables, in the order written.
        tables: Vec<crate::parse::lock_tables::LockTarget>,
    },
    /// An XA statement (`crate::parse::xa`).
    Xa(crate::parse::xa::XaStatement),
    /// ALTER TABLE t `<partition operation>`.
    AlterPartition {
        /// `[table]` or `[db, table]`.
        table: Vec<String>,
        /// The operation.
        op: Box<crate::parse::partition::PartitionOp>,
    },
}

/// The table maintenance statement of a [`Parsed::Analyze`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableOp {
    /// ANALYZE TABLE.
    Analyze,
    /// CHECK TABLE.
    Check,
    /// OPTIMIZE TABLE.
    Optimize,
}

impl TableOp {
    /// The `Op` column of its result set.
    pub fn name(self) -> &'static str {
        match self {
            TableOp::Analyze => "analyze",
            TableOp::Check => "check",
            TableOp::Optimize => "optimize",
        }
    }
}

/// Parses `ANALYZE | OPTIMIZE [NO_WRITE_TO_BINLOG | LOCAL] TABLE a, db.b`
/// (sqlparser only knows Hive's ANALYZE) and `CHECK TABLE a, db.b [FOR
/// UPGRADE | QUICK | FAST | MEDIUM | EXTENDED | CHANGED ...]`.
fn parse_analyze(trimmed: &str) -> Option<Result<Parsed>> {
    let mut words = trimmed.split_whitespace();
    let verb = words.next()?;
    let op = if verb.eq_ignore_ascii_case("CHECK") {
        TableOp::Check
    } else if verb.eq_ignore_ascii_case("ANALYZE") {
        TableOp::Analyze
    } else if verb.eq_ignore_ascii_case("OPTIMIZE") {
        TableOp::Optimize
    } else {
        return None;
    };
    let check = op == TableOp::Check;
    let mut w = words.next()?;
    if !check && (w.eq_ignore_ascii_case("NO_WRITE_TO_BINLOG") || w.eq_ignore_ascii_case("LOCAL")) {
        w = words.next()?;
    }
    if !w.eq_ignore_ascii_case("TABLE") && !w.eq_ignore_ascii_case("TABLES") {
        return None;
    }
    let mut rest: Vec<&str> = words.collect();
    if check {
        // The options only choose how thoroughly to look: every check
        // here reads the whole table.
        const OPTIONS: [&str; 7] = [
            "FOR", "UPGRADE", "QUICK", "FAST", "MEDIUM", "EXTENDED", "CHANGED",
        ];
        while rest.len() > 1
            && rest
                .last()
                .is_some_and(|w| OPTIONS.iter().any(|o| w.eq_ignore_ascii_case(o)))
        {
            rest.pop();
        }
    }
    let rest = rest.join(" ");
    let mut tables = Vec::new();
    for name in rest.split(',') {
        let parts: Vec<String> = name
            .trim()
            .split('.')
            .map(|p| p.trim().trim_matches('`').to_string())
            .collect();
        if parts.is_empty() || parts.len() > 2 || parts.iter().any(|p| p.is_empty()) {
            return Some(Err(Error::Syntax(trimmed.to_string())));
        }
        tables.push(parts);
    }
    Some(Ok(Parsed::Analyze { tables, op }))
}

/// Replaces MySQL executable comments `/*! ... */` and `/*!NNNNN ... */` by their
/// contents (when the version applies), leaving strings and other comments alone.
pub fn expand_executable_comments(sql: &str) -> std::borrow::Cow<'_, str> {
    if !sql.contains("/*!") {
        return std::borrow::Cow::Borrowed(sql);
    }
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len());
    let mut i = 0;
    let mut quote: Option<u8> = None;
    let mut last = 0;
    while i < b.len() {
        let c = b[i];
        if let Some(q) = quote {
            if c == b'\\' {
                i += 2;
                continue;
            }
            if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        match c {
            b'\'' | b'"' | b'`' => {
                quote = Some(c);
                i += 1;
            }
            b'/' if b.get(i + 1) == Some(&b'*') && b.get(i + 2) == Some(&b'!') => {
                let Some(end) = executable_comment_end(sql, i + 3) else {
                    break;
                };
                let mut body = &sql[i + 3..end];
                let digits = body.bytes().take_while(u8::is_ascii_digit).count();
                let applies = if digits >= 5 {
                    body[..digits]
                        .parse::<u32>()
                        .map(|v| v <= VERSION_ID)
                        .unwrap_or(false)
                } else {
                    true
                };
                body = &body[digits.min(6)..];
                out.push_str(&sql[last..i]);
                if applies {
                    out.push(' ');
                    // A nested one: MySQL 8's `/*!50100 PARTITION BY KEY
                    // /*!50611 ALGORITHM = 2 */ (a) */`.
                    out.push_str(&expand_executable_comments(body));
                    out.push(' ');
                }
                i = end + 2;
                last = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&sql[last..]);
    std::borrow::Cow::Owned(out)
}

/// Where the executable comment whose body starts at `from` ends (the
/// offset of its `*/`), counting the executable comments nested in it.
fn executable_comment_end(sql: &str, from: usize) -> Option<usize> {
    let b = sql.as_bytes();
    let mut depth = 1;
    let mut i = from;
    while i + 1 < b.len() {
        if b[i] == b'/' && b[i + 1] == b'*' && b.get(i + 2) == Some(&b'!') {
            depth += 1;
            i += 3;
        } else if b[i] == b'*' && b[i + 1] == b'/' {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    None
}

/// `START TRANSACTION WITH CONSISTENT SNAPSHOT [, mode ...]` without the
/// snapshot clause, which sqlparser does not know (mariadb-dump
/// --single-transaction sends it). The session sees the clause in the original
/// text and takes the snapshot at once.
fn without_consistent_snapshot(trimmed: &str) -> Option<String> {
    let upper = trimmed.to_ascii_uppercase();
    if !upper.starts_with("START TRANSACTION") {
        return None;
    }
    let at = upper.find("WITH CONSISTENT SNAPSHOT")?;
    let rest = trimmed[at + "WITH CONSISTENT SNAPSHOT".len()..].trim_start();
    let rest = rest.strip_prefix(',').unwrap_or(rest);
    Some(format!("{} {rest}", &trimmed[..at]))
}

/// `SELECT ... LOCK IN SHARE MODE` (MySQL's older spelling, which sqlparser
/// does not know) as `... FOR SHARE`: the clause ends the statement.
fn lock_in_share_mode(trimmed: &str) -> Option<String> {
    const CLAUSE: &str = "LOCK IN SHARE MODE";
    let words: Vec<&str> = trimmed.split_whitespace().collect();
    let n = words.len();
    if n < 5 || !words[n - 4..].join(" ").eq_ignore_ascii_case(CLAUSE) {
        return None;
    }
    let at = trimmed.to_ascii_uppercase().rfind("LOCK")?;
    Some(format!("{} FOR SHARE", &trimmed[..at]))
}

/// Parses a query text into statements, with no memory budget and no
/// interrupt (tests, and texts the engine writes itself). The depth and
/// shape limits apply as in [`parse_with`].
pub fn parse(sql: &str) -> Result<Vec<Parsed>> {
    parse_with(sql, None, None).map(|(stmts, _)| stmts)
}

/// Parses a query text into statements through [`crate::parse::limits`]' gate (see
/// its rules 1–4): the text's shape, then the memory its statements are
/// estimated to need (reserved from `budget`, and held by the returned
/// [`Reservation`] until the caller is done with them), then the parse, which
/// `interrupt` may stop, then each statement's depth.
pub fn parse_with<'b>(
    sql: &str,
    budget: Option<&'b MemoryBudget>,
    interrupt: Option<Interrupt>,
) -> Result<(Vec<Parsed>, Option<Reservation<'b>>)> {
    let mut text = expand_executable_comments(sql);
    if text.len() >= limits::COMPACT_FROM {
        text = std::borrow::Cow::Owned(limits::compact_whitespace(&text));
    }
    let shape = limits::scan(&text);
    if shape.set_operations > limits::MAX_SET_OPERATIONS {
        return Err(Error::TooDeep);
    }
    let reservation = budget.map(|b| b.reserve(shape.memory())).transpose()?;
    let stmts = limits::with_parse_stack(&shape, || parse_text(&text, &shape, interrupt))?;
    Ok((stmts, reservation))
}

/// The parse of an expanded (and, when long, compacted) text.
pub(super) fn parse_text(
    text: &str,
    shape: &limits::Shape,
    interrupt: Option<Interrupt>,
) -> Result<Vec<Parsed>> {
    if let Some(first) = super::pieces::plain_dml(text) {
        let trimmed = text.trim().trim_end_matches(';').trim();
        if first.eq_ignore_ascii_case("SELECT") {
            if let Some(r) = crate::parse::into::split_select_into(trimmed) {
                return select_into(trimmed, r, interrupt);
            }
        }
        return parse_sql(text, trimmed, shape, interrupt);
    }
    if let Some(p) = parse_account_statement(text)? {
        return Ok(vec![p]);
    }
    if let Some(p) = parse_grant_statement(text)? {
        return Ok(vec![p]);
    }
    let trimmed = text.trim().trim_end_matches(';').trim();
    let upper: String = trimmed
        .chars()
        .take(16)
        .collect::<String>()
        .to_ascii_uppercase();
    if upper.starts_with("SHOW WARNINGS") || upper.starts_with("SHOW ERRORS") {
        let errors_only = upper.starts_with("SHOW ERRORS");
        return Ok(vec![Parsed::ShowWarnings { errors_only }]);
    }
    if trimmed.is_empty() {
        return Ok(Vec::new());
    }
    if let Some(p) = super::pieces::parse_multi_xa(trimmed)? {
        return Ok(p);
    }
    if let Some(r) = crate::parse::set_statement::split_set_statement(trimmed) {
        let (set, statement) = r?;
        let mut sets = parse_text(&set, &limits::scan(&set), None)?;
        let mut inner = parse_text(&statement, &limits::scan(&statement), interrupt)?;
        return match (sets.pop(), inner.pop(), sets.is_empty() && inner.is_empty()) {
            (Some(Parsed::Sql(set)), Some(inner), true) if matches!(*set, Statement::Set(_)) => {
                Ok(vec![Parsed::SetStatement {
                    set,
                    inner: Box::new(inner),
                    inner_sql: statement,
                }])
            }
            _ => Err(Error::Syntax(trimmed.to_string())),
        };
    }
    if let Some(r) = crate::parse::lock_tables::parse_lock_tables(trimmed) {
        return r.map(|p| vec![p]);
    }
    if let Some(r) = crate::parse::xa::parse_xa(trimmed) {
        return r.map(|x| vec![Parsed::Xa(x)]);
    }
    if let Some(r) = parse_analyze(trimmed) {
        return r.map(|p| vec![p]);
    }
    if let Some(r) = crate::parse::alter_database::parse_alter_database(trimmed) {
        return r.map(|p| vec![p]);
    }
    if let Some(r) = crate::parse::into::split_select_into(trimmed) {
        return select_into(trimmed, r, interrupt);
    }
    if let Some(p) = super::pieces::parse_partitioned(trimmed)? {
        return Ok(p);
    }
    if let Some(r) = crate::parse::view::parse_view_statement(trimmed) {
        return r.map(|v| vec![Parsed::View(Box::new(v))]);
    }
    parse_sql(text, trimmed, shape, interrupt)
}

/// A SELECT ... INTO (`r`, from [`crate::parse::into::split_select_into`]):
/// the query parsed without its INTO clause.
fn select_into(
    trimmed: &str,
    r: Result<(String, crate::parse::into::IntoTarget)>,
    interrupt: Option<Interrupt>,
) -> Result<Vec<Parsed>> {
    let (query, into) = r?;
    let mut stmts = parse_text(&query, &limits::scan(&query), interrupt)?;
    match (stmts.pop(), stmts.is_empty()) {
        (Some(Parsed::Sql(query)), true) if matches!(*query, Statement::Query(_)) => {
            Ok(vec![Parsed::SelectInto { query, into }])
        }
        _ => Err(Error::Syntax(trimmed.to_string())),
    }
}

/// `text` through sqlparser, with the rewrites MySQL spellings it refuses
/// need (`trimmed` is `text` without surrounding blanks and `;`).
fn parse_sql(
    text: &str,
    trimmed: &str,
    shape: &limits::Shape,
    interrupt: Option<Interrupt>,
) -> Result<Vec<Parsed>> {
    let dialect = CanyonDialect::new(interrupt);
    // Tokenized here rather than by `Parser::try_with_sql` so that the token
    // vector is sized once from the scan: grown by doubling, a long text's
    // tokens briefly took twice their memory.
    let mut tokens = Vec::with_capacity(shape.tokens);
    let parsed = Tokenizer::new(&dialect, text)
        .tokenize_with_location_into_buf(&mut tokens)
        .map_err(ParserError::from)
        .and_then(|()| {
            crate::parse::escapes::mysql_string_escapes(&mut tokens, text);
            crate::parse::user_vars::join_quoted_user_variables(&mut tokens);
            Parser::new(&dialect)
                .with_recursion_limit(RECURSION_LIMIT)
                .with_tokens_with_locations(tokens)
                .parse_statements()
        });
    let stmts = match parsed {
        Ok(stmts) => stmts,
        Err(e) => {
            if let Some(stopped) = dialect.stopped.take() {
                return Err(stopped);
            }
            if let Some(p) = create_select_duplicates(trimmed) {
                return p;
            }
            if window_from_last(trimmed) {
                return Err(Error::Unsupported("FROM LAST".into()));
            }
            return match set_names_in_list(trimmed)
                .or_else(|| set_character_set(trimmed))
                .or_else(|| without_consistent_snapshot(trimmed))
                .or_else(|| lock_in_share_mode(trimmed))
                .or_else(|| alter_table_spellings(trimmed))
                .or_else(|| real_type_spellings(trimmed))
                .or_else(|| create_fulltext_index(trimmed))
                .or_else(|| window_spellings(trimmed))
                .or_else(|| interval_units(trimmed))
                .or_else(|| backslash_n_null(trimmed))
                .or_else(|| drop_tables(trimmed))
            {
                Some(rewritten) => parse_text(&rewritten, &limits::scan(&rewritten), None),
                None => Err(unsupported_or(parse_error(text, e), trimmed)),
            };
        }
    };
    if stmts
        .iter()
        .any(|s| limits::check_depth(s, shape.tokens).is_err())
    {
        stmts.into_iter().for_each(limits::dispose);
        return Err(Error::TooDeep);
    }
    Ok(stmts
        .into_iter()
        .map(|mut s| {
            crate::parse::names::name_select_items(&mut s, text);
            Parsed::Sql(Box::new(s))
        })
        .collect())
}

/// A CREATE TABLE ... IGNORE | REPLACE SELECT sqlparser refused
/// (`crate::parse::create_select`); `None` for any other text.
#[inline(never)]
fn create_select_duplicates(trimmed: &str) -> Option<Result<Vec<Parsed>>> {
    let (rest, replace) = crate::parse::create_select::split_duplicates(trimmed)?;
    let parsed = parse_text(&rest, &limits::scan(&rest), None);
    Some(
        parsed.and_then(|mut stmts| match (stmts.pop(), stmts.is_empty()) {
            (Some(Parsed::Sql(create)), true) if matches!(*create, Statement::CreateTable(_)) => {
                Ok(vec![Parsed::CreateSelect { create, replace }])
            }
            _ => Err(Error::Syntax(near(trimmed, ""))),
        }),
    )
}

/// Counts `?` placeholders with the same tokenizer the parser uses (on the
/// text as [`parse_with`] prepares it).
pub fn count_placeholders(sql: &str) -> Result<usize> {
    let mut text = expand_executable_comments(sql);
    if text.len() >= limits::COMPACT_FROM {
        text = std::borrow::Cow::Owned(limits::compact_whitespace(&text));
    }
    let dialect = CanyonDialect::new(None);
    let tokens = Tokenizer::new(&dialect, &text)
        .tokenize()
        .map_err(|e| Error::Syntax(e.message))?;
    Ok(tokens
        .iter()
        .filter(|t| matches!(t, Token::Placeholder(p) if p == "?"))
        .count())
}

/// MySQL statements Canyon does not implement: when sqlparser cannot parse one
/// of these, the client gets 1235 "not supported" rather than a syntax error.
const UNSUPPORTED_STATEMENTS: &[&str] = &[
    "CREATE TRIGGER",
    "CREATE PROCEDURE",
    "CREATE FUNCTION",
    "CREATE EVENT",
    "CREATE VIEW",
    "CREATE OR REPLACE",
    "CREATE DEFINER",
    "CREATE TEMPORARY",
    "CREATE SPATIAL",
    "ALTER",
    "LOCK TABLE",
    "UNLOCK TABLE",
    "HANDLER",
    "LOAD DATA",
    "LOAD XML",
    "CALL",
    "DO ",
    "PREPARE",
    "EXECUTE",
    "DEALLOCATE",
    "RENAME",
    "OPTIMIZE",
    "ANALYZE",
    "CHECK TABLE",
    "REPAIR",
    "FLUSH",
    "SET PERSIST",
    "RESET",
    "PURGE",
    "CHANGE",
    "START REPLICA",
    "START SLAVE",
    "STOP",
    "INSTALL",
    "UNINSTALL",
    "SAVEPOINT",
    "RELEASE",
    "SIGNAL",
    "RESIGNAL",
    "GET DIAGNOSTICS",
    "SHUTDOWN",
    "CLONE",
    "IMPORT",
    "TABLE ",
    "WITH ",
    "REVOKE",
    "ALTER USER",
    "SET PASSWORD",
    "SET ROLE",
    "SET DEFAULT ROLE",
];

fn unsupported_or(e: Error, sql: &str) -> Error {
    let Error::Syntax(near) = &e else {
        return e;
    };
    // A FULLTEXT index's plugin parser (ngram, MeCab): valid MySQL that
    // Canyon does not implement (its tokenizer is InnoDB's built-in one).
    if near
        .get(..11)
        .is_some_and(|w| w.eq_ignore_ascii_case("WITH PARSER"))
    {
        return Error::Unsupported("FULLTEXT ... WITH PARSER".into());
    }
    let head: String = sql
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_uppercase()
        + " ";
    match UNSUPPORTED_STATEMENTS.iter().find(|p| head.starts_with(*p)) {
        Some(p) => Error::Unsupported(p.trim().to_string()),
        None => e,
    }
}

pub(super) fn parse_error(sql: &str, e: ParserError) -> Error {
    match e {
        ParserError::RecursionLimitExceeded => Error::TooDeep,
        ParserError::TokenizerError(m) | ParserError::ParserError(m) => {
            Error::Syntax(near(sql, &m))
        }
    }
}

/// The text from the error's position on, as MySQL's message shows it.
pub(super) fn near(sql: &str, msg: &str) -> String {
    let pos = |key: &str| -> Option<usize> {
        let i = msg.rfind(key)? + key.len();
        msg[i..]
            .trim_start()
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    };
    match (pos("Line:"), pos("Column:")) {
        (Some(line), Some(col)) if line >= 1 && col >= 1 => {
            let mut offset = 0;
            for (n, l) in sql.split_inclusive('\n').enumerate() {
                if n + 1 == line {
                    let c = l
                        .char_indices()
                        .nth(col - 1)
                        .map(|(i, _)| i)
                        .unwrap_or(l.len());
                    // sqlparser reports the token after the problem; MySQL quotes from
                    // the offending token. Back up to the start of the previous token.
                    let start = offset + c;
                    return sql[start.min(sql.len())..].chars().take(80).collect();
                }
                offset += l.len();
            }
            String::new()
        }
        _ => sql.chars().take(80).collect(),
    }
}

// ---- account statements -----------------------------------------------------------

pub(super) struct Lexer<'a> {
    pub(super) s: &'a str,
    pub(super) pos: usize,
}

impl<'a> Lexer<'a> {
    pub(super) fn skip_ws(&mut self) {
        while self.pos < self.s.len() && self.s.as_bytes()[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }
    /// Consumes the ASCII keyword `kw` (any case) if it comes next as a
    /// whole word. Compares bytes: the text after an ASCII match starts at a
    /// character boundary, wherever non-ASCII text stands.
    pub(super) fn keyword(&mut self, kw: &str) -> bool {
        self.skip_ws();
        let rest = &self.s.as_bytes()[self.pos..];
        if rest.len() >= kw.len()
            && rest[..kw.len()].eq_ignore_ascii_case(kw.as_bytes())
            && rest
                .get(kw.len())
                .is_none_or(|&c| !c.is_ascii_alphanumeric() && c != b'_')
        {
            self.pos += kw.len();
            true
        } else {
            false
        }
    }
    pub(super) fn name(&mut self) -> Option<String> {
        self.skip_ws();
        let b = self.s.as_bytes();
        let c = *b.get(self.pos)?;
        if c == b'\'' || c == b'"' || c == b'`' {
            let end = self.s[self.pos + 1..].find(c as char)? + self.pos + 1;
            let v = self.s[self.pos + 1..end].to_string();
            self.pos = end + 1;
            Some(v)
        } else {
            let start = self.pos;
            while self.pos < b.len()
                && (b[self.pos].is_ascii_alphanumeric()
                    || b[self.pos] == b'_'
                    || b[self.pos] == b'%'
                    || b[self.pos] == b'.')
            {
                self.pos += 1;
            }
            (self.pos > start).then(|| self.s[start..self.pos].to_string())
        }
    }
    fn user_host(&mut self) -> Option<(String, String)> {
        let user = self.name()?;
        self.skip_ws();
        let host = if self.s[self.pos..].starts_with('@') {
            self.pos += 1;
            self.name()?
        } else {
            "%".to_string()
        };
        Some((user, host))
    }
    pub(super) fn punct(&mut self, c: char) -> bool {
        self.skip_ws();
        if self.s[self.pos..].starts_with(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }
    pub(super) fn at_end(&mut self) -> bool {
        self.skip_ws();
        let rest = self.s[self.pos..].trim_end_matches(|c: char| c == ';' || c.is_whitespace());
        rest.is_empty()
    }
}

/// The object of GRANT / REVOKE, as written (the current database is resolved
/// when the statement runs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantTarget {
    /// `*.*`
    Global,
    /// `*`: every table of the current database.
    CurrentDb,
    /// `db.*`
    Db(String),
    /// `[db.]table`
    Table(Option<String>, String),
}

impl Lexer<'_> {
    /// An identifier: backquoted, or letters, digits, `_` and `$`.
    fn ident(&mut self) -> Option<String> {
        self.skip_ws();
        let rest = &self.s[self.pos..];
        if let Some(quoted) = rest.strip_prefix('`') {
            let end = quoted.find('`')?;
            self.pos += end + 2;
            return Some(quoted[..end].to_string());
        }
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .unwrap_or(rest.len());
        (len > 0).then(|| {
            self.pos += len;
            rest[..len].to_string()
        })
    }

    /// `*.*`, `*`, `db.*`, `db.t` or `t`.
    fn grant_target(&mut self) -> Option<GrantTarget> {
        if self.punct('*') {
            if self.punct('.') {
                return self.punct('*').then_some(GrantTarget::Global);
            }
            return Some(GrantTarget::CurrentDb);
        }
        let first = self.ident()?;
        if !self.punct('.') {
            return Some(GrantTarget::Table(None, first));
        }
        if self.punct('*') {
            return Some(GrantTarget::Db(first));
        }
        Some(GrantTarget::Table(Some(first), self.ident()?))
    }

    /// A privilege list up to ON / FROM / TO: (privileges, GRANT OPTION named).
    fn privilege_list(&mut self) -> Result<(PrivSpec, bool)> {
        let mut privs = Privs::NONE;
        let mut all = false;
        let mut grant_option = false;
        loop {
            let mut words = Vec::new();
            loop {
                self.skip_ws();
                let save = self.pos;
                if self.keyword("ON") || self.keyword("FROM") || self.keyword("TO") {
                    self.pos = save;
                    break;
                }
                if self.s[self.pos..].starts_with([',', '(']) || self.at_end() {
                    break;
                }
                match self.ident() {
                    Some(w) => words.push(w.to_ascii_uppercase()),
                    None => return Err(Error::Syntax(self.s[self.pos..].to_string())),
                }
            }
            if self.s[self.pos..].starts_with('(') {
                return Err(Error::Unsupported("column privileges".into()));
            }
            let name = words.join(" ");
            match name.as_str() {
                "ALL" | "ALL PRIVILEGES" => all = true,
                "GRANT OPTION" => grant_option = true,
                "USAGE" => {}
                "" => return Err(Error::Syntax(self.s[self.pos..].to_string())),
                _ => {
                    privs = privs
                        | Privs::from_name(&name)
                            .ok_or_else(|| Error::Syntax(name.to_lowercase()))?;
                }
            }
            if !self.punct(',') {
                break;
            }
        }
        let spec = if all {
            PrivSpec::All
        } else {
            PrivSpec::Some(privs)
        };
        Ok((spec, grant_option))
    }

    /// `'u'@'h' [, 'u'@'h' ...]`.
    fn accounts(&mut self) -> Option<Vec<(String, String)>> {
        let mut out = vec![self.user_host()?];
        while self.punct(',') {
            out.push(self.user_host()?);
        }
        Some(out)
    }
}

/// GRANT / REVOKE / SHOW GRANTS, or `None` for another statement.
fn parse_grant_statement(sql: &str) -> Result<Option<Parsed>> {
    let syntax =
        |lx: &Lexer<'_>| Error::Syntax(sql[lx.pos.min(sql.len())..].chars().take(80).collect());
    let mut lx = Lexer { s: sql, pos: 0 };
    if lx.keyword("GRANT") {
        let (privs, named_option) = lx.privilege_list()?;
        if !lx.keyword("ON") {
            return Err(syntax(&lx));
        }
        lx.keyword("TABLE");
        let target = lx.grant_target().ok_or_else(|| syntax(&lx))?;
        if !lx.keyword("TO") {
            return Err(syntax(&lx));
        }
        let accounts = lx.accounts().ok_or_else(|| syntax(&lx))?;
        let grant_option =
            named_option || (lx.keyword("WITH") && lx.keyword("GRANT") && lx.keyword("OPTION"));
        if !lx.at_end() {
            return Err(Error::Unsupported("GRANT options".into()));
        }
        return Ok(Some(Parsed::Grant {
            privs,
            target,
            accounts,
            grant_option,
        }));
    }
    let mut lx = Lexer { s: sql, pos: 0 };
    if lx.keyword("REVOKE") {
        let (privs, grant_option) = lx.privilege_list()?;
        let target = if lx.keyword("ON") {
            lx.keyword("TABLE");
            Some(lx.grant_target().ok_or_else(|| syntax(&lx))?)
        } else if privs == PrivSpec::All && grant_option {
            None
        } else {
            return Err(syntax(&lx));
        };
        if !lx.keyword("FROM") {
            return Err(syntax(&lx));
        }
        let accounts = lx.accounts().ok_or_else(|| syntax(&lx))?;
        if !lx.at_end() {
            return Err(syntax(&lx));
        }
        return Ok(Some(Parsed::Revoke {
            privs,
            target,
            accounts,
            grant_option,
        }));
    }
    let mut lx = Lexer { s: sql, pos: 0 };
    if lx.keyword("ALTER") && lx.keyword("TABLE") {
        let mut table = vec![lx.ident().ok_or_else(|| syntax(&lx))?];
        if lx.punct('.') {
            table.push(lx.ident().ok_or_else(|| syntax(&lx))?);
        }
        if (lx.keyword("DISABLE") || lx.keyword("ENABLE")) && lx.keyword("KEYS") && lx.at_end() {
            return Ok(Some(Parsed::AlterKeys { table }));
        }
        return Ok(None);
    }
    let mut lx = Lexer { s: sql, pos: 0 };
    if lx.keyword("SHOW") && lx.keyword("GRANTS") {
        let account = if lx.keyword("FOR") {
            if lx.keyword("CURRENT_USER") {
                if lx.punct('(') && !lx.punct(')') {
                    return Err(syntax(&lx));
                }
                None
            } else {
                Some(lx.user_host().ok_or_else(|| syntax(&lx))?)
            }
        } else {
            None
        };
        if !lx.at_end() {
            return Err(syntax(&lx));
        }
        return Ok(Some(Parsed::ShowGrants { account }));
    }
    Ok(None)
}

/// `[IDENTIFIED [WITH plugin] [BY 'pw']]` → (plugin, password); `None` on a
/// syntax error.
fn identified(lx: &mut Lexer<'_>) -> Option<(Option<String>, String)> {
    if !lx.keyword("IDENTIFIED") {
        return Some((None, String::new()));
    }
    let plugin = if lx.keyword("WITH") {
        Some(lx.name()?)
    } else {
        None
    };
    let password = if lx.keyword("BY") {
        lx.name()?
    } else if plugin.is_some() {
        String::new()
    } else {
        return None;
    };
    Some((plugin, password))
}

fn parse_account_statement(sql: &str) -> Result<Option<Parsed>> {
    let mut lx = Lexer { s: sql, pos: 0 };
    let syntax =
        |lx: &Lexer<'_>| Error::Syntax(sql[lx.pos.min(sql.len())..].chars().take(80).collect());
    if lx.keyword("CREATE") && lx.keyword("USER") {
        let if_not_exists = lx.keyword("IF") && lx.keyword("NOT") && lx.keyword("EXISTS");
        let (user, host) = lx.user_host().ok_or_else(|| syntax(&lx))?;
        let (plugin, password) = identified(&mut lx).ok_or_else(|| syntax(&lx))?;
        if !lx.at_end() {
            return Err(Error::Unsupported("CREATE USER options".into()));
        }
        return Ok(Some(Parsed::CreateUser {
            user,
            host,
            plugin,
            password,
            if_not_exists,
        }));
    }
    let mut lx = Lexer { s: sql, pos: 0 };
    if lx.keyword("ALTER") && lx.keyword("USER") {
        let if_exists = lx.keyword("IF") && lx.keyword("EXISTS");
        let (user, host) = lx.user_host().ok_or_else(|| syntax(&lx))?;
        let (plugin, password) = identified(&mut lx).ok_or_else(|| syntax(&lx))?;
        if !lx.at_end() {
            return Err(Error::Unsupported("ALTER USER options".into()));
        }
        return Ok(Some(Parsed::AlterUser {
            account: Some((user, host)),
            plugin,
            password,
            if_exists,
        }));
    }
    let mut lx = Lexer { s: sql, pos: 0 };
    if lx.keyword("SET") && lx.keyword("PASSWORD") {
        let account = if lx.keyword("FOR") {
            Some(lx.user_host().ok_or_else(|| syntax(&lx))?)
        } else {
            None
        };
        if !lx.punct('=') {
            return Err(syntax(&lx));
        }
        let password = lx.name().ok_or_else(|| syntax(&lx))?;
        if !lx.at_end() {
            return Err(syntax(&lx));
        }
        return Ok(Some(Parsed::AlterUser {
            account,
            plugin: None,
            password,
            if_exists: false,
        }));
    }
    let mut lx = Lexer { s: sql, pos: 0 };
    if lx.keyword("DROP") && lx.keyword("USER") {
        let if_exists = lx.keyword("IF") && lx.keyword("EXISTS");
        let (user, host) = lx.user_host().ok_or_else(|| syntax(&lx))?;
        if !lx.at_end() {
            return Err(Error::Unsupported("DROP USER of several accounts".into()));
        }
        return Ok(Some(Parsed::DropUser {
            user,
            host,
            if_exists,
        }));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consistent_snapshot_clause_is_set_aside() {
        assert_eq!(
            without_consistent_snapshot("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY")
                .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" ")),
            Some("START TRANSACTION READ ONLY".to_string())
        );
        assert!(matches!(
            parse("START TRANSACTION /*!40100 WITH CONSISTENT SNAPSHOT */").as_deref(),
            Ok([Parsed::Sql(_)])
        ));
        assert_eq!(without_consistent_snapshot("SELECT 1"), None);
    }

    #[test]
    fn executable_comments_are_expanded() {
        let words = |s: &str| {
            expand_executable_comments(s)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(
            words("CREATE TABLE t(a INT) /*! ENGINE = innodb */"),
            "CREATE TABLE t(a INT) ENGINE = innodb"
        );
        assert_eq!(
            words("SELECT /*!40001 SQL_NO_CACHE */ 1"),
            "SELECT SQL_NO_CACHE 1"
        );
        assert_eq!(words("SELECT /*!99999 nope */ 1"), "SELECT 1");
        assert_eq!(
            words("PARTITION BY /*!50100 KEY /*!50611 ALGORITHM = 2 */ (a) */ x"),
            "PARTITION BY KEY ALGORITHM = 2 (a) x"
        );
        assert_eq!(
            expand_executable_comments("SELECT '/*!x*/'"),
            "SELECT '/*!x*/'"
        );
    }

    #[test]
    fn set_names_inside_an_assignment_list() {
        assert_eq!(
            set_names_in_list(
                "set sql_mode=CONCAT(@@sql_mode,',STRICT_TRANS_TABLES'),NAMES utf8mb4"
            )
            .as_deref(),
            Some(
                "SET sql_mode=CONCAT(@@sql_mode,',STRICT_TRANS_TABLES'), \
                 character_set_client = 'utf8mb4', character_set_connection = 'utf8mb4', \
                 character_set_results = 'utf8mb4'"
            )
        );
        assert_eq!(
            set_names_in_list("SET NAMES 'utf8mb4' COLLATE utf8mb4_bin, autocommit=1").as_deref(),
            Some(
                "SET character_set_client = 'utf8mb4', character_set_connection = 'utf8mb4', \
                 character_set_results = 'utf8mb4', collation_connection = 'utf8mb4_bin', autocommit=1"
            )
        );
        assert_eq!(set_names_in_list("SET NAMES utf8mb4"), None);
        assert_eq!(set_names_in_list("SET a = 1, b = 'x,NAMES y'"), None);
        let parsed = parse("set autocommit=1, NAMES utf8mb4").expect("parses");
        assert!(matches!(
            parsed.as_slice(),
            [Parsed::Sql(s)] if matches!(**s, Statement::Set(_))
        ));
    }

    #[test]
    fn syntax_errors_carry_near_text() {
        match parse("SELECT * FRM t") {
            Err(Error::Syntax(near)) => assert!(near.contains("t"), "{near}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let sql = format!("SELECT {}1{}", "(".repeat(10_000), ")".repeat(10_000));
        assert!(matches!(
            parse(&sql),
            Err(Error::TooDeep) | Err(Error::Syntax(_))
        ));
    }

    #[test]
    fn account_statements() {
        assert!(matches!(
            parse("CREATE USER 'a'@'%' IDENTIFIED BY 'pw'").expect("parses").as_slice(),
            [Parsed::CreateUser { user, host, password, .. }] if user == "a" && host == "%" && password == "pw"
        ));
        assert!(matches!(
            parse("drop user if exists bob").expect("parses").as_slice(),
            [Parsed::DropUser { user, if_exists: true, .. }] if user == "bob"
        ));
    }

    #[test]
    fn placeholders_are_counted() {
        assert_eq!(
            count_placeholders("SELECT c FROM t WHERE id = ? AND k IN (?, ?) AND s = '?'")
                .expect("tokenizes"),
            3
        );
    }
}
