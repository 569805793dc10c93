//! Layer 2, **catalog**: the database instance and what it knows about itself.
//!
//! - [`schema`] (re-exported here): databases, tables, indexes and accounts
//!   as immutable snapshots, swapped atomically (its essay says why no
//!   statement takes a dictionary lock);
//! - [`rows`]: a table's stored form, its keys and row bytes;
//! - [`stats`]: planner statistics, held as data in those snapshots (measured
//!   and stored by `analysis`);
//! - [`privileges`] and [`auth`]: privilege bits, grants, password verifiers;
//!   [`accounts`]: CREATE / ALTER / DROP USER, GRANT, REVOKE on the instance;
//! - [`routines`]: stored procedures, functions and triggers (kept as
//!   text; the session parses and runs them);
//! - [`vars`]: system variables, their kinds and defaults;
//! - [`partition`]: partitioned tables' definitions and row placement
//!   (its essay: why partitions are logical, not keyspaces);
//! - [`infoschema`]: the `information_schema` tables, generated from a
//!   snapshot; [`perfschema`]: `performance_schema`'s statement digests
//!   and events, kept per thread;
//! - [`engine`]: the instance itself — storage, the transaction manager, the
//!   published catalog, the process registry ([`procs`]) and status counters
//!   ([`status`]), the statement-memory budget ([`budget`]) — configured by
//!   [`config`];
//! - [`temporary`]: the id range of TEMPORARY tables' rows and the sweep
//!   that removes them after a crash;
//! - [`table_locks`]: LOCK TABLES and FLUSH TABLES WITH READ LOCK, who
//!   blocks whom;
//! - [`user_locks`]: the named locks of GET_LOCK and its family;
//! - [`read_only`]: the server's `read_only` / `super_read_only` level;
//! - [`view`]: views as the catalog stores them (their essay: text kept,
//!   planned at each use, the shared table namespace).
//!
//! Contract: a catalog snapshot is read without a lock and never changes;
//! changing one (DDL, accounts) is the `ddl` layer's work, which publishes a
//! new snapshot through [`engine::Engine`]. Imports: `types` only (the
//! exceptions still to remove are listed in `tests/layers.rs`).
//!
//! One circle inside this folder: a table's snapshot holds its statistics,
//! and `stats` reads the table's definition to compute them (`schema` and
//! `stats`).

pub mod accounts;
mod analysis;
pub mod auth;
pub mod binlog;
pub mod budget;
pub mod config;
pub mod engine;
pub mod infoschema;
pub mod partition;
pub mod perfschema;
pub mod privileges;
pub mod procs;
pub mod querylog;
pub mod read_only;
pub mod replica;
pub mod routines;
pub mod rows;
pub mod schema;
pub mod stats;
pub mod status;
pub mod table_locks;
pub mod temporary;
pub mod user_locks;
pub mod vars;
pub mod view;

pub use schema::*;
