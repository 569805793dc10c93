//! System variables: defaults, session values, and what SET may change.
//!
//! Reads (`SELECT @@x`, `SHOW VARIABLES`) see the session value if the session set
//! one, else the global value: what SET GLOBAL stored (kept by the engine in an
//! atomically swapped map, copied into each new session as its starting
//! values, not persisted — as MySQL's SET GLOBAL), else the default here.
//! [`scope`] says which of SET GLOBAL / SET SESSION a variable takes. Only the variables Canyon acts on change
//! behaviour (autocommit, transaction isolation, innodb_lock_wait_timeout); the
//! others are accepted and reflected so that drivers' connect-time SET statements
//! succeed. Unknown names are error 1193, read-only ones 1238.

use crate::catalog::config::EngineConfig;
use crate::types::value::Value;
use canyon_common::{Error, Result};

/// Whether a variable may be SET.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// SET [SESSION|GLOBAL] works.
    ReadWrite,
    /// SET is refused (1238).
    ReadOnly,
}

/// The variables Canyon knows, with their defaults. `@@version` etc. come from
/// the configuration.
pub fn default_value(name: &str, cfg: &EngineConfig) -> Option<(Value, Access)> {
    use Access::*;
    let s = |x: &str| Value::str(x);
    let i = |x: i64| Value::Int(x);
    Some(match name {
        "version" => (s(&cfg.version), ReadOnly),
        "version_comment" => (s("Canyon (Apache-2.0)"), ReadOnly),
        "version_compile_os" => (s("Linux"), ReadOnly),
        "version_compile_machine" => (s(std::env::consts::ARCH), ReadOnly),
        "protocol_version" => (i(10), ReadOnly),
        "port" => (i(cfg.port as i64), ReadOnly),
        // The server's LOAD DATA settings (crate::session's `load`); set in
        // its configuration, not by SET.
        "local_infile" => (i(cfg.local_infile as i64), ReadOnly),
        "secure_file_priv" => (
            cfg.secure_file_priv
                .as_ref()
                .map_or(Value::Null, |p| s(&p.to_string_lossy())),
            ReadOnly,
        ),
        "hostname" => (s("localhost"), ReadOnly),
        "license" => (s("Apache-2.0"), ReadOnly),
        "have_ssl" | "have_openssl" => (s("DISABLED"), ReadOnly),
        "lower_case_table_names" => (i(0), ReadOnly),
        "max_allowed_packet" => (Value::UInt(cfg.max_allowed_packet), ReadWrite),
        "max_connections" => (i(cfg.max_connections as i64), ReadWrite),
        "autocommit" => (i(1), ReadWrite),
        "transaction_isolation" | "tx_isolation" => (s("REPEATABLE-READ"), ReadWrite),
        "transaction_read_only" | "tx_read_only" => (i(0), ReadWrite),
        "innodb_lock_wait_timeout" => (i(cfg.lock_wait_timeout.as_secs() as i64), ReadWrite),
        "lock_wait_timeout" => (i(31_536_000), ReadWrite),
        "sql_mode" => (
            s("ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"),
            ReadWrite,
        ),
        "character_set_client" | "character_set_connection" | "character_set_results" => {
            (s("utf8mb4"), ReadWrite)
        }
        "character_set_server" | "character_set_database" => (s(cfg.server_collation.charset()), ReadWrite),
        "character_set_system" => (s("utf8mb3"), ReadOnly),
        "character_set_filesystem" => (s("binary"), ReadWrite),
        "collation_connection" => (s("utf8mb4_0900_ai_ci"), ReadWrite),
        "collation_server" | "collation_database" => (s(cfg.server_collation.name()), ReadWrite),
        "time_zone" => (s("SYSTEM"), ReadWrite),
        "system_time_zone" => (
            Value::str(&crate::types::timezone::system_zone_name()),
            ReadOnly,
        ),
        "wait_timeout" | "interactive_timeout" => (i(28800), ReadWrite),
        "net_read_timeout" => (i(30), ReadWrite),
        "net_write_timeout" => (i(60), ReadWrite),
        "net_buffer_length" => (i(16384), ReadWrite),
        "auto_increment_increment" | "auto_increment_offset" => (i(1), ReadWrite),
        "max_execution_time" => (i(0), ReadWrite),
        "max_sp_recursion_depth" => (i(0), ReadWrite),
        // Most iterations a recursive CTE may run (MySQL 8: error 3636).
        "cte_max_recursion_depth" => (i(1000), ReadWrite),
        "sql_select_limit" => (Value::UInt(u64::MAX), ReadWrite),
        // sql_log_off: the general query log is off for the session; Canyon
        // has no general log, so it is stored and does nothing.
        "sql_safe_updates" | "sql_auto_is_null" | "big_tables" | "sql_notes_off" | "sql_log_off" => {
            (i(0), ReadWrite)
        }
        "sql_notes" | "sql_warnings" | "sql_quote_show_create" => (i(1), ReadWrite),
        "foreign_key_checks" | "unique_checks" => (i(1), ReadWrite),
        "init_connect" => (s(""), ReadWrite),
        // ON: crate::catalog::perfschema (setup_consumers switches its parts).
        "performance_schema" => (i(1), ReadOnly),
        "performance_schema_digests_size" => (i(crate::catalog::perfschema::DIGESTS_SIZE as i64), ReadOnly),
        "max_digest_length" => (i(crate::catalog::perfschema::digest::MAX_DIGEST_LENGTH as i64), ReadOnly),
        "query_cache_size" => (i(0), ReadWrite),
        "query_cache_type" => (s("OFF"), ReadWrite),
        "default_storage_engine" | "default_tmp_storage_engine" | "storage_engine" => (s("InnoDB"), ReadWrite),
        "div_precision_increment" => (i(4), ReadWrite),
        "group_concat_max_len" => (i(1024), ReadWrite),
        "long_query_time" => (Value::Double(10.0), ReadWrite),
        // The query logs' (`crate::catalog::querylog`): read live from the
        // engine; these are SET GLOBAL ... = DEFAULT's values.
        "slow_query_log" | "general_log" | "log_queries_not_using_indexes" => (i(0), ReadWrite),
        "slow_query_log_file" => (s("canyon-slow.log"), ReadWrite),
        "general_log_file" => (s("canyon-general.log"), ReadWrite),
        "log_output" => (s("FILE"), ReadWrite),
        "min_examined_row_limit" => (i(0), ReadWrite),
        "default_week_format" => (i(0), ReadWrite),
        "session_track_gtids" => (s("OFF"), ReadWrite),
        "session_track_schema" | "session_track_state_change" => (i(0), ReadWrite),
        "session_track_system_variables" => (s(""), ReadWrite),
        "session_track_transaction_info" => (s("OFF"), ReadWrite),
        "max_join_size" => (Value::UInt(u64::MAX), ReadWrite),
        "optimizer_switch" => (s(""), ReadWrite),
        "explicit_defaults_for_timestamp" => (i(1), ReadWrite),
        "binlog_format" => (s("ROW"), ReadWrite),
        // The binary log (crate::binlog); the values that change as the
        // server runs are `crate::catalog::binlog::live_var`'s.
        "log_bin" => (i(i64::from(cfg.binlog.enabled)), ReadOnly),
        "server_id" => (i(i64::from(cfg.binlog.server_id)), ReadWrite),
        "server_uuid" | "gtid_executed" | "gtid_purged" | "log_bin_basename" | "log_bin_index" => {
            (s(""), ReadOnly)
        }
        "enforce_gtid_consistency" => (s("OFF"), ReadOnly),
        "binlog_checksum" => (s("CRC32"), ReadOnly),
        "binlog_row_image" => (s("FULL"), ReadOnly),
        "binlog_row_metadata" => (s("FULL"), ReadOnly),
        // Read live from the log (`crate::catalog::binlog`'s retention);
        // these are SET GLOBAL ... = DEFAULT's values.
        "binlog_expire_logs_seconds" => (i(2_592_000), ReadWrite),
        "expire_logs_days" => (Value::Double(30.0), ReadWrite),
        // Semi-synchronous replication (`crate::catalog::binlog`'s
        // `semisync.rs`), read live; these are SET GLOBAL ... = DEFAULT's
        // values. MariaDB's `master` / `slave` names are aliases.
        "rpl_semi_sync_source_enabled"
        | "rpl_semi_sync_master_enabled"
        | "rpl_semi_sync_replica_enabled"
        | "rpl_semi_sync_slave_enabled" => (s("OFF"), ReadWrite),
        "rpl_semi_sync_source_timeout" | "rpl_semi_sync_master_timeout" => (i(10_000), ReadWrite),
        "rpl_semi_sync_source_wait_for_replica_count"
        | "rpl_semi_sync_master_wait_for_slave_count" => (i(1), ReadWrite),
        "rpl_semi_sync_source_wait_no_replica" | "rpl_semi_sync_master_wait_no_slave" => {
            (s("ON"), ReadWrite)
        }
        "rpl_semi_sync_source_wait_point" | "rpl_semi_sync_master_wait_point" => {
            (s("AFTER_SYNC"), ReadWrite)
        }
        "max_binlog_size" => (i(1 << 30), ReadOnly),
        "sync_binlog" => (i(1), ReadOnly),
        "log_replica_updates" | "log_slave_updates" => (i(0), ReadOnly),
        // A session stops logging its changes with SET sql_log_bin = 0.
        "sql_log_bin" => (i(1), ReadWrite),
        // The server's level, read live (`crate::catalog::read_only`);
        // SET GLOBAL ... = DEFAULT's value.
        "read_only" | "super_read_only" => (i(0), ReadWrite),
        "innodb_flush_log_at_trx_commit" => (
            i(match cfg.durability {
                canyon_txn::Durability::SyncEveryCommit => 1,
                canyon_txn::Durability::SyncPeriodically { .. } => 2,
            }),
            ReadOnly,
        ),
        "gtid_mode" => (s("OFF"), ReadOnly),
        "profiling" => (i(0), ReadWrite),
        "transaction_allow_batching" => (i(0), ReadWrite),
        "last_insert_id" | "identity" | "warning_count" | "error_count" => (i(0), ReadWrite),
        // The first AUTO_INCREMENT value the next INSERT generates (0: the
        // table's counter); replication and dumps set it. Reset by the INSERT.
        "insert_id" => (Value::UInt(0), ReadWrite),
        // The session's clock, in seconds since the epoch: read as the time
        // now until SET (the session then answers NOW() with it), DEFAULT
        // or 0 sets it going again. The session answers it
        // (`Session::get_var`); this is the DEFAULT's value.
        "timestamp" => (Value::Double(0.0), ReadWrite),
        // What mysqlbinlog's output sets before its BINLOG statements.
        // `pseudo_slave_mode` and `pseudo_thread_id` steer MySQL's handling
        // of temporary tables and XA in statement-based replay; Canyon's log
        // is row-based, so they are kept and change nothing.
        "pseudo_slave_mode" => (i(0), ReadWrite),
        "pseudo_thread_id" => (i(0), ReadWrite),
        // MySQL 8 keeps it (deprecated) with INSERT DELAYED, which runs as a
        // plain INSERT: nothing to limit.
        "max_delayed_threads" => (i(20), ReadWrite),
        "completion_type" => (s("NO_CHAIN"), ReadWrite),
        // Month and day names: English only (`session::set` refuses others).
        "lc_time_names" => (s("en_US"), ReadWrite),
        // MariaDB's, which mariadb-binlog sets: CHECK constraints are always
        // enforced and no table is system-versioned (`session::set` refuses
        // the other values).
        "check_constraint_checks" => (i(1), ReadWrite),
        "system_versioning_insert_history" => (i(0), ReadWrite),
        _ => return None,
    })
}

/// Which SET forms a variable takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// SET SESSION and SET GLOBAL (the global value is new sessions' default).
    Both,
    /// Only the session's (1228 for SET GLOBAL).
    SessionOnly,
    /// A server setting (1229 for SET SESSION); SET GLOBAL is refused too
    /// (1235) because Canyon reads it from the configuration at start-up.
    ServerOnly,
}

/// The SET forms `name` takes.
pub fn scope(name: &str) -> Scope {
    match name {
        "last_insert_id"
        | "identity"
        | "warning_count"
        | "error_count"
        | "insert_id"
        | "timestamp"
        | "transaction_allow_batching"
        | "pseudo_slave_mode"
        | "pseudo_thread_id"
        | "sql_log_bin" => Scope::SessionOnly,
        "max_connections" | "server_id" | "init_connect" | "binlog_format" => Scope::ServerOnly,
        _ => Scope::Both,
    }
}

/// Checks a value for SET GLOBAL and returns it as stored (the session
/// form's parsing, applied up front, since no session applies it now).
pub fn normalize_global(name: &str, v: Value) -> Result<Value> {
    let wrong = |v: &Value| Error::WrongValueForVar {
        name: name.to_string(),
        value: v.to_display(),
    };
    Ok(match name {
        "autocommit" | "transaction_read_only" | "tx_read_only" => {
            Value::Int(parse_bool(name, &v)? as i64)
        }
        "transaction_isolation" | "tx_isolation" => {
            Value::str(isolation_name(parse_isolation(&v)?))
        }
        "innodb_lock_wait_timeout" => {
            Value::Int(v.to_i64().filter(|s| *s >= 1).ok_or_else(|| wrong(&v))?)
        }
        "max_execution_time" => {
            Value::Int(v.to_i64().filter(|s| *s >= 0).ok_or_else(|| wrong(&v))?)
        }
        "cte_max_recursion_depth" => Value::Int(
            v.to_i64()
                .filter(|s| (0..=4_294_967_295).contains(s))
                .ok_or_else(|| wrong(&v))?,
        ),
        "max_sp_recursion_depth" => Value::Int(
            v.to_i64()
                .filter(|s| (0..=255).contains(s))
                .ok_or_else(|| wrong(&v))?,
        ),
        "long_query_time" => match &v {
            Value::Bytes(_) => return Err(wrong(&v)),
            n => Value::Double(n.to_f64().filter(|s| *s >= 0.0).ok_or_else(|| wrong(&v))?),
        },
        "collation_connection" | "collation_server" | "collation_database" => {
            let n = v.to_display();
            let c = crate::types::collation::Collation::from_name(&n)
                .ok_or_else(|| Error::UnknownCollation(n.to_ascii_lowercase()))?;
            Value::str(c.name())
        }
        "sql_mode" => Value::str(&normalize_sql_mode(&v.to_display())?),
        "time_zone" => Value::str(&normalize_time_zone(&v)?),
        "character_set_client"
        | "character_set_connection"
        | "character_set_results"
        | "character_set_server"
        | "character_set_database" => normalize_charset(name, &v)?,
        _ => v,
    })
}

/// A `character_set_*` value as the variable keeps it: the character set's
/// canonical name (`utf8` is `utf8mb3`), from a name or a collation id as
/// MySQL takes both. NULL is "no conversion" for `character_set_results`
/// only (1231 for the others); an unknown name or id is 1115
/// ER_UNKNOWN_CHARACTER_SET.
pub fn normalize_charset(name: &str, v: &Value) -> Result<Value> {
    use crate::types::charset::Charset;
    let cs = match v {
        Value::Null if name == "character_set_results" => return Ok(Value::Null),
        Value::Null => {
            return Err(Error::WrongValueForVar {
                name: name.to_string(),
                value: "NULL".into(),
            })
        }
        Value::Int(_) | Value::UInt(_) => v
            .to_i64()
            .and_then(|id| u16::try_from(id).ok())
            .and_then(crate::types::collation::Collation::from_id)
            .map(|c| c.character_set()),
        other => Charset::from_name(&other.to_display()),
    };
    cs.map(|c| Value::str(c.name()))
        .ok_or_else(|| Error::UnknownCharset(v.to_display()))
}

/// MySQL 8's SQL modes in the order of their bits, which is the order
/// `@@sql_mode` lists them in (`sql_mode_names`, sys_vars.cc). The `NOT_USED`
/// slots are left out; NO_AUTO_CREATE_USER, removed in MySQL 8 but in every
/// MariaDB default and so in mariadb-dump's files, is kept in its 5.7 slot
/// and does nothing (Canyon's GRANT never creates an account).
const SQL_MODES: &[&str] = &[
    "REAL_AS_FLOAT",
    "PIPES_AS_CONCAT",
    "ANSI_QUOTES",
    "IGNORE_SPACE",
    "ONLY_FULL_GROUP_BY",
    "NO_UNSIGNED_SUBTRACTION",
    "NO_DIR_IN_CREATE",
    "ANSI",
    "NO_AUTO_VALUE_ON_ZERO",
    "NO_BACKSLASH_ESCAPES",
    "STRICT_TRANS_TABLES",
    "STRICT_ALL_TABLES",
    "NO_ZERO_IN_DATE",
    "NO_ZERO_DATE",
    "ALLOW_INVALID_DATES",
    "ERROR_FOR_DIVISION_BY_ZERO",
    "TRADITIONAL",
    "NO_AUTO_CREATE_USER",
    "HIGH_NOT_PRECEDENCE",
    "NO_ENGINE_SUBSTITUTION",
    "PAD_CHAR_TO_FULL_LENGTH",
    "TIME_TRUNCATE_FRACTIONAL",
];

/// A `time_zone` value as `@@time_zone` keeps it (see
/// `crate::types::timezone::normalize`); an unknown zone, or NULL, is 1298
/// ER_UNKNOWN_TIME_ZONE as in MySQL.
pub fn normalize_time_zone(v: &Value) -> Result<String> {
    let name = v.to_display();
    match v {
        Value::Null => Err(crate::types::timezone::unknown_zone("NULL")),
        _ => crate::types::timezone::normalize(&name)
            .ok_or_else(|| crate::types::timezone::unknown_zone(&name)),
    }
}

/// A `sql_mode` value as MySQL stores it: upper case, the combination modes
/// (ANSI, TRADITIONAL) joined by the modes they stand for, in bit order,
/// each once. An unknown name is 1231, as in MySQL.
pub fn normalize_sql_mode(text: &str) -> Result<String> {
    let mut set = [false; SQL_MODES.len()];
    let mut add = |m: &str| -> bool {
        match SQL_MODES.iter().position(|k| k.eq_ignore_ascii_case(m)) {
            Some(i) => {
                set[i] = true;
                true
            }
            None => false,
        }
    };
    for m in text.split(',').map(str::trim).filter(|m| !m.is_empty()) {
        if !add(m) {
            return Err(Error::WrongValueForVar {
                name: "sql_mode".into(),
                value: m.to_string(),
            });
        }
        let implied: &[&str] = if m.eq_ignore_ascii_case("ANSI") {
            &[
                "REAL_AS_FLOAT",
                "PIPES_AS_CONCAT",
                "ANSI_QUOTES",
                "IGNORE_SPACE",
                "ONLY_FULL_GROUP_BY",
            ]
        } else if m.eq_ignore_ascii_case("TRADITIONAL") {
            &[
                "STRICT_TRANS_TABLES",
                "STRICT_ALL_TABLES",
                "NO_ZERO_IN_DATE",
                "NO_ZERO_DATE",
                "ERROR_FOR_DIVISION_BY_ZERO",
                "NO_ENGINE_SUBSTITUTION",
            ]
        } else {
            &[]
        };
        for i in implied {
            add(i);
        }
    }
    Ok(SQL_MODES
        .iter()
        .zip(set)
        .filter(|(_, on)| *on)
        .map(|(m, _)| *m)
        .collect::<Vec<_>>()
        .join(","))
}

/// Every known variable name, sorted (for SHOW VARIABLES).
pub const NAMES: &[&str] = &[
    "auto_increment_increment",
    "auto_increment_offset",
    "autocommit",
    "big_tables",
    "binlog_checksum",
    "binlog_expire_logs_seconds",
    "binlog_format",
    "binlog_row_image",
    "binlog_row_metadata",
    "character_set_client",
    "character_set_connection",
    "character_set_database",
    "character_set_filesystem",
    "character_set_results",
    "character_set_server",
    "character_set_system",
    "check_constraint_checks",
    "collation_connection",
    "collation_database",
    "collation_server",
    "completion_type",
    "cte_max_recursion_depth",
    "default_storage_engine",
    "default_tmp_storage_engine",
    "default_week_format",
    "div_precision_increment",
    "enforce_gtid_consistency",
    "expire_logs_days",
    "explicit_defaults_for_timestamp",
    "foreign_key_checks",
    "general_log",
    "general_log_file",
    "group_concat_max_len",
    "gtid_executed",
    "gtid_mode",
    "gtid_purged",
    "have_openssl",
    "have_ssl",
    "hostname",
    "init_connect",
    "innodb_flush_log_at_trx_commit",
    "innodb_lock_wait_timeout",
    "interactive_timeout",
    "lc_time_names",
    "license",
    "local_infile",
    "lock_wait_timeout",
    "log_bin",
    "log_bin_basename",
    "log_bin_index",
    "log_output",
    "log_queries_not_using_indexes",
    "log_replica_updates",
    "log_slave_updates",
    "long_query_time",
    "lower_case_table_names",
    "max_allowed_packet",
    "max_binlog_size",
    "max_connections",
    "max_delayed_threads",
    "max_digest_length",
    "max_execution_time",
    "max_join_size",
    "max_sp_recursion_depth",
    "min_examined_row_limit",
    "net_buffer_length",
    "net_read_timeout",
    "net_write_timeout",
    "optimizer_switch",
    "performance_schema",
    "performance_schema_digests_size",
    "port",
    "profiling",
    "protocol_version",
    "pseudo_slave_mode",
    "pseudo_thread_id",
    "query_cache_size",
    "query_cache_type",
    "read_only",
    "rpl_semi_sync_master_enabled",
    "rpl_semi_sync_master_timeout",
    "rpl_semi_sync_master_wait_for_slave_count",
    "rpl_semi_sync_master_wait_no_slave",
    "rpl_semi_sync_master_wait_point",
    "rpl_semi_sync_replica_enabled",
    "rpl_semi_sync_slave_enabled",
    "rpl_semi_sync_source_enabled",
    "rpl_semi_sync_source_timeout",
    "rpl_semi_sync_source_wait_for_replica_count",
    "rpl_semi_sync_source_wait_no_replica",
    "rpl_semi_sync_source_wait_point",
    "secure_file_priv",
    "server_id",
    "server_uuid",
    "session_track_gtids",
    "session_track_schema",
    "session_track_state_change",
    "session_track_system_variables",
    "session_track_transaction_info",
    "slow_query_log",
    "slow_query_log_file",
    "sql_auto_is_null",
    "sql_log_bin",
    "sql_log_off",
    "sql_mode",
    "sql_notes",
    "sql_quote_show_create",
    "sql_safe_updates",
    "sql_select_limit",
    "sql_warnings",
    "storage_engine",
    "super_read_only",
    "sync_binlog",
    "system_time_zone",
    "system_versioning_insert_history",
    "time_zone",
    "transaction_allow_batching",
    "transaction_isolation",
    "transaction_read_only",
    "tx_isolation",
    "tx_read_only",
    "unique_checks",
    "version",
    "version_comment",
    "version_compile_machine",
    "version_compile_os",
    "wait_timeout",
];

pub use crate::types::value::parse_bool;

/// Parses an isolation level name as MySQL accepts it.
pub fn parse_isolation(v: &Value) -> Result<canyon_txn::IsolationLevel> {
    use canyon_txn::IsolationLevel::*;
    let s = v.to_display().to_ascii_uppercase().replace(' ', "-");
    Ok(match s.as_str() {
        "READ-UNCOMMITTED" => ReadUncommitted,
        "READ-COMMITTED" => ReadCommitted,
        "REPEATABLE-READ" => RepeatableRead,
        "SERIALIZABLE" => Serializable,
        _ => {
            return Err(Error::WrongValueForVar {
                name: "transaction_isolation".into(),
                value: v.to_display(),
            })
        }
    })
}

/// The variable value MySQL shows for an isolation level.
pub fn isolation_name(l: canyon_txn::IsolationLevel) -> &'static str {
    use canyon_txn::IsolationLevel::*;
    match l {
        ReadUncommitted => "READ-UNCOMMITTED",
        ReadCommitted => "READ-COMMITTED",
        RepeatableRead => "REPEATABLE-READ",
        Serializable => "SERIALIZABLE",
    }
}

/// The static type a variable's value has (for result-set metadata: MySQL
/// reports `SELECT @@autocommit` as a BIGINT column, and drivers convert by it).
pub fn kind(name: &str) -> crate::types::ExprKind {
    use crate::types::ExprKind;
    let name = name.strip_prefix("global.").unwrap_or(name);
    match name {
        "max_allowed_packet" | "sql_select_limit" | "max_join_size" => ExprKind::UInt,
        "long_query_time" | "expire_logs_days" => ExprKind::Double,
        "autocommit"
        | "transaction_read_only"
        | "tx_read_only"
        | "innodb_lock_wait_timeout"
        | "lock_wait_timeout"
        | "port"
        | "local_infile"
        | "protocol_version"
        | "lower_case_table_names"
        | "max_connections"
        | "wait_timeout"
        | "interactive_timeout"
        | "net_read_timeout"
        | "net_write_timeout"
        | "net_buffer_length"
        | "auto_increment_increment"
        | "auto_increment_offset"
        | "max_execution_time"
        | "max_sp_recursion_depth"
        | "cte_max_recursion_depth"
        | "sql_safe_updates"
        | "sql_auto_is_null"
        | "big_tables"
        | "sql_log_off"
        | "sql_notes"
        | "sql_warnings"
        | "foreign_key_checks"
        | "unique_checks"
        | "performance_schema"
        | "query_cache_size"
        | "div_precision_increment"
        | "group_concat_max_len"
        | "default_week_format"
        | "session_track_schema"
        | "session_track_state_change"
        | "explicit_defaults_for_timestamp"
        | "log_bin"
        | "sql_log_bin"
        | "binlog_expire_logs_seconds"
        | "rpl_semi_sync_source_timeout"
        | "rpl_semi_sync_master_timeout"
        | "rpl_semi_sync_source_wait_for_replica_count"
        | "rpl_semi_sync_master_wait_for_slave_count"
        | "max_binlog_size"
        | "sync_binlog"
        | "log_replica_updates"
        | "log_slave_updates"
        | "server_id"
        | "read_only"
        | "super_read_only"
        | "innodb_flush_log_at_trx_commit"
        | "profiling"
        | "transaction_allow_batching"
        | "warning_count"
        | "error_count" => ExprKind::Int,
        "last_insert_id" | "identity" | "insert_id" => ExprKind::UInt,
        "timestamp" => ExprKind::Double,
        _ => ExprKind::String,
    }
}
