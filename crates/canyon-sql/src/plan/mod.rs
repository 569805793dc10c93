//! Layer 5, **plan**: from a parsed statement to an executable plan,
//! against one catalog snapshot.
//!
//! - [`bind`]: the binder, sqlparser's expressions to the bound tree of
//!   `crate::expr` (names to frame positions, functions, placeholders), with
//!   [`bind_collate`] (MySQL's coercibility rules on comparisons),
//!   [`bind_functions`] (the forms with their own syntax that bind to
//!   functions: `d + INTERVAL n DAY`, EXTRACT, ...) and [`bind_literal`]
//!   (literals typed as MySQL types them). Binding is planning (SQLite keeps
//!   `resolve.c` apart from `expr.c` likewise): a subquery is planned where
//!   the binder meets it, and its plan goes into the tree as the
//!   `SubqueryPlan` interface `crate::expr` declares, which [`select`]'s
//!   plan implements ([`select::select_plan`] gets it back);
//! - [`select`]: SELECT planning (frames, the plan's shape, a query block
//!   from start to end, WITH), with its steps in `from` (FROM sources,
//!   derived tables, CTE references, join conditions), `clauses` (the select
//!   list, WHERE, GROUP BY, HAVING, ORDER BY, LIMIT) and `join` (pushed-down
//!   conditions, join order, access path and predicates per step); [`setop`]
//!   for UNION / INTERSECT / EXCEPT, and [`recursive`] for WITH RECURSIVE;
//! - [`view`]: views named in FROM (expanded as derived tables) and
//!   INSERT / UPDATE / DELETE through updatable views (rewritten onto the
//!   base table);
//! - [`access`]: access paths (point reads, ranges, index choice);
//! - [`dml`] (re-exported here): INSERT / UPDATE / DELETE plans and the
//!   planning context;
//! - [`explain`]: what EXPLAIN prints of a plan (the entry point and its
//!   forms), with `explain_names` (how expressions and blocks print, block
//!   ids), `explain_access` (what a table read shows of its access path),
//!   `explain_table` (the traditional table), `explain_tree`
//!   (`FORMAT=TREE`) and `explain_json` (`FORMAT=JSON`), and [`profile`] (what EXPLAIN ANALYZE measured per
//!   plan node, filled by the executor);
//! - [`partition`]: a partitioned table's function bound to its row, row
//!   placement, and the partitions a WHERE clause leaves (EXPLAIN's
//!   `partitions`);
//! - [`generated`]: a table's generated columns bound to its row, the
//!   values they give each written row, and MySQL's 3105 for a write into
//!   one, and the match of a WHERE clause's expression to an indexed
//!   generated column (`dml` and `access` call it, and it binds with
//!   `bind`: part of the circle).
//!
//! A plan is immutable and re-executable with new parameters. SQL's grammar
//! recurses here (a subquery is a query inside an expression inside a
//! query), so `select`, `setop` and `dml` call each other, and `from` and
//! `join` (steps of `select` that use its types) belong to the same circle;
//! so does the binder, which plans the subqueries it meets (`bind` calls
//! `select`, which binds its clauses with it), with `bind_collate`,
//! `bind_functions`, `bind_stored` (calls of stored functions),
//! `bind_match` (`MATCH ... AGAINST` to its FULLTEXT index) and
//! `bind_window` (window function calls and their windows), which work on
//! the binder's state and are called by it; `multi_dml` (multi-table
//! UPDATE / DELETE, planned as a SELECT over their join) is called by `dml`
//! and calls `select`.
//! That circle stays inside this folder. Imports: the layers below.

pub mod access;
pub mod bind;
pub mod bind_collate;
pub mod bind_functions;
pub mod bind_literal;
mod bind_match;
mod bind_members;
mod bind_rows;
mod bind_stored;
pub mod bind_window;
mod clauses;
pub mod dml;
pub mod explain;
mod explain_access;
mod explain_json;
mod explain_names;
mod explain_table;
mod explain_tree;
mod from;
pub mod generated;
mod join;
pub mod multi_dml;
pub mod partition;
pub mod profile;
pub mod recursive;
pub mod select;
pub mod setop;
pub mod view;

pub use dml::*;
