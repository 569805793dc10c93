//! The listener: accepts TCP connections, gives each one task, counts them
//! against `max_connections` (all) and `max_unauthenticated_connections` (those
//! not yet logged in), and stops them on shutdown.
//!
//! Threading model: one async task per connection on a fixed pool of runtime
//! worker threads (the lesson of MySQL's thread-per-connection collapse past a few
//! thousand clients). Engine calls run inline on the task; a commit's wait for
//! its log sync is awaited by the task (the session's deferred durability, see
//! `connection.rs`), as is a one-statement request's row lock wait (the session
//! hands the wait back and the task runs the statement again once granted); the
//! other blocking waits inside the engine (row locks inside a multi-statement
//! text, implicit commits) go through [`blocking_hook`].
//!
//! Shutdown: stop accepting, then abort every connection task. A task is
//! cancelled only at an await point — reading the next command or flushing a
//! reply — and engine calls are synchronous, so a statement that is running
//! completes (its reply may not be sent); dropping the task drops its session,
//! which rolls back an open transaction. Connections carry no shutdown signal of
//! their own because polling one per command would touch shared state (see
//! `connection::Connection::command_loop`).

use crate::auth::Sha2Cache;
use crate::connection;
use canyon_sql::Engine;
use std::future::Future;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tracing::{info, warn};

/// How long shutdown waits for aborted connection tasks to finish.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// The MySQL version Canyon reports (handshake, `VERSION()`, `@@version`). Clients
/// and connectors switch behaviour on it, so it names a real MySQL 8.0 release.
pub fn server_version() -> String {
    format!("8.0.36-canyon-{}", env!("CARGO_PKG_VERSION"))
}

/// `VERSION()` / `@@version` under `presentation = "mariadb"`: a MariaDB
/// 10.11 version, because MariaDB's replica and tools decide what their
/// source can do from its major version:
///
/// - a MariaDB replica (sql/slave.cc, `get_master_version_and_clock`)
///   falls back to `Using_Gtid=No` from a source below 10 — it takes that
///   source for a MySQL one, without MariaDB GTIDs;
/// - `mariadb-binlog --read-from-remote-server` (client/mysqlbinlog.cc,
///   `check_master_version`) reads `SELECT VERSION()` and accepts only a
///   first digit of 1, 3, 4 or 5 ("unrecognized MariaDB version" for 8);
/// - `mariadb-dump` (client/mysqldump.c) takes a server from 10.0 on for one
///   with MariaDB GTIDs (`BINLOG_GTID_POS`, `@@gtid_binlog_pos`).
///
/// `-MariaDB` is kept in it as MariaDB's own versions have it
/// (`10.11.6-MariaDB-0+deb12u1`): connectors (Connector/J, PHP's mysqlnd,
/// mysqlclient) tell MariaDB from MySQL by that word, and a server that
/// presents itself as MariaDB should be taken for one. `canyon` follows, as
/// distributions append their own tag.
pub fn mariadb_server_version() -> String {
    format!("10.11.99-MariaDB-canyon-{}", env!("CARGO_PKG_VERSION"))
}

/// The version a handshake carries for `version` (the `VERSION()` text).
/// MariaDB from 10.0 on prefixes its handshake's version with `5.5.5-`
/// (MariaDB's `RPL_VERSION_HACK`): MySQL 5.x replicas and old clients
/// parse one digit of major version, and read "10" as 1. MariaDB's client
/// library (libmariadb, `MA_RPL_VERSION_HACK`) strips the prefix, so its
/// tools and replicas see `10.11.99-...`; MySQL's keeps it and sees a 5.5
/// server, as it does for MariaDB itself. A MySQL-style version is sent
/// as it is.
pub fn handshake_version(version: &str) -> String {
    if version.starts_with("10.") || version.starts_with("11.") {
        format!("5.5.5-{version}")
    } else {
        version.to_string()
    }
}

/// What the listener needs to know besides the engine.
#[derive(Clone)]
pub struct ServerOptions {
    /// Connections served at once; one more gets ERR 1040.
    pub max_connections: u32,
    /// Largest packet accepted from a client.
    pub max_allowed_packet: usize,
    /// MySQL's `connect_timeout`: how long the whole connection phase (greeting,
    /// TLS, login) may take.
    pub connect_timeout: Duration,
    /// Connections still in the connection phase at once; one more gets ERR 1040.
    pub max_unauthenticated_connections: u32,
    /// The certificate TCP clients may switch to TLS with (see [`crate::tls`]);
    /// `None`: TLS is not offered.
    pub tls: Option<tokio_rustls::TlsAcceptor>,
    /// Refuse logins over TCP without TLS (ERR 3159).
    pub require_secure_transport: bool,
}

/// State shared by the listener and every connection task.
pub(crate) struct Shared {
    pub(crate) engine: Arc<Engine>,
    pub(crate) server_version: String,
    pub(crate) max_allowed_packet: usize,
    pub(crate) connect_timeout: Duration,
    max_connections: u32,
    active: AtomicU32,
    max_unauthenticated: u32,
    /// Connections between accept and a successful login ([`PreAuthGuard`]).
    unauthenticated: AtomicU32,
    next_id: AtomicU32,
    pub(crate) started: Instant,
    /// Commands served by connections that have closed (see `Connection::questions`).
    pub(crate) questions: AtomicU64,
    pub(crate) tls: Option<tokio_rustls::TlsAcceptor>,
    pub(crate) require_secure_transport: bool,
    /// caching_sha2_password's fast-path hashes, learnt from full logins.
    pub(crate) sha2_cache: Sha2Cache,
}

impl Shared {
    /// A new connection id (MySQL's CONNECTION_ID()), never 0.
    pub(crate) fn next_connection_id(&self) -> u32 {
        loop {
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            if id != 0 {
                return id;
            }
        }
    }

    /// Connections open now (COM_STATISTICS "Threads").
    pub(crate) fn active_connections(&self) -> u32 {
        self.active.load(Ordering::Relaxed)
    }
}

/// Holds one slot of `max_connections` for as long as the connection lives.
pub(crate) struct ActiveGuard {
    shared: Arc<Shared>,
    over_limit: bool,
}

impl ActiveGuard {
    fn new(shared: Arc<Shared>) -> Self {
        let n = shared.active.fetch_add(1, Ordering::Relaxed) + 1;
        let over_limit = n > shared.max_connections;
        ActiveGuard { shared, over_limit }
    }

    /// Whether this connection is one too many and must be refused.
    pub(crate) fn over_limit(&self) -> bool {
        self.over_limit
    }
}

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        self.shared.active.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Holds one slot of `max_unauthenticated_connections` from the accept until
/// the connection has logged in (the owner drops it then) or ends, whichever
/// comes first: dropping is the only way the count goes down, so every exit
/// path — refusal, timeout, broken packet, task aborted at shutdown — gives the
/// slot back.
pub(crate) struct PreAuthGuard {
    shared: Arc<Shared>,
    over_limit: bool,
}

impl PreAuthGuard {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        let n = shared.unauthenticated.fetch_add(1, Ordering::Relaxed) + 1;
        let over_limit = n > shared.max_unauthenticated;
        PreAuthGuard { shared, over_limit }
    }

    /// Whether this connection is one too many and must be refused.
    pub(crate) fn over_limit(&self) -> bool {
        self.over_limit
    }
}

impl Drop for PreAuthGuard {
    fn drop(&mut self) {
        self.shared.unauthenticated.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Runs `closure` where it may block: inside `block_in_place` on a multi-thread
/// tokio runtime (so the worker's other tasks move to another thread while a
/// connection waits for a row lock or a log sync), directly anywhere else.
/// This is the function the server puts in `EngineConfig.blocking_hook`.
pub fn blocking_hook(closure: &mut dyn FnMut()) {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(closure)
        }
        _ => closure(),
    }
}

/// Accepts connections on `listener` and serves them until `shutdown` completes,
/// then closes every connection (see the module doc).
pub async fn serve(
    listener: TcpListener,
    unix: Option<tokio::net::UnixListener>,
    engine: Arc<Engine>,
    options: ServerOptions,
    shutdown: impl Future<Output = ()>,
) {
    // The engine's VERSION() text decides it: MySQL's, or MariaDB's under
    // its presentation (`crate::startup::engine_config`).
    let server_version = handshake_version(&engine.config().version);
    let shared = Arc::new(Shared {
        engine,
        server_version,
        max_allowed_packet: options.max_allowed_packet,
        connect_timeout: options.connect_timeout,
        max_connections: options.max_connections,
        active: AtomicU32::new(0),
        max_unauthenticated: options.max_unauthenticated_connections,
        unauthenticated: AtomicU32::new(0),
        next_id: AtomicU32::new(1),
        started: Instant::now(),
        questions: AtomicU64::new(0),
        tls: options.tls,
        require_secure_transport: options.require_secure_transport,
        sha2_cache: Sha2Cache::default(),
    });
    let mut tasks = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let guard = ActiveGuard::new(shared.clone());
                    tasks.spawn(connection::run(
                        shared.clone(),
                        stream,
                        peer,
                        guard,
                    ));
                }
                Err(e) => {
                    // EMFILE/ENFILE and friends: back off instead of spinning.
                    warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            accepted = accept_unix(unix.as_ref()), if unix.is_some() => match accepted {
                Ok(stream) => {
                    let guard = ActiveGuard::new(shared.clone());
                    tasks.spawn(connection::run_unix(shared.clone(), stream, guard));
                }
                Err(e) => {
                    warn!("accept on the Unix socket failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            Some(done) = tasks.join_next(), if !tasks.is_empty() => {
                if let Err(e) = done {
                    if e.is_panic() {
                        warn!("a connection task panicked: {e}");
                    }
                }
            }
        }
    }
    drop(listener);
    let open = tasks.len();
    info!(
        open_connections = open,
        "shutting down: closing connections"
    );
    tasks.abort_all();
    let drained = tokio::time::timeout(DRAIN_TIMEOUT, async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        // A task stuck in a long engine call cannot be cancelled before it
        // returns; the process exits anyway once `serve` returns.
        warn!(
            still_running = tasks.len(),
            "connections did not stop in time"
        );
    }
}

/// Accepts on the Unix socket; never resolves when there is none (the `select!`
/// branch is also disabled then).
async fn accept_unix(
    unix: Option<&tokio::net::UnixListener>,
) -> std::io::Result<tokio::net::UnixStream> {
    match unix {
        Some(l) => l.accept().await.map(|(stream, _)| stream),
        None => std::future::pending().await,
    }
}
