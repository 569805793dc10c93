//! The server's `read_only` and `super_read_only` (MySQL 8.0 manual, 7.1.8
//! "Server System Variables"): one level, kept in an atomic the engine owns
//! and read with one relaxed load by every statement that writes.
//!
//! ```text
//!   level           @@read_only  @@super_read_only   writes refused (1290) for
//!   Off                  0              0             nobody
//!   ReadOnly             1              0             accounts without SUPER
//!   SuperReadOnly        1              1             every client account
//! ```
//!
//! The two variables move together as in MySQL: SET GLOBAL
//! super_read_only = 1 also sets read_only; read_only = 0 also clears
//! super_read_only; super_read_only = 0 leaves read_only on; read_only = 1
//! under super_read_only changes nothing.
//!
//! What counts as a write, and who is exempt, is the session's rule (see
//! `crate::session`'s `read_only.rs`, which states the contract): changes
//! of data, schema, accounts and stored programs from a client fail with
//! ER_OPTION_PREVENTS_STATEMENT (1290, SQLSTATE HY000); TEMPORARY tables,
//! performance_schema's setup tables, ANALYZE TABLE and the replica's
//! applier are not refused.
//!
//! Not as MySQL: SET GLOBAL read_only = 1 takes no global read lock, so it
//! does not wait for statements running now; a statement that passed its
//! check just before may still commit after it (MySQL waits for those, and
//! refuses a commit of a transaction that wrote before — Canyon refuses
//! that too, at its COMMIT). The level is not persisted: it starts off at
//! each start, as MySQL's without `--read-only`.

use crate::types::value::Value;
use canyon_common::{Error, Result};
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

/// How read-only the server is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Writes allowed (both variables 0).
    Off,
    /// `read_only = 1`: accounts without SUPER cannot write.
    ReadOnly,
    /// `super_read_only = 1` (and so `read_only = 1`): no client can write.
    SuperReadOnly,
}

impl Level {
    fn from_u8(v: u8) -> Level {
        match v {
            0 => Level::Off,
            1 => Level::ReadOnly,
            _ => Level::SuperReadOnly,
        }
    }
}

/// The variables this module answers.
pub const VARS: [&str; 2] = ["read_only", "super_read_only"];

/// Whether `name` is one of [`VARS`].
pub fn is_var(name: &str) -> bool {
    VARS.contains(&name)
}

/// The server's read-only level (one per engine).
#[derive(Debug, Default)]
pub struct ReadOnly(AtomicU8);

impl ReadOnly {
    /// The level now (one relaxed load: a statement racing a SET GLOBAL may
    /// see either value, as it may in MySQL before the global read lock).
    #[inline]
    pub fn level(&self) -> Level {
        Level::from_u8(self.0.load(Relaxed))
    }

    /// Sets the level outright (the server's configuration at startup).
    pub fn set_level(&self, level: Level) {
        self.0.store(level as u8, Relaxed);
    }

    /// The value of one of [`VARS`].
    pub fn var(&self, name: &str) -> Option<Value> {
        let level = self.level();
        Some(match name {
            "read_only" => Value::Int(i64::from(level >= Level::ReadOnly)),
            "super_read_only" => Value::Int(i64::from(level == Level::SuperReadOnly)),
            _ => return None,
        })
    }

    /// The level SET GLOBAL `name` = `value` leads to from `from` (the
    /// coupling in the module doc); 1231 for a value that is no boolean.
    pub fn next(from: Level, name: &str, value: &Value) -> Result<Level> {
        let on = crate::types::value::parse_bool(name, value)?;
        Ok(match (name, on) {
            ("read_only", true) => from.max(Level::ReadOnly),
            ("read_only", false) => Level::Off,
            ("super_read_only", true) => Level::SuperReadOnly,
            ("super_read_only", false) => from.min(Level::ReadOnly),
            _ => return Err(Error::UnknownSystemVariable(name.to_string())),
        })
    }

    /// Stores `level`, returning the one it replaced.
    pub fn swap(&self, level: Level) -> Level {
        Level::from_u8(self.0.swap(level as u8, Relaxed))
    }
}

/// MySQL's ER_OPTION_PREVENTS_STATEMENT for a write refused at `level`
/// (`--super-read-only` whenever super_read_only is on, as MySQL names it
/// to every account then).
pub fn refused(level: Level, mariadb: bool) -> Error {
    let option = if level == Level::SuperReadOnly {
        "--super-read-only"
    } else {
        "--read-only"
    };
    let server = if mariadb { "MariaDB" } else { "MySQL" };
    Error::Sql {
        code: 1290,
        sqlstate: *b"HY000",
        message: format!(
            "The {server} server is running with the {option} option so it cannot execute this statement"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_variables_move_together() {
        let on = Value::Int(1);
        let off = Value::Int(0);
        use Level::{Off, SuperReadOnly};
        let ro = Level::ReadOnly;
        for (from, name, v, to) in [
            (Off, "read_only", &on, ro),
            (Off, "super_read_only", &on, SuperReadOnly),
            (SuperReadOnly, "read_only", &on, SuperReadOnly),
            (SuperReadOnly, "read_only", &off, Off),
            (SuperReadOnly, "super_read_only", &off, ro),
            (ro, "super_read_only", &off, ro),
            (Off, "super_read_only", &off, Off),
        ] {
            assert_eq!(
                ReadOnly::next(from, name, v).expect("boolean"),
                to,
                "{from:?} {name}"
            );
        }
        assert!(ReadOnly::next(Off, "read_only", &Value::str("maybe")).is_err());
        let r = ReadOnly::default();
        assert_eq!(r.swap(SuperReadOnly), Off);
        assert_eq!(r.var("read_only"), Some(Value::Int(1)));
        assert_eq!(r.var("super_read_only"), Some(Value::Int(1)));
    }
}
