//! Layer 6, **exec**: running plans inside one transaction.
//!
//! [`select`] runs SELECT plans (the single-table OLTP path and the general
//! path of joins and subqueries), with `window` (the window step: window
//! functions over the rows after grouping) and `analyze` (what it measures
//! for EXPLAIN ANALYZE); [`dml`] (re-exported here) what the writes
//! share, with `read` (consistent and locking reads), `insert` and `update`
//! (UPDATE, DELETE) beside it, and `multi_dml` (their multi-table forms);
//! [`foreign`] what FOREIGN KEY constraints check and cascade on each
//! written row; [`partition`] what a partitioned table asks of each written
//! row and of its stored rows.
//!
//! Contract: a plan and a transaction in, rows or a MySQL error out; the
//! catalog is read, never changed. Imports: the layers below.
//!
//! One circle inside this folder: a write checks and cascades foreign keys,
//! whose cascades are writes again, and a subquery inside a write is run as
//! a SELECT (`dml`, `foreign`, `insert`, `read`, `select` and `update`);
//! `multi_dml` (multi-table UPDATE / DELETE) runs its join through `dml`
//! and writes its rows with `update`'s, which hands it such plans.

mod analyze;
pub mod dml;
pub mod foreign;
mod fulltext;
mod insert;
pub mod journal;
pub mod load;
mod multi_dml;
pub mod partition;
mod read;
pub mod select;
mod update;
mod window;

pub use dml::*;
pub(crate) use insert::*;
pub use insert::{insert_rows, run_insert, InsertStats, RowSource};
pub(crate) use read::*;
pub use read::{for_each_locked_row, for_each_row, for_each_row_checked};
pub(crate) use update::*;
pub use update::{run_delete, run_update};
// A table's stored form moved to the catalog; these paths stay for callers.
pub use crate::catalog::rows::{
    decode_table_row, decode_table_row_columns, encode_table_row, hidden_key, index_key,
    index_keys, primary_key,
};
