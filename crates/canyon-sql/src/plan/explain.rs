//! EXPLAIN: a planned statement shown as MySQL 8 shows it, without running it.
//!
//! Two forms, both computed from the [`Plan`] alone (nothing is read, locked or
//! written; placeholders print as `?`):
//!
//! - **Traditional** (`EXPLAIN stmt`, `EXPLAIN FORMAT=TRADITIONAL stmt`): MySQL's
//!   twelve columns, one row per join step *in execution order* — so the join
//!   order the planner chose is the row order — then one block of rows per
//!   derived table (`DERIVED`, referred to as `<derivedN>` by the outer row),
//!   per operand of a set operation (`DERIVED` for the first, `UNION`,
//!   `INTERSECT` or `EXCEPT` for the others; the row reading their result says
//!   `<unionN,M>`: unlike MySQL, which adds a `UNION RESULT` row, the query's
//!   own block reads it) and per subquery (`SUBQUERY`, or `DEPENDENT SUBQUERY`
//!   when correlated).
//! - **Tree** (`EXPLAIN FORMAT=TREE stmt`): one row, one column, an indented
//!   iterator tree in MySQL 8's wording (`-> Nested loop inner join`,
//!   `-> Single-row index lookup on c using PRIMARY (c_w_id=w.w_id)`,
//!   `-> Filter: (...)`, `-> Table scan on t`, `-> Sort: ...`). It is the form the
//!   planner's golden tests (`tests/plans/*.plan`) print. Nodes with no MySQL
//!   counterpart: `Filter (once)` (conditions that read no table of the block,
//!   checked before the join starts), `Hash lookup on t` (the first table of a
//!   subquery read once per statement into a hash table and probed per run),
//!   `Group (hash) by` and `Deduplicate (hash)` (Canyon groups and removes
//!   duplicates in hash tables). Single-table statements print column names
//!   unqualified, everything else qualifies them with the table's alias.
//! - **JSON** (`EXPLAIN FORMAT=JSON stmt`): one row, one column, MySQL 8.0's
//!   JSON document, built from the same per-step values as the traditional
//!   form (`explain_json`, which says what its cost figures are).
//!
//! # How the columns are derived (MySQL 8.0 reference manual, 10.8.2 "EXPLAIN
//! Output Format")
//! - `type`: `ALL` for a full scan; `const` for an equality on every column of
//!   the primary key or of a UNIQUE index with constants (parameters count as
//!   constants); `eq_ref` for the same with a column of an earlier step
//!   (`Expr::Bound`); `ref` for an equality on a prefix or on a non-unique index;
//!   `range` for bounds, IN lists, OR-ed ranges and row-value IN (several key
//!   ranges). A materialised hash-join step keeps the type of the one read that
//!   fills its hash table (`ALL` when that read is a scan) and says
//!   `Using join buffer (hash join)` in Extra.
//! - `partitions`: NULL for an unpartitioned table; for a partitioned one the
//!   partitions a single-table WHERE clause leaves (every partition for a
//!   table of a join), as [`crate::plan::partition`] prunes them — a filter
//!   on logical partitions, not fewer rows read.
//! - `possible_keys`: only the chosen key. The access-path chooser keeps its best
//!   candidate only; listing the others would mean planning twice.
//! - `key_len`: the bytes MySQL would report for the key parts the read uses:
//!   the column's storage size (INT 4, BIGINT 8, DATE 3, DATETIME 5, DECIMAL
//!   packed 4 bytes per 9 digits), `n * 4` for CHAR(n) and `n * 4 + 2` for
//!   VARCHAR(n) (utf8mb4), `n` / `n + 2` for BINARY / VARBINARY, 3072 + 2 for a
//!   TEXT / BLOB part (Canyon indexes the whole value; MySQL would need a prefix),
//!   plus 1 for a nullable column.
//! - `ref`: per key part, `const`, the `db.table.column` of a bound column, or
//!   `func` for an expression over bound columns.
//! - `rows`: the planner's estimate from the table's statistics
//!   ([`crate::plan::access::estimate_rows`]); for a table never analysed, 1 for
//!   `const` / `eq_ref` and NULL otherwise. `filtered` is always 100.00 (no
//!   selectivity estimates for conditions outside the key).
//! - `Extra`: `Using where` when a condition is checked on the rows the access
//!   path returns beyond what the key ranges already enforce; `Using join buffer
//!   (hash join)`; on a block's first row `Using temporary` (GROUP BY, DISTINCT)
//!   and `Using filesort` (ORDER BY that the access path does not deliver);
//!   `Impossible WHERE` for a constant-false WHERE; `No tables used`. `Using
//!   index` never appears: Canyon has no covering-index reads.
//!
//! Subquery and derived-table ids follow the order of the plan (select list,
//! then FROM, then the other clauses), which matches MySQL's textual numbering
//! for the usual shapes.
//!
//! EXPLAIN ANALYZE (`explain_tree::analyzed`) is the tree form of a SELECT
//! that ran, each node annotated with what the executor measured for it
//! ([`crate::plan::profile`]); the session runs the statement. EXPLAIN
//! ANALYZE FORMAT=JSON is refused with 1235, as MySQL 8.0 refuses it; there
//! is no cost column in the tree form.
//!
//! # Files
//! This file holds the entry point ([`explain`]) and the output forms
//! ([`Format`]); the rest lives beside it: `explain_names` (how expressions,
//! aggregates and subqueries print, and how blocks are numbered),
//! `explain_access` (what an access path shows: type, key, key_len, ref,
//! residual conditions), `explain_table` (the traditional table, re-exported
//! here as [`traditional`]), `explain_tree` (`FORMAT=TREE`, re-exported here
//! as [`tree`]) and `explain_json` (`FORMAT=JSON`, re-exported as [`json`]).

pub use crate::plan::explain_json::json;
pub use crate::plan::explain_table::traditional;
use crate::plan::explain_table::traditional_columns;
pub use crate::plan::explain_tree::{analyzed, tree};
use crate::plan::Plan;
use crate::types::result::QueryResult;
use crate::types::value::Value;
use crate::types::{expr_column, ExprKind};
use canyon_common::{Error, Result};
use sqlparser::ast;
use std::sync::Arc;

/// The output form asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// MySQL's tabular EXPLAIN (the default).
    Traditional,
    /// `FORMAT=TREE`: the indented iterator tree.
    Tree,
    /// `FORMAT=JSON`: MySQL 8.0's JSON document.
    Json,
}

impl Format {
    /// The form named by `EXPLAIN [FORMAT=...]`; the others are refused.
    pub fn from_ast(f: Option<&ast::AnalyzeFormatKind>) -> Result<Format> {
        let f = match f {
            None => return Ok(Format::Traditional),
            Some(ast::AnalyzeFormatKind::Keyword(f) | ast::AnalyzeFormatKind::Assignment(f)) => f,
        };
        match f {
            ast::AnalyzeFormat::TRADITIONAL => Ok(Format::Traditional),
            ast::AnalyzeFormat::TREE => Ok(Format::Tree),
            ast::AnalyzeFormat::JSON => Ok(Format::Json),
            other => Err(Error::Unsupported(format!("EXPLAIN FORMAT={other}"))),
        }
    }
}

/// The traditional EXPLAIN result as MariaDB 10.11 shows it (the server's
/// MariaDB presentation): MySQL's columns less `partitions` and `filtered`,
/// which MariaDB shows only for EXPLAIN PARTITIONS / EXTENDED.
pub fn as_mariadb(result: QueryResult) -> QueryResult {
    let QueryResult::Rows {
        columns,
        rows,
        warnings,
    } = result
    else {
        return result;
    };
    // Positions in `traditional_columns`.
    const PARTITIONS: usize = 3;
    const FILTERED: usize = 10;
    assert!(
        columns.len() == 12
            && columns[PARTITIONS].name == "partitions"
            && columns[FILTERED].name == "filtered",
        "a traditional EXPLAIN result"
    );
    let keep = |i: &usize| *i != PARTITIONS && *i != FILTERED;
    let columns: Vec<_> = columns
        .iter()
        .enumerate()
        .filter(|(i, _)| keep(i))
        .map(|(_, c)| c.clone())
        .collect();
    let rows = rows
        .into_iter()
        .map(|r| {
            r.into_iter()
                .enumerate()
                .filter(|(i, _)| keep(i))
                .map(|(_, v)| v)
                .collect()
        })
        .collect();
    QueryResult::Rows {
        columns: columns.into(),
        rows,
        warnings,
    }
}

/// The EXPLAIN result set of a plan in the given form.
pub fn explain(plan: &Plan, format: Format) -> QueryResult {
    match format {
        Format::Tree => QueryResult::Rows {
            columns: Arc::from(vec![expr_column("EXPLAIN", ExprKind::String)]),
            rows: vec![vec![Value::str(&tree(plan))]],
            warnings: 0,
        },
        Format::Json => QueryResult::Rows {
            columns: Arc::from(vec![expr_column("EXPLAIN", ExprKind::String)]),
            rows: vec![vec![Value::str(&json(plan))]],
            warnings: 0,
        },
        Format::Traditional => QueryResult::Rows {
            columns: traditional_columns(),
            rows: traditional(plan),
            warnings: 0,
        },
    }
}
