//! FOREIGN KEY constraints at DDL time: the checks a new constraint passes
//! (names, the parent, its key, column types; invariants 1–3 of
//! `crate::exec::foreign`, whose essay describes the whole design) and what
//! an existing one forbids (dropping or truncating a parent, dropping a
//! column or index a constraint needs). The row checks of writes are in
//! `crate::exec::foreign`.

use crate::catalog::{Catalog, ColumnDef, FkAction, ForeignKeyDef, TableDef};
use crate::ddl::alter::AlterOp;
use crate::ddl::NewForeignKey;
use crate::exec::foreign::*;
use crate::types::SqlType;
use canyon_common::{Error, Result};

fn fk_error(code: u16, message: String) -> Error {
    Error::ForeignKey { code, message }
}

/// Whether a child column may reference a parent column (invariant 3):
/// integers of the same size and sign, the same DECIMAL, both FLOAT or both
/// DOUBLE, character strings of one collation, binary strings, the same
/// temporal type. String lengths may differ, as in InnoDB.
fn compatible(a: &ColumnDef, b: &ColumnDef) -> bool {
    use SqlType as T;
    match (a.ty, b.ty) {
        (x, y) if x.is_integer() || y.is_integer() => x == y,
        (T::Decimal { .. }, T::Decimal { .. }) => a.ty == b.ty,
        (T::Float { .. }, T::Float { .. }) | (T::Double { .. }, T::Double { .. }) => true,
        (x, y) if x.is_string() && y.is_string() => {
            x.is_binary() == y.is_binary() && (x.is_binary() || a.collation == b.collation)
        }
        (T::Date, T::Date)
        | (T::DateTime(_), T::DateTime(_))
        | (T::Timestamp(_), T::Timestamp(_)) => true,
        _ => false,
    }
}

/// The number of a generated name `<table>_ibfk_<n>`.
fn generated_number(table: &str, name: &str) -> Option<u32> {
    name.strip_prefix(table)?
        .strip_prefix("_ibfk_")?
        .parse()
        .ok()
}

/// Checks new constraints of `child` (its definition as it will be, without
/// them) against the catalog and turns them into definitions: names given
/// or generated (`<table>_ibfk_<n>`, past the highest number in use, as
/// InnoDB numbers them), unique in the database (1826); the parent must
/// exist (1824) unless `checks` is off, hold the referenced columns (3734)
/// under a key that leads with them (1822), in compatible types (3780); SET
/// NULL needs nullable columns (1830). A table may reference itself.
pub fn resolve_new(
    cat: &Catalog,
    child: &TableDef,
    new: Vec<NewForeignKey>,
    checks: bool,
) -> Result<Vec<ForeignKeyDef>> {
    let mut out: Vec<ForeignKeyDef> = Vec::with_capacity(new.len());
    let mut next = child
        .foreign_keys
        .iter()
        .filter_map(|f| generated_number(&child.name, &f.name))
        .max()
        .unwrap_or(0);
    for nf in new {
        let name = match nf.name {
            Some(n) => n,
            None => {
                next += 1;
                format!("{}_ibfk_{next}", child.name)
            }
        };
        let taken_here = child
            .foreign_keys
            .iter()
            .chain(&out)
            .any(|f| f.name.eq_ignore_ascii_case(&name));
        let taken_elsewhere = cat.databases.get(&child.db).is_some_and(|db| {
            db.tables.values().any(|t| {
                t.def.id != child.id
                    && t.def
                        .foreign_keys
                        .iter()
                        .any(|f| f.name.eq_ignore_ascii_case(&name))
            })
        });
        if taken_here || taken_elsewhere {
            return Err(fk_error(
                1826,
                format!("Duplicate foreign key constraint name '{name}'"),
            ));
        }
        let ref_db = nf.ref_db.unwrap_or_else(|| child.db.clone());
        let parent: Option<&TableDef> = if ref_db == child.db && nf.ref_table == child.name {
            Some(child)
        } else {
            cat.table(&ref_db, &nf.ref_table).map(|t| &t.def)
        };
        if child.partitioning.is_some() || parent.is_some_and(|p| p.partitioning.is_some()) {
            return Err(crate::ddl::partition::foreign_keys_refused());
        }
        for &c in &nf.columns {
            let act = |a: FkAction| a == FkAction::SetNull;
            if (act(nf.on_delete) || act(nf.on_update)) && !child.columns[c].nullable {
                return Err(fk_error(
                    1830,
                    format!(
                        "Column '{}' cannot be NOT NULL: needed in a foreign key constraint '{name}' SET NULL",
                        child.columns[c].name
                    ),
                ));
            }
        }
        match parent {
            None if checks => {
                return Err(fk_error(
                    1824,
                    format!("Failed to open the referenced table '{}'", nf.ref_table),
                ))
            }
            None => {}
            Some(p) => {
                let mut refs = Vec::with_capacity(nf.ref_columns.len());
                for rc in &nf.ref_columns {
                    let Some(pos) = p
                        .columns
                        .iter()
                        .position(|c| c.name.eq_ignore_ascii_case(rc))
                    else {
                        return Err(fk_error(
                            3734,
                            format!(
                                "Failed to add the foreign key constraint. Missing column '{rc}' for constraint '{name}' in the referenced table '{}'",
                                nf.ref_table
                            ),
                        ));
                    };
                    refs.push(pos);
                }
                if key_access(p, &refs, false).is_none() {
                    return Err(fk_error(
                        1822,
                        format!(
                            "Failed to add the foreign key constraint. Missing index for constraint '{name}' in the referenced table '{}'",
                            nf.ref_table
                        ),
                    ));
                }
                for (&c, &r) in nf.columns.iter().zip(&refs) {
                    if !compatible(&child.columns[c], &p.columns[r]) {
                        return Err(fk_error(
                            3780,
                            format!(
                                "Referencing column '{}' and referenced column '{}' in foreign key constraint '{name}' are incompatible.",
                                child.columns[c].name, p.columns[r].name
                            ),
                        ));
                    }
                }
            }
        }
        // Stored with the parent's spelling of its columns where known.
        let ref_columns = match parent {
            Some(p) => nf
                .ref_columns
                .iter()
                .map(|rc| {
                    p.columns
                        .iter()
                        .find(|c| c.name.eq_ignore_ascii_case(rc))
                        .map_or_else(|| rc.clone(), |c| c.name.clone())
                })
                .collect(),
            None => nf.ref_columns,
        };
        out.push(ForeignKeyDef {
            name,
            columns: nf.columns,
            ref_db,
            ref_table: nf.ref_table,
            ref_columns,
            on_delete: nf.on_delete,
            on_update: nf.on_update,
        });
    }
    Ok(out)
}

/// The first constraint of another table that references `db`.`name`, with
/// its child, skipping children in `except` (tables dropped together).
fn first_reference<'c>(
    cat: &'c Catalog,
    db: &str,
    name: &str,
    except: &[(String, String)],
) -> Option<(&'c TableDef, &'c ForeignKeyDef)> {
    for (cdb, cname) in cat.children_of(db, name) {
        if (cdb == db && cname == name) || except.contains(&(cdb.clone(), cname.clone())) {
            continue;
        }
        let Some(child) = cat.table(cdb, cname) else {
            continue;
        };
        if let Some(fk) = child
            .def
            .foreign_keys
            .iter()
            .find(|f| f.ref_db == db && f.ref_table == name)
        {
            return Some((&child.def, fk));
        }
    }
    None
}

/// DROP TABLE of a table another table references: 3730 (MySQL 8; MariaDB
/// says 1451), unless the child is dropped by the same statement.
pub fn check_drop(cat: &Catalog, db: &str, name: &str, dropped: &[(String, String)]) -> Result<()> {
    match first_reference(cat, db, name, dropped) {
        None => Ok(()),
        Some((child, fk)) => Err(fk_error(
            3730,
            format!(
                "Cannot drop table '{name}' referenced by a foreign key constraint '{}' on table '{}'.",
                fk.name, child.name
            ),
        )),
    }
}

/// TRUNCATE of a table another table references: 1701.
pub fn check_truncate(cat: &Catalog, db: &str, name: &str) -> Result<()> {
    match first_reference(cat, db, name, &[]) {
        None => Ok(()),
        Some((child, fk)) => {
            let mut qualified = fk.clone();
            qualified.on_delete = FkAction::NoAction;
            qualified.on_update = FkAction::NoAction;
            let clause = constraint_clause(child, &qualified).replacen(
                &format!("REFERENCES {}", quote(&fk.ref_table)),
                &format!("REFERENCES {}.{}", quote(&fk.ref_db), quote(&fk.ref_table)),
                1,
            );
            Err(fk_error(
                1701,
                format!(
                    "Cannot truncate a table referenced in a foreign key constraint ({}.{}, {clause})",
                    quote(&child.db),
                    quote(&child.name)
                ),
            ))
        }
    }
}

/// What an ALTER TABLE of `before` may not do to foreign keys: drop an
/// index (or the primary key) a constraint needs (1553), drop a column a
/// constraint of this table (1828) or of a child (1829) uses, give a column
/// of a constraint a type the other side's column is incompatible with
/// (3780, as MySQL 8 checks MODIFY / CHANGE). Constraints the same ALTER
/// drops do not count.
pub(crate) fn check_alter(cat: &Catalog, before: &TableDef, ops: &[AlterOp]) -> Result<()> {
    let mut dropped_columns = Vec::new();
    let mut dropped_indexes = Vec::new();
    let mut changed = Vec::new();
    let mut drops_primary = false;
    let mut before = before.clone();
    for op in ops {
        match op {
            AlterOp::DropColumn { name, .. } => dropped_columns.push(name.clone()),
            AlterOp::DropIndex { name } if name.eq_ignore_ascii_case("PRIMARY") => {
                drops_primary = true
            }
            AlterOp::DropPrimaryKey => drops_primary = true,
            AlterOp::DropIndex { name } => dropped_indexes.push(name.clone()),
            AlterOp::DropForeignKey { name } => before
                .foreign_keys
                .retain(|f| !f.name.eq_ignore_ascii_case(name)),
            AlterOp::ChangeColumn { old, column, .. } => changed.push((old.clone(), column)),
            _ => {}
        }
    }
    let before = &before;
    for (old, column) in changed {
        check_changed_type(cat, before, &old, column)?;
    }
    if drops_primary && !before.primary_key.is_empty() {
        let mut after = before.clone();
        after.primary_key.clear();
        if keys_needed(cat, before, &after) {
            return Err(fk_error(
                1553,
                "Cannot drop index 'PRIMARY': needed in a foreign key constraint".into(),
            ));
        }
    }
    if dropped_columns.is_empty() && dropped_indexes.is_empty() {
        return Ok(());
    }
    for c in &dropped_columns {
        let Some(pos) = before
            .columns
            .iter()
            .position(|x| x.name.eq_ignore_ascii_case(c))
        else {
            continue;
        };
        if let Some(fk) = before
            .foreign_keys
            .iter()
            .find(|f| f.columns.contains(&pos))
        {
            return Err(fk_error(
                1828,
                format!(
                    "Cannot drop column '{}': needed in a foreign key constraint '{}'",
                    before.columns[pos].name, fk.name
                ),
            ));
        }
        for (cdb, cname) in cat.children_of(&before.db, &before.name) {
            let Some(child) = cat.table(cdb, cname) else {
                continue;
            };
            if let Some(fk) = child.def.foreign_keys.iter().find(|f| {
                f.ref_db == before.db
                    && f.ref_table == before.name
                    && f.ref_columns.iter().any(|r| r.eq_ignore_ascii_case(c))
            }) {
                return Err(fk_error(
                    1829,
                    format!(
                        "Cannot drop column '{}': needed in a foreign key constraint '{}' of table {}.{}",
                        before.columns[pos].name,
                        fk.name,
                        quote(&child.def.db),
                        quote(&child.def.name)
                    ),
                ));
            }
        }
    }
    for ix in &dropped_indexes {
        let Some(pos) = before
            .indexes
            .iter()
            .position(|x| x.name.eq_ignore_ascii_case(ix))
        else {
            continue;
        };
        let mut after = before.clone();
        after.indexes.remove(pos);
        if keys_needed(cat, before, &after) {
            return Err(fk_error(
                1553,
                format!(
                    "Cannot drop index '{}': needed in a foreign key constraint",
                    before.indexes[pos].name
                ),
            ));
        }
    }
    Ok(())
}

/// Whether a constraint of `before` (as the child) or of a child of it
/// finds no key in `after` to check through.
fn keys_needed(cat: &Catalog, before: &TableDef, after: &TableDef) -> bool {
    {
        let child_needs = before
            .foreign_keys
            .iter()
            .any(|f| key_access(after, &f.columns, false).is_none());
        let parent_needs = cat
            .children_of(&before.db, &before.name)
            .iter()
            .any(|(d, n)| {
                cat.table(d, n).is_some_and(|child| {
                    child.def.foreign_keys.iter().any(|f| {
                        f.ref_db == before.db && f.ref_table == before.name && {
                            let refs: Option<Vec<usize>> = f
                                .ref_columns
                                .iter()
                                .map(|r| {
                                    after
                                        .columns
                                        .iter()
                                        .position(|c| c.name.eq_ignore_ascii_case(r))
                                })
                                .collect();
                            refs.is_some_and(|r| key_access(after, &r, false).is_none())
                        }
                    })
                })
            });
        child_needs || parent_needs
    }
}

/// 3780 when MODIFY / CHANGE of column `old` to `column` leaves it
/// incompatible with the column on the other side of a constraint.
fn check_changed_type(
    cat: &Catalog,
    before: &TableDef,
    old: &str,
    column: &ColumnDef,
) -> Result<()> {
    let Some(pos) = before
        .columns
        .iter()
        .position(|c| c.name.eq_ignore_ascii_case(old))
    else {
        return Ok(());
    };
    let incompatible = |fk: &str, child: &ColumnDef, parent: &ColumnDef| {
        fk_error(
            3780,
            format!(
                "Referencing column '{}' and referenced column '{}' in foreign key constraint '{fk}' are incompatible.",
                child.name, parent.name
            ),
        )
    };
    for fk in &before.foreign_keys {
        let Some(i) = fk.columns.iter().position(|&c| c == pos) else {
            continue;
        };
        let parent = if fk.ref_db == before.db && fk.ref_table == before.name {
            Some(before)
        } else {
            cat.table(&fk.ref_db, &fk.ref_table).map(|t| &t.def)
        };
        let Some(p) = parent.and_then(|p| {
            p.columns
                .iter()
                .find(|c| c.name.eq_ignore_ascii_case(&fk.ref_columns[i]))
        }) else {
            continue;
        };
        if !compatible(column, p) {
            return Err(incompatible(&fk.name, column, p));
        }
    }
    for (cdb, cname) in cat.children_of(&before.db, &before.name) {
        let Some(child) = cat.table(cdb, cname) else {
            continue;
        };
        for fk in child
            .def
            .foreign_keys
            .iter()
            .filter(|f| f.ref_db == before.db && f.ref_table == before.name)
        {
            for (i, r) in fk.ref_columns.iter().enumerate() {
                if !r.eq_ignore_ascii_case(old) {
                    continue;
                }
                let c = &child.def.columns[fk.columns[i]];
                if !compatible(c, column) {
                    return Err(incompatible(&fk.name, c, column));
                }
            }
        }
    }
    Ok(())
}
