//! The tables of `performance_schema`: names, MySQL 8.0's columns, and their
//! rows, generated for each statement that reads them (as
//! `information_schema`'s are: `crate::catalog::infoschema`).

use super::stats::{cut, DigestStats, StatementEvent, MAX_SQL_TEXT};
use super::CONSUMERS;
use crate::catalog::infoschema::{GenCtx, Settings};
use crate::types::value::Value;
use crate::types::ExprKind;
use ExprKind::{DateTime as D, String as S, UInt as U};

/// One table of `performance_schema`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerfTable {
    /// Statement statistics by (schema, digest).
    EventsStatementsSummaryByDigest,
    /// Each thread's running (or last) statement.
    EventsStatementsCurrent,
    /// Each thread's last statements.
    EventsStatementsHistory,
    /// One row per connection.
    Threads,
    /// SHOW GLOBAL STATUS.
    GlobalStatus,
    /// SHOW SESSION STATUS.
    SessionStatus,
    /// SHOW GLOBAL VARIABLES.
    GlobalVariables,
    /// SHOW SESSION VARIABLES.
    SessionVariables,
    /// The consumers, switched by UPDATE.
    SetupConsumers,
    /// Row locks held and awaited.
    DataLocks,
    /// Who waits for whom.
    DataLockWaits,
    /// `sys.statement_analysis`: the digest summary, formatted, slowest first.
    SysStatementAnalysis,
    /// `sys.innodb_lock_waits`: each lock wait with both sessions' statements.
    SysInnodbLockWaits,
    /// Row reads and writes per table.
    TableIoWaitsSummaryByTable,
    /// Row reads and writes per (table, index).
    TableIoWaitsSummaryByIndexUsage,
    /// Table and global locks held and awaited (LOCK TABLES, FTWRL).
    MetadataLocks,
    /// `sys.schema_unused_indexes`: secondary indexes never read.
    SysSchemaUnusedIndexes,
    /// `sys.schema_tables_with_full_table_scans`.
    SysSchemaTablesWithFullTableScans,
    /// `sys.statements_with_full_table_scans`.
    SysStatementsWithFullTableScans,
}

impl PerfTable {
    /// Every table, in SHOW TABLES order.
    pub const ALL: [PerfTable; 14] = [
        PerfTable::DataLockWaits,
        PerfTable::DataLocks,
        PerfTable::EventsStatementsCurrent,
        PerfTable::EventsStatementsHistory,
        PerfTable::EventsStatementsSummaryByDigest,
        PerfTable::GlobalStatus,
        PerfTable::GlobalVariables,
        PerfTable::MetadataLocks,
        PerfTable::SessionStatus,
        PerfTable::SessionVariables,
        PerfTable::SetupConsumers,
        PerfTable::TableIoWaitsSummaryByIndexUsage,
        PerfTable::TableIoWaitsSummaryByTable,
        PerfTable::Threads,
    ];

    /// The table's name (lower case, as MySQL names them).
    pub fn name(self) -> &'static str {
        match self {
            PerfTable::EventsStatementsSummaryByDigest => "events_statements_summary_by_digest",
            PerfTable::EventsStatementsCurrent => "events_statements_current",
            PerfTable::EventsStatementsHistory => "events_statements_history",
            PerfTable::Threads => "threads",
            PerfTable::GlobalStatus => "global_status",
            PerfTable::SessionStatus => "session_status",
            PerfTable::GlobalVariables => "global_variables",
            PerfTable::SessionVariables => "session_variables",
            PerfTable::SetupConsumers => "setup_consumers",
            PerfTable::DataLocks => "data_locks",
            PerfTable::DataLockWaits => "data_lock_waits",
            PerfTable::SysStatementAnalysis => "statement_analysis",
            PerfTable::SysInnodbLockWaits => "innodb_lock_waits",
            PerfTable::TableIoWaitsSummaryByTable => "table_io_waits_summary_by_table",
            PerfTable::TableIoWaitsSummaryByIndexUsage => "table_io_waits_summary_by_index_usage",
            PerfTable::MetadataLocks => "metadata_locks",
            PerfTable::SysSchemaUnusedIndexes => "schema_unused_indexes",
            PerfTable::SysSchemaTablesWithFullTableScans => "schema_tables_with_full_table_scans",
            PerfTable::SysStatementsWithFullTableScans => "statements_with_full_table_scans",
        }
    }

    /// The `sys` schema's views served here, in SHOW TABLES order.
    pub const SYS: [PerfTable; 5] = [
        PerfTable::SysInnodbLockWaits,
        PerfTable::SysSchemaTablesWithFullTableScans,
        PerfTable::SysSchemaUnusedIndexes,
        PerfTable::SysStatementAnalysis,
        PerfTable::SysStatementsWithFullTableScans,
    ];

    /// The tables of `db` (`performance_schema` or `sys`; empty for others).
    pub fn tables_of(db: &str) -> &'static [PerfTable] {
        if super::is_perf_schema(db) {
            &Self::ALL
        } else if super::is_sys_schema(db) {
            &Self::SYS
        } else {
            &[]
        }
    }

    /// Looks table `name` of `db` up (case-insensitive).
    pub fn lookup_in(db: &str, name: &str) -> Option<PerfTable> {
        Self::tables_of(db)
            .iter()
            .copied()
            .find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// Looks a performance_schema table up by name (case-insensitive).
    pub fn lookup(name: &str) -> Option<PerfTable> {
        Self::lookup_in(super::NAME, name)
    }

    /// The schema the table is in.
    pub fn schema(self) -> &'static str {
        if Self::SYS.contains(&self) {
            super::SYS
        } else {
            super::NAME
        }
    }

    /// Column names and kinds.
    pub fn columns(self) -> &'static [(&'static str, ExprKind)] {
        match self {
            PerfTable::EventsStatementsSummaryByDigest => SUMMARY_BY_DIGEST,
            PerfTable::EventsStatementsCurrent | PerfTable::EventsStatementsHistory => {
                STATEMENT_EVENTS
            }
            PerfTable::Threads => THREADS,
            PerfTable::GlobalStatus
            | PerfTable::SessionStatus
            | PerfTable::GlobalVariables
            | PerfTable::SessionVariables => NAME_VALUE,
            PerfTable::SetupConsumers => SETUP_CONSUMERS,
            PerfTable::DataLocks => DATA_LOCKS,
            PerfTable::DataLockWaits => DATA_LOCK_WAITS,
            PerfTable::SysStatementAnalysis => STATEMENT_ANALYSIS,
            PerfTable::SysInnodbLockWaits => INNODB_LOCK_WAITS,
            PerfTable::TableIoWaitsSummaryByTable => {
                static BY_TABLE: std::sync::OnceLock<Vec<(&str, ExprKind)>> =
                    std::sync::OnceLock::new();
                BY_TABLE.get_or_init(|| {
                    let mut c = TABLE_IO.to_vec();
                    c.remove(IO_INDEX_NAME);
                    c
                })
            }
            PerfTable::TableIoWaitsSummaryByIndexUsage => TABLE_IO,
            PerfTable::MetadataLocks => METADATA_LOCKS,
            PerfTable::SysSchemaUnusedIndexes => SCHEMA_UNUSED_INDEXES,
            PerfTable::SysSchemaTablesWithFullTableScans => TABLES_WITH_FULL_SCANS,
            PerfTable::SysStatementsWithFullTableScans => STATEMENTS_WITH_FULL_SCANS,
        }
    }

    /// Whether MySQL lets UPDATE write some of its columns (its ACL is
    /// `PFS_updatable_acl`): other writes there fail with 1683, not 1142.
    pub fn updatable(self) -> bool {
        matches!(self, PerfTable::Threads | PerfTable::SetupConsumers)
    }

    /// Whether TRUNCATE TABLE resets it (MySQL: the summary tables).
    pub fn truncatable(self) -> bool {
        matches!(
            self,
            PerfTable::EventsStatementsSummaryByDigest
                | PerfTable::EventsStatementsHistory
                | PerfTable::EventsStatementsCurrent
                | PerfTable::TableIoWaitsSummaryByTable
                | PerfTable::TableIoWaitsSummaryByIndexUsage
        )
    }
}

/// Where INDEX_NAME is in [`TABLE_IO`] (by_table has no such column).
const IO_INDEX_NAME: usize = 3;

/// `table_io_waits_summary_by_index_usage`'s columns; by_table's are these
/// without INDEX_NAME.
const TABLE_IO: &[(&str, ExprKind)] = &[
    ("OBJECT_TYPE", S),
    ("OBJECT_SCHEMA", S),
    ("OBJECT_NAME", S),
    ("INDEX_NAME", S),
    ("COUNT_STAR", U),
    ("SUM_TIMER_WAIT", U),
    ("MIN_TIMER_WAIT", U),
    ("AVG_TIMER_WAIT", U),
    ("MAX_TIMER_WAIT", U),
    ("COUNT_READ", U),
    ("SUM_TIMER_READ", U),
    ("MIN_TIMER_READ", U),
    ("AVG_TIMER_READ", U),
    ("MAX_TIMER_READ", U),
    ("COUNT_WRITE", U),
    ("SUM_TIMER_WRITE", U),
    ("MIN_TIMER_WRITE", U),
    ("AVG_TIMER_WRITE", U),
    ("MAX_TIMER_WRITE", U),
    ("COUNT_FETCH", U),
    ("SUM_TIMER_FETCH", U),
    ("MIN_TIMER_FETCH", U),
    ("AVG_TIMER_FETCH", U),
    ("MAX_TIMER_FETCH", U),
    ("COUNT_INSERT", U),
    ("SUM_TIMER_INSERT", U),
    ("MIN_TIMER_INSERT", U),
    ("AVG_TIMER_INSERT", U),
    ("MAX_TIMER_INSERT", U),
    ("COUNT_UPDATE", U),
    ("SUM_TIMER_UPDATE", U),
    ("MIN_TIMER_UPDATE", U),
    ("AVG_TIMER_UPDATE", U),
    ("MAX_TIMER_UPDATE", U),
    ("COUNT_DELETE", U),
    ("SUM_TIMER_DELETE", U),
    ("MIN_TIMER_DELETE", U),
    ("AVG_TIMER_DELETE", U),
    ("MAX_TIMER_DELETE", U),
];

const METADATA_LOCKS: &[(&str, ExprKind)] = &[
    ("OBJECT_TYPE", S),
    ("OBJECT_SCHEMA", S),
    ("OBJECT_NAME", S),
    ("COLUMN_NAME", S),
    ("OBJECT_INSTANCE_BEGIN", U),
    ("LOCK_TYPE", S),
    ("LOCK_DURATION", S),
    ("LOCK_STATUS", S),
    ("SOURCE", S),
    ("OWNER_THREAD_ID", U),
    ("OWNER_EVENT_ID", U),
];

const SCHEMA_UNUSED_INDEXES: &[(&str, ExprKind)] =
    &[("object_schema", S), ("object_name", S), ("index_name", S)];

const TABLES_WITH_FULL_SCANS: &[(&str, ExprKind)] = &[
    ("object_schema", S),
    ("object_name", S),
    ("rows_full_scanned", U),
    ("latency", S),
];

const STATEMENTS_WITH_FULL_SCANS: &[(&str, ExprKind)] = &[
    ("query", S),
    ("db", S),
    ("exec_count", U),
    ("total_latency", S),
    ("no_index_used_count", U),
    ("no_good_index_used_count", U),
    ("no_index_used_pct", U),
    ("rows_sent", U),
    ("rows_examined", U),
    ("rows_sent_avg", U),
    ("rows_examined_avg", U),
    ("first_seen", D),
    ("last_seen", D),
    ("digest", S),
];

const NAME_VALUE: &[(&str, ExprKind)] = &[("VARIABLE_NAME", S), ("VARIABLE_VALUE", S)];

const SETUP_CONSUMERS: &[(&str, ExprKind)] = &[("NAME", S), ("ENABLED", S)];

const DATA_LOCKS: &[(&str, ExprKind)] = &[
    ("ENGINE", S),
    ("ENGINE_LOCK_ID", S),
    ("ENGINE_TRANSACTION_ID", U),
    ("THREAD_ID", U),
    ("EVENT_ID", U),
    ("OBJECT_SCHEMA", S),
    ("OBJECT_NAME", S),
    ("PARTITION_NAME", S),
    ("SUBPARTITION_NAME", S),
    ("INDEX_NAME", S),
    ("OBJECT_INSTANCE_BEGIN", U),
    ("LOCK_TYPE", S),
    ("LOCK_MODE", S),
    ("LOCK_STATUS", S),
    ("LOCK_DATA", S),
];

const STATEMENT_ANALYSIS: &[(&str, ExprKind)] = &[
    ("query", S),
    ("db", S),
    ("full_scan", S),
    ("exec_count", U),
    ("err_count", U),
    ("warn_count", U),
    ("total_latency", S),
    ("max_latency", S),
    ("avg_latency", S),
    ("lock_latency", S),
    ("cpu_latency", S),
    ("rows_sent", U),
    ("rows_sent_avg", U),
    ("rows_examined", U),
    ("rows_examined_avg", U),
    ("rows_affected", U),
    ("rows_affected_avg", U),
    ("tmp_tables", U),
    ("tmp_disk_tables", U),
    ("rows_sorted", U),
    ("sort_merge_passes", U),
    ("max_controlled_memory", S),
    ("max_total_memory", S),
    ("digest", S),
    ("first_seen", D),
    ("last_seen", D),
];

const INNODB_LOCK_WAITS: &[(&str, ExprKind)] = &[
    ("wait_started", D),
    ("wait_age", S),
    ("wait_age_secs", U),
    ("locked_table", S),
    ("locked_table_schema", S),
    ("locked_table_name", S),
    ("locked_table_partition", S),
    ("locked_table_subpartition", S),
    ("locked_index", S),
    ("locked_type", S),
    ("waiting_trx_id", U),
    ("waiting_trx_started", D),
    ("waiting_trx_age", S),
    ("waiting_trx_rows_locked", U),
    ("waiting_trx_rows_modified", U),
    ("waiting_pid", U),
    ("waiting_query", S),
    ("waiting_lock_id", S),
    ("waiting_lock_mode", S),
    ("blocking_trx_id", U),
    ("blocking_pid", U),
    ("blocking_query", S),
    ("blocking_lock_id", S),
    ("blocking_lock_mode", S),
    ("blocking_trx_started", D),
    ("blocking_trx_age", S),
    ("blocking_trx_rows_locked", U),
    ("blocking_trx_rows_modified", U),
    ("sql_kill_blocking_query", S),
    ("sql_kill_blocking_connection", S),
];

const DATA_LOCK_WAITS: &[(&str, ExprKind)] = &[
    ("ENGINE", S),
    ("REQUESTING_ENGINE_LOCK_ID", S),
    ("REQUESTING_ENGINE_TRANSACTION_ID", U),
    ("REQUESTING_THREAD_ID", U),
    ("REQUESTING_EVENT_ID", U),
    ("REQUESTING_OBJECT_INSTANCE_BEGIN", U),
    ("BLOCKING_ENGINE_LOCK_ID", S),
    ("BLOCKING_ENGINE_TRANSACTION_ID", U),
    ("BLOCKING_THREAD_ID", U),
    ("BLOCKING_EVENT_ID", U),
    ("BLOCKING_OBJECT_INSTANCE_BEGIN", U),
];

const SUMMARY_BY_DIGEST: &[(&str, ExprKind)] = &[
    ("SCHEMA_NAME", S),
    ("DIGEST", S),
    ("DIGEST_TEXT", S),
    ("COUNT_STAR", U),
    ("SUM_TIMER_WAIT", U),
    ("MIN_TIMER_WAIT", U),
    ("AVG_TIMER_WAIT", U),
    ("MAX_TIMER_WAIT", U),
    ("SUM_LOCK_TIME", U),
    ("SUM_ERRORS", U),
    ("SUM_WARNINGS", U),
    ("SUM_ROWS_AFFECTED", U),
    ("SUM_ROWS_SENT", U),
    ("SUM_ROWS_EXAMINED", U),
    ("SUM_CREATED_TMP_DISK_TABLES", U),
    ("SUM_CREATED_TMP_TABLES", U),
    ("SUM_SELECT_FULL_JOIN", U),
    ("SUM_SELECT_FULL_RANGE_JOIN", U),
    ("SUM_SELECT_RANGE", U),
    ("SUM_SELECT_RANGE_CHECK", U),
    ("SUM_SELECT_SCAN", U),
    ("SUM_SORT_MERGE_PASSES", U),
    ("SUM_SORT_RANGE", U),
    ("SUM_SORT_ROWS", U),
    ("SUM_SORT_SCAN", U),
    ("SUM_NO_INDEX_USED", U),
    ("SUM_NO_GOOD_INDEX_USED", U),
    ("SUM_CPU_TIME", U),
    ("MAX_CONTROLLED_MEMORY", U),
    ("MAX_TOTAL_MEMORY", U),
    ("COUNT_SECONDARY", U),
    ("FIRST_SEEN", D),
    ("LAST_SEEN", D),
    ("QUANTILE_95", U),
    ("QUANTILE_99", U),
    ("QUANTILE_999", U),
    ("QUERY_SAMPLE_TEXT", S),
    ("QUERY_SAMPLE_SEEN", D),
    ("QUERY_SAMPLE_TIMER_WAIT", U),
];

const STATEMENT_EVENTS: &[(&str, ExprKind)] = &[
    ("THREAD_ID", U),
    ("EVENT_ID", U),
    ("END_EVENT_ID", U),
    ("EVENT_NAME", S),
    ("SOURCE", S),
    ("TIMER_START", U),
    ("TIMER_END", U),
    ("TIMER_WAIT", U),
    ("LOCK_TIME", U),
    ("SQL_TEXT", S),
    ("DIGEST", S),
    ("DIGEST_TEXT", S),
    ("CURRENT_SCHEMA", S),
    ("OBJECT_TYPE", S),
    ("OBJECT_SCHEMA", S),
    ("OBJECT_NAME", S),
    ("OBJECT_INSTANCE_BEGIN", U),
    ("MYSQL_ERRNO", ExprKind::Int),
    ("RETURNED_SQLSTATE", S),
    ("MESSAGE_TEXT", S),
    ("ERRORS", U),
    ("WARNINGS", U),
    ("ROWS_AFFECTED", U),
    ("ROWS_SENT", U),
    ("ROWS_EXAMINED", U),
    ("CREATED_TMP_DISK_TABLES", U),
    ("CREATED_TMP_TABLES", U),
    ("SELECT_FULL_JOIN", U),
    ("SELECT_FULL_RANGE_JOIN", U),
    ("SELECT_RANGE", U),
    ("SELECT_RANGE_CHECK", U),
    ("SELECT_SCAN", U),
    ("SORT_MERGE_PASSES", U),
    ("SORT_RANGE", U),
    ("SORT_ROWS", U),
    ("SORT_SCAN", U),
    ("NO_INDEX_USED", U),
    ("NO_GOOD_INDEX_USED", U),
    ("NESTING_EVENT_ID", U),
    ("NESTING_EVENT_TYPE", S),
    ("NESTING_EVENT_LEVEL", ExprKind::Int),
    ("STATEMENT_ID", U),
    ("CPU_TIME", U),
    ("MAX_CONTROLLED_MEMORY", U),
    ("MAX_TOTAL_MEMORY", U),
    ("EXECUTION_ENGINE", S),
];

const THREADS: &[(&str, ExprKind)] = &[
    ("THREAD_ID", U),
    ("NAME", S),
    ("TYPE", S),
    ("PROCESSLIST_ID", U),
    ("PROCESSLIST_USER", S),
    ("PROCESSLIST_HOST", S),
    ("PROCESSLIST_DB", S),
    ("PROCESSLIST_COMMAND", S),
    ("PROCESSLIST_TIME", ExprKind::Int),
    ("PROCESSLIST_STATE", S),
    ("PROCESSLIST_INFO", S),
    ("PARENT_THREAD_ID", U),
    ("ROLE", S),
    ("INSTRUMENTED", S),
    ("HISTORY", S),
    ("CONNECTION_TYPE", S),
    ("THREAD_OS_ID", U),
    ("RESOURCE_GROUP", S),
    ("EXECUTION_ENGINE", S),
    ("CONTROLLED_MEMORY", U),
    ("MAX_CONTROLLED_MEMORY", U),
    ("TOTAL_MEMORY", U),
    ("MAX_TOTAL_MEMORY", U),
];

fn s(x: &str) -> Value {
    Value::str(x)
}

fn u(x: u64) -> Value {
    Value::UInt(x)
}

fn opt(x: Option<&str>) -> Value {
    x.map_or(Value::Null, s)
}

/// A time in µs since the Unix epoch, in the reader's time zone.
fn seen(g: &GenCtx<'_>, us: i64) -> Value {
    match chrono::DateTime::from_timestamp_micros(us) {
        Some(t) if us > 0 && us < i64::MAX => Value::DateTime(g.time_zone.from_utc(t.naive_utc())),
        _ => Value::Null,
    }
}

fn digest_row(g: &GenCtx<'_>, r: &DigestStats) -> Vec<Value> {
    let ps = |ns: u64| u(ns.saturating_mul(1000));
    let avg = r.sum_ns.checked_div(r.count).unwrap_or(0);
    let mut row = vec![
        opt(r.schema.as_deref()),
        r.digest.as_ref().map_or(Value::Null, |d| s(&d.hex())),
        r.digest.as_ref().map_or(Value::Null, |d| s(&d.text)),
        u(r.count),
        ps(r.sum_ns),
        ps(if r.count == 0 { 0 } else { r.min_ns }),
        ps(avg),
        ps(r.max_ns),
        ps(r.lock_ns),
        u(r.errors),
        u(r.warnings),
        u(r.rows_affected),
        u(r.rows_sent),
        u(r.rows_examined),
    ];
    // SUM_CREATED_TMP_DISK_TABLES .. SUM_SORT_SCAN: not measured.
    row.extend(std::iter::repeat_n(u(0), 11));
    row.push(u(r.no_index_used));
    // SUM_NO_GOOD_INDEX_USED .. COUNT_SECONDARY: not measured.
    row.extend(std::iter::repeat_n(u(0), 5));
    row.extend([
        seen(g, r.first_seen_us),
        seen(g, r.last_seen_us),
        ps(r.quantile_ns(0.95)),
        ps(r.quantile_ns(0.99)),
        ps(r.quantile_ns(0.999)),
        s(&r.sample),
        seen(g, r.sample_seen_us),
        ps(r.sample_ns),
    ]);
    row
}

/// The row of a finished statement event.
fn event_row(thread: u64, e: &StatementEvent) -> Vec<Value> {
    let mut row = vec![
        u(thread),
        u(e.event_id),
        u(e.event_id),
        s(&format!("statement/sql/{}", e.command)),
        s(""),
        u(e.start_ps),
        u(e.end_ps),
        u(e.end_ps - e.start_ps),
        u(e.lock_ns.saturating_mul(1000)),
        s(&e.text),
        e.digest.as_ref().map_or(Value::Null, |d| s(&d.hex())),
        e.digest.as_ref().map_or(Value::Null, |d| s(&d.text)),
        opt(e.schema.as_deref()),
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        // MYSQL_ERRNO, RETURNED_SQLSTATE: Canyon's session keeps the message only.
        Value::Int(0),
        if e.errors > 0 {
            s("HY000")
        } else {
            Value::Null
        },
        opt(e.message.as_deref()),
        u(e.errors),
        u(e.warnings),
        u(e.rows_affected),
        u(e.rows_sent),
        u(e.rows_examined),
    ];
    // CREATED_TMP_DISK_TABLES .. SORT_SCAN: not measured.
    row.extend(std::iter::repeat_n(u(0), 11));
    row.extend([u(u64::from(e.no_index_used)), u(0)]);
    row.extend([
        Value::Null,
        Value::Null,
        Value::Int(0),
        Value::Null,
        u(0),
        u(0),
        u(0),
        s("PRIMARY"),
    ]);
    row
}

/// The rows of `table`.
pub fn generate(table: PerfTable, g: &GenCtx<'_>, out: &mut Vec<Vec<Value>>) {
    let perf = &g.registry.perf;
    // MySQL needs SELECT on performance_schema; Canyon shows every thread's
    // digests and locks to an account with global privileges (PROCESSLIST's
    // rule) and, to any other, what its own sessions did.
    let see_all = g
        .account
        .is_some_and(|a| a.allows_global(crate::catalog::privileges::Privs::PROCESS));
    // The sessions the account may see (PROCESSLIST's rule), with their entries.
    let visible = || {
        let ids: std::collections::HashSet<u32> = (g.processes)().iter().map(|p| p.id).collect();
        let mut all = g.registry.all();
        all.retain(|p| ids.contains(&p.id));
        all
    };
    match table {
        PerfTable::EventsStatementsSummaryByDigest => {
            let procs = if see_all { g.registry.all() } else { visible() };
            for r in perf.summary(procs.iter().map(|p| &p.perf), see_all) {
                out.push(digest_row(g, &r));
            }
        }
        PerfTable::EventsStatementsHistory => {
            for p in visible() {
                let t = p.perf.lock();
                for e in t.history() {
                    out.push(event_row(u64::from(p.id), e));
                }
            }
        }
        PerfTable::EventsStatementsCurrent => {
            // Read before any thread's statistics are locked: a session locks
            // its process entry, then its statistics (`Process::record_statement`).
            let running: std::collections::HashMap<u32, (String, Option<String>)> = (g.processes)()
                .into_iter()
                .filter(|p| p.running)
                .map(|p| (p.id, (p.info, p.db)))
                .collect();
            for p in visible() {
                let t = p.perf.lock();
                match running.get(&p.id) {
                    Some((text, db)) => {
                        let mut row = vec![Value::Null; STATEMENT_EVENTS.len()];
                        row[0] = u(u64::from(p.id));
                        row[1] = u(t.last_event_id + 1);
                        row[3] = s(&format!("statement/sql/{}", super::stats::command_of(text)));
                        row[4] = s("");
                        row[9] = s(cut(text, MAX_SQL_TEXT));
                        let d = super::digest::digest(text);
                        row[10] = s(&d.hex());
                        row[11] = s(&d.text);
                        row[12] = opt(db.as_deref());
                        row[45] = s("PRIMARY");
                        out.push(row);
                    }
                    None => {
                        if let Some(e) = t.last_event() {
                            out.push(event_row(u64::from(p.id), e));
                        }
                    }
                }
            }
        }
        PerfTable::Threads => {
            for p in (g.processes)() {
                let mut row = vec![
                    u(u64::from(p.id)),
                    s("thread/sql/one_connection"),
                    s("FOREGROUND"),
                    u(u64::from(p.id)),
                    s(&p.user),
                    s(&p.host),
                    opt(p.db.as_deref()),
                    s(if p.running { "Query" } else { "Sleep" }),
                    Value::Int(p.time),
                    if p.running {
                        s("executing")
                    } else {
                        Value::Null
                    },
                    if p.running { s(&p.info) } else { Value::Null },
                    Value::Null,
                    Value::Null,
                    s("YES"),
                    s("YES"),
                    s("TCP/IP"),
                    Value::Null,
                    s("USR_default"),
                    s("PRIMARY"),
                ];
                row.extend(std::iter::repeat_n(u(0), 4));
                out.push(row);
            }
        }
        PerfTable::GlobalStatus
        | PerfTable::SessionStatus
        | PerfTable::GlobalVariables
        | PerfTable::SessionVariables => {
            let which = match table {
                PerfTable::GlobalStatus => Settings::Status(true),
                PerfTable::SessionStatus => Settings::Status(false),
                PerfTable::GlobalVariables => Settings::Variables(true),
                _ => Settings::Variables(false),
            };
            // MySQL 8 names them as SHOW STATUS / SHOW VARIABLES do (not
            // upper-cased as information_schema's).
            for (name, value) in (g.settings)(which) {
                out.push(vec![s(&name), s(&value)]);
            }
        }
        PerfTable::DataLocks | PerfTable::DataLockWaits | PerfTable::SysInnodbLockWaits => {
            lock_rows(table, g, see_all, out)
        }
        PerfTable::SysStatementAnalysis => {
            let procs = if see_all { g.registry.all() } else { visible() };
            let mut rows = perf.summary(procs.iter().map(|p| &p.perf), see_all);
            rows.sort_by_key(|r| std::cmp::Reverse(r.sum_ns));
            for r in &rows {
                out.push(statement_analysis_row(g, r));
            }
        }
        PerfTable::TableIoWaitsSummaryByTable
        | PerfTable::TableIoWaitsSummaryByIndexUsage
        | PerfTable::SysSchemaUnusedIndexes
        | PerfTable::SysSchemaTablesWithFullTableScans => io_rows(table, g, out),
        PerfTable::MetadataLocks => metadata_lock_rows(g, see_all, out),
        PerfTable::SysStatementsWithFullTableScans => {
            let procs = if see_all { g.registry.all() } else { visible() };
            let mut rows: Vec<DigestStats> = perf
                .summary(procs.iter().map(|p| &p.perf), see_all)
                .into_iter()
                .filter(|r| {
                    r.no_index_used > 0
                        && !r.digest.as_ref().is_some_and(|d| {
                            d.text
                                .get(..4)
                                .is_some_and(|w| w.eq_ignore_ascii_case("SHOW"))
                        })
                })
                .collect();
            let pct = |r: &DigestStats| (r.no_index_used * 100 + r.count / 2) / r.count.max(1);
            rows.sort_by_key(|r| std::cmp::Reverse((pct(r), r.sum_ns)));
            let avg = |r: &DigestStats, sum: u64| {
                u(((sum as f64) / (r.count.max(1) as f64)).round() as u64)
            };
            for r in &rows {
                out.push(vec![
                    r.digest
                        .as_ref()
                        .map_or(Value::Null, |d| s(&format_statement(&d.text))),
                    opt(r.schema.as_deref()),
                    u(r.count),
                    s(&format_pico_time(r.sum_ns.saturating_mul(1000))),
                    u(r.no_index_used),
                    u(0),
                    u(pct(r)),
                    u(r.rows_sent),
                    u(r.rows_examined),
                    avg(r, r.rows_sent),
                    avg(r, r.rows_examined),
                    seen(g, r.first_seen_us),
                    seen(g, r.last_seen_us),
                    r.digest.as_ref().map_or(Value::Null, |d| s(&d.hex())),
                ]);
            }
        }
        PerfTable::SetupConsumers => {
            for (name, _) in CONSUMERS {
                out.push(vec![
                    s(name),
                    s(if perf.consumer(name) { "YES" } else { "NO" }),
                ]);
            }
        }
    }
    debug_assert!(
        out.iter().all(|r| r.len() == table.columns().len()),
        "every row of {} has the table's width",
        table.name()
    );
}

/// The table I/O tables and the sys views over them. Every index of every
/// base table has its row in by_index_usage (zero until read), as MySQL
/// shows the indexes of every table it has opened: that is what
/// `sys.schema_unused_indexes` looks for. The system schemas are left out.
fn io_rows(table: PerfTable, g: &GenCtx<'_>, out: &mut Vec<Vec<Value>>) {
    use super::io::{IoCounts, IoKey};
    use std::collections::BTreeMap;
    let counted: std::collections::HashMap<IoKey, IoCounts> = g
        .registry
        .perf
        .table_io(g.registry.all().iter().map(|p| &p.perf))
        .into_iter()
        .collect();
    // (db, table) -> its index rows, in the table's index order: the
    // full-scan row (NULL) last, as MySQL lists it.
    let mut tables: BTreeMap<(String, String), Vec<(Option<String>, IoCounts)>> = BTreeMap::new();
    for (db, d) in &g.catalog.databases {
        if crate::catalog::infoschema::is_system_schema(db) || db == "mysql" {
            continue;
        }
        for t in d.tables.values() {
            let def = &t.def;
            let mut names: Vec<Option<String>> = Vec::new();
            if !def.primary_key.is_empty() {
                names.push(Some("PRIMARY".into()));
            }
            names.extend(def.indexes.iter().map(|x| Some(x.name.clone())));
            names.push(None);
            let rows = names
                .into_iter()
                .map(|n| {
                    let key = IoKey {
                        db: db.as_str().into(),
                        table: def.name.as_str().into(),
                        index: n.as_deref().map(Into::into),
                    };
                    let c = counted.get(&key).copied().unwrap_or_default();
                    (n, c)
                })
                .collect();
            tables.insert((db.clone(), def.name.clone()), rows);
        }
    }
    let counts_row = |c: &IoCounts| {
        // The timers are not measured (see `super::io`): 0.
        let mut v = Vec::with_capacity(35);
        for n in [
            c.star(),
            c.fetch,
            c.write(),
            c.fetch,
            c.insert,
            c.update,
            c.delete,
        ] {
            v.push(u(n));
            v.extend(std::iter::repeat_n(u(0), 4));
        }
        v
    };
    for ((db, name), rows) in &tables {
        match table {
            PerfTable::TableIoWaitsSummaryByTable => {
                let mut sum = IoCounts::default();
                for (_, c) in rows {
                    sum.merge(c);
                }
                let mut row = vec![s("TABLE"), s(db), s(name)];
                row.extend(counts_row(&sum));
                out.push(row);
            }
            PerfTable::TableIoWaitsSummaryByIndexUsage => {
                for (index, c) in rows {
                    let mut row = vec![s("TABLE"), s(db), s(name), opt(index.as_deref())];
                    row.extend(counts_row(c));
                    out.push(row);
                }
            }
            PerfTable::SysSchemaUnusedIndexes => {
                for (index, c) in rows {
                    if let Some(i) = index.as_deref().filter(|i| *i != "PRIMARY") {
                        if c.star() == 0 {
                            out.push(vec![s(db), s(name), s(i)]);
                        }
                    }
                }
            }
            _ => {
                if let Some((_, c)) = rows.iter().find(|(i, c)| i.is_none() && c.fetch > 0) {
                    out.push(vec![s(db), s(name), u(c.fetch), s(&format_pico_time(0))]);
                }
            }
        }
    }
    if table == PerfTable::SysSchemaTablesWithFullTableScans {
        out.sort_by_key(|r| std::cmp::Reverse(r[2].to_i64().unwrap_or(0)));
    }
}

/// `metadata_locks`: the table locks Canyon takes, which are the holders of
/// `crate::catalog::table_locks` — LOCK TABLES (and FLUSH TABLES t WITH READ
/// LOCK) as TABLE locks, FTWRL as the GLOBAL and COMMIT locks MySQL's takes
/// — granted or pending. A statement's own table use takes no lock in
/// Canyon (see the module essay in `super`), so it has no row.
fn metadata_lock_rows(g: &GenCtx<'_>, see_all: bool, out: &mut Vec<Vec<Value>>) {
    let threads: std::collections::HashMap<u64, u64> = g
        .registry
        .all()
        .iter()
        .map(|p| (std::sync::Arc::as_ptr(p) as usize as u64, u64::from(p.id)))
        .collect();
    let own: std::collections::HashSet<u64> =
        (g.processes)().iter().map(|p| u64::from(p.id)).collect();
    for h in g.table_locks.holders() {
        let thread = threads.get(&h.owner).copied();
        if !see_all && !thread.is_some_and(|t| own.contains(&t)) {
            continue;
        }
        let status = if h.granted { "GRANTED" } else { "PENDING" };
        let row = |ty: &str, db: Value, name: Value, lock: &str| {
            vec![
                s(ty),
                db,
                name,
                Value::Null,
                u(0),
                s(lock),
                s("EXPLICIT"),
                s(status),
                s(""),
                thread.map_or(Value::Null, u),
                Value::Null,
            ]
        };
        if h.global {
            out.push(row("GLOBAL", Value::Null, Value::Null, "SHARED"));
            out.push(row("COMMIT", Value::Null, Value::Null, "SHARED"));
        }
        for t in &h.tables {
            // MySQL 8's LOCK TABLES: READ is SHARED_READ_ONLY, WRITE
            // SHARED_NO_READ_WRITE.
            let lock = if t.write {
                "SHARED_NO_READ_WRITE"
            } else {
                "SHARED_READ_ONLY"
            };
            out.push(row("TABLE", s(&t.db), s(&t.name), lock));
        }
    }
}

/// The tables and unique indexes of `catalog` by id, each with its
/// database (and the index its name): what [`describe_key`] resolves a lock
/// key's id against.
#[allow(clippy::type_complexity)] // two plain maps; an alias would only hide them
pub(crate) fn key_maps(
    catalog: &crate::catalog::Catalog,
) -> (
    std::collections::HashMap<u32, (&str, &crate::catalog::Table)>,
    std::collections::HashMap<u32, (&str, &crate::catalog::Table, &str)>,
) {
    let mut tables = std::collections::HashMap::new();
    let mut indexes = std::collections::HashMap::new();
    for (db, d) in &catalog.databases {
        for t in d.tables.values() {
            tables.insert(t.def.id, (db.as_str(), &**t));
            for x in &t.def.indexes {
                indexes.insert(x.id, (db.as_str(), &**t, x.name.as_str()));
            }
        }
    }
    (tables, indexes)
}

/// A lock key as data_locks names it: (schema, table, index, LOCK_DATA).
/// Keys are `crate::exec`'s row locks (`r` + table id + primary key) and
/// unique-value locks (`u` + index id + key value).
pub(crate) fn describe_key(
    key: &[u8],
    tables: &std::collections::HashMap<u32, (&str, &crate::catalog::Table)>,
    indexes: &std::collections::HashMap<u32, (&str, &crate::catalog::Table, &str)>,
) -> (Value, Value, Value, Value) {
    let hex = |b: &[u8]| {
        let mut h = String::from("0x");
        for x in b {
            h.push_str(&format!("{x:02X}"));
        }
        s(&h)
    };
    let id = key
        .get(1..5)
        .map(|b| u32::from_be_bytes(b.try_into().expect("four bytes")));
    let rest = key.get(5..).unwrap_or_default();
    match (key.first(), id) {
        (Some(b'r'), Some(id)) => match tables.get(&id) {
            Some((db, t)) => {
                // An integer primary key shows as its value, as InnoDB's
                // LOCK_DATA does; other keys (sort keys, not reversible) in hex.
                let unsigned = match t.def.primary_key.as_slice() {
                    [c] => t.def.columns[*c]
                        .ty
                        .is_integer()
                        .then(|| t.def.columns[*c].ty.is_unsigned()),
                    [] => Some(true),
                    _ => None,
                };
                let data = unsigned
                    .and_then(|u| crate::types::encoding::decode_key_int(rest, u))
                    .filter(|_| rest.len() == 9)
                    .map_or_else(|| hex(rest), |n| s(&n.to_string()));
                (s(db), s(&t.def.name), s("PRIMARY"), data)
            }
            None => (Value::Null, Value::Null, Value::Null, hex(key)),
        },
        (Some(b'u'), Some(id)) => match indexes.get(&id) {
            Some((db, t, index)) => (s(db), s(&t.def.name), s(index), hex(rest)),
            None => (Value::Null, Value::Null, Value::Null, hex(key)),
        },
        _ => (Value::Null, Value::Null, Value::Null, hex(key)),
    }
}

/// ENGINE_LOCK_ID: the transaction and a hash of the key (so that a wait
/// names the lock rows it involves).
fn lock_id(txn: u64, key: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{txn}:{h:016x}")
}

/// The rows of `data_locks` (one per held lock, one per waiter) or
/// `data_lock_waits` (one per waiter).
fn lock_rows(table: PerfTable, g: &GenCtx<'_>, see_all: bool, out: &mut Vec<Vec<Value>>) {
    let (tables, indexes) = key_maps(g.catalog);
    let threads: std::collections::HashMap<u64, u64> = g
        .registry
        .all()
        .iter()
        .filter_map(|p| p.txn().map(|t| (t, u64::from(p.id))))
        .collect();
    let thread = |txn: u64| threads.get(&txn).map_or(Value::Null, |&id| u(id));
    let listed = (g.processes)();
    let own: std::collections::HashSet<u64> = listed.iter().map(|p| u64::from(p.id)).collect();
    // Each listed session's running statement (sys.innodb_lock_waits' *_query).
    let queries: std::collections::HashMap<u64, Option<String>> = listed
        .into_iter()
        .map(|p| (u64::from(p.id), p.running.then_some(p.info)))
        .collect();
    // Transaction keys (`t ++ id`: a wait for another transaction's end, how
    // a range lock waits) are not row locks; they are not listed.
    let mut locks: Vec<canyon_txn::HeldLock> = (g.locks)()
        .into_iter()
        .filter(|l| l.key.first() != Some(&b't'))
        .collect();
    if !see_all {
        // Only the locks the account's own sessions hold or await.
        let mine = |txn: u64| threads.get(&txn).is_some_and(|id| own.contains(id));
        locks
            .retain(|l| l.holders.iter().any(|h| mine(h.0)) || l.waiters.iter().any(|w| mine(w.0)));
    }
    locks.sort_by(|a, b| {
        let first = |l: &canyon_txn::HeldLock| l.holders.first().map(|h| h.0);
        (first(a), &a.key).cmp(&(first(b), &b.key))
    });
    let mode_of = |m: canyon_txn::LockMode| format!("{},REC_NOT_GAP", m.letter());
    for l in &locks {
        let (db, name, index, data) = describe_key(&l.key, &tables, &indexes);
        let row = |txn: u64, mode: canyon_txn::LockMode, status: &str| {
            vec![
                s("INNODB"),
                s(&lock_id(txn, &l.key)),
                u(txn),
                thread(txn),
                Value::Null,
                db.clone(),
                name.clone(),
                Value::Null,
                Value::Null,
                index.clone(),
                u(0),
                s("RECORD"),
                s(&mode_of(mode)),
                s(status),
                data.clone(),
            ]
        };
        // Each waiter with each holder whose mode conflicts with its own.
        let waits = l.waiters.iter().flat_map(|&(w, wm)| {
            l.holders
                .iter()
                .filter(move |&&(h, hm)| h != w && !hm.compatible(wm))
                .map(move |&(h, hm)| ((w, wm), (h, hm)))
        });
        match table {
            PerfTable::SysInnodbLockWaits => {
                let q = |txn: u64| {
                    threads
                        .get(&txn)
                        .and_then(|id| queries.get(id))
                        .map_or(Value::Null, |q| q.as_deref().map_or(Value::Null, s))
                };
                let locked_table = match (&db, &name) {
                    (Value::Null, _) | (_, Value::Null) => Value::Null,
                    (d, n) => s(&format!("`{}`.`{}`", d.to_display(), n.to_display())),
                };
                for ((w, wm), (h, hm)) in waits {
                    let blocking = threads.get(&h);
                    out.push(vec![
                        Value::Null,
                        Value::Null,
                        Value::Null,
                        locked_table.clone(),
                        db.clone(),
                        name.clone(),
                        Value::Null,
                        Value::Null,
                        index.clone(),
                        s("RECORD"),
                        u(w),
                        Value::Null,
                        Value::Null,
                        Value::Null,
                        Value::Null,
                        thread(w),
                        q(w),
                        s(&lock_id(w, &l.key)),
                        s(&mode_of(wm)),
                        u(h),
                        thread(h),
                        q(h),
                        s(&lock_id(h, &l.key)),
                        s(&mode_of(hm)),
                        Value::Null,
                        Value::Null,
                        Value::Null,
                        Value::Null,
                        blocking.map_or(Value::Null, |id| s(&format!("KILL QUERY {id}"))),
                        blocking.map_or(Value::Null, |id| s(&format!("KILL {id}"))),
                    ]);
                }
            }
            PerfTable::DataLocks => {
                out.extend(l.holders.iter().map(|&(h, m)| row(h, m, "GRANTED")));
                out.extend(l.waiters.iter().map(|&(w, m)| row(w, m, "WAITING")));
            }
            _ => {
                for ((w, _), (h, _)) in waits {
                    out.push(vec![
                        s("INNODB"),
                        s(&lock_id(w, &l.key)),
                        u(w),
                        thread(w),
                        Value::Null,
                        u(0),
                        s(&lock_id(h, &l.key)),
                        u(h),
                        thread(h),
                        Value::Null,
                        u(0),
                    ]);
                }
            }
        }
    }
}

/// sys's `format_pico_time()` (MySQL 8's FORMAT_PICO_TIME): `1.23 ms`.
pub fn format_pico_time(ps: u64) -> String {
    let v = ps as f64;
    let (n, unit) = if ps < 1_000 {
        return format!("{ps} ps");
    } else if v < 1e6 {
        (v / 1e3, "ns")
    } else if v < 1e9 {
        (v / 1e6, "us")
    } else if v < 1e12 {
        (v / 1e9, "ms")
    } else if v < 60e12 {
        (v / 1e12, "s")
    } else if v < 3600e12 {
        (v / 60e12, "min")
    } else if v < 86400e12 {
        (v / 3600e12, "h")
    } else {
        (v / 86400e12, "d")
    };
    format!("{n:.2} {unit}")
}

/// sys's `format_statement()`: a digest text longer than
/// `statement_truncate_len` (64) keeps its first and last 30 characters.
fn format_statement(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= 64 {
        return text.to_string();
    }
    let head: String = chars[..30].iter().collect();
    let tail: String = chars[chars.len() - 30..].iter().collect();
    format!("{head} ... {tail}")
}

/// A row of `sys.statement_analysis`.
fn statement_analysis_row(g: &GenCtx<'_>, r: &DigestStats) -> Vec<Value> {
    let avg = |sum: u64| u(((sum as f64) / (r.count.max(1) as f64)).round() as u64);
    let ps = |ns: u64| s(&format_pico_time(ns.saturating_mul(1000)));
    vec![
        r.digest
            .as_ref()
            .map_or(Value::Null, |d| s(&format_statement(&d.text))),
        opt(r.schema.as_deref()),
        // sys: '*' when SUM_NO_INDEX_USED or SUM_NO_GOOD_INDEX_USED > 0.
        s(if r.no_index_used > 0 { "*" } else { "" }),
        u(r.count),
        u(r.errors),
        u(r.warnings),
        ps(r.sum_ns),
        ps(r.max_ns),
        ps(r.sum_ns.checked_div(r.count).unwrap_or(0)),
        ps(r.lock_ns),
        ps(0),
        u(r.rows_sent),
        avg(r.rows_sent),
        u(r.rows_examined),
        avg(r.rows_examined),
        u(r.rows_affected),
        avg(r.rows_affected),
        u(0),
        u(0),
        u(0),
        u(0),
        s("0 bytes"),
        s("0 bytes"),
        r.digest.as_ref().map_or(Value::Null, |d| s(&d.hex())),
        seen(g, r.first_seen_us),
        seen(g, r.last_seen_us),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pico_time_as_sys_formats_it() {
        assert_eq!(format_pico_time(999), "999 ps");
        assert_eq!(format_pico_time(1_234_000), "1.23 us");
        assert_eq!(format_pico_time(45_670_000_000), "45.67 ms");
        assert_eq!(format_pico_time(90_000_000_000_000), "1.50 min");
    }

    #[test]
    fn long_statements_keep_both_ends() {
        let t = format!("SELECT {} FROM `t`", "`a` , ".repeat(20));
        let f = format_statement(&t);
        assert_eq!(f.chars().count(), 65);
        assert!(f.starts_with("SELECT `a`") && f.ends_with("FROM `t`") && f.contains(" ... "));
    }
}
