//! A committed transaction (or a DDL statement) as the events of one
//! change-log record.
//!
//! The record holds every event of the group except the GTID event, whose
//! number is assigned under the commit mutex (canyon-txn's `changelog.rs`);
//! the events are stored unframed — type and body — since the header's
//! `log_pos` and the checksum depend on where the group lands in its file,
//! which only serving knows (`crate::catalog::binlog`). The record's length in the log is
//! fixed here, so that offsets can be assigned at commit: every event framed
//! with its CRC32 (as MySQL stores them; a replica that does not want
//! checksums gets them stripped, positions unchanged), plus the GTID event.
//!
//! ```text
//! payload = kind u8 ('T' transaction, 'Q' standalone statement)
//!           ++ (type u8 ++ len u32 ++ body)*
//! ```
//!
//! A transaction is `QUERY BEGIN, (TABLE_MAP+ ROWS+)+, XID`. Its rows
//! events follow the journal's order, split at `ROWS_EVENT_TARGET` bytes
//! (MySQL's `binlog_row_event_max_size`). Each `TABLE_MAP+ ROWS+` run is one
//! statement as far as the replica knows: its last rows event carries
//! STMT_END_F, after which a replica forgets the table ids. A run ends where
//! the journal reaches a table the run has not mapped, so a transaction
//! that changes one table is one statement and one that moves between
//! tables is several, each mapping its tables before its rows, as MySQL
//! writes a statement. A standalone statement is one QUERY.

use super::columns::{bin_row, table_columns};
use crate::catalog::binlog::{KIND_STATEMENT, KIND_TRANSACTION};
use crate::catalog::Catalog;
use crate::exec::journal::{decode_change, ChangeKind};
use canyon_binlog::control::QueryEvent;
use canyon_binlog::{framed_len, EventType, Gtid, RowsEventBuilder, RowsKind};
use canyon_common::{Error, Result};
use canyon_txn::LogEntry;

/// Size at which a rows event is closed and another begun.
pub(crate) const ROWS_EVENT_TARGET: usize = 8192;

/// The session state a QUERY event carries.
#[derive(Debug, Clone, Default)]
pub struct StatementContext {
    /// The connection id.
    pub thread_id: u32,
    /// The default database.
    pub db: String,
    /// `sql_mode` as MySQL's bits.
    pub sql_mode: u64,
    /// Collation ids of character_set_client, collation_connection,
    /// collation_server.
    pub charset: (u16, u16, u16),
    /// The session's time zone, when not SYSTEM.
    pub time_zone: Option<String>,
    /// foreign_key_checks = 0.
    pub no_foreign_key_checks: bool,
    /// unique_checks = 0.
    pub relaxed_unique_checks: bool,
}

fn bl(e: canyon_binlog::Error) -> Error {
    Error::Internal(format!("binary log: {e}"))
}

/// The events of a record, with their framed length.
#[derive(Default)]
struct Group {
    payload: Vec<u8>,
    len: u64,
}

impl Group {
    fn new(kind: u8) -> Group {
        Group {
            payload: vec![kind],
            len: 0,
        }
    }

    fn push(&mut self, ty: EventType, body: &[u8]) -> Result<()> {
        let n = u32::try_from(body.len())
            .map_err(|_| Error::Internal("a binary log event over 4 GiB".into()))?;
        self.payload.push(ty.0);
        self.payload.extend_from_slice(&n.to_be_bytes());
        self.payload.extend_from_slice(body);
        self.len += framed_len(body.len(), true) as u64;
        Ok(())
    }

    /// The entry, its length counting the GTID event `gtid` will frame.
    fn entry(self, gtid: &Gtid) -> LogEntry {
        LogEntry {
            len: canyon_binlog::gtid::gtid_transaction_length(gtid, self.len, true),
            payload: self.payload,
            counted: true,
        }
    }
}

fn query_event(ctx: &StatementContext, sql: &[u8]) -> Result<Vec<u8>> {
    let mut flags2 = 0;
    if ctx.no_foreign_key_checks {
        flags2 |= canyon_binlog::control::flags2::OPTION_NO_FOREIGN_KEY_CHECKS;
    }
    if ctx.relaxed_unique_checks {
        flags2 |= canyon_binlog::control::flags2::OPTION_RELAXED_UNIQUE_CHECKS;
    }
    canyon_binlog::control::query(&QueryEvent {
        thread_id: ctx.thread_id,
        db: ctx.db.clone(),
        sql: sql.to_vec(),
        flags2: Some(flags2),
        sql_mode: Some(ctx.sql_mode),
        catalog: true,
        auto_increment: Some((1, 1)),
        charset: Some(ctx.charset),
        time_zone: ctx.time_zone.clone(),
        ..QueryEvent::default()
    })
    .map_err(bl)
}

/// The record of a transaction whose journal holds `changes`; `None` when
/// it changed no logged row. `gtid` is the GTID event's template (its length
/// only is used here).
pub(crate) fn transaction_entry(
    cat: &Catalog,
    changes: &[Vec<u8>],
    ctx: &StatementContext,
    xid: u64,
    gtid: &Gtid,
) -> Result<Option<LogEntry>> {
    if changes.is_empty() {
        return Ok(None);
    }
    let mut g = Group::new(KIND_TRANSACTION);
    // BEGIN names no database (SHOW BINLOG EVENTS prints it bare, as MySQL's).
    let begin_ctx = StatementContext {
        db: String::new(),
        ..ctx.clone()
    };
    g.push(EventType::QUERY, &query_event(&begin_ctx, b"BEGIN")?)?;
    // Tables mapped so far in the group (id, columns), and the rows event
    // being filled: its table, kind and body.
    let mut mapped: Vec<(u32, Vec<canyon_binlog::ColumnMeta>)> = Vec::new();
    let mut open: Option<(u32, ChangeKind, Vec<u8>, usize)> = None;
    let mut pending: Vec<(EventType, Vec<u8>)> = Vec::new();
    let kind_of = |k: ChangeKind| match k {
        ChangeKind::Write => RowsKind::Write,
        ChangeKind::Update => RowsKind::Update,
        ChangeKind::Delete => RowsKind::Delete,
    };
    // Rows events are built one at a time: a builder borrows its table's
    // columns, so a finished body is kept as bytes.
    let mut builder_rows: Vec<(
        Option<Vec<canyon_binlog::BinValue>>,
        Option<Vec<canyon_binlog::BinValue>>,
    )> = Vec::new();
    let flush = |open: &mut Option<(u32, ChangeKind, Vec<u8>, usize)>,
                 rows: &mut Vec<_>,
                 mapped: &Vec<(u32, Vec<canyon_binlog::ColumnMeta>)>,
                 pending: &mut Vec<(EventType, Vec<u8>)>,
                 last: bool|
     -> Result<()> {
        let Some((table, kind, _, _)) = open.take() else {
            return Ok(());
        };
        let cols = &mapped
            .iter()
            .find(|(t, _)| *t == table)
            .expect("a rows event's table is mapped first")
            .1;
        let mut b = RowsEventBuilder::new(kind_of(kind), u64::from(table), cols);
        for (before, after) in rows.drain(..) {
            let (before, after): (
                Option<Vec<canyon_binlog::BinValue>>,
                Option<Vec<canyon_binlog::BinValue>>,
            ) = (before, after);
            b.push(before.as_deref(), after.as_deref()).map_err(bl)?;
        }
        pending.push((kind_of(kind).event_type(), b.finish(last)));
        Ok(())
    };
    for raw in changes {
        let c = decode_change(raw)?;
        let found = cat
            .databases
            .get(&c.db)
            .and_then(|d| d.tables.get(&c.name))
            .filter(|t| t.def.id == c.table);
        let Some(table) = found else {
            // Dropped since (a DDL commits the transaction first, so only a
            // table of another session's DDL): nothing a replica can apply.
            continue;
        };
        if !mapped.iter().any(|(t, _)| *t == c.table) {
            let cols = table_columns(table);
            let body =
                canyon_binlog::table_map(u64::from(c.table), &table.def.db, &table.def.name, &cols)
                    .map_err(bl)?;
            // A table first met after rows were logged begins a new
            // statement: the rows event before it ends the current one
            // (STMT_END_F), and the replica then forgets every table id,
            // so the tables of the new statement are mapped afresh.
            // MariaDB's I/O thread refuses a TABLE_MAP that follows a rows
            // event without STMT_END_F (1595); MySQL's replicas accept
            // either.
            if open.is_some() {
                flush(&mut open, &mut builder_rows, &mapped, &mut pending, true)?;
                mapped.clear();
            }
            pending.push((EventType::TABLE_MAP, body));
            mapped.push((c.table, cols));
        }
        let before = c.before.as_deref().map(|r| bin_row(table, r)).transpose()?;
        let after = c.after.as_deref().map(|r| bin_row(table, r)).transpose()?;
        let size: usize = raw.len();
        let same = matches!(&open, Some((t, k, _, n)) if *t == c.table && *k == c.kind && n + size < ROWS_EVENT_TARGET);
        if !same {
            flush(&mut open, &mut builder_rows, &mapped, &mut pending, false)?;
            open = Some((c.table, c.kind, Vec::new(), 0));
        }
        if let Some((_, _, _, n)) = &mut open {
            *n += size;
        }
        builder_rows.push((before, after));
    }
    flush(&mut open, &mut builder_rows, &mapped, &mut pending, true)?;
    if !pending.iter().any(|(ty, _)| *ty != EventType::TABLE_MAP) {
        return Ok(None);
    }
    for (ty, body) in pending {
        g.push(ty, &body)?;
    }
    g.push(EventType::XID, &canyon_binlog::control::xid(xid))?;
    Ok(Some(g.entry(gtid)))
}

/// The record of a statement logged alone (DDL), in its session's context.
pub(crate) fn statement_entry(ctx: &StatementContext, sql: &[u8], gtid: &Gtid) -> Result<LogEntry> {
    let mut g = Group::new(KIND_STATEMENT);
    g.push(EventType::QUERY, &query_event(ctx, sql)?)?;
    let gtid = Gtid {
        may_have_sbr: true,
        ..gtid.clone()
    };
    Ok(g.entry(&gtid))
}
