//! The server's configuration: one struct, defaults in one place
//! ([`Config::default`]), layered
//!
//! ```text
//!   defaults  ->  TOML file (--config FILE)  ->  environment (CANYON_*)  ->  flags
//!   (lowest)                                                                (highest)
//! ```
//!
//! Every field has the same name in the TOML file, and an environment variable
//! `CANYON_<FIELD IN UPPER CASE>` (e.g. `CANYON_PORT`, `CANYON_DATA_DIR`).
//! `canyon.example.toml` at the repository root documents every field.

use serde::Deserialize;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How COMMIT makes a transaction durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DurabilityMode {
    /// COMMIT returns only after the write-ahead log is synced to stable storage;
    /// commits waiting at the same time share one sync (group commit).
    /// Risk: none — an acknowledged commit survives a power loss.
    SyncEveryCommit,
    /// COMMIT returns after the log write; a background thread syncs every
    /// `sync_interval_ms`. Risk: a crash of the machine (power loss, kernel panic;
    /// not just of the process) loses up to `sync_interval_ms` of commits that
    /// clients were told had succeeded. Like InnoDB's
    /// `innodb_flush_log_at_trx_commit = 2`.
    SyncPeriodically,
}

impl DurabilityMode {
    fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "sync-every-commit" => Some(DurabilityMode::SyncEveryCommit),
            "sync-periodically" => Some(DurabilityMode::SyncPeriodically),
            _ => None,
        }
    }
}

/// Whose wording SHOW CREATE TABLE follows where MySQL 8 and MariaDB print
/// the same definition differently (`canyon_sql::Presentation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PresentationMode {
    /// MySQL 8.0's text (the default).
    Mysql,
    /// MariaDB 10.11's text (with integer display widths).
    Mariadb,
}

impl PresentationMode {
    fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "mysql" => Some(PresentationMode::Mysql),
            "mariadb" => Some(PresentationMode::Mariadb),
            _ => None,
        }
    }
}

/// Everything the `canyon` server can be told. See the module doc for layering.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Directory holding the database (`DATA_DIR/db`) and, on a first start with a
    /// generated password, `DATA_DIR/root-password`. Created if missing.
    pub data_dir: PathBuf,
    /// Address to listen on. `127.0.0.1` keeps the server private to this machine;
    /// `0.0.0.0` listens on every interface.
    pub bind: String,
    /// TCP port (MySQL's is 3306). 0 picks a free port; the "ready" line names it.
    pub port: u16,
    /// Connections served at once; one more gets ERR 1040 "Too many connections".
    /// Each idle connection costs one small async task, not a thread.
    pub max_connections: u32,
    /// Seconds the whole connection phase may take (MySQL's `connect_timeout`):
    /// from the accept to the OK of a successful login — the greeting, an
    /// optional TLS handshake and every packet of the authentication exchange.
    /// A client that has not logged in by then is disconnected without a word,
    /// however it spends the time (silent, or trickling a byte a second). 1 to
    /// 31536000 (MySQL's range); MySQL's default is 10.
    pub connect_timeout: u64,
    /// Connections that have not finished logging in, at once; one more is
    /// answered ERR 1040 "Too many connections" in place of the greeting and
    /// closed. MySQL has no such limit (sshd's `MaxStartups` is the model):
    /// without one, peers that never log in can hold every `max_connections`
    /// slot (each for `connect_timeout`) and lock every account out. 1024 sits
    /// well above the logins a real burst has in flight at once (a login is one
    /// round trip and a hash; 600 sysbench threads connecting together stay far
    /// below it) and bounds what unauthenticated peers cost to about 1024 sockets
    /// and 40 MiB of buffers. Counted from the accept until the login's OK
    /// packet, or until the connection closes.
    pub max_unauthenticated_connections: u32,
    /// The largest packet accepted from a client (MySQL's `max_allowed_packet`):
    /// a bigger one gets ERR 1153 and the connection is closed. 1 KiB to 1 GiB.
    pub max_allowed_packet: u64,
    /// Threads running connection tasks (the tokio runtime's workers). Defaults to
    /// the number of CPUs. A read that misses the block cache blocks its worker
    /// until the disk answers, so with data larger than memory this is also the
    /// most reads in flight: set it to what the device serves at once
    /// (docs/architecture/storage.md, "Reads that wait for the disk").
    pub worker_threads: usize,
    /// How COMMIT makes a transaction durable; see [`DurabilityMode`] for the risk.
    pub durability: DurabilityMode,
    /// With `durability = "sync-periodically"`: milliseconds between log syncs,
    /// i.e. the most acknowledged work a machine crash can lose.
    pub sync_interval_ms: u64,
    /// Seconds a statement waits for a row lock before ERR 1205 (MySQL's
    /// `innodb_lock_wait_timeout`).
    pub lock_wait_timeout_secs: u64,
    /// Bytes of RocksDB block cache (uncompressed data blocks in memory). The OS
    /// page cache holds compressed blocks on top of this.
    pub block_cache_bytes: u64,
    /// Bytes of row cache: the newest version of recently read rows, kept above
    /// the storage engine so that a hot row's point read costs a hash lookup
    /// (canyon-txn's `row_cache.rs`). 0 turns it off.
    pub row_cache_bytes: u64,
    /// Bytes of memory for old row versions, which only older snapshots of
    /// running transactions read (canyon-txn's `history.rs`); past it they
    /// are written to RocksDB. 0 writes them all there.
    pub history_memory_bytes: u64,
    /// Most memory one statement's parse may be estimated to need (its tokens
    /// and its syntax tree: 200-400 bytes per token; see canyon-sql's
    /// `limits`). A statement over it gets ERR 1037 before it is parsed.
    pub statement_memory_limit: u64,
    /// Most memory the statements being parsed at one time may be estimated
    /// to need together; the statement that would pass it gets ERR 1037.
    pub statement_memory_budget: u64,
    /// One memory budget, in bytes, that the server divides among RocksDB's
    /// block cache and memtables, the row cache, old row versions and
    /// statement parsing, leaving a share for connections and the rest
    /// ([`crate::memory`] has the division and why). Set it to what the
    /// server may use — a container's or a cgroup's limit less the page
    /// cache it should keep. 0 (the default): each of those sizes is set on
    /// its own. Setting both it and one of them is refused.
    pub memory_budget_bytes: u64,
    /// Read and compact RocksDB's files with O_DIRECT, bypassing the kernel's
    /// page cache (see `canyon_rocksdb::RocksOptions::direct_io`). Default off.
    pub direct_io: bool,
    /// Uncompressed size of RocksDB's data blocks for data written from now
    /// on, in bytes (512 B to 1 MiB; see
    /// `canyon_rocksdb::RocksOptions::block_size_bytes`). A point read whose
    /// row is not cached reads and decompresses one block. Default 16 KiB.
    pub block_size_bytes: u64,
    /// Keep all data in memory: nothing is written to disk and everything is lost
    /// when the process stops. For tests and experiments only.
    pub in_memory: bool,
    /// Path of a Unix-domain socket to listen on as well as TCP (for
    /// `mariadb -S PATH`; a local client skips the TCP stack). Empty: none. A
    /// socket file left behind by a server that was killed is replaced.
    pub socket: String,
    /// `HOST:PORT` on which to serve Prometheus metrics over HTTP
    /// (`GET /metrics`, the series mysqld_exporter's default collectors
    /// name); empty: not served. Unauthenticated, like an exporter's port:
    /// bind it where only the monitoring system reaches.
    pub metrics_address: String,
    /// PEM file with the server's TLS certificate chain. With `tls_key`, TCP
    /// clients may switch to TLS (CLIENT_SSL is offered); empty: no TLS.
    pub tls_cert: String,
    /// PEM file with the private key of `tls_cert` (PKCS#8, PKCS#1 or SEC1).
    pub tls_key: String,
    /// Refuse TCP connections that do not switch to TLS (ERR 3159), as MySQL's
    /// `require_secure_transport`. Unix-socket connections count as secure.
    pub require_secure_transport: bool,
    /// The server's character set (MySQL's `character_set_server`): the
    /// default of CREATE DATABASE without a CHARACTER SET clause. MySQL 8's
    /// default is utf8mb4; MariaDB's test suite runs with latin1.
    pub character_set_server: String,
    /// The server's collation (`collation_server`); empty: the character
    /// set's default collation.
    pub collation_server: String,
    /// Show integer display widths (`int(11)`) as MySQL 5.7 and MariaDB do;
    /// `false` is MySQL 8.0.19+, which no longer prints them.
    pub display_widths: bool,
    /// Whose wording SHOW CREATE TABLE follows where MySQL 8 and MariaDB
    /// differ: `"mysql"` (default) or `"mariadb"` (which implies
    /// `display_widths`). Only text changes, never behaviour — the version
    /// included: `"mariadb"` reports MariaDB 10.11's (`VERSION()` =
    /// `10.11.99-MariaDB-canyon-X`, `5.5.5-` before it in the handshake),
    /// which MariaDB replicas need to replicate by GTID and
    /// `mariadb-binlog --read-from-remote-server` to connect at all
    /// (`crate::server::mariadb_server_version`).
    pub presentation: PresentationMode,
    /// Allow LOAD DATA LOCAL (MySQL's `local_infile`): the client sends a
    /// file of its own. Off by default, as in MySQL 8.0 (a server that may
    /// ask any client for any file it names is a risk if clients connect to
    /// servers they do not trust); both sides must enable it, or LOAD DATA
    /// LOCAL fails with 3948. MariaDB's test suite runs with it on.
    pub local_infile: bool,
    /// LOAD DATA into an empty table as sorted files ingested at commit
    /// (`canyon_txn`'s bulk.rs; default on). Off: every load buffers its
    /// rows in its transaction, as any INSERT does (for comparisons).
    pub bulk_load: bool,
    /// Where LOAD DATA (not LOCAL) may read files on the server (MySQL's
    /// `secure_file_priv`): a directory (files under it only), `""` (anywhere
    /// the server's user can read) or `"NULL"` (the default: no server-side
    /// files at all; LOAD DATA INFILE fails with 1290).
    pub secure_file_priv: String,
    /// The binary log (MySQL's `log_bin`): every committed change kept as
    /// binary-log events in the change log, served to replicas and CDC
    /// tools. Off by default for now (docs/replication.md).
    pub log_bin: bool,
    /// This server's id among replicas (`server_id`).
    pub server_id: u32,
    /// `binlog_expire_logs_seconds`: binary log files that stopped receiving
    /// events longer ago are purged when the log rotates (FLUSH BINARY LOGS)
    /// and at startup, never one a replica is reading; 0 keeps every file.
    /// MySQL 8's default, 2592000 (30 days). SET GLOBAL changes it.
    pub binlog_expire_logs_seconds: u64,
    /// Semi-synchronous replication as a source
    /// (`rpl_semi_sync_source_enabled`): a COMMIT is answered once a
    /// replica acknowledged it (docs/replication.md). SET GLOBAL changes it.
    pub rpl_semi_sync_source_enabled: bool,
    /// `rpl_semi_sync_source_timeout`, milliseconds a commit waits before
    /// the source falls back to asynchronous replication.
    pub rpl_semi_sync_source_timeout: u64,
    /// `rpl_semi_sync_source_wait_for_replica_count`.
    pub rpl_semi_sync_source_wait_for_replica_count: u64,
    /// As a replica, acknowledge the source's transactions
    /// (`rpl_semi_sync_replica_enabled`).
    pub rpl_semi_sync_replica_enabled: bool,
    /// Start read-only (MySQL's `read_only`): writes from accounts without
    /// SUPER fail with 1290; a replica's applier still writes. SET GLOBAL
    /// changes it at run time (docs/replication.md).
    pub read_only: bool,
    /// Start super-read-only (MySQL's `super_read_only`, which implies
    /// `read_only`): no client account writes.
    pub super_read_only: bool,
    /// The slow query log (`slow_query_log`; also SET GLOBAL at run time).
    pub slow_query_log: bool,
    /// Its file (`slow_query_log_file`); empty: `DATA_DIR/canyon-slow.log`
    /// (the working directory with `in_memory`).
    pub slow_query_log_file: String,
    /// Seconds a statement must exceed to be logged as slow (`long_query_time`).
    pub long_query_time: f64,
    /// The general query log (`general_log`).
    pub general_log: bool,
    /// Its file (`general_log_file`); empty: `DATA_DIR/canyon-general.log`.
    pub general_log_file: String,
    /// `log_output`: FILE, or NONE (nothing written even with a log on).
    pub log_output: String,
    /// `min_examined_row_limit`: slow entries need at least this many rows examined.
    pub min_examined_row_limit: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            data_dir: PathBuf::from("./data"),
            bind: "127.0.0.1".to_string(),
            port: 3306,
            max_connections: 20_000,
            max_allowed_packet: 64 << 20,
            connect_timeout: 10,
            max_unauthenticated_connections: 1024,
            worker_threads: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            durability: DurabilityMode::SyncEveryCommit,
            sync_interval_ms: 1000,
            lock_wait_timeout_secs: 50,
            block_cache_bytes: 512 << 20,
            row_cache_bytes: 256 << 20,
            history_memory_bytes: 128 << 20,
            statement_memory_limit: canyon_sql::DEFAULT_STATEMENT_MEMORY_LIMIT as u64,
            statement_memory_budget: canyon_sql::DEFAULT_STATEMENT_MEMORY_BUDGET as u64,
            memory_budget_bytes: 0,
            direct_io: false,
            block_size_bytes: 16 << 10,
            in_memory: false,
            socket: String::new(),
            metrics_address: String::new(),
            tls_cert: String::new(),
            tls_key: String::new(),
            require_secure_transport: false,
            character_set_server: "utf8mb4".to_string(),
            collation_server: String::new(),
            display_widths: false,
            presentation: PresentationMode::Mysql,
            local_infile: false,
            bulk_load: true,
            secure_file_priv: "NULL".to_string(),
            log_bin: false,
            server_id: 1,
            binlog_expire_logs_seconds: 2_592_000,
            rpl_semi_sync_source_enabled: false,
            rpl_semi_sync_source_timeout: 10_000,
            rpl_semi_sync_source_wait_for_replica_count: 1,
            rpl_semi_sync_replica_enabled: false,
            read_only: false,
            super_read_only: false,
            slow_query_log: false,
            slow_query_log_file: String::new(),
            long_query_time: 10.0,
            general_log: false,
            general_log_file: String::new(),
            log_output: "FILE".to_string(),
            min_examined_row_limit: 0,
        }
    }
}

/// The values given on the command line; `None` leaves the lower layers' value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// `--data-dir`
    pub data_dir: Option<PathBuf>,
    /// `--bind`
    pub bind: Option<String>,
    /// `--port`
    pub port: Option<u16>,
    /// `--in-memory` (only turns it on)
    pub in_memory: bool,
}

/// A configuration that cannot be used, with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// Builds the configuration from its layers: defaults, then `file` (if any),
    /// then the environment as `env` reports it, then `flags`; and validates it.
    pub fn load(
        file: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
        flags: &Overrides,
    ) -> Result<Config, ConfigError> {
        let mut config = match file {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    ConfigError(format!("cannot read config file {}: {e}", path.display()))
                })?;
                Config::from_toml(&text)
                    .map_err(|e| ConfigError(format!("{}: {}", path.display(), e.0)))?
            }
            None => Config::default(),
        };
        config.apply_env(env)?;
        config.apply_overrides(flags);
        config.validate()?;
        Ok(config)
    }

    /// Parses a TOML file's text; missing fields keep their defaults, unknown
    /// fields are an error (a typo should not silently do nothing).
    pub fn from_toml(text: &str) -> Result<Config, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError(e.to_string()))
    }

    /// Applies `CANYON_*` environment variables.
    pub fn apply_env(&mut self, env: impl Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        fn parse<T: std::str::FromStr>(name: &str, v: &str) -> Result<T, ConfigError> {
            v.trim()
                .parse()
                .map_err(|_| ConfigError(format!("{name}: cannot parse {v:?}")))
        }
        let get = |name: &str| env(name).filter(|v| !v.is_empty());
        if let Some(v) = get("CANYON_DATA_DIR") {
            self.data_dir = PathBuf::from(v);
        }
        if let Some(v) = get("CANYON_BIND") {
            self.bind = v;
        }
        if let Some(v) = get("CANYON_PORT") {
            self.port = parse("CANYON_PORT", &v)?;
        }
        if let Some(v) = get("CANYON_MAX_CONNECTIONS") {
            self.max_connections = parse("CANYON_MAX_CONNECTIONS", &v)?;
        }
        if let Some(v) = get("CANYON_MAX_ALLOWED_PACKET") {
            self.max_allowed_packet = parse("CANYON_MAX_ALLOWED_PACKET", &v)?;
        }
        if let Some(v) = get("CANYON_CONNECT_TIMEOUT") {
            self.connect_timeout = parse("CANYON_CONNECT_TIMEOUT", &v)?;
        }
        if let Some(v) = get("CANYON_MAX_UNAUTHENTICATED_CONNECTIONS") {
            self.max_unauthenticated_connections =
                parse("CANYON_MAX_UNAUTHENTICATED_CONNECTIONS", &v)?;
        }
        if let Some(v) = get("CANYON_WORKER_THREADS") {
            self.worker_threads = parse("CANYON_WORKER_THREADS", &v)?;
        }
        if let Some(v) = get("CANYON_DURABILITY") {
            self.durability = DurabilityMode::parse(&v).ok_or_else(|| {
                ConfigError(format!(
                    "CANYON_DURABILITY: {v:?} is not sync-every-commit or sync-periodically"
                ))
            })?;
        }
        if let Some(v) = get("CANYON_SYNC_INTERVAL_MS") {
            self.sync_interval_ms = parse("CANYON_SYNC_INTERVAL_MS", &v)?;
        }
        if let Some(v) = get("CANYON_LOCK_WAIT_TIMEOUT_SECS") {
            self.lock_wait_timeout_secs = parse("CANYON_LOCK_WAIT_TIMEOUT_SECS", &v)?;
        }
        if let Some(v) = get("CANYON_BLOCK_CACHE_BYTES") {
            self.block_cache_bytes = parse("CANYON_BLOCK_CACHE_BYTES", &v)?;
        }
        if let Some(v) = get("CANYON_ROW_CACHE_BYTES") {
            self.row_cache_bytes = parse("CANYON_ROW_CACHE_BYTES", &v)?;
        }
        if let Some(v) = get("CANYON_HISTORY_MEMORY_BYTES") {
            self.history_memory_bytes = parse("CANYON_HISTORY_MEMORY_BYTES", &v)?;
        }
        if let Some(v) = get("CANYON_STATEMENT_MEMORY_LIMIT") {
            self.statement_memory_limit = parse("CANYON_STATEMENT_MEMORY_LIMIT", &v)?;
        }
        if let Some(v) = get("CANYON_STATEMENT_MEMORY_BUDGET") {
            self.statement_memory_budget = parse("CANYON_STATEMENT_MEMORY_BUDGET", &v)?;
        }
        if let Some(v) = get("CANYON_MEMORY_BUDGET_BYTES") {
            self.memory_budget_bytes = parse("CANYON_MEMORY_BUDGET_BYTES", &v)?;
        }
        if let Some(v) = get("CANYON_DIRECT_IO") {
            self.direct_io = parse_bool("CANYON_DIRECT_IO", &v)?;
        }
        if let Some(v) = get("CANYON_BLOCK_SIZE_BYTES") {
            self.block_size_bytes = parse("CANYON_BLOCK_SIZE_BYTES", &v)?;
        }
        if let Some(v) = get("CANYON_SOCKET") {
            self.socket = v;
        }
        if let Some(v) = get("CANYON_METRICS_ADDRESS") {
            self.metrics_address = v;
        }
        if let Some(v) = get("CANYON_TLS_CERT") {
            self.tls_cert = v;
        }
        if let Some(v) = get("CANYON_TLS_KEY") {
            self.tls_key = v;
        }
        if let Some(v) = get("CANYON_IN_MEMORY") {
            self.in_memory = parse_bool("CANYON_IN_MEMORY", &v)?;
        }
        if let Some(v) = get("CANYON_REQUIRE_SECURE_TRANSPORT") {
            self.require_secure_transport = parse_bool("CANYON_REQUIRE_SECURE_TRANSPORT", &v)?;
        }
        if let Some(v) = get("CANYON_CHARACTER_SET_SERVER") {
            self.character_set_server = v;
        }
        if let Some(v) = get("CANYON_COLLATION_SERVER") {
            self.collation_server = v;
        }
        if let Some(v) = get("CANYON_DISPLAY_WIDTHS") {
            self.display_widths = parse_bool("CANYON_DISPLAY_WIDTHS", &v)?;
        }
        if let Some(v) = get("CANYON_PRESENTATION") {
            self.presentation = PresentationMode::parse(&v).ok_or_else(|| {
                ConfigError(format!(
                    "CANYON_PRESENTATION: {v:?} is not mysql or mariadb"
                ))
            })?;
        }
        if let Some(v) = get("CANYON_LOCAL_INFILE") {
            self.local_infile = parse_bool("CANYON_LOCAL_INFILE", &v)?;
        }
        if let Some(v) = get("CANYON_BULK_LOAD") {
            self.bulk_load = parse_bool("CANYON_BULK_LOAD", &v)?;
        }
        if let Some(v) = get("CANYON_SECURE_FILE_PRIV") {
            self.secure_file_priv = v;
        }
        if let Some(v) = get("CANYON_LOG_BIN") {
            self.log_bin = parse_bool("CANYON_LOG_BIN", &v)?;
        }
        if let Some(v) = get("CANYON_SERVER_ID") {
            self.server_id = parse("CANYON_SERVER_ID", &v)?;
        }
        if let Some(v) = get("CANYON_BINLOG_EXPIRE_LOGS_SECONDS") {
            self.binlog_expire_logs_seconds = parse("CANYON_BINLOG_EXPIRE_LOGS_SECONDS", &v)?;
        }
        if let Some(v) = get("CANYON_READ_ONLY") {
            self.read_only = parse_bool("CANYON_READ_ONLY", &v)?;
        }
        if let Some(v) = get("CANYON_SUPER_READ_ONLY") {
            self.super_read_only = parse_bool("CANYON_SUPER_READ_ONLY", &v)?;
        }
        if let Some(v) = get("CANYON_SLOW_QUERY_LOG") {
            self.slow_query_log = parse_bool("CANYON_SLOW_QUERY_LOG", &v)?;
        }
        if let Some(v) = get("CANYON_SLOW_QUERY_LOG_FILE") {
            self.slow_query_log_file = v;
        }
        if let Some(v) = get("CANYON_LONG_QUERY_TIME") {
            self.long_query_time = parse("CANYON_LONG_QUERY_TIME", &v)?;
        }
        if let Some(v) = get("CANYON_GENERAL_LOG") {
            self.general_log = parse_bool("CANYON_GENERAL_LOG", &v)?;
        }
        if let Some(v) = get("CANYON_GENERAL_LOG_FILE") {
            self.general_log_file = v;
        }
        if let Some(v) = get("CANYON_LOG_OUTPUT") {
            self.log_output = v;
        }
        if let Some(v) = get("CANYON_MIN_EXAMINED_ROW_LIMIT") {
            self.min_examined_row_limit = parse("CANYON_MIN_EXAMINED_ROW_LIMIT", &v)?;
        }
        Ok(())
    }

    /// Applies command-line flags.
    pub fn apply_overrides(&mut self, flags: &Overrides) {
        if let Some(v) = &flags.data_dir {
            self.data_dir = v.clone();
        }
        if let Some(v) = &flags.bind {
            self.bind = v.clone();
        }
        if let Some(v) = flags.port {
            self.port = v;
        }
        if flags.in_memory {
            self.in_memory = true;
        }
    }

    /// The collation `character_set_server` and `collation_server` name.
    pub fn server_collation(&self) -> Result<canyon_sql::collation::Collation, ConfigError> {
        let collation = Some(self.collation_server.as_str()).filter(|c| !c.is_empty());
        canyon_sql::collation::Collation::resolve(
            Some(&self.character_set_server),
            collation,
            canyon_sql::collation::Collation::DEFAULT,
        )
        .map_err(|e| ConfigError(format!("character_set_server / collation_server: {e}")))
    }

    /// Rejects values the server cannot run with.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.server_collation()?;
        if !(1024..=1 << 30).contains(&self.max_allowed_packet) {
            return Err(ConfigError(format!(
                "max_allowed_packet must be between 1024 and 1073741824, not {}",
                self.max_allowed_packet
            )));
        }
        if self.statement_memory_limit < 1 << 20
            || self.statement_memory_budget < self.statement_memory_limit
        {
            return Err(ConfigError(format!(
                "statement_memory_limit must be at least 1 MiB and statement_memory_budget at \
                 least statement_memory_limit, not {} and {}",
                self.statement_memory_limit, self.statement_memory_budget
            )));
        }
        crate::memory::MemoryPlan::check(self)?;
        if !(512..=1 << 20).contains(&self.block_size_bytes) {
            return Err(ConfigError(format!(
                "block_size_bytes must be between 512 and 1048576, not {}",
                self.block_size_bytes
            )));
        }
        if self.worker_threads == 0 {
            return Err(ConfigError("worker_threads must be at least 1".into()));
        }
        if self.max_connections == 0 {
            return Err(ConfigError("max_connections must be at least 1".into()));
        }
        if !(1..=31_536_000).contains(&self.connect_timeout) {
            return Err(ConfigError(format!(
                "connect_timeout must be between 1 and 31536000 seconds, not {}",
                self.connect_timeout
            )));
        }
        if self.max_unauthenticated_connections == 0 {
            return Err(ConfigError(
                "max_unauthenticated_connections must be at least 1".into(),
            ));
        }
        if self.durability == DurabilityMode::SyncPeriodically && self.sync_interval_ms == 0 {
            return Err(ConfigError(
                "sync_interval_ms must be at least 1 with sync-periodically".into(),
            ));
        }
        if self.bind.trim().is_empty() {
            return Err(ConfigError("bind must name an address".into()));
        }
        if self.tls_cert.is_empty() != self.tls_key.is_empty() {
            return Err(ConfigError(
                "tls_cert and tls_key must be given together".into(),
            ));
        }
        if self.require_secure_transport && self.tls_cert.is_empty() && self.socket.is_empty() {
            return Err(ConfigError(
                "require_secure_transport needs tls_cert/tls_key or a socket: \
                 no client could connect"
                    .into(),
            ));
        }
        Ok(())
    }

    /// The engine's durability setting.
    pub fn engine_durability(&self) -> canyon_sql::Durability {
        match self.durability {
            DurabilityMode::SyncEveryCommit => canyon_sql::Durability::SyncEveryCommit,
            DurabilityMode::SyncPeriodically => canyon_sql::Durability::SyncPeriodically {
                interval: Duration::from_millis(self.sync_interval_ms),
            },
        }
    }

    /// Where RocksDB keeps its files.
    pub fn db_path(&self) -> PathBuf {
        self.data_dir.join("db")
    }

    /// Where a generated root password is written on first start.
    pub fn root_password_path(&self) -> PathBuf {
        self.data_dir.join("root-password")
    }
}

/// A boolean environment value: 1/true/yes/on or 0/false/no/off.
fn parse_bool(name: &str, v: &str) -> Result<bool, ConfigError> {
    match v.trim() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(ConfigError(format!("{name}: {v:?} is not a boolean"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn defaults() {
        let c = Config::default();
        assert_eq!(c.port, 3306);
        assert_eq!(c.bind, "127.0.0.1");
        assert_eq!(c.data_dir, PathBuf::from("./data"));
        assert_eq!(c.max_connections, 20_000);
        assert_eq!(c.max_allowed_packet, 64 << 20);
        assert_eq!(c.connect_timeout, 10);
        assert_eq!(c.max_unauthenticated_connections, 1024);
        assert_eq!(c.lock_wait_timeout_secs, 50);
        assert_eq!(c.durability, DurabilityMode::SyncEveryCommit);
        assert!(c.worker_threads >= 1);
        assert!(!c.in_memory);
        c.validate().expect("defaults are valid");
    }

    #[test]
    fn layers_file_then_env_then_flags() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("canyon.toml");
        std::fs::write(
            &path,
            "port = 4000\nbind = \"0.0.0.0\"\ndurability = \"sync-periodically\"\n\
             sync_interval_ms = 200\nmax_connections = 10\n",
        )
        .expect("write");
        let env: HashMap<&str, &str> = [("CANYON_PORT", "5000"), ("CANYON_MAX_CONNECTIONS", "11")]
            .into_iter()
            .collect();
        let env = |k: &str| env.get(k).map(|v| v.to_string());
        let flags = Overrides {
            port: Some(6000),
            ..Overrides::default()
        };
        let c = Config::load(Some(&path), env, &flags).expect("load");
        assert_eq!(c.port, 6000); // flag beats env beats file
        assert_eq!(c.max_connections, 11); // env beats file
        assert_eq!(c.bind, "0.0.0.0"); // file beats default
        assert_eq!(
            c.engine_durability(),
            canyon_sql::Durability::SyncPeriodically {
                interval: Duration::from_millis(200)
            }
        );
        assert_eq!(c.lock_wait_timeout_secs, 50); // default kept
    }

    #[test]
    fn rejects_bad_input() {
        assert!(Config::from_toml("prot = 1").is_err());
        assert!(Config::from_toml("durability = \"sometimes\"").is_err());
        let mut c = Config::default();
        assert!(c
            .apply_env(|k| (k == "CANYON_PORT").then(|| "http".to_string()))
            .is_err());
        assert!(c
            .apply_env(|k| (k == "CANYON_DURABILITY").then(|| "never".to_string()))
            .is_err());
        c.max_allowed_packet = 10;
        assert!(c.validate().is_err());
        let flags = Overrides::default();
        assert!(Config::load(Some(Path::new("/nonexistent/canyon.toml")), no_env, &flags).is_err());
    }

    #[test]
    fn the_example_config_parses_and_matches_the_defaults() {
        let text = include_str!("../../../canyon.example.toml");
        let parsed = Config::from_toml(text).expect("example parses");
        let defaults = Config::default();
        assert_eq!(
            Config {
                worker_threads: defaults.worker_threads,
                ..parsed
            },
            defaults
        );
    }

    #[test]
    fn block_size_from_file_and_env_within_bounds() {
        let mut c = Config::from_toml("block_size_bytes = 4096\n").expect("parses");
        assert_eq!(c.block_size_bytes, 4096);
        c.validate().expect("valid");
        c.apply_env(|k| (k == "CANYON_BLOCK_SIZE_BYTES").then(|| "8192".to_string()))
            .expect("env");
        assert_eq!(c.block_size_bytes, 8192);
        for bad in [0, 511, (1 << 20) + 1] {
            c.block_size_bytes = bad;
            assert!(c.validate().is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn connection_phase_limits() {
        let mut c = Config::from_toml("connect_timeout = 3\nmax_unauthenticated_connections = 7\n")
            .expect("parses");
        assert_eq!(
            (c.connect_timeout, c.max_unauthenticated_connections),
            (3, 7)
        );
        c.apply_env(|k| match k {
            "CANYON_CONNECT_TIMEOUT" => Some("5".into()),
            "CANYON_MAX_UNAUTHENTICATED_CONNECTIONS" => Some("9".into()),
            _ => None,
        })
        .expect("env");
        assert_eq!(
            (c.connect_timeout, c.max_unauthenticated_connections),
            (5, 9)
        );
        c.validate().expect("valid");
        c.connect_timeout = 0;
        assert!(c.validate().is_err());
        c.connect_timeout = 10;
        c.max_unauthenticated_connections = 0;
        assert!(c.validate().is_err());
    }

    #[test]
    fn env_sets_in_memory_and_paths() {
        let mut c = Config::default();
        c.apply_env(|k| match k {
            "CANYON_IN_MEMORY" => Some("true".into()),
            "CANYON_DATA_DIR" => Some("/tmp/x".into()),
            _ => None,
        })
        .expect("env");
        assert!(c.in_memory);
        assert_eq!(c.db_path(), PathBuf::from("/tmp/x/db"));
        assert_eq!(
            c.root_password_path(),
            PathBuf::from("/tmp/x/root-password")
        );
    }
}
