//! Privileges: what GRANT gives, what REVOKE takes, what SHOW GRANTS prints,
//! and the checks statements make.
//!
//! MySQL's model, restricted to what Canyon has objects for: each account holds
//! grants at three levels — global (`*.*`), database (`db.*`) and table
//! (`db.t`) — each a set of privileges plus the GRANT OPTION. A statement needs
//! its privilege at *some* level that covers its object: SELECT on `shop.items`
//! is allowed by a global SELECT, by SELECT on `shop.*`, or by SELECT on
//! `shop.items`. There are no column privileges, roles or partial revokes
//! (refused with 1235).
//!
//! Grants live in the account's [`UserDef`] in the catalog snapshot, so a check
//! reads an immutable, atomically swapped value: no lock, and a GRANT is seen by
//! every session's next statement (the snapshot's version moves).

use crate::catalog::{Grant, UserDef};
use canyon_common::{Error, Result};

/// A set of privileges, as bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Privs(pub u32);

/// Privilege names in MySQL's canonical order (the order SHOW GRANTS lists
/// them in), with their bit and the levels they may be granted at.
const NAMES: &[(&str, u32, Levels)] = &[
    ("SELECT", 1 << 0, Levels::TABLE),
    ("INSERT", 1 << 1, Levels::TABLE),
    ("UPDATE", 1 << 2, Levels::TABLE),
    ("DELETE", 1 << 3, Levels::TABLE),
    ("CREATE", 1 << 4, Levels::TABLE),
    ("DROP", 1 << 5, Levels::TABLE),
    ("RELOAD", 1 << 6, Levels::GLOBAL),
    ("SHUTDOWN", 1 << 7, Levels::GLOBAL),
    ("PROCESS", 1 << 8, Levels::GLOBAL),
    ("FILE", 1 << 9, Levels::GLOBAL),
    ("REFERENCES", 1 << 10, Levels::TABLE),
    ("INDEX", 1 << 11, Levels::TABLE),
    ("ALTER", 1 << 12, Levels::TABLE),
    ("SHOW DATABASES", 1 << 13, Levels::GLOBAL),
    ("SUPER", 1 << 14, Levels::GLOBAL),
    ("CREATE TEMPORARY TABLES", 1 << 15, Levels::DB),
    ("LOCK TABLES", 1 << 16, Levels::DB),
    ("EXECUTE", 1 << 17, Levels::DB),
    ("REPLICATION SLAVE", 1 << 18, Levels::GLOBAL),
    ("REPLICATION CLIENT", 1 << 19, Levels::GLOBAL),
    ("CREATE VIEW", 1 << 20, Levels::TABLE),
    ("SHOW VIEW", 1 << 21, Levels::TABLE),
    ("CREATE ROUTINE", 1 << 22, Levels::DB),
    ("ALTER ROUTINE", 1 << 23, Levels::DB),
    ("CREATE USER", 1 << 24, Levels::GLOBAL),
    ("EVENT", 1 << 25, Levels::DB),
    ("TRIGGER", 1 << 26, Levels::TABLE),
    ("CREATE TABLESPACE", 1 << 27, Levels::GLOBAL),
    // MySQL 8's dynamic privileges (the ones Canyon checks), after the static
    // ones: SHOW GRANTS prints them on a line of their own.
    ("XA_RECOVER_ADMIN", 1 << 28, Levels::GLOBAL),
];

/// The bits of MySQL 8's dynamic privileges in [`NAMES`].
const DYNAMIC: u32 = 1 << 28;

/// The lowest level a privilege may be granted at (global privileges only at
/// `*.*`; database privileges also at `db.*`; table privileges anywhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Levels(u8);

impl Levels {
    const GLOBAL: Levels = Levels(0);
    const DB: Levels = Levels(1);
    const TABLE: Levels = Levels(2);
}

impl Privs {
    /// No privilege (MySQL's USAGE).
    pub const NONE: Privs = Privs(0);
    /// SELECT.
    pub const SELECT: Privs = Privs(1 << 0);
    /// INSERT.
    pub const INSERT: Privs = Privs(1 << 1);
    /// UPDATE.
    pub const UPDATE: Privs = Privs(1 << 2);
    /// DELETE.
    pub const DELETE: Privs = Privs(1 << 3);
    /// CREATE.
    pub const CREATE: Privs = Privs(1 << 4);
    /// DROP.
    pub const DROP: Privs = Privs(1 << 5);
    /// PROCESS: see every session in PROCESSLIST.
    pub const PROCESS: Privs = Privs(1 << 8);
    /// INDEX.
    pub const INDEX: Privs = Privs(1 << 11);
    /// ALTER.
    pub const ALTER: Privs = Privs(1 << 12);
    /// SUPER: KILL any session, SET GLOBAL.
    pub const SUPER: Privs = Privs(1 << 14);
    /// CREATE USER: CREATE / ALTER / DROP USER.
    pub const CREATE_USER: Privs = Privs(1 << 24);
    /// XA_RECOVER_ADMIN (dynamic): XA RECOVER, which lists every session's
    /// prepared branches.
    pub const XA_RECOVER_ADMIN: Privs = Privs(1 << 28);

    /// Every privilege that may be granted at `level`.
    fn all_at(level: &Level) -> Privs {
        let lowest = match level {
            Level::Global => Levels::GLOBAL,
            Level::Db(_) => Levels::DB,
            Level::Table(..) => Levels::TABLE,
        };
        Privs(
            NAMES
                .iter()
                .filter(|(_, _, l)| *l >= lowest)
                .fold(0, |acc, (_, bit, _)| acc | bit),
        )
    }

    /// Whether every privilege of `other` is in `self`.
    pub fn contains(self, other: Privs) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether there is no privilege.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The privilege named `name` (upper- or lower-case, words separated by
    /// single spaces).
    pub fn from_name(name: &str) -> Option<Privs> {
        NAMES
            .iter()
            .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, bit, _)| Privs(*bit))
    }

    /// The static privileges among these (MySQL 8's SHOW GRANTS prints the
    /// dynamic ones on a line of their own).
    fn static_part(self) -> Privs {
        Privs(self.0 & !DYNAMIC)
    }

    /// The dynamic privileges among these.
    fn dynamic_part(self) -> Privs {
        Privs(self.0 & DYNAMIC)
    }

    /// MySQL's text for these privileges at `level`: `ALL PRIVILEGES` when it
    /// holds every static privilege the level has, `USAGE` when none, else
    /// the names in canonical order.
    pub fn describe(self, level: &Level) -> String {
        if self.is_empty() {
            return "USAGE".into();
        }
        if self.contains(Privs::all_at(level).static_part()) && self.dynamic_part().is_empty() {
            return "ALL PRIVILEGES".into();
        }
        NAMES
            .iter()
            .filter(|(_, bit, _)| self.0 & bit != 0)
            .map(|(n, _, _)| *n)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl std::ops::BitOr for Privs {
    type Output = Privs;
    fn bitor(self, rhs: Privs) -> Privs {
        Privs(self.0 | rhs.0)
    }
}

/// Where a grant applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Level {
    /// `*.*`
    Global,
    /// `db.*`
    Db(String),
    /// `db.table`
    Table(String, String),
}

impl Level {
    /// The `ON` clause as SHOW GRANTS prints it.
    pub fn describe(&self) -> String {
        match self {
            Level::Global => "*.*".into(),
            Level::Db(d) => format!("`{d}`.*"),
            Level::Table(d, t) => format!("`{d}`.`{t}`"),
        }
    }

    /// Checks that `privs` may be granted at this level: a global privilege
    /// at `db.*` is MySQL 1221, a database one at `db.t` is 1144.
    pub fn check_grantable(&self, privs: Privs) -> Result<()> {
        let extra = Privs(privs.0 & !Privs::all_at(self).0);
        if extra.is_empty() {
            return Ok(());
        }
        Err(match self {
            Level::Table(..) => Error::IllegalGrantForTable,
            _ => Error::WrongUsage("DB GRANT and GLOBAL PRIVILEGES".into()),
        })
    }
}

/// What GRANT / REVOKE name as privileges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrivSpec {
    /// ALL \[PRIVILEGES\]: every privilege of the level.
    All,
    /// A list of privileges.
    Some(Privs),
}

impl PrivSpec {
    /// The privileges this names at `level`.
    pub fn at(self, level: &Level) -> Privs {
        match self {
            PrivSpec::All => Privs::all_at(level),
            PrivSpec::Some(p) => p,
        }
    }
}

impl Grant {
    /// The grant's level.
    pub fn level(&self) -> Level {
        match (&self.db, &self.table) {
            (None, _) => Level::Global,
            (Some(d), None) => Level::Db(d.clone()),
            (Some(d), Some(t)) => Level::Table(d.clone(), t.clone()),
        }
    }

    /// The privileges held (grants stored before privilege lists existed
    /// carry `all`).
    pub fn privs(&self) -> Privs {
        if self.all {
            return Privs::all_at(&self.level());
        }
        let held = Privs(self.privs);
        if !self.dynamic && self.db.is_none() && held.contains(Privs::SUPER) {
            return held | Privs::XA_RECOVER_ADMIN;
        }
        held
    }

    /// Whether this grant covers table `table` (or, with `None`, the database
    /// itself) of `db`.
    fn covers(&self, db: &str, table: Option<&str>) -> bool {
        match (&self.db, &self.table) {
            (None, _) => true,
            (Some(d), None) => d == db,
            (Some(d), Some(t)) => d == db && table == Some(t.as_str()),
        }
    }
}

impl UserDef {
    /// Whether the account holds `needed` on `db` (with `table`, on that table):
    /// every needed privilege must come from some grant covering the object.
    pub fn allows(&self, db: &str, table: Option<&str>, needed: Privs) -> bool {
        let held = self
            .grants
            .iter()
            .filter(|g| g.covers(db, table))
            .fold(Privs::NONE, |acc, g| acc | g.privs());
        held.contains(needed)
    }

    /// Whether the account holds `needed` globally.
    pub fn allows_global(&self, needed: Privs) -> bool {
        self.grants
            .iter()
            .filter(|g| g.db.is_none())
            .fold(Privs::NONE, |acc, g| acc | g.privs())
            .contains(needed)
    }

    /// Whether the account holds any privilege on `db` or a table in it (what
    /// USE, SHOW DATABASES and SHOW TABLES ask), as MySQL.
    pub fn can_use_db(&self, db: &str) -> bool {
        self.grants
            .iter()
            .any(|g| !g.privs().is_empty() && g.db.as_deref().is_none_or(|d| d == db))
    }

    /// Whether the account holds SUPER (KILL of other users' sessions, SET
    /// GLOBAL, ...).
    pub fn is_superuser(&self) -> bool {
        self.allows_global(Privs::SUPER)
    }

    /// Whether the account may grant `privs` at `level`: it holds them, and the
    /// GRANT OPTION, at that level or above.
    pub fn may_grant(&self, level: &Level, privs: Privs) -> bool {
        let (db, table) = match level {
            Level::Global => return self.allows_global(privs) && self.grant_option_global(),
            Level::Db(d) => (d.as_str(), None),
            Level::Table(d, t) => (d.as_str(), Some(t.as_str())),
        };
        self.allows(db, table, privs)
            && self
                .grants
                .iter()
                .any(|g| g.grant_option && g.covers(db, table))
    }

    fn grant_option_global(&self) -> bool {
        self.grants.iter().any(|g| g.grant_option && g.db.is_none())
    }

    /// SHOW GRANTS: one line per level, the global one first (USAGE when it
    /// holds nothing), as MySQL 8 prints them.
    pub fn show_grants(&self) -> Vec<String> {
        let who = format!("`{}`@`{}`", self.user, self.host);
        let line = |privs: Privs, level: &Level, grant_option: bool| {
            format!(
                "GRANT {} ON {} TO {who}{}",
                privs.describe(level),
                level.describe(),
                if grant_option {
                    " WITH GRANT OPTION"
                } else {
                    ""
                }
            )
        };
        let global = self.grants.iter().find(|g| g.db.is_none());
        let mut lines = vec![match global {
            Some(g) => line(g.privs().static_part(), &Level::Global, g.grant_option),
            None => line(Privs::NONE, &Level::Global, false),
        }];
        // MySQL 8 lists the dynamic privileges in a second global line.
        if let Some(g) = global.filter(|g| !g.privs().dynamic_part().is_empty()) {
            lines.push(line(
                g.privs().dynamic_part(),
                &Level::Global,
                g.grant_option,
            ));
        }
        let mut others: Vec<&Grant> = self.grants.iter().filter(|g| g.db.is_some()).collect();
        others.sort_by_key(|g| (g.db.clone(), g.table.clone()));
        for g in others {
            if !g.privs().is_empty() || g.grant_option {
                lines.push(line(g.privs(), &g.level(), g.grant_option));
            }
        }
        lines
    }
}

/// Adds `privs` (and the GRANT OPTION when asked) at `level` to `def`'s grants.
pub fn add_grant(def: &mut UserDef, level: &Level, privs: Privs, grant_option: bool) {
    let (db, table) = level_parts(level);
    match def
        .grants
        .iter_mut()
        .find(|g| g.db == db && g.table == table)
    {
        Some(g) => {
            g.privs = (g.privs() | privs).0;
            g.all = false;
            g.dynamic = true;
            g.grant_option |= grant_option;
        }
        None => def.grants.push(Grant {
            db,
            table,
            all: false,
            privs: privs.0,
            grant_option,
            dynamic: true,
        }),
    }
}

/// Removes `privs` (and the GRANT OPTION when asked) at exactly `level`;
/// 1141 when the account holds no grant there, as MySQL.
pub fn remove_grant(
    def: &mut UserDef,
    level: &Level,
    privs: Privs,
    grant_option: bool,
) -> Result<()> {
    let (db, table) = level_parts(level);
    let Some(at) = def
        .grants
        .iter()
        .position(|g| g.db == db && g.table == table)
    else {
        return Err(Error::NonexistingGrant {
            user: def.user.clone(),
            host: def.host.clone(),
        });
    };
    let g = &mut def.grants[at];
    g.privs = g.privs().0 & !privs.0;
    g.all = false;
    g.dynamic = true;
    if grant_option {
        g.grant_option = false;
    }
    if g.privs == 0 && !g.grant_option {
        def.grants.remove(at);
    }
    Ok(())
}

fn level_parts(level: &Level) -> (Option<String>, Option<String>) {
    match level {
        Level::Global => (None, None),
        Level::Db(d) => (Some(d.clone()), None),
        Level::Table(d, t) => (Some(d.clone()), Some(t.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user() -> UserDef {
        UserDef {
            user: "u".into(),
            host: "%".into(),
            native_hash_hex: String::new(),
            plugin: String::new(),
            sha2_verifier: String::new(),
            grants: Vec::new(),
        }
    }

    #[test]
    fn privileges_come_from_any_covering_level() {
        let mut u = user();
        add_grant(&mut u, &Level::Db("shop".into()), Privs::SELECT, false);
        add_grant(
            &mut u,
            &Level::Table("shop".into(), "items".into()),
            Privs::INSERT,
            false,
        );
        assert!(u.allows("shop", Some("items"), Privs::SELECT | Privs::INSERT));
        assert!(u.allows("shop", Some("other"), Privs::SELECT));
        assert!(!u.allows("shop", Some("other"), Privs::INSERT));
        assert!(!u.allows("bank", Some("items"), Privs::SELECT));
        assert!(u.can_use_db("shop") && !u.can_use_db("bank"));
        assert!(!u.is_superuser());
        add_grant(&mut u, &Level::Global, Privs::UPDATE, false);
        assert!(u.allows("bank", Some("x"), Privs::UPDATE));
    }

    #[test]
    fn revoke_removes_exactly_the_named_privileges_at_the_level() {
        let mut u = user();
        let db = Level::Db("shop".into());
        add_grant(&mut u, &db, PrivSpec::All.at(&db), true);
        remove_grant(&mut u, &db, Privs::DELETE, false).expect("revoke");
        assert!(!u.allows("shop", None, Privs::DELETE));
        assert!(u.allows("shop", None, Privs::SELECT | Privs::UPDATE));
        assert!(u.may_grant(&db, Privs::SELECT));
        remove_grant(&mut u, &db, PrivSpec::All.at(&db), true).expect("revoke all");
        assert!(u.grants.is_empty(), "an empty grant is dropped");
        assert!(matches!(
            remove_grant(&mut u, &db, Privs::SELECT, false),
            Err(Error::NonexistingGrant { .. })
        ));
    }

    #[test]
    fn show_grants_prints_mysql_lines() {
        let mut u = user();
        assert_eq!(u.show_grants(), vec!["GRANT USAGE ON *.* TO `u`@`%`"]);
        add_grant(
            &mut u,
            &Level::Table("shop".into(), "items".into()),
            Privs::SELECT | Privs::UPDATE,
            false,
        );
        add_grant(
            &mut u,
            &Level::Db("shop".into()),
            Privs::all_at(&Level::Db("shop".into())),
            true,
        );
        add_grant(&mut u, &Level::Global, Privs::PROCESS, false);
        assert_eq!(
            u.show_grants(),
            vec![
                "GRANT PROCESS ON *.* TO `u`@`%`",
                "GRANT ALL PRIVILEGES ON `shop`.* TO `u`@`%` WITH GRANT OPTION",
                "GRANT SELECT, UPDATE ON `shop`.`items` TO `u`@`%`",
            ]
        );
    }

    #[test]
    fn dynamic_privileges_print_on_a_line_of_their_own() {
        let mut u = user();
        add_grant(&mut u, &Level::Global, Privs::XA_RECOVER_ADMIN, false);
        assert_eq!(
            u.show_grants(),
            vec![
                "GRANT USAGE ON *.* TO `u`@`%`",
                "GRANT XA_RECOVER_ADMIN ON *.* TO `u`@`%`",
            ]
        );
        add_grant(
            &mut u,
            &Level::Global,
            PrivSpec::All.at(&Level::Global),
            true,
        );
        assert_eq!(
            u.show_grants(),
            vec![
                "GRANT ALL PRIVILEGES ON *.* TO `u`@`%` WITH GRANT OPTION",
                "GRANT XA_RECOVER_ADMIN ON *.* TO `u`@`%` WITH GRANT OPTION",
            ]
        );
        assert_eq!(
            Privs::from_name("xa_recover_admin"),
            Some(Privs::XA_RECOVER_ADMIN)
        );
        assert!(matches!(
            Level::Db("d".into()).check_grantable(Privs::XA_RECOVER_ADMIN),
            Err(Error::WrongUsage(_))
        ));
    }

    #[test]
    fn grants_from_before_dynamic_privileges_give_super_accounts_xa_recover_admin() {
        let mut u = user();
        u.grants.push(Grant {
            db: None,
            table: None,
            all: false,
            privs: (Privs::SUPER | Privs::SELECT).0,
            grant_option: false,
            dynamic: false,
        });
        assert!(u.allows_global(Privs::XA_RECOVER_ADMIN));
        remove_grant(&mut u, &Level::Global, Privs::XA_RECOVER_ADMIN, false).expect("revoke");
        assert!(!u.allows_global(Privs::XA_RECOVER_ADMIN), "a revoke sticks");
        assert!(u.is_superuser());
    }

    #[test]
    fn global_privileges_cannot_be_granted_on_a_database_or_table() {
        let db = Level::Db("d".into());
        let t = Level::Table("d".into(), "t".into());
        assert!(Level::Global.check_grantable(Privs::SUPER).is_ok());
        assert!(matches!(
            db.check_grantable(Privs::SUPER),
            Err(Error::WrongUsage(_))
        ));
        assert!(db.check_grantable(Privs::SELECT).is_ok());
        let execute = Privs::from_name("execute").expect("known");
        assert!(matches!(
            t.check_grantable(execute),
            Err(Error::IllegalGrantForTable)
        ));
        assert_eq!(Privs::from_name("show databases"), Some(Privs(1 << 13)));
        assert_eq!(Privs::from_name("fly"), None);
    }

    #[test]
    fn legacy_all_grants_mean_every_privilege_of_their_level() {
        let mut u = user();
        u.grants.push(Grant {
            db: None,
            table: None,
            all: true,
            privs: 0,
            grant_option: true,
            dynamic: false,
        });
        assert!(u.is_superuser());
        assert!(u.allows("any", Some("t"), Privs::DELETE | Privs::ALTER));
        assert!(u.may_grant(&Level::Global, Privs::CREATE_USER));
    }
}
