//! Layer 3, **parse**: from a statement's text to sqlparser's AST.
//!
//! [`limits`] is the gate every text passes first (its shape, the memory its
//! parse may take, then its depth once parsed: the module essay gives the
//! six rules); [`parser`] (re-exported here) expands MySQL's executable
//! comments, runs sqlparser's MySQL dialect and parses the few account
//! statements sqlparser does not; [`partition`] parses the partition
//! clauses of CREATE / ALTER TABLE that sqlparser refuses; [`view`] parses
//! the view statements (CREATE / ALTER / DROP VIEW, WITH CHECK OPTION) as
//! MySQL writes them; [`psm`] parses stored programs (CREATE PROCEDURE /
//! FUNCTION / TRIGGER, CALL, and the bodies' compound statements), handing
//! plain statements and expressions to sqlparser; [`psm_detect`] tells which
//! texts are such statements; [`create_select`] finds the IGNORE / REPLACE
//! of CREATE TABLE ... SELECT that sqlparser refuses; [`into`] cuts the INTO
//! clause out of SELECT ... INTO; [`set_statement`] cuts MariaDB's
//! `SET STATEMENT ... FOR` in two; [`spellings`] rewrites
//! the MySQL spellings sqlparser does not read into ones it does.
//!
//! [`alter_database`] parses ALTER DATABASE / SCHEMA; [`hints`] reads the
//! optimizer hints SET_VAR and MAX_EXECUTION_TIME; [`lock_tables`] LOCK
//! TABLES with qualified names; [`user_vars`] joins `@` and a quoted name
//! into one user variable token; [`escapes`] reads string literals' backslash
//! escapes as MySQL does where sqlparser differs; [`xa`] the XA statements.
//!
//! Four circles inside this folder: `parser` hands view statements to `view`,
//! which parses their SELECT with `parser`'s dialect (`parser` and `view`);
//! `parser` falls back to `spellings`, which scans with `parser`'s `Lexer`
//! (`parser` and `spellings`); so does `alter_database`, which `parser` calls
//! (`parser` and `alter_database`); and `lock_tables`, which `parser` calls,
//! parses with `parser`'s dialect (`parser` and `lock_tables`).
//!
//! Contract: text in, statements or a MySQL error out; nothing here resolves
//! a name. Imports: `types`, `catalog` (privilege names of GRANT / REVOKE).

pub mod alter_database;
pub mod backup_stmt;
pub mod binlog_stmts;
pub mod create_select;
pub mod dml_modifiers;
pub mod escapes;
pub mod hints;
pub mod into;
pub mod limits;
pub mod load;
pub mod lock_tables;
pub mod names;
pub mod parser;
pub mod partition;
mod pieces;
pub mod psm;
pub mod psm_detect;
pub mod replica_stmts;
pub mod set_statement;
pub mod spellings;
pub mod user_vars;
pub mod view;
pub mod xa;

pub use parser::*;
