//! The limits on schema comments, checked against the session's
//! `sql_mode` after a definition is translated (`crate::ddl::define` keeps
//! comments whole): MySQL's 2048 characters for a table's COMMENT, 1024 for
//! a column's or an index's. Past them, strict mode answers 1628 / 1629 /
//! 1688; otherwise the comment is cut to the limit and the same code is a
//! warning, as MySQL 8 and MariaDB store it. The members of an ENUM / SET
//! column are checked here too, for the same reason: two equal members are
//! 1291 in strict mode and a note otherwise
//! (`crate::types::enumset::check_distinct`).

use crate::ddl::NewTable;
use canyon_common::{Error, Result};

/// What a COMMENT belongs to, for [`limit_comment`].
#[derive(Debug, Clone, Copy)]
pub enum CommentOf<'a> {
    /// A table's COMMENT option: 2048 characters, 1628.
    Table(&'a str),
    /// A column's: 1024 characters, 1629.
    Column(&'a str),
    /// An index's: 1024 characters, 1688.
    Index(&'a str),
}

/// MySQL's limit on a comment's length: past it, an error in strict
/// `sql_mode`; otherwise the comment is cut to the limit and the same code
/// is a warning (`warn`), as MySQL 8 and MariaDB store it.
pub fn limit_comment(
    text: &mut String,
    of: CommentOf<'_>,
    strict: bool,
    warn: &mut dyn FnMut(u16, String),
) -> Result<()> {
    let (code, limit, message) = match of {
        CommentOf::Table(t) => (1628, 2048, format!("Comment for table '{t}'")),
        CommentOf::Column(c) => (1629, 1024, format!("Comment for field '{c}'")),
        CommentOf::Index(i) => (1688, 1024, format!("Comment for index '{i}'")),
    };
    let Some((cut, _)) = text.char_indices().nth(limit) else {
        return Ok(());
    };
    let message = format!("{message} is too long (max = {limit})");
    if strict {
        return Err(Error::Sql {
            code,
            sqlstate: *b"HY000",
            message,
        });
    }
    text.truncate(cut);
    warn(code, message);
    Ok(())
}

/// [`limit_comment`] for every comment of a new table (`table` its name).
pub fn check_comments(
    t: &mut NewTable,
    table: &str,
    strict: bool,
    warn: &mut dyn FnMut(u16, String),
) -> Result<()> {
    limit_comment(&mut t.comment, CommentOf::Table(table), strict, warn)?;
    for c in &mut t.columns {
        limit_comment(
            &mut c.attrs.comment,
            CommentOf::Column(&c.name),
            strict,
            warn,
        )?;
        check_members(c, strict, warn)?;
    }
    for (ix, attrs) in t.indexes.iter().zip(&mut t.index_attrs) {
        limit_comment(&mut attrs.comment, CommentOf::Index(&ix.0), strict, warn)?;
    }
    Ok(())
}

/// [`limit_comment`] for the comments ALTER TABLE operations declare.
pub fn check_alter_comments(
    ops: &mut [crate::ddl::alter::AlterOp],
    strict: bool,
    warn: &mut dyn FnMut(u16, String),
) -> Result<()> {
    use crate::ddl::alter::AlterOp;
    for op in ops {
        match op {
            AlterOp::AddColumn { column, .. } | AlterOp::ChangeColumn { column, .. } => {
                let of = CommentOf::Column(&column.name);
                limit_comment(&mut column.attrs.comment, of, strict, warn)?;
                check_members(column, strict, warn)?;
            }
            AlterOp::SetComment(text) => {
                // (The table's name is not at hand: MySQL's message names it.)
                limit_comment(text, CommentOf::Table(""), strict, warn)?
            }
            AlterOp::AddIndex {
                name,
                columns,
                attrs,
                ..
            } => {
                let of = CommentOf::Index(
                    name.as_deref()
                        .or(columns.first().map(|c| c.as_str()))
                        .unwrap_or(""),
                );
                limit_comment(&mut attrs.comment, of, strict, warn)?
            }
            _ => {}
        }
    }
    Ok(())
}

/// The duplicate-member check of a declared ENUM / SET column (see the
/// module doc).
fn check_members(
    c: &crate::catalog::ColumnDef,
    strict: bool,
    warn: &mut dyn FnMut(u16, String),
) -> Result<()> {
    match c.ty.members() {
        Some((kind, m)) => crate::types::enumset::check_distinct(kind, &c.name, m, strict, warn),
        None => Ok(()),
    }
}
