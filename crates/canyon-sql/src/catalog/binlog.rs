//! The binary log's state: the server's identity, its log files over the
//! change log, and the reader that serves them to replicas. What a commit
//! puts in the log is built by `crate::binlog`; this module only stores and
//! serves it.
//!
//! # Files
//!
//! The change log (canyon-txn) is one sequence of records with byte offsets.
//! Files are views of it: file N starts at the offset where the rotation
//! marker that ended file N-1 stops (file 1 at the marker written when the
//! log was first enabled) and its records sit at
//!
//! ```text
//! position = header_len + (record.offset - file.start_offset)
//! header_len = 4 (magic) + FORMAT_DESCRIPTION + PREVIOUS_GTIDS   (framed, with CRC32)
//! ```
//!
//! so a position is computed, never looked up, and the events served carry
//! exactly the `log_pos` values a file on disk would. A rotation marker's
//! length is that of the ROTATE event ending its file. The index of files is
//! kept in Meta (`binlog/file/<n>`), written in the marker's batch.
//!
//! Which files a purge may remove (never one a reader holds) and when
//! they expire by age is `retention.rs`; what a MariaDB reader gets instead
//! of MySQL's events is `mariadb.rs`.

use crate::catalog::config::BinlogConfig;
use canyon_binlog::control::Flavor;
use canyon_binlog::event::{BINLOG_MAGIC, LOG_EVENT_ARTIFICIAL_F};
use canyon_binlog::{frame, framed_len, EventType, Gtid, GtidSet};
use canyon_common::{Error, Result};
use canyon_storage::{KeyRange, Keyspace, Storage, WriteBatch};
use canyon_txn::{LogEntry, LogHead, LogRecord, TxnManager};
use parking_lot::RwLock;
use serde::{Deserialize, Serialize};
use std::ops::ControlFlow;

mod mariadb;
mod retention;
pub mod semisync;
pub use mariadb::Snapshot;
pub use retention::{Purged, ReadPin};

/// Record kinds (a change-log payload's first byte; `crate::binlog` writes
/// the events): a transaction.
pub const KIND_TRANSACTION: u8 = b'T';
/// A statement logged alone (DDL).
pub const KIND_STATEMENT: u8 = b'Q';
/// A rotation marker.
pub const KIND_ROTATE: u8 = b'R';
/// A transaction or statement another server committed, logged by this
/// server's replica applier: `'F' ++ source uuid [16] ++ gno u64 ++` the
/// record as its own kind. Not counted (it takes no number of this
/// server's); served under its original GTID, so that a replica of this
/// replica, or one re-pointed here after a failover, gets the source's
/// transactions under the source's GTIDs (MySQL's `log_replica_updates`
/// with GTIDs).
pub const KIND_FOREIGN: u8 = b'F';
/// The bytes before a foreign record's own payload.
const FOREIGN_HEADER: usize = 1 + 16 + 8;

/// Makes `entry` a [`KIND_FOREIGN`] record of the transaction `sid:gno`.
pub fn foreign_entry(mut entry: LogEntry, sid: [u8; 16], gno: u64) -> LogEntry {
    let mut payload = Vec::with_capacity(FOREIGN_HEADER + entry.payload.len());
    payload.push(KIND_FOREIGN);
    payload.extend_from_slice(&sid);
    payload.extend_from_slice(&gno.to_be_bytes());
    payload.append(&mut entry.payload);
    LogEntry {
        payload,
        len: entry.len,
        counted: false,
    }
}

/// The original GTID of a [`KIND_FOREIGN`] record (`None`: this server's
/// own, or a marker).
pub fn record_origin(payload: &[u8]) -> Option<([u8; 16], u64)> {
    if payload.first() != Some(&KIND_FOREIGN) || payload.len() < FOREIGN_HEADER {
        return None;
    }
    let sid: [u8; 16] = payload[1..17].try_into().ok()?;
    let gno = u64::from_be_bytes(payload[17..25].try_into().ok()?);
    Some((sid, gno))
}

/// Checks that serving `rec` from `start` ended at `pos`, the end its stored
/// length promised: the positions every reader was told (SHOW MASTER STATUS,
/// the next record's offset) depend on it, whichever flavour framed it.
fn record_end(rec: &LogRecord, start: u64, pos: u64) -> Result<()> {
    if pos == start + rec.len {
        return Ok(());
    }
    Err(Error::Corrupt(format!(
        "binary log record {} is {} bytes of events, its length says {}",
        rec.seq,
        pos - start,
        rec.len
    )))
}

/// A stored record's events: its kind and (type, body) pairs (the payload
/// format: `kind u8 ++ (type u8 ++ len u32 ++ body)*`; a rotation marker
/// is `'R' ++ file number u32`).
pub fn decode_payload(payload: &[u8]) -> Result<(u8, Vec<(EventType, &[u8])>)> {
    let bad = || Error::Corrupt(format!("binary log record of {} bytes", payload.len()));
    if payload.first() == Some(&KIND_FOREIGN) {
        return decode_payload(payload.get(FOREIGN_HEADER..).ok_or_else(bad)?);
    }
    let (&kind, mut rest) = payload.split_first().ok_or_else(bad)?;
    let mut events = Vec::new();
    if kind == KIND_ROTATE {
        return Ok((kind, events));
    }
    while !rest.is_empty() {
        if rest.len() < 5 {
            return Err(bad());
        }
        let ty = EventType(rest[0]);
        let n = u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
        let body = rest.get(5..5 + n).ok_or_else(bad)?;
        events.push((ty, body));
        rest = &rest[5 + n..];
    }
    Ok((kind, events))
}

/// The Meta key of the server's UUID.
const UUID_KEY: &[u8] = b"binlog/uuid";

/// The engine's binary log.
#[derive(Debug)]
pub struct Binlog {
    pub(crate) config: BinlogConfig,
    /// `server_uuid`.
    pub(crate) uuid: [u8; 16],
    /// The server version FORMAT_DESCRIPTION events carry.
    version: String,
    /// The file index, oldest first (`files.rs`).
    files: RwLock<Vec<BinlogFile>>,
    /// Transactions of other servers executed here as a replica
    /// (`crate::catalog::replica`): part of `gtid_executed`.
    others: parking_lot::Mutex<GtidSet>,
    /// Readers' pins and the expiry limit (`retention.rs`).
    retention: retention::Retention,
    /// Semi-synchronous replication's acknowledgements (`semisync.rs`).
    semisync: std::sync::Arc<semisync::SemiSync>,
}

impl Binlog {
    /// Opens the log: the server's UUID (made on first start), the file
    /// index, and, when the log is on and has no file yet, file 1.
    pub fn open(
        config: BinlogConfig,
        version: &str,
        storage: &dyn Storage,
        txn: &TxnManager,
    ) -> Result<Binlog> {
        let uuid = match storage.get(Keyspace::Meta, UUID_KEY)? {
            Some(v) => canyon_binlog::gtid::parse_uuid(&String::from_utf8_lossy(&v))
                .map_err(|e| Error::Corrupt(format!("server_uuid: {e}")))?,
            None => {
                let mut u: [u8; 16] = rand::random();
                // RFC 4122 version 4, variant 1 (what MySQL's UUID() looks like).
                u[6] = (u[6] & 0x0f) | 0x40;
                u[8] = (u[8] & 0x3f) | 0x80;
                let mut b = WriteBatch::new();
                b.put(
                    Keyspace::Meta,
                    UUID_KEY.to_vec(),
                    canyon_binlog::gtid::format_uuid(&u).into_bytes(),
                );
                storage.write(b, true)?;
                u
            }
        };
        let mut files = Vec::new();
        let mut err = None;
        storage.scan(
            Keyspace::Meta,
            &KeyRange::prefix(FILE_PREFIX),
            false,
            &mut |_, v| match serde_json::from_slice::<BinlogFile>(v) {
                Ok(f) => {
                    files.push(f);
                    ControlFlow::Continue(())
                }
                Err(e) => {
                    err = Some(Error::Corrupt(format!("binary log file index: {e}")));
                    ControlFlow::Break(())
                }
            },
        )?;
        if let Some(e) = err {
            return Err(e);
        }
        let log = Binlog {
            retention: retention::Retention::new(config.expire_logs_seconds),
            semisync: Default::default(),
            config,
            uuid,
            version: version.to_string(),
            files: RwLock::new(files),
            others: parking_lot::Mutex::new(GtidSet::new()),
        };
        if log.config.enabled && log.files.read().is_empty() {
            log.start_file(txn, 1)?;
        }
        // Expiry at startup, as MySQL's (`retention.rs`, rule 3).
        log.expire(txn, storage, wall_us())?;
        Ok(log)
    }

    /// Whether the log is on (`log_bin`).
    pub fn enabled(&self) -> bool {
        self.config.enabled
    }

    /// Semi-synchronous replication's state (`semisync.rs`).
    pub fn semi_sync(&self) -> &std::sync::Arc<semisync::SemiSync> {
        &self.semisync
    }

    /// `server_id`.
    pub fn server_id(&self) -> u32 {
        self.config.server_id
    }

    /// `log_bin_basename`.
    pub fn basename(&self) -> String {
        self.config.basename.clone()
    }

    /// `server_uuid`, as text.
    pub fn server_uuid(&self) -> String {
        canyon_binlog::gtid::format_uuid(&self.uuid)
    }

    /// `gtid_executed`: every transaction logged, and those of other
    /// servers applied here as a replica.
    pub fn executed(&self, txn: &TxnManager) -> GtidSet {
        let mut set = self.gtids_before(&txn.log_head());
        set.union(&self.others.lock());
        set
    }

    /// Sets the other servers' transactions applied here (the replica's
    /// applied set, after each commit).
    pub fn set_others(&self, set: GtidSet) {
        *self.others.lock() = set;
    }

    /// `gtid_purged`: the transactions whose records are purged.
    pub fn purged(&self, txn: &TxnManager) -> Result<GtidSet> {
        let first = txn.log_first_seq();
        let mut first_number = None;
        txn.read_log(first, &mut |r| {
            if r.number == 0 {
                return true;
            }
            first_number = Some(r.number);
            false
        })?;
        let head = txn.log_head();
        let upto = first_number.unwrap_or(head.next_number);
        let mut set = GtidSet::new();
        if upto > 1 {
            let _ = set.add_interval(self.uuid, 1, upto - 1);
        }
        Ok(set)
    }

    /// FLUSH BINARY LOGS: closes the current file, starts the next, then
    /// purges the files past `binlog_expire_logs_seconds` (`retention.rs`).
    pub fn rotate(&self, txn: &TxnManager, storage: &dyn Storage) -> Result<()> {
        if !self.enabled() {
            return Ok(());
        }
        let next = self.files.read().last().map_or(1, |f| f.number + 1);
        self.start_file(txn, next)?;
        self.expire(txn, storage, wall_us())?;
        Ok(())
    }
}

/// The Meta prefix of the file index.
pub(crate) const FILE_PREFIX: &[u8] = b"binlog/file/";

/// One binary log file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BinlogFile {
    /// Its number (the name's suffix).
    pub number: u32,
    /// Its name, `basename.000001`.
    pub name: String,
    /// The first record in it (the marker's seq + 1).
    pub first_seq: u64,
    /// The log offset its records start at.
    pub start_offset: u64,
    /// Its FORMAT_DESCRIPTION body.
    pub fde: Vec<u8>,
    /// Its PREVIOUS_GTIDS body.
    pub previous_gtids: Vec<u8>,
    /// When it was created (microseconds since the epoch).
    pub created_us: u64,
}

impl BinlogFile {
    /// Bytes before its first record.
    pub fn header_len(&self) -> u64 {
        (BINLOG_MAGIC.len()
            + framed_len(self.fde.len(), true)
            + framed_len(self.previous_gtids.len(), true)) as u64
    }

    /// The position of a record at log offset `offset` in this file.
    pub fn position(&self, offset: u64) -> u64 {
        self.header_len() + (offset - self.start_offset)
    }

    fn key(number: u32) -> Vec<u8> {
        let mut k = FILE_PREFIX.to_vec();
        k.extend_from_slice(&number.to_be_bytes());
        k
    }
}

fn wall_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// MySQL's error for a replica whose request the log cannot serve.
pub(crate) fn fatal_1236(msg: impl Into<String>) -> Error {
    Error::Sql {
        code: 1236,
        sqlstate: *b"HY000",
        message: msg.into(),
    }
}

impl Binlog {
    /// The name of file `number`.
    pub(crate) fn file_name(&self, number: u32) -> String {
        format!("{}.{number:06}", self.config.basename)
    }

    /// The first kept foreign record whose GTID `have` lacks. Errors with
    /// 1236 when a transaction of `others` (applied here from another
    /// server) that `have` lacks is in no kept record: purged, or applied
    /// while this server's log was off.
    fn first_foreign_lacking(
        &self,
        txn: &TxnManager,
        have: &GtidSet,
        others: &GtidSet,
    ) -> Result<u64> {
        let mut first = None;
        let mut kept = GtidSet::new();
        txn.read_log(txn.log_first_seq(), &mut |r| {
            if let Some((sid, gno)) = record_origin(&r.payload) {
                let _ = kept.add(sid, gno);
                if first.is_none() && !have.contains(&sid, gno) {
                    first = Some(r.seq);
                }
            }
            true
        })?;
        let mut reachable = kept;
        reachable.union(have);
        if !others.is_subset_of(&reachable) {
            return Err(fatal_1236(
                "Cannot replicate because the source purged required binary logs: the replica \
                 lacks transactions of another server that this server applied but no longer \
                 has in its log (or applied with its binary log off). Replicate them from \
                 elsewhere, or provision a new replica from backup.",
            ));
        }
        Ok(first.unwrap_or_else(|| txn.log_head().next_seq))
    }

    /// The GTIDs of every transaction before `head` (all this server's:
    /// numbers are gap-free from 1).
    pub(crate) fn gtids_before(&self, head: &LogHead) -> GtidSet {
        let mut set = GtidSet::new();
        if head.next_number > 1 {
            // Cannot fail: 1 <= next_number - 1.
            let _ = set.add_interval(self.uuid, 1, head.next_number - 1);
        }
        set
    }

    /// Starts file `number` at the head: the rotation marker (ending the
    /// previous file with a ROTATE, unless this is the first) and the index
    /// entry, in one synced batch.
    pub(crate) fn start_file(&self, txn: &TxnManager, number: u32) -> Result<BinlogFile> {
        let name = self.file_name(number);
        let rotate_len = if number > 1 {
            framed_len(canyon_binlog::control::rotate(4, &name).len(), true) as u64
        } else {
            0
        };
        let mut made = None;
        txn.append_log_marker(&mut |at: &LogHead| {
            let file = BinlogFile {
                number,
                name: name.clone(),
                first_seq: at.next_seq + 1,
                start_offset: at.next_offset + rotate_len,
                fde: canyon_binlog::control::format_description(&self.version, true),
                previous_gtids: canyon_binlog::control::previous_gtids(&{
                    let mut before = self.gtids_before(at);
                    before.union(&self.others.lock());
                    before
                }),
                created_us: wall_us(),
            };
            let json = serde_json::to_vec(&file).map_err(|e| Error::Internal(e.to_string()))?;
            let mut payload = vec![KIND_ROTATE];
            payload.extend_from_slice(&number.to_be_bytes());
            made = Some(file);
            Ok((
                LogEntry {
                    payload,
                    len: rotate_len,
                    counted: false,
                },
                vec![(BinlogFile::key(number), json)],
            ))
        })?;
        let file = made.expect("the marker's builder ran");
        self.files.write().push(file.clone());
        Ok(file)
    }

    /// The files, oldest first.
    pub fn files(&self) -> Vec<BinlogFile> {
        self.files.read().clone()
    }

    /// The file `seq` belongs to (the last one starting at or before it).
    fn file_of_seq(&self, seq: u64) -> Option<BinlogFile> {
        let files = self.files.read();
        files.iter().rev().find(|f| f.first_seq <= seq).cloned()
    }

    /// Where the log ends now: the last file and the position after its
    /// last record (written, perhaps not yet durable).
    pub fn end(&self, txn: &TxnManager) -> (BinlogFile, u64) {
        let files = self.files.read();
        let last = files.last().expect("an enabled log has a file").clone();
        let head = txn.log_head();
        let pos = last.position(head.next_offset.max(last.start_offset));
        (last, pos)
    }

    /// Each file's size in bytes.
    pub fn sizes(&self, txn: &TxnManager) -> Vec<(String, u64)> {
        let files = self.files.read();
        let head = txn.log_head();
        files
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let end_offset = match files.get(i + 1) {
                    Some(next) => next.start_offset,
                    None => head.next_offset.max(f.start_offset),
                };
                (f.name.clone(), f.position(end_offset))
            })
            .collect()
    }

    /// The GTID event template (its length does not depend on the values).
    pub(crate) fn gtid_template(&self) -> Gtid {
        Gtid {
            sid: self.uuid,
            immediate_server_version: SERVER_VERSION_ID,
            original_server_version: SERVER_VERSION_ID,
            ..Gtid::default()
        }
    }
}

/// MySQL 8.0.36 as the GTID event's server version (`MAJOR*10000 +
/// MINOR*100 + PATCH`): what Canyon's protocol announces.
const SERVER_VERSION_ID: u32 = 80036;

/// Where a replica asks to start.
#[derive(Debug, Clone)]
pub enum StartAt {
    /// COM_BINLOG_DUMP: a file and a position in it (4: its beginning).
    Position {
        /// The file's name.
        file: String,
        /// The position.
        pos: u64,
    },
    /// COM_BINLOG_DUMP_GTID: every transaction not in this set.
    Gtids(GtidSet),
}

/// A replica's (or SHOW BINLOG EVENTS') walk over the log.
#[derive(Debug)]
pub struct BinlogReader {
    file: BinlogFile,
    /// The next record to read.
    next_seq: u64,
    /// The position after the last event sent.
    pos: u64,
    /// Events framed but not yet taken.
    queued: Vec<Vec<u8>>,
    /// Transactions the replica has (GTID start): skipped.
    skip: Option<GtidSet>,
    checksum: bool,
    /// Which family's events the reader serves (`mariadb.rs`).
    flavor: Flavor,
    /// The file it reads, which no purge removes (`retention.rs`).
    pin: ReadPin,
    /// Semi-synchronous replica (`semisync.rs`): where each transaction
    /// served ends, for its acknowledgement; `None` for other readers.
    ack_points: Option<Vec<AckPoint>>,
}

/// The end of a transaction served to a semi-synchronous replica: the
/// replica acknowledges (`file`, `pos`), which stands for the record
/// committed at `ts` (`semisync.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AckPoint {
    /// Its last event's index in the batch [`Binlog::read`] returned.
    pub index: usize,
    /// The file and the position after that event.
    pub file: String,
    /// See `file`.
    pub pos: u64,
    /// The record's commit timestamp.
    pub ts: canyon_txn::Timestamp,
}

impl BinlogReader {
    /// The record the reader waits for next.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// The file and position after the last event handed out.
    pub fn position(&self) -> (&str, u64) {
        (&self.file.name, self.pos)
    }

    /// Whether events are framed with their CRC32.
    pub fn checksum(&self) -> bool {
        self.checksum
    }

    /// Makes [`Binlog::read`] note where each transaction ends
    /// ([`BinlogReader::take_ack_points`]), for a semi-synchronous replica.
    pub fn note_ack_points(&mut self) {
        self.ack_points.get_or_insert_with(Vec::new);
    }

    /// The transaction ends in the batch the last [`Binlog::read`] returned.
    pub fn take_ack_points(&mut self) -> Vec<AckPoint> {
        self.ack_points
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }
}

impl Binlog {
    /// A reader from `start`, its first events (the artificial ROTATE and the
    /// file's FORMAT_DESCRIPTION) queued. Errors are 1236, as MySQL's.
    pub fn reader(
        &self,
        txn: &TxnManager,
        start: &StartAt,
        checksum: bool,
    ) -> Result<BinlogReader> {
        self.reader_for(txn, start, checksum, Flavor::MySql)
    }

    /// [`Binlog::reader`] serving `flavor`'s events (a MariaDB replica's:
    /// `crate::catalog::binlog::mariadb`).
    pub fn reader_for(
        &self,
        txn: &TxnManager,
        start: &StartAt,
        checksum: bool,
        flavor: Flavor,
    ) -> Result<BinlogReader> {
        let first_kept = txn.log_first_seq();
        let (file, seq, pos, skip) = match start {
            StartAt::Position { file, pos } => {
                let f = self
                    .files
                    .read()
                    .iter()
                    // An empty name is the first file kept (as MySQL's and
                    // MariaDB's sources take it).
                    .find(|f| f.name == *file || file.is_empty())
                    .cloned()
                    .ok_or_else(|| {
                        fatal_1236("Could not find first log file name in binary log index file")
                    })?;
                let pos = (*pos).max(4);
                let seq = self.seq_at_position(txn, &f, pos)?;
                (f, seq, pos, None)
            }
            StartAt::Gtids(have) => {
                let head = txn.log_head();
                let beyond = have.iter().any(|(sid, intervals)| {
                    *sid == self.uuid && intervals.iter().any(|(_, end)| *end >= head.next_number)
                });
                if beyond {
                    return Err(fatal_1236(
                        "Cannot replicate because the source has fewer transactions than the replica \
                         (the replica has GTIDs of this source that it never logged)",
                    ));
                }
                // The first transaction the replica lacks.
                let mut first = 1;
                while first < head.next_number && have.contains(&self.uuid, first) {
                    first += 1;
                }
                let mut seq = if first >= head.next_number {
                    head.next_seq
                } else {
                    self.seq_of_number(txn, first)?
                };
                let others = self.others.lock().clone();
                if !others.is_subset_of(have) {
                    // It lacks transactions of other servers applied here:
                    // they are foreign records, possibly before `seq`.
                    seq = seq.min(self.first_foreign_lacking(txn, have, &others)?);
                }
                if seq < first_kept {
                    return Err(fatal_1236(
                        "Cannot replicate because the source purged required binary logs. \
                         Replicate the missing transactions from elsewhere, or provision a new \
                         replica from backup.",
                    ));
                }
                let f = self
                    .file_of_seq(seq)
                    .ok_or_else(|| fatal_1236("the binary log holds no file"))?;
                let pos = if seq == head.next_seq {
                    self.end(txn).1
                } else {
                    let mut p = 0;
                    txn.read_log(seq, &mut |r| {
                        p = f.position(r.offset);
                        false
                    })?;
                    p.max(4)
                };
                (f, seq, pos, Some(have.clone()))
            }
        };
        // Checks that `seq` is still kept, under the pins' lock.
        let pin = self.pin(txn, file.number, seq)?;
        let mut r = BinlogReader {
            file: file.clone(),
            next_seq: seq,
            pos,
            queued: Vec::new(),
            ack_points: None,
            skip,
            checksum,
            flavor,
            pin,
        };
        let sid = self.config.server_id;
        r.queued.push(frame(
            EventType::ROTATE,
            0,
            sid,
            LOG_EVENT_ARTIFICIAL_F,
            &canyon_binlog::control::rotate(pos, &file.name),
            0,
            checksum,
        ));
        self.queue_header(&mut r, pos <= 4);
        Ok(r)
    }

    /// Queues the reader's file's FORMAT_DESCRIPTION, and its
    /// PREVIOUS_GTIDS when reading from the beginning (else the description
    /// goes with `log_pos` 0: the replica keeps its position).
    fn queue_header(&self, r: &mut BinlogReader, from_start: bool) {
        if r.flavor == Flavor::MariaDb {
            return self.queue_mariadb_header(r, from_start);
        }
        let sid = self.config.server_id;
        let ts = (r.file.created_us / 1_000_000) as u32;
        let fde_end = (BINLOG_MAGIC.len() + framed_len(r.file.fde.len(), true)) as u32;
        let fde = if r.checksum {
            r.file.fde.clone()
        } else {
            let mut b = r.file.fde.clone();
            if let Some(last) = b.last_mut() {
                *last = canyon_binlog::control::CHECKSUM_ALG_OFF;
            }
            b
        };
        r.queued.push(frame(
            EventType::FORMAT_DESCRIPTION,
            ts,
            sid,
            0,
            &fde,
            if from_start { fde_end } else { 0 },
            r.checksum,
        ));
        if from_start {
            r.queued.push(frame(
                EventType::PREVIOUS_GTIDS,
                ts,
                sid,
                0,
                &r.file.previous_gtids,
                r.file.header_len() as u32,
                r.checksum,
            ));
            r.pos = r.file.header_len();
        }
    }

    /// The seq of the record at `pos` in `file` (or of the first, at the
    /// file's start; the head, at its end); 1236 for a position inside an
    /// event.
    fn seq_at_position(&self, txn: &TxnManager, file: &BinlogFile, pos: u64) -> Result<u64> {
        if pos == 4 || pos == file.header_len() {
            return Ok(file.first_seq);
        }
        let bad = || {
            fatal_1236(format!(
                "Client requested source to start replication from position {pos} in {}, \
                 which is not the start of an event",
                file.name
            ))
        };
        if pos < file.header_len() {
            return Err(bad());
        }
        let want = file.start_offset + (pos - file.header_len());
        let (end_file, end_pos) = self.end(txn);
        if end_file.number == file.number && pos == end_pos {
            return Ok(txn.log_head().next_seq);
        }
        // Records' offsets grow with their seq: bisect on seq.
        let next_first = self
            .files
            .read()
            .iter()
            .find(|f| f.number == file.number + 1)
            .map(|f| f.first_seq)
            .unwrap_or_else(|| txn.log_head().next_seq + 1);
        let (mut lo, mut hi) = (file.first_seq.max(txn.log_first_seq()), next_first - 1);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let mut off = None;
            txn.read_log(mid, &mut |r| {
                off = Some(r.offset);
                false
            })?;
            match off {
                Some(o) if o == want => return Ok(mid),
                Some(o) if o < want => lo = mid + 1,
                _ => hi = mid,
            }
        }
        let mut off = None;
        txn.read_log(lo, &mut |r| {
            off = Some(r.offset);
            false
        })?;
        if off == Some(want) {
            Ok(lo)
        } else {
            Err(bad())
        }
    }

    /// The seq of the transaction numbered `number` (bisecting: numbers
    /// grow with seq; a marker between takes the next counted record's).
    fn seq_of_number(&self, txn: &TxnManager, number: u64) -> Result<u64> {
        let counted_at = |seq: u64| -> Result<Option<(u64, u64)>> {
            let mut found = None;
            txn.read_log(seq, &mut |r| {
                if r.number == 0 {
                    return true;
                }
                found = Some((r.seq, r.number));
                false
            })?;
            Ok(found)
        };
        let (mut lo, mut hi) = (txn.log_first_seq(), txn.log_head().next_seq);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match counted_at(mid)? {
                Some((_, n)) if n < number => lo = mid + 1,
                _ => hi = mid,
            }
        }
        match counted_at(lo)? {
            Some((seq, n)) if n == number => Ok(seq),
            _ => Err(fatal_1236(
                "Cannot replicate because the source purged required binary logs.",
            )),
        }
    }

    /// Up to about `max_bytes` of events, in order; empty when the reader
    /// has everything visible so far (wait with
    /// `TxnManager::log_changed(reader.next_seq())`).
    pub fn read(
        &self,
        txn: &TxnManager,
        r: &mut BinlogReader,
        max_bytes: usize,
    ) -> Result<Vec<Vec<u8>>> {
        let mut out = std::mem::take(&mut r.queued);
        let mut bytes: usize = out.iter().map(Vec::len).sum();
        let mut records: Vec<LogRecord> = Vec::new();
        txn.read_log(r.next_seq, &mut |rec| {
            bytes += rec.payload.len();
            records.push(rec);
            bytes < max_bytes
        })?;
        if let Some(points) = &mut r.ack_points {
            points.clear();
        }
        for rec in records {
            r.next_seq = rec.seq + 1;
            let before = out.len();
            self.serve_record(r, &rec, &mut out)?;
            let served = out.len() > before && rec.payload.first() != Some(&KIND_ROTATE);
            if let (true, Some(points)) = (served, &mut r.ack_points) {
                points.push(AckPoint {
                    index: out.len() - 1,
                    file: r.file.name.clone(),
                    pos: r.pos,
                    ts: rec.ts,
                });
            }
        }
        Ok(out)
    }

    fn serve_record(
        &self,
        r: &mut BinlogReader,
        rec: &LogRecord,
        out: &mut Vec<Vec<u8>>,
    ) -> Result<()> {
        let sid = self.config.server_id;
        let (kind, events) = decode_payload(&rec.payload)?;
        let start = r.file.position(rec.offset);
        let ts = (rec.wall_us / 1_000_000) as u32;
        if kind == KIND_ROTATE {
            let number = u32::from_be_bytes(
                rec.payload
                    .get(1..5)
                    .and_then(|b| b.try_into().ok())
                    .ok_or_else(|| Error::Corrupt("binary log rotation marker".into()))?,
            );
            let Some(next) = self
                .files
                .read()
                .iter()
                .find(|f| f.number == number)
                .cloned()
            else {
                return Err(Error::Corrupt(format!(
                    "binary log file {number} has a marker but no index entry"
                )));
            };
            if number > 1 && r.file.number + 1 == number {
                let body = canyon_binlog::control::rotate(4, &next.name);
                out.push(frame(
                    EventType::ROTATE,
                    ts,
                    sid,
                    0,
                    &body,
                    (start + rec.len) as u32,
                    r.checksum,
                ));
            }
            r.pin.set(next.number);
            r.file = next;
            self.queue_header(r, true);
            out.append(&mut r.queued);
            return Ok(());
        }
        let origin = record_origin(&rec.payload);
        if let Some(have) = &r.skip {
            let (sid, gno) = origin.unwrap_or((self.uuid, rec.number));
            if have.contains(&sid, gno) {
                r.pos = start + rec.len;
                return Ok(());
            }
        }
        if r.flavor == Flavor::MariaDb {
            if let Some((sid, gno)) = origin {
                // MariaDB's GTIDs are this server's numbers, which a foreign
                // record does not take.
                return Err(fatal_1236(format!(
                    "transaction {}:{gno} was replicated here from another server; a MariaDB \
                     replica cannot be sent it by this server yet: replicate from that server",
                    canyon_binlog::gtid::format_uuid(&sid)
                )));
            }
            return self.serve_mariadb_record(r, rec, kind, &events, out);
        }
        let mut gtid = self.record_gtid(r, rec, kind);
        if let Some((sid, gno)) = origin {
            gtid.sid = sid;
            gtid.gno = gno;
        }
        let mut pos = start;
        let body = canyon_binlog::control::gtid(&gtid);
        pos += framed_len(body.len(), true) as u64;
        out.push(frame(
            EventType::GTID,
            ts,
            sid,
            0,
            &body,
            pos as u32,
            r.checksum,
        ));
        for (ty, body) in events {
            pos += framed_len(body.len(), true) as u64;
            out.push(frame(ty, ts, sid, 0, body, pos as u32, r.checksum));
        }
        record_end(rec, start, pos)?;
        r.pos = pos;
        Ok(())
    }

    /// The MySQL GTID event of `rec`, a counted record of `r`'s file.
    fn record_gtid(&self, r: &BinlogReader, rec: &LogRecord, kind: u8) -> Gtid {
        let seq_in_file = (rec.seq - r.file.first_seq + 1) as i64;
        Gtid {
            gno: rec.number,
            last_committed: seq_in_file - 1,
            sequence_number: seq_in_file,
            immediate_commit_ts_us: rec.wall_us,
            original_commit_ts_us: rec.wall_us,
            transaction_length: rec.len,
            may_have_sbr: kind == KIND_STATEMENT,
            ..self.gtid_template()
        }
    }

    /// A HEARTBEAT for a reader that is waiting (its file and position).
    pub fn heartbeat(&self, r: &BinlogReader) -> Vec<u8> {
        frame(
            EventType::HEARTBEAT,
            0,
            self.config.server_id,
            LOG_EVENT_ARTIFICIAL_F,
            &canyon_binlog::control::heartbeat(&r.file.name),
            r.pos as u32,
            r.checksum,
        )
    }
}

/// Whether `name` is one of [`live_var`]'s.
pub(crate) fn is_live(name: &str) -> bool {
    mariadb::is_live(name)
        || is_retention_var(name)
        || semisync::is_var(name)
        || matches!(
            name,
            "log_bin"
                | "server_id"
                | "server_uuid"
                | "gtid_mode"
                | "enforce_gtid_consistency"
                | "gtid_executed"
                | "gtid_purged"
                | "log_bin_basename"
                | "log_bin_index"
        )
}

/// Values of the binary-log variables that change as the server runs
/// (`None`: not one of them).
pub(crate) fn live_var(
    log: &Binlog,
    txn: &TxnManager,
    name: &str,
) -> Option<crate::types::value::Value> {
    Some(match name {
        "log_bin" => crate::types::value::Value::Int(i64::from(log.enabled())),
        "server_id" => crate::types::value::Value::Int(i64::from(log.server_id())),
        "server_uuid" => crate::types::value::Value::str(&log.server_uuid()),
        "gtid_mode" => crate::types::value::Value::str(if log.enabled() { "ON" } else { "OFF" }),
        "enforce_gtid_consistency" => {
            crate::types::value::Value::str(if log.enabled() { "ON" } else { "OFF" })
        }
        "gtid_executed" => crate::types::value::Value::str(&log.executed(txn).to_string()),
        "gtid_purged" => crate::types::value::Value::str(
            &log.purged(txn).map(|s| s.to_string()).unwrap_or_default(),
        ),
        "log_bin_basename" => crate::types::value::Value::str(&log.basename()),
        "log_bin_index" => crate::types::value::Value::str(&format!("{}.index", log.basename())),
        "binlog_expire_logs_seconds" => {
            crate::types::value::Value::Int(log.expire_seconds() as i64)
        }
        "expire_logs_days" => {
            crate::types::value::Value::Double(log.expire_seconds() as f64 / 86_400.0)
        }
        _ if semisync::is_var(name) => log.semisync.var(name)?,
        _ => return mariadb::live_var(log, txn, name),
    })
}

/// Whether `name` is one of the retention settings SET GLOBAL changes on
/// the log itself (`retention.rs`).
pub(crate) fn is_retention_var(name: &str) -> bool {
    matches!(name, "binlog_expire_logs_seconds" | "expire_logs_days")
}

/// SET GLOBAL of a retention setting (the caller checked scope and
/// privilege): `binlog_expire_logs_seconds` in 0..=4294967295 as MySQL 8,
/// `expire_logs_days` in 0..=99 days (MySQL 5.7 / MariaDB's range, a
/// fraction allowed as MariaDB 10.6+), both the same limit.
pub(crate) fn set_retention_var(
    log: &Binlog,
    name: &str,
    value: &crate::types::value::Value,
) -> Result<()> {
    let wrong = || Error::WrongValueForVar {
        name: name.to_string(),
        value: value.to_display(),
    };
    if matches!(value, crate::types::value::Value::Bytes(_)) {
        return Err(wrong());
    }
    let seconds = match name {
        "binlog_expire_logs_seconds" => value
            .to_i64()
            .filter(|s| (0..=4_294_967_295).contains(s))
            .ok_or_else(wrong)? as u64,
        _ => {
            let days = value
                .to_f64()
                .filter(|d| (0.0..=99.0).contains(d))
                .ok_or_else(wrong)?;
            (days * 86_400.0).round() as u64
        }
    };
    log.set_expire_seconds(seconds);
    Ok(())
}
