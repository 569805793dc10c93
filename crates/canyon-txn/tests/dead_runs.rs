//! Dead runs (`dead_runs.rs`): a scan from the start of a range whose head was
//! deleted starts past it once a run is recorded, and never misses a row.

#![allow(clippy::unwrap_used)]
mod common;

use canyon_storage::KeyRange;
use canyon_txn::{ReadMode, Transaction, TxnManager};
use common::*;
use std::ops::{Bound, ControlFlow};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn pk(i: u32) -> Vec<u8> {
    format!("q{i:06}").into_bytes()
}

/// The first row of [`T`] from `start` in `mode`, as `ORDER BY pk LIMIT 1`.
fn first_from(tx: &mut Transaction, start: &[u8], mode: ReadMode) -> Option<Vec<u8>> {
    let range = KeyRange {
        start: Bound::Included(start.to_vec()),
        end: Bound::Unbounded,
    };
    let mut first = None;
    tx.scan(T, &range, false, mode, &mut |k, _| {
        first = Some(k.to_vec());
        ControlFlow::Break(())
    })
    .unwrap();
    first
}

/// The first row of the whole table, as a new autocommitted statement sees it.
fn first_now(mgr: &Arc<TxnManager>, mode: ReadMode) -> Option<Vec<u8>> {
    let (_s, mut tx) = begin(mgr, RC);
    tx.begin_statement();
    let first = first_from(&mut tx, b"", mode);
    tx.commit().unwrap();
    first
}

/// A queue of `n` rows whose first `dead` were deleted, one transaction each.
fn queue(mgr: &Arc<TxnManager>, n: u32, dead: u32) {
    let keys: Vec<Vec<u8>> = (0..n).map(pk).collect();
    let rows: Vec<(&[u8], &[u8])> = keys.iter().map(|k| (&k[..], &b"v"[..])).collect();
    load(mgr, &rows);
    delete_range(mgr, 0, dead);
}

fn delete_range(mgr: &Arc<TxnManager>, from: u32, to: u32) {
    for i in from..to {
        let (_s, mut tx) = begin(mgr, RC);
        delete(&mut tx, &pk(i)).unwrap();
        tx.commit().unwrap();
    }
}

/// Rows entries a scan for the first row steps over, and the row it finds.
fn measured_first(
    mgr: &Arc<TxnManager>,
    st: &CountingStorage,
    mode: ReadMode,
) -> (u64, Option<Vec<u8>>) {
    let before = st.row_entries_scanned.load(Ordering::SeqCst);
    let first = first_now(mgr, mode);
    (
        st.row_entries_scanned.load(Ordering::SeqCst) - before,
        first,
    )
}

#[test]
fn a_scan_starts_past_a_dead_head_once_a_run_is_recorded() {
    let st = Arc::new(CountingStorage::new(Duration::ZERO));
    let mgr = open_on(st.clone());
    queue(&mgr, 100, 60);
    // The first scan steps over the 60 tombstones and watches the table; the
    // second records the run; the third starts at the first live row.
    assert_eq!(
        measured_first(&mgr, &st, ReadMode::Current),
        (61, Some(pk(60)))
    );
    assert_eq!(mgr.dead_runs(), 0);
    assert_eq!(
        measured_first(&mgr, &st, ReadMode::Current),
        (61, Some(pk(60)))
    );
    assert_eq!(mgr.dead_runs(), 1);
    assert_eq!(
        measured_first(&mgr, &st, ReadMode::Current),
        (1, Some(pk(60)))
    );
    // A snapshot newer than every tombstone in the run uses it too.
    assert_eq!(
        measured_first(&mgr, &st, ReadMode::Snapshot),
        (1, Some(pk(60)))
    );

    // The head moves on: the next scan steps over the new dead entries from
    // where the run ends and extends it.
    delete_range(&mgr, 60, 80);
    assert_eq!(
        measured_first(&mgr, &st, ReadMode::Current),
        (21, Some(pk(80)))
    );
    assert_eq!(
        measured_first(&mgr, &st, ReadMode::Current),
        (1, Some(pk(80)))
    );
    assert_eq!(mgr.dead_runs(), 1, "extended, not a second run");

    // GC removes the tombstones; the run stays right.
    mgr.run_gc_once().unwrap();
    assert_eq!(
        measured_first(&mgr, &st, ReadMode::Current),
        (1, Some(pk(80)))
    );
    let (_s, mut tx) = begin(&mgr, RC);
    tx.begin_statement();
    let all = scan_all(&mut tx, false, ReadMode::Snapshot);
    assert_eq!(all.len(), 20);
    assert_eq!(all[0].0, pk(80));
}

#[test]
fn a_row_written_into_a_dead_run_is_found() {
    let st = Arc::new(CountingStorage::new(Duration::ZERO));
    let mgr = open_on(st.clone());
    queue(&mgr, 100, 60);
    for _ in 0..3 {
        first_now(&mgr, ReadMode::Current);
    }
    assert_eq!(mgr.dead_runs(), 1);
    // Re-insert a deleted row, and insert one that never existed, inside the run.
    load(&mgr, &[(&pk(30), b"back"), (b"p", b"new")]);
    assert_eq!(mgr.dead_runs(), 0, "the commit removed the run");
    assert_eq!(first_now(&mgr, ReadMode::Current), Some(b"p".to_vec()));
    assert_eq!(first_now(&mgr, ReadMode::Snapshot), Some(b"p".to_vec()));
    let (_s, mut tx) = begin(&mgr, RC);
    tx.begin_statement();
    assert_eq!(first_from(&mut tx, &pk(1), ReadMode::Current), Some(pk(30)));
    // A transaction's own insert into a run is seen by its own scan.
    for _ in 0..3 {
        first_now(&mgr, ReadMode::Current);
    }
    let (_s, mut tx) = begin(&mgr, RC);
    delete(&mut tx, b"p").unwrap();
    delete(&mut tx, &pk(30)).unwrap();
    tx.commit().unwrap();
    for _ in 0..3 {
        first_now(&mgr, ReadMode::Current);
    }
    assert_eq!(mgr.dead_runs(), 1);
    let (_s, mut tx) = begin(&mgr, RC);
    write(&mut tx, &pk(7), b"mine").unwrap();
    assert_eq!(first_from(&mut tx, b"", ReadMode::Current), Some(pk(7)));
    assert_eq!(first_from(&mut tx, b"", ReadMode::Snapshot), Some(pk(7)));
    tx.rollback();
    assert_eq!(first_now(&mgr, ReadMode::Current), Some(pk(60)));
}

#[test]
fn an_older_snapshot_does_not_use_a_run_newer_than_it() {
    let st = Arc::new(CountingStorage::new(Duration::ZERO));
    let mgr = open_on(st.clone());
    queue(&mgr, 100, 0);
    let (_old_s, mut old) = begin(&mgr, RR);
    assert_eq!(read(&mut old, &pk(0)), Some(b"v".to_vec()));
    delete_range(&mgr, 0, 60);
    for _ in 0..3 {
        first_now(&mgr, ReadMode::Current);
    }
    assert_eq!(mgr.dead_runs(), 1);
    // The snapshot older than the deletes still sees every row.
    assert_eq!(first_from(&mut old, b"", ReadMode::Snapshot), Some(pk(0)));
    assert_eq!(scan_all(&mut old, false, ReadMode::Snapshot).len(), 100);
    // ... and GC keeps what it needs.
    mgr.run_gc_once().unwrap();
    assert_eq!(first_from(&mut old, b"", ReadMode::Snapshot), Some(pk(0)));
    // Its own current reads see the present.
    assert_eq!(first_from(&mut old, b"", ReadMode::Current), Some(pk(60)));
    old.commit().unwrap();
}

/// Rule 1 and 2 under concurrency: while one thread takes rows off the head of
/// a queue (recording and extending runs as it goes) and another appends, a
/// third keeps inserting rows *below* the dead head, each lower than the last.
/// A scanner that knows how many of those committed before it began must find
/// the newest one first: a run that survived an insert, or was recorded over
/// one its scan missed, would send it past.
#[test]
fn concurrent_inserts_into_a_dead_head_are_never_skipped() {
    let mgr = open();
    queue(&mgr, 2000, 0);
    let stop = Arc::new(AtomicBool::new(false));
    let inserted = Arc::new(AtomicU64::new(0));
    let appended = AtomicU64::new(2000);
    let low = |i: u64| format!("a{:06}", 999_999 - i).into_bytes();
    std::thread::scope(|s| {
        // Takes the head of the queue, as Delivery does.
        s.spawn(|| {
            while !stop.load(Ordering::SeqCst) {
                let (_s, mut tx) = begin(&mgr, RC);
                tx.begin_statement();
                let head = first_from(&mut tx, b"q", ReadMode::Current).unwrap();
                // Keep 100 rows in the queue: the appender is slower.
                let index: u64 = String::from_utf8_lossy(&head[1..]).parse().unwrap();
                if index + 100 > appended.load(Ordering::SeqCst) {
                    tx.rollback();
                    std::thread::yield_now();
                    continue;
                }
                delete(&mut tx, &head).unwrap();
                tx.commit().unwrap();
            }
        });
        // Appends to the queue, and collects garbage now and then.
        s.spawn(|| {
            let mut i = 2000;
            while !stop.load(Ordering::SeqCst) {
                load(&mgr, &[(&pk(i), b"v")]);
                i += 1;
                appended.store(u64::from(i), Ordering::SeqCst);
                if i % 64 == 0 {
                    mgr.run_gc_once().unwrap();
                }
            }
        });
        // Inserts below the head, one row at a time, each lower than the last,
        // and deletes it again 2 ms later, so the head is dead once more.
        s.spawn(|| {
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                load(&mgr, &[(&low(i), b"low")]);
                i += 1;
                inserted.store(i, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(2));
                let (_s, mut tx) = begin(&mgr, RC);
                delete(&mut tx, &low(i - 1)).unwrap();
                tx.commit().unwrap();
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        // Stops the other threads however the checks end (a failed assert too).
        struct Stop<'a>(&'a AtomicBool);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let _stop = Stop(&stop);
        let mut checks = 0;
        // At least 3 s of checks, and on until the head has been recorded as
        // a run at least once (what the test is about): on a loaded machine
        // the threads above may need longer to get there. 60 s at most.
        let start = std::time::Instant::now();
        let mut seen_run = false;
        while start.elapsed() < Duration::from_secs(3)
            || (!seen_run && start.elapsed() < Duration::from_secs(60))
        {
            seen_run |= mgr.dead_runs() > 0;
            let n = inserted.load(Ordering::SeqCst);
            let Some(first) = first_now(&mgr, ReadMode::Current) else {
                let (_s, mut tx) = begin(&mgr, RC);
                tx.begin_statement();
                let all = scan_all(&mut tx, false, ReadMode::Current);
                panic!(
                    "no first row; runs {}; a full scan finds {} rows from {:?}",
                    mgr.dead_runs(),
                    all.len(),
                    all.first()
                        .map(|r| String::from_utf8_lossy(&r.0).into_owned())
                );
            };
            if n > 0 && first.starts_with(b"q") {
                // The newest low row committed before the scan began. Only its
                // delete may hide it, and then the delete is in storage now.
                let still = read_now(&mgr, &low(n - 1));
                assert!(
                    still.is_none(),
                    "the scan skipped {:?}, committed before it began and still there",
                    String::from_utf8_lossy(&low(n - 1))
                );
            }
            checks += 1;
        }
        assert!(checks > 100, "{checks} checks");
        assert!(
            seen_run,
            "the queue's head was recorded as a run at some point"
        );
    });
}
