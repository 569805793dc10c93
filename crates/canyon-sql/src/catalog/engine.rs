//! The engine: storage, transactions and the catalog, with DDL and accounts.
//!
//! Catalog changes follow one protocol (see [`crate::catalog`]): take the DDL
//! mutex, copy the current snapshot, change the copy, write the changed records
//! to the Meta keyspace with a synced write, then publish the copy with one
//! atomic swap. Readers never wait for DDL.

use crate::catalog::auth::{self, AuthPlugin};
use crate::catalog::config::{AuthInfo, EngineConfig};
use crate::catalog::privileges::{self, Level, PrivSpec, Privs};
use crate::catalog::{Catalog, Database, Table, TableDef, UserDef};
use crate::session::Session;
use crate::types::encoding::decode_key_int;
use crate::types::value::Value;
use arc_swap::ArcSwap;
use canyon_common::{Error, Result};
use canyon_storage::{KeyRange, Keyspace, Storage, WriteBatch};
use canyon_txn::{IsolationLevel, ReadMode, TableId, TxnConfig, TxnManager};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

const META_DB: &[u8] = b"c/db/";
pub(crate) const META_TABLE: &[u8] = b"c/t/";
const META_USER: &[u8] = b"c/u/";
const META_NEXT_ID: &[u8] = b"c/next_id";
const META_STATS: &[u8] = b"c/s/";

/// The engine: catalog, transactions and storage; no network.
pub struct Engine {
    pub(crate) config: EngineConfig,
    pub(crate) storage: Arc<dyn Storage>,
    pub(crate) txn: Arc<TxnManager>,
    catalog: ArcSwap<Catalog>,
    /// The version of the published catalog, stored after each swap: the value
    /// sessions pin (see [`Engine::pin_catalog`]).
    published: AtomicU64,
    /// Serialises catalog changes and owns the id counter.
    ddl: Mutex<u32>,
    /// Serialises online schema changes (ALTER TABLE, CREATE / DROP INDEX) and
    /// the statements that remove a table under one (DROP, TRUNCATE): held for
    /// a whole protocol run, never by DML (see `crate::ddl::alter`).
    pub(crate) alter_lock: Mutex<()>,
    /// Each session's catalog pin: the oldest catalog version a statement of its
    /// open transaction ran on, or [`PIN_IDLE`] (see `crate::ddl::alter`).
    pins: Mutex<Vec<Arc<AtomicU64>>>,
    /// When the engine was opened (SHOW STATUS `Uptime`).
    started: std::time::Instant,
    /// Live sessions (SHOW PROCESSLIST, KILL): see [`crate::catalog::procs`].
    pub(crate) processes: crate::catalog::procs::ProcessList,
    /// SHOW STATUS totals: see [`crate::catalog::status`].
    pub(crate) status: crate::catalog::status::Status,
    /// SET GLOBAL values (see [`crate::catalog::vars`]): read with one atomic load by
    /// each new session and by `@@global.x`; writers serialise on
    /// `globals_write` and swap in a new map.
    globals: ArcSwap<HashMap<String, Value>>,
    globals_write: parking_lot::Mutex<()>,
    /// Statement memory: the server-wide budget and the per-statement limit
    /// that parsing reserves from (see [`crate::parse::limits`]).
    pub(crate) statement_memory: crate::parse::limits::MemoryBudget,
}

pub(crate) fn meta_key(prefix: &[u8], rest: &[u8]) -> Vec<u8> {
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

pub(crate) fn json<T: serde::Serialize>(v: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(v).map_err(|e| Error::Internal(e.to_string()))
}

/// Sets `def`'s plugin and the one verifier that plugin checks.
fn set_password(def: &mut UserDef, plugin: AuthPlugin, password: &str) {
    def.plugin = plugin.name().to_string();
    def.native_hash_hex.clear();
    def.sha2_verifier.clear();
    if password.is_empty() {
        return;
    }
    match plugin {
        AuthPlugin::NativePassword => def.native_hash_hex = auth::hex(&auth::native_hash(password)),
        AuthPlugin::CachingSha2Password => def.sha2_verifier = auth::sha2_verifier(password),
    }
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
                // A GC pass reads the garbage queue, whose cost is the garbage
                // (canyon-txn's gc.rs; the first pass after a restart sweeps).
                // Every second, the default: old versions live in memory
                // (canyon-txn's history.rs) and a pass frees them, so a longer
                // interval only makes them spill to RocksDB. (Before they did,
                // passes every 30 s measured better under TPC-C: 1 s passes
                // spread their History deletes through every memtable. Rows
                // tombstones are still batched, every 30 s.)
                gc_interval: Duration::from_secs(1),
                blocking_hook: config.blocking_hook,
                row_cache_bytes: config.row_cache_bytes,
                history_memory_bytes: config.history_memory_bytes,
                ..TxnConfig::default()
            },
        )?;
        let statement_memory = crate::parse::limits::MemoryBudget::new(
            config.statement_memory_budget,
            config.statement_memory_limit,
        );
        let mut catalog = Catalog::default();
        let mut next_id: u32 = 1;
        let mut stats: Vec<(TableId, crate::catalog::stats::KeyStats)> = Vec::new();
        let mut err = None;
        storage.scan(
            Keyspace::Meta,
            &KeyRange::prefix(b"c/"),
            false,
            &mut |k, v| {
                let r: Result<()> = (|| {
                    if k.starts_with(META_DB) {
                        let name = String::from_utf8_lossy(&k[META_DB.len()..]).into_owned();
                        let rec: crate::catalog::DatabaseRecord =
                            serde_json::from_slice(v).map_err(|e| Error::Corrupt(e.to_string()))?;
                        catalog.databases.insert(
                            name.clone(),
                            Arc::new(Database {
                                name,
                                default_collation: rec
                                    .default_collation
                                    .unwrap_or(crate::types::collation::Collation::DEFAULT),
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
                        let ks: crate::catalog::stats::KeyStats =
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
        catalog.index_foreign_keys();
        let engine = Arc::new(Engine {
            config,
            storage,
            txn,
            catalog: ArcSwap::from_pointee(catalog),
            published: AtomicU64::new(0),
            ddl: Mutex::new(next_id),
            alter_lock: Mutex::new(()),
            pins: Mutex::new(Vec::new()),
            started: std::time::Instant::now(),
            processes: Default::default(),
            status: Default::default(),
            globals: Default::default(),
            globals_write: Default::default(),
            statement_memory,
        });
        engine.recover_counters()?;
        engine.abandon_unfinished_indexes()?;
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
                            if crate::catalog::rows::decode_table_row(t, bytes, &mut row).is_ok() {
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
    pub fn processes(&self) -> &crate::catalog::procs::ProcessList {
        &self.processes
    }

    /// When the engine was opened.
    /// The SET GLOBAL values (a snapshot).
    pub(crate) fn globals(&self) -> Arc<HashMap<String, Value>> {
        self.globals.load_full()
    }

    /// The global value of `name`: SET GLOBAL's, else the default.
    pub(crate) fn global_var(&self, name: &str) -> Option<Value> {
        match self.globals.load().get(name) {
            Some(v) => Some(v.clone()),
            None => crate::catalog::vars::default_value(name, &self.config).map(|(v, _)| v),
        }
    }

    /// Stores (or with `None`, forgets) a SET GLOBAL value.
    pub(crate) fn set_global(&self, name: &str, value: Option<Value>) {
        let _w = self.globals_write.lock();
        let mut next = HashMap::clone(&self.globals.load());
        match value {
            Some(v) => next.insert(name.to_string(), v),
            None => next.remove(name),
        };
        self.globals.store(Arc::new(next));
    }

    /// Statement memory reserved now by running statements (bytes).
    pub fn statement_memory_used(&self) -> usize {
        self.statement_memory.used()
    }

    /// The SHOW STATUS totals.
    pub fn status(&self) -> &crate::catalog::status::Status {
        &self.status
    }

    /// When the engine opened (Uptime).
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
        self.create_user("root", "%", AuthPlugin::NativePassword, password, false)?;
        let all = PrivSpec::All.at(&Level::Global);
        self.grant("root", "%", &Level::Global, all, true)
    }

    /// The account's authentication data; `None` if no such user.
    pub fn auth_info(&self, user: &str, host: &str) -> Option<AuthInfo> {
        let cat = self.catalog();
        let u = cat.user(user, host)?;
        let plugin = AuthPlugin::from_name(&u.plugin).unwrap_or(AuthPlugin::NativePassword);
        let native_hash =
            auth::unhex(&u.native_hash_hex).and_then(|h| <[u8; 20]>::try_from(h).ok());
        Some(AuthInfo {
            plugin,
            empty_password: match plugin {
                AuthPlugin::NativePassword => native_hash.is_none(),
                AuthPlugin::CachingSha2Password => u.sha2_verifier.is_empty(),
            },
            native_hash,
            sha2_verifier: u.sha2_verifier.clone(),
        })
    }

    /// Analyses `table` (see `crate::catalog::stats`) in a transaction of its own,
    /// installs the result and persists it.
    pub(crate) fn analyze_table(
        &self,
        table: &Table,
        method: crate::catalog::stats::Method,
    ) -> Result<()> {
        let session = self.txn.session();
        let mut txn = session.begin(IsolationLevel::ReadCommitted);
        table.stats.analysis_started();
        let r = crate::catalog::stats::analyze(table, &mut txn, method);
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

    /// Starts a background analysis of `table` after `delay` (the caller won
    /// the right to run it from [`crate::catalog::stats::TableStats::note_changes`]).
    /// While it waits the thread holds only a `Weak` on the engine, so that a
    /// closing engine (and its RocksDB lock) is not kept alive by it.
    pub(crate) fn spawn_analysis(self: &Arc<Self>, table: Arc<Table>, delay: Duration) {
        let weak = Arc::downgrade(self);
        let stats = table.stats.clone();
        let spawned = std::thread::Builder::new()
            .name("canyon-analyze".into())
            .spawn(move || {
                if !delay.is_zero() {
                    std::thread::sleep(delay);
                }
                let Some(engine) = weak.upgrade() else {
                    table.stats.unschedule();
                    return;
                };
                if !table.stats.begin_analysis() {
                    // An ANALYZE TABLE is scanning: it covers these changes.
                    table.stats.unschedule();
                    return;
                }
                let started = std::time::Instant::now();
                match engine.analyze_table(&table, table.stats.auto_method()) {
                    Ok(()) => tracing::debug!(
                        table = %table.def.name,
                        rows = table.stats.analysis().map_or(0, |ks| ks.rows),
                        sampled = table.stats.analysis().is_some_and(|ks| ks.sampled > 0),
                        ms = started.elapsed().as_millis() as u64,
                        "background analysis"
                    ),
                    Err(e) => {
                        tracing::warn!(table = %table.def.name, error = %e, "background analysis failed")
                    }
                }
                table.stats.unschedule();
            });
        if spawned.is_err() {
            stats.unschedule();
        }
    }

    /// Opens a session for an authenticated user.
    pub fn session(self: &Arc<Self>, connection_id: u32, user: &str, host: &str) -> Session {
        Session::new(self.clone(), connection_id, user, host)
    }

    /// Applies a catalog change: `f` edits a copy and returns the batch of Meta
    /// records to persist; the batch is written synced, then the copy published.
    pub(crate) fn change<T>(
        &self,
        f: impl FnOnce(&mut Catalog, &mut u32, &mut WriteBatch) -> Result<T>,
    ) -> Result<T> {
        let mut next_id = self.ddl.lock();
        let mut copy = Catalog::clone(&self.catalog());
        let mut batch = WriteBatch::new();
        let before = *next_id;
        let out = f(&mut copy, &mut next_id, &mut batch)?;
        copy.index_foreign_keys();
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
        let version = copy.version;
        self.catalog.store(Arc::new(copy));
        self.published.store(version, Ordering::SeqCst);
        Ok(out)
    }

    // ---- catalog pins (see crate::ddl::alter) -----------------------------------------

    /// Registers a session's catalog pin (idle).
    pub(crate) fn register_pin(&self) -> Arc<AtomicU64> {
        let pin = Arc::new(AtomicU64::new(PIN_IDLE));
        self.pins.lock().push(pin.clone());
        pin
    }

    /// Removes a session's pin (the session is dropped).
    pub(crate) fn unregister_pin(&self, pin: &Arc<AtomicU64>) {
        self.pins.lock().retain(|p| !Arc::ptr_eq(p, pin));
    }

    /// Pins the published catalog version in `pin` unless it holds one already;
    /// call before loading the catalog for a statement. Rule P1 of
    /// `crate::ddl::alter`: store, then re-check that the version did not move, so a
    /// DDL that published a newer version either sees this pin or this session
    /// loads a catalog at least as new as that DDL's.
    pub(crate) fn pin_catalog(&self, pin: &AtomicU64) {
        if pin.load(Ordering::Relaxed) != PIN_IDLE {
            return;
        }
        loop {
            let v = self.published.load(Ordering::SeqCst);
            pin.store(v, Ordering::SeqCst);
            if self.published.load(Ordering::SeqCst) == v {
                return;
            }
        }
    }

    /// Waits until no session's pin is below `version`: every transaction that
    /// ran a statement on an older catalog has ended. False on timeout
    /// (`lock_wait_timeout`, as a metadata lock wait would time out in MySQL).
    pub(crate) fn wait_for_pins_below(&self, version: u64) -> bool {
        let deadline = std::time::Instant::now() + self.config.lock_wait_timeout;
        let mut done = false;
        let mut wait = || loop {
            let oldest = self
                .pins
                .lock()
                .iter()
                .map(|p| p.load(Ordering::SeqCst))
                .min()
                .unwrap_or(PIN_IDLE);
            if oldest >= version {
                done = true;
                return;
            }
            if std::time::Instant::now() >= deadline {
                return;
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        match self.config.blocking_hook {
            Some(hook) => hook(&mut wait),
            None => wait(),
        }
        done
    }

    // ---- databases ----------------------------------------------------------------

    /// CREATE DATABASE. Returns whether it was created (false: existed, IF NOT EXISTS).
    pub fn create_database(
        &self,
        name: &str,
        if_not_exists: bool,
        collation: crate::types::collation::Collation,
    ) -> Result<bool> {
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
                    default_collation: collation,
                    tables: Default::default(),
                }),
            );
            let rec = crate::catalog::DatabaseRecord {
                default_collation: Some(collation),
            };
            let bytes = serde_json::to_vec(&rec).map_err(|e| Error::Internal(e.to_string()))?;
            batch.put(Keyspace::Meta, meta_key(META_DB, name.as_bytes()), bytes);
            Ok(true)
        })
    }

    /// DROP DATABASE. Returns the number of tables dropped, or `None` when it did
    /// not exist (IF EXISTS). With `fk_checks`, a table of another database
    /// referencing one of its tables stops it (3730, as DROP TABLE).
    pub fn drop_database(
        &self,
        name: &str,
        if_exists: bool,
        fk_checks: bool,
    ) -> Result<Option<usize>> {
        let _alter = self.alter_lock.lock();
        let dropped = self.change(|cat, _, batch| {
            if let Some(db) = cat.databases.get(name).filter(|_| fk_checks) {
                let inside: Vec<(String, String)> = db
                    .tables
                    .keys()
                    .map(|t| (name.to_string(), t.clone()))
                    .collect();
                for t in db.tables.keys() {
                    crate::exec::foreign::check_drop(cat, name, t, &inside)?;
                }
            }
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
    /// Its foreign keys are checked against the catalog (`crate::exec::foreign`;
    /// the parent may be missing when `fk_checks` is off).
    pub fn create_table(
        &self,
        db: &str,
        name: &str,
        mut t: crate::ddl::NewTable,
        if_not_exists: bool,
        fk_checks: bool,
    ) -> Result<bool> {
        validate_name(name)?;
        self.change(|cat, next_id, batch| {
            let database = cat
                .databases
                .get(db)
                .ok_or_else(|| Error::UnknownDatabase(db.to_string()))?;
            if database.tables.contains_key(name) {
                return if if_not_exists {
                    Ok(false)
                } else {
                    Err(Error::TableExists(name.to_string()))
                };
            }
            let start = t.auto_increment_start;
            let new_fks = std::mem::take(&mut t.foreign_keys);
            let id = take_id(next_id);
            let index_ids: Vec<u32> = (0..t.indexes.len()).map(|_| take_id(next_id)).collect();
            let mut def = crate::ddl::finish(t, db, name, id, &index_ids);
            def.foreign_keys = crate::exec::foreign::resolve_new(cat, &def, new_fks, fk_checks)?;
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
            let database = cat
                .databases
                .get_mut(db)
                .expect("the database was found above, under the DDL mutex");
            Arc::make_mut(database)
                .tables
                .insert(name.to_string(), Arc::new(table));
            Ok(true)
        })
    }

    /// DROP TABLE. Returns false when it did not exist and IF EXISTS was given.
    /// With `fk_checks`, a table another table references cannot be dropped
    /// unless that table is among `dropped` (the statement's other tables).
    pub fn drop_table(
        &self,
        db: &str,
        name: &str,
        if_exists: bool,
        fk_checks: bool,
        dropped: &[(String, String)],
    ) -> Result<bool> {
        let _alter = self.alter_lock.lock();
        let removed = self.change(|cat, _, batch| {
            if fk_checks {
                crate::exec::foreign::check_drop(cat, db, name, dropped)?;
            }
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
    /// With `fk_checks`, a table another table references cannot be
    /// truncated (1701), as in InnoDB.
    pub fn truncate_table(&self, db: &str, name: &str, fk_checks: bool) -> Result<()> {
        let _alter = self.alter_lock.lock();
        let old = self.change(|cat, next_id, batch| {
            if fk_checks {
                crate::exec::foreign::check_truncate(cat, db, name)?;
            }
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

    /// CREATE INDEX: an online ADD INDEX (see `crate::ddl::alter`).
    pub fn create_index(
        &self,
        db: &str,
        table: &str,
        name: &str,
        columns: Vec<String>,
        unique: bool,
    ) -> Result<()> {
        self.alter_table(
            db,
            table,
            vec![crate::ddl::alter::AlterOp::AddIndex {
                name: Some(name.to_string()),
                columns,
                unique,
            }],
        )
    }

    /// DROP INDEX (see `crate::ddl::alter`).
    pub fn drop_index(&self, db: &str, table: &str, name: &str) -> Result<()> {
        self.alter_table(
            db,
            table,
            vec![crate::ddl::alter::AlterOp::DropIndex {
                name: name.to_string(),
            }],
        )
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
        plugin: AuthPlugin,
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
            let mut def = UserDef {
                user: user.to_string(),
                host: host.to_string(),
                native_hash_hex: String::new(),
                plugin: String::new(),
                sha2_verifier: String::new(),
                grants: Vec::new(),
            };
            set_password(&mut def, plugin, password);
            batch.put(Keyspace::Meta, user_key(user, host), json(&def)?);
            cat.users.insert(key, Arc::new(def));
            Ok(true)
        })
    }

    /// ALTER USER ... IDENTIFIED [WITH plugin] BY 'pw': a new password, and the
    /// plugin (`None` keeps the account's). Returns false when the account does
    /// not exist and IF EXISTS was given.
    pub fn alter_user_password(
        &self,
        user: &str,
        host: &str,
        plugin: Option<AuthPlugin>,
        password: &str,
        if_exists: bool,
    ) -> Result<bool> {
        self.change(|cat, _, batch| {
            let key = (user.to_string(), host.to_string());
            let Some(old) = cat.users.get(&key) else {
                return if if_exists {
                    Ok(false)
                } else {
                    Err(Error::CannotUser {
                        operation: "ALTER USER".into(),
                        user: format!("'{user}'@'{host}'"),
                    })
                };
            };
            let mut def = UserDef::clone(old);
            let plugin = plugin
                .or_else(|| AuthPlugin::from_name(&def.plugin))
                .unwrap_or(AuthPlugin::NativePassword);
            set_password(&mut def, plugin, password);
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

    /// GRANT: adds `privs` (and the GRANT OPTION) at `level` to the account;
    /// 1133 when it does not exist.
    pub fn grant(
        &self,
        user: &str,
        host: &str,
        level: &Level,
        privs: Privs,
        grant_option: bool,
    ) -> Result<()> {
        self.change_account(user, host, |def| {
            privileges::add_grant(def, level, privs, grant_option);
            Ok(())
        })
    }

    /// REVOKE: removes `privs` (and the GRANT OPTION when asked) at exactly
    /// `level`; 1141 when the account holds no grant there.
    pub fn revoke(
        &self,
        user: &str,
        host: &str,
        level: &Level,
        privs: Privs,
        grant_option: bool,
    ) -> Result<()> {
        self.change_account(user, host, |def| {
            privileges::remove_grant(def, level, privs, grant_option)
        })
    }

    /// Changes one existing account in a catalog change of its own.
    fn change_account(
        &self,
        user: &str,
        host: &str,
        edit: impl FnOnce(&mut UserDef) -> Result<()>,
    ) -> Result<()> {
        self.change(|cat, _, batch| {
            let key = (user.to_string(), host.to_string());
            let cur = cat
                .users
                .get(&key)
                .cloned()
                .ok_or_else(|| Error::NoSuchUser(format!("'{user}'@'{host}'")))?;
            let mut def = UserDef::clone(&cur);
            edit(&mut def)?;
            batch.put(Keyspace::Meta, user_key(user, host), json(&def)?);
            cat.users.insert(key, Arc::new(def));
            Ok(())
        })
    }
}

/// An idle catalog pin (no open transaction).
pub(crate) const PIN_IDLE: u64 = u64::MAX;

pub(crate) fn take_id(next_id: &mut u32) -> u32 {
    let id = *next_id;
    *next_id += 1;
    id
}

pub(crate) fn validate_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > 64 || name.ends_with(' ') {
        return Err(Error::InvalidArgument(format!("Incorrect name '{name}'")));
    }
    Ok(())
}
