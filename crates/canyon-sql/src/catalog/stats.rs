//! Table statistics for the planner: row counts and distinct-prefix counts.
//!
//! # What the planner needs
//! How many rows an access path reads: the table's rows times the selectivity
//! of the key prefix it fixes. Like InnoDB's persistent statistics, Canyon keeps
//! per key (the primary key and each index) `n_diff[k]`, the number of distinct
//! values of the key's first `k + 1` columns; an equality on that prefix reads
//! about `rows / n_diff[k]` rows.
//!
//! # Upkeep, and what it costs
//! - `rows` is adjusted by every INSERT and DELETE statement as it finishes (one
//!   atomic add on the table's own counter; no shared state). A statement that is
//!   rolled back later leaves the estimate off by its rows until the next
//!   analysis, which resets it.
//! - `n_diff` is measured by an *analysis*: a scan, at the latest committed
//!   state, of the live keys of the primary key and of every index (keys only:
//!   no row is read or decoded), counting where each prefix changes. `ANALYZE TABLE` runs one; and, as InnoDB's
//!   `innodb_stats_auto_recalc` does, a table whose modified rows since its last
//!   analysis exceed 10% of its rows (plus 1,000) is analysed again in a
//!   background thread, never on a client's statement.
//! - How an analysis reads the table: `ANALYZE TABLE`, and an automatic
//!   analysis of a table of up to [`SAMPLE_ABOVE_ROWS`] rows, scan every key —
//!   exact, and one read of the table per 10% of its rows changed. Above that,
//!   an automatic analysis *samples*, as InnoDB's dives into
//!   `innodb_stats_persistent_sample_pages` random leaf pages do (see "Sampled
//!   analyses" below): a scan would cost a large table its whole size in reads
//!   for every 10% changed — with data larger than memory, a read of the disk
//!   — and under TPC-C the scans of `order_line` alone took 2% of the server's
//!   CPU. Every [`EXACT_EVERY`]th automatic analysis still scans, to correct
//!   the drift of the running row count (below), which sampling cannot
//!   measure.
//! - As InnoDB's background statistics thread does (`MIN_RECALC_INTERVAL`,
//!   10 s), a table is analysed automatically at most once every
//!   [`MIN_RECALC_INTERVAL`]: one that is due sooner is analysed when the
//!   interval has passed. A small table under heavy churn (TPC-C's
//!   `new_order`: 900 rows per district, every one replaced within a minute)
//!   was otherwise re-scanned every few seconds, and the analyses of TPC-C's
//!   growing tables took 2.6% of the server's CPU. `ANALYZE TABLE` is never
//!   delayed.
//! - Unlike InnoDB, an UPDATE that assigns no primary-key or index column does
//!   not count as a modification: it cannot change any `n_diff`. (Counted,
//!   TPC-C's stock and customer updates had those tables re-scanned every few
//!   seconds for nothing.)
//! - Between analyses the planner scales `n_diff` by `rows now / rows then`
//!   (capped at the row count): tables grow with their keys' cardinality, not
//!   into ever larger groups.
//! - Analyses are persisted in the Meta keyspace (`c/s/<table id>`, JSON), so a
//!   restart keeps them. A table never analysed has no statistics; the planner
//!   then ranks access paths by their shape alone (see `crate::plan::access`).
//!
//! # Sampled analyses
//! In key order, the number of distinct values of a prefix is one plus the
//! number of adjacent key pairs that differ in it. A sampled analysis
//! estimates, per prefix length, the fraction of adjacent pairs that differ,
//! from runs of [`SAMPLE_RUN`] consecutive live keys, and scales it to the
//! table's row count: `n_diff ≈ 1 + (rows - 1) · changes / pairs`.
//!
//! - *Where the runs start.* Storage splits the key's stored bytes into
//!   [`SAMPLE_PARTS`] about equal parts (`Storage::split_points`: for RocksDB,
//!   bisection on its size estimates, which read only the SST files' index
//!   blocks), and a run is read at the start of each part. Parts of equal bytes
//!   hold about equal rows, so the runs are a stratified sample of positions
//!   in key order, each weighing the same. A storage that cannot split (the
//!   in-memory one always can; RocksDB cannot while the table is all in
//!   memtables) makes the analysis a scan.
//! - *Rare values.* A prefix with few distinct values in many rows (TPC-C's
//!   warehouse and district ids) changes between almost no adjacent pair, and a
//!   sample of thousands of pairs sees none of its changes. A prefix whose
//!   estimate is at most [`EXACT_BELOW`] is therefore counted exactly by
//!   skipping from each value to the next (one seek per distinct value, up to a
//!   cap), as a loose index scan would.
//! - *Rows.* Sampling measures proportions, not sizes: the row count is the
//!   running count kept by DML, which drifts by statements rolled back after
//!   they finished and by changes after the last persisted analysis when the
//!   server restarts. The periodic exact analysis resets it.

use crate::catalog::Table;
use crate::types::SqlType;
use arc_swap::ArcSwapOption;
use canyon_common::Result;
use canyon_storage::{prefix_successor, KeyRange};
use canyon_txn::{IndexId, ReadMode, Transaction};
use serde::{Deserialize, Serialize};
use std::ops::{Bound, ControlFlow};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Modified rows, as a fraction of the analysed rows, that trigger a new analysis.
const RECALC_FRACTION: f64 = 0.10;
/// Modified rows that trigger a new analysis on top of the fraction (small
/// tables are not re-analysed on every few rows).
const RECALC_MIN_ROWS: u64 = 1_000;
/// Shortest time between the starts of two automatic analyses of a table
/// (InnoDB's `MIN_RECALC_INTERVAL`).
pub const MIN_RECALC_INTERVAL: Duration = Duration::from_secs(10);
/// Above this many rows an automatic analysis samples instead of scanning.
pub const SAMPLE_ABOVE_ROWS: u64 = 100_000;
/// Every this many automatic analyses of a sampled table, one scans.
pub const EXACT_EVERY: u32 = 10;
/// Parts a sampled analysis splits each key into, reading a run at the start
/// of each.
pub const SAMPLE_PARTS: usize = 64;
/// Keys per run of a sampled analysis: 64 runs of 128 are about 8,000 keys,
/// a few milliseconds, for a table of any size.
pub const SAMPLE_RUN: usize = 128;
/// A sampled analysis counts a prefix exactly when its estimate is at most
/// this (and gives up past four times this many values).
pub const EXACT_BELOW: u64 = 1_000;
/// Fewer adjacent pairs than this in the runs: the sampled analysis scans
/// instead.
const MIN_SAMPLED_PAIRS: u64 = 256;

/// Milliseconds since the first call (a process-wide clock for
/// [`TableStats`]'s last analysis start; never 0).
fn now_ms() -> u64 {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_millis() as u64 + 1
}

/// One analysis of a table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyStats {
    /// Rows when analysed.
    pub rows: u64,
    /// `n_diff` per prefix length of the primary key (empty without one).
    pub primary: Vec<u64>,
    /// `n_diff` per prefix length of each index, by index id.
    pub indexes: Vec<(IndexId, Vec<u64>)>,
    /// Sampled analyses since the last exact one (0: this one was exact).
    #[serde(default)]
    pub sampled: u32,
}

/// How an analysis reads the table (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Every live key.
    Scan,
    /// Runs of keys, scaled to `rows`; falls back to a scan when the storage
    /// cannot split the table or the runs are too short.
    Sample {
        /// The table's row count (the running count).
        rows: u64,
    },
}

/// A table's statistics, shared by every catalog snapshot containing it.
#[derive(Debug, Default)]
pub struct TableStats {
    rows: AtomicI64,
    modified: AtomicU64,
    analyzing: AtomicBool,
    /// An automatic analysis is scheduled (possibly waiting out
    /// [`MIN_RECALC_INTERVAL`]); cleared by its thread when it ends.
    scheduled: AtomicBool,
    /// When the last analysis started ([`now_ms`]); 0: never in this process.
    last_started_ms: AtomicU64,
    keys: ArcSwapOption<KeyStats>,
}

impl TableStats {
    /// The estimated row count; `None` when the table was never analysed.
    pub fn rows(&self) -> Option<f64> {
        self.keys.load().as_ref()?;
        Some(self.rows.load(Ordering::Relaxed).max(0) as f64)
    }

    /// The row count DML keeps (since the last analysis, or since the
    /// table was opened), whether or not the table was ever analysed.
    pub fn counted_rows(&self) -> u64 {
        self.rows.load(Ordering::Relaxed).max(0) as u64
    }

    /// The last analysis, if any.
    pub fn analysis(&self) -> Option<Arc<KeyStats>> {
        self.keys.load_full()
    }

    /// Estimated distinct values of the first `len` columns of the primary key
    /// (`index` `None`) or of an index, scaled to the current row count.
    pub fn n_diff(&self, index: Option<IndexId>, len: usize) -> Option<f64> {
        let ks = self.keys.load();
        let ks = ks.as_ref()?;
        let per = match index {
            None => &ks.primary,
            Some(id) => &ks.indexes.iter().find(|(i, _)| *i == id)?.1,
        };
        let d = *per.get(len.checked_sub(1)?)? as f64;
        let rows = self.rows.load(Ordering::Relaxed).max(0) as f64;
        let scaled = if ks.rows > 0 {
            d * rows / ks.rows as f64
        } else {
            rows
        };
        Some(scaled.clamp(1.0, rows.max(1.0)))
    }

    /// Records a finished statement's changes. `Some(delay)` when the table is
    /// due for an automatic analysis that nobody has scheduled yet: the caller
    /// then owns it, and after `delay` (what is left of [`MIN_RECALC_INTERVAL`]
    /// since the last analysis started) takes [`TableStats::begin_analysis`],
    /// analyses, and calls [`TableStats::unschedule`] whatever happened.
    pub fn note_changes(&self, inserted: u64, deleted: u64, updated: u64) -> Option<Duration> {
        if !self.due(inserted, deleted, updated) {
            return None;
        }
        let last = self.last_started_ms.load(Ordering::Relaxed);
        let since = Duration::from_millis(now_ms().saturating_sub(last));
        Some(if last == 0 {
            Duration::ZERO
        } else {
            MIN_RECALC_INTERVAL.saturating_sub(since)
        })
    }

    /// Marks the moment an analysis starts scanning (automatic or not).
    pub fn analysis_started(&self) {
        self.last_started_ms.store(now_ms(), Ordering::Relaxed);
    }

    /// Ends an automatic analysis's claim (see [`TableStats::note_changes`]).
    pub fn unschedule(&self) {
        self.scheduled.store(false, Ordering::Release);
    }

    /// Records the changes; true when an analysis is due and this caller won
    /// the right to schedule it.
    fn due(&self, inserted: u64, deleted: u64, updated: u64) -> bool {
        if inserted != deleted {
            self.rows
                .fetch_add(inserted as i64 - deleted as i64, Ordering::Relaxed);
        }
        let changed = inserted + deleted + updated;
        if changed == 0 {
            return false;
        }
        let m = self.modified.fetch_add(changed, Ordering::Relaxed) + changed;
        let base = self
            .keys
            .load()
            .as_ref()
            .map_or(self.rows.load(Ordering::Relaxed).max(0) as u64, |k| k.rows);
        let due = m as f64 > base as f64 * RECALC_FRACTION + RECALC_MIN_ROWS as f64;
        due && !self.scheduled.swap(true, Ordering::AcqRel)
    }

    /// Rows modified since the last analysis, as counted towards the next one.
    pub fn modified(&self) -> u64 {
        self.modified.load(Ordering::Relaxed)
    }

    /// Marks the start of an analysis's scan; false if one is running.
    pub fn begin_analysis(&self) -> bool {
        !self.analyzing.swap(true, Ordering::AcqRel)
    }

    /// Installs an analysis (and ends the running one).
    pub fn set(&self, ks: KeyStats) {
        self.rows.store(ks.rows as i64, Ordering::Relaxed);
        self.modified.store(0, Ordering::Relaxed);
        self.keys.store(Some(Arc::new(ks)));
        self.analyzing.store(false, Ordering::Release);
    }

    /// Installs an analysis loaded from disk at startup.
    pub fn load(&self, ks: KeyStats) {
        self.rows.store(ks.rows as i64, Ordering::Relaxed);
        self.keys.store(Some(Arc::new(ks)));
    }

    /// How the next automatic analysis reads the table: it samples a table of
    /// more than [`SAMPLE_ABOVE_ROWS`] rows, except that every
    /// [`EXACT_EVERY`]th analysis (and the first) scans.
    pub fn auto_method(&self) -> Method {
        let Some(ks) = self.analysis() else {
            return Method::Scan;
        };
        let rows = self.rows.load(Ordering::Relaxed).max(0) as u64;
        if rows > SAMPLE_ABOVE_ROWS && ks.sampled + 1 < EXACT_EVERY {
            Method::Sample { rows }
        } else {
            Method::Scan
        }
    }

    /// Ends a failed analysis (the next trigger tries again).
    pub fn analysis_failed(&self) {
        self.analyzing.store(false, Ordering::Release);
    }
}

/// The encoded width of one key column at the start of `b` (see
/// `crate::types::encoding`): a tag byte, then a fixed width per type or, for strings,
/// escaped bytes up to the `00 00` terminator. `None` on malformed input.
fn column_width(b: &[u8], ty: SqlType) -> Option<usize> {
    match *b.first()? {
        0x00 => Some(1),
        0x01 => {
            let fixed = match ty {
                t if t.is_integer() => Some(8),
                SqlType::Bit(_) | SqlType::Year => Some(8),
                SqlType::Float { .. }
                | SqlType::Double { .. }
                | SqlType::DateTime(_)
                | SqlType::Timestamp(_) => Some(8),
                SqlType::Decimal { precision, .. } if precision > 38 => Some(32),
                SqlType::Decimal { .. } => Some(16),
                SqlType::Date => Some(4),
                _ => None,
            };
            match fixed {
                Some(w) => (b.len() > w).then_some(1 + w),
                None => {
                    let mut i = 1;
                    loop {
                        match (b.get(i)?, b.get(i + 1)) {
                            (0x00, Some(0x00)) => return Some(i + 2),
                            (0x00, Some(0xFF)) => i += 2,
                            (0x00, _) => return None,
                            _ => i += 1,
                        }
                    }
                }
            }
        }
        _ => None,
    }
}

/// Counts distinct prefixes over encoded keys visited in key order: a key's
/// first column that differs from the previous key's starts a new group for
/// that prefix length and every longer one.
struct PrefixCounter {
    types: Vec<SqlType>,
    prev: Vec<u8>,
    /// End offsets of the previous key's columns.
    prev_ends: Vec<usize>,
    n_diff: Vec<u64>,
    rows: u64,
}

/// The end offsets of the first `len` columns of encoded key `key`.
fn column_ends(types: &[SqlType], len: usize, key: &[u8]) -> Result<Vec<usize>> {
    let mut ends = Vec::with_capacity(len);
    let mut at = 0;
    for &ty in &types[..len] {
        let w = key
            .get(at..)
            .and_then(|rest| column_width(rest, ty))
            .ok_or_else(|| canyon_common::Error::Corrupt("key of an analysed table".into()))?;
        at += w;
        ends.push(at);
    }
    Ok(ends)
}

/// The column types of `cols` of `table`, in order.
fn key_types(table: &Table, cols: &[usize]) -> Vec<SqlType> {
    cols.iter().map(|&c| table.def.columns[c].ty).collect()
}

impl PrefixCounter {
    fn new(types: Vec<SqlType>) -> PrefixCounter {
        PrefixCounter {
            n_diff: vec![0; types.len()],
            types,
            prev: Vec::new(),
            prev_ends: Vec::new(),
            rows: 0,
        }
    }

    fn add(&mut self, key: &[u8]) -> Result<()> {
        let ends = column_ends(&self.types, self.types.len(), key)?;
        let first_diff = if self.rows == 0 {
            0
        } else {
            (0..ends.len())
                .find(|&i| {
                    let start = if i == 0 { 0 } else { ends[i - 1] };
                    let prev_start = if i == 0 { 0 } else { self.prev_ends[i - 1] };
                    key[start..ends[i]] != self.prev[prev_start..self.prev_ends[i]]
                })
                .unwrap_or(ends.len())
        };
        for n in &mut self.n_diff[first_diff..] {
            *n += 1;
        }
        self.prev.clear();
        self.prev.extend_from_slice(key);
        self.prev_ends = ends;
        self.rows += 1;
        Ok(())
    }
}

/// Reads the live keys in a range of one key (the primary key's or an
/// index's), in key order, until the callback breaks; bounds as for
/// `Reader::scan_live_keys_in` / `scan_live_index_keys_in`.
type KeyVisitor<'a> =
    dyn FnMut(&KeyRange, &mut dyn FnMut(&[u8]) -> ControlFlow<()>) -> Result<()> + 'a;

/// Analyses `table` at the latest committed state (see the module doc). Only
/// keys are read — the primary key's and each index's live entries — never
/// rows; all of them for [`Method::Scan`], runs of them for
/// [`Method::Sample`].
pub fn analyze(table: &Table, txn: &mut Transaction, method: Method) -> Result<KeyStats> {
    if let Method::Sample { rows } = method {
        if let Some(ks) = sample(table, txn, rows)? {
            return Ok(ks);
        }
    }
    let reader = txn.reader(ReadMode::Current)?;
    let mut err = None;
    let mut primary = PrefixCounter::new(key_types(table, &table.def.primary_key));
    reader.scan_live_keys(table.def.id, &mut |pk| {
        if err.is_none() {
            if let Err(e) = primary.add(pk) {
                err = Some(e);
            }
        }
    })?;
    if let Some(e) = err.take() {
        return Err(e);
    }
    let mut indexes = Vec::with_capacity(table.def.indexes.len());
    // A write-only index (an online ADD INDEX in progress) is incomplete:
    // counting its entries would leave wrong statistics behind.
    for (_, idx) in table.def.ordered_indexes() {
        let mut counter = PrefixCounter::new(key_types(table, &idx.columns));
        reader.scan_live_index_keys(idx.id, &mut |ik, _pk| {
            if err.is_none() {
                if let Err(e) = counter.add(ik) {
                    err = Some(e);
                }
            }
        })?;
        if let Some(e) = err.take() {
            return Err(e);
        }
        indexes.push((idx.id, counter.n_diff));
    }
    Ok(KeyStats {
        rows: primary.rows,
        primary: primary.n_diff,
        indexes,
        sampled: 0,
    })
}

/// A sampled analysis of a table of `rows` rows, or `None` when some key could
/// not be sampled (the caller scans).
fn sample(table: &Table, txn: &mut Transaction, rows: u64) -> Result<Option<KeyStats>> {
    let reader = txn.reader(ReadMode::Current)?;
    let id = table.def.id;
    let points = reader.split_live_keys(id, SAMPLE_PARTS)?;
    let types = key_types(table, &table.def.primary_key);
    let Some(mut primary) = sample_key(&types, &points, rows, &mut |range, f| {
        reader.scan_live_keys_in(id, range, f)
    })?
    else {
        return Ok(None);
    };
    // The whole primary key is unique: every row is a value of its own.
    if let Some(last) = primary.last_mut() {
        *last = rows;
    }
    let mut indexes = Vec::with_capacity(table.def.indexes.len());
    for (_, idx) in table.def.ordered_indexes() {
        let points = reader.split_live_index_keys(idx.id, SAMPLE_PARTS)?;
        let types = key_types(table, &idx.columns);
        let Some(n_diff) = sample_key(&types, &points, rows, &mut |range, f| {
            reader.scan_live_index_keys_in(idx.id, range, &mut |ik, _pk| f(ik))
        })?
        else {
            return Ok(None);
        };
        indexes.push((idx.id, n_diff));
    }
    let sampled = table.stats.analysis().map_or(0, |ks| ks.sampled) + 1;
    Ok(Some(KeyStats {
        rows,
        primary,
        indexes,
        sampled,
    }))
}

/// Estimates one key's `n_diff` from a run at the start of each part between
/// `points`, then counts the prefixes estimated at most [`EXACT_BELOW`]
/// exactly. `None` (scan instead) when the runs read every key or hold fewer
/// than [`MIN_SAMPLED_PAIRS`] adjacent pairs.
fn sample_key(
    types: &[SqlType],
    points: &[Vec<u8>],
    rows: u64,
    visit: &mut KeyVisitor<'_>,
) -> Result<Option<Vec<u64>>> {
    if points.is_empty() {
        return Ok(None);
    }
    let mut changes = vec![0u64; types.len()];
    let mut pairs = 0u64;
    // Every run ended before SAMPLE_RUN keys: the runs read the whole key, and
    // a scan, as cheap, is exact.
    let mut whole = true;
    let mut err = None;
    for i in 0..=points.len() {
        let range = KeyRange {
            start: i
                .checked_sub(1)
                .map_or(Bound::Unbounded, |p| Bound::Included(points[p].clone())),
            end: points
                .get(i)
                .map_or(Bound::Unbounded, |p| Bound::Excluded(p.clone())),
        };
        let mut run = PrefixCounter::new(types.to_vec());
        visit(&range, &mut |k| {
            if let Err(e) = run.add(k) {
                err = Some(e);
                return ControlFlow::Break(());
            }
            if run.rows as usize >= SAMPLE_RUN {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })?;
        if let Some(e) = err.take() {
            return Err(e);
        }
        whole &= (run.rows as usize) < SAMPLE_RUN;
        if run.rows >= 2 {
            pairs += run.rows - 1;
            // The run's first key opened a group at every length: not a change.
            for (c, n) in changes.iter_mut().zip(&run.n_diff) {
                *c += n - 1;
            }
        }
    }
    if whole || pairs < MIN_SAMPLED_PAIRS {
        return Ok(None);
    }
    let rows = rows.max(1);
    let mut n_diff: Vec<u64> = changes
        .iter()
        .map(|&c| {
            let est = 1.0 + (rows - 1) as f64 * c as f64 / pairs as f64;
            (est.round() as u64).clamp(1, rows)
        })
        .collect();
    for len in 1..=n_diff.len() {
        if n_diff[len - 1] > EXACT_BELOW {
            // Longer prefixes have at least as many values.
            break;
        }
        if let Some(exact) = count_prefixes(types, len, EXACT_BELOW * 4, visit)? {
            n_diff[len - 1] = exact;
        }
    }
    // A longer prefix has at least as many distinct values as a shorter one.
    for i in 1..n_diff.len() {
        n_diff[i] = n_diff[i].max(n_diff[i - 1]);
    }
    Ok(Some(n_diff))
}

/// The distinct values of the first `len` columns of a key, counted by
/// seeking from each value past all its keys to the next; `None` past `cap`.
fn count_prefixes(
    types: &[SqlType],
    len: usize,
    cap: u64,
    visit: &mut KeyVisitor<'_>,
) -> Result<Option<u64>> {
    let mut count = 0;
    let mut range = KeyRange::all();
    loop {
        let mut next = None;
        visit(&range, &mut |k| {
            next = Some(column_ends(types, len, k).map(|ends| k[..ends[len - 1]].to_vec()));
            ControlFlow::Break(())
        })?;
        let Some(prefix) = next.transpose()? else {
            return Ok(Some(count));
        };
        count += 1;
        if count > cap {
            return Ok(None);
        }
        // Keys are prefix-free column by column: every key with this prefix
        // sorts before its successor, and every other key after it.
        match prefix_successor(&prefix) {
            Some(s) => range.start = Bound::Included(s),
            None => return Ok(Some(count)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::encoding::encode_key_value;
    use crate::types::value::Value;

    #[test]
    fn automatic_analyses_are_at_least_min_recalc_interval_apart() {
        let stats = TableStats::default();
        assert_eq!(stats.note_changes(10, 0, 0), None, "under 1,000 rows");
        assert_eq!(stats.note_changes(2_000, 0, 0), Some(Duration::ZERO));
        // Scheduled already: nobody else schedules one.
        assert_eq!(stats.note_changes(2_000, 0, 0), None);
        // ANALYZE TABLE is not held back by a scheduled analysis.
        assert!(stats.begin_analysis());
        stats.analysis_started();
        stats.set(KeyStats {
            rows: 4_010,
            primary: vec![4_010],
            indexes: vec![],
            sampled: 0,
        });
        stats.unschedule();
        // Due again at once, but the last analysis has just started.
        let delay = stats.note_changes(2_000, 0, 0).expect("due");
        assert!(
            delay > MIN_RECALC_INTERVAL - Duration::from_secs(2) && delay <= MIN_RECALC_INTERVAL,
            "{delay:?}"
        );
    }

    #[test]
    fn large_tables_are_sampled_and_every_tenth_analysis_scans() {
        let stats = TableStats::default();
        assert_eq!(stats.auto_method(), Method::Scan, "never analysed");
        let ks = |rows, sampled| KeyStats {
            rows,
            primary: vec![rows],
            indexes: vec![],
            sampled,
        };
        stats.set(ks(SAMPLE_ABOVE_ROWS, 0));
        assert_eq!(stats.auto_method(), Method::Scan, "not above the threshold");
        stats.set(ks(SAMPLE_ABOVE_ROWS + 1, 0));
        let rows = SAMPLE_ABOVE_ROWS + 1;
        assert_eq!(stats.auto_method(), Method::Sample { rows });
        stats.set(ks(rows, EXACT_EVERY - 2));
        assert_eq!(stats.auto_method(), Method::Sample { rows });
        stats.set(ks(rows, EXACT_EVERY - 1));
        assert_eq!(stats.auto_method(), Method::Scan, "the tenth scans");
        // The running count decides, not the count at the last analysis.
        stats.set(ks(rows, 0));
        assert!(stats.note_changes(0, 2, 0).is_none());
        assert_eq!(stats.auto_method(), Method::Scan);
    }

    #[test]
    fn column_widths_follow_the_key_encoding() {
        let enc = |v: Value, scale: u8| {
            let mut k = Vec::new();
            encode_key_value(
                &v,
                scale,
                crate::types::collation::Collation::Binary,
                &mut k,
            );
            k
        };
        let int = SqlType::Int { unsigned: false };
        assert_eq!(column_width(&enc(Value::Int(-5), 0), int), Some(9));
        assert_eq!(column_width(&enc(Value::Null, 0), int), Some(1));
        let s = enc(Value::Bytes(vec![b'a', 0, b'b']), 0);
        assert_eq!(column_width(&s, SqlType::VarChar(10)), Some(s.len()));
        let d = enc(
            Value::Decimal(crate::types::decimal::Decimal::new(125, 2)),
            2,
        );
        assert_eq!(
            column_width(
                &d,
                SqlType::Decimal {
                    precision: 5,
                    scale: 2,
                    unsigned: false,
                }
            ),
            Some(17)
        );
        // Two columns back to back split where the first ends.
        let mut two = s.clone();
        two.extend(enc(Value::Int(1), 0));
        assert_eq!(column_width(&two, SqlType::VarChar(10)), Some(s.len()));
        assert_eq!(column_width(&[0x01, 0x61], SqlType::VarChar(10)), None);
    }
}
