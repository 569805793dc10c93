//! Layer 4, **expr**: bound expressions and their evaluation.
//!
//! [`tree`] (re-exported here) holds the bound expression tree, with the
//! walks over it; [`eval`](mod@eval) (re-exported) evaluation with MySQL's
//! semantics; [`functions`] the builtin functions, apart from the tree: what
//! they share and the dispatch of a call, with their families in
//! [`functions_string`], [`functions_math`], [`functions_datetime`],
//! [`functions_cast`], [`functions_json`] and [`functions_gtid`]; [`rows`] row values and
//! subqueries in comparisons (`(a, b) < (c, d)`, IN, ANY / ALL, EXISTS),
//! with MySQL's NULL rules.
//!
//! The binder that builds the tree from sqlparser's AST is not here: binding
//! is planning (a subquery inside an expression is planned where the binder
//! meets it), so it is the planner's (`crate::plan::bind`, with its
//! collation rules and the forms with their own syntax beside it). What the
//! tree holds of a planned subquery is handed down as an interface,
//! [`SubqueryPlan`], a trait object the planner's select plan implements:
//! the tree asks it only what it needs (the output's kinds and collations,
//! the width of the enclosing frame), evaluation runs the subquery through
//! the [`EvalContext`] it is given ([`SubqueryRunner`] and
//! [`WithSubqueries`], implemented by `exec`), and the layers above get
//! their plan back by a downcast (`crate::plan::select::select_plan`). So
//! this layer never names one above it.
//!
//! The one circle inside this folder is SQL's own: a function call is an
//! expression whose arguments are expressions (`functions` evaluates its
//! arguments through `eval`, and `eval` dispatches calls to `functions`;
//! `tree` asks `functions` the type of a call). It takes in every file here:
//! `functions` hands each call to its family (`functions_string`,
//! `functions_math`, `functions_datetime`, `functions_cast`,
//! `functions_misc`, `functions_gtid`), which read
//! their arguments through it.
//! Imports: `types`, `catalog`, `parse`.

pub mod eval;
pub mod functions;
pub mod functions_cast;
pub mod functions_datetime;
pub mod functions_gtid;
pub mod functions_json;
pub mod functions_math;
pub mod functions_misc;
pub mod functions_string;
pub mod rows;
pub mod tree;

pub use tree::*;

// What `tree` held before evaluation had a file of its own: the paths
// `crate::expr::X` stay as they were.
pub use eval::*;
