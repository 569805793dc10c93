//! The session's side of the binary log (`crate::binlog`): turning its
//! transactions' journals on, handing the commit its record, logging DDL,
//! and the statements that show and manage the log (SHOW MASTER STATUS,
//! SHOW BINARY LOGS, SHOW BINLOG EVENTS, FLUSH BINARY LOGS, PURGE BINARY
//! LOGS).

use super::state::*;
use crate::binlog::StatementContext;
use crate::catalog::binlog::StartAt;
use crate::parse::binlog_stmts::BinlogStatement;
use crate::parse::Parsed;
use crate::types::result::QueryResult;
use crate::types::value::Value;
use crate::types::ExprKind;
use canyon_common::{Error, Result};
use canyon_txn::Transaction;
use sqlparser::ast::{self, Statement};

/// MySQL's `sql_mode` bits (`sql_mode` in a QUERY event's status).
const SQL_MODE_BITS: &[(&str, u64)] = &[
    ("REAL_AS_FLOAT", 1),
    ("PIPES_AS_CONCAT", 1 << 1),
    ("ANSI_QUOTES", 1 << 2),
    ("IGNORE_SPACE", 1 << 3),
    ("ONLY_FULL_GROUP_BY", 1 << 5),
    ("NO_UNSIGNED_SUBTRACTION", 1 << 6),
    ("NO_DIR_IN_CREATE", 1 << 7),
    ("ANSI", 1 << 18),
    ("NO_AUTO_VALUE_ON_ZERO", 1 << 19),
    ("NO_BACKSLASH_ESCAPES", 1 << 20),
    ("STRICT_TRANS_TABLES", 1 << 21),
    ("STRICT_ALL_TABLES", 1 << 22),
    ("NO_ZERO_IN_DATE", 1 << 23),
    ("NO_ZERO_DATE", 1 << 24),
    ("ALLOW_INVALID_DATES", 1 << 25),
    ("ERROR_FOR_DIVISION_BY_ZERO", 1 << 26),
    ("TRADITIONAL", 1 << 27),
    ("HIGH_NOT_PRECEDENCE", 1 << 29),
    ("NO_ENGINE_SUBSTITUTION", 1 << 30),
    ("PAD_CHAR_TO_FULL_LENGTH", 1 << 31),
    ("TIME_TRUNCATE_FRACTIONAL", 1 << 32),
];

/// MySQL's bits as `sql_mode` text; `None` for a negative number or a bit
/// MySQL 8 has no mode for.
pub(super) fn sql_mode_names(bits: i64) -> Option<String> {
    let bits = u64::try_from(bits).ok()?;
    let known = SQL_MODE_BITS.iter().fold(0, |a, (_, b)| a | b);
    if bits & !known != 0 {
        return None;
    }
    Some(
        SQL_MODE_BITS
            .iter()
            .filter(|(_, b)| bits & b != 0)
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// `sql_mode` text as MySQL's bits (names it does not know are dropped).
pub(super) fn sql_mode_bits(text: &str) -> u64 {
    text.split(',')
        .map(str::trim)
        .filter_map(|m| {
            SQL_MODE_BITS
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(m))
                .map(|(_, b)| *b)
        })
        .fold(0, |a, b| a | b)
}

impl State {
    /// Whether this session's changes go to the binary log: the log is on
    /// and `sql_log_bin` is not 0.
    pub(super) fn logging(&self) -> bool {
        self.engine.binlog.enabled()
            && !matches!(self.vars.get("sql_log_bin"), Some(v) if v.to_i64() == Some(0))
    }

    /// Turns `t`'s journal on when this session logs.
    pub(super) fn journal(&self, t: &mut Transaction) {
        if self.logging() {
            t.enable_journal();
        }
    }

    /// What a QUERY event of this session carries.
    pub(super) fn statement_context(&self) -> StatementContext {
        let var = |n: &str| self.get_var(n).ok().map(|v| v.to_display());
        let conn = self.connection_collation().id();
        let server = var("collation_server")
            .and_then(|n| crate::types::collation::Collation::from_name(&n))
            .map_or(conn, |c| c.id());
        let zone = var("time_zone").filter(|z| !z.eq_ignore_ascii_case("SYSTEM"));
        let off = |n: &str| matches!(self.get_var(n), Ok(v) if v.to_i64() == Some(0));
        StatementContext {
            thread_id: self.connection_id,
            db: self.db.clone().unwrap_or_default(),
            sql_mode: var("sql_mode").map_or(0, |m| sql_mode_bits(&m)),
            charset: (conn, conn, server),
            time_zone: zone,
            no_foreign_key_checks: off("foreign_key_checks"),
            relaxed_unique_checks: off("unique_checks"),
        }
    }
}

impl Session {
    /// Before `t` commits or prepares: its journal becomes its change-log
    /// record.
    pub(super) fn attach_log(&self, t: &mut Transaction) -> Result<()> {
        if !t.journaling() {
            return Ok(());
        }
        let cat = self.state.engine.catalog();
        crate::binlog::attach(
            &self.state.engine.binlog,
            &cat,
            t,
            &self.state.statement_context(),
            self.log_origin,
        )
    }

    /// After a DDL statement succeeded: logs its text, when it is one a
    /// replica must run (MySQL's row format logs DDL as statements; a
    /// TEMPORARY table's is not logged).
    pub(super) fn log_ddl(&self, parsed: &Parsed, sql: &str, whole_request: bool) -> Result<()> {
        match self.ddl_text(parsed, sql, whole_request)? {
            Some(text) => crate::binlog::log_statement(
                &self.state.engine.binlog,
                &self.state.engine.txn,
                &self.state.statement_context(),
                text.as_bytes(),
                self.log_origin,
            )
            .map(|ts| self.note_logged(ts)),
            None => Ok(()),
        }
    }

    /// The text the binary log records for `parsed`, if it logs it; checked
    /// before the statement runs, so that a DDL the log could not record is
    /// refused (1235) before it takes effect, never after.
    pub(super) fn ddl_text(
        &self,
        parsed: &Parsed,
        sql: &str,
        whole_request: bool,
    ) -> Result<Option<String>> {
        if !self.state.logging() || !logged_ddl(parsed) {
            return Ok(None);
        }
        Ok(Some(match (whole_request, parsed) {
            (true, _) if !sql.trim().is_empty() => {
                let t = sql.trim();
                t.strip_suffix(';').unwrap_or(t).to_string()
            }
            (_, Parsed::Sql(s)) => s.to_string(),
            // A DDL form Canyon parses itself, inside a request of several
            // statements or prepared: its text is not at hand.
            _ => {
                return Err(canyon_common::Error::Unsupported(
                    "this DDL statement with the binary log on, unless sent as a request of \
                     its own"
                        .into(),
                ))
            }
        }))
    }
}

impl Session {
    /// Logs `sql` as a statement of its own, when this session logs.
    pub(super) fn log_text(&self, sql: &str) -> Result<()> {
        if !self.state.logging() {
            return Ok(());
        }
        crate::binlog::log_statement(
            &self.state.engine.binlog,
            &self.state.engine.txn,
            &self.state.statement_context(),
            sql.as_bytes(),
            self.log_origin,
        )
        .map(|ts| self.note_logged(ts))
    }

    /// Notes that this request wrote a log record committed at `ts`: the
    /// server answers it only after semi-synchronous replicas acknowledged
    /// it ([`Session::take_replication_wait`]).
    pub(super) fn note_logged(&self, ts: Option<canyon_txn::Timestamp>) {
        if let Some(ts) = ts {
            self.replication_wait
                .fetch_max(ts, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// The newest log record the requests since the last call committed
    /// (`None`: none). Semi-synchronous replication
    /// (`crate::catalog::binlog::semisync`): the server awaits enough
    /// replicas' acknowledgements of it before it answers.
    pub fn take_replication_wait(&mut self) -> Option<canyon_txn::Timestamp> {
        match self
            .replication_wait
            .swap(0, std::sync::atomic::Ordering::Relaxed)
        {
            0 => None,
            ts => Some(ts),
        }
    }

    /// Logs the CREATE TABLE that re-creates `db`.`t` (SHOW CREATE TABLE's
    /// text): the first half of a CREATE ... SELECT's record.
    pub(super) fn log_created_table(&mut self, db: &str, t: &str) -> Result<()> {
        if !self.state.logging() {
            return Ok(());
        }
        let cat = self.state.engine.catalog();
        let name = ast::ObjectName::from(vec![ast::Ident::new(db), ast::Ident::new(t)]);
        let QueryResult::Rows { rows, .. } = self.show_create_table(&cat, &name)? else {
            return Err(Error::Internal("SHOW CREATE TABLE gave no rows".into()));
        };
        let text = rows
            .first()
            .and_then(|r| r.get(1))
            .map(Value::to_display)
            .ok_or_else(|| Error::Internal("SHOW CREATE TABLE gave no text".into()))?;
        // SHOW CREATE TABLE names the table alone; the replica may be in
        // another database.
        let quote = |n: &str| format!("`{}`", n.replace('`', "``"));
        let bare = format!("CREATE TABLE {} ", quote(t));
        let text = match text.strip_prefix(&bare) {
            Some(rest) => format!("CREATE TABLE {}.{} {rest}", quote(db), quote(t)),
            None => text,
        };
        self.log_text(&text)
    }
}

/// The statements the binary log records as text.
fn logged_ddl(parsed: &Parsed) -> bool {
    match parsed {
        Parsed::Sql(s) => match s.as_ref() {
            Statement::CreateTable(c) => !c.temporary,
            Statement::Drop { temporary, .. } => !temporary,
            Statement::CreateDatabase { .. }
            | Statement::CreateSchema { .. }
            | Statement::CreateIndex(..)
            | Statement::AlterTable(..)
            | Statement::RenameTable(..)
            | Statement::Truncate(..) => true,
            _ => false,
        },
        Parsed::CreateUser { .. }
        | Parsed::AlterUser { .. }
        | Parsed::Grant { .. }
        | Parsed::Revoke { .. }
        | Parsed::DropUser { .. }
        | Parsed::AlterDatabase { .. }
        | Parsed::CreatePartitioned { .. }
        | Parsed::AlterPartition { .. }
        | Parsed::View(_) => true,
        _ => false,
    }
}

/// `SHOW BINLOG EVENTS`' Info column for one event.
fn event_info(ev: &canyon_binlog::Event) -> String {
    use canyon_binlog::Event;
    match ev {
        Event::FormatDescription(f) => {
            format!(
                "Server ver: {}, Binlog ver: {}",
                f.server_version, f.binlog_version
            )
        }
        Event::Rotate {
            next_pos,
            next_file,
        } => format!("{next_file};pos={next_pos}"),
        Event::PreviousGtids(s) => s.to_string(),
        Event::Gtid(g) => format!(
            "SET @@SESSION.GTID_NEXT= '{}:{}'",
            canyon_binlog::gtid::format_uuid(&g.sid),
            g.gno
        ),
        Event::Query(q) => {
            let sql = String::from_utf8_lossy(&q.sql);
            if q.db.is_empty() {
                sql.into_owned()
            } else {
                format!("use `{}`; {sql}", q.db)
            }
        }
        Event::Xid(x) => format!("COMMIT /* xid={x} */"),
        Event::TableMap(t) => format!("table_id: {} ({}.{})", t.table_id, t.db, t.table),
        Event::Rows(r) => {
            let mut s = format!("table_id: {}", r.table_id);
            if r.flags & 1 != 0 {
                s.push_str(" flags: STMT_END_F");
            }
            s
        }
        _ => String::new(),
    }
}

impl Session {
    /// Runs one of the binary log's statements
    /// ([`crate::parse::binlog_stmts`]).
    pub(super) fn run_binlog_statement(&mut self, stmt: &BinlogStatement) -> Result<QueryResult> {
        let cat = self.state.engine.catalog();
        let engine = self.state.engine.clone();
        let log = &engine.binlog;
        let txn = &engine.txn;
        let needs_log = || -> Result<()> {
            if log.enabled() {
                Ok(())
            } else {
                Err(Error::Sql {
                    code: 1381,
                    sqlstate: *b"HY000",
                    message: "You are not using binary logging".into(),
                })
            }
        };
        match stmt {
            BinlogStatement::MasterStatus => {
                self.state.check_super(&cat, "REPLICATION CLIENT")?;
                let rows = if log.enabled() {
                    let (file, pos) = log.end(txn);
                    vec![vec![
                        Value::str(&file.name),
                        Value::UInt(pos),
                        Value::str(""),
                        Value::str(""),
                        Value::str(&log.executed(txn).to_string()),
                    ]]
                } else {
                    Vec::new()
                };
                Ok(typed_rows(
                    &[
                        ("File", ExprKind::String),
                        ("Position", ExprKind::UInt),
                        ("Binlog_Do_DB", ExprKind::String),
                        ("Binlog_Ignore_DB", ExprKind::String),
                        ("Executed_Gtid_Set", ExprKind::String),
                    ],
                    rows,
                ))
            }
            BinlogStatement::ReplicaStatus(replica) => {
                // MySQL 8's columns (SHOW SLAVE STATUS: their older names);
                // on a server that is no replica the empty set, from which
                // monitoring (mysqld_exporter's slave_status collector)
                // reads "no replication".
                self.state.check_super(&cat, "REPLICATION CLIENT")?;
                let names: Vec<String> = REPLICA_STATUS_COLUMNS
                    .iter()
                    .map(|c| {
                        if *replica {
                            c.to_string()
                        } else {
                            c.replace("Get_Source", "Get_master")
                                .replace("Source_public", "Master_public")
                                .replace("Replica", "Slave")
                                .replace("Source", "Master")
                        }
                    })
                    .collect();
                let columns: Vec<(&str, ExprKind)> = names
                    .iter()
                    .map(|n| (n.as_str(), ExprKind::String))
                    .collect();
                // A replica's row (`super::replica`); none on a server that
                // follows no source.
                let rows = self
                    .replica_status_row(REPLICA_STATUS_COLUMNS)
                    .into_iter()
                    .collect();
                Ok(typed_rows(&columns, rows))
            }
            BinlogStatement::Logs => {
                self.state.check_super(&cat, "REPLICATION CLIENT")?;
                needs_log()?;
                let rows = log
                    .sizes(txn)
                    .into_iter()
                    .map(|(name, size)| {
                        vec![Value::str(&name), Value::UInt(size), Value::str("No")]
                    })
                    .collect();
                Ok(typed_rows(
                    &[
                        ("Log_name", ExprKind::String),
                        ("File_size", ExprKind::UInt),
                        ("Encrypted", ExprKind::String),
                    ],
                    rows,
                ))
            }
            BinlogStatement::Events {
                file,
                from,
                offset,
                limit,
            } => {
                self.state.check_super(&cat, "REPLICATION SLAVE")?;
                let files = log.files();
                let name = match file {
                    Some(f) => f.clone(),
                    None => match files.first() {
                        Some(f) => f.name.clone(),
                        None => return Ok(events_result(Vec::new())),
                    },
                };
                let start = StartAt::Position {
                    file: name.clone(),
                    pos: from.unwrap_or(4),
                };
                let mut reader = log.reader(txn, &start, true).map_err(|e| match e {
                    Error::Sql {
                        code: 1236,
                        message,
                        ..
                    } => Error::Sql {
                        code: 1220,
                        sqlstate: *b"HY000",
                        message: format!(
                            "Error when executing command SHOW BINLOG EVENTS: {message}"
                        ),
                    },
                    e => e,
                })?;
                let mut rows = Vec::new();
                let mut skipped = 0;
                'read: loop {
                    let events = log.read(txn, &mut reader, 1 << 20)?;
                    if events.is_empty() {
                        break;
                    }
                    for ev in events {
                        let Ok((h, body)) = canyon_binlog::parse_event(&ev, true) else {
                            continue;
                        };
                        if h.flags & canyon_binlog::event::LOG_EVENT_ARTIFICIAL_F != 0
                            || h.log_pos == 0
                        {
                            // The reader's opening ROTATE and a description
                            // repeated mid-file: not in the file.
                            continue;
                        }
                        let pos = u64::from(h.log_pos) - u64::from(h.event_size);
                        if skipped < *offset {
                            skipped += 1;
                            continue;
                        }
                        if limit.is_some_and(|l| rows.len() as u64 >= l) {
                            break 'read;
                        }
                        let is_rotate = h.type_code == canyon_binlog::EventType::ROTATE;
                        rows.push(vec![
                            Value::str(&name),
                            Value::UInt(pos),
                            Value::str(h.type_code.name()),
                            Value::UInt(u64::from(h.server_id)),
                            Value::UInt(u64::from(h.log_pos)),
                            Value::str(&event_info(&body)),
                        ]);
                        if is_rotate {
                            // The file ends with its ROTATE.
                            break 'read;
                        }
                    }
                }
                Ok(events_result(rows))
            }
            BinlogStatement::Flush => {
                self.state.check_super(&cat, "RELOAD")?;
                log.rotate(txn, engine.storage.as_ref())?;
                Ok(ok(0))
            }
            BinlogStatement::PurgeTo(name) => {
                self.state.check_super(&cat, "SUPER")?;
                needs_log()?;
                let purged = log.purge_to(txn, engine.storage.as_ref(), name)?;
                self.warn_purge_held(&purged);
                Ok(ok(0))
            }
            BinlogStatement::PurgeBefore(when) => {
                self.state.check_super(&cat, "SUPER")?;
                needs_log()?;
                let Some(t) = crate::types::datetime::parse_temporal(when.as_bytes()) else {
                    return Err(Error::WrongValueForVar {
                        name: "PURGE BINARY LOGS BEFORE".into(),
                        value: when.clone(),
                    });
                };
                // The files every later one of which was created before
                // `when` hold only older events: purge up to the first file
                // created at or after it (never the current file).
                let cutoff = t.dt.and_utc().timestamp_micros().max(0) as u64;
                let files = log.files();
                let keep = files
                    .iter()
                    .skip(1)
                    .find(|f| f.created_us >= cutoff)
                    .or(files.last())
                    .map(|f| f.name.clone());
                if let Some(keep) = keep {
                    let purged = log.purge_to(txn, engine.storage.as_ref(), &keep)?;
                    self.warn_purge_held(&purged);
                }
                Ok(ok(0))
            }
        }
    }
}

fn events_result(rows: Vec<Vec<Value>>) -> QueryResult {
    typed_rows(
        &[
            ("Log_name", ExprKind::String),
            ("Pos", ExprKind::UInt),
            ("Event_type", ExprKind::String),
            ("Server_id", ExprKind::UInt),
            ("End_log_pos", ExprKind::UInt),
            ("Info", ExprKind::String),
        ],
        rows,
    )
}

/// A replica's dump in progress on this session's connection
/// (COM_BINLOG_DUMP / COM_BINLOG_DUMP_GTID): what the server loops over.
pub struct Dump {
    engine: std::sync::Arc<crate::catalog::engine::Engine>,
    reader: crate::catalog::binlog::BinlogReader,
    /// A semi-synchronous replica's place among the acknowledging ones.
    acks: Option<crate::catalog::binlog::semisync::ReplicaAcks>,
}

impl std::fmt::Debug for Dump {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dump")
            .field("reader", &self.reader)
            .finish()
    }
}

impl Dump {
    /// The next events (framed, each one packet's payload after its 0x00
    /// byte); empty when the replica has everything visible so far.
    pub fn read(&mut self) -> Result<Vec<Vec<u8>>> {
        self.engine
            .binlog
            .read(&self.engine.txn, &mut self.reader, 256 << 10)
    }

    /// Completes when there may be more to read.
    pub fn changed(&self) -> impl std::future::Future<Output = ()> + '_ {
        self.engine.txn.log_changed(self.reader.next_seq())
    }

    /// A HEARTBEAT event at the reader's position.
    pub fn heartbeat(&self) -> Vec<u8> {
        self.engine.binlog.heartbeat(&self.reader)
    }

    /// Whether the replica set `@rpl_semi_sync_slave` (or
    /// `@rpl_semi_sync_replica`): every packet then carries the
    /// semi-synchronous header (`crate::catalog::binlog::semisync`).
    pub fn semi_sync(&self) -> bool {
        self.acks.is_some()
    }

    /// Whether transaction ends should ask for an acknowledgement now.
    pub fn asking(&self) -> bool {
        self.acks.as_ref().is_some_and(|a| a.asking())
    }

    /// Where the transactions of the last [`Dump::read`] end (empty unless
    /// [`Dump::semi_sync`]).
    pub fn take_ack_points(&mut self) -> Vec<crate::catalog::binlog::AckPoint> {
        self.reader.take_ack_points()
    }

    /// The replica acknowledged the record committed at `ts`.
    pub fn acknowledged(&self, ts: canyon_txn::Timestamp) {
        if let Some(a) = &self.acks {
            a.acknowledged(ts);
        }
    }
}

impl Session {
    /// Starts a replica's dump from `start`: checks REPLICATION SLAVE, that
    /// the log is on and that the replica's `server_id` is not this server's
    /// (1236, as MySQL). A replica that set `@mariadb_slave_capability` gets
    /// MariaDB's events (`crate::catalog::binlog`'s `mariadb.rs`), from
    /// `@slave_connect_state` when it set that. Checksums follow the replica's
    /// `@master_binlog_checksum` (MySQL's handshake: a replica that set it
    /// to anything but NONE gets CRC32s).
    pub fn start_dump(&mut self, start: &StartAt, replica_server_id: u32) -> Result<Dump> {
        let cat = self.state.engine.catalog();
        self.state.check_super(&cat, "REPLICATION SLAVE")?;
        let engine = self.state.engine.clone();
        if !engine.binlog.enabled() {
            return Err(crate::catalog::binlog::fatal_1236("Binary log is not open"));
        }
        if replica_server_id == engine.binlog.server_id() {
            return Err(crate::catalog::binlog::fatal_1236(
                "Fatal error: The replica I/O thread stops because source and replica have equal \
                 MySQL server ids; these ids must be different for replication to work",
            ));
        }
        let checksum = match self.state.user_vars.get("master_binlog_checksum") {
            Some(Value::Null) | None => false,
            Some(v) => !v.to_display().eq_ignore_ascii_case("NONE"),
        };
        // A MariaDB replica announces itself before its dump; with
        // MASTER_USE_GTID it names its position in @slave_connect_state
        // and sends an empty file name, which the state overrides (as
        // MariaDB's source does).
        // python-mysql-replication sets the capability too, for any source,
        // and reads MySQL's events from a MySQL-versioned one: there a
        // MariaDB replica is told apart by what it always sets besides (a
        // heartbeat period, or its GTID position). Under `presentation =
        // "mariadb"` the server's version says MariaDB, so every reader
        // that announces the capability gets MariaDB's events, as from
        // MariaDB itself — `mariadb-binlog --read-from-remote-server` sets
        // nothing else, and python-mysql-replication reads MariaDB's events
        // from a server whose version names MariaDB.
        let set =
            |n: &str| matches!(self.state.user_vars.get(n), Some(v) if !matches!(v, Value::Null));
        let presents_mariadb =
            engine.config().presentation == crate::catalog::config::Presentation::Mariadb;
        let mariadb = set("mariadb_slave_capability")
            && (presents_mariadb || set("master_heartbeat_period") || set("slave_connect_state"));
        let (flavor, start) = if mariadb {
            let start = match self.state.user_vars.get("slave_connect_state") {
                Some(Value::Null) | None => start.clone(),
                Some(v) => engine.binlog.mariadb_start(&v.to_display())?,
            };
            (canyon_binlog::control::Flavor::MariaDb, start)
        } else {
            (canyon_binlog::control::Flavor::MySql, start.clone())
        };
        let mut reader = engine
            .binlog
            .reader_for(&engine.txn, &start, checksum, flavor)?;
        // MySQL 8.0.26+'s replica sets the first, older ones and MariaDB's
        // the second.
        let semi_sync = ["rpl_semi_sync_replica", "rpl_semi_sync_slave"]
            .iter()
            .any(|v| match self.state.user_vars.get(*v) {
                Some(Value::Null) | None => false,
                Some(v) => v.to_i64().unwrap_or(0) != 0,
            });
        let acks = semi_sync.then(|| {
            reader.note_ack_points();
            engine.binlog.semi_sync().join()
        });
        Ok(Dump {
            engine,
            reader,
            acks,
        })
    }

    /// `@master_heartbeat_period` as the replica set it (nanoseconds, as
    /// MySQL's replicas send it), if it did.
    pub fn heartbeat_period(&self) -> Option<std::time::Duration> {
        let v = self.state.user_vars.get("master_heartbeat_period")?;
        let ns = v.to_display().parse::<f64>().ok()?;
        (ns > 0.0).then(|| std::time::Duration::from_nanos(ns as u64))
    }
}

impl Session {
    /// MySQL's warning 1867 (ER_WARN_PURGE_LOG_IN_USE) when a purge stopped
    /// before a file a replica reads (`crate::catalog::binlog`'s
    /// `retention.rs`, rule 2).
    fn warn_purge_held(&mut self, purged: &crate::catalog::binlog::Purged) {
        if let Some((file, asked)) = &purged.held {
            self.warning(
                1867,
                format!(
                    "file {file} was not purged because it is being read by a replica; \
                     purged only {} out of {asked} files.",
                    purged.removed
                ),
            );
        }
    }

    /// START TRANSACTION WITH CONSISTENT SNAPSHOT took its snapshot at
    /// `ts`: keeps the binary-log coordinates it corresponds to, for
    /// `Binlog_snapshot_file` / `_position` (MariaDB's status variables,
    /// which `mariadb-dump --single-transaction --master-data` reads instead
    /// of locking every table).
    pub(super) fn note_binlog_snapshot(&mut self, ts: canyon_txn::Timestamp) -> Result<()> {
        let engine = self.state.engine.clone();
        self.state.binlog_snapshot = if engine.binlog.enabled() {
            Some(engine.binlog.snapshot_at(&engine.txn, ts)?)
        } else {
            None
        };
        Ok(())
    }

    /// The binary log's text-valued status variables: `Binlog_snapshot_file`
    /// and `Binlog_snapshot_position` (MariaDB's), the open consistent
    /// snapshot's coordinates in this session, else (and globally) where the
    /// log ends now; `Binlog_snapshot_gtid_pos`, their GTID position. None
    /// while the log is off.
    pub(super) fn binlog_status_rows(&self, global: bool) -> Vec<(String, String)> {
        let engine = &self.state.engine;
        let log = &engine.binlog;
        if !log.enabled() {
            return Vec::new();
        }
        let snap = match (&self.state.binlog_snapshot, &self.txn, global) {
            (Some(s), Some(_), false) => s.clone(),
            _ => {
                let (file, position) = log.end(&engine.txn);
                crate::catalog::binlog::Snapshot {
                    file: file.name,
                    position,
                    last_number: engine.txn.log_head().next_number.saturating_sub(1),
                }
            }
        };
        vec![
            ("Binlog_snapshot_file".into(), snap.file),
            ("Binlog_snapshot_position".into(), snap.position.to_string()),
            (
                "Binlog_snapshot_gtid_pos".into(),
                log.mariadb_gtid_pos(snap.last_number),
            ),
        ]
    }
}

/// SHOW REPLICA STATUS's columns in MySQL 8.0.
const REPLICA_STATUS_COLUMNS: &[&str] = &[
    "Replica_IO_State",
    "Source_Host",
    "Source_User",
    "Source_Port",
    "Connect_Retry",
    "Source_Log_File",
    "Read_Source_Log_Pos",
    "Relay_Log_File",
    "Relay_Log_Pos",
    "Relay_Source_Log_File",
    "Replica_IO_Running",
    "Replica_SQL_Running",
    "Replicate_Do_DB",
    "Replicate_Ignore_DB",
    "Replicate_Do_Table",
    "Replicate_Ignore_Table",
    "Replicate_Wild_Do_Table",
    "Replicate_Wild_Ignore_Table",
    "Last_Errno",
    "Last_Error",
    "Skip_Counter",
    "Exec_Source_Log_Pos",
    "Relay_Log_Space",
    "Until_Condition",
    "Until_Log_File",
    "Until_Log_Pos",
    "Source_SSL_Allowed",
    "Source_SSL_CA_File",
    "Source_SSL_CA_Path",
    "Source_SSL_Cert",
    "Source_SSL_Cipher",
    "Source_SSL_Key",
    "Seconds_Behind_Source",
    "Source_SSL_Verify_Server_Cert",
    "Last_IO_Errno",
    "Last_IO_Error",
    "Last_SQL_Errno",
    "Last_SQL_Error",
    "Replicate_Ignore_Server_Ids",
    "Source_Server_Id",
    "Source_UUID",
    "Source_Info_File",
    "SQL_Delay",
    "SQL_Remaining_Delay",
    "Replica_SQL_Running_State",
    "Source_Retry_Count",
    "Source_Bind",
    "Last_IO_Error_Timestamp",
    "Last_SQL_Error_Timestamp",
    "Source_SSL_Crl",
    "Source_SSL_Crlpath",
    "Retrieved_Gtid_Set",
    "Executed_Gtid_Set",
    "Auto_Position",
    "Replicate_Rewrite_DB",
    "Channel_Name",
    "Source_TLS_Version",
    "Source_public_key_path",
    "Get_Source_public_key",
    "Network_Namespace",
];
