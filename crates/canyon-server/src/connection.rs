//! One client connection: the connection phase, then the command phase.
//!
//! State machine of a connection (each arrow names the function that moves it):
//!
//! ```text
//!  Accepted --serve_stream: over max_connections--> ERR 1040 --> Closed
//!     |     --serve_stream: over max_unauthenticated_connections--> ERR 1040 --> Closed
//!     | serve_stream(): HandshakeV10 sent (CLIENT_SSL offered with a certificate)
//!     v
//!  Greeted --SSLRequest--> TLS handshake (rustls) --> Greeted, inside TLS
//!     | the client's HandshakeResponse41 read
//!     v
//!  Authenticating --bad response / insecure transport (3159) / wrong password
//!     |             (ERR 1045) / bad db--> Closed
//!     | Login::authenticate(): crate::auth exchange, Session opened;
//!     | Login::serve(): the PreAuthGuard dropped, then the OK flushed
//!     v
//!  Ready --command_loop(): COM_* read--> Executing --reply flushed--> Ready
//!     |  COM_QUIT, client gone, broken framing, KILL CONNECTION, server shutdown
//!     v
//!  Closed: the Session is dropped, which rolls back an open transaction.
//!
//!  From Accepted until Ready (the connection phase), any of:
//!    connect_timeout passes (one deadline for the whole phase) --> Closed, no ERR
//!    a packet over max_allowed_packet --> ERR 1153 --> Closed
//!    a packet with the wrong sequence id --> ERR 1156 --> Closed
//!  In Ready, a command whose first packet has a sequence id other than 0, or a
//!  packet of a COM_CHANGE_USER exchange out of order --> ERR 1156 --> Closed.
//! ```
//!
//! COM_CHANGE_USER runs the same exchange inside Ready and swaps the Session on
//! success; on failure the old one stays.
//!
//! Pre-authentication limits: a peer that has not logged in holds two counted
//! slots — one of `max_connections` (`ActiveGuard`) and one of
//! `max_unauthenticated_connections` (`PreAuthGuard`, dropped at the login's
//! OK) — and at most `connect_timeout` of time: the deadline is set at the
//! accept and wraps the greeting's flush, every read of the connection phase,
//! the TLS handshake and the whole authentication exchange, so a client that
//! trickles one byte a second is cut off like a silent one.
//!
//! Invariants:
//! 1. Every command except COM_QUIT, COM_STMT_CLOSE and COM_STMT_SEND_LONG_DATA
//!    gets exactly one reply (OK, ERR, result set(s), or a prepare response),
//!    flushed before the next command is read.
//! 2. Engine calls run on the connection's task. The commit that ends a request
//!    is only written by the engine; the task awaits its durability
//!    (`Session::take_pending_commit`, `Connection::await_commit`) before the
//!    reply is written, so waiting for the log sync costs no thread. Nor does
//!    a row lock wait of a one-statement request: the session hands it back
//!    (`Error::LockWaitPending`), the task awaits the lock
//!    (`Connection::await_lock`) and sends the request again. A call that
//!    waits otherwise (a row lock inside a multi-statement text, an implicit
//!    commit) does so through `EngineConfig.blocking_hook`, which moves the
//!    wait off the runtime's worker ([`crate::blocking_hook`]); so does a
//!    statement still reading rows 5 ms after its first 1,024 (canyon-sql's
//!    `LONG_STATEMENT`), so that it does not hold up the worker's other
//!    connections.
//! 3. A client error never ends the connection; only broken framing, an
//!    oversized packet, a packet out of order, an authentication failure or
//!    KILL CONNECTION does.
//! 4. A connection counts against `max_unauthenticated_connections` exactly
//!    while it is in the connection phase: its `PreAuthGuard` lives from
//!    `serve_stream` until `Login::serve` is about to flush the login's OK.

mod replication;

use crate::auth::{self, Attempt, Verdict};
use crate::protocol::{
    self, capability, command, mysql_error, status, Cursor, HandshakeError, OkPacket, PacketIo,
    PreparedParams, ReadError, Scramble,
};
use crate::server::{ActiveGuard, PreAuthGuard, Shared};
use crate::tls::Rewind;
use canyon_common::Error;
use canyon_sql::{Column, QueryResult, Session};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::time::{timeout_at, Instant};
use tracing::{debug, info};

/// What carries a connection's bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Transport {
    /// TCP: may switch to TLS when the server has a certificate.
    Tcp,
    /// A Unix-domain socket: local, and secure for caching_sha2_password's
    /// cleartext full authentication and for require_secure_transport.
    Unix,
}

/// Serves one accepted TCP connection until it closes.
pub(crate) async fn run(
    shared: Arc<Shared>,
    stream: TcpStream,
    peer: SocketAddr,
    guard: ActiveGuard,
) {
    let _ = stream.set_nodelay(true);
    let host = peer.ip().to_canonical().to_string();
    serve_stream(shared, stream, host, Transport::Tcp, guard).await;
}

/// Serves one accepted Unix-domain socket connection until it closes. Its
/// client host is `localhost`, as in MySQL.
pub(crate) async fn run_unix(
    shared: Arc<Shared>,
    stream: tokio::net::UnixStream,
    guard: ActiveGuard,
) {
    serve_stream(
        shared,
        stream,
        "localhost".to_string(),
        Transport::Unix,
        guard,
    )
    .await;
}

/// The connection's life over any byte stream: greeting, an optional switch to
/// TLS, login, then commands.
///
/// The stream is split into halves that `PacketIo` reads and writes (tokio's
/// `split`: an uncontended lock per poll, next to a system call); the halves
/// are joined again only to hand the socket to TLS.
async fn serve_stream<S>(
    shared: Arc<Shared>,
    stream: S,
    host: String,
    transport: Transport,
    guard: ActiveGuard,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (reader, writer) = tokio::io::split(stream);
    let mut io = PacketIo::new(reader, writer, shared.max_allowed_packet);
    io.set_offload(crate::blocking_hook);
    let id = shared.next_connection_id();
    let deadline = Instant::now() + shared.connect_timeout;
    // Taken before anything is sent, so that the count covers the greeting too.
    let pre_auth = PreAuthGuard::new(shared.clone());
    let refusal = if guard.over_limit() {
        Some("too many connections")
    } else if pre_auth.over_limit() {
        Some("too many unauthenticated connections")
    } else {
        None
    };
    if let Some(why) = refusal {
        // As MySQL answers past max_connections: ERR 1040 in place of the greeting.
        let _ = timeout_at(deadline, send_error(&mut io, &Error::TooManyConnections)).await;
        io.shutdown().await;
        debug!(conn = id, %host, "refused: {why}");
        return;
    }
    let scramble = protocol::new_scramble();
    let offer_tls = transport == Transport::Tcp && shared.tls.is_some();
    io.write_packet(|out| {
        protocol::write_handshake_v10(out, &shared.server_version, id, &scramble, offer_tls)
    });
    let mut buf = Vec::new();
    let greeted = timeout_at(deadline, async {
        io.flush().await.ok()?;
        read_or_report(&mut io, &mut buf).await
    });
    if !matches!(greeted.await, Ok(Some(()))) {
        io.shutdown().await;
        return;
    }
    let Some(acceptor) = shared.tls.clone().filter(|_| offer_tls) else {
        // No TLS on offer: an SSLRequest is refused when the response is parsed.
        let secure = transport == Transport::Unix;
        let login = Login {
            shared: &shared,
            id,
            host: &host,
            scramble,
            secure,
        };
        return login.serve(io, buf, deadline, pre_auth).await;
    };
    if !protocol::is_ssl_request(&buf) {
        let login = Login {
            shared: &shared,
            id,
            host: &host,
            scramble,
            secure: false,
        };
        return login.serve(io, buf, deadline, pre_auth).await;
    }
    // The client starts TLS right after its SSLRequest; bytes of its ClientHello
    // already read are replayed to the TLS layer.
    let seq = io.sequence();
    let (buffered, reader, writer) = io.into_parts();
    let stream = Rewind::new(buffered, reader.unsplit(writer));
    let tls = match timeout_at(deadline, acceptor.accept(stream)).await {
        Ok(Ok(tls)) => tls,
        Ok(Err(e)) => {
            debug!(conn = id, %host, "TLS handshake failed: {e}");
            return;
        }
        Err(_) => return,
    };
    let (reader, writer) = tokio::io::split(tls);
    let mut io = PacketIo::new(reader, writer, shared.max_allowed_packet);
    io.set_offload(crate::blocking_hook);
    io.set_sequence(seq);
    if !matches!(
        timeout_at(deadline, read_or_report(&mut io, &mut buf)).await,
        Ok(Some(()))
    ) {
        io.shutdown().await;
        return;
    }
    let login = Login {
        shared: &shared,
        id,
        host: &host,
        scramble,
        secure: true,
    };
    login.serve(io, buf, deadline, pre_auth).await;
}

/// Answers a read that ended the connection, before it closes: ERR 1153 for a
/// packet over `max_allowed_packet`, ERR 1156 "Got packets out of order" for a
/// wrong sequence id (MySQL's `my_net_read` raises ER_NET_PACKETS_OUT_OF_ORDER
/// and the server closes the connection); nothing when the client is gone or
/// the socket failed. The ERR carries the server's own sequence id, as MySQL's
/// does. The stream cannot be read on after either error — the rest of the
/// offending packet is still unread — so the caller closes it.
async fn report_read_error<R, W>(io: &mut PacketIo<R, W>, e: &ReadError)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    match e {
        ReadError::TooLarge => send_error(io, &Error::PacketTooLarge).await,
        ReadError::OutOfOrder { .. } => send_error(io, &Error::PacketsOutOfOrder).await,
        ReadError::Closed | ReadError::Truncated | ReadError::Io(_) => {}
    }
}

/// Writes an ERR packet and flushes it (best effort: the connection may be gone).
async fn send_error<R, W>(io: &mut PacketIo<R, W>, err: &Error)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let e = mysql_error(err);
    io.write_packet(|out| protocol::write_err(out, &e));
    let _ = io.flush().await;
}

/// The login half of the connection phase, once the transport is settled.
struct Login<'a> {
    shared: &'a Arc<Shared>,
    id: u32,
    host: &'a str,
    scramble: Scramble,
    /// TLS or a Unix socket.
    secure: bool,
}

impl Login<'_> {
    /// Authenticates the client's HandshakeResponse41 (in `response`) by
    /// `deadline`, then gives back the connection's unauthenticated slot
    /// (`pre_auth`) and serves commands until the connection ends.
    async fn serve<R, W>(
        self,
        mut io: PacketIo<R, W>,
        response: Vec<u8>,
        deadline: Instant,
        pre_auth: PreAuthGuard,
    ) where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        let login = timeout_at(deadline, self.authenticate(&mut io, &response)).await;
        let Ok(Some((session, capabilities))) = login else {
            if login.is_err() {
                debug!(conn = self.id, host = %self.host, "connect_timeout passed");
            }
            self.shared.engine.status().aborted_connect();
            io.shutdown().await;
            return;
        };
        // The unauthenticated slot is given back before the OK can reach the
        // client, so a client holding its OK may count on the slot being free.
        drop(pre_auth);
        if !matches!(timeout_at(deadline, io.flush()).await, Ok(Ok(()))) {
            self.shared.engine.status().aborted_connect();
            io.shutdown().await;
            return;
        }
        let shared = self.shared.clone();
        // KILL CONNECTION from another session wakes this task (see command_loop).
        let killed = Arc::new(tokio::sync::Notify::new());
        let wake = killed.clone();
        session.set_kill_hook(Box::new(move || wake.notify_one()));
        // What the handshake set (`set_client_collation`), for COM_CHANGE_USER.
        let session_collation = session.connection_collation_id();
        let mut conn = Connection {
            io,
            session,
            killed,
            capabilities,
            multi_statements: capabilities & capability::MULTI_STATEMENTS != 0,
            statements: HashMap::new(),
            shared,
            id: self.id,
            host: self.host.to_string(),
            scramble: self.scramble,
            secure: self.secure,
            questions: 0,
            client_collation: session_collation,
        };
        conn.session.log_connect();
        canyon_probes::connection_start(conn.id, conn.session.user(), &conn.host);
        let quit = conn.command_loop().await;
        canyon_probes::connection_done(quit, conn.id);
        conn.session.log_general("Quit", "");
        conn.shared
            .questions
            .fetch_add(conn.questions, Ordering::Relaxed);
        conn.io.shutdown().await;
        debug!(conn = self.id, "closed");
    }

    /// Returns the authenticated session and the capabilities both sides share,
    /// with the login's OK packet buffered (the caller flushes it), or `None`
    /// after telling the client why not.
    async fn authenticate<R, W>(
        &self,
        io: &mut PacketIo<R, W>,
        payload: &[u8],
    ) -> Option<(Session, u32)>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        let (shared, id, host) = (self.shared, self.id, self.host);
        let response = match protocol::parse_handshake_response(payload) {
            Ok(r) => r,
            Err(e) => {
                let err = match e {
                    HandshakeError::Malformed => {
                        Error::MalformedPacket("handshake response".into())
                    }
                    HandshakeError::Pre41Client => {
                        Error::Unsupported("clients without the 4.1 protocol".into())
                    }
                    HandshakeError::SslRequested => Error::Unsupported("SSL connections".into()),
                };
                send_error(io, &err).await;
                return None;
            }
        };
        if shared.require_secure_transport && !self.secure {
            info!(conn = id, user = %log_name(&response.user), %host, "refused: insecure transport");
            send_error(io, &Error::InsecureTransport).await;
            return None;
        }
        let capabilities = response.capabilities & capability::SERVER;
        let user = response.user;
        let attempt = Attempt {
            account: shared.engine.auth_info(&user, host),
            client_plugin: response.auth_plugin.as_deref(),
            response: response.auth_response,
            scramble: &self.scramble,
            capabilities,
            secure: self.secure,
        };
        match auth::authenticate(io, &shared.sha2_cache, attempt).await {
            Verdict::Accepted => {}
            Verdict::Denied { using_password } => {
                // The same error whether or not the user exists, so a client
                // cannot probe for account names.
                info!(conn = id, user = %log_name(&user), host = %host, "access denied");
                let err = Error::AccessDenied {
                    user,
                    host: host.to_string(),
                    using_password,
                };
                send_error(io, &err).await;
                return None;
            }
            Verdict::Broken(e) => {
                report_read_error(io, &e).await;
                debug!(conn = id, "connection phase ended: {e}");
                return None;
            }
        }

        let mut session = shared.engine.session(id, &user, host);
        // Commits are awaited here, not waited for on the worker thread.
        session.set_deferred_durability(true);
        // Row lock waits too: awaited by the task, no thread held (`await_lock`).
        session.set_async_lock_waits(true);
        // CLIENT_FOUND_ROWS: UPDATE reports matched rather than changed rows.
        session.set_client_found_rows(capabilities & capability::FOUND_ROWS != 0);
        session.set_client_local_files(capabilities & capability::LOCAL_FILES != 0);
        // CLIENT_MULTI_RESULTS: a CALL may send result sets.
        session.set_client_multi_results(capabilities & capability::MULTI_RESULTS != 0);
        // The handshake's character set id names the connection's collation.
        session.set_client_collation(response.charset as u16);
        if let Some(db) = &response.database {
            if let Err(err) = session.use_database(db) {
                send_error(io, &err).await;
                return None;
            }
        }
        let ok = OkPacket::empty(session_status(&session));
        io.write_packet(|out| protocol::write_ok(out, &ok, false));
        debug!(conn = id, user = %user, host = %host, secure = self.secure, "authenticated");
        Some((session, capabilities))
    }
}

/// Reads one packet of the connection phase; on an oversized one or one out of
/// order tells the client why (ERR 1153, 1156) first.
async fn read_or_report<R, W>(io: &mut PacketIo<R, W>, buf: &mut Vec<u8>) -> Option<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    match io.read_packet(buf).await {
        Ok(()) => Some(()),
        Err(e) => {
            report_read_error(io, &e).await;
            debug!("connection phase ended: {e}");
            None
        }
    }
}

/// A user name as the log shows it: characters escaped as Rust's debug form
/// does (a name holding a newline must not forge a log line), cut after 64 —
/// MySQL's names have at most 32, but the wire takes any length, and refused
/// logins are logged at info level.
fn log_name(user: &str) -> String {
    const MAX: usize = 64;
    let mut out: String = user
        .chars()
        .take(MAX)
        .flat_map(char::escape_debug)
        .collect();
    if user.chars().nth(MAX).is_some() {
        out.push_str("...");
    }
    out
}

/// SERVER_STATUS_* flags from the session's state.
fn session_status(session: &Session) -> u16 {
    let mut s = 0;
    if session.autocommit() {
        s |= status::AUTOCOMMIT;
    }
    if session.in_transaction() {
        s |= status::IN_TRANS;
    }
    s
}

/// What the connection keeps about one prepared statement.
struct Statement {
    params: PreparedParams,
}

/// Which result-set encoding a reply uses.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RowFormat {
    /// COM_QUERY: values as length-encoded text.
    Text,
    /// COM_STMT_EXECUTE: values in their binary form.
    Binary,
}

/// An authenticated connection in the command phase.
struct Connection<R, W> {
    io: PacketIo<R, W>,
    session: Session,
    /// Notified by KILL CONNECTION (a permit is kept if the task is busy).
    killed: Arc<tokio::sync::Notify>,
    capabilities: u32,
    /// CLIENT_MULTI_STATEMENTS, as negotiated and then changed by COM_SET_OPTION.
    multi_statements: bool,
    statements: HashMap<u32, Statement>,
    shared: Arc<Shared>,
    id: u32,
    /// The client's host, as authentication saw it.
    host: String,
    /// The connection's scramble: COM_CHANGE_USER proofs are computed with it.
    scramble: Scramble,
    /// TLS or a Unix socket.
    secure: bool,
    /// Commands served, added to the server's total when the connection closes
    /// (a shared counter bumped per command would be a contended cache line).
    questions: u64,
    /// The collation id of the handshake: a session COM_CHANGE_USER starts
    /// takes its character sets from it again (Canyon does not read the
    /// id a COM_CHANGE_USER packet may carry; clients send the same one).
    client_collation: u16,
}

/// Whether the command loop goes on.
enum Flow {
    Continue,
    Close,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> Connection<R, W> {
    fn deprecate_eof(&self) -> bool {
        self.capabilities & capability::DEPRECATE_EOF != 0
    }

    fn status(&self) -> u16 {
        session_status(&self.session)
    }

    /// Reads commands and answers them until the client leaves or the server stops.
    ///
    /// The loop awaits nothing but the socket: a shutdown signal polled here (a
    /// `watch` channel, a `Notify`) would lock a mutex shared by every connection
    /// on every command. Shutdown instead aborts the task at its next await — the
    /// engine call in between is synchronous, so a statement is never cut in half.
    async fn command_loop(&mut self) -> bool {
        let mut buf = Vec::new();
        loop {
            self.io.reset_sequence();
            // This connection's own Notify, touched only by KILL: no shared lock.
            // A KILL QUERY wakes it too (for `await_lock`): nothing runs to stop,
            // so the read goes on — the same future, never a half-read packet
            // dropped.
            let read = {
                let read = self.io.read_packet(&mut buf);
                tokio::pin!(read);
                loop {
                    tokio::select! {
                        r = &mut read => break r,
                        _ = self.killed.notified() => {
                            if self.session.killed() {
                                debug!(conn = self.id, "killed while idle");
                                return false;
                            }
                        }
                    }
                }
            };
            match read {
                Ok(()) => {}
                Err(e @ (ReadError::TooLarge | ReadError::OutOfOrder { .. })) => {
                    report_read_error(&mut self.io, &e).await;
                    debug!(conn = self.id, "connection ended: {e}");
                    return false;
                }
                Err(e) => {
                    // Gone without COM_QUIT.
                    self.shared.engine.status().aborted_client();
                    debug!(conn = self.id, "connection ended: {e}");
                    return false;
                }
            }
            self.questions += 1;
            let flow = self.dispatch(&buf).await;
            if matches!(flow, Flow::Close) {
                return true;
            }
            if let Err(e) = self.io.flush().await {
                debug!(conn = self.id, "write failed: {e}");
                return false;
            }
            let (received, sent) = self.io.take_traffic();
            self.session.add_traffic(received, sent);
            if self.session.killed() {
                // KILL CONNECTION during the command: its reply is sent, then close.
                debug!(conn = self.id, "killed");
                return false;
            }
            if buf.capacity() > 1 << 20 {
                buf = Vec::new();
            }
        }
    }

    /// Answers one command packet (invariant 1: the reply is buffered, not flushed).
    async fn dispatch(&mut self, packet: &[u8]) -> Flow {
        let Some((&cmd, body)) = packet.split_first() else {
            self.write_error(&Error::MalformedPacket("empty packet".into()));
            return Flow::Continue;
        };
        match cmd {
            command::QUIT => return Flow::Close,
            command::QUERY => self.com_query(body).await,
            command::STMT_EXECUTE => self.com_stmt_execute(body).await,
            command::STMT_PREPARE => self.com_stmt_prepare(body),
            command::STMT_CLOSE => self.com_stmt_close(body),
            command::STMT_RESET => self.com_stmt_reset(body),
            command::STMT_SEND_LONG_DATA => self.com_stmt_send_long_data(body),
            command::INIT_DB => self.com_init_db(body),
            command::PING => self.write_ok_status(),
            command::FIELD_LIST => self.com_field_list(body),
            command::STATISTICS => self.com_statistics(),
            command::SET_OPTION => self.com_set_option(body),
            command::CHANGE_USER => return self.com_change_user(body).await,
            command::REGISTER_SLAVE => self.com_register_replica(body),
            command::BINLOG_DUMP => return self.com_binlog_dump(body, false).await,
            command::BINLOG_DUMP_GTID => return self.com_binlog_dump(body, true).await,
            command::RESET_CONNECTION => {
                self.session.reset();
                self.statements.clear();
                self.write_ok_status();
            }
            other => self.write_error(&Error::UnknownCommand(other)),
        }
        Flow::Continue
    }

    fn write_error(&mut self, err: &Error) {
        let mut e = mysql_error(err);
        if e.code == 1064
            && self.shared.engine.config().presentation
                == canyon_sql::catalog::config::Presentation::Mariadb
        {
            // MariaDB's ER_PARSE_ERROR names its own manual.
            e.message = e.message.replacen(
                "your MySQL server version",
                "your MariaDB server version",
                1,
            );
        }
        debug!(conn = self.id, code = e.code, "{}", e.message);
        self.io.write_packet(|out| protocol::write_err(out, &e));
    }

    fn write_ok_status(&mut self) {
        let ok = OkPacket::empty(self.status());
        self.io
            .write_packet(|out| protocol::write_ok(out, &ok, false));
    }

    /// Awaits the commit the request left pending (the session's deferred
    /// durability) before anything is answered; if the commit fails, `result`
    /// (the request's last) becomes its error. Then, with semi-synchronous
    /// replication, the replicas' acknowledgement of what the request logged.
    async fn await_commit(&mut self, result: Option<&mut Result<QueryResult, Error>>) {
        let replicated = self.session.take_replication_wait();
        if let Some(commit) = self.session.take_pending_commit() {
            if let Err(e) = commit.durable().await {
                if let Some(r) = result {
                    *r = Err(e);
                }
                return;
            }
        }
        if let Some(ts) = replicated {
            self.await_replicas(ts).await;
        }
    }

    /// Semi-synchronous replication (canyon-sql's `semisync.rs`): waits,
    /// without a thread, until enough replicas acknowledged the log record
    /// committed at `ts`, or the timeout turns the source asynchronous. A
    /// KILL ends the wait (the commit stands, as MySQL's).
    async fn await_replicas(&mut self, ts: u64) {
        use canyon_sql::catalog::binlog::semisync::WaitEnd;
        let sync = self.shared.engine.binlog().semi_sync().clone();
        if !sync.waiting_commits() {
            sync.not_waited();
            return;
        }
        let start = Instant::now();
        let end = tokio::select! {
            r = tokio::time::timeout(sync.timeout(), sync.acknowledged(ts)) => r.ok(),
            () = self.killed.notified() => Some(WaitEnd::Asynchronous),
        };
        match end {
            Some(end) => sync.finished(end, start.elapsed()),
            None => sync.timed_out(ts),
        }
    }

    /// A request stopped at a row lock ([`Error::LockWaitPending`]: the session
    /// rolled its statement back and left its transaction queued for the
    /// lock). Awaits the lock without holding a thread or polling: the
    /// hand-over wakes the wait, a KILL wakes `killed`, a timer ends it at the
    /// lock wait timeout. `Ok`: send the request again, it will find the lock
    /// its own; `Err`: the statement's error (1205, 1317).
    async fn await_lock(&mut self) -> Result<(), Error> {
        let Some(mut wait) = self.session.lock_wait() else {
            return self.session.end_lock_wait(None);
        };
        // A deadline too far to represent waits for ever, as the blocking wait does.
        let deadline = wait.deadline();
        let timeout = async move {
            match deadline {
                Some(d) => tokio::time::sleep_until(d.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(timeout);
        let give_up = loop {
            // The KILL is checked first: a permit the Notify kept from a KILL
            // sent before the wait began ends it at once.
            if self.session.interrupted() {
                break Some(Error::Interrupted);
            }
            tokio::select! {
                () = &mut wait => break None,
                () = &mut timeout => break Some(Error::LockWaitTimeout),
                () = self.killed.notified() => {}
            }
        };
        self.session.end_lock_wait(give_up)
    }

    /// COM_QUERY: run the text, answer each statement's result in order.
    async fn com_query(&mut self, body: &[u8]) {
        // Checking a large text's UTF-8 (tens of milliseconds at 64 MiB) is
        // work like its parse: off the worker, as `Session::execute` does there.
        // In a session whose character_set_client is not UTF-8 the text is
        // converted first (`protocol::decode_query_in`).
        let cs = self.session.client_charset();
        let decoded = if body.len() >= canyon_sql::LARGE_TEXT {
            let mut out = None;
            crate::blocking_hook(&mut || out = Some(protocol::decode_query_in(body, cs)));
            out.unwrap_or_else(|| protocol::decode_query_in(body, cs))
        } else {
            protocol::decode_query_in(body, cs)
        };
        let sql = match decoded {
            Ok(sql) => sql,
            Err(e) => {
                self.write_error(&e);
                return;
            }
        };
        debug!(conn = self.id, sql = &*sql, "COM_QUERY");
        let mut results = self.session.execute(&sql, self.multi_statements);
        // Only a text of one statement stops at a lock wait (see
        // `Session::set_async_lock_waits`): send it again once granted.
        while let Some(last @ Err(Error::LockWaitPending)) = results.last_mut() {
            match self.await_lock().await {
                Ok(()) => results = self.session.execute(&sql, self.multi_statements),
                Err(e) => *last = Err(e),
            }
        }
        // LOAD DATA LOCAL: the session asks for the client's file.
        if let Some(Err(Error::LocalInfileRequest(_))) = results.last() {
            let Some(Err(Error::LocalInfileRequest(name))) = results.pop() else {
                unreachable!("matched just above");
            };
            match self.local_infile(&name).await {
                Some(r) => results.push(r),
                None => return,
            }
        }
        self.await_commit(results.last_mut()).await;
        if results.is_empty() {
            let e = protocol::empty_query();
            self.io.write_packet(|out| protocol::write_err(out, &e));
            return;
        }
        let last = results.len() - 1;
        for (i, result) in results.into_iter().enumerate() {
            match result {
                Ok(r) => {
                    if self
                        .write_result(r, i < last, RowFormat::Text)
                        .await
                        .is_err()
                    {
                        return;
                    }
                }
                Err(err) => {
                    // The engine stops at the first error: nothing follows it.
                    self.write_error(&err);
                    return;
                }
            }
        }
    }

    /// LOAD DATA LOCAL's exchange (the protocol's "LOCAL INFILE Request"):
    /// the request packet (0xFB, then the file name as the statement wrote
    /// it), then the client's packets of file content, up to an empty one
    /// (a client that cannot or will not send the file sends only that).
    /// The session reads the packets as it inserts the rows (the load is
    /// streamed, not buffered): it runs off the worker (`blocking_hook`,
    /// `block_in_place`) and each packet is awaited with `Handle::block_on`.
    /// On a runtime without `block_in_place` (current-thread) the packets
    /// are read first and handed over from memory. If the load stops early
    /// (an error), the packets it left are drained so the exchange ends
    /// where the client expects its answer. `None`: the connection broke.
    async fn local_infile(&mut self, name: &str) -> Option<Result<QueryResult, Error>> {
        self.io.write_packet(|out| {
            out.push(0xFB);
            out.extend_from_slice(name.as_bytes());
        });
        if let Err(e) = self.io.flush().await {
            debug!(conn = self.id, "write failed: {e}");
            return None;
        }
        let multi_thread = tokio::runtime::Handle::current().runtime_flavor()
            == tokio::runtime::RuntimeFlavor::MultiThread;
        let mut ended = false;
        let mut broken = false;
        let result = if multi_thread {
            let handle = tokio::runtime::Handle::current();
            let (io, session, id) = (&mut self.io, &mut self.session, self.id);
            let mut packet = Vec::new();
            let mut source = |buf: &mut Vec<u8>| -> Result<bool, Error> {
                if let Err(e) = handle.block_on(io.read_packet(&mut packet)) {
                    debug!(conn = id, "connection ended during LOAD DATA LOCAL: {e}");
                    broken = true;
                    return Err(Error::Io(format!("LOAD DATA LOCAL: {e}")));
                }
                if packet.is_empty() {
                    ended = true;
                    return Ok(false);
                }
                buf.extend_from_slice(&packet);
                Ok(true)
            };
            let mut out = None;
            crate::blocking_hook(&mut || out = Some(session.finish_local_infile(&mut source)));
            out.expect("the blocking hook runs its closure")
        } else {
            let mut packets = Vec::new();
            loop {
                let mut packet = Vec::new();
                if let Err(e) = self.io.read_packet(&mut packet).await {
                    debug!(
                        conn = self.id,
                        "connection ended during LOAD DATA LOCAL: {e}"
                    );
                    return None;
                }
                if packet.is_empty() {
                    break;
                }
                packets.push(packet);
            }
            ended = true;
            let mut packets = packets.into_iter();
            self.session.finish_local_infile(&mut |buf: &mut Vec<u8>| {
                Ok(match packets.next() {
                    Some(p) => {
                        buf.extend_from_slice(&p);
                        true
                    }
                    None => false,
                })
            })
        };
        if broken {
            return None;
        }
        let mut buf = Vec::new();
        while !ended {
            if let Err(e) = self.io.read_packet(&mut buf).await {
                debug!(
                    conn = self.id,
                    "connection ended during LOAD DATA LOCAL: {e}"
                );
                return None;
            }
            ended = buf.is_empty();
        }
        Some(result)
    }

    /// Writes one statement's result: an OK packet or a result set. `more` sets
    /// SERVER_MORE_RESULTS_EXISTS (another result of the same COM_QUERY follows).
    async fn write_result(
        &mut self,
        result: QueryResult,
        more: bool,
        format: RowFormat,
    ) -> std::io::Result<()> {
        let mut status = self.status();
        if more {
            status |= status::MORE_RESULTS_EXISTS;
        }
        match result {
            QueryResult::Ok {
                affected_rows,
                last_insert_id,
                info,
                warnings,
            } => {
                let ok = OkPacket {
                    affected_rows,
                    last_insert_id,
                    status,
                    warnings,
                    info: &info,
                };
                self.io
                    .write_packet(|out| protocol::write_ok(out, &ok, false));
            }
            QueryResult::Rows {
                columns,
                rows,
                warnings,
            } => {
                let deprecate_eof = self.deprecate_eof();
                self.write_column_block(&columns, status);
                let mut rows = rows;
                let convert = self.results_conversion();
                // MariaDB never shows a negative zero (`-0e0`, or -0.1 stored
                // in a FLOAT(10,0), is `0`); MySQL 8 shows `-0`.
                let positive_zero = self.shared.engine.config().presentation
                    == canyon_sql::catalog::config::Presentation::Mariadb;
                for row in &mut rows {
                    if let Some(cs) = convert {
                        protocol::convert::convert_row(&columns, row, cs);
                    }
                    if positive_zero {
                        for v in row.iter_mut() {
                            if matches!(v, canyon_sql::Value::Double(d) if *d == 0.0) {
                                *v = canyon_sql::Value::Double(0.0);
                            }
                        }
                    }
                    match format {
                        RowFormat::Text => self
                            .io
                            .write_packet(|out| protocol::write_text_row(out, &columns, row)),
                        RowFormat::Binary => self
                            .io
                            .write_packet(|out| protocol::write_binary_row(out, &columns, row)),
                    }
                    self.io.flush_if_large().await?;
                }
                self.io.write_packet(|out| {
                    protocol::write_end_of_rows(out, deprecate_eof, warnings, status)
                });
            }
        }
        Ok(())
    }

    /// Column count, the column definitions, and (without DEPRECATE_EOF) an EOF.
    fn write_column_block(&mut self, columns: &[Column], status: u16) {
        self.io
            .write_packet(|out| protocol::put_lenenc_int(out, columns.len() as u64));
        self.write_definitions(columns, status);
    }

    /// The character set result values and column names are converted to:
    /// `character_set_results`, unless it is utf8mb4 (the engine's own),
    /// binary or NULL (no conversion).
    fn results_conversion(&self) -> Option<canyon_sql::Charset> {
        self.session.results_charset().filter(|cs| {
            !matches!(
                cs,
                canyon_sql::Charset::Utf8mb4 | canyon_sql::Charset::Binary
            )
        })
    }

    /// Column definitions followed by an EOF unless DEPRECATE_EOF.
    fn write_definitions(&mut self, columns: &[Column], status: u16) {
        let cs = self
            .results_conversion()
            .unwrap_or(canyon_sql::Charset::Utf8mb4);
        for col in columns {
            self.io
                .write_packet(|out| protocol::write_column_definition_as(out, col, false, cs));
        }
        if !self.deprecate_eof() {
            self.io
                .write_packet(|out| protocol::write_eof(out, 0, status));
        }
    }

    /// COM_CHANGE_USER: authenticate as another account (with the connection's
    /// scramble, and the same exchange as the login) and start a fresh session:
    /// the open transaction is rolled back, prepared statements and variables
    /// are gone. On failure the current session stays as it was, as in MySQL;
    /// an exchange broken mid-way (a packet out of order or too large, the
    /// client gone) closes the connection.
    async fn com_change_user(&mut self, body: &[u8]) -> Flow {
        let Ok(request) = protocol::parse_change_user(body, self.capabilities) else {
            self.write_error(&Error::MalformedPacket("COM_CHANGE_USER".into()));
            return Flow::Continue;
        };
        let attempt = Attempt {
            account: self.shared.engine.auth_info(&request.user, &self.host),
            client_plugin: request.auth_plugin.as_deref(),
            response: request.auth_response,
            scramble: &self.scramble,
            capabilities: self.capabilities,
            secure: self.secure,
        };
        match auth::authenticate(&mut self.io, &self.shared.sha2_cache, attempt).await {
            Verdict::Accepted => {}
            Verdict::Denied { using_password } => {
                info!(conn = self.id, user = %log_name(&request.user), host = %self.host, "change user denied");
                self.write_error(&Error::AccessDenied {
                    user: request.user,
                    host: self.host.clone(),
                    using_password,
                });
                return Flow::Continue;
            }
            Verdict::Broken(e) => {
                // The rest of the offending packet is unread: the stream is
                // out of step, so the connection ends (after ERR 1153 / 1156).
                report_read_error(&mut self.io, &e).await;
                debug!(conn = self.id, "COM_CHANGE_USER exchange broken: {e}");
                return Flow::Close;
            }
        }
        let mut session = self
            .shared
            .engine
            .session(self.id, &request.user, &self.host);
        session.set_deferred_durability(true);
        session.set_async_lock_waits(true);
        session.set_client_found_rows(self.capabilities & capability::FOUND_ROWS != 0);
        session.set_client_local_files(self.capabilities & capability::LOCAL_FILES != 0);
        session.set_client_multi_results(self.capabilities & capability::MULTI_RESULTS != 0);
        session.set_client_collation(self.client_collation);
        let wake = self.killed.clone();
        session.set_kill_hook(Box::new(move || wake.notify_one()));
        if let Some(db) = &request.database {
            if let Err(e) = session.use_database(db) {
                self.write_error(&e);
                return Flow::Continue;
            }
        }
        // The old session drops here, rolling back its open transaction.
        self.session = session;
        self.statements.clear();
        self.multi_statements = self.capabilities & capability::MULTI_STATEMENTS != 0;
        debug!(conn = self.id, user = %request.user, "changed user");
        self.write_ok_status();
        Flow::Continue
    }

    /// COM_INIT_DB: change the current database.
    fn com_init_db(&mut self, body: &[u8]) {
        let db = String::from_utf8_lossy(body);
        self.session.log_general("Init DB", &db);
        match self.session.use_database(&db) {
            Ok(()) => self.write_ok_status(),
            Err(e) => self.write_error(&e),
        }
    }

    /// COM_FIELD_LIST: the table's column definitions (with a NULL default value
    /// field, as this command's definitions carry), then the end marker.
    fn com_field_list(&mut self, body: &[u8]) {
        let mut c = Cursor::new(body);
        let table = match c.nul_bytes() {
            Ok(t) => t,
            Err(_) => c.rest(),
        };
        let table = String::from_utf8_lossy(table);
        match self.session.field_list(&table) {
            Ok(columns) => {
                let cs = self
                    .results_conversion()
                    .unwrap_or(canyon_sql::Charset::Utf8mb4);
                for col in &columns {
                    self.io.write_packet(|out| {
                        protocol::write_column_definition_as(out, col, true, cs)
                    });
                }
                let (deprecate_eof, status) = (self.deprecate_eof(), self.status());
                self.io
                    .write_packet(|out| protocol::write_end_of_rows(out, deprecate_eof, 0, status));
            }
            Err(e) => self.write_error(&e),
        }
    }

    /// COM_STATISTICS: MySQL's one-line status text (not an OK packet).
    fn com_statistics(&mut self) {
        let uptime = self.shared.started.elapsed().as_secs();
        let questions = self.shared.questions.load(Ordering::Relaxed) + self.questions;
        let threads = self.shared.active_connections();
        let per_sec = questions as f64 / uptime.max(1) as f64;
        let line = format!(
            "Uptime: {uptime}  Threads: {threads}  Questions: {questions}  Slow queries: 0  \
             Opens: 0  Flush tables: 0  Open tables: 0  Queries per second avg: {per_sec:.3}"
        );
        self.io.write_payload(line.as_bytes());
    }

    /// COM_SET_OPTION: multi-statements on or off; answered with EOF.
    fn com_set_option(&mut self, body: &[u8]) {
        let option = Cursor::new(body).u16();
        match option {
            Ok(protocol::set_option::MULTI_STATEMENTS_ON) => self.multi_statements = true,
            Ok(protocol::set_option::MULTI_STATEMENTS_OFF) => self.multi_statements = false,
            _ => {
                self.write_error(&Error::UnknownCommand(command::SET_OPTION));
                return;
            }
        }
        let (deprecate_eof, status) = (self.deprecate_eof(), self.status());
        self.io
            .write_packet(|out| protocol::write_end_of_rows(out, deprecate_eof, 0, status));
    }

    /// COM_STMT_PREPARE: COM_STMT_PREPARE_OK, then the parameter definitions and
    /// the result columns, each block followed by EOF unless DEPRECATE_EOF.
    fn com_stmt_prepare(&mut self, body: &[u8]) {
        // The text in character_set_client, as COM_QUERY's.
        let sql = match protocol::decode_query_in(body, self.session.client_charset()) {
            Ok(sql) => sql,
            Err(e) => {
                self.write_error(&e);
                return;
            }
        };
        debug!(conn = self.id, sql = &*sql, "COM_STMT_PREPARE");
        let info = match self.session.prepare(&sql) {
            Ok(info) => info,
            Err(e) => {
                self.write_error(&e);
                return;
            }
        };
        let column_count = u16::try_from(info.columns.len()).unwrap_or(u16::MAX);
        self.io.write_packet(|out| {
            protocol::write_prepare_ok(out, info.id, column_count, info.params)
        });
        let status = self.status();
        if info.params > 0 {
            let params = vec![protocol::parameter_column(); usize::from(info.params)];
            self.write_definitions(&params, status);
        }
        if !info.columns.is_empty() {
            self.write_definitions(&info.columns, status);
        }
        self.statements.insert(
            info.id,
            Statement {
                params: PreparedParams::new(info.params),
            },
        );
    }

    /// COM_STMT_EXECUTE: decode the parameters, run, answer with a binary result
    /// set or an OK packet.
    async fn com_stmt_execute(&mut self, body: &[u8]) {
        let mut c = Cursor::new(body);
        let header = match protocol::parse_execute_header(&mut c) {
            Ok(h) => h,
            Err(e) => {
                self.write_error(&e);
                return;
            }
        };
        let id = header.statement_id;
        let Some(stmt) = self.statements.get_mut(&id) else {
            self.write_error(&Error::UnknownStatementHandler {
                id,
                command: protocol::EXECUTE_COMMAND.to_string(),
            });
            return;
        };
        let mut params = match protocol::decode_execute_params(&mut c, &mut stmt.params) {
            Ok(p) => p,
            Err(e) => {
                self.write_error(&e);
                return;
            }
        };
        let client_cs = self.session.client_charset();
        if !client_cs.is_passthrough() {
            protocol::convert::convert_params(&mut params, stmt.params.types(), client_cs);
        }
        let mut result = self.session.execute_prepared(id, &params);
        while matches!(result, Err(Error::LockWaitPending)) {
            result = match self.await_lock().await {
                Ok(()) => self.session.execute_prepared(id, &params),
                Err(e) => Err(e),
            };
        }
        // A prepared LOAD DATA LOCAL (MariaDB's clients prepare it).
        if let Err(Error::LocalInfileRequest(name)) = &result {
            let name = name.clone();
            match self.local_infile(&name).await {
                Some(r) => result = r,
                None => return,
            }
        }
        self.await_commit(Some(&mut result)).await;
        match result {
            Ok(result) => {
                let _ = self.write_result(result, false, RowFormat::Binary).await;
            }
            Err(e) => self.write_error(&e),
        }
    }

    /// COM_STMT_CLOSE: no reply, even for an unknown id.
    fn com_stmt_close(&mut self, body: &[u8]) {
        if let Ok(id) = Cursor::new(body).u32() {
            self.statements.remove(&id);
            self.session.close_prepared(id);
        }
    }

    /// COM_STMT_RESET: forget the statement's long data; OK.
    fn com_stmt_reset(&mut self, body: &[u8]) {
        let id = match Cursor::new(body).u32() {
            Ok(id) => id,
            Err(e) => {
                self.write_error(&e.into());
                return;
            }
        };
        match self.statements.get_mut(&id) {
            Some(stmt) => {
                stmt.params.reset();
                self.write_ok_status();
            }
            None => self.write_error(&Error::UnknownStatementHandler {
                id,
                command: "mysqld_stmt_reset".to_string(),
            }),
        }
    }

    /// COM_STMT_SEND_LONG_DATA: accumulate; no reply (errors surface at execute).
    fn com_stmt_send_long_data(&mut self, body: &[u8]) {
        let max = self.io.max_allowed_packet();
        if let Ok((id, param, data)) = protocol::parse_long_data(body) {
            if let Some(stmt) = self.statements.get_mut(&id) {
                stmt.params.add_long_data(param, data, max);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::log_name;

    #[test]
    fn log_names_are_escaped_and_cut() {
        assert_eq!(log_name("app"), "app");
        assert_eq!(log_name("a\nINFO forged"), "a\\nINFO forged");
        assert_eq!(log_name(&"ñ".repeat(100)), format!("{}...", "ñ".repeat(64)));
    }
}
