//! The types that cross the engine boundary: result sets and column metadata.
//! (Values are in [`crate::types::value`]; configuration in
//! [`crate::catalog::config`].)

use std::sync::Arc;

pub use crate::types::value::Value;

/// MySQL column type codes (the `MYSQL_TYPE_*` values of the protocol).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ColumnType {
    /// DECIMAL (old)
    Decimal = 0x00,
    /// TINYINT
    Tiny = 0x01,
    /// SMALLINT
    Short = 0x02,
    /// INT
    Long = 0x03,
    /// FLOAT
    Float = 0x04,
    /// DOUBLE
    Double = 0x05,
    /// NULL
    Null = 0x06,
    /// TIMESTAMP
    Timestamp = 0x07,
    /// BIGINT
    LongLong = 0x08,
    /// MEDIUMINT
    Int24 = 0x09,
    /// DATE
    Date = 0x0a,
    /// TIME
    Time = 0x0b,
    /// DATETIME
    DateTime = 0x0c,
    /// YEAR
    Year = 0x0d,
    /// VARCHAR
    VarChar = 0x0f,
    /// BIT
    Bit = 0x10,
    /// JSON
    Json = 0xf5,
    /// DECIMAL
    NewDecimal = 0xf6,
    /// BLOB / TEXT
    Blob = 0xfc,
    /// VARCHAR / VARBINARY
    VarString = 0xfd,
    /// CHAR / BINARY
    String = 0xfe,
}

/// Column definition flags (protocol `ColumnDefinition41.flags`).
pub mod column_flags {
    /// NOT_NULL_FLAG
    pub const NOT_NULL: u16 = 1;
    /// PRI_KEY_FLAG
    pub const PRI_KEY: u16 = 2;
    /// UNIQUE_KEY_FLAG
    pub const UNIQUE_KEY: u16 = 4;
    /// MULTIPLE_KEY_FLAG
    pub const MULTIPLE_KEY: u16 = 8;
    /// BLOB_FLAG
    pub const BLOB: u16 = 16;
    /// UNSIGNED_FLAG
    pub const UNSIGNED: u16 = 32;
    /// ZEROFILL_FLAG
    pub const ZEROFILL: u16 = 64;
    /// BINARY_FLAG
    pub const BINARY: u16 = 128;
    /// ENUM_FLAG
    pub const ENUM: u16 = 256;
    /// AUTO_INCREMENT_FLAG
    pub const AUTO_INCREMENT: u16 = 512;
    /// SET_FLAG
    pub const SET: u16 = 2048;
    /// NUM_FLAG
    pub const NUM: u16 = 32768;
}

/// Character set ids used in column definitions.
pub mod charset {
    /// utf8mb4_0900_ai_ci
    pub const UTF8MB4: u16 = 255;
    /// utf8mb4_general_ci (what MariaDB clients ask for)
    pub const UTF8MB4_GENERAL: u16 = 45;
    /// binary
    pub const BINARY: u16 = 63;
}

/// One result-set column as the protocol describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Database of the source table (empty for expressions).
    pub schema: String,
    /// Table name as the query referred to it (alias).
    pub table: String,
    /// Table's real name.
    pub org_table: String,
    /// Column name as shown (alias).
    pub name: String,
    /// Column's real name.
    pub org_name: String,
    /// Character set id ([`charset`]).
    pub charset: u16,
    /// Maximum display length.
    pub length: u32,
    /// Protocol type code.
    pub column_type: ColumnType,
    /// [`column_flags`] bits.
    pub flags: u16,
    /// Digits after the point.
    pub decimals: u8,
}

/// The outcome of one statement.
#[derive(Debug, Clone, PartialEq)]
pub enum QueryResult {
    /// A statement without a result set.
    Ok {
        /// Rows inserted, changed or deleted.
        affected_rows: u64,
        /// The first AUTO_INCREMENT value generated (or 0).
        last_insert_id: u64,
        /// The OK packet's info string ("Rows matched: 1  Changed: 1  Warnings: 0").
        info: String,
        /// Warnings raised by the statement.
        warnings: u16,
    },
    /// A result set.
    Rows {
        /// Column metadata.
        columns: Arc<[Column]>,
        /// The rows.
        rows: Vec<Vec<Value>>,
        /// Warnings raised by the statement.
        warnings: u16,
    },
}

/// What a prepare returns.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedInfo {
    /// Statement id.
    pub id: u32,
    /// Number of `?` parameters.
    pub params: u16,
    /// Result-set columns when known at prepare time (empty for DML).
    pub columns: Arc<[Column]>,
}
