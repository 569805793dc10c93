//! Stored programs in the catalog: stored procedures, stored functions and
//! triggers, as the snapshot holds them and the Meta keyspace persists them.
//!
//! A stored program is kept as text: its parameter list, RETURNS type and
//! body exactly as CREATE wrote them, with its characteristics beside. The
//! session parses the body when it runs (`crate::parse::psm`), so a body
//! that names a table created later is fine, as in MySQL.
//!
//! Records (Meta keyspace, JSON values):
//!
//! | key | value |
//! |---|---|
//! | `c/p/` db `0x00` kind-byte lower(name) | [`RoutineDef`] (kind byte `P` or `F`) |
//! | `c/g/` db `0x00` name | [`TriggerDef`] |
//!
//! Routine names are case-insensitive (MySQL manual 11.2.3); trigger names
//! compare as written. A trigger belongs to its database's namespace, and
//! dropping its table or database drops it (`drop_table_triggers`).
//!
//! Changes go through `Engine::change` like every
//! other catalog change: the copy is edited, the records written synced,
//! then the copy published.

use crate::catalog::engine::{json, meta_key, Engine};
use crate::catalog::Catalog;
use canyon_common::{Error, Result};
use canyon_storage::{Keyspace, WriteBatch};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Key prefix of routine records.
pub(crate) const META_ROUTINE: &[u8] = b"c/p/";
/// Key prefix of trigger records.
pub(crate) const META_TRIGGER: &[u8] = b"c/g/";

/// PROCEDURE or FUNCTION.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum RoutineKind {
    /// A stored procedure (CALL).
    Procedure,
    /// A stored function (called in expressions).
    Function,
}

impl RoutineKind {
    /// "PROCEDURE" or "FUNCTION".
    pub fn sql(self) -> &'static str {
        match self {
            RoutineKind::Procedure => "PROCEDURE",
            RoutineKind::Function => "FUNCTION",
        }
    }
}

/// The SQL data access characteristic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum DataAccess {
    /// CONTAINS SQL (the default).
    #[default]
    ContainsSql,
    /// NO SQL.
    NoSql,
    /// READS SQL DATA.
    ReadsSqlData,
    /// MODIFIES SQL DATA.
    ModifiesSqlData,
}

impl DataAccess {
    /// The characteristic as SQL writes it.
    pub fn sql(self) -> &'static str {
        match self {
            DataAccess::ContainsSql => "CONTAINS SQL",
            DataAccess::NoSql => "NO SQL",
            DataAccess::ReadsSqlData => "READS SQL DATA",
            DataAccess::ModifiesSqlData => "MODIFIES SQL DATA",
        }
    }
}

/// A stored procedure or function.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoutineDef {
    /// Its database.
    pub db: String,
    /// Its name as created.
    pub name: String,
    /// PROCEDURE or FUNCTION.
    pub kind: RoutineKind,
    /// `user@host` of the definer.
    pub definer: String,
    /// The parameter list as written, without the parentheses.
    pub params: String,
    /// The RETURNS type as written (functions; empty for procedures).
    pub returns: String,
    /// The RETURNS type, resolved at CREATE (functions).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::types::sqltype::deserialize_compat_opt"
    )]
    pub returns_type: Option<crate::types::SqlType>,
    /// The body as written.
    pub body: String,
    /// DETERMINISTIC.
    pub deterministic: bool,
    /// The SQL data access characteristic.
    pub data_access: DataAccess,
    /// SQL SECURITY INVOKER (DEFINER when false).
    pub security_invoker: bool,
    /// COMMENT.
    pub comment: String,
    /// The sql_mode at creation.
    pub sql_mode: String,
    /// When created (`YYYY-MM-DD hh:mm:ss`).
    pub created: String,
    /// When last altered.
    pub modified: String,
}

impl RoutineDef {
    /// The characteristics as SHOW CREATE lists them (one per line, each
    /// indented by four spaces; only those that differ from the defaults).
    pub fn characteristics_text(&self) -> String {
        let mut out = String::new();
        if self.deterministic {
            out.push_str("    DETERMINISTIC\n");
        }
        if self.data_access != DataAccess::ContainsSql {
            out.push_str(&format!("    {}\n", self.data_access.sql()));
        }
        if self.security_invoker {
            out.push_str("    SQL SECURITY INVOKER\n");
        }
        if !self.comment.is_empty() {
            out.push_str(&format!(
                "    COMMENT '{}'\n",
                self.comment.replace('\'', "''")
            ));
        }
        out
    }

    /// The definer quoted as SHOW CREATE writes it: `` `user`@`host` ``.
    pub fn definer_sql(&self) -> String {
        definer_sql(&self.definer)
    }
}

/// `user@host` as `` `user`@`host` ``.
pub fn definer_sql(definer: &str) -> String {
    let (u, h) = definer.rsplit_once('@').unwrap_or((definer, "%"));
    format!("`{u}`@`{h}`")
}

/// BEFORE or AFTER.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TriggerTiming {
    /// BEFORE: may change NEW.
    Before,
    /// AFTER.
    After,
}

impl TriggerTiming {
    /// "BEFORE" or "AFTER".
    pub fn sql(self) -> &'static str {
        match self {
            TriggerTiming::Before => "BEFORE",
            TriggerTiming::After => "AFTER",
        }
    }
}

/// The event a trigger fires on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TriggerEvent {
    /// INSERT (also REPLACE and LOAD DATA's inserts).
    Insert,
    /// UPDATE (also INSERT ... ON DUPLICATE KEY UPDATE's updates).
    Update,
    /// DELETE (also REPLACE's deletes).
    Delete,
}

impl TriggerEvent {
    /// "INSERT", "UPDATE" or "DELETE".
    pub fn sql(self) -> &'static str {
        match self {
            TriggerEvent::Insert => "INSERT",
            TriggerEvent::Update => "UPDATE",
            TriggerEvent::Delete => "DELETE",
        }
    }
}

/// A trigger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriggerDef {
    /// Its database (the table's).
    pub db: String,
    /// Its name.
    pub name: String,
    /// The table it is on.
    pub table: String,
    /// BEFORE or AFTER.
    pub timing: TriggerTiming,
    /// INSERT, UPDATE or DELETE.
    pub event: TriggerEvent,
    /// Firing order among the table's triggers of the same timing and event,
    /// from 1 (ACTION_ORDER).
    pub order: u32,
    /// The body as written.
    pub body: String,
    /// `user@host` of the definer.
    pub definer: String,
    /// The sql_mode at creation.
    pub sql_mode: String,
    /// When created (`YYYY-MM-DD hh:mm:ss.ff`).
    pub created: String,
}

impl Catalog {
    /// A routine by database, kind and (case-insensitive) name.
    pub fn routine(&self, db: &str, kind: RoutineKind, name: &str) -> Option<&Arc<RoutineDef>> {
        self.routines
            .get(&(db.to_string(), kind, name.to_ascii_lowercase()))
    }

    /// Whether any stored function exists (statements look for calls only then).
    pub fn has_functions(&self) -> bool {
        self.routines
            .keys()
            .any(|(_, k, _)| *k == RoutineKind::Function)
    }

    /// The triggers of `db.table` for one timing and event, in firing order.
    pub fn table_triggers(
        &self,
        db: &str,
        table: &str,
        timing: TriggerTiming,
        event: TriggerEvent,
    ) -> Vec<Arc<TriggerDef>> {
        if self.triggers.is_empty() {
            return Vec::new();
        }
        let mut v: Vec<Arc<TriggerDef>> = self
            .triggers
            .values()
            .filter(|t| t.db == db && t.table == table && t.timing == timing && t.event == event)
            .cloned()
            .collect();
        v.sort_by_key(|t| t.order);
        v
    }

    /// Whether `db.table` has any trigger.
    pub fn table_has_triggers(&self, db: &str, table: &str) -> bool {
        !self.triggers.is_empty()
            && self
                .triggers
                .values()
                .any(|t| t.db == db && t.table == table)
    }
}

fn routine_key(db: &str, kind: RoutineKind, name: &str) -> Vec<u8> {
    let mut rest = db.as_bytes().to_vec();
    rest.push(0);
    rest.push(match kind {
        RoutineKind::Procedure => b'P',
        RoutineKind::Function => b'F',
    });
    rest.extend_from_slice(name.to_ascii_lowercase().as_bytes());
    meta_key(META_ROUTINE, &rest)
}

fn trigger_key(db: &str, name: &str) -> Vec<u8> {
    let mut rest = db.as_bytes().to_vec();
    rest.push(0);
    rest.extend_from_slice(name.as_bytes());
    meta_key(META_TRIGGER, &rest)
}

/// Loads one Meta record if it is a routine's or a trigger's; `false` for
/// other records (the engine's recovery scan calls it for each).
pub(crate) fn load_record(k: &[u8], v: &[u8], cat: &mut Catalog) -> Result<bool> {
    if k.starts_with(META_ROUTINE) {
        let r: RoutineDef = serde_json::from_slice(v).map_err(|e| Error::Corrupt(e.to_string()))?;
        cat.routines.insert(
            (r.db.clone(), r.kind, r.name.to_ascii_lowercase()),
            Arc::new(r),
        );
        Ok(true)
    } else if k.starts_with(META_TRIGGER) {
        let t: TriggerDef = serde_json::from_slice(v).map_err(|e| Error::Corrupt(e.to_string()))?;
        cat.triggers
            .insert((t.db.clone(), t.name.clone()), Arc::new(t));
        Ok(true)
    } else {
        Ok(false)
    }
}

/// Drops the triggers of `db.table` from a catalog copy (DROP TABLE), and,
/// with `table` `None`, every routine and trigger of `db` (DROP DATABASE).
pub(crate) fn drop_table_triggers(
    cat: &mut Catalog,
    batch: &mut WriteBatch,
    db: &str,
    table: Option<&str>,
) {
    if cat.triggers.is_empty() && (table.is_some() || cat.routines.is_empty()) {
        return;
    }
    let gone: Vec<(String, String)> = cat
        .triggers
        .values()
        .filter(|t| t.db == db && table.is_none_or(|n| t.table == n))
        .map(|t| (t.db.clone(), t.name.clone()))
        .collect();
    for key in gone {
        batch.delete(Keyspace::Meta, trigger_key(&key.0, &key.1));
        cat.triggers.remove(&key);
    }
    if table.is_none() {
        let gone: Vec<_> = cat
            .routines
            .keys()
            .filter(|(d, _, _)| d == db)
            .cloned()
            .collect();
        for key in gone {
            batch.delete(Keyspace::Meta, routine_key(&key.0, key.1, &key.2));
            cat.routines.remove(&key);
        }
    }
}

/// Moves the triggers of `db.table` to its new name (RENAME TABLE, ALTER
/// TABLE ... RENAME) in a catalog copy. A table with triggers cannot move to
/// another database: 1435 ER_TRG_IN_WRONG_SCHEMA, as in MySQL.
pub(crate) fn rename_table_triggers(
    cat: &mut Catalog,
    batch: &mut WriteBatch,
    db: &str,
    table: &str,
    new_db: &str,
    new_table: &str,
) -> Result<()> {
    if cat.triggers.is_empty() {
        return Ok(());
    }
    let moved: Vec<Arc<TriggerDef>> = cat
        .triggers
        .values()
        .filter(|t| t.db == db && t.table == table)
        .cloned()
        .collect();
    if moved.is_empty() {
        return Ok(());
    }
    if new_db != db {
        return Err(sp_error(1435, b"HY000", "Trigger in wrong schema".into()));
    }
    for t in moved {
        let mut t = TriggerDef::clone(&t);
        t.table = new_table.to_string();
        batch.put(Keyspace::Meta, trigger_key(&t.db, &t.name), json(&t)?);
        cat.triggers
            .insert((t.db.clone(), t.name.clone()), Arc::new(t));
    }
    Ok(())
}

/// Where a new trigger goes among its table's triggers of the same timing
/// and event: FOLLOWS or PRECEDES another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TriggerPlace {
    /// After every existing one.
    Last,
    /// FOLLOWS the named trigger.
    Follows(String),
    /// PRECEDES the named trigger.
    Precedes(String),
}

impl Engine {
    /// CREATE PROCEDURE / FUNCTION. Returns false when it existed and IF NOT
    /// EXISTS was given; else an existing one is error 1304.
    pub fn create_routine(&self, def: RoutineDef, if_not_exists: bool) -> Result<bool> {
        self.change(|cat, _, batch| {
            if !cat.databases.contains_key(&def.db) {
                return Err(Error::UnknownDatabase(def.db.clone()));
            }
            let key = (def.db.clone(), def.kind, def.name.to_ascii_lowercase());
            if cat.routines.contains_key(&key) {
                return if if_not_exists {
                    Ok(false)
                } else {
                    Err(sp_error(
                        1304,
                        b"42000",
                        format!("{} {} already exists", def.kind.sql(), def.name),
                    ))
                };
            }
            batch.put(
                Keyspace::Meta,
                routine_key(&def.db, def.kind, &def.name),
                json(&def)?,
            );
            cat.routines.insert(key, Arc::new(def));
            Ok(true)
        })
    }

    /// ALTER PROCEDURE / FUNCTION: `f` edits the definition (its
    /// characteristics). A missing routine is error 1305.
    pub fn alter_routine(
        &self,
        db: &str,
        kind: RoutineKind,
        name: &str,
        f: impl FnOnce(&mut RoutineDef),
    ) -> Result<()> {
        self.change(|cat, _, batch| {
            let key = (db.to_string(), kind, name.to_ascii_lowercase());
            let Some(cur) = cat.routines.get(&key) else {
                return Err(missing_routine(kind, db, name));
            };
            let mut def = RoutineDef::clone(cur);
            f(&mut def);
            batch.put(Keyspace::Meta, routine_key(db, kind, name), json(&def)?);
            cat.routines.insert(key, Arc::new(def));
            Ok(())
        })
    }

    /// DROP PROCEDURE / FUNCTION. Returns false when it did not exist (the
    /// caller decides between IF EXISTS's note and error 1305).
    pub fn drop_routine(&self, db: &str, kind: RoutineKind, name: &str) -> Result<bool> {
        self.change(|cat, _, batch| {
            let key = (db.to_string(), kind, name.to_ascii_lowercase());
            if cat.routines.remove(&key).is_none() {
                return Ok(false);
            }
            batch.delete(Keyspace::Meta, routine_key(db, kind, name));
            Ok(true)
        })
    }

    /// CREATE TRIGGER. Returns false when it existed and IF NOT EXISTS was
    /// given; else an existing one is error 1359. The table must exist
    /// (1146) and the trigger named by FOLLOWS / PRECEDES too (3011).
    pub fn create_trigger(
        &self,
        mut def: TriggerDef,
        place: TriggerPlace,
        if_not_exists: bool,
    ) -> Result<bool> {
        self.change(|cat, _, batch| {
            if cat.table(&def.db, &def.table).is_none() {
                return Err(Error::UnknownTable {
                    db: def.db.clone(),
                    table: def.table.clone(),
                });
            }
            let key = (def.db.clone(), def.name.clone());
            if cat.triggers.contains_key(&key) {
                return if if_not_exists {
                    Ok(false)
                } else {
                    Err(sp_error(1359, b"HY000", "Trigger already exists".into()))
                };
            }
            let mut same =
                cat.table_triggers(&def.db, &def.table, def.timing, def.event);
            let at = match &place {
                TriggerPlace::Last => same.len(),
                TriggerPlace::Follows(other) | TriggerPlace::Precedes(other) => {
                    let i = same.iter().position(|t| &t.name == other).ok_or_else(|| {
                        sp_error(
                            3011,
                            b"HY000",
                            format!("Referenced trigger '{other}' for the given action time and event type does not exist."),
                        )
                    })?;
                    if matches!(place, TriggerPlace::Follows(_)) {
                        i + 1
                    } else {
                        i
                    }
                }
            };
            def.order = 0;
            same.insert(at, Arc::new(def));
            for (i, t) in same.iter().enumerate() {
                let order = i as u32 + 1;
                if t.order == order {
                    continue;
                }
                let mut t = TriggerDef::clone(t);
                t.order = order;
                batch.put(Keyspace::Meta, trigger_key(&t.db, &t.name), json(&t)?);
                cat.triggers
                    .insert((t.db.clone(), t.name.clone()), Arc::new(t));
            }
            Ok(true)
        })
    }

    /// DROP TRIGGER. Returns false when it did not exist (the caller decides
    /// between IF EXISTS's note and error 1360). The triggers after it move
    /// up in the firing order.
    pub fn drop_trigger(&self, db: &str, name: &str) -> Result<bool> {
        self.change(|cat, _, batch| {
            let Some(gone) = cat.triggers.remove(&(db.to_string(), name.to_string())) else {
                return Ok(false);
            };
            batch.delete(Keyspace::Meta, trigger_key(db, name));
            let rest = cat.table_triggers(&gone.db, &gone.table, gone.timing, gone.event);
            for (i, t) in rest.iter().enumerate() {
                let order = i as u32 + 1;
                if t.order != order {
                    let mut t = TriggerDef::clone(t);
                    t.order = order;
                    batch.put(Keyspace::Meta, trigger_key(&t.db, &t.name), json(&t)?);
                    cat.triggers
                        .insert((t.db.clone(), t.name.clone()), Arc::new(t));
                }
            }
            Ok(true)
        })
    }
}

/// A stored-program error with its MySQL number and SQLSTATE.
pub fn sp_error(code: u16, sqlstate: &[u8; 5], message: String) -> Error {
    Error::Sql {
        code,
        sqlstate: *sqlstate,
        message,
    }
}

/// 1305 ER_SP_DOES_NOT_EXIST.
pub fn missing_routine(kind: RoutineKind, db: &str, name: &str) -> Error {
    sp_error(
        1305,
        b"42000",
        format!("{} {db}.{name} does not exist", kind.sql()),
    )
}

// ---- information_schema ---------------------------------------------------------------

fn text(x: &str) -> crate::types::value::Value {
    crate::types::value::Value::str(x)
}

fn datetime(x: &str) -> crate::types::value::Value {
    crate::types::value::parse_datetime_bytes(x.as_bytes())
        .unwrap_or(crate::types::value::Value::Null)
}

/// The rows of `information_schema.ROUTINES` the account may see.
pub(crate) fn routine_rows(
    g: &crate::catalog::infoschema::GenCtx<'_>,
    out: &mut Vec<Vec<crate::types::value::Value>>,
) {
    use crate::types::value::Value;
    for r in g.catalog.routines.values() {
        if !g.account.is_some_and(|a| a.can_use_db(&r.db)) {
            continue;
        }
        let returns = r.returns.to_ascii_lowercase();
        let data_type = returns
            .split(|c: char| !c.is_ascii_alphanumeric())
            .next()
            .unwrap_or("")
            .to_string();
        out.push(vec![
            text(&r.name),
            text("def"),
            text(&r.db),
            text(&r.name),
            text(r.kind.sql()),
            text(&data_type),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            if returns.is_empty() {
                Value::Null
            } else {
                text(&returns)
            },
            text("SQL"),
            text(&r.body),
            Value::Null,
            text("SQL"),
            text("SQL"),
            text(if r.deterministic { "YES" } else { "NO" }),
            text(r.data_access.sql()),
            Value::Null,
            text(if r.security_invoker {
                "INVOKER"
            } else {
                "DEFINER"
            }),
            datetime(&r.created),
            datetime(&r.modified),
            text(&r.sql_mode),
            text(&r.comment),
            text(&r.definer),
            text("utf8mb4"),
            text("utf8mb4_0900_ai_ci"),
            text("utf8mb4_0900_ai_ci"),
        ]);
    }
}

/// The rows of `information_schema.TRIGGERS` the account may see.
pub(crate) fn trigger_rows(
    g: &crate::catalog::infoschema::GenCtx<'_>,
    out: &mut Vec<Vec<crate::types::value::Value>>,
) {
    use crate::types::value::Value;
    for t in g.catalog.triggers.values() {
        if !g.account.is_some_and(|a| a.can_use_db(&t.db)) {
            continue;
        }
        out.push(vec![
            text("def"),
            text(&t.db),
            text(&t.name),
            text(t.event.sql()),
            text("def"),
            text(&t.db),
            text(&t.table),
            Value::UInt(t.order as u64),
            Value::Null,
            text(&t.body),
            text("ROW"),
            text(t.timing.sql()),
            Value::Null,
            Value::Null,
            text("OLD"),
            text("NEW"),
            datetime(&t.created),
            text(&t.sql_mode),
            text(&t.definer),
            text("utf8mb4"),
            text("utf8mb4_0900_ai_ci"),
            text("utf8mb4_0900_ai_ci"),
        ]);
    }
}
