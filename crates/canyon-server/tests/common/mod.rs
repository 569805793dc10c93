//! Support shared by the server's integration tests.
//!
//! - [`Server`]: a real `canyon` process (the binary Cargo built for this crate) on a
//!   spare loopback port and a temporary data directory; SIGKILL and restart on the
//!   same data directory for crash tests; killed when dropped.
//! - [`Mariadb`]: a MariaDB 10.11 server on a temporary data directory, the
//!   reference for differential tests; killed when dropped.
//! - [`client`]: a minimal synchronous MySQL-protocol client written for the tests,
//!   able to send malformed packets on purpose.
//! - [`mariadb_cli`]: runs the real `mariadb` command-line client.
//!
//! Everything here talks to 127.0.0.1 only, and every wait is bounded.
//!
//! Each test file compiles this module on its own and uses part of it, so
//! `dead_code` is allowed here rather than in every file.
#![allow(dead_code)]

pub mod client;

use client::Client;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a server may take to print its ready line (RocksDB recovery included).
pub const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The ready line's fixed part: `canyon: ready for connections on ADDR:PORT`.
const READY_LINE: &str = "ready for connections on";

/// Lines of server output kept for failure messages.
const LOG_LINES: usize = 200;

/// What marks a server output line as a sign of a bug, whenever it was printed:
/// a panic (Rust's panic hook prints "thread '...' panicked at") or a stack
/// overflow (which aborts the process).
const ALARMS: [&str; 2] = ["panicked", "overflowed its stack"];

/// A port that was free on 127.0.0.1 a moment ago. Another process may take it
/// before the caller binds it; [`Server::start_with`] retries on a new port then.
pub fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0 to find a free port");
    l.local_addr()
        .expect("local_addr of a bound listener")
        .port()
}

/// A password for a new server's root account: random, so that tests cannot pass by
/// accident with an empty or well-known password.
fn random_password() -> String {
    use rand::Rng;
    let mut rng = rand::thread_rng();
    let tail: String = (0..16)
        .map(|_| {
            let c = rng.gen_range(0..36u8);
            (if c < 10 { b'0' + c } else { b'a' + c - 10 }) as char
        })
        .collect();
    format!("Pw-{tail}")
}

/// The `canyon` binary the tests start: `CANYON_TEST_BIN` where set, else
/// the one cargo built for this test. Worktrees that share one target
/// directory also share `target/release/canyon`, which the last build
/// replaces; a session copies its own binary away right after its build and
/// points this variable at the copy.
pub fn canyon_binary() -> PathBuf {
    std::env::var_os("CANYON_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_canyon")))
}

/// Options for a [`Server`].
#[derive(Debug, Clone, Default)]
pub struct ServerOptions {
    /// Start with `--in-memory` (no RocksDB; nothing survives a restart).
    pub in_memory: bool,
    /// `max_connections` in the generated config file.
    pub max_connections: Option<u32>,
    /// `max_allowed_packet` (bytes) in the generated config file.
    pub max_allowed_packet: Option<u64>,
    /// `lock_wait_timeout_secs` in the generated config file.
    pub lock_wait_timeout_secs: Option<u64>,
    /// More lines for the config file, as TOML.
    pub extra_toml: String,
    /// Environment variables for the server process (`TZ`, say).
    pub env: Vec<(String, String)>,
}

/// A running `canyon serve` process on 127.0.0.1 and a temporary data directory.
///
/// The data directory outlives [`Server::kill9`] and [`Server::restart`], which is
/// what crash tests need; it is deleted with the guard. Dropping the guard kills
/// the process.
pub struct Server {
    child: Option<Child>,
    dir: tempfile::TempDir,
    port: u16,
    password: String,
    options: ServerOptions,
    log: Arc<Mutex<Vec<String>>>,
    /// Every output line matching [`ALARMS`] since the first start (the log
    /// keeps only the last lines).
    alarms: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Starts a server with RocksDB storage and default settings.
    pub fn start() -> Server {
        Server::start_with(ServerOptions::default())
    }

    /// Starts a server with `options`; panics (with the server's output) if it does
    /// not print its ready line within [`START_TIMEOUT`].
    pub fn start_with(options: ServerOptions) -> Server {
        let dir = tempfile::Builder::new()
            .prefix("canyon-test-")
            .tempdir()
            .expect("create a temporary directory");
        let mut server = Server {
            child: None,
            dir,
            port: 0,
            password: random_password(),
            options,
            log: Arc::new(Mutex::new(Vec::new())),
            alarms: Arc::new(Mutex::new(Vec::new())),
        };
        server.write_config();
        // Port 0: the server picks a free port and names it in its ready line, so
        // parallel tests cannot race for one. Restarts reuse that port.
        if let Err(e) = server.spawn() {
            panic!("canyon did not start:\n{e}");
        }
        server
    }

    /// The TCP port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The root password given in CANYON_ROOT_PASSWORD at first start.
    pub fn password(&self) -> &str {
        &self.password
    }

    /// The data directory (`--data-dir`).
    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The process id, or `None` after [`Server::kill9`].
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// A new connection as root; panics if it cannot connect.
    pub fn client(&self) -> Client {
        Client::connect(self.port, "root", &self.password).unwrap_or_else(|e| {
            panic!(
                "connect as root to canyon on port {}: {e}\n{}",
                self.port,
                self.log_tail()
            )
        })
    }

    /// Whether the process is still alive (it has not exited or crashed).
    pub fn is_running(&mut self) -> bool {
        match self.child.as_mut() {
            None => false,
            Some(c) => matches!(c.try_wait(), Ok(None)),
        }
    }

    /// Asserts that the process has not exited (e.g. crashed on bad input).
    pub fn assert_running(&mut self) {
        if let Some(c) = self.child.as_mut() {
            if let Ok(Some(status)) = c.try_wait() {
                panic!(
                    "canyon exited with {status} while the test expected it running\n{}",
                    self.log_tail()
                );
            }
        } else {
            panic!("canyon is not started");
        }
    }

    /// SIGKILLs the process and reaps it; the data directory stays.
    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            // Child::kill sends SIGKILL on Unix.
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Sets (`Some`) or removes (`None`) an environment variable of the
    /// server process, from its next start on.
    pub fn set_env(&mut self, key: &str, value: Option<&str>) {
        self.options.env.retain(|(k, _)| k != key);
        if let Some(v) = value {
            self.options.env.push((key.to_string(), v.to_string()));
        }
    }

    /// Kills the process if it is running and starts it again on the same data
    /// directory and port.
    pub fn restart(&mut self) {
        self.kill9();
        // The old listening socket is gone with the process; a restart can still
        // race a TIME_WAIT or a slow kernel release, so retry briefly.
        let mut last = String::new();
        for _ in 0..10 {
            match self.spawn() {
                Ok(()) => return,
                Err(e) => last = e,
            }
            if !last.contains("in use") {
                break;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        panic!("canyon did not restart:\n{last}");
    }

    /// Every line the server has printed (since its first start, restarts
    /// included) that reports a panic or a stack overflow.
    pub fn alarms(&self) -> Vec<String> {
        self.alarms.lock().expect("server alarms lock").clone()
    }

    /// The last lines the server printed, for failure messages.
    pub fn log_tail(&self) -> String {
        let log = self.log.lock().expect("server log lock");
        format!("--- last canyon output ---\n{}", log.join("\n"))
    }

    fn config_path(&self) -> PathBuf {
        self.dir.path().join("canyon.toml")
    }

    fn write_config(&self) {
        let mut toml = String::new();
        if let Some(n) = self.options.max_connections {
            toml.push_str(&format!("max_connections = {n}\n"));
        }
        if let Some(n) = self.options.max_allowed_packet {
            toml.push_str(&format!("max_allowed_packet = {n}\n"));
        }
        if let Some(n) = self.options.lock_wait_timeout_secs {
            toml.push_str(&format!("lock_wait_timeout_secs = {n}\n"));
        }
        toml.push_str(&self.options.extra_toml);
        if !toml.is_empty() {
            std::fs::write(self.config_path(), toml).expect("write the test config file");
        }
    }

    /// Spawns the process and waits for the ready line. On failure returns the
    /// reason with the process's output.
    fn spawn(&mut self) -> Result<(), String> {
        let mut cmd = Command::new(canyon_binary());
        cmd.arg("serve")
            .arg("--data-dir")
            .arg(self.data_dir())
            .arg("--port")
            .arg(self.port.to_string())
            .arg("--bind")
            .arg("127.0.0.1");
        if self.config_path().exists() {
            cmd.arg("--config").arg(self.config_path());
        }
        if self.options.in_memory {
            cmd.arg("--in-memory");
        }
        for (k, v) in &self.options.env {
            cmd.env(k, v);
        }
        cmd.env("CANYON_ROOT_PASSWORD", &self.password)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("spawn {}: {e}", canyon_binary().display()))?;

        let (tx, rx) = mpsc::channel::<Option<String>>();
        let pid = child.id();
        let out = child.stdout.take().expect("piped stdout");
        let err = child.stderr.take().expect("piped stderr");
        for stream in [
            Box::new(out) as Box<dyn Read + Send>,
            Box::new(err) as Box<dyn Read + Send>,
        ] {
            let tx = tx.clone();
            let log = Arc::clone(&self.log);
            let alarms = Arc::clone(&self.alarms);
            // Drains the pipe for the life of the process, so the server never
            // blocks on a full pipe; sends the ready line, and `None` at EOF.
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines() {
                    let Ok(line) = line else { break };
                    if line.contains(READY_LINE) {
                        let _ = tx.send(Some(line.clone()));
                    }
                    eprintln!("[canyon pid {pid}] {line}");
                    if ALARMS.iter().any(|a| line.contains(a)) {
                        alarms
                            .lock()
                            .expect("server alarms lock")
                            .push(line.clone());
                    }
                    let mut log = log.lock().expect("server log lock");
                    if log.len() >= LOG_LINES {
                        log.remove(0);
                    }
                    log.push(line);
                }
                let _ = tx.send(None);
            });
        }
        drop(tx);

        let deadline = Instant::now() + START_TIMEOUT;
        let mut eofs = 0;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(Some(line)) => {
                    // "canyon: ready for connections on 127.0.0.1:PORT"
                    let port = line
                        .rsplit(':')
                        .next()
                        .and_then(|p| p.trim().parse::<u16>().ok())
                        .filter(|&p| p != 0);
                    let Some(port) = port else {
                        let _ = child.kill();
                        let _ = child.wait();
                        return Err(format!("no port in the ready line: {line}"));
                    };
                    if self.port != 0 && port != self.port {
                        let _ = child.kill();
                        let _ = child.wait();
                        return Err(format!("asked for port {}, got: {line}", self.port));
                    }
                    self.port = port;
                    self.child = Some(child);
                    return Ok(());
                }
                Ok(None) => {
                    eofs += 1;
                    if eofs == 2 {
                        let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
                        return Err(format!(
                            "canyon exited ({status}) before it was ready\n{}",
                            self.log_tail()
                        ));
                    }
                }
                Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!(
                        "canyon printed no '{READY_LINE}' line within {START_TIMEOUT:?}\n{}",
                        self.log_tail()
                    ));
                }
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// Where `name` is installed: on PATH or in /usr/sbin (Debian puts mariadbd there).
pub fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/sbin")])
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Whether the test runs under CI (the CI environment sets `CI`), where a missing
/// tool is a failure rather than a skip.
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// Skips (returns `true`) when `program` is not installed, loudly; under CI a
/// missing program fails the test instead, so a green CI never hides a skip.
pub fn skip_without(program: &str) -> bool {
    if find_program(program).is_some() {
        return false;
    }
    let msg = format!(
        "{program} is not installed: run scripts/install-deps.sh (make deps). SKIPPING this test."
    );
    assert!(!in_ci(), "{msg} (not allowed under CI)");
    eprintln!("\n!!!!!!!! {msg} !!!!!!!!\n");
    true
}

/// Skips (returns `true`) loudly because `missing` (a tool, a driver) is not
/// installed; under CI that fails the test instead.
pub fn skip_missing(missing: &str) -> bool {
    let msg = format!(
        "{missing} is not installed: run scripts/install-deps.sh (make deps). SKIPPING this test."
    );
    assert!(!in_ci(), "{msg} (not allowed under CI)");
    eprintln!("\n!!!!!!!! {msg} !!!!!!!!\n");
    true
}

/// `~/.cache/canyon-tools`: where scripts/install-deps.sh puts clients that are
/// not Debian packages (go-tpc, the JDBC jars, node modules). Outside the clone,
/// so that nothing downloaded is ever committed.
pub fn tools_dir() -> PathBuf {
    PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/canyon-tools")
}

/// A MariaDB server on a temporary data directory and a spare loopback port,
/// started for differential tests. Root (`root`@`%` and the accounts
/// mariadb-install-db makes for 127.0.0.1) gets a random password, so tests log in
/// over TCP exactly as they do to Canyon. Killed when dropped.
pub struct Mariadb {
    child: Child,
    dir: tempfile::TempDir,
    port: u16,
    password: String,
}

impl Mariadb {
    /// Installs a fresh data directory and starts `mariadbd`; `None` (after a loud
    /// message) if MariaDB is not installed, a failure under CI.
    pub fn start() -> Option<Mariadb> {
        Mariadb::start_with(&[])
    }

    /// [`Mariadb::start`] with extra `mariadbd` options, e.g.
    /// `--max-connections=5`.
    pub fn start_with(extra: &[&str]) -> Option<Mariadb> {
        if skip_without("mariadbd") || skip_without("mariadb-install-db") {
            return None;
        }
        let dir = tempfile::Builder::new()
            .prefix("mariadb-ref-")
            .tempdir()
            .expect("create a temporary directory");
        let datadir = dir.path().join("data");
        let is_root = current_uid_is_root();

        // mariadb-install-db occasionally fails on this shared 2-core machine when
        // several tests bootstrap at once (seen in CI runs); a fresh directory and
        // another try has always succeeded, so try three times before failing.
        let mut attempts = 0;
        let out = loop {
            attempts += 1;
            let _ = std::fs::remove_dir_all(&datadir);
            let mut install =
                Command::new(find_program("mariadb-install-db").expect("checked above"));
            install
                .arg("--no-defaults")
                .arg(format!("--datadir={}", datadir.display()))
                .arg("--auth-root-authentication-method=normal")
                .arg("--skip-test-db");
            if is_root {
                install.arg("--user=root");
            }
            let out = install.output().expect("run mariadb-install-db");
            if out.status.success() || attempts == 3 {
                break out;
            }
            eprintln!(
                "mariadb-install-db failed (attempt {attempts}), retrying: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            std::thread::sleep(Duration::from_millis(500));
        };
        assert!(
            out.status.success(),
            "mariadb-install-db failed {attempts} times: {}\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );

        let socket = dir.path().join("sock");
        let tmpdir = dir.path().join("tmp");
        std::fs::create_dir_all(&tmpdir).expect("create mariadbd's tmpdir");
        for attempt in 0..5 {
            let port = free_port();
            let mut cmd = Command::new(find_program("mariadbd").expect("checked above"));
            cmd.arg("--no-defaults")
                .arg(format!("--datadir={}", datadir.display()))
                .arg(format!("--port={port}"))
                .arg("--bind-address=127.0.0.1")
                .arg(format!("--socket={}", socket.display()))
                .arg(format!("--pid-file={}", dir.path().join("pid").display()))
                .arg(format!(
                    "--log-error={}",
                    dir.path().join("error.log").display()
                ))
                .arg("--skip-name-resolve")
                // Its own directory for temporary tables and files: with the
                // default (/tmp) a CI run once failed a join of two
                // information_schema tables with MariaDB's error 6 (a temporary
                // table's file vanished), and nothing else on the machine should
                // be able to touch this server's scratch files.
                .arg(format!("--tmpdir={}", tmpdir.display()))
                // The server defaults Debian's packaged config would set; Canyon
                // speaks utf8mb4 too.
                .arg("--character-set-server=utf8mb4")
                .arg("--collation-server=utf8mb4_general_ci")
                .arg("--innodb-buffer-pool-size=64M")
                .arg("--innodb-log-file-size=16M")
                .args(extra)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            if is_root {
                cmd.arg("--user=root");
            }
            let mut child = cmd.spawn().expect("spawn mariadbd");
            let error_log = dir.path().join("error.log");
            match wait_mariadb_ready(&mut child, &socket, &error_log) {
                Ok(()) => {
                    let m = Mariadb {
                        child,
                        dir,
                        port,
                        password: random_password(),
                    };
                    m.set_up_root(&socket);
                    return Some(m);
                }
                Err(e) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    assert!(
                        attempt < 4 && e.contains("in use"),
                        "mariadbd did not start: {e}"
                    );
                }
            }
        }
        unreachable!("the loop returns or panics")
    }

    /// The TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// root's password.
    pub fn password(&self) -> &str {
        &self.password
    }

    /// A new connection as root over TCP; panics if it cannot connect.
    pub fn client(&self) -> Client {
        Client::connect(self.port, "root", &self.password)
            .unwrap_or_else(|e| panic!("connect as root to mariadb on port {}: {e}", self.port))
    }

    /// The server's error log (`--log-error`), for failure messages.
    pub fn error_log(&self) -> String {
        let log = std::fs::read_to_string(self.dir.path().join("error.log")).unwrap_or_default();
        format!("--- mariadbd error log ---\n{log}")
    }

    /// Gives root a password over the socket (where the fresh install lets root in
    /// without one) and adds `root`@`%`, as Canyon has.
    fn set_up_root(&self, socket: &Path) {
        let pw = &self.password;
        let sql = format!(
            "ALTER USER IF EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '{pw}';
             ALTER USER IF EXISTS 'root'@'::1' IDENTIFIED BY '{pw}';
             CREATE USER 'root'@'%' IDENTIFIED BY '{pw}';
             GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;"
        );
        let out = socket_sql(socket, &sql);
        assert!(
            out.status.success(),
            "setting up root on mariadb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Mariadb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits (bounded) until a starting mariadbd answers on its socket.
fn wait_mariadb_ready(child: &mut Child, socket: &Path, error_log: &Path) -> Result<(), String> {
    let log = || std::fs::read_to_string(error_log).unwrap_or_default();
    let deadline = Instant::now() + START_TIMEOUT;
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("mariadbd exited ({status}):\n{}", log()));
        }
        if socket.exists() && socket_sql(socket, "SELECT 1").status.success() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Err(format!(
        "mariadbd did not answer within {START_TIMEOUT:?}:\n{}",
        log()
    ))
}

/// Runs `sql` as root over a Unix socket with the `mariadb` CLI.
fn socket_sql(socket: &Path, sql: &str) -> std::process::Output {
    Command::new(find_program("mariadb").expect("the mariadb client is installed"))
        .arg("--no-defaults")
        .arg("-uroot")
        .arg(format!("--socket={}", socket.display()))
        .arg("-e")
        .arg(sql)
        .stdin(Stdio::null())
        .output()
        .expect("run mariadb")
}

fn current_uid_is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// What a child program printed.
#[derive(Debug)]
pub struct CliOutput {
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Exit status.
    pub status: ExitStatus,
}

/// How long one run of an external client (the CLI, sysbench) may take before
/// the test kills it and fails: a hung server must fail a test, not hang CI.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(300);

/// Runs `cmd` with `input` on its standard input, collecting both outputs;
/// kills it and panics (with what it printed so far) after `timeout`.
pub fn run_bounded(cmd: &mut Command, input: &str, timeout: Duration) -> CliOutput {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {:?}: {e}", cmd.get_program()));
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = input.to_owned();
    // Feeding stdin and draining the outputs on their own threads: a long script
    // must not dead-lock against output the child cannot write.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            String::from_utf8_lossy(&v).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let err = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait().expect("wait for a child process") {
            Some(status) => break status,
            None if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                let stdout = out.join().unwrap_or_default();
                let stderr = err.join().unwrap_or_default();
                panic!(
                    "{:?} did not finish within {timeout:?}; killed.\nstdout:\n{stdout}\nstderr:\n{stderr}",
                    cmd.get_program()
                );
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let _ = writer.join();
    CliOutput {
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        status,
    }
}

/// Runs the real `mariadb` client as root against 127.0.0.1:`port` over TCP in
/// batch mode (`--batch --raw -A`), with `sql` on standard input, and optionally a
/// database. Returns (stdout, stderr, status).
pub fn mariadb_cli(
    port: u16,
    password: &str,
    db: Option<&str>,
    sql: &str,
) -> (String, String, ExitStatus) {
    let o = mariadb_cli_args(port, password, db, sql, &[]);
    (o.stdout, o.stderr, o.status)
}

/// [`mariadb_cli`] with extra CLI arguments (e.g. `--force`, `-vv`); bounded by
/// [`CLIENT_TIMEOUT`].
pub fn mariadb_cli_args(
    port: u16,
    password: &str,
    db: Option<&str>,
    sql: &str,
    extra: &[&str],
) -> CliOutput {
    let mut cmd = Command::new(find_program("mariadb").expect("the mariadb client is installed"));
    cmd.arg("--no-defaults")
        .arg("--protocol=TCP")
        .arg("-h127.0.0.1")
        .arg(format!("-P{port}"))
        .arg("-uroot")
        .arg(format!("-p{password}"))
        .arg("--batch")
        .arg("--raw")
        .arg("-A")
        .arg("--connect-timeout=30")
        .args(extra);
    if let Some(db) = db {
        cmd.arg(db);
    }
    run_bounded(&mut cmd, sql, CLIENT_TIMEOUT)
}

/// A one-row status statement (SHOW REPLICA STATUS, SHOW SLAVE STATUS) as
/// (name, value) pairs, read through the mariadb client's vertical output
/// (the test client gives no column names). Empty when it has no row.
pub fn vertical_row(port: u16, password: &str, sql: &str) -> Vec<(String, String)> {
    mariadb_cli_args(port, password, None, sql, &["-E"])
        .stdout
        .lines()
        .filter_map(|l| {
            let (n, v) = l.split_once(": ")?;
            Some((n.trim().to_string(), v.trim().to_string()))
        })
        .collect()
}

/// The value of `name` in a [`vertical_row`] (empty when absent).
pub fn row_field(row: &[(String, String)], name: &str) -> String {
    row.iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.clone())
        .unwrap_or_default()
}

/// The first number after `label` in sysbench's report (e.g. `"ignored
/// errors:"`, `"transactions:"`); panics, with the report, when it is absent.
pub fn sysbench_stat<T: std::str::FromStr>(report: &str, label: &str) -> T {
    let line = report
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no '{label}' line in sysbench's report:\n{report}"));
    line[line.find(label).expect("found above") + label.len()..]
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("cannot read the number in '{line}'"))
}

/// The per-second figure in parentheses on sysbench's `label` line, e.g. the
/// tps in "transactions: 856 (42.63 per sec.)"; 0 when absent.
pub fn sysbench_per_sec(report: &str, label: &str) -> f64 {
    report
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .and_then(|l| l.split('(').nth(1))
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0.0)
}
