//! Parsing the view statements sqlparser 0.63 does not parse as MySQL writes
//! them: `CREATE [OR REPLACE] [ALGORITHM = ..] [DEFINER = ..] [SQL SECURITY
//! ..] VIEW`, `ALTER [ALGORITHM ..] ... VIEW` and their trailing `WITH
//! [CASCADED | LOCAL] CHECK OPTION` (sqlparser stops before it), and `DROP
//! VIEW [IF EXISTS] v [, v ...] [RESTRICT | CASCADE]` (parsed here too, so
//! that every view statement reaches the session as one [`ViewStatement`]).
//!
//! The view's SELECT is parsed by sqlparser's own `parse_query` with
//! Canyon's dialect, so it is the same AST a SELECT statement gives.

use crate::catalog::view::{Algorithm, CheckOption, Security};
use crate::parse::parser::CanyonDialect;
use canyon_common::{Error, Result};
use sqlparser::ast;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// A view statement.
#[derive(Debug, Clone)]
pub enum ViewStatement {
    /// CREATE [OR REPLACE] VIEW, or ALTER VIEW.
    Create(Box<CreateView>),
    /// DROP VIEW [IF EXISTS] names [RESTRICT | CASCADE] (both words are
    /// accepted and ignored, as in MySQL).
    Drop {
        /// IF EXISTS.
        if_exists: bool,
        /// The views, each `[view]` or `[db, view]`.
        names: Vec<Vec<String>>,
    },
}

/// CREATE / ALTER VIEW as written.
#[derive(Debug, Clone)]
pub struct CreateView {
    /// ALTER VIEW (the view must exist) rather than CREATE.
    pub alter: bool,
    /// CREATE OR REPLACE.
    pub or_replace: bool,
    /// ALGORITHM =, when given.
    pub algorithm: Option<Algorithm>,
    /// DEFINER = user@host, when given (`None` inside: CURRENT_USER).
    pub definer: Option<Option<(String, String)>>,
    /// SQL SECURITY, when given.
    pub security: Option<Security>,
    /// `[view]` or `[db, view]`.
    pub name: Vec<String>,
    /// The column list, when given.
    pub columns: Vec<String>,
    /// The SELECT.
    pub query: Box<ast::Query>,
    /// WITH [CASCADED | LOCAL] CHECK OPTION (`None` without one).
    pub check: CheckOption,
}

/// Parses `trimmed` when it is a view statement (`None` otherwise): a quick
/// look at its first words decides, so other statements pay one scan of a
/// few bytes.
pub fn parse_view_statement(trimmed: &str) -> Option<Result<ViewStatement>> {
    let head: String = trimmed
        .chars()
        .take(400)
        .collect::<String>()
        .to_ascii_uppercase();
    let first = head.split_whitespace().next()?;
    if !matches!(first, "CREATE" | "ALTER" | "DROP") {
        return None;
    }
    // The word VIEW before AS / the end decides (CREATE TABLE ... AS SELECT
    // from a table named view is quoted, never the bare word).
    let words: Vec<&str> = head
        .split(|c: char| c.is_whitespace() || c == '(')
        .filter(|w| !w.is_empty())
        .take(12)
        .collect();
    let view_at = words.iter().position(|w| *w == "VIEW")?;
    let before_ok = words[1..view_at].iter().all(|w| {
        matches!(
            *w,
            "OR" | "REPLACE"
                | "ALGORITHM"
                | "="
                | "UNDEFINED"
                | "MERGE"
                | "TEMPTABLE"
                | "SQL"
                | "SECURITY"
                | "DEFINER"
                | "INVOKER"
        ) || w.starts_with("ALGORITHM")
            || w.starts_with("DEFINER")
            || w.starts_with('=')
            || w.contains('@')
            || w.starts_with("CURRENT_USER")
    });
    if !before_ok {
        return None;
    }
    let dialect = CanyonDialect::new(None);
    let parser = match Parser::new(&dialect)
        .with_recursion_limit(crate::parse::parser::RECURSION_LIMIT)
        .try_with_sql(trimmed)
    {
        Ok(p) => p,
        Err(e) => return Some(Err(syntax(trimmed, e))),
    };
    Some(parse(parser).map_err(|e| syntax(trimmed, e)))
}

fn syntax(sql: &str, e: ParserError) -> Error {
    match e {
        ParserError::RecursionLimitExceeded => Error::TooDeep,
        ParserError::TokenizerError(m) | ParserError::ParserError(m) => Error::Syntax(format!(
            "{m} in '{}'",
            sql.chars().take(80).collect::<String>()
        )),
    }
}

fn err<T>(m: &str) -> std::result::Result<T, ParserError> {
    Err(ParserError::ParserError(m.to_string()))
}

fn parse(mut p: Parser<'_>) -> std::result::Result<ViewStatement, ParserError> {
    if p.parse_keyword(Keyword::DROP) {
        p.expect_keyword(Keyword::VIEW)?;
        let if_exists = p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
        let names = p.parse_comma_separated(|p| p.parse_object_name(false))?;
        let _ = p.parse_one_of_keywords(&[Keyword::RESTRICT, Keyword::CASCADE]);
        end(&mut p)?;
        let names = names.iter().map(name_parts).collect::<Result<_, _>>()?;
        return Ok(ViewStatement::Drop { if_exists, names });
    }
    let alter = if p.parse_keyword(Keyword::ALTER) {
        true
    } else {
        p.expect_keyword(Keyword::CREATE)?;
        false
    };
    let or_replace = !alter && p.parse_keywords(&[Keyword::OR, Keyword::REPLACE]);
    let mut algorithm = None;
    if p.parse_keyword(Keyword::ALGORITHM) {
        p.expect_token(&Token::Eq)?;
        algorithm = Some(
            match p.parse_one_of_keywords(&[Keyword::UNDEFINED, Keyword::MERGE, Keyword::TEMPTABLE])
            {
                Some(Keyword::MERGE) => Algorithm::Merge,
                Some(Keyword::TEMPTABLE) => Algorithm::TempTable,
                Some(_) => Algorithm::Undefined,
                None => return err("UNDEFINED, MERGE or TEMPTABLE after ALGORITHM ="),
            },
        );
    }
    let mut definer = None;
    if p.parse_keyword(Keyword::DEFINER) {
        p.expect_token(&Token::Eq)?;
        definer = Some(parse_definer(&mut p)?);
    }
    let mut security = None;
    if p.parse_keywords(&[Keyword::SQL, Keyword::SECURITY]) {
        security = Some(
            match p.parse_one_of_keywords(&[Keyword::DEFINER, Keyword::INVOKER]) {
                Some(Keyword::INVOKER) => Security::Invoker,
                Some(_) => Security::Definer,
                None => return err("DEFINER or INVOKER after SQL SECURITY"),
            },
        );
    }
    p.expect_keyword(Keyword::VIEW)?;
    let name = name_parts(&p.parse_object_name(false)?)?;
    let mut columns = Vec::new();
    if p.consume_token(&Token::LParen) {
        columns = p
            .parse_comma_separated(|p| p.parse_identifier())?
            .into_iter()
            .map(|i| i.value)
            .collect();
        p.expect_token(&Token::RParen)?;
    }
    p.expect_keyword(Keyword::AS)?;
    let query = p.parse_query()?;
    let mut check = CheckOption::None;
    if p.parse_keyword(Keyword::WITH) {
        check = match p.parse_one_of_keywords(&[Keyword::CASCADED, Keyword::LOCAL]) {
            Some(Keyword::LOCAL) => CheckOption::Local,
            _ => CheckOption::Cascaded,
        };
        p.expect_keyword(Keyword::CHECK)?;
        p.expect_keyword(Keyword::OPTION)?;
    }
    end(&mut p)?;
    Ok(ViewStatement::Create(Box::new(CreateView {
        alter,
        or_replace,
        algorithm,
        definer,
        security,
        name,
        columns,
        query,
        check,
    })))
}

/// `user@host`, `'user'@'host'`, `CURRENT_USER [()]` (`None`).
fn parse_definer(p: &mut Parser<'_>) -> std::result::Result<Option<(String, String)>, ParserError> {
    if p.parse_keyword(Keyword::CURRENT_USER) {
        if p.consume_token(&Token::LParen) {
            p.expect_token(&Token::RParen)?;
        }
        return Ok(None);
    }
    let word = |t: &Token| -> Option<String> {
        match t {
            Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Some(s.clone()),
            Token::Word(w) => Some(w.value.clone()),
            _ => None,
        }
    };
    let t = p.next_token();
    let Some(mut user) = word(&t.token) else {
        return err("a user name after DEFINER =");
    };
    // An unquoted `root@` is one word in MySQL's dialect.
    if matches!(&t.token, Token::Word(w) if w.quote_style.is_none()) && user.ends_with('@') {
        user.pop();
        let h = p.next_token();
        return match word(&h.token) {
            Some(host) => Ok(Some((user, host))),
            None => err("a host after '@'"),
        };
    }
    // MySQL's dialect tokenises `@'host'` / `@host` either as `@` then the
    // host, or as one word starting with `@` (a user variable's form).
    let t = p.next_token();
    let host = match &t.token {
        Token::AtSign => {
            let h = p.next_token();
            word(&h.token)
        }
        Token::Word(w) if w.value.starts_with('@') => Some(
            w.value[1..]
                .trim_matches(|c| c == '\'' || c == '"' || c == '`')
                .to_string(),
        ),
        _ => {
            p.prev_token();
            Some("%".to_string())
        }
    };
    match host {
        Some(h) => Ok(Some((user, h))),
        None => err("a host after '@'"),
    }
}

fn end(p: &mut Parser<'_>) -> std::result::Result<(), ParserError> {
    while p.consume_token(&Token::SemiColon) {}
    match p.peek_token().token {
        Token::EOF => Ok(()),
        t => err(&format!("unexpected {t}")),
    }
}

fn name_parts(n: &ast::ObjectName) -> std::result::Result<Vec<String>, ParserError> {
    let parts: Vec<String> =
        n.0.iter()
            .filter_map(|p| p.as_ident().map(|i| i.value.clone()))
            .collect();
    if parts.is_empty() || parts.len() > 2 || parts.len() != n.0.len() {
        return err("a view name");
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(sql: &str) -> CreateView {
        match parse_view_statement(sql)
            .expect("a view statement")
            .expect("parses")
        {
            ViewStatement::Create(c) => *c,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn create_forms() {
        let c = create("CREATE VIEW v AS SELECT 1");
        assert!(!c.alter && !c.or_replace && c.check == CheckOption::None);
        let c = create(
            "create or replace algorithm=merge definer='root'@'localhost' sql security invoker \
             view d.v (a, b) as select x, y from t where x > 1 with local check option",
        );
        assert!(c.or_replace);
        assert_eq!(c.algorithm, Some(Algorithm::Merge));
        assert_eq!(
            c.definer,
            Some(Some(("root".to_string(), "localhost".to_string())))
        );
        assert_eq!(c.security, Some(Security::Invoker));
        assert_eq!(c.name, vec!["d", "v"]);
        assert_eq!(c.columns, vec!["a", "b"]);
        assert_eq!(c.check, CheckOption::Local);
        let c = create("ALTER DEFINER = root@`%` VIEW v AS SELECT 1 WITH CHECK OPTION");
        assert!(c.alter);
        assert_eq!(c.check, CheckOption::Cascaded);
        assert_eq!(c.definer, Some(Some(("root".to_string(), "%".to_string()))));
        let c = create("create definer=current_user view v as select 1");
        assert_eq!(c.definer, Some(None));
    }

    #[test]
    fn drop_forms() {
        match parse_view_statement("DROP VIEW IF EXISTS v1, db.v2 CASCADE") {
            Some(Ok(ViewStatement::Drop { if_exists, names })) => {
                assert!(if_exists);
                assert_eq!(
                    names,
                    vec![vec!["v1".to_string()], vec!["db".into(), "v2".into()]]
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn not_views() {
        assert!(parse_view_statement("CREATE TABLE view_t (a int)").is_none());
        assert!(parse_view_statement("SELECT * FROM view").is_none());
        assert!(parse_view_statement("DROP TABLE v").is_none());
        assert!(matches!(
            parse_view_statement("CREATE VIEW v AS SELECT 1 WITH CHECK"),
            Some(Err(Error::Syntax(_)))
        ));
    }
}
