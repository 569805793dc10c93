//! Layer 8, **session**: one client's session and the statement dispatcher.
//!
//! [`dispatch`] holds [`Session`]: the current database, variables, the open
//! transaction and prepared statements, and the dispatcher that runs each
//! statement through the layers below (parse, plan, exec, ddl).
//!
//! Contract: every request gets its results or a MySQL error; a panic inside
//! one is a bug answered with 1105 (see `Session::guarded`). This is the top
//! layer: it imports all of them and nothing imports it.

pub(crate) mod dispatch;

pub use dispatch::*;
