//! Row-based events: TABLE_MAP, and WRITE / UPDATE / DELETE_ROWS version 2.
//!
//! A transaction's row changes are, per table and statement, a TABLE_MAP that
//! binds a numeric table id to `db.table` and the column types, then rows
//! events naming that id. The last rows event of a statement has
//! `STMT_END_F`; after it a replica may forget the table ids.
//!
//! TABLE_MAP body:
//!
//! ```text
//! post-header: table_id (6 bytes) | flags u16 (1 = TM_BIT_LEN_EXACT_F)
//! db_len u8 | db | 0x00 | table_len u8 | table | 0x00
//! column_count (packed) | column types [column_count]
//! metadata length (packed) | metadata: 0, 1 or 2 bytes per column, by type
//! null bitmap (a bit per column: may be NULL)
//! optional metadata (MySQL 8, binlog_row_metadata=FULL): (type u8, length packed, value)*
//! ```
//!
//! Rows event (v2) body:
//!
//! ```text
//! post-header: table_id (6 bytes) | flags u16 | extra_data_len u16 (2 + extra bytes)
//! column_count (packed) | columns-present bitmap | (UPDATE: after-image columns bitmap)
//! rows: WRITE  after image
//!       DELETE before image
//!       UPDATE before image, after image
//! image: null bitmap (a bit per present column) | the non-NULL values in column order
//! ```
//!
//! Bitmaps are least significant bit first: column i is bit `i % 8` of byte
//! `i / 8`. This crate writes full images (`binlog_row_image=FULL`): every
//! column present in every image.

mod decimal;
mod temporal;
mod value;

pub use value::BinValue;

use crate::event::EventType;
use crate::wire::{packed_len, put_packed, text, Reader};
use crate::Error;

/// MySQL's column type codes (`enum_field_types`) as the binlog uses them.
pub mod field_type {
    /// Old DECIMAL (before 5.0.3); never written.
    pub const DECIMAL: u8 = 0;
    /// TINYINT.
    pub const TINY: u8 = 1;
    /// SMALLINT.
    pub const SHORT: u8 = 2;
    /// INT.
    pub const LONG: u8 = 3;
    /// FLOAT.
    pub const FLOAT: u8 = 4;
    /// DOUBLE.
    pub const DOUBLE: u8 = 5;
    /// The NULL type.
    pub const NULL: u8 = 6;
    /// Old TIMESTAMP (before 5.6.4); never written.
    pub const TIMESTAMP: u8 = 7;
    /// BIGINT.
    pub const LONGLONG: u8 = 8;
    /// MEDIUMINT.
    pub const INT24: u8 = 9;
    /// DATE.
    pub const DATE: u8 = 10;
    /// Old TIME; never written.
    pub const TIME: u8 = 11;
    /// Old DATETIME; never written.
    pub const DATETIME: u8 = 12;
    /// YEAR.
    pub const YEAR: u8 = 13;
    /// VARCHAR and VARBINARY.
    pub const VARCHAR: u8 = 15;
    /// BIT(n).
    pub const BIT: u8 = 16;
    /// TIMESTAMP(fsp).
    pub const TIMESTAMP2: u8 = 17;
    /// DATETIME(fsp).
    pub const DATETIME2: u8 = 18;
    /// TIME(fsp).
    pub const TIME2: u8 = 19;
    /// JSON.
    pub const JSON: u8 = 245;
    /// DECIMAL(p, s).
    pub const NEWDECIMAL: u8 = 246;
    /// ENUM: only as the real type in a STRING column's metadata.
    pub const ENUM: u8 = 247;
    /// SET: only as the real type in a STRING column's metadata.
    pub const SET: u8 = 248;
    /// BLOB and TEXT of every size (the size is in the metadata).
    pub const BLOB: u8 = 252;
    /// Old VARCHAR; read like VARCHAR.
    pub const VAR_STRING: u8 = 253;
    /// CHAR, BINARY, ENUM, SET (the real type is in the metadata).
    pub const STRING: u8 = 254;
    /// GEOMETRY.
    pub const GEOMETRY: u8 = 255;

    /// The SQL name of a type code (the real type for STRING columns).
    pub fn name(type_code: u8, real_type: u8) -> &'static str {
        match (type_code, real_type) {
            (STRING, ENUM) => "ENUM",
            (STRING, SET) => "SET",
            (TINY, _) => "TINYINT",
            (SHORT, _) => "SMALLINT",
            (INT24, _) => "MEDIUMINT",
            (LONG, _) => "INT",
            (LONGLONG, _) => "BIGINT",
            (FLOAT, _) => "FLOAT",
            (DOUBLE, _) => "DOUBLE",
            (NULL, _) => "NULL",
            (NEWDECIMAL | DECIMAL, _) => "DECIMAL",
            (DATE, _) => "DATE",
            (YEAR, _) => "YEAR",
            (TIME | TIME2, _) => "TIME",
            (DATETIME | DATETIME2, _) => "DATETIME",
            (TIMESTAMP | TIMESTAMP2, _) => "TIMESTAMP",
            (VARCHAR | VAR_STRING, _) => "VARCHAR",
            (BIT, _) => "BIT",
            (JSON, _) => "JSON",
            (BLOB, _) => "BLOB",
            (STRING, _) => "CHAR",
            (GEOMETRY, _) => "GEOMETRY",
            _ => "unknown",
        }
    }
}

use field_type as ft;

/// The binary collation id (`binary`, `BLOB`, `VARBINARY`).
pub const BINARY_CHARSET: u16 = 63;

/// A column as TABLE_MAP describes it, with the optional metadata MySQL 8
/// writes under `binlog_row_metadata=FULL`.
///
/// `meta` follows MySQL's in-memory reading of the table map's metadata
/// bytes: for DECIMAL `precision << 8 | scale`; for STRING / ENUM / SET
/// `real_type << 8 | length` (CHAR lengths over 255 fold their two high bits
/// into the real-type byte); for VARCHAR the maximum length in bytes; for
/// BIT `bytes << 8 | bits % 8`; for BLOB, JSON and GEOMETRY the size of the
/// length prefix (1-4); for FLOAT and DOUBLE 4 and 8; for TIME2, DATETIME2
/// and TIMESTAMP2 the fractional precision; otherwise 0. Build columns with
/// the constructors, which derive both from the SQL type.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ColumnMeta {
    /// The binlog type code ([`field_type`]).
    pub type_code: u8,
    /// Type metadata, see the type doc.
    pub meta: u16,
    /// The column may be NULL.
    pub nullable: bool,
    /// A numeric column is UNSIGNED.
    pub unsigned: bool,
    /// Collation id of a character column (63 for binary strings); 0 when
    /// not a character, ENUM or SET column.
    pub charset: u16,
    /// The column's name.
    pub name: String,
    /// ENUM members, in definition order.
    pub enum_values: Vec<Vec<u8>>,
    /// SET members, in definition order.
    pub set_values: Vec<Vec<u8>>,
    /// The column is part of the primary key (whole, no prefix).
    pub in_primary_key: bool,
}

impl ColumnMeta {
    fn new(type_code: u8, meta: u16) -> Self {
        ColumnMeta {
            type_code,
            meta,
            nullable: true,
            ..ColumnMeta::default()
        }
    }

    /// TINYINT.
    pub fn tinyint(unsigned: bool) -> Self {
        ColumnMeta {
            unsigned,
            ..Self::new(ft::TINY, 0)
        }
    }
    /// SMALLINT.
    pub fn smallint(unsigned: bool) -> Self {
        ColumnMeta {
            unsigned,
            ..Self::new(ft::SHORT, 0)
        }
    }
    /// MEDIUMINT.
    pub fn mediumint(unsigned: bool) -> Self {
        ColumnMeta {
            unsigned,
            ..Self::new(ft::INT24, 0)
        }
    }
    /// INT.
    pub fn int(unsigned: bool) -> Self {
        ColumnMeta {
            unsigned,
            ..Self::new(ft::LONG, 0)
        }
    }
    /// BIGINT.
    pub fn bigint(unsigned: bool) -> Self {
        ColumnMeta {
            unsigned,
            ..Self::new(ft::LONGLONG, 0)
        }
    }
    /// FLOAT.
    pub fn float() -> Self {
        Self::new(ft::FLOAT, 4)
    }
    /// DOUBLE.
    pub fn double() -> Self {
        Self::new(ft::DOUBLE, 8)
    }
    /// DECIMAL(precision, scale): precision 1..=65, scale 0..=30 and at most
    /// the precision.
    pub fn decimal(precision: u8, scale: u8) -> Self {
        assert!(
            (1..=65).contains(&precision) && scale <= 30 && scale <= precision,
            "DECIMAL({precision},{scale}) is not a MySQL type"
        );
        Self::new(ft::NEWDECIMAL, u16::from(precision) << 8 | u16::from(scale))
    }
    /// YEAR.
    pub fn year() -> Self {
        Self::new(ft::YEAR, 0)
    }
    /// DATE.
    pub fn date() -> Self {
        Self::new(ft::DATE, 0)
    }
    /// TIME(fsp).
    pub fn time(fsp: u8) -> Self {
        assert!(fsp <= 6, "fractional precision is 0..=6");
        Self::new(ft::TIME2, u16::from(fsp))
    }
    /// DATETIME(fsp).
    pub fn datetime(fsp: u8) -> Self {
        assert!(fsp <= 6, "fractional precision is 0..=6");
        Self::new(ft::DATETIME2, u16::from(fsp))
    }
    /// TIMESTAMP(fsp).
    pub fn timestamp(fsp: u8) -> Self {
        assert!(fsp <= 6, "fractional precision is 0..=6");
        Self::new(ft::TIMESTAMP2, u16::from(fsp))
    }
    /// VARCHAR(n) of `max_bytes` = n × the character set's maximum bytes per
    /// character (VARBINARY: charset 63).
    pub fn varchar(max_bytes: u16, charset: u16) -> Self {
        ColumnMeta {
            charset,
            ..Self::new(ft::VARCHAR, max_bytes)
        }
    }
    /// CHAR(n) of `max_bytes` = n × the character set's maximum bytes per
    /// character, at most 1023 (BINARY: charset 63). The value is the
    /// stored bytes (MySQL strips the trailing pad spaces of a CHAR).
    pub fn char(max_bytes: u16, charset: u16) -> Self {
        assert!(
            max_bytes < 1024,
            "CHAR holds at most 255 characters of 4 bytes"
        );
        // Field_string::save_field_metadata: bits 8 and 9 of the length are
        // XORed, shifted, into the real-type byte.
        let hi = (u16::from(ft::STRING) ^ ((max_bytes & 0x300) >> 4)) << 8;
        ColumnMeta {
            charset,
            ..Self::new(ft::STRING, hi | (max_bytes & 0xff))
        }
    }
    /// A BLOB or TEXT type with a `len_bytes`-byte length prefix: 1 TINY,
    /// 2 plain, 3 MEDIUM, 4 LONG (BLOB: charset 63).
    pub fn blob(len_bytes: u8, charset: u16) -> Self {
        assert!(
            (1..=4).contains(&len_bytes),
            "BLOB length prefixes are 1-4 bytes"
        );
        ColumnMeta {
            charset,
            ..Self::new(ft::BLOB, u16::from(len_bytes))
        }
    }
    /// BIT(nbits), 1..=64.
    pub fn bit(nbits: u8) -> Self {
        assert!((1..=64).contains(&nbits), "BIT(1) to BIT(64)");
        Self::new(ft::BIT, u16::from(nbits / 8) << 8 | u16::from(nbits % 8))
    }
    /// ENUM of `values` (1 byte for up to 255 members, else 2).
    pub fn enumeration(values: Vec<Vec<u8>>, charset: u16) -> Self {
        let pack = if values.len() < 256 { 1 } else { 2 };
        ColumnMeta {
            enum_values: values,
            charset,
            ..Self::new(ft::STRING, u16::from(ft::ENUM) << 8 | pack)
        }
    }
    /// SET of `values` (up to 64 members: 1, 2, 3, 4 or 8 bytes).
    pub fn set(values: Vec<Vec<u8>>, charset: u16) -> Self {
        assert!(values.len() <= 64, "a SET has at most 64 members");
        let pack = match values.len().div_ceil(8) {
            0 | 1 => 1,
            2 => 2,
            3 => 3,
            4 => 4,
            _ => 8,
        };
        ColumnMeta {
            set_values: values,
            charset,
            ..Self::new(ft::STRING, u16::from(ft::SET) << 8 | pack)
        }
    }
    /// JSON (4-byte length prefix).
    pub fn json() -> Self {
        Self::new(ft::JSON, 4)
    }
    /// GEOMETRY (4-byte length prefix).
    pub fn geometry() -> Self {
        Self::new(ft::GEOMETRY, 4)
    }

    /// Sets the column name.
    pub fn named(mut self, name: &str) -> Self {
        self.name = name.to_string();
        self
    }
    /// Marks the column NOT NULL.
    pub fn not_null(mut self) -> Self {
        self.nullable = false;
        self
    }
    /// Marks the column part of the primary key (and NOT NULL).
    pub fn primary_key(mut self) -> Self {
        self.in_primary_key = true;
        self.nullable = false;
        self
    }

    /// The real type of a STRING column (STRING, ENUM or SET); the type code
    /// for every other column.
    pub fn real_type(&self) -> u8 {
        if self.type_code != ft::STRING {
            return self.type_code;
        }
        let b0 = (self.meta >> 8) as u8;
        if b0 & 0x30 != 0x30 {
            ft::STRING
        } else {
            b0
        }
    }

    /// The maximum byte length of a CHAR / BINARY column.
    fn string_max_len(&self) -> u16 {
        let b0 = (self.meta >> 8) as u8;
        let low = self.meta & 0xff;
        if b0 & 0x30 != 0x30 {
            u16::from((b0 & 0x30) ^ 0x30) << 4 | low
        } else {
            low
        }
    }

    /// The width of a BIT column (more than 64 only in corrupt metadata).
    fn bit_width(&self) -> u16 {
        (self.meta >> 8) * 8 + (self.meta & 0xff)
    }

    /// The metadata bytes TABLE_MAP carries for this column.
    fn put_meta(&self, out: &mut Vec<u8>) {
        let m = self.meta;
        match self.type_code {
            ft::FLOAT
            | ft::DOUBLE
            | ft::BLOB
            | ft::GEOMETRY
            | ft::JSON
            | ft::TIME2
            | ft::DATETIME2
            | ft::TIMESTAMP2 => out.push(m as u8),
            ft::VARCHAR | ft::VAR_STRING | ft::BIT => out.extend_from_slice(&m.to_le_bytes()),
            ft::NEWDECIMAL | ft::STRING => out.extend_from_slice(&m.to_be_bytes()),
            _ => {}
        }
    }

    fn read_meta(type_code: u8, r: &mut Reader<'_>) -> Result<u16, Error> {
        Ok(match type_code {
            ft::FLOAT
            | ft::DOUBLE
            | ft::BLOB
            | ft::GEOMETRY
            | ft::JSON
            | ft::TIME2
            | ft::DATETIME2
            | ft::TIMESTAMP2 => u16::from(r.u8("column metadata")?),
            ft::VARCHAR | ft::VAR_STRING | ft::BIT => r.u16("column metadata")?,
            ft::NEWDECIMAL | ft::STRING => r.be(2, "column metadata")? as u16,
            _ => 0,
        })
    }

    /// Numeric columns get a signedness bit in the optional metadata.
    fn is_numeric(&self) -> bool {
        matches!(
            self.type_code,
            ft::TINY
                | ft::SHORT
                | ft::INT24
                | ft::LONG
                | ft::LONGLONG
                | ft::FLOAT
                | ft::DOUBLE
                | ft::NEWDECIMAL
                | ft::DECIMAL
        )
    }

    /// Character columns (CHAR, VARCHAR, BLOB, TEXT) get a charset in the
    /// optional metadata; ENUM and SET have their own list.
    fn is_character(&self) -> bool {
        matches!(self.type_code, ft::VARCHAR | ft::VAR_STRING | ft::BLOB)
            || (self.type_code == ft::STRING && self.real_type() == ft::STRING)
    }

    fn is_enum_or_set(&self) -> bool {
        self.type_code == ft::STRING && matches!(self.real_type(), ft::ENUM | ft::SET)
    }
}

/// Optional metadata field types of TABLE_MAP (MySQL 8.0.1 and later).
mod opt {
    pub const SIGNEDNESS: u8 = 1;
    pub const DEFAULT_CHARSET: u8 = 2;
    pub const COLUMN_CHARSET: u8 = 3;
    pub const COLUMN_NAME: u8 = 4;
    pub const SET_STR_VALUE: u8 = 5;
    pub const ENUM_STR_VALUE: u8 = 6;
    pub const GEOMETRY_TYPE: u8 = 7;
    pub const SIMPLE_PRIMARY_KEY: u8 = 8;
    pub const PRIMARY_KEY_WITH_PREFIX: u8 = 9;
    pub const ENUM_AND_SET_DEFAULT_CHARSET: u8 = 10;
    pub const ENUM_AND_SET_COLUMN_CHARSET: u8 = 11;
}

/// `TM_BIT_LEN_EXACT_F`: BIT lengths in the metadata are exact.
const TM_BIT_LEN_EXACT_F: u16 = 1;

/// Most table ids a 6-byte field holds.
const MAX_TABLE_ID: u64 = (1 << 48) - 1;

fn put_table_id(out: &mut Vec<u8>, table_id: u64) -> Result<(), Error> {
    if table_id > MAX_TABLE_ID {
        return Err(Error::Invalid(format!(
            "table id {table_id} does not fit 6 bytes"
        )));
    }
    out.extend_from_slice(&table_id.to_le_bytes()[..6]);
    Ok(())
}

fn put_name(out: &mut Vec<u8>, name: &str, what: &str) -> Result<(), Error> {
    let n = u8::try_from(name.len())
        .map_err(|_| Error::Invalid(format!("{what} name of {} bytes", name.len())))?;
    out.push(n);
    out.extend_from_slice(name.as_bytes());
    out.push(0);
    Ok(())
}

/// Appends bits MSB-first (the optional metadata's signedness bitmap).
fn put_msb_bitmap(out: &mut Vec<u8>, bits: &[bool]) {
    for chunk in bits.chunks(8) {
        let mut b = 0u8;
        for (i, &bit) in chunk.iter().enumerate() {
            if bit {
                b |= 0x80 >> i;
            }
        }
        out.push(b);
    }
}

/// Appends bits LSB-first (every other bitmap of the row format).
fn put_lsb_bitmap(out: &mut Vec<u8>, bits: impl ExactSizeIterator<Item = bool>) {
    let n = bits.len();
    let start = out.len();
    out.resize(start + n.div_ceil(8), 0);
    for (i, bit) in bits.enumerate() {
        if bit {
            out[start + i / 8] |= 1 << (i % 8);
        }
    }
}

fn get_lsb_bitmap(r: &mut Reader<'_>, n: usize, what: &'static str) -> Result<Vec<bool>, Error> {
    let bytes = r.bytes(n.div_ceil(8), what)?;
    Ok((0..n).map(|i| bytes[i / 8] & (1 << (i % 8)) != 0).collect())
}

/// Appends one optional metadata field (type, packed length, value).
fn put_opt(out: &mut Vec<u8>, ty: u8, value: &[u8]) {
    out.push(ty);
    put_packed(out, value.len() as u64);
    out.extend_from_slice(value);
}

/// Charset field for `cols` (character columns, or ENUM / SET columns):
/// DEFAULT form (most common collation, then `(index, collation)` for the
/// others) or COLUMN form (one collation per column), whichever is shorter,
/// as MySQL chooses.
fn charset_field(out: &mut Vec<u8>, cs: &[u16], default_ty: u8, column_ty: u8) {
    if cs.is_empty() {
        return;
    }
    let mut counts: Vec<(u16, usize)> = Vec::new();
    for &c in cs {
        match counts.iter_mut().find(|(k, _)| *k == c) {
            Some((_, n)) => *n += 1,
            None => counts.push((c, 1)),
        }
    }
    let default = counts
        .iter()
        .max_by_key(|(c, n)| (*n, std::cmp::Reverse(*c)))
        .map(|(c, _)| *c)
        .expect("cs is not empty");
    let mut dflt = Vec::new();
    put_packed(&mut dflt, u64::from(default));
    for (i, &c) in cs.iter().enumerate() {
        if c != default {
            put_packed(&mut dflt, i as u64);
            put_packed(&mut dflt, u64::from(c));
        }
    }
    let mut per_col = Vec::new();
    for &c in cs {
        put_packed(&mut per_col, u64::from(c));
    }
    if dflt.len() <= per_col.len() {
        put_opt(out, default_ty, &dflt);
    } else {
        put_opt(out, column_ty, &per_col);
    }
}

fn put_str_values(out: &mut Vec<u8>, ty: u8, lists: &[&Vec<Vec<u8>>]) {
    if lists.is_empty() {
        return;
    }
    let mut v = Vec::new();
    for list in lists {
        put_packed(&mut v, list.len() as u64);
        for s in *list {
            put_packed(&mut v, s.len() as u64);
            v.extend_from_slice(s);
        }
    }
    put_opt(out, ty, &v);
}

/// How much optional metadata TABLE_MAP carries (`binlog_row_metadata`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowMetadata {
    /// MySQL's default: signedness, charsets and geometry types, what a
    /// replica needs to convert values.
    Minimal,
    /// Also column names, ENUM and SET members and the primary key, what a
    /// change-data-capture reader needs without asking for the schema.
    Full,
}

/// A TABLE_MAP body for `db.table` with `cols`, including the optional
/// metadata of `binlog_row_metadata=FULL`: signedness, charsets, column
/// names, ENUM and SET members, geometry types and the primary key.
pub fn table_map(
    table_id: u64,
    db: &str,
    table: &str,
    cols: &[ColumnMeta],
) -> Result<Vec<u8>, Error> {
    table_map_with(table_id, db, table, cols, RowMetadata::Full)
}

/// A TABLE_MAP body with the optional metadata of `metadata`, in MySQL's
/// order of fields.
pub fn table_map_with(
    table_id: u64,
    db: &str,
    table: &str,
    cols: &[ColumnMeta],
    metadata: RowMetadata,
) -> Result<Vec<u8>, Error> {
    let full = metadata == RowMetadata::Full;
    let mut out = Vec::with_capacity(64 + cols.len() * 16);
    put_table_id(&mut out, table_id)?;
    out.extend_from_slice(&TM_BIT_LEN_EXACT_F.to_le_bytes());
    put_name(&mut out, db, "schema")?;
    put_name(&mut out, table, "table")?;
    put_packed(&mut out, cols.len() as u64);
    out.extend(cols.iter().map(|c| c.type_code));
    let mut meta = Vec::new();
    for c in cols {
        c.put_meta(&mut meta);
    }
    put_packed(&mut out, meta.len() as u64);
    out.extend_from_slice(&meta);
    put_lsb_bitmap(&mut out, cols.iter().map(|c| c.nullable));

    let numeric: Vec<bool> = cols
        .iter()
        .filter(|c| c.is_numeric())
        .map(|c| c.unsigned)
        .collect();
    if !numeric.is_empty() {
        let mut v = Vec::new();
        put_msb_bitmap(&mut v, &numeric);
        put_opt(&mut out, opt::SIGNEDNESS, &v);
    }
    let char_cs: Vec<u16> = cols
        .iter()
        .filter(|c| c.is_character())
        .map(|c| c.charset)
        .collect();
    charset_field(
        &mut out,
        &char_cs,
        opt::DEFAULT_CHARSET,
        opt::COLUMN_CHARSET,
    );
    if full {
        let mut names = Vec::new();
        for c in cols {
            put_packed(&mut names, c.name.len() as u64);
            names.extend_from_slice(c.name.as_bytes());
        }
        put_opt(&mut out, opt::COLUMN_NAME, &names);
        let sets: Vec<&Vec<Vec<u8>>> = cols
            .iter()
            .filter(|c| c.is_enum_or_set() && c.real_type() == ft::SET)
            .map(|c| &c.set_values)
            .collect();
        put_str_values(&mut out, opt::SET_STR_VALUE, &sets);
        let enums: Vec<&Vec<Vec<u8>>> = cols
            .iter()
            .filter(|c| c.is_enum_or_set() && c.real_type() == ft::ENUM)
            .map(|c| &c.enum_values)
            .collect();
        put_str_values(&mut out, opt::ENUM_STR_VALUE, &enums);
    }
    let geometries = cols.iter().filter(|c| c.type_code == ft::GEOMETRY).count();
    if geometries > 0 {
        // Geometry subtype 0: GEOMETRY (Canyon's geometry columns are untyped).
        put_opt(&mut out, opt::GEOMETRY_TYPE, &vec![0; geometries]);
    }
    let pk: Vec<usize> = (0..cols.len())
        .filter(|&i| cols[i].in_primary_key)
        .collect();
    if full && !pk.is_empty() {
        let mut v = Vec::new();
        for i in pk {
            put_packed(&mut v, i as u64);
        }
        put_opt(&mut out, opt::SIMPLE_PRIMARY_KEY, &v);
    }
    let es_cs: Vec<u16> = cols
        .iter()
        .filter(|c| c.is_enum_or_set())
        .map(|c| c.charset)
        .collect();
    charset_field(
        &mut out,
        &es_cs,
        opt::ENUM_AND_SET_DEFAULT_CHARSET,
        opt::ENUM_AND_SET_COLUMN_CHARSET,
    );
    Ok(out)
}

/// A decoded TABLE_MAP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableMap {
    /// The id rows events name.
    pub table_id: u64,
    /// TABLE_MAP flags.
    pub flags: u16,
    /// Schema name.
    pub db: String,
    /// Table name.
    pub table: String,
    /// Columns with whatever optional metadata the event carried.
    pub columns: Vec<ColumnMeta>,
}

/// Reads the `(index, collation)` or per-column charset field into the
/// columns selected by `pick`.
fn read_charsets(
    v: &[u8],
    default_form: bool,
    cols: &mut [ColumnMeta],
    pick: fn(&ColumnMeta) -> bool,
) -> Result<(), Error> {
    let idx: Vec<usize> = (0..cols.len()).filter(|&i| pick(&cols[i])).collect();
    let mut r = Reader::new(v);
    if default_form {
        let default = r.packed("default charset")? as u16;
        for &i in &idx {
            cols[i].charset = default;
        }
        while !r.is_empty() {
            let n = r.packed("charset column index")? as usize;
            let cs = r.packed("charset")? as u16;
            let i = *idx.get(n).ok_or_else(|| {
                Error::Malformed(format!("charset for character column {n} of {}", idx.len()))
            })?;
            cols[i].charset = cs;
        }
    } else {
        for &i in &idx {
            cols[i].charset = r.packed("column charset")? as u16;
        }
    }
    Ok(())
}

fn read_str_values(v: &[u8]) -> Result<Vec<Vec<Vec<u8>>>, Error> {
    let mut r = Reader::new(v);
    let mut lists = Vec::new();
    while !r.is_empty() {
        let n = r.packed("string value count")?;
        let mut list = Vec::new();
        for _ in 0..n {
            list.push(r.packed_bytes("string value")?.to_vec());
        }
        lists.push(list);
    }
    Ok(lists)
}

pub(crate) fn parse_table_map(body: &[u8]) -> Result<TableMap, Error> {
    let mut r = Reader::new(body);
    let table_id = r.le(6, "TABLE_MAP table id")?;
    let flags = r.u16("TABLE_MAP flags")?;
    let n = usize::from(r.u8("schema name length")?);
    let db = text(r.bytes(n, "schema name")?, "schema name")?;
    r.u8("schema name NUL")?;
    let n = usize::from(r.u8("table name length")?);
    let table = text(r.bytes(n, "table name")?, "table name")?;
    r.u8("table name NUL")?;
    let count = r.packed("column count")? as usize;
    let types = r.bytes(count, "column types")?.to_vec();
    let meta = r.packed_bytes("column metadata")?;
    let mut m = Reader::new(meta);
    let mut cols = Vec::with_capacity(count);
    for &t in &types {
        cols.push(ColumnMeta {
            type_code: t,
            meta: ColumnMeta::read_meta(t, &mut m)?,
            ..ColumnMeta::default()
        });
    }
    if !m.is_empty() {
        return Err(Error::Malformed(
            "TABLE_MAP metadata longer than its columns need".into(),
        ));
    }
    for (c, null) in cols
        .iter_mut()
        .zip(get_lsb_bitmap(&mut r, count, "null bitmap")?)
    {
        c.nullable = null;
    }
    while !r.is_empty() {
        let ty = r.u8("optional metadata type")?;
        let v = r.packed_bytes("optional metadata")?;
        match ty {
            opt::SIGNEDNESS => {
                let idx: Vec<usize> = (0..count).filter(|&i| cols[i].is_numeric()).collect();
                for (k, &i) in idx.iter().enumerate() {
                    let byte = v.get(k / 8).ok_or(Error::Truncated("signedness bitmap"))?;
                    cols[i].unsigned = byte & (0x80 >> (k % 8)) != 0;
                }
            }
            opt::DEFAULT_CHARSET | opt::COLUMN_CHARSET => {
                read_charsets(
                    v,
                    ty == opt::DEFAULT_CHARSET,
                    &mut cols,
                    ColumnMeta::is_character,
                )?;
            }
            opt::ENUM_AND_SET_DEFAULT_CHARSET | opt::ENUM_AND_SET_COLUMN_CHARSET => read_charsets(
                v,
                ty == opt::ENUM_AND_SET_DEFAULT_CHARSET,
                &mut cols,
                ColumnMeta::is_enum_or_set,
            )?,
            opt::COLUMN_NAME => {
                let mut nr = Reader::new(v);
                for c in cols.iter_mut() {
                    c.name = text(nr.packed_bytes("column name")?, "column name")?;
                }
            }
            opt::SET_STR_VALUE | opt::ENUM_STR_VALUE => {
                let want = if ty == opt::SET_STR_VALUE {
                    ft::SET
                } else {
                    ft::ENUM
                };
                let mut lists = read_str_values(v)?.into_iter();
                for c in cols
                    .iter_mut()
                    .filter(|c| c.type_code == ft::STRING && c.real_type() == want)
                {
                    let list = lists.next().unwrap_or_default();
                    if want == ft::SET {
                        c.set_values = list;
                    } else {
                        c.enum_values = list;
                    }
                }
            }
            opt::SIMPLE_PRIMARY_KEY | opt::PRIMARY_KEY_WITH_PREFIX => {
                let mut pr = Reader::new(v);
                while !pr.is_empty() {
                    let i = pr.packed("primary key column")? as usize;
                    if ty == opt::PRIMARY_KEY_WITH_PREFIX {
                        pr.packed("primary key prefix")?;
                    }
                    cols.get_mut(i)
                        .ok_or_else(|| {
                            Error::Malformed(format!("primary key column {i} of {count}"))
                        })?
                        .in_primary_key = true;
                }
            }
            // Geometry subtypes, column visibility and later fields carry
            // nothing a row decoder needs.
            _ => {}
        }
    }
    Ok(TableMap {
        table_id,
        flags,
        db,
        table,
        columns: cols,
    })
}

/// Which rows event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowsKind {
    /// WRITE_ROWS: after images of inserted rows.
    Write,
    /// UPDATE_ROWS: before and after images.
    Update,
    /// DELETE_ROWS: before images of deleted rows.
    Delete,
}

impl RowsKind {
    /// The event type to frame a body of this kind with.
    pub fn event_type(self) -> EventType {
        match self {
            RowsKind::Write => EventType::WRITE_ROWS,
            RowsKind::Update => EventType::UPDATE_ROWS,
            RowsKind::Delete => EventType::DELETE_ROWS,
        }
    }
}

/// Rows event flag: the last event of its statement.
pub const STMT_END_F: u16 = 1;
/// Rows event flag: `foreign_key_checks` was off.
pub const NO_FOREIGN_KEY_CHECKS_F: u16 = 2;
/// Rows event flag: `unique_checks` was off.
pub const RELAXED_UNIQUE_CHECKS_F: u16 = 4;
/// Rows event flag: every column is in the images (`binlog_row_image=FULL`).
pub const COMPLETE_ROWS_F: u16 = 8;

/// Builds one WRITE / UPDATE / DELETE_ROWS (v2) body from full row images.
/// The caller starts a new event (after [`RowsEventBuilder::finish`]) when
/// [`RowsEventBuilder::body_len`] passes its size limit (MySQL's
/// `binlog_row_event_max_size`, 8 KiB by default); a single row may make
/// an event longer than the limit.
pub struct RowsEventBuilder<'a> {
    kind: RowsKind,
    table_id: u64,
    cols: &'a [ColumnMeta],
    flags: u16,
    rows: Vec<u8>,
    row_count: usize,
}

impl<'a> RowsEventBuilder<'a> {
    /// A builder for rows of the table `cols` describes (the columns of its
    /// TABLE_MAP, in the same order).
    ///
    /// # Panics
    /// If `table_id` does not fit the event's 6 bytes: table ids come from a
    /// server counter, never from a client.
    pub fn new(kind: RowsKind, table_id: u64, cols: &'a [ColumnMeta]) -> Self {
        assert!(
            table_id <= MAX_TABLE_ID,
            "table id {table_id} does not fit 6 bytes"
        );
        RowsEventBuilder {
            kind,
            table_id,
            cols,
            flags: 0,
            rows: Vec::new(),
            row_count: 0,
        }
    }

    /// Adds [`NO_FOREIGN_KEY_CHECKS_F`] / [`RELAXED_UNIQUE_CHECKS_F`] flags.
    pub fn with_flags(mut self, flags: u16) -> Self {
        self.flags |= flags & (NO_FOREIGN_KEY_CHECKS_F | RELAXED_UNIQUE_CHECKS_F);
        self
    }

    /// Appends one row change: `after` for a write, `before` for a delete,
    /// both for an update; each image has a value for every column. On error
    /// (a value the column's type cannot hold) the builder is unchanged.
    pub fn push(
        &mut self,
        before: Option<&[BinValue]>,
        after: Option<&[BinValue]>,
    ) -> Result<(), Error> {
        let (want_before, want_after) = match self.kind {
            RowsKind::Write => (false, true),
            RowsKind::Update => (true, true),
            RowsKind::Delete => (true, false),
        };
        if before.is_some() != want_before || after.is_some() != want_after {
            return Err(Error::Invalid(format!(
                "a {:?} rows event takes {} image(s)",
                self.kind,
                match self.kind {
                    RowsKind::Write => "only an after",
                    RowsKind::Update => "a before and an after",
                    RowsKind::Delete => "only a before",
                }
            )));
        }
        let start = self.rows.len();
        for image in [before, after].into_iter().flatten() {
            if let Err(e) = self.put_image(image) {
                self.rows.truncate(start);
                return Err(e);
            }
        }
        self.row_count += 1;
        Ok(())
    }

    fn put_image(&mut self, image: &[BinValue]) -> Result<(), Error> {
        if image.len() != self.cols.len() {
            return Err(Error::Invalid(format!(
                "a row image of {} values for {} columns",
                image.len(),
                self.cols.len()
            )));
        }
        put_lsb_bitmap(
            &mut self.rows,
            image.iter().map(|v| matches!(v, BinValue::Null)),
        );
        for (col, v) in self.cols.iter().zip(image) {
            if matches!(v, BinValue::Null) {
                if !col.nullable {
                    return Err(Error::Invalid(format!(
                        "NULL in NOT NULL column '{}'",
                        col.name
                    )));
                }
                continue;
            }
            value::encode(col, v, &mut self.rows)?;
        }
        Ok(())
    }

    /// Rows pushed so far.
    pub fn row_count(&self) -> usize {
        self.row_count
    }

    /// True when no row was pushed.
    pub fn is_empty(&self) -> bool {
        self.row_count == 0
    }

    fn columns_bitmap_len(&self) -> usize {
        self.cols.len().div_ceil(8)
    }

    /// Length of the body [`RowsEventBuilder::finish`] would return now.
    pub fn body_len(&self) -> usize {
        let bitmaps = if self.kind == RowsKind::Update { 2 } else { 1 };
        10 + packed_len(self.cols.len() as u64)
            + bitmaps * self.columns_bitmap_len()
            + self.rows.len()
    }

    /// The body, with [`STMT_END_F`] when `end_of_statement`.
    pub fn finish(self, end_of_statement: bool) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.body_len());
        put_table_id(&mut out, self.table_id).expect("new() checked the table id");
        let flags = self.flags | if end_of_statement { STMT_END_F } else { 0 };
        out.extend_from_slice(&flags.to_le_bytes());
        // extra_data_len counts itself; there is no extra row info.
        out.extend_from_slice(&2u16.to_le_bytes());
        put_packed(&mut out, self.cols.len() as u64);
        let all = |out: &mut Vec<u8>| put_lsb_bitmap(out, self.cols.iter().map(|_| true));
        all(&mut out);
        if self.kind == RowsKind::Update {
            all(&mut out);
        }
        out.extend_from_slice(&self.rows);
        debug_assert_eq!(out.len(), self.body_len());
        out
    }
}

/// A decoded rows event; its values are read against the TABLE_MAP it names
/// with [`RowsEvent::rows`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowsEvent {
    /// WRITE, UPDATE or DELETE.
    pub kind: RowsKind,
    /// The TABLE_MAP's table id.
    pub table_id: u64,
    /// `STMT_END_F` and the other rows flags.
    pub flags: u16,
    /// Extra row info (v2's variable header), usually empty.
    pub extra_data: Vec<u8>,
    /// Columns in the table.
    pub column_count: usize,
    /// Columns present in the before image (WRITE: the after image).
    pub columns_present: Vec<bool>,
    /// Columns present in an UPDATE's after image.
    pub columns_present_after: Vec<bool>,
    /// The row images, still encoded.
    pub rows_data: Vec<u8>,
}

/// One row change read back.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The before image (UPDATE, DELETE); absent columns are `None`.
    pub before: Option<Vec<Option<BinValue>>>,
    /// The after image (WRITE, UPDATE).
    pub after: Option<Vec<Option<BinValue>>>,
}

pub(crate) fn parse_rows(kind: RowsKind, body: &[u8]) -> Result<RowsEvent, Error> {
    let mut r = Reader::new(body);
    let table_id = r.le(6, "rows table id")?;
    let flags = r.u16("rows flags")?;
    let extra_len = usize::from(r.u16("rows extra data length")?);
    let extra_data = r
        .bytes(
            extra_len
                .checked_sub(2)
                .ok_or(Error::Malformed("rows extra data length under 2".into()))?,
            "rows extra data",
        )?
        .to_vec();
    let column_count = r.packed("rows column count")? as usize;
    let columns_present = get_lsb_bitmap(&mut r, column_count, "columns bitmap")?;
    let columns_present_after = if kind == RowsKind::Update {
        get_lsb_bitmap(&mut r, column_count, "after columns bitmap")?
    } else {
        columns_present.clone()
    };
    Ok(RowsEvent {
        kind,
        table_id,
        flags,
        extra_data,
        column_count,
        columns_present,
        columns_present_after,
        rows_data: r.rest().to_vec(),
    })
}

impl RowsEvent {
    /// The row changes, decoded with the column types of `table_map` (the
    /// TABLE_MAP whose id this event names).
    pub fn rows(&self, table_map: &TableMap) -> Result<Vec<Row>, Error> {
        if table_map.table_id != self.table_id || table_map.columns.len() != self.column_count {
            return Err(Error::Malformed(format!(
                "rows event for table id {} with {} columns read against table map {} with {}",
                self.table_id,
                self.column_count,
                table_map.table_id,
                table_map.columns.len()
            )));
        }
        let cols = &table_map.columns;
        let mut r = Reader::new(&self.rows_data);
        let read_image =
            |r: &mut Reader<'_>, present: &[bool]| -> Result<Vec<Option<BinValue>>, Error> {
                let n = present.iter().filter(|&&p| p).count();
                let nulls = get_lsb_bitmap(r, n, "row null bitmap")?;
                let mut k = 0;
                let mut image = Vec::with_capacity(cols.len());
                for (col, &p) in cols.iter().zip(present) {
                    if !p {
                        image.push(None);
                        continue;
                    }
                    image.push(Some(if nulls[k] {
                        BinValue::Null
                    } else {
                        value::decode(col, r)?
                    }));
                    k += 1;
                }
                Ok(image)
            };
        let mut rows = Vec::new();
        while !r.is_empty() {
            let row = match self.kind {
                RowsKind::Write => Row {
                    before: None,
                    after: Some(read_image(&mut r, &self.columns_present)?),
                },
                RowsKind::Delete => Row {
                    before: Some(read_image(&mut r, &self.columns_present)?),
                    after: None,
                },
                RowsKind::Update => Row {
                    before: Some(read_image(&mut r, &self.columns_present)?),
                    after: Some(read_image(&mut r, &self.columns_present_after)?),
                },
            };
            rows.push(row);
        }
        Ok(rows)
    }
}
