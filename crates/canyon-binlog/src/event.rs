//! The common event header, framing and checksums.
//!
//! ```text
//!  0        4     5          9          13         17      19
//!  +--------+-----+----------+----------+----------+-------+---------- ... ---+-------+
//!  |timestamp|type| server_id|event_size| log_pos  | flags | post-header, body | CRC32 |
//!  +--------+-----+----------+----------+----------+-------+---------- ... ---+-------+
//!     u32     u8      u32        u32        u32       u16                        u32
//! ```
//!
//! `event_size` counts everything, header and checksum included. `log_pos` is
//! the position in the file of the byte just after the event, that is the
//! event's start plus `event_size`; a replica uses it to say where it stopped
//! (`Exec_Master_Log_Pos`). Events made up for a connection rather than read
//! from a file (the fake ROTATE a dump starts with, HEARTBEAT) carry 0 or the
//! current position. The CRC32 covers header and body; it is present when the
//! log's FORMAT_DESCRIPTION says `binlog_checksum=CRC32`, and on the
//! FORMAT_DESCRIPTION event itself always (MySQL 5.6.1 and later and MariaDB
//! 5.3 and later write the FORMAT_DESCRIPTION with its CRC even under
//! `binlog_checksum=NONE`, so that a reader can check it before it knows the
//! algorithm; a MariaDB 10.11 log made with NONE was checked to do so).

use crate::Error;

/// The four bytes every binary log file starts with; the first event begins
/// at position 4.
pub const BINLOG_MAGIC: [u8; 4] = [0xfe, b'b', b'i', b'n'];

/// Length of the common header of a v4 event.
pub const HEADER_LEN: usize = 19;

/// Length of the CRC32 trailer when checksums are on.
pub const CHECKSUM_LEN: usize = 4;

/// Header flag: the log is open (set on the FORMAT_DESCRIPTION of a file the
/// server is still writing; cleared when the file is closed cleanly).
pub const LOG_EVENT_BINLOG_IN_USE_F: u16 = 0x1;
/// Header flag: a QUERY event whose text must run without `USE db` (MariaDB
/// sets it on statements that name their schema).
pub const LOG_EVENT_SUPPRESS_USE_F: u16 = 0x8;
/// Header flag: an event made up by the sender (the fake ROTATE and the
/// FORMAT_DESCRIPTION a dump starts with); a replica does not advance its
/// position over it.
pub const LOG_EVENT_ARTIFICIAL_F: u16 = 0x20;
/// Header flag: a reader that does not know the event's type may skip it.
pub const LOG_EVENT_IGNORABLE_F: u16 = 0x80;

/// An event's type code (the header's fifth byte). A newtype rather than an
/// enum so that a decoder can carry codes it does not know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventType(pub u8);

impl EventType {
    /// A statement in text: BEGIN, DDL, COMMIT of a non-transactional group.
    pub const QUERY: EventType = EventType(2);
    /// Names the next binary log file; last event of a file.
    pub const ROTATE: EventType = EventType(4);
    /// First event of every file: binlog version, server version, the
    /// post-header length of every event type, the checksum algorithm.
    pub const FORMAT_DESCRIPTION: EventType = EventType(15);
    /// Commit of a transaction on a transactional engine.
    pub const XID: EventType = EventType(16);
    /// Binds a table id to a schema, table and column types for the rows
    /// events after it.
    pub const TABLE_MAP: EventType = EventType(19);
    /// Sent on an idle replication connection; never in a file.
    pub const HEARTBEAT: EventType = EventType(27);
    /// Row images of inserted rows (v2, MySQL 5.6 and later).
    pub const WRITE_ROWS: EventType = EventType(30);
    /// Before and after images of updated rows (v2).
    pub const UPDATE_ROWS: EventType = EventType(31);
    /// Row images of deleted rows (v2).
    pub const DELETE_ROWS: EventType = EventType(32);
    /// MySQL's GTID of the transaction that follows, with its commit-order
    /// dependencies (logical clock) and commit timestamps.
    pub const GTID: EventType = EventType(33);
    /// A transaction without a GTID (`gtid_mode=OFF`), with the same fields.
    pub const ANONYMOUS_GTID: EventType = EventType(34);
    /// MySQL: the GTID set of all earlier files; second event of a file.
    pub const PREVIOUS_GTIDS: EventType = EventType(35);
    /// MariaDB: the statement text of the rows events that follow.
    pub const ANNOTATE_ROWS: EventType = EventType(160);
    /// MariaDB: the oldest file crash recovery needs.
    pub const BINLOG_CHECKPOINT: EventType = EventType(161);
    /// MariaDB's GTID (`domain-server-seq`), which also opens the group (no BEGIN).
    pub const MARIADB_GTID: EventType = EventType(162);
    /// MariaDB: the last GTID of every (domain, server) before this file.
    pub const GTID_LIST: EventType = EventType(163);

    /// The name MySQL's `SHOW BINLOG EVENTS` prints in `Event_type`.
    pub fn name(self) -> &'static str {
        match self.0 {
            2 => "Query",
            4 => "Rotate",
            15 => "Format_desc",
            16 => "Xid",
            19 => "Table_map",
            27 => "Heartbeat",
            30 => "Write_rows",
            31 => "Update_rows",
            32 => "Delete_rows",
            33 => "Gtid",
            34 => "Anonymous_Gtid",
            35 => "Previous_gtids",
            160 => "Annotate_rows",
            161 => "Binlog_checkpoint",
            162 => "Gtid",
            163 => "Gtid_list",
            _ => "Unknown",
        }
    }
}

/// The decoded common header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Seconds since the epoch when the statement or transaction started.
    pub timestamp: u32,
    /// The event's type.
    pub type_code: EventType,
    /// The `server_id` of the server that first wrote the event.
    pub server_id: u32,
    /// Total length: header, body and checksum.
    pub event_size: u32,
    /// Position just after this event in its file (0 for artificial events).
    pub log_pos: u32,
    /// `LOG_EVENT_*_F` flags.
    pub flags: u16,
}

/// Length of a framed event: header, body, and the CRC32 when `checksum`.
/// A FORMAT_DESCRIPTION always has its CRC32: pass `true` for it whatever
/// the log's algorithm (see the module doc).
pub fn framed_len(body_len: usize, checksum: bool) -> usize {
    HEADER_LEN + body_len + if checksum { CHECKSUM_LEN } else { 0 }
}

/// Length of a framed event of type `ty`: [`framed_len`], with the CRC32
/// of a FORMAT_DESCRIPTION counted whatever `checksum` says. Positions are
/// sums of these.
pub fn framed_len_for(ty: EventType, body_len: usize, checksum: bool) -> usize {
    framed_len(body_len, checksum || ty == EventType::FORMAT_DESCRIPTION)
}

/// Frames `body` as one event: the 19-byte header, the body, and the CRC32 of
/// both when `checksum` is on.
///
/// `log_pos` is written as is into the header: the position just after this
/// event, i.e. its start position plus [`framed_len`]; 0 for events sent to a
/// replica that are not in a file. A FORMAT_DESCRIPTION is always framed
/// with its CRC32 (its body's last byte tells the reader whether the other
/// events have one), so `checksum` is ignored for it.
///
/// # Panics
/// If the framed event would exceed 4 GiB, which `event_size` cannot express;
/// callers split rows events long before (MySQL at `binlog_row_event_max_size`).
pub fn frame(
    ty: EventType,
    timestamp: u32,
    server_id: u32,
    flags: u16,
    body: &[u8],
    log_pos: u32,
    checksum: bool,
) -> Vec<u8> {
    let len = framed_len_for(ty, body.len(), checksum);
    let checksum = checksum || ty == EventType::FORMAT_DESCRIPTION;
    let size = u32::try_from(len).expect("an event is shorter than 4 GiB: rows events are split");
    let mut out = Vec::with_capacity(len);
    out.extend_from_slice(&timestamp.to_le_bytes());
    out.push(ty.0);
    out.extend_from_slice(&server_id.to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&log_pos.to_le_bytes());
    out.extend_from_slice(&flags.to_le_bytes());
    out.extend_from_slice(body);
    if checksum {
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
    }
    debug_assert_eq!(out.len(), len);
    out
}

/// Decodes the common header at the start of `buf`.
pub fn parse_header(buf: &[u8]) -> Result<Header, Error> {
    if buf.len() < HEADER_LEN {
        return Err(Error::Truncated("event header"));
    }
    let u32_at = |i: usize| u32::from_le_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);
    let header = Header {
        timestamp: u32_at(0),
        type_code: EventType(buf[4]),
        server_id: u32_at(5),
        event_size: u32_at(9),
        log_pos: u32_at(13),
        flags: u16::from_le_bytes([buf[17], buf[18]]),
    };
    if (header.event_size as usize) < HEADER_LEN {
        return Err(Error::Malformed(format!(
            "event_size {} is shorter than the header",
            header.event_size
        )));
    }
    Ok(header)
}

/// Checks the CRC32 trailer of one whole framed event (`event.len()` must be
/// its `event_size`).
pub fn verify_checksum(event: &[u8]) -> Result<(), Error> {
    if event.len() < HEADER_LEN + CHECKSUM_LEN {
        return Err(Error::Truncated("event with checksum"));
    }
    let (data, tail) = event.split_at(event.len() - CHECKSUM_LEN);
    let stored = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
    let computed = crc32fast::hash(data);
    if stored != computed {
        return Err(Error::ChecksumMismatch { stored, computed });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_writes_the_header_fields_and_a_crc_that_verifies() {
        let ev = frame(
            EventType::XID,
            7,
            42,
            0,
            &[1, 2, 3, 4, 5, 6, 7, 8],
            1000,
            true,
        );
        assert_eq!(ev.len(), framed_len(8, true));
        let h = parse_header(&ev).expect("header");
        assert_eq!(
            h,
            Header {
                timestamp: 7,
                type_code: EventType::XID,
                server_id: 42,
                event_size: 31,
                log_pos: 1000,
                flags: 0
            }
        );
        verify_checksum(&ev).expect("crc matches");
        let mut bad = ev.clone();
        bad[20] ^= 1;
        assert!(matches!(
            verify_checksum(&bad),
            Err(Error::ChecksumMismatch { .. })
        ));
    }

    #[test]
    fn crc_is_the_zlib_crc32_of_header_and_body() {
        // The CRC-32 check value of "123456789" is 0xcbf43926 for the ISO-HDLC
        // polynomial that MySQL's my_checksum (zlib crc32) uses.
        assert_eq!(crc32fast::hash(b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn format_description_is_always_checksummed() {
        let ev = frame(EventType::FORMAT_DESCRIPTION, 0, 1, 0, &[0; 10], 0, false);
        assert_eq!(ev.len(), framed_len(10, true));
        assert_eq!(
            ev.len(),
            framed_len_for(EventType::FORMAT_DESCRIPTION, 10, false)
        );
        assert_eq!(framed_len_for(EventType::XID, 8, false), 27);
        verify_checksum(&ev).expect("crc");
        let plain = frame(EventType::QUERY, 0, 1, 0, &[0; 10], 0, false);
        assert_eq!(plain.len(), framed_len(10, false));
    }

    #[test]
    fn a_size_shorter_than_the_header_is_malformed() {
        let mut ev = frame(EventType::XID, 0, 1, 0, &[0; 8], 0, false);
        ev[9..13].copy_from_slice(&3u32.to_le_bytes());
        assert!(matches!(parse_header(&ev), Err(Error::Malformed(_))));
        assert!(matches!(parse_header(&ev[..10]), Err(Error::Truncated(_))));
    }
}
