//! CREATE and DROP of databases, tables and indexes, and TRUNCATE: catalog
//! changes through `Engine::change` (the protocol of
//! `crate::catalog::engine`), with the foreign-key checks of
//! `crate::exec::foreign` and the online index builds of `crate::ddl::alter`.

use crate::catalog::engine::*;
use crate::catalog::{Database, Table, TableDef};
use canyon_common::{Error, Result};
use canyon_storage::Keyspace;
use std::sync::atomic::Ordering;
use std::sync::Arc;

impl Engine {
    // ---- databases ----------------------------------------------------------------

    /// CREATE DATABASE. Returns whether it was created (false: existed, IF NOT EXISTS).
    pub fn create_database(
        &self,
        name: &str,
        if_not_exists: bool,
        collation: crate::types::collation::Collation,
    ) -> Result<bool> {
        validate_name(name)?;
        self.change(|cat, _, batch| {
            if cat.databases.contains_key(name) {
                return if if_not_exists {
                    Ok(false)
                } else {
                    Err(Error::DatabaseExists(name.to_string()))
                };
            }
            cat.databases.insert(
                name.to_string(),
                Arc::new(Database {
                    name: name.to_string(),
                    default_collation: collation,
                    tables: Default::default(),
                }),
            );
            let rec = crate::catalog::DatabaseRecord {
                default_collation: Some(collation),
            };
            let bytes = serde_json::to_vec(&rec).map_err(|e| Error::Internal(e.to_string()))?;
            batch.put(Keyspace::Meta, meta_key(META_DB, name.as_bytes()), bytes);
            Ok(true)
        })
    }

    /// ALTER DATABASE: `collation` becomes the default of the database's new
    /// tables (its record and the published catalog, in one change).
    pub fn alter_database(
        &self,
        name: &str,
        collation: crate::types::collation::Collation,
    ) -> Result<()> {
        self.change(|cat, _, batch| {
            let db = cat
                .databases
                .get_mut(name)
                .ok_or_else(|| Error::UnknownDatabase(name.to_string()))?;
            Arc::make_mut(db).default_collation = collation;
            let rec = crate::catalog::DatabaseRecord {
                default_collation: Some(collation),
            };
            let bytes = serde_json::to_vec(&rec).map_err(|e| Error::Internal(e.to_string()))?;
            batch.put(Keyspace::Meta, meta_key(META_DB, name.as_bytes()), bytes);
            Ok(())
        })
    }

    /// DROP DATABASE. Returns the number of tables dropped, or `None` when it did
    /// not exist (IF EXISTS). With `fk_checks`, a table of another database
    /// referencing one of its tables stops it (3730, as DROP TABLE).
    pub fn drop_database(
        &self,
        name: &str,
        if_exists: bool,
        fk_checks: bool,
    ) -> Result<Option<usize>> {
        let _alter = self.alter_lock.lock();
        let dropped = self.change(|cat, _, batch| {
            if let Some(db) = cat.databases.get(name).filter(|_| fk_checks) {
                let inside: Vec<(String, String)> = db
                    .tables
                    .keys()
                    .map(|t| (name.to_string(), t.clone()))
                    .collect();
                for t in db.tables.keys() {
                    crate::ddl::foreign_keys::check_drop(cat, name, t, &inside)?;
                }
            }
            let Some(db) = cat.databases.remove(name) else {
                return if if_exists {
                    Ok(None)
                } else {
                    Err(Error::DropDatabaseMissing(name.to_string()))
                };
            };
            batch.delete(Keyspace::Meta, meta_key(META_DB, name.as_bytes()));
            crate::ddl::view::drop_database_views(cat, batch, name);
            crate::catalog::routines::drop_table_triggers(cat, batch, name, None);
            for t in db.tables.values() {
                batch.delete(
                    Keyspace::Meta,
                    meta_key(META_TABLE, &t.def.id.to_be_bytes()),
                );
            }
            Ok(Some(db.tables.values().cloned().collect::<Vec<_>>()))
        })?;
        match dropped {
            None => Ok(None),
            Some(tables) => {
                for t in &tables {
                    self.purge(&t.def)?;
                }
                Ok(Some(tables.len()))
            }
        }
    }

    // ---- tables --------------------------------------------------------------------

    /// CREATE TABLE. Returns false when it existed and IF NOT EXISTS was given.
    /// Its foreign keys are checked against the catalog (`crate::exec::foreign`;
    /// the parent may be missing when `fk_checks` is off).
    pub fn create_table(
        &self,
        db: &str,
        name: &str,
        mut t: crate::ddl::NewTable,
        if_not_exists: bool,
        fk_checks: bool,
    ) -> Result<bool> {
        validate_name(name)?;
        self.change(|cat, next_id, batch| {
            let database = cat
                .databases
                .get(db)
                .ok_or_else(|| Error::UnknownDatabase(db.to_string()))?;
            if database.tables.contains_key(name) || cat.view(db, name).is_some() {
                return if if_not_exists {
                    Ok(false)
                } else {
                    Err(Error::TableExists(name.to_string()))
                };
            }
            let start = t.auto_increment_start;
            let new_fks = std::mem::take(&mut t.foreign_keys);
            let id = take_id(next_id);
            let index_ids: Vec<u32> = (0..t.indexes.len()).map(|_| take_id(next_id)).collect();
            let mut def = crate::ddl::finish(t, db, name, id, &index_ids);
            def.foreign_keys =
                crate::ddl::foreign_keys::resolve_new(cat, &def, new_fks, fk_checks)?;
            batch.put(
                Keyspace::Meta,
                meta_key(META_TABLE, &id.to_be_bytes()),
                json(&def)?,
            );
            let table = Table::new(def);
            if let Some(s) = start {
                table
                    .auto_increment
                    .store(s.saturating_sub(1), Ordering::Relaxed);
            }
            let database = cat
                .databases
                .get_mut(db)
                .expect("the database was found above, under the DDL mutex");
            Arc::make_mut(database)
                .tables
                .insert(name.to_string(), Arc::new(table));
            Ok(true)
        })
    }

    /// DROP TABLE. Returns false when it did not exist and IF EXISTS was given.
    /// With `fk_checks`, a table another table references cannot be dropped
    /// unless that table is among `dropped` (the statement's other tables).
    pub fn drop_table(
        &self,
        db: &str,
        name: &str,
        if_exists: bool,
        fk_checks: bool,
        dropped: &[(String, String)],
    ) -> Result<bool> {
        let _alter = self.alter_lock.lock();
        let removed = self.change(|cat, _, batch| {
            if fk_checks {
                crate::ddl::foreign_keys::check_drop(cat, db, name, dropped)?;
            }
            let database = match cat.databases.get_mut(db) {
                Some(d) => d,
                None if if_exists => return Ok(None),
                None => return Err(Error::BadTable(format!("{db}.{name}"))),
            };
            match Arc::make_mut(database).tables.remove(name) {
                Some(t) => {
                    batch.delete(
                        Keyspace::Meta,
                        meta_key(META_TABLE, &t.def.id.to_be_bytes()),
                    );
                    crate::catalog::routines::drop_table_triggers(cat, batch, db, Some(name));
                    Ok(Some(t))
                }
                None if if_exists => Ok(None),
                None => Err(Error::BadTable(format!("{db}.{name}"))),
            }
        })?;
        match removed {
            Some(t) => {
                self.purge(&t.def)?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// TRUNCATE TABLE: the table gets new ids (so concurrent readers of the old
    /// ids see the old data until they finish) and the old data is purged.
    /// With `fk_checks`, a table another table references cannot be
    /// truncated (1701), as in InnoDB.
    pub fn truncate_table(&self, db: &str, name: &str, fk_checks: bool) -> Result<()> {
        let _alter = self.alter_lock.lock();
        let old = self.change(|cat, next_id, batch| {
            if fk_checks {
                crate::ddl::foreign_keys::check_truncate(cat, db, name)?;
            }
            let database = cat
                .databases
                .get_mut(db)
                .ok_or_else(|| Error::UnknownTable {
                    db: db.to_string(),
                    table: name.to_string(),
                })?;
            let t = database
                .tables
                .get(name)
                .cloned()
                .ok_or_else(|| Error::UnknownTable {
                    db: db.to_string(),
                    table: name.to_string(),
                })?;
            let mut def = t.def.clone();
            def.id = take_id(next_id);
            for ix in &mut def.indexes {
                ix.id = take_id(next_id);
            }
            batch.delete(
                Keyspace::Meta,
                meta_key(META_TABLE, &t.def.id.to_be_bytes()),
            );
            batch.put(
                Keyspace::Meta,
                meta_key(META_TABLE, &def.id.to_be_bytes()),
                json(&def)?,
            );
            Arc::make_mut(database)
                .tables
                .insert(name.to_string(), Arc::new(Table::new(def)));
            Ok(t)
        })?;
        self.purge(&old.def)
    }

    /// CREATE INDEX: an online ADD INDEX (see `crate::ddl::alter`).
    pub fn create_index(
        &self,
        db: &str,
        table: &str,
        name: &str,
        columns: Vec<String>,
        unique: bool,
    ) -> Result<()> {
        self.alter_table(
            db,
            table,
            vec![crate::ddl::alter::AlterOp::AddIndex {
                name: Some(name.to_string()),
                columns,
                unique,
                attrs: Default::default(),
            }],
        )
    }

    /// DROP INDEX (see `crate::ddl::alter`).
    pub fn drop_index(&self, db: &str, table: &str, name: &str) -> Result<()> {
        self.alter_table(
            db,
            table,
            vec![crate::ddl::alter::AlterOp::DropIndex {
                name: name.to_string(),
            }],
        )
    }

    /// Deletes every stored key of a dropped table (through the MVCC layer,
    /// which owns the key layout).
    pub(crate) fn purge(&self, def: &TableDef) -> Result<()> {
        let indexes: Vec<u32> = def.indexes.iter().map(|i| i.id).collect();
        self.txn.purge_table(def.id, &indexes)
    }
}
