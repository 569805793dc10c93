//! The driver: clients that talk to a target over the MySQL protocol
//! (`mysql_async`, TCP only), and the measurement of one step.
//!
//! One step, in order ([`run_step`]):
//!
//! 1. open the idle connections the step asks for ([`IdlePool::resize`]);
//! 2. connect every active client to every shard and prepare the workload's
//!    statements on each connection (COM_STMT_PREPARE) — not measured;
//! 3. start the clients; each loops: next transaction from its
//!    [`crate::workload::TxnSource`], execute its statements with
//!    COM_STMT_EXECUTE on the transaction's shard, record latency and counts;
//! 4. after the warm-up, reset the counters and sample /proc (server processes,
//!    this process, the machine); print a progress line every interval;
//! 5. at the end of the window sample again, read the counters, stop the
//!    clients and wait for their last transactions.
//!
//! Errors, as sysbench handles them: 1213 (deadlock), 1205 (lock wait timeout)
//! and 1020 (record changed) roll the transaction back, are counted, and the
//! client goes on with its next transaction. Any other error, or a lost
//! connection, stops the step: its message names the target, the shard and the
//! step, and what was measured until then is kept.
//!
//! Paced load: client `i` starts transaction `n` at `start + phase_i + n/rate`.
//! A client that is behind schedule (its previous transaction ended after this
//! one's start time) measures latency from the scheduled start, so a server
//! that falls behind shows it in the latency instead of silently receiving less
//! load (no coordinated omission); a client on schedule measures from the real
//! start, so the timer's wake-up lateness is not charged to the server.

use crate::result::{per, ClientCost, ServerCost, Status, StepResult};
use crate::sample::{self, MachineDelta, MachineSample, ProcessDelta, ProcessSample};
use crate::stats::{QueryTally, StepStats};
use crate::target::{Endpoint, Target};
use crate::workload::{ConnectionMode, Param, StmtClass, Txn, TxnSource, Workload};
use mysql_async::prelude::Queryable;
use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio::task::JoinSet;

/// MySQL errors after which sysbench rolls back and goes on (ER_LOCK_DEADLOCK,
/// ER_LOCK_WAIT_TIMEOUT, ER_CHECKREAD).
pub const RETRYABLE: [u16; 3] = [1213, 1205, 1020];

/// Client-side error numbers (libmysqlclient's CR_*), used for failures that
/// are not server errors.
pub mod client_errors {
    /// CR_UNKNOWN_ERROR.
    pub const UNKNOWN: u16 = 2000;
    /// CR_CONN_HOST_ERROR: cannot connect.
    pub const CONNECT: u16 = 2003;
    /// CR_SERVER_LOST: the connection broke during a query.
    pub const SERVER_LOST: u16 = 2013;
}

/// Set when the user interrupts the run (Ctrl-C): the step in progress stops
/// and is reported as failed, and the results so far are written.
pub static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// How long a connection attempt may take (a server with a full accept backlog
/// answers slowly, not never).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(60);

/// Connections opened at once when filling the idle pool.
const CONNECT_PARALLELISM: usize = 64;

/// A failed database call: MySQL error number and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbError {
    /// Server error number, or a client one from [`client_errors`].
    pub code: u16,
    /// The message.
    pub message: String,
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (MySQL error {})", self.message, self.code)?;
        let hint = match self.code {
            1045 => Some("wrong user name or password"),
            1044 | 1049 | 1146 => {
                Some("missing schema: prepare the data first (drop --skip-prepare)")
            }
            1040 => Some("the server refuses more connections: raise its max_connections"),
            client_errors::CONNECT => Some("unreachable: is the server running on that address?"),
            _ => None,
        };
        if let Some(h) = hint {
            write!(f, " — {h}")?;
        }
        Ok(())
    }
}

impl DbError {
    fn from_driver(e: mysql_async::Error, connecting: bool) -> DbError {
        use mysql_async::Error as E;
        match e {
            E::Server(s) => DbError {
                code: s.code,
                message: s.message,
            },
            E::Io(io) => DbError {
                code: if connecting {
                    client_errors::CONNECT
                } else {
                    client_errors::SERVER_LOST
                },
                message: io.to_string(),
            },
            E::Driver(d) => DbError {
                code: match d {
                    mysql_async::DriverError::ConnectionClosed => client_errors::SERVER_LOST,
                    _ => client_errors::UNKNOWN,
                },
                message: d.to_string(),
            },
            other => DbError {
                code: client_errors::UNKNOWN,
                message: other.to_string(),
            },
        }
    }

    /// Whether sysbench would retry after this error.
    pub fn retryable(&self) -> bool {
        RETRYABLE.contains(&self.code)
    }
}

/// Connection options: the endpoint's Unix socket if it names one, else TCP
/// even to 127.0.0.1 (mysql_async would switch to the server's socket
/// otherwise), TCP_NODELAY, and the session settings given up front so that
/// connecting costs no extra query.
fn opts(ep: &Endpoint, db: Option<&str>, statements: usize) -> mysql_async::Opts {
    mysql_async::OptsBuilder::default()
        .ip_or_hostname(ep.host.clone())
        .tcp_port(ep.port)
        .socket(ep.socket.as_ref().map(|p| p.to_string_lossy().into_owned()))
        .user(Some(ep.user.clone()))
        .pass(Some(ep.password.clone()))
        .db_name(db.map(str::to_owned))
        .prefer_socket(false)
        .tcp_nodelay(true)
        .max_allowed_packet(Some(64 << 20))
        .wait_timeout(Some(28_800))
        // Every prepared statement stays prepared: a cache smaller than the
        // statement list would close and re-prepare statements mid-run.
        .stmt_cache_size(statements + 8)
        .into()
}

/// Opens one connection.
pub async fn connect(
    ep: &Endpoint,
    db: Option<&str>,
    statements: usize,
) -> Result<mysql_async::Conn, DbError> {
    match tokio::time::timeout(
        CONNECT_TIMEOUT,
        mysql_async::Conn::new(opts(ep, db, statements)),
    )
    .await
    {
        Ok(r) => r.map_err(|e| DbError::from_driver(e, true)),
        Err(_) => Err(DbError {
            code: client_errors::CONNECT,
            message: format!("no handshake within {CONNECT_TIMEOUT:?}"),
        }),
    }
}

/// One client connection to one shard with the workload's statements prepared.
pub struct Session {
    conn: mysql_async::Conn,
    stmts: Vec<mysql_async::Statement>,
}

/// Connects to `ep` and prepares every statement of `w`.
pub async fn open_session(ep: &Endpoint, w: &dyn Workload) -> Result<Session, DbError> {
    let specs = w.statements();
    let mut conn = connect(ep, w.database(), specs.len()).await?;
    let mut stmts = Vec::with_capacity(specs.len());
    for s in specs {
        let st = conn
            .prep(s.sql.as_str())
            .await
            .map_err(|e| DbError::from_driver(e, false))?;
        stmts.push(st);
    }
    Ok(Session { conn, stmts })
}

fn params(p: &[Param]) -> mysql_async::Params {
    if p.is_empty() {
        return mysql_async::Params::Empty;
    }
    mysql_async::Params::Positional(
        p.iter()
            .map(|v| match v {
                Param::Int(i) => mysql_async::Value::Int(*i),
                Param::Str(s) => mysql_async::Value::Bytes(s.clone().into_bytes()),
            })
            .collect(),
    )
}

/// Runs one SQL text statement (prepare phase, cleanup, checks).
pub async fn exec_text(conn: &mut mysql_async::Conn, sql: &str) -> Result<(), DbError> {
    conn.query_drop(sql)
        .await
        .map_err(|e| DbError::from_driver(e, false))
}

/// `SELECT VERSION()`.
pub async fn server_version(ep: &Endpoint) -> Result<String, DbError> {
    let mut c = connect(ep, None, 0).await?;
    let v: Option<String> = c
        .query_first("SELECT VERSION()")
        .await
        .map_err(|e| DbError::from_driver(e, false))?;
    let _ = c.disconnect().await;
    Ok(v.unwrap_or_default())
}

/// Connections held open and idle during a step (the connection sweep).
#[derive(Default)]
pub struct IdlePool {
    conns: Vec<mysql_async::Conn>,
}

impl IdlePool {
    /// Open connections.
    pub fn len(&self) -> usize {
        self.conns.len()
    }

    /// Whether none is open.
    pub fn is_empty(&self) -> bool {
        self.conns.is_empty()
    }

    /// Opens or closes connections until `n` are open, spread round-robin over
    /// `endpoints`.
    pub async fn resize(&mut self, n: usize, endpoints: &[Endpoint]) -> Result<(), DbError> {
        while self.conns.len() > n {
            if let Some(c) = self.conns.pop() {
                let _ = c.disconnect().await;
            }
        }
        let mut set = JoinSet::new();
        let mut next = self.conns.len();
        let mut failure = None;
        while self.conns.len() < n && failure.is_none() {
            while next < n && set.len() < CONNECT_PARALLELISM {
                let ep = endpoints[next % endpoints.len()].clone();
                set.spawn(async move { connect(&ep, None, 0).await });
                next += 1;
            }
            match set.join_next().await {
                Some(Ok(Ok(c))) => self.conns.push(c),
                Some(Ok(Err(e))) => failure = Some(e),
                Some(Err(e)) => {
                    failure = Some(DbError {
                        code: client_errors::UNKNOWN,
                        message: format!("connect task: {e}"),
                    })
                }
                None => break,
            }
        }
        // Keep the ones that made it; the caller reports the failure.
        while let Some(r) = set.join_next().await {
            if let Ok(Ok(c)) = r {
                self.conns.push(c);
            }
        }
        match failure {
            None => Ok(()),
            Some(e) => Err(DbError {
                code: e.code,
                message: format!(
                    "opening idle connection {} of {n}: {}",
                    self.conns.len() + 1,
                    e.message
                ),
            }),
        }
    }

    /// Closes every connection.
    pub async fn close(&mut self) {
        let _ = self.resize(0, &[]).await;
    }
}

/// What all clients of a step share.
struct Shared {
    stats: StepStats,
    stop: watch::Receiver<bool>,
    /// The first fatal error.
    failure: Mutex<Option<String>>,
    workload: Arc<dyn Workload>,
    classes: Vec<StmtClass>,
    endpoints: Vec<Endpoint>,
}

impl Shared {
    fn fail(&self, why: String) {
        let mut f = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        if f.is_none() {
            *f = Some(why);
        }
    }

    fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn stopped(&self) -> bool {
        *self.stop.borrow()
    }
}

/// Pacing of one client.
#[derive(Debug, Clone, Copy)]
struct Pacing {
    start: tokio::time::Instant,
    interval: Duration,
}

async fn exec_txn(
    s: &mut Session,
    txn: &Txn,
    classes: &[StmtClass],
    tally: &mut QueryTally,
) -> Result<(), DbError> {
    for op in &txn.ops {
        s.conn
            .exec_drop(&s.stmts[op.stmt], params(&op.params))
            .await
            .map_err(|e| DbError::from_driver(e, false))?;
        tally.add(classes[op.stmt]);
    }
    Ok(())
}

/// When the next transaction starts, for latency: now without pacing; under
/// paced load, after waiting for the `n`-th slot. `None` if the step stopped
/// while waiting.
async fn next_start(sh: &Shared, pacing: Option<Pacing>, n: &mut u32) -> Option<Instant> {
    let Some(p) = pacing else {
        return Some(Instant::now());
    };
    let at = p.start + p.interval * *n;
    *n = n.saturating_add(1);
    if tokio::time::Instant::now() < at {
        if !pace(sh, at).await {
            return None;
        }
        // On schedule: measured from the real start, so the timer's own
        // lateness (~1 ms granularity) is not counted.
        Some(Instant::now())
    } else {
        // Behind schedule because the server was slow: the wait counts (no
        // coordinated omission).
        Some(at.into_std())
    }
}

/// Waits until `at` or until the step stops; `false` if it stopped.
async fn pace(sh: &Shared, at: tokio::time::Instant) -> bool {
    let mut stop = sh.stop.clone();
    tokio::select! {
        _ = tokio::time::sleep_until(at) => !sh.stopped(),
        _ = stop.wait_for(|s| *s) => false,
    }
}

async fn client_persistent(
    id: u64,
    sh: Arc<Shared>,
    mut sessions: Vec<Session>,
    mut source: Box<dyn TxnSource>,
    pacing: Option<Pacing>,
) -> Vec<Session> {
    let mut txn = Txn::default();
    let mut n: u32 = 0;
    while !sh.stopped() {
        let Some(scheduled) = next_start(&sh, pacing, &mut n).await else {
            break;
        };
        txn.clear();
        source.next_txn(&mut txn);
        let Some(s) = sessions.get_mut(txn.shard) else {
            sh.fail(format!(
                "workload routed a transaction to shard {} of {}",
                txn.shard,
                sessions.len()
            ));
            break;
        };
        let mut tally = QueryTally::default();
        match exec_txn(s, &txn, &sh.classes, &mut tally).await {
            Ok(()) => sh
                .stats
                .record_txn(id, scheduled.elapsed().as_micros() as u64, tally),
            Err(e) if e.retryable() => {
                sh.stats.record_error(id, e.code, true, tally);
                if let Err(e2) = exec_text(&mut s.conn, "ROLLBACK").await {
                    sh.fail(format!(
                        "shard {} ({}): ROLLBACK after error {}: {e2}",
                        txn.shard, sh.endpoints[txn.shard], e.code
                    ));
                    break;
                }
            }
            Err(e) => {
                sh.stats.record_error(id, e.code, false, tally);
                sh.fail(format!(
                    "shard {} ({}): {e}",
                    txn.shard, sh.endpoints[txn.shard]
                ));
                break;
            }
        }
    }
    sessions
}

async fn client_per_transaction(
    id: u64,
    sh: Arc<Shared>,
    mut source: Box<dyn TxnSource>,
    pacing: Option<Pacing>,
) {
    let mut txn = Txn::default();
    let mut n: u32 = 0;
    let db = sh.workload.database().map(str::to_owned);
    while !sh.stopped() {
        let Some(scheduled) = next_start(&sh, pacing, &mut n).await else {
            break;
        };
        txn.clear();
        source.next_txn(&mut txn);
        let Some(ep) = sh.endpoints.get(txn.shard) else {
            sh.fail(format!(
                "workload routed a transaction to shard {}",
                txn.shard
            ));
            break;
        };
        let mut tally = QueryTally::default();
        let result = async {
            let mut c = connect(ep, db.as_deref(), 0).await?;
            for op in &txn.ops {
                let spec = &sh.workload.statements()[op.stmt];
                exec_text(&mut c, &spec.sql).await?;
                tally.add(spec.class);
            }
            c.disconnect()
                .await
                .map_err(|e| DbError::from_driver(e, false))
        }
        .await;
        match result {
            Ok(()) => sh
                .stats
                .record_txn(id, scheduled.elapsed().as_micros() as u64, tally),
            Err(e) if e.retryable() => sh.stats.record_error(id, e.code, true, tally),
            Err(e) => {
                sh.stats.record_error(id, e.code, false, tally);
                sh.fail(format!("shard {} ({ep}): {e}", txn.shard));
                break;
            }
        }
    }
}

/// One step to measure.
#[derive(Debug, Clone)]
pub struct StepSpec {
    /// Index in the plan.
    pub index: usize,
    /// Steps in the plan (for the progress line).
    pub of: usize,
    /// Round.
    pub round: u32,
    /// Active clients.
    pub threads: u32,
    /// Open connections in all (active clients' + idle), at least `threads`.
    pub connections: u32,
    /// CPUs the local servers are pinned to.
    pub cpus: Option<u32>,
    /// Paced load: transactions per second per client.
    pub rate_per_client: Option<f64>,
    /// Unmeasured warm-up.
    pub warmup: Duration,
    /// Measured window.
    pub duration: Duration,
    /// The seed for this step's clients.
    pub seed: u64,
}

impl StepSpec {
    /// `step 2 (threads 4, 1000 connections, 2 CPUs, round 1)` for messages.
    pub fn describe(&self) -> String {
        let mut s = format!("step {} (threads {}", self.index, self.threads);
        if self.connections > self.threads {
            s.push_str(&format!(", {} connections", self.connections));
        }
        if let Some(c) = self.cpus {
            s.push_str(&format!(", {c} CPUs"));
        }
        if let Some(r) = self.rate_per_client {
            s.push_str(&format!(", {r} txn/s per client"));
        }
        if self.round > 0 {
            s.push_str(&format!(", round {}", self.round));
        }
        s.push(')');
        s
    }
}

/// The live progress line on stderr: rewritten in place on a terminal, one
/// line per interval otherwise.
pub struct Progress {
    tty: bool,
    interval: Duration,
    /// A line is on the terminal without its newline yet.
    open_line: std::sync::atomic::AtomicBool,
}

impl Progress {
    /// Progress every `interval` (zero: none).
    pub fn new(interval: Duration) -> Progress {
        Progress {
            tty: std::io::stderr().is_terminal(),
            interval,
            open_line: std::sync::atomic::AtomicBool::new(false),
        }
    }

    fn line(&self, text: &str) {
        let mut e = std::io::stderr().lock();
        if self.tty {
            let _ = write!(e, "\r\x1b[2K{text}");
            self.open_line
                .store(true, std::sync::atomic::Ordering::Relaxed);
        } else {
            let _ = writeln!(e, "{text}");
        }
        let _ = e.flush();
    }

    fn done(&self) {
        if self
            .open_line
            .swap(false, std::sync::atomic::Ordering::Relaxed)
        {
            let mut e = std::io::stderr().lock();
            let _ = writeln!(e);
        }
    }
}

/// Samples of everything the step measures, taken together.
struct Samples {
    at: Instant,
    servers: Vec<ProcessSample>,
    client: Option<ProcessSample>,
    machine: Option<MachineSample>,
}

fn take_samples(pids: &[u32]) -> Result<Samples, String> {
    let servers = pids
        .iter()
        .map(|p| sample::sample_process(&p.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Samples {
        at: Instant::now(),
        servers,
        client: sample::sample_process("self").ok(),
        machine: sample::sample_machine().ok(),
    })
}

/// Where a step runs.
pub struct StepTarget<'a> {
    /// `A` or `B`.
    pub label: &'a str,
    /// The target.
    pub target: &'a mut dyn Target,
}

impl StepTarget<'_> {
    fn context(&self, step: &StepSpec) -> String {
        format!(
            "target {} ({}), {}",
            self.label,
            self.target.name(),
            step.describe()
        )
    }
}

/// Runs one step against a target and measures it. Never panics on server
/// misbehaviour: failures come back as a [`StepResult`] with status `failed`.
pub async fn run_step(
    t: StepTarget<'_>,
    w: &Arc<dyn Workload>,
    step: &StepSpec,
    idle: &mut IdlePool,
    progress: &Progress,
) -> StepResult {
    let endpoints = t.target.endpoints();
    let pids = t.target.processes();
    let mut result = empty_result(t.label, step);
    let fail = |mut r: StepResult, t: &mut dyn Target, ctx: String, why: String| {
        // A crashed server explains a lost connection better than the client.
        let why = match t.check() {
            Some(crash) => {
                // The process is gone: its last samples are not a measurement.
                r.server = None;
                format!("{why}\n{crash}")
            }
            None => why,
        };
        r.status = Status::Failed;
        r.error = Some(format!("{ctx}: {why}"));
        r
    };
    let ctx = t.context(step);

    // 1. Idle connections.
    let idle_n = step.connections.saturating_sub(step.threads) as usize;
    if let Err(e) = idle.resize(idle_n, &endpoints).await {
        return fail(result, t.target, ctx, e.to_string());
    }

    // 2. Clients' connections and statements.
    let mode = w.connection_mode();
    let mut client_sessions = Vec::new();
    if mode == ConnectionMode::Persistent {
        let mut set = JoinSet::new();
        for c in 0..step.threads {
            let eps = endpoints.clone();
            let w = Arc::clone(w);
            set.spawn(async move {
                let mut v = Vec::with_capacity(eps.len());
                for (i, ep) in eps.iter().enumerate() {
                    match open_session(ep, w.as_ref()).await {
                        Ok(s) => v.push(s),
                        Err(e) => return Err(format!("client {c}, shard {i} ({ep}): {e}")),
                    }
                }
                Ok((c, v))
            });
        }
        let mut first_err = None;
        while let Some(r) = set.join_next().await {
            match r {
                Ok(Ok(x)) => client_sessions.push(x),
                Ok(Err(e)) => {
                    first_err.get_or_insert(e);
                }
                Err(e) => {
                    first_err.get_or_insert(format!("connect task: {e}"));
                }
            }
        }
        if let Some(e) = first_err {
            return fail(result, t.target, ctx, e);
        }
        client_sessions.sort_by_key(|(c, _)| *c);
    }

    // 3. Start.
    let (stop_tx, stop_rx) = watch::channel(false);
    let shared = Arc::new(Shared {
        stats: StepStats::new(),
        stop: stop_rx,
        failure: Mutex::new(None),
        workload: Arc::clone(w),
        classes: w.statements().iter().map(|s| s.class).collect(),
        endpoints: endpoints.clone(),
    });
    let shards = endpoints.len();
    let start = tokio::time::Instant::now();
    let pacing_for = |c: u32| {
        step.rate_per_client.filter(|r| *r > 0.0).map(|rate| {
            let interval = Duration::from_secs_f64(1.0 / rate);
            // Clients start spread over one interval so they do not arrive in
            // lock step.
            let phase = interval.mul_f64(f64::from(c) / f64::from(step.threads.max(1)));
            Pacing {
                start: start + phase,
                interval,
            }
        })
    };
    let mut tasks: JoinSet<Vec<Session>> = JoinSet::new();
    match mode {
        ConnectionMode::Persistent => {
            for (c, sessions) in client_sessions {
                let source = w.client(u64::from(c), step.seed, shards);
                tasks.spawn(client_persistent(
                    u64::from(c),
                    Arc::clone(&shared),
                    sessions,
                    source,
                    pacing_for(c),
                ));
            }
        }
        ConnectionMode::PerTransaction => {
            for c in 0..step.threads {
                let source = w.client(u64::from(c), step.seed, shards);
                let sh = Arc::clone(&shared);
                let p = pacing_for(c);
                tasks.spawn(async move {
                    client_per_transaction(u64::from(c), sh, source, p).await;
                    Vec::new()
                });
            }
        }
    }

    // 4. Warm-up, then the measured window.
    let mut failure = wait(
        &shared,
        &mut *t.target,
        step.warmup,
        None,
        progress,
        t.label,
        step,
    )
    .await;
    let mut before = None;
    if failure.is_none() {
        shared.stats.reset_window();
        // The first progress interval starts with the window, not in the warm-up.
        let _ = shared.stats.take_interval();
        match take_samples(&pids) {
            Ok(s) => before = Some(s),
            Err(e) => failure = Some(format!("sampling the server: {e}")),
        }
    }
    if failure.is_none() {
        failure = wait(
            &shared,
            &mut *t.target,
            step.duration,
            Some(Instant::now()),
            progress,
            t.label,
            step,
        )
        .await;
    }
    progress.done();

    // 5. The end of the window.
    let after = take_samples(&pids);
    let totals = shared.stats.totals();
    let _ = stop_tx.send(true);
    let mut sessions = Vec::new();
    let drain = async {
        while let Some(r) = tasks.join_next().await {
            if let Ok(v) = r {
                sessions.extend(v);
            }
        }
    };
    if tokio::time::timeout(Duration::from_secs(90), drain)
        .await
        .is_err()
    {
        tasks.abort_all();
        failure.get_or_insert_with(|| {
            "clients did not finish their last transaction within 90 s".into()
        });
    }
    // Close client connections politely (COM_QUIT), off the measured window.
    for s in sessions {
        let _ = s.conn.disconnect().await;
    }

    let elapsed = before.as_ref().map_or(0.0, |b| {
        after
            .as_ref()
            .map_or(b.at.elapsed(), |a| a.at - b.at)
            .as_secs_f64()
    });
    fill_measures(
        &mut result,
        &totals,
        elapsed,
        before.as_ref(),
        after.as_ref().ok(),
    );
    if let (Some(_), Err(e)) = (&before, &after) {
        failure.get_or_insert_with(|| format!("sampling the server: {e}"));
    }
    match failure {
        None => result,
        Some(why) => fail(result, t.target, ctx, why),
    }
}

/// Waits `d` while printing progress; returns the first failure (a client's
/// fatal error, or a server process that exited).
async fn wait(
    sh: &Shared,
    target: &mut dyn Target,
    d: Duration,
    window_start: Option<Instant>,
    progress: &Progress,
    label: &str,
    step: &StepSpec,
) -> Option<String> {
    let begin = Instant::now();
    let end = begin + d;
    let mut last_report = begin;
    loop {
        if let Some(f) = sh.failure() {
            return Some(f);
        }
        if let Some(crash) = target.check() {
            return Some(crash);
        }
        if INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed) {
            return Some("interrupted (SIGINT)".into());
        }
        let now = Instant::now();
        if now >= end {
            return None;
        }
        if !progress.interval.is_zero() && now - last_report >= progress.interval {
            let iv = sh.stats.take_interval();
            let secs = (now - last_report).as_secs_f64();
            last_report = now;
            let phase = match window_start {
                Some(ws) => format!("{:>4.0}s", (now - ws).as_secs_f64()),
                None => "warm".into(),
            };
            progress.line(&format!(
                "[{phase}] {label} step {}/{} thr {:>4}: {:>9.1} txn/s {:>10.1} q/s  p95 {:>8.2} ms  err {:>6.1}/s",
                step.index + 1,
                step.of,
                step.threads,
                iv.txns as f64 / secs,
                iv.queries as f64 / secs,
                iv.p95_ms,
                iv.errors as f64 / secs,
            ));
        }
        tokio::time::sleep((end - now).min(Duration::from_millis(100))).await;
    }
}

fn empty_result(label: &str, step: &StepSpec) -> StepResult {
    StepResult {
        step: step.index,
        round: step.round,
        target: label.to_owned(),
        threads: step.threads,
        connections: step.connections.max(step.threads),
        cpus: step.cpus,
        rate_per_client: step.rate_per_client,
        status: Status::Ok,
        error: None,
        elapsed_s: 0.0,
        transactions: 0,
        queries: Default::default(),
        txn_per_s: 0.0,
        queries_per_s: 0.0,
        latency_ms: Default::default(),
        errors: Default::default(),
        retries: 0,
        relative_throughput: 0.0,
        server: None,
        client: ClientCost::default(),
        machine: MachineDelta::default(),
    }
}

fn fill_measures(
    r: &mut StepResult,
    t: &crate::stats::Totals,
    elapsed: f64,
    before: Option<&Samples>,
    after: Option<&Samples>,
) {
    r.elapsed_s = elapsed;
    r.transactions = t.txns;
    r.queries = t.queries;
    r.errors = t.errors.clone();
    r.retries = t.retries;
    r.latency_ms = t.latency;
    if elapsed > 0.0 {
        r.txn_per_s = t.txns as f64 / elapsed;
        r.queries_per_s = t.queries.total as f64 / elapsed;
    }
    let (Some(b), Some(a)) = (before, after) else {
        return;
    };
    let hz = sample::ticks_per_second();
    let n = t.txns;
    if !b.servers.is_empty() && b.servers.len() == a.servers.len() {
        let d = b
            .servers
            .iter()
            .zip(&a.servers)
            .map(|(x, y)| ProcessDelta::between(x, y, hz))
            .fold(ProcessDelta::default(), ProcessDelta::plus);
        r.server = Some(ServerCost {
            processes: a.servers.len(),
            totals: d,
            user_us_per_txn: per(d.user_s * 1e6, n),
            sys_us_per_txn: per(d.sys_s * 1e6, n),
            cpu_us_per_query: per((d.user_s + d.sys_s) * 1e6, t.queries.total),
            voluntary_cs_per_txn: per(d.voluntary_cs as f64, n),
            involuntary_cs_per_txn: per(d.involuntary_cs as f64, n),
            syscr_per_txn: per(d.syscr as f64, n),
            syscw_per_txn: per(d.syscw as f64, n),
            rss_bytes: a.servers.iter().map(|s| s.status.rss_bytes).sum(),
            io_readable: a.servers.iter().all(|s| s.io_readable),
        });
    }
    if let (Some(x), Some(y)) = (&b.client, &a.client) {
        let d = ProcessDelta::between(x, y, hz);
        r.client = ClientCost {
            user_s: d.user_s,
            sys_s: d.sys_s,
            cpu_us_per_txn: per((d.user_s + d.sys_s) * 1e6, n),
        };
    }
    if let (Some(x), Some(y)) = (&b.machine, &a.machine) {
        r.machine = MachineDelta::between(x, y);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_explain_common_faults() {
        let e = DbError {
            code: 1045,
            message: "Access denied for user 'root'@'127.0.0.1'".into(),
        };
        assert!(e.to_string().contains("wrong user name or password"));
        assert!(!e.retryable());
        let e = DbError {
            code: 1146,
            message: "Table 'sbtest.sbtest1' doesn't exist".into(),
        };
        assert!(e.to_string().contains("missing schema"));
        assert!(DbError {
            code: 1213,
            message: String::new()
        }
        .retryable());
    }

    #[test]
    fn step_descriptions() {
        let s = StepSpec {
            index: 2,
            of: 5,
            round: 1,
            threads: 4,
            connections: 1000,
            cpus: Some(2),
            rate_per_client: None,
            warmup: Duration::ZERO,
            duration: Duration::ZERO,
            seed: 0,
        };
        assert_eq!(
            s.describe(),
            "step 2 (threads 4, 1000 connections, 2 CPUs, round 1)"
        );
    }
}
