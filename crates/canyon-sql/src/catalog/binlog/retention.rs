//! Retention: which binary log files may go, and when they go by age.
//!
//! # Rules
//!
//! 1. **Whole files only.** A purge removes every file before a kept one
//!    (its records from the change log, its index entry); the current file
//!    is never purged (`Binlog::purge_to`).
//! 2. **Never a file being read.** Each reader (a replica's dump, SHOW
//!    BINLOG EVENTS) holds a [`ReadPin`] naming the file it reads; no purge
//!    — PURGE BINARY LOGS or expiry — removes that file or a later one.
//!    MySQL does the same (`log_in_use`): PURGE stops before the oldest file
//!    a dump thread has open and says so with warning 1867.
//! 3. **Expiry by age** (`binlog_expire_logs_seconds`, MySQL 8's default
//!    2592000 = 30 days; 0: never): a file is older than the limit when the
//!    file after it was started (it received its last event then) longer
//!    ago than the limit. As in MySQL, expiry runs when the log rotates
//!    (FLUSH BINARY LOGS, FLUSH LOGS does not rotate here) and at startup —
//!    not on a timer, and not at SET GLOBAL. Canyon rotates only at FLUSH
//!    BINARY LOGS (no `max_binlog_size`), so a server that never rotates
//!    keeps its whole log.
//! 4. **Pins and purges are ordered.** A reader registers its pin and then
//!    checks that its first record is still kept, both under the pin list's
//!    lock; a purge reads the pins and moves the log's first record under
//!    the same lock. So a reader either sees the purge (1236) or the purge
//!    sees its pin: a reader never starts on records being deleted.
//!
//! `expire_logs_days` (MariaDB's and MySQL 5.7's name) reads and sets the
//! same limit in days (fractional, as MariaDB 10.6+ keeps it).

use super::*;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

/// The file a reader reads (rule 2); unregistered when dropped.
#[derive(Debug)]
pub struct ReadPin(Arc<AtomicU32>);

impl ReadPin {
    /// The reader moved on to file `number`.
    pub(super) fn set(&self, number: u32) {
        self.0.store(number, Ordering::Relaxed);
    }
}

/// The readers' pins and the expiry limit (kept in [`Binlog`]).
#[derive(Debug)]
pub(crate) struct Retention {
    /// Live pins (dead ones are dropped as the list is walked).
    pins: Mutex<Vec<Weak<AtomicU32>>>,
    /// `binlog_expire_logs_seconds`.
    expire_seconds: AtomicU64,
}

impl Retention {
    pub(crate) fn new(expire_seconds: u64) -> Retention {
        Retention {
            pins: Mutex::new(Vec::new()),
            expire_seconds: AtomicU64::new(expire_seconds),
        }
    }
}

/// What a purge did: files removed, and the file it stopped at for a
/// reader (rule 2), with how many files it meant to remove.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Purged {
    /// Files removed.
    pub removed: usize,
    /// The file a reader holds, where the purge stopped short, and how many
    /// files were asked for.
    pub held: Option<(String, usize)>,
}

impl Binlog {
    /// Registers a reader of file `number` whose first record is `seq`
    /// (rule 4): 1236 when that record is already purged.
    pub(super) fn pin(&self, txn: &TxnManager, number: u32, seq: u64) -> Result<ReadPin> {
        let mut pins = self.retention.pins.lock();
        if seq < txn.log_first_seq() {
            return Err(fatal_1236(
                "Could not find first log file name in binary log index file (purged)",
            ));
        }
        let pin = Arc::new(AtomicU32::new(number));
        pins.retain(|w| w.strong_count() > 0);
        pins.push(Arc::downgrade(&pin));
        Ok(ReadPin(pin))
    }

    /// `binlog_expire_logs_seconds`.
    pub fn expire_seconds(&self) -> u64 {
        self.retention.expire_seconds.load(Ordering::Relaxed)
    }

    /// SET GLOBAL binlog_expire_logs_seconds (the caller checked the
    /// privilege and the range). Takes effect at the next rotation.
    pub fn set_expire_seconds(&self, seconds: u64) {
        self.retention
            .expire_seconds
            .store(seconds, Ordering::Relaxed);
    }

    /// PURGE BINARY LOGS TO `name`: every file before it goes, but never
    /// the current file nor one a reader holds (rules 1, 2); 1373 for a
    /// file the index does not have.
    pub fn purge_to(&self, txn: &TxnManager, storage: &dyn Storage, name: &str) -> Result<Purged> {
        let pins = self.retention.pins.lock();
        let (keep, asked) = {
            let files = self.files.read();
            let Some(at) = files.iter().position(|f| f.name == name) else {
                return Err(Error::Sql {
                    code: 1373,
                    sqlstate: *b"HY000",
                    message: "Target log not found in binlog index".into(),
                });
            };
            let held = pins
                .iter()
                .filter_map(Weak::upgrade)
                .map(|p| p.load(Ordering::Relaxed))
                .min();
            let stop = match held {
                Some(h) => files
                    .iter()
                    .position(|f| f.number >= h)
                    .unwrap_or(at)
                    .min(at),
                None => at,
            };
            (files[stop].clone(), at)
        };
        txn.purge_log(keep.first_seq - 1)?;
        drop(pins);
        let mut batch = WriteBatch::new();
        let mut files = self.files.write();
        let removed = files.iter().filter(|f| f.number < keep.number).count();
        for f in files.iter().filter(|f| f.number < keep.number) {
            batch.delete(Keyspace::Meta, BinlogFile::key(f.number));
        }
        storage.write(batch, true)?;
        files.retain(|f| f.number >= keep.number);
        // `asked`: the files before the target, all of which were asked for.
        Ok(Purged {
            removed,
            held: (removed < asked).then(|| (keep.name.clone(), asked)),
        })
    }

    /// Expiry (rule 3): purges the files that stopped receiving events more
    /// than `binlog_expire_logs_seconds` before `now_us`. At rotation and
    /// at startup.
    pub fn expire(&self, txn: &TxnManager, storage: &dyn Storage, now_us: u64) -> Result<Purged> {
        let limit = self.expire_seconds();
        if limit == 0 || !self.enabled() {
            return Ok(Purged::default());
        }
        let cutoff = now_us.saturating_sub(limit.saturating_mul(1_000_000));
        // The first file that is not expired: the current one, or the first
        // whose successor started after the cutoff.
        let keep = {
            let files = self.files.read();
            files
                .windows(2)
                .find(|w| w[1].created_us > cutoff)
                .map(|w| w[0].name.clone())
                .or_else(|| files.last().map(|f| f.name.clone()))
        };
        match keep {
            Some(name) => {
                let purged = self.purge_to(txn, storage, &name)?;
                if purged.removed > 0 {
                    tracing::info!(
                        files = purged.removed,
                        expire_seconds = limit,
                        "binary log files expired"
                    );
                }
                Ok(purged)
            }
            None => Ok(Purged::default()),
        }
    }
}
