//! Semi-synchronous replication, the source's side: a client's COMMIT is
//! answered only once enough replicas have acknowledged the transaction.
//!
//! # The protocol (MySQL's and MariaDB's, the same bytes)
//!
//! A replica that wants to acknowledge sets `@rpl_semi_sync_slave = 1` (or
//! MySQL 8.0.26+'s `@rpl_semi_sync_replica`) before its dump. Every packet
//! of that dump then starts, after its `0x00`, with two bytes: the magic
//! `0xef` and a flag; flag bit 0 asks the replica to acknowledge the event
//! (sent on the last event of each transaction). The acknowledgement is a
//! packet the replica writes on the same connection, sequence 0:
//! `0xef ++ position u64 ++ file name`, the position after the event.
//! The connection side (canyon-server) frames and reads these; this module
//! keeps the state between the dumps and the committing sessions.
//!
//! # What a wait means
//!
//! Acknowledgements are kept as commit timestamps: a dump maps the (file,
//! position) a replica acknowledges back to the timestamp of the record it
//! sent there. The change log is in timestamp order and a replica receives
//! it in order, so a replica that acknowledged timestamp `t` has every
//! record up to `t`. A session whose commit wrote a log record at `ts`
//! waits until `rpl_semi_sync_source_wait_for_replica_count` replicas
//! acknowledged `ts` or later, or until `rpl_semi_sync_source_timeout`.
//!
//! The wait comes after the commit is durable here and before the client
//! is answered (MySQL's AFTER_SYNC, the default): a client told "committed"
//! knows the transaction is on a replica too. Canyon's commit is one
//! storage batch that becomes visible when durable, so — unlike MySQL's
//! AFTER_SYNC, where other sessions see the transaction only after the
//! acknowledgement — other sessions may read it while its committer still
//! waits; `rpl_semi_sync_source_wait_point` accepts both of MySQL's values
//! and behaves this way for both. A crash of this server in that window
//! loses a transaction no client was told of, but that another may have
//! read.
//!
//! # Falling back and coming back
//!
//! A wait that times out turns the source asynchronous
//! (`Rpl_semi_sync_source_status` OFF, a warning in the error log, as
//! MySQL): later commits do not wait. The source turns semi-synchronous
//! again once enough replicas have acknowledged the newest transaction any
//! commit waited for. With `rpl_semi_sync_source_wait_no_replica` OFF the
//! source also turns asynchronous as soon as fewer replicas than the count
//! are connected.
//!
//! # Invariants
//!
//! 1. `acked` of a replica only grows (acknowledgements arrive in order;
//!    a late one for an older position changes nothing).
//! 2. A waiter is woken after every change that can satisfy it (an
//!    acknowledgement, a status change, a replica leaving, a setting
//!    change); it registers before re-checking, so no wake is lost.

use canyon_txn::Timestamp;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// The magic byte that starts a semi-synchronous packet header and an
/// acknowledgement.
pub const MAGIC: u8 = 0xef;
/// Header flag: the replica must acknowledge this event.
pub const FLAG_ACK: u8 = 0x01;

/// The source's semi-synchronous state (kept in [`super::Binlog`]).
#[derive(Debug)]
pub struct SemiSync {
    /// `rpl_semi_sync_source_enabled`.
    enabled: AtomicBool,
    /// `rpl_semi_sync_source_timeout`, milliseconds.
    timeout_ms: AtomicU64,
    /// `rpl_semi_sync_source_wait_for_replica_count`.
    wait_count: AtomicU64,
    /// `rpl_semi_sync_source_wait_no_replica`.
    wait_no_replica: AtomicBool,
    /// `rpl_semi_sync_source_wait_point`: true for AFTER_COMMIT (accepted,
    /// same behaviour; see the module doc).
    after_commit: AtomicBool,
    /// `rpl_semi_sync_replica_enabled`: this server, as a replica
    /// (`crate::catalog::replica`), asks its source for semi-synchronous
    /// replication and acknowledges.
    replica_enabled: AtomicBool,
    /// `Rpl_semi_sync_replica_status`: the replica's connection to its
    /// source acknowledges now.
    replica_on: AtomicBool,
    inner: Mutex<Inner>,
    waiters: Mutex<Vec<Waker>>,
    /// Status counters (Rpl_semi_sync_source_*).
    yes_tx: AtomicU64,
    no_tx: AtomicU64,
    no_times: AtomicU64,
    wait_us: AtomicU64,
    waits: AtomicU64,
    waiting: AtomicU64,
}

#[derive(Debug, Default)]
struct Inner {
    /// Connected semi-synchronous replicas: dump id -> the newest commit
    /// timestamp acknowledged (invariant 1).
    replicas: HashMap<u64, Timestamp>,
    next_id: u64,
    /// `Rpl_semi_sync_source_status`: commits wait (true) or not.
    on: bool,
    /// The newest timestamp a commit waited for: the source turns back on
    /// once enough replicas acknowledged it.
    newest_waited: Timestamp,
}

impl Inner {
    fn acked_at_least(&self, ts: Timestamp) -> u64 {
        self.replicas.values().filter(|&&a| a >= ts).count() as u64
    }
}

/// What the end of a wait was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitEnd {
    /// Enough replicas acknowledged.
    Acknowledged,
    /// The source is asynchronous (off, fallen back, or disabled meanwhile).
    Asynchronous,
}

impl Default for SemiSync {
    fn default() -> Self {
        SemiSync {
            enabled: AtomicBool::new(false),
            timeout_ms: AtomicU64::new(10_000),
            wait_count: AtomicU64::new(1),
            wait_no_replica: AtomicBool::new(true),
            after_commit: AtomicBool::new(false),
            replica_enabled: AtomicBool::new(false),
            replica_on: AtomicBool::new(false),
            inner: Mutex::new(Inner::default()),
            waiters: Mutex::new(Vec::new()),
            yes_tx: AtomicU64::new(0),
            no_tx: AtomicU64::new(0),
            no_times: AtomicU64::new(0),
            wait_us: AtomicU64::new(0),
            waits: AtomicU64::new(0),
            waiting: AtomicU64::new(0),
        }
    }
}

/// A connected semi-synchronous replica (its dump holds it); leaves the
/// set when dropped.
#[derive(Debug)]
pub struct ReplicaAcks {
    sync: Arc<SemiSync>,
    id: u64,
}

impl ReplicaAcks {
    /// Whether events should ask for acknowledgements now.
    pub fn asking(&self) -> bool {
        self.sync.enabled()
    }

    /// The replica acknowledged everything up to the record committed at `ts`.
    pub fn acknowledged(&self, ts: Timestamp) {
        let s = &self.sync;
        {
            let mut inner = s.inner.lock();
            if let Some(a) = inner.replicas.get_mut(&self.id) {
                *a = (*a).max(ts);
            }
            if !inner.on
                && s.enabled()
                && inner.acked_at_least(inner.newest_waited) >= s.wait_count()
            {
                inner.on = true;
                tracing::info!("semi-synchronous replication switched ON: replicas caught up");
            }
        }
        s.wake();
    }
}

impl Drop for ReplicaAcks {
    fn drop(&mut self) {
        let s = &self.sync;
        {
            let mut inner = s.inner.lock();
            inner.replicas.remove(&self.id);
            if inner.on
                && !s.wait_no_replica.load(Ordering::Relaxed)
                && (inner.replicas.len() as u64) < s.wait_count()
            {
                inner.on = false;
                s.no_times.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(
                    "semi-synchronous replication switched OFF: fewer replicas than \
                     rpl_semi_sync_source_wait_for_replica_count are connected"
                );
            }
        }
        s.wake();
    }
}

impl SemiSync {
    /// `rpl_semi_sync_source_enabled`.
    pub fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    /// `rpl_semi_sync_replica_enabled`.
    pub fn replica_enabled(&self) -> bool {
        self.replica_enabled.load(Ordering::Relaxed)
    }

    /// The replica's connection to its source acknowledges (true) or not.
    pub fn set_replica_status(&self, on: bool) {
        self.replica_on.store(on, Ordering::Relaxed);
    }

    fn wait_count(&self) -> u64 {
        self.wait_count.load(Ordering::Relaxed).max(1)
    }

    /// How long a commit waits before the source falls back.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms.load(Ordering::Relaxed))
    }

    /// Whether a commit must wait now (enabled and not fallen back).
    pub fn waiting_commits(&self) -> bool {
        self.enabled() && self.inner.lock().on
    }

    /// A semi-synchronous replica's dump starts.
    pub fn join(self: &Arc<Self>) -> ReplicaAcks {
        let id = {
            let mut inner = self.inner.lock();
            inner.next_id += 1;
            let id = inner.next_id;
            inner.replicas.insert(id, 0);
            id
        };
        ReplicaAcks {
            sync: self.clone(),
            id,
        }
    }

    /// Completes when `wait_count` replicas acknowledged `ts` or the source
    /// is asynchronous. The caller bounds it with [`SemiSync::timeout`] and
    /// calls [`SemiSync::timed_out`] when that passes first.
    pub fn acknowledged(&self, ts: Timestamp) -> impl Future<Output = WaitEnd> + '_ {
        {
            let mut inner = self.inner.lock();
            inner.newest_waited = inner.newest_waited.max(ts);
        }
        self.waiting.fetch_add(1, Ordering::Relaxed);
        let guard = Waiting(self);
        std::future::poll_fn(move |cx: &mut Context<'_>| {
            let _ = &guard;
            if let Some(end) = self.check(ts) {
                return Poll::Ready(end);
            }
            {
                let mut w = self.waiters.lock();
                if !w.iter().any(|x| x.will_wake(cx.waker())) {
                    w.push(cx.waker().clone());
                }
            }
            // Invariant 2: re-check after registering.
            match self.check(ts) {
                Some(end) => Poll::Ready(end),
                None => Poll::Pending,
            }
        })
    }

    fn check(&self, ts: Timestamp) -> Option<WaitEnd> {
        let inner = self.inner.lock();
        if !self.enabled() || !inner.on {
            return Some(WaitEnd::Asynchronous);
        }
        (inner.acked_at_least(ts) >= self.wait_count()).then_some(WaitEnd::Acknowledged)
    }

    /// Counts a commit's wait that ended with `end` after `waited`.
    pub fn finished(&self, end: WaitEnd, waited: Duration) {
        match end {
            WaitEnd::Acknowledged => {
                self.yes_tx.fetch_add(1, Ordering::Relaxed);
                self.wait_us
                    .fetch_add(waited.as_micros() as u64, Ordering::Relaxed);
                self.waits.fetch_add(1, Ordering::Relaxed);
            }
            WaitEnd::Asynchronous => {
                self.no_tx.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// A commit at `ts` waited the whole timeout: the source turns
    /// asynchronous (logged once per switch).
    pub fn timed_out(&self, ts: Timestamp) {
        let switched = {
            let mut inner = self.inner.lock();
            std::mem::replace(&mut inner.on, false)
        };
        self.no_tx.fetch_add(1, Ordering::Relaxed);
        if switched {
            self.no_times.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                commit_ts = ts,
                timeout_ms = self.timeout_ms.load(Ordering::Relaxed),
                "timeout waiting for a replica's acknowledgement: semi-synchronous \
                 replication switched OFF (rpl_semi_sync_source_timeout)"
            );
        }
        self.wake();
    }

    /// A commit that logged nothing waits for nothing, but MySQL counts a
    /// transaction committed while the source is asynchronous.
    pub fn not_waited(&self) {
        if self.enabled() {
            self.no_tx.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn wake(&self) {
        for w in std::mem::take(&mut *self.waiters.lock()) {
            w.wake();
        }
    }

    /// Reads one of the variables (`None`: not one of them). MariaDB's
    /// `master` / `slave` names are aliases of MySQL 8's.
    pub fn var(&self, name: &str) -> Option<crate::types::value::Value> {
        use crate::types::value::Value;
        let on_off = |b: bool| Value::str(if b { "ON" } else { "OFF" });
        Some(match canonical(name)? {
            "rpl_semi_sync_source_enabled" => on_off(self.enabled()),
            "rpl_semi_sync_source_timeout" => {
                Value::Int(self.timeout_ms.load(Ordering::Relaxed) as i64)
            }
            "rpl_semi_sync_source_wait_for_replica_count" => {
                Value::Int(self.wait_count.load(Ordering::Relaxed) as i64)
            }
            "rpl_semi_sync_source_wait_no_replica" => {
                on_off(self.wait_no_replica.load(Ordering::Relaxed))
            }
            "rpl_semi_sync_replica_enabled" => on_off(self.replica_enabled()),
            "rpl_semi_sync_source_wait_point" => {
                Value::str(if self.after_commit.load(Ordering::Relaxed) {
                    "AFTER_COMMIT"
                } else {
                    "AFTER_SYNC"
                })
            }
            _ => return None,
        })
    }

    /// SET GLOBAL of one of the variables (the caller checked the name with
    /// [`is_var`], the scope and the privilege).
    pub fn set_var(
        &self,
        name: &str,
        value: &crate::types::value::Value,
    ) -> canyon_common::Result<()> {
        use crate::types::value::Value;
        let wrong = || canyon_common::Error::WrongValueForVar {
            name: name.to_string(),
            value: value.to_display(),
        };
        let flag = || -> canyon_common::Result<bool> {
            match value {
                Value::Bytes(_) => match value.to_display().to_ascii_uppercase().as_str() {
                    "ON" | "TRUE" => Ok(true),
                    "OFF" | "FALSE" => Ok(false),
                    _ => Err(wrong()),
                },
                v => match v.to_i64() {
                    Some(0) => Ok(false),
                    Some(1) => Ok(true),
                    _ => Err(wrong()),
                },
            }
        };
        let number = |range: std::ops::RangeInclusive<i64>| -> canyon_common::Result<u64> {
            if matches!(value, Value::Bytes(_)) {
                return Err(wrong());
            }
            value
                .to_i64()
                .filter(|n| range.contains(n))
                .map(|n| n as u64)
                .ok_or_else(wrong)
        };
        match canonical(name).ok_or_else(wrong)? {
            "rpl_semi_sync_source_enabled" => {
                let on = flag()?;
                let was = self.enabled.swap(on, Ordering::Relaxed);
                if on && !was {
                    // MySQL starts switched on when enabled.
                    self.inner.lock().on = true;
                    tracing::info!("semi-synchronous replication enabled");
                }
            }
            "rpl_semi_sync_source_timeout" => {
                self.timeout_ms
                    .store(number(0..=i64::from(u32::MAX))?, Ordering::Relaxed);
            }
            "rpl_semi_sync_source_wait_for_replica_count" => {
                self.wait_count.store(number(1..=65535)?, Ordering::Relaxed);
            }
            "rpl_semi_sync_source_wait_no_replica" => {
                self.wait_no_replica.store(flag()?, Ordering::Relaxed);
            }
            "rpl_semi_sync_replica_enabled" => {
                self.replica_enabled.store(flag()?, Ordering::Relaxed);
            }
            _ => {
                let v = value.to_display().to_ascii_uppercase();
                let after_commit = match v.as_str() {
                    "AFTER_SYNC" => false,
                    "AFTER_COMMIT" => true,
                    _ => return Err(wrong()),
                };
                self.after_commit.store(after_commit, Ordering::Relaxed);
            }
        }
        self.wake();
        Ok(())
    }

    /// SHOW STATUS rows, under MySQL 8's names (`source`) and MariaDB's
    /// (`master`).
    pub fn status_rows(&self) -> Vec<(String, String)> {
        let (on, clients) = {
            let inner = self.inner.lock();
            (self.enabled() && inner.on, inner.replicas.len() as u64)
        };
        let waits = self.waits.load(Ordering::Relaxed);
        let avg = self
            .wait_us
            .load(Ordering::Relaxed)
            .checked_div(waits)
            .unwrap_or(0);
        let rows: [(&str, String); 7] = [
            ("clients", clients.to_string()),
            (
                "no_times",
                self.no_times.load(Ordering::Relaxed).to_string(),
            ),
            ("no_tx", self.no_tx.load(Ordering::Relaxed).to_string()),
            ("status", if on { "ON" } else { "OFF" }.to_string()),
            ("tx_avg_wait_time", avg.to_string()),
            (
                "wait_sessions",
                self.waiting.load(Ordering::Relaxed).to_string(),
            ),
            ("yes_tx", self.yes_tx.load(Ordering::Relaxed).to_string()),
        ];
        let mut out = Vec::with_capacity(rows.len() * 2 + 2);
        for family in ["master", "source"] {
            for (name, v) in &rows {
                out.push((format!("Rpl_semi_sync_{family}_{name}"), v.clone()));
            }
        }
        let replica = if self.replica_on.load(Ordering::Relaxed) {
            "ON"
        } else {
            "OFF"
        };
        out.push(("Rpl_semi_sync_replica_status".into(), replica.into()));
        out.push(("Rpl_semi_sync_slave_status".into(), replica.into()));
        out
    }
}

/// Decrements the waiting-sessions count when a wait ends or is dropped.
struct Waiting<'a>(&'a SemiSync);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::Relaxed);
    }
}

/// MySQL 8's name of a source variable, given it or MariaDB's alias.
fn canonical(name: &str) -> Option<&'static str> {
    Some(match name {
        "rpl_semi_sync_source_enabled" | "rpl_semi_sync_master_enabled" => {
            "rpl_semi_sync_source_enabled"
        }
        "rpl_semi_sync_source_timeout" | "rpl_semi_sync_master_timeout" => {
            "rpl_semi_sync_source_timeout"
        }
        "rpl_semi_sync_source_wait_for_replica_count"
        | "rpl_semi_sync_master_wait_for_slave_count" => {
            "rpl_semi_sync_source_wait_for_replica_count"
        }
        "rpl_semi_sync_source_wait_no_replica" | "rpl_semi_sync_master_wait_no_slave" => {
            "rpl_semi_sync_source_wait_no_replica"
        }
        "rpl_semi_sync_source_wait_point" | "rpl_semi_sync_master_wait_point" => {
            "rpl_semi_sync_source_wait_point"
        }
        "rpl_semi_sync_replica_enabled" | "rpl_semi_sync_slave_enabled" => {
            "rpl_semi_sync_replica_enabled"
        }
        _ => return None,
    })
}

/// Whether `name` is one of the semi-synchronous variables.
pub fn is_var(name: &str) -> bool {
    canonical(name).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::value::Value;

    fn enabled() -> Arc<SemiSync> {
        let s = Arc::new(SemiSync::default());
        s.set_var("rpl_semi_sync_source_enabled", &Value::Int(1))
            .expect("settable");
        s
    }

    fn poll<F: Future>(f: std::pin::Pin<&mut F>) -> Poll<F::Output> {
        let waker = Waker::noop();
        f.poll(&mut Context::from_waker(waker))
    }

    #[test]
    fn a_wait_ends_when_enough_replicas_acknowledge() {
        let s = enabled();
        s.set_var("rpl_semi_sync_master_wait_for_slave_count", &Value::Int(2))
            .expect("settable");
        let a = s.join();
        let b = s.join();
        let mut w = std::pin::pin!(s.acknowledged(10));
        assert!(poll(w.as_mut()).is_pending());
        a.acknowledged(12);
        assert!(poll(w.as_mut()).is_pending(), "one of two");
        b.acknowledged(9);
        assert!(poll(w.as_mut()).is_pending(), "an older position");
        b.acknowledged(10);
        assert_eq!(poll(w.as_mut()), Poll::Ready(WaitEnd::Acknowledged));
    }

    #[test]
    fn a_timeout_falls_back_and_a_caught_up_replica_switches_back() {
        let s = enabled();
        let a = s.join();
        {
            let mut w = std::pin::pin!(s.acknowledged(5));
            assert!(poll(w.as_mut()).is_pending());
        }
        s.timed_out(5);
        assert!(!s.waiting_commits());
        let mut w = std::pin::pin!(s.acknowledged(6));
        assert_eq!(poll(w.as_mut()), Poll::Ready(WaitEnd::Asynchronous));
        a.acknowledged(5);
        assert!(!s.waiting_commits(), "not yet at the newest waited (6)");
        a.acknowledged(6);
        assert!(s.waiting_commits());
        let rows: HashMap<_, _> = s.status_rows().into_iter().collect();
        assert_eq!(rows["Rpl_semi_sync_source_no_times"], "1");
        assert_eq!(rows["Rpl_semi_sync_master_status"], "ON");
        assert_eq!(rows["Rpl_semi_sync_source_clients"], "1");
    }

    #[test]
    fn without_wait_no_replica_the_last_replica_leaving_switches_off() {
        let s = enabled();
        s.set_var("rpl_semi_sync_source_wait_no_replica", &Value::str("OFF"))
            .expect("settable");
        let a = s.join();
        assert!(s.waiting_commits());
        drop(a);
        assert!(!s.waiting_commits());
    }

    #[test]
    fn bad_values_are_refused() {
        let s = SemiSync::default();
        for (name, v) in [
            ("rpl_semi_sync_source_enabled", Value::Int(2)),
            ("rpl_semi_sync_source_timeout", Value::Int(-1)),
            ("rpl_semi_sync_source_wait_for_replica_count", Value::Int(0)),
            ("rpl_semi_sync_source_wait_point", Value::str("LATER")),
        ] {
            assert!(s.set_var(name, &v).is_err(), "{name} = {v:?}");
        }
    }
}
