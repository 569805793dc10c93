//! The log served to a MariaDB replica, and what MariaDB's tools read
//! about it (`@@gtid_binlog_pos`, a consistent snapshot's position).
//!
//! # One log, two families of events
//!
//! A replica that sets `@mariadb_slave_capability` before its dump is a
//! MariaDB one. It gets the same records as a MySQL replica, at the same
//! positions, with MariaDB's events where the families differ:
//!
//! ```text
//! MySQL 8                           MariaDB 10.x
//! FORMAT_DESCRIPTION (41 types)     FORMAT_DESCRIPTION (171 types), log_pos 0
//! PREVIOUS_GTIDS uuid:1-N           GTID_LIST 0-server_id-N, log_pos = header end
//! GTID uuid:n ++ QUERY BEGIN        GTID 0-server_id-n (FL_TRANSACTIONAL), padded
//! GTID uuid:n ++ QUERY ddl          GTID 0-server_id-n (FL_STANDALONE | FL_DDL), padded
//!                                     ++ QUERY ddl (collations mapped)
//! ```
//!
//! **Positions must not move.** A MariaDB replica computes its read
//! position (`Read_Master_Log_Pos`, where it reconnects from by
//! file/position) by adding up the lengths of the events it receives, not
//! from their `log_pos`; only a FORMAT_DESCRIPTION with `log_pos` 0 adds
//! nothing, and a GTID_LIST sets the position to its own `log_pos`. So the
//! MariaDB header is a description with `log_pos` 0 and a GTID_LIST whose
//! `log_pos` is the file's (MySQL-sized) header end, and a transaction's
//! MariaDB GTID event — which also opens the transaction, so no BEGIN
//! follows it — is zero-padded to the length of the MySQL GTID event and
//! BEGIN it replaces. MariaDB reads the byte after a GTID's flags as
//! `flags_extra`; 0 means nothing more, and the rest is not looked at.
//!
//! **GTIDs.** MariaDB's GTID is `domain-server_id-seq`. Canyon has one
//! domain (0), its own `server_id`, and its GTID numbers as `seq`: MariaDB
//! GTID `0-S-n` is MySQL GTID `server_uuid:n`. A replica's
//! `@slave_connect_state` (MASTER_USE_GTID) becomes the MySQL set
//! `server_uuid:1-n` and is served as a COM_BINLOG_DUMP_GTID would be.
//!
//! **Collations.** MariaDB 10.11 knows none of MySQL 8's `utf8mb4_0900_*`
//! collations and stops its SQL thread on a QUERY event that names one;
//! they are mapped (`canyon_binlog::control::mariadb_collation`), in place.

use super::*;
use canyon_binlog::control::{MARIADB_FL_DDL, MARIADB_FL_STANDALONE, MARIADB_FL_TRANSACTIONAL};

/// Canyon's one MariaDB GTID domain.
pub const DOMAIN: u32 = 0;

/// The server version a MariaDB replica's FORMAT_DESCRIPTION carries (a
/// MariaDB reader parses it for feature checks; it must read as MariaDB).
const MARIADB_VERSION: &str = "10.11.99-MariaDB-Canyon";

/// A transaction's binary-log coordinates as of a snapshot (START
/// TRANSACTION WITH CONSISTENT SNAPSHOT): what `mariadb-dump
/// --single-transaction --master-data` writes as its CHANGE MASTER TO.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// `Binlog_snapshot_file`.
    pub file: String,
    /// `Binlog_snapshot_position`.
    pub position: u64,
    /// The GTID number of the last transaction the snapshot holds (0: none).
    pub last_number: u64,
}

impl Binlog {
    /// `@@gtid_binlog_pos` for `last_number` transactions: `0-S-n`, or
    /// empty before the first.
    pub fn mariadb_gtid_pos(&self, last_number: u64) -> String {
        if last_number == 0 {
            String::new()
        } else {
            format!("{DOMAIN}-{}-{last_number}", self.server_id())
        }
    }

    /// The last GTID number logged.
    fn last_number(&self, txn: &TxnManager) -> u64 {
        txn.log_head().next_number.saturating_sub(1)
    }

    /// Where a MariaDB replica with `@slave_connect_state = state` starts:
    /// after the transactions it names. 1236 for a GTID of another domain or
    /// server than this one's (this log has no such transaction).
    pub fn mariadb_start(&self, state: &str) -> Result<StartAt> {
        let mut have = GtidSet::new();
        for item in state.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let parts: Vec<&str> = item.split('-').collect();
            let parsed = match parts.as_slice() {
                [d, s, n] => match (d.parse::<u32>(), s.parse::<u32>(), n.parse::<u64>()) {
                    (Ok(d), Ok(s), Ok(n)) => Some((d, s, n)),
                    _ => None,
                },
                _ => None,
            };
            let Some((domain, server, seq)) = parsed else {
                return Err(fatal_1236(format!(
                    "Failed to parse the replica's GTID position '{state}'"
                )));
            };
            if seq == 0 {
                continue;
            }
            if domain != DOMAIN || server != self.server_id() {
                return Err(fatal_1236(format!(
                    "Error: connecting slave requested to start from GTID {domain}-{server}-{seq}, \
                     which is not in the master's binlog (this source logs domain {DOMAIN}, \
                     server_id {})",
                    self.server_id()
                )));
            }
            // Cannot fail: 1 <= seq.
            let _ = have.add_interval(self.uuid, 1, seq);
        }
        Ok(StartAt::Gtids(have))
    }

    /// BINLOG_GTID_POS(file, pos): the GTID position of the transactions
    /// before `pos` in `file` (what a MariaDB replica starting there by
    /// file and position has); `None` for a file this log does not have or a
    /// position that is not an event's start. An empty name is the first
    /// file.
    pub fn gtid_pos_at(&self, txn: &TxnManager, file: &str, pos: u64) -> Result<Option<String>> {
        if !self.enabled() {
            return Ok(None);
        }
        // An empty name is the first file (as MariaDB's: a replica probes
        // `BINLOG_GTID_POS('', 4)` to learn that its source has GTIDs).
        let found = self
            .files
            .read()
            .iter()
            .find(|f| f.name == file || file.is_empty())
            .cloned();
        let Some(f) = found else {
            return Ok(None);
        };
        let Ok(seq) = self.seq_at_position(txn, &f, pos.max(4)) else {
            return Ok(None);
        };
        // The first counted record at or after `seq` is the first
        // transaction after the position.
        let mut next = None;
        txn.read_log(seq, &mut |r| {
            if r.number == 0 {
                return true;
            }
            next = Some(r.number);
            false
        })?;
        let last = match next {
            Some(n) => n - 1,
            // Nothing visible at or after the position yet. Not the head's
            // count: the head already counts commits written but not yet
            // visible, and a consistent snapshot's position sits just before
            // such a commit (mariadb-dump asks BINLOG_GTID_POS of it): the
            // replica would skip a transaction the dump does not hold.
            None => self.counted_before(txn, seq)?,
        };
        Ok(Some(self.mariadb_gtid_pos(last)))
    }

    /// Queues a MariaDB reader's file header: the description (`log_pos` 0:
    /// it adds nothing to the replica's position) and, from the file's
    /// start, the GTID_LIST of the transactions before the file, whose
    /// `log_pos` puts the replica at the header's end.
    pub(super) fn queue_mariadb_header(&self, r: &mut BinlogReader, from_start: bool) {
        let sid = self.config.server_id;
        let ts = (r.file.created_us / 1_000_000) as u32;
        let fde = canyon_binlog::control::format_description_for(
            Flavor::MariaDb,
            MARIADB_VERSION,
            r.checksum,
        );
        r.queued.push(frame(
            EventType::FORMAT_DESCRIPTION,
            ts,
            sid,
            0,
            &fde,
            0,
            r.checksum,
        ));
        if from_start {
            let before = GtidSet::decode(&r.file.previous_gtids)
                .ok()
                .and_then(|set| {
                    set.iter()
                        .find(|(s, _)| **s == self.uuid)
                        .and_then(|(_, iv)| iv.last().map(|(_, end)| *end))
                })
                .unwrap_or(0);
            let list = if before == 0 {
                Vec::new()
            } else {
                vec![(DOMAIN, sid, before)]
            };
            r.queued.push(frame(
                EventType::GTID_LIST,
                ts,
                sid,
                0,
                &canyon_binlog::control::gtid_list(&list),
                r.file.header_len() as u32,
                r.checksum,
            ));
            r.pos = r.file.header_len();
        }
    }

    /// A record's events for a MariaDB reader, at the positions the MySQL
    /// ones have (see the module doc).
    pub(super) fn serve_mariadb_record(
        &self,
        r: &mut BinlogReader,
        rec: &LogRecord,
        kind: u8,
        events: &[(EventType, &[u8])],
        out: &mut Vec<Vec<u8>>,
    ) -> Result<()> {
        let sid = self.config.server_id;
        let start = r.file.position(rec.offset);
        let ts = (rec.wall_us / 1_000_000) as u32;
        let mysql_gtid = canyon_binlog::control::gtid(&self.record_gtid(r, rec, kind));
        let mut covered = framed_len(mysql_gtid.len(), true);
        let (flags, rest) = match kind {
            KIND_STATEMENT => (MARIADB_FL_STANDALONE | MARIADB_FL_DDL, events),
            _ => match events.split_first() {
                Some(((EventType::QUERY, begin), rest)) => {
                    covered += framed_len(begin.len(), true);
                    (MARIADB_FL_TRANSACTIONAL, rest)
                }
                _ => {
                    return Err(Error::Corrupt(format!(
                        "binary log record {} does not start with BEGIN",
                        rec.seq
                    )))
                }
            },
        };
        let body_len = covered - framed_len(0, true);
        let body = canyon_binlog::control::mariadb_gtid_padded(rec.number, DOMAIN, flags, body_len);
        let mut pos = start + covered as u64;
        out.push(frame(
            EventType::MARIADB_GTID,
            ts,
            sid,
            0,
            &body,
            pos as u32,
            r.checksum,
        ));
        // MariaDB's I/O thread refuses a group whose last rows event lacks
        // STMT_END_F (1595); it is set on the last one, in place.
        let last_rows = rest.iter().rposition(|(ty, _)| {
            matches!(
                *ty,
                EventType::WRITE_ROWS | EventType::UPDATE_ROWS | EventType::DELETE_ROWS
            )
        });
        for (i, &(ty, body)) in rest.iter().enumerate() {
            pos += framed_len(body.len(), true) as u64;
            let body = if Some(i) == last_rows && body.len() >= 8 {
                let mut b = body.to_vec();
                // Rows flags: u16 after the 6-byte table id; STMT_END_F = 1.
                b[6] |= 1;
                b
            } else if ty == EventType::QUERY {
                canyon_binlog::control::query_for_mariadb(body)
                    .map_err(|e| Error::Corrupt(format!("binary log QUERY event: {e}")))?
            } else {
                body.to_vec()
            };
            out.push(frame(ty, ts, sid, 0, &body, pos as u32, r.checksum));
        }
        super::record_end(rec, start, pos)?;
        r.pos = pos;
        Ok(())
    }

    /// The binary-log coordinates of a snapshot at commit timestamp `ts`
    /// taken a moment ago: the position after the last record whose commit
    /// it sees. Records are in timestamp order (canyon-txn's change log,
    /// invariant 2), so those are a prefix of the log, found by bisection;
    /// a record appended after the snapshot was taken has a later
    /// timestamp, so the search ends at the head read now.
    pub fn snapshot_at(&self, txn: &TxnManager, ts: canyon_txn::Timestamp) -> Result<Snapshot> {
        let head = txn.log_head();
        let record = |seq: u64| -> Result<Option<LogRecord>> {
            let mut found = None;
            txn.read_log(seq, &mut |r| {
                if r.seq == seq {
                    found = Some(r);
                }
                false
            })?;
            Ok(found)
        };
        // The first seq whose commit the snapshot does not see.
        let (mut lo, mut hi) = (txn.log_first_seq(), head.next_seq);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match record(mid)? {
                Some(r) if r.ts <= ts => lo = mid + 1,
                _ => hi = mid,
            }
        }
        let boundary = lo;
        // Its position; at the head, the end of the log.
        let (file, position) = match record(boundary)? {
            Some(r) => {
                let f = self
                    .file_of_seq(r.seq)
                    .ok_or_else(|| Error::Internal("a binary log record before any file".into()))?;
                let p = f.position(r.offset);
                (f.name, p)
            }
            None => {
                let (f, _) = self.end(txn);
                let p = f.position(head.next_offset.max(f.start_offset));
                (f.name, p)
            }
        };
        Ok(Snapshot {
            file,
            position,
            last_number: self.counted_before(txn, boundary)?,
        })
    }

    /// The number of the last counted record before `seq` (markers between
    /// are rare: one per rotation); with none kept before it, the count of
    /// everything purged.
    fn counted_before(&self, txn: &TxnManager, seq: u64) -> Result<u64> {
        let mut at = seq;
        while at > txn.log_first_seq() {
            at -= 1;
            let mut number = None;
            txn.read_log(at, &mut |r| {
                if r.seq == at {
                    number = Some(r.number);
                }
                false
            })?;
            if let Some(n) = number.filter(|&n| n != 0) {
                return Ok(n);
            }
        }
        Ok(self
            .purged(txn)?
            .iter()
            .find(|(s, _)| **s == self.uuid)
            .and_then(|(_, iv)| iv.last().map(|(_, end)| *end))
            .unwrap_or(0))
    }
}

/// Whether `name` is one of [`live_var`]'s.
pub(super) fn is_live(name: &str) -> bool {
    matches!(
        name,
        "gtid_domain_id"
            | "gtid_binlog_pos"
            | "gtid_binlog_state"
            | "gtid_current_pos"
            | "gtid_slave_pos"
            | "gtid_strict_mode"
    )
}

/// MariaDB's GTID variables, for MariaDB's replicas and tools
/// (`mariadb-dump --gtid`). Canyon is not a MariaDB replica:
/// `gtid_slave_pos` is empty and `gtid_current_pos` is `gtid_binlog_pos`.
pub(super) fn live_var(
    log: &Binlog,
    txn: &TxnManager,
    name: &str,
) -> Option<crate::types::value::Value> {
    use crate::types::value::Value;
    Some(match name {
        "gtid_domain_id" => Value::Int(i64::from(DOMAIN)),
        "gtid_strict_mode" => Value::Int(0),
        "gtid_slave_pos" => Value::str(""),
        "gtid_binlog_pos" | "gtid_binlog_state" | "gtid_current_pos" => {
            let n = if log.enabled() {
                log.last_number(txn)
            } else {
                0
            };
            Value::str(&log.mariadb_gtid_pos(n))
        }
        _ => return None,
    })
}
