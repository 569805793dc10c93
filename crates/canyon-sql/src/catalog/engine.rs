//! The engine: the database instance — storage, transactions and the
//! published catalog. What changes the catalog lives with its layer, as
//! `impl Engine` blocks: accounts in `crate::catalog::accounts`, statistics
//! in `crate::catalog::analysis`, databases, tables and indexes in
//! `crate::ddl`, and sessions are opened by `crate::session`.
//!
//! Catalog changes follow one protocol (see [`crate::catalog`]): take the DDL
//! mutex, copy the current snapshot, change the copy, write the changed records
//! to the Meta keyspace with a synced write, then publish the copy with one
//! atomic swap. Readers never wait for DDL.

use crate::catalog::auth::{self, AuthPlugin};
use crate::catalog::config::{AuthInfo, EngineConfig};
use crate::catalog::privileges::{Level, PrivSpec};
use crate::catalog::{Catalog, Database, Table, TableDef, UserDef};
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

pub(crate) const META_DB: &[u8] = b"c/db/";
pub(crate) const META_TABLE: &[u8] = b"c/t/";
pub(crate) const META_USER: &[u8] = b"c/u/";
pub(crate) const META_NEXT_ID: &[u8] = b"c/next_id";
pub(crate) const META_STATS: &[u8] = b"c/s/";

thread_local! {
    /// See [`Engine::with_carried_records`].
    static CARRIED: std::cell::RefCell<Vec<(Vec<u8>, Vec<u8>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
    /// Whether a change carried [`CARRIED`].
    static CARRIED_WRITTEN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Set by [`unfinished_change`] inside a change's closure; read and
    /// cleared by that change.
    static UNFINISHED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Called inside an [`Engine::change`] closure: this change leaves its
/// statement unfinished, or undoes a failed one, so it carries no records
/// of [`Engine::with_carried_records`].
pub(crate) fn unfinished_change() {
    UNFINISHED.with(|u| u.set(true));
}

/// Called by a statement that makes several catalog changes, each complete
/// (DROP TABLE of several tables, RENAME TABLE of several pairs): none of
/// them carries the records of [`Engine::with_carried_records`], which are
/// then written after the statement, not with its first table.
pub(crate) fn several_changes() {
    CARRIED.with(|c| c.borrow_mut().clear());
}

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
    pins: Mutex<Vec<Arc<CatalogPin>>>,
    /// The newest [`TableDef::stable_since`] of any table since the engine
    /// opened: a transaction whose snapshot is at least this new can use
    /// every table (one load per statement, `crate::session`).
    newest_stable_since: AtomicU64,
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
    /// that parsing reserves from (see `crate::parse::limits`).
    pub(crate) statement_memory: crate::catalog::budget::MemoryBudget,
    /// Ids of TEMPORARY tables (see [`crate::catalog::temporary`]).
    pub(crate) temp_ids: crate::catalog::temporary::TempIds,
    /// GET_LOCK's named locks (see [`crate::catalog::user_locks`]).
    pub(crate) user_locks: crate::catalog::user_locks::UserLocks,
    /// The binary log (see [`crate::catalog::binlog`]).
    pub(crate) binlog: crate::catalog::binlog::Binlog,
    /// LOCK TABLES and FTWRL (see [`crate::catalog::table_locks`]).
    pub(crate) table_locks: Arc<crate::catalog::table_locks::TableLocks>,
    /// The slow and general query logs (see [`crate::catalog::querylog`]).
    pub(crate) query_log: crate::catalog::querylog::QueryLogs,
    /// Canyon as a replica (see [`crate::catalog::replica`]).
    pub replica: crate::catalog::replica::Replica,
    /// `read_only` / `super_read_only` (see [`crate::catalog::read_only`]).
    pub(crate) read_only: crate::catalog::read_only::ReadOnly,
}

pub(crate) fn meta_key(prefix: &[u8], rest: &[u8]) -> Vec<u8> {
    let mut k = prefix.to_vec();
    k.extend_from_slice(rest);
    k
}

pub(crate) fn json<T: serde::Serialize>(v: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(v).map_err(|e| Error::Internal(e.to_string()))
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
        // TEMPORARY tables die with their sessions; a crash left their keys.
        let swept = crate::catalog::temporary::purge_leftovers(storage.as_ref())?;
        if swept > 0 {
            tracing::info!(keys = swept, "temporary tables left by a crash removed");
        }
        let statement_memory = crate::catalog::budget::MemoryBudget::new(
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
                    } else if k.starts_with(crate::catalog::view::META_VIEW) {
                        crate::catalog::view::load_record(&mut catalog, v)?;
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
                    } else if crate::catalog::routines::load_record(k, v, &mut catalog)? {
                        // A stored routine or trigger.
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
        let binlog = crate::catalog::binlog::Binlog::open(
            config.binlog.clone(),
            &config.version,
            storage.as_ref(),
            &txn,
        )?;
        let replica = crate::catalog::replica::Replica::open(storage.as_ref())?;
        binlog.set_others(replica.applied().gtid_set());
        let query_log = crate::catalog::querylog::QueryLogs::new(
            &config.version,
            config.port,
            config.presentation == crate::catalog::config::Presentation::Mariadb,
        );
        let engine = Arc::new(Engine {
            config,
            storage,
            txn,
            catalog: ArcSwap::from_pointee(catalog),
            published: AtomicU64::new(0),
            ddl: Mutex::new(next_id),
            alter_lock: Mutex::new(()),
            pins: Mutex::new(Vec::new()),
            newest_stable_since: AtomicU64::new(0),
            started: std::time::Instant::now(),
            processes: Default::default(),
            status: Default::default(),
            globals: Default::default(),
            globals_write: Default::default(),
            statement_memory,
            temp_ids: Default::default(),
            user_locks: Default::default(),
            binlog,
            query_log,
            read_only: Default::default(),
            table_locks: Default::default(),
            replica,
        });
        engine.recover_counters()?;
        engine.abandon_unfinished_indexes()?;
        engine.finish_rewrites()?;
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

    /// The slow and general query logs (the server configures them and
    /// writes Connect / Quit lines).
    pub fn query_log(&self) -> &crate::catalog::querylog::QueryLogs {
        &self.query_log
    }

    /// Applies the configuration's query-log settings (at startup), with
    /// `long_query_time` as the global value new sessions start from.
    pub fn configure_query_log(
        &self,
        cfg: &crate::catalog::querylog::QueryLogConfig,
    ) -> Result<()> {
        let lqt = crate::catalog::vars::normalize_global(
            "long_query_time",
            Value::Double(cfg.long_query_time),
        )?;
        self.set_global("long_query_time", Some(lqt));
        self.query_log.configure(cfg)
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
            None if crate::catalog::binlog::is_live(name) => {
                crate::catalog::binlog::live_var(&self.binlog, &self.txn, name)
            }
            None if crate::catalog::querylog::is_var(name) => self.query_log.var(name),
            None if crate::catalog::read_only::is_var(name) => self.read_only.var(name),
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

    /// How read-only the server is now (`read_only`, `super_read_only`).
    pub fn read_only(&self) -> crate::catalog::read_only::Level {
        self.read_only.level()
    }

    /// Sets `read_only` / `super_read_only` (the server's configuration at
    /// startup; clients use SET GLOBAL).
    pub fn set_read_only(&self, level: crate::catalog::read_only::Level) {
        self.read_only.set_level(level);
    }

    /// The binary log.
    pub fn binlog(&self) -> &crate::catalog::binlog::Binlog {
        &self.binlog
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

    /// Runs `f` (one DDL statement, on this thread) with `records` carried
    /// in the batch of each catalog change it completes, and says whether
    /// one did. The replica's applier passes its position
    /// (`crate::catalog::replica`): written in the DDL's own batch, the
    /// position and the schema change are durable together, as MySQL 8's
    /// atomic DDL writes the replica's position in the data-dictionary
    /// transaction. A change that leaves its statement unfinished (the
    /// first phase of an online ADD INDEX or of a table rewrite) or undoes
    /// a failed one calls [`unfinished_change`] and carries nothing: after
    /// a crash there, recovery removes that phase and the statement runs
    /// again. A statement that completes in several changes calls
    /// [`several_changes`] and carries nothing either. Where nothing was
    /// carried, the caller writes the records itself.
    pub(crate) fn with_carried_records<T>(
        records: Vec<(Vec<u8>, Vec<u8>)>,
        f: impl FnOnce() -> T,
    ) -> (T, bool) {
        struct Reset;
        impl Drop for Reset {
            fn drop(&mut self) {
                CARRIED.with(|c| c.borrow_mut().clear());
                UNFINISHED.with(|u| u.set(false));
            }
        }
        let _reset = Reset;
        CARRIED.with(|c| *c.borrow_mut() = records);
        CARRIED_WRITTEN.with(|w| w.set(false));
        let out = f();
        (out, CARRIED_WRITTEN.with(|w| w.replace(false)))
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
        UNFINISHED.with(|u| u.set(false));
        let out = f(&mut copy, &mut next_id, &mut batch)?;
        copy.index_foreign_keys();
        if !batch.is_empty() && !UNFINISHED.with(|u| u.replace(false)) {
            CARRIED.with(|c| {
                let c = c.borrow();
                for (k, v) in c.iter() {
                    batch.put(Keyspace::Meta, k.clone(), v.clone());
                }
                if !c.is_empty() {
                    CARRIED_WRITTEN.with(|w| w.set(true));
                }
            });
        }
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
    pub(crate) fn register_pin(&self) -> Arc<CatalogPin> {
        let pin = Arc::new(CatalogPin::default());
        self.pins.lock().push(pin.clone());
        pin
    }

    /// Removes a session's pin (the session is dropped).
    pub(crate) fn unregister_pin(&self, pin: &Arc<CatalogPin>) {
        self.pins.lock().retain(|p| !Arc::ptr_eq(p, pin));
    }

    /// Marks a statement of `pin`'s session as running (P3 of
    /// `crate::ddl::alter`) and pins the published catalog version unless
    /// the session holds one already; call before loading the catalog for a
    /// statement. Rule P1: store, then re-check that the version did not
    /// move, so a DDL that published a newer version either sees this pin
    /// or this session loads a catalog at least as new as that DDL's.
    pub(crate) fn pin_catalog(&self, pin: &CatalogPin) {
        pin.busy.store(true, Ordering::SeqCst);
        if pin.version.load(Ordering::Relaxed) != PIN_IDLE {
            // P3: after the store above, this load sees every version a DDL
            // published before it found the session idle, and so does the
            // catalog load that follows (it is published before the version).
            self.published.load(Ordering::SeqCst);
            return;
        }
        loop {
            let v = self.published.load(Ordering::SeqCst);
            pin.version.store(v, Ordering::SeqCst);
            if self.published.load(Ordering::SeqCst) == v {
                return;
            }
        }
    }

    /// Records that a table was rebuilt (its rows copied) or got an index
    /// whose entries a snapshot older than `ts` may miss:
    /// [`TableDef::stable_since`].
    pub(crate) fn note_stable_since(&self, ts: u64) {
        self.newest_stable_since.fetch_max(ts, Ordering::SeqCst);
    }

    /// The newest [`TableDef::stable_since`] (see the field).
    pub(crate) fn newest_stable_since(&self) -> u64 {
        self.newest_stable_since.load(Ordering::Acquire)
    }

    /// Waits until no session holds `table` (any table when `None`) on a
    /// catalog older than `version`: every pin is idle or `>= version`, or
    /// (with a table) belongs to a session between statements whose open
    /// transaction has not written the table (P2 and P3 of
    /// `crate::ddl::alter`). False on timeout (`lock_wait_timeout`, as a
    /// metadata lock wait would time out in MySQL).
    pub(crate) fn wait_for_pins_below(&self, version: u64, table: Option<TableId>) -> bool {
        let deadline = std::time::Instant::now() + self.config.lock_wait_timeout;
        let mut done = false;
        let mut wait = || loop {
            let held = self.pins.lock().iter().any(|p| p.holds(version, table));
            if !held {
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
}

/// An idle catalog pin (no open transaction).
pub(crate) const PIN_IDLE: u64 = u64::MAX;

/// A session's catalog pin (see `crate::ddl::alter`, P1 to P3). Written by
/// its session at every statement's start and end, read only by DDL: it
/// has cache lines of its own, so that sessions on different cores never
/// write the same line (with two pins to a line, 8 sessions on 2 cores ran
/// 15% fewer point selects).
#[derive(Debug)]
#[repr(align(128))]
pub(crate) struct CatalogPin {
    /// The oldest catalog version a statement of the open transaction ran
    /// on, or [`PIN_IDLE`].
    version: AtomicU64,
    /// A statement is running: set before it loads the catalog, cleared
    /// after it ended ([`CatalogPin::statement_ended`]).
    busy: std::sync::atomic::AtomicBool,
    /// The tables the open transaction had written when its last statement
    /// ended.
    written: Mutex<Vec<TableId>>,
    /// `written`'s length, read without the lock: most statements write no
    /// new table, and then take no lock.
    written_len: std::sync::atomic::AtomicUsize,
}

impl Default for CatalogPin {
    fn default() -> Self {
        CatalogPin {
            version: AtomicU64::new(PIN_IDLE),
            busy: std::sync::atomic::AtomicBool::new(false),
            written: Mutex::new(Vec::new()),
            written_len: std::sync::atomic::AtomicUsize::new(0),
        }
    }
}

impl CatalogPin {
    /// The open transaction is over.
    pub(crate) fn unpin(&self) {
        self.version.store(PIN_IDLE, Ordering::SeqCst);
        if self.written_len.load(Ordering::Relaxed) != 0 {
            self.written.lock().clear();
            self.written_len.store(0, Ordering::Relaxed);
        }
    }

    /// The session's outermost statement ended; its transaction (if still
    /// open) has written `written`. P3: the list is stored before the
    /// statement is marked ended, so a DDL that finds the session idle
    /// reads a list at least this long.
    pub(crate) fn statement_ended(&self, written: &[TableId]) {
        // Only this session writes `written_len`: a relaxed read is exact.
        if self.version.load(Ordering::Relaxed) != PIN_IDLE
            && self.written_len.load(Ordering::Relaxed) != written.len()
        {
            let mut w = self.written.lock();
            w.clear();
            w.extend_from_slice(written);
            self.written_len.store(written.len(), Ordering::Relaxed);
        }
        self.busy.store(false, Ordering::SeqCst);
    }

    /// Whether this session holds `table` (any when `None`) on a catalog
    /// older than `version`.
    fn holds(&self, version: u64, table: Option<TableId>) -> bool {
        if self.version.load(Ordering::SeqCst) >= version {
            return false;
        }
        match table {
            None => true,
            Some(t) => self.busy.load(Ordering::SeqCst) || self.written.lock().contains(&t),
        }
    }
}

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
