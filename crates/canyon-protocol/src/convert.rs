//! Character set conversion of what crosses the wire, for sessions whose
//! `character_set_client` or `character_set_results` is not UTF-8.
//!
//! The engine speaks UTF-8 only (canyon-sql `types::charset` has the model).
//! Here, at the protocol edge:
//! - string parameters of COM_STMT_EXECUTE (the types a client sends for
//!   text: VARCHAR, VAR_STRING, STRING, ENUM, SET) are converted from
//!   `character_set_client` ([`convert_params`]); BLOB-typed parameters are
//!   bytes and are not, as in MySQL (`setup_one_conversion_function`);
//! - result values of character columns (every column whose metadata
//!   character set is not `binary`, 63) are converted to
//!   `character_set_results` in place ([`convert_row`]), characters it lacks
//!   becoming `?`; the column definitions' names and character set number
//!   follow (`crate::text::write_column_definition_as`).
//!
//! A session in utf8mb4 (or with NULL or binary results) never calls these:
//! the fast path has no extra pass and no copy.

use canyon_sql::collation::Collation;
use canyon_sql::{charset, Charset, Column, Value};

/// The character set number a character column reports when its values are
/// sent in `cs`: the default collation's id (8 for latin1, 51 for cp1251).
/// Binary columns (and numbers, dates: 63) keep theirs.
pub fn column_charset_id(col_charset: u16, cs: Charset) -> u16 {
    if col_charset == charset::BINARY || cs == Charset::Utf8mb4 {
        return col_charset;
    }
    Collation::for_charset(cs.name()).map_or(col_charset, Collation::id)
}

/// Converts the string values of character columns in `row` from UTF-8 to
/// `cs`, in place. Values that are not UTF-8 (which a character column
/// should not hold) are left as they are.
pub fn convert_row(columns: &[Column], row: &mut [Value], cs: Charset) {
    for (col, v) in columns.iter().zip(row.iter_mut()) {
        if col.charset == charset::BINARY {
            continue;
        }
        if let Value::Bytes(b) = v {
            if b.is_ascii() {
                continue;
            }
            let Ok(text) = std::str::from_utf8(b) else {
                continue;
            };
            if let std::borrow::Cow::Owned(out) = cs.encode(text) {
                *b = out;
            }
        }
    }
}

/// Converts COM_STMT_EXECUTE's string parameters from the client's character
/// set `cs` to UTF-8, by the types the client announced (`types`; when it
/// never sent any, nothing is converted).
pub fn convert_params(
    params: &mut [Value],
    types: Option<&[crate::binary::ParamType]>,
    cs: Charset,
) {
    let Some(types) = types else {
        return;
    };
    for (v, ty) in params.iter_mut().zip(types) {
        // VARCHAR, ENUM, SET, VAR_STRING, STRING: text. BLOB types (0xf9 to
        // 0xfc), JSON and the rest are not converted.
        if !matches!(ty.code, 0x0f | 0xf7 | 0xf8 | 0xfd | 0xfe) {
            continue;
        }
        if let Value::Bytes(b) = v {
            if b.is_ascii() {
                continue;
            }
            let text = cs.decode(b).into_owned();
            *b = text.into_bytes();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_convert_only_character_columns() {
        let text = canyon_sql::types::expr_column("t", canyon_sql::types::ExprKind::String);
        let mut bin = text.clone();
        bin.charset = charset::BINARY;
        let mut row = vec![Value::str("é€ж"), Value::str("é")];
        convert_row(&[text.clone(), bin], &mut row, Charset::Latin1);
        assert_eq!(row[0], Value::Bytes(vec![0xE9, 0x80, b'?']));
        assert_eq!(row[1], Value::str("é"));
        assert_eq!(column_charset_id(text.charset, Charset::Latin1), 8);
        assert_eq!(column_charset_id(text.charset, Charset::Cp1251), 51);
        assert_eq!(column_charset_id(charset::BINARY, Charset::Cp1251), 63);
    }

    #[test]
    fn string_params_convert_blobs_do_not() {
        use crate::binary::ParamType;
        let t = |code| ParamType {
            code,
            unsigned: false,
        };
        let mut params = vec![Value::Bytes(vec![0xE9]), Value::Bytes(vec![0xE9])];
        convert_params(&mut params, Some(&[t(0xfd), t(0xfc)]), Charset::Latin1);
        assert_eq!(params[0], Value::str("é"));
        assert_eq!(params[1], Value::Bytes(vec![0xE9]));
    }
}
