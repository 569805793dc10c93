//! Shared setup of the engine-level tests: an engine on `MemoryStorage` with a
//! root account, as the server would open it.

use canyon_sql::{Durability, Engine, EngineConfig};
use canyon_storage::MemoryStorage;
use std::sync::Arc;
use std::time::Duration;

/// A fresh in-memory engine with `root` (no password) bootstrapped.
pub fn engine(lock_wait_timeout: Duration) -> Arc<Engine> {
    let cfg = EngineConfig {
        durability: Durability::SyncEveryCommit,
        lock_wait_timeout,
        blocking_hook: None,
        version: "8.0.36-canyon-test".into(),
        max_allowed_packet: 64 << 20,
        max_connections: 100,
        port: 3306,
    };
    let e = Engine::open(Arc::new(MemoryStorage::new()), cfg).expect("engine opens");
    e.bootstrap_root("").expect("root account");
    e
}
