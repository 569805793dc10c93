//! Table I/O per (table, index) and the per-statement row tally: what
//! `table_io_waits_summary_by_table`, `..._by_index_usage`, ROWS_EXAMINED,
//! NO_INDEX_USED and LOCK_TIME are made of (see the essay in `super`).
//!
//! # Where the counting happens
//! A scan of the executor (`crate::exec::read`) counts the rows it reads in
//! a local variable and, when it ends, reports the total once
//! (`EvalContext::note_read`) into its session's [`StatementIo`]: a plain
//! struct the session owns, behind a `RefCell` no other thread can reach.
//! So a row costs one local add; a scan one short linear search of the
//! statement's few (table, index) entries. At the statement's end the
//! entries are added into the thread's [`super::ThreadStats`] under the
//! mutex the statement end takes anyway, and read like the digests:
//! merged over live threads and the retired ones.
//!
//! The timers (SUM_TIMER_WAIT ...) are 0: timing each row read would cost
//! two clock reads per row, which is what this module avoids.

use crate::catalog::TableDef;

use std::sync::Arc;
use std::time::Instant;

/// Through what a scan read its rows (INDEX_NAME).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoIndex {
    /// A full table scan (INDEX_NAME NULL, access type ALL).
    Scan,
    /// The primary key ('PRIMARY'; NULL for a table without one, as for
    /// InnoDB's hidden clustered index).
    Primary,
    /// Secondary index `i` of the table's definition.
    Index(usize),
}

/// A row write of a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoWrite {
    /// COUNT_INSERT.
    Insert,
    /// COUNT_UPDATE.
    Update,
    /// COUNT_DELETE.
    Delete,
}

/// A row of the table I/O tables: (schema, table, index name).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IoKey {
    /// OBJECT_SCHEMA.
    pub db: Arc<str>,
    /// OBJECT_NAME.
    pub table: Arc<str>,
    /// INDEX_NAME (`None`: rows read by full scans, and the writes).
    pub index: Option<Arc<str>>,
}

/// One (table, index) pair's counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoCounts {
    /// COUNT_FETCH: rows read.
    pub fetch: u64,
    /// COUNT_INSERT.
    pub insert: u64,
    /// COUNT_UPDATE.
    pub update: u64,
    /// COUNT_DELETE.
    pub delete: u64,
}

impl IoCounts {
    /// COUNT_WRITE.
    pub fn write(&self) -> u64 {
        self.insert + self.update + self.delete
    }

    /// COUNT_STAR.
    pub fn star(&self) -> u64 {
        self.fetch + self.write()
    }

    /// Adds `o`'s counts.
    pub fn merge(&mut self, o: &IoCounts) {
        self.fetch += o.fetch;
        self.insert += o.insert;
        self.update += o.update;
        self.delete += o.delete;
    }

    fn is_zero(&self) -> bool {
        self.star() == 0
    }
}

/// Most (table, index) entries a session keeps between statements (their
/// names are reused, not copied again); past it the list starts over.
const KEEP: usize = 64;

/// One entry of a statement's tally: the table's id and index slot to find
/// it cheaply, the names for the tables, the counts.
#[derive(Debug)]
struct Entry {
    table: canyon_txn::TableId,
    index: IoIndex,
    key: IoKey,
    counts: IoCounts,
}

/// A statement's rows examined, index use, lock wait and table I/O: kept by
/// its session, reset at the start of each client request.
#[derive(Debug, Default)]
pub struct StatementIo {
    /// ROWS_EXAMINED: rows read from tables and indexes.
    pub rows_examined: u64,
    /// NO_INDEX_USED: the statement scanned a base table fully.
    pub no_index_used: bool,
    /// A table after the first of a join was read by a full scan
    /// (Select_full_join).
    pub full_join: bool,
    /// Full scans of a first (or only) table (Select_scan counts the
    /// statements with one).
    pub full_scans: u64,
    /// Full scans of a table after the first of a join.
    pub full_join_scans: u64,
    /// Scans and lookups through an index (Handler_read_key: one per scan,
    /// where MySQL counts one per key looked up).
    pub index_scans: u64,
    /// Rows read through an index (Handler_read_next: those past each
    /// scan's first).
    pub index_rows: u64,
    /// Rows read by full scans (Handler_read_rnd_next, with one more per
    /// scan for its end, as InnoDB's).
    pub scan_rows: u64,
    /// LOCK_TIME: time spent waiting for row and table locks, nanoseconds.
    pub lock_ns: u64,
    /// When the current lock wait began (a request stopped at a wait).
    pub wait_from: Option<Instant>,
    entries: Vec<Entry>,
}

impl StatementIo {
    /// A new client request: the counts start from zero (the entries' names
    /// stay for reuse).
    pub fn start(&mut self) {
        self.rows_examined = 0;
        self.no_index_used = false;
        self.full_join = false;
        self.full_scans = 0;
        self.full_join_scans = 0;
        self.index_scans = 0;
        self.index_rows = 0;
        self.scan_rows = 0;
        self.lock_ns = 0;
        self.wait_from = None;
        for e in &mut self.entries {
            e.counts = IoCounts::default();
        }
    }

    /// The request stopped at a lock wait.
    pub fn wait_begins(&mut self) {
        self.wait_from.get_or_insert_with(Instant::now);
    }

    /// The lock wait ended (granted, timed out or killed).
    pub fn wait_ends(&mut self) {
        if let Some(from) = self.wait_from.take() {
            self.lock_ns += u64::try_from(from.elapsed().as_nanos()).unwrap_or(u64::MAX);
        }
    }

    fn entry(&mut self, def: &TableDef, index: IoIndex) -> &mut IoCounts {
        let at = self
            .entries
            .iter()
            .position(|e| e.table == def.id && e.index == index && *e.key.table == *def.name);
        let at = match at {
            Some(at) => at,
            None => {
                if self.entries.len() >= KEEP {
                    self.entries.retain(|e| !e.counts.is_zero());
                }
                let name = match index {
                    IoIndex::Scan => None,
                    IoIndex::Primary if def.primary_key.is_empty() => None,
                    IoIndex::Primary => Some(Arc::from("PRIMARY")),
                    IoIndex::Index(i) => def.indexes.get(i).map(|x| Arc::from(x.name.as_str())),
                };
                self.entries.push(Entry {
                    table: def.id,
                    index,
                    key: IoKey {
                        db: Arc::from(def.db.as_str()),
                        table: Arc::from(def.name.as_str()),
                        index: name,
                    },
                    counts: IoCounts::default(),
                });
                self.entries.len() - 1
            }
        };
        &mut self.entries[at].counts
    }

    /// `rows` rows read from `def` through `index` (one scan's total).
    /// `joined`: the scan is of a table after the first of a join.
    pub fn read(&mut self, def: &TableDef, index: IoIndex, rows: u64, joined: bool) {
        self.rows_examined += rows;
        if index == IoIndex::Scan {
            self.no_index_used = true;
            self.full_join |= joined;
            if joined {
                self.full_join_scans += 1;
            } else {
                self.full_scans += 1;
            }
            self.scan_rows += rows;
        } else {
            self.index_scans += 1;
            self.index_rows += rows;
        }
        self.entry(def, index).fetch += rows;
    }

    /// `rows` rows of `def` written.
    pub fn wrote(&mut self, def: &TableDef, kind: IoWrite, rows: u64) {
        if rows == 0 {
            return;
        }
        let c = self.entry(def, IoIndex::Scan);
        match kind {
            IoWrite::Insert => c.insert += rows,
            IoWrite::Update => c.update += rows,
            IoWrite::Delete => c.delete += rows,
        }
    }

    /// The statement's non-zero (table, index) counts.
    pub fn counts(&self) -> impl Iterator<Item = (&IoKey, &IoCounts)> {
        self.entries
            .iter()
            .filter(|e| !e.counts.is_zero())
            .map(|e| (&e.key, &e.counts))
    }
}

/// Table I/O rows by key.
/// hashbrown's default hasher (foldhash): merged into on every statement end.
pub type IoMap = hashbrown::HashMap<IoKey, IoCounts>;

/// Adds a statement's counts into a thread's map.
pub(super) fn add_into(map: &mut IoMap, io: &StatementIo) {
    for (k, c) in io.counts() {
        match map.get_mut(k) {
            Some(m) => m.merge(c),
            None => {
                map.insert(k.clone(), *c);
            }
        }
    }
}

/// Adds one map into another (the merge of threads).
pub(super) fn merge_maps(into: &mut IoMap, from: &IoMap) {
    for (k, c) in from {
        into.entry(k.clone()).or_default().merge(c);
    }
}
