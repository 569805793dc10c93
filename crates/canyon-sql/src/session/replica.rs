//! The replica's statements (`crate::parse::replica_stmts`) and its
//! applier, [`ReplicaApplier`]: a session of the "system user" that applies
//! a source's events in order. The engine-level state (settings, position,
//! status) and why the position is crash-safe are in
//! `crate::catalog::replica`.
//!
//! # Applying a transaction
//!
//! ```text
//! GTID           remember it; a GTID already applied skips the transaction
//! QUERY BEGIN    BEGIN
//! TABLE_MAP      (the applier keeps it)
//! *_ROWS         rows written in the transaction (`super::apply`)
//! XID            the new position rides in the commit's batch; COMMIT
//! QUERY <ddl>    run as the source ran it (its schema and sql_mode); the
//!                position rides in the DDL's catalog batch
//! ROTATE         the source's next file
//! ```
//!
//! A FORMAT_DESCRIPTION in the middle of a transaction means the source
//! restarted before finishing it: the open transaction is rolled back, as
//! MySQL's applier does.

use super::state::*;
use crate::binlog::apply::{Applier, Step};
use crate::catalog::engine::Engine;
use crate::catalog::replica::{self, Applied};
use crate::parse::replica_stmts::{OptionValue, ReplicaStatement};
use crate::types::result::QueryResult;
use crate::types::value::Value;
use canyon_binlog::{Event, GtidSet};
use canyon_common::{Error, Result};
use std::sync::Arc;

/// 1198: CHANGE / RESET while the replica runs.
fn running_replica() -> Error {
    replica_error(
        1198,
        "This operation cannot be performed with a running replica; run STOP REPLICA first",
    )
}

fn replica_error(code: u16, message: impl Into<String>) -> Error {
    Error::Sql {
        code,
        sqlstate: *b"HY000",
        message: message.into(),
    }
}

impl Session {
    /// Runs BINLOG, CHANGE REPLICATION SOURCE, START / STOP / RESET REPLICA.
    pub(super) fn run_replica_statement(&mut self, s: ReplicaStatement) -> Result<QueryResult> {
        if let ReplicaStatement::Binlog(text) = s {
            return self.run_binlog_base64(&text);
        }
        let engine = self.state.engine.clone();
        let cat = engine.catalog();
        // MySQL 8: REPLICATION_SLAVE_ADMIN or SUPER.
        self.state
            .check_super(&cat, "SUPER, REPLICATION_SLAVE_ADMIN")?;
        let rep = &engine.replica;
        let mut control = rep.control.lock();
        if control.running.as_ref().is_some_and(|r| !r.is_running()) {
            // Stopped by itself (an apply error): now it is just stopped.
            if let Some(r) = control.running.take() {
                r.stop();
            }
        }
        match s {
            ReplicaStatement::Binlog(_) => unreachable!("handled above"),
            ReplicaStatement::ChangeSource(opts) => {
                if control.running.is_some() {
                    return Err(running_replica());
                }
                let mut src = control.source.clone().unwrap_or_default();
                let mut position_given = false;
                for (name, v) in opts {
                    let text = || match &v {
                        OptionValue::Text(t) => Ok(t.clone()),
                        OptionValue::Number(_) => Err(Error::Syntax(format!("near '{name}'"))),
                    };
                    let num = || match &v {
                        OptionValue::Number(n) => Ok(*n),
                        OptionValue::Text(_) => Err(Error::Syntax(format!("near '{name}'"))),
                    };
                    match name.as_str() {
                        "SOURCE_HOST" => src.host = text()?,
                        "SOURCE_USER" => src.user = text()?,
                        "SOURCE_PASSWORD" => src.password = text()?,
                        "SOURCE_PORT" => {
                            src.port = u16::try_from(num()?)
                                .map_err(|_| Error::Syntax(format!("near '{name}'")))?
                        }
                        "SOURCE_AUTO_POSITION" => src.auto_position = num()? != 0,
                        "SOURCE_LOG_FILE" => {
                            src.log_file = text()?;
                            position_given = true;
                        }
                        "SOURCE_LOG_POS" => {
                            src.log_pos = num()?;
                            position_given = true;
                        }
                        "SOURCE_CONNECT_RETRY" => src.connect_retry = num()?.max(1),
                        "SOURCE_HEARTBEAT_PERIOD" => src.heartbeat_period = num()? as f64,
                        "SOURCE_SSL" if num()? == 0 => {}
                        "SOURCE_SSL"
                        | "SOURCE_SSL_CA"
                        | "SOURCE_SSL_CERT"
                        | "SOURCE_SSL_KEY"
                        | "SOURCE_SSL_VERIFY_SERVER_CERT"
                        | "GET_SOURCE_PUBLIC_KEY" => {
                            return Err(Error::Unsupported(format!(
                                "{name}: Canyon's replica connects without TLS so far; use \
                                 a mysql_native_password account on a trusted network"
                            )))
                        }
                        other => {
                            return Err(Error::Unsupported(format!(
                                "CHANGE REPLICATION SOURCE option {other}"
                            )))
                        }
                    }
                }
                if src.auto_position && position_given {
                    return Err(replica_error(
                        1777,
                        "Parameters SOURCE_LOG_FILE, SOURCE_LOG_POS, RELAY_LOG_FILE and \
                         RELAY_LOG_POS cannot be set when SOURCE_AUTO_POSITION is active.",
                    ));
                }
                let storage = engine.storage.as_ref();
                if position_given {
                    // Where a position-based replica starts (MySQL: a new
                    // relay log from there). The GTIDs applied stay.
                    let mut a = rep.applied();
                    a.file = src.log_file.clone();
                    a.pos = src.log_pos;
                    rep.store_applied(storage, a)?;
                }
                rep.store_source(storage, &mut control, Some(src))?;
                Ok(ok(0))
            }
            ReplicaStatement::Start => {
                if control.running.is_some() {
                    self.state.warnings.push((
                        "Note",
                        3083,
                        "Replication thread(s) for channel '' are already running.".into(),
                    ));
                    return Ok(ok(0));
                }
                let Some(src) = control.source.clone().filter(|s| !s.host.is_empty()) else {
                    return Err(replica_error(
                        1200,
                        "The server is not configured as replica; fix in config file or with \
                         CHANGE REPLICATION SOURCE TO",
                    ));
                };
                let launcher = rep.launcher().ok_or_else(|| {
                    Error::Unsupported("replication in an engine without a network".into())
                })?;
                let running = launcher.start(src, rep.applied())?;
                control.running = Some(running);
                Ok(ok(0))
            }
            ReplicaStatement::Stop => {
                match control.running.take() {
                    Some(r) => r.stop(),
                    None => self.state.warnings.push((
                        "Note",
                        3084,
                        "Replication thread(s) for channel '' are already stopped.".into(),
                    )),
                }
                Ok(ok(0))
            }
            ReplicaStatement::Reset(all) => {
                if control.running.is_some() {
                    return Err(running_replica());
                }
                // MySQL: RESET REPLICA forgets the position (the next START
                // reads from the start, or by GTID); ALL forgets the source
                // too. gtid_executed keeps what was applied.
                let storage = engine.storage.as_ref();
                let mut a = rep.applied();
                a.file.clear();
                a.pos = 4;
                rep.store_applied(storage, a)?;
                if all {
                    rep.store_source(storage, &mut control, None)?;
                }
                *rep.status.lock() = Default::default();
                Ok(ok(0))
            }
        }
    }

    /// SHOW REPLICA STATUS's row, by column name (`None`: not a replica).
    pub(super) fn replica_status_row(&self, columns: &[&str]) -> Option<Vec<Value>> {
        let engine = &self.state.engine;
        let rep = &engine.replica;
        let (src, running) = {
            let c = rep.control.lock();
            (
                c.source.clone()?,
                c.running.as_ref().is_some_and(|r| r.is_running()),
            )
        };
        let st = rep.status.lock().clone();
        let applied = rep.applied();
        let (io, sql) = if running {
            (
                if st.io_running.is_empty() {
                    "Connecting"
                } else {
                    st.io_running
                },
                "Yes",
            )
        } else {
            ("No", "No")
        };
        let err = |e: &Option<(u16, String, String)>| {
            e.clone().unwrap_or((0, String::new(), String::new()))
        };
        let (io_no, io_msg, io_ts) = err(&st.last_io_error);
        let (sql_no, sql_msg, sql_ts) = err(&st.last_sql_error);
        let executed = engine.binlog.executed(&engine.txn).to_string();
        let s = Value::str;
        let row = columns
            .iter()
            .map(|c| match *c {
                "Replica_IO_State" => s(if running { &st.io_state } else { "" }),
                "Source_Host" => s(&src.host),
                "Source_User" => s(&src.user),
                "Source_Port" => Value::UInt(u64::from(src.port)),
                "Connect_Retry" => Value::UInt(src.connect_retry),
                "Source_Log_File" => s(&st.read_file),
                "Read_Source_Log_Pos" => Value::UInt(st.read_pos),
                "Relay_Log_File" => s(""),
                "Relay_Log_Pos" => Value::UInt(0),
                "Relay_Source_Log_File" => s(&applied.file),
                "Replica_IO_Running" => s(io),
                "Replica_SQL_Running" => s(sql),
                "Last_Errno" | "Last_SQL_Errno" => Value::UInt(u64::from(sql_no)),
                "Last_Error" | "Last_SQL_Error" => s(&sql_msg),
                "Skip_Counter" | "Relay_Log_Space" | "Until_Log_Pos" | "SQL_Delay" => {
                    Value::UInt(0)
                }
                "Exec_Source_Log_Pos" => Value::UInt(applied.pos),
                "Until_Condition" => s("None"),
                "Source_SSL_Allowed" => s("No"),
                "Source_SSL_Verify_Server_Cert" => s("No"),
                "Seconds_Behind_Source" => match (running, st.seconds_behind) {
                    (true, Some(n)) => Value::UInt(n),
                    _ => Value::Null,
                },
                "Last_IO_Errno" => Value::UInt(u64::from(io_no)),
                "Last_IO_Error" => s(&io_msg),
                "Last_IO_Error_Timestamp" => s(&io_ts),
                "Last_SQL_Error_Timestamp" => s(&sql_ts),
                "Source_Server_Id" => Value::UInt(u64::from(st.source_server_id)),
                "Source_UUID" => s(&st.source_uuid),
                "Source_Info_File" => s("mysql.slave_master_info"),
                "SQL_Remaining_Delay" => Value::Null,
                "Replica_SQL_Running_State" => s(if running {
                    "Replica has read all relay log; waiting for more updates"
                } else {
                    ""
                }),
                "Source_Retry_Count" => Value::UInt(86_400),
                "Retrieved_Gtid_Set" => s(&st.retrieved.to_string()),
                "Executed_Gtid_Set" => s(&executed),
                "Auto_Position" => Value::UInt(u64::from(src.auto_position)),
                "Get_Source_public_key" => Value::UInt(0),
                _ => s(""),
            })
            .collect();
        Some(row)
    }
}

/// Applies a source's events in order, as the replica's "system user"
/// session (see the module doc).
pub struct ReplicaApplier {
    session: Session,
    applier: Applier,
    /// The committed position, and the source file being read.
    applied: Applied,
    gtids: GtidSet,
    file: String,
    /// The GTID of the transaction being applied; whether it is skipped
    /// (applied before).
    gtid: Option<(canyon_binlog::Gtid, bool)>,
    /// A transaction is open.
    in_txn: bool,
}

/// What one event did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApplyOutcome {
    /// Nothing was committed.
    Nothing,
    /// A transaction or DDL was committed (or skipped as applied before).
    Committed,
}

impl ReplicaApplier {
    /// An applier on `engine` continuing from `from`.
    pub fn new(engine: Arc<Engine>, from: Applied) -> ReplicaApplier {
        let mut session = Session::new(engine, 0, "system user", "");
        session.state.system = true;
        let gtids = from.gtid_set();
        ReplicaApplier {
            session,
            applier: Applier::new(),
            file: from.file.clone(),
            applied: from,
            gtids,
            gtid: None,
            in_txn: false,
        }
    }

    /// The committed position.
    pub fn position(&self) -> &Applied {
        &self.applied
    }

    /// The source GTIDs applied.
    pub fn gtids(&self) -> &GtidSet {
        &self.gtids
    }

    /// Gives up an open transaction (the connection to the source broke in
    /// its middle: it is read again from the committed position).
    pub fn abandon(&mut self) {
        if self.in_txn {
            let _ = self.session.execute_text("ROLLBACK", false);
        }
        self.in_txn = false;
        self.gtid = None;
        self.session.log_origin = None;
        self.applier.clear_maps();
    }

    fn skipping(&self) -> bool {
        matches!(self.gtid, Some((_, true)))
    }

    fn run(&mut self, sql: &str) -> Result<()> {
        for r in self.session.execute_text(sql, false) {
            r?;
        }
        Ok(())
    }

    /// The position after the event ending at `log_pos`, with the current
    /// transaction's GTID added.
    fn next_position(&self, log_pos: u32) -> (Applied, GtidSet) {
        let mut gtids = self.gtids.clone();
        if let Some((g, _)) = &self.gtid {
            let _ = gtids.add(g.sid, g.gno);
        }
        let a = Applied {
            gtids: gtids.to_string(),
            file: self.file.clone(),
            pos: if log_pos == 0 {
                self.applied.pos
            } else {
                u64::from(log_pos)
            },
        };
        (a, gtids)
    }

    fn committed(&mut self, a: Applied, gtids: GtidSet) {
        let engine = self.session.state.engine.clone();
        engine.binlog.set_others(gtids.clone());
        engine.replica.set_applied(a.clone());
        self.applied = a;
        self.gtids = gtids;
        self.gtid = None;
        self.session.log_origin = None;
        self.in_txn = false;
    }

    /// Applies one framed event of the source's stream.
    pub fn apply(&mut self, raw: &[u8]) -> Result<ApplyOutcome> {
        let step = self.applier.step(raw)?;
        match step {
            Step::None => Ok(ApplyOutcome::Nothing),
            Step::Rows(map, ev) => {
                if !self.skipping() {
                    if !self.in_txn {
                        // Rows without BEGIN (a source that sends none).
                        self.run("BEGIN")?;
                        self.in_txn = true;
                    }
                    self.session.apply_rows_event(&map, &ev)?;
                }
                Ok(ApplyOutcome::Nothing)
            }
            Step::Other(header, ev) => match ev {
                Event::FormatDescription(_) => Ok(ApplyOutcome::Nothing),
                Event::Rotate {
                    next_file,
                    next_pos,
                } => {
                    self.file = next_file;
                    if !self.in_txn {
                        self.applied.file = self.file.clone();
                        self.applied.pos = next_pos;
                    }
                    Ok(ApplyOutcome::Nothing)
                }
                Event::Gtid(g) => {
                    if self.in_txn {
                        // The source restarted in a transaction's middle.
                        self.abandon();
                    }
                    let done = self.gtids.contains(&g.sid, g.gno);
                    // Logged here (with the log on) under its own GTID.
                    self.session.log_origin = Some((g.sid, g.gno));
                    self.gtid = Some((g, done));
                    Ok(ApplyOutcome::Nothing)
                }
                Event::Query(q) => {
                    let text = String::from_utf8_lossy(&q.sql).into_owned();
                    let word = text.trim().to_ascii_uppercase();
                    if word == "BEGIN" {
                        if !self.skipping() {
                            self.run("BEGIN")?;
                            self.in_txn = true;
                        }
                        return Ok(ApplyOutcome::Nothing);
                    }
                    if word == "COMMIT" {
                        return self.commit(header.log_pos);
                    }
                    if word == "ROLLBACK" {
                        self.abandon();
                        return Ok(ApplyOutcome::Nothing);
                    }
                    // A DDL (or another statement the source logged as
                    // text), in its schema.
                    let (a, gtids) = self.next_position(header.log_pos);
                    if !self.skipping() {
                        if !q.db.is_empty() {
                            self.run(&format!("USE `{}`", q.db.replace('`', "``")))?;
                        }
                        // The position rides in the DDL's own catalog
                        // batch where the DDL completes in one change
                        // (`Engine::with_carried_records`); otherwise it is
                        // written right after, synced.
                        let record = vec![(replica::APPLIED_KEY.to_vec(), replica::encode(&a)?)];
                        let (ran, carried) =
                            Engine::with_carried_records(record, || self.run(&text));
                        ran?;
                        abort_after_ddl_for_tests(&text);
                        let engine = self.session.state.engine.clone();
                        if carried {
                            engine.replica.set_applied(a.clone());
                        } else {
                            engine
                                .replica
                                .store_applied(engine.storage.as_ref(), a.clone())?;
                        }
                    }
                    self.committed(a, gtids);
                    Ok(ApplyOutcome::Committed)
                }
                Event::Xid(_) => self.commit(header.log_pos),
                _ => Ok(ApplyOutcome::Nothing),
            },
        }
    }

    fn commit(&mut self, log_pos: u32) -> Result<ApplyOutcome> {
        let (a, gtids) = self.next_position(log_pos);
        if self.skipping() || !self.in_txn {
            // Applied before: only the position moves (kept in memory: the
            // stored one is behind, which reads this transaction again
            // and skips it again).
            self.committed(a, gtids);
            return Ok(ApplyOutcome::Committed);
        }
        let value = replica::encode(&a)?;
        match self.session.txn.as_mut() {
            Some(t) => t.put_meta_on_commit(replica::APPLIED_KEY.to_vec(), value),
            None => {
                return Err(Error::Internal(
                    "replica: COMMIT without a transaction".into(),
                ))
            }
        }
        self.run("COMMIT")?;
        self.committed(a, gtids);
        Ok(ApplyOutcome::Committed)
    }
}

/// A crash test's hook: with `CANYON_TEST_ABORT_AFTER_REPLICA_DDL` set to
/// text a DDL contains, the server aborts right after the applier ran that
/// DDL, before anything else: the moment where a DDL and the replica's
/// position must already be durable together (`tests/replica.rs`). Read
/// only when a DDL is applied.
fn abort_after_ddl_for_tests(ddl: &str) {
    if let Some(v) = std::env::var_os("CANYON_TEST_ABORT_AFTER_REPLICA_DDL") {
        if !v.is_empty() && ddl.contains(v.to_string_lossy().as_ref()) {
            eprintln!("CANYON_TEST_ABORT_AFTER_REPLICA_DDL: aborting after {ddl}");
            std::process::abort();
        }
    }
}
