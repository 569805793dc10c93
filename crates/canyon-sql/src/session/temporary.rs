//! TEMPORARY tables: tables that belong to one session.
//!
//! # What MySQL 8.0 promises (manual 15.1.20.2 "CREATE TEMPORARY TABLE")
//! - A temporary table is visible only to the session that created it and
//!   is dropped when that session ends, however it ends.
//! - It may have the name of a base table, which it then hides from this
//!   session ("shadows"): every statement naming `db.t` reaches the
//!   temporary table until it is dropped.
//! - CREATE / DROP TEMPORARY TABLE do not commit the open transaction;
//!   writes to the table are transactional (InnoDB temporary tables: a
//!   ROLLBACK undoes them; the table itself stays).
//! - It is not listed by SHOW TABLES nor by information_schema.TABLES
//!   (MySQL 8; MariaDB lists it in information_schema); SHOW CREATE TABLE
//!   says `CREATE TEMPORARY TABLE`.
//! - Creating one needs CREATE TEMPORARY TABLES on the database; once made,
//!   "the server performs no further privilege checks on the table".
//! - DROP TEMPORARY TABLE drops only temporary tables (1051 when there is
//!   none of that name); DROP TABLE drops the temporary table when one has
//!   the name, else the base table.
//! - A READ ONLY transaction may still change temporary tables (15.3.1);
//!   the shadowed base table's triggers do not fire for the temporary one.
//!
//! # How Canyon keeps them
//! The definition lives only here, in the session's [`TempTables`]; the
//! rows live in the shared storage like any table's, through the session's
//! ordinary transactions, under ids of a range no catalog table uses
//! (`crate::catalog::temporary`):
//!
//! ```text
//!   published catalog (ArcSwap, shared)      this session's TempTables
//!   ┌──────────────────────────────┐         ┌───────────────────────────┐
//!   │ test.t  id 12  (base)        │         │ test.t   id 0x8000_0003   │
//!   │ test.u  id 14                │         │ test.tmp id 0x8000_0005   │
//!   └──────────────┬───────────────┘         └─────────────┬─────────────┘
//!                  └──────────── State::catalog ───────────┘
//!                     overlay: a copy of the snapshot with the temporary
//!                     tables put in (test.t now means id 0x8000_0003),
//!                     cached until either side changes
//! ```
//!
//! Statements plan against [`State::catalog`]: the published snapshot
//! itself while the session has no temporary table (one atomic load, as
//! before), else the overlay. So the planner, the executor, transactions,
//! MVCC, row locks and rollback treat a temporary table as any other table,
//! and nothing else needed teaching. The overlay's version is the
//! snapshot's plus the session's temporary generation shifted past any
//! version a catalog reaches (`GENERATION_SHIFT`), so a prepared statement
//! planned before a CREATE / DROP TEMPORARY TABLE re-plans.
//!
//! Storage instead of an in-memory store: rows then spill to disk like any
//! table's, so a session's temporary tables are bounded by disk, not by the
//! server's memory, and transactions over them need no second code path.
//! The price: their writes go through the WAL like any (MySQL's InnoDB
//! temporary tablespace skips redo).
//!
//! # Invariants
//! 1. No leak across sessions: a temporary table's definition is reachable
//!    only from its session's `TempTables`; its ids are never published in
//!    a catalog snapshot nor written to Meta, and ids are unique in the
//!    process, so no other session can name or read its keys.
//! 2. Cleanup: DROP purges the table's keys at once; when the session ends
//!    (`Drop for Session`, whatever closed it) every table it still holds,
//!    and every id it ever dropped (a transaction may have written to one
//!    after its DROP), is purged once more.
//! 3. Crash: what a crash left under the temporary range is deleted when the
//!    engine opens, before any session (`crate::catalog::temporary`).
//! 4. Memory: a temporary table costs its definition in the session and one
//!    overlay catalog (shared maps, copied on change); rows are on disk.
//!
//! # Not implemented
//! ALTER TABLE, CREATE INDEX / DROP INDEX on a temporary table (1235);
//! FOREIGN KEY constraints on one (1215, as InnoDB); triggers and views
//! over one (they see the base tables); a temporary table in a database
//! dropped after it was made is unreachable until the session ends.

use super::state::*;
use crate::catalog::{Catalog, Table};
use crate::ddl::NewTable;
use canyon_common::{Error, Result};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The overlay's version is `snapshot version + generation << GENERATION_SHIFT`:
/// 2^40 catalog changes are never reached, so overlay versions of different
/// generations never meet a published one.
const GENERATION_SHIFT: u32 = 40;

/// One session's temporary tables, by (database, name).
#[derive(Default)]
pub(super) struct TempTables {
    tables: BTreeMap<(String, String), Arc<Table>>,
    /// Bumped by every change to `tables`; never reset (prepared statements
    /// compare versions that include it).
    generation: u64,
    /// (table id, index ids) of every table this session dropped or
    /// truncated: purged again when it ends (invariant 2).
    dropped: Vec<(u32, Vec<u32>)>,
    /// The overlay catalog and the snapshot version it was built on.
    overlay: parking_lot::Mutex<Option<(u64, Arc<Catalog>)>>,
}

impl TempTables {
    /// The temporary table `db.name`, if this session has one.
    pub(super) fn get(&self, db: &str, name: &str) -> Option<&Arc<Table>> {
        if self.tables.is_empty() {
            return None;
        }
        self.tables.get(&(db.to_string(), name.to_string()))
    }

    /// Whether this session has no temporary table.
    pub(super) fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    fn changed(&mut self) {
        self.generation += 1;
        *self.overlay.get_mut() = None;
    }

    /// `base` with the temporary tables put in, shadowing base tables of
    /// the same names.
    fn overlay_on(&self, base: &Catalog) -> Catalog {
        let mut cat = base.clone();
        for ((db, name), t) in &self.tables {
            if let Some(d) = cat.databases.get_mut(db) {
                Arc::make_mut(d).tables.insert(name.clone(), t.clone());
            }
        }
        cat.version = base.version + (self.generation << GENERATION_SHIFT);
        cat
    }
}

/// The catalog a session's statement sees: the published snapshot, or the
/// overlay with the session's temporary tables.
pub(super) enum Snapshot {
    /// The published snapshot (no temporary tables).
    Shared(arc_swap::Guard<Arc<Catalog>>),
    /// The overlay (see the module essay).
    Private(Arc<Catalog>),
}

impl std::ops::Deref for Snapshot {
    type Target = Arc<Catalog>;
    fn deref(&self) -> &Arc<Catalog> {
        match self {
            Snapshot::Shared(g) => g,
            Snapshot::Private(c) => c,
        }
    }
}

impl State {
    /// The catalog this session's statements plan against: the published
    /// snapshot with the session's temporary tables in it.
    pub(super) fn catalog(&self) -> Snapshot {
        let base = self.engine.catalog();
        if self.temp.is_empty() {
            return Snapshot::Shared(base);
        }
        let mut cached = self.temp.overlay.lock();
        if let Some((v, c)) = &*cached {
            if *v == base.version {
                return Snapshot::Private(c.clone());
            }
        }
        let c = Arc::new(self.temp.overlay_on(&base));
        *cached = Some((base.version, c.clone()));
        Snapshot::Private(c)
    }
}

impl Session {
    /// Makes the temporary table `db.name` from `new`. Returns false when
    /// one existed and IF NOT EXISTS was given (the caller notes 1050).
    /// Commits nothing.
    pub(super) fn create_temporary(
        &mut self,
        cat: &Catalog,
        db: &str,
        name: &str,
        mut new: NewTable,
        if_not_exists: bool,
    ) -> Result<bool> {
        crate::catalog::engine::validate_name(name)?;
        if !cat.databases.contains_key(db) {
            return Err(Error::UnknownDatabase(db.to_string()));
        }
        if self.state.temp.get(db, name).is_some() {
            return if if_not_exists {
                Ok(false)
            } else {
                Err(Error::TableExists(name.to_string()))
            };
        }
        if !new.foreign_keys.is_empty() {
            // What InnoDB answers for a FOREIGN KEY on a temporary table.
            return Err(Error::Sql {
                code: 1215,
                sqlstate: *b"HY000",
                message: "Cannot add foreign key constraint".into(),
            });
        }
        if new.partitioning.is_some() {
            return Err(Error::Sql {
                code: 1562,
                sqlstate: *b"HY000",
                message: "Cannot create temporary table with partitions".into(),
            });
        }
        let ids = &self.state.engine.temp_ids;
        let id = ids.take()?;
        let index_ids = (0..new.indexes.len())
            .map(|_| ids.take())
            .collect::<Result<Vec<_>>>()?;
        let start = new.auto_increment_start.take();
        let def = crate::ddl::finish(new, db, name, id, &index_ids);
        let table = Table::new(def);
        if let Some(s) = start {
            table
                .auto_increment
                .store(s.saturating_sub(1), Ordering::Relaxed);
        }
        self.state
            .temp
            .tables
            .insert((db.to_string(), name.to_string()), Arc::new(table));
        self.state.temp.changed();
        Ok(true)
    }

    /// Drops the temporary table `db.name`; false when there is none.
    /// Commits nothing.
    pub(super) fn drop_temporary(&mut self, db: &str, name: &str) -> Result<bool> {
        let Some(t) = self
            .state
            .temp
            .tables
            .remove(&(db.to_string(), name.to_string()))
        else {
            return Ok(false);
        };
        self.state.temp.changed();
        self.purge_temporary(&t)?;
        Ok(true)
    }

    /// TRUNCATE of a temporary table: new ids, the old keys purged (the
    /// AUTO_INCREMENT counter starts again, as in MySQL).
    pub(super) fn truncate_temporary(&mut self, db: &str, name: &str) -> Result<bool> {
        let key = (db.to_string(), name.to_string());
        let Some(old) = self.state.temp.tables.get(&key).cloned() else {
            return Ok(false);
        };
        let ids = &self.state.engine.temp_ids;
        let mut def = old.def.clone();
        def.id = ids.take()?;
        for ix in &mut def.indexes {
            ix.id = ids.take()?;
        }
        self.state
            .temp
            .tables
            .insert(key, Arc::new(Table::new(def)));
        self.state.temp.changed();
        self.purge_temporary(&old)?;
        Ok(true)
    }

    /// RENAME TABLE / ALTER TABLE ... RENAME of a temporary table (MySQL
    /// allows both); false when `db.name` is no temporary table.
    pub(super) fn rename_temporary(
        &mut self,
        db: &str,
        name: &str,
        to_db: &str,
        to: &str,
    ) -> Result<bool> {
        let key = (db.to_string(), name.to_string());
        if !self.state.temp.tables.contains_key(&key) {
            return Ok(false);
        }
        crate::catalog::engine::validate_name(to)?;
        let to_key = (to_db.to_string(), to.to_string());
        if self.state.temp.tables.contains_key(&to_key) {
            return Err(Error::TableExists(to.to_string()));
        }
        if !self.state.engine.catalog().databases.contains_key(to_db) {
            return Err(Error::UnknownDatabase(to_db.to_string()));
        }
        let old = self
            .state
            .temp
            .tables
            .remove(&key)
            .expect("present: checked above");
        let mut def = old.def.clone();
        def.db = to_db.to_string();
        def.name = to.to_string();
        let auto = Arc::new(std::sync::atomic::AtomicU64::new(
            old.auto_increment.load(Ordering::Relaxed),
        ));
        let row_id = Arc::new(std::sync::atomic::AtomicU64::new(
            old.row_id.load(Ordering::Relaxed),
        ));
        self.state
            .temp
            .tables
            .insert(to_key, Arc::new(Table::with_counters(def, auto, row_id)));
        self.state.temp.changed();
        Ok(true)
    }

    /// ALTER TABLE on a temporary table: RENAME (with or without other
    /// words) works; any other change is refused with 1235 (see "Not
    /// implemented"). Commits first, as MySQL does for ALTER.
    pub(super) fn alter_temporary(
        &mut self,
        at: &sqlparser::ast::AlterTable,
        db: &str,
        name: &str,
    ) -> Result<crate::types::result::QueryResult> {
        let t = self
            .state
            .temp
            .get(db, name)
            .cloned()
            .ok_or_else(|| Error::UnknownTable {
                db: db.to_string(),
                table: name.to_string(),
            })?;
        let ops =
            crate::ddl::alter_ops(at, t.def.default_collation, &t.def.columns, false, &|n| {
                self.split_name(n)
            })?;
        let mut target = None;
        for op in ops {
            match op {
                crate::ddl::alter::AlterOp::RenameTo { db, name } => target = Some((db, name)),
                _ => {
                    return Err(Error::Unsupported(
                        "ALTER TABLE on a TEMPORARY table other than RENAME".into(),
                    ))
                }
            }
        }
        self.commit()?;
        if let Some((to_db, to)) = target {
            self.rename_temporary(db, name, &to_db, &to)?;
        }
        Ok(ok(0))
    }

    /// Purges a temporary table's keys and remembers its ids for the final
    /// purge (invariant 2).
    fn purge_temporary(&mut self, t: &Table) -> Result<()> {
        let indexes: Vec<u32> = t.def.indexes.iter().map(|i| i.id).collect();
        self.state.temp.dropped.push((t.def.id, indexes));
        self.state.engine.purge(&t.def)
    }

    /// Drops every temporary table of the session and purges every id it
    /// dropped before (the session ends; its transaction is rolled back).
    pub(super) fn drop_all_temporary(&mut self) {
        let tables = std::mem::take(&mut self.state.temp.tables);
        let dropped = std::mem::take(&mut self.state.temp.dropped);
        let txn = &self.state.engine.txn;
        let all = tables
            .values()
            .map(|t| (t.def.id, t.def.indexes.iter().map(|i| i.id).collect()))
            .chain(dropped);
        for (id, indexes) in all {
            let indexes: Vec<u32> = indexes;
            if let Err(e) = txn.purge_table(id, &indexes) {
                // The startup sweep removes what is left (invariant 3).
                tracing::warn!(table = id, error = %e, "temporary table not purged");
            }
        }
    }
}
