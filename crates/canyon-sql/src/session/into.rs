//! SELECT ... INTO: the query has run (`Session::run_inner`, every plan and
//! privilege check of a SELECT); its result goes to user variables here
//! instead of to the client (`crate::parse::into` parsed the target).
//!
//! MySQL 8's rules for `INTO @a, @b`: the select list has as many columns
//! as there are variables (1222 otherwise), the query gives at most one row
//! (1172 "Result consisted of more than one row"; no variable changes), and
//! no row leaves the variables as they were with warning 1329. The client
//! gets an OK packet counting the rows (1 or 0).
//!
//! `INTO OUTFILE` / `INTO DUMPFILE` write a new file on the server: the
//! global FILE privilege (1227), a path `secure_file_priv` allows (1290; a
//! relative name is taken from its directory), and a file that does not
//! exist yet (1086; MySQL never overwrites). OUTFILE writes each row as
//! LOAD DATA reads it back with the same FIELDS / LINES clauses (MySQL
//! manual 15.2.13.1): values as the text protocol shows them
//! (`crate::types::text`), NULL as `\N` (or `NULL` without an escape
//! character), ENCLOSED BY around every value (OPTIONALLY: around string
//! and temporal ones), and the escape character before itself, the
//! enclosure character, NUL (`\0`) and — when nothing encloses the value —
//! the first characters of the field and line terminators. CHARACTER SET
//! converts string values into that set. DUMPFILE writes one row's values
//! back to back, unescaped (more rows: 1172). The OK packet counts the rows
//! written.

use super::state::*;
use crate::parse::into::IntoTarget;
use crate::types::result::QueryResult;
use canyon_common::{Error, Result};

impl Session {
    /// Sends `result` (the query's rows) where `into` says.
    pub(super) fn select_into(
        &mut self,
        result: QueryResult,
        into: &IntoTarget,
    ) -> Result<QueryResult> {
        let QueryResult::Rows { columns, rows, .. } = result else {
            return Err(Error::Internal(
                "SELECT ... INTO without a result set".into(),
            ));
        };
        match into {
            IntoTarget::Vars(vars) => {
                if columns.len() != vars.len() {
                    return Err(Error::Sql {
                        code: 1222,
                        sqlstate: *b"21000",
                        message: "The used SELECT statements have a different number of columns"
                            .into(),
                    });
                }
                let mut rows = rows.into_iter();
                let Some(row) = rows.next() else {
                    self.warning(
                        1329,
                        "No data - zero rows fetched, selected, or processed".into(),
                    );
                    return Ok(ok(0));
                };
                if rows.next().is_some() {
                    return Err(Error::Sql {
                        code: 1172,
                        sqlstate: *b"42000",
                        message: "Result consisted of more than one row".into(),
                    });
                }
                for (name, value) in vars.iter().zip(row) {
                    self.state.user_vars.insert(name.clone(), value);
                }
                Ok(ok(1))
            }
            IntoTarget::Outfile {
                path,
                charset,
                format,
            } => {
                let charset = match charset {
                    Some(name) => Some(
                        crate::types::charset::Charset::from_name(name)
                            .ok_or_else(|| Error::UnknownCharset(name.clone()))?,
                    ),
                    None => None,
                };
                let mut file = self.new_server_file(path)?;
                let mut buf = Vec::new();
                for row in &rows {
                    buf.extend_from_slice(&format.line_start);
                    for (i, (value, col)) in row.iter().zip(columns.iter()).enumerate() {
                        if i > 0 {
                            buf.extend_from_slice(&format.field_term);
                        }
                        write_field(&mut buf, value, col, format, charset);
                    }
                    buf.extend_from_slice(&format.line_term);
                    if buf.len() >= 1 << 16 {
                        write_all(&mut file, &buf, path)?;
                        buf.clear();
                    }
                }
                write_all(&mut file, &buf, path)?;
                Ok(ok(rows.len() as u64))
            }
            IntoTarget::Dumpfile(path) => {
                if rows.len() > 1 {
                    return Err(Error::Sql {
                        code: 1172,
                        sqlstate: *b"42000",
                        message: "Result consisted of more than one row".into(),
                    });
                }
                let mut file = self.new_server_file(path)?;
                let mut buf = Vec::new();
                for row in &rows {
                    for (value, col) in row.iter().zip(columns.iter()) {
                        if let Some(text) = crate::types::text::column_text(value, col) {
                            buf.extend_from_slice(&text);
                        }
                    }
                }
                write_all(&mut file, &buf, path)?;
                Ok(ok(rows.len() as u64))
            }
        }
    }

    /// Creates the file of INTO OUTFILE / DUMPFILE (see the module doc).
    fn new_server_file(&mut self, name: &str) -> Result<std::fs::File> {
        let cat = self.state.catalog();
        self.state.check_super(&cat, "FILE")?;
        drop(cat);
        let path = self.server_file(name)?;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => Error::Sql {
                    code: 1086,
                    sqlstate: *b"HY000",
                    message: format!("File '{name}' already exists"),
                },
                _ => Error::Sql {
                    code: 1,
                    sqlstate: *b"HY000",
                    message: format!("Can't create/write to file '{name}' ({e})"),
                },
            })
    }
}

/// Appends `buf` to the file, or MySQL's 3 "Error writing file".
fn write_all(file: &mut std::fs::File, buf: &[u8], name: &str) -> Result<()> {
    use std::io::Write;
    file.write_all(buf).map_err(|e| Error::Sql {
        code: 3,
        sqlstate: *b"HY000",
        message: format!("Error writing file '{name}' ({e})"),
    })
}

/// Appends one value of an OUTFILE row (see the module doc).
fn write_field(
    out: &mut Vec<u8>,
    value: &crate::types::value::Value,
    col: &crate::types::result::Column,
    format: &crate::parse::load::LoadFormat,
    charset: Option<crate::types::charset::Charset>,
) {
    use crate::types::result::ColumnType as T;
    let Some(text) = crate::types::text::column_text(value, col) else {
        match format.escaped {
            Some(e) => out.extend_from_slice(&[e, b'N']),
            None => out.extend_from_slice(b"NULL"),
        }
        return;
    };
    let text = match (charset, value) {
        (Some(cs), crate::types::value::Value::Bytes(_)) if col.charset != 63 => {
            match std::str::from_utf8(&text) {
                Ok(s) => std::borrow::Cow::Owned(cs.encode(s).into_owned()),
                Err(_) => text,
            }
        }
        _ => text,
    };
    let numeric = matches!(
        col.column_type,
        T::Tiny
            | T::Short
            | T::Long
            | T::LongLong
            | T::Int24
            | T::Float
            | T::Double
            | T::Decimal
            | T::NewDecimal
            | T::Year
    );
    let enclose = format
        .enclosed
        .filter(|_| !(format.optionally_enclosed && numeric));
    if let Some(q) = enclose {
        out.push(q);
    }
    match format.escaped {
        None => out.extend_from_slice(&text),
        Some(esc) => {
            let field_first = format.field_term.first().copied();
            let line_first = format.line_term.first().copied();
            for &b in text.iter() {
                if b == 0 {
                    out.extend_from_slice(&[esc, b'0']);
                    continue;
                }
                let special = b == esc
                    || Some(b) == format.enclosed
                    || (enclose.is_none() && (Some(b) == field_first || Some(b) == line_first));
                if special {
                    out.push(esc);
                }
                out.push(b);
            }
        }
    }
    if let Some(q) = enclose {
        out.push(q);
    }
}
