//! `SHOW ENGINE name {STATUS | MUTEX}`: InnoDB's monitor report, written
//! from Canyon's own figures.
//!
//! MySQL answers `SHOW ENGINE INNODB STATUS` with one row (`Type`, `Name`,
//! `Status`) whose `Status` is a long text in sections, each headed by a
//! title between dashed lines. Operators read it for lock waits and the
//! last deadlock; monitoring tools grep lines out of it (mysqld_exporter's
//! `engine_innodb_status` collector takes "N queries inside InnoDB, N
//! queries in queue" and "N read views open inside InnoDB"). Canyon has no
//! buffer pool, redo log or undo segments, so the report keeps InnoDB's
//! frame and the titles and lines that have a Canyon equivalent, and puts
//! Canyon's own figures in sections of the same shape:
//!
//! | section | what it reads |
//! |---|---|
//! | header | the time; averages are per second since the server started |
//! | SEMAPHORES | row lock wait totals and deadlocks (`lock.rs`'s counters) |
//! | LATEST DETECTED DEADLOCK | `TxnManager::deadlocks`: the cycle, the keys each waited for and held, the victim |
//! | TRANSACTIONS | trx id counter, history list length (old versions in memory), per session its transaction, row locks held, and the lock it waits for: key, table, index, holder, how long |
//! | GROUP COMMIT | commits written, sync rounds, commits per round, sync time (`commit.rs`'s counters) |
//! | LOG | log sequence number = newest commit timestamp, written and durable ("flushed") timestamps |
//! | ROW CACHE | the row cache's hits, misses, size, capacity; old versions held and spilled |
//! | ROCKSDB | storage properties read through `Storage::property`: keys, memtables, block cache, compaction state, files per level, `rocksdb.stats` |
//! | ROW OPERATIONS | queries inside (statements running), read views open (snapshots), `Innodb_rows_*` and their rates |
//!
//! Every figure is read without a lock the commit or lock path takes: the
//! lock table is copied one shard at a time (as `performance_schema`
//! does), the counters are relaxed atomics. The report needs PROCESS, as
//! in MySQL (1227); an engine name Canyon does not know is 1286.
//!
//! `SHOW ENGINE INNODB MUTEX` is an empty set: Canyon's mutexes keep no
//! wait statistics. `SHOW ENGINE` of the other engines Canyon accepts by
//! name (MyISAM, Aria, MEMORY) and of PERFORMANCE_SCHEMA is empty too:
//! their tables are Canyon's, reported under InnoDB.

use super::state::*;
use crate::catalog::status::Counter;
use crate::parse::Parsed;
use crate::types::result::QueryResult;
use crate::types::value::Value;
use canyon_common::{Error, Result};
use canyon_storage::Keyspace;
use std::collections::HashMap;
use std::fmt::Write as _;

/// The columns of every `SHOW ENGINE` result.
const COLUMNS: [&str; 3] = ["Type", "Name", "Status"];

impl Session {
    /// `SHOW ENGINE name STATUS` (`mutex` false) or `SHOW ENGINE name MUTEX`.
    pub(super) fn show_engine(&mut self, name: &str, mutex: bool) -> Result<QueryResult> {
        // The name first: MySQL resolves it while parsing, before any
        // privilege is looked at.
        let innodb = match crate::catalog::storage_engine(name) {
            Some(e) => e == "InnoDB",
            None if name.eq_ignore_ascii_case("PERFORMANCE_SCHEMA") => false,
            None => {
                return Err(Error::Sql {
                    code: 1286,
                    sqlstate: *b"42000",
                    message: format!("Unknown storage engine '{name}'"),
                })
            }
        };
        let cat = self.state.engine.catalog();
        self.state.check_super(&cat, "PROCESS")?;
        if !innodb || mutex {
            return Ok(text_rows(&COLUMNS, Vec::new()));
        }
        let report = self.innodb_status(&cat);
        Ok(text_rows(
            &COLUMNS,
            vec![vec![
                Value::str("InnoDB"),
                Value::str(""),
                Value::str(&report),
            ]],
        ))
    }

    /// Adds a finished statement's rows to `Innodb_rows_*`: the rows an
    /// INSERT / REPLACE, UPDATE or DELETE affected, and the rows a SELECT
    /// returned (MySQL's `Innodb_rows_read` counts the rows the engine
    /// read, which Canyon's executor does not count).
    pub(super) fn count_row_operations(&mut self, parsed: &Parsed, r: &Result<QueryResult>) {
        let Ok(result) = r else { return };
        let c = match super::dispatch::command_counter(parsed) {
            Some(Counter::ComInsert | Counter::ComInsertSelect | Counter::ComReplace) => {
                Counter::InnodbRowsInserted
            }
            Some(Counter::ComUpdate) => Counter::InnodbRowsUpdated,
            Some(Counter::ComDelete) => Counter::InnodbRowsDeleted,
            Some(Counter::ComSelect) => Counter::InnodbRowsRead,
            _ => return,
        };
        let n = match result {
            QueryResult::Ok { affected_rows, .. } => *affected_rows,
            QueryResult::Rows { rows, .. } => rows.len() as u64,
        };
        if n > 0 {
            self.state.counts.add(c, n);
        }
    }

    /// The text of `SHOW ENGINE INNODB STATUS` (see the module doc).
    fn innodb_status(&self, cat: &crate::catalog::Catalog) -> String {
        let engine = &self.state.engine;
        let txn = engine.txn_manager();
        let status: HashMap<String, u64> = self.state.status_rows(true).into_iter().collect();
        let stat = |n: &str| status.get(n).copied().unwrap_or(0);
        let uptime = stat("Uptime").max(1);
        let names = KeyNames::new(cat);
        // Each transaction's session (performance_schema's rule: the id the
        // session published at its last statement's end).
        let procs = engine.processes().all();
        let sessions: HashMap<u64, &crate::catalog::procs::Process> = procs
            .iter()
            .filter_map(|p| p.txn().map(|t| (t, &**p)))
            .collect();
        let thread = |t: u64| {
            sessions
                .get(&t)
                .map_or(String::new(), |p| format!(" (MySQL thread id {})", p.id))
        };

        let mut out = String::new();
        let now = chrono::Local::now().format("%Y-%m-%d %H:%M:%S");
        let _ = writeln!(out);
        let _ = writeln!(out, "=====================================");
        let _ = writeln!(out, "{now} 0x0 INNODB MONITOR OUTPUT");
        let _ = writeln!(out, "=====================================");
        let _ = writeln!(
            out,
            "Per second averages calculated from the last {uptime} seconds"
        );

        // SEMAPHORES: Canyon's waits are row lock waits.
        let locks = txn.lock_stats();
        let (deadlocks, last_deadlock) = txn.deadlocks();
        section(&mut out, "SEMAPHORES");
        let _ = writeln!(
            out,
            "Row lock waits {}, current waits {}, wait time {} ms total, {} ms max",
            locks.waits, locks.current_waits, locks.time_ms, locks.time_max_ms
        );
        let _ = writeln!(out, "Deadlocks detected {deadlocks}");

        if let Some(d) = last_deadlock {
            deadlock_section(&mut out, &d, &names, &thread);
        }

        // TRANSACTIONS.
        section(&mut out, "TRANSACTIONS");
        let history = txn.history_stats();
        let (read_views, oldest_view) = txn.open_snapshots();
        let _ = writeln!(out, "Trx id counter {}", txn.next_txn_id());
        match oldest_view {
            Some(ts) => {
                let _ = writeln!(
                    out,
                    "Purge done for trx's n:o < {ts} undo n:o < 0 state: running"
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "Purge done for trx's n:o < {} undo n:o < 0 state: running but idle",
                    txn.visible_ts()
                );
            }
        }
        let _ = writeln!(out, "History list length {}", history.versions);
        let _ = writeln!(out, "LIST OF TRANSACTIONS FOR EACH SESSION:");
        let mut held_count: HashMap<u64, u64> = HashMap::new();
        for l in txn.lock_snapshot() {
            // Row locks only: not a transaction's own key (lock.rs).
            if l.key.first() == Some(&b't') {
                continue;
            }
            for (owner, _) in l.holders {
                *held_count.entry(owner).or_default() += 1;
            }
        }
        let mut waits = txn.lock_waits();
        waits.sort_by_key(|w| w.waiter);
        let waiting: HashMap<u64, &canyon_txn::WaitingLock> =
            waits.iter().map(|w| (w.waiter, w)).collect();
        let mut txns: Vec<u64> = sessions.keys().copied().collect();
        txns.extend(waits.iter().map(|w| w.waiter));
        txns.extend(held_count.keys().copied());
        txns.sort_unstable();
        txns.dedup();
        for t in txns {
            let wait = waiting.get(&t);
            let _ = writeln!(out, "---TRANSACTION {t}, ACTIVE");
            let _ = writeln!(
                out,
                "{}{} row lock(s)",
                if wait.is_some() { "LOCK WAIT " } else { "" },
                held_count.get(&t).copied().unwrap_or(0)
            );
            if let Some(p) = sessions.get(&t) {
                let i = p.info();
                let state = if wait.is_some() {
                    "waiting for a row lock"
                } else if i.running {
                    "executing"
                } else {
                    "sleeping"
                };
                let _ = writeln!(
                    out,
                    "MySQL thread id {}, OS thread handle 0, query id 0 {} {} {state}",
                    p.id, p.host, p.user
                );
                if i.running && !i.query.is_empty() {
                    let _ = writeln!(out, "{}", i.query);
                }
            }
            if let Some(w) = wait {
                let _ = writeln!(
                    out,
                    "------- TRX HAS BEEN WAITING {} SEC FOR THIS LOCK TO BE GRANTED:",
                    w.waited.as_secs()
                );
                let _ = writeln!(out, "{}", names.record_lock(&w.key, t, true));
                let _ = writeln!(
                    out,
                    "held by TRANSACTION {}{}, waiting {} ms",
                    w.owner,
                    thread(w.owner),
                    w.waited.as_millis()
                );
                let _ = writeln!(out, "------------------");
            }
        }

        // GROUP COMMIT.
        let g = txn.group_commit_stats();
        section(&mut out, "GROUP COMMIT");
        let durability = match txn.config().durability {
            canyon_txn::Durability::SyncEveryCommit => "sync every commit".to_string(),
            canyon_txn::Durability::SyncPeriodically { interval } => {
                format!("sync every {} ms", interval.as_millis())
            }
        };
        let _ = writeln!(out, "Durability: {durability}");
        let _ = writeln!(
            out,
            "Commits written {}, sync rounds {}, commits per round {:.2} avg, {} max",
            g.commits,
            g.syncs,
            ratio(g.synced_commits, g.syncs),
            g.max_batch
        );
        let _ = writeln!(
            out,
            "Sync time {} us total, {:.2} us avg, {} us max",
            g.sync_us,
            ratio(g.sync_us, g.syncs),
            g.sync_max_us
        );
        let _ = writeln!(
            out,
            "{:.2} commits/s, {:.2} syncs/s",
            ratio(g.commits, uptime),
            ratio(g.syncs, uptime)
        );

        // LOG: a commit timestamp is Canyon's log sequence number.
        section(&mut out, "LOG");
        let _ = writeln!(out, "Log sequence number          {}", txn.last_commit_ts());
        let _ = writeln!(
            out,
            "Log written up to            {}",
            txn.last_written_ts()
        );
        let _ = writeln!(out, "Log flushed up to            {}", txn.visible_ts());
        let _ = writeln!(
            out,
            "{} log i/o's done, {:.2} log i/o's/second",
            g.syncs,
            ratio(g.syncs, uptime)
        );

        // ROW CACHE.
        let rc = txn.row_cache_stats();
        section(&mut out, "ROW CACHE");
        let _ = writeln!(
            out,
            "Row cache hits {}, misses {}, hit rate {:.2}%",
            rc.hits,
            rc.misses,
            100.0 * ratio(rc.hits, rc.hits + rc.misses)
        );
        let _ = writeln!(
            out,
            "Rows cached {}, bytes {}, capacity {}",
            rc.entries, rc.bytes, rc.capacity
        );
        let _ = writeln!(
            out,
            "Old versions in memory {}, bytes {}, spilled to History {}",
            history.versions, history.bytes, history.spilled
        );

        // ROCKSDB.
        section(&mut out, "ROCKSDB");
        storage_section(&mut out, txn.storage().as_ref());

        // ROW OPERATIONS.
        section(&mut out, "ROW OPERATIONS");
        let running = stat("Threads_running");
        let _ = writeln!(out, "{running} queries inside InnoDB, 0 queries in queue");
        let _ = writeln!(out, "{read_views} read views open inside InnoDB");
        let [ins, upd, del, read] = [
            "Innodb_rows_inserted",
            "Innodb_rows_updated",
            "Innodb_rows_deleted",
            "Innodb_rows_read",
        ]
        .map(stat);
        let _ = writeln!(
            out,
            "Number of rows inserted {ins}, updated {upd}, deleted {del}, read {read}"
        );
        let _ = writeln!(
            out,
            "{:.2} inserts/s, {:.2} updates/s, {:.2} deletes/s, {:.2} reads/s",
            ratio(ins, uptime),
            ratio(upd, uptime),
            ratio(del, uptime),
            ratio(read, uptime)
        );
        let _ = writeln!(out, "----------------------------");
        let _ = writeln!(out, "END OF INNODB MONITOR OUTPUT");
        let _ = writeln!(out, "============================");
        out
    }
}

/// LATEST DETECTED DEADLOCK: each transaction of the cycle, numbered from
/// the victim, with the lock it held and the one it waited for.
fn deadlock_section(
    out: &mut String,
    d: &canyon_txn::DeadlockRecord,
    names: &KeyNames<'_>,
    thread: &dyn Fn(u64) -> String,
) {
    section(out, "LATEST DETECTED DEADLOCK");
    let at = chrono::DateTime::<chrono::Local>::from(d.at).format("%Y-%m-%d %H:%M:%S");
    let _ = writeln!(out, "{at} 0x0");
    let n = d.cycle.len();
    for (i, e) in d.cycle.iter().enumerate() {
        // What each holds is what the one before it in the cycle waits for.
        let held = &d.cycle[(i + n - 1) % n];
        let _ = writeln!(out, "*** ({}) TRANSACTION:", i + 1);
        let _ = writeln!(out, "TRANSACTION {}{}", e.txn, thread(e.txn));
        let _ = writeln!(out, "*** ({}) HOLDS THE LOCK(S):", i + 1);
        let _ = match &held.waits_for {
            Some(k) => writeln!(out, "{}", names.record_lock(k, e.txn, false)),
            None => writeln!(out, "(the lock transaction {} waited for)", held.txn),
        };
        let _ = writeln!(out, "*** ({}) WAITING FOR THIS LOCK TO BE GRANTED:", i + 1);
        let _ = match &e.waits_for {
            Some(k) => writeln!(out, "{}", names.record_lock(k, e.txn, true)),
            None => writeln!(out, "(its wait ended before the deadlock was recorded)"),
        };
        let _ = writeln!(out, "held by TRANSACTION {}", e.holder);
    }
    // The victim is the first of the cycle (lock.rs).
    debug_assert_eq!(d.cycle.first().map(|e| e.txn), Some(d.victim));
    let _ = writeln!(out, "*** WE ROLL BACK TRANSACTION (1)");
}

/// A section title as InnoDB writes it: the title between two dashed lines
/// of its length.
fn section(out: &mut String, title: &str) {
    let dashes = "-".repeat(title.len());
    let _ = writeln!(out, "{dashes}\n{title}\n{dashes}");
}

/// `a / b`, 0 when `b` is 0.
fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// The RocksDB properties of the report, per keyspace where RocksDB keeps
/// them per column family. A storage without properties (the in-memory
/// one) says so in one line.
fn storage_section(out: &mut String, storage: &dyn canyon_storage::Storage) {
    let _ = writeln!(out, "Storage: {}", storage.name());
    let prop = |k: Option<Keyspace>, name: &str| storage.property(k, name);
    let num = |k: Keyspace, name: &str| {
        prop(Some(k), name)
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    if prop(Some(Keyspace::Rows), "rocksdb.estimate-num-keys").is_none() {
        let _ = writeln!(out, "(this storage keeps no statistics)");
        return;
    }
    let sum = |name: &str| Keyspace::ALL.iter().map(|&k| num(k, name)).sum::<u64>();
    let keys: Vec<String> = Keyspace::ALL
        .iter()
        .map(|&k| format!("{} {}", k.name(), num(k, "rocksdb.estimate-num-keys")))
        .collect();
    let _ = writeln!(out, "Estimated keys: {}", keys.join(", "));
    // Table readers are what RocksDB keeps per open SST file outside the
    // block cache: memory a budget does not bound (docs/architecture/storage.md).
    let _ = writeln!(
        out,
        "Memtables {} bytes, block cache usage {} bytes (pinned {}), table readers {} bytes, \
         SST files {} bytes",
        sum("rocksdb.cur-size-all-mem-tables"),
        prop(Some(Keyspace::Rows), "rocksdb.block-cache-usage").unwrap_or_default(),
        prop(Some(Keyspace::Rows), "rocksdb.block-cache-pinned-usage").unwrap_or_default(),
        sum("rocksdb.estimate-table-readers-mem"),
        sum("rocksdb.total-sst-files-size"),
    );
    let pending: Vec<&str> = Keyspace::ALL
        .iter()
        .filter(|&&k| num(k, "rocksdb.compaction-pending") > 0)
        .map(|k| k.name())
        .collect();
    let _ = writeln!(
        out,
        "Compaction pending {} ({}), running compactions {}, running flushes {}, \
         estimated pending compaction bytes {}",
        pending.len(),
        if pending.is_empty() {
            "none".to_string()
        } else {
            pending.join(", ")
        },
        prop(None, "rocksdb.num-running-compactions").unwrap_or_default(),
        prop(None, "rocksdb.num-running-flushes").unwrap_or_default(),
        sum("rocksdb.estimate-pending-compaction-bytes"),
    );
    for k in Keyspace::ALL {
        let levels: Vec<String> = (0..7)
            .map(|l| num(k, &format!("rocksdb.num-files-at-level{l}")).to_string())
            .collect();
        let _ = writeln!(out, "Files per level ({}): {}", k.name(), levels.join(" "));
    }
    // The full statistics of the keyspace the workload reads most, with
    // RocksDB's DB-wide figures (write stalls, WAL syncs).
    if let Some(stats) = prop(Some(Keyspace::Rows), "rocksdb.stats") {
        let _ = writeln!(out, "rocksdb.stats (rows):");
        out.push_str(stats.trim_end());
        out.push('\n');
    }
}

/// Lock keys in the report's words, resolved against one catalog snapshot.
struct KeyNames<'c> {
    tables: HashMap<u32, (&'c str, &'c crate::catalog::Table)>,
    indexes: HashMap<u32, (&'c str, &'c crate::catalog::Table, &'c str)>,
}

impl<'c> KeyNames<'c> {
    fn new(cat: &'c crate::catalog::Catalog) -> Self {
        let (tables, indexes) = crate::catalog::perfschema::tables::key_maps(cat);
        KeyNames { tables, indexes }
    }

    /// InnoDB's record-lock line for `txn`'s exclusive lock on `key`
    /// (`waiting`: the one it waits for), and the key's value.
    fn record_lock(&self, key: &[u8], txn: u64, waiting: bool) -> String {
        let (db, table, index, data) =
            crate::catalog::perfschema::tables::describe_key(key, &self.tables, &self.indexes);
        let text = |v: &Value| match v {
            Value::Null => "?".to_string(),
            v => v.to_display(),
        };
        format!(
            "RECORD LOCKS index {} of table `{}`.`{}` trx id {txn} lock_mode X locks rec but \
             not gap{}\nRecord lock, key {}",
            text(&index),
            text(&db),
            text(&table),
            if waiting { " waiting" } else { "" },
            text(&data)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::show::{show_extra, ShowExtra};

    #[test]
    fn show_engine_forms() {
        let engine = |name: &str, mutex| {
            Some(ShowExtra::Engine {
                name: name.into(),
                mutex,
            })
        };
        assert_eq!(
            show_extra("SHOW ENGINE INNODB STATUS"),
            engine("INNODB", false)
        );
        assert_eq!(
            show_extra("show engine `InnoDB` status;"),
            engine("InnoDB", false)
        );
        assert_eq!(
            show_extra("SHOW ENGINE innodb MUTEX"),
            engine("innodb", true)
        );
        assert_eq!(show_extra("SHOW ENGINE foo STATUS"), engine("foo", false));
        assert_eq!(show_extra("SHOW ENGINE INNODB LOGS"), None);
        assert_eq!(show_extra("SHOW ENGINE INNODB"), None);
    }

    use super::super::state::Session;
    use crate::catalog::config::EngineConfig;
    use crate::catalog::engine::Engine;
    use crate::types::result::QueryResult;
    use canyon_common::Error;
    use std::sync::Arc;
    use std::time::Duration;

    /// A root session on an in-memory engine, in database `d` with
    /// `t (id INT PRIMARY KEY, v INT)`, and the engine.
    fn session() -> (Arc<Engine>, Session) {
        let cfg = EngineConfig {
            lock_wait_timeout: Duration::from_secs(10),
            ..EngineConfig::for_unit_tests()
        };
        let engine = Engine::open(Arc::new(canyon_storage::MemoryStorage::new()), cfg)
            .expect("engine opens");
        engine.bootstrap_root("").expect("root account");
        let mut s = engine.session(1, "root", "localhost");
        for sql in [
            "CREATE DATABASE d",
            "USE d",
            "CREATE TABLE t (id INT PRIMARY KEY, v INT)",
        ] {
            exec(&mut s, sql);
        }
        (engine, s)
    }

    fn run(s: &mut Session, sql: &str) -> canyon_common::Result<QueryResult> {
        s.execute(sql, false).pop().expect("one result")
    }

    fn exec(s: &mut Session, sql: &str) -> QueryResult {
        run(s, sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// The report's text, checking the row's shape.
    fn report(s: &mut Session) -> String {
        let QueryResult::Rows { columns, rows, .. } = exec(s, "SHOW ENGINE INNODB STATUS") else {
            panic!("SHOW ENGINE INNODB STATUS returned no rows")
        };
        let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["Type", "Name", "Status"]);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0][0].to_display(), "InnoDB");
        assert_eq!(rows[0][1].to_display(), "");
        rows[0][2].to_display()
    }

    #[test]
    fn the_report_counts_row_operations_and_commits() {
        let (_engine, mut s) = session();
        exec(&mut s, "INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)");
        exec(&mut s, "UPDATE t SET v = 10 WHERE id = 1");
        exec(&mut s, "DELETE FROM t WHERE id = 3");
        exec(&mut s, "SELECT * FROM t");
        let r = report(&mut s);
        for line in [
            "INNODB MONITOR OUTPUT",
            "\nTRANSACTIONS\n",
            "\nGROUP COMMIT\n",
            "\nROW CACHE\n",
            "\nROCKSDB\n",
            "Storage: memory",
            "queries inside InnoDB, 0 queries in queue",
            "read views open inside InnoDB",
            "Number of rows inserted 3, updated 1, deleted 1, read 2",
            "History list length ",
            "Log sequence number",
            "END OF INNODB MONITOR OUTPUT\n",
        ] {
            assert!(r.contains(line), "{line:?} missing from:\n{r}");
        }
        assert!(!r.contains("LATEST DETECTED DEADLOCK"), "{r}");
        let commits: u64 = r
            .split("Commits written ")
            .nth(1)
            .and_then(|t| t.split(',').next())
            .and_then(|n| n.parse().ok())
            .expect("a commit count");
        assert!(commits >= 3, "{r}");
        // The rows are SHOW STATUS counters too.
        let QueryResult::Rows { rows, .. } =
            exec(&mut s, "SHOW GLOBAL STATUS LIKE 'Innodb_rows_inserted'")
        else {
            panic!("SHOW STATUS returned no rows")
        };
        assert_eq!(rows[0][1].to_display(), "3");
    }

    #[test]
    fn a_lock_wait_and_a_deadlock_are_reported() {
        let (engine, mut a) = session();
        exec(&mut a, "INSERT INTO t VALUES (1, 1), (2, 2)");
        let mut b = engine.session(2, "root", "localhost");
        b.set_async_lock_waits(true);
        exec(&mut b, "USE d");
        exec(&mut a, "BEGIN");
        exec(&mut a, "UPDATE t SET v = 11 WHERE id = 1");
        exec(&mut b, "BEGIN");
        exec(&mut b, "UPDATE t SET v = 22 WHERE id = 2");
        assert!(matches!(
            run(&mut b, "UPDATE t SET v = 21 WHERE id = 1"),
            Err(Error::LockWaitPending)
        ));
        let mut c = engine.session(3, "root", "localhost");
        let r = report(&mut c);
        for line in [
            "LOCK WAIT 1 row lock(s)",
            "MySQL thread id 2,",
            "FOR THIS LOCK TO BE GRANTED:",
            "RECORD LOCKS index PRIMARY of table `d`.`t`",
            "lock_mode X locks rec but not gap waiting\nRecord lock, key 1",
            "(MySQL thread id 1), waiting",
        ] {
            assert!(r.contains(line), "{line:?} missing from:\n{r}");
        }
        // a closes the cycle: a waits for 2 (b's), b for 1 (a's).
        assert!(matches!(
            run(&mut a, "UPDATE t SET v = 12 WHERE id = 2"),
            Err(Error::Deadlock)
        ));
        let r = report(&mut c);
        let d = r
            .split("LATEST DETECTED DEADLOCK")
            .nth(1)
            .expect("a deadlock section");
        for line in [
            "*** (1) TRANSACTION:",
            "*** (1) WAITING FOR THIS LOCK TO BE GRANTED:",
            "lock_mode X locks rec but not gap waiting\nRecord lock, key 2",
            "*** (2) HOLDS THE LOCK(S):",
            "*** WE ROLL BACK TRANSACTION (1)",
        ] {
            assert!(d.contains(line), "{line:?} missing from:\n{r}");
        }
        assert!(r.contains("Deadlocks detected 1"), "{r}");
        // The victim's locks went with its rollback: b has row 1 now.
        b.end_lock_wait(None).expect("b gets the lock");
        exec(&mut b, "UPDATE t SET v = 21 WHERE id = 1");
        exec(&mut b, "COMMIT");
        let r = report(&mut c);
        assert!(!r.contains("LOCK WAIT"), "{r}");
    }

    #[test]
    fn other_engines_are_empty_unknown_ones_1286_and_process_is_needed() {
        let (_engine, mut s) = session();
        for sql in [
            "SHOW ENGINE INNODB MUTEX",
            "SHOW ENGINE MyISAM STATUS",
            "SHOW ENGINE PERFORMANCE_SCHEMA STATUS",
        ] {
            let QueryResult::Rows { rows, columns, .. } = exec(&mut s, sql) else {
                panic!("{sql}: no result set")
            };
            assert!(rows.is_empty(), "{sql}");
            assert_eq!(columns.len(), 3, "{sql}");
        }
        let e = run(&mut s, "SHOW ENGINE BLACKHOLE STATUS").unwrap_err();
        assert!(
            matches!(&e, Error::Sql { code: 1286, message, .. } if message == "Unknown storage engine 'BLACKHOLE'"),
            "{e:?}"
        );
        exec(&mut s, "CREATE USER u IDENTIFIED BY 'p'");
        let mut u = _engine.session(2, "u", "localhost");
        let e = run(&mut u, "SHOW ENGINE INNODB STATUS").unwrap_err();
        assert!(
            matches!(&e, Error::SpecificAccessDenied(p) if p == "PROCESS"),
            "{e:?}"
        );
        exec(&mut s, "GRANT PROCESS ON *.* TO u");
        let mut u = _engine.session(3, "u", "localhost");
        assert!(run(&mut u, "SHOW ENGINE INNODB STATUS").is_ok());
    }

    #[test]
    fn sections_are_framed_as_innodb_frames_them() {
        let mut out = String::new();
        super::section(&mut out, "LOG");
        assert_eq!(out, "---\nLOG\n---\n");
        assert_eq!(super::ratio(3, 0), 0.0);
        assert_eq!(super::ratio(3, 2), 1.5);
    }
}
