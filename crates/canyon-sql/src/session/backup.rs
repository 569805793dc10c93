//! `BACKUP TO 'dir'` (`crate::parse::backup_stmt`): a storage checkpoint at
//! one commit (`canyon-txn`'s `backup.rs` says why it is consistent) and
//! the binary-log coordinates it ends at, for `canyon backup`'s manifest
//! and for a point-in-time recovery that replays the log from there.

use super::state::*;
use crate::types::result::QueryResult;
use crate::types::value::Value;
use crate::types::ExprKind;
use canyon_common::{Error, Result};
use std::path::Path;

impl Session {
    /// Runs `BACKUP TO 'dir'`: one row `Commit_ts, Executed_Gtid_Set, File,
    /// Position, Server_uuid` (File and Position NULL without a binary log).
    pub(super) fn run_backup_statement(&mut self, dir: &str) -> Result<QueryResult> {
        let cat = self.state.engine.catalog();
        // As MariaDB's BACKUP STAGE: RELOAD.
        self.state.check_super(&cat, "RELOAD")?;
        let path = Path::new(dir);
        if !path.is_absolute() {
            // Relative to what? The server's working directory is no
            // business of the client's.
            return Err(Error::Sql {
                code: 1105,
                sqlstate: *b"HY000",
                message: format!("BACKUP TO needs an absolute directory, not '{dir}'"),
            });
        }
        if path.exists() {
            return Err(Error::Sql {
                code: 1086,
                sqlstate: *b"HY000",
                message: format!("File '{dir}' already exists"),
            });
        }
        let engine = self.state.engine.clone();
        let point = engine.txn.checkpoint(path)?;
        let log = &engine.binlog;
        let (file, pos) = if log.enabled() {
            // The file the head is in: the last whose first record is at or
            // before it (a file started after the checkpoint starts later).
            let files = log.files();
            let at = files
                .iter()
                .rev()
                .find(|f| f.first_seq <= point.head.next_seq)
                .expect("an enabled log has a file started before any checkpoint");
            let pos = at.position(point.head.next_offset.max(at.start_offset));
            (Value::str(&at.name), Value::UInt(pos))
        } else {
            (Value::Null, Value::Null)
        };
        let gtids = log.gtids_before(&point.head).to_string();
        tracing::info!(dir, ts = point.ts, %gtids, "backup checkpoint written");
        Ok(typed_rows(
            &[
                ("Commit_ts", ExprKind::UInt),
                ("Executed_Gtid_Set", ExprKind::String),
                ("File", ExprKind::String),
                ("Position", ExprKind::UInt),
                ("Server_uuid", ExprKind::String),
            ],
            vec![vec![
                Value::UInt(point.ts),
                Value::str(&gtids),
                file,
                pos,
                Value::str(&log.server_uuid()),
            ]],
        ))
    }
}
