//! The engine: storage, transactions and the catalog, with DDL and accounts.
//!
//! Catalog changes follow one protocol (see [`crate::catalog`]): take the DDL
//! mutex, copy the current snapshot, change the copy, write the changed records
//! to the Meta keyspace with a synced write, then publish the copy with one
//! atomic swap. Readers never wait for DDL.

use crate::api::{AuthInfo, EngineConfig};
use crate::catalog::{Catalog, Database, Grant, Table, TableDef, UserDef};
use crate::encoding::{decode_key_int, decode_row, encode_row};

use crate::exec::index_keys;
use crate::session::Session;
use arc_swap::ArcSwap;
use canyon_common::{Error, Result};
use canyon_storage::{KeyRange, Keyspace, Storage, WriteBatch};
use canyon_txn::{IsolationLevel, ReadMode, TableId, TxnConfig, TxnManager};
use parking_lot::Mutex;
use sha1::{Digest, Sha1};
use std::collections::HashSet;
use std::ops::ControlFlow;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

const META_DB: &[u8] = b"c/db/";
const META_TABLE: &[u8] = b"c/t/";
const META_USER: &[u8] = b"c/u/";
const META_NEXT_ID: &[u8] = b"c/next_id";
const META_STATS: &[u8] = b"c/s/";

/// The engine: catalog, transactions and storage; no network.
pub struct Engine {
    pub(crate) config: EngineConfig,
    pub(crate) storage: Arc<dyn Storage>,
    pub(crate) txn: Arc<TxnManager>,
    catalog: ArcSwap<Catalog>,
    /// Serialises catalog changes and owns the id counter.
    ddl: Mutex<u32>,
    /// When the engine was opened (SHOW STATUS `Uptime`).
    started: std::time::Instant,
    /// Live sessions (SHOW PROCESSLIST, KILL): see [`crate::procs`].
    pub(crate) processes: crate::procs::ProcessList,
}

fn meta_key(prefix: &[u8], rest: &[u8]) -> Vec<u8> {
    let mut k = prefix.to_vec();
    k.extend_from_slice(rest);
    k
}

fn user_key(user: &str, host: &str) -> Vec<u8> {
    let mut k = META_USER.to_vec();
    k.extend_from_slice(user.as_bytes());
    k.push(0);
    k.extend_from_slice(host.as_bytes());
    k
}

fn json<T: serde::Serialize>(v: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(v).map_err(|e| Error::Internal(e.to_string()))
}

/// SHA1(SHA1(password)) — what mysql_native_password stores.
pub fn native_hash(password: &str) -> [u8; 20] {
    let once = Sha1::digest(password.as_bytes());
    Sha1::digest(once).into()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<[u8; 20]> {
    if s.len() != 40 {
        return None;
    }
    let mut out = [0u8; 20];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&s[i * 2..i * 2 + 2], 16).ok()?;
    }
    Some(out)
}

impl Engine {
    /// Opens (and on first use initialises) the engine on `storage`: recovers the
    /// transaction state, loads the catalog, and recovers AUTO_INCREMENT counters
    /// from the largest stored keys (as InnoDB 5.7 did).
    pub fn open(storage: Arc<dyn Storage>, config: EngineConfig) -> Result<Arc<Engine>> {
        let txn = TxnManager::open(
            storage.clone(),
            TxnConfig {
                durability: config.durability,
                lock_wait_timeout: config.lock_wait_timeout,
                // Each GC pass scans the History and Index keyspaces (see canyon-txn's
                // gc.rs); every 30 s keeps that cost small next to the load.
                gc_interval: Duration::from_secs(30),
                blocking_hook: config.blocking_hook,
            },
        )?;
        let mut catalog = Catalog::default();
        let mut next_id: u32 = 1;
        let mut stats: Vec<(TableId, crate::stats::KeyStats)> = Vec::new();
        let mut err = None;
        storage.scan(
            Keyspace::Meta,
            &KeyRange::prefix(b"c/"),
            false,
            &mut |k, v| {
                let r: Result<()> = (|| {
                    if k.starts_with(META_DB) {
                        let name = String::from_utf8_lossy(&k[META_DB.len()..]).into_owned();
                        catalog.databases.insert(
                            name.clone(),
                            Arc::new(Database {
                                name,
                                tables: Default::default(),
                            }),
                        );
                    } else if k.starts_with(META_TABLE) {
                        let def: TableDef =
                            serde_json::from_slice(v).map_err(|e| Error::Corrupt(e.to_string()))?;
                        let db = catalog.databases.get_mut(&def.db).ok_or_else(|| {
                            Error::Corrupt(format!(
                                "table {} in unknown database {}",
                                def.name, def.db
                            ))
                        })?;
                        Arc::make_mut(db)
                            .tables
                            .insert(def.name.clone(), Arc::new(Table::new(def)));
                    } else if k.starts_with(META_USER) {
                        let u: UserDef =
                            serde_json::from_slice(v).map_err(|e| Error::Corrupt(e.to_string()))?;
                        catalog
                            .users
                            .insert((u.user.clone(), u.host.clone()), Arc::new(u));
                    } else if k.starts_with(META_STATS) {
                        // Statistics come after every table (c/s/ sorts after
                        // c/db/ and before c/t/, so keep them for the end).
                        let id = k[META_STATS.len()..]
                            .try_into()
                            .map(u32::from_be_bytes)
                            .map_err(|_| Error::Corrupt("stats key".into()))?;
                        let ks: crate::stats::KeyStats =
                            serde_json::from_slice(v).map_err(|e| Error::Corrupt(e.to_string()))?;
                        stats.push((id, ks));
                    } else if k == META_NEXT_ID {
                        next_id = u32::from_be_bytes(
                            v.try_into().map_err(|_| Error::Corrupt("next_id".into()))?,
                        );
                    }
                    Ok(())
                })();
                match r {
                    Ok(()) => ControlFlow::Continue(()),
                    Err(e) => {
                        err = Some(e);
                        ControlFlow::Break(())
                    }
                }
            },
        )?;
        if let Some(e) = err {
            return Err(e);
        }
        // Statistics of tables that no longer exist (dropped, truncated) are
        // ignored.
        for (id, ks) in stats {
            let table = catalog
                .databases
                .values()
                .flat_map(|d| d.tables.values())
                .find(|t| t.def.id == id);
            if let Some(t) = table {
                t.stats.load(ks);
            }
        }
        let engine = Arc::new(Engine {
            config,
            storage,
            txn,
            catalog: ArcSwap::from_pointee(catalog),
            ddl: Mutex::new(next_id),
            started: std::time::Instant::now(),
            processes: Default::default(),
        });
        engine.recover_counters()?;
        tracing::info!(
            databases = engine.catalog().databases.len(),
            "catalog loaded"
        );
        Ok(engine)
    }

    fn recover_counters(&self) -> Result<()> {
        let cat = self.catalog();
        let session = self.txn.session();
        for db in cat.databases.values() {
            for t in db.tables.values() {
                let mut txn = session.begin(IsolationLevel::ReadCommitted);
                txn.begin_statement();
                let auto = t.auto_increment_column();
                let pk_is_auto = auto.is_some()
                    && t.def.primary_key.len() == 1
                    && t.def.primary_key[0] == auto.unwrap_or(0);
                if t.hidden_pk() || pk_is_auto {
                    let mut last: Option<Vec<u8>> = None;
                    txn.scan(
                        t.def.id,
                        &KeyRange::all(),
                        true,
                        ReadMode::Current,
                        &mut |pk, _| {
                            last = Some(pk.to_vec());
                            ControlFlow::Break(())
                        },
                    )?;
                    let unsigned =
                        t.hidden_pk() || auto.is_some_and(|a| t.def.columns[a].ty.is_unsigned());
                    let max = last
                        .as_deref()
                        .and_then(|k| decode_key_int(k, unsigned))
                        .unwrap_or(0)
                        .max(0) as u64;
                    if t.hidden_pk() {
                        t.row_id.fetch_max(max, Ordering::Relaxed);
                    } else {
                        t.auto_increment.fetch_max(max, Ordering::Relaxed);
                    }
                } else if let Some(a) = auto {
                    let mut max = 0u64;
                    let mut row = Vec::new();
                    txn.scan(
                        t.def.id,
                        &KeyRange::all(),
                        false,
                        ReadMode::Current,
                        &mut |_, bytes| {
                            if decode_row(bytes, &mut row).is_ok() {
                                if let Some(v) = row.get(a).and_then(|v| v.to_i64()) {
                                    max = max.max(v.max(0) as u64);
                                }
                            }
                            ControlFlow::Continue(())
                        },
                    )?;
                    t.auto_increment.fetch_max(max, Ordering::Relaxed);
                }
                txn.rollback();
            }
        }
        Ok(())
    }

    /// The current catalog snapshot (one atomic load; no lock).
    pub fn catalog(&self) -> arc_swap::Guard<Arc<Catalog>> {
        self.catalog.load()
    }

    /// The registry of live sessions.
    pub fn processes(&self) -> &crate::procs::ProcessList {
        &self.processes
    }

    /// When the engine was opened.
    pub fn started(&self) -> std::time::Instant {
        self.started
    }

    /// The configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// The transaction manager.
    pub fn txn_manager(&self) -> &Arc<TxnManager> {
        &self.txn
    }

    /// Whether any account exists (false on a brand-new data directory).
    pub fn has_accounts(&self) -> bool {
        !self.catalog().users.is_empty()
    }

    /// Creates `root`@`%` with all privileges and the given password (first start).
    pub fn bootstrap_root(&self, password: &str) -> Result<()> {
        self.create_user("root", "%", password, false)?;
        self.grant_all(None, "root", "%", true)
    }

    /// The account's authentication data; `None` if no such user.
    pub fn auth_info(&self, user: &str, host: &str) -> Option<AuthInfo> {
        let cat = self.catalog();
        let u = cat.user(user, host)?;
        Some(AuthInfo {
            native_hash: if u.native_hash_hex.is_empty() {
                None
            } else {
                unhex(&u.native_hash_hex)
            },
        })
    }

    /// Analyses `table` (see `crate::stats`) in a transaction of its own,
    /// installs the result and persists it.
    pub(crate) fn analyze_table(&self, table: &Table) -> Result<()> {
        let session = self.txn.session();
        let mut txn = session.begin(IsolationLevel::ReadCommitted);
        let r = crate::stats::analyze(table, &mut txn);
        txn.rollback();
        let ks = match r {
            Ok(ks) => ks,
            Err(e) => {
                table.stats.analysis_failed();
                return Err(e);
            }
        };
        let mut batch = WriteBatch::default();
        batch.put(
            Keyspace::Meta,
            meta_key(META_STATS, &table.def.id.to_be_bytes()),
            json(&ks)?,
        );
        let r = self.storage.write(batch, false);
        table.stats.set(ks);
        r
    }

    /// Starts a background analysis of `table` (the caller won the right to
    /// run it from [`crate::stats::TableStats::note_changes`]).
    pub(crate) fn spawn_analysis(self: &Arc<Self>, table: Arc<Table>) {
        let engine = self.clone();
        let stats = table.stats.clone();
        let spawned = std::thread::Builder::new()
            .name("canyon-analyze".into())
            .spawn(move || {
                if let Err(e) = engine.analyze_table(&table) {
                    tracing::warn!(table = %table.def.name, error = %e, "background analysis failed");
                }
            });
        if spawned.is_err() {
            stats.analysis_failed();
        }
    }

    /// Opens a session for an authenticated user.
    pub fn session(self: &Arc<Self>, connection_id: u32, user: &str, host: &str) -> Session {
        Session::new(self.clone(), connection_id, user, host)
    }

    /// Applies a catalog change: `f` edits a copy and returns the batch of Meta
    /// records to persist; the batch is written synced, then the copy published.
    fn change<T>(
        &self,
        f: impl FnOnce(&mut Catalog, &mut u32, &mut WriteBatch) -> Result<T>,
    ) -> Result<T> {
        let mut next_id = self.ddl.lock();
        let mut copy = Catalog::clone(&self.catalog());
        let mut batch = WriteBatch::new();
        let before = *next_id;
        let out = f(&mut copy, &mut next_id, &mut batch)?;
        if *next_id != before {
            batch.put(
                Keyspace::Meta,
                META_NEXT_ID.to_vec(),
                next_id.to_be_bytes().to_vec(),
            );
        }
        if !batch.is_empty() {
            self.storage.write(batch, true)?;
        }
        copy.version += 1;
        self.catalog.store(Arc::new(copy));
        Ok(out)
    }

    // ---- databases ----------------------------------------------------------------

    /// CREATE DATABASE. Returns whether it was created (false: existed, IF NOT EXISTS).
    pub fn create_database(&self, name: &str, if_not_exists: bool) -> Result<bool> {
        validate_name(name)?;
        self.change(|cat, _, batch| {
            if cat.databases.contains_key(name) {
                return if if_not_exists {
                    Ok(false)
                } else {
                    Err(Error::DatabaseExists(name.to_string()))
                };
            }
            cat.databases.insert(
                name.to_string(),
                Arc::new(Database {
                    name: name.to_string(),
                    tables: Default::default(),
                }),
            );
            batch.put(
                Keyspace::Meta,
                meta_key(META_DB, name.as_bytes()),
                b"{}".to_vec(),
            );
            Ok(true)
        })
    }

    /// DROP DATABASE. Returns the number of tables dropped, or `None` when it did
    /// not exist (IF EXISTS).
    pub fn drop_database(&self, name: &str, if_exists: bool) -> Result<Option<usize>> {
        let dropped = self.change(|cat, _, batch| {
            let Some(db) = cat.databases.remove(name) else {
                return if if_exists {
                    Ok(None)
                } else {
                    Err(Error::DropDatabaseMissing(name.to_string()))
                };
            };
            batch.delete(Keyspace::Meta, meta_key(META_DB, name.as_bytes()));
            for t in db.tables.values() {
                batch.delete(
                    Keyspace::Meta,
                    meta_key(META_TABLE, &t.def.id.to_be_bytes()),
                );
            }
            Ok(Some(db.tables.values().cloned().collect::<Vec<_>>()))
        })?;
        match dropped {
            None => Ok(None),
            Some(tables) => {
                for t in &tables {
                    self.purge(&t.def)?;
                }
                Ok(Some(tables.len()))
            }
        }
    }

    // ---- tables --------------------------------------------------------------------

    /// CREATE TABLE. Returns false when it existed and IF NOT EXISTS was given.
    pub fn create_table(
        &self,
        db: &str,
        name: &str,
        t: crate::ddl::NewTable,
        if_not_exists: bool,
    ) -> Result<bool> {
        validate_name(name)?;
        self.change(|cat, next_id, batch| {
            let database = cat
                .databases
                .get_mut(db)
                .ok_or_else(|| Error::UnknownDatabase(db.to_string()))?;
            if database.tables.contains_key(name) {
                return if if_not_exists {
                    Ok(false)
                } else {
                    Err(Error::TableExists(name.to_string()))
                };
            }
            let start = t.auto_increment_start;
            let id = take_id(next_id);
            let index_ids: Vec<u32> = (0..t.indexes.len()).map(|_| take_id(next_id)).collect();
            let def = crate::ddl::finish(t, db, name, id, &index_ids);
            batch.put(
                Keyspace::Meta,
                meta_key(META_TABLE, &id.to_be_bytes()),
                json(&def)?,
            );
            let table = Table::new(def);
            if let Some(s) = start {
                table
                    .auto_increment
                    .store(s.saturating_sub(1), Ordering::Relaxed);
            }
            Arc::make_mut(database)
                .tables
                .insert(name.to_string(), Arc::new(table));
            Ok(true)
        })
    }

    /// DROP TABLE. Returns false when it did not exist and IF EXISTS was given.
    pub fn drop_table(&self, db: &str, name: &str, if_exists: bool) -> Result<bool> {
        let removed = self.change(|cat, _, batch| {
            let database = match cat.databases.get_mut(db) {
                Some(d) => d,
                None if if_exists => return Ok(None),
                None => return Err(Error::BadTable(format!("{db}.{name}"))),
            };
            match Arc::make_mut(database).tables.remove(name) {
                Some(t) => {
                    batch.delete(
                        Keyspace::Meta,
                        meta_key(META_TABLE, &t.def.id.to_be_bytes()),
                    );
                    Ok(Some(t))
                }
                None if if_exists => Ok(None),
                None => Err(Error::BadTable(format!("{db}.{name}"))),
            }
        })?;
        match removed {
            Some(t) => {
                self.purge(&t.def)?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// TRUNCATE TABLE: the table gets new ids (so concurrent readers of the old
    /// ids see the old data until they finish) and the old data is purged.
    pub fn truncate_table(&self, db: &str, name: &str) -> Result<()> {
        let old = self.change(|cat, next_id, batch| {
            let database = cat
                .databases
                .get_mut(db)
                .ok_or_else(|| Error::UnknownTable {
                    db: db.to_string(),
                    table: name.to_string(),
                })?;
            let t = database
                .tables
                .get(name)
                .cloned()
                .ok_or_else(|| Error::UnknownTable {
                    db: db.to_string(),
                    table: name.to_string(),
                })?;
            let mut def = t.def.clone();
            def.id = take_id(next_id);
            for ix in &mut def.indexes {
                ix.id = take_id(next_id);
            }
            batch.delete(
                Keyspace::Meta,
                meta_key(META_TABLE, &t.def.id.to_be_bytes()),
            );
            batch.put(
                Keyspace::Meta,
                meta_key(META_TABLE, &def.id.to_be_bytes()),
                json(&def)?,
            );
            Arc::make_mut(database)
                .tables
                .insert(name.to_string(), Arc::new(Table::new(def)));
            Ok(t)
        })?;
        self.purge(&old.def)
    }

    /// CREATE INDEX on an existing (possibly loaded) table: validates uniqueness,
    /// publishes the index, then back-fills entries for the existing rows.
    pub fn create_index(
        &self,
        db: &str,
        table: &str,
        name: &str,
        columns: Vec<usize>,
        unique: bool,
    ) -> Result<()> {
        let cat = self.catalog();
        let t = cat
            .table(db, table)
            .cloned()
            .ok_or_else(|| Error::UnknownTable {
                db: db.to_string(),
                table: table.to_string(),
            })?;
        drop(cat);
        if t.def
            .indexes
            .iter()
            .any(|i| i.name.eq_ignore_ascii_case(name))
            || name.eq_ignore_ascii_case("PRIMARY")
        {
            return Err(Error::DuplicateKeyName(name.to_string()));
        }
        if unique {
            let mut seen = HashSet::new();
            let mut dup = None;
            self.for_each_current_row(&t, &mut |row| {
                if columns.iter().any(|&c| row[c].is_null()) {
                    return true;
                }
                let key = encode_row(&columns.iter().map(|&c| row[c].clone()).collect::<Vec<_>>());
                if !seen.insert(key) {
                    dup = Some(
                        columns
                            .iter()
                            .map(|&c| row[c].to_display())
                            .collect::<Vec<_>>()
                            .join("-"),
                    );
                    return false;
                }
                true
            })?;
            if let Some(value) = dup {
                return Err(Error::DuplicateEntry {
                    value,
                    key: format!("{table}.{name}"),
                });
            }
        }
        let new_table = self.change(|cat, next_id, batch| {
            let database = cat
                .databases
                .get_mut(db)
                .ok_or_else(|| Error::UnknownDatabase(db.to_string()))?;
            let cur = database
                .tables
                .get(table)
                .cloned()
                .ok_or_else(|| Error::UnknownTable {
                    db: db.to_string(),
                    table: table.to_string(),
                })?;
            let mut def = cur.def.clone();
            def.indexes.push(crate::catalog::IndexDef {
                id: take_id(next_id),
                name: name.to_string(),
                columns: columns.clone(),
                unique,
            });
            batch.put(
                Keyspace::Meta,
                meta_key(META_TABLE, &def.id.to_be_bytes()),
                json(&def)?,
            );
            let nt = Arc::new(Table::sharing_runtime(def, &cur));
            Arc::make_mut(database)
                .tables
                .insert(table.to_string(), nt.clone());
            Ok(nt)
        })?;
        self.backfill_index(&new_table, new_table.def.indexes.len() - 1)
    }

    /// DROP INDEX.
    pub fn drop_index(&self, db: &str, table: &str, name: &str) -> Result<()> {
        let dropped = self.change(|cat, _, batch| {
            let database = cat
                .databases
                .get_mut(db)
                .ok_or_else(|| Error::UnknownDatabase(db.to_string()))?;
            let cur = database
                .tables
                .get(table)
                .cloned()
                .ok_or_else(|| Error::UnknownTable {
                    db: db.to_string(),
                    table: table.to_string(),
                })?;
            let mut def = cur.def.clone();
            let pos = def
                .indexes
                .iter()
                .position(|i| i.name.eq_ignore_ascii_case(name))
                .ok_or_else(|| Error::CantDropKey(name.to_string()))?;
            let ix = def.indexes.remove(pos);
            batch.put(
                Keyspace::Meta,
                meta_key(META_TABLE, &def.id.to_be_bytes()),
                json(&def)?,
            );
            Arc::make_mut(database).tables.insert(
                table.to_string(),
                Arc::new(Table::sharing_runtime(def, &cur)),
            );
            Ok(ix.id)
        })?;
        self.txn.purge_index(dropped)
    }

    fn for_each_current_row(
        &self,
        t: &Table,
        f: &mut dyn FnMut(&[crate::value::Value]) -> bool,
    ) -> Result<()> {
        let session = self.txn.session();
        let mut txn = session.begin(IsolationLevel::ReadCommitted);
        txn.begin_statement();
        let mut row = Vec::new();
        let mut err = None;
        txn.scan(
            t.def.id,
            &KeyRange::all(),
            false,
            ReadMode::Current,
            &mut |_, bytes| {
                if let Err(e) = crate::exec::decode_table_row(t, bytes, &mut row) {
                    err = Some(e);
                    return ControlFlow::Break(());
                }
                if f(&row) {
                    ControlFlow::Continue(())
                } else {
                    ControlFlow::Break(())
                }
            },
        )?;
        txn.rollback();
        err.map_or(Ok(()), Err)
    }

    /// Writes index entries for every existing row, re-writing each row through
    /// the transaction layer in chunks (so the MVCC layer owns the index format).
    fn backfill_index(&self, t: &Table, _index: usize) -> Result<()> {
        let session = self.txn.session();
        let mut after: Option<Vec<u8>> = None;
        loop {
            let mut txn = session.begin(IsolationLevel::ReadCommitted);
            txn.begin_statement();
            let range = match &after {
                None => KeyRange::all(),
                Some(k) => KeyRange {
                    start: std::ops::Bound::Excluded(k.clone()),
                    end: std::ops::Bound::Unbounded,
                },
            };
            let mut chunk: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
            txn.scan(
                t.def.id,
                &range,
                false,
                ReadMode::Current,
                &mut |pk, bytes| {
                    chunk.push((pk.to_vec(), bytes.to_vec()));
                    if chunk.len() >= 1000 {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    }
                },
            )?;
            if chunk.is_empty() {
                txn.rollback();
                return Ok(());
            }
            let mut row = Vec::new();
            for (pk, bytes) in &chunk {
                let mut lock = vec![b'r'];
                lock.extend_from_slice(&t.def.id.to_be_bytes());
                lock.extend_from_slice(pk);
                txn.lock(&lock)?;
                let Some(cur) = txn.get(t.def.id, pk, ReadMode::Current)? else {
                    continue;
                };
                crate::exec::decode_table_row(t, &cur, &mut row)?;
                let keys = index_keys(t, &row);
                let mut old = keys.clone();
                old.pop();
                txn.put(t.def.id, pk.clone(), cur, old, keys);
                let _ = bytes;
            }
            after = chunk.last().map(|(k, _)| k.clone());
            txn.commit()?;
        }
    }

    /// Deletes every stored key of a dropped table (through the MVCC layer,
    /// which owns the key layout).
    fn purge(&self, def: &TableDef) -> Result<()> {
        let indexes: Vec<u32> = def.indexes.iter().map(|i| i.id).collect();
        self.txn.purge_table(def.id, &indexes)
    }

    // ---- accounts ------------------------------------------------------------------

    /// CREATE USER. Returns false when it existed and IF NOT EXISTS was given.
    pub fn create_user(
        &self,
        user: &str,
        host: &str,
        password: &str,
        if_not_exists: bool,
    ) -> Result<bool> {
        self.change(|cat, _, batch| {
            let key = (user.to_string(), host.to_string());
            if cat.users.contains_key(&key) {
                return if if_not_exists {
                    Ok(false)
                } else {
                    Err(Error::CannotUser {
                        operation: "CREATE USER".into(),
                        user: format!("'{user}'@'{host}'"),
                    })
                };
            }
            let def = UserDef {
                user: user.to_string(),
                host: host.to_string(),
                native_hash_hex: if password.is_empty() {
                    String::new()
                } else {
                    hex(&native_hash(password))
                },
                grants: Vec::new(),
            };
            batch.put(Keyspace::Meta, user_key(user, host), json(&def)?);
            cat.users.insert(key, Arc::new(def));
            Ok(true)
        })
    }

    /// DROP USER. Returns false when it did not exist and IF EXISTS was given.
    pub fn drop_user(&self, user: &str, host: &str, if_exists: bool) -> Result<bool> {
        self.change(|cat, _, batch| {
            if cat
                .users
                .remove(&(user.to_string(), host.to_string()))
                .is_none()
            {
                return if if_exists {
                    Ok(false)
                } else {
                    Err(Error::CannotUser {
                        operation: "DROP USER".into(),
                        user: format!("'{user}'@'{host}'"),
                    })
                };
            }
            batch.delete(Keyspace::Meta, user_key(user, host));
            Ok(true)
        })
    }

    /// `GRANT ALL [PRIVILEGES] ON db.* / *.* TO user`.
    pub fn grant_all(
        &self,
        db: Option<&str>,
        user: &str,
        host: &str,
        grant_option: bool,
    ) -> Result<()> {
        self.change(|cat, _, batch| {
            let key = (user.to_string(), host.to_string());
            let cur = cat
                .users
                .get(&key)
                .cloned()
                .ok_or_else(|| Error::NoSuchUser(format!("'{user}'@'{host}'")))?;
            let mut def = UserDef::clone(&cur);
            let g = Grant {
                db: db.map(str::to_string),
                all: true,
                grant_option,
            };
            if !def.grants.contains(&g) {
                def.grants.push(g);
            }
            batch.put(Keyspace::Meta, user_key(user, host), json(&def)?);
            cat.users.insert(key, Arc::new(def));
            Ok(())
        })
    }
}

fn take_id(next_id: &mut u32) -> u32 {
    let id = *next_id;
    *next_id += 1;
    id
}

fn validate_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > 64 || name.ends_with(' ') {
        return Err(Error::InvalidArgument(format!("Incorrect name '{name}'")));
    }
    Ok(())
}
