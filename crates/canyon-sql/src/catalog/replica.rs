//! Canyon as a replica: the source it follows, where its applier is, and
//! what SHOW REPLICA STATUS shows.
//!
//! # The pieces
//!
//! - `CHANGE REPLICATION SOURCE TO` stores a [`SourceConfig`] in Meta
//!   (`replica/source`), as MySQL keeps `mysql.slave_master_info`.
//! - START REPLICA asks the server's [`Launcher`] (canyon-server's
//!   `replica` module: the network client, which this crate does not have)
//!   to run a replication thread: it connects to the source, asks for its
//!   binary log from the [`Applied`] position, and hands each event to a
//!   [`crate::session::ReplicaApplier`], a session of the "system user".
//! - The applier writes [`Applied`] — the source's GTIDs applied here, and
//!   the source file and position after the last applied transaction — as
//!   the Meta record `replica/applied` **in the commit batch of the
//!   transaction it applied** (canyon-txn `put_meta_on_commit`). After a
//!   crash the record and the rows agree, so the replica asks again from
//!   exactly where its data is: no gap, no duplicate. MySQL 8 gets the same
//!   from `relay_log_info_repository=TABLE` updated in the applied
//!   transaction.
//!
//! Canyon keeps no relay log on disk: the source keeps its log, so events
//! not yet applied are simply asked for again after a restart. The source's
//! GTIDs a replica applied are part of its `gtid_executed`
//! (`crate::catalog::binlog`'s `others`).
//!
//! A DDL statement is applied through the catalog, not a row batch: its
//! position record rides in the batch of the catalog change that completes
//! it (`Engine::with_carried_records`), so the schema change and the
//! position are durable together, as MySQL 8's atomic DDL writes the
//! replica's position in its data-dictionary transaction. Where a DDL
//! completes in no catalog change of its own (TRUNCATE, a no-op CREATE ...
//! IF NOT EXISTS) or checks rows after it published (an ALTER that narrows
//! a column or adds a foreign key, reverted on a bad row), the record is
//! written right after it, synced, as is that of a statement Canyon runs as
//! several complete changes (DROP TABLE of several tables, RENAME TABLE of
//! several pairs). A crash between such a DDL and its record re-applies the
//! DDL after the restart, where it may fail (1050, 1060, ...) and stop the
//! replica, as MySQL 5.7's non-atomic DDL did: a loud stop, never a silent
//! skip.

use canyon_binlog::GtidSet;
use canyon_common::{Error, Result};
use canyon_storage::{Keyspace, Storage, WriteBatch};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, OnceLock};

/// The Meta key of the source's connection settings.
pub const SOURCE_KEY: &[u8] = b"replica/source";
/// The Meta key of the applied position.
pub const APPLIED_KEY: &[u8] = b"replica/applied";

/// CHANGE REPLICATION SOURCE TO's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceConfig {
    /// SOURCE_HOST.
    pub host: String,
    /// SOURCE_PORT.
    pub port: u16,
    /// SOURCE_USER.
    pub user: String,
    /// SOURCE_PASSWORD (kept in Meta as MySQL keeps it in its
    /// `slave_master_info` table: in the clear, readable by no SQL).
    pub password: String,
    /// SOURCE_AUTO_POSITION: ask by GTID set rather than file and position.
    pub auto_position: bool,
    /// SOURCE_LOG_FILE: where a position-based replica starts.
    pub log_file: String,
    /// SOURCE_LOG_POS.
    pub log_pos: u64,
    /// SOURCE_CONNECT_RETRY, seconds between connection attempts.
    pub connect_retry: u64,
    /// SOURCE_HEARTBEAT_PERIOD, seconds.
    pub heartbeat_period: f64,
}

impl Default for SourceConfig {
    fn default() -> Self {
        SourceConfig {
            host: String::new(),
            port: 3306,
            user: String::new(),
            password: String::new(),
            auto_position: false,
            log_file: String::new(),
            log_pos: 4,
            connect_retry: 60,
            heartbeat_period: 30.0,
        }
    }
}

/// How far the applier got (see the module doc).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Applied {
    /// The source GTIDs applied here (`Executed_Gtid_Set` less this server's own).
    pub gtids: String,
    /// The source's file after the last applied transaction
    /// (`Relay_Source_Log_File`).
    pub file: String,
    /// The position in it (`Exec_Source_Log_Pos`).
    pub pos: u64,
}

impl Applied {
    /// [`Applied::gtids`] parsed.
    pub fn gtid_set(&self) -> GtidSet {
        self.gtids.parse().unwrap_or_default()
    }
}

/// The replication thread as SHOW REPLICA STATUS shows it.
#[derive(Debug, Clone, Default)]
pub struct Status {
    /// `Replica_IO_Running`: "Yes", "Connecting" or "No".
    pub io_running: &'static str,
    /// `Replica_SQL_Running`.
    pub sql_running: bool,
    /// `Replica_IO_State`.
    pub io_state: String,
    /// `Last_IO_Errno`, `Last_IO_Error`, `Last_IO_Error_Timestamp`.
    pub last_io_error: Option<(u16, String, String)>,
    /// `Last_SQL_Errno`, `Last_SQL_Error`, `Last_SQL_Error_Timestamp`.
    pub last_sql_error: Option<(u16, String, String)>,
    /// `Retrieved_Gtid_Set`: GTIDs received from the source.
    pub retrieved: GtidSet,
    /// `Source_Log_File` / `Read_Source_Log_Pos`: the last event read.
    pub read_file: String,
    /// See `read_file`.
    pub read_pos: u64,
    /// `Source_Server_Id`.
    pub source_server_id: u32,
    /// `Source_UUID`.
    pub source_uuid: String,
    /// `Seconds_Behind_Source`: now less the source's commit time of the
    /// transaction being applied; 0 when caught up; None when not running.
    pub seconds_behind: Option<u64>,
}

/// A running replication thread.
pub trait Running: Send {
    /// Stops it and waits until it has: an applied transaction is finished
    /// or rolled back, the connection is closed.
    fn stop(self: Box<Self>);
    /// Whether it is still running (it stops by itself on an apply error).
    fn is_running(&self) -> bool;
}

/// Starts replication threads: provided by the server (it owns the network
/// and holds the engine, weakly: the engine holds it).
pub trait Launcher: Send + Sync {
    /// Starts following `source` from `from`.
    fn start(&self, source: SourceConfig, from: Applied) -> Result<Box<dyn Running>>;
}

/// The engine's replica state.
#[derive(Default)]
pub struct Replica {
    launcher: OnceLock<Arc<dyn Launcher>>,
    /// The source settings and the running thread; held by the control
    /// statements (CHANGE, START, STOP, RESET), never by the applier.
    pub(crate) control: Mutex<Control>,
    /// What SHOW REPLICA STATUS shows, written by the thread.
    pub status: Mutex<Status>,
    /// The applied position as last committed.
    applied: Mutex<Applied>,
}

impl std::fmt::Debug for Replica {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replica").finish_non_exhaustive()
    }
}

/// See [`Replica::control`].
#[derive(Default)]
pub(crate) struct Control {
    pub(crate) source: Option<SourceConfig>,
    pub(crate) running: Option<Box<dyn Running>>,
}

fn corrupt(what: &str, e: serde_json::Error) -> Error {
    Error::Corrupt(format!("{what}: {e}"))
}

impl Replica {
    /// Loads the stored source settings and applied position.
    pub(crate) fn open(storage: &dyn Storage) -> Result<Replica> {
        let r = Replica::default();
        if let Some(v) = storage.get(Keyspace::Meta, SOURCE_KEY)? {
            r.control.lock().source =
                Some(serde_json::from_slice(&v).map_err(|e| corrupt("replica source", e))?);
        }
        if let Some(v) = storage.get(Keyspace::Meta, APPLIED_KEY)? {
            *r.applied.lock() =
                serde_json::from_slice(&v).map_err(|e| corrupt("replica position", e))?;
        }
        Ok(r)
    }

    /// Installs the server's launcher (once, at startup). Without one,
    /// START REPLICA is refused.
    pub fn set_launcher(&self, l: Arc<dyn Launcher>) {
        let _ = self.launcher.set(l);
    }

    pub(crate) fn launcher(&self) -> Option<Arc<dyn Launcher>> {
        self.launcher.get().cloned()
    }

    /// Starts the replication thread at server start when a source is set,
    /// as MySQL starts its replica threads unless `--skip-replica-start`.
    pub fn start_at_boot(&self) -> Result<()> {
        let mut control = self.control.lock();
        let (Some(src), Some(l)) = (control.source.clone(), self.launcher()) else {
            return Ok(());
        };
        if src.host.is_empty() || control.running.is_some() {
            return Ok(());
        }
        tracing::info!(host = %src.host, port = src.port, "starting replication from the stored source");
        control.running = Some(l.start(src, self.applied())?);
        Ok(())
    }

    /// The applied position.
    pub fn applied(&self) -> Applied {
        self.applied.lock().clone()
    }

    /// Records a committed position (the record itself went with the
    /// commit).
    pub(crate) fn set_applied(&self, a: Applied) {
        *self.applied.lock() = a;
    }

    /// Writes `a` on its own, synced (after a DDL, and for RESET / CHANGE).
    pub(crate) fn store_applied(&self, storage: &dyn Storage, a: Applied) -> Result<()> {
        let mut b = WriteBatch::new();
        b.put(Keyspace::Meta, APPLIED_KEY.to_vec(), encode(&a)?);
        storage.write(b, true)?;
        self.set_applied(a);
        Ok(())
    }

    /// Stores the source settings (synced).
    pub(crate) fn store_source(
        &self,
        storage: &dyn Storage,
        control: &mut Control,
        s: Option<SourceConfig>,
    ) -> Result<()> {
        let mut b = WriteBatch::new();
        match &s {
            Some(s) => b.put(
                Keyspace::Meta,
                SOURCE_KEY.to_vec(),
                serde_json::to_vec(s).map_err(|e| Error::Internal(e.to_string()))?,
            ),
            None => b.delete(Keyspace::Meta, SOURCE_KEY.to_vec()),
        }
        storage.write(b, true)?;
        control.source = s;
        Ok(())
    }
}

/// The Meta value of an [`Applied`].
pub(crate) fn encode(a: &Applied) -> Result<Vec<u8>> {
    serde_json::to_vec(a).map_err(|e| Error::Internal(e.to_string()))
}
