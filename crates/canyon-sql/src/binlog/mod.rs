//! The binary log: every committed change as MySQL binary-log events, for
//! replicas, change-data-capture tools and point-in-time recovery.
//!
//! # Where it lives
//!
//! Not in files. A committed transaction's events are one record of
//! canyon-txn's change log (`changelog.rs` there), put in the transaction's
//! own commit batch: the log and the data agree after any crash without the
//! two-phase commit MySQL runs between its binlog and InnoDB, and without a
//! second sync per commit group. Binary log *files* are a view
//! (`crate::catalog::binlog`): names and positions computed from the records' offsets,
//! the events framed when served, byte for byte what a file would hold.
//!
//! # From a write to a replica
//!
//! 1. With the log on, every transaction's journal is on
//!    (`crate::exec::journal`): each row change is recorded as it is made,
//!    undone with its statement or savepoint.
//! 2. At commit the session turns the journal into events (`events.rs`:
//!    BEGIN, TABLE_MAP, WRITE/UPDATE/DELETE_ROWS v2 with full images, XID)
//!    and hands canyon-txn the record; the GTID number, sequence and offset
//!    are assigned under the commit mutex, in commit order.
//! 3. DDL is logged as its statement text, in a record of its own written
//!    after the catalog change (`Binlog::log_statement`). Between the two a
//!    crash can lose the record of a DDL that happened — the one window
//!    MySQL 8's atomic DDL closes and this does not yet.
//! 4. A replica's COM_BINLOG_DUMP / COM_BINLOG_DUMP_GTID gets a
//!    `BinlogReader` (`crate::catalog::binlog`); the server sends what its `read` returns and,
//!    when it is empty, waits on `TxnManager::log_changed` (or sends a
//!    heartbeat). Only visible — durable — records are read, so a replica is
//!    never ahead of what this server would recover.
//!
//! GTIDs are `server_uuid:N`, N gap-free from 1 (`gtid_mode = ON`, always).
//! The server's UUID is made once and kept in Meta (`binlog/uuid`), as
//! MySQL keeps it in `auto.cnf`.

pub mod apply;
pub mod columns;
pub mod events;

use crate::catalog::binlog::Binlog;
use crate::catalog::Catalog;
use canyon_common::Result;
use canyon_txn::{Transaction, TxnManager};

pub use events::StatementContext;

/// A transaction's original GTID (`sid`, `gno`) when this server logs one
/// that another server committed (the replica applier): the record keeps it
/// (`crate::catalog::binlog::KIND_FOREIGN`).
pub(crate) type Origin = Option<([u8; 16], u64)>;

/// Sets `txn`'s change-log entry from its journal, before it commits (or
/// prepares, for XA).
pub(crate) fn attach(
    log: &Binlog,
    cat: &Catalog,
    txn: &mut Transaction,
    ctx: &StatementContext,
    origin: Origin,
) -> Result<()> {
    if !txn.journaling() {
        return Ok(());
    }
    let changes = txn.take_journal();
    let xid = txn.id().unwrap_or(0);
    let entry = events::transaction_entry(cat, &changes, ctx, xid, &log.gtid_template())?;
    txn.set_log_entry(entry.map(|e| with_origin(e, origin)));
    Ok(())
}

fn with_origin(entry: canyon_txn::LogEntry, origin: Origin) -> canyon_txn::LogEntry {
    match origin {
        Some((sid, gno)) => crate::catalog::binlog::foreign_entry(entry, sid, gno),
        None => entry,
    }
}

/// Logs a statement on its own (DDL, after it took effect), in its own
/// synced record; the record's commit timestamp, `None` when the log is off.
pub(crate) fn log_statement(
    log: &Binlog,
    txn: &TxnManager,
    ctx: &StatementContext,
    sql: &[u8],
    origin: Origin,
) -> Result<Option<canyon_txn::Timestamp>> {
    if !log.enabled() {
        return Ok(None);
    }
    let entry = events::statement_entry(ctx, sql, &log.gtid_template())?;
    txn.append_log_record(with_origin(entry, origin)).map(Some)
}
