//! LOAD DATA [LOCAL] INFILE: rows from a file, inserted as one statement.
//!
//! # Where the bytes come from
//! - A server-side file (no LOCAL) is read here, if `secure_file_priv`
//!   allows its path ([`crate::EngineConfig::secure_file_priv`]: NULL none,
//!   empty anywhere, a directory only under it; else 1290) and the account
//!   holds the global FILE privilege (1227). A relative name is taken from
//!   `secure_file_priv`'s directory (from the server's working directory
//!   when that is empty) — MySQL takes it from the data directory, which
//!   Canyon's storage does not expose as files.
//! - LOCAL: the client sends the file. This layer does not speak the
//!   protocol: the text's run ends with [`Error::LocalInfileRequest`] naming
//!   the file (the statement's table and privileges already checked, so a
//!   wrong statement costs no transfer); the caller — the server, which
//!   sends the LOCAL INFILE request packet (0xFB + name) — then calls
//!   [`Session::finish_local_infile`] with a source of the client's
//!   packets (each call one packet's payload, until the empty packet),
//!   which runs the load and returns the statement's result. LOCAL needs
//!   both `local_infile` on the server ([`crate::EngineConfig::local_infile`])
//!   and CLIENT_LOCAL_FILES from the client
//!   ([`Session::set_client_local_files`]), else 3948 before any transfer.
//!
//! Either way the file is streamed: rows are read
//! (`crate::exec::load::StreamReader`) and inserted as its pieces arrive,
//! so memory holds one piece and the records not yet read, not the file
//! (the transaction's write buffer still holds every row until the
//! commit, as any statement's does).
//!
//! # How rows are stored (MySQL 8.0, sql_load.cc)
//! The bytes are cut into records and fields by `crate::exec::load` (its
//! module doc has the FIELDS / LINES rules). Field i goes to the i-th
//! target of the column list (every column in table order without one): a
//! column gets the field's text stored as its type stores a string
//! (`exec::load::store_field`), a user variable gets the text itself (NULL
//! for `\N`). Then the SET assignments are evaluated, left to right, over
//! the row so far (columns not yet given read NULL) and the user
//! variables. The rows go through the INSERT executor
//! (`crate::exec::insert_rows`): AUTO_INCREMENT, triggers, foreign keys and
//! the duplicate-key rules are INSERT's.
//!
//! | condition                          | strict, no IGNORE     | otherwise                        |
//! |------------------------------------|-----------------------|----------------------------------|
//! | fewer fields than targets          | error 1261            | warning 1261, column default     |
//! | more fields than targets           | error 1262            | warning 1262, extra dropped      |
//! | NULL for a NOT NULL column         | error 1263            | warning 1263, implicit default   |
//! | bad value (1366, 1265, 1264, 1292) | that error            | the warning, value as MySQL's    |
//! | duplicate key                      | error 1062            | IGNORE / LOCAL: warning, skipped |
//!
//! LOCAL without REPLACE is IGNORE (the server cannot stop the client half
//! way through the file: MySQL's `Sql_cmd_load_table` sets IGNORE), so it
//! never stops on a bad value in strict mode either. Errors name the
//! record's number ("at row N", counted from 1 after IGNORE n LINES). The
//! statement is atomic: on an error nothing is loaded (its writes are
//! rolled back as any failed statement's).
//!
//! The OK packet: affected rows = inserted + deleted by REPLACE, and MySQL's
//! info line `Records: N  Deleted: D  Skipped: S  Warnings: W`.
//!
//! # Where a load's time goes, and what is done about it (issue 29)
//!
//! `perf` on the release server loading a million sysbench-shaped rows
//! (`bench/load_data.sh`, `id` PRIMARY KEY, `k` with a secondary index,
//! CHAR(120) + CHAR(60)) splits the time in four phases:
//!
//! | phase | share | what |
//! |---|---|---|
//! | read and insert the rows | ~40% | half of it the kernel zeroing fresh pages for the write buffer, row locks and undo log (all held to the commit); field cutting, coercion and key encoding a few % each; row lock and hashing ~8% |
//! | prepare the commit batch | ~15% | a versioned copy of every row, a row-cache copy of every row |
//! | the storage write | ~35% | RocksDB's memtable skip list (18%: the index entries arrive in random order) and its WAL |
//! | release the locks | ~10% | a million lock-table removals |
//!
//! The parsing side is small: the load is bound by the one transaction that
//! holds every row until its commit. What is done, keeping every guarantee
//! (one atomic transaction, durable at commit, INSERT's duplicate rules,
//! other sessions' snapshots):
//!
//! - a commit of more than `canyon_txn`'s bulk threshold of rows (4096)
//!   sorts its index entries, so RocksDB's memtable inserts them in key
//!   order (each insert starting from the last one's place instead of a
//!   search from the top), and drops the written rows from the row cache
//!   instead of copying each into it (`canyon-txn`'s `commit.rs`,
//!   `BULK_ROWS`);
//! - the statement undo log boxes its entries (32 bytes a row instead of a
//!   write-buffer entry's width), and a row is encoded into one allocation
//!   of its exact size (`types::encoding::encode_values`).
//!
//! Measured in `docs/benchmarks.md` ("LOAD DATA LOCAL: Canyon vs MariaDB",
//! "Bulk commits"): 1.3–1.75× main's rate on a million rows, the storage
//! write down from ~35% of the load to 14%; what remains is the memory the
//! one transaction grows (page zeroing ~26%) and the lock table (~17%).
//!
//! **Memory is not bounded** on this path: the transaction's write buffer,
//! its row locks and, at commit, the batch hold the whole file (about 1.5 KB
//! a row for the benchmark's 187-byte rows; `mvcc.rs`: "Transactions larger
//! than memory"). Hence the bulk path below.
//!
//! # The bulk path: sorted runs ingested as SST files
//!
//! A load into a table that is **empty** takes it when it can keep every
//! guarantee (the mechanism, its invariants and its crash safety are
//! `canyon_txn`'s `bulk.rs` essay). Here, in order:
//!
//! 1. **Eligibility** (else the path above, unchanged): the statement is its
//!    own transaction (autocommit, no transaction open); the engine's
//!    `bulk_load` is on (the server's `bulk_load`, default on); not REPLACE;
//!    no foreign key either way; not partitioned; every secondary index
//!    public, not UNIQUE (a row skipped for a unique index would have to
//!    leave Rows and the other indexes too: not built), not FULLTEXT; no
//!    INSERT trigger. Then, in the transaction,
//!    `Transaction::begin_bulk` closes the table's **writer gate** (the
//!    prefix of its row-lock keys, `exec::row_lock_prefix`): every writer
//!    locks each row before it reads or writes it, and a lock on a gated key
//!    waits — as on a row lock: `innodb_lock_wait_timeout` (1205) and KILL
//!    end the wait — until the load's transaction ends. It waits for the
//!    table's current lock holders to finish, then checks with one seek per
//!    keyspace that the table has no key in Rows or its indexes (a table
//!    emptied by DELETE still has tombstones: the old path); if either
//!    fails, the old path. Readers never wait: the loaded versions carry a
//!    commit timestamp above every snapshot taken before the commit.
//! 2. **Rows**: cut, stored, defaulted and encoded exactly as above (the
//!    same `exec::insert_rows`, which hands a row to `Transaction::bulk_put`
//!    instead of checking and buffering it: no lock, no undo, no write
//!    buffer). The transaction appends each row and index entry to sorted
//!    runs, spilled to files under the storage's scratch directory past
//!    64 MiB (`canyon_txn::RUN_BUDGET`): memory is bounded by the budget,
//!    not the file.
//! 3. **Duplicates**: `Transaction::bulk_merge` merges the runs; equal
//!    primary keys are duplicates, the first in the file stays. Strict
//!    (no IGNORE, not LOCAL): the statement fails with the first duplicate
//!    in file order (1062) and nothing is loaded. IGNORE or LOCAL: each
//!    later row is skipped with warning 1062 (its index entries left out
//!    too) and counted in `Skipped`. *Differences from the row-by-row
//!    path*: the duplicate warnings come after the file's other warnings
//!    (in file order among themselves), and a duplicate found by the merge
//!    is reported after the whole file was read, so in strict mode an error
//!    on a later row (a bad value) wins over an earlier duplicate.
//! 4. **Commit**: the session's ordinary COMMIT; the transaction ingests
//!    the merged files at its commit timestamp (see `bulk.rs`). The
//!    table's row-count statistics are told of the rows as for any load;
//!    AUTO_INCREMENT and the hidden row id advance in `insert_rows` as on
//!    the old path.
//!
//! The statement cannot read its own rows while it runs (a SET expression
//! with a subquery over the target table sees it empty), which no
//! MySQL-compatible statement form relies on.

use super::state::*;
use crate::catalog::routines::TriggerEvent;
use crate::catalog::Table;
use crate::exec::load::{
    implicit_default, store_field, store_field_strict, ByteSource, StreamReader,
};
use crate::exec::{self, StatementEffects};
use crate::expr::{eval, Env, EvalContext, Expr};
use crate::parse::load::{parse_load, LoadData, LoadDuplicates, LoadTarget};
use crate::plan::bind::Binder;
use crate::plan::{InsertPlan, OnDuplicate, PlanContext};
use crate::types::result::QueryResult;
use crate::types::value::Value;
use canyon_common::{Error, Result};
use std::sync::Arc;

/// A LOAD DATA LOCAL waiting for the client's file.
pub(super) struct PendingLoad {
    stmt: LoadData,
}

/// Where one field of a record goes, resolved against the table.
enum Target {
    Column(usize),
    Var(String),
}

/// 3948 ER_CLIENT_LOCAL_FILES_DISABLED (MySQL 8.0).
fn local_disabled() -> Error {
    Error::Sql {
        code: 3948,
        sqlstate: *b"42000",
        message: "Loading local data is disabled; this must be enabled on both the client and \
                  server sides"
            .into(),
    }
}

/// 1290 ER_OPTION_PREVENTS_STATEMENT for `--secure-file-priv`.
fn secure_file_priv_refuses() -> Error {
    Error::Sql {
        code: 1290,
        sqlstate: *b"HY000",
        message: "The MySQL server is running with the --secure-file-priv option so it cannot \
                  execute this statement"
            .into(),
    }
}

/// A warning of the load that strict mode makes an error: 1261, 1262 and
/// 1263 keep their SQLSTATE (01000, a warning's) as MySQL sends them.
fn load_error(code: u16, message: String) -> Error {
    Error::Sql {
        code,
        sqlstate: *b"01000",
        message,
    }
}

impl Session {
    /// Tells the session whether the client allows LOAD DATA LOCAL
    /// (CLIENT_LOCAL_FILES in its handshake response).
    pub fn set_client_local_files(&mut self, on: bool) {
        self.state.client_local_files = on;
    }

    /// Runs the LOAD DATA LOCAL that asked for the client's file
    /// ([`Error::LocalInfileRequest`]), reading the file from `source` as
    /// the rows are inserted (one packet's payload per call, `false` after
    /// the client's empty packet): its result is the statement's, with its
    /// warnings. On an error the load stops reading: the caller drains the
    /// rest of the client's packets.
    pub fn finish_local_infile(&mut self, source: &mut ByteSource<'_>) -> Result<QueryResult> {
        crate::parse::limits::with_statement_stack(|| {
            self.guarded(
                |s| {
                    s.settle()?;
                    let Some(p) = s.pending_load.take() else {
                        return Err(Error::Internal("no LOAD DATA LOCAL is waiting".into()));
                    };
                    let start = s.request_start("LOAD DATA LOCAL");
                    s.state.warnings.clear();
                    // The load is a statement running (P3 of `ddl::alter`):
                    // a DDL of its table waits for it.
                    s.state.engine.pin_catalog(&s.pin);
                    s.enter_statement();
                    let r = s.load_from(&p.stmt, source);
                    s.leave_statement();
                    if let Err(e) = &r {
                        s.record_error(e);
                    }
                    s.unpin_if_idle();
                    s.request_end(start, &r);
                    s.with_warning_count(r)
                },
                Err,
            )
        })
    }

    /// Runs a LOAD DATA text: a server-side file to the end, a LOCAL one to
    /// [`Error::LocalInfileRequest`] (see the module doc).
    pub(super) fn run_load_text(&mut self, sql: &str) -> Result<QueryResult> {
        self.pending_load = None;
        let stmt = parse_load(sql)?;
        let cat = self.state.engine.catalog();
        let table = self.load_target(&cat, &stmt)?;
        load_columns(&table, &stmt)?;
        if stmt.local {
            if !self.state.engine.config.local_infile || !self.state.client_local_files {
                return Err(local_disabled());
            }
            let file = stmt.file.clone();
            self.pending_load = Some(Box::new(PendingLoad { stmt }));
            return Err(Error::LocalInfileRequest(file));
        }
        self.state.check_super(&cat, "FILE")?;
        drop(cat);
        let path = self.server_file(&stmt.file)?;
        let not_found = |e: std::io::Error| {
            let (errno, what) = match e.kind() {
                std::io::ErrorKind::NotFound => (2, "No such file or directory"),
                std::io::ErrorKind::PermissionDenied => (13, "Permission denied"),
                _ => (5, "Input/output error"),
            };
            Error::Sql {
                code: 29,
                sqlstate: *b"HY000",
                message: format!(
                    "File '{}' not found (Errcode: {errno} \"{what}\")",
                    path.display()
                ),
            }
        };
        let mut file = std::fs::File::open(&path).map_err(not_found)?;
        // Read in pieces, as the rows are inserted.
        let mut source = |buf: &mut Vec<u8>| -> Result<bool> {
            use std::io::Read;
            let start = buf.len();
            buf.resize(start + (256 << 10), 0);
            let n = file
                .read(&mut buf[start..])
                .map_err(|e| Error::Io(format!("reading {}: {e}", path.display())))?;
            buf.truncate(start + n);
            Ok(n > 0)
        };
        self.load_from(&stmt, &mut source)
    }

    /// The path of a server-side file, if `secure_file_priv` allows it
    /// (LOAD DATA's input, SELECT ... INTO OUTFILE's output).
    pub(super) fn server_file(&self, name: &str) -> Result<std::path::PathBuf> {
        secure_path(&self.state.engine.config, name)
    }

    /// The table, checked for the privileges the load needs: INSERT, and
    /// DELETE with REPLACE.
    fn load_target(
        &mut self,
        cat: &Arc<crate::catalog::Catalog>,
        stmt: &LoadData,
    ) -> Result<Arc<Table>> {
        let ctx = PlanContext::new(
            cat,
            self.state.db.as_deref(),
            self.state.connection_collation(),
        );
        let table = ctx
            .resolve(&stmt.table)
            .map_err(|e| self.state.fill_account(e))?;
        let (db, name) = (table.def.db.clone(), table.def.name.clone());
        self.state.check_db(cat, &db, "INSERT", Some(&name))?;
        if stmt.duplicates == LoadDuplicates::Replace {
            self.state.check_db(cat, &db, "DELETE", Some(&name))?;
        }
        Ok(table)
    }

    /// Loads the bytes `source` gives under `stmt` as one statement (see
    /// the module doc).
    fn load_from(&mut self, stmt: &LoadData, source: &mut ByteSource<'_>) -> Result<QueryResult> {
        if let Some(cs) = &stmt.charset {
            if !matches!(
                cs.as_str(),
                "binary" | "utf8" | "utf8mb3" | "utf8mb4" | "latin1" | "ascii"
            ) {
                return Err(Error::Unsupported(format!(
                    "LOAD DATA ... CHARACTER SET {cs}"
                )));
            }
        }
        let cat = self.state.engine.catalog();
        let table = self.load_target(&cat, stmt)?;
        // Table locks (LOCK TABLES, FTWRL), as an INSERT's.
        if !crate::catalog::temporary::is_temporary(table.def.id) {
            // Before the table-lock gate records the write intention (a
            // refused load leaves none behind: `super::read_only`).
            self.check_read_only_write()?;
        }
        self.gate_load(&table)?;
        let def = &table.def;
        let LoadColumns {
            targets,
            columns,
            file_columns,
            set,
        } = load_columns(&table, stmt)?;
        // A value for a generated column: 3105, as an INSERT's.
        crate::plan::generated::check_insert(&table, &columns, &[], true)?;
        // LOCAL without REPLACE is IGNORE (see the module doc).
        let ignore = stmt.duplicates == LoadDuplicates::Ignore
            || (stmt.local && stmt.duplicates == LoadDuplicates::Error);
        let plan = InsertPlan {
            table: table.clone(),
            columns,
            rows: Vec::new(),
            select: None,
            ignore,
            on_duplicate: if stmt.duplicates == LoadDuplicates::Replace {
                OnDuplicate::Replace
            } else {
                OnDuplicate::Error
            },
            delayed: false,
            fk: cat.has_foreign_keys(&table).then(|| cat.clone()),
        };
        drop(cat);
        // The bulk path (see the module doc) if the statement is its own
        // transaction and the table has nothing it cannot keep; triggers and
        // the table's emptiness are checked in the transaction.
        let bulk_candidate = self.txn.is_none()
            && self.state.autocommit
            && !self.implicit_txn
            && self.state.engine.config.bulk_load
            && stmt.duplicates != LoadDuplicates::Replace
            && plan.fk.is_none()
            && def.partitioning.is_none()
            && def
                .indexes
                .iter()
                .all(|i| !i.unique && !i.attrs.fulltext && i.state.is_public());
        let mut effects = StatementEffects::default();
        // A TEMPORARY table's load is no write for a READ ONLY transaction
        // or a read-only server (`super::read_only`).
        let shared = !crate::catalog::temporary::is_temporary(def.id);
        let r = self.with_txn(&[], shared, None, |txn, ctx| {
            let bulk = bulk_candidate
                && !ctx.has_triggers(def, TriggerEvent::Insert)
                && txn.begin_bulk(
                    def.id,
                    &exec::row_lock_prefix(&table),
                    &def.indexes.iter().map(|i| i.id).collect::<Vec<_>>(),
                )?;
            let strict = !ignore
                && (ctx.sql_mode_has("STRICT_TRANS_TABLES")
                    || ctx.sql_mode_has("STRICT_ALL_TABLES"));
            let mut reader = StreamReader::new(&stmt.format, source);
            reader.skip_lines(stmt.ignore_lines)?;
            let mut fields = Vec::new();
            let width = def.columns.len();
            let mut next = |effects: &mut StatementEffects,
                            rowno: u64|
             -> Result<Option<Vec<Option<Value>>>> {
                if !reader.next_record(&mut fields)? {
                    return Ok(None);
                }
                ctx.check_interrupt()?;
                let mut warn = |code: u16, message: String| -> Result<()> {
                    // A note is no error in strict mode either.
                    if strict && code & crate::expr::eval::NOTE == 0 {
                        return Err(load_error(code, message));
                    }
                    effects.warnings.push((code, message));
                    Ok(())
                };
                let mut values: Vec<Option<Value>> = Vec::with_capacity(plan.columns.len());
                // The row SET's expressions read (kept only when there are any).
                let mut frame = if set.is_empty() {
                    Vec::new()
                } else {
                    vec![Value::Null; width]
                };
                let short = fields.len() < targets.len();
                for (i, t) in targets.iter().enumerate() {
                    let field = fields.get_mut(i).map(Option::take);
                    match (t, field) {
                        (Target::Var(v), f) => {
                            let value = match f {
                                Some(Some(bytes)) => Value::Bytes(bytes),
                                _ => Value::Null,
                            };
                            if let Some(w) = ctx.var_writes {
                                w.borrow_mut().insert(v.clone(), value);
                            }
                        }
                        (Target::Column(c), None) => {
                            let col = &def.columns[*c];
                            // The column's default; a NOT NULL column
                            // without one its type's zero.
                            let v = if col.default.is_none() && !col.nullable && !col.auto_increment
                            {
                                Some(implicit_default(col.ty))
                            } else {
                                None
                            };
                            if let Some(v) = &v {
                                if !frame.is_empty() {
                                    frame[*c] = v.clone();
                                }
                            }
                            values.push(v);
                        }
                        (Target::Column(c), Some(None)) => {
                            let col = &def.columns[*c];
                            let v = if col.nullable || col.auto_increment {
                                Value::Null
                            } else {
                                warn(
                                    1263,
                                    format!(
                                        "Column set to default value; NULL supplied to NOT NULL \
                                         column '{}' at row {rowno}",
                                        col.name
                                    ),
                                )?;
                                implicit_default(col.ty)
                            };
                            if !frame.is_empty() {
                                frame[*c] = v.clone();
                            }
                            values.push(Some(v));
                        }
                        (Target::Column(c), Some(Some(bytes))) => {
                            let col = &def.columns[*c];
                            let (v, w) = if strict {
                                store_field_strict(bytes, col.ty, &col.name, rowno)?
                            } else {
                                store_field(bytes, col.ty, &col.name, rowno)
                            };
                            if let Some((code, message)) = w {
                                warn(code, message)?;
                            }
                            if !frame.is_empty() {
                                frame[*c] = v.clone();
                            }
                            values.push(Some(v));
                        }
                    }
                }
                if short {
                    warn(
                        1261,
                        format!("Row {rowno} doesn't contain data for all columns"),
                    )?;
                } else if fields.len() > targets.len() {
                    warn(
                        1262,
                        format!(
                            "Row {rowno} was truncated; it contained more data than there were \
                             input columns"
                        ),
                    )?;
                }
                debug_assert_eq!(values.len(), file_columns);
                for (c, e) in &set {
                    let v = eval(
                        e,
                        &Env {
                            row: &frame,
                            aggs: &[],
                            ctx,
                        },
                    )?;
                    let col = &def.columns[*c];
                    // NULL for a NOT NULL column: 1048, a warning (and the
                    // type's zero) unless strict mode makes it the error.
                    let v = if v.is_null() && !col.nullable && !col.auto_increment {
                        if strict {
                            return Err(Error::BadNull(col.name.clone()));
                        }
                        effects
                            .warnings
                            .push((1048, format!("Column '{}' cannot be null", col.name)));
                        implicit_default(col.ty)
                    } else {
                        v
                    };
                    frame[*c] = v.clone();
                    values.push(Some(v));
                }
                Ok(Some(values))
            };
            let (mut stats, last_auto) =
                exec::insert_rows(&plan, txn, ctx, &mut effects, 1, &mut next)?;
            if bulk {
                // The merge is the load's longest step without a record
                // read: a KILL that came meanwhile stops it here.
                ctx.check_interrupt()?;
                // Duplicate primary keys, found by the merge: the first row
                // in the file stays, as INSERT's row-by-row check keeps it.
                let mut dups: Vec<(u64, Error)> = Vec::new();
                let mut values = Vec::new();
                let skipped = txn.bulk_merge(&mut |_pk, row, seq| {
                    crate::catalog::rows::decode_table_row(&table, row, &mut values)?;
                    dups.push((seq, exec::pk_duplicate(&table, &values)));
                    Ok(())
                })?;
                dups.sort_by_key(|(seq, _)| *seq);
                if !ignore {
                    if let Some((_, e)) = dups.into_iter().next() {
                        return Err(e);
                    }
                } else {
                    for (_, e) in dups {
                        exec::skip_warning(&mut effects, e);
                    }
                }
                stats.copied -= skipped;
            }
            match ctx.strict_mode_error() {
                Some(e) if !ignore => Err(e),
                _ => Ok((stats, last_auto)),
            }
        });
        let (stats, last_auto) = r?;
        if let Some(id) = effects.generated_id {
            self.state.last_insert_id = id;
        }
        let warnings = effects.warnings.len();
        for (code, msg) in effects.warnings {
            let (level, code) = crate::expr::eval::warning_level(code);
            self.state.warnings.push((level, code, msg));
        }
        let affected = stats.copied + stats.deleted;
        self.state.row_count = affected as i64;
        if let Some(delay) = table.stats.note_changes(stats.copied, stats.deleted, 0) {
            self.state.engine.spawn_analysis(table.clone(), delay);
        }
        let skipped = stats.records - stats.copied;
        Ok(QueryResult::Ok {
            affected_rows: affected,
            last_insert_id: match effects.generated_id {
                Some(id) => id,
                None if stats.copied > 0 => last_auto,
                None => 0,
            },
            info: format!(
                "Records: {}  Deleted: {}  Skipped: {}  Warnings: {warnings}",
                stats.records, stats.deleted, skipped
            ),
            warnings: warnings as u16,
        })
    }
}

/// The targets of a load resolved against its table.
struct LoadColumns {
    /// Where each field goes.
    targets: Vec<Target>,
    /// The insert plan's columns: the file's, then SET's.
    columns: Vec<usize>,
    /// How many of `columns` come from the file.
    file_columns: usize,
    /// SET's assignments, bound over the table's row.
    set: Vec<(usize, Expr)>,
}

/// Resolves the column list and binds SET (1054 for an unknown column,
/// 1110 for one given twice, as in INSERT).
fn load_columns(table: &Table, stmt: &LoadData) -> Result<LoadColumns> {
    let def = &table.def;
    let targets: Vec<Target> = match &stmt.targets {
        None => (0..def.columns.len()).map(Target::Column).collect(),
        Some(list) => list
            .iter()
            .map(|t| match t {
                LoadTarget::UserVar(v) => Ok(Target::Var(v.clone())),
                LoadTarget::Column(c) => {
                    table
                        .column(c)
                        .map(Target::Column)
                        .ok_or_else(|| Error::UnknownColumn {
                            column: c.clone(),
                            context: "field list".into(),
                        })
                }
            })
            .collect::<Result<_>>()?,
    };
    let mut columns: Vec<usize> = Vec::new();
    for t in &targets {
        if let Target::Column(c) = t {
            if columns.contains(c) {
                return Err(Error::ColumnSpecifiedTwice(def.columns[*c].name.clone()));
            }
            columns.push(*c);
        }
    }
    let file_columns = columns.len();
    let mut set: Vec<(usize, Expr)> = Vec::with_capacity(stmt.set.len());
    let mut b = Binder::new(Some(table), None);
    b.context = "field list";
    for (name, e) in &stmt.set {
        let c = table.column(name).ok_or_else(|| Error::UnknownColumn {
            column: name.clone(),
            context: "field list".into(),
        })?;
        if columns.contains(&c) {
            return Err(Error::ColumnSpecifiedTwice(name.clone()));
        }
        columns.push(c);
        set.push((c, b.bind(e)?));
    }
    Ok(LoadColumns {
        targets,
        columns,
        file_columns,
        set,
    })
}

/// The path of a server-side file, if `config`'s `secure_file_priv` allows
/// it (LOAD DATA's input, SELECT ... INTO OUTFILE's output, LOAD_FILE()).
pub(super) fn secure_path(
    config: &crate::catalog::config::EngineConfig,
    name: &str,
) -> Result<std::path::PathBuf> {
    let Some(dir) = config.secure_file_priv.clone() else {
        return Err(secure_file_priv_refuses());
    };
    let path = std::path::Path::new(name);
    let path = if path.is_absolute() || dir.as_os_str().is_empty() {
        path.to_path_buf()
    } else {
        dir.join(path)
    };
    if dir.as_os_str().is_empty() {
        return Ok(path);
    }
    // Compared after resolving `..` and links, as MySQL does
    // (is_secure_file_path).
    // A file that does not exist yet (an OUTFILE) is its directory's
    // real path and its name: `dir/../x` must not pass as under `dir`.
    let real = std::fs::canonicalize(&path)
        .ok()
        .or_else(|| {
            let parent = std::fs::canonicalize(path.parent()?).ok()?;
            Some(parent.join(path.file_name()?))
        })
        .unwrap_or_else(|| path.clone());
    let root = std::fs::canonicalize(&dir).unwrap_or(dir);
    if real.starts_with(&root) {
        Ok(real)
    } else {
        Err(secure_file_priv_refuses())
    }
}
