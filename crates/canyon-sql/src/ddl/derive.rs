//! Table definitions derived from other objects: CREATE TABLE ... LIKE
//! (from a table's definition) and CREATE TABLE ... \[AS\] SELECT (from a
//! query's result columns, merged with the columns written out).
//!
//! MySQL 8.0 manual, 15.1.20.3 "CREATE TABLE ... LIKE": the copy has the
//! source's columns (types, nullability, defaults, comments, collations),
//! its primary key and indexes and its partitioning; not its foreign keys,
//! not its AUTO_INCREMENT counter (the column keeps the attribute).
//!
//! 15.1.20.4 "CREATE TABLE ... SELECT": a column for each result column, in
//! order, after the columns the statement declares; a declared column with a
//! result column's name takes the declaration (and the result's values). A
//! result column that is a table's column keeps its type, nullability,
//! collation, default and comment; an expression's type comes from the
//! result-set metadata. AUTO_INCREMENT is not carried over, nor indexes.

use crate::catalog::{ColumnDef, TableDef};
use crate::ddl::define::NewTable;
use canyon_common::{Error, Result};

/// The definition CREATE TABLE ... LIKE `src` creates (ids are assigned
/// when it is created, as for any new table).
pub fn like_table(src: &TableDef) -> NewTable {
    let columns: Vec<ColumnDef> = src
        .columns
        .iter()
        .map(|c| ColumnDef {
            // Rows of the copy always hold every column.
            added_default: None,
            ..c.clone()
        })
        .collect();
    NewTable {
        columns,
        primary_key: src.primary_key.clone(),
        indexes: src
            .public_indexes()
            .map(|(_, ix)| (ix.name.clone(), ix.columns.clone(), ix.unique))
            .collect(),
        index_attrs: src
            .public_indexes()
            .map(|(_, ix)| ix.attrs.clone())
            .collect(),
        auto_increment_start: None,
        default_collation: src.default_collation,
        foreign_keys: Vec::new(),
        comment: src.comment.clone(),
        partitioning: src.partitioning.clone(),
        engine: src.engine.clone(),
    }
}

/// One result column of the SELECT of CREATE TABLE ... SELECT: its name and
/// the column it becomes.
#[derive(Debug, Clone)]
pub struct SelectColumn {
    /// The result column's name (alias).
    pub name: String,
    /// The column it becomes when the statement does not declare it.
    pub def: ColumnDef,
}

/// Merges the declared part of a CREATE TABLE ... SELECT with the query's
/// columns: declared columns first, in their order, then each result column
/// not declared. 1060 when two result columns share a name (MySQL's
/// "Duplicate column name").
pub fn merge_select_columns(mut declared: NewTable, select: Vec<SelectColumn>) -> Result<NewTable> {
    for (i, s) in select.iter().enumerate() {
        if select[..i]
            .iter()
            .any(|p| p.name.eq_ignore_ascii_case(&s.name))
        {
            return Err(Error::DuplicateColumn(s.name.clone()));
        }
    }
    for s in select {
        if declared
            .columns
            .iter()
            .any(|c| c.name.eq_ignore_ascii_case(&s.name))
        {
            continue;
        }
        let mut def = s.def;
        def.name = s.name;
        def.auto_increment = false;
        def.added_default = None;
        declared.columns.push(def);
    }
    if declared.columns.is_empty() {
        // MySQL 1113: "A table must have at least 1 column".
        return Err(Error::InvalidArgument(
            "A table must have at least 1 column".into(),
        ));
    }
    Ok(declared)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::collation::Collation;
    use crate::types::SqlType;

    fn col(name: &str, ty: SqlType) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            ty,
            nullable: true,
            default: None,
            auto_increment: false,
            collation: Collation::DEFAULT,
            added_default: None,
            attrs: Default::default(),
        }
    }

    fn empty() -> NewTable {
        NewTable {
            columns: Vec::new(),
            primary_key: Vec::new(),
            indexes: Vec::new(),
            index_attrs: Vec::new(),
            auto_increment_start: None,
            default_collation: Collation::DEFAULT,
            foreign_keys: Vec::new(),
            comment: String::new(),
            partitioning: None,
            engine: None,
        }
    }

    #[test]
    fn declared_columns_come_first_and_win() {
        let mut declared = empty();
        declared
            .columns
            .push(col("b", SqlType::BigInt { unsigned: false }));
        let select = vec![
            SelectColumn {
                name: "a".into(),
                def: col("x", SqlType::Int { unsigned: false }),
            },
            SelectColumn {
                name: "B".into(),
                def: col("y", SqlType::Int { unsigned: false }),
            },
        ];
        let t = merge_select_columns(declared, select).expect("merges");
        let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["b", "a"]);
        assert_eq!(t.columns[0].ty, SqlType::BigInt { unsigned: false });
    }

    #[test]
    fn duplicate_result_names_are_1060() {
        let select = vec![
            SelectColumn {
                name: "a".into(),
                def: col("a", SqlType::Int { unsigned: false }),
            },
            SelectColumn {
                name: "A".into(),
                def: col("a", SqlType::Int { unsigned: false }),
            },
        ];
        let e = merge_select_columns(empty(), select).expect_err("duplicate");
        assert!(matches!(e, Error::DuplicateColumn(_)));
    }
}
