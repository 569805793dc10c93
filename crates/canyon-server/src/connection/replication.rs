//! The source side of replication on a connection: COM_REGISTER_SLAVE,
//! COM_BINLOG_DUMP and COM_BINLOG_DUMP_GTID.
//!
//! A dump turns the connection into a one-way stream: every event is a
//! packet `0x00 ++ event` with the next sequence number, until the replica
//! goes away, the connection is killed, or — with BINLOG_DUMP_NON_BLOCK, what
//! `mysqlbinlog --read-from-remote-server` without `--stop-never` asks — the
//! log is read to its end, which an EOF packet marks. While the replica is
//! caught up the task awaits the change log (`TxnManager::log_changed`: woken
//! when a commit becomes visible) or the heartbeat period, whichever comes
//! first; no thread is held and nothing polls.
//!
//! A semi-synchronous replica (it set `@rpl_semi_sync_slave`) gets every
//! packet with the two-byte header `0xef ++ flag`, the flag asking for an
//! acknowledgement on each transaction's last event while the source's
//! semi-synchronous replication is enabled. Its acknowledgements come back
//! on the same connection while events still flow; they are read between
//! batches and while the dump waits, with a cancel-safe raw read, and
//! matched to the transactions they name (`AckQueue`).

use super::{Connection, Flow};
use canyon_common::Error;
use canyon_sql::catalog::binlog::semisync::{FLAG_ACK, MAGIC};
use canyon_sql::Dump;
use canyon_sql::StartAt;
use std::collections::VecDeque;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tracing::debug;

/// BINLOG_DUMP_NON_BLOCK: stop at the end of the log with an EOF packet.
const DUMP_NON_BLOCK: u16 = 0x01;
/// COM_BINLOG_DUMP_GTID: the GTID set follows.
const DUMP_THROUGH_GTID: u16 = 0x04;
/// A heartbeat when the replica set no period (MySQL's replicas default to
/// half their `replica_net_timeout` of 60 s).
const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(30);

fn malformed(what: &str) -> Error {
    Error::MalformedPacket(format!("{what} packet"))
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The largest acknowledgement accepted: `0xef ++ pos u64 ++ file name`
/// (a name is at most a few hundred bytes).
const MAX_ACK: usize = 4096;

/// A semi-synchronous dump's acknowledgements: the transactions sent with
/// the ack flag, oldest first, and the bytes read but not yet parsed.
#[derive(Default)]
struct AckQueue {
    /// (file, position after the transaction, its commit timestamp).
    sent: VecDeque<(String, u64, u64)>,
    buf: Vec<u8>,
}

impl AckQueue {
    /// Parses the complete acknowledgement packets in `buf` and tells the
    /// dump the newest transaction they cover. `Err`: the replica sent
    /// something that is not an acknowledgement (the dump ends).
    fn parse(&mut self, dump: &Dump) -> Result<(), String> {
        let mut at = 0;
        let mut newest = None;
        while self.buf.len() >= at + 4 {
            let b = &self.buf[at..];
            let len = usize::from(b[0]) | usize::from(b[1]) << 8 | usize::from(b[2]) << 16;
            if !(9..=MAX_ACK).contains(&len) {
                return Err(format!(
                    "a {len}-byte packet where an acknowledgement was expected"
                ));
            }
            let Some(p) = b.get(4..4 + len) else { break };
            if p[0] != MAGIC {
                return Err(format!(
                    "acknowledgement magic {:#04x}, expected 0xef",
                    p[0]
                ));
            }
            let pos = u64::from_le_bytes(p[1..9].try_into().expect("8 bytes"));
            let name = String::from_utf8_lossy(&p[9..]);
            let name = name.trim_end_matches('\0');
            // Transactions up to the one acknowledged are all received
            // (the log is sent and received in order).
            if let Some(i) = self
                .sent
                .iter()
                .position(|(f, p, _)| *p == pos && f == name)
            {
                newest = self.sent.drain(..=i).next_back().map(|(_, _, ts)| ts);
            }
            at += 4 + len;
        }
        self.buf.drain(..at);
        if let Some(ts) = newest {
            dump.acknowledged(ts);
        }
        Ok(())
    }
}

/// COM_BINLOG_DUMP: `pos u32 ++ flags u16 ++ server_id u32 ++ file`.
fn parse_dump(body: &[u8]) -> Option<(StartAt, u16, u32)> {
    let pos = u32_at(body, 0)?;
    let flags = u16_at(body, 4)?;
    let server_id = u32_at(body, 6)?;
    let file = String::from_utf8_lossy(body.get(10..)?).into_owned();
    Some((
        StartAt::Position {
            file,
            pos: u64::from(pos),
        },
        flags,
        server_id,
    ))
}

/// COM_BINLOG_DUMP_GTID: `flags u16 ++ server_id u32 ++ name_len u32 ++
/// name ++ pos u64 ++ data_len u32 ++ gtid set` (in PREVIOUS_GTIDS'
/// encoding).
///
/// MySQL reads the set whatever the flags say (`com_binlog_dump_gtid` in
/// rpl_source.cc) and, when no file is named, starts by GTIDs: a MySQL
/// replica sets DUMP_THROUGH_GTID, mysql-binlog-connector-java (Debezium's
/// binlog client) sends flags 0, an empty name and its set. Without the flag,
/// a named file (or no set at all) is a start by file and position.
fn parse_dump_gtid(body: &[u8]) -> Option<Result<(StartAt, u16, u32), Error>> {
    let flags = u16_at(body, 0)?;
    let server_id = u32_at(body, 2)?;
    let name_len = u32_at(body, 6)? as usize;
    let name = body.get(10..10 + name_len)?;
    let at = 10 + name_len;
    let pos = u64_at(body, at)?;
    let has_set = body.len() > at + 8;
    if flags & DUMP_THROUGH_GTID == 0 && (!name.is_empty() || !has_set) {
        let file = String::from_utf8_lossy(name).into_owned();
        return Some(Ok((StartAt::Position { file, pos }, flags, server_id)));
    }
    let len = u32_at(body, at + 8)? as usize;
    let data = body.get(at + 12..at + 12 + len)?;
    Some(
        canyon_binlog::GtidSet::decode(data)
            .map(|set| (StartAt::Gtids(set), flags, server_id))
            .map_err(|e| malformed(&format!("COM_BINLOG_DUMP_GTID (its GTID set: {e})"))),
    )
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> Connection<R, W> {
    /// COM_REGISTER_SLAVE: `server_id u32 ++ host ++ user ++ password (each
    /// a length byte and text) ++ port u16 ++ rank u32 ++ source_id u32`.
    /// Checked for shape and answered OK: a replica is known by its dump.
    pub(super) fn com_register_replica(&mut self, body: &[u8]) {
        let shape = (|| {
            let mut at = 4;
            for _ in 0..3 {
                let n = *body.get(at)? as usize;
                at += 1 + n;
            }
            (body.len() >= at + 2).then_some(())
        })();
        match shape {
            Some(()) => self.write_ok_status(),
            None => self.write_error(&malformed("COM_REGISTER_SLAVE")),
        }
    }

    /// COM_BINLOG_DUMP (`gtid` false) or COM_BINLOG_DUMP_GTID: streams the
    /// log until the replica leaves. The connection ends with the dump (as
    /// MySQL's does), except after a refused start, answered with an ERR.
    pub(super) async fn com_binlog_dump(&mut self, body: &[u8], gtid: bool) -> Flow {
        let parsed = if gtid {
            parse_dump_gtid(body).unwrap_or_else(|| Err(malformed("COM_BINLOG_DUMP_GTID")))
        } else {
            parse_dump(body).ok_or_else(|| malformed("COM_BINLOG_DUMP"))
        };
        let (start, flags, server_id) = match parsed {
            Ok(p) => p,
            Err(e) => {
                self.write_error(&e);
                return Flow::Continue;
            }
        };
        let mut dump = match self.session.start_dump(&start, server_id) {
            Ok(d) => d,
            Err(e) => {
                self.write_error(&e);
                return Flow::Continue;
            }
        };
        let heartbeat = self.session.heartbeat_period().unwrap_or(DEFAULT_HEARTBEAT);
        let semi_sync = dump.semi_sync();
        let mut acks = AckQueue::default();
        debug!(
            conn = self.id,
            replica = server_id,
            ?start,
            semi_sync,
            "binlog dump started"
        );
        loop {
            if self.session.killed() {
                return Flow::Close;
            }
            let events = match dump.read() {
                Ok(e) => e,
                Err(e) => {
                    self.write_error(&e);
                    let _ = self.io.flush().await;
                    return Flow::Close;
                }
            };
            if events.is_empty() {
                if flags & DUMP_NON_BLOCK != 0 {
                    let status = self.status();
                    self.io
                        .write_packet(|out| crate::protocol::write_eof(out, 0, status));
                    return Flow::Continue;
                }
                if self.io.flush().await.is_err() {
                    return Flow::Close;
                }
                let mut read = 0;
                tokio::select! {
                    () = dump.changed() => {}
                    () = tokio::time::sleep(heartbeat) => {
                        let hb = dump.heartbeat();
                        self.io.write_packet(|out| {
                            out.push(0);
                            if semi_sync {
                                out.extend_from_slice(&[MAGIC, 0]);
                            }
                            out.extend_from_slice(&hb);
                        });
                    }
                    () = self.killed.notified() => {}
                    r = self.io.read_some(&mut acks.buf), if semi_sync => match r {
                        Ok(n) if n > 0 => read = n,
                        _ => {
                            debug!(conn = self.id, "replica gone");
                            return Flow::Close;
                        }
                    },
                }
                if read > 0 {
                    if let Err(e) = acks.parse(&dump) {
                        debug!(conn = self.id, "semi-synchronous replica: {e}");
                        return Flow::Close;
                    }
                }
                continue;
            }
            let asking = dump.asking();
            let mut points = dump.take_ack_points().into_iter().peekable();
            for (i, ev) in events.iter().enumerate() {
                let mut flag = 0;
                if let Some(p) = points.next_if(|p| p.index == i) {
                    if asking {
                        flag = FLAG_ACK;
                        acks.sent.push_back((p.file, p.pos, p.ts));
                    }
                }
                self.io.write_packet(|out| {
                    out.push(0);
                    if semi_sync {
                        out.extend_from_slice(&[MAGIC, flag]);
                    }
                    out.extend_from_slice(ev);
                });
                if self.io.flush_if_large().await.is_err() {
                    debug!(conn = self.id, "replica gone");
                    return Flow::Close;
                }
            }
            if self.io.flush().await.is_err() {
                debug!(conn = self.id, "replica gone");
                return Flow::Close;
            }
            if semi_sync {
                // Acknowledgements that arrived while streaming, without
                // waiting for more.
                loop {
                    tokio::select! {
                        biased;
                        r = self.io.read_some(&mut acks.buf) => match r {
                            Ok(n) if n > 0 => {}
                            _ => {
                                debug!(conn = self.id, "replica gone");
                                return Flow::Close;
                            }
                        },
                        () = std::future::ready(()) => break,
                    }
                }
                if let Err(e) = acks.parse(&dump) {
                    debug!(conn = self.id, "semi-synchronous replica: {e}");
                    return Flow::Close;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A COM_BINLOG_DUMP_GTID body: flags, server id 5401, `name`, position 4,
    /// and `set` (binary) when given.
    fn body(flags: u16, name: &str, set: Option<&canyon_binlog::GtidSet>) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&flags.to_le_bytes());
        b.extend_from_slice(&5401u32.to_le_bytes());
        b.extend_from_slice(&(name.len() as u32).to_le_bytes());
        b.extend_from_slice(name.as_bytes());
        b.extend_from_slice(&4u64.to_le_bytes());
        if let Some(set) = set {
            let data = set.encode();
            b.extend_from_slice(&(data.len() as u32).to_le_bytes());
            b.extend_from_slice(&data);
        }
        b
    }

    fn set() -> canyon_binlog::GtidSet {
        "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-7"
            .parse()
            .expect("a GTID set")
    }

    fn start(b: &[u8]) -> StartAt {
        let (start, _, server_id) = parse_dump_gtid(b)
            .expect("well-formed")
            .expect("a valid set");
        assert_eq!(server_id, 5401);
        start
    }

    /// mysql-binlog-connector-java (Debezium) sends flags 0, no file and its
    /// set: a start by GTIDs, as MySQL takes it.
    #[test]
    fn a_set_without_the_flag_and_without_a_file_starts_by_gtids() {
        match start(&body(0, "", Some(&set()))) {
            StartAt::Gtids(have) => assert_eq!(have, set()),
            other => panic!("expected a GTID start, got {other:?}"),
        }
    }

    #[test]
    fn the_flag_starts_by_gtids_and_a_named_file_without_it_by_position() {
        assert!(matches!(
            start(&body(DUMP_THROUGH_GTID, "binlog.000001", Some(&set()))),
            StartAt::Gtids(_)
        ));
        match start(&body(0, "binlog.000001", Some(&set()))) {
            StartAt::Position { file, pos } => {
                assert_eq!((file.as_str(), pos), ("binlog.000001", 4));
            }
            other => panic!("expected a position start, got {other:?}"),
        }
        assert!(matches!(
            start(&body(0, "", None)),
            StartAt::Position { .. }
        ));
    }
}
