//! Row events applied in a session: the `BINLOG '<base64>'` statement, and
//! the rows a replica's applier hands over (`super::replica`). The event
//! reading and value conversion are `crate::binlog::apply`'s; this file
//! writes the rows in the session's transaction.

use super::state::*;
use crate::binlog::apply::{check_map, image_row, same_row, Applier, Step};
use crate::catalog::rows::{decode_table_row, hidden_key, primary_key};
use crate::catalog::{Catalog, Table};
use crate::exec::{conflict_error, delete_row, find_conflict, insert_checked, lock_row};
use crate::exec::{write_update, OldRow};
use crate::expr::EvalContext;
use crate::types::result::QueryResult;
use crate::types::value::Value;
use canyon_binlog::rows::{Row, RowsEvent, RowsKind, TableMap};
use canyon_binlog::Event;
use canyon_common::{Error, Result};
use canyon_txn::Transaction;
use std::sync::atomic::Ordering;
use std::sync::Arc;

fn key_not_found(table: &Table) -> Error {
    Error::Sql {
        code: 1032,
        sqlstate: *b"HY000",
        message: format!("Can't find record in '{}'", table.def.name),
    }
}

/// The table a TABLE_MAP names.
fn mapped_table(cat: &Catalog, map: &TableMap) -> Result<Arc<Table>> {
    let table = cat
        .table(&map.db, &map.table)
        .cloned()
        .ok_or_else(|| Error::UnknownTable {
            db: map.db.clone(),
            table: map.table.clone(),
        })?;
    check_map(&table, map)?;
    Ok(table)
}

/// Finds and locks the stored row a before image stands for: by its primary
/// key, or (no primary key) by a scan for an equal row.
fn locate(
    txn: &mut Transaction,
    table: &Table,
    before: &[Value],
    ctx: &dyn EvalContext,
) -> Result<(Vec<u8>, Vec<Value>)> {
    if !table.hidden_pk() {
        let pk = primary_key(table, before);
        lock_row(txn, table, &pk)?;
        let bytes = txn
            .get_locked(table.def.id, &pk)?
            .ok_or_else(|| key_not_found(table))?;
        let mut row = Vec::new();
        decode_table_row(table, &bytes, &mut row)?;
        return Ok((pk, row));
    }
    let mut found = None;
    crate::exec::for_each_locked_row(
        txn,
        table,
        &crate::plan::access::Access::scan(),
        None,
        None,
        ctx,
        &mut |_, pk, row| {
            if found.is_none() && same_row(&row, before) {
                found = Some((pk, row));
            }
            Ok(())
        },
    )?;
    found.ok_or_else(|| key_not_found(table))
}

fn image(
    i: &Option<Vec<Option<canyon_binlog::BinValue>>>,
) -> Result<&[Option<canyon_binlog::BinValue>]> {
    i.as_deref()
        .ok_or_else(|| Error::Internal("binary log: row image missing".into()))
}

/// Applies one row change to `table`.
fn apply_row(
    txn: &mut Transaction,
    table: &Table,
    kind: RowsKind,
    row: &Row,
    ctx: &dyn EvalContext,
) -> Result<()> {
    match kind {
        RowsKind::Write => {
            let new = image_row(table, image(&row.after)?, None, ctx)?;
            let pk = if table.hidden_pk() {
                hidden_key(table.row_id.fetch_add(1, Ordering::Relaxed) + 1)
            } else {
                primary_key(table, &new)
            };
            if let Some(c) = find_conflict(txn, table, &new, &pk)? {
                return Err(conflict_error(table, c.key, &new));
            }
            if let Some(v) = table
                .auto_increment_column()
                .and_then(|c| crate::exec::auto_value(&new[c]))
            {
                table.auto_increment.fetch_max(v, Ordering::Relaxed);
            }
            ctx.note_write(&table.def, crate::catalog::perfschema::IoWrite::Insert, 1);
            insert_checked(txn, None, table, pk, &new)
        }
        RowsKind::Update => {
            let before = image_row(table, image(&row.before)?, None, ctx)?;
            let (pk, old) = locate(txn, table, &before, ctx)?;
            let new = image_row(table, image(&row.after)?, Some(&old), ctx)?;
            if let Some(v) = table
                .auto_increment_column()
                .and_then(|c| crate::exec::auto_value(&new[c]))
            {
                table.auto_increment.fetch_max(v, Ordering::Relaxed);
            }
            ctx.note_write(&table.def, crate::catalog::perfschema::IoWrite::Update, 1);
            write_update(txn, table, pk, OldRow::Row(&old), &new, None, 0)
        }
        RowsKind::Delete => {
            let before = image_row(table, image(&row.before)?, None, ctx)?;
            let (pk, old) = locate(txn, table, &before, ctx)?;
            delete_row(txn, table, pk, &old, false, None, ctx)
        }
    }
}

impl Session {
    /// Applies the rows of one rows event in the session's transaction
    /// (one statement of it: a failure undoes the whole event). Returns the
    /// number of rows changed.
    pub(super) fn apply_rows_event(&mut self, map: &TableMap, ev: &RowsEvent) -> Result<u64> {
        let cat = self.state.engine.catalog();
        let table = mapped_table(&cat, map)?;
        let rows = ev.rows(map).map_err(|e| Error::Sql {
            code: 1594,
            sqlstate: *b"HY000",
            message: format!("Relay log read failure: could not parse rows: {e}"),
        })?;
        self.with_txn(&[], true, None, |txn, ctx| {
            for row in &rows {
                apply_row(txn, &table, ev.kind, row, ctx)?;
            }
            Ok(rows.len() as u64)
        })
    }

    /// `BINLOG '<base64>'`: the events mysqlbinlog prints for a row event
    /// (FORMAT_DESCRIPTION first, then TABLE_MAP and rows events), applied
    /// in the session's transaction. Needs BINLOG_ADMIN (or SUPER), as in
    /// MySQL 8.
    pub(super) fn run_binlog_base64(&mut self, text: &str) -> Result<QueryResult> {
        use base64::Engine as _;
        let cat = self.state.engine.catalog();
        self.state.check_super(&cat, "SUPER, BINLOG_ADMIN")?;
        let compact: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
        // mysqlbinlog encodes each event on its own, so padding can end a
        // block in the middle of the text: decode block by block, as
        // MySQL's base64_decode goes on after padding.
        let mut bytes = Vec::with_capacity(compact.len() / 4 * 3);
        let mut rest = &compact[..];
        while !rest.is_empty() {
            let mut end = rest.iter().position(|&b| b == b'=').unwrap_or(rest.len());
            while rest.get(end) == Some(&b'=') {
                end += 1;
            }
            base64::engine::general_purpose::STANDARD
                .decode_vec(&rest[..end], &mut bytes)
                .map_err(|_| Error::Sql {
                    code: 1575,
                    sqlstate: *b"HY000",
                    message: "Decoding of base64 string failed".into(),
                })?;
            rest = &rest[end..];
        }
        let mut applier = self.binlog_applier.take().unwrap_or_default();
        let r = (|| {
            for raw in Applier::split(&bytes)? {
                match applier.step(raw)? {
                    Step::None => {}
                    Step::Rows(map, ev) => {
                        self.apply_rows_event(&map, &ev)?;
                    }
                    Step::Other(_, Event::Rotate { .. } | Event::Heartbeat { .. }) => {}
                    Step::Other(h, _) => {
                        return Err(Error::Sql {
                            code: 1730,
                            sqlstate: *b"HY000",
                            message: format!(
                                "Only Format_description_log_event and row events are allowed \
                                 in BINLOG statements (but event type {} was provided)",
                                h.type_code.0
                            ),
                        })
                    }
                }
            }
            Ok(())
        })();
        if r.is_err() {
            applier.clear_maps();
        }
        self.binlog_applier = Some(applier);
        r.map(|()| ok(0))
    }
}
