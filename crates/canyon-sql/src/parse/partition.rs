//! The partition clauses sqlparser 0.63 does not parse (it answers 1064 for
//! `CREATE TABLE ... PARTITION BY` and for MySQL's partition forms of ALTER
//! TABLE).
//!
//! A small hand-written parser: [`split_partition_clause`] finds the
//! top-level `PARTITION BY` of a CREATE TABLE (outside parentheses, quotes
//! and comments) and cuts the statement there; sqlparser parses the part
//! before it as usual, and [`parse_partition_by`] parses the clause with
//! sqlparser's `Parser` primitives (its tokenizer, `parse_expr` for the
//! partitioning expression and the bound values). [`parse_alter_partition`]
//! recognises `ALTER TABLE t <partition operation>` the same way.
//!
//! Nothing here validates: the clause is returned as written
//! ([`PartitionSpec`]); `crate::ddl::partition` checks it against the table
//! (errors 1564, 1493, 1503, 1517, ...) and turns it into the catalog's
//! [`crate::catalog::partition::Partitioning`].
//!
//! Grammar (MySQL 8.0 manual, 15.1.20 "CREATE TABLE Statement"):
//! ```text
//! PARTITION BY { [LINEAR] HASH(expr) | [LINEAR] KEY [ALGORITHM={1|2}] (cols)
//!              | RANGE{(expr) | COLUMNS(cols)} | LIST{(expr) | COLUMNS(cols)} }
//!   [PARTITIONS n]
//!   [SUBPARTITION BY { [LINEAR] HASH(expr) | [LINEAR] KEY [ALGORITHM={1|2}] (cols) }
//!     [SUBPARTITIONS n]]
//!   [(PARTITION name [VALUES {LESS THAN {(v, ...) | MAXVALUE} | IN (v, ...)}]
//!       [options] [(SUBPARTITION name [options], ...)], ...)]
//! options: [STORAGE] ENGINE [=] e | COMMENT [=] 's' | DATA DIRECTORY [=] 's'
//!        | INDEX DIRECTORY [=] 's' | MAX_ROWS [=] n | MIN_ROWS [=] n
//!        | TABLESPACE [=] t | NODEGROUP [=] n
//! ```

use crate::catalog::partition::PartitionMethod;
use sqlparser::ast;
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// A PARTITION BY clause as written.
#[derive(Debug, Clone)]
pub struct PartitionSpec {
    /// The method.
    pub method: PartitionMethod,
    /// HASH / RANGE / LIST: the expression.
    pub expr: Option<ast::Expr>,
    /// KEY / COLUMNS: the column names.
    pub columns: Vec<String>,
    /// KEY ALGORITHM = n.
    pub key_algorithm: Option<u8>,
    /// PARTITIONS n.
    pub count: Option<u64>,
    /// The partitions listed.
    pub partitions: Vec<PartitionSpecDef>,
    /// SUBPARTITION BY.
    pub sub: Option<SubSpec>,
}

/// SUBPARTITION BY as written.
#[derive(Debug, Clone)]
pub struct SubSpec {
    /// HASH / KEY, linear or not.
    pub method: PartitionMethod,
    /// The HASH expression.
    pub expr: Option<ast::Expr>,
    /// The KEY columns.
    pub columns: Vec<String>,
    /// SUBPARTITIONS n.
    pub count: Option<u64>,
}

/// One bound value as written.
#[derive(Debug, Clone)]
pub enum BoundSpec {
    /// MAXVALUE.
    MaxValue,
    /// An expression (a literal, NULL, or a constant expression).
    Expr(Box<ast::Expr>),
}

/// A partition's VALUES as written.
#[derive(Debug, Clone)]
pub enum ValuesSpec {
    /// No VALUES clause.
    None,
    /// VALUES LESS THAN MAXVALUE (unparenthesised) or (v, ...).
    LessThan(Vec<BoundSpec>),
    /// VALUES IN (v, ...) — each item a tuple (one value, or `(a, b)`).
    In(Vec<Vec<BoundSpec>>),
}

/// One PARTITION definition as written.
#[derive(Debug, Clone)]
pub struct PartitionSpecDef {
    /// Name.
    pub name: String,
    /// VALUES.
    pub values: ValuesSpec,
    /// COMMENT.
    pub comment: Option<String>,
    /// DATA DIRECTORY.
    pub data_directory: Option<String>,
    /// INDEX DIRECTORY.
    pub index_directory: Option<String>,
    /// Named SUBPARTITIONs.
    pub subpartitions: Vec<String>,
}

/// An ALTER TABLE partition operation.
#[derive(Debug, Clone)]
pub enum PartitionOp {
    /// ADD PARTITION (definitions) | ADD PARTITION PARTITIONS n.
    Add {
        /// The new partitions.
        partitions: Vec<PartitionSpecDef>,
        /// PARTITIONS n (HASH / KEY).
        count: Option<u64>,
    },
    /// DROP PARTITION names.
    Drop(Vec<String>),
    /// TRUNCATE PARTITION names | ALL (`None`).
    Truncate(Option<Vec<String>>),
    /// COALESCE PARTITION n.
    Coalesce(u64),
    /// REORGANIZE PARTITION names INTO (definitions); without names (HASH /
    /// KEY): a no-op rebuild.
    Reorganize {
        /// The partitions replaced.
        from: Vec<String>,
        /// Their replacements.
        into: Vec<PartitionSpecDef>,
    },
    /// REMOVE PARTITIONING.
    Remove,
    /// PARTITION BY ... on an existing table.
    PartitionBy(Box<PartitionSpec>),
    /// ANALYZE / CHECK / OPTIMIZE / REBUILD / REPAIR PARTITION names | ALL:
    /// maintenance with nothing to do; the word is kept for the result.
    Maintenance {
        /// ANALYZE, CHECK, OPTIMIZE, REBUILD or REPAIR.
        verb: String,
        /// The partitions; `None` for ALL.
        names: Option<Vec<String>>,
    },
    /// A form Canyon does not implement (EXCHANGE, DISCARD, IMPORT).
    Unsupported(String),
}

/// Where a CREATE TABLE's top-level `PARTITION BY` starts: the byte offset of
/// `PARTITION`. `None` when the text is no CREATE TABLE or has no such clause.
pub fn split_partition_clause(text: &str) -> Option<usize> {
    let head: String = text
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_uppercase();
    if !(head.starts_with("CREATE TABLE") || head.starts_with("CREATE TEMPORARY TABLE")) {
        return None;
    }
    top_level_word(text, "PARTITION", Some("BY"))
}

/// Whether `text` (one statement) is a CREATE TABLE with a partition clause
/// or an ALTER TABLE partition operation.
pub fn is_partition_statement(text: &str) -> bool {
    split_partition_clause(text).is_some() || parse_alter_partition(text).is_some()
}

/// The statements of a multi-statement text: split at each `;` outside
/// quotes and comments, trimmed, empty ones left out.
pub fn split_statements(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    scan(text, &mut |i, b, _| {
        if b == b';' {
            out.push(&text[start..i]);
            start = i + 1;
        }
        false
    });
    out.push(&text[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// Visits each byte of `text` outside quotes and comments with its offset and
/// the parenthesis depth before it, until `f` returns true; returns that
/// offset.
fn scan(text: &str, f: &mut dyn FnMut(usize, u8, i32) -> bool) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut depth = 0i32;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    if b[i] == b'\\' && q != b'`' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 2;
            }
            c => {
                if f(i, c, depth) {
                    return Some(i);
                }
                match c {
                    b'(' => depth += 1,
                    b')' => depth -= 1,
                    _ => {}
                }
                i += 1;
            }
        }
    }
    None
}

/// The byte offset of `word` (followed by `next`, if given) at parenthesis
/// depth 0, outside quotes and comments.
fn top_level_word(text: &str, word: &str, next: Option<&str>) -> Option<usize> {
    let b = text.as_bytes();
    scan(text, &mut |i, c, depth| {
        let starts = (c.is_ascii_alphabetic() || c == b'_')
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'));
        if depth != 0 || !starts {
            return false;
        }
        let end = i + b[i..]
            .iter()
            .take_while(|x| x.is_ascii_alphanumeric() || **x == b'_' || **x == b'$')
            .count();
        if !text[i..end].eq_ignore_ascii_case(word) {
            return false;
        }
        match next {
            None => true,
            Some(n) => {
                let w: String = text[end..]
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_ascii_alphabetic())
                    .collect();
                w.eq_ignore_ascii_case(n)
            }
        }
    })
}

/// Consumes `t` if it is next (an optional token: `=`, `;`).
fn optional(p: &mut Parser, t: &Token) {
    let _ = p.consume_token(t);
}

/// Consumes `w` (a word, case-insensitive) if it is next.
fn word(p: &mut Parser, w: &str) -> bool {
    if let Token::Word(x) = &p.peek_token_ref().token {
        if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w) {
            p.next_token();
            return true;
        }
    }
    false
}

fn expect_word(p: &mut Parser, w: &str) -> std::result::Result<(), ParserError> {
    if word(p, w) {
        Ok(())
    } else {
        Err(ParserError::ParserError(format!(
            "expected {w}, found {}",
            p.peek_token()
        )))
    }
}

fn ident(p: &mut Parser) -> std::result::Result<String, ParserError> {
    Ok(p.parse_identifier()?.value)
}

fn names(p: &mut Parser) -> std::result::Result<Vec<String>, ParserError> {
    let mut out = vec![ident(p)?];
    while p.consume_token(&Token::Comma) {
        out.push(ident(p)?);
    }
    Ok(out)
}

fn column_list(p: &mut Parser) -> std::result::Result<Vec<String>, ParserError> {
    p.expect_token(&Token::LParen)?;
    if p.consume_token(&Token::RParen) {
        return Ok(Vec::new());
    }
    let cols = names(p)?;
    p.expect_token(&Token::RParen)?;
    Ok(cols)
}

/// Parses the PARTITION BY clause `clause` (starting at `PARTITION`). The
/// caller turns an error into 1064 with the text at the error's position.
pub fn parse_partition_by(clause: &str) -> std::result::Result<PartitionSpec, ParserError> {
    let dialect = MySqlDialect {};
    let run = || -> std::result::Result<PartitionSpec, ParserError> {
        let mut p = Parser::new(&dialect).try_with_sql(clause)?;
        expect_word(&mut p, "PARTITION")?;
        expect_word(&mut p, "BY")?;
        let spec = partition_by(&mut p)?;
        optional(&mut p, &Token::SemiColon);
        if p.peek_token_ref().token != Token::EOF {
            return Err(ParserError::ParserError(format!(
                "unexpected {} after the partition clause",
                p.peek_token()
            )));
        }
        Ok(spec)
    };
    run()
}

/// The clause after `PARTITION BY`.
fn partition_by(p: &mut Parser) -> std::result::Result<PartitionSpec, ParserError> {
    let (method, expr, columns, key_algorithm) = parse_method(p, true)?;
    let mut count = None;
    if word(p, "PARTITIONS") {
        count = Some(p.parse_literal_uint()?);
    }
    let mut sub = None;
    if word(p, "SUBPARTITION") {
        expect_word(p, "BY")?;
        let (m, e, c, _) = parse_method(p, false)?;
        let mut n = None;
        if word(p, "SUBPARTITIONS") {
            n = Some(p.parse_literal_uint()?);
        }
        sub = Some(SubSpec {
            method: m,
            expr: e,
            columns: c,
            count: n,
        });
    }
    let mut partitions = Vec::new();
    if p.peek_token_ref().token == Token::LParen {
        partitions = definitions(p)?;
    }
    Ok(PartitionSpec {
        method,
        expr,
        columns,
        key_algorithm,
        count,
        partitions,
        sub,
    })
}

type Method = (PartitionMethod, Option<ast::Expr>, Vec<String>, Option<u8>);

fn parse_method(p: &mut Parser, top: bool) -> std::result::Result<Method, ParserError> {
    let linear = word(p, "LINEAR");
    if word(p, "HASH") {
        p.expect_token(&Token::LParen)?;
        let e = p.parse_expr()?;
        p.expect_token(&Token::RParen)?;
        let m = if linear {
            PartitionMethod::LinearHash
        } else {
            PartitionMethod::Hash
        };
        return Ok((m, Some(e), Vec::new(), None));
    }
    if word(p, "KEY") {
        let mut algo = None;
        if word(p, "ALGORITHM") {
            optional(p, &Token::Eq);
            let n = p.parse_literal_uint()?;
            if !(1..=2).contains(&n) {
                return Err(ParserError::ParserError(format!("ALGORITHM={n}")));
            }
            algo = Some(n as u8);
        }
        let cols = column_list(p)?;
        let m = if linear {
            PartitionMethod::LinearKey
        } else {
            PartitionMethod::Key
        };
        return Ok((m, None, cols, algo));
    }
    if linear || !top {
        return Err(ParserError::ParserError(format!(
            "expected HASH or KEY, found {}",
            p.peek_token()
        )));
    }
    let range = if word(p, "RANGE") {
        true
    } else if word(p, "LIST") {
        false
    } else {
        return Err(ParserError::ParserError(format!(
            "expected HASH, KEY, RANGE or LIST, found {}",
            p.peek_token()
        )));
    };
    if word(p, "COLUMNS") {
        let cols = column_list(p)?;
        let m = if range {
            PartitionMethod::RangeColumns
        } else {
            PartitionMethod::ListColumns
        };
        return Ok((m, None, cols, None));
    }
    p.expect_token(&Token::LParen)?;
    let e = p.parse_expr()?;
    p.expect_token(&Token::RParen)?;
    let m = if range {
        PartitionMethod::Range
    } else {
        PartitionMethod::List
    };
    Ok((m, Some(e), Vec::new(), None))
}

/// `(PARTITION ..., PARTITION ...)`.
fn definitions(p: &mut Parser) -> std::result::Result<Vec<PartitionSpecDef>, ParserError> {
    p.expect_token(&Token::LParen)?;
    let mut out = Vec::new();
    loop {
        out.push(definition(p)?);
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    p.expect_token(&Token::RParen)?;
    Ok(out)
}

fn bound(p: &mut Parser) -> std::result::Result<BoundSpec, ParserError> {
    if word(p, "MAXVALUE") {
        Ok(BoundSpec::MaxValue)
    } else {
        Ok(BoundSpec::Expr(Box::new(p.parse_expr()?)))
    }
}

fn bounds(p: &mut Parser) -> std::result::Result<Vec<BoundSpec>, ParserError> {
    p.expect_token(&Token::LParen)?;
    let mut out = vec![bound(p)?];
    while p.consume_token(&Token::Comma) {
        out.push(bound(p)?);
    }
    p.expect_token(&Token::RParen)?;
    Ok(out)
}

fn definition(p: &mut Parser) -> std::result::Result<PartitionSpecDef, ParserError> {
    expect_word(p, "PARTITION")?;
    let name = ident(p)?;
    let mut values = ValuesSpec::None;
    if word(p, "VALUES") {
        if word(p, "LESS") {
            expect_word(p, "THAN")?;
            values = if word(p, "MAXVALUE") {
                ValuesSpec::LessThan(vec![BoundSpec::MaxValue])
            } else {
                ValuesSpec::LessThan(bounds(p)?)
            };
        } else if word(p, "IN") {
            p.expect_token(&Token::LParen)?;
            let mut list = Vec::new();
            loop {
                if p.peek_token_ref().token == Token::LParen {
                    list.push(bounds(p)?);
                } else {
                    list.push(vec![bound(p)?]);
                }
                if !p.consume_token(&Token::Comma) {
                    break;
                }
            }
            p.expect_token(&Token::RParen)?;
            values = ValuesSpec::In(list);
        } else {
            return Err(ParserError::ParserError(format!(
                "expected LESS THAN or IN, found {}",
                p.peek_token()
            )));
        }
    }
    let mut def = PartitionSpecDef {
        name,
        values,
        comment: None,
        data_directory: None,
        index_directory: None,
        subpartitions: Vec::new(),
    };
    options(p, &mut def)?;
    if p.peek_token_ref().token == Token::LParen {
        p.next_token();
        loop {
            expect_word(p, "SUBPARTITION")?;
            def.subpartitions.push(ident(p)?);
            let mut scratch = PartitionSpecDef {
                name: String::new(),
                values: ValuesSpec::None,
                comment: None,
                data_directory: None,
                index_directory: None,
                subpartitions: Vec::new(),
            };
            options(p, &mut scratch)?;
            if !p.consume_token(&Token::Comma) {
                break;
            }
        }
        p.expect_token(&Token::RParen)?;
    }
    Ok(def)
}

/// Partition options: recorded (COMMENT, DATA / INDEX DIRECTORY) or
/// accepted and ignored (ENGINE, MAX_ROWS, MIN_ROWS, TABLESPACE, NODEGROUP).
fn options(p: &mut Parser, def: &mut PartitionSpecDef) -> std::result::Result<(), ParserError> {
    loop {
        if word(p, "STORAGE") {
            expect_word(p, "ENGINE")?;
            optional(p, &Token::Eq);
            ident(p)?;
        } else if word(p, "ENGINE") {
            optional(p, &Token::Eq);
            ident(p)?;
        } else if word(p, "COMMENT") {
            optional(p, &Token::Eq);
            def.comment = Some(p.parse_literal_string()?);
        } else if word(p, "DATA") {
            expect_word(p, "DIRECTORY")?;
            optional(p, &Token::Eq);
            def.data_directory = Some(p.parse_literal_string()?);
        } else if word(p, "INDEX") {
            expect_word(p, "DIRECTORY")?;
            optional(p, &Token::Eq);
            def.index_directory = Some(p.parse_literal_string()?);
        } else if word(p, "MAX_ROWS") || word(p, "MIN_ROWS") || word(p, "NODEGROUP") {
            optional(p, &Token::Eq);
            p.parse_literal_uint()?;
        } else if word(p, "TABLESPACE") {
            optional(p, &Token::Eq);
            ident(p)?;
        } else {
            return Ok(());
        }
    }
}

/// `ALTER [ONLINE | IGNORE] TABLE name <partition operation>`: the table's
/// name parts and the operation; `None` when the text is another ALTER.
pub fn parse_alter_partition(
    text: &str,
) -> Option<std::result::Result<(Vec<String>, PartitionOp), ParserError>> {
    let head: String = text
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_uppercase();
    if !head.starts_with("ALTER") {
        return None;
    }
    let dialect = MySqlDialect {};
    let mut p = Parser::new(&dialect).try_with_sql(text).ok()?;
    if !word(&mut p, "ALTER") {
        return None;
    }
    word(&mut p, "ONLINE");
    word(&mut p, "IGNORE");
    if !word(&mut p, "TABLE") {
        return None;
    }
    let table = p.parse_object_name(false).ok()?;
    let parts: Vec<String> = table
        .0
        .iter()
        .filter_map(|part| part.as_ident().map(|i| i.value.clone()))
        .collect();
    let start = p.index();
    let recognised = {
        let t = p.peek_token_ref().token.to_string().to_ascii_uppercase();
        let next = p
            .peek_nth_token_ref(1)
            .token
            .to_string()
            .to_ascii_uppercase();
        match t.as_str() {
            "ADD" | "DROP" | "TRUNCATE" | "ANALYZE" | "CHECK" | "OPTIMIZE" | "REBUILD"
            | "REPAIR" | "EXCHANGE" | "DISCARD" | "IMPORT" | "COALESCE" | "REORGANIZE" => {
                next == "PARTITION"
            }
            "REMOVE" => next == "PARTITIONING",
            "PARTITION" => next == "BY",
            _ => false,
        }
    };
    if !recognised {
        return None;
    }
    let _ = start;
    let op = alter_op(&mut p).and_then(|op| {
        optional(&mut p, &Token::SemiColon);
        if p.peek_token_ref().token != Token::EOF {
            return Err(ParserError::ParserError(format!(
                "unexpected {}",
                p.peek_token()
            )));
        }
        Ok(op)
    });
    Some(op.map(|op| (parts, op)))
}

fn name_list_or_all(p: &mut Parser) -> std::result::Result<Option<Vec<String>>, ParserError> {
    if word(p, "ALL") {
        Ok(None)
    } else {
        Ok(Some(names(p)?))
    }
}

fn alter_op(p: &mut Parser) -> std::result::Result<PartitionOp, ParserError> {
    if word(p, "PARTITION") {
        expect_word(p, "BY")?;
        return Ok(PartitionOp::PartitionBy(Box::new(partition_by(p)?)));
    }
    if word(p, "REMOVE") {
        expect_word(p, "PARTITIONING")?;
        return Ok(PartitionOp::Remove);
    }
    let verb = p.next_token().token.to_string().to_ascii_uppercase();
    expect_word(p, "PARTITION")?;
    Ok(match verb.as_str() {
        "ADD" => {
            if word(p, "PARTITIONS") {
                PartitionOp::Add {
                    partitions: Vec::new(),
                    count: Some(p.parse_literal_uint()?),
                }
            } else {
                PartitionOp::Add {
                    partitions: definitions(p)?,
                    count: None,
                }
            }
        }
        "DROP" => PartitionOp::Drop(names(p)?),
        "TRUNCATE" => PartitionOp::Truncate(name_list_or_all(p)?),
        "COALESCE" => PartitionOp::Coalesce(p.parse_literal_uint()?),
        "REORGANIZE" => {
            if p.peek_token_ref().token == Token::EOF {
                PartitionOp::Reorganize {
                    from: Vec::new(),
                    into: Vec::new(),
                }
            } else {
                let from = names(p)?;
                expect_word(p, "INTO")?;
                PartitionOp::Reorganize {
                    from,
                    into: definitions(p)?,
                }
            }
        }
        "ANALYZE" | "CHECK" | "OPTIMIZE" | "REBUILD" | "REPAIR" => PartitionOp::Maintenance {
            verb,
            names: name_list_or_all(p)?,
        },
        other => {
            // EXCHANGE / DISCARD / IMPORT: skip the rest; refused by the caller.
            while p.peek_token_ref().token != Token::EOF {
                p.next_token();
            }
            PartitionOp::Unsupported(format!("ALTER TABLE ... {other} PARTITION"))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_the_top_level_clause() {
        let sql = "CREATE TABLE t (a INT, `partition by` INT) ENGINE=InnoDB PARTITION BY HASH(a) PARTITIONS 4";
        let at = split_partition_clause(sql).expect("a clause");
        assert!(sql[at..].starts_with("PARTITION BY HASH"));
        assert!(split_partition_clause("CREATE TABLE t (a INT)").is_none());
        assert!(split_partition_clause("SELECT 1 PARTITION BY").is_none());
        assert_eq!(
            split_statements("CREATE TABLE t (a INT) PARTITION BY HASH(a); SELECT ';' ; "),
            vec!["CREATE TABLE t (a INT) PARTITION BY HASH(a)", "SELECT ';'"]
        );
    }

    #[test]
    fn parses_range_with_options() {
        let s = parse_partition_by(
            "PARTITION BY RANGE (YEAR(d)) (PARTITION p0 VALUES LESS THAN (1990) COMMENT = 'old' ENGINE = InnoDB, PARTITION p1 VALUES LESS THAN MAXVALUE)",
        )
        .expect("parses");
        assert!(matches!(s.method, PartitionMethod::Range));
        assert_eq!(s.partitions.len(), 2);
        assert_eq!(s.partitions[0].comment.as_deref(), Some("old"));
        assert!(matches!(
            s.partitions[1].values,
            ValuesSpec::LessThan(ref b) if matches!(b[..], [BoundSpec::MaxValue])
        ));
    }

    #[test]
    fn parses_alter_forms() {
        let (t, op) = parse_alter_partition("ALTER TABLE db.t DROP PARTITION p0, p1")
            .expect("recognised")
            .expect("parses");
        assert_eq!(t, vec!["db".to_string(), "t".to_string()]);
        assert!(matches!(op, PartitionOp::Drop(ref n) if n.len() == 2));
        assert!(parse_alter_partition("ALTER TABLE t ADD COLUMN c INT").is_none());
        let (_, op) = parse_alter_partition("ALTER TABLE t COALESCE PARTITION 2")
            .expect("recognised")
            .expect("parses");
        assert!(matches!(op, PartitionOp::Coalesce(2)));
    }
}
