//! The engine's configuration, and what it tells the server about an account.

pub use canyon_txn::{Durability, IsolationLevel};

/// Engine configuration.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// How commits are made durable.
    pub durability: Durability,
    /// Default innodb_lock_wait_timeout.
    pub lock_wait_timeout: std::time::Duration,
    /// Wraps every blocking wait (see `canyon_txn::TxnConfig`).
    pub blocking_hook: Option<fn(&mut dyn FnMut())>,
    /// The server version string reported by VERSION() and @@version.
    pub version: String,
    /// Reported as @@max_allowed_packet (the server enforces it).
    pub max_allowed_packet: u64,
    /// Reported as @@max_connections (the server enforces it).
    pub max_connections: u32,
    /// Reported as @@port.
    pub port: u16,
    /// Memory for the MVCC layer's row cache (see `canyon_txn::TxnConfig`).
    pub row_cache_bytes: usize,
    /// Memory for old row versions (see `canyon_txn::TxnConfig`).
    pub history_memory_bytes: usize,
    /// Most memory one statement's parse may be estimated to need (its
    /// tokens and tree; see `crate::parse::limits`); beyond, error 1037.
    pub statement_memory_limit: usize,
    /// Most memory all statements being parsed at once may be estimated to
    /// need together; beyond, error 1037 for the statement that would pass it.
    pub statement_memory_budget: usize,
    /// The server's default collation (MySQL's `character_set_server` /
    /// `collation_server`): CREATE DATABASE without a character set takes
    /// the session's `collation_server`, whose default this is.
    pub server_collation: crate::types::collation::Collation,
    /// Print integer display widths (`int(11)`, `tinyint(4)`, `year(4)`) in
    /// SHOW CREATE TABLE, SHOW COLUMNS and information_schema.COLUMNS, as
    /// MySQL 5.7 and MariaDB do. `false` (the default) is MySQL 8.0.19+:
    /// widths are deprecated and not shown. Tools written against 5.7 that
    /// parse `int(11)`, and MariaDB's own test files, want `true`.
    pub display_widths: bool,
    /// LOAD DATA LOCAL allowed (MySQL's `local_infile`; the client must
    /// allow it too: CLIENT_LOCAL_FILES). Otherwise error 3948.
    pub local_infile: bool,
    /// LOAD DATA into an empty table takes the bulk path (`crate::session`'s
    /// load module doc); off, every load buffers its rows as INSERT does.
    pub bulk_load: bool,
    /// Where LOAD DATA may read server-side files (MySQL's
    /// `secure_file_priv`): `None` (NULL) none at all (error 1290), an empty
    /// path anywhere, a directory only files under it.
    pub secure_file_priv: Option<std::path::PathBuf>,
    /// Which server's wording SHOW CREATE TABLE and a few error messages use
    /// where MySQL 8 and MariaDB print the same thing differently (see
    /// [`Presentation`]).
    pub presentation: Presentation,
    /// The binary log (`crate::binlog`): off unless asked for.
    pub binlog: BinlogConfig,
}

/// The binary log's settings (MySQL's `log_bin`, `server_id`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinlogConfig {
    /// Log every committed change (`log_bin`).
    pub enabled: bool,
    /// This server's id in a replication topology (`server_id`): written in
    /// every event; replicas refuse events with their own.
    pub server_id: u32,
    /// The log files' base name (`log_bin_basename`'s last part):
    /// files are `BASENAME.000001`, ...
    pub basename: String,
    /// `binlog_expire_logs_seconds`: files that stopped receiving events
    /// longer ago are purged at rotation and at startup; 0 never
    /// (`crate::catalog::binlog`'s `retention.rs`).
    pub expire_logs_seconds: u64,
}

impl Default for BinlogConfig {
    fn default() -> Self {
        BinlogConfig {
            enabled: false,
            server_id: 1,
            basename: "binlog".into(),
            // MySQL 8's default: 30 days.
            expire_logs_seconds: 2_592_000,
        }
    }
}

#[cfg(test)]
impl EngineConfig {
    /// What the crate's unit tests run on: sync-every-commit, a 2 s lock
    /// wait timeout, small caches, the MySQL presentation. Tests change
    /// the fields they care about with struct update syntax.
    pub(crate) fn for_unit_tests() -> EngineConfig {
        EngineConfig {
            durability: canyon_txn::Durability::SyncEveryCommit,
            lock_wait_timeout: std::time::Duration::from_secs(2),
            blocking_hook: None,
            version: "8.0.36-canyon-test".into(),
            max_allowed_packet: 64 << 20,
            max_connections: 10,
            port: 3306,
            row_cache_bytes: 1 << 20,
            history_memory_bytes: 1 << 20,
            statement_memory_limit: DEFAULT_STATEMENT_MEMORY_LIMIT,
            statement_memory_budget: DEFAULT_STATEMENT_MEMORY_BUDGET,
            server_collation: crate::types::collation::Collation::DEFAULT,
            display_widths: false,
            presentation: Default::default(),
            local_infile: false,
            bulk_load: true,
            binlog: Default::default(),
            secure_file_priv: None,
        }
    }
}

impl EngineConfig {
    /// Whether integer display widths are shown: asked for, or implied by
    /// MariaDB's presentation (MariaDB always prints them).
    pub fn shows_display_widths(&self) -> bool {
        self.display_widths || self.presentation == Presentation::Mariadb
    }
}

/// Where MySQL 8 and MariaDB print the same table definition differently,
/// which one SHOW CREATE TABLE follows. The definition is the same either
/// way; only its text differs, so a tool that diffs SHOW CREATE TABLE
/// against a MariaDB server (or MariaDB's own test files) can ask for
/// MariaDB's text. Canyon's semantics are MySQL 8's in both. The same goes
/// for the few error messages whose number is the same in both servers and
/// whose text differs (`crate::session`'s `present_error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Presentation {
    /// MySQL 8.0: a number column's DEFAULT quoted (`DEFAULT '1'`), the
    /// partition clause inside a version comment
    /// (`/*!50100 PARTITION BY ... */`) with bare partition names.
    #[default]
    Mysql,
    /// MariaDB 10.11: a number column's DEFAULT unquoted (`DEFAULT 1`), the
    /// partition clause plain with quoted partition names, and integer
    /// display widths (`int(11)`); MariaDB's text for errors 1091 and 1507.
    Mariadb,
}

/// Default of [`EngineConfig::statement_memory_limit`]: 512 MiB, room for
/// a 4 MiB multi-row INSERT of ordinary rows (estimated 480 MiB, measured
/// 370 MiB: sqlparser's tree costs 200–400 bytes per token; see
/// `crate::parse::limits` and docs/benchmarks.md, section hostile-statements).
pub const DEFAULT_STATEMENT_MEMORY_LIMIT: usize = 512 << 20;

/// Default of [`EngineConfig::statement_memory_budget`]: two statements at
/// the per-statement limit.
pub const DEFAULT_STATEMENT_MEMORY_BUDGET: usize = 1 << 30;

/// How a stored account authenticates (see [`crate::catalog::auth`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthInfo {
    /// The account's plugin.
    pub plugin: crate::catalog::auth::AuthPlugin,
    /// Whether the account has an empty password (any plugin accepts only an
    /// empty response then).
    pub empty_password: bool,
    /// mysql_native_password: SHA1(SHA1(password)).
    pub native_hash: Option<[u8; 20]>,
    /// caching_sha2_password: the stored verifier (also the key under which the
    /// server caches the fast-path hash, so a changed password misses the cache).
    pub sha2_verifier: String,
}
