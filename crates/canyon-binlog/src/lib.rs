//! MySQL binary log events, format v4: the bytes Canyon stores as its change
//! log and serves to replicas, and a decoder for the same events.
//!
//! This crate is pure encoding. It does no I/O, keeps no state between calls
//! and knows nothing of Canyon's catalog or transactions: the commit path
//! (canyon-txn / canyon-sql) turns a committed transaction into
//! [`rows::ColumnMeta`]s and [`rows::BinValue`]s and asks this crate for the
//! bytes. It follows MySQL 8.0's `libbinlogevents` and `sql/log_event.cc`
//! (and MariaDB's `sql/log_event*.cc` for MariaDB's GTID events); it was
//! written from their documentation and is checked against independent
//! readers: the real `mariadb-binlog`, a real MariaDB 10.11 server applying
//! its output (tests/mariadb_binlog.rs), and go-mysql, which reads MySQL 8's
//! GTID events and binary JSON that MariaDB's tools cannot
//! (tests/go_mysql.rs).
//!
//! # A log file
//!
//! ```text
//! 0xfe 'b' 'i' 'n'                  magic, 4 bytes
//! FORMAT_DESCRIPTION                at 4: server version, post-header lengths, checksum algorithm
//! PREVIOUS_GTIDS                    GTIDs of all earlier files (MariaDB: GTID_LIST, BINLOG_CHECKPOINT)
//! GTID  QUERY(BEGIN)  TABLE_MAP  WRITE_ROWS ... UPDATE_ROWS ... DELETE_ROWS  XID     one transaction
//! GTID  QUERY(CREATE TABLE ...)                                                       one DDL
//! ...
//! ROTATE                            the next file's name
//! ```
//!
//! A MariaDB-flavour log has a MariaDB GTID event where MySQL has GTID and
//! QUERY(BEGIN): MariaDB's GTID opens the group itself.
//!
//! # The event header and positions
//!
//! Every event starts with a 19-byte header (see [`event`]): timestamp,
//! type, server_id, `event_size` (the whole event, checksum included), and
//! `log_pos`, the position of the *next* event in the file. Positions are
//! byte offsets in the file, so the first event is at 4 and an event that
//! starts at `p` has `log_pos = p + event_size`. A replica records the
//! `log_pos` of the last event it applied and resumes there
//! (COM_BINLOG_DUMP with file and position); `mariadb-binlog` prints each
//! event as `# at p` followed by `end_log_pos p + event_size`.
//!
//! # Checksums
//!
//! With `binlog_checksum=CRC32` every event ends with a CRC-32 (the zlib
//! polynomial) of its header and body, little-endian, counted in
//! `event_size`. The FORMAT_DESCRIPTION says which algorithm the file uses in
//! its last body byte and always carries its own CRC, even when the
//! algorithm is NONE, so a reader can check it before it knows the setting.
//!
//! # Row images
//!
//! TABLE_MAP gives each column a type code and 0-2 bytes of metadata; the
//! rows events then carry, per row, a null bitmap and the non-NULL values in
//! the column's binary form ([`rows`]):
//!
//! | type (code) | metadata | value bytes |
//! |---|---|---|
//! | TINYINT 1, SMALLINT 2, MEDIUMINT 9, INT 3, BIGINT 8 | — | 1, 2, 3, 4, 8 bytes LE two's complement (UNSIGNED from the signedness metadata) |
//! | FLOAT 4, DOUBLE 5 | 4 / 8 | IEEE 754 LE |
//! | DECIMAL 246 | precision, scale | packed decimal: 9 digits per 4 bytes, big-endian, sign in the top bit |
//! | YEAR 13 | — | 1 byte: year - 1900 |
//! | DATE 10 | — | 3 bytes LE: day + 32 × month + 512 × year |
//! | TIME2 19 | fsp | 3 bytes BE (sign, hours, minutes, seconds) + 0-3 fraction bytes |
//! | DATETIME2 18 | fsp | 5 bytes BE (sign, year×13+month, day, h, m, s) + 0-3 fraction bytes |
//! | TIMESTAMP2 17 | fsp | 4 bytes BE seconds since the epoch + 0-3 fraction bytes |
//! | VARCHAR 15 | max bytes (2) | 1-byte length if max < 256 else 2, then the bytes |
//! | CHAR / BINARY 254 | real type 254, length | as VARCHAR, the length taken from the metadata |
//! | ENUM 254 (real type 247) | 247, pack length | 1 or 2 bytes LE: the 1-based index |
//! | SET 254 (real type 248) | 248, pack length | 1, 2, 3, 4 or 8 bytes LE: member bitmap |
//! | BIT 16 | bits % 8, bytes | (n + 7) / 8 bytes BE |
//! | BLOB / TEXT 252 | length bytes 1-4 | length LE in 1-4 bytes, then the bytes |
//! | JSON 245 | 4 | 4-byte length, then MySQL's binary JSON ([`json`]) |
//! | GEOMETRY 255 | 4 | 4-byte length, then SRID + WKB |
//!
//! The temporal and decimal forms are big-endian so that their bytes sort
//! like their values (they are also InnoDB's on-disk key forms).
//!
//! # Module map
//!
//! * [`event`]: event types, the header, [`event::frame`], checksums.
//! * [`control`]: bodies of FORMAT_DESCRIPTION, ROTATE, PREVIOUS_GTIDS, GTID,
//!   QUERY, XID, HEARTBEAT and MariaDB's GTID, GTID_LIST, BINLOG_CHECKPOINT.
//! * [`mod@gtid`]: [`gtid::Gtid`] and [`gtid::GtidSet`] (`uuid:1-5:7`).
//! * [`rows`]: TABLE_MAP with `binlog_row_metadata=FULL`, rows events v2,
//!   [`rows::BinValue`] encodings.
//! * [`json`]: MySQL's binary JSON.
//! * [`decode`]: [`decode::parse_event`] and [`decode::LogReader`].
//!
//! Not implemented: rows events v1 (MySQL 5.1-5.5) and partial JSON updates
//! (PARTIAL_UPDATE_ROWS), compressed transaction payloads
//! (TRANSACTION_PAYLOAD), MySQL 8.3's tagged GTIDs, the pre-5.6 temporal
//! formats (decoded as unsupported), XA_PREPARE, INTVAR / RAND / USER_VAR
//! (statement-based logging only), and binary JSON's opaque values.

pub mod control;
pub mod decode;
pub mod event;
pub mod gtid;
pub mod json;
pub mod rows;
mod wire;

use std::fmt;

pub use control::{
    annotate_rows, anonymous_gtid, binlog_checkpoint, format_description, format_description_for,
    gtid, gtid_list, heartbeat, mariadb_gtid, mariadb_gtid_commit_id, previous_gtids, query,
    rotate, xid, Flavor, FormatDescription, QueryEvent,
};
pub use decode::{parse_event, Event, LogEvent, LogReader};
pub use event::{
    frame, framed_len, framed_len_for, parse_header, verify_checksum, EventType, Header, HEADER_LEN,
};
pub use gtid::{Gtid, GtidSet};
pub use rows::{
    table_map, table_map_with, BinValue, ColumnMeta, RowMetadata, RowsEvent, RowsEventBuilder,
    RowsKind, TableMap,
};

/// What can go wrong encoding or decoding an event, grouped by who caused it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// Encoding: the caller passed a value the format (or the column's type)
    /// cannot hold, e.g. 300 for a TINYINT or a 300-byte schema name.
    Invalid(String),
    /// Decoding: the bytes end before the named field.
    Truncated(&'static str),
    /// Decoding: the bytes are not a valid event.
    Malformed(String),
    /// Decoding: the CRC32 trailer does not match the event.
    ChecksumMismatch {
        /// The CRC in the event.
        stored: u32,
        /// The CRC of the bytes.
        computed: u32,
    },
    /// Decoding: a valid event or value this crate does not read.
    Unsupported(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Invalid(m) => write!(f, "cannot encode: {m}"),
            Error::Truncated(what) => write!(f, "event truncated in {what}"),
            Error::Malformed(m) => write!(f, "malformed event: {m}"),
            Error::ChecksumMismatch { stored, computed } => write!(
                f,
                "event checksum mismatch: stored 0x{stored:08x}, computed 0x{computed:08x}"
            ),
            Error::Unsupported(m) => write!(f, "unsupported: {m}"),
        }
    }
}

impl std::error::Error for Error {}
