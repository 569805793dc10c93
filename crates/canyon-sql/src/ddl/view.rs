//! CREATE / ALTER / DROP VIEW on the instance: catalog changes through
//! `Engine::change` (the protocol of `crate::catalog::engine`), one Meta
//! record per view (`crate::catalog::view`).
//!
//! The definition arrives validated: the session planned the SELECT against
//! the snapshot it read (`crate::session`'s view handlers) and decided the
//! column names. Here only the namespace is checked again, under the DDL
//! mutex, so that a table or view created meanwhile by another session is
//! not overwritten.

use crate::catalog::engine::*;
use crate::catalog::view::{record_key, wrong_object, View, ViewDef};
use crate::catalog::Catalog;
use canyon_common::{Error, Result};
use canyon_storage::{Keyspace, WriteBatch};
use std::sync::Arc;

/// How CREATE / ALTER VIEW treats an existing view of the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewMode {
    /// CREATE VIEW: 1050 if the name is taken.
    Create,
    /// CREATE OR REPLACE VIEW: replaces a view (a table of the name: 1347).
    OrReplace,
    /// ALTER VIEW: the view must exist (1146 otherwise, 1347 for a table).
    Alter,
}

impl Engine {
    /// Creates, replaces or alters a view.
    pub fn create_view(&self, def: ViewDef, mode: ViewMode) -> Result<()> {
        validate_name(&def.name)?;
        self.change(|cat, _, batch| {
            let (db, name) = (def.db.clone(), def.name.clone());
            if !cat.databases.contains_key(&db) {
                return Err(Error::UnknownDatabase(db));
            }
            if cat.table(&db, &name).is_some() {
                return Err(match mode {
                    ViewMode::Create => Error::TableExists(name),
                    _ => wrong_object(&db, &name, "VIEW"),
                });
            }
            let exists = cat.view(&db, &name).is_some();
            match mode {
                ViewMode::Create if exists => return Err(Error::TableExists(name)),
                ViewMode::Alter if !exists => return Err(Error::UnknownTable { db, table: name }),
                _ => {}
            }
            batch.put(Keyspace::Meta, record_key(&db, &name), json(&def)?);
            Arc::make_mut(&mut cat.views)
                .entry(db)
                .or_default()
                .insert(name, Arc::new(View::new(def)));
            Ok(())
        })
    }

    /// RENAME TABLE of a view: within its database only (1450 otherwise,
    /// as MySQL), to a free name (1050).
    pub fn rename_view(&self, db: &str, name: &str, to_db: &str, to: &str) -> Result<()> {
        validate_name(to)?;
        self.change(|cat, _, batch| {
            let Some(view) = cat.view(db, name).cloned() else {
                return Err(Error::UnknownTable {
                    db: db.to_string(),
                    table: name.to_string(),
                });
            };
            if to_db != db {
                return Err(Error::View {
                    code: 1450,
                    message: format!("Changing schema from '{db}' to '{to_db}' is not allowed."),
                });
            }
            if cat.name_taken(db, to) {
                return Err(Error::TableExists(to.to_string()));
            }
            remove_view(cat, batch, db, name);
            let mut def = view.def.clone();
            def.name = to.to_string();
            batch.put(Keyspace::Meta, record_key(db, to), json(&def)?);
            Arc::make_mut(&mut cat.views)
                .entry(db.to_string())
                .or_default()
                .insert(to.to_string(), Arc::new(View::new(def)));
            Ok(())
        })
    }

    /// DROP VIEW of several views: every name is checked first (MySQL drops
    /// none when one is missing: 1051 naming all of the missing ones, or
    /// 1347 for a table), unless `if_exists`, when the missing ones are
    /// returned for the notes.
    pub fn drop_views(
        &self,
        names: &[(String, String)],
        if_exists: bool,
    ) -> Result<Vec<(String, String)>> {
        self.change(|cat, _, batch| {
            let mut missing = Vec::new();
            for (db, name) in names {
                if cat.view(db, name).is_some() {
                    continue;
                }
                if cat.table(db, name).is_some() {
                    return Err(wrong_object(db, name, "VIEW"));
                }
                missing.push((db.clone(), name.clone()));
            }
            if !missing.is_empty() && !if_exists {
                let list: Vec<String> = missing.iter().map(|(d, n)| format!("{d}.{n}")).collect();
                return Err(Error::BadTable(list.join(",")));
            }
            for (db, name) in names {
                remove_view(cat, batch, db, name);
            }
            Ok(missing)
        })
    }
}

/// Removes a view from a catalog being changed, with its record.
fn remove_view(cat: &mut Catalog, batch: &mut WriteBatch, db: &str, name: &str) {
    let views = Arc::make_mut(&mut cat.views);
    if let Some(m) = views.get_mut(db) {
        if m.remove(name).is_some() {
            batch.delete(Keyspace::Meta, record_key(db, name));
        }
        if m.is_empty() {
            views.remove(db);
        }
    }
}

/// Removes every view of a database being dropped (DROP DATABASE).
pub(crate) fn drop_database_views(cat: &mut Catalog, batch: &mut WriteBatch, db: &str) {
    let names: Vec<String> = cat.views_in(db).map(|v| v.def.name.clone()).collect();
    for n in names {
        remove_view(cat, batch, db, &n);
    }
}
