//! Decoding whole events, and walking the events of a log file held in memory.
//!
//! The decoder is the mirror of the builders: used by this crate's tests, by
//! tools that inspect a log, and later by Canyon as a replica reading a
//! source's stream. It reads what MySQL 8 and MariaDB write for the event
//! types listed in [`Event`]; any other type is returned raw as
//! [`Event::Unknown`] so that a reader can skip it.

use crate::control::{self, FormatDescription, QueryEvent};
use crate::event::{
    parse_header, verify_checksum, EventType, Header, BINLOG_MAGIC, CHECKSUM_LEN, HEADER_LEN,
};
use crate::gtid::{Gtid, GtidSet};
use crate::rows::{self, RowsEvent, RowsKind, TableMap};
use crate::wire::text;
use crate::Error;

/// A decoded event body.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// FORMAT_DESCRIPTION.
    FormatDescription(FormatDescription),
    /// ROTATE: the next file and position.
    Rotate {
        /// Position in the next file (4).
        next_pos: u64,
        /// The next file's name.
        next_file: String,
    },
    /// PREVIOUS_GTIDS.
    PreviousGtids(GtidSet),
    /// MySQL GTID.
    Gtid(Gtid),
    /// ANONYMOUS_GTID.
    AnonymousGtid(Gtid),
    /// QUERY.
    Query(QueryEvent),
    /// XID.
    Xid(u64),
    /// TABLE_MAP.
    TableMap(TableMap),
    /// WRITE / UPDATE / DELETE_ROWS v2.
    Rows(RowsEvent),
    /// HEARTBEAT: the sender's current file.
    Heartbeat {
        /// File name.
        log_ident: String,
    },
    /// MariaDB GTID (`domain-server-seq`, the server id from the header).
    MariadbGtid {
        /// Sequence number in the domain.
        seq_no: u64,
        /// Replication domain.
        domain_id: u32,
        /// `MARIADB_FL_*` flags.
        flags: u8,
        /// Group commit id, when flagged.
        commit_id: Option<u64>,
    },
    /// MariaDB GTID_LIST: `(domain, server_id, seq_no)`.
    GtidList(Vec<(u32, u32, u64)>),
    /// MariaDB BINLOG_CHECKPOINT: a file name.
    BinlogCheckpoint(String),
    /// MariaDB ANNOTATE_ROWS: statement text.
    AnnotateRows(Vec<u8>),
    /// Any other type, body as is.
    Unknown {
        /// The type code.
        type_code: EventType,
        /// The body (post-header and payload).
        body: Vec<u8>,
    },
}

/// Decodes one whole framed event (exactly `event_size` bytes). `checksum`
/// says whether the log's events end with a CRC32 (the FORMAT_DESCRIPTION's
/// algorithm byte); it is verified and stripped. A FORMAT_DESCRIPTION always
/// has one.
pub fn parse_event(event: &[u8], checksum: bool) -> Result<(Header, Event), Error> {
    let header = parse_header(event)?;
    if header.event_size as usize != event.len() {
        return Err(Error::Malformed(format!(
            "event_size {} but {} bytes given",
            header.event_size,
            event.len()
        )));
    }
    let ty = header.type_code;
    let has_crc = checksum || ty == EventType::FORMAT_DESCRIPTION;
    let end = if has_crc {
        verify_checksum(event)?;
        event.len() - CHECKSUM_LEN
    } else {
        event.len()
    };
    let body = &event[HEADER_LEN..end];
    let ev = match ty {
        EventType::FORMAT_DESCRIPTION => {
            Event::FormatDescription(control::parse_format_description(body)?)
        }
        EventType::ROTATE => {
            let (next_pos, next_file) = control::parse_rotate(body)?;
            Event::Rotate {
                next_pos,
                next_file,
            }
        }
        EventType::PREVIOUS_GTIDS => Event::PreviousGtids(GtidSet::decode(body)?),
        EventType::GTID => Event::Gtid(control::parse_gtid(body)?),
        EventType::ANONYMOUS_GTID => Event::AnonymousGtid(control::parse_gtid(body)?),
        EventType::QUERY => Event::Query(control::parse_query(body)?),
        EventType::XID => {
            let b: [u8; 8] = body
                .try_into()
                .map_err(|_| Error::Malformed(format!("XID body of {} bytes", body.len())))?;
            Event::Xid(u64::from_le_bytes(b))
        }
        EventType::TABLE_MAP => Event::TableMap(rows::parse_table_map(body)?),
        EventType::WRITE_ROWS => Event::Rows(rows::parse_rows(RowsKind::Write, body)?),
        EventType::UPDATE_ROWS => Event::Rows(rows::parse_rows(RowsKind::Update, body)?),
        EventType::DELETE_ROWS => Event::Rows(rows::parse_rows(RowsKind::Delete, body)?),
        EventType::HEARTBEAT => Event::Heartbeat {
            log_ident: text(body, "HEARTBEAT file name")?,
        },
        EventType::MARIADB_GTID => {
            let (seq_no, domain_id, flags, commit_id) = control::parse_mariadb_gtid(body)?;
            Event::MariadbGtid {
                seq_no,
                domain_id,
                flags,
                commit_id,
            }
        }
        EventType::GTID_LIST => Event::GtidList(control::parse_gtid_list(body)?),
        EventType::BINLOG_CHECKPOINT => {
            Event::BinlogCheckpoint(control::parse_binlog_checkpoint(body)?)
        }
        EventType::ANNOTATE_ROWS => Event::AnnotateRows(body.to_vec()),
        _ => Event::Unknown {
            type_code: ty,
            body: body.to_vec(),
        },
    };
    Ok((header, ev))
}

/// One event of a log file.
#[derive(Clone, Debug, PartialEq)]
pub struct LogEvent {
    /// Position of the event's first byte in the file.
    pub pos: u64,
    /// Its header.
    pub header: Header,
    /// Its body.
    pub event: Event,
}

/// Walks the events of a whole binary log file held in memory: checks the
/// magic bytes, takes the checksum setting from the FORMAT_DESCRIPTION, and
/// checks every event's `log_pos` against its end.
pub struct LogReader<'a> {
    buf: &'a [u8],
    pos: usize,
    checksum: bool,
    failed: bool,
}

impl<'a> LogReader<'a> {
    /// A reader over `file`, which must start with [`BINLOG_MAGIC`].
    pub fn new(file: &'a [u8]) -> Result<Self, Error> {
        if file.len() < BINLOG_MAGIC.len() || file[..4] != BINLOG_MAGIC {
            return Err(Error::Malformed(
                "not a binary log: magic bytes missing".into(),
            ));
        }
        Ok(LogReader {
            buf: file,
            pos: BINLOG_MAGIC.len(),
            checksum: false,
            failed: false,
        })
    }

    fn read_one(&mut self) -> Result<LogEvent, Error> {
        let header = parse_header(&self.buf[self.pos..])?;
        let size = header.event_size as usize;
        let raw = self
            .buf
            .get(self.pos..self.pos + size)
            .ok_or(Error::Truncated("event"))?;
        let (header, event) = parse_event(raw, self.checksum)?;
        if let Event::FormatDescription(fd) = &event {
            self.checksum = fd.checksum();
        }
        let end = (self.pos + size) as u64;
        if header.log_pos != 0 && u64::from(header.log_pos) != end {
            return Err(Error::Malformed(format!(
                "event at {} has log_pos {} but ends at {end}",
                self.pos, header.log_pos
            )));
        }
        let ev = LogEvent {
            pos: self.pos as u64,
            header,
            event,
        };
        self.pos += size;
        Ok(ev)
    }
}

impl Iterator for LogReader<'_> {
    type Item = Result<LogEvent, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.buf.len() {
            return None;
        }
        let r = self.read_one();
        self.failed = r.is_err();
        Some(r)
    }
}
