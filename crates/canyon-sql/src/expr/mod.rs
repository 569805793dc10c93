//! Layer 4, **expr**: bound expressions and their evaluation.
//!
//! [`tree`] (re-exported here) holds the bound expression tree, the binder
//! that builds it from sqlparser's AST, and evaluation with MySQL's
//! semantics; [`functions`] the builtin functions, apart from the tree.
//!
//! The one circle inside this folder is SQL's own: a function call is an
//! expression whose arguments are expressions (`functions` evaluates its
//! arguments through `tree`, and `tree` dispatches calls to `functions`).
//! Imports: `types`, `catalog`, `parse` (the exceptions still to remove,
//! subqueries planned from inside the binder, are listed in
//! `tests/layers.rs`).

pub mod functions;
pub mod tree;

pub use tree::*;
