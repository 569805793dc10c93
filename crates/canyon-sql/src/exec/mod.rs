//! Layer 6, **exec**: running plans inside one transaction.
//!
//! [`select`] runs SELECT plans (the single-table OLTP path and the general
//! path of joins and subqueries); [`dml`] (re-exported here) the reads and
//! writes of INSERT / UPDATE / DELETE, locking reads and row decoding;
//! [`foreign`] what FOREIGN KEY constraints check and cascade on each
//! written row.
//!
//! Contract: a plan and a transaction in, rows or a MySQL error out; the
//! catalog is read, never changed. Imports: the layers below.
//!
//! One circle inside this folder: a write checks and cascades foreign keys,
//! whose cascades are writes again, and a subquery inside a write is run as
//! a SELECT (`dml`, `foreign` and `select`).

pub mod dml;
pub mod foreign;
pub mod select;

pub use dml::*;
