//! What one ALTER TABLE does to a table definition: each operation applied
//! to a `TableDef` (columns and their slots, defaults for the rows already
//! stored, indexes, keys, foreign keys), with the checks MySQL makes, and the
//! questions the online protocol asks about a list of operations (does it
//! rewrite the rows, does it adjust stored values). Pure functions of the
//! definition: no storage, no catalog, no waiting. `crate::ddl::alter` runs
//! them inside its online protocol (its module doc explains slots and the
//! phases), `crate::ddl::rewrite` for a table rewrite.

use super::alter::{AlterOp, ColumnPosition};
use crate::catalog::engine::take_id;
use crate::catalog::{ColumnDef, DefaultValue, IndexDef, IndexState, TableDef};
use crate::types::SqlType;
use canyon_common::{Error, Result};
use canyon_txn::IndexId;

/// What the operations of one ALTER changed besides the definition.
#[derive(Default)]
pub(super) struct Changes {
    pub(super) dropped: Vec<IndexId>,
    pub(super) added: Vec<IndexId>,
    pub(super) rename: Option<(String, String)>,
    /// Foreign keys to add (checked against the catalog after every
    /// operation is applied) and whether to check existing rows.
    pub(super) foreign_keys: Vec<crate::ddl::NewForeignKey>,
    pub(super) check_rows: bool,
    /// MODIFY / CHANGE to check against the stored rows: (column name in
    /// the new definition, previous definition).
    pub(super) changed: Vec<(String, ColumnDef)>,
    /// The operations run as a table rewrite (`crate::ddl::rewrite`): the
    /// forms that change the stored rows are allowed.
    pub(super) rewrite: bool,
    /// The table holds no row (known only when an ADD COLUMN asks).
    pub(super) table_empty: bool,
}

/// Step 1 of a table rewrite (`crate::ddl::rewrite`): applies `ops` to `def`
/// with the forms that change the stored rows allowed. Every column keeps
/// its slot through the operations (an explicit slot map), so the caller
/// can tell where each column of the result came from; index ids are
/// placeholders the caller replaces. `empty`: the table holds no row.
pub(crate) fn apply_rewrite(def: &mut TableDef, ops: Vec<AlterOp>, empty: bool) -> Result<()> {
    explicit_slots(def);
    let mut ch = Changes {
        rewrite: true,
        table_empty: empty,
        ..Changes::default()
    };
    let mut next_id = 0;
    let now = chrono::Local::now().naive_local();
    for op in ops {
        apply(def, op, &mut next_id, &mut ch, now)?;
    }
    Ok(())
}

/// Whether `op` adds a NOT NULL date / time column without DEFAULT (whose
/// implicit default for the rows already stored is the zero date).
pub(super) fn needs_zero_date(op: &AlterOp) -> bool {
    matches!(op, AlterOp::AddColumn { column, .. }
        if !column.nullable
            && column.default.is_none()
            && matches!(column.ty, SqlType::Date | SqlType::DateTime(_) | SqlType::Timestamp(_)))
}

/// Whether `ops` change the stored form of the rows of the table defined by
/// `def`, so that the ALTER runs as a table rewrite: a new primary key (or
/// none), a column's values in another stored form (`StoredForm`), a
/// primary-key column dropped, an AUTO_INCREMENT column added or made.
pub(crate) fn needs_rewrite(def: &TableDef, ops: &[AlterOp]) -> bool {
    ops.iter().any(|op| match op {
        AlterOp::AddPrimaryKey { .. } | AlterOp::DropPrimaryKey => true,
        AlterOp::DropIndex { name } => name.eq_ignore_ascii_case("PRIMARY"),
        // A generated column's values are computed for every stored row.
        AlterOp::AddColumn { column, .. } => {
            column.auto_increment || column.attrs.generated.is_some()
        }
        AlterOp::DropColumn { name, .. } => {
            column_position(def, name).is_some_and(|p| def.primary_key.contains(&p))
        }
        // So is a column made AUTO_INCREMENT: its 0s and NULLs are numbered.
        AlterOp::ChangeColumn { old, column, .. } => column_position(def, old).is_some_and(|p| {
            stored_form(&def.columns[p]) != stored_form(column)
                || (column.auto_increment && !def.columns[p].auto_increment)
        }),
        // Only rows numbered by hidden row ids can be put in another order.
        AlterOp::OrderBy(_) => def.primary_key.is_empty(),
        _ => false,
    })
}

/// Whether MODIFY / CHANGE give a column another type or NOT NULL, in an
/// ALTER a table rewrite can run. Outside strict mode such an ALTER is a
/// rewrite even between columns of one stored form: the rewrite stores a
/// value the new definition refuses adjusted, with MySQL's warning (a
/// negative FLOAT clipped to 0 for UNSIGNED, 1264), where the in-place path
/// (`Engine::check_changed_columns`) can only fail, as strict mode does.
pub(super) fn adjusts_values(def: &TableDef, ops: &[AlterOp]) -> bool {
    let rewritable = def.partitioning.is_none()
        && !ops.iter().any(|op| {
            matches!(
                op,
                AlterOp::RenameTo { .. }
                    | AlterOp::AddForeignKey { .. }
                    | AlterOp::SetPartitioning(_)
            )
        });
    rewritable
        && ops.iter().any(|op| match op {
            AlterOp::ChangeColumn { old, column, .. } => {
                column_position(def, old).is_some_and(|p| {
                    let cur = &def.columns[p];
                    cur.ty != column.ty || (cur.nullable && !column.nullable)
                })
            }
            _ => false,
        })
}

/// MySQL's 1075 (InnoDB's rule): at most one AUTO_INCREMENT column, and it
/// leads the primary key or a secondary index.
pub(crate) fn check_auto_key(def: &TableDef) -> Result<()> {
    let autos: Vec<usize> = def
        .columns
        .iter()
        .enumerate()
        .filter(|(_, c)| c.auto_increment)
        .map(|(i, _)| i)
        .collect();
    let keyed = |a: usize| {
        def.primary_key.first() == Some(&a)
            || def.indexes.iter().any(|i| i.columns.first() == Some(&a))
    };
    if autos.len() > 1 || autos.first().is_some_and(|&a| !keyed(a)) {
        return Err(Error::Sql {
            code: 1075,
            sqlstate: *b"42000",
            message: "Incorrect table definition; there can be only one auto column \
                      and it must be defined as a key"
                .into(),
        });
    }
    Ok(())
}

/// The form a column's values take in a stored row and its keys. MODIFY /
/// CHANGE keep the rows as they are only between columns of one form (INT to
/// BIGINT, VARCHAR(10) to VARCHAR(20) in one collation, NULL to NOT NULL);
/// any other change would need a table rewrite (refused with 1235).
#[derive(Debug, PartialEq, Eq)]
enum StoredForm {
    Signed,
    Unsigned,
    Double,
    Decimal(u8),
    Text(crate::types::collation::Collation),
    Bytes,
    Json,
    /// TIME(fsp) and whether its keys hold its value (`time_key_ordered`).
    Time(u8, bool),
    Date,
    /// DATETIME with its fsp: a change of fsp rounds the stored values (as
    /// MySQL does), so rewrites the rows.
    DateTime(u8),
    /// TIMESTAMP with its fsp: it stores UTC instants, so a change from or
    /// to DATETIME converts through the session's time zone (a rewrite).
    Timestamp(u8),
}

fn stored_form(c: &ColumnDef) -> StoredForm {
    match c.ty {
        t if t.is_integer() && t.is_unsigned() => StoredForm::Unsigned,
        t if t.is_integer() => StoredForm::Signed,
        SqlType::Bit(_) | SqlType::Year => StoredForm::Unsigned,
        SqlType::Float { .. } | SqlType::Double { .. } => StoredForm::Double,
        SqlType::Decimal { scale, .. } => StoredForm::Decimal(scale),
        SqlType::Char(_)
        | SqlType::VarChar(_)
        | SqlType::Text(_)
        | SqlType::Enum(_)
        | SqlType::Set(_) => StoredForm::Text(c.collation),
        SqlType::Binary(_) | SqlType::VarBinary(_) | SqlType::Blob(_) => StoredForm::Bytes,
        SqlType::Json => StoredForm::Json,
        SqlType::Time(f) => StoredForm::Time(f, c.attrs.time_key_ordered),
        SqlType::Date => StoredForm::Date,
        SqlType::DateTime(f) => StoredForm::DateTime(f),
        SqlType::Timestamp(f) => StoredForm::Timestamp(f),
        // Integer types are matched by the guards above.
        SqlType::TinyInt { .. }
        | SqlType::SmallInt { .. }
        | SqlType::MediumInt { .. }
        | SqlType::Int { .. }
        | SqlType::BigInt { .. } => StoredForm::Signed,
    }
}

fn column_position(def: &TableDef, name: &str) -> Option<usize> {
    def.columns
        .iter()
        .position(|c| c.name.eq_ignore_ascii_case(name))
}

/// Switches an identity layout to an explicit slot map before a column op.
fn explicit_slots(def: &mut TableDef) {
    if def.slots.is_empty() {
        def.slots = (0..def.columns.len() as u32).collect();
        def.slot_count = def.columns.len() as u32;
    }
}

/// Back to the identity layout when the map is one (e.g. ADD COLUMN at the end
/// of a table no ALTER reshaped): rows then need no map.
pub(super) fn normalize_slots(def: &mut TableDef) {
    let n = def.columns.len();
    if !def.slots.is_empty()
        && def.slot_count as usize == n
        && def.slots.iter().enumerate().all(|(i, &s)| s as usize == i)
    {
        def.slots.clear();
        def.slot_count = 0;
    }
}

/// What rows stored before ADD COLUMN read the column as. `empty`: the table
/// holds no row (then a NOT NULL date column without DEFAULT, whose implicit
/// default is the zero date Canyon cannot store, is accepted: no row reads it).
fn added_default(col: &ColumnDef, now: chrono::NaiveDateTime, empty: bool) -> Result<DefaultValue> {
    Ok(match &col.default {
        // A TIMESTAMP holds the instant: the rows read the UTC time now.
        Some(DefaultValue::CurrentTimestamp) if matches!(col.ty, SqlType::Timestamp(_)) => {
            DefaultValue::Literal(
                chrono::Utc::now()
                    .naive_utc()
                    .format("%Y-%m-%d %H:%M:%S")
                    .to_string(),
            )
        }
        Some(DefaultValue::CurrentTimestamp) => {
            DefaultValue::Literal(now.format("%Y-%m-%d %H:%M:%S").to_string())
        }
        Some(d) => d.clone(),
        None if col.nullable => DefaultValue::Null,
        None => match col.ty {
            SqlType::Date | SqlType::DateTime(_) | SqlType::Timestamp(_) if empty => {
                DefaultValue::Null
            }
            SqlType::Date | SqlType::DateTime(_) | SqlType::Timestamp(_) => {
                // MySQL fills the stored rows with the zero date, which
                // strict mode (NO_ZERO_DATE) refuses as MySQL 8's COPY does.
                let zero = if col.ty == SqlType::Date {
                    "0000-00-00"
                } else {
                    "0000-00-00 00:00:00"
                };
                if crate::types::datetime::zero_dates()
                    != crate::types::datetime::ZeroDates::Refused
                {
                    return Ok(DefaultValue::Literal(zero.to_string()));
                }
                return Err(Error::StrictModeError {
                    code: 1292,
                    message: format!(
                        "Incorrect {} value: '{zero}' for column '{}' at row 1",
                        if col.ty == SqlType::Date {
                            "date"
                        } else {
                            "datetime"
                        },
                        col.name
                    ),
                });
            }
            SqlType::Char(_)
            | SqlType::VarChar(_)
            | SqlType::Text(_)
            | SqlType::Binary(_)
            | SqlType::VarBinary(_)
            | SqlType::Blob(_) => DefaultValue::Literal(String::new()),
            // MySQL: a NOT NULL ENUM's implicit default is its first member.
            SqlType::Enum(m) => {
                DefaultValue::Literal(m.values.first().cloned().unwrap_or_default())
            }
            SqlType::Set(_) => DefaultValue::Literal(String::new()),
            _ => DefaultValue::Number("0".into()),
        },
    })
}

fn shift_columns(def: &mut TableDef, f: impl Fn(usize) -> usize) {
    for c in def.primary_key.iter_mut() {
        *c = f(*c);
    }
    for ix in def.indexes.iter_mut() {
        for c in ix.columns.iter_mut() {
            *c = f(*c);
        }
    }
    for fk in def.foreign_keys.iter_mut() {
        for c in fk.columns.iter_mut() {
            *c = f(*c);
        }
    }
}

/// Applies one operation to the definition.
pub(super) fn apply(
    def: &mut TableDef,
    op: AlterOp,
    next_id: &mut u32,
    ch: &mut Changes,
    now: chrono::NaiveDateTime,
) -> Result<()> {
    match op {
        AlterOp::AddColumn {
            mut column,
            position,
        } => {
            if column_position(def, &column.name).is_some() {
                return Err(Error::DuplicateColumn(column.name));
            }
            if column.auto_increment && !ch.rewrite {
                return Err(Error::Unsupported(
                    "ADD COLUMN ... AUTO_INCREMENT (it needs a table rewrite)".into(),
                ));
            }
            column.added_default = Some(added_default(&column, now, ch.table_empty)?);
            let pos = match &position {
                ColumnPosition::Last => def.columns.len(),
                ColumnPosition::First => 0,
                ColumnPosition::After(c) => {
                    column_position(def, c).ok_or_else(|| Error::UnknownColumn {
                        column: c.clone(),
                        context: def.name.clone(),
                    })? + 1
                }
            };
            explicit_slots(def);
            let slot = def.slot_count;
            def.slot_count += 1;
            shift_columns(def, |c| if c >= pos { c + 1 } else { c });
            def.columns.insert(pos, column);
            def.slots.insert(pos, slot);
        }
        AlterOp::DropColumn { name, if_exists } => {
            let Some(pos) = column_position(def, &name) else {
                return if if_exists {
                    Ok(())
                } else {
                    Err(Error::CantDropKey {
                        kind: "COLUMN",
                        name,
                    })
                };
            };
            crate::ddl::generated::check_drop(def, &name)?;
            if def.primary_key.contains(&pos) {
                if !ch.rewrite {
                    return Err(Error::Unsupported(format!(
                        "dropping primary key column '{name}' (it needs a table rewrite)"
                    )));
                }
                // MySQL: the key loses the column; a key left empty is gone.
                def.primary_key.retain(|&c| c != pos);
            }
            if def.columns.len() == 1 {
                return Err(Error::CantRemoveAllFields);
            }
            explicit_slots(def);
            def.columns.remove(pos);
            def.slots.remove(pos);
            let mut kept = Vec::with_capacity(def.indexes.len());
            for mut ix in std::mem::take(&mut def.indexes) {
                if !ix.columns.contains(&pos) {
                    kept.push(ix);
                    continue;
                }
                if let Some(seq) = ix.columns.iter().position(|&c| c == pos) {
                    ix.attrs.remove_part(seq);
                }
                ix.columns.retain(|&c| c != pos);
                let new_here = ch.added.contains(&ix.id);
                if ix.columns.is_empty() {
                    // MySQL drops an index whose every column is gone.
                    ch.added.retain(|&i| i != ix.id);
                    ch.dropped.push(ix.id);
                    continue;
                }
                if !new_here {
                    // A narrowed index is a different key: rebuild it online.
                    ch.dropped.push(ix.id);
                    ix.id = take_id(next_id);
                    ix.state = IndexState::WriteOnly;
                    ch.added.push(ix.id);
                }
                kept.push(ix);
            }
            def.indexes = kept;
            shift_columns(def, |c| if c > pos { c - 1 } else { c });
        }
        AlterOp::AddIndex {
            name,
            columns,
            unique,
            mut attrs,
        } => {
            if columns.is_empty() {
                return Err(Error::Syntax("an index needs at least one column".into()));
            }
            let cols = columns
                .iter()
                .map(|c| {
                    column_position(def, c).ok_or_else(|| Error::UnknownColumn {
                        column: c.clone(),
                        context: "key column".into(),
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            crate::ddl::define::check_prefixes(&mut attrs, &cols, &def.columns)?;
            let taken = |def: &TableDef, n: &str| {
                n.eq_ignore_ascii_case("PRIMARY")
                    || def.indexes.iter().any(|i| i.name.eq_ignore_ascii_case(n))
            };
            let name = match name {
                Some(n) if taken(def, &n) => return Err(Error::DuplicateKeyName(n)),
                Some(n) => n,
                None => {
                    // MySQL: the first column's name, then _2, _3, ...
                    let base = def.columns[cols[0]].name.clone();
                    let mut n = base.clone();
                    let mut k = 2;
                    while taken(def, &n) {
                        n = format!("{base}_{k}");
                        k += 1;
                    }
                    n
                }
            };
            let id = take_id(next_id);
            def.indexes.push(IndexDef {
                id,
                name,
                columns: cols,
                unique,
                state: IndexState::WriteOnly,
                attrs,
                ready_since: 0,
            });
            ch.added.push(id);
        }
        AlterOp::DropIndex { name } => {
            if name.eq_ignore_ascii_case("PRIMARY") {
                return apply(def, AlterOp::DropPrimaryKey, next_id, ch, now);
            }
            let pos = def
                .indexes
                .iter()
                .position(|i| i.name.eq_ignore_ascii_case(&name))
                .ok_or(Error::CantDropKey {
                    kind: "INDEX",
                    name,
                })?;
            let ix = def.indexes.remove(pos);
            ch.added.retain(|&i| i != ix.id);
            ch.dropped.push(ix.id);
        }
        AlterOp::AddForeignKey { fk, checks } => {
            let indexes: Vec<(String, Vec<usize>, bool)> = def
                .indexes
                .iter()
                .map(|i| (i.name.clone(), i.columns.clone(), i.unique))
                .collect();
            if let Some((name, cols, _)) =
                crate::ddl::fk_index(&fk, &def.columns, &def.primary_key, &indexes)
            {
                let columns = cols.iter().map(|&c| def.columns[c].name.clone()).collect();
                let free = !indexes
                    .iter()
                    .any(|(n, _, _)| n.eq_ignore_ascii_case(&name));
                apply(
                    def,
                    AlterOp::AddIndex {
                        name: free.then_some(name),
                        columns,
                        unique: false,
                        attrs: Default::default(),
                    },
                    next_id,
                    ch,
                    now,
                )?;
            }
            ch.check_rows |= checks;
            ch.foreign_keys.push(fk);
        }
        AlterOp::DropForeignKey { name } => {
            let before = def.foreign_keys.len();
            def.foreign_keys
                .retain(|f| !f.name.eq_ignore_ascii_case(&name));
            if def.foreign_keys.len() == before {
                return Err(Error::ForeignKey {
                    code: 1091,
                    message: format!("Can't DROP FOREIGN KEY `{name}`; check that it exists"),
                });
            }
        }
        AlterOp::ChangeColumn {
            old,
            mut column,
            position,
        } => {
            let pos = column_position(def, &old).ok_or_else(|| Error::UnknownColumn {
                column: old.clone(),
                context: def.name.clone(),
            })?;
            if column_position(def, &column.name).is_some_and(|p| p != pos) {
                return Err(Error::DuplicateColumn(column.name));
            }
            let cur = def.columns[pos].clone();
            if cur.attrs.generated != column.attrs.generated {
                return Err(Error::Unsupported(
                    "MODIFY / CHANGE that makes a column generated, or changes or drops \
                     its expression"
                        .into(),
                ));
            }
            if !cur.name.eq_ignore_ascii_case(&column.name) {
                crate::ddl::generated::check_drop(def, &cur.name)?;
            }
            if stored_form(&cur) != stored_form(&column) && !ch.rewrite {
                return Err(Error::Unsupported(format!(
                    "changing column '{}' from {} to {} (it needs a table rewrite)",
                    cur.name,
                    cur.ty.sql_name(),
                    column.ty.sql_name()
                )));
            }
            if column.auto_increment && !cur.auto_increment && !ch.rewrite {
                return Err(Error::Unsupported(format!(
                    "adding AUTO_INCREMENT to column '{}' (it needs a table rewrite)",
                    cur.name
                )));
            }
            if def.primary_key.contains(&pos) {
                // MySQL: a PRIMARY KEY column is NOT NULL whatever MODIFY says.
                column.nullable = false;
            }
            column.added_default = cur.added_default.clone();
            if column.ty != cur.ty || (cur.nullable && !column.nullable) {
                ch.changed.push((column.name.clone(), cur.clone()));
            }
            def.columns[pos] = column;
            if let Some(position) = position {
                let target = match &position {
                    ColumnPosition::Last => def.columns.len() - 1,
                    ColumnPosition::First => 0,
                    ColumnPosition::After(c) => {
                        let after =
                            column_position(def, c).ok_or_else(|| Error::UnknownColumn {
                                column: c.clone(),
                                context: def.name.clone(),
                            })?;
                        if after == pos {
                            return Err(Error::UnknownColumn {
                                column: c.clone(),
                                context: def.name.clone(),
                            });
                        }
                        if after < pos {
                            after + 1
                        } else {
                            after
                        }
                    }
                };
                if target != pos {
                    explicit_slots(def);
                    let col = def.columns.remove(pos);
                    let slot = def.slots.remove(pos);
                    def.columns.insert(target, col);
                    def.slots.insert(target, slot);
                    // Positions between the two move by one towards `pos`.
                    shift_columns(def, |c| {
                        if c == pos {
                            target
                        } else if pos < target && c > pos && c <= target {
                            c - 1
                        } else if target < pos && c >= target && c < pos {
                            c + 1
                        } else {
                            c
                        }
                    });
                }
            }
        }
        AlterOp::SetDefault { name, default } => {
            let pos = column_position(def, &name).ok_or_else(|| Error::UnknownColumn {
                column: name.clone(),
                context: def.name.clone(),
            })?;
            let col = &mut def.columns[pos];
            let old = std::mem::replace(&mut col.default, default);
            if let Err(e) = crate::ddl::define::check_default(col) {
                col.default = old;
                return Err(e);
            }
        }
        AlterOp::AddPrimaryKey { columns } => {
            if !def.primary_key.is_empty() {
                return Err(Error::MultiplePrimaryKey);
            }
            if !ch.rewrite {
                return Err(Error::Unsupported(
                    "ADD PRIMARY KEY (it needs a table rewrite)".into(),
                ));
            }
            let mut key = Vec::with_capacity(columns.len());
            for c in &columns {
                let pos = column_position(def, c).ok_or_else(|| Error::UnknownColumn {
                    column: c.clone(),
                    context: "key column".into(),
                })?;
                if key.contains(&pos) {
                    return Err(Error::DuplicateColumn(def.columns[pos].name.clone()));
                }
                // MySQL makes a primary-key column NOT NULL; a NULL stored in
                // it fails the copy (1138).
                def.columns[pos].nullable = false;
                if matches!(def.columns[pos].default, Some(DefaultValue::Null)) {
                    def.columns[pos].default = None;
                }
                key.push(pos);
            }
            def.primary_key = key;
        }
        AlterOp::DropPrimaryKey => {
            if def.primary_key.is_empty() {
                return Err(Error::CantDropKey {
                    kind: "INDEX",
                    name: "PRIMARY".into(),
                });
            }
            if !ch.rewrite {
                return Err(Error::Unsupported(
                    "DROP PRIMARY KEY (it needs a table rewrite)".into(),
                ));
            }
            def.primary_key.clear();
        }
        // Taken out of the list by `alter_table`.
        AlterOp::SetAutoIncrement(_) => {}
        AlterOp::RenameTo { db, name } => ch.rename = Some((db, name)),
        AlterOp::SetPartitioning(p) => def.partitioning = p.map(|p| *p),
        AlterOp::SetEngine(e) => def.engine = (e != "InnoDB").then_some(e),
        AlterOp::SetComment(c) => def.comment = c,
        // Carried out by the copy of the rewrite (`crate::ddl::rewrite`).
        AlterOp::OrderBy(_) => {}
    }
    if let Some(p) = &def.partitioning {
        crate::ddl::partition::check_keys(p, def)?;
    }
    Ok(())
}
