//! The per-thread statement statistics and their merge (see the essay in
//! `super`).

use super::digest::{self, Digest};
use std::collections::VecDeque;
use std::sync::Arc;

/// How many statements `events_statements_history` keeps per thread
/// (`performance_schema_events_statements_history_size`'s default).
pub const HISTORY_SIZE: usize = 10;

/// `performance_schema_max_sql_text_length`'s default: SQL_TEXT is cut here.
pub const MAX_SQL_TEXT: usize = 1024;

/// The texts a thread remembers the digest of (cleared when full): a
/// repeated text costs a hash probe instead of a tokenisation.
const DIGEST_CACHE: usize = 256;

/// Histogram buckets of statement latency: bucket `b` holds waits below
/// `bucket_limit_ns(b)`; four buckets per doubling, from 1 µs to about
/// 2^(NB/4) µs (an hour and more in the last).
pub const BUCKETS: usize = 96;

/// The upper bound of bucket `b`, in nanoseconds.
pub fn bucket_limit_ns(b: usize) -> u64 {
    // 1000 * 2^(b/4), computed in floating point once per quantile read.
    (1000.0 * 2f64.powf(b as f64 / 4.0)) as u64
}

fn bucket_of(ns: u64) -> usize {
    if ns < 1000 {
        return 0;
    }
    let b = ((ns as f64 / 1000.0).log2() * 4.0).floor() as usize + 1;
    b.min(BUCKETS - 1)
}

/// What the session tells at the end of a statement.
#[derive(Debug, Clone, Default)]
pub struct StatementEnd<'a> {
    /// The current database.
    pub schema: Option<&'a str>,
    /// The statement's wall time, in nanoseconds.
    pub wait_ns: u64,
    /// Rows returned to the client.
    pub rows_sent: u64,
    /// Rows inserted, changed or deleted.
    pub rows_affected: u64,
    /// Rows read to answer it (see [`super::io`]).
    pub rows_examined: u64,
    /// Whether it scanned a base table fully (NO_INDEX_USED).
    pub no_index_used: bool,
    /// Time it waited for row and table locks, nanoseconds (LOCK_TIME).
    pub lock_ns: u64,
    /// Its table I/O, added to the thread's table I/O rows.
    pub io: Option<&'a super::io::StatementIo>,
    /// 1 when it failed.
    pub errors: u64,
    /// Warnings it raised.
    pub warnings: u64,
    /// The error's message, when it failed.
    pub error_message: Option<&'a str>,
}

/// One digest's counters (a row of `events_statements_summary_by_digest`
/// once merged).
#[derive(Debug, Clone)]
pub struct DigestStats {
    /// The digest (`None`: the overflow row).
    pub digest: Option<Arc<Digest>>,
    /// The database it ran in.
    pub schema: Option<Arc<str>>,
    /// COUNT_STAR.
    pub count: u64,
    /// SUM / MIN / MAX_TIMER_WAIT, in nanoseconds.
    pub sum_ns: u64,
    /// See `sum_ns`.
    pub min_ns: u64,
    /// See `sum_ns`.
    pub max_ns: u64,
    /// SUM_ERRORS.
    pub errors: u64,
    /// SUM_WARNINGS.
    pub warnings: u64,
    /// SUM_ROWS_AFFECTED.
    pub rows_affected: u64,
    /// SUM_ROWS_SENT.
    pub rows_sent: u64,
    /// SUM_ROWS_EXAMINED.
    pub rows_examined: u64,
    /// SUM_NO_INDEX_USED.
    pub no_index_used: u64,
    /// SUM_LOCK_TIME, nanoseconds.
    pub lock_ns: u64,
    /// FIRST_SEEN / LAST_SEEN, microseconds since the Unix epoch.
    pub first_seen_us: i64,
    /// See `first_seen_us`.
    pub last_seen_us: i64,
    /// The latency histogram (QUANTILE_*).
    pub hist: Box<[u32; BUCKETS]>,
    /// QUERY_SAMPLE_TEXT: the statement that took longest.
    pub sample: String,
    /// When the sample ran (µs since the epoch) and how long it took (ns).
    pub sample_seen_us: i64,
    /// See `sample_seen_us`.
    pub sample_ns: u64,
}

impl DigestStats {
    fn new(digest: Option<Arc<Digest>>, schema: Option<Arc<str>>) -> Self {
        DigestStats {
            digest,
            schema,
            count: 0,
            sum_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            errors: 0,
            warnings: 0,
            rows_affected: 0,
            rows_sent: 0,
            rows_examined: 0,
            no_index_used: 0,
            lock_ns: 0,
            first_seen_us: i64::MAX,
            last_seen_us: 0,
            hist: Box::new([0; BUCKETS]),
            sample: String::new(),
            sample_seen_us: 0,
            sample_ns: 0,
        }
    }

    fn add(&mut self, e: &StatementEnd<'_>, now_us: i64, text: &str) {
        self.count += 1;
        self.sum_ns += e.wait_ns;
        self.min_ns = self.min_ns.min(e.wait_ns);
        self.max_ns = self.max_ns.max(e.wait_ns);
        self.errors += e.errors;
        self.warnings += e.warnings;
        self.rows_affected += e.rows_affected;
        self.rows_sent += e.rows_sent;
        self.rows_examined += e.rows_examined;
        self.no_index_used += u64::from(e.no_index_used);
        self.lock_ns += e.lock_ns;
        self.first_seen_us = self.first_seen_us.min(now_us);
        self.last_seen_us = self.last_seen_us.max(now_us);
        let b = bucket_of(e.wait_ns);
        self.hist[b] = self.hist[b].saturating_add(1);
        // MySQL's default sampling keeps the slowest statement of the digest.
        if e.wait_ns >= self.sample_ns || self.sample.is_empty() {
            self.sample.clear();
            self.sample.push_str(cut(text, MAX_SQL_TEXT));
            self.sample_seen_us = now_us;
            self.sample_ns = e.wait_ns;
        }
    }

    /// Adds `o`'s counts to these (the merge of threads' rows).
    pub fn merge(&mut self, o: &DigestStats) {
        self.count += o.count;
        self.sum_ns += o.sum_ns;
        self.min_ns = self.min_ns.min(o.min_ns);
        self.max_ns = self.max_ns.max(o.max_ns);
        self.errors += o.errors;
        self.warnings += o.warnings;
        self.rows_affected += o.rows_affected;
        self.rows_sent += o.rows_sent;
        self.rows_examined += o.rows_examined;
        self.no_index_used += o.no_index_used;
        self.lock_ns += o.lock_ns;
        self.first_seen_us = self.first_seen_us.min(o.first_seen_us);
        self.last_seen_us = self.last_seen_us.max(o.last_seen_us);
        for (a, b) in self.hist.iter_mut().zip(o.hist.iter()) {
            *a = a.saturating_add(*b);
        }
        if o.sample_ns >= self.sample_ns && !o.sample.is_empty() {
            self.sample.clone_from(&o.sample);
            self.sample_seen_us = o.sample_seen_us;
            self.sample_ns = o.sample_ns;
        }
    }

    /// The wait below which a fraction `q` of the statements finished, in
    /// nanoseconds (a bucket's upper bound, as MySQL's QUANTILE_* are).
    pub fn quantile_ns(&self, q: f64) -> u64 {
        let total: u64 = self.hist.iter().map(|&n| u64::from(n)).sum();
        if total == 0 {
            return 0;
        }
        let want = (total as f64 * q).ceil() as u64;
        let mut seen = 0u64;
        for (b, &n) in self.hist.iter().enumerate() {
            seen += u64::from(n);
            if seen >= want {
                return bucket_limit_ns(b)
                    .min(self.max_ns.max(1))
                    .max(self.min_ns.min(self.max_ns));
            }
        }
        self.max_ns
    }

    /// The merge key: the database and the digest hash.
    pub fn key(&self) -> (Option<Arc<str>>, Option<[u8; 32]>) {
        (self.schema.clone(), self.digest.as_ref().map(|d| d.hash))
    }
}

/// A finished (or running) statement, as `events_statements_current` and
/// `_history` show it.
#[derive(Debug, Clone)]
pub struct StatementEvent {
    /// EVENT_ID (per thread, from 1).
    pub event_id: u64,
    /// EVENT_NAME's last part (`select`, `insert`, ...).
    pub command: String,
    /// SQL_TEXT (cut at [`MAX_SQL_TEXT`]).
    pub text: String,
    /// The digest.
    pub digest: Option<Arc<Digest>>,
    /// CURRENT_SCHEMA.
    pub schema: Option<String>,
    /// TIMER_START / TIMER_END, picoseconds since the server started.
    pub start_ps: u64,
    /// See `start_ps`.
    pub end_ps: u64,
    /// ERRORS, WARNINGS, ROWS_*.
    pub errors: u64,
    /// See `errors`.
    pub warnings: u64,
    /// See `errors`.
    pub rows_affected: u64,
    /// See `errors`.
    pub rows_sent: u64,
    /// See `errors`.
    pub rows_examined: u64,
    /// NO_INDEX_USED.
    pub no_index_used: bool,
    /// LOCK_TIME, nanoseconds.
    pub lock_ns: u64,
    /// MESSAGE_TEXT.
    pub message: Option<String>,
}

/// One thread's statistics, in its process-list entry behind a mutex only
/// its session and readers of performance_schema take.
#[derive(Debug, Default)]
pub struct ThreadStats {
    /// The truncation generation these digests belong to (see
    /// `super::PerfSchema::truncate`).
    pub(super) generation: u32,
    /// Digest rows, by (database, digest) key's hash; a bucket holds the
    /// rows whose keys collide. hashbrown's default hasher (foldhash), here
    /// and in `cache`: these are looked up on every statement end, where
    /// std's SipHash of the statement text cost a measurable part of the
    /// digest consumer's price (bench/instrument_cost.sh).
    pub(super) digests: hashbrown::HashMap<u64, Vec<DigestStats>>,
    /// Number of rows in `digests`.
    pub(super) rows: usize,
    /// The overflow row (digest NULL): statements that found the table full.
    pub(super) overflow: Option<DigestStats>,
    /// Text -> digest, for texts seen before.
    cache: hashbrown::HashMap<Box<str>, Arc<Digest>>,
    /// The last [`HISTORY_SIZE`] statements, oldest first.
    pub(super) history: VecDeque<StatementEvent>,
    /// The last EVENT_ID given.
    pub(super) last_event_id: u64,
    /// Table I/O rows (see [`super::io`]), of truncation generation
    /// `io_generation`.
    pub(super) io: super::io::IoMap,
    /// See `io`.
    pub(super) io_generation: u32,
}

fn key_hash(schema: Option<&str>, d: &Digest) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    schema.hash(&mut h);
    d.hash.hash(&mut h);
    h.finish()
}

/// `s` cut at `max` bytes (at a character boundary).
pub fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut n = max;
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    &s[..n]
}

/// [`command_of`] into `out` (replacing what it held), reusing its buffer.
fn command_into(text: &str, out: &mut String) {
    let t = text.trim_start_matches(|c: char| c.is_whitespace() || c == '(');
    let n = t
        .bytes()
        .take_while(|c| c.is_ascii_alphabetic() || *c == b'_')
        .count();
    let w = &t[..n];
    let simple = match () {
        _ if w.is_empty() => Some("error"),
        _ if w.eq_ignore_ascii_case("set") => Some("set_option"),
        _ if w.eq_ignore_ascii_case("start") || w.eq_ignore_ascii_case("begin") => Some("begin"),
        _ if w.eq_ignore_ascii_case("with") => Some("select"),
        _ if w.eq_ignore_ascii_case("show") => None,
        _ => {
            out.clear();
            out.push_str(w);
            out.make_ascii_lowercase();
            return;
        }
    };
    match simple {
        Some(c) => {
            out.clear();
            out.push_str(c);
        }
        None => *out = command_of(text),
    }
}

/// The statement's command word, lower case (`select`, `insert`, ...), as
/// the last part of EVENT_NAME `statement/sql/...`.
pub(super) fn command_of(text: &str) -> String {
    let t = text.trim_start_matches(|c: char| c.is_whitespace() || c == '(');
    let w: String = t
        .chars()
        .take_while(|c| c.is_ascii_alphabetic() || *c == '_')
        .collect();
    match w.to_ascii_lowercase().as_str() {
        "" => "error".into(),
        "set" => "set_option".into(),
        "start" | "begin" => "begin".into(),
        "with" => "select".into(),
        "show" => {
            let next: String = t[w.len()..]
                .trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphabetic())
                .collect();
            format!("show_{}", next.to_ascii_lowercase())
        }
        other => other.to_string(),
    }
}

impl ThreadStats {
    /// Records one statement. `digests_size` bounds the thread's rows;
    /// `digest_on` / `history_on` say which consumers are enabled.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn record(
        &mut self,
        text: &str,
        e: &StatementEnd<'_>,
        start_ps: u64,
        now_us: i64,
        digests_size: usize,
        digest_on: bool,
        history_on: bool,
    ) {
        let d = match self.cache.get(text) {
            Some(d) => d.clone(),
            None => {
                let d = Arc::new(digest::digest(text));
                if self.cache.len() >= DIGEST_CACHE {
                    self.cache.clear();
                }
                if text.len() <= MAX_SQL_TEXT {
                    self.cache.insert(text.into(), d.clone());
                }
                d
            }
        };
        if digest_on {
            let k = key_hash(e.schema, &d);
            let bucket = self.digests.entry(k).or_default();
            let found = bucket.iter_mut().find(|r| {
                r.schema.as_deref() == e.schema
                    && r.digest.as_ref().is_some_and(|x| x.hash == d.hash)
            });
            match found {
                Some(r) => r.add(e, now_us, text),
                None if self.rows < digests_size => {
                    let mut r = DigestStats::new(Some(d.clone()), e.schema.map(Arc::from));
                    r.add(e, now_us, text);
                    bucket.push(r);
                    self.rows += 1;
                }
                None => {
                    if bucket.is_empty() {
                        self.digests.remove(&k);
                    }
                    self.overflow
                        .get_or_insert_with(|| DigestStats::new(None, None))
                        .add(e, now_us, text);
                }
            }
        }
        self.last_event_id += 1;
        if history_on {
            // The oldest event's buffers serve the new one once the ring is full.
            let mut ev = if self.history.len() >= HISTORY_SIZE {
                self.history.pop_front().expect("a full ring has a front")
            } else {
                StatementEvent {
                    event_id: 0,
                    command: String::new(),
                    text: String::new(),
                    digest: None,
                    schema: None,
                    start_ps: 0,
                    end_ps: 0,
                    errors: 0,
                    warnings: 0,
                    rows_affected: 0,
                    rows_sent: 0,
                    rows_examined: 0,
                    no_index_used: false,
                    lock_ns: 0,
                    message: None,
                }
            };
            ev.event_id = self.last_event_id;
            command_into(text, &mut ev.command);
            ev.text.clear();
            ev.text.push_str(cut(text, MAX_SQL_TEXT));
            ev.digest = Some(d);
            // Reuses the ring slot's buffer: no allocation per statement.
            match (e.schema, &mut ev.schema) {
                (Some(s), Some(buf)) => {
                    buf.clear();
                    buf.push_str(s);
                }
                (s, slot) => *slot = s.map(str::to_string),
            }
            ev.start_ps = start_ps;
            ev.end_ps = start_ps + e.wait_ns.saturating_mul(1000);
            ev.errors = e.errors;
            ev.warnings = e.warnings;
            ev.rows_affected = e.rows_affected;
            ev.rows_sent = e.rows_sent;
            ev.rows_examined = e.rows_examined;
            ev.no_index_used = e.no_index_used;
            ev.lock_ns = e.lock_ns;
            ev.message = e.error_message.map(str::to_string);
            self.history.push_back(ev);
        }
    }

    /// Forgets the digest rows (a TRUNCATE the thread noticed).
    pub(super) fn clear_digests(&mut self, generation: u32) {
        self.digests.clear();
        self.rows = 0;
        self.overflow = None;
        self.generation = generation;
    }

    /// The thread's digest rows (overflow last), if they belong to
    /// `generation`.
    pub(super) fn rows(&self, generation: u32) -> impl Iterator<Item = &DigestStats> {
        let live = self.generation == generation;
        self.digests
            .values()
            .flatten()
            .chain(self.overflow.iter())
            .filter(move |_| live)
    }

    /// Forgets the thread's statement events (TRUNCATE of the event tables).
    pub fn clear_history(&mut self) {
        self.history.clear();
    }

    /// The statement the thread ran last (for `events_statements_current`).
    pub fn last_event(&self) -> Option<&StatementEvent> {
        self.history.back()
    }

    /// The thread's history, oldest first.
    pub fn history(&self) -> impl Iterator<Item = &StatementEvent> {
        self.history.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(ns: u64) -> StatementEnd<'static> {
        StatementEnd {
            schema: Some("d"),
            wait_ns: ns,
            rows_sent: 1,
            ..Default::default()
        }
    }

    #[test]
    fn one_row_per_shape_and_overflow_when_full() {
        let mut t = ThreadStats::default();
        for i in 0..5 {
            t.record(
                &format!("SELECT c FROM t WHERE id = {i}"),
                &end(1000 * (i + 1)),
                0,
                1,
                2,
                true,
                true,
            );
        }
        t.record("SELECT 1", &end(10), 0, 2, 2, true, true);
        t.record("DELETE FROM t", &end(10), 0, 3, 2, true, true);
        assert_eq!(t.rows, 2);
        let rows: Vec<_> = t.rows(0).collect();
        let sel = rows
            .iter()
            .find(|r| r.count == 5)
            .expect("five SELECTs in one row");
        assert_eq!(sel.rows_sent, 5);
        assert!(sel.min_ns <= sel.sum_ns / sel.count && sel.sum_ns / sel.count <= sel.max_ns);
        assert_eq!(
            sel.sample, "SELECT c FROM t WHERE id = 4",
            "the slowest is the sample"
        );
        assert!(sel.quantile_ns(0.95) >= sel.min_ns && sel.quantile_ns(0.95) <= sel.max_ns);
        let over = t.overflow.as_ref().expect("the third shape overflows");
        assert!(over.digest.is_none() && over.count == 1);
        assert_eq!(t.history.len(), 7);
        assert_eq!(t.last_event().map(|e| e.command.as_str()), Some("delete"));
        assert_eq!(t.rows(1).count(), 0, "another generation sees nothing");
    }

    #[test]
    fn command_into_agrees_with_command_of() {
        let mut buf = String::from("leftover");
        for t in [
            "SELECT 1",
            "  (select 1)",
            "Set @a=1",
            "begin",
            "START TRANSACTION",
            "with x as (select 1) select * from x",
            "show tables",
            "SHOW full processlist",
            "",
            "123",
            "insert_x into",
            "Update t set a=1",
        ] {
            command_into(t, &mut buf);
            assert_eq!(buf, command_of(t), "{t:?}");
        }
    }

    #[test]
    fn history_keeps_the_last_ten() {
        let mut t = ThreadStats::default();
        for i in 0..25 {
            t.record(&format!("SELECT {i}"), &end(5), 0, 1, 100, false, true);
        }
        let ids: Vec<u64> = t.history().map(|e| e.event_id).collect();
        assert_eq!(ids, (16..=25).collect::<Vec<_>>());
        assert_eq!(t.rows, 0, "digests off records no row");
    }

    #[test]
    fn buckets_are_monotone() {
        assert!((1..BUCKETS).all(|b| bucket_limit_ns(b) > bucket_limit_ns(b - 1)));
        for ns in [1, 999, 1000, 1500, 10_000_000, u64::MAX / 2] {
            let b = bucket_of(ns);
            assert!(
                b == BUCKETS - 1 || ns < bucket_limit_ns(b),
                "{ns} below its bucket's limit"
            );
        }
    }
}
