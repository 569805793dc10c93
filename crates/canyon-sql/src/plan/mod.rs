//! Layer 5, **plan**: from a parsed statement to an executable plan,
//! against one catalog snapshot.
//!
//! - [`select`]: SELECT planning (FROM sources, join order, frames,
//!   subqueries, aggregation), with [`setop`] for UNION / INTERSECT / EXCEPT;
//! - [`access`]: access paths (point reads, ranges, index choice);
//! - [`dml`] (re-exported here): INSERT / UPDATE / DELETE plans and the
//!   planning context;
//! - [`explain`]: what EXPLAIN prints of a plan.
//!
//! A plan is immutable and re-executable with new parameters. SQL's grammar
//! recurses here (a subquery is a query inside an expression inside a
//! query), so `select`, `setop` and `dml` call each other; that circle stays
//! inside this folder. Imports: the layers below.

pub mod access;
pub mod dml;
pub mod explain;
pub mod select;
pub mod setop;

pub use dml::*;
