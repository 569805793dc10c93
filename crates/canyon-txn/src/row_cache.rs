//! The row cache: the newest committed Rows value of recently read rows, in memory.
//!
//! # Why
//!
//! A point read through RocksDB searches the active memtable, each immutable
//! memtable, then the files of each level (bloom filter, block-cache lookup under
//! a shard mutex, a search inside the block, decompression of a block that fell
//! out of the cache). Under TPC-C that was 14.7% of the server's CPU (`perf`,
//! 2 warehouses, 8 clients), nearly all of it on rows read over and over:
//! warehouses, districts, the popular stock and item rows, customers. RocksDB's
//! own row cache does not help (tried: no measurable change): it sits below the
//! memtables, which it must still search first, and those hold exactly the hot,
//! recently updated rows. InnoDB reads such rows straight out of its buffer pool;
//! this cache is Canyon's equivalent for the newest version of a row.
//!
//! # What it holds and the invariant that makes it safe
//!
//! Key: a Rows key (`table ++ pk`). Value: the raw Rows value, header included
//! (`commit_ts | flag | row`), exactly as stored, and only live versions — never
//! a tombstone. The cache answers "what is Rows[k] in storage?", so every reader
//! that would have called `storage.get(Rows, k)` may ask it instead; it changes
//! nothing about visibility (a snapshot reader still compares `commit_ts` with
//! its snapshot and goes to History for older versions).
//!
//! **Invariant.** If the cache holds `v` for `k`, then `v` is Rows[k] in storage,
//! except during one window: between a commit's storage write of `k` and its call
//! of [`RowCache::written`], which happen under the commit mutex, while the
//! committer holds `k`'s row lock, and before `last_written_ts` covers the commit
//! (so before any snapshot can include it). In that window the cache still holds
//! the previous version — which is exactly what every reader that may run then is
//! entitled to: a snapshot reader's snapshot is older than the new commit (which
//! is not visible yet), and no current reader holds the row lock.
//!
//! Rows[k] changes in storage in only three ways, and each keeps the invariant:
//!
//! 1. **A commit** writes it: [`RowCache::written`] replaces a present entry with
//!    the new value, or removes it (a delete writes a tombstone, which is never
//!    cached), or adds the new value if the shard has room to spare (below).
//!    Either way the entry is what the commit wrote. A bulk commit (more rows
//!    than `commit.rs`'s `BULK_ROWS`) calls [`RowCache::written_key`] instead,
//!    which only removes the entry: caching a million loaded rows would copy
//!    each one to evict the next.
//! 2. **GC** removes a tombstone: the cache holds no tombstones.
//! 3. **Purging a dropped or truncated table** deletes its keys outside any
//!    commit: the caller then calls [`RowCache::remove_table`]. (Table ids are
//!    never reused, so a stale entry could not be reached anyway; the call frees
//!    the memory and keeps the invariant literal.)
//!
//! **Filling after a miss** races with commits: a reader reads `v0` from storage,
//! a commit writes `v1` and updates the cache (finding nothing to update, and no
//! room to add it), then
//! the reader inserts `v0` — stale, and nothing would ever correct it. Each shard
//! therefore has a **generation**, bumped by every [`RowCache::written`] and
//! [`RowCache::remove_table`] that touches the shard, present key or not. A
//! reader notes the generation at its miss ([`Lookup::Miss`]) and
//! [`RowCache::fill`] inserts only if it is unchanged. Why that suffices: if the
//! storage read returned `v0`, it was ordered before the commit's write, which is
//! before the commit's generation bump. Either the fill comes first — and the
//! bump's `written` then finds the entry and replaces it — or the bump comes
//! first, and the fill sees a new generation and gives up. (A fill that gives up
//! needlessly, because another key of the shard was written, costs one future
//! miss.)
//!
//! # Structure and eviction
//!
//! [`SHARDS`] shards, each a mutex around a slot array and a hash table of slot
//! indices (`hashbrown::HashTable`). A slot holds the key's hash and one shared
//! allocation with the key followed by the value ([`RowsValue`]), so a hit
//! touches the table's control bytes, the slot and that allocation — which the
//! reader goes on to copy the row out of anyway. Those three cache misses are
//! most of a lookup's cost: lookups took 2.2% of the server's CPU under TPC-C,
//! where the RocksDB point reads they replaced had taken about 8.5%. The shard is
//! chosen by bits of the key's hash; a lookup holds its shard's mutex for a hash
//! probe and a reference-count increment. Memory is bounded per shard (budget /
//! [`SHARDS`]), charging each entry its key, its value and [`ENTRY_OVERHEAD`].
//! Eviction is CLOCK (second chance), as in PostgreSQL's buffer manager: a hit
//! sets the slot's reference bit; the hand clears set bits and evicts the first
//! slot found clear. A new entry starts clear, so rows read once (a scan's worth
//! of point reads) go before rows read repeatedly. A value larger than an eighth
//! of a shard's budget is not cached.
//!
//! Hits, misses and the bytes held are counted per shard, under the shard mutex
//! it already holds, so the counters add no shared write to the read path.
//!
//! **Writes allocate only into free room.** A commit caches a row it wrote that
//! was not cached only if the shard has room without evicting anything. A cache
//! that starts empty is so warmed by the writes that fill the database (as
//! InnoDB's buffer pool holds the pages a load wrote), while a full cache keeps
//! what readers asked for rather than trading it for rows merely inserted. Under
//! TPC-C (fresh load, then a 40 s run) a cache that only reads filled answered
//! 39% of lookups — the run read most stock and customer rows for the first
//! time — and gained 0.99–1.05× tpmC; warmed by the load, 1.12–1.17×.
//!
//! # Not done
//!
//! - Caching absence: a miss on a key that does not exist (an INSERT's
//!   uniqueness check) always reaches storage, whose bloom filters answer it.
//! - Older versions: snapshot readers behind the newest version read History.

use crate::keys::{self, FLAG_LIVE};
use crate::{TableId, Timestamp};
use crossbeam_utils::CachePadded;
use hashbrown::{DefaultHashBuilder, HashTable};
use parking_lot::Mutex;
use std::hash::BuildHasher;
use std::sync::Arc;

/// Number of shards (a power of two). Enough that two cores rarely meet on one
/// mutex; few enough that a tiny budget still leaves each shard room for a row.
pub(crate) const SHARDS: usize = 64;

/// Bytes charged per entry beyond its key and value: the slot (hash, pointer,
/// key length, reference bit), the allocation's reference counts and the hash
/// table's index and control bytes at its load factor.
pub(crate) const ENTRY_OVERHEAD: usize = 64;

/// Figures for SHOW STATUS (`Canyon_row_cache_*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RowCacheStats {
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Lookups that went to storage.
    pub misses: u64,
    /// Rows held.
    pub entries: u64,
    /// Bytes charged for them: keys, values and a fixed 64 bytes per entry.
    pub bytes: u64,
    /// The memory budget (0: the cache is off).
    pub capacity: u64,
}

/// A raw Rows value (header and row, as stored) in a shared allocation that
/// holds its Rows key first, as the cache keeps it. Derefs to the value.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct RowsValue {
    data: Arc<[u8]>,
    key_len: u32,
}

impl RowsValue {
    /// Copies `key` and `value` into one allocation.
    pub(crate) fn new(key: &[u8], value: &[u8]) -> RowsValue {
        RowsValue {
            // A chain of two copied slice iterators has an exact length, so
            // this allocates once, with no intermediate Vec.
            data: key.iter().chain(value).copied().collect(),
            key_len: u32::try_from(key.len()).expect("a Rows key is shorter than 4 GiB"),
        }
    }

    /// The Rows key.
    pub(crate) fn key(&self) -> &[u8] {
        &self.data[..self.key_len as usize]
    }

    /// Writes the commit timestamp into a value built before it was known (the
    /// commit path's copy, not yet shared with anyone).
    pub(crate) fn stamp(&mut self, ts: Timestamp) {
        let at = self.key_len as usize;
        let data = Arc::get_mut(&mut self.data).expect("a commit's copy is not shared yet");
        keys::patch_ts(&mut data[at..], ts);
    }
}

impl std::ops::Deref for RowsValue {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.data[self.key_len as usize..]
    }
}

impl std::fmt::Debug for RowsValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowsValue")
            .field("key", &self.key())
            .field("value", &&**self)
            .finish()
    }
}

/// The outcome of [`RowCache::lookup`].
#[derive(Debug)]
pub(crate) enum Lookup {
    /// The stored Rows value (a live version).
    Hit(RowsValue),
    /// Not cached; the shard's generation at the miss, for [`RowCache::fill`].
    Miss(u64),
}

/// The row cache. See the module doc.
pub(crate) struct RowCache {
    shards: Box<[CachePadded<Mutex<Shard>>]>,
    hasher: DefaultHashBuilder,
    capacity: usize,
}

impl std::fmt::Debug for RowCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowCache")
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

struct Slot {
    hash: u64,
    entry: RowsValue,
    referenced: bool,
}

fn charge(entry: &RowsValue) -> usize {
    entry.data.len() + ENTRY_OVERHEAD
}

/// One shard. Invariants: `index` holds exactly the indices of the `Some` slots,
/// each under its slot's hash; `free` holds exactly the indices of the `None`
/// slots; `bytes` is the sum of the `Some` slots' charges and stays at or below
/// `budget` after every insert.
#[derive(Default)]
struct Shard {
    index: HashTable<u32>,
    slots: Vec<Option<Slot>>,
    free: Vec<u32>,
    /// The CLOCK hand: the next slot eviction looks at.
    hand: usize,
    bytes: usize,
    budget: usize,
    /// Bumped by every change of a key of this shard (see "Filling after a miss").
    generation: u64,
    hits: u64,
    misses: u64,
}

impl Shard {
    fn find(&self, hash: u64, key: &[u8]) -> Option<u32> {
        let slots = &self.slots;
        self.index
            .find(hash, |&i| {
                slots[i as usize]
                    .as_ref()
                    .is_some_and(|s| s.hash == hash && s.entry.key() == key)
            })
            .copied()
    }

    fn remove_slot(&mut self, i: u32) {
        let Some(slot) = self.slots[i as usize].take() else {
            return;
        };
        self.bytes -= charge(&slot.entry);
        self.free.push(i);
        if let Ok(e) = self.index.find_entry(slot.hash, |&j| j == i) {
            e.remove();
        }
    }

    /// Evicts by CLOCK until `need` more bytes fit the budget (or nothing is left).
    fn make_room(&mut self, need: usize) {
        while self.bytes + need > self.budget && self.bytes > 0 {
            if self.hand >= self.slots.len() {
                self.hand = 0;
            }
            let i = self.hand;
            self.hand += 1;
            match &mut self.slots[i] {
                Some(s) if s.referenced => s.referenced = false,
                Some(_) => self.remove_slot(i as u32),
                None => {}
            }
        }
    }

    fn insert(&mut self, hash: u64, entry: RowsValue) {
        let need = charge(&entry);
        self.make_room(need);
        let slot = Some(Slot {
            hash,
            entry,
            referenced: false,
        });
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = slot;
                i
            }
            None => {
                self.slots.push(slot);
                u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 cached rows per shard")
            }
        };
        self.bytes += need;
        let slots = &self.slots;
        // Growing the table rehashes from the stored hashes: no key is read.
        self.index.insert_unique(hash, i, |&j| {
            slots[j as usize].as_ref().map_or(0, |s| s.hash)
        });
    }
}

/// Whether a raw Rows value is a live version (the cache holds no tombstones).
fn is_live(value: &[u8]) -> bool {
    value.len() > keys::TS_LEN && value[keys::TS_LEN] == FLAG_LIVE
}

impl RowCache {
    /// A cache holding at most about `capacity` bytes; 0 turns it off (every
    /// lookup misses, nothing is filled).
    pub(crate) fn new(capacity: usize) -> RowCache {
        let shards = if capacity == 0 { 0 } else { SHARDS };
        RowCache {
            shards: (0..shards)
                .map(|_| {
                    CachePadded::new(Mutex::new(Shard {
                        budget: capacity / SHARDS,
                        ..Shard::default()
                    }))
                })
                .collect(),
            hasher: DefaultHashBuilder::default(),
            capacity,
        }
    }

    /// Whether the cache is on (a nonzero budget).
    pub(crate) fn enabled(&self) -> bool {
        !self.shards.is_empty()
    }

    fn shard(&self, key: &[u8]) -> Option<(u64, &Mutex<Shard>)> {
        if self.shards.is_empty() {
            return None;
        }
        let hash = self.hasher.hash_one(key);
        // The table probes with the low bits and tags with the top seven; the
        // shard takes bits from the middle.
        let shard = (hash >> 40) as usize & (SHARDS - 1);
        Some((hash, &self.shards[shard]))
    }

    /// The cached Rows value of `key`, or the generation to fill it under.
    pub(crate) fn lookup(&self, key: &[u8]) -> Lookup {
        let Some((hash, shard)) = self.shard(key) else {
            return Lookup::Miss(0);
        };
        let mut s = shard.lock();
        match s.find(hash, key) {
            Some(i) => {
                s.hits += 1;
                let slot = s.slots[i as usize]
                    .as_mut()
                    .expect("indexed slots are occupied");
                slot.referenced = true;
                Lookup::Hit(slot.entry.clone())
            }
            None => {
                s.misses += 1;
                Lookup::Miss(s.generation)
            }
        }
    }

    /// Caches `entry`, a Rows key and value just read from storage after a
    /// [`Lookup::Miss`] at `generation`, unless the shard changed since, the
    /// value is a tombstone, or the entry is too large.
    pub(crate) fn fill(&self, entry: &RowsValue, generation: u64) {
        let Some((hash, shard)) = self.shard(entry.key()) else {
            return;
        };
        if !is_live(entry) {
            return;
        }
        let mut s = shard.lock();
        if s.generation != generation
            || charge(entry) > s.budget / 8
            || s.find(hash, entry.key()).is_some()
        {
            return;
        }
        s.insert(hash, entry.clone());
    }

    /// A commit has written `new` (a Rows key and its new value) to storage:
    /// replaces the cached value if the key is cached — removes it, for a
    /// tombstone — or caches it if the shard has room without evicting, and
    /// stops the shard's fills in flight. Called under the commit mutex, after
    /// the storage write and before `last_written_ts` covers the commit.
    pub(crate) fn written(&self, new: RowsValue) {
        let Some((hash, shard)) = self.shard(new.key()) else {
            return;
        };
        let mut s = shard.lock();
        s.generation += 1;
        let Some(i) = s.find(hash, new.key()) else {
            let need = charge(&new);
            if is_live(&new) && need <= s.budget / 8 && s.bytes + need <= s.budget {
                s.insert(hash, new);
            }
            return;
        };
        if !is_live(&new) || charge(&new) > s.budget / 8 {
            s.remove_slot(i);
            return;
        }
        let slot = s.slots[i as usize]
            .as_mut()
            .expect("indexed slots are occupied");
        let old = charge(&slot.entry);
        let now = charge(&new);
        slot.entry = new;
        s.bytes = s.bytes - old + now;
        // A grown row may push the shard over budget; the hand may take this
        // very entry, which is fine.
        s.make_room(0);
    }

    /// A commit has written `key` without handing the cache its new value (a
    /// bulk commit, `commit.rs` rule 4): removes the entry if the key is
    /// cached and stops the shard's fills in flight, as [`RowCache::written`]
    /// does for a tombstone. Same calling rules as `written`.
    pub(crate) fn written_key(&self, key: &[u8]) {
        let Some((hash, shard)) = self.shard(key) else {
            return;
        };
        let mut s = shard.lock();
        s.generation += 1;
        if let Some(i) = s.find(hash, key) {
            s.remove_slot(i);
        }
    }

    /// Drops every entry of `table` (after its keys were purged from storage).
    pub(crate) fn remove_table(&self, table: TableId) {
        let prefix = table.to_be_bytes();
        for shard in self.shards.iter() {
            let mut s = shard.lock();
            s.generation += 1;
            let doomed: Vec<u32> = (0..s.slots.len())
                .filter(|&i| {
                    s.slots[i]
                        .as_ref()
                        .is_some_and(|slot| slot.entry.key().starts_with(&prefix))
                })
                .map(|i| i as u32)
                .collect();
            for i in doomed {
                s.remove_slot(i);
            }
        }
    }

    /// The counters, summed over the shards.
    pub(crate) fn stats(&self) -> RowCacheStats {
        let mut st = RowCacheStats {
            capacity: self.capacity as u64,
            ..RowCacheStats::default()
        };
        for shard in self.shards.iter() {
            let s = shard.lock();
            st.hits += s.hits;
            st.misses += s.misses;
            st.entries += s.index.len() as u64;
            st.bytes += s.bytes as u64;
        }
        st
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(table: TableId, pk: u32) -> Vec<u8> {
        [table.to_be_bytes(), pk.to_be_bytes()].concat()
    }

    /// The Rows entry of `k`: a live version at `ts`.
    fn live(k: &[u8], ts: u64, row: &[u8]) -> RowsValue {
        RowsValue::new(k, &keys::version_value(ts, Some(row)))
    }

    fn hit(c: &RowCache, k: &[u8]) -> Option<RowsValue> {
        match c.lookup(k) {
            Lookup::Hit(v) => Some(v),
            Lookup::Miss(_) => None,
        }
    }

    /// Looks the entry's key up and, on a miss, fills it at the miss's generation.
    fn read_through(c: &RowCache, e: &RowsValue) {
        if let Lookup::Miss(g) = c.lookup(e.key()) {
            c.fill(e, g);
        }
    }

    #[test]
    fn an_entry_is_its_key_then_its_value() {
        let e = live(b"key", 9, b"row");
        assert_eq!(e.key(), b"key");
        assert_eq!(&*e, &keys::version_value(9, Some(b"row"))[..]);
        assert_eq!(charge(&e), 3 + 9 + 3 + ENTRY_OVERHEAD);
    }

    #[test]
    fn fill_then_hit_and_commits_replace_or_remove() {
        let c = RowCache::new(1 << 20);
        let k = key(1, 7);
        assert!(hit(&c, &k).is_none());
        read_through(&c, &live(&k, 3, b"v3"));
        assert_eq!(hit(&c, &k), Some(live(&k, 3, b"v3")));
        // A commit replaces a cached value...
        c.written(live(&k, 4, b"v4"));
        assert_eq!(hit(&c, &k), Some(live(&k, 4, b"v4")));
        // ...and a delete (a tombstone) removes it.
        let tombstone = |ts| RowsValue::new(&k, &keys::version_value(ts, None));
        c.written(tombstone(5));
        assert!(hit(&c, &k).is_none());
        // Tombstones are never filled.
        read_through(&c, &tombstone(6));
        assert!(hit(&c, &k).is_none());
        // A commit of a key not cached adds it while there is room.
        c.written(live(&k, 7, b"v7"));
        assert_eq!(hit(&c, &k), Some(live(&k, 7, b"v7")));
        let st = c.stats();
        let charged = charge(&live(&k, 7, b"v7")) as u64;
        assert_eq!(
            (st.hits, st.misses, st.entries, st.bytes),
            (3, 5, 1, charged)
        );
    }

    #[test]
    fn a_bulk_commit_drops_the_entry_and_stops_fills_in_flight() {
        let c = RowCache::new(1 << 20);
        let k = key(1, 7);
        read_through(&c, &live(&k, 3, b"v3"));
        c.written_key(&k);
        assert!(hit(&c, &k).is_none(), "a bulk-written key stayed cached");
        // A reader that missed before the commit's write must not fill the
        // value it read then.
        let Lookup::Miss(g) = c.lookup(&k) else {
            panic!("a dropped key hit")
        };
        c.written_key(&k);
        c.fill(&live(&k, 4, b"v4"), g);
        assert!(hit(&c, &k).is_none(), "a stale fill won");
        // An uncached key stays uncached (nothing is added).
        let k2 = key(1, 8);
        c.written_key(&k2);
        assert!(hit(&c, &k2).is_none());
    }

    #[test]
    fn a_fill_racing_a_commit_of_its_shard_is_dropped() {
        let c = RowCache::new(1 << 20);
        let k = key(1, 7);
        // The reader misses and reads v1 from storage; a commit then writes v2
        // (nothing cached to update) before the reader fills.
        let Lookup::Miss(g) = c.lookup(&k) else {
            panic!("empty cache hit")
        };
        c.written(live(&k, 2, b"v2"));
        c.fill(&live(&k, 1, b"v1"), g);
        assert_eq!(hit(&c, &k), Some(live(&k, 2, b"v2")), "a stale fill won");
        // The same when the commit deletes the row.
        let k2 = key(1, 9);
        let Lookup::Miss(g) = c.lookup(&k2) else {
            panic!("uncached key hit")
        };
        c.written(RowsValue::new(&k2, &keys::version_value(2, None)));
        c.fill(&live(&k2, 1, b"v1"), g);
        assert!(hit(&c, &k2).is_none(), "a deleted row was cached");
        // The fill that comes before the commit's bump is corrected by it.
        let Lookup::Miss(g) = c.lookup(&k2) else {
            panic!("hit after a dropped fill")
        };
        c.fill(&live(&k2, 2, b"v2"), g);
        c.written(live(&k2, 3, b"v3"));
        assert_eq!(hit(&c, &k2), Some(live(&k2, 3, b"v3")));
        // Dropping a table bumps every shard and removes only its rows.
        let other = key(2, 7);
        read_through(&c, &live(&other, 1, b"o"));
        let k8 = key(1, 8);
        let Lookup::Miss(g) = c.lookup(&k8) else {
            panic!("uncached key hit")
        };
        c.remove_table(1);
        c.fill(&live(&k8, 1, b"x"), g);
        assert!(hit(&c, &k).is_none() && hit(&c, &k8).is_none());
        assert!(hit(&c, &other).is_some());
    }

    #[test]
    fn clock_keeps_the_budget_and_prefers_rows_read_again() {
        // 64 shards of 4 KiB; every key below lands in some shard.
        let c = RowCache::new(SHARDS * 4096);
        let row = vec![b'r'; 200];
        let per_entry = charge(&live(&key(1, 0), 1, &row));
        let hot: Vec<Vec<u8>> = (0..64).map(|i| key(1, i)).collect();
        for k in &hot {
            read_through(&c, &live(k, 1, &row));
        }
        // Stream many rows read once, touching the hot rows between batches.
        for i in 1000..20_000u32 {
            read_through(&c, &live(&key(1, i), 1, &row));
            if i % 8 == 0 {
                for k in &hot {
                    let _ = c.lookup(k);
                }
            }
            let st = c.stats();
            assert!(st.bytes <= st.capacity, "{st:?}");
        }
        let st = c.stats();
        assert_eq!(st.bytes, st.entries * per_entry as u64);
        assert!(
            st.entries as usize > SHARDS * 4096 / per_entry / 2,
            "{st:?}"
        );
        let hot_kept = hot.iter().filter(|k| hit(&c, k).is_some()).count();
        assert!(hot_kept >= 60, "only {hot_kept} of 64 hot rows kept");
        // A full cache does not evict for a row a commit wrote.
        let written = key(4, 1);
        c.written(live(&written, 1, &row));
        assert!(hit(&c, &written).is_none());
        // Too large a row is not cached; a row that grows past the limit leaves.
        let big = vec![b'b'; 4096];
        read_through(&c, &live(&key(3, 1), 1, &big));
        assert!(hit(&c, &key(3, 1)).is_none());
        c.written(live(&hot[0], 2, &big));
        assert!(hit(&c, &hot[0]).is_none());
    }

    #[test]
    fn a_zero_budget_turns_the_cache_off() {
        let c = RowCache::new(0);
        assert!(!c.enabled());
        let k = key(1, 1);
        read_through(&c, &live(&k, 1, b"v"));
        assert!(hit(&c, &k).is_none());
        c.written(live(&k, 2, b"w"));
        c.remove_table(1);
        assert_eq!(c.stats(), RowCacheStats::default());
    }
}
