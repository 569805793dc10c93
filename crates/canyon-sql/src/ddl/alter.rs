//! Online schema change: ALTER TABLE ADD / DROP COLUMN, ADD / DROP INDEX,
//! RENAME TO; CREATE / DROP INDEX; RENAME TABLE — without blocking reads and
//! writes of the table.
//!
//! # Catalog pins (the "lease" of F1)
//! The catalog is an immutable snapshot (see `crate::catalog`), so a statement
//! that loaded version `v` keeps executing against `v` while a DDL publishes
//! `v + 1`; a transaction's writes are computed per statement (row bytes and
//! index keys) and reach storage only at COMMIT. A schema change therefore has
//! to know when no transaction that ran a statement on an older version can
//! still commit. Each session owns a **pin** (`Engine::register_pin`): the
//! oldest catalog version any statement of its open transaction ran on, or idle.
//!
//! - **P1** A session pins before it loads the catalog for a statement
//!   (`Engine::pin_catalog`: store, then re-check that the published version did
//!   not move — a Dekker handshake with the DDL's "publish, then read the pins"),
//!   and keeps the pin until its transaction ends (autocommit: the statement).
//! - **P2** `Engine::wait_for_pins_below(v)` returns once every pin is idle or
//!   `>= v`: from then on, every running and future statement uses a catalog
//!   `>= v`, and every transaction that used an older one has committed or
//!   rolled back. It gives up after `lock_wait_timeout` (1205), as MySQL's
//!   metadata-lock wait would; an idle open transaction holds DDL back, as an
//!   MDL does.
//!
//! - **P3** The wait is for the altered table only, as MySQL's metadata lock
//!   is: a session counts only while one of its statements runs (the pin's
//!   *busy* flag, set before the statement loads its catalog, cleared when
//!   it ends) or while its open transaction has written the table (the
//!   tables written, stored in the pin before *busy* is cleared). A session
//!   between statements whose transaction only read the table, or used
//!   others, does not hold the DDL back: its next statement loads a catalog
//!   at least as new as the DDL's (the same store-then-load handshake as
//!   P1: *busy* is stored before the published version is read, the DDL
//!   publishes before it reads *busy*), and none of its uncommitted rows
//!   was computed on the old definition. Without P3, an open transaction
//!   on any table held every ALTER up to `lock_wait_timeout`: Vitess'
//!   VReplication keeps a transaction open on `_vt.copy_state` while it
//!   drops the secondary indexes of the table it is about to copy, and
//!   waited for itself. What P3 allows: that session's REPEATABLE READ
//!   snapshot may predate a table rewrite (whose copied rows it cannot see)
//!   or an index's back-fill (whose entries it may miss), so a rewrite marks
//!   the table (`TableDef::stable_since`) and ADD INDEX the index
//!   (`IndexDef::ready_since`), and a statement of an older snapshot that
//!   reads the table, or reads through the index, fails with 1412
//!   ER_TABLE_DEF_CHANGED, as InnoDB's consistent read does. Where MySQL
//!   differs: its metadata lock also waits for transactions that only *read*
//!   the table, so there a reader that used the table before the DDL never
//!   gets 1412; here it can, when it reads through the new index or a
//!   rewritten table afterwards.
//!
//! This is the F1 scheme (Rae et al., "Online, Asynchronous Schema Change in
//! F1", VLDB 2013) with the schema lease replaced by an exact, local count: at
//! most two versions are in use at any moment once a DDL has waited.
//!
//! # Instant ADD / DROP COLUMN (no table rewrite)
//! A stored row is a list of **slots** (see `crate::types::encoding`). `TableDef::slots`
//! maps each column (declaration order) to its slot, `slot_count` is the width of
//! a row written now; both are empty/zero for the identity layout of a table no
//! ALTER reshaped (then encoding and decoding need no map at all).
//!
//! ```text
//!   CREATE TABLE t (a, b, c)           columns a b c     slots (identity)
//!   ALTER TABLE t ADD d FIRST          columns d a b c   slots 3 0 1 2   width 4
//!   ALTER TABLE t DROP b               columns d a c     slots 3 0 2     width 4
//!   rows written before the ADD: [a b c]      -> d reads its added_default
//!   rows written now:            [a NULL c d] -> slot 1 (b) is never read again
//! ```
//!
//! - ADD COLUMN appends a slot (FIRST / AFTER only change the logical order) and
//!   records `added_default`: what rows without the slot read as — the DEFAULT,
//!   CURRENT_TIMESTAMP frozen at ALTER time, or for NOT NULL without DEFAULT the
//!   type's implicit default (0, ''), as MySQL fills existing rows.
//! - DROP COLUMN forgets the column's slot; new rows store NULL there (one byte).
//!   Slots are never reused, so a row written by a statement on the older
//!   definition (its value in the dropped slot, or no value for an added one)
//!   is read correctly by the newer one, and slots beyond a definition's width
//!   are ignored by it (`crate::catalog::rows::decode_table_row`).
//! - Indexes containing a dropped column lose it, as in MySQL 8: an index left
//!   with no columns is dropped; a narrowed one is rebuilt under a new id by the
//!   ADD INDEX protocol below (under its old name).
//! - A statement still running on the older definition that rewrites a row
//!   written on the newer one (UPDATE, ON DUPLICATE KEY UPDATE, REPLACE in
//!   place) carries over the slots it does not know (`Table::superseded`), so
//!   the added column keeps its value. Such a statement sees a column dropped
//!   meanwhile as NULL in rows written after the DROP. The DDL waits (P2)
//!   before returning, so after ALTER returns no statement runs on the older
//!   definition.
//!
//! # Online ADD INDEX (CREATE INDEX, ALTER TABLE ADD INDEX / UNIQUE)
//! States of the index (`crate::catalog::IndexState`) and the moves:
//!
//! | step | catalog | made by |
//! |---|---|---|
//! | 1 | index in `def.indexes` as WriteOnly, version `v1` | `alter_catalog` |
//! | 2 | wait for pins `< v1` | `wait_for_pins_below` |
//! | 3 | back-fill entries of every live row | `backfill`, `TxnManager::backfill_index` |
//! | 4 | version `v2` (no change), wait for pins `< v2` | `finish_alter` |
//! | 5 | UNIQUE: scan the index for a duplicate -> 1062, the index is dropped | `find_duplicate` |
//! | 6 | Public, version `v3` | `set_index_states` |
//!
//! Invariants:
//! - **I1** Every writer maintains every index in `def.indexes`, write-only
//!   included (`crate::catalog::rows::index_keys`); the planner, EXPLAIN and SHOW read
//!   only public ones (`TableDef::public_indexes`).
//! - **I2** After step 2 every commit maintains the index; the back-fill writes
//!   the entry of the newest version of each row under the commit mutex, so
//!   after step 3 every live row has its live entry (the argument is in
//!   canyon-txn's `backfill.rs`). Old versions get no entries.
//! - **I3** After step 4 every transaction started after the back-fill ended:
//!   its snapshot is newer than every version the back-fill skipped, so making
//!   the index readable (step 6) never shows an old snapshot a missing entry;
//!   and its unique checks ran against a complete index (writers check
//!   write-only unique indexes too), so the scan of step 5 sees every duplicate
//!   that older checks could have let in, and none can be added after it.
//! - **I4** A crash before step 6 leaves a WriteOnly index in the catalog:
//!   `Engine::open` removes it and its entries (the statement never returned
//!   OK). Catalog records are written synced; on RocksDB that sync also makes
//!   the back-fill's entries durable before the index is public. (Not done: a
//!   crash between a DROP INDEX's catalog write and its purge leaves entries
//!   of an id no definition names — never read, but not reclaimed either.)
//!
//! DROP INDEX removes the index from the catalog, waits (P2) so no writer still
//! adds entries, then purges them. RENAME changes only the catalog record (the
//! table id, and so every key, stays): statements on the old name finish on the
//! old snapshot. Every ALTER waits (P2) before it returns — for RENAME and the
//! column operations the wait is not needed for correctness and its timeout is
//! not an error; it keeps "no statement runs on a definition older than the
//! previous one" true for the next ALTER. Pins are per session, not per table:
//! a long transaction on any table delays every schema change (it blocks no
//! read or write).
//!
//! Schema changes serialise on `Engine::alter_lock`; DML never takes it.
//!
//! # MODIFY / CHANGE / RENAME COLUMN, ALTER COLUMN SET / DROP DEFAULT
//! In place, when the column's values keep their stored form (`StoredForm`:
//! INT to BIGINT, VARCHAR(10) to VARCHAR(200) in one collation, NULL to NOT
//! NULL, a new DEFAULT, COMMENT or name): the new definition is published
//! like any other, and once older writers have drained (P2) every stored
//! value is checked against it (`Engine::check_changed_columns`); a value
//! the new definition would store differently (out of range, too long, a
//! NULL for NOT NULL) puts the previous definition back and fails the ALTER
//! with MySQL's error for that value. That is strict mode's answer: outside
//! it a change of type or nullability is a table rewrite (`adjusts_values`),
//! which stores such values adjusted with MySQL's warnings.
//!
//! # Table rewrites
//! The forms that change how rows are stored — MODIFY / CHANGE between
//! stored forms (INT to VARCHAR, a new collation, signedness, DECIMAL
//! scale), ADD / DROP PRIMARY KEY, dropping a primary-key column, ADD COLUMN
//! with AUTO_INCREMENT or PRIMARY KEY — are not online: `alter_table` hands
//! the whole ALTER to `crate::ddl::rewrite` (ALGORITHM=COPY: writers of the
//! table fail with 1205 while it is copied) when `needs_rewrite` says so.
//! `AUTO_INCREMENT = n` sets the table's counter after the other operations.
//!
//! # Not implemented (refused with 1235)
//! ADD COLUMN ... DATE / DATETIME / TIMESTAMP NOT NULL without DEFAULT on a
//! non-empty table (1292: the zero date MySQL fills in is refused, as in
//! strict mode), ALGORITHM / LOCK clauses other than accepted-and-ignored. (ADD / DROP FOREIGN KEY are done here: the
//! index a constraint needs is added online like any other, and the rows
//! already stored are checked once the constraint is published and older
//! writers have drained; see `crate::exec::foreign`.) An ALTER with several operations is
//! not atomic when its ADD INDEX fails (1062 or 1205): the other operations stay
//! applied and the failed index is removed (MySQL would undo the whole
//! statement). A write-only UNIQUE index is enforced for the writes it sees
//! (as F1's write-only constraints are): while ADD UNIQUE builds, an INSERT of
//! a value the index already holds fails with 1062 (and REPLACE / ON DUPLICATE
//! KEY UPDATE treat it as a conflict), where MySQL would let the write through
//! and fail the ALTER.

use crate::catalog::engine::{json, meta_key, validate_name, Engine, META_TABLE};
use crate::catalog::rows::{decode_table_row, index_key, index_keys};
use crate::catalog::{ColumnDef, DefaultValue, IndexState, Table, TableDef};
use canyon_common::{Error, Result};
use canyon_storage::{KeyRange, Keyspace};
use canyon_txn::{IndexId, IsolationLevel, ReadMode, TableId};
use std::ops::ControlFlow;
use std::sync::Arc;

/// Rows per back-fill chunk (one hold of the commit mutex each).
const BACKFILL_CHUNK: usize = 512;

/// Where ADD COLUMN puts the column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnPosition {
    /// At the end (the default).
    Last,
    /// FIRST.
    First,
    /// AFTER the named column.
    After(String),
}

/// One operation of an ALTER TABLE (CREATE / DROP INDEX and RENAME TABLE are one
/// operation each).
#[derive(Debug, Clone)]
pub enum AlterOp {
    /// ADD COLUMN; `unique` for an inline UNIQUE (an index is added too).
    AddColumn {
        /// The column (its `added_default` is filled in here).
        column: ColumnDef,
        /// FIRST / AFTER.
        position: ColumnPosition,
    },
    /// DROP COLUMN.
    DropColumn {
        /// Column name.
        name: String,
        /// DROP COLUMN IF EXISTS.
        if_exists: bool,
    },
    /// ADD INDEX / KEY / UNIQUE, CREATE INDEX.
    AddIndex {
        /// Name; `None` names it after its first column, as MySQL does.
        name: Option<String>,
        /// Column names, in key order.
        columns: Vec<String>,
        /// UNIQUE.
        unique: bool,
        /// USING, COMMENT, prefix lengths and DESC, as declared.
        attrs: crate::catalog::IndexAttrs,
    },
    /// DROP INDEX / KEY.
    DropIndex {
        /// Index name.
        name: String,
    },
    /// ADD [CONSTRAINT name] FOREIGN KEY: the index it needs is added
    /// (online) when none leads with its columns; existing rows are checked
    /// once the constraint is published (`crate::exec::foreign`).
    AddForeignKey {
        /// The constraint as written (positions refer to the table before
        /// this ALTER's column operations: give it after them).
        fk: crate::ddl::NewForeignKey,
        /// `foreign_key_checks` of the session.
        checks: bool,
    },
    /// DROP FOREIGN KEY name (its index stays, as in MySQL).
    DropForeignKey {
        /// Constraint name.
        name: String,
    },
    /// MODIFY \[COLUMN\] and CHANGE \[COLUMN\]: a new definition of column
    /// `old` (CHANGE may rename it). Done in place when the values stored
    /// keep their form (see `StoredForm`); checked against every row.
    ChangeColumn {
        /// The column's current name.
        old: String,
        /// Its new definition.
        column: ColumnDef,
        /// FIRST / AFTER, if given.
        position: Option<ColumnPosition>,
    },
    /// ALTER \[COLUMN\] c SET DEFAULT v / DROP DEFAULT.
    SetDefault {
        /// Column name.
        name: String,
        /// The new default; `None`: DROP DEFAULT.
        default: Option<DefaultValue>,
    },
    /// A new PARTITION BY (or none: REMOVE PARTITIONING), already checked
    /// against the table and its rows (`crate::ddl::partition`).
    SetPartitioning(Option<Box<crate::catalog::partition::Partitioning>>),
    /// ENGINE = name: the engine's canonical name (checked by the session,
    /// `crate::catalog::storage_engine`); InnoDB clears it.
    SetEngine(String),
    /// COMMENT = 'text': the table's comment.
    SetComment(String),
    /// ORDER BY col \[DESC\], ...: the rows of a table without a primary key
    /// are rewritten in this order (their hidden row ids follow it, so a
    /// scan returns them so); a table with one keeps its order, with
    /// MySQL's warning (`Engine::alter_table_mode`).
    OrderBy(Vec<(String, bool)>),
    /// ADD PRIMARY KEY (columns): a table rewrite (`crate::ddl::rewrite`);
    /// the columns become NOT NULL, as in MySQL.
    AddPrimaryKey {
        /// Column names, in key order.
        columns: Vec<String>,
    },
    /// DROP PRIMARY KEY: a table rewrite; the rows get hidden row ids.
    DropPrimaryKey,
    /// The AUTO_INCREMENT = n table option: the next value handed out, never
    /// at or below a value the column holds (InnoDB's rule).
    SetAutoIncrement(u64),
    /// RENAME TO, RENAME TABLE.
    RenameTo {
        /// Target database.
        db: String,
        /// Target name.
        name: String,
    },
}

/// What the catalog step of an ALTER decided.
struct Phase1 {
    table: Arc<Table>,
    /// The catalog version that holds the change.
    version: u64,
    /// Columns MODIFY / CHANGE gave a narrower type or NOT NULL: (column
    /// position in the new definition, its previous definition). Every
    /// stored value is checked against the new definition (see
    /// `Engine::check_changed_columns`).
    changed: Vec<(usize, ColumnDef)>,
    /// Indexes whose entries must go once no writer maintains them.
    dropped: Vec<IndexId>,
    /// WriteOnly indexes to build.
    added: Vec<IndexId>,
    /// Foreign keys added whose existing rows must be checked.
    checked_fks: Vec<String>,
}

impl Engine {
    /// ALTER TABLE (and CREATE / DROP INDEX, RENAME TABLE): applies `ops` to one
    /// table online. See the module doc for the protocol.
    pub fn alter_table(&self, db: &str, table: &str, ops: Vec<AlterOp>) -> Result<()> {
        self.alter_table_mode(db, table, ops, true).map(|_| ())
    }

    /// [`Engine::alter_table`] under the session's `sql_mode`: `strict`
    /// (STRICT_TRANS_TABLES or STRICT_ALL_TABLES) makes a value a table
    /// rewrite cannot convert fail the ALTER; without it the value is
    /// adjusted and the warnings are returned (see `crate::ddl::rewrite`).
    pub fn alter_table_mode(
        &self,
        db: &str,
        table: &str,
        ops: Vec<AlterOp>,
        strict: bool,
    ) -> Result<Vec<(u16, String)>> {
        let zone = crate::types::timezone::system_zone().clone();
        self.alter_table_in_zone(db, table, ops, strict, &zone)
    }

    /// [`Engine::alter_table_mode`] in the session's time zone `zone`: a
    /// table rewrite that turns DATETIME values into TIMESTAMP instants (or
    /// back), or fills a new TIMESTAMP column, reads local times in it.
    pub fn alter_table_in_zone(
        &self,
        db: &str,
        table: &str,
        ops: Vec<AlterOp>,
        strict: bool,
        zone: &crate::types::timezone::Zone,
    ) -> Result<Vec<(u16, String)>> {
        let _alter = self.alter_lock.lock();
        let mut warnings = Vec::new();
        let mut auto_increment = None;
        let ops: Vec<AlterOp> = ops
            .into_iter()
            .filter(|op| match op {
                AlterOp::SetAutoIncrement(n) => {
                    auto_increment = Some(*n);
                    false
                }
                _ => true,
            })
            .collect();
        let id = self
            .catalog()
            .table(db, table)
            .map(|t| t.def.id)
            .ok_or_else(|| Error::UnknownTable {
                db: db.to_string(),
                table: table.to_string(),
            })?;
        let ops = self.ordered_by_key(db, table, ops, &mut warnings)?;
        if !ops.is_empty() {
            let cur = self.catalog().table(db, table).cloned();
            match cur {
                Some(cur)
                    if needs_rewrite(&cur.def, &ops)
                        || (!strict && adjusts_values(&cur.def, &ops)) =>
                {
                    warnings.extend(self.rewrite_table(db, table, ops, strict, zone)?)
                }
                _ => self.alter_online(db, table, ops)?,
            }
        }
        if let Some(n) = auto_increment {
            self.set_auto_increment(id, db, table, n)?;
        }
        Ok(warnings)
    }

    /// The ALTERs that keep the stored rows (see the module doc).
    fn alter_online(&self, db: &str, table: &str, ops: Vec<AlterOp>) -> Result<()> {
        // A NOT NULL date column without DEFAULT can be added only where no
        // row needs its (zero-date) implicit default.
        let empty = match self.catalog().table(db, table).cloned() {
            Some(t) if ops.iter().any(needs_zero_date) => self.table_is_empty(&t)?,
            _ => false,
        };
        let mut p = self.alter_catalog(db, table, ops, empty)?;
        let id = p.table.def.id;
        let fks = p.checked_fks.clone();
        let changed = std::mem::take(&mut p.changed);
        let checked = p.table.clone();
        self.finish_alter(p)?;
        if !changed.is_empty() {
            self.check_changed_columns(&checked, changed)?;
        }
        if fks.is_empty() {
            return Ok(());
        }
        // The constraints are published and every writer on an older
        // catalog has ended (finish_alter waited for their pins): a row
        // without a parent now is one that was there before, and the ALTER
        // fails with 1452, leaving the table without the new constraints
        // (their indexes stay).
        let orphan = {
            let cat = self.catalog();
            match cat
                .databases
                .values()
                .flat_map(|d| d.tables.values())
                .find(|t| t.def.id == id)
            {
                Some(t) => crate::exec::foreign::find_orphan(&self.txn, &cat, t, &fks)?,
                None => None,
            }
        };
        if let Some(e) = orphan {
            self.change_table(id, |def| {
                crate::catalog::engine::unfinished_change();
                def.foreign_keys.retain(|f| !fks.contains(&f.name))
            })?;
            return Err(e);
        }
        Ok(())
    }

    /// After MODIFY / CHANGE narrowed a column (type or NOT NULL) and every
    /// writer on the older definition has ended (`finish_alter` waited):
    /// every stored value must already be what the new definition would
    /// store, else the columns get their previous definitions back and the
    /// ALTER fails with the value's error (1264, 1406, 1366, or 1138 for a
    /// NULL), as MySQL's copying ALTER fails on the first bad row. Rows
    /// written between the publish and a revert satisfy the new definition;
    /// where the new type is not narrower than the old in every respect (a
    /// signedness change is refused earlier: another stored form), such a row
    /// could hold a value the old definition would not have stored — it is
    /// read back as stored.
    fn check_changed_columns(&self, t: &Table, changed: Vec<(usize, ColumnDef)>) -> Result<()> {
        let session = self.txn.session();
        let mut txn = session.begin(IsolationLevel::ReadCommitted);
        txn.begin_statement();
        let mut row = Vec::new();
        let mut err = None;
        let mut rowno = 0u64;
        txn.scan(
            t.def.id,
            &KeyRange::all(),
            false,
            ReadMode::Current,
            &mut |_pk, bytes| {
                rowno += 1;
                if let Err(e) = decode_table_row(t, bytes, &mut row) {
                    err = Some(e);
                    return ControlFlow::Break(());
                }
                for (c, _) in &changed {
                    let col = &t.def.columns[*c];
                    let v = &row[*c];
                    let bad = if v.is_null() {
                        (!col.nullable).then(|| Error::StrictModeError {
                            code: 1138,
                            message: "Invalid use of NULL value".into(),
                        })
                    } else {
                        match crate::types::coerce(v.clone(), col.ty, &col.name, rowno) {
                            Ok(stored) if stored == *v => None,
                            Ok(_) => Some(Error::StrictModeError {
                                code: 1265,
                                message: format!(
                                    "Data truncated for column '{}' at row {rowno}",
                                    col.name
                                ),
                            }),
                            Err(e) => Some(e),
                        }
                    };
                    if let Some(e) = bad {
                        err = Some(e);
                        return ControlFlow::Break(());
                    }
                }
                ControlFlow::Continue(())
            },
        )?;
        let Some(e) = err else { return Ok(()) };
        self.change_table(t.def.id, |def| {
            crate::catalog::engine::unfinished_change();
            for (c, prev) in &changed {
                if let Some(col) = def.columns.get_mut(*c) {
                    *col = prev.clone();
                }
            }
        })?;
        Err(e)
    }

    /// RENAME TABLE `db.name` TO `new_db.new_name`.
    pub fn rename_table(&self, db: &str, name: &str, new_db: &str, new_name: &str) -> Result<()> {
        self.alter_table(
            db,
            name,
            vec![AlterOp::RenameTo {
                db: new_db.to_string(),
                name: new_name.to_string(),
            }],
        )
    }

    /// Step 1: one catalog change holding every operation.
    fn alter_catalog(
        &self,
        db: &str,
        table: &str,
        ops: Vec<AlterOp>,
        empty: bool,
    ) -> Result<Phase1> {
        self.change(|cat, next_id, batch| {
            let cur = cat
                .table(db, table)
                .cloned()
                .ok_or_else(|| Error::UnknownTable {
                    db: db.to_string(),
                    table: table.to_string(),
                })?;
            let mut def = cur.def.clone();
            def.created = crate::catalog::schema::unix_now();
            crate::ddl::foreign_keys::check_alter(cat, &cur.def, &ops)?;
            let mut ch = Changes {
                table_empty: empty,
                ..Changes::default()
            };
            let now = chrono::Local::now().naive_local();
            for op in ops {
                apply(&mut def, op, next_id, &mut ch, now)?;
            }
            check_auto_key(&def)?;
            crate::ddl::generated::check_table(&def)?;
            normalize_slots(&mut def);
            let new_fks = std::mem::take(&mut ch.foreign_keys);
            let mut added_fk_names = Vec::new();
            if !new_fks.is_empty() {
                let added =
                    crate::ddl::foreign_keys::resolve_new(cat, &def, new_fks, ch.check_rows)?;
                added_fk_names = added.iter().map(|f| f.name.clone()).collect();
                def.foreign_keys.extend(added);
            }
            let (new_db, new_name) = ch
                .rename
                .clone()
                .unwrap_or_else(|| (db.to_string(), table.to_string()));
            if (new_db.as_str(), new_name.as_str()) != (db, table) {
                validate_name(&new_name)?;
                let target = cat
                    .databases
                    .get(&new_db)
                    .ok_or_else(|| Error::UnknownDatabase(new_db.clone()))?;
                if target.tables.contains_key(&new_name) || cat.view(&new_db, &new_name).is_some() {
                    return Err(Error::TableExists(new_name));
                }
                let old = cat
                    .databases
                    .get_mut(db)
                    .expect("the table was found in this database above");
                Arc::make_mut(old).tables.remove(table);
                def.db = new_db.clone();
                def.name = new_name.clone();
                // Triggers follow their table (not into another database).
                crate::catalog::routines::rename_table_triggers(
                    cat, batch, db, table, &new_db, &new_name,
                )?;
                // Foreign keys follow a renamed parent, as in InnoDB.
                for fk in def.foreign_keys.iter_mut() {
                    if fk.ref_db == db && fk.ref_table == table {
                        fk.ref_db = new_db.clone();
                        fk.ref_table = new_name.clone();
                    }
                }
                for (cdb, cname) in cat.children_of(db, table).to_vec() {
                    let Some(child) = cat.table(&cdb, &cname).cloned() else {
                        continue;
                    };
                    let mut cdef = child.def.clone();
                    for fk in cdef.foreign_keys.iter_mut() {
                        if fk.ref_db == db && fk.ref_table == table {
                            fk.ref_db = new_db.clone();
                            fk.ref_table = new_name.clone();
                        }
                    }
                    batch.put(
                        Keyspace::Meta,
                        meta_key(META_TABLE, &cdef.id.to_be_bytes()),
                        json(&cdef)?,
                    );
                    let nt = Arc::new(Table::sharing_runtime(cdef, &child));
                    if let Some(d) = cat.databases.get_mut(&cdb) {
                        Arc::make_mut(d).tables.insert(cname, nt);
                    }
                }
            }
            batch.put(
                Keyspace::Meta,
                meta_key(META_TABLE, &def.id.to_be_bytes()),
                json(&def)?,
            );
            if def.physical_width() > cur.def.physical_width() {
                // Set before the new definition is published: a statement on
                // `cur` that meets a row written on the new one keeps its slots.
                cur.superseded
                    .store(true, std::sync::atomic::Ordering::SeqCst);
            }
            let nt = Arc::new(Table::sharing_runtime(def, &cur));
            let target = cat
                .databases
                .get_mut(&new_db)
                .expect("the target database was checked above");
            Arc::make_mut(target).tables.insert(new_name, nt.clone());
            let changed = ch
                .changed
                .iter()
                .filter_map(|(name, prev)| nt.column(name).map(|p| (p, prev.clone())))
                .collect();
            if !ch.added.is_empty() || !ch.changed.is_empty() || ch.check_rows {
                // Indexes are public only at `set_index_states`; narrowed
                // columns and new constraints are checked against the rows
                // after this change, which a failed check reverts.
                crate::catalog::engine::unfinished_change();
            }
            Ok(Phase1 {
                table: nt,
                version: cat.version + 1,
                changed,
                dropped: ch.dropped,
                added: ch.added,
                checked_fks: if ch.check_rows {
                    added_fk_names
                } else {
                    Vec::new()
                },
            })
        })
    }

    /// Steps 2 to 6.
    fn finish_alter(&self, p: Phase1) -> Result<()> {
        let drained = self.wait_for_pins_below(p.version, Some(p.table.def.id));
        // Entries of dropped indexes: a writer still on the old definition
        // could add one after the purge only if the wait timed out (an orphan
        // entry of an id no definition names: never read).
        for &id in &p.dropped {
            self.txn.purge_index(id)?;
        }
        if p.added.is_empty() {
            return Ok(());
        }
        if !drained {
            self.abandon_indexes(p.table.def.id, &p.added)?;
            return Err(Error::LockWaitTimeout);
        }
        let built = self.build_indexes(&p);
        if let Err(e) = built {
            self.abandon_indexes(p.table.def.id, &p.added)?;
            return Err(e);
        }
        self.set_index_states(p.table.def.id, &p.added, IndexState::Public)
    }

    /// Steps 3 to 5.
    fn build_indexes(&self, p: &Phase1) -> Result<()> {
        for &id in &p.added {
            self.backfill(&p.table, id)?;
        }
        let v2 = self.change(|cat, _, _| Ok(cat.version + 1))?;
        if !self.wait_for_pins_below(v2, Some(p.table.def.id)) {
            return Err(Error::LockWaitTimeout);
        }
        for &id in &p.added {
            if let Some(value) = self.find_duplicate(&p.table, id)? {
                let name = p
                    .table
                    .def
                    .indexes
                    .iter()
                    .find(|i| i.id == id)
                    .map(|i| i.name.clone())
                    .unwrap_or_default();
                return Err(Error::DuplicateEntry {
                    value,
                    key: format!("{}.{name}", p.table.def.name),
                });
            }
        }
        Ok(())
    }

    /// Step 3 for one index.
    fn backfill(&self, t: &Table, id: IndexId) -> Result<()> {
        let pos = t
            .def
            .indexes
            .iter()
            .position(|i| i.id == id)
            .expect("the index was added to this definition in step 1");
        let mut row = Vec::new();
        let mut after: Option<Vec<u8>> = None;
        let mut result = Ok(());
        let mut run = || loop {
            let mut key_of = |bytes: &[u8]| -> Result<Vec<Vec<u8>>> {
                decode_table_row(t, bytes, &mut row)?;
                if t.def.indexes[pos].attrs.fulltext {
                    // One entry per word (`crate::types::fulltext`).
                    return Ok(index_keys(t, &row)
                        .into_iter()
                        .filter(|(i, _)| *i == id)
                        .map(|(_, k)| k)
                        .collect());
                }
                Ok(vec![index_key(t, pos, &row)])
            };
            match self.txn.backfill_index(
                t.def.id,
                id,
                after.as_deref(),
                BACKFILL_CHUNK,
                &mut key_of,
            ) {
                Ok(Some(last)) => after = Some(last),
                Ok(None) => return,
                Err(e) => {
                    result = Err(e);
                    return;
                }
            }
        };
        match self.config.blocking_hook {
            Some(hook) => hook(&mut run),
            None => run(),
        }
        result
    }

    /// Step 5: the first duplicate value of a UNIQUE index (rows with a NULL in
    /// the key never collide, as in MySQL), displayed as in error 1062.
    pub(crate) fn find_duplicate(&self, t: &Table, id: IndexId) -> Result<Option<String>> {
        let pos = t
            .def
            .indexes
            .iter()
            .position(|i| i.id == id)
            .expect("the index was added to this definition in step 1");
        let idx = &t.def.indexes[pos];
        if !idx.unique {
            return Ok(None);
        }
        let session = self.txn.session();
        let mut txn = session.begin(IsolationLevel::ReadCommitted);
        txn.begin_statement();
        let mut prev: Option<Vec<u8>> = None;
        let mut dup = None;
        let mut err = None;
        let mut row = Vec::new();
        txn.scan_index(
            t.def.id,
            id,
            &KeyRange::all(),
            false,
            ReadMode::Current,
            &mut |k, _pk, bytes| {
                if let Err(e) = decode_table_row(t, bytes, &mut row) {
                    err = Some(e);
                    return ControlFlow::Break(());
                }
                // Each pk comes once; an entry whose row has moved on is not
                // this key's.
                if index_key(t, pos, &row) != k || idx.columns.iter().any(|&c| row[c].is_null()) {
                    return ControlFlow::Continue(());
                }
                if prev.as_deref() == Some(k) {
                    dup = Some(
                        idx.columns
                            .iter()
                            .map(|&c| row[c].to_display())
                            .collect::<Vec<_>>()
                            .join("-"),
                    );
                    return ControlFlow::Break(());
                }
                prev = Some(k.to_vec());
                ControlFlow::Continue(())
            },
        )?;
        txn.rollback();
        match err {
            Some(e) => Err(e),
            None => Ok(dup),
        }
    }

    /// Step 6 (or a state change of recovery): sets the state of `ids` in the
    /// table with id `table`, wherever it is now.
    fn set_index_states(&self, table: TableId, ids: &[IndexId], state: IndexState) -> Result<()> {
        // Every snapshot from now on sees only versions the index has
        // entries for (the back-fill is done, later commits maintain it).
        let ts = self.txn.visible_ts();
        self.change_table(table, |def| {
            for ix in def.indexes.iter_mut().filter(|i| ids.contains(&i.id)) {
                ix.state = state;
                if state == IndexState::Public {
                    ix.ready_since = ts;
                }
            }
        })
    }

    /// Removes unfinished indexes from the catalog, waits for their writers,
    /// purges their entries.
    fn abandon_indexes(&self, table: TableId, ids: &[IndexId]) -> Result<()> {
        self.change_table(table, |def| {
            crate::catalog::engine::unfinished_change();
            def.indexes.retain(|i| !ids.contains(&i.id))
        })?;
        let v = self.catalog().version;
        self.wait_for_pins_below(v, Some(table));
        for &id in ids {
            self.txn.purge_index(id)?;
        }
        Ok(())
    }

    /// Edits the definition of the table with id `table` (a no-op if it is gone).
    fn change_table(&self, table: TableId, f: impl FnOnce(&mut TableDef)) -> Result<()> {
        self.change(|cat, _, batch| {
            let Some(cur) = cat
                .databases
                .values()
                .flat_map(|d| d.tables.values())
                .find(|t| t.def.id == table)
                .cloned()
            else {
                return Ok(());
            };
            let mut def = cur.def.clone();
            f(&mut def);
            batch.put(
                Keyspace::Meta,
                meta_key(META_TABLE, &def.id.to_be_bytes()),
                json(&def)?,
            );
            let name = def.name.clone();
            let db = cat
                .databases
                .get_mut(&def.db)
                .expect("the table was found in its database");
            Arc::make_mut(db)
                .tables
                .insert(name, Arc::new(Table::sharing_runtime(def, &cur)));
            Ok(())
        })
    }

    /// Invariant I4, at open: an index still WriteOnly belongs to an ALTER that
    /// never returned; remove it and its entries.
    pub(crate) fn abandon_unfinished_indexes(&self) -> Result<()> {
        let cat = self.catalog();
        let unfinished: Vec<(TableId, Vec<IndexId>)> = cat
            .databases
            .values()
            .flat_map(|d| d.tables.values())
            .map(|t| {
                let ids = t
                    .def
                    .indexes
                    .iter()
                    .filter(|i| !i.state.is_public())
                    .map(|i| i.id)
                    .collect::<Vec<_>>();
                (t.def.id, ids)
            })
            .filter(|(_, ids)| !ids.is_empty())
            .collect();
        drop(cat);
        for (table, ids) in unfinished {
            tracing::info!(table, indexes = ?ids, "removing indexes of an unfinished ALTER");
            self.abandon_indexes(table, &ids)?;
        }
        Ok(())
    }
}

use super::alter_def::{adjusts_values, apply, needs_zero_date, normalize_slots, Changes};
pub(crate) use super::alter_def::{apply_rewrite, check_auto_key, needs_rewrite};
