//! Layer 4, **expr**: bound expressions and their evaluation.
//!
//! [`tree`] (re-exported here) holds the bound expression tree and the
//! binder's state; [`bind`] (re-exported) the binder's work, turning
//! sqlparser's AST into the tree, with [`collate`] (re-exported) the
//! collation rules it applies to comparisons; [`eval`](mod@eval)
//! (re-exported) evaluation with MySQL's semantics; [`functions`] the
//! builtin functions, apart from the tree: what they share and the dispatch
//! of a call, with their families in [`functions_string`],
//! [`functions_math`], [`functions_datetime`] and [`functions_cast`], and the
//! forms with their own syntax (`d + INTERVAL n DAY`, EXTRACT, ...) bound in
//! [`functions_syntax`].
//!
//! The one circle inside this folder is SQL's own: a function call is an
//! expression whose arguments are expressions (`functions` evaluates its
//! arguments through `eval`, and `eval` dispatches calls to `functions`;
//! `tree` asks `functions` the type of a call). It takes in every file here:
//! `functions` hands each call to its family (`functions_string`,
//! `functions_math`, `functions_datetime`, `functions_cast`), which read
//! their arguments through it; the binder's state in `tree` holds the scopes
//! of `bind` and plans subqueries with the rules of `collate`, both of which
//! work on the tree; and `functions_syntax`, re-exported by `functions`,
//! binds its forms with the binder of `tree`.
//! Imports: `types`, `catalog`, `parse` (the exceptions still to remove,
//! subqueries planned from inside the binder, are listed in
//! `tests/layers.rs`).

pub mod bind;
pub mod collate;
pub mod eval;
pub mod functions;
pub mod functions_cast;
pub mod functions_datetime;
pub mod functions_math;
pub mod functions_string;
pub mod functions_syntax;
pub mod tree;

pub use tree::*;

// What `tree` held before binding, collations and evaluation had files of
// their own: the paths `crate::expr::X` stay as they were.
pub use bind::*;
pub use collate::*;
pub use eval::*;
