//! Helpers shared by the canyon-txn integration tests.

#![allow(dead_code, clippy::unwrap_used)]

use canyon_common::Result;
use canyon_storage::{KeyRange, Keyspace, MemoryStorage, Storage, WriteBatch};
use canyon_txn::{
    IndexId, IsolationLevel, ReadMode, TableId, Transaction, TxnConfig, TxnManager, TxnSession,
};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The table every test uses.
pub const T: TableId = 1;
/// A secondary index on [`T`]: the row value is its index key.
pub const IX: IndexId = 10;

pub use IsolationLevel::{ReadCommitted as RC, RepeatableRead as RR};

/// A config for tests: no background GC (tests call `run_gc_once`), and a lock
/// wait timeout long enough that only a real hang would hit it.
pub fn config() -> TxnConfig {
    TxnConfig {
        gc_interval: Duration::ZERO,
        gc_tombstone_interval: Duration::ZERO,
        lock_wait_timeout: Duration::from_secs(20),
        ..TxnConfig::default()
    }
}

pub fn open() -> Arc<TxnManager> {
    open_on(Arc::new(MemoryStorage::new()))
}

pub fn open_on(storage: Arc<dyn Storage>) -> Arc<TxnManager> {
    TxnManager::open(storage, config()).unwrap()
}

/// A manager on fresh in-memory storage with `config` (usually `..config()`).
pub fn open_with(config: TxnConfig) -> Arc<TxnManager> {
    TxnManager::open(Arc::new(MemoryStorage::new()), config).unwrap()
}

/// Old versions kept: in memory and in the History keyspace.
pub fn history_len(mgr: &TxnManager) -> usize {
    mgr.history_stats().versions as usize + count(mgr.storage().as_ref(), Keyspace::History)
}

/// The lock key the tests use for a row (the SQL layer chooses its own).
pub fn lock_key(pk: &[u8]) -> Vec<u8> {
    [&T.to_be_bytes()[..], pk].concat()
}

/// Locks `pk`, reads its current value (own writes included) and replaces it with
/// `value`, maintaining index [`IX`] (key = value), as the SQL layer's UPDATE or
/// INSERT would.
pub fn write(tx: &mut Transaction, pk: &[u8], value: &[u8]) -> Result<()> {
    tx.lock(&lock_key(pk))?;
    let old = tx.get_locked(T, pk)?;
    let old_keys = old.map(|o| vec![(IX, o)]).unwrap_or_default();
    tx.put(
        T,
        pk.to_vec(),
        value.to_vec(),
        old_keys,
        vec![(IX, value.to_vec())],
    );
    Ok(())
}

/// Locks and deletes `pk` (DELETE).
pub fn delete(tx: &mut Transaction, pk: &[u8]) -> Result<()> {
    tx.lock(&lock_key(pk))?;
    let old = tx.get_locked(T, pk)?;
    let old_keys = old.map(|o| vec![(IX, o)]).unwrap_or_default();
    tx.delete(T, pk.to_vec(), old_keys);
    Ok(())
}

/// Commits `rows` in one transaction.
pub fn load(mgr: &Arc<TxnManager>, rows: &[(&[u8], &[u8])]) {
    let s = mgr.session();
    let mut tx = s.begin(RR);
    for (pk, v) in rows {
        write(&mut tx, pk, v).unwrap();
    }
    tx.commit().unwrap();
}

/// A consistent read of `pk`.
pub fn read(tx: &mut Transaction, pk: &[u8]) -> Option<Vec<u8>> {
    tx.get(T, pk, ReadMode::Snapshot).unwrap()
}

/// Reads `pk` in a fresh autocommit statement.
pub fn read_now(mgr: &Arc<TxnManager>, pk: &[u8]) -> Option<Vec<u8>> {
    let s = mgr.session();
    let mut tx = s.begin(RC);
    tx.begin_statement();
    let v = read(&mut tx, pk);
    tx.commit().unwrap();
    v
}

/// Every (pk, row) of [`T`] in `mode`.
pub fn scan_all(tx: &mut Transaction, reverse: bool, mode: ReadMode) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    tx.scan(T, &KeyRange::all(), reverse, mode, &mut |k, v| {
        out.push((k.to_vec(), v.to_vec()));
        ControlFlow::Continue(())
    })
    .unwrap();
    out
}

/// Every (pk, row) that [`IX`] yields within `range`, *after* the caller's
/// re-check of its predicate on the row (the row's index key is its value, so the
/// predicate is "the value lies in `range`").
pub fn scan_ix(tx: &mut Transaction, range: &KeyRange, mode: ReadMode) -> Vec<(Vec<u8>, Vec<u8>)> {
    let offers = scan_ix_raw(tx, range, false, mode);
    let mut pks: Vec<_> = offers.iter().map(|(_, pk, _)| pk.clone()).collect();
    pks.sort();
    pks.dedup();
    assert_eq!(
        pks.len(),
        offers.len(),
        "a pk was yielded twice: {offers:?}"
    );
    offers
        .into_iter()
        .filter(|(_, _, row)| range.contains(row))
        .map(|(_, pk, row)| (pk, row))
        .collect()
}

/// Every raw offer of [`IX`] within `range`, before any re-check.
pub fn scan_ix_raw(
    tx: &mut Transaction,
    range: &KeyRange,
    reverse: bool,
    mode: ReadMode,
) -> Vec<(Vec<u8>, Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    tx.scan_index(T, IX, range, reverse, mode, &mut |k, pk, row| {
        out.push((k.to_vec(), pk.to_vec(), row.to_vec()));
        ControlFlow::Continue(())
    })
    .unwrap();
    out
}

/// Number of entries in a keyspace.
pub fn count(storage: &dyn Storage, ks: Keyspace) -> usize {
    let mut n = 0;
    storage
        .scan(ks, &KeyRange::all(), false, &mut |_, _| {
            n += 1;
            ControlFlow::Continue(())
        })
        .unwrap();
    n
}

/// A session and a transaction on it, kept together.
pub fn begin(mgr: &Arc<TxnManager>, iso: IsolationLevel) -> (TxnSession, Transaction) {
    let s = mgr.session();
    let tx = s.begin(iso);
    (s, tx)
}

/// A [`Storage`] wrapper that counts syncs and can make `sync` slow (like an fsync)
/// or fail.
pub struct CountingStorage {
    pub inner: MemoryStorage,
    pub syncs: AtomicU64,
    pub writes: AtomicU64,
    /// Point reads of the Rows keyspace.
    pub row_gets: AtomicU64,
    /// Scans of the History keyspace.
    pub history_scans: AtomicU64,
    /// Rows entries handed to scan callbacks.
    pub row_entries_scanned: AtomicU64,
    pub sync_delay: Duration,
    pub fail_sync: std::sync::atomic::AtomicBool,
    /// Makes every `write` fail.
    pub fail_writes: std::sync::atomic::AtomicBool,
}

impl CountingStorage {
    pub fn new(sync_delay: Duration) -> Self {
        CountingStorage {
            inner: MemoryStorage::new(),
            syncs: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            row_gets: AtomicU64::new(0),
            history_scans: AtomicU64::new(0),
            row_entries_scanned: AtomicU64::new(0),
            sync_delay,
            fail_sync: std::sync::atomic::AtomicBool::new(false),
            fail_writes: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

impl Storage for CountingStorage {
    fn get(&self, keyspace: Keyspace, key: &[u8]) -> Result<Option<Vec<u8>>> {
        if keyspace == Keyspace::Rows {
            self.row_gets.fetch_add(1, Ordering::SeqCst);
        }
        self.inner.get(keyspace, key)
    }
    fn scan(
        &self,
        keyspace: Keyspace,
        range: &KeyRange,
        reverse: bool,
        f: &mut dyn FnMut(&[u8], &[u8]) -> ControlFlow<()>,
    ) -> Result<()> {
        if keyspace == Keyspace::History {
            self.history_scans.fetch_add(1, Ordering::SeqCst);
        }
        if keyspace == Keyspace::Rows {
            return self.inner.scan(keyspace, range, reverse, &mut |k, v| {
                self.row_entries_scanned.fetch_add(1, Ordering::SeqCst);
                f(k, v)
            });
        }
        self.inner.scan(keyspace, range, reverse, f)
    }
    fn write(&self, batch: WriteBatch, sync: bool) -> Result<()> {
        if self.fail_writes.load(Ordering::SeqCst) {
            return Err(canyon_common::Error::Io("injected write failure".into()));
        }
        self.writes.fetch_add(1, Ordering::SeqCst);
        self.inner.write(batch, sync)
    }
    fn sync(&self) -> Result<()> {
        std::thread::sleep(self.sync_delay);
        self.syncs.fetch_add(1, Ordering::SeqCst);
        if self.fail_sync.load(Ordering::SeqCst) {
            return Err(canyon_common::Error::Io("injected sync failure".into()));
        }
        self.inner.sync()
    }
    fn name(&self) -> &'static str {
        "counting"
    }
}

/// A storage that can lose power: reads see every write, but what survives
/// [`PowerLossStorage::power_off`] is only what a `sync` covered — a prefix of
/// the writes in their order, as with a write-ahead log whose unsynced tail is
/// lost. After power-off every write and sync fails.
pub struct PowerLossStorage {
    live: MemoryStorage,
    state: std::sync::Mutex<PowerState>,
    sync_delay: Duration,
}

#[derive(Default)]
struct PowerState {
    /// Written, not yet covered by a sync, in write order.
    pending: Vec<WriteBatch>,
    /// Covered by a sync, in write order.
    durable: Vec<WriteBatch>,
    off: bool,
}

impl PowerLossStorage {
    pub fn new(sync_delay: Duration) -> Self {
        PowerLossStorage {
            live: MemoryStorage::new(),
            state: std::sync::Mutex::new(PowerState::default()),
            sync_delay,
        }
    }

    /// Cuts the power: returns what a restart would find.
    pub fn power_off(&self) -> MemoryStorage {
        let mut st = self.state.lock().unwrap();
        st.off = true;
        let survivor = MemoryStorage::new();
        for b in &st.durable {
            survivor.write(b.clone(), false).unwrap();
        }
        survivor
    }
}

impl Storage for PowerLossStorage {
    fn get(&self, keyspace: Keyspace, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.live.get(keyspace, key)
    }
    fn scan(
        &self,
        keyspace: Keyspace,
        range: &KeyRange,
        reverse: bool,
        f: &mut dyn FnMut(&[u8], &[u8]) -> ControlFlow<()>,
    ) -> Result<()> {
        self.live.scan(keyspace, range, reverse, f)
    }
    fn write(&self, batch: WriteBatch, sync: bool) -> Result<()> {
        {
            let mut st = self.state.lock().unwrap();
            if st.off {
                return Err(canyon_common::Error::Io("the power is off".into()));
            }
            self.live.write(batch.clone(), false)?;
            st.pending.push(batch);
        }
        if sync {
            self.sync()?;
        }
        Ok(())
    }
    fn sync(&self) -> Result<()> {
        std::thread::sleep(self.sync_delay);
        let mut st = self.state.lock().unwrap();
        if st.off {
            return Err(canyon_common::Error::Io("the power is off".into()));
        }
        let pending = std::mem::take(&mut st.pending);
        st.durable.extend(pending);
        Ok(())
    }
    fn name(&self) -> &'static str {
        "power-loss"
    }
}

/// A balance as the transfer tests store it (decimal text).
pub fn num(v: Vec<u8>) -> i64 {
    String::from_utf8(v).unwrap().parse::<i64>().unwrap()
}

/// The writer of the transfer tests: until `stop`, moves `amount` between two
/// accounts picked by a generator seeded with `seed`, locking both in key order
/// (so writers never deadlock one another), reading them under the locks and
/// committing. Every commit keeps the total.
pub fn transfer_until(
    mgr: &Arc<TxnManager>,
    accounts: &[Vec<u8>],
    seed: u64,
    amount: i64,
    stop: &std::sync::atomic::AtomicBool,
) {
    let s = mgr.session();
    let n = accounts.len();
    let mut seed = seed;
    while !stop.load(Ordering::Relaxed) {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let (i, j) = ((seed >> 33) as usize % n, (seed >> 45) as usize % n);
        if i == j {
            continue;
        }
        let mut tx = s.begin(RR);
        let (lo, hi) = (i.min(j), i.max(j));
        tx.lock(&lock_key(&accounts[lo])).unwrap();
        tx.lock(&lock_key(&accounts[hi])).unwrap();
        let a = num(tx.get_locked(T, &accounts[i]).unwrap().unwrap());
        let b = num(tx.get_locked(T, &accounts[j]).unwrap().unwrap());
        write(&mut tx, &accounts[i], (a - amount).to_string().as_bytes()).unwrap();
        write(&mut tx, &accounts[j], (b + amount).to_string().as_bytes()).unwrap();
        tx.commit().unwrap();
    }
}
