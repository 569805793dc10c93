//! Translating CREATE TABLE / CREATE INDEX / ALTER TABLE from the AST into catalog
//! definitions and schema-change operations. A declared column type becomes
//! a `SqlType` in `crate::ddl::column_type` (re-exported here as
//! [`sql_type`]).
//!
//! Accepted and ignored, as MySQL users expect: table options (ENGINE, CHARSET,
//! COLLATE, ROW_FORMAT, COMMENT, AUTO_INCREMENT=n is honoured), column
//! CHARACTER SET / COLLATE / COMMENT, display widths. ZEROFILL and UNSIGNED
//! arrive as dialect-specific column options (`crate::parse`'s hook): ZEROFILL
//! is kept and shown and makes an integer UNSIGNED; UNSIGNED on DECIMAL /
//! FLOAT / DOUBLE is accepted and not kept. Defaults are checked against the
//! column and stored as it would hold them (`check_default`, 1067); index key
//! parts' prefixes, DESC, USING and COMMENT are kept (`index_attrs`, 1089 /
//! 1170). FOREIGN KEY constraints (table and column level, as MariaDB and
//! MySQL 9 honour both) are translated here and checked against the catalog
//! in `crate::exec::foreign`. ENUM / SET member lists are checked here
//! (`member_type`; see `crate::types::enumset`). Generated columns are
//! translated and checked by `crate::ddl::generated`. Refused with 1235: CHECK,
//! JSON, spatial types, ON DELETE / ON UPDATE SET DEFAULT
//! (InnoDB refuses it too).

use crate::catalog::{
    ColumnDef, DefaultValue, FkAction, IndexAlgorithm, IndexAttrs, IndexDef, TableDef,
};
use crate::ddl::alter::{AlterOp, ColumnPosition};
pub use crate::ddl::column_type::sql_type;
use crate::ddl::column_type::{declared_width, too_big_precision, unsigned_of};
use crate::types::collation::Collation;
use crate::types::decimal::MAX_PRECISION;
use crate::types::enumset;
use crate::types::value::Value;
use crate::types::SqlType;
use canyon_common::{Error, Result};
use sqlparser::ast;

/// A table definition before ids are assigned.
#[derive(Debug, Clone)]
pub struct NewTable {
    /// Columns.
    pub columns: Vec<ColumnDef>,
    /// Primary key column positions.
    pub primary_key: Vec<usize>,
    /// Indexes (ids assigned later): (name, columns, unique).
    pub indexes: Vec<(String, Vec<usize>, bool)>,
    /// What each of `indexes` declared beyond its columns, by the same
    /// position; an index past the end declared nothing (the index a
    /// FOREIGN KEY adds, for one).
    pub index_attrs: Vec<IndexAttrs>,
    /// AUTO_INCREMENT=n table option.
    pub auto_increment_start: Option<u64>,
    /// The table's default collation.
    pub default_collation: Collation,
    /// FOREIGN KEY constraints, before they are checked against the catalog.
    pub foreign_keys: Vec<NewForeignKey>,
    /// The COMMENT table option.
    pub comment: String,
    /// PARTITION BY, checked (`crate::ddl::partition`).
    pub partitioning: Option<crate::catalog::partition::Partitioning>,
    /// The ENGINE option as written (the session checks it against the
    /// engines Canyon stands in for: [`crate::catalog::storage_engine`]).
    pub engine: Option<String>,
}

/// A FOREIGN KEY constraint as written.
#[derive(Debug, Clone)]
pub struct NewForeignKey {
    /// `CONSTRAINT name`, else the MySQL index name after `FOREIGN KEY`
    /// (MariaDB names the constraint by it); `None`: generated.
    pub name: Option<String>,
    /// The child's columns (positions).
    pub columns: Vec<usize>,
    /// The parent's database, when written (else the child's).
    pub ref_db: Option<String>,
    /// The parent table.
    pub ref_table: String,
    /// The parent's columns.
    pub ref_columns: Vec<String>,
    /// ON DELETE.
    pub on_delete: FkAction,
    /// ON UPDATE.
    pub on_update: FkAction,
}

/// The referential action as stored (SET DEFAULT: 1235).
fn fk_action(a: &Option<ast::ReferentialAction>) -> Result<FkAction> {
    Ok(match a {
        None | Some(ast::ReferentialAction::NoAction) => FkAction::NoAction,
        Some(ast::ReferentialAction::Restrict) => FkAction::Restrict,
        Some(ast::ReferentialAction::Cascade) => FkAction::Cascade,
        Some(ast::ReferentialAction::SetNull) => FkAction::SetNull,
        Some(ast::ReferentialAction::SetDefault) => {
            return Err(Error::Unsupported(
                "ON DELETE / ON UPDATE SET DEFAULT".into(),
            ))
        }
    })
}

/// Translates a FOREIGN KEY constraint over `columns`; `own` is the column a
/// column-level REFERENCES stands on.
pub fn foreign_key(
    fk: &ast::ForeignKeyConstraint,
    columns: &[ColumnDef],
    own: Option<usize>,
) -> Result<NewForeignKey> {
    let cols = match own {
        Some(c) => vec![c],
        None => fk
            .columns
            .iter()
            .map(|id| {
                columns
                    .iter()
                    .position(|c| c.name.eq_ignore_ascii_case(&id.value))
                    .ok_or(Error::UnknownColumn {
                        column: id.value.clone(),
                        context: "foreign key".into(),
                    })
            })
            .collect::<Result<Vec<_>>>()?,
    };
    let parts: Vec<String> = fk
        .foreign_table
        .0
        .iter()
        .map(|p| p.to_string().trim_matches('`').to_string())
        .collect();
    let (ref_db, ref_table) = match parts.as_slice() {
        [t] => (None, t.clone()),
        [d, t] => (Some(d.clone()), t.clone()),
        _ => return Err(Error::Syntax(fk.foreign_table.to_string())),
    };
    let name = fk.name.as_ref().or(fk.index_name.as_ref());
    if fk.match_kind.is_some() || fk.characteristics.is_some() {
        return Err(Error::Unsupported(
            "MATCH / DEFERRABLE in FOREIGN KEY".into(),
        ));
    }
    let nf = NewForeignKey {
        name: name.map(|n| n.value.clone()),
        columns: cols,
        ref_db,
        ref_table,
        ref_columns: fk
            .referred_columns
            .iter()
            .map(|c| c.value.clone())
            .collect(),
        on_delete: fk_action(&fk.on_delete)?,
        on_update: fk_action(&fk.on_update)?,
    };
    if nf.ref_columns.len() != nf.columns.len() {
        return Err(Error::ForeignKey {
            code: 1239,
            message: format!(
                "Incorrect foreign key definition for '{}': Key reference and table reference don't match",
                nf.name.as_deref().unwrap_or("foreign key without name")
            ),
        });
    }
    Ok(nf)
}

/// The index a new foreign key needs on the child (invariant 1 of
/// `crate::exec::foreign`), when none of `indexes` (nor the primary key) leads with
/// its columns: named as MariaDB and MySQL name it — the constraint's name
/// if written, else the first column's.
pub fn fk_index(
    fk: &NewForeignKey,
    columns: &[ColumnDef],
    primary_key: &[usize],
    indexes: &[(String, Vec<usize>, bool)],
) -> Option<(String, Vec<usize>, bool)> {
    let covered = (!primary_key.is_empty() && primary_key.starts_with(&fk.columns))
        || indexes
            .iter()
            .any(|(_, cols, _)| cols.starts_with(&fk.columns));
    if covered {
        return None;
    }
    let name = fk
        .name
        .clone()
        .unwrap_or_else(|| columns[fk.columns[0]].name.clone());
    Some((name, fk.columns.clone(), false))
}

/// An ENUM / SET column's type once its collation is known: the members
/// checked (trimmed, counted; see
/// `crate::types::enumset`) and interned with the collation; its DEFAULT
/// must be a value the column can hold (1067), and is kept as the
/// canonical text (`DEFAULT 'A'` for `ENUM('a')` is shown as `'a'`, as MySQL).
fn member_type(col: &mut ColumnDef) -> Result<()> {
    let Some((kind, m)) = col.ty.members() else {
        return Ok(());
    };
    let mut values = m.values.clone();
    enumset::check_members(kind, &col.name, &mut values)?;
    // Duplicate members are checked against the session's sql_mode, with
    // the comments (`crate::ddl::comments`).
    let m = enumset::intern_bounded(values, col.collation)?;
    col.ty = match kind {
        enumset::Kind::Enum => SqlType::Enum(m),
        enumset::Kind::Set => SqlType::Set(m),
    };
    if let Some(d @ (DefaultValue::Literal(_) | DefaultValue::Number(_))) = &col.default {
        let v = crate::catalog::default_value(d, || chrono::NaiveDateTime::MIN);
        match crate::types::coerce_member(v, col.ty) {
            (Value::Bytes(b), false) => {
                col.default = Some(DefaultValue::Literal(
                    String::from_utf8(b).expect("members are UTF-8 text"),
                ))
            }
            _ => {
                return Err(Error::Sql {
                    code: 1067,
                    sqlstate: *b"42000",
                    message: format!("Invalid default value for '{}'", col.name),
                })
            }
        }
    }
    Ok(())
}

fn default_of(e: &ast::Expr) -> Result<DefaultValue> {
    Ok(match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Null => DefaultValue::Null,
            ast::Value::Number(n, _) => DefaultValue::Number(n.clone()),
            ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                DefaultValue::Literal(s.clone())
            }
            ast::Value::Boolean(b) => DefaultValue::Number(if *b { "1" } else { "0" }.into()),
            // b'101': a BIT column's usual default; kept as its number.
            ast::Value::SingleQuotedByteStringLiteral(bits)
                if bits.len() <= 64 && bits.bytes().all(|b| b == b'0' || b == b'1') =>
            {
                DefaultValue::Number(
                    u64::from_str_radix(if bits.is_empty() { "0" } else { bits }, 2)
                        .expect("checked: at most 64 binary digits")
                        .to_string(),
                )
            }
            other => return Err(Error::Unsupported(format!("DEFAULT {other}"))),
        },
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => match default_of(expr)? {
            DefaultValue::Number(n) => DefaultValue::Number(format!("-{n}")),
            _ => return Err(Error::Unsupported("this DEFAULT expression".into())),
        },
        ast::Expr::Function(f) => {
            let name = f.name.to_string().to_ascii_uppercase();
            if matches!(
                name.as_str(),
                "CURRENT_TIMESTAMP" | "NOW" | "LOCALTIMESTAMP" | "LOCALTIME"
            ) {
                DefaultValue::CurrentTimestamp
            } else {
                return Err(Error::Unsupported(format!("DEFAULT {name}()")));
            }
        }
        ast::Expr::Identifier(id) if id.value.eq_ignore_ascii_case("CURRENT_TIMESTAMP") => {
            DefaultValue::CurrentTimestamp
        }
        ast::Expr::Nested(inner) => default_of(inner)?,
        other => return Err(Error::Unsupported(format!("DEFAULT {other}"))),
    })
}

fn index_columns(cols: &[ast::IndexColumn], columns: &[ColumnDef]) -> Result<Vec<usize>> {
    cols.iter()
        .map(|ic| {
            let name = match &ic.column.expr {
                ast::Expr::Identifier(id) => id.value.clone(),
                // `col(10)` prefix lengths parse as a function call.
                ast::Expr::Function(f) => key_part_name(f),
                other => return Err(Error::Unsupported(format!("index on expression {other}"))),
            };
            columns
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(&name))
                .ok_or(Error::UnknownColumn {
                    column: name,
                    context: "key column".into(),
                })
        })
        .collect()
}

/// Translates one column definition: the column, whether it is declared
/// PRIMARY KEY, whether UNIQUE.
///
/// A character column's collation is its COLLATE option, else its CHARACTER
/// SET's default collation, else `table_default`; binary strings (BINARY,
/// VARBINARY, BLOB) are `binary` and refuse a character set.
pub fn column_def(c: &ast::ColumnDef, table_default: Collation) -> Result<(ColumnDef, bool, bool)> {
    let ty = sql_type(&c.data_type).map_err(|e| match e {
        Error::Sql { code: 1426, .. } => {
            use ast::DataType as D;
            let fsp = u32::from(crate::types::sqltype::MAX_FSP);
            let (p, max) = match &c.data_type {
                D::Datetime(p) | D::Timestamp(p, _) | D::Time(p, _) => (p.unwrap_or(0), fsp),
                D::Decimal(info)
                | D::Numeric(info)
                | D::Dec(info)
                | D::DecimalUnsigned(info)
                | D::DecUnsigned(info) => match info {
                    ast::ExactNumberInfo::Precision(p)
                    | ast::ExactNumberInfo::PrecisionAndScale(p, _) => (*p, MAX_PRECISION),
                    ast::ExactNumberInfo::None => (0, MAX_PRECISION),
                },
                _ => (0, fsp),
            };
            too_big_precision(p, &c.name.value, max)
        }
        // MySQL's message names the column: "... M must be >= D (column
        // 'c1')." (MariaDB's ends without the period).
        Error::Sql {
            code: 1427,
            sqlstate,
            message,
        } => Error::Sql {
            code: 1427,
            sqlstate,
            message: format!("{message} (column '{}').", c.name.value),
        },
        // MySQL's ER_TOO_BIG_DISPLAYWIDTH names the column too: "Display
        // width out of range for column 'c1' (max = 64)" (MariaDB's
        // presentation drops `column `: `session/dispatch.rs`).
        Error::Sql {
            code: 1439,
            sqlstate,
            message,
        } => Error::Sql {
            code: 1439,
            sqlstate,
            message: message.replacen(
                "out of range (",
                &format!("out of range for column '{}' (", c.name.value),
                1,
            ),
        },
        e => e,
    })?;
    let mut col = ColumnDef {
        name: c.name.value.clone(),
        ty,
        nullable: true,
        default: None,
        auto_increment: false,
        collation: Collation::Binary,
        added_default: None,
        attrs: crate::catalog::ColumnAttrs {
            display_width: declared_width(&c.data_type),
            time_key_ordered: matches!(ty, SqlType::Time(_)),
            ..Default::default()
        },
    };
    let (mut charset, mut collation) = (None, None);
    let mut binary_attr = false;
    let mut explicit_null = false;
    let mut pk = false;
    let mut unique = false;
    if matches!(&c.data_type, ast::DataType::Custom(n, a) if a.is_empty() && n.to_string().eq_ignore_ascii_case("SERIAL"))
    {
        col.nullable = false;
        col.auto_increment = true;
        unique = true;
    }
    for opt in &c.options {
        match &opt.option {
            ast::ColumnOption::Null => explicit_null = true,
            ast::ColumnOption::NotNull => col.nullable = false,
            // MySQL 8.0.13+ takes an expression default on a JSON column
            // (`DEFAULT ('{}')`); Canyon has no expression defaults yet.
            ast::ColumnOption::Default(ast::Expr::Nested(_)) if ty == SqlType::Json => {
                return Err(Error::Unsupported(
                    "an expression DEFAULT on a JSON column".into(),
                ))
            }
            ast::ColumnOption::Default(e) => col.default = Some(default_of(e)?),
            ast::ColumnOption::PrimaryKey(_) => {
                if pk {
                    return Err(Error::MultiplePrimaryKey);
                }
                pk = true;
                col.nullable = false;
            }
            ast::ColumnOption::Unique(_) => unique = true,
            ast::ColumnOption::DialectSpecific(tokens) => {
                let text = tokens
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(" ");
                if text.eq_ignore_ascii_case("AUTO_INCREMENT") {
                    col.auto_increment = true;
                } else if text == "ZEROFILL" || text == "UNSIGNED" {
                    // (from `parse::parser`'s column-option hook) ZEROFILL
                    // implies UNSIGNED.
                    col.attrs.zerofill |= text == "ZEROFILL";
                    col.ty = unsigned_of(col.ty);
                } else if text == "SIGNED" {
                    // The default.
                } else if text == "BINARY" && ty.is_string() && !ty.is_binary() {
                    // `CHAR(n) BINARY`: the charset's _bin collation
                    // (resolved below, once CHARACTER SET is known).
                    binary_attr = true;
                } else {
                    return Err(Error::Unsupported(format!("column option {text}")));
                }
            }
            ast::ColumnOption::CharacterSet(cs) => charset = Some(object_name(cs)),
            ast::ColumnOption::Collation(co) => collation = Some(object_name(co)),
            // Its length is checked by `crate::ddl::comments` (by sql_mode).
            ast::ColumnOption::Comment(text) => col.attrs.comment = text.clone(),
            ast::ColumnOption::OnUpdate(e) => match default_of(e)? {
                DefaultValue::CurrentTimestamp
                    if matches!(ty, SqlType::DateTime(_) | SqlType::Timestamp(_)) =>
                {
                    col.attrs.on_update_now = true
                }
                // MySQL: 1294 "Invalid ON UPDATE clause for 'c' column".
                _ => {
                    return Err(Error::InvalidArgument(format!(
                        "Invalid ON UPDATE clause for '{}' column",
                        col.name
                    )))
                }
            },
            // Column-level REFERENCES: read by create_table.
            ast::ColumnOption::ForeignKey(_) => {}
            ast::ColumnOption::Check(_) => {
                return Err(Error::Unsupported("CHECK constraints".into()))
            }
            ast::ColumnOption::Generated {
                generation_expr: Some(e),
                generation_expr_mode,
                ..
            } => {
                col.attrs.generated = Some(crate::ddl::generated::generated_column(
                    &col.name,
                    e,
                    *generation_expr_mode,
                )?)
            }
            // GENERATED ... AS IDENTITY (not MySQL).
            ast::ColumnOption::Generated { .. } => {
                return Err(Error::Unsupported("GENERATED ... AS IDENTITY".into()))
            }
            other => return Err(Error::Unsupported(format!("column option {other}"))),
        }
    }
    let _ = explicit_null;
    if col.attrs.generated.is_some() {
        // MySQL: 1221 for the options a generated column cannot have.
        if col.default.is_some() {
            return Err(crate::ddl::generated::wrong_usage("DEFAULT"));
        }
        if col.auto_increment {
            return Err(crate::ddl::generated::wrong_usage("AUTO_INCREMENT"));
        }
        if col.attrs.on_update_now {
            return Err(crate::ddl::generated::wrong_usage("ON UPDATE"));
        }
    }
    if ty.is_string() && !ty.is_binary() {
        col.collation =
            Collation::resolve(charset.as_deref(), collation.as_deref(), table_default)?;
        if binary_attr && collation.is_none() {
            let bin = format!("{}_bin", col.collation.charset());
            col.collation = Collation::from_name(&bin).ok_or(Error::UnknownCollation(bin))?;
        }
    } else if ty.is_binary() {
        let c = Collation::resolve(charset.as_deref(), collation.as_deref(), Collation::Binary)?;
        if c != Collation::Binary {
            return Err(Error::Unsupported(format!(
                "CHARACTER SET / COLLATE {} on a binary column",
                c.name()
            )));
        }
    }
    member_type(&mut col)?;
    if col.auto_increment && !ty.is_integer() {
        return Err(Error::Unsupported(
            "AUTO_INCREMENT on a non-integer column".into(),
        ));
    }
    check_default(&mut col)?;
    Ok((col, pk, unique))
}

/// Checks a column's DEFAULT against its type and stores it as the column
/// would hold it, as MySQL does (`DECIMAL(10,8) DEFAULT 3.14` is
/// `3.14000000`, `BINARY(5) DEFAULT 'x'` is `x\0\0\0\0`, a DATETIME's
/// `'2020-01-01'` is `2020-01-01 00:00:00`): SHOW CREATE TABLE and
/// information_schema show that form. A value the type cannot hold, NULL
/// for a NOT NULL column, or CURRENT_TIMESTAMP for a column that is not
/// DATETIME / TIMESTAMP is MySQL's 1067 (in every SQL mode).
pub(crate) fn check_default(col: &mut ColumnDef) -> Result<()> {
    let invalid = || Error::Sql {
        code: 1067,
        sqlstate: *b"42000",
        message: format!("Invalid default value for '{}'", col.name),
    };
    // MySQL: 1101 for a JSON column's literal DEFAULT (only DEFAULT NULL,
    // or an expression default, which Canyon does not take yet).
    if col.ty == SqlType::Json && !matches!(col.default, None | Some(DefaultValue::Null)) {
        return Err(Error::Sql {
            code: 1101,
            sqlstate: *b"42000",
            message: format!(
                "BLOB, TEXT, GEOMETRY or JSON column '{}' can't have a default value",
                col.name
            ),
        });
    }
    let Some(d) = &col.default else {
        return Ok(());
    };
    let normalized = match d {
        DefaultValue::Null if !col.nullable => return Err(invalid()),
        DefaultValue::Null => DefaultValue::Null,
        DefaultValue::CurrentTimestamp => {
            if !matches!(col.ty, SqlType::DateTime(_) | SqlType::Timestamp(_)) {
                return Err(invalid());
            }
            DefaultValue::CurrentTimestamp
        }
        DefaultValue::Literal(_) | DefaultValue::Number(_) => {
            let v = crate::catalog::default_value(d, || chrono::DateTime::UNIX_EPOCH.naive_utc());
            let v = crate::types::coerce(v, col.ty, &col.name, 0).map_err(|_| invalid())?;
            // DEFAULT '0000-00-00' where the SQL mode refuses the zero date
            // (NO_ZERO_DATE and strict: MySQL 8's default modes).
            if v.is_zero_date()
                && crate::types::datetime::zero_dates()
                    == crate::types::datetime::ZeroDates::Refused
            {
                return Err(invalid());
            }
            if col.ty.is_numeric() || matches!(col.ty, SqlType::Bit(_)) {
                DefaultValue::Number(v.to_display())
            } else {
                match v {
                    Value::Bytes(b) => match String::from_utf8(b) {
                        Ok(s) => DefaultValue::Literal(s),
                        // Not text (a BINARY column's bytes): kept as given.
                        Err(_) => d.clone(),
                    },
                    other => DefaultValue::Literal(other.to_display()),
                }
            }
        }
    };
    col.default = Some(normalized);
    Ok(())
}

/// Translates a CREATE TABLE.
/// Character columns without a collation of their own take the table's
/// (table options), else `db_default` — the database's.
pub fn create_table(ct: &ast::CreateTable, db_default: Collation) -> Result<NewTable> {
    // LIKE and TEMPORARY are the caller's (`crate::ddl::derive`, the
    // session's temporary tables); this translates the declared part, the
    // columns a CREATE TABLE ... SELECT writes out included.
    if ct.clone.is_some() {
        return Err(Error::Unsupported("CREATE TABLE ... CLONE".into()));
    }
    let default_collation = table_collation(&ct.table_options.to_string(), db_default)?;
    let mut columns = Vec::with_capacity(ct.columns.len());
    let mut primary_key: Vec<usize> = Vec::new();
    let mut indexes: Vec<(String, Vec<usize>, bool)> = Vec::new();
    // By the position in `indexes` (see `NewTable::index_attrs`).
    let mut index_attrs_of: Vec<IndexAttrs> = Vec::new();
    for (pos, c) in ct.columns.iter().enumerate() {
        if columns
            .iter()
            .any(|x: &ColumnDef| x.name.eq_ignore_ascii_case(&c.name.value))
        {
            return Err(Error::DuplicateColumn(c.name.value.clone()));
        }
        let (col, pk, unique) = column_def(c, default_collation)?;
        if pk {
            if !primary_key.is_empty() {
                return Err(Error::MultiplePrimaryKey);
            }
            primary_key = vec![pos];
        }
        if unique {
            indexes.push((c.name.value.clone(), vec![pos], true));
        }
        columns.push(col);
    }
    let mut foreign_keys = Vec::new();
    // FULLTEXT indexes join `indexes` after the foreign keys' own indexes:
    // they cannot serve a foreign key.
    let mut fulltext: Vec<(String, Vec<usize>, IndexAttrs)> = Vec::new();
    for (pos, c) in ct.columns.iter().enumerate() {
        for opt in &c.options {
            if let ast::ColumnOption::ForeignKey(fk) = &opt.option {
                foreign_keys.push(foreign_key(fk, &columns, Some(pos))?);
            }
        }
    }
    for con in &ct.constraints {
        match con {
            ast::TableConstraint::PrimaryKey(pk) => {
                if !primary_key.is_empty() {
                    return Err(Error::MultiplePrimaryKey);
                }
                primary_key = index_columns(&pk.columns, &columns)?;
                for &c in &primary_key {
                    columns[c].nullable = false;
                }
            }
            ast::TableConstraint::Unique(u) => {
                let cols = index_columns(&u.columns, &columns)?;
                let name = u
                    .index_name
                    .as_ref()
                    .or(u.name.as_ref())
                    .map(|n| n.value.clone())
                    .unwrap_or_else(|| columns[cols[0]].name.clone());
                let mut attrs = index_attrs(&u.columns, u.index_type.as_ref(), &u.index_options)?;
                check_prefixes(&mut attrs, &cols, &columns)?;
                index_attrs_of.resize(indexes.len(), IndexAttrs::default());
                index_attrs_of.push(attrs);
                indexes.push((name, cols, true));
            }
            ast::TableConstraint::Index(ix) => {
                let cols = index_columns(&ix.columns, &columns)?;
                let name = ix
                    .name
                    .as_ref()
                    .map(|n| n.value.clone())
                    .unwrap_or_else(|| columns[cols[0]].name.clone());
                let mut attrs =
                    index_attrs(&ix.columns, ix.index_type.as_ref(), &ix.index_options)?;
                check_prefixes(&mut attrs, &cols, &columns)?;
                index_attrs_of.resize(indexes.len(), IndexAttrs::default());
                index_attrs_of.push(attrs);
                indexes.push((name, cols, false));
            }
            ast::TableConstraint::FulltextOrSpatial(ft) => {
                let cols = index_columns(&ft.columns, &columns)?;
                let name = ft
                    .opt_index_name
                    .as_ref()
                    .map(|n| n.value.clone())
                    .unwrap_or_else(|| columns[cols[0]].name.clone());
                let mut attrs = fulltext_attrs(ft)?;
                check_prefixes(&mut attrs, &cols, &columns)?;
                fulltext.push((name, cols, attrs));
            }
            ast::TableConstraint::ForeignKey(fk) => {
                foreign_keys.push(foreign_key(fk, &columns, None)?);
            }
            ast::TableConstraint::Check(_) => {
                return Err(Error::Unsupported("CHECK constraints".into()))
            }
            other => return Err(Error::Unsupported(format!("table constraint {other}"))),
        }
    }
    for fk in &foreign_keys {
        crate::ddl::generated::check_foreign_key(
            &columns,
            &fk.columns,
            fk.on_update,
            fk.on_delete,
        )?;
    }
    // Each constraint gets the child index it needs (named before the
    // duplicate-name suffixes below are applied).
    for fk in &foreign_keys {
        if let Some(ix) = fk_index(fk, &columns, &primary_key, &indexes) {
            indexes.push(ix);
        }
    }
    for (name, cols, attrs) in fulltext {
        index_attrs_of.resize(indexes.len(), IndexAttrs::default());
        index_attrs_of.push(attrs);
        indexes.push((name, cols, false));
    }
    // Unnamed duplicates get MySQL's _2, _3 suffixes.
    let mut seen: Vec<String> = Vec::new();
    for ix in &mut indexes {
        let base = ix.0.clone();
        let mut n = 2;
        while seen.iter().any(|s| s.eq_ignore_ascii_case(&ix.0)) {
            ix.0 = format!("{base}_{n}");
            n += 1;
        }
        seen.push(ix.0.clone());
    }
    // CREATE TABLE ... SELECT may declare none: the query gives them
    // (`crate::ddl::derive::merge_select_columns`).
    if ct.columns.is_empty() && ct.query.is_none() {
        return Err(Error::Syntax("a table must have at least 1 column".into()));
    }
    let autos = columns.iter().filter(|c| c.auto_increment).count();
    if autos > 1 {
        return Err(Error::InvalidArgument(
            "there can be only one auto column".into(),
        ));
    }
    let auto_increment_start = table_auto_increment_option(ct);
    let new = NewTable {
        columns,
        primary_key,
        indexes,
        index_attrs: index_attrs_of,
        auto_increment_start,
        default_collation,
        foreign_keys,
        comment: table_comment(ct),
        partitioning: None,
        engine: table_engine_option(ct),
    };
    if new.columns.iter().any(|c| c.attrs.generated.is_some()) {
        let ids = vec![0; new.indexes.len()];
        crate::ddl::generated::check_table(&finish(
            new.clone(),
            "",
            &object_name(&ct.name),
            0,
            &ids,
        ))?;
    }
    Ok(new)
}

/// The name an `ObjectName` spells (unquoted, as written).
fn object_name(n: &ast::ObjectName) -> String {
    n.to_string()
        .trim_matches('`')
        .trim_matches('\'')
        .to_string()
}

/// The default collation the table options name (`[DEFAULT] CHARSET [=] cs`,
/// `CHARACTER SET [=] cs`, `[DEFAULT] COLLATE [=] co`), else `default`.
pub fn table_collation(options: &str, default: Collation) -> Result<Collation> {
    let words: Vec<String> = options
        .split(|c: char| c.is_whitespace() || c == '=' || c == ',')
        .filter(|w| !w.is_empty())
        .map(|w| w.trim_matches('`').trim_matches('\'').to_string())
        .collect();
    let (mut charset, mut collation) = (None, None);
    let mut i = 0;
    while i < words.len() {
        let w = words[i].to_ascii_uppercase();
        let next = words.get(i + 1).cloned();
        if w == "CHARSET" || w == "CHARACTER_SET" {
            charset = next;
            i += 2;
        } else if w == "CHARACTER"
            && words
                .get(i + 1)
                .is_some_and(|x| x.eq_ignore_ascii_case("SET"))
        {
            charset = words.get(i + 2).cloned();
            i += 3;
        } else if w == "COLLATE" {
            collation = next;
            i += 2;
        } else {
            i += 1;
        }
    }
    Collation::resolve(charset.as_deref(), collation.as_deref(), default)
}

/// The COMMENT table option ('' without one).
fn table_comment(ct: &ast::CreateTable) -> String {
    let from_options = match &ct.table_options {
        ast::CreateTableOptions::Plain(o)
        | ast::CreateTableOptions::With(o)
        | ast::CreateTableOptions::Options(o)
        | ast::CreateTableOptions::TableProperties(o) => o.iter().find_map(|o| match o {
            ast::SqlOption::Comment(c) => Some(c.clone()),
            _ => None,
        }),
        ast::CreateTableOptions::None => None,
    };
    match ct.comment.clone().or(from_options) {
        Some(ast::CommentDef::WithEq(c) | ast::CommentDef::WithoutEq(c)) => c,
        None => String::new(),
    }
}

/// The ENGINE table option's name, unquoted.
fn table_engine_option(ct: &ast::CreateTable) -> Option<String> {
    let text = ct.table_options.to_string();
    let upper = text.to_ascii_uppercase();
    let mut from = 0;
    // A whole word ENGINE (not DEFAULT_STORAGE_ENGINE or a comment's text:
    // comments come quoted, and the option names before them are checked).
    while let Some(i) = upper[from..].find("ENGINE").map(|i| i + from) {
        from = i + "ENGINE".len();
        let before = upper[..i].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '\'') {
            continue;
        }
        let rest = text[from..].trim_start();
        let rest = rest.strip_prefix('=').unwrap_or(rest).trim_start();
        let name: String = rest
            .trim_start_matches(['`', '\'', '"'])
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            return Some(name);
        }
    }
    None
}

fn table_auto_increment_option(ct: &ast::CreateTable) -> Option<u64> {
    let text = ct.table_options.to_string().to_ascii_uppercase();
    let i = text.find("AUTO_INCREMENT")?;
    let rest = text[i + "AUTO_INCREMENT".len()..]
        .trim_start()
        .trim_start_matches('=')
        .trim_start();
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// The definition with ids applied.
pub fn finish(t: NewTable, db: &str, name: &str, id: u32, index_ids: &[u32]) -> TableDef {
    // A new table has no keys yet: its TIME columns key by value whatever
    // the column was copied from (CREATE ... LIKE / SELECT of an older table).
    let mut columns = t.columns;
    for c in &mut columns {
        c.attrs.time_key_ordered = matches!(c.ty, SqlType::Time(_));
    }
    TableDef {
        id,
        db: db.to_string(),
        name: name.to_string(),
        columns,
        primary_key: t.primary_key,
        indexes: t
            .indexes
            .into_iter()
            .zip(index_ids)
            .enumerate()
            .map(|(i, ((name, columns, unique), &id))| IndexDef {
                id,
                name,
                columns,
                unique,
                state: Default::default(),
                attrs: t.index_attrs.get(i).cloned().unwrap_or_default(),
                ready_since: 0,
            })
            .collect(),
        slots: Vec::new(),
        slot_count: 0,
        default_collation: t.default_collation,
        foreign_keys: Vec::new(),
        comment: t.comment,
        partitioning: t.partitioning,
        engine: t.engine.filter(|e| e != "InnoDB"),
        created: crate::catalog::schema::unix_now(),
        stable_since: 0,
    }
}

/// A FULLTEXT index takes CHAR, VARCHAR and TEXT columns only (MySQL's
/// 1283 ER_BAD_FT_COLUMN otherwise), whole (a prefix is ignored, as InnoDB
/// ignores it).
fn check_fulltext_columns(cols: &[usize], columns: &[ColumnDef]) -> Result<()> {
    for &c in cols {
        let col = &columns[c];
        if !matches!(
            col.ty,
            SqlType::Char(_) | SqlType::VarChar(_) | SqlType::Text(_)
        ) {
            return Err(Error::Sql {
                code: 1283,
                sqlstate: *b"HY000",
                message: format!("Column '{}' cannot be part of FULLTEXT index", col.name),
            });
        }
    }
    Ok(())
}

/// The attributes of a `FULLTEXT [INDEX | KEY] [name] (cols)` definition;
/// SPATIAL is refused (1235).
pub fn fulltext_attrs(c: &ast::FullTextOrSpatialConstraint) -> Result<IndexAttrs> {
    if !c.fulltext {
        return Err(Error::Unsupported("SPATIAL indexes".into()));
    }
    Ok(IndexAttrs {
        fulltext: true,
        ..Default::default()
    })
}

/// The column names of a CREATE INDEX.
pub fn create_index_column_names(ci: &ast::CreateIndex) -> Result<Vec<String>> {
    index_column_names(&ci.columns)
}

/// What an index definition declares beyond its columns: the key parts'
/// prefix lengths (`c(10)`) and DESC, `USING` (before or after the column
/// list) and `COMMENT` (see [`IndexAttrs`] for what Canyon does with them).
pub fn index_attrs(
    cols: &[ast::IndexColumn],
    using: Option<&ast::IndexType>,
    options: &[ast::IndexOption],
) -> Result<IndexAttrs> {
    let algorithm = |t: &ast::IndexType| match t {
        ast::IndexType::BTree => Ok(IndexAlgorithm::BTree),
        ast::IndexType::Hash => Ok(IndexAlgorithm::Hash),
        other => Err(Error::Syntax(format!("USING {other}"))),
    };
    let mut attrs = IndexAttrs {
        using: using.map(algorithm).transpose()?,
        ..Default::default()
    };
    for o in options {
        match o {
            ast::IndexOption::Using(t) => attrs.using = Some(algorithm(t)?),
            ast::IndexOption::Comment(c) => attrs.comment = c.clone(),
        }
    }
    let mut prefixes = Vec::with_capacity(cols.len());
    let mut descending = Vec::with_capacity(cols.len());
    for ic in cols {
        prefixes.push(match &ic.column.expr {
            ast::Expr::Function(f) => Some(prefix_length(f)?),
            _ => None,
        });
        descending.push(matches!(
            ic.column.options.sort,
            Some(ast::OrderBySort::Desc)
        ));
    }
    if prefixes.iter().any(Option::is_some) {
        attrs.prefixes = prefixes;
    }
    // A hash index has no order, so a DESC in it means nothing (MariaDB
    // drops it; MySQL's InnoDB builds a B-tree either way).
    if descending.iter().any(|d| *d) && attrs.using != Some(IndexAlgorithm::Hash) {
        attrs.descending = descending;
    }
    Ok(attrs)
}

/// The column of a `col(10)` key part (which sqlparser reads as a call),
/// unquoted: `` `col`(10) `` names `col`.
fn key_part_name(f: &ast::Function) -> String {
    match f.name.0.as_slice() {
        [ast::ObjectNamePart::Identifier(i)] => i.value.clone(),
        _ => f.name.to_string(),
    }
}

/// The `10` of a `col(10)` key part (which sqlparser reads as a call).
fn prefix_length(f: &ast::Function) -> Result<u32> {
    let bad = || Error::Syntax(format!("key part {f}"));
    let ast::FunctionArguments::List(list) = &f.args else {
        return Err(bad());
    };
    match list.args.as_slice() {
        [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::Value(v)))] => {
            match &v.value {
                ast::Value::Number(n, _) => {
                    n.parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(bad)
                }
                _ => Err(bad()),
            }
        }
        _ => Err(bad()),
    }
}

/// MySQL's checks of key parts against their columns: a prefix only on a
/// string column and no longer than it (1089), and a BLOB / TEXT column only
/// with a prefix (1170). A prefix as long as a CHAR / VARCHAR column is no
/// prefix (MySQL drops it), so it is dropped here too.
pub fn check_prefixes(attrs: &mut IndexAttrs, cols: &[usize], columns: &[ColumnDef]) -> Result<()> {
    if attrs.fulltext {
        return check_fulltext_columns(cols, columns);
    }
    for (seq, &c) in cols.iter().enumerate() {
        let col = &columns[c];
        if col.ty == SqlType::Json {
            return Err(Error::Sql {
                code: 3152,
                sqlstate: *b"42000",
                message: format!(
                    "JSON column '{}' supports indexing only via generated columns on a specified JSON path.",
                    col.name
                ),
            });
        }
        let lob = matches!(col.ty, SqlType::Text(_) | SqlType::Blob(_));
        match attrs.prefix(seq) {
            None if lob => {
                return Err(Error::Sql {
                    code: 1170,
                    sqlstate: *b"42000",
                    message: format!(
                        "BLOB/TEXT column '{}' used in key specification without a key length",
                        col.name
                    ),
                })
            }
            None => {}
            Some(n) => {
                let fits = match col.ty {
                    SqlType::Char(l)
                    | SqlType::VarChar(l)
                    | SqlType::Binary(l)
                    | SqlType::VarBinary(l)
                    | SqlType::Text(l)
                    | SqlType::Blob(l) => n <= l,
                    _ => false,
                };
                if matches!(col.ty, SqlType::Char(l) | SqlType::VarChar(l) if l == n) {
                    attrs.prefixes[seq] = None;
                    if attrs.prefixes.iter().all(Option::is_none) {
                        attrs.prefixes.clear();
                    }
                    continue;
                }
                if !fits {
                    return Err(Error::Sql {
                        code: 1089,
                        sqlstate: *b"HY000",
                        message: "Incorrect prefix key; the used key part isn't a string, the \
                                  used length is longer than the key part, or the storage \
                                  engine doesn't support unique prefix keys"
                            .into(),
                    });
                }
            }
        }
    }
    Ok(())
}

/// The column names of an index definition (a `col(10)` prefix indexes the
/// whole column, as in CREATE TABLE).
fn index_column_names(cols: &[ast::IndexColumn]) -> Result<Vec<String>> {
    cols.iter()
        .map(|ic| match &ic.column.expr {
            ast::Expr::Identifier(id) => Ok(id.value.clone()),
            ast::Expr::Function(f) => Ok(key_part_name(f)),
            other => Err(Error::Unsupported(format!("index on expression {other}"))),
        })
        .collect()
}

/// Translates the operations of an ALTER TABLE; `resolve` turns a RENAME
/// target into (database, table). Forms Canyon cannot do online (or at all)
/// are refused with 1235; see `crate::ddl::alter`.
/// `columns` are the table's (a FOREIGN KEY names them) and `fk_checks` the
/// session's `foreign_key_checks`.
pub fn alter_ops(
    at: &ast::AlterTable,
    table_default: Collation,
    columns: &[ColumnDef],
    fk_checks: bool,
    resolve: &dyn Fn(&ast::ObjectName) -> Result<(String, String)>,
) -> Result<Vec<AlterOp>> {
    use ast::AlterTableOperation as Op;
    let mut ops = Vec::with_capacity(at.operations.len());
    for op in &at.operations {
        match op {
            Op::AddColumn {
                column_def: c,
                column_position,
                ..
            } => {
                let (column, pk, unique) = column_def(c, table_default)?;
                if c.options
                    .iter()
                    .any(|o| matches!(o.option, ast::ColumnOption::ForeignKey(_)))
                {
                    // Never dropped silently: the constraint goes in its own
                    // ADD FOREIGN KEY.
                    return Err(Error::Unsupported(
                        "REFERENCES in ADD COLUMN (use ADD FOREIGN KEY)".into(),
                    ));
                }
                let name = column.name.clone();
                ops.push(AlterOp::AddColumn {
                    column,
                    position: match column_position {
                        None => ColumnPosition::Last,
                        Some(ast::MySQLColumnPosition::First) => ColumnPosition::First,
                        Some(ast::MySQLColumnPosition::After(c)) => {
                            ColumnPosition::After(c.value.clone())
                        }
                    },
                });
                if pk {
                    // A table rewrite (`crate::ddl::rewrite`).
                    ops.push(AlterOp::AddPrimaryKey {
                        columns: vec![name.clone()],
                    });
                }
                if unique {
                    ops.push(AlterOp::AddIndex {
                        name: None,
                        columns: vec![name],
                        unique: true,
                        attrs: IndexAttrs::default(),
                    });
                }
            }
            Op::DropPrimaryKey { .. } => ops.push(AlterOp::DropPrimaryKey),
            // ENGINE / COMMENT, as `crate::parse` spells them.
            Op::SetTblProperties { table_properties } => {
                for o in table_properties {
                    let ast::SqlOption::KeyValue {
                        key,
                        value:
                            ast::Expr::Value(ast::ValueWithSpan {
                                value: ast::Value::SingleQuotedString(v),
                                ..
                            }),
                    } = o
                    else {
                        return Err(Error::Unsupported(format!("ALTER TABLE option {o}")));
                    };
                    match key.value.as_str() {
                        crate::parse::spellings::ALTER_OPTION_ENGINE => {
                            ops.push(AlterOp::SetEngine(v.clone()))
                        }
                        crate::parse::spellings::ALTER_OPTION_COMMENT => {
                            ops.push(AlterOp::SetComment(v.clone()))
                        }
                        crate::parse::spellings::ALTER_OPTION_ORDER_BY => ops.push(
                            AlterOp::OrderBy(crate::parse::spellings::parse_alter_order_by(v)),
                        ),
                        _ => return Err(Error::Unsupported(format!("ALTER TABLE option {o}"))),
                    }
                }
            }
            Op::AutoIncrement { value, .. } => {
                let n = value.to_string().parse::<u64>().map_err(|_| {
                    Error::Syntax(format!("AUTO_INCREMENT = {value}: not a number"))
                })?;
                ops.push(AlterOp::SetAutoIncrement(n));
            }
            Op::DropColumn {
                column_names,
                if_exists,
                ..
            } => {
                for c in column_names {
                    ops.push(AlterOp::DropColumn {
                        name: c.value.clone(),
                        if_exists: *if_exists,
                    });
                }
            }
            Op::AddConstraint { constraint, .. } => match constraint {
                ast::TableConstraint::Unique(u) => ops.push(AlterOp::AddIndex {
                    name: u
                        .index_name
                        .as_ref()
                        .or(u.name.as_ref())
                        .map(|n| n.value.clone()),
                    columns: index_column_names(&u.columns)?,
                    unique: true,
                    attrs: index_attrs(&u.columns, u.index_type.as_ref(), &u.index_options)?,
                }),
                ast::TableConstraint::Index(ix) => ops.push(AlterOp::AddIndex {
                    name: ix.name.as_ref().map(|n| n.value.clone()),
                    columns: index_column_names(&ix.columns)?,
                    unique: false,
                    attrs: index_attrs(&ix.columns, ix.index_type.as_ref(), &ix.index_options)?,
                }),
                ast::TableConstraint::FulltextOrSpatial(ft) => ops.push(AlterOp::AddIndex {
                    name: ft.opt_index_name.as_ref().map(|n| n.value.clone()),
                    columns: index_column_names(&ft.columns)?,
                    unique: false,
                    attrs: fulltext_attrs(ft)?,
                }),
                ast::TableConstraint::PrimaryKey(pk) => ops.push(AlterOp::AddPrimaryKey {
                    columns: index_column_names(&pk.columns)?,
                }),
                ast::TableConstraint::ForeignKey(fk) => ops.push(AlterOp::AddForeignKey {
                    fk: foreign_key(fk, columns, None)?,
                    checks: fk_checks,
                }),
                other => return Err(Error::Unsupported(format!("ALTER TABLE ADD {other}"))),
            },
            Op::DropIndex { name } => ops.push(AlterOp::DropIndex {
                name: name.value.clone(),
            }),
            Op::DropForeignKey { name, .. } => ops.push(AlterOp::DropForeignKey {
                name: name.value.clone(),
            }),
            Op::RenameTable { table_name } => {
                let (ast::RenameTableNameKind::As(n) | ast::RenameTableNameKind::To(n)) =
                    table_name;
                let (db, name) = resolve(n)?;
                ops.push(AlterOp::RenameTo { db, name });
            }
            Op::ModifyColumn {
                col_name: old,
                data_type,
                options,
                column_position,
            }
            | Op::ChangeColumn {
                old_name: old,
                data_type,
                options,
                column_position,
                ..
            } => {
                let new_name = match op {
                    Op::ChangeColumn { new_name, .. } => new_name.clone(),
                    _ => old.clone(),
                };
                let declared = ast::ColumnDef {
                    name: new_name,
                    data_type: data_type.clone(),
                    options: options
                        .iter()
                        .map(|o| ast::ColumnOptionDef {
                            name: None,
                            option: o.clone(),
                        })
                        .collect(),
                };
                let (column, pk, unique) = column_def(&declared, table_default)?;
                let name = column.name.clone();
                ops.push(AlterOp::ChangeColumn {
                    old: old.value.clone(),
                    column,
                    position: column_position.as_ref().map(|p| match p {
                        ast::MySQLColumnPosition::First => ColumnPosition::First,
                        ast::MySQLColumnPosition::After(c) => {
                            ColumnPosition::After(c.value.clone())
                        }
                    }),
                });
                if pk {
                    ops.push(AlterOp::AddPrimaryKey {
                        columns: vec![name.clone()],
                    });
                }
                if unique {
                    ops.push(AlterOp::AddIndex {
                        name: None,
                        columns: vec![name],
                        unique: true,
                        attrs: IndexAttrs::default(),
                    });
                }
            }
            Op::RenameColumn {
                old_column_name,
                new_column_name,
            } => {
                let cur = columns
                    .iter()
                    .find(|c| c.name.eq_ignore_ascii_case(&old_column_name.value))
                    .ok_or_else(|| Error::UnknownColumn {
                        column: old_column_name.value.clone(),
                        context: "field list".into(),
                    })?;
                ops.push(AlterOp::ChangeColumn {
                    old: cur.name.clone(),
                    column: ColumnDef {
                        name: new_column_name.value.clone(),
                        ..cur.clone()
                    },
                    position: None,
                });
            }
            Op::AlterColumn { column_name, op } => {
                let default = match op {
                    ast::AlterColumnOperation::SetDefault { value } => Some(default_of(value)?),
                    ast::AlterColumnOperation::DropDefault => None,
                    other => return Err(Error::Unsupported(format!("ALTER COLUMN {other}"))),
                };
                ops.push(AlterOp::SetDefault {
                    name: column_name.value.clone(),
                    default,
                });
            }
            // Every change is done in place without blocking; the requested
            // algorithm and lock level are accepted and ignored.
            Op::Algorithm { .. } | Op::Lock { .. } => {}
            other => return Err(Error::Unsupported(format!("ALTER TABLE {other}"))),
        }
    }
    Ok(ops)
}
