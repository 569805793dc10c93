//! LOAD DATA's reading side: the file's bytes cut into records and fields
//! exactly as MySQL 8.0's `READ_INFO` (sql_load.cc) cuts them, and a field's
//! text stored into a column as `Field::store` would, with the warning each
//! bad value gets.
//!
//! # The rules (FIELDS / LINES; MySQL 8.0 manual, 15.2.9 "LOAD DATA")
//!
//! | input                                  | field                              |
//! |----------------------------------------|------------------------------------|
//! | `\N` (the escape, then `N`), alone     | NULL                               |
//! | `NULL` unenclosed, ENCLOSED BY given   | NULL                               |
//! | `\0 \b \n \r \t \Z`                    | NUL, backspace, LF, CR, tab, ^Z     |
//! | escape + any other byte `x`            | `x` (the escape dropped)           |
//! | escape at the end of the file          | the escape itself                  |
//! | `"a,b"` (ENCLOSED BY '"')              | `a,b`: terminators inside are data |
//! | `""` inside an enclosed field          | one `"`                            |
//! | `"` not followed by a terminator       | a literal `"`, the field goes on   |
//! | `"abc` reaching the end of the file    | `abc`                              |
//!
//! A record starts after LINES STARTING BY's prefix, searched from where
//! the previous record ended — across line ends, so a line without the
//! prefix is skipped whole, and text before the prefix on a line is
//! dropped. A record ends at LINES TERMINATED BY outside an enclosed field,
//! or at the end of the file; a file ending with the terminator has no
//! empty last record, but an empty line inside it is a record of one empty
//! field. IGNORE n LINES skips n line terminators first (escaped bytes are
//! skipped over, as `READ_INFO::next_line` does).
//!
//! Not implemented: fixed-width rows (FIELDS TERMINATED BY '' ENCLOSED BY
//! ''), refused by the parser; character-set conversion (the bytes are
//! stored as they are).

use crate::parse::load::LoadFormat;
use crate::types::coerce;
use crate::types::sqltype::numeric_prefix;
use crate::types::sqltype::SqlType;
use crate::types::value::Value;
use canyon_common::{Error, Result};

/// One field of a record: `None` is NULL.
pub type LoadField = Option<Vec<u8>>;

/// How a field ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FieldEnd {
    Field,
    Line,
    Eof,
}

/// Cuts a file's bytes into records of fields (see the module doc).
pub struct FieldReader<'a> {
    data: &'a [u8],
    pos: usize,
    fmt: &'a LoadFormat,
    /// The last call stopped at the end of `data` (for [`StreamReader`]:
    /// the record or line may go on in bytes not yet received).
    at_end: bool,
}

impl<'a> FieldReader<'a> {
    /// A reader of `data` in `fmt`.
    pub fn new(data: &'a [u8], fmt: &'a LoadFormat) -> FieldReader<'a> {
        FieldReader {
            data,
            pos: 0,
            fmt,
            at_end: false,
        }
    }

    /// Skips `n` lines (IGNORE n LINES).
    pub fn skip_lines(&mut self, n: u64) {
        let term = &self.fmt.line_term;
        for _ in 0..n {
            loop {
                if self.pos >= self.data.len() {
                    self.at_end = true;
                    return;
                }
                if !term.is_empty() && self.data[self.pos..].starts_with(term) {
                    self.pos += term.len();
                    break;
                }
                if Some(self.data[self.pos]) == self.fmt.escaped {
                    self.pos += 1;
                }
                self.pos += 1;
            }
        }
    }

    /// Reads the next record's fields into `out` (cleared first); `false` at
    /// the end of the file.
    pub fn next_record(&mut self, out: &mut Vec<LoadField>) -> bool {
        out.clear();
        self.at_end = false;
        if self.pos >= self.data.len() {
            self.at_end = true;
            return false;
        }
        if !self.fmt.line_start.is_empty() {
            match find(&self.data[self.pos..], &self.fmt.line_start) {
                Some(at) => self.pos += at + self.fmt.line_start.len(),
                None => {
                    self.pos = self.data.len();
                    self.at_end = true;
                    return false;
                }
            }
        }
        loop {
            let (field, end) = self.read_field();
            out.push(field);
            match end {
                FieldEnd::Field => {}
                FieldEnd::Line => return true,
                FieldEnd::Eof => {
                    self.at_end = true;
                    return true;
                }
            }
        }
    }

    fn at(&self, pos: usize, what: &[u8]) -> bool {
        !what.is_empty() && self.data[pos..].starts_with(what)
    }

    /// One field, from `pos` to the terminator after it (consumed).
    fn read_field(&mut self) -> (LoadField, FieldEnd) {
        let fmt = self.fmt;
        let data = self.data;
        let mut buf = Vec::new();
        let mut found_null = false;
        let enclosed = match fmt.enclosed {
            Some(q) if data.get(self.pos) == Some(&q) => {
                self.pos += 1;
                Some(q)
            }
            _ => None,
        };
        // Bytes that may start something: the escape, the enclosure, the
        // first byte of either terminator. A run of other bytes is data,
        // copied whole.
        let special = |b: u8| {
            Some(b) == fmt.escaped
                || Some(b) == fmt.enclosed
                || fmt.field_term.first() == Some(&b)
                || fmt.line_term.first() == Some(&b)
        };
        let end = loop {
            let rest = &data[self.pos.min(data.len())..];
            let run = rest.iter().position(|&b| special(b)).unwrap_or(rest.len());
            if run > 0 {
                buf.extend_from_slice(&rest[..run]);
                self.pos += run;
            }
            let Some(&c) = data.get(self.pos) else {
                break FieldEnd::Eof;
            };
            if Some(c) == fmt.escaped && fmt.escaped != fmt.enclosed {
                self.pos += 1;
                let Some(&n) = data.get(self.pos) else {
                    buf.push(c);
                    break FieldEnd::Eof;
                };
                self.pos += 1;
                buf.push(match n {
                    b'0' => 0,
                    b'b' => 8,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'Z' => 26,
                    b'N' => {
                        found_null = true;
                        b'N'
                    }
                    other => other,
                });
                continue;
            }
            if Some(c) == fmt.enclosed {
                // Doubled: one enclosure character (also how an escape equal
                // to the enclosure escapes it).
                if data.get(self.pos + 1) == Some(&c)
                    && (enclosed.is_some() || fmt.escaped == Some(c))
                {
                    buf.push(c);
                    self.pos += 2;
                    continue;
                }
                if enclosed.is_some() {
                    let after = self.pos + 1;
                    if after >= data.len() {
                        self.pos = after;
                        break FieldEnd::Eof;
                    }
                    if self.at(after, &fmt.line_term) {
                        self.pos = after + fmt.line_term.len();
                        break FieldEnd::Line;
                    }
                    if self.at(after, &fmt.field_term) {
                        self.pos = after + fmt.field_term.len();
                        break FieldEnd::Field;
                    }
                    // A stray enclosure inside the field: data.
                }
            }
            if enclosed.is_none() {
                if self.at(self.pos, &fmt.line_term) {
                    self.pos += fmt.line_term.len();
                    break FieldEnd::Line;
                }
                if self.at(self.pos, &fmt.field_term) {
                    self.pos += fmt.field_term.len();
                    break FieldEnd::Field;
                }
            }
            buf.push(c);
            self.pos += 1;
        };
        let null = (found_null && buf == b"N")
            || (enclosed.is_none() && fmt.enclosed.is_some() && buf == b"NULL");
        (if null { None } else { Some(buf) }, end)
    }
}

/// Where a [`StreamReader`] gets more bytes: appends the next piece of the
/// file (one packet's payload) to the buffer and returns `true`, or returns
/// `false` at the end of the file.
pub type ByteSource<'s> = dyn FnMut(&mut Vec<u8>) -> Result<bool> + 's;

/// [`FieldReader`] over a file that arrives in pieces (LOAD DATA LOCAL's
/// packets): it keeps only the bytes of records not yet read. A record
/// that reaches the end of the bytes received so far is read again from
/// its start once more have come — so a terminator, an escape or a
/// LINES STARTING BY prefix split between two packets reads as it would
/// whole. (A record spanning many packets is re-read once per packet; a
/// record is a line, so this costs little.)
pub struct StreamReader<'a, 's> {
    buf: Vec<u8>,
    pos: usize,
    done: bool,
    fmt: &'a LoadFormat,
    source: &'a mut ByteSource<'s>,
}

impl<'a, 's> StreamReader<'a, 's> {
    /// A reader of the bytes `source` gives, in `fmt`.
    pub fn new(fmt: &'a LoadFormat, source: &'a mut ByteSource<'s>) -> StreamReader<'a, 's> {
        StreamReader {
            buf: Vec::new(),
            pos: 0,
            done: false,
            fmt,
            source,
        }
    }

    /// Asks the source for more bytes, dropping those already read.
    fn pull(&mut self) -> Result<()> {
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        if !(self.source)(&mut self.buf)? {
            self.done = true;
        }
        Ok(())
    }

    /// Skips `n` lines (IGNORE n LINES).
    pub fn skip_lines(&mut self, n: u64) -> Result<()> {
        for _ in 0..n {
            loop {
                let mut r = FieldReader {
                    data: &self.buf,
                    pos: self.pos,
                    fmt: self.fmt,
                    at_end: false,
                };
                r.skip_lines(1);
                if !r.at_end || self.done {
                    self.pos = r.pos;
                    break;
                }
                self.pull()?;
            }
        }
        Ok(())
    }

    /// Reads the next record's fields into `out`; `false` at the end.
    pub fn next_record(&mut self, out: &mut Vec<LoadField>) -> Result<bool> {
        loop {
            let mut r = FieldReader {
                data: &self.buf,
                pos: self.pos,
                fmt: self.fmt,
                at_end: false,
            };
            let got = r.next_record(out);
            if !r.at_end || self.done {
                self.pos = r.pos;
                return Ok(got);
            }
            self.pull()?;
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A warning a field's value raised, as (errno, message).
pub type LoadWarning = (u16, String);

/// Stores the text of a field into a column of type `ty`: the value, and the
/// warning MySQL raises for a value it had to change (1366 incorrect value,
/// 1265 data truncated, 1264 out of range, 1406 too long, 1292 bad
/// date/time). The caller decides whether a warning is an error (strict
/// mode without IGNORE). `row` is the record's number, from 1.
pub fn store_field(
    text: Vec<u8>,
    ty: SqlType,
    column: &str,
    row: u64,
) -> (Value, Option<LoadWarning>) {
    let e = match coerce(Value::Bytes(text.clone()), ty, column, row) {
        Ok(v) => {
            // A DECIMAL rounded to the column's scale: note 1265, as an
            // INSERT's (`crate::expr::eval::coerce_column`).
            let note = match (ty, &v) {
                (SqlType::Decimal { scale, .. }, Value::Decimal(stored))
                    if crate::types::sqltype::decimal_rounding(&Value::Bytes(text), scale)
                        == Some(*stored) =>
                {
                    Some((
                        crate::expr::eval::NOTE | 1265,
                        format!("Data truncated for column '{column}' at row {row}"),
                    ))
                }
                _ => None,
            };
            return (v, note);
        }
        Err(e) => e,
    };
    match e {
        Error::IncorrectValue { type_name, .. }
            if ty.is_integer() || matches!(type_name.as_str(), "decimal" | "double") =>
        {
            // Field_num::store: the longest numeric prefix, then the range.
            let s = String::from_utf8_lossy(&text);
            let prefix = numeric_prefix(&s);
            let (n, _) = store_field(
                if prefix.is_empty() {
                    b"0".to_vec()
                } else {
                    prefix.as_bytes().to_vec()
                },
                ty,
                column,
                row,
            );
            let w = if prefix.is_empty() {
                (
                    1366,
                    format!(
                        "Incorrect {type_name} value: '{}' for column '{column}' at row {row}",
                        s
                    ),
                )
            } else {
                (
                    1265,
                    format!("Data truncated for column '{column}' at row {row}"),
                )
            };
            (n, Some(w))
        }
        Error::OutOfRange { .. } => {
            let v = if ty.is_integer() {
                let (lo, hi) = ty.int_range();
                let neg = text.first() == Some(&b'-');
                let n = if neg { lo } else { hi };
                if ty.is_unsigned() {
                    Value::UInt(n.max(0) as u64)
                } else {
                    Value::Int(n as i64)
                }
            } else {
                implicit_default(ty)
            };
            (
                v,
                Some((
                    1264,
                    format!("Out of range value for column '{column}' at row {row}"),
                )),
            )
        }
        Error::DataTooLong { .. } => {
            let cut = match ty {
                SqlType::Char(n) | SqlType::VarChar(n) => {
                    let s = String::from_utf8_lossy(&text);
                    s.chars().take(n as usize).collect::<String>().into_bytes()
                }
                SqlType::Binary(n)
                | SqlType::VarBinary(n)
                | SqlType::Text(n)
                | SqlType::Blob(n) => text[..text.len().min(n as usize)].to_vec(),
                _ => Vec::new(),
            };
            let v =
                coerce(Value::Bytes(cut), ty, column, row).unwrap_or_else(|_| implicit_default(ty));
            (
                v,
                Some((
                    1265,
                    format!("Data truncated for column '{column}' at row {row}"),
                )),
            )
        }
        Error::IncorrectValue {
            type_name, value, ..
        } => {
            let code = if matches!(
                type_name.as_str(),
                "date" | "datetime" | "time" | "timestamp"
            ) {
                1292
            } else {
                1366
            };
            let msg = format!(
                "Incorrect {type_name} value: '{value}' for column '{column}' at row {row}"
            );
            (implicit_default(ty), Some((code, msg)))
        }
        other => (implicit_default(ty), Some((1366, other.to_string()))),
    }
}

/// [`store_field`] for a statement in strict mode without IGNORE: a value
/// that would raise a warning is the statement's error instead (1406 for a
/// too-long string, as MySQL's strict mode reports it; the warning's own
/// code otherwise). A note (see [`crate::expr::eval::NOTE`]) stays one.
pub fn store_field_strict(
    text: Vec<u8>,
    ty: SqlType,
    column: &str,
    row: u64,
) -> Result<(Value, Option<LoadWarning>)> {
    match store_field(text, ty, column, row) {
        (v, None) => Ok((v, None)),
        (v, Some(note)) if note.0 & crate::expr::eval::NOTE != 0 => Ok((v, Some(note))),
        (_, Some((1265, _))) if ty.is_string() => Err(Error::DataTooLong {
            column: column.to_string(),
            row,
        }),
        (_, Some((code, message))) => Err(Error::StrictModeError { code, message }),
    }
}

/// The value MySQL stores in a NOT NULL column given NULL or nothing by
/// LOAD DATA: zero (for YEAR the year 0000), the empty string, or the zero
/// date.
pub fn implicit_default(ty: SqlType) -> Value {
    if ty == SqlType::Year {
        // The year 0000 (the string '0' would be 2000).
        return Value::UInt(0);
    }
    for zero in [&b""[..], b"0", b"0000-00-00 00:00:00", b"00:00:00"] {
        if let Ok(v) = coerce(Value::Bytes(zero.to_vec()), ty, "", 0) {
            return v;
        }
    }
    Value::Null
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(data: &str, fmt: &LoadFormat, skip: u64) -> Vec<Vec<Option<String>>> {
        let mut r = FieldReader::new(data.as_bytes(), fmt);
        r.skip_lines(skip);
        let mut out = Vec::new();
        let mut rec = Vec::new();
        while r.next_record(&mut rec) {
            out.push(
                rec.iter()
                    .map(|f| f.as_ref().map(|b| String::from_utf8_lossy(b).into_owned()))
                    .collect(),
            );
        }
        out
    }

    fn s(x: &str) -> Option<String> {
        Some(x.to_string())
    }

    fn csv() -> LoadFormat {
        LoadFormat {
            field_term: b",".to_vec(),
            enclosed: Some(b'"'),
            ..LoadFormat::default()
        }
    }

    #[test]
    fn default_format_tabs_and_escapes() {
        let f = LoadFormat::default();
        assert_eq!(
            records("1\tabc\n2\t\\N\n3\ta\\tb\\nc\\\\d\\0\n", &f, 0),
            vec![
                vec![s("1"), s("abc")],
                vec![s("2"), None],
                vec![s("3"), s("a\tb\nc\\d\0")],
            ]
        );
        // \N only alone is NULL; an escaped terminator is data.
        assert_eq!(
            records("\\Nx\ta\\\tb\n", &f, 0),
            vec![vec![s("Nx"), s("a\tb")]]
        );
        // No terminator at the end: still a record; an empty line is a record.
        assert_eq!(
            records("a\n\nb", &f, 0),
            vec![vec![s("a")], vec![s("")], vec![s("b")]]
        );
        // The escape at the very end is kept.
        assert_eq!(records("a\\", &f, 0), vec![vec![s("a\\")]]);
    }

    #[test]
    fn enclosed_fields() {
        let f = csv();
        assert_eq!(
            records("\"a,b\",\"say \"\"hi\"\"\",NULL,\"NULL\",x\"y\n", &f, 0),
            vec![vec![s("a,b"), s("say \"hi\""), None, s("NULL"), s("x\"y")]]
        );
        // A terminator inside an enclosed field is data, a stray quote too.
        assert_eq!(
            records("\"a\nb\",\"c\"d\"\n\"open", &f, 0),
            vec![vec![s("a\nb"), s("c\"d")], vec![s("open")]]
        );
        // A trailing field terminator gives an empty last field.
        assert_eq!(records("1,\n", &f, 0), vec![vec![s("1"), s("")]]);
    }

    #[test]
    fn escape_equal_to_enclosure() {
        let f = LoadFormat {
            escaped: Some(b'"'),
            ..csv()
        };
        assert_eq!(
            records("\"a\"\"b\",c\n", &f, 0),
            vec![vec![s("a\"b"), s("c")]]
        );
    }

    #[test]
    fn lines_starting_by_and_ignore_lines() {
        let f = LoadFormat {
            field_term: b",".to_vec(),
            enclosed: Some(b'"'),
            line_start: b"xxx".to_vec(),
            ..LoadFormat::default()
        };
        // The manual's example: the third line has no prefix and is skipped.
        assert_eq!(
            records("xxx\"abc\",1\nsomething xxx\"def\",2\n\"ghi\",3", &f, 0),
            vec![vec![s("abc"), s("1")], vec![s("def"), s("2")]]
        );
        let t = LoadFormat {
            line_term: b"\r\n".to_vec(),
            ..LoadFormat::default()
        };
        assert_eq!(
            records("h1\th2\r\n1\t2\r\n3\t4\r\n", &t, 1),
            vec![vec![s("1"), s("2")], vec![s("3"), s("4")]]
        );
        assert_eq!(records("a\nb\n", &t, 5), Vec::<Vec<Option<String>>>::new());
    }

    /// The records of `data` read by a [`StreamReader`] fed `chunk` bytes
    /// at a time.
    fn streamed(data: &str, fmt: &LoadFormat, skip: u64, chunk: usize) -> Vec<Vec<Option<String>>> {
        let mut pieces = data.as_bytes().chunks(chunk);
        let mut source = |buf: &mut Vec<u8>| -> Result<bool> {
            Ok(match pieces.next() {
                Some(p) => {
                    buf.extend_from_slice(p);
                    true
                }
                None => false,
            })
        };
        let mut r = StreamReader::new(fmt, &mut source);
        r.skip_lines(skip).expect("no source error");
        let mut out = Vec::new();
        let mut rec = Vec::new();
        while r.next_record(&mut rec).expect("no source error") {
            out.push(
                rec.iter()
                    .map(|f| f.as_ref().map(|b| String::from_utf8_lossy(b).into_owned()))
                    .collect(),
            );
        }
        out
    }

    #[test]
    fn packets_cut_anywhere_read_the_same() {
        let starting = LoadFormat {
            line_start: b"xxx".to_vec(),
            line_term: b"\r\n".to_vec(),
            ..csv()
        };
        let cases: Vec<(&str, LoadFormat, u64)> = vec![
            (
                "1\tabc\n2\t\\N\n3\ta\\tb\\nc\n\nlast",
                LoadFormat::default(),
                0,
            ),
            (
                "h\n\"a,b\",\"say \"\"hi\"\"\",NULL\n\"a\nb\",x\"y\n",
                csv(),
                1,
            ),
            (
                "head\r\nxxx\"abc\",1\r\nno\r\nzz xxx\"d\r\ne\",2\r\n",
                starting,
                1,
            ),
        ];
        for (data, fmt, skip) in &cases {
            let whole = records(data, fmt, *skip);
            for chunk in 1..=data.len() {
                assert_eq!(
                    streamed(data, fmt, *skip, chunk),
                    whole,
                    "{data:?} in {chunk}-byte pieces"
                );
            }
        }
    }

    #[test]
    fn stores_with_mysqls_warnings() {
        let int = SqlType::Int { unsigned: false };
        assert_eq!(
            store_field(b"42".to_vec(), int, "c", 1),
            (Value::Int(42), None)
        );
        let (v, w) = store_field(b"12abc".to_vec(), int, "c", 3);
        assert_eq!(v, Value::Int(12));
        assert_eq!(w.map(|w| w.0), Some(1265));
        let (v, w) = store_field(b"".to_vec(), int, "c", 2);
        assert_eq!(v, Value::Int(0));
        assert_eq!(
            w,
            Some((
                1366,
                "Incorrect integer value: '' for column 'c' at row 2".into()
            ))
        );
        let (v, w) = store_field(b"99999999999".to_vec(), int, "c", 1);
        assert_eq!(v, Value::Int(i32::MAX as i64));
        assert_eq!(w.map(|w| w.0), Some(1264));
        let (v, w) = store_field(b"abcdef".to_vec(), SqlType::VarChar(3), "c", 1);
        assert_eq!(v, Value::Bytes(b"abc".to_vec()));
        assert_eq!(w.map(|w| w.0), Some(1265));
        // A DECIMAL that loses fractional digits: rounded, with a note that
        // strict mode keeps a note; trailing zeros lose nothing.
        let dec = SqlType::Decimal {
            precision: 5,
            scale: 2,
            unsigned: false,
        };
        let (v, w) = store_field(b"1.235".to_vec(), dec, "c", 4);
        assert_eq!(v.to_display(), "1.24");
        assert_eq!(
            w,
            Some((
                crate::expr::eval::NOTE | 1265,
                "Data truncated for column 'c' at row 4".into()
            ))
        );
        assert!(matches!(
            store_field_strict(b"1.235".to_vec(), dec, "c", 4),
            Ok((_, Some(_)))
        ));
        assert_eq!(store_field(b"1.20000".to_vec(), dec, "c", 1).1, None);
        assert_eq!(numeric_prefix(" -1.5e3x"), "-1.5e3");
        assert_eq!(numeric_prefix("1e"), "1");
        assert_eq!(numeric_prefix("x1"), "");
    }
}
