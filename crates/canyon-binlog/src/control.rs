//! Bodies of the control and statement events: everything but TABLE_MAP and
//! the rows events (see [`crate::rows`]). Each builder returns an event *body*
//! (post-header and payload, no common header) for [`crate::event::frame`].
//!
//! Layouts (all integers little-endian; `packed` is a length-encoded integer):
//!
//! | event | post-header | payload |
//! |---|---|---|
//! | FORMAT_DESCRIPTION | binlog_version u16, server_version (50 bytes), create_timestamp u32, header_len u8, post_header_len (a byte per type) | checksum_alg u8 |
//! | ROTATE | position u64 | next file name (no NUL) |
//! | QUERY | thread_id u32, exec_time u32, db_len u8, error_code u16, status_vars_len u16 | status vars, db, NUL, statement |
//! | XID | — | xid u64 |
//! | GTID / ANONYMOUS_GTID | flags u8, sid (16 bytes), gno i64, lt_type u8 (=2), last_committed i64, sequence_number i64 | commit timestamps (7 or 14 bytes), transaction_length packed, server version(s) u32 |
//! | PREVIOUS_GTIDS | — | binary GTID set |
//! | HEARTBEAT | — | current file name |
//! | MariaDB GTID | seq_no u64, domain_id u32, flags u8, commit_id u64 or 6 zero bytes | — |
//! | GTID_LIST | count u32 (low 28 bits; high 4 bits flags) | per GTID: domain u32, server_id u32, seq_no u64 |
//! | BINLOG_CHECKPOINT | name_len u32 | file name |
//! | ANNOTATE_ROWS | — | statement text |
//!
//! QUERY's status variables are `(code u8, value)` pairs whose value length
//! depends on the code, so a reader that meets a code it does not know cannot
//! find the next one: MySQL and MariaDB both stop reading the status block
//! there. Codes known to both are therefore written first (MySQL's own order),
//! the MySQL 8-only codes (14 and up) last.

use crate::gtid::{Gtid, GtidSet};
use crate::wire::{put_le, put_packed, text, Reader};
use crate::Error;

/// `binlog_checksum` algorithm byte of a FORMAT_DESCRIPTION: none.
pub const CHECKSUM_ALG_OFF: u8 = 0;
/// `binlog_checksum` algorithm byte of a FORMAT_DESCRIPTION: CRC32.
pub const CHECKSUM_ALG_CRC32: u8 = 1;

/// Length of the server version field of a FORMAT_DESCRIPTION.
const SERVER_VERSION_LEN: usize = 50;

/// Post-header lengths MySQL 8.0.26 and later write, for types 1..=41
/// (index = type - 1). Types whose events were removed from MySQL (START_V3,
/// LOAD, CREATE_FILE, EXEC_LOAD, NEW_LOAD, the pre-GA rows events) are 0.
const MYSQL_POST_HEADER_LENS: [u8; 41] = [
    0,       // 1 START_EVENT_V3 (removed)
    13,      // 2 QUERY
    0,       // 3 STOP
    8,       // 4 ROTATE
    0,       // 5 INTVAR
    0,       // 6 LOAD (removed)
    0,       // 7 SLAVE (never written)
    0,       // 8 CREATE_FILE (removed)
    4,       // 9 APPEND_BLOCK
    0,       // 10 EXEC_LOAD (removed)
    4,       // 11 DELETE_FILE
    0,       // 12 NEW_LOAD (removed)
    0,       // 13 RAND
    0,       // 14 USER_VAR
    57 + 41, // 15 FORMAT_DESCRIPTION: fixed part + one byte per type
    0,       // 16 XID
    4,       // 17 BEGIN_LOAD_QUERY
    26,      // 18 EXECUTE_LOAD_QUERY
    8,       // 19 TABLE_MAP
    0,       // 20 PRE_GA_WRITE_ROWS (removed)
    0,       // 21 PRE_GA_UPDATE_ROWS (removed)
    0,       // 22 PRE_GA_DELETE_ROWS (removed)
    8,       // 23 WRITE_ROWS_V1
    8,       // 24 UPDATE_ROWS_V1
    8,       // 25 DELETE_ROWS_V1
    2,       // 26 INCIDENT
    0,       // 27 HEARTBEAT
    0,       // 28 IGNORABLE
    0,       // 29 ROWS_QUERY
    10,      // 30 WRITE_ROWS (v2)
    10,      // 31 UPDATE_ROWS (v2)
    10,      // 32 DELETE_ROWS (v2)
    42,      // 33 GTID
    42,      // 34 ANONYMOUS_GTID
    0,       // 35 PREVIOUS_GTIDS
    18,      // 36 TRANSACTION_CONTEXT
    52,      // 37 VIEW_CHANGE
    0,       // 38 XA_PREPARE
    10,      // 39 PARTIAL_UPDATE_ROWS
    40,      // 40 TRANSACTION_PAYLOAD
    0,       // 41 HEARTBEAT_V2
];

/// Number of event types a MariaDB 10.11 FORMAT_DESCRIPTION describes (its
/// table runs to type 171, WRITE/UPDATE/DELETE_ROWS_COMPRESSED_EVENT).
const MARIADB_EVENT_TYPES: usize = 171;

/// Which family's event set a log is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// MySQL 8.0: GTID / PREVIOUS_GTIDS events, 41 event types.
    MySql,
    /// MariaDB 10.x: MariaDB GTID / GTID_LIST / BINLOG_CHECKPOINT events,
    /// 171 event types.
    MariaDb,
}

/// A FORMAT_DESCRIPTION body as MySQL 8.0 writes it: binlog version 4,
/// `server_version` (at most 49 bytes, zero padded to 50), create timestamp
/// 0 (MySQL sets it only on the first log after startup, telling replicas to
/// drop their temporary tables), header length 19, the post-header length of
/// each of the 41 event types, and the checksum algorithm byte.
pub fn format_description(server_version: &str, checksum: bool) -> Vec<u8> {
    format_description_for(Flavor::MySql, server_version, checksum)
}

/// A FORMAT_DESCRIPTION body for `flavor`. A MariaDB reader looks up the
/// post-header length of MariaDB's own events (160 and up) in this table, so
/// a log carrying MariaDB GTID events must start with the MariaDB table.
pub fn format_description_for(flavor: Flavor, server_version: &str, checksum: bool) -> Vec<u8> {
    let mut lens: Vec<u8> = MYSQL_POST_HEADER_LENS.to_vec();
    if flavor == Flavor::MariaDb {
        lens.resize(MARIADB_EVENT_TYPES, 0);
        lens[0] = 56; // START_EVENT_V3, still in MariaDB's table
        lens[14] = (57 + MARIADB_EVENT_TYPES) as u8;
        // MariaDB reads MySQL's GTID events as ignorable: no post-header.
        lens[32] = 0;
        lens[33] = 0;
        lens[160] = 4; // 161 BINLOG_CHECKPOINT
        lens[161] = 19; // 162 GTID
        lens[162] = 4; // 163 GTID_LIST
        lens[164] = 13; // 165 QUERY_COMPRESSED
        for l in &mut lens[165..168] {
            *l = 8; // 166-168 rows v1 compressed
        }
        for l in &mut lens[168..171] {
            *l = 10; // 169-171 rows v2 compressed
        }
    }
    let mut out = Vec::with_capacity(57 + lens.len() + 1);
    out.extend_from_slice(&4u16.to_le_bytes());
    let mut version = [0u8; SERVER_VERSION_LEN];
    let v = server_version.as_bytes();
    // The field must keep a terminating NUL for readers that strlen it.
    let n = v.len().min(SERVER_VERSION_LEN - 1);
    version[..n].copy_from_slice(&v[..n]);
    out.extend_from_slice(&version);
    out.extend_from_slice(&0u32.to_le_bytes());
    out.push(crate::event::HEADER_LEN as u8);
    out.extend_from_slice(&lens);
    out.push(if checksum {
        CHECKSUM_ALG_CRC32
    } else {
        CHECKSUM_ALG_OFF
    });
    out
}

/// A decoded FORMAT_DESCRIPTION.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatDescription {
    /// Always 4 for the format this crate reads.
    pub binlog_version: u16,
    /// The writer's version string.
    pub server_version: String,
    /// Non-zero on the first log after the writer started.
    pub create_timestamp: u32,
    /// Common header length (19).
    pub header_len: u8,
    /// Post-header length per event type (index = type - 1).
    pub post_header_lens: Vec<u8>,
    /// [`CHECKSUM_ALG_OFF`] or [`CHECKSUM_ALG_CRC32`].
    pub checksum_alg: u8,
}

impl FormatDescription {
    /// Whether the events after this one end with a CRC32.
    pub fn checksum(&self) -> bool {
        self.checksum_alg == CHECKSUM_ALG_CRC32
    }
}

pub(crate) fn parse_format_description(body: &[u8]) -> Result<FormatDescription, Error> {
    let mut r = Reader::new(body);
    let binlog_version = r.u16("FORMAT_DESCRIPTION binlog version")?;
    if binlog_version != 4 {
        return Err(Error::Unsupported(format!(
            "binary log version {binlog_version} (only v4 is read)"
        )));
    }
    let raw = r.bytes(SERVER_VERSION_LEN, "FORMAT_DESCRIPTION server version")?;
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    let server_version = text(&raw[..end], "server version")?;
    let create_timestamp = r.u32("FORMAT_DESCRIPTION create timestamp")?;
    let header_len = r.u8("FORMAT_DESCRIPTION header length")?;
    if usize::from(header_len) != crate::event::HEADER_LEN {
        return Err(Error::Unsupported(format!(
            "event header length {header_len}"
        )));
    }
    let rest = r.rest();
    let Some((&checksum_alg, lens)) = rest.split_last() else {
        return Err(Error::Truncated("FORMAT_DESCRIPTION checksum algorithm"));
    };
    Ok(FormatDescription {
        binlog_version,
        server_version,
        create_timestamp,
        header_len,
        post_header_lens: lens.to_vec(),
        checksum_alg,
    })
}

/// A ROTATE body: the next file and the position to read it from (4).
pub fn rotate(next_pos: u64, next_file: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + next_file.len());
    out.extend_from_slice(&next_pos.to_le_bytes());
    out.extend_from_slice(next_file.as_bytes());
    out
}

/// A PREVIOUS_GTIDS body: the GTIDs of every earlier log file.
pub fn previous_gtids(set: &GtidSet) -> Vec<u8> {
    set.encode()
}

/// `lt_type` of MySQL's GTID event: the logical timestamps follow.
const LOGICAL_TIMESTAMP_TYPECODE: u8 = 2;
/// `FLAG_MAY_HAVE_SBR` in the GTID event's flags.
const GTID_FLAG_MAY_HAVE_SBR: u8 = 1;
/// Bit 55 of the 7-byte immediate commit timestamp: the original one follows.
const ORIGINAL_COMMIT_TS_FOLLOWS: u64 = 1 << 55;
/// Bit 31 of the immediate server version: the original one follows.
const ORIGINAL_SERVER_VERSION_FOLLOWS: u32 = 1 << 31;

/// A GTID body as MySQL 8.0 writes it (post-header of 42 bytes, then the
/// commit timestamps, the transaction length and the server versions).
pub fn gtid(g: &Gtid) -> Vec<u8> {
    gtid_body(g, g.sid, g.gno)
}

/// An ANONYMOUS_GTID body: a GTID event with a zero UUID and gno, for a
/// transaction logged with `gtid_mode=OFF`; the logical clock, timestamps
/// and length of `g` are kept.
pub fn anonymous_gtid(g: &Gtid) -> Vec<u8> {
    gtid_body(g, [0; 16], 0)
}

fn gtid_body(g: &Gtid, sid: [u8; 16], gno: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(42 + 14 + 9 + 8);
    out.push(if g.may_have_sbr {
        GTID_FLAG_MAY_HAVE_SBR
    } else {
        0
    });
    out.extend_from_slice(&sid);
    out.extend_from_slice(&gno.to_le_bytes());
    out.push(LOGICAL_TIMESTAMP_TYPECODE);
    out.extend_from_slice(&g.last_committed.to_le_bytes());
    out.extend_from_slice(&g.sequence_number.to_le_bytes());
    debug_assert_eq!(out.len(), 42);
    // Commit timestamps are 56-bit; bit 55 of the first marks that the
    // original (a different source's) timestamp follows.
    let immediate = g.immediate_commit_ts_us & (ORIGINAL_COMMIT_TS_FOLLOWS - 1);
    if g.original_commit_ts_us != g.immediate_commit_ts_us {
        put_le(&mut out, immediate | ORIGINAL_COMMIT_TS_FOLLOWS, 7);
        put_le(&mut out, g.original_commit_ts_us, 7);
    } else {
        put_le(&mut out, immediate, 7);
    }
    put_packed(&mut out, g.transaction_length);
    let v = g.immediate_server_version & !ORIGINAL_SERVER_VERSION_FOLLOWS;
    if g.original_server_version != g.immediate_server_version {
        out.extend_from_slice(&(v | ORIGINAL_SERVER_VERSION_FOLLOWS).to_le_bytes());
        out.extend_from_slice(&g.original_server_version.to_le_bytes());
    } else {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

pub(crate) fn parse_gtid(body: &[u8]) -> Result<Gtid, Error> {
    let mut r = Reader::new(body);
    let flags = r.u8("GTID flags")?;
    let sid: [u8; 16] = r
        .bytes(16, "GTID sid")?
        .try_into()
        .expect("16 bytes were read");
    let gno = r.u64("GTID gno")?;
    let mut g = Gtid {
        sid,
        gno,
        may_have_sbr: flags & GTID_FLAG_MAY_HAVE_SBR != 0,
        ..Gtid::default()
    };
    // Every later field was added by a later MySQL version; a reader takes
    // what is there.
    if r.is_empty() {
        return Ok(g);
    }
    if r.u8("GTID lt_type")? == LOGICAL_TIMESTAMP_TYPECODE {
        g.last_committed = r.u64("GTID last_committed")? as i64;
        g.sequence_number = r.u64("GTID sequence_number")? as i64;
    }
    if r.is_empty() {
        return Ok(g);
    }
    let ts = r.le(7, "GTID immediate commit timestamp")?;
    g.immediate_commit_ts_us = ts & (ORIGINAL_COMMIT_TS_FOLLOWS - 1);
    g.original_commit_ts_us = if ts & ORIGINAL_COMMIT_TS_FOLLOWS != 0 {
        r.le(7, "GTID original commit timestamp")?
    } else {
        g.immediate_commit_ts_us
    };
    if r.is_empty() {
        return Ok(g);
    }
    g.transaction_length = r.packed("GTID transaction length")?;
    if r.is_empty() {
        return Ok(g);
    }
    let v = r.u32("GTID immediate server version")?;
    g.immediate_server_version = v & !ORIGINAL_SERVER_VERSION_FOLLOWS;
    g.original_server_version = if v & ORIGINAL_SERVER_VERSION_FOLLOWS != 0 {
        r.u32("GTID original server version")?
    } else {
        g.immediate_server_version
    };
    Ok(g)
}

/// An XID body: the transaction's XA id in the engine (any number unique in
/// the log; MySQL uses its query id).
pub fn xid(xid: u64) -> Vec<u8> {
    xid.to_le_bytes().to_vec()
}

/// A HEARTBEAT body: the name of the file the sender is in; the header's
/// log_pos is its current position in that file, its timestamp 0.
pub fn heartbeat(log_ident: &str) -> Vec<u8> {
    log_ident.as_bytes().to_vec()
}

/// MariaDB GTID flag: the group is one statement without BEGIN / COMMIT (DDL).
pub const MARIADB_FL_STANDALONE: u8 = 1;
/// MariaDB GTID flag: a group commit id follows (see [`mariadb_gtid_commit_id`]).
pub const MARIADB_FL_GROUP_COMMIT_ID: u8 = 2;
/// MariaDB GTID flag: the group changes transactional tables only.
pub const MARIADB_FL_TRANSACTIONAL: u8 = 4;
/// MariaDB GTID flag: a replica may apply the group in parallel with others.
pub const MARIADB_FL_ALLOW_PARALLEL: u8 = 8;
/// MariaDB GTID flag: the transaction waited on a row lock of another.
pub const MARIADB_FL_WAITED: u8 = 16;
/// MariaDB GTID flag: the group is DDL.
pub const MARIADB_FL_DDL: u8 = 32;

/// A MariaDB GTID body (type 162): `domain_id-server_id-seq_no`, the
/// server_id being the event header's. The event also opens the group: a
/// MariaDB transaction has no QUERY BEGIN after it. `flags` must not carry
/// [`MARIADB_FL_GROUP_COMMIT_ID`]; use [`mariadb_gtid_commit_id`] for that.
pub fn mariadb_gtid(seq_no: u64, domain_id: u32, flags: u8) -> Vec<u8> {
    assert!(
        flags & MARIADB_FL_GROUP_COMMIT_ID == 0,
        "a group commit id needs mariadb_gtid_commit_id"
    );
    let mut out = Vec::with_capacity(19);
    out.extend_from_slice(&seq_no.to_le_bytes());
    out.extend_from_slice(&domain_id.to_le_bytes());
    out.push(flags);
    out.extend_from_slice(&[0; 6]);
    out
}

/// A MariaDB GTID body with a group commit id (transactions of one group
/// commit share it; replicas apply them in parallel).
pub fn mariadb_gtid_commit_id(seq_no: u64, domain_id: u32, flags: u8, commit_id: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(21);
    out.extend_from_slice(&seq_no.to_le_bytes());
    out.extend_from_slice(&domain_id.to_le_bytes());
    out.push(flags | MARIADB_FL_GROUP_COMMIT_ID);
    out.extend_from_slice(&commit_id.to_le_bytes());
    out
}

/// A GTID_LIST body: `(domain_id, server_id, seq_no)` of the last GTID of
/// each domain and server before this file.
pub fn gtid_list(gtids: &[(u32, u32, u64)]) -> Vec<u8> {
    assert!(gtids.len() < 1 << 28, "GTID_LIST counts in 28 bits");
    let mut out = Vec::with_capacity(4 + 16 * gtids.len());
    out.extend_from_slice(&(gtids.len() as u32).to_le_bytes());
    for &(domain, server, seq) in gtids {
        out.extend_from_slice(&domain.to_le_bytes());
        out.extend_from_slice(&server.to_le_bytes());
        out.extend_from_slice(&seq.to_le_bytes());
    }
    out
}

/// A BINLOG_CHECKPOINT body: the oldest log file crash recovery needs.
pub fn binlog_checkpoint(file: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + file.len());
    out.extend_from_slice(&(file.len() as u32).to_le_bytes());
    out.extend_from_slice(file.as_bytes());
    out
}

/// An ANNOTATE_ROWS body (MariaDB): the statement that made the rows events
/// that follow, shown by `mariadb-binlog` as a comment.
pub fn annotate_rows(sql: &[u8]) -> Vec<u8> {
    sql.to_vec()
}

/// Status variable codes of a QUERY event (`Q_*_CODE`).
mod q {
    pub const FLAGS2: u8 = 0;
    pub const SQL_MODE: u8 = 1;
    pub const AUTO_INCREMENT: u8 = 3;
    pub const CHARSET: u8 = 4;
    pub const TIME_ZONE: u8 = 5;
    pub const CATALOG_NZ: u8 = 6;
    pub const LC_TIME_NAMES: u8 = 7;
    pub const CHARSET_DATABASE: u8 = 8;
    pub const TABLE_MAP_FOR_UPDATE: u8 = 9;
    pub const MASTER_DATA_WRITTEN: u8 = 10;
    pub const INVOKER: u8 = 11;
    pub const UPDATED_DB_NAMES: u8 = 12;
    pub const MICROSECONDS: u8 = 13;
    pub const EXPLICIT_DEFAULTS_FOR_TIMESTAMP: u8 = 16;
    pub const DDL_LOGGED_WITH_XID: u8 = 17;
    pub const DEFAULT_COLLATION_FOR_UTF8MB4: u8 = 18;
    pub const SQL_REQUIRE_PRIMARY_KEY: u8 = 19;
    pub const DEFAULT_TABLE_ENCRYPTION: u8 = 20;
}

/// `Q_UPDATED_DB_NAMES` count meaning "more schemas than the event lists".
const OVER_MAX_DBS_IN_EVENT: u8 = 254;

/// `OPTION_*` bits of `flags2` a QUERY event carries.
pub mod flags2 {
    /// `autocommit` was off.
    pub const OPTION_NOT_AUTOCOMMIT: u32 = 1 << 19;
    /// `foreign_key_checks` was off.
    pub const OPTION_NO_FOREIGN_KEY_CHECKS: u32 = 1 << 26;
    /// `unique_checks` was off.
    pub const OPTION_RELAXED_UNIQUE_CHECKS: u32 = 1 << 27;
    /// `sql_auto_is_null` was on.
    pub const OPTION_AUTO_IS_NULL: u32 = 1 << 14;
}

/// A QUERY event: a statement in text with the session state it needs.
/// Each `Option` status variable is written only when set.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct QueryEvent {
    /// The connection id (`pseudo_thread_id` on replay).
    pub thread_id: u32,
    /// Seconds the statement ran.
    pub exec_time: u32,
    /// The statement's error (0; non-zero only for statements that failed
    /// half way on a non-transactional table).
    pub error_code: u16,
    /// The default schema (`USE db`), empty for none.
    pub db: String,
    /// The statement text, in the client character set.
    pub sql: Vec<u8>,
    /// `Q_FLAGS2_CODE`: the [`flags2`] option bits.
    pub flags2: Option<u32>,
    /// `Q_SQL_MODE_CODE`: the `sql_mode` bits.
    pub sql_mode: Option<u64>,
    /// `Q_CATALOG_NZ_CODE`: writes the catalog `std`, as MySQL does.
    pub catalog: bool,
    /// `Q_AUTO_INCREMENT`: (`auto_increment_increment`, `_offset`).
    pub auto_increment: Option<(u16, u16)>,
    /// `Q_CHARSET_CODE`: collation ids of (`character_set_client`,
    /// `collation_connection`, `collation_server`).
    pub charset: Option<(u16, u16, u16)>,
    /// `Q_TIME_ZONE_CODE`: the session time zone, when not SYSTEM.
    pub time_zone: Option<String>,
    /// `Q_LC_TIME_NAMES_CODE`: locale number, when not en_US (0).
    pub lc_time_names: Option<u16>,
    /// `Q_CHARSET_DATABASE_CODE`: collation id of the default schema.
    pub charset_database: Option<u16>,
    /// `Q_UPDATED_DB_NAMES`: the schemas the statement changes (MySQL's
    /// multi-threaded applier schedules by them); `Some(vec![])` with more
    /// than 16 is written as "over the maximum".
    pub updated_db_names: Option<Vec<String>>,
    /// `Q_MICROSECONDS`: the microseconds of the start time.
    pub microseconds: Option<u32>,
    /// `Q_EXPLICIT_DEFAULTS_FOR_TIMESTAMP` (MySQL 8).
    pub explicit_defaults_for_timestamp: Option<bool>,
    /// `Q_DDL_LOGGED_WITH_XID` (MySQL 8): an atomic DDL's xid; no XID
    /// event follows it.
    pub ddl_xid: Option<u64>,
    /// `Q_DEFAULT_COLLATION_FOR_UTF8MB4` (MySQL 8).
    pub default_collation_for_utf8mb4: Option<u16>,
    /// `Q_SQL_REQUIRE_PRIMARY_KEY` (MySQL 8).
    pub sql_require_primary_key: Option<bool>,
    /// `Q_DEFAULT_TABLE_ENCRYPTION` (MySQL 8).
    pub default_table_encryption: Option<bool>,
}

/// Most schemas `Q_UPDATED_DB_NAMES` lists (`MAX_DBS_IN_EVENT_MTS`).
const MAX_DBS_IN_EVENT: usize = 16;

/// A QUERY body. Fails when the schema name is longer than the one-byte
/// length allows (255) or a status variable does not fit its field.
pub fn query(ev: &QueryEvent) -> Result<Vec<u8>, Error> {
    let db_len = u8::try_from(ev.db.len())
        .map_err(|_| Error::Invalid(format!("schema name of {} bytes", ev.db.len())))?;
    let mut vars = Vec::new();
    if let Some(f) = ev.flags2 {
        vars.push(q::FLAGS2);
        vars.extend_from_slice(&f.to_le_bytes());
    }
    if let Some(m) = ev.sql_mode {
        vars.push(q::SQL_MODE);
        vars.extend_from_slice(&m.to_le_bytes());
    }
    if ev.catalog {
        vars.extend_from_slice(&[q::CATALOG_NZ, 3]);
        vars.extend_from_slice(b"std");
    }
    if let Some((inc, off)) = ev.auto_increment {
        vars.push(q::AUTO_INCREMENT);
        vars.extend_from_slice(&inc.to_le_bytes());
        vars.extend_from_slice(&off.to_le_bytes());
    }
    if let Some((client, conn, server)) = ev.charset {
        vars.push(q::CHARSET);
        for id in [client, conn, server] {
            vars.extend_from_slice(&id.to_le_bytes());
        }
    }
    if let Some(tz) = &ev.time_zone {
        let n = u8::try_from(tz.len())
            .map_err(|_| Error::Invalid(format!("time zone name of {} bytes", tz.len())))?;
        vars.extend_from_slice(&[q::TIME_ZONE, n]);
        vars.extend_from_slice(tz.as_bytes());
    }
    if let Some(lc) = ev.lc_time_names {
        vars.push(q::LC_TIME_NAMES);
        vars.extend_from_slice(&lc.to_le_bytes());
    }
    if let Some(cs) = ev.charset_database {
        vars.push(q::CHARSET_DATABASE);
        vars.extend_from_slice(&cs.to_le_bytes());
    }
    if let Some(dbs) = &ev.updated_db_names {
        vars.push(q::UPDATED_DB_NAMES);
        if dbs.is_empty() || dbs.len() > MAX_DBS_IN_EVENT {
            vars.push(OVER_MAX_DBS_IN_EVENT);
        } else {
            vars.push(dbs.len() as u8);
            for d in dbs {
                vars.extend_from_slice(d.as_bytes());
                vars.push(0);
            }
        }
    }
    if let Some(us) = ev.microseconds {
        vars.push(q::MICROSECONDS);
        put_le(&mut vars, u64::from(us), 3);
    }
    // MySQL 8-only codes last: a MariaDB reader stops at the first of them.
    if let Some(b) = ev.explicit_defaults_for_timestamp {
        vars.extend_from_slice(&[q::EXPLICIT_DEFAULTS_FOR_TIMESTAMP, u8::from(b)]);
    }
    if let Some(x) = ev.ddl_xid {
        vars.push(q::DDL_LOGGED_WITH_XID);
        vars.extend_from_slice(&x.to_le_bytes());
    }
    if let Some(c) = ev.default_collation_for_utf8mb4 {
        vars.push(q::DEFAULT_COLLATION_FOR_UTF8MB4);
        vars.extend_from_slice(&c.to_le_bytes());
    }
    if let Some(b) = ev.sql_require_primary_key {
        vars.extend_from_slice(&[q::SQL_REQUIRE_PRIMARY_KEY, u8::from(b)]);
    }
    if let Some(b) = ev.default_table_encryption {
        vars.extend_from_slice(&[q::DEFAULT_TABLE_ENCRYPTION, u8::from(b)]);
    }
    let vars_len = u16::try_from(vars.len()).expect("status variables are a few hundred bytes");
    let mut out = Vec::with_capacity(13 + vars.len() + ev.db.len() + 1 + ev.sql.len());
    out.extend_from_slice(&ev.thread_id.to_le_bytes());
    out.extend_from_slice(&ev.exec_time.to_le_bytes());
    out.push(db_len);
    out.extend_from_slice(&ev.error_code.to_le_bytes());
    out.extend_from_slice(&vars_len.to_le_bytes());
    out.extend_from_slice(&vars);
    out.extend_from_slice(ev.db.as_bytes());
    out.push(0);
    out.extend_from_slice(&ev.sql);
    Ok(out)
}

pub(crate) fn parse_query(body: &[u8]) -> Result<QueryEvent, Error> {
    let mut r = Reader::new(body);
    let mut ev = QueryEvent {
        thread_id: r.u32("QUERY thread id")?,
        exec_time: r.u32("QUERY exec time")?,
        ..QueryEvent::default()
    };
    let db_len = usize::from(r.u8("QUERY db length")?);
    ev.error_code = r.u16("QUERY error code")?;
    let vars_len = usize::from(r.u16("QUERY status vars length")?);
    let mut v = Reader::new(r.bytes(vars_len, "QUERY status vars")?);
    while !v.is_empty() {
        let code = v.u8("status var code")?;
        match code {
            q::FLAGS2 => ev.flags2 = Some(v.u32("Q_FLAGS2")?),
            q::SQL_MODE => ev.sql_mode = Some(v.u64("Q_SQL_MODE")?),
            q::CATALOG_NZ => {
                let n = usize::from(v.u8("Q_CATALOG_NZ")?);
                v.bytes(n, "Q_CATALOG_NZ")?;
                ev.catalog = true;
            }
            q::AUTO_INCREMENT => {
                ev.auto_increment = Some((v.u16("Q_AUTO_INCREMENT")?, v.u16("Q_AUTO_INCREMENT")?));
            }
            q::CHARSET => {
                ev.charset = Some((
                    v.u16("Q_CHARSET")?,
                    v.u16("Q_CHARSET")?,
                    v.u16("Q_CHARSET")?,
                ));
            }
            q::TIME_ZONE => {
                let n = usize::from(v.u8("Q_TIME_ZONE")?);
                ev.time_zone = Some(text(v.bytes(n, "Q_TIME_ZONE")?, "time zone")?);
            }
            q::LC_TIME_NAMES => ev.lc_time_names = Some(v.u16("Q_LC_TIME_NAMES")?),
            q::CHARSET_DATABASE => ev.charset_database = Some(v.u16("Q_CHARSET_DATABASE")?),
            q::TABLE_MAP_FOR_UPDATE => {
                v.u64("Q_TABLE_MAP_FOR_UPDATE")?;
            }
            q::MASTER_DATA_WRITTEN => {
                v.u32("Q_MASTER_DATA_WRITTEN")?;
            }
            q::INVOKER => {
                for _ in 0..2 {
                    let n = usize::from(v.u8("Q_INVOKER")?);
                    v.bytes(n, "Q_INVOKER")?;
                }
            }
            q::UPDATED_DB_NAMES => {
                let n = v.u8("Q_UPDATED_DB_NAMES")?;
                let mut dbs = Vec::new();
                if n != OVER_MAX_DBS_IN_EVENT {
                    for _ in 0..n {
                        dbs.push(text(
                            v.nul_terminated("Q_UPDATED_DB_NAMES")?,
                            "schema name",
                        )?);
                    }
                }
                ev.updated_db_names = Some(dbs);
            }
            q::MICROSECONDS => ev.microseconds = Some(v.le(3, "Q_MICROSECONDS")? as u32),
            q::EXPLICIT_DEFAULTS_FOR_TIMESTAMP => {
                ev.explicit_defaults_for_timestamp = Some(v.u8("Q_EXPLICIT_DEFAULTS")? != 0);
            }
            q::DDL_LOGGED_WITH_XID => ev.ddl_xid = Some(v.u64("Q_DDL_LOGGED_WITH_XID")?),
            q::DEFAULT_COLLATION_FOR_UTF8MB4 => {
                ev.default_collation_for_utf8mb4 = Some(v.u16("Q_DEFAULT_COLLATION")?);
            }
            q::SQL_REQUIRE_PRIMARY_KEY => {
                ev.sql_require_primary_key = Some(v.u8("Q_SQL_REQUIRE_PK")? != 0);
            }
            q::DEFAULT_TABLE_ENCRYPTION => {
                ev.default_table_encryption = Some(v.u8("Q_DEFAULT_TABLE_ENCRYPTION")? != 0);
            }
            // An unknown code's length is unknown: stop, as MySQL does.
            _ => break,
        }
    }
    ev.db = text(r.bytes(db_len, "QUERY db")?, "schema name")?;
    if r.u8("QUERY db terminator")? != 0 {
        return Err(Error::Malformed(
            "QUERY schema name is not NUL-terminated".into(),
        ));
    }
    ev.sql = r.rest().to_vec();
    Ok(ev)
}

/// Reads a ROTATE body.
pub(crate) fn parse_rotate(body: &[u8]) -> Result<(u64, String), Error> {
    let mut r = Reader::new(body);
    let pos = r.u64("ROTATE position")?;
    Ok((pos, text(r.rest(), "ROTATE file name")?))
}

/// Reads a MariaDB GTID body: (seq_no, domain_id, flags, commit_id).
pub(crate) fn parse_mariadb_gtid(body: &[u8]) -> Result<(u64, u32, u8, Option<u64>), Error> {
    let mut r = Reader::new(body);
    let seq = r.u64("MariaDB GTID seq_no")?;
    let domain = r.u32("MariaDB GTID domain_id")?;
    let flags = r.u8("MariaDB GTID flags")?;
    let commit_id = if flags & MARIADB_FL_GROUP_COMMIT_ID != 0 {
        Some(r.u64("MariaDB GTID commit_id")?)
    } else {
        None
    };
    Ok((seq, domain, flags, commit_id))
}

/// Reads a GTID_LIST body.
pub(crate) fn parse_gtid_list(body: &[u8]) -> Result<Vec<(u32, u32, u64)>, Error> {
    let mut r = Reader::new(body);
    let n = r.u32("GTID_LIST count")? & ((1 << 28) - 1);
    let mut out = Vec::new();
    for _ in 0..n {
        out.push((
            r.u32("GTID_LIST domain")?,
            r.u32("GTID_LIST server_id")?,
            r.u64("GTID_LIST seq_no")?,
        ));
    }
    Ok(out)
}

/// Reads a BINLOG_CHECKPOINT body.
pub(crate) fn parse_binlog_checkpoint(body: &[u8]) -> Result<String, Error> {
    let mut r = Reader::new(body);
    let n = r.u32("BINLOG_CHECKPOINT length")? as usize;
    text(r.bytes(n, "BINLOG_CHECKPOINT file")?, "file name")
}

/// The collation a MariaDB 10.11 reader knows for MySQL 8's collation `id`:
/// MySQL 8's `utf8mb4_0900_*` collations (255 to 323) are not MariaDB's
/// (it stops on "Unknown collation"); they become MariaDB's `utf8mb4`
/// default, `utf8mb4_general_ci` (45), or `utf8mb4_bin` (46) for
/// `utf8mb4_0900_bin` (309). Every other id is the same in both.
pub fn mariadb_collation(id: u16) -> u16 {
    match id {
        309 => 46,
        255..=323 => 45,
        _ => id,
    }
}

/// A QUERY body for a MariaDB reader: `Q_CHARSET_CODE`'s collations mapped
/// with [`mariadb_collation`]. The length never changes (the ids are fixed
/// two-byte fields), so the positions of everything after the event hold.
pub fn query_for_mariadb(body: &[u8]) -> Result<Vec<u8>, Error> {
    let mut ev = parse_query(body)?;
    let Some((client, conn, server)) = ev.charset else {
        return Ok(body.to_vec());
    };
    let mapped = (
        mariadb_collation(client),
        mariadb_collation(conn),
        mariadb_collation(server),
    );
    if mapped == (client, conn, server) {
        return Ok(body.to_vec());
    }
    ev.charset = Some(mapped);
    let out = query(&ev)?;
    if out.len() != body.len() {
        return Err(Error::Invalid(format!(
            "QUERY event re-encoded in {} bytes, not its {}",
            out.len(),
            body.len()
        )));
    }
    Ok(out)
}

/// A MariaDB GTID body (see [`mariadb_gtid`]) zero-padded to `len` bytes, so
/// that it takes exactly the place of the MySQL events it stands for (the
/// GTID event, and a transaction's `BEGIN`): a MariaDB reader takes the byte
/// after the flags as `flags_extra` and, with it 0, reads nothing more.
pub fn mariadb_gtid_padded(seq_no: u64, domain_id: u32, flags: u8, len: usize) -> Vec<u8> {
    let mut out = mariadb_gtid(seq_no, domain_id, flags);
    assert!(len >= out.len(), "a MariaDB GTID body is at least 19 bytes");
    out.resize(len, 0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mysql_format_description_is_the_8_0_size() {
        // MySQL 8.0.26+: FORMAT_DESCRIPTION ends at 126 (4 + 19 + 99 + 4).
        let body = format_description("8.0.36-canyon", true);
        assert_eq!(body.len(), 99);
        assert_eq!(4 + crate::event::framed_len(body.len(), true), 126);
        let fd = parse_format_description(&body).expect("parses");
        assert_eq!(fd.server_version, "8.0.36-canyon");
        assert_eq!(fd.post_header_lens.len(), 41);
        assert_eq!(fd.post_header_lens[14], 98);
        assert!(fd.checksum());
        assert!(!parse_format_description(&format_description("x", false))
            .expect("parses")
            .checksum());
    }

    #[test]
    fn mariadb_format_description_is_the_10_11_size() {
        // MariaDB 10.11: FORMAT_DESCRIPTION ends at 256.
        let body = format_description_for(Flavor::MariaDb, "10.11.19-MariaDB", true);
        assert_eq!(4 + crate::event::framed_len(body.len(), true), 256);
        let fd = parse_format_description(&body).expect("parses");
        assert_eq!(fd.post_header_lens[161], 19);
    }

    #[test]
    fn gtid_round_trips_with_and_without_original_fields() {
        let mut g = Gtid {
            sid: [7; 16],
            gno: 42,
            last_committed: 3,
            sequence_number: 4,
            immediate_commit_ts_us: 1_700_000_000_123_456,
            original_commit_ts_us: 1_700_000_000_123_456,
            transaction_length: 300,
            immediate_server_version: 80036,
            original_server_version: 80036,
            may_have_sbr: false,
        };
        let body = gtid(&g);
        // 42 + 7 + 3 (packed 300) + 4
        assert_eq!(body.len(), 56);
        assert_eq!(parse_gtid(&body).expect("parses"), g);
        g.original_commit_ts_us = 5;
        g.original_server_version = 50744;
        g.may_have_sbr = true;
        let body = gtid(&g);
        assert_eq!(body.len(), 56 + 7 + 4);
        assert_eq!(parse_gtid(&body).expect("parses"), g);
        let anon = parse_gtid(&anonymous_gtid(&g)).expect("parses");
        assert_eq!((anon.sid, anon.gno), ([0; 16], 0));
    }

    #[test]
    fn transaction_length_includes_the_gtid_event() {
        let g = Gtid {
            sid: [1; 16],
            gno: 1,
            ..Gtid::default()
        };
        for rest in [0u64, 100, 190, 200, 70_000] {
            let total = crate::gtid::gtid_transaction_length(&g, rest, true);
            let mut g2 = g.clone();
            g2.transaction_length = total;
            let own = crate::event::framed_len(gtid(&g2).len(), true) as u64;
            assert_eq!(total, rest + own, "rest {rest}");
        }
    }

    #[test]
    fn query_round_trips_every_status_variable() {
        let ev = QueryEvent {
            thread_id: 9,
            exec_time: 1,
            error_code: 0,
            db: "shop".into(),
            sql: b"CREATE TABLE t (a INT)".to_vec(),
            flags2: Some(flags2::OPTION_AUTO_IS_NULL),
            sql_mode: Some(0x4000_0000),
            catalog: true,
            auto_increment: Some((2, 1)),
            charset: Some((255, 255, 8)),
            time_zone: Some("+03:00".into()),
            lc_time_names: Some(1),
            charset_database: Some(8),
            updated_db_names: Some(vec!["shop".into()]),
            microseconds: Some(123_456),
            explicit_defaults_for_timestamp: Some(true),
            ddl_xid: Some(77),
            default_collation_for_utf8mb4: Some(255),
            sql_require_primary_key: Some(false),
            default_table_encryption: Some(false),
        };
        let body = query(&ev).expect("encodes");
        assert_eq!(parse_query(&body).expect("parses"), ev);
    }

    #[test]
    fn query_reader_stops_at_an_unknown_status_variable() {
        let ev = QueryEvent {
            db: "d".into(),
            sql: b"BEGIN".to_vec(),
            flags2: Some(0),
            ..QueryEvent::default()
        };
        let mut body = query(&ev).expect("encodes");
        // Append an unknown code 0x99 with 3 bytes inside the status block.
        body[11..13].copy_from_slice(&(5u16 + 4).to_le_bytes());
        body.splice(18..18, [0x99, 1, 2, 3]);
        let back = parse_query(&body).expect("parses");
        assert_eq!(back.sql, b"BEGIN");
        assert_eq!(back.flags2, Some(0));
        let long = QueryEvent {
            db: "x".repeat(300),
            ..QueryEvent::default()
        };
        assert!(matches!(query(&long), Err(Error::Invalid(_))));
    }

    #[test]
    fn mariadb_events_round_trip() {
        let b = mariadb_gtid(5, 1, MARIADB_FL_STANDALONE | MARIADB_FL_DDL);
        assert_eq!(b.len(), 19);
        assert_eq!(parse_mariadb_gtid(&b).expect("parses"), (5, 1, 33, None));
        let b = mariadb_gtid_commit_id(6, 0, MARIADB_FL_TRANSACTIONAL, 99);
        assert_eq!(b.len(), 21);
        assert_eq!(parse_mariadb_gtid(&b).expect("parses"), (6, 0, 6, Some(99)));
        let l = [(0, 1, 10), (2, 3, 20)];
        assert_eq!(parse_gtid_list(&gtid_list(&l)).expect("parses"), l);
        assert_eq!(
            parse_binlog_checkpoint(&binlog_checkpoint("c.000001")).expect("parses"),
            "c.000001"
        );
        assert_eq!(
            parse_rotate(&rotate(4, "c.000002")).expect("parses"),
            (4, "c.000002".into())
        );
    }
}
