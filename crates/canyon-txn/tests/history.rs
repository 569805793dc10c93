//! Old row versions in memory (`history.rs`): they never reach storage while
//! the budget holds; past it they spill to the History keyspace, and readers
//! find each version wherever it is; GC frees both.

#![allow(clippy::unwrap_used)]

mod common;

use canyon_storage::Keyspace;
use canyon_txn::ReadMode::Snapshot;
use canyon_txn::{HistoryStats, TxnConfig};
use common::*;

/// Updates `pk` to `value` in its own transaction.
fn update(mgr: &std::sync::Arc<canyon_txn::TxnManager>, pk: &[u8], value: &[u8]) {
    load(mgr, &[(pk, value)]);
}

#[test]
fn old_versions_stay_in_memory_and_never_reach_storage() {
    let mgr = open();
    let st = mgr.storage().clone();
    load(&mgr, &[(b"k", b"v0"), (b"gone", b"g0")]);
    // A snapshot before each of 10 updates of k, and one before `gone` is
    // deleted.
    let mut readers = Vec::new();
    for i in 0..10u32 {
        let (s, mut tx) = begin(&mgr, RR);
        assert_eq!(read(&mut tx, b"k"), Some(format!("v{i}").into_bytes()));
        readers.push((s, tx, i));
        update(&mgr, b"k", format!("v{}", i + 1).as_bytes());
    }
    let (_s, mut before_delete) = begin(&mgr, RR);
    assert_eq!(read(&mut before_delete, b"gone"), Some(b"g0".to_vec()));
    {
        let (_s, mut d) = begin(&mgr, RR);
        delete(&mut d, b"gone").unwrap();
        d.commit().unwrap();
    }
    assert_eq!(count(st.as_ref(), Keyspace::History), 0, "nothing on disk");
    let held = mgr.history_stats();
    assert_eq!((held.versions, held.spilled), (11, 0), "{held:?}");
    assert!(held.bytes > 0);
    for (_s, tx, i) in &mut readers {
        let want = format!("v{i}").into_bytes();
        assert_eq!(read(tx, b"k"), Some(want.clone()));
        assert!(scan_all(tx, false, Snapshot).contains(&(b"k".to_vec(), want)));
    }
    assert_eq!(read(&mut before_delete, b"gone"), Some(b"g0".to_vec()));

    // GC frees exactly what no snapshot needs: with the oldest reader gone,
    // its version goes and the rest stay.
    let (_s0, first, _) = readers.remove(0);
    first.commit().unwrap();
    let stats = mgr.run_gc_once().unwrap();
    assert_eq!(stats.history_removed, 1, "{stats:?}");
    assert_eq!(mgr.history_stats().versions, 10);
    drop(readers);
    drop(before_delete);
    let stats = mgr.run_gc_once().unwrap();
    assert_eq!(stats.history_removed, 10, "{stats:?}");
    assert_eq!(mgr.history_stats(), HistoryStats::default());
    assert_eq!(read_now(&mgr, b"k"), Some(b"v10".to_vec()));
    assert_eq!(read_now(&mgr, b"gone"), None);
}

#[test]
fn versions_spilled_past_the_budget_are_read_from_storage() {
    // Room for a few versions of a short row.
    let mgr = open_with(TxnConfig {
        history_memory_bytes: 1_000,
        ..config()
    });
    let st = mgr.storage().clone();
    load(&mgr, &[(b"x", b"x0"), (b"k", b"k0")]);
    // x's versions fill the memory (nobody reads them)...
    for i in 1..=20u32 {
        update(&mgr, b"x", format!("x{i}").as_bytes());
    }
    let spilled_x = mgr.history_stats().spilled;
    assert!(spilled_x > 0, "{:?}", mgr.history_stats());
    // The budget bounds the memory held (one thread: no overshoot).
    assert!(
        mgr.history_stats().bytes <= 1_000,
        "{:?}",
        mgr.history_stats()
    );
    // ...so k's next versions, each read by a snapshot, spill.
    let mut readers = Vec::new();
    let mut version = 0u32;
    let mut snapshot_then_update = |readers: &mut Vec<_>| {
        let (s, mut tx) = begin(&mgr, RR);
        assert_eq!(
            read(&mut tx, b"k"),
            Some(format!("k{version}").into_bytes())
        );
        readers.push((s, tx, version));
        version += 1;
        update(&mgr, b"k", format!("k{version}").as_bytes());
    };
    for _ in 0..5 {
        snapshot_then_update(&mut readers);
    }
    assert!(count(st.as_ref(), Keyspace::History) >= 5 + spilled_x as usize);
    // GC frees x's versions (every snapshot is past them); k's later versions
    // find room in memory again, so k's are split between the two places.
    let stats = mgr.run_gc_once().unwrap();
    assert_eq!(stats.history_removed, 20, "{stats:?}");
    assert_eq!(mgr.history_stats().versions, 0);
    for _ in 0..5 {
        snapshot_then_update(&mut readers);
    }
    let held = mgr.history_stats();
    assert!(held.versions > 0, "{held:?}");
    for (_s, tx, v) in &mut readers {
        let want = format!("k{v}").into_bytes();
        assert_eq!(read(tx, b"k"), Some(want.clone()), "reader of k{v}");
        assert_eq!(
            scan_all(tx, false, Snapshot),
            vec![(b"k".to_vec(), want), (b"x".to_vec(), b"x20".to_vec())]
        );
    }
    drop(readers);
    mgr.run_gc_once().unwrap();
    assert_eq!(history_len(&mgr), 0);
    assert_eq!(mgr.history_stats().bytes, 0);
}

#[test]
fn a_restart_forgets_old_versions_that_no_snapshot_can_need() {
    let st: std::sync::Arc<dyn canyon_storage::Storage> =
        std::sync::Arc::new(canyon_storage::MemoryStorage::new());
    {
        let mgr = open_on(st.clone());
        load(&mgr, &[(b"k", b"v0")]);
        let (_s, mut old) = begin(&mgr, RR);
        assert_eq!(read(&mut old, b"k"), Some(b"v0".to_vec()));
        update(&mgr, b"k", b"v1");
        assert_eq!(mgr.history_stats().versions, 1);
        // The process ends with the snapshot and its version in memory.
    }
    let mgr = open_on(st.clone());
    assert_eq!(mgr.history_stats(), HistoryStats::default());
    assert_eq!(count(st.as_ref(), Keyspace::History), 0);
    let (_s, mut tx) = begin(&mgr, RR);
    assert_eq!(read(&mut tx, b"k"), Some(b"v1".to_vec()));
    update(&mgr, b"k", b"v2");
    assert_eq!(read(&mut tx, b"k"), Some(b"v1".to_vec()));
}
