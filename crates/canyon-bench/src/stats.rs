//! Counting during a step: transactions, queries, errors and an HDR histogram
//! of transaction latency, kept in a few mutex-protected shards so that clients
//! rarely meet on a lock and memory does not grow with the number of clients
//! (one histogram with 3 significant digits up to an hour is ~190 KiB).
//!
//! Two windows are kept: the measured window (reset when the warm-up ends) and
//! the progress interval (taken and reset by the live progress line).

use crate::result::{Latency, QueryCounts};
use crate::workload::StmtClass;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Highest latency the histograms hold, microseconds (one hour); longer ones
/// are recorded as this value.
const MAX_LATENCY_US: u64 = 3_600_000_000;

fn new_histogram(sigfig: u8) -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_US, sigfig)
        .expect("constant bounds 1..1h with 2-3 significant digits are valid")
}

/// Per-shard counters.
struct Shard {
    window: Histogram<u64>,
    txns: u64,
    queries: [u64; 3],
    errors: BTreeMap<u16, u64>,
    retries: u64,
    interval: Histogram<u64>,
    interval_txns: u64,
    interval_queries: u64,
    interval_errors: u64,
}

impl Shard {
    fn new() -> Shard {
        Shard {
            window: new_histogram(3),
            txns: 0,
            queries: [0; 3],
            errors: BTreeMap::new(),
            retries: 0,
            interval: new_histogram(2),
            interval_txns: 0,
            interval_queries: 0,
            interval_errors: 0,
        }
    }
}

/// Queries of one transaction by class: read, write, other.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueryTally(pub [u64; 3]);

impl QueryTally {
    /// Counts one statement of `class`.
    pub fn add(&mut self, class: StmtClass) {
        let i = match class {
            StmtClass::Read => 0,
            StmtClass::Write => 1,
            StmtClass::Other => 2,
        };
        self.0[i] += 1;
    }

    /// All statements.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
}

/// The counters of one step, shared by its clients.
pub struct StepStats {
    shards: Vec<Mutex<Shard>>,
}

/// What the progress line shows for one interval.
#[derive(Debug, Clone, Copy, Default)]
pub struct Interval {
    /// Transactions committed.
    pub txns: u64,
    /// Statements executed.
    pub queries: u64,
    /// Errors (retried ones included).
    pub errors: u64,
    /// 95th percentile latency, ms (0 without transactions).
    pub p95_ms: f64,
}

/// The totals of the measured window.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    /// Committed transactions.
    pub txns: u64,
    /// Statements by class.
    pub queries: QueryCounts,
    /// Errors by MySQL number.
    pub errors: BTreeMap<u16, u64>,
    /// Retried transactions.
    pub retries: u64,
    /// Latency summary.
    pub latency: Latency,
}

fn lock(m: &Mutex<Shard>) -> std::sync::MutexGuard<'_, Shard> {
    // A client that panicked while holding the lock left consistent counters
    // behind (every update is a few additions), so a poisoned lock is usable.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl StepStats {
    /// Counters sharded for this machine's parallelism.
    pub fn new() -> StepStats {
        let n = std::thread::available_parallelism()
            .map_or(8, |n| n.get() * 4)
            .clamp(8, 64);
        StepStats {
            shards: (0..n).map(|_| Mutex::new(Shard::new())).collect(),
        }
    }

    fn shard(&self, client: u64) -> &Mutex<Shard> {
        &self.shards[(client % self.shards.len() as u64) as usize]
    }

    /// Records a committed transaction of client `client`.
    pub fn record_txn(&self, client: u64, latency_us: u64, tally: QueryTally) {
        let mut s = lock(self.shard(client));
        let v = latency_us.max(1);
        s.window.saturating_record(v);
        s.interval.saturating_record(v);
        s.txns += 1;
        for (q, t) in s.queries.iter_mut().zip(tally.0) {
            *q += t;
        }
        s.interval_txns += 1;
        s.interval_queries += tally.total();
    }

    /// Records statements of a transaction that was rolled back (they count as
    /// queries, as in sysbench) and the error that ended it.
    pub fn record_error(&self, client: u64, code: u16, retried: bool, tally: QueryTally) {
        let mut s = lock(self.shard(client));
        *s.errors.entry(code).or_default() += 1;
        if retried {
            s.retries += 1;
        }
        for (q, t) in s.queries.iter_mut().zip(tally.0) {
            *q += t;
        }
        s.interval_errors += 1;
        s.interval_queries += tally.total();
    }

    /// Starts the measured window: forgets what the warm-up counted.
    pub fn reset_window(&self) {
        for m in &self.shards {
            let mut s = lock(m);
            s.window.reset();
            s.txns = 0;
            s.queries = [0; 3];
            s.errors.clear();
            s.retries = 0;
        }
    }

    /// Takes and resets the progress interval.
    pub fn take_interval(&self) -> Interval {
        let mut h = new_histogram(2);
        let mut out = Interval::default();
        for m in &self.shards {
            let mut s = lock(m);
            // Same bounds and precision: adding cannot fail.
            let _ = h.add(&s.interval);
            s.interval.reset();
            out.txns += std::mem::take(&mut s.interval_txns);
            out.queries += std::mem::take(&mut s.interval_queries);
            out.errors += std::mem::take(&mut s.interval_errors);
        }
        if !h.is_empty() {
            out.p95_ms = h.value_at_quantile(0.95) as f64 / 1000.0;
        }
        out
    }

    /// The measured window's totals so far.
    pub fn totals(&self) -> Totals {
        let mut h = new_histogram(3);
        let mut t = Totals::default();
        let mut q = [0u64; 3];
        for m in &self.shards {
            let s = lock(m);
            let _ = h.add(&s.window);
            t.txns += s.txns;
            for (a, b) in q.iter_mut().zip(s.queries) {
                *a += b;
            }
            for (code, n) in &s.errors {
                *t.errors.entry(*code).or_default() += n;
            }
            t.retries += s.retries;
        }
        t.queries = QueryCounts {
            read: q[0],
            write: q[1],
            other: q[2],
            total: q.iter().sum(),
        };
        t.latency = latency_of(&h);
        t
    }
}

impl Default for StepStats {
    fn default() -> Self {
        StepStats::new()
    }
}

/// The summary of a histogram of microseconds, in milliseconds.
pub fn latency_of(h: &Histogram<u64>) -> Latency {
    if h.is_empty() {
        return Latency::default();
    }
    let ms = |us: u64| us as f64 / 1000.0;
    Latency {
        mean: h.mean() / 1000.0,
        p50: ms(h.value_at_quantile(0.50)),
        p95: ms(h.value_at_quantile(0.95)),
        p99: ms(h.value_at_quantile(0.99)),
        max: ms(h.max()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_counts_and_percentiles() {
        let s = StepStats::new();
        let tally = QueryTally([14, 4, 2]);
        // 1..=1000 ms over many clients.
        for i in 1..=1000u64 {
            s.record_txn(i, i * 1000, tally);
        }
        s.record_error(3, 1213, true, QueryTally([2, 0, 1]));
        let t = s.totals();
        assert_eq!(t.txns, 1000);
        assert_eq!(t.queries.read, 14_002);
        assert_eq!(t.queries.write, 4000);
        assert_eq!(t.queries.other, 2001);
        assert_eq!(t.queries.total, 20_003);
        assert_eq!(t.errors.get(&1213), Some(&1));
        assert_eq!(t.retries, 1);
        // 3 significant digits: within 0.1%.
        assert!((t.latency.p50 - 500.0).abs() <= 0.5, "{:?}", t.latency);
        assert!((t.latency.p95 - 950.0).abs() <= 1.0, "{:?}", t.latency);
        assert!((t.latency.p99 - 990.0).abs() <= 1.0, "{:?}", t.latency);
        assert!((t.latency.max - 1000.0).abs() <= 1.0, "{:?}", t.latency);

        let iv = s.take_interval();
        assert_eq!(iv.txns, 1000);
        assert_eq!(iv.errors, 1);
        assert!(iv.p95_ms > 900.0);
        assert_eq!(s.take_interval().txns, 0, "the interval resets");

        s.reset_window();
        let t = s.totals();
        assert_eq!((t.txns, t.queries.total, t.retries), (0, 0, 0));
        assert!(t.errors.is_empty());
        assert_eq!(t.latency, Latency::default());
    }
}
