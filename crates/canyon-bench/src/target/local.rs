//! Servers this process starts: Canyon (the default target) and MariaDB (for
//! comparison), each shard its own process on a temporary directory and a
//! loopback port, optionally pinned with `taskset -c`: every shard to CPUs
//! `0..k` (the CPU sweep), or shard `i` to its own CPUs `i·k..(i+1)·k`
//! (`--cpus-per-shard`, so that N instances on N·k CPUs compare with one on k).
//!
//! Pinning with `taskset` at exec (rather than sched_setaffinity on a running
//! server) matters: the server then sizes itself to the CPUs it may use — Canyon
//! takes its worker count from `available_parallelism()`, which honours the
//! affinity mask — just as a machine with CPUs switched off would make it.

use super::{Endpoint, Target};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// Settings for local servers.
#[derive(Debug, Clone)]
pub struct LocalOptions {
    /// Extra arguments for `canyon serve` (e.g. `--in-memory`, `--config F`).
    pub canyon_args: Vec<String>,
    /// Extra arguments for `mariadbd` (e.g. `--thread-handling=pool-of-threads`);
    /// they come last, so they override the defaults.
    pub mariadb_args: Vec<String>,
    /// Connections the servers must accept (the connection sweep's largest
    /// step plus the clients' own).
    pub max_connections: u32,
    /// The root password the servers are given.
    pub password: String,
    /// How long a server may take to become ready.
    pub start_timeout: Duration,
    /// Pin shard `i` to CPUs `i·k .. (i+1)·k - 1` (unless a CPU-sweep step
    /// pins every shard to `0..k`).
    pub cpus_per_shard: Option<u32>,
    /// Clients connect over each server's Unix-domain socket, not loopback TCP.
    pub unix_socket: bool,
}

impl Default for LocalOptions {
    fn default() -> Self {
        LocalOptions {
            canyon_args: Vec::new(),
            mariadb_args: Vec::new(),
            max_connections: 1000,
            password: String::new(),
            start_timeout: Duration::from_secs(120),
            cpus_per_shard: None,
            unix_socket: false,
        }
    }
}

/// Lines of server output kept for error messages.
const LOG_LINES: usize = 20;

/// Where `name` is installed: PATH, then the sbin directories (Debian puts
/// mariadbd in /usr/sbin).
pub fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/sbin")])
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The CPUs shard `shard` is pinned to, as `taskset -c` writes them: a CPU
/// sweep's step (`cpus`, every shard on `0..k`) wins over the per-shard
/// placement; `None` leaves the server to the scheduler.
pub fn cpu_list(cpus: Option<u32>, shard: usize, per_shard: Option<u32>) -> Option<String> {
    let (first, k) = match (cpus, per_shard) {
        (Some(k), _) => (0, k),
        (None, Some(k)) => (shard as u32 * k, k),
        (None, None) => return None,
    };
    Some(format!("{first}-{}", first + k.max(1) - 1))
}

/// `program`, run under `taskset -c LIST` when pinned.
fn command(program: &Path, cpus: Option<String>) -> Result<Command, String> {
    match cpus {
        None => Ok(Command::new(program)),
        Some(list) => {
            let taskset = find_program("taskset")
                .ok_or("taskset (util-linux) is needed to pin a server to CPUs")?;
            let mut c = Command::new(taskset);
            c.arg("-c").arg(list).arg(program);
            Ok(c)
        }
    }
}

/// Whether this process runs as root (mariadbd then needs `--user=root`).
fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|v| v.split_whitespace().nth(1).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

/// A free loopback port a moment ago (the server may lose a race for it; the
/// caller retries then).
fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
    l.local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("local_addr: {e}"))
}

/// One server process with its output drained into a bounded log.
struct Proc {
    child: Child,
    log: Arc<Mutex<VecDeque<String>>>,
    /// Lines matching the ready marker, sent by the drain threads.
    ready: mpsc::Receiver<String>,
}

impl Proc {
    /// Spawns `cmd`; lines of stdout/stderr containing `marker` are forwarded
    /// to [`Proc::ready`].
    fn spawn(mut cmd: Command, marker: &'static str) -> Result<Proc, String> {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))?;
        let log = Arc::new(Mutex::new(VecDeque::new()));
        let (tx, rx) = mpsc::channel();
        let streams: [Option<Box<dyn Read + Send>>; 2] = [
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
        ];
        for stream in streams.into_iter().flatten() {
            let log = Arc::clone(&log);
            let tx = tx.clone();
            // Drains the pipe for the life of the process so the server never
            // blocks writing its log.
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines() {
                    let Ok(line) = line else { break };
                    if line.contains(marker) {
                        let _ = tx.send(line.clone());
                    }
                    let mut log = log.lock().unwrap_or_else(|p| p.into_inner());
                    if log.len() >= LOG_LINES {
                        log.pop_front();
                    }
                    log.push_back(line);
                }
            });
        }
        Ok(Proc {
            child,
            log,
            ready: rx,
        })
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn log_tail(&self) -> String {
        let log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        log.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// `Some(status)` once the process has exited.
    fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(status.to_string()),
            Ok(None) => None,
            Err(e) => Some(format!("cannot wait for it: {e}")),
        }
    }

    /// SIGTERM, up to `grace` for a clean exit, then SIGKILL.
    fn terminate(&mut self, grace: Duration) {
        if self.exited().is_some() {
            return;
        }
        let pid = rustix::process::Pid::from_child(&self.child);
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if self.exited().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Canyon servers started by this process.
pub struct LocalCanyon {
    bin: PathBuf,
    dir: Option<tempfile::TempDir>,
    opts: LocalOptions,
    shards: Vec<(Proc, u16)>,
}

/// The fixed part of Canyon's ready line:
/// `canyon: ready for connections on ADDR:PORT`.
const CANYON_READY: &str = "ready for connections on";

impl LocalCanyon {
    /// Starts `shards` Canyon servers from `bin` (default: this executable).
    pub fn start(
        bin: Option<PathBuf>,
        shards: usize,
        opts: &LocalOptions,
    ) -> Result<LocalCanyon, String> {
        let bin = match bin {
            Some(b) => b,
            None => std::env::current_exe()
                .map_err(|e| format!("cannot find the canyon executable: {e}"))?,
        };
        if !bin.is_file() {
            return Err(format!("canyon binary {} not found", bin.display()));
        }
        let dir = tempfile::Builder::new()
            .prefix("canyon-bench-")
            .tempdir()
            .map_err(|e| format!("creating a temporary directory: {e}"))?;
        let mut me = LocalCanyon {
            bin,
            dir: Some(dir),
            opts: opts.clone(),
            shards: Vec::new(),
        };
        for i in 0..shards.max(1) {
            let p = me.spawn(i, None)?;
            me.shards.push(p);
        }
        Ok(me)
    }

    fn data_dir(&self, shard: usize) -> PathBuf {
        self.dir
            .as_ref()
            .map(|d| d.path().join(format!("shard{shard}")))
            .unwrap_or_default()
    }

    /// Shard `shard`'s Unix socket (short: socket paths are limited to 107
    /// bytes).
    fn socket(&self, shard: usize) -> PathBuf {
        self.dir
            .as_ref()
            .map(|d| d.path().join(format!("s{shard}.sock")))
            .unwrap_or_default()
    }

    fn spawn(&self, shard: usize, cpus: Option<u32>) -> Result<(Proc, u16), String> {
        let mut cmd = command(&self.bin, cpu_list(cpus, shard, self.opts.cpus_per_shard))?;
        cmd.arg("serve")
            .arg("--data-dir")
            .arg(self.data_dir(shard))
            .arg("--port")
            .arg("0")
            .arg("--bind")
            .arg("127.0.0.1")
            .args(&self.opts.canyon_args)
            .env("CANYON_ROOT_PASSWORD", &self.opts.password)
            .env(
                "CANYON_SOCKET",
                if self.opts.unix_socket {
                    self.socket(shard).into_os_string()
                } else {
                    std::ffi::OsString::new()
                },
            )
            .env(
                "CANYON_MAX_CONNECTIONS",
                self.opts.max_connections.to_string(),
            );
        let mut p = Proc::spawn(cmd, CANYON_READY)?;
        let deadline = Instant::now() + self.opts.start_timeout;
        loop {
            match p.ready.recv_timeout(Duration::from_millis(100)) {
                Ok(line) => {
                    let port = line
                        .rsplit(':')
                        .next()
                        .and_then(|s| s.trim().parse::<u16>().ok())
                        .filter(|&p| p != 0)
                        .ok_or_else(|| format!("no port in canyon's ready line {line:?}"))?;
                    return Ok((p, port));
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {}
            }
            if let Some(status) = p.exited() {
                // Let the drain threads catch the last lines.
                std::thread::sleep(Duration::from_millis(100));
                return Err(format!(
                    "canyon (shard {shard}) exited before it was ready ({status}):\n{}",
                    p.log_tail()
                ));
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "canyon (shard {shard}) printed no ready line within {:?}:\n{}",
                    self.opts.start_timeout,
                    p.log_tail()
                ));
            }
        }
    }
}

impl Target for LocalCanyon {
    fn name(&self) -> String {
        let extra = name_suffix(&self.opts);
        match self.shards.len() {
            1 => format!("canyon (local{extra})"),
            n => format!("canyon (local, {n} shards{extra})"),
        }
    }

    fn kind(&self) -> &'static str {
        "canyon-local"
    }

    fn endpoints(&self) -> Vec<Endpoint> {
        local_endpoints(&self.shards, &self.opts, |i| self.socket(i))
    }

    fn processes(&self) -> Vec<u32> {
        self.shards.iter().map(|(p, _)| p.pid()).collect()
    }

    fn restart(&mut self, cpus: Option<u32>) -> Result<(), String> {
        let n = self.shards.len();
        for (p, _) in &mut self.shards {
            p.terminate(Duration::from_secs(30));
        }
        self.shards.clear();
        for i in 0..n {
            let p = self.spawn(i, cpus)?;
            self.shards.push(p);
        }
        Ok(())
    }

    fn check(&mut self) -> Option<String> {
        check_shards("canyon", &mut self.shards)
    }

    fn stop(&mut self) {
        stop_shards(&mut self.shards, &mut self.dir, Duration::from_secs(10));
    }
}

impl Drop for LocalCanyon {
    fn drop(&mut self) {
        self.stop();
    }
}

/// MariaDB servers started by this process.
pub struct LocalMariadb {
    dir: Option<tempfile::TempDir>,
    opts: LocalOptions,
    mariadbd: PathBuf,
    shards: Vec<(Proc, u16)>,
}

/// mariadbd prints this (to its error log and stderr) when it accepts connections.
const MARIADB_READY: &str = "ready for connections";

impl LocalMariadb {
    /// Installs and starts `shards` MariaDB servers.
    pub fn start(shards: usize, opts: &LocalOptions) -> Result<LocalMariadb, String> {
        let mariadbd = find_program("mariadbd")
            .ok_or("mariadbd is not installed (Debian: apt-get install mariadb-server)")?;
        let install =
            find_program("mariadb-install-db").ok_or("mariadb-install-db is not installed")?;
        find_program("mariadb").ok_or("the mariadb client is not installed (mariadb-client)")?;
        let dir = tempfile::Builder::new()
            .prefix("canyon-bench-mariadb-")
            .tempdir()
            .map_err(|e| format!("creating a temporary directory: {e}"))?;
        let mut me = LocalMariadb {
            dir: Some(dir),
            opts: opts.clone(),
            mariadbd,
            shards: Vec::new(),
        };
        for i in 0..shards.max(1) {
            let base = me.shard_dir(i);
            std::fs::create_dir_all(&base).map_err(|e| format!("{}: {e}", base.display()))?;
            let mut cmd = Command::new(&install);
            cmd.arg("--no-defaults")
                .arg(format!("--datadir={}", base.join("data").display()))
                .arg("--auth-root-authentication-method=normal")
                .arg("--skip-test-db");
            if running_as_root() {
                cmd.arg("--user=root");
            }
            let out = cmd
                .output()
                .map_err(|e| format!("running mariadb-install-db: {e}"))?;
            if !out.status.success() {
                return Err(format!(
                    "mariadb-install-db failed ({}):\n{}{}",
                    out.status,
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            let p = me.spawn(i, None)?;
            me.shards.push(p);
            me.set_up_root(i)?;
        }
        Ok(me)
    }

    fn shard_dir(&self, shard: usize) -> PathBuf {
        self.dir
            .as_ref()
            .map(|d| d.path().join(format!("shard{shard}")))
            .unwrap_or_default()
    }

    fn socket(&self, shard: usize) -> PathBuf {
        self.shard_dir(shard).join("sock")
    }

    /// Runs `sql` as root over the Unix socket (where a fresh install lets root
    /// in without a password).
    fn socket_sql(&self, shard: usize, sql: &str) -> Result<(), String> {
        let cli = find_program("mariadb").ok_or("the mariadb client is not installed")?;
        let out = Command::new(cli)
            .arg("--no-defaults")
            .arg("-uroot")
            .arg(format!("--socket={}", self.socket(shard).display()))
            .arg("-e")
            .arg(sql)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("running mariadb: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
        }
    }

    /// Gives root@127.0.0.1 / ::1 the password and adds root@'%', as Canyon has.
    fn set_up_root(&self, shard: usize) -> Result<(), String> {
        let pw = self
            .opts
            .password
            .replace('\\', "\\\\")
            .replace('\'', "\\'");
        let sql = format!(
            "ALTER USER IF EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '{pw}';
             ALTER USER IF EXISTS 'root'@'::1' IDENTIFIED BY '{pw}';
             CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED BY '{pw}';
             GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;
             ALTER USER 'root'@'localhost' IDENTIFIED BY '{pw}';"
        );
        self.socket_sql(shard, &sql)
            .map_err(|e| format!("setting up root on mariadb shard {shard}: {e}"))
    }

    fn spawn(&self, shard: usize, cpus: Option<u32>) -> Result<(Proc, u16), String> {
        let base = self.shard_dir(shard);
        let max_conn = self.opts.max_connections.max(151);
        let mut last_err = String::new();
        for _attempt in 0..5 {
            let port = free_port()?;
            let _ = std::fs::remove_file(self.socket(shard));
            let mut cmd = command(
                &self.mariadbd,
                cpu_list(cpus, shard, self.opts.cpus_per_shard),
            )?;
            cmd.arg("--no-defaults")
                .arg(format!("--datadir={}", base.join("data").display()))
                .arg(format!("--port={port}"))
                .arg("--bind-address=127.0.0.1")
                .arg(format!("--socket={}", self.socket(shard).display()))
                .arg(format!("--pid-file={}", base.join("pid").display()))
                .arg("--skip-name-resolve")
                .arg("--character-set-server=utf8mb4")
                .arg("--collation-server=utf8mb4_general_ci")
                .arg("--innodb-buffer-pool-size=512M")
                .arg(format!("--max-connections={max_conn}"))
                .arg(format!(
                    "--open-files-limit={}",
                    u64::from(max_conn) * 2 + 1000
                ))
                .arg("--back-log=4096");
            if running_as_root() {
                cmd.arg("--user=root");
            }
            cmd.args(&self.opts.mariadb_args);
            let mut p = Proc::spawn(cmd, MARIADB_READY)?;
            let deadline = Instant::now() + self.opts.start_timeout;
            let outcome = loop {
                if p.ready.recv_timeout(Duration::from_millis(200)).is_ok() {
                    break Ok(());
                }
                if let Some(status) = p.exited() {
                    std::thread::sleep(Duration::from_millis(100));
                    break Err(format!(
                        "mariadbd (shard {shard}) exited ({status}):\n{}",
                        p.log_tail()
                    ));
                }
                if Instant::now() >= deadline {
                    break Err(format!(
                        "mariadbd (shard {shard}) was not ready within {:?}:\n{}",
                        self.opts.start_timeout,
                        p.log_tail()
                    ));
                }
            };
            match outcome {
                Ok(()) => return Ok((p, port)),
                Err(e) if e.contains("in use") => {
                    p.terminate(Duration::from_secs(5));
                    last_err = e;
                }
                Err(e) => return Err(e),
            }
        }
        Err(last_err)
    }
}

impl Target for LocalMariadb {
    fn name(&self) -> String {
        let pool = self
            .opts
            .mariadb_args
            .iter()
            .any(|a| a.contains("pool-of-threads"));
        let n = self.shards.len();
        let extra = name_suffix(&self.opts);
        match (n, pool) {
            (1, false) => format!("mariadb (local{extra})"),
            (1, true) => format!("mariadb (local, pool-of-threads{extra})"),
            (n, false) => format!("mariadb (local, {n} shards{extra})"),
            (n, true) => format!("mariadb (local, {n} shards, pool-of-threads{extra})"),
        }
    }

    fn kind(&self) -> &'static str {
        "mariadb-local"
    }

    fn endpoints(&self) -> Vec<Endpoint> {
        local_endpoints(&self.shards, &self.opts, |i| self.socket(i))
    }

    fn processes(&self) -> Vec<u32> {
        self.shards.iter().map(|(p, _)| p.pid()).collect()
    }

    fn restart(&mut self, cpus: Option<u32>) -> Result<(), String> {
        let n = self.shards.len();
        for (p, _) in &mut self.shards {
            p.terminate(Duration::from_secs(60));
        }
        self.shards.clear();
        for i in 0..n {
            let p = self.spawn(i, cpus)?;
            self.shards.push(p);
        }
        Ok(())
    }

    fn check(&mut self) -> Option<String> {
        check_shards("mariadbd", &mut self.shards)
    }

    fn stop(&mut self) {
        stop_shards(&mut self.shards, &mut self.dir, Duration::from_secs(30));
    }
}

impl Drop for LocalMariadb {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The endpoints of locally started shards: root on loopback.
/// What a local target's name says beyond its kind: pinning and transport.
fn name_suffix(opts: &LocalOptions) -> String {
    let mut s = opts
        .cpus_per_shard
        .map_or(String::new(), |k| format!(", {k} CPUs each"));
    if opts.unix_socket {
        s.push_str(", Unix socket");
    }
    s
}

fn local_endpoints(
    shards: &[(Proc, u16)],
    opts: &LocalOptions,
    socket: impl Fn(usize) -> PathBuf,
) -> Vec<Endpoint> {
    shards
        .iter()
        .enumerate()
        .map(|(i, (_, port))| Endpoint {
            host: "127.0.0.1".into(),
            port: *port,
            user: "root".into(),
            password: opts.password.clone(),
            socket: opts.unix_socket.then(|| socket(i)),
        })
        .collect()
}

/// The first shard process that has exited, described with its last output.
fn check_shards(what: &str, shards: &mut [(Proc, u16)]) -> Option<String> {
    for (i, (p, port)) in shards.iter_mut().enumerate() {
        if let Some(status) = p.exited() {
            // Let its last words reach the log before reading them.
            std::thread::sleep(Duration::from_millis(100));
            return Some(format!(
                "{what} shard {i} (127.0.0.1:{port}, pid {}) exited: {status}\n\
                 --- its last output ---\n{}",
                p.pid(),
                p.log_tail()
            ));
        }
    }
    None
}

/// Terminates every shard (SIGTERM, then SIGKILL after `grace`) and deletes
/// their data directory.
fn stop_shards(
    shards: &mut Vec<(Proc, u16)>,
    dir: &mut Option<tempfile::TempDir>,
    grace: Duration,
) {
    for (p, _) in shards.iter_mut() {
        p.terminate(grace);
    }
    shards.clear();
    if let Some(d) = dir.take() {
        let _ = d.close();
    }
}
