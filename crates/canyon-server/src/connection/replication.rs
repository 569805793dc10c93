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

use super::{Connection, Flow};
use canyon_common::Error;
use canyon_sql::StartAt;
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
/// name ++ pos u64 ++ (data_len u32 ++ gtid set)` (the set when
/// DUMP_THROUGH_GTID, in PREVIOUS_GTIDS' encoding).
fn parse_dump_gtid(body: &[u8]) -> Option<Result<(StartAt, u16, u32), Error>> {
    let flags = u16_at(body, 0)?;
    let server_id = u32_at(body, 2)?;
    let name_len = u32_at(body, 6)? as usize;
    let name = body.get(10..10 + name_len)?;
    let at = 10 + name_len;
    let pos = u64_at(body, at)?;
    if flags & DUMP_THROUGH_GTID == 0 {
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
        debug!(
            conn = self.id,
            replica = server_id,
            ?start,
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
                tokio::select! {
                    () = dump.changed() => {}
                    () = tokio::time::sleep(heartbeat) => {
                        let hb = dump.heartbeat();
                        self.io.write_packet(|out| {
                            out.push(0);
                            out.extend_from_slice(&hb);
                        });
                    }
                    () = self.killed.notified() => {}
                }
                continue;
            }
            for ev in &events {
                self.io.write_packet(|out| {
                    out.push(0);
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
        }
    }
}
