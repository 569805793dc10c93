//! Layer 5, **plan**: from a parsed statement to an executable plan,
//! against one catalog snapshot.
//!
//! - [`select`]: SELECT planning (frames, the plan's shape, a query block
//!   from start to end, WITH), with its steps in `from` (FROM sources,
//!   derived tables, CTE references, join conditions), `clauses` (the select
//!   list, WHERE, GROUP BY, HAVING, ORDER BY, LIMIT) and `join` (pushed-down
//!   conditions, join order, access path and predicates per step); [`setop`]
//!   for UNION / INTERSECT / EXCEPT;
//! - [`access`]: access paths (point reads, ranges, index choice);
//! - [`dml`] (re-exported here): INSERT / UPDATE / DELETE plans and the
//!   planning context;
//! - [`explain`]: what EXPLAIN prints of a plan (the entry point and its
//!   forms), with `explain_names` (how expressions and blocks print, block
//!   ids), `explain_access` (what a table read shows of its access path),
//!   `explain_table` (the traditional table) and `explain_tree`
//!   (`FORMAT=TREE`).
//!
//! A plan is immutable and re-executable with new parameters. SQL's grammar
//! recurses here (a subquery is a query inside an expression inside a
//! query), so `select`, `setop` and `dml` call each other, and `from` and
//! `join` (steps of `select` that use its types) belong to the same circle;
//! that circle stays inside this folder. Imports: the layers below.

pub mod access;
mod clauses;
pub mod dml;
pub mod explain;
mod explain_access;
mod explain_names;
mod explain_table;
mod explain_tree;
mod from;
mod join;
pub mod select;
pub mod setop;

pub use dml::*;
