//! Layer 7, **ddl**: changing the schema.
//!
//! [`define`] (re-exported here) translates CREATE TABLE / CREATE INDEX /
//! ALTER TABLE into catalog definitions; [`derive`](mod@derive) derives them for
//! CREATE TABLE ... LIKE and CREATE TABLE ... SELECT; `objects` creates and drops
//! databases, tables and indexes on the instance; [`comments`] applies
//! MySQL's limits on comments by `sql_mode`; [`foreign_keys`] checks
//! FOREIGN KEY constraints as they are created and what they forbid;
//! [`generated`] translates and checks generated columns (its essay: how
//! they are kept, when their values are computed, MySQL's rules);
//! [`partition`] checks PARTITION BY clauses and computes the partition
//! operations of ALTER TABLE; [`alter`] runs schema changes,
//! online where it can (its essay: instant ADD / DROP COLUMN, index builds
//! while writers run, catalog pins); `rewrite` runs the ones that change
//! how rows are stored by copying the table (its essay: ALGORITHM=COPY,
//! what concurrent sessions see, crash safety); [`view`] creates, replaces and drops
//! views.
//!
//! Contract: a new catalog snapshot is built, persisted and published
//! through [`crate::catalog::engine::Engine`]; readers of the old one are
//! never blocked. Imports: the layers below.
//!
//! One circle inside this folder: ALTER TABLE's definitions are translated by
//! `define`, which builds the `alter` operations they run as (`alter` and
//! `define`).

pub mod alter;
mod alter_def;
pub mod column_type;
pub mod comments;
pub mod define;
pub mod derive;
pub mod foreign_keys;
pub mod generated;
mod objects;
pub mod partition;
mod rewrite;
pub mod view;

pub use define::*;
