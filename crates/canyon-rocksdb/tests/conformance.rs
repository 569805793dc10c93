//! The storage conformance suite against [`RocksStorage`], each check on a fresh
//! database in its own temporary directory.

use canyon_common::Result;
use canyon_rocksdb::{RocksOptions, RocksStorage};
use canyon_storage::{KeyRange, Keyspace, Storage, WriteBatch};
use std::ops::ControlFlow;
use std::sync::Arc;

/// A [`RocksStorage`] that owns its temporary directory. Fields drop in order:
/// the database closes before the directory is removed.
struct TempRocks {
    storage: RocksStorage,
    _dir: tempfile::TempDir,
}

impl Storage for TempRocks {
    fn get(&self, ks: Keyspace, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.storage.get(ks, key)
    }
    fn scan(
        &self,
        ks: Keyspace,
        range: &KeyRange,
        reverse: bool,
        f: &mut dyn FnMut(&[u8], &[u8]) -> ControlFlow<()>,
    ) -> Result<()> {
        self.storage.scan(ks, range, reverse, f)
    }
    fn write(&self, batch: WriteBatch, sync: bool) -> Result<()> {
        self.storage.write(batch, sync)
    }
    fn sync(&self) -> Result<()> {
        self.storage.sync()
    }
    fn name(&self) -> &'static str {
        self.storage.name()
    }
}

/// Small buffers so that the larger checks also flush memtables to SST files and
/// read back through the block cache, not only from memtables.
fn make() -> Arc<dyn Storage> {
    let dir = tempfile::tempdir().expect("temp dir");
    let options = RocksOptions {
        block_cache_bytes: 4 << 20,
        write_buffer_bytes: 1 << 20,
        total_write_buffer_bytes: 8 << 20,
        max_background_jobs: 2,
        ..RocksOptions::default()
    };
    let storage = RocksStorage::open(dir.path(), &options).expect("open RocksDB");
    Arc::new(TempRocks { storage, _dir: dir })
}

canyon_storage::storage_conformance_tests!(make);
