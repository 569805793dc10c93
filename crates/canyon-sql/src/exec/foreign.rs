//! FOREIGN KEY constraints: what a write to a child or a parent table must
//! check or do, as InnoDB does it.
//!
//! # The two sides
//! A foreign key lives in the child's definition (`TableDef::foreign_keys`)
//! and names its parent; the catalog keeps the reverse map
//! (`Catalog::referenced_by`) so a write to a parent finds its children
//! without a scan of the catalog. A statement planned on a table with either
//! side carries the catalog snapshot it was planned on (`fk` in the DML
//! plans), so all lookups below read one consistent catalog.
//!
//! - **Child side** (`check_parents`): a row inserted into the child, or
//!   updated so that a constrained column changed, must find a parent row
//!   holding its values — unless one of them is NULL (MATCH SIMPLE, InnoDB's
//!   only mode). Otherwise 1452.
//! - **Parent side** (`on_parent_change`): a parent row deleted, or updated
//!   so that a referenced column changed, finds the child rows holding its old
//!   values and, per constraint, fails with 1451 (RESTRICT, NO ACTION — InnoDB
//!   checks at once, it has no deferred constraints), deletes or updates them
//!   (CASCADE) or sets their columns to NULL (SET NULL). Changes to children
//!   are writes like any other: their own unique keys, foreign keys and
//!   children are checked, to a depth of 15 (`FK_MAX_CASCADE_DEL` in InnoDB;
//!   deeper is 3008). An ON UPDATE CASCADE / SET NULL that comes back to a
//!   table the same cascade already updated acts as RESTRICT, as MySQL
//!   documents (it would otherwise loop through a self-referencing table).
//!
//! Checks are immediate and per row, in the order the statement writes rows:
//! `DELETE FROM t` on a self-referencing table with RESTRICT fails if it
//! meets a parent before its children, as in InnoDB.
//!
//! # Why the parent row is locked
//! The child side reads the parent at its latest committed version and
//! *locks it*, so that no transaction deletes it (or moves its key) before
//! this one ends; the parent side locks every child row it reads. Either order
//! of two conflicting transactions then serialises on the parent row: a
//! deleter that locked the parent first makes the child's writer wait and then
//! find no parent (1452); a child writer that locked it first makes the
//! deleter wait and then find the committed child (1451). InnoDB takes a
//! *shared* lock on the parent for the child side; Canyon's lock table has one
//! mode, so child writes that reference the same parent row serialise until
//! commit (docs/compatibility.md lists this difference). Rows are released
//! once the commit is written, like every row lock (commit rule 8).
//!
//! `foreign_key_checks = 0` turns all of this off for the session, as in
//! MySQL: no checks and no cascades (mysqldump output sets it).
//!
//! # What must hold for a constraint to exist (DDL: `crate::ddl`, `crate::catalog::engine`)
//! 1. The child has an index (or primary key) whose leading columns are the
//!    constrained columns, in order: the parent side finds children through
//!    it (`child_access`). CREATE TABLE adds one when missing, and no index a
//!    constraint needs can be dropped (1553).
//! 2. The parent has a primary key or index whose leading columns are the
//!    referenced columns, in order (1822 otherwise): the child side finds the
//!    parent through it (`parent_access`).
//! 3. Paired columns have the same type family, signedness and collation
//!    (3780), so a child's value encodes to the parent's key bytes unchanged.
//! 4. SET NULL only on nullable child columns (1830).

use crate::catalog::rows::{decode_table_row, index_keys};
use crate::catalog::{Catalog, FkAction, ForeignKeyDef, Table, TableDef};
use crate::exec::{write_update, OldRow};
use crate::expr::EvalContext;
use crate::types::value::{compare_as, Value};
use canyon_common::{Error, Result};
use canyon_storage::KeyRange;
use canyon_txn::{ReadMode, TableId, Transaction};
use std::cmp::Ordering;
use std::ops::ControlFlow;
use std::sync::Arc;

/// How deep cascades may go (InnoDB's `FK_MAX_CASCADE_DEL`).
pub const MAX_CASCADE_DEPTH: usize = 15;

/// The foreign keys a statement honours: the catalog it was planned on, and
/// the tables its cascades have updated so far (the "same table twice" rule).
pub struct FkScope<'a> {
    catalog: &'a Catalog,
    /// The tables whose referenced columns an UPDATE (the statement's, or a
    /// cascade's) is changing right now, outermost first.
    updated: Vec<TableId>,
}

impl<'a> FkScope<'a> {
    /// A statement's scope: `None` when the plan carries no catalog (its
    /// table has neither side of a foreign key) or the session's
    /// `foreign_key_checks` is off.
    pub fn new(
        catalog: Option<&'a Arc<Catalog>>,
        ctx: &dyn EvalContext,
    ) -> Result<Option<FkScope<'a>>> {
        let Some(c) = catalog else {
            return Ok(None);
        };
        let checks = ctx.sys_var("foreign_key_checks")?;
        if checks.to_i64() == Some(0) {
            return Ok(None);
        }
        Ok(Some(FkScope {
            catalog: c,
            updated: Vec::new(),
        }))
    }
}

impl FkScope<'_> {
    /// Whether a foreign key references `table`.
    pub fn is_referenced(&self, table: &Table) -> bool {
        !self
            .catalog
            .children_of(&table.def.db, &table.def.name)
            .is_empty()
    }
}

/// `(db.child, CONSTRAINT ...)`: the part of 1451 / 1452 that names the constraint.
fn constraint_text(child: &TableDef, fk: &ForeignKeyDef) -> String {
    format!(
        "{}.{}, {}",
        quote(&child.db),
        quote(&child.name),
        constraint_clause(child, fk)
    )
}

/// MySQL's quoting of an identifier.
pub fn quote(n: &str) -> String {
    format!("`{}`", n.replace('`', "``"))
}

/// `CONSTRAINT `name` FOREIGN KEY (...) REFERENCES ... [ON DELETE ...] [ON
/// UPDATE ...]`, as SHOW CREATE TABLE and the 1451 / 1452 messages spell it.
/// The parent's database is named only when it is not the child's.
pub fn constraint_clause(child: &TableDef, fk: &ForeignKeyDef) -> String {
    let cols = fk
        .columns
        .iter()
        .map(|&c| quote(&child.columns[c].name))
        .collect::<Vec<_>>()
        .join(", ");
    let refs = fk
        .ref_columns
        .iter()
        .map(|c| quote(c))
        .collect::<Vec<_>>()
        .join(", ");
    let parent = if fk.ref_db == child.db {
        quote(&fk.ref_table)
    } else {
        format!("{}.{}", quote(&fk.ref_db), quote(&fk.ref_table))
    };
    let mut s = format!(
        "CONSTRAINT {} FOREIGN KEY ({cols}) REFERENCES {parent} ({refs})",
        quote(&fk.name)
    );
    if fk.on_delete != FkAction::NoAction {
        s.push_str(" ON DELETE ");
        s.push_str(fk.on_delete.sql());
    }
    if fk.on_update != FkAction::NoAction {
        s.push_str(" ON UPDATE ");
        s.push_str(fk.on_update.sql());
    }
    s
}

fn no_parent(child: &TableDef, fk: &ForeignKeyDef) -> Error {
    Error::ForeignKey {
        code: 1452,
        message: format!(
            "Cannot add or update a child row: a foreign key constraint fails ({})",
            constraint_text(child, fk)
        ),
    }
}

fn referenced(child: &TableDef, fk: &ForeignKeyDef) -> Error {
    Error::ForeignKey {
        code: 1451,
        message: format!(
            "Cannot delete or update a parent row: a foreign key constraint fails ({})",
            constraint_text(child, fk)
        ),
    }
}

/// How rows with given values in some columns are found: by primary key
/// (whole: a point; leading columns: a prefix) or by a secondary index's
/// leading columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyAccess {
    /// The columns are the whole primary key.
    PrimaryPoint,
    /// The columns lead the primary key.
    PrimaryPrefix,
    /// The columns lead secondary index `i` (position in `def.indexes`).
    Index(usize),
}

/// The key through which rows with values in `cols` (in order) are found, if
/// any: the primary key first, then the first index; `public` limits indexes
/// to those readers may use.
pub fn key_access(def: &TableDef, cols: &[usize], public: bool) -> Option<KeyAccess> {
    if !def.primary_key.is_empty() && def.primary_key.starts_with(cols) {
        return Some(if def.primary_key.len() == cols.len() {
            KeyAccess::PrimaryPoint
        } else {
            KeyAccess::PrimaryPrefix
        });
    }
    def.indexes
        .iter()
        .position(|ix| {
            (!public || ix.state.is_public()) && !ix.attrs.fulltext && ix.columns.starts_with(cols)
        })
        .map(KeyAccess::Index)
}

/// The parent's column positions for `fk`'s referenced names.
fn ref_positions(parent: &Table, fk: &ForeignKeyDef) -> Option<Vec<usize>> {
    fk.ref_columns.iter().map(|n| parent.column(n)).collect()
}

/// How the child side finds `fk`'s parent rows (invariant 2).
fn parent_access(parent: &Table, refs: &[usize]) -> Option<KeyAccess> {
    key_access(&parent.def, refs, false)
}

/// How the parent side finds `fk`'s child rows (invariant 1).
fn child_access(child: &Table, fk: &ForeignKeyDef) -> Option<KeyAccess> {
    key_access(&child.def, &fk.columns, false)
}

/// Encodes `values` as the leading key columns `cols` of `table`.
fn key_prefix(table: &Table, cols: &[usize], values: &[&Value]) -> Vec<u8> {
    let mut k = Vec::with_capacity(16);
    for (&c, v) in cols.iter().zip(values) {
        let col = &table.def.columns[c];
        crate::catalog::rows::encode_column_key(col, v, &mut k);
    }
    k
}

/// Whether `row` holds `values` in `cols`, as the key on them compares
/// (strings under each column's collation).
fn holds(table: &Table, cols: &[usize], row: &[Value], values: &[&Value]) -> bool {
    cols.iter().zip(values).all(|(&c, v)| {
        let coll = Some(table.def.columns[c].collation).filter(|x| !x.is_bytewise());
        compare_as(&row[c], v, coll) == Some(Ordering::Equal)
    })
}

/// Finds the rows of `table` holding `values` in `cols` through `access`,
/// each locked and read at its latest version, and hands them to `f` (pk,
/// row); `f` returns `false` to stop. A row that no longer holds the values
/// once locked is skipped.
fn for_each_holder(
    txn: &mut Transaction,
    table: &Table,
    cols: &[usize],
    values: &[&Value],
    access: KeyAccess,
    f: &mut dyn FnMut(&mut Transaction, Vec<u8>, Vec<Value>) -> Result<bool>,
) -> Result<()> {
    for_each_holder_in(
        txn,
        table,
        cols,
        values,
        access,
        Some(canyon_txn::LockMode::Exclusive),
        f,
    )
}

/// [`for_each_holder`] locking in `lock`: shared for a parent that must
/// stay (InnoDB's S lock on the parent record), none for the row check of
/// ALTER TABLE ADD FOREIGN KEY.
fn for_each_holder_in(
    txn: &mut Transaction,
    table: &Table,
    cols: &[usize],
    values: &[&Value],
    access: KeyAccess,
    lock: Option<canyon_txn::LockMode>,
    f: &mut dyn FnMut(&mut Transaction, Vec<u8>, Vec<Value>) -> Result<bool>,
) -> Result<()> {
    let def = &table.def;
    let prefix = key_prefix(table, cols, values);
    let mut row = Vec::new();
    let read = |txn: &mut Transaction, pk: &[u8]| -> Result<Option<Vec<u8>>> {
        if let Some(mode) = lock {
            crate::exec::dml::lock_row_in(txn, table, pk, mode)?;
            txn.get_locked(def.id, pk)
        } else {
            txn.get(def.id, pk, ReadMode::Current)
        }
    };
    if access == KeyAccess::PrimaryPoint {
        if let Some(bytes) = read(txn, &prefix)? {
            decode_table_row(table, &bytes, &mut row)?;
            f(txn, prefix, row)?;
        }
        return Ok(());
    }
    // Candidates first (a scan holds the transaction), then each one locked
    // and read again: it may have moved off the values meanwhile.
    let mut candidates: Vec<Vec<u8>> = Vec::new();
    let mut err = None;
    let mut visit = |pk: &[u8], bytes: &[u8]| {
        match decode_table_row(table, bytes, &mut row) {
            Ok(()) if holds(table, cols, &row, values) => candidates.push(pk.to_vec()),
            Ok(()) => {}
            Err(e) => {
                err = Some(e);
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    };
    match access {
        KeyAccess::Index(i) => txn.scan_index(
            def.id,
            def.indexes[i].id,
            &KeyRange::prefix(&prefix),
            false,
            ReadMode::Current,
            &mut |_k, pk, bytes| visit(pk, bytes),
        )?,
        _ => txn.scan(
            def.id,
            &KeyRange::prefix(&prefix),
            false,
            ReadMode::Current,
            &mut visit,
        )?,
    }
    if let Some(e) = err {
        return Err(e);
    }
    let mut row = Vec::new();
    for pk in candidates {
        let Some(bytes) = read(txn, &pk)? else {
            continue;
        };
        decode_table_row(table, &bytes, &mut row)?;
        if holds(table, cols, &row, values) && !f(txn, pk, std::mem::take(&mut row))? {
            return Ok(());
        }
    }
    Ok(())
}

/// Child side: `row` is about to be written to `child` — inserted (`old` is
/// `None`) or updated from `old`. Each foreign key whose columns are all
/// non-NULL and (for an update) changed must find its parent row, which is
/// locked for the rest of the transaction. 1452 otherwise. A row of a
/// self-referencing table that references itself is its own parent (InnoDB
/// finds it because it checks after inserting the clustered record; checking
/// before the write lets INSERT IGNORE skip the row without undoing it).
pub(crate) fn check_parents(
    txn: &mut Transaction,
    scope: &FkScope<'_>,
    child: &Table,
    row: &[Value],
    old: Option<OldRow<'_>>,
) -> Result<()> {
    for fk in &child.def.foreign_keys {
        let values: Vec<&Value> = fk.columns.iter().map(|&c| &row[c]).collect();
        if values.iter().any(|v| v.is_null()) {
            continue;
        }
        if let Some(old) = old {
            if fk.columns.iter().all(|&c| *old.column(row, c) == row[c]) {
                continue;
            }
        }
        let parent = scope.catalog.table(&fk.ref_db, &fk.ref_table);
        let own_parent = parent.filter(|p| p.def.id == child.def.id);
        if let Some(refs) = own_parent.and_then(|p| ref_positions(p, fk)) {
            let own: Vec<&Value> = refs.iter().map(|&c| &row[c]).collect();
            if holds(child, &fk.columns, row, &own) {
                continue;
            }
        }
        let found = match parent {
            None => false,
            Some(parent) => {
                let refs = ref_positions(parent, fk);
                let access = refs.as_deref().and_then(|r| parent_access(parent, r));
                match (refs, access) {
                    (Some(refs), Some(access)) => {
                        let mut found = false;
                        for_each_holder_in(
                            txn,
                            parent,
                            &refs,
                            &values,
                            access,
                            Some(canyon_txn::LockMode::Shared),
                            &mut |_, _, _| {
                                found = true;
                                Ok(false)
                            },
                        )?;
                        found
                    }
                    _ => false,
                }
            }
        };
        if !found {
            return Err(no_parent(&child.def, fk));
        }
    }
    Ok(())
}

/// [`on_parent_change`] for an update of `table`'s row: the table counts as
/// updated while the cascade runs (the "same table twice" rule).
pub(crate) fn on_parent_update(
    txn: &mut Transaction,
    scope: &mut FkScope<'_>,
    table: &Table,
    old: OldRow<'_>,
    new: &[Value],
    depth: usize,
) -> Result<()> {
    if scope
        .catalog
        .children_of(&table.def.db, &table.def.name)
        .is_empty()
    {
        return Ok(());
    }
    scope.updated.push(table.def.id);
    let r = on_parent_change(txn, scope, table, old, Some(new), depth);
    scope.updated.pop();
    r
}

/// Parent side: `old` of `parent` was just deleted (`new` is
/// `None`) or replaced by `new`. Every foreign key referencing `parent` whose
/// referenced columns changed acts on the child rows holding the old values.
pub(crate) fn on_parent_change(
    txn: &mut Transaction,
    scope: &mut FkScope<'_>,
    parent: &Table,
    old: OldRow<'_>,
    new: Option<&[Value]>,
    depth: usize,
) -> Result<()> {
    let children = scope
        .catalog
        .children_of(&parent.def.db, &parent.def.name)
        .to_vec();
    if children.is_empty() {
        return Ok(());
    }
    // The old row's column `c` (an update passes only the replaced columns).
    let old_value = |c: usize| -> &Value {
        match new {
            Some(n) => old.column(n, c),
            None => match old {
                OldRow::Row(r) => &r[c],
                OldRow::Replaced(_) => &Value::Null,
            },
        }
    };
    for (db, name) in children {
        let Some(child) = scope.catalog.table(&db, &name).cloned() else {
            continue;
        };
        for fk in &child.def.foreign_keys {
            if fk.ref_db != parent.def.db || fk.ref_table != parent.def.name {
                continue;
            }
            let Some(refs) = ref_positions(parent, fk) else {
                continue;
            };
            let olds: Vec<&Value> = refs.iter().map(|&c| old_value(c)).collect();
            if olds.iter().any(|v| v.is_null()) {
                continue;
            }
            let action = match new {
                None => fk.on_delete,
                Some(n) => {
                    if refs.iter().all(|&c| *old_value(c) == n[c]) {
                        continue;
                    }
                    fk.on_update
                }
            };
            let Some(access) = child_access(&child, fk) else {
                return Err(Error::Internal(format!(
                    "foreign key {} has no index on its columns",
                    fk.name
                )));
            };
            if depth >= MAX_CASCADE_DEPTH && matches!(action, FkAction::Cascade | FkAction::SetNull)
            {
                return Err(Error::ForeignKey {
                    code: 3008,
                    message: format!(
                        "Foreign key cascade delete/update exceeds max depth of {MAX_CASCADE_DEPTH}."
                    ),
                });
            }
            let olds: Vec<Value> = olds.into_iter().cloned().collect();
            let old_refs: Vec<&Value> = olds.iter().collect();
            let mut result = Ok(());
            for_each_holder(
                txn,
                &child,
                &fk.columns,
                &old_refs,
                access,
                &mut |txn, pk, row| {
                    result =
                        act_on_child(txn, scope, &child, fk, &refs, pk, row, new, action, depth);
                    Ok(result.is_ok())
                },
            )?;
            result?;
        }
    }
    Ok(())
}

/// Applies `action` to one child row (locked, at its latest version).
#[allow(clippy::too_many_arguments)] // one constraint's action on one row, spelled out
fn act_on_child(
    txn: &mut Transaction,
    scope: &mut FkScope<'_>,
    child: &Arc<Table>,
    fk: &ForeignKeyDef,
    refs: &[usize],
    pk: Vec<u8>,
    row: Vec<Value>,
    new_parent: Option<&[Value]>,
    action: FkAction,
    depth: usize,
) -> Result<()> {
    match (action, new_parent) {
        (FkAction::Restrict | FkAction::NoAction, _) => Err(referenced(&child.def, fk)),
        (FkAction::Cascade, None) => {
            txn.delete(child.def.id, pk, index_keys(child, &row));
            crate::exec::journal::log_delete(txn, child, &row);
            on_parent_change(txn, scope, child, OldRow::Row(&row), None, depth + 1)
        }
        (FkAction::Cascade | FkAction::SetNull, new) => {
            if new.is_some() && scope.updated.contains(&child.def.id) {
                // MySQL: an ON UPDATE CASCADE / SET NULL that recurses into a
                // table this cascade already updated acts like RESTRICT.
                return Err(referenced(&child.def, fk));
            }
            let mut changed = row.clone();
            for (j, &c) in fk.columns.iter().enumerate() {
                changed[c] = match (action, new) {
                    (FkAction::Cascade, Some(n)) => n[refs[j]].clone(),
                    _ => Value::Null,
                };
            }
            write_update(
                txn,
                child,
                pk,
                OldRow::Row(&row),
                &changed,
                Some(scope),
                depth + 1,
            )
        }
    }
}

/// The row check of ALTER TABLE ADD FOREIGN KEY: the first row of `child`
/// that has no parent under one of the constraints `names`, as its 1452.
/// Reads the latest committed rows without locks (the constraints are
/// already enforced on every writer); each distinct value is looked up once.
pub(crate) fn find_orphan(
    mgr: &Arc<canyon_txn::TxnManager>,
    cat: &Catalog,
    child: &Table,
    names: &[String],
) -> Result<Option<Error>> {
    let session = mgr.session();
    let mut txn = session.begin(canyon_txn::IsolationLevel::ReadCommitted);
    txn.begin_statement();
    let r = (|| -> Result<Option<Error>> {
        for fk in child
            .def
            .foreign_keys
            .iter()
            .filter(|f| names.contains(&f.name))
        {
            let Some(parent) = cat.table(&fk.ref_db, &fk.ref_table) else {
                return Ok(Some(no_parent(&child.def, fk)));
            };
            let Some(refs) = ref_positions(parent, fk) else {
                return Ok(Some(no_parent(&child.def, fk)));
            };
            let Some(access) = parent_access(parent, &refs) else {
                return Ok(Some(no_parent(&child.def, fk)));
            };
            // Distinct non-NULL values, by their key bytes in the parent.
            let mut distinct: std::collections::BTreeMap<Vec<u8>, Vec<Value>> = Default::default();
            let mut row = Vec::new();
            let mut err = None;
            txn.scan(
                child.def.id,
                &KeyRange::all(),
                false,
                ReadMode::Current,
                &mut |_pk, bytes| {
                    if let Err(e) = decode_table_row(child, bytes, &mut row) {
                        err = Some(e);
                        return ControlFlow::Break(());
                    }
                    let vals: Vec<Value> = fk.columns.iter().map(|&c| row[c].clone()).collect();
                    if vals.iter().any(Value::is_null) {
                        return ControlFlow::Continue(());
                    }
                    let refs_vals: Vec<&Value> = vals.iter().collect();
                    distinct
                        .entry(key_prefix(parent, &refs, &refs_vals))
                        .or_insert(vals);
                    ControlFlow::Continue(())
                },
            )?;
            if let Some(e) = err {
                return Err(e);
            }
            for vals in distinct.values() {
                let refs_vals: Vec<&Value> = vals.iter().collect();
                let mut found = false;
                for_each_holder_in(
                    &mut txn,
                    parent,
                    &refs,
                    &refs_vals,
                    access,
                    None,
                    &mut |_, _, _| {
                        found = true;
                        Ok(false)
                    },
                )?;
                if !found {
                    return Ok(Some(no_parent(&child.def, fk)));
                }
            }
        }
        Ok(None)
    })();
    txn.rollback();
    r
}
