//! The replica's network side: a MySQL client that registers with a source
//! (COM_REGISTER_SLAVE), asks for its binary log (COM_BINLOG_DUMP_GTID with
//! the GTIDs already applied, or COM_BINLOG_DUMP with a file and position),
//! and hands every event to canyon-sql's `ReplicaApplier` in order.
//!
//! # Why a hand-written client
//!
//! The dump connection is a MySQL protocol connection turned into a stream
//! of events, and semi-synchronous replication writes acknowledgements back
//! on it. No client crate offers that: mysql_async's `BinlogStream` reads
//! parsed events only (and pulls in zstd for MySQL's compressed payloads,
//! which Canyon does not write). The client needs little of the protocol:
//! the handshake with mysql_native_password or caching_sha2_password's fast
//! path, text queries whose rows are read as strings, and the dump.
//!
//! # Threads
//!
//! One OS thread per running replica reads an event and applies it before
//! reading the next (MySQL's I/O and SQL threads in one; the source keeps
//! its log, so no relay log is needed to survive a restart: the applier's
//! position is committed with each transaction, see
//! `canyon_sql::catalog::replica`). A broken connection is retried every
//! SOURCE_CONNECT_RETRY seconds from the committed position; an error from
//! the source's dump (1236) or from applying an event stops the thread with
//! `Last_IO_Error` / `Last_SQL_Error` set, as MySQL stops its threads.
//!
//! # Semi-synchronous replication
//!
//! With `rpl_semi_sync_replica_enabled` the client asks a source that has
//! semi-synchronous replication (its `rpl_semi_sync_source_enabled` or
//! `rpl_semi_sync_master_enabled` exists) for it with
//! `SET @rpl_semi_sync_slave = 1`; every event then arrives behind a
//! two-byte header (`0xef ++ flag`) and an event flagged for
//! acknowledgement is acknowledged once applied: the applier's COMMIT is
//! durable before it returns, so "acknowledged" means on this replica's
//! disk — stronger than MySQL's replica, which acknowledges once the event
//! is in its relay log. A source without it gets an asynchronous replica
//! and a warning, as MySQL's replica does.

use canyon_common::{Error, Result};
use canyon_sql::catalog::binlog::semisync::{FLAG_ACK, MAGIC};
use canyon_sql::catalog::replica::{Applied, Launcher, Running, SourceConfig};
use canyon_sql::{Engine, ReplicaApplier};
use sha1::{Digest, Sha1};
use sha2::Sha256;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Starts replica threads (installed on the engine at startup).
pub struct ReplicaLauncher {
    /// The engine it runs on (weak: the engine holds the launcher).
    pub engine: std::sync::Weak<Engine>,
}

impl Launcher for ReplicaLauncher {
    fn start(&self, source: SourceConfig, from: Applied) -> Result<Box<dyn Running>> {
        let engine = self
            .engine
            .upgrade()
            .ok_or_else(|| Error::Internal("replica: the engine is gone".into()))?;
        let stop = Arc::new(AtomicBool::new(false));
        let running = Arc::new(AtomicBool::new(true));
        let socket = Arc::new(parking_lot::Mutex::new(None::<TcpStream>));
        {
            let mut st = engine.replica.status.lock();
            st.io_running = "Connecting";
            st.sql_running = true;
            st.last_io_error = None;
            st.last_sql_error = None;
        }
        let thread = {
            let (stop, running, socket) = (stop.clone(), running.clone(), socket.clone());
            std::thread::Builder::new()
                .name("canyon-replica".into())
                .spawn(move || {
                    run(&engine, &source, from, &stop, &socket);
                    let mut st = engine.replica.status.lock();
                    st.io_running = "No";
                    st.sql_running = false;
                    st.seconds_behind = None;
                    running.store(false, Ordering::Release);
                })
                .map_err(|e| Error::Io(format!("replica thread: {e}")))?
        };
        Ok(Box::new(Handle {
            stop,
            running,
            socket,
            thread: Some(thread),
        }))
    }
}

struct Handle {
    stop: Arc<AtomicBool>,
    running: Arc<AtomicBool>,
    socket: Arc<parking_lot::Mutex<Option<TcpStream>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Running for Handle {
    fn stop(mut self: Box<Self>) {
        self.stop.store(true, Ordering::Release);
        if let Some(s) = self.socket.lock().as_ref() {
            let _ = s.shutdown(Shutdown::Both);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    fn is_running(&self) -> bool {
        self.running.load(Ordering::Acquire)
    }
}

/// Why a connection ended.
enum End {
    /// The network or the source failed: connect again.
    Retry(Error),
    /// The source refused the dump (1236 ...): the I/O thread stops.
    Source(u16, String),
    /// An event could not be applied: the SQL thread stops.
    Apply(Error),
    /// STOP REPLICA.
    Stopped,
}

fn now_text() -> String {
    chrono::Local::now().format("%y%m%d %H:%M:%S").to_string()
}

fn run(
    engine: &Arc<Engine>,
    source: &SourceConfig,
    from: Applied,
    stop: &AtomicBool,
    socket: &parking_lot::Mutex<Option<TcpStream>>,
) {
    let mut applier = ReplicaApplier::new(engine.clone(), from);
    loop {
        if stop.load(Ordering::Acquire) {
            break;
        }
        let end = stream(engine, source, &mut applier, stop, socket);
        engine.binlog().semi_sync().set_replica_status(false);
        applier.abandon();
        *socket.lock() = None;
        let mut st = engine.replica.status.lock();
        match end {
            End::Stopped => break,
            End::Apply(e) => {
                tracing::error!("replica: apply failed, SQL thread stopped: {e}");
                let m = canyon_protocol::mysql_error(&e);
                st.last_sql_error = Some((m.code, m.message, now_text()));
                break;
            }
            End::Source(code, msg) => {
                tracing::error!("replica: source refused the dump ({code}): {msg}");
                st.last_io_error = Some((code, msg, now_text()));
                break;
            }
            End::Retry(e) => {
                tracing::warn!(
                    "replica: connection to {}:{} lost, retrying in {} s: {e}",
                    source.host,
                    source.port,
                    source.connect_retry
                );
                st.io_running = "Connecting";
                st.io_state = "Waiting to reconnect after a failed source event read".into();
                st.last_io_error = Some((2003, e.to_string(), now_text()));
            }
        }
        drop(st);
        let until = Instant::now() + Duration::from_secs(source.connect_retry);
        while Instant::now() < until && !stop.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// One connection: handshake, checks, dump, events until it ends.
fn stream(
    engine: &Arc<Engine>,
    source: &SourceConfig,
    applier: &mut ReplicaApplier,
    stop: &AtomicBool,
    socket: &parking_lot::Mutex<Option<TcpStream>>,
) -> End {
    let mut c = match Client::connect(source) {
        Ok(c) => c,
        Err(ClientError::Server(code, msg)) if code == 1045 => {
            return End::Source(code, format!("error connecting to source: {msg}"))
        }
        Err(e) => return End::Retry(e.into()),
    };
    if let Ok(s) = c.stream.try_clone() {
        *socket.lock() = Some(s);
    }
    if stop.load(Ordering::Acquire) {
        return End::Stopped;
    }
    match dump(engine, source, applier, stop, &mut c) {
        Err(ClientError::Server(code, msg)) => End::Source(code, msg),
        Err(ClientError::Apply(e)) => End::Apply(e),
        Err(e) if stop.load(Ordering::Acquire) => {
            let _ = e;
            End::Stopped
        }
        Err(e) => End::Retry(e.into()),
        Ok(()) => End::Retry(Error::Io("the source ended the binary log stream".into())),
    }
}

fn dump(
    engine: &Arc<Engine>,
    source: &SourceConfig,
    applier: &mut ReplicaApplier,
    stop: &AtomicBool,
    c: &mut Client,
) -> std::result::Result<(), ClientError> {
    let my_id = engine.binlog().server_id();
    let rows = c.query("SELECT @@server_id, @@server_uuid")?;
    let row = rows.first().cloned().unwrap_or_default();
    let source_id: u32 = row
        .first()
        .cloned()
        .flatten()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if source_id == my_id {
        return Err(ClientError::Server(
            1593,
            "Fatal error: The replica I/O thread stops because source and replica have equal \
             MySQL server ids; these ids must be different for replication to work"
                .into(),
        ));
    }
    {
        let mut st = engine.replica.status.lock();
        st.source_server_id = source_id;
        st.source_uuid = row.get(1).cloned().flatten().unwrap_or_default();
    }
    c.query("SET @master_binlog_checksum = 'CRC32', @source_binlog_checksum = 'CRC32'")?;
    let period_ns = (source.heartbeat_period * 1e9) as u64;
    c.query(&format!("SET @master_heartbeat_period = {period_ns}"))?;
    if source.heartbeat_period > 0.0 {
        // A silent source is a dead one after two missed heartbeats.
        let t = Duration::from_secs_f64(source.heartbeat_period * 2.0 + 1.0);
        let _ = c.stream.set_read_timeout(Some(t));
    }
    let semi_sync = engine.binlog().semi_sync().replica_enabled() && ask_semi_sync(c)?;
    engine.binlog().semi_sync().set_replica_status(semi_sync);
    c.register(my_id)?;
    let from = applier.position().clone();
    if source.auto_position {
        // Everything this server has: its own transactions and those applied
        // from any source (as MySQL sends gtid_executed).
        let have = engine.binlog().executed(engine.txn_manager());
        c.dump_gtid(my_id, &have.encode())?;
    } else {
        c.dump_position(my_id, &from.file, from.pos.max(4))?;
    }
    {
        let mut st = engine.replica.status.lock();
        st.io_running = "Yes";
        st.io_state = "Waiting for source to send event".into();
        st.last_io_error = None;
    }
    loop {
        if stop.load(Ordering::Acquire) {
            return Ok(());
        }
        let packet = c.read_packet()?;
        match packet.first() {
            Some(0x00) => {}
            Some(0xff) => {
                let (code, msg) = parse_err(&packet);
                return Err(ClientError::Server(code, msg));
            }
            Some(0xfe) if packet.len() < 9 => return Ok(()),
            _ => {
                return Err(ClientError::Protocol(
                    "unexpected packet in the dump".into(),
                ))
            }
        }
        let (event, ack) = if semi_sync {
            match packet.get(1..3) {
                Some(&[MAGIC, flag]) => (&packet[3..], flag & FLAG_ACK != 0),
                _ => {
                    return Err(ClientError::Protocol(
                        "missing magic number for semi-sync packet".into(),
                    ))
                }
            }
        } else {
            (&packet[1..], false)
        };
        let Ok(h) = canyon_binlog::parse_header(event) else {
            return Err(ClientError::Protocol("event without a header".into()));
        };
        {
            let mut st = engine.replica.status.lock();
            if h.type_code == canyon_binlog::EventType::ROTATE {
                if let Ok((_, canyon_binlog::Event::Rotate { next_file, .. })) =
                    canyon_binlog::parse_event(event, false)
                        .or_else(|_| canyon_binlog::parse_event(event, true))
                {
                    st.read_file = next_file;
                }
            } else if h.log_pos != 0 {
                st.read_pos = u64::from(h.log_pos);
            }
            if h.type_code == canyon_binlog::EventType::HEARTBEAT {
                st.seconds_behind = Some(0);
            } else if h.timestamp != 0 {
                let now = chrono::Utc::now().timestamp();
                st.seconds_behind = Some(now.saturating_sub(i64::from(h.timestamp)).max(0) as u64);
            }
            if h.type_code == canyon_binlog::EventType::GTID {
                if let Ok((_, canyon_binlog::Event::Gtid(g))) =
                    canyon_binlog::parse_event(event, true)
                {
                    let _ = st.retrieved.add(g.sid, g.gno);
                }
            }
        }
        applier.apply(event).map_err(ClientError::Apply)?;
        if ack {
            // Applied and durable (the applier's COMMIT waits for it).
            let file = engine.replica.status.lock().read_file.clone();
            c.ack(&file, u64::from(h.log_pos))?;
        }
    }
}

/// Asks the source for semi-synchronous replication, if it has it (MySQL's
/// and MariaDB's replicas look for the variable the same way).
fn ask_semi_sync(c: &mut Client) -> std::result::Result<bool, ClientError> {
    let rows = c.query("SHOW VARIABLES LIKE 'rpl_semi_sync_%_enabled'")?;
    let has = rows.iter().any(|r| {
        matches!(
            r.first().cloned().flatten().as_deref(),
            Some("rpl_semi_sync_source_enabled" | "rpl_semi_sync_master_enabled")
        )
    });
    if !has {
        tracing::warn!(
            "replica: the source does not support semi-sync, fallback to asynchronous replication"
        );
        return Ok(false);
    }
    c.query("SET @rpl_semi_sync_slave = 1, @rpl_semi_sync_replica = 1")?;
    Ok(true)
}

fn parse_err(p: &[u8]) -> (u16, String) {
    let code = p.get(1..3).map_or(0, |b| u16::from_le_bytes([b[0], b[1]]));
    let rest = p.get(3..).unwrap_or(&[]);
    // '#' and a 5-character SQLSTATE precede the message.
    let msg = if rest.first() == Some(&b'#') && rest.len() >= 6 {
        &rest[6..]
    } else {
        rest
    };
    (code, String::from_utf8_lossy(msg).into_owned())
}

#[derive(Debug)]
enum ClientError {
    Io(std::io::Error),
    Server(u16, String),
    Protocol(String),
    Apply(Error),
}

impl From<std::io::Error> for ClientError {
    fn from(e: std::io::Error) -> Self {
        ClientError::Io(e)
    }
}

impl From<ClientError> for Error {
    fn from(e: ClientError) -> Self {
        match e {
            ClientError::Io(e) => Error::Io(e.to_string()),
            ClientError::Server(code, m) => Error::Io(format!("source error {code}: {m}")),
            ClientError::Protocol(m) => Error::Io(format!("source protocol: {m}")),
            ClientError::Apply(e) => e,
        }
    }
}

const CLIENT_LONG_PASSWORD: u32 = 1;
const CLIENT_PROTOCOL_41: u32 = 0x200;
const CLIENT_TRANSACTIONS: u32 = 0x2000;
const CLIENT_SECURE_CONNECTION: u32 = 0x8000;
const CLIENT_PLUGIN_AUTH: u32 = 0x8_0000;

/// A blocking MySQL client connection, just what the replica needs.
struct Client {
    stream: TcpStream,
    seq: u8,
}

impl Client {
    fn connect(source: &SourceConfig) -> std::result::Result<Client, ClientError> {
        let addr = (source.host.as_str(), source.port)
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| ClientError::Protocol(format!("cannot resolve {}", source.host)))?;
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(10))?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        let mut c = Client { stream, seq: 0 };
        let hello = c.read_packet()?;
        if hello.first() == Some(&0xff) {
            let (code, msg) = parse_err(&hello);
            return Err(ClientError::Server(code, msg));
        }
        let (scramble, plugin) = parse_handshake(&hello)
            .ok_or_else(|| ClientError::Protocol("malformed handshake".into()))?;
        let plugin = if plugin.is_empty() {
            "mysql_native_password".to_string()
        } else {
            plugin
        };
        let auth = auth_response(&plugin, source.password.as_bytes(), &scramble)?;
        let mut p = Vec::new();
        let caps = CLIENT_LONG_PASSWORD
            | CLIENT_PROTOCOL_41
            | CLIENT_TRANSACTIONS
            | CLIENT_SECURE_CONNECTION
            | CLIENT_PLUGIN_AUTH;
        p.extend_from_slice(&caps.to_le_bytes());
        p.extend_from_slice(&(16u32 << 20).to_le_bytes());
        p.push(45); // utf8mb4_general_ci
        p.extend_from_slice(&[0; 23]);
        p.extend_from_slice(source.user.as_bytes());
        p.push(0);
        p.push(auth.len() as u8);
        p.extend_from_slice(&auth);
        p.extend_from_slice(plugin.as_bytes());
        p.push(0);
        c.write_packet(&p)?;
        c.finish_auth(source)?;
        Ok(c)
    }

    fn finish_auth(&mut self, source: &SourceConfig) -> std::result::Result<(), ClientError> {
        loop {
            let p = self.read_packet()?;
            match p.first() {
                Some(0x00) => return Ok(()),
                Some(0xff) => {
                    let (code, msg) = parse_err(&p);
                    return Err(ClientError::Server(code, msg));
                }
                Some(0xfe) => {
                    // Auth switch: plugin name, then its scramble.
                    let body = &p[1..];
                    let nul = body.iter().position(|&b| b == 0).unwrap_or(body.len());
                    let plugin = String::from_utf8_lossy(&body[..nul]).into_owned();
                    let data = body.get(nul + 1..).unwrap_or(&[]);
                    let scramble = data.strip_suffix(&[0]).unwrap_or(data);
                    let r = auth_response(&plugin, source.password.as_bytes(), scramble)?;
                    self.write_packet(&r)?;
                }
                Some(0x01) => match p.get(1) {
                    // caching_sha2_password: fast authentication succeeded;
                    // the OK follows.
                    Some(3) => continue,
                    _ => {
                        return Err(ClientError::Server(
                            2061,
                            "Authentication plugin 'caching_sha2_password' reported error: \
                             Authentication requires secure connection. Canyon's replica \
                             connects without TLS so far: use a mysql_native_password \
                             account for replication"
                                .into(),
                        ))
                    }
                },
                _ => {
                    return Err(ClientError::Protocol(
                        "unexpected authentication reply".into(),
                    ))
                }
            }
        }
    }

    /// Runs a text query; its rows as strings (an OK gives none).
    fn query(&mut self, sql: &str) -> std::result::Result<Vec<Vec<Option<String>>>, ClientError> {
        self.seq = 0;
        let mut p = vec![0x03];
        p.extend_from_slice(sql.as_bytes());
        self.write_packet(&p)?;
        let first = self.read_packet()?;
        match first.first() {
            Some(0x00) => return Ok(Vec::new()),
            Some(0xff) => {
                let (code, msg) = parse_err(&first);
                return Err(ClientError::Server(code, msg));
            }
            _ => {}
        }
        // A result set: column definitions until EOF, rows until EOF.
        loop {
            let p = self.read_packet()?;
            if p.first() == Some(&0xfe) && p.len() < 9 {
                break;
            }
        }
        let mut rows = Vec::new();
        loop {
            let p = self.read_packet()?;
            match p.first() {
                Some(0xfe) if p.len() < 9 => break,
                Some(0xff) => {
                    let (code, msg) = parse_err(&p);
                    return Err(ClientError::Server(code, msg));
                }
                _ => {}
            }
            let mut row = Vec::new();
            let mut cur = canyon_protocol::Cursor::new(&p);
            while !cur.is_empty() {
                if cur.peek() == Some(0xfb) {
                    let _ = cur.u8();
                    row.push(None);
                    continue;
                }
                let v = cur
                    .lenenc_bytes()
                    .map_err(|_| ClientError::Protocol("truncated row".into()))?;
                row.push(Some(String::from_utf8_lossy(v).into_owned()));
            }
            rows.push(row);
        }
        Ok(rows)
    }

    fn expect_ok(&mut self) -> std::result::Result<(), ClientError> {
        let p = self.read_packet()?;
        match p.first() {
            Some(0x00) => Ok(()),
            Some(0xff) => {
                let (code, msg) = parse_err(&p);
                Err(ClientError::Server(code, msg))
            }
            _ => Err(ClientError::Protocol("expected OK".into())),
        }
    }

    fn register(&mut self, server_id: u32) -> std::result::Result<(), ClientError> {
        self.seq = 0;
        let mut p = vec![0x15];
        p.extend_from_slice(&server_id.to_le_bytes());
        p.extend_from_slice(&[0, 0, 0]); // host, user, password: empty
        p.extend_from_slice(&0u16.to_le_bytes());
        p.extend_from_slice(&0u32.to_le_bytes());
        p.extend_from_slice(&0u32.to_le_bytes());
        self.write_packet(&p)?;
        self.expect_ok()
    }

    fn dump_gtid(&mut self, server_id: u32, sids: &[u8]) -> std::result::Result<(), ClientError> {
        self.seq = 0;
        let mut p = vec![0x1e];
        p.extend_from_slice(&0x04u16.to_le_bytes()); // BINLOG_THROUGH_GTID
        p.extend_from_slice(&server_id.to_le_bytes());
        p.extend_from_slice(&0u32.to_le_bytes()); // no file name
        p.extend_from_slice(&4u64.to_le_bytes());
        p.extend_from_slice(&(sids.len() as u32).to_le_bytes());
        p.extend_from_slice(sids);
        self.write_packet(&p)
    }

    fn dump_position(
        &mut self,
        server_id: u32,
        file: &str,
        pos: u64,
    ) -> std::result::Result<(), ClientError> {
        self.seq = 0;
        let mut p = vec![0x12];
        p.extend_from_slice(&(pos.min(u64::from(u32::MAX)) as u32).to_le_bytes());
        p.extend_from_slice(&0u16.to_le_bytes());
        p.extend_from_slice(&server_id.to_le_bytes());
        p.extend_from_slice(file.as_bytes());
        self.write_packet(&p)
    }

    /// A semi-synchronous acknowledgement: `0xef ++ position u64 ++ file`,
    /// a packet of its own (sequence 0) on the dump connection.
    fn ack(&mut self, file: &str, pos: u64) -> std::result::Result<(), ClientError> {
        self.seq = 0;
        let mut p = Vec::with_capacity(9 + file.len());
        p.push(MAGIC);
        p.extend_from_slice(&pos.to_le_bytes());
        p.extend_from_slice(file.as_bytes());
        self.write_packet(&p)
    }

    fn write_packet(&mut self, payload: &[u8]) -> std::result::Result<(), ClientError> {
        let mut out = Vec::with_capacity(payload.len() + 4);
        for chunk in payload.chunks(0xff_ffff).chain(
            // A payload of a multiple of 16 MiB - 1 ends with an empty packet.
            payload.len().is_multiple_of(0xff_ffff).then_some(&[][..]),
        ) {
            out.extend_from_slice(&(chunk.len() as u32).to_le_bytes()[..3]);
            out.push(self.seq);
            self.seq = self.seq.wrapping_add(1);
            out.extend_from_slice(chunk);
        }
        self.stream.write_all(&out)?;
        Ok(())
    }

    fn read_packet(&mut self) -> std::result::Result<Vec<u8>, ClientError> {
        let mut out = Vec::new();
        loop {
            let mut h = [0u8; 4];
            self.stream.read_exact(&mut h)?;
            let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
            self.seq = h[3].wrapping_add(1);
            let at = out.len();
            out.resize(at + len, 0);
            self.stream.read_exact(&mut out[at..])?;
            if len < 0xff_ffff {
                return Ok(out);
            }
        }
    }
}

/// The scramble and auth plugin of a HandshakeV10.
fn parse_handshake(p: &[u8]) -> Option<(Vec<u8>, String)> {
    if *p.first()? != 10 {
        return None;
    }
    let mut at = 1;
    at += p[at..].iter().position(|&b| b == 0)? + 1; // server version
    at += 4; // connection id
    let mut scramble = p.get(at..at + 8)?.to_vec();
    at += 8 + 1;
    at += 2 + 1 + 2 + 2; // capabilities, charset, status, capabilities
    let auth_len = usize::from(*p.get(at)?);
    at += 1 + 10;
    let rest = auth_len.saturating_sub(8).max(13);
    let part2 = p.get(at..at + rest)?;
    scramble.extend_from_slice(part2.strip_suffix(&[0]).unwrap_or(part2));
    at += rest;
    let plugin = p
        .get(at..)
        .map(|b| {
            let end = b.iter().position(|&x| x == 0).unwrap_or(b.len());
            String::from_utf8_lossy(&b[..end]).into_owned()
        })
        .unwrap_or_default();
    Some((scramble, plugin))
}

fn auth_response(
    plugin: &str,
    password: &[u8],
    scramble: &[u8],
) -> std::result::Result<Vec<u8>, ClientError> {
    if password.is_empty() {
        return Ok(Vec::new());
    }
    match plugin {
        "mysql_native_password" => {
            // SHA1(pw) XOR SHA1(scramble ++ SHA1(SHA1(pw))).
            let h1 = Sha1::digest(password);
            let h2 = Sha1::digest(h1);
            let mut h = Sha1::new();
            h.update(scramble);
            h.update(h2);
            let h3 = h.finalize();
            Ok(h1.iter().zip(h3.iter()).map(|(a, b)| a ^ b).collect())
        }
        "caching_sha2_password" => {
            // SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) ++ scramble).
            let h1 = Sha256::digest(password);
            let h2 = Sha256::digest(h1);
            let mut h = Sha256::new();
            h.update(h2);
            h.update(scramble);
            let h3 = h.finalize();
            Ok(h1.iter().zip(h3.iter()).map(|(a, b)| a ^ b).collect())
        }
        other => Err(ClientError::Server(
            2059,
            format!("Authentication plugin '{other}' cannot be loaded"),
        )),
    }
}
