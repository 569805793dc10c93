//! The storage conformance suite against [`MemoryStorage`].

use canyon_storage::{MemoryStorage, Storage};
use std::sync::Arc;

canyon_storage::storage_conformance_tests!(|| -> Arc<dyn Storage> {
    Arc::new(MemoryStorage::new())
});

/// `run_all` drives the same checks in one call.
#[test]
fn run_all_passes() {
    canyon_storage::conformance::run_all(&|| -> Arc<dyn Storage> {
        Arc::new(MemoryStorage::new())
    });
}

/// The suite is not vacuous: a storage that breaks the ordering clause fails it.
#[test]
fn suite_catches_a_broken_storage() {
    use canyon_common::Result;
    use canyon_storage::{KeyRange, Keyspace, WriteBatch};
    use std::ops::ControlFlow;

    /// Scans in reverse when asked forward and vice versa.
    struct Backwards(MemoryStorage);
    impl Storage for Backwards {
        fn get(&self, ks: Keyspace, key: &[u8]) -> Result<Option<Vec<u8>>> {
            self.0.get(ks, key)
        }
        fn scan(
            &self,
            ks: Keyspace,
            range: &KeyRange,
            reverse: bool,
            f: &mut dyn FnMut(&[u8], &[u8]) -> ControlFlow<()>,
        ) -> Result<()> {
            self.0.scan(ks, range, !reverse, f)
        }
        fn write(&self, batch: WriteBatch, sync: bool) -> Result<()> {
            self.0.write(batch, sync)
        }
        fn sync(&self) -> Result<()> {
            self.0.sync()
        }
        fn name(&self) -> &'static str {
            "backwards"
        }
    }
    let broken = std::panic::catch_unwind(|| {
        canyon_storage::conformance::check_bytewise_order(&Backwards(MemoryStorage::new()))
    });
    assert!(
        broken.is_err(),
        "a backwards scan passed the ordering check"
    );
}
