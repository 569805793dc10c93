//! `performance_schema`: statement digests and statement events per thread,
//! read through MySQL 8's table and column names.
//!
//! # Why nothing on the statement path is shared
//! MySQL's Performance Schema keeps its digest table in one global array of
//! `PFS_statements_digest_stat` indexed by a lock-free hash (LF_HASH): every
//! statement end finds its row with atomics on shared memory and adds to
//! counters other cores add to as well. At a million statements a second on
//! many cores those shared cache lines are the cost (the issue behind this
//! module). Canyon keeps the counters where the statement already is:
//!
//! ```text
//!   statement end (session)
//!      │  one relaxed load of PerfSchema.state   (consumers + generation;
//!      │                                           written only by UPDATE
//!      │                                           setup_consumers / TRUNCATE,
//!      │                                           so the line stays shared-clean)
//!      ▼
//!   Process.perf: Mutex<ThreadStats>   the session's own mutex: uncontended
//!      digests  (db, digest) -> counters    unless a reader of these tables
//!      history  last 10 statements          holds it at that instant
//!      digest cache  text -> digest
//!                    ─ ─ ─ ─ ─ ─ ─ ─ ─ ─
//!   reader of events_statements_summary_by_digest:
//!      Σ over live threads' ThreadStats  (each mutex taken in turn)
//!      + PerfSchema.retired               (threads that disconnected: folded
//!                                          in once per connection, at its end)
//! ```
//! So a statement touches no cache line another connection writes: its
//! thread's mutex and map live in memory only it writes (a reader takes the
//! mutex, briefly, only while it copies the rows out). The merge costs the
//! reader O(threads × digests), which is the right side to pay: tools read
//! these tables every few seconds, applications run statements all the time.
//! This is the same split as the status counters (`crate::catalog::status`).
//!
//! # TRUNCATE without touching every thread
//! `TRUNCATE TABLE ..._summary_by_digest` bumps the generation in `state` and
//! empties `retired`. A thread whose rows carry an older generation is empty
//! to readers, and clears its rows itself at its next statement end, when it
//! sees the new generation in the load it does anyway. (A statement that
//! loaded the old generation just before the TRUNCATE is counted in the old
//! one and so forgotten: TRUNCATE is not a barrier in MySQL either.)
//!
//! # Bounds
//! A thread holds at most `digests_size` rows
//! (`performance_schema_digests_size`, default 10000); the merged table too.
//! A statement whose digest finds no room is counted in the overflow row,
//! whose SCHEMA_NAME, DIGEST and DIGEST_TEXT are NULL, as MySQL does.
//!
//! # Consumers
//! `setup_consumers` is eight bits of `state`. With `statements_digest` and
//! the statement-event consumers off, the statement end costs that one
//! relaxed load and returns.
//!
//! # Rows examined, index use, lock time, table I/O
//! A scan counts the rows it reads in a local variable and reports the
//! total once to its session's [`io::StatementIo`] (no atomic, no shared
//! line): ROWS_EXAMINED, NO_INDEX_USED (a full scan of a base table, access
//! type ALL, as MySQL's SERVER_QUERY_NO_INDEX_USED) and the (table, index)
//! counts of `table_io_waits_summary_by_table` / `..._by_index_usage`. The
//! statement end adds them into the thread's [`ThreadStats`] with the
//! digests; readers merge as above, and `TRUNCATE` of either I/O table
//! resets both through a generation of its own. The gate is the
//! `global_instrumentation` consumer (MySQL's also needs the
//! `wait/io/table/sql/handler` instrument; Canyon has no instruments table).
//! The timers of the I/O tables are 0 (timing each row would cost two clock
//! reads per row). Writes count on the INDEX_NAME NULL row (MySQL counts an
//! UPDATE's or DELETE's under the index that found the row). LOCK_TIME is
//! the time a request waited, stopped, for a row or table lock (a wait
//! inside a stored program's statement blocks in the transaction layer and
//! is not counted); a request that ran again after a wait counts the rows
//! of both runs.
//!
//! # metadata_locks
//! Canyon takes no metadata lock per statement or transaction: a statement
//! reads its tables from a catalog snapshot, and DDL waits for older
//! transactions instead (so there is no SHARED_READ / SHARED_WRITE row per
//! table in use, as MySQL shows). The table-level locks it does take are the
//! holders of `crate::catalog::table_locks`, and those are the rows: LOCK
//! TABLES READ / WRITE (and FLUSH TABLES t WITH READ LOCK) as TABLE locks
//! SHARED_READ_ONLY / SHARED_NO_READ_WRITE, FLUSH TABLES WITH READ LOCK as
//! the GLOBAL and COMMIT locks SHARED, all EXPLICIT, GRANTED or PENDING
//! (a LOCK TABLES waiting for others). A statement waiting behind such a
//! lock has no row (it holds no lock object while it waits).
//!
//! Not implemented: stage and wait events, transactions, memory and file
//! instruments (their consumers can be switched but record nothing, and
//! their tables are absent), the instruments table (`setup_instruments`),
//! the I/O tables' timers, SUM_NO_GOOD_INDEX_USED and the other
//! SELECT_* / SORT_* / TMP_* statement counters (0), and MySQL's digest
//! hash values (see [`digest`]).

pub mod digest;
pub mod io;
pub mod stats;
pub mod tables;

pub use io::{IoCounts, IoIndex, IoKey, IoWrite, StatementIo};
pub use stats::{StatementEnd, ThreadStats};
pub use tables::PerfTable;

use parking_lot::Mutex;
use stats::DigestStats;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The database's name.
pub const NAME: &str = "performance_schema";

/// Whether `db` names `performance_schema` (case-insensitive, as in MySQL).
pub fn is_perf_schema(db: &str) -> bool {
    db.eq_ignore_ascii_case(NAME)
}

/// The `sys` schema's name: its views people use on top of
/// performance_schema, served as tables of the same generator
/// ([`PerfTable::SYS`]).
pub const SYS: &str = "sys";

/// Whether `db` names the `sys` schema (case-sensitive, as a database name).
pub fn is_sys_schema(db: &str) -> bool {
    db == SYS
}

/// `performance_schema_digests_size`'s default.
pub const DIGESTS_SIZE: usize = 10_000;

/// The consumers of `setup_consumers`, in MySQL 8's order, with their
/// defaults.
pub const CONSUMERS: &[(&str, bool)] = &[
    ("events_stages_current", false),
    ("events_stages_history", false),
    ("events_stages_history_long", false),
    ("events_statements_cpu", false),
    ("events_statements_current", true),
    ("events_statements_history", true),
    ("events_statements_history_long", false),
    ("events_transactions_current", true),
    ("events_transactions_history", true),
    ("events_transactions_history_long", false),
    ("events_waits_current", false),
    ("events_waits_history", false),
    ("events_waits_history_long", false),
    ("global_instrumentation", true),
    ("thread_instrumentation", true),
    ("statements_digest", true),
];

fn bit(name: &str) -> u64 {
    let i = CONSUMERS
        .iter()
        .position(|c| c.0 == name)
        .expect("a consumer of the list");
    1 << i
}

/// Which statement consumers are on for one statement end.
#[derive(Debug, Clone, Copy)]
struct On {
    digest: bool,
    history: bool,
    /// Table I/O (`global_instrumentation`, see [`io`]).
    io: bool,
    generation: u32,
}

/// The instance's performance_schema state (see the module doc).
#[derive(Debug)]
pub struct PerfSchema {
    /// generation << 32 | consumer bits.
    state: AtomicU64,
    /// When the server started: TIMER_START's zero.
    started: Instant,
    /// The digest rows of threads that ended, merged.
    retired: Mutex<HashMap<(Option<Arc<str>>, Option<[u8; 32]>), DigestStats>>,
    /// `performance_schema_digests_size`.
    digests_size: usize,
    /// The table I/O tables' truncation generation (as the digests').
    io_generation: AtomicU32,
    /// The table I/O rows of threads that ended, merged.
    retired_io: Mutex<io::IoMap>,
}

impl Default for PerfSchema {
    fn default() -> Self {
        let bits = CONSUMERS
            .iter()
            .enumerate()
            .filter(|(_, c)| c.1)
            .fold(0, |b, (i, _)| b | 1 << i);
        PerfSchema {
            state: AtomicU64::new(bits),
            started: Instant::now(),
            retired: Mutex::new(HashMap::new()),
            digests_size: DIGESTS_SIZE,
            io_generation: AtomicU32::new(0),
            retired_io: Mutex::new(io::IoMap::new()),
        }
    }
}

fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

impl PerfSchema {
    /// Whether a consumer is enabled.
    pub fn consumer(&self, name: &str) -> bool {
        self.state.load(Ordering::Relaxed) & bit(name) != 0
    }

    /// Switches a consumer (UPDATE setup_consumers).
    pub fn set_consumer(&self, name: &str, on: bool) {
        let b = bit(name);
        if on {
            self.state.fetch_or(b, Ordering::Relaxed);
        } else {
            self.state.fetch_and(!b, Ordering::Relaxed);
        }
    }

    fn on(&self) -> On {
        let s = self.state.load(Ordering::Relaxed);
        let global = s & bit("global_instrumentation") != 0;
        let thread = s & bit("thread_instrumentation") != 0;
        On {
            digest: global && s & bit("statements_digest") != 0,
            history: global
                && thread
                && s & (bit("events_statements_history") | bit("events_statements_current")) != 0,
            io: global,
            generation: (s >> 32) as u32,
        }
    }

    fn generation(&self) -> u32 {
        (self.state.load(Ordering::Relaxed) >> 32) as u32
    }

    /// Picoseconds from the server's start to `t` (TIMER_START's clock).
    pub fn timer_ps(&self, t: Instant) -> u64 {
        u64::try_from(t.saturating_duration_since(self.started).as_nanos())
            .unwrap_or(u64::MAX / 1000)
            .saturating_mul(1000)
    }

    /// The end of one statement of thread `stats`, whose text is `text`.
    /// The caller checks [`PerfSchema::wants_statements`] first, so that a
    /// disabled schema costs it one load.
    pub fn statement_end(&self, stats: &Mutex<ThreadStats>, text: &str, e: &StatementEnd<'_>) {
        let on = self.on();
        if !on.digest && !on.history && !on.io {
            return;
        }
        let end = Instant::now();
        let start = end
            .checked_sub(std::time::Duration::from_nanos(e.wait_ns))
            .unwrap_or(self.started);
        let start_ps = self.timer_ps(start);
        let mut t = stats.lock();
        if t.generation != on.generation {
            t.clear_digests(on.generation);
        }
        if on.io {
            if let Some(s) = e.io {
                let g = self.io_generation.load(Ordering::Relaxed);
                if t.io_generation != g {
                    t.io.clear();
                    t.io_generation = g;
                }
                io::add_into(&mut t.io, s);
            }
        }
        if !on.digest && !on.history {
            return;
        }
        t.record(
            text,
            e,
            start_ps,
            now_us(),
            self.digests_size,
            on.digest,
            on.history,
        );
    }

    /// Whether any statement consumer is on, or table I/O is counted (one
    /// relaxed load).
    pub fn wants_statements(&self) -> bool {
        let on = self.on();
        on.digest || on.history || on.io
    }

    /// Folds an ending thread's digest and table I/O rows into `retired`.
    pub fn retire(&self, stats: &ThreadStats) {
        let generation = self.generation();
        {
            let mut r = self.retired.lock();
            for row in stats.rows(generation) {
                merge_into(&mut r, row, self.digests_size);
            }
        }
        let mut r = self.retired_io.lock();
        if stats.io_generation == self.io_generation.load(Ordering::Relaxed) {
            io::merge_maps(&mut r, &stats.io);
        }
    }

    /// TRUNCATE TABLE table_io_waits_summary_by_table (or by_index_usage):
    /// both tables start over, as in MySQL, where the second is the first's
    /// detail.
    pub fn truncate_io(&self) {
        let mut r = self.retired_io.lock();
        self.io_generation.fetch_add(1, Ordering::Relaxed);
        r.clear();
    }

    /// The merged table I/O rows of `threads` and the retired ones, by key.
    pub fn table_io<'a>(
        &self,
        threads: impl Iterator<Item = &'a Mutex<ThreadStats>>,
    ) -> Vec<(IoKey, IoCounts)> {
        let g = self.io_generation.load(Ordering::Relaxed);
        let mut all = self.retired_io.lock().clone();
        for t in threads {
            let t = t.lock();
            if t.io_generation == g {
                io::merge_maps(&mut all, &t.io);
            }
        }
        let mut rows: Vec<(IoKey, IoCounts)> = all.into_iter().collect();
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        rows
    }

    /// TRUNCATE TABLE events_statements_summary_by_digest.
    pub fn truncate(&self) {
        let mut r = self.retired.lock();
        self.state.fetch_add(1 << 32, Ordering::Relaxed);
        r.clear();
    }

    /// The merged digest rows: `threads`' and the retired ones, the overflow
    /// row last. Each thread's mutex is held while its rows are copied.
    /// Without `retired`, only the given threads' rows (what an account
    /// without global privileges may see: its own sessions').
    pub fn summary<'a>(
        &self,
        threads: impl Iterator<Item = &'a Mutex<ThreadStats>>,
        retired: bool,
    ) -> Vec<DigestStats> {
        let generation = self.generation();
        let mut all = if retired {
            self.retired.lock().clone()
        } else {
            HashMap::new()
        };
        for t in threads {
            let t = t.lock();
            for row in t.rows(generation) {
                merge_into(&mut all, row, self.digests_size);
            }
        }
        let mut rows: Vec<DigestStats> = all.into_values().collect();
        rows.sort_by(|a, b| {
            (a.digest.is_none(), a.first_seen_us, &a.schema).cmp(&(
                b.digest.is_none(),
                b.first_seen_us,
                &b.schema,
            ))
        });
        rows
    }
}

/// Adds `row` to the merged map, into the overflow row when the map is full.
fn merge_into(
    map: &mut HashMap<(Option<Arc<str>>, Option<[u8; 32]>), DigestStats>,
    row: &DigestStats,
    size: usize,
) {
    let key = row.key();
    if let Some(r) = map.get_mut(&key) {
        r.merge(row);
        return;
    }
    // The overflow row does not count against the size.
    let rows = map.len() - usize::from(map.contains_key(&(None, None)));
    let key = if key.1.is_some() && rows >= size {
        (None, None)
    } else {
        key
    };
    match map.get_mut(&key) {
        Some(r) => r.merge(row),
        None => {
            let mut r = row.clone();
            if key.1.is_none() {
                r.digest = None;
                r.schema = None;
            }
            map.insert(key, r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(schema: Option<&str>) -> StatementEnd<'_> {
        StatementEnd {
            schema,
            wait_ns: 2000,
            rows_sent: 2,
            ..Default::default()
        }
    }

    #[test]
    fn threads_merge_and_truncate_forgets() {
        let p = PerfSchema::default();
        let a = Mutex::new(ThreadStats::default());
        let b = Mutex::new(ThreadStats::default());
        p.statement_end(&a, "SELECT 1", &end(Some("d")));
        p.statement_end(&b, "SELECT 2", &end(Some("d")));
        p.statement_end(&b, "SELECT 3", &end(Some("e")));
        let rows = p.summary([&a, &b].into_iter(), true);
        assert_eq!(rows.len(), 2, "one row per (schema, digest)");
        assert_eq!(rows.iter().map(|r| r.count).sum::<u64>(), 3);
        assert_eq!(
            rows.iter()
                .find(|r| r.schema.as_deref() == Some("d"))
                .map(|r| r.rows_sent),
            Some(4)
        );
        // A thread that ends leaves its rows behind.
        p.retire(&b.lock());
        assert_eq!(
            p.summary([&a].into_iter(), true)
                .iter()
                .map(|r| r.count)
                .sum::<u64>(),
            3
        );
        p.truncate();
        assert!(p.summary([&a].into_iter(), true).is_empty());
        p.statement_end(&a, "SELECT 4", &end(Some("d")));
        let rows = p.summary([&a].into_iter(), true);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].count, 1, "the thread cleared its old rows");
    }

    #[test]
    fn consumers_switch_recording() {
        let p = PerfSchema::default();
        assert!(p.consumer("statements_digest") && !p.consumer("events_waits_current"));
        let a = Mutex::new(ThreadStats::default());
        p.set_consumer("statements_digest", false);
        p.set_consumer("events_statements_history", false);
        p.set_consumer("events_statements_current", false);
        assert!(p.wants_statements(), "table I/O still counts");
        p.statement_end(&a, "SELECT 1", &end(None));
        assert!(p.summary([&a].into_iter(), true).is_empty());
        assert!(a.lock().last_event().is_none());
        p.set_consumer("global_instrumentation", false);
        assert!(!p.wants_statements());
        p.set_consumer("global_instrumentation", true);
        p.set_consumer("statements_digest", true);
        p.statement_end(&a, "SELECT 1", &end(None));
        assert_eq!(p.summary([&a].into_iter(), true).len(), 1);
    }

    #[test]
    fn table_io_merges_over_threads_and_truncate_forgets() {
        use crate::catalog::TableDef;
        let p = PerfSchema::default();
        let def = TableDef {
            id: 1,
            db: "d".into(),
            name: "t".into(),
            columns: Vec::new(),
            primary_key: vec![0],
            indexes: Vec::new(),
            slots: Vec::new(),
            slot_count: 0,
            default_collation: crate::types::collation::Collation::DEFAULT,
            foreign_keys: Vec::new(),
            comment: String::new(),
            partitioning: None,
            engine: None,
            created: 0,
            stable_since: 0,
        };
        let (a, b) = (
            Mutex::new(ThreadStats::default()),
            Mutex::new(ThreadStats::default()),
        );
        for (t, n) in [(&a, 3), (&b, 4)] {
            let mut io = StatementIo::default();
            io.start();
            io.read(&def, IoIndex::Primary, n, false);
            io.read(&def, IoIndex::Scan, 10, false);
            io.wrote(&def, IoWrite::Insert, 1);
            assert!(io.no_index_used && io.rows_examined == n + 10);
            let e = StatementEnd {
                io: Some(&io),
                ..end(Some("d"))
            };
            p.statement_end(t, "SELECT 1", &e);
        }
        p.retire(&b.lock());
        let rows = p.table_io([&a].into_iter());
        let get = |index: Option<&str>| {
            rows.iter()
                .find(|(k, _)| k.index.as_deref() == index)
                .map(|(_, c)| *c)
                .unwrap_or_default()
        };
        assert_eq!(get(Some("PRIMARY")).fetch, 7, "a live and a retired thread");
        assert_eq!((get(None).fetch, get(None).insert), (20, 2));
        p.truncate_io();
        assert!(p.table_io([&a].into_iter()).is_empty());
    }

    #[test]
    fn merged_table_is_bounded() {
        let mut map = HashMap::new();
        let t = Mutex::new(ThreadStats::default());
        let p = PerfSchema::default();
        for i in 0..5 {
            p.statement_end(&t, &format!("SELECT a{i}"), &end(None));
        }
        for row in t.lock().rows(0) {
            merge_into(&mut map, row, 3);
        }
        assert_eq!(map.len(), 4, "three rows and the overflow row");
        assert_eq!(map.get(&(None, None)).map(|r| r.count), Some(2));
    }
}
