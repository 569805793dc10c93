//! Texts parsed piece by piece, outside sqlparser's grammar: a
//! multi-statement text (CLIENT_MULTI_STATEMENTS) one of whose statements
//! needs a parser of its own (an XA statement, a partition clause), split
//! at its top-level `;` and each piece parsed alone; and the partition
//! clauses themselves (CREATE TABLE ... PARTITION BY, cut before the clause
//! for sqlparser; ALTER TABLE's partition operations). Also the other side
//! of that coin: which texts none of the hand parsers can match
//! (`plain_dml`: one SELECT / INSERT / UPDATE / DELETE / REPLACE), so that
//! the common statement goes straight to sqlparser.

use super::parser::{near, parse_error, parse_text, Parsed};
use crate::parse::limits;
use canyon_common::{Error, Result};
use sqlparser::ast::Statement;

/// The statements with a partition clause (`crate::parse::partition`):
/// CREATE TABLE ... PARTITION BY, cut before the clause for sqlparser, and
/// ALTER TABLE's partition operations. `None` for any other text.
// Never inlined: its frame (a parser of its own) would otherwise sit under
// sqlparser's recursion in `parse_text`, whose stack budget `limits` sizes.
#[inline(never)]
pub(super) fn parse_partitioned(trimmed: &str) -> Result<Option<Vec<Parsed>>> {
    use crate::parse::partition::{is_partition_statement, split_statements};
    // Several statements (CLIENT_MULTI_STATEMENTS) of which one has a
    // partition clause: each is parsed on its own. Bounded so that a large
    // text (a bulk INSERT whose strings hold `;`) is not scanned twice.
    if trimmed.len() <= MULTI_STATEMENT_SCAN && trimmed.contains(';') {
        let pieces = split_statements(trimmed);
        if pieces.len() > 1 && pieces.iter().any(|p| is_partition_statement(p)) {
            let mut out = Vec::with_capacity(pieces.len());
            for p in pieces {
                match parse_partitioned_one(p)? {
                    Some(x) => out.push(x),
                    None => out.extend(parse_text(p, &limits::scan(p), None)?),
                }
            }
            return Ok(Some(out));
        }
    }
    Ok(parse_partitioned_one(trimmed)?.map(|p| vec![p]))
}

/// Several statements (CLIENT_MULTI_STATEMENTS) of which one is an XA
/// statement, which sqlparser does not know: each is parsed on its own.
/// MariaDB's Spider engine sends its session settings and `xa start` as one
/// text (`set session autocommit = 1;...;xa start 0x3137,0x31,1`). `None`
/// for a text without such a piece; only texts that name `xa` are split.
#[inline(never)]
pub(super) fn parse_multi_xa(trimmed: &str) -> Result<Option<Vec<Parsed>>> {
    use crate::parse::partition::split_statements;
    let names_xa = || {
        trimmed
            .as_bytes()
            .windows(2)
            .any(|w| w.eq_ignore_ascii_case(b"xa"))
    };
    if trimmed.len() > MULTI_STATEMENT_SCAN || !trimmed.contains(';') || !names_xa() {
        return Ok(None);
    }
    let pieces = split_statements(trimmed);
    if pieces.len() < 2
        || !pieces
            .iter()
            .any(|p| crate::parse::xa::parse_xa(p).is_some())
    {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(pieces.len());
    for p in pieces {
        out.extend(parse_text(p, &limits::scan(p), None)?);
    }
    Ok(Some(out))
}

/// The texts up to which a multi-statement text is split to find a partition
/// or XA statement among its statements.
const MULTI_STATEMENT_SCAN: usize = 1 << 20;

/// [`parse_partitioned`] of one statement.
fn parse_partitioned_one(trimmed: &str) -> Result<Option<Parsed>> {
    use crate::parse::partition::{
        parse_alter_partition, parse_partition_by, split_partition_clause,
    };
    if let Some(at) = split_partition_clause(trimmed) {
        let clause = &trimmed[at..];
        let spec = parse_partition_by(clause).map_err(|e| parse_error(clause, e))?;
        let head = &trimmed[..at];
        let mut stmts = parse_text(head, &limits::scan(head), None)?;
        return match (stmts.pop(), stmts.is_empty()) {
            (Some(Parsed::Sql(create)), true) if matches!(*create, Statement::CreateTable(_)) => {
                Ok(Some(Parsed::CreatePartitioned {
                    create,
                    spec: Box::new(spec),
                }))
            }
            _ => Err(Error::Syntax(near(trimmed, ""))),
        };
    }
    match parse_alter_partition(trimmed) {
        Some(r) => {
            let (table, op) = r.map_err(|e| parse_error(trimmed, e))?;
            Ok(Some(Parsed::AlterPartition {
                table,
                op: Box::new(op),
            }))
        }
        None => Ok(None),
    }
}

/// The leading word of `text` when it is one statement (no `;` but a
/// trailing one) that starts with SELECT, INSERT, UPDATE, DELETE or REPLACE:
/// none of the forms `parse_text` recognises by hand before sqlparser
/// (accounts, XA, LOCK TABLES, SET STATEMENT, views, partition clauses)
/// starts so, so such a text goes straight to sqlparser, with only SELECT
/// ... INTO looked for. The common OLTP statement skips a dozen prefix
/// checks, some of which allocate (about a tenth of a text-protocol point
/// select's parse). A text that starts with a comment takes the long way.
pub(super) fn plain_dml(text: &str) -> Option<&str> {
    let t = text.trim_start();
    let end = t
        .bytes()
        .position(|b| !b.is_ascii_alphabetic())
        .unwrap_or(t.len());
    let first = &t[..end];
    let dml = ["SELECT", "INSERT", "UPDATE", "DELETE", "REPLACE"]
        .iter()
        .any(|w| first.eq_ignore_ascii_case(w));
    let one_statement = match t.find(';') {
        None => true,
        Some(at) => t[at..]
            .trim_start_matches([';', ' ', '\t', '\r', '\n'])
            .is_empty(),
    };
    (dml && one_statement).then_some(first)
}

#[cfg(test)]
mod tests {
    use super::plain_dml;

    #[test]
    fn plain_dml_is_one_dml_statement_by_its_first_word() {
        assert_eq!(plain_dml("SELECT c FROM t WHERE id = 1"), Some("SELECT"));
        assert_eq!(plain_dml("  update t set c = 1 ;  \n"), Some("update"));
        assert_eq!(plain_dml("REPLACE INTO t VALUES (1)"), Some("REPLACE"));
        assert_eq!(plain_dml("insert into t values (1);;"), Some("insert"));
        // Several statements, a comment first, other verbs, longer words:
        // the long way, where the hand parsers look.
        assert_eq!(plain_dml("SELECT 1; SELECT 2"), None);
        assert_eq!(plain_dml("set autocommit = 1; xa start 'a'"), None);
        assert_eq!(plain_dml("/* c */ SELECT 1"), None);
        assert_eq!(plain_dml("LOCK TABLES t READ"), None);
        assert_eq!(plain_dml("XA START 'x'"), None);
        assert_eq!(plain_dml("SELECTED"), None);
        assert_eq!(plain_dml("(SELECT 1) UNION (SELECT 2)"), None);
        // A `;` inside a literal also takes the long way: slower, not wrong.
        assert_eq!(plain_dml("INSERT INTO t VALUES ('a;b')"), None);
    }
}
