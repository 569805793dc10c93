//! Table rewrite: the ALTER TABLE forms that change how rows are stored —
//! ADD / DROP PRIMARY KEY, MODIFY / CHANGE between stored forms (INT to
//! INT UNSIGNED, VARCHAR to INT, ...), dropping a primary-key column, ADD
//! COLUMN ... AUTO_INCREMENT, ADD COLUMN of a generated column (computed
//! for every row, `crate::ddl::generated`), ORDER BY on a table without a
//! primary key (its rows copied in that order, so their hidden row ids
//! follow it) — and the AUTO_INCREMENT = n table option.
//!
//! The online ALTERs of `crate::ddl::alter` keep every stored row and key
//! as it is. These cannot: a new primary key is a new key for every row, a
//! signedness change a new encoding of every value. MySQL runs them as
//! ALGORITHM=COPY: build the new table, copy every row through the column
//! assignment rules, swap the tables. Canyon does the same.
//!
//! # The protocol
//!
//! | step | what | made by |
//! |---|---|---|
//! | 1 | apply the operations to a copy of the definition; check 1068 / 1075 / 1091 | `stage` |
//! | 2 | new table and index ids; record `c/x/<new id>` (ids to purge at open), synced | `allocate` |
//! | 3 | set `Table::rewrite` to FROZEN, publish a version `v1`, wait for pins `< v1` | `rewrite_table` |
//! | 4 | copy: read the old rows at one snapshot, convert each, write it and its index entries under the new id (chunks of committed transactions) | `copy_rows` |
//! | 5 | UNIQUE indexes: scan for a duplicate (1062) | `Engine::find_duplicate` |
//! | 6 | publish: one synced batch deletes the old definition record and `c/x/<new id>`, puts the new definition and `c/x/<old id>` | `publish` |
//! | 7 | REPLACED; wait for pins `<` the published version, purge the old ids, delete `c/x/<old id>` | `rewrite_table`, `discard` |
//!
//! A failure in steps 1 to 5 (a value the new column cannot hold, a
//! duplicate, a timeout) undoes the rewrite: the table goes back to OPEN,
//! the new ids are purged and their record deleted.
//! The old table was never touched, so it is exactly as before the ALTER.
//!
//! # What is copied under which lock; what other sessions see
//! - **Readers** never wait. Until step 6 every statement reads the old
//!   table; a statement that loaded the catalog after step 6 reads the new
//!   one. A statement still running on the old snapshot after step 6 keeps
//!   reading the old rows: the purge of step 7 waits for its pin (P2 of
//!   `crate::ddl::alter`) up to `lock_wait_timeout`, then purges anyway (that
//!   straggler then reads an emptied table, as with DROP TABLE).
//! - **Writers** (INSERT, UPDATE, DELETE, locking reads: every path that
//!   locks a row or stores a new one, `crate::exec::check_writable`) of the
//!   table fail from step 3 to step 6 with 1205 (lock wait timeout; the
//!   statement is rolled back, the transaction goes on) — MySQL's
//!   ALGORITHM=COPY (LOCK=SHARED) makes them *wait* on its metadata lock
//!   instead. Canyon does not wait because it cannot tell a writer that the
//!   rewrite itself waits for: a statement that pinned a catalog older than
//!   `v1` and then meets FROZEN would wait for the rewrite while step 3
//!   waits for its pin, and both would sit out `lock_wait_timeout` (MySQL's
//!   MDL deadlock detector resolves that cycle; Canyon's pins are not in the
//!   lock manager's wait graph). Failing at once never deadlocks, and a
//!   client retries as it does after any 1205. A writer still holding the
//!   old definition after step 6 fails with 1412 ER_TABLE_DEF_CHANGED
//!   ("please retry transaction") instead of writing to the old table,
//!   where its row would be lost; its next statement loads the new
//!   definition. A failed rewrite puts the table back to OPEN.
//! - **Invariant R1**: no write to the old table commits after step 4
//!   starts. The FROZEN store (SeqCst) comes before the publish of `v1`, and
//!   a writer checks the state before each row it writes or locks. A
//!   transaction that wrote before it could see FROZEN ran a statement on
//!   a catalog older than `v1` (its pin is `< v1`) and step 3 waits for it
//!   to end. So the copy reads a table nobody writes (and reads it at one
//!   snapshot anyway).
//! - An open transaction that ran a statement before step 3 holds the ALTER
//!   up to `lock_wait_timeout`, which then fails with 1205 and leaves the
//!   table unchanged (as MySQL's metadata-lock wait would).
//!
//! # Crash safety
//! The old rows stay where they are until the new definition is durable:
//! the catalog records of step 6 are one synced write batch (atomic on both
//! storage engines), and on RocksDB that sync also makes the copied rows of
//! step 4 durable (they are earlier in the same write-ahead log, the
//! argument of I4 in `crate::ddl::alter`). At every instant the catalog
//! names exactly one of the two tables, complete:
//! - crash before step 6: the catalog names the old table, untouched;
//!   `c/x/<new id>` names the partial copy, which `Engine::finish_rewrites`
//!   purges at open.
//! - crash after step 6: the catalog names the new table, whose rows were
//!   all written before; `c/x/<old id>` names the old rows, purged at open.
//!
//! There is never a half-rewritten table: rows are never converted in
//! place, and the definition that reads them changes in one record write.
//!
//! Tests: canyon-server's `tests/crash.rs` SIGKILLs the server at random
//! moments of a rewrite and checks the table after each restart; canyon-sql's
//! `tests/alter.rs` plants a `c/x/` record as a crash would leave it, and
//! runs a rewrite under concurrent readers and writers (R1: no committed
//! move lost, no reader sees half of one).
//!
//! # Conversion rules
//! Each column of the new definition takes its value from the old column it
//! came from (by name through ADD / DROP / CHANGE / FIRST / AFTER: tracked
//! by slot), converted by `crate::types::coerce` — INSERT's assignment rules
//! under MySQL 8.0's default strict mode: 1264 out of range, 1366 a value
//! that is not a number, 1292 a bad date. A string too long for the new
//! type is 1265 "Data truncated" (MySQL's ALTER says 1265 where INSERT says
//! 1406). A NULL in a column that is now NOT NULL (MODIFY, or a primary-key
//! column) is 1138 "Invalid use of NULL value". A new AUTO_INCREMENT column
//! numbers the rows 1, 2, ... in the old key order. A duplicate in the new
//! primary key or a new UNIQUE index is 1062. Rows keep their old order
//! only through the keys; a table that gets the hidden row id numbers its
//! rows in the old primary-key order.
//!
//! # Not implemented
//! - Non-strict `sql_mode` (no STRICT_TRANS_TABLES / STRICT_ALL_TABLES)
//!   adjusts only NULL for NOT NULL, numbers out of range, strings too
//!   long and strings that are not numbers, with MySQL's warnings (`adjust`);
//!   a bad date stays an error.
//! - A rewrite combined with RENAME, ADD FOREIGN KEY or PARTITION BY, and
//!   rewriting a partitioned table: refused with 1235.
//! - The copy holds no write lock for the whole table in storage: it relies
//!   on R1. It is not throttled and copies in one thread. The new table
//!   starts without planner statistics (new ids: ANALYZE TABLE rebuilds
//!   them), and ALTER reports `Records: 0` where MySQL counts the rows.
//! - MODIFY that adds AUTO_INCREMENT to an existing column (1235): its 0 and
//!   NULL values would need numbers.
//! - ADD COLUMN ... DATE / DATETIME / TIMESTAMP NOT NULL without DEFAULT on
//!   a non-empty table fills the zero date, as MySQL does, except where the
//!   SQL mode refuses it (NO_ZERO_DATE and strict, MySQL 8's default): 1292
//!   as MySQL 8's COPY reports it. On an empty table it is accepted.

use crate::catalog::engine::{json, meta_key, take_id, Engine, META_TABLE};
use crate::catalog::rows::{
    decode_table_row, encode_table_row, hidden_key, index_keys, localize_row,
};
use crate::catalog::{Table, TableDef, REWRITE_FROZEN, REWRITE_OPEN, REWRITE_REPLACED};
use crate::ddl::alter::AlterOp;
use crate::types::timezone::Zone;
use crate::types::value::Value;
use canyon_common::{Error, Result};
use canyon_storage::{KeyRange, Keyspace};
use canyon_txn::{IndexId, IsolationLevel, ReadMode, TableId};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::ops::Bound;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Meta records of ids a rewrite left to purge: `c/x/<table id u32 BE>`.
pub(crate) const META_PURGE: &[u8] = b"c/x/";

/// Rows per copy transaction.
const COPY_CHUNK: usize = 512;

/// A `c/x/` record: a table id and its index ids whose stored keys belong to
/// no definition (the partial copy of an unfinished rewrite, or the old
/// table of a finished one) and are purged at open.
#[derive(Debug, Serialize, Deserialize)]
struct PurgeRecord {
    table: TableId,
    indexes: Vec<IndexId>,
}

/// Where a column of the new definition takes its values from.
#[derive(Debug, Clone)]
enum Source {
    /// The old row's column at this position.
    Old(usize),
    /// A new column: this value in every row.
    Fill(Value),
    /// A new AUTO_INCREMENT column: 1, 2, ...
    Sequence,
    /// An old column made AUTO_INCREMENT (CHANGE / MODIFY): its values are
    /// kept, and a 0 or NULL gets the next number, as an INSERT of the row
    /// would (MySQL's copying ALTER); the counter ends past the largest.
    OldSequence(usize),
}

/// The new definition and how to fill it (step 1).
struct Staged {
    def: TableDef,
    sources: Vec<Source>,
    /// ALTER TABLE ... ORDER BY: the new columns (and DESC) the rows are
    /// stored in the order of; empty: the old key order.
    order: Vec<(usize, bool)>,
}

impl Engine {
    /// ALTER TABLE by table rewrite (see the module doc); called by
    /// `Engine::alter_table` with the alter lock held when
    /// `crate::ddl::alter::needs_rewrite` says so.
    pub(crate) fn rewrite_table(
        &self,
        db: &str,
        table: &str,
        ops: Vec<AlterOp>,
        strict: bool,
        zone: &Zone,
    ) -> Result<Vec<(u16, String)>> {
        let cur = self
            .catalog()
            .table(db, table)
            .cloned()
            .ok_or_else(|| Error::UnknownTable {
                db: db.to_string(),
                table: table.to_string(),
            })?;
        let empty = self.table_is_empty(&cur)?;
        let staged = self.stage(&cur, ops, empty)?;
        let (mut def, record) = self.allocate(staged.def)?;
        for ix in def.indexes.iter_mut() {
            ix.state = crate::catalog::IndexState::Public;
        }
        let new = Table::new(def);
        // Step 3.
        cur.rewrite.store(REWRITE_FROZEN, Ordering::SeqCst);
        let frozen = self.change(|cat, _, _| Ok(cat.version + 1)).and_then(|v1| {
            if self.wait_for_pins_below(v1, Some(cur.def.id)) {
                Ok(())
            } else {
                Err(Error::LockWaitTimeout)
            }
        });
        // Steps 4 and 5.
        let mut warnings = Vec::new();
        let copied = frozen.and_then(|()| {
            let counters = self.copy_rows(
                &cur,
                &new,
                (&staged.sources, &staged.order),
                strict,
                zone,
                &mut warnings,
            )?;
            for ix in new.def.indexes.iter().filter(|i| i.unique) {
                if let Some(value) = self.find_duplicate(&new, ix.id)? {
                    return Err(Error::DuplicateEntry {
                        value,
                        key: format!("{}.{}", new.def.name, ix.name),
                    });
                }
            }
            Ok(counters)
        });
        let (rows, sequence) = match copied {
            Ok(c) => c,
            Err(e) => {
                cur.rewrite.store(REWRITE_OPEN, Ordering::SeqCst);
                self.discard(&record)?;
                return Err(e);
            }
        };
        // Step 6.
        let version = self.publish(&cur, new.def.clone(), rows, sequence);
        let version = match version {
            Ok(v) => v,
            Err(e) => {
                cur.rewrite.store(REWRITE_OPEN, Ordering::SeqCst);
                self.discard(&record)?;
                return Err(e);
            }
        };
        // Step 7.
        cur.rewrite.store(REWRITE_REPLACED, Ordering::SeqCst);
        self.wait_for_pins_below(version, Some(cur.def.id));
        let old = PurgeRecord {
            table: cur.def.id,
            indexes: cur.def.indexes.iter().map(|i| i.id).collect(),
        };
        self.discard(&old)?;
        Ok(warnings)
    }

    /// ALTER TABLE ... ORDER BY: checks its columns (1054) and, where the
    /// table keeps a primary key, takes it out of `ops` with the warning
    /// MySQL's copying ALTER gives for a clustered index (InnoDB stores rows
    /// in primary-key order, whatever the ALTER asked). A table without one
    /// keeps it: the rewrite stores its rows in that order.
    pub(crate) fn ordered_by_key(
        &self,
        db: &str,
        table: &str,
        ops: Vec<AlterOp>,
        warnings: &mut Vec<(u16, String)>,
    ) -> Result<Vec<AlterOp>> {
        let Some(order) = ops.iter().rev().find_map(|op| match op {
            AlterOp::OrderBy(o) => Some(o.clone()),
            _ => None,
        }) else {
            return Ok(ops);
        };
        let cur = self.catalog().table(db, table).cloned();
        let Some(cur) = cur else {
            return Ok(ops);
        };
        let others: Vec<AlterOp> = ops
            .iter()
            .filter(|op| !matches!(op, AlterOp::OrderBy(_)))
            .cloned()
            .collect();
        // The columns are the table's after the other operations (only the
        // column list matters here: the ALTER itself checks the rest).
        let mut scratch = cur.def.clone();
        crate::ddl::alter::apply_rewrite(&mut scratch, others.clone(), true)?;
        for (name, _) in &order {
            if !scratch
                .columns
                .iter()
                .any(|c| c.name.eq_ignore_ascii_case(name))
            {
                return Err(Error::Sql {
                    code: 1054,
                    sqlstate: *b"42S22",
                    message: format!("Unknown column '{name}' in 'order clause'"),
                });
            }
        }
        if scratch.primary_key.is_empty() {
            return Ok(others
                .into_iter()
                .chain([AlterOp::OrderBy(order)])
                .collect());
        }
        warnings.push((
            1105,
            format!(
                "ORDER BY ignored as there is a user-defined clustered index in the table '{table}'"
            ),
        ));
        Ok(others)
    }

    /// Step 1: the new definition (identity slot layout: every row is
    /// rewritten) and where each of its columns comes from.
    fn stage(&self, cur: &Table, ops: Vec<AlterOp>, empty: bool) -> Result<Staged> {
        if cur.def.partitioning.is_some() {
            return Err(Error::Unsupported(
                "an ALTER of a partitioned table that needs a table rewrite".into(),
            ));
        }
        for op in &ops {
            if matches!(
                op,
                AlterOp::RenameTo { .. }
                    | AlterOp::AddForeignKey { .. }
                    | AlterOp::SetPartitioning(_)
            ) {
                return Err(Error::Unsupported(
                    "RENAME, ADD FOREIGN KEY or PARTITION BY in an ALTER that \
                     rewrites the table"
                        .into(),
                ));
            }
        }
        crate::ddl::foreign_keys::check_alter(&self.catalog(), &cur.def, &ops)?;
        let mut def = cur.def.clone();
        def.created = crate::catalog::schema::unix_now();
        let old_slot: HashMap<u32, usize> = (0..def.columns.len())
            .map(|c| (def.slot(c) as u32, c))
            .collect();
        let order_by: Vec<(String, bool)> = ops
            .iter()
            .filter_map(|op| match op {
                AlterOp::OrderBy(o) => Some(o.clone()),
                _ => None,
            })
            .next_back()
            .unwrap_or_default();
        crate::ddl::alter::apply_rewrite(&mut def, ops, empty)?;
        // `Engine::alter_table_mode` checked the names and kept ORDER BY
        // only for a table without a primary key.
        let order = if def.primary_key.is_empty() {
            order_by
                .iter()
                .filter_map(|(name, desc)| {
                    def.columns
                        .iter()
                        .position(|c| c.name.eq_ignore_ascii_case(name))
                        .map(|c| (c, *desc))
                })
                .collect()
        } else {
            Vec::new()
        };
        crate::ddl::alter::check_auto_key(&def)?;
        crate::ddl::generated::check_table(&def)?;
        let staged_table = Table::new(def.clone());
        let sources = (0..def.columns.len())
            .map(|c| match old_slot.get(&(def.slot(c) as u32)) {
                Some(&o) if def.columns[c].auto_increment && !cur.def.columns[o].auto_increment => {
                    Source::OldSequence(o)
                }
                Some(&o) => Source::Old(o),
                _ if def.columns[c].auto_increment => Source::Sequence,
                // A TIMESTAMP's missing value is its stored instant (UTC).
                _ => Source::Fill(match staged_table.missing_value(c) {
                    Value::DateTime(utc)
                        if matches!(def.columns[c].ty, crate::types::SqlType::Timestamp(_)) =>
                    {
                        Value::Stamp(crate::types::value::Stamp { utc, local: utc })
                    }
                    v => v,
                }),
            })
            .collect();
        def.slots.clear();
        def.slot_count = 0;
        for c in def.columns.iter_mut() {
            c.added_default = None;
        }
        Ok(Staged {
            def,
            sources,
            order,
        })
    }

    /// Step 2: fresh ids for the table and its indexes, and the record that
    /// has them purged if the rewrite never publishes.
    fn allocate(&self, mut def: TableDef) -> Result<(TableDef, PurgeRecord)> {
        self.change(|_, next_id, batch| {
            crate::catalog::engine::unfinished_change();
            def.id = take_id(next_id);
            for ix in def.indexes.iter_mut() {
                ix.id = take_id(next_id);
            }
            let record = PurgeRecord {
                table: def.id,
                indexes: def.indexes.iter().map(|i| i.id).collect(),
            };
            batch.put(
                Keyspace::Meta,
                meta_key(META_PURGE, &def.id.to_be_bytes()),
                json(&record)?,
            );
            Ok((def, record))
        })
    }

    /// Step 4: copies every row of `cur` into `new`, converted (in the
    /// order `order` asks, if any). Returns the rows copied and the last
    /// AUTO_INCREMENT value a new column handed out.
    ///
    /// An ORDER BY copy reads and converts every row before it writes one:
    /// the sort is in memory (MySQL's filesort spills to disk; Canyon's
    /// does not yet), so its memory is the table's converted rows.
    fn copy_rows(
        &self,
        cur: &Table,
        new: &Table,
        (sources, order): (&[Source], &[(usize, bool)]),
        strict: bool,
        zone: &Zone,
        warnings: &mut Vec<(u16, String)>,
    ) -> Result<(u64, u64)> {
        let read_session = self.txn.session();
        let write_session = self.txn.session();
        let mut reader = read_session.begin(IsolationLevel::RepeatableRead);
        reader.begin_statement();
        let mut after: Option<Vec<u8>> = None;
        let mut rowno = 0u64;
        let mut written = 0u64;
        let mut sequence = 0u64;
        let mut old_row = Vec::new();
        // Generated columns are computed again for every row (a new one
        // has no old value; the others give what they held).
        let generator = crate::plan::generated::Generator::new(new)?;
        let gen_ctx = crate::plan::generated::NoSession::default();
        let mut convert = |bytes: &[u8], rowno: u64, warnings: &mut Vec<(u16, String)>| {
            decode_table_row(cur, bytes, &mut old_row)?;
            localize_row(&mut old_row, zone);
            let mut row = convert_row(
                new,
                sources,
                &old_row,
                rowno,
                &mut sequence,
                zone,
                (!strict).then_some(&mut *warnings),
            )?;
            if let Some(g) = &generator {
                g.fill(new, &mut row, &gen_ctx, rowno)?;
                for (code, message) in gen_ctx.take_warnings() {
                    if strict {
                        return Err(Error::StrictModeError { code, message });
                    }
                    warnings.push((code, message));
                }
            }
            Ok(row)
        };
        let mut sorted: Vec<Vec<Value>> = Vec::new();
        let result = loop {
            let mut chunk: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(COPY_CHUNK);
            let range = KeyRange {
                start: after.take().map_or(Bound::Unbounded, Bound::Excluded),
                end: Bound::Unbounded,
            };
            if let Err(e) = reader.scan(
                cur.def.id,
                &range,
                false,
                ReadMode::Snapshot,
                &mut |pk, bytes| {
                    chunk.push((pk.to_vec(), bytes.to_vec()));
                    if chunk.len() >= COPY_CHUNK {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    }
                },
            ) {
                break Err(e);
            }
            let Some((last, _)) = chunk.last() else {
                break Ok(());
            };
            after = Some(last.clone());
            // Converted as written: the first bad row in key order is the
            // error, whether its value or its key is what is wrong.
            let mut rows = chunk.iter().map(|(_, bytes)| {
                rowno += 1;
                convert(bytes, rowno, warnings)
            });
            let done = if order.is_empty() {
                write_rows(&write_session, new, &mut rows, &mut written)
            } else {
                rows.try_for_each(|row| row.map(|row| sorted.push(row)))
            };
            if let Err(e) = done {
                break Err(e);
            }
        };
        reader.rollback();
        result?;
        if !order.is_empty() {
            let cols = &new.def.columns;
            // A stable sort: rows equal in the ORDER BY columns keep their
            // old order, as MySQL's filesort of a copying ALTER does.
            sorted.sort_by(|a, b| {
                order
                    .iter()
                    .map(|&(c, desc)| {
                        let coll = Some(cols[c].collation);
                        let o = crate::types::value::sort_cmp_as(&a[c], &b[c], coll);
                        if desc {
                            o.reverse()
                        } else {
                            o
                        }
                    })
                    .find(|o| o.is_ne())
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
            let mut rows = sorted.into_iter().peekable();
            while rows.peek().is_some() {
                let mut chunk = rows.by_ref().take(COPY_CHUNK).map(Ok);
                write_rows(&write_session, new, &mut chunk, &mut written)?;
            }
        }
        Ok((rowno, sequence))
    }

    /// Step 6: one catalog change replaces the old definition by the new.
    /// Returns the published version.
    fn publish(&self, cur: &Table, mut def: TableDef, rows: u64, sequence: u64) -> Result<u64> {
        // The copy committed before this: a snapshot from now on sees it.
        let ts = self.txn.visible_ts();
        def.stable_since = ts;
        self.note_stable_since(ts);
        self.change(|cat, _, batch| {
            let database = cat
                .databases
                .get_mut(&cur.def.db)
                .ok_or_else(|| Error::UnknownDatabase(cur.def.db.clone()))?;
            batch.delete(
                Keyspace::Meta,
                meta_key(META_TABLE, &cur.def.id.to_be_bytes()),
            );
            batch.delete(Keyspace::Meta, meta_key(META_PURGE, &def.id.to_be_bytes()));
            batch.put(
                Keyspace::Meta,
                meta_key(META_TABLE, &def.id.to_be_bytes()),
                json(&def)?,
            );
            let old = PurgeRecord {
                table: cur.def.id,
                indexes: cur.def.indexes.iter().map(|i| i.id).collect(),
            };
            batch.put(
                Keyspace::Meta,
                meta_key(META_PURGE, &cur.def.id.to_be_bytes()),
                json(&old)?,
            );
            let auto = cur.auto_increment.load(Ordering::SeqCst).max(sequence);
            let name = def.name.clone();
            let t = Table::with_counters(
                def,
                Arc::new(AtomicU64::new(auto)),
                Arc::new(AtomicU64::new(rows)),
            );
            Arc::make_mut(database).tables.insert(name, Arc::new(t));
            Ok(cat.version + 1)
        })
    }

    /// Purges the ids of `record` and deletes its `c/x/` record.
    fn discard(&self, record: &PurgeRecord) -> Result<()> {
        self.txn.purge_table(record.table, &record.indexes)?;
        self.change(|_, _, batch| {
            // After a failed rewrite too: nothing to carry.
            crate::catalog::engine::unfinished_change();
            batch.delete(
                Keyspace::Meta,
                meta_key(META_PURGE, &record.table.to_be_bytes()),
            );
            Ok(())
        })
    }

    /// At open: purges what rewrites left (`c/x/` records; see "Crash
    /// safety" in the module doc).
    pub(crate) fn finish_rewrites(&self) -> Result<()> {
        let mut records = Vec::new();
        let mut err = None;
        self.storage.scan(
            Keyspace::Meta,
            &KeyRange::prefix(META_PURGE),
            false,
            &mut |_, v| match serde_json::from_slice::<PurgeRecord>(v) {
                Ok(r) => {
                    records.push(r);
                    ControlFlow::Continue(())
                }
                Err(e) => {
                    err = Some(Error::Corrupt(e.to_string()));
                    ControlFlow::Break(())
                }
            },
        )?;
        if let Some(e) = err {
            return Err(e);
        }
        for r in records {
            tracing::info!(
                table = r.table,
                "purging the rows of an unfinished table rewrite"
            );
            self.discard(&r)?;
        }
        Ok(())
    }

    /// Whether `t` holds no row (the latest committed state).
    pub(crate) fn table_is_empty(&self, t: &Table) -> Result<bool> {
        let session = self.txn.session();
        let mut txn = session.begin(IsolationLevel::ReadCommitted);
        txn.begin_statement();
        let mut empty = true;
        txn.scan(
            t.def.id,
            &KeyRange::all(),
            false,
            ReadMode::Current,
            &mut |_, _| {
                empty = false;
                ControlFlow::Break(())
            },
        )?;
        txn.rollback();
        Ok(empty)
    }

    /// ALTER TABLE ... AUTO_INCREMENT = n on the table with id `id` (or, after
    /// a rewrite gave it a new id, the one named `db`.`name`): the next value
    /// handed out is `n`, or one past the largest value the column holds if
    /// that is larger (InnoDB's rule). Without an AUTO_INCREMENT column it
    /// does nothing, as the option only shows with one.
    pub(crate) fn set_auto_increment(
        &self,
        id: TableId,
        db: &str,
        name: &str,
        n: u64,
    ) -> Result<()> {
        let cat = self.catalog();
        let t = cat
            .databases
            .values()
            .flat_map(|d| d.tables.values())
            .find(|t| t.def.id == id)
            .or_else(|| cat.table(db, name))
            .cloned();
        drop(cat);
        let Some(t) = t else { return Ok(()) };
        let Some(a) = t.auto_increment_column() else {
            return Ok(());
        };
        let session = self.txn.session();
        let mut txn = session.begin(IsolationLevel::ReadCommitted);
        txn.begin_statement();
        let mut max = 0u64;
        let mut row = Vec::new();
        let mut err = None;
        txn.scan(
            t.def.id,
            &KeyRange::all(),
            false,
            ReadMode::Current,
            &mut |_, bytes| {
                if let Err(e) = decode_table_row(&t, bytes, &mut row) {
                    err = Some(e);
                    return ControlFlow::Break(());
                }
                if let Some(v) = row.get(a).and_then(|v| v.to_i64()) {
                    max = max.max(v.max(0) as u64);
                }
                ControlFlow::Continue(())
            },
        )?;
        txn.rollback();
        if let Some(e) = err {
            return Err(e);
        }
        t.auto_increment
            .store(n.saturating_sub(1).max(max), Ordering::SeqCst);
        Ok(())
    }
}

/// One old row as the new definition stores it (see "Conversion rules").
/// With `lenient` (a non-strict `sql_mode`) the values strict mode refuses
/// are adjusted and a warning is pushed there instead (see [`adjust`]).
/// Writes `rows` (converted, in the new table's column order; the first
/// error ends the write) into `new`
/// in one committed transaction; `written` counts the rows written so far,
/// which number the hidden row ids of a table without a primary key.
fn write_rows(
    session: &canyon_txn::TxnSession,
    new: &Table,
    rows: &mut dyn Iterator<Item = Result<Vec<Value>>>,
    written: &mut u64,
) -> Result<()> {
    let mut w = session.begin(IsolationLevel::ReadCommitted);
    w.begin_statement();
    let wrote = (|| -> Result<()> {
        for row in rows {
            let row = row?;
            *written += 1;
            let pk = if new.hidden_pk() {
                hidden_key(*written)
            } else {
                crate::catalog::rows::primary_key(new, &row)
            };
            w.lock(&crate::exec::row_lock_key(new, &pk))?;
            if w.get_locked(new.def.id, &pk)?.is_some() {
                return Err(Error::DuplicateEntry {
                    value: new
                        .def
                        .primary_key
                        .iter()
                        .map(|&c| row[c].to_display())
                        .collect::<Vec<_>>()
                        .join("-"),
                    key: format!("{}.PRIMARY", new.def.name),
                });
            }
            let keys = index_keys(new, &row);
            w.put(
                new.def.id,
                pk,
                encode_table_row(new, &row),
                Vec::new(),
                keys,
            );
        }
        Ok(())
    })();
    match wrote {
        Ok(()) => w.commit(),
        Err(e) => {
            w.rollback();
            Err(e)
        }
    }
}

fn convert_row(
    new: &Table,
    sources: &[Source],
    old: &[Value],
    rowno: u64,
    sequence: &mut u64,
    zone: &Zone,
    mut lenient: Option<&mut Vec<(u16, String)>>,
) -> Result<Vec<Value>> {
    let mut row = Vec::with_capacity(sources.len());
    for (c, source) in sources.iter().enumerate() {
        let col = &new.def.columns[c];
        let v = match source {
            Source::Old(o) => old[*o].clone(),
            Source::Fill(v) => v.clone(),
            Source::Sequence => {
                *sequence += 1;
                Value::UInt(*sequence)
            }
            Source::OldSequence(o) => match old[*o].to_i64() {
                None | Some(0) => {
                    *sequence += 1;
                    Value::UInt(*sequence)
                }
                Some(n) => {
                    if let Ok(n) = u64::try_from(n) {
                        *sequence = (*sequence).max(n);
                    }
                    old[*o].clone()
                }
            },
        };
        let stored = if v.is_null() {
            if col.nullable {
                Ok(Value::Null)
            } else {
                Err(Error::StrictModeError {
                    code: 1138,
                    message: "Invalid use of NULL value".into(),
                })
            }
        } else {
            match crate::types::coerce(v.clone(), col.ty, &col.name, rowno) {
                // MySQL's ALTER reports a string too long for the new type as
                // 1265, where INSERT says 1406.
                Err(Error::DataTooLong { column, row }) => Err(Error::StrictModeError {
                    code: 1265,
                    message: format!("Data truncated for column '{column}' at row {row}"),
                }),
                // A local time into a TIMESTAMP (from a DATETIME, or a new
                // column's default) is its instant in the session's zone;
                // a TIMESTAMP's own value kept its instant (`coerce`).
                Ok(Value::DateTime(local))
                    if matches!(col.ty, crate::types::SqlType::Timestamp(_)) =>
                {
                    crate::types::timezone::stamp(local, zone)
                        .map(Value::Stamp)
                        .ok_or_else(|| Error::IncorrectValue {
                            type_name: "datetime".to_string(),
                            value: crate::types::value::format_datetime(&local),
                            column: col.name.clone(),
                            row: rowno,
                        })
                }
                other => other,
            }
        };
        row.push(match (stored, lenient.as_deref_mut()) {
            (Ok(v), _) => v,
            (Err(e), Some(warnings)) => adjust(col, &v, rowno, e, warnings)?,
            (Err(e), None) => return Err(e),
        });
    }
    Ok(row)
}

/// Non-strict `sql_mode`: what MySQL stores for a value strict mode refuses
/// with `e`, with its warning — a NULL for NOT NULL becomes the type's
/// implicit default (1265), an integer out of range the nearest end of the
/// range (1264; a FLOAT / DOUBLE / DECIMAL too), a string too long its first
/// characters (1265), a string that is not a number its leading number (1265)
/// or 0 (1366). Other refusals (dates) stay errors: not implemented leniently.
fn adjust(
    col: &crate::catalog::ColumnDef,
    v: &Value,
    rowno: u64,
    e: Error,
    warnings: &mut Vec<(u16, String)>,
) -> Result<Value> {
    use crate::types::SqlType;
    let truncated = format!("Data truncated for column '{}' at row {rowno}", col.name);
    let coerce = |x: Value| crate::types::coerce(x, col.ty, &col.name, rowno);
    match e {
        Error::StrictModeError { code: 1138, .. } => {
            warnings.push((1265, truncated));
            let zero = if col.ty.is_integer()
                || matches!(
                    col.ty,
                    SqlType::Float { .. } | SqlType::Double { .. } | SqlType::Decimal { .. }
                ) {
                Value::Int(0)
            } else {
                Value::str("")
            };
            coerce(zero)
        }
        Error::StrictModeError { code: 1265, .. } => {
            let limit = match col.ty {
                SqlType::Char(n) | SqlType::VarChar(n) => n as usize,
                _ => return Err(e),
            };
            warnings.push((1265, truncated));
            let text = v.to_display();
            coerce(Value::str(&text.chars().take(limit).collect::<String>()))
        }
        Error::OutOfRange { .. } if col.ty.is_integer() => {
            let (lo, hi) = integer_range(col.ty);
            let negative = v.to_f64().is_some_and(|f| f < 0.0);
            warnings.push((
                1264,
                format!(
                    "Out of range value for column '{}' at row {rowno}",
                    col.name
                ),
            ));
            coerce(if negative { lo } else { hi })
        }
        // FLOAT / DOUBLE / DECIMAL out of range: the nearest end of the
        // column's range (0 for a negative value into UNSIGNED), as INSERT
        // clips it.
        Error::OutOfRange { .. }
            if col.ty.is_real() || matches!(col.ty, SqlType::Decimal { .. }) =>
        {
            let raised = std::cell::RefCell::new(Vec::new());
            let clipped = crate::types::sqltype::coerce_or_clip(
                v.clone(),
                col.ty,
                &col.name,
                rowno,
                &|code, message| raised.borrow_mut().push((code, message.to_string())),
            )?;
            warnings.extend(raised.into_inner());
            Ok(clipped)
        }
        Error::IncorrectValue { .. } if col.ty.is_integer() || col.ty.is_real() => {
            let text = v.to_display();
            let prefix: String = text
                .trim_start()
                .chars()
                .enumerate()
                .take_while(|(i, ch)| {
                    ch.is_ascii_digit() || (*i == 0 && (*ch == '-' || *ch == '+'))
                })
                .map(|(_, ch)| ch)
                .collect();
            // MySQL: a leading number is kept ("Data truncated"); no
            // number at all is "Incorrect integer value" and stores 0.
            warnings.push(if prefix.chars().any(|ch| ch.is_ascii_digit()) {
                (1265, truncated)
            } else {
                (
                    1366,
                    format!(
                        "Incorrect integer value: '{text}' for column '{}' at row {rowno}",
                        col.name
                    ),
                )
            });
            let n = prefix.parse::<i64>().unwrap_or(0);
            match coerce(Value::Int(n)) {
                Ok(v) => Ok(v),
                Err(Error::OutOfRange { .. }) => {
                    let (lo, hi) = integer_range(col.ty);
                    coerce(if n < 0 { lo } else { hi })
                }
                Err(e) => Err(e),
            }
        }
        e => Err(e),
    }
}

/// The smallest and largest value of an integer type.
fn integer_range(ty: crate::types::SqlType) -> (Value, Value) {
    use crate::types::SqlType;
    let bits = match ty {
        SqlType::TinyInt { .. } => 8,
        SqlType::SmallInt { .. } => 16,
        SqlType::MediumInt { .. } => 24,
        SqlType::Int { .. } => 32,
        _ => 64,
    };
    if ty.is_unsigned() {
        (Value::UInt(0), Value::UInt(u64::MAX >> (64 - bits)))
    } else {
        (
            Value::Int(i64::MIN >> (64 - bits)),
            Value::Int(i64::MAX >> (64 - bits)),
        )
    }
}
