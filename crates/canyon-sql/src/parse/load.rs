//! LOAD DATA, parsed as MySQL 8.0 writes it (sqlparser 0.63 knows only
//! Hive's `LOAD DATA INPATH`):
//!
//! ```text
//! LOAD DATA [LOW_PRIORITY | CONCURRENT] [LOCAL] INFILE 'file'
//!     [REPLACE | IGNORE] INTO TABLE tbl
//!     [CHARACTER SET charset]
//!     [{FIELDS | COLUMNS} [TERMINATED BY 's'] [[OPTIONALLY] ENCLOSED BY 'c'] [ESCAPED BY 'c']]
//!     [LINES [STARTING BY 's'] [TERMINATED BY 's']]
//!     [IGNORE n {LINES | ROWS}]
//!     [(col_or_@var, ...)]
//!     [SET col = expr, ...]
//! ```
//!
//! Not taken (1235): `PARTITION (...)`, `LOAD XML`, fixed-width rows (both
//! FIELDS TERMINATED BY and ENCLOSED BY empty), multi-character ENCLOSED BY
//! or ESCAPED BY (MySQL refuses those too, with 1083).

use super::parser::CanyonDialect;
use canyon_common::{Error, Result};
use sqlparser::ast;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

/// What a row that collides with an existing row on a unique key does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadDuplicates {
    /// Neither REPLACE nor IGNORE: error 1062 for a server file; a LOCAL load
    /// behaves as IGNORE (MySQL: the server cannot stop the client's transfer
    /// half way, so LOCAL implies IGNORE).
    Error,
    /// REPLACE: the colliding rows are deleted.
    Replace,
    /// IGNORE: the row is skipped with warning 1062.
    Ignore,
}

/// How the file's bytes are cut into rows and fields (FIELDS and LINES).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadFormat {
    /// FIELDS TERMINATED BY (default tab).
    pub field_term: Vec<u8>,
    /// \[OPTIONALLY\] ENCLOSED BY (default none). OPTIONALLY matters only for
    /// SELECT ... INTO OUTFILE; reading treats both alike.
    pub enclosed: Option<u8>,
    /// OPTIONALLY was written: SELECT ... INTO OUTFILE encloses only string
    /// and temporal values (reading treats both alike).
    pub optionally_enclosed: bool,
    /// ESCAPED BY (default backslash; `''`: no escapes).
    pub escaped: Option<u8>,
    /// LINES STARTING BY (default empty): the prefix each line's fields follow.
    pub line_start: Vec<u8>,
    /// LINES TERMINATED BY (default newline).
    pub line_term: Vec<u8>,
}

impl Default for LoadFormat {
    fn default() -> Self {
        LoadFormat {
            field_term: b"\t".to_vec(),
            enclosed: None,
            optionally_enclosed: false,
            escaped: Some(b'\\'),
            line_start: Vec::new(),
            line_term: b"\n".to_vec(),
        }
    }
}

/// Where one field of a line goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadTarget {
    /// A table column, by name.
    Column(String),
    /// A user variable (`@name`, without the `@`).
    UserVar(String),
}

/// A parsed LOAD DATA statement.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadData {
    /// LOCAL: the client sends the file.
    pub local: bool,
    /// The file name as written.
    pub file: String,
    /// REPLACE / IGNORE.
    pub duplicates: LoadDuplicates,
    /// The target table (`db.tbl` or `tbl`).
    pub table: ast::ObjectName,
    /// CHARACTER SET, if given (only binary, utf8, utf8mb4, utf8mb3, ascii
    /// and latin1 are taken: the bytes are stored as they are).
    pub charset: Option<String>,
    /// FIELDS / LINES.
    pub format: LoadFormat,
    /// IGNORE n LINES.
    pub ignore_lines: u64,
    /// The field targets; `None`: every column in table order.
    pub targets: Option<Vec<LoadTarget>>,
    /// SET col = expr, in order.
    pub set: Vec<(String, ast::Expr)>,
}

/// Whether `sql` is a LOAD DATA or LOAD XML statement (its first two words).
pub fn is_load_statement(sql: &str) -> bool {
    let mut words = sql.split_whitespace();
    matches!(
        (words.next(), words.next()),
        (Some(a), Some(b)) if a.eq_ignore_ascii_case("LOAD")
            && (b.eq_ignore_ascii_case("DATA") || b.eq_ignore_ascii_case("XML"))
    )
}

/// Parses a LOAD DATA statement (see the module doc); `sql` is one statement
/// (a trailing `;` is allowed).
pub fn parse_load(sql: &str) -> Result<LoadData> {
    let dialect = CanyonDialect::new(None);
    let mut p = Parser::new(&dialect)
        .try_with_sql(sql)
        .map_err(|e| Error::Syntax(e.to_string()))?;
    let syntax = |p: &Parser| Error::Syntax(format!("near '{}'", p.peek_token_ref().token));
    expect(&mut p, "LOAD")?;
    if word(&mut p, "XML") {
        return Err(Error::Unsupported("LOAD XML".into()));
    }
    expect(&mut p, "DATA")?;
    let _ = word(&mut p, "LOW_PRIORITY") || word(&mut p, "CONCURRENT");
    let local = word(&mut p, "LOCAL");
    expect(&mut p, "INFILE")?;
    let file = string(&mut p)?;
    let duplicates = if word(&mut p, "REPLACE") {
        LoadDuplicates::Replace
    } else if word(&mut p, "IGNORE") {
        LoadDuplicates::Ignore
    } else {
        LoadDuplicates::Error
    };
    expect(&mut p, "INTO")?;
    expect(&mut p, "TABLE")?;
    let table = p
        .parse_object_name(false)
        .map_err(|e| Error::Syntax(e.to_string()))?;
    if word(&mut p, "PARTITION") {
        return Err(Error::Unsupported("LOAD DATA ... PARTITION".into()));
    }
    let charset = parse_charset(&mut p)?;
    let format = parse_format(&mut p)?;
    if format.field_term.is_empty() && format.enclosed.is_none() {
        return Err(Error::Unsupported(
            "LOAD DATA of fixed-width rows (FIELDS TERMINATED BY '' ENCLOSED BY '')".into(),
        ));
    }
    let mut ignore_lines = 0;
    if word(&mut p, "IGNORE") {
        ignore_lines = match p.next_token().token {
            Token::Number(n, _) => n.parse::<u64>().map_err(|_| syntax(&p))?,
            _ => return Err(syntax(&p)),
        };
        if !(word(&mut p, "LINES") || word(&mut p, "ROWS")) {
            return Err(syntax(&p));
        }
    }
    let mut targets = None;
    if p.consume_token(&Token::LParen) {
        let mut list = Vec::new();
        if !p.consume_token(&Token::RParen) {
            loop {
                list.push(target(&mut p)?);
                if p.consume_token(&Token::RParen) {
                    break;
                }
                if !p.consume_token(&Token::Comma) {
                    return Err(syntax(&p));
                }
            }
        }
        targets = Some(list);
    }
    let mut set = Vec::new();
    if word(&mut p, "SET") {
        loop {
            let name = match target(&mut p)? {
                LoadTarget::Column(c) => c,
                LoadTarget::UserVar(_) => return Err(syntax(&p)),
            };
            if !p.consume_token(&Token::Eq) {
                return Err(syntax(&p));
            }
            let e = p.parse_expr().map_err(|e| Error::Syntax(e.to_string()))?;
            set.push((name, e));
            if !p.consume_token(&Token::Comma) {
                break;
            }
        }
    }
    while p.consume_token(&Token::SemiColon) {}
    if p.peek_token_ref().token != Token::EOF {
        return Err(syntax(&p));
    }
    Ok(LoadData {
        local,
        file,
        duplicates,
        table,
        charset,
        format,
        ignore_lines,
        targets,
        set,
    })
}

/// Consumes the unquoted keyword `w` if it comes next.
/// `[CHARACTER SET | CHARSET] name` of LOAD DATA and SELECT ... INTO
/// OUTFILE, lower-cased; `None` when absent.
pub(crate) fn parse_charset(p: &mut Parser) -> Result<Option<String>> {
    let syntax = |p: &Parser| Error::Syntax(format!("near '{}'", p.peek_token_ref().token));
    if word(p, "CHARSET") || (word(p, "CHARACTER") && word(p, "SET")) {
        let name = match p.next_token().token {
            Token::Word(w) => w.value,
            Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => s,
            _ => return Err(syntax(p)),
        };
        return Ok(Some(name.to_ascii_lowercase()));
    }
    Ok(None)
}

/// `[{FIELDS | COLUMNS} ...] [LINES ...]` of LOAD DATA and SELECT ... INTO
/// OUTFILE (the same clauses, MySQL manual 15.2.13.1).
pub(crate) fn parse_format(p: &mut Parser) -> Result<LoadFormat> {
    let syntax = |p: &Parser| Error::Syntax(format!("near '{}'", p.peek_token_ref().token));
    let mut format = LoadFormat::default();
    if word(p, "FIELDS") || word(p, "COLUMNS") {
        let mut any = false;
        loop {
            if word(p, "TERMINATED") {
                expect(p, "BY")?;
                format.field_term = string(p)?.into_bytes();
            } else if peek_word(p, "OPTIONALLY") || peek_word(p, "ENCLOSED") {
                format.optionally_enclosed = word(p, "OPTIONALLY");
                expect(p, "ENCLOSED")?;
                expect(p, "BY")?;
                format.enclosed = one_char(&string(p)?)?;
            } else if word(p, "ESCAPED") {
                expect(p, "BY")?;
                format.escaped = one_char(&string(p)?)?;
            } else {
                break;
            }
            any = true;
        }
        if !any {
            return Err(syntax(p));
        }
    }
    if word(p, "LINES") {
        let mut any = false;
        loop {
            if word(p, "STARTING") {
                expect(p, "BY")?;
                format.line_start = string(p)?.into_bytes();
            } else if word(p, "TERMINATED") {
                expect(p, "BY")?;
                format.line_term = string(p)?.into_bytes();
            } else {
                break;
            }
            any = true;
        }
        if !any {
            return Err(syntax(p));
        }
    }
    Ok(format)
}

fn word(p: &mut Parser, w: &str) -> bool {
    if peek_word(p, w) {
        p.next_token();
        true
    } else {
        false
    }
}

fn peek_word(p: &Parser, w: &str) -> bool {
    matches!(&p.peek_token_ref().token,
        Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
}

fn expect(p: &mut Parser, w: &str) -> Result<()> {
    if word(p, w) {
        Ok(())
    } else {
        Err(Error::Syntax(format!(
            "near '{}' (expected {w})",
            p.peek_token_ref().token
        )))
    }
}

/// A string literal (its escapes already undone by the tokenizer).
fn string(p: &mut Parser) -> Result<String> {
    match p.next_token().token {
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Ok(s),
        t => Err(Error::Syntax(format!("near '{t}' (expected a string)"))),
    }
}

/// ENCLOSED BY / ESCAPED BY: empty (none) or one byte; MySQL refuses longer
/// with 1083 ER_WRONG_FIELD_TERMINATORS.
fn one_char(s: &str) -> Result<Option<u8>> {
    match s.as_bytes() {
        [] => Ok(None),
        [b] => Ok(Some(*b)),
        _ => Err(Error::Sql {
            code: 1083,
            sqlstate: *b"42000",
            message: "Field separator argument is not what is expected; check the manual".into(),
        }),
    }
}

/// A column name (`c`, `t.c`, `` `c` ``) or a user variable (`@v`).
fn target(p: &mut Parser) -> Result<LoadTarget> {
    match p.next_token().token {
        Token::Word(w) if w.quote_style.is_none() && w.value.starts_with('@') => {
            let name = w.value.trim_start_matches('@');
            if name.is_empty() {
                return Err(Error::Syntax("near '@'".into()));
            }
            Ok(LoadTarget::UserVar(name.to_ascii_lowercase()))
        }
        Token::AtSign => match p.next_token().token {
            Token::Word(w) => Ok(LoadTarget::UserVar(w.value.to_ascii_lowercase())),
            Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => {
                Ok(LoadTarget::UserVar(s.to_ascii_lowercase()))
            }
            t => Err(Error::Syntax(format!("near '@{t}'"))),
        },
        Token::Word(w) => {
            let mut name = w.value;
            // `t.c` / `db.t.c`: the last part names the column.
            while p.consume_token(&Token::Period) {
                match p.next_token().token {
                    Token::Word(w) => name = w.value,
                    t => return Err(Error::Syntax(format!("near '{t}'"))),
                }
            }
            Ok(LoadTarget::Column(name))
        }
        t => Err(Error::Syntax(format!("near '{t}'"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_test_suites_form_parses() {
        let l = parse_load(
            "LOAD DATA LOCAL INFILE 'f.inc' REPLACE INTO TABLE t1 FIELDS TERMINATED BY ',' \
             LINES TERMINATED BY '\\n' (@c1,c2) SET c1 = @c1 % 2",
        )
        .expect("parses");
        assert!(l.local);
        assert_eq!(l.file, "f.inc");
        assert_eq!(l.duplicates, LoadDuplicates::Replace);
        assert_eq!(l.format.field_term, b",");
        assert_eq!(l.format.line_term, b"\n");
        assert_eq!(
            l.targets,
            Some(vec![
                LoadTarget::UserVar("c1".into()),
                LoadTarget::Column("c2".into())
            ])
        );
        assert_eq!(l.set.len(), 1);
        assert_eq!(l.set[0].0, "c1");
    }

    #[test]
    fn every_clause_parses() {
        let l = parse_load(
            "load data low_priority infile '/tmp/x' ignore into table db.t character set latin1 \
             columns terminated by '|' optionally enclosed by '\"' escaped by '' \
             lines starting by 'xxx' terminated by '\\r\\n' ignore 2 rows (a, `b`, @v);",
        )
        .expect("parses");
        assert!(!l.local);
        assert_eq!(l.duplicates, LoadDuplicates::Ignore);
        assert_eq!(l.charset.as_deref(), Some("latin1"));
        assert_eq!(l.format.enclosed, Some(b'"'));
        assert_eq!(l.format.escaped, None);
        assert_eq!(l.format.line_start, b"xxx");
        assert_eq!(l.format.line_term, b"\r\n");
        assert_eq!(l.ignore_lines, 2);
        assert_eq!(l.targets.as_ref().map(Vec::len), Some(3));
    }

    #[test]
    fn refused_forms() {
        assert!(matches!(
            parse_load("LOAD XML INFILE 'x' INTO TABLE t"),
            Err(Error::Unsupported(_))
        ));
        assert!(matches!(
            parse_load("LOAD DATA INFILE 'x' INTO TABLE t FIELDS TERMINATED BY '' ENCLOSED BY ''"),
            Err(Error::Unsupported(_))
        ));
        assert!(matches!(
            parse_load("LOAD DATA INFILE 'x' INTO TABLE t FIELDS ENCLOSED BY 'ab'"),
            Err(Error::Sql { code: 1083, .. })
        ));
        assert!(matches!(
            parse_load("LOAD DATA INFILE 'x' INTO TABLE t junk"),
            Err(Error::Syntax(_))
        ));
        assert!(is_load_statement("  load\n data infile"));
        assert!(!is_load_statement("LOADX DATA"));
    }
}
