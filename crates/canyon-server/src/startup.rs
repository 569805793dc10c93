//! Opening the storage and the engine, and creating the first account.

use crate::config::{Config, DurabilityMode, PresentationMode};
use crate::memory::MemoryPlan;
use crate::server::{blocking_hook, mariadb_server_version, server_version};
use canyon_common::{Error, Result};
use canyon_sql::catalog::querylog::QueryLogConfig;
use canyon_sql::{Engine, EngineConfig};
use canyon_storage::{MemoryStorage, Storage};
use rand::distributions::Alphanumeric;
use rand::Rng;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::Arc;
use std::time::Duration;
use tracing::{info, warn};

/// The engine's configuration derived from the server's.
pub fn engine_config(config: &Config) -> EngineConfig {
    let memory = MemoryPlan::of(config);
    let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    EngineConfig {
        durability: config.engine_durability(),
        lock_wait_timeout: Duration::from_secs(config.lock_wait_timeout_secs),
        blocking_hook: Some(blocking_hook),
        version: match config.presentation {
            PresentationMode::Mysql => server_version(),
            PresentationMode::Mariadb => mariadb_server_version(),
        },
        max_allowed_packet: config.max_allowed_packet,
        max_connections: config.max_connections,
        port: config.port,
        row_cache_bytes: size(memory.row_cache),
        history_memory_bytes: size(memory.history),
        statement_memory_limit: size(memory.statement_limit),
        statement_memory_budget: size(memory.statement_budget),
        server_collation: config
            .server_collation()
            .expect("Config::validate checked the server character set"),
        display_widths: config.display_widths,
        presentation: match config.presentation {
            PresentationMode::Mysql => canyon_sql::Presentation::Mysql,
            PresentationMode::Mariadb => canyon_sql::Presentation::Mariadb,
        },
        local_infile: config.local_infile,
        binlog: canyon_sql::catalog::config::BinlogConfig {
            enabled: config.log_bin,
            server_id: config.server_id,
            expire_logs_seconds: config.binlog_expire_logs_seconds,
            ..Default::default()
        },
        bulk_load: config.bulk_load,
        // MySQL's option: NULL disables server-side files, "" allows any.
        secure_file_priv: (!config.secure_file_priv.eq_ignore_ascii_case("NULL"))
            .then(|| std::path::PathBuf::from(&config.secure_file_priv)),
    }
}

/// Opens the storage the configuration names (RocksDB in `DATA_DIR/db`, or
/// memory) and the engine on it.
pub fn open_engine(config: &Config) -> Result<Arc<Engine>> {
    let storage: Arc<dyn Storage> = if config.in_memory {
        warn!(
            "IN-MEMORY MODE: nothing is written to disk; all data is lost when the \
             server stops"
        );
        Arc::new(MemoryStorage::new())
    } else {
        std::fs::create_dir_all(&config.data_dir).map_err(|e| {
            Error::Io(format!(
                "cannot create data directory {}: {e}",
                config.data_dir.display()
            ))
        })?;
        let memory = MemoryPlan::of(config);
        if config.memory_budget_bytes != 0 {
            info!(
                budget = config.memory_budget_bytes,
                block_cache_with_memtables = memory.block_cache,
                memtables = memory.write_buffers,
                row_cache = memory.row_cache,
                history = memory.history,
                statement_parsing = memory.statement_budget,
                "memory budget divided"
            );
        }
        let options = canyon_rocksdb::RocksOptions {
            // A commit is acknowledged only once synced under sync-every-commit,
            // so its WAL record may wait in RocksDB's buffer for the group
            // commit's sync (one write(2) per group). sync-periodically
            // acknowledges before the sync and promises that only a machine
            // crash loses commits: its records go to the OS at every commit.
            buffer_wal_until_sync: config.durability == DurabilityMode::SyncEveryCommit,
            ..memory.rocks_options(config)
        };
        let path = config.db_path();
        info!(path = %path.display(), "opening RocksDB");
        Arc::new(canyon_rocksdb::RocksStorage::open(&path, &options)?)
    };
    let engine = Engine::open(storage, engine_config(config))?;
    engine.configure_query_log(&query_log_config(config))?;
    // Before any replica connects (or this one starts replicating below).
    let semi_sync = engine.binlog().semi_sync();
    use canyon_sql::types::value::Value;
    for (name, value) in [
        (
            "rpl_semi_sync_source_timeout",
            Value::UInt(config.rpl_semi_sync_source_timeout),
        ),
        (
            "rpl_semi_sync_source_wait_for_replica_count",
            Value::UInt(config.rpl_semi_sync_source_wait_for_replica_count),
        ),
        (
            "rpl_semi_sync_source_enabled",
            Value::Int(i64::from(config.rpl_semi_sync_source_enabled)),
        ),
        (
            "rpl_semi_sync_replica_enabled",
            Value::Int(i64::from(config.rpl_semi_sync_replica_enabled)),
        ),
    ] {
        semi_sync.set_var(name, &value)?;
    }
    // Before any client connects (and before the replica starts, which is
    // exempt anyway).
    use canyon_sql::catalog::read_only::Level;
    engine.set_read_only(if config.super_read_only {
        Level::SuperReadOnly
    } else if config.read_only {
        Level::ReadOnly
    } else {
        Level::Off
    });
    engine
        .replica
        .set_launcher(Arc::new(crate::replica::ReplicaLauncher {
            engine: Arc::downgrade(&engine),
        }));
    engine.replica.start_at_boot()?;
    Ok(engine)
}

/// The query logs' starting settings (`canyon_sql::catalog::querylog`).
pub fn query_log_config(config: &Config) -> QueryLogConfig {
    let dir = if config.in_memory {
        std::path::PathBuf::new()
    } else {
        config.data_dir.clone()
    };
    let file = |set: &str, default: &str| {
        if set.is_empty() {
            dir.join(default)
        } else {
            std::path::PathBuf::from(set)
        }
    };
    QueryLogConfig {
        slow_query_log: config.slow_query_log,
        slow_query_log_file: file(&config.slow_query_log_file, "canyon-slow.log"),
        long_query_time: config.long_query_time,
        general_log: config.general_log,
        general_log_file: file(&config.general_log_file, "canyon-general.log"),
        log_output: config.log_output.clone(),
        min_examined_row_limit: config.min_examined_row_limit,
    }
}

/// The root password of a first start, and whether Canyon made it up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootPassword {
    /// The password.
    pub password: String,
    /// True when generated (then it was stored in `DATA_DIR/root-password`, unless
    /// in memory, and must be shown to the operator once).
    pub generated: bool,
}

/// On a brand-new database (no accounts), creates `root`@`%` with the password
/// from `env_password` (CANYON_ROOT_PASSWORD) or a generated one. A generated
/// password is written to `DATA_DIR/root-password` with mode 0600 before the
/// account exists, so it is never lost. Returns `None` when accounts exist.
pub fn ensure_root_account(
    engine: &Engine,
    config: &Config,
    env_password: Option<String>,
) -> Result<Option<RootPassword>> {
    if engine.has_accounts() {
        return Ok(None);
    }
    let root = match env_password.filter(|p| !p.is_empty()) {
        Some(password) => RootPassword {
            password,
            generated: false,
        },
        None => RootPassword {
            password: generate_password(),
            generated: true,
        },
    };
    if root.generated && !config.in_memory {
        let path = config.root_password_path();
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&path)?;
            writeln!(f, "{}", root.password)?;
            f.sync_all()
        };
        write().map_err(|e| Error::Io(format!("cannot write {}: {e}", path.display())))?;
    }
    engine.bootstrap_root(&root.password)?;
    info!(generated = root.generated, "created account root@%");
    Ok(Some(root))
}

/// 20 random alphanumeric characters.
fn generate_password() -> String {
    rand::thread_rng()
        .sample_iter(&Alphanumeric)
        .take(20)
        .map(char::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_passwords_are_20_alphanumerics() {
        let a = generate_password();
        assert_eq!(a.len(), 20);
        assert!(a.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_ne!(a, generate_password());
    }

    #[test]
    fn engine_config_carries_the_settings() {
        let config = Config {
            lock_wait_timeout_secs: 7,
            ..Config::default()
        };
        let e = engine_config(&config);
        assert_eq!(e.lock_wait_timeout, Duration::from_secs(7));
        assert!(e.version.starts_with("8.0.36-canyon-"));
        assert!(e.blocking_hook.is_some());
        assert_eq!(crate::server::handshake_version(&e.version), e.version);
    }

    /// Under MariaDB's presentation VERSION() is a MariaDB 10.11 one and
    /// the handshake carries it behind MariaDB's `5.5.5-`.
    #[test]
    fn mariadb_presentation_reports_a_mariadb_version() {
        let config = Config {
            presentation: PresentationMode::Mariadb,
            ..Config::default()
        };
        let e = engine_config(&config);
        assert!(
            e.version.starts_with("10.11.99-MariaDB-canyon-"),
            "{}",
            e.version
        );
        assert_eq!(
            crate::server::handshake_version(&e.version),
            format!("5.5.5-{}", e.version)
        );
    }
}
